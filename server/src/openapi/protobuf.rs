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

use serde_json::{Map, Value};

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
    document(swagger).encode_to_vec()
}

// ---------------------------------------------------------------------------------
// Messages (openapi.v2, by field number).
// ---------------------------------------------------------------------------------

/// `Document`: the whole Swagger 2.0 document.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Document {
    #[prost(string, tag = "1")]
    pub swagger: String,
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    #[prost(string, tag = "3")]
    pub host: String,
    #[prost(string, tag = "4")]
    pub base_path: String,
    #[prost(string, repeated, tag = "5")]
    pub schemes: Vec<String>,
    #[prost(string, repeated, tag = "6")]
    pub consumes: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub produces: Vec<String>,
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
    #[prost(message, optional, tag = "10")]
    pub parameters: Option<ParameterDefinitions>,
    #[prost(message, optional, tag = "11")]
    pub responses: Option<ResponseDefinitions>,
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, optional, tag = "13")]
    pub security_definitions: Option<SecurityDefinitions>,
    #[prost(message, repeated, tag = "14")]
    pub tags: Vec<Tag>,
    #[prost(message, optional, tag = "15")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, repeated, tag = "16")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Info`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Info {
    #[prost(string, tag = "1")]
    pub title: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub terms_of_service: String,
    #[prost(message, optional, tag = "5")]
    pub contact: Option<Contact>,
    #[prost(message, optional, tag = "6")]
    pub license: Option<License>,
    #[prost(message, repeated, tag = "7")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Contact`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Contact {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(string, tag = "3")]
    pub email: String,
    #[prost(message, repeated, tag = "4")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `License`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct License {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `ExternalDocs`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExternalDocs {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Tag`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Tag {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, optional, tag = "3")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, repeated, tag = "4")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Any`: a free-form value as YAML text (field 1, the binary `google.protobuf.Any`,
/// is never set).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Any {
    #[prost(string, tag = "2")]
    pub yaml: String,
}

/// `NamedAny`: a vendor extension (`x-...`) or another free-form member.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedAny {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}

/// `Paths`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Paths {
    #[prost(message, repeated, tag = "1")]
    pub vendor_extension: Vec<NamedAny>,
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

/// `NamedPathItem`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedPathItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

/// `PathItem`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PathItem {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    #[prost(message, optional, tag = "6")]
    pub options: Option<Operation>,
    #[prost(message, optional, tag = "7")]
    pub head: Option<Operation>,
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Operation`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Operation {
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, optional, tag = "4")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(string, tag = "5")]
    pub operation_id: String,
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    #[prost(bool, tag = "11")]
    pub deprecated: bool,
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `JsonReference`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct JsonReference {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(string, tag = "2")]
    pub description: String,
}

/// `ParametersItem`: a parameter or a reference to one.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ParametersItem {
    #[prost(oneof = "ParametersItemOneof", tags = "1, 2")]
    pub oneof: Option<ParametersItemOneof>,
}

/// `ParametersItem.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ParametersItemOneof {
    #[prost(message, tag = "1")]
    Parameter(Box<Parameter>),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

/// `Parameter`: a body or non-body parameter.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Parameter {
    #[prost(oneof = "ParameterOneof", tags = "1, 2")]
    pub oneof: Option<ParameterOneof>,
}

/// `Parameter.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ParameterOneof {
    #[prost(message, tag = "1")]
    BodyParameter(BodyParameter),
    #[prost(message, tag = "2")]
    NonBodyParameter(NonBodyParameter),
}

/// `BodyParameter`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BodyParameter {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub in_: String,
    #[prost(bool, tag = "4")]
    pub required: bool,
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `NonBodyParameter`: by `in`, a header, form data, query or path parameter.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NonBodyParameter {
    #[prost(oneof = "NonBodyParameterOneof", tags = "1, 2, 3, 4")]
    pub oneof: Option<NonBodyParameterOneof>,
}

/// `NonBodyParameter.oneof`. Header and path parameters share one field numbering
/// ([`SubSchema`]), form data and query ones another, with `allow_empty_value`
/// ([`SubSchemaAllowEmpty`]).
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum NonBodyParameterOneof {
    #[prost(message, tag = "1")]
    Header(SubSchema),
    #[prost(message, tag = "2")]
    FormData(SubSchemaAllowEmpty),
    #[prost(message, tag = "3")]
    Query(SubSchemaAllowEmpty),
    #[prost(message, tag = "4")]
    Path(SubSchema),
}

/// `HeaderParameterSubSchema` and `PathParameterSubSchema` (same fields and numbers).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SubSchema {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub in_: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "5")]
    pub type_: String,
    #[prost(string, tag = "6")]
    pub format: String,
    #[prost(message, optional, tag = "7")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "8")]
    pub collection_format: String,
    #[prost(message, optional, tag = "9")]
    pub default: Option<Any>,
    #[prost(double, tag = "10")]
    pub maximum: f64,
    #[prost(bool, tag = "11")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "12")]
    pub minimum: f64,
    #[prost(bool, tag = "13")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "14")]
    pub max_length: i64,
    #[prost(int64, tag = "15")]
    pub min_length: i64,
    #[prost(string, tag = "16")]
    pub pattern: String,
    #[prost(int64, tag = "17")]
    pub max_items: i64,
    #[prost(int64, tag = "18")]
    pub min_items: i64,
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "20")]
    pub enum_: Vec<Any>,
    #[prost(double, tag = "21")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "22")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `QueryParameterSubSchema` and `FormDataParameterSubSchema` (same fields and
/// numbers).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SubSchemaAllowEmpty {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub in_: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(bool, tag = "5")]
    pub allow_empty_value: bool,
    #[prost(string, tag = "6")]
    pub type_: String,
    #[prost(string, tag = "7")]
    pub format: String,
    #[prost(message, optional, tag = "8")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "9")]
    pub collection_format: String,
    #[prost(message, optional, tag = "10")]
    pub default: Option<Any>,
    #[prost(double, tag = "11")]
    pub maximum: f64,
    #[prost(bool, tag = "12")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "13")]
    pub minimum: f64,
    #[prost(bool, tag = "14")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "15")]
    pub max_length: i64,
    #[prost(int64, tag = "16")]
    pub min_length: i64,
    #[prost(string, tag = "17")]
    pub pattern: String,
    #[prost(int64, tag = "18")]
    pub max_items: i64,
    #[prost(int64, tag = "19")]
    pub min_items: i64,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "21")]
    pub enum_: Vec<Any>,
    #[prost(double, tag = "22")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "23")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `PrimitivesItems`: the `items` of a non-body parameter or header.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PrimitivesItems {
    #[prost(string, tag = "1")]
    pub type_: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(message, optional, boxed, tag = "3")]
    pub items: Option<Box<PrimitivesItems>>,
    #[prost(string, tag = "4")]
    pub collection_format: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub maximum: f64,
    #[prost(bool, tag = "7")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "8")]
    pub minimum: f64,
    #[prost(bool, tag = "9")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "10")]
    pub max_length: i64,
    #[prost(int64, tag = "11")]
    pub min_length: i64,
    #[prost(string, tag = "12")]
    pub pattern: String,
    #[prost(int64, tag = "13")]
    pub max_items: i64,
    #[prost(int64, tag = "14")]
    pub min_items: i64,
    #[prost(bool, tag = "15")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "16")]
    pub enum_: Vec<Any>,
    #[prost(double, tag = "17")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "18")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Header`: a response header.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Header {
    #[prost(string, tag = "1")]
    pub type_: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(message, optional, tag = "3")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "4")]
    pub collection_format: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub maximum: f64,
    #[prost(bool, tag = "7")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "8")]
    pub minimum: f64,
    #[prost(bool, tag = "9")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "10")]
    pub max_length: i64,
    #[prost(int64, tag = "11")]
    pub min_length: i64,
    #[prost(string, tag = "12")]
    pub pattern: String,
    #[prost(int64, tag = "13")]
    pub max_items: i64,
    #[prost(int64, tag = "14")]
    pub min_items: i64,
    #[prost(bool, tag = "15")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "16")]
    pub enum_: Vec<Any>,
    #[prost(double, tag = "17")]
    pub multiple_of: f64,
    #[prost(string, tag = "18")]
    pub description: String,
    #[prost(message, repeated, tag = "19")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `NamedHeader`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedHeader {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Header>,
}

/// `Headers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Headers {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedHeader>,
}

/// `Examples` (by media type).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Examples {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedAny>,
}

/// `Responses`: responses by status code (or `default`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Responses {
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
    #[prost(message, repeated, tag = "2")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `NamedResponseValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedResponseValue {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ResponseValue>,
}

/// `ResponseValue`: a response or a reference to one.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseValue {
    #[prost(oneof = "ResponseValueOneof", tags = "1, 2")]
    pub oneof: Option<ResponseValueOneof>,
}

/// `ResponseValue.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ResponseValueOneof {
    #[prost(message, tag = "1")]
    Response(Box<Response>),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

/// `Response`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Response {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
    #[prost(message, optional, tag = "3")]
    pub headers: Option<Headers>,
    #[prost(message, optional, tag = "4")]
    pub examples: Option<Examples>,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `SchemaItem`: a response's schema, or a file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchemaItem {
    #[prost(oneof = "SchemaItemOneof", tags = "1, 2")]
    pub oneof: Option<SchemaItemOneof>,
}

/// `SchemaItem.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum SchemaItemOneof {
    #[prost(message, tag = "1")]
    Schema(Box<Schema>),
    #[prost(message, tag = "2")]
    FileSchema(Box<FileSchema>),
}

/// `FileSchema`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FileSchema {
    #[prost(string, tag = "1")]
    pub format: String,
    #[prost(string, tag = "2")]
    pub title: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, optional, tag = "4")]
    pub default: Option<Any>,
    #[prost(string, repeated, tag = "5")]
    pub required: Vec<String>,
    #[prost(string, tag = "6")]
    pub type_: String,
    #[prost(bool, tag = "7")]
    pub read_only: bool,
    #[prost(message, optional, tag = "8")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, optional, tag = "9")]
    pub example: Option<Any>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Definitions`: the schemas by name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Definitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `NamedSchema`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedSchema {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Schema>,
}

/// `Properties`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Properties {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `ParameterDefinitions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ParameterDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedParameter>,
}

/// `NamedParameter`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedParameter {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Parameter>,
}

/// `ResponseDefinitions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedResponse>,
}

/// `NamedResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedResponse {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Response>,
}

/// `Schema`: a JSON schema as Swagger 2.0 restricts it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Schema {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(string, tag = "3")]
    pub title: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub multiple_of: f64,
    #[prost(double, tag = "7")]
    pub maximum: f64,
    #[prost(bool, tag = "8")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "9")]
    pub minimum: f64,
    #[prost(bool, tag = "10")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "11")]
    pub max_length: i64,
    #[prost(int64, tag = "12")]
    pub min_length: i64,
    #[prost(string, tag = "13")]
    pub pattern: String,
    #[prost(int64, tag = "14")]
    pub max_items: i64,
    #[prost(int64, tag = "15")]
    pub min_items: i64,
    #[prost(bool, tag = "16")]
    pub unique_items: bool,
    #[prost(int64, tag = "17")]
    pub max_properties: i64,
    #[prost(int64, tag = "18")]
    pub min_properties: i64,
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    #[prost(message, repeated, tag = "20")]
    pub enum_: Vec<Any>,
    #[prost(message, optional, boxed, tag = "21")]
    pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
    #[prost(message, optional, tag = "22")]
    pub type_: Option<TypeItem>,
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    #[prost(message, repeated, tag = "24")]
    pub all_of: Vec<Schema>,
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    #[prost(string, tag = "26")]
    pub discriminator: String,
    #[prost(bool, tag = "27")]
    pub read_only: bool,
    #[prost(message, optional, tag = "28")]
    pub xml: Option<Xml>,
    #[prost(message, optional, tag = "29")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, optional, tag = "30")]
    pub example: Option<Any>,
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `AdditionalPropertiesItem`: a schema or a boolean.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AdditionalPropertiesItem {
    #[prost(oneof = "AdditionalPropertiesOneof", tags = "1, 2")]
    pub oneof: Option<AdditionalPropertiesOneof>,
}

/// `AdditionalPropertiesItem.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AdditionalPropertiesOneof {
    #[prost(message, tag = "1")]
    Schema(Box<Schema>),
    #[prost(bool, tag = "2")]
    Boolean(bool),
}

/// `TypeItem`: one type or several.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeItem {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

/// `ItemsItem`: the schema of array items.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ItemsItem {
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

/// `Xml`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Xml {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub namespace: String,
    #[prost(string, tag = "3")]
    pub prefix: String,
    #[prost(bool, tag = "4")]
    pub attribute: bool,
    #[prost(bool, tag = "5")]
    pub wrapped: bool,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `SecurityRequirement`: scheme name to scopes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityRequirement {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedStringArray>,
}

/// `NamedStringArray`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedStringArray {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<StringArray>,
}

/// `StringArray`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringArray {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

/// `SecurityDefinitions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSecurityDefinitionsItem>,
}

/// `NamedSecurityDefinitionsItem`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedSecurityDefinitionsItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<SecurityDefinitionsItem>,
}

/// `SecurityDefinitionsItem`: by `type` (and `flow` for OAuth 2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitionsItem {
    #[prost(oneof = "SecurityDefinitionsOneof", tags = "1, 2, 3, 4, 5, 6")]
    pub oneof: Option<SecurityDefinitionsOneof>,
}

/// `SecurityDefinitionsItem.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum SecurityDefinitionsOneof {
    #[prost(message, tag = "1")]
    Basic(BasicAuthenticationSecurity),
    #[prost(message, tag = "2")]
    ApiKey(ApiKeySecurity),
    #[prost(message, tag = "3")]
    Oauth2Implicit(Oauth2Security),
    #[prost(message, tag = "4")]
    Oauth2Password(Oauth2TokenSecurity),
    #[prost(message, tag = "5")]
    Oauth2Application(Oauth2TokenSecurity),
    #[prost(message, tag = "6")]
    Oauth2AccessCode(Oauth2AccessCodeSecurity),
}

/// `BasicAuthenticationSecurity`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BasicAuthenticationSecurity {
    #[prost(string, tag = "1")]
    pub type_: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `ApiKeySecurity`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ApiKeySecurity {
    #[prost(string, tag = "1")]
    pub type_: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub in_: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Oauth2ImplicitSecurity` (an authorization URL, no token URL).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2Security {
    #[prost(string, tag = "1")]
    pub type_: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub authorization_url: String,
    #[prost(string, tag = "5")]
    pub description: String,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Oauth2PasswordSecurity` and `Oauth2ApplicationSecurity` (same fields and numbers:
/// a token URL).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2TokenSecurity {
    #[prost(string, tag = "1")]
    pub type_: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub token_url: String,
    #[prost(string, tag = "5")]
    pub description: String,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Oauth2AccessCodeSecurity`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2AccessCodeSecurity {
    #[prost(string, tag = "1")]
    pub type_: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub authorization_url: String,
    #[prost(string, tag = "5")]
    pub token_url: String,
    #[prost(string, tag = "6")]
    pub description: String,
    #[prost(message, repeated, tag = "7")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Oauth2Scopes`: scope name to description.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2Scopes {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedString>,
}

/// `NamedString`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedString {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

// ---------------------------------------------------------------------------------
// Conversion from the JSON document.
// ---------------------------------------------------------------------------------

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

fn strings(m: &Obj, key: &str) -> Vec<String> {
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
fn yaml_text(v: &Value) -> String {
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

fn document(v: &Value) -> Document {
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

#[cfg(test)]
mod tests {
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
