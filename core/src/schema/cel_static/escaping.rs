//! How a property name is spelled in CEL (kube's `apiserver/pkg/cel/escaping.go`):
//! CEL's reserved words become `__namespace__`, and `__`, `.`, `-` and `/` inside a
//! name become `__underscores__`, `__dot__`, `__dash__` and `__slash__`. A name with
//! any other character outside `[a-zA-Z0-9_]`, or starting with a digit, cannot be
//! named in CEL.

/// CEL's reserved words, which a property name may be but a CEL field or identifier
/// may not.
pub const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The CEL spelling of property `name`; `None` when it cannot be named in CEL.
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_as_kube_does() {
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(
            escape("a.b-c/d").as_deref(),
            Some("a__dot__b__dash__c__slash__d")
        );
        assert_eq!(escape("x__y").as_deref(), Some("x__underscores__y"));
        assert_eq!(escape("plain_name1").as_deref(), Some("plain_name1"));
        assert_eq!(escape("1st"), None);
        assert_eq!(escape("a b"), None);
    }
}
