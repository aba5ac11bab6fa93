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
}
