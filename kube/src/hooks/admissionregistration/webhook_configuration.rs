//! The admission webhook configurations, MutatingWebhookConfiguration and
//! ValidatingWebhookConfiguration, as kube-apiserver's v1 defaults and
//! `ValidateMutatingWebhookConfiguration`/`ValidateValidatingWebhookConfiguration`
//! (`pkg/apis/admissionregistration/validation`) treat them.
//!
//! Defaults per webhook: `failurePolicy: Fail`, `matchPolicy: Equivalent`, empty
//! namespace and object selectors, `timeoutSeconds: 10`, a rule's `scope: "*"`, a
//! service's `port: 443`, and for a mutating one `reinvocationPolicy: Never`.
//!
//! Checks per webhook: a fully qualified name, unique in the configuration; each rule's
//! operations, groups, versions, resources and scope; the failure, match and
//! reinvocation policies; `sideEffects` required and `None` or `NoneOnDryRun`;
//! `timeoutSeconds` 1 to 30; the selectors; exactly one of `clientConfig.url` and
//! `clientConfig.service`, each checked; the match conditions (compiled); the
//! `admissionReviewVersions`, one of them `v1` or `v1beta1`. On update, as kube ratchets
//! them, the last three rules (recognised review versions, side effects, unique names)
//! hold only where the stored configuration already kept them.

use std::collections::HashSet;

use kapi_core::meta::dns1123_subdomain_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::{Value, json};

use super::validation::{
    label_selector_errors, match_conditions_errors, operations_errors, rule_errors,
};
use crate::generated::admissionregistration_k8s_io::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use crate::hooks::strings;
use crate::hooks::webhook_client::{review_versions_errors, service_errors, url_errors};

/// The hooks of MutatingWebhookConfiguration.
#[derive(Clone, Copy, Debug, Default)]
pub struct MutatingWebhookConfigurationHooks;

/// The hooks of ValidatingWebhookConfiguration.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidatingWebhookConfigurationHooks;

/// kube's sets, sorted as `sets.String.List()` gives them.
const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
const NO_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
const SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun", "Some", "Unknown"];
const ADMISSION_REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// What kube's validation requires, relaxed on update where the stored object did not.
#[derive(Clone, Copy)]
struct Options {
    recognized_review_versions: bool,
    no_side_effects: bool,
    unique_names: bool,
}

impl Options {
    const CREATE: Self = Self {
        recognized_review_versions: true,
        no_side_effects: true,
        unique_names: true,
    };

    /// kube's `…HasAcceptedAdmissionReviewVersions`, `…HasNoSideEffects` and
    /// `…HasUniqueWebhookNames` of the stored webhooks.
    fn update(old: &Value) -> Self {
        let hooks = webhooks(old);
        let mut names = HashSet::new();
        Self {
            recognized_review_versions: hooks.iter().all(|h| {
                let versions = strs(&h["admissionReviewVersions"]);
                versions.is_empty()
                    || versions
                        .iter()
                        .any(|v| ADMISSION_REVIEW_VERSIONS.contains(v))
            }),
            no_side_effects: hooks.iter().all(|h| {
                h["sideEffects"]
                    .as_str()
                    .is_some_and(|s| NO_SIDE_EFFECTS.contains(&s))
            }),
            unique_names: hooks
                .iter()
                .filter_map(|h| h["name"].as_str().filter(|n| !n.is_empty()))
                .all(|n| names.insert(n)),
        }
    }
}

fn webhooks(config: &Value) -> &[Value] {
    config["webhooks"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// kube's v1 `SetDefaults_ValidatingWebhook`/`SetDefaults_MutatingWebhook` and what
/// they default inside (rules, service).
fn defaults(config: &mut Value, mutating: bool) {
    let Some(hooks) = config["webhooks"].as_array_mut() else {
        return;
    };
    for hook in hooks.iter_mut().filter(|h| h.is_object()) {
        let mut set = |field: &str, value: Value| {
            if hook.get(field).is_none_or(Value::is_null) {
                hook[field] = value;
            }
        };
        set("failurePolicy", json!("Fail"));
        set("matchPolicy", json!("Equivalent"));
        set("namespaceSelector", json!({}));
        set("objectSelector", json!({}));
        set("timeoutSeconds", json!(10));
        if mutating {
            set("reinvocationPolicy", json!("Never"));
        }
        for rule in hook["rules"].as_array_mut().into_iter().flatten() {
            if rule.is_object() && rule.get("scope").is_none_or(Value::is_null) {
                rule["scope"] = json!("*");
            }
        }
        let service = &mut hook["clientConfig"]["service"];
        if service.is_object() && service.get("port").is_none_or(Value::is_null) {
            service["port"] = json!(443);
        }
    }
}

/// kube's `IsFullyQualifiedName`.
fn fully_qualified_name_errors(path: &FieldPath, name: &str) -> Option<FieldError> {
    if name.is_empty() {
        return Some(FieldError::required(path, ""));
    }
    let errs = dns1123_subdomain_errors(name);
    if !errs.is_empty() {
        return Some(FieldError::invalid(path, name, errs.join(",")));
    }
    (name.split('.').count() < 3).then(|| {
        FieldError::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        )
    })
}

/// One value of an enumeration, if set.
fn enum_error(hook: &Value, field: &str, allowed: &[&str], path: &FieldPath) -> Option<FieldError> {
    let value = hook[field].as_str()?;
    (!allowed.contains(&value))
        .then(|| FieldError::not_supported(&path.child(field), value, &strings(allowed)))
}

/// kube's `validateValidatingWebhook`/`validateMutatingWebhook`.
fn webhook_errors(hook: &Value, mutating: bool, opts: Options, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    errs.extend(fully_qualified_name_errors(
        &path.child("name"),
        hook["name"].as_str().unwrap_or_default(),
    ));
    for (i, rule) in hook["rules"].as_array().into_iter().flatten().enumerate() {
        let at = path.child("rules").index(i);
        let operations: Vec<String> = strs(&rule["operations"])
            .into_iter()
            .map(String::from)
            .collect();
        errs.extend(operations_errors(&operations, &at));
        if let Ok(rule) = serde_json::from_value(rule.clone()) {
            errs.extend(rule_errors(&rule, &at));
        }
    }
    errs.extend(enum_error(hook, "failurePolicy", FAILURE_POLICIES, path));
    errs.extend(enum_error(hook, "matchPolicy", MATCH_POLICIES, path));
    let side_effects = if opts.no_side_effects {
        NO_SIDE_EFFECTS
    } else {
        SIDE_EFFECTS
    };
    match hook["sideEffects"].as_str() {
        None => errs.push(FieldError::required(
            &path.child("sideEffects"),
            format!("must specify one of {}", side_effects.join(", ")),
        )),
        Some(_) => errs.extend(enum_error(hook, "sideEffects", side_effects, path)),
    }
    if let Some(t) = hook["timeoutSeconds"]
        .as_i64()
        .filter(|t| !(1..=30).contains(t))
    {
        errs.push(FieldError::invalid(
            &path.child("timeoutSeconds"),
            t,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for field in ["namespaceSelector", "objectSelector"] {
        if let Ok(selector) = serde_json::from_value(hook[field].clone()) {
            errs.extend(label_selector_errors(&selector, &path.child(field)));
        }
    }
    if mutating {
        errs.extend(enum_error(
            hook,
            "reinvocationPolicy",
            REINVOCATION_POLICIES,
            path,
        ));
    }
    let client = &hook["clientConfig"];
    let config_path = path.child("clientConfig");
    match (client["url"].as_str(), client["service"].is_object()) {
        (Some(url), false) => errs.extend(url_errors(&config_path.child("url"), url)),
        (None, true) => errs.extend(service_errors(
            &config_path.child("service"),
            &client["service"],
        )),
        _ => errs.push(FieldError::required(
            &config_path,
            "exactly one of url or service is required",
        )),
    }
    if let Ok(conditions) = serde_json::from_value::<Vec<_>>(hook["matchConditions"].clone()) {
        errs.extend(match_conditions_errors(
            &conditions,
            false,
            &path.child("matchConditions"),
        ));
    }
    errs.extend(review_versions_errors(
        &path.child("admissionReviewVersions"),
        &strs(&hook["admissionReviewVersions"]),
        opts.recognized_review_versions
            .then_some(ADMISSION_REVIEW_VERSIONS),
        &format!(
            "must specify one of {}",
            ADMISSION_REVIEW_VERSIONS.join(", ")
        ),
    ));
    errs
}

/// Every webhook's errors, and duplicate names.
fn configuration_errors(config: &Value, mutating: bool, opts: Options) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut names = HashSet::new();
    for (i, hook) in webhooks(config).iter().enumerate() {
        let path = FieldPath::new("webhooks").index(i);
        errs.extend(webhook_errors(hook, mutating, opts, &path));
        let name = hook["name"].as_str().unwrap_or_default();
        if opts.unique_names && !name.is_empty() && !names.insert(name) {
            errs.push(FieldError::duplicate(&path.child("name"), name));
        }
    }
    errs
}

macro_rules! webhook_configuration_hooks {
    ($hooks:ty, $kind:ty, $mutating:expr) => {
        impl Hooks<$kind> for $hooks {
            fn apply_defaults(&self, config: &mut $kind) {
                let mut json = serde_json::to_value(&*config).unwrap_or_default();
                defaults(&mut json, $mutating);
                if let Ok(defaulted) = serde_json::from_value(json) {
                    *config = defaulted;
                }
            }

            fn validate(&self, config: &$kind) -> ErrorList {
                let json = serde_json::to_value(config).unwrap_or_default();
                configuration_errors(&json, $mutating, Options::CREATE)
            }

            fn validate_update(&self, new: &$kind, old: &$kind) -> ErrorList {
                let old = serde_json::to_value(old).unwrap_or_default();
                let json = serde_json::to_value(new).unwrap_or_default();
                configuration_errors(&json, $mutating, Options::update(&old))
            }
        }
    };
}

webhook_configuration_hooks!(
    MutatingWebhookConfigurationHooks,
    MutatingWebhookConfiguration,
    true
);
webhook_configuration_hooks!(
    ValidatingWebhookConfigurationHooks,
    ValidatingWebhookConfiguration,
    false
);

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(config: &Value, mutating: bool) -> Vec<String> {
        let mut config = config.clone();
        defaults(&mut config, mutating);
        configuration_errors(&config, mutating, Options::CREATE)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn webhooks_are_defaulted_and_checked_as_kube_does() {
        let good = json!({"webhooks": [{"name": "check.example.com",
            "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["pods"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"]}]});
        let mut defaulted = good.clone();
        defaults(&mut defaulted, true);
        let hook = &defaulted["webhooks"][0];
        assert_eq!(
            (
                &hook["failurePolicy"],
                &hook["matchPolicy"],
                &hook["timeoutSeconds"],
                &hook["reinvocationPolicy"],
                &hook["rules"][0]["scope"],
                &hook["clientConfig"]["service"]["port"]
            ),
            (
                &json!("Fail"),
                &json!("Equivalent"),
                &json!(10),
                &json!("Never"),
                &json!("*"),
                &json!(443)
            )
        );
        assert!(
            messages(&good, true).is_empty(),
            "{:?}",
            messages(&good, true)
        );

        let bad = json!({"webhooks": [
            {"name": "short.name", "clientConfig": {"url": "https://h/x"},
                "rules": [{"operations": ["CREATE", "*"], "apiGroups": [""],
                    "apiVersions": ["v1"], "resources": ["pods"]}],
                "sideEffects": "Some", "timeoutSeconds": 31, "failurePolicy": "Never",
                "admissionReviewVersions": []},
            {"name": "short.name", "clientConfig": {},
                "admissionReviewVersions": ["v1"]}]});
        assert_eq!(
            messages(&bad, false),
            [
                "webhooks[0].name: Invalid value: \"short.name\": should be a domain with at least three segments separated by dots",
                "webhooks[0].rules[0].operations: Invalid value: [\"CREATE\",\"*\"]: if '*' is present, must not specify other operations",
                "webhooks[0].failurePolicy: Unsupported value: \"Never\": supported values: \"Fail\", \"Ignore\"",
                "webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
                "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
                "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
                "webhooks[1].name: Invalid value: \"short.name\": should be a domain with at least three segments separated by dots",
                "webhooks[1].sideEffects: Required value: must specify one of None, NoneOnDryRun",
                "webhooks[1].clientConfig: Required value: exactly one of url or service is required",
                "webhooks[1].name: Duplicate value: \"short.name\"",
            ]
        );
    }

    #[test]
    fn an_update_keeps_what_the_stored_configuration_had() {
        let old = json!({"webhooks": [{"name": "a.example.com", "sideEffects": "Some",
            "admissionReviewVersions": ["v0"], "clientConfig": {"url": "https://h"}}]});
        let opts = Options::update(&old);
        assert!(!opts.no_side_effects && !opts.recognized_review_versions && opts.unique_names);
        assert!(configuration_errors(&old, false, opts).is_empty());
    }
}
