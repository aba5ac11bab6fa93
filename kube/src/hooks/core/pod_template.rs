//! PodTemplates, as kube-apiserver's pod template strategy treats them: the PodSpec
//! defaults and pod spec checks of [`super::pod_spec`] in `template`, and
//! `metadata.generation` tracked.

use kapi_core::{ErrorList, FieldPath, Hooks};

use crate::generated::core::v1::PodTemplate;

use super::pod_spec::{default_template, validate_pod_spec};

/// The hooks of PodTemplate.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodTemplateHooks;

impl Hooks<PodTemplate> for PodTemplateHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, pt: &mut PodTemplate) {
        if let Some(t) = pt.template.as_mut() {
            default_template(t);
        }
    }

    fn validate(&self, pt: &PodTemplate) -> ErrorList {
        let spec = pt.template.as_ref().and_then(|t| t.spec.as_ref());
        match spec {
            Some(spec) => validate_pod_spec(spec, &FieldPath::new("template.spec")),
            None => ErrorList::new(),
        }
    }

    fn validate_update(&self, new: &PodTemplate, _old: &PodTemplate) -> ErrorList {
        self.validate(new)
    }
}
