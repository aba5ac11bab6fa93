//! The embedded backend (being written).

/// The default backend: persistent and crash-safe on redb.
pub struct EmbeddedStorage;
