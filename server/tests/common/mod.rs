//! Loading the repository's schemas and the shared testdata CRDs as served resources.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use kapi_core::crd::CustomResourceDefinition;
use kapi_core::{ObjectStrategy, SchemaStrategy};
use serde_json::Value;

pub use kapi_testing::testdata_dir;

/// Every CRD document of a YAML file.
pub fn load_crds(path: &std::path::Path) -> Vec<CustomResourceDefinition> {
    kapi_testing::yaml_documents(path)
        .into_iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
        .map(|d| {
            CustomResourceDefinition::parse(&d)
                .unwrap_or_else(|e| panic!("{}: {:?}", path.display(), e))
        })
        .collect()
}

/// One strategy per version (served or not) of every CRD in the file.
pub fn strategies_from(path: &std::path::Path) -> Vec<Arc<dyn ObjectStrategy>> {
    let mut out: Vec<Arc<dyn ObjectStrategy>> = Vec::new();
    for crd in load_crds(path) {
        for v in &crd.versions {
            out.push(Arc::new(SchemaStrategy::new(
                crd.resource_info(v),
                v.schema.clone(),
            )));
        }
    }
    out
}

/// The repository's `schemas/<name>.yaml`.
pub fn repo_schema(name: &str) -> Vec<Arc<dyn ObjectStrategy>> {
    strategies_from(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../schemas")
            .join(format!("{name}.yaml")),
    )
}

/// `crds/<name>.yaml` from the shared testdata.
pub fn testdata_crd(name: &str) -> Vec<Arc<dyn ObjectStrategy>> {
    strategies_from(&testdata_dir().join("crds").join(format!("{name}.yaml")))
}

/// Every testdata CRD.
pub fn all_testdata() -> Vec<Arc<dyn ObjectStrategy>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(testdata_dir().join("crds"))
        .expect("testdata crds (set KAPI_TESTDATA)")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files.iter().flat_map(|f| strategies_from(f)).collect()
}
