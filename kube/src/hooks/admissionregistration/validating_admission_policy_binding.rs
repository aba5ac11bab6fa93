//! ValidatingAdmissionPolicyBindings, as kube-apiserver's strategy (`pkg/registry/
//! admissionregistration/validatingadmissionpolicybinding/strategy.go`), v1 defaults,
//! validation (`ValidateValidatingAdmissionPolicyBinding`, `...Update`) and printer
//! treat them: `metadata.generation` is 1 on create and bumped when the spec changes;
//! updates need a `resourceVersion`.
//!
//! Defaults: in `matchResources`, `matchPolicy: Equivalent`, empty namespace and object
//! selectors and every rule's `scope: "*"`.
//!
//! Checks: `policyName` is required and a DNS-1123 subdomain; `paramRef` has a `name`
//! (a path segment) or a `selector`, not both, and a `parameterNotFoundAction` of `Deny`
//! or `Allow`; `matchResources`' rules and selectors are valid (reported under kube's
//! misspelt `spec.matchResouces`); `validationActions` has at least one of `Deny`, `Warn`
//! and `Audit`, no duplicate, and not both `Deny` and `Warn`. The policy named need not
//! exist.
//!
//! Columns, as kube's `printValidatingAdmissionPolicyBinding`: PolicyName, ParamRef
//! (`namespace/name`, `*/name` without a namespace, the selector as Go prints it, or
//! `<unset>`) and Age.
//!
//! Deliberate difference from kube-apiserver: the paramRef authorization check of kube's
//! strategy (that the writer may read the policy's parameter resource) is not made.

use std::collections::HashSet;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::meta::{NameRule, dns1123_subdomain_errors};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::validation::{default_match_resources, label_selector_errors, match_resources_errors};
use crate::generated::admissionregistration_k8s_io::v1::ValidatingAdmissionPolicyBinding;
use crate::generated::api::admissionregistration::v1::{
    ParamRef, ValidatingAdmissionPolicyBindingSpec,
};
use crate::hooks::strings;

/// The hooks of ValidatingAdmissionPolicyBinding.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidatingAdmissionPolicyBindingHooks;

/// kube's `validValidationActions`, sorted.
const VALIDATION_ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
/// The `parameterNotFoundAction`s, in kube's order.
const NOT_FOUND_ACTIONS: &[&str] = &["Deny", "Allow"];
/// Why `name` and `selector` may not both be given.
const EXCLUSIVE: &str = "name and selector are mutually exclusive";

/// `validateParamRef`.
fn param_ref_errors(pr: &ParamRef, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = pr.name.as_deref().unwrap_or_default();
    if !name.is_empty() {
        for msg in NameRule::PathSegment.errors(name, false) {
            errs.push(FieldError::invalid(&path.child("name"), name, msg));
        }
        if pr.selector.is_some() {
            errs.push(FieldError::forbidden(&path.child("name"), EXCLUSIVE));
        }
    }
    if let Some(selector) = &pr.selector {
        errs.extend(label_selector_errors(selector, &path.child("selector")));
        if !name.is_empty() {
            errs.push(FieldError::forbidden(&path.child("selector"), EXCLUSIVE));
        }
    }
    if name.is_empty() && pr.selector.is_none() {
        errs.push(FieldError::required(
            path,
            "one of name or selector must be specified",
        ));
    }
    let action_path = path.child("parameterNotFoundAction");
    match pr.parameter_not_found_action.as_deref() {
        None | Some("") => errs.push(FieldError::required(&action_path, "")),
        Some(a) if !NOT_FOUND_ACTIONS.contains(&a) => errs.push(FieldError::not_supported(
            &action_path,
            a,
            &strings(NOT_FOUND_ACTIONS),
        )),
        Some(_) => {}
    }
    errs
}

/// `validateValidationActions`.
fn validation_actions_errors(actions: &[String], path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = HashSet::new();
    for (i, action) in actions.iter().enumerate() {
        if !VALIDATION_ACTIONS.contains(&action.as_str()) {
            errs.push(FieldError::not_supported(
                &path.index(i),
                action.as_str(),
                &strings(VALIDATION_ACTIONS),
            ));
        }
        if !seen.insert(action.as_str()) {
            errs.push(FieldError::duplicate(&path.index(i), action.as_str()));
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        errs.push(FieldError::invalid(
            path,
            actions.to_vec(),
            "must not contain both Deny and Warn (repeating the same validation failure \
             information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(
            path,
            "at least one validation action is required",
        ));
    }
    errs
}

/// `validateValidatingAdmissionPolicyBindingSpec`.
fn spec_errors(spec: &ValidatingAdmissionPolicyBindingSpec) -> ErrorList {
    let path = FieldPath::new("spec");
    let mut errs = ErrorList::new();
    let policy = spec.policy_name.as_deref().unwrap_or_default();
    if policy.is_empty() {
        errs.push(FieldError::required(&path.child("policyName"), ""));
    } else {
        for msg in dns1123_subdomain_errors(policy) {
            errs.push(FieldError::invalid(&path.child("policyName"), policy, msg));
        }
    }
    if let Some(pr) = &spec.param_ref {
        errs.extend(param_ref_errors(pr, &path.child("paramRef")));
    }
    if let Some(mr) = &spec.match_resources {
        // kube's path, misspelt as it is there.
        errs.extend(match_resources_errors(mr, &path.child("matchResouces")));
    }
    errs.extend(validation_actions_errors(
        spec.validation_actions.as_deref().unwrap_or_default(),
        &path.child("validationActions"),
    ));
    errs
}

/// Go's `%v` of a string slice: `[a b]`.
fn go_list(values: Option<&Vec<String>>) -> String {
    format!("[{}]", values.map(|v| v.join(" ")).unwrap_or_default())
}

/// The protobuf-generated `String()` of a `metav1.LabelSelector`, which kube's printer
/// shows for a `paramRef` selector.
fn go_selector_string(selector: &LabelSelector) -> String {
    let labels: String = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let expressions: String = selector
        .match_expressions
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:{},}},",
                e.key,
                e.operator,
                go_list(e.values.as_ref())
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}

/// kube's `printValidatingAdmissionPolicyBinding` ParamRef cell.
fn param_ref_cell(spec: Option<&ValidatingAdmissionPolicyBindingSpec>) -> String {
    let Some(pr) = spec.and_then(|s| s.param_ref.as_ref()) else {
        return "<unset>".into();
    };
    match (pr.name.as_deref(), pr.namespace.as_deref(), &pr.selector) {
        (Some(name), Some(ns), _) if !name.is_empty() && !ns.is_empty() => format!("{ns}/{name}"),
        // Whether the parameter is cluster-scoped is not known here: kube prints `*`.
        (Some(name), _, _) if !name.is_empty() => format!("*/{name}"),
        (_, _, Some(selector)) => go_selector_string(selector),
        _ => "<unset>".into(),
    }
}

impl Hooks<ValidatingAdmissionPolicyBinding> for ValidatingAdmissionPolicyBindingHooks {
    /// `SetDefaults_MatchResources` and `SetDefaults_Rule`.
    fn apply_defaults(&self, binding: &mut ValidatingAdmissionPolicyBinding) {
        if let Some(mr) = binding
            .spec
            .as_mut()
            .and_then(|s| s.match_resources.as_mut())
        {
            default_match_resources(mr);
        }
    }

    fn prepare_for_update(
        &self,
        new: &mut ValidatingAdmissionPolicyBinding,
        old: &ValidatingAdmissionPolicyBinding,
    ) {
        // A spec change bumps the generation; compared after the defaults, so that
        // leaving out a defaulted field changes nothing.
        let old_gen = old.metadata.generation.unwrap_or(1);
        let spec_of = |b: &ValidatingAdmissionPolicyBinding| b.spec.clone().unwrap_or_default();
        new.metadata.generation = Some(if spec_of(new) == spec_of(old) {
            old_gen
        } else {
            old_gen + 1
        });
    }

    fn validate(&self, binding: &ValidatingAdmissionPolicyBinding) -> ErrorList {
        spec_errors(&binding.spec.clone().unwrap_or_default())
    }

    fn validate_update(
        &self,
        new: &ValidatingAdmissionPolicyBinding,
        _old: &ValidatingAdmissionPolicyBinding,
    ) -> ErrorList {
        spec_errors(&new.spec.clone().unwrap_or_default())
    }

    fn table_cell(
        &self,
        column: &str,
        binding: &ValidatingAdmissionPolicyBinding,
    ) -> Option<Value> {
        match column {
            "ParamRef" => Some(Value::String(param_ref_cell(binding.spec.as_ref()))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    #[test]
    fn selector_as_go_prints_it() {
        let selector = LabelSelector {
            match_labels: Some([("env".to_string(), "prod".to_string())].into()),
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: Some(vec!["a".into(), "b".into()]),
            }]),
        };
        assert_eq!(
            go_selector_string(&selector),
            "&LabelSelector{MatchLabels:map[string]string{env: prod,},MatchExpressions:\
             []LabelSelectorRequirement{LabelSelectorRequirement{Key:tier,Operator:In,\
             Values:[a b],},},}"
        );
    }
}
