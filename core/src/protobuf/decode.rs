//! Protobuf → JSON: a request body decoded into the JSON a JSON client would have sent.
//!
//! Go's zero values are what its clients write for "unset": a plain `omitempty` field
//! that arrives as `""`, `0` or `false` is left out, as kube-apiserver's JSON leaves it
//! out; a field Go keeps ([`Field::keep_zero`]) stays. Fields the catalog does not know
//! are skipped and reported in [`Decoded::unknown`] unless their value is a zero (what
//! a newer Go client writes for a field it has but did not set), so the caller can
//! refuse or warn as `fieldValidation` says. Nesting is bounded by [`MAX_DEPTH`].

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::wire::{Reader, Value as Wire, WireError};
use super::{Catalog, Field, FieldType, Label, Message, Shape, time};

/// How deep messages may nest in one body (serde_json bounds JSON bodies at 128).
pub const MAX_DEPTH: usize = 128;

/// A decoded body.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    /// The object, without `apiVersion`/`kind` (the envelope carries them).
    pub object: Map<String, Value>,
    /// Fields the catalog does not know, with non-zero values.
    pub unknown: Vec<UnknownField>,
}

/// A field of the body that its message does not declare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownField {
    /// The JSON path of the object holding it (`spec.template`, `""` at the top).
    pub path: String,
    /// Its field number.
    pub number: u32,
}

impl std::fmt::Display for UnknownField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "unknown field number {}", self.number)
        } else {
            write!(f, "unknown field number {} in {:?}", self.number, self.path)
        }
    }
}

/// Bytes that are not the message they should be.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DecodeError {
    /// What is wrong, in Go's protobuf words where it has some.
    pub message: String,
}

impl DecodeError {
    fn new(message: impl Into<String>) -> Self {
        DecodeError {
            message: message.into(),
        }
    }
}

impl From<WireError> for DecodeError {
    fn from(e: WireError) -> Self {
        DecodeError::new(e.to_string())
    }
}

/// Decodes `bytes` as `message`.
pub fn decode(
    catalog: &Catalog,
    message: &Message,
    bytes: &[u8],
) -> std::result::Result<Decoded, DecodeError> {
    let mut d = Decoder {
        catalog,
        path: Vec::new(),
        unknown: Vec::new(),
    };
    let mut object = Map::new();
    d.object(message, bytes, &mut object, 0)?;
    Ok(Decoded {
        object,
        unknown: d.unknown,
    })
}

#[derive(Clone, Debug)]
enum Segment {
    Key(&'static str),
    Index(usize),
}

struct Decoder<'c> {
    catalog: &'c Catalog,
    path: Vec<Segment>,
    unknown: Vec<UnknownField>,
}

type Result<T> = std::result::Result<T, DecodeError>;

impl Decoder<'_> {
    fn path(&self) -> String {
        let mut out = String::new();
        for seg in &self.path {
            match seg {
                Segment::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn object(
        &mut self,
        msg: &Message,
        bytes: &[u8],
        out: &mut Map<String, Value>,
        depth: usize,
    ) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(DecodeError::new(format!(
                "exceeded max depth of {MAX_DEPTH} nested messages"
            )));
        }
        let mut reader = Reader::new(bytes);
        while let Some((number, value)) = reader.next_field()? {
            match msg.field(number) {
                Some(f) => {
                    self.path.push(Segment::Key(f.json));
                    let r = self.field(f, value, out, depth);
                    self.path.pop();
                    r?;
                }
                None if value.is_zero() => {}
                None => self.unknown.push(UnknownField {
                    path: self.path(),
                    number,
                }),
            }
        }
        Ok(())
    }

    fn field(
        &mut self,
        f: &Field,
        value: Wire<'_>,
        out: &mut Map<String, Value>,
        depth: usize,
    ) -> Result<()> {
        match f.label {
            Label::Inline => {
                let FieldType::Message(i) = f.ty else {
                    return Err(DecodeError::new("an inlined field that is not a message"));
                };
                self.path.pop();
                let r = self.object(self.catalog.message(i), len(f, value)?, out, depth + 1);
                self.path.push(Segment::Key(f.json));
                r
            }
            Label::Optional => {
                if let FieldType::Message(i) = f.ty {
                    let msg = self.catalog.message(i);
                    let bytes = len(f, value)?;
                    if msg.shape == Shape::Object {
                        // A repeated occurrence merges into the first, as protobuf says.
                        let slot = out
                            .entry(f.json)
                            .and_modify(|v| {
                                if !v.is_object() {
                                    *v = Value::Object(Map::new());
                                }
                            })
                            .or_insert_with(|| Value::Object(Map::new()));
                        let Value::Object(obj) = slot else {
                            unreachable!()
                        };
                        return self.object(msg, bytes, obj, depth + 1);
                    }
                    match self.special(msg, bytes, depth + 1)? {
                        Some(v) => out.insert(f.json.to_string(), v),
                        None => out.remove(f.json),
                    };
                    return Ok(());
                }
                if !f.keep_zero && value.is_zero() {
                    out.remove(f.json);
                    return Ok(());
                }
                out.insert(f.json.to_string(), scalar(f, f.ty, value)?);
                Ok(())
            }
            Label::Repeated => {
                let mut items = Vec::new();
                match (f.ty, value) {
                    // proto2 writes repeated numbers unpacked; a packed run is read too.
                    (FieldType::Int32 | FieldType::Int64 | FieldType::Bool, Wire::Len(bytes)) => {
                        for v in Reader::packed_varints(bytes)? {
                            items.push(scalar(f, f.ty, Wire::Varint(v))?);
                        }
                    }
                    _ => {
                        let index = out
                            .get(f.json)
                            .and_then(Value::as_array)
                            .map_or(0, Vec::len);
                        self.path.push(Segment::Index(index));
                        let item = self.element(f, f.ty, value, depth);
                        self.path.pop();
                        items.push(item?);
                    }
                }
                let slot = out
                    .entry(f.json)
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = slot {
                    list.extend(items);
                } else {
                    *slot = Value::Array(items);
                }
                Ok(())
            }
            Label::Map => {
                let mut key = String::new();
                let mut val = None;
                let mut reader = Reader::new(len(f, value)?);
                while let Some((number, v)) = reader.next_field()? {
                    match number {
                        1 => key = string(f, v)?,
                        2 => val = Some(self.element(f, f.ty, v, depth)?),
                        _ => {}
                    }
                }
                let val = match val {
                    Some(v) => v,
                    None => self.zero(f.ty),
                };
                let slot = out
                    .entry(f.json)
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = slot {
                    map.insert(key, val);
                }
                Ok(())
            }
        }
    }

    /// A list element or map value: scalars as they are, messages whole.
    fn element(
        &mut self,
        f: &Field,
        ty: FieldType,
        value: Wire<'_>,
        depth: usize,
    ) -> Result<Value> {
        let FieldType::Message(i) = ty else {
            return scalar(f, ty, value);
        };
        let msg = self.catalog.message(i);
        let bytes = len(f, value)?;
        if msg.shape == Shape::Object {
            let mut obj = Map::new();
            self.object(msg, bytes, &mut obj, depth + 1)?;
            return Ok(Value::Object(obj));
        }
        Ok(self.special(msg, bytes, depth + 1)?.unwrap_or(Value::Null))
    }

    /// Go's zero value of a type, for a map entry without its value.
    fn zero(&self, ty: FieldType) -> Value {
        match ty {
            FieldType::String | FieldType::Bytes => Value::String(String::new()),
            FieldType::Bool => Value::Bool(false),
            FieldType::Int32 | FieldType::Int64 | FieldType::Double => Value::from(0),
            FieldType::Message(i) => match self.catalog.message(i).shape {
                Shape::Quantity => Value::String("0".into()),
                Shape::Object => Value::Object(Map::new()),
                _ => Value::Null,
            },
        }
    }

    /// The JSON of a special-shaped message; `None` for Go's zero that JSON omits.
    fn special(&mut self, msg: &Message, bytes: &[u8], depth: usize) -> Result<Option<Value>> {
        if depth >= MAX_DEPTH {
            return Err(DecodeError::new(format!(
                "exceeded max depth of {MAX_DEPTH} nested messages"
            )));
        }
        let mut fields: Vec<(&'static Field, Wire<'_>)> = Vec::new();
        let mut reader = Reader::new(bytes);
        while let Some((number, value)) = reader.next_field()? {
            if let Some(f) = msg.field(number) {
                fields.push((f, value));
            }
        }
        let get = |name: &str| {
            fields
                .iter()
                .rev()
                .find(|(f, _)| f.json == name)
                .map(|(f, v)| (*f, *v))
        };
        let int = |name: &str| -> Result<i64> {
            match get(name) {
                Some((f, v)) => match scalar(f, FieldType::Int64, v)? {
                    Value::Number(n) => Ok(n.as_i64().unwrap_or(0)),
                    _ => Ok(0),
                },
                None => Ok(0),
            }
        };
        let text = |name: &str| -> Result<String> {
            match get(name) {
                Some((f, v)) => string(f, v),
                None => Ok(String::new()),
            }
        };
        Ok(match msg.shape {
            Shape::Object => unreachable!("objects are decoded in place"),
            Shape::Time | Shape::MicroTime => {
                if bytes.is_empty() {
                    return Ok(None);
                }
                let (seconds, nanos) = (int("seconds")?, int("nanos")? as i32);
                let formatted = if msg.shape == Shape::Time {
                    time::format_time(seconds)
                } else {
                    time::format_micro_time(seconds, nanos)
                };
                let s = formatted.ok_or_else(|| {
                    DecodeError::new(format!("timestamp {seconds}s {nanos}ns is out of range"))
                })?;
                Some(Value::String(s))
            }
            Shape::Duration => Some(Value::String(time::format_duration(int("duration")?))),
            Shape::Quantity => {
                let s = text("string")?;
                Some(Value::String(if s.is_empty() { "0".into() } else { s }))
            }
            Shape::IntOrString => Some(if int("type")? == 1 {
                Value::String(text("strVal")?)
            } else {
                Value::from(int("intVal")? as i32)
            }),
            Shape::RawJson => {
                let raw = match fields.last() {
                    Some((f, v)) => len(f, *v)?,
                    None => return Ok(None),
                };
                if raw.is_empty() {
                    return Ok(None);
                }
                let v: Value = serde_json::from_slice(raw).map_err(|e| {
                    DecodeError::new(format!("{}: embedded object is not JSON: {e}", self.path()))
                })?;
                Some(v)
            }
            Shape::Items => {
                let mut obj = Map::new();
                self.object(msg, bytes, &mut obj, depth)?;
                Some(
                    obj.into_iter()
                        .next()
                        .map_or(Value::Array(vec![]), |(_, v)| v),
                )
            }
            Shape::SchemaOrArray | Shape::SchemaOrBool | Shape::SchemaOrStringArray => {
                let mut obj = Map::new();
                self.object(msg, bytes, &mut obj, depth)?;
                schema_or(msg.shape, obj)
            }
        })
    }
}

/// The JSON of apiextensions' `JSONSchemaPropsOr…` unions, as their Go `MarshalJSON`
/// writes them.
fn schema_or(shape: Shape, mut obj: Map<String, Value>) -> Option<Value> {
    let list = match shape {
        Shape::SchemaOrArray => obj.remove("jSONSchemas"),
        Shape::SchemaOrStringArray => obj.remove("property"),
        _ => None,
    };
    if let Some(list) = list.filter(|l| l.as_array().is_some_and(|a| !a.is_empty())) {
        return Some(list);
    }
    if let Some(schema) = obj.remove("schema") {
        return Some(schema);
    }
    match shape {
        Shape::SchemaOrBool => Some(Value::Bool(
            obj.get("allows").and_then(Value::as_bool).unwrap_or(false),
        )),
        _ => None,
    }
}

fn len<'a>(f: &Field, value: Wire<'a>) -> Result<&'a [u8]> {
    match value {
        Wire::Len(b) => Ok(b),
        other => Err(wrong_wire_type(f, other)),
    }
}

fn string(f: &Field, value: Wire<'_>) -> Result<String> {
    // Go keeps any bytes in a string and its JSON writes invalid UTF-8 as U+FFFD.
    Ok(String::from_utf8_lossy(len(f, value)?).into_owned())
}

fn scalar(f: &Field, ty: FieldType, value: Wire<'_>) -> Result<Value> {
    Ok(match (ty, value) {
        (FieldType::String, _) => Value::String(string(f, value)?),
        (FieldType::Bytes, Wire::Len(b)) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (FieldType::Bool, Wire::Varint(v)) => Value::Bool(v != 0),
        (FieldType::Int32, Wire::Varint(v)) => Value::from(v as i32),
        (FieldType::Int64, Wire::Varint(v)) => Value::from(v as i64),
        (FieldType::Double, Wire::Fixed64(v)) => {
            let d = f64::from_bits(v);
            Value::Number(
                Number::from_f64(d).ok_or_else(|| {
                    DecodeError::new(format!("{}: {d} is not a JSON number", f.json))
                })?,
            )
        }
        (_, other) => return Err(wrong_wire_type(f, other)),
    })
}

fn wrong_wire_type(f: &Field, value: Wire<'_>) -> DecodeError {
    let t = match value {
        Wire::Varint(_) => 0,
        Wire::Fixed64(_) => 1,
        Wire::Len(_) => 2,
        Wire::Fixed32(_) => 5,
    };
    DecodeError::new(format!("proto: wrong wireType = {t} for field {}", f.json))
}
