//! The generated resource behaves: metadata, schema defaults, hooks, registration.

use std::sync::Arc;

use kapi_core::{ObjectStrategy, Registrar, Resource};
use kapi_example_build_rs::toys_example_com::v1alpha1::Gizmo;
use serde_json::json;

#[derive(Default)]
struct Collect(Vec<Arc<dyn ObjectStrategy>>);

impl Registrar for Collect {
    fn register(&mut self, strategy: Arc<dyn ObjectStrategy>) {
        self.0.push(strategy);
    }
}

#[test]
fn generated_resource_registers_and_validates() {
    assert_eq!(Gizmo::GROUP, "toys.example.com");
    assert_eq!(Gizmo::PLURAL, "gizmos");
    assert_eq!(Gizmo::info().short_names.as_ref(), ["gz"]);

    let mut reg = Collect::default();
    kapi_example_build_rs::register(&mut reg);
    assert_eq!(reg.0.len(), 1);
    let strategy = &reg.0[0];

    let mut obj = json!({
        "apiVersion": "toys.example.com/v1alpha1",
        "kind": "Gizmo",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"motor": "clockwork", "junk": 1},
        "status": {"laps": 3}
    });
    strategy.prepare_for_create(&mut obj);
    // Defaulted, pruned, status cleared, generation set.
    assert_eq!(obj["spec"], json!({"motor": "clockwork", "speed": 3}));
    assert!(obj.get("status").is_none());
    assert_eq!(obj["metadata"]["generation"], json!(1));
    assert!(strategy.validate(&obj).is_empty());

    let mut fast = obj.clone();
    fast["spec"]["speed"] = json!(9);
    let errs = strategy.validate(&fast);
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].to_string(),
        "spec.speed: Invalid value: 9: clockwork gizmos may not run faster than 5"
    );

    let mut changed = obj.clone();
    changed["spec"]["motor"] = json!("electric");
    let errs = strategy.validate_update(&changed, &obj);
    assert_eq!(
        errs[0].to_string(),
        "spec.motor: Invalid value: \"electric\": field is immutable"
    );
}

/// The generated code built into a binary of its own (warnings denied there) registers
/// the kind.
#[test]
fn generated_code_builds_into_a_binary() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gizmo-kinds"))
        .output()
        .expect("running gizmo-kinds");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "toys.example.com/v1alpha1 Gizmo\n"
    );
}
