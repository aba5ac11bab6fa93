//! CEL `x-kubernetes-validations` rules: decoding them, the v1 CRD checks of their
//! message, reason and field path, and compiling them.

use serde_json::Value;

use super::decode::{bool_of, opt_str_of, str_of, unknown_field, wrong_type};
use crate::field::{ErrorList, FieldError, FieldPath};
use crate::schema::cel::CompiledRule;
use crate::schema::{Schema, ValidationRule};

const REASONS: [&str; 4] = [
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

pub(super) fn parse_rules(
    val: &Value,
    path: &FieldPath,
    node: &Schema,
    errs: &mut ErrorList,
) -> Vec<ValidationRule> {
    let Value::Array(items) = val else {
        if !val.is_null() {
            errs.push(wrong_type(path, val, "array"));
        }
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let p = path.index(i);
        let Some(obj) = item.as_object() else {
            errs.push(wrong_type(&p, item, "object"));
            continue;
        };
        let mut rule = None;
        let mut message = None;
        let mut message_expression = None;
        let mut reason = None;
        let mut field_path = None;
        let mut optional_old_self = false;
        for (k, v) in obj {
            let kp = p.child(k);
            match k.as_str() {
                "rule" => rule = str_of(v, &kp, errs).map(str::to_string),
                "message" => message = opt_str_of(v, &kp, errs).map(str::to_string),
                "messageExpression" => {
                    message_expression = opt_str_of(v, &kp, errs).map(str::to_string)
                }
                "reason" => reason = opt_str_of(v, &kp, errs).map(str::to_string),
                "fieldPath" => field_path = opt_str_of(v, &kp, errs).map(str::to_string),
                "optionalOldSelf" => optional_old_self = !v.is_null() && bool_of(v, &kp, errs),
                _ => errs.push(unknown_field(&kp, k)),
            }
        }
        let Some(rule) = rule else {
            errs.push(FieldError::required(&p.child("rule"), ""));
            continue;
        };
        // validation.go (ValidationRule checks).
        if let Some(m) = &message {
            if m.trim().is_empty() {
                errs.push(FieldError::required(
                    &p.child("message"),
                    "message must be non-empty if specified",
                ));
            } else if m.contains('\n') {
                errs.push(FieldError::invalid(
                    &p.child("message"),
                    m.as_str(),
                    "message must not contain line breaks",
                ));
            }
        }
        if let Some(m) = &message_expression {
            if m.trim().is_empty() {
                errs.push(FieldError::required(
                    &p.child("messageExpression"),
                    "messageExpression must be non-empty if specified",
                ));
                message_expression = None;
            }
        }
        if let Some(r) = &reason {
            if !REASONS.contains(&r.as_str()) {
                let supported: Vec<Value> = REASONS.iter().map(|r| Value::from(*r)).collect();
                errs.push(FieldError::not_supported(
                    &p.child("reason"),
                    r.as_str(),
                    &supported,
                ));
            }
        }
        if let Some(fp) = &field_path {
            if let Err(e) = crate::schema::validation::rule_field_path(fp, node) {
                errs.push(FieldError::invalid(
                    &p.child("fieldPath"),
                    fp.as_str(),
                    format!("fieldPath must be a valid path: {e}"),
                ));
            }
        }
        let compiled = match CompiledRule::compile(&rule, message_expression.as_deref()) {
            Ok(c) => c,
            Err((which, msg)) => {
                let src = if which == "rule" {
                    rule.clone()
                } else {
                    message_expression.clone().unwrap_or_default()
                };
                errs.push(FieldError::invalid(
                    &p.child(which),
                    src,
                    format!("compilation failed: {msg}"),
                ));
                continue;
            }
        };
        let is_transition = compiled.uses_old_self();
        if optional_old_self && !is_transition {
            errs.push(FieldError::invalid(
                &p.child("optionalOldSelf"),
                true,
                "may not be set if rule does not use oldSelf",
            ));
        }
        out.push(ValidationRule {
            rule,
            message,
            message_expression,
            reason,
            field_path,
            optional_old_self,
            is_transition,
            compiled,
        });
    }
    out
}
