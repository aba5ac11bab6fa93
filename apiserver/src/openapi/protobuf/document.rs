//! gnostic's `openapi.v2` messages of the document's frame: the document, its info,
//! paths, operations, parameters, headers and responses, by field number.

use super::*;

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
