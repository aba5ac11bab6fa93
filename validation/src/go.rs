//! Go's formatting of the values and lists messages quote, so that messages read
//! exactly as kube-apiserver's (`"alice"`, `["get" "list"]`, apimachinery's aggregated
//! errors): clients and tests match on this text.

use std::fmt::Write;

/// A string quoted as Go's `strconv.Quote` does (the `%q` verb): double quotes,
/// backslash escapes for quotes, backslashes and what Go's `unicode.IsPrint` does not
/// count as printable (controls, spaces other than U+0020, format characters, private
/// use), as `\xXX`, `\uXXXX` or `\UXXXXXXXX`; printable Unicode is kept.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if is_print(c) => out.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// Go's `unicode.IsPrint`, closely: not a control, not a space other than U+0020, not
/// a format character, not private use.
fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    let cp = c as u32;
    let format = matches!(cp, 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e)
        || matches!(cp, 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x206f)
        || matches!(cp, 0xfeff | 0xfff9..=0xfffb | 0xfffe | 0xffff);
    let private = matches!(cp, 0xe000..=0xf8ff | 0xf0000..);
    !(c.is_control() || c.is_whitespace() || format || private)
}

/// A list of strings as Go's `%q` prints a `[]string`: `["a" "b"]`, `[]` when empty.
pub fn quote_list<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s.as_ref())).collect();
    format!("[{}]", quoted.join(" "))
}

/// Several error messages as apimachinery's `utilerrors.NewAggregate(...).Error()`
/// prints them: the message alone when there is one (or all are the same), otherwise
/// the distinct messages in order, `[a, b]`.
pub fn aggregate(messages: &[String]) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for m in messages {
        if !distinct.contains(&m.as_str()) {
            distinct.push(m);
        }
    }
    match distinct.as_slice() {
        [] => String::new(),
        [one] => (*one).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("alice"), r#""alice""#);
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quote("a\nb\u{1}"), r#""a\nb\x01""#);
        assert_eq!(quote("é"), "\"é\"");
    }

    #[test]
    fn quotes_lists_like_go() {
        assert_eq!(quote_list::<&str>(&[]), "[]");
        assert_eq!(quote_list(&["", "apps"]), r#"["" "apps"]"#);
    }

    #[test]
    fn aggregates_like_apimachinery() {
        assert_eq!(aggregate(&[]), "");
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    }
}
