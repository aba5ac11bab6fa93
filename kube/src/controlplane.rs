//! What particular built-in resources get from the server's configuration, beyond what
//! every resource gets, as kube-apiserver's `pkg/controlplane` wires their REST storage:
//! Services allocate cluster IPs and node ports, Events (core and events.k8s.io) expire
//! after `--event-ttl`, an EncryptionConfiguration names events.k8s.io Events as
//! core `events` (kube's cohabiting resources), and the built-in groups are decoded as
//! kube's scheme decodes them.
//!
//! The generic layers (`server.rs`, the registry, the storage) name no resource: they
//! take what this module says as data.

use std::sync::Arc;
use std::time::Duration;

use kapi_storage::Storage;

use crate::allocation::{ServiceAllocator, ServiceRanges};
use kapi_apiserver::encryption::Alias;
use kapi_apiserver::endpoints::body_kind::BuiltInGroup;
use kapi_apiserver::registry::StoreOptions;

/// The resources whose objects expire after `--event-ttl`: Events, in both groups.
const EVENTS: [(&str, &str); 2] = [("", "events"), ("events.k8s.io", "events")];

/// Adds to `options` what the built-in resources need: the Service allocator (over
/// `storage`, under the key `prefix`, allocating from `service_ranges`) and the Events'
/// time to live.
pub fn configure_stores(
    options: &mut StoreOptions,
    storage: &Arc<dyn Storage>,
    prefix: &str,
    service_ranges: ServiceRanges,
    event_ttl: Duration,
) {
    options.lifecycles.insert(
        (String::new(), "services".to_string()),
        Arc::new(ServiceAllocator::new(
            storage.clone(),
            prefix,
            service_ranges,
        )),
    );
    for (group, plural) in EVENTS {
        options
            .ttls
            .insert((group.to_string(), plural.to_string()), event_ttl);
    }
}

/// Resources an EncryptionConfiguration knows by another resource's name: kube-apiserver
/// stores events.k8s.io Events with core Events, and its configuration names them both
/// `events`.
pub const ENCRYPTION_NAMES: &[Alias] = &[(("events.k8s.io", "events"), ("", "events"))];

/// kube-apiserver's `legacyscheme.Scheme`, as it names itself in errors.
const LEGACY: &str = "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30";
/// apiextensions-apiserver's scheme, for CustomResourceDefinitions.
const API_EXTENSIONS: &str = "k8s.io/apiextensions-apiserver/pkg/apiserver/apiserver.go:56";

const fn group(group: &'static str, package: &'static str, scheme: &'static str) -> BuiltInGroup {
    BuiltInGroup {
        group,
        package,
        scheme,
    }
}

/// Kubernetes' built-in groups, for the errors about a body of another kind: the Go
/// package of each one's internal types and its scheme. Events of `events.k8s.io`
/// convert to the core group's internal `Event`.
pub const BUILT_IN_GROUPS: &[BuiltInGroup] = &[
    group("", "core", LEGACY),
    group(
        "admissionregistration.k8s.io",
        "admissionregistration",
        LEGACY,
    ),
    group("apiextensions.k8s.io", "apiextensions", API_EXTENSIONS),
    group("apps", "apps", LEGACY),
    group("authentication.k8s.io", "authentication", LEGACY),
    group("authorization.k8s.io", "authorization", LEGACY),
    group("autoscaling", "autoscaling", LEGACY),
    group("batch", "batch", LEGACY),
    group("certificates.k8s.io", "certificates", LEGACY),
    group("coordination.k8s.io", "coordination", LEGACY),
    group("discovery.k8s.io", "discovery", LEGACY),
    group("events.k8s.io", "core", LEGACY),
    group("flowcontrol.apiserver.k8s.io", "flowcontrol", LEGACY),
    group("internal.apiserver.k8s.io", "apiserverinternal", LEGACY),
    group("networking.k8s.io", "networking", LEGACY),
    group("node.k8s.io", "node", LEGACY),
    group("policy", "policy", LEGACY),
    group("rbac.authorization.k8s.io", "rbac", LEGACY),
    group("resource.k8s.io", "resource", LEGACY),
    group("scheduling.k8s.io", "scheduling", LEGACY),
    group("storage.k8s.io", "storage", LEGACY),
    group("storagemigration.k8s.io", "storagemigration", LEGACY),
];

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kapi_apiserver::encryption::{key_prefixes, load};
    use kapi_apiserver::registry::Resources;
    use kapi_storage::encryption::Transformer;

    /// The key prefixes a configuration of `resources` (YAML) encrypts among the
    /// compiled resources.
    fn prefixes_of(resources: &str) -> Vec<(String, Arc<Transformer>)> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("enc.yaml");
        let header = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n";
        std::fs::write(&file, format!("{header}resources:\n{resources}")).unwrap();
        let config = load(Some(&file)).unwrap().unwrap();
        let mut compiled = Resources::new();
        crate::generated::register(&mut compiled);
        let names = super::ENCRYPTION_NAMES;
        key_prefixes(&config, &compiled, "/registry", names)
    }

    #[test]
    fn wildcards_resolve_against_the_compiled_resources() {
        let prefixes = prefixes_of(
            "  - resources: [secrets, leases.coordination.k8s.io, '*.apps']
    providers: [{aescbc: {keys: [{name: k, secret: MDEyMzQ1Njc4OWFiY2RlZg==}]}}]
",
        );
        let keys: Vec<&str> = prefixes.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&"/registry/secrets/"), "{keys:?}");
        assert!(
            keys.contains(&"/registry/coordination.k8s.io/leases/"),
            "{keys:?}"
        );
        assert!(keys.contains(&"/registry/apps/deployments/"), "{keys:?}");
        assert!(!keys.contains(&"/registry/configmaps/"), "{keys:?}");
    }

    #[test]
    fn events_k8s_io_events_are_configured_as_core_events() {
        let prefixes = prefixes_of(
            "  - resources: [events]
    providers: [{aescbc: {keys: [{name: k, secret: MDEyMzQ1Njc4OWFiY2RlZg==}]}}]
  - resources: ['*.*']
    providers: [{identity: {}}]
",
        );
        let encrypted = |key: &str| {
            prefixes
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, t)| t.providers().first().map(|p| p.prefix().to_string()))
        };
        assert_eq!(
            encrypted("/registry/events/"),
            Some(Some("k8s:enc:aescbc:v1:k:".to_string()))
        );
        assert_eq!(
            encrypted("/registry/events.k8s.io/events/"),
            encrypted("/registry/events/")
        );
        let only_secrets = prefixes_of(
            "  - resources: [secrets]
    providers: [{aescbc: {keys: [{name: k, secret: MDEyMzQ1Njc4OWFiY2RlZg==}]}}]
",
        );
        assert!(
            !only_secrets.iter().any(|(k, _)| k.contains("events")),
            "events.k8s.io Events follow core events, not secrets"
        );
    }
}
