//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection
//! package does it for kube-controller-manager: work that must happen once in a
//! cluster of replicas (the controllers, compaction) runs only in the replica that
//! holds the Lease.
//!
//! - A candidate takes the Lease when no one holds it, or when its record has not
//!   changed for a whole lease duration *as this replica observed it* (local monotonic
//!   time, so clocks that disagree between machines do not matter). Every write is a
//!   compare-and-swap on the Lease's resourceVersion, so two candidates cannot both win.
//! - The leader renews every retry period. When it has not renewed for the renew
//!   deadline (shorter than the lease duration), it stops its work before anyone else
//!   may take the Lease, so the work never runs in two replicas at once.
//! - A leader that shuts down gives the Lease up (an empty holder), so the next one
//!   takes over at once instead of after a lease duration.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use kapi_storage::ReadAt;

use kapi_apiserver::registry::{Registry, Store, Subresource, WriteOptions};
use kapi_apiserver::status::ApiError;

/// The namespace of the Lease (kube-controller-manager's is there too).
pub const NAMESPACE: &str = "kube-system";
/// The Lease's name.
pub const LEASE_NAME: &str = "kapi-controllers";

/// The timings, with kube-controller-manager's defaults.
#[derive(Clone, Copy, Debug)]
pub struct Timings {
    /// How long a Lease whose record does not change stays held.
    pub lease_duration: Duration,
    /// How long the leader keeps leading without a successful renewal.
    pub renew_deadline: Duration,
    /// How often the leader renews, and candidates try.
    pub retry_period: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl Timings {
    /// Checks kube's constraints: the renew deadline under the lease duration, the
    /// retry period under the renew deadline.
    pub fn check(&self) -> Result<(), String> {
        if self.renew_deadline >= self.lease_duration {
            return Err(
                "--leader-elect-renew-deadline must be less than --leader-elect-lease-duration"
                    .into(),
            );
        }
        if self.retry_period >= self.renew_deadline || self.retry_period.is_zero() {
            return Err("--leader-elect-retry-period must be positive and less than --leader-elect-renew-deadline".into());
        }
        Ok(())
    }
}

/// Runs `work` whenever this replica leads (`leader_election_master_status` is 1 in
/// `/metrics` then), until `shutdown` turns true. `work` gets a
/// receiver that turns true when leadership ends; it must return promptly then.
pub async fn run<W, F>(
    registry: Arc<Registry>,
    identity: String,
    timings: Timings,
    mut shutdown: watch::Receiver<bool>,
    work: W,
) where
    W: Fn(watch::Receiver<bool>) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let Some(leases) = registry.get("coordination.k8s.io", "v1", "leases") else {
        tracing::warn!("no Lease resource: leader election cannot run; the controllers run here");
        work(shutdown).await;
        return;
    };
    let mut elector = Elector {
        leases,
        identity,
        timings,
        observed: None,
    };
    loop {
        // Candidate: try every retry period until the Lease is ours.
        loop {
            if *shutdown.borrow() {
                return;
            }
            match elector.try_acquire_or_renew().await {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => tracing::debug!(error = %e, "leader election: trying the Lease"),
            }
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                () = tokio::time::sleep(jittered(timings.retry_period)) => {}
            }
        }
        tracing::info!(identity = %elector.identity, "leader election: started leading");
        kapi_apiserver::metrics::Metrics::global().leader.set(1);
        let (stop_tx, stop_rx) = watch::channel(false);
        let task = tokio::spawn(work(stop_rx));
        let mut last_renewal = Instant::now();
        let shutting_down = loop {
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => break true,
                () = tokio::time::sleep(timings.retry_period) => {}
            }
            // A renewal that hangs must not outlive the deadline.
            let left = timings
                .renew_deadline
                .saturating_sub(last_renewal.elapsed());
            match tokio::time::timeout(left, elector.try_acquire_or_renew()).await {
                Ok(Ok(true)) => last_renewal = Instant::now(),
                Ok(Ok(false)) => {
                    tracing::warn!("leader election: another replica holds the Lease");
                    break false;
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "leader election: renewing the Lease"),
                Err(_) => {}
            }
            if last_renewal.elapsed() >= timings.renew_deadline {
                tracing::warn!("leader election: no renewal within the renew deadline");
                break false;
            }
        };
        // The work stops before the Lease can pass to anyone else.
        kapi_apiserver::metrics::Metrics::global().leader.set(0);
        let _ = stop_tx.send(true);
        if tokio::time::timeout(timings.retry_period, task)
            .await
            .is_err()
        {
            tracing::warn!("leader election: the work did not stop in time");
        }
        tracing::info!(identity = %elector.identity, "leader election: stopped leading");
        if shutting_down {
            elector.release().await;
            return;
        }
    }
}

struct Elector {
    leases: Arc<Store>,
    identity: String,
    timings: Timings,
    /// The Lease's spec as last seen, and when this replica saw it change.
    observed: Option<(Value, Instant)>,
}

impl Elector {
    /// Takes or renews the Lease: `Ok(true)` when this replica holds it afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, ApiError> {
        let now = micro_time();
        let current = match self
            .leases
            .get(Some(NAMESPACE), LEASE_NAME, ReadAt::Latest)
            .await
        {
            Ok(lease) => lease,
            Err(e) if e.reason == "NotFound" => {
                let lease = json!({
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": LEASE_NAME, "namespace": NAMESPACE},
                    "spec": self.spec(&now, &now, 0),
                });
                return match self
                    .leases
                    .create(
                        Some(NAMESPACE),
                        lease,
                        &WriteOptions::by(crate::APISERVER_MANAGER),
                    )
                    .await
                {
                    Ok((created, _)) => {
                        self.observe(&created["spec"]);
                        Ok(true)
                    }
                    Err(e) if e.reason == "AlreadyExists" => Ok(false),
                    Err(e) => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        let spec = &current["spec"];
        self.observe(spec);
        let holder = spec["holderIdentity"].as_str().unwrap_or_default();
        let ours = holder == self.identity;
        let expired = self
            .observed
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed() >= self.timings.lease_duration);
        if !holder.is_empty() && !ours && !expired {
            return Ok(false);
        }
        let transitions = spec["leaseTransitions"].as_i64().unwrap_or(0);
        let (acquired, transitions) = if ours {
            (
                spec["acquireTime"].as_str().unwrap_or(&now).to_string(),
                transitions,
            )
        } else {
            (now.clone(), transitions + 1)
        };
        let mut next = current.clone();
        next["spec"] = self.spec(&acquired, &now, transitions);
        // The resourceVersion read is the compare-and-swap's expectation: a write by
        // anyone else since then makes this one a 409.
        match self
            .leases
            .update(
                Some(NAMESPACE),
                LEASE_NAME,
                next,
                Subresource::Main,
                &WriteOptions::by(crate::APISERVER_MANAGER),
            )
            .await
        {
            Ok((written, _)) => {
                self.observe(&written["spec"]);
                Ok(true)
            }
            Err(e) if e.reason == "Conflict" => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Notes the record as seen; its observation time moves only when it changed.
    fn observe(&mut self, spec: &Value) {
        match &self.observed {
            Some((seen, _)) if seen == spec => {}
            _ => self.observed = Some((spec.clone(), Instant::now())),
        }
    }

    fn spec(&self, acquired: &str, renewed: &str, transitions: i64) -> Value {
        json!({
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.timings.lease_duration.as_secs().max(1),
            "acquireTime": acquired,
            "renewTime": renewed,
            "leaseTransitions": transitions,
        })
    }

    /// Gives the Lease up, so that another replica need not wait a lease duration.
    async fn release(&mut self) {
        let Ok(mut lease) = self
            .leases
            .get(Some(NAMESPACE), LEASE_NAME, ReadAt::Latest)
            .await
        else {
            return;
        };
        if lease["spec"]["holderIdentity"] != self.identity.as_str() {
            return;
        }
        lease["spec"]["holderIdentity"] = json!("");
        lease["spec"]["leaseDurationSeconds"] = json!(1);
        lease["spec"]["renewTime"] = json!(micro_time());
        let released = self
            .leases
            .update(
                Some(NAMESPACE),
                LEASE_NAME,
                lease,
                Subresource::Main,
                &WriteOptions::by(crate::APISERVER_MANAGER),
            )
            .await;
        if let Err(e) = released {
            tracing::debug!(error = %e, "leader election: releasing the Lease");
        }
    }
}

/// A `MicroTime`: RFC 3339 with microseconds, as Leases carry.
pub(crate) fn micro_time() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// The retry period with up to 20% added, so candidates do not move in lockstep.
fn jittered(period: Duration) -> Duration {
    let jitter = uuid::Uuid::new_v4().as_bytes()[0] as u32 % 21;
    period + period * jitter / 100
}

/// This replica's identity: the host name and a unique suffix, as client-go's
/// `hostname_uuid`.
pub fn identity() -> String {
    format!("{}_{}", hostname(), uuid::Uuid::new_v4())
}

/// This machine's host name (`kapi` when it cannot be read).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "kapi".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_constraints_on_timings() {
        assert!(Timings::default().check().is_ok());
        let bad = Timings {
            renew_deadline: Duration::from_secs(15),
            ..Timings::default()
        };
        assert!(bad.check().is_err());
        let bad = Timings {
            retry_period: Duration::from_secs(10),
            ..Timings::default()
        };
        assert!(bad.check().is_err());
    }

    #[test]
    fn micro_time_has_microseconds() {
        let t = micro_time();
        assert_eq!(t.len(), "2026-01-02T03:04:05.123456Z".len(), "{t}");
        assert!(t.ends_with('Z'));
    }
}
