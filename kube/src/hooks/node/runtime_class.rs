//! RuntimeClasses, as kube-apiserver's strategy (`pkg/registry/node/runtimeclass/
//! strategy.go`), validation (`pkg/apis/node/validation`) and printer treat them: no
//! `metadata.generation`, no defaults, and a PUT needs a `resourceVersion`
//! (`AllowUnconditionalUpdate` is false).
//!
//! Checks (`ValidateRuntimeClass`, on create and update): `handler` is a DNS-1123 label;
//! `overhead.podFixed` holds container resources (`cpu`, `memory`, `ephemeral-storage`,
//! `hugepages-<size>` or an extended resource) with non-negative quantities, as kube's
//! `ValidateContainerResourceRequirements` checks limits (its errors are at
//! `overhead.limits[<name>]`, as kube's are); `scheduling.nodeSelector` is a valid label
//! map and `scheduling.tolerations` are valid and unique. On update
//! (`ValidateRuntimeClassUpdate`) `handler` may not change.
//!
//! Columns, as kube's `printRuntimeClass`: Handler and Age.
//!
//! Deliberate differences from kube-apiserver: a toleration shown as an error's value (a
//! duplicate, or a value with `Exists`) is printed as JSON, where kube prints the Go
//! struct; a quantity is shown as it was sent, not in canonical form.

use std::collections::BTreeMap;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kapi_core::meta::{
    dns1123_label_errors, label_value_errors, qualified_name_errors, validate_labels,
};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::core::v1::Toleration;
use crate::generated::node_k8s_io::v1::RuntimeClass;
use crate::hooks::node_labels::runtime_class_warnings;
use crate::hooks::quantity::quantity_value;
use crate::hooks::strings;

/// The hooks of RuntimeClass.
#[derive(Clone, Copy, Debug, Default)]
pub struct RuntimeClassHooks;

/// The resources kube's `IsStandardResourceName` knows besides huge pages.
const STANDARD_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "quotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];
/// The resources a container may ask for besides huge pages
/// (`IsStandardContainerResourceName`).
const CONTAINER_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage"];
/// The resources counted in whole units besides extended ones (`IsIntegerResourceName`).
const INTEGER_RESOURCES: &[&str] = &[
    "pods",
    "quotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];
/// The prefix of huge-page resources (`hugepages-2Mi`).
const HUGE_PAGES_PREFIX: &str = "hugepages-";
/// The toleration operators kube accepts (the comparison ones need an alpha gate).
const TOLERATION_OPERATORS: &[&str] = &["Equal", "Exists"];
/// The taint effects a toleration may name.
const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// `IsNativeResource`: unprefixed, or prefixed with a `kubernetes.io/` domain.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsExtendedResourceName`: a foreign-prefixed name that is a qualified name once
/// `requests.` is put in front of it, as a quota would name it.
fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && qualified_name_errors(&format!("requests.{name}")).is_empty()
}

/// `validateContainerResourceName` (after `validateResourceName`).
fn resource_name_errors(name: &str, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    for msg in qualified_name_errors(name) {
        errs.push(FieldError::invalid(path, name, msg));
    }
    let unprefixed = !name.contains('/');
    let huge_pages = name.starts_with(HUGE_PAGES_PREFIX);
    if errs.is_empty()
        && unprefixed
        && !STANDARD_RESOURCES.contains(&name)
        && !huge_pages
        && !name.starts_with("requests.hugepages-")
    {
        errs.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    if unprefixed {
        if !CONTAINER_RESOURCES.contains(&name) && !huge_pages {
            errs.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(name) && !is_extended(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// `validateOverhead`: kube checks `podFixed` as a container's resource limits.
fn overhead_errors(pod_fixed: &BTreeMap<String, Quantity>, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let limits = path.child("limits");
    let mut huge_pages = false;
    let mut cpu_or_memory = false;
    for (name, q) in pod_fixed {
        let at = limits.key(name);
        errs.extend(resource_name_errors(name, &at));
        let value = quantity_value(q);
        if value.is_some_and(|v| v < 0.0) {
            errs.push(FieldError::invalid(
                &at,
                q.0.as_str(),
                "must be greater than or equal to 0",
            ));
        }
        let integer = INTEGER_RESOURCES.contains(&name.as_str()) || is_extended(name);
        if integer && value.is_some_and(|v| (v * 1000.0).round() % 1000.0 != 0.0) {
            errs.push(FieldError::invalid(&at, q.0.as_str(), "must be an integer"));
        }
        huge_pages |= name.starts_with(HUGE_PAGES_PREFIX);
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    if huge_pages && !cpu_or_memory {
        errs.push(FieldError::forbidden(
            path,
            "HugePages require cpu or memory",
        ));
    }
    errs
}

/// A toleration as an error's value.
fn toleration_value(t: &Toleration) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

/// kube's `ValidateTolerations`, plus the RuntimeClass rule that no two tolerations
/// share key, operator, value and effect.
fn tolerations_errors(tolerations: &[Toleration], path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = Vec::new();
    for (i, t) in tolerations.iter().enumerate() {
        let at = path.index(i);
        let key = t.key.as_deref().unwrap_or("");
        let operator = t.operator.as_deref().unwrap_or("");
        let value = t.value.as_deref().unwrap_or("");
        let effect = t.effect.as_deref().unwrap_or("");
        for msg in qualified_name_errors(key)
            .into_iter()
            .filter(|_| !key.is_empty())
        {
            errs.push(FieldError::invalid(&at.child("key"), key, msg));
        }
        if key.is_empty() && operator != "Exists" {
            errs.push(FieldError::invalid(
                &at.child("operator"),
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.toleration_seconds.is_some() && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                &at.child("effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            // An empty operator means Equal; kube reports a bad value at `operator`.
            "Equal" | "" => {
                let msgs = label_value_errors(value);
                if !msgs.is_empty() {
                    errs.push(FieldError::invalid(
                        &at.child("operator"),
                        value,
                        msgs.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errs.push(FieldError::invalid(
                        &at.child("operator"),
                        toleration_value(t),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                &at.child("operator"),
                other,
                &strings(TOLERATION_OPERATORS),
            )),
        }
        if !effect.is_empty() && !TAINT_EFFECTS.contains(&effect) {
            errs.push(FieldError::not_supported(
                &at.child("effect"),
                effect,
                &strings(TAINT_EFFECTS),
            ));
        }
        let list_key = (key, operator, value, effect);
        if seen.contains(&list_key) {
            errs.push(FieldError::duplicate(&at, toleration_value(t)));
        } else {
            seen.push(list_key);
        }
    }
    errs
}

/// `ValidateRuntimeClass`, after the generic metadata checks.
fn validate_rc(rc: &RuntimeClass) -> ErrorList {
    let mut errs = ErrorList::new();
    for msg in dns1123_label_errors(&rc.handler) {
        errs.push(FieldError::invalid(
            &FieldPath::new("handler"),
            rc.handler.as_str(),
            msg,
        ));
    }
    if let Some(pod_fixed) = rc.overhead.as_ref().and_then(|o| o.pod_fixed.as_ref()) {
        errs.extend(overhead_errors(pod_fixed, &FieldPath::new("overhead")));
    }
    if let Some(scheduling) = &rc.scheduling {
        let path = FieldPath::new("scheduling");
        if let Some(selector) = &scheduling.node_selector {
            let labels = serde_json::to_value(selector).unwrap_or(Value::Null);
            errs.extend(validate_labels(Some(&labels), &path.child("nodeSelector")));
        }
        let tolerations = scheduling.tolerations.as_deref().unwrap_or(&[]);
        errs.extend(tolerations_errors(tolerations, &path.child("tolerations")));
    }
    errs
}

impl Hooks<RuntimeClass> for RuntimeClassHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    /// kube's `WarningsOnCreate`: deprecated node labels in `scheduling.nodeSelector`.
    fn warnings_on_create(&self, rc: &RuntimeClass) -> Vec<String> {
        runtime_class_warnings(
            rc.scheduling
                .as_ref()
                .and_then(|s| s.node_selector.as_ref()),
        )
    }

    fn warnings_on_update(&self, new: &RuntimeClass, _old: &RuntimeClass) -> Vec<String> {
        self.warnings_on_create(new)
    }

    fn validate(&self, rc: &RuntimeClass) -> ErrorList {
        validate_rc(rc)
    }

    fn validate_update(&self, new: &RuntimeClass, old: &RuntimeClass) -> ErrorList {
        let mut errs = validate_rc(new);
        if new.handler != old.handler {
            errs.push(FieldError::invalid(
                &FieldPath::new("handler"),
                new.handler.as_str(),
                "field is immutable",
            ));
        }
        errs
    }
}
