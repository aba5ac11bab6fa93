//! Reading kube-apiserver's OpenAPI v3 documents: their schemas, and the resources,
//! verbs, scopes and subresources their paths show.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ImportError;

/// The prefix of every schema reference in the documents.
pub const COMPONENT_REF: &str = "#/components/schemas/";

/// One schema of `components.schemas`, with the document it came from.
#[derive(Clone, Debug)]
pub struct Definition {
    /// The schema as published.
    pub schema: Value,
    /// The document that holds it (the first one, when several do).
    pub file: PathBuf,
}

/// A resource (`{group}/{version}/{plural}`) as the paths show it.
#[derive(Clone, Debug, Default)]
pub struct Resource {
    /// Whether any path has a `namespaces/{namespace}/` segment.
    pub namespaced: bool,
    /// Verbs of the main resource, in Kubernetes' vocabulary (`create`, `update`, ...).
    pub verbs: BTreeSet<String>,
    /// Subresources the paths show (`status`, `scale`, `binding`, ...).
    pub subresources: BTreeSet<String>,
    /// Each subresource's verbs (`binding` → `create`).
    pub subresource_verbs: BTreeMap<String, BTreeSet<String>>,
    /// What each subresource is posted, as (group, version, kind): `eviction` →
    /// (`policy`, `v1`, `Eviction`).
    pub subresource_kinds: BTreeMap<String, (String, String, String)>,
    /// The kinds of the main resource's operations (`x-kubernetes-group-version-kind`).
    pub kinds: BTreeSet<String>,
}

impl Resource {
    /// Subresource `name` as the `kapi.dev/subresources` annotation lists it:
    /// `name=verb,verb`, the verbs from the paths' actions, with `@group/version/Kind`
    /// when it is posted a kind other than the core one named after it (`binding` takes
    /// a v1 Binding, which discovery assumes; `eviction` a policy/v1 Eviction).
    pub fn subresource_entry(&self, name: &str) -> String {
        let verbs: Vec<&str> = self
            .subresource_verbs
            .get(name)
            .map(|v| v.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let kind = match self.subresource_kinds.get(name) {
            Some((g, v, k)) if !(g.is_empty() && v == "v1" && k.eq_ignore_ascii_case(name)) => {
                format!("@{g}/{v}/{k}")
            }
            _ => String::new(),
        };
        format!("{name}={}{kind}", verbs.join(","))
    }
}

/// Every OpenAPI document read, merged.
#[derive(Clone, Debug, Default)]
pub struct Documents {
    /// The files read, in order.
    pub files: Vec<PathBuf>,
    /// Every schema by name (`io.k8s.api.core.v1.Pod`).
    pub definitions: BTreeMap<String, Definition>,
    /// Every resource by (group, version, plural).
    pub resources: BTreeMap<(String, String, String), Resource>,
    /// Operations whose path or action could not be classified, as `file: METHOD path`.
    pub unclassified: Vec<String>,
}

/// HTTP methods an OpenAPI path item may hold.
const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch"];

impl Documents {
    /// Reads and merges `files`. A schema published by several documents must be the
    /// same in all of them.
    pub fn read(files: &[PathBuf]) -> Result<Self, ImportError> {
        let mut docs = Documents::default();
        for file in files {
            let text = std::fs::read_to_string(file).map_err(|source| ImportError::Io {
                path: file.clone(),
                source,
            })?;
            let value: Value = serde_json::from_str(&text).map_err(|source| ImportError::Json {
                path: file.clone(),
                source,
            })?;
            docs.add(file, &value)?;
        }
        Ok(docs)
    }

    fn add(&mut self, file: &Path, doc: &Value) -> Result<(), ImportError> {
        self.files.push(file.to_path_buf());
        let schemas = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .ok_or_else(|| ImportError::Invalid {
                file: file.to_path_buf(),
                message: "no components.schemas: not an OpenAPI v3 document".into(),
            })?;
        for (name, schema) in schemas {
            match self.definitions.get(name) {
                Some(existing) if existing.schema != *schema => {
                    return Err(ImportError::Invalid {
                        file: file.to_path_buf(),
                        message: format!(
                            "schema {name} differs from the one in {}",
                            existing.file.display()
                        ),
                    });
                }
                Some(_) => {}
                None => {
                    self.definitions.insert(
                        name.clone(),
                        Definition {
                            schema: schema.clone(),
                            file: file.to_path_buf(),
                        },
                    );
                }
            }
        }
        let paths = doc.get("paths").and_then(Value::as_object);
        for (path, item) in paths.into_iter().flatten() {
            for method in METHODS {
                let Some(op) = item.get(*method) else {
                    continue;
                };
                let Some(action) = op.get("x-kubernetes-action").and_then(Value::as_str) else {
                    continue; // discovery (`/apis/apps/v1/`) has no action
                };
                if !self.add_operation(path, method, action, op) {
                    self.unclassified.push(format!(
                        "{}: {} {path} ({action})",
                        file.display(),
                        method.to_uppercase()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Records one operation (`method` in lower case); false when its path or action is
    /// not understood.
    fn add_operation(&mut self, path: &str, method: &str, action: &str, op: &Value) -> bool {
        let Some(p) = ResourcePath::parse(path) else {
            return false;
        };
        let res = self
            .resources
            .entry((p.group.clone(), p.version.clone(), p.plural.clone()))
            .or_default();
        res.namespaced |= p.namespaced;
        let verb = match action {
            "get" | "list" | "patch" | "delete" | "deletecollection" => action,
            "watch" | "watchlist" => "watch",
            "post" => "create",
            "put" => "update",
            // Subresources such as pods/exec connect: kube's discovery names them by
            // method, as its installer does.
            "connect" if p.subresource.is_some() => match method {
                "get" => "get",
                "post" => "create",
                "put" => "update",
                "patch" => "patch",
                "delete" => "delete",
                _ => "",
            },
            _ if p.subresource.is_some() => "",
            _ => return false,
        };
        if let Some(sub) = p.subresource {
            if verb == "create" {
                let gvk = |k: &str| {
                    op.pointer(&format!("/x-kubernetes-group-version-kind/{k}"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                };
                if let (Some(g), Some(v), Some(k)) = (gvk("group"), gvk("version"), gvk("kind")) {
                    res.subresource_kinds.insert(sub.clone(), (g, v, k));
                }
            }
            if !verb.is_empty() {
                res.subresource_verbs
                    .entry(sub.clone())
                    .or_default()
                    .insert(verb.to_string());
            }
            res.subresources.insert(sub);
            return true;
        }
        res.verbs.insert(verb.to_string());
        if let Some(kind) = op
            .pointer("/x-kubernetes-group-version-kind/kind")
            .and_then(Value::as_str)
        {
            res.kinds.insert(kind.to_string());
        }
        true
    }
}

/// What a resource path says: `/apis/{group}/{version}[/watch][/namespaces/{namespace}]
/// /{plural}[/{name}[/{subresource}[/...]]]` (`/api/v1/...` for the core group).
#[derive(Debug, PartialEq, Eq)]
struct ResourcePath {
    group: String,
    version: String,
    namespaced: bool,
    plural: String,
    subresource: Option<String>,
}

impl ResourcePath {
    fn parse(path: &str) -> Option<Self> {
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, version, mut rest) = match segs.as_slice() {
            ["api", version, rest @ ..] => ("", *version, rest),
            ["apis", group, version, rest @ ..] => (*group, *version, rest),
            _ => return None,
        };
        if rest.first() == Some(&"watch") {
            rest = &rest[1..];
        }
        let mut namespaced = false;
        if let ["namespaces", "{namespace}", tail @ ..] = rest {
            namespaced = true;
            rest = tail;
        }
        let (plural, subresource) = match rest {
            [plural] | [plural, "{name}"] => (*plural, None),
            [plural, "{name}", sub, ..] => (*plural, Some(sub.to_string())),
            _ => return None,
        };
        if plural.starts_with('{') {
            return None;
        }
        Some(ResourcePath {
            group: group.to_string(),
            version: version.to_string(),
            namespaced,
            plural: plural.to_string(),
            subresource,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(p: &str) -> Option<(String, bool, String, Option<String>)> {
        ResourcePath::parse(p).map(|r| (r.group, r.namespaced, r.plural, r.subresource))
    }

    #[test]
    fn paths() {
        assert_eq!(
            parse("/api/v1/namespaces/{namespace}/pods/{name}/binding"),
            Some(("".into(), true, "pods".into(), Some("binding".into())))
        );
        assert_eq!(
            parse("/api/v1/namespaces/{name}/status"),
            Some(("".into(), false, "namespaces".into(), Some("status".into())))
        );
        assert_eq!(
            parse("/apis/apps/v1/watch/namespaces/{namespace}/deployments"),
            Some(("apps".into(), true, "deployments".into(), None))
        );
        assert_eq!(
            parse("/api/v1/nodes/{name}/proxy/{path}"),
            Some(("".into(), false, "nodes".into(), Some("proxy".into())))
        );
        assert_eq!(parse("/apis/apps/v1/"), None);
    }
}
