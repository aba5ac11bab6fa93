//! The shared definitions every resource's schema refers to: `ObjectMeta`, `ListMeta`,
//! `Status`, `DeleteOptions`, `Patch`, `WatchEvent` and what they refer to, and
//! `autoscaling/v1` `Scale` for `/scale`. They come from k8s-openapi's schemars
//! implementations, which carry Kubernetes' own descriptions.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use kapi_core::__private::k8s_openapi::api::autoscaling::v1::Scale;
use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    DeleteOptions, ListMeta, ObjectMeta, Patch, Status, WatchEvent,
};
use kapi_core::__private::k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kapi_core::ScaleInfo;
use kapi_core::schemars::SchemaGenerator;
use serde_json::{Value, json};

/// `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`.
pub(crate) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// `io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta`.
pub(crate) const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
/// `io.k8s.apimachinery.pkg.apis.meta.v1.Status`.
pub(crate) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
/// `io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions`.
pub(crate) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
/// `io.k8s.apimachinery.pkg.apis.meta.v1.Patch`.
pub(crate) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
/// `io.k8s.api.autoscaling.v1.Scale`.
pub(crate) const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// schemars' own prefix, rewritten to the document's.
const SCHEMARS_PREFIX: &str = "#/$defs/";

/// The definitions every document needs, keyed by name, with references in schemars'
/// `#/$defs/` form.
fn generated() -> &'static (BTreeMap<String, Value>, BTreeMap<String, Value>) {
    static DEFS: OnceLock<(BTreeMap<String, Value>, BTreeMap<String, Value>)> = OnceLock::new();
    DEFS.get_or_init(|| {
        let meta = definitions_of(|g| {
            g.subschema_for::<ObjectMeta>();
            g.subschema_for::<ListMeta>();
            g.subschema_for::<Status>();
            g.subschema_for::<DeleteOptions>();
            g.subschema_for::<Patch>();
            g.subschema_for::<WatchEvent<RawExtension>>();
        });
        let scale = definitions_of(|g| {
            g.subschema_for::<Scale>();
        });
        (meta, scale)
    })
}

fn definitions_of(add: impl FnOnce(&mut SchemaGenerator)) -> BTreeMap<String, Value> {
    let mut generator = SchemaGenerator::default();
    add(&mut generator);
    let mut defs: BTreeMap<String, Value> = generator
        .definitions()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // The kinds a client may look up by group-version-kind, tagged as kube-apiserver
    // tags them.
    tag_gvk(&mut defs, STATUS, "", "v1", "Status");
    tag_gvk(
        &mut defs,
        SCALE,
        ScaleInfo::GROUP,
        ScaleInfo::VERSION,
        ScaleInfo::KIND,
    );
    defs
}

fn tag_gvk(defs: &mut BTreeMap<String, Value>, name: &str, group: &str, version: &str, kind: &str) {
    if let Some(Value::Object(def)) = defs.get_mut(name) {
        def.insert(
            "x-kubernetes-group-version-kind".into(),
            json!([{"group": group, "kind": kind, "version": version}]),
        );
    }
}

/// The apimachinery definitions (and `Scale` when `with_scale`), references rewritten
/// to `prefix` (`#/definitions/` or `#/components/schemas/`).
pub(crate) fn definitions(prefix: &str, with_scale: bool) -> BTreeMap<String, Value> {
    let (meta, scale) = generated();
    let mut out = BTreeMap::new();
    let sources = if with_scale {
        vec![meta, scale]
    } else {
        vec![meta]
    };
    for defs in sources {
        for (name, schema) in defs {
            let mut schema = schema.clone();
            rewrite_refs(&mut schema, prefix);
            out.insert(name.clone(), schema);
        }
    }
    out
}

fn rewrite_refs(v: &mut Value, prefix: &str) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref") {
                if let Some(name) = r.strip_prefix(SCHEMARS_PREFIX) {
                    *r = format!("{prefix}{name}");
                }
            }
            map.values_mut().for_each(|x| rewrite_refs(x, prefix));
        }
        Value::Array(items) => items.iter_mut().for_each(|x| rewrite_refs(x, prefix)),
        _ => {}
    }
}

/// `properties.{field}` of a generated apimachinery definition, e.g. `Status`'s
/// `apiVersion` (TypeMeta's field, shared by every kind).
pub(crate) fn property(definition: &str, field: &str) -> Value {
    let (meta, _) = generated();
    meta.get(definition)
        .and_then(|d| d.pointer(&format!("/properties/{field}")))
        .cloned()
        .unwrap_or_else(|| json!({"type": "string"}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kapi_core::schemars::JsonSchema;

    fn name_of<T: JsonSchema>() -> String {
        T::schema_name().into_owned()
    }

    #[test]
    fn names_and_references() {
        assert_eq!(name_of::<ObjectMeta>(), OBJECT_META);
        assert_eq!(name_of::<ListMeta>(), LIST_META);
        assert_eq!(name_of::<Status>(), STATUS);
        assert_eq!(name_of::<DeleteOptions>(), DELETE_OPTIONS);
        assert_eq!(name_of::<Patch>(), PATCH);
        assert_eq!(name_of::<Scale>(), SCALE);
        let defs = definitions("#/components/schemas/", true);
        for name in [
            "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
            "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
            "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
            "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails",
            "io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
            "io.k8s.apimachinery.pkg.runtime.RawExtension",
            "io.k8s.api.autoscaling.v1.ScaleSpec",
            "io.k8s.api.autoscaling.v1.ScaleStatus",
            OBJECT_META,
            LIST_META,
        ] {
            assert!(defs.contains_key(name), "{name}");
        }
        // Every reference resolves within the set.
        let text = serde_json::to_string(&defs).unwrap();
        for part in text.split("\"$ref\":\"").skip(1) {
            let target = part.split('"').next().unwrap();
            let name = target
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{target}"));
            assert!(defs.contains_key(name), "dangling {target}");
        }
        assert!(!definitions("#/definitions/", false).contains_key(SCALE));
    }
}
