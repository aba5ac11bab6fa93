//! Discovery documents, as kube-apiserver serves them for custom resources.
//!
//! - [`api_versions`] (`GET /api`), [`api_group_list`] (`GET /apis`), [`api_group`]
//!   (`GET /apis/{group}`) and [`api_resource_list`] (`GET /api/v1`,
//!   `GET /apis/{group}/{version}`): the unaggregated documents every client understands;
//! - [`aggregated_api`] and [`aggregated_apis`]: `apidiscovery.k8s.io` `APIGroupDiscoveryList`
//!   for `/api` and `/apis`, which kubectl 1.27+ asks for first and which saves it one
//!   request per group-version;
//! - [`negotiate`]: whether an `Accept` header asks for the aggregated form, and in which
//!   version.
//!
//! Every function takes the served resources as `&[Arc<dyn ObjectStrategy>]`, the form
//! the registry holds them in; resource versions with `served: false` are skipped. The
//! documents follow apiextensions-apiserver's discovery controller: a group's versions
//! are ordered by Kubernetes' version priority (`v2` > `v1` > `v1beta2` > `v1beta1` >
//! `v1alpha1` > other names alphabetically) and the first is the preferred version; a
//! resource is followed by its `/status` and `/scale` subresources.

mod aggregated;
mod legacy;
pub(crate) mod negotiate;
pub(crate) mod sha256;

use std::cmp::Ordering;
use std::sync::Arc;

use base64::Engine;
use kapi_core::resource::ExtraSubresource;
use kapi_core::{ObjectStrategy, ResourceInfo};

pub use aggregated::{AggregatedVersion, aggregated_api, aggregated_apis};
pub use legacy::{api_group, api_group_list, api_resource_list, api_versions, group_document};
pub use negotiate::{DiscoveryFormat, negotiate};

/// The verbs kube-apiserver lists for `/status` and `/scale`.
const SUBRESOURCE_VERBS: [&str; 3] = ["get", "patch", "update"];

/// The served resource versions, in registry order.
/// The kind a subresource besides status and scale answers with: the resource's own for
/// one written like the object (`certificatesigningrequests/approval`), the posted kind
/// for a create-only one (`pods/binding` → `Binding`).
/// The group, version and kind of an extra subresource: what a `create` one is posted
/// (its own, or the core kind named after it: `binding` → v1 `Binding`), else the
/// resource's own kind.
fn extra_subresource_kind(
    info: &ResourceInfo,
    extra: &ExtraSubresource,
) -> (String, String, String) {
    if let Some(k) = &extra.kind {
        return (
            k.group.to_string(),
            k.version.to_string(),
            k.kind.to_string(),
        );
    }
    if extra.verbs.iter().any(|v| v == "create") {
        let mut chars = extra.name.chars();
        let kind = chars
            .next()
            .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
            .unwrap_or_default();
        (String::new(), "v1".to_string(), kind)
    } else {
        (
            info.group.to_string(),
            info.version.to_string(),
            info.kind.to_string(),
        )
    }
}

fn served(resources: &[Arc<dyn ObjectStrategy>]) -> impl Iterator<Item = &ResourceInfo> {
    resources.iter().map(|s| s.info()).filter(|i| i.served)
}

/// Kubernetes' version priority (`CompareKubeAwareVersionStrings`): `Less` when `a` comes
/// first. GA before beta before alpha, then higher major, then higher minor; names that
/// are not Kubernetes-like come last, alphabetically.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    match (parse_kube_version(a), parse_kube_version(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// `(stability, major, minor)` of `v<major>[(alpha|beta)<minor>]`, stability 2 for GA.
fn parse_kube_version(v: &str) -> Option<(u8, u64, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let major = rest[..digits].parse().ok()?;
    let rest = &rest[digits..];
    let (stability, minor) = if rest.is_empty() {
        return Some((2, major, 0));
    } else if let Some(m) = rest.strip_prefix("beta") {
        (1, m)
    } else if let Some(m) = rest.strip_prefix("alpha") {
        (0, m)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stability, major, minor.parse().ok()?))
}

/// The served versions of `group`, highest priority first.
fn group_versions(resources: &[Arc<dyn ObjectStrategy>], group: &str) -> Vec<String> {
    let mut versions: Vec<String> = Vec::new();
    for info in served(resources).filter(|i| i.group == group) {
        if !versions.iter().any(|v| *v == info.version) {
            versions.push(info.version.to_string());
        }
    }
    versions.sort_by(|a, b| compare_versions(a, b));
    versions
}

/// The served groups other than the core group, sorted by name.
fn named_groups(resources: &[Arc<dyn ObjectStrategy>]) -> Vec<String> {
    let mut groups: Vec<String> = served(resources)
        .filter(|i| !i.group.is_empty())
        .map(|i| i.group.to_string())
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

/// The served resources of one group-version, sorted by plural name.
fn resources_of<'a>(
    resources: &'a [Arc<dyn ObjectStrategy>],
    group: &str,
    version: &str,
) -> Vec<&'a ResourceInfo> {
    let mut infos: Vec<&ResourceInfo> = served(resources)
        .filter(|i| i.group == group && i.version == version)
        .collect();
    infos.sort_by(|a, b| a.plural.cmp(&b.plural));
    infos
}

/// `storageVersionHash` as kube-apiserver computes it: the first 8 bytes of the SHA-256
/// of `group/version/kind`, base64.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = sha256::sha256(format!("{group}/{version}/{kind}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// The hash of the storage version of `info`'s resource, which every served version of
/// a custom resource reports.
fn storage_hash_for(resources: &[Arc<dyn ObjectStrategy>], info: &ResourceInfo) -> String {
    let storage = resources
        .iter()
        .map(|s| s.info())
        .find(|i| i.group == info.group && i.plural == info.plural && i.storage)
        .unwrap_or(info);
    storage_version_hash(&storage.group, &storage.version, &storage.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_by_kubernetes_priority() {
        let mut v = vec![
            "v1alpha1",
            "foo",
            "v1beta1",
            "v2",
            "v1",
            "v10beta3",
            "v1beta2",
            "bar",
            "v12alpha1",
        ];
        v.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            v,
            [
                "v2",
                "v1",
                "v10beta3",
                "v1beta2",
                "v1beta1",
                "v12alpha1",
                "v1alpha1",
                "bar",
                "foo"
            ]
        );
    }

    #[test]
    fn storage_version_hash_matches_kube_apiserver() {
        // Values served by kube-apiserver for built-in resources.
        assert_eq!(
            storage_version_hash("apps", "v1", "Deployment"),
            "8aSe+NMegvE="
        );
        assert_eq!(storage_version_hash("", "v1", "Pod"), "xPOwRZ+Yhw8=");
    }
}
