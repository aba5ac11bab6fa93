//! Watches on etcd: one gRPC watch stream per watch, from `after + 1`, with the previous
//! value of every change.
//!
//! etcd's own progress notifications come every ten minutes by default, so while the
//! stream is idle this side asks for one (`RequestProgress`) every progress interval;
//! etcd answers with its current revision once every event up to it was sent. A
//! compaction past the watch's position, a cancel, or a broken stream ends it with an
//! `Err` item: the consumer resumes from the last revision it saw.
//!
//! Debian's etcd 3.4.23 predates fixes to progress notifications (one could come before
//! every event up to its revision was sent) and to some watch regressions, so every
//! revision is checked to move forward ([`Sequence`]). An event at or below the last
//! event's revision (a replay) ends the watch, and the consumer resumes from the last
//! good revision. An event between the last event and a progress revision already
//! passed on means that notification was premature: the consumer may have served reads
//! at that revision, so the watch ends as `Expired`, which makes a cache re-list.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use etcd_client::{EventType, WatchRequestSender, WatchResponse, WatchResponseStream};
use futures_util::StreamExt;
use tokio::time::Instant;

use super::Shared;
use super::error::{bad_key, map};
use crate::interface::StorageError;
use crate::interface::{Event, EventKind, ProgressListener, Revision, WatchItem};

/// One running watch.
pub(super) struct EtcdWatch {
    pub requests: WatchRequestSender,
    pub responses: WatchResponseStream,
    pub shared: Arc<Shared>,
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// The last revisions passed on.
    pub sequence: Sequence,
    pub buffer: VecDeque<WatchItem>,
    pub progress_interval: Duration,
    pub idle_deadline: Instant,
    /// Where the consumer's progress requests come from, if anywhere: each is passed
    /// on to etcd as a `RequestProgress` (requests made meanwhile collapse into one).
    pub progress_requests: Option<ProgressListener>,
    pub done: bool,
}

impl EtcdWatch {
    pub async fn next(&mut self) -> Option<Result<WatchItem, StorageError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(item) = self.buffer.pop_front() {
                self.idle_deadline = Instant::now() + self.progress_interval;
                return Some(Ok(item));
            }
            tokio::select! {
                response = self.responses.next() => {
                    let result = match response {
                        Some(Ok(response)) => self.receive(response),
                        Some(Err(error)) => Err(map(error)),
                        None => Err(StorageError::Unavailable {
                            message: "etcd closed the watch stream".to_string(),
                            source: None,
                        }),
                    };
                    if let Err(error) = result {
                        self.done = true;
                        return Some(Err(error));
                    }
                }
                _ = ProgressListener::next(&mut self.progress_requests) => {
                    if let Err(error) = self.requests.request_progress().await {
                        self.done = true;
                        return Some(Err(map(error)));
                    }
                }
                () = tokio::time::sleep_until(self.idle_deadline) => {
                    self.idle_deadline = Instant::now() + self.progress_interval;
                    if let Err(error) = self.requests.request_progress().await {
                        self.done = true;
                        return Some(Err(map(error)));
                    }
                }
                _ = self.shutdown.changed() => {
                    // The store is closing (or gone): end quietly, as the trait says.
                    self.done = true;
                    return None;
                }
            }
        }
    }

    /// Turns one response into buffered items, or the error that ends the watch.
    fn receive(&mut self, response: WatchResponse) -> Result<(), StorageError> {
        let compacted = response.compact_revision();
        if compacted > 0 {
            self.shared.compacted.fetch_max(compacted, Ordering::AcqRel);
            return Err(StorageError::Expired {
                requested: self.sequence.last(),
                compacted,
            });
        }
        if response.canceled() {
            return Err(StorageError::Unavailable {
                message: format!("etcd canceled the watch: {}", response.cancel_reason()),
                source: None,
            });
        }
        if response.events().is_empty() {
            if !response.created() {
                // A progress notification: every event up to this revision was sent.
                let revision = response.header().map_or(0, |h| h.revision());
                let last = self.sequence.progress(revision);
                self.buffer.push_back(WatchItem::Progress(last));
            }
            return Ok(());
        }
        for event in response.events() {
            let event = convert(event)?;
            if let Err(error) = self.sequence.event(event.revision) {
                tracing::warn!(%error, "etcd watch went backwards; ending it");
                return Err(error);
            }
            self.buffer.push_back(WatchItem::Event(event));
        }
        Ok(())
    }
}

/// The revisions a watch has passed on, which may only move forward.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sequence {
    /// The last event's revision (or where the watch started).
    last_event: Revision,
    /// The last revision passed on, events and progress notifications alike.
    last: Revision,
}

impl Sequence {
    /// A watch that passes on what comes after `after`.
    pub fn after(after: Revision) -> Self {
        Self {
            last_event: after,
            last: after,
        }
    }

    /// The last revision passed on.
    pub fn last(&self) -> Revision {
        self.last
    }

    /// Takes a progress notification at `revision`; returns the revision to pass on
    /// (never lower than one passed on before).
    pub fn progress(&mut self, revision: Revision) -> Revision {
        self.last = self.last.max(revision);
        self.last
    }

    /// Takes an event at `revision`, or refuses it when it does not move forward.
    pub fn event(&mut self, revision: Revision) -> Result<(), StorageError> {
        if revision <= self.last_event {
            return Err(StorageError::Unavailable {
                message: format!(
                    "etcd sent revision {revision} after revision {}",
                    self.last_event
                ),
                source: None,
            });
        }
        if revision <= self.last {
            // Reads may have been served at `last` without this event: only a fresh
            // list repairs that.
            return Err(StorageError::Expired {
                requested: self.last,
                compacted: revision,
            });
        }
        self.last_event = revision;
        self.last = revision;
        Ok(())
    }
}

/// An etcd event as a kapi [`Event`].
fn convert(event: &etcd_client::Event) -> Result<Event, StorageError> {
    let kv = event.kv().ok_or_else(|| StorageError::Internal {
        message: "etcd sent a watch event without its key".to_string(),
        source: None,
    })?;
    let key = kv.key_str().map_err(|_| bad_key(kv.key()))?.to_string();
    let prev_value = event
        .prev_kv()
        .map(|prev| Bytes::copy_from_slice(prev.value()));
    Ok(match event.event_type() {
        EventType::Put if kv.create_revision() == kv.mod_revision() => Event::new(
            EventKind::Created,
            key,
            kv.mod_revision(),
            Bytes::copy_from_slice(kv.value()),
            None,
        ),
        EventType::Put => Event::new(
            EventKind::Modified,
            key,
            kv.mod_revision(),
            Bytes::copy_from_slice(kv.value()),
            prev_value,
        ),
        // etcd's delete event has an empty value; the last one is the previous value
        // (missing only when that revision was compacted away meanwhile).
        EventType::Delete => Event::new(
            EventKind::Deleted,
            key,
            kv.mod_revision(),
            prev_value.clone().unwrap_or_default(),
            prev_value,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_only_move_forward() {
        let mut s = Sequence::after(10);
        assert!(s.event(11).is_ok());
        assert!(s.event(15).is_ok());
        assert_eq!(s.progress(12), 15, "a stale progress does not move back");
        assert_eq!(s.progress(20), 20);
        assert!(s.event(21).is_ok());
        assert_eq!(s.last(), 21);
    }

    #[test]
    fn a_replayed_event_ends_the_watch_for_a_resume() {
        let mut s = Sequence::after(10);
        s.event(12).expect("forward");
        assert!(matches!(s.event(12), Err(StorageError::Unavailable { .. })));
        let mut s = Sequence::after(10);
        s.event(12).expect("forward");
        assert!(matches!(s.event(11), Err(StorageError::Unavailable { .. })));
    }

    #[test]
    fn an_event_behind_a_progress_notification_forces_a_relist() {
        let mut s = Sequence::after(10);
        s.event(12).expect("forward");
        s.progress(20);
        assert!(matches!(
            s.event(15),
            Err(StorageError::Expired {
                requested: 20,
                compacted: 15
            })
        ));
    }
}
