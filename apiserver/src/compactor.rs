//! Compaction on a schedule, for every backend alike (kube-apiserver's
//! `--etcd-compaction-interval`): each tick compacts the history up to the revision seen
//! at the previous tick, so at least one interval of history stays for watches to
//! resume from, and older resourceVersions answer 410 Gone.

use std::sync::Arc;
use std::time::Duration;

use kapi_storage::Storage;
use tokio::sync::watch;

/// Runs until `shutdown` turns true.
pub async fn run(
    storage: Arc<dyn Storage>,
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut previous = None;
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = crate::shutdown::stopped(&mut shutdown) => return,
            _ = tick.tick() => {}
        }
        let current = match storage.current_revision().await {
            Ok(rev) => rev,
            Err(e) => {
                tracing::warn!(error = %e, "compactor: reading the current revision");
                continue;
            }
        };
        if let Some(rev) = previous.filter(|r| *r > 0) {
            match storage.compact(rev).await {
                Ok(()) => tracing::debug!(revision = rev, "compacted"),
                Err(e) => tracing::warn!(revision = rev, error = %e, "compactor"),
            }
        }
        previous = Some(current);
    }
}
