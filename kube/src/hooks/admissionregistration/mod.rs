//! The admissionregistration.k8s.io API group's admission policies:
//! ValidatingAdmissionPolicies ([`validating_admission_policy`]) and their bindings
//! ([`validating_admission_policy_binding`]), with what they share (match resources,
//! label selectors, CEL compilation) in [`validation`]. The webhook configurations need
//! no hooks; what enforces the policies is `crate::admission`.

mod validating_admission_policy;
mod validating_admission_policy_binding;
mod validation;

pub use validating_admission_policy::ValidatingAdmissionPolicyHooks;
pub use validating_admission_policy_binding::ValidatingAdmissionPolicyBindingHooks;
