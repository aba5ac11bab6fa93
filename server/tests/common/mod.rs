//! Loading the repository's schemas and the shared testdata CRDs as served resources.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use kapi_core::crd::CustomResourceDefinition;
use kapi_core::{ObjectStrategy, SchemaStrategy};
use serde_json::{Value, json};

/// The shared testdata folder: `$KAPI_TESTDATA`, else `../shared/testdata` next to the
/// workspace.
pub fn testdata_dir() -> PathBuf {
    match std::env::var_os("KAPI_TESTDATA") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata"),
    }
}

fn yaml_to_json(y: &saphyr::YamlOwned) -> Value {
    use saphyr::{ScalarOwned, YamlOwned};
    match y {
        YamlOwned::Value(ScalarOwned::Null) => Value::Null,
        YamlOwned::Value(ScalarOwned::Boolean(b)) => Value::Bool(*b),
        YamlOwned::Value(ScalarOwned::Integer(i)) => Value::from(*i),
        YamlOwned::Value(ScalarOwned::FloatingPoint(f)) => json!(f.into_inner()),
        YamlOwned::Value(ScalarOwned::String(s)) => Value::String(s.clone()),
        YamlOwned::Representation(s, _, _) => Value::String(s.clone()),
        YamlOwned::Sequence(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        YamlOwned::Mapping(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = match yaml_to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        YamlOwned::Tagged(_, inner) => yaml_to_json(inner),
        YamlOwned::Alias(_) | YamlOwned::BadValue => panic!("unsupported YAML node {y:?}"),
    }
}

/// Every CRD document of a YAML file.
pub fn load_crds(path: &std::path::Path) -> Vec<CustomResourceDefinition> {
    use saphyr::LoadableYamlNode;
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} (set KAPI_TESTDATA): {e}", path.display()));
    let docs = saphyr::YamlOwned::load_from_str(&text).expect("yaml");
    docs.iter()
        .map(yaml_to_json)
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
