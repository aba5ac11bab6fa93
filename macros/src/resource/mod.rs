//! `#[derive(Resource)]`: [`ast`] reads the input, [`attr`] parses `#[resource(...)]`,
//! [`validate`] checks the rules, [`expand`] writes the impl.

pub mod ast;
pub mod attr;
pub mod expand;
pub mod names;
pub mod validate;
