//! The bootstrap RBAC policy kube-apiserver creates at start-up
//! (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`): the user-facing roles
//! `cluster-admin`, `admin`, `edit`, `view` (the last three aggregated from
//! `system:aggregate-to-*`), the discovery and self-review roles, and their bindings.
//!
//! The rules are kube's (as of 1.3x), including resources kapi may not serve: a rule on an
//! unserved resource allows nothing, and keeping them identical lets kube's own manifests
//! and tests (which expect, for example, `edit` to manage leases) behave the same.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::aggregation::aggregate;
use super::rbac::{API_GROUP, GROUP_KIND, PolicySnapshot};
use crate::user::{AUTHENTICATED, MASTERS, UNAUTHENTICATED};

/// The label on every bootstrap object.
pub const BOOTSTRAPPING_LABEL: &str = "kubernetes.io/bootstrapping";
/// The annotation telling kube-apiserver it may reconcile the object at start-up.
pub const AUTOUPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";
/// Label of ClusterRoles whose rules `admin` gathers.
pub const AGGREGATE_TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
/// Label of ClusterRoles whose rules `edit` gathers.
pub const AGGREGATE_TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
/// Label of ClusterRoles whose rules `view` gathers.
pub const AGGREGATE_TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
const READ_WRITE: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn sorted(items: &[&str]) -> Vec<String> {
    // kube's rule builder sorts every list; the stored objects look the same here.
    let mut v: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

fn rule(verbs: &[&str], group: &str, resources: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: sorted(verbs),
        api_groups: Some(vec![group.to_string()]),
        resources: Some(sorted(resources)),
        ..PolicyRule::default()
    }
}

fn url_rule(verbs: &[&str], urls: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: sorted(verbs),
        non_resource_urls: Some(sorted(urls)),
        ..PolicyRule::default()
    }
}

/// kube's default metadata: the bootstrapping label and the autoupdate annotation.
fn metadata(name: &str, labels: &[(&str, &str)]) -> ObjectMeta {
    let mut all: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    all.insert(BOOTSTRAPPING_LABEL.into(), "rbac-defaults".into());
    ObjectMeta {
        name: Some(name.into()),
        labels: Some(all),
        annotations: Some([(AUTOUPDATE_ANNOTATION.to_string(), "true".to_string())].into()),
        ..ObjectMeta::default()
    }
}

fn role(name: &str, labels: &[(&str, &str)], rules: Vec<PolicyRule>) -> ClusterRole {
    ClusterRole {
        metadata: metadata(name, labels),
        rules: Some(rules),
        aggregation_rule: None,
    }
}

/// A role gathering the rules of ClusterRoles labelled `aggregate_label: "true"`; its own
/// rules are left to aggregation, as kube's (`rules: null`).
fn aggregated_role(name: &str, labels: &[(&str, &str)], aggregate_label: &str) -> ClusterRole {
    ClusterRole {
        metadata: metadata(name, labels),
        rules: None,
        aggregation_rule: Some(AggregationRule {
            cluster_role_selectors: Some(vec![LabelSelector {
                match_labels: Some([(aggregate_label.to_string(), "true".to_string())].into()),
                match_expressions: None,
            }]),
        }),
    }
}

/// The bootstrap ClusterRoles, in kube's order. `admin`, `edit` and `view` have no rules
/// until aggregated (see [`super::aggregation::aggregate`], or [`policy`]).
pub fn cluster_roles() -> Vec<ClusterRole> {
    vec![
        // A "root" role which can do absolutely anything.
        role(
            "cluster-admin",
            &[],
            vec![rule(&["*"], "*", &["*"]), url_rule(&["*"], &["*"])],
        ),
        // Just enough to know whether the server is ready and discover API versions.
        role(
            "system:discovery",
            &[],
            vec![url_rule(
                &["get"],
                &[
                    "/livez",
                    "/readyz",
                    "/healthz",
                    "/version",
                    "/version/",
                    "/openapi",
                    "/openapi/*",
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                ],
            )],
        ),
        // What a "normal" user needs to learn about themselves.
        role(
            "system:basic-user",
            &[],
            vec![
                rule(
                    &["create"],
                    "authorization.k8s.io",
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(
                    &["create"],
                    "authentication.k8s.io",
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        // Insensitive cluster information, for everyone including anonymous users.
        role(
            "system:public-info-viewer",
            &[],
            vec![url_rule(
                &["get"],
                &["/livez", "/readyz", "/healthz", "/version", "/version/"],
            )],
        ),
        // A namespace admin: `edit` plus the power to grant permissions to others.
        aggregated_role("admin", &[], AGGREGATE_TO_ADMIN),
        // A namespace editor: every user-level action, but not the privileged resources
        // (`/status`, quotas, limits) that control the namespace.
        aggregated_role("edit", &[(AGGREGATE_TO_ADMIN, "true")], AGGREGATE_TO_EDIT),
        // A namespace viewer: read-only access to non-escalating resources (no secrets).
        aggregated_role("view", &[(AGGREGATE_TO_EDIT, "true")], AGGREGATE_TO_VIEW),
        role(
            "system:aggregate-to-admin",
            &[(AGGREGATE_TO_ADMIN, "true")],
            vec![
                rule(
                    &["create"],
                    "authorization.k8s.io",
                    &["localsubjectaccessreviews"],
                ),
                rule(READ_WRITE, API_GROUP, &["roles", "rolebindings"]),
            ],
        ),
        role(
            "system:aggregate-to-edit",
            &[(AGGREGATE_TO_EDIT, "true")],
            aggregate_to_edit_rules(),
        ),
        role(
            "system:aggregate-to-view",
            &[(AGGREGATE_TO_VIEW, "true")],
            aggregate_to_view_rules(),
        ),
    ]
}

fn aggregate_to_edit_rules() -> Vec<PolicyRule> {
    vec![
        // Read on escalating resources: view lacks these.
        rule(
            READ,
            "",
            &[
                "pods/attach",
                "pods/proxy",
                "pods/exec",
                "pods/portforward",
                "secrets",
                "services/proxy",
            ],
        ),
        rule(&["impersonate"], "", &["serviceaccounts"]),
        rule(
            WRITE,
            "",
            &[
                "pods",
                "pods/attach",
                "pods/proxy",
                "pods/exec",
                "pods/portforward",
            ],
        ),
        rule(&["create"], "", &["pods/eviction"]),
        rule(
            WRITE,
            "",
            &[
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/proxy",
                "persistentvolumeclaims",
                "configmaps",
                "secrets",
                "events",
            ],
        ),
        rule(&["create"], "", &["serviceaccounts/token"]),
        rule(
            WRITE,
            "apps",
            &[
                "statefulsets",
                "statefulsets/scale",
                "daemonsets",
                "deployments",
                "deployments/scale",
                "deployments/rollback",
                "replicasets",
                "replicasets/scale",
            ],
        ),
        rule(WRITE, "autoscaling", &["horizontalpodautoscalers"]),
        rule(WRITE, "batch", &["jobs", "cronjobs"]),
        rule(
            WRITE,
            "extensions",
            &[
                "daemonsets",
                "deployments",
                "deployments/scale",
                "deployments/rollback",
                "ingresses",
                "replicasets",
                "replicasets/scale",
                "replicationcontrollers/scale",
                "networkpolicies",
            ],
        ),
        rule(WRITE, "policy", &["poddisruptionbudgets"]),
        rule(
            WRITE,
            "networking.k8s.io",
            &["networkpolicies", "ingresses"],
        ),
        rule(READ_WRITE, "coordination.k8s.io", &["leases"]),
    ]
}

fn aggregate_to_view_rules() -> Vec<PolicyRule> {
    vec![
        rule(
            READ,
            "",
            &[
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "configmaps",
            ],
        ),
        rule(
            READ,
            "",
            &[
                "limitranges",
                "resourcequotas",
                "bindings",
                "events",
                "pods/status",
                "resourcequotas/status",
                "namespaces/status",
                "replicationcontrollers/status",
                "pods/log",
            ],
        ),
        // Reading namespaces at namespace scope means reading *this* namespace: a hint of
        // which namespaces one has access to.
        rule(READ, "", &["namespaces"]),
        rule(READ, "discovery.k8s.io", &["endpointslices"]),
        rule(
            READ,
            "apps",
            &[
                "controllerrevisions",
                "statefulsets",
                "statefulsets/status",
                "statefulsets/scale",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/status",
                "deployments/scale",
                "replicasets",
                "replicasets/status",
                "replicasets/scale",
            ],
        ),
        rule(
            READ,
            "autoscaling",
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
        ),
        rule(
            READ,
            "batch",
            &["jobs", "cronjobs", "cronjobs/status", "jobs/status"],
        ),
        rule(
            READ,
            "extensions",
            &[
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "ingresses",
                "ingresses/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "replicationcontrollers/scale",
                "networkpolicies",
            ],
        ),
        rule(
            READ,
            "policy",
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        rule(
            READ,
            "networking.k8s.io",
            &["networkpolicies", "ingresses", "ingresses/status"],
        ),
    ]
}

fn group(name: &str) -> Subject {
    Subject {
        api_group: Some(API_GROUP.into()),
        kind: GROUP_KIND.into(),
        name: name.into(),
        namespace: None,
    }
}

/// A binding named like the ClusterRole it binds, as kube's bootstrap bindings are.
fn binding(role: &str, groups: &[&str]) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: metadata(role, &[]),
        role_ref: RoleRef {
            api_group: Some(API_GROUP.into()),
            kind: "ClusterRole".into(),
            name: role.into(),
        },
        subjects: Some(groups.iter().map(|g| group(g)).collect()),
    }
}

/// The bootstrap ClusterRoleBindings: `cluster-admin` to `system:masters` (which is how
/// that group may do anything), discovery and basic-user to every authenticated user,
/// public-info-viewer to everyone.
pub fn cluster_role_bindings() -> Vec<ClusterRoleBinding> {
    vec![
        binding("cluster-admin", &[MASTERS]),
        binding("system:discovery", &[AUTHENTICATED]),
        binding("system:basic-user", &[AUTHENTICATED]),
        binding(
            "system:public-info-viewer",
            &[AUTHENTICATED, UNAUTHENTICATED],
        ),
    ]
}

/// The bootstrap policy as a snapshot, with `admin`, `edit` and `view` aggregated: what a
/// fresh server decides from (and a base for tests).
pub fn policy() -> PolicySnapshot {
    let mut roles = cluster_roles();
    for aggregated in aggregate(&roles) {
        if let Some(r) = roles
            .iter_mut()
            .find(|r| r.metadata.name == aggregated.metadata.name)
        {
            *r = aggregated;
        }
    }
    PolicySnapshot::from_objects([], roles, [], cluster_role_bindings())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::fixtures::{path_request, request, role_binding, user, user_subject};
    use crate::authz::{Decision, authorize, rules_for};
    use crate::user::UserInfo;

    fn names<T: k8s_openapi::Metadata<Ty = ObjectMeta>>(objects: &[T]) -> Vec<&str> {
        objects
            .iter()
            .map(|o| o.metadata().name.as_deref().unwrap())
            .collect()
    }

    #[test]
    fn has_kubes_roles_and_bindings_with_their_metadata() {
        let roles = cluster_roles();
        assert_eq!(
            names(&roles),
            [
                "cluster-admin",
                "system:discovery",
                "system:basic-user",
                "system:public-info-viewer",
                "admin",
                "edit",
                "view",
                "system:aggregate-to-admin",
                "system:aggregate-to-edit",
                "system:aggregate-to-view",
            ]
        );
        let bindings = cluster_role_bindings();
        assert_eq!(
            names(&bindings),
            [
                "cluster-admin",
                "system:discovery",
                "system:basic-user",
                "system:public-info-viewer"
            ]
        );
        let metas = roles
            .iter()
            .map(|r| &r.metadata)
            .chain(bindings.iter().map(|b| &b.metadata));
        for meta in metas {
            let labels = meta.labels.as_ref().unwrap();
            assert_eq!(
                labels[BOOTSTRAPPING_LABEL], "rbac-defaults",
                "{:?}",
                meta.name
            );
            assert_eq!(
                meta.annotations.as_ref().unwrap()[AUTOUPDATE_ANNOTATION],
                "true"
            );
        }
        let edit = &roles[5];
        assert_eq!(
            edit.metadata.labels.as_ref().unwrap()[AGGREGATE_TO_ADMIN],
            "true"
        );
        assert!(edit.rules.is_none());
        let view_selector = &roles[6]
            .aggregation_rule
            .as_ref()
            .unwrap()
            .cluster_role_selectors;
        assert_eq!(
            view_selector.as_ref().unwrap()[0]
                .match_labels
                .as_ref()
                .unwrap()[AGGREGATE_TO_VIEW],
            "true"
        );
        // Every bound role exists.
        for b in &bindings {
            assert!(names(&roles).contains(&b.role_ref.name.as_str()));
        }
    }

    #[test]
    fn system_masters_may_do_anything_through_the_cluster_admin_binding() {
        let policy = policy();
        let admin = user("kubernetes-admin", &[MASTERS]);
        let expected = r#"RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters""#;
        for attrs in [
            request(&admin, "delete", "", "secrets", "kube-system", "x"),
            request(&admin, "escalate", API_GROUP, "clusterroles", "", "x"),
            request(&admin, "update", "example.com", "widgets/status", "ns", "w"),
            path_request(&admin, "post", "/anything"),
        ] {
            assert_eq!(authorize(&policy, &attrs), Decision::Allow(expected.into()));
        }
        // No special case: without the bootstrap binding, the group means nothing.
        let mut policy = policy;
        policy.remove_cluster_role_binding("cluster-admin");
        assert!(!authorize(&policy, &request(&admin, "get", "", "pods", "ns", "p")).allowed());
    }

    #[test]
    fn every_user_may_discover_and_review_themselves_anonymous_users_less() {
        let policy = policy();
        let alice = user("alice", &[]);
        for path in [
            "/api",
            "/apis/apps/v1",
            "/version",
            "/openapi/v3",
            "/healthz",
        ] {
            assert!(
                authorize(&policy, &path_request(&alice, "get", path)).allowed(),
                "{path}"
            );
        }
        assert!(!authorize(&policy, &path_request(&alice, "get", "/metrics")).allowed());
        assert!(!authorize(&policy, &path_request(&alice, "post", "/api")).allowed());
        for (group, resource) in [
            ("authorization.k8s.io", "selfsubjectaccessreviews"),
            ("authorization.k8s.io", "selfsubjectrulesreviews"),
            ("authentication.k8s.io", "selfsubjectreviews"),
        ] {
            assert!(
                authorize(&policy, &request(&alice, "create", group, resource, "", "")).allowed()
            );
        }
        assert!(!authorize(&policy, &request(&alice, "list", "", "pods", "default", "")).allowed());

        let anonymous = UserInfo::anonymous();
        assert_eq!(
            authorize(&policy, &path_request(&anonymous, "get", "/readyz")),
            Decision::Allow(
                r#"RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated""#.into()
            )
        );
        assert!(!authorize(&policy, &path_request(&anonymous, "get", "/api")).allowed());
        let ssar = request(
            &anonymous,
            "create",
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
            "",
            "",
        );
        assert!(!authorize(&policy, &ssar).allowed());
    }

    /// `alice` is bound to `role` in ns1.
    fn bound_to(role: &str) -> (PolicySnapshot, UserInfo) {
        let mut policy = policy();
        policy.insert_role_binding(role_binding(
            "ns1",
            "b",
            "ClusterRole",
            role,
            vec![user_subject("alice")],
        ));
        (policy, user("alice", &[]))
    }

    #[test]
    fn aggregated_view_reads_workloads_but_not_secrets() {
        let (policy, alice) = bound_to("view");
        let may = |verb: &str, group: &str, resource: &str| {
            authorize(&policy, &request(&alice, verb, group, resource, "ns1", "")).allowed()
        };
        for (group, resource) in [
            ("", "pods"),
            ("", "pods/log"),
            ("", "configmaps"),
            ("", "services"),
            ("", "endpoints"),
            ("", "events"),
            ("", "namespaces"),
            ("", "persistentvolumeclaims"),
            ("", "serviceaccounts"),
            ("", "limitranges"),
            ("", "resourcequotas"),
            ("", "replicationcontrollers"),
            ("apps", "deployments"),
            ("apps", "deployments/scale"),
            ("apps", "statefulsets/status"),
            ("apps", "daemonsets"),
            ("apps", "replicasets"),
            ("batch", "jobs"),
            ("batch", "cronjobs"),
            ("autoscaling", "horizontalpodautoscalers"),
            ("policy", "poddisruptionbudgets"),
            ("networking.k8s.io", "networkpolicies"),
            ("networking.k8s.io", "ingresses"),
        ] {
            assert!(
                may("list", group, resource),
                "view should list {group}/{resource}"
            );
        }
        assert!(!may("get", "", "secrets"));
        assert!(!may("list", "", "secrets"));
        assert!(!may("create", "", "pods"));
        assert!(!may("get", "", "pods/exec"));
        assert!(!may("list", API_GROUP, "roles"));
        // Only in its namespace.
        assert!(!authorize(&policy, &request(&alice, "list", "", "pods", "ns2", "")).allowed());
    }

    #[test]
    fn aggregated_edit_reads_secrets_and_writes_workloads() {
        let (policy, alice) = bound_to("edit");
        let may = |verb: &str, group: &str, resource: &str| {
            authorize(&policy, &request(&alice, verb, group, resource, "ns1", "x")).allowed()
        };
        assert!(may("get", "", "secrets"));
        assert!(may("create", "", "secrets"));
        assert!(may("create", "", "pods/exec"));
        assert!(may("delete", "apps", "deployments"));
        assert!(may("update", "apps", "deployments/scale"));
        assert!(may("patch", "batch", "cronjobs"));
        assert!(may("create", "", "serviceaccounts/token"));
        assert!(may("impersonate", "", "serviceaccounts"));
        assert!(may("list", "", "pods"), "edit includes view");
        // Not the privileged parts of a namespace.
        assert!(!may("update", "", "pods/status"));
        assert!(!may("create", "", "resourcequotas"));
        assert!(!may("create", API_GROUP, "rolebindings"));
        assert!(!may("update", "", "namespaces"));
    }

    #[test]
    fn aggregated_admin_also_manages_rbac_in_its_namespace() {
        let (policy, alice) = bound_to("admin");
        let may = |verb: &str, group: &str, resource: &str| {
            authorize(&policy, &request(&alice, verb, group, resource, "ns1", "x")).allowed()
        };
        assert!(may("create", API_GROUP, "rolebindings"));
        assert!(may("delete", API_GROUP, "roles"));
        assert!(may(
            "create",
            "authorization.k8s.io",
            "localsubjectaccessreviews"
        ));
        assert!(may("get", "", "secrets"), "admin includes edit");
        assert!(may("watch", "", "pods"), "admin includes view");
        assert!(!may("create", API_GROUP, "clusterroles"));
    }

    #[test]
    fn an_admin_may_grant_edit_but_a_viewer_may_not_grant_edit() {
        use crate::authz::escalation::check_role_binding_write;
        let (policy, alice) = bound_to("admin");
        let grant = role_binding(
            "ns1",
            "eve-edit",
            "ClusterRole",
            "edit",
            vec![user_subject("eve")],
        );
        assert_eq!(
            check_role_binding_write(&policy, &alice, "ns1", &grant, None, |_| false),
            Ok(())
        );
        let (policy, alice) = bound_to("view");
        assert!(check_role_binding_write(&policy, &alice, "ns1", &grant, None, |_| false).is_err());
    }

    #[test]
    fn aggregation_fills_admin_edit_and_view_only() {
        let changed = aggregate(&cluster_roles());
        assert_eq!(names(&changed), ["admin", "edit", "view"]);
        let policy = policy();
        let rules = |name: &str| policy.cluster_role(name).unwrap().rules.clone().unwrap();
        // edit gathers view's rules, admin gathers edit's.
        let (view, edit, admin) = (rules("view"), rules("edit"), rules("admin"));
        assert_eq!(view, aggregate_to_view_rules());
        assert!(view.iter().all(|r| edit.contains(r)));
        assert!(edit.iter().all(|r| admin.contains(r)));
        assert!(admin.len() > edit.len() && edit.len() > view.len());
        // Nobody is bound to them by default: a user has self-review and discovery only
        // (bindings visited in name order).
        let expected: Vec<PolicyRule> = [
            "system:basic-user",
            "system:discovery",
            "system:public-info-viewer",
        ]
        .iter()
        .flat_map(|name| rules(name))
        .collect();
        assert_eq!(rules_for(&policy, &user("alice", &[]), "ns1"), expected);
    }
}
