//! An ordered document tree and its deterministic YAML rendering.
//!
//! `serde_json::Value` sorts object keys, which would put `type` after `properties` and
//! `spec` before `metadata`; [`Node`] keeps keys in the order the importer chose, and
//! [`render`] writes them as block YAML: multi-line strings as literal block scalars,
//! short lists of scalars in flow style, anything ambiguous double-quoted. What it writes
//! parses back (with saphyr) to exactly [`Node::to_json`].

use kapi_core::yaml::{double_quoted, printable};
use serde_json::{Map, Number, Value};

/// A JSON value whose maps keep their key order.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// A list.
    Seq(Vec<Node>),
    /// A map, in emission order.
    Map(Vec<(String, Node)>),
}

impl Node {
    /// A string node.
    pub fn str(s: impl Into<String>) -> Self {
        Node::String(s.into())
    }

    /// A JSON value as a node, object keys sorted.
    pub fn from_json(v: &Value) -> Self {
        match v {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Number(n.clone()),
            Value::String(s) => Node::String(s.clone()),
            Value::Array(a) => Node::Seq(a.iter().map(Node::from_json).collect()),
            Value::Object(o) => {
                let mut entries: Vec<_> = o
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::from_json(v)))
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Node::Map(entries)
            }
        }
    }

    /// The node as a JSON value (key order is lost).
    pub fn to_json(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.clone()),
            Node::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Node::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    fn is_scalar(&self) -> bool {
        !matches!(self, Node::Seq(_) | Node::Map(_))
    }
}

/// Widest flow-style list (`[a, b]`) written on one line; longer lists are block lists.
const FLOW_WIDTH: usize = 100;

/// Renders `node` as one YAML document body (no `---`), ending in a newline.
pub fn render(node: &Node) -> String {
    let mut out = String::new();
    match node {
        Node::Map(entries) if !entries.is_empty() => write_map(&mut out, entries, 0),
        Node::Seq(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        other => {
            out.push_str(&inline(other, false).unwrap_or_else(|| quoted_json(other)));
            out.push('\n');
        }
    }
    out
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn write_map(out: &mut String, entries: &[(String, Node)], indent: usize) {
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            pad(out, indent);
        }
        out.push_str(&scalar_string(key, false));
        out.push(':');
        write_value(out, value, indent, true);
    }
}

fn write_seq(out: &mut String, items: &[Node], indent: usize) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            pad(out, indent);
        }
        out.push('-');
        match item {
            Node::Map(entries) if !entries.is_empty() => {
                out.push(' ');
                write_map(out, entries, indent + 2);
            }
            Node::Seq(inner) if !inner.is_empty() && flow(inner).is_none() => {
                out.push(' ');
                write_seq(out, inner, indent + 2);
            }
            _ => write_value(out, item, indent, false),
        }
    }
}

/// Writes what follows `key:` or `-`: a space and an inline value, or a block below.
fn write_value(out: &mut String, value: &Node, indent: usize, in_map: bool) {
    if let Some(s) = inline(value, false) {
        out.push(' ');
        out.push_str(&s);
        out.push('\n');
        return;
    }
    match value {
        Node::String(s) => {
            // a literal block scalar: every line indented below the key
            out.push_str(" |-\n");
            for line in s.split('\n') {
                if !line.is_empty() {
                    pad(out, indent + 2);
                    out.push_str(line);
                }
                out.push('\n');
            }
        }
        Node::Map(entries) => {
            out.push('\n');
            pad(out, indent + 2);
            write_map(out, entries, indent + 2);
        }
        Node::Seq(items) => {
            // block lists under a key sit at the key's indentation, as kubectl writes them
            let child = if in_map { indent } else { indent + 2 };
            out.push('\n');
            pad(out, child);
            write_seq(out, items, child);
        }
        _ => unreachable!("scalars other than strings are always inline"),
    }
}

/// The one-line form of `value`, if it has one that reads well.
fn inline(value: &Node, in_flow: bool) -> Option<String> {
    match value {
        Node::Null => Some("null".into()),
        Node::Bool(b) => Some(b.to_string()),
        Node::Number(n) => Some(n.to_string()),
        Node::String(s) if literal_block_ok(s) && !in_flow => None,
        Node::String(s) => Some(scalar_string(s, in_flow)),
        Node::Seq(items) if items.is_empty() => Some("[]".into()),
        Node::Map(entries) if entries.is_empty() => Some("{}".into()),
        Node::Seq(items) => flow(items),
        Node::Map(_) => None,
    }
}

/// `[a, b, c]` when every item is a scalar and the result is short.
fn flow(items: &[Node]) -> Option<String> {
    if !items.iter().all(Node::is_scalar) {
        return None;
    }
    let parts: Vec<String> = items
        .iter()
        .map(|i| inline(i, true))
        .collect::<Option<_>>()?;
    let s = format!("[{}]", parts.join(", "));
    (s.len() <= FLOW_WIDTH).then_some(s)
}

fn quoted_json(value: &Node) -> String {
    match value {
        Node::String(s) => double_quoted(s),
        other => other.to_json().to_string(),
    }
}

/// Whether `s` can be written as a `|-` literal block: it has several lines, does not end
/// in a line break, starts without indentation, and holds only printable characters.
fn literal_block_ok(s: &str) -> bool {
    s.contains('\n')
        && !s.ends_with('\n')
        && !s.starts_with([' ', '\t', '\n'])
        && s.split('\n').all(|l| !l.ends_with([' ', '\t']))
        && s.chars().all(|c| c == '\n' || printable(c))
}

/// A string as a plain scalar when that is unambiguous, else double-quoted.
fn scalar_string(s: &str, in_flow: bool) -> String {
    if plain_ok(s, in_flow) {
        s.to_string()
    } else {
        double_quoted(s)
    }
}

/// Words a YAML 1.1 or 1.2 reader might take for a boolean or null.
const RESERVED: &[&str] = &[
    "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".inf", "-.inf", "+.inf",
    ".nan",
];

fn plain_ok(s: &str, in_flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphanumeric() || matches!(first, '_' | '/' | '.' | '$')) {
        return false;
    }
    if RESERVED.contains(&s.to_ascii_lowercase().as_str()) {
        return false;
    }
    // anything that starts like a number is quoted, so "1.30" stays a string
    let second = s.chars().nth(1);
    if first.is_ascii_digit() || (first == '.' && second.is_some_and(|c| c.is_ascii_digit())) {
        return false;
    }
    if s.ends_with(' ') {
        return false;
    }
    s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | '_' | '.' | '/' | '-' | '(' | ')' | '$' | '+' | '=' | '\'' | ';'
            )
            || (c == ',' && !in_flow)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_quoted() {
        assert_eq!(scalar_string("v1", false), "v1");
        assert_eq!(scalar_string("1.30", false), "\"1.30\"");
        assert_eq!(scalar_string("true", false), "\"true\"");
        assert_eq!(scalar_string("a: b", false), "\"a: b\"");
        assert_eq!(scalar_string("a,b", true), "\"a,b\"");
        assert_eq!(scalar_string("", false), "\"\"");
        assert_eq!(scalar_string("$ref", false), "$ref");
    }

    #[test]
    fn empty_collections_inline() {
        let n = Node::Map(vec![
            ("a".into(), Node::Map(vec![])),
            ("b".into(), Node::Seq(vec![])),
        ]);
        assert_eq!(render(&n), "a: {}\nb: []\n");
    }
}
