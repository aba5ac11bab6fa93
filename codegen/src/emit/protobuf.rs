//! The protobuf catalog as statics: `protobuf::CATALOG`, a `kapi_core::protobuf::Catalog`.

use std::collections::BTreeMap;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::protobuf::ProtobufCatalog;

/// `pub mod protobuf { pub static CATALOG: Catalog = … }`: every message in name order
/// (a field's message type is its index), the kinds sorted for binary search.
pub fn catalog(catalog: &ProtobufCatalog) -> TokenStream {
    let index: BTreeMap<&str, u32> = catalog
        .messages
        .keys()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i as u32))
        .collect();
    let messages = catalog.messages.iter().map(|(name, m)| {
        let shape = Ident::new(m.shape, Span::call_site());
        let fields = m.fields.iter().map(|f| {
            let ty = match f.ty.as_str() {
                "string" => quote!(FieldType::String),
                "bytes" => quote!(FieldType::Bytes),
                "bool" => quote!(FieldType::Bool),
                "int32" => quote!(FieldType::Int32),
                "int64" => quote!(FieldType::Int64),
                "double" => quote!(FieldType::Double),
                message => {
                    let i = index[message];
                    quote!(FieldType::Message(#i))
                }
            };
            let (json, number, keep_zero) = (&f.json, f.number, f.keep_zero);
            let label = Ident::new(f.label, Span::call_site());
            quote! {
                Field { json: #json, number: #number, ty: #ty, label: Label::#label, keep_zero: #keep_zero }
            }
        });
        quote! {
            Message { name: #name, shape: Shape::#shape, fields: &[#(#fields),*] }
        }
    });
    let mut kinds: Vec<(&str, &str, &str, u32)> = catalog
        .messages
        .iter()
        .flat_map(|(name, m)| {
            m.kinds
                .iter()
                .map(|(g, v, k)| (g.as_str(), v.as_str(), k.as_str(), index[name.as_str()]))
        })
        .collect();
    kinds.sort();
    kinds.dedup_by(|a, b| (a.0, a.1, a.2) == (b.0, b.1, b.2));
    let kinds = kinds.iter().map(|(group, version, kind, message)| {
        quote! { KindMessage { group: #group, version: #version, kind: #kind, message: #message } }
    });
    let count = catalog.messages.len();
    quote! {
        /// The protobuf catalog of the kinds generated here: Kubernetes' wire format for
        /// every built-in kind (`kapi_core::protobuf`).
        pub mod protobuf {
            use ::kapi_core::protobuf::{Catalog, Field, FieldType, KindMessage, Label, Message, Shape};

            /// Every message, and the message of each kind.
            pub static CATALOG: Catalog = Catalog { messages: &MESSAGES, kinds: &[#(#kinds),*] };

            static MESSAGES: [Message; #count] = [#(#messages),*];
        }
    }
}
