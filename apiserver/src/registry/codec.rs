//! Objects to storage values and back. The stored form carries no `resourceVersion`:
//! it is the storage revision, set on every read, as kube-apiserver's versioner does.
//!
//! Reads that only pass an object on (GET, LIST and watch in JSON) need not parse it:
//! [`StoredObject::to_json`] splices the served `apiVersion` and the `resourceVersion`
//! into the stored bytes, which kapi writes with sorted keys, so they always begin
//! `{"apiVersion":"…","kind":"…","metadata":{`. Anything else is parsed and
//! serialized the slow way, with the same result.

use std::sync::LazyLock;

use bytes::Bytes;
use kapi_core::ResourceInfo;
use kapi_storage::{KeyValue, ValueMemo};
use serde_json::Value;

use crate::registry::list_body::{EncodedItem, ListBody};
use crate::registry::object::{meta, set_meta};
use crate::status::ApiError;

/// Encodes an object for storage (without its `resourceVersion`).
pub fn encode(obj: &Value) -> Bytes {
    let json = if meta(obj, "resourceVersion").is_none() {
        serde_json::to_vec(obj)
    } else {
        let mut obj = obj.clone();
        set_meta(&mut obj, "resourceVersion", None);
        serde_json::to_vec(&obj)
    };
    exact(json.expect("a JSON value always serializes"))
}

/// `bytes` in an allocation of their own size. A stored value lives as long as its
/// object's state in the watch cache, and on the embedded store the cache keeps the
/// very `Bytes` that was written; `serde_json::to_vec` grows its buffer by doubling (a
/// 1,353-byte object in 2,048 bytes) and `Bytes::from(Vec)` keeps the whole capacity
/// (`shrink_to_fit` need not help: mimalloc keeps a block shrunk by less than half).
/// One copy of the value per write, against a third of the cache's memory.
fn exact(bytes: Vec<u8>) -> Bytes {
    if bytes.capacity() - bytes.len() > bytes.len() / 16 {
        Bytes::copy_from_slice(&bytes)
    } else {
        Bytes::from(bytes)
    }
}

/// Decodes a stored value, with `resourceVersion` set to `revision`, in the version
/// `info` serves: the versions of a resource share their storage and differ only in
/// `apiVersion` (a CRD's `None` conversion).
pub fn decode(info: &ResourceInfo, value: &[u8], revision: i64) -> Result<Value, ApiError> {
    let mut obj: Value = serde_json::from_slice(value)
        .map_err(|e| ApiError::internal(&format!("decoding a stored {}", info.kind), &e))?;
    if let Some(map) = obj.as_object_mut() {
        let api_version = info.api_version();
        if map.get("apiVersion").and_then(Value::as_str) != Some(api_version.as_str()) {
            map.insert("apiVersion".into(), Value::from(api_version));
        }
    }
    set_meta(
        &mut obj,
        "resourceVersion",
        Some(Value::from(revision.to_string())),
    );
    Ok(obj)
}

/// Decodes a stored value as it is stored (its own `apiVersion`), with
/// `resourceVersion` set to `revision`: what a conversion starts from.
pub fn decode_as_stored(value: &[u8], revision: i64) -> Result<Value, ApiError> {
    let mut obj: Value = serde_json::from_slice(value)
        .map_err(|e| ApiError::internal("decoding a stored object", &e))?;
    set_meta(
        &mut obj,
        "resourceVersion",
        Some(Value::from(revision.to_string())),
    );
    Ok(obj)
}

/// Whether a stored value is in `api_version`: read from the prefix kapi writes
/// (sorted keys put `apiVersion` first), parsed only when it is not in that form.
pub fn is_stored_in(value: &[u8], api_version: &str) -> bool {
    if let Some(rest) = value.strip_prefix(b"{\"apiVersion\":\"") {
        if let Some(end) = memchr::memchr(b'"', rest) {
            if !rest[..end].contains(&b'\\') {
                return &rest[..end] == api_version.as_bytes();
            }
        }
    }
    #[derive(serde::Deserialize)]
    struct Version {
        #[serde(rename = "apiVersion", default)]
        api_version: String,
    }
    serde_json::from_slice::<Version>(value).is_ok_and(|v| v.api_version == api_version)
}

/// An object as storage holds it, with the revision that becomes its
/// `resourceVersion`: parsed only when something needs its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredObject {
    /// The stored bytes.
    pub value: Bytes,
    /// The object's `resourceVersion`.
    pub revision: i64,
    /// Where its encodings are memoised, when it came from the watch cache.
    pub memo: ValueMemo,
}

impl From<KeyValue> for StoredObject {
    fn from(kv: KeyValue) -> Self {
        Self {
            value: kv.value,
            revision: kv.mod_revision,
            memo: kv.memo,
        }
    }
}

impl StoredObject {
    /// `value` at `revision`, with nowhere to memoise its encodings.
    pub fn new(value: Bytes, revision: i64) -> Self {
        Self {
            value,
            revision,
            memo: ValueMemo::default(),
        }
    }

    /// The object, as [`decode`] gives it.
    pub fn decode(&self, info: &ResourceInfo) -> Result<Value, ApiError> {
        decode(info, &self.value, self.revision)
    }

    /// The object as served in JSON: the same document [`StoredObject::decode`] gives,
    /// serialized (the one difference: `resourceVersion` comes first in `metadata`).
    pub fn to_json(&self, info: &ResourceInfo) -> Result<Bytes, ApiError> {
        let mut out = Vec::with_capacity(self.value.len() + 64);
        self.write_json(info, &info.api_version(), &mut out)?;
        Ok(Bytes::from(out))
    }

    /// [`StoredObject::to_json`], appended to `out`; `api_version` is `info`'s.
    pub fn write_json(
        &self,
        info: &ResourceInfo,
        api_version: &str,
        out: &mut Vec<u8>,
    ) -> Result<(), ApiError> {
        let head = SpliceHead::new(api_version, &info.kind);
        self.json_piece(info, api_version)?.write(&head, out);
        Ok(())
    }

    /// [`StoredObject::to_json`] as a [`JsonPiece`]: nothing copied for an object in
    /// the form kapi writes; anything else is parsed and serialized here.
    pub fn json_piece(
        &self,
        info: &ResourceInfo,
        api_version: &str,
    ) -> Result<JsonPiece, ApiError> {
        if let Some(rest) = splice_point(&self.value, &info.kind) {
            return Ok(JsonPiece::Spliced {
                revision: self.revision,
                rest: self.value.slice_ref(rest),
            });
        }
        let encode = || {
            let obj = self.decode(info)?;
            serde_json::to_vec(&obj)
                .map(Bytes::from)
                .map_err(|e| ApiError::internal("encoding an object", &e))
        };
        // Parsed and written again: once per state where the watch cache keeps a memo
        // (a ConfigMap's `data` sorts before `kind`, so it never splices).
        Ok(JsonPiece::Whole(match self.memo.encodings() {
            Some(memo) => memo.try_get_or_insert_with(memo_key("json", api_version), encode)?,
            None => encode()?,
        }))
    }
}

/// An object's JSON as served, in a form that is written without parsing: the stored
/// bytes after `"metadata":{`, behind a [`SpliceHead`] and the object's
/// `resourceVersion`; or the whole document.
#[derive(Clone, Debug)]
pub enum JsonPiece {
    /// Stored bytes in the form kapi writes.
    Spliced {
        /// The object's `resourceVersion`.
        revision: i64,
        /// What follows `"metadata":{` in the stored value.
        rest: Bytes,
    },
    /// The whole document.
    Whole(Bytes),
}

/// What every spliced object of one `apiVersion` and kind begins with, up to the
/// digits of its `resourceVersion`.
#[derive(Clone, Debug)]
pub struct SpliceHead(Vec<u8>);

impl SpliceHead {
    /// The head of objects of `kind` served as `api_version`.
    pub fn new(api_version: &str, kind: &str) -> Self {
        let mut head = Vec::with_capacity(api_version.len() + kind.len() + 56);
        head.extend_from_slice(b"{\"apiVersion\":\"");
        head.extend_from_slice(api_version.as_bytes());
        head.extend_from_slice(b"\",\"kind\":\"");
        head.extend_from_slice(kind.as_bytes());
        head.extend_from_slice(b"\",\"metadata\":{\"resourceVersion\":\"");
        Self(head)
    }
}

/// A list in JSON.
pub type JsonList = ListBody<JsonPiece>;

impl EncodedItem for JsonPiece {
    type Shared = SpliceHead;
    const SEPARATOR: &'static [u8] = b",";

    fn len(&self, head: &SpliceHead) -> usize {
        match self {
            JsonPiece::Spliced { revision, rest } => {
                let digits = itoa::Buffer::new().format(*revision).len();
                head.0.len() + digits + 1 + usize::from(rest.first() != Some(&b'}')) + rest.len()
            }
            JsonPiece::Whole(json) => json.len(),
        }
    }

    fn write(&self, head: &SpliceHead, out: &mut Vec<u8>) {
        match self {
            JsonPiece::Spliced { revision, rest } => {
                out.extend_from_slice(&head.0);
                out.extend_from_slice(itoa::Buffer::new().format(*revision).as_bytes());
                out.push(b'"');
                if rest.first() != Some(&b'}') {
                    out.push(b',');
                }
                out.extend_from_slice(rest);
            }
            JsonPiece::Whole(json) => out.extend_from_slice(json),
        }
    }
}

/// Where a stored object's encoding in `format`, served as `api_version`, is memoised
/// in its [`ValueMemo`].
pub fn memo_key(format: &str, api_version: &str) -> u64 {
    // FNV-1a: computed for every item of a list, over a few bytes no client chooses.
    let bytes = format.bytes().chain([0]).chain(api_version.bytes());
    bytes.fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What follows `"metadata":{` when `stored` is in the form kapi writes for `kind`
/// (sorted keys, a plain `apiVersion` string, no `resourceVersion` anywhere); `None`
/// when it is not, and the object must be parsed.
fn splice_point<'a>(stored: &'a [u8], kind: &str) -> Option<&'a [u8]> {
    let rest = stored.strip_prefix(b"{\"apiVersion\":\"")?;
    let end = memchr::memchr(b'"', rest)?;
    if rest[..end].contains(&b'\\') {
        return None;
    }
    let rest = rest[end..].strip_prefix(b"\",\"kind\":\"")?;
    let rest = rest.strip_prefix(kind.as_bytes())?;
    let rest = rest.strip_prefix(b"\",\"metadata\":{")?;
    // A stored resourceVersion (written by something else) would end up twice.
    if RESOURCE_VERSION.find(rest).is_some() {
        return None;
    }
    Some(rest)
}

/// The searcher for a stored `"resourceVersion"`, built once: building one per object
/// of a list cost as much as a third of the search itself.
static RESOURCE_VERSION: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b"\"resourceVersion\""));

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info() -> ResourceInfo {
        crate::registry::test_support::widget_info("v2")
    }

    fn spliced_equals_decoded(stored: &Value) {
        let so = StoredObject::new(encode(stored), 42);
        let fast: Value = serde_json::from_slice(&so.to_json(&info()).unwrap()).unwrap();
        assert_eq!(fast, so.decode(&info()).unwrap());
        assert_eq!(fast["apiVersion"], "example.kapi.dev/v2");
        assert_eq!(fast["metadata"]["resourceVersion"], "42");
    }

    #[test]
    fn stored_versions_are_read_from_the_prefix_or_parsed() {
        let sorted = encode(&json!({"apiVersion": "x/v1", "kind": "W", "metadata": {}}));
        assert!(is_stored_in(&sorted, "x/v1"));
        assert!(!is_stored_in(&sorted, "x/v2"));
        assert!(is_stored_in(br#"{"kind":"W","apiVersion":"x/v2"}"#, "x/v2"));
        assert!(!is_stored_in(br#"{"kind":"W"}"#, "x/v2"));
    }

    #[test]
    fn memo_keys_tell_formats_and_versions_apart() {
        let keys = [
            memo_key("json", "v1"),
            memo_key("protobuf", "v1"),
            memo_key("json", "apps/v1"),
            memo_key("jsonv", "1"),
        ];
        for (i, a) in keys.iter().enumerate() {
            assert!(keys[i + 1..].iter().all(|b| a != b), "{keys:?}");
        }
        assert_eq!(memo_key("json", "v1"), keys[0]);
    }

    #[test]
    fn spliced_json_is_the_decoded_object() {
        let full = json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
            "metadata": {"name": "a", "namespace": "ns", "labels": {"x": "y"}},
            "spec": {"color": "red", "resourceVersionish": 1}});
        let fast = StoredObject::new(encode(&full), 42);
        assert!(splice_point(&fast.value, "Widget").is_some());
        spliced_equals_decoded(&full);
        // Empty metadata: no comma after the inserted field.
        spliced_equals_decoded(
            &json!({"apiVersion": "example.kapi.dev/v2", "kind": "Widget", "metadata": {}}),
        );
        // Shapes the splice refuses are parsed instead, with the same result.
        for odd in [
            json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget"}),
            json!({"apiVersion": "a\"b", "kind": "Widget", "metadata": {}}),
            json!({"apiVersion": "x/v1", "kind": "Gadget", "metadata": {}}),
            json!({"apiVersion": "x/v1", "kind": "Widget", "metadata": {},
                   "spec": {"ref": {"resourceVersion": "7"}}}),
        ] {
            let so = StoredObject::new(encode(&odd), 42);
            assert!(splice_point(&so.value, "Widget").is_none() || odd["kind"] == "Widget");
            spliced_equals_decoded(&odd);
        }
        // A stored resourceVersion is replaced, not duplicated.
        let so = StoredObject::new(
            Bytes::from_static(
                br#"{"apiVersion":"x/v1","kind":"Widget","metadata":{"resourceVersion":"3"}}"#,
            ),
            42,
        );
        let json = so.to_json(&info()).unwrap();
        assert_eq!(
            memchr::memmem::find_iter(&json, b"resourceVersion").count(),
            1
        );
    }
}
