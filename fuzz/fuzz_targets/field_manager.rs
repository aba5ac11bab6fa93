//! Field management on every write of a compiled kind: an object created by one
//! manager, then an arbitrary configuration applied to it by two others (the second
//! forced), and the result updated again; every step either answers an error or
//! leaves `managedFields` that read back, with no panic.
//!
//! Input: `<resource>\n<stored object as JSON>\0<configuration as JSON>`.
#![no_main]

use kapi_core::fieldmanager::{FieldManager, Target, entries};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let (selector, rest) = kapi_fuzz::split(data, b'\n');
    let (stored, config) = kapi_fuzz::split(rest, 0);
    let strategy = kapi_fuzz::pick(selector);
    let info = strategy.info();
    let (Ok(stored), Ok(config)) = (
        serde_json::from_slice::<Value>(stored),
        serde_json::from_slice::<Value>(config),
    ) else {
        return;
    };
    let Ok(live) = kapi_fuzz::create(strategy, stored) else {
        return;
    };
    let target = Target::Main {
        has_status: info.subresources.status,
    };
    let fm = FieldManager::new(strategy.schema(), info.api_version(), &info.kind, target);
    let now = "2024-01-02T03:04:05Z";
    let mut created = live.clone();
    fm.update(&serde_json::json!({}), &mut created, "creator", now);
    check(&created);
    for (manager, force) in [("alice", false), ("bob", true)] {
        if let Ok(applied) = fm.apply(&created, &config, manager, force, now) {
            check(&applied);
            let mut updated = applied.clone();
            fm.update(&applied, &mut updated, "editor", now);
            check(&updated);
        }
    }
});

/// The object's `managedFields`, if any, read back as kube reads them.
fn check(obj: &Value) {
    if let Some(list) = entries::of(obj) {
        entries::decode(list).unwrap_or_else(|e| panic!("unreadable managedFields: {e}: {list}"));
    }
}
