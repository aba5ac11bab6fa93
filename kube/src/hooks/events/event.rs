//! events.k8s.io/v1 Events, as kube-apiserver's event strategy and
//! `ValidateEventCreate`/`ValidateEventUpdate` treat them: no `metadata.generation`, no
//! defaults, the legacy rules of core/v1 Events ([`crate::hooks::core`]) plus the strict
//! ones: `eventTime` required, `type` Normal or Warning, the deprecated fields unset, and
//! `series` with a count of at least 2 and a `lastObservedTime`; on update its
//! descriptive fields are immutable.
//!
//! Deliberate differences from kube-apiserver:
//! - kube validates the internal type, so its messages for events.k8s.io/v1 name
//!   internal fields (`involvedObject`, `message`, `source`); kapi names them the same
//!   way for create, but the immutable-field errors on update name the v1 fields
//!   (`regarding`, `note`) and print their values as JSON.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::events_k8s_io::v1::Event;
use crate::hooks::core::event::{Legacy, legacy_validate, object_cell, s, to_value};

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
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
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
