//! kube-apiserver's `--encryption-provider-config` file: an
//! `apiserver.config.k8s.io/v1` `EncryptionConfiguration`, parsed and checked as
//! kube-apiserver checks it, into one [`Transformer`] per configured resource.
//!
//! ```yaml
//! apiVersion: apiserver.config.k8s.io/v1
//! kind: EncryptionConfiguration
//! resources:
//!   - resources: [secrets, widgets.example.kapi.dev]
//!     providers:
//!       - aescbc:
//!           keys:
//!             - name: key2          # writes use the first key
//!               secret: <base64 of 32 random bytes>
//!             - name: key1          # still read
//!               secret: <base64>
//!       - identity: {}              # values written before encryption was on
//!   - resources: ["*.apps"]         # every resource of a group; "*." is the core group
//!     providers: [{secretbox: {keys: [{name: k, secret: <base64 of 32 bytes>}]}}]
//! ```
//!
//! A resource listed in several entries gets the providers of all of them, in order;
//! a resource is looked up as itself first, then as `*.<group>`, then as `*.*`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

use super::providers::{KeyError, Provider, Transformer};

/// The `apiVersion` of the file.
pub const API_VERSION: &str = "apiserver.config.k8s.io/v1";
/// The `kind` of the file.
pub const KIND: &str = "EncryptionConfiguration";

/// What a configuration entry's `resources` item names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResourcePattern {
    /// One resource: `secrets` (core group) or `widgets.example.kapi.dev`.
    Resource {
        /// The API group, empty for the core group.
        group: String,
        /// The plural resource name.
        plural: String,
    },
    /// Every resource of a group: `*.apps`, or `*.` for the core group.
    Group(String),
    /// Every resource: `*.*`.
    All,
}

impl std::fmt::Display for ResourcePattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Resource { group, plural } if group.is_empty() => f.write_str(plural),
            Self::Resource { group, plural } => write!(f, "{plural}.{group}"),
            Self::Group(group) => write!(f, "*.{group}"),
            Self::All => f.write_str("*.*"),
        }
    }
}

/// A configuration file that cannot be used: which file, and every problem found, each
/// with its line and field path (`resources[0].providers[1].aescbc.keys[0].secret`).
/// Secrets never appear in it.
#[derive(Debug, thiserror::Error)]
#[error("encryption provider configuration {}: {}", file.display(), problems.join("; "))]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// What is wrong, one item per problem.
    pub problems: Vec<String>,
}

/// A parsed, checked `EncryptionConfiguration`.
#[derive(Clone, Debug)]
pub struct EncryptionConfig {
    transformers: HashMap<ResourcePattern, Arc<Transformer>>,
    /// The patterns in the order the file first lists them, for stable output.
    order: Vec<ResourcePattern>,
}

impl EncryptionConfig {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            problems: vec![format!("cannot be read: {e}")],
        })?;
        Self::from_yaml(&text, path)
    }

    /// Parses and checks `text`, the content of `file` (named in errors).
    pub fn from_yaml(text: &str, file: &Path) -> Result<Self, ConfigError> {
        let mut parser = Parser::default();
        let config = parser.document(text);
        match config {
            Some(config) if parser.problems.is_empty() => Ok(config),
            _ => Err(ConfigError {
                file: file.to_path_buf(),
                problems: parser.problems,
            }),
        }
    }

    /// The providers of a resource, or `None` when the configuration does not name it
    /// (its values are then stored as they are). A resource the configuration knows by
    /// another name (events.k8s.io Events are `events`) is looked up by that name: the
    /// server says which ([`crate::encryption`] knows no resource).
    pub fn transformer_for(&self, group: &str, plural: &str) -> Option<Arc<Transformer>> {
        let exact = ResourcePattern::Resource {
            group: group.to_string(),
            plural: plural.to_string(),
        };
        [
            exact,
            ResourcePattern::Group(group.to_string()),
            ResourcePattern::All,
        ]
        .iter()
        .find_map(|p| self.transformers.get(p))
        .cloned()
    }

    /// Whether the configuration names the resource, itself or by a wildcard.
    pub fn matches(&self, group: &str, plural: &str) -> bool {
        self.transformer_for(group, plural).is_some()
    }

    /// The patterns of the file, in the order it first lists them.
    pub fn patterns(&self) -> &[ResourcePattern] {
        &self.order
    }

    /// The storage key prefixes to encrypt, each with its providers: every resource the
    /// file names explicitly (served now or not, e.g. one a CustomResourceDefinition
    /// adds later), and every resource of `known` a wildcard matches. `key_prefix`
    /// gives a resource's key prefix from its group and plural.
    pub fn key_prefixes<'a>(
        &self,
        known: impl IntoIterator<Item = (&'a str, &'a str)>,
        key_prefix: impl Fn(&str, &str) -> String,
    ) -> Vec<(String, Arc<Transformer>)> {
        let mut resources: Vec<(String, String)> = self
            .order
            .iter()
            .filter_map(|p| match p {
                ResourcePattern::Resource { group, plural } => {
                    Some((group.clone(), plural.clone()))
                }
                _ => None,
            })
            .collect();
        for (group, plural) in known {
            let resource = (group.to_string(), plural.to_string());
            if !resources.contains(&resource) {
                resources.push(resource);
            }
        }
        resources
            .into_iter()
            .filter_map(|(group, plural)| {
                let transformer = self.transformer_for(&group, &plural)?;
                Some((key_prefix(&group, &plural), transformer))
            })
            .collect()
    }
}

/// Walks the YAML, collecting every problem rather than stopping at the first.
#[derive(Default)]
struct Parser {
    problems: Vec<String>,
}

type Node<'a> = MarkedYaml<'a>;

fn line(node: &Node<'_>) -> usize {
    node.span.start.line()
}

/// A scalar as the string it stands for (`name: 1` names key "1").
fn scalar_str(node: &Node<'_>) -> Option<String> {
    match &node.data {
        YamlData::Value(Scalar::String(s)) => Some(s.to_string()),
        YamlData::Value(Scalar::Integer(i)) => Some(i.to_string()),
        YamlData::Tagged(_, inner) => scalar_str(inner),
        _ => None,
    }
}

impl Parser {
    fn problem(&mut self, node: &Node<'_>, path: &str, message: impl std::fmt::Display) {
        let at = if path.is_empty() {
            String::new()
        } else {
            format!(" {path}:")
        };
        self.problems
            .push(format!("line {}:{at} {message}", line(node)));
    }

    /// The fields of a mapping, refusing ones not in `allowed`.
    fn fields<'n, 'a>(
        &mut self,
        node: &'n Node<'a>,
        path: &str,
        allowed: &[&str],
    ) -> Option<Vec<(String, &'n Node<'a>)>> {
        let YamlData::Mapping(entries) = &node.data else {
            self.problem(node, path, "must be a mapping");
            return None;
        };
        let mut fields = Vec::new();
        for (k, v) in entries {
            let Some(name) = scalar_str(k) else {
                self.problem(k, path, "mapping keys must be strings");
                continue;
            };
            if allowed.contains(&name.as_str()) {
                fields.push((name, v));
            } else {
                let at = join(path, &name);
                self.problem(
                    k,
                    &at,
                    format!("unknown field (expected one of: {})", allowed.join(", ")),
                );
            }
        }
        Some(fields)
    }

    fn sequence<'n, 'a>(&mut self, node: &'n Node<'a>, path: &str) -> &'n [Node<'a>] {
        match &node.data {
            YamlData::Sequence(items) => items,
            _ => {
                self.problem(node, path, "must be a list");
                &[]
            }
        }
    }

    fn string(&mut self, node: &Node<'_>, path: &str) -> Option<String> {
        let s = scalar_str(node);
        if s.is_none() {
            self.problem(node, path, "must be a string");
        }
        s
    }

    fn document(&mut self, text: &str) -> Option<EncryptionConfig> {
        let docs = match MarkedYaml::load_from_str(text) {
            Ok(docs) => docs,
            Err(e) => {
                self.problems.push(format!(
                    "line {}: invalid YAML: {}",
                    e.marker().line(),
                    e.info()
                ));
                return None;
            }
        };
        let mut docs = docs
            .iter()
            .filter(|d| !matches!(d.data, YamlData::Value(Scalar::Null)));
        let Some(root) = docs.next() else {
            self.problems.push("the file is empty".into());
            return None;
        };
        if let Some(extra) = docs.next() {
            self.problem(extra, "", "only one YAML document is allowed");
        }
        let fields = self.fields(root, "", &["apiVersion", "kind", "resources"])?;
        let (mut api_version, mut kind, mut resources) = (None, None, None);
        for (name, value) in fields {
            match name.as_str() {
                "apiVersion" => api_version = self.string(value, "apiVersion"),
                "kind" => kind = self.string(value, "kind"),
                _ => resources = Some(value),
            }
        }
        match api_version.as_deref() {
            Some(API_VERSION) => {}
            Some(other) => self.problem(
                root,
                "apiVersion",
                format!("is {other:?}, expected {API_VERSION:?}"),
            ),
            None => self.problem(root, "apiVersion", format!("missing ({API_VERSION})")),
        }
        match kind.as_deref() {
            Some(KIND) => {}
            Some(other) => self.problem(root, "kind", format!("is {other:?}, expected {KIND:?}")),
            None => self.problem(root, "kind", format!("missing ({KIND})")),
        }
        let Some(resources) = resources else {
            self.problem(root, "resources", "at least one entry is required");
            return None;
        };
        let entries = self.sequence(resources, "resources");
        if entries.is_empty() && is_sequence(resources) {
            self.problem(resources, "resources", "at least one entry is required");
        }
        let mut config = EncryptionConfig {
            transformers: HashMap::new(),
            order: Vec::new(),
        };
        let mut chains: HashMap<ResourcePattern, Vec<Provider>> = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let path = format!("resources[{i}]");
            let Some((patterns, providers)) = self.entry(entry, &path) else {
                continue;
            };
            for (pattern, node) in patterns {
                // kube-apiserver refuses a rule an earlier wildcard would hide.
                let masks = [
                    match &pattern {
                        ResourcePattern::Resource { group, .. } => {
                            Some(ResourcePattern::Group(group.clone()))
                        }
                        _ => None,
                    },
                    Some(ResourcePattern::All),
                ];
                if let Some(mask) = masks
                    .into_iter()
                    .flatten()
                    .find(|m| *m != pattern && chains.contains_key(m))
                {
                    self.problem(
                        node,
                        &format!("{path}.resources"),
                        format!("{pattern} is masked by the earlier rule {mask}"),
                    );
                    continue;
                }
                if !chains.contains_key(&pattern) {
                    config.order.push(pattern.clone());
                }
                chains
                    .entry(pattern)
                    .or_default()
                    .extend(providers.iter().cloned());
            }
        }
        config.transformers = chains
            .into_iter()
            .filter_map(|(p, chain)| Some((p, Arc::new(Transformer::new(chain)?))))
            .collect();
        Some(config)
    }

    /// One `resources[]` entry: its patterns (with their nodes) and its providers.
    #[allow(clippy::type_complexity)]
    fn entry<'n, 'a>(
        &mut self,
        entry: &'n Node<'a>,
        path: &str,
    ) -> Option<(Vec<(ResourcePattern, &'n Node<'a>)>, Vec<Provider>)> {
        let fields = self.fields(entry, path, &["resources", "providers"])?;
        let (mut patterns, mut providers) = (Vec::new(), Vec::new());
        let (mut has_resources, mut has_providers) = (false, false);
        for (name, value) in fields {
            let at = join(path, &name);
            if name == "resources" {
                has_resources = true;
                let items = self.sequence(value, &at);
                if items.is_empty() && is_sequence(value) {
                    self.problem(value, &at, "at least one resource is required");
                }
                for (j, item) in items.iter().enumerate() {
                    let item_path = format!("{at}[{j}]");
                    if let Some(p) = self.pattern(item, &item_path) {
                        if patterns.iter().any(|(q, _)| *q == p) {
                            self.problem(item, &item_path, format!("{p} is listed twice"));
                        } else {
                            patterns.push((p, item));
                        }
                    }
                }
                self.overlap(&patterns, &at);
            } else {
                has_providers = true;
                let items = self.sequence(value, &at);
                if items.is_empty() && is_sequence(value) {
                    self.problem(value, &at, "at least one provider is required");
                }
                for (j, item) in items.iter().enumerate() {
                    providers.extend(self.provider(item, &format!("{at}[{j}]")));
                }
            }
        }
        if !has_resources {
            self.problem(entry, &join(path, "resources"), "missing");
        }
        if !has_providers {
            self.problem(entry, &join(path, "providers"), "missing");
        }
        Some((patterns, providers))
    }

    /// `secrets` and `*.` in one entry: the wildcard would hide the other.
    fn overlap(&mut self, patterns: &[(ResourcePattern, &Node<'_>)], path: &str) {
        for (p, node) in patterns {
            let hidden_by = patterns.iter().find(|(q, _)| match (q, p) {
                (ResourcePattern::All, other) => *other != ResourcePattern::All,
                (ResourcePattern::Group(g), ResourcePattern::Resource { group, .. }) => g == group,
                _ => false,
            });
            if let Some((q, _)) = hidden_by {
                self.problem(
                    node,
                    path,
                    format!("{p} overlaps {q} in the same list; the wildcard would hide it"),
                );
            }
        }
    }

    /// One `resources[]` item, as kube-apiserver parses a group-resource: the text up
    /// to the first dot is the resource, the rest the group.
    fn pattern(&mut self, node: &Node<'_>, path: &str) -> Option<ResourcePattern> {
        let text = self.string(node, path)?;
        let (plural, group) = text.split_once('.').unwrap_or((&text, ""));
        let refuse = |why: &str| Some(why.to_string());
        let refusal = if text.chars().any(char::is_uppercase) {
            refuse("resource names are lowercase")
        } else if plural.is_empty() {
            refuse("a resource name is required before the dot")
        } else if text == "*" {
            refuse("use \"*.\" for every resource of the core group, or \"*.*\" for all")
        } else if group == "*" && plural != "*" {
            refuse("one resource across all groups (\"<resource>.*\") is not supported")
        } else if group == "events.k8s.io" {
            refuse("events.k8s.io events are stored as core events: use \"events\"")
        } else if group == "extensions" {
            refuse("the extensions group has been removed")
        } else if [
            "apiserveripinfo",
            "serviceipallocations",
            "servicenodeportallocations",
        ]
        .contains(&text.as_str())
        {
            refuse("resources without a REST API cannot be encrypted")
        } else {
            None
        };
        if let Some(why) = refusal {
            self.problem(node, path, format!("{text:?}: {why}"));
            return None;
        }
        Some(match (plural, group) {
            ("*", "*") => ResourcePattern::All,
            ("*", group) => ResourcePattern::Group(group.to_string()),
            (plural, group) => ResourcePattern::Resource {
                group: group.to_string(),
                plural: plural.to_string(),
            },
        })
    }

    /// One `providers[]` item, a provider per key.
    fn provider(&mut self, node: &Node<'_>, path: &str) -> Vec<Provider> {
        const KINDS: [&str; 5] = ["identity", "aescbc", "aesgcm", "secretbox", "kms"];
        let Some(fields) = self.fields(node, path, &KINDS) else {
            return Vec::new();
        };
        if fields.len() != 1 {
            self.problem(
                node,
                path,
                format!(
                    "exactly one of {} is required, found {}",
                    KINDS.join(", "),
                    fields.len()
                ),
            );
            return Vec::new();
        }
        let (kind, value) = &fields[0];
        let at = join(path, kind);
        match kind.as_str() {
            "identity" => {
                let empty = matches!(value.data, YamlData::Value(Scalar::Null))
                    || self
                        .fields(value, &at, &[])
                        .is_some_and(|fields| fields.is_empty());
                if empty {
                    vec![Provider::identity()]
                } else {
                    Vec::new()
                }
            }
            "kms" => {
                self.problem(
                    value,
                    &at,
                    "KMS providers are not supported by kapi; use aescbc, aesgcm or secretbox",
                );
                Vec::new()
            }
            _ => self.keys(kind, value, &at),
        }
    }

    /// The `keys` of an `aescbc`, `aesgcm` or `secretbox` provider.
    fn keys(&mut self, kind: &str, node: &Node<'_>, path: &str) -> Vec<Provider> {
        let Some(fields) = self.fields(node, path, &["keys"]) else {
            return Vec::new();
        };
        let Some((_, keys)) = fields.first() else {
            self.problem(node, &join(path, "keys"), "at least one key is required");
            return Vec::new();
        };
        let at = join(path, "keys");
        let items = self.sequence(keys, &at);
        if items.is_empty() && is_sequence(keys) {
            self.problem(keys, &at, "at least one key is required");
        }
        let mut providers = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let key_path = format!("{at}[{i}]");
            let Some(fields) = self.fields(item, &key_path, &["name", "secret"]) else {
                continue;
            };
            let (mut name, mut secret) = (None, None);
            for (field, value) in &fields {
                let field_path = join(&key_path, field);
                if field == "name" {
                    name = self.string(value, &field_path);
                } else {
                    secret = Some(*value);
                }
            }
            let Some(name) = name else {
                self.problem(item, &join(&key_path, "name"), "missing");
                continue;
            };
            let secret_path = join(&key_path, "secret");
            let Some(secret_node) = secret else {
                self.problem(item, &secret_path, "missing");
                continue;
            };
            // Never echo the secret, even a malformed one.
            let Some(decoded) = scalar_str(secret_node)
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
            else {
                self.problem(
                    secret_node,
                    &secret_path,
                    "must be base64 (standard encoding)",
                );
                continue;
            };
            let provider = match kind {
                "aescbc" => Provider::aescbc(&name, &decoded),
                "aesgcm" => Provider::aesgcm(&name, &decoded),
                _ => Provider::secretbox(&name, &decoded),
            };
            match provider {
                Ok(p) => providers.push(p),
                Err(e @ KeyError::EmptyName) => {
                    self.problem(item, &join(&key_path, "name"), e);
                }
                Err(e) => self.problem(secret_node, &secret_path, e),
            }
        }
        providers
    }
}

/// Whether `node` is a list (an empty one is then its own problem, not "must be a list").
fn is_sequence(node: &Node<'_>) -> bool {
    matches!(node.data, YamlData::Sequence(_))
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY32: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="; // 32 bytes
    const KEY16: &str = "MDEyMzQ1Njc4OWFiY2RlZg=="; // 16 bytes

    fn parse(text: &str) -> Result<EncryptionConfig, ConfigError> {
        EncryptionConfig::from_yaml(text, Path::new("enc.yaml"))
    }

    fn header(body: &str) -> String {
        format!("apiVersion: {API_VERSION}\nkind: {KIND}\nresources:\n{body}")
    }

    fn prefixes(config: &EncryptionConfig, group: &str, plural: &str) -> Vec<String> {
        config
            .transformer_for(group, plural)
            .map(|t| {
                t.providers()
                    .iter()
                    .map(|p| p.prefix().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn providers_and_keys_in_order() {
        let config = parse(&header(&format!(
            "  - resources: [secrets, widgets.example.kapi.dev]
    providers:
      - aesgcm:
          keys:
            - name: new
              secret: {KEY16}
            - name: old
              secret: {KEY32}
      - secretbox:
          keys: [{{name: sb, secret: {KEY32}}}]
      - aescbc:
          keys: [{{name: 1, secret: {KEY32}}}]
      - identity: {{}}
"
        )))
        .unwrap();
        assert_eq!(
            prefixes(&config, "", "secrets"),
            [
                "k8s:enc:aesgcm:v1:new:",
                "k8s:enc:aesgcm:v1:old:",
                "k8s:enc:secretbox:v1:sb:",
                "k8s:enc:aescbc:v1:1:",
                ""
            ]
        );
        assert!(config.matches("example.kapi.dev", "widgets"));
        assert!(!config.matches("", "configmaps"));
        assert!(!config.matches("example.kapi.dev", "gadgets"));
        assert!(!config.matches("events.k8s.io", "events"));
    }

    #[test]
    fn wildcards_resolve_exact_then_group_then_all() {
        let config = parse(&header(&format!(
            "  - resources: [secrets]
    providers: [{{aescbc: {{keys: [{{name: s, secret: {KEY32}}}]}}}}]
  - resources: ['*.apps']
    providers: [{{aescbc: {{keys: [{{name: apps, secret: {KEY32}}}]}}}}]
  - resources: ['*.']
    providers: [{{aescbc: {{keys: [{{name: core, secret: {KEY32}}}]}}}}]
  - resources: ['*.*']
    providers: [{{aescbc: {{keys: [{{name: all, secret: {KEY32}}}]}}}}]
"
        )))
        .unwrap();
        assert_eq!(prefixes(&config, "", "secrets"), ["k8s:enc:aescbc:v1:s:"]);
        assert_eq!(
            prefixes(&config, "", "configmaps"),
            ["k8s:enc:aescbc:v1:core:"]
        );
        assert_eq!(
            prefixes(&config, "apps", "deployments"),
            ["k8s:enc:aescbc:v1:apps:"]
        );
        assert_eq!(
            prefixes(&config, "batch", "jobs"),
            ["k8s:enc:aescbc:v1:all:"]
        );
        let resolved = config.key_prefixes([("apps", "deployments"), ("batch", "jobs")], |g, p| {
            format!("/registry/{g}/{p}/")
        });
        let keys: Vec<&str> = resolved.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "/registry//secrets/",
                "/registry/apps/deployments/",
                "/registry/batch/jobs/"
            ]
        );
    }

    #[test]
    fn a_resource_in_several_entries_gets_all_their_providers() {
        let config = parse(&header(&format!(
            "  - resources: [secrets]
    providers: [{{aescbc: {{keys: [{{name: a, secret: {KEY32}}}]}}}}]
  - resources: [secrets, configmaps]
    providers: [{{identity: {{}}}}]
"
        )))
        .unwrap();
        assert_eq!(
            prefixes(&config, "", "secrets"),
            ["k8s:enc:aescbc:v1:a:", ""]
        );
        assert_eq!(prefixes(&config, "", "configmaps"), [""]);
    }

    fn problems(text: &str) -> String {
        let err = parse(text).unwrap_err();
        assert_eq!(err.file, Path::new("enc.yaml"));
        let shown = err.to_string();
        assert!(
            shown.starts_with("encryption provider configuration enc.yaml: "),
            "{shown}"
        );
        shown
    }

    #[test]
    fn bad_files_are_explained() {
        let e = problems("resources: [");
        assert!(e.contains("invalid YAML"), "{e}");
        let e = problems("");
        assert!(e.contains("empty"), "{e}");
        let e = problems("apiVersion: v1\nkind: Config\nresources: []\n");
        assert!(e.contains("apiVersion: is \"v1\""), "{e}");
        assert!(e.contains("kind: is \"Config\""), "{e}");
        assert!(e.contains("at least one entry"), "{e}");
        let e = problems(&header(
            "  - resources: [secrets]\n    providers: [{kms: {name: x, endpoint: unix:///k}}]\n",
        ));
        assert!(
            e.contains("line 5: resources[0].providers[0].kms: KMS providers are not supported"),
            "{e}"
        );
        let e = problems(&header(
            "  - resources: [secrets]\n    providers: [{aescbc: {keys: [{name: k, secret: c2hvcnQ=}]}}]\n",
        ));
        assert!(
            e.contains("resources[0].providers[0].aescbc.keys[0].secret: secret is 5 bytes"),
            "{e}"
        );
        assert!(!e.contains("c2hvcnQ="), "the secret must not be shown: {e}");
        let e = problems(&header(
            "  - resources: [secrets]\n    providers: [{secretbox: {keys: [{name: k, secret: '%%'}]}}]\n",
        ));
        assert!(e.contains("must be base64"), "{e}");
        let e = problems(&header(
            "  - resources: [Secrets, '*', 'foo.*']\n    providers: [{identity: {}}]\n",
        ));
        assert!(
            e.contains("lowercase") && e.contains("\"*.\"") && e.contains("across all groups"),
            "{e}"
        );
        let e = problems(&header(
            "  - resources: [secrets, '*.']\n    providers: [{identity: {}}]\n",
        ));
        assert!(e.contains("overlaps"), "{e}");
        let e = problems(&header(
            "  - resources: ['*.*']\n    providers: [{identity: {}}]\n  - resources: [secrets]\n    providers: [{identity: {}}]\n",
        ));
        assert!(e.contains("masked by the earlier rule *.*"), "{e}");
        let e = problems(&header(
            "  - resources: [secrets]\n    provider: [{identity: {}}]\n",
        ));
        assert!(e.contains("resources[0].provider: unknown field"), "{e}");
        assert!(e.contains("resources[0].providers: missing"), "{e}");
        let e = problems(&header(
            "  - resources: [secrets]\n    providers: [{identity: {}, aescbc: {keys: []}}]\n",
        ));
        assert!(e.contains("exactly one of"), "{e}");
    }

    #[test]
    fn a_missing_file_is_named() {
        let err = EncryptionConfig::load(Path::new("/nonexistent/enc.yaml")).unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.contains("/nonexistent/enc.yaml") && shown.contains("cannot be read"),
            "{shown}"
        );
    }
}
