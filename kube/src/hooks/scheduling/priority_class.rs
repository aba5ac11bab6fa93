//! PriorityClasses, as kube-apiserver's strategy (`pkg/registry/scheduling/
//! priorityclass/strategy.go`), v1 defaults, validation (`pkg/apis/scheduling/
//! validation`) and printer treat them: `metadata.generation` is 1 from the create on
//! and never bumped; `preemptionPolicy` defaults to `PreemptLowerPriority`.
//!
//! Checks (`ValidatePriorityClass`): a name with the `system-` prefix must be one of the
//! system classes ([`SYSTEM_PRIORITY_CLASSES`]) with its value and `globalDefault`;
//! any other class's value is at most [`HIGHEST_USER_DEFINABLE_PRIORITY`];
//! `preemptionPolicy` is `PreemptLowerPriority` or `Never`. On update
//! (`ValidatePriorityClassUpdate`) only immutability is checked: `value` and
//! `preemptionPolicy` may not change.
//!
//! Columns, as kube's `printPriorityClass`: Value, Global-Default (`false` when unset),
//! Age and PreemptionPolicy.
//!
//! That only one class may be `globalDefault` is kube's Priority admission plugin's rule,
//! which needs the stored classes: see `crate::admission::priority`.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::scheduling_k8s_io::v1::PriorityClass;
use crate::hooks::strings;

/// The hooks of PriorityClass.
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorityClassHooks;

/// The highest value a class not reserved for the system may have (kube's
/// `HighestUserDefinablePriority`).
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
/// The prefix of the names reserved for the system classes.
const SYSTEM_PREFIX: &str = "system-";
/// `preemptionPolicy` when none is given.
const PREEMPT_LOWER_PRIORITY: &str = "PreemptLowerPriority";
/// The preemption policies kube accepts, in its order.
const PREEMPTION_POLICIES: &[&str] = &[PREEMPT_LOWER_PRIORITY, "Never"];

/// One of the PriorityClasses kube-apiserver creates at start and reserves the name of.
#[derive(Clone, Copy, Debug)]
pub struct SystemPriorityClass {
    /// `metadata.name`.
    pub name: &'static str,
    /// `value`.
    pub value: i64,
    /// `description`.
    pub description: &'static str,
}

/// kube's system priority classes (`pkg/apis/scheduling/v1/helpers.go`), in its order;
/// neither is the global default.
pub const SYSTEM_PRIORITY_CLASSES: &[SystemPriorityClass] = &[
    SystemPriorityClass {
        name: "system-node-critical",
        value: 2 * HIGHEST_USER_DEFINABLE_PRIORITY + 1000,
        description: "Used for system critical pods that must not be moved from their current node.",
    },
    SystemPriorityClass {
        name: "system-cluster-critical",
        value: 2 * HIGHEST_USER_DEFINABLE_PRIORITY,
        description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    },
];

/// Why a class named `name` with `value` and `global_default` is not a system class
/// (kube's `IsKnownSystemPriorityClass`), or `None` when it is one.
fn not_a_system_class(name: &str, value: i64, global_default: bool) -> Option<String> {
    let Some(system) = SYSTEM_PRIORITY_CLASSES.iter().find(|c| c.name == name) else {
        return Some(format!("{name} is not a known system priority class"));
    };
    if system.value != value {
        return Some(format!(
            "value of {name} PriorityClass must be {}",
            system.value
        ));
    }
    if global_default {
        return Some(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    None
}

/// kube's `ValidatePreemptionPolicy`.
fn preemption_policy_errors(policy: &str) -> ErrorList {
    let path = FieldPath::new("preemptionPolicy");
    let mut errs = ErrorList::new();
    if policy.is_empty() {
        errs.push(FieldError::required(&path, ""));
    } else if !PREEMPTION_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported(
            &path,
            policy,
            &strings(PREEMPTION_POLICIES),
        ));
    }
    errs
}

/// `ValidatePriorityClass`, after the generic metadata checks.
fn validate_pc(pc: &PriorityClass) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = pc.metadata.name.as_deref().unwrap_or_default();
    let value = i64::from(pc.value);
    if name.starts_with(SYSTEM_PREFIX) {
        if let Some(why) = not_a_system_class(name, value, pc.global_default.unwrap_or(false)) {
            errs.push(FieldError::forbidden(
                &FieldPath::new("metadata.name"),
                format!(
                    "priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {why}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errs.push(FieldError::forbidden(
            &FieldPath::new("value"),
            format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    if let Some(policy) = &pc.preemption_policy {
        errs.extend(preemption_policy_errors(policy));
    }
    errs
}

impl Hooks<PriorityClass> for PriorityClassHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, pc: &mut PriorityClass) {
        if pc.preemption_policy.is_none() {
            pc.preemption_policy = Some(PREEMPT_LOWER_PRIORITY.into());
        }
    }

    fn prepare_for_update(&self, new: &mut PriorityClass, old: &PriorityClass) {
        // kube's strategy sets the generation on create only, and an update keeps the
        // stored one.
        new.metadata.generation = old.metadata.generation;
    }

    fn validate(&self, pc: &PriorityClass) -> ErrorList {
        validate_pc(pc)
    }

    fn validate_update(&self, new: &PriorityClass, old: &PriorityClass) -> ErrorList {
        let mut errs = ErrorList::new();
        if new.value != old.value {
            errs.push(FieldError::forbidden(
                &FieldPath::new("value"),
                "may not be changed in an update.",
            ));
        }
        if new.preemption_policy != old.preemption_policy {
            errs.push(FieldError::invalid(
                &FieldPath::new("preemptionPolicy"),
                new.preemption_policy
                    .clone()
                    .map_or(Value::Null, Value::String),
                "field is immutable",
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, pc: &PriorityClass) -> Option<Value> {
        match column {
            "Global-Default" => Some(Value::Bool(pc.global_default.unwrap_or(false))),
            _ => None,
        }
    }
}
