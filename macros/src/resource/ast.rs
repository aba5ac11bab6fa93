//! The derive input as `#[derive(Resource)]` sees it: the struct, its `#[resource]`
//! attributes and the fields it cares about (`metadata`, `status`).

use quote::quote;
use syn::{Data, DeriveInput, Field, Fields, Ident};

use super::attr::{self, Attrs};
use crate::ctxt::Ctxt;

/// A struct deriving `Resource`.
pub struct Input<'a> {
    /// The original input.
    pub original: &'a DeriveInput,
    /// The type's name.
    pub ident: &'a Ident,
    /// What `#[resource(...)]` said.
    pub attrs: Attrs,
    /// The named fields, or `None` when the input is not a struct with named fields
    /// (already reported).
    pub fields: Option<ResourceFields<'a>>,
}

/// The fields `#[derive(Resource)]` reads.
pub struct ResourceFields<'a> {
    /// `metadata`.
    pub metadata: Option<&'a Field>,
    /// `status`.
    pub status: Option<&'a Field>,
}

impl<'a> Input<'a> {
    /// Reads `input`, reporting shapes other than a struct with named fields.
    pub fn from_syn(cx: &Ctxt, input: &'a DeriveInput) -> Self {
        let attrs = attr::parse(cx, &input.attrs);
        let ident = &input.ident;
        let fields = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => Some(ResourceFields {
                    metadata: named.named.iter().find(|f| is_named(f, "metadata")),
                    status: named.named.iter().find(|f| is_named(f, "status")),
                }),
                Fields::Unnamed(_) | Fields::Unit => {
                    cx.error_spanned_by(
                        {
                            let token = data.struct_token;
                            quote!(#token #ident)
                        },
                        "#[derive(Resource)] needs a struct with named fields, \
                         including `metadata: ObjectMeta`",
                    );
                    None
                }
            },
            Data::Enum(data) => {
                cx.error_spanned_by(
                    {
                        let token = data.enum_token;
                        quote!(#token #ident)
                    },
                    "#[derive(Resource)] is not supported on enums: a resource is a struct \
                     with `metadata`, `spec` and optionally `status` fields",
                );
                None
            }
            Data::Union(data) => {
                cx.error_spanned_by(
                    {
                        let token = data.union_token;
                        quote!(#token #ident)
                    },
                    "#[derive(Resource)] is not supported on unions: a resource is a struct \
                     with `metadata`, `spec` and optionally `status` fields",
                );
                None
            }
        };
        Input {
            original: input,
            ident,
            attrs,
            fields,
        }
    }
}

fn is_named(field: &Field, name: &str) -> bool {
    field.ident.as_ref().is_some_and(|ident| ident == name)
}
