//! How long a server started in process takes from `kapi::server::start` to answering
//! (`cargo bench -p kapi --bench start`): every built-in, and a control plane of a few
//! kinds (the Widget, Namespaces and RBAC), over plain HTTP and HTTPS (whose
//! certificates a fresh data directory makes), each on a fresh temporary data
//! directory and on one reused (a restart), N times each; prints the median and the
//! slowest. Beside them, when `etcd` is on the PATH, how long an etcd process takes
//! from its spawn to answering `/health` (envtest's first of two processes, started as
//! envtest starts it), for the comparison with envtest.
//! Figures go to BENCHMARKS.md; nothing is asserted.

use std::time::{Duration, Instant};

use kapi::server::{SecurityConfig, ServeConfig, start};
use kapi_apiserver::registry::Resources;
use kapi_core::Only;

const RUNS: usize = 15;

fn resources(all: bool) -> Resources {
    let mut resources = Resources::new();
    // The Widget is the repository's own kind (kapi-custom), in both.
    kapi_custom::generated::register(&mut resources);
    if all {
        kapi_kube::generated::register(&mut resources);
    } else {
        kapi_kube::generated::register(&mut Only::new(&mut resources, |r| {
            (r.group.is_empty() && r.kind == "Namespace") || r.group == "rbac.authorization.k8s.io"
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
    etcd_start();
}

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Whether etcd at `port` answers `/health` healthy.
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut tcp) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request = "GET /health HTTP/1.1\r\nHost: etcd\r\nConnection: close\r\n\r\n";
    let mut answer = String::new();
    tcp.write_all(request.as_bytes()).is_ok()
        && tcp.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.1 200")
        && answer.contains("\"health\":\"true\"")
}

/// etcd from spawn to healthy, as envtest runs it (a temporary data directory,
/// loopback ports, `--unsafe-no-fsync`), polled every 2 ms.
fn etcd_start() {
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (client, peer) = (free_port(), free_port());
        let began = Instant::now();
        let child = std::process::Command::new("etcd")
            .arg("--data-dir")
            .arg(dir.path())
            .arg(format!("--listen-client-urls=http://127.0.0.1:{client}"))
            .arg(format!("--advertise-client-urls=http://127.0.0.1:{client}"))
            .arg(format!("--listen-peer-urls=http://127.0.0.1:{peer}"))
            .arg("--unsafe-no-fsync=true")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            println!("\netcd is not on the PATH: no comparison with envtest's etcd.");
            return;
        };
        while !healthy(client) && began.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(2));
        }
        times.push(began.elapsed());
        let _ = child.kill();
        let _ = child.wait();
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "\netcd (the first of envtest's two processes) from spawn to healthy: median {:.1} ms, fastest {:.1} ms, slowest {:.1} ms",
        ms(times[RUNS / 2]),
        ms(times[0]),
        ms(times[RUNS - 1])
    );
}
