//! A resource's conversion ([`crate::model::conversion`]) as Rust, in the group's
//! `conversions` module: one function per pair of types, and the resource's
//! `{Kind}Converter` implementing `kapi_core::conversion::VersionConverter`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::ident;
use crate::model::conversion::{ConversionDef, FieldFill, PairBody, PairDef, ValueConv};

/// The module conversions are generated in, beside the group's version modules.
pub const MODULE: &str = "conversions";

/// `v` converted as `conv`: a place (`from.name`), or a reference when `by_ref` (a
/// closure's argument); `depth` names closures' variables apart.
fn value(conv: &ValueConv, v: &TokenStream, by_ref: bool, depth: usize) -> TokenStream {
    let x = format_ident!("x{depth}");
    match conv {
        ValueConv::Clone => quote!(#v.clone()),
        ValueConv::Widen if by_ref => quote!(i64::from(*#v)),
        ValueConv::Widen => quote!(i64::from(#v)),
        ValueConv::Call(f) => {
            let f = ident(f);
            if by_ref {
                quote!(#f(#v))
            } else {
                quote!(#f(&#v))
            }
        }
        ValueConv::List(inner) => {
            let inner = value(inner, &quote!(#x), true, depth + 1);
            quote!(#v.iter().map(|#x| #inner).collect())
        }
        ValueConv::Map(inner) => {
            let inner = value(inner, &quote!(#x), true, depth + 1);
            quote!(#v.iter().map(|(k, #x)| (k.clone(), #inner)).collect())
        }
    }
}

fn fill(f: &FieldFill) -> TokenStream {
    match f {
        FieldFill::Hook => quote!(::std::default::Default::default()),
        FieldFill::From {
            from,
            conv,
            optional,
            wrap,
        } => {
            let from = ident(from);
            if *optional && *conv == ValueConv::Clone {
                quote!(from.#from.clone())
            } else if *optional {
                let inner = value(conv, &quote!(x), true, 1);
                quote!(from.#from.as_ref().map(|x| #inner))
            } else {
                let v = value(conv, &quote!(from.#from), false, 1);
                if *wrap {
                    quote!(::std::option::Option::Some(#v))
                } else {
                    v
                }
            }
        }
    }
}

/// A type's path from the `conversions` module of `group`: `super::v1::Widget` for a
/// version of the group, `super::super::io::k8s::…::T` for a shared definition.
fn type_path(group: &str, side: &(Vec<String>, String)) -> TokenStream {
    let t = ident(&side.1);
    match side.0.as_slice() {
        [g, version] if g == group => {
            let v = ident(version);
            quote!(super::#v::#t)
        }
        module => {
            let module = module.iter().map(|m| ident(m));
            quote!(super::super::#(#module::)*#t)
        }
    }
}

fn pair_fn(group: &str, pair: &PairDef, hooks: Option<&syn::Path>) -> TokenStream {
    let function = ident(&pair.function);
    let (from, to) = (type_path(group, &pair.from), type_path(group, &pair.to));
    let last = |m: &[String]| m.last().cloned().unwrap_or_default();
    let doc = format!(
        " A `{}` {} as its `{}` {}.",
        pair.from.1,
        last(&pair.from.0),
        pair.to.1,
        last(&pair.to.0)
    );
    let body = match &pair.body {
        PairBody::Enum(variants) => {
            let arms = variants.iter().map(|(a, b)| {
                let (a, b) = (ident(a), ident(b));
                quote!(#from::#a => #to::#b,)
            });
            quote!(match from { #(#arms)* })
        }
        PairBody::Struct {
            fields,
            hook,
            extra,
        } => {
            let inits = fields.iter().map(|(name, f)| {
                let name = ident(name);
                let value = fill(f);
                quote!(#name: #value,)
            });
            let extra = match extra {
                (Some(a), Some(b)) => {
                    let (a, b) = (ident(a), ident(b));
                    quote!(#b: from.#a.clone(),)
                }
                (_, Some(b)) => {
                    let b = ident(b);
                    quote!(#b: ::std::default::Default::default(),)
                }
                _ => quote!(),
            };
            match (hook, hooks) {
                (true, Some(h)) => quote! {
                    let mut to = #to { #(#inits)* #extra };
                    <#h as ::kapi_core::conversion::Convert<#from, #to>>::convert(from, &mut to);
                    to
                },
                _ => quote!(#to { #(#inits)* #extra }),
            }
        }
    };
    quote! {
        #[doc = #doc]
        pub fn #function(from: &#from) -> #to {
            #body
        }
    }
}

/// Every item of `def`'s conversion, for the `conversions` module of its group.
pub fn conversion_items(def: &ConversionDef) -> TokenStream {
    let hooks = def
        .hooks
        .as_deref()
        .and_then(|h| syn::parse_str::<syn::Path>(h).ok());
    let functions = def
        .pairs
        .iter()
        .map(|p| pair_fn(&def.group, p, hooks.as_ref()));
    let kind = ident(&def.kind);
    let converter = format_ident!("{}Converter", def.kind);
    let hub = ident(&def.hub);
    let ups = def.spokes.iter().map(|(m, up, _)| {
        let (m, up) = (ident(m), ident(up));
        quote! {
            else if from == super::#m::#kind::API_VERSION {
                #up(&::kapi_core::conversion::decode(object)?)
            }
        }
    });
    let downs = def.spokes.iter().map(|(m, _, down)| {
        let (m, down) = (ident(m), ident(down));
        quote! {
            else if api_version == super::#m::#kind::API_VERSION {
                ::kapi_core::conversion::encode(&#down(&hub))?
            }
        }
    });
    let doc = format!(
        " Converts {}s between their versions, through `{}` (the storage version).",
        def.kind, def.hub
    );
    quote! {
        #(#functions)*

        #[doc = #doc]
        pub struct #converter;

        impl ::kapi_core::conversion::VersionConverter for #converter {
            fn convert(
                &self,
                object: ::kapi_core::__private::serde_json::Value,
                api_version: &str,
            ) -> ::std::result::Result<::kapi_core::__private::serde_json::Value, ::std::string::String> {
                let from = object
                    .get("apiVersion")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string();
                let hub: super::#hub::#kind = if from == super::#hub::#kind::API_VERSION {
                    ::kapi_core::conversion::decode(object)?
                }
                #(#ups)*
                else {
                    return ::std::result::Result::Err(::std::format!("no conversion from {from}"));
                };
                let mut out = if api_version == super::#hub::#kind::API_VERSION {
                    ::kapi_core::conversion::encode(&hub)?
                }
                #(#downs)*
                else {
                    return ::std::result::Result::Err(::std::format!("no conversion to {api_version}"));
                };
                out["apiVersion"] = ::kapi_core::__private::serde_json::Value::from(api_version);
                ::std::result::Result::Ok(out)
            }
        }
    }
}
