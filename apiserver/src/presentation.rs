//! Objects in the form the client asked for: as they are, as a Table, as
//! PartialObjectMetadata, or as YAML.

use std::borrow::Cow;

use kapi_core::ObjectStrategy;
use kapi_core::yaml::double_quoted;
use saphyr::{Mapping, Scalar, Yaml, YamlEmitter};
use serde_json::Value;

use crate::negotiation::{Conversion, Output};
use crate::status::ApiError;
use crate::table::{self, IncludeObject, TableOptions};

/// How a response is presented beyond its media type.
#[derive(Clone, Copy, Debug, Default)]
pub struct Presentation {
    /// `?includeObject=` for Tables.
    pub include_object: IncludeObject,
    /// Leave out Table column definitions (watch events after the first).
    pub no_headers: bool,
}

/// `value` (an object, or a list when `is_list`) in `output`'s form. 406 for a
/// PartialObjectMetadata of a list or a PartialObjectMetadataList of an object, as
/// kube-apiserver answers.
pub fn present(
    strategy: &dyn ObjectStrategy,
    output: Output,
    value: &Value,
    is_list: bool,
    how: Presentation,
) -> Result<Value, ApiError> {
    let info = strategy.info();
    let now = chrono::Utc::now();
    let cell = |column: &str, obj: &Value| strategy.table_cell(column, obj);
    Ok(match output {
        Output::Json | Output::Yaml | Output::Protobuf(_) => value.clone(),
        Output::Converted(Conversion::Table(version)) => {
            let opts = TableOptions {
                version,
                include_object: how.include_object,
                no_headers: how.no_headers,
            };
            if is_list {
                table::list_table_with(info, value, &opts, now, &cell)
            } else {
                table::object_table_with(info, value, &opts, now, &cell)
            }
        }
        Output::Converted(Conversion::PartialObjectMetadata(v)) if !is_list => {
            table::partial_object_metadata(value, v)
        }
        Output::Converted(Conversion::PartialObjectMetadataList(v)) if is_list => {
            table::partial_object_metadata_list(value, v)
        }
        Output::Converted(_) => {
            return Err(ApiError::not_acceptable(&[
                "application/json",
                "application/yaml",
                "application/json;as=Table;v=v1;g=meta.k8s.io",
            ]));
        }
    })
}

/// The longest a key may be, escaped, and still be written `key: value`: YAML allows
/// implicit keys of at most 1024 characters, so a longer one must be explicit (`? key`).
const IMPLICIT_KEY_LIMIT: usize = 1000;

/// Whether some key of `value` is too long to be an implicit YAML key.
fn has_long_key(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (k, v) in map {
                    // Escaped, a character is at most 6 (`\u0013`): short keys fit. The quoting is
                    // never shorter than the block emitter's, so a key that fits here fits there.
                    if k.len() * 6 > IMPLICIT_KEY_LIMIT
                        && double_quoted(k).chars().count() > IMPLICIT_KEY_LIMIT
                    {
                        return true;
                    }
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    false
}

/// `value` in YAML's flow style with every key explicit (`{? "k" : v}`), which has no
/// limit on key length; numbers as the block emitter writes them.
fn to_flow_yaml(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str("? ");
                out.push_str(&double_quoted(k));
                out.push_str(" : ");
                to_flow_yaml(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                to_flow_yaml(v, out);
            }
            out.push(']');
        }
        Value::Number(n) if n.as_i64().is_none() => {
            let f = n.as_f64().unwrap_or(0.0);
            out.push_str(&Value::from(f).to_string());
        }
        Value::String(text) => out.push_str(&double_quoted(text)),
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A JSON value as a YAML document: block style as kube-apiserver writes it, or flow
/// style with explicit keys when a key is too long to be written `key: value`.
pub fn to_yaml(value: &Value) -> String {
    if has_long_key(value) {
        let mut out = String::new();
        to_flow_yaml(value, &mut out);
        out.push('\n');
        return out;
    }
    fn convert(v: &Value) -> Yaml<'_> {
        match v {
            Value::Null => Yaml::Value(Scalar::Null),
            Value::Bool(b) => Yaml::Value(Scalar::Boolean(*b)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Yaml::Value(Scalar::Integer(i)),
                None => Yaml::Value(Scalar::FloatingPoint(n.as_f64().unwrap_or(0.0).into())),
            },
            Value::String(s) => Yaml::Value(Scalar::String(Cow::Borrowed(s))),
            Value::Array(items) => Yaml::Sequence(items.iter().map(convert).collect()),
            Value::Object(map) => {
                let mut m = Mapping::new();
                for (k, v) in map {
                    m.insert(Yaml::Value(Scalar::String(Cow::Borrowed(k))), convert(v));
                }
                Yaml::Mapping(m)
            }
        }
    }
    let mut out = String::new();
    let doc = convert(value);
    let mut emitter = YamlEmitter::new(&mut out);
    if emitter.dump(&doc).is_err() {
        return serde_json::to_string_pretty(value).unwrap_or_default();
    }
    // The emitter starts documents with `---`; kube-apiserver's YAML does not.
    let body = out.strip_prefix("---\n").unwrap_or(&out);
    format!("{body}\n")
}

#[cfg(test)]
mod tests {
    use super::to_yaml;
    use crate::negotiation::decode_body;
    use serde_json::{Value, json};

    /// Whether `a` and `b` are the same document, numbers compared as `f64` (YAML has
    /// no integers beyond `i64`).
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            _ => a == b,
        }
    }

    /// Whatever the server answers in YAML reads back as the same document (the body
    /// fuzz target's property), for strings made of every character up to U+3000 and
    /// the awkward ones beyond, alone, with text around them, and as keys.
    #[test]
    fn yaml_answers_read_back_as_sent() {
        let mut strings: Vec<String> = (0u32..0x3000)
            .chain([0xfeff, 0xfffe, 0xfffd, 0x1f600, 0x10ffff])
            .filter_map(char::from_u32)
            .flat_map(|c| {
                [
                    format!("{c}"),
                    format!("a{c}b"),
                    format!("{c} x"),
                    format!("- {c}"),
                ]
            })
            .collect();
        for s in [
            "", " ", "-", "- ", "---", "...", "? x", ": x", "x: y", "x #y", "1_000", "0b101",
            "0o17", "0x1F", "+1", "1e3", ".5", "inf", "NaN", "y", "n", "~", "null", "<<", "%TAG",
            "@x", "`x", "!x", "&a", "*a", "|", ">", "\"", "'", "a\nb", "a\n", "\n", "\t", " a",
            "a ", "a\r\nb", "=", "a:b", "a,b", "[x]", "{x}",
        ] {
            strings.push(s.to_string());
        }
        for s in &strings {
            for doc in [
                json!({ "v": s }),
                json!({ s.as_str(): 1 }),
                json!([s, [s], { "k": [s] }]),
                json!({ "m": { s.as_str(): { s.as_str(): [] } } }),
            ] {
                let yaml = to_yaml(&doc);
                let back = decode_body("application/yaml", yaml.as_bytes()).unwrap_or_else(|e| {
                    panic!("{doc} as {yaml:?} does not read back: {}", e.message)
                });
                assert_eq!(back.value, doc, "{yaml:?}");
            }
        }
        // As deep as a body may nest, arrays, objects and both in turn.
        let deepest = crate::negotiation::MAX_NESTING;
        for doc in [
            (1..deepest).fold(json!([1]), |v, _| json!([v])),
            (1..deepest).fold(json!({"k": "v"}), |v, _| json!({"k": v})),
            (1..deepest).fold(json!([]), |v, i| {
                if i % 2 == 0 {
                    json!([v, "x"])
                } else {
                    json!({"": v, "a": {}})
                }
            }),
        ] {
            let yaml = to_yaml(&doc);
            let back = decode_body("application/yaml", yaml.as_bytes())
                .unwrap_or_else(|e| panic!("{yaml:?} does not read back: {}", e.message));
            assert_eq!(back.value, doc);
        }
        // Keys too long to be implicit ones (found by the body fuzz target), plain and
        // escaped, among others.
        let long = "k".repeat(1100);
        let escapes = "\u{1}".repeat(200);
        let mixed = "\u{13}\u{7f}\u{85}\u{9f}\u{feff}\u{fffe}\"\\é😀".repeat(40);
        for doc in [
            json!({ long.as_str(): 1, "a": { "b": [long.as_str(), 2.5, u64::MAX] } }),
            json!([{ "x": { escapes.as_str(): null } }, true]),
            json!({ mixed.as_str(): mixed.as_str(), "k": [mixed.as_str()] }),
        ] {
            let yaml = to_yaml(&doc);
            let back = decode_body("application/yaml", yaml.as_bytes())
                .unwrap_or_else(|e| panic!("{yaml:?} does not read back: {}", e.message));
            assert!(
                same(&back.value, &doc),
                "{yaml:?} read back as {}",
                back.value
            );
        }
        // Numbers come back as the same f64 (YAML has no integers beyond i64).
        for doc in [
            json!(1.5e300),
            json!(-0.0),
            json!(1e-7),
            json!(u64::MAX),
            json!(i64::MIN),
            json!({"a": [], "b": {}, "c": [[]], "d": [{}], "e": null}),
            Value::Null,
        ] {
            let yaml = to_yaml(&doc);
            let back = decode_body("application/yaml", yaml.as_bytes())
                .unwrap_or_else(|e| panic!("{doc} as {yaml:?} does not read back: {}", e.message));
            match doc.as_f64() {
                Some(n) => assert_eq!(back.value.as_f64(), Some(n), "{yaml:?}"),
                None => assert_eq!(back.value, doc, "{yaml:?}"),
            }
        }
    }
}
