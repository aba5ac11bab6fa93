//! A CRD's CEL rules checked against its schema before anything is served, as
//! kube-apiserver checks them: fields the schema does not have, and each rule's
//! estimated cost (times how often its node can occur) against kube's budgets.

use kapi_core::schema::Schema;
use serde_json::{Value, json};

/// What parsing `v` and checking its rules as a CRD write does find.
fn parse_errors(v: Value) -> Vec<String> {
    let errs = match Schema::parse(&v) {
        Ok(s) => s.check_rules(&kapi_core::field::FieldPath::root()),
        Err(errs) => errs,
    };
    errs.iter().map(ToString::to_string).collect()
}

/// A list of at most `max_items` objects whose two strings of up to 2,500 characters
/// are compared by `contains`: 1,000,004 units per item (cel-go's 4 selections, and
/// ceil(10,000 x 0.1) squared).
fn list_of_contains(max_items: u64) -> Value {
    json!({
        "type": "array",
        "maxItems": max_items,
        "items": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "maxLength": 2500},
                "b": {"type": "string", "maxLength": 2500}
            },
            "x-kubernetes-validations": [{"rule": "self.a.contains(self.b)"}]
        }
    })
}

const HINT: &str = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";

#[test]
fn a_rule_over_budget_is_refused_with_kubes_factor() {
    // 12 items cost 12,000,048: 1.2000048 times the budget, printed as Go's %f.
    let errs = parse_errors(json!({"type": "object", "properties": {"xs": list_of_contains(12)}}));
    assert_eq!(
        errs,
        vec![format!(
            "properties[xs].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.200005x {HINT}"
        )]
    );
    // 30 items: 3.0 times, with one decimal.
    let errs = parse_errors(json!({"type": "object", "properties": {"xs": list_of_contains(30)}}));
    assert!(errs[0].contains("by factor of 3.0x"), "{errs:?}");
    // Within the budget, the same rule passes.
    assert!(
        parse_errors(json!({"type": "object", "properties": {"xs": list_of_contains(9)}}))
            .is_empty()
    );
    // Without maxItems the items are as many as fit in a request.
    let mut unbounded = list_of_contains(1);
    unbounded.as_object_mut().unwrap().remove("maxItems");
    let errs = parse_errors(json!({"type": "object", "properties": {"xs": unbounded}}));
    assert!(errs[0].contains("by factor of more than 100x"), "{errs:?}");
}

#[test]
fn rules_within_budget_can_still_exceed_the_schemas_total() {
    // Twelve lists of 9 items: 9,000,036 each, 108,000,432 in all.
    let props: serde_json::Map<String, Value> = (0..12)
        .map(|i| (format!("l{i:02}"), list_of_contains(9)))
        .collect();
    let errs = parse_errors(json!({"type": "object", "properties": props}));
    let contributed = "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema";
    assert_eq!(errs.len(), 5, "{errs:?}");
    assert!(
        errs[..4].iter().all(|e| e.ends_with(contributed)),
        "{errs:?}"
    );
    assert_eq!(
        errs[4],
        format!(
            ": Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.080004x {HINT}"
        )
    );
}

#[test]
fn a_rule_naming_a_missing_field_is_refused() {
    let errs = parse_errors(json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "properties": {"shelves": {"type": "integer"}, "namespace": {"type": "string"}},
            "x-kubernetes-validations": [
                {"rule": "self.shelfs > 0"},
                // Reserved words are spelled as kube escapes them.
                {"rule": "!has(self.__namespace__) || self.__namespace__ != ''"},
                {"rule": "self.shelves > 0", "messageExpression": "'have ' + self.shelvs"}
            ]
        }}
    }));
    assert_eq!(
        errs,
        vec![
            "properties[spec].x-kubernetes-validations[0].rule: Invalid value: \"self.shelfs > 0\": compilation failed: ERROR: <input>:1:5: undefined field 'shelfs'\n | self.shelfs > 0\n | ....^",
            "properties[spec].x-kubernetes-validations[2].messageExpression: Invalid value: \"'have ' + self.shelvs\": messageExpression compilation failed: ERROR: <input>:1:15: undefined field 'shelvs'\n | 'have ' + self.shelvs\n | ..............^",
        ]
    );
}

#[test]
fn rules_see_fields_by_their_escaped_names_and_map_keys_as_they_are() {
    use kapi_core::field::FieldPath;
    let s = Schema::parse(&json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "properties": {
                "namespace": {"type": "string", "maxLength": 63},
                "max-size": {"type": "integer"},
                "labels": {"type": "object", "maxProperties": 8,
                           "additionalProperties": {"type": "string", "maxLength": 63}}
            },
            "x-kubernetes-validations": [
                {"rule": "has(self.__namespace__) && self.__namespace__ != 'kube-system'", "message": "namespace"},
                {"rule": "!has(self.max__dash__size) || self.max__dash__size < 10", "message": "size"},
                {"rule": "!has(self.labels) || self.labels.all(k, k.matches('^[a-z.-]+$'))", "message": "labels"}
            ]
        }}
    }))
    .unwrap();
    let ok = json!({"spec": {"namespace": "team-a", "max-size": 3, "labels": {"app.kubernetes.io-x": "v"}}});
    assert!(s.validate(&ok, &FieldPath::root()).is_empty());
    let bad = json!({"spec": {"namespace": "kube-system", "max-size": 30}});
    let msgs: Vec<String> = s
        .validate(&bad, &FieldPath::root())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        msgs,
        vec![
            r#"spec: Invalid value: "object": namespace"#,
            r#"spec: Invalid value: "object": size"#,
        ]
    );
}

#[test]
fn a_crd_update_checks_only_the_versions_it_changes() {
    use kapi_core::crd::CustomResourceDefinition;
    let crd = |rule: &str| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "shelves.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Shelf", "plural": "shelves"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                        "type": "object", "properties": {"books": {"type": "integer"}},
                        "x-kubernetes-validations": [{"rule": rule}]}}}}}]}
        })
    };
    // A stored CRD is served again whatever its rules (kube checks them on writes only).
    let stored = CustomResourceDefinition::parse(&crd("self.bookz > 0")).unwrap();
    let unchanged = CustomResourceDefinition::parse(&crd("self.bookz > 0")).unwrap();
    assert!(unchanged.check_rules(Some(&stored)).is_empty());
    let changed = CustomResourceDefinition::parse(&crd("self.bookz >= 0")).unwrap();
    let errs: Vec<String> = changed
        .check_rules(Some(&stored))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: \"self.bookz >= 0\": compilation failed: ERROR: <input>:1:5: undefined field 'bookz'"),
        "{errs:?}"
    );
    assert_eq!(changed.check_rules(None).len(), 1);
}
