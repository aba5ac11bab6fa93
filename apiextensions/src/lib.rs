//! CustomResourceDefinitions at run time (kube-apiserver's apiextensions-apiserver):
//! every replica watches the CRDs and serves what they define, with the same schema
//! engine the compiled resources use ([`kapi_core::SchemaStrategy`]).
//!
//! For each CRD the controller, like kube-apiserver's naming, establishing and
//! finalizer controllers together:
//! - decides its accepted names against the rest of its group ([`naming`]) and sets
//!   `NamesAccepted`;
//! - installs its served versions in the [`Registry`] once its names are accepted,
//!   then sets `Established` (discovery and OpenAPI follow the registry), with a
//!   [`conversion::WebhookConverter`] when its versions convert through a webhook;
//! - when it is deleted (the CRD strategy adds the `customresourcecleanup` finalizer and
//!   a `Terminating` condition), refuses new objects, deletes every object, and only
//!   then removes the finalizer ([`cleanup`]).
//!
//! Status writes are idempotent, so every replica can run the controller: a write that
//! loses a race is seen again through the watch.

mod cleanup;
pub mod conditions;
pub mod conversion;
pub mod naming;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kapi_core::crd::CustomResourceDefinition as Definition;
use kapi_core::{ObjectStrategy, SchemaStrategy};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use conditions::{ESTABLISHED, NAMES_ACCEPTED};
use conversion::WebhookConverter;
use kapi_apiserver::registry::object::{finalizers, is_being_deleted};
use kapi_apiserver::registry::watch::INITIAL_EVENTS_END;
use kapi_apiserver::registry::{
    Converter, Install, Registry, Store, Subresource, WatchEventType, WatchOptions, WriteOptions,
};
use kapi_apiserver::webhook::ServiceResolver;
use naming::TakenNames;

/// The finalizer that keeps a deleted CRD until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// How often CRDs being deleted are looked at again while their objects drain.
const RESYNC: Duration = Duration::from_secs(1);

/// Starts the controller. The returned receiver turns true once the CRDs stored when
/// it started are served (a server listens only then, so that a restart never answers
/// 404 for a resource it serves). `services` resolves the Services conversion webhooks
/// name (`None`: only `clientConfig.url` can be called).
pub fn start(
    registry: Arc<Registry>,
    services: Option<Arc<dyn ServiceResolver>>,
    shutdown: watch::Receiver<bool>,
) -> (JoinHandle<()>, watch::Receiver<bool>) {
    let (synced_tx, synced_rx) = watch::channel(false);
    let task = tokio::spawn(run(registry, services, shutdown, synced_tx));
    (task, synced_rx)
}

/// What is installed for one CRD, and from what.
struct Installed {
    group: String,
    plural: String,
    fingerprint: String,
}

struct Controller {
    registry: Arc<Registry>,
    services: Option<Arc<dyn ServiceResolver>>,
    crds: Arc<Store>,
    /// Every CRD as last seen, by name.
    known: BTreeMap<String, Value>,
    /// What each CRD has installed, by CRD name.
    installed: BTreeMap<String, Installed>,
}

async fn run(
    registry: Arc<Registry>,
    services: Option<Arc<dyn ServiceResolver>>,
    mut shutdown: watch::Receiver<bool>,
    synced: watch::Sender<bool>,
) {
    let Some(crds) = registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions") else {
        let _ = synced.send(true);
        return;
    };
    let mut controller = Controller {
        registry,
        services,
        crds,
        known: BTreeMap::new(),
        installed: BTreeMap::new(),
    };
    loop {
        let opts = WatchOptions {
            send_initial_events: true,
            allow_bookmarks: true,
            ..WatchOptions::default()
        };
        let mut events = match controller.crds.watch(None, &opts).await {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "CRD controller: watch failed");
                tokio::select! {
                    () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                    _ = tokio::time::sleep(RESYNC) => continue,
                }
            }
        };
        // The initial events rebuild what is known; reconciling waits for all of them,
        // as names are decided against the whole group.
        let mut initial = Some(BTreeMap::new());
        let mut tick = tokio::time::interval(RESYNC);
        loop {
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                event = events.next() => {
                    let Some(event) = event else { break };
                    let name = kapi_apiserver::registry::object::name(&event.object).to_string();
                    match (&mut initial, event.type_) {
                        (_, WatchEventType::Error) => break,
                        (Some(seen), WatchEventType::Added | WatchEventType::Modified) => {
                            seen.insert(name, event.object);
                        }
                        (Some(_), WatchEventType::Bookmark) if is_initial_end(&event.object) => {
                            controller.known = initial.take().unwrap_or_default();
                            controller.reconcile_all().await;
                            let _ = synced.send(true);
                        }
                        (None, WatchEventType::Added | WatchEventType::Modified) => {
                            controller.known.insert(name.clone(), event.object);
                            controller.reconcile(&name).await;
                        }
                        (None, WatchEventType::Deleted) => {
                            let group = group_of(&event.object);
                            controller.known.remove(&name);
                            controller.forget(&name).await;
                            // Its names are free: the rest of the group may take them.
                            controller.reconcile_group(&group).await;
                        }
                        _ => {}
                    }
                }
                _ = tick.tick(), if initial.is_none() => controller.resync().await,
            }
        }
    }
}

fn is_initial_end(bookmark: &Value) -> bool {
    bookmark
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(INITIAL_EVENTS_END))
        .and_then(Value::as_str)
        == Some("true")
}

fn group_of(crd: &Value) -> String {
    crd.pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The status a CRD should have, given the names the rest of its group holds.
fn desired_status(crd: &Value, taken: &TakenNames) -> Value {
    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    if !status.is_object() {
        status = json!({});
    }
    let requested = crd.pointer("/spec/names").cloned().unwrap_or_default();
    let accepted = status.get("acceptedNames").cloned().unwrap_or(json!({}));
    let naming = naming::accept(&requested, &accepted, taken);
    status["acceptedNames"] = naming.accepted;
    conditions::set(
        &mut status,
        NAMES_ACCEPTED,
        naming.all_accepted,
        naming.reason,
        &naming.message,
    );
    if naming.all_accepted || conditions::is_true(&status, ESTABLISHED) {
        conditions::set(
            &mut status,
            ESTABLISHED,
            true,
            "InitialNamesAccepted",
            "the initial names have been accepted",
        );
    } else if conditions::find(&status, ESTABLISHED).is_none() {
        conditions::set(
            &mut status,
            ESTABLISHED,
            false,
            "NotAccepted",
            "not all names are accepted",
        );
    }
    status
}

impl Controller {
    async fn reconcile_all(&mut self) {
        let gone: Vec<String> = self
            .installed
            .keys()
            .filter(|n| !self.known.contains_key(*n))
            .cloned()
            .collect();
        for name in gone {
            self.forget(&name).await;
        }
        let names: Vec<String> = self.known.keys().cloned().collect();
        for name in names {
            self.reconcile(&name).await;
        }
    }

    async fn reconcile_group(&mut self, group: &str) {
        let names: Vec<String> = self
            .known
            .iter()
            .filter(|(_, crd)| group_of(crd) == group)
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            self.reconcile(&name).await;
        }
    }

    /// Looks again at the CRDs being deleted (their objects may have finalizers).
    async fn resync(&mut self) {
        let deleting: Vec<String> = self
            .known
            .iter()
            .filter(|(_, crd)| is_being_deleted(crd))
            .map(|(n, _)| n.clone())
            .collect();
        for name in deleting {
            self.reconcile(&name).await;
        }
    }

    /// The names held in `group` by compiled resources and by CRDs other than `except`.
    fn taken(&self, group: &str, except: &str) -> TakenNames {
        let mut taken = TakenNames::default();
        for store in self.registry.stores() {
            let info = store.info();
            if info.group == group && self.registry.is_compiled(group, &info.plural) {
                taken.add(&json!({
                    "plural": info.plural, "singular": info.singular,
                    "shortNames": info.short_names, "kind": info.kind,
                    "listKind": info.list_kind,
                }));
            }
        }
        for (name, crd) in &self.known {
            if name != except && group_of(crd) == group {
                if let Some(accepted) = crd.pointer("/status/acceptedNames") {
                    taken.add(accepted);
                }
            }
        }
        taken
    }

    async fn forget(&mut self, name: &str) {
        if let Some(installed) = self.installed.remove(name) {
            self.registry
                .remove(&installed.group, &installed.plural)
                .await;
            tracing::info!(crd = %name, "no longer serving");
        }
    }

    async fn reconcile(&mut self, name: &str) {
        let Some(crd) = self.known.get(name).cloned() else {
            return;
        };
        let group = group_of(&crd);
        let taken = self.taken(&group, name);
        let status = desired_status(&crd, &taken);
        self.serve(name, &crd, &status).await;
        if crd.get("status") != Some(&status) {
            let written = self
                .write_status(name, |cur, out| *out = desired_status(cur, &taken))
                .await;
            if let Some(crd) = written {
                self.known.insert(name.to_string(), crd);
            }
        }
        if is_being_deleted(&crd) && finalizers(&crd).iter().any(|f| f == CLEANUP_FINALIZER) {
            let crd = self.known.get(name).cloned().unwrap_or(crd);
            cleanup::run(self, name, &crd).await;
        }
    }

    /// Installs (or removes) what the CRD serves, when that changed.
    async fn serve(&mut self, name: &str, crd: &Value, status: &Value) {
        let served = conditions::is_true(status, ESTABLISHED);
        let terminating = is_being_deleted(crd);
        let accepted = status.get("acceptedNames").cloned().unwrap_or_default();
        let fingerprint = json!([crd.get("spec"), accepted, terminating]).to_string();
        if self
            .installed
            .get(name)
            .is_some_and(|i| i.fingerprint == fingerprint)
        {
            return;
        }
        let strategies = if served {
            match strategies(crd, &accepted) {
                Ok(s) => s,
                Err(why) => {
                    tracing::warn!(crd = %name, error = %why, "CRD not served");
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        let Some(first) = strategies.first() else {
            self.forget(name).await;
            return;
        };
        let (group, plural) = (
            first.info().group.to_string(),
            first.info().plural.to_string(),
        );
        let storage_version = strategies
            .iter()
            .find(|s| s.info().storage)
            .map(|s| s.info().api_version())
            .or_else(|| storage_api_version(crd));
        let converter = WebhookConverter::for_crd(crd, self.services.as_ref())
            .map(|c| Arc::new(c) as Arc<dyn Converter>);
        let install = Install {
            storage_version,
            refuse_create: terminating.then(|| {
                "create not allowed while custom resource definition is terminating".into()
            }),
            converter,
        };
        if self.registry.install(&strategies, &install) {
            tracing::info!(crd = %name, versions = strategies.len(), "serving");
            self.installed.insert(
                name.to_string(),
                Installed {
                    group,
                    plural,
                    fingerprint,
                },
            );
        }
    }

    /// Writes the CRD's status as `f` computes it from the stored object; the written
    /// object, or `None` when the write failed (the watch brings the CRD back).
    async fn write_status(
        &self,
        name: &str,
        f: impl Fn(&Value, &mut Value) + Send + Sync,
    ) -> Option<Value> {
        self.write(name, Subresource::Status, |cur, next| {
            let mut status = cur.get("status").cloned().unwrap_or_else(|| json!({}));
            f(cur, &mut status);
            next["status"] = status;
        })
        .await
    }

    /// Writes a change `f` makes to (a copy of) the stored CRD, through `sub`.
    async fn write(
        &self,
        name: &str,
        sub: Subresource,
        f: impl Fn(&Value, &mut Value) + Send + Sync,
    ) -> Option<Value> {
        let result = self
            .crds
            .update_with(
                None,
                name,
                sub,
                &WriteOptions::by("kube-apiserver"),
                |cur| {
                    let mut next = cur.clone();
                    f(cur, &mut next);
                    Ok(next)
                },
            )
            .await;
        match result {
            Ok((crd, _)) => Some(crd),
            // A lost race or a deleted CRD comes back through the watch.
            Err(e) if matches!(e.reason, "Conflict" | "NotFound") => {
                tracing::debug!(crd = %name, error = %e, "CRD not written");
                None
            }
            Err(e) => {
                tracing::warn!(crd = %name, error = %e, "CRD not written");
                None
            }
        }
    }
}

fn storage_api_version(crd: &Value) -> Option<String> {
    let group = group_of(crd);
    crd.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name")?.as_str())
        .map(|v| format!("{group}/{v}"))
}

/// One strategy per served version, named with the accepted names.
fn strategies(crd: &Value, accepted: &Value) -> Result<Vec<Arc<dyn ObjectStrategy>>, String> {
    let mut definition = Definition::parse(crd).map_err(|errs| {
        errs.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    let text = |k: &str| accepted.get(k).and_then(Value::as_str).map(str::to_string);
    let names = &mut definition.names;
    names.kind = text("kind").unwrap_or_else(|| names.kind.clone());
    names.list_kind = text("listKind").unwrap_or_else(|| names.list_kind.clone());
    names.singular = text("singular").unwrap_or_else(|| names.singular.clone());
    names.short_names = accepted
        .get("shortNames")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(definition
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| {
            Arc::new(SchemaStrategy::new(
                definition.resource_info(v),
                v.schema.clone(),
            )) as Arc<dyn ObjectStrategy>
        })
        .collect())
}
