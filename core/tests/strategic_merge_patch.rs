//! Table tests of the strategic merge patch (`kapi_core::patch::strategic::apply`): the
//! classic Kubernetes examples plus list-map, set and atomic lists, unknown fields,
//! directives and malformed patches.

use kapi_core::patch::strategic::{self, PatchError};
use kapi_core::schema::Schema;
use serde_json::{Value, json};

/// A pod-like schema carrying the patch extensions the cases exercise.
fn pod_schema() -> Value {
    let named_string_list = |strategy: &str| {
        json!({
            "type": "array",
            "x-kubernetes-patch-strategy": strategy,
            "x-kubernetes-patch-merge-key": "name",
            "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "value": {"type": "string"}
            }}
        })
    };
    json!({
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "finalizers": {
                    "type": "array", "items": {"type": "string"},
                    "x-kubernetes-patch-strategy": "merge"
                }
            }},
            "spec": {"type": "object", "properties": {
                "containers": {
                    "type": "array",
                    "x-kubernetes-patch-strategy": "merge",
                    "x-kubernetes-patch-merge-key": "name",
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "image": {"type": "string"},
                        "args": {"type": "array", "items": {"type": "string"}},
                        "env": named_string_list("merge"),
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
                        }
                    }}
                },
                "volumes": {
                    "type": "array",
                    "x-kubernetes-patch-strategy": "merge,retainKeys",
                    "x-kubernetes-patch-merge-key": "name",
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "emptyDir": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "hostPath": {"type": "object", "properties": {"path": {"type": "string"}}}
                    }}
                },
                "tolerations": {
                    "type": "array",
                    "x-kubernetes-list-type": "atomic",
                    "items": {"type": "object", "properties": {"key": {"type": "string"}}}
                },
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"}
                },
                "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "strategy": {
                    "type": "object",
                    "x-kubernetes-patch-strategy": "retainKeys",
                    "properties": {
                        "type": {"type": "string"},
                        "rollingUpdate": {"type": "object", "properties": {
                            "maxSurge": {"type": "integer"}
                        }}
                    }
                }
            }}
        }
    })
}

/// One case: the result is either the patched object or a substring of the error.
struct Case {
    name: &'static str,
    original: Value,
    patch: Value,
    schema: Value,
    expected: Result<Value, &'static str>,
}

fn case(
    name: &'static str,
    original: Value,
    patch: Value,
    expected: Result<Value, &'static str>,
) -> Case {
    Case {
        name,
        original,
        patch,
        schema: pod_schema(),
        expected,
    }
}

fn containers(list: Value) -> Value {
    json!({"spec": {"containers": list}})
}

fn cases() -> Vec<Case> {
    vec![
        case(
            "containers merged by name, new container appended",
            containers(json!([
                {"name": "app", "image": "app:1"},
                {"name": "sidecar", "image": "sidecar:1"}
            ])),
            containers(json!([
                {"name": "sidecar", "image": "sidecar:2"},
                {"name": "debug", "image": "busybox"}
            ])),
            Ok(containers(json!([
                {"name": "app", "image": "app:1"},
                {"name": "sidecar", "image": "sidecar:2"},
                {"name": "debug", "image": "busybox"}
            ]))),
        ),
        case(
            "env merged by name inside a container",
            containers(json!([{"name": "app", "image": "app:1", "env": [
                {"name": "A", "value": "1"}, {"name": "B", "value": "2"}
            ]}])),
            containers(json!([{"name": "app", "env": [
                {"name": "B", "value": "20"}, {"name": "C", "value": "3"}
            ]}])),
            Ok(containers(
                json!([{"name": "app", "image": "app:1", "env": [
                    {"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}
                ]}]),
            )),
        ),
        case(
            "deleting a container with $patch: delete",
            containers(json!([{"name": "app"}, {"name": "sidecar"}])),
            containers(json!([{"name": "sidecar", "$patch": "delete"}])),
            Ok(containers(json!([{"name": "app"}]))),
        ),
        case(
            "replacing a list with $patch: replace",
            containers(json!([{"name": "app", "image": "a"}, {"name": "sidecar"}])),
            containers(json!([{"name": "only", "image": "o"}, {"$patch": "replace"}])),
            Ok(containers(json!([{"name": "only", "image": "o"}]))),
        ),
        case(
            "null deletes a label, other labels merge",
            json!({"metadata": {"labels": {"app": "web", "tier": "front"}}}),
            json!({"metadata": {"labels": {"tier": null, "env": "prod"}}}),
            Ok(json!({"metadata": {"labels": {"app": "web", "env": "prod"}}})),
        ),
        case(
            "null on an absent field is a no-op",
            json!({"metadata": {"labels": {"app": "web"}}}),
            json!({"metadata": {"annotations": null}}),
            Ok(json!({"metadata": {"labels": {"app": "web"}}})),
        ),
        case(
            "$setElementOrder reorders merged items, server-only items keep their place",
            containers(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}])),
            json!({"spec": {
                "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                "containers": [{"name": "a", "image": "a:2"}]
            }}),
            Ok(containers(json!([
                {"name": "b"}, {"name": "a", "image": "a:2"}, {"name": "c"}
            ]))),
        ),
        case(
            "$setElementOrder on a primitive merge list",
            json!({"metadata": {"finalizers": ["x", "y"]}}),
            json!({"metadata": {"$setElementOrder/finalizers": ["z", "y", "x"], "finalizers": ["z"]}}),
            Ok(json!({"metadata": {"finalizers": ["z", "y", "x"]}})),
        ),
        case(
            "$deleteFromPrimitiveList on finalizers",
            json!({"metadata": {"finalizers": ["a", "b", "c"]}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}),
            Ok(json!({"metadata": {"finalizers": ["a", "c"]}})),
        ),
        case(
            "$deleteFromPrimitiveList together with additions",
            json!({"metadata": {"finalizers": ["a", "b"]}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"], "finalizers": ["c", "b"]}}),
            Ok(json!({"metadata": {"finalizers": ["b", "c"]}})),
        ),
        case(
            "patch strategy merge on a scalar list is a union",
            json!({"metadata": {"finalizers": ["a", "b"]}}),
            json!({"metadata": {"finalizers": ["b", "c"]}}),
            Ok(json!({"metadata": {"finalizers": ["a", "b", "c"]}})),
        ),
        case(
            "list-map with two keys (containerPort + defaulted protocol)",
            containers(json!([{"name": "app", "ports": [
                {"containerPort": 80, "protocol": "TCP", "name": "http"},
                {"containerPort": 53, "protocol": "UDP"}
            ]}])),
            containers(json!([{"name": "app", "ports": [
                {"containerPort": 80, "name": "web"},
                {"containerPort": 53, "protocol": "TCP"}
            ]}])),
            Ok(containers(json!([{"name": "app", "ports": [
                {"containerPort": 80, "protocol": "TCP", "name": "web"},
                {"containerPort": 53, "protocol": "UDP"},
                {"containerPort": 53, "protocol": "TCP"}
            ]}]))),
        ),
        case(
            "list-map item deleted by both keys",
            containers(json!([{"name": "app", "ports": [
                {"containerPort": 53, "protocol": "TCP"},
                {"containerPort": 53, "protocol": "UDP"}
            ]}])),
            containers(json!([{"name": "app", "ports": [
                {"containerPort": 53, "protocol": "UDP", "$patch": "delete"}
            ]}])),
            Ok(containers(json!([{"name": "app", "ports": [
                {"containerPort": 53, "protocol": "TCP"}
            ]}]))),
        ),
        case(
            "set list is a union keeping order",
            json!({"spec": {"tags": ["b", "a"]}}),
            json!({"spec": {"tags": ["c", "a", "d"]}}),
            Ok(json!({"spec": {"tags": ["b", "a", "c", "d"]}})),
        ),
        case(
            "atomic list is replaced",
            json!({"spec": {"tolerations": [{"key": "a"}, {"key": "b"}]}}),
            json!({"spec": {"tolerations": [{"key": "c"}]}}),
            Ok(json!({"spec": {"tolerations": [{"key": "c"}]}})),
        ),
        case(
            "list without strategy is replaced",
            containers(json!([{"name": "app", "args": ["--a", "--b"]}])),
            containers(json!([{"name": "app", "args": ["--c"]}])),
            Ok(containers(json!([{"name": "app", "args": ["--c"]}]))),
        ),
        case(
            "unknown fields merge like a JSON merge patch",
            json!({"spec": {"extra": {"a": {"x": 1, "y": 2}, "list": [1, 2]}}, "other": {"k": "v"}}),
            json!({"spec": {"extra": {"a": {"y": null, "z": 3}, "list": [3]}}, "other": {"k2": "v2"}}),
            Ok(
                json!({"spec": {"extra": {"a": {"x": 1, "z": 3}, "list": [3]}}, "other": {"k": "v", "k2": "v2"}}),
            ),
        ),
        case(
            "$patch: replace on a map",
            json!({"spec": {"nodeSelector": {"a": "1", "b": "2"}}}),
            json!({"spec": {"nodeSelector": {"$patch": "replace", "c": "3"}}}),
            Ok(json!({"spec": {"nodeSelector": {"c": "3"}}})),
        ),
        case(
            "$patch: delete on a map empties it",
            json!({"spec": {"nodeSelector": {"a": "1"}, "tags": ["x"]}}),
            json!({"spec": {"nodeSelector": {"$patch": "delete"}}}),
            Ok(json!({"spec": {"nodeSelector": {}, "tags": ["x"]}})),
        ),
        case(
            "$patch: merge is the default behaviour",
            json!({"spec": {"nodeSelector": {"a": "1"}}}),
            json!({"spec": {"nodeSelector": {"$patch": "merge", "b": "2"}}}),
            Ok(json!({"spec": {"nodeSelector": {"a": "1", "b": "2"}}})),
        ),
        case(
            "$retainKeys clears fields not listed",
            json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
            Ok(json!({"spec": {"strategy": {"type": "Recreate"}}})),
        ),
        case(
            "$retainKeys inside a merged list item (volume source switch)",
            json!({"spec": {"volumes": [{"name": "data", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]}}),
            json!({"spec": {"volumes": [
                {"name": "data", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}
            ]}}),
            Ok(json!({"spec": {"volumes": [
                {"name": "data", "hostPath": {"path": "/x"}}, {"name": "tmp", "emptyDir": {}}
            ]}})),
        ),
        case(
            "directives in a new field never leak",
            json!({"spec": {}}),
            json!({"spec": {
                "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                "containers": [
                    {"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "$patch": "delete"}]},
                    {"name": "b", "image": null},
                    {"name": "z", "$patch": "delete"}
                ],
                "nodeSelector": {"$patch": "replace", "k": "v"}
            }}),
            Ok(json!({"spec": {
                "containers": [{"name": "b"}, {"name": "a", "env": [{"name": "X", "value": "1"}]}],
                "nodeSelector": {"k": "v"}
            }})),
        ),
        case(
            "nested merge keeps untouched siblings",
            json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "app", "image": "i"}], "tags": ["t"]}}),
            json!({"spec": {"containers": [{"name": "app", "env": [{"name": "E", "value": "v"}]}]}}),
            Ok(
                json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [
                {"name": "app", "image": "i", "env": [{"name": "E", "value": "v"}]}
            ], "tags": ["t"]}}),
            ),
        ),
        case(
            "error: patch is not an object",
            json!({}),
            json!([1, 2]),
            Err("strategic merge patch must be a JSON object"),
        ),
        case(
            "error: container without its merge key",
            containers(json!([{"name": "app"}])),
            containers(json!([{"image": "x"}])),
            Err(
                "spec.containers[0]: map: {\"image\":\"x\"} does not contain declared merge key: name",
            ),
        ),
        case(
            "error: unknown $patch value",
            json!({"spec": {"nodeSelector": {"a": "1"}}}),
            json!({"spec": {"nodeSelector": {"$patch": "explode"}}}),
            Err("spec.nodeSelector: unknown patch type: \"explode\""),
        ),
        case(
            "error: $patch: delete in a list without merge key",
            json!({"spec": {"tags": ["a"]}}),
            json!({"spec": {"tags": [{"$patch": "delete"}]}}),
            Err("spec.tags[0]: unknown patch type: \"delete\""),
        ),
        case(
            "error: field in the patch missing from $retainKeys",
            json!({"spec": {"strategy": {"type": "RollingUpdate"}}}),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}}),
            Err("invalid $retainKeys directive"),
        ),
        case(
            "error: $deleteFromPrimitiveList that is not a list",
            json!({"metadata": {"finalizers": ["a"]}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}),
            Err("invalid $deleteFromPrimitiveList/finalizers directive: must be a list"),
        ),
        case(
            "error: $setElementOrder that misses a patch item",
            containers(json!([{"name": "a"}])),
            json!({"spec": {"$setElementOrder/containers": [{"name": "a"}], "containers": [{"name": "b"}]}}),
            Err("is not in the order list"),
        ),
        case(
            "error: merging list item that is not an object",
            containers(json!([{"name": "a"}])),
            containers(json!(["a"])),
            Err("must be an object"),
        ),
    ]
}

#[test]
fn strategic_merge_patch_table() {
    let mut failures = Vec::new();
    let all = cases();
    assert!(all.len() >= 20);
    for c in all {
        let schema = match Schema::parse(&c.schema) {
            Ok(s) => s,
            Err(errs) => panic!("{}: schema did not parse: {errs:?}", c.name),
        };
        let got = strategic::apply(&c.original, &c.patch, &schema);
        let ok = match (&got, &c.expected) {
            (Ok(v), Ok(want)) => v == want,
            (Err(e), Err(want)) => e.to_string().contains(want),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{}:\n  got:      {}\n  expected: {}",
                c.name,
                match &got {
                    Ok(v) => v.to_string(),
                    Err(e) => format!("error: {e}"),
                },
                match &c.expected {
                    Ok(v) => v.to_string(),
                    Err(e) => format!("error containing {e:?}"),
                }
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn original_is_not_modified_and_errors_are_typed() {
    let schema = Schema::parse(&pod_schema()).unwrap();
    let original = containers(json!([{"name": "a"}]));
    let before = original.clone();
    let _ = strategic::apply(
        &original,
        &containers(json!([{"name": "a", "image": "x"}])),
        &schema,
    );
    assert_eq!(original, before);
    assert_eq!(
        strategic::apply(&original, &json!("x"), &schema),
        Err(PatchError::NotAnObject { found: "string" })
    );
}

#[test]
fn list_map_without_patch_strategy_merges_by_keys() {
    let schema = Schema::parse(&json!({
        "type": "object",
        "properties": {"items": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["kind", "id"],
            "items": {"type": "object", "required": ["kind", "id"], "properties": {
                "kind": {"type": "string"}, "id": {"type": "integer"}, "v": {"type": "string"}
            }}
        }}
    }))
    .unwrap();
    let got = strategic::apply(
        &json!({"items": [{"kind": "a", "id": 1, "v": "x"}, {"kind": "b", "id": 1}]}),
        &json!({"items": [{"kind": "a", "id": 1, "v": "y"}, {"kind": "a", "id": 2}]}),
        &schema,
    )
    .unwrap();
    assert_eq!(
        got,
        json!({"items": [{"kind": "a", "id": 1, "v": "y"}, {"kind": "b", "id": 1}, {"kind": "a", "id": 2}]})
    );
}
