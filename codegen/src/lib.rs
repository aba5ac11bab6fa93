//! # kapi-codegen
//!
//! Turns resource definitions written as Kubernetes `CustomResourceDefinition` YAML into
//! typed Rust: one struct per resource version (with `#[derive(kapi_core::Resource)]`),
//! nested structs and string enums for everything in its schema, the schema itself
//! embedded for defaulting, pruning and validation, and one `register` function that
//! installs every served resource into a kapi server.
//!
//! ## In `build.rs`
//!
//! ```no_run
//! // build.rs: the body of `fn main`
//! kapi_codegen::Builder::new()
//!     .schemas_dir("schemas")
//!     .hooks("widgets.example.kapi.dev", "crate::hooks::WidgetHooks")
//!     .generate()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//!
//! ```ignore
//! // src/lib.rs
//! include!(concat!(env!("OUT_DIR"), "/kapi_generated.rs"));
//! ```
//!
//! The crate needs `kapi-core` as a dependency; generated code reaches serde, schemars
//! and k8s-openapi through it. `generate` prints `cargo:rerun-if-changed` for every
//! schema file and folder.
//!
//! ## As a command
//!
//! The `kapi` binary drives this library: `kapi generate --schemas DIR --out DIR`
//! writes a formatted module tree ([`Builder::generate_module_tree`]); `kapi check
//! --schemas DIR` only validates ([`Builder::check`]); `kapi import-openapi` runs
//! [`import`]. Problems are reported as `file:line:column: yaml.path: message`.
//!
//! It must not run at serve time or know how a server serves what it generates: its
//! output is Rust for `kapi-core`'s traits, and what a built-in kind does beyond its
//! schema is hand-written hooks it only names.

mod definitions;
mod diagnostic;
mod emit;
/// Importing Kubernetes' built-in kinds from kube-apiserver's OpenAPI v3 documents.
pub mod import;
mod load;
mod model;
mod output;
mod protobuf;
mod validate;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use diagnostic::Diagnostic;
pub use validate::{
    CONVERSION_HOOKS_ANNOTATION, CONVERSION_OBJECT_HOOKS_ANNOTATION, HOOKS_ANNOTATION,
    SUBRESOURCES_ANNOTATION, VERBS_ANNOTATION,
};

use kapi_core::crd::CustomResourceDefinition;
use kapi_core::schema::Definitions;

use crate::load::Document;
use crate::model::conversion::ConversionDef;
use crate::model::{ResourceDef, TypeSpace, VersionDef, build_type_space, module_name};
use crate::output::Output;

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A schema file or folder could not be read, or output could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// One or more schema files are wrong.
    #[error("{}", render_diagnostics(.0))]
    Invalid(Vec<Diagnostic>),
    /// A bug in kapi-codegen: the generated code does not parse.
    #[error("internal error: {0}")]
    Internal(String),
    /// `generate` was called outside a build script with no output folder set.
    #[error("no output folder: set Builder::out_dir or run from a build script (OUT_DIR)")]
    NoOutDir,
}

fn render_diagnostics(diags: &[Diagnostic]) -> String {
    let mut s = diags
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let n = diags.len();
    s.push_str(&format!(
        "\n{n} error{} in schema files",
        if n == 1 { "" } else { "s" }
    ));
    s
}

/// Configures and runs code generation.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    inputs: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    hooks: BTreeMap<String, String>,
    conversion_hooks: BTreeMap<String, String>,
    conversion_object_hooks: BTreeSet<String>,
    external_conversions: BTreeSet<String>,
    file_name: Option<String>,
    externs: Option<BTreeMap<String, String>>,
}

/// Definitions whose types come from k8s-openapi unless [`Builder::extern_definitions`]
/// says otherwise: Kubernetes' apimachinery (ObjectMeta, LabelSelector, Time, Quantity,
/// IntOrString, …), which kapi-core already uses.
pub const DEFAULT_EXTERNS: [(&str, &str); 1] = [(
    "io.k8s.apimachinery",
    "::kapi_core::__private::k8s_openapi::apimachinery",
)];

/// The result of loading and checking schemas.
#[derive(Debug)]
pub struct Checked {
    resources: Vec<ResourceDef>,
    files: Vec<PathBuf>,
    definitions: Definitions,
    protobuf: protobuf::ProtobufCatalog,
    space: TypeSpace,
    /// Generated conversions: `(group module, group, plural, conversion)`.
    conversions: Vec<(String, String, String, ConversionDef)>,
}

impl Checked {
    /// How many resource definitions were read.
    pub fn resource_count(&self) -> usize {
        self.resources.len()
    }

    /// Every schema file read.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

impl Builder {
    /// A builder with no inputs.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds every `*.yaml`/`*.yml` file in `dir` and its subfolders.
    pub fn schemas_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.inputs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds one schema file.
    pub fn schema_file(mut self, file: impl AsRef<Path>) -> Self {
        self.inputs.push(file.as_ref().to_path_buf());
        self
    }

    /// Attaches a hooks type to a resource, named as its CRD is
    /// (`widgets.example.kapi.dev`). `hooks` is a Rust path to a type implementing
    /// `kapi_core::Hooks` for every served version. The `kapi.dev/hooks` annotation in
    /// the schema file does the same.
    pub fn hooks(mut self, resource: &str, hooks: &str) -> Self {
        self.hooks.insert(resource.to_string(), hooks.to_string());
        self
    }

    /// Attaches conversion hooks to a resource whose versions convert through a webhook
    /// (`spec.conversion.strategy: Webhook`), named as its CRD is. `hooks` is a Rust
    /// path to a type implementing `kapi_core::conversion::Convert<From, To>` for every
    /// pair of types the generated conversion cannot match field by field. The
    /// `kapi.dev/conversion-hooks` annotation in the schema file does the same.
    pub fn conversion_hooks(mut self, resource: &str, hooks: &str) -> Self {
        self.conversion_hooks
            .insert(resource.to_string(), hooks.to_string());
        self
    }

    /// Has the conversion hooks of a resource (named as its CRD is) complete its own
    /// type too, after the rest of the object converted: `Convert<v1::Kind, v2::Kind>`
    /// and back for every version and the hub, for a version that keeps in annotations
    /// what it has no field for (kube's autoscaling/v1 HorizontalPodAutoscaler). The
    /// `kapi.dev/conversion-object-hooks: "true"` annotation does the same.
    pub fn conversion_object_hooks(mut self, resource: &str) -> Self {
        self.conversion_object_hooks.insert(resource.to_string());
        self
    }

    /// Generates no conversion for a resource whose versions convert through a webhook
    /// of its own (a real CRD whose operator serves the conversion, as tekton's and the
    /// OpenTelemetry operator's do), named as its CRD is: its versions then convert
    /// through that webhook, as a run-time CRD's (`register` hands its `spec.conversion`
    /// to the server). `"*"` names every resource.
    pub fn external_conversion(mut self, resource: &str) -> Self {
        self.external_conversions.insert(resource.to_string());
        self
    }

    /// Uses the types under `rust_path` for every definition named under `prefix`, the
    /// way prost-build's `extern_path` does: `("io.k8s.apimachinery",
    /// "::k8s_openapi::apimachinery")` turns `io.k8s.apimachinery.pkg.apis.meta.v1.Time`
    /// into `::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time`. The first call
    /// replaces the default ([`DEFAULT_EXTERNS`]).
    pub fn extern_definitions(mut self, prefix: &str, rust_path: &str) -> Self {
        self.externs
            .get_or_insert_with(BTreeMap::new)
            .insert(prefix.to_string(), rust_path.to_string());
        self
    }

    /// Where [`Builder::generate`] writes (default: `$OUT_DIR`).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The file [`Builder::generate`] writes (default `kapi_generated.rs`).
    pub fn file_name(mut self, name: &str) -> Self {
        self.file_name = Some(name.to_string());
        self
    }

    fn collect_files(&self) -> Result<Vec<PathBuf>, Error> {
        let mut files = BTreeSet::new();
        for input in &self.inputs {
            let meta = std::fs::metadata(input).map_err(|source| Error::Io {
                path: input.clone(),
                source,
            })?;
            if meta.is_dir() {
                collect_dir(input, &mut files)?;
            } else {
                files.insert(input.clone());
            }
        }
        Ok(files.into_iter().collect())
    }

    /// Loads and checks every schema, writing nothing.
    pub fn check(&self) -> Result<Checked, Error> {
        let files = self.collect_files()?;
        let mut diags = Vec::new();
        let mut docs = Vec::new();
        for file in &files {
            let source = std::fs::read_to_string(file).map_err(|source| Error::Io {
                path: file.clone(),
                source,
            })?;
            match load::parse_documents(file, &source) {
                Ok(d) => docs.extend(d),
                Err(d) => diags.extend(d),
            }
        }
        let (protobuf, docs) = protobuf::collect(docs, &mut diags);
        let (definitions, docs) = definitions::collect(docs, &mut diags);
        let shared = (!definitions.is_empty()).then_some(&definitions);
        let mut resources = Vec::new();
        for doc in docs {
            match self.resource(doc, shared) {
                Ok(r) => resources.push(r),
                Err(d) => diags.extend(d),
            }
        }
        diags.extend(validate::validate(&resources));
        if diags.is_empty() {
            let externs = self.externs.clone().unwrap_or_else(|| {
                DEFAULT_EXTERNS
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            });
            let mut space = TypeSpace::new(&definitions, &externs);
            build_types(&mut resources, &mut space);
            let conversions = build_conversions(&resources, &space, &mut diags);
            if !diags.is_empty() {
                return Err(Error::Invalid(diags));
            }
            let definitions = definitions::reachable(&definitions, &resources);
            let protobuf = protobuf.reachable(&resources);
            Ok(Checked {
                resources,
                files,
                definitions,
                protobuf,
                space,
                conversions,
            })
        } else {
            Err(Error::Invalid(diags))
        }
    }

    fn resource(
        &self,
        doc: Document,
        definitions: Option<&Definitions>,
    ) -> Result<ResourceDef, Vec<Diagnostic>> {
        let diagnostics = |errs: &[kapi_core::FieldError]| {
            errs.iter()
                .map(|e| doc.diagnostic(&e.path, e.body()))
                .collect::<Vec<_>>()
        };
        let crd = CustomResourceDefinition::parse_with(&doc.value, definitions)
            .map_err(|errs| diagnostics(&errs))?;
        let errs = crd.check_rules(None);
        if !errs.is_empty() {
            return Err(diagnostics(&errs));
        }
        let hooks = self.hooks.get(&crd.name).cloned().or_else(|| {
            crd.annotations
                .get(HOOKS_ANNOTATION)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        });
        let conversion_hooks = self.conversion_hooks.get(&crd.name).cloned().or_else(|| {
            crd.annotations
                .get(CONVERSION_HOOKS_ANNOTATION)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        });
        let conversion_object_hooks = self.conversion_object_hooks.contains(&crd.name)
            || crd
                .annotations
                .get(CONVERSION_OBJECT_HOOKS_ANNOTATION)
                .and_then(|v| v.as_str())
                == Some("true");
        let external_conversion = self.external_conversions.contains(&crd.name)
            || self.external_conversions.contains("*");
        Ok(ResourceDef {
            doc,
            crd,
            hooks,
            conversion_hooks,
            conversion_object_hooks,
            external_conversion,
            versions: Vec::new(),
        })
    }

    /// Generates everything as one formatted Rust file.
    pub fn generate_string(&self) -> Result<String, Error> {
        render(&self.check()?).single_file()
    }

    /// Generates a module tree (`mod.rs`, `{group}/{version}.rs`) into `dir`, returning
    /// the files written. Files are only rewritten when their content changes.
    pub fn generate_module_tree(&self, dir: impl AsRef<Path>) -> Result<Vec<PathBuf>, Error> {
        let files = render(&self.check()?).module_tree()?;
        let mut written = Vec::new();
        for (rel, content) in files {
            let path = dir.as_ref().join(rel);
            write_if_changed(&path, &content)?;
            written.push(path);
        }
        Ok(written)
    }

    /// Generates one file into the output folder (`$OUT_DIR` by default) for
    /// `include!`, and tells cargo to rerun when any schema changes.
    pub fn generate(&self) -> Result<PathBuf, Error> {
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        for input in &self.inputs {
            println!("cargo:rerun-if-changed={}", input.display());
        }
        let checked = self.check();
        if let Ok(c) = &checked {
            for f in c.files() {
                println!("cargo:rerun-if-changed={}", f.display());
            }
        }
        let content = render(&checked?).single_file()?;
        let path = out.join(self.file_name.as_deref().unwrap_or("kapi_generated.rs"));
        write_if_changed(&path, &content)?;
        Ok(path)
    }
}

fn collect_dir(dir: &Path, files: &mut BTreeSet<PathBuf>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        if path.is_dir() {
            collect_dir(&path, files)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        ) {
            files.insert(path);
        }
    }
    Ok(())
}

fn write_if_changed(path: &Path, content: &str) -> Result<(), Error> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(content) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| Error::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(path, content).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The Rust module a version lives in: `v1beta1`; `-` becomes `_`.
fn version_module(version: &str) -> String {
    version.replace('-', "_")
}

/// The module a resource version's types live in: `[group, version]`.
fn resource_module(group: &str, version: &str) -> Vec<String> {
    vec![module_name(group), version_module(version)]
}

/// Builds the type space of every version, one shared namespace per module.
fn build_types(resources: &mut [ResourceDef], space: &mut TypeSpace) {
    for res in resources.iter() {
        for v in &res.crd.versions {
            space.reserve(
                &resource_module(&res.crd.group, &v.name),
                &res.crd.names.kind,
            );
        }
    }
    for res in resources.iter_mut() {
        let mut versions = Vec::new();
        for (index, v) in res.crd.versions.iter().enumerate() {
            let module = resource_module(&res.crd.group, &v.name);
            let types = build_type_space(&res.crd.names.kind, &v.schema, &module, space);
            versions.push(VersionDef {
                index,
                module: version_module(&v.name),
                types,
            });
        }
        res.versions = versions;
    }
}

/// The conversion of every resource whose versions convert through a webhook; a
/// diagnostic for each field that converts neither by name nor through hooks.
fn build_conversions(
    resources: &[ResourceDef],
    space: &TypeSpace,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(String, String, String, ConversionDef)> {
    let mut out = Vec::new();
    // Every shared definition's types, and those of the resource's group's versions.
    let mut shared = BTreeMap::new();
    for (module, types) in &space.definition_types {
        for t in types {
            shared.insert((module.clone(), t.name().to_string()), t.clone());
        }
    }
    for res in resources {
        let webhook = matches!(res.crd.conversion, kapi_core::crd::Conversion::Webhook(_));
        if !webhook || res.external_conversion {
            continue;
        }
        let group = &res.crd.group;
        let mut types = shared.clone();
        for other in resources.iter().filter(|r| &r.crd.group == group) {
            for v in &other.versions {
                let module = vec![module_name(group), v.module.clone()];
                for t in &v.types {
                    types.insert((module.clone(), t.name().to_string()), t.clone());
                }
            }
        }
        let (def, unmatched) = model::conversion::build(res, &types);
        for u in unmatched {
            diags.push(res.doc.diagnostic(
                &u.schema_path,
                format!(
                    "{} of {} does not convert to {}: it has no field of the same name and type there; name conversion hooks for {} ({CONVERSION_HOOKS_ANNOTATION}), or leave its conversion to its own webhook (Builder::external_conversion)",
                    u.field, u.version, u.other, res.crd.name
                ),
            ));
        }
        if let Some(def) = def {
            out.push((
                module_name(group),
                group.clone(),
                res.crd.names.plural.to_string(),
                def,
            ));
        }
    }
    out
}

fn render(checked: &Checked) -> Output {
    let mut out = Output::default();
    let mut served = Vec::new();
    let shared = !checked.definitions.is_empty();
    for res in &checked.resources {
        let group = module_name(&res.crd.group);
        for vdef in &res.versions {
            let module = vec![group.clone(), vdef.module.clone()];
            let items = emit::resource_items(res, vdef, &module, shared);
            out.modules.entry(module).or_default().extend(items);
            if res.crd.versions[vdef.index].served {
                served.push((
                    group.clone(),
                    vdef.module.clone(),
                    res.crd.names.kind.clone(),
                ));
            }
        }
    }
    for (module, types) in &checked.space.definition_types {
        let items = out.modules.entry(module.clone()).or_default();
        for t in types {
            items.extend(emit::type_def(t, module));
        }
    }
    let mut conversions = Vec::new();
    for (group_module, group, plural, def) in &checked.conversions {
        let module = vec![group_module.clone(), emit::CONVERSIONS_MODULE.to_string()];
        out.modules
            .entry(module)
            .or_default()
            .extend(emit::conversion_items(def));
        conversions.push((
            group_module.clone(),
            def.kind.clone(),
            group.clone(),
            plural.clone(),
        ));
    }
    // Resources whose conversion is their own webhook's: the server calls it.
    let webhooks: Vec<(String, String, String)> = checked
        .resources
        .iter()
        .filter(|r| r.external_conversion)
        .filter(|r| matches!(r.crd.conversion, kapi_core::crd::Conversion::Webhook(_)))
        .map(|r| {
            let conversion = r.doc.value["spec"]["conversion"].to_string();
            (
                r.crd.group.clone(),
                r.crd.names.plural.to_string(),
                conversion,
            )
        })
        .collect();
    out.root = emit::register_fn(&served, &conversions, &webhooks);
    if shared {
        out.root
            .extend(emit::definitions_fn(&checked.definitions.to_json()));
    }
    if !checked.protobuf.messages.is_empty() {
        out.root.extend(emit::protobuf_catalog(&checked.protobuf));
    }
    out
}
