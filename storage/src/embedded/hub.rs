//! The writer's events, routed to the watches whose prefix they fall under.
//!
//! Each watch has a channel of its own, and the writer sends an event only to the
//! watches it concerns: one broadcast of every event to every watch woke each of the
//! watch caches' streams (one per resource) on every write, to find the event was not
//! theirs (callgrind: about 176,000 instructions a write with the built-ins' caches,
//! issue #25). A watch still learns how far the store has come without an event of its
//! own: after each batch's events are sent, the writer moves [`Hub`]'s published
//! revision, which a watch reads when asked for progress (and only then waits on).
//!
//! A watch whose channel is full when an event is sent is let go, marked as lagging
//! (the writer never waits for a watcher); its stream ends with an error once it has
//! taken what the channel still holds.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, watch};

use super::tables::closed;
use crate::interface::{Event, Revision, StorageError};

/// The watches' channels, and the revision they have all been sent the events up to.
pub(super) struct Hub {
    state: Mutex<State>,
    /// Every event up to this revision is in the channel of each watch it concerns.
    published: watch::Sender<Revision>,
    /// Events a watch's channel holds before the watch is let go.
    capacity: usize,
}

struct State {
    /// False once the store is closing: no new watch may start.
    open: bool,
    watches: Vec<Route>,
}

/// Where the events under one prefix go.
struct Route {
    prefix: String,
    events: mpsc::Sender<Arc<Event>>,
    lagged: Arc<AtomicBool>,
}

/// One watch's end of the hub.
pub(super) struct Subscription {
    /// The events under its prefix, in revision order.
    pub events: mpsc::Receiver<Arc<Event>>,
    /// Set when the watch fell `capacity` events behind and was let go.
    pub lagged: Arc<AtomicBool>,
    /// How far the store's events have been sent.
    pub published: watch::Receiver<Revision>,
}

impl Hub {
    /// A hub with no watches, at `revision`, whose watches may fall `capacity` events
    /// behind.
    pub fn new(revision: Revision, capacity: usize) -> Self {
        Self {
            state: Mutex::new(State {
                open: true,
                watches: Vec::new(),
            }),
            published: watch::Sender::new(revision),
            capacity: capacity.max(1),
        }
    }

    /// A channel of the events under `prefix` committed from now on.
    pub fn subscribe(&self, prefix: &str) -> Result<Subscription, StorageError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if !state.open {
            return Err(closed());
        }
        let (sender, events) = mpsc::channel(self.capacity);
        let lagged = Arc::new(AtomicBool::new(false));
        state.watches.push(Route {
            prefix: prefix.to_string(),
            events: sender,
            lagged: lagged.clone(),
        });
        Ok(Subscription {
            events,
            lagged,
            published: self.published.subscribe(),
        })
    }

    /// Sends each of a batch's `events` to the watches under whose prefix it falls, then
    /// publishes `revision`, the batch's last.
    pub fn publish(&self, events: Vec<Event>, revision: Revision) {
        {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            // Watches that ended are dropped here, the writer's only visit.
            state.watches.retain(|w| !w.events.is_closed());
            for event in events {
                let event = Arc::new(event);
                state.watches.retain(|w| {
                    if !event.key.starts_with(&w.prefix) {
                        return true;
                    }
                    match w.events.try_send(event.clone()) {
                        Ok(()) => true,
                        Err(mpsc::error::TrySendError::Full(_)) => {
                            w.lagged.store(true, Ordering::Release);
                            false
                        }
                        Err(mpsc::error::TrySendError::Closed(_)) => false,
                    }
                });
            }
        }
        // Only watches waiting for progress are woken.
        self.published.send_if_modified(|published| {
            let moved = revision > *published;
            *published = (*published).max(revision);
            moved
        });
    }

    /// No new watch may start; those running get the events still to come.
    pub fn close(&self) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .open = false;
    }

    /// The writer has stopped: every watch's stream ends after what it was sent.
    pub fn finish(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.open = false;
        state.watches.clear();
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::interface::EventKind;

    fn event(key: &str, revision: Revision) -> Event {
        Event::new(EventKind::Created, key.into(), revision, Bytes::new(), None)
    }

    fn taken(sub: &mut Subscription) -> Vec<Revision> {
        std::iter::from_fn(|| sub.events.try_recv().ok())
            .map(|e| e.revision)
            .collect()
    }

    #[test]
    fn events_go_only_to_the_watches_they_concern() {
        let hub = Hub::new(0, 4);
        let mut a = hub.subscribe("/a/").unwrap();
        let mut b = hub.subscribe("/b/").unwrap();
        hub.publish(
            vec![event("/a/1", 1), event("/b/1", 2), event("/c/1", 3)],
            3,
        );
        assert_eq!(taken(&mut a), [1]);
        assert_eq!(taken(&mut b), [2]);
        // Neither saw event 3, yet both know the store has come that far.
        assert!(a.published.has_changed().unwrap());
        assert_eq!(*a.published.borrow_and_update(), 3);
        // Nothing for a's prefix: nothing wakes it.
        hub.publish(vec![event("/b/2", 4)], 4);
        assert_eq!(taken(&mut a), Vec::<Revision>::new());
        assert_eq!(*a.published.borrow(), 4);
    }

    #[test]
    fn a_watch_that_falls_behind_is_let_go_and_told() {
        let hub = Hub::new(0, 2);
        let mut slow = hub.subscribe("/s/").unwrap();
        let gone = hub.subscribe("/s/").unwrap();
        drop(gone);
        hub.publish((1..=3).map(|r| event("/s/k", r)).collect(), 3);
        assert!(slow.lagged.load(Ordering::Acquire));
        assert_eq!(taken(&mut slow), [1, 2]);
        assert!(slow.events.try_recv().is_err());
        let state = hub.state.lock().unwrap();
        assert!(
            state.watches.is_empty(),
            "neither the slow nor the dropped watch stays"
        );
    }

    #[test]
    fn closing_refuses_new_watches_and_finishing_ends_the_running_ones() {
        let hub = Hub::new(7, 4);
        let mut running = hub.subscribe("/r/").unwrap();
        hub.close();
        assert!(hub.subscribe("/r/").is_err());
        // Writes queued before the close still reach the running watch.
        hub.publish(vec![event("/r/k", 8)], 8);
        hub.finish();
        assert_eq!(taken(&mut running), [8]);
        assert!(matches!(
            running.events.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(!running.lagged.load(Ordering::Acquire));
    }
}
