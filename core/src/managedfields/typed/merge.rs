//! SMD's `Merge` with its keep-the-right-side rule: an applied configuration merged
//! into the live object.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::Error;
use super::to_set::{scalar_error, scalar_ok};
use super::types::{Atom, ListAtom, ListKind, MapAtom, Ty, resolve};
use crate::managedfields::path::{Path, PathElement};

/// Stands for an item whose key the live list repeats: SMD merges the configuration's
/// item with an explicit null rather than with one of the repeated items.
static NULL: Value = Value::Null;

pub(crate) fn merge(live: &Value, config: &Value, ty: Ty<'_>) -> Result<Value, Error> {
    let mut w = Walker { path: Vec::new() };
    Ok(w.node(ty, Some(live), Some(config))?.unwrap_or(Value::Null))
}

struct Walker {
    path: Vec<PathElement>,
}

/// A list's items indexed by path element; `None` marks a repeated key.
type Observed<'v> = BTreeMap<PathElement, Option<&'v Value>>;

impl Walker {
    fn here(&self) -> Path {
        Path(self.path.clone())
    }

    /// The merged node, `None` when neither side has anything to keep.
    fn node(
        &mut self,
        ty: Ty<'_>,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
    ) -> Result<Option<Value>, Error> {
        let r = resolve(ty);
        // When the sides are different kinds of a union type SMD also walks the live
        // side as its own kind, but throws that result away; only the configuration's
        // kind makes the output.
        let kind = if rhs.is_none() {
            r.deduce(lhs)
        } else {
            r.deduce(rhs)
        };
        match r.atom(kind) {
            Some(Atom::Scalar(t)) => {
                if !scalar_ok(t, lhs) && !scalar_ok(t, rhs) {
                    return Err(scalar_error(t, &self.path, lhs.unwrap_or(&NULL)));
                }
                Ok(leaf(lhs, rhs))
            }
            Some(Atom::List(l)) => {
                let (ll, rl) = (lhs.and_then(Value::as_array), rhs.and_then(Value::as_array));
                // Empty or null on both sides is a leaf, keeping `[]` apart from `null`.
                let empty = ll.is_none_or(Vec::is_empty) && rl.is_none_or(Vec::is_empty);
                if matches!(l.kind, ListKind::Atomic) || empty {
                    return Ok(leaf(lhs, rhs));
                }
                self.list(
                    l,
                    ll.map_or(&[], Vec::as_slice),
                    rl.map_or(&[], Vec::as_slice),
                )
            }
            Some(Atom::Map(m)) => {
                let (lm, rm) = (
                    lhs.and_then(Value::as_object),
                    rhs.and_then(Value::as_object),
                );
                let empty = lm.is_none_or(Map::is_empty) && rm.is_none_or(Map::is_empty);
                if m.atomic || empty {
                    return Ok(leaf(lhs, rhs));
                }
                self.map(m, lm, rm)
            }
            None => Ok(None),
        }
    }

    fn map(
        &mut self,
        m: MapAtom<'_>,
        lhs: Option<&Map<String, Value>>,
        rhs: Option<&Map<String, Value>>,
    ) -> Result<Option<Value>, Error> {
        let keys: BTreeSet<&String> = lhs.into_iter().chain(rhs).flat_map(Map::keys).collect();
        let mut out = Map::new();
        for key in keys {
            self.path.push(PathElement::Field(key.clone()));
            let merged = match m.child(key) {
                Some(ty) => self.node(
                    ty,
                    lhs.and_then(|o| o.get(key)),
                    rhs.and_then(|o| o.get(key)),
                ),
                None => Err(Error::UndeclaredField { path: self.here() }),
            };
            self.path.pop();
            if let Some(v) = merged? {
                out.insert(key.clone(), v);
            }
        }
        Ok((!out.is_empty()).then_some(Value::Object(out)))
    }

    /// The path elements of a list's items in order, and the items by element.
    fn index<'v>(
        &self,
        l: ListAtom<'_>,
        items: &'v [Value],
        duplicates: bool,
    ) -> Result<(Vec<PathElement>, Observed<'v>), Error> {
        let mut order = Vec::with_capacity(items.len());
        let mut observed = Observed::new();
        for (index, item) in items.iter().enumerate() {
            let pe = l.item_element(item).map_err(|reason| Error::ListItem {
                path: self.here(),
                index,
                reason,
            })?;
            if observed.contains_key(&pe) {
                if !duplicates {
                    return Err(Error::DuplicateKey {
                        path: self.here(),
                        key: pe,
                    });
                }
                observed.insert(pe.clone(), None);
            } else {
                observed.insert(pe.clone(), Some(item));
            }
            order.push(pe);
        }
        Ok((order, observed))
    }

    /// SMD's associative list merge. Live items the configuration lacks keep their
    /// place; the configuration's items come in its order, each merged with the live
    /// item of its key; a shared item the live list has earlier than the configuration
    /// wants is skipped until the configuration reaches it.
    fn list(
        &mut self,
        l: ListAtom<'_>,
        lhs: &[Value],
        rhs: &[Value],
    ) -> Result<Option<Value>, Error> {
        let (rhs_pes, observed_rhs) = self.index(l, rhs, false)?;
        let (lhs_pes, observed_lhs) = self.index(l, lhs, true)?;
        let mut shared = rhs_pes.iter().filter(|pe| observed_lhs.contains_key(*pe));
        let mut next_shared = shared.next();
        let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
        let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
        let live_item = |pe: &PathElement| observed_lhs.get(pe).map(|v| v.unwrap_or(&NULL));
        let (mut li, mut ri) = (0, 0);
        while li < lhs_pes.len() || ri < rhs_pes.len() {
            if li < lhs_pes.len() && ri < rhs_pes.len() {
                let pe = &lhs_pes[li];
                if *pe == rhs_pes[ri] {
                    merged_rhs.insert(pe);
                    let config = observed_rhs.get(pe).copied().flatten();
                    self.item(l, pe, live_item(pe), config, &mut out)?;
                    li += 1;
                    ri += 1;
                    next_shared = shared.next();
                    continue;
                }
                if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                    // Shared, but not the one wanted next.
                    li += 1;
                    continue;
                }
            }
            if li < lhs_pes.len() {
                let pe = &lhs_pes[li];
                if !observed_rhs.contains_key(pe) {
                    // Taken by position: a repeated key keeps each of its items.
                    self.item(l, pe, Some(&lhs[li]), None, &mut out)?;
                    li += 1;
                    continue;
                } else if merged_rhs.contains(pe) {
                    li += 1;
                }
            }
            if ri < rhs_pes.len() {
                let pe = &rhs_pes[ri];
                merged_rhs.insert(pe);
                let config = observed_rhs.get(pe).copied().flatten();
                self.item(l, pe, live_item(pe), config, &mut out)?;
                ri += 1;
                if next_shared == Some(pe) {
                    next_shared = shared.next();
                }
            }
        }
        Ok((!out.is_empty()).then_some(Value::Array(out)))
    }

    fn item(
        &mut self,
        l: ListAtom<'_>,
        pe: &PathElement,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        out: &mut Vec<Value>,
    ) -> Result<(), Error> {
        self.path.push(pe.clone());
        let merged = self.node(l.elem, lhs, rhs);
        self.path.pop();
        out.extend(merged?);
        Ok(())
    }
}

/// The keep-the-right-side rule: the configuration's value, else the live one.
fn leaf(lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    rhs.or(lhs).cloned()
}
