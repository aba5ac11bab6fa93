//! APIServices, as kube-aggregator's strategies (`pkg/registry/apiservice/strategy.go`),
//! v1 defaults, validation (`pkg/apis/apiregistration/validation`) and table convertor
//! (`pkg/registry/apiservice/etcd`) treat them: no `metadata.generation`; a PUT needs a
//! `resourceVersion` (kube's strategy does not allow unconditional updates);
//! `spec.service.port` defaults to 443; on create the status is emptied and a local
//! APIService (no `spec.service`) is marked `Available` (reason `Local`); an update of
//! the main resource keeps the stored status, and `/status` takes only the status.
//!
//! Checks (`ValidateAPIService`): the name is a path segment and exactly
//! `spec.version + "." + spec.group`; only `v1` may have an empty group; a group is a
//! DNS-1123 subdomain and the version a DNS-1035 label; `groupPriorityMinimum` is in
//! 1..=20000 and `versionPriority` in 1..=1000; a local APIService has neither a
//! `caBundle` nor `insecureSkipTLSVerify`; a service needs a namespace, a name and a port
//! in 1..=65535, and `insecureSkipTLSVerify` may not go with a `caBundle`. Condition
//! statuses are `True`, `False` or `Unknown` (`ValidateAPIServiceStatus`).
//!
//! Columns, as kube's table convertor prints them: Service is `namespace/name`, or
//! `Local` without `spec.service`; Available is the `Available` condition's status, with
//! its reason in parentheses unless it is `True` (`False (MissingEndpoints)`), and
//! `Unknown` without that condition.
//!
//! Deliberate differences from kube-apiserver:
//! - A spec without `groupPriorityMinimum` or `versionPriority` gets the schema's
//!   `Required value`; kube decodes the missing number as 0 and answers `must be
//!   positive and less than 20000` (or `1000`).
//! - Writes to `/status` are validated as a whole object (its spec is the stored one,
//!   so it passes) plus the status rules; kube checks only the metadata and the status.
//! - The `must be spec.version+"."+spec.group` error on the name comes after the
//!   generic metadata errors (labels, annotations, ...); kube lists it first, with the
//!   other name errors.
//! - These hooks do not probe services: a service-backed APIService's `Available`
//!   condition is whatever its writer puts in `/status`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kapi_core::meta::{NameRule, dns1035_label_errors, dns1123_subdomain_errors};
use kapi_core::schema::format::go_quote;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::apiregistration_k8s_io::v1::APIService;
use crate::generated::io::k8s::kube_aggregator::pkg::apis::apiregistration::v1::APIServiceCondition;
use crate::hooks::core::service::port_num_errors;
use crate::hooks::strings;

/// The hooks of APIService.
#[derive(Clone, Copy, Debug, Default)]
pub struct ApiServiceHooks;

/// The port of a service when none is given (`v1.SetDefaults_ServiceReference`).
const DEFAULT_PORT: i32 = 443;
/// The highest `groupPriorityMinimum` kube accepts.
const MAX_GROUP_PRIORITY: i64 = 20000;
/// The highest `versionPriority` kube accepts.
const MAX_VERSION_PRIORITY: i64 = 1000;
/// The condition kube's printer and the local APIServices' status use.
const AVAILABLE: &str = "Available";
/// The statuses a condition may have, in kube's order.
const CONDITION_STATUSES: &[&str] = &["True", "False", "Unknown"];

/// `IsValidPathSegmentName` finds nothing wrong with `name`.
fn is_path_segment(name: &str) -> bool {
    name != "." && name != ".." && !name.contains('/') && !name.contains('%')
}

/// The name function `ValidateAPIService` gives `ValidateObjectMeta`, beyond the path
/// segment rule the generic metadata checks apply ([`NameRule::PathSegment`]): a name (or
/// `generateName`) that is a path segment must be `version.group`.
fn name_errors(api: &APIService, version: &str, group: &str) -> ErrorList {
    let required = format!("{version}.{group}");
    let message = format!(
        "must be `spec.version+\".\"+spec.group`: {}",
        go_quote(&required)
    );
    let metadata = FieldPath::new("metadata");
    let mut errs = ErrorList::new();
    let generate_name = api.metadata.generate_name.as_deref().unwrap_or_default();
    if !generate_name.is_empty() {
        let path = metadata.child("generateName");
        // kube's name function does not treat a generateName as a prefix, so `.` and `..`
        // are refused, which the generic prefix rule lets through.
        if generate_name == "." || generate_name == ".." {
            errs.push(FieldError::invalid(
                &path,
                generate_name,
                format!("may not be '{generate_name}'"),
            ));
        } else if is_path_segment(generate_name) && generate_name != required {
            errs.push(FieldError::invalid(&path, generate_name, message.clone()));
        }
    }
    let name = api.metadata.name.as_deref().unwrap_or_default();
    if !name.is_empty() && is_path_segment(name) && name != required {
        errs.push(FieldError::invalid(&metadata.child("name"), name, message));
    }
    errs
}

/// The length of the decoded `caBundle` (Go's `len` of the `[]byte`).
fn ca_bundle_len(ca_bundle: Option<&str>) -> usize {
    let encoded = ca_bundle.unwrap_or_default();
    BASE64
        .decode(encoded)
        .map_or(encoded.len(), |bytes| bytes.len())
}

/// `ValidateAPIService`, the metadata rules kapi checks for every kind aside.
fn validate_api_service(api: &APIService) -> ErrorList {
    // A missing spec is Go's zero value, which fails the rules below.
    let spec = api.spec.as_ref();
    let group = spec.and_then(|s| s.group.as_deref()).unwrap_or_default();
    let version = spec.and_then(|s| s.version.as_deref()).unwrap_or_default();
    let mut errs = name_errors(api, version, group);
    let path = FieldPath::new("spec");
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(
            &path.child("group"),
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for msg in dns1123_subdomain_errors(group) {
            errs.push(FieldError::invalid(&path.child("group"), group, msg));
        }
    }
    for msg in dns1035_label_errors(version) {
        errs.push(FieldError::invalid(&path.child("version"), version, msg));
    }
    let group_priority = spec.map_or(0, |s| i64::from(s.group_priority_minimum));
    if !(1..=MAX_GROUP_PRIORITY).contains(&group_priority) {
        errs.push(FieldError::invalid(
            &path.child("groupPriorityMinimum"),
            group_priority,
            "must be positive and less than 20000",
        ));
    }
    let version_priority = spec.map_or(0, |s| i64::from(s.version_priority));
    if !(1..=MAX_VERSION_PRIORITY).contains(&version_priority) {
        errs.push(FieldError::invalid(
            &path.child("versionPriority"),
            version_priority,
            "must be positive and less than 1000",
        ));
    }
    let insecure = spec
        .and_then(|s| s.insecure_skip_tls_verify)
        .unwrap_or(false);
    let ca_bundle = ca_bundle_len(spec.and_then(|s| s.ca_bundle.as_deref()));
    let Some(service) = spec.and_then(|s| s.service.as_ref()) else {
        if ca_bundle != 0 {
            errs.push(FieldError::invalid(
                &path.child("caBundle"),
                format!("{ca_bundle} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errs.push(FieldError::invalid(
                &path.child("insecureSkipTLSVerify"),
                insecure,
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    let service_path = path.child("service");
    if service.namespace.as_deref().unwrap_or_default().is_empty() {
        errs.push(FieldError::required(&service_path.child("namespace"), ""));
    }
    if service.name.as_deref().unwrap_or_default().is_empty() {
        errs.push(FieldError::required(&service_path.child("name"), ""));
    }
    let port = service.port.unwrap_or(DEFAULT_PORT);
    let port_errs = port_num_errors(port);
    if !port_errs.is_empty() {
        errs.push(FieldError::invalid(
            &service_path.child("port"),
            port,
            format!("port is not valid: {}", port_errs.join(", ")),
        ));
    }
    if insecure && ca_bundle > 0 {
        errs.push(FieldError::invalid(
            &path.child("insecureSkipTLSVerify"),
            insecure,
            "may not be true if caBundle is present",
        ));
    }
    errs
}

/// `ValidateAPIServiceStatus`: every condition's status is True, False or Unknown.
fn validate_status(api: &APIService) -> ErrorList {
    let path = FieldPath::new("status.conditions");
    let conditions = api
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    conditions
        .iter()
        .enumerate()
        .filter(|(_, c)| !CONDITION_STATUSES.contains(&c.status.as_str()))
        .map(|(i, c)| {
            FieldError::not_supported(
                &path.index(i).child("status"),
                c.status.as_str(),
                &strings(CONDITION_STATUSES),
            )
        })
        .collect()
}

/// `NewLocalAvailableAPIServiceCondition`: a local APIService is always available.
fn local_available_condition() -> APIServiceCondition {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    APIServiceCondition {
        r#type: AVAILABLE.into(),
        status: "True".into(),
        last_transition_time: serde_json::from_value(Value::String(now)).ok(),
        reason: Some("Local".into()),
        message: Some("Local APIServices are always available".into()),
    }
}

/// The Service column: `namespace/name`, or `Local`.
fn service_cell(api: &APIService) -> String {
    match api.spec.as_ref().and_then(|s| s.service.as_ref()) {
        Some(service) => format!(
            "{}/{}",
            service.namespace.as_deref().unwrap_or_default(),
            service.name.as_deref().unwrap_or_default()
        ),
        None => "Local".into(),
    }
}

/// The Available column: the condition's status, with its reason unless it is True;
/// `Unknown` without the condition.
fn available_cell(api: &APIService) -> String {
    let condition = api
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .find(|c| c.r#type == AVAILABLE);
    match condition {
        None => "Unknown".into(),
        Some(c) if c.status == "True" => c.status.clone(),
        Some(c) => match c.reason.as_deref().filter(|r| !r.is_empty()) {
            Some(reason) => format!("{} ({reason})", c.status),
            None => c.status.clone(),
        },
    }
}

impl Hooks<APIService> for ApiServiceHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn apply_defaults(&self, api: &mut APIService) {
        if let Some(service) = api.spec.as_mut().and_then(|s| s.service.as_mut()) {
            service.port.get_or_insert(DEFAULT_PORT);
        }
    }

    /// The status starts empty (the generic preparation); a local APIService is
    /// available at once.
    fn prepare_for_create(&self, api: &mut APIService) {
        let status = api.status.get_or_insert_with(Default::default);
        status.conditions = None;
        if api.spec.as_ref().is_none_or(|s| s.service.is_none()) {
            status.conditions = Some(vec![local_available_condition()]);
        }
    }

    fn validate(&self, api: &APIService) -> ErrorList {
        validate_api_service(api)
    }

    /// `ValidateAPIServiceUpdate`; the status rules too, which a write to `/status` needs
    /// and an update of the main resource passes (it keeps the stored status).
    fn validate_update(&self, new: &APIService, _old: &APIService) -> ErrorList {
        let mut errs = validate_api_service(new);
        errs.extend(validate_status(new));
        errs
    }

    fn table_cell(&self, column: &str, api: &APIService) -> Option<Value> {
        match column {
            "Service" => Some(Value::String(service_cell(api))),
            "Available" => Some(Value::String(available_cell(api))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use kapi_core::{ObjectStrategy, TypedStrategy};
    use serde_json::json;

    use super::*;

    /// metrics-server's APIService, which every rule below breaks in one way.
    fn metrics() -> Value {
        json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1beta1.metrics.k8s.io"},
            "spec": {
                "group": "metrics.k8s.io",
                "version": "v1beta1",
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
                "insecureSkipTLSVerify": true,
                "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443}
            }
        })
    }

    /// `metrics()` with a JSON merge patch applied (`null` removes a field).
    fn with(patch: Value) -> Value {
        let mut v = metrics();
        json_patch::merge(&mut v, &patch);
        v
    }

    fn typed(v: Value) -> APIService {
        serde_json::from_value(v).expect("an APIService")
    }

    fn errors(v: Value) -> Vec<String> {
        let api = typed(v);
        let mut errs = ApiServiceHooks.validate(&api);
        errs.extend(validate_status(&api));
        errs.iter().map(ToString::to_string).collect()
    }

    const VERSION_GROUP: &str = "must be `spec.version+\".\"+spec.group`";

    #[test]
    fn a_valid_apiservice_passes_create_and_update() {
        assert_eq!(errors(metrics()), Vec::<String>::new());
        let api = typed(metrics());
        assert!(ApiServiceHooks.validate_update(&api, &api).is_empty());
        // The legacy group: only v1, named `v1.`.
        let legacy = with(json!({
            "metadata": {"name": "v1."},
            "spec": {"group": "", "version": "v1", "service": null, "insecureSkipTLSVerify": null}
        }));
        assert_eq!(errors(legacy), Vec::<String>::new());
    }

    #[test]
    fn the_name_must_be_version_dot_group() {
        assert_eq!(
            errors(with(json!({"metadata": {"name": "v1.metrics.k8s.io"}}))),
            [format!(
                "metadata.name: Invalid value: \"v1.metrics.k8s.io\": {VERSION_GROUP}: \"v1beta1.metrics.k8s.io\""
            )]
        );
        // A generateName is held to the same rule (kube's name function ignores the
        // prefix), and `.` is refused though the generic prefix rule lets it through.
        assert_eq!(
            errors(with(
                json!({"metadata": {"generateName": "v1beta1.", "name": "v1beta1.metrics.k8s.io"}})
            )),
            [format!(
                "metadata.generateName: Invalid value: \"v1beta1.\": {VERSION_GROUP}: \"v1beta1.metrics.k8s.io\""
            )]
        );
        assert_eq!(
            errors(with(json!({"metadata": {"generateName": "."}}))),
            ["metadata.generateName: Invalid value: \".\": may not be '.'"]
        );
        // A name that is not a path segment gets only the generic path segment errors.
        assert_eq!(
            errors(with(json!({"metadata": {"name": "a/b"}}))),
            Vec::<String>::new()
        );
        assert_eq!(
            NameRule::PathSegment.errors("a/b", false),
            ["may not contain '/'"]
        );
        assert_eq!(ApiServiceHooks.name_rule(), NameRule::PathSegment);
    }

    #[test]
    fn only_v1_may_have_an_empty_group() {
        let v2 = with(json!({
            "metadata": {"name": "v2."},
            "spec": {"group": "", "version": "v2", "service": null, "insecureSkipTLSVerify": null}
        }));
        assert_eq!(
            errors(v2),
            [
                "spec.group: Required value: only v1 may have an empty group and it better be legacy kube"
            ]
        );
    }

    #[test]
    fn group_is_a_subdomain_and_version_a_dns1035_label() {
        let bad = with(json!({
            "metadata": {"name": "V1.Metrics_Group"},
            "spec": {"group": "Metrics_Group", "version": "V1"}
        }));
        assert_eq!(
            errors(bad),
            [
                "spec.group: Invalid value: \"Metrics_Group\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.version: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ]
        );
        // An empty version is not a label either (and the group then needs no v1).
        let empty = with(json!({"metadata": {"name": ".metrics.k8s.io"}, "spec": {"version": ""}}));
        assert_eq!(
            errors(empty),
            [
                "spec.version: Invalid value: \"\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
    }

    #[test]
    fn priorities_are_bounded() {
        for (group, version, want) in [
            (1, 1, vec![]),
            (20000, 1000, vec![]),
            (
                0,
                0,
                vec![
                    "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                    "spec.versionPriority: Invalid value: 0: must be positive and less than 1000",
                ],
            ),
            (
                20001,
                1001,
                vec![
                    "spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000",
                    "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
                ],
            ),
            (
                -5,
                -1,
                vec![
                    "spec.groupPriorityMinimum: Invalid value: -5: must be positive and less than 20000",
                    "spec.versionPriority: Invalid value: -1: must be positive and less than 1000",
                ],
            ),
        ] {
            let v =
                with(json!({"spec": {"groupPriorityMinimum": group, "versionPriority": version}}));
            assert_eq!(errors(v), want, "{group} {version}");
        }
    }

    #[test]
    fn a_local_apiservice_has_no_ca_bundle_and_no_insecure_skip() {
        // "aGVsbG8=" is 5 bytes.
        let local = with(json!({"spec": {"service": null, "caBundle": "aGVsbG8="}}));
        assert_eq!(
            errors(local),
            [
                "spec.caBundle: Invalid value: \"5 bytes\": local APIServices may not have a caBundle",
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
        let local = with(json!({"spec": {"service": null, "insecureSkipTLSVerify": false}}));
        assert_eq!(errors(local), Vec::<String>::new());
    }

    #[test]
    fn a_service_needs_namespace_name_and_a_valid_port() {
        let bad =
            with(json!({"spec": {"service": {"namespace": "", "name": null, "port": 70000}}}));
        assert_eq!(
            errors(bad),
            [
                "spec.service.namespace: Required value",
                "spec.service.name: Required value",
                "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
            ]
        );
        let zero = with(json!({"spec": {"service": {"port": 0}}}));
        assert_eq!(
            errors(zero),
            [
                "spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"
            ]
        );
    }

    #[test]
    fn insecure_skip_tls_verify_may_not_go_with_a_ca_bundle() {
        let both = with(json!({"spec": {"caBundle": "aGVsbG8="}}));
        assert_eq!(
            errors(both),
            [
                "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"
            ]
        );
        let verified =
            with(json!({"spec": {"caBundle": "aGVsbG8=", "insecureSkipTLSVerify": false}}));
        assert_eq!(errors(verified), Vec::<String>::new());
    }

    #[test]
    fn condition_statuses_are_true_false_or_unknown() {
        let v = with(json!({"status": {"conditions": [
            {"type": "Available", "status": "True"},
            {"type": "Other", "status": "Maybe"},
        ]}}));
        let api = typed(v);
        let errs: Vec<String> = ApiServiceHooks
            .validate_update(&api, &api)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            [
                "status.conditions[1].status: Unsupported value: \"Maybe\": supported values: \"True\", \"False\", \"Unknown\""
            ]
        );
    }

    #[test]
    fn the_service_port_defaults_to_443() {
        let mut api = typed(with(json!({"spec": {"service": {"port": null}}})));
        ApiServiceHooks.apply_defaults(&mut api);
        let service = api.spec.unwrap().service.unwrap();
        assert_eq!(service.port, Some(443));
        let mut local = typed(with(json!({"spec": {"service": null}})));
        ApiServiceHooks.apply_defaults(&mut local);
        assert!(local.spec.unwrap().service.is_none());
    }

    #[test]
    fn create_empties_the_status_and_marks_local_apiservices_available() {
        let strategy = TypedStrategy::<APIService>::new();
        let sent =
            json!({"conditions": [{"type": "Available", "status": "False", "reason": "Mine"}]});

        let mut remote = with(json!({"status": sent.clone()}));
        json_patch::merge(&mut remote, &json!({"spec": {"service": {"port": null}}}));
        strategy.prepare_for_create(&mut remote);
        assert_eq!(remote["status"], json!({}));
        assert_eq!(remote["spec"]["service"]["port"], 443);
        assert!(remote["metadata"].get("generation").is_none(), "{remote}");

        let mut local = with(json!({
            "spec": {"service": null, "insecureSkipTLSVerify": null},
            "status": sent
        }));
        strategy.prepare_for_create(&mut local);
        let conditions = local["status"]["conditions"].as_array().unwrap();
        assert_eq!(conditions.len(), 1, "{local}");
        let c = &conditions[0];
        assert_eq!(
            (&c["type"], &c["status"], &c["reason"], &c["message"]),
            (
                &json!("Available"),
                &json!("True"),
                &json!("Local"),
                &json!("Local APIServices are always available")
            )
        );
        assert!(
            c["lastTransitionTime"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z')),
            "{c}"
        );
    }

    #[test]
    fn updates_keep_the_status_and_status_writes_keep_the_spec() {
        let strategy = TypedStrategy::<APIService>::new();
        let old = with(json!({
            "metadata": {"resourceVersion": "5"},
            "status": {"conditions": [{"type": "Available", "status": "True"}]}
        }));

        let mut update = with(json!({
            "spec": {"versionPriority": 7},
            "status": {"conditions": [{"type": "Available", "status": "False"}]}
        }));
        strategy.prepare_for_update(&mut update, &old);
        assert_eq!(update["status"], old["status"]);
        assert_eq!(update["spec"]["versionPriority"], 7);

        let mut status = with(json!({
            "metadata": {"labels": {"a": "b"}},
            "spec": {"versionPriority": 7},
            "status": {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}
        }));
        strategy.prepare_for_status_update(&mut status, &old);
        assert_eq!(status["spec"], old["spec"]);
        assert!(status["metadata"].get("labels").is_none(), "{status}");
        assert_eq!(
            status["status"]["conditions"][0]["reason"],
            "MissingEndpoints"
        );
        let errs = strategy.validate_update(&status, &old);
        assert!(errs.is_empty(), "{errs:?}");
    }

    #[test]
    fn table_cells_as_kube_prints_them() {
        let cells = |v: Value| {
            let api = typed(v);
            (
                ApiServiceHooks.table_cell("Service", &api),
                ApiServiceHooks.table_cell("Available", &api),
            )
        };
        let condition = |status: &str, reason: Option<&str>| {
            json!({"status": {"conditions": [
                {"type": "Other", "status": "True"},
                {"type": "Available", "status": status, "reason": reason}
            ]}})
        };
        assert_eq!(
            cells(metrics()),
            (
                Some(json!("kube-system/metrics-server")),
                Some(json!("Unknown"))
            )
        );
        assert_eq!(
            cells(with(json!({"spec": {"service": null}}))).0,
            Some(json!("Local"))
        );
        for (status, reason, want) in [
            ("True", Some("Passed"), "True"),
            (
                "False",
                Some("MissingEndpoints"),
                "False (MissingEndpoints)",
            ),
            ("False", None, "False"),
            ("False", Some(""), "False"),
            ("Unknown", Some("Pending"), "Unknown (Pending)"),
        ] {
            assert_eq!(cells(with(condition(status, reason))).1, Some(json!(want)));
        }
        assert_eq!(ApiServiceHooks.table_cell("Age", &typed(metrics())), None);
    }
}
