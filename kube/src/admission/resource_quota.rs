//! ResourceQuota for object counts, as kube-apiserver's quota admission and
//! kube-controller-manager's resourcequota controller do it together:
//!
//! - admission charges every create in a namespace against each quota there that
//!   limits the resource (`count/<resource>[.<group>]`, or the legacy names such as
//!   `configmaps`, `secrets` and `pods`), with a compare-and-swap on the quota's
//!   `status.used`, so two concurrent creates cannot both take the last unit; a create
//!   over the limit is refused with 403 and kube's `exceeded quota` message;
//! - the controller ([`crate::controllers::resource_quota`]) recounts `status.used`,
//!   which gives back what deletes and refused writes took, and copies `spec.hard` to
//!   `status.hard`.
//!
//! Compute resources (`requests.cpu`, `limits.memory`, ...), scopes and scope
//! selectors are not evaluated.

use std::time::Duration;

use kapi_core::ResourceInfo;
use kapi_storage::ReadAt;
use serde_json::{Value, json};

use kapi_apiserver::expiring::ExpiringMap;
use kapi_apiserver::registry::list::ListItem;
use kapi_apiserver::registry::{
    AdmissionRequest, ListOptions, Registry, Store, Subresource, WriteOptions,
};
use kapi_apiserver::status::ApiError;

/// How long a live list that found no quota in a namespace is trusted (kube's quota
/// admission: `liveTTL`).
const LIVE_LOOKUP_TTL: Duration = Duration::from_secs(30);

/// Namespaces remembered at most (kube keeps 100 in an LRU).
const LIVE_LOOKUPS: usize = 1024;

/// The namespaces a live list found without quotas, each until when that is trusted:
/// kube's `liveLookupCache`. Quotas are read from the watch cache, as kube reads them
/// from its informer; only a namespace the cache shows none in is listed live, at most
/// once in [`LIVE_LOOKUP_TTL`], so that a create does not cost a quorum read of etcd
/// (a second etcd request per create, besides its write) in the usual namespace with
/// no quota.
#[derive(Debug)]
pub struct LiveLookups(ExpiringMap<()>);

impl Default for LiveLookups {
    fn default() -> Self {
        Self(ExpiringMap::new(LIVE_LOOKUPS))
    }
}

impl LiveLookups {
    fn trusted(&self, namespace: &str) -> bool {
        self.0.get(namespace).is_some()
    }

    fn found_none(&self, namespace: &str) {
        self.0.insert(namespace.to_string(), (), LIVE_LOOKUP_TTL);
    }
}

/// The quotas of `namespace`, as kube's quota admission finds them: from the cache,
/// and live when the cache has none and no live list found none within the TTL.
async fn quotas_in(
    quotas: &Store,
    namespace: &str,
    lookups: &LiveLookups,
) -> Result<Vec<ListItem>, ApiError> {
    let cached = ListOptions {
        read_at: ReadAt::Any,
        ..ListOptions::default()
    };
    let items = quotas.list_objects(Some(namespace), &cached).await?.items;
    if !items.is_empty() || lookups.trusted(namespace) {
        return Ok(items);
    }
    let items = quotas
        .list_objects(Some(namespace), &ListOptions::default())
        .await?
        .items;
    if items.is_empty() {
        lookups.found_none(namespace);
    }
    Ok(items)
}

/// The core resources quota counts under their bare (legacy) names.
const LEGACY_NAMES: [&str; 7] = [
    "pods",
    "services",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "replicationcontrollers",
    "resourcequotas",
];

/// The quota names that count objects of `info`'s resource.
pub fn names_for(info: &ResourceInfo) -> Vec<String> {
    let mut names = Vec::new();
    if info.group.is_empty() {
        names.push(format!("count/{}", info.plural));
        if LEGACY_NAMES.contains(&info.plural.as_ref()) {
            names.push(info.plural.to_string());
        }
    } else {
        names.push(format!("count/{}.{}", info.plural, info.group));
    }
    names
}

/// The resource (group, plural) an object-count quota name counts, if it is one.
pub fn resource_of(name: &str) -> Option<(&str, &str)> {
    if let Some(rest) = name.strip_prefix("count/") {
        return Some(match rest.split_once('.') {
            Some((plural, group)) => (group, plural),
            None => ("", rest),
        });
    }
    LEGACY_NAMES.contains(&name).then_some(("", name))
}

/// An object count from a quantity such as `10` or `1k`; `None` for anything else.
pub fn parse_count(quantity: &str) -> Option<i64> {
    let q = quantity.trim();
    let (digits, factor) = match q.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (q, 1),
        Some((i, _)) => (
            &q[..i],
            match &q[i..] {
                "k" => 1_000,
                "M" => 1_000_000,
                "G" => 1_000_000_000,
                "Ki" => 1 << 10,
                "Mi" => 1 << 20,
                "Gi" => 1 << 30,
                _ => return None,
            },
        ),
    };
    digits.parse::<i64>().ok()?.checked_mul(factor)
}

/// The served store of a resource, in any version (counts do not depend on it).
pub fn store_of(registry: &Registry, group: &str, plural: &str) -> Option<std::sync::Arc<Store>> {
    registry
        .stores()
        .into_iter()
        .filter(|s| s.info().group == group && s.info().plural == plural)
        .max_by_key(|s| s.info().storage)
}

/// How many objects of a resource a namespace holds now.
pub async fn count(
    registry: &Registry,
    namespace: &str,
    group: &str,
    plural: &str,
) -> Result<i64, ApiError> {
    let Some(store) = store_of(registry, group, plural) else {
        return Ok(0);
    };
    let list = store
        .list_objects(Some(namespace), &ListOptions::default())
        .await?;
    Ok(list.items.len() as i64)
}

/// Charges a create against the namespace's quotas, or refuses it.
pub async fn charge(
    registry: &Registry,
    lookups: &LiveLookups,
    request: &AdmissionRequest<'_>,
) -> Result<(), ApiError> {
    let Some(namespace) = request.namespace else {
        return Ok(());
    };
    if !request.subresource.is_empty() {
        return Ok(());
    }
    let Some(quotas) = registry.get("", "v1", "resourcequotas") else {
        return Ok(());
    };
    let names = names_for(request.info);
    let mut counted = None;
    for item in quotas_in(&quotas, namespace, lookups).await? {
        let quota = match item.decoded {
            Some(q) => q,
            None => item.stored.decode(quotas.info())?,
        };
        let limited: Vec<(String, i64)> = names
            .iter()
            .filter_map(|n| {
                let hard = quota["spec"]["hard"][n].as_str()?;
                Some((n.clone(), parse_count(hard)?))
            })
            .collect();
        if limited.is_empty() {
            continue;
        }
        // Usage the controller has not recorded yet is counted here.
        if counted.is_none()
            && limited
                .iter()
                .any(|(n, _)| quota["status"]["used"][n].as_str().is_none())
        {
            counted = Some(
                count(
                    registry,
                    namespace,
                    &request.info.group,
                    &request.info.plural,
                )
                .await?,
            );
        }
        let quota_name = quota["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let opts = WriteOptions {
            dry_run: request.dry_run,
            ..WriteOptions::by(crate::APISERVER_MANAGER)
        };
        let charged = quotas
            .update_with(Some(namespace), &quota_name, Subresource::Status, &opts, |current| {
                let mut next = current.clone();
                for (name, hard) in &limited {
                    let used = current["status"]["used"][name]
                        .as_str()
                        .and_then(parse_count)
                        .or(counted)
                        .unwrap_or(0);
                    if used + 1 > *hard {
                        return Err(ApiError::forbidden(
                            request.info,
                            request.name,
                            &format!(
                                "exceeded quota: {quota_name}, requested: {name}=1, used: {name}={used}, limited: {name}={hard}"
                            ),
                        ));
                    }
                    set_used(&mut next, name, used + 1);
                }
                Ok(next)
            })
            .await;
        match charged {
            // Deleted since the watch cache listed it: it limits nothing any more.
            Err(e) if e.code == http::StatusCode::NOT_FOUND => {}
            Err(e) => return Err(e),
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Sets `status.used[name]` (and `status.hard` from the spec), creating what is missing.
pub fn set_used(quota: &mut Value, name: &str, used: i64) {
    let hard = quota["spec"]["hard"].clone();
    let status = quota
        .as_object_mut()
        .map(|o| o.entry("status").or_insert_with(|| json!({})));
    let Some(Value::Object(status)) = status else {
        return;
    };
    status.insert("hard".into(), hard);
    let used_map = status.entry("used").or_insert_with(|| json!({}));
    if let Value::Object(m) = used_map {
        m.insert(name.to_string(), json!(used.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_names_map_to_resources() {
        assert_eq!(resource_of("count/configmaps"), Some(("", "configmaps")));
        assert_eq!(
            resource_of("count/deployments.apps"),
            Some(("apps", "deployments"))
        );
        assert_eq!(
            resource_of("count/widgets.example.kapi.dev"),
            Some(("example.kapi.dev", "widgets"))
        );
        assert_eq!(resource_of("secrets"), Some(("", "secrets")));
        assert_eq!(resource_of("requests.cpu"), None);
    }

    #[test]
    fn a_namespace_found_without_quotas_is_trusted_for_a_while_and_the_memory_is_bounded() {
        let lookups = LiveLookups::default();
        assert!(!lookups.trusted("a"));
        lookups.found_none("a");
        assert!(lookups.trusted("a") && !lookups.trusted("b"));
        for i in 0..LIVE_LOOKUPS + 10 {
            lookups.found_none(&format!("ns-{i}"));
        }
        let held = lookups.0.len();
        assert!(held <= LIVE_LOOKUPS, "{held}");
        assert!(lookups.trusted(&format!("ns-{}", LIVE_LOOKUPS + 9)));
        lookups.0.insert("old".to_string(), (), Duration::ZERO);
        assert!(!lookups.trusted("old"));
    }

    #[test]
    fn counts_parse_with_suffixes() {
        assert_eq!(parse_count("2"), Some(2));
        assert_eq!(parse_count("1k"), Some(1000));
        assert_eq!(parse_count("2Ki"), Some(2048));
        assert_eq!(parse_count("500m"), None);
        assert_eq!(parse_count("x"), None);
    }

    #[test]
    fn used_is_recorded_with_hard() {
        let mut q = json!({"spec": {"hard": {"count/configmaps": "2"}}});
        set_used(&mut q, "count/configmaps", 1);
        assert_eq!(q["status"]["used"]["count/configmaps"], "1");
        assert_eq!(q["status"]["hard"]["count/configmaps"], "2");
    }
}
