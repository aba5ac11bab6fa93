//! The audit policy (`audit.k8s.io/v1` `Policy`): which requests are recorded, and how much
//! of them.
//!
//! Rules are tried in order and the first that matches decides; a request no rule matches
//! is not recorded ([`Level::None`]), as in kube-apiserver. Reading a policy file is in
//! [`Policy::from_file`] (see `policy_file.rs`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::authz::Attributes;

/// How much of a request is recorded. Ordered: each level records what the previous does,
/// and more.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Level {
    /// Not recorded.
    #[default]
    None,
    /// Who asked what, when, and the response code; no request or response bodies.
    Metadata,
    /// Metadata and the request object (resource requests only).
    Request,
    /// Metadata, the request object and the response object (resource requests only).
    RequestResponse,
}

impl Level {
    /// The level's name as the policy and events spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Level {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "None" => Ok(Level::None),
            "Metadata" => Ok(Level::Metadata),
            "Request" => Ok(Level::Request),
            "RequestResponse" => Ok(Level::RequestResponse),
            _ => Err(()),
        }
    }
}

/// A point in handling a request at which an event may be recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Stage {
    /// As soon as the request is received, before it is handled.
    RequestReceived,
    /// Once the response headers are sent, for long-running requests (watch) only.
    ResponseStarted,
    /// Once the response is complete.
    ResponseComplete,
    /// When handling the request panicked.
    Panic,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 4] = [
        Stage::RequestReceived,
        Stage::ResponseStarted,
        Stage::ResponseComplete,
        Stage::Panic,
    ];

    /// The stage's name as the policy and events spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Stage {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        Stage::ALL.into_iter().find(|st| st.as_str() == s).ok_or(())
    }
}

/// A set of stages, as a bit set: evaluating a policy allocates nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StageSet(u8);

impl StageSet {
    /// No stage.
    pub const EMPTY: StageSet = StageSet(0);

    /// The set of `stages`.
    pub fn of(stages: &[Stage]) -> Self {
        stages.iter().fold(Self::EMPTY, |s, st| s.with(*st))
    }

    /// This set and `stage`.
    #[must_use]
    pub fn with(self, stage: Stage) -> Self {
        StageSet(self.0 | stage.bit())
    }

    /// Both sets.
    #[must_use]
    pub fn union(self, other: StageSet) -> Self {
        StageSet(self.0 | other.0)
    }

    /// Whether `stage` is in the set.
    pub fn contains(self, stage: Stage) -> bool {
        self.0 & stage.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The stages in the set, in order.
    pub fn iter(self) -> impl Iterator<Item = Stage> {
        Stage::ALL.into_iter().filter(move |s| self.contains(*s))
    }
}

/// What the policy decided for one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestAuditConfig {
    /// How much to record; [`Level::None`] records nothing.
    pub level: Level,
    /// Stages at which no event is recorded (the policy's and the rule's together).
    pub omit_stages: StageSet,
    /// Whether `metadata.managedFields` is left out of recorded objects.
    pub omit_managed_fields: bool,
}

/// Resources of one API group that a rule applies to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupResources {
    /// The API group; `""` is the core group.
    pub group: String,
    /// `pods`, `pods/status`, `*` (every resource and subresource), `pods/*` (pods and
    /// their subresources), `*/status` (that subresource of any resource). Empty: every
    /// resource of the group.
    pub resources: Vec<String>,
    /// Object names the rule applies to; empty: every name.
    pub resource_names: Vec<String>,
}

/// One rule: a request matches when it matches every field that is set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyRule {
    /// The level of requests that match.
    pub level: Level,
    /// User names; empty: every user.
    pub users: Vec<String>,
    /// Groups, any of which the user must be in; empty: every user.
    pub user_groups: Vec<String>,
    /// Verbs; empty: every verb.
    pub verbs: Vec<String>,
    /// Resources; empty (with `namespaces` empty too): any request, resource or not.
    pub resources: Vec<GroupResources>,
    /// Namespaces; `""` is cluster-scoped resources. Empty: every namespace.
    pub namespaces: Vec<String>,
    /// Non-resource paths (`/healthz`, `/healthz*`, `*`).
    pub non_resource_urls: Vec<String>,
    /// Stages not recorded, in addition to the policy's.
    pub omit_stages: StageSet,
    /// Overrides the policy's `omitManagedFields` when set.
    pub omit_managed_fields: Option<bool>,
}

/// An audit policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// The rules, in order; the first that matches decides.
    pub rules: Vec<PolicyRule>,
    /// Stages never recorded.
    pub omit_stages: StageSet,
    /// Whether `metadata.managedFields` is left out of recorded objects, unless a rule
    /// says otherwise.
    pub omit_managed_fields: bool,
}

impl Policy {
    /// The policy kapi uses when `--audit-log-path` is given without `--audit-policy-file`:
    /// every request at [`Level::Metadata`], without the `RequestReceived` stage.
    ///
    /// kube-apiserver records nothing without a policy file; kapi takes a log path on its
    /// own as asking for a log. Metadata never holds request or response bodies, so this
    /// records no Secret contents; `RequestReceived` is left out because it repeats what
    /// `ResponseComplete` says, minus the outcome.
    pub fn metadata_default() -> Self {
        Policy {
            rules: vec![PolicyRule {
                level: Level::Metadata,
                ..PolicyRule::default()
            }],
            omit_stages: StageSet::of(&[Stage::RequestReceived]),
            omit_managed_fields: false,
        }
    }

    /// What to record for the request `attrs` describes: the first matching rule's level,
    /// or [`Level::None`] when no rule matches. `attrs.user` must be the authenticated
    /// user, not an impersonated one (kube-apiserver decides before impersonation).
    ///
    /// Allocates nothing.
    pub fn evaluate(&self, attrs: &Attributes) -> RequestAuditConfig {
        match self.rules.iter().find(|r| r.matches(attrs)) {
            Some(rule) => RequestAuditConfig {
                level: rule.level,
                omit_stages: self.omit_stages.union(rule.omit_stages),
                omit_managed_fields: rule.omit_managed_fields.unwrap_or(self.omit_managed_fields),
            },
            None => RequestAuditConfig {
                level: Level::None,
                omit_stages: self.omit_stages,
                omit_managed_fields: self.omit_managed_fields,
            },
        }
    }
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|s| s == value)
}

impl PolicyRule {
    /// Whether the request `attrs` describes matches this rule.
    pub fn matches(&self, attrs: &Attributes) -> bool {
        let user = &attrs.user;
        if !self.users.is_empty() && !has(&self.users, &user.name) {
            return false;
        }
        if !self.user_groups.is_empty() && !user.groups.iter().any(|g| has(&self.user_groups, g)) {
            return false;
        }
        if !self.verbs.is_empty() && !has(&self.verbs, &attrs.verb) {
            return false;
        }
        // A rule is about resources, about non-resource paths, or (neither set) about
        // everything; validation keeps the two apart.
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return self.matches_resource(attrs);
        }
        if !self.non_resource_urls.is_empty() {
            return !attrs.resource_request
                && self
                    .non_resource_urls
                    .iter()
                    .any(|spec| path_matches(&attrs.path, spec));
        }
        true
    }

    fn matches_resource(&self, attrs: &Attributes) -> bool {
        if !attrs.resource_request {
            return false;
        }
        // Cluster-scoped requests have the namespace "", which `namespaces: [""]` names.
        if !self.namespaces.is_empty() && !has(&self.namespaces, &attrs.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        self.resources
            .iter()
            .filter(|gr| gr.group == attrs.api_group)
            .any(|gr| gr.matches(attrs))
    }
}

impl GroupResources {
    fn matches(&self, attrs: &Attributes) -> bool {
        if self.resources.is_empty() {
            return true;
        }
        if !self.resource_names.is_empty() && !has(&self.resource_names, &attrs.name) {
            return false;
        }
        let (resource, sub) = (attrs.resource.as_str(), attrs.subresource.as_str());
        self.resources.iter().any(|spec| {
            if spec == "*" {
                return true;
            }
            // `resource/*`: the resource itself and any of its subresources.
            if let Some(r) = spec.strip_suffix("/*") {
                if r == resource {
                    return true;
                }
            }
            match spec.split_once('/') {
                // `*/sub`: that subresource of any resource.
                Some(("*", s)) => !sub.is_empty() && s == sub,
                Some((r, s)) => r == resource && s == sub,
                None => sub.is_empty() && spec == resource,
            }
        })
    }
}

/// Whether a request path matches a `nonResourceURLs` entry: `*`, the exact path, or a
/// prefix ending in `*`.
fn path_matches(path: &str, spec: &str) -> bool {
    match spec.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix.trim_end_matches('*')),
        None => spec == path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::UserInfo;

    fn resource(verb: &str, group: &str, resource: &str, ns: &str, name: &str) -> Attributes {
        let (resource, sub) = resource.split_once('/').unwrap_or((resource, ""));
        Attributes {
            user: UserInfo::new("jane", &["dev", "system:authenticated"]),
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            api_version: "v1".into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            namespace: ns.into(),
            path: String::new(),
        }
    }

    fn non_resource(verb: &str, path: &str) -> Attributes {
        Attributes {
            user: UserInfo::new("jane", &["dev"]),
            verb: verb.into(),
            path: path.into(),
            ..Attributes::default()
        }
    }

    fn rule(level: Level) -> PolicyRule {
        PolicyRule {
            level,
            ..PolicyRule::default()
        }
    }

    fn group(group: &str, resources: &[&str], names: &[&str]) -> GroupResources {
        GroupResources {
            group: group.into(),
            resources: resources.iter().map(|s| s.to_string()).collect(),
            resource_names: names.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn level(rule: &PolicyRule, attrs: &Attributes) -> Level {
        Policy {
            rules: vec![rule.clone()],
            ..Policy::default()
        }
        .evaluate(attrs)
        .level
    }

    #[test]
    fn no_rule_matching_is_none() {
        let p = Policy {
            rules: vec![PolicyRule {
                users: strings(&["bob"]),
                ..rule(Level::Metadata)
            }],
            ..Policy::default()
        };
        let c = p.evaluate(&resource("get", "", "pods", "ns", "p"));
        assert_eq!(c.level, Level::None);
    }

    #[test]
    fn first_matching_rule_wins() {
        let p = Policy {
            rules: vec![
                PolicyRule {
                    verbs: strings(&["get"]),
                    ..rule(Level::None)
                },
                rule(Level::RequestResponse),
                rule(Level::Metadata),
            ],
            ..Policy::default()
        };
        assert_eq!(
            p.evaluate(&resource("get", "", "pods", "a", "")).level,
            Level::None
        );
        assert_eq!(
            p.evaluate(&resource("list", "", "pods", "a", "")).level,
            Level::RequestResponse
        );
    }

    #[test]
    fn users_groups_and_verbs_each_narrow() {
        let attrs = resource("create", "apps", "deployments", "a", "d");
        let by_user = PolicyRule {
            users: strings(&["bob", "jane"]),
            ..rule(Level::Request)
        };
        assert_eq!(level(&by_user, &attrs), Level::Request);
        let other_user = PolicyRule {
            users: strings(&["bob"]),
            ..rule(Level::Request)
        };
        assert_eq!(level(&other_user, &attrs), Level::None);
        let by_group = PolicyRule {
            user_groups: strings(&["ops", "dev"]),
            ..rule(Level::Request)
        };
        assert_eq!(level(&by_group, &attrs), Level::Request);
        let other_group = PolicyRule {
            user_groups: strings(&["ops"]),
            ..rule(Level::Request)
        };
        assert_eq!(level(&other_group, &attrs), Level::None);
        let verbs = PolicyRule {
            verbs: strings(&["update", "create"]),
            ..rule(Level::Request)
        };
        assert_eq!(level(&verbs, &attrs), Level::Request);
        let verbs = PolicyRule {
            verbs: strings(&["get"]),
            ..rule(Level::Request)
        };
        assert_eq!(level(&verbs, &attrs), Level::None);
        // Every field set must match.
        let both = PolicyRule {
            users: strings(&["jane"]),
            verbs: strings(&["get"]),
            ..rule(Level::Request)
        };
        assert_eq!(level(&both, &attrs), Level::None);
    }

    #[test]
    fn resources_and_subresources() {
        let r = |specs: &[&str]| PolicyRule {
            resources: vec![group("", specs, &[])],
            ..rule(Level::Metadata)
        };
        let pods = resource("get", "", "pods", "a", "p");
        let status = resource("get", "", "pods/status", "a", "p");
        let log = resource("get", "", "pods/log", "a", "p");
        let svc_status = resource("get", "", "services/status", "a", "s");
        let m = Level::Metadata;
        let n = Level::None;

        assert_eq!(level(&r(&["pods"]), &pods), m);
        assert_eq!(
            level(&r(&["pods"]), &status),
            n,
            "pods does not match pods/status"
        );
        assert_eq!(level(&r(&["pods/status"]), &status), m);
        assert_eq!(level(&r(&["pods/status"]), &pods), n);
        assert_eq!(level(&r(&["pods/status"]), &log), n);
        assert_eq!(level(&r(&["*"]), &status), m, "* matches subresources");
        assert_eq!(level(&r(&["*/status"]), &svc_status), m);
        assert_eq!(level(&r(&["*/status"]), &status), m);
        assert_eq!(level(&r(&["*/status"]), &log), n);
        assert_eq!(level(&r(&["*/status"]), &pods), n);
        assert_eq!(level(&r(&["pods/*"]), &log), m);
        assert_eq!(level(&r(&["pods/*"]), &pods), m, "pods/* matches pods too");
        assert_eq!(level(&r(&["pods/*"]), &svc_status), n);
        // Another group's resource of the same name does not match.
        assert_eq!(
            level(&r(&["pods"]), &resource("get", "x.io", "pods", "a", "")),
            n
        );
        // A group without resources matches all of the group.
        let whole = PolicyRule {
            resources: vec![group("apps", &[], &[])],
            ..rule(Level::Metadata)
        };
        assert_eq!(
            level(
                &whole,
                &resource("get", "apps", "deployments/scale", "a", "")
            ),
            m
        );
        assert_eq!(level(&whole, &pods), n);
    }

    #[test]
    fn resource_names() {
        let r = PolicyRule {
            resources: vec![group("", &["configmaps"], &["controller-leader"])],
            ..rule(Level::None)
        };
        let p = Policy {
            rules: vec![r, rule(Level::Metadata)],
            ..Policy::default()
        };
        let get = |name| {
            p.evaluate(&resource("get", "", "configmaps", "kube-system", name))
                .level
        };
        assert_eq!(get("controller-leader"), Level::None);
        assert_eq!(get("other"), Level::Metadata);
        // A list has no name, so a rule with names does not match it.
        assert_eq!(get(""), Level::Metadata);
    }

    #[test]
    fn namespaces_and_cluster_scope() {
        let cluster = PolicyRule {
            namespaces: strings(&[""]),
            ..rule(Level::Request)
        };
        assert_eq!(
            level(&cluster, &resource("get", "", "nodes", "", "n")),
            Level::Request
        );
        assert_eq!(
            level(&cluster, &resource("get", "", "pods", "a", "p")),
            Level::None
        );
        let system = PolicyRule {
            namespaces: strings(&["kube-system"]),
            ..rule(Level::Request)
        };
        assert_eq!(
            level(&system, &resource("get", "", "pods", "kube-system", "")),
            Level::Request
        );
        assert_eq!(
            level(&system, &resource("get", "", "pods", "a", "")),
            Level::None
        );
        // A namespace rule is a resource rule: non-resource requests never match it.
        assert_eq!(
            level(&cluster, &non_resource("get", "/healthz")),
            Level::None
        );
    }

    #[test]
    fn non_resource_urls() {
        let r = |specs: &[&str]| PolicyRule {
            non_resource_urls: strings(specs),
            ..rule(Level::Metadata)
        };
        let m = Level::Metadata;
        let n = Level::None;
        assert_eq!(
            level(&r(&["/healthz"]), &non_resource("get", "/healthz")),
            m
        );
        assert_eq!(
            level(&r(&["/healthz"]), &non_resource("get", "/healthz/etcd")),
            n
        );
        assert_eq!(
            level(&r(&["/healthz*"]), &non_resource("get", "/healthz/etcd")),
            m
        );
        assert_eq!(
            level(&r(&["/healthz*"]), &non_resource("get", "/healthz")),
            m
        );
        assert_eq!(level(&r(&["/api*"]), &non_resource("get", "/apis/apps")), m);
        assert_eq!(level(&r(&["*"]), &non_resource("get", "/version")), m);
        assert_eq!(
            level(
                &r(&["/version", "/metrics"]),
                &non_resource("get", "/metrics")
            ),
            m
        );
        // Resource requests never match a non-resource rule, even by path.
        let mut pods = resource("get", "", "pods", "a", "");
        pods.path = "/api/v1/namespaces/a/pods".into();
        assert_eq!(level(&r(&["*"]), &pods), n);
        // A rule with neither matches both kinds.
        assert_eq!(level(&rule(m), &non_resource("get", "/version")), m);
        assert_eq!(level(&rule(m), &pods), m);
    }

    #[test]
    fn omit_stages_are_the_union_and_managed_fields_the_rule_override() {
        let p = Policy {
            rules: vec![
                PolicyRule {
                    verbs: strings(&["watch"]),
                    omit_stages: StageSet::of(&[Stage::ResponseStarted]),
                    omit_managed_fields: Some(false),
                    ..rule(Level::Metadata)
                },
                rule(Level::Request),
            ],
            omit_stages: StageSet::of(&[Stage::RequestReceived]),
            omit_managed_fields: true,
        };
        let watch = p.evaluate(&resource("watch", "", "pods", "", ""));
        assert!(watch.omit_stages.contains(Stage::RequestReceived));
        assert!(watch.omit_stages.contains(Stage::ResponseStarted));
        assert!(!watch.omit_stages.contains(Stage::ResponseComplete));
        assert!(!watch.omit_managed_fields);
        let get = p.evaluate(&resource("get", "", "pods", "", ""));
        assert_eq!(get.omit_stages, StageSet::of(&[Stage::RequestReceived]));
        assert!(get.omit_managed_fields);
    }

    #[test]
    fn metadata_default_records_everything_at_metadata() {
        let p = Policy::metadata_default();
        let c = p.evaluate(&resource("create", "", "secrets", "a", "s"));
        assert_eq!(c.level, Level::Metadata);
        assert!(c.omit_stages.contains(Stage::RequestReceived));
        assert_eq!(
            p.evaluate(&non_resource("get", "/healthz")).level,
            Level::Metadata
        );
    }

    #[test]
    fn levels_are_ordered_and_named() {
        assert!(Level::None < Level::Metadata);
        assert!(Level::Request < Level::RequestResponse);
        for l in [
            Level::None,
            Level::Metadata,
            Level::Request,
            Level::RequestResponse,
        ] {
            assert_eq!(l.as_str().parse::<Level>(), Ok(l));
        }
        for s in Stage::ALL {
            assert_eq!(s.as_str().parse::<Stage>(), Ok(s));
        }
        assert_eq!(StageSet::of(&Stage::ALL).iter().count(), 4);
    }
}
