//! gnostic's `openapi.v2` messages of schemas and security: definitions, `Schema`
//! and its parts, security definitions and requirements, by field number.

use super::*;

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
