//! Classification: which FlowSchema a request matches, hence its priority level, and
//! which flow of that schema it belongs to. Follows kube's
//! `k8s.io/apiserver/pkg/util/flowcontrol/rule.go` (`matchesFlowSchema`) and
//! `apf_controller.go` (`startRequest`, `computeFlowDistinguisher`).
//!
//! - Schemas are tried by increasing `matchingPrecedence`, ties by name; the first
//!   matching wins. Should none match (the mandatory `catch-all` covers every
//!   authenticated and unauthenticated user), `catch-all` is taken, as kube does.
//! - A rule matches when a subject matches and, for a resource request, a resource
//!   rule does (verb, API group, `resource` or `resource/subresource`, then the
//!   namespace, or `clusterScope` when there is none), for a non-resource request a
//!   non-resource rule does (verb and path).
//! - `*` in a list is kube's wildcard only as the list's one member (validation
//!   makes it so); a non-resource URL matches exactly, as `*`, or as a prefix: the
//!   URL less a trailing `*`, ending in `/` (so `/healthz` also covers
//!   `/healthz/etcd`, as kube's `matchPolicyRuleNonResourceURL` does).
//! - The distinguisher (user name or namespace) is only computed when the level queues
//!   in more than one queue, since it only picks queues (kube leaves it empty too).

use std::borrow::Cow;

use http::HeaderValue;

use super::config::{
    CATCH_ALL, Config, Distinguisher, FlowSchema, NonResourceRule, PolicyRules, ResourceRule,
    Subject,
};

/// What classification reads of a request; the caller maps its own request types,
/// lending its strings (a request is classified once, and copying its attributes cost
/// more than matching them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestAttributes<'a> {
    /// The user's name (`system:serviceaccount:<ns>:<name>` for a service account).
    pub user: Cow<'a, str>,
    /// The user's groups.
    pub groups: Cow<'a, [String]>,
    /// The verb: `get`, `list`, `watch`, `create`, ... for resources; the lowercased
    /// HTTP method for non-resource paths.
    pub verb: Cow<'a, str>,
    /// Whether the request addresses a resource.
    pub resource_request: bool,
    /// The API group (`""` for core).
    pub api_group: Cow<'a, str>,
    /// The resource's plural.
    pub resource: Cow<'a, str>,
    /// The subresource, or empty.
    pub subresource: Cow<'a, str>,
    /// The namespace, empty for a cluster-scoped request.
    pub namespace: Cow<'a, str>,
    /// The path, for a non-resource request.
    pub path: Cow<'a, str>,
}

/// Where a request goes: its schema, its level and its flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classification {
    /// The matching FlowSchema's name.
    pub flow_schema: String,
    /// Its uid, as `X-Kubernetes-PF-FlowSchema-UID` carries it.
    pub flow_schema_uid: HeaderValue,
    /// The priority level's name.
    pub priority_level: String,
    /// Its uid, as `X-Kubernetes-PF-PriorityLevel-UID` carries it.
    pub priority_level_uid: HeaderValue,
    /// The flow distinguisher (user name or namespace; empty when unused).
    pub distinguisher: String,
    /// Whether the level is exempt from limits.
    pub exempt: bool,
}

impl Config {
    /// Classifies a request.
    pub fn classify(&self, attrs: &RequestAttributes) -> Classification {
        let schema = self
            .flow_schemas
            .iter()
            .find(|fs| matches_schema(fs, attrs))
            .or_else(|| self.flow_schemas.iter().find(|fs| fs.name == CATCH_ALL))
            .expect("the catch-all FlowSchema is always configured");
        let level = &self.levels[&schema.priority_level];
        let queued = level.queuing().is_some_and(|(queues, _, _)| queues > 1);
        let distinguisher = match schema.distinguisher {
            _ if !queued => "",
            Distinguisher::None => "",
            Distinguisher::ByUser => &attrs.user,
            Distinguisher::ByNamespace => &attrs.namespace,
        };
        Classification {
            flow_schema: schema.name.clone(),
            flow_schema_uid: header_value(&schema.uid),
            priority_level: level.name.clone(),
            priority_level_uid: header_value(&level.uid),
            distinguisher: distinguisher.into(),
            exempt: level.is_exempt(),
        }
    }
}

/// A uid as a header's value (empty should it not be one: uids are ASCII).
fn header_value(uid: &str) -> HeaderValue {
    HeaderValue::from_str(uid).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Whether any of the schema's rules matches.
pub fn matches_schema(schema: &FlowSchema, attrs: &RequestAttributes) -> bool {
    schema.rules.iter().any(|rules| matches_rules(rules, attrs))
}

/// Whether a subject and a rule of the request's kind match.
fn matches_rules(rules: &PolicyRules, attrs: &RequestAttributes) -> bool {
    if !rules.subjects.iter().any(|s| matches_subject(s, attrs)) {
        return false;
    }
    if attrs.resource_request {
        rules
            .resource_rules
            .iter()
            .any(|r| matches_resource(r, attrs))
    } else {
        rules
            .non_resource_rules
            .iter()
            .any(|r| matches_non_resource(r, attrs))
    }
}

/// Whether a subject covers the user.
fn matches_subject(subject: &Subject, attrs: &RequestAttributes) -> bool {
    match subject {
        Subject::User(name) => name == "*" || *name == attrs.user,
        Subject::Group(name) => name == "*" || attrs.groups.iter().any(|g| g == name),
        Subject::ServiceAccount { namespace, name } => {
            let Some((ns, sa)) = service_account(&attrs.user) else {
                return false;
            };
            ns == namespace && (name == "*" || sa == name)
        }
    }
}

/// The namespace and name of a service account's user name.
fn service_account(user: &str) -> Option<(&str, &str)> {
    user.strip_prefix("system:serviceaccount:")?.split_once(':')
}

/// Whether `value` is in `list`, or `list` is just the wildcard.
fn listed(list: &[String], value: &str, wildcard: &str) -> bool {
    (list.len() == 1 && list[0] == wildcard) || list.iter().any(|v| v == value)
}

/// Whether a resource rule matches.
fn matches_resource(rule: &ResourceRule, attrs: &RequestAttributes) -> bool {
    let joined;
    let resource = if attrs.subresource.is_empty() {
        &attrs.resource
    } else {
        joined = format!("{}/{}", attrs.resource, attrs.subresource);
        joined.as_str()
    };
    if !listed(&rule.verbs, &attrs.verb, "*")
        || !listed(&rule.resources, resource, "*")
        || !listed(&rule.api_groups, &attrs.api_group, "*")
    {
        return false;
    }
    if attrs.namespace.is_empty() {
        rule.cluster_scope
    } else {
        listed(&rule.namespaces, &attrs.namespace, "*")
    }
}

/// Whether a non-resource rule matches.
fn matches_non_resource(rule: &NonResourceRule, attrs: &RequestAttributes) -> bool {
    listed(&rule.verbs, &attrs.verb, "*")
        && rule
            .non_resource_urls
            .iter()
            .any(|url| matches_url(url, &attrs.path))
}

/// Whether a rule's URL covers `path`.
fn matches_url(url: &str, path: &str) -> bool {
    if url == "*" || url == path {
        return true;
    }
    let prefix = url.strip_suffix('*').unwrap_or(url);
    if prefix.ends_with('/') {
        path.starts_with(prefix)
    } else {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdata::bootstrap_config;
    use super::*;

    type Attrs = RequestAttributes<'static>;

    fn owned(s: &str) -> Cow<'static, str> {
        Cow::Owned(s.to_string())
    }

    fn user(name: &str, groups: &[&str]) -> Attrs {
        RequestAttributes {
            user: owned(name),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    fn resource(mut attrs: Attrs, verb: &str, group: &str, resource: &str, ns: &str) -> Attrs {
        attrs.resource_request = true;
        attrs.verb = owned(verb);
        attrs.api_group = owned(group);
        let (res, sub) = resource.split_once('/').unwrap_or((resource, ""));
        attrs.resource = owned(res);
        attrs.subresource = owned(sub);
        attrs.namespace = owned(ns);
        attrs
    }

    fn path(mut attrs: Attrs, verb: &str, path: &str) -> Attrs {
        attrs.verb = owned(verb);
        attrs.path = owned(path);
        attrs
    }

    const AUTH: &str = "system:authenticated";

    #[test]
    fn bootstrap_schemas_classify_typical_requests() {
        let config = bootstrap_config();
        let node = || user("system:node:n1", &["system:nodes", AUTH]);
        let sa = |ns: &str, name: &str| {
            user(
                &format!("system:serviceaccount:{ns}:{name}"),
                &[
                    "system:serviceaccounts",
                    &format!("system:serviceaccounts:{ns}"),
                    AUTH,
                ],
            )
        };
        let cases: Vec<(RequestAttributes, &str, &str)> = vec![
            (
                resource(
                    user("admin", &["system:masters", AUTH]),
                    "delete",
                    "",
                    "pods",
                    "a",
                ),
                "exempt",
                "exempt",
            ),
            (
                path(
                    user("system:anonymous", &["system:unauthenticated"]),
                    "get",
                    "/readyz",
                ),
                "probes",
                "exempt",
            ),
            (
                path(user("jane", &[AUTH]), "get", "/livez"),
                "probes",
                "exempt",
            ),
            (
                path(user("jane", &[AUTH]), "get", "/healthz/etcd"),
                "probes",
                "exempt",
            ),
            (
                path(user("jane", &[AUTH]), "post", "/healthz"),
                "global-default",
                "global-default",
            ),
            (
                resource(node(), "update", "", "nodes/status", ""),
                "system-node-high",
                "node-high",
            ),
            (
                resource(
                    node(),
                    "update",
                    "coordination.k8s.io",
                    "leases",
                    "kube-node-lease",
                ),
                "system-node-high",
                "node-high",
            ),
            (
                resource(node(), "get", "", "pods", "default"),
                "system-nodes",
                "system",
            ),
            (
                resource(
                    user("system:kube-scheduler", &[AUTH]),
                    "update",
                    "coordination.k8s.io",
                    "leases",
                    "kube-system",
                ),
                "system-leader-election",
                "leader-election",
            ),
            (
                resource(
                    user("system:kube-scheduler", &[AUTH]),
                    "list",
                    "",
                    "pods",
                    "",
                ),
                "kube-scheduler",
                "workload-high",
            ),
            (
                resource(
                    user("system:kube-controller-manager", &[AUTH]),
                    "update",
                    "",
                    "endpoints",
                    "default",
                ),
                "endpoint-controller",
                "workload-high",
            ),
            (
                resource(sa("kube-system", "coredns"), "list", "", "services", ""),
                "kube-system-service-accounts",
                "workload-high",
            ),
            (
                resource(sa("kube-system", "x"), "update", "", "configmaps", "team"),
                "workload-leader-election",
                "leader-election",
            ),
            (
                resource(sa("team", "builder"), "create", "batch", "jobs", "team"),
                "service-accounts",
                "workload-low",
            ),
            (
                resource(user("jane", &[AUTH]), "list", "apps", "deployments", "team"),
                "global-default",
                "global-default",
            ),
            (
                resource(
                    user("system:anonymous", &["system:unauthenticated"]),
                    "get",
                    "",
                    "namespaces",
                    "",
                ),
                "global-default",
                "global-default",
            ),
            // In no group the bootstrap schemas name: none matches, catch-all is taken.
            (
                resource(user("odd", &[]), "get", "", "pods", "a"),
                "catch-all",
                "catch-all",
            ),
        ];
        for (attrs, schema, level) in cases {
            let c = config.classify(&attrs);
            assert_eq!(
                (c.flow_schema.as_str(), c.priority_level.as_str()),
                (schema, level),
                "{attrs:?}"
            );
            assert_eq!(c.exempt, level == "exempt");
        }
    }

    #[test]
    fn distinguisher_follows_the_method_and_uids_are_kept() {
        let config = bootstrap_config();
        let by_user = config.classify(&resource(user("jane", &[AUTH]), "get", "", "pods", "ns1"));
        assert_eq!(by_user.distinguisher, "jane");
        assert_eq!(by_user.flow_schema_uid, "uid-fs-global-default");
        assert_eq!(by_user.priority_level_uid, "uid-pl-global-default");
        let by_ns = config.classify(&resource(
            user("system:kube-scheduler", &[AUTH]),
            "get",
            "",
            "pods",
            "ns1",
        ));
        assert_eq!(by_ns.distinguisher, "ns1");
        // The exempt level does not queue: no distinguisher.
        let exempt = config.classify(&path(user("a", &["system:masters"]), "get", "/api"));
        assert_eq!(exempt.distinguisher, "");
    }

    #[test]
    fn url_and_wildcard_rules() {
        assert!(matches_url("*", "/anything"));
        assert!(matches_url("/apis/*", "/apis/apps"));
        assert!(!matches_url("/apis/*", "/api"));
        assert!(matches_url("/healthz", "/healthz"));
        assert!(matches_url("/healthz", "/healthz/ping"));
        assert!(!matches_url("/healthz", "/healthzz"));
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(listed(&s(&["*"]), "get", "*"));
        assert!(!listed(&s(&["list", "watch"]), "get", "*"));
        // A service account subject with name `*` covers its namespace only.
        let subject = Subject::ServiceAccount {
            namespace: "ns".into(),
            name: "*".into(),
        };
        assert!(matches_subject(
            &subject,
            &user("system:serviceaccount:ns:a", &[])
        ));
        assert!(!matches_subject(
            &subject,
            &user("system:serviceaccount:ns2:a", &[])
        ));
        assert!(!matches_subject(&subject, &user("ns:a", &[])));
    }
}
