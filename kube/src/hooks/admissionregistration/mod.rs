//! The admissionregistration.k8s.io API group's admission policies:
//! ValidatingAdmissionPolicies ([`validating_admission_policy`]) and their bindings
//! ([`validating_admission_policy_binding`]), with what they share (match resources,
//! label selectors, CEL compilation) in [`validation`], and the admission webhook
//! configurations ([`webhook_configuration`]). What enforces the policies and calls the
//! webhooks is `crate::admission`.

mod validating_admission_policy;
mod validating_admission_policy_binding;
mod validation;
mod webhook_configuration;

pub use validating_admission_policy::ValidatingAdmissionPolicyHooks;
pub use validating_admission_policy_binding::ValidatingAdmissionPolicyBindingHooks;
pub use webhook_configuration::{
    MutatingWebhookConfigurationHooks, ValidatingWebhookConfigurationHooks,
};
