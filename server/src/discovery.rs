//! Discovery documents (being written).
