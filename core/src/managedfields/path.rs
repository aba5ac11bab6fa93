//! Path elements and paths: how a field, a list item or a set value of an object is
//! named (SMD's `fieldpath.PathElement` and `fieldpath.Path`).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use super::value;

/// One step from a value to a child of it.
///
/// Elements are totally ordered as SMD orders them (`PathElement.Compare`): every
/// field before every key, key before value, value before index; fields by name
/// (bytewise), keys by their fields (name, then value), values and keys by SMD's value
/// order (numbers numerically, then strings, booleans, lists, maps, null), indexes
/// numerically. This is the order of [`FieldSet`](super::FieldSet) iteration and of
/// the keys of an encoded `fieldsV1`. Equality is the same relation (`1` equals
/// `1.0`), so the element does not implement `Hash`.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A field of a struct or a key of a map (`f:<name>`); shown as `.name`.
    Field(String),
    /// An item of an associative list, by its key fields sorted by name
    /// (`k:{"name":"nginx"}`); shown as `[name="nginx"]`. Build it with
    /// [`PathElement::key`] to get the fields sorted.
    Key(Vec<(String, Value)>),
    /// An item of a set, by its value (`v:"a"`); shown as `[="a"]`.
    Value(Value),
    /// An item of an atomic list, by position (`i:3`); shown as `[3]`.
    Index(usize),
}

impl PathElement {
    /// A field element.
    pub fn field(name: impl Into<String>) -> Self {
        PathElement::Field(name.into())
    }

    /// A key element, its fields sorted by name (stably, as SMD sorts them).
    pub fn key<K: Into<String>>(fields: impl IntoIterator<Item = (K, Value)>) -> Self {
        let mut fields: Vec<(String, Value)> =
            fields.into_iter().map(|(k, v)| (k.into(), v)).collect();
        fields.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        PathElement::Key(fields)
    }

    /// The kind's rank in SMD's order.
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }
}

/// `value.FieldList.Compare`: field by field, name then value; a prefix sorts first.
fn compare_keys(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for ((an, av), (bn, bv)) in a.iter().zip(b) {
        let c = an
            .as_bytes()
            .cmp(bn.as_bytes())
            .then_with(|| value::compare(av, bv));
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.as_bytes().cmp(b.as_bytes()),
            (PathElement::Key(a), PathElement::Key(b)) => compare_keys(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => value::compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    /// SMD's `PathElement.String()`: `.name`, `[k=v,k2=v2]`, `[=v]`, `[i]`, with
    /// values as Go prints them (strings quoted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                f.write_str("[")?;
                for (i, (name, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{name}={}", value::to_go_string(v))?;
                }
                f.write_str("]")
            }
            PathElement::Value(v) => write!(f, "[={}]", value::to_go_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A sequence of path elements from the root of an object; the empty path is the
/// object itself (which no manager owns).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// The empty path.
    pub fn new() -> Self {
        Path(Vec::new())
    }

    /// The elements.
    pub fn elements(&self) -> &[PathElement] {
        &self.0
    }

    /// True for the empty path.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Vec<PathElement>> for Path {
    fn from(elements: Vec<PathElement>) -> Self {
        Path(elements)
    }
}

impl From<&[PathElement]> for Path {
    fn from(elements: &[PathElement]) -> Self {
        Path(elements.to_vec())
    }
}

impl AsRef<[PathElement]> for Path {
    fn as_ref(&self) -> &[PathElement] {
        &self.0
    }
}

impl fmt::Display for Path {
    /// SMD's `Path.String()`, the form of kube's conflict messages: the elements run
    /// together, e.g. `.spec.containers[name="nginx"].image`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|pe| write!(f, "{pe}"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn path(elements: Vec<PathElement>) -> String {
        Path(elements).to_string()
    }

    #[test]
    fn displays_as_smd() {
        let f = PathElement::field;
        assert_eq!(path(vec![f("data"), f("k")]), ".data.k");
        assert_eq!(
            path(vec![
                f("spec"),
                f("containers"),
                PathElement::key([("name", json!("nginx"))]),
                f("image"),
            ]),
            r#".spec.containers[name="nginx"].image"#
        );
        assert_eq!(
            path(vec![
                f("spec"),
                f("finalizers"),
                PathElement::Value(json!("a"))
            ]),
            r#".spec.finalizers[="a"]"#
        );
        assert_eq!(
            path(vec![
                f("spec"),
                f("ports"),
                PathElement::key([("protocol", json!("TCP")), ("containerPort", json!(80))]),
            ]),
            r#".spec.ports[containerPort=80,protocol="TCP"]"#
        );
        assert_eq!(path(vec![PathElement::Index(3)]), "[3]");
        assert_eq!(path(vec![PathElement::Value(json!(1.5))]), "[=1.5]");
        assert_eq!(path(vec![]), "");
    }

    #[test]
    fn orders_as_smd() {
        let ordered = [
            PathElement::field(""),
            PathElement::field("a"),
            PathElement::field("b"),
            PathElement::key([("a", json!(2))]),
            PathElement::key([("a", json!(10))]),
            PathElement::key([("a", json!(10)), ("b", json!(1))]),
            PathElement::key([("b", json!(0))]),
            PathElement::Value(json!(9)),
            PathElement::Value(json!(10)),
            PathElement::Value(json!("a")),
            PathElement::Index(2),
            PathElement::Index(10),
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(a.cmp(b), i.cmp(&j), "{a} vs {b}");
            }
        }
        assert_eq!(PathElement::Value(json!(1)), PathElement::Value(json!(1.0)));
    }
}
