//! Operations rendered as OpenAPI v2 or v3 path items.

use serde_json::{Map, Value, json};

use super::routes::{PRETTY, Param, Route};
use super::schema::Flavor;

/// Content types of request and response bodies (what a custom resource endpoint
/// serves: JSON and YAML).
const JSON_YAML: [&str; 2] = ["application/json", "application/yaml"];
/// Patch bodies kapi accepts. Strategic merge is listed (kube-apiserver does not list
/// it for custom resources) because kapi applies it to every resource, and kubectl
/// apply only computes a strategic merge patch when the patch operation lists it.
const PATCH_TYPES: [&str; 4] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

fn param_key(p: &Param) -> (&'static str, &'static str) {
    (p.name, p.in_)
}

/// A route's parameters, path ones included, sorted by name then location.
fn all_params(route: &Route) -> Vec<(Param, String)> {
    let mut out: Vec<(Param, String)> = route
        .path_params
        .iter()
        .map(|(name, desc)| {
            (
                Param {
                    name,
                    in_: "path",
                    type_: "string",
                    description: "",
                },
                desc.clone(),
            )
        })
        .collect();
    out.push((PRETTY, PRETTY.description.to_string()));
    out.extend(route.query.iter().map(|p| (*p, p.description.to_string())));
    out.sort_by_key(|(p, _)| param_key(p));
    out
}

fn param_json(p: &Param, description: &str, flavor: Flavor) -> Value {
    let mut m = Map::new();
    if flavor == Flavor::V2 {
        m.insert("uniqueItems".into(), true.into());
        m.insert("type".into(), p.type_.into());
    }
    m.insert("description".into(), description.into());
    m.insert("name".into(), p.name.into());
    m.insert("in".into(), p.in_.into());
    if p.in_ == "path" {
        m.insert("required".into(), true.into());
    }
    if flavor == Flavor::V3 {
        m.insert(
            "schema".into(),
            json!({"type": p.type_, "uniqueItems": true}),
        );
    }
    Value::Object(m)
}

/// The path items of `routes` (several resources' routes may be passed together),
/// keyed by path. Parameters every operation of a path shares move to the path item,
/// as kube-openapi does.
pub(crate) fn path_items(routes: &[Route], flavor: Flavor) -> Map<String, Value> {
    let mut by_path: Vec<(&str, Vec<&Route>)> = Vec::new();
    for r in routes {
        match by_path.iter_mut().find(|(p, _)| *p == r.path) {
            Some((_, rs)) => rs.push(r),
            None => by_path.push((&r.path, vec![r])),
        }
    }
    let mut out = Map::new();
    for (path, rs) in by_path {
        let params: Vec<Vec<(Param, String)>> = rs.iter().map(|r| all_params(r)).collect();
        let common: Vec<(Param, String)> = params[0]
            .iter()
            .filter(|(p, _)| {
                params
                    .iter()
                    .all(|ps| ps.iter().any(|(q, _)| param_key(q) == param_key(p)))
            })
            .cloned()
            .collect();
        let mut item = Map::new();
        item.insert(
            "parameters".into(),
            common
                .iter()
                .map(|(p, d)| param_json(p, d, flavor))
                .collect::<Vec<_>>()
                .into(),
        );
        for (r, ps) in rs.iter().zip(&params) {
            let own: Vec<&(Param, String)> = ps
                .iter()
                .filter(|(p, _)| !common.iter().any(|(c, _)| param_key(c) == param_key(p)))
                .collect();
            item.insert(r.method.into(), operation(r, &own, flavor));
        }
        out.insert(path.to_string(), Value::Object(item));
    }
    out
}

fn operation(r: &Route, own: &[&(Param, String)], flavor: Flavor) -> Value {
    let reference = |name: &str| json!({"$ref": format!("{}{name}", flavor.prefix())});
    let mut op = Map::new();
    op.insert("description".into(), r.description.as_str().into());
    op.insert("operationId".into(), r.operation_id.as_str().into());
    op.insert("tags".into(), json!([r.tag]));
    let mut params: Vec<Value> = own.iter().map(|(p, d)| param_json(p, d, flavor)).collect();
    let consumes: &[&str] = match &r.body {
        Some((_, _, true)) => &PATCH_TYPES,
        _ => &JSON_YAML,
    };
    if let Some((name, required, _)) = &r.body {
        match flavor {
            Flavor::V2 => params.insert(
                0,
                json!({"name": "body", "in": "body", "required": required, "schema": reference(name)}),
            ),
            Flavor::V3 => {
                let content: Map<String, Value> = consumes
                    .iter()
                    .map(|ct| (ct.to_string(), json!({"schema": reference(name)})))
                    .collect();
                let mut body = Map::new();
                body.insert("content".into(), content.into());
                if *required {
                    body.insert("required".into(), true.into());
                }
                op.insert("requestBody".into(), body.into());
            }
        }
    }
    if !params.is_empty() {
        op.insert("parameters".into(), params.into());
    }
    let mut responses = Map::new();
    for (code, text, name) in &r.responses {
        let response = match flavor {
            Flavor::V2 => json!({"description": text, "schema": reference(name)}),
            Flavor::V3 => {
                let content: Map<String, Value> = JSON_YAML
                    .iter()
                    .map(|ct| (ct.to_string(), json!({"schema": reference(name)})))
                    .collect();
                json!({"description": text, "content": content})
            }
        };
        responses.insert(code.to_string(), response);
    }
    responses.insert("401".into(), json!({"description": "Unauthorized"}));
    op.insert("responses".into(), responses.into());
    if flavor == Flavor::V2 {
        op.insert("consumes".into(), json!(consumes));
        op.insert("produces".into(), json!(JSON_YAML));
        op.insert("schemes".into(), json!(["https"]));
    }
    op.insert("x-kubernetes-action".into(), r.action.into());
    op.insert("x-kubernetes-group-version-kind".into(), r.gvk.clone());
    Value::Object(op)
}
