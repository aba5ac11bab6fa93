//! Running the server: open the storage, build the registry, make sure the initial
//! namespaces exist, serve the stored CustomResourceDefinitions, listen (HTTP/1.1 and HTTP/2), write the kubeconfig, and shut down
//! cleanly: stop accepting, end watches, let in-flight requests finish, close the store.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use kapi_storage::{EmbeddedConfig, EmbeddedStorage, Storage};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::allocation::{ServiceAllocator, ServiceRanges};
use crate::bootstrap;
use crate::documents::LiveDocuments;
use crate::endpoints::Api;
use crate::kubeconfig;
use crate::metrics::InstrumentedStorage;
use crate::registry::{Registry, Resources, StoreOptions};

/// How `kapi serve` runs.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Where the embedded store and the kubeconfig live.
    pub data_dir: PathBuf,
    /// etcd endpoints; empty for the embedded store.
    pub etcd_servers: Vec<String>,
    /// The key prefix of every object (`/registry`).
    pub prefix: String,
    /// How often history is compacted (`None`: never).
    pub compaction_interval: Option<Duration>,
    /// Where Service cluster IPs and node ports come from.
    pub service_ranges: ServiceRanges,
    /// How long an Event lives after its last write (kube-apiserver's `--event-ttl`).
    pub event_ttl: Duration,
    /// The `EncryptionConfiguration` file of encryption at rest (kube-apiserver's
    /// `--encryption-provider-config`); `None` stores values as they are.
    pub encryption_provider_config: Option<PathBuf>,
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
        let storage = kapi_storage::EtcdStorage::connect(&config.etcd_servers).await?;
        Ok(Arc::new(storage))
    }
    #[cfg(not(feature = "etcd"))]
    Err(ServeError::Config(
        "this kapi was built without etcd support; rebuild with `--features etcd`".into(),
    ))
}

/// Serves `resources` until `shutdown` completes.
pub async fn serve(
    config: ServeConfig,
    resources: Resources,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), ServeError> {
    std::fs::create_dir_all(&config.data_dir)
        .map_err(io(format!("creating {}", config.data_dir.display())))?;
    let encryption = crate::encryption::load(config.encryption_provider_config.as_deref())?;
    let storage = open_storage(&config).await?;
    // Below everything else, so the watch caches hold plaintext.
    let storage = crate::encryption::wrap(storage, encryption.as_ref(), &resources, &config.prefix);
    let instrumented: Arc<dyn Storage> = Arc::new(InstrumentedStorage::new(storage.clone()));
    let mut options = StoreOptions::default();
    options.lifecycles.insert(
        (String::new(), "services".to_string()),
        Arc::new(ServiceAllocator::new(
            instrumented.clone(),
            &config.prefix,
            config.service_ranges.clone(),
        )),
    );
    for group in ["", "events.k8s.io"] {
        options
            .ttls
            .insert((group.to_string(), "events".to_string()), config.event_ttl);
    }
    let registry = Arc::new(Registry::with_options(
        &resources,
        instrumented,
        &config.prefix,
        &options,
    ));
    bootstrap::ensure_namespaces(&registry).await;

    let (stop_tx, stop_rx) = watch::channel(false);
    // Stored CRDs are served before the first request is taken.
    let (crd_controller, mut crds_synced) =
        crate::apiextensions::start(registry.clone(), stop_rx.clone());
    if tokio::time::timeout(Duration::from_secs(60), crds_synced.wait_for(|s| *s))
        .await
        .is_err()
    {
        tracing::warn!("CustomResourceDefinitions not all served after 60s; starting anyway");
    }

    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(io(format!("listening on {}", config.listen)))?;
    let local = listener
        .local_addr()
        .map_err(io("reading the bound address"))?;
    let url = format!("http://{local}");
    let kubeconfig_path =
        kubeconfig::write(&config.data_dir, &url).map_err(io("writing the kubeconfig"))?;

    let api = Arc::new(Api {
        documents: LiveDocuments::new(&registry, &local.to_string()),
        registry: registry.clone(),
        address: local.to_string(),
        shutdown: stop_rx,
    });
    let controllers = crate::controllers::start(registry.clone(), api.shutdown.clone());
    let compactor = config.compaction_interval.map(|interval| {
        tokio::spawn(crate::compactor::run(
            storage.clone(),
            interval,
            api.shutdown.clone(),
        ))
    });
    tracing::info!(url = %url, kubeconfig = %kubeconfig_path.display(), "kapi is ready");

    let builder = auto::Builder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
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
                let service = service_fn(move |req| {
                    let api = api.clone();
                    async move { Ok::<_, std::convert::Infallible>(api.handle(req).await) }
                });
                let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended");
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    tracing::info!("shutting down: no new connections, ending watches");
    drop(listener);
    let _ = stop_tx.send(true);
    if tokio::time::timeout(Duration::from_secs(30), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still running after 30s; closing anyway");
    }
    controllers.abort();
    crd_controller.abort();
    if let Some(c) = compactor {
        c.abort();
    }
    registry.close().await;
    drop(api);
    drop(registry);
    if let Err(e) = storage.close().await {
        tracing::warn!(error = %e, "closing the storage");
    }
    tracing::info!("stopped");
    Ok(())
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
