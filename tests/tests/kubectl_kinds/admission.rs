//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[];
