//! Deleting a CRD deletes its objects first (kube-apiserver's CRD finalizer): the
//! `Terminating` condition tells how far it is, and the `customresourcecleanup`
//! finalizer comes off only once no object is left.

use serde_json::Value;

use super::conditions::{self, ESTABLISHED, TERMINATING};
use super::{CLEANUP_FINALIZER, Controller, group_of};
use kapi_apiserver::registry::object::{finalizers, name, namespace, set_finalizers};
use kapi_apiserver::registry::{DeleteOptions, ListOptions, Subresource};
use kapi_apiserver::status::ApiError;

/// One step of a deleted CRD's cleanup; called again (on the controller's resync)
/// while objects are left.
pub(super) async fn run(controller: &Controller, crd_name: &str, crd: &Value) {
    let set = |value: bool, reason: &'static str, message: String| {
        move |_: &Value, status: &mut Value| {
            conditions::set(status, TERMINATING, value, reason, &message)
        }
    };
    controller
        .write_status(
            crd_name,
            set(
                true,
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress".into(),
            ),
        )
        .await;
    let group = group_of(crd);
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let established = crd
        .get("status")
        .is_some_and(|s| conditions::is_true(s, ESTABLISHED));
    let (reason, message) = if controller.registry.is_compiled(&group, plural) {
        (
            "OverlappingBuiltInResource",
            "instances overlap with built-in resources in storage".to_string(),
        )
    } else if established {
        match delete_instances(controller, &group, plural).await {
            Ok(0) => ("InstanceDeletionCompleted", "removed all instances".into()),
            Ok(left) => {
                tracing::debug!(crd = %crd_name, left, "waiting for objects to be removed");
                return;
            }
            Err(e) => {
                controller
                    .write_status(
                        crd_name,
                        set(
                            true,
                            "InstanceDeletionFailed",
                            format!("could not issue all deletes: {}", e.message),
                        ),
                    )
                    .await;
                return;
            }
        }
    } else {
        (
            "NeverEstablished",
            "resource was never established".to_string(),
        )
    };
    if controller
        .write_status(crd_name, set(false, reason, message))
        .await
        .is_none()
    {
        return;
    }
    controller
        .write(crd_name, Subresource::Main, |cur, next| {
            let rest: Vec<String> = finalizers(cur)
                .into_iter()
                .filter(|f| f != CLEANUP_FINALIZER)
                .collect();
            set_finalizers(next, &rest);
        })
        .await;
}

/// Deletes every object of the resource; how many are left (objects with finalizers
/// of their own stay until those are removed).
async fn delete_instances(
    controller: &Controller,
    group: &str,
    plural: &str,
) -> Result<usize, ApiError> {
    let Some(store) = controller
        .registry
        .stores()
        .into_iter()
        .find(|s| s.info().group == group && s.info().plural == plural)
    else {
        return Ok(0);
    };
    let objects = store.list_all(None, &ListOptions::default()).await?;
    let mut left = 0;
    for obj in &objects {
        let ns = Some(namespace(obj)).filter(|n| !n.is_empty());
        match store.delete(ns, name(obj), &DeleteOptions::default()).await {
            Ok(kapi_apiserver::registry::Deletion::Pending(_)) => left += 1,
            Ok(kapi_apiserver::registry::Deletion::Deleted(_)) => {}
            Err(e) if e.reason == "NotFound" => {}
            Err(e) => return Err(e),
        }
    }
    Ok(left)
}
