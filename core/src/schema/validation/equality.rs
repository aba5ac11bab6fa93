//! Equality of JSON values as kube-openapi compares them (numbers by value), and a
//! canonical text of a value, so that uniqueness is checked with a hash set.

use serde_json::Value;

/// Numeric-aware JSON equality, as kube-openapi converts the value to the enum's type.
pub(super) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A text equal for two values exactly when [`json_eq`] holds (numbers as `f64`,
/// objects by sorted key), so that uniqueness is checked through a hash set in time
/// linear in a list's length: a list of 40,000 items must not cost 800 million
/// comparisons.
pub(super) fn canonical(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        use std::fmt::Write as _;
        match v {
            Value::Number(n) => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // -0 and 0 are equal numbers.
                let f = if f == 0.0 { 0.0 } else { f };
                let _ = write!(out, "{f:?}");
            }
            Value::Array(items) => {
                out.push('[');
                for item in items {
                    write(item, out);
                    out.push(',');
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (k, item) in map {
                    let _ = write!(out, "{k:?}:");
                    write(item, out);
                    out.push(',');
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out
}
