//! The generated `register` function.

use proc_macro2::TokenStream;
use quote::quote;

use super::ident;

/// `register(registrar)`: installs every served version, given as
/// `(group module, version module, kind)`, every generated conversion, given as
/// `(group module, kind, group, plural)`, and the conversion webhooks of resources
/// whose conversion is their own, given as `(group, plural, spec.conversion JSON)`.
pub fn register_fn(
    served: &[(String, String, String)],
    conversions: &[(String, String, String, String)],
    webhooks: &[(String, String, String)],
) -> TokenStream {
    let calls = served.iter().map(|(group, version, kind)| {
        let (g, v, k) = (ident(group), ident(version), ident(kind));
        quote! {
            registrar.register(::std::sync::Arc::new(::kapi_core::TypedStrategy::<#g::#v::#k>::new()));
        }
    });
    let conversions = conversions.iter().map(|(module, kind, group, plural)| {
        let (m, c) = (ident(module), quote::format_ident!("{}Converter", kind));
        let conversions = ident(super::CONVERSIONS_MODULE);
        quote! {
            registrar.register_conversion(#group, #plural, ::std::sync::Arc::new(#m::#conversions::#c));
        }
    });
    let webhooks = webhooks.iter().map(|(group, plural, json)| {
        let json = super::resource::raw_string(json);
        quote! {
            registrar.register_conversion_webhook(#group, #plural, #json);
        }
    });
    quote! {
        /// Installs every served resource version generated here into `registrar` (the
        /// server's registry): names, scope, verbs, subresources, printer columns and
        /// schema, and how the versions that differ convert.
        pub fn register(registrar: &mut dyn ::kapi_core::Registrar) {
            #(#calls)*
            #(#conversions)*
            #(#webhooks)*
        }
    }
}
