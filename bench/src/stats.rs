//! Latency and error recording for one operation: an HDR histogram of latencies (in
//! microseconds) plus an error count, mergeable across workers, summarised as ops/s and
//! p50/p99/max.

use std::fmt;
use std::time::Duration;

use hdrhistogram::Histogram;

/// The largest latency recorded exactly, in microseconds (one minute); longer ones are
/// recorded as this value.
const MAX_MICROS: u64 = 60_000_000;

/// Significant decimal digits the histogram keeps.
const SIGNIFICANT_DIGITS: u8 = 3;

/// How many error messages a recorder keeps (the count goes on).
const KEPT_ERRORS: usize = 3;

/// The latencies and errors of one operation, as seen by one worker or merged over many.
#[derive(Clone, Debug)]
pub struct Recorder {
    histogram: Histogram<u64>,
    errors: u64,
    first_errors: Vec<String>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self {
            histogram: Histogram::new_with_bounds(1, MAX_MICROS, SIGNIFICANT_DIGITS)
                .expect("valid histogram bounds"),
            errors: 0,
            first_errors: Vec::new(),
        }
    }

    /// Records one successful operation that took `latency`.
    pub fn record(&mut self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.histogram
            .saturating_record(micros.clamp(1, MAX_MICROS));
    }

    /// Records one failed operation (its latency is not recorded).
    pub fn record_error(&mut self, message: impl Into<String>) {
        self.errors += 1;
        if self.first_errors.len() < KEPT_ERRORS {
            self.first_errors.push(message.into());
        }
    }

    /// Records `count` failed operations with one message for all of them.
    pub fn record_errors(&mut self, count: u64, message: impl Into<String>) {
        if count == 0 {
            return;
        }
        self.errors += count;
        if self.first_errors.len() < KEPT_ERRORS {
            self.first_errors.push(message.into());
        }
    }

    /// Adds everything `other` recorded.
    pub fn merge(&mut self, other: &Recorder) {
        self.histogram
            .add(&other.histogram)
            .expect("histograms with the same bounds merge");
        self.errors += other.errors;
        for message in &other.first_errors {
            if self.first_errors.len() < KEPT_ERRORS {
                self.first_errors.push(message.clone());
            }
        }
    }

    /// Successful operations recorded.
    pub fn ops(&self) -> u64 {
        self.histogram.len()
    }

    /// Failed operations recorded.
    pub fn errors(&self) -> u64 {
        self.errors
    }

    /// The first few error messages.
    pub fn first_errors(&self) -> &[String] {
        &self.first_errors
    }

    /// The figures of these recordings over `elapsed` of measurement.
    pub fn summary(&self, elapsed: Duration) -> Summary {
        let micros = |q: f64| Duration::from_micros(self.histogram.value_at_quantile(q));
        let seconds = elapsed.as_secs_f64();
        Summary {
            ops: self.ops(),
            errors: self.errors,
            elapsed,
            ops_per_sec: if seconds > 0.0 {
                self.ops() as f64 / seconds
            } else {
                0.0
            },
            p50: micros(0.5),
            p99: micros(0.99),
            max: Duration::from_micros(self.histogram.max()),
        }
    }
}

/// The figures of one measured operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Successful operations.
    pub ops: u64,
    /// Failed operations (errors and timeouts).
    pub errors: u64,
    /// The measured wall time.
    pub elapsed: Duration,
    /// Successful operations per second of `elapsed`.
    pub ops_per_sec: f64,
    /// Median latency.
    pub p50: Duration,
    /// 99th percentile latency.
    pub p99: Duration,
    /// Largest latency.
    pub max: Duration,
}

/// A latency in milliseconds, with the precision its size deserves.
pub struct Millis(pub Duration);

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_secs_f64() * 1000.0;
        if ms < 10.0 {
            write!(f, "{ms:.2} ms")
        } else if ms < 100.0 {
            write!(f, "{ms:.1} ms")
        } else {
            write!(f, "{ms:.0} ms")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_recorders_add_up() {
        let mut a = Recorder::new();
        let mut b = Recorder::new();
        for ms in 1..=100 {
            a.record(Duration::from_millis(ms));
        }
        b.record(Duration::from_secs(2));
        b.record_error("boom");
        a.merge(&b);
        let s = a.summary(Duration::from_secs(1));
        assert_eq!(s.ops, 101);
        assert_eq!(s.errors, 1);
        assert_eq!(a.first_errors(), ["boom"]);
        assert!((s.ops_per_sec - 101.0).abs() < 1e-9);
        assert!(s.p50 >= Duration::from_millis(50) && s.p50 <= Duration::from_millis(52));
        assert!(s.max >= Duration::from_millis(1999));
    }

    #[test]
    fn latencies_print_in_milliseconds() {
        assert_eq!(Millis(Duration::from_micros(1234)).to_string(), "1.23 ms");
        assert_eq!(Millis(Duration::from_millis(42)).to_string(), "42.0 ms");
        assert_eq!(Millis(Duration::from_millis(420)).to_string(), "420 ms");
    }
}
