//! One policy evaluated for one request and one parameter object, as kube-apiserver's
//! `validating.Validator` does: `matchConditions` first (a false one skips the policy),
//! then `variables` in order, then each of `validations`, then `auditAnnotations`.
//!
//! Every expression is charged to the request's [`Budget`] before it runs, as kube
//! limits CEL: one expression may cost at most [`PER_CALL_LIMIT`] (kube's
//! `operation cancelled: actual cost limit exceeded`), all of one request's at most
//! [`REQUEST_BUDGET`] (then [`OUT_OF_BUDGET`]); an expression over either fails like
//! any expression that cannot be evaluated, which `failurePolicy` decides. The cost is
//! `kapi_core::schema::cost`'s measure of the expression on the request's data.
//!
//! Where kapi differs: variables are evaluated before the validations rather than when
//! first used, so a variable that fails to evaluate is left out and an expression using
//! it fails with `no such key`; kube reports the variable's own error then.

use kapi_core::schema::cel::{COST_LIMIT_EXCEEDED, Expression, Meter};
use serde_json::{Map, Value};

use super::compiled::{Compiled, Policy};

/// kube's limit on one expression's cost (`celconfig.PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// kube's budget for the expressions of one request (`celconfig.RuntimeCELCostBudget`).
pub const REQUEST_BUDGET: u64 = 10_000_000;
/// The error of an expression past the request's budget.
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// What is left of a request's CEL budget.
#[derive(Debug)]
pub struct Budget {
    left: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Self::new(REQUEST_BUDGET)
    }
}

impl Budget {
    /// A budget of `units`.
    pub fn new(units: u64) -> Self {
        Self { left: units }
    }

    /// Runs `f` with a meter limited to one call's limit or what is left, whichever is
    /// less, and takes what it spent.
    fn run<T>(&mut self, f: impl FnOnce(&mut Meter) -> Result<T, String>) -> Result<T, String> {
        if self.left == 0 {
            return Err(OUT_OF_BUDGET.to_string());
        }
        let limit = PER_CALL_LIMIT.min(self.left);
        let mut meter = Meter::new(limit);
        let result = f(&mut meter);
        self.left = self.left.saturating_sub(meter.spent());
        match result {
            Err(e) if e == COST_LIMIT_EXCEEDED && limit < PER_CALL_LIMIT => {
                self.left = 0;
                Err(OUT_OF_BUDGET.to_string())
            }
            other => other,
        }
    }

    fn bool(&mut self, e: &Expression, vars: &[(&str, &Value)]) -> Result<bool, String> {
        self.run(|m| e.eval_bool_metered(vars, m))
    }

    fn json(&mut self, e: &Expression, vars: &[(&str, &Value)]) -> Result<Value, String> {
        self.run(|m| e.eval_json_metered(vars, m))
    }
}

/// kube's limit on a `messageExpression`'s result (`MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// What a request is evaluated with: kube's CEL variables but `variables`.
pub struct Inputs<'a> {
    /// `object` (`null` on delete).
    pub object: &'a Value,
    /// `oldObject` (`null` on create).
    pub old_object: &'a Value,
    /// `request`: the `AdmissionRequest`'s fields.
    pub request: &'a Value,
    /// `namespaceObject` (`null` for cluster-scoped requests).
    pub namespace_object: &'a Value,
    /// `params` (`null` without `paramKind`).
    pub params: &'a Value,
    /// `authorizer`: the library's starting point, with `requestResource`.
    pub authorizer: &'a Value,
}

/// A validation that failed, or an expression that could not be evaluated.
#[derive(Debug, PartialEq)]
pub struct Decision {
    /// Whether the binding's actions apply: a failed validation always, an error only
    /// under `failurePolicy: Fail`.
    pub deny: bool,
    /// What the client or the audit record is told.
    pub message: String,
    /// `reason` of a failed validation (`None`: kube's `Invalid`).
    pub reason: Option<String>,
    /// The position of the validation in `validations` (0 for other errors).
    pub index: usize,
}

/// The policy's verdict on one parameter object.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Failed validations and errors, in order.
    pub decisions: Vec<Decision>,
    /// The policy's `auditAnnotations`, as (`<policy>/<key>`, value).
    pub audit_annotations: Vec<(String, String)>,
}

impl Verdict {
    /// An error outside any one validation (a match condition, the parameters).
    pub fn error(policy: &Policy, message: String) -> Self {
        Self {
            decisions: vec![Decision {
                deny: !policy.ignore_failures,
                message,
                reason: None,
                index: 0,
            }],
            audit_annotations: Vec::new(),
        }
    }
}

fn bindings<'a>(inputs: &Inputs<'a>, variables: &'a Value) -> [(&'static str, &'a Value); 7] {
    [
        ("object", inputs.object),
        ("oldObject", inputs.old_object),
        ("request", inputs.request),
        ("params", inputs.params),
        ("namespaceObject", inputs.namespace_object),
        ("variables", variables),
        ("authorizer", inputs.authorizer),
    ]
}

/// Evaluates `policy`; `None` when a match condition is false (the policy does not
/// apply to this request).
pub fn evaluate(policy: &Policy, inputs: &Inputs<'_>, budget: &mut Budget) -> Option<Verdict> {
    let none = Value::Object(Map::new());
    let mut errors = Vec::new();
    for (name, condition) in &policy.match_conditions {
        let result = condition
            .as_ref()
            .map_err(String::clone)
            .and_then(|c| budget.bool(c, &bindings(inputs, &none)));
        match result {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => errors.push(format!("matchCondition '{name}': {e}")),
        }
    }
    if !errors.is_empty() {
        return Some(Verdict::error(
            policy,
            format!("failed to evaluate match conditions: {}", errors.join(", ")),
        ));
    }
    let variables = variables(policy, inputs, budget);
    let vars = bindings(inputs, &variables);
    let mut verdict = Verdict::default();
    for (index, validation) in policy.validations.iter().enumerate() {
        let source = validation.source.trim();
        let result = match &validation.expression {
            Ok(e) => budget
                .bool(e, &vars)
                .map_err(|e| format!("expression '{source}' resulted in error: {e}")),
            Err(e) => Err(e.clone()),
        };
        let decision = match result {
            Ok(true) => continue,
            Ok(false) => Decision {
                deny: true,
                message: message(validation, &vars, budget)
                    .unwrap_or_else(|| format!("failed expression: {source}")),
                reason: validation.reason.clone(),
                index,
            },
            Err(message) => Decision {
                deny: !policy.ignore_failures,
                message,
                reason: None,
                index,
            },
        };
        verdict.decisions.push(decision);
    }
    for (key, expression) in &policy.audit_annotations {
        match expression
            .as_ref()
            .map_err(String::clone)
            .map(|e| budget.json(e, &vars))
        {
            Ok(Ok(Value::String(v))) => verdict
                .audit_annotations
                .push((format!("{}/{key}", policy.name), v)),
            // A null value means "no annotation".
            Ok(Ok(Value::Null)) => {}
            Ok(Ok(other)) => verdict.decisions.push(Decision {
                deny: !policy.ignore_failures,
                message: format!(
                    "valueExpression of auditAnnotation '{key}' must evaluate to a string or null, not {other}"
                ),
                reason: None,
                index: 0,
            }),
            Ok(Err(e)) | Err(e) => verdict.decisions.push(Decision {
                deny: !policy.ignore_failures,
                message: format!("valueExpression of auditAnnotation '{key}' resulted in error: {e}"),
                reason: None,
                index: 0,
            }),
        }
    }
    Some(verdict)
}

/// `variables`, each evaluated with the ones before it.
fn variables(policy: &Policy, inputs: &Inputs<'_>, budget: &mut Budget) -> Value {
    let mut values = Value::Object(Map::new());
    for (name, expression) in &policy.variables {
        let value = expression
            .as_ref()
            .ok()
            .and_then(|e| budget.json(e, &bindings(inputs, &values)).ok());
        if let (Some(v), Some(map)) = (value, values.as_object_mut()) {
            map.insert(name.clone(), v);
        }
    }
    values
}

/// The message of a failed validation from its `messageExpression`, else its `message`;
/// `None` when neither gives one (kube then quotes the expression).
fn message(
    validation: &super::compiled::Validation,
    vars: &[(&'static str, &Value); 7],
    budget: &mut Budget,
) -> Option<String> {
    let from_expression = validation
        .message_expression
        .as_ref()
        .and_then(|e: &Compiled| e.as_ref().ok())
        .and_then(|e| budget.json(e, vars).ok())
        .and_then(|v| match v {
            Value::String(s) => Some(s.trim().to_string()),
            _ => None,
        })
        .filter(|s| !s.is_empty() && s.len() <= MAX_MESSAGE_BYTES && !s.contains('\n'));
    from_expression.or_else(|| {
        let m = validation.message.trim();
        (!m.is_empty()).then(|| m.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(spec: Value) -> Policy {
        Policy::from_json(&json!({"metadata": {"name": "p"}, "spec": spec}))
    }

    fn run(p: &Policy, object: Value, params: Value) -> Option<Verdict> {
        let null = Value::Null;
        let request = json!({"operation": "CREATE"});
        evaluate(
            p,
            &Inputs {
                object: &object,
                old_object: &null,
                request: &request,
                namespace_object: &null,
                params: &params,
                authorizer: &null,
            },
            &mut Budget::default(),
        )
    }

    #[test]
    fn validations_messages_and_errors() {
        let p = policy(json!({
            "matchConditions": [{"name": "big", "expression": "object.replicas > 1"}],
            "variables": [{"name": "n", "expression": "object.replicas"},
                {"name": "twice", "expression": "variables.n * 2"}],
            "validations": [
                {"expression": "variables.twice <= params.max", "reason": "Forbidden",
                 "messageExpression": "'size ' + string(variables.n) + ' over ' + string(params.max)"},
                {"expression": "object.replicas < 100", "message": " too big "},
                {"expression": "object.replicas < 50"},
                {"expression": "object.missing == 1"}],
            "auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.replicas)"},
                {"key": "none", "valueExpression": "null"}]}));
        assert!(run(&p, json!({"replicas": 1}), json!({"max": 4})).is_none());
        let v = run(&p, json!({"replicas": 120}), json!({"max": 4})).expect("matches");
        let messages: Vec<_> = v
            .decisions
            .iter()
            .map(|d| (d.index, d.deny, d.message.as_str(), d.reason.as_deref()))
            .collect();
        assert_eq!(
            messages,
            [
                (0, true, "size 120 over 4", Some("Forbidden")),
                (1, true, "too big", None),
                (2, true, "failed expression: object.replicas < 50", None),
                (
                    3,
                    true,
                    "expression 'object.missing == 1' resulted in error: no such key: missing",
                    None
                ),
            ]
        );
        assert_eq!(v.audit_annotations, [("p/replicas".into(), "120".into())]);

        let ignore = policy(json!({"failurePolicy": "Ignore",
            "matchConditions": [{"name": "broken", "expression": "object.nope > 1"}],
            "validations": [{"expression": "true"}]}));
        let v = run(&ignore, json!({"replicas": 120}), Value::Null).expect("errors apply");
        assert!(!v.decisions[0].deny);
        assert!(
            v.decisions[0]
                .message
                .starts_with("failed to evaluate match conditions: matchCondition 'broken'"),
            "{:?}",
            v.decisions
        );
    }

    #[test]
    fn costs_are_limited_per_expression_and_per_request() {
        let items: Vec<Value> = (0..1200).map(|i| json!(i)).collect();
        let object = json!({"items": items});
        let p = policy(json!({"validations": [
            {"expression": "object.items.all(x, object.items.exists(y, y == x))"},
            {"expression": "object.items.all(x, x >= 0)"}]}));
        let null = Value::Null;
        let request = json!({});
        let inputs = Inputs {
            object: &object,
            old_object: &null,
            request: &request,
            namespace_object: &null,
            params: &null,
            authorizer: &null,
        };
        let v = evaluate(&p, &inputs, &mut Budget::default()).expect("matches");
        let messages: Vec<&str> = v.decisions.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "expression 'object.items.all(x, object.items.exists(y, y == x))' resulted in \
              error: operation cancelled: actual cost limit exceeded"
            ]
        );
        // A request whose budget is spent fails its remaining expressions.
        let small = json!({"items": (0..100).collect::<Vec<_>>()});
        let inputs = Inputs {
            object: &small,
            ..inputs
        };
        let mut budget = Budget::new(1000);
        let cheap = policy(json!({"validations": [
            {"expression": "object.items.all(x, x >= 0)"},
            {"expression": "object.items.all(x, x >= 0)"}]}));
        let v = evaluate(&cheap, &inputs, &mut budget).expect("matches");
        let messages: Vec<&str> = v.decisions.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [format!(
                "expression 'object.items.all(x, x >= 0)' resulted in error: {OUT_OF_BUDGET}"
            )]
        );
    }
}
