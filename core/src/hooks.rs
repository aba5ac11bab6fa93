//! [`Hooks`]: a resource's hand-written behaviour, in its typed form, beside what its
//! schema does. The strategies ([`crate::strategy`]) run them; a resource names its
//! hooks in [`crate::Resource::Hooks`].

use serde_json::Value;

use crate::field::ErrorList;

/// Hand-written behaviour for a resource, added without editing generated code.
///
/// Every method has a default that does nothing, so an implementation overrides only
/// what it needs. Hooks run after the schema's own defaulting, pruning and validation.
pub trait Hooks<R>: Default + Send + Sync + 'static {
    /// Whether these hooks read objects in their typed form: `false` only for
    /// [`NoHooks`], whose every method does nothing, so that the strategy decodes an
    /// object into `R` only where the decoding itself matters (the type check of
    /// validation, the typed form written back on create and update) and not for
    /// hooks that would not look at it (an old object, warnings).
    const TYPED: bool = true;

    /// Mends, before anything else reads the object, what a Go client sends that the
    /// typed form cannot hold: a list field without `omitempty` that is empty goes
    /// out as `null`, and kube reads it as empty (see [`empty_list_if_null`]).
    fn normalize(&self, _obj: &mut Value) {}

    /// Extra defaulting, after the schema's defaults.
    fn apply_defaults(&self, _obj: &mut R) {}

    /// Warnings for the client about a valid object being created (kube's
    /// `WarningsOnCreate`): deprecated fields, values in a form a later release will
    /// refuse. They reach the client as `Warning` headers.
    fn warnings_on_create(&self, _obj: &R) -> Vec<String> {
        Vec::new()
    }

    /// [`Hooks::warnings_on_create`] for an update (kube's `WarningsOnUpdate`).
    fn warnings_on_update(&self, _new: &R, _old: &R) -> Vec<String> {
        Vec::new()
    }

    /// Called on create, after the generic preparation (status cleared, generation 1).
    fn prepare_for_create(&self, _obj: &mut R) {}

    /// Whether objects carry `metadata.generation` (1 on create, bumped when anything
    /// but status changes). Kinds whose kube strategy does not track it (ConfigMap,
    /// Namespace, Service, ...) return false, and their objects carry none, whatever a
    /// client sends.
    fn tracks_generation(&self) -> bool {
        true
    }

    /// Whether a new object keeps the status it was created with although status is a
    /// subresource (a kubelet registers its Node with its status).
    fn keep_status_on_create(&self) -> bool {
        false
    }

    /// Called on update, after the generic preparation.
    fn prepare_for_update(&self, _new: &mut R, _old: &R) {}

    /// What an object's name must look like (a DNS subdomain unless said otherwise).
    fn name_rule(&self) -> crate::meta::NameRule {
        crate::meta::NameRule::Subdomain
    }

    /// Extra validation of a new object.
    fn validate(&self, _obj: &R) -> ErrorList {
        ErrorList::new()
    }

    /// Extra validation of an update.
    fn validate_update(&self, _new: &R, _old: &R) -> ErrorList {
        ErrorList::new()
    }

    /// Dotted field paths (`spec.selector`) that may not change after create.
    fn immutable_fields(&self) -> &[&'static str] {
        &[]
    }

    /// Whether a PUT without `metadata.resourceVersion` overwrites whatever is stored.
    /// Custom resources refuse it (422), as kube-apiserver's CRD strategy does; most
    /// built-in kinds allow it.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// Why the object may not be deleted at all, if it may not (the `default`
    /// namespace); the API answers 403 Forbidden with this reason.
    fn forbid_delete(&self, _obj: &R) -> Option<String> {
        None
    }

    /// Called when a delete is asked for and the object is kept for finalization
    /// (Namespace: `status.phase` becomes `Terminating`).
    fn prepare_for_delete(&self, _obj: &mut R) {}

    /// True while resource-specific finalization is pending, beyond
    /// `metadata.finalizers` (Namespace: while `spec.finalizers` is not empty). A
    /// deleted object is removed from storage only once this is false and its
    /// `metadata.finalizers` are empty.
    fn finalizing(&self, _obj: &R) -> bool {
        false
    }

    /// A Table cell computed from the object, for a printer column that a JSONPath
    /// cannot express (ConfigMap's `Data`: the number of keys). `None` keeps the
    /// column's JSONPath value.
    fn table_cell(&self, _column: &str, _obj: &R) -> Option<serde_json::Value> {
        None
    }

    /// Handles a write (PUT or PATCH) to one of the resource's other subresources
    /// (`ResourceInfo::subresources.extra`): keeps from `new` only what that subresource
    /// may change and takes the rest from `old` (Namespace `finalize`: `spec.finalizers`;
    /// CertificateSigningRequest `approval`: the approval conditions). Returns false when
    /// the hooks have no such subresource, which then answers 404.
    fn update_subresource(&self, _subresource: &str, _new: &mut R, _old: &R) -> bool {
        false
    }

    /// Extra validation of a write to another subresource, after
    /// [`Hooks::update_subresource`] and the usual update validation (or instead of
    /// [`Hooks::validate_update`], see [`Hooks::subresource_replaces_update_validation`]).
    fn validate_subresource_update(&self, _subresource: &str, _new: &R, _old: &R) -> ErrorList {
        ErrorList::new()
    }

    /// Whether a write to `subresource` is validated by
    /// [`Hooks::validate_subresource_update`] alone, without [`Hooks::validate_update`]:
    /// for subresources that exist to change what an update may not (kube's
    /// `pods/resize` and `pods/ephemeralcontainers` strategies replace
    /// `ValidatePodUpdate`). The schema's checks run either way.
    fn subresource_replaces_update_validation(&self, _subresource: &str) -> bool {
        false
    }

    /// Handles a POST of another kind to a subresource (`pods/binding` posts a Binding):
    /// changes `obj` as `body` asks. The default answers that there is no such
    /// subresource.
    fn create_on_subresource(
        &self,
        _subresource: &str,
        _body: &Value,
        _obj: &mut R,
    ) -> Result<(), SubresourceError> {
        Err(SubresourceError::NotFound)
    }
}

/// The hooks of a resource that has none.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl<R> Hooks<R> for NoHooks {
    const TYPED: bool = false;
}

/// Why a POST to a subresource ([`Hooks::create_on_subresource`]) was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum SubresourceError {
    /// The resource has no such subresource (404).
    NotFound,
    /// The object is not in a state the request applies to (409): "pod p is already
    /// assigned to node \"n\"".
    Conflict(String),
    /// The posted object is invalid (422), with field errors.
    Invalid(ErrorList),
    /// The request makes no sense (400).
    BadRequest(String),
}

/// Sets the list at `path` to `[]` where it is `null` or absent (and its parent is
/// there), as kube decodes a Go client's nil slice.
pub fn empty_list_if_null(obj: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = obj;
    for p in parents {
        match at.get_mut(*p) {
            Some(next) if next.is_object() => at = next,
            _ => return,
        }
    }
    if let Some(map) = at.as_object_mut() {
        let slot = map.entry(last.to_string()).or_insert(Value::Null);
        if slot.is_null() {
            *slot = Value::Array(Vec::new());
        }
    }
}
