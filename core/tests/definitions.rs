//! `$ref` to shared definitions: resolution, overlays, cycles and errors.

use kapi_core::field::FieldPath;
use kapi_core::schema::{Definitions, Schema};
use serde_json::json;

fn definitions() -> Definitions {
    let mut d = Definitions::new();
    d.insert(
        "io.example.v1.Port",
        json!({
            "description": "A port.",
            "type": "object",
            "required": ["port"],
            "properties": {
                "port": {"type": "integer", "format": "int32", "minimum": 1},
                "protocol": {"type": "string", "default": "TCP"}
            }
        }),
    );
    d.insert(
        "io.example.v1.Props",
        json!({
            "description": "Recursive.",
            "type": "object",
            "properties": {
                "items": {"$ref": "#/definitions/io.example.v1.Props"},
                "title": {"type": "string"}
            }
        }),
    );
    d.insert(
        "io.example.v1.Quantity",
        json!({"type": "string", "format": "quantity"}),
    );
    d
}

fn parse(v: serde_json::Value) -> Result<Schema, Vec<String>> {
    Schema::parse_with(&v, &FieldPath::root(), Some(&definitions()))
        .map_err(|e| e.iter().map(ToString::to_string).collect())
}

#[test]
fn a_reference_becomes_the_definition_with_its_siblings_laid_over() {
    let s = parse(json!({
        "type": "object",
        "properties": {
            "ports": {
                "type": "array",
                "x-kubernetes-patch-merge-key": "port",
                "x-kubernetes-patch-strategy": "merge",
                "items": {"$ref": "#/definitions/io.example.v1.Port"}
            },
            "main": {"$ref": "#/definitions/io.example.v1.Port", "description": "The main port."}
        }
    }))
    .unwrap();
    let main = &s.properties["main"];
    assert_eq!(main.definition.as_deref(), Some("io.example.v1.Port"));
    assert_eq!(main.description.as_deref(), Some("The main port."));
    assert_eq!(main.required, vec!["port".to_string()]);
    let item = s.properties["ports"].items.as_deref().unwrap();
    assert_eq!(item.description.as_deref(), Some("A port."));

    let mut obj = json!({"main": {"port": 80}, "ports": [{"port": 0}]});
    s.apply_defaults(&mut obj);
    assert_eq!(obj["main"]["protocol"], "TCP");
    let errs: Vec<String> = s
        .validate(&obj, &FieldPath::root())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec![
            "ports[0].port: Invalid value: 0: ports[0].port in body should be greater than or equal to 1"
        ]
    );
}

#[test]
fn a_recursive_definition_is_cut_where_it_refers_to_itself() {
    let s = parse(json!({
        "type": "object",
        "properties": {"schema": {"$ref": "#/definitions/io.example.v1.Props"}}
    }))
    .unwrap();
    let outer = &s.properties["schema"];
    assert_eq!(outer.definition.as_deref(), Some("io.example.v1.Props"));
    let inner = &outer.properties["items"];
    assert!(inner.x_preserve_unknown_fields);
    assert!(inner.properties.is_empty());
    assert_eq!(inner.definition, None);
    // Nothing below the cut is pruned.
    let mut obj = json!({"schema": {"items": {"anything": {"goes": 1}}, "title": "t"}});
    let before = obj.clone();
    s.prune(&mut obj);
    assert_eq!(obj, before);
}

#[test]
fn unknown_and_malformed_references_are_errors_with_paths() {
    let errs = parse(json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/definitions/io.example.v1.Missing"},
            "b": {"$ref": "io.example.v1.Port"}
        }
    }))
    .unwrap_err();
    assert_eq!(
        errs,
        vec![
            "properties[a].$ref: Not found: \"io.example.v1.Missing\"".to_string(),
            "properties[b].$ref: Invalid value: \"io.example.v1.Port\": must be a string of the form #/definitions/NAME".to_string(),
        ]
    );
}

#[test]
fn without_definitions_a_reference_is_refused_as_in_a_crd() {
    let errs = Schema::parse(&json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/io.example.v1.Port"}}
    }))
    .unwrap_err();
    assert!(
        errs.iter()
            .any(|e| e.to_string().contains("$ref is not supported")),
        "{errs:?}"
    );
}

#[test]
fn a_quantity_written_as_a_number_is_stored_as_a_string() {
    let s = parse(json!({
        "type": "object",
        "properties": {
            "limits": {"type": "object", "additionalProperties": {"$ref": "#/definitions/io.example.v1.Quantity"}}
        }
    }))
    .unwrap();
    let mut obj = json!({"limits": {"cpu": 1, "memory": "1Gi", "gpu": 0.5}});
    s.apply_defaults(&mut obj);
    assert_eq!(
        obj,
        json!({"limits": {"cpu": "1", "memory": "1Gi", "gpu": "0.5"}})
    );
    assert!(s.validate(&obj, &FieldPath::root()).is_empty());
}
