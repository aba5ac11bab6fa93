//! Walks of a field set along the schema, without an object: SMD's
//! `EnsureNamedFieldsAreMembers` and `ReconcileFieldSetWithSchema`.

use super::types::{Atom, ListKind, Ty, resolve};
use crate::managedfields::path::PathElement;
use crate::managedfields::set::FieldSet;

/// `set` with each declared struct field that has members below it made a member.
/// `ty` is `None` below an element the schema cannot type (SMD's empty type
/// reference), where nothing is added.
pub(crate) fn ensure_named_fields_are_members(set: &FieldSet, ty: Option<Ty<'_>>) -> FieldSet {
    let resolved = ty.map(resolve);
    let map = resolved.and_then(|r| r.map);
    let list = resolved.and_then(|r| r.list);
    let mut out = FieldSet {
        members: set.members.clone(),
        children: Default::default(),
    };
    for (pe, child) in &set.children {
        let child_ty = match (pe, map, list) {
            (PathElement::Field(name), Some(m), _) => {
                if m.declares(name) {
                    out.members.insert(pe.clone());
                }
                m.child(name)
            }
            (PathElement::Key(_), _, Some(l)) => Some(l.elem),
            _ => None,
        };
        let child = ensure_named_fields_are_members(child, child_ty);
        out.children.insert(pe.clone(), child);
    }
    out
}

/// `set` adjusted to the current schema, or `None` when nothing changes: a granular
/// list or map that became atomic is owned as a whole (its root kept, everything below
/// it dropped). Deduced maps are left alone, as in SMD.
pub(crate) fn reconcile(set: &FieldSet, ty: Ty<'_>) -> Option<FieldSet> {
    let mut w = Reconcile {
        path: Vec::new(),
        atomic_roots: FieldSet::new(),
        changed: false,
    };
    w.node(ty, Some(set), false);
    if !w.changed {
        return None;
    }
    let roots = &w.atomic_roots;
    Some(set.recursive_difference(roots).union(roots))
}

struct Reconcile {
    path: Vec<PathElement>,
    /// The lists and maps now atomic that the set had below: removed recursively, then
    /// added back as members.
    atomic_roots: FieldSet,
    changed: bool,
}

impl Reconcile {
    /// One node of the set; `is_atomic` when the set owns it as a leaf.
    fn node(&mut self, ty: Ty<'_>, set: Option<&FieldSet>, is_atomic: bool) {
        // No value to deduce from: a union type is walked as its map (SMD's
        // `handleAtom` order).
        match resolve(ty).atom(None) {
            Some(Atom::List(l)) => {
                if !is_atomic && matches!(l.kind, ListKind::Atomic) {
                    self.make_atomic();
                    return;
                }
                if let Some(set) = set {
                    self.elements(set, |_| Some(l.elem));
                }
            }
            Some(Atom::Map(m)) => {
                if m.is_untyped_deduced() {
                    return;
                }
                if !is_atomic && m.atomic {
                    if set.is_some_and(|s| !s.is_empty()) {
                        self.make_atomic();
                    }
                    return;
                }
                if let Some(set) = set {
                    self.elements(set, |pe| match pe {
                        PathElement::Field(name) => m.child(name),
                        _ => m.elem,
                    });
                }
            }
            Some(Atom::Scalar(_)) | None => {}
        }
    }

    fn make_atomic(&mut self) {
        self.atomic_roots.insert(&self.path);
        self.changed = true;
    }

    /// The set's elements below this node: those with children only first, then the
    /// members; elements the schema cannot type are skipped.
    fn elements<'s>(&mut self, set: &FieldSet, child_ty: impl Fn(&PathElement) -> Option<Ty<'s>>) {
        let parents = set.children.keys().filter(|pe| !set.members.contains(*pe));
        let visits: Vec<(&PathElement, bool)> = parents
            .map(|pe| (pe, false))
            .chain(set.members.iter().map(|pe| (pe, true)))
            .collect();
        for (pe, is_member) in visits {
            let Some(ty) = child_ty(pe) else { continue };
            let below = set.children.get(pe);
            self.path.push(pe.clone());
            self.node(ty, below, is_member && below.is_none());
            self.path.pop();
        }
    }
}
