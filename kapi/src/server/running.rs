//! A server started in this process and handed back: where it answers once it is
//! ready, and a way to stop it — what a control plane embedding kapi, or a test
//! starting one, holds.

use std::net::SocketAddr;
use std::path::PathBuf;

use kapi_apiserver::registry::Resources;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::{ServeConfig, ServeError};

/// Where a started server answers: what it logged as `kapi is ready`.
#[derive(Clone, Debug)]
pub struct Ready {
    /// Its URL (`https://127.0.0.1:6443`).
    pub url: String,
    /// The address it listens on (the port the system chose for port 0).
    pub address: SocketAddr,
    /// The admin kubeconfig it wrote.
    pub kubeconfig: PathBuf,
}

/// A server running in this process's tokio runtime; [`Running::stop`] shuts it down
/// cleanly, and dropping it asks for the same without waiting.
#[derive(Debug)]
pub struct Running {
    ready: Ready,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), ServeError>>>,
}

impl Running {
    /// Where it answers.
    pub fn ready(&self) -> &Ready {
        &self.ready
    }

    /// Shuts it down as a signal would (in-flight requests end, watches close, the
    /// store is closed) and waits for that.
    pub async fn stop(mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => task.await.unwrap_or(Ok(())),
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Starts serving `resources` as [`super::serve`] does, on the current tokio runtime,
/// and returns once the server answers (its kubeconfig written), or with why it could
/// not start.
///
/// ```no_run
/// # async fn run() -> Result<(), kapi::server::ServeError> {
/// use kapi::server::{ServeConfig, start};
/// use kapi_apiserver::registry::Resources;
///
/// let mut resources = Resources::new();
/// kapi_kube::generated::register(&mut resources);
/// let dir = std::env::temp_dir().join("my-control-plane");
/// let server = start(
///     ServeConfig {
///         listen: "127.0.0.1:0".parse().unwrap(),
///         data_dir: dir,
///         ..ServeConfig::default()
///     },
///     resources,
/// )
/// .await?;
/// println!("serving at {}", server.ready().url);
/// server.stop().await
/// # }
/// ```
pub async fn start(config: ServeConfig, resources: Resources) -> Result<Running, ServeError> {
    let (ready_tx, ready_rx) = oneshot::channel();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let task = tokio::spawn(super::run(
        config,
        resources,
        async {
            let _ = stop_rx.await;
        },
        Some(ready_tx),
    ));
    match ready_rx.await {
        Ok(ready) => Ok(Running {
            ready,
            stop: Some(stop_tx),
            task: Some(task),
        }),
        // It ended before it was ready: why.
        Err(_) => match task.await {
            Ok(Err(e)) => Err(e),
            Ok(Ok(())) => Err(ServeError::Config(
                "the server stopped before it was ready".into(),
            )),
            Err(e) => Err(ServeError::Config(format!("the server failed: {e}"))),
        },
    }
}
