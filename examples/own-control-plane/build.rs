//! Compiles `schemas/` into the crate (`kapi-codegen`, as prost-build compiles protos).

fn main() {
    // schemas/ into $OUT_DIR/kapi_generated.rs; a broken schema fails the build with
    // file:line:column.
    if let Err(e) = kapi_codegen::Builder::new()
        .schemas_dir("schemas")
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
