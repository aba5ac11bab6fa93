//! Events, core/v1 and events.k8s.io/v1, as kube-apiserver's event strategy and
//! `ValidateEventCreate`/`ValidateEventUpdate` treat them: no `metadata.generation`, no
//! defaults (kube leaves `firstTimestamp`, `lastTimestamp` and `count` as sent).
//!
//! A core/v1 Event gets kube's legacy validation only: without `eventTime` its
//! `involvedObject.namespace` must match its namespace (empty or `default` allowed for
//! cluster objects); with `eventTime` it needs `reportingComponent`,
//! `reportingInstance`, `action` and `reason` within kube's lengths. An
//! events.k8s.io/v1 Event gets the legacy rules plus the strict ones: `eventTime`
//! required, `type` Normal or Warning, the deprecated fields unset, and `series` with a
//! count of at least 2 and a `lastObservedTime`; on update its descriptive fields are
//! immutable.
//!
//! Deliberate differences from kube-apiserver:
//! - kube validates the internal type, so its messages for events.k8s.io/v1 name
//!   internal fields (`involvedObject`, `message`, `source`); kapi names them the same
//!   way for create, but the immutable-field errors on update name the v1 fields
//!   (`regarding`, `note`) and print their values as JSON.
//! - The core/v1 Object column is `kind/name` with the kind lowercased, as kube
//!   prints it; Last Seen falls back to `firstTimestamp`, then `eventTime`, then
//!   `series.lastObservedTime` as kube's printer does.

use kapi_core::meta::qualified_name_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::untracked_generation;
use crate::generated::api::core::v1::ObjectReference;
use crate::generated::core::v1::Event as CoreEvent;
use crate::generated::events_k8s_io::v1::Event;

const REPORTING_INSTANCE_LIMIT: usize = 128;
const ACTION_LIMIT: usize = 128;
const REASON_LIMIT: usize = 128;
const NOTE_LIMIT: usize = 1024;

/// The fields `legacyValidateEvent` looks at, from either version.
struct Legacy<'a> {
    namespace: &'a str,
    involved_namespace: &'a str,
    has_event_time: bool,
    reporting_controller: &'a str,
    reporting_instance: &'a str,
    action: &'a str,
    reason: &'a str,
    message: &'a str,
}

/// kube's `legacyValidateEvent`; `controller_field` is `reportingComponent` for core/v1
/// and `reportingController` for events.k8s.io.
fn legacy_validate(e: &Legacy<'_>, controller_field: &str) -> ErrorList {
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

fn s(v: &Option<String>) -> &str {
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
fn object_cell(obj: Option<&ObjectReference>) -> Value {
    let kind = obj.and_then(|o| o.kind.as_deref()).unwrap_or("");
    let name = obj.and_then(|o| o.name.as_deref()).unwrap_or("");
    Value::String(format!("{}/{name}", kind.to_lowercase()))
}

fn to_value<T: kapi_core::__private::serde::Serialize>(v: &T) -> Option<Value> {
    serde_json::to_value(v).ok().filter(|v| !v.is_null())
}

/// The hooks of core/v1 Event.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoreEventHooks;

impl Hooks<CoreEvent> for CoreEventHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, e: &mut CoreEvent) {
        untracked_generation(&mut e.metadata);
    }

    fn prepare_for_update(&self, new: &mut CoreEvent, _old: &CoreEvent) {
        untracked_generation(&mut new.metadata);
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

/// The hooks of events.k8s.io/v1 Event.
#[derive(Clone, Copy, Debug, Default)]
pub struct EventHooks;

/// kube's `ValidateEventCreate` for events.k8s.io/v1.
fn validate_v1(e: &Event) -> ErrorList {
    let regarding_ns = e
        .regarding
        .as_ref()
        .and_then(|r| r.namespace.as_deref())
        .unwrap_or("");
    let legacy = Legacy {
        namespace: s(&e.metadata.namespace),
        involved_namespace: regarding_ns,
        has_event_time: true,
        reporting_controller: s(&e.reporting_controller),
        reporting_instance: s(&e.reporting_instance),
        action: s(&e.action),
        reason: s(&e.reason),
        message: s(&e.note),
    };
    let mut errs = legacy_validate(&legacy, "reportingController");
    if let Some(series) = &e.series {
        if series.count < 2 {
            errs.push(FieldError::invalid(
                &FieldPath::new("series.count"),
                "",
                "should be at least 2",
            ));
        }
    }
    let t = s(&e.r#type);
    if t != "Normal" && t != "Warning" {
        errs.push(FieldError::invalid(
            &FieldPath::new("type"),
            "",
            format!("has invalid value: {t}"),
        ));
    }
    for (field, set) in [
        ("firstTimestamp", e.deprecated_first_timestamp.is_some()),
        ("lastTimestamp", e.deprecated_last_timestamp.is_some()),
        ("count", e.deprecated_count.unwrap_or(0) != 0),
        (
            "source",
            e.deprecated_source
                .as_ref()
                .is_some_and(|src| !s(&src.component).is_empty() || !s(&src.host).is_empty()),
        ),
    ] {
        if set {
            errs.push(FieldError::invalid(
                &FieldPath::new(field),
                "",
                "needs to be unset",
            ));
        }
    }
    errs
}

impl Hooks<Event> for EventHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, e: &mut Event) {
        untracked_generation(&mut e.metadata);
    }

    fn prepare_for_update(&self, new: &mut Event, _old: &Event) {
        untracked_generation(&mut new.metadata);
    }

    fn validate(&self, e: &Event) -> ErrorList {
        validate_v1(e)
    }

    fn validate_update(&self, new: &Event, _old: &Event) -> ErrorList {
        validate_v1(new)
    }

    fn immutable_fields(&self) -> &[&'static str] {
        &[
            "regarding",
            "reason",
            "note",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
            "type",
            "eventTime",
            "action",
            "related",
            "reportingController",
            "reportingInstance",
        ]
    }

    fn table_cell(&self, column: &str, e: &Event) -> Option<Value> {
        match column {
            "Last Seen" => {
                let last = e
                    .series
                    .as_ref()
                    .and_then(|s| to_value(&s.last_observed_time))
                    .or_else(|| to_value(&e.deprecated_last_timestamp))
                    .or_else(|| to_value(&e.deprecated_first_timestamp))
                    .or_else(|| to_value(&e.event_time));
                Some(last.unwrap_or(Value::Null))
            }
            "First Seen" => Some(
                to_value(&e.deprecated_first_timestamp)
                    .or_else(|| to_value(&e.event_time))
                    .unwrap_or(Value::Null),
            ),
            "Count" => Some(Value::from(match &e.series {
                Some(series) => series.count,
                None => e.deprecated_count.filter(|c| *c != 0).unwrap_or(1),
            })),
            "Object" => Some(object_cell(e.regarding.as_ref())),
            _ => None,
        }
    }
}
