//! `#[derive(Resource)]`: proc_macro2 in, proc_macro2 out, so the expansion can be
//! snapshot-tested without a compiler.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, LitStr, parse_quote};

use super::ast::Input;
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

fn impl_resource(input: &Input<'_>) -> TokenStream {
    let krate = krate(input);
    let attrs = &input.attrs;
    let ident = input.ident;
    let Names {
        group,
        version,
        kind,
        list_kind,
        plural,
        singular,
    } = Names::resolve(input);

    let cow = quote!(::std::borrow::Cow::Borrowed);
    let some = quote!(::core::option::Option::Some);
    let none = quote!(::core::option::Option::None);
    let opt_str = |value: Option<String>| match value {
        Some(s) => quote!(#some(#cow(#s))),
        None => none.clone(),
    };
    let strs = |lits: &[LitStr]| {
        let values = lits.iter().map(LitStr::value);
        quote!(#cow(&[#(#cow(#values)),*]))
    };

    let is_set = |flag: &Option<super::attr::Flag>, default: bool| {
        flag.as_ref().map_or(default, |f| f.value)
    };
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

    let scale = match &attrs.scale {
        Some(scale) => {
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
                #some(#krate::ScaleInfo {
                    spec_replicas_path: #cow(#spec),
                    status_replicas_path: #cow(#status),
                    label_selector_path: #selector,
                })
            }
        }
        None => none.clone(),
    };

    let extra = attrs.extra_subresources.iter().map(|lit| {
        let value = lit.value();
        let (name, verbs) = value.split_once('=').unwrap_or((value.as_str(), ""));
        let verbs = verbs.split(',').map(str::trim).filter(|v| !v.is_empty());
        quote! {
            #krate::resource::ExtraSubresource {
                name: #cow(#name),
                verbs: #cow(&[#(#cow(#verbs)),*]),
            }
        }
    });
    let extra = quote!(#cow(&[#(#extra),*]));

    let print_columns = attrs.print_columns.iter().map(|column| {
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

    let short_names = strs(&attrs.short_names);
    let categories = strs(&attrs.categories);
    let selectable_fields = strs(&attrs.selectable_fields);
    let verbs = if attrs.verbs.is_empty() {
        quote!(#krate::resource::ALL_VERBS)
    } else {
        strs(&attrs.verbs)
    };

    let hooks = match &attrs.hooks {
        Some(hooks) => quote!(#hooks),
        None => quote!(#krate::NoHooks),
    };

    let schema_body = match &attrs.schema {
        Some(function) => quote_spanned!(function.span()=> #function()),
        None => {
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
    };

    let object_meta =
        quote!(#krate::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta);
    let metadata_ty = input
        .fields
        .as_ref()
        .and_then(|f| f.metadata)
        .map(|f| f.ty.span());
    let metadata_span = metadata_ty.unwrap_or_else(|| ident.span());
    let metadata = quote_spanned!(metadata_span=> &self.metadata);
    let metadata_mut = quote_spanned!(metadata_span=> &mut self.metadata);

    quote! {
        #[automatically_derived]
        impl #krate::Resource for #ident {
            const GROUP: &'static str = #group;
            const VERSION: &'static str = #version;
            const KIND: &'static str = #kind;
            const PLURAL: &'static str = #plural;
            type Hooks = #hooks;

            fn info() -> &'static #krate::ResourceInfo {
                static INFO: #krate::ResourceInfo = #krate::ResourceInfo {
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
                    printer_columns: #cow(&[#(#print_columns),*]),
                    selectable_fields: #selectable_fields,
                    verbs: #verbs,
                    served: #served,
                    storage: #storage,
                    deprecated: #deprecated,
                    deprecation_warning: #deprecation_warning,
                };
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

/// A placeholder impl emitted next to the errors, for plain structs only (anything
/// else has to change shape anyway).
fn fallback(input: &Input<'_>) -> TokenStream {
    if input.fields.is_none() || !input.original.generics.params.is_empty() {
        return TokenStream::new();
    }
    let krate = krate(input);
    let ident = input.ident;
    let object_meta =
        quote!(#krate::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta);
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
