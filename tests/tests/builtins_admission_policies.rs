//! ValidatingAdmissionPolicies and their bindings against a real server, as
//! `builtins_classes.rs` tests kinds: kube's defaults, generation and status handling,
//! validation in kube's words (CEL expressions compiled) and Table cells. Every policy
//! here matches a resource nobody writes, and every binding names a policy that does not
//! exist, so that no policy is enforced.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

#[path = "support/builtins.rs"]
mod support;
use support::*;

const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

/// A rule matching gadgets.example.com, which no test writes.
fn gadget_rules() -> Value {
    json!({"resourceRules": [{"apiGroups": ["example.com"], "apiVersions": ["v1"],
                              "operations": ["CREATE", "UPDATE"], "resources": ["gadgets"]}]})
}

fn policy(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
           "metadata": {"name": name}, "spec": spec})
}

fn binding(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1",
           "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name}, "spec": spec})
}

/// A valid spec with `validations`, and `extra` fields over it.
fn spec_with(validations: Value, extra: Value) -> Value {
    let mut spec = json!({"matchConstraints": gadget_rules(), "validations": validations});
    for (k, v) in extra.as_object().expect("fields") {
        spec[k] = v.clone();
    }
    spec
}

/// The policy once the status controller has observed `generation`, polled, bounded.
fn observed(kapi: &Kapi, path: &str, generation: i64) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (code, obj) = kapi.request("GET", path, "application/json", None);
        assert_eq!(code, 200, "{obj}");
        if obj["status"]["observedGeneration"] == generation {
            return obj;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never observed {generation}: {obj}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn policies() {
    let kapi = Kapi::start(Backend::Embedded);
    let invalid_policy =
        |name: &str, spec: Value| invalid(&kapi, "POST", POLICIES, &policy(name, spec));
    let prefix = |name: &str| {
        format!("ValidatingAdmissionPolicy.admissionregistration.k8s.io \"{name}\" is invalid: ")
    };

    // kube's defaults; the generation is 1 and the status starts empty, whatever is sent.
    let mut sent = policy(
        "small-gadgets",
        spec_with(json!([{"expression": "object.spec.size < 10"}]), json!({})),
    );
    sent["status"] = json!({"observedGeneration": 7});
    let created = create(&kapi, POLICIES, sent);
    let spec = &created["spec"];
    assert_eq!(spec["failurePolicy"], "Fail", "{created}");
    let constraints = &spec["matchConstraints"];
    assert_eq!(
        (
            &constraints["matchPolicy"],
            &constraints["namespaceSelector"],
            &constraints["objectSelector"],
            &constraints["resourceRules"][0]["scope"]
        ),
        (&json!("Equivalent"), &json!({}), &json!({}), &json!("*")),
        "{created}"
    );
    assert_eq!(created["metadata"]["generation"], 1, "{created}");
    assert_eq!(created["status"], json!({}), "{created}");

    // The generation follows the spec only; leaving out a defaulted field changes nothing.
    // (The status controller writes each new generation's type checking: the updates
    // below start from what it wrote.)
    let path = format!("{POLICIES}/small-gadgets");
    let first = observed(&kapi, &path, 1);
    let mut labelled = first.clone();
    labelled["metadata"]["labels"] = json!({"team": "gadgets"});
    labelled["status"] = json!({"observedGeneration": 9});
    let labelled = update(&kapi, &path, &labelled);
    assert_eq!(labelled["metadata"]["generation"], 1, "{labelled}");
    assert_eq!(
        labelled["status"], first["status"],
        "status only via /status"
    );
    let mut tightened = labelled.clone();
    tightened["spec"]["validations"] = json!([
        {"expression": "object.spec.size < 5", "message": "too big", "reason": "Forbidden"},
        {"expression": "object.spec.color != 'red'", "messageExpression": "'no ' + object.spec.color"},
    ]);
    let tightened = update(&kapi, &path, &tightened);
    assert_eq!(tightened["metadata"]["generation"], 2, "{tightened}");
    let mut undefaulted = observed(&kapi, &path, 2);
    undefaulted["spec"]
        .as_object_mut()
        .unwrap()
        .remove("failurePolicy");
    let undefaulted = update(&kapi, &path, &undefaulted);
    assert_eq!(undefaulted["metadata"]["generation"], 2, "{undefaulted}");
    assert_eq!(undefaulted["spec"]["failurePolicy"], "Fail");

    // kube's strategy refuses an update without a resourceVersion.
    let mut unconditional = undefaulted.clone();
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    assert_eq!(
        invalid(&kapi, "PUT", &path, &unconditional),
        format!(
            "{}metadata.resourceVersion: Invalid value: 0: must be specified for an update",
            prefix("small-gadgets")
        )
    );

    // /status changes the status only, and keeps the generation.
    let status_path = format!("{path}/status");
    let mut reported = undefaulted.clone();
    reported["spec"]["failurePolicy"] = json!("Ignore");
    reported["status"] = json!({"observedGeneration": 2, "typeChecking": {"expressionWarnings": [
        {"fieldRef": "spec.validations[1].expression", "warning": "no such field: color"}]},
        "conditions": [{"type": "TypeChecked", "status": "True", "reason": "Checked",
                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    let reported = update(&kapi, &status_path, &reported);
    assert_eq!(reported["spec"]["failurePolicy"], "Fail", "{reported}");
    assert_eq!(reported["status"]["observedGeneration"], 2, "{reported}");
    assert_eq!(reported["metadata"]["generation"], 2, "{reported}");
    let mut bad_status = reported.clone();
    bad_status["status"] = json!({"typeChecking": {"expressionWarnings": [{"fieldRef": " ", "warning": ""}]},
        "conditions": [{"type": "a b", "status": "Maybe", "reason": "1st",
                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    let message = invalid(&kapi, "PUT", &status_path, &bad_status);
    for part in [
        "status.typeChecking.expressionWarnings[0].warning: Required value",
        "status.typeChecking.expressionWarnings[0].fieldRef: Required value",
        "status.conditions[0].type: Invalid value: \"a b\": name part must consist of",
        "status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \
         \"False\", \"True\", \"Unknown\"",
        "status.conditions[0].reason: Invalid value: \"1st\": a condition reason must start \
         with alphabetic character",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }

    // ValidateValidatingAdmissionPolicy, in kube's words.
    let both = "validations or auditAnnotations must contain at least one item";
    assert_eq!(
        invalid_policy("empty", json!({})),
        format!(
            "{}[spec.matchConstraints: Required value, spec.validations: Required value: \
             {both}, spec.auditAnnotations: Required value: {both}]",
            prefix("empty")
        )
    );
    // Expressions are compiled: syntax, and the variables kube declares for each.
    let message = invalid_policy(
        "unparsable",
        spec_with(json!([{"expression": "object.spec.size <"}]), json!({})),
    );
    assert!(
        message.starts_with(&format!(
            "{}spec.validations[0].expression: Invalid value: \"object.spec.size <\": \
             compilation failed: ",
            prefix("unparsable")
        )),
        "{message}"
    );
    assert_eq!(
        invalid_policy(
            "undeclared",
            spec_with(
                json!([{"expression": "object.spec.size < params.max",
                        "messageExpression": "'denied: ' + string(authorizer)"}]),
                json!({"matchConditions": [{"name": "with-vars", "expression": "variables.x"}]})
            )
        ),
        format!(
            "{}[spec.matchConditions[0].expression: Invalid value: \"variables.x\": \
             compilation failed: undeclared reference to 'variables', \
             spec.validations[0].expression: Invalid value: \"object.spec.size < params.max\": \
             compilation failed: undeclared reference to 'params', \
             spec.validations[0].messageExpression: Invalid value: \
             \"'denied: ' + string(authorizer)\": compilation failed: undeclared reference \
             to 'authorizer']",
            prefix("undeclared")
        )
    );
    // Variables: CEL identifiers, each seeing only those declared before it.
    assert_eq!(
        invalid_policy(
            "variables",
            spec_with(
                json!([{"expression": "variables.big && variables.nope"}]),
                json!({"variables": [
                    {"name": "big", "expression": "variables.limit < 10"},
                    {"name": "limit", "expression": "object.spec.size"},
                    {"name": "in", "expression": "true"},
                ]})
            )
        ),
        format!(
            "{}[spec.variables[0].expression: Invalid value: \"variables.limit < 10\": \
             compilation failed: undefined field 'limit', spec.variables[2].name: Invalid \
             value: \"in\": name is not a valid CEL identifier, \
             spec.validations[0].expression: Invalid value: \"variables.big && variables.nope\": \
             compilation failed: undefined field 'nope']",
            prefix("variables")
        )
    );
    // With a paramKind, params may be used (and its apiVersion and kind are checked).
    assert_eq!(
        invalid_policy(
            "settings",
            spec_with(
                json!([{"expression": "object.spec.size < params.max",
                        "message": "too\nbig", "reason": "Unauthorized"}]),
                json!({"failurePolicy": "Sometimes",
                       "paramKind": {"apiVersion": "a/b/c", "kind": "Gadget_Limit"},
                       "matchConditions": [{"name": "a b", "expression": "params != null"}]})
            )
        ),
        format!(
            "{}[spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \
             \"Fail\", \"Ignore\", spec.paramKind.apiVersion: Invalid value: \"a/b/c\": \
             unexpected GroupVersion string: a/b/c, spec.paramKind.kind: Invalid value: \
             \"Gadget_Limit\": may have mixed case, but should otherwise match: a DNS-1035 \
             label must consist of lower case alphanumeric characters or '-', start with an \
             alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  \
             or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), \
             spec.matchConditions[0].name: Invalid value: \"a b\": name part must consist of \
             alphanumeric characters, '-', '_' or '.', and must start and end with an \
             alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used \
             for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), \
             spec.validations[0].message: Invalid value: \"too\\nbig\": message must not \
             contain line breaks, spec.validations[0].reason: Unsupported value: \
             \"Unauthorized\": supported values: \"Forbidden\", \"Invalid\", \
             \"RequestEntityTooLarge\"]",
            prefix("settings")
        )
    );
    // The match constraints' rules and selectors.
    assert_eq!(
        invalid_policy(
            "rules",
            json!({"matchConstraints": {
                "matchPolicy": "Loose",
                "objectSelector": {"matchExpressions": [{"key": "tier", "operator": "In"}]},
                "resourceRules": [{"apiGroups": ["*", "apps"], "apiVersions": [""],
                                   "operations": ["PATCH"], "resources": ["*/*", "pods"],
                                   "scope": "Global"}]},
                   "auditAnnotations": [{"key": "size", "valueExpression": "'big'"},
                                        {"key": "size", "valueExpression": " "}]})
        ),
        format!(
            "{}[spec.matchConstraints.matchPolicy: Unsupported value: \"Loose\": supported \
             values: \"Equivalent\", \"Exact\", \
             spec.matchConstraints.objectSelector.matchExpressions[0].values: Required value: \
             must be specified when `operator` is 'In' or 'NotIn', \
             spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: \
             \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \
             \"UPDATE\", spec.matchConstraints.resourceRules[0].apiGroups: Invalid value: \
             [\"*\",\"apps\"]: if '*' is present, must not specify other API groups, \
             spec.matchConstraints.resourceRules[0].apiVersions[0]: Required value, \
             spec.matchConstraints.resourceRules[0].resources: Invalid value: \
             [\"*/*\",\"pods\"]: if '*/*' is present, must not specify other resources, \
             spec.matchConstraints.resourceRules[0].scope: Unsupported value: \"Global\": \
             supported values: \"*\", \"Cluster\", \"Namespaced\", \
             spec.auditAnnotations[1].valueExpression: Required value: valueExpression is \
             not specified, spec.auditAnnotations[1].key: Duplicate value: \"size\"]",
            prefix("rules")
        )
    );
    // A policy with parameters, variables, conditions and audit annotations is fine.
    create(
        &kapi,
        POLICIES,
        policy(
            "gadget-limits",
            spec_with(
                json!([{"expression": "variables.size <= params.max",
                        "messageExpression": "'size ' + string(variables.size) + ' over ' + string(params.max)"}]),
                json!({"paramKind": {"apiVersion": "example.com/v1", "kind": "GadgetLimit"},
                       "matchConditions": [{"name": "example.com/not-system",
                                            "expression": "request.userInfo.username != 'system:admin' && params != null"}],
                       "variables": [{"name": "size", "expression": "object.spec.size"}],
                       "auditAnnotations": [{"key": "size", "valueExpression": "string(variables.size)"}]}),
            ),
        ),
    );

    // Table cells as kube's printValidatingAdmissionPolicy prints them.
    assert_eq!(
        row(
            &kapi,
            POLICIES,
            "small-gadgets",
            &["Validations", "ParamKind"]
        ),
        vec![json!(2), json!("<unset>")]
    );
    let rows = kubectl_rows(&kapi, &["get", "validatingadmissionpolicies"]);
    assert_eq!(
        rows,
        vec![
            strs(&["NAME", "VALIDATIONS", "PARAMKIND"]),
            strs(&["gadget-limits", "1", "example.com/v1/GadgetLimit"]),
            strs(&["small-gadgets", "2", "<unset>"]),
        ]
    );
}

#[test]
fn bindings() {
    let kapi = Kapi::start(Backend::Embedded);
    let prefix = |name: &str| {
        format!(
            "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io \"{name}\" is invalid: "
        )
    };

    // matchResources' defaults; the generation is 1 and follows the spec.
    let created = create(
        &kapi,
        BINDINGS,
        binding(
            "by-name",
            json!({"policyName": "absent-policy", "validationActions": ["Deny", "Audit"],
                   "paramRef": {"name": "limits", "namespace": "gadgets", "parameterNotFoundAction": "Deny"},
                   "matchResources": {"excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                      "operations": ["*"], "resources": ["pods/status"]}]}}),
        ),
    );
    let match_resources = &created["spec"]["matchResources"];
    assert_eq!(
        (
            &match_resources["matchPolicy"],
            &match_resources["namespaceSelector"],
            &match_resources["objectSelector"],
            &match_resources["excludeResourceRules"][0]["scope"]
        ),
        (&json!("Equivalent"), &json!({}), &json!({}), &json!("*")),
        "{created}"
    );
    assert_eq!(created["metadata"]["generation"], 1, "{created}");
    let path = format!("{BINDINGS}/by-name");
    let mut labelled = created.clone();
    labelled["metadata"]["labels"] = json!({"team": "gadgets"});
    let labelled = update(&kapi, &path, &labelled);
    assert_eq!(labelled["metadata"]["generation"], 1, "{labelled}");
    let mut warned = labelled.clone();
    warned["spec"]["validationActions"] = json!(["Warn"]);
    warned["spec"]["matchResources"]
        .as_object_mut()
        .unwrap()
        .remove("matchPolicy");
    let warned = update(&kapi, &path, &warned);
    assert_eq!(warned["metadata"]["generation"], 2, "{warned}");
    assert_eq!(
        warned["spec"]["matchResources"]["matchPolicy"],
        "Equivalent"
    );
    let mut unconditional = warned.clone();
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    assert_eq!(
        invalid(&kapi, "PUT", &path, &unconditional),
        format!(
            "{}metadata.resourceVersion: Invalid value: 0: must be specified for an update",
            prefix("by-name")
        )
    );

    // ValidateValidatingAdmissionPolicyBinding, in kube's words.
    let invalid_binding =
        |name: &str, spec: Value| invalid(&kapi, "POST", BINDINGS, &binding(name, spec));
    assert_eq!(
        invalid_binding("empty", json!({})),
        format!(
            "{}[spec.policyName: Required value, spec.validationActions: Required value: at \
             least one validation action is required]",
            prefix("empty")
        )
    );
    assert_eq!(
        invalid_binding(
            "actions",
            json!({"policyName": "Absent_Policy", "validationActions": ["Deny", "Warn", "Log"]})
        ),
        format!(
            "{}[spec.policyName: Invalid value: \"Absent_Policy\": a lowercase RFC 1123 \
             subdomain must consist of lower case alphanumeric characters, '-' or '.', and \
             must start and end with an alphanumeric character (e.g. 'example.com', regex used \
             for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), \
             spec.validationActions[2]: Unsupported value: \"Log\": supported values: \
             \"Audit\", \"Deny\", \"Warn\", spec.validationActions: Invalid value: \
             [\"Deny\",\"Warn\",\"Log\"]: must not contain both Deny and Warn \
             (repeating the same validation failure information in the API response and \
             headers serves no purpose)]",
            prefix("actions")
        )
    );
    assert_eq!(
        invalid_binding(
            "params",
            json!({"policyName": "absent-policy", "validationActions": ["Audit"],
                   "paramRef": {"name": "a/b", "selector": {}, "parameterNotFoundAction": "Ignore"},
                   "matchResources": {"matchPolicy": "Exact",
                                      "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                         "operations": ["CREATE", "*"], "resources": []}]}})
        ),
        format!(
            "{}[spec.paramRef.name: Invalid value: \"a/b\": may not contain '/', \
             spec.paramRef.name: Forbidden: name and selector are mutually exclusive, \
             spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, \
             spec.paramRef.parameterNotFoundAction: Unsupported value: \"Ignore\": supported \
             values: \"Deny\", \"Allow\", spec.matchResouces.resourceRules[0].operations: \
             Invalid value: [\"CREATE\",\"*\"]: if '*' is present, must not specify other \
             operations, spec.matchResouces.resourceRules[0].resources: Required value]",
            prefix("params")
        )
    );
    assert_eq!(
        invalid_binding(
            "no-param",
            json!({"policyName": "absent-policy", "validationActions": ["Audit"], "paramRef": {}})
        ),
        format!(
            "{}[spec.paramRef: Required value: one of name or selector must be specified, \
             spec.paramRef.parameterNotFoundAction: Required value]",
            prefix("no-param")
        )
    );

    // Table cells as kube's printValidatingAdmissionPolicyBinding prints them.
    for (name, param_ref) in [
        (
            "cluster-param",
            json!({"name": "limits", "parameterNotFoundAction": "Allow"}),
        ),
        (
            "by-selector",
            json!({"selector": {"matchLabels": {"tier": "gold"}}, "parameterNotFoundAction": "Deny"}),
        ),
    ] {
        create(
            &kapi,
            BINDINGS,
            binding(
                name,
                json!({"policyName": "absent-policy", "validationActions": ["Audit"], "paramRef": param_ref}),
            ),
        );
    }
    create(
        &kapi,
        BINDINGS,
        binding(
            "no-params",
            json!({"policyName": "other-policy", "validationActions": ["Deny"]}),
        ),
    );
    assert_eq!(
        row(&kapi, BINDINGS, "by-name", &["PolicyName", "ParamRef"]),
        vec![json!("absent-policy"), json!("gadgets/limits")]
    );
    let rows = kubectl_rows(&kapi, &["get", "validatingadmissionpolicybindings"]);
    assert_eq!(
        rows,
        vec![
            strs(&["NAME", "POLICYNAME", "PARAMREF"]),
            strs(&["by-name", "absent-policy", "gadgets/limits"]),
            strs(&[
                "by-selector",
                "absent-policy",
                "&LabelSelector{MatchLabels:map[string]string{tier: gold,},\
                 MatchExpressions:[]LabelSelectorRequirement{},}"
            ]),
            strs(&["cluster-param", "absent-policy", "*/limits"]),
            strs(&["no-params", "other-policy", "<unset>"]),
        ]
    );
}
