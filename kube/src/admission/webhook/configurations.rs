//! The webhook configurations as stored, kept in memory by watching
//! `mutatingwebhookconfigurations` and `validatingwebhookconfigurations` (kube-apiserver
//! reads them from informers the same way), each webhook read once into a [`Hook`]:
//! selectors parsed, match conditions compiled, the TLS client configured.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kapi_core::schema::cel::Expression;
use kapi_core::selector::LabelSelector;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::matching::Rule;
use kapi_apiserver::registry::Registry;
use kapi_apiserver::registry::informer::{self, Live, Mirror, Watched};
use kapi_apiserver::registry::watch::WatchEventType;
use kapi_apiserver::webhook::Endpoint;

const GROUP: &str = "admissionregistration.k8s.io";
const MUTATING: &str = "mutatingwebhookconfigurations";
const VALIDATING: &str = "validatingwebhookconfigurations";

/// kube-apiserver's default `timeoutSeconds`, and the largest it accepts.
const DEFAULT_TIMEOUT: u64 = 10;
const MAX_TIMEOUT: u64 = 30;

/// The variables a match condition may use, `authorizer` with kube's authorizer
/// library.
pub const CONDITION_VARIABLES: [&str; 4] = ["object", "oldObject", "request", "authorizer"];

/// One webhook of a configuration, ready to be matched and called.
#[derive(Debug)]
pub struct Hook {
    /// The configuration's name.
    pub configuration: String,
    /// The webhook's name (what messages quote).
    pub name: String,
    /// `rules`.
    pub rules: Vec<Rule>,
    /// `failurePolicy: Ignore` (the default is `Fail`).
    pub ignore_failures: bool,
    /// `matchPolicy: Equivalent` (the default); `Exact` otherwise.
    pub equivalent: bool,
    /// `namespaceSelector` (an error is the selector's, reported when the rules match).
    pub namespace_selector: Result<LabelSelector, String>,
    /// `objectSelector`.
    pub object_selector: Result<LabelSelector, String>,
    /// `sideEffects` (`None` when missing, which a dry run refuses).
    pub side_effects: Option<String>,
    /// `timeoutSeconds` (default 10, at most 30).
    pub timeout: Duration,
    /// `admissionReviewVersions` lists `v1`, the only version kapi sends.
    pub accepts_v1: bool,
    /// Where to call, or why it cannot be called.
    pub endpoint: Result<Endpoint, String>,
    /// `matchConditions` by name, compiled (or why one does not compile).
    pub match_conditions: Result<Vec<(String, Expression)>, String>,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub reinvoke: bool,
}

impl Hook {
    /// Reads webhook `w` of configuration `configuration`.
    pub fn from_json(configuration: &str, w: &Value) -> Self {
        let selector = |v: &Value| LabelSelector::from_json(v).map_err(|e| e.to_string());
        let timeout = w["timeoutSeconds"]
            .as_u64()
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(1, MAX_TIMEOUT);
        let match_conditions = w["matchConditions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or_default().to_string();
                Expression::compile(
                    c["expression"].as_str().unwrap_or_default(),
                    &CONDITION_VARIABLES,
                )
                .map(|e| (name.clone(), e))
                .map_err(|e| format!("matchCondition {name:?} does not compile: {e}"))
            })
            .collect();
        Self {
            configuration: configuration.to_string(),
            name: w["name"].as_str().unwrap_or_default().to_string(),
            rules: w["rules"]
                .as_array()
                .map(|rules| rules.iter().map(Rule::from_json).collect())
                .unwrap_or_default(),
            ignore_failures: w["failurePolicy"] == "Ignore",
            equivalent: w["matchPolicy"] != "Exact",
            namespace_selector: selector(&w["namespaceSelector"]),
            object_selector: selector(&w["objectSelector"]),
            side_effects: w["sideEffects"].as_str().map(str::to_string),
            timeout: Duration::from_secs(timeout),
            accepts_v1: w["admissionReviewVersions"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v == "v1")),
            endpoint: Endpoint::from_client_config(&w["clientConfig"]),
            match_conditions,
            reinvoke: w["reinvocationPolicy"] == "IfNeeded",
        }
    }
}

/// Every webhook in calling order: configurations by name, webhooks in their order.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Mutating webhooks.
    pub mutating: Vec<Arc<Hook>>,
    /// Validating webhooks.
    pub validating: Vec<Arc<Hook>>,
}

/// The configurations the dispatcher reads: the latest complete snapshot.
pub type LiveConfigurations = Live<Snapshot>;

/// The stored configurations of both kinds, by name.
#[derive(Default)]
struct Stored {
    mutating: BTreeMap<String, Vec<Arc<Hook>>>,
    validating: BTreeMap<String, Vec<Arc<Hook>>>,
}

impl Mirror for Stored {
    type Snapshot = Snapshot;

    fn apply(&mut self, kind: &'static str, type_: WatchEventType, object: Value) {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let map = if kind == MUTATING {
            &mut self.mutating
        } else {
            &mut self.validating
        };
        if type_ == WatchEventType::Deleted {
            map.remove(&name);
            return;
        }
        let hooks = object["webhooks"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|w| Arc::new(Hook::from_json(&name, w)))
            .collect();
        map.insert(name, hooks);
    }

    fn snapshot(&self) -> Snapshot {
        let flat = |m: &BTreeMap<String, Vec<Arc<Hook>>>| m.values().flatten().cloned().collect();
        Snapshot {
            mutating: flat(&self.mutating),
            validating: flat(&self.validating),
        }
    }
}

/// Starts watching the configurations; the receiver turns `true` once both kinds'
/// current objects are in.
pub fn start(
    registry: Arc<Registry>,
    shutdown: watch::Receiver<bool>,
) -> (
    Arc<LiveConfigurations>,
    watch::Receiver<bool>,
    JoinHandle<()>,
) {
    let watched = Watched {
        group: GROUP,
        kinds: &[MUTATING, VALIDATING],
        what: "webhook configurations",
    };
    informer::start::<Stored>(registry, watched, shutdown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_fields() {
        let h = Hook::from_json(
            "cfg",
            &json!({"name": "w.example.com", "sideEffects": "None",
                "admissionReviewVersions": ["v1beta1", "v1"],
                "clientConfig": {"url": "https://127.0.0.1:1/x"},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                    "resources": ["pods"]}]}),
        );
        assert_eq!(h.configuration, "cfg");
        assert_eq!(h.name, "w.example.com");
        assert_eq!(h.rules.len(), 1);
        assert!(!h.ignore_failures);
        assert!(h.equivalent);
        assert!(h.namespace_selector.as_ref().unwrap().is_empty());
        assert!(h.object_selector.as_ref().unwrap().is_empty());
        assert_eq!(h.side_effects.as_deref(), Some("None"));
        assert_eq!(h.timeout, Duration::from_secs(10));
        assert!(h.accepts_v1);
        assert!(h.endpoint.is_ok());
        assert!(h.match_conditions.as_ref().unwrap().is_empty());
        assert!(!h.reinvoke);

        let h = Hook::from_json(
            "cfg",
            &json!({"name": "w", "failurePolicy": "Ignore", "matchPolicy": "Exact",
                "timeoutSeconds": 99, "admissionReviewVersions": ["v1beta1"],
                "reinvocationPolicy": "IfNeeded",
                "objectSelector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]},
                "clientConfig": {"service": {"namespace": "n", "name": "s"}},
                "matchConditions": [{"name": "c", "expression": "object.metadata.name == 'x'"}]}),
        );
        assert!(h.ignore_failures);
        assert!(!h.equivalent);
        assert_eq!(h.timeout, Duration::from_secs(30));
        assert!(!h.accepts_v1);
        assert!(h.reinvoke);
        assert!(h.side_effects.is_none());
        assert!(h.object_selector.is_err());
        assert!(h.endpoint.is_ok(), "a Service is resolved at each call");
        assert_eq!(h.match_conditions.as_ref().unwrap().len(), 1);

        let h = Hook::from_json(
            "cfg",
            &json!({"name": "w", "matchConditions": [
                {"name": "params", "expression": "params.allowed"}]}),
        );
        let err = h.match_conditions.unwrap_err();
        assert!(
            err.starts_with("matchCondition \"params\" does not compile"),
            "{err}"
        );
    }

    #[test]
    fn snapshot_orders_configurations_by_name() {
        let config = |name: &str, hooks: &[&str]| {
            json!({"metadata": {"name": name},
                "webhooks": hooks.iter().map(|h| json!({"name": h})).collect::<Vec<_>>()})
        };
        let mut stored = Stored::default();
        stored.apply(MUTATING, WatchEventType::Added, config("b", &["b1", "b2"]));
        stored.apply(MUTATING, WatchEventType::Added, config("a", &["a1"]));
        stored.apply(VALIDATING, WatchEventType::Added, config("v", &["v1"]));
        let names = |hooks: &[Arc<Hook>]| hooks.iter().map(|h| h.name.clone()).collect::<Vec<_>>();
        let s = stored.snapshot();
        assert_eq!(names(&s.mutating), ["a1", "b1", "b2"]);
        assert_eq!(names(&s.validating), ["v1"]);
        stored.apply(MUTATING, WatchEventType::Modified, config("b", &["b3"]));
        stored.apply(MUTATING, WatchEventType::Deleted, config("a", &[]));
        assert_eq!(names(&stored.snapshot().mutating), ["b3"]);
    }
}
