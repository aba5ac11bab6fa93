//! LimitRanges, ResourceQuotas and PodDisruptionBudgets, as kube-apiserver's
//! strategies, validation and printers treat them.
//!
//! - LimitRange: no generation; each limit needs a type (`Pod`, `Container`,
//!   `PersistentVolumeClaim`, or a qualified extended type).
//! - ResourceQuota: no generation; status cleared on create (as kube's strategy does;
//!   kapi's generic preparation does it for every status subresource); hard limits may
//!   not be negative; the Request and Limit columns list `name: used/hard` from the
//!   status, as kube prints them.
//! - PodDisruptionBudget: generation tracked; `minAvailable` and `maxUnavailable` are
//!   exclusive, each an integer of at least 0 or a percentage up to 100%; columns show
//!   `N/A` for an unset bound.
//!
//! Deliberate differences from kube-apiserver:
//! - The value in the PodDisruptionBudget `cannot be both set` message is the spec as
//!   JSON (kube prints the Go struct).
//! - LimitRange min/max/default consistency and quota scopes are not validated.
//! - Quantities in the ResourceQuota columns are printed as stored, not canonicalised.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kapi_core::meta::qualified_name_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::untracked_generation;
use crate::generated::core::v1::{LimitRange, ResourceQuota};
use crate::generated::policy::v1::PodDisruptionBudget;

/// The hooks of LimitRange.
#[derive(Clone, Copy, Debug, Default)]
pub struct LimitRangeHooks;

impl Hooks<LimitRange> for LimitRangeHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn prepare_for_create(&self, lr: &mut LimitRange) {
        untracked_generation(&mut lr.metadata);
    }
    fn prepare_for_update(&self, new: &mut LimitRange, _old: &LimitRange) {
        untracked_generation(&mut new.metadata);
    }
    fn validate(&self, lr: &LimitRange) -> ErrorList {
        let mut errs = ErrorList::new();
        for (i, item) in lr.spec.iter().flat_map(|s| &s.limits).enumerate() {
            let path = FieldPath::new("spec.limits").index(i).child("type");
            let t = item.r#type.as_str();
            if t.is_empty() {
                errs.push(FieldError::required(&path, ""));
            } else if !["Pod", "Container", "PersistentVolumeClaim"].contains(&t) {
                for msg in qualified_name_errors(t) {
                    errs.push(FieldError::invalid(&path, t, msg));
                }
            }
        }
        errs
    }
}

/// The hooks of ResourceQuota.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceQuotaHooks;

impl Hooks<ResourceQuota> for ResourceQuotaHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn prepare_for_create(&self, rq: &mut ResourceQuota) {
        untracked_generation(&mut rq.metadata);
        rq.status = None;
    }
    fn prepare_for_update(&self, new: &mut ResourceQuota, _old: &ResourceQuota) {
        untracked_generation(&mut new.metadata);
    }
    fn validate(&self, rq: &ResourceQuota) -> ErrorList {
        let mut errs = ErrorList::new();
        for (k, q) in rq.spec.iter().flat_map(|s| s.hard.iter().flatten()) {
            if q.0.trim_start().starts_with('-') {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec.hard").key(k),
                    q.0.as_str(),
                    "must be greater than or equal to 0",
                ));
            }
        }
        errs
    }
    fn table_cell(&self, column: &str, rq: &ResourceQuota) -> Option<Value> {
        if column != "Request" && column != "Limit" {
            return None;
        }
        let status = rq.status.clone().unwrap_or_default();
        let used = status.used.unwrap_or_default();
        let pieces: Vec<String> = status
            .hard
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| (column == "Limit") == k.starts_with("limits."))
            .map(|(k, hard)| {
                let used = used.get(&k).map_or("0", |q| q.0.as_str());
                format!("{k}: {used}/{}", hard.0)
            })
            .collect();
        Some(Value::String(pieces.join(", ")))
    }
}

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
