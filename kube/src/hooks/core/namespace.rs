//! Namespace lifecycle, as kube-apiserver's namespace strategy keeps it: a new namespace
//! is `Active` with the `kubernetes` finalizer in `spec.finalizers`; deleting it makes it
//! `Terminating` and keeps it until the namespace controller has emptied it and removed
//! that finalizer.

use kapi_core::meta::dns1123_label_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};

use crate::generated::api::core::v1::{NamespaceSpec, NamespaceStatus};
use crate::generated::core::v1::Namespace;

/// Namespaces kube-apiserver's NamespaceLifecycle admission refuses to delete.
const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

use crate::hooks::KUBERNETES_FINALIZER;

/// The hooks of `core/v1` Namespace.
#[derive(Clone, Copy, Debug, Default)]
pub struct NamespaceHooks;

/// The label kube-apiserver keeps on every namespace, so that selectors can pick
/// namespaces by name.
pub const NAME_LABEL: &str = "kubernetes.io/metadata.name";

fn name_label(ns: &mut Namespace) {
    if let Some(name) = ns.metadata.name.clone() {
        ns.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(NAME_LABEL.to_string(), name);
    }
}

fn set_phase(ns: &mut Namespace, phase: &str) {
    ns.status.get_or_insert_with(NamespaceStatus::default).phase = Some(phase.to_string());
}

impl Hooks<Namespace> for NamespaceHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, ns: &mut Namespace) {
        name_label(ns);
        let spec = ns.spec.get_or_insert_with(NamespaceSpec::default);
        let finalizers = spec.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == KUBERNETES_FINALIZER) {
            finalizers.push(KUBERNETES_FINALIZER.to_string());
        }
        set_phase(ns, "Active");
    }

    fn prepare_for_update(&self, new: &mut Namespace, old: &Namespace) {
        name_label(new);
        // spec.finalizers change only through finalization; status only through /status.
        new.spec = old.spec.clone();
        new.status = old.status.clone();
    }

    fn validate(&self, ns: &Namespace) -> ErrorList {
        let name = ns.metadata.name.as_deref().unwrap_or("");
        dns1123_label_errors(name)
            .into_iter()
            .map(|msg| FieldError::invalid(&FieldPath::new("metadata.name"), name, msg))
            .collect()
    }

    fn forbid_delete(&self, ns: &Namespace) -> Option<String> {
        let name = ns.metadata.name.as_deref().unwrap_or("");
        IMMORTAL
            .contains(&name)
            .then(|| "this namespace may not be deleted".to_string())
    }

    fn prepare_for_delete(&self, ns: &mut Namespace) {
        set_phase(ns, "Terminating");
    }

    fn update_subresource(&self, sub: &str, new: &mut Namespace, old: &Namespace) -> bool {
        if sub != "finalize" {
            return false;
        }
        let finalizers = new.spec.as_ref().and_then(|s| s.finalizers.clone());
        *new = Namespace {
            metadata: new.metadata.clone(),
            ..old.clone()
        };
        new.spec
            .get_or_insert_with(NamespaceSpec::default)
            .finalizers = finalizers;
        true
    }

    fn finalizing(&self, ns: &Namespace) -> bool {
        ns.spec
            .as_ref()
            .and_then(|s| s.finalizers.as_ref())
            .is_some_and(|f| !f.is_empty())
    }
}
