//! Resource-specific work around a store's writes that needs storage of its own, and so
//! cannot live in a strategy (strategies are synchronous and see only the object): a
//! Service's cluster IP and node ports are reserved before it is written and released
//! once it is gone, as kube-apiserver's service REST does in `BeginCreate` and
//! `AfterDelete`.

use async_trait::async_trait;
use kapi_core::ErrorList;
use kapi_storage::StorageError;
use serde_json::Value;

/// Hooks a [`Store`](super::Store) runs around creates and deletes of one resource.
#[async_trait]
pub trait Lifecycle: Send + Sync {
    /// After the strategy prepared and validated a new object, before it is written:
    /// reserve what it needs and write that into the object. An error refuses the
    /// create; nothing stays reserved.
    async fn begin_create(&self, obj: &mut Value) -> Result<(), LifecycleError>;

    /// The write after a successful [`Lifecycle::begin_create`] failed: release what it
    /// reserved.
    async fn abort_create(&self, obj: &Value);

    /// The object is gone from storage: release what it held.
    async fn after_delete(&self, obj: &Value);
}

/// Why [`Lifecycle::begin_create`] refused an object.
#[derive(Debug)]
pub enum LifecycleError {
    /// The object asks for something it cannot have (422, with field errors).
    Invalid(ErrorList),
    /// The storage failed.
    Storage(StorageError),
    /// Nothing is left to allocate, or another server-side failure (500).
    Internal(String),
}
