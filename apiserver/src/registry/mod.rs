//! The registry: every served resource version, each with a [`Store`] that joins its
//! strategy to the storage (`pkg/registry/generic/registry` in k8s.io/apiserver).
//!
//! The registry knows resources only through their [`ObjectStrategy`]; what is special
//! about a kind lives in its strategy and hooks.

mod codec;
pub mod conversion;
pub mod informer;
pub mod keys;
mod lifecycle;
pub mod list;
pub mod list_body;
pub mod object;
pub mod options;
pub mod predicate;
pub mod store;
pub mod watch;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, PoisonError, RwLock};

use kapi_core::conversion::VersionConverter;
use kapi_core::{ObjectStrategy, Registrar};
use kapi_storage::cacher::DEFAULT_TOTAL_BUDGET_BYTES;
use kapi_storage::{Cacher, CacherConfig, Storage, WatchCacheBudget};
use tokio::sync::watch as signal;

pub use codec::{JsonList, JsonPiece, SpliceHead, StoredObject, memo_key};
pub use conversion::Converter;
pub use lifecycle::{Lifecycle, LifecycleError};
pub use list::{ListItem, ObjectList};
pub use options::{
    Admission, AdmissionChain, AdmissionRequest, DeleteOptions, FieldValidation, ListOptions,
    Operation, Propagation, WatchOptions, WriteOptions,
};
pub use store::{
    Deletion, FOREGROUND_FINALIZER, MigratedPage, ORPHAN_FINALIZER, Store, StoreSetup, Subresource,
    random_suffix,
};
pub use watch::{WatchEvent, WatchEventType};

/// Collects strategies from the generated `register` function (or by hand), before the
/// storage is known.
#[derive(Default)]
pub struct Resources {
    strategies: Vec<Arc<dyn ObjectStrategy>>,
    /// Generated conversions by `(group, plural)`.
    conversions: BTreeMap<(String, String), Arc<dyn VersionConverter>>,
    /// The `spec.conversion` (JSON) of compiled resources that convert through their
    /// own webhook, by `(group, plural)`.
    conversion_webhooks: BTreeMap<(String, String), String>,
}

impl Resources {
    /// No resources yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The collected strategies, in registration order.
    pub fn strategies(&self) -> &[Arc<dyn ObjectStrategy>] {
        &self.strategies
    }

    /// The conversion webhooks of compiled resources (`spec.conversion` as JSON), by
    /// `(group, plural)`: the server makes their [`Converter`]s
    /// ([`StoreOptions::converters`]).
    pub fn conversion_webhooks(&self) -> &BTreeMap<(String, String), String> {
        &self.conversion_webhooks
    }
}

impl Registrar for Resources {
    fn register(&mut self, strategy: Arc<dyn ObjectStrategy>) {
        if strategy.info().served {
            self.strategies.push(strategy);
        }
    }

    fn register_conversion(
        &mut self,
        group: &str,
        plural: &str,
        converter: Arc<dyn VersionConverter>,
    ) {
        self.conversions
            .insert((group.to_string(), plural.to_string()), converter);
    }

    fn register_conversion_webhook(&mut self, group: &str, plural: &str, conversion: &str) {
        self.conversion_webhooks.insert(
            (group.to_string(), plural.to_string()),
            conversion.to_string(),
        );
    }
}

/// [`Lifecycle`] hooks by `(group, plural)`.
pub type Lifecycles = BTreeMap<(String, String), Arc<dyn Lifecycle>>;

/// What some resources' stores do beyond their strategy, by `(group, plural)`.
#[derive(Clone, Default)]
pub struct StoreOptions {
    /// Work around writes that needs storage of its own (Service IPs).
    pub lifecycles: Lifecycles,
    /// How long an object lives after its last write, as kube-apiserver's Event
    /// registry gives every Event `--event-ttl` (an etcd lease on the etcd backend).
    pub ttls: BTreeMap<(String, String), std::time::Duration>,
    /// The largest stored object (`None`: [`DEFAULT_MAX_OBJECT_BYTES`]).
    pub max_object_bytes: Option<usize>,
    /// The settings of every resource's watch cache. Its
    /// [`total_budget`](CacherConfig::total_budget) is shared by all of them; without
    /// one the registry makes one of [`DEFAULT_TOTAL_BUDGET_BYTES`].
    pub watch_cache: CacherConfig,
    /// How compiled resources without a generated conversion convert, by
    /// `(group, plural)` (their own conversion webhooks).
    pub converters: BTreeMap<(String, String), Arc<dyn Converter>>,
}

/// etcd's default request limit, which bounds kube-apiserver's objects: 1.5 MiB.
pub const DEFAULT_MAX_OBJECT_BYTES: usize = 1_572_864;

/// Identifies one resource version: group, version, plural.
pub type ResourceKey = (String, String, String);

/// How a run-time resource ([`Registry::install`]) is served.
#[derive(Clone, Default)]
pub struct Install {
    /// The `apiVersion` objects are stored in (the CRD's storage version); `None`
    /// stores each object in the version it was written through.
    pub storage_version: Option<String>,
    /// Why creates are refused, when they are: a CRD being deleted takes no new
    /// objects (403, as kube-apiserver's admission answers).
    pub refuse_create: Option<String>,
    /// How objects change between versions, when more than `apiVersion` does (a CRD's
    /// `Webhook` conversion); `None`: only `apiVersion` changes.
    pub converter: Option<Arc<dyn Converter>>,
}

/// What the registry serves at one moment; replaced whole when a run-time resource is
/// installed or removed, so a request works with one consistent view.
#[derive(Clone, Default)]
struct Served {
    stores: BTreeMap<ResourceKey, Arc<Store>>,
    order: Vec<Arc<Store>>,
    /// One watch cache per resource prefix (versions of a resource share one).
    caches: BTreeMap<String, Arc<dyn Storage>>,
}

/// Every served resource version with its store; each store reads through a watch
/// cache ([`Cacher`]) of its resource.
///
/// The compiled resources are fixed at start; run-time ones (CustomResourceDefinitions)
/// come and go with [`Registry::install`] and [`Registry::remove`], and
/// [`Registry::changes`] tells whoever derives documents from the registry.
pub struct Registry {
    storage: Arc<dyn Storage>,
    prefix: String,
    /// The options, the watch caches' total budget filled in: one for all of them.
    options: StoreOptions,
    namespaces: Option<Arc<NamespaceLookup>>,
    /// `(group, plural)` of every compiled resource: run-time ones may not take them.
    compiled: BTreeSet<(String, String)>,
    served: RwLock<Arc<Served>>,
    generation: signal::Sender<u64>,
}

impl Registry {
    /// Builds a store for each resource over `storage`, with keys under `prefix`
    /// (kube-apiserver's default is `/registry`).
    pub fn new(resources: &Resources, storage: Arc<dyn Storage>, prefix: &str) -> Self {
        Self::with_options(resources, storage, prefix, &StoreOptions::default())
    }

    /// Like [`Registry::new`], with per-resource [`StoreOptions`].
    pub fn with_options(
        resources: &Resources,
        storage: Arc<dyn Storage>,
        prefix: &str,
        options: &StoreOptions,
    ) -> Self {
        let mut options = options.clone();
        let budget = options
            .watch_cache
            .total_budget
            .get_or_insert_with(|| Arc::new(WatchCacheBudget::new(DEFAULT_TOTAL_BUDGET_BYTES)));
        crate::metrics::Metrics::global().watch_cache_budget(budget);
        // Every namespaced create looks its namespace up: through the namespaces' own
        // watch cache, made here so that the lookup and the namespaces store share it.
        let mut served = Served::default();
        let namespaces = resources
            .strategies()
            .iter()
            .find(|s| {
                let i = s.info();
                i.group.is_empty() && i.plural == "namespaces"
            })
            .map(|s| {
                let prefix = keys::resource_prefix(prefix, s.info());
                let cache = watch_cache(&storage, &prefix, s.info(), &options.watch_cache);
                served.caches.insert(prefix.clone(), cache.clone());
                Arc::new(NamespaceLookup {
                    prefix,
                    storage: cache,
                })
            });
        let mut registry = Self {
            storage,
            prefix: prefix.to_string(),
            options,
            namespaces,
            compiled: BTreeSet::new(),
            served: RwLock::new(Arc::new(Served::default())),
            generation: signal::Sender::new(0),
        };
        let mut by_resource: BTreeMap<(String, String), Vec<Arc<dyn ObjectStrategy>>> =
            BTreeMap::new();
        for strategy in resources.strategies() {
            let info = strategy.info();
            by_resource
                .entry((info.group.to_string(), info.plural.to_string()))
                .or_default()
                .push(strategy.clone());
        }
        // Registration order is discovery order: keep it.
        for strategy in resources.strategies() {
            let info = strategy.info();
            let resource = (info.group.to_string(), info.plural.to_string());
            let versions = &by_resource[&resource];
            let storage_version = versions
                .iter()
                .find(|s| s.info().storage)
                .map(|s| s.info().api_version());
            let install = Install {
                storage_version,
                converter: resources
                    .conversions
                    .get(&resource)
                    .map(|c| Arc::new(conversion::InProcess(c.clone())) as Arc<dyn Converter>),
                ..Install::default()
            };
            let store = registry.store_for(&mut served, strategy, &install);
            served.stores.insert(resource_key(info), store.clone());
            served.order.push(store);
            registry.compiled.insert(resource);
        }
        registry.served = RwLock::new(Arc::new(served));
        registry
    }

    fn store_for(
        &self,
        served: &mut Served,
        strategy: &Arc<dyn ObjectStrategy>,
        install: &Install,
    ) -> Arc<Store> {
        let info = strategy.info();
        let resource_prefix = keys::resource_prefix(&self.prefix, info);
        // A resource nobody may read (the review APIs: create only, answered and never
        // stored) gets no watch cache, which would watch a prefix that stays empty.
        let cached = if !is_readable(info) {
            self.storage.clone()
        } else {
            served
                .caches
                .entry(resource_prefix.clone())
                .or_insert_with(|| {
                    watch_cache(
                        &self.storage,
                        &resource_prefix,
                        info,
                        &self.options.watch_cache,
                    )
                })
                .clone()
        };
        let resource = (info.group.to_string(), info.plural.to_string());
        Arc::new(Store::new(
            strategy.clone(),
            cached,
            resource_prefix,
            StoreSetup {
                namespaces: if info.namespaced() {
                    self.namespaces.clone()
                } else {
                    None
                },
                lifecycle: self.options.lifecycles.get(&resource).cloned(),
                ttl: self.options.ttls.get(&resource).copied(),
                storage_version: install.storage_version.clone(),
                refuse_create: install.refuse_create.clone(),
                converter: install.converter.clone(),
                max_object_bytes: self
                    .options
                    .max_object_bytes
                    .unwrap_or(DEFAULT_MAX_OBJECT_BYTES),
            },
        ))
    }

    fn snapshot(&self) -> Arc<Served> {
        self.served
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether `(group, plural)` is one of the compiled resources.
    pub fn is_compiled(&self, group: &str, plural: &str) -> bool {
        self.compiled
            .contains(&(group.to_string(), plural.to_string()))
    }

    /// Serves a run-time resource: `versions` are the strategies of its served versions
    /// (all one group and plural), replacing whatever of that resource was served. Its
    /// watch cache is kept across such changes. Refused (false) for a compiled resource
    /// or an empty list.
    pub fn install(&self, versions: &[Arc<dyn ObjectStrategy>], install: &Install) -> bool {
        let Some(first) = versions.first() else {
            return false;
        };
        let (group, plural) = (
            first.info().group.to_string(),
            first.info().plural.to_string(),
        );
        if self.is_compiled(&group, &plural)
            || versions
                .iter()
                .any(|s| s.info().group != group || s.info().plural != plural)
        {
            return false;
        }
        let mut guard = self.served.write().unwrap_or_else(PoisonError::into_inner);
        let mut served = Served::clone(&guard);
        served
            .order
            .retain(|s| !is_resource(s.info(), &group, &plural));
        served.stores.retain(|k, _| k.0 != group || k.2 != plural);
        for strategy in versions {
            let store = self.store_for(&mut served, strategy, install);
            served
                .stores
                .insert(resource_key(strategy.info()), store.clone());
            served.order.push(store);
        }
        *guard = Arc::new(served);
        drop(guard);
        self.generation.send_modify(|g| *g += 1);
        true
    }

    /// Stops serving a run-time resource and closes its watch cache. Compiled resources
    /// stay.
    pub async fn remove(&self, group: &str, plural: &str) {
        if self.is_compiled(group, plural) {
            return;
        }
        let cache = {
            let mut guard = self.served.write().unwrap_or_else(PoisonError::into_inner);
            let mut served = Served::clone(&guard);
            let before = served.order.len();
            served
                .order
                .retain(|s| !is_resource(s.info(), group, plural));
            if served.order.len() == before {
                return;
            }
            served.stores.retain(|k, _| k.0 != group || k.2 != plural);
            let prefix = keys::group_resource_prefix(&self.prefix, group, plural);
            let cache = served.caches.remove(&prefix);
            *guard = Arc::new(served);
            cache
        };
        self.generation.send_modify(|g| *g += 1);
        if let Some(cache) = cache {
            if let Err(e) = cache.close().await {
                tracing::debug!(error = %e, "closing a watch cache");
            }
        }
    }

    /// The memory budget every watch cache of the registry shares; its
    /// [`used`](WatchCacheBudget::used) is what their event windows hold now.
    pub fn watch_cache_budget(&self) -> Option<&Arc<WatchCacheBudget>> {
        self.options.watch_cache.total_budget.as_ref()
    }

    /// Counts changes to what is served; receivers see each new count.
    pub fn changes(&self) -> signal::Receiver<u64> {
        self.generation.subscribe()
    }

    /// How many times what is served has changed.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Stops the watch caches (ending their watches); the storage under them stays open
    /// for its owner to close.
    pub async fn close(&self) {
        for cache in self.snapshot().caches.values() {
            if let Err(e) = cache.close().await {
                tracing::debug!(error = %e, "closing a watch cache");
            }
        }
    }

    /// The store of one resource version.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Store>> {
        self.snapshot()
            .stores
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Every store, compiled ones first in registration order, then run-time ones.
    pub fn stores(&self) -> Vec<Arc<Store>> {
        self.snapshot().order.clone()
    }

    /// Every served resource version's strategy, in the order of [`Registry::stores`].
    pub fn strategies(&self) -> Vec<Arc<dyn ObjectStrategy>> {
        self.snapshot()
            .order
            .iter()
            .map(|s| s.strategy().clone())
            .collect()
    }
}

fn resource_key(info: &kapi_core::ResourceInfo) -> ResourceKey {
    (
        info.group.to_string(),
        info.version.to_string(),
        info.plural.to_string(),
    )
}

/// A watch cache of `prefix` over `storage`, its consistent reads reported in the
/// metrics under the resource's group-resource, as kube names it.
fn watch_cache(
    storage: &Arc<dyn Storage>,
    prefix: &str,
    info: &kapi_core::ResourceInfo,
    config: &kapi_storage::CacherConfig,
) -> Arc<dyn Storage> {
    let cache = Arc::new(Cacher::new(storage.clone(), prefix, config.clone()));
    let resource = if info.group.is_empty() {
        info.plural.to_string()
    } else {
        format!("{}.{}", info.plural, info.group)
    };
    crate::metrics::Metrics::global().watch_cache(&resource, &cache);
    cache
}

/// Whether a resource's objects can be read at all: it serves `get`, `list` or
/// `watch`.
pub fn is_readable(info: &kapi_core::ResourceInfo) -> bool {
    ["get", "list", "watch"].iter().any(|v| info.serves(v))
}

fn is_resource(info: &kapi_core::ResourceInfo, group: &str, plural: &str) -> bool {
    info.group == group && info.plural == plural
}

/// Where the namespaces live, so that stores of namespaced resources can refuse objects
/// in a namespace that does not exist or is terminating (kube-apiserver's
/// NamespaceLifecycle admission).
pub struct NamespaceLookup {
    prefix: String,
    /// The namespaces' watch cache.
    storage: Arc<dyn Storage>,
}

impl NamespaceLookup {
    /// The storage namespaces are read from (their watch cache).
    pub fn storage(&self) -> &dyn Storage {
        self.storage.as_ref()
    }

    /// The storage key of namespace `name`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}

/// What the crate's unit tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use kapi_core::ResourceInfo;

    /// The `ResourceInfo` of a namespaced `widgets.example.kapi.dev` served at
    /// `version`, from a minimal CRD.
    pub fn widget_info(version: &str) -> ResourceInfo {
        let crd =
            kapi_core::crd::CustomResourceDefinition::parse(&kapi_testing::widget_crd(version))
                .unwrap();
        crd.resource_info(&crd.versions[0])
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use kapi_core::SchemaStrategy;
    use kapi_core::schema::Schema;

    use super::*;

    fn strategy(
        version: &str,
        verbs: Cow<'static, [Cow<'static, str>]>,
    ) -> Arc<dyn ObjectStrategy> {
        let mut info = test_support::widget_info(version);
        info.verbs = verbs;
        let schema = Schema::parse(&serde_json::json!({"type": "object"})).unwrap();
        Arc::new(SchemaStrategy::new(info, schema))
    }

    #[tokio::test]
    async fn only_readable_resources_get_a_watch_cache() {
        let dir = tempfile::tempdir().unwrap();
        let storage: Arc<dyn Storage> =
            Arc::new(kapi_storage::EmbeddedStorage::open(dir.path()).unwrap());
        let mut resources = Resources::new();
        resources.register(strategy("v1", vec![Cow::Borrowed("create")].into()));
        let registry = Registry::new(&resources, storage.clone(), "/registry");
        assert!(registry.get("example.kapi.dev", "v1", "widgets").is_some());
        assert!(registry.snapshot().caches.is_empty());

        let mut resources = Resources::new();
        resources.register(strategy("v1", kapi_core::resource::ALL_VERBS));
        let registry = Registry::new(&resources, storage, "/registry");
        let caches = registry
            .snapshot()
            .caches
            .keys()
            .cloned()
            .collect::<Vec<_>>();
        assert_eq!(caches, ["/registry/example.kapi.dev/widgets/"]);
        registry.close().await;
    }
}
