//! Integration tests of the structural schema engine: parsing with structural checks,
//! defaulting, pruning, validation messages (Kubernetes' wording) and CEL rules, plus
//! every `openAPIV3Schema` of the real-world CRDs in the shared testdata.

use std::path::PathBuf;

use kapi_core::field::FieldPath;
use kapi_core::schema::Schema;
use serde_json::{Value, json};

fn schema(v: Value) -> Schema {
    match Schema::parse(&v) {
        Ok(s) => s,
        Err(errs) => panic!(
            "schema did not parse: {:?}",
            errs.iter().map(ToString::to_string).collect::<Vec<_>>()
        ),
    }
}

fn messages(errs: &[kapi_core::FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

fn parse_errors(v: Value) -> Vec<String> {
    match Schema::parse(&v) {
        Ok(_) => Vec::new(),
        Err(errs) => messages(&errs),
    }
}

/// A schema with `spec` of the given node under an object root.
fn spec_schema(spec_props: Value) -> Schema {
    schema(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": spec_props}}
    }))
}

fn validate_spec(props: Value, spec: Value) -> Vec<String> {
    let s = spec_schema(props);
    messages(&s.validate(&json!({"spec": spec}), &FieldPath::root()))
}

// ---------------------------------------------------------------------------------------
// validation keywords
// ---------------------------------------------------------------------------------------

#[test]
fn keyword_messages() {
    let cases: Vec<(Value, Value, Vec<&str>)> = vec![
        (
            json!({"replicas": {"type": "integer", "minimum": 0}}),
            json!({"replicas": -1}),
            vec![
                "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
            ],
        ),
        (
            json!({"replicas": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}}),
            json!({"replicas": 0}),
            vec!["spec.replicas: Invalid value: 0: spec.replicas in body should be greater than 0"],
        ),
        (
            json!({"replicas": {"type": "integer", "maximum": 10}}),
            json!({"replicas": 11}),
            vec![
                "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
            ],
        ),
        (
            json!({"ratio": {"type": "number", "maximum": 1.5, "exclusiveMaximum": true}}),
            json!({"ratio": 1.5}),
            vec!["spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5"],
        ),
        (
            json!({"n": {"type": "integer", "multipleOf": 5}}),
            json!({"n": 7}),
            vec!["spec.n: Invalid value: 7: spec.n in body should be a multiple of 5"],
        ),
        (
            json!({"replicas": {"type": "integer"}}),
            json!({"replicas": "three"}),
            vec![
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
            ],
        ),
        (
            json!({"replicas": {"type": "integer"}}),
            json!({"replicas": 1.0}),
            vec![],
        ),
        (
            json!({"name": {"type": "string"}}),
            json!({"name": null}),
            vec![
                r#"spec.name: Invalid value: "null": spec.name in body must be of type string: "null""#,
            ],
        ),
        (
            json!({"name": {"type": "string", "nullable": true}}),
            json!({"name": null}),
            vec![],
        ),
        (
            json!({"size": {"type": "string", "enum": ["small", "medium", "large"]}}),
            json!({"size": "huge"}),
            vec![
                r#"spec.size: Unsupported value: "huge": supported values: "small", "medium", "large""#,
            ],
        ),
        (
            json!({"n": {"type": "integer", "enum": [1, 2]}}),
            json!({"n": 3}),
            vec![r#"spec.n: Unsupported value: 3: supported values: "1", "2""#],
        ),
        (
            json!({"name": {"type": "string", "maxLength": 3}}),
            json!({"name": "abcd"}),
            vec!["spec.name: Too long: may not be more than 3 bytes"],
        ),
        // Lengths count characters, not bytes.
        (
            json!({"name": {"type": "string", "maxLength": 3}}),
            json!({"name": "äöü"}),
            vec![],
        ),
        (
            json!({"name": {"type": "string", "minLength": 3}}),
            json!({"name": "ab"}),
            vec![
                r#"spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long"#,
            ],
        ),
        (
            json!({"name": {"type": "string", "pattern": "^[a-z]+$"}}),
            json!({"name": "A1"}),
            vec![r#"spec.name: Invalid value: "A1": spec.name in body should match '^[a-z]+$'"#],
        ),
        (
            json!({"tags": {"type": "array", "items": {"type": "string"}, "minItems": 2}}),
            json!({"tags": ["a"]}),
            vec!["spec.tags: Invalid value: 1: spec.tags in body should have at least 2 items"],
        ),
        (
            json!({"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 1}}),
            json!({"tags": ["a", "b"]}),
            vec!["spec.tags: Too many: 2: must have at most 1 items"],
        ),
        (
            json!({"tags": {"type": "array", "items": {"type": "integer"}}}),
            json!({"tags": [1, "x"]}),
            vec![
                r#"spec.tags[1]: Invalid value: "string": spec.tags[1] in body must be of type integer: "string""#,
            ],
        ),
        (
            json!({"labels": {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 2}}),
            json!({"labels": {"a": "x"}}),
            vec![
                "spec.labels: Invalid value: 1: spec.labels in body should have at least 2 properties",
            ],
        ),
        (
            json!({"labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1}}),
            json!({"labels": {"a": "x", "b": "y"}}),
            vec!["spec.labels: Too many: 2: must have at most 1 items"],
        ),
        (
            json!({"labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}}}),
            json!({"labels": {"a": 1}}),
            vec![
                r#"spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer""#,
            ],
        ),
        (
            json!({"port": {"x-kubernetes-int-or-string": true}}),
            json!({"port": true}),
            vec![
                r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
            ],
        ),
        (
            json!({"port": {"x-kubernetes-int-or-string": true}}),
            json!({"port": "http"}),
            vec![],
        ),
        (
            json!({"ip": {"type": "string", "format": "ipv4"}}),
            json!({"ip": "1.2.3"}),
            vec![
                r#"spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3""#,
            ],
        ),
        (
            json!({"x": {"type": "string", "format": "no-such-format"}}),
            json!({"x": "whatever"}),
            vec![],
        ),
        (
            json!({"when": {"type": "string", "format": "date-time"}}),
            json!({"when": "yesterday"}),
            vec![
                r#"spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday""#,
            ],
        ),
        (
            json!({"n": {"type": "integer", "not": {"enum": [13]}}}),
            json!({"n": 13}),
            vec![r#": Invalid value: "": "spec.n" must not validate the schema (not)"#],
        ),
    ];
    for (props, spec, want) in cases {
        let got = validate_spec(props.clone(), spec.clone());
        assert_eq!(got, want, "schema {props} value {spec}");
    }
}

#[test]
fn required_and_nested_paths() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "string"},
                    "containers": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer", "maximum": 65535}}
                        }
                    }
                }
            }
        }
    }));
    let errs = s.validate(
        &json!({"spec": {"containers": [{"name": "a"}, {"port": 70000}]}}),
        &FieldPath::root(),
    );
    assert_eq!(
        messages(&errs),
        vec![
            "spec.containers[1].port: Invalid value: 70000: spec.containers[1].port in body should be less than or equal to 65535",
            "spec.containers[1].name: Required value",
            "spec.size: Required value",
        ]
    );
}

#[test]
fn validate_with_prefix_and_root_metadata() {
    // The doctest case: a sub-schema validated under a prefix names the full path.
    let s = schema(
        json!({"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 0}}}),
    );
    let errs = s.validate(&json!({"replicas": -1}), &FieldPath::new("spec"));
    assert_eq!(
        messages(&errs),
        vec![
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
        ]
    );
    // Root metadata is only checked to be an object.
    let s = schema(json!({
        "type": "object",
        "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}}
    }));
    assert!(
        s.validate(
            &json!({"metadata": {"name": "much-too-long"}}),
            &FieldPath::root()
        )
        .is_empty()
    );
    assert_eq!(
        messages(&s.validate(&json!({"metadata": "x"}), &FieldPath::root())),
        vec![
            r#"metadata: Invalid value: "string": metadata in body must be of type object: "string""#
        ]
    );
}

#[test]
fn junctors() {
    let props = json!({
        "value": {
            "type": "string",
            "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]
        },
        "one": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}]
        },
        "all": {
            "type": "integer",
            "allOf": [{"minimum": 1}, {"maximum": 5}]
        }
    });
    assert!(
        validate_spec(
            props.clone(),
            json!({"value": "abc", "one": {"a": "x"}, "all": 3})
        )
        .is_empty()
    );
    assert_eq!(
        validate_spec(props.clone(), json!({"value": "c"})),
        vec![
            r#": Invalid value: "": "spec.value" must validate at least one schema (anyOf)"#,
            r#"spec.value: Invalid value: "c": spec.value in body should match '^a'"#,
        ]
    );
    assert_eq!(
        validate_spec(props.clone(), json!({"one": {"a": "x", "b": "y"}})),
        vec![
            r#": Invalid value: "": "spec.one" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    assert_eq!(
        validate_spec(props, json!({"all": 9})),
        vec![
            "spec.all: Invalid value: 9: spec.all in body should be less than or equal to 5",
            r#": Invalid value: "": "spec.all" must validate all the schemas (allOf)"#,
        ]
    );
}

#[test]
fn list_type_uniqueness() {
    let props = json!({
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port"],
            "items": {"type": "object", "required": ["port"], "properties": {"port": {"type": "integer"}, "name": {"type": "string"}}}
        }
    });
    assert_eq!(
        validate_spec(
            props,
            json!({"tags": ["a", "b", "a"], "ports": [{"port": 80}, {"port": 80, "name": "x"}]})
        ),
        vec![
            r#"spec.ports[1]: Duplicate value: {"port":80}"#,
            r#"spec.tags[2]: Duplicate value: "a""#
        ]
    );
}

// ---------------------------------------------------------------------------------------
// defaulting and pruning
// ---------------------------------------------------------------------------------------

#[test]
fn defaulting() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "default": {},
                "properties": {
                    "replicas": {"type": "integer", "default": 1},
                    "strategy": {
                        "type": "object",
                        "default": {"type": "Rolling"},
                        "properties": {"type": {"type": "string"}, "maxSurge": {"type": "integer", "default": 25}}
                    },
                    "nullable": {"type": "string", "nullable": true, "default": "d"},
                    "items": {
                        "type": "array",
                        "items": {"type": "object", "default": {"x": 1}, "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 2}}}
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "v"}}
                }
            }
        }
    }));
    let mut obj = json!({});
    s.apply_defaults(&mut obj);
    assert_eq!(
        obj,
        json!({"spec": {"replicas": 1, "strategy": {"type": "Rolling", "maxSurge": 25}, "nullable": "d"}})
    );

    let mut obj = json!({"spec": {"replicas": null, "nullable": null, "items": [null, {"x": 5}], "labels": {"a": null}}});
    s.apply_defaults(&mut obj);
    assert_eq!(
        obj,
        json!({"spec": {
            "replicas": 1,
            "nullable": null,
            "strategy": {"type": "Rolling", "maxSurge": 25},
            "items": [{"x": 1, "y": 2}, {"x": 5, "y": 2}],
            "labels": {"a": "v"}
        }})
    );
}

#[test]
fn pruning() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "known": {"type": "string"},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"typed": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                    "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                    "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}},
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
                    "withDefault": {"type": "string", "default": "d"}
                }
            }
        }
    }));
    let mut obj = json!({
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x", "whatever": 1},
        "unknown": 1,
        "spec": {
            "known": "k",
            "gone": true,
            "known2": null,
            "free": {"anything": {"deep": 1}, "typed": {"a": "x", "b": "pruned"}},
            "list": [{"a": "x", "b": 1}],
            "map": {"k": {"a": "x", "b": 1}},
            "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}, "status": {}},
            "withDefault": null
        }
    });
    s.prune(&mut obj);
    assert_eq!(
        obj,
        json!({
            "apiVersion": "example.com/v1",
            "kind": "Thing",
            "metadata": {"name": "x", "whatever": 1},
            "spec": {
                "known": "k",
                "free": {"anything": {"deep": 1}, "typed": {"a": "x"}},
                "list": [{"a": "x"}],
                "map": {"k": {"a": "x"}},
                "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
                "withDefault": null
            }
        })
    );
    // A null of a non-nullable field without default is dropped.
    let mut obj = json!({"spec": {"known": null}});
    s.prune(&mut obj);
    assert_eq!(obj, json!({"spec": {}}));
}

// ---------------------------------------------------------------------------------------
// CEL
// ---------------------------------------------------------------------------------------

#[test]
fn cel_rules() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                    {"rule": "self.min >= 0"},
                    {"rule": "self.max < 100", "messageExpression": "'max is ' + string(self.max)", "reason": "FieldValueForbidden", "fieldPath": ".max"},
                    {"rule": "self.name.size() > 0"}
                ],
                "properties": {
                    "min": {"type": "integer"},
                    "max": {"type": "integer"},
                    "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('a')", "message": "must start with a"}]},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-validations": [{"rule": "self.all(k, k.matches('^[a-z]+$'))"}]}
                }
            }
        }
    }));
    let ok = json!({"spec": {"min": 1, "max": 2, "name": "abc", "labels": {"x": "y"}}});
    assert!(s.validate(&ok, &FieldPath::root()).is_empty());
    let bad = json!({"spec": {"min": 300, "max": 200, "labels": {"X": "y"}}});
    assert_eq!(
        messages(&s.validate(&bad, &FieldPath::root())),
        vec![
            r#"spec: Invalid value: "object": min must not exceed max"#,
            "spec.max: Forbidden: max is 200",
            r#"spec: Invalid value: "object": no such key: name evaluating rule: self.name.size() > 0"#,
            r#"spec.labels: Invalid value: "object": failed rule: self.all(k, k.matches('^[a-z]+$'))"#,
        ]
    );
    let bad_name = json!({"spec": {"min": 1, "max": 2, "name": "zed"}});
    assert_eq!(
        messages(&s.validate(&bad_name, &FieldPath::root())),
        vec![r#"spec.name: Invalid value: "string": must start with a"#]
    );
}

#[test]
fn cel_transition_rules() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "immutable": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "is immutable"}]},
                    "grow": {"type": "integer", "x-kubernetes-validations": [{"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "optionalOldSelf": true, "message": "may only grow"}]},
                    "atomic": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}},
                    "byKey": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "maxItems": 10,
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}, "v": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "v is immutable"}]}}
                        }
                    }
                }
            }
        }
    }));
    let new = json!({"spec": {"immutable": "b", "grow": 1, "atomic": ["x"], "byKey": [{"name": "b", "v": "2"}, {"name": "a", "v": "9"}]}});
    // On create, transition rules don't run (but optionalOldSelf ones do, with no value).
    assert!(s.validate(&new, &FieldPath::root()).is_empty());
    let old = json!({"spec": {"immutable": "a", "grow": 5, "atomic": ["y"], "byKey": [{"name": "a", "v": "1"}]}});
    assert_eq!(
        messages(&s.validate_update(&new, &old, &FieldPath::root())),
        vec![
            r#"spec.byKey[1].v: Invalid value: "string": v is immutable"#,
            r#"spec.grow: Invalid value: "integer": may only grow"#,
            r#"spec.immutable: Invalid value: "string": is immutable"#,
        ]
    );
}

#[test]
fn cel_message_expression_fallback() {
    let s = schema(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"n": {"type": "integer"}}, "x-kubernetes-validations": [
            {"rule": "self.n > 0", "messageExpression": "''", "message": "n must be positive"},
            {"rule": "self.n > 1", "messageExpression": "'n is ' + string(self.n)", "reason": "FieldValueRequired"}
        ]}}
    }));
    assert_eq!(
        messages(&s.validate(&json!({"spec": {"n": 0}}), &FieldPath::root())),
        vec![
            r#"spec: Invalid value: "object": n must be positive"#,
            "spec: Required value: n is 0"
        ]
    );
}

// ---------------------------------------------------------------------------------------
// structural checks
// ---------------------------------------------------------------------------------------

#[test]
fn structural_errors() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"type": "object", "properties": {"size": {"type": "strin"}}}),
            vec![
                r#"properties[size].type: Unsupported value: "strin": supported values: "array", "boolean", "integer", "number", "object", "string""#,
            ],
        ),
        (
            json!({"type": "object", "properties": {"size": {"description": "no type"}}}),
            vec![
                "properties[size].type: Required value: must not be empty for specified object fields",
            ],
        ),
        (
            json!({"properties": {}}),
            vec!["type: Required value: must not be empty at the root"],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array"}}}),
            vec!["properties[l].items: Required value: must be specified"],
        ),
        (
            json!({"type": "object", "properties": {"r": {"$ref": "#/definitions/x"}}}),
            vec![
                "properties[r].$ref: Forbidden: $ref is not supported",
                "properties[r].type: Required value: must not be empty for specified object fields",
            ],
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}}}),
            vec![
                "properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            ],
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": false}}}),
            vec![
                "properties[m].additionalProperties: Forbidden: additionalProperties cannot be set to false",
            ],
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string", "anyOf": [{"type": "string", "default": "x"}]}}}),
            vec![
                "properties[a].anyOf[0].type: Forbidden: must be empty to be structural",
                "properties[a].anyOf[0].default: Forbidden: must be undefined to be structural",
            ],
        ),
        (
            json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "a(b"}}}),
            vec![
                r#"properties[p].pattern: Invalid value: "a(b": must be a valid regular expression, but isn't: unclosed group"#,
            ],
        ),
        (
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": "3"}}}),
            vec![
                r#"properties[n].minimum: Invalid value: "3": must be of type number, not string"#,
            ],
        ),
        (
            json!({"type": "object", "required": "x"}),
            vec![r#"required: Invalid value: "x": must be of type array, not string"#],
        ),
        (
            json!({"type": "object", "bogus": 1}),
            vec![r#"bogus: Forbidden: unknown field "bogus""#],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}}),
            vec![
                "properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
            ],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}}),
            vec![
                r#"properties[l].items.required: Required value: all map keys must be required or have a default value, but "k" is neither"#,
            ],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-map-keys": ["k"], "items": {"type": "string"}}}}),
            vec![
                "properties[l].x-kubernetes-list-map-keys: Forbidden: must be empty if x-kubernetes-list-type is not map",
            ],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}}}),
            vec![
                "properties[l].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set",
            ],
        ),
        (
            json!({"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}),
            vec![
                r#"properties[n].default: Invalid value: "string": properties[n].default in body must be of type integer: "string""#,
            ],
        ),
        (
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.a >"}]}),
            vec![
                "x-kubernetes-validations[0].rule: Invalid value: \"self.a >\": compilation failed: ",
            ],
        ),
        (
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.noSuchFunction()"}]}),
            vec![
                r#"x-kubernetes-validations[0].rule: Invalid value: "self.noSuchFunction()": compilation failed: undeclared reference to 'noSuchFunction'"#,
            ],
        ),
    ];
    for (s, want) in cases {
        let got = parse_errors(s.clone());
        assert_eq!(got.len(), want.len(), "{s}: {got:?}");
        for (g, w) in got.iter().zip(&want) {
            assert!(g.starts_with(w), "{s}:\n got {g}\nwant {w}");
        }
    }
    // Paths under a prefix, and as a document path.
    let errs = Schema::parse_at(
        &json!({"type": "object", "properties": {"size": {"type": "strin"}}}),
        &FieldPath::new("spec.versions")
            .index(0)
            .child("schema")
            .child("openAPIV3Schema"),
    )
    .unwrap_err();
    assert_eq!(
        errs[0].path.to_string(),
        "spec.versions[0].schema.openAPIV3Schema.properties[size].type"
    );
    assert_eq!(
        errs[0].path.to_document_path(),
        "spec.versions[0].schema.openAPIV3Schema.properties.size.type"
    );
}

#[test]
fn int_or_string_any_of_is_structural() {
    schema(json!({
        "type": "object",
        "properties": {"port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}}
    }));
}

// ---------------------------------------------------------------------------------------
// real-world CRDs
// ---------------------------------------------------------------------------------------

use kapi_testing::{testdata_dir, yaml_documents};

#[test]
fn every_testdata_crd_schema_parses() {
    let dir = testdata_dir().join("crds");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "testdata CRDs missing at {} (set KAPI_TESTDATA): {e}",
            dir.display()
        )
    });
    let mut files: Vec<PathBuf> = entries.map(|e| e.expect("dir entry").path()).collect();
    files.retain(|p| p.extension().is_some_and(|x| x == "yaml"));
    files.sort();
    assert!(
        files.len() >= 14,
        "expected the 14 testdata CRDs in {}",
        dir.display()
    );
    let mut schemas = 0;
    let mut failures = Vec::new();
    for file in &files {
        let crd = yaml_documents(file).remove(0);
        let versions = crd["spec"]["versions"].as_array().expect("spec.versions");
        for (i, version) in versions.iter().enumerate() {
            let at = FieldPath::new("spec.versions")
                .index(i)
                .child("schema")
                .child("openAPIV3Schema");
            let Some(v) = version.pointer("/schema/openAPIV3Schema") else {
                continue;
            };
            schemas += 1;
            match Schema::parse_at(v, &at) {
                Ok(s) => {
                    // Its rules pass the checks kube makes when the CRD is written.
                    let checked = s.check_rules(&at);
                    if !checked.is_empty() {
                        failures.push(format!("{}: {:?}", file.display(), messages(&checked)));
                    }
                    // A minimal object passes through the whole pipeline without panicking.
                    let mut obj = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": {}});
                    s.prune(&mut obj);
                    s.apply_defaults(&mut obj);
                    let _ = s.validate(&obj, &FieldPath::root());
                    let _ = s.validate_update(&obj, &obj, &FieldPath::root());
                }
                Err(errs) => failures.push(format!("{}: {:?}", file.display(), messages(&errs))),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(schemas >= 20, "only {schemas} schemas found");
}

#[test]
fn gateway_class_controller_name_is_immutable() {
    let file = testdata_dir().join("crds/gateway-api-gatewayclass.yaml");
    let crd = yaml_documents(&file).remove(0);
    let v = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
    let s = schema(v);
    let old = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "a"},
        "spec": {"controllerName": "example.com/a"}});
    let mut new = old.clone();
    new["spec"]["controllerName"] = json!("example.com/b");
    let errs = messages(&s.validate_update(&new, &old, &FieldPath::root()));
    assert_eq!(
        errs,
        vec![r#"spec.controllerName: Invalid value: "string": Value is immutable"#]
    );
    assert!(s.validate_update(&old, &old, &FieldPath::root()).is_empty());
}
