//! The field set of an object (SMD's `ToFieldSet`), checking the object on the way
//! (SMD's validating walker, which kube runs first).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::types::{Atom, ListAtom, ListKind, MapAtom, Scalar, Ty, resolve};
use super::{Duplicates, Error};
use crate::managedfields::path::{Path, PathElement};
use crate::managedfields::set::FieldSet;
use crate::managedfields::value::go_type_name;

/// How strictly to walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Check the object as SMD's validation does; an error ends the walk.
    Strict(Duplicates),
    /// SMD's `ToFieldSet` on an object already checked: nothing is an error, what
    /// cannot be typed is skipped (an undeclared key is a member; a list item without
    /// a key is left out, where SMD would insert an empty path element).
    Lenient,
}

pub(crate) fn field_set(value: &Value, ty: Ty<'_>, mode: Mode) -> Result<FieldSet, Error> {
    let mut w = Walker::new(mode, false);
    w.walk(value, ty)?;
    Ok(w.set)
}

/// Checks `value` as [`Mode::Strict`] does without building its set or its paths (every
/// write checks its objects, and most are fine); a failure is walked again with paths
/// for the error to say where.
pub(crate) fn check(value: &Value, ty: Ty<'_>, duplicates: Duplicates) -> Result<(), Error> {
    let mode = Mode::Strict(duplicates);
    if Walker::new(mode, true).walk(value, ty).is_ok() {
        return Ok(());
    }
    field_set(value, ty, mode).map(drop)
}

struct Walker {
    path: Vec<PathElement>,
    set: FieldSet,
    mode: Mode,
    /// How many atomic lists or maps the walk is inside: their insides are checked
    /// but not recorded.
    in_atomic: usize,
    /// Only checking: nothing is recorded and no path kept.
    quiet: bool,
}

impl Walker {
    fn new(mode: Mode, quiet: bool) -> Self {
        Walker {
            path: Vec::new(),
            set: FieldSet::new(),
            mode,
            in_atomic: 0,
            quiet,
        }
    }

    /// Steps into `element` (made only when the path is kept).
    fn enter(&mut self, element: impl FnOnce() -> PathElement) {
        if !self.quiet {
            self.path.push(element());
        }
    }

    fn leave(&mut self) {
        if !self.quiet {
            self.path.pop();
        }
    }

    fn strict(&self) -> bool {
        matches!(self.mode, Mode::Strict(_))
    }

    fn record(&mut self) {
        if self.in_atomic == 0 && !self.quiet {
            self.set.insert(&self.path);
        }
    }

    fn record_if(&mut self, cond: bool) {
        if cond {
            self.record();
        }
    }

    fn here(&self) -> Path {
        Path(self.path.clone())
    }

    fn wrong_type(&self, expected: &'static str, found: &Value) -> Result<(), Error> {
        if !self.strict() {
            return Ok(());
        }
        Err(Error::WrongType {
            path: self.here(),
            expected,
            found: go_type_name(found),
        })
    }

    fn walk(&mut self, v: &Value, ty: Ty<'_>) -> Result<(), Error> {
        match resolve(ty).atom_for(Some(v)) {
            Some(Atom::Scalar(s)) => {
                if let Err(expected) = check_scalar(s, v) {
                    self.wrong_type(expected, v)?;
                }
                self.record();
                Ok(())
            }
            Some(Atom::List(l)) => self.list(l, v),
            Some(Atom::Map(m)) => self.map(m, v),
            None => Ok(()),
        }
    }

    /// Walks `v` below an atomic node: checked, not recorded.
    fn walk_unrecorded(&mut self, v: &Value, ty: Ty<'_>) -> Result<(), Error> {
        self.in_atomic += 1;
        let result = self.walk(v, ty);
        self.in_atomic -= 1;
        result
    }

    fn list(&mut self, l: ListAtom<'_>, v: &Value) -> Result<(), Error> {
        let atomic = matches!(l.kind, ListKind::Atomic);
        let items = match v {
            Value::Array(items) => items,
            // SMD records an atomic list whatever its value.
            Value::Null => {
                self.record_if(atomic);
                return Ok(());
            }
            other => {
                self.wrong_type("list", other)?;
                self.record_if(atomic);
                return Ok(());
            }
        };
        if !atomic {
            return self.associative_items(l, items);
        }
        self.record();
        if self.strict() {
            for (i, item) in items.iter().enumerate() {
                self.enter(|| PathElement::Index(i));
                let result = self.walk_unrecorded(item, l.elem);
                self.leave();
                result?;
            }
        }
        Ok(())
    }

    /// Items of a set or keyed list: each is a member with its fields; a key seen
    /// twice is a member once and its items are not walked (SMD's duplicates rule).
    fn associative_items(&mut self, l: ListAtom<'_>, items: &[Value]) -> Result<(), Error> {
        let mut elements = Vec::with_capacity(items.len());
        let mut seen = BTreeSet::new();
        let mut duplicated = BTreeSet::new();
        for (index, item) in items.iter().enumerate() {
            let pe = match l.item_element(item) {
                Ok(pe) => pe,
                Err(reason) if self.strict() => {
                    return Err(Error::ListItem {
                        path: self.here(),
                        index,
                        reason,
                    });
                }
                Err(_) => {
                    elements.push(None);
                    continue;
                }
            };
            if !seen.insert(pe.clone()) {
                if self.mode == Mode::Strict(Duplicates::Reject) {
                    return Err(Error::DuplicateKey {
                        path: self.here(),
                        key: pe,
                    });
                }
                if duplicated.insert(pe.clone()) {
                    self.enter(|| pe.clone());
                    self.record();
                    self.leave();
                }
            }
            elements.push(Some(pe));
        }
        for (item, pe) in items.iter().zip(elements) {
            let Some(pe) = pe else { continue };
            let repeated = duplicated.contains(&pe);
            if repeated && !self.strict() {
                continue;
            }
            self.enter(|| pe);
            let result = if repeated {
                self.walk_unrecorded(item, l.elem)
            } else {
                self.walk(item, l.elem).map(|()| self.record())
            };
            self.leave();
            result?;
        }
        Ok(())
    }

    fn map(&mut self, m: MapAtom<'_>, v: &Value) -> Result<(), Error> {
        let entries = match v {
            Value::Object(entries) => entries,
            Value::Null => {
                self.record_if(m.atomic);
                return Ok(());
            }
            other => {
                self.wrong_type("map", other)?;
                self.record_if(m.atomic);
                return Ok(());
            }
        };
        if m.atomic {
            self.record();
            if self.strict() {
                self.in_atomic += 1;
                let result = self.entries(m, entries);
                self.in_atomic -= 1;
                result?;
            }
            return Ok(());
        }
        self.entries(m, entries)
    }

    fn entries(&mut self, m: MapAtom<'_>, entries: &Map<String, Value>) -> Result<(), Error> {
        for (key, val) in entries {
            self.enter(|| PathElement::Field(key.clone()));
            let result = self.entry(m, key, val);
            self.leave();
            result?;
        }
        Ok(())
    }

    /// One map entry, its path pushed.
    fn entry(&mut self, m: MapAtom<'_>, key: &str, val: &Value) -> Result<(), Error> {
        let Some(ty) = m.child(key) else {
            if self.strict() {
                return Err(Error::UndeclaredField { path: self.here() });
            }
            self.record();
            return Ok(());
        };
        self.walk(val, ty)?;
        let empty_map = val.as_object().is_some_and(Map::is_empty);
        if val.is_null() || empty_map || !m.declares(key) {
            self.record();
        }
        Ok(())
    }
}

/// SMD's `validateScalar`: the name of the expected kind when `v` is not of it (a
/// null is any scalar).
fn check_scalar(s: Scalar, v: &Value) -> Result<(), &'static str> {
    let ok = matches!(
        (s, v),
        (_, Value::Null)
            | (Scalar::Numeric, Value::Number(_))
            | (Scalar::String, Value::String(_))
            | (Scalar::Boolean, Value::Bool(_))
            | (
                Scalar::Untyped,
                Value::Number(_) | Value::String(_) | Value::Bool(_)
            )
    );
    if ok {
        return Ok(());
    }
    Err(match s {
        Scalar::Numeric => "numeric (int or float)",
        Scalar::String => "string",
        Scalar::Boolean => "boolean",
        Scalar::Untyped => "any scalar",
    })
}

/// SMD's `validateScalar`, for the walkers that compare or merge two sides.
pub(crate) fn scalar_ok(s: Scalar, v: Option<&Value>) -> bool {
    v.is_none_or(|v| check_scalar(s, v).is_ok())
}

/// The error for a scalar that is wrong on both sides of a comparison or merge.
pub(crate) fn scalar_error(s: Scalar, path: &[PathElement], v: &Value) -> Error {
    let expected = check_scalar(s, v).err().unwrap_or("any scalar");
    Error::WrongType {
        path: Path(path.to_vec()),
        expected,
        found: go_type_name(v),
    }
}
