//! The OpenAPI keywords, checked as kube-openapi's `pkg/validation/validate` checks them
//! (type, allOf/anyOf/oneOf/not, string, number, array, enum and object keywords), with
//! its messages turned into field errors.

use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::equality::{canonical, json_eq};
use crate::field::{ErrorList, FieldError, FieldPath};
use crate::schema::format::{self, go_float, go_quote};
use crate::schema::{AdditionalProperties, Schema, SchemaType};

pub(super) struct OpenApi<'a> {
    /// Composite (allOf/anyOf/oneOf/not) errors are reported here, as Kubernetes does.
    pub(super) root: &'a FieldPath,
    pub(super) errs: ErrorList,
}

/// kube-openapi's "<name> in body" subject.
fn name(path: &FieldPath) -> String {
    path.to_string()
}

fn is_int(v: &Value) -> bool {
    matches!(v, Value::Number(n) if n.is_i64() || n.is_u64())
}

/// kube-openapi `typeValidator.schemaInfoForType`: JSON type and implied format.
fn schema_info(v: &Value) -> (&'static str, &'static str) {
    match v {
        Value::Null => ("null", ""),
        Value::Bool(_) => ("boolean", ""),
        Value::Number(_) if is_int(v) => ("integer", "int64"),
        Value::Number(_) => ("number", "double"),
        Value::String(_) => ("string", ""),
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
    }
}

fn types_of(s: &Schema) -> Vec<&'static str> {
    if s.x_int_or_string {
        vec!["integer", "string"]
    } else {
        s.type_.map(SchemaType::as_str).into_iter().collect()
    }
}

/// errors.InvalidType: "%s in %s must be of type %s: %q", reported as field.TypeInvalid.
fn type_error(path: &FieldPath, type_name: &str, got: &str) -> FieldError {
    FieldError::type_invalid(
        path,
        got,
        format!(
            "{} in body must be of type {type_name}: {}",
            name(path),
            go_quote(got)
        ),
    )
}

impl OpenApi<'_> {
    pub(super) fn node(&mut self, s: &Schema, v: &Value, path: &FieldPath, resource_root: bool) {
        // Type first; a null value only gets the type and enum checks.
        self.check_type(s, v, path);
        if v.is_null() {
            self.check_enum(s, v, path);
            return;
        }
        self.check_junctors(s, v, path);
        if let Value::String(text) = v {
            self.check_string(s, text, path);
        }
        if let Value::Number(_) = v {
            self.check_number(s, v, path);
        }
        if let Value::Array(items) = v {
            self.check_array(s, items, path);
        }
        self.check_enum(s, v, path);
        if let Value::Object(map) = v {
            self.check_object(s, map, path, resource_root);
        }
    }

    // Kept in kube-openapi's shape (type.go) so the two can be compared line by line.
    #[allow(clippy::nonminimal_bool)]
    fn check_type(&mut self, s: &Schema, v: &Value, path: &FieldPath) {
        let types = types_of(s);
        if types.is_empty() {
            return;
        }
        let (sch, fmt) = schema_info(v);
        if v.is_null() {
            if !s.nullable {
                self.errs.push(type_error(path, &types.join(","), "null"));
            }
            return;
        }
        let is_float_int = sch == "number"
            && v.as_f64().is_some_and(|f| f.fract() == 0.0)
            && types.contains(&"integer");
        let is_int_float = sch == "integer" && types.contains(&"number");
        let str_or_slice = matches!(v, Value::String(_) | Value::Array(_));
        let format = s.format.as_deref().unwrap_or("");
        if !str_or_slice
            && !format.is_empty()
            && !(types.contains(&sch) || fmt == format || is_float_int || is_int_float)
        {
            self.errs.push(type_error(path, format, fmt));
            return;
        }
        if !(types.contains(&"number") || types.contains(&"integer"))
            && !format.is_empty()
            && str_or_slice
        {
            return;
        }
        if !(types.contains(&sch) || is_float_int || is_int_float) {
            self.errs.push(type_error(path, &types.join(","), sch));
        }
    }

    /// kube-openapi schema_props.go; these errors are not `*errors.Validation`, so
    /// Kubernetes reports them as `field.Invalid(fldPath, "", msg)` at the root path.
    fn check_junctors(&mut self, s: &Schema, v: &Value, path: &FieldPath) {
        let subject = go_quote(&name(path));
        if !s.any_of.is_empty() {
            let mut best: Option<ErrorList> = None;
            let mut ok = false;
            for sub in &s.any_of {
                let errs = self.sub(sub, v, path);
                if errs.is_empty() {
                    ok = true;
                    break;
                }
                if best.as_ref().is_none_or(|b| errs.len() < b.len()) {
                    best = Some(errs);
                }
            }
            if !ok {
                self.errs.push(FieldError::invalid(
                    self.root,
                    "",
                    format!("{subject} must validate at least one schema (anyOf)"),
                ));
                self.errs.extend(best.unwrap_or_default());
            }
        }
        if !s.one_of.is_empty() {
            let mut best: Option<ErrorList> = None;
            let mut valid = 0;
            for sub in &s.one_of {
                let errs = self.sub(sub, v, path);
                if errs.is_empty() {
                    valid += 1;
                } else if valid == 0 && best.as_ref().is_none_or(|b| errs.len() < b.len()) {
                    best = Some(errs);
                }
            }
            if valid != 1 {
                let extra = if valid == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {valid} valid alternatives")
                };
                self.errs.push(FieldError::invalid(
                    self.root,
                    "",
                    format!("{subject} must validate one and only one schema (oneOf). {extra}"),
                ));
                if valid == 0 {
                    self.errs.extend(best.unwrap_or_default());
                }
            }
        }
        if !s.all_of.is_empty() {
            let mut valid = 0;
            for sub in &s.all_of {
                let errs = self.sub(sub, v, path);
                if errs.is_empty() {
                    valid += 1;
                }
                self.errs.extend(errs);
            }
            if valid != s.all_of.len() {
                let extra = if valid == 0 { ". None validated" } else { "" };
                self.errs.push(FieldError::invalid(
                    self.root,
                    "",
                    format!("{subject} must validate all the schemas (allOf){extra}"),
                ));
            }
        }
        if let Some(not) = &s.not {
            if self.sub(not, v, path).is_empty() {
                self.errs.push(FieldError::invalid(
                    self.root,
                    "",
                    format!("{subject} must not validate the schema (not)"),
                ));
            }
        }
    }

    fn sub(&self, s: &Schema, v: &Value, path: &FieldPath) -> ErrorList {
        let mut inner = OpenApi {
            root: self.root,
            errs: ErrorList::new(),
        };
        inner.node(s, v, path, false);
        inner.errs
    }

    /// kube-openapi string_validator.go: maxLength, minLength, pattern (lengths in characters).
    fn check_string(&mut self, s: &Schema, text: &str, path: &FieldPath) {
        let len = text.chars().count() as u64;
        if let Some(max) = s.max_length {
            if len > max {
                // errors.TooLong, reported as field.TooLong.
                self.errs.push(FieldError::too_long(path, max));
            }
        }
        if let Some(min) = s.min_length {
            if len < min {
                // errors.TooShort: "%s in %s should be at least %d chars long"
                self.errs.push(FieldError::invalid(
                    path,
                    text,
                    format!("{} in body should be at least {min} chars long", name(path)),
                ));
            }
        }
        if let Some(p) = &s.pattern {
            if !p.regex.is_match(text) {
                // errors.FailedPattern: "%s in %s should match '%s'"
                self.errs.push(FieldError::invalid(
                    path,
                    text,
                    format!("{} in body should match '{}'", name(path), p.source),
                ));
            }
        }
        // kube-openapi format.go: errors.InvalidType(path, in, format, value).
        if let Some(f) = &s.format {
            if !format::check(f, text) {
                self.errs.push(FieldError::type_invalid(
                    path,
                    text,
                    format!(
                        "{} in body must be of type {f}: {}",
                        name(path),
                        go_quote(text)
                    ),
                ));
            }
        }
    }

    /// kube-openapi number_validator.go: multipleOf, maximum, minimum. Integer data is
    /// compared with the bound truncated to an integer (MaximumNativeType and friends).
    fn check_number(&mut self, s: &Schema, v: &Value, path: &FieldPath) {
        let int = if is_int(v) { v.as_i64() } else { None };
        let f = v.as_f64().unwrap_or(0.0);
        let bound = |b: f64| match int {
            Some(_) => (b as i64).to_string(),
            None => go_float(b),
        };
        if let Some(m) = s.multiple_of {
            let bad = match int {
                Some(i) if m.fract() == 0.0 && m != 0.0 => i % (m as i64) != 0,
                _ => m != 0.0 && (f / m).fract() != 0.0,
            };
            if bad {
                // errors.NotMultipleOf: "%s in %s should be a multiple of %v"
                self.errs.push(FieldError::invalid(
                    path,
                    v.clone(),
                    format!(
                        "{} in body should be a multiple of {}",
                        name(path),
                        bound(m)
                    ),
                ));
            }
        }
        if let Some(max) = s.maximum {
            let cmp = match int {
                Some(i) => i.cmp(&(max as i64)),
                None => f.partial_cmp(&max).unwrap_or(Ordering::Equal),
            };
            let bad = if s.exclusive_maximum {
                cmp != Ordering::Less
            } else {
                cmp == Ordering::Greater
            };
            if bad {
                // errors.ExceedsMaximum: maxIncFail / maxExcFail
                let rel = if s.exclusive_maximum {
                    "less than"
                } else {
                    "less than or equal to"
                };
                self.errs.push(FieldError::invalid(
                    path,
                    v.clone(),
                    format!("{} in body should be {rel} {}", name(path), bound(max)),
                ));
            }
        }
        if let Some(min) = s.minimum {
            let cmp = match int {
                Some(i) => i.cmp(&(min as i64)),
                None => f.partial_cmp(&min).unwrap_or(Ordering::Equal),
            };
            let bad = if s.exclusive_minimum {
                cmp != Ordering::Greater
            } else {
                cmp == Ordering::Less
            };
            if bad {
                // errors.ExceedsMinimum: minIncFail / minExcFail
                let rel = if s.exclusive_minimum {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                self.errs.push(FieldError::invalid(
                    path,
                    v.clone(),
                    format!("{} in body should be {rel} {}", name(path), bound(min)),
                ));
            }
        }
    }

    /// kube-openapi slice_validator.go: items first, then minItems, maxItems, uniqueItems.
    fn check_array(&mut self, s: &Schema, items: &[Value], path: &FieldPath) {
        if let Some(item_schema) = &s.items {
            for (i, item) in items.iter().enumerate() {
                self.node(item_schema, item, &path.index(i), false);
            }
        }
        let size = items.len() as u64;
        if let Some(min) = s.min_items {
            if size < min {
                // errors.TooFewItems: "%s in %s should have at least %d items"
                self.errs.push(FieldError::invalid(
                    path,
                    size,
                    format!("{} in body should have at least {min} items", name(path)),
                ));
            }
        }
        if let Some(max) = s.max_items {
            if size > max {
                // errors.TooManyItems, reported as field.TooMany.
                self.errs.push(FieldError::too_many(path, size, max));
            }
        }
        if s.unique_items {
            let mut seen = HashSet::with_capacity(items.len());
            let dup = !items.iter().all(|item| seen.insert(canonical(item)));
            if dup {
                // errors.DuplicateItems: "%s in %s shouldn't contain duplicates"
                self.errs.push(FieldError::invalid(
                    path,
                    "",
                    format!("{} in body shouldn't contain duplicates", name(path)),
                ));
            }
        }
    }

    /// kube-openapi validator.go (basicCommonValidator): enum, reported as field.NotSupported
    /// with non-string values JSON-encoded.
    fn check_enum(&mut self, s: &Schema, v: &Value, path: &FieldPath) {
        let Some(values) = &s.enum_ else { return };
        if values.is_empty() || values.iter().any(|e| json_eq(e, v)) {
            return;
        }
        let supported: Vec<Value> = values
            .iter()
            .map(|e| match e {
                Value::String(s) => Value::String(s.clone()),
                other => Value::String(other.to_string()),
            })
            .collect();
        self.errs
            .push(FieldError::not_supported(path, v.clone(), &supported));
    }

    /// kube-openapi object_validator.go: maxProperties, minProperties, properties,
    /// required, additionalProperties.
    fn check_object(
        &mut self,
        s: &Schema,
        map: &Map<String, Value>,
        path: &FieldPath,
        resource_root: bool,
    ) {
        let size = map.len() as u64;
        if let Some(max) = s.max_properties {
            if size > max {
                // errors.TooManyProperties, reported as field.TooMany.
                self.errs.push(FieldError::too_many(path, size, max));
            }
        }
        if let Some(min) = s.min_properties {
            if size < min {
                // errors.TooFewProperties: "%s in %s should have at least %d properties"
                self.errs.push(FieldError::invalid(
                    path,
                    size,
                    format!(
                        "{} in body should have at least {min} properties",
                        name(path)
                    ),
                ));
            }
        }
        for (k, prop) in &s.properties {
            let Some(value) = map.get(k) else { continue };
            let p = path.child(k);
            if (resource_root || s.x_embedded_resource) && k == "metadata" {
                // ObjectMeta is validated by the server; here it only has to be an object.
                if !value.is_object() {
                    self.errs
                        .push(type_error(&p, "object", schema_info(value).0));
                }
                continue;
            }
            self.node(prop, value, &p, false);
        }
        for k in &s.required {
            if !map.contains_key(k) {
                // errors.Required, reported as field.Required(path, "").
                self.errs.push(FieldError::required(&path.child(k), ""));
            }
        }
        if let Some(AdditionalProperties::Schema(extra)) = &s.additional_properties {
            for (k, value) in map {
                if !s.properties.contains_key(k) {
                    self.node(extra, value, &path.child(k), false);
                }
            }
        }
    }
}
