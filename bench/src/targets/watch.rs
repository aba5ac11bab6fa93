//! kapi's watch fan-out: W watchers of the widgets of one namespace, each on an
//! HTTP/1.1 connection of its own (as W separate clients would be), and one writer
//! creating widgets over HTTP/2, measured by [`crate::fanout`]; [`fan_out_of`] does
//! the same for other collections and wire formats ([`crate::targets::wire`]).

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
    let watched = Watched {
        namespace: NAMESPACE,
        collection: collection_path(NAMESPACE),
        accept: "application/json",
        framing: Framing::Lines,
        write: Arc::new(|writer, name| {
            Box::pin(async move { create(&writer, NAMESPACE, &name).await.map(drop) })
        }),
    };
    fan_out_of(addr, spec, round, watched).await
}

/// How a watch stream divides into events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// JSON: one event per line.
    Lines,
    /// Protobuf: each event after its length, 4 bytes big-endian.
    LengthPrefixed,
}

/// A fan-out's writer: it creates the object of this name in the watched collection.
pub(crate) type Write = Arc<dyn Fn(Client, String) -> WriteFuture + Send + Sync>;

/// What a fan-out watches and how its writer writes there.
pub(crate) struct Watched {
    /// The namespace written to and watched (created first).
    pub namespace: &'static str,
    /// The collection's path.
    pub collection: String,
    /// The watchers' `Accept` header.
    pub accept: &'static str,
    /// How their streams divide into events.
    pub framing: Framing,
    /// One write.
    pub write: Write,
}

/// Runs one fan-out of `watched` against kapi at `addr`.
pub(crate) async fn fan_out_of(
    addr: SocketAddr,
    spec: FanOut,
    round: usize,
    watched: Watched,
) -> Result<FanOutMeasured, String> {
    let writer = Client::connect(addr, Transport::Http2).await?;
    create_namespace(&writer, watched.namespace).await?;
    let start_rv = current_resource_version(&writer, &watched.collection).await?;
    let writes = spec.writes();
    let prefix = Arc::<str>::from(format!("{NAME_PREFIX}{round}-"));
    let timeout_seconds = (spec.duration + spec.drain).as_secs() + 120;
    let path = Arc::<str>::from(format!(
        "{}?watch=true&resourceVersion={start_rv}&timeoutSeconds={timeout_seconds}",
        watched.collection
    ));
    let (accept, framing) = (watched.accept, watched.framing);
    let (done_tx, done_rx) = watch::channel(false);
    let opening = Instant::now();
    let watchers = fanout::open_watchers(spec.watchers, spec.open_concurrency, move |_| {
        let path = path.clone();
        let prefix = prefix.clone();
        let done = done_rx.clone();
        async move {
            let body = open_watch(addr, &path, accept).await?;
            Ok(tokio::spawn(read_events(
                body, framing, prefix, writes, done,
            )))
        }
    })
    .await?;
    let opened_in = opening.elapsed();
    let prefix = format!("{NAME_PREFIX}{round}-");
    let write = watched.write;
    let mut measured = fanout::run(spec, watchers, done_tx, move |i| -> WriteFuture {
        write(writer.clone(), format!("{prefix}{i}"))
    })
    .await;
    measured.opened_in = opened_in;
    Ok(measured)
}

/// The list's resourceVersion: where the watches start.
async fn current_resource_version(client: &Client, collection: &str) -> Result<String, String> {
    let reply = client
        .send(http::Method::GET, &format!("{collection}?limit=1"), None)
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

/// Opens the watch at `path` (its query included), on a connection of its own.
async fn open_watch(addr: SocketAddr, path: &str, accept: &str) -> Result<WatchBody, String> {
    let (mut sender, connection) = http1::handshake(tcp(addr).await?)
        .await
        .map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
    tokio::spawn(connection);
    let request = Request::builder()
        .uri(path)
        .header(header::HOST, addr.to_string())
        .header(header::ACCEPT, accept)
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
    framing: Framing,
    prefix: Arc<str>,
    writes: usize,
    mut done: watch::Receiver<bool>,
) -> Arrivals {
    let mut arrivals = Arrivals::new(writes);
    let mut pending = BytesMut::new();
    // A protobuf name is its bytes after their length; only the name holds the prefix.
    let marker = match framing {
        Framing::Lines => format!("\"name\":\"{prefix}"),
        Framing::LengthPrefixed => prefix.to_string(),
    };
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
        while let Some(event) = next_event(&mut pending, framing, &mut searched) {
            if let Some(i) = write_number(&event, marker.as_bytes()) {
                arrivals.record(i, now);
            }
        }
    }
    arrivals
}

/// The next whole event at the front of `pending`, taken off it; `searched` is how
/// much of `pending` is known to hold no line end.
fn next_event(pending: &mut BytesMut, framing: Framing, searched: &mut usize) -> Option<BytesMut> {
    match framing {
        Framing::Lines => {
            let end = pending[*searched..].iter().position(|&b| b == b'\n')?;
            let line = pending.split_to(*searched + end + 1);
            *searched = 0;
            Some(line)
        }
        Framing::LengthPrefixed => {
            let length: [u8; 4] = pending.get(..4)?.try_into().ok()?;
            let length = u32::from_be_bytes(length) as usize;
            if pending.len() < 4 + length {
                return None;
            }
            Some(pending.split_to(4 + length))
        }
    }
}

/// The write number in a watch event (`"name":"fanout-R-N"` in a JSON line, the name's
/// bytes in a protobuf frame), found without parsing the rest of the event.
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

    #[test]
    fn length_prefixed_events_are_taken_whole() {
        let mut pending = BytesMut::new();
        pending.extend_from_slice(&[0, 0, 0, 3, b'a', b'b', b'c', 0, 0, 0, 2, b'x']);
        let mut searched = 0;
        let first = next_event(&mut pending, Framing::LengthPrefixed, &mut searched);
        assert_eq!(first.as_deref(), Some(&[0, 0, 0, 3, b'a', b'b', b'c'][..]));
        assert_eq!(
            next_event(&mut pending, Framing::LengthPrefixed, &mut searched),
            None
        );
        pending.extend_from_slice(b"y");
        assert!(next_event(&mut pending, Framing::LengthPrefixed, &mut searched).is_some());
        assert!(pending.is_empty());
    }
}
