//! The scheduling.k8s.io API group: PriorityClasses ([`priority_class`]), as
//! kube-apiserver's `pkg/registry/scheduling/priorityclass` serves them.

mod priority_class;

pub use priority_class::{
    HIGHEST_USER_DEFINABLE_PRIORITY, PriorityClassHooks, SYSTEM_PRIORITY_CLASSES,
    SystemPriorityClass,
};
