//! Schema files: arbitrary text checked by the code generator as a `build.rs` would
//! (`Builder::check`: YAML with positions, shared definitions, CRD parsing, structural
//! checks, every regex and CEL rule compiled, type building) and, when it passes, turned
//! into formatted Rust (`generate_string`). Errors are fine; every one is rendered as
//! `file:line:column: path: message`. The first document is also read as the server
//! reads a CRD created at run time, and a sample object created through each served
//! version's strategy.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use kapi_codegen::Builder;
use kapi_core::SchemaStrategy;
use kapi_core::crd::CustomResourceDefinition;
use kapi_apiserver::negotiation::decode_body;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

/// The generator reads files: one scratch file per fuzzing process.
static SCRATCH: LazyLock<PathBuf> = LazyLock::new(|| {
    std::env::temp_dir().join(format!("kapi-fuzz-schema-{}.yaml", std::process::id()))
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    std::fs::write(&*SCRATCH, text).expect("the scratch file is writable");
    match Builder::new().schema_file(&*SCRATCH).generate_string() {
        Ok(code) => assert!(!code.is_empty()),
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let Ok(doc) = decode_body("application/yaml", data) else {
        return;
    };
    let Ok(crd) = CustomResourceDefinition::parse(&doc.value) else {
        return;
    };
    for version in crd.versions.iter().filter(|v| v.served) {
        let strategy = SchemaStrategy::new(crd.resource_info(version), version.schema.clone());
        let sample = json!({"metadata": {"name": "sample"}, "spec": {}});
        kapi_fuzz::respond(&kapi_fuzz::create(&strategy, sample));
    }
});
