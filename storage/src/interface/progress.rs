//! Progress on demand: [`ProgressRequests`], with which a watch's consumer asks the
//! watch to say how far it has come, as kube-apiserver's cacher asks etcd
//! (`RequestProgress`) before it serves a consistent read from memory.

use tokio::sync::watch;

use super::Revision;

#[cfg(doc)]
use super::{Storage, WatchItem};

/// The requests a consumer makes of one watch from [`Storage::watch_with_progress`]:
/// each [`ProgressRequests::request`] asks the watch for a [`WatchItem::Progress`] that
/// reaches `at_least` if the backend can vouch for it. Requests made before the watch
/// had a chance to answer are answered together.
///
/// Cheap to clone; clones ask the same watch.
#[derive(Clone, Debug)]
pub struct ProgressRequests {
    asked: watch::Sender<Asked>,
}

/// What has been asked so far: how many requests, and the highest revision asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Asked {
    /// How many requests were made (a new one asks again even for the same revision:
    /// etcd may have answered below it).
    pub requests: u64,
    /// The highest revision a request asked the watch to reach.
    pub at_least: Revision,
}

impl Default for ProgressRequests {
    fn default() -> Self {
        Self::new()
    }
}

impl ProgressRequests {
    /// Requests that no watch listens to yet.
    pub fn new() -> Self {
        Self {
            asked: watch::Sender::new(Asked::default()),
        }
    }

    /// Asks for a progress notification that reaches `at_least`.
    pub fn request(&self, at_least: Revision) {
        self.asked.send_modify(|asked| {
            asked.requests += 1;
            asked.at_least = asked.at_least.max(at_least);
        });
    }

    /// What a watch listens to: it wakes on every new request.
    pub fn subscribe(&self) -> ProgressListener {
        ProgressListener {
            asked: self.asked.subscribe(),
        }
    }
}

/// The watch's end of [`ProgressRequests`].
#[derive(Debug)]
pub struct ProgressListener {
    asked: watch::Receiver<Asked>,
}

impl ProgressListener {
    /// Waits for a request not yet seen and returns what has been asked. Pends forever
    /// once every [`ProgressRequests`] is gone, so that it can sit in a `select!`.
    pub async fn requested(&mut self) -> Asked {
        if self.asked.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
        *self.asked.borrow_and_update()
    }
}
