//! Encryption at rest for `kapi serve --encryption-provider-config`: the file is read
//! and checked before the storage opens, and the raw backend is wrapped in a
//! [`EncryptedStorage`] before anything else sees it (the watch caches, the metrics),
//! so that the backend holds ciphertext and everything above it plaintext.
//!
//! The configuration's resources are resolved once, at start: every resource the file
//! names explicitly (served now or added later by a CustomResourceDefinition), and
//! every compiled-in resource a wildcard (`*.apps`, `*.`, `*.*`) matches. Resources a
//! CustomResourceDefinition adds at run time are not matched by wildcards.

use std::path::Path;
use std::sync::Arc;

use kapi_storage::encryption::Transformer;
use kapi_storage::{EncryptedStorage, EncryptionConfig, Storage};

use crate::registry::Resources;
use crate::registry::keys::group_resource_prefix;

/// Reads and checks the configuration file, if one is given; a bad file is an error
/// naming it and every problem in it.
pub fn load(path: Option<&Path>) -> Result<Option<EncryptionConfig>, String> {
    path.map(|p| EncryptionConfig::load(p).map_err(|e| e.to_string()))
        .transpose()
}

/// `storage` encrypting what `config` names among `resources`, under the key prefix
/// `prefix` (`/registry`); `storage` itself when there is no configuration.
pub fn wrap(
    storage: Arc<dyn Storage>,
    config: Option<&EncryptionConfig>,
    resources: &Resources,
    prefix: &str,
    names: &[Alias],
) -> Arc<dyn Storage> {
    let Some(config) = config else {
        return storage;
    };
    let encrypted = EncryptedStorage::new(storage, key_prefixes(config, resources, prefix, names));
    tracing::info!(
        prefixes = ?encrypted.prefixes().collect::<Vec<_>>(),
        "encryption at rest"
    );
    Arc::new(encrypted)
}

/// A resource the configuration knows by another's name: (group, plural) → (group,
/// plural).
pub type Alias = ((&'static str, &'static str), (&'static str, &'static str));

/// The key prefixes `config` encrypts among `resources`, each with its providers. A
/// resource in `names` is looked up by the name given there, and stored under its own.
pub fn key_prefixes(
    config: &EncryptionConfig,
    resources: &Resources,
    prefix: &str,
    names: &[Alias],
) -> Vec<(String, Arc<Transformer>)> {
    let aliased =
        |group: &str, plural: &str| names.iter().any(|(from, _)| *from == (group, plural));
    let known: Vec<(String, String)> = resources
        .strategies()
        .iter()
        .map(|s| (s.info().group.to_string(), s.info().plural.to_string()))
        .filter(|(group, plural)| !aliased(group, plural))
        .collect();
    let mut prefixes = config.key_prefixes(
        known.iter().map(|(g, p)| (g.as_str(), p.as_str())),
        |group, plural| group_resource_prefix(prefix, group, plural),
    );
    for ((group, plural), (as_group, as_plural)) in names {
        if let Some(transformer) = config.transformer_for(as_group, as_plural) {
            prefixes.push((group_resource_prefix(prefix, group, plural), transformer));
        }
    }
    prefixes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_file_is_named() {
        let err = load(Some(Path::new("/nonexistent/enc.yaml"))).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/enc.yaml"), "{err}");
    }
}
