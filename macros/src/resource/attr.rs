//! The typed model of `#[resource(...)]` and its parser.
//!
//! Parsing records every problem in the [`Ctxt`] and carries on with the next key, so
//! one derive reports all mistakes at once; only a syntax error stops the attribute it
//! occurs in. Values keep their tokens so later checks can point at them.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprLit, Lit, LitBool, LitInt, LitStr, Token};

use crate::ctxt::Ctxt;
use crate::symbol::{self, Symbol};

/// A bare flag such as `namespaced`, or its `namespaced = false` form.
#[derive(Clone)]
pub struct Flag {
    /// The key as written, for error spans.
    pub path: syn::Path,
    /// The value; `true` for the bare form.
    pub value: bool,
}

/// `scale(...)`.
pub struct Scale {
    /// The `scale` key, for error spans.
    pub path: syn::Path,
    /// `spec_replicas_path` (required).
    pub spec_replicas_path: Option<LitStr>,
    /// `status_replicas_path` (required).
    pub status_replicas_path: Option<LitStr>,
    /// `label_selector_path`.
    pub label_selector_path: Option<LitStr>,
}

/// One `printcolumn(...)`.
pub struct PrintColumn {
    /// The `printcolumn` key, for error spans.
    pub path: syn::Path,
    /// `name` (required).
    pub name: Option<LitStr>,
    /// `type` (required).
    pub type_: Option<LitStr>,
    /// `json_path` (required).
    pub json_path: Option<LitStr>,
    /// `description`.
    pub description: Option<LitStr>,
    /// `format`.
    pub format: Option<LitStr>,
    /// `priority`, with its literal.
    pub priority: Option<(LitInt, i32)>,
}

/// Everything `#[resource(...)]` attributes said, unvalidated.
#[derive(Default)]
pub struct Attrs {
    /// The first `#[resource(...)]` attribute, for errors about missing keys.
    pub first: Option<TokenStream>,
    /// `group`.
    pub group: Option<LitStr>,
    /// `version`.
    pub version: Option<LitStr>,
    /// `kind`.
    pub kind: Option<LitStr>,
    /// `plural`.
    pub plural: Option<LitStr>,
    /// `singular`.
    pub singular: Option<LitStr>,
    /// `list_kind`.
    pub list_kind: Option<LitStr>,
    /// `namespaced`.
    pub namespaced: Option<Flag>,
    /// `status`.
    pub status: Option<Flag>,
    /// `deprecated`.
    pub deprecated: Option<Flag>,
    /// `deprecation_warning`.
    pub deprecation_warning: Option<LitStr>,
    /// `served`.
    pub served: Option<Flag>,
    /// `storage`.
    pub storage: Option<Flag>,
    /// `scale(...)`.
    pub scale: Option<Scale>,
    /// Every `shortname`.
    pub short_names: Vec<LitStr>,
    /// Every `category`.
    pub categories: Vec<LitStr>,
    /// Every `printcolumn(...)`.
    pub print_columns: Vec<PrintColumn>,
    /// Every `selectable_field`.
    pub selectable_fields: Vec<LitStr>,
    /// Every `verb`.
    pub verbs: Vec<LitStr>,
    /// Every `subresource = "name=verb,verb"`.
    pub extra_subresources: Vec<LitStr>,
    /// `hooks`.
    pub hooks: Option<syn::Type>,
    /// `schema`.
    pub schema: Option<syn::Path>,
    /// `crate`.
    pub krate: Option<syn::Path>,
    /// Every known key written, even with an invalid value, so that a bad value is not
    /// also reported as a missing key.
    pub present: Vec<Symbol>,
}

/// Reads every `#[resource(...)]` in `attrs`.
pub fn parse(cx: &Ctxt, attrs: &[syn::Attribute]) -> Attrs {
    let mut out = Attrs::default();
    for attr in attrs {
        if attr.path() != &symbol::RESOURCE {
            continue;
        }
        if out.first.is_none() {
            out.first = Some(attr.to_token_stream());
        }
        if !matches!(attr.meta, syn::Meta::List(_)) {
            cx.error_spanned_by(
                attr,
                "expected `#[resource(group = \"...\", version = \"...\", ...)]`",
            );
            continue;
        }
        if let Err(err) = attr.parse_nested_meta(|meta| parse_key(cx, &mut out, &meta)) {
            cx.syn_error(err);
        }
    }
    out
}

fn parse_key(cx: &Ctxt, out: &mut Attrs, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    let path = &meta.path;
    if let Some(key) = symbol::RESOURCE_KEYS.iter().find(|k| *path == **k) {
        out.present.push(*key);
    }
    // Single-valued string keys, with the example shown when the value is not a string.
    let strings = [
        (symbol::GROUP, &mut out.group, "\"example.kapi.dev\""),
        (symbol::VERSION, &mut out.version, "\"v1\""),
        (symbol::KIND, &mut out.kind, "\"Widget\""),
        (symbol::PLURAL, &mut out.plural, "\"widgets\""),
        (symbol::SINGULAR, &mut out.singular, "\"widget\""),
        (symbol::LIST_KIND, &mut out.list_kind, "\"WidgetList\""),
        (
            symbol::DEPRECATION_WARNING,
            &mut out.deprecation_warning,
            "\"example.kapi.dev/v1 Widget is deprecated; use v2\"",
        ),
    ];
    if let Some((key, slot, example)) = strings.into_iter().find(|(k, ..)| *path == *k) {
        set(cx, meta, slot, lit_str(cx, meta, key, example)?);
        return Ok(());
    }
    let flags = [
        (symbol::NAMESPACED, &mut out.namespaced),
        (symbol::STATUS, &mut out.status),
        (symbol::DEPRECATED, &mut out.deprecated),
    ];
    if let Some((key, slot)) = flags.into_iter().find(|(k, _)| *path == *k) {
        set(cx, meta, slot, flag(cx, meta, key)?);
        return Ok(());
    }
    if *path == symbol::SERVED {
        set(
            cx,
            meta,
            &mut out.served,
            bool_value(cx, meta, symbol::SERVED)?,
        );
    } else if *path == symbol::STORAGE {
        set(
            cx,
            meta,
            &mut out.storage,
            bool_value(cx, meta, symbol::STORAGE)?,
        );
    } else if *path == symbol::SCALE {
        let scale = scale(cx, meta)?;
        set(cx, meta, &mut out.scale, scale);
    } else if *path == symbol::SHORTNAME {
        out.short_names
            .extend(lit_str(cx, meta, symbol::SHORTNAME, "\"wd\"")?);
    } else if *path == symbol::CATEGORY {
        out.categories
            .extend(lit_str(cx, meta, symbol::CATEGORY, "\"all\"")?);
    } else if *path == symbol::PRINTCOLUMN {
        out.print_columns.extend(print_column(cx, meta)?);
    } else if *path == symbol::SELECTABLE_FIELD {
        let value = lit_str(cx, meta, symbol::SELECTABLE_FIELD, "\".spec.color\"")?;
        out.selectable_fields.extend(value);
    } else if *path == symbol::VERB {
        out.verbs
            .extend(lit_str(cx, meta, symbol::VERB, "\"get\"")?);
    } else if *path == symbol::SUBRESOURCE {
        out.extra_subresources.extend(lit_str(
            cx,
            meta,
            symbol::SUBRESOURCE,
            "\"binding=create\"",
        )?);
    } else if *path == symbol::HOOKS {
        set(cx, meta, &mut out.hooks, hooks_type(cx, meta)?);
    } else if *path == symbol::SCHEMA {
        let expected = "expected `schema` to be the path of a `fn() -> &'static Schema`, \
                        e.g. `schema = crate::schemas::widget`";
        set(
            cx,
            meta,
            &mut out.schema,
            path_value(cx, meta, symbol::SCHEMA, expected)?,
        );
    } else if *path == symbol::CRATE {
        let expected =
            "expected `crate` to be the path of kapi-core, e.g. `crate = \"::kapi_core\"`";
        set(
            cx,
            meta,
            &mut out.krate,
            path_value(cx, meta, symbol::CRATE, expected)?,
        );
    } else {
        unknown_key(cx, meta, symbol::RESOURCE_KEYS, "resource")?;
    }
    Ok(())
}

/// Stores a non-repeatable value, reporting a second occurrence at its key.
fn set<T>(cx: &Ctxt, meta: &ParseNestedMeta<'_>, slot: &mut Option<T>, value: Option<T>) {
    let Some(value) = value else { return };
    if slot.is_some() {
        let name = meta.path.to_token_stream().to_string();
        cx.error_spanned_by(&meta.path, format!("duplicate `{name}` attribute"));
    } else {
        *slot = Some(value);
    }
}

/// Reports an unknown key, with a suggestion when one is close, and skips its value.
fn unknown_key(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    known: &[Symbol],
    attribute: &str,
) -> syn::Result<()> {
    let name = meta.path.to_token_stream().to_string().replace(' ', "");
    let nested = [
        ("scale", symbol::SCALE_KEYS),
        ("printcolumn", symbol::PRINTCOLUMN_KEYS),
    ];
    let belongs_to = nested
        .iter()
        .find(|(_, keys)| keys.iter().any(|k| k.as_str() == name));
    let message = match (symbol::suggest(&name, known), belongs_to) {
        (_, Some((parent, _))) if attribute == "resource" => {
            format!("`{name}` belongs inside `{parent}(...)`, not directly in `#[resource(...)]`")
        }
        (Some(suggestion), _) => {
            format!("unknown `{attribute}` attribute `{name}`, did you mean `{suggestion}`?")
        }
        (None, _) => {
            let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            format!(
                "unknown `{attribute}` attribute `{name}`, expected one of {}",
                list.join(", ")
            )
        }
    };
    cx.error_spanned_by(&meta.path, message);
    skip_value(meta)
}

/// Consumes whatever follows a key: `= expr`, `(...)` or nothing.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

/// The expression after `key =`, or an error at the key when there is no `=`.
fn value_expr(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: Symbol,
    example: &str,
) -> syn::Result<Option<Expr>> {
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(&meta.path, format!("expected a value: `{key} = {example}`"));
        skip_value(meta)?;
        return Ok(None);
    }
    let mut expr = meta.value()?.parse::<Expr>()?;
    while let Expr::Group(group) = expr {
        expr = *group.expr;
    }
    Ok(Some(expr))
}

/// `key = "string"`.
fn lit_str(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: Symbol,
    example: &str,
) -> syn::Result<Option<LitStr>> {
    Ok(match value_expr(cx, meta, key, example)? {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        })) => Some(s),
        Some(other) => {
            cx.error_spanned_by(
                other,
                format!("expected `{key}` to be a string literal: `{key} = {example}`"),
            );
            None
        }
        None => None,
    })
}

/// `key = true|false`.
fn bool_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: Symbol) -> syn::Result<Option<Flag>> {
    Ok(match value_expr(cx, meta, key, "false")? {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Bool(LitBool { value, .. }),
            ..
        })) => Some(Flag {
            path: meta.path.clone(),
            value,
        }),
        Some(other) => {
            cx.error_spanned_by(other, format!("expected `{key}` to be `true` or `false`"));
            None
        }
        None => None,
    })
}

/// A bare flag, or `flag = true|false`.
fn flag(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: Symbol) -> syn::Result<Option<Flag>> {
    if meta.input.peek(Token![=]) {
        return bool_value(cx, meta, key);
    }
    if meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` is a flag and takes no arguments: write `{key}`"),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    Ok(Some(Flag {
        path: meta.path.clone(),
        value: true,
    }))
}

/// `key = path::to::item` or `key = "path::to::item"`.
fn path_value(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: Symbol,
    expected: &str,
) -> syn::Result<Option<syn::Path>> {
    Ok(match value_expr(cx, meta, key, "path::to::item")? {
        Some(Expr::Path(p)) if p.qself.is_none() => Some(p.path),
        other => parse_quoted(cx, other, expected),
    })
}

/// The value of a key written as a string (`"path::to::Item"`), parsed as `T`; anything
/// else is reported as `expected`.
fn parse_quoted<T: syn::parse::Parse>(cx: &Ctxt, value: Option<Expr>, expected: &str) -> Option<T> {
    match value {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        })) => match s.parse::<T>() {
            Ok(v) => Some(v),
            Err(_) => {
                cx.error_spanned_by(s, expected);
                None
            }
        },
        Some(other) => {
            cx.error_spanned_by(other, expected);
            None
        }
        None => None,
    }
}

/// `hooks = path::to::Type` (or the same in a string).
fn hooks_type(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<syn::Type>> {
    let expected = "expected `hooks` to be a type implementing `kapi_core::Hooks<Self>`, \
                    e.g. `hooks = WidgetHooks`";
    Ok(match value_expr(cx, meta, symbol::HOOKS, "WidgetHooks")? {
        Some(Expr::Path(p)) => Some(syn::Type::Path(syn::TypePath {
            qself: p.qself,
            path: p.path,
        })),
        other => parse_quoted(cx, other, expected),
    })
}

/// `scale(spec_replicas_path = "...", status_replicas_path = "...", label_selector_path = "...")`.
fn scale(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Scale>> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            "expected `scale(spec_replicas_path = \".spec.replicas\", \
             status_replicas_path = \".status.replicas\")`",
        );
        skip_value(meta)?;
        return Ok(None);
    }
    let mut scale = Scale {
        path: meta.path.clone(),
        spec_replicas_path: None,
        status_replicas_path: None,
        label_selector_path: None,
    };
    meta.parse_nested_meta(|inner| {
        let path = &inner.path;
        if *path == symbol::SPEC_REPLICAS_PATH {
            let value = lit_str(cx, &inner, symbol::SPEC_REPLICAS_PATH, "\".spec.replicas\"")?;
            set(cx, &inner, &mut scale.spec_replicas_path, value);
        } else if *path == symbol::STATUS_REPLICAS_PATH {
            let value = lit_str(
                cx,
                &inner,
                symbol::STATUS_REPLICAS_PATH,
                "\".status.replicas\"",
            )?;
            set(cx, &inner, &mut scale.status_replicas_path, value);
        } else if *path == symbol::LABEL_SELECTOR_PATH {
            let value = lit_str(
                cx,
                &inner,
                symbol::LABEL_SELECTOR_PATH,
                "\".status.selector\"",
            )?;
            set(cx, &inner, &mut scale.label_selector_path, value);
        } else {
            unknown_key(cx, &inner, symbol::SCALE_KEYS, "scale")?;
        }
        Ok(())
    })?;
    Ok(Some(scale))
}

/// `printcolumn(name = "...", type = "...", json_path = "...", ...)`.
fn print_column(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<PrintColumn>> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            "expected `printcolumn(name = \"Size\", type = \"string\", json_path = \".spec.size\")`",
        );
        skip_value(meta)?;
        return Ok(None);
    }
    let mut column = PrintColumn {
        path: meta.path.clone(),
        name: None,
        type_: None,
        json_path: None,
        description: None,
        format: None,
        priority: None,
    };
    meta.parse_nested_meta(|inner| {
        let path = &inner.path;
        if *path == symbol::NAME {
            set(
                cx,
                &inner,
                &mut column.name,
                lit_str(cx, &inner, symbol::NAME, "\"Size\"")?,
            );
        } else if *path == symbol::TYPE {
            set(
                cx,
                &inner,
                &mut column.type_,
                lit_str(cx, &inner, symbol::TYPE, "\"string\"")?,
            );
        } else if *path == symbol::JSON_PATH {
            let value = lit_str(cx, &inner, symbol::JSON_PATH, "\".spec.size\"")?;
            set(cx, &inner, &mut column.json_path, value);
        } else if *path == symbol::DESCRIPTION {
            let value = lit_str(cx, &inner, symbol::DESCRIPTION, "\"The widget's size\"")?;
            set(cx, &inner, &mut column.description, value);
        } else if *path == symbol::FORMAT {
            set(
                cx,
                &inner,
                &mut column.format,
                lit_str(cx, &inner, symbol::FORMAT, "\"int32\"")?,
            );
        } else if *path == symbol::PRIORITY {
            let value = priority(cx, &inner)?;
            set(cx, &inner, &mut column.priority, value);
        } else {
            unknown_key(cx, &inner, symbol::PRINTCOLUMN_KEYS, "printcolumn")?;
        }
        Ok(())
    })?;
    Ok(Some(column))
}

/// `priority = 1`.
fn priority(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<(LitInt, i32)>> {
    let expected = "expected `priority` to be a non-negative integer: `priority = 1`";
    Ok(match value_expr(cx, meta, symbol::PRIORITY, "1")? {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        })) => match int.base10_parse::<i32>() {
            Ok(value) => Some((int, value)),
            Err(_) => {
                cx.error_spanned_by(int, expected);
                None
            }
        },
        Some(other) => {
            cx.error_spanned_by(other, expected);
            None
        }
        None => None,
    })
}
