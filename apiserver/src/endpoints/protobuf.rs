//! Kubernetes' protobuf at the API (`application/vnd.kubernetes.protobuf`): request
//! bodies of built-in kinds decoded into the JSON the handlers read, and objects, lists,
//! `Status` errors and watch events encoded from the JSON they would answer with.
//!
//! The transcoding is `kapi_core::protobuf`'s, driven by the catalog the server was
//! built with ([`super::Api::protobuf`]). A kind the catalog lacks (every custom
//! resource) has no protobuf form: kube-apiserver answers those in JSON or refuses, and
//! so does kapi.

use bytes::Bytes;
use kapi_core::ResourceInfo;
use kapi_core::protobuf::{
    Catalog, Message, UnknownField, bytes_field_head, bytes_field_len, decode, encode, envelope,
};
use serde_json::{Map, Value};

use crate::negotiation::Wire;
use crate::registry::list_body::{EncodedItem, ListBody};
use crate::registry::{ObjectList, StoredObject, memo_key};
use crate::status::ApiError;

pub use kapi_core::protobuf::envelope::{MEDIA_TYPE, WATCH_MEDIA_TYPE};

/// The message of `info`'s kind (or its list kind), when the catalog has one.
pub fn message_of(catalog: &Catalog, info: &ResourceInfo, list: bool) -> Option<&'static Message> {
    let kind = if list { &info.list_kind } else { &info.kind };
    catalog.kind(&info.group, &info.version, kind)
}

/// `group`/`version` of an `apiVersion`.
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// A request body decoded: the object as JSON, and the fields it held that the catalog
/// does not know.
#[derive(Debug)]
pub struct DecodedBody {
    /// The object, `apiVersion` and `kind` from the envelope.
    pub value: Value,
    /// Unknown fields with non-zero values (see `kapi_core::protobuf::decode`).
    pub unknown: Vec<UnknownField>,
}

/// Decodes an enveloped body that should be `expected_kind`, whose message is
/// `expected`. The envelope's kind picks the message when the catalog knows it, so a
/// body of another kind decodes as what it is and the kind check that follows refuses
/// it in kube's words; failures are kube's 400s (`transformDecodeError`).
pub fn decode_body(
    catalog: &Catalog,
    body: &[u8],
    expected: &'static Message,
    expected_kind: &str,
) -> Result<DecodedBody, ApiError> {
    let env = envelope::unwrap(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {expected_kind}): {e} ({})",
            crate::negotiation::summarize(body)
        ))
    })?;
    let (group, version) = split_api_version(env.api_version);
    let message = catalog
        .kind(group, version, env.kind)
        .filter(|_| !env.kind.is_empty())
        .unwrap_or(expected);
    let decoded = decode::decode(catalog, message, env.raw).map_err(|e| {
        if env.kind.is_empty() {
            ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {expected_kind}): {e} ({})",
                crate::negotiation::summarize(body)
            ))
        } else {
            ApiError::bad_request(format!(
                "{} in version {version:?} cannot be handled as a {expected_kind}: {e}",
                env.kind
            ))
        }
    })?;
    let mut object = Map::new();
    if !env.api_version.is_empty() {
        object.insert("apiVersion".into(), Value::from(env.api_version));
    }
    if !env.kind.is_empty() {
        object.insert("kind".into(), Value::from(env.kind));
    }
    object.extend(decoded.object);
    Ok(DecodedBody {
        value: Value::Object(object),
        unknown: decoded.unknown,
    })
}

/// Decodes an enveloped body of whatever catalogued kind its envelope names (a
/// subresource's `Binding` or `Eviction`).
pub fn decode_enveloped(catalog: &Catalog, body: &[u8]) -> Result<DecodedBody, ApiError> {
    let unrecognized = |why: &dyn std::fmt::Display| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized: {why} ({})",
            crate::negotiation::summarize(body)
        ))
    };
    let env = envelope::unwrap(body).map_err(|e| unrecognized(&e))?;
    let (group, version) = split_api_version(env.api_version);
    let message = catalog.kind(group, version, env.kind).ok_or_else(|| {
        unrecognized(&format!(
            "no kind {:?} is registered for version {:?}",
            env.kind, env.api_version
        ))
    })?;
    decode_body(catalog, body, message, env.kind)
}

/// Encodes an object (or list) the server answers with: its `apiVersion` and `kind`
/// name the message. `None` when the catalog has no message for it.
pub fn encode_value(catalog: &Catalog, value: &Value) -> Option<Result<Vec<u8>, ApiError>> {
    let obj = value.as_object()?;
    let api_version = obj.get("apiVersion").and_then(Value::as_str)?;
    let kind = obj.get("kind").and_then(Value::as_str)?;
    let (group, version) = split_api_version(api_version);
    let message = catalog.kind(group, version, kind)?;
    let mut out = Vec::with_capacity(256);
    let mark = envelope::begin_wrap(api_version, kind, &mut out);
    if let Err(e) = encode::encode(catalog, message, obj, &mut out) {
        return Some(Err(ApiError::internal(
            "encoding a response as protobuf",
            &e,
        )));
    }
    envelope::end_wrap(&mut out, mark);
    Some(Ok(out))
}

/// Encodes `value`, whose catalog message the caller knows exists.
pub fn encode_known(catalog: &Catalog, value: &Value) -> Result<Vec<u8>, ApiError> {
    encode_value(catalog, value).unwrap_or_else(|| {
        let kind = value.get("kind").and_then(Value::as_str);
        Err(uncatalogued(kind.unwrap_or("an object without kind")))
    })
}

/// A stored object as the protobuf body of a GET, in `info`'s version: the memoised
/// envelope itself where the watch cache keeps a memo, so a read copies nothing.
pub fn encode_stored(
    wire: Wire,
    info: &ResourceInfo,
    stored: &StoredObject,
) -> Result<Bytes, ApiError> {
    let api_version = info.api_version();
    Enveloper::new(wire, info, &api_version)?.enveloped(stored, None)
}

/// A page of a collection as the protobuf body of a LIST, written a chunk at a time
/// ([`ListBody`]): its items' messages are cut from each stored object's memoised
/// envelope where the watch cache keeps a memo, so a list of unchanged objects is
/// assembled, not encoded, and its items are copied only into the chunks.
pub fn list_body(
    wire: Wire,
    info: &ResourceInfo,
    list: &ObjectList,
) -> Result<ListBody<ProtoItem>, ApiError> {
    let catalog = wire.catalog;
    let list_message =
        message_of(catalog, info, true).ok_or_else(|| uncatalogued(&info.list_kind))?;
    let api_version = info.api_version();
    let enveloper = Enveloper::new(wire, info, &api_version)?;
    // Sized up front: collecting `Result`s grows a vector one doubling at a time.
    let mut items = Vec::with_capacity(list.items.len());
    for item in &list.items {
        let enveloped = enveloper.enveloped(&item.stored, item.decoded.as_ref())?;
        let raw = raw_message(&enveloped)?;
        // Where the message lies, rather than a second `Bytes` of it (callgrind: a
        // `slice_ref`, its clone and its drop were a fifth of a list's items' cost).
        let start = raw.as_ptr() as usize - enveloped.as_ptr() as usize;
        let message = start..start + raw.len();
        items.push(ProtoItem { enveloped, message });
    }
    let mut fields = Map::new();
    fields.insert("metadata".into(), list.metadata.clone());
    let kind = (api_version.as_str(), &*info.list_kind);
    let lens = items.iter().map(|item| item.message.len());
    let frame = encode::enveloped_list_frame(catalog, list_message, kind, &fields, lens)
        .map_err(|e| ApiError::internal("encoding a list as protobuf", &e))?;
    Ok(match frame {
        Some(frame) => {
            let field = ItemsField(frame.items_field);
            ListBody::new(frame.head.into(), field, items, frame.tail.into())
        }
        None => {
            let whole = encode_known(catalog, &list.clone().into_value(info)?)?;
            ListBody::new(whole.into(), ItemsField(0), Vec::new(), Bytes::new())
        }
    })
}

/// One item of a protobuf list: its object's message, inside its envelope.
#[derive(Debug)]
pub struct ProtoItem {
    enveloped: Bytes,
    message: std::ops::Range<usize>,
}

/// The number of a list message's `items` field, which each item is written as.
#[derive(Debug)]
pub struct ItemsField(u32);

impl EncodedItem for ProtoItem {
    type Shared = ItemsField;
    const SEPARATOR: &'static [u8] = b"";

    fn len(&self, field: &ItemsField) -> usize {
        bytes_field_len(field.0, self.message.len())
    }

    fn write(&self, field: &ItemsField, out: &mut Vec<u8>) {
        bytes_field_head(out, field.0, self.message.len());
        out.extend_from_slice(&self.enveloped[self.message.clone()]);
    }
}

/// The message of `info`'s kind: the one negotiated with the request, else the
/// catalog's.
fn object_message_of(wire: Wire, info: &ResourceInfo) -> Result<&'static Message, ApiError> {
    wire.object
        .or_else(|| message_of(wire.catalog, info, false))
        .ok_or_else(|| uncatalogued(&info.kind))
}

/// Envelopes stored objects of one resource in one version, everything that is the
/// same for each object of a list (the message, the memo's key) looked up once.
struct Enveloper<'a> {
    catalog: &'static Catalog,
    message: &'static Message,
    info: &'a ResourceInfo,
    api_version: &'a str,
    memo: u64,
}

impl<'a> Enveloper<'a> {
    fn new(wire: Wire, info: &'a ResourceInfo, api_version: &'a str) -> Result<Self, ApiError> {
        Ok(Self {
            catalog: wire.catalog,
            message: object_message_of(wire, info)?,
            info,
            api_version,
            memo: memo_key("protobuf", api_version),
        })
    }

    /// A stored object enveloped: memoised beside the watch cache's copy of the object
    /// when it has one, so each state of an object is encoded once however often it is
    /// read, by GETs (the envelope as it is) or LISTs (the message inside it,
    /// [`raw_message`]). `decoded` is the object if it was parsed already.
    fn enveloped(&self, stored: &StoredObject, decoded: Option<&Value>) -> Result<Bytes, ApiError> {
        let encode_it = || {
            let parsed;
            let object = match decoded {
                Some(object) => object,
                None => {
                    parsed = stored.decode(self.info)?;
                    &parsed
                }
            };
            let map = object.as_object().ok_or_else(|| {
                ApiError::internal(
                    "encoding an object as protobuf",
                    &std::io::Error::other("the stored value is not an object"),
                )
            })?;
            let mut out = Vec::with_capacity(stored.value.len() + 64);
            let mark = envelope::begin_wrap(self.api_version, &self.info.kind, &mut out);
            encode::encode(self.catalog, self.message, map, &mut out)
                .map_err(|e| ApiError::internal("encoding an object as protobuf", &e))?;
            envelope::end_wrap(&mut out, mark);
            Ok(Bytes::from(out))
        };
        match stored.memo.encodings() {
            Some(memo) => memo.try_get_or_insert_with(self.memo, encode_it),
            None => encode_it(),
        }
    }
}

/// The object's own message inside an envelope [`Enveloper::enveloped`] wrote.
fn raw_message(enveloped: &[u8]) -> Result<&[u8], ApiError> {
    envelope::raw_of(enveloped).ok_or_else(|| {
        ApiError::internal(
            "reading a memoised protobuf envelope",
            &std::io::Error::other("the envelope holds no message"),
        )
    })
}

fn uncatalogued(kind: &str) -> ApiError {
    ApiError::internal(
        "encoding a response as protobuf",
        &std::io::Error::other(format!("no protobuf message for {kind}")),
    )
}

/// A `Status` (an error, or the result of a delete) as protobuf; `v1`'s `Status`
/// message is in every catalog of built-in kinds.
pub fn encode_status(catalog: &Catalog, status: &Value) -> Option<Vec<u8>> {
    encode_value(catalog, status).and_then(Result::ok)
}

/// One watch event as a protobuf frame: `object` is encoded and enveloped, then framed.
pub fn watch_frame(
    catalog: &Catalog,
    event_type: &str,
    object: &Value,
) -> Result<Vec<u8>, ApiError> {
    let body = encode_known(catalog, object)?;
    let mut out = Vec::with_capacity(body.len() + 32);
    envelope::watch_frame(event_type, &body, &mut out);
    Ok(out)
}
