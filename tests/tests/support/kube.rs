//! What the kube-rs suites share (`kube_rs.rs`, `kube_rs_apply.rs`): a bounded runtime
//! for a scenario, and a client from the kubeconfig kapi writes.

use std::future::Future;
use std::time::Duration;

use kapi_tests::Kapi;
use kube::{Client, Config};

/// How long one scenario may take.
pub const SCENARIO_TIMEOUT: Duration = Duration::from_secs(90);

/// Runs an async scenario on a fresh runtime, bounded in time.
pub fn block_on(f: impl Future<Output = ()>) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        tokio::time::timeout(SCENARIO_TIMEOUT, f)
            .await
            .expect("the scenario finished in time");
    });
}

/// A client for the server's URL, in namespace `default`.
pub fn client(kapi: &Kapi) -> Client {
    let kubeconfig =
        kube::config::Kubeconfig::read_from(kapi.kubeconfig()).expect("the kubeconfig");
    let mut config = futures_util::FutureExt::now_or_never(Config::from_custom_kubeconfig(
        kubeconfig,
        &Default::default(),
    ))
    .expect("reading a kubeconfig does not wait")
    .expect("a config from the server's kubeconfig");
    config.default_namespace = "default".into();
    config.read_timeout = Some(Duration::from_secs(30));
    Client::try_from(config).expect("a kube client")
}
