//! SMD's view of JSON values (its `value` package): a total order across kinds,
//! equality that compares integers and floats as numbers, and the Go renderings that
//! kube's messages and `managedFields` bytes are made of.
//!
//! A JSON number is an integer when it fits an `i64` and a float otherwise, as kube's
//! JSON decoder makes it (`1` is an int64, `1.5` and `1e300` are float64).

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

/// A number as SMD holds it.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        // Without arbitrary precision every serde_json number has an f64 value.
        None => Num::Float(n.as_f64().unwrap_or_default()),
    }
}

/// SMD's kind order: numbers, strings, booleans, lists, maps, null.
fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// SMD's `value.Compare`: a total order over values of any kind. An integer and a
/// float compare as numbers, so `1` and `1.0` are equal.
pub(crate) fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (num(x), num(y)) {
            (Num::Int(i), Num::Int(j)) => i.cmp(&j),
            (Num::Int(i), Num::Float(g)) => float_cmp(i as f64, g),
            (Num::Float(f), Num::Int(j)) => float_cmp(f, j as f64),
            (Num::Float(f), Num::Float(g)) => float_cmp(f, g),
        },
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                let c = compare(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => compare_maps(x, y),
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => rank(a).cmp(&rank(b)),
    }
}

/// `value.MapCompare`: keys walked in lexical order over both maps; the map that lacks
/// a key the other has at that point sorts after it.
fn compare_maps(x: &Map<String, Value>, y: &Map<String, Value>) -> Ordering {
    if x.is_empty() && y.is_empty() {
        return Ordering::Equal;
    }
    let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
    keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    keys.dedup();
    for (i, key) in keys.into_iter().enumerate() {
        let c = if i == x.len() {
            Ordering::Less
        } else if i == y.len() {
            Ordering::Greater
        } else {
            match (x.get(key), y.get(key)) {
                (None, _) => Ordering::Greater,
                (_, None) => Ordering::Less,
                (Some(l), Some(r)) => compare(l, r),
            }
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

/// SMD's `value.Equals`: like `==`, but `1` equals `1.0`.
pub(crate) fn equals(a: &Value, b: &Value) -> bool {
    compare(a, b) == Ordering::Equal
}

/// The Go type name SMD's messages print for a value (`%T` of its unstructured form).
pub(crate) fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) => match num(n) {
            Num::Int(_) => "int64",
            Num::Float(_) => "float64",
        },
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// SMD's `value.ToString`, used in paths: strings Go-quoted, floats as Go's `%v`,
/// lists as `[a,b]`, maps as `k=v` pairs run together (in key order; Go's is random).
pub(crate) fn to_go_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match num(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float_v(f),
        },
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(to_go_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", to_go_string(v)))
            .collect(),
    }
}

/// The shortest decimal digits of `f` (no leading or trailing zeros) and the
/// exponent of the first digit: `1234.5` is `("12345", 3)`.
fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` is the shortest round-trip form, like Go's precision -1.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): plain decimals
/// for exponents from -4 to 5, `d.ddde±XX` beyond (`1e+06`, `1.5e-07`).
pub(crate) fn go_float_v(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sign = if f < 0.0 { "-" } else { "" };
    let (digits, exp) = shortest_digits(f);
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{point}{rest}e{esign}{:02}", exp.abs());
    }
    format!("{sign}{}", place_point(&digits, exp))
}

/// `digits` with the decimal point after the digit of exponent `exp`.
fn place_point(digits: &str, exp: i32) -> String {
    if exp < 0 {
        let zeros = "0".repeat((-exp - 1) as usize);
        return format!("0.{zeros}{digits}");
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{digits}{}", "0".repeat(int_len - digits.len()))
    } else {
        format!("{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

/// A float as Go's `encoding/json` (and json-iterator) writes it: plain decimals from
/// 1e-6 up to 1e21, exponent form beyond (`1e+21`, `1e-7`).
fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        // Display is the shortest round-trip decimal, never in exponent form.
        return format!("{f}");
    }
    let sign = if f < 0.0 { "-" } else { "" };
    let (digits, exp) = shortest_digits(f);
    let (first, rest) = digits.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    let esign = if exp < 0 { '-' } else { '+' };
    // Go trims `e-07` to `e-7`: one exponent digit is kept as is.
    format!("{sign}{first}{point}{rest}e{esign}{}", exp.abs())
}

/// Go's `strconv.Quote` (the `%q` verb), as kube's messages quote managers and values.
pub(crate) fn go_quote(s: &str) -> String {
    kapi_validation::go::quote(s)
}

/// Writes `s` as a JSON string the way json-iterator (SMD's encoder) does: `"`, `\`
/// and control characters escaped (`\n`, `\r`, `\t`, else `\u00XX`); with `html`, also
/// `<`, `>`, `&`, U+2028 and U+2029 as `\uXXXX`, as Go escapes strings inside values.
pub(crate) fn write_json_string(out: &mut String, s: &str, html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' if html => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes a value as compact JSON the way SMD writes the values inside `k:` and `v:`
/// path elements: strings HTML-escaped, map keys sorted, numbers as Go writes them.
pub(crate) fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match num(n) {
            Num::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Num::Float(f) => out.push_str(&go_json_float(f)),
        },
        Value::String(s) => write_json_string(out, s, true),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(out, k, true);
                out.push(':');
                write_json(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn orders_kinds_as_smd() {
        let ordered = [
            json!(-1),
            json!(0.5),
            json!(1),
            json!(1e300),
            json!(""),
            json!("a"),
            json!(false),
            json!(true),
            json!([]),
            json!([1]),
            json!({}),
            json!({"a": 1}),
            json!(null),
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(compare(a, b), i.cmp(&j), "{a} vs {b}");
            }
        }
        assert!(equals(&json!(1), &json!(1.0)));
        assert!(!equals(&json!(1), &json!("1")));
        assert_eq!(compare(&json!({"a": 1}), &json!({"b": 1})), Ordering::Less);
        assert_eq!(
            compare(&json!({"a": 1}), &json!({"a": 1, "b": 1})),
            Ordering::Less
        );
    }

    #[test]
    fn renders_as_go() {
        let cases = [
            (json!(1.5), "1.5"),
            (json!(100000.0), "100000"),
            (json!(1000000.0), "1e+06"),
            (json!(1234567.0), "1.234567e+06"),
            (json!(0.0001), "0.0001"),
            (json!(0.00001), "1e-05"),
            (json!(-2.5e-10), "-2.5e-10"),
            (json!(1e300), "1e+300"),
            (json!("a\"b\n\u{0}é"), r#""a\"b\n\x00é""#),
            (json!(["a", 1, true]), r#"["a",1,true]"#),
            (json!(null), "null"),
        ];
        for (v, want) in cases {
            assert_eq!(to_go_string(&v), want, "{v}");
        }
        assert_eq!(go_quote("\u{a0}\u{200b}"), r#""\u00a0\u200b""#);
    }

    #[test]
    fn writes_json_as_go() {
        let cases = [
            (json!(1.0), "1"),
            (json!(1.5), "1.5"),
            (json!(1e21), "1e+21"),
            (json!(1e-7), "1e-7"),
            (json!(1.5e-7), "1.5e-7"),
            (json!(123456789.0), "123456789"),
            (json!("<a&b>\u{1}"), r#""\u003ca\u0026b\u003e\u0001""#),
            (
                json!({"b": [1, null], "a": false}),
                r#"{"a":false,"b":[1,null]}"#,
            ),
        ];
        for (v, want) in cases {
            let mut out = String::new();
            write_json(&mut out, &v);
            assert_eq!(out, want, "{v}");
        }
    }
}
