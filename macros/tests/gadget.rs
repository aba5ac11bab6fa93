//! Behaviour of `#[derive(Resource)]` on a hand-written resource with no YAML: resource
//! info, schema, metadata access and the typed strategy built from it.

use std::sync::Arc;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kapi_core::__private::schemars::{self, JsonSchema};
use kapi_core::field::{ErrorList, FieldError, FieldPath};
use kapi_core::schema::Schema;
use kapi_core::{
    Hooks, ObjectStrategy, PrinterColumn, Registrar, Resource, ScaleInfo, Scope, TypedStrategy,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A gadget: a namespaced test resource with spec, status and the scale subresource.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "example.kapi.dev",
    version = "v1alpha1",
    namespaced,
    status,
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    shortname = "gd",
    shortname = "gdg",
    category = "all",
    printcolumn(name = "Color", type = "string", json_path = ".spec.color"),
    printcolumn(
        name = "Replicas",
        type = "integer",
        format = "int32",
        json_path = ".spec.replicas",
        description = "Desired replicas",
        priority = 1
    ),
    selectable_field = ".spec.color",
    hooks = GadgetHooks
)]
pub struct Gadget {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: GadgetSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GadgetStatus>,
}

/// What a gadget should look like.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GadgetSpec {
    /// Its color.
    pub color: Color,
    /// How many copies.
    pub replicas: i32,
    /// A free-form note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A gadget's color.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    /// Red.
    #[default]
    Red,
    /// Green.
    Green,
    /// Blue.
    Blue,
}

/// What a gadget looks like now.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GadgetStatus {
    /// Copies running.
    pub replicas: i32,
    /// Label selector of the copies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// Hand-written validation: blue gadgets come in even numbers.
#[derive(Default)]
pub struct GadgetHooks;

impl Hooks<Gadget> for GadgetHooks {
    fn validate(&self, obj: &Gadget) -> ErrorList {
        let mut errs = ErrorList::new();
        if obj.spec.color == Color::Blue && obj.spec.replicas % 2 != 0 {
            errs.push(FieldError::invalid(
                &FieldPath::new("spec.replicas"),
                obj.spec.replicas,
                "blue gadgets come in pairs",
            ));
        }
        errs
    }

    fn immutable_fields(&self) -> &[&'static str] {
        &["spec.color"]
    }
}

#[test]
fn constants() {
    assert_eq!(Gadget::GROUP, "example.kapi.dev");
    assert_eq!(Gadget::VERSION, "v1alpha1");
    assert_eq!(Gadget::KIND, "Gadget");
    assert_eq!(Gadget::PLURAL, "gadgets");
}

#[test]
fn info() {
    let info = Gadget::info();
    assert_eq!(info.api_version(), "example.kapi.dev/v1alpha1");
    assert_eq!(info.kind, "Gadget");
    assert_eq!(info.list_kind, "GadgetList");
    assert_eq!(info.plural, "gadgets");
    assert_eq!(info.singular, "gadget");
    assert_eq!(info.scope, Scope::Namespaced);
    assert!(info.namespaced());
    assert_eq!(info.short_names.as_ref(), ["gd", "gdg"]);
    assert_eq!(info.categories.as_ref(), ["all"]);
    assert!(info.subresources.status);
    assert_eq!(
        info.subresources.scale,
        Some(ScaleInfo {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        })
    );
    assert_eq!(
        info.printer_columns.as_ref(),
        [
            PrinterColumn {
                name: "Color".into(),
                type_: "string".into(),
                format: None,
                description: None,
                priority: 0,
                json_path: ".spec.color".into(),
            },
            PrinterColumn {
                name: "Replicas".into(),
                type_: "integer".into(),
                format: Some("int32".into()),
                description: Some("Desired replicas".into()),
                priority: 1,
                json_path: ".spec.replicas".into(),
            },
        ]
    );
    assert_eq!(info.selectable_fields.as_ref(), [".spec.color"]);
    assert_eq!(info.verbs, kapi_core::resource::ALL_VERBS);
    assert!(info.served);
    assert!(info.storage);
    assert!(!info.deprecated);
    assert_eq!(info.deprecation_warning, None);
    // The same static every time.
    assert!(std::ptr::eq(Gadget::info(), Gadget::info()));
}

#[test]
fn metadata_access() {
    let mut gadget = Gadget::default();
    gadget.metadata_mut().name = Some("g1".into());
    gadget.metadata_mut().namespace = Some("default".into());
    assert_eq!(gadget.metadata().name.as_deref(), Some("g1"));
    assert_eq!(gadget.metadata.namespace.as_deref(), Some("default"));
}

#[test]
fn structural_json() {
    let json_schema = schemars::schema_for!(Gadget);
    let structural = Schema::structural_from_json_schema(json_schema.as_value()).unwrap();
    assert_eq!(structural["type"], "object");
    assert_eq!(
        structural["properties"]["metadata"],
        json!({"type": "object"})
    );
    assert_eq!(structural["required"], json!(["spec"]));
    let spec = &structural["properties"]["spec"];
    assert_eq!(spec["type"], "object");
    assert_eq!(spec["description"], "Desired state.");
    assert_eq!(spec["required"], json!(["color", "replicas"]));
    assert_eq!(
        spec["properties"]["color"],
        json!({"type": "string", "enum": ["red", "green", "blue"], "description": "Its color."})
    );
    assert_eq!(
        spec["properties"]["replicas"],
        json!({"type": "integer", "format": "int32", "description": "How many copies."})
    );
    assert_eq!(
        spec["properties"]["note"],
        json!({"type": "string", "nullable": true, "description": "A free-form note."})
    );
    let status = &structural["properties"]["status"];
    assert_eq!(status["type"], "object");
    assert_eq!(status["nullable"], true);
    assert_eq!(status["required"], json!(["replicas"]));
    assert!(structural.get("$defs").is_none() && structural.get("title").is_none());
    assert!(!structural.to_string().contains("$ref"));
}

#[test]
fn schema() {
    let schema = Gadget::schema();
    assert!(std::ptr::eq(schema, Gadget::schema()), "converted once");
    assert_eq!(
        schema.properties.keys().collect::<Vec<_>>(),
        ["metadata", "spec", "status"]
    );
    assert_eq!(schema.required, ["spec"]);
    let spec = &schema.properties["spec"];
    assert_eq!(spec.required, ["color", "replicas"]);
    assert!(spec.properties["note"].nullable);
    assert!(!spec.properties["replicas"].nullable);
    assert_eq!(spec.properties["replicas"].format.as_deref(), Some("int32"));
    assert_eq!(
        spec.properties["color"].enum_,
        Some(vec![json!("red"), json!("green"), json!("blue")])
    );
    assert!(schema.properties["status"].nullable);
}

/// The smallest registry: remembers what was registered.
#[derive(Default)]
struct TestRegistrar {
    strategies: Vec<Arc<dyn ObjectStrategy>>,
}

impl Registrar for TestRegistrar {
    fn register(&mut self, strategy: Arc<dyn ObjectStrategy>) {
        self.strategies.push(strategy);
    }
}

fn registered_strategy() -> Arc<dyn ObjectStrategy> {
    let mut registrar = TestRegistrar::default();
    registrar.register(Arc::new(TypedStrategy::<Gadget>::new()));
    assert_eq!(registrar.strategies.len(), 1);
    registrar.strategies.remove(0)
}

#[test]
fn strategy_is_registered_with_the_resource_info() {
    let strategy = registered_strategy();
    assert_eq!(strategy.info(), Gadget::info());
    assert_eq!(strategy.info().plural, "gadgets");
}

#[test]
fn prepare_for_create_clears_status_and_sets_generation() {
    let strategy = registered_strategy();
    let mut obj = json!({
        "apiVersion": "example.kapi.dev/v1alpha1",
        "kind": "Gadget",
        "metadata": {"name": "g1", "namespace": "default", "generation": 7},
        "spec": {"color": "red", "replicas": 3},
        "status": {"replicas": 3},
    });
    strategy.prepare_for_create(&mut obj);
    assert_eq!(obj.get("status"), None);
    assert_eq!(obj["metadata"]["generation"], 1);
    assert_eq!(obj["spec"], json!({"color": "red", "replicas": 3}));
}

#[test]
fn hooks_validate() {
    let strategy = registered_strategy();
    let ok = json!({"metadata": {"name": "g1"}, "spec": {"color": "blue", "replicas": 2}});
    assert_eq!(strategy.validate(&ok), ErrorList::new());
    let odd = json!({"metadata": {"name": "g1"}, "spec": {"color": "blue", "replicas": 3}});
    let errs = strategy.validate(&odd);
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].to_string(),
        "spec.replicas: Invalid value: 3: blue gadgets come in pairs"
    );
}

#[test]
fn hooks_immutable_fields() {
    let strategy = registered_strategy();
    let old = json!({"metadata": {"name": "g1"}, "spec": {"color": "red", "replicas": 2}});
    let new = json!({"metadata": {"name": "g1"}, "spec": {"color": "green", "replicas": 2}});
    let errs = strategy.validate_update(&new, &old);
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].to_string(),
        "spec.color: Invalid value: \"green\": field is immutable"
    );
}

/// A read-only, cluster-scoped resource: only `get` and `list` are served.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(group = "", version = "v1", verb = "get", verb = "list")]
struct ComponentReading {
    metadata: ObjectMeta,
    healthy: Option<bool>,
}

#[test]
fn verbs_can_be_restricted() {
    let info = ComponentReading::info();
    assert_eq!(info.verbs.as_ref(), ["get", "list"]);
    assert_eq!(info.scope, Scope::Cluster);
    assert_eq!(info.plural, "componentreadings");
    assert_eq!(info.api_version(), "v1");
}
