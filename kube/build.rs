//! Compiles the built-in API groups this crate's features name from
//! `schemas/kubernetes/`. The repository's own schemas beside it are kapi-custom's, so
//! that editing one does not rebuild the built-ins.

use std::path::Path;

include!("builtin_groups.rs");

/// What `schemas/kubernetes/` holds besides the groups: the shared definitions and
/// protobuf messages (only what the chosen groups reach is generated).
const SHARED: [&str; 2] = ["definitions", "protobuf"];

fn main() {
    if let Err(e) = generate() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn generate() -> Result<(), String> {
    let builtins = Path::new("../schemas/kubernetes");
    let mut builder = kapi_codegen::Builder::new();
    for entry in read_dir(builtins)? {
        let name = entry
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if SHARED.contains(&name) {
            builder = builder.schemas_dir(&entry);
            continue;
        }
        let Some((feature, _)) = GROUPS.iter().find(|(_, file)| *file == name) else {
            return Err(format!(
                "{}: a built-in group with no feature of kapi-kube: add it to build.rs' GROUPS and Cargo.toml's [features]",
                entry.display()
            ));
        };
        if enabled(feature) {
            builder = builder.schema_file(&entry);
            continue;
        }
        let kinds: Vec<&str> = KINDS
            .iter()
            .filter(|(kind_feature, file, _)| *file == name && enabled(kind_feature))
            .map(|(_, _, plural)| *plural)
            .collect();
        if !kinds.is_empty() {
            builder = builder.schema_file(only_kinds(&entry, &kinds)?);
        }
    }
    // A new file in the folder changes what is compiled.
    println!("cargo:rerun-if-changed={}", builtins.display());
    builder.generate().map(drop).map_err(|e| e.to_string())
}

fn enabled(feature: &str) -> bool {
    std::env::var_os(format!("CARGO_FEATURE_{}", feature.to_uppercase())).is_some()
}

/// A copy of a group's schema file in `OUT_DIR` holding only the definitions of
/// `plurals`. The importer writes one definition per document, `---` between them, and
/// each names itself first (`metadata:` then `  name: <plural>`).
fn only_kinds(file: &Path, plurals: &[&str]) -> Result<std::path::PathBuf, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let kept: Vec<&str> = text
        .split("\n---\n")
        .filter(|doc| {
            plurals
                .iter()
                .any(|p| doc.contains(&format!("\nmetadata:\n  name: {p}\n")))
        })
        .collect();
    if kept.len() != plurals.len() {
        return Err(format!(
            "{}: not one definition for each of {plurals:?}",
            file.display()
        ));
    }
    let out = Path::new(&std::env::var("OUT_DIR").map_err(|e| e.to_string())?)
        .join(file.file_name().unwrap_or_default());
    std::fs::write(&out, kept.join("\n---\n") + "\n")
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(out)
}

fn read_dir(dir: &Path) -> Result<Vec<std::path::PathBuf>, String> {
    let mut entries = std::fs::read_dir(dir)
        .and_then(|d| {
            d.map(|e| e.map(|e| e.path()))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    entries.sort();
    Ok(entries)
}
