//! Leaf fields, structs, nested lists and maps, ignored fields, key defaults and
//! schema changes.

use serde_json::json;

use super::Op;
use super::{scenario, schema};
use crate::managedfields::*;
use crate::schema::Schema;

fn leaf_schema() -> Schema {
    schema(json!({
        "type": "object",
        "properties": {"numeric": {"type": "number"}, "string": {"type": "string"}, "bool": {"type": "boolean"}}
    }))
}

#[test]
fn leaf_fields() {
    let s = leaf_schema();
    let cases = vec![
        (
            "apply twice: the second configuration is owned",
            vec![
                Op::Apply("default", json!({"numeric": 1, "string": "string"})),
                Op::Apply(
                    "default",
                    json!({"numeric": 2, "string": "string", "bool": false}),
                ),
            ],
            json!({"numeric": 2, "string": "string", "bool": false}),
            vec![(
                "default",
                json!({"f:bool": {}, "f:numeric": {}, "f:string": {}}),
            )],
        ),
        (
            "apply, update, apply: no overlap, no conflict",
            vec![
                Op::Apply("default", json!({"numeric": 1, "string": "string"})),
                Op::Update(
                    "controller",
                    json!({"numeric": 1, "string": "string", "bool": true}),
                ),
                Op::Apply("default", json!({"numeric": 2, "string": "string"})),
            ],
            json!({"numeric": 2, "string": "string", "bool": true}),
            vec![
                ("controller", json!({"f:bool": {}})),
                ("default", json!({"f:numeric": {}, "f:string": {}})),
            ],
        ),
        (
            "apply, update, apply: a changed field conflicts until forced",
            vec![
                Op::Apply("default", json!({"numeric": 1, "string": "string"})),
                Op::Update(
                    "controller",
                    json!({"numeric": 1, "string": "controller string", "bool": true}),
                ),
                Op::Conflicts(
                    "default",
                    json!({"numeric": 2, "string": "user string"}),
                    &[("controller", ".string")],
                ),
                Op::ForceApply("default", json!({"numeric": 2, "string": "user string"})),
            ],
            json!({"numeric": 2, "string": "user string", "bool": true}),
            vec![
                ("controller", json!({"f:bool": {}})),
                ("default", json!({"f:numeric": {}, "f:string": {}})),
            ],
        ),
        (
            "apply twice: a field no longer applied is removed",
            vec![
                Op::Apply(
                    "default",
                    json!({"numeric": 1, "string": "string", "bool": false}),
                ),
                Op::Apply("default", json!({"string": "new string"})),
            ],
            json!({"string": "new string"}),
            vec![("default", json!({"f:string": {}}))],
        ),
        (
            "an updater that took a field over keeps it when the applier omits it",
            vec![
                Op::Apply("default", json!({"numeric": 2})),
                Op::Update("controller", json!({"numeric": 1})),
                Op::Apply("default", json!({})),
            ],
            json!({"numeric": 1}),
            vec![("controller", json!({"f:numeric": {}}))],
        ),
        (
            "an update takes the applier's only field: the applier is dropped",
            vec![
                Op::Apply("default", json!({"string": "string"})),
                Op::Update("controller", json!({"string": "new string"})),
            ],
            json!({"string": "new string"}),
            vec![("controller", json!({"f:string": {}}))],
        ),
        (
            "applying nothing removes everything applied, and the manager",
            vec![
                Op::Apply("default", json!({"string": "string"})),
                Op::Apply("default", json!({})),
            ],
            json!(null),
            vec![],
        ),
    ];
    for (name, ops, object, managed) in cases {
        scenario(name, Updater::new(&s), ops, object, &managed);
    }
}

fn nested_schema() -> Schema {
    schema(json!({
        "type": "object",
        "properties": {
            "listOfLists": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "value": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
                    }
                }
            },
            "mapOfMaps": {
                "type": "object",
                "additionalProperties": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "struct": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": "number"},
                    "complex": {"type": "object", "properties": {"name": {"type": "string"}}}
                }
            }
        }
    }))
}

#[test]
fn nested_structs() {
    let s = nested_schema();
    let cases = vec![
        (
            "removing everything applied removes the object",
            vec![
                Op::Apply("default", json!({"struct": {"name": "a", "value": 1}})),
                Op::Apply("default", json!({})),
            ],
            json!(null),
            vec![],
        ),
        (
            "a struct applied as null: its fields go, the null stays owned",
            vec![
                Op::Apply("default", json!({"struct": {"name": "a"}})),
                Op::Apply("default", json!({"struct": null})),
            ],
            json!({"struct": null}),
            vec![("default", json!({"f:struct": {}}))],
        ),
        (
            "fields an updater added stay when the applier drops the struct",
            vec![
                Op::Apply("default", json!({"struct": {"name": "a"}})),
                Op::Update("controller", json!({"struct": {"name": "a", "value": 1}})),
                Op::Apply("default", json!({})),
            ],
            json!({"struct": {"value": 1}}),
            vec![("controller", json!({"f:struct": {"f:value": {}}}))],
        ),
        (
            "likewise when the struct is applied empty",
            vec![
                Op::Apply("default", json!({"struct": {"name": "a"}})),
                Op::Update("controller", json!({"struct": {"name": "a", "value": 1}})),
                Op::Apply("default", json!({"struct": {}})),
            ],
            json!({"struct": {"value": 1}}),
            vec![
                ("controller", json!({"f:struct": {"f:value": {}}})),
                ("default", json!({"f:struct": {}})),
            ],
        ),
        (
            "a field an updater took over is not pruned",
            vec![
                Op::Apply("default", json!({"struct": {"name": "a"}})),
                Op::Update("controller", json!({"struct": {"name": "b", "value": 1}})),
                Op::Apply("default", json!({"struct": null})),
            ],
            json!({"struct": {"name": "b", "value": 1}}),
            vec![
                (
                    "controller",
                    json!({"f:struct": {"f:name": {}, "f:value": {}}}),
                ),
                ("default", json!({"f:struct": {}})),
            ],
        ),
        (
            "a dropped nested struct goes whole when it was the applier's alone",
            vec![
                Op::Apply(
                    "one",
                    json!({"struct": {"name": "a", "complex": {"name": "b"}}}),
                ),
                Op::Apply("one", json!({"struct": {"name": "a"}})),
            ],
            json!({"struct": {"name": "a"}}),
            vec![("one", json!({"f:struct": {"f:name": {}}}))],
        ),
        (
            "a dropped nested struct another applier shares stays",
            vec![
                Op::Apply(
                    "one",
                    json!({"struct": {"name": "a", "complex": {"name": "b"}}}),
                ),
                Op::Apply("two", json!({"struct": {"complex": {"name": "b"}}})),
                Op::Apply("one", json!({"struct": {"name": "a"}})),
            ],
            json!({"struct": {"name": "a", "complex": {"name": "b"}}}),
            vec![
                ("one", json!({"f:struct": {"f:name": {}}})),
                ("two", json!({"f:struct": {"f:complex": {"f:name": {}}}})),
            ],
        ),
        (
            "a scalar an updater also set stays when the applier drops it",
            vec![
                Op::Update("updater", json!({"struct": {"name": "a", "value": 1}})),
                Op::Apply("applier", json!({"struct": {"name": "a", "value": 1}})),
                Op::Apply("applier", json!({"struct": {"name": "a"}})),
            ],
            json!({"struct": {"name": "a", "value": 1}}),
            vec![
                ("applier", json!({"f:struct": {"f:name": {}}})),
                (
                    "updater",
                    json!({"f:struct": {".": {}, "f:name": {}, "f:value": {}}}),
                ),
            ],
        ),
    ];
    for (name, ops, object, managed) in cases {
        scenario(name, Updater::new(&s), ops, object, &managed);
    }
}

#[test]
fn nested_lists_and_maps() {
    let s = nested_schema();
    let k = |n: &str| format!("k:{{\"name\":\"{n}\"}}");
    let v = |x: &str| format!("v:\"{x}\"");
    let mut b_two = serde_json::Map::new();
    b_two.insert(
        k("b"),
        json!({".": {}, "f:name": {}, "f:value": {v("d"): {}}}),
    );
    let cases = vec![
        (
            "an item another applier owns stays; values only the dropper owned go",
            vec![
                Op::Apply(
                    "apply-one",
                    json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c"]}]}),
                ),
                Op::Apply(
                    "apply-two",
                    json!({"listOfLists": [{"name": "b", "value": ["d"]}]}),
                ),
                Op::Update(
                    "controller",
                    json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c", "d", "e"]}]}),
                ),
                Op::Apply("apply-one", json!({"listOfLists": [{"name": "a"}]})),
            ],
            json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["d", "e"]}]}),
            vec![
                (
                    "apply-one",
                    json!({"f:listOfLists": {k("a"): {".": {}, "f:name": {}}}}),
                ),
                ("apply-two", json!({"f:listOfLists": b_two})),
                (
                    "controller",
                    json!({"f:listOfLists": {k("b"): {"f:value": {v("e"): {}}}}}),
                ),
            ],
        ),
        (
            "an item only the dropper owned goes with what updaters added inside it",
            vec![
                Op::Apply(
                    "apply-one",
                    json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c"]}]}),
                ),
                Op::Apply(
                    "apply-two",
                    json!({"listOfLists": [{"name": "a", "value": ["b"]}]}),
                ),
                Op::Update(
                    "controller",
                    json!({"listOfLists": [{"name": "a", "value": ["b"]}, {"name": "b", "value": ["c", "d"]}]}),
                ),
                Op::Apply("apply-one", json!({"listOfLists": [{"name": "a"}]})),
            ],
            json!({"listOfLists": [{"name": "a", "value": ["b"]}]}),
            vec![
                (
                    "apply-one",
                    json!({"f:listOfLists": {k("a"): {".": {}, "f:name": {}}}}),
                ),
                (
                    "apply-two",
                    json!({"f:listOfLists": {k("a"): {".": {}, "f:name": {}, "f:value": {v("b"): {}}}}}),
                ),
            ],
        ),
        (
            "map keys are owned one by one",
            vec![
                Op::Apply(
                    "one",
                    json!({"mapOfMaps": {"a": {"x": "1"}, "b": {"y": "2"}}}),
                ),
                Op::Apply("two", json!({"mapOfMaps": {"a": {"z": "3"}}})),
                Op::Apply("one", json!({"mapOfMaps": {"b": {"y": "2"}}})),
            ],
            json!({"mapOfMaps": {"a": {"z": "3"}, "b": {"y": "2"}}}),
            vec![
                ("one", json!({"f:mapOfMaps": {"f:b": {".": {}, "f:y": {}}}})),
                ("two", json!({"f:mapOfMaps": {"f:a": {".": {}, "f:z": {}}}})),
            ],
        ),
    ];
    for (name, ops, object, managed) in cases {
        scenario(name, Updater::new(&s), ops, object, &managed);
    }
}

#[test]
fn ignored_fields_are_not_owned() {
    let s = nested_schema();
    let ignored = FieldSet::from_paths([vec![
        PathElement::field("struct"),
        PathElement::field("value"),
    ]]);
    scenario(
        "updates and applies own nothing of ignored fields",
        Updater::new(&s).ignoring(ignored.clone()),
        vec![
            Op::Update("updater", json!({"struct": {"name": "a", "value": 1}})),
            Op::Apply("applier", json!({"struct": {"value": 2}})),
        ],
        json!({"struct": {"name": "a", "value": 2}}),
        &[("updater", json!({"f:struct": {".": {}, "f:name": {}}}))],
    );
}

#[test]
fn key_defaults_and_schema_changes() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port", "protocol"],
                "items": {
                    "type": "object",
                    "required": ["port"],
                    "properties": {
                        "port": {"type": "integer"},
                        "protocol": {"type": "string", "default": "TCP"},
                        "name": {"type": "string"}
                    }
                }
            }
        }
    }));
    let tcp = "k:{\"port\":80,\"protocol\":\"TCP\"}";
    scenario(
        "an item without its defaulted key matches the item with the default",
        Updater::new(&s),
        vec![
            Op::Apply("one", json!({"ports": [{"port": 80, "name": "http"}]})),
            Op::Conflicts(
                "two",
                json!({"ports": [{"port": 80, "protocol": "TCP", "name": "web"}]}),
                &[("one", r#".ports[port=80,protocol="TCP"].name"#)],
            ),
            Op::Apply("two", json!({"ports": [{"port": 80, "protocol": "TCP"}]})),
        ],
        json!({"ports": [{"port": 80, "name": "http", "protocol": "TCP"}]}),
        &[
            (
                "one",
                json!({"f:ports": {tcp: {".": {}, "f:name": {}, "f:port": {}}}}),
            ),
            (
                "two",
                json!({"f:ports": {tcp: {".": {}, "f:port": {}, "f:protocol": {}}}}),
            ),
        ],
    );

    // A map that became atomic: its owner keeps it whole, and its keys go with it.
    let granular = schema(json!({
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}
    }));
    let atomic = schema(json!({
        "type": "object",
        "properties": {"m": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}}}
    }));
    let live = json!({"m": {"a": "1", "b": "2"}});
    let managers = scenario(
        "before the schema change",
        Updater::new(&granular),
        vec![
            Op::Apply("one", json!({"m": {"a": "1"}})),
            Op::Apply("two", json!({"m": {"b": "2"}})),
        ],
        live.clone(),
        &[
            ("one", json!({"f:m": {"f:a": {}}})),
            ("two", json!({"f:m": {"f:b": {}}})),
        ],
    );
    let (obj, managers) = Updater::new(&atomic)
        .apply(
            &live,
            &json!({"m": {"a": "1"}}),
            &managers,
            "one",
            "v1",
            true,
        )
        .unwrap();
    assert_eq!(obj, json!({"m": {"a": "1"}}));
    assert_eq!(fieldsv1::encode(&managers["one"].set), r#"{"f:m":{}}"#);
    assert!(!managers.contains_key("two"), "{managers:?}");
}
