//! The resource struct of one version: `#[derive(Resource)]` with its attributes, and
//! the embedded schema it is validated with.

use kapi_core::crd::{CustomResourceDefinition, Version};
use kapi_core::resource::Scope;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::{common_attrs, fields, type_def};
use super::{doc_attrs, ident};
use crate::model::{ResourceDef, TypeDef, VersionDef, field_ident_name};

/// Every item of one resource version, in module `at`: its types, schema and `Resource`
/// impl. With `shared_definitions`, the schema's `$ref`s are resolved against the
/// generated root's `schema_definitions()`.
pub fn resource_items(
    res: &ResourceDef,
    vdef: &VersionDef,
    at: &[String],
    shared_definitions: bool,
) -> TokenStream {
    let crd = &res.crd;
    let version = &crd.versions[vdef.index];
    let mut items = TokenStream::new();
    let Some((TypeDef::Struct(root), nested)) = vdef.types.split_first() else {
        return items;
    };
    let snake = field_ident_name(&crd.names.kind).to_uppercase();
    let json_const = format_ident!("{}_SCHEMA_JSON", snake);
    let schema_fn = format_ident!("{}_schema", snake.to_lowercase());
    let json = raw_string(&serde_json::to_string(&version.schema_json).unwrap_or_default());
    let attrs = resource_attr(res, crd, version, &schema_fn, res.hooks.as_deref());
    let doc = doc_attrs(
        root.doc
            .as_deref()
            .or(Some(&format!("A {} ({}).", crd.names.kind, crd.name))),
    );
    let name = ident(&root.name);
    let common = common_attrs(quote!(::kapi_core::Resource,));
    let fields = fields(root, at);
    let parse = if shared_definitions {
        let up = at.iter().map(|_| quote!(super::));
        quote!(::kapi_core::embedded_schema_with(#json_const, ::std::option::Option::Some(#(#up)* schema_definitions())))
    } else {
        quote!(::kapi_core::embedded_schema(#json_const))
    };
    let kind = &crd.names.kind;
    let api_version = if crd.group.is_empty() {
        version.name.clone()
    } else {
        format!("{}/{}", crd.group, version.name)
    };
    let schema_doc = format!(
        " The `openAPIV3Schema` of {} {}, as written in its schema file.",
        kind, version.name
    );
    items.extend(quote! {
        #[doc = #schema_doc]
        pub const #json_const: &str = #json;

        /// The parsed schema, built once on first use.
        pub fn #schema_fn() -> &'static ::kapi_core::schema::Schema {
            static SCHEMA: ::std::sync::OnceLock<::kapi_core::schema::Schema> = ::std::sync::OnceLock::new();
            SCHEMA.get_or_init(|| #parse)
        }

        #doc
        #common
        #attrs
        pub struct #name {
            #fields
        }

        impl #name {
            /// The `apiVersion` of this version.
            pub const API_VERSION: &'static str = #api_version;
        }
    });
    for t in nested {
        items.extend(type_def(t, at));
    }
    items
}

fn resource_attr(
    res: &ResourceDef,
    crd: &CustomResourceDefinition,
    version: &Version,
    schema_fn: &proc_macro2::Ident,
    hooks: Option<&str>,
) -> TokenStream {
    let group = &crd.group;
    let v = &version.name;
    let kind = &crd.names.kind;
    let plural = &crd.names.plural;
    let singular = &crd.names.singular;
    let list_kind = &crd.names.list_kind;
    let mut parts = vec![
        quote!(group = #group),
        quote!(version = #v),
        quote!(kind = #kind),
        quote!(plural = #plural),
        quote!(singular = #singular),
        quote!(list_kind = #list_kind),
    ];
    if crd.scope == Scope::Namespaced {
        parts.push(quote!(namespaced));
    }
    if version.subresources.status {
        parts.push(quote!(status));
    }
    if let Some(scale) = &version.subresources.scale {
        let spec = scale.spec_replicas_path.as_ref();
        let status = scale.status_replicas_path.as_ref();
        let selector = scale.label_selector_path.as_ref().map(|s| {
            let s = s.as_ref();
            quote!(, label_selector_path = #s)
        });
        parts.push(
            quote!(scale(spec_replicas_path = #spec, status_replicas_path = #status #selector)),
        );
    }
    for s in &crd.names.short_names {
        parts.push(quote!(shortname = #s));
    }
    for c in &crd.names.categories {
        parts.push(quote!(category = #c));
    }
    for col in version.printer_columns.iter() {
        let name = col.name.as_ref();
        let ty = col.type_.as_ref();
        let path = col.json_path.as_ref();
        let mut inner = vec![
            quote!(name = #name),
            quote!(type = #ty),
            quote!(json_path = #path),
        ];
        if let Some(d) = &col.description {
            let d = d.as_ref();
            inner.push(quote!(description = #d));
        }
        if let Some(f) = &col.format {
            let f = f.as_ref();
            inner.push(quote!(format = #f));
        }
        if col.priority != 0 {
            let p = col.priority;
            inner.push(quote!(priority = #p));
        }
        parts.push(quote!(printcolumn(#(#inner),*)));
    }
    for f in &version.selectable_fields {
        parts.push(quote!(selectable_field = #f));
    }
    if version.deprecated {
        parts.push(quote!(deprecated));
    }
    if let Some(w) = &version.deprecation_warning {
        parts.push(quote!(deprecation_warning = #w));
    }
    if !version.served {
        parts.push(quote!(served = false));
    }
    if !version.storage {
        parts.push(quote!(storage = false));
    }
    for entry in crate::validate::extra_subresources(res) {
        parts.push(quote!(subresource = #entry));
    }
    if let Some(verbs) = crate::validate::verbs(res) {
        for v in verbs {
            parts.push(quote!(verb = #v));
        }
    }
    parts.push(quote!(schema = #schema_fn));
    if let Some(h) = hooks {
        // Validated as a path when the model was built.
        if let Ok(path) = syn::parse_str::<syn::Path>(h) {
            parts.push(quote!(hooks = #path));
        }
    }
    quote!(#[resource(#(#parts),*)])
}

/// `r#"..."#` with enough hashes, so embedded JSON stays readable in generated files.
pub(crate) fn raw_string(s: &str) -> TokenStream {
    let mut hashes = String::from("#");
    while s.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"{s}\"{hashes}")
        .parse()
        .unwrap_or_else(|_| quote!(#s))
}
