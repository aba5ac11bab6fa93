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
//!
//! A node resolved from a shared definition (`$ref`) becomes one type for the whole
//! generation, named as the definition's last segment in a module made of the rest
//! (`io.k8s.api.core.v1.PodSpec` → `io::k8s::api::core::v1::PodSpec`), or the type of
//! another crate when the definition's name has an extern prefix
//! (`io.k8s.apimachinery.…` → k8s-openapi's apimachinery types).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kapi_core::schema::{AdditionalProperties, Definitions, Schema, SchemaType};
use serde_json::Value;

use super::naming::{field_ident_name, pascal_case, variant_name};
use super::{EnumDef, FieldDef, StructDef, TypeDef, TypeRef};

/// The type names and shapes of one generated module, shared by all its resources.
#[derive(Debug, Default)]
struct ModuleTypes {
    taken: BTreeSet<String>,
    shapes: HashMap<String, String>,
}

/// Every module's names and every definition's type, for one generation.
#[derive(Debug, Default)]
pub struct TypeSpace {
    modules: BTreeMap<Vec<String>, ModuleTypes>,
    /// `(definition name prefix, Rust path prefix)`, longest prefix first.
    externs: Vec<(String, String)>,
    /// Definitions already given a type.
    defined: BTreeMap<String, TypeRef>,
    /// Each definition's own description (a `$ref` may carry another one for its field).
    descriptions: BTreeMap<String, Option<String>>,
    /// The types of definitions, by module, each module's types in emission order.
    pub definition_types: BTreeMap<Vec<String>, Vec<TypeDef>>,
}

impl TypeSpace {
    /// A type space for `definitions`, mapping those under each `(prefix, rust_path)` of
    /// `externs` to another crate.
    pub fn new(definitions: &Definitions, externs: &BTreeMap<String, String>) -> Self {
        let descriptions = definitions
            .iter()
            .map(|(name, v)| {
                let d = v.get("description").and_then(Value::as_str);
                (name.clone(), d.map(str::to_string))
            })
            .collect();
        let mut externs: Vec<(String, String)> = externs
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        externs.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
        Self {
            externs,
            descriptions,
            ..Self::default()
        }
    }

    /// Reserves a name in a module (every kind of the module, before its types are built).
    pub fn reserve(&mut self, module: &[String], name: &str) {
        self.module(module).taken.insert(name.to_string());
    }

    fn module(&mut self, module: &[String]) -> &mut ModuleTypes {
        self.modules.entry(module.to_vec()).or_default()
    }

    /// `io.k8s.apimachinery.pkg.apis.meta.v1.Time` → the extern Rust path, if mapped.
    fn extern_path(&self, definition: &str) -> Option<String> {
        self.externs.iter().find_map(|(prefix, path)| {
            let rest = definition.strip_prefix(prefix.as_str())?;
            let rest = rest.strip_prefix('.')?;
            let mut segs: Vec<&str> = rest.split('.').collect();
            let name = segs.pop()?;
            let mut out = path.clone();
            for s in segs {
                out.push_str("::");
                out.push_str(&module_segment(s));
            }
            out.push_str("::");
            out.push_str(name);
            Some(out)
        })
    }
}

/// A definition name's module path and type name: `io.k8s.api.core.v1.PodSpec` →
/// (`[io, k8s, api, core, v1]`, `PodSpec`).
pub fn definition_path(definition: &str) -> (Vec<String>, String) {
    let mut segs: Vec<&str> = definition.split('.').collect();
    let name = segs.pop().unwrap_or_default();
    let module = segs.into_iter().map(module_segment).collect();
    let is_ident = name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric());
    let name = if is_ident {
        name.to_string()
    } else {
        pascal_case(name)
    };
    (module, name)
}

/// One module name from one segment of a definition name (`apiextensions-apiserver` →
/// `apiextensions_apiserver`).
fn module_segment(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{out}")
    } else {
        out
    }
}

/// The types of one resource version: the resource struct (named `kind`) first, then
/// the nested types it introduces (a nested type before the types that use it).
/// Definitions it uses are added to `space.definition_types`.
pub fn build_type_space(
    kind: &str,
    schema: &Schema,
    module: &[String],
    space: &mut TypeSpace,
) -> Vec<TypeDef> {
    let mut b = TypeSpaceBuilder {
        types: Vec::new(),
        module: module.to_vec(),
        space,
    };
    b.space.reserve(module, kind);
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
    module: Vec<String>,
    space: &'m mut TypeSpace,
}

impl TypeSpaceBuilder<'_> {
    fn unique_name(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        let module = self.space.module(&self.module);
        while !module.taken.insert(name.clone()) {
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
        let module = self.space.module(&self.module);
        if let Some(existing) = module.shapes.get(&shape) {
            module.taken.remove(&name);
            return TypeRef::Named(existing.clone());
        }
        module.shapes.insert(shape, name.clone());
        self.types.push(def);
        TypeRef::Named(name)
    }

    /// The type of a node resolved from a definition: one type for every use. Only
    /// objects with properties and string enums get a type of their own; a definition
    /// of a plain string, number or map is written as that.
    fn definition_ref(&mut self, definition: &str, schema: &Schema) -> Option<TypeRef> {
        if let Some(path) = self.space.extern_path(definition) {
            return Some(TypeRef::Extern(path));
        }
        if let Some(done) = self.space.defined.get(definition) {
            return Some(done.clone());
        }
        let named = !schema.x_int_or_string
            && !schema.x_embedded_resource
            && match schema.type_ {
                Some(SchemaType::Object) => !schema.properties.is_empty(),
                Some(SchemaType::String) => {
                    !matches!(schema.format.as_deref(), Some("date-time" | "quantity"))
                        && string_enum(schema).is_some()
                }
                _ => false,
            };
        if !named {
            return None;
        }
        let (module, name) = definition_path(definition);
        let reference = TypeRef::Defined {
            module: module.clone(),
            name: name.clone(),
        };
        // Recorded first: a definition that reaches itself again refers to this type.
        self.space
            .defined
            .insert(definition.to_string(), reference.clone());
        self.space.reserve(&module, &name);
        // The type's own description, not the one written next to this `$ref`.
        let mut own = schema.clone();
        own.description = self.space_description(definition, schema);
        let mut inner = TypeSpaceBuilder {
            types: Vec::new(),
            module: module.clone(),
            space: self.space,
        };
        let def = if own.type_ == Some(SchemaType::Object) {
            inner.struct_def(name, &own)
        } else {
            let values = string_enum(&own).unwrap_or_default();
            inner.enum_def(name, &own, values)
        };
        let mut types = vec![def];
        types.extend(inner.types.into_iter().rev());
        let list = self.space.definition_types.entry(module).or_default();
        // Types come before the types that use them, definitions in first-use order.
        list.extend(types);
        Some(reference)
    }

    fn space_description(&self, definition: &str, schema: &Schema) -> Option<String> {
        self.space
            .descriptions
            .get(definition)
            .cloned()
            .unwrap_or_else(|| schema.description.clone())
    }

    fn type_ref(&mut self, hint: &str, schema: &Schema) -> TypeRef {
        if let Some(definition) = &schema.definition {
            if let Some(r) = self.definition_ref(definition, schema) {
                return r;
            }
        }
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
        let def = self.enum_def(name.clone(), schema, values);
        self.add(name, def)
    }

    fn enum_def(&mut self, name: String, schema: &Schema, values: Vec<String>) -> TypeDef {
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
        TypeDef::Enum(EnumDef {
            name,
            doc: schema.description.clone(),
            variants,
        })
    }

    fn struct_type(&mut self, hint: &str, schema: &Schema) -> TypeRef {
        let name = self.unique_name(hint);
        let def = self.struct_def(name.clone(), schema);
        self.add(name, def)
    }

    fn struct_def(&mut self, name: String, schema: &Schema) -> TypeDef {
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
        TypeDef::Struct(StructDef {
            name,
            doc: schema.description.clone(),
            fields,
            flatten_extra: schema.x_preserve_unknown_fields,
        })
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
