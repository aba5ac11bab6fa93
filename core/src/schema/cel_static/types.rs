//! The types the checker gives values: from the schema where it describes them, from
//! the expression where it builds them, `dyn` where neither says.

use super::sizes::{MAX_REQUEST_BYTES, max_size};
use crate::schema::{AdditionalProperties, Schema, SchemaType};

/// What a value in an expression is known to be.
#[derive(Clone, Debug)]
pub enum Ty<'s> {
    /// A value the schema node describes.
    Node(&'s Schema),
    /// The root of a resource (or an embedded one), whose `apiVersion`, `kind` and
    /// `metadata` are there even where its schema leaves them out.
    Resource(&'s Schema),
    /// An object as clients see it (an admission policy's `object`): a resource whose
    /// `metadata` is all of ObjectMeta even where its schema leaves it out.
    Served(&'s Schema),
    /// A resource's `metadata` that its schema does not describe: CEL sees its `name`
    /// and `generateName` only.
    MetaNames,
    /// A list the expression builds, with its items' type and largest size.
    List(Box<Ty<'s>>, Option<u64>),
    /// `string`
    String,
    /// `bytes`
    Bytes,
    /// `int`
    Int,
    /// `uint`
    Uint,
    /// `double`
    Double,
    /// `bool`
    Bool,
    /// `null`
    Null,
    /// Anything; nothing about it is checked.
    Dyn,
}

/// A step's type, its largest size (characters, items or entries) where known, and
/// the most it costs.
#[derive(Clone, Debug)]
pub(super) struct Val<'s> {
    pub(super) ty: Ty<'s>,
    pub(super) size: Option<u64>,
    pub(super) cost: u64,
}

pub(super) fn value_of(ty: Ty<'_>) -> Val<'_> {
    let size = match &ty {
        Ty::Node(n) | Ty::Resource(n) | Ty::Served(n) => max_size(n),
        Ty::String => Some(MAX_REQUEST_BYTES - 2),
        Ty::Int | Ty::Uint | Ty::Double | Ty::Bool | Ty::Null => Some(1),
        _ => None,
    };
    Val { ty, size, cost: 0 }
}

/// What a value can be used as.
pub(super) enum Shape<'s> {
    Object { node: &'s Schema, root: Root },
    Map(&'s Schema),
    List(Ty<'s>, Option<u64>),
    Scalar(&'static str),
    MetaNames,
    Dyn,
}

/// What a resource's root offers that its schema may leave out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Root {
    /// Not a resource's root.
    No,
    /// A CRD rule's root: `metadata.name` and `metadata.generateName` only.
    Names,
    /// All of ObjectMeta.
    Full,
}

pub(super) fn item_ty(node: &Schema) -> Ty<'_> {
    if node.x_embedded_resource {
        Ty::Resource(node)
    } else {
        Ty::Node(node)
    }
}

pub(super) fn shape<'s>(ty: &Ty<'s>) -> Shape<'s> {
    let node = match ty {
        Ty::Node(n) => *n,
        Ty::Resource(n) => {
            return Shape::Object {
                node: n,
                root: Root::Names,
            };
        }
        Ty::Served(n) => {
            return Shape::Object {
                node: n,
                root: Root::Full,
            };
        }
        Ty::MetaNames => return Shape::MetaNames,
        Ty::List(item, size) => return Shape::List((**item).clone(), *size),
        Ty::String => return Shape::Scalar("string"),
        Ty::Bytes => return Shape::Scalar("bytes"),
        Ty::Int => return Shape::Scalar("int"),
        Ty::Uint => return Shape::Scalar("uint"),
        Ty::Double => return Shape::Scalar("double"),
        Ty::Bool => return Shape::Scalar("bool"),
        Ty::Null => return Shape::Scalar("null_type"),
        Ty::Dyn => return Shape::Dyn,
    };
    if node.x_int_or_string {
        return Shape::Dyn;
    }
    match node.type_ {
        Some(SchemaType::String) => match node.format.as_deref() {
            Some("byte") => Shape::Scalar("bytes"),
            // Timestamps and durations in CEL; kapi does not type them.
            Some("date" | "date-time" | "duration") => Shape::Dyn,
            _ => Shape::Scalar("string"),
        },
        Some(SchemaType::Integer) => Shape::Scalar("int"),
        Some(SchemaType::Number) => Shape::Scalar("double"),
        Some(SchemaType::Boolean) => Shape::Scalar("bool"),
        Some(SchemaType::Array) => match &node.items {
            Some(items) => Shape::List(item_ty(items), max_size(items)),
            None => Shape::List(Ty::Dyn, None),
        },
        Some(SchemaType::Object) => match &node.additional_properties {
            Some(AdditionalProperties::Schema(values)) => Shape::Map(values),
            _ if node.x_embedded_resource => Shape::Object {
                node,
                root: Root::Names,
            },
            // An object that declares no fields is taken as anything.
            _ if node.properties.is_empty() => Shape::Dyn,
            _ => Shape::Object {
                node,
                root: Root::No,
            },
        },
        None => Shape::Dyn,
    }
}

pub(super) fn scalar_ty(name: &str) -> Ty<'static> {
    match name {
        "string" => Ty::String,
        "bytes" => Ty::Bytes,
        "int" => Ty::Int,
        "uint" => Ty::Uint,
        "double" => Ty::Double,
        "bool" => Ty::Bool,
        _ => Ty::Dyn,
    }
}
