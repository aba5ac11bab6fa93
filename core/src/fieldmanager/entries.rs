//! `metadata.managedFields`: its entries read into [`Managed`] (every manager's set
//! and time, by kube's manager identifier) and written back, as kube's
//! `DecodeManagedFields` and `encodeManagedFields` do; and the cap on update managers
//! (`capManagersManager`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::managedfields::{
    ManagerSet, Managers, Operation, fieldsv1, manager_identifier, parse_manager_identifier,
};

/// The most `Update` entries an object keeps (kube's `DefaultMaxUpdateManagers`); the
/// oldest beyond it are merged into `ancient-changes` entries, one per API version.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The manager older update entries are merged into.
const ANCIENT_CHANGES: &str = "ancient-changes";

/// Every manager's fields and the time of its last write, by manager identifier.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Managed {
    /// The field sets.
    pub fields: Managers,
    /// When each manager last changed the object (RFC 3339, seconds), if known.
    pub times: BTreeMap<String, String>,
}

/// Why `metadata.managedFields` cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EntriesError(pub String);

/// The `managedFields` of `obj`, absent when it has none.
pub fn of(obj: &Value) -> Option<&Value> {
    obj.get("metadata")?
        .get("managedFields")
        .filter(|v| !v.is_null())
}

/// Reads `managedFields` entries (kube's `DecodeManagedFields`): each must be an
/// `Apply` or `Update` with an `apiVersion` and `fieldsType: FieldsV1`.
pub fn decode(entries: &Value) -> Result<Managed, EntriesError> {
    let list = entries
        .as_array()
        .ok_or_else(|| EntriesError("managedFields must be a list".into()))?;
    let mut managed = Managed::default();
    for (i, entry) in list.iter().enumerate() {
        let text = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or("");
        let operation = match text("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return Err(EntriesError("operation must be `Apply` or `Update`".into())),
        };
        let api_version = text("apiVersion");
        if api_version.is_empty() {
            return Err(EntriesError("apiVersion must not be empty".into()));
        }
        match text("fieldsType") {
            "FieldsV1" => {}
            "" => {
                return Err(EntriesError(format!(
                    "missing fieldsType in managed fields entry {i}"
                )));
            }
            other => {
                return Err(EntriesError(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                )));
            }
        }
        let id = manager_identifier(text("manager"), operation, api_version, text("subresource"));
        let set = match entry.get("fieldsV1") {
            None | Some(Value::Null) => Default::default(),
            Some(doc) => fieldsv1::decode(doc)
                .map_err(|e| EntriesError(format!("error decoding set: {e}")))?,
        };
        if let Some(time) = entry.get("time").and_then(Value::as_str) {
            managed.times.insert(id.clone(), time.to_string());
        }
        managed.fields.insert(
            id,
            ManagerSet {
                set,
                api_version: api_version.to_string(),
                applied: operation == Operation::Apply,
            },
        );
    }
    Ok(managed)
}

/// Whether a client's `managedFields` ask to start over (kube's
/// `isResetManagedFields`): an empty list, or one empty entry.
pub fn is_reset(entries: &Value) -> bool {
    match entries.as_array().map(Vec::as_slice) {
        Some([]) => true,
        Some([only]) => only.as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// The entries of `managed` (kube's `encodeManagedFields`), sorted as kube sorts them:
/// by operation, time, manager, API version and subresource; `None` when there are
/// none.
pub fn encode(managed: &Managed) -> Option<Value> {
    if managed.fields.is_empty() {
        return None;
    }
    let mut entries: Vec<(SortKey, Value)> = managed
        .fields
        .iter()
        .map(|(id, set)| {
            let info = parse_manager_identifier(id).unwrap_or_default();
            let operation = if set.applied { "Apply" } else { "Update" };
            let time = managed.times.get(id);
            let mut entry = Map::new();
            if !info.manager.is_empty() {
                entry.insert("manager".into(), json!(info.manager));
            }
            entry.insert("operation".into(), json!(operation));
            entry.insert("apiVersion".into(), json!(set.api_version));
            if let Some(time) = time {
                entry.insert("time".into(), json!(time));
            }
            entry.insert("fieldsType".into(), json!("FieldsV1"));
            entry.insert("fieldsV1".into(), fieldsv1::to_value(&set.set));
            if !info.subresource.is_empty() {
                entry.insert("subresource".into(), json!(info.subresource));
            }
            let key = SortKey {
                operation,
                // RFC 3339 in UTC with whole seconds sorts as the time does.
                time: time.cloned().unwrap_or_default(),
                manager: info.manager,
                api_version: set.api_version.clone(),
                subresource: info.subresource,
            };
            (key, Value::Object(entry))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Some(Value::Array(entries.into_iter().map(|(_, e)| e).collect()))
}

/// kube's order of entries (`sortEncodedManagedFields`).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct SortKey {
    operation: &'static str,
    time: String,
    manager: String,
    api_version: String,
    subresource: String,
}

/// Merges the oldest `Update` entries into `ancient-changes` entries (one per API
/// version) until at most [`MAX_UPDATE_MANAGERS`] remain (kube's
/// `capUpdateManagers`).
pub fn cap_update_managers(managed: &mut Managed) {
    let mut updaters: Vec<String> = managed
        .fields
        .iter()
        .filter(|(_, m)| !m.applied)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    let time = |id: &String| managed.times.get(id).cloned().unwrap_or_default();
    updaters.sort_by_key(|id| (time(id), id.clone()));
    let mut first_of_version: BTreeMap<String, String> = BTreeMap::new();
    let mut count = updaters.len();
    for id in updaters {
        if count <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(entry) = managed.fields.get(&id).cloned() else {
            continue;
        };
        let version = entry.api_version.clone();
        let bucket = manager_identifier(ANCIENT_CHANGES, Operation::Update, &version, "");
        match first_of_version.get(&version) {
            None => {
                first_of_version.insert(version, id);
            }
            Some(first) => {
                if !managed.fields.contains_key(&bucket) {
                    if let Some(s) = managed.fields.remove(first) {
                        managed.fields.insert(bucket.clone(), s);
                    }
                }
                let merged = managed.fields[&bucket].set.union(&entry.set);
                managed.fields.insert(
                    bucket.clone(),
                    ManagerSet {
                        set: merged,
                        api_version: version,
                        applied: false,
                    },
                );
                managed.fields.remove(&id);
                count -= 1;
                // The bucket takes the time of the newer update merged into it.
                match managed.times.remove(&id) {
                    Some(t) => managed.times.insert(bucket, t),
                    None => managed.times.remove(&bucket),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(manager: &str, operation: &str, time: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": "v1",
               "time": time, "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    #[test]
    fn entries_round_trip_in_kubes_order() {
        let entries = json!([
            entry(
                "kubectl",
                "Update",
                "2026-01-02T00:00:00Z",
                json!({"f:data": {".": {}, "f:a": {}}})
            ),
            entry(
                "alice",
                "Apply",
                "2026-01-03T00:00:00Z",
                json!({"f:data": {"f:b": {}}})
            ),
            entry(
                "bob",
                "Update",
                "2026-01-01T00:00:00Z",
                json!({"f:data": {"f:c": {}}})
            ),
        ]);
        let managed = decode(&entries).unwrap();
        assert_eq!(managed.fields.len(), 3);
        let alice = manager_identifier("alice", Operation::Apply, "v1", "");
        assert!(managed.fields[&alice].applied);
        let out = encode(&managed).unwrap();
        let names: Vec<&str> = out
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        // Apply before Update, then by time.
        assert_eq!(names, ["alice", "bob", "kubectl"]);
        assert_eq!(out[2], entries[0]);
        assert_eq!(encode(&Managed::default()), None);
    }

    #[test]
    fn bad_entries_are_errors_and_empty_ones_reset() {
        let bad_op = json!([{"manager": "a", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}]);
        assert_eq!(
            decode(&bad_op).unwrap_err().0,
            "operation must be `Apply` or `Update`"
        );
        let no_type = json!([{"manager": "a", "operation": "Apply", "apiVersion": "v1"}]);
        assert_eq!(
            decode(&no_type).unwrap_err().0,
            "missing fieldsType in managed fields entry 0"
        );
        let no_version = json!([{"manager": "a", "operation": "Apply", "fieldsType": "FieldsV1"}]);
        assert!(decode(&no_version).is_err());
        assert!(is_reset(&json!([])));
        assert!(is_reset(&json!([{}])));
        assert!(!is_reset(&json!([{}, {}])));
        assert!(!is_reset(&bad_op));
    }

    #[test]
    fn the_oldest_update_managers_are_merged_past_ten() {
        let mut list = Vec::new();
        for i in 0..12 {
            let time = format!("2026-01-01T00:00:{i:02}Z");
            let field = format!("f:k{i}");
            list.push(entry(
                &format!("m{i:02}"),
                "Update",
                &time,
                json!({"f:data": {field: {}}}),
            ));
        }
        list.push(entry(
            "applier",
            "Apply",
            "2026-01-01T00:00:00Z",
            json!({"f:data": {"f:x": {}}}),
        ));
        let mut managed = decode(&Value::Array(list)).unwrap();
        cap_update_managers(&mut managed);
        let updates = managed.fields.values().filter(|m| !m.applied).count();
        assert_eq!(updates, MAX_UPDATE_MANAGERS);
        let bucket = manager_identifier(ANCIENT_CHANGES, Operation::Update, "v1", "");
        let merged = &managed.fields[&bucket].set;
        // m00, m01 and m02 went into the bucket, which has m02's time.
        let fields = fieldsv1::encode(merged);
        assert_eq!(fields, r#"{"f:data":{"f:k0":{},"f:k1":{},"f:k2":{}}}"#);
        assert_eq!(managed.times[&bucket], "2026-01-01T00:00:02Z");
        assert!(managed.fields.values().any(|m| m.applied));
    }
}
