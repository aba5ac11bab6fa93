//! Compiles the repository's own schemas (everything in `schemas/` but the built-ins'
//! `schemas/kubernetes/`, which kapi-kube compiles) into `$OUT_DIR/kapi_generated.rs`.

use std::path::{Path, PathBuf};

fn main() {
    if let Err(e) = generate() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn generate() -> Result<(), String> {
    let schemas = Path::new("../schemas");
    let builtins = schemas.join("kubernetes");
    let mut builder = kapi_codegen::Builder::new();
    for entry in own_entries(schemas, &builtins)? {
        builder = if entry.is_dir() {
            builder.schemas_dir(entry)
        } else {
            builder.schema_file(entry)
        };
    }
    // A new file beside the others changes what is compiled; the generator names the
    // files and folders it read.
    println!("cargo:rerun-if-changed={}", schemas.display());
    builder.generate().map(drop).map_err(|e| e.to_string())
}

/// The folders and YAML files of `schemas` but `builtins`, sorted.
fn own_entries(schemas: &Path, builtins: &Path) -> Result<Vec<PathBuf>, String> {
    let mut entries = std::fs::read_dir(schemas)
        .and_then(|d| {
            d.map(|e| e.map(|e| e.path()))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| format!("{}: {e}", schemas.display()))?;
    entries.retain(|e| {
        e != builtins && (e.is_dir() || e.extension().is_some_and(|x| x == "yaml" || x == "yml"))
    });
    entries.sort();
    Ok(entries)
}
