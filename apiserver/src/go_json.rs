//! JSON laid out as kube-apiserver's serializer lays it out, for clients that compare
//! bodies as text.
//!
//! kube-apiserver writes a response with Go's `encoding/json`: compact, followed by a
//! newline (`json.Encoder`), or, when the request asks for it, indented by two spaces
//! with no newline (`json.MarshalIndent`). Go also escapes `<`, `>` and `&` in strings
//! (and U+2028, U+2029) as `\u003c`, `\u003e`, `\u0026`. [`encode`] writes that way;
//! [`indent`] turns a compact document into the indented one, byte for byte as
//! `MarshalIndent` would have written the same value.
//!
//! Field order is the caller's: a `#[derive(Serialize)]` struct keeps its fields in
//! order, a `serde_json::Value` sorts its keys (the workspace does not enable
//! `preserve_order`).

use std::io;

use serde::Serialize;

/// `value` as Go's `json.Encoder` writes it: compact, HTML characters escaped, and a
/// trailing newline.
pub fn encode(value: &impl Serialize) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoEscapes);
    // Serializing into a Vec fails only for a map with non-string keys, which no
    // caller has; the output is then whatever was written before.
    let _ = value.serialize(&mut ser);
    out.push(b'\n');
    out
}

/// serde_json's compact layout, with the escapes Go's encoder adds.
struct GoEscapes;

impl serde_json::ser::Formatter for GoEscapes {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            let escape = match c {
                '<' => "\\u003c",
                '>' => "\\u003e",
                '&' => "\\u0026",
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..at])?;
            writer.write_all(escape.as_bytes())?;
            start = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// The compact JSON document `compact` (a trailing newline allowed) laid out as Go's
/// `json.MarshalIndent(v, "", "  ")` lays it out: one member or element a line, `": "`
/// after keys, `{}` and `[]` kept whole, no trailing newline. Strings are copied as
/// they are; whitespace outside them is dropped.
pub fn indent(compact: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    // An opening bracket whose line break waits for the next byte: none if it closes.
    let mut opened = false;
    for &b in compact {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        if opened && b != b'}' && b != b']' {
            opened = false;
            depth += 1;
            line_break(&mut out, depth);
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
            }
            b'{' | b'[' => {
                out.push(b);
                opened = true;
            }
            b'}' | b']' => {
                if opened {
                    opened = false;
                } else {
                    depth = depth.saturating_sub(1);
                    line_break(&mut out, depth);
                }
                out.push(b);
            }
            b',' => {
                out.push(b);
                line_break(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(b),
        }
    }
    out
}

fn line_break(out: &mut Vec<u8>, depth: usize) {
    out.push(b'\n');
    out.extend(std::iter::repeat_n(b' ', 2 * depth));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_go_encoder_and_escapes_html() {
        #[derive(Serialize)]
        struct Message<'a> {
            message: &'a str,
        }
        assert_eq!(
            encode(&Message {
                message: "a < b && c > d \u{2028}\"\n\u{1}"
            }),
            b"{\"message\":\"a \\u003c b \\u0026\\u0026 c \\u003e d \\u2028\\\"\\n\\u0001\"}\n"
        );
    }

    #[test]
    fn indents_as_marshal_indent() {
        let compact = br#"{"kind":"Status","metadata":{},"items":[],"details":{"causes":[{"field":"a,b:{c}[d]\"","n":1},{"n":[1,2]}]},"code":422}"#;
        // What Go's json.MarshalIndent(v, "", "  ") writes for the same document.
        let go = r#"{
  "kind": "Status",
  "metadata": {},
  "items": [],
  "details": {
    "causes": [
      {
        "field": "a,b:{c}[d]\"",
        "n": 1
      },
      {
        "n": [
          1,
          2
        ]
      }
    ]
  },
  "code": 422
}"#;
        assert_eq!(String::from_utf8(indent(compact)).unwrap(), go);
        let mut with_newline = compact.to_vec();
        with_newline.push(b'\n');
        assert_eq!(String::from_utf8(indent(&with_newline)).unwrap(), go);
        assert_eq!(indent(b"\"x\"\n"), b"\"x\"");
    }
}
