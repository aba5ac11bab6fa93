//! Pods, as kube-apiserver's pod strategy treats them.
//!
//! A Pod is defaulted as `SetDefaults_Pod` and `SetDefaults_PodSpec` do (requests
//! default to limits; `enableServiceLinks: true`), starts `Pending` with its QoS class,
//! tracks `metadata.generation` as kube 1.33 does (1 on create, bumped when the spec
//! changes), and may change after create only in what `ValidatePodUpdate` allows.
//!
//! Deliberate differences from kube-apiserver:
//! - The update error `spec: Forbidden: pod updates may not change fields other
//!   than ...` ends after the list of fields: kube appends a Go `cmp.Diff` of its
//!   internal types, which has no equivalent here.
//! - `spec.nodeSelector` and `spec.affinity` additions on scheduling-gated pods are not
//!   allowed (kube allows them behind feature gates); `spec.schedulingGates` may only
//!   shrink, as in kube. Ephemeral containers and in-place resize go through the
//!   `ephemeralcontainers` and `resize` subresources ([`super::pod_subresources`]).
//! - Of kube's admission plugins, only ServiceAccount runs (`serviceAccountName` and
//!   the token volume, [`crate::admission::service_account`]): `priority` and the
//!   default tolerations are not added.
//! - The RESTARTS cell is the bare count, without kube's ` (5m ago)` suffix.
//! - The QoS class compares quantities numerically after parsing their suffixes; pod-
//!   level resources are ignored.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::core::v1::{PodSpec, PodStatus};
use crate::generated::core::v1::Pod;

use super::pod_defaults::default_pod;
use super::pod_spec::validate_pod_spec;
use super::pod_subresources;
use super::qos::qos_class;

/// kube's message for a pod update that changes more than it may.
pub const POD_UPDATE_FORBIDDEN: &str = "pod updates may not change fields other than \
    `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,\
    `spec.tolerations` (only additions to existing tolerations),\
    `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// The hooks of Pod.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodHooks;

/// `validateOnlyAddedTolerations`: every old toleration is still there (its
/// `tolerationSeconds` may change).
fn tolerations_only_added(new: &PodSpec, old: &PodSpec) -> bool {
    let new_list = new.tolerations.as_deref().unwrap_or(&[]);
    old.tolerations.iter().flatten().all(|o| {
        new_list.iter().any(|n| {
            let mut o = o.clone();
            o.toleration_seconds = n.toleration_seconds;
            &o == n
        })
    })
}

/// `ValidatePodUpdate`'s rules for the spec.
fn validate_spec_update(new: &PodSpec, old: &PodSpec) -> ErrorList {
    let spec = FieldPath::new("spec");
    let mut errs = ErrorList::new();
    let deadline = spec.child("activeDeadlineSeconds");
    match (new.active_deadline_seconds, old.active_deadline_seconds) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            errs.push(FieldError::invalid(
                &deadline,
                n,
                format!("must be between 0 and {}, inclusive", i32::MAX),
            ));
            return errs;
        }
        (Some(n), Some(o)) if o < n => {
            errs.push(FieldError::invalid(
                &deadline,
                n,
                "must be less than or equal to previous value",
            ));
            return errs;
        }
        (None, Some(_)) => errs.push(FieldError::invalid(
            &deadline,
            Value::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    if new.containers.len() != old.containers.len() {
        errs.push(FieldError::forbidden(
            &spec.child("containers"),
            "pod updates may not add or remove containers",
        ));
        return errs;
    }
    let new_init = new.init_containers.as_deref().unwrap_or(&[]);
    let old_init = old.init_containers.as_deref().unwrap_or(&[]);
    if new_init.len() != old_init.len() {
        errs.push(FieldError::forbidden(
            &spec.child("initContainers"),
            "pod updates may not add or remove containers",
        ));
        return errs;
    }
    // Munge what may change into the old values, then compare what is left.
    let mut munged = new.clone();
    for (n, o) in munged.containers.iter_mut().zip(&old.containers) {
        n.image = o.image.clone();
    }
    for (n, o) in munged.init_containers.iter_mut().flatten().zip(old_init) {
        n.image = o.image.clone();
    }
    munged.active_deadline_seconds = old.active_deadline_seconds;
    if tolerations_only_added(new, old) {
        munged.tolerations = old.tolerations.clone();
    } else {
        errs.push(FieldError::forbidden(
            &spec.child("tolerations"),
            "existing toleration can not be modified except its tolerationSeconds",
        ));
    }
    if old.termination_grace_period_seconds.is_some_and(|s| s < 0)
        && new.termination_grace_period_seconds == Some(1)
    {
        munged.termination_grace_period_seconds = old.termination_grace_period_seconds;
    }
    let old_gates = old.scheduling_gates.as_deref().unwrap_or(&[]);
    let new_gates = munged.scheduling_gates.as_deref().unwrap_or(&[]);
    if new_gates.iter().all(|g| old_gates.contains(g)) {
        munged.scheduling_gates = old.scheduling_gates.clone();
    } else {
        errs.push(FieldError::forbidden(
            &spec.child("schedulingGates"),
            "only deletion is allowed, but found new scheduling gate",
        ));
    }
    if &munged != old {
        errs.push(FieldError::forbidden(&spec, POD_UPDATE_FORBIDDEN));
    }
    errs
}

/// The pod spec checks of `validatePodMetadataAndSpec`, ephemeral containers included.
fn validate_pod(pod: &Pod) -> ErrorList {
    let path = FieldPath::new("spec");
    match pod.spec.as_ref() {
        Some(spec) => {
            let mut errs = validate_pod_spec(spec, &path);
            errs.extend(pod_subresources::validate_ephemeral_containers(spec, &path));
            errs
        }
        None => vec![FieldError::required(&path, "")],
    }
}

impl Hooks<Pod> for PodHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// `pods/binding` (see [`super::pod_binding`]).
    fn create_on_subresource(
        &self,
        sub: &str,
        body: &serde_json::Value,
        pod: &mut Pod,
    ) -> Result<(), kapi_core::SubresourceError> {
        match sub {
            "binding" => super::pod_binding::bind(body, pod),
            _ => Err(kapi_core::SubresourceError::NotFound),
        }
    }

    fn apply_defaults(&self, pod: &mut Pod) {
        default_pod(pod);
    }

    fn prepare_for_create(&self, pod: &mut Pod) {
        let qos = pod.spec.as_ref().map(qos_class);
        pod.status = Some(PodStatus {
            phase: Some("Pending".into()),
            qos_class: qos.map(str::to_string),
            ..PodStatus::default()
        });
    }

    /// `pods/ephemeralcontainers` and `pods/resize` (see [`super::pod_subresources`]).
    fn update_subresource(&self, sub: &str, new: &mut Pod, old: &Pod) -> bool {
        pod_subresources::prepare(sub, new, old)
    }

    fn subresource_replaces_update_validation(&self, sub: &str) -> bool {
        pod_subresources::is_partial_write(sub)
    }

    fn validate_subresource_update(&self, sub: &str, new: &Pod, old: &Pod) -> ErrorList {
        // The pod spec checks, then the subresource's own in place of ValidatePodUpdate.
        let mut errs = validate_pod(new);
        errs.extend(pod_subresources::validate(sub, new, old));
        errs
    }

    fn validate(&self, pod: &Pod) -> ErrorList {
        let mut errs = validate_pod(pod);
        // Ephemeral containers are added through their subresource only.
        let ephemeral = pod
            .spec
            .as_ref()
            .and_then(|s| s.ephemeral_containers.as_ref());
        if ephemeral.is_some_and(|e| !e.is_empty()) {
            errs.push(FieldError::forbidden(
                &FieldPath::new("spec.ephemeralContainers"),
                "cannot be set on create",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Pod, old: &Pod) -> ErrorList {
        let mut errs = validate_pod(new);
        if let (Some(n), Some(o)) = (new.spec.as_ref(), old.spec.as_ref()) {
            errs.extend(validate_spec_update(n, o));
        }
        errs
    }

    fn table_cell(&self, column: &str, pod: &Pod) -> Option<Value> {
        let v = serde_json::to_value(pod).ok()?;
        match column {
            "Ready" | "Status" | "Restarts" => {
                let (ready, status, restarts) = pod_summary(&v);
                Some(Value::from(match column {
                    "Ready" => ready,
                    "Status" => status,
                    _ => restarts,
                }))
            }
            "IP" => Some(Value::from(or_none(
                v.pointer("/status/podIPs/0/ip")
                    .or(v.pointer("/status/podIP")),
            ))),
            "Node" => Some(Value::from(or_none(v.pointer("/spec/nodeName")))),
            "Nominated Node" => Some(Value::from(or_none(v.pointer("/status/nominatedNodeName")))),
            "Readiness Gates" => Some(Value::from(readiness_gates(&v))),
            _ => None,
        }
    }
}

/// A string field, or `<none>` when it is missing or empty.
fn or_none(v: Option<&Value>) -> String {
    match v.and_then(Value::as_str) {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => "<none>".into(),
    }
}

fn list<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn int_at(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// Whether an init container is a sidecar (`restartPolicy: Always`).
fn restartable(init: &[Value], name: &str) -> bool {
    init.iter()
        .any(|c| str_at(c, "/name") == name && str_at(c, "/restartPolicy") == "Always")
}

/// kube's `printPod`: the READY, STATUS and RESTARTS cells. RESTARTS is the bare count:
/// kube's ` (5m ago)` suffix after the last restart is left out.
fn pod_summary(pod: &Value) -> (String, String, String) {
    let containers = list(pod, "/spec/containers");
    let init = list(pod, "/spec/initContainers");
    let sidecars = init
        .iter()
        .filter(|c| str_at(c, "/restartPolicy") == "Always")
        .count();
    let total = containers.len() + sidecars;
    let mut ready = 0;
    let mut restarts = 0;
    let mut sidecar_restarts = 0;
    let mut reason = str_at(pod, "/status/phase").to_string();
    let status_reason = str_at(pod, "/status/reason");
    if !status_reason.is_empty() {
        reason = status_reason.to_string();
    }
    for c in list(pod, "/status/conditions") {
        if str_at(c, "/type") == "PodScheduled" && str_at(c, "/reason") == "SchedulingGated" {
            reason = "SchedulingGated".into();
        }
    }
    let mut initializing = false;
    let init_statuses = list(pod, "/status/initContainerStatuses");
    for (i, c) in init_statuses.iter().enumerate() {
        let count = int_at(c, "/restartCount");
        restarts += count;
        let name = str_at(c, "/name");
        let sidecar = restartable(init, name);
        if sidecar {
            sidecar_restarts += count;
        }
        let terminated = c.pointer("/state/terminated");
        let waiting_reason = str_at(c, "/state/waiting/reason");
        if terminated.is_some() && int_at(c, "/state/terminated/exitCode") == 0 {
            continue;
        }
        if sidecar && c.get("started").and_then(Value::as_bool) == Some(true) {
            if c.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        if terminated.is_some() {
            let r = str_at(c, "/state/terminated/reason");
            reason = if !r.is_empty() {
                format!("Init:{r}")
            } else if int_at(c, "/state/terminated/signal") != 0 {
                format!("Init:Signal:{}", int_at(c, "/state/terminated/signal"))
            } else {
                format!("Init:ExitCode:{}", int_at(c, "/state/terminated/exitCode"))
            };
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            reason = format!("Init:{waiting_reason}");
        } else {
            reason = format!("Init:{i}/{}", init.len());
        }
        initializing = true;
        break;
    }
    let initialized = list(pod, "/status/conditions")
        .iter()
        .any(|c| str_at(c, "/type") == "Initialized" && str_at(c, "/status") == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        let mut has_running = false;
        for c in list(pod, "/status/containerStatuses").iter().rev() {
            restarts += int_at(c, "/restartCount");
            let waiting = str_at(c, "/state/waiting/reason");
            let terminated = c.pointer("/state/terminated");
            let terminated_reason = str_at(c, "/state/terminated/reason");
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if terminated.is_some() && !terminated_reason.is_empty() {
                reason = terminated_reason.to_string();
            } else if terminated.is_some() {
                let signal = int_at(c, "/state/terminated/signal");
                reason = if signal != 0 {
                    format!("Signal:{signal}")
                } else {
                    format!("ExitCode:{}", int_at(c, "/state/terminated/exitCode"))
                };
            } else if c.get("ready").and_then(Value::as_bool) == Some(true)
                && c.pointer("/state/running").is_some()
            {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = list(pod, "/status/conditions")
                .iter()
                .any(|c| str_at(c, "/type") == "Ready" && str_at(c, "/status") == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.into();
        }
    }
    let phase = str_at(pod, "/status/phase");
    if kapi_apiserver::registry::object::meta(pod, "deletionTimestamp").is_some() {
        if status_reason == "NodeLost" {
            reason = "Unknown".into();
        } else if phase != "Succeeded" && phase != "Failed" {
            reason = "Terminating".into();
        }
    }
    (format!("{ready}/{total}"), reason, restarts.to_string())
}

/// The READINESS GATES cell: `true/total`, or `<none>`.
fn readiness_gates(pod: &Value) -> String {
    let gates = list(pod, "/spec/readinessGates");
    if gates.is_empty() {
        return "<none>".into();
    }
    let conditions = list(pod, "/status/conditions");
    let ok = gates
        .iter()
        .filter(|g| {
            let t = str_at(g, "/conditionType");
            conditions
                .iter()
                .find(|c| str_at(c, "/type") == t)
                .is_some_and(|c| str_at(c, "/status") == "True")
        })
        .count();
    format!("{ok}/{}", gates.len())
}
