//! Watch fan-out: W watchers of one resource (each on its own HTTP/1.1 connection)
//! and one writer creating widgets at a fixed rate. An event's latency runs from the
//! writer's acknowledgement (the create's response) to a watcher reading the event,
//! as the issue measures it; an event read before its acknowledgement counts as 0.
//! Every watcher must see every write: a missing event is an error.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use tokio::sync::watch;
use tokio::time::Instant;

use super::kapi_http::{collection_path, create, create_namespace};
use crate::client::{Client, Transport, tcp};
use crate::stats::Recorder;

/// The namespace the fan-out writes to and watches.
const NAMESPACE: &str = "bench-watch";

/// The prefix of the writer's object names; the number after it is the write's.
const NAME_PREFIX: &str = "fanout-";

/// One fan-out measurement.
#[derive(Clone, Copy, Debug)]
pub struct FanOut {
    /// Concurrent watchers.
    pub watchers: usize,
    /// Writes per second.
    pub rate: u32,
    /// How long the writer writes.
    pub duration: Duration,
}

/// What a fan-out measured: one latency per event delivered to a watcher.
pub struct FanOutMeasured {
    /// Latencies (write acknowledgement → event read) and errors (events missed).
    pub recorder: Recorder,
    /// From the first write until the last watcher was done.
    pub elapsed: Duration,
}

/// Runs one fan-out against kapi at `addr`; `round` keeps names apart between runs.
pub async fn fan_out(
    addr: SocketAddr,
    spec: FanOut,
    round: usize,
) -> Result<FanOutMeasured, String> {
    let client = Client::connect(addr, Transport::Http1).await?;
    if round == 0 {
        create_namespace(&client, NAMESPACE).await?;
    }
    let start_rv = current_resource_version(&client).await?;
    let writes = (spec.rate as f64 * spec.duration.as_secs_f64())
        .ceil()
        .max(1.0) as usize;
    let prefix = format!("{NAME_PREFIX}{round}-");
    let (done_tx, done_rx) = watch::channel(false);
    let mut watchers = Vec::with_capacity(spec.watchers);
    for _ in 0..spec.watchers {
        let stream = open_watch(addr, &start_rv, spec.duration).await?;
        watchers.push(tokio::spawn(read_events(
            stream,
            prefix.clone(),
            writes,
            done_rx.clone(),
        )));
    }
    // The writer: one create every 1/rate seconds; its acknowledgement times.
    let started = Instant::now();
    let mut acks: Vec<Option<Instant>> = vec![None; writes];
    let mut interval = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(spec.rate)));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut recorder = Recorder::new();
    for (i, ack) in acks.iter_mut().enumerate() {
        interval.tick().await;
        match create(&client, NAMESPACE, &format!("{prefix}{i}")).await {
            Ok(_) => *ack = Some(Instant::now()),
            Err(e) => recorder.record_error(format!("write {i}: {e}")),
        }
    }
    // Watchers get a bounded grace period to catch up, then stop.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let _ = done_tx.send(true);
    for watcher in watchers {
        let seen = match tokio::time::timeout_at(deadline, watcher).await {
            Ok(Ok(seen)) => seen,
            Ok(Err(e)) => {
                recorder.record_error(format!("watcher task: {e}"));
                continue;
            }
            Err(_) => {
                recorder.record_error("watcher did not stop in time");
                continue;
            }
        };
        for (i, ack) in acks.iter().enumerate() {
            match (seen[i], ack) {
                (Some(read), Some(ack)) => recorder.record(read.saturating_duration_since(*ack)),
                (None, Some(_)) => recorder.record_error(format!("event {i} never arrived")),
                _ => {}
            }
        }
    }
    Ok(FanOutMeasured {
        recorder,
        elapsed: started.elapsed(),
    })
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
    duration: Duration,
) -> Result<WatchBody, String> {
    let (mut sender, connection) = http1::handshake(tcp(addr).await?)
        .await
        .map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
    tokio::spawn(connection);
    let timeout = duration.as_secs() + 60;
    let request = Request::builder()
        .uri(format!(
            "{}?watch=true&resourceVersion={resource_version}&timeoutSeconds={timeout}",
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

/// Reads watch events until all `writes` arrived or `done` turns true; when each
/// write's event was read.
async fn read_events(
    mut body: WatchBody,
    prefix: String,
    writes: usize,
    mut done: watch::Receiver<bool>,
) -> Vec<Option<Instant>> {
    let mut seen = vec![None; writes];
    let mut count = 0;
    let mut pending = BytesMut::new();
    let marker = format!("\"name\":\"{prefix}");
    while count < writes {
        let frame = tokio::select! {
            frame = body.frame() => frame,
            _ = done.wait_for(|d| *d) => break,
        };
        let Some(Ok(frame)) = frame else { break };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let now = Instant::now();
        pending.extend_from_slice(&data);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line = pending.split_to(end + 1);
            if let Some(i) = write_number(&line, marker.as_bytes()) {
                if let Some(slot) = seen.get_mut(i) {
                    if slot.is_none() {
                        *slot = Some(now);
                        count += 1;
                    }
                }
            }
        }
    }
    seen
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
