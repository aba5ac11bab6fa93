//! Structs and enums.

use proc_macro2::TokenStream;
use quote::quote;

use super::{doc_attrs, ident};
use crate::model::{TypeDef, TypeRef};

/// The tokens of a field's type, before optionality, written in module `at` (a path
/// from the generated root).
pub(crate) fn type_tokens(ty: &TypeRef, at: &[String]) -> TokenStream {
    let meta = quote!(::kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1);
    match ty {
        TypeRef::String => quote!(::std::string::String),
        TypeRef::I32 => quote!(i32),
        TypeRef::I64 => quote!(i64),
        // Not f64: a JSON number must come back as written (`1` stays `1`, not `1.0`).
        TypeRef::Number => quote!(::kapi_core::__private::serde_json::Number),
        TypeRef::Bool => quote!(bool),
        TypeRef::Time => quote!(#meta::Time),
        TypeRef::ObjectMeta => quote!(#meta::ObjectMeta),
        TypeRef::IntOrString => {
            quote!(
                ::kapi_core::__private::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString
            )
        }
        TypeRef::Quantity => {
            quote!(::kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity)
        }
        TypeRef::Json => quote!(::kapi_core::__private::serde_json::Value),
        TypeRef::List(inner) => {
            let inner = type_tokens(inner, at);
            quote!(::std::vec::Vec<#inner>)
        }
        TypeRef::Map(inner) => {
            let inner = type_tokens(inner, at);
            quote!(::std::collections::BTreeMap<::std::string::String, #inner>)
        }
        TypeRef::Named(name) => {
            let name = ident(name);
            quote!(#name)
        }
        TypeRef::Defined { module, name } => {
            let name = ident(name);
            if module == at {
                return quote!(#name);
            }
            // Relative to the generated root, wherever the generated code is included.
            let up = at.iter().map(|_| quote!(super::));
            let down = module.iter().map(|m| {
                let m = ident(m);
                quote!(#m::)
            });
            quote!(#(#up)* #(#down)* #name)
        }
        TypeRef::Extern(path) => path
            .parse()
            .unwrap_or_else(|_| quote!(::kapi_core::__private::serde_json::Value)),
    }
}

/// The derives and serde/schemars crate paths every generated type carries.
pub(crate) fn common_attrs(extra_derives: TokenStream) -> TokenStream {
    quote! {
        #[derive(
            Clone,
            Debug,
            PartialEq,
            #extra_derives
            ::kapi_core::__private::serde::Serialize,
            ::kapi_core::__private::serde::Deserialize,
            ::kapi_core::__private::schemars::JsonSchema
        )]
        #[serde(crate = "::kapi_core::__private::serde")]
        #[schemars(crate = "::kapi_core::__private::schemars")]
    }
}

/// The fields of a struct in module `at`, with serde renames and optionality.
pub(crate) fn fields(def: &crate::model::StructDef, at: &[String]) -> TokenStream {
    let fields = def.fields.iter().map(|f| {
        let doc = doc_attrs(f.doc.as_deref());
        let name = ident(&f.ident);
        let json = &f.json_name;
        let ty = type_tokens(&f.ty, at);
        // serde already treats a missing Option as None; only say what differs.
        let mut serde = Vec::new();
        if f.ident != f.json_name {
            serde.push(quote!(rename = #json));
        }
        let ty = if f.optional {
            serde.push(quote!(
                skip_serializing_if = "::std::option::Option::is_none"
            ));
            quote!(::std::option::Option<#ty>)
        } else {
            if f.serde_default {
                serde.push(quote!(default));
            }
            ty
        };
        let serde = if serde.is_empty() {
            quote!()
        } else {
            quote!(#[serde(#(#serde),*)])
        };
        quote! {
            #doc
            #serde
            pub #name: #ty,
        }
    });
    let extra = if def.flatten_extra {
        let mut name = "additional_fields".to_string();
        while def.fields.iter().any(|f| f.ident == name) {
            name.push('_');
        }
        let name = ident(&name);
        quote! {
            /// Fields the schema does not declare, kept as they are
            /// (`x-kubernetes-preserve-unknown-fields`).
            #[serde(flatten)]
            pub #name: ::std::collections::BTreeMap<::std::string::String, ::kapi_core::__private::serde_json::Value>,
        }
    } else {
        TokenStream::new()
    };
    quote! { #(#fields)* #extra }
}

/// A nested struct or enum, in module `at`.
pub fn type_def(def: &TypeDef, at: &[String]) -> TokenStream {
    match def {
        TypeDef::Struct(s) => {
            let doc = doc_attrs(s.doc.as_deref());
            let name = ident(&s.name);
            let all_optional = s.fields.iter().all(|f| f.optional);
            let derives = if all_optional {
                quote!(Default,)
            } else {
                quote!()
            };
            let attrs = common_attrs(derives);
            let fields = fields(s, at);
            quote! {
                #doc
                #attrs
                pub struct #name {
                    #fields
                }
            }
        }
        TypeDef::Enum(e) => {
            let doc = doc_attrs(e.doc.as_deref());
            let name = ident(&e.name);
            let attrs = common_attrs(quote!(Copy, Eq, Hash, PartialOrd, Ord,));
            let variants = e.variants.iter().map(|(v, json)| {
                let v = ident(v);
                quote! {
                    #[serde(rename = #json)]
                    #v,
                }
            });
            quote! {
                #doc
                #attrs
                pub enum #name {
                    #(#variants)*
                }
            }
        }
    }
}
