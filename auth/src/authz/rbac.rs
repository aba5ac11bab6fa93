//! The RBAC authorizer: which rules of `rbac.authorization.k8s.io/v1` objects apply to a
//! user, and whether one of them allows a request, with kube-apiserver's semantics
//! (`plugin/pkg/auth/authorizer/rbac` and `pkg/registry/rbac/validation/rule.go`).
//!
//! Nothing here reads storage: the server keeps a [`PolicySnapshot`] of the Roles,
//! ClusterRoles and bindings it has read, and asks [`authorize`] or [`rules_for`].

use std::collections::BTreeMap;
use std::fmt;
use std::ops::ControlFlow;

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};

use super::{Attributes, Decision};
use crate::user::UserInfo;
use kapi_validation::go::{aggregate, quote};

/// The API group of RBAC objects.
pub const API_GROUP: &str = "rbac.authorization.k8s.io";
/// `*` in a rule's verbs: every verb.
pub const VERB_ALL: &str = "*";
/// `*` in a rule's apiGroups: every group.
pub const API_GROUP_ALL: &str = "*";
/// `*` in a rule's resources: every resource and subresource.
pub const RESOURCE_ALL: &str = "*";
/// `*` in a rule's nonResourceURLs: every path.
pub const NON_RESOURCE_ALL: &str = "*";

/// A subject kind: a user, by name.
pub const USER_KIND: &str = "User";
/// A subject kind: a group, by membership.
pub const GROUP_KIND: &str = "Group";
/// A subject kind: a ServiceAccount, by namespace and name.
pub const SERVICE_ACCOUNT_KIND: &str = "ServiceAccount";

/// The RBAC objects an authorizer decides from, indexed as kube's listers are: Roles and
/// RoleBindings by namespace then name, ClusterRoles and ClusterRoleBindings by name.
///
/// Bindings are visited in name order, so the reason of an allowed request (the first
/// binding found) does not depend on the order the server read them in.
#[derive(Clone, Debug, Default)]
pub struct PolicySnapshot {
    roles: BTreeMap<String, BTreeMap<String, Role>>,
    cluster_roles: BTreeMap<String, ClusterRole>,
    role_bindings: BTreeMap<String, BTreeMap<String, RoleBinding>>,
    cluster_role_bindings: BTreeMap<String, ClusterRoleBinding>,
}

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    meta.name.clone().unwrap_or_default()
}

fn namespace_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    meta.namespace.clone().unwrap_or_default()
}

impl PolicySnapshot {
    /// An empty snapshot: nothing is allowed.
    pub fn new() -> Self {
        Self::default()
    }

    /// A snapshot of the given objects (later objects with the same key replace earlier ones).
    pub fn from_objects(
        roles: impl IntoIterator<Item = Role>,
        cluster_roles: impl IntoIterator<Item = ClusterRole>,
        role_bindings: impl IntoIterator<Item = RoleBinding>,
        cluster_role_bindings: impl IntoIterator<Item = ClusterRoleBinding>,
    ) -> Self {
        let mut snapshot = Self::new();
        roles.into_iter().for_each(|r| {
            snapshot.insert_role(r);
        });
        cluster_roles.into_iter().for_each(|r| {
            snapshot.insert_cluster_role(r);
        });
        role_bindings.into_iter().for_each(|b| {
            snapshot.insert_role_binding(b);
        });
        cluster_role_bindings.into_iter().for_each(|b| {
            snapshot.insert_cluster_role_binding(b);
        });
        snapshot
    }

    /// Adds or replaces a Role (keyed by its namespace and name); returns the one replaced.
    pub fn insert_role(&mut self, role: Role) -> Option<Role> {
        let (ns, name) = (namespace_of(&role.metadata), name_of(&role.metadata));
        self.roles.entry(ns).or_default().insert(name, role)
    }

    /// Removes a Role; returns it if it was there.
    pub fn remove_role(&mut self, namespace: &str, name: &str) -> Option<Role> {
        let in_ns = self.roles.get_mut(namespace)?;
        let removed = in_ns.remove(name);
        if in_ns.is_empty() {
            self.roles.remove(namespace);
        }
        removed
    }

    /// The Role `name` in `namespace`.
    pub fn role(&self, namespace: &str, name: &str) -> Option<&Role> {
        self.roles.get(namespace)?.get(name)
    }

    /// Adds or replaces a ClusterRole (keyed by name); returns the one replaced.
    pub fn insert_cluster_role(&mut self, role: ClusterRole) -> Option<ClusterRole> {
        self.cluster_roles.insert(name_of(&role.metadata), role)
    }

    /// Removes a ClusterRole; returns it if it was there.
    pub fn remove_cluster_role(&mut self, name: &str) -> Option<ClusterRole> {
        self.cluster_roles.remove(name)
    }

    /// The ClusterRole `name`.
    pub fn cluster_role(&self, name: &str) -> Option<&ClusterRole> {
        self.cluster_roles.get(name)
    }

    /// Every ClusterRole, in name order (what [`super::aggregation::aggregate`] needs).
    pub fn cluster_roles(&self) -> impl Iterator<Item = &ClusterRole> {
        self.cluster_roles.values()
    }

    /// Adds or replaces a RoleBinding (keyed by its namespace and name); returns the one
    /// replaced.
    pub fn insert_role_binding(&mut self, binding: RoleBinding) -> Option<RoleBinding> {
        let (ns, name) = (namespace_of(&binding.metadata), name_of(&binding.metadata));
        self.role_bindings
            .entry(ns)
            .or_default()
            .insert(name, binding)
    }

    /// Removes a RoleBinding; returns it if it was there.
    pub fn remove_role_binding(&mut self, namespace: &str, name: &str) -> Option<RoleBinding> {
        let in_ns = self.role_bindings.get_mut(namespace)?;
        let removed = in_ns.remove(name);
        if in_ns.is_empty() {
            self.role_bindings.remove(namespace);
        }
        removed
    }

    /// The RoleBindings of `namespace`, in name order.
    pub fn role_bindings(&self, namespace: &str) -> impl Iterator<Item = &RoleBinding> {
        self.role_bindings
            .get(namespace)
            .into_iter()
            .flat_map(|m| m.values())
    }

    /// Adds or replaces a ClusterRoleBinding (keyed by name); returns the one replaced.
    pub fn insert_cluster_role_binding(
        &mut self,
        binding: ClusterRoleBinding,
    ) -> Option<ClusterRoleBinding> {
        self.cluster_role_bindings
            .insert(name_of(&binding.metadata), binding)
    }

    /// Removes a ClusterRoleBinding; returns it if it was there.
    pub fn remove_cluster_role_binding(&mut self, name: &str) -> Option<ClusterRoleBinding> {
        self.cluster_role_bindings.remove(name)
    }

    /// Every ClusterRoleBinding, in name order.
    pub fn cluster_role_bindings(&self) -> impl Iterator<Item = &ClusterRoleBinding> {
        self.cluster_role_bindings.values()
    }

    /// The rules a binding's `roleRef` grants, as kube's `GetRoleReferenceRules`: a Role
    /// of the binding's namespace (`""` for a ClusterRoleBinding, which cannot reference
    /// one) or a ClusterRole.
    pub fn role_reference_rules(
        &self,
        role_ref: &RoleRef,
        binding_namespace: &str,
    ) -> Result<&[PolicyRule], ResolutionError> {
        match role_ref.kind.as_str() {
            "Role" => {
                // A ClusterRoleBinding has no namespace to find a Role in (validation
                // refuses such a roleRef): kube's lister answers NotFound.
                self.role(binding_namespace, &role_ref.name)
                    .map(|r| r.rules.as_deref().unwrap_or_default())
                    .ok_or_else(|| ResolutionError::RoleNotFound {
                        namespace: binding_namespace.to_string(),
                        name: role_ref.name.clone(),
                    })
            }
            "ClusterRole" => self
                .cluster_role(&role_ref.name)
                .map(|r| r.rules.as_deref().unwrap_or_default())
                .ok_or_else(|| ResolutionError::ClusterRoleNotFound {
                    name: role_ref.name.clone(),
                }),
            other => Err(ResolutionError::UnsupportedKind(other.to_string())),
        }
    }
}

/// Why the rules of a binding could not be found. Rules are additive, so such errors do
/// not stop a decision; they are reported with a refusal, as kube does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolutionError {
    /// A binding references a Role that does not exist.
    RoleNotFound {
        /// The binding's namespace.
        namespace: String,
        /// The Role's name.
        name: String,
    },
    /// A binding references a ClusterRole that does not exist.
    ClusterRoleNotFound {
        /// The ClusterRole's name.
        name: String,
    },
    /// A binding's `roleRef.kind` is neither `Role` nor `ClusterRole`.
    UnsupportedKind(String),
}

impl fmt::Display for ResolutionError {
    /// kube's wording: the lister's NotFound (`role.rbac.authorization.k8s.io "x" not
    /// found`) or the resolver's own messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolutionError::RoleNotFound { name, .. } => {
                write!(f, "role.{API_GROUP} {} not found", quote(name))
            }
            ResolutionError::ClusterRoleNotFound { name } => {
                write!(f, "clusterrole.{API_GROUP} {} not found", quote(name))
            }
            ResolutionError::UnsupportedKind(kind) => {
                write!(f, "unsupported role reference kind: {}", quote(kind))
            }
        }
    }
}

impl std::error::Error for ResolutionError {}

/// Which binding, and which of its subjects, made a rule apply to a user.
#[derive(Clone, Copy, Debug)]
pub enum RuleSource<'a> {
    /// A ClusterRoleBinding.
    ClusterRoleBinding {
        /// The binding.
        binding: &'a ClusterRoleBinding,
        /// The first of its subjects that matched the user.
        subject: &'a Subject,
    },
    /// A RoleBinding of the request's namespace.
    RoleBinding {
        /// The binding.
        binding: &'a RoleBinding,
        /// The first of its subjects that matched the user.
        subject: &'a Subject,
    },
}

/// A subject as kube describes it: `User "alice"`, `ServiceAccount "name/namespace"`
/// (a ServiceAccount without namespace takes the binding's).
fn describe_subject(subject: &Subject, binding_namespace: &str) -> String {
    if subject.kind == SERVICE_ACCOUNT_KIND {
        let ns = match subject.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => ns,
            _ => binding_namespace,
        };
        format!(
            "{} {}",
            subject.kind,
            quote(&format!("{}/{ns}", subject.name))
        )
    } else {
        format!("{} {}", subject.kind, quote(&subject.name))
    }
}

impl fmt::Display for RuleSource<'_> {
    /// kube's describers: `ClusterRoleBinding "b" of ClusterRole "r" to Group "g"`,
    /// `RoleBinding "b/ns" of Role "r" to User "u"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleSource::ClusterRoleBinding { binding, subject } => write!(
                f,
                "ClusterRoleBinding {} of {} {} to {}",
                quote(&name_of(&binding.metadata)),
                binding.role_ref.kind,
                quote(&binding.role_ref.name),
                describe_subject(subject, ""),
            ),
            RuleSource::RoleBinding { binding, subject } => {
                let ns = namespace_of(&binding.metadata);
                write!(
                    f,
                    "RoleBinding {} of {} {} to {}",
                    quote(&format!("{}/{ns}", name_of(&binding.metadata))),
                    binding.role_ref.kind,
                    quote(&binding.role_ref.name),
                    describe_subject(subject, &ns),
                )
            }
        }
    }
}

/// What [`visit_rules_for`] hands its visitor.
#[derive(Clone, Debug)]
pub enum Visit<'a> {
    /// A rule that applies to the user, and the binding it comes from.
    Rule(RuleSource<'a>, &'a PolicyRule),
    /// A binding applies to the user but its role could not be found.
    Error(ResolutionError),
}

/// Whether a binding subject is the user, as kube's `appliesToUser`: a `User` by name, a
/// `Group` by membership, a `ServiceAccount` by its user name
/// `system:serviceaccount:{namespace}:{name}`, where a subject without namespace takes
/// `namespace` (the RoleBinding's; a ClusterRoleBinding's such subject matches nobody).
pub fn applies_to_user(user: &UserInfo, subject: &Subject, namespace: &str) -> bool {
    match subject.kind.as_str() {
        USER_KIND => user.name == subject.name,
        GROUP_KIND => user.in_group(&subject.name),
        SERVICE_ACCOUNT_KIND => {
            let sa_namespace = match subject.namespace.as_deref() {
                Some(ns) if !ns.is_empty() => ns,
                _ => namespace,
            };
            // Compare piecewise rather than formatting a name for every binding.
            !sa_namespace.is_empty()
                && user
                    .name
                    .strip_prefix("system:serviceaccount:")
                    .and_then(|rest| rest.strip_prefix(sa_namespace))
                    .and_then(|rest| rest.strip_prefix(':'))
                    == Some(subject.name.as_str())
        }
        _ => false,
    }
}

/// The first subject of a binding that is the user.
fn applies_to<'a>(
    user: &UserInfo,
    subjects: Option<&'a Vec<Subject>>,
    namespace: &str,
) -> Option<&'a Subject> {
    subjects?
        .iter()
        .find(|s| applies_to_user(user, s, namespace))
}

/// Calls `visitor` with every rule that applies to `user` in `namespace` (`""`: only
/// cluster-wide ones), and every role that could not be found, as kube's
/// `VisitRulesFor`: the ClusterRoleBindings first, then, for a namespace, its
/// RoleBindings. The visitor stops the walk with [`ControlFlow::Break`].
pub fn visit_rules_for<'a>(
    policy: &'a PolicySnapshot,
    user: &UserInfo,
    namespace: &str,
    mut visitor: impl FnMut(Visit<'a>) -> ControlFlow<()>,
) {
    let mut visit_binding = |source: RuleSource<'a>,
                             rules: Result<&'a [PolicyRule], ResolutionError>|
     -> ControlFlow<()> {
        match rules {
            Ok(rules) => rules
                .iter()
                .try_for_each(|rule| visitor(Visit::Rule(source, rule))),
            Err(e) => visitor(Visit::Error(e)),
        }
    };
    for binding in policy.cluster_role_bindings.values() {
        let Some(subject) = applies_to(user, binding.subjects.as_ref(), "") else {
            continue;
        };
        let rules = policy.role_reference_rules(&binding.role_ref, "");
        let source = RuleSource::ClusterRoleBinding { binding, subject };
        if visit_binding(source, rules).is_break() {
            return;
        }
    }
    if namespace.is_empty() {
        return;
    }
    for binding in policy.role_bindings(namespace) {
        let Some(subject) = applies_to(user, binding.subjects.as_ref(), namespace) else {
            continue;
        };
        let rules = policy.role_reference_rules(&binding.role_ref, namespace);
        let source = RuleSource::RoleBinding { binding, subject };
        if visit_binding(source, rules).is_break() {
            return;
        }
    }
}

/// The rules that apply to a user in a namespace, and the roles that could not be found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResolvedRules {
    /// Every rule, in visiting order (ClusterRoleBindings, then RoleBindings), not
    /// deduplicated, as kube's `RulesFor`.
    pub rules: Vec<PolicyRule>,
    /// Bindings whose role is missing: the rules may be incomplete (a
    /// SelfSubjectRulesReview says `incomplete` and gives these as `evaluationError`).
    pub errors: Vec<ResolutionError>,
}

/// Every rule that applies to `user` in `namespace` (`""`: cluster-wide only), with the
/// resolution errors met, as kube's `RulesFor`.
pub fn resolve_rules(policy: &PolicySnapshot, user: &UserInfo, namespace: &str) -> ResolvedRules {
    let mut resolved = ResolvedRules::default();
    visit_rules_for(policy, user, namespace, |visit| {
        match visit {
            Visit::Rule(_, rule) => resolved.rules.push(rule.clone()),
            Visit::Error(e) => resolved.errors.push(e),
        }
        ControlFlow::Continue(())
    });
    resolved
}

/// Every rule that applies to `user` in `namespace` (`""`: cluster-wide only), as kube's
/// `RulesFor` (for SelfSubjectRulesReview and escalation checks). Missing roles are
/// skipped; [`resolve_rules`] reports them.
pub fn rules_for(policy: &PolicySnapshot, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
    resolve_rules(policy, user, namespace).rules
}

/// kube's RBAC decision: `Allow` with the reason of the first rule that allows the
/// request (`RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "u"`);
/// otherwise `NoOpinion`, whose reason lists the roles that could not be found (`RBAC:
/// clusterrole.rbac.authorization.k8s.io "x" not found`) or is empty. RBAC never denies.
pub fn authorize(policy: &PolicySnapshot, attrs: &Attributes) -> Decision {
    let mut allowed_by = None;
    let mut errors = Vec::new();
    visit_rules_for(policy, &attrs.user, &attrs.namespace, |visit| match visit {
        Visit::Rule(source, rule) if rule_allows(attrs, rule) => {
            allowed_by = Some(source.to_string());
            ControlFlow::Break(())
        }
        Visit::Rule(..) => ControlFlow::Continue(()),
        Visit::Error(e) => {
            errors.push(e.to_string());
            ControlFlow::Continue(())
        }
    });
    match allowed_by {
        Some(source) => Decision::Allow(format!("RBAC: allowed by {source}")),
        None if errors.is_empty() => Decision::NoOpinion(String::new()),
        None => Decision::NoOpinion(format!("RBAC: {}", aggregate(&errors))),
    }
}

/// The RBAC authorizer over a snapshot, for callers that prefer a value to functions.
#[derive(Clone, Copy, Debug)]
pub struct RbacAuthorizer<'a> {
    policy: &'a PolicySnapshot,
}

impl<'a> RbacAuthorizer<'a> {
    /// An authorizer deciding from `policy`.
    pub fn new(policy: &'a PolicySnapshot) -> Self {
        Self { policy }
    }

    /// See [`authorize`].
    pub fn authorize(&self, attrs: &Attributes) -> Decision {
        authorize(self.policy, attrs)
    }

    /// See [`rules_for`].
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
        rules_for(self.policy, user, namespace)
    }
}

/// Whether one rule allows the request, as kube's `RuleAllows`: verb, API group,
/// resource (with subresource) and name for a resource request; verb and path otherwise.
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if attrs.resource_request {
        let combined;
        let resource = if attrs.subresource.is_empty() {
            attrs.resource.as_str()
        } else {
            combined = format!("{}/{}", attrs.resource, attrs.subresource);
            combined.as_str()
        };
        verb_matches(rule, &attrs.verb)
            && api_group_matches(rule, &attrs.api_group)
            && resource_matches(rule, resource, &attrs.subresource)
            && resource_name_matches(rule, &attrs.name)
    } else {
        verb_matches(rule, &attrs.verb) && non_resource_url_matches(rule, &attrs.path)
    }
}

/// Whether any of the rules allows the request.
pub fn rules_allow(attrs: &Attributes, rules: &[PolicyRule]) -> bool {
    rules.iter().any(|r| rule_allows(attrs, r))
}

fn list(v: &Option<Vec<String>>) -> &[String] {
    v.as_deref().unwrap_or_default()
}

/// Whether the rule's verbs hold `verb` or `*`.
pub fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == VERB_ALL || v == verb)
}

/// Whether the rule's apiGroups hold `group` or `*`.
pub fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    list(&rule.api_groups)
        .iter()
        .any(|g| g == API_GROUP_ALL || g == group)
}

/// Whether the rule's resources hold the requested `resource` (`pods`, or `pods/status`
/// with its `subresource`), as kube's `ResourceMatches`: `*` matches everything, an
/// exact entry matches, and `*/status` matches the `status` subresource of any resource.
/// `pods/*` is not a wildcard in kube: it matches only a subresource literally named `*`.
pub fn resource_matches(rule: &PolicyRule, resource: &str, subresource: &str) -> bool {
    list(&rule.resources).iter().any(|r| {
        r == RESOURCE_ALL
            || r == resource
            || (!subresource.is_empty()
                && r.strip_prefix("*/").is_some_and(|sub| sub == subresource))
    })
}

/// Whether the rule allows the object `name`: a rule without resourceNames allows any
/// (and no) name; one with resourceNames only those names, so never a request without a
/// name (list, watch, create, deletecollection).
pub fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    let names = list(&rule.resource_names);
    names.is_empty() || names.iter().any(|n| n == name)
}

/// Whether the rule's nonResourceURLs hold `path`: `*`, the exact path, or a prefix
/// ending in `*` (`/apis/*` holds `/apis/apps/v1`, and `/apis/`, but not `/apis`).
pub fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    list(&rule.non_resource_urls).iter().any(|u| {
        u == NON_RESOURCE_ALL
            || u == path
            || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::fixtures::*;

    fn allowed(policy: &PolicySnapshot, attrs: &Attributes) -> bool {
        authorize(policy, attrs).allowed()
    }

    fn reason(policy: &PolicySnapshot, attrs: &Attributes) -> String {
        match authorize(policy, attrs) {
            Decision::Allow(r) | Decision::NoOpinion(r) | Decision::Deny(r) => r,
        }
    }

    /// One ClusterRole with `rules`, bound cluster-wide to `alice`.
    fn alice_may(rules: Vec<PolicyRule>) -> PolicySnapshot {
        PolicySnapshot::from_objects(
            [],
            [cluster_role("r", rules)],
            [],
            [cluster_role_binding("b", "r", vec![user_subject("alice")])],
        )
    }

    #[test]
    fn user_subjects_match_by_name() {
        let policy = PolicySnapshot::from_objects(
            [role(
                "ns1",
                "pod-reader",
                vec![rule(&["get"], &[""], &["pods"])],
            )],
            [],
            [role_binding(
                "ns1",
                "read",
                "Role",
                "pod-reader",
                vec![user_subject("alice")],
            )],
            [],
        );
        let get = |u: &UserInfo| request(u, "get", "", "pods", "ns1", "p");
        assert_eq!(
            authorize(&policy, &get(&user("alice", &[]))),
            Decision::Allow(
                r#"RBAC: allowed by RoleBinding "read/ns1" of Role "pod-reader" to User "alice""#
                    .into()
            )
        );
        assert_eq!(
            authorize(&policy, &get(&user("bob", &[]))),
            Decision::NoOpinion(String::new())
        );
        // A user named like the group does not match a User subject of another name.
        assert!(!allowed(&policy, &get(&user("alicex", &["alice"]))));
    }

    #[test]
    fn group_subjects_match_by_membership() {
        let policy = PolicySnapshot::from_objects(
            [],
            [cluster_role(
                "pods",
                vec![rule(&["list"], &[""], &["pods"])],
            )],
            [],
            [cluster_role_binding(
                "devs-pods",
                "pods",
                vec![group_subject("devs")],
            )],
        );
        let list = |u: &UserInfo| request(u, "list", "", "pods", "", "");
        assert_eq!(
            reason(&policy, &list(&user("carol", &["devs"]))),
            r#"RBAC: allowed by ClusterRoleBinding "devs-pods" of ClusterRole "pods" to Group "devs""#
        );
        assert!(!allowed(&policy, &list(&user("devs", &["ops"]))));
    }

    #[test]
    fn service_account_subjects_match_by_namespace_and_name() {
        let policy = PolicySnapshot::from_objects(
            [],
            [cluster_role("pods", vec![rule(&["get"], &[""], &["pods"])])],
            [role_binding(
                "ns1",
                "local",
                "ClusterRole",
                "pods",
                vec![sa_subject(None, "builder")],
            )],
            [
                cluster_role_binding("sa", "pods", vec![sa_subject(Some("ci"), "runner")]),
                // Without a namespace a ClusterRoleBinding's ServiceAccount is nobody.
                cluster_role_binding("no-ns", "pods", vec![sa_subject(None, "builder")]),
            ],
        );
        let sa = |ns: &str, name: &str| user(&format!("system:serviceaccount:{ns}:{name}"), &[]);
        let get = |u: &UserInfo, ns: &str| request(u, "get", "", "pods", ns, "p");

        assert_eq!(
            reason(&policy, &get(&sa("ci", "runner"), "other")),
            r#"RBAC: allowed by ClusterRoleBinding "sa" of ClusterRole "pods" to ServiceAccount "runner/ci""#
        );
        assert!(!allowed(&policy, &get(&sa("ci2", "runner"), "other")));
        assert!(!allowed(&policy, &get(&sa("c", "i:runner"), "other")));
        assert!(!allowed(&policy, &get(&user("runner", &[]), "other")));

        // A RoleBinding's ServiceAccount without namespace is of the binding's namespace.
        assert_eq!(
            reason(&policy, &get(&sa("ns1", "builder"), "ns1")),
            r#"RBAC: allowed by RoleBinding "local/ns1" of ClusterRole "pods" to ServiceAccount "builder/ns1""#
        );
        assert!(!allowed(&policy, &get(&sa("ns2", "builder"), "ns1")));
        assert!(!allowed(&policy, &get(&sa("ns1", "builder"), "ns2")));
        assert!(!allowed(&policy, &get(&sa("ns1", "builder"), "")));
    }

    #[test]
    fn unknown_subject_kinds_match_nobody() {
        let mut subject = user_subject("alice");
        subject.kind = "Robot".into();
        let policy = PolicySnapshot::from_objects(
            [],
            [cluster_role("all", vec![rule(&["*"], &["*"], &["*"])])],
            [],
            [cluster_role_binding("b", "all", vec![subject])],
        );
        assert!(!allowed(
            &policy,
            &request(&user("alice", &[]), "get", "", "pods", "", "")
        ));
    }

    #[test]
    fn verbs_match_exactly_or_by_star() {
        let alice = user("alice", &[]);
        let policy = alice_may(vec![rule(&["get", "watch"], &[""], &["pods"])]);
        assert!(allowed(
            &policy,
            &request(&alice, "get", "", "pods", "ns", "p")
        ));
        assert!(allowed(
            &policy,
            &request(&alice, "watch", "", "pods", "ns", "")
        ));
        assert!(!allowed(
            &policy,
            &request(&alice, "list", "", "pods", "ns", "")
        ));
        assert!(!allowed(
            &policy,
            &request(&alice, "delete", "", "pods", "ns", "p")
        ));

        let policy = alice_may(vec![rule(&["*"], &[""], &["pods"])]);
        for verb in ["get", "deletecollection", "escalate", "anything"] {
            assert!(
                allowed(&policy, &request(&alice, verb, "", "pods", "ns", "")),
                "{verb}"
            );
        }
    }

    #[test]
    fn api_groups_match_exactly_or_by_star() {
        let alice = user("alice", &[]);
        let policy = alice_may(vec![rule(&["get"], &["apps"], &["deployments"])]);
        assert!(allowed(
            &policy,
            &request(&alice, "get", "apps", "deployments", "ns", "d")
        ));
        assert!(!allowed(
            &policy,
            &request(&alice, "get", "extensions", "deployments", "ns", "d")
        ));
        assert!(!allowed(
            &policy,
            &request(&alice, "get", "", "deployments", "ns", "d")
        ));

        // The core group is "", not "*".
        let policy = alice_may(vec![rule(&["get"], &[""], &["*"])]);
        assert!(allowed(
            &policy,
            &request(&alice, "get", "", "pods", "ns", "d")
        ));
        assert!(!allowed(
            &policy,
            &request(&alice, "get", "apps", "deployments", "ns", "d")
        ));

        let policy = alice_may(vec![rule(&["get"], &["*"], &["deployments"])]);
        assert!(allowed(
            &policy,
            &request(&alice, "get", "apps", "deployments", "ns", "d")
        ));
        assert!(allowed(
            &policy,
            &request(&alice, "get", "extensions", "deployments", "ns", "d")
        ));
    }

    #[test]
    fn resources_and_subresources_match_as_kube() {
        let alice = user("alice", &[]);
        let get = |resource: &str| request(&alice, "get", "", resource, "ns", "x");

        let policy = alice_may(vec![rule(&["get"], &[""], &["pods"])]);
        assert!(allowed(&policy, &get("pods")));
        assert!(
            !allowed(&policy, &get("pods/status")),
            "a resource does not grant its subresources"
        );
        assert!(!allowed(&policy, &get("services")));

        let policy = alice_may(vec![rule(&["get"], &[""], &["pods/status"])]);
        assert!(allowed(&policy, &get("pods/status")));
        assert!(!allowed(&policy, &get("pods")));
        assert!(!allowed(&policy, &get("pods/log")));

        let policy = alice_may(vec![rule(&["get"], &[""], &["*"])]);
        assert!(allowed(&policy, &get("pods")));
        assert!(allowed(&policy, &get("pods/status")));

        let policy = alice_may(vec![rule(&["get"], &[""], &["*/status"])]);
        assert!(allowed(&policy, &get("pods/status")));
        assert!(allowed(&policy, &get("services/status")));
        assert!(!allowed(&policy, &get("pods")));
        assert!(!allowed(&policy, &get("pods/log")));

        // kube's ResourceMatches has no `resource/*` wildcard.
        let policy = alice_may(vec![rule(&["get"], &[""], &["pods/*"])]);
        assert!(!allowed(&policy, &get("pods/status")));
        assert!(!allowed(&policy, &get("pods")));
    }

    #[test]
    fn resource_names_limit_named_requests_and_refuse_unnamed_ones() {
        let alice = user("alice", &[]);
        let policy = alice_may(vec![named_rule(
            &["get", "list", "create", "update"],
            &[""],
            &["configmaps"],
            &["app-config", "other"],
        )]);
        let req = |verb: &str, name: &str| request(&alice, verb, "", "configmaps", "ns", name);
        assert!(allowed(&policy, &req("get", "app-config")));
        assert!(allowed(&policy, &req("update", "other")));
        assert!(!allowed(&policy, &req("get", "secret-config")));
        // Requests without a name never match a rule with resourceNames.
        assert!(!allowed(&policy, &req("list", "")));
        assert!(!allowed(&policy, &req("create", "")));

        // Without resourceNames, any name and none.
        let policy = alice_may(vec![rule(&["get", "list"], &[""], &["configmaps"])]);
        assert!(allowed(&policy, &req("get", "anything")));
        assert!(allowed(&policy, &req("list", "")));
    }

    #[test]
    fn non_resource_urls_match_exactly_by_star_or_by_prefix() {
        let alice = user("alice", &[]);
        let policy = alice_may(vec![url_rule(&["get"], &["/healthz", "/apis/*"])]);
        let get = |path: &str| path_request(&alice, "get", path);
        assert!(allowed(&policy, &get("/healthz")));
        assert!(!allowed(&policy, &get("/healthz/etcd")));
        assert!(allowed(&policy, &get("/apis/apps/v1")));
        assert!(allowed(&policy, &get("/apis/")));
        assert!(!allowed(&policy, &get("/apis")));
        assert!(!allowed(&policy, &get("/api")));
        assert!(!allowed(&policy, &path_request(&alice, "post", "/healthz")));

        let policy = alice_may(vec![url_rule(&["*"], &["*"])]);
        assert!(allowed(&policy, &get("/anything/at/all")));
        assert!(allowed(&policy, &path_request(&alice, "delete", "/x")));
        // URL rules grant no resources...
        assert!(!allowed(
            &policy,
            &request(&alice, "get", "", "pods", "ns", "")
        ));
        // ...and resource rules no URLs.
        let policy = alice_may(vec![rule(&["*"], &["*"], &["*"])]);
        assert!(!allowed(&policy, &get("/healthz")));
    }

    #[test]
    fn role_bindings_to_cluster_roles_are_limited_to_their_namespace() {
        let alice = user("alice", &[]);
        let policy = PolicySnapshot::from_objects(
            [],
            [cluster_role(
                "pod-reader",
                vec![rule(&["get", "list"], &[""], &["pods"])],
            )],
            [role_binding(
                "ns1",
                "read",
                "ClusterRole",
                "pod-reader",
                vec![user_subject("alice")],
            )],
            [],
        );
        assert_eq!(
            reason(&policy, &request(&alice, "list", "", "pods", "ns1", "")),
            r#"RBAC: allowed by RoleBinding "read/ns1" of ClusterRole "pod-reader" to User "alice""#
        );
        assert!(!allowed(
            &policy,
            &request(&alice, "list", "", "pods", "ns2", "")
        ));
        // Listing across namespaces is a cluster-wide request.
        assert!(!allowed(
            &policy,
            &request(&alice, "list", "", "pods", "", "")
        ));
    }

    #[test]
    fn role_bindings_only_find_roles_of_their_namespace() {
        let alice = user("alice", &[]);
        let policy = PolicySnapshot::from_objects(
            [role("ns2", "r", vec![rule(&["get"], &[""], &["pods"])])],
            [],
            [role_binding(
                "ns1",
                "b",
                "Role",
                "r",
                vec![user_subject("alice")],
            )],
            [],
        );
        assert_eq!(
            authorize(&policy, &request(&alice, "get", "", "pods", "ns1", "p")),
            Decision::NoOpinion(r#"RBAC: role.rbac.authorization.k8s.io "r" not found"#.into())
        );
        assert!(!allowed(
            &policy,
            &request(&alice, "get", "", "pods", "ns2", "p")
        ));
    }

    #[test]
    fn cluster_role_bindings_apply_everywhere() {
        let alice = user("alice", &[]);
        let policy = alice_may(vec![rule(&["list"], &[""], &["pods", "namespaces"])]);
        for ns in ["", "ns1", "kube-system"] {
            assert!(
                allowed(&policy, &request(&alice, "list", "", "pods", ns, "")),
                "{ns:?}"
            );
        }
        assert_eq!(
            reason(&policy, &request(&alice, "list", "", "namespaces", "", "")),
            r#"RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "alice""#
        );
    }

    #[test]
    fn missing_roles_are_reported_only_when_nothing_allows() {
        let alice = user("alice", &["devs"]);
        let mut policy = PolicySnapshot::from_objects(
            [],
            [cluster_role("pods", vec![rule(&["get"], &[""], &["pods"])])],
            [role_binding(
                "ns1",
                "gone",
                "Role",
                "gone",
                vec![group_subject("devs")],
            )],
            [
                cluster_role_binding("a-missing", "missing", vec![user_subject("alice")]),
                cluster_role_binding("b-pods", "pods", vec![user_subject("alice")]),
            ],
        );
        assert_eq!(
            reason(&policy, &request(&alice, "get", "", "pods", "ns1", "p")),
            r#"RBAC: allowed by ClusterRoleBinding "b-pods" of ClusterRole "pods" to User "alice""#
        );
        assert_eq!(
            authorize(&policy, &request(&alice, "get", "", "secrets", "", "s")),
            Decision::NoOpinion(
                r#"RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found"#.into()
            )
        );
        assert_eq!(
            reason(&policy, &request(&alice, "get", "", "secrets", "ns1", "s")),
            r#"RBAC: [clusterrole.rbac.authorization.k8s.io "missing" not found, role.rbac.authorization.k8s.io "gone" not found]"#
        );
        // Bindings that do not apply to the user are not resolved at all.
        policy.remove_cluster_role_binding("a-missing");
        assert_eq!(
            authorize(
                &policy,
                &request(&user("bob", &[]), "get", "", "secrets", "", "s")
            ),
            Decision::NoOpinion(String::new())
        );
    }

    #[test]
    fn rules_for_lists_cluster_then_namespace_rules() {
        let alice = user("alice", &[]);
        let cluster = rule(&["get"], &[""], &["nodes"]);
        let local = rule(&["list"], &[""], &["pods"]);
        let policy = PolicySnapshot::from_objects(
            [role("ns1", "local", vec![local.clone()])],
            [cluster_role("cluster", vec![cluster.clone()])],
            [
                role_binding("ns1", "local", "Role", "local", vec![user_subject("alice")]),
                role_binding("ns1", "broken", "Role", "none", vec![user_subject("alice")]),
            ],
            [cluster_role_binding(
                "cluster",
                "cluster",
                vec![user_subject("alice")],
            )],
        );
        assert_eq!(rules_for(&policy, &alice, ""), vec![cluster.clone()]);
        assert_eq!(
            rules_for(&policy, &alice, "ns1"),
            vec![cluster.clone(), local.clone()]
        );
        assert_eq!(rules_for(&policy, &alice, "ns2"), vec![cluster.clone()]);
        assert_eq!(
            resolve_rules(&policy, &alice, "ns1"),
            ResolvedRules {
                rules: vec![cluster, local],
                errors: vec![ResolutionError::RoleNotFound {
                    namespace: "ns1".into(),
                    name: "none".into()
                }],
            }
        );
        assert!(rules_for(&policy, &user("bob", &[]), "ns1").is_empty());
        assert_eq!(
            RbacAuthorizer::new(&policy).rules_for(&alice, "ns1").len(),
            2
        );
    }

    #[test]
    fn snapshot_inserts_replaces_and_removes() {
        let alice = user("alice", &[]);
        let get = request(&alice, "get", "", "pods", "ns1", "p");
        let mut policy = PolicySnapshot::new();
        assert!(!RbacAuthorizer::new(&policy).authorize(&get).allowed());

        policy.insert_role(role("ns1", "r", vec![rule(&["list"], &[""], &["pods"])]));
        policy.insert_role_binding(role_binding(
            "ns1",
            "b",
            "Role",
            "r",
            vec![user_subject("alice")],
        ));
        assert!(!allowed(&policy, &get));
        let old = policy.insert_role(role("ns1", "r", vec![rule(&["get"], &[""], &["pods"])]));
        assert!(old.is_some());
        assert!(allowed(&policy, &get));
        assert_eq!(policy.role_bindings("ns1").count(), 1);

        assert!(policy.remove_role_binding("ns1", "b").is_some());
        assert!(policy.remove_role_binding("ns1", "b").is_none());
        assert_eq!(policy.role_bindings("ns1").count(), 0);
        assert!(!allowed(&policy, &get));
        assert!(policy.remove_role("ns1", "r").is_some());
        assert!(policy.role("ns1", "r").is_none());

        policy.insert_cluster_role(cluster_role("c", vec![rule(&["get"], &[""], &["pods"])]));
        policy.insert_cluster_role_binding(cluster_role_binding(
            "c",
            "c",
            vec![user_subject("alice")],
        ));
        assert!(allowed(&policy, &get));
        assert_eq!(policy.cluster_roles().count(), 1);
        assert_eq!(policy.cluster_role_bindings().count(), 1);
        assert!(policy.remove_cluster_role("c").is_some());
        assert!(!allowed(&policy, &get));
    }
}
