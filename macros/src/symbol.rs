//! The names of every `#[resource(...)]` key, so that attribute names are typed
//! constants and not stray strings (serde's `symbol.rs`), plus the "did you mean"
//! suggestion for misspelled keys.

use std::fmt::{self, Display};

use syn::{Ident, Path};

/// One attribute key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Symbol(&'static str);

/// The attribute itself: `#[resource(...)]`.
pub const RESOURCE: Symbol = Symbol("resource");

/// `group = "example.kapi.dev"`.
pub const GROUP: Symbol = Symbol("group");
/// `version = "v1"`.
pub const VERSION: Symbol = Symbol("version");
/// `kind = "Widget"`.
pub const KIND: Symbol = Symbol("kind");
/// `plural = "widgets"`.
pub const PLURAL: Symbol = Symbol("plural");
/// `singular = "widget"`.
pub const SINGULAR: Symbol = Symbol("singular");
/// `list_kind = "WidgetList"`.
pub const LIST_KIND: Symbol = Symbol("list_kind");
/// `namespaced`.
pub const NAMESPACED: Symbol = Symbol("namespaced");
/// `status`.
pub const STATUS: Symbol = Symbol("status");
/// `deprecated`.
pub const DEPRECATED: Symbol = Symbol("deprecated");
/// `deprecation_warning = "..."`.
pub const DEPRECATION_WARNING: Symbol = Symbol("deprecation_warning");
/// `served = false`.
pub const SERVED: Symbol = Symbol("served");
/// `storage = false`.
pub const STORAGE: Symbol = Symbol("storage");
/// `scale(...)`.
pub const SCALE: Symbol = Symbol("scale");
/// `shortname = "wd"`.
pub const SHORTNAME: Symbol = Symbol("shortname");
/// `category = "all"`.
pub const CATEGORY: Symbol = Symbol("category");
/// `printcolumn(...)`.
pub const PRINTCOLUMN: Symbol = Symbol("printcolumn");
/// `selectable_field = ".spec.color"`.
pub const SELECTABLE_FIELD: Symbol = Symbol("selectable_field");
/// `verb = "get"` (repeatable; all eight standard verbs when absent).
pub const VERB: Symbol = Symbol("verb");
/// `subresource = "binding=create"` (repeatable): a subresource besides status and
/// scale, with its verbs.
pub const SUBRESOURCE: Symbol = Symbol("subresource");
/// `hooks = path::to::Type`.
pub const HOOKS: Symbol = Symbol("hooks");
/// `schema = path::to::function`.
pub const SCHEMA: Symbol = Symbol("schema");
/// `crate = "::kapi_core"`.
pub const CRATE: Symbol = Symbol("crate");

/// `scale(spec_replicas_path = ...)`.
pub const SPEC_REPLICAS_PATH: Symbol = Symbol("spec_replicas_path");
/// `scale(status_replicas_path = ...)`.
pub const STATUS_REPLICAS_PATH: Symbol = Symbol("status_replicas_path");
/// `scale(label_selector_path = ...)`.
pub const LABEL_SELECTOR_PATH: Symbol = Symbol("label_selector_path");

/// `printcolumn(name = ...)`.
pub const NAME: Symbol = Symbol("name");
/// `printcolumn(type = ...)`.
pub const TYPE: Symbol = Symbol("type");
/// `printcolumn(json_path = ...)`.
pub const JSON_PATH: Symbol = Symbol("json_path");
/// `printcolumn(description = ...)`.
pub const DESCRIPTION: Symbol = Symbol("description");
/// `printcolumn(format = ...)`.
pub const FORMAT: Symbol = Symbol("format");
/// `printcolumn(priority = ...)`.
pub const PRIORITY: Symbol = Symbol("priority");

/// Every key of `#[resource(...)]`, in documentation order.
pub const RESOURCE_KEYS: &[Symbol] = &[
    GROUP,
    VERSION,
    KIND,
    PLURAL,
    SINGULAR,
    LIST_KIND,
    NAMESPACED,
    STATUS,
    SCALE,
    SHORTNAME,
    CATEGORY,
    PRINTCOLUMN,
    SELECTABLE_FIELD,
    VERB,
    SUBRESOURCE,
    DEPRECATED,
    DEPRECATION_WARNING,
    SERVED,
    STORAGE,
    HOOKS,
    SCHEMA,
    CRATE,
];

/// Every key of `scale(...)`.
pub const SCALE_KEYS: &[Symbol] = &[
    SPEC_REPLICAS_PATH,
    STATUS_REPLICAS_PATH,
    LABEL_SELECTOR_PATH,
];

/// Every key of `printcolumn(...)`.
pub const PRINTCOLUMN_KEYS: &[Symbol] = &[NAME, TYPE, JSON_PATH, DESCRIPTION, FORMAT, PRIORITY];

/// The allowed `printcolumn(type = ...)` values.
pub const PRINTCOLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];

impl Symbol {
    /// The key as written in the attribute.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl Display for Symbol {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.0)
    }
}

/// The key in `known` closest to `word`, if it is close enough to be a likely typo
/// (`shortnames` → `shortname`, `namespace` → `namespaced`, `listKind` → `list_kind`).
pub fn suggest(word: &str, known: &[Symbol]) -> Option<Symbol> {
    let normalized = normalize(word);
    if let Some(exact) = known.iter().find(|k| normalize(k.0) == normalized) {
        return Some(*exact);
    }
    let best = known
        .iter()
        .map(|k| (edit_distance(&normalized, &normalize(k.0)), *k))
        .min_by_key(|(distance, _)| *distance)?;
    let allowed = (word.len() / 3).max(1);
    (best.0 <= allowed).then_some(best.1)
}

/// Lowercase with `_` and `-` removed, so `listKind`, `list-kind` and `list_kind` meet.
fn normalize(word: &str) -> String {
    word.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Levenshtein distance between two short ASCII-ish strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_keys() {
        assert_eq!(suggest("shortnames", RESOURCE_KEYS), Some(SHORTNAME));
        assert_eq!(suggest("namespace", RESOURCE_KEYS), Some(NAMESPACED));
        assert_eq!(suggest("listKind", RESOURCE_KEYS), Some(LIST_KIND));
        assert_eq!(suggest("printcolumns", RESOURCE_KEYS), Some(PRINTCOLUMN));
        assert_eq!(suggest("jsonPath", PRINTCOLUMN_KEYS), Some(JSON_PATH));
        assert_eq!(suggest("zzz", RESOURCE_KEYS), None);
    }
}
