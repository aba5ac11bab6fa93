//! # kapi-storage
//!
//! The storage seam of kapi: the [`Storage`] trait that the API machinery is written
//! against, and its implementations.
//!
//! - [`interface`]: the trait, its request and response types, and
//!   [`guaranteed_update`], the retried compare-and-swap update (and
//!   [`guaranteed_update_with_ttl`], its variant for keys that expire), and
//!   [`StorageError`], the backend-neutral error ([`interface::error`]);
//! - [`embedded`]: [`EmbeddedStorage`], the default backend, persistent and crash-safe
//!   on redb, with a global revision counter and an event history for watches;
//! - `etcd` (cargo feature `etcd`): `EtcdStorage`, for several replicas over one etcd
//!   cluster;
//! - [`cacher`]: [`Cacher`], the watch cache in front of either backend, serving
//!   stale-tolerant reads and watches of one prefix from memory;
//! - [`encryption`]: encryption at rest, [`EncryptedStorage`] over either backend
//!   (below the cache) with the providers of an [`EncryptionConfig`] file.
//!
//! It must not know resources, kinds, schemas or HTTP: it keeps opaque values under
//! keys and watches them. Which resource a key belongs to is the caller's to say (the
//! encryption configuration is asked by group and resource name); the configuration's
//! parser alone applies k8s.io/apiserver's rules on which names a file may list.

pub mod cacher;
pub mod embedded;
pub mod encryption;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod interface;

pub use cacher::{Cacher, CacherConfig, CacherStats, WatchCacheBudget};
pub use embedded::{CompactionPolicy, EmbeddedConfig, EmbeddedStorage};
pub use encryption::{EncryptedStorage, EncryptionConfig};
#[cfg(feature = "etcd")]
pub use etcd::{EtcdConfig, EtcdStorage};
pub use interface::StorageError;
pub use interface::{
    Deleted, Encodings, Event, EventKind, KeyValue, ListRequest, ListResponse, ProgressRequests,
    ReadAt, Result, Revision, Storage, Update, UpdateAttempts, UpdateError, Updated, ValueMemo,
    WatchItem, WatchStream, guaranteed_update, guaranteed_update_with_ttl,
};
