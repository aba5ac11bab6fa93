//! Fan-out: each watch served from the cache has its own bounded queue, filled by the
//! feed and drained by the watch's stream.
//!
//! The feed never waits for a watcher: when a queue is full (by count, or by the bytes
//! of the events it keeps alive, see [`QueueLimits`]), the watcher is cut off (its
//! stream yields what it had, then an `Unavailable` error naming the revision to resume
//! from) and removed, as kube-apiserver's cacher terminates a blocked `cacheWatcher`.
//! Each queue also records the revision up to which it has been given every matching
//! event, updated under the same lock as the queue itself, so a progress notification
//! never claims a revision whose event is still to come.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::stream;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::budget::event_bytes;
use crate::interface::StorageError;
use crate::interface::{Event, Revision, WatchItem, WatchStream};

/// How much one watcher may have waiting, and how often an idle one hears of progress.
#[derive(Clone, Copy, Debug)]
pub(super) struct QueueLimits {
    /// Events waiting.
    pub events: usize,
    /// Bytes of the events waiting (as the window charges them, before encodings):
    /// a watcher that stops reading keeps what it has not sent alive after the window
    /// evicted it. The first event waiting always fits.
    pub bytes: usize,
    pub progress_interval: Duration,
}

/// Why a watcher's stream ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// The cacher was closed: the stream ends without an error.
    Closed,
    /// The watcher fell behind (or the cache re-listed): the stream ends with an
    /// `Unavailable` error naming this revision to resume from.
    CutOff {
        resume_from: Revision,
        reason: CutOffReason,
    },
}

/// What cut a watcher off, for its error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CutOffReason {
    /// Its queue was full.
    TooSlow,
    /// The cache lost its history and re-listed.
    Relisted,
}

/// One watcher's queue, shared by the feed (producer) and its stream (consumer).
#[derive(Debug)]
struct Queue {
    prefix: String,
    /// Events at or below this are not for this watcher (it started after them).
    after: Revision,
    limits: QueueLimits,
    inner: Mutex<QueueState>,
    /// Wakes the stream: one consumer, so a notification sent while it is not waiting
    /// is kept for its next wait.
    notify: Notify,
}

#[derive(Debug)]
struct QueueState {
    events: VecDeque<Arc<Event>>,
    /// What `events` hold, as [`event_bytes`] counts it.
    bytes: usize,
    /// Every matching event up to this revision is in `events` or was yielded.
    progress: Revision,
    end: Option<End>,
    /// The stream was dropped: the feed removes the queue at its next pass.
    dropped: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl QueueState {
    fn pop(&mut self) -> Option<Arc<Event>> {
        let event = self.events.pop_front()?;
        self.bytes -= event_bytes(&event);
        Some(event)
    }

    fn clear(&mut self) {
        self.events.clear();
        self.bytes = 0;
    }
}

/// The watchers served from the cache.
#[derive(Debug, Default)]
pub(super) struct Watchers {
    queues: Vec<Arc<Queue>>,
}

impl Watchers {
    /// How many watchers are live (registered, not ended, their stream not dropped).
    pub fn live(&self) -> usize {
        self.queues
            .iter()
            .filter(|queue| {
                let state = queue.lock();
                !state.dropped && state.end.is_none()
            })
            .count()
    }

    /// Registers a watcher of `prefix` after `after` that first yields `replay` (events
    /// from the window, not counted against its buffer) and then what [`Watchers::dispatch`]
    /// gives it. `revision` is the cache's revision: the replay covers everything up to it.
    pub fn register(
        &mut self,
        prefix: &str,
        after: Revision,
        replay: VecDeque<Arc<Event>>,
        revision: Revision,
        limits: QueueLimits,
    ) -> WatchStream {
        let progress_interval = limits.progress_interval;
        let queue = Arc::new(Queue {
            prefix: prefix.to_string(),
            after,
            limits: QueueLimits {
                events: limits.events.max(1),
                ..limits
            },
            inner: Mutex::new(QueueState {
                events: VecDeque::new(),
                bytes: 0,
                progress: revision.max(after),
                end: None,
                dropped: false,
            }),
            notify: Notify::new(),
        });
        self.queues.push(queue.clone());
        let watch = CachedWatch {
            queue,
            replay,
            progress_interval,
            idle_deadline: Instant::now() + progress_interval,
            done: false,
        };
        Box::pin(stream::unfold(watch, |mut watch| async move {
            let item = watch.next().await?;
            Some((item, watch))
        }))
    }

    /// Hands `event` to every watcher it is for; cuts off those whose queue is full.
    /// Returns how many were cut off.
    pub fn dispatch(&mut self, event: &Arc<Event>) -> u64 {
        let mut cut = 0;
        self.queues.retain(|queue| {
            let mut state = queue.lock();
            if state.dropped || state.end.is_some() {
                return false;
            }
            if event.revision <= queue.after || !event.key.starts_with(&queue.prefix) {
                // Not this watcher's: nothing it misses up to here.
                state.progress = state.progress.max(event.revision);
                return true;
            }
            let size = event_bytes(event);
            let full = state.events.len() >= queue.limits.events
                || (!state.events.is_empty() && state.bytes + size > queue.limits.bytes);
            if full {
                state.end = Some(End::CutOff {
                    resume_from: state.progress,
                    reason: CutOffReason::TooSlow,
                });
                drop(state);
                queue.notify.notify_one();
                cut += 1;
                return false;
            }
            state.events.push_back(event.clone());
            state.bytes += size;
            state.progress = event.revision;
            drop(state);
            queue.notify.notify_one();
            true
        });
        cut
    }

    /// Records that nothing changed up to `revision` (a progress notification).
    pub fn advance(&mut self, revision: Revision) {
        self.queues.retain(|queue| {
            let mut state = queue.lock();
            state.progress = state.progress.max(revision);
            !state.dropped && state.end.is_none()
        });
    }

    /// Ends every watcher with an `Unavailable` error (when the cache re-lists and can
    /// no longer give them a gapless continuation). Returns how many.
    pub fn cut_off_all(&mut self, reason: CutOffReason) -> u64 {
        let mut cut = 0;
        for queue in self.queues.drain(..) {
            let mut state = queue.lock();
            if state.dropped || state.end.is_some() {
                continue;
            }
            state.end = Some(End::CutOff {
                resume_from: state.progress,
                reason,
            });
            drop(state);
            queue.notify.notify_one();
            cut += 1;
        }
        cut
    }

    /// Ends every watcher without an error, dropping what they had not yet yielded
    /// (the cacher was closed).
    pub fn close_all(&mut self) {
        for queue in self.queues.drain(..) {
            let mut state = queue.lock();
            state.clear();
            state.end = Some(End::Closed);
            drop(state);
            queue.notify.notify_one();
        }
    }
}

/// The consumer side of one watcher.
struct CachedWatch {
    queue: Arc<Queue>,
    /// Events from the window, yielded before the queue.
    replay: VecDeque<Arc<Event>>,
    progress_interval: Duration,
    idle_deadline: Instant,
    done: bool,
}

impl CachedWatch {
    async fn next(&mut self) -> Option<Result<WatchItem, StorageError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(event) = self.replay.pop_front() {
                return Some(Ok(self.yield_event(&event)));
            }
            {
                let mut state = self.queue.lock();
                if let Some(event) = state.pop() {
                    drop(state);
                    return Some(Ok(self.yield_event(&event)));
                }
                match state.end {
                    None => {}
                    Some(End::Closed) => {
                        self.done = true;
                        return None;
                    }
                    Some(End::CutOff {
                        resume_from,
                        reason,
                    }) => {
                        self.done = true;
                        let why = match reason {
                            CutOffReason::TooSlow => format!(
                                "fell behind (more than {} events or {} bytes waiting)",
                                self.queue.limits.events, self.queue.limits.bytes
                            ),
                            CutOffReason::Relisted => {
                                "was interrupted: the watch cache re-listed".to_string()
                            }
                        };
                        return Some(Err(StorageError::Unavailable {
                            message: format!(
                                "watch of {} {why}; resume from revision {resume_from}",
                                self.queue.prefix
                            ),
                            source: None,
                        }));
                    }
                }
            }
            tokio::select! {
                () = self.queue.notify.notified() => {}
                () = tokio::time::sleep_until(self.idle_deadline) => {
                    self.idle_deadline = Instant::now() + self.progress_interval;
                    let state = self.queue.lock();
                    // An event that arrived meanwhile goes first (next turn).
                    if state.events.is_empty() && state.end.is_none() {
                        return Some(Ok(WatchItem::Progress(state.progress)));
                    }
                }
            }
        }
    }

    fn yield_event(&mut self, event: &Event) -> WatchItem {
        self.idle_deadline = Instant::now() + self.progress_interval;
        WatchItem::Event(event.clone())
    }
}

impl Drop for CachedWatch {
    fn drop(&mut self) {
        let mut state = self.queue.lock();
        state.dropped = true;
        // Free the buffered events now rather than at the feed's next pass.
        state.clear();
    }
}
