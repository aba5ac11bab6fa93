//! How long a server started in process takes from `kapi::server::start` to answering
//! (`cargo bench -p kapi --bench start`): every built-in, and a control plane of a few
//! kinds (the Widget, Namespaces and RBAC), over plain HTTP and HTTPS (whose
//! certificates a fresh data directory makes), each on a fresh temporary data
//! directory and on one reused (a restart), N times each; prints the median and the
//! slowest.
//! Figures go to BENCHMARKS.md; nothing is asserted.

use std::time::{Duration, Instant};

use kapi::server::{SecurityConfig, ServeConfig, start};
use kapi_apiserver::registry::Resources;
use kapi_core::Only;

const RUNS: usize = 15;

fn resources(all: bool) -> Resources {
    let mut resources = Resources::new();
    if all {
        kapi_kube::generated::register(&mut resources);
    } else {
        kapi_kube::generated::register(&mut Only::new(&mut resources, |r| {
            r.group == "example.kapi.dev"
                || (r.group.is_empty() && r.kind == "Namespace")
                || r.group == "rbac.authorization.k8s.io"
        }));
    }
    resources
}

async fn once(all: bool, dir: &std::path::Path, https: bool) -> (Duration, Duration) {
    let config = ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: dir.to_path_buf(),
        security: SecurityConfig {
            insecure_http: !https,
            ..SecurityConfig::default()
        },
        ..ServeConfig::default()
    };
    let began = Instant::now();
    let server = start(config, resources(all)).await.expect("started");
    let ready = began.elapsed();
    let began = Instant::now();
    server.stop().await.expect("stopped");
    (ready, began.elapsed())
}

fn main() {
    println!(
        "| kinds | serving | data directory | start to ready: median ms | slowest ms | stop: median ms |"
    );
    println!("|---|---|---|---:|---:|---:|");
    for (all, kinds) in [(true, "every built-in"), (false, "Widget, Namespace, RBAC")] {
        for (https, fresh) in [(false, true), (false, false), (true, true), (true, false)] {
            let kept = tempfile::tempdir().expect("a temporary directory");
            let (mut ready, mut stop) = (Vec::new(), Vec::new());
            for _ in 0..RUNS {
                let dir = tempfile::tempdir().expect("a temporary directory");
                let at = if fresh { dir.path() } else { kept.path() };
                // A runtime per run: a server's detached watch tasks hold the store (and
                // its data directory) until their runtime ends.
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime");
                let (r, s) = runtime.block_on(once(all, at, https));
                drop(runtime);
                ready.push(r);
                stop.push(s);
            }
            ready.sort();
            stop.sort();
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            println!(
                "| {kinds} | {} | {} | {:.1} | {:.1} | {:.1} |",
                if https {
                    "HTTPS (certificates made when fresh)"
                } else {
                    "HTTP"
                },
                if fresh { "fresh" } else { "reused" },
                ms(ready[RUNS / 2]),
                ms(ready[RUNS - 1]),
                ms(stop[RUNS / 2])
            );
        }
    }
}
