//! What can be known of a CEL expression before it runs, from the schema of the data it
//! runs on: the fields it names that the schema does not have (cel-go's type checker,
//! `undefined field 'shelfs'`), and its worst-case cost (cel-go's cost estimator, with
//! kube-apiserver's sizes for schema nodes: `maxLength`, `maxItems`, `maxProperties`,
//! or else what fits in a 3 MiB request).
//!
//! kube-apiserver refuses a CRD whose rules name missing fields or cost more than its
//! budget ([`super::parse`] reports both), and writes the same findings for an admission
//! policy's expressions as `status.typeChecking` warnings.
//!
//! Where it differs from cel-go: only field selection is type-checked (kapi's compiler
//! already refuses unknown functions and variables), and a value whose type cel-go
//! would know but kapi does not (a comprehension's accumulator, an optional) is taken
//! as `dyn`, which never fails a check. The cost units are cel-go's for the operations
//! CRD rules use: selection, comparison, string and regex functions, list and map
//! literals and comprehensions.

mod calls;
mod escaping;
mod estimate;
mod sizes;
mod types;

pub use escaping::{RESERVED, escape};
pub use estimate::{Estimate, check};
pub use sizes::{MAX_REQUEST_BYTES, max_cardinality, min_serialized_size};
pub use types::Ty;

#[cfg(test)]
mod tests;
