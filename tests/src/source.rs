//! Reading the workspace's Rust sources as the layout tests need them: code without
//! comments and literals, and the string literals on their own.

/// A source file taken apart by [`lex`].
pub struct Lexed {
    /// The code without comments, with every string literal as `""` and every
    /// character literal as `' '`, and without unit tests.
    pub code: String,
    /// The contents of the string literals in the code, in order.
    pub strings: Vec<String>,
}

/// `text` without comments, string and character literals, and without its unit tests
/// (everything from a `#[cfg(test)]` at the start of a line).
pub fn code_of(text: &str) -> String {
    lex(text).code
}

/// `text` lexed: its code as [`code_of`] gives it, and the contents of its string
/// literals (escapes left as written), in order.
pub fn lex(text: &str) -> Lexed {
    let text = match text.find("\n#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut strings = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some(end) = raw_string_end(rest, i > 0 && is_ident(b[i - 1])) {
            let hashes = rest[1..].bytes().take_while(|c| *c == b'#').count();
            let close = (end - 1 - hashes).max(2 + hashes);
            strings.push(rest[2 + hashes..close].to_string());
            out.push_str("\"\"");
            i += end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            strings.push(text[i + 1..j.min(b.len())].to_string());
            out.push_str("\"\"");
            i = j + 1;
        } else if let Some(len) = char_literal(rest) {
            out.push_str("' '");
            i += len;
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    Lexed { code: out, strings }
}

/// Whether `c` can be part of an identifier.
pub fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`) at the start of `rest`.
fn raw_string_end(rest: &str, after_ident: bool) -> Option<usize> {
    if after_ident || !rest.starts_with('r') {
        return None;
    }
    let hashes = rest[1..].bytes().take_while(|c| *c == b'#').count();
    if rest.as_bytes().get(1 + hashes) != Some(&b'"') {
        return None;
    }
    let close = format!("\"{}", "#".repeat(hashes));
    let body = 2 + hashes;
    Some(
        rest[body..]
            .find(&close)
            .map_or(rest.len(), |e| body + e + close.len()),
    )
}

/// The length of a character literal (`'a'`, `'\n'`, `'\u{1F600}'`) at the start of
/// `rest`; `None` for a lifetime.
fn char_literal(rest: &str) -> Option<usize> {
    let mut chars = rest.char_indices().skip(1);
    let (_, first) = chars.next()?;
    if !rest.starts_with('\'') {
        return None;
    }
    if first == '\\' {
        return rest[2..].find('\'').map(|e| e + 3);
    }
    let (at, next) = chars.next()?;
    (next == '\'').then_some(at + 1)
}
