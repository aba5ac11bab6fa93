//! The garbage collector over `metadata.ownerReferences` (kube-controller-manager's):
//!
//! - an object all of whose owners are gone is deleted (Background propagation, and
//!   dangling references);
//! - an owner being deleted with the `foregroundDeletion` finalizer has its dependents
//!   deleted (in the foreground too), and keeps that finalizer until no dependent with
//!   `blockOwnerDeletion: true` is left;
//! - an owner being deleted with the `orphan` finalizer has its owner reference removed
//!   from every dependent, then loses the finalizer.
//!
//! It keeps the uid of every object, and the owners of every object that has any (or
//! is being deleted), fed by one watch per resource that parses only each object's
//! metadata, and sweeps it after changes (batched) and on a timer. An object without
//! owners costs the collector a 16-byte key, not a copy of its metadata.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use kapi_apiserver::registry::object::{finalizers, is_being_deleted, meta, meta_str};
use kapi_apiserver::registry::watch::{EventObject, StoredWatchEvent};
use kapi_apiserver::registry::{
    DeleteOptions, Propagation, Registry, Store, Subresource, WatchEvent, WatchEventType,
    WatchOptions, WriteOptions,
};
use kapi_apiserver::registry::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
use kapi_apiserver::status::ApiError;

/// How long changes are batched before a sweep.
const BATCH: Duration = Duration::from_millis(50);
/// How long a feed waits before watching again after a watch that failed or ended
/// without an event.
const WATCH_RETRY: Duration = Duration::from_secs(1);

/// A sweep at least this often, to retry what failed.
const RESYNC: Duration = Duration::from_secs(5);

/// One owner reference.
#[derive(Clone, Debug)]
struct OwnerRef {
    uid: String,
    block: bool,
}

/// What the collector knows of one object.
#[derive(Clone, Debug)]
struct Node {
    store: usize,
    namespace: Option<String>,
    name: String,
    owners: Vec<OwnerRef>,
    deleting: bool,
    finalizers: Vec<String>,
}

impl Node {
    fn from_object(store: usize, obj: &Value) -> Self {
        let owners = meta(obj, "ownerReferences")
            .and_then(Value::as_array)
            .map(|refs| {
                refs.iter()
                    .filter_map(|r| {
                        Some(OwnerRef {
                            uid: r.get("uid")?.as_str()?.to_string(),
                            block: r
                                .get("blockOwnerDeletion")
                                .and_then(Value::as_bool)
                                .unwrap_or(false),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let ns = meta_str(obj, "namespace");
        Self {
            store,
            namespace: (!ns.is_empty()).then(|| ns.to_string()),
            name: meta_str(obj, "name").to_string(),
            owners,
            deleting: is_being_deleted(obj),
            finalizers: finalizers(obj),
        }
    }

    /// Whether the sweep has anything to decide about this object.
    fn matters(&self) -> bool {
        !self.owners.is_empty() || self.deleting
    }
}

/// The key of a uid in [`Graph::present`]: the UUID itself, or a 128-bit hash of a uid
/// that is not one.
fn uid_key(uid: &str) -> u128 {
    use std::hash::{Hash, Hasher};
    if let Ok(uuid) = uuid::Uuid::parse_str(uid) {
        return uuid.as_u128();
    }
    let half = |salt: u8| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (salt, uid).hash(&mut hasher);
        hasher.finish() as u128
    };
    (half(1) << 64) | half(2)
}

/// The objects and their owners.
#[derive(Default)]
struct Graph {
    /// Every object's uid, with the store it is in.
    present: HashMap<u128, usize>,
    /// The objects the sweep decides about: with owners, or being deleted.
    nodes: HashMap<String, Node>,
    /// Stores whose initial state has arrived.
    synced: HashSet<usize>,
}

/// What a feed tells the collector.
enum Message {
    /// A change to one of a resource's objects.
    Event(usize, WatchEvent),
    /// The resource's watch starts over from its current state: forget what was known.
    Reset(usize),
}

impl Graph {
    fn receive(&mut self, message: Message) {
        match message {
            Message::Event(store, event) => self.apply(store, &event),
            Message::Reset(store) => {
                self.present.retain(|_, s| *s != store);
                self.nodes.retain(|_, n| n.store != store);
                self.synced.remove(&store);
            }
        }
    }

    fn apply(&mut self, store: usize, event: &WatchEvent) {
        let uid = meta_str(&event.object, "uid").to_string();
        match event.type_ {
            WatchEventType::Added | WatchEventType::Modified if !uid.is_empty() => {
                self.present.insert(uid_key(&uid), store);
                let node = Node::from_object(store, &event.object);
                if node.matters() {
                    self.nodes.insert(uid, node);
                } else {
                    self.nodes.remove(&uid);
                }
            }
            WatchEventType::Deleted => {
                self.present.remove(&uid_key(&uid));
                self.nodes.remove(&uid);
            }
            WatchEventType::Bookmark => {
                self.synced.insert(store);
            }
            _ => {}
        }
    }

    fn dependents<'a>(
        &'a self,
        owner: &'a str,
    ) -> impl Iterator<Item = (&'a String, &'a Node)> + 'a {
        self.nodes
            .iter()
            .filter(move |(_, n)| n.owners.iter().any(|o| o.uid == owner))
    }
}

/// The watched stores, by the index their nodes carry, each with its feed task.
#[derive(Default)]
struct Feeds {
    next: usize,
    active: HashMap<usize, (Arc<Store>, tokio::task::JoinHandle<()>)>,
}

impl Feeds {
    /// Follows the registry: a feed for each new store, none for removed ones (whose
    /// objects the graph forgets).
    fn follow(
        &mut self,
        registry: &Registry,
        graph: &mut Graph,
        tx: &mpsc::Sender<Message>,
        shutdown: &watch::Receiver<bool>,
    ) {
        let current = watched(registry.stores());
        self.active.retain(|index, (store, task)| {
            let kept = current.iter().any(|s| Arc::ptr_eq(s, store));
            if !kept {
                task.abort();
                graph.receive(Message::Reset(*index));
            }
            kept
        });
        for store in current {
            if self.active.values().any(|(s, _)| Arc::ptr_eq(s, &store)) {
                continue;
            }
            let index = self.next;
            self.next += 1;
            let task = tokio::spawn(feed(index, store.clone(), tx.clone(), shutdown.clone()));
            self.active.insert(index, (store, task));
        }
    }

    /// Hands a feed's message to the graph, unless its store was removed meanwhile.
    fn deliver(&self, graph: &mut Graph, message: Message) {
        let index = match &message {
            Message::Event(i, _) | Message::Reset(i) => *i,
        };
        if self.active.contains_key(&index) {
            graph.receive(message);
        }
    }

    fn store(&self, index: usize) -> Option<&Store> {
        self.active.get(&index).map(|(s, _)| s.as_ref())
    }
}

impl Drop for Feeds {
    fn drop(&mut self) {
        for (_, task) in self.active.values() {
            task.abort();
        }
    }
}

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    let (tx, mut rx) = mpsc::channel::<Message>(1024);
    let mut graph = Graph::default();
    let mut feeds = Feeds::default();
    let mut changes = registry.changes();
    changes.mark_unchanged();
    feeds.follow(&registry, &mut graph, &tx, &shutdown);
    let mut tick = tokio::time::interval(RESYNC);
    loop {
        tokio::select! {
            () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
                feeds.follow(&registry, &mut graph, &tx, &shutdown);
            }
            event = rx.recv() => {
                let Some(message) = event else { return };
                feeds.deliver(&mut graph, message);
                // Batch what arrives in a short window into one sweep.
                let deadline = tokio::time::sleep(BATCH);
                tokio::pin!(deadline);
                loop {
                    tokio::select! {
                        _ = &mut deadline => break,
                        more = rx.recv() => match more {
                            Some(m) => feeds.deliver(&mut graph, m),
                            None => break,
                        },
                    }
                }
            }
            _ = tick.tick() => {}
        }
        if feeds.active.keys().all(|i| graph.synced.contains(i)) {
            sweep(&feeds, &graph).await;
        }
    }
}

/// The stores the collector watches: as kube's, only resources it can list and watch
/// (the others, the review APIs, hold no objects to own or be owned), and one version
/// of each (kube's collector watches the preferred one): every version of a resource
/// sees the same objects, and a feed per version would read each write once per
/// version. The storage version is taken when it is served, else the first served.
fn watched(stores: Vec<Arc<Store>>) -> Vec<Arc<Store>> {
    let watchable: Vec<_> = stores
        .into_iter()
        .filter(|s| s.info().serves("list") && s.info().serves("watch"))
        .collect();
    let mut chosen: Vec<Arc<Store>> = Vec::new();
    for store in watchable {
        let info = store.info();
        let same = chosen
            .iter()
            .position(|c| c.info().group == info.group && c.info().plural == info.plural);
        match same {
            None => chosen.push(store),
            Some(i) if info.storage && !chosen[i].info().storage => chosen[i] = store,
            Some(_) => {}
        }
    }
    chosen
}

/// Feeds one resource's changes into the collector, re-watching when a watch ends.
async fn feed(
    index: usize,
    store: Arc<Store>,
    tx: mpsc::Sender<Message>,
    shutdown: watch::Receiver<bool>,
) {
    let mut resume: Option<i64> = None;
    while !*shutdown.borrow() {
        if resume.is_none() && tx.send(Message::Reset(index)).await.is_err() {
            return;
        }
        let opts = WatchOptions {
            resource_version: resume,
            allow_bookmarks: true,
            send_initial_events: resume.is_none(),
            ..WatchOptions::default()
        };
        let info = store.info().clone();
        // Metadata alone is read, the same in every version: no conversion.
        let mut events = match store.watch_stored_unconverted(None, &opts).await {
            Ok(e) => e,
            Err(_) => {
                tokio::time::sleep(WATCH_RETRY).await;
                continue;
            }
        };
        let mut delivered = false;
        while let Some(event) = events.next().await {
            let Some(event) = metadata_only(&info, event) else {
                continue;
            };
            if event.type_ == WatchEventType::Error {
                resume = None; // expired: start over with the current state
                break;
            }
            delivered = true;
            if let Some(rv) = meta(&event.object, "resourceVersion").and_then(Value::as_str) {
                resume = rv.parse().ok().or(resume);
            }
            if tx.send(Message::Event(index, event)).await.is_err() {
                return;
            }
        }
        // A watch that ends before its first event (a removed CRD's closed cache, a
        // storage outage) would end again at once: wait before the next one, or the
        // feed spins, logging each failure, until the registry change reaches `run`.
        if !delivered {
            tokio::time::sleep(WATCH_RETRY).await;
        }
    }
}

/// The event with only what the collector reads of the object's `metadata` (and for
/// BOOKMARK and ERROR events, their whole object). Skipping the rest of a stored
/// object, labels, annotations and managed fields included, is much cheaper than
/// building it: every write of every resource comes through here. `None` for an
/// object that cannot be read (it is left alone).
fn metadata_only(info: &kapi_core::ResourceInfo, event: StoredWatchEvent) -> Option<WatchEvent> {
    let object = match event.object {
        EventObject::Made(object) => object,
        EventObject::Stored(stored, _) => match serde_json::from_slice::<Envelope>(&stored.value) {
            Ok(Envelope { metadata }) => metadata.into_object(stored.revision),
            Err(e) => {
                tracing::warn!(resource = %info.plural, error = %e, "garbage collector: unreadable object");
                return None;
            }
        },
    };
    Some(WatchEvent {
        type_: event.type_,
        object,
    })
}

/// A stored object, read for its metadata alone.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    metadata: Metadata<'a>,
}

/// The fields of `metadata` the collector reads ([`Node::from_object`], [`Graph::apply`]).
#[derive(Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata<'a> {
    #[serde(borrow)]
    uid: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow)]
    deletion_timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    finalizers: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow)]
    owner_references: Option<Vec<OwnerReference<'a>>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct OwnerReference<'a> {
    #[serde(borrow)]
    uid: Option<Cow<'a, str>>,
    block_owner_deletion: Option<bool>,
}

impl Metadata<'_> {
    /// `{"metadata": {...}}` with these fields and `resourceVersion`.
    fn into_object(self, revision: i64) -> Value {
        let mut meta = serde_json::Map::new();
        let strings = [
            ("uid", self.uid),
            ("name", self.name),
            ("namespace", self.namespace),
            ("deletionTimestamp", self.deletion_timestamp),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                meta.insert(key.to_string(), Value::from(value.into_owned()));
            }
        }
        meta.insert(
            "resourceVersion".to_string(),
            Value::from(revision.to_string()),
        );
        if let Some(finalizers) = self.finalizers {
            let finalizers = finalizers.into_iter().map(|f| Value::from(f.into_owned()));
            meta.insert("finalizers".to_string(), Value::Array(finalizers.collect()));
        }
        if let Some(owners) = self.owner_references {
            let owners = owners.into_iter().map(|o| {
                let mut owner = serde_json::Map::new();
                if let Some(uid) = o.uid {
                    owner.insert("uid".to_string(), Value::from(uid.into_owned()));
                }
                if let Some(block) = o.block_owner_deletion {
                    owner.insert("blockOwnerDeletion".to_string(), Value::Bool(block));
                }
                Value::Object(owner)
            });
            meta.insert(
                "ownerReferences".to_string(),
                Value::Array(owners.collect()),
            );
        }
        Value::Object(serde_json::Map::from_iter([(
            "metadata".to_string(),
            Value::Object(meta),
        )]))
    }
}

/// One pass over the graph: every decision, then the writes. Nodes of a store that
/// was just removed are skipped (the graph forgets them with the feed).
async fn sweep(feeds: &Feeds, graph: &Graph) {
    for (uid, node) in &graph.nodes {
        let Some(store) = feeds.store(node.store) else {
            continue;
        };
        // Orphan: free the dependents, then let the owner go.
        if node.deleting && node.finalizers.iter().any(|f| f == ORPHAN_FINALIZER) {
            let mut ok = true;
            for (_, dep) in graph.dependents(uid) {
                if let Some(dep_store) = feeds.store(dep.store) {
                    ok &= remove_owner_ref(dep_store, dep, uid).await;
                }
            }
            if ok {
                remove_finalizer(store, node, ORPHAN_FINALIZER).await;
            }
            continue;
        }
        // Foreground: delete the dependents; the owner waits for the blocking ones.
        if node.deleting && node.finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
            let mut blocking = false;
            for (_, dep) in graph.dependents(uid) {
                if let Some(dep_store) = feeds.store(dep.store).filter(|_| !dep.deleting) {
                    delete(dep_store, dep, Propagation::Foreground).await;
                }
                blocking |= dep.owners.iter().any(|o| o.uid == *uid && o.block);
            }
            if !blocking {
                remove_finalizer(store, node, FOREGROUND_FINALIZER).await;
            }
            continue;
        }
        // Background and dangling references: an object whose owners are all gone goes.
        if !node.owners.is_empty() && !node.deleting {
            let alive = node
                .owners
                .iter()
                .filter(|o| graph.present.contains_key(&uid_key(&o.uid)))
                .count();
            if alive == 0 {
                delete(store, node, Propagation::Background).await;
            }
        }
    }
}

async fn delete(store: &Store, node: &Node, propagation: Propagation) {
    let opts = DeleteOptions {
        propagation: Some(propagation),
        ..DeleteOptions::default()
    };
    match store
        .delete(node.namespace.as_deref(), &node.name, &opts)
        .await
    {
        Ok(_) => {
            tracing::debug!(resource = %store.info().plural, name = %node.name, "garbage collected")
        }
        Err(ApiError {
            reason: "NotFound", ..
        }) => {}
        Err(e) => {
            tracing::warn!(resource = %store.info().plural, name = %node.name, error = %e, "garbage collector: delete")
        }
    }
}

/// Writes a change to one object; false when it failed (retried at the next sweep).
async fn modify(store: &Store, node: &Node, change: impl Fn(&mut Value) + Send + Sync) -> bool {
    let result = store
        .update_with(
            node.namespace.as_deref(),
            &node.name,
            Subresource::Main,
            &WriteOptions::by(crate::controllers::MANAGER),
            |cur| {
                let mut next = cur.clone();
                change(&mut next);
                Ok(next)
            },
        )
        .await;
    match result {
        Ok(_)
        | Err(ApiError {
            reason: "NotFound", ..
        }) => true,
        Err(e) => {
            tracing::warn!(resource = %store.info().plural, name = %node.name, error = %e, "garbage collector: update");
            false
        }
    }
}

async fn remove_owner_ref(store: &Store, node: &Node, owner: &str) -> bool {
    modify(store, node, |obj| {
        if let Some(refs) = obj
            .pointer_mut("/metadata/ownerReferences")
            .and_then(Value::as_array_mut)
        {
            refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner));
            if refs.is_empty() {
                if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("ownerReferences");
                }
            }
        }
    })
    .await
}

async fn remove_finalizer(store: &Store, node: &Node, finalizer: &str) {
    modify(store, node, |obj| {
        let rest: Vec<String> = finalizers(obj)
            .into_iter()
            .filter(|f| f != finalizer)
            .collect();
        kapi_apiserver::registry::object::set_finalizers(obj, &rest);
    })
    .await;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(object: &Value, revision: i64) -> Value {
        let bytes = serde_json::to_vec(object).unwrap();
        let envelope: Envelope = serde_json::from_slice(&bytes).unwrap();
        envelope.metadata.into_object(revision)
    }

    #[test]
    fn metadata_keeps_what_the_collector_reads_and_nothing_else() {
        let object = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "a", "namespace": "ns", "uid": "u-1",
                "labels": {"x": "y"}, "annotations": {"big": "z"},
                "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {}}}],
                "deletionTimestamp": "2026-01-01T00:00:00Z",
                "finalizers": ["foregroundDeletion", "example.com/f"],
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-0",
                     "blockOwnerDeletion": true, "controller": true},
                    {"apiVersion": "v1", "kind": "Secret", "name": "p", "uid": "u-2"}
                ]
            },
            "data": {"k": "v"}
        });
        assert_eq!(
            read(&object, 42),
            json!({"metadata": {
                "name": "a", "namespace": "ns", "uid": "u-1", "resourceVersion": "42",
                "deletionTimestamp": "2026-01-01T00:00:00Z",
                "finalizers": ["foregroundDeletion", "example.com/f"],
                "ownerReferences": [{"uid": "u-0", "blockOwnerDeletion": true}, {"uid": "u-2"}]
            }})
        );
        let node = Node::from_object(0, &read(&object, 42));
        assert!(node.deleting && node.matters());
        assert_eq!(node.owners.len(), 2);
        assert!(node.owners[0].block && !node.owners[1].block);
    }

    #[test]
    fn an_object_without_metadata_has_its_revision_alone() {
        assert_eq!(
            read(&json!({"kind": "X", "spec": {"escaped": "a\"b"}}), 7),
            json!({"metadata": {"resourceVersion": "7"}})
        );
        let escaped = json!({"metadata": {"name": "a\\u00e9", "uid": "\u{e9}"}});
        assert_eq!(read(&escaped, 1)["metadata"]["name"], "a\\u00e9");
    }
}
