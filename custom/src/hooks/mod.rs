//! Behaviour of the repository's own resources that their schemas cannot express,
//! attached to the generated types by the annotations in `schemas/`
//! (`kapi.dev/hooks`, `kapi.dev/conversion-hooks`): one module per kind, in a folder
//! per API group.

pub mod example;
