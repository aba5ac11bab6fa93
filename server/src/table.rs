//! Table output (being written).
