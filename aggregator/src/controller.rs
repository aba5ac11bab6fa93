//! The aggregator's controller: every second it registers the local APIServices
//! ([`crate::autoregister`]); every few seconds, and at once when a request could not
//! reach a backend, it checks each remote APIService as kube's availability controller
//! does (the Service resolved, then the group-version's discovery answering), writes
//! `Available` with kube's reasons, reads what the backend serves (aggregated
//! discovery, OpenAPI v3 when its hash moved, and v2 then), and publishes the routing
//! table the proxy reads.
//!
//! Every replica runs it: the routes are each replica's own, and status writes are
//! made only when the condition changes, so replicas that agree write nothing.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kapi_apiserver::documents::{Elsewhere, RemoteGroup, RemoteOpenApiV3, RemoteVersion};
use kapi_apiserver::registry::{ListOptions, Registry, Store, Subresource};
use serde_json::Value;
use tokio::sync::watch;

use crate::api_service::{self, Availability, GROUP, PLURAL, Spec, VERSION};
use crate::backend::{Backend, ProxyIdentity};
use crate::routes::Remote;
use crate::{Aggregator, autoregister, priorities, remote};

/// How often the local APIServices are looked at.
const TICK: Duration = Duration::from_secs(1);
/// How often each remote APIService is checked (kube resyncs every 30 s; a failed
/// request asks at once).
const CHECK_EVERY: Duration = Duration::from_secs(5);

/// What was read from one remote APIService's backend.
#[derive(Default)]
struct Seen {
    spec: Option<Spec>,
    backend: Option<Arc<Backend>>,
    checked: Option<Instant>,
    available: bool,
    discovery: Option<Value>,
    openapi_v3: Option<(String, Bytes)>,
    openapi_v2: Option<Arc<Value>>,
}

/// The controller's memory between rounds.
pub(crate) struct Controller {
    aggregator: Arc<Aggregator>,
    registry: Arc<Registry>,
    identity: ProxyIdentity,
    seen: HashMap<String, Seen>,
}

impl Controller {
    pub(crate) fn new(
        aggregator: Arc<Aggregator>,
        registry: Arc<Registry>,
        identity: ProxyIdentity,
    ) -> Self {
        Controller {
            aggregator,
            registry,
            identity,
            seen: HashMap::new(),
        }
    }

    /// Runs until `shutdown`.
    pub(crate) async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        let mut changes = self.registry.changes();
        let mut ticks = tokio::time::interval(TICK);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = changes.changed() => {}
                () = self.aggregator.nudged.notified() => {
                    for seen in self.seen.values_mut() {
                        seen.checked = None;
                    }
                }
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
            }
            self.round().await;
        }
    }

    async fn round(&mut self) {
        let Some(store) = self.registry.get(GROUP, VERSION, PLURAL) else {
            return;
        };
        let desired = autoregister::desired(&self.registry);
        let stored = match store.list_all(None, &ListOptions::default()).await {
            Ok(items) => items,
            Err(e) => {
                tracing::debug!(error = %e, "APIServices not listed");
                return;
            }
        };
        autoregister::sync(&store, &desired, &stored).await;
        let remote: Vec<Spec> = stored
            .iter()
            .map(Spec::of)
            .filter(|s| s.service.is_some())
            .collect();
        self.seen
            .retain(|name, _| remote.iter().any(|s| &s.name == name));
        for spec in &remote {
            let object = stored
                .iter()
                .find(|o| o["metadata"]["name"] == spec.name.as_str());
            self.check(&store, spec, object).await;
        }
        self.publish(&desired, &remote);
    }

    /// Checks one remote APIService when due, writes its condition, and reads its
    /// documents.
    async fn check(&mut self, store: &Store, spec: &Spec, object: Option<&Value>) {
        let seen = self.seen.entry(spec.name.clone()).or_default();
        let changed = seen.spec.as_ref() != Some(spec);
        if !changed && seen.checked.is_some_and(|t| t.elapsed() < CHECK_EVERY) {
            return;
        }
        if changed {
            *seen = Seen {
                spec: Some(spec.clone()),
                ..Seen::default()
            };
        }
        seen.checked = Some(Instant::now());
        let found = probe(&self.registry, &self.identity, seen, spec).await;
        seen.available = found.status == "True";
        if let Some(status) = object.and_then(|o| api_service::status_with(o, &found)) {
            if !seen.available {
                tracing::info!(apiservice = %spec.name, reason = found.reason, message = %found.message, "APIService unavailable");
            }
            autoregister::write(store, &spec.name, Subresource::Status, move |next| {
                next["status"] = status.clone();
            })
            .await;
        }
    }

    /// Publishes the routes and the documents' merge when they changed.
    fn publish(&self, desired: &BTreeMap<String, Value>, remote: &[Spec]) {
        let mut order: Vec<(String, String, i64, i64)> = desired
            .values()
            .map(Spec::of)
            .chain(remote.iter().cloned())
            .map(|s| (s.group, s.version, s.group_priority, s.version_priority))
            .collect();
        order.sort_by(|a, b| priorities::compare((&a.0, &a.1, a.2, a.3), (&b.0, &b.1, b.2, b.3)));
        let mut group_order: Vec<String> = Vec::new();
        for (group, ..) in &order {
            if !group_order.contains(group) {
                group_order.push(group.clone());
            }
        }
        let mut routes: HashMap<String, HashMap<String, Arc<Remote>>> = HashMap::new();
        let mut groups: Vec<RemoteGroup> = Vec::new();
        let mut elsewhere = Elsewhere {
            group_order,
            ..Elsewhere::default()
        };
        for (group, version, ..) in &order {
            let Some(spec) = remote
                .iter()
                .find(|s| &s.group == group && &s.version == version)
            else {
                continue;
            };
            let seen = self.seen.get(&spec.name);
            routes.entry(group.clone()).or_default().insert(
                version.clone(),
                Arc::new(Remote {
                    spec: spec.clone(),
                    backend: seen.and_then(|s| s.backend.clone()),
                    available: seen.is_some_and(|s| s.available),
                }),
            );
            let version_entry = RemoteVersion {
                version: version.clone(),
                discovery: seen
                    .filter(|s| s.available)
                    .and_then(|s| s.discovery.clone()),
            };
            match groups.iter_mut().find(|g| &g.name == group) {
                Some(g) => g.versions.push(version_entry),
                None => groups.push(RemoteGroup {
                    name: group.clone(),
                    versions: vec![version_entry],
                }),
            }
            if let Some(seen) = seen {
                if let Some((url, doc)) = &seen.openapi_v3 {
                    elsewhere.openapi_v3.push(RemoteOpenApiV3 {
                        path: remote::openapi_v3_path(spec),
                        document: doc.clone(),
                        hash: remote::hash_of(url),
                    });
                }
                if let Some(v2) = &seen.openapi_v2 {
                    elsewhere.openapi_v2.push(v2.clone());
                }
            }
        }
        elsewhere.groups = groups;
        self.aggregator.publish(routes, elsewhere);
    }
}

/// kube's availability check of one remote APIService, in its order: the Service and
/// its Endpoints, then the group-version's discovery on the backend (whose documents
/// are then read). The backend it resolved to is kept in `seen`.
async fn probe(
    registry: &Registry,
    identity: &ProxyIdentity,
    seen: &mut Seen,
    spec: &Spec,
) -> Availability {
    let service = spec.service.as_ref().expect("a remote APIService");
    let address = match crate::resolve::resolve(registry, service).await {
        Ok(address) => address,
        Err(why) => {
            seen.backend = None;
            return why;
        }
    };
    let reuse = seen.backend.as_ref().filter(|b| b.address() == address);
    let backend = match reuse {
        Some(b) => b.clone(),
        None => match Backend::new(spec, address, identity) {
            Ok(b) => Arc::new(b),
            Err(e) => return Availability::failed_discovery(e),
        },
    };
    seen.backend = Some(backend.clone());
    if let Err(message) = remote::check(&backend, spec).await {
        return Availability::failed_discovery(message);
    }
    read_documents(seen, &backend, spec).await;
    Availability {
        status: "True",
        reason: "Passed",
        message: "all checks passed".into(),
    }
}

/// Reads the group-version's aggregated discovery, and its OpenAPI documents when the
/// v3 hash moved.
async fn read_documents(seen: &mut Seen, backend: &Backend, spec: &Spec) {
    if let Some(discovery) = remote::discovery(backend, spec).await {
        seen.discovery = Some(discovery);
    }
    let Some(url) = remote::openapi_v3_url(backend, spec).await else {
        return;
    };
    if seen.openapi_v3.as_ref().is_some_and(|(u, _)| *u == url) {
        return;
    }
    if let Some(doc) = remote::document(backend, &url).await {
        seen.openapi_v3 = Some((url, doc));
        seen.openapi_v2 = remote::openapi_v2(backend, spec).await;
    }
}
