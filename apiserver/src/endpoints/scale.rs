//! The scale subresource: an `autoscaling/v1` `Scale` view of an object, through the
//! replica paths its resource declares (as for a CRD's `subresources.scale`).

use http::{Request, Response, StatusCode, header};
use kapi_core::ScaleInfo;
use serde_json::{Value, json};

use super::patch::PatchType;
use super::{Api, Body, json_response, read_body};
use crate::negotiation::{Output, Wire, decode_body, is_protobuf};
use crate::registry::{Store, Subresource, object};
use crate::request::{Query, ResourcePath, Verb};
use crate::status::ApiError;

fn pointer(json_path: &str) -> String {
    json_path
        .trim_start_matches('.')
        .split('.')
        .map(|s| format!("/{s}"))
        .collect()
}

/// The `Scale` of `obj`.
fn scale_of(obj: &Value, scale: &ScaleInfo) -> Value {
    let meta = &obj["metadata"];
    let mut metadata = json!({});
    for f in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = meta.get(f) {
            metadata[f] = v.clone();
        }
    }
    let replicas = obj
        .pointer(&pointer(&scale.spec_replicas_path))
        .cloned()
        .unwrap_or(json!(0));
    let mut status = json!({
        "replicas": obj.pointer(&pointer(&scale.status_replicas_path)).cloned().unwrap_or(json!(0)),
    });
    let selector = scale
        .label_selector_path
        .as_ref()
        .and_then(|p| obj.pointer(&pointer(p)));
    match selector {
        Some(Value::String(sel)) => status["selector"] = json!(sel),
        // Built-ins keep their selector as an object (a LabelSelector, or a map for a
        // ReplicationController); Scale shows it in the string syntax, as their scale
        // registries do.
        Some(sel @ Value::Object(_)) => {
            if let Ok(sel) = kapi_core::selector::LabelSelector::from_json(sel) {
                status["selector"] = json!(sel.to_string());
            }
        }
        _ => {}
    }
    json!({
        "kind": ScaleInfo::KIND,
        "apiVersion": ScaleInfo::API_VERSION,
        "metadata": metadata,
        "spec": { "replicas": replicas },
        "status": status,
    })
}

/// Writes `replicas` into `obj` at the spec replicas path, creating parents.
fn set_replicas(obj: &mut Value, scale: &ScaleInfo, replicas: Value) {
    let path = pointer(&scale.spec_replicas_path);
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut cur = obj;
    for (i, part) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let map = cur.as_object_mut().expect("made an object above");
        if i + 1 == parts.len() {
            map.insert(part.to_string(), replicas);
            return;
        }
        cur = map.entry(part.to_string()).or_insert_with(|| json!({}));
    }
}

/// Computes the wanted `Scale` from the current one (a PUT body, or a patched view).
type ScaleChange = Box<dyn Fn(&Value) -> Result<Value, ApiError> + Send>;

/// Serves `.../{name}/scale`.
pub async fn handle<B>(
    api: &Api,
    store: &std::sync::Arc<Store>,
    req: Request<B>,
    namespace: Option<&str>,
    r: &ResourcePath,
    verb: Verb,
    query: &Query,
) -> Result<Response<Body>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let info = store.info().clone();
    let scale = info
        .subresources
        .scale
        .clone()
        .expect("routed only when served");
    let name = r.name.clone().unwrap_or_default();
    // A read takes no write options; a write's are validated as kube validates them.
    let opts = match verb {
        Verb::Get => crate::registry::WriteOptions::default(),
        Verb::Patch => query.patch_options(false)?,
        _ => query.write_options("UpdateOptions")?,
    };
    let opts = super::for_request(opts, &req);
    // `autoscaling/v1` `Scale` is a built-in kind, in protobuf too, whatever is scaled.
    let scale_message = api
        .protobuf
        .kind(ScaleInfo::GROUP, ScaleInfo::VERSION, ScaleInfo::KIND);
    let wire = scale_message.map(|m| Wire::of(api.protobuf, m));
    let output = super::output_of(&req, wire)?;
    let new_scale: ScaleChange = match verb {
        Verb::Get => {
            let obj = store
                .get(namespace, &name, kapi_storage::ReadAt::Latest)
                .await?;
            return answer(output, &scale_of(&obj, &scale));
        }
        Verb::Update => {
            let protobuf = req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(is_protobuf);
            let bytes = read_body(req.into_body()).await?;
            let body = match scale_message {
                Some(message) if protobuf => {
                    super::protobuf::decode_body(api.protobuf, &bytes, message, "Scale")?.value
                }
                _ => decode_body("application/json", &bytes)?.value,
            };
            Box::new(move |_current: &Value| Ok(body.clone()))
        }
        Verb::Patch => {
            let content_type = req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let patch_type = PatchType::from_content_type(&content_type)?;
            let bytes = read_body(req.into_body()).await?;
            let patch = decode_body(&content_type, &bytes)?.value;
            let schema = kapi_core::schema::Schema::parse(
                &json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            )
            .expect("a constant schema");
            Box::new(move |current: &Value| patch_type.apply(current, &patch, &schema))
        }
        _ => return Err(ApiError::method_not_supported(&info, verb.as_str())),
    };
    let scale_for_update = scale.clone();
    let conflict_name = name.clone();
    let (obj, _) = store
        .update_with(
            namespace,
            &name,
            Subresource::Scale,
            &opts,
            move |current| {
                let wanted = new_scale(&scale_of(current, &scale_for_update))?;
                let rv = object::meta_str(&wanted, "resourceVersion");
                let current_rv = object::meta_str(current, "resourceVersion");
                if !rv.is_empty() && rv != current_rv {
                    return Err(ApiError::stale(store.info(), &conflict_name));
                }
                let replicas = wanted
                    .pointer("/spec/replicas")
                    .cloned()
                    .unwrap_or(json!(0));
                let mut obj = current.clone();
                set_replicas(&mut obj, &scale_for_update, replicas);
                Ok(obj)
            },
        )
        .await?;
    answer(output, &scale_of(&obj, &scale))
}

/// A 200 with the `Scale`, in protobuf when the client asked for it.
fn answer(output: Output, scale: &Value) -> Result<Response<Body>, ApiError> {
    match output {
        Output::Protobuf(wire) => Ok(super::document(
            StatusCode::OK,
            super::protobuf::MEDIA_TYPE,
            super::protobuf::encode_known(wire.catalog, scale)?,
        )),
        _ => Ok(json_response(StatusCode::OK, scale)),
    }
}
