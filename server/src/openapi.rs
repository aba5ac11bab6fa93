//! OpenAPI documents (being written).
