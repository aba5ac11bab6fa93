//! The README's library snippet is the `kapi` crate's doctest (which compiles with every
//! test run), word for word but for the doctest's hidden lines.

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The first code block after `heading` in the README.
fn readme_block(heading: &str) -> Vec<String> {
    let readme = read("README.md");
    let section = &readme[readme.find(heading).expect("the README's section")..];
    let block = &section[section.find("```rust\n").expect("a rust block") + 8..];
    let block = &block[..block.find("```\n").expect("the block's end")];
    block.lines().map(str::to_string).collect()
}

/// The visible lines of the first doctest after `heading` in a crate's `//!` docs.
fn doctest(file: &str, heading: &str) -> Vec<String> {
    let text = read(file);
    let docs: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let start = docs
        .iter()
        .position(|l| l.contains(heading))
        .expect("the doc's section");
    let open = start
        + docs[start..]
            .iter()
            .position(|l| l.starts_with("```"))
            .expect("a doctest");
    docs[open + 1..]
        .iter()
        .take_while(|l| !l.starts_with("```"))
        .filter(|l| !(l.starts_with("# ") || **l == "#"))
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn the_library_snippet_is_the_kapi_crates_doctest() {
    assert_eq!(
        readme_block("### Serving your own kinds from your own crate"),
        doctest("kapi/src/lib.rs", "## 2. A control plane of your own kinds")
    );
}
