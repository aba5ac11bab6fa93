//! The stored ValidatingAdmissionPolicies and their bindings, kept in memory by watching
//! them (kube-apiserver reads them from informers the same way), each read once:
//! rules and selectors parsed, every CEL expression compiled.

use std::collections::BTreeMap;
use std::sync::Arc;

use kapi_core::schema::cel::Expression;
use kapi_core::selector::LabelSelector;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::admission::webhook::matching::Rule;
use kapi_apiserver::registry::Registry;
use kapi_apiserver::registry::informer::{self, Live, Mirror, Watched};
use kapi_apiserver::registry::watch::WatchEventType;

const GROUP: &str = "admissionregistration.k8s.io";
const POLICIES: &str = "validatingadmissionpolicies";
const BINDINGS: &str = "validatingadmissionpolicybindings";

/// The variables every policy expression may use, `authorizer` with kube's authorizer
/// library.
pub const VARIABLES: [&str; 7] = [
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
    "variables",
    "authorizer",
];

/// A compiled expression, or why it does not compile.
pub type Compiled = Result<Expression, String>;

fn compile(src: &str) -> Compiled {
    Expression::compile(src, &VARIABLES).map_err(|e| format!("compilation failed: {e}"))
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// A rule of `resourceRules` or `excludeResourceRules`: kube's
/// `NamedRuleWithOperations`.
#[derive(Debug)]
pub struct NamedRule {
    /// The rule.
    pub rule: Rule,
    /// `resourceNames`: empty matches every name.
    pub names: Vec<String>,
}

/// `matchConstraints` of a policy or `matchResources` of a binding.
#[derive(Debug)]
pub struct MatchResources {
    /// `resourceRules`.
    pub rules: Vec<NamedRule>,
    /// `excludeResourceRules`.
    pub excluded: Vec<NamedRule>,
    /// `matchPolicy: Equivalent` (the default); `Exact` otherwise.
    pub equivalent: bool,
    /// `namespaceSelector` (an error is the selector's).
    pub namespace_selector: Result<LabelSelector, String>,
    /// `objectSelector`.
    pub object_selector: Result<LabelSelector, String>,
}

impl MatchResources {
    fn from_json(v: &Value) -> Self {
        let rules = |v: &Value| {
            items(v)
                .iter()
                .map(|r| NamedRule {
                    rule: Rule::from_json(r),
                    names: items(&r["resourceNames"]).iter().map(text).collect(),
                })
                .collect()
        };
        let selector = |v: &Value| LabelSelector::from_json(v).map_err(|e| e.to_string());
        Self {
            rules: rules(&v["resourceRules"]),
            excluded: rules(&v["excludeResourceRules"]),
            equivalent: v["matchPolicy"] != "Exact",
            namespace_selector: selector(&v["namespaceSelector"]),
            object_selector: selector(&v["objectSelector"]),
        }
    }
}

/// One of `validations`.
#[derive(Debug)]
pub struct Validation {
    /// `expression`, as written (the default message quotes it).
    pub source: String,
    /// It compiled.
    pub expression: Compiled,
    /// `message`.
    pub message: String,
    /// `messageExpression`, compiled.
    pub message_expression: Option<Compiled>,
    /// `reason` (kube's default is `Invalid`).
    pub reason: Option<String>,
}

/// A policy, compiled.
#[derive(Debug)]
pub struct Policy {
    /// `metadata.name`.
    pub name: String,
    /// `paramKind` as (apiVersion, kind).
    pub param_kind: Option<(String, String)>,
    /// `matchConstraints`; a policy without any matches nothing.
    pub constraints: Option<MatchResources>,
    /// `failurePolicy: Ignore` (the default is `Fail`).
    pub ignore_failures: bool,
    /// `matchConditions` by name.
    pub match_conditions: Vec<(String, Compiled)>,
    /// `variables` by name, in order (each may use the ones before it).
    pub variables: Vec<(String, Compiled)>,
    /// `validations`.
    pub validations: Vec<Validation>,
    /// `auditAnnotations` as (key, valueExpression).
    pub audit_annotations: Vec<(String, Compiled)>,
}

impl Policy {
    /// Reads a stored policy.
    pub fn from_json(p: &Value) -> Self {
        let spec = &p["spec"];
        let named = |list: &Value, key: &str| -> Vec<(String, Compiled)> {
            items(list)
                .iter()
                .map(|c| {
                    (
                        text(&c["name"]),
                        compile(c[key].as_str().unwrap_or_default()),
                    )
                })
                .collect()
        };
        let param_kind = spec
            .get("paramKind")
            .filter(|k| k.is_object())
            .map(|k| (text(&k["apiVersion"]), text(&k["kind"])));
        Self {
            name: text(&p["metadata"]["name"]),
            param_kind,
            constraints: spec
                .get("matchConstraints")
                .filter(|m| m.is_object())
                .map(MatchResources::from_json),
            ignore_failures: spec["failurePolicy"] == "Ignore",
            match_conditions: named(&spec["matchConditions"], "expression"),
            variables: named(&spec["variables"], "expression"),
            validations: items(&spec["validations"])
                .iter()
                .map(|v| {
                    let source = text(&v["expression"]);
                    Validation {
                        expression: compile(&source),
                        source,
                        message: text(&v["message"]),
                        message_expression: v["messageExpression"].as_str().map(compile),
                        reason: v["reason"].as_str().map(str::to_string),
                    }
                })
                .collect(),
            audit_annotations: items(&spec["auditAnnotations"])
                .iter()
                .map(|a| {
                    (
                        text(&a["key"]),
                        compile(a["valueExpression"].as_str().unwrap_or_default()),
                    )
                })
                .collect(),
        }
    }
}

/// `paramRef` of a binding.
#[derive(Debug)]
pub struct ParamRef {
    /// `name`: one parameter object.
    pub name: Option<String>,
    /// `namespace`: where the parameters are; empty means the request's namespace for
    /// a namespaced `paramKind`.
    pub namespace: Option<String>,
    /// `selector`: every parameter object it matches.
    pub selector: Option<Result<LabelSelector, String>>,
    /// `parameterNotFoundAction: Deny` (else `Allow`).
    pub deny_when_missing: bool,
}

/// A binding, read.
#[derive(Debug)]
pub struct Binding {
    /// `metadata.name`.
    pub name: String,
    /// `spec.policyName`.
    pub policy: String,
    /// `spec.paramRef`.
    pub param_ref: Option<ParamRef>,
    /// `spec.matchResources`, which narrows the policy's own constraints.
    pub match_resources: Option<MatchResources>,
    /// `validationActions` has `Deny`.
    pub deny: bool,
    /// ... `Warn`.
    pub warn: bool,
    /// ... `Audit`.
    pub audit: bool,
}

impl Binding {
    /// Reads a stored binding.
    pub fn from_json(b: &Value) -> Self {
        let spec = &b["spec"];
        let actions: Vec<&str> = items(&spec["validationActions"])
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let param_ref = spec.get("paramRef").filter(|r| r.is_object()).map(|r| {
            let nonempty = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
            ParamRef {
                name: nonempty(&r["name"]),
                namespace: nonempty(&r["namespace"]),
                selector: r
                    .get("selector")
                    .filter(|s| s.is_object())
                    .map(|s| LabelSelector::from_json(s).map_err(|e| e.to_string())),
                deny_when_missing: r["parameterNotFoundAction"] == "Deny",
            }
        });
        Self {
            name: text(&b["metadata"]["name"]),
            policy: text(&spec["policyName"]),
            param_ref,
            match_resources: spec
                .get("matchResources")
                .filter(|m| m.is_object())
                .map(MatchResources::from_json),
            deny: actions.contains(&"Deny"),
            warn: actions.contains(&"Warn"),
            audit: actions.contains(&"Audit"),
        }
    }
}

/// What admission evaluates: each binding with its policy, by policy then binding name.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Bindings whose policy exists.
    pub bound: Vec<(Arc<Policy>, Arc<Binding>)>,
}

/// The stored policies and bindings, by name.
#[derive(Default)]
struct Stored {
    policies: BTreeMap<String, Arc<Policy>>,
    bindings: BTreeMap<String, Arc<Binding>>,
}

impl Mirror for Stored {
    type Snapshot = Snapshot;

    fn apply(&mut self, kind: &'static str, type_: WatchEventType, object: Value) {
        let name = text(&object["metadata"]["name"]);
        let deleted = type_ == WatchEventType::Deleted;
        if kind == POLICIES {
            if deleted {
                self.policies.remove(&name);
            } else {
                self.policies
                    .insert(name, Arc::new(Policy::from_json(&object)));
            }
        } else if deleted {
            self.bindings.remove(&name);
        } else {
            self.bindings
                .insert(name, Arc::new(Binding::from_json(&object)));
        }
    }

    fn snapshot(&self) -> Snapshot {
        let mut bound: Vec<_> = self
            .bindings
            .values()
            .filter_map(|b| Some((self.policies.get(&b.policy)?.clone(), b.clone())))
            .collect();
        bound.sort_by(|a, b| (&a.0.name, &a.1.name).cmp(&(&b.0.name, &b.1.name)));
        Snapshot { bound }
    }
}

/// The policies admission reads: the latest complete snapshot.
pub type LivePolicies = Live<Snapshot>;

/// Starts watching policies and bindings; the receiver turns `true` once both kinds'
/// current objects are in.
pub fn start(
    registry: Arc<Registry>,
    shutdown: watch::Receiver<bool>,
) -> (Arc<LivePolicies>, watch::Receiver<bool>, JoinHandle<()>) {
    let watched = Watched {
        group: GROUP,
        kinds: &[POLICIES, BINDINGS],
        what: "validating admission policies",
    };
    informer::start::<Stored>(registry, watched, shutdown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn policies_and_bindings_are_read_and_paired() {
        let policy = json!({"metadata": {"name": "p"}, "spec": {
            "failurePolicy": "Ignore",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
                "apiVersions": ["v1"], "resources": ["deployments"], "resourceNames": ["a"]}],
                "matchPolicy": "Exact"},
            "variables": [{"name": "r", "expression": "object.spec.replicas"}],
            "validations": [{"expression": "variables.r < 5", "reason": "Forbidden"},
                {"expression": "object.nope(", "messageExpression": "'x'"}],
            "auditAnnotations": [{"key": "k", "valueExpression": "'v'"}]}});
        let p = Policy::from_json(&policy);
        assert!(p.ignore_failures);
        assert_eq!(
            p.param_kind,
            Some(("v1".to_string(), "ConfigMap".to_string()))
        );
        let c = p.constraints.as_ref().expect("constraints");
        assert!(!c.equivalent);
        assert_eq!(c.rules[0].names, ["a"]);
        assert!(c.namespace_selector.as_ref().unwrap().is_empty());
        assert!(p.validations[0].expression.is_ok());
        assert_eq!(p.validations[0].reason.as_deref(), Some("Forbidden"));
        let err = p.validations[1].expression.as_ref().unwrap_err();
        assert!(err.starts_with("compilation failed: "), "{err}");
        assert!(p.validations[1].message_expression.is_some());
        assert_eq!(p.audit_annotations[0].0, "k");

        let binding = |name: &str, policy: &str| {
            json!({"metadata": {"name": name}, "spec": {"policyName": policy,
                "validationActions": ["Warn", "Audit"],
                "paramRef": {"name": "cm", "parameterNotFoundAction": "Deny"}}})
        };
        let b = Binding::from_json(&binding("b", "p"));
        assert!(!b.deny && b.warn && b.audit);
        let r = b.param_ref.as_ref().expect("paramRef");
        assert_eq!(
            (
                r.name.as_deref(),
                r.namespace.as_deref(),
                r.deny_when_missing
            ),
            (Some("cm"), None, true)
        );

        let mut stored = Stored::default();
        stored.apply(BINDINGS, WatchEventType::Added, binding("b2", "p"));
        stored.apply(BINDINGS, WatchEventType::Added, binding("b1", "p"));
        stored.apply(BINDINGS, WatchEventType::Added, binding("orphan", "none"));
        assert!(stored.snapshot().bound.is_empty(), "no policy yet");
        stored.apply(POLICIES, WatchEventType::Added, policy);
        let names: Vec<_> = stored
            .snapshot()
            .bound
            .iter()
            .map(|(p, b)| format!("{}/{}", p.name, b.name))
            .collect();
        assert_eq!(names, ["p/b1", "p/b2"]);
    }
}
