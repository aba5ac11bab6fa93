//! `cargo run -p kapi-example-own-control-plane`: serves Books and Libraries (and
//! Namespaces and RBAC) on 127.0.0.1:6444 with the data in `./library-data`, until
//! Ctrl-C; then `KUBECONFIG=library-data/kubeconfig kubectl get books -A`.

use kapi::server::{ServeConfig, serve, shutdown_signal};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // The library installs no log subscriber: this binary does.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KAPI_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let config = ServeConfig {
        listen: "127.0.0.1:6444".parse().expect("an address"),
        data_dir: "library-data".into(),
        ..ServeConfig::default()
    };
    let resources = kapi_example_own_control_plane::resources();
    match serve(config, resources, shutdown_signal()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
