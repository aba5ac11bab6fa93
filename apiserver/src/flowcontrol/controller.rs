//! The controller: the current configuration, each priority level's share of the
//! server's concurrency, and the levels' admission state, replaced live when the
//! FlowSchemas or PriorityLevelConfigurations change. Follows kube's
//! `k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go` (`digestConfigObjects`,
//! `finishQueueSetReconfigsLocked`, `startRequest`) and `apf_filter.go`
//! (`getRequestWaitContext`).
//!
//! A level's nominal limit is kube 1.35's `ceil(serverCL * NCS / sum(NCS))`, the sum
//! over every level, exempt ones included (kube counts an exempt level's
//! `nominalConcurrencyShares` since 1.29; the bootstrap exempt level has 0, so the sum
//! is that of the Limited levels). Its lendable and borrowing seats are
//! `round(limit * percent / 100)` (borrowing: the server's limit when
//! `borrowingLimitPercent` is unset), reported for metrics only.
//!
//! Differences from kube:
//! - no borrowing: a level runs at its nominal limit (see [`super::queueset`]);
//! - a level removed from the configuration is dropped at once: requests holding or
//!   waiting for its seats keep its state alive and drain at its old limit, where kube
//!   keeps it configured (and counted in the share sum) until it is idle;
//! - a request arriving for a level just removed is admitted by `catch-all`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::classify::{Classification, RequestAttributes};
use super::config::{CATCH_ALL, Config, LevelKind, PriorityLevel};
use super::queueset::{Clock, LevelSettings, LevelState, LevelStats, Queuing, Rejection, Seat};
use super::shuffle::FlowKey;

/// The longest a request waits in a queue, whatever its deadline (kube's hard limit).
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// A level's seats as computed from the configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelLimits {
    /// The nominal concurrency limit.
    pub nominal: usize,
    /// Seats other levels may borrow.
    pub lendable: usize,
    /// Seats it may borrow.
    pub borrowing: usize,
}

impl LevelLimits {
    /// The least it may be left with (`nominal - lendable`).
    pub fn min(&self) -> usize {
        self.nominal - self.lendable
    }

    /// The most it may reach (`nominal + borrowing`).
    pub fn max(&self) -> usize {
        self.nominal + self.borrowing
    }
}

/// Each level's limits, from the server's total concurrency (kube's
/// `--max-requests-inflight` plus `--max-mutating-requests-inflight`).
pub fn concurrency_limits<'a>(
    levels: impl IntoIterator<Item = &'a PriorityLevel>,
    server_limit: usize,
) -> BTreeMap<String, LevelLimits> {
    let levels: Vec<&PriorityLevel> = levels.into_iter().collect();
    let share_sum: f64 = levels.iter().map(|l| f64::from(l.shares)).sum();
    let percent_of =
        |limit: usize, percent: u32| (limit as f64 * f64::from(percent) / 100.0).round() as usize;
    levels
        .into_iter()
        .map(|level| {
            let nominal = if share_sum > 0.0 {
                (server_limit as f64 * f64::from(level.shares) / share_sum).ceil() as usize
            } else {
                0
            };
            let borrowing = match level.kind {
                LevelKind::Limited {
                    borrowing_limit_percent: Some(p),
                    ..
                } => percent_of(nominal, p),
                _ => server_limit,
            };
            let limits = LevelLimits {
                nominal,
                lendable: percent_of(nominal, level.lendable_percent),
                borrowing,
            };
            (level.name.clone(), limits)
        })
        .collect()
}

/// How long a request may wait in a queue: a quarter of what is left before its own
/// deadline, `default_wait` when it has none (a watch), never over [`MAX_WAIT`] (kube's
/// `getRequestWaitContext`).
pub fn wait_deadline(now: Instant, deadline: Option<Instant>, default_wait: Duration) -> Instant {
    let wait = match deadline {
        Some(d) => d.saturating_duration_since(now) / 4,
        None => default_wait,
    };
    now + wait.min(MAX_WAIT)
}

/// API Priority and Fairness: classification and admission under the current
/// configuration.
pub struct Controller {
    server_limit: usize,
    clock: Clock,
    config: RwLock<Arc<Config>>,
    limits: RwLock<Arc<BTreeMap<String, LevelLimits>>>,
    levels: Mutex<BTreeMap<String, Arc<LevelState>>>,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("server_limit", &self.server_limit)
            .finish_non_exhaustive()
    }
}

/// The settings a level runs with.
fn settings(level: &PriorityLevel, limits: &LevelLimits) -> LevelSettings {
    LevelSettings {
        limit: (!level.is_exempt()).then_some(limits.nominal),
        queuing: level
            .queuing()
            .map(|(queues, hand_size, queue_length_limit)| Queuing {
                queues: queues as usize,
                hand_size: hand_size as usize,
                queue_length_limit: queue_length_limit as usize,
            }),
    }
}

impl Controller {
    /// A controller of the given FlowSchema and PriorityLevelConfiguration objects,
    /// sharing `server_limit` seats among the Limited levels.
    pub fn new(flow_schemas: &[Value], levels: &[Value], server_limit: usize) -> Self {
        Self::with_clock(flow_schemas, levels, server_limit, Clock::default())
    }

    /// A controller whose levels read `clock`.
    pub(crate) fn with_clock(
        flow_schemas: &[Value],
        levels: &[Value],
        server_limit: usize,
        clock: Clock,
    ) -> Self {
        let controller = Self {
            server_limit,
            clock,
            config: RwLock::default(),
            limits: RwLock::default(),
            levels: Mutex::default(),
        };
        controller.update(flow_schemas, levels);
        controller
    }

    /// Replaces the configuration. Levels kept are reconfigured in place; their
    /// executing and waiting requests stay. Returns what was skipped, with why.
    pub fn update(&self, flow_schemas: &[Value], levels: &[Value]) -> Vec<String> {
        let config = Arc::new(Config::from_objects(flow_schemas, levels));
        let limits = Arc::new(concurrency_limits(
            config.levels.values(),
            self.server_limit,
        ));
        let mut states = self.levels.lock().unwrap_or_else(|e| e.into_inner());
        states.retain(|name, _| config.levels.contains_key(name));
        for (name, level) in &config.levels {
            let settings = settings(level, &limits[name]);
            match states.get(name) {
                Some(state) => state.reconfigure(settings),
                None => {
                    states.insert(
                        name.clone(),
                        LevelState::new(name, settings, self.clock.clone()),
                    );
                }
            }
        }
        let skipped = config.skipped.clone();
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = config;
        *self.limits.write().unwrap_or_else(|e| e.into_inner()) = limits;
        skipped
    }

    /// The current configuration.
    pub fn config(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Each level's limits under the current configuration.
    pub fn limits(&self) -> Arc<BTreeMap<String, LevelLimits>> {
        self.limits
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Classifies a request under the current configuration.
    pub fn classify(&self, attrs: &RequestAttributes) -> Classification {
        self.config().classify(attrs)
    }

    /// Admits a classified request: a seat at once, one when its turn comes, or a
    /// rejection, at the latest at `deadline` (see [`wait_deadline`]).
    pub async fn admit_classified(
        &self,
        classification: &Classification,
        deadline: Instant,
    ) -> Result<Seat, Rejection> {
        let flow = FlowKey::new(&classification.flow_schema, &classification.distinguisher);
        self.admit(&classification.priority_level, flow, deadline)
            .await
    }

    /// Admits a request of `flow` at `level`.
    pub async fn admit(
        &self,
        level: &str,
        flow: FlowKey,
        deadline: Instant,
    ) -> Result<Seat, Rejection> {
        let state = {
            let states = self.levels.lock().unwrap_or_else(|e| e.into_inner());
            states
                .get(level)
                .or_else(|| states.get(CATCH_ALL))
                .expect("the catch-all level is always configured")
                .clone()
        };
        state.admit(&flow, deadline).await
    }

    /// Every configured level's numbers.
    pub fn stats(&self) -> Vec<LevelStats> {
        let states: Vec<Arc<LevelState>> = self
            .levels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        states.iter().map(|s| s.stats()).collect()
    }
}
