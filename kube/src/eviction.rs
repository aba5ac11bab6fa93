//! `pods/eviction`: a policy/v1 `Eviction` posted to a pod deletes it unless that would
//! break its PodDisruptionBudget, as kube-apiserver's `EvictionREST` decides
//! (`pkg/registry/core/pod/storage/eviction.go`), for `kubectl drain` and every
//! controller that evicts.
//!
//! A pod that is Succeeded, Failed, Pending or already being deleted is deleted without
//! looking at budgets. Otherwise the budgets of its namespace whose selector matches it
//! count: none, and it is deleted; more than one is a 500. With one, the budget's status
//! (which a disruption controller keeps; kapi runs none, so whoever runs one writes it)
//! decides: not yet observed at its generation, or no disruptions allowed, is kube's 429
//! (`Cannot evict pod as it would violate the pod's disruption budget.`); otherwise one
//! disruption is taken (`disruptionsAllowed` decremented, the pod recorded in
//! `disruptedPods`) before the pod is deleted. An unready pod is deleted without taking
//! one when `unhealthyPodEvictionPolicy` is `AlwaysAllow`, or when the budget is
//! healthy under the default `IfHealthyBudget`.
//!
//! Where kapi differs: the eviction itself passes no admission plugins (the pod's
//! deletion does), and a budget changed by someone else between the read and the write
//! is read again up to [`RETRIES`] times, then answers 429 as kube's would.

use std::sync::Arc;

use async_trait::async_trait;
use http::StatusCode;
use kapi_auth::UserInfo;
use kapi_core::selector::LabelSelector;
use kapi_storage::ReadAt;
use serde_json::{Value, json};

use kapi_apiserver::endpoints::{Api, CreateOnly, CreateOnlyPath};
use kapi_apiserver::registry::{ListOptions, Store, Subresource, WriteOptions};
use kapi_apiserver::request::ResourcePath;
use kapi_apiserver::request::query::Query;
use kapi_apiserver::status::ApiError;

/// How often a budget changed by another writer is read again.
pub const RETRIES: usize = 5;
/// kube's bound on `status.disruptedPods` (`MaxDisruptedPodSize`).
const MAX_DISRUPTED_PODS: usize = 2000;

/// The `pods/eviction` subresource, to register with the server's [`Api`].
pub fn create_only() -> Arc<dyn CreateOnly> {
    Arc::new(Eviction)
}

struct Eviction;

#[async_trait]
impl CreateOnly for Eviction {
    fn path(&self) -> CreateOnlyPath {
        CreateOnlyPath {
            group: "",
            versions: &["v1"],
            plural: "pods",
            subresource: Some("eviction"),
        }
    }

    fn body_kind<'a>(&self, _r: &'a ResourcePath) -> (&'a str, &'a str, &'static str) {
        ("policy", "v1", "Eviction")
    }

    async fn create(
        &self,
        api: &Api,
        r: &ResourcePath,
        body: Value,
        _user: &UserInfo,
    ) -> Result<Value, ApiError> {
        let name = r.name.as_deref().unwrap_or_default();
        let namespace = r.namespace.as_deref().unwrap_or_default();
        if kapi_apiserver::registry::object::meta_str(&body, "name") != name {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object",
            ));
        }
        let options = body.get("deleteOptions").filter(|o| o.is_object());
        let delete = Query::default().delete_options(options)?;
        let pods = store(api, "", "pods")?;
        let pod = pods.get(Some(namespace), name, ReadAt::Latest).await?;
        if !can_ignore_budgets(&pod) {
            let budgets = store(api, "policy", "poddisruptionbudgets")?;
            take_disruption(&budgets, namespace, &pod, delete.dry_run).await?;
        }
        pods.delete(Some(namespace), name, &delete).await?;
        Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success", "code": 201}))
    }
}

fn store(api: &Api, group: &str, plural: &str) -> Result<Arc<Store>, ApiError> {
    api.registry.get(group, "v1", plural).ok_or_else(|| {
        ApiError::internal(
            "evicting a pod",
            &std::io::Error::other(format!("{plural} are not served")),
        )
    })
}

/// Pods no budget protects: finished, not started, or already going.
fn can_ignore_budgets(pod: &Value) -> bool {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str);
    matches!(phase, Some("Succeeded" | "Failed" | "Pending"))
        || !pod["metadata"]["deletionTimestamp"].is_null()
}

/// A pod's `Ready` condition is `True`.
fn ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// The budget that protects `pod`, if any: one, or a 500 when several do.
async fn budget_of(
    budgets: &Store,
    namespace: &str,
    pod: &Value,
) -> Result<Option<Value>, ApiError> {
    let list = budgets
        .list(Some(namespace), &ListOptions::default())
        .await?;
    let labels = kapi_apiserver::registry::object::meta(pod, "labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut matching = Vec::new();
    for pdb in list["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        // A budget without a selector protects nothing; policy/v1's empty one, all.
        let Some(selector) = pdb.pointer("/spec/selector").filter(|s| s.is_object()) else {
            continue;
        };
        let Ok(selector) = LabelSelector::from_json(selector) else {
            continue;
        };
        if selector.matches(&labels) {
            matching.push(pdb.clone());
        }
    }
    match matching.len() {
        0 => Ok(None),
        1 => Ok(matching.pop()),
        _ => Err(ApiError::internal(
            "evicting a pod",
            &std::io::Error::other(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ),
        )),
    }
}

/// Takes one disruption from the pod's budget, or refuses as kube's eviction does.
async fn take_disruption(
    budgets: &Store,
    namespace: &str,
    pod: &Value,
    dry_run: bool,
) -> Result<(), ApiError> {
    for _ in 0..RETRIES {
        let Some(mut pdb) = budget_of(budgets, namespace, pod).await? else {
            return Ok(());
        };

        let status = &pdb["status"];
        let int = |v: &Value| v.as_i64().unwrap_or(0);
        if !ready(pod) {
            let always =
                pdb.pointer("/spec/unhealthyPodEvictionPolicy") == Some(&json!("AlwaysAllow"));
            let desired = int(&status["desiredHealthy"]);
            // An unready pod counts in no budget: it goes when the budget allows that.
            if always || (desired > 0 && int(&status["currentHealthy"]) >= desired) {
                return Ok(());
            }
        }
        check(&pdb)?;
        if dry_run {
            return Ok(());
        }
        let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
        let allowed = int(&pdb["status"]["disruptionsAllowed"]) - 1;
        let status = &mut pdb["status"];
        status["disruptionsAllowed"] = json!(allowed);
        status["disruptedPods"][pod_name] = json!(kapi_apiserver::registry::object::now());
        if allowed == 0 {
            set_insufficient_pods(status);
        }
        let name = pdb["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match budgets
            .update(
                Some(namespace),
                &name,
                pdb,
                Subresource::Status,
                &WriteOptions::default(),
            )
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if e.code == StatusCode::CONFLICT => continue,
            Err(e) => return Err(e),
        }
    }
    Err(too_many_requests(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        "the disruption budget was changed by others too often to take a disruption from it",
    ))
}

/// kube's `checkAndDecrement` refusals.
fn check(pdb: &Value) -> Result<(), ApiError> {
    let name = pdb["metadata"]["name"].as_str().unwrap_or_default();
    let status = &pdb["status"];
    let int = |v: &Value| v.as_i64().unwrap_or(0);
    if int(&status["observedGeneration"]) < int(&pdb["metadata"]["generation"]) {
        return Err(too_many_requests(
            "Cannot evict pod as it would violate the pod's disruption budget.",
            &format!("The disruption budget {name} is still being processed by the server."),
        ));
    }
    let allowed = int(&status["disruptionsAllowed"]);
    if allowed < 0 {
        return Err(forbidden(name, "pdb disruptions allowed is negative"));
    }
    let disrupted = status["disruptedPods"].as_object().map_or(0, |m| m.len());
    if disrupted >= MAX_DISRUPTED_PODS {
        return Err(forbidden(
            name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        return Err(too_many_requests(
            "Cannot evict pod as it would violate the pod's disruption budget.",
            &format!(
                "The disruption budget {name} needs {} healthy pods and has {} currently",
                int(&status["desiredHealthy"]),
                int(&status["currentHealthy"])
            ),
        ));
    }
    Ok(())
}

/// The `DisruptionAllowed` condition kube sets when the last disruption is taken.
fn set_insufficient_pods(status: &mut Value) {
    let observed = status["observedGeneration"].clone();
    let condition = json!({"type": "DisruptionAllowed", "status": "False",
        "reason": "InsufficientPods", "message": "",
        "observedGeneration": observed,
        "lastTransitionTime": kapi_apiserver::registry::object::now()});
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let mut kept: Vec<Value> = conditions
        .into_iter()
        .filter(|c| c["type"] != "DisruptionAllowed")
        .collect();
    kept.push(condition);
    status["conditions"] = Value::Array(kept);
}

/// kube's `NewTooManyRequests` with a `DisruptionBudget` cause.
fn too_many_requests(message: &str, cause: &str) -> ApiError {
    ApiError {
        code: StatusCode::TOO_MANY_REQUESTS,
        reason: "TooManyRequests",
        message: message.to_string(),
        details: Some(json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]})),
        continue_token: None,
    }
}

/// kube's `NewForbidden` about the budget `name` (kube names the resource in the
/// singular here).
fn forbidden(name: &str, why: &str) -> ApiError {
    ApiError {
        code: StatusCode::FORBIDDEN,
        reason: "Forbidden",
        message: format!("poddisruptionbudget.policy \"{name}\" is forbidden: {why}"),
        details: Some(json!({"name": name, "group": "policy", "kind": "poddisruptionbudget"})),
        continue_token: None,
    }
}
