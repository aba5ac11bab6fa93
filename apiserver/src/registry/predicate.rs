//! Which objects a list or watch returns: the label and field selectors, checked
//! against an object or against its [`Attributes`], what selectors can look at, taken
//! from an object once and shared by every watcher of the same event (kube's cacher
//! keeps an event's labels and fields beside its object the same way).

use std::collections::BTreeMap;

use kapi_core::ResourceInfo;
use kapi_core::selector::{FieldSelector, LabelSelector};
use serde_json::Value;

use super::object::{field_value, labels};
use crate::status::ApiError;

/// Decides which objects a list or watch returns: its label and field selectors, with
/// the field selector checked against the fields the resource makes selectable.
#[derive(Clone, Debug)]
pub struct Predicate {
    label: LabelSelector,
    field: FieldSelector,
}

impl Predicate {
    /// A predicate for `info`; 400 when the field selector names a field that is not
    /// selectable (`metadata.name`, `metadata.namespace` and the resource's
    /// `selectableFields`).
    pub fn new(
        info: &ResourceInfo,
        label: LabelSelector,
        field: FieldSelector,
    ) -> Result<Self, ApiError> {
        for r in field.requirements() {
            let f = r.field.as_str();
            if !selectable(info).any(|s| s == f) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {f}"
                )));
            }
        }
        Ok(Self { label, field })
    }

    /// True when neither selector restricts anything.
    pub fn is_everything(&self) -> bool {
        self.label.is_empty() && self.field.is_empty()
    }

    /// Whether `obj` passes both selectors.
    pub fn matches(&self, obj: &Value) -> bool {
        (self.label.is_empty() || self.label.matches(&labels(obj)))
            && (self.field.is_empty() || self.field.matches(|f| field_value(obj, f)))
    }

    /// [`Predicate::matches`] on what was taken from the object.
    pub fn matches_attributes(&self, attributes: &Attributes) -> bool {
        (self.label.is_empty() || self.label.matches(&attributes.labels))
            && (self.field.is_empty()
                || self
                    .field
                    .matches(|f| attributes.field(f).map(str::to_string)))
    }
}

/// The field names a field selector may use for `info`'s objects.
fn selectable(info: &ResourceInfo) -> impl Iterator<Item = &str> {
    let namespace = info.namespaced().then_some("metadata.namespace");
    ["metadata.name"].into_iter().chain(namespace).chain(
        info.selectable_fields
            .iter()
            .map(|s| s.trim_start_matches('.')),
    )
}

/// What selectors look at in one object: its labels and the values of the fields its
/// resource makes selectable (absent when the object has none, or not a scalar).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attributes {
    labels: BTreeMap<String, String>,
    fields: Vec<(String, Option<String>)>,
}

impl Attributes {
    /// `obj`'s, for the selectors of `info`'s resource.
    pub fn of(info: &ResourceInfo, obj: &Value) -> Self {
        Self {
            labels: labels(obj),
            fields: selectable(info)
                .map(|f| (f.to_string(), field_value(obj, f)))
                .collect(),
        }
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(f, _)| f == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// About how many bytes it holds, for the memo it is kept in.
    pub fn size(&self) -> usize {
        let strings = self.labels.iter().map(|(k, v)| k.len() + v.len() + 48);
        let fields = self
            .fields
            .iter()
            .map(|(f, v)| f.len() + v.as_ref().map_or(0, String::len) + 48);
        std::mem::size_of::<Self>() + strings.chain(fields).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn attributes_match_as_the_object_does() {
        let info = crate::registry::test_support::widget_info("v1");
        let objects = [
            json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "x", "tier": "2"}}}),
            json!({"metadata": {"name": "b", "namespace": "other"}}),
            json!({"metadata": {"name": "c", "namespace": "ns", "labels": {"app": "y"}}}),
        ];
        let selectors = [
            ("", ""),
            ("app=x", ""),
            ("app!=x", ""),
            ("tier>1", ""),
            ("!app", ""),
            ("", "metadata.name=a"),
            ("", "metadata.namespace!=ns"),
            ("app in (x,y)", "metadata.name!=c"),
        ];
        for (label, field) in selectors {
            let predicate =
                Predicate::new(&info, label.parse().unwrap(), field.parse().unwrap()).unwrap();
            for obj in &objects {
                assert_eq!(
                    predicate.matches_attributes(&Attributes::of(&info, obj)),
                    predicate.matches(obj),
                    "{label} {field} {obj}"
                );
            }
        }
    }

    #[test]
    fn a_field_that_is_not_selectable_is_refused() {
        let info = crate::registry::test_support::widget_info("v1");
        let err = Predicate::new(&info, LabelSelector::default(), "spec.x=1".parse().unwrap())
            .unwrap_err();
        assert_eq!(err.message, "field label not supported: spec.x");
    }
}
