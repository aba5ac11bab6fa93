//! The events.k8s.io API group: its Event ([`event`]), checked with the legacy rules of
//! core/v1 Events plus the strict ones.

mod event;

pub use event::EventHooks;
