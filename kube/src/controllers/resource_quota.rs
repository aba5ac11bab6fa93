//! The ResourceQuota controller (kube-controller-manager's resourcequota controller):
//! every quota's `status.hard` follows its `spec.hard`, and its `status.used` is the
//! count of the objects it limits, recounted every second, so that what deletes (and
//! creates refused after admission charged them) took is given back.
//! See [`crate::admission::resource_quota`] for the charging side.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use crate::admission::resource_quota::{count, resource_of, set_used};
use kapi_apiserver::registry::{ListOptions, Registry, Subresource, WriteOptions};

/// How often usage is recounted. kube replenishes on delete events and resyncs every
/// five minutes; one short period does both here.
const PERIOD: Duration = Duration::from_secs(1);

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
            _ = tokio::time::sleep(PERIOD) => {}
        }
        if let Err(e) = sync_all(&registry).await {
            tracing::debug!(error = %e, "resourcequota controller");
        }
    }
}

async fn sync_all(registry: &Registry) -> Result<(), kapi_apiserver::status::ApiError> {
    let Some(quotas) = registry.get("", "v1", "resourcequotas") else {
        return Ok(());
    };
    let list = quotas.list_objects(None, &ListOptions::default()).await?;
    for item in list.items {
        let quota = match item.decoded {
            Some(q) => q,
            None => item.stored.decode(quotas.info())?,
        };
        let namespace = quota["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = quota["metadata"]["name"].as_str().unwrap_or_default();
        let mut usage = Vec::new();
        for key in quota["spec"]["hard"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            if let Some((group, plural)) = resource_of(key) {
                usage.push((
                    key.clone(),
                    count(registry, namespace, group, plural).await?,
                ));
            }
        }
        let wanted = recounted(&quota, &usage);
        if wanted == quota {
            continue;
        }
        let written = quotas
            .update_with(
                Some(namespace),
                name,
                Subresource::Status,
                &WriteOptions::by(crate::controllers::MANAGER),
                |current| Ok(recounted(current, &usage)),
            )
            .await;
        if let Err(e) = written {
            tracing::debug!(namespace, name, error = %e, "recounting a quota");
        }
    }
    Ok(())
}

/// The quota with `status.hard` from its spec and `status.used` as counted.
fn recounted(quota: &Value, usage: &[(String, i64)]) -> Value {
    let mut next = quota.clone();
    if let Some(status) = next.get_mut("status").and_then(Value::as_object_mut) {
        // Names no longer limited go, as kube's controller drops them.
        status.remove("used");
    }
    if usage.is_empty() {
        if let Some(obj) = next.as_object_mut() {
            let hard = quota["spec"]["hard"].clone();
            obj.entry("status")
                .or_insert_with(|| serde_json::json!({}))
                .as_object_mut()
                .map(|s| s.insert("hard".into(), hard));
        }
    }
    for (key, used) in usage {
        set_used(&mut next, key, *used);
    }
    next
}
