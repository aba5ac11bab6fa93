//! ClusterRole aggregation, as kube-controller-manager's `clusterrole-aggregation`
//! controller: a ClusterRole with an `aggregationRule` gets the rules of every other
//! ClusterRole matching one of its label selectors.
//!
//! The server runs [`aggregate`] over all ClusterRoles after any of them changes, and
//! writes back the ones it returns.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use kapi_validation::go::quote;

/// A label selector that cannot be evaluated (kube's `LabelSelectorAsSelector` errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorError(String);

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SelectorError {}

/// Whether `labels` match `selector`, as apimachinery's `LabelSelectorAsSelector`: every
/// `matchLabels` pair and every `matchExpressions` requirement (`In`, `NotIn`, `Exists`,
/// `DoesNotExist`) must hold; an empty selector matches everything.
pub fn selector_matches(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> Result<bool, SelectorError> {
    let mut matches = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    for req in selector.match_expressions.iter().flatten() {
        let values = req.values.as_deref().unwrap_or_default();
        let value = labels.get(&req.key);
        // Validate every requirement, even once the answer is known: a broken selector
        // is an error whatever the labels.
        let holds = match req.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => {
                return Err(SelectorError(format!(
                    "key {}: for 'in', 'notin' operators, values set can't be empty",
                    quote(&req.key)
                )));
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(SelectorError(format!(
                    "key {}: for 'exists', 'doesnotexist' operators, values set must be empty",
                    quote(&req.key)
                )));
            }
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            other => {
                return Err(SelectorError(format!(
                    "{} is not a valid label selector operator",
                    quote(other)
                )));
            }
        };
        matches &= holds;
    }
    Ok(matches)
}

fn name_of(role: &ClusterRole) -> &str {
    role.metadata.name.as_deref().unwrap_or_default()
}

/// Rules compared as kube's `equality.Semantic`, where an absent list equals an empty one.
fn same_rule(a: &PolicyRule, b: &PolicyRule) -> bool {
    fn l(v: &Option<Vec<String>>) -> &[String] {
        v.as_deref().unwrap_or_default()
    }
    a.verbs == b.verbs
        && l(&a.api_groups) == l(&b.api_groups)
        && l(&a.resources) == l(&b.resources)
        && l(&a.resource_names) == l(&b.resource_names)
        && l(&a.non_resource_urls) == l(&b.non_resource_urls)
}

fn same_rules(a: &[PolicyRule], b: &[PolicyRule]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_rule(x, y))
}

/// The rules `role` aggregates from `all`, as kube's controller computes them: for each
/// selector in turn, the ClusterRoles it matches in name order (`role` itself excluded),
/// their rules appended unless already there. `None` if `role` has no aggregationRule.
pub fn aggregated_rules(
    role: &ClusterRole,
    all: &[ClusterRole],
) -> Result<Option<Vec<PolicyRule>>, SelectorError> {
    let Some(rule) = &role.aggregation_rule else {
        return Ok(None);
    };
    let mut sorted: Vec<&ClusterRole> = all.iter().collect();
    sorted.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    let no_labels = BTreeMap::new();
    let mut rules: Vec<PolicyRule> = Vec::new();
    for selector in rule.cluster_role_selectors.iter().flatten() {
        for other in &sorted {
            if name_of(other) == name_of(role) {
                continue;
            }
            let labels = other.metadata.labels.as_ref().unwrap_or(&no_labels);
            if !selector_matches(selector, labels)? {
                continue;
            }
            for r in other.rules.iter().flatten() {
                if !rules.iter().any(|known| same_rule(known, r)) {
                    rules.push(r.clone());
                }
            }
        }
    }
    Ok(Some(rules))
}

/// The ClusterRoles whose rules aggregation changes, with their new rules, in name order.
///
/// kube's controller updates one role at a time and runs again after each update, so
/// roles aggregating aggregated roles (`admin` gathers `edit`, which gathers `view`)
/// settle after a few rounds; this computes the settled result at once. A role whose
/// selectors are invalid is left as it is (kube's controller retries it forever).
pub fn aggregate(cluster_roles: &[ClusterRole]) -> Vec<ClusterRole> {
    let mut original: Vec<&ClusterRole> = cluster_roles.iter().collect();
    original.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    let mut current: Vec<ClusterRole> = original.iter().map(|r| (*r).clone()).collect();
    // Each round settles at least one more level of nesting; cycles are bounded too.
    for _ in 0..=current.len() {
        let mut changed = false;
        for i in 0..current.len() {
            let Ok(Some(rules)) = aggregated_rules(&current[i], &current) else {
                continue;
            };
            if !same_rules(&rules, current[i].rules.as_deref().unwrap_or_default()) {
                current[i].rules = Some(rules);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    current
        .into_iter()
        .zip(original)
        .filter(|(new, old)| {
            !same_rules(
                new.rules.as_deref().unwrap_or_default(),
                old.rules.as_deref().unwrap_or_default(),
            )
        })
        .map(|(new, _)| new)
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::rbac::v1::AggregationRule;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    use super::*;
    use crate::authz::fixtures::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn expr(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
        }
    }

    fn match_labels(pairs: &[(&str, &str)]) -> LabelSelector {
        LabelSelector {
            match_labels: Some(labels(pairs)),
            ..LabelSelector::default()
        }
    }

    fn match_expressions(exprs: Vec<LabelSelectorRequirement>) -> LabelSelector {
        LabelSelector {
            match_expressions: Some(exprs),
            ..LabelSelector::default()
        }
    }

    fn aggregating(
        name: &str,
        own_labels: &[(&str, &str)],
        selectors: Vec<LabelSelector>,
    ) -> ClusterRole {
        let mut role = labelled_cluster_role(name, own_labels, vec![]);
        role.rules = None;
        role.aggregation_rule = Some(AggregationRule {
            cluster_role_selectors: Some(selectors),
        });
        role
    }

    #[test]
    fn selectors_match_labels_and_expressions() {
        let l = labels(&[("tier", "web"), ("env", "prod")]);
        let yes = |s: LabelSelector| selector_matches(&s, &l).unwrap();
        assert!(yes(LabelSelector::default()));
        assert!(yes(match_labels(&[("tier", "web")])));
        assert!(!yes(match_labels(&[("tier", "web"), ("env", "dev")])));
        assert!(yes(match_expressions(vec![expr(
            "env",
            "In",
            &["dev", "prod"]
        )])));
        assert!(!yes(match_expressions(vec![expr("env", "In", &["dev"])])));
        assert!(!yes(match_expressions(vec![expr("missing", "In", &["x"])])));
        assert!(yes(match_expressions(vec![expr("env", "NotIn", &["dev"])])));
        assert!(yes(match_expressions(vec![expr(
            "missing",
            "NotIn",
            &["dev"]
        )])));
        assert!(!yes(match_expressions(vec![expr(
            "env",
            "NotIn",
            &["prod"]
        )])));
        assert!(yes(match_expressions(vec![expr("tier", "Exists", &[])])));
        assert!(!yes(match_expressions(vec![expr(
            "missing",
            "Exists",
            &[]
        )])));
        assert!(yes(match_expressions(vec![expr(
            "missing",
            "DoesNotExist",
            &[]
        )])));
        assert!(!yes(match_expressions(vec![expr(
            "tier",
            "DoesNotExist",
            &[]
        )])));
        // Labels and expressions must all hold.
        let mut both = match_labels(&[("tier", "web")]);
        both.match_expressions = Some(vec![expr("env", "In", &["dev"])]);
        assert!(!yes(both));
    }

    #[test]
    fn invalid_selectors_are_errors() {
        let l = labels(&[]);
        for bad in [
            expr("a", "In", &[]),
            expr("a", "NotIn", &[]),
            expr("a", "Exists", &["x"]),
            expr("a", "DoesNotExist", &["x"]),
            expr("a", "Equals", &["x"]),
        ] {
            assert!(
                selector_matches(&match_expressions(vec![bad.clone()]), &l).is_err(),
                "{bad:?}"
            );
        }
        assert_eq!(
            selector_matches(&match_expressions(vec![expr("a", "Equals", &["x"])]), &l)
                .unwrap_err()
                .to_string(),
            r#""Equals" is not a valid label selector operator"#
        );
    }

    #[test]
    fn aggregates_matching_roles_in_order_without_duplicates_or_itself() {
        let pods = rule(&["get"], &[""], &["pods"]);
        let nodes = rule(&["list"], &[""], &["nodes"]);
        let secrets = rule(&["get"], &[""], &["secrets"]);
        let roles = vec![
            labelled_cluster_role(
                "b-nodes",
                &[("agg", "yes")],
                vec![nodes.clone(), pods.clone()],
            ),
            labelled_cluster_role("a-pods", &[("agg", "yes")], vec![pods.clone()]),
            labelled_cluster_role("c-secrets", &[("agg", "no")], vec![secrets.clone()]),
            labelled_cluster_role("unlabelled", &[], vec![secrets.clone()]),
            // It matches its own selector; its rules are not its own input.
            aggregating(
                "target",
                &[("agg", "yes")],
                vec![match_labels(&[("agg", "yes")])],
            ),
        ];
        let changed = aggregate(&roles);
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].metadata.name.as_deref(), Some("target"));
        assert_eq!(changed[0].rules, Some(vec![pods.clone(), nodes.clone()]));
        // Once written back, nothing changes.
        let mut settled = roles.clone();
        settled[4] = changed[0].clone();
        assert!(aggregate(&settled).is_empty());
    }

    #[test]
    fn aggregates_with_match_expressions_selector_by_selector() {
        let pods = rule(&["get"], &[""], &["pods"]);
        let nodes = rule(&["list"], &[""], &["nodes"]);
        let secrets = rule(&["get"], &[""], &["secrets"]);
        let roles = vec![
            labelled_cluster_role("a", &[("env", "prod")], vec![secrets.clone()]),
            labelled_cluster_role("b", &[("env", "dev"), ("team", "x")], vec![pods.clone()]),
            labelled_cluster_role("c", &[("team", "y")], vec![nodes.clone()]),
            aggregating(
                "target",
                &[],
                vec![
                    // First every role of team x or y, then those without an env.
                    match_expressions(vec![expr("team", "In", &["x", "y"])]),
                    match_expressions(vec![
                        expr("env", "DoesNotExist", &[]),
                        expr("team", "Exists", &[]),
                    ]),
                ],
            ),
            aggregating(
                "not-prod",
                &[],
                vec![match_expressions(vec![expr("env", "NotIn", &["prod"])])],
            ),
        ];
        let changed = aggregate(&roles);
        let by_name: BTreeMap<_, _> = changed
            .iter()
            .map(|r| (r.metadata.name.clone().unwrap(), r.rules.clone().unwrap()))
            .collect();
        assert_eq!(by_name["target"], vec![pods.clone(), nodes.clone()]);
        // NotIn also matches roles without the label, and aggregated roles themselves.
        assert_eq!(by_name["not-prod"], vec![pods, nodes]);
    }

    #[test]
    fn nested_aggregation_settles_in_one_call() {
        let read = rule(&["get"], &[""], &["pods"]);
        let write = rule(&["create"], &[""], &["pods"]);
        let grant = rule(&["create"], &["rbac.authorization.k8s.io"], &["roles"]);
        let roles = vec![
            // Named so that one pass in name order would see stale nested rules.
            aggregating("a-admin", &[], vec![match_labels(&[("to-admin", "true")])]),
            aggregating(
                "b-edit",
                &[("to-admin", "true")],
                vec![match_labels(&[("to-edit", "true")])],
            ),
            aggregating(
                "c-view",
                &[("to-edit", "true")],
                vec![match_labels(&[("to-view", "true")])],
            ),
            labelled_cluster_role("to-admin", &[("to-admin", "true")], vec![grant.clone()]),
            labelled_cluster_role("to-edit", &[("to-edit", "true")], vec![write.clone()]),
            labelled_cluster_role("to-view", &[("to-view", "true")], vec![read.clone()]),
        ];
        let changed = aggregate(&roles);
        let names: Vec<_> = changed
            .iter()
            .map(|r| r.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["a-admin", "b-edit", "c-view"]);
        assert_eq!(
            changed[0].rules,
            Some(vec![read.clone(), write.clone(), grant])
        );
        assert_eq!(changed[1].rules, Some(vec![read.clone(), write]));
        assert_eq!(changed[2].rules, Some(vec![read]));
    }

    #[test]
    fn roles_with_invalid_selectors_are_left_alone() {
        let roles = vec![
            labelled_cluster_role("a", &[("x", "1")], vec![rule(&["get"], &[""], &["pods"])]),
            aggregating(
                "bad",
                &[],
                vec![match_expressions(vec![expr("x", "Near", &["1"])])],
            ),
        ];
        assert!(aggregate(&roles).is_empty());
        assert!(aggregated_rules(&roles[1], &roles).is_err());
        assert_eq!(aggregated_rules(&roles[0], &roles), Ok(None));
    }

    #[test]
    fn roles_losing_every_source_are_emptied() {
        let mut target = aggregating("target", &[], vec![match_labels(&[("x", "1")])]);
        target.rules = Some(vec![rule(&["get"], &[""], &["pods"])]);
        let changed = aggregate(&[target]);
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].rules, Some(vec![]));
    }
}
