//! What particular built-in resources get from the server's configuration, beyond what
//! every resource gets, as kube-apiserver's `pkg/controlplane` wires their REST storage:
//! Services allocate cluster IPs and node ports, Events (core and events.k8s.io) expire
//! after `--event-ttl`, and an EncryptionConfiguration names events.k8s.io Events as
//! core `events` (kube's cohabiting resources).
//!
//! The generic layers (`server.rs`, the registry, the storage) name no resource: they
//! take what this module says as data.

use std::sync::Arc;
use std::time::Duration;

use kapi_storage::Storage;

use crate::allocation::{ServiceAllocator, ServiceRanges};
use crate::encryption::Alias;
use crate::registry::StoreOptions;

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
