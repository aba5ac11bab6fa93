//! ControllerRevisions: no `metadata.generation`, as in kube; `data` is immutable
//! and `revision` not negative.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::apps::v1::ControllerRevision;
use crate::hooks::nonnegative;

/// The hooks of ControllerRevision.
#[derive(Clone, Copy, Debug, Default)]
pub struct ControllerRevisionHooks;

impl Hooks<ControllerRevision> for ControllerRevisionHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, cr: &ControllerRevision) -> ErrorList {
        let mut errs = ErrorList::new();
        nonnegative(&mut errs, &FieldPath::new("revision"), Some(cr.revision));
        errs
    }

    fn validate_update(&self, new: &ControllerRevision, old: &ControllerRevision) -> ErrorList {
        let mut errs = self.validate(new);
        if new.data != old.data {
            errs.push(FieldError::invalid(
                &FieldPath::new("data"),
                serde_json::to_value(&new.data).unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
        errs
    }
}
