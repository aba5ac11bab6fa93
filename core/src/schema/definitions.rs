//! Named schemas shared between resources: `$ref: "#/definitions/NAME"`.
//!
//! A CustomResourceDefinition cannot use `$ref`; kapi's own schema files can, so that the
//! built-in resources share `PodSpec`, `LabelSelector` and the rest instead of carrying a
//! copy each. A reference is resolved while parsing: the node becomes the definition,
//! with the keywords written next to `$ref` (a description, a default, patch and list
//! extensions) laid over it, and remembers the definition's name in
//! [`Schema::definition`](super::Schema::definition) so that code generation and
//! OpenAPI publishing can share one type or one definition again.

use std::collections::BTreeMap;

use serde_json::Value;

/// The prefix every reference is written with.
pub const REF_PREFIX: &str = "#/definitions/";

/// Named schemas (`SchemaDefinitions` documents), the targets of `$ref`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Definitions {
    schemas: BTreeMap<String, Value>,
}

impl Definitions {
    /// No definitions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `name`, returning the schema it replaces, if any.
    pub fn insert(&mut self, name: impl Into<String>, schema: Value) -> Option<Value> {
        self.schemas.insert(name.into(), schema)
    }

    /// The schema named `name`, as written.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.schemas.get(name)
    }

    /// Every definition, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.schemas.iter()
    }

    /// How many definitions there are.
    pub fn len(&self) -> usize {
        self.schemas.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.schemas.is_empty()
    }

    /// Definitions from a JSON object of `name → schema` (what generated code embeds).
    ///
    /// # Panics
    /// When `json` is not such an object: embedded definitions are written by
    /// kapi-codegen, so that is a bug or a stale build.
    pub fn from_embedded_json(json: &str) -> Self {
        match serde_json::from_str::<BTreeMap<String, Value>>(json) {
            Ok(schemas) => Self { schemas },
            Err(e) => panic!(
                "kapi: embedded definitions are not a JSON object ({e}); regenerate the code"
            ),
        }
    }

    /// The definitions as one JSON object, sorted by name.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.schemas).unwrap_or_default()
    }
}

/// The name a `$ref` value points at, if it is written as `#/definitions/NAME`.
pub fn ref_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix(REF_PREFIX)
        .filter(|name| !name.is_empty())
}
