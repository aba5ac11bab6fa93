//! Loading the repository's schemas and the shared testdata CRDs as served resources.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use kapi_core::crd::CustomResourceDefinition;
use kapi_core::schema::Definitions;
use kapi_core::{ObjectStrategy, SchemaStrategy};
use serde_json::Value;

pub use kapi_testing::testdata_dir;

/// Every CRD document of a YAML file, its `$ref`s resolved against `definitions`.
pub fn load_crds_with(
    path: &std::path::Path,
    definitions: Option<&Definitions>,
) -> Vec<CustomResourceDefinition> {
    kapi_testing::yaml_documents(path)
        .into_iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
        .map(|d| {
            CustomResourceDefinition::parse_with(&d, definitions)
                .unwrap_or_else(|e| panic!("{}: {:?}", path.display(), e))
        })
        .collect()
}

/// Every CRD document of a YAML file.
pub fn load_crds(path: &std::path::Path) -> Vec<CustomResourceDefinition> {
    load_crds_with(path, None)
}

/// The shared definitions of the built-in schemas (`schemas/kubernetes/definitions`).
pub fn builtin_definitions() -> Definitions {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schemas/kubernetes/definitions");
    let mut defs = Definitions::new();
    for entry in std::fs::read_dir(&dir).expect("schemas/kubernetes/definitions") {
        let path = entry.expect("entry").path();
        for doc in kapi_testing::yaml_documents(&path) {
            for (name, schema) in doc["definitions"].as_object().into_iter().flatten() {
                defs.insert(name.clone(), schema.clone());
            }
        }
    }
    defs
}

/// One strategy per version of every built-in resource in
/// `schemas/kubernetes/<name>.yaml` (`core-v1`, `apps-v1`).
pub fn builtin_schema(name: &str) -> Vec<Arc<dyn ObjectStrategy>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../schemas/kubernetes")
        .join(format!("{name}.yaml"));
    strategies_of(load_crds_with(&path, Some(&builtin_definitions())))
}

/// One strategy per version (served or not) of every CRD in the file.
pub fn strategies_from(path: &std::path::Path) -> Vec<Arc<dyn ObjectStrategy>> {
    strategies_of(load_crds(path))
}

fn strategies_of(crds: Vec<CustomResourceDefinition>) -> Vec<Arc<dyn ObjectStrategy>> {
    let mut out: Vec<Arc<dyn ObjectStrategy>> = Vec::new();
    for crd in crds {
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
    kapi_testing::testdata_crd_files()
        .iter()
        .flat_map(|f| strategies_from(f))
        .collect()
}
