//! Schema → Rust types.
//!
//! Naming rule: a nested object type is named after its parent type and the property
//! that holds it (`Widget` → `WidgetSpec` → `WidgetSpecTemplate`); list items share the
//! list property's name and map values add `Value`. A name already taken in the module
//! gets the next free numeric suffix (`WidgetSpecPort2`). Properties are visited in
//! sorted order, so the result is deterministic.

use std::collections::BTreeSet;

use kapi_core::schema::{AdditionalProperties, Schema, SchemaType};
use serde_json::Value;

use super::naming::{field_ident_name, pascal_case, variant_name};
use super::{EnumDef, FieldDef, StructDef, TypeDef, TypeRef};

/// The types of one resource version: the resource struct (named `kind`) first.
///
/// `taken` holds the type names already used in the module (every kind of the module is
/// in it before the first call), so names stay unique across resources.
pub fn build_type_space(kind: &str, schema: &Schema, taken: &mut BTreeSet<String>) -> Vec<TypeDef> {
    let mut b = TypeSpaceBuilder {
        types: Vec::new(),
        taken: std::mem::take(taken),
    };
    b.taken.insert(kind.to_string());
    let mut fields = vec![
        FieldDef {
            ident: "api_version".into(),
            json_name: "apiVersion".into(),
            doc: Some(
                "APIVersion defines the versioned schema of this representation of an object."
                    .into(),
            ),
            ty: TypeRef::String,
            optional: false,
            serde_default: true,
        },
        FieldDef {
            ident: "kind".into(),
            json_name: "kind".into(),
            doc: Some(
                "Kind is a string value representing the REST resource this object represents."
                    .into(),
            ),
            ty: TypeRef::String,
            optional: false,
            serde_default: true,
        },
        FieldDef {
            ident: "metadata".into(),
            json_name: "metadata".into(),
            doc: Some("Standard object's metadata.".into()),
            ty: TypeRef::ObjectMeta,
            optional: false,
            serde_default: true,
        },
    ];
    let mut idents: BTreeSet<String> = fields.iter().map(|f| f.ident.clone()).collect();
    for (name, prop) in &schema.properties {
        if matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        let hint = format!("{kind}{}", pascal_case(name));
        let ty = b.type_ref(&hint, prop);
        fields.push(FieldDef {
            ident: unique_ident(&mut idents, field_ident_name(name)),
            json_name: name.clone(),
            doc: prop.description.clone(),
            ty,
            optional: !schema.required.contains(name) || prop.nullable,
            serde_default: false,
        });
    }
    let root = TypeDef::Struct(StructDef {
        name: kind.to_string(),
        doc: schema.description.clone(),
        fields,
        flatten_extra: false,
    });
    let mut types = vec![root];
    types.append(&mut b.types);
    *taken = b.taken;
    types
}

fn unique_ident(taken: &mut BTreeSet<String>, base: String) -> String {
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

struct TypeSpaceBuilder {
    types: Vec<TypeDef>,
    taken: BTreeSet<String>,
}

impl TypeSpaceBuilder {
    fn unique_name(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        while !self.taken.insert(name.clone()) {
            name = format!("{base}{n}");
            n += 1;
        }
        name
    }

    fn type_ref(&mut self, hint: &str, schema: &Schema) -> TypeRef {
        if schema.x_int_or_string {
            return TypeRef::IntOrString;
        }
        if schema.x_embedded_resource {
            return TypeRef::Json;
        }
        match schema.type_ {
            None => TypeRef::Json,
            Some(SchemaType::String) => match schema.format.as_deref() {
                Some("date-time") => TypeRef::Time,
                Some("quantity") => TypeRef::Quantity,
                _ => match string_enum(schema) {
                    Some(values) => self.enum_type(hint, schema, values),
                    None => TypeRef::String,
                },
            },
            Some(SchemaType::Integer) => match schema.format.as_deref() {
                Some("int32") => TypeRef::I32,
                _ => TypeRef::I64,
            },
            Some(SchemaType::Number) => TypeRef::Number,
            Some(SchemaType::Boolean) => TypeRef::Bool,
            Some(SchemaType::Array) => match &schema.items {
                Some(items) => TypeRef::List(Box::new(self.type_ref(hint, items))),
                None => TypeRef::List(Box::new(TypeRef::Json)),
            },
            Some(SchemaType::Object) => {
                if !schema.properties.is_empty() {
                    self.struct_type(hint, schema)
                } else {
                    match &schema.additional_properties {
                        Some(AdditionalProperties::Schema(values)) => {
                            TypeRef::Map(Box::new(self.type_ref(&format!("{hint}Value"), values)))
                        }
                        _ if schema.x_preserve_unknown_fields => TypeRef::Json,
                        _ => TypeRef::Map(Box::new(TypeRef::Json)),
                    }
                }
            }
        }
    }

    fn enum_type(&mut self, hint: &str, schema: &Schema, values: Vec<String>) -> TypeRef {
        let name = self.unique_name(hint);
        let mut taken = BTreeSet::new();
        let variants = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let base = variant_name(v, i);
                let mut ident = base.clone();
                let mut n = 2;
                while !taken.insert(ident.clone()) {
                    ident = format!("{base}{n}");
                    n += 1;
                }
                (ident, v.clone())
            })
            .collect();
        self.types.push(TypeDef::Enum(EnumDef {
            name: name.clone(),
            doc: schema.description.clone(),
            variants,
        }));
        TypeRef::Named(name)
    }

    fn struct_type(&mut self, hint: &str, schema: &Schema) -> TypeRef {
        let name = self.unique_name(hint);
        // Reserve the slot so the parent precedes its children in the output.
        let slot = self.types.len();
        self.types.push(TypeDef::Struct(StructDef {
            name: name.clone(),
            doc: None,
            fields: Vec::new(),
            flatten_extra: false,
        }));
        let mut idents = BTreeSet::new();
        let mut fields = Vec::new();
        for (prop_name, prop) in &schema.properties {
            let child_hint = format!("{name}{}", pascal_case(prop_name));
            let ty = self.type_ref(&child_hint, prop);
            let ident = unique_ident(&mut idents, field_ident_name(prop_name));
            fields.push(FieldDef {
                ident,
                json_name: prop_name.clone(),
                doc: prop.description.clone(),
                ty,
                optional: !schema.required.contains(prop_name) || prop.nullable,
                serde_default: false,
            });
        }
        self.types[slot] = TypeDef::Struct(StructDef {
            name: name.clone(),
            doc: schema.description.clone(),
            fields,
            flatten_extra: schema.x_preserve_unknown_fields,
        });
        TypeRef::Named(name)
    }
}

/// The values of an enum made only of strings.
fn string_enum(schema: &Schema) -> Option<Vec<String>> {
    let values = schema.enum_.as_ref()?;
    if values.is_empty() {
        return None;
    }
    values
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .filter(|_| {
            // A nullable enum may hold null, which a Rust enum cannot: keep it a String.
            !schema.nullable && !values.contains(&Value::Null)
        })
}
