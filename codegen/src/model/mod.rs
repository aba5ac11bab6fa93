//! The generator's model: resources, versions and the Rust types their schemas become.
//! Pure data; nothing here knows about tokens.

pub mod conversion;
mod naming;
mod types;

pub use naming::{field_ident_name, module_name};
pub use types::{TypeSpace, build_type_space};

use kapi_core::crd::CustomResourceDefinition;

use crate::load::Document;

/// One resource definition (a CRD document) and where it came from.
#[derive(Clone, Debug)]
pub struct ResourceDef {
    /// The document it was read from.
    pub doc: Document,
    /// The parsed definition.
    pub crd: CustomResourceDefinition,
    /// The hooks type, as a Rust path (`crate::hooks::WidgetHooks`), if any.
    pub hooks: Option<String>,
    /// The conversion hooks type, as a Rust path, if any.
    pub conversion_hooks: Option<String>,
    /// The conversion hooks complete the resource's own type too, not only the types
    /// with fields the generator cannot match.
    pub conversion_object_hooks: bool,
    /// Its conversion is its own webhook's: none is generated.
    pub external_conversion: bool,
    /// One entry per `spec.versions` item, in the same order.
    pub versions: Vec<VersionDef>,
}

/// The Rust side of one version of a resource.
///
/// Its types live in the `{group}::{version}` module; definitions it refers to live in
/// their own modules (see [`TypeSpace`]).
#[derive(Clone, Debug)]
pub struct VersionDef {
    /// Index into `crd.versions`.
    pub index: usize,
    /// The module the version's types live in (`v1`).
    pub module: String,
    /// The types, the resource's own struct first.
    pub types: Vec<TypeDef>,
}

/// A Rust type to emit.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeDef {
    /// A struct with named fields.
    Struct(StructDef),
    /// A string enum.
    Enum(EnumDef),
}

impl TypeDef {
    /// Its Rust name.
    pub fn name(&self) -> &str {
        match self {
            TypeDef::Struct(s) => &s.name,
            TypeDef::Enum(e) => &e.name,
        }
    }
}

/// A struct.
#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    /// Rust name.
    pub name: String,
    /// Doc comment (the schema's description).
    pub doc: Option<String>,
    /// Fields in JSON name order.
    pub fields: Vec<FieldDef>,
    /// Keep unknown fields in a flattened map (preserve-unknown-fields with properties).
    pub flatten_extra: bool,
}

/// One struct field.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDef {
    /// Rust field name (without `r#`).
    pub ident: String,
    /// JSON name.
    pub json_name: String,
    /// Doc comment.
    pub doc: Option<String>,
    /// The field's type, before optionality.
    pub ty: TypeRef,
    /// `Option<ty>` (not required, or nullable).
    pub optional: bool,
    /// `#[serde(default)]`: the resource's own apiVersion, kind and metadata, which a
    /// client may leave out of a body.
    pub serde_default: bool,
}

/// A string enum.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    /// Rust name.
    pub name: String,
    /// Doc comment.
    pub doc: Option<String>,
    /// `(variant ident, JSON value)`.
    pub variants: Vec<(String, String)>,
}

/// A reference to a type in a field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeRef {
    /// `String`.
    String,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `serde_json::Number`, which keeps a number exactly as written.
    Number,
    /// `bool`.
    Bool,
    /// `Time` (date-time strings).
    Time,
    /// `IntOrString`.
    IntOrString,
    /// `Quantity`.
    Quantity,
    /// `ObjectMeta`.
    ObjectMeta,
    /// Any JSON (`serde_json::Value`).
    Json,
    /// `Vec<T>`.
    List(Box<TypeRef>),
    /// `BTreeMap<String, T>`.
    Map(Box<TypeRef>),
    /// A generated type in the same module.
    Named(String),
    /// A generated type shared through a definition, in the definition's module
    /// (`["io", "k8s", "api", "core", "v1"]`, `PodSpec`).
    Defined {
        /// Module path from the generated root.
        module: Vec<String>,
        /// Type name.
        name: String,
    },
    /// A type from another crate (a definition mapped with `Builder::extern_definitions`),
    /// as a full Rust path.
    Extern(String),
}
