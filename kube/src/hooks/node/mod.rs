//! The node.k8s.io API group: RuntimeClasses ([`runtime_class`]), as kube-apiserver's
//! `pkg/registry/node/runtimeclass` serves them.

mod runtime_class;

pub use runtime_class::RuntimeClassHooks;
