//! Table cells: a column's value rendered by its type, as apiextensions-apiserver's table
//! convertor renders custom resource columns.

use chrono::{DateTime, Utc};
use serde_json::Value;

/// The cell of a column of `type_` (`integer`, `number`, `boolean`, `string`, `date`)
/// whose path selected `value`. A value that does not fit the type is `null`, which
/// kubectl prints as `<none>`.
pub(crate) fn cell(type_: &str, value: &Value, now: DateTime<Utc>) -> Value {
    match (type_, value) {
        (_, Value::Null) => Value::Null,
        ("integer", Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i),
            // Go converts float64 to int64 by truncation.
            (None, Some(f)) => Value::from(f.trunc() as i64),
            _ => Value::Null,
        },
        ("number", Value::Number(_)) | ("boolean", Value::Bool(_)) => value.clone(),
        ("string", v) => Value::String(text(v)),
        ("date", Value::String(s)) => Value::String(date_cell(s, now)),
        _ => Value::Null,
    }
}

/// How client-go's jsonpath prints a value: strings as they are, objects and arrays
/// as compact JSON, numbers and booleans with Go's `%v`.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => go_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// Go's `%v` of a float64 (`strconv` `'g'`, shortest): exponent form when the decimal
/// exponent is below -4 or at least 6, so `1e+06` but `123456`.
fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        f.to_string()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

/// A `date` cell: the age of an RFC 3339 timestamp, `<unknown>` for an empty one and
/// `<invalid>` for one that does not parse (`metav1.Time.UnmarshalQueryParameter`).
pub(crate) fn date_cell(s: &str, now: DateTime<Utc>) -> String {
    if s.is_empty() || s == "null" {
        return "<unknown>".into();
    }
    match DateTime::parse_from_rfc3339(s) {
        Ok(t) => crate::duration::human_duration(now.signed_duration_since(t.with_timezone(&Utc))),
        Err(_) => "<invalid>".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cells_by_type() {
        let now = DateTime::parse_from_rfc3339("2024-01-03T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(cell("integer", &json!(3), now), json!(3));
        assert_eq!(cell("integer", &json!(3.9), now), json!(3));
        assert_eq!(cell("integer", &json!("3"), now), Value::Null);
        assert_eq!(cell("number", &json!(1.5), now), json!(1.5));
        assert_eq!(cell("boolean", &json!(true), now), json!(true));
        assert_eq!(cell("boolean", &json!("true"), now), Value::Null);
        assert_eq!(cell("string", &json!("x"), now), json!("x"));
        assert_eq!(cell("string", &json!(7), now), json!("7"));
        assert_eq!(cell("string", &json!(1.5), now), json!("1.5"));
        assert_eq!(cell("string", &json!(false), now), json!("false"));
        assert_eq!(
            cell("string", &json!({"b": 1, "a": [1]}), now),
            json!(r#"{"a":[1],"b":1}"#)
        );
        assert_eq!(cell("string", &Value::Null, now), Value::Null);
        assert_eq!(
            cell("date", &json!("2024-01-01T00:00:00Z"), now),
            json!("2d")
        );
        assert_eq!(
            cell("date", &json!("2024-01-02T21:30:00.5+01:00"), now),
            json!("3h29m")
        );
        assert_eq!(cell("date", &json!(""), now), json!("<unknown>"));
        assert_eq!(cell("date", &json!("yesterday"), now), json!("<invalid>"));
        assert_eq!(cell("date", &json!(5), now), Value::Null);
    }

    #[test]
    fn go_float_formatting() {
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(123456.0), "123456");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(1234567.5), "1.2345675e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-2.5e-7), "-2.5e-07");
    }
}
