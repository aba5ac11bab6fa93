//! The stored FlowSchemas and PriorityLevelConfigurations
//! (`flowcontrol.apiserver.k8s.io/v1`) followed into priority and fairness's
//! [`Controller`] (`kapi_apiserver::flowcontrol`), as kube's APF controller reads them
//! from informers: each complete snapshot replaces the controller's configuration.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use kapi_apiserver::flowcontrol::Controller;
use kapi_apiserver::registry::Registry;
use kapi_apiserver::registry::informer::{self, Mirror, Watched};
use kapi_apiserver::registry::watch::WatchEventType;

const SCHEMAS: &str = "flowschemas";
const LEVELS: &str = "prioritylevelconfigurations";

/// The stored objects by name.
#[derive(Default)]
struct Stored {
    schemas: BTreeMap<String, Value>,
    levels: BTreeMap<String, Value>,
}

/// Both kinds' objects.
#[derive(Default)]
pub struct Objects {
    /// FlowSchemas.
    pub schemas: Vec<Value>,
    /// PriorityLevelConfigurations.
    pub levels: Vec<Value>,
}

impl Mirror for Stored {
    type Snapshot = Objects;

    fn apply(&mut self, kind: &'static str, type_: WatchEventType, object: Value) {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let map = if kind == SCHEMAS {
            &mut self.schemas
        } else {
            &mut self.levels
        };
        if type_ == WatchEventType::Deleted {
            map.remove(&name);
        } else {
            map.insert(name, object);
        }
    }

    fn snapshot(&self) -> Objects {
        Objects {
            schemas: self.schemas.values().cloned().collect(),
            levels: self.levels.values().cloned().collect(),
        }
    }
}

/// Follows the stored objects into `controller`; the receiver turns `true` once the
/// stored ones are in it (at once when the kinds are not served: the controller keeps
/// kube's mandatory objects).
pub fn follow(
    registry: Arc<Registry>,
    controller: Arc<Controller>,
    shutdown: watch::Receiver<bool>,
) -> (watch::Receiver<bool>, JoinHandle<()>) {
    let watched = Watched {
        group: "flowcontrol.apiserver.k8s.io",
        kinds: &[SCHEMAS, LEVELS],
        what: "the flow control configuration",
    };
    let (live, mut synced, informer) = informer::start::<Stored>(registry, watched, shutdown);
    let (applied_tx, applied_rx) = watch::channel(false);
    let mut published = live.subscribe();
    let task = tokio::spawn(async move {
        loop {
            // A snapshot is published before the view says it is synced; a view with
            // nothing served is synced without one.
            if *published.borrow_and_update() > 0 {
                let objects = live.snapshot();
                for why in controller.update(&objects.schemas, &objects.levels) {
                    tracing::warn!(%why, "a flow control object is not used");
                }
                applied_tx.send_replace(true);
            } else if *synced.borrow_and_update() {
                applied_tx.send_replace(true);
            }
            tokio::select! {
                changed = published.changed() => if changed.is_err() { break },
                changed = synced.changed() => if changed.is_err() { break },
            }
        }
        informer.abort();
    });
    (applied_rx, task)
}
