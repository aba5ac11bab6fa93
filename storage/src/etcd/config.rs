//! The settings of an [`EtcdStorage`]: [`EtcdConfig`] and its
//! builder methods.

use std::time::Duration;

#[cfg(doc)]
use super::EtcdStorage;

/// Settings of an [`EtcdStorage`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdConfig {
    /// Deadline of one etcd request (watch streams excepted). Default: 5 seconds.
    pub request_timeout: Duration,
    /// Deadline of one connection attempt to an endpoint. Default: 2 seconds.
    pub connect_timeout: Duration,
    /// How many times [`EtcdStorage::connect_with`] tries to reach the cluster before it
    /// fails. Default: 5.
    pub connect_attempts: u32,
    /// The first pause between retries; it doubles up to [`EtcdConfig::max_backoff`].
    /// Default: 100 ms.
    pub initial_backoff: Duration,
    /// The longest pause between retries. Default: 2 seconds.
    pub max_backoff: Duration,
    /// How long a watch may stay silent before it asks etcd for a progress
    /// notification. Default: 5 seconds.
    pub progress_interval: Duration,
    /// Where the compacted revision is recorded. Default: `compact_rev_key`, the key
    /// kube-apiserver uses.
    pub compacted_revision_key: String,
    /// Whether etcd sends requested progress notifications in order with watch events
    /// (3.4.31, 3.5.13 and later), which lets the watch cache serve consistent reads
    /// from memory. `None` (the default) asks the cluster's version on connecting;
    /// `Some` says it for an etcd whose version does not tell (a build with the fixes
    /// backported), or turns it off.
    pub ordered_progress: Option<bool>,
}

impl Default for EtcdConfig {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            connect_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            progress_interval: Duration::from_secs(5),
            compacted_revision_key: "compact_rev_key".to_string(),
            ordered_progress: None,
        }
    }
}

impl EtcdConfig {
    /// Sets [`EtcdConfig::request_timeout`].
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`EtcdConfig::connect_attempts`].
    pub fn with_connect_attempts(mut self, attempts: u32) -> Self {
        self.connect_attempts = attempts;
        self
    }

    /// Sets [`EtcdConfig::progress_interval`].
    pub fn with_progress_interval(mut self, interval: Duration) -> Self {
        self.progress_interval = interval;
        self
    }

    /// Sets [`EtcdConfig::compacted_revision_key`].
    pub fn with_compacted_revision_key(mut self, key: impl Into<String>) -> Self {
        self.compacted_revision_key = key.into();
        self
    }

    /// Sets [`EtcdConfig::ordered_progress`].
    pub fn with_ordered_progress(mut self, ordered: Option<bool>) -> Self {
        self.ordered_progress = ordered;
        self
    }
}
