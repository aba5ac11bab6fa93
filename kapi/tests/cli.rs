//! The schema commands of the `kapi` binary: `kapi check` reports broken schemas on
//! stderr with exit code 1, `kapi generate` writes the same files every run, and
//! `kapi import-openapi` refuses what it cannot read.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kapi(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kapi"))
        .args(args)
        .output()
        .expect("run kapi")
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

#[test]
fn check_accepts_the_repository_schemas() {
    let schemas = repo("schemas");
    let out = kapi(&["check".as_ref(), "--schemas".as_ref(), schemas.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.trim_end().ends_with(": ok"), "{stdout}");
    assert!(stdout.contains(" resources in "), "{stdout}");
}

#[test]
fn check_exits_1_with_diagnostics_on_stderr() {
    let widget = std::fs::read_to_string(repo("schemas/widget.yaml")).expect("widget.yaml");
    let (line, column) = widget
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find("scope: Namespaced").map(|c| (i + 1, c + 1)))
        .expect("widget.yaml has a scope");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("widget.yaml");
    std::fs::write(
        &file,
        widget.replacen("scope: Namespaced", "scope: Global", 1),
    )
    .expect("write");
    let out = kapi(&[
        "check".as_ref(),
        "--schemas".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!(
        "{}:{line}:{column}: spec.scope: Unsupported value: \"Global\"",
        file.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stderr.contains("1 error in schema files"), "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn generate_writes_deterministic_files() {
    let schemas = repo("schemas");
    let run = |out: &Path| {
        let result = kapi(&[
            "generate".as_ref(),
            "--schemas".as_ref(),
            schemas.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        assert!(result.status.success(), "{result:?}");
        String::from_utf8_lossy(&result.stdout).into_owned()
    };
    let (a, b) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let said = run(a.path());
    assert!(said.starts_with("wrote "), "{said}");
    run(b.path());
    for rel in ["mod.rs", "core/v1.rs", "example_kapi_dev/v1.rs"] {
        let x = std::fs::read_to_string(a.path().join(rel)).expect("generated file");
        let y = std::fs::read_to_string(b.path().join(rel)).expect("generated file");
        assert_eq!(x, y, "{rel} differs between runs");
    }
}

#[test]
fn import_openapi_names_what_it_cannot_read() {
    let out_dir = tempfile::tempdir().expect("tempdir");
    let missing = out_dir.path().join("nowhere_openapi.json");
    let config = repo("codegen/builtins.yaml");
    let out = kapi(&[
        "import-openapi".as_ref(),
        "--openapi".as_ref(),
        missing.as_os_str(),
        "--config".as_ref(),
        config.as_os_str(),
        "--out".as_ref(),
        out_dir.path().as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nowhere_openapi.json"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(out_dir.path()).expect("out").count(),
        0,
        "nothing is written"
    );

    // --proto needs --go-facts: clap's usage error, exit code 2.
    let out = kapi(&[
        "import-openapi".as_ref(),
        "--openapi".as_ref(),
        missing.as_os_str(),
        "--config".as_ref(),
        config.as_os_str(),
        "--out".as_ref(),
        out_dir.path().as_os_str(),
        "--proto".as_ref(),
        out_dir.path().as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--go-facts"),
        "{out:?}"
    );
}
