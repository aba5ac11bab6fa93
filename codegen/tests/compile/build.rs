//! Generates the snapshot fixtures and every testdata CRD into OUT_DIR, so that
//! `cargo test` fails if any of them produces code that does not compile.

use std::path::PathBuf;

fn testdata() -> PathBuf {
    println!("cargo:rerun-if-env-changed=KAPI_TESTDATA");
    match std::env::var_os("KAPI_TESTDATA") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/testdata"),
    }
}

fn main() {
    let crds = testdata().join("crds");
    assert!(
        crds.is_dir(),
        "testdata CRDs not found at {} (set KAPI_TESTDATA to the shared testdata folder)",
        crds.display()
    );
    let run = |builder: kapi_codegen::Builder, file: &str| {
        if let Err(e) = builder.file_name(file).generate() {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    run(
        kapi_codegen::Builder::new().schemas_dir("../schemas"),
        "fixtures.rs",
    );
    // The testdata CRDs that convert through a webhook keep it: their operators serve it.
    run(
        kapi_codegen::Builder::new()
            .schemas_dir(&crds)
            .external_conversion("*"),
        "testdata.rs",
    );
}
