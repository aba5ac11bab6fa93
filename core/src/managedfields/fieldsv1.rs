//! The `FieldsV1` format of `metadata.managedFields[].fieldsV1`: a [`FieldSet`] as a
//! JSON trie, exactly as kube (SMD's `Set.ToJSON`/`FromJSON`) writes and reads it.
//!
//! Each key names a path element: `f:<name>` a field, `k:<object>` a list item by its
//! key fields (compact JSON, fields sorted by name), `v:<json>` a set value, `i:<n>` a
//! list index. A key whose element is itself a member and has nothing below it maps
//! to `{}`; an element with paths below it maps to an object of those, with `".": {}`
//! first when the element is a member too.
//!
//! [`encode`] returns the bytes as a `String` because the order matters and a
//! `serde_json::Value` cannot keep it: kube writes keys in path-element order
//! (`f:` keys by name, then `k:` keys by key values compared as values, numbers
//! numerically, then `v:`, then `i:` numerically), while this workspace's
//! `serde_json::Map` (no `preserve_order` feature) sorts keys as strings, which puts
//! `k:{"port":10}` before `k:{"port":9}` and `i:10` before `i:9`. [`to_value`] is the
//! same document as a `Value`, for callers that can live with string order.
//!
//! Strings inside `k:` and `v:` are written as Go writes them (`<`, `>`, `&` as
//! `\u003c`, `\u003e`, `\u0026`), since that text is part of the key itself; the
//! outer JSON escaping is left to whoever serializes the document (kapi's Go-style
//! writer escapes the same characters kube's does).
//!
//! Decoding follows SMD: keys with an unknown one-letter prefix (`x:...`) are skipped
//! so that a newer format's elements are dropped rather than refused; a `null` where
//! an object is expected reads as `{}`; everything else malformed is an error.

use std::fmt;

use serde_json::{Map, Value};

use super::path::PathElement;
use super::set::FieldSet;
use super::value::{write_json, write_json_string};

/// A `fieldsV1` document that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}{}", Keys(at))]
pub struct FieldsV1Error {
    /// The keys from the document's root to the offending one (raw, as written).
    pub at: Vec<String>,
    /// What is wrong.
    pub reason: FieldsV1Reason,
}

/// Why a `fieldsV1` document cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldsV1Reason {
    /// A key shorter than two characters.
    #[error("key must be 2 characters long")]
    KeyTooShort,
    /// A key whose second character is not `:`.
    #[error("missing colon")]
    MissingColon,
    /// A `k:` key whose text is not a JSON object.
    #[error("invalid key element: {0}")]
    BadKey(String),
    /// A `v:` key whose text is not JSON.
    #[error("invalid value element: {0}")]
    BadValue(String),
    /// An `i:` key whose text is not a non-negative integer.
    #[error("invalid index element")]
    BadIndex,
    /// A value that is not a JSON object (nor `null`).
    #[error("expected an object, got {0}")]
    NotAnObject(&'static str),
}

/// Renders the key path of an error: ` at "f:spec" > "k:{...}"`.
struct Keys<'a>(&'a [String]);

impl fmt::Display for Keys<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in self.0.iter().enumerate() {
            let sep = if i == 0 { " at " } else { " > " };
            write!(f, "{sep}{key:?}")?;
        }
        Ok(())
    }
}

/// The key of one path element: `f:name`, `k:{"name":"a"}`, `v:"a"`, `i:3`.
pub fn element_key(pe: &PathElement) -> String {
    let mut out = String::new();
    match pe {
        PathElement::Field(name) => {
            out.push_str("f:");
            out.push_str(name);
        }
        PathElement::Key(fields) => {
            out.push_str("k:{");
            for (i, (name, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // Field names are written without HTML escaping, values with it, as
                // json-iterator's WriteObjectField and WriteVal do.
                write_json_string(&mut out, name, false);
                out.push(':');
                write_json(&mut out, v);
            }
            out.push('}');
        }
        PathElement::Value(v) => {
            out.push_str("v:");
            write_json(&mut out, v);
        }
        PathElement::Index(i) => {
            out.push_str("i:");
            out.push_str(&i.to_string());
        }
    }
    out
}

/// Parses one key; `Ok(None)` for an unknown prefix, which SMD skips.
pub fn parse_element_key(key: &str) -> Result<Option<PathElement>, FieldsV1Reason> {
    let bytes = key.as_bytes();
    if bytes.len() < 2 {
        return Err(FieldsV1Reason::KeyTooShort);
    }
    if bytes[1] != b':' {
        return Err(FieldsV1Reason::MissingColon);
    }
    // Bytes 0 and 1 are ASCII here, so the rest starts on a character boundary.
    let rest = key.get(2..).unwrap_or_default();
    let pe = match bytes[0] {
        b'f' => PathElement::Field(rest.to_owned()),
        b'v' => {
            let v =
                serde_json::from_str(rest).map_err(|e| FieldsV1Reason::BadValue(e.to_string()))?;
            PathElement::Value(v)
        }
        b'k' => match serde_json::from_str(rest) {
            Ok(Value::Object(fields)) => PathElement::key(fields),
            // json-iterator reads `null` as an object with no fields.
            Ok(Value::Null) => PathElement::Key(Vec::new()),
            Ok(other) => {
                let msg = format!(
                    "expected an object, got {}",
                    crate::field::json_type_name(&other)
                );
                return Err(FieldsV1Reason::BadKey(msg));
            }
            Err(e) => return Err(FieldsV1Reason::BadKey(e.to_string())),
        },
        b'i' => PathElement::Index(rest.parse().map_err(|_| FieldsV1Reason::BadIndex)?),
        _ => return Ok(None),
    };
    Ok(Some(pe))
}

/// The document kube writes for `set`, byte for byte (compact, keys in SMD's order).
pub fn encode(set: &FieldSet) -> String {
    let mut out = String::from("{");
    emit(set, false, &mut out);
    out.push('}');
    out
}

/// Writes the entries of one node: `"."` first when `include_self`, then members and
/// children merged in element order.
fn emit(set: &FieldSet, include_self: bool, out: &mut String) {
    let mut first = true;
    let mut entry = |out: &mut String, key: &str| {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        write_json_string(out, key, false);
        out.push(':');
    };
    if include_self && !set.is_empty() {
        entry(out, ".");
        out.push_str("{}");
    }
    let mut members = set.members.iter().peekable();
    let mut children = set.children.iter().peekable();
    loop {
        let (member, child) = match (members.peek(), children.peek()) {
            (None, None) => break,
            (Some(m), Some((c, _))) if m < c => (members.next(), None),
            (Some(m), Some((c, _))) if m > c => (None, children.next()),
            (Some(_), Some(_)) => (members.next(), children.next()),
            (Some(_), None) => (members.next(), None),
            (None, Some(_)) => (None, children.next()),
        };
        match (member, child) {
            (Some(pe), None) => {
                entry(out, &element_key(pe));
                out.push_str("{}");
            }
            (_, Some((pe, sub))) => {
                entry(out, &element_key(pe));
                out.push('{');
                emit(sub, member.is_some(), out);
                out.push('}');
            }
            (None, None) => break,
        }
    }
}

/// The [`encode`]d document as a `serde_json::Value`. Its keys serialize in string
/// order, which differs from kube's where numeric keys or values sort differently.
pub fn to_value(set: &FieldSet) -> Value {
    Value::Object(node_value(set, false))
}

fn node_value(set: &FieldSet, include_self: bool) -> Map<String, Value> {
    let mut m = Map::new();
    if include_self && !set.is_empty() {
        m.insert(".".to_owned(), Value::Object(Map::new()));
    }
    for pe in &set.members {
        if !set.children.contains_key(pe) {
            m.insert(element_key(pe), Value::Object(Map::new()));
        }
    }
    for (pe, sub) in &set.children {
        let own = node_value(sub, set.members.contains(pe));
        m.insert(element_key(pe), Value::Object(own));
    }
    m
}

/// Reads a `fieldsV1` document (`null` is the empty set).
pub fn decode(doc: &Value) -> Result<FieldSet, FieldsV1Error> {
    let mut at = Vec::new();
    let (children, _) = read_node(doc, &mut at)?;
    Ok(children.unwrap_or_default())
}

/// Reads a `fieldsV1` document from its JSON text.
pub fn decode_str(doc: &str) -> Result<FieldSet, FieldsV1Error> {
    let v: Value = serde_json::from_str(doc).map_err(|e| FieldsV1Error {
        at: Vec::new(),
        reason: FieldsV1Reason::BadValue(e.to_string()),
    })?;
    decode(&v)
}

/// Reads one node: the set below it (if any) and whether the element itself is a
/// member (it is when it says `"."`, or when nothing is below it).
fn read_node(v: &Value, at: &mut Vec<String>) -> Result<(Option<FieldSet>, bool), FieldsV1Error> {
    let entries = match v {
        Value::Object(entries) => entries,
        Value::Null => return Ok((None, true)),
        other => {
            return Err(FieldsV1Error {
                at: at.clone(),
                reason: FieldsV1Reason::NotAnObject(crate::field::json_type_name(other)),
            });
        }
    };
    let mut children: Option<FieldSet> = None;
    let mut is_member = false;
    for (key, sub) in entries {
        if key == "." {
            is_member = true;
            continue;
        }
        at.push(key.clone());
        let pe = parse_element_key(key).map_err(|reason| FieldsV1Error {
            at: at.clone(),
            reason,
        })?;
        let Some(pe) = pe else {
            at.pop();
            continue;
        };
        let (grandchildren, child_is_member) = read_node(sub, at)?;
        at.pop();
        if child_is_member {
            children.get_or_insert_default().members.insert(pe.clone());
        }
        if let Some(g) = grandchildren {
            children.get_or_insert_default().children.insert(pe, g);
        }
    }
    let is_member = is_member || children.is_none();
    Ok((children, is_member))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn f(name: &str) -> PathElement {
        PathElement::field(name)
    }

    #[test]
    fn encodes_as_kube() {
        let mut set = FieldSet::new();
        set.insert(&[f("metadata"), f("labels")]);
        set.insert(&[f("metadata"), f("labels"), f("app")]);
        let nginx = PathElement::key([("name", json!("nginx"))]);
        set.insert(&[f("spec"), f("containers"), nginx.clone()]);
        set.insert(&[f("spec"), f("containers"), nginx.clone(), f("image")]);
        set.insert(&[f("spec"), f("containers"), nginx, f("name")]);
        let want = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}"#;
        assert_eq!(encode(&set), want);
        assert_eq!(decode_str(want).unwrap(), set);
        assert_eq!(decode(&to_value(&set)).unwrap(), set);
        assert_eq!(to_value(&set), serde_json::from_str::<Value>(want).unwrap());
    }

    #[test]
    fn orders_keys_as_smd_not_as_strings() {
        let mut set = FieldSet::new();
        for port in [80, 9, 8080] {
            let k = PathElement::key([("protocol", json!("TCP")), ("port", json!(port))]);
            set.insert(&[f("ports"), k]);
        }
        for i in [10, 9] {
            set.insert(&[f("args"), PathElement::Index(i)]);
        }
        set.insert(&[f("set"), PathElement::Value(json!("a"))]);
        set.insert(&[f("set"), PathElement::Value(json!(2))]);
        let want = concat!(
            r#"{"f:args":{"i:9":{},"i:10":{}},"#,
            r#""f:ports":{"k:{\"port\":9,\"protocol\":\"TCP\"}":{},"#,
            r#""k:{\"port\":80,\"protocol\":\"TCP\"}":{},"#,
            r#""k:{\"port\":8080,\"protocol\":\"TCP\"}":{}},"#,
            r#""f:set":{"v:2":{},"v:\"a\"":{}}}"#,
        );
        assert_eq!(encode(&set), want);
        assert_eq!(decode_str(want).unwrap(), set);
    }

    #[test]
    fn writes_go_escapes_inside_keys() {
        let mut set = FieldSet::new();
        set.insert(&[f("a<b"), PathElement::Value(json!("<&>"))]);
        set.insert(&[PathElement::Value(json!(1.5))]);
        let want = r#"{"f:a<b":{"v:\"\\u003c\\u0026\\u003e\"":{}},"v:1.5":{}}"#;
        assert_eq!(encode(&set), want);
        assert_eq!(decode_str(want).unwrap(), set);
    }

    /// SMD's golden documents (`serialize_test.go`): read and written back byte for
    /// byte, whatever mix of element kinds a node holds.
    #[test]
    fn round_trips_smd_golden_documents() {
        let golden = [
            r#"{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\"name\":\"first\"}":{},"k:{\"name\":\"second\"}":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\"aa\"":{},"v:\"ab\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}"#,
            r#"{"f:aaa":{"k:{\"name\":\"second\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},"f:aaf":{"k:{\"port\":443,\"protocol\":\"udp\"}":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"k:{\"name\":\"first\"}":{}},"v:\"ab\"":{"f:aaf":{"i:4":{}},"v:1":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:1":{"f:aae":{"i:4":{}}}},"i:3":{"f:aab":{"v:true":{"v:\"aa\"":{}}},"f:aaf":{},"i:1":{}}}"#,
            r#"{"f:spec":{".":{},"f:apps":{".":{},"k:{\"name\":\" app-💻\"}":{".":{},"f:container":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"name\":\"port 🔑\"}":{".":{},"f:containerPort":{},"f:name":{}}}},"f:name":{}},"k:{\"name\":\" app-🚀\"}":{".":{},"f:container":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"name\":\"port-✅ \"}":{".":{},"f:containerPort":{},"f:name":{}}}},"f:name":{}}}}}"#,
        ];
        for doc in golden {
            let set = decode_str(doc).unwrap();
            assert_eq!(encode(&set), doc);
        }
        // Not normalized: spaces inside keys and values, keys out of order.
        let loose =
            r#"{"v: 3": {}, "k:{ \"protocol\":\"udp\",\"port\":443}": {}, "f:b": {}, "f:a": {}}"#;
        assert_eq!(
            encode(&decode_str(loose).unwrap()),
            r#"{"f:a":{},"f:b":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:3":{}}"#
        );
    }

    #[test]
    fn path_element_keys_round_trip() {
        let cases = [
            ("i:0", PathElement::Index(0)),
            ("i:1234", PathElement::Index(1234)),
            ("f:", f("")),
            ("f: string-with-spaces   ", f(" string-with-spaces   ")),
            ("f:spec-🚀", f("spec-🚀")),
            (r"f:spec-\n", f(r"spec-\n")),
            (
                r#"k:{"name":"my-container"}"#,
                PathElement::key([("name", json!("my-container"))]),
            ),
            (
                r#"k:{"port":"8080","protocol":"TCP"}"#,
                PathElement::key([("protocol", json!("TCP")), ("port", json!("8080"))]),
            ),
            (
                r#"k:{"optionalField":null}"#,
                PathElement::key([("optionalField", json!(null))]),
            ),
            (
                r#"k:{"jsonField":{"A":1,"B":null,"C":"D","E":{"F":"G"}}}"#,
                PathElement::key([(
                    "jsonField",
                    json!({"A": 1, "B": null, "C": "D", "E": {"F": "G"}}),
                )]),
            ),
            (
                r#"k:{"listField":["1","2","3"]}"#,
                PathElement::key([("listField", json!(["1", "2", "3"]))]),
            ),
            ("v:null", PathElement::Value(json!(null))),
            (
                r#"v:"some-string""#,
                PathElement::Value(json!("some-string")),
            ),
            ("v:1234", PathElement::Value(json!(1234))),
            (
                r#"v:{"some":"json"}"#,
                PathElement::Value(json!({"some": "json"})),
            ),
            (
                r#"k:{"name":"你好世界"}"#,
                PathElement::key([("name", json!("你好世界"))]),
            ),
        ];
        for (key, pe) in cases {
            assert_eq!(parse_element_key(key).unwrap(), Some(pe.clone()), "{key}");
            assert_eq!(element_key(&pe), key);
        }
        assert_eq!(parse_element_key("r:Hello").unwrap(), None);
        let bad = [
            "",
            "no-colon",
            "i:index is not a number",
            "i:1.23",
            "i:",
            "v:invalid json",
            "v:",
            "k:invalid json",
            r#"k:{"name":invalid}"#,
            r#"v:{"some":" \x41"}"#,
            "v",
            "k",
            "f",
            "i",
            r#"v:{"a":"b""#,
            r#"k:{"a":"b""#,
            "i: 0",
            "i:0 ",
            r#"v:{"some":"json"} {"other":"json"}"#,
            r#"k:{"name":"my-container"} {"other":"my-container"}"#,
            r#"v:{"some":"json"} garbage"#,
            r#"k:{"name":"my-container"} garbage"#,
        ];
        for key in bad {
            assert!(parse_element_key(key).is_err(), "{key}");
        }
    }

    #[test]
    fn decodes_as_smd() {
        // A member with children, a member-only leaf, `null` as `{}`, unknown prefixes
        // skipped (and a node holding only unknown keys is a member).
        let doc = json!({
            "f:a": {".": {}, "f:b": {}},
            "f:c": null,
            "x:future": {"f:z": {}},
            "f:d": {"y:unknown": {}},
            "f:e": {"f:f": {}},
        });
        let set = decode(&doc).unwrap();
        let want = FieldSet::from_paths([
            vec![f("a")],
            vec![f("a"), f("b")],
            vec![f("c")],
            vec![f("d")],
            vec![f("e"), f("f")],
        ]);
        assert_eq!(set, want);
        assert_eq!(decode(&json!(null)).unwrap(), FieldSet::new());
        assert_eq!(decode(&json!({})).unwrap(), FieldSet::new());
    }

    #[test]
    fn reports_errors_with_their_keys() {
        let cases = [
            (
                json!({"f:a": {"z": {}}}),
                r#"key must be 2 characters long at "f:a" > "z""#,
            ),
            (json!({"fa": {}}), r#"missing colon at "fa""#),
            (
                json!({"f:a": {"k:[1]": {}}}),
                r#"invalid key element: expected an object, got array at "f:a" > "k:[1]""#,
            ),
            (
                json!({"v:{": {}}),
                "invalid value element: EOF while parsing an object at line 1 column 1 at \"v:{\"",
            ),
            (json!({"i:-1": {}}), r#"invalid index element at "i:-1""#),
            (
                json!({"f:a": {"f:b": []}}),
                r#"expected an object, got array at "f:a" > "f:b""#,
            ),
            (json!([]), "expected an object, got array"),
        ];
        for (doc, want) in cases {
            let err = decode(&doc).unwrap_err();
            assert_eq!(err.to_string(), want, "{doc}");
        }
        assert!(decode_str("{").is_err());
    }
}
