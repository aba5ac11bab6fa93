//! Privilege-escalation prevention, as kube-apiserver's RBAC storage does it
//! (`pkg/registry/rbac/...`): nobody may create or update a Role or ClusterRole granting
//! more than they hold, nor bind a role whose permissions they lack, unless explicitly
//! allowed to (verbs `escalate` and `bind`).
//!
//! The server calls one of the `check_*_write` functions before storing an RBAC object.
//! The `escalate`/`bind` question goes back to the server through a closure, since the
//! answer belongs to its whole authorizer chain, not to RBAC alone; the closure is only
//! called when needed.

use std::collections::BTreeSet;
use std::fmt;

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::Attributes;
use super::rbac::{
    API_GROUP, API_GROUP_ALL, NON_RESOURCE_ALL, PolicySnapshot, RESOURCE_ALL, ResolutionError,
    VERB_ALL, resolve_rules,
};
use crate::user::{MASTERS, UserInfo};
use kapi_validation::go::{aggregate, quote, quote_list};

/// Whether `owner_rules` allow everything `requested` allows, as kube's `Covers`; if not,
/// the uncovered part, broken down into rules of one group, resource, verb and name (or
/// one URL and verb) each.
pub fn covers(owner_rules: &[PolicyRule], requested: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    // Broken down to single tuples, each part is covered by one owner rule or not at all.
    let uncovered: Vec<PolicyRule> = requested
        .iter()
        .flat_map(breakdown_rule)
        .filter(|sub| !owner_rules.iter().any(|owner| rule_covers(owner, sub)))
        .collect();
    (uncovered.is_empty(), uncovered)
}

fn list(v: &Option<Vec<String>>) -> &[String] {
    v.as_deref().unwrap_or_default()
}

fn one(s: &str) -> Option<Vec<String>> {
    Some(vec![s.to_string()])
}

/// A rule as equivalent rules of one API group, resource, verb and resource name each
/// (no name if the rule has none), and one non-resource URL and verb each, as kube's
/// `BreakdownRule`.
pub fn breakdown_rule(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut parts = Vec::new();
    for group in list(&rule.api_groups) {
        for resource in list(&rule.resources) {
            for verb in &rule.verbs {
                let part = |name: Option<&String>| PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: vec![verb.clone()],
                    resource_names: name.map(|n| vec![n.clone()]),
                    non_resource_urls: None,
                };
                match list(&rule.resource_names) {
                    [] => parts.push(part(None)),
                    names => parts.extend(names.iter().map(|n| part(Some(n)))),
                }
            }
        }
    }
    // Non-resource URLs only combine with verbs.
    for url in list(&rule.non_resource_urls) {
        for verb in &rule.verbs {
            parts.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: vec![verb.clone()],
                ..PolicyRule::default()
            });
        }
    }
    parts
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|i| has(set, i))
}

/// Whether the owner's resources hold every one of `wanted`: `*`, exact entries, or
/// `*/sub` for a subresource.
fn resources_cover_all(owner: &[String], wanted: &[String]) -> bool {
    has(owner, RESOURCE_ALL)
        || wanted.iter().all(|path| {
            has(owner, path)
                || path
                    .split_once('/')
                    .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
        })
}

fn non_resource_url_covers(owner: &str, wanted: &str) -> bool {
    owner == wanted || (owner.ends_with('*') && wanted.starts_with(owner.trim_end_matches('*')))
}

fn non_resource_urls_cover_all(owner: &[String], wanted: &[String]) -> bool {
    wanted
        .iter()
        .all(|w| owner.iter().any(|o| non_resource_url_covers(o, w)))
}

/// Whether one owner rule covers a broken-down rule, as kube's `ruleCovers`. Note that a
/// rule without resourceNames is only covered by owner rules without resourceNames.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, VERB_ALL) || has_all(&owner.verbs, &sub.verbs);
    let groups = has(list(&owner.api_groups), API_GROUP_ALL)
        || has_all(list(&owner.api_groups), list(&sub.api_groups));
    let resources = resources_cover_all(list(&owner.resources), list(&sub.resources));
    let urls =
        non_resource_urls_cover_all(list(&owner.non_resource_urls), list(&sub.non_resource_urls));
    let owner_names = list(&owner.resource_names);
    let names = owner_names.is_empty()
        || (!list(&sub.resource_names).is_empty()
            && has_all(owner_names, list(&sub.resource_names)));
    verbs && groups && resources && urls && names
}

/// Merges rules of one API group and one resource with no names or URLs that differ only
/// by verb, as kube's `CompactRules`, for shorter messages.
pub fn compact_rules(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut complex = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = list(&rule.resource_names).is_empty()
            && list(&rule.non_resource_urls).is_empty()
            && list(&rule.api_groups).len() == 1
            && list(&rule.resources).len() == 1;
        if !is_simple {
            complex.push(rule.clone());
            continue;
        }
        match simple
            .iter_mut()
            .find(|s| s.api_groups == rule.api_groups && s.resources == rule.resources)
        {
            Some(existing) => existing.verbs.extend(rule.verbs.iter().cloned()),
            None => simple.push(rule.clone()),
        }
    }
    complex.extend(simple);
    complex
}

/// A rule as kube writes it in escalation messages (`CompactString`):
/// `{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`, empty fields left out.
pub fn compact_string(rule: &PolicyRule) -> String {
    let fields = [
        ("APIGroups", list(&rule.api_groups)),
        ("Resources", list(&rule.resources)),
        ("NonResourceURLs", list(&rule.non_resource_urls)),
        ("ResourceNames", list(&rule.resource_names)),
        ("Verbs", rule.verbs.as_slice()),
    ];
    let parts: Vec<String> = fields
        .iter()
        .filter(|(_, values)| !values.is_empty())
        .map(|(field, values)| format!("{field}:{}", quote_list(values)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// Whether the rules `user` holds in `namespace` (`""`: cluster-wide only) cover `rules`,
/// as kube's `ConfirmNoEscalation`. The error is kube's message: `user "bob"
/// (groups=["system:authenticated"]) is attempting to grant RBAC permissions not
/// currently held:` and the missing rules, compacted, sorted, one a line.
pub fn confirm_no_escalation(
    policy: &PolicySnapshot,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let owner = resolve_rules(policy, user, namespace);
    let (covered, missing) = covers(&owner.rules, rules);
    if covered {
        return Ok(());
    }
    let described: BTreeSet<String> = compact_rules(&missing).iter().map(compact_string).collect();
    let mut message = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        quote(&user.name),
        quote_list(&user.groups),
        described.into_iter().collect::<Vec<_>>().join("\n"),
    );
    if !owner.errors.is_empty() {
        // kube prints its list of one aggregate error: `[a]` or `[[a, b]]`.
        let errors: Vec<String> = owner
            .errors
            .iter()
            .map(ResolutionError::to_string)
            .collect();
        message.push_str(&format!("; resolution errors: [{}]", aggregate(&errors)));
    }
    Err(message)
}

/// Why an RBAC write was refused; [`fmt::Display`] gives kube's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EscalationError {
    /// 403 Forbidden: the write would grant permissions the user does not hold.
    Forbidden {
        /// The resource written: `roles`, `clusterroles`, `rolebindings`, `clusterrolebindings`.
        resource: &'static str,
        /// The object's name (empty if it has none yet).
        name: String,
        /// Why (kube's `ConfirmNoEscalation` message, or the aggregationRule one).
        reason: String,
    },
    /// 404 Not Found: a binding references a role that does not exist, and the user may
    /// not `bind` it.
    RoleNotFound {
        /// `roles` or `clusterroles`.
        resource: &'static str,
        /// The role's name.
        name: String,
    },
    /// 500: a binding's `roleRef.kind` is neither `Role` nor `ClusterRole` (validation
    /// should have refused it before).
    UnsupportedRoleRef {
        /// The kind.
        kind: String,
    },
}

impl EscalationError {
    /// The HTTP status code kube-apiserver answers with.
    pub fn code(&self) -> u16 {
        match self {
            EscalationError::Forbidden { .. } => 403,
            EscalationError::RoleNotFound { .. } => 404,
            EscalationError::UnsupportedRoleRef { .. } => 500,
        }
    }
}

impl fmt::Display for EscalationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // apimachinery's NewForbidden: the name is left out when there is none.
            EscalationError::Forbidden {
                resource,
                name,
                reason,
            } if name.is_empty() => {
                write!(f, "{resource}.{API_GROUP} is forbidden: {reason}")
            }
            EscalationError::Forbidden {
                resource,
                name,
                reason,
            } => {
                write!(
                    f,
                    "{resource}.{API_GROUP} {} is forbidden: {reason}",
                    quote(name)
                )
            }
            EscalationError::RoleNotFound { resource, name } => {
                write!(f, "{resource}.{API_GROUP} {} not found", quote(name))
            }
            EscalationError::UnsupportedRoleRef { kind } => {
                write!(f, "unsupported role reference kind: {}", quote(kind))
            }
        }
    }
}

impl std::error::Error for EscalationError {}

/// Members of `system:masters` skip every escalation check, as in kube, where the API
/// server's own loopback client is one of them.
fn escalation_allowed(user: &UserInfo) -> bool {
    user.in_group(MASTERS)
}

/// The request the server must authorize to let a user write a role beyond their own
/// permissions (kube's `RoleEscalationAuthorized`): verb `escalate` on `roles` or
/// `clusterroles` of `rbac.authorization.k8s.io`, in `namespace`, named `name` (the
/// request's name: empty for a create).
pub fn escalate_attributes(
    user: &UserInfo,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Attributes {
    Attributes {
        user: user.clone(),
        verb: "escalate".into(),
        resource_request: true,
        api_group: API_GROUP.into(),
        api_version: "*".into(),
        resource: resource.into(),
        subresource: String::new(),
        name: name.into(),
        namespace: namespace.into(),
        path: String::new(),
    }
}

/// The request the server must authorize to let a user bind a role whatever its
/// permissions (kube's `BindingAuthorized`): verb `bind` on the referenced role, in the
/// binding's namespace (`""` for a ClusterRoleBinding). `None` for an unknown kind.
pub fn bind_attributes(
    user: &UserInfo,
    role_ref: &RoleRef,
    binding_namespace: &str,
) -> Option<Attributes> {
    let resource = match role_ref.kind.as_str() {
        "ClusterRole" => "clusterroles",
        "Role" => "roles",
        _ => return None,
    };
    Some(Attributes {
        user: user.clone(),
        verb: "bind".into(),
        resource_request: true,
        api_group: role_ref.api_group.clone().unwrap_or_default(),
        resource: resource.into(),
        name: role_ref.name.clone(),
        namespace: binding_namespace.into(),
        ..Attributes::default()
    })
}

/// Whether an update only changes what the garbage collector writes (owner references,
/// finalizers; also selfLink and managedFields), which kube lets through unchecked so that
/// objects can always be deleted.
pub fn only_gc_fields_changed<T>(new: &T, old: &T) -> bool
where
    T: k8s_openapi::Metadata<Ty = ObjectMeta> + Clone + PartialEq,
{
    let mut copy = new.clone();
    let (meta, old_meta) = (copy.metadata_mut(), old.metadata());
    meta.owner_references = old_meta.owner_references.clone();
    meta.finalizers = old_meta.finalizers.clone();
    meta.self_link = old_meta.self_link.clone();
    meta.managed_fields = old_meta.managed_fields.clone();
    copy == *old
}

fn name_of(meta: &ObjectMeta) -> String {
    meta.name.clone().unwrap_or_default()
}

/// The rules every cluster-admin holds; setting an aggregationRule requires them.
fn full_authority() -> [PolicyRule; 2] {
    [
        PolicyRule {
            verbs: vec![VERB_ALL.into()],
            api_groups: one(API_GROUP_ALL),
            resources: one(RESOURCE_ALL),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: vec![VERB_ALL.into()],
            non_resource_urls: one(NON_RESOURCE_ALL),
            ..PolicyRule::default()
        },
    ]
}

fn forbidden(resource: &'static str, name: String) -> impl FnOnce(String) -> EscalationError {
    move |reason| EscalationError::Forbidden {
        resource,
        name,
        reason,
    }
}

/// May `user` create (`old` is `None`) or update a Role in `namespace` with these rules?
/// Yes for `system:masters`, for whoever may `escalate` roles there (asked through
/// `may_escalate`), for updates that only touch garbage-collection fields, and for
/// whoever holds every rule of the Role in that namespace.
pub fn check_role_write(
    policy: &PolicySnapshot,
    user: &UserInfo,
    namespace: &str,
    role: &Role,
    old: Option<&Role>,
    may_escalate: impl FnOnce(&Attributes) -> bool,
) -> Result<(), EscalationError> {
    let name = name_of(&role.metadata);
    let request_name = if old.is_some() { name.as_str() } else { "" };
    if escalation_allowed(user)
        || may_escalate(&escalate_attributes(user, "roles", namespace, request_name))
    {
        return Ok(());
    }
    if old.is_some_and(|old| only_gc_fields_changed(role, old)) {
        return Ok(());
    }
    let rules = role.rules.as_deref().unwrap_or_default();
    confirm_no_escalation(policy, user, namespace, rules).map_err(forbidden("roles", name))
}

/// May `user` create (`old` is `None`) or update this ClusterRole? As
/// [`check_role_write`], with the user's cluster-wide rules; and, as kube, a ClusterRole
/// with an aggregationRule (before or after the update) also needs `*` on everything,
/// since it can gather any rule.
pub fn check_cluster_role_write(
    policy: &PolicySnapshot,
    user: &UserInfo,
    role: &ClusterRole,
    old: Option<&ClusterRole>,
    may_escalate: impl FnOnce(&Attributes) -> bool,
) -> Result<(), EscalationError> {
    let name = name_of(&role.metadata);
    let request_name = if old.is_some() { name.as_str() } else { "" };
    if escalation_allowed(user)
        || may_escalate(&escalate_attributes(user, "clusterroles", "", request_name))
    {
        return Ok(());
    }
    if old.is_some_and(|old| only_gc_fields_changed(role, old)) {
        return Ok(());
    }
    let rules = role.rules.as_deref().unwrap_or_default();
    confirm_no_escalation(policy, user, "", rules)
        .map_err(forbidden("clusterroles", name.clone()))?;
    if has_aggregation_rule(Some(role)) || has_aggregation_rule(old) {
        confirm_no_escalation(policy, user, "", &full_authority()).map_err(|_| {
            EscalationError::Forbidden {
                resource: "clusterroles",
                name,
                reason: "must have cluster-admin privileges to use the aggregationRule".into(),
            }
        })?;
    }
    Ok(())
}

fn has_aggregation_rule(role: Option<&ClusterRole>) -> bool {
    role.and_then(|r| r.aggregation_rule.as_ref())
        .is_some_and(|a| !list_selectors(a).is_empty())
}

fn list_selectors(
    rule: &k8s_openapi::api::rbac::v1::AggregationRule,
) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector] {
    rule.cluster_role_selectors.as_deref().unwrap_or_default()
}

/// The checks shared by both kinds of binding: the user may `bind` the role, or holds
/// every rule it grants, in the binding's namespace.
fn check_binding(
    policy: &PolicySnapshot,
    user: &UserInfo,
    resource: &'static str,
    name: String,
    role_ref: &RoleRef,
    namespace: &str,
    may_bind: impl FnOnce(&Attributes) -> bool,
) -> Result<(), EscalationError> {
    if bind_attributes(user, role_ref, namespace).is_some_and(|attrs| may_bind(&attrs)) {
        return Ok(());
    }
    let rules = policy
        .role_reference_rules(role_ref, namespace)
        .map_err(|e| match e {
            ResolutionError::RoleNotFound { name, .. } => EscalationError::RoleNotFound {
                resource: "roles",
                name,
            },
            ResolutionError::ClusterRoleNotFound { name } => EscalationError::RoleNotFound {
                resource: "clusterroles",
                name,
            },
            ResolutionError::UnsupportedKind(kind) => EscalationError::UnsupportedRoleRef { kind },
        })?;
    confirm_no_escalation(policy, user, namespace, rules).map_err(forbidden(resource, name))
}

/// May `user` create (`old` is `None`) or update a RoleBinding in `namespace`? Yes for
/// `system:masters`, for updates that only touch garbage-collection fields, for whoever
/// may `bind` the referenced role there (asked through `may_bind`), and for whoever holds
/// every rule of the referenced role in that namespace. A missing role is
/// [`EscalationError::RoleNotFound`].
pub fn check_role_binding_write(
    policy: &PolicySnapshot,
    user: &UserInfo,
    namespace: &str,
    binding: &RoleBinding,
    old: Option<&RoleBinding>,
    may_bind: impl FnOnce(&Attributes) -> bool,
) -> Result<(), EscalationError> {
    if escalation_allowed(user) || old.is_some_and(|old| only_gc_fields_changed(binding, old)) {
        return Ok(());
    }
    let name = name_of(&binding.metadata);
    check_binding(
        policy,
        user,
        "rolebindings",
        name,
        &binding.role_ref,
        namespace,
        may_bind,
    )
}

/// May `user` create (`old` is `None`) or update this ClusterRoleBinding? As
/// [`check_role_binding_write`], cluster-wide.
pub fn check_cluster_role_binding_write(
    policy: &PolicySnapshot,
    user: &UserInfo,
    binding: &ClusterRoleBinding,
    old: Option<&ClusterRoleBinding>,
    may_bind: impl FnOnce(&Attributes) -> bool,
) -> Result<(), EscalationError> {
    if escalation_allowed(user) || old.is_some_and(|old| only_gc_fields_changed(binding, old)) {
        return Ok(());
    }
    let name = name_of(&binding.metadata);
    check_binding(
        policy,
        user,
        "clusterrolebindings",
        name,
        &binding.role_ref,
        "",
        may_bind,
    )
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::authz::fixtures::*;
    use crate::authz::rbac::authorize;

    const AUTHENTICATED: &str = "system:authenticated";

    fn never(_: &Attributes) -> bool {
        false
    }

    fn forbidden_message(err: Result<(), EscalationError>) -> String {
        let err = err.expect_err("the write should be refused");
        assert_eq!(err.code(), 403, "{err}");
        err.to_string()
    }

    /// bob may manage pods and read configmaps in ns1, and list nodes cluster-wide.
    fn bobs_policy() -> PolicySnapshot {
        PolicySnapshot::from_objects(
            [role(
                "ns1",
                "pods",
                vec![
                    rule(&["get", "list", "create", "delete"], &[""], &["pods"]),
                    rule(&["get"], &[""], &["configmaps"]),
                ],
            )],
            [
                cluster_role("nodes", vec![rule(&["list"], &[""], &["nodes"])]),
                cluster_role("secret-reader", vec![rule(&["get"], &[""], &["secrets"])]),
                cluster_role(
                    "admin-ish",
                    vec![rule(&["*"], &["*"], &["*"]), url_rule(&["*"], &["*"])],
                ),
            ],
            [role_binding(
                "ns1",
                "bob-pods",
                "Role",
                "pods",
                vec![user_subject("bob")],
            )],
            [
                cluster_role_binding("bob-nodes", "nodes", vec![user_subject("bob")]),
                cluster_role_binding("root", "admin-ish", vec![user_subject("root")]),
            ],
        )
    }

    fn bob() -> UserInfo {
        user("bob", &[])
    }

    #[test]
    fn covers_breaks_rules_down_and_returns_what_is_missing() {
        let owner = [rule(&["get", "list"], &[""], &["pods", "services"])];
        assert_eq!(
            covers(&owner, &[rule(&["get"], &[""], &["pods"])]),
            (true, vec![])
        );
        assert_eq!(covers(&owner, &[]), (true, vec![]));
        let (ok, missing) = covers(
            &owner,
            &[rule(&["get", "delete"], &["", "apps"], &["pods"])],
        );
        assert!(!ok);
        assert_eq!(
            missing,
            vec![
                rule(&["delete"], &[""], &["pods"]),
                rule(&["get"], &["apps"], &["pods"]),
                rule(&["delete"], &["apps"], &["pods"]),
            ]
        );
        // Stars cover everything of their kind, but resource rules cover no URL.
        let star = [rule(&["*"], &["*"], &["*"])];
        assert!(covers(&star, &[rule(&["escalate"], &["x.io"], &["things/status"])]).0);
        assert!(!covers(&star, &[url_rule(&["get"], &["/healthz"])]).0);
        // Rules together may cover what neither does alone.
        let split = [
            rule(&["get"], &[""], &["pods"]),
            rule(&["list"], &[""], &["pods"]),
        ];
        assert!(covers(&split, &[rule(&["get", "list"], &[""], &["pods"])]).0);
    }

    #[test]
    fn covers_resource_names_as_kube() {
        let any_name = [rule(&["get"], &[""], &["secrets"])];
        let some_names = [named_rule(&["get"], &[""], &["secrets"], &["a", "b"])];
        // No names covers any names...
        assert!(
            covers(
                &any_name,
                &[named_rule(&["get"], &[""], &["secrets"], &["a"])]
            )
            .0
        );
        // ...names cover a subset of themselves...
        assert!(
            covers(
                &some_names,
                &[named_rule(&["get"], &[""], &["secrets"], &["b", "a"])]
            )
            .0
        );
        assert_eq!(
            covers(
                &some_names,
                &[named_rule(&["get"], &[""], &["secrets"], &["a", "c"])]
            )
            .1,
            vec![named_rule(&["get"], &[""], &["secrets"], &["c"])]
        );
        // ...but never a rule without names.
        assert!(!covers(&some_names, &[rule(&["get"], &[""], &["secrets"])]).0);
    }

    #[test]
    fn covers_subresources_and_urls_as_kube() {
        let status = [rule(&["get"], &[""], &["*/status"])];
        assert!(
            covers(
                &status,
                &[rule(&["get"], &[""], &["pods/status", "services/status"])]
            )
            .0
        );
        assert!(!covers(&status, &[rule(&["get"], &[""], &["pods"])]).0);
        // `pods/*` is no wildcard for kube.
        assert!(
            !covers(
                &[rule(&["get"], &[""], &["pods/*"])],
                &[rule(&["get"], &[""], &["pods/log"])]
            )
            .0
        );
        // A resource does not cover its subresources.
        assert!(
            !covers(
                &[rule(&["get"], &[""], &["pods"])],
                &[rule(&["get"], &[""], &["pods/log"])]
            )
            .0
        );

        let urls = [url_rule(&["get"], &["/apis/*", "/healthz"])];
        assert!(
            covers(
                &urls,
                &[url_rule(&["get"], &["/apis/apps", "/apis/*", "/healthz"])]
            )
            .0
        );
        assert_eq!(
            covers(
                &urls,
                &[url_rule(&["get", "post"], &["/healthz/etcd", "/apis/x"])]
            )
            .1,
            vec![
                url_rule(&["get"], &["/healthz/etcd"]),
                url_rule(&["post"], &["/healthz/etcd"]),
                url_rule(&["post"], &["/apis/x"]),
            ]
        );
        assert!(
            covers(
                &[url_rule(&["*"], &["*"])],
                &[url_rule(&["delete"], &["/anything"])]
            )
            .0
        );
    }

    #[test]
    fn compacts_missing_rules_as_kube_prints_them() {
        let missing = covers(&[], &[rule(&["get", "list"], &["", "apps"], &["secrets"])]).1;
        let compact = compact_rules(&missing);
        assert_eq!(
            compact.iter().map(compact_string).collect::<Vec<_>>(),
            vec![
                r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}"#,
                r#"{APIGroups:["apps"], Resources:["secrets"], Verbs:["get" "list"]}"#,
            ]
        );
        assert_eq!(
            compact_string(&named_rule(&["get"], &["x"], &["y"], &["n"])),
            r#"{APIGroups:["x"], Resources:["y"], ResourceNames:["n"], Verbs:["get"]}"#
        );
        assert_eq!(
            compact_string(&url_rule(&["get"], &["/x"])),
            r#"{NonResourceURLs:["/x"], Verbs:["get"]}"#
        );
    }

    #[test]
    fn creating_a_role_beyond_ones_rights_is_forbidden_in_kubes_words() {
        let policy = bobs_policy();
        let bob = user("bob", &[AUTHENTICATED]);
        let new = role("ns1", "x", vec![rule(&["get"], &[""], &["secrets"])]);
        assert_eq!(
            forbidden_message(check_role_write(&policy, &bob, "ns1", &new, None, never)),
            "roles.rbac.authorization.k8s.io \"x\" is forbidden: user \"bob\" (groups=[\"system:authenticated\"]) \
             is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"
        );
    }

    #[test]
    fn missing_rules_are_compacted_sorted_and_one_a_line() {
        let policy = bobs_policy();
        let new = role(
            "ns1",
            "x",
            vec![
                rule(&["watch", "get", "list"], &[""], &["pods", "secrets"]),
                url_rule(&["get"], &["/metrics"]),
            ],
        );
        assert_eq!(
            forbidden_message(check_role_write(&policy, &bob(), "ns1", &new, None, never)),
            "roles.rbac.authorization.k8s.io \"x\" is forbidden: user \"bob\" (groups=[\"system:authenticated\"]) \
             is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"watch\"]}\n\
             {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"watch\" \"get\" \"list\"]}\n\
             {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"
        );
    }

    #[test]
    fn a_role_within_ones_rights_in_that_namespace_is_allowed() {
        let policy = bobs_policy();
        let subset = role(
            "ns1",
            "x",
            vec![
                rule(&["get", "delete"], &[""], &["pods"]),
                rule(&["list"], &[""], &["nodes"]),
            ],
        );
        assert_eq!(
            check_role_write(&policy, &bob(), "ns1", &subset, None, never),
            Ok(())
        );
        // The same rules in another namespace, where bob only has his cluster-wide rules.
        let elsewhere = role("ns2", "x", subset.rules.clone().unwrap());
        let msg = forbidden_message(check_role_write(
            &policy,
            &bob(),
            "ns2",
            &elsewhere,
            None,
            never,
        ));
        assert!(
            msg.ends_with(r#"{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}"#),
            "{msg}"
        );
    }

    #[test]
    fn escalate_permission_allows_any_role_and_is_asked_precisely() {
        let policy = bobs_policy();
        let new = role("ns1", "x", vec![rule(&["*"], &["*"], &["*"])]);
        let asked = Cell::new(None);
        let result = check_role_write(&policy, &bob(), "ns1", &new, None, |attrs| {
            asked.set(Some(attrs.clone()));
            true
        });
        assert_eq!(result, Ok(()));
        let attrs = asked.take().expect("escalate was asked");
        assert_eq!(
            (
                attrs.verb.as_str(),
                attrs.api_group.as_str(),
                attrs.resource.as_str()
            ),
            ("escalate", API_GROUP, "roles")
        );
        assert_eq!((attrs.namespace.as_str(), attrs.name.as_str()), ("ns1", ""));
        assert!(attrs.resource_request);

        // Through RBAC itself, escalate limited to one name only allows updating that role.
        let mut policy = policy;
        policy.insert_role(role(
            "ns1",
            "esc",
            vec![named_rule(&["escalate"], &[API_GROUP], &["roles"], &["x"])],
        ));
        policy.insert_role_binding(role_binding(
            "ns1",
            "esc",
            "Role",
            "esc",
            vec![user_subject("bob")],
        ));
        let rbac = |a: &Attributes| authorize(&policy, a).allowed();
        let old = role("ns1", "x", vec![]);
        assert_eq!(
            check_role_write(&policy, &bob(), "ns1", &new, Some(&old), rbac),
            Ok(())
        );
        assert!(check_role_write(&policy, &bob(), "ns1", &new, None, rbac).is_err());
        let mut other = new.clone();
        other.metadata.name = Some("y".into());
        assert!(check_role_write(&policy, &bob(), "ns1", &other, Some(&old), rbac).is_err());
    }

    #[test]
    fn system_masters_skip_every_check_without_asking() {
        let policy = PolicySnapshot::new();
        let admin = user("admin", &["system:masters"]);
        let ask = |_: &Attributes| -> bool { panic!("no need to ask for system:masters") };
        let mut aggregated = cluster_role("x", vec![rule(&["*"], &["*"], &["*"])]);
        aggregated.aggregation_rule = Some(Default::default());
        assert_eq!(
            check_role_write(&policy, &admin, "ns", &role("ns", "x", vec![]), None, ask),
            Ok(())
        );
        assert_eq!(
            check_cluster_role_write(&policy, &admin, &aggregated, None, ask),
            Ok(())
        );
        let binding = role_binding("ns", "b", "ClusterRole", "missing", vec![]);
        assert_eq!(
            check_role_binding_write(&policy, &admin, "ns", &binding, None, ask),
            Ok(())
        );
        let binding = cluster_role_binding("b", "missing", vec![]);
        assert_eq!(
            check_cluster_role_binding_write(&policy, &admin, &binding, None, ask),
            Ok(())
        );
    }

    #[test]
    fn cluster_roles_need_cluster_wide_rights() {
        let policy = bobs_policy();
        // bob holds pods only in ns1: not enough for a ClusterRole.
        let pods = cluster_role("x", vec![rule(&["get"], &[""], &["pods"])]);
        let msg = forbidden_message(check_cluster_role_write(
            &policy,
            &bob(),
            &pods,
            None,
            never,
        ));
        assert!(
            msg.starts_with(
                "clusterroles.rbac.authorization.k8s.io \"x\" is forbidden: user \"bob\""
            ),
            "{msg}"
        );
        let nodes = cluster_role("x", vec![rule(&["list"], &[""], &["nodes"])]);
        assert_eq!(
            check_cluster_role_write(&policy, &bob(), &nodes, None, never),
            Ok(())
        );
        // Updating it is asked as escalate on that name.
        let asked = Cell::new(String::new());
        let _ = check_cluster_role_write(&policy, &bob(), &pods, Some(&nodes), |a| {
            asked.set(format!(
                "{} {} {:?} {}",
                a.verb, a.resource, a.namespace, a.name
            ));
            false
        });
        assert_eq!(asked.take(), r#"escalate clusterroles "" x"#);
    }

    #[test]
    fn aggregation_rules_need_cluster_admin_rights() {
        let policy = bobs_policy();
        let mut aggregated = cluster_role("agg", vec![]);
        aggregated.aggregation_rule = Some(k8s_openapi::api::rbac::v1::AggregationRule {
            cluster_role_selectors: Some(vec![Default::default()]),
        });
        assert_eq!(
            check_cluster_role_write(&policy, &bob(), &aggregated, None, never)
                .unwrap_err()
                .to_string(),
            "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: \
             must have cluster-admin privileges to use the aggregationRule"
        );
        // Removing the aggregationRule is checked too.
        let plain = cluster_role("agg", vec![]);
        assert!(
            check_cluster_role_write(&policy, &bob(), &plain, Some(&aggregated), never).is_err()
        );
        assert_eq!(
            check_cluster_role_write(&policy, &bob(), &plain, None, never),
            Ok(())
        );
        // A cluster admin through a binding (not system:masters) may.
        let root = user("root", &[]);
        assert_eq!(
            check_cluster_role_write(&policy, &root, &aggregated, None, never),
            Ok(())
        );
        // An empty selector list is no aggregationRule.
        let mut empty = plain.clone();
        empty.aggregation_rule = Some(Default::default());
        assert_eq!(
            check_cluster_role_write(&policy, &bob(), &empty, None, never),
            Ok(())
        );
    }

    #[test]
    fn binding_a_role_beyond_ones_rights_is_forbidden() {
        let policy = bobs_policy();
        let bob = user("bob", &[AUTHENTICATED]);
        let binding = role_binding(
            "ns1",
            "give-secrets",
            "ClusterRole",
            "secret-reader",
            vec![user_subject("eve")],
        );
        assert_eq!(
            forbidden_message(check_role_binding_write(
                &policy, &bob, "ns1", &binding, None, never
            )),
            "rolebindings.rbac.authorization.k8s.io \"give-secrets\" is forbidden: user \"bob\" \
             (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"
        );
        let binding =
            cluster_role_binding("give-secrets", "secret-reader", vec![user_subject("eve")]);
        let msg = forbidden_message(check_cluster_role_binding_write(
            &policy, &bob, &binding, None, never,
        ));
        assert!(msg.starts_with(
            "clusterrolebindings.rbac.authorization.k8s.io \"give-secrets\" is forbidden"
        ));
    }

    #[test]
    fn binding_a_role_one_holds_is_allowed_where_one_holds_it() {
        let policy = bobs_policy();
        let binding = role_binding("ns1", "share", "Role", "pods", vec![user_subject("eve")]);
        assert_eq!(
            check_role_binding_write(&policy, &bob(), "ns1", &binding, None, never),
            Ok(())
        );
        let nodes = role_binding(
            "ns2",
            "share",
            "ClusterRole",
            "nodes",
            vec![user_subject("eve")],
        );
        assert_eq!(
            check_role_binding_write(&policy, &bob(), "ns2", &nodes, None, never),
            Ok(())
        );
        let crb = cluster_role_binding("share", "nodes", vec![user_subject("eve")]);
        assert_eq!(
            check_cluster_role_binding_write(&policy, &bob(), &crb, None, never),
            Ok(())
        );
        // bob's ns1 pod rights do not let him bind a ClusterRole of pods cluster-wide.
        let mut policy = policy;
        policy.insert_cluster_role(cluster_role(
            "pod-getter",
            vec![rule(&["get"], &[""], &["pods"])],
        ));
        let crb = cluster_role_binding("share", "pod-getter", vec![user_subject("eve")]);
        assert!(check_cluster_role_binding_write(&policy, &bob(), &crb, None, never).is_err());
        let rb = role_binding(
            "ns1",
            "share",
            "ClusterRole",
            "pod-getter",
            vec![user_subject("eve")],
        );
        assert_eq!(
            check_role_binding_write(&policy, &bob(), "ns1", &rb, None, never),
            Ok(())
        );
    }

    #[test]
    fn bind_permission_allows_binding_and_is_asked_precisely() {
        let mut policy = bobs_policy();
        policy.insert_role(role(
            "ns1",
            "binder",
            vec![named_rule(
                &["bind"],
                &[API_GROUP],
                &["clusterroles"],
                &["secret-reader"],
            )],
        ));
        policy.insert_role_binding(role_binding(
            "ns1",
            "binder",
            "Role",
            "binder",
            vec![user_subject("bob")],
        ));
        let rbac = |a: &Attributes| authorize(&policy, a).allowed();
        let binding = role_binding(
            "ns1",
            "give",
            "ClusterRole",
            "secret-reader",
            vec![user_subject("eve")],
        );
        assert_eq!(
            check_role_binding_write(&policy, &bob(), "ns1", &binding, None, rbac),
            Ok(())
        );
        // Only in the namespace where bind was granted, and only for that role.
        let elsewhere = role_binding("ns2", "give", "ClusterRole", "secret-reader", vec![]);
        assert!(check_role_binding_write(&policy, &bob(), "ns2", &elsewhere, None, rbac).is_err());
        let admin = role_binding("ns1", "give", "ClusterRole", "admin-ish", vec![]);
        assert!(check_role_binding_write(&policy, &bob(), "ns1", &admin, None, rbac).is_err());

        let attrs = bind_attributes(&bob(), &binding.role_ref, "ns1").unwrap();
        assert_eq!(
            (
                attrs.verb.as_str(),
                attrs.api_group.as_str(),
                attrs.resource.as_str(),
                attrs.name.as_str()
            ),
            ("bind", API_GROUP, "clusterroles", "secret-reader")
        );
        assert_eq!(attrs.namespace, "ns1");
        let mut odd = binding.role_ref.clone();
        odd.kind = "Robot".into();
        assert!(bind_attributes(&bob(), &odd, "ns1").is_none());
    }

    #[test]
    fn binding_a_missing_role_is_not_found_unless_one_may_bind_it() {
        let policy = bobs_policy();
        let binding = role_binding("ns1", "b", "Role", "nope", vec![]);
        let err =
            check_role_binding_write(&policy, &bob(), "ns1", &binding, None, never).unwrap_err();
        assert_eq!(err.code(), 404);
        assert_eq!(
            err.to_string(),
            r#"roles.rbac.authorization.k8s.io "nope" not found"#
        );
        let crb = cluster_role_binding("b", "nope", vec![]);
        let err = check_cluster_role_binding_write(&policy, &bob(), &crb, None, never).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"clusterroles.rbac.authorization.k8s.io "nope" not found"#
        );
        assert_eq!(
            check_role_binding_write(&policy, &bob(), "ns1", &binding, None, |_| true),
            Ok(())
        );
        let mut odd = role_binding("ns1", "b", "Robot", "r", vec![]);
        odd.role_ref.kind = "Robot".into();
        let err =
            check_role_binding_write(&policy, &bob(), "ns1", &odd, None, |_| true).unwrap_err();
        assert_eq!(
            (err.code(), err.to_string()),
            (500, r#"unsupported role reference kind: "Robot""#.into())
        );
    }

    #[test]
    fn updates_of_garbage_collection_fields_only_are_not_checked() {
        let policy = bobs_policy();
        let old = role_binding(
            "ns1",
            "give",
            "ClusterRole",
            "secret-reader",
            vec![user_subject("eve")],
        );
        let mut new = old.clone();
        new.metadata.finalizers = Some(vec!["foregroundDeletion".into()]);
        assert_eq!(
            check_role_binding_write(&policy, &bob(), "ns1", &new, Some(&old), never),
            Ok(())
        );
        new.subjects = Some(vec![user_subject("mallory")]);
        assert!(check_role_binding_write(&policy, &bob(), "ns1", &new, Some(&old), never).is_err());

        let old = role("ns1", "x", vec![rule(&["*"], &["*"], &["*"])]);
        let mut new = old.clone();
        new.metadata.owner_references = Some(vec![Default::default()]);
        assert!(only_gc_fields_changed(&new, &old));
        assert_eq!(
            check_role_write(&policy, &bob(), "ns1", &new, Some(&old), never),
            Ok(())
        );
        new.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
        assert!(!only_gc_fields_changed(&new, &old));
    }

    #[test]
    fn resolution_errors_are_added_to_the_message() {
        let mut policy = bobs_policy();
        policy.insert_cluster_role_binding(cluster_role_binding(
            "bob-gone",
            "gone",
            vec![user_subject("bob")],
        ));
        let new = cluster_role("x", vec![rule(&["get"], &[""], &["secrets"])]);
        let msg = forbidden_message(check_cluster_role_write(&policy, &bob(), &new, None, never));
        assert!(
            msg.ends_with(
                "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}; \
                 resolution errors: [clusterrole.rbac.authorization.k8s.io \"gone\" not found]"
            ),
            "{msg}"
        );
        // They do not matter when the rules are covered anyway.
        let ok = cluster_role("x", vec![rule(&["list"], &[""], &["nodes"])]);
        assert_eq!(
            check_cluster_role_write(&policy, &bob(), &ok, None, never),
            Ok(())
        );
    }

    #[test]
    fn forbidden_without_a_name_leaves_it_out() {
        let err = EscalationError::Forbidden {
            resource: "roles",
            name: String::new(),
            reason: "why".into(),
        };
        assert_eq!(
            err.to_string(),
            "roles.rbac.authorization.k8s.io is forbidden: why"
        );
    }
}
