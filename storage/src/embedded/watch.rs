//! Watches: a replay of the history, then the live events the writer sends.
//!
//! A watch subscribes to the [`Hub`] *before* it reads the current revision `R`, so
//! every write after `R` under its prefix is in its channel; the replay covers
//! `(after, R]` from the history table, and live events at or below the last revision
//! it passed on are dropped. Together: no gap, no duplicate. A consumer that falls more
//! than its channel holds behind gets an error and the stream ends (the writer never
//! waits for a watcher); it resumes from the last revision it saw.
//!
//! Progress requests ([`crate::ProgressRequests`]) are answered from the hub's
//! published revision: the writer publishes a batch's revision after it has sent the
//! batch's events, so once a watch has read the published revision and then taken what
//! its channel holds, it has every event up to that revision under its prefix, and may
//! claim it. The writer moves the store's revision before it publishes, so a request
//! for the current revision is answered as soon as its events have arrived, never
//! before.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::stream;
use redb::Database;
use tokio::time::Instant;

use super::history;
use super::hub::{Hub, Subscription};
use crate::interface::StorageError;
use crate::interface::{Event, ProgressListener, Revision, WatchItem, WatchStream};

/// Records scanned per replay read, so one blocking read stays short.
const REPLAY_CHUNK: usize = 1024;

/// Starts a watch of `prefix` after `after`: fails with `Expired` when `after` is older
/// than the compacted revision.
pub(super) async fn watch(
    db: Arc<Database>,
    hub: &Hub,
    prefix: &str,
    after: Revision,
    progress_interval: Duration,
    requests: Option<ProgressListener>,
) -> Result<WatchStream, StorageError> {
    // Subscribe first: everything committed after the read below is then in `live`.
    let live = hub.subscribe(prefix)?;
    let (current, compacted) = {
        let db = db.clone();
        tokio::task::spawn_blocking(move || history::revisions(&db))
            .await
            .map_err(|e| StorageError::internal("embedded storage read task failed", e))??
    };
    if after < compacted {
        return Err(StorageError::Expired {
            requested: after,
            compacted,
        });
    }
    let state = WatchState {
        db,
        prefix: prefix.to_string(),
        live,
        replay_next: after + 1,
        replay_until: current,
        skip_until: after.max(current),
        seen: current,
        buffer: VecDeque::new(),
        progress_interval,
        idle_deadline: Instant::now() + progress_interval,
        requests,
        wanted: None,
        done: false,
    };
    Ok(Box::pin(stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    })))
}

/// One watch's position.
struct WatchState {
    db: Arc<Database>,
    prefix: String,
    live: Subscription,
    /// The next revision to replay from history.
    replay_next: Revision,
    /// The last revision to replay (the current revision when the watch started).
    replay_until: Revision,
    /// Live events at or below this were replayed or are before the watch's start.
    skip_until: Revision,
    /// The highest revision this watch knows it has every event of: what a progress
    /// notification may claim.
    seen: Revision,
    buffer: VecDeque<Event>,
    progress_interval: Duration,
    idle_deadline: Instant,
    /// Where progress requests come from, if anywhere.
    requests: Option<ProgressListener>,
    /// The highest revision a request asked for that has not been answered yet.
    wanted: Option<Revision>,
    done: bool,
}

impl WatchState {
    async fn next(&mut self) -> Option<Result<WatchItem, StorageError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(event) = self.buffer.pop_front() {
                return Some(Ok(self.yield_event(event)));
            }
            if self.replay_next <= self.replay_until {
                if let Err(error) = self.replay_chunk().await {
                    self.done = true;
                    return Some(Err(error));
                }
                continue;
            }
            if let Some(wanted) = self.wanted {
                if self.catch_up() {
                    continue;
                }
                if self.seen >= wanted {
                    self.wanted = None;
                    self.idle_deadline = Instant::now() + self.progress_interval;
                    return Some(Ok(WatchItem::Progress(self.seen)));
                }
            }
            let waiting = self.wanted.is_some();
            let published = &mut self.live.published;
            tokio::select! {
                asked = ProgressListener::next(&mut self.requests) => {
                    self.wanted = Some(self.wanted.unwrap_or(0).max(asked));
                }
                received = self.live.events.recv() => match received {
                    Some(event) => {
                        if let Some(event) = self.passed(&event) {
                            return Some(Ok(self.yield_event(event)));
                        }
                    }
                    None if self.live.lagged.load(Ordering::Acquire) => {
                        self.done = true;
                        return Some(Err(StorageError::Unavailable {
                            message: format!(
                                "watch of {} fell more than its buffer of events behind; \
                                 resume from revision {}",
                                self.prefix, self.skip_until
                            ),
                            source: None,
                        }));
                    }
                    // The store shut down.
                    None => return None,
                },
                // Only while a request waits for events still on their way.
                Ok(()) = published.changed(), if waiting => {}
                () = tokio::time::sleep_until(self.idle_deadline) => {
                    self.idle_deadline = Instant::now() + self.progress_interval;
                    if self.catch_up() {
                        continue;
                    }
                    return Some(Ok(WatchItem::Progress(self.seen)));
                }
            }
        }
    }

    /// Takes what the channel holds up to the published revision, which `seen` then
    /// reaches (unless the watch was let go for lagging: events after what it holds
    /// never came); true when that brought events to pass on.
    fn catch_up(&mut self) -> bool {
        let published = *self.live.published.borrow_and_update();
        let mut brought = false;
        while let Ok(event) = self.live.events.try_recv() {
            if let Some(event) = self.passed(&event) {
                self.buffer.push_back(event);
                brought = true;
            }
        }
        // Read after the published revision: a watch let go before it was published
        // is seen lagging here.
        if !self.live.lagged.load(Ordering::Acquire) {
            self.seen = self.seen.max(published);
        }
        brought
    }

    /// A live event taken from the channel: moves `seen`, and is the event to pass on
    /// unless the replay already did.
    fn passed(&mut self, event: &Event) -> Option<Event> {
        self.seen = self.seen.max(event.revision);
        if event.revision <= self.skip_until {
            return None;
        }
        self.skip_until = event.revision;
        Some(event.clone())
    }

    fn yield_event(&mut self, event: Event) -> WatchItem {
        self.idle_deadline = Instant::now() + self.progress_interval;
        WatchItem::Event(event)
    }

    async fn replay_chunk(&mut self) -> Result<(), StorageError> {
        let db = self.db.clone();
        let prefix = self.prefix.clone();
        let (from, until) = (self.replay_next, self.replay_until);
        let chunk = tokio::task::spawn_blocking(move || {
            history::read_chunk(&db, &prefix, from, until, REPLAY_CHUNK)
        })
        .await
        .map_err(|e| StorageError::internal("embedded storage read task failed", e))??;
        self.replay_next = chunk.next;
        self.buffer.extend(chunk.events);
        Ok(())
    }
}
