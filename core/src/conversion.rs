//! In-process conversion between the versions of a resource whose versions really
//! differ: what `kapi-codegen` generates for a schema with
//! `spec.conversion.strategy: Webhook`, and the hooks that complete it.
//!
//! The generated code converts each version to and from the hub (the storage version)
//! field by field where names and types agree; for each pair of types with fields
//! that do not, it calls the resource's conversion hooks ([`Convert`]) to fill them.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Completes the conversion of `From` into `To` for the fields the generator could
/// not match (renamed, split, retyped): `to` holds what matched, the rest defaulted.
///
/// ```ignore
/// impl Convert<v1alpha1::WidgetSpec, v1::WidgetSpec> for WidgetConversion {
///     fn convert(from: &v1alpha1::WidgetSpec, to: &mut v1::WidgetSpec) {
///         to.color = from.colour.clone();
///     }
/// }
/// ```
pub trait Convert<From, To> {
    /// Fills in `to` what the generated conversion left.
    fn convert(from: &From, to: &mut To);
}

/// Converts objects of one resource between its versions.
pub trait VersionConverter: Send + Sync {
    /// `object` (in its own `apiVersion`) in `api_version`; an error says why not.
    fn convert(&self, object: Value, api_version: &str) -> Result<Value, String>;
}

/// An object as a version's type (for generated code).
pub fn decode<T: DeserializeOwned>(object: Value) -> Result<T, String> {
    serde_json::from_value(object).map_err(|e| e.to_string())
}

/// A version's type as an object (for generated code).
pub fn encode<T: Serialize>(typed: &T) -> Result<Value, String> {
    serde_json::to_value(typed).map_err(|e| e.to_string())
}
