//! # kapi-test-server
//!
//! An API server for the tests of Rust controllers, started in this process: the
//! envtest alternative. envtest downloads a kube-apiserver and an etcd and starts
//! them as processes (seconds); a [`TestServer`] is kapi in the test's own tokio
//! runtime, on a free loopback port, over a temporary embedded store, ready in tens of
//! milliseconds (BENCHMARKS.md), with nothing to download.
//!
//! ```no_run
//! # async fn test() -> Result<(), kapi_test_server::Error> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//!
//! let server = kapi_test_server::TestServer::start().await?;
//! let configmaps: Api<ConfigMap> = Api::default_namespaced(server.client());
//! // ... run the controller against server.client(), then check what it wrote ...
//! server.stop().await
//! # }
//! ```
//!
//! [`TestServer::builder`] picks the built-ins ([`Builder::builtins`]), adds kinds of
//! one's own compiled with `kapi-codegen` ([`Builder::resources`]), installs CRDs from
//! YAML files or `kube::CustomResourceExt` types (waiting for each to be Established),
//! and with the `etcd` feature runs over an etcd cluster ([`Builder::etcd`]).
//! [`TestServer::wait_for`] waits for a condition on an object, as controller tests
//! need.
//!
//! It owns no request handling and no resource's rules: it starts `kapi`'s server
//! with a test's choices and hands out clients.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kapi::server::{Running, ServeConfig, start};
use kapi_apiserver::registry::Resources;
use kapi_core::{Only, Registrar, ResourceInfo};
use kube::api::PostParams;
use kube::{Api, Client, CustomResourceExt, Resource};

/// Why a test server could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server did not start.
    #[error("starting kapi: {0}")]
    Start(#[from] kapi::server::ServeError),
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The server refused a request, or a client could not be made.
    #[error("{0}")]
    Kube(#[from] kube::Error),
    /// The client's configuration could not be made from the kubeconfig.
    #[error("the kubeconfig: {0}")]
    Config(String),
    /// A condition did not hold in time.
    #[error("{0}")]
    Timeout(String),
}

/// Where CustomResourceDefinitions are created.
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// One's own resources' registration.
type Register = Box<dyn Fn(&mut dyn Registrar) + Send>;

/// Which built-ins a server keeps.
type Keep = Arc<dyn Fn(&ResourceInfo) -> bool + Send + Sync>;

/// How a [`TestServer`] is started.
pub struct Builder {
    builtins: Option<Keep>,
    own: Vec<Register>,
    crd_files: Vec<PathBuf>,
    crds: Vec<CustomResourceDefinition>,
    etcd: Vec<String>,
    timeout: Duration,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            builtins: None,
            own: Vec::new(),
            crd_files: Vec::new(),
            crds: Vec::new(),
            etcd: Vec::new(),
            timeout: Duration::from_secs(30),
        }
    }
}

impl Builder {
    /// Serves only the built-ins `keep` accepts (every one by default). A server needs
    /// Namespaces for namespaced kinds and the RBAC kinds for its RBAC authorization;
    /// `start` says so when they are left out.
    pub fn builtins(
        mut self,
        keep: impl Fn(&ResourceInfo) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.builtins = Some(Arc::new(keep));
        self
    }

    /// Also serves what `register` registers: the `register` function `kapi-codegen`
    /// generates for one's own schemas.
    pub fn resources(mut self, register: impl Fn(&mut dyn Registrar) + Send + 'static) -> Self {
        self.own.push(Box::new(register));
        self
    }

    /// Installs the CustomResourceDefinitions of a YAML file (one document or several)
    /// once started, and waits until they are Established.
    pub fn crd_file(mut self, path: impl AsRef<Path>) -> Self {
        self.crd_files.push(path.as_ref().to_path_buf());
        self
    }

    /// Installs the CustomResourceDefinition of `K` (a `#[derive(CustomResource)]`
    /// type) once started, and waits until it is Established.
    pub fn crd<K: CustomResourceExt>(mut self) -> Self {
        self.crds.push(K::crd());
        self
    }

    /// Runs over the etcd cluster at `endpoints` instead of a temporary embedded store.
    #[cfg(feature = "etcd")]
    pub fn etcd(mut self, endpoints: &[&str]) -> Self {
        self.etcd = endpoints.iter().map(|e| e.to_string()).collect();
        self
    }

    /// How long [`TestServer::wait_for`] and CRD installation wait (30 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Starts the server, installs the CRDs, and returns once all are served.
    pub async fn start(self) -> Result<TestServer, Error> {
        let dir = tempfile::Builder::new()
            .prefix("kapi-test-server-")
            .tempdir()
            .map_err(|source| Error::Io {
                path: std::env::temp_dir(),
                source,
            })?;
        let mut resources = Resources::new();
        match &self.builtins {
            Some(keep) => {
                kapi_kube::generated::register(&mut Only::new(&mut resources, |r| keep(r)))
            }
            None => kapi_kube::generated::register(&mut resources),
        }
        for register in &self.own {
            register(&mut resources);
        }
        let config = ServeConfig {
            listen: "127.0.0.1:0".parse().expect("a loopback address"),
            data_dir: dir.path().to_path_buf(),
            etcd_servers: self.etcd.clone(),
            // Tests make their own stores; a compaction would only race them.
            compaction_interval: None,
            ..ServeConfig::default()
        };
        let running = start(config, resources).await?;
        let client = client(&running.ready().kubeconfig).await?;
        let server = TestServer {
            running: Some(running),
            client,
            timeout: self.timeout,
            _dir: dir,
        };
        for crd in self.crds {
            server.install(crd).await?;
        }
        for path in &self.crd_files {
            for document in documents(path)? {
                server.install_yaml(&document).await?;
            }
        }
        Ok(server)
    }
}

/// A kube-rs client as the server's admin (its kubeconfig), in namespace `default`.
async fn client(kubeconfig: &Path) -> Result<Client, Error> {
    let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig)
        .map_err(|e| Error::Config(e.to_string()))?;
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|e| Error::Config(e.to_string()))?;
    config.default_namespace = "default".into();
    Ok(Client::try_from(config)?)
}

/// The YAML documents of a file, each sent as it is: the API server reads YAML.
fn documents(path: &Path) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(split_documents(&text))
}

/// Splits a YAML stream at its document markers: a line that is `---` or `...`, alone
/// or followed by a space (YAML forbids such a line inside any content, so a block
/// scalar holding `----` or an indented `---` stays whole). Documents with nothing but
/// comments are left out.
fn split_documents(text: &str) -> Vec<String> {
    let marker = |line: &str, m: &str| {
        line.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    };
    let mut docs = vec![String::new()];
    for line in text.lines() {
        if marker(line, "---") || marker(line, "...") {
            docs.push(String::new());
            // `--- {a: 1}`: the document starts on the marker's line.
            let rest = line[3..].trim();
            if !rest.is_empty() && !rest.starts_with('#') && line.starts_with("---") {
                docs.last_mut()
                    .expect("one document")
                    .push_str(&format!("{rest}\n"));
            }
            continue;
        }
        let doc = docs.last_mut().expect("one document");
        doc.push_str(line);
        doc.push('\n');
    }
    docs.into_iter()
        .filter(|d| {
            d.lines()
                .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        })
        .collect()
}

/// A kapi serving in this process, for one test; stopped by [`TestServer::stop`] or
/// when dropped.
pub struct TestServer {
    running: Option<Running>,
    client: Client,
    timeout: Duration,
    _dir: tempfile::TempDir,
}

impl TestServer {
    /// Every built-in, on a temporary embedded store.
    pub async fn start() -> Result<Self, Error> {
        Builder::default().start().await
    }

    /// A server of one's choosing.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A kube-rs client as the cluster's admin, in namespace `default`.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// Where the server answers, and its admin kubeconfig (for kubectl, or a client of
    /// another kind).
    pub fn ready(&self) -> &kapi::server::Ready {
        self.running
            .as_ref()
            .expect("a TestServer runs until stopped")
            .ready()
    }

    /// Creates `crd` and waits until it is Established.
    pub async fn install(&self, crd: CustomResourceDefinition) -> Result<(), Error> {
        let crds: Api<CustomResourceDefinition> = Api::all(self.client());
        let made = crds.create(&PostParams::default(), &crd).await?;
        self.established(&made).await
    }

    /// Creates the CustomResourceDefinition written in YAML `document` and waits until
    /// it is Established; the server reads the YAML, and refuses it in kube's words.
    pub async fn install_yaml(&self, document: &str) -> Result<(), Error> {
        let request = http::Request::post(CRDS)
            .header(http::header::CONTENT_TYPE, "application/yaml")
            .body(document.as_bytes().to_vec())
            .map_err(|e| Error::Config(e.to_string()))?;
        let made: CustomResourceDefinition = self.client.request(request).await?;
        self.established(&made).await
    }

    async fn established(&self, crd: &CustomResourceDefinition) -> Result<(), Error> {
        let crds: Api<CustomResourceDefinition> = Api::all(self.client());
        let name = crd.metadata.name.clone().unwrap_or_default();
        let established = kube::runtime::conditions::is_crd_established();
        self.wait_for(&crds, &name, established).await
    }

    /// Waits until the object `name` of `api` exists and `condition` holds for it
    /// (`kube::runtime::conditions`, or any closure), up to the builder's timeout.
    pub async fn wait_for<K>(
        &self,
        api: &Api<K>,
        name: &str,
        condition: impl kube::runtime::wait::Condition<K>,
    ) -> Result<(), Error>
    where
        K: Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
    {
        let wait = kube::runtime::wait::await_condition(api.clone(), name, condition);
        match tokio::time::timeout(self.timeout, wait).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(Error::Timeout(format!("waiting for {name}: {e}"))),
            Err(_) => Err(Error::Timeout(format!(
                "{name}: the condition did not hold within {:?}",
                self.timeout
            ))),
        }
    }

    /// Shuts the server down cleanly (watches closed, the store closed) and waits.
    pub async fn stop(mut self) -> Result<(), Error> {
        match self.running.take() {
            Some(running) => Ok(running.stop().await?),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_documents;

    #[test]
    fn documents_split_at_markers_only() {
        let text = "# a comment\n---\napiVersion: v1\nkind: A\ndata:\n  text: |\n    ---\n    ----\n---x: 1\n--- # second\nkind: B\n...\n---\n# only a comment\n--- {kind: C}\n";
        assert_eq!(
            split_documents(text),
            [
                "apiVersion: v1\nkind: A\ndata:\n  text: |\n    ---\n    ----\n---x: 1\n",
                "kind: B\n",
                "{kind: C}\n",
            ]
        );
    }
}
