//! What ValidatingAdmissionPolicies and their bindings share, as kube-apiserver's
//! `pkg/apis/admissionregistration/validation` and v1 defaults have it: the
//! `MatchResources` defaults (`SetDefaults_MatchResources`, `SetDefaults_Rule`) and checks
//! (`validateMatchResources`, `validateNamedRuleWithOperations`), the label selector
//! checks of `metav1validation.ValidateLabelSelector`, and the compilation of a CEL
//! expression over the variables kube declares for it.

use std::collections::HashSet;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::meta::{NameRule, qualified_name_errors, validate_labels};
use kapi_core::schema::cel::Expression;
use kapi_core::{ErrorList, FieldError, FieldPath};

use crate::generated::api::admissionregistration::v1::{
    MatchCondition, MatchResources, NamedRuleWithOperations,
};
use crate::hooks::strings;

/// kube's `supportedMatchPolicies`, sorted as `sets.String.List()` gives them.
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
/// `matchPolicy` when none is given.
const EQUIVALENT: &str = "Equivalent";
/// kube's `supportedOperations`, sorted.
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
/// kube's `validScopes`, sorted; `*` is also the default.
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];
/// The most match conditions kube accepts.
const MAX_MATCH_CONDITIONS: usize = 64;
/// The selector operators and what they need of `values`.
const IN_OPERATORS: &[&str] = &["In", "NotIn"];
const EXISTS_OPERATORS: &[&str] = &["Exists", "DoesNotExist"];

/// `SetDefaults_MatchResources` and `SetDefaults_Rule` of every rule in it.
pub(super) fn default_match_resources(mr: &mut MatchResources) {
    mr.match_policy.get_or_insert_with(|| EQUIVALENT.into());
    mr.namespace_selector
        .get_or_insert_with(LabelSelector::default);
    mr.object_selector
        .get_or_insert_with(LabelSelector::default);
    let rules = mr.resource_rules.iter_mut().flatten();
    for rule in rules.chain(mr.exclude_resource_rules.iter_mut().flatten()) {
        rule.scope.get_or_insert_with(|| "*".into());
    }
}

/// `validateMatchResources`.
pub(super) fn match_resources_errors(mr: &MatchResources, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let policy_path = path.child("matchPolicy");
    match mr.match_policy.as_deref() {
        None => errs.push(FieldError::required(&policy_path, "")),
        Some(p) if !MATCH_POLICIES.contains(&p) => errs.push(FieldError::not_supported(
            &policy_path,
            p,
            &strings(MATCH_POLICIES),
        )),
        Some(_) => {}
    }
    for (field, selector) in [
        ("namespaceSelector", &mr.namespace_selector),
        ("objectSelector", &mr.object_selector),
    ] {
        match selector {
            None => errs.push(FieldError::required(&path.child(field), "")),
            Some(s) => errs.extend(label_selector_errors(s, &path.child(field))),
        }
    }
    for (field, rules) in [
        ("resourceRules", &mr.resource_rules),
        ("excludeResourceRules", &mr.exclude_resource_rules),
    ] {
        for (i, rule) in rules.iter().flatten().enumerate() {
            errs.extend(named_rule_errors(rule, &path.child(field).index(i)));
        }
    }
    errs
}

/// `validateNamedRuleWithOperations`: the resource names, then the rule.
fn named_rule_errors(rule: &NamedRuleWithOperations, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = HashSet::new();
    for (i, name) in rule.resource_names.iter().flatten().enumerate() {
        let name_path = path.child("resourceNames").index(i);
        for msg in NameRule::PathSegment.errors(name, false) {
            errs.push(FieldError::invalid(&name_path, name.as_str(), msg));
        }
        if !seen.insert(name) {
            errs.push(FieldError::duplicate(&name_path, name.as_str()));
        }
    }
    errs.extend(operations_errors(
        rule.operations.as_deref().unwrap_or_default(),
        path,
    ));
    errs.extend(rule_errors(rule, path));
    errs
}

/// `validateRuleWithOperations`'s own part: the operations.
pub(super) fn operations_errors(operations: &[String], path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let ops_path = path.child("operations");
    if operations.is_empty() {
        errs.push(FieldError::required(&ops_path, ""));
    }
    if operations.len() > 1 && operations.iter().any(|o| o == "*") {
        errs.push(FieldError::invalid(
            &ops_path,
            operations.to_vec(),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in operations.iter().enumerate() {
        if !OPERATIONS.contains(&op.as_str()) {
            errs.push(FieldError::not_supported(
                &ops_path.index(i),
                op.as_str(),
                &strings(OPERATIONS),
            ));
        }
    }
    errs
}

/// `validateRule`, subresources allowed: groups, versions, resources and scope.
pub(super) fn rule_errors(rule: &NamedRuleWithOperations, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let groups = rule.api_groups.as_deref().unwrap_or_default();
    let versions = rule.api_versions.as_deref().unwrap_or_default();
    for (field, list, what) in [
        ("apiGroups", groups, "API groups"),
        ("apiVersions", versions, "API versions"),
    ] {
        if list.is_empty() {
            errs.push(FieldError::required(&path.child(field), ""));
        }
        if list.len() > 1 && list.iter().any(|g| g == "*") {
            errs.push(FieldError::invalid(
                &path.child(field),
                list.to_vec(),
                format!("if '*' is present, must not specify other {what}"),
            ));
        }
    }
    // A group may be empty (the core group); a version may not.
    for (i, version) in versions.iter().enumerate() {
        if version.is_empty() {
            errs.push(FieldError::required(
                &path.child("apiVersions").index(i),
                "",
            ));
        }
    }
    errs.extend(resources_errors(
        rule.resources.as_deref().unwrap_or_default(),
        &path.child("resources"),
    ));
    if let Some(scope) = rule.scope.as_deref().filter(|s| !SCOPES.contains(s)) {
        errs.push(FieldError::not_supported(
            &path.child("scope"),
            scope,
            &strings(SCOPES),
        ));
    }
    errs
}

/// `validateResources`: `resource` or `resource/subresource`, with the wildcard rules.
fn resources_errors(resources: &[String], path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    // `x/*` seen, by resource; `*/x` seen, by subresource.
    let mut all_subresources_of = HashSet::new();
    let mut subresource_of_all = HashSet::new();
    let (mut double_wildcard, mut single_wildcard) = (false, false);
    // As kube: set by the last resource without a subresource, not by any of them.
    let mut plain_resource = false;
    for (i, item) in resources.iter().enumerate() {
        if item.is_empty() {
            errs.push(FieldError::required(&path.index(i), ""));
            continue;
        }
        double_wildcard |= item == "*/*";
        single_wildcard |= item == "*";
        let Some((res, sub)) = item.split_once('/') else {
            plain_resource = item != "*";
            continue;
        };
        if all_subresources_of.contains(res) {
            errs.push(FieldError::invalid(
                &path.index(i),
                item.as_str(),
                format!("if '{res}/*' is present, must not specify {item}"),
            ));
        }
        if subresource_of_all.contains(sub) {
            errs.push(FieldError::invalid(
                &path.index(i),
                item.as_str(),
                format!("if '*/{sub}' is present, must not specify {item}"),
            ));
        }
        if sub == "*" {
            all_subresources_of.insert(res);
        }
        if res == "*" {
            subresource_of_all.insert(sub);
        }
    }
    if resources.len() > 1 && double_wildcard {
        errs.push(FieldError::invalid(
            path,
            resources.to_vec(),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single_wildcard && plain_resource {
        errs.push(FieldError::invalid(
            path,
            resources.to_vec(),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

/// `metav1validation.ValidateLabelSelector`, strict about label values.
pub(super) fn label_selector_errors(selector: &LabelSelector, path: &FieldPath) -> ErrorList {
    let labels = selector
        .match_labels
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok());
    let mut errs = validate_labels(labels.as_ref(), &path.child("matchLabels"));
    for (i, req) in selector.match_expressions.iter().flatten().enumerate() {
        let req_path = path.child("matchExpressions").index(i);
        let values = req.values.as_deref().unwrap_or_default();
        let op = req.operator.as_str();
        if IN_OPERATORS.contains(&op) {
            if values.is_empty() {
                errs.push(FieldError::required(
                    &req_path.child("values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        } else if EXISTS_OPERATORS.contains(&op) {
            if !values.is_empty() {
                errs.push(FieldError::forbidden(
                    &req_path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        } else {
            errs.push(FieldError::invalid(
                &req_path.child("operator"),
                op,
                "not a valid selector operator",
            ));
        }
        for msg in qualified_name_errors(&req.key) {
            errs.push(FieldError::invalid(
                &req_path.child("key"),
                req.key.as_str(),
                msg,
            ));
        }
        for (j, value) in values.iter().enumerate() {
            for msg in kapi_core::meta::label_value_errors(value) {
                errs.push(FieldError::invalid(
                    &req_path.child("values").index(j),
                    value.as_str(),
                    msg,
                ));
            }
        }
    }
    errs
}

/// The optional variables an expression is compiled with: kube's
/// `OptionalVariableDeclarations`, and the composition of `spec.variables`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Declarations<'a> {
    /// `params` is declared (the policy has a `paramKind`).
    pub params: bool,
    /// `authorizer` (and `authorizer.requestResource`) are declared.
    pub authorizer: bool,
    /// `variables` is declared with these fields; `None` when it is not declared at all
    /// (a policy without `spec.variables`, or a match condition).
    pub variables: Option<&'a [String]>,
}

/// Compiles `src` as kube's validation does, with `object`, `oldObject`, `request` and
/// `namespaceObject` and what `decls` adds: the error at `path`, if it does not compile.
pub(super) fn compile_error(
    path: &FieldPath,
    src: &str,
    decls: Declarations,
) -> Option<FieldError> {
    let mut names = vec!["object", "oldObject", "request", "namespaceObject"];
    if decls.params {
        names.push("params");
    }
    if decls.authorizer {
        names.push("authorizer");
    }
    if decls.variables.is_some() {
        names.push("variables");
    }
    let why = match Expression::compile(src, &names) {
        Err(e) => e,
        Ok(_) => {
            // `variables` is an object whose fields are the variables declared so far.
            let known = decls.variables.unwrap_or_default();
            let unknown = variable_references(src)
                .into_iter()
                .find(|name| !known.iter().any(|k| k == name))?;
            format!("undefined field '{unknown}'")
        }
    };
    Some(FieldError::invalid(
        path,
        src,
        format!("compilation failed: {why}"),
    ))
}

/// The `<name>` of every `variables.<name>` in `src`, outside string literals and not
/// itself a field of something else (`object.variables.x`).
fn variable_references(src: &str) -> Vec<String> {
    let chars: Vec<char> = src.chars().collect();
    let ident_at = |mut i: usize| {
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        (chars[start..i].iter().collect::<String>(), i)
    };
    let skip_space = |mut i: usize| {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        i
    };
    let mut found = Vec::new();
    let mut i = 0;
    let mut after_dot = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' {
            // A string literal: skip to its closing quote, past escapes.
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            after_dot = false;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let (word, end) = ident_at(i);
            i = end;
            let dot = skip_space(i);
            if word == "variables" && !after_dot && chars.get(dot) == Some(&'.') {
                let (field, end) = ident_at(skip_space(dot + 1));
                if !field.is_empty() {
                    found.push(field);
                }
                i = end;
            }
            after_dot = false;
        } else {
            after_dot = c == '.' || (after_dot && c.is_whitespace());
            i += 1;
        }
    }
    found
}

/// kube's `isCELIdentifier`: `[_a-zA-Z][_a-zA-Z0-9]*` and not a reserved word.
pub(super) fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !kapi_core::schema::cel_static::RESERVED.contains(&name)
}

/// `validateMatchConditions`: at most 64, unique qualified names, expressions that
/// compile (with `params` when the policy has a `paramKind`, without `variables`).
pub(super) fn match_conditions_errors(
    conditions: &[MatchCondition],
    params: bool,
    path: &FieldPath,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errs.push(FieldError::too_many(
            path,
            conditions.len() as u64,
            MAX_MATCH_CONDITIONS as u64,
        ));
    }
    let decls = Declarations {
        params,
        authorizer: true,
        variables: None,
    };
    let mut names = HashSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let path = path.index(i);
        let expression = c.expression.trim();
        if expression.is_empty() {
            errs.push(FieldError::required(&path.child("expression"), ""));
        } else {
            errs.extend(compile_error(&path.child("expression"), expression, decls));
        }
        if c.name.is_empty() {
            errs.push(FieldError::required(&path.child("name"), ""));
        } else {
            for msg in qualified_name_errors(&c.name) {
                errs.push(FieldError::invalid(
                    &path.child("name"),
                    c.name.as_str(),
                    msg,
                ));
            }
            if !names.insert(c.name.as_str()) {
                errs.push(FieldError::duplicate(&path.child("name"), c.name.as_str()));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_variable_references() {
        assert_eq!(
            variable_references(
                "variables.a && variables . b || 'variables.c' == object.variables.d"
            ),
            vec!["a".to_string(), "b".to_string()]
        );
    }

    #[test]
    fn cel_identifiers() {
        assert!(is_cel_identifier("_x1"));
        assert!(!is_cel_identifier("1x"));
        assert!(!is_cel_identifier("in"));
        assert!(!is_cel_identifier("a-b"));
    }

    #[test]
    fn resources_wildcards() {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let path = FieldPath::new("r");
        assert!(resources_errors(&list(&["pods", "pods/status"]), &path).is_empty());
        let errs = resources_errors(&list(&["pods/*", "pods/log", "*/*"]), &path);
        let msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            msgs,
            [
                "r[1]: Invalid value: \"pods/log\": if 'pods/*' is present, must not specify pods/log",
                "r: Invalid value: [\"pods/*\",\"pods/log\",\"*/*\"]: if '*/*' is present, must not specify other resources",
            ]
        );
    }
}
