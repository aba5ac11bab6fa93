//! Watch: storage changes turned into the API's ADDED / MODIFIED / DELETED / BOOKMARK /
//! ERROR events, filtered by the watcher's selectors as kube-apiserver's cacher filters
//! them (an object that stops matching is a DELETED event to that watcher).

use std::pin::Pin;

use futures_util::{Stream, StreamExt};
use kapi_core::ResourceInfo;
use kapi_storage::{Encodings, Event, EventKind, ListRequest, ReadAt, StorageError, WatchItem};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::Store;
use super::codec::{StoredObject, memo_key};
use super::keys;
use super::options::WatchOptions;
use super::predicate::{Attributes, Predicate};
use super::store::Conversion;
use crate::status::ApiError;

/// The `type` of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEventType {
    /// The object appeared (or started to match).
    Added,
    /// The object changed.
    Modified,
    /// The object was deleted (or stopped matching).
    Deleted,
    /// Only `metadata.resourceVersion` is meaningful: the watch is this far.
    Bookmark,
    /// The object is a `Status`; the watch ends.
    Error,
}

impl WatchEventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
            Self::Bookmark => "BOOKMARK",
            Self::Error => "ERROR",
        }
    }
}

/// One watch event.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchEvent {
    /// What happened.
    pub type_: WatchEventType,
    /// The object (a `Status` for ERROR).
    pub object: Value,
}

/// One watch event before its object is parsed: what [`Store::watch_stored`] yields.
#[derive(Clone, Debug)]
pub struct StoredWatchEvent {
    /// What happened.
    pub type_: WatchEventType,
    /// The object.
    pub object: EventObject,
}

/// The object of a [`StoredWatchEvent`].
#[derive(Clone, Debug)]
pub enum EventObject {
    /// An object from storage, with the memo its encodings are shared in: every
    /// watcher of a watch cache receives the same storage event, so each wire form of
    /// it is made once ([`Encodings`]). Within one storage event the event type tells
    /// which of its values (the new one or, for an object that stopped matching, the
    /// previous one) this is.
    Stored(StoredObject, Encodings),
    /// An object made here: a BOOKMARK's, an ERROR's `Status`, an initial state.
    Made(Value),
}

impl StoredWatchEvent {
    /// The event with its object parsed.
    pub fn decode(self, info: &ResourceInfo) -> WatchEvent {
        match self.object {
            EventObject::Made(object) => WatchEvent {
                type_: self.type_,
                object,
            },
            EventObject::Stored(stored, _) => match stored.decode(info) {
                Ok(object) => WatchEvent {
                    type_: self.type_,
                    object,
                },
                Err(e) => error_event(&e),
            },
        }
    }
}

/// The annotation on the BOOKMARK that ends a watch-list's initial events.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// How many keys one storage read of the initial state takes.
const INITIAL_PAGE: usize = 500;

/// A watch's events, as a stream that ends when the watch ends.
pub type EventStream = Pin<Box<dyn Stream<Item = WatchEvent> + Send>>;

/// A watch's events before their objects are parsed.
pub type StoredEventStream = ReceiverStream<StoredWatchEvent>;

fn bookmark(info: &ResourceInfo, revision: i64, initial_end: bool) -> StoredWatchEvent {
    let mut metadata = json!({ "resourceVersion": revision.to_string() });
    if initial_end {
        metadata["annotations"] = json!({ INITIAL_EVENTS_END: "true" });
    }
    StoredWatchEvent {
        type_: WatchEventType::Bookmark,
        object: EventObject::Made(
            json!({ "kind": info.kind, "apiVersion": info.api_version(), "metadata": metadata }),
        ),
    }
}

fn error_event(e: &ApiError) -> WatchEvent {
    WatchEvent {
        type_: WatchEventType::Error,
        object: e.to_status(),
    }
}

fn stored_error_event(e: &ApiError) -> StoredWatchEvent {
    StoredWatchEvent {
        type_: WatchEventType::Error,
        object: EventObject::Made(e.to_status()),
    }
}

/// Turns one storage event into what a watcher with `predicate` sees, if anything.
/// Without selectors nothing is parsed; with them, each value's [`Attributes`] are
/// taken once per event, in its memo, for every watcher to match.
fn translate(selection: &Selection, event: &Event) -> Result<Option<StoredWatchEvent>, ApiError> {
    let stored = |value: &bytes::Bytes| {
        EventObject::Stored(
            StoredObject::new(value.clone(), event.revision),
            event.encodings.clone(),
        )
    };
    let cur = stored(&event.value);
    if selection.predicate.is_everything() {
        let type_ = match event.kind {
            EventKind::Created => WatchEventType::Added,
            EventKind::Modified => WatchEventType::Modified,
            EventKind::Deleted => WatchEventType::Deleted,
        };
        return Ok(Some(StoredWatchEvent { type_, object: cur }));
    }
    let matches = |value: &bytes::Bytes, key: u64| -> Result<bool, ApiError> {
        let attributes = event.encodings.try_get_or_derive(key, || {
            let obj = StoredObject::new(value.clone(), event.revision).decode(&selection.info)?;
            let attributes = Attributes::of(&selection.info, &obj);
            let size = attributes.size();
            Ok::<_, ApiError>((attributes, size))
        })?;
        Ok(selection.predicate.matches_attributes(&attributes))
    };
    let cur_matches = matches(&event.value, selection.keys.0)?;
    let prev_matches = match &event.prev_value {
        Some(p) => Some(matches(p, selection.keys.1)?),
        None => None,
    };
    let (type_, object) = match event.kind {
        EventKind::Created if cur_matches => (WatchEventType::Added, cur),
        EventKind::Deleted if cur_matches => (WatchEventType::Deleted, cur),
        EventKind::Modified => match (cur_matches, prev_matches.unwrap_or(cur_matches)) {
            (true, true) => (WatchEventType::Modified, cur),
            (true, false) => (WatchEventType::Added, cur),
            // The previous state, at the revision of the change, as the cacher sends it.
            (false, true) => (
                WatchEventType::Deleted,
                event.prev_value.as_ref().map(stored).unwrap_or(cur),
            ),
            (false, false) => return Ok(None),
        },
        _ => return Ok(None),
    };
    Ok(Some(StoredWatchEvent { type_, object }))
}

/// What one watcher selects: its predicate, and the memo keys of the [`Attributes`] of
/// an event's value and previous value in the version it is served (the fields a
/// resource makes selectable may differ between versions).
struct Selection {
    info: ResourceInfo,
    predicate: Predicate,
    keys: (u64, u64),
}

impl Selection {
    fn new(info: ResourceInfo, predicate: Predicate) -> Self {
        let version = info.api_version();
        let keys = (
            memo_key("attributes", &version),
            memo_key("attributes of the previous value", &version),
        );
        Self {
            info,
            predicate,
            keys,
        }
    }
}

impl Store {
    /// Starts a watch of `namespace` (or everything). Errors that happen before any
    /// event (a bad selector) are returned; later ones arrive as an ERROR event.
    pub async fn watch(
        &self,
        namespace: Option<&str>,
        opts: &WatchOptions,
    ) -> Result<EventStream, ApiError> {
        let info = self.info().clone();
        let events = self.watch_stored(namespace, opts).await?;
        Ok(Box::pin(events.map(move |event| event.decode(&info))))
    }

    /// [`Store::watch`], before the objects are parsed.
    pub async fn watch_stored(
        &self,
        namespace: Option<&str>,
        opts: &WatchOptions,
    ) -> Result<StoredEventStream, ApiError> {
        self.watch_converted(namespace, opts, self.conversion().cloned())
            .await
    }

    /// [`Store::watch_stored`] with each object in the version it was stored in, not
    /// converted to this store's: for readers of metadata alone (the garbage
    /// collector), which conversion leaves as it is (a conversion webhook may change
    /// labels and annotations only). A multi-version resource's every write would
    /// otherwise be converted once more for them.
    pub async fn watch_stored_unconverted(
        &self,
        namespace: Option<&str>,
        opts: &WatchOptions,
    ) -> Result<StoredEventStream, ApiError> {
        self.watch_converted(namespace, opts, None).await
    }

    async fn watch_converted(
        &self,
        namespace: Option<&str>,
        opts: &WatchOptions,
        conversion: Option<Conversion>,
    ) -> Result<StoredEventStream, ApiError> {
        let predicate = Predicate::new(
            self.info(),
            opts.label_selector.clone(),
            opts.field_selector.clone(),
        )?;
        let selection = Selection::new(self.info().clone(), predicate);
        let prefix = keys::list_prefix(self.prefix(), namespace);
        let storage = self.storage().clone();
        let opts = opts.clone();
        let (tx, rx) = mpsc::channel(128);
        tokio::spawn(async move {
            let initial =
                opts.send_initial_events || matches!(opts.resource_version, None | Some(0));
            let mut after = opts.resource_version.unwrap_or(0);
            if initial {
                let read_at = match opts.resource_version {
                    None => ReadAt::Latest,
                    Some(0) => ReadAt::Any,
                    Some(n) => ReadAt::NotOlderThan(n),
                };
                let source = Source {
                    info: &selection.info,
                    predicate: &selection.predicate,
                    storage: storage.as_ref(),
                    conversion: conversion.as_ref(),
                };
                match initial_events(&source, &prefix, read_at, &tx).await {
                    Ok(revision) => after = revision,
                    Err(e) => {
                        let _ = tx.send(stored_error_event(&e)).await;
                        return;
                    }
                }
                if opts.send_initial_events
                    && opts.allow_bookmarks
                    && tx
                        .send(bookmark(&selection.info, after, true))
                        .await
                        .is_err()
                {
                    return;
                }
            }
            let mut stream = match storage.watch(&prefix, after).await {
                Ok(s) => s,
                Err(e) => {
                    let _ = tx
                        .send(stored_error_event(&ApiError::from_storage(
                            &selection.info,
                            "",
                            &e,
                        )))
                        .await;
                    return;
                }
            };
            while let Some(item) = stream.next().await {
                let item = match (item, &conversion) {
                    (Ok(WatchItem::Event(ev)), Some(c)) => {
                        c.event(ev).await.map(|ev| Ok(WatchItem::Event(ev)))
                    }
                    (item, _) => Ok(item),
                };
                let event = match item {
                    Err(e) => stored_error_event(&e),
                    Ok(Ok(WatchItem::Event(ev))) => match translate(&selection, &ev) {
                        Ok(Some(e)) => e,
                        Ok(None) => continue,
                        Err(e) => stored_error_event(&e),
                    },
                    Ok(Ok(WatchItem::Progress(rev))) if opts.allow_bookmarks => {
                        bookmark(&selection.info, rev, false)
                    }
                    Ok(Ok(WatchItem::Progress(_))) => continue,
                    Ok(Err(e @ StorageError::Expired { .. })) => {
                        stored_error_event(&ApiError::from_storage(&selection.info, "", &e))
                    }
                    // The backend lost the thread (etcd restarted, watcher too slow):
                    // end the watch; the client resumes from its last resourceVersion.
                    Ok(Err(e)) => {
                        tracing::debug!(error = %e, "watch ended by storage");
                        return;
                    }
                };
                let last = event.type_ == WatchEventType::Error;
                if tx.send(event).await.is_err() || last {
                    return;
                }
            }
        });
        Ok(ReceiverStream::new(rx))
    }
}

/// Where a watch reads its initial state from, and how it serves it.
struct Source<'a> {
    info: &'a ResourceInfo,
    predicate: &'a Predicate,
    storage: &'a dyn kapi_storage::Storage,
    conversion: Option<&'a Conversion>,
}

/// Sends the current state as ADDED events; returns the revision it was read at.
async fn initial_events(
    source: &Source<'_>,
    prefix: &str,
    read_at: ReadAt,
    tx: &mpsc::Sender<StoredWatchEvent>,
) -> Result<i64, ApiError> {
    let (info, predicate) = (source.info, source.predicate);
    let mut request = ListRequest {
        prefix: prefix.to_string(),
        read_at,
        start_key: None,
        limit: Some(INITIAL_PAGE),
    };
    loop {
        let page = source
            .storage
            .list(&request)
            .await
            .map_err(|e| ApiError::from_storage(info, "", &e))?;
        let mut items: Vec<StoredObject> =
            page.items.iter().cloned().map(StoredObject::from).collect();
        if let Some(c) = source.conversion {
            c.stored(&mut items).await?;
        }
        for stored in items {
            let object = if predicate.is_everything() {
                EventObject::Stored(stored, Encodings::default())
            } else {
                let obj = stored.decode(info)?;
                if !predicate.matches(&obj) {
                    continue;
                }
                EventObject::Made(obj)
            };
            let event = StoredWatchEvent {
                type_: WatchEventType::Added,
                object,
            };
            if tx.send(event).await.is_err() {
                return Ok(page.revision);
            }
        }
        match page.items.last() {
            Some(last) if page.remaining > 0 => {
                request.read_at = ReadAt::Exact(page.revision);
                request.start_key = Some(format!("{}\u{0}", last.key));
            }
            _ => return Ok(page.revision),
        }
    }
}
