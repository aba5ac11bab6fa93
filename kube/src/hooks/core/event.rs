//! core/v1 Events, as kube-apiserver's event strategy and `ValidateEventCreate`/
//! `ValidateEventUpdate` treat them: no `metadata.generation`, no defaults (kube leaves
//! `firstTimestamp`, `lastTimestamp` and `count` as sent), kube's legacy validation only.
//!
//! Without `eventTime` an Event's `involvedObject.namespace` must match its namespace
//! (empty or `default` allowed for cluster objects); with `eventTime` it needs
//! `reportingComponent`, `reportingInstance`, `action` and `reason` within kube's
//! lengths. events.k8s.io/v1 Events ([`crate::hooks::events`]) get these legacy rules
//! too, from here.
//!
//! Deliberate differences from kube-apiserver:
//! - The core/v1 Object column is `kind/name` with the kind lowercased, as kube
//!   prints it; Last Seen falls back to `firstTimestamp`, then `eventTime`, then
//!   `series.lastObservedTime` as kube's printer does.

use kapi_core::meta::qualified_name_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::core::v1::ObjectReference;
use crate::generated::core::v1::Event as CoreEvent;

const REPORTING_INSTANCE_LIMIT: usize = 128;
const ACTION_LIMIT: usize = 128;
const REASON_LIMIT: usize = 128;
const NOTE_LIMIT: usize = 1024;

/// The fields `legacyValidateEvent` looks at, from either version.
pub(crate) struct Legacy<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) involved_namespace: &'a str,
    pub(crate) has_event_time: bool,
    pub(crate) reporting_controller: &'a str,
    pub(crate) reporting_instance: &'a str,
    pub(crate) action: &'a str,
    pub(crate) reason: &'a str,
    pub(crate) message: &'a str,
}

/// kube's `legacyValidateEvent`; `controller_field` is `reportingComponent` for core/v1
/// and `reportingController` for events.k8s.io.
pub(crate) fn legacy_validate(e: &Legacy<'_>, controller_field: &str) -> ErrorList {
    let mut errs = ErrorList::new();
    let ns_path = FieldPath::new("involvedObject.namespace");
    if !e.has_event_time {
        let ok = if e.involved_namespace.is_empty() {
            e.namespace.is_empty() || e.namespace == "default"
        } else {
            e.namespace == e.involved_namespace
        };
        if !ok {
            errs.push(FieldError::invalid(
                &ns_path,
                e.involved_namespace,
                "does not match event.namespace",
            ));
        }
    } else {
        if e.involved_namespace.is_empty()
            && e.namespace != "default"
            && e.namespace != "kube-system"
        {
            errs.push(FieldError::invalid(
                &ns_path,
                e.involved_namespace,
                "does not match event.namespace",
            ));
        }
        let controller = FieldPath::new(controller_field);
        if e.reporting_controller.is_empty() {
            errs.push(FieldError::required(&controller, ""));
        }
        for msg in qualified_name_errors(e.reporting_controller) {
            errs.push(FieldError::invalid(
                &controller,
                e.reporting_controller,
                msg,
            ));
        }
        let mut limited = |name: &str, value: &str, limit: usize, required: bool| {
            if required && value.is_empty() {
                errs.push(FieldError::required(&FieldPath::new(name), ""));
            }
            if value.len() > limit {
                errs.push(FieldError::invalid(
                    &FieldPath::new(name),
                    "",
                    format!("can have at most {limit} characters"),
                ));
            }
        };
        limited(
            "reportingInstance",
            e.reporting_instance,
            REPORTING_INSTANCE_LIMIT,
            true,
        );
        limited("action", e.action, ACTION_LIMIT, true);
        limited("reason", e.reason, REASON_LIMIT, true);
        limited("message", e.message, NOTE_LIMIT, false);
    }
    errs
}

pub(crate) fn s(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("")
}

fn core_legacy(e: &CoreEvent) -> Legacy<'_> {
    Legacy {
        namespace: s(&e.metadata.namespace),
        involved_namespace: s(&e.involved_object.namespace),
        has_event_time: e.event_time.is_some(),
        reporting_controller: s(&e.reporting_component),
        reporting_instance: s(&e.reporting_instance),
        action: s(&e.action),
        reason: s(&e.reason),
        message: s(&e.message),
    }
}

/// `kind/name` with the kind lowercased, as kube's event printer shows the object.
pub(crate) fn object_cell(obj: Option<&ObjectReference>) -> Value {
    let kind = obj.and_then(|o| o.kind.as_deref()).unwrap_or("");
    let name = obj.and_then(|o| o.name.as_deref()).unwrap_or("");
    Value::String(format!("{}/{name}", kind.to_lowercase()))
}

pub(crate) fn to_value<T: kapi_core::__private::serde::Serialize>(v: &T) -> Option<Value> {
    serde_json::to_value(v).ok().filter(|v| !v.is_null())
}

/// The hooks of core/v1 Event.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoreEventHooks;

impl Hooks<CoreEvent> for CoreEventHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, e: &CoreEvent) -> ErrorList {
        legacy_validate(&core_legacy(e), "reportingComponent")
    }

    fn validate_update(&self, new: &CoreEvent, _old: &CoreEvent) -> ErrorList {
        legacy_validate(&core_legacy(new), "reportingComponent")
    }

    fn table_cell(&self, column: &str, e: &CoreEvent) -> Option<Value> {
        match column {
            "Last Seen" => {
                let first = to_value(&e.first_timestamp).or_else(|| to_value(&e.event_time));
                let last = e
                    .series
                    .as_ref()
                    .and_then(|s| to_value(&s.last_observed_time))
                    .or_else(|| to_value(&e.last_timestamp))
                    .or(first);
                Some(last.unwrap_or(Value::Null))
            }
            "First Seen" => Some(to_value(&e.first_timestamp).or_else(|| to_value(&e.event_time))?),
            "Count" => {
                let count = match &e.series {
                    Some(series) => series.count.unwrap_or(0),
                    None => e.count.filter(|c| *c != 0).unwrap_or(1),
                };
                Some(Value::from(count))
            }
            "Object" => Some(object_cell(Some(&e.involved_object))),
            _ => None,
        }
    }
}
