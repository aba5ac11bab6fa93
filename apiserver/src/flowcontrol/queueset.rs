//! One priority level's admission: its seats, its queues and their fair dispatch,
//! following kube's `k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset/
//! queueset.go`.
//!
//! - An exempt level runs everything at once, only counting it.
//! - A level without queues (`Reject`) runs a request if a seat is free and rejects it
//!   otherwise (`concurrency-limit`).
//! - A queuing level shuffle-shards the flow to a hand of queues and puts the request
//!   in the one of them with the least waiting (the hand visited from a rotating
//!   offset, as kube does), rejecting it (`queue-full`) when all seats are taken and
//!   that queue is at `queueLengthLimit`; then dispatches as much as it can.
//! - Dispatch is kube's fair queuing: a virtual clock R advances at
//!   `min(seats asked for, limit) / active queues` per second; each queue keeps the R
//!   at which its next request may start, grown by a request's estimated work (one
//!   seat for 3 ms) when it is dispatched and corrected by the actual service time
//!   when it finishes, never below its oldest waiter's arrival R. The queue whose head
//!   would finish first in virtual time goes next, ties broken round-robin.
//! - A waiting request leaves its queue at its deadline (`time-out`) or when its
//!   future is dropped (`cancelled`, kube's reason for a request whose context ends).
//!
//! Differences from kube:
//! - every request takes one seat: no work estimation (kube widens LISTs by the number
//!   of objects and holds seats after a mutation for its watch notifications);
//! - the limit is the nominal one: no borrowing between levels (kube moves seats every
//!   10 s by `lendablePercent` and `borrowingLimitPercent`);
//! - R is an `f64` of seat-seconds without kube's epoch rewinding (an `f64` counts
//!   seat-seconds exactly far beyond any server's uptime);
//! - timed-out requests leave their queue at their own deadline rather than when a
//!   later request arrives in the same queue.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::shuffle::{FlowKey, deal};

/// kube's estimated service time of a request, in seconds (`estimatedServiceDuration`).
const ESTIMATED_SERVICE: f64 = 0.003;

/// Why a request was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// Its queue was full and every seat taken.
    #[error("queue full")]
    QueueFull,
    /// A level that does not queue had no free seat.
    #[error("concurrency limit reached")]
    ConcurrencyLimit,
    /// It waited in its queue until its deadline.
    #[error("timed out waiting in queue")]
    TimedOut,
}

impl Rejection {
    /// kube's `reason` label of `apiserver_flowcontrol_rejected_requests_total`.
    pub fn reason(self) -> &'static str {
        match self {
            Rejection::QueueFull => "queue-full",
            Rejection::ConcurrencyLimit => "concurrency-limit",
            Rejection::TimedOut => "time-out",
        }
    }
}

/// Requests rejected, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rejected {
    /// `queue-full`.
    pub queue_full: u64,
    /// `concurrency-limit`.
    pub concurrency_limit: u64,
    /// `time-out`.
    pub time_out: u64,
    /// `cancelled`: the request went away while waiting.
    pub cancelled: u64,
}

impl Rejected {
    /// All rejections.
    pub fn total(&self) -> u64 {
        self.queue_full + self.concurrency_limit + self.time_out + self.cancelled
    }
}

/// One FlowSchema's requests at one level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaStats {
    /// Executing now.
    pub executing: u64,
    /// Waiting in a queue now.
    pub waiting: u64,
    /// Dispatched since the start.
    pub dispatched: u64,
    /// Rejected since the start, by reason.
    pub rejected: Rejected,
}

/// A level's numbers for metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// The level's name.
    pub name: String,
    /// Its concurrency limit (`None`: exempt).
    pub limit: Option<usize>,
    /// Its number of queues (0 when it does not queue).
    pub queues: usize,
    /// By FlowSchema.
    pub by_schema: BTreeMap<String, SchemaStats>,
}

impl LevelStats {
    /// Requests executing.
    pub fn executing(&self) -> u64 {
        self.by_schema.values().map(|s| s.executing).sum()
    }

    /// Requests waiting.
    pub fn waiting(&self) -> u64 {
        self.by_schema.values().map(|s| s.waiting).sum()
    }

    /// Requests dispatched.
    pub fn dispatched(&self) -> u64 {
        self.by_schema.values().map(|s| s.dispatched).sum()
    }

    /// Requests rejected, by reason.
    pub fn rejected(&self) -> Rejected {
        self.by_schema
            .values()
            .fold(Rejected::default(), |mut total, s| {
                total.queue_full += s.rejected.queue_full;
                total.concurrency_limit += s.rejected.concurrency_limit;
                total.time_out += s.rejected.time_out;
                total.cancelled += s.rejected.cancelled;
                total
            })
    }
}

/// How a level queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queuing {
    /// Number of queues requests are dealt to.
    pub queues: usize,
    /// Queues dealt to a flow.
    pub hand_size: usize,
    /// Most requests waiting in one queue.
    pub queue_length_limit: usize,
}

/// What a level is configured to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelSettings {
    /// Seats (`None`: exempt, unlimited).
    pub limit: Option<usize>,
    /// Queuing, or `None` to reject over the limit.
    pub queuing: Option<Queuing>,
}

/// Where a level reads the time: the real clock, or in tests one moved by hand.
#[derive(Clone, Default)]
pub(crate) struct Clock(Option<Arc<Mutex<Instant>>>);

impl Clock {
    /// The time now.
    fn now(&self) -> Instant {
        match &self.0 {
            None => Instant::now(),
            Some(t) => *t.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// A clock standing still until [`Clock::advance`]d.
    #[cfg(test)]
    pub(crate) fn manual() -> Self {
        Self(Some(Arc::new(Mutex::new(Instant::now()))))
    }

    /// Moves a manual clock on.
    #[cfg(test)]
    pub(crate) fn advance(&self, by: std::time::Duration) {
        if let Some(t) = &self.0 {
            *t.lock().unwrap() += by;
        }
    }
}

/// A dispatched request's place, sent to its waiting future.
struct Grant {
    queue: Option<usize>,
    started: Instant,
}

/// A request waiting in a queue.
struct Waiter {
    id: u64,
    flow_schema: String,
    arrival_r: f64,
    grant: oneshot::Sender<Grant>,
}

/// One queue of a level.
#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    executing: usize,
    /// The virtual time at which its next request may start.
    next_dispatch_r: f64,
}

/// The state of one priority level.
pub(crate) struct LevelState {
    name: String,
    clock: Clock,
    inner: Mutex<Inner>,
}

struct Inner {
    settings: LevelSettings,
    queues: Vec<Queue>,
    executing: usize,
    waiting: usize,
    /// The virtual clock, in seat-seconds.
    r: f64,
    last_sync: Instant,
    /// The time of the current change (set when locked).
    now: Instant,
    /// The queue dispatched from last: the next search starts after it.
    robin: usize,
    /// Requests enqueued: the offset hands are visited from.
    enqueues: usize,
    next_id: u64,
    stats: BTreeMap<String, SchemaStats>,
}

/// What a request's arrival came to.
enum Start {
    Run(Grant),
    Rejected(Rejection),
    Wait(u64, oneshot::Receiver<Grant>),
}

/// A seat taken by an executing request; dropping it frees the seat and dispatches the
/// next waiting request.
#[must_use = "the seat is freed when dropped"]
pub struct Seat {
    level: Arc<LevelState>,
    flow_schema: String,
    queue: Option<usize>,
    started: Instant,
}

impl std::fmt::Debug for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seat")
            .field("level", &self.level.name)
            .field("flow_schema", &self.flow_schema)
            .finish()
    }
}

impl Seat {
    /// The priority level the seat is of.
    pub fn priority_level(&self) -> &str {
        &self.level.name
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut inner = self.level.lock();
        inner.finish(self.queue, &self.flow_schema, self.started);
        inner.dispatch();
    }
}

/// A request waiting for its seat; dropped unsettled, it leaves its queue.
struct Waiting {
    level: Arc<LevelState>,
    flow_schema: String,
    id: u64,
    grant: oneshot::Receiver<Grant>,
    settled: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let mut inner = self.level.lock();
        if inner.remove_waiter(self.id) {
            inner.schema(&self.flow_schema).rejected.cancelled += 1;
        } else if let Ok(grant) = self.grant.try_recv() {
            // Dispatched as the future went away: give the seat back.
            inner.finish(grant.queue, &self.flow_schema, grant.started);
        }
        inner.dispatch();
    }
}

impl LevelState {
    /// A level named `name`.
    pub(crate) fn new(name: &str, settings: LevelSettings, clock: Clock) -> Arc<Self> {
        let state = Arc::new(Self {
            name: name.into(),
            inner: Mutex::new(Inner {
                settings,
                queues: Vec::new(),
                executing: 0,
                waiting: 0,
                r: 0.0,
                last_sync: clock.now(),
                now: clock.now(),
                robin: 0,
                enqueues: 0,
                next_id: 0,
                stats: BTreeMap::new(),
            }),
            clock,
        });
        state.reconfigure(settings);
        state
    }

    /// The state, its virtual clock brought up to now.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere must not stop admission: the counts stay consistent, every
        // change being made whole under the lock.
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.clock.now();
        inner.sync_time(now);
        inner.now = now;
        inner
    }

    /// Applies new settings, keeping requests in flight and in queues: executing ones
    /// hold their seats (a lower limit only dispatches less), queues are added at once
    /// and removed as they drain.
    pub(crate) fn reconfigure(&self, settings: LevelSettings) {
        let mut inner = self.lock();
        inner.settings = settings;
        let wanted = settings.queuing.map_or(0, |q| q.queues);
        if inner.queues.len() < wanted {
            inner.queues.resize_with(wanted, Queue::default);
        }
        inner.dispatch();
    }

    /// The level's numbers.
    pub(crate) fn stats(&self) -> LevelStats {
        let inner = self.lock();
        LevelStats {
            name: self.name.clone(),
            limit: inner.settings.limit,
            queues: inner.settings.queuing.map_or(0, |q| q.queues),
            by_schema: inner.stats.clone(),
        }
    }

    /// Admits a request of `flow`: a seat now, one when its turn comes, or a rejection
    /// (at the latest at `deadline`).
    pub(crate) async fn admit(
        self: &Arc<Self>,
        flow: &FlowKey,
        deadline: Instant,
    ) -> Result<Seat, Rejection> {
        let start = self.lock().start(flow);
        let seat = |grant: Grant| Seat {
            level: self.clone(),
            flow_schema: flow.flow_schema.clone(),
            queue: grant.queue,
            started: grant.started,
        };
        let (id, grant) = match start {
            Start::Run(grant) => return Ok(seat(grant)),
            Start::Rejected(why) => return Err(why),
            Start::Wait(id, grant) => (id, grant),
        };
        let mut waiting = Waiting {
            level: self.clone(),
            flow_schema: flow.flow_schema.clone(),
            id,
            grant,
            settled: false,
        };
        let granted = tokio::time::timeout_at(deadline, &mut waiting.grant).await;
        waiting.settled = true;
        if let Ok(Ok(grant)) = granted {
            return Ok(seat(grant));
        }
        // The deadline passed (or, impossibly, the sender went away): leave the queue,
        // unless the seat came in the meantime.
        let mut inner = self.lock();
        if inner.remove_waiter(id) {
            inner.schema(&flow.flow_schema).rejected.time_out += 1;
            return Err(Rejection::TimedOut);
        }
        match waiting.grant.try_recv() {
            Ok(grant) => Ok(seat(grant)),
            Err(_) => Err(Rejection::TimedOut),
        }
    }
}

impl Inner {
    /// Advances the virtual clock by the time since the last change.
    fn sync_time(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.last_sync).as_secs_f64();
        self.last_sync = now;
        let (mut asked, mut active) = (0usize, 0usize);
        for q in &self.queues {
            asked += q.executing + q.waiting.len();
            active += usize::from(q.executing > 0 || !q.waiting.is_empty());
        }
        if active > 0 {
            let limit = self.settings.limit.unwrap_or(usize::MAX);
            self.r += elapsed * asked.min(limit) as f64 / active as f64;
        }
    }

    /// The counters of `flow_schema`.
    fn schema(&mut self, flow_schema: &str) -> &mut SchemaStats {
        if !self.stats.contains_key(flow_schema) {
            self.stats
                .insert(flow_schema.into(), SchemaStats::default());
        }
        self.stats.get_mut(flow_schema).expect("inserted above")
    }

    /// Whether a seat is free.
    fn seat_free(&self) -> bool {
        self.settings
            .limit
            .is_none_or(|limit| self.executing < limit)
    }

    /// Takes a seat outside any queue.
    fn run_unqueued(&mut self, flow_schema: &str) -> Start {
        self.executing += 1;
        let stats = self.schema(flow_schema);
        stats.executing += 1;
        stats.dispatched += 1;
        Start::Run(Grant {
            queue: None,
            started: self.now,
        })
    }

    /// Handles a request's arrival.
    fn start(&mut self, flow: &FlowKey) -> Start {
        let Some(queuing) = self
            .settings
            .queuing
            .filter(|_| self.settings.limit.is_some())
        else {
            if self.seat_free() {
                return self.run_unqueued(&flow.flow_schema);
            }
            self.schema(&flow.flow_schema).rejected.concurrency_limit += 1;
            return Start::Rejected(Rejection::ConcurrencyLimit);
        };
        let index = self.shuffle_shard(flow, queuing);
        if !self.seat_free() && self.queues[index].waiting.len() >= queuing.queue_length_limit {
            self.schema(&flow.flow_schema).rejected.queue_full += 1;
            return Start::Rejected(Rejection::QueueFull);
        }
        let (tx, rx) = oneshot::channel();
        let id = self.next_id;
        self.next_id += 1;
        let r = self.r;
        let queue = &mut self.queues[index];
        if queue.waiting.is_empty() && queue.executing == 0 {
            queue.next_dispatch_r = r;
        }
        queue.waiting.push_back(Waiter {
            id,
            flow_schema: flow.flow_schema.clone(),
            arrival_r: r,
            grant: tx,
        });
        self.waiting += 1;
        self.schema(&flow.flow_schema).waiting += 1;
        self.dispatch();
        Start::Wait(id, rx)
    }

    /// The queue of the flow's hand with the least waiting, the hand visited from an
    /// offset that turns with every request.
    fn shuffle_shard(&mut self, flow: &FlowKey, queuing: Queuing) -> usize {
        let hand = deal(flow.hash(), queuing.queues, queuing.hand_size.max(1));
        let offset = self.enqueues % hand.len();
        self.enqueues = self.enqueues.wrapping_add(1);
        (0..hand.len())
            .map(|i| hand[(offset + i) % hand.len()])
            .min_by_key(|&q| self.queues[q].waiting.len())
            .expect("a hand has a card")
    }

    /// Dispatches waiting requests while seats are free, fairly across queues.
    fn dispatch(&mut self) {
        while self.waiting > 0 && self.seat_free() {
            let Some(index) = self.next_queue() else {
                break;
            };
            self.robin = index;
            let waiter = self.queues[index]
                .waiting
                .pop_front()
                .expect("next_queue picks a non-empty queue");
            self.waiting -= 1;
            self.schema(&waiter.flow_schema).waiting -= 1;
            let grant = Grant {
                queue: Some(index),
                started: self.now,
            };
            if waiter.grant.send(grant).is_ok() {
                self.executing += 1;
                let queue = &mut self.queues[index];
                queue.executing += 1;
                queue.next_dispatch_r += ESTIMATED_SERVICE;
                let stats = self.schema(&waiter.flow_schema);
                stats.executing += 1;
                stats.dispatched += 1;
            } else {
                self.schema(&waiter.flow_schema).rejected.cancelled += 1;
            }
            self.bound(index);
        }
        self.trim_queues();
    }

    /// The non-empty queue whose head would finish first in virtual time, searched
    /// round-robin from after the last one dispatched from.
    fn next_queue(&self) -> Option<usize> {
        let n = self.queues.len();
        let mut best: Option<(usize, f64)> = None;
        for step in 1..=n {
            let index = (self.robin + step) % n;
            let queue = &self.queues[index];
            if queue.waiting.is_empty() {
                continue;
            }
            // Every request being one seat, the head's finish is start + its work.
            let finish = queue.next_dispatch_r + ESTIMATED_SERVICE;
            if best.is_none_or(|(_, f)| finish < f) {
                best = Some((index, finish));
            }
        }
        best.map(|(index, _)| index)
    }

    /// Keeps a queue's next start no earlier than its oldest waiter's arrival.
    fn bound(&mut self, index: usize) {
        let queue = &mut self.queues[index];
        if let Some(head) = queue.waiting.front() {
            queue.next_dispatch_r = queue.next_dispatch_r.max(head.arrival_r);
        }
    }

    /// Drops the trailing queues a smaller configuration no longer deals, once idle.
    fn trim_queues(&mut self) {
        let wanted = self.settings.queuing.map_or(0, |q| q.queues);
        while self.queues.len() > wanted
            && self
                .queues
                .last()
                .is_some_and(|q| q.executing == 0 && q.waiting.is_empty())
        {
            self.queues.pop();
        }
    }

    /// Frees a seat, correcting its queue's virtual time by the actual service time.
    fn finish(&mut self, queue: Option<usize>, flow_schema: &str, started: Instant) {
        self.executing -= 1;
        self.schema(flow_schema).executing -= 1;
        if let Some(index) = queue {
            let served = self.now.saturating_duration_since(started).as_secs_f64();
            let queue = &mut self.queues[index];
            queue.executing -= 1;
            queue.next_dispatch_r -= ESTIMATED_SERVICE - served;
            self.bound(index);
        }
    }

    /// Takes a waiter out of its queue; false when it is in none (dispatched).
    fn remove_waiter(&mut self, id: u64) -> bool {
        for index in 0..self.queues.len() {
            let queue = &mut self.queues[index];
            if let Some(pos) = queue.waiting.iter().position(|w| w.id == id) {
                let waiter = queue.waiting.remove(pos).expect("found above");
                self.waiting -= 1;
                self.schema(&waiter.flow_schema).waiting -= 1;
                self.bound(index);
                self.trim_queues();
                return true;
            }
        }
        false
    }
}
