//! # kapi-tests
//!
//! Support for the end-to-end tests in `tests/tests/`: [`Kapi`] starts the real `kapi`
//! binary on a free loopback port with a throwaway data directory (on the embedded
//! store, or on a real etcd the test starts), and [`Kapi::kubectl`] runs the machine's
//! kubectl against it. No fixed ports and no sleeps: readiness is polled on `/readyz`.
//! The server speaks HTTPS; [`Kapi::agent`] is an HTTP client that verifies it with the
//! CA of the kubeconfig the server wrote and presents that kubeconfig's admin
//! certificate, as kubectl does.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub mod cluster;
pub mod load;
pub mod source;

pub use kapi_testing::{EtcdCluster, EtcdProcess};
use serde_json::Value;

/// How long the server may take to become ready.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Starts a backend for one server.
pub type BackendStarter = fn() -> Backend;

/// Which storage the server runs on.
pub enum Backend {
    /// The embedded store in the data directory.
    Embedded,
    /// A real etcd, started for this server (and stopped with it).
    Etcd(EtcdProcess),
    /// An etcd someone else owns (several replicas over one etcd), by endpoint.
    SharedEtcd(String),
}

impl Backend {
    /// Both backends, for tests that must pass on each.
    pub fn all() -> Vec<(&'static str, BackendStarter)> {
        vec![
            ("embedded", || Backend::Embedded),
            ("etcd", || Backend::Etcd(EtcdProcess::start())),
        ]
    }
}

/// The `kapi` binary cargo built beside this test binary (`target/<profile>/kapi`).
pub fn kapi_binary() -> PathBuf {
    if let Ok(p) = std::env::var("KAPI_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("the test binary has a path");
    // target/<profile>/deps/<test> → target/<profile>/kapi
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binaries live in target/<profile>/deps");
    let bin = dir.join("kapi");
    assert!(
        bin.exists(),
        "the kapi binary is not at {}: run the tests with `cargo test --workspace`, which builds it, or set KAPI_BIN",
        bin.display()
    );
    bin
}

/// A running `kapi serve`.
pub struct Kapi {
    child: Option<Child>,
    data_dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
    backend: Backend,
    url: String,
    /// The server's stderr log, for failure messages.
    log: PathBuf,
    /// What the kubeconfig says (CA and admin certificate), once the server is ready.
    credentials: Option<KubeconfigCredentials>,
}

/// The PEMs of a kubeconfig's cluster and user.
#[derive(Clone, Debug, Default)]
pub struct KubeconfigCredentials {
    /// `certificate-authority-data`.
    pub ca: String,
    /// `client-certificate-data`.
    pub client_cert: String,
    /// `client-key-data`.
    pub client_key: String,
}

impl KubeconfigCredentials {
    /// Reads the `*-data` fields of the kubeconfig kapi writes; `None` if it has none
    /// (`--insecure-http`).
    pub fn parse(kubeconfig: &str) -> Option<Self> {
        use base64::Engine;
        let field = |name: &str| {
            kubeconfig.lines().find_map(|l| {
                let v = l.trim().strip_prefix(name)?.trim();
                let bytes = base64::engine::general_purpose::STANDARD.decode(v).ok()?;
                String::from_utf8(bytes).ok()
            })
        };
        Some(Self {
            ca: field("certificate-authority-data:")?,
            client_cert: field("client-certificate-data:").unwrap_or_default(),
            client_key: field("client-key-data:").unwrap_or_default(),
        })
    }
}

/// An HTTP client for `url`'s server: it trusts `ca` (PEM) and, when given, presents
/// the client certificate and key (PEM). Statuses are answers, not errors; 30 s bound.
pub fn https_agent(ca: Option<&str>, client: Option<(&str, &str)>) -> ureq::Agent {
    https_agent_bounded(ca, client, Some(Duration::from_secs(30)))
}

/// [`https_agent`] with another bound on each request.
pub fn https_agent_with_timeout(
    ca: Option<&str>,
    client: Option<(&str, &str)>,
    timeout: Duration,
) -> ureq::Agent {
    https_agent_bounded(ca, client, Some(timeout))
}

/// [`https_agent`] with another bound on each whole exchange, body included (`None`:
/// unbounded, for watch streams read for longer than 30 s).
pub fn https_agent_bounded(
    ca: Option<&str>,
    client: Option<(&str, &str)>,
    bound: Option<Duration>,
) -> ureq::Agent {
    use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig};
    let mut tls = TlsConfig::builder();
    if let Some(ca) = ca {
        let roots: Vec<Certificate<'static>> = ureq::tls::parse_pem(ca.as_bytes())
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                _ => None,
            })
            .collect();
        tls = tls.root_certs(RootCerts::Specific(std::sync::Arc::new(roots)));
    }
    if let Some((cert, key)) = client {
        let chain: Vec<Certificate<'static>> = ureq::tls::parse_pem(cert.as_bytes())
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                _ => None,
            })
            .collect();
        let key = PrivateKey::from_pem(key.as_bytes()).expect("a PEM private key");
        tls = tls.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
    }
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(bound)
        .tls_config(tls.build())
        .build()
        .into()
}

impl Kapi {
    /// Starts a server on `backend` with a fresh data directory.
    pub fn start(backend: Backend) -> Self {
        Self::start_with(backend, &[])
    }

    /// Starts a server on `backend` with a fresh data directory and extra `kapi serve`
    /// arguments (e.g. `["--compaction-interval", "1s"]`).
    pub fn start_with(backend: Backend, args: &[&str]) -> Self {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let dir = temp.path().to_path_buf();
        Self::start_in(backend, dir, Some(temp), args)
    }

    /// Starts a server on the embedded store in `data_dir` (kept when the server stops,
    /// for restart tests).
    pub fn start_in_dir(data_dir: &Path) -> Self {
        Self::start_in_dir_with(data_dir, &[])
    }

    /// [`Kapi::start_in_dir`] with extra `kapi serve` arguments.
    pub fn start_in_dir_with(data_dir: &Path, args: &[&str]) -> Self {
        Self::start_in(Backend::Embedded, data_dir.to_path_buf(), None, args)
    }

    fn start_in(
        backend: Backend,
        data_dir: PathBuf,
        temp: Option<tempfile::TempDir>,
        args: &[&str],
    ) -> Self {
        std::fs::create_dir_all(&data_dir).expect("creating the data directory");
        let kubeconfig = data_dir.join("kubeconfig");
        let _ = std::fs::remove_file(&kubeconfig);
        let log = data_dir.join("kapi.log");
        let _ = std::fs::remove_file(&log);
        let mut kapi = Self {
            child: None,
            data_dir,
            _temp: temp,
            backend,
            url: String::new(),
            log,
            credentials: None,
        };
        kapi.child = Some(kapi.command(args).spawn().expect("starting kapi"));
        kapi.wait_ready(&kubeconfig);
        kapi
    }

    /// The `kapi serve` command of this server, its log appended to.
    fn command(&self, args: &[&str]) -> Command {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("opening the log file");
        let mut cmd = Command::new(kapi_binary());
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(&self.data_dir)
            .env(
                "KAPI_LOG",
                "info,kapi=debug,kapi_apiserver=debug,kapi_apiextensions=debug,kapi_kube=debug",
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        match &self.backend {
            Backend::Etcd(etcd) => {
                cmd.args(["--etcd-servers", &etcd.endpoint()]);
            }
            Backend::SharedEtcd(endpoint) => {
                cmd.args(["--etcd-servers", endpoint]);
            }
            Backend::Embedded => {}
        }
        cmd.args(args);
        cmd
    }

    fn wait_ready(&mut self, kubeconfig: &Path) {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "kapi exited with {status} before it was ready:\n{}",
                    self.log_text()
                );
            }
            let text = std::fs::read_to_string(kubeconfig).unwrap_or_default();
            if let Some(url) = text.lines().find_map(|l| l.trim().strip_prefix("server: ")) {
                self.url = url.to_string();
                self.credentials = KubeconfigCredentials::parse(&text);
                if self
                    .agent()
                    .get(&format!("{url}/readyz"))
                    .call()
                    .is_ok_and(|r| r.status() == 200)
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "kapi was not ready within {START_TIMEOUT:?}:\n{}",
            self.log_text()
        );
    }

    /// The server's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A raw TLS connection to the server that speaks HTTP/1.1 (by ALPN), presenting the
    /// kubeconfig's admin certificate when `with_certificate`, for requests no client
    /// library sends: slow, partial or abandoned ones. Reads time out after 60 s.
    pub fn raw_tls(&self, with_certificate: bool) -> RawTls {
        let mut config = self.tls_client_config(with_certificate);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let address = self.url.trim_start_matches("https://");
        let tcp = std::net::TcpStream::connect(address).expect("connecting to kapi");
        tcp.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("a read timeout");
        tcp.set_nodelay(true).expect("TCP_NODELAY");
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("an IP address");
        let conn =
            rustls::ClientConnection::new(std::sync::Arc::new(config), name).expect("a TLS client");
        rustls::StreamOwned::new(conn, tcp)
    }

    /// A TLS client configuration trusting the server's CA, presenting the kubeconfig's
    /// admin certificate when `with_certificate`; no ALPN protocols set.
    pub fn tls_client_config(&self, with_certificate: bool) -> rustls::ClientConfig {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let credentials = self
            .credentials
            .as_ref()
            .expect("raw_tls needs the HTTPS server's kubeconfig");
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(credentials.ca.as_bytes()) {
            roots.add(cert.expect("a PEM CA")).expect("a usable CA");
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots);
        if with_certificate {
            let chain = CertificateDer::pem_slice_iter(credentials.client_cert.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .expect("a PEM client certificate");
            let key = PrivateKeyDer::from_pem_slice(credentials.client_key.as_bytes())
                .expect("a PEM client key");
            builder
                .with_client_auth_cert(chain, key)
                .expect("a usable client certificate")
        } else {
            builder.with_no_client_auth()
        }
    }

    /// The base URL, `https://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The CA and admin certificate of the kubeconfig the server wrote (`None` with
    /// `--insecure-http`).
    pub fn credentials(&self) -> Option<&KubeconfigCredentials> {
        self.credentials.as_ref()
    }

    /// An HTTP client acting as the kubeconfig's admin (see [`https_agent`]).
    pub fn agent(&self) -> ureq::Agent {
        match &self.credentials {
            Some(c) => https_agent(
                Some(&c.ca),
                (!c.client_cert.is_empty())
                    .then_some((c.client_cert.as_str(), c.client_key.as_str())),
            ),
            None => https_agent(None, None),
        }
    }

    /// [`Kapi::agent`] without the 30 s bound on an exchange, for watch streams that a
    /// test reads (or leaves unread) for longer.
    pub fn streaming_agent(&self) -> ureq::Agent {
        match &self.credentials {
            Some(c) => https_agent_bounded(
                Some(&c.ca),
                (!c.client_cert.is_empty())
                    .then_some((c.client_cert.as_str(), c.client_key.as_str())),
                None,
            ),
            None => https_agent_bounded(None, None, None),
        }
    }

    /// An HTTP client that verifies the server but presents no certificate (for bearer
    /// tokens, or anonymous requests).
    pub fn agent_without_certificate(&self) -> ureq::Agent {
        https_agent(self.credentials.as_ref().map(|c| c.ca.as_str()), None)
    }

    /// The kubeconfig the server wrote.
    pub fn kubeconfig(&self) -> PathBuf {
        self.data_dir.join("kubeconfig")
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The backend the server runs on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The server's process id, while it runs (its memory is in `/proc/<pid>/status`).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server with SIGKILL (no shutdown of any kind) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a stopped or killed server again on the same data directory, backend
    /// and `args`, and waits until it is ready.
    pub fn restart(&mut self, args: &[&str]) {
        self.kill();
        let kubeconfig = self.data_dir.join("kubeconfig");
        let _ = std::fs::remove_file(&kubeconfig);
        self.child = Some(self.command(args).spawn().expect("starting kapi"));
        self.wait_ready(&kubeconfig);
    }

    /// Sends SIGTERM and waits (bounded) for a clean exit; returns whether it exited 0.
    pub fn stop(&mut self) -> bool {
        let Some(mut child) = self.child.take() else {
            return true;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    /// A `kubectl` (or `kubectl.1.NN` when `version` is given) command with this
    /// server's kubeconfig and its own `HOME`, stdin null and stdout and stderr piped,
    /// for callers that need more than [`Kapi::kubectl_version`] (environment variables
    /// such as `EDITOR`, or a background process read by [`LineReader`]).
    pub fn kubectl_command(&self, version: Option<&str>) -> Command {
        let program = match version {
            None => PathBuf::from("kubectl"),
            Some(v) => kubectl_dir().join(format!("kubectl.{v}")),
        };
        let mut cmd = Command::new(program);
        cmd.env("KUBECONFIG", self.kubeconfig())
            .env("HOME", self.data_dir.join("home"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs `kubectl` (or `kubectl.1.NN` when `version` is given) with this server's
    /// kubeconfig.
    pub fn kubectl_version(
        &self,
        version: Option<&str>,
        args: &[&str],
        stdin: Option<&str>,
    ) -> Output {
        let program = match version {
            None => "kubectl".to_string(),
            Some(v) => kubectl_dir()
                .join(format!("kubectl.{v}"))
                .display()
                .to_string(),
        };
        let mut cmd = Command::new(&program);
        cmd.args(args)
            .env("KUBECONFIG", self.kubeconfig())
            .env("HOME", self.data_dir.join("home"))
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("running {program}: {e}"));
        if let Some(input) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("piped")
                .write_all(input.as_bytes())
                .expect("writing kubectl's stdin");
        }
        wait_output_bounded(child, KUBECTL_TIMEOUT, &format!("{program} {args:?}"))
    }

    /// Starts the default `kubectl` with this server's kubeconfig in the background,
    /// stdout and stderr piped, for long-running commands such as `get -w`. The caller
    /// reads it and must kill it (see [`LineReader`]).
    pub fn kubectl_spawn(&self, args: &[&str]) -> Child {
        Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", self.kubeconfig())
            .env("HOME", self.data_dir.join("home"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("running kubectl {args:?}: {e}"))
    }

    /// Runs the default `kubectl`; panics with its output unless it succeeds, and
    /// returns its stdout.
    pub fn kubectl(&self, args: &[&str]) -> String {
        self.kubectl_ok(None, args, None)
    }

    /// Like [`Kapi::kubectl`], with a version and stdin.
    pub fn kubectl_ok(&self, version: Option<&str>, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.kubectl_version(version, args, stdin);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\nstdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// Runs `kubectl` expecting failure; returns its stderr.
    pub fn kubectl_err(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.kubectl_version(None, args, stdin);
        assert!(
            !out.status.success(),
            "kubectl {args:?} should have failed:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).to_string()
    }

    /// A raw HTTP request; returns the status code and the body as JSON (or a string).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let body = body.map(|b| serde_json::to_vec(b).expect("JSON"));
        let res = self.exchange(method, path, content_type, None, body.as_deref());
        let value = serde_json::from_str(&res.body).unwrap_or(Value::String(res.body));
        (res.code, value)
    }

    /// A request that must succeed (any 2xx); its answer.
    pub fn send_ok(&self, method: &str, path: &str, content_type: &str, body: &Value) -> Value {
        let (code, answer) = self.request(method, path, content_type, Some(body));
        assert!(
            (200..300).contains(&code),
            "{method} {path}: {code} {answer}"
        );
        answer
    }

    /// A GET that must answer 200; its body.
    pub fn get_ok(&self, path: &str) -> Value {
        let (code, body) = self.request("GET", path, "application/json", None);
        assert_eq!(code, 200, "GET {path}: {body}");
        body
    }

    /// The store's current revision: a list read from storage carries it as its
    /// `resourceVersion`, whatever the collection holds.
    pub fn revision(&self) -> i64 {
        let probe = "/apis/coordination.k8s.io/v1/namespaces/kube-public/leases";
        let (code, list) = self.request("GET", probe, "application/json", None);
        assert_eq!(code, 200, "{list}");
        list["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|rv| rv.parse().ok())
            .unwrap_or_else(|| panic!("a list has a resourceVersion: {list}"))
    }

    /// The store's revision once nothing writes any more (the built-in controllers and
    /// the StorageVersions finish their first passes shortly after the server is
    /// ready): unchanged for half a second, waited for at most 10 s.
    pub fn settle(&self) -> i64 {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = self.revision();
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = self.revision();
            if now == last || Instant::now() > deadline {
                return now;
            }
            last = now;
        }
    }

    /// The events of watch `path` (a path with `?watch=true…`), which the server ends
    /// after two seconds (`timeoutSeconds=2`).
    pub fn watch_events(&self, path: &str) -> Vec<Value> {
        use std::io::BufRead;
        let res = self
            .streaming_agent()
            .get(&format!("{}{path}&timeoutSeconds=2", self.url()))
            .call()
            .expect("the watch starts");
        std::io::BufReader::new(res.into_body().into_reader())
            .lines()
            .map_while(Result::ok)
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(&l).expect("JSON lines"))
            .collect()
    }

    /// `GET path` until `done` holds for the answer, at most `timeout` (then panics with
    /// `what` and the last answer); returns that answer.
    pub fn poll(
        &self,
        path: &str,
        timeout: Duration,
        what: &str,
        done: impl Fn(u16, &Value) -> bool,
    ) -> (u16, Value) {
        let deadline = Instant::now() + timeout;
        loop {
            let (code, body) = self.request("GET", path, "application/json", None);
            if done(code, &body) {
                return (code, body);
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not so after {timeout:?}; last answer {code}: {body}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Creates a CustomResourceDefinition through the API and waits (bounded) until it
    /// is Established; returns the CRD as it then is.
    pub fn establish(&self, crd: &Value) -> Value {
        let (code, body) = self.request("POST", CRDS, "application/json", Some(crd));
        assert_eq!(code, 201, "creating the CRD: {body}");
        self.wait_condition(crd_name(crd), "Established", "True")
    }

    /// Waits (bounded) until the named CRD's condition `type_` has `status`.
    pub fn wait_condition(&self, crd: &str, type_: &str, status: &str) -> Value {
        self.poll(
            &format!("{CRDS}/{crd}"),
            Duration::from_secs(30),
            &format!("{crd} {type_}={status}"),
            |_, body| condition(body, type_).is_some_and(|c| c["status"] == status),
        )
        .1
    }

    /// A raw HTTP request with an optional `Accept`; the answer as it came, bytes and
    /// warnings included.
    pub fn exchange(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        accept: Option<&str>,
        body: Option<&[u8]>,
    ) -> Exchange {
        self.exchange_as(
            &self.agent(),
            None,
            method,
            path,
            content_type,
            accept,
            body,
        )
    }

    /// `method path` with `body` as JSON, as `token`'s user over a connection without
    /// a client certificate: the status code and the body parsed as JSON (a string when
    /// it is not JSON).
    pub fn json_as(
        &self,
        token: &str,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let body = body.map(|b| serde_json::to_vec(b).expect("JSON"));
        let ex = self.exchange_as(
            &self.agent_without_certificate(),
            Some(token),
            method,
            path,
            "application/json",
            None,
            body.as_deref(),
        );
        let parsed = serde_json::from_str(&ex.body).unwrap_or(serde_json::Value::String(ex.body));
        (ex.code, parsed)
    }

    /// [`Kapi::exchange`] through `agent` (see [`Kapi::agent_without_certificate`],
    /// [`https_agent`]) with an optional bearer token.
    #[allow(clippy::too_many_arguments)]
    pub fn exchange_as(
        &self,
        agent: &ureq::Agent,
        token: Option<&str>,
        method: &str,
        path: &str,
        content_type: &str,
        accept: Option<&str>,
        body: Option<&[u8]>,
    ) -> Exchange {
        let url = format!("{}{path}", self.url);
        let mut builder = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(a) = accept {
            builder = builder.header("Accept", a);
        }
        if let Some(t) = token {
            builder = builder.header("Authorization", format!("Bearer {t}"));
        }
        let res = match body {
            Some(b) => agent.run(
                builder
                    .header("Content-Type", content_type)
                    .body(b.to_vec())
                    .expect("a request"),
            ),
            None => agent.run(builder.body(()).expect("a request")),
        }
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let code = res.status().as_u16();
        let warnings = res
            .headers()
            .get_all("warning")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect();
        let retry_after = res
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let header = |name: &str| {
            res.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let flow = (
            header("x-kubernetes-pf-flowschema-uid"),
            header("x-kubernetes-pf-prioritylevel-uid"),
        );
        let body = res.into_body().read_to_string().unwrap_or_default();
        Exchange {
            code,
            warnings,
            body,
            retry_after,
            flow,
        }
    }
}

/// A raw TLS connection to the server (see [`Kapi::raw_tls`]): `Read` and `Write` the
/// HTTP/1.1 bytes.
pub type RawTls = rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>;

/// Where CustomResourceDefinitions live.
pub const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn crd_name(crd: &Value) -> &str {
    crd["metadata"]["name"].as_str().expect("a CRD has a name")
}

/// The causes of a Status, as `field: message` (none when it has no details).
pub fn causes(status: &Value) -> Vec<String> {
    status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// The status condition of `type_` of an object, if any.
pub fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// An HTTP answer as it came: status code, `Warning` headers and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The status code.
    pub code: u16,
    /// Every `Warning` header, in order.
    pub warnings: Vec<String>,
    /// The body, as text.
    pub body: String,
    /// The `Retry-After` header, if any.
    pub retry_after: Option<String>,
    /// The `X-Kubernetes-PF-FlowSchema-UID` and `-PriorityLevel-UID` headers: the
    /// FlowSchema and priority level API priority and fairness gave the request.
    pub flow: (Option<String>, Option<String>),
}

impl Drop for Kapi {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The resident memory of process `pid` in bytes, from `/proc/<pid>/status`.
pub fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmRSS in /proc/<pid>/status")
        * 1024
}

/// How long one kubectl (or other client process) may run before the test gives up.
pub const KUBECTL_TIMEOUT: Duration = Duration::from_secs(60);

/// Waits for `child` (whose stdout and stderr are piped, and whose stdin is closed or
/// null) for at most `timeout`, reading its output meanwhile; kills it and panics with
/// what it printed if it runs longer. `what` names the process in the panic message.
pub fn wait_output_bounded(mut child: Child, timeout: Duration, what: &str) -> Output {
    use std::io::Read;
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    }
    drop(child.stdin.take());
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for a child process") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} did not finish within {timeout:?}:\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.join().unwrap_or_default()),
                String::from_utf8_lossy(&err.join().unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// The lines a background process prints, collected by a thread so that a test can wait
/// for a line with a deadline. Dropping it kills the process.
pub struct LineReader {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl LineReader {
    /// Takes over `child` (its stdout piped) and starts reading its stdout.
    pub fn new(child: Child) -> Self {
        Self::reading(child, false)
    }

    /// Like [`LineReader::new`], reading stderr too (into the same lines), for example
    /// to see kubectl's `-v=6` request log.
    pub fn with_stderr(child: Child) -> Self {
        Self::reading(child, true)
    }

    fn reading(mut child: Child, stderr: bool) -> Self {
        fn forward(pipe: impl std::io::Read + Send + 'static, tx: std::sync::mpsc::Sender<String>) {
            use std::io::BufRead;
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let (tx, rx) = std::sync::mpsc::channel();
        forward(child.stdout.take().expect("stdout is piped"), tx.clone());
        if stderr {
            forward(child.stderr.take().expect("stderr is piped"), tx);
        }
        Self {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Waits (at most `timeout`) for the process to exit and returns its status; kills
    /// it and panics otherwise.
    pub fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("waiting for a child process") {
                return status;
            }
            if Instant::now() >= deadline {
                let _ = self.stop();
                panic!(
                    "the process did not exit within {timeout:?}; lines so far:\n{}",
                    self.seen.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (at most `timeout`) for a line satisfying `matches`, and returns it; panics
    /// with every line seen so far otherwise.
    pub fn wait_for(&mut self, timeout: Duration, matches: impl Fn(&str) -> bool) -> String {
        if let Some(line) = self.seen.iter().find(|l| matches(l)) {
            return line.clone();
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                Err(_) => {
                    let stderr = self.stop();
                    panic!(
                        "no matching line within {timeout:?}; lines so far:\n{}\nstderr:\n{stderr}",
                        self.seen.join("\n")
                    );
                }
            }
        }
    }

    /// Every line read so far.
    pub fn lines(&self) -> &[String] {
        &self.seen
    }

    /// Kills the process and returns its stderr.
    pub fn stop(&mut self) -> String {
        use std::io::Read;
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        err
    }
}

impl Drop for LineReader {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `scenario` against a fresh server on each backend in turn; when it panics,
/// prints which backend and the server's log, then re-raises the panic.
pub fn on_every_backend(scenario: impl Fn(&Kapi)) {
    for (name, backend) in Backend::all() {
        let kapi = Kapi::start(backend());
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scenario(&kapi)));
        if let Err(e) = run {
            eprintln!("backend {name} failed; server log:\n{}", kapi.log_text());
            std::panic::resume_unwind(e);
        }
    }
}

/// The kubectl releases installed beside the default one, as `kubectl.1.NN`, that the
/// cross-release suites run (`kubectl_builtins.rs` checks the list is what is
/// installed).
pub const KUBECTL_RELEASES: [&str; 7] = ["1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33"];

/// The folder the default kubectl lives in, where `kubectl.1.NN` sit beside it.
pub fn kubectl_dir() -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", "readlink -f \"$(command -v kubectl)\""])
        .output()
        .expect("kubectl must be installed");
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    path.parent()
        .expect("kubectl lives in a folder")
        .to_path_buf()
}

/// The kubectl releases installed side by side (`1.27` ... `1.33`).
pub fn kubectl_versions() -> Vec<String> {
    let mut versions: Vec<String> = std::fs::read_dir(kubectl_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_prefix("kubectl."))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    versions.sort_by_key(|v| {
        v.split('.')
            .map(|p| p.parse::<u32>().unwrap_or(0))
            .collect::<Vec<_>>()
    });
    versions
}
