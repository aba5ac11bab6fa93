//! A kube-like flow: create by apply, an autoscaler's update, conflicts and force.

use serde_json::json;

use super::schema;
use crate::managedfields::*;
use crate::schema::Schema;

fn deployment_schema() -> Schema {
    schema(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "template": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "containers": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "x-kubernetes-patch-strategy": "merge",
                                        "x-kubernetes-patch-merge-key": "name",
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "image": {"type": "string"},
                                                "args": {"type": "array", "items": {"type": "string"}}
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }))
}

#[test]
fn kube_like_flow() {
    let s = deployment_schema();
    let updater = Updater::new(ObjectType::resource(&s));
    let kubectl = manager_identifier("kubectl", Operation::Apply, "apps/v1", "");
    let hpa = manager_identifier("hpa", Operation::Update, "autoscaling/v2", "");
    let deployment = |replicas: i64, image: &str| {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}}
        })
    };

    // Create by apply.
    let (live, managers) = updater
        .apply(
            &json!({}),
            &deployment(1, "nginx:1"),
            &Managers::new(),
            &kubectl,
            "apps/v1",
            false,
        )
        .unwrap();
    assert_eq!(live, deployment(1, "nginx:1"));
    assert_eq!(
        fieldsv1::encode(&managers[&kubectl].set),
        concat!(
            r#"{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:app":{}},"f:name":{}},"#,
            r#""f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"#,
            r#""k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}"#
        )
    );
    assert!(managers[&kubectl].applied);

    // An autoscaler updates replicas and takes them over.
    let scaled = deployment(3, "nginx:1");
    let managers = updater
        .update(&live, &scaled, &managers, &hpa, "autoscaling/v2")
        .unwrap();
    assert_eq!(
        fieldsv1::encode(&managers[&hpa].set),
        r#"{"f:spec":{"f:replicas":{}}}"#
    );
    assert_eq!(managers[&hpa].api_version, "autoscaling/v2");
    assert!(
        !managers[&kubectl]
            .set
            .has(&[PathElement::field("spec"), PathElement::field("replicas")])
    );

    // Re-applying replicas: 1 conflicts, worded as kube words it.
    let err = updater
        .apply(
            &scaled,
            &deployment(1, "nginx:2"),
            &managers,
            &kubectl,
            "apps/v1",
            false,
        )
        .unwrap_err();
    let ApplyError::Conflicts(conflicts) = err else {
        panic!("{err}")
    };
    let report = conflict_report(&conflicts, parse_manager_identifier);
    assert_eq!(
        report.message,
        r#"Apply failed with 1 conflict: conflict with "hpa" using autoscaling/v2: .spec.replicas"#
    );
    assert_eq!(report.causes[0].field, ".spec.replicas");

    // Applying without replicas leaves them to the autoscaler; the image changes.
    let mut config = deployment(0, "nginx:2");
    config["spec"].as_object_mut().unwrap().remove("replicas");
    let (live, managers) = updater
        .apply(&scaled, &config, &managers, &kubectl, "apps/v1", false)
        .unwrap();
    assert_eq!(live, deployment(3, "nginx:2"));
    assert_eq!(
        fieldsv1::encode(&managers[&hpa].set),
        r#"{"f:spec":{"f:replicas":{}}}"#
    );

    // Forcing replicas back takes them from the autoscaler, which is dropped.
    let (live, managers) = updater
        .apply(
            &live,
            &deployment(2, "nginx:2"),
            &managers,
            &kubectl,
            "apps/v1",
            true,
        )
        .unwrap();
    assert_eq!(live["spec"]["replicas"], json!(2));
    assert_eq!(managers.keys().collect::<Vec<_>>(), vec![&kubectl]);
}

#[test]
fn invalid_objects_are_refused_by_role() {
    let s = deployment_schema();
    let updater = Updater::new(ObjectType::resource(&s));
    let containers =
        |items: serde_json::Value| json!({"spec": {"template": {"spec": {"containers": items}}}});
    let twice = containers(json!([{"name": "a"}, {"name": "a"}]));

    let err = updater
        .apply(&json!({}), &twice, &Managers::new(), "m", "v1", false)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"failed to create typed patch object: .spec.template.spec.containers: duplicate entries for key [name="a"]"#
    );
    let err = updater
        .apply(
            &json!({}),
            &json!({"spec": {"paused": true}}),
            &Managers::new(),
            "m",
            "v1",
            false,
        )
        .unwrap_err();
    assert_eq!(
        err,
        ApplyError::Invalid(InvalidObject {
            role: ObjectRole::Config,
            error: typed::Error::UndeclaredField {
                path: Path(vec![
                    PathElement::field("spec"),
                    PathElement::field("paused")
                ]),
            },
        })
    );

    // Stored objects and updates may repeat a key: the key is owned as a whole.
    let managers = updater
        .update(&json!({}), &twice, &Managers::new(), "m", "v1")
        .unwrap();
    assert_eq!(
        fieldsv1::encode(&managers["m"].set),
        r#"{"f:spec":{".":{},"f:template":{".":{},"f:spec":{".":{},"f:containers":{".":{},"k:{\"name\":\"a\"}":{}}}}}}"#
    );
    let err = updater
        .update(&json!({"spec": []}), &twice, &Managers::new(), "m", "v1")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create typed live object: .spec: expected map, got []interface {}"
    );
}
