//! The OpenAPI v2 document in protobuf, as gnostic's `openapi.v2.Document` message.
//!
//! Why this exists: kubectl 1.27 and 1.28 validate manifests client-side (`kubectl
//! apply -f`, `create -f` with the default `--validate=strict`) and compute strategic
//! merge patches from `GET /openapi/v2`, which they request only as
//! `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (falling back to
//! `/swagger-2.0.0.pb-v1`, not JSON). Without a protobuf answer they abort with "the
//! server could not find the requested resource". kube-apiserver (kube-openapi's
//! handler) produces it by parsing its Swagger JSON with gnostic's
//! `openapi_v2.ParseDocument` and marshalling the result; [`encode`] does the same
//! from the JSON of [`super::v2`].
//!
//! The message structs below are written by hand from the field numbers of gnostic's
//! `openapiv2/OpenAPIv2.proto` (github.com/google/gnostic-models), covering every
//! message a Swagger 2.0 document can need except `google.protobuf.Any`'s binary form
//! (`Any.value`), which gnostic only fills for registered extension handlers and
//! kube-apiserver never does. Names of Rust fields drop the keyword clash (`in_`,
//! `type_`, `xref` for `_ref`, `enum_`); the wire format only depends on the numbers.
//!
//! Conversion follows gnostic's rules: every object member is read by name, `x-*`
//! members become vendor extensions (`NamedAny` with the value as YAML text; JSON is
//! YAML, so the value is written as flow-style JSON), `default`, `example` and `enum`
//! values become `Any`, and the `oneof`s are chosen as gnostic chooses them (`$ref`
//! makes a JSON reference, `in` picks the parameter kind, `type: file` a file schema, a
//! boolean `additionalProperties` the boolean). Unlike gnostic, values of the wrong
//! JSON type are skipped instead of failing the whole document.

use serde_json::Value;

mod convert;
mod document;
mod schema;

pub use document::*;
pub use schema::*;

/// The media type kube-openapi answers with (it accepts this and the older
/// [`PROTOBUF_SUBTYPE_DEPRECATED`] form in `Accept`).
pub const PROTOBUF_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The subtype of [`PROTOBUF_CONTENT_TYPE`].
pub const PROTOBUF_SUBTYPE: &str = "com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The subtype kubectl up to 1.28 asks for (`application/` + this).
pub const PROTOBUF_SUBTYPE_DEPRECATED: &str = "com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// The Swagger 2.0 JSON document `swagger` encoded as gnostic's `openapi.v2.Document`.
pub fn encode(swagger: &Value) -> Vec<u8> {
    use prost::Message as _;
    convert::document(swagger).encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::convert::{strings, yaml_text};
    use super::*;
    use prost::Message as _;
    use serde_json::json;

    fn decode(v: &Value) -> Document {
        Document::decode(encode(v).as_slice()).expect("decodes")
    }

    /// The parameter of an item, unless it is a reference.
    fn param(p: &ParametersItem) -> Option<&ParameterOneof> {
        match &p.oneof {
            Some(ParametersItemOneof::Parameter(p)) => p.oneof.as_ref(),
            _ => None,
        }
    }

    /// The non-body parameter of an item.
    fn non_body(p: &ParametersItem) -> Option<&NonBodyParameterOneof> {
        match param(p) {
            Some(ParameterOneof::NonBodyParameter(n)) => n.oneof.as_ref(),
            _ => None,
        }
    }

    #[test]
    fn yaml_text_is_flow_json() {
        assert_eq!(
            yaml_text(&json!([{"group": "g", "kind": "K", "version": "v1"}])),
            "[{\"group\": \"g\", \"kind\": \"K\", \"version\": \"v1\"}]\n"
        );
        assert_eq!(yaml_text(&json!("a \"b\"\n")), "\"a \\\"b\\\"\\n\"\n");
        assert_eq!(yaml_text(&json!(true)), "true\n");
    }

    #[test]
    fn schema_keywords_and_oneofs() {
        let doc = decode(&json!({
            "swagger": "2.0",
            "info": {"title": "T", "version": "v"},
            "paths": {},
            "definitions": {
                "a.B": {
                    "type": "object",
                    "required": ["x"],
                    "properties": {
                        "x": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 5},
                        "m": {"type": "object", "additionalProperties": {"type": "string"}},
                        "n": {"type": "object", "additionalProperties": false},
                        "l": {"type": "array", "items": {"$ref": "#/definitions/a.C"},
                              "x-kubernetes-list-type": "atomic"},
                        "e": {"type": "string", "enum": ["p", "q"], "default": "p"}
                    }
                },
                "a.C": {"type": "object", "properties": {}}
            }
        }));
        let defs = doc.definitions.expect("definitions").additional_properties;
        assert_eq!(defs.len(), 2);
        let b = defs[0].value.as_ref().expect("a.B");
        assert_eq!(b.required, ["x"]);
        let props = &b
            .properties
            .as_ref()
            .expect("properties")
            .additional_properties;
        let prop = |n: &str| {
            props
                .iter()
                .find(|p| p.name == n)
                .and_then(|p| p.value.clone())
                .expect(n)
        };
        let x = prop("x");
        assert_eq!(x.type_.expect("type").value, ["integer"]);
        assert_eq!(
            (x.minimum, x.maximum, x.format.as_str()),
            (1.0, 5.0, "int32")
        );
        match prop("m").additional_properties.and_then(|a| a.oneof) {
            Some(AdditionalPropertiesOneof::Schema(s)) => {
                assert_eq!(s.type_.expect("type").value, ["string"])
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            prop("n").additional_properties.and_then(|a| a.oneof),
            Some(AdditionalPropertiesOneof::Boolean(false))
        );
        let l = prop("l");
        assert_eq!(l.items.expect("items").schema[0].xref, "#/definitions/a.C");
        assert_eq!(l.vendor_extension[0].name, "x-kubernetes-list-type");
        let e = prop("e");
        let yaml: Vec<String> = e.enum_.into_iter().map(|a| a.yaml).collect();
        assert_eq!(yaml, ["\"p\"\n", "\"q\"\n"]);
        assert_eq!(e.default.expect("default").yaml, "\"p\"\n");
        // An empty `properties` stays present.
        let c = defs[1].value.as_ref().expect("a.C");
        assert_eq!(c.properties, Some(Properties::default()));
    }

    /// The strategies of the repository's `schemas/widget.yaml`.
    fn widget() -> Vec<std::sync::Arc<dyn kapi_core::ObjectStrategy>> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/widget.yaml");
        let mut out: Vec<std::sync::Arc<dyn kapi_core::ObjectStrategy>> = Vec::new();
        for doc in kapi_testing::yaml_documents(&path) {
            let crd = kapi_core::crd::CustomResourceDefinition::parse(&doc).expect("a CRD");
            for v in &crd.versions {
                out.push(std::sync::Arc::new(kapi_core::SchemaStrategy::new(
                    crd.resource_info(v),
                    v.schema.clone(),
                )));
            }
        }
        out
    }

    #[test]
    fn widget_document_round_trips() {
        let json = super::super::v2(&widget(), &super::super::OpenApiOptions::default());
        let doc = decode(&json);
        assert_eq!(doc.swagger, "2.0");
        assert_eq!(
            doc.info.as_ref().map(|i| i.title.as_str()),
            Some("Kubernetes")
        );

        // Every definition, in the JSON's order.
        let defs = doc.definitions.expect("definitions").additional_properties;
        let json_defs = json["definitions"].as_object().expect("definitions");
        assert_eq!(defs.len(), json_defs.len());
        assert!(defs.iter().map(|d| &d.name).eq(json_defs.keys()));

        // The Widget: its fields, required lists and references.
        let name = "dev.kapi.example.v1.Widget";
        let widget = defs
            .iter()
            .find(|d| d.name == name)
            .and_then(|d| d.value.clone())
            .expect("Widget");
        let fields = |s: &Schema| -> Vec<String> {
            s.properties
                .iter()
                .flat_map(|p| &p.additional_properties)
                .map(|p| p.name.clone())
                .collect()
        };
        let json_fields = |v: &Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(fields(&widget), json_fields(&json_defs[name]));
        let prop = |s: &Schema, n: &str| -> Schema {
            s.properties
                .iter()
                .flat_map(|p| &p.additional_properties)
                .find(|p| p.name == n)
                .and_then(|p| p.value.clone())
                .unwrap_or_else(|| panic!("{n}"))
        };
        assert_eq!(
            prop(&widget, "metadata").xref,
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        let spec = prop(&widget, "spec");
        let json_spec = &json_defs[name]["properties"]["spec"];
        assert_eq!(fields(&spec), json_fields(json_spec));
        assert_eq!(
            spec.required,
            strings(json_spec.as_object().unwrap(), "required")
        );
        let replicas = prop(&spec, "replicas");
        assert_eq!(replicas.type_.expect("type").value, ["integer"]);
        assert_eq!(
            replicas.maximum,
            json_spec["properties"]["replicas"]["maximum"]
                .as_f64()
                .unwrap()
        );

        // The group-version-kind extension kubectl finds the kind by, as YAML text that
        // parses back to the JSON value.
        let gvk = widget
            .vendor_extension
            .iter()
            .find(|e| e.name == "x-kubernetes-group-version-kind")
            .and_then(|e| e.value.clone())
            .expect("x-kubernetes-group-version-kind");
        let parsed: Value = serde_json::from_str(&gvk.yaml).expect("flow YAML is JSON here");
        assert_eq!(parsed, json_defs[name]["x-kubernetes-group-version-kind"]);
        assert_eq!(parsed[0]["kind"], "Widget");

        // Paths and the PATCH operation kubectl inspects for `fieldValidation`.
        let paths = doc.paths.expect("paths").path;
        assert_eq!(paths.len(), json["paths"].as_object().unwrap().len());
        let item = paths
            .iter()
            .find(|p| p.name == "/apis/example.kapi.dev/v1/namespaces/{namespace}/widgets/{name}")
            .and_then(|p| p.value.clone())
            .expect("the widget item path");
        let patch = item.patch.expect("patch");
        let query: Vec<&str> = patch
            .parameters
            .iter()
            .filter_map(|p| match non_body(p) {
                Some(NonBodyParameterOneof::Query(q)) => Some(q.name.as_str()),
                _ => None,
            })
            .collect();
        assert!(query.contains(&"fieldValidation"), "{query:?}");
        assert!(
            patch
                .vendor_extension
                .iter()
                .any(|e| e.name == "x-kubernetes-group-version-kind")
        );
    }

    #[test]
    fn parameters_responses_and_security() {
        let doc = decode(&json!({
            "swagger": "2.0",
            "info": {"title": "T", "version": "v"},
            "paths": {
                "/x/{name}": {
                    "parameters": [
                        {"name": "name", "in": "path", "required": true, "type": "string"},
                        {"$ref": "#/parameters/p"}
                    ],
                    "patch": {
                        "operationId": "patchX",
                        "consumes": ["application/merge-patch+json"],
                        "parameters": [
                            {"name": "body", "in": "body", "required": true,
                             "schema": {"type": "object"}},
                            {"name": "dryRun", "in": "query", "type": "string", "uniqueItems": true}
                        ],
                        "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/X"}},
                                      "401": {"description": "Unauthorized"}},
                        "x-kubernetes-action": "patch"
                    }
                }
            },
            "securityDefinitions": {
                "BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}
            },
            "security": [{"BearerToken": []}]
        }));
        let paths = doc.paths.expect("paths").path;
        assert_eq!(paths[0].name, "/x/{name}");
        let item = paths[0].value.clone().expect("item");
        assert!(matches!(
            non_body(&item.parameters[0]),
            Some(NonBodyParameterOneof::Path(p)) if p.required && p.name == "name"
        ));
        assert!(matches!(
            &item.parameters[1].oneof,
            Some(ParametersItemOneof::JsonReference(r)) if r.xref == "#/parameters/p"
        ));
        let patch = item.patch.expect("patch");
        assert_eq!(patch.operation_id, "patchX");
        assert!(matches!(
            param(&patch.parameters[0]),
            Some(ParameterOneof::BodyParameter(b)) if b.required && b.schema.is_some()
        ));
        assert!(matches!(
            non_body(&patch.parameters[1]),
            Some(NonBodyParameterOneof::Query(q)) if q.name == "dryRun" && q.unique_items
        ));
        let codes = patch.responses.expect("responses").response_code;
        assert_eq!(codes.len(), 2);
        assert!(matches!(
            &codes[0].value.as_ref().and_then(|v| v.oneof.clone()),
            Some(ResponseValueOneof::Response(r)) if r.description == "OK"
                && matches!(&r.schema.as_ref().and_then(|s| s.oneof.clone()),
                    Some(SchemaItemOneof::Schema(s)) if s.xref == "#/definitions/X")
        ));
        assert_eq!(patch.vendor_extension[0].name, "x-kubernetes-action");
        let sec = doc.security_definitions.expect("securityDefinitions");
        assert!(matches!(
            &sec.additional_properties[0].value.as_ref().and_then(|v| v.oneof.clone()),
            Some(SecurityDefinitionsOneof::ApiKey(k)) if k.in_ == "header"
        ));
        assert_eq!(doc.security[0].additional_properties[0].name, "BearerToken");
    }
}
