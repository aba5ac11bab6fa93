//! A crate that defines its own resource, `Gizmo`, in `schemas/gizmo.yaml` and compiles
//! it with `kapi-codegen` from `build.rs`. The generated code lands in
//! `toys_example_com::v1alpha1`, and `register` installs it into a kapi server.

include!(concat!(env!("OUT_DIR"), "/kapi_generated.rs"));

pub mod hooks {
    //! Hand-written behaviour for the generated `Gizmo`, kept out of generated code.

    use kapi_core::field::{ErrorList, FieldError, FieldPath};

    use crate::toys_example_com::v1alpha1::{Gizmo, GizmoSpecMotor};

    /// Clockwork gizmos wind down: they may not run faster than 5.
    #[derive(Default)]
    pub struct GizmoHooks;

    impl kapi_core::Hooks<Gizmo> for GizmoHooks {
        fn validate(&self, obj: &Gizmo) -> ErrorList {
            let mut errs = ErrorList::new();
            if obj
                .spec
                .as_ref()
                .is_some_and(|s| s.motor == GizmoSpecMotor::Clockwork && s.speed.unwrap_or(0) > 5)
            {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec.speed"),
                    obj.spec.as_ref().and_then(|s| s.speed).unwrap_or(0),
                    "clockwork gizmos may not run faster than 5",
                ));
            }
            errs
        }

        fn immutable_fields(&self) -> &[&'static str] {
            &["spec.motor"]
        }
    }
}
