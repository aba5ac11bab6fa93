//! kapi's memory and restart: a fresh `kapi serve` is measured idle, then filled with
//! N widgets of about 1 KiB by many concurrent clients in two halves, and measured
//! after each once its watch cache has caught up (`VmRSS`, and `VmHWM` for the peak).
//! The growth over the second half, per object, is the memory one more cached object
//! costs, compared with its JSON: by then the fixed costs are paid (the embedded
//! store's page cache is full) and the idle reading's noise (some MiB from run to run)
//! is out of it. The growth over the whole load is reported too. On the embedded store
//! kapi is then stopped (SIGTERM) and started again on the same data, timed until
//! `/readyz` answers and until a first list with `resourceVersion=0` does.

use std::path::Path;
use std::time::Duration;

use http::{Method, StatusCode};
use tokio::time::Instant;

use crate::client::{Client, Transport};
use crate::report::{MemoryRow, Restart};
use crate::run::Backend;
use crate::server::{KapiProcess, Memory, Storage};
use crate::targets::kapi_http::{Loader, collection_path, get_widget, load_widgets};

/// The namespace the objects are loaded into.
const NAMESPACE: &str = "bench-memory";

/// The etcd key prefix of the measured kapi, so that it caches only its own objects
/// and none the rest of the run left in etcd.
const ETCD_PREFIX: &str = "/kapi-bench-memory";

/// Pause before each reading, so that work just finished (allocations of the last
/// requests, the cache's catching up) has settled.
const SETTLE: Duration = Duration::from_millis(500);

/// Measures kapi on `backend` (etcd at `etcd_endpoint` for the etcd backend) with
/// `objects` widgets loaded by `loader`.
pub async fn measure(
    kapi: &Path,
    backend: Backend,
    etcd_endpoint: Option<&str>,
    objects: usize,
    loader: Loader,
) -> Result<MemoryRow, String> {
    let storage = match backend {
        Backend::Embedded => Storage::default(),
        Backend::Etcd => Storage {
            etcd_endpoint: Some(
                etcd_endpoint
                    .ok_or("the etcd backend without an etcd")?
                    .to_string(),
            ),
            prefix: Some(ETCD_PREFIX.to_string()),
            ..Storage::default()
        },
    };
    let mut process = KapiProcess::start(kapi, storage).await?;
    tokio::time::sleep(SETTLE).await;
    let idle = process.memory()?;
    let middle = objects / 2;
    let first_half = load_widgets(process.addr(), NAMESPACE, 0..middle, loader).await?;
    let half = cached_memory(&process, middle).await?;
    let second_half = load_widgets(process.addr(), NAMESPACE, middle..objects, loader).await?;
    let loaded = cached_memory(&process, objects).await?;
    let client = Client::connect(process.addr(), Transport::Http1).await?;
    let object_json = get_widget(&client, NAMESPACE, "w-0", true).await?.len();
    drop(client);
    let restart = match backend {
        Backend::Embedded => Some(restart(&mut process).await?),
        Backend::Etcd => None,
    };
    if let Some(summary) = process.log_summary() {
        eprintln!("kapi ({backend}, memory): {summary}");
    }
    Ok(MemoryRow {
        backend,
        objects,
        object_json,
        idle,
        half,
        loaded,
        load_time: first_half + second_half,
        restart,
    })
}

/// kapi's memory once its watch cache holds the first `loaded` widgets.
async fn cached_memory(process: &KapiProcess, loaded: usize) -> Result<Memory, String> {
    // A read with resourceVersion=0 waits until the cache holds every write made
    // through kapi (read-your-writes), so this one sees the load so far cached.
    if loaded > 0 {
        let client = Client::connect(process.addr(), Transport::Http1).await?;
        let last = format!("w-{}", loaded - 1);
        get_widget(&client, NAMESPACE, &last, true).await?;
    }
    tokio::time::sleep(SETTLE).await;
    process.memory()
}

/// Stops kapi and starts it again on its data, timed.
async fn restart(process: &mut KapiProcess) -> Result<Restart, String> {
    let stop = process.stop().await?;
    let begun = Instant::now();
    process.start_again().await?;
    let ready = begun.elapsed();
    let client = Client::connect(process.addr(), Transport::Http1).await?;
    client
        .send(
            Method::GET,
            &format!("{}?resourceVersion=0", collection_path("default")),
            None,
        )
        .await?
        .expect("LIST", StatusCode::OK)?;
    Ok(Restart {
        stop,
        ready,
        first_read: begun.elapsed(),
    })
}
