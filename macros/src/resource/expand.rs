//! `#[derive(Resource)]`: proc_macro2 in, proc_macro2 out, so the expansion can be
//! snapshot-tested without a compiler.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, LitStr, parse_quote};

use super::ast::Input;
use super::attr::{Attrs, Flag};
use super::names;
use crate::ctxt::Ctxt;

/// Expands `#[derive(Resource)]` on `input`.
///
/// On error the output is the errors as `compile_error!`s plus, when the input is a
/// plain struct, a placeholder impl, so that one mistake in the attribute does not also
/// produce "`Resource` is not implemented" errors wherever the type is used.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let parsed = Input::from_syn(&cx, input);
    parsed.validate(&cx);
    match cx.check() {
        Ok(()) => impl_resource(&parsed),
        Err(errors) => {
            let errors = errors.to_compile_error();
            let fallback = fallback(&parsed);
            quote! {
                #errors
                #fallback
            }
        }
    }
}

/// The kapi-core path generated code refers to.
fn krate(input: &Input<'_>) -> syn::Path {
    input
        .attrs
        .krate
        .clone()
        .unwrap_or_else(|| parse_quote!(::kapi_core))
}

/// The names of a resource with every default filled in.
struct Names {
    group: String,
    version: String,
    kind: String,
    list_kind: String,
    plural: String,
    singular: String,
}

impl Names {
    fn resolve(input: &Input<'_>) -> Self {
        let attrs = &input.attrs;
        let value = |lit: &Option<LitStr>| lit.as_ref().map(LitStr::value);
        let kind = value(&attrs.kind).unwrap_or_else(|| input.ident.to_string());
        let lower = kind.to_lowercase();
        Names {
            group: value(&attrs.group).unwrap_or_default(),
            version: value(&attrs.version).unwrap_or_default(),
            list_kind: value(&attrs.list_kind).unwrap_or_else(|| format!("{kind}List")),
            plural: value(&attrs.plural).unwrap_or_else(|| names::guess_plural(&lower)),
            singular: value(&attrs.singular).unwrap_or(lower),
            kind,
        }
    }
}

/// `::std::borrow::Cow::Borrowed`: every string and slice in a `ResourceInfo` is a
/// borrowed `Cow`, so the info can live in a `static`.
fn cow() -> TokenStream {
    quote!(::std::borrow::Cow::Borrowed)
}

/// An optional string field: `Some(Cow::Borrowed("…"))` or `None`.
fn opt_str(value: Option<String>) -> TokenStream {
    let cow = cow();
    match value {
        Some(s) => quote!(::core::option::Option::Some(#cow(#s))),
        None => quote!(::core::option::Option::None),
    }
}

/// A list-of-strings field: `Cow::Borrowed(&[Cow::Borrowed("…"), …])`.
fn strs(lits: &[LitStr]) -> TokenStream {
    let cow = cow();
    let values = lits.iter().map(LitStr::value);
    quote!(#cow(&[#(#cow(#values)),*]))
}

/// The value of a flag attribute, or `default` when it is absent.
fn is_set(flag: &Option<Flag>, default: bool) -> bool {
    flag.as_ref().map_or(default, |f| f.value)
}

/// The `ObjectMeta` type the metadata accessors return.
fn object_meta(krate: &syn::Path) -> TokenStream {
    quote!(#krate::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)
}

/// The `Resource` impl of an input that passed validation.
fn impl_resource(input: &Input<'_>) -> TokenStream {
    let krate = krate(input);
    let ident = input.ident;
    let names = Names::resolve(input);
    let Names {
        group,
        version,
        kind,
        plural,
        ..
    } = &names;
    let hooks = match &input.attrs.hooks {
        Some(hooks) => quote!(#hooks),
        None => quote!(#krate::NoHooks),
    };
    let info = resource_info(&krate, &input.attrs, &names);
    let schema_body = schema_body(&krate, &input.attrs, ident);
    let object_meta = object_meta(&krate);
    let (metadata, metadata_mut) = metadata_accessors(input);

    quote! {
        #[automatically_derived]
        impl #krate::Resource for #ident {
            const GROUP: &'static str = #group;
            const VERSION: &'static str = #version;
            const KIND: &'static str = #kind;
            const PLURAL: &'static str = #plural;
            type Hooks = #hooks;

            fn info() -> &'static #krate::ResourceInfo {
                static INFO: #krate::ResourceInfo = #info;
                &INFO
            }

            fn schema() -> &'static #krate::schema::Schema {
                #schema_body
            }

            fn metadata(&self) -> &#object_meta {
                #metadata
            }

            fn metadata_mut(&mut self) -> &mut #object_meta {
                #metadata_mut
            }
        }
    }
}

/// The `ResourceInfo { … }` expression `Resource::info` keeps in its `static`: the
/// names, scope, subresources, printer columns, verbs and version flags.
fn resource_info(krate: &syn::Path, attrs: &Attrs, names: &Names) -> TokenStream {
    let cow = cow();
    let Names {
        group,
        version,
        kind,
        list_kind,
        plural,
        singular,
    } = names;
    let scope = if is_set(&attrs.namespaced, false) {
        quote!(#krate::Scope::Namespaced)
    } else {
        quote!(#krate::Scope::Cluster)
    };
    let status = is_set(&attrs.status, false);
    let served = is_set(&attrs.served, true);
    let storage = is_set(&attrs.storage, true);
    let deprecated = is_set(&attrs.deprecated, false);
    let deprecation_warning = opt_str(attrs.deprecation_warning.as_ref().map(LitStr::value));
    let scale = scale(krate, attrs);
    let extra = extra_subresources(krate, attrs);
    let printer_columns = printer_columns(krate, attrs);
    let short_names = strs(&attrs.short_names);
    let categories = strs(&attrs.categories);
    let selectable_fields = strs(&attrs.selectable_fields);
    let verbs = if attrs.verbs.is_empty() {
        quote!(#krate::resource::ALL_VERBS)
    } else {
        strs(&attrs.verbs)
    };
    quote! {
        #krate::ResourceInfo {
            group: #cow(#group),
            version: #cow(#version),
            kind: #cow(#kind),
            list_kind: #cow(#list_kind),
            plural: #cow(#plural),
            singular: #cow(#singular),
            short_names: #short_names,
            categories: #categories,
            scope: #scope,
            subresources: #krate::Subresources {
                status: #status,
                scale: #scale,
                extra: #extra,
            },
            printer_columns: #printer_columns,
            selectable_fields: #selectable_fields,
            verbs: #verbs,
            served: #served,
            storage: #storage,
            deprecated: #deprecated,
            deprecation_warning: #deprecation_warning,
        }
    }
}

/// The scale subresource: `Some(ScaleInfo { … })` from `scale(...)`, else `None`.
fn scale(krate: &syn::Path, attrs: &Attrs) -> TokenStream {
    let Some(scale) = &attrs.scale else {
        return quote!(::core::option::Option::None);
    };
    let cow = cow();
    let spec = scale
        .spec_replicas_path
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_default();
    let status = scale
        .status_replicas_path
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_default();
    let selector = opt_str(scale.label_selector_path.as_ref().map(LitStr::value));
    quote! {
        ::core::option::Option::Some(#krate::ScaleInfo {
            spec_replicas_path: #cow(#spec),
            status_replicas_path: #cow(#status),
            label_selector_path: #selector,
        })
    }
}

/// The extra subresources, each `extra_subresource = "name=verb,verb[@group/version/Kind]"` one
/// `ExtraSubresource`, as a borrowed slice.
fn extra_subresources(krate: &syn::Path, attrs: &Attrs) -> TokenStream {
    let cow = cow();
    let extra = attrs.extra_subresources.iter().map(|lit| {
        let value = lit.value();
        let (name, rest) = value.split_once('=').unwrap_or((value.as_str(), ""));
        let (verbs, kind) = rest.split_once('@').unwrap_or((rest, ""));
        let verbs = verbs.split(',').map(str::trim).filter(|v| !v.is_empty());
        let kind = match kind.splitn(3, '/').collect::<Vec<_>>().as_slice() {
            [group, version, kind] => quote! {
                ::core::option::Option::Some(#krate::resource::SubresourceKind {
                    group: #cow(#group),
                    version: #cow(#version),
                    kind: #cow(#kind),
                })
            },
            _ => quote!(::core::option::Option::None),
        };
        quote! {
            #krate::resource::ExtraSubresource {
                name: #cow(#name),
                verbs: #cow(&[#(#cow(#verbs)),*]),
                kind: #kind,
            }
        }
    });
    quote!(#cow(&[#(#extra),*]))
}

/// The printer columns, one `PrinterColumn` per `printcolumn(...)`, as a borrowed slice.
fn printer_columns(krate: &syn::Path, attrs: &Attrs) -> TokenStream {
    let cow = cow();
    let columns = attrs.print_columns.iter().map(|column| {
        let value = |lit: &Option<LitStr>| lit.as_ref().map(LitStr::value);
        let name = value(&column.name).unwrap_or_default();
        let type_ = value(&column.type_).unwrap_or_default();
        let json_path = value(&column.json_path).unwrap_or_default();
        let format = opt_str(value(&column.format));
        let description = opt_str(value(&column.description));
        let priority = column.priority.as_ref().map_or(0, |(_, p)| *p);
        quote! {
            #krate::PrinterColumn {
                name: #cow(#name),
                type_: #cow(#type_),
                format: #format,
                description: #description,
                priority: #priority,
                json_path: #cow(#json_path),
            }
        }
    });
    quote!(#cow(&[#(#columns),*]))
}

/// The body of `Resource::schema`: a call to the `schema = ...` function, or else the
/// type's schemars schema converted once into a structural schema (panicking with the
/// reasons when it is not one).
fn schema_body(krate: &syn::Path, attrs: &Attrs, ident: &syn::Ident) -> TokenStream {
    if let Some(function) = &attrs.schema {
        return quote_spanned!(function.span()=> #function());
    }
    let schemars = quote!(#krate::__private::schemars);
    let message = format!(
        "kapi: the JSON schema of `{ident}` is not a valid structural schema; fix the type \
         or give it `#[resource(schema = ...)]`: {{}}"
    );
    quote_spanned! {ident.span()=>
        static SCHEMA: ::std::sync::OnceLock<#krate::schema::Schema> = ::std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| {
            let json_schema = #schemars::SchemaGenerator::default().into_root_schema_for::<Self>();
            match #krate::schema::Schema::from_json_schema(json_schema.as_value()) {
                ::core::result::Result::Ok(schema) => schema,
                ::core::result::Result::Err(errors) => {
                    let errors: ::std::vec::Vec<::std::string::String> =
                        errors.iter().map(::std::string::ToString::to_string).collect();
                    ::core::panic!(#message, errors.join("; "))
                }
            }
        })
    }
}

/// The bodies of `metadata` and `metadata_mut`, spanned at the `metadata` field's type
/// (or the type's name) so a mismatched type is reported there.
fn metadata_accessors(input: &Input<'_>) -> (TokenStream, TokenStream) {
    let metadata_ty = input
        .fields
        .as_ref()
        .and_then(|f| f.metadata)
        .map(|f| f.ty.span());
    let metadata_span = metadata_ty.unwrap_or_else(|| input.ident.span());
    let metadata = quote_spanned!(metadata_span=> &self.metadata);
    let metadata_mut = quote_spanned!(metadata_span=> &mut self.metadata);
    (metadata, metadata_mut)
}

/// A placeholder impl emitted next to the errors, for plain structs only (anything
/// else has to change shape anyway).
fn fallback(input: &Input<'_>) -> TokenStream {
    if input.fields.is_none() || !input.original.generics.params.is_empty() {
        return TokenStream::new();
    }
    let krate = krate(input);
    let ident = input.ident;
    let object_meta = object_meta(&krate);
    quote! {
        #[automatically_derived]
        impl #krate::Resource for #ident {
            const GROUP: &'static str = "";
            const VERSION: &'static str = "";
            const KIND: &'static str = "";
            const PLURAL: &'static str = "";
            type Hooks = #krate::NoHooks;

            fn info() -> &'static #krate::ResourceInfo {
                ::core::unreachable!()
            }

            fn schema() -> &'static #krate::schema::Schema {
                ::core::unreachable!()
            }

            fn metadata(&self) -> &#object_meta {
                ::core::unreachable!()
            }

            fn metadata_mut(&mut self) -> &mut #object_meta {
                ::core::unreachable!()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    fn expand(input: TokenStream) -> String {
        let input: syn::DeriveInput = syn::parse2(input).expect("test input parses");
        let output = super::derive(&input);
        let file: syn::File = syn::parse2(output).expect("expansion parses as a file");
        prettyplease::unparse(&file)
    }

    #[test]
    fn gadget() {
        let out = expand(quote! {
            #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Resource)]
            #[resource(
                group = "example.kapi.dev",
                version = "v1alpha1",
                namespaced,
                status,
                scale(
                    spec_replicas_path = ".spec.replicas",
                    status_replicas_path = ".status.replicas",
                    label_selector_path = ".status.selector",
                ),
                shortname = "gd",
                shortname = "gdg",
                category = "all",
                printcolumn(name = "Color", type = "string", json_path = ".spec.color"),
                printcolumn(
                    name = "Replicas",
                    type = "integer",
                    format = "int32",
                    json_path = ".spec.replicas",
                    description = "Desired replicas",
                    priority = 1,
                ),
                selectable_field = ".spec.color",
                hooks = GadgetHooks,
            )]
            pub struct Gadget {
                pub metadata: ObjectMeta,
                pub spec: GadgetSpec,
                pub status: Option<GadgetStatus>,
            }
        });
        insta::assert_snapshot!(out);
    }

    #[test]
    fn minimal_cluster_scoped() {
        let out = expand(quote! {
            #[resource(group = "", version = "v1")]
            struct Policy {
                metadata: ObjectMeta,
            }
        });
        insta::assert_snapshot!(out);
    }

    #[test]
    fn explicit_names_schema_and_crate() {
        let out = expand(quote! {
            #[resource(
                group = "example.kapi.dev",
                version = "v2",
                kind = "Widget",
                plural = "widgetz",
                singular = "wdgt",
                list_kind = "WidgetCollection",
                deprecated,
                deprecation_warning = "v2 is going away",
                served = true,
                storage = false,
                schema = crate::schemas::widget_v2,
                crate = "my_kapi",
            )]
            struct WidgetV2 {
                metadata: ObjectMeta,
            }
        });
        assert!(
            !out.contains("kapi_core"),
            "custom crate path leaves no default behind:\n{out}"
        );
        insta::assert_snapshot!(out);
    }

    #[test]
    fn errors_come_with_a_fallback_impl() {
        let out = expand(quote! {
            #[resource(group = "example.kapi.dev", shortnames = "x")]
            struct Broken {
                metadata: ObjectMeta,
            }
        });
        insta::assert_snapshot!(out);
    }
}
