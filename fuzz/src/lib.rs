//! Helpers shared by kapi's fuzz targets (`fuzz_targets/`): the server's compiled
//! strategies, the storage-free steps the registry runs around a strategy on create and
//! update, and how a target splits its input.
//!
//! [`create`] and [`update`] follow `kapi_apiserver::registry::Store::create` and
//! `Store::update_with` step by step, without storage, admission or the namespace
//! lookup: the fuzzers need thousands of runs a second, and those parts are not what
//! untrusted bytes reach first.

use std::sync::{Arc, OnceLock};

use kapi_core::meta::{validate_object_meta, validate_object_meta_update};
use kapi_core::{ErrorList, FieldError, FieldPath, ObjectStrategy, ResourceInfo};
use kapi_apiserver::endpoints::patch::PatchType;
use kapi_apiserver::negotiation::decode_body;
use kapi_apiserver::presentation::to_yaml;
use kapi_apiserver::registry::object::{
    keep_server_metadata, meta_str, name, namespace, prune_metadata, set_meta,
};
use kapi_apiserver::status::ApiError;
use serde_json::{Value, json};

/// The namespace every request of the fuzzers is made in.
pub const NAMESPACE: &str = "default";

/// Every resource the `kapi` binary compiles in, sorted by [`resource_name`], so that a
/// selector picks the same strategy on every run.
pub fn strategies() -> &'static [Arc<dyn ObjectStrategy>] {
    static ALL: OnceLock<Vec<Arc<dyn ObjectStrategy>>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut resources = kapi_apiserver::registry::Resources::new();
        kapi_kube::generated::register(&mut resources);
        kapi_custom::generated::register(&mut resources);
        let mut all = resources.strategies().to_vec();
        all.sort_by_key(|s| (resource_name(s.info()), s.info().version.to_string()));
        all
    })
}

/// `plural.group` (`deployments.apps`), or `plural` for the core group (`configmaps`).
pub fn resource_name(info: &ResourceInfo) -> String {
    if info.group.is_empty() {
        info.plural.to_string()
    } else {
        format!("{}.{}", info.plural, info.group)
    }
}

/// The strategy a selector names (`widgets.example.kapi.dev`); any other selector still
/// picks one, by a hash of its bytes, so that mutations reach every kind.
pub fn pick(selector: &[u8]) -> &'static dyn ObjectStrategy {
    let all = strategies();
    let by_name = std::str::from_utf8(selector)
        .ok()
        .and_then(|n| all.iter().find(|s| resource_name(s.info()) == n.trim()));
    let chosen = by_name.unwrap_or_else(|| {
        let hash = selector.iter().fold(0usize, |h, b| {
            h.wrapping_mul(31).wrapping_add(usize::from(*b))
        });
        &all[hash % all.len()]
    });
    chosen.as_ref()
}

/// `data` split at the first `sep`: what is before and what is after (empty when absent).
pub fn split(data: &[u8], sep: u8) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == sep) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// The request's identity rules (`Store::check_identity`): an object, `apiVersion` and
/// `kind` filled in or matching, the namespace of the URL.
fn check_identity(info: &ResourceInfo, obj: &mut Value) -> Result<(), ApiError> {
    let api_version = info.api_version();
    let Some(map) = obj.as_object_mut() else {
        return Err(ApiError::bad_request("not an object"));
    };
    match map.get("apiVersion").and_then(Value::as_str) {
        None | Some("") => {
            map.insert("apiVersion".into(), json!(api_version));
        }
        Some(v) if v == api_version => {}
        Some(_) => return Err(ApiError::bad_request("apiVersion does not match")),
    }
    match map.get("kind").and_then(Value::as_str) {
        None | Some("") => {
            map.insert("kind".into(), json!(info.kind));
        }
        Some(k) if k == info.kind => {}
        Some(_) => return Err(ApiError::bad_request("kind does not match")),
    }
    if info.namespaced() {
        match namespace(obj) {
            "" => set_meta(obj, "namespace", Some(json!(NAMESPACE))),
            NAMESPACE => {}
            _ => return Err(ApiError::bad_request("namespace does not match")),
        }
    } else {
        set_meta(obj, "namespace", None);
    }
    Ok(())
}

/// What pruning would remove, as `fieldValidation=Warn` computes its warnings.
fn unknown_fields(strategy: &dyn ObjectStrategy, obj: &Value) {
    let mut pruned = obj.clone();
    strategy.schema().prune(&mut pruned);
    prune_metadata(&mut pruned);
}

/// `Store::create` on a decoded body, short of storing it: the created object, or the
/// error the client would get.
pub fn create(strategy: &dyn ObjectStrategy, mut obj: Value) -> Result<Value, ApiError> {
    let info = strategy.info();
    check_identity(info, &mut obj)?;
    unknown_fields(strategy, &obj);
    prune_metadata(&mut obj);
    if !meta_str(&obj, "resourceVersion").is_empty() {
        return Err(ApiError::bad_request("resourceVersion is set"));
    }
    if name(&obj).is_empty() {
        let generate = meta_str(&obj, "generateName").to_string();
        if !generate.is_empty() {
            // Fixed instead of random, so that a crash reproduces.
            set_meta(&mut obj, "name", Some(json!(format!("{generate}x7k2p"))));
        }
    }
    let uid = json!("6f1d2c3b-0a9e-4d8f-b7c6-5e4d3c2b1a09");
    let created = json!("2024-01-02T03:04:05Z");
    set_meta(&mut obj, "uid", Some(uid.clone()));
    set_meta(&mut obj, "creationTimestamp", Some(created.clone()));
    strategy.prepare_for_create(&mut obj);
    set_meta(&mut obj, "uid", Some(uid));
    set_meta(&mut obj, "creationTimestamp", Some(created));
    set_meta(&mut obj, "deletionTimestamp", None);
    set_meta(&mut obj, "deletionGracePeriodSeconds", None);
    let mut errs =
        validate_object_meta(obj.get("metadata"), info.namespaced(), strategy.name_rule());
    errs.extend(strategy.validate(&obj));
    if !errs.is_empty() {
        return Err(ApiError::invalid(info, name(&obj), &errs));
    }
    // Stored at revision 1.
    set_meta(&mut obj, "resourceVersion", Some(json!("1")));
    Ok(obj)
}

/// `Store::update_with` for the main resource, with `new` computed from the stored
/// `old`, short of storing it.
pub fn update(
    strategy: &dyn ObjectStrategy,
    mut new: Value,
    old: &Value,
) -> Result<Value, ApiError> {
    let info = strategy.info();
    check_identity(info, &mut new)?;
    if name(&new) != name(old) {
        return Err(ApiError::bad_request("name does not match"));
    }
    let rv = meta_str(&new, "resourceVersion");
    if rv.is_empty() && !strategy.allow_unconditional_update() {
        let errs = vec![FieldError::invalid(
            &FieldPath::new("metadata.resourceVersion"),
            0,
            "must be specified for an update",
        )];
        return Err(ApiError::invalid(info, name(old), &errs));
    }
    if !rv.is_empty() && rv != meta_str(old, "resourceVersion") {
        return Err(ApiError::stale(info, name(old)));
    }
    unknown_fields(strategy, &new);
    prune_metadata(&mut new);
    strategy.prepare_for_update(&mut new, old);
    keep_server_metadata(&mut new, old);
    let mut errs: ErrorList = validate_object_meta_update(
        new.get("metadata"),
        old.get("metadata"),
        info.namespaced(),
        strategy.name_rule(),
    );
    errs.extend(strategy.validate_update(&new, old));
    if !errs.is_empty() {
        return Err(ApiError::invalid(info, name(old), &errs));
    }
    Ok(new)
}

/// The answer the server would send for `result`: the object in JSON and YAML, or the
/// error as a `Status`. With `KAPI_FUZZ_VERBOSE` set, it is printed (to see what an
/// input does: `KAPI_FUZZ_VERBOSE=1 fuzz/target/*/release/body FILE`).
pub fn respond(result: &Result<Value, ApiError>) {
    static VERBOSE: OnceLock<bool> = OnceLock::new();
    let verbose = *VERBOSE.get_or_init(|| std::env::var_os("KAPI_FUZZ_VERBOSE").is_some());
    let answer = match result {
        Ok(obj) => {
            let _ = to_yaml(obj);
            serde_json::to_vec(obj)
        }
        Err(e) => serde_json::to_vec(&e.to_status()),
    };
    // Issue #17: however long what the client sent, an error answers in a bounded body
    // (a message of at most 64 KiB, field errors quoting at most 1 KiB of a value).
    if let (Err(_), Ok(bytes)) = (result, &answer) {
        assert!(
            bytes.len() <= MAX_STATUS_BYTES,
            "a Status of {} bytes",
            bytes.len()
        );
    }
    if verbose {
        eprintln!("{}", String::from_utf8_lossy(&answer.unwrap_or_default()));
    }
}

/// The largest `Status` an error may answer with: its message bounded by
/// `status::MAX_STATUS_MESSAGE_BYTES`, an Invalid's causes by what fits its message.
pub const MAX_STATUS_BYTES: usize = 192 * 1024;

/// The compact JSON length of `v`.
fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map_or(0, |b| b.len())
}

/// A PATCH as `endpoints::resource` serves it, for one patch type. The input is
/// `<resource>\n<stored object as JSON>\0<patch body>`; the patch body is decoded as
/// the patch type's `Content-Type` says (JSON, or YAML for apply).
///
/// The patch is applied to the stored object as given (it must never panic, whatever
/// that object is); when the object is one the server could have stored (it passes
/// [`create`]), the patched result also goes through [`update`], as on the server.
pub fn patch(patch_type: PatchType, content_type: &str, data: &[u8]) {
    let (selector, rest) = split(data, b'\n');
    let (current, body) = split(rest, 0);
    let strategy = pick(selector);
    let Ok(current) = serde_json::from_slice::<Value>(current) else {
        return;
    };
    let Ok(patch) = decode_body(content_type, body).map(|d| d.value) else {
        return;
    };
    let schema = strategy.schema();
    let patched = patch_type.apply(&current, &patch, schema);
    // Issue #17: a patch's result grows by at most what the patch holds, plus what a
    // JSON patch's copies may copy.
    if let Ok(doc) = &patched {
        let bound = json_len(&current)
            + 2 * json_len(&patch)
            + kapi_apiserver::endpoints::patch::MAX_JSON_PATCH_COPY_BYTES;
        assert!(
            json_len(doc) <= bound,
            "a result of {} bytes",
            json_len(doc)
        );
    }
    if patch_type == PatchType::Apply {
        // Apply creates a missing object from the configuration, named by the URL.
        let mut config = patch.clone();
        set_meta(&mut config, "name", Some(json!("applied")));
        respond(&create(strategy, config));
    }
    let Ok(stored) = create(strategy, current) else {
        return;
    };
    let result = patch_type
        .apply(&stored, &patch, schema)
        .and_then(|mut patched| {
            // A patch that does not name a resourceVersion applies to the current one.
            if patch.pointer("/metadata/resourceVersion").is_none() {
                set_meta(
                    &mut patched,
                    "resourceVersion",
                    stored.pointer("/metadata/resourceVersion").cloned(),
                );
            }
            update(strategy, patched, &stored)
        });
    respond(&result);
}

/// Whether `a` and `b` are the same document, numbers compared as `f64` (YAML has no
/// unsigned integers beyond `i64`, so those come back as floats).
pub fn same_document(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_document(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_document(v, w)))
        }
        _ => a == b,
    }
}
