//! The workspace's size rules (issue #19): no source file over 800 lines before its
//! unit tests, and no function over 150 lines, outside test code. What still breaks a
//! rule is listed in [`KNOWN`] with its size today, as a ceiling: it may shrink or
//! leave the list, never grow, and nothing new may join it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 150;

/// (path, function or `""` for the file, lines today).
const KNOWN: &[(&str, &str, usize)] = &[];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Test code: integration tests, benches, test-support crates, `tests.rs` modules.
fn is_test_code(rel: &str) -> bool {
    rel.starts_with("tests/")
        || rel.starts_with("testing/")
        || rel.starts_with("fuzz/")
        || rel.contains("/tests/")
        || rel.contains("/benches/")
        || rel.ends_with("/tests.rs")
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("read a source folder") {
        let path = entry.expect("a folder entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "target" | ".git" | "node_modules") {
                sources(&path, root, out);
            }
        } else if name.ends_with(".rs") {
            let rel = path
                .strip_prefix(root)
                .expect("under the workspace")
                .to_string_lossy()
                .replace('\\', "/");
            if !is_test_code(&rel) {
                out.push((rel, std::fs::read_to_string(&path).expect("read a source")));
            }
        }
    }
}

/// The name of the function a line declares (rustfmt's layout: `fn` after an optional
/// visibility, `async`, `const` or `unsafe`).
fn declared_fn(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    loop {
        let before = rest;
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "async ",
            "const ",
            "unsafe ",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        if rest == before {
            break;
        }
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    Some(&name[..end])
}

/// Every rule broken in `text`: (function or `""`, lines).
fn breaches(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    // A file's own unit tests do not count towards its length, nor their functions.
    let code_end = lines
        .iter()
        .position(|l| l.starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    if code_end > MAX_FILE_LINES {
        out.push((String::new(), code_end));
    }
    for (i, line) in lines[..code_end].iter().enumerate() {
        let Some(name) = declared_fn(line) else {
            continue;
        };
        if line.trim_end().ends_with(';') {
            continue; // a declaration without a body
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let close = format!("{indent}}}");
        if let Some(end) = lines[i..code_end].iter().position(|l| *l == close) {
            let length = end + 1;
            if length > MAX_FN_LINES {
                out.push((name.to_string(), length));
            }
        }
    }
    out
}

#[test]
fn no_file_or_function_grows_past_the_limits() {
    let root = workspace();
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert!(
        files.iter().any(|(p, _)| p == "kapi/src/server.rs"),
        "the walk found the server's sources"
    );
    let known: BTreeMap<(&str, &str), usize> =
        KNOWN.iter().map(|(p, f, n)| ((*p, *f), *n)).collect();
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for (path, text) in &files {
        for (function, lines) in breaches(text) {
            let what = if function.is_empty() {
                format!("{path}: {lines} lines (at most {MAX_FILE_LINES})")
            } else {
                format!("{path}: fn {function}: {lines} lines (at most {MAX_FN_LINES})")
            };
            match known.get(&(path.as_str(), function.as_str())) {
                Some(&ceiling) if lines <= ceiling => seen.push((path.clone(), function)),
                Some(&ceiling) => problems.push(format!("{what}, grew past {ceiling}")),
                None => problems.push(what),
            }
        }
    }
    for (path, function, _) in KNOWN {
        if !seen.iter().any(|(p, f)| p == path && f == function) {
            problems.push(format!(
                "{path} {function:?} is within the limits now: take it off KNOWN"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_measure_sees_functions_and_tests() {
    let long_fn = format!(
        "pub async fn big() {{\n{}}}\n#[cfg(test)]\nfn skipped() {{\n{}}}\n",
        "    x();\n".repeat(MAX_FN_LINES),
        "    y();\n".repeat(MAX_FN_LINES * 2),
    );
    assert_eq!(
        breaches(&long_fn),
        vec![("big".to_string(), MAX_FN_LINES + 2)]
    );
    assert_eq!(declared_fn("    pub(crate) const fn f_1<T>()"), Some("f_1"));
    assert_eq!(declared_fn("    let fn_ = 1;"), None);
    let long_file = "// x\n".repeat(MAX_FILE_LINES + 1);
    assert_eq!(
        breaches(&long_file),
        vec![(String::new(), MAX_FILE_LINES + 1)]
    );
}
