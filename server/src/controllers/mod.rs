//! Controllers built into the server that make delete semantics real: in
//! kube-apiserver's world they live in kube-controller-manager, so a lone apiserver
//! silently ignores finalizers they own.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::registry::Registry;

/// Starts every built-in controller; they stop when `shutdown` turns true or the
/// handle is aborted.
pub fn start(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let _ = registry;
        let _ = shutdown.wait_for(|down| *down).await;
    })
}
