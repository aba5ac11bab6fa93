//! kapi's watch fan-out: W watchers of the widgets of one namespace, each on an
//! HTTP/1.1 connection of its own (as W separate clients would be), and one writer
//! creating widgets over HTTP/2, measured by [`crate::fanout`].

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use tokio::sync::watch;
use tokio::time::Instant;

use super::kapi_http::{collection_path, create, create_namespace};
use crate::client::{Client, Transport, tcp};
use crate::fanout::{self, Arrivals, FanOut, FanOutMeasured, WriteFuture};

/// The namespace the fan-out writes to and watches.
const NAMESPACE: &str = "bench-watch";

/// The prefix of the writer's object names; the number after it is the write's.
const NAME_PREFIX: &str = "fanout-";

/// Runs one fan-out against kapi at `addr`; `round` keeps names apart between runs.
pub async fn fan_out(
    addr: SocketAddr,
    spec: FanOut,
    round: usize,
) -> Result<FanOutMeasured, String> {
    let writer = Client::connect(addr, Transport::Http2).await?;
    create_namespace(&writer, NAMESPACE).await?;
    let start_rv = Arc::<str>::from(current_resource_version(&writer).await?);
    let writes = spec.writes();
    let prefix = Arc::<str>::from(format!("{NAME_PREFIX}{round}-"));
    let timeout_seconds = (spec.duration + spec.drain).as_secs() + 120;
    let (done_tx, done_rx) = watch::channel(false);
    let opening = Instant::now();
    let watchers = fanout::open_watchers(spec.watchers, spec.open_concurrency, move |_| {
        let start_rv = start_rv.clone();
        let prefix = prefix.clone();
        let done = done_rx.clone();
        async move {
            let body = open_watch(addr, &start_rv, timeout_seconds).await?;
            Ok(tokio::spawn(read_events(body, prefix, writes, done)))
        }
    })
    .await?;
    let opened_in = opening.elapsed();
    let prefix = format!("{NAME_PREFIX}{round}-");
    let mut measured = fanout::run(spec, watchers, done_tx, move |i| -> WriteFuture {
        let writer = writer.clone();
        let name = format!("{prefix}{i}");
        Box::pin(async move { create(&writer, NAMESPACE, &name).await.map(drop) })
    })
    .await;
    measured.opened_in = opened_in;
    Ok(measured)
}

/// The list's resourceVersion: where the watches start.
async fn current_resource_version(client: &Client) -> Result<String, String> {
    let reply = client
        .send(
            http::Method::GET,
            &format!("{}?limit=1", collection_path(NAMESPACE)),
            None,
        )
        .await?
        .expect("listing", StatusCode::OK)?;
    let list: serde_json::Value =
        serde_json::from_slice(&reply.body).map_err(|e| format!("a list: {e}"))?;
    list["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| "a list without resourceVersion".to_string())
}

type WatchBody = hyper::body::Incoming;

/// Opens one watch from `resource_version`, on a connection of its own.
async fn open_watch(
    addr: SocketAddr,
    resource_version: &str,
    timeout_seconds: u64,
) -> Result<WatchBody, String> {
    let (mut sender, connection) = http1::handshake(tcp(addr).await?)
        .await
        .map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
    tokio::spawn(connection);
    let request = Request::builder()
        .uri(format!(
            "{}?watch=true&resourceVersion={resource_version}&timeoutSeconds={timeout_seconds}",
            collection_path(NAMESPACE)
        ))
        .header(header::HOST, addr.to_string())
        .header(header::ACCEPT, "application/json")
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("a watch request: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("starting a watch: {e}"))?;
    if response.status() != StatusCode::OK {
        return Err(format!("a watch answered {}", response.status()));
    }
    Ok(response.into_body())
}

/// Reads watch events until all `writes` arrived, the stream ends or `done` turns
/// true (or its sender is gone).
async fn read_events(
    mut body: WatchBody,
    prefix: Arc<str>,
    writes: usize,
    mut done: watch::Receiver<bool>,
) -> Arrivals {
    let mut arrivals = Arrivals::new(writes);
    let mut pending = BytesMut::new();
    let marker = format!("\"name\":\"{prefix}");
    while !arrivals.complete() {
        let frame = tokio::select! {
            frame = body.frame() => frame,
            _ = done.wait_for(|d| *d) => break,
        };
        let Some(Ok(frame)) = frame else { break };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let now = Instant::now();
        // Only the new bytes can hold the end of a line.
        let mut searched = pending.len();
        pending.extend_from_slice(&data);
        while let Some(end) = pending[searched..].iter().position(|&b| b == b'\n') {
            let line = pending.split_to(searched + end + 1);
            searched = 0;
            if let Some(i) = write_number(&line, marker.as_bytes()) {
                arrivals.record(i, now);
            }
        }
    }
    arrivals
}

/// The write number in a watch line (`"name":"fanout-R-N"`), found without parsing
/// the rest of the event.
fn write_number(line: &[u8], marker: &[u8]) -> Option<usize> {
    let start = line.windows(marker.len()).position(|w| w == marker)? + marker.len();
    let digits = line[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    std::str::from_utf8(&line[start..start + digits])
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_numbers_are_found_in_watch_lines() {
        let line = br#"{"object":{"metadata":{"name":"fanout-0-17","uid":"u"}},"type":"ADDED"}"#;
        assert_eq!(write_number(line, br#""name":"fanout-0-"#), Some(17));
        assert_eq!(write_number(line, br#""name":"fanout-1-"#), None);
    }
}
