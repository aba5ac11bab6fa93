//! The Pod subresources that write part of a Pod: `pods/ephemeralcontainers` and
//! `pods/resize`, as kube-apiserver 1.35's `podEphemeralContainersStrategy` and
//! `podResizeStrategy` (`pkg/registry/core/pod/strategy.go`) and
//! `ValidatePodEphemeralContainersUpdate` and `ValidatePodResize`
//! (`pkg/apis/core/validation/validation.go`) treat them.
//!
//! Both take the whole Pod and answer it. `ephemeralcontainers` keeps only
//! `spec.ephemeralContainers` from the request, `resize` only the containers' and init
//! containers' `resources` and `resizePolicy`; the rest, metadata and status included,
//! stays as stored, and `metadata.generation` is bumped when the spec changed.
//!
//! Their validation replaces the Pod's update validation
//! (`Hooks::subresource_replaces_update_validation`), whose `ValidatePodUpdate` rules
//! would refuse exactly what the subresources exist to change, as kube's subresource
//! strategies replace it; the pod spec checks still run.
//!
//! Deliberate differences from kube-apiserver:
//! - `existing ephemeral containers "x" may not be changed` ends there: kube appends a
//!   Go `cmp.Diff` of its internal types.
//! - A resize that adds or removes containers is refused as `spec: Forbidden: only cpu
//!   and memory resources are mutable` (kube's validation indexes past the end of the
//!   list and answers a 500).
//! - Resources are compared as written (`1Gi` and `1024Mi` differ), where kube compares
//!   quantities by value, except for the QoS class and the memory-limit decrease.
//! - `status.resize` and the resize conditions are the kubelet's, and kapi runs none:
//!   a resize changes the spec only.

use std::collections::{BTreeMap, HashSet};

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kapi_core::{ErrorList, FieldError, FieldPath};

use crate::generated::api::core::v1::{Container, EphemeralContainer, PodSpec};
use crate::generated::core::v1::Pod;
use crate::hooks::strings;

use super::pod_defaults::{default_ephemeral_containers, default_pod};
use super::qos::{qos_class, quantity_value};

/// The subresource that adds ephemeral containers.
pub const EPHEMERAL_CONTAINERS: &str = "ephemeralcontainers";
/// The subresource that resizes containers in place.
pub const RESIZE: &str = "resize";

/// kube's annotation of a static (mirror) pod.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// kube's words for a field an ephemeral container may not have.
const NOT_FOR_EPHEMERAL: &str = "cannot be set for an Ephemeral Container";

/// kube's words for a resize that changes more than cpu and memory.
const ONLY_CPU_MEMORY: &str = "only cpu and memory resources are mutable";

/// `Hooks::update_subresource` for Pods: keeps from `new` what `sub` may change and
/// takes the rest from `old`. False for a subresource Pods do not have.
pub fn prepare(sub: &str, new: &mut Pod, old: &Pod) -> bool {
    match sub {
        EPHEMERAL_CONTAINERS => {
            let ephemeral = new
                .spec
                .as_mut()
                .and_then(|s| s.ephemeral_containers.take());
            *new = old.clone();
            if let Some(spec) = new.spec.as_mut() {
                spec.ephemeral_containers = ephemeral;
                // Defaulted as kube decodes the request (SetDefaults_EphemeralContainer).
                default_ephemeral_containers(spec);
            }
        }
        RESIZE => {
            // Requests default to limits, as kube decodes the request (SetDefaults_Pod).
            default_pod(new);
            prepare_resize(new, old);
        }
        _ => return false,
    }
    // updatePodGeneration: a spec change is a new generation.
    new.metadata.generation = old.metadata.generation;
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(1) + 1);
    }
    true
}

/// Whether `sub` is one of these subresources, whose validation replaces the update's.
pub fn is_partial_write(sub: &str) -> bool {
    matches!(sub, EPHEMERAL_CONTAINERS | RESIZE)
}

/// `dropNonResizeUpdates`: the containers' and init containers' `resources` and
/// `resizePolicy` from `new`, the rest from `old`. Containers added, removed, reordered
/// or renamed are kept as sent, for validation to refuse.
fn prepare_resize(new: &mut Pod, old: &Pod) {
    // A request without a spec resizes nothing.
    let new_spec = new.spec.take();
    *new = old.clone();
    let Some(new_spec) = new_spec else {
        return;
    };
    let Some(spec) = new.spec.as_mut() else {
        return;
    };
    spec.containers = merge_resources(&new_spec.containers, &spec.containers);
    let old_init = spec.init_containers.clone().unwrap_or_default();
    let new_init = new_spec.init_containers.clone().unwrap_or_default();
    if new_spec.containers.len() != old.spec.as_ref().map_or(0, |s| s.containers.len())
        || new_init.len() != old_init.len()
    {
        *spec = new_spec;
        return;
    }
    if !new_init.is_empty() {
        spec.init_containers = Some(merge_resources(&new_init, &old_init));
    }
}

/// `dropNonResizeUpdatesForContainers`.
fn merge_resources(new: &[Container], old: &[Container]) -> Vec<Container> {
    if new.len() != old.len() || new.iter().zip(old).any(|(n, o)| n.name != o.name) {
        return new.to_vec();
    }
    new.iter()
        .zip(old)
        .map(|(n, o)| Container {
            resources: n.resources.clone(),
            resize_policy: n.resize_policy.clone(),
            ..o.clone()
        })
        .collect()
}

/// `Hooks::validate_subresource_update` for Pods.
pub fn validate(sub: &str, new: &Pod, old: &Pod) -> ErrorList {
    match sub {
        EPHEMERAL_CONTAINERS => validate_ephemeral_update(new, old),
        RESIZE => validate_resize(new, old),
        _ => ErrorList::new(),
    }
}

fn is_mirror(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION))
}

fn ephemeral_of(pod: &Pod) -> &[EphemeralContainer] {
    pod.spec
        .as_ref()
        .and_then(|s| s.ephemeral_containers.as_deref())
        .unwrap_or(&[])
}

/// Part 2 of `ValidatePodEphemeralContainersUpdate`: existing ephemeral containers stay
/// as they are (matched by name, as a patch may reorder them).
fn validate_ephemeral_update(new: &Pod, old: &Pod) -> ErrorList {
    if is_mirror(old) {
        return vec![FieldError::forbidden(
            &FieldPath::root(),
            "static pods do not support ephemeral containers",
        )];
    }
    let path = FieldPath::new("spec.ephemeralContainers");
    let by_name: BTreeMap<&str, &EphemeralContainer> = ephemeral_of(new)
        .iter()
        .map(|c| (c.name.as_str(), c))
        .collect();
    let mut errs = ErrorList::new();
    for o in ephemeral_of(old) {
        match by_name.get(o.name.as_str()) {
            None => errs.push(FieldError::forbidden(
                &path,
                format!(
                    "existing ephemeral containers {:?} may not be removed\n",
                    o.name
                ),
            )),
            Some(n) if *n != o => errs.push(FieldError::forbidden(
                &path,
                format!(
                    "existing ephemeral containers {:?} may not be changed",
                    o.name
                ),
            )),
            Some(_) => {}
        }
    }
    errs
}

/// `validateEphemeralContainers`, the part of `ValidatePodSpec` for ephemeral
/// containers: names unique across all containers, images, a target among the other
/// containers, and none of the fields an ephemeral container may not have.
pub fn validate_ephemeral_containers(spec: &PodSpec, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let ephemeral = spec.ephemeral_containers.as_deref().unwrap_or(&[]);
    let others: HashSet<&str> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .map(|c| c.name.as_str())
        .collect();
    let mut all = others.clone();
    let list = path.child("ephemeralContainers");
    for (i, c) in ephemeral.iter().enumerate() {
        let at = list.index(i);
        let name_path = at.child("name");
        super::pod_spec::container_name_errors(&c.name, &name_path, &mut errs);
        if c.image.as_deref().unwrap_or("").is_empty() {
            errs.push(FieldError::required(&at.child("image"), ""));
        }
        check_policy(
            &mut errs,
            &at.child("terminationMessagePolicy"),
            c.termination_message_policy.as_deref(),
            &["File", "FallbackToLogsOnError"],
        );
        check_policy(
            &mut errs,
            &at.child("imagePullPolicy"),
            c.image_pull_policy.as_deref(),
            &["Always", "IfNotPresent", "Never"],
        );
        if !all.insert(c.name.as_str()) {
            errs.push(FieldError::duplicate(&name_path, c.name.as_str()));
        }
        if let Some(target) = c.target_container_name.as_deref() {
            if !target.is_empty() && !others.contains(target) {
                errs.push(FieldError::not_found(
                    &at.child("targetContainerName"),
                    target,
                ));
            }
        }
        // validateFieldAllowList, in the Go struct's field order.
        let resources_set = c
            .resources
            .as_ref()
            .is_some_and(|r| r.claims.is_some() || r.limits.is_some() || r.requests.is_some());
        let forbidden = [
            ("ports", c.ports.is_some()),
            ("resources", resources_set),
            ("resizePolicy", c.resize_policy.is_some()),
            ("restartPolicy", c.restart_policy.is_some()),
            ("restartPolicyRules", c.restart_policy_rules.is_some()),
            ("livenessProbe", c.liveness_probe.is_some()),
            ("readinessProbe", c.readiness_probe.is_some()),
            ("startupProbe", c.startup_probe.is_some()),
            ("lifecycle", c.lifecycle.is_some()),
        ];
        for (field, set) in forbidden {
            if set {
                errs.push(FieldError::forbidden(&at.child(field), NOT_FOR_EPHEMERAL));
            }
        }
        for (j, m) in c.volume_mounts.iter().flatten().enumerate() {
            let mount = at.child("volumeMounts").index(j);
            for (field, value) in [("subPath", &m.sub_path), ("subPathExpr", &m.sub_path_expr)] {
                if value.as_deref().is_some_and(|v| !v.is_empty()) {
                    errs.push(FieldError::forbidden(
                        &mount.child(field),
                        NOT_FOR_EPHEMERAL,
                    ));
                }
            }
        }
    }
    errs
}

/// A policy field: required, and one of `allowed`.
fn check_policy(errs: &mut ErrorList, path: &FieldPath, value: Option<&str>, allowed: &[&str]) {
    match value.unwrap_or("") {
        "" => errs.push(FieldError::required(path, "")),
        v if !allowed.contains(&v) => {
            errs.push(FieldError::not_supported(path, v, &strings(allowed)));
        }
        _ => {}
    }
}

fn resource_list_set(r: Option<&BTreeMap<String, Quantity>>) -> bool {
    r.is_some_and(|m| !m.is_empty())
}

/// `ValidatePodResize`, after the pod spec checks `validate_update` made.
fn validate_resize(new: &Pod, old: &Pod) -> ErrorList {
    let (Some(new_spec), Some(old_spec)) = (new.spec.as_ref(), old.spec.as_ref()) else {
        return ErrorList::new();
    };
    let root = FieldPath::root();
    let pod_level = |s: &PodSpec| {
        s.resources.as_ref().is_some_and(|r| {
            resource_list_set(r.requests.as_ref()) || resource_list_set(r.limits.as_ref())
        })
    };
    if pod_level(old_spec) || pod_level(new_spec) {
        let msg = "pods with pod-level resources cannot be resized";
        return vec![FieldError::forbidden(&root, msg)];
    }
    if is_mirror(old) {
        return vec![FieldError::forbidden(
            &root,
            "static pods cannot be resized",
        )];
    }
    if old_spec.os.as_ref().is_some_and(|os| os.name == "windows") {
        return vec![FieldError::forbidden(
            &root,
            "windows pods cannot be resized",
        )];
    }
    let spec_path = FieldPath::new("spec");
    let mut errs = ErrorList::new();
    // GetPodQOS(old) is the class stored at create; the value kube prints is the new
    // pod's status class, which is the old one.
    let stored_qos = old.status.as_ref().and_then(|s| s.qos_class.clone());
    let old_qos = stored_qos
        .clone()
        .filter(|q| !q.is_empty())
        .unwrap_or_else(|| qos_class(old_spec).to_string());
    if old_qos != qos_class(new_spec) {
        errs.push(FieldError::invalid(
            &spec_path,
            stored_qos.unwrap_or_default(),
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    if !resize_supported(old) {
        errs.push(FieldError::forbidden(
            &spec_path,
            "Pod running on node without support for resize",
        ));
    }
    let old_init = old_spec.init_containers.as_deref().unwrap_or(&[]);
    let new_init = new_spec.init_containers.as_deref().unwrap_or(&[]);
    if new_spec.containers.len() != old_spec.containers.len() || new_init.len() != old_init.len() {
        errs.push(FieldError::forbidden(&spec_path, ONLY_CPU_MEMORY));
        return errs;
    }
    for (i, (n, o)) in new_init.iter().zip(old_init).enumerate() {
        if sidecar(o) {
            let at = spec_path
                .child("initContainers")
                .index(i)
                .child("resources");
            errs.extend(validate_container_resize(n, o, &at));
        }
    }
    for (i, (n, o)) in new_spec
        .containers
        .iter()
        .zip(&old_spec.containers)
        .enumerate()
    {
        let at = spec_path.child("containers").index(i).child("resources");
        errs.extend(validate_container_resize(n, o, &at));
    }
    let mut munged = new_spec.clone();
    for (n, o) in munged.containers.iter_mut().zip(&old_spec.containers) {
        keep_old_cpu_memory(n, o);
        if n != o {
            errs.push(FieldError::forbidden(&spec_path, ONLY_CPU_MEMORY));
        }
    }
    for (n, o) in munged.init_containers.iter_mut().flatten().zip(old_init) {
        if sidecar(n) {
            keep_old_cpu_memory(n, o);
            if n != o {
                let msg = "only cpu and memory resources for sidecar containers are mutable";
                errs.push(FieldError::forbidden(&spec_path, msg));
            }
        } else if n != o {
            let msg = "resources for non-sidecar init containers are immutable";
            errs.push(FieldError::forbidden(&spec_path, msg));
        }
    }
    if errs.is_empty() && &munged != old_spec {
        errs.push(FieldError::forbidden(&spec_path, ONLY_CPU_MEMORY));
    }
    errs
}

/// A restartable init container (`restartPolicy: Always`).
fn sidecar(c: &Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

/// `isPodResizeRequestSupported`: the first running container reports its resources
/// (a kubelet that can resize does); a pod with none running is assumed to.
fn resize_supported(pod: &Pod) -> bool {
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref());
    statuses
        .unwrap_or(&[])
        .iter()
        .find(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
        .is_none_or(|c| c.resources.is_some())
}

fn requests(c: &Container) -> Option<&BTreeMap<String, Quantity>> {
    c.resources.as_ref().and_then(|r| r.requests.as_ref())
}

fn limits(c: &Container) -> Option<&BTreeMap<String, Quantity>> {
    c.resources.as_ref().and_then(|r| r.limits.as_ref())
}

/// `validateContainerResize`: no request or limit removed, and no memory limit lowered
/// or added unless memory's resize policy restarts the container.
fn validate_container_resize(new: &Container, old: &Container, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let removed = |n: Option<&BTreeMap<String, Quantity>>,
                   o: Option<&BTreeMap<String, Quantity>>| {
        o.into_iter()
            .flatten()
            .any(|(k, _)| !n.is_some_and(|n| n.contains_key(k)))
    };
    if removed(requests(new), requests(old)) {
        let msg = "resource requests cannot be removed";
        errs.push(FieldError::forbidden(&path.child("requests"), msg));
    }
    if removed(limits(new), limits(old)) {
        let msg = "resource limits cannot be removed";
        errs.push(FieldError::forbidden(&path.child("limits"), msg));
    }
    let memory_policy = new
        .resize_policy
        .iter()
        .flatten()
        .find(|p| p.resource_name == "memory")
        .map_or("", |p| p.restart_policy.as_str());
    if memory_policy == "NotRequired" || memory_policy.is_empty() {
        let at = path.child("limits").key("memory");
        let new_limit = limits(new).and_then(|l| l.get("memory"));
        let old_limit = limits(old).and_then(|l| l.get("memory"));
        match (new_limit, old_limit) {
            (Some(n), Some(o)) if quantity_value(n) < quantity_value(o) => {
                let msg =
                    "memory limits cannot be decreased unless resizePolicy is RestartContainer";
                errs.push(FieldError::forbidden(&at, msg));
            }
            (Some(_), None) => {
                let msg = "memory limits cannot be added unless resizePolicy is RestartContainer";
                errs.push(FieldError::forbidden(&at, msg));
            }
            _ => {}
        }
    }
    errs
}

/// `dropCPUMemoryResourcesFromContainer`: the container's cpu and memory requests and
/// limits as `old` has them, its other resources as sent (and no claims).
fn keep_old_cpu_memory(c: &mut Container, old: &Container) {
    let munge = |new: Option<&BTreeMap<String, Quantity>>,
                 old: Option<&BTreeMap<String, Quantity>>| {
        let old = old?;
        let mut list = new.cloned().unwrap_or_default();
        for name in ["cpu", "memory"] {
            list.remove(name);
            if let Some(q) = old.get(name) {
                list.insert(name.to_string(), q.clone());
            }
        }
        Some(list)
    };
    let new_limits = munge(limits(c), limits(old));
    let new_requests = munge(requests(c), requests(old));
    let resources = c.resources.get_or_insert_with(Default::default);
    resources.limits = new_limits;
    resources.requests = new_requests;
    resources.claims = None;
    // Go's zero ResourceRequirements and a missing one are the same.
    if old.resources.is_none()
        && c.resources
            .as_ref()
            .is_some_and(|r| *r == Default::default())
    {
        c.resources = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(uid: &str, rv: &str) -> Pod {
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "uid": uid, "resourceVersion": rv, "generation": 1},
            "spec": {"containers": [{"name": "app", "image": "nginx",
                "resources": {"requests": {"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"}}}]}}))
        .expect("a pod")
    }

    #[test]
    fn only_these_subresources_are_prepared_and_replace_update_validation() {
        let old = pod("u", "5");
        let mut new = old.clone();
        for sub in [RESIZE, EPHEMERAL_CONTAINERS] {
            assert!(prepare(sub, &mut new, &old), "{sub}");
            assert!(is_partial_write(sub), "{sub}");
        }
        assert!(!prepare("status", &mut new, &old));
        assert!(!is_partial_write("binding"));
    }

    #[test]
    fn cpu_and_memory_come_from_the_old_container() {
        let old = pod("u", "5").spec.unwrap().containers.remove(0);
        let mut c = old.clone();
        let requests = c.resources.as_mut().unwrap().requests.as_mut().unwrap();
        requests.insert("cpu".into(), Quantity("2".into()));
        requests.remove("memory");
        keep_old_cpu_memory(&mut c, &old);
        assert_eq!(c, old);
        requests_of(&mut c).insert("example.com/gpu".into(), Quantity("2".into()));
        keep_old_cpu_memory(&mut c, &old);
        assert_ne!(c, old);
    }

    fn requests_of(c: &mut Container) -> &mut BTreeMap<String, Quantity> {
        c.resources.as_mut().unwrap().requests.as_mut().unwrap()
    }
}
