//! The `Dangling` condition of FlowSchemas, as kube-apiserver's priority-and-fairness
//! config controller writes it: `True` (reason `NotFound`) while the
//! PriorityLevelConfiguration a schema names does not exist, `False` (reason `Found`)
//! once it does. kubectl's `MissingPL` column shows it.

use std::collections::BTreeSet;
use std::sync::Arc;

use futures_util::{FutureExt, StreamExt};
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
    loop {
        let Some(mut schema_events) =
            super::watch_from_now(&schemas, "flowschema condition", &mut shutdown).await
        else {
            return;
        };
        let Some(mut level_events) =
            super::watch_from_now(&levels, "flowschema condition", &mut shutdown).await
        else {
            return;
        };
        loop {
            // Any change to either kind may change a schema's condition; one pass over
            // all schemas answers every change seen so far.
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                event = schema_events.next() => if event.is_none() { break },
                event = level_events.next() => if event.is_none() { break },
            }
            // Events already waiting (the initial ones, or a burst) share one pass.
            while let Some(Some(_)) = schema_events.next().now_or_never() {}
            while let Some(Some(_)) = level_events.next().now_or_never() {}
            reconcile(&schemas, &levels).await;
        }
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
