//! The checks kube-apiserver makes of a CRD's CEL rules against the schema as a whole
//! (`apiextensions/validation/validation.go`): every field a rule selects is in the
//! schema, and each rule's estimated cost, times how often its node can occur in one
//! object, is within the budget for one expression; so is the sum of them all.

use crate::field::{ErrorList, FieldError, FieldPath};
use crate::schema::cel::Ty;
use crate::schema::cel_static::max_cardinality;
use crate::schema::{AdditionalProperties, Schema};

/// kube's `StaticEstimatedCostLimit`: the most one expression may cost.
pub const EXPRESSION_COST_LIMIT: u64 = 10_000_000;
/// kube's `StaticEstimatedCRDCostLimit`: the most all of a schema's rules may cost.
pub const SCHEMA_COST_LIMIT: u64 = 100_000_000;
/// How many of the most expensive expressions an over-budget schema names.
const MOST_EXPENSIVE: usize = 4;

/// The sum of every expression's cost, and the most expensive ones.
#[derive(Default)]
struct Total {
    sum: u64,
    most_expensive: Vec<(FieldPath, u64)>,
}

impl Total {
    fn observe(&mut self, path: FieldPath, cost: u64) {
        self.sum = self.sum.saturating_add(cost);
        // kube tracks only expressions above 1% of one expression's budget.
        if cost < EXPRESSION_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(MOST_EXPENSIVE);
    }
}

/// Checks every rule of the schema rooted at `root` (a resource's root), whose errors
/// are reported under `at`.
pub(super) fn check_rules(root: &Schema, at: &FieldPath, errs: &mut ErrorList) {
    let mut total = Total::default();
    visit(root, at, Some(1), true, &mut total, errs);
    if total.sum > SCHEMA_COST_LIMIT {
        for (path, _) in &total.most_expensive {
            errs.push(FieldError::forbidden(
                path,
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errs.push(FieldError::forbidden(
            at,
            cost_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total.sum,
                SCHEMA_COST_LIMIT,
            ),
        ));
    }
}

/// `cardinality` is how often `node` can occur in one object, `None` where a list or
/// map above it has no bound.
fn visit(
    node: &Schema,
    path: &FieldPath,
    cardinality: Option<u64>,
    resource: bool,
    total: &mut Total,
    errs: &mut ErrorList,
) {
    let this = if resource {
        Ty::Resource(node)
    } else {
        Ty::Node(node)
    };
    for (i, rule) in node.x_validations.iter().enumerate() {
        let rp = path.child("x-kubernetes-validations").index(i);
        // An optional oldSelf is a CEL optional, which kapi does not type.
        let old = if rule.optional_old_self {
            Ty::Dyn
        } else {
            this.clone()
        };
        let vars = [("self", this.clone()), ("oldSelf", old)];
        match rule.compiled.check_rule(&vars) {
            Some(Ok(est)) => {
                let times = cardinality.unwrap_or_else(|| max_cardinality(node));
                let cost = if est.max_cost == 0 {
                    0
                } else {
                    est.max_cost.saturating_mul(times)
                };
                if cost > EXPRESSION_COST_LIMIT {
                    errs.push(FieldError::forbidden(
                        &rp.child("rule"),
                        cost_message("estimated rule cost", cost, EXPRESSION_COST_LIMIT),
                    ));
                }
                total.observe(rp.child("rule"), cost);
            }
            Some(Err(msg)) => errs.push(FieldError::invalid(
                &rp.child("rule"),
                rule.rule.clone(),
                format!("compilation failed: {msg}"),
            )),
            None => {}
        }
        match rule.compiled.check_message(&vars) {
            Some(Ok(est)) => {
                if est.max_cost > EXPRESSION_COST_LIMIT {
                    errs.push(FieldError::forbidden(
                        &rp.child("messageExpression"),
                        cost_message(
                            "estimated messageExpression cost",
                            est.max_cost,
                            EXPRESSION_COST_LIMIT,
                        ),
                    ));
                }
                total.observe(rp.child("messageExpression"), est.max_cost);
            }
            Some(Err(msg)) => errs.push(FieldError::invalid(
                &rp.child("messageExpression"),
                rule.message_expression.clone().unwrap_or_default(),
                format!("messageExpression compilation failed: {msg}"),
            )),
            None => {}
        }
    }
    for (name, prop) in &node.properties {
        let p = path.child("properties").key(name);
        visit(prop, &p, cardinality, prop.x_embedded_resource, total, errs);
    }
    if let Some(items) = &node.items {
        let times = cardinality
            .zip(node.max_items)
            .map(|(c, n)| c.saturating_mul(n));
        let p = path.child("items");
        visit(items, &p, times, items.x_embedded_resource, total, errs);
    }
    if let Some(AdditionalProperties::Schema(values)) = &node.additional_properties {
        let times = cardinality
            .zip(node.max_properties)
            .map(|(c, n)| c.saturating_mul(n));
        let p = path.child("additionalProperties");
        visit(values, &p, times, values.x_embedded_resource, total, errs);
    }
}

/// kube's words for a cost over its limit (`getCostErrorMessage`).
pub fn cost_message(what: &str, cost: u64, limit: u64) -> String {
    let exceed = cost as f64 / limit as f64;
    let by = if exceed > 100.0 {
        "more than 100x".to_string()
    } else if exceed < 1.5 {
        format!("{exceed:.6}x")
    } else {
        format!("{exceed:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {by} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}
