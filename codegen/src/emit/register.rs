//! The generated `register` function.

use proc_macro2::TokenStream;
use quote::quote;

use super::ident;

/// `register(registrar)`: installs every served version, given as
/// `(group module, version module, kind)`.
pub fn register_fn(served: &[(String, String, String)]) -> TokenStream {
    let calls = served.iter().map(|(group, version, kind)| {
        let (g, v, k) = (ident(group), ident(version), ident(kind));
        quote! {
            registrar.register(::std::sync::Arc::new(::kapi_core::TypedStrategy::<#g::#v::#k>::new()));
        }
    });
    quote! {
        /// Installs every served resource version generated here into `registrar` (the
        /// server's registry): names, scope, verbs, subresources, printer columns and schema.
        pub fn register(registrar: &mut dyn ::kapi_core::Registrar) {
            #(#calls)*
        }
    }
}
