//! ValidatingAdmissionPolicyBindings. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::admissionregistration_k8s_io::v1::ValidatingAdmissionPolicyBinding;

/// The hooks of ValidatingAdmissionPolicyBinding.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidatingAdmissionPolicyBindingHooks;

impl Hooks<ValidatingAdmissionPolicyBinding> for ValidatingAdmissionPolicyBindingHooks {}
