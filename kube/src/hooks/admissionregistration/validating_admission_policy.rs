//! ValidatingAdmissionPolicies, as kube-apiserver's strategy (`pkg/registry/
//! admissionregistration/validatingadmissionpolicy/strategy.go`), v1 defaults, validation
//! (`ValidateValidatingAdmissionPolicy`, `...Update` and `...StatusUpdate` in
//! `pkg/apis/admissionregistration/validation`) and printer treat them:
//! `metadata.generation` is 1 on create and bumped when the spec changes; the status
//! starts empty and changes only through `/status`; updates need a `resourceVersion`.
//!
//! Defaults: `failurePolicy: Fail`; in `matchConstraints`, `matchPolicy: Equivalent`,
//! empty namespace and object selectors and every rule's `scope: "*"`.
//!
//! Checks: `failurePolicy` is `Fail` or `Ignore`; `paramKind` has an `apiVersion` and a
//! `kind`; `matchConstraints` is required with at least one resource rule, and its rules
//! and selectors are valid; match conditions have unique qualified names; variables are
//! named as CEL identifiers; `validations` or `auditAnnotations` has an item; a
//! validation's `message` has no line break and its `reason` is one kube accepts; audit
//! annotation keys are unique and make a qualified name with the policy's name; and every
//! CEL expression compiles over the variables kube declares for it (`params` only with a
//! `paramKind`, `variables` only with `spec.variables` and then only the ones declared
//! before, no `authorizer` in a `messageExpression`). On update, unchanged match
//! conditions (with an unchanged `paramKind`) are not checked again, as kube. A status
//! write checks the expression warnings and the conditions.
//!
//! Columns, as kube's `printValidatingAdmissionPolicy`: Validations (how many),
//! ParamKind (`apiVersion/kind`, `<unset>` without one) and Age.
//!
//! Deliberate differences from kube-apiserver:
//! - Expressions compile in kapi's CEL environment (`kapi_core::schema::cel`): there is
//!   no type checking at write time (an expression that is not a bool, or reads a field
//!   the object does not have, compiles; the status controller reports the latter in
//!   `status.typeChecking`), no cost estimate, and the compiler's messages are its own.
//!   The `authorizer` library comes with the `authorizer` variable.
//! - The paramKind authorization check of kube's strategy (that the writer may read the
//!   parameter resource) is not made.
//! - A status write also checks the spec (which it cannot change), and a status
//!   `fieldRef` is not parsed as JSONPath.

use std::collections::HashSet;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kapi_core::meta::{dns1035_label_errors, dns1123_subdomain_errors, qualified_name_errors};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::validation::{
    Declarations, compile_error, default_match_resources, is_cel_identifier,
    match_conditions_errors, match_resources_errors,
};
use crate::generated::admissionregistration_k8s_io::v1::ValidatingAdmissionPolicy;
use crate::generated::api::admissionregistration::v1::{
    AuditAnnotation, ParamKind, ValidatingAdmissionPolicySpec, ValidatingAdmissionPolicyStatus,
    Validation, Variable,
};
use crate::hooks::strings;

/// The hooks of ValidatingAdmissionPolicy.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidatingAdmissionPolicyHooks;

/// kube's `supportedFailurePolicies`, sorted; `Fail` is the default.
const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
/// kube's `supportedValidationPolicyReason`, sorted. (The API docs also name
/// `Unauthorized`, which kube's validation refuses.)
const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
/// kube's `maxAuditAnnotations`.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// kube's `maxAuditAnnotationValueExpressionLength`.
const MAX_VALUE_EXPRESSION_LEN: usize = 5 * 1024;
/// The condition statuses, sorted.
const CONDITION_STATUSES: &[&str] = &["False", "True", "Unknown"];
/// metav1's `conditionReasonFmt`.
const CONDITION_REASON_FMT: &str = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";

/// metav1's message for a condition reason that is not `conditionReasonFmt`, with its
/// examples as Go's `RegexError` quotes them.
fn condition_reason_message() -> String {
    let examples = [
        "my_name",
        "MY_NAME",
        "MyName",
        "ReasonA,ReasonB",
        "ReasonA:ReasonB",
    ];
    let quoted: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "a condition reason must start with alphabetic character, optionally followed by a \
         string of alphanumeric characters or '_,:', and must end with an alphanumeric \
         character or '_' (e.g. {}regex used for validation is '{CONDITION_REASON_FMT}')",
        quoted.join(" or ")
    )
}

/// Whether `s` has a line break (`[\n\r]`).
fn has_line_break(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// `validateParamKind`.
fn param_kind_errors(pk: &ParamKind, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let version_path = path.child("apiVersion");
    let api_version = pk.api_version.as_deref().unwrap_or_default();
    if api_version.is_empty() {
        errs.push(FieldError::required(&version_path, ""));
    } else if api_version.matches('/').count() > 1 {
        errs.push(FieldError::invalid(
            &version_path,
            api_version,
            format!("unexpected GroupVersion string: {api_version}"),
        ));
    } else if api_version != "/" {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let group_errs = dns1123_subdomain_errors(group);
        if !group.is_empty() && !group_errs.is_empty() {
            errs.push(FieldError::invalid(
                &version_path,
                group,
                group_errs.join(","),
            ));
        }
        if version.is_empty() {
            errs.push(FieldError::invalid(
                &version_path,
                api_version,
                "version must be specified",
            ));
        } else {
            let version_errs = dns1035_label_errors(version);
            if !version_errs.is_empty() {
                errs.push(FieldError::invalid(
                    &version_path,
                    version,
                    version_errs.join(","),
                ));
            }
        }
    } else {
        // kube parses "/" as no group and no version.
        errs.push(FieldError::invalid(
            &version_path,
            api_version,
            "version must be specified",
        ));
    }
    let kind = pk.kind.as_deref().unwrap_or_default();
    if kind.is_empty() {
        errs.push(FieldError::required(&path.child("kind"), ""));
    } else {
        let kind_errs = dns1035_label_errors(&kind.to_lowercase());
        if !kind_errs.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("kind"),
                kind,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    kind_errs.join(",")
                ),
            ));
        }
    }
    errs
}

/// `validateVariable`: a CEL identifier, and an expression that compiles with the
/// variables declared before it.
fn variable_errors(v: &Variable, earlier: &[String], params: bool, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if v.name.trim().is_empty() {
        errs.push(FieldError::required(
            &path.child("name"),
            "name is not specified",
        ));
    } else if !is_cel_identifier(&v.name) {
        errs.push(FieldError::invalid(
            &path.child("name"),
            v.name.as_str(),
            "name is not a valid CEL identifier",
        ));
    }
    if v.expression.trim().is_empty() {
        errs.push(FieldError::required(
            &path.child("expression"),
            "expression is not specified",
        ));
    } else {
        let decls = Declarations {
            params,
            authorizer: true,
            variables: Some(earlier),
        };
        errs.extend(compile_error(
            &path.child("expression"),
            &v.expression,
            decls,
        ));
    }
    errs
}

/// `validateValidation`.
fn validation_errors(v: &Validation, decls: Declarations, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if v.expression.trim().is_empty() {
        errs.push(FieldError::required(
            &path.child("expression"),
            "expression is not specified",
        ));
    } else {
        errs.extend(compile_error(
            &path.child("expression"),
            &v.expression,
            decls,
        ));
    }
    if let Some(me) = v.message_expression.as_deref().filter(|m| !m.is_empty()) {
        let me_path = path.child("messageExpression");
        if me.trim().is_empty() {
            errs.push(FieldError::invalid(
                &me_path,
                me,
                "must be non-empty if specified",
            ));
        } else {
            // A message is not an authorization check: no `authorizer`.
            let decls = Declarations {
                authorizer: false,
                ..decls
            };
            errs.extend(compile_error(&me_path, me, decls));
        }
    }
    if let Some(message) = v.message.as_deref().filter(|m| !m.is_empty()) {
        let msg_path = path.child("message");
        if message.trim().is_empty() {
            errs.push(FieldError::invalid(
                &msg_path,
                message,
                "message must be non-empty if specified",
            ));
        } else if has_line_break(message.trim()) {
            errs.push(FieldError::invalid(
                &msg_path,
                message,
                "message must not contain line breaks",
            ));
        }
    }
    if let Some(reason) = v.reason.as_deref().filter(|r| !REASONS.contains(r)) {
        errs.push(FieldError::not_supported(
            &path.child("reason"),
            reason,
            &strings(REASONS),
        ));
    }
    errs
}

/// `validateAuditAnnotation`: the key makes a qualified name with the policy's name;
/// the value expression is at most 5 KiB and compiles.
fn audit_annotation_errors(
    a: &AuditAnnotation,
    policy: &str,
    decls: Declarations,
    path: &FieldPath,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let key_path = path.child("key");
    if policy.is_empty() {
        errs.push(FieldError::invalid(
            &key_path,
            a.key.as_str(),
            "requires metadata.name be non-empty",
        ));
    } else {
        let qualified = format!("{policy}/{}", a.key);
        for msg in qualified_name_errors(&qualified) {
            errs.push(FieldError::invalid(&key_path, qualified.as_str(), msg));
        }
    }
    let value_path = path.child("valueExpression");
    let expression = a.value_expression.trim();
    if expression.is_empty() {
        errs.push(FieldError::required(
            &value_path,
            "valueExpression is not specified",
        ));
    } else if expression.len() > MAX_VALUE_EXPRESSION_LEN {
        errs.push(FieldError::required(
            &value_path,
            format!("must not exceed {MAX_VALUE_EXPRESSION_LEN} bytes in length"),
        ));
    } else if let Some(mut e) = compile_error(&value_path, expression, decls) {
        // kube quotes the expression as given, untrimmed.
        e.bad_value = Some(Value::from(a.value_expression.as_str()));
        errs.push(e);
    }
    errs
}

/// `validateValidatingAdmissionPolicySpec`; `check_conditions` is false on an update
/// that leaves the match conditions and `paramKind` as they were.
fn spec_errors(
    spec: &ValidatingAdmissionPolicySpec,
    policy: &str,
    check_conditions: bool,
) -> ErrorList {
    let path = FieldPath::new("spec");
    let mut errs = ErrorList::new();
    let fp_path = path.child("failurePolicy");
    match spec.failure_policy.as_deref() {
        None => errs.push(FieldError::required(&fp_path, "")),
        Some(fp) if !FAILURE_POLICIES.contains(&fp) => errs.push(FieldError::not_supported(
            &fp_path,
            fp,
            &strings(FAILURE_POLICIES),
        )),
        Some(_) => {}
    }
    let params = spec.param_kind.is_some();
    if let Some(pk) = &spec.param_kind {
        errs.extend(param_kind_errors(pk, &path.child("paramKind")));
    }
    let mc_path = path.child("matchConstraints");
    match &spec.match_constraints {
        None => errs.push(FieldError::required(&mc_path, "")),
        Some(mc) => {
            errs.extend(match_resources_errors(mc, &mc_path));
            // The resource rules give the expressions their types.
            if mc.resource_rules.as_ref().is_none_or(Vec::is_empty) {
                errs.push(FieldError::required(&mc_path.child("resourceRules"), ""));
            }
        }
    }
    if check_conditions {
        let conditions = spec.match_conditions.as_deref().unwrap_or_default();
        errs.extend(match_conditions_errors(
            conditions,
            params,
            &path.child("matchConditions"),
        ));
    }
    let variables = spec.variables.as_deref().unwrap_or_default();
    let names: Vec<String> = variables.iter().map(|v| v.name.clone()).collect();
    for (i, v) in variables.iter().enumerate() {
        let at = path.child("variables").index(i);
        errs.extend(variable_errors(v, &names[..i], params, &at));
    }
    let validations = spec.validations.as_deref().unwrap_or_default();
    let annotations = spec.audit_annotations.as_deref().unwrap_or_default();
    if validations.is_empty() && annotations.is_empty() {
        let why = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required(&path.child("validations"), why));
        errs.push(FieldError::required(&path.child("auditAnnotations"), why));
        return errs;
    }
    let decls = Declarations {
        params,
        authorizer: true,
        variables: (!variables.is_empty()).then_some(names.as_slice()),
    };
    for (i, v) in validations.iter().enumerate() {
        errs.extend(validation_errors(
            v,
            decls,
            &path.child("validations").index(i),
        ));
    }
    let aa_path = path.child("auditAnnotations");
    if annotations.len() > MAX_AUDIT_ANNOTATIONS {
        errs.push(FieldError::invalid(
            &aa_path,
            serde_json::to_value(annotations).unwrap_or(Value::Null),
            format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
        ));
    }
    let mut keys = HashSet::new();
    for (i, a) in annotations.iter().enumerate() {
        errs.extend(audit_annotation_errors(a, policy, decls, &aa_path.index(i)));
        if !keys.insert(a.key.as_str()) {
            errs.push(FieldError::duplicate(
                &aa_path.index(i).child("key"),
                a.key.as_str(),
            ));
        }
    }
    errs
}

/// Whether `reason` matches metav1's `conditionReasonFmt`.
fn is_condition_reason(reason: &str) -> bool {
    let mut chars = reason.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && reason
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_,:".contains(c))
        && reason
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `metav1validation.ValidateConditions`, beside what the schema requires.
fn conditions_errors(conditions: &[Condition], path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut types = HashSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let path = path.index(i);
        if !types.insert(c.type_.as_str()) {
            errs.push(FieldError::duplicate(&path.child("type"), c.type_.as_str()));
        }
        for msg in qualified_name_errors(&c.type_) {
            errs.push(FieldError::invalid(
                &path.child("type"),
                c.type_.as_str(),
                msg,
            ));
        }
        if !CONDITION_STATUSES.contains(&c.status.as_str()) {
            errs.push(FieldError::not_supported(
                &path.child("status"),
                c.status.as_str(),
                &strings(CONDITION_STATUSES),
            ));
        }
        if let Some(g) = c.observed_generation.filter(|g| *g < 0) {
            errs.push(FieldError::invalid(
                &path.child("observedGeneration"),
                g,
                "must be greater than or equal to zero",
            ));
        }
        let reason_path = path.child("reason");
        if c.reason.is_empty() {
            errs.push(FieldError::required(&reason_path, "must be set"));
        } else {
            if !is_condition_reason(&c.reason) {
                errs.push(FieldError::invalid(
                    &reason_path,
                    c.reason.as_str(),
                    condition_reason_message(),
                ));
            }
            if c.reason.len() > 1024 {
                errs.push(FieldError::too_long(&reason_path, 1024));
            }
        }
        if c.message.len() > 32 * 1024 {
            errs.push(FieldError::too_long(&path.child("message"), 32 * 1024));
        }
    }
    errs
}

/// `validateValidatingAdmissionPolicyStatus`.
fn status_errors(status: &ValidatingAdmissionPolicyStatus) -> ErrorList {
    let path = FieldPath::new("status");
    let mut errs = ErrorList::new();
    let warnings = status
        .type_checking
        .as_ref()
        .and_then(|t| t.expression_warnings.as_deref())
        .unwrap_or_default();
    let warnings_path = path.child("typeChecking").child("expressionWarnings");
    for (i, w) in warnings.iter().enumerate() {
        if w.warning.is_empty() {
            errs.push(FieldError::required(
                &warnings_path.index(i).child("warning"),
                "",
            ));
        }
        if w.field_ref.trim().is_empty() {
            errs.push(FieldError::required(
                &warnings_path.index(i).child("fieldRef"),
                "",
            ));
        }
    }
    let conditions = status.conditions.as_deref().unwrap_or_default();
    errs.extend(conditions_errors(conditions, &path.child("conditions")));
    errs
}

/// kube's `printValidatingAdmissionPolicy` ParamKind cell.
fn param_kind_cell(spec: Option<&ValidatingAdmissionPolicySpec>) -> String {
    match spec.and_then(|s| s.param_kind.as_ref()) {
        None => "<unset>".into(),
        Some(pk) => format!(
            "{}/{}",
            pk.api_version.as_deref().unwrap_or_default(),
            pk.kind.as_deref().unwrap_or_default()
        ),
    }
}

impl Hooks<ValidatingAdmissionPolicy> for ValidatingAdmissionPolicyHooks {
    /// `SetDefaults_ValidatingAdmissionPolicySpec`, `SetDefaults_MatchResources`,
    /// `SetDefaults_Rule`.
    fn apply_defaults(&self, policy: &mut ValidatingAdmissionPolicy) {
        let spec = policy.spec.get_or_insert_with(Default::default);
        spec.failure_policy.get_or_insert_with(|| "Fail".into());
        if let Some(mc) = spec.match_constraints.as_mut() {
            default_match_resources(mc);
        }
    }

    fn prepare_for_update(
        &self,
        new: &mut ValidatingAdmissionPolicy,
        old: &ValidatingAdmissionPolicy,
    ) {
        // kube bumps the generation on a spec change only; compared here, after the
        // defaults, so that a request leaving out a defaulted field changes nothing.
        let old_gen = old.metadata.generation.unwrap_or(1);
        let spec_of = |p: &ValidatingAdmissionPolicy| p.spec.clone().unwrap_or_default();
        new.metadata.generation = Some(if spec_of(new) == spec_of(old) {
            old_gen
        } else {
            old_gen + 1
        });
    }

    fn validate(&self, policy: &ValidatingAdmissionPolicy) -> ErrorList {
        let name = policy.metadata.name.as_deref().unwrap_or_default();
        spec_errors(&policy.spec.clone().unwrap_or_default(), name, true)
    }

    fn validate_update(
        &self,
        new: &ValidatingAdmissionPolicy,
        old: &ValidatingAdmissionPolicy,
    ) -> ErrorList {
        let new_spec = new.spec.clone().unwrap_or_default();
        let old_spec = old.spec.clone().unwrap_or_default();
        // `ignoreValidatingAdmissionPolicyMatchConditions`.
        let check_conditions = new_spec.param_kind != old_spec.param_kind
            || new_spec.match_conditions != old_spec.match_conditions;
        let name = new.metadata.name.as_deref().unwrap_or_default();
        let mut errs = spec_errors(&new_spec, name, check_conditions);
        // A write to the main resource keeps the stored status; a status write is
        // checked here.
        if new.status != old.status {
            errs.extend(status_errors(&new.status.clone().unwrap_or_default()));
        }
        errs
    }

    fn table_cell(&self, column: &str, policy: &ValidatingAdmissionPolicy) -> Option<Value> {
        let spec = policy.spec.as_ref();
        match column {
            "Validations" => {
                let count = spec
                    .and_then(|s| s.validations.as_ref())
                    .map_or(0, Vec::len);
                Some(Value::from(count))
            }
            "ParamKind" => Some(Value::String(param_kind_cell(spec))),
            _ => None,
        }
    }
}
