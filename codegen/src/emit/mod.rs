//! Model → tokens. The only place `quote!` appears.

mod register;
mod resource;
mod types;

pub use register::register_fn;

pub use resource::resource_items;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// An identifier, raw when it is a Rust keyword (`r#type`).
pub(crate) fn ident(name: &str) -> Ident {
    if syn::parse_str::<Ident>(name).is_ok() {
        Ident::new(name, Span::call_site())
    } else {
        Ident::new_raw(name, Span::call_site())
    }
}

/// `#[doc = "..."]` lines for a description.
pub(crate) fn doc_attrs(doc: Option<&str>) -> TokenStream {
    let Some(doc) = doc.map(str::trim).filter(|d| !d.is_empty()) else {
        return TokenStream::new();
    };
    let lines = doc.lines().map(|l| format!(" {}", l.trim_end()));
    quote! { #(#[doc = #lines])* }
}
