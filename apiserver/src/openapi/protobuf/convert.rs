//! The Swagger 2.0 JSON document read into the messages, member by member as
//! gnostic's `openapi_v2.ParseDocument` reads it.

use serde_json::{Map, Value};

use super::*;

type Obj = Map<String, Value>;

/// An object member that is itself an object.
fn obj<'a>(m: &'a Obj, key: &str) -> Option<&'a Obj> {
    m.get(key).and_then(Value::as_object)
}

/// The object members of an object member, in order.
fn entries<'a>(m: &'a Obj, key: &str) -> impl Iterator<Item = (&'a String, &'a Obj)> {
    obj(m, key)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_object().map(|o| (k, o)))
}

/// The object elements of an array member.
fn objects<'a>(m: &'a Obj, key: &str) -> impl Iterator<Item = &'a Obj> {
    m.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn string(m: &Obj, key: &str) -> String {
    m.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn boolean(m: &Obj, key: &str) -> bool {
    m.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn double(m: &Obj, key: &str) -> f64 {
    m.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn int(m: &Obj, key: &str) -> i64 {
    match m.get(key) {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .unwrap_or(0),
        _ => 0,
    }
}

pub(super) fn strings(m: &Obj, key: &str) -> Vec<String> {
    m.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// A value as YAML text: flow-style JSON with a space after `:` and `,` (valid YAML
/// 1.1 and 1.2), ending in a newline as `yaml.Marshal` does.
pub(super) fn yaml_text(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(item, out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                out.push('{');
                for (i, (k, item)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push_str(": ");
                    write(item, out);
                }
                out.push('}');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out.push('\n');
    out
}

fn any(v: &Value) -> Any {
    Any { yaml: yaml_text(v) }
}

fn any_of(m: &Obj, key: &str) -> Option<Any> {
    m.get(key).map(any)
}

fn anys(m: &Obj, key: &str) -> Vec<Any> {
    m.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(any)
        .collect()
}

/// The `x-*` members.
fn extensions(m: &Obj) -> Vec<NamedAny> {
    m.iter()
        .filter(|(k, _)| k.starts_with("x-"))
        .map(|(k, v)| NamedAny {
            name: k.clone(),
            value: Some(any(v)),
        })
        .collect()
}

pub(super) fn document(v: &Value) -> Document {
    let empty = Obj::new();
    let m = v.as_object().unwrap_or(&empty);
    Document {
        swagger: string(m, "swagger"),
        info: obj(m, "info").map(info),
        host: string(m, "host"),
        base_path: string(m, "basePath"),
        schemes: strings(m, "schemes"),
        consumes: strings(m, "consumes"),
        produces: strings(m, "produces"),
        paths: obj(m, "paths").map(paths),
        definitions: obj(m, "definitions").map(|_| Definitions {
            additional_properties: named_schemas(m, "definitions"),
        }),
        parameters: obj(m, "parameters").map(|_| ParameterDefinitions {
            additional_properties: entries(m, "parameters")
                .map(|(k, p)| NamedParameter {
                    name: k.clone(),
                    value: Some(parameter(p)),
                })
                .collect(),
        }),
        responses: obj(m, "responses").map(|_| ResponseDefinitions {
            additional_properties: entries(m, "responses")
                .map(|(k, r)| NamedResponse {
                    name: k.clone(),
                    value: Some(response(r)),
                })
                .collect(),
        }),
        security: security_requirements(m),
        security_definitions: obj(m, "securityDefinitions").map(|_| SecurityDefinitions {
            additional_properties: entries(m, "securityDefinitions")
                .map(|(k, s)| NamedSecurityDefinitionsItem {
                    name: k.clone(),
                    value: Some(security_definition(s)),
                })
                .collect(),
        }),
        tags: objects(m, "tags").map(tag).collect(),
        external_docs: obj(m, "externalDocs").map(external_docs),
        vendor_extension: extensions(m),
    }
}

fn info(m: &Obj) -> Info {
    Info {
        title: string(m, "title"),
        version: string(m, "version"),
        description: string(m, "description"),
        terms_of_service: string(m, "termsOfService"),
        contact: obj(m, "contact").map(|c| Contact {
            name: string(c, "name"),
            url: string(c, "url"),
            email: string(c, "email"),
            vendor_extension: extensions(c),
        }),
        license: obj(m, "license").map(|l| License {
            name: string(l, "name"),
            url: string(l, "url"),
            vendor_extension: extensions(l),
        }),
        vendor_extension: extensions(m),
    }
}

fn external_docs(m: &Obj) -> ExternalDocs {
    ExternalDocs {
        description: string(m, "description"),
        url: string(m, "url"),
        vendor_extension: extensions(m),
    }
}

fn tag(m: &Obj) -> Tag {
    Tag {
        name: string(m, "name"),
        description: string(m, "description"),
        external_docs: obj(m, "externalDocs").map(external_docs),
        vendor_extension: extensions(m),
    }
}

fn security_requirements(m: &Obj) -> Vec<SecurityRequirement> {
    objects(m, "security")
        .map(|req| SecurityRequirement {
            additional_properties: req
                .iter()
                .map(|(name, scopes)| NamedStringArray {
                    name: name.clone(),
                    value: Some(StringArray {
                        value: scopes
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect(),
                    }),
                })
                .collect(),
        })
        .collect()
}

fn security_definition(m: &Obj) -> SecurityDefinitionsItem {
    let scopes = || {
        obj(m, "scopes").map(|s| Oauth2Scopes {
            additional_properties: s
                .iter()
                .map(|(k, v)| NamedString {
                    name: k.clone(),
                    value: v.as_str().unwrap_or_default().to_string(),
                })
                .collect(),
        })
    };
    let token = || Oauth2TokenSecurity {
        type_: string(m, "type"),
        flow: string(m, "flow"),
        scopes: scopes(),
        token_url: string(m, "tokenUrl"),
        description: string(m, "description"),
        vendor_extension: extensions(m),
    };
    let oneof = match (string(m, "type").as_str(), string(m, "flow").as_str()) {
        ("basic", _) => Some(SecurityDefinitionsOneof::Basic(
            BasicAuthenticationSecurity {
                type_: string(m, "type"),
                description: string(m, "description"),
                vendor_extension: extensions(m),
            },
        )),
        ("apiKey", _) => Some(SecurityDefinitionsOneof::ApiKey(ApiKeySecurity {
            type_: string(m, "type"),
            name: string(m, "name"),
            in_: string(m, "in"),
            description: string(m, "description"),
            vendor_extension: extensions(m),
        })),
        ("oauth2", "implicit") => Some(SecurityDefinitionsOneof::Oauth2Implicit(Oauth2Security {
            type_: string(m, "type"),
            flow: string(m, "flow"),
            scopes: scopes(),
            authorization_url: string(m, "authorizationUrl"),
            description: string(m, "description"),
            vendor_extension: extensions(m),
        })),
        ("oauth2", "password") => Some(SecurityDefinitionsOneof::Oauth2Password(token())),
        ("oauth2", "application") => Some(SecurityDefinitionsOneof::Oauth2Application(token())),
        ("oauth2", "accessCode") => Some(SecurityDefinitionsOneof::Oauth2AccessCode(
            Oauth2AccessCodeSecurity {
                type_: string(m, "type"),
                flow: string(m, "flow"),
                scopes: scopes(),
                authorization_url: string(m, "authorizationUrl"),
                token_url: string(m, "tokenUrl"),
                description: string(m, "description"),
                vendor_extension: extensions(m),
            },
        )),
        _ => None,
    };
    SecurityDefinitionsItem { oneof }
}

fn paths(m: &Obj) -> Paths {
    Paths {
        vendor_extension: extensions(m),
        path: m
            .iter()
            .filter(|(k, _)| k.starts_with('/'))
            .filter_map(|(k, v)| v.as_object().map(|item| (k, item)))
            .map(|(k, item)| NamedPathItem {
                name: k.clone(),
                value: Some(path_item(item)),
            })
            .collect(),
    }
}

fn path_item(m: &Obj) -> PathItem {
    let op = |method: &str| obj(m, method).map(operation);
    PathItem {
        xref: string(m, "$ref"),
        get: op("get"),
        put: op("put"),
        post: op("post"),
        delete: op("delete"),
        options: op("options"),
        head: op("head"),
        patch: op("patch"),
        parameters: objects(m, "parameters").map(parameters_item).collect(),
        vendor_extension: extensions(m),
    }
}

fn operation(m: &Obj) -> Operation {
    Operation {
        tags: strings(m, "tags"),
        summary: string(m, "summary"),
        description: string(m, "description"),
        external_docs: obj(m, "externalDocs").map(external_docs),
        operation_id: string(m, "operationId"),
        produces: strings(m, "produces"),
        consumes: strings(m, "consumes"),
        parameters: objects(m, "parameters").map(parameters_item).collect(),
        responses: obj(m, "responses").map(responses),
        schemes: strings(m, "schemes"),
        deprecated: boolean(m, "deprecated"),
        security: security_requirements(m),
        vendor_extension: extensions(m),
    }
}

fn json_reference(m: &Obj) -> JsonReference {
    JsonReference {
        xref: string(m, "$ref"),
        description: string(m, "description"),
    }
}

fn parameters_item(m: &Obj) -> ParametersItem {
    let oneof = if m.contains_key("$ref") {
        ParametersItemOneof::JsonReference(json_reference(m))
    } else {
        ParametersItemOneof::Parameter(Box::new(parameter(m)))
    };
    ParametersItem { oneof: Some(oneof) }
}

fn parameter(m: &Obj) -> Parameter {
    let sub = || SubSchema {
        required: boolean(m, "required"),
        in_: string(m, "in"),
        description: string(m, "description"),
        name: string(m, "name"),
        type_: string(m, "type"),
        format: string(m, "format"),
        items: obj(m, "items").map(primitives_items),
        collection_format: string(m, "collectionFormat"),
        default: any_of(m, "default"),
        maximum: double(m, "maximum"),
        exclusive_maximum: boolean(m, "exclusiveMaximum"),
        minimum: double(m, "minimum"),
        exclusive_minimum: boolean(m, "exclusiveMinimum"),
        max_length: int(m, "maxLength"),
        min_length: int(m, "minLength"),
        pattern: string(m, "pattern"),
        max_items: int(m, "maxItems"),
        min_items: int(m, "minItems"),
        unique_items: boolean(m, "uniqueItems"),
        enum_: anys(m, "enum"),
        multiple_of: double(m, "multipleOf"),
        vendor_extension: extensions(m),
    };
    let sub_allow_empty = || {
        let s = sub();
        SubSchemaAllowEmpty {
            required: s.required,
            in_: s.in_,
            description: s.description,
            name: s.name,
            allow_empty_value: boolean(m, "allowEmptyValue"),
            type_: s.type_,
            format: s.format,
            items: s.items,
            collection_format: s.collection_format,
            default: s.default,
            maximum: s.maximum,
            exclusive_maximum: s.exclusive_maximum,
            minimum: s.minimum,
            exclusive_minimum: s.exclusive_minimum,
            max_length: s.max_length,
            min_length: s.min_length,
            pattern: s.pattern,
            max_items: s.max_items,
            min_items: s.min_items,
            unique_items: s.unique_items,
            enum_: s.enum_,
            multiple_of: s.multiple_of,
            vendor_extension: s.vendor_extension,
        }
    };
    let non_body = |p: NonBodyParameterOneof| {
        Some(ParameterOneof::NonBodyParameter(NonBodyParameter {
            oneof: Some(p),
        }))
    };
    let oneof = match string(m, "in").as_str() {
        "body" => Some(ParameterOneof::BodyParameter(BodyParameter {
            description: string(m, "description"),
            name: string(m, "name"),
            in_: string(m, "in"),
            required: boolean(m, "required"),
            schema: obj(m, "schema").map(schema),
            vendor_extension: extensions(m),
        })),
        "header" => non_body(NonBodyParameterOneof::Header(sub())),
        "formData" => non_body(NonBodyParameterOneof::FormData(sub_allow_empty())),
        "query" => non_body(NonBodyParameterOneof::Query(sub_allow_empty())),
        "path" => non_body(NonBodyParameterOneof::Path(sub())),
        _ => None,
    };
    Parameter { oneof }
}

fn primitives_items(m: &Obj) -> PrimitivesItems {
    PrimitivesItems {
        type_: string(m, "type"),
        format: string(m, "format"),
        items: obj(m, "items").map(|i| Box::new(primitives_items(i))),
        collection_format: string(m, "collectionFormat"),
        default: any_of(m, "default"),
        maximum: double(m, "maximum"),
        exclusive_maximum: boolean(m, "exclusiveMaximum"),
        minimum: double(m, "minimum"),
        exclusive_minimum: boolean(m, "exclusiveMinimum"),
        max_length: int(m, "maxLength"),
        min_length: int(m, "minLength"),
        pattern: string(m, "pattern"),
        max_items: int(m, "maxItems"),
        min_items: int(m, "minItems"),
        unique_items: boolean(m, "uniqueItems"),
        enum_: anys(m, "enum"),
        multiple_of: double(m, "multipleOf"),
        vendor_extension: extensions(m),
    }
}

fn responses(m: &Obj) -> Responses {
    let is_code =
        |k: &str| k == "default" || (k.len() == 3 && k.bytes().all(|b| b.is_ascii_digit()));
    Responses {
        response_code: m
            .iter()
            .filter(|(k, _)| is_code(k))
            .filter_map(|(k, v)| v.as_object().map(|r| (k, r)))
            .map(|(k, r)| NamedResponseValue {
                name: k.clone(),
                value: Some(ResponseValue {
                    oneof: Some(if r.contains_key("$ref") {
                        ResponseValueOneof::JsonReference(json_reference(r))
                    } else {
                        ResponseValueOneof::Response(Box::new(response(r)))
                    }),
                }),
            })
            .collect(),
        vendor_extension: extensions(m),
    }
}

fn response(m: &Obj) -> Response {
    Response {
        description: string(m, "description"),
        schema: obj(m, "schema").map(|s| SchemaItem {
            oneof: Some(if string(s, "type") == "file" {
                SchemaItemOneof::FileSchema(Box::new(FileSchema {
                    format: string(s, "format"),
                    title: string(s, "title"),
                    description: string(s, "description"),
                    default: any_of(s, "default"),
                    required: strings(s, "required"),
                    type_: string(s, "type"),
                    read_only: boolean(s, "readOnly"),
                    external_docs: obj(s, "externalDocs").map(external_docs),
                    example: any_of(s, "example"),
                    vendor_extension: extensions(s),
                }))
            } else {
                SchemaItemOneof::Schema(Box::new(schema(s)))
            }),
        }),
        headers: obj(m, "headers").map(|_| Headers {
            additional_properties: entries(m, "headers")
                .map(|(k, h)| NamedHeader {
                    name: k.clone(),
                    value: Some(header(h)),
                })
                .collect(),
        }),
        examples: obj(m, "examples").map(|e| Examples {
            additional_properties: e
                .iter()
                .map(|(k, v)| NamedAny {
                    name: k.clone(),
                    value: Some(any(v)),
                })
                .collect(),
        }),
        vendor_extension: extensions(m),
    }
}

fn header(m: &Obj) -> Header {
    let p = primitives_items(m);
    Header {
        type_: p.type_,
        format: p.format,
        items: p.items.map(|i| *i),
        collection_format: p.collection_format,
        default: p.default,
        maximum: p.maximum,
        exclusive_maximum: p.exclusive_maximum,
        minimum: p.minimum,
        exclusive_minimum: p.exclusive_minimum,
        max_length: p.max_length,
        min_length: p.min_length,
        pattern: p.pattern,
        max_items: p.max_items,
        min_items: p.min_items,
        unique_items: p.unique_items,
        enum_: p.enum_,
        multiple_of: p.multiple_of,
        description: string(m, "description"),
        vendor_extension: p.vendor_extension,
    }
}

/// The members of an object member as named schemas (`definitions`, `properties`).
fn named_schemas(m: &Obj, key: &str) -> Vec<NamedSchema> {
    entries(m, key)
        .map(|(k, s)| NamedSchema {
            name: k.clone(),
            value: Some(schema(s)),
        })
        .collect()
}

fn schema(m: &Obj) -> Schema {
    Schema {
        xref: string(m, "$ref"),
        format: string(m, "format"),
        title: string(m, "title"),
        description: string(m, "description"),
        default: any_of(m, "default"),
        multiple_of: double(m, "multipleOf"),
        maximum: double(m, "maximum"),
        exclusive_maximum: boolean(m, "exclusiveMaximum"),
        minimum: double(m, "minimum"),
        exclusive_minimum: boolean(m, "exclusiveMinimum"),
        max_length: int(m, "maxLength"),
        min_length: int(m, "minLength"),
        pattern: string(m, "pattern"),
        max_items: int(m, "maxItems"),
        min_items: int(m, "minItems"),
        unique_items: boolean(m, "uniqueItems"),
        max_properties: int(m, "maxProperties"),
        min_properties: int(m, "minProperties"),
        required: strings(m, "required"),
        enum_: anys(m, "enum"),
        additional_properties: match m.get("additionalProperties") {
            Some(Value::Bool(b)) => Some(Box::new(AdditionalPropertiesItem {
                oneof: Some(AdditionalPropertiesOneof::Boolean(*b)),
            })),
            Some(Value::Object(s)) => Some(Box::new(AdditionalPropertiesItem {
                oneof: Some(AdditionalPropertiesOneof::Schema(Box::new(schema(s)))),
            })),
            _ => None,
        },
        type_: match m.get("type") {
            Some(Value::String(t)) => Some(TypeItem {
                value: vec![t.clone()],
            }),
            Some(Value::Array(_)) => Some(TypeItem {
                value: strings(m, "type"),
            }),
            _ => None,
        },
        items: match m.get("items") {
            Some(Value::Object(s)) => Some(ItemsItem {
                schema: vec![schema(s)],
            }),
            Some(Value::Array(_)) => Some(ItemsItem {
                schema: objects(m, "items").map(schema).collect(),
            }),
            _ => None,
        },
        all_of: objects(m, "allOf").map(schema).collect(),
        // An empty `properties` still makes a (present, empty) message: kubectl tells
        // an object with no fields from a map by it.
        properties: obj(m, "properties").map(|_| Properties {
            additional_properties: named_schemas(m, "properties"),
        }),
        discriminator: string(m, "discriminator"),
        read_only: boolean(m, "readOnly"),
        xml: obj(m, "xml").map(|x| Xml {
            name: string(x, "name"),
            namespace: string(x, "namespace"),
            prefix: string(x, "prefix"),
            attribute: boolean(x, "attribute"),
            wrapped: boolean(x, "wrapped"),
            vendor_extension: extensions(x),
        }),
        external_docs: obj(m, "externalDocs").map(external_docs),
        example: any_of(m, "example"),
        vendor_extension: extensions(m),
    }
}
