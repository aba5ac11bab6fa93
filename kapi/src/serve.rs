//! `kapi serve`: its flags, named as kube-apiserver's, turned into a
//! [`ServeConfig`] and served until a signal stops it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use kapi::server::{SecurityConfig, ServeConfig, serve, shutdown_signal};
use kapi_apiserver::registry::Resources;
use kapi_kube::allocation::ServiceRanges;

/// The flags of `kapi serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:6443")]
    listen: SocketAddr,
    /// Directory for the embedded store and the kubeconfig.
    #[arg(long, default_value = "./kapi-data")]
    data_dir: PathBuf,
    /// etcd endpoints (comma-separated URLs); without them, the embedded store.
    #[arg(long, value_delimiter = ',')]
    etcd_servers: Vec<String>,
    /// Key prefix of every object in the store.
    #[arg(long, default_value = "/registry")]
    etcd_prefix: String,
    /// How often the store's history is compacted (`300s`, `5m`; `0` never). Watches
    /// and continue tokens older than one interval then answer 410 Gone.
    #[arg(long, default_value = "5m", value_parser = kapi_apiserver::duration::parse_duration)]
    compaction_interval: std::time::Duration,
    /// How long an Event is kept after its last write (`1h`, `90s`).
    #[arg(long, default_value = "1h", value_parser = kapi_apiserver::duration::parse_duration)]
    event_ttl: std::time::Duration,
    /// The IPv4 range Service cluster IPs are allocated from.
    #[arg(long, default_value = "10.0.0.0/24", value_parser = ServiceRanges::parse_cidr)]
    service_cluster_ip_range: (std::net::Ipv4Addr, u8),
    /// The range of Service node ports.
    #[arg(long, default_value = "30000-32767", value_parser = ServiceRanges::parse_port_range)]
    service_node_port_range: std::ops::RangeInclusive<u16>,
    #[command(flatten)]
    security: SecurityFlags,
    #[command(flatten)]
    front_proxy: FrontProxyFlags,
    /// An `EncryptionConfiguration` file: encrypt the resources it names at rest.
    #[arg(long)]
    encryption_provider_config: Option<PathBuf>,
    #[command(flatten)]
    leader_election: LeaderElectionFlags,
}

/// Leader election among replicas, named as kube-controller-manager's flags.
#[derive(clap::Args)]
struct LeaderElectionFlags {
    /// Run the controllers and compaction only in the replica holding the
    /// `kube-system/kapi-controllers` Lease. Default: on with `--etcd-servers` (where
    /// several replicas may share the store), off on the embedded store.
    #[arg(long)]
    leader_elect: Option<bool>,
    /// How long a Lease that is not renewed stays held.
    #[arg(long, default_value = "15s", value_parser = kapi_apiserver::duration::parse_duration)]
    leader_elect_lease_duration: std::time::Duration,
    /// How long the leader keeps leading without renewing; under the lease duration.
    #[arg(long, default_value = "10s", value_parser = kapi_apiserver::duration::parse_duration)]
    leader_elect_renew_deadline: std::time::Duration,
    /// How often the leader renews and candidates try.
    #[arg(long, default_value = "2s", value_parser = kapi_apiserver::duration::parse_duration)]
    leader_elect_retry_period: std::time::Duration,
}

/// TLS, authentication and authorization flags, named as kube-apiserver's.
#[derive(clap::Args)]
struct SecurityFlags {
    /// Serve plain HTTP instead of HTTPS, only on a loopback address; requests without
    /// credentials are then cluster-admin.
    #[arg(long)]
    insecure_http: bool,
    /// The serving certificate (PEM, with its chain); the server's own CA signs one
    /// when absent.
    #[arg(long, requires = "tls_private_key_file")]
    tls_cert_file: Option<PathBuf>,
    /// The serving certificate's private key (PEM).
    #[arg(long, requires = "tls_cert_file")]
    tls_private_key_file: Option<PathBuf>,
    /// More names (DNS or IP) for the server's own serving certificate.
    #[arg(long = "tls-san", value_delimiter = ',')]
    tls_sans: Vec<String>,
    /// CA bundle (PEM) whose client certificates are accepted (CN = user, O = groups),
    /// besides the server's own CA.
    #[arg(long)]
    client_ca_file: Option<PathBuf>,
    /// Static bearer tokens: CSV lines `token,user,uid,"group1,group2"`.
    #[arg(long)]
    token_auth_file: Option<PathBuf>,
    /// Let requests without credentials in as `system:anonymous`.
    #[arg(long)]
    anonymous_auth: bool,
    /// The authorization modes, in order (kube-apiserver's names: AlwaysAllow,
    /// AlwaysDeny, RBAC, Webhook); the first to allow decides. Members of
    /// system:masters may do anything whatever the modes.
    #[arg(long, value_delimiter = ',', default_value = "RBAC")]
    authorization_mode: Vec<String>,
    /// The kubeconfig of the Webhook mode's server: its URL, CA and the credentials
    /// kapi calls it with.
    #[arg(long)]
    authorization_webhook_config_file: Option<PathBuf>,
    /// The SubjectAccessReview version sent to the webhook (v1 or v1beta1).
    #[arg(long, default_value = "v1beta1")]
    authorization_webhook_version: String,
    /// How long the webhook's allows are remembered.
    #[arg(long, default_value = "5m", value_parser = kapi_apiserver::duration::parse_duration)]
    authorization_webhook_cache_authorized_ttl: std::time::Duration,
    /// How long the webhook's other answers are remembered.
    #[arg(long, default_value = "30s", value_parser = kapi_apiserver::duration::parse_duration)]
    authorization_webhook_cache_unauthorized_ttl: std::time::Duration,
    /// The `iss` of the ServiceAccount tokens the server issues.
    #[arg(long, default_value = kapi::server::DEFAULT_ISSUER)]
    service_account_issuer: String,
    /// The audiences the API accepts tokens for (the issuer when empty).
    #[arg(long, value_delimiter = ',')]
    api_audiences: Vec<String>,
    /// Reads (non-mutating requests other than watches) in flight at once; more get 429
    /// (0: no limit).
    #[arg(long, default_value_t = 400)]
    max_requests_inflight: usize,
    /// Writes in flight at once; more get 429 (0: no limit).
    #[arg(long, default_value_t = 200)]
    max_mutating_requests_inflight: usize,
    /// API priority and fairness: the FlowSchemas and PriorityLevelConfigurations divide
    /// the two in-flight limits' sum between priority levels and queue each level's
    /// excess fairly per flow (`false`: the two limits apply as they are).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    enable_priority_and_fairness: bool,
    /// How long a request other than a watch may take before it gets 504.
    #[arg(long, default_value = "60s", value_parser = kapi_apiserver::duration::parse_duration)]
    request_timeout: std::time::Duration,
    /// Write an audit log (`audit.k8s.io/v1` Events as JSON lines) to this file (`-`:
    /// stdout).
    #[arg(long)]
    audit_log_path: Option<PathBuf>,
    /// The audit policy; without one, every request is logged at Metadata level.
    #[arg(long, requires = "audit_log_path")]
    audit_policy_file: Option<PathBuf>,
    /// The audit log file's mode, in octal (`0640`); without it `0600`, and an
    /// existing log that is wider is tightened.
    #[arg(long, requires = "audit_log_path", value_parser = parse_file_mode)]
    audit_log_file_mode: Option<u32>,
    /// The largest request body, in bytes; larger ones get 413.
    #[arg(long, default_value_t = kapi_apiserver::limits::DEFAULT_MAX_BODY)]
    max_request_body_bytes: usize,
    /// The largest object stored, in bytes (etcd's default request limit); larger
    /// ones get 413.
    #[arg(long, default_value_t = kapi_apiserver::registry::DEFAULT_MAX_OBJECT_BYTES)]
    max_object_size_bytes: usize,
    /// Open watches per user; more get 429 (0: no limit).
    #[arg(long, default_value_t = 1000)]
    max_watches_per_user: usize,
    /// The most bytes one resource's watch cache keeps in its event window (events,
    /// previous values, encodings); the oldest events go first.
    #[arg(long, default_value_t = kapi_storage::cacher::DEFAULT_BUDGET_BYTES)]
    watch_cache_budget_bytes: usize,
    /// The most bytes the event windows of all watch caches keep together.
    #[arg(long, default_value_t = kapi_storage::cacher::DEFAULT_TOTAL_BUDGET_BYTES)]
    watch_cache_total_budget_bytes: usize,
    /// How long a watch cache keeps an event (beyond its newest 100), as
    /// kube-apiserver's 75 s `eventFreshDuration`.
    #[arg(long, default_value = "75s", value_parser = kapi_apiserver::duration::parse_duration)]
    watch_cache_event_horizon: std::time::Duration,
    /// Serve reads without `resourceVersion` from the watch cache once it has caught up
    /// with the store's current revision, as kube-apiserver's `ConsistentListFromCache`;
    /// `false` reads the store.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    watch_cache_consistent_reads: bool,
    /// Whether etcd sends requested progress notifications in order with watch events,
    /// which consistent reads from the watch cache need: `auto` asks etcd's version
    /// (3.4.31, 3.5.13 and later do); `true` for an etcd with the fixes backported;
    /// `false` never relies on them.
    #[arg(long, value_enum, default_value_t = OrderedProgress::Auto)]
    etcd_ordered_progress: OrderedProgress,
}

/// `--etcd-ordered-progress`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum OrderedProgress {
    Auto,
    True,
    False,
}

impl OrderedProgress {
    /// What the storage config says: `None` asks etcd's version.
    fn known(self) -> Option<bool> {
        match self {
            Self::Auto => None,
            Self::True => Some(true),
            Self::False => Some(false),
        }
    }
}

/// Front-proxy authentication and the aggregator's identity, named as kube-apiserver's.
#[derive(clap::Args)]
struct FrontProxyFlags {
    /// CA bundle (PEM) of the front proxies trusted to name the user in request
    /// headers (an aggregator in front of this server). Default: this server's own
    /// front-proxy CA, `<data-dir>/pki/front-proxy-ca.crt`.
    #[arg(long)]
    requestheader_client_ca_file: Option<PathBuf>,
    /// Common names a front proxy's client certificate may have (empty: any).
    #[arg(long, value_delimiter = ',')]
    requestheader_allowed_names: Vec<String>,
    /// Headers naming the user (default: X-Remote-User).
    #[arg(long, value_delimiter = ',')]
    requestheader_username_headers: Vec<String>,
    /// Headers naming the user's groups (default: X-Remote-Group).
    #[arg(long, value_delimiter = ',')]
    requestheader_group_headers: Vec<String>,
    /// Headers naming the user's UID (default: X-Remote-Uid).
    #[arg(long, value_delimiter = ',')]
    requestheader_uid_headers: Vec<String>,
    /// Prefixes of headers naming the user's extra attributes (default:
    /// X-Remote-Extra-).
    #[arg(long, value_delimiter = ',')]
    requestheader_extra_headers_prefix: Vec<String>,
    /// The client certificate the aggregator presents to the servers of remote
    /// APIServices. Default: `<data-dir>/pki/front-proxy-client.crt`.
    #[arg(long, requires = "proxy_client_key_file")]
    proxy_client_cert_file: Option<PathBuf>,
    /// Its key.
    #[arg(long, requires = "proxy_client_cert_file")]
    proxy_client_key_file: Option<PathBuf>,
}

/// An octal file mode: `0640`, `640` or `0o640`.
fn parse_file_mode(text: &str) -> Result<u32, String> {
    let digits = text.strip_prefix("0o").unwrap_or(text);
    match u32::from_str_radix(digits, 8) {
        Ok(mode) if mode <= 0o777 => Ok(mode),
        _ => Err(format!(
            "{text:?} is not a file mode in octal (such as 0640)"
        )),
    }
}

/// Serves the API as `args` say; returns when a signal stopped it or it failed.
pub fn run(args: ServeArgs) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KAPI_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let ServeArgs {
        listen,
        data_dir,
        etcd_servers,
        etcd_prefix,
        compaction_interval,
        service_cluster_ip_range,
        service_node_port_range,
        event_ttl,
        security,
        front_proxy,
        encryption_provider_config,
        leader_election,
    } = args;
    let timings = kapi_kube::leader_election::Timings {
        lease_duration: leader_election.leader_elect_lease_duration,
        renew_deadline: leader_election.leader_elect_renew_deadline,
        retry_period: leader_election.leader_elect_retry_period,
    };
    let elect = leader_election
        .leader_elect
        .unwrap_or(!etcd_servers.is_empty());
    if elect {
        if let Err(e) = timings.check() {
            eprintln!("kapi: {e}");
            return ExitCode::from(2);
        }
    }
    let authorization_modes =
        match kapi_apiserver::authorization::Mode::parse_list(&security.authorization_mode) {
            Ok(modes) => modes,
            Err(e) => {
                eprintln!("kapi: {e}");
                return ExitCode::from(2);
            }
        };
    let mut resources = Resources::new();
    kapi_kube::generated::register(&mut resources);
    kapi_custom::generated::register(&mut resources);
    let config = ServeConfig {
        listen,
        data_dir,
        etcd_servers,
        prefix: etcd_prefix,
        compaction_interval: (!compaction_interval.is_zero()).then_some(compaction_interval),
        event_ttl,
        service_ranges: ServiceRanges {
            network: service_cluster_ip_range.0,
            prefix_len: service_cluster_ip_range.1,
            node_ports: service_node_port_range,
        },
        security: SecurityConfig {
            encryption_provider_config,
            insecure_http: security.insecure_http,
            tls_cert_file: security.tls_cert_file,
            tls_private_key_file: security.tls_private_key_file,
            tls_sans: security.tls_sans,
            client_ca_file: security.client_ca_file,
            token_auth_file: security.token_auth_file,
            anonymous_auth: security.anonymous_auth,
            authorization_modes,
            authorization_webhook: security.authorization_webhook_config_file.map(|file| {
                kapi_apiserver::authorization::webhook::WebhookConfig {
                    version: security.authorization_webhook_version,
                    authorized_ttl: security.authorization_webhook_cache_authorized_ttl,
                    unauthorized_ttl: security.authorization_webhook_cache_unauthorized_ttl,
                    ..kapi_apiserver::authorization::webhook::WebhookConfig::new(file)
                }
            }),
            service_account_issuer: security.service_account_issuer,
            api_audiences: security.api_audiences,
            audit_log_path: security.audit_log_path,
            audit_policy_file: security.audit_policy_file,
            audit_log_file_mode: security.audit_log_file_mode,
            front_proxy: kapi::server::FrontProxyConfig {
                requestheader_client_ca_file: front_proxy.requestheader_client_ca_file,
                requestheader_allowed_names: front_proxy.requestheader_allowed_names,
                requestheader_username_headers: front_proxy.requestheader_username_headers,
                requestheader_group_headers: front_proxy.requestheader_group_headers,
                requestheader_uid_headers: front_proxy.requestheader_uid_headers,
                requestheader_extra_headers_prefix: front_proxy.requestheader_extra_headers_prefix,
                proxy_client_cert_file: front_proxy.proxy_client_cert_file,
                proxy_client_key_file: front_proxy.proxy_client_key_file,
            },
            limits: kapi_apiserver::limits::LimitsConfig {
                max_requests_inflight: security.max_requests_inflight,
                max_mutating_requests_inflight: security.max_mutating_requests_inflight,
                priority_and_fairness: security.enable_priority_and_fairness,
                request_timeout: security.request_timeout,
                max_watches_per_user: security.max_watches_per_user,
                max_object_bytes: security.max_object_size_bytes,
                max_body_bytes: security.max_request_body_bytes,
            },
        },
        leader_election: elect.then_some(timings),
        watch_cache: kapi_storage::CacherConfig::default()
            .with_budget_bytes(security.watch_cache_budget_bytes)
            .with_total_budget(std::sync::Arc::new(kapi_storage::WatchCacheBudget::new(
                security.watch_cache_total_budget_bytes,
            )))
            .with_event_horizon(security.watch_cache_event_horizon)
            .with_consistent_reads(security.watch_cache_consistent_reads),
        etcd_ordered_progress: security.etcd_ordered_progress.known(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kapi: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(config, resources, shutdown_signal())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("kapi: {e}");
            ExitCode::FAILURE
        }
    }
}
