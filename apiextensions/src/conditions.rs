//! `status.conditions` of a CustomResourceDefinition, set as kube-apiserver's
//! `SetCRDCondition` sets them: the transition time moves only when the status does.

use serde_json::{Map, Value, json};

/// `Established`: the resource is served.
pub const ESTABLISHED: &str = "Established";
/// `NamesAccepted`: no name conflicts with the rest of the group.
pub const NAMES_ACCEPTED: &str = "NamesAccepted";
/// `Terminating`: the CRD is being deleted, its objects first.
pub const TERMINATING: &str = "Terminating";

/// The condition of `type_` in `status`, if any.
pub fn find<'a>(status: &'a Value, type_: &str) -> Option<&'a Value> {
    status
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Whether the condition of `type_` is `True`.
pub fn is_true(status: &Value, type_: &str) -> bool {
    find(status, type_).and_then(|c| c.get("status")?.as_str()) == Some("True")
}

/// Sets the condition of `type_`; `status` must be an object (it is made one if not).
pub fn set(status: &mut Value, type_: &str, value: bool, reason: &str, message: &str) {
    if !status.is_object() {
        *status = json!({});
    }
    let map = status.as_object_mut().expect("made an object above");
    let conditions = map
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !conditions.is_array() {
        *conditions = Value::Array(Vec::new());
    }
    let list = conditions.as_array_mut().expect("made an array above");
    let value = if value { "True" } else { "False" };
    let now = kapi_apiserver::registry::object::now();
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
        .and_then(Value::as_object_mut)
    {
        Some(existing) => {
            let moved = existing.get("status").and_then(Value::as_str) != Some(value)
                || existing
                    .get("lastTransitionTime")
                    .is_none_or(|t| t.as_str().is_none_or(str::is_empty));
            if moved {
                existing.insert("lastTransitionTime".into(), json!(now));
            }
            existing.insert("status".into(), json!(value));
            existing.insert("reason".into(), json!(reason));
            existing.insert("message".into(), json!(message));
        }
        None => {
            let mut c = Map::new();
            c.insert("type".into(), json!(type_));
            c.insert("status".into(), json!(value));
            c.insert("lastTransitionTime".into(), json!(now));
            c.insert("reason".into(), json!(reason));
            c.insert("message".into(), json!(message));
            list.push(Value::Object(c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_with_the_status() {
        let mut status = json!({});
        set(&mut status, ESTABLISHED, false, "Installing", "x");
        let mut first = find(&status, ESTABLISHED).unwrap().clone();
        first["lastTransitionTime"] = json!("2000-01-01T00:00:00Z");
        status["conditions"][0] = first;
        set(&mut status, ESTABLISHED, false, "NotAccepted", "y");
        let c = find(&status, ESTABLISHED).unwrap();
        assert_eq!(c["lastTransitionTime"], "2000-01-01T00:00:00Z");
        assert_eq!(c["reason"], "NotAccepted");
        set(&mut status, ESTABLISHED, true, "InitialNamesAccepted", "z");
        assert_ne!(
            find(&status, ESTABLISHED).unwrap()["lastTransitionTime"],
            "2000-01-01T00:00:00Z"
        );
        assert!(is_true(&status, ESTABLISHED));
        assert!(!is_true(&status, NAMES_ACCEPTED));
    }
}
