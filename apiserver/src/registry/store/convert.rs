//! [`Store`]'s edges of conversion ([`crate::registry::conversion`]): what is read in
//! another version than the served one goes through the converter before anything
//! looks at it (selectors, the JSON splice, protobuf), and what is written goes through
//! it into the storage version. Without a converter only `apiVersion` changes between
//! versions, as before.
//!
//! A converted state is memoised where the watch cache keeps a memo for it, so that
//! every reader of one state in one version (a list's items, each watcher of an
//! event) shares one conversion.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use kapi_storage::{Encodings, Event};
use serde_json::Value;

use super::{Store, Subresource};
use crate::registry::StoredObject;
use crate::registry::codec::{decode, decode_as_stored, encode, is_stored_in, memo_key};
use crate::registry::conversion::{self, Converter};
use crate::status::ApiError;

/// Conversion into one served version: what a store and its watches share.
#[derive(Clone)]
pub(crate) struct Conversion {
    converter: Arc<dyn Converter>,
    /// The served `apiVersion`.
    target: String,
    /// Where this conversion memoises converted values and converted previous values
    /// (watch events): keys of this converter's own, so that a CRD whose conversion
    /// changed (a new converter) never serves what the old one made.
    memo_keys: (u64, u64),
}

/// Numbers each [`Conversion`], for its memo keys.
static CONVERSIONS: AtomicU64 = AtomicU64::new(0);

/// One value to serve: its bytes and where its conversion may be memoised.
struct Pending<'a> {
    value: &'a mut Bytes,
    revision: i64,
    memo: Option<(&'a Encodings, u64)>,
}

impl Conversion {
    pub(crate) fn new(converter: Arc<dyn Converter>, target: String) -> Self {
        let epoch = CONVERSIONS.fetch_add(1, Ordering::Relaxed);
        let version = format!("{target}#{epoch}");
        Self {
            converter,
            memo_keys: (
                memo_key("converted", &version),
                memo_key("converted-previous", &version),
            ),
            target,
        }
    }

    /// Replaces each value stored in another version by its conversion to the served
    /// one: memoised ones from the memo, the rest in one call.
    async fn serve(&self, values: Vec<Pending<'_>>) -> Result<(), ApiError> {
        let mut pending = Vec::new();
        for p in values {
            if is_stored_in(p.value, &self.target) {
                continue;
            }
            match p.memo.and_then(|(memo, key)| memo.get(key)) {
                Some(bytes) => *p.value = bytes,
                None => pending.push(p),
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        let objects = pending
            .iter()
            .map(|p| decode_as_stored(p.value, p.revision))
            .collect::<Result<Vec<_>, _>>()?;
        let converted = conversion::convert(self.converter.as_ref(), objects, &self.target).await?;
        for (p, obj) in pending.into_iter().zip(converted) {
            let bytes = encode(&obj);
            *p.value = match p.memo {
                Some((memo, key)) => memo.get_or_insert_with(key, || bytes),
                None => bytes,
            };
        }
        Ok(())
    }

    /// `items` in the served version.
    pub(crate) async fn stored(&self, items: &mut [StoredObject]) -> Result<(), ApiError> {
        let key = self.memo_keys.0;
        let values = items
            .iter_mut()
            .map(|item| Pending {
                memo: item.memo.encodings().map(|m| (m, key)),
                value: &mut item.value,
                revision: item.revision,
            })
            .collect();
        self.serve(values).await
    }

    /// A storage event with its values in the served version, shared by every watcher
    /// through the event's memo.
    pub(crate) async fn event(&self, mut event: Event) -> Result<Event, ApiError> {
        let memo = event.encodings.clone();
        let mut values = vec![Pending {
            value: &mut event.value,
            revision: event.revision,
            memo: Some((&memo, self.memo_keys.0)),
        }];
        if let Some(prev) = event.prev_value.as_mut() {
            values.push(Pending {
                value: prev,
                revision: event.revision,
                memo: Some((&memo, self.memo_keys.1)),
            });
        }
        self.serve(values).await?;
        Ok(event)
    }
}

impl Store {
    /// Whether this store converts objects between versions beyond `apiVersion`.
    pub fn converts(&self) -> bool {
        self.conversion.is_some()
    }

    /// Its conversion into the served version, for its watches.
    pub(crate) fn conversion(&self) -> Option<&Conversion> {
        self.conversion.as_ref()
    }

    /// `items` as this store serves them: converted from the versions they are stored
    /// in, all in one call.
    pub async fn served(
        &self,
        mut items: Vec<StoredObject>,
    ) -> Result<Vec<StoredObject>, ApiError> {
        if let Some(c) = &self.conversion {
            c.stored(&mut items).await?;
        }
        Ok(items)
    }

    /// One stored object as this store serves it.
    pub(super) async fn served_one(&self, item: StoredObject) -> Result<StoredObject, ApiError> {
        let mut items = [item];
        if let Some(c) = &self.conversion {
            c.stored(&mut items).await?;
        }
        let [item] = items;
        Ok(item)
    }

    /// A stored value at `revision` (a key read for a write, a deleted object's last
    /// state), decoded as this store serves it.
    pub(super) async fn decode_served(
        &self,
        value: &Bytes,
        revision: i64,
    ) -> Result<Value, ApiError> {
        if self.conversion.is_none() {
            return decode(self.info(), value, revision);
        }
        let item = StoredObject::new(value.clone(), revision);
        self.served_one(item).await?.decode(self.info())
    }

    /// What a write answers: `obj` as it was written, given the new `resourceVersion`
    /// (the stored value is not parsed back), or, when it was stored in another
    /// version, the stored `value` converted back into the served one, as kube's
    /// storage decodes what it wrote: what the conversion adds (defaults, annotations)
    /// shows at once.
    pub(super) async fn written(
        &self,
        mut obj: Value,
        value: &Bytes,
        revision: i64,
    ) -> Result<Value, ApiError> {
        if self.stored_elsewhere(&obj) {
            return self.decode_served(value, revision).await;
        }
        super::set_meta(
            &mut obj,
            "resourceVersion",
            Some(serde_json::json!(revision.to_string())),
        );
        Ok(obj)
    }

    /// Whether `obj` (in the served version) is stored in another version, through the
    /// converter.
    fn stored_elsewhere(&self, obj: &Value) -> bool {
        self.conversion.is_some()
            && self.storage_version.as_deref().is_some_and(|storage| {
                obj.get("apiVersion").and_then(Value::as_str) != Some(storage)
            })
    }

    /// `obj` (in the served version) in the storage version, when the converter must
    /// take it there; `None` when only its `apiVersion` differs.
    async fn in_storage_version(&self, obj: &Value) -> Result<Option<Value>, ApiError> {
        match (&self.conversion, &self.storage_version) {
            (Some(c), Some(storage)) if self.stored_elsewhere(obj) => {
                let converted =
                    conversion::convert(c.converter.as_ref(), vec![obj.clone()], storage).await?;
                Ok(Some(converted.into_iter().next().unwrap_or_default()))
            }
            _ => Ok(None),
        }
    }

    /// `obj` (in the served version) as it is stored: converted into the storage
    /// version when a converter must, else with its `apiVersion` changed.
    pub(super) async fn encode_for_storage(&self, obj: &Value) -> Result<Bytes, ApiError> {
        Ok(match self.in_storage_version(obj).await? {
            Some(converted) => encode(&converted),
            None => self.encode(obj),
        })
    }

    /// `new` (in the served version) as an update of `stored` writes it. Converted into
    /// the storage version, what the write may not change (status on writes to the
    /// object, all but status and metadata on writes to `/status`) is the stored
    /// object's own rather than its trip through the served version and back, which a
    /// version holding less than the storage one (autoscaling/v1) does not make
    /// exactly: kube prepares an update in its internal version, from what is stored.
    pub(super) async fn encode_update(
        &self,
        new: &Value,
        stored: &Bytes,
        sub: &Subresource,
    ) -> Result<Bytes, ApiError> {
        let Some(mut out) = self.in_storage_version(new).await? else {
            return Ok(self.encode(new));
        };
        let storage = self.storage_version.as_deref().unwrap_or_default();
        let old = is_stored_in(stored, storage)
            .then(|| serde_json::from_slice::<Value>(stored).ok())
            .flatten();
        if let (Some(Value::Object(old)), Value::Object(map)) = (old, &mut out) {
            match sub {
                Subresource::Main | Subresource::Scale if self.info().subresources.status => {
                    match old.get("status") {
                        Some(status) => map.insert("status".into(), status.clone()),
                        None => map.remove("status"),
                    };
                }
                Subresource::Status => {
                    let mut merged = old;
                    for key in ["status", "metadata"] {
                        match map.remove(key) {
                            Some(v) => merged.insert(key.into(), v),
                            None => merged.remove(key),
                        };
                    }
                    *map = merged;
                }
                _ => {}
            }
        }
        Ok(encode(&out))
    }

    /// A stored value written again in `target` (the storage version, for a
    /// migration): converted when a converter must, else with its `apiVersion` changed.
    pub(super) async fn rewritten_in(
        &self,
        value: &Bytes,
        target: &str,
    ) -> Result<Bytes, ApiError> {
        let mut obj = decode_as_stored(value, 0)?;
        crate::registry::object::set_meta(&mut obj, "resourceVersion", None);
        match &self.conversion {
            Some(c) => {
                let mut out = conversion::convert(c.converter.as_ref(), vec![obj], target).await?;
                Ok(encode(&out.pop().unwrap_or_default()))
            }
            None => {
                if let Some(map) = obj.as_object_mut() {
                    map.insert("apiVersion".into(), Value::from(target));
                }
                Ok(encode(&obj))
            }
        }
    }

    /// `objects` converted to `api_version` by this resource's converter (a
    /// `ConversionReview` kapi answers); 404 when its versions do not convert.
    pub async fn convert_objects(
        &self,
        objects: Vec<Value>,
        api_version: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let Some(c) = &self.conversion else {
            return Err(ApiError::not_found(self.info(), ""));
        };
        conversion::convert(c.converter.as_ref(), objects, api_version).await
    }
}
