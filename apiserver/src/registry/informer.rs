//! Live views of stored objects, kept in memory by watching them as client-go's
//! informers do: every object of some kinds from their current state, folded by a
//! [`Mirror`] into a snapshot that readers take without waiting. The RBAC policy and
//! the webhook configurations are such views.
//!
//! Each round watches from the stored state (initial events, then the bookmark that
//! marks their end); a watch that ends (compaction, a storage outage) starts a new
//! round from scratch. Nothing is published until every kind's current objects are
//! in, so readers never see half a state, in the first round or a later one.

use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::Registry;
use super::options::WatchOptions;
use super::watch::WatchEventType;

/// How long to wait before a new round once a watch ended.
const RETRY: Duration = Duration::from_millis(200);

/// What a live view makes of the objects it watches. A fresh one (`Default`) starts
/// every round.
pub trait Mirror: Default + Send + 'static {
    /// What readers take.
    type Snapshot: Send + Sync + 'static;

    /// Folds in one event (never a bookmark) of `kind` (the plural).
    fn apply(&mut self, kind: &'static str, type_: WatchEventType, object: Value);

    /// The state so far, to publish.
    fn snapshot(&self) -> Self::Snapshot;

    /// Runs after a complete snapshot was published: work that writes back (ClusterRole
    /// aggregation). Nothing by default.
    fn published(
        &mut self,
        registry: &Registry,
        snapshot: &Self::Snapshot,
    ) -> impl Future<Output = ()> + Send {
        let _ = (registry, snapshot);
        async {}
    }
}

/// The latest complete snapshot of a view.
pub struct Live<S> {
    snapshot: RwLock<Arc<S>>,
    /// How many snapshots were published, for whoever follows the view.
    published: watch::Sender<u64>,
}

impl<S: Default> Default for Live<S> {
    fn default() -> Self {
        Live {
            snapshot: RwLock::new(Arc::new(S::default())),
            published: watch::Sender::new(0),
        }
    }
}

impl<S> Live<S> {
    /// The current snapshot (the default one until the first round is complete).
    pub fn snapshot(&self) -> Arc<S> {
        self.snapshot
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn publish(&self, snapshot: Arc<S>) {
        *self.snapshot.write().unwrap_or_else(|e| e.into_inner()) = snapshot;
        self.published.send_modify(|n| *n += 1);
    }

    /// A receiver that sees each snapshot published from now on (as a count), for
    /// work that follows the view rather than reading it per request.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.published.subscribe()
    }
}

/// The kinds one view watches: plurals of `group`/v1; `what` names it in the log.
#[derive(Clone, Copy)]
pub struct Watched {
    /// The API group.
    pub group: &'static str,
    /// The resources' plurals.
    pub kinds: &'static [&'static str],
    /// What the view is, for the log (`"the RBAC policy"`).
    pub what: &'static str,
}

/// Starts a view; the receiver turns `true` once every served kind's current objects
/// are in (at once when none is served).
pub fn start<M: Mirror>(
    registry: Arc<Registry>,
    watched: Watched,
    shutdown: watch::Receiver<bool>,
) -> (
    Arc<Live<M::Snapshot>>,
    watch::Receiver<bool>,
    JoinHandle<()>,
)
where
    M::Snapshot: Default,
{
    let live = Arc::new(Live::default());
    let (synced_tx, synced_rx) = watch::channel(false);
    let task = tokio::spawn(run::<M>(
        registry,
        watched,
        live.clone(),
        synced_tx,
        shutdown,
    ));
    (live, synced_rx, task)
}

async fn run<M: Mirror>(
    registry: Arc<Registry>,
    watched: Watched,
    live: Arc<Live<M::Snapshot>>,
    synced: watch::Sender<bool>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mark_synced = || synced.send_if_modified(|s| !std::mem::replace(s, true));
    loop {
        let (tx, mut rx) = mpsc::channel(1024);
        let watchers = watch_kinds(&registry, watched, &tx);
        drop(tx);
        let mut pending = watchers.len();
        if pending == 0 {
            // Nothing is served: the view stays empty, and that is its whole state.
            mark_synced();
            crate::shutdown::stopped(&mut shutdown).await;
            return;
        }
        let mut mirror = M::default();
        let mut ended = false;
        while !ended {
            let first = tokio::select! {
                c = rx.recv() => c,
                () = crate::shutdown::stopped(&mut shutdown) => {
                    watchers.iter().for_each(JoinHandle::abort);
                    return;
                }
            };
            let Some(first) = first else { break };
            let mut change = Some(first);
            // Everything already queued goes into one snapshot.
            while let Some(c) = change.take().or_else(|| rx.try_recv().ok()) {
                match c {
                    KindChange::Ended => ended = true,
                    KindChange::Event(_, WatchEventType::Bookmark, object) => {
                        if object["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
                        {
                            pending = pending.saturating_sub(1);
                        }
                    }
                    KindChange::Event(kind, type_, object) => mirror.apply(kind, type_, object),
                }
            }
            // Until every kind is in, the previous round's snapshot (or the empty one)
            // stays.
            if pending == 0 {
                let snapshot = Arc::new(mirror.snapshot());
                live.publish(snapshot.clone());
                mark_synced();
                mirror.published(&registry, &snapshot).await;
            }
        }
        watchers.iter().for_each(JoinHandle::abort);
        if *shutdown.borrow() {
            return;
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// What [`watch_kinds`] sends: an event of one of the kinds (its plural first), or the
/// end of one kind's watch.
enum KindChange {
    /// An event, initial ones and bookmarks included.
    Event(&'static str, WatchEventType, Value),
    /// A kind's watch ended (compaction, a storage outage, an error starting it).
    Ended,
}

/// Watches every object of each served kind of `watched` from its current state into
/// `tx`, each in a task of its own: one task per served kind.
fn watch_kinds(
    registry: &Registry,
    watched: Watched,
    tx: &mpsc::Sender<KindChange>,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    for &kind in watched.kinds {
        let Some(store) = registry.get(watched.group, "v1", kind) else {
            continue;
        };
        let tx = tx.clone();
        let what = watched.what;
        tasks.push(tokio::spawn(async move {
            let opts = WatchOptions {
                send_initial_events: true,
                allow_bookmarks: true,
                ..WatchOptions::default()
            };
            match store.watch(None, &opts).await {
                Ok(mut events) => {
                    while let Some(e) = events.next().await {
                        let change = KindChange::Event(kind, e.type_, e.object);
                        if tx.send(change).await.is_err() {
                            return;
                        }
                    }
                }
                Err(e) => tracing::warn!(kind, error = %e, "watching {what}"),
            }
            let _ = tx.send(KindChange::Ended).await;
        }));
    }
    tasks
}
