//! Encryption at rest, as kube-apiserver's `--encryption-provider-config` does it.
//!
//! - [`config`]: the `EncryptionConfiguration` file, parsed and checked into one
//!   [`Transformer`] per resource ([`EncryptionConfig`]);
//! - [`providers`]: the `identity`, `aescbc`, `aesgcm` and `secretbox` providers, with
//!   kube-apiserver's stored format (`k8s:enc:<provider>:v1:<key name>:` and the
//!   ciphertext), so each can read what the other wrote;
//! - [`storage`]: [`EncryptedStorage`], the [`crate::Storage`] that encrypts values of
//!   chosen key prefixes on their way into a backend and decrypts them on the way out.
//!
//! Writes use a resource's first provider; reads use whichever configured provider's
//! prefix the stored value has, so rotating a key is listing the new one first and
//! keeping the old one after it until every value was rewritten
//! ([`EncryptedStorage::rewrite_stale`]).

pub mod config;
pub mod providers;
pub mod storage;

pub use config::{ConfigError, EncryptionConfig, ResourcePattern};
pub use providers::{Decrypted, ENCRYPTED_PREFIX, KeyError, Provider, TransformError, Transformer};
pub use storage::EncryptedStorage;
