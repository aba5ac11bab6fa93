//! What the aggregator reads of an `APIService` (kept as the JSON the registry stores)
//! and the `Available` condition it writes.

use base64::Engine;
use serde_json::{Value, json};

/// The group of APIServices.
pub const GROUP: &str = "apiregistration.k8s.io";
/// Their version.
pub const VERSION: &str = "v1";
/// Their plural.
pub const PLURAL: &str = "apiservices";
/// The label of the APIServices the aggregator manages itself (kube's autoregister
/// controller): `onstart` for compiled group-versions, `true` for those of CRDs.
pub const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";

/// The Service an APIService's group-version is served behind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRef {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The Service's port (443 when unset, as kube defaults it).
    pub port: u16,
}

/// An APIService's spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The object's name (`<version>.<group>`).
    pub name: String,
    /// The group.
    pub group: String,
    /// The version.
    pub version: String,
    /// Where the group's order among groups comes from (higher first).
    pub group_priority: i64,
    /// The version's order in its group (higher first).
    pub version_priority: i64,
    /// `None` for a local APIService.
    pub service: Option<ServiceRef>,
    /// The CAs the backend's serving certificate is verified with (PEM).
    pub ca_bundle: Vec<u8>,
    /// Skip verifying the backend's certificate.
    pub insecure_skip_tls_verify: bool,
}

impl Spec {
    /// Reads an APIService.
    pub fn of(object: &Value) -> Spec {
        let spec = &object["spec"];
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let service = spec
            .get("service")
            .filter(|s| s.is_object())
            .map(|s| ServiceRef {
                namespace: text(&s["namespace"]),
                name: text(&s["name"]),
                port: s["port"]
                    .as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                    .unwrap_or(443),
            });
        let ca_bundle = spec["caBundle"]
            .as_str()
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .unwrap_or_default();
        Spec {
            name: text(&object["metadata"]["name"]),
            group: text(&spec["group"]),
            version: text(&spec["version"]),
            group_priority: spec["groupPriorityMinimum"].as_i64().unwrap_or(0),
            version_priority: spec["versionPriority"].as_i64().unwrap_or(0),
            service,
            ca_bundle,
            insecure_skip_tls_verify: spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false),
        }
    }
}

/// The `Available` condition of an APIService, if it has one.
pub fn available_condition(object: &Value) -> Option<&Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Available")
}

/// Whether the APIService is `Available: True`.
pub fn is_available(object: &Value) -> bool {
    available_condition(object).is_some_and(|c| c["status"] == "True")
}

/// What an availability check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Availability {
    /// `True`, `False` or `Unknown`.
    pub status: &'static str,
    /// kube's reason.
    pub reason: &'static str,
    /// kube's message.
    pub message: String,
}

impl Availability {
    /// A backend that could not be reached, or did not answer its discovery.
    pub fn failed_discovery(message: String) -> Self {
        Availability {
            status: "False",
            reason: "FailedDiscoveryCheck",
            message,
        }
    }

    /// What every local APIService is.
    pub fn local() -> Self {
        Availability {
            status: "True",
            reason: "Local",
            message: "Local APIServices are always available".into(),
        }
    }
}

/// The status with `found` as its `Available` condition, or `None` when the stored
/// one already says so (kube writes only changes; the transition time moves only when
/// the status does).
pub fn status_with(object: &Value, found: &Availability) -> Option<Value> {
    let current = available_condition(object);
    let same = current.is_some_and(|c| {
        c["status"] == found.status
            && c["reason"] == found.reason
            && c["message"] == found.message.as_str()
    });
    if same {
        return None;
    }
    let since = match current {
        Some(c) if c["status"] == found.status => c["lastTransitionTime"].clone(),
        _ => json!(chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()),
    };
    let condition = json!({
        "type": "Available",
        "status": found.status,
        "lastTransitionTime": since,
        "reason": found.reason,
        "message": found.message,
    });
    let mut status = object.get("status").cloned().unwrap_or_else(|| json!({}));
    let mut conditions: Vec<Value> = status["conditions"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| c["type"] != "Available")
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    conditions.push(condition);
    status["conditions"] = Value::Array(conditions);
    Some(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_written_only_when_it_changes() {
        let object = json!({"metadata": {"name": "v1.x"}, "spec": {}});
        let status = status_with(&object, &Availability::local()).unwrap();
        assert_eq!(status["conditions"][0]["reason"], "Local");
        let object = json!({"metadata": {"name": "v1.x"}, "status": status});
        assert!(status_with(&object, &Availability::local()).is_none());
        assert!(is_available(&object));
    }

    #[test]
    fn a_service_port_defaults_to_443() {
        let object = json!({"metadata": {"name": "v1.x.example"}, "spec": {
            "group": "x.example", "version": "v1", "groupPriorityMinimum": 100,
            "versionPriority": 10, "service": {"namespace": "ns", "name": "svc"}
        }});
        let spec = Spec::of(&object);
        assert_eq!(spec.service.unwrap().port, 443);
        assert_eq!(spec.group_priority, 100);
    }
}
