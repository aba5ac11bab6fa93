//! SMD's `Compare`: the fields added, modified and removed from one object to another.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::to_set::{scalar_error, scalar_ok};
use super::types::{Atom, ListAtom, ListKind, MapAtom, Ty, resolve};
use super::{Comparison, Error};
use crate::managedfields::path::{Path, PathElement};
use crate::managedfields::value::equals;

pub(crate) fn compare(old: &Value, new: &Value, ty: Ty<'_>) -> Result<Comparison, Error> {
    let mut w = Walker {
        path: Vec::new(),
        out: Comparison::default(),
    };
    w.node(ty, Some(old), Some(new))?;
    Ok(w.out)
}

struct Walker {
    path: Vec<PathElement>,
    out: Comparison,
}

/// The two sides of one node; `None` is absent (not `null`).
#[derive(Clone, Copy)]
struct Sides<'v> {
    lhs: Option<&'v Value>,
    rhs: Option<&'v Value>,
}

impl Walker {
    fn node(&mut self, ty: Ty<'_>, lhs: Option<&Value>, rhs: Option<&Value>) -> Result<(), Error> {
        let r = resolve(ty);
        let (kl, kr) = (r.deduce(lhs), r.deduce(rhs));
        let sides = Sides { lhs, rhs };
        let mut in_leaf = false;
        if rhs.is_none() {
            self.handle(r.atom(kl), sides, &mut in_leaf)?;
        } else if lhs.is_none() || kl == kr {
            self.handle(r.atom(kr), sides, &mut in_leaf)?;
        } else {
            // The sides are of different kinds of a union type (a deduced scalar that
            // became a map, say): SMD walks the node once as each kind, the first
            // time with its own leaf flag.
            let mut lhs_leaf = false;
            self.handle(r.atom(kl), sides, &mut lhs_leaf)?;
            self.handle(r.atom(kr), sides, &mut in_leaf)?;
        }
        // A non-leaf node on one side only is added or removed itself.
        if !in_leaf {
            if lhs.is_none() {
                self.out.added.insert(&self.path);
            } else if rhs.is_none() {
                self.out.removed.insert(&self.path);
            }
        }
        Ok(())
    }

    fn handle(
        &mut self,
        atom: Option<Atom<'_>>,
        s: Sides<'_>,
        in_leaf: &mut bool,
    ) -> Result<(), Error> {
        match atom {
            Some(Atom::Scalar(t)) => {
                if !scalar_ok(t, s.lhs) && !scalar_ok(t, s.rhs) {
                    let v = s.lhs.unwrap_or(&Value::Null);
                    return Err(scalar_error(t, &self.path, v));
                }
                self.leaf(s, in_leaf);
                Ok(())
            }
            Some(Atom::List(l)) => {
                let lhs = s.lhs.and_then(Value::as_array);
                let rhs = s.rhs.and_then(Value::as_array);
                // Empty or null on both sides compares as a leaf, which keeps the
                // difference between `[]` and `null`.
                let empty = lhs.is_none_or(Vec::is_empty) && rhs.is_none_or(Vec::is_empty);
                if matches!(l.kind, ListKind::Atomic) || empty {
                    self.leaf(s, in_leaf);
                    return Ok(());
                }
                self.list_items(
                    l,
                    lhs.map_or(&[], Vec::as_slice),
                    rhs.map_or(&[], Vec::as_slice),
                )
            }
            Some(Atom::Map(m)) => {
                let lhs = s.lhs.and_then(Value::as_object);
                let rhs = s.rhs.and_then(Value::as_object);
                let empty = lhs.is_none_or(Map::is_empty) && rhs.is_none_or(Map::is_empty);
                if m.atomic || empty {
                    self.leaf(s, in_leaf);
                    return Ok(());
                }
                self.map_entries(m, lhs, rhs)
            }
            None => Ok(()),
        }
    }

    /// A leaf: added, removed or modified as a whole (once per node).
    fn leaf(&mut self, s: Sides<'_>, in_leaf: &mut bool) {
        if std::mem::replace(in_leaf, true) {
            return;
        }
        match (s.lhs, s.rhs) {
            (None, _) => self.out.added.insert(&self.path),
            (_, None) => self.out.removed.insert(&self.path),
            (Some(l), Some(r)) if !equals(l, r) => self.out.modified.insert(&self.path),
            _ => {}
        }
    }

    fn map_entries(
        &mut self,
        m: MapAtom<'_>,
        lhs: Option<&Map<String, Value>>,
        rhs: Option<&Map<String, Value>>,
    ) -> Result<(), Error> {
        let keys: BTreeSet<&String> = lhs.into_iter().chain(rhs).flat_map(Map::keys).collect();
        for key in keys {
            self.path.push(PathElement::Field(key.clone()));
            let result = match m.child(key) {
                Some(ty) => self.node(
                    ty,
                    lhs.and_then(|o| o.get(key)),
                    rhs.and_then(|o| o.get(key)),
                ),
                None => Err(Error::UndeclaredField {
                    path: Path(self.path.clone()),
                }),
            };
            self.path.pop();
            result?;
        }
        Ok(())
    }

    /// Items matched by key or value. A key repeated on a side makes that side's items
    /// for the key one atomic whole (SMD's duplicates rules).
    fn list_items(&mut self, l: ListAtom<'_>, lhs: &[Value], rhs: &[Value]) -> Result<(), Error> {
        let mut order: Vec<PathElement> = Vec::new();
        let mut by_key: BTreeMap<PathElement, (Vec<&Value>, Vec<&Value>)> = BTreeMap::new();
        for (side, items) in [(0, lhs), (1, rhs)] {
            for (index, item) in items.iter().enumerate() {
                let pe = l.item_element(item).map_err(|reason| Error::ListItem {
                    path: Path(self.path.clone()),
                    index,
                    reason,
                })?;
                let entry = by_key.entry(pe.clone()).or_insert_with(|| {
                    order.push(pe);
                    (Vec::new(), Vec::new())
                });
                if side == 0 {
                    &mut entry.0
                } else {
                    &mut entry.1
                }
                .push(item);
            }
        }
        for pe in order {
            let (ls, rs) = &by_key[&pe];
            self.path.push(pe);
            let result = self.list_item(l, ls, rs);
            self.path.pop();
            result?;
        }
        Ok(())
    }

    /// One key's items, its path pushed.
    fn list_item(&mut self, l: ListAtom<'_>, ls: &[&Value], rs: &[&Value]) -> Result<(), Error> {
        match (ls.len(), rs.len()) {
            (0..=1, 0..=1) => self.node(l.elem, ls.first().copied(), rs.first().copied()),
            (2.., 2..) => {
                let same = ls.len() == rs.len() && ls.iter().zip(rs).all(|(a, b)| equals(a, b));
                if !same {
                    self.out.modified.insert(&self.path);
                }
                Ok(())
            }
            // Duplicates that are gone: the key is removed as a whole, the new single
            // item is walked as added.
            (2.., _) => {
                if let Some(r) = rs.first() {
                    self.node(l.elem, None, Some(r))?;
                }
                self.out.removed.insert(&self.path);
                Ok(())
            }
            // New duplicates: the old single item is walked as removed.
            (_, _) => {
                if let Some(l0) = ls.first() {
                    self.node(l.elem, Some(l0), None)?;
                }
                self.out.added.insert(&self.path);
                Ok(())
            }
        }
    }
}
