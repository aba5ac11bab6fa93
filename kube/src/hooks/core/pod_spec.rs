//! What every pod-shaped object shares: the `core/v1` defaults of a PodSpec (Go's
//! `SetDefaults_PodSpec`, `SetDefaults_Container`, `SetDefaults_Probe`, ...), the
//! checks `ValidatePodSpec` makes that the schema cannot, the checks workload
//! controllers make of their templates, and the Table cells they share.
//!
//! Deliberate differences from kube-apiserver:
//! - Only part of `ValidatePodSpec` is here: containers (present, names required,
//!   DNS labels, unique across `containers` and `initContainers`, images required, pull
//!   and termination-message policies) and the pod's `restartPolicy` and `dnsPolicy`.
//!   Volumes, ports, probes, resources, security contexts and affinity are only checked
//!   by the schema.
//! - Values in messages are rendered as Go's `%#v` for label maps and label selectors
//!   (`map[string]string{"app":"x"}`), as kube prints them; other structured values are
//!   rendered as JSON.

use crate::hooks::strings;
use std::collections::{BTreeMap, HashSet};

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta,
};
use kapi_core::meta::dns1123_label_errors;
use kapi_core::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

use crate::generated::api::core::v1::{
    Container, HTTPGetAction, PodSecurityContext, PodSpec, PodTemplateSpec, Probe,
};

/// kube's message when a workload's selector does not select its own template.
pub const SELECTOR_MISMATCH: &str = "`selector` does not match template `labels`";

/// `SetDefaults_PodSpec` and the defaults of everything inside it.
pub fn default_pod_spec(spec: &mut PodSpec) {
    spec.dns_policy.get_or_insert_with(|| "ClusterFirst".into());
    spec.restart_policy.get_or_insert_with(|| "Always".into());
    spec.termination_grace_period_seconds.get_or_insert(30);
    spec.scheduler_name
        .get_or_insert_with(|| "default-scheduler".into());
    spec.security_context
        .get_or_insert_with(PodSecurityContext::default);
    // The deprecated `serviceAccount` mirrors `serviceAccountName`, as kube's v1
    // conversion writes it.
    if let Some(name) = spec.service_account_name.clone().filter(|n| !n.is_empty()) {
        spec.service_account.get_or_insert(name);
    }
    let host_network = spec.host_network == Some(true);
    for c in spec.containers.iter_mut() {
        default_container(c, host_network);
    }
    for c in spec.init_containers.iter_mut().flatten() {
        default_container(c, host_network);
    }
    for v in spec.volumes.iter_mut().flatten() {
        default_volume(v);
    }
}

/// The defaults of a pod template: its PodSpec's, when it has one.
pub fn default_template(template: &mut PodTemplateSpec) {
    if let Some(spec) = template.spec.as_mut() {
        default_pod_spec(spec);
    }
}

/// `SetDefaults_Container` (and its ports, probes and env).
fn default_container(c: &mut Container, host_network: bool) {
    if c.image_pull_policy.as_deref().unwrap_or("").is_empty() {
        let policy = if image_tag(c.image.as_deref().unwrap_or("")) == Some("latest") {
            "Always"
        } else {
            "IfNotPresent"
        };
        c.image_pull_policy = Some(policy.into());
    }
    c.termination_message_path
        .get_or_insert_with(|| "/dev/termination-log".into());
    c.termination_message_policy
        .get_or_insert_with(|| "File".into());
    for p in c.ports.iter_mut().flatten() {
        p.protocol.get_or_insert_with(|| "TCP".into());
        if host_network && p.host_port.is_none() {
            p.host_port = Some(p.container_port);
        }
    }
    for probe in [
        c.liveness_probe.as_mut(),
        c.readiness_probe.as_mut(),
        c.startup_probe.as_mut(),
    ]
    .into_iter()
    .flatten()
    {
        default_probe(probe);
    }
    if let Some(lifecycle) = c.lifecycle.as_mut() {
        for handler in [lifecycle.post_start.as_mut(), lifecycle.pre_stop.as_mut()]
            .into_iter()
            .flatten()
        {
            if let Some(get) = handler.http_get.as_mut() {
                default_http_get(get);
            }
        }
    }
    for env in c.env.iter_mut().flatten() {
        if let Some(field_ref) = env.value_from.as_mut().and_then(|v| v.field_ref.as_mut()) {
            field_ref.api_version.get_or_insert_with(|| "v1".into());
        }
    }
}

/// `SetDefaults_Probe`.
fn default_probe(p: &mut Probe) {
    p.timeout_seconds.get_or_insert(1);
    p.period_seconds.get_or_insert(10);
    p.success_threshold.get_or_insert(1);
    p.failure_threshold.get_or_insert(3);
    if let Some(get) = p.http_get.as_mut() {
        default_http_get(get);
    }
}

/// `SetDefaults_HTTPGetAction`.
fn default_http_get(get: &mut HTTPGetAction) {
    get.path.get_or_insert_with(|| "/".into());
    get.scheme.get_or_insert_with(|| "HTTP".into());
}

/// `SetDefaults_Volume` and the default modes of projected-file sources.
fn default_volume(v: &mut crate::generated::api::core::v1::Volume) {
    let has_source = serde_json::to_value(&*v)
        .ok()
        .and_then(|j| j.as_object().map(|m| m.keys().any(|k| k != "name")))
        .unwrap_or(true);
    if !has_source {
        v.empty_dir = Some(Default::default());
    }
    if let Some(s) = v.secret.as_mut() {
        s.default_mode.get_or_insert(0o644);
    }
    if let Some(s) = v.config_map.as_mut() {
        s.default_mode.get_or_insert(0o644);
    }
    if let Some(s) = v.downward_api.as_mut() {
        s.default_mode.get_or_insert(0o644);
    }
    if let Some(s) = v.projected.as_mut() {
        s.default_mode.get_or_insert(0o644);
    }
}

/// The tag of an image reference as docker's `ParseImageName` finds it: `latest` when
/// there is neither tag nor digest, `None` when there is a digest only or the reference
/// is empty.
fn image_tag(image: &str) -> Option<&str> {
    if image.is_empty() {
        return None;
    }
    let (name, digest) = match image.split_once('@') {
        Some((n, _)) => (n, true),
        None => (image, false),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    match name[last_slash..].rfind(':') {
        Some(i) => Some(&name[last_slash + i + 1..]),
        None if digest => None,
        None => Some("latest"),
    }
}

/// The part of `ValidatePodSpec` kapi makes (see the module docs), at `path`.
pub fn validate_pod_spec(spec: &PodSpec, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut names: HashSet<&str> = HashSet::new();
    let init = spec.init_containers.as_deref().unwrap_or(&[]);
    validate_containers(init, &path.child("initContainers"), &mut names, &mut errs);
    let containers_path = path.child("containers");
    if spec.containers.is_empty() {
        errs.push(FieldError::required(&containers_path, ""));
    }
    validate_containers(&spec.containers, &containers_path, &mut names, &mut errs);
    if let Some(policy) = spec.restart_policy.as_deref() {
        let allowed = ["Always", "OnFailure", "Never"];
        if !allowed.contains(&policy) {
            errs.push(FieldError::not_supported(
                &path.child("restartPolicy"),
                policy,
                &strings(&allowed),
            ));
        }
    }
    if let Some(policy) = spec.dns_policy.as_deref() {
        let allowed = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
        if !allowed.contains(&policy) {
            errs.push(FieldError::not_supported(
                &path.child("dnsPolicy"),
                policy,
                &strings(&allowed),
            ));
        }
    }
    if let Some(seconds) = spec.active_deadline_seconds {
        if !(1..=i64::from(i32::MAX)).contains(&seconds) {
            errs.push(FieldError::invalid(
                &path.child("activeDeadlineSeconds"),
                seconds,
                format!("must be between 1 and {}, inclusive", i32::MAX),
            ));
        }
    }
    errs
}

/// A container's name is given and a DNS-1123 label.
pub(super) fn container_name_errors(name: &str, path: &FieldPath, errs: &mut ErrorList) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
    } else {
        for msg in dns1123_label_errors(name) {
            errs.push(FieldError::invalid(path, name, msg));
        }
    }
}

fn validate_containers<'a>(
    containers: &'a [Container],
    path: &FieldPath,
    names: &mut HashSet<&'a str>,
    errs: &mut ErrorList,
) {
    for (i, c) in containers.iter().enumerate() {
        let at = path.index(i);
        let name_path = at.child("name");
        container_name_errors(&c.name, &name_path, errs);
        if !c.name.is_empty() && !names.insert(&c.name) {
            errs.push(FieldError::duplicate(&name_path, c.name.as_str()));
        }
        let image = c.image.as_deref().unwrap_or("");
        if image.is_empty() {
            errs.push(FieldError::required(&at.child("image"), ""));
        }
        // validateContainerPorts: a containerPort in 1-65535, a hostPort too if set,
        // a known protocol.
        for (j, port) in c.ports.iter().flatten().enumerate() {
            let port_path = at.child("ports").index(j);
            if port.container_port == 0 {
                errs.push(FieldError::required(&port_path.child("containerPort"), ""));
            }
            for (field, value) in [
                ("containerPort", port.container_port),
                ("hostPort", port.host_port.unwrap_or(0)),
            ] {
                if value != 0 {
                    for msg in super::service::port_num_errors(value) {
                        errs.push(FieldError::invalid(&port_path.child(field), value, msg));
                    }
                }
            }
            if let Some(protocol) = port.protocol.as_deref() {
                let allowed = ["SCTP", "TCP", "UDP"];
                if !allowed.contains(&protocol) {
                    errs.push(FieldError::not_supported(
                        &port_path.child("protocol"),
                        protocol,
                        &strings(&allowed),
                    ));
                }
            }
        }
        if let Some(policy) = c.image_pull_policy.as_deref() {
            let allowed = ["Always", "IfNotPresent", "Never"];
            if !allowed.contains(&policy) {
                errs.push(FieldError::not_supported(
                    &at.child("imagePullPolicy"),
                    policy,
                    &strings(&allowed),
                ));
            }
        }
        if let Some(policy) = c.termination_message_policy.as_deref() {
            let allowed = ["File", "FallbackToLogsOnError"];
            if !allowed.contains(&policy) {
                errs.push(FieldError::not_supported(
                    &at.child("terminationMessagePolicy"),
                    policy,
                    &strings(&allowed),
                ));
            }
        }
    }
}

/// The labels of a template (`None` when it has none).
pub fn template_labels(template: &PodTemplateSpec) -> Option<&BTreeMap<String, String>> {
    template.metadata.as_ref().and_then(|m| m.labels.as_ref())
}

/// `ValidatePodTemplateSpecForReplicaSet` (and its StatefulSet, DaemonSet and RC
/// versions): the selector selects the template's labels, the pod spec is valid, its
/// `restartPolicy` is `Always` and it has no `activeDeadlineSeconds`. `selector` is
/// `None` when it is empty (nothing to match).
pub fn validate_controller_template(
    template: &PodTemplateSpec,
    selector: Option<&Value>,
    path: &FieldPath,
) -> ErrorList {
    let mut errs = ErrorList::new();
    // The template's labels are labels (ValidatePodTemplateSpec's ObjectMeta check).
    if let Some(labels) = template_labels(template) {
        let labels = serde_json::to_value(labels).unwrap_or_default();
        errs.extend(kapi_core::meta::validate_labels(
            Some(&labels),
            &path.child("metadata").child("labels"),
        ));
    }
    errs.extend(check_selects_template(template, selector, path));
    if let Some(spec) = template.spec.as_ref() {
        let spec_path = path.child("spec");
        errs.extend(validate_pod_spec(spec, &spec_path));
        let policy = spec.restart_policy.as_deref().unwrap_or("");
        if policy != "Always" {
            errs.push(FieldError::not_supported(
                &spec_path.child("restartPolicy"),
                policy,
                &strings(&["Always"]),
            ));
        }
        if let Some(seconds) = spec.active_deadline_seconds {
            errs.push(FieldError::invalid(
                &spec_path.child("activeDeadlineSeconds"),
                seconds,
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            ));
        }
    }
    errs
}

/// The `selector does not match template labels` error, when it does not.
pub fn check_selects_template(
    template: &PodTemplateSpec,
    selector: Option<&Value>,
    path: &FieldPath,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(selector) = selector else {
        return errs;
    };
    let Ok(parsed) = kapi_core::selector::LabelSelector::from_json(selector) else {
        return errs;
    };
    let empty = BTreeMap::new();
    let labels = template_labels(template);
    if !parsed.is_empty() && !parsed.matches(labels.unwrap_or(&empty)) {
        errs.push(FieldError::invalid_omit_value(
            &path.child("metadata").child("labels"),
            format!("{}: {SELECTOR_MISMATCH}", go_string_map(labels)),
        ));
    }
    errs
}

/// Whether a `metav1.LabelSelector` has no requirement.
pub fn selector_is_empty(s: &LabelSelector) -> bool {
    s.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && s.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

/// An error at `path` rendering `s` as Go's `%#v` of a `metav1.LabelSelector`.
pub fn selector_error(path: &FieldPath, s: &LabelSelector, detail: &str) -> FieldError {
    FieldError::invalid_omit_value(path, format!("{}: {detail}", go_label_selector(s)))
}

/// Go's `%#v` of a `map[string]string` (keys sorted, as fmt prints maps).
pub fn go_string_map(map: Option<&BTreeMap<String, String>>) -> String {
    match map {
        None => "map[string]string(nil)".into(),
        Some(m) => {
            let pairs: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect();
            format!("map[string]string{{{}}}", pairs.join(", "))
        }
    }
}

/// Go's `%#v` of a `metav1.LabelSelector`.
pub fn go_label_selector(s: &LabelSelector) -> String {
    let exprs = match s.match_expressions.as_ref() {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|r| {
                    let values = match r.values.as_ref() {
                        None => "[]string(nil)".to_string(),
                        Some(vs) => {
                            let q: Vec<String> = vs.iter().map(|v| format!("{v:?}")).collect();
                            format!("[]string{{{}}}", q.join(", "))
                        }
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{values}}}",
                        r.key, r.operator
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{exprs}}}",
        go_string_map(s.match_labels.as_ref())
    )
}

/// The `metav1.LabelSelector` as JSON, for [`kapi_core::selector::LabelSelector`].
pub fn selector_json(s: &LabelSelector) -> Value {
    serde_json::to_value(s).unwrap_or(Value::Null)
}

/// `metav1.LabelSelectorAsSelector(s).String()`, as kube's printers show selectors.
pub fn selector_string(s: Option<&LabelSelector>) -> String {
    let Some(s) = s else {
        return String::new();
    };
    kapi_core::selector::LabelSelector::from_json(&selector_json(s))
        .map(|sel| sel.to_string())
        .unwrap_or_default()
}

/// `labels.FormatLabels`: `a=b,c=d`, or `<none>` for no labels.
pub fn format_labels(map: Option<&BTreeMap<String, String>>) -> String {
    match map {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
        _ => "<none>".into(),
    }
}

/// kube's `layoutContainerCells`: container names and images, comma-separated.
pub fn container_cells(template: Option<&PodTemplateSpec>) -> (String, String) {
    let containers = template
        .and_then(|t| t.spec.as_ref())
        .map(|s| s.containers.as_slice())
        .unwrap_or(&[]);
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = containers
        .iter()
        .map(|c| c.image.as_deref().unwrap_or(""))
        .collect();
    (names.join(","), images.join(","))
}

/// The cell of the `Containers`/`Images` columns every workload prints, when
/// `column` is one of them.
pub fn container_cell(column: &str, template: Option<&PodTemplateSpec>) -> Option<Value> {
    let (names, images) = container_cells(template);
    match column {
        "Containers" => Some(Value::from(names)),
        "Images" => Some(Value::from(images)),
        _ => None,
    }
}

/// An `ObjectMeta`'s labels, created if missing.
pub fn labels_mut(meta: &mut ObjectMeta) -> &mut BTreeMap<String, String> {
    meta.labels.get_or_insert_with(BTreeMap::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags() {
        assert_eq!(image_tag("nginx"), Some("latest"));
        assert_eq!(image_tag("nginx:latest"), Some("latest"));
        assert_eq!(image_tag("nginx:1.25"), Some("1.25"));
        assert_eq!(image_tag("localhost:5000/nginx"), Some("latest"));
        assert_eq!(image_tag("nginx@sha256:abc"), None);
        assert_eq!(image_tag(""), None);
    }

    #[test]
    fn go_rendering() {
        let mut m = BTreeMap::new();
        m.insert("b".to_string(), "2".to_string());
        m.insert("a".to_string(), "1".to_string());
        assert_eq!(
            go_string_map(Some(&m)),
            r#"map[string]string{"a":"1", "b":"2"}"#
        );
        let s = LabelSelector {
            match_labels: Some(m),
            match_expressions: None,
        };
        assert_eq!(
            go_label_selector(&s),
            r#"v1.LabelSelector{MatchLabels:map[string]string{"a":"1", "b":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"#
        );
    }
}
