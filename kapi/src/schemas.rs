//! `kapi generate`, `kapi check` and `kapi import-openapi`: the schema files of
//! `schemas/` turned into Rust, checked, or imported from kube-apiserver's OpenAPI v3
//! documents. The work is `kapi_codegen`'s; this module only reads flags and reports.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The flags of `kapi generate`.
#[derive(clap::Args)]
pub struct GenerateArgs {
    /// Folder (or file) of schema YAML; may be repeated.
    #[arg(long = "schemas", required = true)]
    schemas: Vec<PathBuf>,
    /// Output folder.
    #[arg(long)]
    out: PathBuf,
    /// A resource (`pipelines.tekton.dev`, or `*` for all) whose conversion webhook is
    /// its own: no conversion is generated for it; may be repeated.
    #[arg(long = "external-conversion")]
    external_conversions: Vec<String>,
}

/// The flags of `kapi check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// Folder (or file) of schema YAML; may be repeated.
    #[arg(long = "schemas", required = true)]
    schemas: Vec<PathBuf>,
    /// A resource (`pipelines.tekton.dev`, or `*` for all) whose conversion webhook is
    /// its own: no conversion is generated for it; may be repeated.
    #[arg(long = "external-conversion")]
    external_conversions: Vec<String>,
}

/// The flags of `kapi import-openapi`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// An OpenAPI v3 document (`apis__apps__v1_openapi.json`); may be repeated.
    #[arg(long = "openapi", required = true, num_args = 1..)]
    openapi: Vec<PathBuf>,
    /// The import configuration (`codegen/builtins.yaml`).
    #[arg(long)]
    config: PathBuf,
    /// Output folder (`schemas/kubernetes`).
    #[arg(long)]
    out: PathBuf,
    /// Also write the protobuf catalog (`protobuf/<package>.yaml`) from the `.proto`
    /// files under this folder (`testdata/proto`).
    #[arg(long, requires = "go_facts")]
    proto: Option<PathBuf>,
    /// The facts about the Go types the `.proto` files lack (`codegen/protobuf-go.yaml`).
    #[arg(long, requires = "proto")]
    go_facts: Option<PathBuf>,
}

/// Writes formatted, deterministic Rust modules (`mod.rs`, `{group}/{version}.rs`).
pub fn generate(args: &GenerateArgs) -> ExitCode {
    report(
        builder(&args.schemas, &args.external_conversions)
            .generate_module_tree(&args.out)
            .map(|files| println!("wrote {} files to {}", files.len(), args.out.display())),
    )
}

/// Validates schemas without writing anything.
pub fn check(args: &CheckArgs) -> ExitCode {
    report(
        builder(&args.schemas, &args.external_conversions)
            .check()
            .map(|c| {
                println!(
                    "{} resources in {} files: ok",
                    c.resource_count(),
                    c.files().len()
                );
            }),
    )
}

/// Imports the built-in kinds from OpenAPI v3 documents (and, with `--proto`, their
/// protobuf catalog) into schema files.
pub fn import(args: &ImportArgs) -> ExitCode {
    let protobuf = args.proto.as_ref().zip(args.go_facts.as_ref());
    report(import_openapi(
        &args.openapi,
        &args.config,
        &args.out,
        protobuf,
    ))
}

/// Exit code 1 with the error (one line per problem, file:line:column) on stderr.
fn report<E: std::fmt::Display>(result: Result<(), E>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn import_openapi(
    openapi: &[PathBuf],
    config: &Path,
    out: &Path,
    protobuf: Option<(&PathBuf, &PathBuf)>,
) -> Result<(), kapi_codegen::import::ImportError> {
    let import = match protobuf {
        None => kapi_codegen::import::import(openapi, config)?,
        Some((proto_dir, go_facts)) => kapi_codegen::import::import_with_protobuf(
            openapi,
            config,
            &kapi_codegen::import::ProtobufSources {
                proto_dir: proto_dir.clone(),
                go_facts: go_facts.clone(),
            },
        )?,
    };
    let summary = import.write(out)?;
    let report = &import.report;
    println!(
        "{} kinds, {} definitions, {} files in {}: {} written, {} unchanged, {} stale removed",
        report.kinds,
        report.definitions,
        import.files.len(),
        out.display(),
        summary.written.len(),
        summary.unchanged.len(),
        summary.removed.len()
    );
    let dropped: Vec<String> = report
        .dropped
        .iter()
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect();
    println!(
        "dropped: {}; zero defaults of required fields: {{}} ×{}, scalars ×{}",
        if dropped.is_empty() {
            "nothing".to_string()
        } else {
            dropped.join(", ")
        },
        report.empty_defaults,
        report.zero_defaults
    );
    for (resource, subs) in &report.unserved_subresources {
        let subs: Vec<&str> = subs.iter().map(String::as_str).collect();
        println!("not served: {resource}/{{{}}}", subs.join(","));
    }
    for op in &report.unclassified {
        println!("unclassified: {op}");
    }
    Ok(())
}

fn builder(schemas: &[PathBuf], external_conversions: &[String]) -> kapi_codegen::Builder {
    let builder = schemas
        .iter()
        .fold(kapi_codegen::Builder::new(), |b, s| b.schemas_dir(s));
    external_conversions
        .iter()
        .fold(builder, |b, r| b.external_conversion(r))
}
