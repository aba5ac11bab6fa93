//! The watch fan-out measurement, whatever serves the watches (kapi over HTTP in
//! [`crate::targets::watch`], raw etcd in `targets::etcd_watch`): W watchers of one
//! prefix, all open before the first write, and one writer.
//!
//! The writer is open-loop: it starts write *i* at `i / rate` seconds whether or not
//! the earlier writes were acknowledged. A closed-loop writer, waiting for each
//! acknowledgement before its next tick, cannot write faster than one write per
//! acknowledgement latency: with 1,000 watchers kapi acknowledged creates in ~30 ms,
//! so the first version of this harness wrote ~31 times a second instead of 100,
//! stretched the run to ~16 s, and reported the events of 500 writes over that
//! time (30,569 events/s where 100 writes/s to 1,000 watchers is 100,000). The
//! acknowledged rate is now reported beside the nominal one, and events per second
//! are counted over the time they were actually delivered in.
//!
//! An event's latency runs from its write's acknowledgement to a watcher reading it
//! (0 when read before the acknowledgement arrived), as the issue measures it. Every
//! watcher must see every acknowledged write: a missing event is an error.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::stats::{Recorder, Summary};

/// How long watchers may need beyond the writes to open one watch; one that takes
/// longer fails the fan-out.
pub const OPEN_TIMEOUT: Duration = Duration::from_secs(30);

/// One fan-out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FanOut {
    /// Concurrent watchers.
    pub watchers: usize,
    /// Writes per second the writer starts.
    pub rate: u32,
    /// How long the writer writes.
    pub duration: Duration,
    /// How long acknowledgements and events may still take after the last write was
    /// started; writes not acknowledged by then are errors, events not read are
    /// missed.
    pub drain: Duration,
    /// How many watches are being opened at once.
    pub open_concurrency: usize,
}

impl FanOut {
    /// How many writes the writer makes.
    pub fn writes(&self) -> usize {
        (f64::from(self.rate) * self.duration.as_secs_f64())
            .ceil()
            .max(1.0) as usize
    }
}

/// When each write's event reached one watcher.
#[derive(Clone, Debug)]
pub struct Arrivals {
    times: Vec<Option<Instant>>,
    seen: usize,
}

impl Arrivals {
    /// Nothing seen yet of `writes` writes.
    pub fn new(writes: usize) -> Self {
        Self {
            times: vec![None; writes],
            seen: 0,
        }
    }

    /// Write `i`'s event was read `at` (later copies of it are ignored).
    pub fn record(&mut self, i: usize, at: Instant) {
        if let Some(slot) = self.times.get_mut(i) {
            if slot.is_none() {
                *slot = Some(at);
                self.seen += 1;
            }
        }
    }

    /// Whether every write's event was read.
    pub fn complete(&self) -> bool {
        self.seen == self.times.len()
    }
}

/// What a watcher task returns: what it read, or why it could not read on.
pub type WatcherTask = JoinHandle<Arrivals>;

/// A write of the fan-out's writer, given its number.
pub type WriteFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// What a fan-out measured.
#[derive(Clone, Debug)]
pub struct FanOutMeasured {
    /// What was asked for.
    pub spec: FanOut,
    /// One latency per event read (write acknowledgement → read), and the errors:
    /// failed writes and missed events.
    pub recorder: Recorder,
    /// The writes' own latencies (start → acknowledgement).
    pub write_latency: Recorder,
    /// Writes acknowledged.
    pub acked: usize,
    /// Acknowledged writes per second, between the first acknowledgement and the last.
    pub acked_rate: f64,
    /// Events read, over every watcher.
    pub delivered: u64,
    /// Events of acknowledged writes some watcher never read.
    pub missed: u64,
    /// From the first write until the last event was read.
    pub delivery_span: Duration,
    /// How long opening every watch took (set by the target that opened them).
    pub opened_in: Duration,
}

impl FanOutMeasured {
    /// The events' figures: ops/s is events read per second of `delivery_span`.
    pub fn summary(&self) -> Summary {
        self.recorder.summary(self.delivery_span)
    }
}

/// Opens `count` watchers, at most `concurrency` at a time: `open(i)` opens watcher
/// `i` and returns its reading task.
pub async fn open_watchers<F, Fut>(
    count: usize,
    concurrency: usize,
    open: F,
) -> Result<Vec<WatcherTask>, String>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<WatcherTask, String>> + Send,
{
    let open = Arc::new(open);
    let next = Arc::new(AtomicUsize::new(0));
    let openers: Vec<_> = (0..concurrency.clamp(1, count.max(1)))
        .map(|_| {
            let open = open.clone();
            let next = next.clone();
            tokio::spawn(async move {
                let mut tasks = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        return Ok(tasks);
                    }
                    match tokio::time::timeout(OPEN_TIMEOUT, open(i)).await {
                        Ok(Ok(task)) => tasks.push(task),
                        Ok(Err(e)) => return Err(format!("watcher {i}: {e}")),
                        Err(_) => {
                            return Err(format!("watcher {i} not open after {OPEN_TIMEOUT:?}"));
                        }
                    }
                }
            })
        })
        .collect();
    let mut tasks = Vec::with_capacity(count);
    let mut failure = None;
    for opener in openers {
        match opener.await {
            Ok(Ok(opened)) => tasks.extend(opened),
            Ok(Err(e)) => failure = failure.or(Some(e)),
            Err(e) => failure = failure.or(Some(format!("a watch opener failed: {e}"))),
        }
    }
    match failure {
        // The open watchers stop when the caller drops its `done` sender.
        Some(e) => Err(e),
        None => Ok(tasks),
    }
}

/// Runs the writer against open `watchers`, then lets them drain, stops them through
/// `done`, and accounts for every event. `write(i)` makes write `i`.
pub async fn run<F>(
    spec: FanOut,
    watchers: Vec<WatcherTask>,
    done: watch::Sender<bool>,
    mut write: F,
) -> FanOutMeasured
where
    F: FnMut(usize) -> WriteFuture,
{
    let writes = spec.writes();
    let period = Duration::from_secs_f64(1.0 / f64::from(spec.rate.max(1)));
    let started = Instant::now();
    let mut in_flight = Vec::with_capacity(writes);
    for i in 0..writes {
        tokio::time::sleep_until(started + period * i as u32).await;
        let write = write(i);
        in_flight.push(tokio::spawn(async move {
            let begun = Instant::now();
            let outcome = write.await;
            (begun, outcome, Instant::now())
        }));
    }
    // Everything — acknowledgements, events — must arrive within `drain` of the last
    // scheduled write; what has not by then is an error (a write) or missed (an
    // event), so that a server that cannot keep up bounds the run instead of
    // stretching it.
    let deadline = started + period * writes as u32 + spec.drain;
    let mut recorder = Recorder::new();
    let mut write_latency = Recorder::new();
    let mut acks: Vec<Option<Instant>> = vec![None; writes];
    let mut unacknowledged = 0;
    for (i, mut task) in in_flight.into_iter().enumerate() {
        match tokio::time::timeout_at(deadline, &mut task).await {
            Ok(Ok((begun, Ok(()), acked))) => {
                write_latency.record(acked - begun);
                acks[i] = Some(acked);
            }
            Ok(Ok((_, Err(e), _))) => recorder.record_error(format!("write {i}: {e}")),
            Ok(Err(e)) => recorder.record_error(format!("write {i}: {e}")),
            Err(_) => {
                task.abort();
                unacknowledged += 1;
            }
        }
    }
    recorder.record_errors(
        unacknowledged,
        format!(
            "{unacknowledged} of {writes} writes not acknowledged within {:?} of the last one's start",
            spec.drain
        ),
    );
    let first_ack = acks.iter().flatten().min().copied();
    let last_ack = acks.iter().flatten().max().copied();
    let acked = acks.iter().flatten().count();
    let acked_rate = match (first_ack, last_ack) {
        (Some(first), Some(last)) if acked > 1 && last > first => {
            (acked - 1) as f64 / (last - first).as_secs_f64()
        }
        _ => 0.0,
    };

    // Watchers that read everything end on their own; the others are stopped at the
    // deadline.
    let mut finished: Vec<Result<Arrivals, String>> = Vec::with_capacity(watchers.len());
    let mut late = Vec::new();
    for mut task in watchers {
        match tokio::time::timeout_at(deadline, &mut task).await {
            Ok(outcome) => finished.push(outcome.map_err(|e| e.to_string())),
            Err(_) => late.push(task),
        }
    }
    let _ = done.send(true);
    for task in late {
        finished.push(
            match tokio::time::timeout(Duration::from_secs(10), task).await {
                Ok(outcome) => outcome.map_err(|e| e.to_string()),
                Err(_) => Err("did not stop within 10 s of being told to".to_string()),
            },
        );
    }

    let mut delivered = 0;
    let mut missed = 0;
    let mut last_read = started;
    for outcome in finished {
        let arrivals = match outcome {
            Ok(arrivals) => arrivals,
            Err(e) => {
                recorder.record_error(format!("a watcher task: {e}"));
                continue;
            }
        };
        let mut watcher_missed = 0;
        let mut first_missed = None;
        for (i, (read, ack)) in arrivals.times.iter().zip(&acks).enumerate() {
            match (read, ack) {
                (Some(read), Some(ack)) => {
                    recorder.record(read.saturating_duration_since(*ack));
                    delivered += 1;
                    last_read = last_read.max(*read);
                }
                (None, Some(_)) => {
                    watcher_missed += 1;
                    first_missed.get_or_insert(i);
                }
                _ => {}
            }
        }
        if let Some(i) = first_missed {
            recorder.record_errors(
                watcher_missed,
                format!("a watcher missed {watcher_missed} of {acked} events (first: write {i})"),
            );
            missed += watcher_missed;
        }
    }
    FanOutMeasured {
        spec,
        recorder,
        write_latency,
        acked,
        acked_rate,
        delivered,
        missed,
        delivery_span: last_read.saturating_duration_since(started),
        opened_in: Duration::ZERO,
    }
}
