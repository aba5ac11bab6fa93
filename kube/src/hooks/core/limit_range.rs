//! LimitRanges, as kube-apiserver's strategy and validation treat them: no
//! `metadata.generation`; each limit needs a type (`Pod`, `Container`,
//! `PersistentVolumeClaim`, or a qualified extended type).
//!
//! Deliberate differences from kube-apiserver:
//! - min/max/default consistency is not validated.

use kapi_core::meta::qualified_name_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::core::v1::LimitRange;

/// The hooks of LimitRange.
#[derive(Clone, Copy, Debug, Default)]
pub struct LimitRangeHooks;

impl Hooks<LimitRange> for LimitRangeHooks {
    /// A LimitRange without limits (`limits: null` from Go) has none.
    fn normalize(&self, obj: &mut Value) {
        kapi_core::hooks::empty_list_if_null(obj, &["spec", "limits"]);
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn validate(&self, lr: &LimitRange) -> ErrorList {
        let mut errs = ErrorList::new();
        for (i, item) in lr.spec.iter().flat_map(|s| &s.limits).enumerate() {
            let path = FieldPath::new("spec.limits").index(i).child("type");
            let t = item.r#type.as_str();
            if t.is_empty() {
                errs.push(FieldError::required(&path, ""));
            } else if !["Pod", "Container", "PersistentVolumeClaim"].contains(&t) {
                for msg in qualified_name_errors(t) {
                    errs.push(FieldError::invalid(&path, t, msg));
                }
            }
        }
        errs
    }
}
