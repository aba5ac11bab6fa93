//! JSON → protobuf: an object kapi would answer with as JSON, written as the message
//! kube-apiserver would answer with.
//!
//! Fields go out in number order and map entries in key order, as gogo-protobuf writes
//! them, so equal objects give equal bytes. A JSON key the message lacks (none should
//! remain after pruning) is left out; a `null` is an absent field.

use base64::Engine as _;
use serde_json::{Map, Value};

use super::wire::{self, FIXED64, begin_nested, bytes_field, end_nested, varint_field};
use super::{Catalog, Field, FieldType, Label, Message, Shape, time};

/// A JSON value that does not fit its field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct EncodeError {
    /// The field (`spec.replicas`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Appends `object` written as `message` to `out`.
pub fn encode(
    catalog: &Catalog,
    message: &Message,
    object: &Map<String, Value>,
    out: &mut Vec<u8>,
) -> std::result::Result<(), EncodeError> {
    Encoder { catalog }
        .object(message, object, out)
        .map_err(|e| e.error())
}

/// The bytes of an enveloped list around its items ([`enveloped_list_frame`]): the
/// items go between `head` and `tail`, each as the length-delimited field
/// `items_field`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListFrame {
    /// The envelope's start and the list's fields before its items.
    pub head: Vec<u8>,
    /// The field number of the list's items.
    pub items_field: u32,
    /// The envelope's end.
    pub tail: Vec<u8>,
}

/// The frame of the enveloped list `message` (a `{Kind}List`, `items` its last field)
/// whose items are messages encoded already, `item_lens` bytes each: written with its
/// items between `head` and `tail`, the same bytes as the whole list encoded and
/// enveloped, without encoding the items again, so that a large list can be sent a
/// piece at a time. `fields` are the list's other fields (`metadata`). `None` when
/// `message` is not a list of that shape.
pub fn enveloped_list_frame(
    catalog: &Catalog,
    message: &Message,
    (api_version, kind): (&str, &str),
    fields: &Map<String, Value>,
    item_lens: impl IntoIterator<Item = usize>,
) -> std::result::Result<Option<ListFrame>, EncodeError> {
    let Some(items_field) = message
        .fields
        .last()
        .filter(|f| f.json == "items" && f.label == Label::Repeated)
    else {
        return Ok(None);
    };
    let mut list_head = Vec::with_capacity(64);
    encode(catalog, message, fields, &mut list_head)?;
    let raw_len = list_head.len()
        + item_lens
            .into_iter()
            .map(|len| wire::bytes_field_len(items_field.number, len))
            .sum::<usize>();
    let mut head = Vec::with_capacity(list_head.len() + 64);
    super::envelope::begin_wrap_sized(api_version, kind, raw_len, &mut head);
    head.extend_from_slice(&list_head);
    let mut tail = Vec::with_capacity(4);
    super::envelope::end_wrap_sized(&mut tail);
    Ok(Some(ListFrame {
        head,
        items_field: items_field.number,
        tail,
    }))
}

/// An error on its way up, collecting the path as it goes.
struct Failure {
    path: Vec<String>,
    message: String,
}

impl Failure {
    fn new(message: impl Into<String>) -> Self {
        Failure {
            path: Vec::new(),
            message: message.into(),
        }
    }

    fn at(mut self, segment: impl Into<String>) -> Self {
        self.path.push(segment.into());
        self
    }

    fn error(self) -> EncodeError {
        let mut path = String::new();
        for seg in self.path.iter().rev() {
            if !seg.starts_with('[') && !path.is_empty() {
                path.push('.');
            }
            path.push_str(seg);
        }
        EncodeError {
            path,
            message: self.message,
        }
    }
}

type Result<T> = std::result::Result<T, Failure>;

struct Encoder<'c> {
    catalog: &'c Catalog,
}

impl Encoder<'_> {
    fn object(&self, msg: &Message, obj: &Map<String, Value>, out: &mut Vec<u8>) -> Result<()> {
        for f in msg.fields {
            if f.label == Label::Inline {
                let FieldType::Message(i) = f.ty else {
                    return Err(Failure::new("an inlined field that is not a message"));
                };
                // Go always writes an embedded struct, empty or not.
                let mark = begin_nested(out, f.number);
                self.object(self.catalog.message(i), obj, out)?;
                end_nested(out, mark);
                continue;
            }
            match obj.get(f.json) {
                None | Some(Value::Null) => {}
                Some(v) => self.field(f, v, out).map_err(|e| e.at(f.json))?,
            }
        }
        Ok(())
    }

    fn field(&self, f: &Field, v: &Value, out: &mut Vec<u8>) -> Result<()> {
        match f.label {
            Label::Optional | Label::Inline => self.value(f.number, f.ty, v, out),
            Label::Repeated => {
                let items = v.as_array().ok_or_else(|| mismatch("an array", v))?;
                for (i, item) in items.iter().enumerate() {
                    if item.is_null() {
                        // A list keeps its length: a null item is Go's zero.
                        zero_value(f.number, f.ty, out);
                    } else {
                        self.value(f.number, f.ty, item, out)
                            .map_err(|e| e.at(format!("[{i}]")))?;
                    }
                }
                Ok(())
            }
            Label::Map => {
                let entries = v.as_object().ok_or_else(|| mismatch("an object", v))?;
                // serde_json's map is sorted by key, as gogo sorts map keys.
                for (key, value) in entries {
                    let mark = begin_nested(out, f.number);
                    bytes_field(out, 1, key.as_bytes());
                    if value.is_null() {
                        // gogo writes every entry's value; a null is Go's zero.
                        zero_value(2, f.ty, out);
                    } else {
                        self.value(2, f.ty, value, out)
                            .map_err(|e| e.at(format!("[{key:?}]")))?;
                    }
                    end_nested(out, mark);
                }
                Ok(())
            }
        }
    }

    fn value(&self, number: u32, ty: FieldType, v: &Value, out: &mut Vec<u8>) -> Result<()> {
        match ty {
            FieldType::String => {
                let s = v.as_str().ok_or_else(|| mismatch("a string", v))?;
                bytes_field(out, number, s.as_bytes());
            }
            FieldType::Bytes => {
                let s = v.as_str().ok_or_else(|| mismatch("a base64 string", v))?;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map_err(|e| Failure::new(format!("not base64: {e}")))?;
                bytes_field(out, number, &bytes);
            }
            FieldType::Bool => {
                let b = v.as_bool().ok_or_else(|| mismatch("a boolean", v))?;
                varint_field(out, number, u64::from(b));
            }
            FieldType::Int32 => {
                let n = integer(v)?;
                let n =
                    i32::try_from(n).map_err(|_| Failure::new(format!("{n} is not an int32")))?;
                varint_field(out, number, i64::from(n) as u64);
            }
            FieldType::Int64 => varint_field(out, number, integer(v)? as u64),
            FieldType::Double => {
                let d = v.as_f64().ok_or_else(|| mismatch("a number", v))?;
                wire::key(out, number, FIXED64);
                out.extend_from_slice(&d.to_le_bytes());
            }
            FieldType::Message(i) => {
                let msg = self.catalog.message(i);
                let mark = begin_nested(out, number);
                self.message_body(msg, v, out)?;
                end_nested(out, mark);
            }
        }
        Ok(())
    }

    /// The bytes of `msg` for the JSON `v`, special shapes included.
    fn message_body(&self, msg: &Message, v: &Value, out: &mut Vec<u8>) -> Result<()> {
        let num = |name: &str| {
            msg.field_named(name)
                .map(|f| f.number)
                .ok_or_else(|| Failure::new(format!("{} has no field {name}", msg.name)))
        };
        match msg.shape {
            Shape::Object => {
                let obj = v.as_object().ok_or_else(|| mismatch("an object", v))?;
                self.object(msg, obj, out)?;
            }
            Shape::Time | Shape::MicroTime => {
                let s = v.as_str().ok_or_else(|| mismatch("a timestamp", v))?;
                let (seconds, nanos) = time::parse_timestamp(s)
                    .ok_or_else(|| Failure::new(format!("{s:?} is not an RFC 3339 time")))?;
                // Time keeps whole seconds on the wire as in JSON; MicroTime microseconds.
                let nanos = if msg.shape == Shape::Time {
                    0
                } else {
                    nanos - nanos % 1000
                };
                varint_field(out, num("seconds")?, seconds as u64);
                varint_field(out, num("nanos")?, i64::from(nanos) as u64);
            }
            Shape::Duration => {
                let s = v.as_str().ok_or_else(|| mismatch("a duration", v))?;
                let nanos = time::parse_duration(s)
                    .ok_or_else(|| Failure::new(format!("{s:?} is not a duration")))?;
                varint_field(out, num("duration")?, nanos as u64);
            }
            Shape::Quantity => {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(mismatch("a quantity", v)),
                };
                bytes_field(out, num("string")?, s.as_bytes());
            }
            Shape::IntOrString => match v {
                Value::String(s) => {
                    varint_field(out, num("type")?, 1);
                    varint_field(out, num("intVal")?, 0);
                    bytes_field(out, num("strVal")?, s.as_bytes());
                }
                _ => {
                    let n = integer(v)?;
                    let n = i32::try_from(n)
                        .map_err(|_| Failure::new(format!("{n} is not an int32")))?;
                    varint_field(out, num("type")?, 0);
                    varint_field(out, num("intVal")?, i64::from(n) as u64);
                    bytes_field(out, num("strVal")?, b"");
                }
            },
            Shape::RawJson => {
                let raw = serde_json::to_vec(v).map_err(|e| Failure::new(e.to_string()))?;
                let field = msg
                    .fields
                    .first()
                    .ok_or_else(|| Failure::new(format!("{} has no field", msg.name)))?;
                bytes_field(out, field.number, &raw);
            }
            Shape::Items => {
                let field = msg
                    .fields
                    .first()
                    .ok_or_else(|| Failure::new(format!("{} has no field", msg.name)))?;
                self.field(field, v, out)?;
            }
            Shape::SchemaOrArray | Shape::SchemaOrStringArray => {
                let list = if msg.shape == Shape::SchemaOrArray {
                    "jSONSchemas"
                } else {
                    "property"
                };
                match v {
                    Value::Array(_) => self.field_by_name(msg, list, v, out)?,
                    _ => self.field_by_name(msg, "schema", v, out)?,
                }
            }
            Shape::SchemaOrBool => match v {
                Value::Bool(b) => varint_field(out, num("allows")?, u64::from(*b)),
                _ => {
                    varint_field(out, num("allows")?, 1);
                    self.field_by_name(msg, "schema", v, out)?;
                }
            },
        }
        Ok(())
    }

    fn field_by_name(&self, msg: &Message, name: &str, v: &Value, out: &mut Vec<u8>) -> Result<()> {
        let f = msg
            .field_named(name)
            .ok_or_else(|| Failure::new(format!("{} has no field {name}", msg.name)))?;
        self.field(f, v, out)
    }
}

/// The zero of `ty` as gogo writes it: an empty string, bytes or message, a 0.
fn zero_value(number: u32, ty: FieldType, out: &mut Vec<u8>) {
    match ty {
        FieldType::String | FieldType::Bytes | FieldType::Message(_) => {
            bytes_field(out, number, b"");
        }
        FieldType::Bool | FieldType::Int32 | FieldType::Int64 => varint_field(out, number, 0),
        FieldType::Double => {
            wire::key(out, number, FIXED64);
            out.extend_from_slice(&0f64.to_le_bytes());
        }
    }
}

fn integer(v: &Value) -> Result<i64> {
    if let Some(n) = v.as_i64() {
        return Ok(n);
    }
    match v.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Ok(f as i64),
        _ => Err(mismatch("an integer", v)),
    }
}

fn mismatch(expected: &str, v: &Value) -> Failure {
    let found = match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    Failure::new(format!("expected {expected}, found {found}"))
}
