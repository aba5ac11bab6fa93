//! The registry: every served resource version, each with a [`Store`] that joins its
//! strategy to the storage (`pkg/registry/generic/registry` in k8s.io/apiserver).
//!
//! The registry knows resources only through their [`ObjectStrategy`]; what is special
//! about a kind lives in its strategy and hooks.

mod codec;
pub mod keys;
mod lifecycle;
pub mod list;
pub mod object;
pub mod options;
pub mod store;
pub mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;

use kapi_core::{ObjectStrategy, Registrar, ResourceInfo};
use kapi_storage::{Cacher, CacherConfig, Storage};

pub use lifecycle::{Lifecycle, LifecycleError};
pub use options::{
    DeleteOptions, FieldValidation, ListOptions, Propagation, WatchOptions, WriteOptions,
};
pub use store::{Deletion, FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Store, Subresource};
pub use watch::{WatchEvent, WatchEventType};

/// Collects strategies from the generated `register` function (or by hand), before the
/// storage is known.
#[derive(Default)]
pub struct Resources {
    strategies: Vec<Arc<dyn ObjectStrategy>>,
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
}

impl Registrar for Resources {
    fn register(&mut self, strategy: Arc<dyn ObjectStrategy>) {
        if strategy.info().served {
            self.strategies.push(strategy);
        }
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
}

/// Identifies one resource version: group, version, plural.
pub type ResourceKey = (String, String, String);

/// Every served resource version with its store; each store reads through a watch
/// cache ([`Cacher`]) of its resource.
pub struct Registry {
    stores: BTreeMap<ResourceKey, Arc<Store>>,
    order: Vec<Arc<Store>>,
    caches: Vec<Arc<dyn Storage>>,
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
        let namespaces = resources
            .strategies()
            .iter()
            .find(|s| {
                let i = s.info();
                i.group.is_empty() && i.plural == "namespaces"
            })
            .map(|s| {
                Arc::new(NamespaceLookup::new(keys::resource_prefix(
                    prefix,
                    s.info(),
                )))
            });
        let mut stores = BTreeMap::new();
        let mut order = Vec::new();
        // One watch cache per resource prefix (versions of a resource share one).
        let mut caches: BTreeMap<String, Arc<dyn Storage>> = BTreeMap::new();
        for strategy in resources.strategies() {
            let info = strategy.info();
            let resource_prefix = keys::resource_prefix(prefix, info);
            let cached = caches
                .entry(resource_prefix.clone())
                .or_insert_with(|| {
                    Arc::new(Cacher::new(
                        storage.clone(),
                        &resource_prefix,
                        CacherConfig::default(),
                    ))
                })
                .clone();
            let store = Arc::new(Store::new(
                strategy.clone(),
                cached,
                resource_prefix,
                if info.namespaced() {
                    namespaces.clone()
                } else {
                    None
                },
                options
                    .lifecycles
                    .get(&(info.group.to_string(), info.plural.to_string()))
                    .cloned(),
                options
                    .ttls
                    .get(&(info.group.to_string(), info.plural.to_string()))
                    .copied(),
            ));
            stores.insert(
                (
                    info.group.to_string(),
                    info.version.to_string(),
                    info.plural.to_string(),
                ),
                store.clone(),
            );
            order.push(store);
        }
        Self {
            stores,
            order,
            caches: caches.into_values().collect(),
        }
    }

    /// Stops the watch caches (ending their watches); the storage under them stays open
    /// for its owner to close.
    pub async fn close(&self) {
        for cache in &self.caches {
            if let Err(e) = cache.close().await {
                tracing::debug!(error = %e, "closing a watch cache");
            }
        }
    }

    /// The store of one resource version.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<Store>> {
        self.stores
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
    }

    /// Every store, in registration order.
    pub fn stores(&self) -> &[Arc<Store>] {
        &self.order
    }

    /// Every served resource version's description, in registration order.
    pub fn infos(&self) -> Vec<&ResourceInfo> {
        self.order.iter().map(|s| s.info()).collect()
    }

    /// Every served resource version's strategy, in registration order.
    pub fn strategies(&self) -> Vec<Arc<dyn ObjectStrategy>> {
        self.order.iter().map(|s| s.strategy().clone()).collect()
    }
}

/// Where the namespaces live, so that stores of namespaced resources can refuse objects
/// in a namespace that does not exist or is terminating (kube-apiserver's
/// NamespaceLifecycle admission).
pub struct NamespaceLookup {
    prefix: String,
}

impl NamespaceLookup {
    fn new(prefix: String) -> Self {
        Self { prefix }
    }

    /// The storage key of namespace `name`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}
