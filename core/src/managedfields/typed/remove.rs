//! SMD's `RemoveItems` and `ExtractItems`: one walk that drops, or keeps only, the
//! fields, list items and set values of a set.

use serde_json::{Map, Value};

use super::types::{Atom, ListAtom, ListKind, MapAtom, Ty, resolve};
use crate::managedfields::path::PathElement;
use crate::managedfields::set::FieldSet;

/// `value` without (or, when `extract`, with only) the paths of `set`. Like SMD, a
/// list or map left with nothing is `null`, and a value of the wrong kind for its type
/// is `null`.
pub(crate) fn remove(value: &Value, set: &FieldSet, ty: Ty<'_>, extract: bool) -> Value {
    match resolve(ty).atom_for(Some(value)) {
        Some(Atom::Scalar(_)) => value.clone(),
        Some(Atom::List(l)) => list(l, value, set, extract),
        Some(Atom::Map(m)) => map(m, value, set, extract),
        None => Value::Null,
    }
}

/// An empty or atomic list or map: all of it when extracting, nothing when removing.
fn whole(value: &Value, extract: bool) -> Value {
    if extract { value.clone() } else { Value::Null }
}

fn list(l: ListAtom<'_>, value: &Value, set: &FieldSet, extract: bool) -> Value {
    let Some(items) = value.as_array() else {
        return Value::Null;
    };
    if items.is_empty() || matches!(l.kind, ListKind::Atomic) {
        return whole(value, extract);
    }
    let mut out = Vec::new();
    for item in items {
        // An item without a key is kept by a removal, dropped by an extraction (SMD
        // gives it an empty path element that no set holds).
        let Ok(pe) = l.item_element(item) else {
            if !extract {
                out.push(item.clone());
            }
            continue;
        };
        let exact = set.members.contains(&pe);
        let below = set.with_prefix(&pe);
        if extract {
            match below {
                Some(sub) => out.push(remove(item, sub, l.elem, true)),
                None if exact => out.push(item.clone()),
                None => {}
            }
        } else if !exact {
            out.push(match below {
                Some(sub) => remove(item, sub, l.elem, false),
                None => item.clone(),
            });
        }
    }
    if out.is_empty() {
        Value::Null
    } else {
        Value::Array(out)
    }
}

fn map(m: MapAtom<'_>, value: &Value, set: &FieldSet, extract: bool) -> Value {
    let Some(entries) = value.as_object() else {
        return Value::Null;
    };
    if entries.is_empty() || m.atomic {
        return whole(value, extract);
    }
    let mut out = Map::new();
    for (key, val) in entries {
        let pe = PathElement::Field(key.clone());
        // A key without a type cannot be walked: SMD's walk fails and yields null.
        let walk = |v: &Value, s: &FieldSet| match m.child(key) {
            Some(ty) => remove(v, s, ty, extract),
            None => Value::Null,
        };
        if set.members.contains(&pe) {
            if extract {
                // SMD passes the whole set down here, not the subset below the key.
                out.insert(key.clone(), walk(val, set));
            }
            continue;
        }
        match set.with_prefix(&pe) {
            Some(sub) => {
                out.insert(key.clone(), walk(val, sub));
            }
            None if extract => {}
            None => {
                out.insert(key.clone(), val.clone());
            }
        }
    }
    if out.is_empty() {
        Value::Null
    } else {
        Value::Object(out)
    }
}
