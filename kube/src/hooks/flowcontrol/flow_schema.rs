//! FlowSchemas, as kube-apiserver's strategy (`pkg/registry/flowcontrol/flowschema/
//! strategy.go`), v1 defaults, validation (`ValidateFlowSchema` in
//! `pkg/apis/flowcontrol/validation`) and printer treat them: `metadata.generation` is 1
//! on create and bumped when the spec changes; status is reset on create, kept by
//! updates and written only through `/status`; `spec.matchingPrecedence` defaults to
//! 1000; a PUT needs no `resourceVersion`.
//!
//! Checks (on create and update alike, as kube's `ValidateFlowSchemaUpdate` is
//! `ValidateFlowSchema`): `matchingPrecedence` is 1 to 10000, and 1 only for `exempt`;
//! `distinguisherMethod.type` is `ByNamespace` or `ByUser`;
//! `priorityLevelConfiguration.name` is given and a DNS subdomain; each rule has
//! subjects (a `User` or `Group` with a name, a `ServiceAccount` with a name and
//! namespace, and nothing of another kind) and resource or non-resource rules, whose
//! verbs, API groups, resources, namespaces and URLs follow kube's rules (`*` alone,
//! URLs starting with `/`); the mandatory schemas `exempt` and `catch-all` have exactly
//! their fixed spec; status conditions have distinct, non-empty types.
//!
//! Columns, as kube's `printFlowSchema`: PriorityLevel, MatchingPrecedence,
//! DistinguisherMethod (`<none>` when unset), Age and MissingPL (the status of the
//! `Dangling` condition, `?` without one).
//!
//! Deliberate differences from kube-apiserver: the spec shown by "must equal the fixed
//! value" is JSON where kube prints the Go struct (with pointer addresses). The
//! `Dangling` condition is written by `controllers/flow_schema_dangling.rs`, as by
//! kube-apiserver's config controller.

use kapi_core::meta::{dns1123_label_errors, dns1123_subdomain_errors};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::bootstrap::{mandatory_flow_schema_spec, same_spec};
use super::{conditions_errors, go_strings, next_generation, not_supported_go};
use crate::generated::flowcontrol_apiserver_k8s_io::v1::FlowSchema;
use crate::generated::io::k8s::api::flowcontrol::v1::{
    FlowSchemaSpec, NonResourcePolicyRule, PolicyRulesWithSubjects, ResourcePolicyRule, Subject,
};
use crate::hooks::strings;

/// The hooks of FlowSchema.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowSchemaHooks;

/// `matchingPrecedence` when none (or 0) is given.
const DEFAULT_MATCHING_PRECEDENCE: i32 = 1000;
/// The highest `matchingPrecedence`.
const MAX_MATCHING_PRECEDENCE: i32 = 10000;
/// The one schema that may have precedence 1.
const EXEMPT: &str = "exempt";
/// The distinguisher methods, sorted as kube lists them.
const DISTINGUISHER_METHODS: &[&str] = &["ByNamespace", "ByUser"];
/// The subject kinds, sorted as kube lists them.
const SUBJECT_KINDS: &[&str] = &["Group", "ServiceAccount", "User"];
/// The verbs a rule may name, sorted as kube lists them.
const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];
/// What kube puts before a namespace's DNS-1123 label errors.
const NS_ERR_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

/// Whether `list` holds the wildcard `*`.
fn has_wildcard(list: &[String]) -> bool {
    list.iter().any(|s| s == "*")
}

/// The checks of a rule's verbs, shared by resource and non-resource rules.
fn verbs_errors(verbs: &[String], path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let at = path.child("verbs");
    if verbs.is_empty() {
        errs.push(FieldError::required(
            &at,
            "verbs must contain at least one value",
        ));
    } else if has_wildcard(verbs) {
        if verbs.len() > 1 {
            errs.push(FieldError::invalid_omit_value(
                &at,
                format!(
                    "{}: if '*' is present, must not specify other verbs",
                    go_strings(verbs)
                ),
            ));
        }
    } else if verbs.iter().any(|v| !VERBS.contains(&v.as_str())) {
        errs.push(not_supported_go(&at, go_strings(verbs), VERBS));
    }
    errs
}

/// `ValidateFlowSchemaResourcePolicyRule`.
fn resource_rule_errors(rule: &ResourcePolicyRule, path: &FieldPath) -> ErrorList {
    let mut errs = verbs_errors(&rule.verbs, path);
    let wildcard_alone = |errs: &mut ErrorList, list: &[String], field: &str, what: &str| {
        if list.len() > 1 && has_wildcard(list) {
            errs.push(FieldError::invalid_omit_value(
                &path.child(field),
                format!(
                    "{}: if '*' is present, must not specify other {what}",
                    go_strings(list)
                ),
            ));
        }
    };
    if rule.api_groups.is_empty() {
        errs.push(FieldError::required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    } else {
        wildcard_alone(&mut errs, &rule.api_groups, "apiGroups", "api groups");
    }
    if rule.resources.is_empty() {
        errs.push(FieldError::required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    } else {
        wildcard_alone(&mut errs, &rule.resources, "resources", "resources");
    }
    let namespaces = rule.namespaces.as_deref().unwrap_or_default();
    if namespaces.is_empty() && !rule.cluster_scope.unwrap_or(false) {
        errs.push(FieldError::required(
            &path.child("namespaces"),
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if has_wildcard(namespaces) {
        wildcard_alone(&mut errs, namespaces, "namespaces", "namespaces");
    } else {
        for (i, ns) in namespaces.iter().enumerate() {
            for msg in dns1123_label_errors(ns) {
                errs.push(FieldError::invalid(
                    &path.child("namespaces").index(i),
                    ns.as_str(),
                    format!("{NS_ERR_INTRO}{msg}"),
                ));
            }
        }
    }
    errs
}

/// kube's `ValidateNonResourceURLPath`, for a URL that is not `*`.
fn url_error(url: &str, path: &FieldPath) -> Option<FieldError> {
    let why = if url.is_empty() {
        "must not be empty"
    } else if url == "/" {
        return None;
    } else if !url.starts_with('/') {
        "must start with slash"
    } else if url.contains(' ') {
        "must not contain white-space"
    } else if url.contains("//") {
        "must not contain double slash"
    } else {
        let wildcards = url.matches('*').count();
        if wildcards > 1 || (wildcards == 1 && !url.ends_with("/*")) {
            "wildcard can only do suffix matching"
        } else {
            return None;
        }
    };
    Some(FieldError::invalid(path, url, why))
}

/// `ValidateFlowSchemaNonResourcePolicyRule`.
fn non_resource_rule_errors(rule: &NonResourcePolicyRule, path: &FieldPath) -> ErrorList {
    let mut errs = verbs_errors(&rule.verbs, path);
    let urls = &rule.non_resource_ur_ls;
    let at = path.child("nonResourceURLs");
    if urls.is_empty() {
        errs.push(FieldError::required(
            &at,
            "nonResourceURLs must contain at least one value",
        ));
    } else if has_wildcard(urls) {
        if urls.len() > 1 {
            errs.push(FieldError::invalid_omit_value(
                &at,
                format!(
                    "{}: if '*' is present, must not specify other non-resource URLs",
                    go_strings(urls)
                ),
            ));
        }
    } else {
        errs.extend(
            urls.iter()
                .enumerate()
                .filter_map(|(i, url)| url_error(url, &at.index(i))),
        );
    }
    errs
}

/// `ValidateFlowSchemaSubject`: the member of the subject's kind is given and valid, and
/// the others are not set.
fn subject_errors(subject: &Subject, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let kind = subject.kind.as_str();
    if !SUBJECT_KINDS.contains(&kind) {
        errs.push(FieldError::not_supported(
            &path.child("kind"),
            kind,
            &strings(SUBJECT_KINDS),
        ));
        return errs;
    }
    let missing = |member: &str| {
        FieldError::required(
            &path.child(member),
            format!("{member} is required when subject kind is '{kind}'"),
        )
    };
    match kind {
        "ServiceAccount" => match &subject.service_account {
            None => errs.push(missing("serviceAccount")),
            Some(sa) => {
                let at = path.child("serviceAccount");
                if sa.name.is_empty() {
                    errs.push(FieldError::required(&at.child("name"), ""));
                } else if sa.name != "*" {
                    for msg in dns1123_subdomain_errors(&sa.name) {
                        errs.push(FieldError::invalid(
                            &at.child("name"),
                            sa.name.as_str(),
                            msg,
                        ));
                    }
                }
                if sa.namespace.is_empty() {
                    errs.push(FieldError::required(
                        &at.child("namespace"),
                        "must specify namespace for service account",
                    ));
                } else {
                    for msg in dns1123_label_errors(&sa.namespace) {
                        errs.push(FieldError::invalid(
                            &at.child("namespace"),
                            sa.namespace.as_str(),
                            msg,
                        ));
                    }
                }
            }
        },
        "User" => match &subject.user {
            None => errs.push(missing("user")),
            Some(u) if u.name.is_empty() => {
                errs.push(FieldError::required(&path.child("user").child("name"), ""))
            }
            Some(_) => {}
        },
        _ => match &subject.group {
            None => errs.push(missing("group")),
            Some(g) if g.name.is_empty() => {
                errs.push(FieldError::required(&path.child("group").child("name"), ""))
            }
            Some(_) => {}
        },
    }
    // The members of the other kinds, in kube's order for each kind.
    let others: [(&str, bool, &str); 3] = [
        ("user", subject.user.is_some(), "User"),
        ("group", subject.group.is_some(), "Group"),
        (
            "serviceAccount",
            subject.service_account.is_some(),
            "ServiceAccount",
        ),
    ];
    let order: &[usize] = match kind {
        "ServiceAccount" => &[0, 1],
        "User" => &[2, 1],
        _ => &[2, 0],
    };
    for &i in order {
        let (member, set, own_kind) = others[i];
        if set {
            errs.push(FieldError::forbidden(
                &path.child(member),
                format!("{member} is forbidden when subject kind is not '{own_kind}'"),
            ));
        }
    }
    errs
}

/// `ValidateFlowSchemaPolicyRulesWithSubjects`.
fn rule_errors(rule: &PolicyRulesWithSubjects, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if rule.subjects.is_empty() {
        errs.push(FieldError::required(
            &path.child("subjects"),
            "subjects must contain at least one value",
        ));
    }
    for (i, subject) in rule.subjects.iter().enumerate() {
        errs.extend(subject_errors(subject, &path.child("subjects").index(i)));
    }
    let resource_rules = rule.resource_rules.as_deref().unwrap_or_default();
    let non_resource_rules = rule.non_resource_rules.as_deref().unwrap_or_default();
    if resource_rules.is_empty() && non_resource_rules.is_empty() {
        errs.push(FieldError::required(
            path,
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        ));
    }
    for (i, r) in resource_rules.iter().enumerate() {
        errs.extend(resource_rule_errors(
            r,
            &path.child("resourceRules").index(i),
        ));
    }
    for (i, r) in non_resource_rules.iter().enumerate() {
        errs.extend(non_resource_rule_errors(
            r,
            &path.child("nonResourceRules").index(i),
        ));
    }
    errs
}

/// `ValidateFlowSchemaSpec`; a missing spec is checked as an empty one.
fn spec_errors(name: &str, spec: Option<&FlowSchemaSpec>) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = FieldPath::new("spec");
    let precedence = spec.map_or(DEFAULT_MATCHING_PRECEDENCE, |s| {
        s.matching_precedence.unwrap_or(0)
    });
    let at = path.child("matchingPrecedence");
    if precedence <= 0 {
        errs.push(FieldError::invalid(
            &at,
            precedence,
            "must be a positive value",
        ));
    }
    if precedence > MAX_MATCHING_PRECEDENCE {
        errs.push(FieldError::invalid(
            &at,
            precedence,
            format!("must not be greater than {MAX_MATCHING_PRECEDENCE}"),
        ));
    }
    if precedence == 1 && name != EXEMPT {
        errs.push(FieldError::invalid(
            &at,
            precedence,
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if let Some(method) = spec.and_then(|s| s.distinguisher_method.as_ref()) {
        if !DISTINGUISHER_METHODS.contains(&method.r#type.as_str()) {
            errs.push(not_supported_go(
                &path.child("distinguisherMethod").child("type"),
                format!(
                    "flowcontrol.FlowDistinguisherMethod{{Type:{:?}}}",
                    method.r#type
                ),
                DISTINGUISHER_METHODS,
            ));
        }
    }
    let level = spec.map_or("", |s| s.priority_level_configuration.name.as_str());
    let at = path.child("priorityLevelConfiguration").child("name");
    if level.is_empty() {
        errs.push(FieldError::required(&at, "must reference a priority level"));
    }
    for msg in dns1123_subdomain_errors(level)
        .into_iter()
        .filter(|_| !level.is_empty())
    {
        errs.push(FieldError::invalid(&at, level, msg));
    }
    let rules = spec.and_then(|s| s.rules.as_deref()).unwrap_or_default();
    for (i, rule) in rules.iter().enumerate() {
        errs.extend(rule_errors(rule, &path.child("rules").index(i)));
    }
    errs
}

/// `ValidateFlowSchema`, after the generic metadata checks.
fn validate_fs(fs: &FlowSchema) -> ErrorList {
    let name = fs.metadata.name.as_deref().unwrap_or_default();
    let mut errs = spec_errors(name, fs.spec.as_ref());
    if let Some(fixed) = mandatory_flow_schema_spec(name) {
        let spec = serde_json::to_value(&fs.spec).unwrap_or(Value::Null);
        if !same_spec(&spec, &fixed) {
            errs.push(FieldError::invalid(
                &FieldPath::new("spec"),
                spec,
                format!("spec of '{name}' must equal the fixed value"),
            ));
        }
    }
    let conditions = fs.status.as_ref().and_then(|s| s.conditions.as_deref());
    let types = conditions
        .unwrap_or_default()
        .iter()
        .map(|c| c.r#type.as_deref().unwrap_or_default());
    errs.extend(conditions_errors(types));
    errs
}

impl Hooks<FlowSchema> for FlowSchemaHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, fs: &mut FlowSchema) {
        if let Some(spec) = &mut fs.spec {
            if spec.matching_precedence.unwrap_or(0) == 0 {
                spec.matching_precedence = Some(DEFAULT_MATCHING_PRECEDENCE);
            }
        }
    }

    fn prepare_for_update(&self, new: &mut FlowSchema, old: &FlowSchema) {
        // kube bumps the generation for a spec change only, not for metadata.
        new.metadata.generation = next_generation(old.metadata.generation, new.spec != old.spec);
    }

    fn validate(&self, fs: &FlowSchema) -> ErrorList {
        validate_fs(fs)
    }

    fn validate_update(&self, new: &FlowSchema, _old: &FlowSchema) -> ErrorList {
        validate_fs(new)
    }

    fn table_cell(&self, column: &str, fs: &FlowSchema) -> Option<Value> {
        match column {
            "DistinguisherMethod" => Some(Value::from(
                fs.spec
                    .as_ref()
                    .and_then(|s| s.distinguisher_method.as_ref())
                    .map_or("<none>", |m| m.r#type.as_str()),
            )),
            "MissingPL" => {
                let conditions = fs.status.as_ref().and_then(|s| s.conditions.as_deref());
                let dangling = conditions
                    .unwrap_or_default()
                    .iter()
                    .find(|c| c.r#type.as_deref() == Some("Dangling"));
                Some(Value::from(
                    dangling.map_or("?", |c| c.status.as_deref().unwrap_or_default()),
                ))
            }
            _ => None,
        }
    }
}
