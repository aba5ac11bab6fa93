//! Label and field selectors: parsed as `?labelSelector=` and `?fieldSelector=` are,
//! shown and parsed again (the canonical form must read back as the same selector),
//! matched against a fixed Pod, and the whole input read as a query string for list,
//! watch and write options. Input that is JSON is also read as a `metav1.LabelSelector`.
#![no_main]

use std::sync::LazyLock;

use kapi_core::selector::field::{escape_value, unescape_value};
use kapi_core::selector::{FieldSelector, LabelSelector};
use kapi_apiserver::request::Query;
use kapi_apiserver::registry::list::Predicate;
use kapi_apiserver::registry::object::{field_value, labels};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

static POD: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "default",
            "labels": {"app": "web", "tier": "frontend", "version": "3", "example.com/canary": ""}
        },
        "spec": {"nodeName": "node-1", "restartPolicy": "Always", "priority": 10},
        "status": {"phase": "Running", "podIP": "10.0.0.7"}
    })
});

fn label_selector(sel: &LabelSelector) {
    let shown = sel.to_string();
    let again = LabelSelector::parse(&shown)
        .unwrap_or_else(|e| panic!("{shown:?}, shown from {sel:?}, does not parse: {e}"));
    assert_eq!(&again, sel, "{shown:?} parses into another selector");
    let _ = sel.matches(&labels(&POD));
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(sel) = LabelSelector::parse(text) {
        label_selector(&sel);
    }
    if let Ok(sel) = FieldSelector::parse(text) {
        let shown = sel.to_string();
        let again = FieldSelector::parse(&shown)
            .unwrap_or_else(|e| panic!("{shown:?}, shown from {sel:?}, does not parse: {e}"));
        assert_eq!(again, sel, "{shown:?} parses into another selector");
        let _ = sel.matches(|f| field_value(&POD, f));
        let pods = kapi_fuzz::pick(b"pods").info();
        if let Ok(p) = Predicate::new(pods, LabelSelector::everything(), sel) {
            let _ = p.matches(&POD);
        }
    }
    let escaped = escape_value(text);
    assert_eq!(unescape_value(&escaped).ok().as_deref(), Some(text));
    let query = Query::parse(Some(text));
    let _ = query.list_options();
    let _ = query.watch_options();
    let _ = query.write_options("CreateOptions");
    let _ = query.delete_options(None);
    let _ = query.field_selector_with_name("web-0");
    if let Ok(value) = serde_json::from_str::<Value>(text)
        && let Ok(sel) = LabelSelector::from_json(&value)
    {
        label_selector(&sel);
    }
});
