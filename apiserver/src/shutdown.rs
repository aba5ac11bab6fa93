//! How background loops (controllers, the compactor, informers, leader election) learn
//! that the server is stopping.

use tokio::sync::watch;

/// Completes when the server shuts down (`shutdown` turns true or its sender goes).
pub async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|down| *down).await;
}
