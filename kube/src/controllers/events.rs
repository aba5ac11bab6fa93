//! Events the controllers report, as client-go's events.k8s.io/v1 recorder writes them
//! (`<name>.<hex nanoseconds>`, in the object's namespace or `default`), each reason
//! and note once per object while the controller runs, where kube's recorder would
//! count repeats into a series.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use kapi_apiserver::registry::object::name;
use kapi_apiserver::registry::{Registry, Store, WriteOptions};

/// Writes one controller's Events.
pub(crate) struct Recorder {
    /// events.k8s.io/v1 Events, when served.
    events: Option<std::sync::Arc<Store>>,
    controller: &'static str,
    /// What was reported: the object's uid, the reason and the note.
    sent: BTreeSet<(String, String, String)>,
}

/// What an Event is about: the object with its `apiVersion` and `kind` (list items
/// carry neither).
pub(crate) struct Regarding<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub object: &'a Value,
}

impl Recorder {
    /// A recorder for `controller`, its `reportingController`.
    pub(crate) fn new(registry: &Registry, controller: &'static str) -> Self {
        Self {
            events: registry.get("events.k8s.io", "v1", "events"),
            controller,
            sent: BTreeSet::new(),
        }
    }

    /// A Warning about `regarding`, unless this one was reported already.
    pub(crate) async fn warn(
        &mut self,
        regarding: Regarding<'_>,
        reason: &str,
        action: &str,
        note: String,
    ) {
        let Some(events) = &self.events else {
            return;
        };
        let meta = &regarding.object["metadata"];
        let uid = meta["uid"].as_str().unwrap_or_default().to_string();
        if !self.sent.insert((uid, reason.to_string(), note.clone())) {
            return;
        }
        let namespace = meta["namespace"].as_str().unwrap_or("default");
        let nanos = chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default();
        let event = json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": format!("{}.{nanos:x}", name(regarding.object)), "namespace": namespace},
            "eventTime": crate::leader_election::micro_time(),
            "reportingController": self.controller,
            "reportingInstance": format!("{}-kapi", self.controller),
            "action": action,
            "reason": reason,
            "type": "Warning",
            "note": note,
            "regarding": {
                "apiVersion": regarding.api_version,
                "kind": regarding.kind,
                "name": meta["name"],
                "namespace": meta.get("namespace"),
                "uid": meta["uid"],
                "resourceVersion": meta["resourceVersion"],
            },
        });
        let opts = WriteOptions::by(self.controller);
        if let Err(e) = events.create(Some(namespace), event, &opts).await {
            tracing::debug!(controller = self.controller, reason, error = %e, "recording an event");
        }
        tracing::warn!(controller = self.controller, reason, "{note}");
    }
}
