//! The watch limit: raw etcd's fan-out through etcd-client — W watches of one prefix
//! (each its own gRPC watch stream, all on one shared connection) and one writer
//! putting 1 KiB values, measured by [`crate::fanout`] as kapi's watch is: latency
//! from the put's acknowledgement to a watcher reading the event.

use std::sync::Arc;

use etcd_client::{Client, WatchOptions};
use tokio::sync::watch;
use tokio::time::Instant;

use super::etcd::value;
use crate::fanout::{self, Arrivals, FanOut, FanOutMeasured, WriteFuture};

/// Runs one fan-out against etcd at `endpoint`; `round` keeps keys apart between runs.
pub async fn fan_out(endpoint: &str, spec: FanOut, round: usize) -> Result<FanOutMeasured, String> {
    let mut client = Client::connect([endpoint], None)
        .await
        .map_err(|e| format!("connecting to etcd at {endpoint}: {e}"))?;
    let prefix = Arc::<str>::from(format!("/kapi-bench/watch/{round}/"));
    let revision = client
        .get(prefix.as_bytes(), None)
        .await
        .map_err(|e| format!("etcd range: {e}"))?
        .header()
        .map(|h| h.revision())
        .ok_or("an etcd reply without a header")?;
    let writes = spec.writes();
    let (done_tx, done_rx) = watch::channel(false);
    let opening = Instant::now();
    let watchers = {
        let client = client.clone();
        let prefix = prefix.clone();
        fanout::open_watchers(spec.watchers, spec.open_concurrency, move |_| {
            let mut client = client.clone();
            let prefix = prefix.clone();
            let done = done_rx.clone();
            async move {
                let options = WatchOptions::new()
                    .with_prefix()
                    .with_start_revision(revision + 1);
                let mut stream = client
                    .watch(prefix.as_bytes(), Some(options))
                    .await
                    .map_err(|e| format!("an etcd watch: {e}"))?;
                // The first response says the watch exists.
                match stream.message().await {
                    Ok(Some(created)) if created.created() => {}
                    Ok(other) => return Err(format!("an etcd watch answered {other:?}")),
                    Err(e) => return Err(format!("an etcd watch: {e}")),
                }
                Ok(tokio::spawn(read_events(stream, prefix, writes, done)))
            }
        })
        .await?
    };
    let opened_in = opening.elapsed();
    let mut measured = fanout::run(spec, watchers, done_tx, move |i| -> WriteFuture {
        let mut client = client.clone();
        let key = format!("{prefix}{i}");
        Box::pin(async move {
            client
                .put(key, value(), None)
                .await
                .map(drop)
                .map_err(|e| format!("etcd put: {e}"))
        })
    })
    .await;
    measured.opened_in = opened_in;
    Ok(measured)
}

/// Reads events until all `writes` arrived, the stream ends or `done` turns true (or
/// its sender is gone).
async fn read_events(
    mut stream: etcd_client::WatchStream,
    prefix: Arc<str>,
    writes: usize,
    mut done: watch::Receiver<bool>,
) -> Arrivals {
    let mut arrivals = Arrivals::new(writes);
    while !arrivals.complete() {
        let message = tokio::select! {
            message = stream.message() => message,
            _ = done.wait_for(|d| *d) => break,
        };
        let Ok(Some(response)) = message else { break };
        let now = Instant::now();
        for event in response.events() {
            let number = event
                .kv()
                .and_then(|kv| kv.key().strip_prefix(prefix.as_bytes()))
                .and_then(|n| std::str::from_utf8(n).ok())
                .and_then(|n| n.parse().ok());
            if let Some(i) = number {
                arrivals.record(i, now);
            }
        }
    }
    arrivals
}
