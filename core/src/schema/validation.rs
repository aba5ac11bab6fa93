//! Validation of objects against a [`Schema`], in the order and with the messages of
//! Kubernetes' custom resource validation:
//!
//! 1. OpenAPI keywords, as kube-openapi's `pkg/validation/validate` checks them, turned
//!    into field errors as apiextensions-apiserver's `kubeOpenAPIResultToFieldErrors`
//!    does (messages from kube-openapi `pkg/validation/errors/schema.go`);
//! 2. `x-kubernetes-list-type` set/map uniqueness (`schema/listtype/validation.go`);
//! 3. CEL `x-kubernetes-validations` (`schema/cel/validation.go`).

mod cel_rules;
mod equality;
mod list_type;
mod openapi;

pub(crate) use self::cel_rules::rule_field_path;

use serde_json::Value;

use self::cel_rules::Cel;
use self::list_type::list_types;
use self::openapi::OpenApi;
use super::Schema;
use crate::field::{ErrorList, FieldPath};

impl Schema {
    /// Validates `obj`, reporting errors under `at`. When `at` is the root, `obj` is a
    /// whole resource: `metadata` is only checked to be an object (the server validates
    /// ObjectMeta itself).
    pub fn validate(&self, obj: &Value, at: &FieldPath) -> ErrorList {
        self.validate_inner(obj, None, at)
    }

    /// Validates an update: everything [`Schema::validate`] checks plus transition rules
    /// (CEL rules using `oldSelf`) wherever the old object has a correlated value.
    pub fn validate_update(&self, new: &Value, old: &Value, at: &FieldPath) -> ErrorList {
        self.validate_inner(new, Some(old), at)
    }

    fn validate_inner(&self, obj: &Value, old: Option<&Value>, at: &FieldPath) -> ErrorList {
        let mut v = OpenApi {
            root: at,
            errs: ErrorList::new(),
        };
        v.node(self, obj, at, at.is_root());
        let mut errs = v.errs;
        list_types(self, obj, at, &mut errs);
        let mut c = Cel {
            errs: ErrorList::new(),
        };
        c.node(self, obj, old, at, at.is_root());
        errs.extend(c.errs);
        errs
    }
}
