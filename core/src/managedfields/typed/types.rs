//! kapi's [`Schema`] seen as SMD types: which nodes are scalars, lists (atomic, sets,
//! associative by keys) and maps (structs, granular or atomic maps), resolved lazily
//! while walking a value. The rules are kube-openapi's `schemaconv` (how kube turns a
//! CRD's or a built-in's OpenAPI into SMD types); the module documentation of
//! [`managedfields`](crate::managedfields) lists them.

use std::sync::LazyLock;

use serde_json::Value;

use crate::managedfields::path::PathElement;
use crate::managedfields::value::go_quote;
use crate::schema::{AdditionalProperties, ListType, MapType, Schema, SchemaType};

/// An SMD type reference: a schema node, or one of kube's two untyped types.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ty<'s> {
    /// A schema node. `preserve` is true when it or an ancestor has
    /// `x-kubernetes-preserve-unknown-fields` (kube carries it down); `resource` when
    /// it is a resource's root or an embedded resource, whose `apiVersion`, `kind`
    /// and `metadata` kube types whatever the schema says.
    Node {
        schema: &'s Schema,
        preserve: bool,
        resource: bool,
    },
    /// `__untyped_deduced_`: a scalar, an atomic list, or a granular map of deduced
    /// values, by what the value is.
    Deduced,
    /// `__untyped_atomic_`: a scalar, an atomic list or an atomic map.
    Untyped,
}

impl<'s> Ty<'s> {
    /// A child node, inheriting `preserve`.
    fn child(schema: &'s Schema, preserve: bool) -> Ty<'s> {
        Ty::Node {
            schema,
            preserve,
            resource: schema.x_embedded_resource,
        }
    }
}

/// SMD's scalar types, which only decide validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    Numeric,
    String,
    Boolean,
    Untyped,
}

/// How a list's items are identified.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ListKind<'s> {
    /// Replaced as a whole.
    Atomic,
    /// Associative by the items' values (a set of scalars).
    Set,
    /// Associative by these key fields.
    Map(&'s [String]),
}

/// A list type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListAtom<'s> {
    pub(crate) kind: ListKind<'s>,
    pub(crate) elem: Ty<'s>,
}

/// A map or struct type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MapAtom<'s> {
    /// `x-kubernetes-map-type: atomic` (or an untyped map).
    pub(crate) atomic: bool,
    /// The node whose `properties` are the declared fields, with its `preserve`.
    node: Option<(&'s Schema, bool)>,
    /// Declares `apiVersion`, `kind` and `metadata` (see [`Ty::Node`]).
    resource: bool,
    /// The type of undeclared keys; `None` when they are not allowed.
    pub(crate) elem: Option<Ty<'s>>,
}

impl<'s> MapAtom<'s> {
    /// The type of a declared field (SMD's `FindField`).
    pub(crate) fn field(&self, name: &str) -> Option<Ty<'s>> {
        if self.resource {
            if let Some(s) = type_meta().properties.get(name) {
                return Some(Ty::child(s, false));
            }
        }
        let (schema, preserve) = self.node?;
        schema.properties.get(name).map(|s| Ty::child(s, preserve))
    }

    /// The type of the value at `name`: the field's, else the element type.
    pub(crate) fn child(&self, name: &str) -> Option<Ty<'s>> {
        self.field(name).or(self.elem)
    }

    /// True when `name` is a declared field.
    pub(crate) fn declares(&self, name: &str) -> bool {
        self.field(name).is_some()
    }

    /// A map of deduced values with no declared fields (SMD's `isUntypedDeducedMap`).
    pub(crate) fn is_untyped_deduced(&self) -> bool {
        let no_fields = !self.resource && self.node.is_none_or(|(s, _)| s.properties.is_empty());
        no_fields && matches!(self.elem, Some(Ty::Deduced))
    }
}

/// The kinds a type allows; a schema node without `type` allows all three and the
/// value decides (SMD's `deduceAtom`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Resolved<'s> {
    pub(crate) scalar: Option<Scalar>,
    pub(crate) list: Option<ListAtom<'s>>,
    pub(crate) map: Option<MapAtom<'s>>,
}

/// One kind of a [`Resolved`] type.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Atom<'s> {
    Scalar(Scalar),
    List(ListAtom<'s>),
    Map(MapAtom<'s>),
}

/// Which kind of a union type a value selected: `None` when the value (absent, null,
/// or of a kind the type lacks) selects none, which SMD handles as the whole union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Scalar,
    List,
    Map,
}

impl<'s> Resolved<'s> {
    fn kinds(&self) -> usize {
        usize::from(self.scalar.is_some())
            + usize::from(self.list.is_some())
            + usize::from(self.map.is_some())
    }

    /// SMD's `deduceAtom`, as a kind: the value's kind when the type has it; with a
    /// single-kind type that kind whatever the value (SMD keeps the atom unchanged,
    /// which is the same atom).
    pub(crate) fn deduce(&self, v: Option<&Value>) -> Option<Kind> {
        let by_value = match v {
            Some(Value::Bool(_) | Value::Number(_) | Value::String(_)) => {
                self.scalar.map(|_| Kind::Scalar)
            }
            Some(Value::Array(_)) => self.list.map(|_| Kind::List),
            Some(Value::Object(_)) => self.map.map(|_| Kind::Map),
            Some(Value::Null) | None => None,
        };
        if by_value.is_some() || self.kinds() != 1 {
            return by_value;
        }
        self.atom(None).map(|a| match a {
            Atom::Scalar(_) => Kind::Scalar,
            Atom::List(_) => Kind::List,
            Atom::Map(_) => Kind::Map,
        })
    }

    /// SMD's `handleAtom`: the selected kind, or for the whole union the map, else
    /// the scalar, else the list.
    pub(crate) fn atom(&self, kind: Option<Kind>) -> Option<Atom<'s>> {
        let map = self.map.map(Atom::Map);
        let scalar = self.scalar.map(Atom::Scalar);
        let list = self.list.map(Atom::List);
        match kind {
            Some(Kind::Map) => map,
            Some(Kind::Scalar) => scalar,
            Some(Kind::List) => list,
            None => map.or(scalar).or(list),
        }
    }

    /// The kind a value is handled as.
    pub(crate) fn atom_for(&self, v: Option<&Value>) -> Option<Atom<'s>> {
        self.atom(self.deduce(v))
    }
}

/// The SMD type of `ty`.
pub(crate) fn resolve(ty: Ty<'_>) -> Resolved<'_> {
    match ty {
        Ty::Deduced => Resolved {
            scalar: Some(Scalar::Untyped),
            list: Some(untyped_list()),
            map: Some(MapAtom {
                atomic: false,
                node: None,
                resource: false,
                elem: Some(Ty::Deduced),
            }),
        },
        Ty::Untyped => Resolved {
            scalar: Some(Scalar::Untyped),
            list: Some(untyped_list()),
            map: Some(MapAtom {
                atomic: true,
                node: None,
                resource: false,
                elem: Some(Ty::Untyped),
            }),
        },
        Ty::Node {
            schema,
            preserve,
            resource,
        } => resolve_node(
            schema,
            preserve || schema.x_preserve_unknown_fields,
            resource,
        ),
    }
}

fn untyped_list<'s>() -> ListAtom<'s> {
    ListAtom {
        kind: ListKind::Atomic,
        elem: Ty::Untyped,
    }
}

fn resolve_node(schema: &Schema, preserve: bool, resource: bool) -> Resolved<'_> {
    let none = Resolved {
        scalar: None,
        list: None,
        map: None,
    };
    let scalar = |s| Resolved {
        scalar: Some(s),
        ..none
    };
    match schema.type_ {
        // No type (int-or-string, untyped preserve-unknown): any of the three.
        None => Resolved {
            scalar: Some(Scalar::Untyped),
            list: Some(list_of(schema, preserve)),
            map: Some(map_of(schema, preserve, resource)),
        },
        Some(SchemaType::Object) => Resolved {
            map: Some(map_of(schema, preserve, resource)),
            ..none
        },
        Some(SchemaType::Array) => Resolved {
            list: Some(list_of(schema, preserve)),
            ..none
        },
        Some(SchemaType::Integer | SchemaType::Number) => scalar(Scalar::Numeric),
        Some(SchemaType::Boolean) => scalar(Scalar::Boolean),
        // kube types formatted strings (date-time, int-or-string, ...) as untyped
        // scalars; only `byte` stays a string.
        Some(SchemaType::String) => match schema.format.as_deref() {
            None | Some("" | "byte") => scalar(Scalar::String),
            Some(_) => scalar(Scalar::Untyped),
        },
    }
}

/// kube-openapi's `getListElementRelationship`: `x-kubernetes-list-type` first, then
/// the patch strategy (`merge` or `merge,retainKeys`, keyed by the merge key or a set
/// without one); atomic otherwise.
fn list_of(schema: &Schema, preserve: bool) -> ListAtom<'_> {
    let kind = match schema.x_list_type {
        Some(ListType::Atomic) => ListKind::Atomic,
        Some(ListType::Set) => ListKind::Set,
        Some(ListType::Map) => ListKind::Map(&schema.x_list_map_keys),
        None => match (
            schema.x_patch_strategy.as_deref(),
            &schema.x_patch_merge_key,
        ) {
            (Some("merge" | "merge,retainKeys"), Some(key)) => {
                ListKind::Map(std::slice::from_ref(key))
            }
            (Some("merge" | "merge,retainKeys"), None) => ListKind::Set,
            _ => ListKind::Atomic,
        },
    };
    let elem = match &schema.items {
        Some(items) => Ty::child(items, preserve),
        None => Ty::Untyped,
    };
    ListAtom { kind, elem }
}

/// kube-openapi's `parseObject`: declared fields plus an element type from
/// `additionalProperties`, or deduced when unknown fields are preserved or nothing is
/// declared.
fn map_of(schema: &Schema, preserve: bool, resource: bool) -> MapAtom<'_> {
    let elem = match &schema.additional_properties {
        Some(AdditionalProperties::Schema(s)) => Some(Ty::child(s, preserve)),
        Some(AdditionalProperties::Bool(true)) => Some(Ty::Deduced),
        Some(AdditionalProperties::Bool(false)) => None,
        None if preserve || (schema.properties.is_empty() && !resource) => Some(Ty::Deduced),
        None => None,
    };
    MapAtom {
        atomic: schema.x_map_type == Some(MapType::Atomic),
        node: Some((schema, preserve)),
        resource,
        elem,
    }
}

impl<'s> ListAtom<'s> {
    /// SMD's `listItemToPathElement` for an associative list: the item's key fields
    /// (a missing key takes the key property's `default`, else is left out; all
    /// missing is an error), or its value for a set.
    pub(crate) fn item_element(&self, item: &Value) -> Result<PathElement, String> {
        let keys = match self.kind {
            ListKind::Map(keys) if !keys.is_empty() => keys,
            ListKind::Atomic => return Err("invalid indexing of non-associative list".into()),
            _ => return set_item_element(item),
        };
        let fields = match item {
            Value::Object(fields) => fields,
            Value::Null => {
                return Err("associative list with keys may not have a null element".into());
            }
            _ => return Err("associative list with keys may not have non-map elements".into()),
        };
        let mut key = Vec::with_capacity(keys.len());
        for name in keys {
            if let Some(v) = fields.get(name) {
                key.push((name.clone(), v.clone()));
            } else if let Some(default) = self.key_default(name)? {
                key.push((name.clone(), default.clone()));
            }
        }
        if key.is_empty() {
            let quoted: Vec<String> = keys.iter().map(|k| go_quote(k)).collect();
            return Err(format!(
                "associative list with keys has an element that omits all key fields [{}] \
                 (and doesn't have default values for any key fields)",
                quoted.join(" ")
            ));
        }
        Ok(PathElement::key(key))
    }

    /// The `default` of the items' key property `name`.
    fn key_default(&self, name: &str) -> Result<Option<&'s Value>, String> {
        let Some(map) = resolve(self.elem).map else {
            return Err(format!(
                "couldn't find default value for {name}: associative list may not have non-map types"
            ));
        };
        Ok(match map.field(name) {
            Some(Ty::Node { schema, .. }) => schema.default.as_ref(),
            _ => None,
        })
    }
}

fn set_item_element(item: &Value) -> Result<PathElement, String> {
    match item {
        Value::Object(_) => {
            Err("associative list without keys has an element that's a map type".into())
        }
        Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
        Value::Null => {
            Err("associative list without keys has an element that's an explicit null".into())
        }
        scalar => Ok(PathElement::Value(scalar.clone())),
    }
}

fn leaf(type_: SchemaType) -> Schema {
    Schema {
        type_: Some(type_),
        ..Schema::default()
    }
}

fn date_time() -> Schema {
    Schema {
        format: Some("date-time".to_owned()),
        ..leaf(SchemaType::String)
    }
}

fn object<const N: usize>(properties: [(&str, Schema); N]) -> Schema {
    Schema {
        properties: properties
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        ..leaf(SchemaType::Object)
    }
}

fn string_map() -> Schema {
    Schema {
        additional_properties: Some(AdditionalProperties::Schema(Box::new(leaf(
            SchemaType::String,
        )))),
        ..leaf(SchemaType::Object)
    }
}

fn array(items: Schema, list_type: ListType) -> Schema {
    Schema {
        items: Some(Box::new(items)),
        x_list_type: Some(list_type),
        ..leaf(SchemaType::Array)
    }
}

/// `ObjectMeta` as kube's OpenAPI types it for field management.
static OBJECT_META: LazyLock<Schema> = LazyLock::new(|| {
    use SchemaType::{Boolean, Integer, String as Str};
    let owner_reference = Schema {
        x_map_type: Some(MapType::Atomic),
        ..object([
            ("apiVersion", leaf(Str)),
            ("blockOwnerDeletion", leaf(Boolean)),
            ("controller", leaf(Boolean)),
            ("kind", leaf(Str)),
            ("name", leaf(Str)),
            ("uid", leaf(Str)),
        ])
    };
    let managed_fields_entry = object([
        ("apiVersion", leaf(Str)),
        ("fieldsType", leaf(Str)),
        ("fieldsV1", leaf(SchemaType::Object)),
        ("manager", leaf(Str)),
        ("operation", leaf(Str)),
        ("subresource", leaf(Str)),
        ("time", date_time()),
    ]);
    let finalizers = Schema {
        x_patch_strategy: Some("merge".to_owned()),
        ..array(leaf(Str), ListType::Set)
    };
    let owner_references = Schema {
        x_list_map_keys: vec!["uid".to_owned()],
        x_patch_merge_key: Some("uid".to_owned()),
        x_patch_strategy: Some("merge".to_owned()),
        ..array(owner_reference, ListType::Map)
    };
    object([
        ("annotations", string_map()),
        ("creationTimestamp", date_time()),
        ("deletionGracePeriodSeconds", leaf(Integer)),
        ("deletionTimestamp", date_time()),
        ("finalizers", finalizers),
        ("generateName", leaf(Str)),
        ("generation", leaf(Integer)),
        ("labels", string_map()),
        (
            "managedFields",
            array(managed_fields_entry, ListType::Atomic),
        ),
        ("name", leaf(Str)),
        ("namespace", leaf(Str)),
        ("ownerReferences", owner_references),
        ("resourceVersion", leaf(Str)),
        ("selfLink", leaf(Str)),
        ("uid", leaf(Str)),
    ])
});

/// `apiVersion`, `kind` and `metadata`, as kube sets them on a resource's root and on
/// every embedded resource.
static TYPE_META: LazyLock<Schema> = LazyLock::new(|| {
    object([
        ("apiVersion", leaf(SchemaType::String)),
        ("kind", leaf(SchemaType::String)),
        ("metadata", OBJECT_META.clone()),
    ])
});

/// `ObjectMeta` as kube types it for field management: `labels` and `annotations`
/// granular string maps, `finalizers` a set, `ownerReferences` a list keyed by `uid`
/// of atomic items, `managedFields` atomic, the rest scalars.
pub fn object_meta_schema() -> &'static Schema {
    &OBJECT_META
}

fn type_meta() -> &'static Schema {
    &TYPE_META
}
