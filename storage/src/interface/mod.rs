//! The one seam between the API machinery and persistence, as `storage.Interface` is in
//! k8s.io/apiserver: keys and opaque values, one global revision counter, and watches
//! from a revision.
//!
//! Semantics every backend (and the [`crate::Cacher`] in front of one) keeps:
//! - Every successful write (create, update, delete) takes the next value of one global,
//!   strictly increasing revision counter, shared by all keys. The first write is
//!   revision 1 or higher; an empty store is at revision 0 or its first revision.
//! - A key's `create_revision` is the revision of the write that created it and its
//!   `mod_revision` the revision of its last write. The API's `resourceVersion` is the
//!   `mod_revision`, so objects compare by it.
//! - Compaction forgets history at and below a revision: reads `Exact` at, and watches
//!   from, a revision below the compacted one fail with [`StorageError::Expired`].
//! - A key written with a time-to-live ([`Storage::create_with_ttl`],
//!   [`Storage::update_with_ttl`]) is deleted by the store itself once the TTL has passed
//!   since that write, as kube-apiserver makes Events expire with an etcd lease of
//!   `--event-ttl`. That delete is an ordinary one: it takes the next revision, watches
//!   see a `Deleted` event with the key's last value, and reads no longer find the key.
//!   Expiry happens within about a second after the deadline (etcd's lease granularity
//!   is one second); it is never early. Only the latest write decides: a write with a
//!   TTL sets a new deadline, a plain `create`/`update` leaves the key without one.

pub mod error;
mod progress;

use std::any::Any;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::Stream;

pub use error::StorageError;
pub use progress::{ProgressListener, ProgressRequests};

/// A position in the store's history.
pub type Revision = i64;

/// Result of a storage operation.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// One stored key with its value and revisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    /// The full key, e.g. `/registry/example.kapi.dev/widgets/default/w1`.
    pub key: String,
    /// The opaque value (kapi stores JSON).
    pub value: Bytes,
    /// Revision of the write that created the key.
    pub create_revision: Revision,
    /// Revision of the key's last write.
    pub mod_revision: Revision,
    /// Where encodings of this state of the key may be memoised: the watch cache's
    /// objects carry one, shared by every read of the same state; values read from a
    /// backend carry none. Never part of equality.
    pub memo: ValueMemo,
}

/// The [`Encodings`] a [`KeyValue`] may carry: kept by the watch cache beside each
/// object, so that every read of one state of a key shares what consumers made of it
/// (a protobuf list need not re-encode unchanged objects). Unlike an event's, these are
/// not billed to the cache's window: they live as long as the object's state does,
/// and are made only for formats that are asked for.
#[derive(Clone, Default)]
pub struct ValueMemo(Option<Encodings>);

impl ValueMemo {
    /// A memo of its own, empty.
    pub fn new() -> Self {
        Self(Some(Encodings::default()))
    }

    /// The memo, if this value has one.
    pub fn encodings(&self) -> Option<&Encodings> {
        self.0.as_ref()
    }
}

impl PartialEq for ValueMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ValueMemo {}

impl std::fmt::Debug for ValueMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(encodings) => encodings.fmt(f),
            None => f.write_str("no memo"),
        }
    }
}

/// Which state a read must observe, as `resourceVersion` + `resourceVersionMatch` say it
/// in the API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadAt {
    /// The latest state, read from the backend itself (a quorum read on etcd).
    #[default]
    Latest,
    /// Any state, however stale (`resourceVersion=0`): a cache may answer.
    Any,
    /// A state at this revision or newer. A backend answers with its latest state if that
    /// is at least this revision and fails with [`StorageError::TooLargeRevision`]
    /// otherwise; a cache answers if it has caught up.
    NotOlderThan(Revision),
    /// Exactly the state at this revision (`Expired` when compacted away, and
    /// `TooLargeRevision` when it is in the future).
    Exact(Revision),
}

/// What to list: a prefix, a state, and a page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListRequest {
    /// Only keys starting with this prefix. Callers end it with `/` so that
    /// `/registry/widgets/a` does not match `/registry/widgets/ab/...`.
    pub prefix: String,
    /// Which state to read.
    pub read_at: ReadAt,
    /// Start at this key (inclusive) instead of the beginning of the prefix: pagination
    /// passes the key after the last one it returned, at the same `Exact` revision.
    pub start_key: Option<String>,
    /// At most this many items; `None` (or `Some(0)`, as in etcd) for all.
    pub limit: Option<usize>,
}

/// A page of a list, in ascending key order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListResponse {
    /// The items of this page.
    pub items: Vec<KeyValue>,
    /// The revision the whole list is consistent at (the store's revision at the time of
    /// the read, or the `Exact` revision asked for). Not the highest `mod_revision` among
    /// the items.
    pub revision: Revision,
    /// How many more keys under the prefix follow this page at the same revision (0 when
    /// this is the last page).
    pub remaining: u64,
}

/// What happened to a key, as a watch reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The key was created.
    Created,
    /// The key's value was replaced.
    Modified,
    /// The key was deleted.
    Deleted,
}

/// One change seen by a watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// The key it happened to.
    pub key: String,
    /// The revision of the write (for a delete: the revision of the delete itself).
    pub revision: Revision,
    /// The value after the write; for `Deleted`, the value the key last had.
    pub value: Bytes,
    /// The value before the write (`None` for `Created`). Watch filters need it: an
    /// object that stops matching a label selector is a DELETED event to that watcher.
    pub prev_value: Option<Bytes>,
    /// What consumers made of this event, shared by every copy of it: a watch cache
    /// hands the same event to thousands of watchers, and each wire form should be
    /// made once, not once per watcher (kube-apiserver's `cachingObject`).
    pub encodings: Encodings,
}

impl Event {
    /// An event with no encodings yet.
    pub fn new(
        kind: EventKind,
        key: String,
        revision: Revision,
        value: Bytes,
        prev_value: Option<Bytes>,
    ) -> Self {
        Self {
            kind,
            key,
            revision,
            value,
            prev_value,
            encodings: Encodings::default(),
        }
    }
}

/// Encodings of one [`Event`], memoised under keys the consumer chooses (a hash of the
/// format, version and event type, say), and anything else consumers derive from it
/// once for every watcher (what selectors look at, as kube's `watchCacheEvent` keeps
/// an object's labels and fields). Clones share the memo. Derived data: two events are
/// equal whatever their memos hold.
///
/// The memo counts the bytes it holds ([`Encodings::bytes`]), and the watch cache that
/// keeps the event bills them to its memory budget as they are made.
#[derive(Clone, Default)]
pub struct Encodings(Arc<Memo>);

/// What [`Encodings`] share.
#[derive(Default)]
struct Memo {
    entries: Mutex<Vec<(u64, Memoised)>>,
    /// Taken after `entries` when both are (never the other way round), and held only
    /// for arithmetic, so billing never waits for an encoding being made.
    billing: Mutex<Billing>,
}

/// The memo's size and who pays for it.
#[derive(Default)]
struct Billing {
    /// The bytes of every memoised encoding, with [`MEMO_ENTRY_OVERHEAD`] each.
    bytes: usize,
    /// Charged for each encoding memoised while it is set.
    meter: Option<Arc<dyn Meter>>,
}

/// One memoised entry.
#[derive(Clone)]
enum Memoised {
    /// An encoding.
    Bytes(Bytes),
    /// Something else derived from the event ([`Encodings::try_get_or_derive`]).
    Derived(Arc<dyn Any + Send + Sync>),
}

/// What one memoised entry costs beyond its bytes: its slot in the memo.
const MEMO_ENTRY_OVERHEAD: usize = std::mem::size_of::<(u64, Memoised)>();

/// Pays for the encodings memoised in the [`Encodings`] it is billed to (the watch
/// cache's account of its event window). Called with the memo's billing lock held: it
/// must be quick and take no lock a biller holds while it calls
/// [`Encodings::stop_billing`].
pub(crate) trait Meter: Send + Sync + std::fmt::Debug {
    /// `bytes` more are held.
    fn charge(&self, bytes: usize);
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The bytes of `entry` if it is the encoding under `key`.
fn encoding((k, entry): &(u64, Memoised), key: u64) -> Option<Bytes> {
    match entry {
        Memoised::Bytes(bytes) if *k == key => Some(bytes.clone()),
        _ => None,
    }
}

impl Encodings {
    /// The encoding stored under `key`, made by `encode` if there is none yet. Callers
    /// racing for the same key wait for the first, then share its bytes.
    pub fn get_or_insert_with(&self, key: u64, encode: impl FnOnce() -> Bytes) -> Bytes {
        let Ok(bytes) = self.try_get_or_insert_with(key, || Ok::<_, Infallible>(encode()));
        bytes
    }

    /// The encoding stored under `key`, if one is.
    pub fn get(&self, key: u64) -> Option<Bytes> {
        lock(&self.0.entries)
            .iter()
            .find_map(|entry| encoding(entry, key))
    }

    /// [`Encodings::get_or_insert_with`] for an encoding that can fail: a failure is
    /// returned and nothing is memoised.
    pub fn try_get_or_insert_with<E>(
        &self,
        key: u64,
        encode: impl FnOnce() -> std::result::Result<Bytes, E>,
    ) -> std::result::Result<Bytes, E> {
        let mut entries = lock(&self.0.entries);
        if let Some(bytes) = entries.iter().find_map(|entry| encoding(entry, key)) {
            return Ok(bytes);
        }
        let bytes = encode()?;
        entries.push((key, Memoised::Bytes(bytes.clone())));
        self.charge(bytes.len() + MEMO_ENTRY_OVERHEAD);
        Ok(bytes)
    }

    /// A value of type `T` derived from the event under `key`, made by `derive` (which
    /// returns it with the bytes it holds, billed as an encoding's) if there is none
    /// yet. Racing callers wait for the first; a failure is returned and nothing is
    /// memoised.
    pub fn try_get_or_derive<T: Any + Send + Sync, E>(
        &self,
        key: u64,
        derive: impl FnOnce() -> std::result::Result<(T, usize), E>,
    ) -> std::result::Result<Arc<T>, E> {
        let mut entries = lock(&self.0.entries);
        let found = entries.iter().find_map(|(k, entry)| match entry {
            Memoised::Derived(any) if *k == key => any.clone().downcast::<T>().ok(),
            _ => None,
        });
        if let Some(derived) = found {
            return Ok(derived);
        }
        let (derived, size) = derive()?;
        let derived = Arc::new(derived);
        entries.push((key, Memoised::Derived(derived.clone())));
        self.charge(size + MEMO_ENTRY_OVERHEAD);
        Ok(derived)
    }

    fn charge(&self, size: usize) {
        let mut billing = lock(&self.0.billing);
        billing.bytes += size;
        if let Some(meter) = &billing.meter {
            meter.charge(size);
        }
    }

    /// How many encodings are memoised.
    pub fn len(&self) -> usize {
        lock(&self.0.entries).len()
    }

    /// Whether nothing is memoised yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many bytes the memoised encodings hold (each counted with its slot in the
    /// memo).
    pub fn bytes(&self) -> usize {
        lock(&self.0.billing).bytes
    }

    /// Bills later encodings to `meter` and returns the bytes already memoised, which
    /// the caller charges itself; `None` (and nothing changes) when another meter is
    /// billed already: the first one pays.
    pub(crate) fn bill_to(&self, meter: &Arc<dyn Meter>) -> Option<usize> {
        let mut billing = lock(&self.0.billing);
        if billing.meter.is_some() {
            return None;
        }
        billing.meter = Some(meter.clone());
        Some(billing.bytes)
    }

    /// Stops billing `meter` (if it is the one billed) and returns the bytes memoised
    /// so far: everything it was charged for, with what [`Encodings::bill_to`]
    /// returned.
    pub(crate) fn stop_billing(&self, meter: &Arc<dyn Meter>) -> usize {
        let mut billing = lock(&self.0.billing);
        match &billing.meter {
            Some(billed) if Arc::ptr_eq(billed, meter) => {
                billing.meter = None;
                billing.bytes
            }
            _ => 0,
        }
    }
}

impl PartialEq for Encodings {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Encodings {}

impl std::fmt::Debug for Encodings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Encodings({})", self.len())
    }
}

/// What a watch stream yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchItem {
    /// A change.
    Event(Event),
    /// No change under the watched prefix happened up to this revision: the source of
    /// BOOKMARK events. Backends send one at least every few seconds while idle.
    Progress(Revision),
}

/// A stream of changes, in revision order, without gaps. It ends when the backend can
/// no longer guarantee that (after yielding `Err`), or when the store shuts down; the
/// consumer then resumes from the last revision it saw.
pub type WatchStream = Pin<Box<dyn Stream<Item = Result<WatchItem>> + Send>>;

/// The storage interface. Keys follow kube-apiserver's layout,
/// `{prefix}/{group}/{plural}/{namespace}/{name}`; values are opaque bytes.
#[async_trait]
pub trait Storage: Send + Sync + 'static {
    /// Creates `key`; fails with [`StorageError::AlreadyExists`] if it exists. Returns the
    /// stored key with its new revision.
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue>;

    /// [`Storage::create`], and the store deletes the key once `ttl` has passed since
    /// this write (unless a later write changes that; see the module docs). The delete
    /// comes within about a second after the deadline, never before it. etcd counts
    /// TTLs in whole seconds: a TTL is rounded up to the next second, and is at least
    /// one.
    async fn create_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue>;

    /// Reads one key; `Ok(None)` when it does not exist at that state.
    async fn get(&self, key: &str, read_at: ReadAt) -> Result<Option<KeyValue>>;

    /// Reads the keys under a prefix, in key order, as one consistent snapshot.
    async fn list(&self, request: &ListRequest) -> Result<ListResponse>;

    /// Replaces `key`'s value if its `mod_revision` is still `expected`: a compare and
    /// swap. Fails with [`StorageError::NotFound`] if the key is gone and
    /// [`StorageError::Conflict`] (carrying the current state) if it changed.
    /// A key that had a time-to-live loses it: it stays until deleted.
    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue>;

    /// [`Storage::update`], and the store deletes the key once `ttl` has passed since
    /// this write, replacing any earlier deadline (see [`Storage::create_with_ttl`]).
    async fn update_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        ttl: Duration,
    ) -> Result<KeyValue>;

    /// Deletes `key`, if `expected` is `Some`, only while its `mod_revision` is still that.
    /// Returns the deleted state and the revision of the delete.
    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted>;

    /// Watches every key under `prefix` for changes after revision `after` (exclusive).
    /// Fails with [`StorageError::Expired`] when `after` is older than the compacted
    /// revision.
    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream>;

    /// [`Storage::watch`], and the watch answers `requests` when the backend
    /// [answers progress requests](Storage::answers_progress_requests): after a request
    /// for revision `r` it yields a [`WatchItem::Progress`] as soon as it can vouch that
    /// every change up to a revision was yielded, repeating the request to its source
    /// when asked again. The default ignores `requests`.
    async fn watch_with_progress(
        &self,
        prefix: &str,
        after: Revision,
        requests: &ProgressRequests,
    ) -> Result<WatchStream> {
        let _ = requests;
        self.watch(prefix, after).await
    }

    /// Whether watches from [`Storage::watch_with_progress`] answer progress requests,
    /// each `Progress(r)` coming only after every event up to `r`: what lets a cache
    /// serve `Latest` reads from memory once it has caught up with
    /// [`Storage::current_revision`]. Default: `false`.
    fn answers_progress_requests(&self) -> bool {
        false
    }

    /// The store's current revision: the revision of its latest write.
    async fn current_revision(&self) -> Result<Revision>;

    /// Forgets history at and below `revision` (never the current state).
    async fn compact(&self, revision: Revision) -> Result<()>;

    /// The highest compacted revision (0 when nothing was compacted).
    async fn compacted_revision(&self) -> Result<Revision>;

    /// Shuts the store down for a clean exit: writes already accepted finish, every watch
    /// stream ends, and later calls fail with [`StorageError::Unavailable`]. Idempotent.
    /// The default does nothing, for stores with nothing to flush.
    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// What [`Storage::delete`] returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deleted {
    /// The key's last state before the delete.
    pub prev: KeyValue,
    /// The revision of the delete.
    pub revision: Revision,
}

/// What a [`guaranteed_update`] closure decides.
#[derive(Debug)]
pub enum Update {
    /// Write this value.
    Write(Bytes),
    /// Leave the key as it is (nothing changed).
    Keep,
    /// Delete the key (e.g. the last finalizer of a deleted object was removed).
    Delete,
}

/// Outcome of a [`guaranteed_update`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Updated {
    /// The value was written.
    Written(KeyValue),
    /// The closure kept the value; this is the current state.
    Kept(KeyValue),
    /// The closure asked for a delete.
    Deleted(Deleted),
}

/// Error from [`guaranteed_update`]: the storage's own, or the closure's.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError<E> {
    /// The storage failed (`NotFound` when the key does not exist).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The closure refused the update.
    #[error("update refused")]
    Rejected(E),
}

/// Reads `key`, lets `try_update` compute the new value from the current one, and writes
/// it with a compare-and-swap on the revision it read, retrying from a fresh read when
/// another writer came first: `GuaranteedUpdate` in k8s.io/apiserver. The first read
/// may be stale (`ReadAt::NotOlderThan(0)`: a cache answers with what it has); a
/// refusal or a no-op computed from it is
/// computed again from the latest state before it counts. `try_update` may run several
/// times and must be free of side effects. The write is a plain
/// [`Storage::update`], so a time-to-live the key had is cleared; see
/// [`guaranteed_update_with_ttl`].
pub async fn guaranteed_update<E, F>(
    storage: &dyn Storage,
    key: &str,
    try_update: F,
) -> Result<Updated, UpdateError<E>>
where
    F: FnMut(&KeyValue) -> Result<Update, E> + Send,
{
    guaranteed_update_with_ttl(storage, key, None, try_update).await
}

/// [`guaranteed_update`], writing with [`Storage::update_with_ttl`] when `ttl` is
/// `Some` (the key then expires `ttl` after the write) and with [`Storage::update`]
/// (no expiry) when it is `None`, as kube-apiserver's `GuaranteedUpdate` attaches the
/// TTL its `TTLFunc` computes to every write.
pub async fn guaranteed_update_with_ttl<E, F>(
    storage: &dyn Storage,
    key: &str,
    ttl: Option<Duration>,
    mut try_update: F,
) -> Result<Updated, UpdateError<E>>
where
    F: FnMut(&KeyValue) -> Result<Update, E> + Send,
{
    let mut attempt = UpdateAttempts::begin(storage, key, ttl).await?;
    loop {
        let outcome = try_update(attempt.current());
        if let Some(done) = attempt.settle(outcome).await? {
            return Ok(done);
        }
    }
}

/// The loop of [`guaranteed_update_with_ttl`] for callers whose update is computed by
/// async code (admission calls webhooks): `current` gives the state to compute from,
/// `settle` takes the decision and answers with the outcome, or `None` when the
/// decision has to be computed again from a fresher `current`.
pub struct UpdateAttempts<'a> {
    storage: &'a dyn Storage,
    key: &'a str,
    ttl: Option<Duration>,
    current: KeyValue,
    is_current: bool,
}

impl<'a> UpdateAttempts<'a> {
    /// Reads the first state, from whatever is at hand: a watch cache answers "not
    /// older than revision 0" from memory at once, without waiting for this replica's
    /// own writes as `Any` does. That state is usually current, and the compare-and-swap
    /// catches it when it is not; only what the stale state cannot decide is read again,
    /// as kube-apiserver's GuaranteedUpdate does with the cacher's object
    /// (`origStateIsCurrent`).
    pub async fn begin(
        storage: &'a dyn Storage,
        key: &'a str,
        ttl: Option<Duration>,
    ) -> Result<Self, StorageError> {
        let (current, is_current) = match storage.get(key, ReadAt::NotOlderThan(0)).await? {
            Some(kv) => (kv, false),
            None => (Self::latest(storage, key).await?, true),
        };
        Ok(Self {
            storage,
            key,
            ttl,
            current,
            is_current,
        })
    }

    async fn latest(storage: &dyn Storage, key: &str) -> Result<KeyValue, StorageError> {
        storage
            .get(key, ReadAt::Latest)
            .await?
            .ok_or_else(|| StorageError::NotFound {
                key: key.to_string(),
            })
    }

    /// The state to compute the next decision from.
    pub fn current(&self) -> &KeyValue {
        &self.current
    }

    async fn refresh(&mut self) -> Result<(), StorageError> {
        self.current = Self::latest(self.storage, self.key).await?;
        self.is_current = true;
        Ok(())
    }

    /// Carries out a decision computed from [`current`](Self::current): `Some` with the
    /// outcome, or `None` when another writer came first (or a stale state refused or
    /// kept) and the decision must be computed again.
    pub async fn settle<E>(
        &mut self,
        decision: Result<Update, E>,
    ) -> Result<Option<Updated>, UpdateError<E>> {
        let (storage, key) = (self.storage, self.key);
        let outcome = match decision {
            // A refusal or a no-op may be the stale state's doing: decide on the latest.
            Err(_) | Ok(Update::Keep) if !self.is_current => {
                self.refresh().await?;
                return Ok(None);
            }
            Err(e) => return Err(UpdateError::Rejected(e)),
            Ok(Update::Keep) => return Ok(Some(Updated::Kept(self.current.clone()))),
            Ok(Update::Write(value)) => match self.ttl {
                Some(ttl) => storage.update_with_ttl(key, value, self.current.mod_revision, ttl),
                None => storage.update(key, value, self.current.mod_revision),
            }
            .await
            .map(Updated::Written),
            Ok(Update::Delete) => storage
                .delete(key, Some(self.current.mod_revision))
                .await
                .map(Updated::Deleted),
        };
        match outcome {
            Err(StorageError::Conflict {
                current: Some(fresh),
                ..
            }) => {
                self.current = *fresh;
                self.is_current = true;
            }
            Err(StorageError::Conflict { current: None, .. }) => self.refresh().await?,
            other => return Ok(Some(other?)),
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_values_are_made_once_and_kept_apart_from_encodings() {
        let memo = Encodings::default();
        let made = std::sync::atomic::AtomicUsize::new(0);
        let derive = || {
            made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok::<_, ()>((vec!["a".to_string()], 40))
        };
        let first = memo.try_get_or_derive(3, derive).unwrap();
        let again = memo.try_get_or_derive(3, derive).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(made.into_inner(), 1);
        assert_eq!(memo.bytes(), 40 + MEMO_ENTRY_OVERHEAD);
        // The same key as an encoding, or as another type, is another entry.
        assert_eq!(memo.get(3), None);
        assert_eq!(memo.get_or_insert_with(3, || Bytes::from_static(b"x")), "x");
        let other = memo
            .try_get_or_derive(3, || Ok::<_, ()>((7u32, 4)))
            .unwrap();
        assert_eq!(*other, 7);
        // A failure is returned and nothing is memoised.
        assert_eq!(memo.try_get_or_derive::<u8, _>(9, || Err("no")), Err("no"));
        assert_eq!(memo.len(), 3);
    }
}
