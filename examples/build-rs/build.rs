fn main() {
    // Compiles every schema under schemas/ into $OUT_DIR/kapi_generated.rs, and reruns
    // when any of them changes. A broken schema fails the build with file:line:column.
    if let Err(e) = kapi_codegen::Builder::new()
        .schemas_dir("schemas")
        .hooks("gizmos.toys.example.com", "crate::hooks::GizmoHooks")
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
    // The same schemas without hooks, for `src/bin/gizmo-kinds.rs`: generated code
    // included straight into a binary crate, which must compile without a warning.
    if let Err(e) = kapi_codegen::Builder::new()
        .schemas_dir("schemas")
        .file_name("kapi_generated_bare.rs")
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
