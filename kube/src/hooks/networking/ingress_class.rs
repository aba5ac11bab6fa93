//! IngressClasses, as kube-apiserver's strategy (`pkg/registry/networking/ingressclass/
//! strategy.go`), v1 defaults, validation (`ValidateIngressClass`,
//! `ValidateIngressClassUpdate` in `pkg/apis/networking/validation`) and printer treat
//! them: `metadata.generation` is 1 on create and bumped when the spec changes;
//! `spec.parameters.scope` defaults to `Cluster`.
//!
//! Checks: `spec.controller` is required, at most 250 bytes, a domain-prefixed path
//! (`acme.io/ingress-controller`) and immutable; `spec.parameters`, when given, has an
//! `apiGroup` that is a DNS-1123 subdomain, a `kind` and a `name` that are path segments,
//! and a `scope` of `Cluster` (no `namespace`) or `Namespace` (a `namespace` that is a
//! DNS-1123 label).
//!
//! Columns, as kube's `printIngressClass`: Controller, Parameters (`Kind.apiGroup/name`,
//! `<none>` without parameters) and Age.
//!
//! Deliberate difference from kube-apiserver: the Name column has no ` (default)` mark
//! for a class annotated `ingressclass.kubernetes.io/is-default-class: "true"`, as
//! kapi's Name column is not one the hooks compute.

use kapi_core::meta::{NameRule, dns1123_label_errors, dns1123_subdomain_errors};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::networking::v1::{IngressClassParametersReference, IngressClassSpec};
use crate::generated::networking_k8s_io::v1::IngressClass;
use crate::hooks::strings;

/// The hooks of IngressClass.
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressClassHooks;

/// kube's `maxLenIngressClassController`.
const MAX_CONTROLLER_LEN: u64 = 250;
/// The scope of parameters that live in a namespace.
const SCOPE_NAMESPACE: &str = "Namespace";
/// The scope of cluster-wide parameters, and the default.
const SCOPE_CLUSTER: &str = "Cluster";
/// The scopes kube accepts, sorted as its `sets.String.List()` gives them.
const SCOPES: &[&str] = &[SCOPE_CLUSTER, SCOPE_NAMESPACE];
/// Go's `httpPathFmt`: the characters of an HTTP path (RFC 3986).
const HTTP_PATH_FMT: &str = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+";

/// Whether `c` may appear in an HTTP path (`httpPathFmt`).
fn is_http_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c)
}

/// kube's `IsDomainPrefixedPath` (`acme.io/foo`), for a non-empty `value`.
fn domain_prefixed_path_errors(path: &FieldPath, value: &str) -> ErrorList {
    let mut errs = ErrorList::new();
    let (host, rest) = match value.split_once('/') {
        Some((h, r)) if !h.is_empty() && !r.is_empty() => (h, r),
        _ => {
            errs.push(FieldError::invalid(
                path,
                value,
                "must be a domain-prefixed path (such as \"acme.io/foo\")",
            ));
            return errs;
        }
    };
    for msg in dns1123_subdomain_errors(host) {
        errs.push(FieldError::invalid(path, host, msg));
    }
    if !rest.chars().all(is_http_path_char) {
        errs.push(FieldError::invalid(
            path,
            rest,
            format!("Invalid path (regex used for validation is '{HTTP_PATH_FMT}')"),
        ));
    }
    errs
}

/// `validateIngressClassParametersReference`.
fn parameters_errors(params: &IngressClassParametersReference, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(group) = &params.api_group {
        for msg in dns1123_subdomain_errors(group) {
            errs.push(FieldError::invalid(
                &path.child("apiGroup"),
                group.as_str(),
                msg,
            ));
        }
    }
    for (field, value) in [("kind", &params.kind), ("name", &params.name)] {
        if value.is_empty() {
            errs.push(FieldError::required(&path.child(field), ""));
        } else {
            for msg in NameRule::PathSegment.errors(value, false) {
                errs.push(FieldError::invalid(&path.child(field), value.as_str(), msg));
            }
        }
    }
    let Some(scope) = params.scope.as_deref() else {
        errs.push(FieldError::required(&path.child("scope"), ""));
        return errs;
    };
    let ns_path = path.child("namespace");
    match scope {
        SCOPE_NAMESPACE => match &params.namespace {
            None => errs.push(FieldError::required(
                &ns_path,
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(ns) => {
                for msg in dns1123_label_errors(ns) {
                    errs.push(FieldError::invalid(&ns_path, ns.as_str(), msg));
                }
            }
        },
        SCOPE_CLUSTER => {
            if params.namespace.is_some() {
                errs.push(FieldError::forbidden(
                    &ns_path,
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            &path.child("scope"),
            other,
            &strings(SCOPES),
        )),
    }
    errs
}

/// `validateIngressClassSpec`.
fn spec_errors(spec: &IngressClassSpec) -> ErrorList {
    let path = FieldPath::new("spec");
    let controller_path = path.child("controller");
    let mut errs = ErrorList::new();
    let controller = spec.controller.as_deref().unwrap_or("");
    if controller.is_empty() {
        errs.push(FieldError::required(&controller_path, ""));
    } else {
        if controller.len() as u64 > MAX_CONTROLLER_LEN {
            errs.push(FieldError::too_long(&controller_path, MAX_CONTROLLER_LEN));
        }
        errs.extend(domain_prefixed_path_errors(&controller_path, controller));
    }
    if let Some(params) = &spec.parameters {
        errs.extend(parameters_errors(params, &path.child("parameters")));
    }
    errs
}

/// kube's `printIngressClass` Parameters cell.
fn parameters_cell(spec: Option<&IngressClassSpec>) -> String {
    let Some(params) = spec.and_then(|s| s.parameters.as_ref()) else {
        return "<none>".into();
    };
    match &params.api_group {
        Some(group) => format!("{}.{group}/{}", params.kind, params.name),
        None => format!("{}/{}", params.kind, params.name),
    }
}

impl Hooks<IngressClass> for IngressClassHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// kube's `SetDefaults_IngressClass`.
    fn apply_defaults(&self, class: &mut IngressClass) {
        if let Some(params) = class.spec.as_mut().and_then(|s| s.parameters.as_mut()) {
            if params.scope.is_none() {
                params.scope = Some(SCOPE_CLUSTER.into());
            }
        }
    }

    fn prepare_for_update(&self, new: &mut IngressClass, old: &IngressClass) {
        // kube bumps the generation on a spec change only; compared here, after the
        // defaults, so that a request leaving out a defaulted field changes nothing.
        let old_gen = old.metadata.generation.unwrap_or(1);
        let spec_of = |c: &IngressClass| c.spec.clone().unwrap_or_default();
        new.metadata.generation = Some(if spec_of(new) == spec_of(old) {
            old_gen
        } else {
            old_gen + 1
        });
    }

    fn validate(&self, class: &IngressClass) -> ErrorList {
        spec_errors(&class.spec.clone().unwrap_or_default())
    }

    fn validate_update(&self, new: &IngressClass, old: &IngressClass) -> ErrorList {
        let new_spec = new.spec.clone().unwrap_or_default();
        let old_spec = old.spec.clone().unwrap_or_default();
        let mut errs = ErrorList::new();
        if new_spec.controller != old_spec.controller {
            errs.push(FieldError::invalid(
                &FieldPath::new("spec").child("controller"),
                new_spec.controller.clone().unwrap_or_default(),
                "field is immutable",
            ));
        }
        errs.extend(spec_errors(&new_spec));
        errs
    }

    fn table_cell(&self, column: &str, class: &IngressClass) -> Option<Value> {
        match column {
            "Parameters" => Some(Value::String(parameters_cell(class.spec.as_ref()))),
            _ => None,
        }
    }
}
