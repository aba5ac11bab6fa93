//! One policy evaluated for one request and one parameter object, as kube-apiserver's
//! `validating.Validator` does: `matchConditions` first (a false one skips the policy),
//! then `variables` in order, then each of `validations`, then `auditAnnotations`.
//!
//! Where kapi differs: variables are evaluated before the validations rather than when
//! first used, so a variable that fails to evaluate is left out and an expression using
//! it fails with `no such key`; kube reports the variable's own error then.

use serde_json::{Map, Value};

use super::compiled::{Compiled, Policy};

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

fn bindings<'a>(inputs: &Inputs<'a>, variables: &'a Value) -> [(&'static str, &'a Value); 6] {
    [
        ("object", inputs.object),
        ("oldObject", inputs.old_object),
        ("request", inputs.request),
        ("params", inputs.params),
        ("namespaceObject", inputs.namespace_object),
        ("variables", variables),
    ]
}

/// Evaluates `policy`; `None` when a match condition is false (the policy does not
/// apply to this request).
pub fn evaluate(policy: &Policy, inputs: &Inputs<'_>) -> Option<Verdict> {
    let none = Value::Object(Map::new());
    let mut errors = Vec::new();
    for (name, condition) in &policy.match_conditions {
        let result = condition
            .as_ref()
            .map_err(String::clone)
            .and_then(|c| c.eval_bool(&bindings(inputs, &none)));
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
    let variables = variables(policy, inputs);
    let vars = bindings(inputs, &variables);
    let mut verdict = Verdict::default();
    for (index, validation) in policy.validations.iter().enumerate() {
        let source = validation.source.trim();
        let result = match &validation.expression {
            Ok(e) => e
                .eval_bool(&vars)
                .map_err(|e| format!("expression '{source}' resulted in error: {e}")),
            Err(e) => Err(e.clone()),
        };
        let decision = match result {
            Ok(true) => continue,
            Ok(false) => Decision {
                deny: true,
                message: message(validation, &vars)
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
        match expression.as_ref().map_err(String::clone).map(|e| e.eval_json(&vars)) {
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
fn variables(policy: &Policy, inputs: &Inputs<'_>) -> Value {
    let mut values = Value::Object(Map::new());
    for (name, expression) in &policy.variables {
        let value = expression
            .as_ref()
            .ok()
            .and_then(|e| e.eval_json(&bindings(inputs, &values)).ok());
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
    vars: &[(&'static str, &Value); 6],
) -> Option<String> {
    let from_expression = validation
        .message_expression
        .as_ref()
        .and_then(|e: &Compiled| e.as_ref().ok())
        .and_then(|e| e.eval_json(vars).ok())
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
            },
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
}
