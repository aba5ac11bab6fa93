//! CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment and VolumeAttributesClass.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[];
