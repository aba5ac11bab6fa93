//! Which webhooks a request calls, as kube-apiserver's webhook predicates decide:
//! `rules` (operations, API groups, versions, resources with their subresources, and
//! scope), `objectSelector` on the new or the old object's labels, and whether a
//! `namespaceSelector` applies at all. Reading a namespace's labels needs the registry
//! and lives in the dispatcher.

use kapi_apiserver::registry::{AdmissionRequest, object};
use kapi_core::selector::LabelSelector;
use serde_json::Value;

/// What a request is matched against: kube's admission attributes.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'a str,
    /// The resource's API group (`""` for core).
    pub group: &'a str,
    /// The resource's version.
    pub version: &'a str,
    /// The resource (plural).
    pub resource: &'a str,
    /// The subresource, `""` for the object itself.
    pub subresource: &'a str,
    /// The request's namespace: `""` for cluster-scoped objects, the namespace's own
    /// name for a Namespace (as kube-apiserver's request info sets it).
    pub namespace: &'a str,
}

impl<'a> Target<'a> {
    /// The attributes of `req`: its namespace as [`namespace_of`] gives it.
    pub fn of(req: &'a AdmissionRequest<'a>) -> Self {
        let info = req.info;
        Target {
            operation: req.operation.as_str(),
            group: &info.group,
            version: &info.version,
            resource: &info.plural,
            subresource: req.subresource,
            namespace: namespace_of(req),
        }
    }

    /// Whether this is the core `v1` `namespaces` resource (cluster-scoped, yet with a
    /// namespace in its attributes).
    fn is_namespace_object(&self) -> bool {
        self.group.is_empty() && self.version == "v1" && self.resource == "namespaces"
    }
}

/// The namespace admission matches a request by: the request's, or a Namespace's own
/// name for a Namespace (as kube-apiserver's request info sets it), `""` for other
/// cluster-scoped objects.
pub fn namespace_of<'a>(req: &AdmissionRequest<'a>) -> &'a str {
    let info = req.info;
    match req.namespace {
        Some(ns) => ns,
        None if info.group.is_empty() && info.plural == "namespaces" => req.name,
        None => "",
    }
}

/// `scope` of a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `*` (the default).
    All,
    /// `Cluster`: cluster-scoped resources, and Namespaces themselves.
    Cluster,
    /// `Namespaced`: namespaced resources.
    Namespaced,
    /// Anything else matches nothing, as in kube.
    Unknown,
}

/// One `RuleWithOperations`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `operations`.
    pub operations: Vec<String>,
    /// `apiGroups`.
    pub groups: Vec<String>,
    /// `apiVersions`.
    pub versions: Vec<String>,
    /// `resources` (`pods`, `pods/status`, `*`, `*/*`, `*/status`).
    pub resources: Vec<String>,
    /// `scope`.
    pub scope: Scope,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn exact_or_wildcard(items: &[String], requested: &str) -> bool {
    items.iter().any(|i| i == "*" || i == requested)
}

impl Rule {
    /// Reads a rule from its JSON; missing lists match nothing, as empty ones.
    pub fn from_json(v: &Value) -> Self {
        Self {
            operations: strings(&v["operations"]),
            groups: strings(&v["apiGroups"]),
            versions: strings(&v["apiVersions"]),
            resources: strings(&v["resources"]),
            scope: match v["scope"].as_str() {
                None | Some("*") => Scope::All,
                Some("Cluster") => Scope::Cluster,
                Some("Namespaced") => Scope::Namespaced,
                Some(_) => Scope::Unknown,
            },
        }
    }

    /// Whether the rule matches the request.
    pub fn matches(&self, t: &Target<'_>) -> bool {
        self.matches_except_version(t) && exact_or_wildcard(&self.versions, t.version)
    }

    /// Whether the rule matches the request if its version were any: the cheap test
    /// before looking for an equivalent version (`matchPolicy: Equivalent`).
    pub fn matches_except_version(&self, t: &Target<'_>) -> bool {
        self.scope_matches(t)
            && self.operations.iter().any(|o| o == "*" || o == t.operation)
            && exact_or_wildcard(&self.groups, t.group)
            && self.resources.iter().any(|r| {
                let (res, sub) = r.split_once('/').unwrap_or((r, ""));
                (res == "*" || res == t.resource) && (sub == "*" || sub == t.subresource)
            })
    }

    fn scope_matches(&self, t: &Target<'_>) -> bool {
        match self.scope {
            Scope::All => true,
            Scope::Namespaced => !t.is_namespace_object() && !t.namespace.is_empty(),
            Scope::Cluster => t.is_namespace_object() || t.namespace.is_empty(),
            Scope::Unknown => false,
        }
    }
}

/// Whether a `namespaceSelector` is looked at for this request: never for
/// cluster-scoped objects other than Namespaces (they always match).
pub fn namespace_selector_applies(t: &Target<'_>) -> bool {
    !t.namespace.is_empty() || t.resource == "namespaces"
}

/// Whether the namespace's labels come from the request's own object: a create or
/// update of a Namespace (the stored one is not written yet); otherwise they are read.
pub fn namespace_labels_from_object(t: &Target<'_>) -> bool {
    t.resource == "namespaces"
        && t.subresource.is_empty()
        && (t.operation == "CREATE" || t.operation == "UPDATE")
}

/// The labels of an object (`metadata.labels`), empty when it has none.
pub fn labels(obj: &Value) -> serde_json::Map<String, Value> {
    object::meta(obj, "labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// `objectSelector`: matches when the new or the old object's labels match; an empty
/// selector matches everything, even a request without objects.
pub fn object_selector_matches(
    selector: &LabelSelector,
    obj: Option<&Value>,
    old: Option<&Value>,
) -> bool {
    if selector.is_empty() {
        return true;
    }
    let matches = |o: Option<&Value>| {
        o.is_some_and(|o| {
            let labels = object::meta(o, "labels").and_then(Value::as_object);
            match labels {
                Some(l) => selector.matches(l),
                None => selector.matches(&serde_json::Map::new()),
            }
        })
    };
    matches(obj) || matches(old)
}

/// Admission never calls webhooks for the objects that configure admission, so that a
/// broken webhook cannot lock its own configuration (kube-apiserver's
/// `IsExemptAdmissionConfigurationResource`).
pub fn is_exempt(group: &str, kind: &str) -> bool {
    group == "admissionregistration.k8s.io"
        && matches!(
            kind,
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn target<'a>(operation: &'a str, resource: &'a str, namespace: &'a str) -> Target<'a> {
        Target {
            operation,
            group: "",
            version: "v1",
            resource,
            subresource: "",
            namespace,
        }
    }

    fn rule(v: Value) -> Rule {
        Rule::from_json(&v)
    }

    #[test]
    fn operations_groups_versions_and_wildcards() {
        let r = rule(json!({"operations": ["CREATE"], "apiGroups": [""],
            "apiVersions": ["v1"], "resources": ["configmaps"]}));
        assert!(r.matches(&target("CREATE", "configmaps", "default")));
        assert!(!r.matches(&target("UPDATE", "configmaps", "default")));
        assert!(!r.matches(&target("CREATE", "secrets", "default")));
        let apps = Target {
            group: "apps",
            ..target("CREATE", "configmaps", "default")
        };
        assert!(!r.matches(&apps));
        let v2 = Target {
            version: "v2",
            ..target("CREATE", "configmaps", "default")
        };
        assert!(!r.matches(&v2));
        assert!(r.matches_except_version(&v2));

        let all = rule(json!({"operations": ["*"], "apiGroups": ["*"],
            "apiVersions": ["*"], "resources": ["*"]}));
        assert!(all.matches(&apps));
        assert!(all.matches(&target("DELETE", "secrets", "")));
        // `*` is the object itself, not its subresources.
        let status = Target {
            subresource: "status",
            ..target("UPDATE", "pods", "default")
        };
        assert!(!all.matches(&status));
        // Missing lists match nothing.
        assert!(!rule(json!({"resources": ["*"]})).matches(&target("CREATE", "pods", "")));
    }

    #[test]
    fn subresources() {
        let status = Target {
            subresource: "status",
            ..target("UPDATE", "pods", "default")
        };
        let main = target("UPDATE", "pods", "default");
        let with = |resources: Value| {
            rule(
                json!({"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                "resources": resources}),
            )
        };
        assert!(with(json!(["pods/status"])).matches(&status));
        assert!(!with(json!(["pods/status"])).matches(&main));
        assert!(!with(json!(["pods"])).matches(&status));
        assert!(with(json!(["*/status"])).matches(&status));
        assert!(with(json!(["*/*"])).matches(&status));
        // `*/*` and `pods/*` are the resource and every subresource, as in kube.
        assert!(with(json!(["*/*"])).matches(&main));
        assert!(with(json!(["pods/*"])).matches(&main));
        assert!(with(json!(["pods/*"])).matches(&status));
        assert!(with(json!(["pods", "pods/*"])).matches(&main));
        let scale = Target {
            subresource: "scale",
            ..status
        };
        assert!(!with(json!(["*/status"])).matches(&scale));
    }

    #[test]
    fn scope() {
        let scoped = |scope: &str| {
            rule(
                json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"],
                "resources": ["*"], "scope": scope}),
            )
        };
        let namespaced = target("CREATE", "configmaps", "default");
        let cluster = target("CREATE", "nodes", "");
        // A Namespace carries its own name as namespace, yet is cluster-scoped.
        let namespace = target("CREATE", "namespaces", "team-a");
        assert!(scoped("Namespaced").matches(&namespaced));
        assert!(!scoped("Namespaced").matches(&cluster));
        assert!(!scoped("Namespaced").matches(&namespace));
        assert!(!scoped("Cluster").matches(&namespaced));
        assert!(scoped("Cluster").matches(&cluster));
        assert!(scoped("Cluster").matches(&namespace));
        for t in [namespaced, cluster, namespace] {
            assert!(scoped("*").matches(&t));
            assert!(!scoped("Galaxy").matches(&t));
        }
    }

    #[test]
    fn namespace_selector_applicability() {
        assert!(namespace_selector_applies(&target(
            "CREATE",
            "configmaps",
            "default"
        )));
        assert!(!namespace_selector_applies(&target("CREATE", "nodes", "")));
        assert!(namespace_selector_applies(&target(
            "CREATE",
            "namespaces",
            "team-a"
        )));
        assert!(namespace_labels_from_object(&target(
            "CREATE",
            "namespaces",
            "a"
        )));
        assert!(namespace_labels_from_object(&target(
            "UPDATE",
            "namespaces",
            "a"
        )));
        assert!(!namespace_labels_from_object(&target(
            "DELETE",
            "namespaces",
            "a"
        )));
        assert!(!namespace_labels_from_object(&target(
            "CREATE", "pods", "a"
        )));
    }

    #[test]
    fn object_selector_on_new_or_old_labels() {
        let sel = LabelSelector::from_json(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "back"]},
                {"key": "skip", "operator": "DoesNotExist"},
            ],
        }))
        .unwrap();
        let obj = |labels: Value| json!({"metadata": {"labels": labels}});
        let good = obj(json!({"app": "web", "tier": "front"}));
        let skipped = obj(json!({"app": "web", "tier": "front", "skip": "yes"}));
        let other = obj(json!({"app": "db", "tier": "front"}));
        assert!(object_selector_matches(&sel, Some(&good), None));
        assert!(!object_selector_matches(&sel, Some(&skipped), None));
        assert!(!object_selector_matches(&sel, Some(&other), None));
        // Either object: an update that removes the labels still matches.
        assert!(object_selector_matches(&sel, Some(&other), Some(&good)));
        assert!(object_selector_matches(&sel, None, Some(&good)));
        assert!(!object_selector_matches(&sel, None, None));
        assert!(!object_selector_matches(
            &sel,
            Some(&json!({"metadata": {}})),
            None
        ));

        let not_in = LabelSelector::from_json(&json!({"matchExpressions": [
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "team", "operator": "Exists"},
        ]}))
        .unwrap();
        assert!(object_selector_matches(
            &not_in,
            Some(&obj(json!({"team": "a"}))),
            None
        ));
        assert!(!object_selector_matches(
            &not_in,
            Some(&obj(json!({"team": "a", "env": "prod"}))),
            None
        ));
        assert!(!object_selector_matches(
            &not_in,
            Some(&obj(json!({}))),
            None
        ));

        let everything = LabelSelector::from_json(&json!({})).unwrap();
        assert!(object_selector_matches(&everything, None, None));
    }

    #[test]
    fn admission_configuration_is_exempt() {
        assert!(is_exempt(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration"
        ));
        assert!(is_exempt(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration"
        ));
        assert!(!is_exempt("", "ConfigMap"));
    }
}
