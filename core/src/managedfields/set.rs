//! [`FieldSet`]: a set of paths, stored as SMD's `fieldpath.Set` stores it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::path::{Path, PathElement};

/// A set of field paths: the fields, list items and set values one manager owns, or
/// that differ between two objects.
///
/// It is SMD's trie: `members` are the paths of one element that belong to the set,
/// `children` the subsets below an element. A path's parent is not implied: the set
/// `{.spec.replicas}` does not contain `.spec`. The empty path (the whole object) is
/// never a member.
///
/// Invariant kept by every operation: no child subset is empty, so equal sets are
/// equal structurally.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    pub(crate) members: BTreeSet<PathElement>,
    pub(crate) children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The set of the given paths.
    pub fn from_paths<P: AsRef<[PathElement]>>(paths: impl IntoIterator<Item = P>) -> Self {
        let mut set = FieldSet::new();
        for p in paths {
            set.insert(p.as_ref());
        }
        set
    }

    /// Adds `path` (not its parents). The empty path is ignored: nobody owns the whole
    /// object.
    pub fn insert(&mut self, path: &[PathElement]) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut node = self;
        for pe in parents {
            node = node.children.entry(pe.clone()).or_default();
        }
        node.members.insert(last.clone());
    }

    /// True when `path` is a member (not merely the parent of one).
    pub fn has(&self, path: &[PathElement]) -> bool {
        let Some((last, parents)) = path.split_last() else {
            return false;
        };
        let mut node = self;
        for pe in parents {
            match node.children.get(pe) {
                Some(child) => node = child,
                None => return false,
            }
        }
        node.members.contains(last)
    }

    /// True when no path is a member.
    pub fn is_empty(&self) -> bool {
        // Children are never empty (the invariant), so members or children decide.
        self.members.is_empty() && self.children.is_empty()
    }

    /// The number of member paths.
    pub fn len(&self) -> usize {
        self.members.len() + self.children.values().map(FieldSet::len).sum::<usize>()
    }

    /// The members of this node: the one-element paths of the set.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The subsets below each element that has members under it.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    /// The paths under `pe`, without `pe` (SMD's `WithPrefix`); `None` when there are
    /// none.
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// The paths in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.union_in_place(other);
        out
    }

    fn union_in_place(&mut self, other: &FieldSet) {
        self.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            match self.children.get_mut(pe) {
                Some(mine) => mine.union_in_place(child),
                None => {
                    self.children.insert(pe.clone(), child.clone());
                }
            }
        }
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, child)| {
                let both = child.intersection(other.children.get(pe)?);
                (!both.is_empty()).then(|| (pe.clone(), both))
            })
            .collect();
        FieldSet { members, children }
    }

    /// The paths of `self` that are not in `other`, path by path: removing `.a` keeps
    /// `.a.b` (SMD: "parent - child = parent", "child - parent = child").
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, child)| match other.children.get(pe) {
                None => Some((pe.clone(), child.clone())),
                Some(theirs) => {
                    let rest = child.difference(theirs);
                    (!rest.is_empty()).then(|| (pe.clone(), rest))
                }
            })
            .collect();
        FieldSet { members, children }
    }

    /// Like [`FieldSet::difference`], but a member of `other` also removes everything
    /// below it: `{.a.b.c} − {.a.b}` is empty.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter(|(pe, _)| !other.members.contains(pe))
            .filter_map(|(pe, child)| match other.children.get(pe) {
                None => Some((pe.clone(), child.clone())),
                Some(theirs) => {
                    let rest = child.recursive_difference(theirs);
                    (!rest.is_empty()).then(|| (pe.clone(), rest))
                }
            })
            .collect();
        FieldSet { members, children }
    }

    /// The members that have no members below them (SMD's `Leaves`).
    pub fn leaves(&self) -> FieldSet {
        let members = self
            .members
            .iter()
            .filter(|pe| !self.children.contains_key(pe))
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .map(|(pe, child)| (pe.clone(), child.leaves()))
            .collect();
        FieldSet { members, children }
    }

    /// Calls `f` with every member path in SMD's iteration order: a node's members
    /// first, then each child's paths in element order (preorder).
    pub fn for_each_path(&self, mut f: impl FnMut(&[PathElement])) {
        let mut prefix = Vec::new();
        self.walk_paths(&mut prefix, &mut f);
    }

    fn walk_paths(&self, prefix: &mut Vec<PathElement>, f: &mut impl FnMut(&[PathElement])) {
        for pe in &self.members {
            prefix.push(pe.clone());
            f(prefix);
            prefix.pop();
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.walk_paths(prefix, f);
            prefix.pop();
        }
    }

    /// The member paths, in [`FieldSet::for_each_path`] order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.for_each_path(|p| out.push(Path::from(p)));
        out
    }
}

impl fmt::Display for FieldSet {
    /// SMD's `Set.String()`: one path a line, in iteration order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut result = Ok(());
        let mut first = true;
        self.for_each_path(|p| {
            if result.is_err() {
                return;
            }
            let sep = if first { "" } else { "\n" };
            first = false;
            result = write!(f, "{sep}{}", Path::from(p));
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A path of fields from `.a.b`.
    fn p(s: &str) -> Vec<PathElement> {
        s.split('.')
            .filter(|f| !f.is_empty())
            .map(PathElement::field)
            .collect()
    }

    fn set(paths: &[&str]) -> FieldSet {
        FieldSet::from_paths(paths.iter().map(|s| p(s)))
    }

    #[test]
    fn inserts_and_finds_members_only() {
        let s = set(&[".a.b", ".c"]);
        assert!(s.has(&p(".a.b")));
        assert!(!s.has(&p(".a")));
        assert!(s.has(&p(".c")));
        assert!(!s.has(&[]));
        assert_eq!(s.len(), 2);
        let mut empty = FieldSet::new();
        empty.insert(&[]);
        assert!(empty.is_empty());
    }

    #[test]
    fn set_algebra_follows_smd() {
        // Table: (a, b, union, intersection, difference, recursive difference).
        type Paths = &'static [&'static str];
        let cases: &[(Paths, Paths, Paths, Paths, Paths, Paths)] = &[
            (
                &[".a", ".b"],
                &[".b", ".c"],
                &[".a", ".b", ".c"],
                &[".b"],
                &[".a"],
                &[".a"],
            ),
            // parent − child = parent; child − parent = child (non-recursive).
            (&[".a"], &[".a.b"], &[".a", ".a.b"], &[], &[".a"], &[".a"]),
            (&[".a.b"], &[".a"], &[".a", ".a.b"], &[], &[".a.b"], &[]),
            (
                &[".a.b.c", ".a.d"],
                &[".a.b"],
                &[".a.b", ".a.b.c", ".a.d"],
                &[],
                &[".a.b.c", ".a.d"],
                &[".a.d"],
            ),
            (
                &[".x.y", ".x.z"],
                &[".x.y"],
                &[".x.y", ".x.z"],
                &[".x.y"],
                &[".x.z"],
                &[".x.z"],
            ),
        ];
        for (a, b, union, inter, diff, rdiff) in cases {
            let (sa, sb) = (set(a), set(b));
            assert_eq!(sa.union(&sb), set(union), "{a:?} ∪ {b:?}");
            assert_eq!(sa.intersection(&sb), set(inter), "{a:?} ∩ {b:?}");
            assert_eq!(sa.difference(&sb), set(diff), "{a:?} − {b:?}");
            assert_eq!(sa.recursive_difference(&sb), set(rdiff), "{a:?} −r {b:?}");
        }
    }

    #[test]
    fn iterates_members_before_children() {
        let mut s = set(&[".b.c", ".b", ".a", ".c"]);
        s.insert(&[
            PathElement::field("l"),
            PathElement::key([("n", json!(10))]),
        ]);
        s.insert(&[PathElement::field("l"), PathElement::key([("n", json!(9))])]);
        assert_eq!(s.to_string(), ".a\n.b\n.c\n.b.c\n.l[n=9]\n.l[n=10]");
        assert_eq!(s.leaves(), {
            let mut l = set(&[".a", ".c", ".b.c"]);
            l.insert(&[
                PathElement::field("l"),
                PathElement::key([("n", json!(10))]),
            ]);
            l.insert(&[PathElement::field("l"), PathElement::key([("n", json!(9))])]);
            l
        });
        assert_eq!(s.paths().len(), s.len());
    }
}
