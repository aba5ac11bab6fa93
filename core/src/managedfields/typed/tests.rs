//! Table tests of the typed walks, restating SMD's `typed` test tables
//! (`toset_test.go`, `comparison_test.go`, `merge_test.go`, `remove_test.go`,
//! `reconcile_schema_test.go`) against kapi schemas.

use serde_json::{Value, json};

use super::*;
use crate::managedfields::fieldsv1;

/// A field set written as kube's `fieldsV1`.
fn fs(doc: Value) -> FieldSet {
    fieldsv1::decode(&doc).expect("test field set")
}

fn schema(doc: Value) -> Schema {
    Schema::parse(&doc).expect("test schema")
}

/// Scalars, sets, atomic and granular maps, atomic and keyed lists.
fn grab_bag() -> Schema {
    schema(json!({
        "type": "object",
        "properties": {
            "numeric": {"type": "number"},
            "string": {"type": "string"},
            "bool": {"type": "boolean"},
            "setStr": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "setNum": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}},
            "color": {
                "type": "object",
                "x-kubernetes-map-type": "atomic",
                "properties": {"R": {"type": "integer"}, "G": {"type": "integer"}, "B": {"type": "integer"}}
            },
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "atomicMap": {
                "type": "object",
                "x-kubernetes-map-type": "atomic",
                "additionalProperties": {"type": "string"}
            },
            "args": {"type": "array", "items": {"type": "string"}},
            "list": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["key", "id"],
                "items": {
                    "type": "object",
                    "required": ["key", "id"],
                    "properties": {
                        "key": {"type": "string"},
                        "id": {"type": "integer"},
                        "value": {"type": "object", "additionalProperties": {"type": "string"}},
                        "bv": {"type": "boolean"},
                        "nv": {"type": "integer"}
                    }
                }
            },
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                "items": {
                    "type": "object",
                    "required": ["containerPort"],
                    "properties": {
                        "containerPort": {"type": "integer"},
                        "protocol": {"type": "string", "default": "TCP"},
                        "name": {"type": "string"}
                    }
                }
            },
            "containers": {
                "type": "array",
                "x-kubernetes-patch-strategy": "merge",
                "x-kubernetes-patch-merge-key": "name",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "image": {"type": "string"}}
                }
            },
            "finalizers": {
                "type": "array",
                "x-kubernetes-patch-strategy": "merge",
                "items": {"type": "string"}
            },
            "retained": {
                "type": "array",
                "x-kubernetes-patch-strategy": "retainKeys",
                "x-kubernetes-patch-merge-key": "name",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}
            },
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "intOrString": {"x-kubernetes-int-or-string": true}
        }
    }))
}

#[test]
fn field_sets_of_leaves_and_lists() {
    let s = grab_bag();
    let cases = [
        (json!({"numeric": 1}), json!({"f:numeric": {}})),
        (
            json!({"numeric": 3.5, "string": "a", "bool": false}),
            json!({"f:bool": {}, "f:numeric": {}, "f:string": {}}),
        ),
        (json!({"numeric": null}), json!({"f:numeric": {}})),
        (
            json!({"setStr": ["a", "b", "c"]}),
            json!({"f:setStr": {"v:\"a\"": {}, "v:\"b\"": {}, "v:\"c\"": {}}}),
        ),
        // Repeated values are one member each.
        (
            json!({"setStr": ["a", "b", "a", "a"]}),
            json!({"f:setStr": {"v:\"a\"": {}, "v:\"b\"": {}}}),
        ),
        (
            json!({"setNum": [1, 2, 3.5]}),
            json!({"f:setNum": {"v:1": {}, "v:2": {}, "v:3.5": {}}}),
        ),
        // An empty granular list has no members; the list itself is not one either.
        (json!({"setStr": []}), json!({})),
        // Atomic maps and lists are members as a whole, whatever they hold.
        (json!({"color": {}}), json!({"f:color": {}})),
        (json!({"color": null}), json!({"f:color": {}})),
        (json!({"color": {"R": 255}}), json!({"f:color": {}})),
        (json!({"atomicMap": {"x": "y"}}), json!({"f:atomicMap": {}})),
        (json!({"args": []}), json!({"f:args": {}})),
        (json!({"args": null}), json!({"f:args": {}})),
        (json!({"args": ["a", "a"]}), json!({"f:args": {}})),
        (
            json!({"retained": [{"name": "a"}]}),
            json!({"f:retained": {}}),
        ),
        // Granular maps: keys are members (not declared fields), empty maps too.
        (
            json!({"labels": {"a": "1", "b": "2"}}),
            json!({"f:labels": {"f:a": {}, "f:b": {}}}),
        ),
        (json!({"labels": {}}), json!({"f:labels": {}})),
        (json!({"labels": null}), json!({"f:labels": {}})),
    ];
    for (obj, want) in cases {
        assert_eq!(field_set(&obj, &s).unwrap(), fs(want), "{obj}");
    }
}

#[test]
fn field_sets_of_keyed_lists() {
    let s = grab_bag();
    let k = |key: &str, id: i64| {
        fieldsv1::element_key(&PathElement::key([("key", json!(key)), ("id", json!(id))]))
    };
    let cases = [
        (json!({"list": []}), json!({})),
        (
            json!({"list": [{"key": "a", "id": 1, "value": {"a": "x"}}]}),
            json!({"f:list": {k("a", 1): {".": {}, "f:id": {}, "f:key": {}, "f:value": {"f:a": {}}}}}),
        ),
        // A repeated key is one member, its items not walked; other items are.
        (
            json!({"list": [{"key": "a", "id": 1, "nv": 2}, {"key": "a", "id": 2, "nv": 3}, {"key": "b", "id": 1}, {"key": "a", "id": 2, "bv": true}]}),
            json!({"f:list": {
                k("a", 1): {".": {}, "f:id": {}, "f:key": {}, "f:nv": {}},
                k("a", 2): {},
                k("b", 1): {".": {}, "f:id": {}, "f:key": {}},
            }}),
        ),
        // A missing key takes its default; patch merge keys key a list too.
        (
            json!({"ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
                   "containers": [{"name": "c", "image": "i"}],
                   "finalizers": ["x"]}),
            json!({
                "f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}},
                "f:finalizers": {"v:\"x\"": {}},
                "f:ports": {
                    "k:{\"containerPort\":53,\"protocol\":\"UDP\"}": {".": {}, "f:containerPort": {}, "f:protocol": {}},
                    "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}},
                },
            }),
        ),
        // A key left out without a default is left out of the element.
        (
            json!({"list": [{"key": "a"}]}),
            json!({"f:list": {"k:{\"key\":\"a\"}": {".": {}, "f:key": {}}}}),
        ),
    ];
    for (obj, want) in cases {
        assert_eq!(field_set(&obj, &s).unwrap(), fs(want), "{obj}");
    }
}

#[test]
fn field_sets_of_deduced_values() {
    let s = grab_bag();
    let cases = [
        // Deduced: maps are granular, lists atomic, every key a member.
        (
            json!({"free": {"a": 1, "b": {"c": [1, 2]}, "d": {}}}),
            json!({"f:free": {"f:a": {}, "f:b": {".": {}, "f:c": {}}, "f:d": {}}}),
        ),
        (json!({"intOrString": 1}), json!({"f:intOrString": {}})),
        (json!({"intOrString": "50%"}), json!({"f:intOrString": {}})),
    ];
    for (obj, want) in cases {
        assert_eq!(field_set(&obj, &s).unwrap(), fs(want), "{obj}");
    }
    // A preserve-unknown struct: declared fields typed (implied by their leaves),
    // the rest deduced, and kube carries preserve-unknown down to nested structs.
    let s = schema(json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
        }
    }));
    let obj = json!({"spec": {"replicas": 1, "extra": {"x": 1}}, "other": [1]});
    let want =
        json!({"f:other": {}, "f:spec": {"f:extra": {".": {}, "f:x": {}}, "f:replicas": {}}});
    assert_eq!(field_set(&obj, &s).unwrap(), fs(want));
}

#[test]
fn field_sets_of_resources() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": {
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true
                    }
                }
            }
        }
    }));
    let obj = json!({
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {
            "name": "n",
            "labels": {"a": "b"},
            "finalizers": ["f"],
            "ownerReferences": [{"uid": "u", "name": "o", "kind": "K", "apiVersion": "v1"}]
        },
        "spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"annotations": {"x": "y"}}, "spec": {"a": 1}}}
    });
    let want = json!({
        "f:apiVersion": {},
        "f:kind": {},
        "f:spec": {"f:template": {
            "f:apiVersion": {},
            "f:kind": {},
            "f:metadata": {"f:annotations": {"f:x": {}}},
            "f:spec": {".": {}, "f:a": {}},
        }},
    });
    let got = field_set(&obj, ObjectType::resource(&s)).unwrap();
    let want = fs(want);
    let (spec, meta) = (PathElement::field("spec"), PathElement::field("metadata"));
    assert_eq!(got.with_prefix(&spec), want.with_prefix(&spec));
    assert!(got.has(&[PathElement::field("apiVersion")]));
    // As a resource root, metadata is ObjectMeta: its fields are implied by leaves.
    assert_eq!(
        fieldsv1::encode(got.with_prefix(&meta).unwrap()),
        r#"{"f:finalizers":{"v:\"f\"":{}},"f:labels":{"f:a":{}},"f:name":{},"f:ownerReferences":{"k:{\"uid\":\"u\"}":{}}}"#
    );
    // Typed by the schema alone, the root declares no apiVersion; metadata is a
    // property-less object, a map of deduced values whose keys are members.
    let err = field_set(&obj, &s).unwrap_err();
    assert_eq!(err.to_string(), ".apiVersion: field not declared in schema");
    let plain = field_set(&json!({"metadata": obj["metadata"].clone()}), &s).unwrap();
    assert!(plain.has(&[meta.clone(), PathElement::field("labels")]));
    assert!(!got.has(&[meta, PathElement::field("labels")]));
}

#[test]
fn rejects_invalid_objects() {
    let s = grab_bag();
    let cases = [
        (
            json!({"numeric": "1"}),
            ".numeric: expected numeric (int or float), got string",
        ),
        (json!({"string": 1}), ".string: expected string, got int64"),
        (
            json!({"labels": []}),
            ".labels: expected map, got []interface {}",
        ),
        (
            json!({"labels": {"a": 1}}),
            ".labels.a: expected string, got int64",
        ),
        (json!({"setStr": "a"}), ".setStr: expected list, got string"),
        (json!({"nope": 1}), ".nope: field not declared in schema"),
        (
            json!({"color": {"X": 1}}),
            ".color.X: field not declared in schema",
        ),
        (json!({"args": [1]}), ".args[0]: expected string, got int64"),
        (
            json!({"setStr": [null]}),
            ".setStr: element 0: associative list without keys has an element that's an explicit null",
        ),
        (
            json!({"setStr": [{}]}),
            ".setStr: element 0: associative list without keys has an element that's a map type",
        ),
        (
            json!({"list": [1]}),
            ".list: element 0: associative list with keys may not have non-map elements",
        ),
        (
            json!({"list": [{"nv": 1}]}),
            r#".list: element 0: associative list with keys has an element that omits all key fields ["key" "id"] (and doesn't have default values for any key fields)"#,
        ),
        (
            json!({"list": [{"key": "a", "id": 1, "nv": "x"}]}),
            r#".list[id=1,key="a"].nv: expected numeric (int or float), got string"#,
        ),
        (json!([]), "expected map, got []interface {}"),
    ];
    for (obj, want) in cases {
        let err = field_set(&obj, &s).unwrap_err();
        assert_eq!(err.to_string(), want, "{obj}");
    }
    let dup = json!({"list": [{"key": "a", "id": 1}, {"key": "a", "id": 1}]});
    assert!(validate(&dup, &s, Duplicates::Allow).is_ok());
    assert_eq!(
        validate(&dup, &s, Duplicates::Reject)
            .unwrap_err()
            .to_string(),
        r#".list: duplicate entries for key [id=1,key="a"]"#
    );
}

#[test]
fn compares_as_smd() {
    let s = grab_bag();
    // (old, new, added, modified, removed)
    let cases = [
        (
            json!({"numeric": 1}),
            json!({"numeric": 1.0}),
            json!({}),
            json!({}),
            json!({}),
        ),
        (
            json!({"numeric": 1}),
            json!({"numeric": 2}),
            json!({}),
            json!({"f:numeric": {}}),
            json!({}),
        ),
        (
            json!({}),
            json!({"string": "a"}),
            json!({"f:string": {}}),
            json!({}),
            json!({}),
        ),
        (
            json!({"string": "a"}),
            json!({}),
            json!({}),
            json!({}),
            json!({"f:string": {}}),
        ),
        // A non-leaf present on one side only is itself added or removed.
        (
            json!({}),
            json!({"labels": {"a": "1"}}),
            json!({"f:labels": {".": {}, "f:a": {}}}),
            json!({}),
            json!({}),
        ),
        (
            json!({"labels": {"a": "1"}}),
            json!({"labels": {"b": "1"}}),
            json!({"f:labels": {"f:b": {}}}),
            json!({}),
            json!({"f:labels": {"f:a": {}}}),
        ),
        // Empty maps and lists are leaves: {} → null is a modification.
        (
            json!({"labels": {}}),
            json!({"labels": null}),
            json!({}),
            json!({"f:labels": {}}),
            json!({}),
        ),
        (
            json!({"labels": {}}),
            json!({"labels": {}}),
            json!({}),
            json!({}),
            json!({}),
        ),
        (
            json!({}),
            json!({"setStr": []}),
            json!({"f:setStr": {}}),
            json!({}),
            json!({}),
        ),
        // Atomic values change as a whole.
        (
            json!({"args": ["a"]}),
            json!({"args": ["a", "b"]}),
            json!({}),
            json!({"f:args": {}}),
            json!({}),
        ),
        (
            json!({"color": {"R": 1}}),
            json!({"color": {"R": 2}}),
            json!({}),
            json!({"f:color": {}}),
            json!({}),
        ),
        (
            json!({"setStr": ["a", "b"]}),
            json!({"setStr": ["b", "c"]}),
            json!({"f:setStr": {"v:\"c\"": {}}}),
            json!({}),
            json!({"f:setStr": {"v:\"a\"": {}}}),
        ),
        (
            json!({"containers": [{"name": "a", "image": "1"}]}),
            json!({"containers": [{"name": "a", "image": "2"}, {"name": "b"}]}),
            json!({"f:containers": {"k:{\"name\":\"b\"}": {".": {}, "f:name": {}}}}),
            json!({"f:containers": {"k:{\"name\":\"a\"}": {"f:image": {}}}}),
            json!({}),
        ),
        // Deduced values may change kind: walked as both.
        (
            json!({"free": {"x": "s"}}),
            json!({"free": {"x": {"y": 1}}}),
            json!({"f:free": {"f:x": {"f:y": {}}}}),
            json!({"f:free": {"f:x": {}}}),
            json!({}),
        ),
    ];
    for (old, new, added, modified, removed) in cases {
        let got = compare(&old, &new, &s).unwrap();
        let want = Comparison {
            added: fs(added),
            modified: fs(modified),
            removed: fs(removed),
        };
        assert_eq!(got, want, "{old} → {new}");
    }
}

#[test]
fn compares_duplicates_as_smd() {
    let s = grab_bag();
    let a1 = "k:{\"id\":1,\"key\":\"a\"}";
    let dup = json!({"list": [{"key": "a", "id": 1, "nv": 1}, {"key": "a", "id": 1, "nv": 2}]});
    let single = json!({"list": [{"key": "a", "id": 1, "nv": 1}]});
    // Duplicates on both sides: one atomic item, modified if any copy changed.
    let other_dup =
        json!({"list": [{"key": "a", "id": 1, "nv": 1}, {"key": "a", "id": 1, "nv": 3}]});
    let got = compare(&dup, &other_dup, &s).unwrap();
    assert_eq!(got.modified, fs(json!({"f:list": {a1: {}}})));
    assert!(compare(&dup, &dup, &s).unwrap().is_same());
    // Duplicates gone: the key is removed, the single item walked as added.
    let got = compare(&dup, &single, &s).unwrap();
    assert_eq!(got.removed, fs(json!({"f:list": {a1: {}}})));
    assert_eq!(
        got.added,
        fs(json!({"f:list": {a1: {".": {}, "f:id": {}, "f:key": {}, "f:nv": {}}}}))
    );
    // New duplicates: the old single item walked as removed, the key added.
    let got = compare(&single, &dup, &s).unwrap();
    assert_eq!(got.added, fs(json!({"f:list": {a1: {}}})));
    assert_eq!(
        got.removed,
        fs(json!({"f:list": {a1: {".": {}, "f:id": {}, "f:key": {}, "f:nv": {}}}}))
    );
}

#[test]
fn merges_as_smd() {
    let s = grab_bag();
    let item = |key: &str, id: i64| json!({"key": key, "id": id});
    // (live, config, merged)
    let cases = [
        (
            json!({"numeric": 1, "string": "a"}),
            json!({"numeric": 2}),
            json!({"numeric": 2, "string": "a"}),
        ),
        (
            json!({"labels": {"a": "1"}}),
            json!({"labels": {"b": "2"}}),
            json!({"labels": {"a": "1", "b": "2"}}),
        ),
        // A null in the configuration replaces leaves only.
        (
            json!({"labels": {"a": "1"}}),
            json!({"labels": null}),
            json!({"labels": {"a": "1"}}),
        ),
        (
            json!({"string": "a"}),
            json!({"string": null}),
            json!({"string": null}),
        ),
        (
            json!({"labels": {}}),
            json!({"labels": null}),
            json!({"labels": null}),
        ),
        // Atomic values are replaced whole.
        (
            json!({"args": ["a", "b", "c"]}),
            json!({"args": []}),
            json!({"args": []}),
        ),
        (
            json!({"args": ["a", "a", "a"]}),
            json!({"args": null}),
            json!({"args": null}),
        ),
        (
            json!({"color": {"R": 1, "G": 2}}),
            json!({"color": {"B": 3}}),
            json!({"color": {"B": 3}}),
        ),
        // Sets are unioned, live order first.
        (
            json!({"setStr": ["b", "a"]}),
            json!({"setStr": ["c", "a"]}),
            json!({"setStr": ["b", "c", "a"]}),
        ),
        // Keyed lists item by item.
        (
            json!({"list": [{"key": "a", "id": 1, "value": {"x": "1"}}]}),
            json!({"list": [{"key": "a", "id": 1, "value": {"y": "2"}}]}),
            json!({"list": [{"key": "a", "id": 1, "value": {"x": "1", "y": "2"}}]}),
        ),
        (
            json!({"list": [item("a", 1), item("b", 1)]}),
            json!({"list": [item("a", 1), item("a", 2)]}),
            json!({"list": [item("a", 1), item("b", 1), item("a", 2)]}),
        ),
        (
            json!({"list": [item("b", 2)]}),
            json!({"list": [item("a", 1), item("b", 2), item("c", 3)]}),
            json!({"list": [item("a", 1), item("b", 2), item("c", 3)]}),
        ),
        // The configuration reorders shared items; live-only items keep their place.
        (
            json!({"list": [item("a", 1), item("b", 2), item("c", 3)]}),
            json!({"list": [item("c", 3), item("b", 2)]}),
            json!({"list": [item("a", 1), item("c", 3), item("b", 2)]}),
        ),
        (
            json!({"list": [item("a", 1), item("b", 2), item("c", 3)]}),
            json!({"list": [item("c", 3), item("a", 1)]}),
            json!({"list": [item("b", 2), item("c", 3), item("a", 1)]}),
        ),
        // A key the live list repeats is replaced by the configuration's item.
        (
            json!({"list": [{"key": "a", "id": 1, "bv": true}, item("b", 2), {"key": "a", "id": 1, "bv": false, "nv": 2}]}),
            json!({"list": [{"key": "a", "id": 1, "nv": 3}, item("c", 3), item("b", 2)]}),
            json!({"list": [{"key": "a", "id": 1, "nv": 3}, item("c", 3), item("b", 2)]}),
        ),
        (
            json!({"list": [{"key": "a", "id": 1, "nv": 1}, {"key": "a", "id": 1, "nv": 2}]}),
            json!({"list": []}),
            json!({"list": [{"key": "a", "id": 1, "nv": 1}, {"key": "a", "id": 1, "nv": 2}]}),
        ),
        // Onto nothing (a create).
        (
            json!(null),
            json!({"labels": {"a": "1"}}),
            json!({"labels": {"a": "1"}}),
        ),
    ];
    for (live, config, want) in cases {
        assert_eq!(
            merge(&live, &config, &s).unwrap(),
            want,
            "{live} ← {config}"
        );
    }
    let dup = json!({"list": [item("a", 1), item("a", 1)]});
    assert_eq!(
        merge(&json!({}), &dup, &s).unwrap_err().to_string(),
        r#".list: duplicate entries for key [id=1,key="a"]"#
    );
}

#[test]
fn removes_and_extracts_as_smd() {
    let s = grab_bag();
    let named = |n: &str| fieldsv1::element_key(&PathElement::key([("name", json!(n))]));
    let obj = json!({
        "string": "s",
        "setStr": ["a", "b", "c"],
        "args": ["x"],
        "labels": {"a": "1", "b": "2"},
        "containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]
    });
    // (set, removed, extracted)
    let cases = [
        (json!({}), obj.clone(), json!(null)),
        (
            json!({"f:setStr": {"v:\"a\"": {}}, "f:string": {}}),
            json!({"setStr": ["b", "c"], "args": ["x"], "labels": {"a": "1", "b": "2"},
                   "containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}),
            json!({"setStr": ["a"], "string": "s"}),
        ),
        // Removing the last values of a list or map leaves null, as SMD does.
        (
            json!({"f:setStr": {"v:\"a\"": {}, "v:\"b\"": {}, "v:\"c\"": {}}, "f:labels": {"f:a": {}, "f:b": {}}}),
            json!({"string": "s", "setStr": null, "args": ["x"], "labels": null,
                   "containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}),
            json!({"setStr": ["a", "b", "c"], "labels": {"a": "1", "b": "2"}}),
        ),
        (
            json!({"f:containers": {named("a"): {}}, "f:args": {}}),
            json!({"string": "s", "setStr": ["a", "b", "c"], "labels": {"a": "1", "b": "2"},
                   "containers": [{"name": "b", "image": "2"}]}),
            json!({"args": ["x"], "containers": [{"name": "a", "image": "1"}]}),
        ),
        (
            json!({"f:containers": {named("b"): {"f:image": {}}}}),
            json!({"string": "s", "setStr": ["a", "b", "c"], "args": ["x"], "labels": {"a": "1", "b": "2"},
                   "containers": [{"name": "a", "image": "1"}, {"name": "b"}]}),
            json!({"containers": [{"image": "2"}]}),
        ),
    ];
    for (set, removed, extracted) in cases {
        let set = fs(set);
        assert_eq!(remove(&obj, &set, &s), removed, "remove {set}");
        assert_eq!(extract(&obj, &set, &s), extracted, "extract {set}");
    }
    // Everything removed: the object is null.
    let all = field_set(&json!({"string": "s"}), &s).unwrap();
    assert_eq!(remove(&json!({"string": "s"}), &all, &s), json!(null));
}

#[test]
fn ensures_named_fields_are_members() {
    let s = grab_bag();
    let set = fs(json!({
        "f:labels": {"f:a": {}},
        "f:list": {"k:{\"id\":1,\"key\":\"a\"}": {"f:value": {"f:x": {}}}},
        "f:free": {"f:y": {"f:z": {}}},
    }));
    let want = fs(json!({
        "f:labels": {".": {}, "f:a": {}},
        "f:list": {".": {}, "k:{\"id\":1,\"key\":\"a\"}": {"f:value": {".": {}, "f:x": {}}}},
        "f:free": {".": {}, "f:y": {"f:z": {}}},
    }));
    assert_eq!(ensure_named_fields_are_members(&set, &s), want);
}

#[test]
fn reconciles_sets_with_schema_changes() {
    let granular = schema(json!({
        "type": "object",
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
        }
    }));
    let atomic = schema(json!({
        "type": "object",
        "properties": {
            "m": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
            "l": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}}
        }
    }));
    let fine = fs(json!({"f:m": {"f:a": {}}, "f:l": {"v:\"x\"": {}}}));
    assert_eq!(reconcile_with_schema(&fine, &granular), None);
    // Granular → atomic: the owner keeps the list or map itself.
    assert_eq!(
        reconcile_with_schema(&fine, &atomic),
        Some(fs(json!({"f:m": {}, "f:l": {}})))
    );
    // Already owned whole: unchanged (atomic → granular is not migrated).
    let whole = fs(json!({"f:m": {}, "f:l": {}}));
    assert_eq!(reconcile_with_schema(&whole, &atomic), None);
    assert_eq!(reconcile_with_schema(&whole, &granular), None);
}

#[test]
fn comparison_reads_as_smd() {
    let s = grab_bag();
    let got = compare(
        &json!({"string": "a", "numeric": 1}),
        &json!({"numeric": 2, "bool": true}),
        &s,
    )
    .unwrap();
    assert_eq!(
        got.to_string(),
        "- Modified Fields:\n.numeric\n- Added Fields:\n.bool\n- Removed Fields:\n.string\n"
    );
    let without = got.exclude(&fs(json!({"f:numeric": {}, "f:string": {}})));
    assert_eq!(without.to_string(), "- Added Fields:\n.bool\n");
    assert!(!without.is_same());
    assert!(
        compare(&json!({"numeric": 1}), &json!({"numeric": 1}), &s)
            .unwrap()
            .is_same()
    );
}
