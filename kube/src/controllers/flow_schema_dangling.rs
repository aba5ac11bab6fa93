//! The `Dangling` condition of FlowSchemas, as kube-apiserver's priority-and-fairness
//! config controller writes it: `True` (reason `NotFound`) while the
//! PriorityLevelConfiguration a schema names does not exist, `False` (reason `Found`)
//! once it does. kubectl's `MissingPL` column shows it.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::watch;

use kapi_apiserver::registry::object::name;
use kapi_apiserver::registry::{ListOptions, Registry, Store, Subresource, WriteOptions};

use super::items;

/// kube's field manager for the condition.
const MANAGER: &str = "api-priority-and-fairness-config-consumer-v1";
const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    let (Some(schemas), Some(levels)) = (
        registry.get(GROUP, "v1", "flowschemas"),
        registry.get(GROUP, "v1", "prioritylevelconfigurations"),
    ) else {
        return;
    };
    let stores = [schemas.as_ref(), levels.as_ref()];
    let mut dangling = Dangling {
        schemas: schemas.clone(),
        levels: levels.clone(),
    };
    // Any change to either kind may change a schema's condition.
    super::run_on_changes(
        &stores,
        "flowschema condition",
        &mut shutdown,
        &mut dangling,
    )
    .await;
}

struct Dangling {
    schemas: Arc<Store>,
    levels: Arc<Store>,
}

#[async_trait::async_trait]
impl super::Reconciler for Dangling {
    async fn reconcile(&mut self) -> Option<tokio::time::Instant> {
        reconcile(&self.schemas, &self.levels).await;
        None
    }
}

async fn reconcile(schemas: &Store, levels: &Store) {
    let (Ok(all_schemas), Ok(all_levels)) = (
        schemas.list(None, &ListOptions::default()).await,
        levels.list(None, &ListOptions::default()).await,
    ) else {
        return;
    };
    let names: BTreeSet<&str> = items(&all_levels).iter().map(name).collect();
    for schema in items(&all_schemas) {
        let level = schema["spec"]["priorityLevelConfiguration"]["name"]
            .as_str()
            .unwrap_or_default();
        let wanted = condition(level, names.contains(level));
        if super::condition(schema, "Dangling").is_some_and(|c| super::same_condition(c, &wanted)) {
            continue;
        }
        let written = schemas
            .update_with(
                None,
                name(schema),
                Subresource::Status,
                &WriteOptions::by(MANAGER),
                |stored| Ok(super::with_condition(stored, &wanted)),
            )
            .await;
        if let Err(e) = written {
            tracing::debug!(schema = name(schema), error = %e, "writing a Dangling condition");
        }
    }
}

/// kube's condition for a schema naming `level`, which exists or not.
fn condition(level: &str, exists: bool) -> Value {
    let (status, reason, message) = if exists {
        (
            "False",
            "Found",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {level:?} and it exists"
            ),
        )
    } else {
        (
            "True",
            "NotFound",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {level:?} but there is no such object"
            ),
        )
    };
    json!({"type": "Dangling", "status": status, "reason": reason, "message": message})
}
