//! Request bodies in JSON or YAML, read within bounds (nesting, YAML aliases), with
//! duplicated fields noticed for `fieldValidation`.

use std::collections::BTreeSet;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::essence;
use crate::status::ApiError;

/// A decoded request body, with the paths of fields that appeared twice.
#[derive(Debug)]
pub struct Decoded {
    /// The body.
    pub value: Value,
    /// `spec.replicas`-style paths of duplicated fields.
    pub duplicates: Vec<String>,
}

/// The deepest nesting of arrays and objects a JSON document may have to be read
/// (serde_json's recursion limit): bodies deeper are refused with 400, and no write may
/// store an object deeper, or it could not be read back.
pub const MAX_NESTING: usize = 127;

/// How deeply arrays and objects nest in `value` (a scalar: 0), without recursion.
pub fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        deepest = deepest.max(depth + 1);
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    deepest
}

/// Reads a request body in JSON (`application/json` and the patch types, which are JSON
/// too) or YAML.
pub fn decode_body(content_type: &str, body: &[u8]) -> Result<Decoded, ApiError> {
    match essence(content_type).as_str() {
        "application/yaml"
        | "application/x-yaml"
        | "text/yaml"
        | "application/apply-patch+yaml" => decode_yaml(body),
        _ => decode_json(body),
    }
}

/// Reads the body of a create or update of a `kind` as [`decode_body`] does. A body
/// that does not decode gets kube-apiserver's 400 for a body it cannot tell the kind
/// of (`transformDecodeError` in k8s.io/apiserver's `handlers/rest.go`):
/// `the object provided is unrecognized (must be of type {kind}): {why} ({the first
/// 30 bytes})`, where a JSON body's `why` is `couldn't get version/kind; json parse
/// error: ...` (a truncated one's in Go's words, `unexpected end of JSON input`).
pub fn decode_object(content_type: &str, body: &[u8], kind: &str) -> Result<Decoded, ApiError> {
    let why = match essence(content_type).as_str() {
        "application/yaml" | "application/x-yaml" | "text/yaml" => match decode_yaml(body) {
            Ok(decoded) => return Ok(decoded),
            Err(e) => e.message,
        },
        _ => match parse_json(body) {
            Ok(decoded) => return Ok(decoded),
            Err(e) if e.is_eof() => {
                "couldn't get version/kind; json parse error: unexpected end of JSON input".into()
            }
            Err(e) => format!("couldn't get version/kind; json parse error: {e}"),
        },
    };
    Err(ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {why} ({})",
        summarize(body)
    )))
}

/// The start of a body, as kube-apiserver quotes one it could not decode
/// (`summarizeData`): `<empty>`, up to 30 bytes of a body that begins with `{`, or the
/// hex of up to 30 bytes of any other; ` ...` when there was more.
pub fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    let shown = &body[..body.len().min(MAX)];
    let more = if body.len() > MAX { " ..." } else { "" };
    match body.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(shown)),
        Some(_) => {
            let hex: String = shown.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

fn decode_json(body: &[u8]) -> Result<Decoded, ApiError> {
    parse_json(body).map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))
}

fn parse_json(body: &[u8]) -> Result<Decoded, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let mut duplicates = BTreeSet::new();
    let value = TrackDuplicates {
        path: String::new(),
        duplicates: &mut duplicates,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v))?;
    Ok(Decoded {
        value,
        duplicates: duplicates.into_iter().collect(),
    })
}

/// How many nodes aliases may produce in one YAML body, all aliases together: enough
/// for any real document, too few for a "billion laughs".
const YAML_ALIAS_BUDGET: usize = 100_000;

/// A collection being read from YAML events, with its anchor.
enum Open {
    Sequence(Vec<Value>),
    /// The mapping so far and the key waiting for its value.
    Mapping(Map<String, Value>, Option<String>),
}

/// Reads the first YAML document of a body from the parser's events, with no recursion:
/// nesting deeper than JSON's ([`MAX_NESTING`]) and aliases past
/// [`YAML_ALIAS_BUDGET`] nodes are refused with 400, as are non-scalar keys. Duplicate
/// keys are refused by the parser.
fn decode_yaml(body: &[u8]) -> Result<Decoded, ApiError> {
    use saphyr::{Scalar, Yaml};
    use saphyr_parser::{Event, Parser};
    use std::collections::HashMap;
    let bad = |why: &str| ApiError::bad_request(format!("error converting YAML to JSON: {why}"));
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("error decoding YAML: not UTF-8"))?;
    let mut stack: Vec<(Open, usize)> = Vec::new();
    let mut anchors: HashMap<usize, Value> = HashMap::new();
    let mut alias_budget = YAML_ALIAS_BUDGET;
    let mut document: Option<Value> = None;
    for event in Parser::new_from_str(text) {
        let (event, _span) = event.map_err(|e| bad(&e.to_string()))?;
        let (node, anchor, scalar) = match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentStart(_) | Event::Nothing => {
                continue;
            }
            // Only the first document is read, as kube-apiserver reads a body.
            Event::DocumentEnd => break,
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_NESTING {
                    return Err(bad(&format!("nested deeper than {MAX_NESTING} levels")));
                }
                let open = if matches!(event, Event::SequenceStart(..)) {
                    Open::Sequence(Vec::new())
                } else {
                    Open::Mapping(Map::new(), None)
                };
                stack.push((open, anchor));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (open, anchor) = stack.pop().ok_or_else(|| bad("unbalanced collection"))?;
                let node = match open {
                    Open::Sequence(items) => Value::Array(items),
                    Open::Mapping(map, _) => Value::Object(map),
                };
                (node, anchor, false)
            }
            Event::Scalar(v, style, anchor, tag) => {
                let node = match Yaml::value_from_cow_and_metadata(v, style, tag.as_ref()) {
                    Yaml::Value(Scalar::Null) => Value::Null,
                    Yaml::Value(Scalar::Boolean(b)) => Value::Bool(b),
                    Yaml::Value(Scalar::Integer(i)) => Value::from(i),
                    Yaml::Value(Scalar::FloatingPoint(f)) => {
                        serde_json::Number::from_f64(f.into_inner())
                            .map(Value::Number)
                            .unwrap_or(Value::Null)
                    }
                    Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
                    _ => return Err(bad("a scalar that is not valid for its tag")),
                };
                (node, anchor, true)
            }
            Event::Alias(id) => {
                let node = anchors.get(&id).ok_or_else(|| bad("an unknown alias"))?;
                let size = nodes_within(node, alias_budget)
                    .ok_or_else(|| bad("aliases expand to too many nodes"))?;
                alias_budget -= size;
                (node.clone(), 0, !node.is_array() && !node.is_object())
            }
        };
        if anchor > 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => {
                document = Some(node);
            }
            Some((Open::Sequence(items), _)) => items.push(node),
            Some((Open::Mapping(map, key), _)) => match key.take() {
                None if !scalar => return Err(bad("mapping keys must be scalars")),
                None => {
                    *key = Some(match node {
                        Value::String(s) => s,
                        other => other.to_string(),
                    });
                }
                Some(k) => {
                    map.insert(k, node);
                }
            },
        }
    }
    let value = document.unwrap_or(Value::Null);
    // Aliases can nest deeper than any one collection did.
    if nesting(&value) > MAX_NESTING {
        return Err(bad(&format!("nested deeper than {MAX_NESTING} levels")));
    }
    Ok(Decoded {
        value,
        duplicates: Vec::new(),
    })
}

/// The number of nodes in `value`, or `None` once it passes `budget` (counted without
/// recursion, and without walking more than `budget` nodes).
fn nodes_within(value: &Value, budget: usize) -> Option<usize> {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        count += 1;
        if count > budget {
            return None;
        }
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    Some(count)
}

/// A `serde_json::Value` deserializer that notes duplicated object keys (serde_json
/// keeps the last one silently; Kubernetes' strict decoding reports them).
struct TrackDuplicates<'a> {
    path: String,
    duplicates: &'a mut BTreeSet<String>,
}

impl<'de> de::DeserializeSeed<'de> for TrackDuplicates<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TrackDuplicates<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let seed = TrackDuplicates {
                path: format!("{}[{}]", self.path, items.len()),
                duplicates: &mut *self.duplicates,
            };
            match seq.next_element_seed(seed)? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if map.contains_key(&key) {
                self.duplicates.insert(path.clone());
            }
            let value = access.next_value_seed(TrackDuplicates {
                path,
                duplicates: &mut *self.duplicates,
            })?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_that_do_not_decode_are_refused_in_kubes_words() {
        let refused = |content_type: &str, body: &[u8]| {
            decode_object(content_type, body, "Namespace")
                .unwrap_err()
                .message
        };
        assert_eq!(
            refused("application/json", b""),
            "the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"
        );
        assert_eq!(
            refused(
                "application/json",
                br#"{"apiVersion":"v1","kind":"Namespace","metadata":{"#
            ),
            "the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"apiVersion\":\"v1\",\"kind\":\"Nam ...)"
        );
        assert!(
            refused("application/json", b"[1,]").ends_with(" (5b312c5d)"),
            "{}",
            refused("application/json", b"[1,]")
        );
        assert!(
            refused("application/yaml", b"a: [1\n").starts_with(
                "the object provided is unrecognized (must be of type Namespace): error converting YAML to JSON: "
            )
        );
        assert!(decode_object("application/json", b"{}", "Namespace").is_ok());
    }

    #[test]
    fn what_nesting_allows_is_exactly_what_decodes() {
        let nest = |n: usize| (0..n).fold(Value::from(1), |v, _| serde_json::json!([v]));
        assert_eq!(
            nesting(&serde_json::json!({"a": [1, {"b": {}}], "c": 2})),
            4
        );
        assert_eq!(nesting(&Value::from("x")), 0);
        let fits = serde_json::to_vec(&nest(MAX_NESTING)).unwrap();
        assert!(decode_body("application/json", &fits).is_ok());
        let deeper = serde_json::to_vec(&nest(MAX_NESTING + 1)).unwrap();
        assert_eq!(
            decode_body("application/json", &deeper).unwrap_err().code,
            400
        );
        assert_eq!(nesting(&nest(MAX_NESTING + 1)), MAX_NESTING + 1);
    }

    #[test]
    fn duplicates_are_noticed_and_yaml_is_read() {
        let d = decode_body(
            "application/json",
            br#"{"spec": {"a": 1, "a": 2}, "items": [{"b": 1, "b": 1}]}"#,
        )
        .unwrap();
        assert_eq!(
            d.duplicates,
            vec!["items[0].b".to_string(), "spec.a".to_string()]
        );
        assert_eq!(d.value["spec"]["a"], 2);
        let y = decode_body("application/yaml", b"kind: Widget\nspec:\n  size: 3\n").unwrap();
        assert_eq!(
            y.value,
            serde_json::json!({"kind": "Widget", "spec": {"size": 3}})
        );
        assert_eq!(decode_body("application/json", b"{").unwrap_err().code, 400);
    }

    #[test]
    fn yaml_is_read_without_recursion_and_within_bounds() {
        let y = decode_body(
            "application/yaml",
            b"a: &x [1, {b: true}]\nc: *x\nd: ~\ne: '7'\n1: 2.5\n---\nnot: read\n",
        )
        .unwrap();
        assert_eq!(
            y.value,
            serde_json::json!({"a": [1, {"b": true}], "c": [1, {"b": true}], "d": null, "e": "7", "1": 2.5})
        );
        // Block sequences nest two bytes a level: 100,000 levels are refused, not built.
        let deep = format!("{}x\n", "- ".repeat(100_000));
        assert_eq!(
            decode_body("application/yaml", deep.as_bytes())
                .unwrap_err()
                .code,
            400
        );
        let fits = format!("{}x\n", "- ".repeat(MAX_NESTING));
        assert_eq!(
            nesting(
                &decode_body("application/yaml", fits.as_bytes())
                    .unwrap()
                    .value
            ),
            MAX_NESTING
        );
        // Aliases that would make more nodes than the budget, or nest too deeply.
        let mut laughs =
            String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for i in 1..9 {
            laughs.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                vec![format!("*a{}", i - 1); 10].join(", ")
            ));
        }
        assert_eq!(
            decode_body("application/yaml", laughs.as_bytes())
                .unwrap_err()
                .code,
            400
        );
        let half = format!("{}&x x\n", "- ".repeat(100));
        let doubled = format!("a: {half}b:\n{}", half.replace("&x x", "*x"));
        assert!(decode_body("application/yaml", doubled.as_bytes()).is_err());
        assert_eq!(
            decode_body("application/yaml", b"? [a]\n: b\n")
                .unwrap_err()
                .code,
            400
        );
        assert_eq!(
            decode_body("application/yaml", b"a: *nothing\n")
                .unwrap_err()
                .code,
            400
        );
    }
}
