//! ValidatingAdmissionPolicys. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::admissionregistration_k8s_io::v1::ValidatingAdmissionPolicy;

/// The hooks of ValidatingAdmissionPolicy.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidatingAdmissionPolicyHooks;

impl Hooks<ValidatingAdmissionPolicy> for ValidatingAdmissionPolicyHooks {}
