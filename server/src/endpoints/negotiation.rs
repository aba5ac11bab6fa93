//! Content negotiation: which media type a client accepts (JSON, YAML, a Table, or
//! PartialObjectMetadata), and reading request bodies in JSON or YAML with duplicate
//! fields noticed for `fieldValidation`.

use std::collections::BTreeSet;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::status::ApiError;
use crate::table::{self, Conversion};

/// The body of a response, as the client asked for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The object as JSON.
    Json,
    /// The object as YAML.
    Yaml,
    /// A `meta.k8s.io` Table or PartialObjectMetadata(List).
    Converted(Conversion),
}

/// The media types objects are served in.
pub const SERVED: &[&str] = &["application/json", "application/yaml"];

/// One media range of an `Accept` header.
#[derive(Clone, Debug, PartialEq)]
pub struct MediaRange {
    /// Type, lowercased (`application`, `*`).
    pub type_: String,
    /// Subtype, lowercased (`json`, `*`).
    pub subtype: String,
    /// Parameters other than `q`, names lowercased, values unquoted.
    pub params: Vec<(String, String)>,
    /// Quality, 1 when absent.
    pub q: f32,
}

impl MediaRange {
    /// The value of parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// True for `application/json`, `application/*` and `*/*`.
    pub fn is_json(&self) -> bool {
        matches!(
            (self.type_.as_str(), self.subtype.as_str()),
            ("application", "json" | "*") | ("*", _)
        )
    }
}

/// The media ranges of an `Accept` header, most preferred first (higher `q`, then
/// concrete before wildcard, then the client's order), ranges with `q=0` dropped.
pub fn parse_accept(accept: &str) -> Vec<MediaRange> {
    let mut ranges: Vec<MediaRange> = accept
        .split(',')
        .filter_map(|clause| {
            let mut parts = clause.split(';');
            let media = parts.next()?.trim().to_ascii_lowercase();
            let (type_, subtype) = media.split_once('/')?;
            let mut range = MediaRange {
                type_: type_.trim().to_string(),
                subtype: subtype.trim().to_string(),
                params: Vec::new(),
                q: 1.0,
            };
            for p in parts {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let k = k.trim().to_ascii_lowercase();
                let v = v.trim().trim_matches('"').to_string();
                if k == "q" {
                    range.q = v.parse().unwrap_or(1.0);
                } else {
                    range.params.push((k, v));
                }
            }
            (range.q > 0.0 && !range.type_.is_empty()).then_some(range)
        })
        .collect();
    ranges.sort_by(|a, b| {
        b.q.total_cmp(&a.q)
            .then((a.type_ == "*").cmp(&(b.type_ == "*")))
            .then((a.subtype == "*").cmp(&(b.subtype == "*")))
    });
    ranges
}

/// Picks the response format for an object or list request from `Accept`: the first
/// range the server can answer, by the client's preference.
pub fn output(accept: Option<&str>) -> Result<Output, ApiError> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Ok(Output::Json);
    };
    for range in parse_accept(accept) {
        if range.is_json() {
            if range.param("as").is_none() {
                return Ok(Output::Json);
            }
            if let Some(c) = table::conversion(&range) {
                return Ok(Output::Converted(c));
            }
        } else if range.type_ == "application"
            && matches!(range.subtype.as_str(), "yaml" | "x-yaml")
            || (range.type_, range.subtype.as_str()) == ("text".to_string(), "yaml")
        {
            return Ok(Output::Yaml);
        }
    }
    Err(ApiError::not_acceptable(SERVED))
}

/// The `Content-Type` of a response in `output` (kube-apiserver answers conversions
/// with plain JSON).
pub fn content_type(output: Output) -> &'static str {
    match output {
        Output::Yaml => "application/yaml",
        Output::Json | Output::Converted(_) => "application/json",
    }
}

/// `type/subtype` of a `Content-Type`, lower-cased.
pub fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// A decoded request body, with the paths of fields that appeared twice.
#[derive(Debug)]
pub struct Decoded {
    /// The body.
    pub value: Value,
    /// `spec.replicas`-style paths of duplicated fields.
    pub duplicates: Vec<String>,
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

fn decode_json(body: &[u8]) -> Result<Decoded, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let mut duplicates = BTreeSet::new();
    let value = TrackDuplicates {
        path: String::new(),
        duplicates: &mut duplicates,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v))
    .map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))?;
    Ok(Decoded {
        value,
        duplicates: duplicates.into_iter().collect(),
    })
}

fn decode_yaml(body: &[u8]) -> Result<Decoded, ApiError> {
    use saphyr::{LoadableYamlNode, Scalar, Yaml};
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("error decoding YAML: not UTF-8"))?;
    let docs = Yaml::load_from_str(text)
        .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))?;
    fn convert(y: &Yaml<'_>) -> Result<Value, ApiError> {
        Ok(match y {
            Yaml::Value(Scalar::Null) => Value::Null,
            Yaml::Value(Scalar::Boolean(b)) => Value::Bool(*b),
            Yaml::Value(Scalar::Integer(i)) => Value::from(*i),
            Yaml::Value(Scalar::FloatingPoint(f)) => serde_json::Number::from_f64(f.into_inner())
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
            Yaml::Tagged(_, inner) => convert(inner)?,
            Yaml::Sequence(items) => {
                Value::Array(items.iter().map(convert).collect::<Result<_, _>>()?)
            }
            Yaml::Mapping(entries) => {
                let mut map = Map::new();
                for (k, v) in entries {
                    let key = match k {
                        Yaml::Value(Scalar::String(s)) => s.to_string(),
                        Yaml::Value(s) => convert(&Yaml::Value(s.clone()))?.to_string(),
                        _ => {
                            return Err(ApiError::bad_request(
                                "error converting YAML to JSON: mapping keys must be scalars",
                            ));
                        }
                    };
                    map.insert(key, convert(v)?);
                }
                Value::Object(map)
            }
            _ => {
                return Err(ApiError::bad_request(
                    "error converting YAML to JSON: unsupported YAML node",
                ));
            }
        })
    }
    let value = match docs.first() {
        Some(doc) => convert(doc)?,
        None => Value::Null,
    };
    Ok(Decoded {
        value,
        duplicates: Vec::new(),
    })
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
    fn kubectl_get_asks_for_a_table() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            output(Some(accept)).unwrap(),
            Output::Converted(Conversion::Table(table::MetaVersion::V1))
        );
        assert_eq!(
            output(Some(
                "application/vnd.kubernetes.protobuf, application/json"
            ))
            .unwrap(),
            Output::Json
        );
        assert_eq!(output(None).unwrap(), Output::Json);
        assert_eq!(output(Some("text/html")).unwrap_err().code, 406);
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
}
