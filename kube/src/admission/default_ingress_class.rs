//! kube-apiserver's DefaultIngressClass admission plugin
//! (`plugin/pkg/admission/network/defaultingressclass`): a new Ingress that names no
//! class (neither `spec.ingressClassName` nor the legacy `kubernetes.io/ingress.class`
//! annotation) gets the default IngressClass, the one annotated
//! `ingressclass.kubernetes.io/is-default-class: "true"`. When several are, the most
//! recently created one is chosen (the first by name among equals), as kube ≥ 1.28
//! chooses it.

use kapi_storage::ReadAt;
use serde_json::Value;

use kapi_apiserver::registry::{AdmissionRequest, ListOptions, Operation, Registry};
use kapi_apiserver::status::ApiError;

/// The annotation that marks the default class.
pub const DEFAULT_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";
/// The annotation that named a class before `spec.ingressClassName`.
const LEGACY_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// Whether the plugin looks at `request`: the create of an Ingress.
pub fn handles(request: &AdmissionRequest<'_>) -> bool {
    request.operation == Operation::Create
        && request.subresource.is_empty()
        && request.info.group == "networking.k8s.io"
        && request.info.plural == "ingresses"
}

/// Sets the default class on an Ingress that names none.
pub async fn admit(registry: &Registry, ingress: &mut Value) -> Result<(), ApiError> {
    let named = ingress["spec"]["ingressClassName"].is_string()
        || ingress["metadata"]["annotations"]
            .get(LEGACY_CLASS_ANNOTATION)
            .is_some();
    if named {
        return Ok(());
    }
    let Some(store) = registry.get("networking.k8s.io", "v1", "ingressclasses") else {
        return Ok(());
    };
    let opts = ListOptions {
        read_at: ReadAt::Any,
        ..ListOptions::default()
    };
    let list = store.list(None, &opts).await?;
    let mut defaults: Vec<&Value> = list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|c| c["metadata"]["annotations"][DEFAULT_CLASS_ANNOTATION] == "true")
                .collect()
        })
        .unwrap_or_default();
    // Newest first (RFC 3339 timestamps sort as text), then by name.
    defaults.sort_by(|a, b| {
        let created = |c: &Value| {
            c["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let name = |c: &Value| {
            c["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        created(b)
            .cmp(&created(a))
            .then_with(|| name(a).cmp(&name(b)))
    });
    if let Some(class) = defaults.first() {
        if !ingress["spec"].is_object() {
            ingress["spec"] = Value::Object(Default::default());
        }
        ingress["spec"]["ingressClassName"] = class["metadata"]["name"].clone();
    }
    Ok(())
}
