//! Request bodies: arbitrary bytes decoded as the endpoints decode a create or update
//! body (JSON, then YAML), then created, updated and status-updated through one of the
//! server's compiled strategies, and answered in JSON, YAML or as a `Status`.
//!
//! Input: `<resource>\n<body>`, e.g. `deployments.apps\n{"spec": ...}`; an unknown
//! resource name still picks a strategy (see `kapi_fuzz::pick`).
#![no_main]

use kapi_fuzz::{create, pick, respond, same_document, split, update};
use kapi_apiserver::negotiation::decode_body;
use kapi_apiserver::presentation::to_yaml;
use kapi_apiserver::registry::object::set_meta;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let (selector, body) = split(data, b'\n');
    let strategy = pick(selector);
    for content_type in ["application/json", "application/yaml"] {
        let Ok(decoded) = decode_body(content_type, body) else {
            continue;
        };
        // What the server answers in YAML reads back as the same document.
        let yaml = to_yaml(&decoded.value);
        let back = decode_body("application/yaml", yaml.as_bytes())
            .unwrap_or_else(|e| panic!("to_yaml's output does not decode: {}", e.message));
        assert!(
            same_document(&decoded.value, &back.value),
            "YAML round trip changed {} into {}",
            decoded.value,
            back.value
        );
        let created = create(strategy, decoded.value.clone());
        respond(&created);
        let Ok(stored) = created else {
            continue;
        };
        // The same body as an update of what was stored, and as a status update.
        let mut again = decoded.value;
        set_meta(&mut again, "resourceVersion", Some(json!("1")));
        set_meta(
            &mut again,
            "name",
            stored.pointer("/metadata/name").cloned(),
        );
        let mut status = again.clone();
        respond(&update(strategy, again, &stored));
        strategy.prepare_for_status_update(&mut status, &stored);
        let _ = strategy.validate_update(&status, &stored);
        // And the stored object written back unchanged.
        respond(&update(strategy, stored.clone(), &stored));
    }
});
