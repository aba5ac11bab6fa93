//! `kapi`, the one command: `kapi serve` runs the API server over the resources
//! compiled from the repository's `schemas/`; `kapi generate`, `kapi check` and
//! `kapi import-openapi` work on schema files.
//!
//! This binary owns the flags only; the crate's library wires the server chain it
//! runs. What it generates, checks and imports is `kapi_codegen`'s, which stays a
//! library for `build.rs`. It must not hold request handling or code generation of its own.

mod schemas;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

// Every request allocates a few hundred small objects (JSON values, headers, futures);
// mimalloc's thread-local free lists serve them several times faster than glibc's
// malloc did (see BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "kapi",
    version,
    about = "A Kubernetes-compatible API server for resources defined in YAML"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API.
    Serve(Box<serve::ServeArgs>),
    /// Write formatted, deterministic Rust modules (`mod.rs`, `{group}/{version}.rs`)
    /// from schema files.
    Generate(schemas::GenerateArgs),
    /// Validate schema files without writing anything.
    Check(schemas::CheckArgs),
    /// Import built-in kinds from kube-apiserver's OpenAPI v3 documents into schema files.
    ImportOpenapi(schemas::ImportArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Serve(args) => serve::run(*args),
        Command::Generate(args) => schemas::generate(&args),
        Command::Check(args) => schemas::check(&args),
        Command::ImportOpenapi(args) => schemas::import(&args),
    }
}
