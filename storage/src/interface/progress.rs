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
    /// The highest revision asked for; every request wakes the watch, even for the
    /// same revision (etcd may have answered below it).
    at_least: watch::Sender<Revision>,
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
            at_least: watch::Sender::new(0),
        }
    }

    /// Asks for a progress notification that reaches `at_least`.
    pub fn request(&self, at_least: Revision) {
        // `send_modify` wakes the listener even when the revision stays the same.
        self.at_least
            .send_modify(|asked| *asked = (*asked).max(at_least));
    }

    /// What a watch listens to: it wakes on every new request.
    pub fn subscribe(&self) -> ProgressListener {
        ProgressListener {
            at_least: self.at_least.subscribe(),
        }
    }
}

/// The watch's end of [`ProgressRequests`].
#[derive(Debug)]
pub struct ProgressListener {
    at_least: watch::Receiver<Revision>,
}

impl ProgressListener {
    /// Waits for a request not yet seen on `listener` and returns the highest revision
    /// asked for. Pends forever without a listener, or once every
    /// [`ProgressRequests`] is gone, so that it can sit in a `select!`.
    pub async fn next(listener: &mut Option<Self>) -> Revision {
        let Some(listener) = listener else {
            return std::future::pending().await;
        };
        if listener.at_least.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
        *listener.at_least.borrow_and_update()
    }
}
