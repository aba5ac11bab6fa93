//! EndpointSlice, IPAddress and ServiceCIDR.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[];
