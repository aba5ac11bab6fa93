//! Watch responses: a chunked stream of `{"type": ..., "object": ...}` lines (or, for a
//! client that asked for `application/vnd.kubernetes.protobuf;stream=watch`,
//! length-prefixed protobuf `WatchEvent` frames) that ends at `timeoutSeconds`, when
//! the server shuts down, or when the client goes away.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use super::{Api, Body};
use crate::negotiation::Output;
use crate::presentation::{Presentation, present};
use crate::registry::watch::{EventObject, StoredWatchEvent};
use crate::registry::{Store, WatchEventType};
use crate::request::Query;
use crate::status::ApiError;

/// Without `timeoutSeconds`, a watch lasts this long (kube-apiserver picks a random time
/// between 30 and 60 minutes so that watches do not all renew at once).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// Starts a watch and streams it.
pub async fn serve(
    api: &Api,
    store: &Arc<Store>,
    namespace: Option<&str>,
    name: Option<&str>,
    query: &Query,
    output: Output,
) -> Result<Response<Body>, ApiError> {
    let mut opts = query.watch_options()?;
    if let Some(name) = name {
        // A watch of one object is a watch filtered to its name, as kube-apiserver
        // turns it into one.
        opts.field_selector = query.field_selector_with_name(name)?;
    }
    let events = store.watch_stored(namespace, &opts).await?;
    let timeout = match query.timeout_seconds()? {
        Some(n) if n > 0 => Duration::from_secs(n as u64),
        // A negative timeout has expired already: the watch ends at once, as in kube.
        Some(n) if n < 0 => Duration::ZERO,
        _ => {
            let jitter = uuid::Uuid::new_v4().as_bytes()[0] as u64 * 7;
            DEFAULT_TIMEOUT + Duration::from_secs(jitter)
        }
    };
    let mut shutdown = api.shutdown.clone();
    let stop = async move {
        tokio::select! {
            _ = tokio::time::sleep(timeout) => {}
            () = crate::shutdown::stopped(&mut shutdown) => {}
        }
    };
    let store = store.clone();
    let include_object = crate::table::IncludeObject::from_query(query.get("includeObject"))
        .map_err(ApiError::bad_request)?;
    let mut sent_headers = false;
    // Counted as an open watch until the stream (and this closure) is dropped.
    let guard =
        crate::metrics::Metrics::global().watch_opened(&store.info().group, &store.info().plural);
    let info = store.info().clone();
    let api_version = info.api_version();
    let catalog = api.protobuf;
    let frames = events.take_until(Box::pin(stop)).map(move |event| {
        let _open = &guard;
        let line = match (output, event.object) {
            // One frame for every protobuf watcher of this storage event and version.
            (Output::Protobuf(_), EventObject::Stored(stored, encodings)) => encodings
                .get_or_insert_with(memo_key_protobuf(event.type_, &api_version), || {
                    stored
                        .decode(&info)
                        .and_then(|object| {
                            super::protobuf::watch_frame(catalog, event.type_.as_str(), &object)
                        })
                        .map(Bytes::from)
                        .unwrap_or_else(|e| status_frame(catalog, &e))
                }),
            (Output::Protobuf(_), object) => {
                // Bookmarks and errors: their object is a partial one or a Status.
                let event = StoredWatchEvent {
                    type_: event.type_,
                    object,
                }
                .decode(&info);
                super::protobuf::watch_frame(catalog, event.type_.as_str(), &event.object)
                    .map(Bytes::from)
                    .unwrap_or_else(|e| status_frame(catalog, &e))
            }
            // The same line for every watcher of this storage event and version.
            (Output::Json, EventObject::Stored(stored, encodings)) => {
                encodings.get_or_insert_with(memo_key(event.type_, &api_version), || {
                    match stored.to_json(&info) {
                        Ok(object) => json_line(event.type_, &object),
                        Err(e) => status_line(&e),
                    }
                })
            }
            (output, object) => {
                let event = StoredWatchEvent {
                    type_: event.type_,
                    object,
                }
                .decode(&info);
                let object = match (output, event.type_) {
                    (
                        Output::Converted(_),
                        WatchEventType::Added | WatchEventType::Modified | WatchEventType::Deleted,
                    ) => {
                        // Like kube-apiserver, only the first Table event carries the columns.
                        let how = Presentation {
                            include_object,
                            no_headers: sent_headers,
                        };
                        sent_headers = true;
                        present(store.strategy().as_ref(), output, &event.object, false, how)
                            .unwrap_or_else(|e| e.to_status())
                    }
                    _ => event.object,
                };
                let object = serde_json::to_vec(&object).unwrap_or_default();
                json_line(event.type_, &object)
            }
        };
        Ok::<_, Infallible>(Frame::data(line))
    });
    let mut res = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    *res.status_mut() = StatusCode::OK;
    let content_type = if matches!(output, Output::Protobuf(_)) {
        super::protobuf::WATCH_MEDIA_TYPE
    } else {
        "application/json"
    };
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(res)
}

/// One line of a watch response: `{"type":…,"object":…}` and a newline.
fn json_line(type_: WatchEventType, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + 32);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(type_.as_str().as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

/// An ERROR line for an object that could not be encoded.
fn status_line(e: &ApiError) -> Bytes {
    json_line(
        WatchEventType::Error,
        &serde_json::to_vec(&e.status()).unwrap_or_default(),
    )
}

/// An ERROR frame for an object that could not be encoded.
fn status_frame(catalog: &kapi_core::protobuf::Catalog, e: &ApiError) -> Bytes {
    super::protobuf::watch_frame(catalog, WatchEventType::Error.as_str(), &e.to_status())
        .map(Bytes::from)
        .unwrap_or_default()
}

/// Where a protobuf frame is memoised, beside the JSON lines.
fn memo_key_protobuf(type_: WatchEventType, api_version: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    ("protobuf-frame", type_.as_str(), api_version).hash(&mut hasher);
    hasher.finish()
}

/// Where a JSON line is memoised in a storage event's encodings: one per event type
/// (which also tells the event's new value from its previous one) and served version.
fn memo_key(type_: WatchEventType, api_version: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    ("json-line", type_.as_str(), api_version).hash(&mut hasher);
    hasher.finish()
}
