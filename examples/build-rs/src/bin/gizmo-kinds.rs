//! Generated code included straight into a binary crate, as a user's `main.rs` might
//! include it: it compiles without a single warning (`deny(warnings)` makes one an
//! error), though the binary uses little of what is generated.
#![deny(warnings)]

include!(concat!(env!("OUT_DIR"), "/kapi_generated_bare.rs"));

fn main() {
    let mut registrar = Kinds(Vec::new());
    register(&mut registrar);
    for kind in registrar.0 {
        println!("{kind}");
    }
}

/// Collects the kinds `register` installs.
struct Kinds(Vec<String>);

impl kapi_core::Registrar for Kinds {
    fn register(&mut self, strategy: std::sync::Arc<dyn kapi_core::ObjectStrategy>) {
        let info = strategy.info();
        self.0.push(format!("{} {}", info.api_version(), info.kind));
    }
}
