//! CEL `x-kubernetes-validations` rules (`schema/cel/validation.go`): evaluating them
//! over an object (and its old version, for transition rules), their messages, and
//! their `fieldPath`.

use serde_json::Value;

use super::list_type::map_key;
use crate::field::{ErrorList, FieldError, FieldPath, PathSegment};
use crate::schema::cel::EvalError;
use crate::schema::{AdditionalProperties, ListType, Schema, SchemaType, ValidationRule};

pub(super) struct Cel {
    pub(super) errs: ErrorList,
}

impl Cel {
    pub(super) fn node(
        &mut self,
        s: &Schema,
        v: &Value,
        old: Option<&Value>,
        path: &FieldPath,
        resource_root: bool,
    ) {
        // Only non-null values are validated.
        if v.is_null() {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        self.rules(s, v, old, path);
        for sub in &s.all_of {
            self.node(sub, v, old, path, false);
        }
        match v {
            Value::Object(map) => {
                let old_map = old.and_then(Value::as_object);
                for (k, value) in map {
                    let old_v = old_map.and_then(|m| m.get(k));
                    if let Some(prop) = s.properties.get(k) {
                        if resource_root && k == "metadata" {
                            continue;
                        }
                        self.node(prop, value, old_v, &path.child(k), false);
                    } else if let Some(AdditionalProperties::Schema(extra)) =
                        &s.additional_properties
                    {
                        self.node(extra, value, old_v, &path.key(k), false);
                    }
                }
            }
            Value::Array(items) => {
                let Some(item_schema) = &s.items else { return };
                // Only list-type map items correlate with old items.
                let old_items = old.and_then(Value::as_array);
                for (i, item) in items.iter().enumerate() {
                    let old_item = match (s.x_list_type, old_items) {
                        (Some(ListType::Map), Some(olds)) => {
                            let key = map_key(s, item);
                            olds.iter().find(|o| key.is_some() && map_key(s, o) == key)
                        }
                        _ => None,
                    };
                    self.node(item_schema, item, old_item, &path.index(i), false);
                }
            }
            _ => {}
        }
    }

    fn rules(&mut self, s: &Schema, v: &Value, old: Option<&Value>, path: &FieldPath) {
        // The bad value of a CEL error is the schema type, as in Kubernetes.
        let type_name = s.type_.map_or("", SchemaType::as_str);
        for rule in &s.x_validations {
            if rule.is_transition && old.is_none() && !rule.optional_old_self {
                continue;
            }
            match rule.compiled.eval(s, v, old, rule.optional_old_self) {
                Ok(true) => {}
                Ok(false) => self.failure(s, rule, v, old, path, type_name),
                Err(EvalError::NoSuchOverload(e)) => self.errs.push(FieldError::invalid(
                    path,
                    type_name,
                    format!(
                        "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule_error_string(rule)
                    ),
                )),
                Err(EvalError::Other(e)) => self.errs.push(FieldError::invalid(
                    path,
                    type_name,
                    format!("{e} evaluating rule: {}", rule_error_string(rule)),
                )),
            }
        }
    }

    fn failure(
        &mut self,
        s: &Schema,
        rule: &ValidationRule,
        v: &Value,
        old: Option<&Value>,
        path: &FieldPath,
        type_name: &str,
    ) {
        let mut at = path.clone();
        if let Some(fp) = &rule.field_path {
            if let Ok(segments) = rule_field_path(fp, s) {
                for seg in segments {
                    at = match seg {
                        PathSegment::Key(k) => at.key(&k),
                        PathSegment::Index(i) => at.index(i),
                        PathSegment::Field(f) => at.child(&f),
                    };
                }
            }
        }
        let detail = match rule
            .compiled
            .eval_message(s, v, old, rule.optional_old_self)
        {
            Some(Ok(msg)) => msg,
            // Kubernetes logs the failure and falls back to the rule's message.
            Some(Err(_)) | None => rule_message_or_default(rule),
        };
        let err = match rule.reason.as_deref() {
            Some("FieldValueForbidden") => FieldError::forbidden(&at, detail),
            Some("FieldValueRequired") => FieldError::required(&at, detail),
            Some("FieldValueDuplicate") => FieldError::duplicate(&at, type_name),
            _ => FieldError::invalid(&at, type_name, detail),
        };
        self.errs.push(err);
    }
}

/// ruleMessageOrDefault in cel/validation.go.
fn rule_message_or_default(rule: &ValidationRule) -> String {
    match &rule.message {
        Some(m) if !m.is_empty() => m.trim().to_string(),
        _ => format!("failed rule: {}", rule_error_string(rule)),
    }
}

/// ruleErrorString in cel/validation.go.
fn rule_error_string(rule: &ValidationRule) -> String {
    match &rule.message {
        Some(m) if !m.is_empty() => m.trim().to_string(),
        _ => rule.rule.trim().to_string(),
    }
}

/// Parses a rule's `fieldPath` (`.a.b`, `['key']`) against the schema it sits on, as
/// cel/validation.go ValidFieldPath does; named properties become fields and map entries
/// keys.
pub(crate) fn rule_field_path(fp: &str, node: &Schema) -> Result<Vec<PathSegment>, String> {
    let mut out = Vec::new();
    let mut schema = node;
    let chars: Vec<char> = fp.chars().collect();
    let mut i = 0;
    let step = |name: String, schema: &mut &Schema| -> Result<PathSegment, String> {
        if !schema.properties.is_empty() {
            let next = schema
                .properties
                .get(&name)
                .ok_or("does not refer to a valid field")?;
            *schema = next;
            Ok(PathSegment::Field(name))
        } else if let Some(AdditionalProperties::Schema(extra)) = &schema.additional_properties {
            *schema = extra;
            Ok(PathSegment::Key(name))
        } else {
            Err("does not refer to a valid field".to_string())
        }
    };
    if chars.is_empty() {
        return Err("unexpected end of JSON path".to_string());
    }
    while i < chars.len() {
        match chars[i] {
            '.' => {
                let start = i + 1;
                let mut end = start;
                while end < chars.len() && !matches!(chars[end], '.' | '[' | ']') {
                    end += 1;
                }
                if end == start {
                    return Err("unexpected end of JSON path".to_string());
                }
                out.push(step(chars[start..end].iter().collect(), &mut schema)?);
                i = end;
            }
            '[' => {
                if chars.get(i + 1) != Some(&'\'') {
                    return Err("expected single quoted string".to_string());
                }
                let mut j = i + 2;
                let mut name = String::new();
                while j < chars.len() && !(chars[j] == '\'' && chars[j - 1] != '\\') {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    name.push(chars[j]);
                    j += 1;
                }
                if chars.get(j + 1) != Some(&']') {
                    return Err("expected ]".to_string());
                }
                out.push(step(name, &mut schema)?);
                i = j + 2;
            }
            c => return Err(format!("expected [ or . but got: {c}")),
        }
    }
    Ok(out)
}
