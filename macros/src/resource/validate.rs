//! Every rule a `#[derive(Resource)]` input must follow beyond syntax, as checks on the
//! parsed input (thiserror's `valid.rs`). Each error points at the attribute or field it
//! is about.

use syn::LitStr;

use super::ast::Input;
use super::names;
use crate::ctxt::Ctxt;
use crate::symbol;

impl Input<'_> {
    /// Reports every rule the input breaks.
    pub fn validate(&self, cx: &Ctxt) {
        self.check_generics(cx);
        self.check_required(cx);
        self.check_names(cx);
        self.check_fields(cx);
        self.check_scale(cx);
        self.check_extra_subresources(cx);
        self.check_print_columns(cx);
        self.check_paths(cx);
    }

    fn check_generics(&self, cx: &Ctxt) {
        let generics = &self.original.generics;
        if !generics.params.is_empty() {
            cx.error_spanned_by(
                generics,
                "#[derive(Resource)] does not support generic parameters: a resource's info \
                 and schema are statics of one concrete type",
            );
        }
    }

    fn check_required(&self, cx: &Ctxt) {
        let attrs = &self.attrs;
        let mut missing = Vec::new();
        for key in [symbol::GROUP, symbol::VERSION] {
            if !attrs.present.contains(&key) {
                missing.push(key);
            }
        }
        if missing.is_empty() {
            return;
        }
        let keys: Vec<String> = missing.iter().map(|k| format!("`{k}`")).collect();
        let what = if keys.len() == 1 {
            format!("missing required attribute {}", keys[0])
        } else {
            format!("missing required attributes {}", keys.join(" and "))
        };
        match &attrs.first {
            Some(attr) => cx.error_spanned_by(
                attr,
                format!("{what}, e.g. `#[resource(group = \"example.kapi.dev\", version = \"v1\")]`"),
            ),
            None => cx.error_spanned_by(
                self.ident,
                "missing `#[resource(...)]` attribute: #[derive(Resource)] needs at least the \
                 group and version, e.g. `#[resource(group = \"example.kapi.dev\", version = \"v1\")]`",
            ),
        }
    }

    fn check_names(&self, cx: &Ctxt) {
        let attrs = &self.attrs;
        if let Some(group) = &attrs.group {
            let value = group.value();
            if !value.is_empty() {
                report(cx, group, "group", names::dns1123_subdomain_error(&value));
            }
        }
        let labels = [
            (
                &attrs.version,
                "version",
                names::dns1035_label_error as fn(&str) -> Option<String>,
            ),
            (&attrs.kind, "kind", names::kind_error),
            (&attrs.list_kind, "list_kind", names::kind_error),
            (&attrs.plural, "plural", names::dns1123_label_error),
            (&attrs.singular, "singular", names::dns1123_label_error),
        ];
        for (lit, key, rule) in labels {
            if let Some(lit) = lit {
                check_name(cx, lit, key, rule);
            }
        }
        if attrs.kind.is_none() {
            // The kind defaults to the type name, which then has to be a valid kind.
            let name = self.ident.to_string();
            if let Some(problem) = names::kind_error(&name) {
                cx.error_spanned_by(
                    self.ident,
                    format!("the kind defaults to the type name `{name}`, which {problem}; set `kind = \"...\"`"),
                );
            }
        }
        for lit in &attrs.short_names {
            check_name(cx, lit, "shortname", names::dns1123_label_error);
        }
        for lit in &attrs.categories {
            check_name(cx, lit, "category", names::dns1123_label_error);
        }
        if let Some(warning) = &attrs.deprecation_warning {
            if warning.value().trim().is_empty() {
                cx.error_spanned_by(warning, "`deprecation_warning` must not be empty");
            }
            if !attrs.deprecated.as_ref().is_some_and(|f| f.value) {
                cx.error_spanned_by(warning, "`deprecation_warning` needs the `deprecated` flag");
            }
        }
    }

    fn check_fields(&self, cx: &Ctxt) {
        let Some(fields) = &self.fields else { return };
        if fields.metadata.is_none() {
            cx.error_spanned_by(
                self.ident,
                "#[derive(Resource)] needs a field `metadata: ObjectMeta` \
                 (k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)",
            );
        }
        // With an explicit schema (generated code) the schema decides: a CRD may declare
        // the status subresource without a status property, as Tekton's do.
        if let Some(status) = self
            .attrs
            .status
            .as_ref()
            .filter(|_| self.attrs.schema.is_none())
        {
            if status.value && fields.status.is_none() {
                cx.error_spanned_by(
                    &status.path,
                    "the `status` subresource needs a `status` field on the struct",
                );
            }
        }
    }

    fn check_extra_subresources(&self, cx: &Ctxt) {
        const VERBS: [&str; 4] = ["create", "get", "patch", "update"];
        for lit in &self.attrs.extra_subresources {
            let value = lit.value();
            let Some((name, verbs)) = value.split_once('=') else {
                cx.error_spanned_by(
                    lit,
                    "expected `subresource = \"name=verb,verb\"`, e.g. \"binding=create\"",
                );
                continue;
            };
            let name_ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
            if !name_ok || matches!(name, "status" | "scale") {
                cx.error_spanned_by(
                    lit,
                    format!(
                        "`{name}` is not a name for another subresource: lower-case letters \
                         and digits, not `status` or `scale` (they have their own flags)"
                    ),
                );
            }
            let (verbs, kind) = verbs.split_once('@').unwrap_or((verbs, ""));
            // `@group/version/Kind`, the group empty for core: `@policy/v1/Eviction`.
            let parts: Vec<&str> = kind.split('/').collect();
            let kind_ok = parts.len() == 3 && !parts[1].is_empty() && !parts[2].is_empty();
            if value.contains('@') && !kind_ok {
                cx.error_spanned_by(
                    lit,
                    format!("`@{kind}` is not `@group/version/Kind` (the group empty for core)"),
                );
            }
            let verbs: Vec<&str> = verbs.split(',').map(str::trim).collect();
            if let Some(bad) = verbs.iter().find(|v| !VERBS.contains(v)) {
                cx.error_spanned_by(
                    lit,
                    format!(
                        "unknown subresource verb `{bad}`: expected create, get, patch or update"
                    ),
                );
            }
        }
    }

    fn check_scale(&self, cx: &Ctxt) {
        let Some(scale) = &self.attrs.scale else {
            return;
        };
        if !self.attrs.status.as_ref().is_some_and(|f| f.value) {
            cx.error_spanned_by(
                &scale.path,
                "the `scale` subresource needs the `status` subresource: add the `status` flag",
            );
        }
        if scale.spec_replicas_path.is_none() {
            cx.error_spanned_by(
                &scale.path,
                "`scale` is missing `spec_replicas_path`, e.g. `spec_replicas_path = \".spec.replicas\"`",
            );
        }
        if scale.status_replicas_path.is_none() {
            cx.error_spanned_by(
                &scale.path,
                "`scale` is missing `status_replicas_path`, e.g. `status_replicas_path = \".status.replicas\"`",
            );
        }
        if let Some(path) = &scale.spec_replicas_path {
            check_under(cx, path, "spec_replicas_path", &[".spec."]);
        }
        if let Some(path) = &scale.status_replicas_path {
            check_under(cx, path, "status_replicas_path", &[".status."]);
        }
        if let Some(path) = &scale.label_selector_path {
            check_under(cx, path, "label_selector_path", &[".status.", ".spec."]);
        }
    }

    fn check_print_columns(&self, cx: &Ctxt) {
        for column in &self.attrs.print_columns {
            let mut missing = Vec::new();
            if column.name.is_none() {
                missing.push("`name`");
            }
            if column.type_.is_none() {
                missing.push("`type`");
            }
            if column.json_path.is_none() {
                missing.push("`json_path`");
            }
            if !missing.is_empty() {
                cx.error_spanned_by(
                    &column.path,
                    format!(
                        "`printcolumn` is missing {}: `printcolumn(name = \"Size\", type = \"string\", json_path = \".spec.size\")`",
                        missing.join(", ")
                    ),
                );
            }
            if let Some(name) = &column.name {
                if name.value().trim().is_empty() {
                    cx.error_spanned_by(name, "`printcolumn` name must not be empty");
                }
            }
            if let Some(ty) = &column.type_ {
                if !symbol::PRINTCOLUMN_TYPES.contains(&ty.value().as_str()) {
                    cx.error_spanned_by(
                        ty,
                        format!(
                            "unsupported printcolumn type {:?}: must be one of \"integer\", \"number\", \"string\", \"boolean\" or \"date\"",
                            ty.value()
                        ),
                    );
                }
            }
            if let Some(path) = &column.json_path {
                check_json_path(cx, path, "json_path");
            }
            if let Some((lit, value)) = &column.priority {
                if *value < 0 {
                    cx.error_spanned_by(lit, "`priority` must be 0 or more");
                }
            }
        }
    }

    fn check_paths(&self, cx: &Ctxt) {
        for field in &self.attrs.selectable_fields {
            check_json_path(cx, field, "selectable_field");
        }
        for verb in &self.attrs.verbs {
            if !STANDARD_VERBS.contains(&verb.value().as_str()) {
                cx.error_spanned_by(
                    verb,
                    format!(
                        "unknown verb {:?}: expected one of {}",
                        verb.value(),
                        STANDARD_VERBS.join(", ")
                    ),
                );
            }
        }
    }
}

fn check_name(cx: &Ctxt, lit: &LitStr, key: &str, rule: fn(&str) -> Option<String>) {
    let value = lit.value();
    if value.is_empty() {
        cx.error_spanned_by(lit, format!("`{key}` must not be empty"));
    } else {
        report(cx, lit, key, rule(&value));
    }
}

fn report(cx: &Ctxt, lit: &LitStr, key: &str, problem: Option<String>) {
    if let Some(problem) = problem {
        cx.error_spanned_by(lit, format!("invalid `{key}` {:?}: {problem}", lit.value()));
    }
}

/// The verbs a resource can serve, as kube-apiserver's discovery names them.
const STANDARD_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn check_json_path(cx: &Ctxt, lit: &LitStr, key: &str) {
    let value = lit.value();
    if !value.starts_with('.') || value.len() < 2 {
        cx.error_spanned_by(
            lit,
            format!("invalid `{key}` {value:?}: must be a JSON path starting with `.`, e.g. \".spec.size\""),
        );
    }
}

fn check_under(cx: &Ctxt, lit: &LitStr, key: &str, prefixes: &[&str]) {
    let value = lit.value();
    if !prefixes
        .iter()
        .any(|p| value.starts_with(p) && value.len() > p.len())
    {
        let under: Vec<String> = prefixes
            .iter()
            .map(|p| format!("`{}`", p.trim_end_matches('.')))
            .collect();
        cx.error_spanned_by(
            lit,
            format!(
                "invalid `{key}` {value:?}: must be a JSON path under {}",
                under.join(" or ")
            ),
        );
    }
}
