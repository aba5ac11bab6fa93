//! PodDisruptionBudgets, as kube-apiserver's strategy, validation and printer treat
//! them: generation tracked; `minAvailable` and `maxUnavailable` are exclusive, each an
//! integer of at least 0 or a percentage up to 100%; columns show `N/A` for an unset
//! bound.
//!
//! Deliberate differences from kube-apiserver:
//! - The value in the `cannot be both set` message is the spec as JSON (kube prints the
//!   Go struct).

use kapi_core::__private::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::policy::v1::PodDisruptionBudget;

/// The hooks of PodDisruptionBudget.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodDisruptionBudgetHooks;

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`.
fn int_or_percent_errors(v: &IntOrString, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    match v {
        IntOrString::Int(n) => {
            if *n < 0 {
                errs.push(FieldError::invalid(
                    path,
                    *n,
                    "must be greater than or equal to 0",
                ));
            }
        }
        IntOrString::String(s) => {
            let pct = s
                .strip_suffix('%')
                .filter(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()));
            match pct {
                None => errs.push(FieldError::invalid(
                    path,
                    s.as_str(),
                    "a valid percent string must be a numeric string followed by an ending '%' \
                     (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                )),
                Some(d) => {
                    if d.parse::<u64>().map_or(true, |n| n > 100) {
                        errs.push(FieldError::invalid(
                            path,
                            s.as_str(),
                            "must not be greater than 100%",
                        ));
                    }
                }
            }
        }
    }
    errs
}

fn validate_pdb(pdb: &PodDisruptionBudget) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(spec) = &pdb.spec else {
        return errs;
    };
    let path = FieldPath::new("spec");
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        errs.push(FieldError::invalid(
            &path,
            serde_json::to_value(spec).unwrap_or(Value::Null),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    if let Some(v) = &spec.min_available {
        errs.extend(int_or_percent_errors(v, &path.child("minAvailable")));
    }
    if let Some(v) = &spec.max_unavailable {
        errs.extend(int_or_percent_errors(v, &path.child("maxUnavailable")));
    }
    if let Some(p) = spec.unhealthy_pod_eviction_policy.as_deref() {
        if p != "AlwaysAllow" && p != "IfHealthyBudget" {
            errs.push(FieldError::not_supported(
                &path.child("unhealthyPodEvictionPolicy"),
                p,
                &[Value::from("AlwaysAllow"), Value::from("IfHealthyBudget")],
            ));
        }
    }
    errs
}

fn int_or_string_cell(v: Option<&IntOrString>) -> String {
    match v {
        None => "N/A".into(),
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
    }
}

impl Hooks<PodDisruptionBudget> for PodDisruptionBudgetHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn validate(&self, pdb: &PodDisruptionBudget) -> ErrorList {
        validate_pdb(pdb)
    }
    fn validate_update(&self, new: &PodDisruptionBudget, _old: &PodDisruptionBudget) -> ErrorList {
        validate_pdb(new)
    }
    fn table_cell(&self, column: &str, pdb: &PodDisruptionBudget) -> Option<Value> {
        let spec = pdb.spec.as_ref();
        match column {
            "Min Available" => Some(Value::String(int_or_string_cell(
                spec.and_then(|s| s.min_available.as_ref()),
            ))),
            "Max Unavailable" => Some(Value::String(int_or_string_cell(
                spec.and_then(|s| s.max_unavailable.as_ref()),
            ))),
            "Allowed Disruptions" => Some(Value::from(
                pdb.status.as_ref().map_or(0, |s| s.disruptions_allowed),
            )),
            _ => None,
        }
    }
}
