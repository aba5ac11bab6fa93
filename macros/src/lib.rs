//! placeholder docs
#![deny(missing_docs)]

mod ctxt;
mod resource;
mod symbol;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `kapi_core::Resource`.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    resource::expand::derive(&input).into()
}
