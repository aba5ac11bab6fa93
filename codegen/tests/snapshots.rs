//! The generated code of each fixture in `tests/schemas`, pinned. The same fixtures are
//! compiled by the `kapi-codegen-compile-tests` crate, so every snapshot is code that
//! builds. Review changes with `cargo insta review` (or `INSTA_UPDATE=always`).

use std::path::Path;

#[test]
fn generated_code_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "fixtures missing in {}", dir.display());
    for path in names {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("file name")
            .to_string();
        let code = kapi_codegen::Builder::new()
            .schema_file(&path)
            .generate_string()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        insta::assert_snapshot!(name, code);
    }
}
