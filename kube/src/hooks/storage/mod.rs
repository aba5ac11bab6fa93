//! The storage.k8s.io API group: StorageClasses ([`storage_class`]).

mod storage_class;

pub use storage_class::StorageClassHooks;
