//! Time-to-live: granting the etcd lease a TTL write attaches to its key, and revoking
//! one its write did not use.

use std::time::Duration;

use tokio::time::Instant;

use super::EtcdStorage;
use super::error::{Kind, kind, map};
use crate::interface::Result;

impl EtcdStorage {
    /// Grants a lease of `ttl`, in whole seconds rounded up (at least one), retried like
    /// a read: a lease granted twice only leaves one unused, and it expires.
    pub(super) async fn grant_lease(&self, ttl: Duration) -> Result<i64> {
        self.kv()?;
        let seconds = lease_seconds(ttl);
        let deadline = Instant::now() + self.shared.config.request_timeout;
        let mut backoff = self.shared.config.initial_backoff;
        loop {
            let mut client = self.shared.client.lease_client();
            match client.grant(seconds, None).await {
                Err(error)
                    if matches!(kind(&error), Kind::NotSent | Kind::Unavailable)
                        && Instant::now() + backoff < deadline =>
                {
                    tracing::debug!(%error, "granting an etcd lease failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(self.shared.config.max_backoff);
                }
                result => return result.map(|granted| granted.id()).map_err(map),
            }
        }
    }

    /// Revokes a lease that no key uses (its write's compare failed). Best effort:
    /// unrevoked, it expires on its own. Never after a write that may have been applied
    /// (its answer lost): revoking deletes the keys attached.
    pub(super) async fn revoke_unused(&self, lease: i64) {
        let mut client = self.shared.client.lease_client();
        if let Err(error) = client.revoke(lease).await {
            tracing::debug!(%error, lease, "revoking an unused etcd lease failed");
        }
    }
}

/// A TTL in etcd's unit, whole seconds: rounded up (a key never expires early), at
/// least one.
fn lease_seconds(ttl: Duration) -> i64 {
    let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    i64::try_from(seconds.max(1)).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::lease_seconds;

    #[test]
    fn lease_ttls_round_up_to_whole_seconds() {
        assert_eq!(lease_seconds(Duration::ZERO), 1);
        assert_eq!(lease_seconds(Duration::from_millis(1)), 1);
        assert_eq!(lease_seconds(Duration::from_secs(1)), 1);
        assert_eq!(lease_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(lease_seconds(Duration::from_secs(3600)), 3600);
    }
}
