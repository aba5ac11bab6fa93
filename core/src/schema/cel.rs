//! CEL rules (`x-kubernetes-validations`). STUB: to be implemented.

/// A compiled CEL rule.
#[derive(Clone, Debug, Default)]
pub struct CompiledRule;
