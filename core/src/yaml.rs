//! YAML's double-quoted scalars, as kapi writes them: in the schema files the import
//! generates and in the YAML the server answers with. One set of rules, so a string
//! reads back the same whichever wrote it.

/// Whether `c` may stand raw in a YAML scalar: YAML's printable set (`c-printable`),
/// less the characters a YAML 1.1 reader takes for line breaks (U+2028, U+2029) and the
/// byte order mark.
pub fn printable(c: char) -> bool {
    matches!(c, '\t' | ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
        && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}')
}

/// `s` as a double-quoted scalar: `"` and `\` escaped, tab and line breaks as `\t`,
/// `\n`, `\r`, and every other character that is not [`printable`] as `\uXXXX`. Never
/// shorter, in characters, than saphyr's emitter writes the same string, which escapes
/// only `"`, `\` and the ASCII controls.
pub fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if printable(c) => out.push(c),
            // Every character above U+FFFF is printable, so four digits always do.
            c => out.push_str(&format!("\\u{:04X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_cannot_stand_raw() {
        assert_eq!(double_quoted("plain"), "\"plain\"");
        assert_eq!(double_quoted("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(double_quoted("l1\nl2\tx\r"), r#""l1\nl2\tx\r""#);
        assert_eq!(
            double_quoted("\u{7}\u{85}\u{feff}"),
            r#""\u0007\u0085\uFEFF""#
        );
        assert_eq!(double_quoted("\u{2028}\u{ffff}"), r#""\u2028\uFFFF""#);
        assert_eq!(double_quoted("é😀"), "\"é😀\"");
    }

    #[test]
    fn printable_follows_yaml() {
        assert!(printable('\t') && printable('~') && printable('\u{a0}'));
        assert!(!printable('\u{7f}') && !printable('\u{9f}') && !printable('\u{fffe}'));
        assert!(printable('\u{10000}') && !printable('\u{2029}'));
    }
}
