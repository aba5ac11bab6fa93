//! The load loop: C concurrent workers (tokio tasks), each calling its operation over
//! and over, first for a warm-up that is not recorded, then for a fixed measured
//! duration. Every call is bounded by a timeout, so a cell ends at most one timeout
//! after its duration.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::time::Instant;

use crate::stats::{Recorder, Summary};

/// What one call of an operation measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// The whole call is the operation: the driver's own timing is recorded.
    Whole,
    /// Only this part of the call is the operation (the rest prepared it, e.g. the
    /// create before a timed delete); throughput still counts whole calls.
    Part(Duration),
}

/// One call of an operation: `Err` carries what went wrong.
pub type OpFuture = Pin<Box<dyn Future<Output = Result<Sample, String>> + Send>>;

/// One worker's operation: called with 0, 1, 2, … (unique per worker, useful for
/// names), one call at a time.
pub type Worker = Box<dyn FnMut(u64) -> OpFuture + Send>;

/// How a cell is driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    /// Unrecorded time before the measurement.
    pub warmup: Duration,
    /// Measured time.
    pub duration: Duration,
    /// Bound on each call; a call that takes longer counts as an error.
    pub timeout: Duration,
}

/// What a cell measured.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Every worker's recordings, merged.
    pub recorder: Recorder,
    /// From the end of the warm-up until the last worker stopped.
    pub elapsed: Duration,
}

impl Measured {
    /// The figures.
    pub fn summary(&self) -> Summary {
        self.recorder.summary(self.elapsed)
    }
}

/// Runs every worker concurrently (one task each) under `load` and merges what they
/// recorded. Calls that start during the warm-up are not recorded; no call starts
/// after the measured duration.
pub async fn drive(load: Load, workers: Vec<Worker>) -> Measured {
    let start = Instant::now();
    let measure_from = start + load.warmup;
    let stop_at = measure_from + load.duration;
    let tasks: Vec<_> = workers
        .into_iter()
        .map(|worker| tokio::spawn(run_worker(worker, load.timeout, measure_from, stop_at)))
        .collect();
    let mut recorder = Recorder::new();
    for task in tasks {
        match task.await {
            Ok(worker) => recorder.merge(&worker),
            Err(e) => recorder.record_error(format!("worker task failed: {e}")),
        }
    }
    Measured {
        recorder,
        elapsed: Instant::now().saturating_duration_since(measure_from),
    }
}

async fn run_worker(
    mut worker: Worker,
    timeout: Duration,
    measure_from: Instant,
    stop_at: Instant,
) -> Recorder {
    let mut recorder = Recorder::new();
    let mut seq = 0;
    loop {
        let begun = Instant::now();
        if begun >= stop_at {
            break;
        }
        let outcome = tokio::time::timeout(timeout, worker(seq)).await;
        seq += 1;
        if begun < measure_from {
            continue;
        }
        match outcome {
            Ok(Ok(Sample::Whole)) => recorder.record(begun.elapsed()),
            Ok(Ok(Sample::Part(latency))) => recorder.record(latency),
            Ok(Err(e)) => recorder.record_error(e),
            Err(_) => recorder.record_error(format!("timed out after {timeout:?}")),
        }
    }
    recorder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn workers_are_measured_after_the_warmup_and_bounded() {
        let load = Load {
            warmup: Duration::from_millis(20),
            duration: Duration::from_millis(100),
            timeout: Duration::from_millis(50),
        };
        let workers: Vec<Worker> = (0..3)
            .map(|w| -> Worker {
                Box::new(move |seq| -> OpFuture {
                    Box::pin(async move {
                        if w == 2 {
                            // Never answers: every call times out.
                            std::future::pending::<()>().await;
                        }
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        if w == 1 && seq % 2 == 0 {
                            Err("even".to_string())
                        } else {
                            Ok(Sample::Whole)
                        }
                    })
                })
            })
            .collect();
        let measured = drive(load, workers).await;
        let s = measured.summary();
        assert!(s.ops > 0);
        assert!(s.errors > 0);
        assert!(measured.elapsed < Duration::from_millis(100 + 50 + 100));
    }
}
