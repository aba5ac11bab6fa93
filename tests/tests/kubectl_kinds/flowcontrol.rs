//! FlowSchema and PriorityLevelConfiguration.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[];
