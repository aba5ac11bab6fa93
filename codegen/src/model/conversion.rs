//! Conversion between the versions of a resource whose versions really differ: one
//! whose schema file says `spec.conversion.strategy: Webhook`. Every version converts
//! to and from the hub (the storage version), struct by struct from the resource's
//! own type down: a field converts when the other version has a field of the same
//! JSON name whose type converts (the same type, a wider integer, a struct or enum
//! that converts in turn, lists and maps of those; optional to required does not).
//!
//! A struct with a field that does not convert, on either side, is left to the
//! resource's conversion hooks (`Convert<From, To>`, see [`CONVERSION_HOOKS_ANNOTATION`]):
//! the generated code converts what matches and the hook fills in the rest. Without
//! hooks each such field is an error at its place in the schema file. A resource whose
//! conversion is declared external (its operator's own webhook) gets none. Pure data.
//!
//! [`CONVERSION_HOOKS_ANNOTATION`]: crate::CONVERSION_HOOKS_ANNOTATION

use std::collections::BTreeMap;

use kapi_core::FieldPath;

use super::{FieldDef, ResourceDef, TypeDef, TypeRef};

/// How a value of one version becomes the other version's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueConv {
    /// The same type: cloned.
    Clone,
    /// `i32` to `i64`.
    Widen,
    /// A struct or enum pair's function.
    Call(String),
    /// Each item of a list.
    List(Box<ValueConv>),
    /// Each value of a map.
    Map(Box<ValueConv>),
}

/// How a target field is filled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldFill {
    /// From the source field `from` (its Rust name) with `conv`; `optional` is the
    /// optionality both share, `wrap` a required source into an optional target.
    From {
        from: String,
        conv: ValueConv,
        optional: bool,
        wrap: bool,
    },
    /// `Default`, for the hook to fill.
    Hook,
}

/// The body of one pair's function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PairBody {
    /// Target fields by Rust name; `hook` when the hook completes them; `extra` the
    /// flattened unknown-fields maps of source and target, where they keep one.
    Struct {
        fields: Vec<(String, FieldFill)>,
        hook: bool,
        extra: (Option<String>, Option<String>),
    },
    /// Variants by Rust name, from → to.
    Enum(Vec<(String, String)>),
}

/// One function of the conversion: a type of one version to a type of another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairDef {
    /// The function's name.
    pub function: String,
    /// `(module path from the generated root, type)` converted from: a version's
    /// module (`[group, v1]`) or a shared definition's.
    pub from: (Vec<String>, String),
    /// `(module path, type)` converted to.
    pub to: (Vec<String>, String),
    /// What it does.
    pub body: PairBody,
}

/// A resource's conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionDef {
    /// The group's module, which the conversion's module sits in.
    pub group: String,
    /// The kind (the resource's own type in every version).
    pub kind: String,
    /// The hub's version module.
    pub hub: String,
    /// For every other version: its module, and its root functions to and from the hub.
    pub spokes: Vec<(String, String, String)>,
    /// The hooks type, a Rust path.
    pub hooks: Option<String>,
    /// Every function.
    pub pairs: Vec<PairDef>,
}

/// A field that neither converts nor is left to hooks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmatched {
    /// Where it is in the schema file.
    pub schema_path: FieldPath,
    /// Its path in an object (`spec.colour`).
    pub field: String,
    /// The version it is in, and the one it does not convert to.
    pub version: String,
    /// The other version.
    pub other: String,
}

/// Where a type of one side of a walk lives: the version's module, for the types
/// named in it (definitions name their own).
#[derive(Clone, Copy)]
struct Side<'a> {
    module: &'a [String],
}

/// A type: its module path and name.
type TypeKey = (Vec<String>, String);

struct Walker<'a> {
    /// Every type of the group's versions and of the shared definitions, by module
    /// path and name.
    types: &'a BTreeMap<TypeKey, TypeDef>,
    hooks: bool,
    pairs: Vec<PairDef>,
    /// Pairs made or being made, to their function names.
    named: BTreeMap<(TypeKey, TypeKey), String>,
    unmatched: Vec<Unmatched>,
    versions: (&'a str, &'a str),
}

fn schema_root(index: usize) -> FieldPath {
    FieldPath::new("spec.versions")
        .index(index)
        .child("schema")
        .child("openAPIV3Schema")
}

/// The function name of a pair: `widget_spec_v1alpha1_to_v1` (each side named by
/// the last segment of its module).
fn function_name(from: &TypeKey, to: &TypeKey) -> String {
    let last = |k: &TypeKey| k.0.last().cloned().unwrap_or_default();
    let base = if from.1 == to.1 {
        super::field_ident_name(&from.1)
    } else {
        format!(
            "{}_{}",
            super::field_ident_name(&from.1),
            super::field_ident_name(&to.1)
        )
    };
    format!("{base}_{}_to_{}", last(from), last(to))
}

/// Where a field's type lives, when it is a generated type: named in the side's module,
/// or a shared definition's.
fn type_key(ty: &TypeRef, side: Side<'_>) -> Option<TypeKey> {
    match ty {
        TypeRef::Named(name) => Some((side.module.to_vec(), name.clone())),
        TypeRef::Defined { module, name } => Some((module.clone(), name.clone())),
        _ => None,
    }
}

impl Walker<'_> {
    /// How a value of `from` becomes one of `to`, making the pair functions it needs;
    /// `None` when it does not convert. `at` are the schema paths of both.
    fn conv(
        &mut self,
        from: (&TypeRef, Side<'_>, &FieldPath),
        to: (&TypeRef, Side<'_>, &FieldPath),
        field: &str,
    ) -> Option<ValueConv> {
        if let (Some(a), Some(b)) = (type_key(from.0, from.1), type_key(to.0, to.1)) {
            // One shared definition on both sides is the same type.
            if a == b && matches!(from.0, TypeRef::Defined { .. }) {
                return Some(ValueConv::Clone);
            }
            return self
                .pair((a, from.2.clone()), (b, to.2.clone()), field)
                .map(ValueConv::Call);
        }
        match (from.0, to.0) {
            (TypeRef::I32, TypeRef::I64) => Some(ValueConv::Widen),
            (TypeRef::List(a), TypeRef::List(b)) => self.each(
                (a, from.1, from.2),
                (b, to.1, to.2),
                "items",
                field,
                ValueConv::List,
            ),
            (TypeRef::Map(a), TypeRef::Map(b)) => self.each(
                (a, from.1, from.2),
                (b, to.1, to.2),
                "additionalProperties",
                field,
                ValueConv::Map,
            ),
            (TypeRef::Named(_) | TypeRef::Defined { .. }, _)
            | (_, TypeRef::Named(_) | TypeRef::Defined { .. }) => None,
            (TypeRef::List(_) | TypeRef::Map(_), _) | (_, TypeRef::List(_) | TypeRef::Map(_)) => {
                None
            }
            (a, b) if a == b => Some(ValueConv::Clone),
            _ => None,
        }
    }

    /// How the items (`child`: `items` or `additionalProperties`) of a list or map
    /// convert, made by `wrap`; values that clone make the whole collection clone.
    fn each(
        &mut self,
        from: (&TypeRef, Side<'_>, &FieldPath),
        to: (&TypeRef, Side<'_>, &FieldPath),
        child: &str,
        field: &str,
        wrap: fn(Box<ValueConv>) -> ValueConv,
    ) -> Option<ValueConv> {
        let inner = self.conv(
            (from.0, from.1, &from.2.child(child)),
            (to.0, to.1, &to.2.child(child)),
            field,
        )?;
        Some(match inner {
            ValueConv::Clone => ValueConv::Clone,
            inner => wrap(Box::new(inner)),
        })
    }

    /// The function converting type `from.0` to `to.0`, made if new; `None` when they
    /// cannot convert (a struct and an enum, enums of other values). `from.1` and
    /// `to.1` are their places in the schemas.
    fn pair(
        &mut self,
        from: (TypeKey, FieldPath),
        to: (TypeKey, FieldPath),
        field: &str,
    ) -> Option<String> {
        let key = (from.0.clone(), to.0.clone());
        if let Some(name) = self.named.get(&key) {
            return Some(name.clone());
        }
        let types = self.types;
        let from_def = types.get(&from.0)?;
        let to_def = types.get(&to.0)?;
        let mut function = function_name(&from.0, &to.0);
        while self.named.values().any(|f| *f == function) {
            function.push('_');
        }
        let body = match (from_def, to_def) {
            (TypeDef::Enum(a), TypeDef::Enum(b)) => {
                let mut variants = Vec::new();
                for (ident, json) in &a.variants {
                    let (to_ident, _) = b.variants.iter().find(|(_, j)| j == json)?;
                    variants.push((ident.clone(), to_ident.clone()));
                }
                PairBody::Enum(variants)
            }
            (TypeDef::Struct(_), TypeDef::Struct(_)) => {
                // Named before its fields are walked: a type that holds itself converts.
                self.named.insert(key.clone(), function.clone());
                let sides = (
                    (Side { module: &from.0.0 }, &from.1),
                    (Side { module: &to.0.0 }, &to.1),
                );
                let body = self.struct_body(from_def, to_def, sides.0, sides.1, field);
                if body.is_none() {
                    self.named.remove(&key);
                }
                body?
            }
            _ => return None,
        };
        self.named.insert(key, function.clone());
        self.pairs.push(PairDef {
            function: function.clone(),
            from: from.0,
            to: to.0,
            body,
        });
        Some(function)
    }

    fn struct_body(
        &mut self,
        from_def: &TypeDef,
        to_def: &TypeDef,
        from: (Side<'_>, &FieldPath),
        to: (Side<'_>, &FieldPath),
        field: &str,
    ) -> Option<PairBody> {
        let (TypeDef::Struct(a), TypeDef::Struct(b)) = (from_def, to_def) else {
            return None;
        };
        let mut fields = Vec::new();
        let mut matched_sources = Vec::new();
        let mut needs_hook = false;
        let object_path = |name: &str| {
            if field.is_empty() {
                name.to_string()
            } else {
                format!("{field}.{name}")
            }
        };
        for t in &b.fields {
            let source = a.fields.iter().find(|f| f.json_name == t.json_name);
            let fill = source.and_then(|s| {
                let conv = self.conv(
                    (
                        &s.ty,
                        from.0,
                        &from.1.child("properties").child(&s.json_name),
                    ),
                    (&t.ty, to.0, &to.1.child("properties").child(&t.json_name)),
                    &object_path(&t.json_name),
                )?;
                fill(s, t, conv)
            });
            match fill {
                Some(f) => {
                    matched_sources.push(t.json_name.clone());
                    fields.push((t.ident.clone(), f));
                }
                None => {
                    needs_hook = true;
                    self.report(to, &t.json_name, &object_path(&t.json_name), false);
                    fields.push((t.ident.clone(), FieldFill::Hook));
                }
            }
        }
        for s in &a.fields {
            if !matched_sources.contains(&s.json_name) {
                needs_hook = true;
                self.report(from, &s.json_name, &object_path(&s.json_name), true);
            }
        }
        let extra = (
            a.flatten_extra.then(|| extra_field(&a.fields)),
            b.flatten_extra.then(|| extra_field(&b.fields)),
        );
        if a.flatten_extra != b.flatten_extra {
            needs_hook = true;
        }
        Some(PairBody::Struct {
            fields,
            hook: needs_hook,
            extra,
        })
    }

    /// Has the hooks complete these functions (the resource's own type) too.
    fn hook_object(&mut self, functions: &[&String]) {
        for pair in &mut self.pairs {
            if let PairBody::Struct { hook, .. } = &mut pair.body {
                if functions.contains(&&pair.function) {
                    *hook = true;
                }
            }
        }
    }

    /// Records a field that does not convert (when there are no hooks to take it).
    fn report(&mut self, side: (Side<'_>, &FieldPath), json: &str, field: &str, source: bool) {
        if self.hooks {
            return;
        }
        let (version, other) = if source {
            (self.versions.0, self.versions.1)
        } else {
            (self.versions.1, self.versions.0)
        };
        self.unmatched.push(Unmatched {
            schema_path: side.1.child("properties").child(json),
            field: field.to_string(),
            version: version.to_string(),
            other: other.to_string(),
        });
    }
}

/// The name of the flattened unknown-fields map of a struct with these fields.
pub fn extra_field(fields: &[FieldDef]) -> String {
    let mut name = "additional_fields".to_string();
    while fields.iter().any(|f| f.ident == name) {
        name.push('_');
    }
    name
}

/// How target `t` is filled from source `s` with `conv`, given their optionality.
fn fill(s: &FieldDef, t: &FieldDef, conv: ValueConv) -> Option<FieldFill> {
    let from = s.ident.clone();
    match (s.optional, t.optional) {
        (true, false) => None,
        (false, true) => Some(FieldFill::From {
            from,
            conv,
            optional: false,
            wrap: true,
        }),
        (optional, _) => Some(FieldFill::From {
            from,
            conv,
            optional,
            wrap: false,
        }),
    }
}

/// The conversion of `res`, if its versions convert through a webhook; the fields
/// that convert neither way nor are left to hooks, otherwise empty.
pub fn build(
    res: &ResourceDef,
    types: &BTreeMap<TypeKey, TypeDef>,
) -> (Option<ConversionDef>, Vec<Unmatched>) {
    let webhook = matches!(res.crd.conversion, kapi_core::crd::Conversion::Webhook(_));
    if !webhook || res.external_conversion {
        return (None, Vec::new());
    }
    let Some(hub) = res
        .versions
        .iter()
        .find(|v| res.crd.versions[v.index].storage)
    else {
        return (None, Vec::new());
    };
    let kind = res.crd.names.kind.clone();
    let mut walker = Walker {
        types,
        hooks: res.conversion_hooks.is_some(),
        pairs: Vec::new(),
        named: BTreeMap::new(),
        unmatched: Vec::new(),
        versions: ("", ""),
    };
    let mut spokes = Vec::new();
    let group = super::module_name(&res.crd.group);
    let key = |module: &str| (vec![group.clone(), module.to_string()], kind.clone());
    for v in res.versions.iter().filter(|v| v.index != hub.index) {
        let names = (
            &res.crd.versions[v.index].name,
            &res.crd.versions[hub.index].name,
        );
        walker.versions = (names.0, names.1);
        let up = walker.pair(
            (key(&v.module), schema_root(v.index)),
            (key(&hub.module), schema_root(hub.index)),
            "",
        );
        walker.versions = (names.1, names.0);
        let down = walker.pair(
            (key(&hub.module), schema_root(hub.index)),
            (key(&v.module), schema_root(v.index)),
            "",
        );
        if let (Some(up), Some(down)) = (up, down) {
            if res.conversion_object_hooks && res.conversion_hooks.is_some() {
                walker.hook_object(&[&up, &down]);
            }
            spokes.push((v.module.clone(), up, down));
        }
    }
    // A field of the hub that converts to no spoke is found both ways: once is enough.
    let mut unmatched = walker.unmatched;
    unmatched.sort_by_key(|u| u.schema_path.to_document_path());
    unmatched.dedup_by_key(|u| u.schema_path.to_document_path());
    let def = ConversionDef {
        group,
        kind,
        hub: hub.module.clone(),
        spokes,
        hooks: res.conversion_hooks.clone(),
        pairs: walker.pairs,
    };
    (Some(def), unmatched)
}
