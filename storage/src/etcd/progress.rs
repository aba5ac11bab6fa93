//! Whether an etcd answers progress requests in order with its watch events, which is
//! what lets the watch cache serve consistent reads from memory.
//!
//! etcd before the fix of etcd-io/etcd#15220 sent a requested progress notification
//! straight away, where it could overtake events still queued for the same stream: a
//! cache trusting it would serve a read missing those events. The fix reached 3.4.25
//! and 3.5.8; a later one (#17507, a new watch that sees no event never answering) is
//! in 3.4.31 and 3.5.13, the releases kube-apiserver requires before it serves
//! consistent lists from its cache. kapi requires the same.

use etcd_client::Client;

/// Asks the cluster (the member the client reaches) for its version and says whether
/// that release orders requested progress notifications. An etcd that cannot say is
/// taken not to.
pub(super) async fn detect(client: &Client) -> bool {
    let mut maintenance = client.maintenance_client();
    match maintenance.status().await {
        Ok(status) => {
            let ordered = orders_progress(status.version());
            tracing::debug!(
                version = status.version(),
                ordered,
                "etcd progress notifications {}",
                if ordered {
                    "are ordered"
                } else {
                    "may overtake events"
                }
            );
            ordered
        }
        Err(error) => {
            tracing::debug!(%error, "etcd did not say its version");
            false
        }
    }
}

/// Whether etcd `version` (`3.5.13`, `3.6.0-rc.1`) has both fixes.
pub(super) fn orders_progress(version: &str) -> bool {
    let mut parts = version
        .split(['.', '-', '+'])
        .map(|part| part.parse::<u64>().ok());
    let (Some(Some(major)), Some(Some(minor)), Some(Some(patch))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    match (major, minor) {
        (3, 4) => patch >= 31,
        (3, 5) => patch >= 13,
        (3, minor) => minor >= 6,
        (major, _) => major > 3,
    }
}

#[cfg(test)]
mod tests {
    use super::orders_progress;

    #[test]
    fn releases_with_both_fixes_order_progress() {
        for version in [
            "3.4.31",
            "3.4.34",
            "3.5.13",
            "3.5.21",
            "3.6.0",
            "3.6.0-rc.1",
            "4.0.0",
        ] {
            assert!(orders_progress(version), "{version}");
        }
        for version in [
            "3.4.23", "3.4.30", "3.5.0", "3.5.12", "3.3.27", "2.3.8", "", "v3",
        ] {
            assert!(!orders_progress(version), "{version}");
        }
    }
}
