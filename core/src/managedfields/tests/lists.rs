//! Sets, keyed lists, atomic lists and deduced values.

use serde_json::{Value, json};

use super::Op;
use super::{scenario, schema};
use crate::managedfields::*;
use crate::schema::Schema;

fn set_schema() -> Schema {
    schema(json!({
        "type": "object",
        "properties": {"list": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}
    }))
}

#[test]
fn set_items() {
    let s = set_schema();
    let v = |x: &str| format!("v:\"{x}\"");
    let cases = vec![
        (
            "values applied with the same value are shared, new ones the updater's",
            vec![
                Op::Apply("default", json!({"list": ["a", "c"]})),
                Op::Update("controller", json!({"list": ["a", "b", "c", "d"]})),
                Op::Apply("default", json!({"list": ["a", "b", "c"]})),
            ],
            json!({"list": ["a", "b", "c", "d"]}),
            vec![
                ("controller", json!({"f:list": {v("b"): {}, v("d"): {}}})),
                (
                    "default",
                    json!({"f:list": {v("a"): {}, v("b"): {}, v("c"): {}}}),
                ),
            ],
        ),
        (
            "the configuration's order wins",
            vec![
                Op::Apply("default", json!({"list": ["a", "b", "c", "d"]})),
                Op::Apply("default", json!({"list": ["a", "d", "c", "b"]})),
            ],
            json!({"list": ["a", "d", "c", "b"]}),
            vec![(
                "default",
                json!({"f:list": {v("a"): {}, v("b"): {}, v("c"): {}, v("d"): {}}}),
            )],
        ),
        (
            "an update's reorder is not a conflict, and a later apply reorders back",
            vec![
                Op::Apply("default", json!({"list": ["a", "b", "c", "d"]})),
                Op::Update("controller", json!({"list": ["a", "d", "c", "b"]})),
                Op::Apply("default", json!({"list": ["a", "b", "c", "d"]})),
            ],
            json!({"list": ["a", "b", "c", "d"]}),
            vec![(
                "default",
                json!({"f:list": {v("a"): {}, v("b"): {}, v("c"): {}, v("d"): {}}}),
            )],
        ),
        (
            "a value no longer applied is removed",
            vec![
                Op::Apply("default", json!({"list": ["a", "b"]})),
                Op::Apply("default", json!({"list": ["b"]})),
            ],
            json!({"list": ["b"]}),
            vec![("default", json!({"f:list": {v("b"): {}}}))],
        ),
        (
            "an empty list owns nothing: applying it removes what was applied",
            vec![
                Op::Apply("default", json!({"list": ["b"]})),
                Op::Apply("default", json!({"list": []})),
            ],
            json!(null),
            vec![],
        ),
        (
            "a null list is owned itself; the values go and leave null",
            vec![
                Op::Apply("default", json!({"list": ["b"]})),
                Op::Apply("default", json!({"list": null})),
            ],
            json!({"list": null}),
            vec![("default", json!({"f:list": {}}))],
        ),
        (
            "two appliers: only the dropped value of the one dropping it goes",
            vec![
                Op::Apply("one", json!({"list": ["a", "b"]})),
                Op::Apply("two", json!({"list": ["b", "c"]})),
                Op::Apply("one", json!({"list": ["x"]})),
            ],
            json!({"list": ["b", "c", "x"]}),
            vec![
                ("one", json!({"f:list": {v("x"): {}}})),
                ("two", json!({"f:list": {v("b"): {}, v("c"): {}}})),
            ],
        ),
    ];
    for (name, ops, object, managed) in cases {
        scenario(name, Updater::new(&s), ops, object, &managed);
    }
}

fn keyed_schema() -> Schema {
    schema(json!({
        "type": "object",
        "properties": {
            "list": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}, "value": {"type": "integer"}}
                }
            },
            "atomic": {"type": "array", "items": {"type": "string"}}
        }
    }))
}

#[test]
fn keyed_items_and_atomic_lists() {
    let s = keyed_schema();
    let item = |n: &str, fields: Value| (format!("k:{{\"name\":\"{n}\"}}"), fields);
    let owned = |items: Vec<(String, Value)>| json!({"f:list": items.into_iter().collect::<serde_json::Map<_, _>>()});
    let named = || json!({".": {}, "f:name": {}});
    let cases = vec![
        (
            "each applier owns its items; dropping one removes only it",
            vec![
                Op::Apply("apply-one", json!({"list": [{"name": "a"}, {"name": "b"}]})),
                Op::Apply("apply-two", json!({"list": [{"name": "c"}]})),
                Op::Apply("apply-one", json!({"list": [{"name": "a"}]})),
            ],
            json!({"list": [{"name": "a"}, {"name": "c"}]}),
            vec![
                ("apply-one", owned(vec![item("a", named())])),
                ("apply-two", owned(vec![item("c", named())])),
            ],
        ),
        (
            "an item two appliers applied stays when one drops it",
            vec![
                Op::Apply(
                    "apply-one",
                    json!({"list": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}),
                ),
                Op::Apply("apply-two", json!({"list": [{"name": "c"}, {"name": "d"}]})),
                Op::Apply("apply-one", json!({"list": [{"name": "a"}]})),
            ],
            json!({"list": [{"name": "a"}, {"name": "c"}, {"name": "d"}]}),
            vec![
                ("apply-one", owned(vec![item("a", named())])),
                (
                    "apply-two",
                    owned(vec![item("c", named()), item("d", named())]),
                ),
            ],
        ),
        (
            "the same value applied twice is shared ownership",
            vec![
                Op::Apply("apply-one", json!({"list": [{"name": "a", "value": 0}]})),
                Op::Apply("apply-two", json!({"list": [{"name": "a", "value": 0}]})),
            ],
            json!({"list": [{"name": "a", "value": 0}]}),
            vec![
                (
                    "apply-one",
                    owned(vec![item(
                        "a",
                        json!({".": {}, "f:name": {}, "f:value": {}}),
                    )]),
                ),
                (
                    "apply-two",
                    owned(vec![item(
                        "a",
                        json!({".": {}, "f:name": {}, "f:value": {}}),
                    )]),
                ),
            ],
        ),
        (
            "a different value conflicts and changes nothing",
            vec![
                Op::Apply("apply-one", json!({"list": [{"name": "a", "value": 0}]})),
                Op::Conflicts(
                    "apply-two",
                    json!({"list": [{"name": "a", "value": 1}]}),
                    &[("apply-one", r#".list[name="a"].value"#)],
                ),
            ],
            json!({"list": [{"name": "a", "value": 0}]}),
            vec![(
                "apply-one",
                owned(vec![item(
                    "a",
                    json!({".": {}, "f:name": {}, "f:value": {}}),
                )]),
            )],
        ),
        (
            "force moves the field to the applier; the item stays shared",
            vec![
                Op::Apply("apply-one", json!({"list": [{"name": "a", "value": 0}]})),
                Op::ForceApply("apply-two", json!({"list": [{"name": "a", "value": 1}]})),
            ],
            json!({"list": [{"name": "a", "value": 1}]}),
            vec![
                ("apply-one", owned(vec![item("a", named())])),
                (
                    "apply-two",
                    owned(vec![item(
                        "a",
                        json!({".": {}, "f:name": {}, "f:value": {}}),
                    )]),
                ),
            ],
        ),
        (
            "an atomic list is owned and replaced whole",
            vec![
                Op::Apply("default", json!({"atomic": ["a", "c"]})),
                Op::Apply("default", json!({"atomic": ["a", "d", "c", "b"]})),
            ],
            json!({"atomic": ["a", "d", "c", "b"]}),
            vec![("default", json!({"f:atomic": {}}))],
        ),
        (
            "an atomic list an updater changed conflicts whole; force takes it back",
            vec![
                Op::Apply("default", json!({"atomic": ["a", "c"]})),
                Op::Update("controller", json!({"atomic": ["a", "b", "c", "d"]})),
                Op::Conflicts(
                    "default",
                    json!({"atomic": ["a", "b", "c"]}),
                    &[("controller", ".atomic")],
                ),
                Op::ForceApply("default", json!({"atomic": ["a", "b", "c"]})),
            ],
            json!({"atomic": ["a", "b", "c"]}),
            vec![("default", json!({"f:atomic": {}}))],
        ),
    ];
    for (name, ops, object, managed) in cases {
        scenario(name, Updater::new(&s), ops, object, &managed);
    }
}

#[test]
fn deduced_objects() {
    let s = schema(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    let cases = vec![
        (
            "deduced lists are atomic",
            vec![
                Op::Apply("default", json!({"list": ["a", "c"]})),
                Op::Update("controller", json!({"list": ["a", "b", "c", "d"]})),
                Op::ForceApply("default", json!({"list": ["a", "b", "c"]})),
            ],
            json!({"list": ["a", "b", "c"]}),
            vec![("default", json!({"f:list": {}}))],
        ),
        (
            "deduced maps are granular: dropping a key drops what others added below it",
            vec![
                Op::Apply("apply-one", json!({"a": {"b": null}, "c": {"d": null}})),
                Op::Apply("apply-two", json!({"a": null, "c": {"d": null}})),
                Op::Update(
                    "controller-one",
                    json!({"a": {"b": {"c": null}}, "c": {"d": {"e": null}}}),
                ),
                Op::Update(
                    "controller-two",
                    json!({"a": {"b": {"c": {"d": null}}}, "c": {"d": {"e": {"f": null}}}}),
                ),
                Op::Update(
                    "controller-one",
                    json!({"a": {"b": {"c": {"d": {"e": null}}}}, "c": {"d": {"e": {"f": {"g": null}}}}}),
                ),
                Op::Apply("apply-one", json!({})),
            ],
            json!({"a": null, "c": {"d": {"e": {"f": {"g": null}}}}}),
            vec![
                ("apply-two", json!({"f:a": {}, "f:c": {".": {}, "f:d": {}}})),
                (
                    "controller-one",
                    json!({"f:c": {"f:d": {"f:e": {".": {}, "f:f": {"f:g": {}}}}}}),
                ),
                (
                    "controller-two",
                    json!({"f:c": {"f:d": {"f:e": {"f:f": {}}}}}),
                ),
            ],
        ),
    ];
    for (name, ops, object, managed) in cases {
        scenario(name, Updater::new(&s), ops, object, &managed);
    }
}
