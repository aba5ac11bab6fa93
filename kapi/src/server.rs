//! Running the server: open the storage, build the registry, make sure the initial
//! namespaces exist, serve the stored CustomResourceDefinitions, make or load the
//! certificates, listen (HTTPS by default; HTTP/1.1 and HTTP/2), write the kubeconfig,
//! and shut down cleanly: stop accepting, end watches, let in-flight requests finish,
//! close the store.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use kapi_apiextensions::conversion::WebhookConverter;
use kapi_apiserver::webhook::ServiceResolver;
use kapi_storage::{EmbeddedConfig, EmbeddedStorage, Storage};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::kubeconfig;
use crate::pki;
use security::{Tls, auditor, proxy_identity, security_setup};

mod requirements;
mod running;
mod security;

use kapi_apiserver::authentication::Peer;
use kapi_apiserver::authorization::Authorizer;
use kapi_apiserver::coalesce::Coalesce;
use kapi_apiserver::documents::LiveDocuments;
use kapi_apiserver::endpoints::Api;
use kapi_apiserver::metrics::InstrumentedStorage;
use kapi_apiserver::registry::{Registry, Resources, StoreOptions};
use kapi_kube::allocation::ServiceRanges;
use kapi_kube::bootstrap;
pub use running::{Ready, Running, start};

/// How long a client may take to send a request's headers (kube-apiserver's
/// `ReadHeaderTimeout`, just shy of its 34 s request timeout upper bound).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// How `kapi serve` runs. [`ServeConfig::default`] is the binary's defaults; change
/// what differs:
///
/// ```
/// use kapi::server::{SecurityConfig, ServeConfig};
///
/// // A test's server: any free loopback port, a temporary directory, plain HTTP
/// // (loopback only; requests without credentials are the admin).
/// let dir = std::env::temp_dir().join("kapi-doc-example");
/// let config = ServeConfig {
///     listen: "127.0.0.1:0".parse().unwrap(),
///     data_dir: dir,
///     security: SecurityConfig {
///         insecure_http: true,
///         ..SecurityConfig::default()
///     },
///     ..ServeConfig::default()
/// };
/// assert_eq!(config.prefix, "/registry");
/// assert!(config.etcd_servers.is_empty(), "the embedded store");
/// ```
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Where the embedded store and the kubeconfig live.
    pub data_dir: PathBuf,
    /// etcd endpoints; empty for the embedded store.
    pub etcd_servers: Vec<String>,
    /// Whether etcd orders requested progress notifications with watch events
    /// (`--etcd-ordered-progress`; see [`kapi_storage::EtcdConfig::ordered_progress`]):
    /// `None` asks its version.
    pub etcd_ordered_progress: Option<bool>,
    /// The key prefix of every object (`/registry`).
    pub prefix: String,
    /// How often history is compacted (`None`: never).
    pub compaction_interval: Option<Duration>,
    /// Where Service cluster IPs and node ports come from.
    pub service_ranges: ServiceRanges,
    /// How long an Event lives after its last write (kube-apiserver's `--event-ttl`).
    pub event_ttl: Duration,
    /// TLS, authentication and authorization.
    pub security: SecurityConfig,
    /// Leader election among replicas for the controllers and compaction (`None`: they
    /// run in this process unconditionally, as with a single replica).
    pub leader_election: Option<kapi_kube::leader_election::Timings>,
    /// The settings of every resource's watch cache (`--watch-cache-*`): their byte
    /// budget each, the total one they share, and the event horizon.
    pub watch_cache: kapi_storage::CacherConfig,
}

impl Default for ServeConfig {
    /// `kapi serve`'s defaults: 127.0.0.1:6443, `./kapi-data`, the embedded store,
    /// history compacted every 5 minutes, Events kept an hour, HTTPS with the
    /// server's own certificates, RBAC, no leader election.
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 6443)),
            data_dir: PathBuf::from("kapi-data"),
            etcd_servers: Vec::new(),
            etcd_ordered_progress: None,
            prefix: "/registry".into(),
            compaction_interval: Some(Duration::from_secs(300)),
            service_ranges: ServiceRanges::default(),
            event_ttl: Duration::from_secs(3600),
            security: SecurityConfig::default(),
            leader_election: None,
            watch_cache: kapi_storage::CacherConfig::default(),
        }
    }
}

/// The issuer of ServiceAccount tokens when `--service-account-issuer` is not given
/// (kube-apiserver's usual in-cluster one).
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// How the server secures itself.
#[derive(Clone, Debug, Default)]
pub struct SecurityConfig {
    /// Serve plain HTTP (loopback only): requests without credentials then act as
    /// `system:unsecured` in `system:masters`, as kube-apiserver's old insecure port did.
    pub insecure_http: bool,
    /// The operator's serving certificate (PEM, chain up to the CA) and key; both or
    /// neither. Without them, the server's own CA signs one.
    pub tls_cert_file: Option<PathBuf>,
    /// The serving certificate's key.
    pub tls_private_key_file: Option<PathBuf>,
    /// More names (DNS or IP) for the server's own serving certificate.
    pub tls_sans: Vec<String>,
    /// CAs whose client certificates are accepted, besides the server's own CA.
    pub client_ca_file: Option<PathBuf>,
    /// Static bearer tokens (kube-apiserver's CSV format).
    pub token_auth_file: Option<PathBuf>,
    /// Let requests without credentials in as `system:anonymous`.
    pub anonymous_auth: bool,
    /// The authorization modes, in order (`--authorization-mode`); empty: RBAC.
    pub authorization_modes: Vec<kapi_apiserver::authorization::Mode>,
    /// The webhook of the `Webhook` mode (`--authorization-webhook-*`); required with
    /// that mode, refused without it.
    pub authorization_webhook: Option<kapi_apiserver::authorization::webhook::WebhookConfig>,
    /// The issuer of ServiceAccount tokens (empty: [`DEFAULT_ISSUER`]).
    pub service_account_issuer: String,
    /// The API's audiences (empty: the issuer).
    pub api_audiences: Vec<String>,
    /// Request limits.
    pub limits: kapi_apiserver::limits::LimitsConfig,
    /// Where the audit log goes (`-`: stdout); none is kept without it.
    pub audit_log_path: Option<PathBuf>,
    /// The audit policy (`audit.k8s.io/v1` Policy); without it, every request is logged
    /// at Metadata level.
    pub audit_policy_file: Option<PathBuf>,
    /// The audit log file's mode (`--audit-log-file-mode`); `None`: `0600`, and an
    /// existing log that is wider is tightened.
    pub audit_log_file_mode: Option<u32>,
    /// The `EncryptionConfiguration` file of encryption at rest (kube-apiserver's
    /// `--encryption-provider-config`); `None` stores values as they are.
    pub encryption_provider_config: Option<PathBuf>,
    /// Front-proxy authentication, both ways: the proxies trusted to name users in
    /// headers, and the identity this server's aggregator proxies with.
    pub front_proxy: FrontProxyConfig,
}

/// kube-apiserver's `--requestheader-*` and `--proxy-client-*` flags.
#[derive(Clone, Debug, Default)]
pub struct FrontProxyConfig {
    /// The CAs of trusted front proxies' client certificates; `None`: the server's own
    /// front-proxy CA (`<data-dir>/pki/front-proxy-ca.crt`), as kubeadm sets it up.
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// The common names a proxy's certificate may have; empty: any the CA signed.
    pub requestheader_allowed_names: Vec<String>,
    /// Headers naming the user; empty: kube's (`X-Remote-User`).
    pub requestheader_username_headers: Vec<String>,
    /// Headers naming the groups; empty: `X-Remote-Group`.
    pub requestheader_group_headers: Vec<String>,
    /// Headers naming the UID; empty: `X-Remote-Uid`.
    pub requestheader_uid_headers: Vec<String>,
    /// Prefixes of the headers of extra attributes; empty: `X-Remote-Extra-`.
    pub requestheader_extra_headers_prefix: Vec<String>,
    /// The aggregator's client certificate; `None`: the server's own
    /// (`<data-dir>/pki/front-proxy-client.crt`).
    pub proxy_client_cert_file: Option<PathBuf>,
    /// Its key.
    pub proxy_client_key_file: Option<PathBuf>,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The data directory or kubeconfig could not be written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The storage could not be opened.
    #[error("opening the storage: {0}")]
    Storage(#[from] kapi_storage::StorageError),
    /// The configuration asks for something this build cannot do.
    #[error("{0}")]
    Config(String),
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let context = context.into();
    move |source| ServeError::Io { context, source }
}

async fn open_storage(config: &ServeConfig) -> Result<Arc<dyn Storage>, ServeError> {
    if config.etcd_servers.is_empty() {
        // The server's compactor is the one compaction policy, for both backends.
        let storage = EmbeddedStorage::open_with(
            &config.data_dir,
            EmbeddedConfig::default().without_compaction(),
        )?;
        return Ok(Arc::new(storage));
    }
    #[cfg(feature = "etcd")]
    {
        let etcd =
            kapi_storage::EtcdConfig::default().with_ordered_progress(config.etcd_ordered_progress);
        let storage = kapi_storage::EtcdStorage::connect_with(&config.etcd_servers, etcd).await?;
        Ok(Arc::new(storage))
    }
    #[cfg(not(feature = "etcd"))]
    Err(ServeError::Config(
        "this kapi was built without etcd support; rebuild with `--features etcd`".into(),
    ))
}

/// The admission chain, once the webhook configurations and admission policies are read
/// (writes must not slip past ones configured but not read yet), and the tasks that
/// keep them read.
async fn start_admission(
    registry: &Arc<Registry>,
    authorizer: &Authorizer,
    services: Arc<dyn ServiceResolver>,
    stop: watch::Receiver<bool>,
) -> (
    Arc<kapi_kube::admission::Plugins>,
    Vec<tokio::task::JoinHandle<()>>,
) {
    let (webhooks, mut webhooks_synced, webhooks_task) = kapi_kube::admission::webhook::start(
        registry.clone(),
        Some(authorizer.clone()),
        Some(services),
        stop.clone(),
    );
    let (policies, mut policies_synced, policies_task) =
        kapi_kube::admission::policy::start(registry.clone(), Some(authorizer.clone()), stop);
    wait_synced(&mut webhooks_synced, "the webhook configurations").await;
    wait_synced(&mut policies_synced, "the validating admission policies").await;
    let plugins = kapi_kube::admission::Plugins {
        registry: registry.clone(),
        authorizer: authorizer.clone(),
        webhooks: Some(webhooks),
        policies: Some(policies),
        quota_lookups: Default::default(),
    };
    (Arc::new(plugins), vec![webhooks_task, policies_task])
}

/// The request limits, under priority and fairness when it is on (once the stored
/// FlowSchemas and PriorityLevelConfigurations are read), and the task that follows
/// them.
async fn start_limits(
    config: &kapi_apiserver::limits::LimitsConfig,
    registry: &Arc<Registry>,
    stop: watch::Receiver<bool>,
) -> (
    kapi_apiserver::limits::Limits,
    Option<tokio::task::JoinHandle<()>>,
) {
    use kapi_apiserver::flowcontrol;
    let limits = kapi_apiserver::limits::Limits::new(config.clone());
    let Some(seats) = limits.priority_and_fairness_seats() else {
        return (limits, None);
    };
    let controller = Arc::new(flowcontrol::Controller::new(&[], &[], seats));
    let (mut synced, task) =
        kapi_kube::flow_control::follow(registry.clone(), controller.clone(), stop);
    wait_synced(&mut synced, "the flow control configuration").await;
    (limits.with_priority_and_fairness(controller), Some(task))
}

/// What kube-apiserver creates at start: system namespaces, RBAC, PriorityClasses,
/// flow control, the default ServiceCIDR.
async fn ensure_bootstrap_objects(registry: &Registry, ranges: &ServiceRanges) {
    bootstrap::ensure_namespaces(registry).await;
    bootstrap::ensure_rbac(registry).await;
    bootstrap::ensure_priority_classes(registry).await;
    bootstrap::ensure_flow_control(registry).await;
    bootstrap::ensure_service_cidr(registry, ranges.network, ranges.prefix_len).await;
}

/// Serves `resources` until `shutdown` completes.
pub async fn serve(
    config: ServeConfig,
    resources: Resources,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), ServeError> {
    run(config, resources, shutdown, None).await
}

/// [`serve`], telling `ready` where it answers once it does.
async fn run(
    config: ServeConfig,
    resources: Resources,
    shutdown: impl std::future::Future<Output = ()>,
    ready: Option<tokio::sync::oneshot::Sender<Ready>>,
) -> Result<(), ServeError> {
    requirements::check(&resources, &config.security)?;
    crate::private_files::ensure_dir(&config.data_dir)
        .map_err(io(format!("creating {}", config.data_dir.display())))?;
    let encryption =
        kapi_apiserver::encryption::load(config.security.encryption_provider_config.as_deref())
            .map_err(ServeError::Config)?;
    let storage = open_storage(&config).await?;
    // Below everything else, so the watch caches hold plaintext.
    let storage = kapi_apiserver::encryption::wrap(
        storage,
        encryption.as_ref(),
        &resources,
        &config.prefix,
        kapi_kube::controlplane::ENCRYPTION_NAMES,
    );
    let (registry, services) = registry(&config, &resources, &storage);
    ensure_bootstrap_objects(&registry, &config.service_ranges).await;

    let (stop_tx, stop_rx) = watch::channel(false);
    // Stored CRDs are served before the first request is taken.
    let (crd_controller, mut crds_synced) =
        kapi_apiextensions::start(registry.clone(), Some(services.clone()), stop_rx.clone());
    wait_synced(&mut crds_synced, "the CustomResourceDefinitions").await;

    let security = &config.security;
    if security.insecure_http && !config.listen.ip().is_loopback() {
        return Err(ServeError::Config(format!(
            "--insecure-http serves without encryption or authentication and is refused on {}: listen on a loopback address (127.0.0.1 or ::1)",
            config.listen.ip()
        )));
    }
    let names = pki::serving_names(config.listen.ip(), &security.tls_sans);
    let pki = pki::ensure(&config.data_dir, &names).map_err(io(format!(
        "making the certificates in {}/pki",
        config.data_dir.display()
    )))?;
    let (authenticator, tls) = security_setup(security, &pki)?;

    let (policy, mut policy_synced, policy_task) =
        kapi_kube::rbac::start(registry.clone(), stop_rx.clone());
    wait_synced(&mut policy_synced, "the RBAC policy").await;
    let authorizer = Authorizer {
        policy: Some(policy),
        modes: if security.authorization_modes.is_empty() {
            Authorizer::default().modes
        } else {
            security.authorization_modes.clone()
        },
        webhook: match &security.authorization_webhook {
            Some(config) => Some(std::sync::Arc::new(
                kapi_apiserver::authorization::webhook::WebhookAuthorizer::new(config).map_err(
                    |e| ServeError::Config(format!("--authorization-webhook-config-file: {e}")),
                )?,
            )),
            None => None,
        },
    };
    let (admission, mut background_tasks) =
        start_admission(&registry, &authorizer, services, stop_rx.clone()).await;
    let (limits, flow_task) = start_limits(&security.limits, &registry, stop_rx.clone()).await;
    background_tasks.extend(flow_task);

    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(io(format!("listening on {}", config.listen)))?;
    let local = listener
        .local_addr()
        .map_err(io("reading the bound address"))?;
    let (url, kubeconfig_path) = write_kubeconfig(&config.data_dir, local, tls.as_ref(), &pki)?;

    let (aggregator, aggregator_task) = match registry.get(
        kapi_aggregator::api_service::GROUP,
        kapi_aggregator::api_service::VERSION,
        kapi_aggregator::api_service::PLURAL,
    ) {
        Some(_) => {
            let identity = proxy_identity(&security.front_proxy, &pki)?;
            let (aggregator, task) =
                kapi_aggregator::start(registry.clone(), identity, stop_rx.clone());
            (
                Some(aggregator as Arc<dyn kapi_apiserver::endpoints::Front>),
                Some(task),
            )
        }
        None => (None, None),
    };
    let api = Arc::new(Api {
        documents: LiveDocuments::new(&registry, &local.to_string()),
        registry: registry.clone(),
        address: local.to_string(),
        shutdown: stop_rx,
        authenticator,
        authorizer,
        admission,
        create_only: kapi_kube::reviews::create_only()
            .into_iter()
            .chain([
                kapi_kube::eviction::create_only(),
                kapi_kube::bindings::create_only(),
            ])
            .collect(),
        connecters: kapi_kube::kubelet_streams::connecters(),
        built_in_groups: kapi_kube::controlplane::BUILT_IN_GROUPS,
        insecure: tls.is_none(),
        limits,
        auditor: auditor(security)?,
        protobuf: &kapi_kube::generated::protobuf::CATALOG,
        front: aggregator,
    });
    let acceptor = tls.map(|t| tokio_rustls::TlsAcceptor::from(t.config));
    let background = start_background(&config, &registry, &storage, local, api.shutdown.clone());
    tracing::info!(url = %url, kubeconfig = %kubeconfig_path.display(), "kapi is ready");
    if let Some(ready) = ready {
        let _ = ready.send(Ready {
            url,
            address: local,
            kubeconfig: kubeconfig_path,
        });
    }

    let graceful = accept_until(listener, acceptor, &api, shutdown).await;
    tracing::info!("shutting down: no new connections, ending watches");
    let _ = stop_tx.send(true);
    let mut tasks = background_tasks;
    tasks.push(crd_controller);
    tasks.push(policy_task);
    tasks.extend(aggregator_task);
    stop_all(graceful, background, tasks, api, registry, storage).await;
    Ok(())
}

/// Lets in-flight requests end (30 s at most), the background work stop (a leader
/// gives its Lease up), then ends the rest and closes the store.
async fn stop_all(
    graceful: GracefulShutdown,
    background: tokio::task::JoinHandle<()>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    api: Arc<Api>,
    registry: Arc<Registry>,
    storage: Arc<dyn Storage>,
) {
    if tokio::time::timeout(Duration::from_secs(30), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still running after 30s; closing anyway");
    }
    let background_abort = background.abort_handle();
    if tokio::time::timeout(Duration::from_secs(5), background)
        .await
        .is_err()
    {
        background_abort.abort();
    }
    for task in &tasks {
        task.abort();
    }
    // Ended, not only told to: what they hold (the store) is released now, so the
    // same data directory can be served again in this process.
    for task in tasks {
        let _ = task.await;
    }
    registry.close().await;
    if let Some(auditor) = &api.auditor {
        auditor.log().close();
    }
    drop(api);
    drop(registry);
    if let Err(e) = storage.close().await {
        tracing::warn!(error = %e, "closing the storage");
    }
    tracing::info!("stopped");
}

/// The store options: what every resource gets (the object size limit, the watch
/// caches), and what [`kapi_kube::controlplane`] adds for particular built-ins.
/// The registry of `resources` over `storage`, and what resolves the Services webhooks
/// name (conversion and admission), as the aggregator's routing does.
fn registry(
    config: &ServeConfig,
    resources: &Resources,
    storage: &Arc<dyn Storage>,
) -> (Arc<Registry>, Arc<dyn ServiceResolver>) {
    let instrumented: Arc<dyn Storage> = Arc::new(InstrumentedStorage::new(storage.clone()));
    let mut options = store_options(config, &instrumented);
    // Bound to the registry once it exists: the converters its stores hold use it.
    let resolver = Arc::new(kapi_aggregator::resolve::EndpointServiceResolver::unbound());
    let services: Arc<dyn ServiceResolver> = resolver.clone();
    for (resource, conversion) in resources.conversion_webhooks() {
        let converter = WebhookConverter::for_conversion_json(conversion, Some(&services));
        if let Some(c) = converter {
            options.converters.insert(resource.clone(), Arc::new(c));
        }
    }
    let registry = Arc::new(Registry::with_options(
        resources,
        instrumented,
        &config.prefix,
        &options,
    ));
    resolver.bind(&registry);
    (registry, services)
}

fn store_options(config: &ServeConfig, storage: &Arc<dyn Storage>) -> StoreOptions {
    let mut options = StoreOptions {
        max_object_bytes: Some(config.security.limits.max_object_bytes),
        watch_cache: config.watch_cache.clone(),
        ..StoreOptions::default()
    };
    kapi_kube::controlplane::configure_stores(
        &mut options,
        storage,
        &config.prefix,
        config.service_ranges.clone(),
        config.event_ttl,
    );
    options
}

/// Waits up to 60 s for `synced` to turn true, then starts anyway with a warning.
async fn wait_synced(synced: &mut watch::Receiver<bool>, what: &str) {
    if tokio::time::timeout(Duration::from_secs(60), synced.wait_for(|s| *s))
        .await
        .is_err()
    {
        tracing::warn!("{what} not read in 60s; starting anyway");
    }
}

/// Writes the kubeconfig for the server at `local`; returns its URL and the file.
fn write_kubeconfig(
    data_dir: &std::path::Path,
    local: SocketAddr,
    tls: Option<&Tls>,
    pki: &pki::Pki,
) -> Result<(String, PathBuf), ServeError> {
    let (url, credentials) = match tls {
        Some(tls) => (
            format!("https://{local}"),
            Some(kubeconfig::Credentials {
                ca: tls.kubeconfig_ca.clone(),
                client_cert: pki.admin_cert.clone(),
                client_key: pki.admin_key.clone(),
            }),
        ),
        None => {
            tracing::warn!(
                "--insecure-http: serving plain HTTP without authentication on {local}; anyone who can reach it is cluster-admin"
            );
            (format!("http://{local}"), None)
        }
    };
    let path = kubeconfig::write(data_dir, &url, credentials.as_ref())
        .map_err(io("writing the kubeconfig"))?;
    Ok((url, path))
}

/// Writes this server's StorageVersion entries, and starts what runs once in a
/// cluster of replicas, the controllers and compaction: here, or in whichever replica
/// leads.
fn start_background(
    config: &ServeConfig,
    registry: &Arc<Registry>,
    storage: &Arc<dyn Storage>,
    local: SocketAddr,
    shutdown: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    // This server's entry in every compiled resource's StorageVersion, beside serving.
    let server_id = format!("{}-{local}", kapi_kube::leader_election::hostname());
    let publishing = registry.clone();
    tokio::spawn(async move {
        kapi_kube::controllers::storage_versions::publish(&publishing, &server_id).await;
    });
    let (work_registry, storage) = (registry.clone(), storage.clone());
    let compaction = config.compaction_interval;
    // What runs once in a cluster of replicas: the controllers and compaction.
    let work = move |stop: watch::Receiver<bool>| {
        let (registry, storage) = (work_registry.clone(), storage.clone());
        async move {
            let compactor = async {
                if let Some(interval) = compaction {
                    kapi_apiserver::compactor::run(storage, interval, stop.clone()).await;
                }
            };
            tokio::join!(
                kapi_kube::controllers::run(registry, stop.clone()),
                compactor
            );
        }
    };
    match config.leader_election {
        Some(timings) => tokio::spawn(kapi_kube::leader_election::run(
            registry.clone(),
            kapi_kube::leader_election::identity(),
            timings,
            shutdown,
            work,
        )),
        None => tokio::spawn(work(shutdown)),
    }
}

/// Serves every connection `listener` accepts until `shutdown` completes; returns the
/// connections still open, to drain.
async fn accept_until(
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    api: &Arc<Api>,
    shutdown: impl std::future::Future<Output = ()>,
) -> GracefulShutdown {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // kube-apiserver's ReadHeaderTimeout: a client that has not sent a request's headers
    // within 32 s (a slowloris, or an idle kept-alive connection) is disconnected.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, address) = match accepted {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        continue;
                    }
                };
                // Watch events go out as soon as they are written, not after the
                // client's delayed ACK (Nagle), as Go's net stack does by default.
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(error = %e, "TCP_NODELAY");
                }
                let api = api.clone();
                let builder = builder.clone();
                let watcher = graceful.watcher();
                let Some(acceptor) = acceptor.clone() else {
                    // Plain HTTP/2 (prior knowledge) is served without gathering writes:
                    // with no TLS record to save, the turn it waits cost more than the
                    // writes it saved in the bench's HTTP/2 cells (BENCHMARKS.md).
                    tokio::spawn(async move {
                        let peer = Peer::new(Some(address), Vec::new());
                        serve_one(&builder, stream, service(api, Arc::new(peer)), watcher).await;
                    });
                    continue;
                };
                // The handshake runs in the connection's task, so a slow client delays
                // no one else; it gets 10 s, as Go's TLS handshake timeout.
                tokio::spawn(async move {
                    let stream = match tokio::time::timeout(
                        Duration::from_secs(10),
                        acceptor.accept(stream),
                    )
                    .await
                    {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(e)) => {
                            tracing::debug!(error = %e, %address, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::debug!(%address, "TLS handshake timed out");
                            return;
                        }
                    };
                    let certificates = stream
                        .get_ref()
                        .1
                        .peer_certificates()
                        .map(|c| c.iter().map(|c| c.clone().into_owned()).collect())
                        .unwrap_or_default();
                    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
                    let service = service(api, Arc::new(Peer::new(Some(address), certificates)));
                    // HTTP/2's frames of one turn of its task share a TLS record.
                    if h2 {
                        serve_one(&builder, Coalesce::new(stream), service, watcher).await;
                    } else {
                        serve_one(&builder, stream, service, watcher).await;
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    graceful
}

/// Serves one accepted connection until it ends.
async fn serve_one<S>(
    builder: &auto::Builder<TokioExecutor>,
    io: S,
    service: impl hyper::service::Service<
        http::Request<hyper::body::Incoming>,
        Response = http::Response<kapi_apiserver::response::Body>,
        Error = std::convert::Infallible,
        Future = Handling,
    > + Clone
    + Send
    + 'static,
    watcher: Watcher,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
    if let Err(e) = watcher.watch(connection.into_owned()).await {
        tracing::debug!(error = %e, "connection ended");
    }
}

/// What one request's handling is: boxed, because the handler's state machine is
/// several kilobytes and hyper moves the future it is given into each stream's task
/// (a `memmove` per request in the profiles of issue #21), where a box moves a pointer.
type Handling = std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = Result<
                    http::Response<kapi_apiserver::response::Body>,
                    std::convert::Infallible,
                >,
            > + Send,
    >,
>;

/// The hyper service of one connection.
fn service(
    api: Arc<Api>,
    peer: Arc<Peer>,
) -> impl hyper::service::Service<
    http::Request<hyper::body::Incoming>,
    Response = http::Response<kapi_apiserver::response::Body>,
    Error = std::convert::Infallible,
    Future = Handling,
> + Clone {
    service_fn(move |req| -> Handling {
        let api = api.clone();
        let peer = peer.clone();
        boxed_in_place(
            || async move { Ok::<_, std::convert::Infallible>(api.handle(req, &peer).await) },
        )
    })
}

/// The future `make` makes, made in its box: `Box::pin(future)` makes it on the stack
/// and copies all of it, its unstarted state a few hundred bytes of its kilobytes
/// (callgrind: two `memcpy`s of 4 KiB a request).
#[inline(always)]
fn boxed_in_place<F: std::future::Future>(make: impl FnOnce() -> F) -> std::pin::Pin<Box<F>> {
    let boxed = Box::<F>::new_uninit();
    Box::into_pin(Box::write(boxed, make()))
}

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
