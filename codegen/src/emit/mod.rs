//! Model → tokens. The only place `quote!` appears.

mod conversion;
mod protobuf;
mod register;
mod resource;
mod types;

pub use conversion::{MODULE as CONVERSIONS_MODULE, conversion_items};
pub use protobuf::catalog as protobuf_catalog;
pub use register::register_fn;

pub use resource::resource_items;
pub use types::type_def;

/// The generated root's shared definitions: the JSON of every definition a schema refers
/// to, and `schema_definitions()`, parsed once.
pub fn definitions_fn(json: &str) -> TokenStream {
    let json = resource::raw_string(json);
    quote! {
        /// The shared definitions (`$ref` targets) of the schemas generated here, as JSON.
        pub const SCHEMA_DEFINITIONS_JSON: &str = #json;

        /// The shared definitions, parsed once on first use.
        pub fn schema_definitions() -> &'static ::kapi_core::schema::Definitions {
            static DEFINITIONS: ::std::sync::OnceLock<::kapi_core::schema::Definitions> =
                ::std::sync::OnceLock::new();
            DEFINITIONS.get_or_init(|| {
                ::kapi_core::schema::Definitions::from_embedded_json(SCHEMA_DEFINITIONS_JSON)
            })
        }
    }
}

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
    // Descriptions are Markdown written for `kubectl explain`, not Rust: code fences are
    // marked `text` and indentation dropped, so rustdoc never runs them as doctests.
    let mut in_fence = false;
    let lines = doc.lines().map(|l| {
        let l = l.trim();
        if l.starts_with("```") {
            in_fence = !in_fence;
            if in_fence {
                // Any language tag (yaml, json, ...) becomes `text`.
                return " ```text".to_string();
            }
        }
        format!(" {l}")
    });
    let mut lines: Vec<String> = lines.collect();
    if in_fence {
        lines.push(" ```".to_string());
    }
    quote! { #(#[doc = #lines])* }
}
