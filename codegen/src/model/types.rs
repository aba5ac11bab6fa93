//! Schema → Rust types.
//!
//! Naming rule: a nested object type is named after its parent type and the property
//! that holds it (`Widget` → `WidgetSpec` → `WidgetSpecTemplate`); list items share the
//! list property's name and map values add `Value`. A name already taken in the module
//! gets the next free numeric suffix (`WidgetSpecPort2`). Properties are visited in
//! sorted order, so the result is deterministic.
//!
//! Types of the same shape (same fields, types and docs) within one module are emitted
//! once, under the first name given to that shape: `containers` and `initContainers`
//! share one container type, and two resources with the same nested object share it.

use std::collections::{BTreeSet, HashMap};

use kapi_core::schema::{AdditionalProperties, Schema, SchemaType};
use serde_json::Value;

use super::naming::{field_ident_name, pascal_case, variant_name};
use super::{EnumDef, FieldDef, StructDef, TypeDef, TypeRef};

/// The type names and shapes of one generated module, shared by all its resources.
#[derive(Debug, Default)]
pub struct ModuleTypes {
    taken: BTreeSet<String>,
    shapes: HashMap<String, String>,
}

impl ModuleTypes {
    /// Reserves a name (every kind of the module, before its types are built).
    pub fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }
}

/// The types of one resource version: the resource struct (named `kind`) first, then
/// the nested types it introduces (a nested type before the types that use it).
pub fn build_type_space(kind: &str, schema: &Schema, module: &mut ModuleTypes) -> Vec<TypeDef> {
    let mut b = TypeSpaceBuilder {
        types: Vec::new(),
        module,
    };
    b.module.reserve(kind);
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
    // Built children-first; reversed, each type comes before the types it uses.
    let mut types = vec![root];
    types.extend(b.types.into_iter().rev());
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

struct TypeSpaceBuilder<'m> {
    types: Vec<TypeDef>,
    module: &'m mut ModuleTypes,
}

impl TypeSpaceBuilder<'_> {
    fn unique_name(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        while !self.module.taken.insert(name.clone()) {
            name = format!("{base}{n}");
            n += 1;
        }
        name
    }

    /// Adds `def` (named `name`) unless the module already has a type of that shape, in
    /// which case `name` is released and the existing type is used.
    fn add(&mut self, name: String, def: TypeDef) -> TypeRef {
        let shape = match &def {
            TypeDef::Struct(s) => format!("{:?}", (&s.doc, &s.fields, s.flatten_extra)),
            TypeDef::Enum(e) => format!("{:?}", (&e.doc, &e.variants)),
        };
        if let Some(existing) = self.module.shapes.get(&shape) {
            self.module.taken.remove(&name);
            return TypeRef::Named(existing.clone());
        }
        self.module.shapes.insert(shape, name.clone());
        self.types.push(def);
        TypeRef::Named(name)
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
        let def = TypeDef::Enum(EnumDef {
            name: name.clone(),
            doc: schema.description.clone(),
            variants,
        });
        self.add(name, def)
    }

    fn struct_type(&mut self, hint: &str, schema: &Schema) -> TypeRef {
        let name = self.unique_name(hint);
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
        let def = TypeDef::Struct(StructDef {
            name: name.clone(),
            doc: schema.description.clone(),
            fields,
            flatten_extra: schema.x_preserve_unknown_fields,
        });
        self.add(name, def)
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
