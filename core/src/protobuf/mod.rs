//! Kubernetes' protobuf wire format for the built-in kinds, transcoded to and from the
//! JSON objects kapi stores and serves.
//!
//! kube-apiserver's protobuf is not protobuf's canonical JSON mapping: it is Go structs
//! marshalled by gogo-protobuf, with Kubernetes' own types (`Time`, `Quantity`,
//! `IntOrString`, `RawExtension`, …) and Go's zero values. kapi keeps its objects as JSON,
//! so a request body in protobuf is decoded once into the JSON a JSON client would have
//! sent, and a response is encoded from the JSON it would have answered with. No
//! generated struct per kind sits in between.
//!
//! Both directions are driven by a [`Catalog`]: for every message, its fields by number
//! with their JSON names, wire types and Go presence. `kapi-codegen import-openapi
//! --proto` writes the catalog beside the imported schemas (`schemas/kubernetes/protobuf/
//! <package>.yaml`) from Kubernetes' `.proto` files, and the generator embeds it as
//! statics. Why a table of our own rather than a descriptor set: the `.proto` files do
//! not say what the transcoder most needs. Which JSON key a field has (`$ref` is `ref`,
//! an inlined Go struct is a nested message), whether Go keeps a field's zero value (a
//! pointer such as `replicas` keeps `0`, a plain `imagePullPolicy` drops `""`) and which
//! messages are Kubernetes' special shapes all come from the Go types; the table holds
//! the answers, resolved once at import time, and nothing else.
//!
//! - [`encode`]: JSON → protobuf message bytes;
//! - [`decode`]: protobuf message bytes → JSON, bounded in depth, with unknown fields
//!   reported rather than dropped silently;
//! - [`envelope`]: the `k8s\0` + `runtime.Unknown` envelope of every body, and the
//!   length-prefixed `WatchEvent` frames of a watch.

pub mod decode;
pub mod encode;
pub mod envelope;
mod time;
mod wire;

pub use decode::{DecodeError, Decoded, UnknownField};
pub use encode::EncodeError;
pub use wire::{bytes_field_head, bytes_field_len};

/// The protobuf messages of a set of kinds, and which message each kind is.
#[derive(Debug)]
pub struct Catalog {
    /// Every message, in the order [`FieldType::Message`] indexes them.
    pub messages: &'static [Message],
    /// `(group, version, kind)` → index into [`Catalog::messages`], sorted.
    pub kinds: &'static [KindMessage],
}

/// The message a kind is written as.
#[derive(Debug)]
pub struct KindMessage {
    /// The kind's group (`""` for the core group).
    pub group: &'static str,
    /// The kind's version.
    pub version: &'static str,
    /// The kind (`Deployment`, `DeploymentList`, `Status`).
    pub kind: &'static str,
    /// Its message in [`Catalog::messages`].
    pub message: u32,
}

/// One protobuf message.
#[derive(Debug)]
pub struct Message {
    /// Its full protobuf name (`k8s.io.api.apps.v1.Deployment`).
    pub name: &'static str,
    /// How its JSON form relates to its fields.
    pub shape: Shape,
    /// Its fields, sorted by number.
    pub fields: &'static [Field],
}

/// How a message appears in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A JSON object with one key per field.
    Object,
    /// `metav1.Time`: an RFC 3339 string in seconds, `{seconds, nanos}` on the wire.
    Time,
    /// `metav1.MicroTime`: an RFC 3339 string in microseconds.
    MicroTime,
    /// `metav1.Duration`: a Go duration string (`1h2m3s`), nanoseconds on the wire.
    Duration,
    /// `resource.Quantity`: its canonical string.
    Quantity,
    /// `intstr.IntOrString`: a JSON number or string, `{type, intVal, strVal}`.
    IntOrString,
    /// `RawExtension`, `FieldsV1`, apiextensions' `JSON`: any JSON value, its compact
    /// text as the message's bytes field.
    RawJson,
    /// A Go named slice (`ExtraValue`, `Verbs`): a JSON array, the message's one
    /// repeated field.
    Items,
    /// `JSONSchemaPropsOrArray`: a schema object or an array of schemas.
    SchemaOrArray,
    /// `JSONSchemaPropsOrBool`: a boolean or a schema object.
    SchemaOrBool,
    /// `JSONSchemaPropsOrStringArray`: a schema object or an array of strings.
    SchemaOrStringArray,
}

/// One field of a message.
#[derive(Debug)]
pub struct Field {
    /// Its JSON key (unused for [`Label::Inline`]).
    pub json: &'static str,
    /// Its protobuf field number.
    pub number: u32,
    /// Its (element or map value) type.
    pub ty: FieldType,
    /// Singular, repeated, a map, or a Go struct inlined into its parent's JSON.
    pub label: Label,
    /// Whether Go keeps the field's zero value in JSON (a pointer, or a field without
    /// `omitempty`). A plain `omitempty` field's zero (`""`, `0`, `false`) is what Go
    /// writes for "unset", so it is dropped when decoding.
    pub keep_zero: bool,
}

/// A field's cardinality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// One value.
    Optional,
    /// A list (written unpacked, as proto2 does; packed is read too).
    Repeated,
    /// A map with string keys and values of [`Field::ty`].
    Map,
    /// A Go struct embedded with `json:",inline"`: its fields are its parent's JSON keys.
    Inline,
}

/// A field's value type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// `string`.
    String,
    /// `bytes`: base64 in JSON.
    Bytes,
    /// `bool`.
    Bool,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `double`.
    Double,
    /// A message, by index into [`Catalog::messages`].
    Message(u32),
}

impl Catalog {
    /// The message `kind` of `group`/`version` is written as.
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<&'static Message> {
        let key = (group, version, kind);
        self.kinds
            .binary_search_by(|k| (k.group, k.version, k.kind).cmp(&key))
            .ok()
            .map(|i| &self.messages[self.kinds[i].message as usize])
    }

    /// The message at `index`.
    pub fn message(&self, index: u32) -> &'static Message {
        &self.messages[index as usize]
    }

    /// The message named `name` (its full protobuf name).
    pub fn by_name(&self, name: &str) -> Option<&'static Message> {
        self.messages.iter().find(|m| m.name == name)
    }
}

impl Message {
    /// The field numbered `number`.
    pub fn field(&self, number: u32) -> Option<&'static Field> {
        self.fields
            .binary_search_by_key(&number, |f| f.number)
            .ok()
            .map(|i| &self.fields[i])
    }

    /// The field whose JSON key (or, for an inlined struct, protobuf name) is `json`.
    pub fn field_named(&self, json: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.json == json)
    }
}

#[cfg(test)]
mod tests;
