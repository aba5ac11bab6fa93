use serde_json::{Value, json};

use super::{FieldManager, FieldManagerError, Target};
use crate::schema::Schema;

const T0: &str = "2026-01-01T00:00:00Z";
const T1: &str = "2026-01-01T00:00:01Z";
const T2: &str = "2026-01-01T00:00:02Z";

fn config_maps() -> Schema {
    Schema::parse(&json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "data": {"type": "object", "additionalProperties": {"type": "string"}}
        }
    }))
    .unwrap()
}

fn widgets() -> Schema {
    Schema::parse(&json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {
                "color": {"type": "string"},
                "replicas": {"type": "integer"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "required": ["name"], "properties": {
                              "name": {"type": "string"}, "port": {"type": "integer"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}}
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
        }
    }))
    .unwrap()
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "c", "namespace": "default", "labels": {"app": "a"}},
           "data": data})
}

/// `obj` as stored: with a uid, so that it exists.
fn stored(mut obj: Value) -> Value {
    obj["metadata"]["uid"] = json!("u-1");
    obj
}

fn main(schema: &Schema, has_status: bool) -> FieldManager<'_> {
    let (version, kind) = if has_status {
        ("example.kapi.dev/v1", "Widget")
    } else {
        ("v1", "ConfigMap")
    };
    FieldManager::new(schema, version, kind, Target::Main { has_status })
}

fn entries(obj: &Value) -> Vec<Value> {
    obj["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn entry<'a>(obj: &'a Value, manager: &str) -> &'a Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["manager"] == manager))
        .unwrap_or_else(|| panic!("no entry of {manager} in {obj}"))
}

#[test]
fn a_create_records_its_manager_as_kube_does() {
    let schema = config_maps();
    let fm = main(&schema, false);
    let mut new = cm(json!({"k": "v"}));
    fm.update(&json!({}), &mut new, "kubectl-create", T0);
    assert_eq!(
        entries(&new),
        [json!({
            "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
            "time": T0, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:k": {}},
                         "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
        })]
    );
    // A nameless writer is `unknown`.
    let mut anon = cm(json!({}));
    fm.update(&json!({}), &mut anon, "", T0);
    assert_eq!(entry(&anon, "unknown")["operation"], "Update");
}

#[test]
fn updates_move_fields_and_untracked_objects_stay_untracked() {
    let schema = config_maps();
    let fm = main(&schema, false);
    let mut live = cm(json!({"a": "1", "b": "2"}));
    fm.update(&json!({}), &mut live, "creator", T0);
    let live = stored(live);
    // Another manager changes `b`: it owns it now, and its time is the write's.
    let mut new = live.clone();
    new["data"]["b"] = json!("3");
    fm.update(&live, &mut new, "editor", T1);
    assert_eq!(
        entry(&new, "editor")["fieldsV1"],
        json!({"f:data": {"f:b": {}}})
    );
    assert_eq!(entry(&new, "editor")["time"], T1);
    assert!(
        entry(&new, "creator")["fieldsV1"]["f:data"]
            .get("f:b")
            .is_none()
    );
    // A write that changes nothing leaves the entries as they were.
    let before = new.clone();
    let mut same = before.clone();
    fm.update(&before, &mut same, "editor", T2);
    assert_eq!(same, before);
    // An object without managed fields is not tracked by updates.
    let bare = stored(cm(json!({"a": "1"})));
    let mut edited = bare.clone();
    edited["data"]["a"] = json!("2");
    fm.update(&bare, &mut edited, "editor", T1);
    assert!(edited["metadata"].get("managedFields").is_none());
}

#[test]
fn sent_entries_replace_the_stored_ones_and_an_empty_list_resets() {
    let schema = config_maps();
    let fm = main(&schema, false);
    let mut live = cm(json!({"a": "1"}));
    fm.update(&json!({}), &mut live, "creator", T0);
    let live = stored(live);
    // A client that drops the entries does not drop them from the object.
    let mut dropped = live.clone();
    dropped["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    fm.update(&live, &mut dropped, "editor", T1);
    assert_eq!(entries(&dropped), entries(&live));
    // An empty list starts over: the object is then untracked.
    let mut reset = live.clone();
    reset["metadata"]["managedFields"] = json!([]);
    fm.update(&live, &mut reset, "editor", T1);
    assert!(reset["metadata"].get("managedFields").is_none());
}

#[test]
fn apply_owns_what_it_applies_and_removes_what_it_drops() {
    let schema = config_maps();
    let fm = main(&schema, false);
    let config = |data: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "c"}, "data": data})
    };
    let created = fm
        .apply(
            &json!({}),
            &config(json!({"a": "1", "b": "2"})),
            "alice",
            false,
            T0,
        )
        .unwrap();
    assert_eq!(created["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(
        entries(&created),
        [
            json!({"manager": "alice", "operation": "Apply", "apiVersion": "v1", "time": T0,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}}})
        ]
    );
    let live = stored(created);
    // Dropping `b` from the configuration removes it.
    let dropped = fm
        .apply(&live, &config(json!({"a": "1"})), "alice", false, T1)
        .unwrap();
    assert_eq!(dropped["data"], json!({"a": "1"}));
    // Applying the same again changes nothing, not even the time.
    let again = fm
        .apply(
            &stored(dropped.clone()),
            &config(json!({"a": "1"})),
            "alice",
            false,
            T2,
        )
        .unwrap();
    assert_eq!(again, stored(dropped));
}

#[test]
fn conflicts_are_refused_in_kubes_words_unless_forced() {
    let schema = config_maps();
    let fm = main(&schema, false);
    let config = |data: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "c"}, "data": data})
    };
    let live = stored(
        fm.apply(
            &json!({}),
            &config(json!({"k": "1", "j": "1"})),
            "alice",
            false,
            T0,
        )
        .unwrap(),
    );
    let err = fm
        .apply(&live, &config(json!({"k": "2"})), "bob", false, T1)
        .unwrap_err();
    let FieldManagerError::Conflicts(report) = err else {
        panic!("not a conflict: {err:?}");
    };
    assert_eq!(
        report.message,
        "Apply failed with 1 conflict: conflict with \"alice\": .data.k"
    );
    assert_eq!(report.causes[0].message, "conflict with \"alice\"");
    assert_eq!(report.causes[0].field, ".data.k");
    // The same value is shared, not a conflict; a field stays while one owner has it.
    let shared = stored(
        fm.apply(&live, &config(json!({"k": "1"})), "bob", false, T1)
            .unwrap(),
    );
    let alice_drops = fm
        .apply(&shared, &config(json!({"j": "1"})), "alice", false, T2)
        .unwrap();
    assert_eq!(alice_drops["data"], json!({"j": "1", "k": "1"}));
    // Forced, bob takes the field from alice.
    let forced = fm
        .apply(&live, &config(json!({"k": "2"})), "bob", true, T1)
        .unwrap();
    assert_eq!(forced["data"]["k"], "2");
    assert_eq!(
        entry(&forced, "alice")["fieldsV1"],
        json!({"f:data": {"f:j": {}}})
    );
    // An update manager is named with its version.
    let mut edited = live.clone();
    edited["data"]["j"] = json!("9");
    fm.update(&live, &mut edited, "kubectl-edit", T1);
    let err = fm
        .apply(
            &stored(edited),
            &config(json!({"j": "2"})),
            "bob",
            false,
            T2,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.j"
    );
}

#[test]
fn list_items_are_owned_by_key_and_atomic_lists_whole() {
    let schema = widgets();
    let fm = main(&schema, true);
    let config = |spec: Value| {
        json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
                                      "metadata": {"name": "w"}, "spec": spec})
    };
    let live = stored(
        fm.apply(
            &json!({}),
            &config(json!({"ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["x"]})),
            "alice",
            false,
            T0,
        )
        .unwrap(),
    );
    let both = stored(
        fm.apply(
            &live,
            &config(json!({"ports": [{"name": "metrics", "port": 9090}], "tags": ["b"]})),
            "bob",
            false,
            T1,
        )
        .unwrap(),
    );
    assert_eq!(
        both["spec"]["ports"],
        json!([{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}])
    );
    assert_eq!(both["spec"]["tags"], json!(["a", "b"]));
    assert_eq!(
        entry(&both, "bob")["fieldsV1"],
        json!({"f:spec": {"f:ports": {"k:{\"name\":\"metrics\"}": {".": {}, "f:name": {}, "f:port": {}}},
                          "f:tags": {"v:\"b\"": {}}}})
    );
    // Bob drops his port: only his item goes. An atomic list is replaced whole, and
    // taking it from its owner is a conflict.
    let dropped = fm
        .apply(&both, &config(json!({"tags": ["b"]})), "bob", false, T2)
        .unwrap();
    assert_eq!(
        dropped["spec"]["ports"],
        json!([{"name": "http", "port": 80}])
    );
    let err = fm
        .apply(&both, &config(json!({"args": ["y"]})), "bob", false, T2)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.args"
    );
}

#[test]
fn status_is_owned_only_through_its_subresource() {
    let schema = widgets();
    let fm = main(&schema, true);
    let mut created = json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
                             "metadata": {"name": "w"}, "spec": {"color": "red"},
                             "status": {"phase": "New"}});
    fm.update(&json!({}), &mut created, "creator", T0);
    assert!(
        entry(&created, "creator")["fieldsV1"]
            .get("f:status")
            .is_none()
    );
    let live = stored(created);
    let status = FieldManager::new(
        &schema,
        "example.kapi.dev/v1",
        "Widget",
        Target::Subresource("status"),
    );
    let mut new = live.clone();
    new["status"]["phase"] = json!("Ready");
    status.update(&live, &mut new, "controller", T1);
    let e = entry(&new, "controller");
    assert_eq!(e["subresource"], "status");
    assert_eq!(e["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
}

#[test]
fn the_first_apply_records_what_was_there_before() {
    let schema = config_maps();
    let fm = main(&schema, false);
    let live = stored(cm(json!({"a": "1"})));
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                        "data": {"b": "2"}});
    let applied = fm.apply(&live, &config, "alice", false, T1).unwrap();
    let before = entry(&applied, "before-first-apply");
    assert_eq!(before["operation"], "Update");
    assert_eq!(
        before["fieldsV1"],
        json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
    );
    // Taking a field it holds is a conflict with it.
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                        "data": {"a": "9"}});
    let err = fm.apply(&live, &config, "alice", false, T1).unwrap_err();
    assert!(
        err.to_string()
            .contains("conflict with \"before-first-apply\" using v1: .data.a"),
        "{err}"
    );
}

#[test]
fn a_bad_configuration_is_a_bad_request() {
    let schema = config_maps();
    let fm = main(&schema, false);
    let other = json!({"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "c"}});
    assert_eq!(
        fm.apply(&json!({}), &other, "a", false, T0).unwrap_err(),
        FieldManagerError::BadRequest("invalid object type: /v2, Kind=ConfigMap".into())
    );
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}});
    assert_eq!(
        fm.apply(&json!({}), &secret, "a", false, T0).unwrap_err(),
        FieldManagerError::BadRequest("invalid object type: /v1, Kind=Secret".into())
    );
    let managed = json!({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "c", "managedFields": []}});
    assert_eq!(
        fm.apply(&json!({}), &managed, "a", false, T0).unwrap_err(),
        FieldManagerError::BadRequest("metadata.managedFields must be nil".into())
    );
    let typed = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "data": {"a": 1}});
    assert!(matches!(
        fm.apply(&json!({}), &typed, "a", false, T0),
        Err(FieldManagerError::BadRequest(_))
    ));
}

#[test]
fn kubectl_takes_over_what_client_side_apply_set() {
    let schema = config_maps();
    let fm = main(&schema, false);
    let last = json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}});
    let mut created = cm(json!({"a": "1"}));
    created["metadata"]["annotations"] = json!({
        "kubectl.kubernetes.io/last-applied-configuration": last.to_string()
    });
    fm.update(&json!({}), &mut created, "kubectl-client-side-apply", T0);
    let live = stored(created);
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "c"}, "data": {"a": "2"}});
    // Another applier conflicts; kubectl itself takes the field.
    assert!(fm.apply(&live, &config, "someone", false, T1).is_err());
    let migrated = fm.apply(&live, &config, "kubectl", false, T1).unwrap();
    assert_eq!(migrated["data"]["a"], "2");
    let annotation =
        migrated["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .unwrap();
    assert_eq!(serde_json::from_str::<Value>(annotation).unwrap(), config);
}
