//! `kapi-codegen`: generate Rust from kapi schema files, check them, or import
//! Kubernetes' built-in kinds from OpenAPI v3 documents.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "kapi-codegen",
    version,
    about = "Generate typed Rust from CustomResourceDefinition schemas"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write formatted, deterministic Rust modules (`mod.rs`, `{group}/{version}.rs`).
    Generate {
        /// Folder (or file) of schema YAML; may be repeated.
        #[arg(long = "schemas", required = true)]
        schemas: Vec<PathBuf>,
        /// Output folder.
        #[arg(long)]
        out: PathBuf,
    },
    /// Validate schemas without writing anything.
    Check {
        /// Folder (or file) of schema YAML; may be repeated.
        #[arg(long = "schemas", required = true)]
        schemas: Vec<PathBuf>,
    },
    /// Import built-in kinds from kube-apiserver's OpenAPI v3 documents into schema files.
    ImportOpenapi {
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
    },
}

fn import_openapi(
    openapi: &[PathBuf],
    config: &std::path::Path,
    out: &std::path::Path,
    protobuf: Option<(&PathBuf, &PathBuf)>,
) -> Result<(), kapi_codegen::import::ImportError> {
    let import = match protobuf {
        None => kapi_codegen::import::import(openapi, config)?,
        #[cfg(feature = "proto")]
        Some((proto_dir, go_facts)) => kapi_codegen::import::import_with_protobuf(
            openapi,
            config,
            &kapi_codegen::import::ProtobufSources {
                proto_dir: proto_dir.clone(),
                go_facts: go_facts.clone(),
            },
        )?,
        #[cfg(not(feature = "proto"))]
        Some(_) => {
            eprintln!(
                "kapi-codegen was built without the `proto` feature: --proto is not available"
            );
            std::process::exit(2);
        }
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

fn builder(schemas: &[PathBuf]) -> kapi_codegen::Builder {
    schemas
        .iter()
        .fold(kapi_codegen::Builder::new(), |b, s| b.schemas_dir(s))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::ImportOpenapi {
            openapi,
            config,
            out,
            proto,
            go_facts,
        } => {
            let protobuf = proto.as_ref().zip(go_facts.as_ref());
            return match import_openapi(openapi, config, out, protobuf) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            };
        }
        Command::Generate { schemas, out } => {
            builder(schemas).generate_module_tree(out).map(|files| {
                println!("wrote {} files to {}", files.len(), out.display());
            })
        }
        Command::Check { schemas } => builder(schemas).check().map(|c| {
            println!(
                "{} resources in {} files: ok",
                c.resource_count(),
                c.files().len()
            );
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
