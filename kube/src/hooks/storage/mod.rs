//! The storage.k8s.io API group: StorageClasses ([`storage_class`]), CSIDrivers
//! ([`csi_driver`]), CSINodes ([`csi_node`]), CSIStorageCapacities
//! ([`csi_storage_capacity`]), VolumeAttachments ([`volume_attachment`]) and
//! VolumeAttributesClasses ([`volume_attributes_class`]).

mod csi_driver;
mod csi_node;
mod csi_storage_capacity;
mod storage_class;
mod validation;
mod volume_attachment;
mod volume_attributes_class;

pub use csi_driver::CsiDriverHooks;
pub use csi_node::CsiNodeHooks;
pub use csi_storage_capacity::CsiStorageCapacityHooks;
pub use storage_class::StorageClassHooks;
pub use volume_attachment::VolumeAttachmentHooks;
pub use volume_attributes_class::VolumeAttributesClassHooks;
