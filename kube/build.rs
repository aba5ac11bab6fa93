//! Compiles the repository's `schemas/` into the resources the `kapi` binary serves.

fn main() {
    // The resources the `kapi` binary serves: every schema in the repository's schemas/.
    if let Err(e) = kapi_codegen::Builder::new()
        .schemas_dir("../schemas")
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
