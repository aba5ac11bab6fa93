//! The import configuration (`codegen/builtins.yaml`): which kinds to import, and what
//! the OpenAPI documents do not carry about them.
//!
//! ```yaml
//! apiVersion: kapi.dev/v1alpha1
//! kind: OpenAPIImport
//! groupVersions:
//!   - group: apps            # "" for the core group
//!     version: v1
//!     kinds:
//!       - kind: Deployment
//!         shortNames: [deploy]
//!         categories: [all]
//!         subresources: []   # beyond status and scale, which come from the paths
//!         hooks: crate::hooks::DeploymentHooks
//!         scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas,
//!                 labelSelectorPath: .spec.selector}
//!         printerColumns:
//!           - {name: Ready, type: string, jsonPath: .status.readyReplicas}
//! ```
//!
//! A kind kube serves in two versions that really differ is listed under both: the
//! storage version's entry names the conversion hooks (`conversionHooks`), the other's
//! says where it is stored (`storedAs: v2`) and becomes a second version of the same
//! CRD, with its own schema, columns and subresources.

use std::path::Path;

use kapi_core::field::FieldPath;
use serde_json::{Map, Value};

use crate::diagnostic::Diagnostic;
use crate::load::{Document, parse_documents};

use super::ImportError;

/// The `kind` a configuration document must have.
pub const CONFIG_KIND: &str = "OpenAPIImport";

/// The `apiVersion` a configuration document must have.
pub const CONFIG_API_VERSION: &str = "kapi.dev/v1alpha1";

/// Column types a CustomResourceDefinition accepts in `additionalPrinterColumns`.
const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];

/// A whole configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Group-versions, in file order.
    pub group_versions: Vec<GroupVersion>,
}

/// The kinds to import from one group-version.
#[derive(Clone, Debug, Default)]
pub struct GroupVersion {
    /// API group, `""` for core.
    pub group: String,
    /// Version (`v1`).
    pub version: String,
    /// The kinds, in file order.
    pub kinds: Vec<KindConfig>,
}

/// One kind to import.
#[derive(Clone, Debug, Default)]
pub struct KindConfig {
    /// Kind (`Deployment`).
    pub kind: String,
    /// `spec.names.shortNames`.
    pub short_names: Vec<String>,
    /// `spec.names.categories`.
    pub categories: Vec<String>,
    /// Subresources to serve besides `status` and `scale` (`binding`, `approval`).
    pub subresources: Vec<String>,
    /// A Rust path to the resource's hooks type.
    pub hooks: Option<String>,
    /// The scale subresource's paths, required when the documents show `/scale`.
    pub scale: Option<Scale>,
    /// `additionalPrinterColumns`.
    pub printer_columns: Vec<PrinterColumn>,
    /// Field selector labels kube-apiserver supports beyond `metadata.name` and
    /// `metadata.namespace` (`involvedObject.kind`), written as `selectableFields`.
    pub selectable_fields: Vec<String>,
    /// The version of the group whose entry for this kind is the storage version: this
    /// entry is one more version of that entry's CRD (autoscaling/v1
    /// HorizontalPodAutoscaler beside v2), converted by the storage entry's
    /// `conversion_hooks`. Names and hooks are the storage entry's.
    pub stored_as: Option<String>,
    /// On the storage entry of a kind served in several versions: the Rust path to the
    /// hooks converting between them (`kapi.dev/conversion-hooks`), which complete the
    /// kind's own type too (`kapi.dev/conversion-object-hooks`).
    pub conversion_hooks: Option<String>,
}

/// The paths of a scale subresource.
#[derive(Clone, Debug, Default)]
pub struct Scale {
    /// `specReplicasPath`.
    pub spec_replicas_path: String,
    /// `statusReplicasPath`.
    pub status_replicas_path: String,
    /// `labelSelectorPath`, if any.
    pub label_selector_path: Option<String>,
}

/// One printer column.
#[derive(Clone, Debug, Default)]
pub struct PrinterColumn {
    /// Column name as kube prints it (`Up-to-date`).
    pub name: String,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: String,
    /// JSONPath relative to the object.
    pub json_path: String,
    /// Optional description.
    pub description: Option<String>,
    /// Optional format.
    pub format: Option<String>,
    /// Priority (1 for `-o wide` columns); 0 is omitted.
    pub priority: Option<i64>,
}

impl Config {
    /// Reads and checks a configuration file.
    pub fn read(file: &Path) -> Result<Self, ImportError> {
        let text = std::fs::read_to_string(file).map_err(|source| ImportError::Io {
            path: file.to_path_buf(),
            source,
        })?;
        Self::parse(file, &text)
    }

    /// Parses a configuration read from `file`.
    pub fn parse(file: &Path, text: &str) -> Result<Self, ImportError> {
        let docs = parse_documents(file, text).map_err(ImportError::Config)?;
        let [doc] = docs.as_slice() else {
            return Err(ImportError::Config(vec![Diagnostic {
                file: file.to_path_buf(),
                line: 0,
                column: 0,
                path: String::new(),
                message: format!("expected one YAML document, found {}", docs.len()),
            }]));
        };
        let mut r = Reader {
            doc,
            diags: Vec::new(),
        };
        let config = r.config();
        if r.diags.is_empty() {
            Ok(config)
        } else {
            Err(ImportError::Config(r.diags))
        }
    }
}

struct Reader<'a> {
    doc: &'a Document,
    diags: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn error(&mut self, path: &FieldPath, message: impl Into<String>) {
        self.diags.push(self.doc.diagnostic(path, message));
    }

    fn object<'v>(
        &mut self,
        v: &'v Value,
        path: &FieldPath,
        allowed: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(obj) = v.as_object() else {
            self.error(path, "expected a mapping");
            return None;
        };
        for key in obj.keys() {
            if !allowed.contains(&key.as_str()) {
                self.error(
                    &path.child(key),
                    format!("unknown field (expected one of {})", allowed.join(", ")),
                );
            }
        }
        Some(obj)
    }

    fn string(&mut self, obj: &Map<String, Value>, key: &str, path: &FieldPath) -> Option<String> {
        match obj.get(key) {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.error(&path.child(key), "expected a string");
                None
            }
        }
    }

    fn required(&mut self, obj: &Map<String, Value>, key: &str, path: &FieldPath) -> String {
        if !obj.contains_key(key) {
            self.error(path, format!("missing required field {key}"));
        }
        self.string(obj, key, path).unwrap_or_default()
    }

    fn strings(&mut self, obj: &Map<String, Value>, key: &str, path: &FieldPath) -> Vec<String> {
        let path = path.child(key);
        match obj.get(key) {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| match item {
                    Value::String(s) => Some(s.clone()),
                    _ => {
                        self.error(&path.index(i), "expected a string");
                        None
                    }
                })
                .collect(),
            Some(_) => {
                self.error(&path, "expected a list of strings");
                Vec::new()
            }
        }
    }

    fn list<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        key: &str,
        path: &FieldPath,
    ) -> &'v [Value] {
        match obj.get(key) {
            None => &[],
            Some(Value::Array(items)) => items,
            Some(_) => {
                self.error(&path.child(key), "expected a list");
                &[]
            }
        }
    }

    fn config(&mut self) -> Config {
        let root = FieldPath::root();
        let doc = &self.doc.value;
        let Some(obj) = self.object(doc, &root, &["apiVersion", "kind", "groupVersions"]) else {
            return Config::default();
        };
        if self.string(obj, "kind", &root).as_deref() != Some(CONFIG_KIND) {
            self.error(&root.child("kind"), format!("expected kind: {CONFIG_KIND}"));
        }
        if self.string(obj, "apiVersion", &root).as_deref() != Some(CONFIG_API_VERSION) {
            self.error(
                &root.child("apiVersion"),
                format!("expected apiVersion: {CONFIG_API_VERSION}"),
            );
        }
        let path = root.child("groupVersions");
        let group_versions = self
            .list(obj, "groupVersions", &root)
            .iter()
            .enumerate()
            .filter_map(|(i, gv)| self.group_version(gv, &path.index(i)))
            .collect();
        Config { group_versions }
    }

    fn group_version(&mut self, v: &Value, path: &FieldPath) -> Option<GroupVersion> {
        let obj = self.object(v, path, &["group", "version", "kinds"])?;
        let group = self.required(obj, "group", path);
        let version = self.required(obj, "version", path);
        let kinds_path = path.child("kinds");
        let kinds = self
            .list(obj, "kinds", path)
            .iter()
            .enumerate()
            .filter_map(|(i, k)| self.kind(k, &kinds_path.index(i)))
            .collect();
        Some(GroupVersion {
            group,
            version,
            kinds,
        })
    }

    fn kind(&mut self, v: &Value, path: &FieldPath) -> Option<KindConfig> {
        let obj = self.object(
            v,
            path,
            &[
                "kind",
                "shortNames",
                "categories",
                "subresources",
                "hooks",
                "scale",
                "printerColumns",
                "selectableFields",
                "storedAs",
                "conversionHooks",
            ],
        )?;
        let kind = self.required(obj, "kind", path);
        let subresources = self.strings(obj, "subresources", path);
        for (i, s) in subresources.iter().enumerate() {
            if s == "status" || s == "scale" {
                self.error(
                    &path.child("subresources").index(i),
                    format!("{s} comes from the OpenAPI paths; do not list it"),
                );
            }
        }
        let scale = match obj.get("scale") {
            None => None,
            Some(v) => self.scale(v, &path.child("scale")),
        };
        let columns_path = path.child("printerColumns");
        let printer_columns = self
            .list(obj, "printerColumns", path)
            .iter()
            .enumerate()
            .filter_map(|(i, c)| self.column(c, &columns_path.index(i)))
            .collect();
        if obj.contains_key("storedAs") {
            for key in ["shortNames", "categories", "hooks", "conversionHooks"] {
                if obj.contains_key(key) {
                    self.error(
                        &path.child(key),
                        "set it on the storage version's entry: this one is a version of its CRD",
                    );
                }
            }
        }
        Some(KindConfig {
            kind,
            short_names: self.strings(obj, "shortNames", path),
            categories: self.strings(obj, "categories", path),
            subresources,
            hooks: self.string(obj, "hooks", path),
            scale,
            printer_columns,
            selectable_fields: self.strings(obj, "selectableFields", path),
            stored_as: self.string(obj, "storedAs", path),
            conversion_hooks: self.string(obj, "conversionHooks", path),
        })
    }

    fn scale(&mut self, v: &Value, path: &FieldPath) -> Option<Scale> {
        let obj = self.object(
            v,
            path,
            &[
                "specReplicasPath",
                "statusReplicasPath",
                "labelSelectorPath",
            ],
        )?;
        Some(Scale {
            spec_replicas_path: self.required(obj, "specReplicasPath", path),
            status_replicas_path: self.required(obj, "statusReplicasPath", path),
            label_selector_path: self.string(obj, "labelSelectorPath", path),
        })
    }

    fn column(&mut self, v: &Value, path: &FieldPath) -> Option<PrinterColumn> {
        let obj = self.object(
            v,
            path,
            &[
                "name",
                "type",
                "jsonPath",
                "description",
                "format",
                "priority",
            ],
        )?;
        let type_ = self.required(obj, "type", path);
        if !type_.is_empty() && !COLUMN_TYPES.contains(&type_.as_str()) {
            self.error(
                &path.child("type"),
                format!("expected one of {}", COLUMN_TYPES.join(", ")),
            );
        }
        let priority = match obj.get("priority") {
            None => None,
            Some(p) => match p.as_i64() {
                Some(0) => None,
                Some(n) if n > 0 => Some(n),
                _ => {
                    self.error(&path.child("priority"), "expected a non-negative integer");
                    None
                }
            },
        };
        Some(PrinterColumn {
            name: self.required(obj, "name", path),
            type_,
            json_path: self.required(obj, "jsonPath", path),
            description: self.string(obj, "description", path),
            format: self.string(obj, "format", path),
            priority,
        })
    }
}
