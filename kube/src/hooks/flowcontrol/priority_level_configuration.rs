//! PriorityLevelConfigurations, as kube-apiserver's strategy (`pkg/registry/flowcontrol/
//! prioritylevelconfiguration/strategy.go`), v1 defaults (`pkg/apis/flowcontrol/v1/
//! defaults.go`), validation (`ValidatePriorityLevelConfiguration` in
//! `pkg/apis/flowcontrol/validation`) and printer treat them: `metadata.generation` is 1
//! on create and bumped when the spec changes; status is reset on create, kept by
//! updates and written only through `/status`; a PUT needs no `resourceVersion`.
//!
//! Defaults (v1 keeps pointers, so an explicit 0 stays): `limited.nominalConcurrencyShares`
//! 30 and `limited.lendablePercent` 0; `exempt.nominalConcurrencyShares` and
//! `exempt.lendablePercent` 0; a `queuing` section's `queues` 64, `handSize` 8 and
//! `queueLengthLimit` 50 where they are 0.
//!
//! Checks (on create and update alike): `type` is `Exempt` exactly when the name is
//! `exempt`; an `Exempt` level has no `limited`, and its shares are non-negative and its
//! lendable percent 0 to 100; a `Limited` level has `limited` and no `exempt`, with
//! non-negative shares (0 is allowed since 1.30), `lendablePercent` 0 to 100,
//! `borrowingLimitPercent` non-negative, and a `limitResponse` of `Reject` (without
//! `queuing`) or `Queue` (with positive `queues` up to 10^7, `queueLengthLimit` and
//! `handSize`, the hand no larger than the deck and needing at most 60 bits of entropy);
//! the mandatory levels have their fixed spec (`exempt`: all but its `exempt` section);
//! status conditions have distinct, non-empty types.
//!
//! Columns, as kube's `printPriorityLevelConfiguration`: Type, NominalConcurrencyShares,
//! Queues, HandSize, QueueLengthLimit (each `<none>` where the level has no such
//! setting) and Age.
//!
//! Deliberate difference from kube-apiserver: the spec shown by "must equal the fixed
//! value" is JSON where kube prints the Go struct (with pointer addresses).

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::bootstrap::{mandatory_priority_level_spec, same_spec};
use super::{conditions_errors, next_generation};
use crate::generated::flowcontrol_apiserver_k8s_io::v1::PriorityLevelConfiguration;
use crate::generated::io::k8s::api::flowcontrol::v1::{
    ExemptPriorityLevelConfiguration, LimitedPriorityLevelConfiguration,
    PriorityLevelConfigurationSpec, QueuingConfiguration,
};
use crate::hooks::strings;

/// The hooks of PriorityLevelConfiguration.
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorityLevelConfigurationHooks;

/// The name of the one exempt level.
const EXEMPT_NAME: &str = "exempt";
/// The type of the exempt level.
const EXEMPT: &str = "Exempt";
/// The type of every other level.
const LIMITED: &str = "Limited";
/// The level types, sorted as kube lists them.
const TYPES: &[&str] = &[EXEMPT, LIMITED];
/// The limit responses, sorted as kube lists them.
const LIMIT_RESPONSES: &[&str] = &["Queue", "Reject"];
/// `limited.nominalConcurrencyShares` when unset.
const DEFAULT_SHARES: i32 = 30;
/// `queuing.queues` when 0.
const DEFAULT_QUEUES: i32 = 64;
/// `queuing.handSize` when 0.
const DEFAULT_HAND_SIZE: i32 = 8;
/// `queuing.queueLengthLimit` when 0.
const DEFAULT_QUEUE_LENGTH_LIMIT: i32 = 50;
/// The most queues a level may have (10^7).
const MAX_QUEUES: i32 = 10_000_000;
/// The bits of hash shuffle sharding may use (`shufflesharding.MaxHashBits`).
const MAX_HASH_BITS: f64 = 60.0;

/// `SetDefaults_QueuingConfiguration`.
fn default_queuing(q: &mut QueuingConfiguration) {
    for (field, default) in [
        (&mut q.queues, DEFAULT_QUEUES),
        (&mut q.hand_size, DEFAULT_HAND_SIZE),
        (&mut q.queue_length_limit, DEFAULT_QUEUE_LENGTH_LIMIT),
    ] {
        if field.unwrap_or(0) == 0 {
            *field = Some(default);
        }
    }
}

/// The "must be between 0 and 100, inclusive" check of a lendable percent.
fn lendable_errors(errs: &mut ErrorList, percent: Option<i32>, path: &FieldPath) {
    if let Some(p) = percent.filter(|p| !(0..=100).contains(p)) {
        errs.push(FieldError::invalid(
            &path.child("lendablePercent"),
            p,
            "must be between 0 and 100, inclusive",
        ));
    }
}

/// The "must be a non-negative integer" check of nominal concurrency shares.
fn shares_errors(errs: &mut ErrorList, shares: Option<i32>, path: &FieldPath) {
    if let Some(s) = shares.filter(|s| *s < 0) {
        errs.push(FieldError::invalid(
            &path.child("nominalConcurrencyShares"),
            s,
            "must be a non-negative integer",
        ));
    }
}

/// `ValidatePriorityLevelQueuingConfiguration`.
fn queuing_errors(q: &QueuingConfiguration, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let (queues, hand, limit) = (
        q.queues.unwrap_or(0),
        q.hand_size.unwrap_or(0),
        q.queue_length_limit.unwrap_or(0),
    );
    if limit <= 0 {
        errs.push(FieldError::invalid(
            &path.child("queueLengthLimit"),
            limit,
            "must be positive",
        ));
    }
    if queues <= 0 {
        errs.push(FieldError::invalid(
            &path.child("queues"),
            queues,
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        errs.push(FieldError::invalid(
            &path.child("queues"),
            queues,
            format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    let at = path.child("handSize");
    if hand <= 0 {
        errs.push(FieldError::invalid(&at, hand, "must be positive"));
    } else if hand > queues {
        errs.push(FieldError::invalid(
            &at,
            hand,
            format!("should not be greater than queues ({queues})"),
        ));
    } else if (f64::from(queues).log2() * f64::from(hand)).ceil() > MAX_HASH_BITS {
        // shufflesharding.RequiredEntropyBits: dealing `hand` cards from a deck of
        // `queues` takes ceil(log2(queues) * hand) bits of the hash.
        errs.push(FieldError::invalid(
            &at,
            hand,
            format!(
                "required entropy bits of deckSize {queues} and handSize {hand} should not be \
                 greater than 60"
            ),
        ));
    }
    errs
}

/// `ValidateLimitedPriorityLevelConfiguration` (with zero shares allowed).
fn limited_errors(l: &LimitedPriorityLevelConfiguration, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    shares_errors(&mut errs, l.nominal_concurrency_shares, path);
    let at = path.child("limitResponse");
    let response = l.limit_response.as_ref();
    let queuing = response.and_then(|r| r.queuing.as_ref());
    match response.map_or("", |r| r.r#type.as_str()) {
        "Reject" => {
            if queuing.is_some() {
                errs.push(FieldError::forbidden(
                    &at.child("queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => match queuing {
            None => errs.push(FieldError::required(
                &at.child("queuing"),
                "must not be empty if limited.limitResponse.type is Limited",
            )),
            Some(q) => errs.extend(queuing_errors(q, &at.child("queuing"))),
        },
        other => errs.push(FieldError::not_supported(
            &at.child("type"),
            other,
            &strings(LIMIT_RESPONSES),
        )),
    }
    lendable_errors(&mut errs, l.lendable_percent, path);
    if let Some(p) = l.borrowing_limit_percent.filter(|p| *p < 0) {
        errs.push(FieldError::invalid(
            &path.child("borrowingLimitPercent"),
            p,
            "if specified, must be a non-negative integer",
        ));
    }
    errs
}

/// `ValidateExemptPriorityLevelConfiguration`.
fn exempt_errors(e: &ExemptPriorityLevelConfiguration, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    shares_errors(&mut errs, e.nominal_concurrency_shares, path);
    lendable_errors(&mut errs, e.lendable_percent, path);
    errs
}

/// `ValidatePriorityLevelConfigurationSpec`; a missing spec is checked as an empty one.
fn spec_errors(name: &str, spec: Option<&PriorityLevelConfigurationSpec>) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = FieldPath::new("spec");
    let kind = spec.map_or("", |s| s.r#type.as_str());
    if (name == EXEMPT_NAME) != (kind == EXEMPT) {
        errs.push(FieldError::invalid(
            &path.child("type"),
            kind,
            "type must be 'Exempt' if and only if name is 'exempt'",
        ));
    }
    let (limited, exempt) = (
        spec.and_then(|s| s.limited.as_ref()),
        spec.and_then(|s| s.exempt.as_ref()),
    );
    match kind {
        EXEMPT => {
            if limited.is_some() {
                errs.push(FieldError::forbidden(
                    &path.child("limited"),
                    "must be nil if the type is not Limited",
                ));
            }
            if let Some(e) = exempt {
                errs.extend(exempt_errors(e, &path.child("exempt")));
            }
        }
        LIMITED => {
            if exempt.is_some() {
                errs.push(FieldError::forbidden(
                    &path.child("exempt"),
                    "must be nil if the type is Limited",
                ));
            }
            match limited {
                None => errs.push(FieldError::required(
                    &path.child("limited"),
                    "must not be empty when type is Limited",
                )),
                Some(l) => errs.extend(limited_errors(l, &path.child("limited"))),
            }
        }
        other => errs.push(FieldError::not_supported(
            &path.child("type"),
            other,
            &strings(TYPES),
        )),
    }
    errs
}

/// `ValidateIfMandatoryPriorityLevelConfigurationObject`: a mandatory level's spec is
/// the fixed one, but for the `exempt` section of `exempt`, which operators may tune.
fn mandatory_errors(name: &str, spec: Option<&PriorityLevelConfigurationSpec>) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(mut fixed) = mandatory_priority_level_spec(name) else {
        return errs;
    };
    let shown = serde_json::to_value(spec).unwrap_or(Value::Null);
    let mut have = shown.clone();
    let only_exempt_may_differ = name == EXEMPT_NAME;
    if only_exempt_may_differ {
        if let (Some(have), Some(fixed)) = (have.as_object_mut(), fixed.as_object_mut()) {
            have.remove("exempt");
            fixed.remove("exempt");
        }
    }
    if !same_spec(&have, &fixed) {
        let detail = if only_exempt_may_differ {
            format!("spec of '{name}' except the 'spec.exempt' field must equal the fixed value")
        } else {
            format!("spec of '{name}' must equal the fixed value")
        };
        errs.push(FieldError::invalid(&FieldPath::new("spec"), shown, detail));
    }
    errs
}

/// `ValidatePriorityLevelConfiguration`, after the generic metadata checks.
fn validate_plc(plc: &PriorityLevelConfiguration) -> ErrorList {
    let name = plc.metadata.name.as_deref().unwrap_or_default();
    let mut errs = spec_errors(name, plc.spec.as_ref());
    errs.extend(mandatory_errors(name, plc.spec.as_ref()));
    let conditions = plc.status.as_ref().and_then(|s| s.conditions.as_deref());
    let types = conditions
        .unwrap_or_default()
        .iter()
        .map(|c| c.r#type.as_deref().unwrap_or_default());
    errs.extend(conditions_errors(types));
    errs
}

/// A Table cell that is `<none>` when the level has no such setting.
fn cell_or_none(value: Option<i32>) -> Value {
    value.map_or_else(|| Value::from("<none>"), Value::from)
}

impl Hooks<PriorityLevelConfiguration> for PriorityLevelConfigurationHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, plc: &mut PriorityLevelConfiguration) {
        let Some(spec) = &mut plc.spec else { return };
        if let Some(e) = &mut spec.exempt {
            e.nominal_concurrency_shares.get_or_insert(0);
            e.lendable_percent.get_or_insert(0);
        }
        if let Some(l) = &mut spec.limited {
            l.nominal_concurrency_shares.get_or_insert(DEFAULT_SHARES);
            l.lendable_percent.get_or_insert(0);
            if let Some(q) = l.limit_response.as_mut().and_then(|r| r.queuing.as_mut()) {
                default_queuing(q);
            }
        }
    }

    fn prepare_for_update(
        &self,
        new: &mut PriorityLevelConfiguration,
        old: &PriorityLevelConfiguration,
    ) {
        // kube bumps the generation for a spec change only, not for metadata.
        new.metadata.generation = next_generation(old.metadata.generation, new.spec != old.spec);
    }

    fn validate(&self, plc: &PriorityLevelConfiguration) -> ErrorList {
        validate_plc(plc)
    }

    fn validate_update(
        &self,
        new: &PriorityLevelConfiguration,
        _old: &PriorityLevelConfiguration,
    ) -> ErrorList {
        validate_plc(new)
    }

    fn table_cell(&self, column: &str, plc: &PriorityLevelConfiguration) -> Option<Value> {
        let limited = plc.spec.as_ref().and_then(|s| s.limited.as_ref());
        let queuing = limited
            .and_then(|l| l.limit_response.as_ref())
            .and_then(|r| r.queuing.as_ref());
        match column {
            "NominalConcurrencyShares" => Some(match limited {
                // kube prints the pointer's value, null when unset.
                Some(l) => l
                    .nominal_concurrency_shares
                    .map_or(Value::Null, Value::from),
                None => Value::from("<none>"),
            }),
            "Queues" => Some(cell_or_none(queuing.and_then(|q| q.queues))),
            "HandSize" => Some(cell_or_none(queuing.and_then(|q| q.hand_size))),
            "QueueLengthLimit" => Some(cell_or_none(queuing.and_then(|q| q.queue_length_limit))),
            _ => None,
        }
    }
}
