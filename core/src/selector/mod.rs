//! Label and field selectors, parsed and matched as Kubernetes'
//! `k8s.io/apimachinery/pkg/labels` and `k8s.io/apimachinery/pkg/fields` do.
//!
//! - [`label::LabelSelector`]: the `?labelSelector=` syntax (`a=b`, `a!=b`,
//!   `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<5`), with label keys and
//!   values validated and errors worded like Kubernetes;
//! - [`field::FieldSelector`]: the `?fieldSelector=` syntax (`a=b`, `a==b`, `a!=b`)
//!   with Kubernetes' backslash escaping in values.
//!
//! Both report a [`SelectorError`], whose message is Kubernetes' text; a server
//! returns it as a `400 BadRequest`.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kapi_core::selector::{FieldSelector, LabelSelector};
//!
//! let sel = LabelSelector::parse("env in (prod, staging), !canary").unwrap();
//! assert_eq!(sel.to_string(), "!canary,env in (prod,staging)");
//! let labels = BTreeMap::from([("env".to_string(), "prod".to_string())]);
//! assert!(sel.matches(&labels));
//!
//! let err = LabelSelector::parse("a in (b").unwrap_err();
//! assert_eq!(err.to_string(), "unable to parse requirement: found '', expected: ',' or ')'");
//!
//! let fs = FieldSelector::parse("metadata.name=web,status.phase!=Failed").unwrap();
//! assert!(fs.matches(|path| match path {
//!     "metadata.name" => Some("web".to_string()),
//!     "status.phase" => Some("Running".to_string()),
//!     _ => None,
//! }));
//! ```

use std::fmt;

pub mod field;
pub mod label;

pub use field::{FieldOperator, FieldRequirement, FieldSelector};
pub use label::{LabelSelector, Labels, Operator, Requirement};

/// A selector that could not be parsed (or a requirement that could not be built),
/// with Kubernetes' message, e.g. `unable to parse requirement: found '', expected: identifier`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SelectorError {
    message: String,
}

impl SelectorError {
    /// An error with this exact message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message, as Kubernetes words it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SelectorError {}

/// Writes items as `a,b,c`: the canonical form of both kinds of selector.
fn write_comma_separated<T: std::fmt::Display>(
    f: &mut std::fmt::Formatter<'_>,
    items: &[T],
) -> std::fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}
