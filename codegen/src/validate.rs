//! Checks across resources and Rust-specific rules, after each CRD parsed on its own.

use std::collections::BTreeMap;

use kapi_core::field::FieldPath;
use kapi_core::resource::ALL_VERBS;

use crate::diagnostic::Diagnostic;
use crate::model::ResourceDef;

/// The annotation naming a resource's hooks type in its schema file.
pub const HOOKS_ANNOTATION: &str = "kapi.dev/hooks";
/// The annotation naming a resource's conversion hooks type (a Rust path), as
/// `Builder::conversion_hooks` does.
pub const CONVERSION_HOOKS_ANNOTATION: &str = "kapi.dev/conversion-hooks";
/// The annotation (`"true"`) that has the conversion hooks called on the resource's
/// own type too, after everything else of the object converted: for a version that
/// keeps what it has no field for in annotations, as kube's autoscaling/v1
/// HorizontalPodAutoscaler does (`Builder::conversion_object_hooks`).
pub const CONVERSION_OBJECT_HOOKS_ANNOTATION: &str = "kapi.dev/conversion-object-hooks";

/// The annotation listing the verbs a resource serves (comma-separated; all eight
/// standard verbs when absent), as discovery shows them: `get,list` for a read-only one.
pub const VERBS_ANNOTATION: &str = "kapi.dev/verbs";

/// The annotation listing a resource's subresources besides status and scale, with the
/// verbs of each: `approval=get,patch,update;binding=create`.
pub const SUBRESOURCES_ANNOTATION: &str = "kapi.dev/subresources";

/// The `name=verb,verb` entries of a resource's subresources annotation.
pub fn extra_subresources(res: &ResourceDef) -> Vec<String> {
    res.crd
        .annotations
        .get(SUBRESOURCES_ANNOTATION)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .split(';')
        .map(|s| s.split_whitespace().collect::<String>())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether `kind` is `group/version/Kind`, the group empty for core.
fn subresource_kind_ok(kind: &str) -> bool {
    let parts: Vec<&str> = kind.split('/').collect();
    parts.len() == 3 && !parts[1].is_empty() && !parts[2].is_empty()
}

/// The verbs a resource's annotation lists, if it has one.
pub fn verbs(res: &ResourceDef) -> Option<Vec<String>> {
    let v = res.crd.annotations.get(VERBS_ANNOTATION)?;
    Some(
        v.as_str()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Problems no single CRD shows: two definitions of one resource, hooks paths that are
/// not Rust paths.
pub fn validate(resources: &[ResourceDef]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut by_name: BTreeMap<&str, &ResourceDef> = BTreeMap::new();
    let mut by_kind: BTreeMap<(&str, &str), &ResourceDef> = BTreeMap::new();
    let name_path = FieldPath::new("metadata.name");
    for res in resources {
        if let Some(first) = by_name.insert(&res.crd.name, res) {
            diags.push(res.doc.diagnostic(
                &name_path,
                format!(
                    "resource {} is already defined in {}",
                    res.crd.name,
                    first.doc.file.display()
                ),
            ));
        }
        if let Some(first) = by_kind.insert((&res.crd.group, &res.crd.names.kind), res) {
            if first.crd.name != res.crd.name {
                diags.push(res.doc.diagnostic(
                    &FieldPath::new("spec.names.kind"),
                    format!(
                        "kind {} of group {:?} is already defined in {}",
                        res.crd.names.kind,
                        res.crd.group,
                        first.doc.file.display()
                    ),
                ));
            }
        }
        if res.crd.names.kind == "Self" {
            diags.push(res.doc.diagnostic(
                &FieldPath::new("spec.names.kind"),
                "kind Self cannot be a Rust type name; choose another kind",
            ));
        }
        if let Some(verbs) = verbs(res) {
            let path = FieldPath::new("metadata.annotations").key(VERBS_ANNOTATION);
            for v in &verbs {
                // The verbs the annotation may list: kapi-core's standard eight.
                if !ALL_VERBS.iter().any(|k| k == v) {
                    diags.push(res.doc.diagnostic(
                        &path,
                        format!(
                            "Unsupported value: {v:?}: supported values: {}",
                            ALL_VERBS
                                .iter()
                                .map(|k| format!("\"{k}\""))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
        }
        for entry in extra_subresources(res) {
            let path = FieldPath::new("metadata.annotations").key(SUBRESOURCES_ANNOTATION);
            let ok = entry.split_once('=').is_some_and(|(name, rest)| {
                // `@group/version/Kind` names what a create subresource is posted.
                let (verbs, kind) = rest.split_once('@').unwrap_or((rest, ""));
                (!rest.contains('@') || subresource_kind_ok(kind))
                    && !name.is_empty()
                    && !matches!(name, "status" | "scale")
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                    && verbs
                        .split(',')
                        .all(|v| matches!(v, "create" | "get" | "patch" | "update"))
            });
            if !ok {
                diags.push(res.doc.diagnostic(
                    &path,
                    format!(
                        "Invalid value: {entry:?}: must be name=verb,verb[@group/version/Kind] with verbs create, get, patch or update"
                    ),
                ));
            }
        }
        if res.conversion_object_hooks && res.conversion_hooks.is_none() {
            let path =
                FieldPath::new("metadata.annotations").key(CONVERSION_OBJECT_HOOKS_ANNOTATION);
            diags.push(res.doc.diagnostic(
                &path,
                format!("object hooks need conversion hooks: name them with {CONVERSION_HOOKS_ANNOTATION}"),
            ));
        }
        for (annotation, hooks) in [
            (HOOKS_ANNOTATION, &res.hooks),
            (CONVERSION_HOOKS_ANNOTATION, &res.conversion_hooks),
        ] {
            if let Some(hooks) = hooks {
                if syn::parse_str::<syn::Path>(hooks).is_err() {
                    let path = FieldPath::new("metadata.annotations").key(annotation);
                    diags.push(res.doc.diagnostic(
                        &path,
                        format!("hooks must be a Rust type path, got {hooks:?}"),
                    ));
                }
            }
        }
    }
    diags
}
