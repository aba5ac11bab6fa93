//! `kapi-codegen`: generate Rust from kapi schema files, or check them.

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
}

fn builder(schemas: &[PathBuf]) -> kapi_codegen::Builder {
    schemas
        .iter()
        .fold(kapi_codegen::Builder::new(), |b, s| b.schemas_dir(s))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
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
