//! kapi's operations over HTTP, against a running `kapi serve`: create, get by name
//! (consistent, and with `resourceVersion=0` from the watch cache), update with
//! `resourceVersion`, merge patch, delete and lists of pre-loaded objects with
//! `resourceVersion=0`, on `Widget`s of about 1 KiB; and [`load_widgets`], the
//! concurrent loader lists and the memory measurement fill kapi with.
//!
//! Every cell works on objects of its own (names carry the cell's number), and each
//! list size reads a namespace of its own, so cells do not disturb each other's
//! figures.

use std::collections::BTreeSet;
use std::fmt;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode};
use tokio::time::Instant;

use crate::client::{self, Client, Reply, Transport};
use crate::driver::{OpFuture, Sample, Worker};

/// The group-version of the example resource.
const API_VERSION: &str = "example.kapi.dev/v1";

/// Where namespaces are created.
const NAMESPACES: &str = "/api/v1/namespaces";

/// The namespace of the single-object operations.
const NAMESPACE: &str = "default";

/// The size of a widget's JSON as sent; kapi's metadata and defaults bring the stored
/// object to about 1 KiB.
const SENT_SIZE: usize = 850;

const JSON: &str = "application/json";
const MERGE_PATCH: &str = "application/merge-patch+json";

/// One of kapi's operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// POST a new widget.
    Create,
    /// GET one widget by name without `resourceVersion`: a consistent read, which
    /// kapi (as kube-apiserver) serves from the storage (a quorum read on etcd).
    GetConsistent,
    /// GET one widget by name with `resourceVersion=0`: served from the watch cache.
    GetCached,
    /// PUT a widget with the `resourceVersion` of the last write.
    Update,
    /// PATCH a widget with a JSON merge patch.
    Patch,
    /// DELETE a widget, each after an untimed create of it: latencies are the
    /// deletes', throughput counts create-and-delete pairs.
    Delete,
    /// GET the list of this many pre-loaded widgets with `resourceVersion=0`.
    List(usize),
}

impl Operation {
    /// The single-object operations, in the order the report shows them.
    pub const SINGLE: [Operation; 6] = [
        Operation::Create,
        Operation::GetConsistent,
        Operation::GetCached,
        Operation::Update,
        Operation::Patch,
        Operation::Delete,
    ];
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Create => f.write_str("create"),
            Operation::GetConsistent => f.write_str("get (consistent)"),
            Operation::GetCached => f.write_str("get rv=0"),
            Operation::Update => f.write_str("update"),
            Operation::Patch => f.write_str("patch (merge)"),
            Operation::Delete => f.write_str("delete (after an untimed create)"),
            Operation::List(objects) => write!(f, "list {objects} (rv=0)"),
        }
    }
}

/// How kapi is filled with objects: concurrent creates over one transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loader {
    /// Concurrent creates.
    pub clients: usize,
    /// How they travel.
    pub transport: Transport,
}

/// A running kapi, reached at one address.
pub struct KapiHttp {
    addr: SocketAddr,
    cells: AtomicU64,
    listed: Mutex<BTreeSet<usize>>,
}

impl KapiHttp {
    /// kapi at `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            cells: AtomicU64::new(0),
            listed: Mutex::new(BTreeSet::new()),
        }
    }

    /// Where kapi listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Fills one namespace per list size with that many widgets with `loader`; sizes
    /// already loaded are skipped.
    pub async fn preload_lists(&self, sizes: &[usize], loader: Loader) -> Result<(), String> {
        for &objects in sizes {
            if self.listed.lock().expect("not poisoned").contains(&objects) {
                continue;
            }
            load_widgets(self.addr, &list_namespace(objects), 0..objects, loader).await?;
            self.listed.lock().expect("not poisoned").insert(objects);
        }
        Ok(())
    }

    /// One list of `objects` pre-loaded widgets with `resourceVersion=0`, as kapi
    /// answers it.
    pub async fn list_body(&self, objects: usize) -> Result<Bytes, String> {
        let client = Client::connect(self.addr, Transport::Http1).await?;
        let reply = client
            .send(Method::GET, &list_path(objects), None)
            .await?
            .expect("LIST", StatusCode::OK)?;
        Ok(reply.body)
    }

    /// One worker per client for `operation` over `transport`, after the objects the
    /// operation needs are created.
    pub async fn workers(
        &self,
        operation: Operation,
        transport: Transport,
        clients: usize,
    ) -> Result<Vec<Worker>, String> {
        let cell = self.cells.fetch_add(1, Ordering::Relaxed);
        let connections = client::clients(self.addr, transport, clients).await?;
        let mut workers = Vec::with_capacity(clients);
        for (i, client) in connections.into_iter().enumerate() {
            let prefix = format!("c{cell}-w{i}");
            let worker = match operation {
                Operation::Create => creator(client, prefix),
                Operation::GetConsistent => {
                    create(&client, NAMESPACE, &prefix).await?;
                    getter(client, object_path(NAMESPACE, &prefix))
                }
                Operation::GetCached => {
                    create(&client, NAMESPACE, &prefix).await?;
                    let path = format!("{}?resourceVersion=0", object_path(NAMESPACE, &prefix));
                    getter(client, path)
                }
                Operation::Update => {
                    let created = create(&client, NAMESPACE, &prefix).await?;
                    let version = resource_version(&created.body)?;
                    updater(client, prefix, version)
                }
                Operation::Patch => {
                    create(&client, NAMESPACE, &prefix).await?;
                    patcher(client, prefix)
                }
                Operation::Delete => deleter(client, prefix),
                Operation::List(objects) => {
                    if !self.listed.lock().expect("not poisoned").contains(&objects) {
                        return Err(format!("a list of {objects} before preload_lists"));
                    }
                    getter(client, list_path(objects))
                }
            };
            workers.push(worker);
        }
        Ok(workers)
    }
}

/// Creates `namespace` (unless it exists) and the widgets `w-N` for each N of
/// `names` in it with `loader`; how long the creates took.
pub async fn load_widgets(
    addr: SocketAddr,
    namespace: &str,
    names: Range<usize>,
    loader: Loader,
) -> Result<Duration, String> {
    let first = names.start;
    load_with(
        addr,
        namespace,
        names.len(),
        loader,
        move |client, namespace, i| async move {
            create(&client, &namespace, &format!("w-{}", first + i))
                .await
                .map(drop)
        },
    )
    .await
}

/// Creates `namespace` (unless it exists) and `count` objects in it with `loader`:
/// `create(client, namespace, i)` makes object `i`. How long the creates took.
pub(crate) async fn load_with<F, Fut>(
    addr: SocketAddr,
    namespace: &str,
    count: usize,
    loader: Loader,
    create: F,
) -> Result<Duration, String>
where
    F: Fn(Client, String, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let connections = client::clients(addr, loader.transport, loader.clients.max(1)).await?;
    create_namespace(&connections[0], namespace).await?;
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = connections
        .into_iter()
        .map(|client| {
            let next = next.clone();
            let namespace = namespace.to_string();
            let create = create.clone();
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        return Ok::<_, String>(());
                    }
                    create(client.clone(), namespace.clone(), i).await?;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await
            .map_err(|e| format!("a loader task: {e}"))?
            .map_err(|e| format!("loading {namespace}: {e}"))?;
    }
    Ok(started.elapsed())
}

/// The JSON of widget `name` in `namespace` as kapi serves it; with `cached`, read
/// with `resourceVersion=0` (from the watch cache).
pub async fn get_widget(
    client: &Client,
    namespace: &str,
    name: &str,
    cached: bool,
) -> Result<Bytes, String> {
    let mut path = object_path(namespace, name);
    if cached {
        path.push_str("?resourceVersion=0");
    }
    Ok(client
        .send(Method::GET, &path, None)
        .await?
        .expect("GET", StatusCode::OK)?
        .body)
}

/// The namespace of the pre-loaded list of `objects` widgets.
fn list_namespace(objects: usize) -> String {
    format!("bench-list-{objects}")
}

/// The path of the list of `objects` pre-loaded widgets, with `resourceVersion=0`.
fn list_path(objects: usize) -> String {
    format!(
        "{}?resourceVersion=0",
        collection_path(&list_namespace(objects))
    )
}

fn creator(client: Client, prefix: String) -> Worker {
    Box::new(move |seq| -> OpFuture {
        let client = client.clone();
        let name = format!("{prefix}-{seq}");
        Box::pin(async move {
            create(&client, NAMESPACE, &name).await?;
            Ok(Sample::Whole)
        })
    })
}

fn getter(client: Client, path: String) -> Worker {
    let path = Arc::<str>::from(path);
    Box::new(move |_seq| -> OpFuture {
        let client = client.clone();
        let path = path.clone();
        Box::pin(async move {
            client
                .send(Method::GET, &path, None)
                .await?
                .expect("GET", StatusCode::OK)?;
            Ok(Sample::Whole)
        })
    })
}

fn updater(client: Client, name: String, version: String) -> Worker {
    let path = Arc::<str>::from(object_path(NAMESPACE, &name));
    let last_version = Arc::new(Mutex::new(version));
    Box::new(move |seq| -> OpFuture {
        let client = client.clone();
        let path = path.clone();
        let last_version = last_version.clone();
        let name = name.clone();
        Box::pin(async move {
            let version = last_version.lock().expect("not poisoned").clone();
            let body = widget(&name, Some(&version), seq);
            let reply = client
                .send(Method::PUT, &path, Some((JSON, body)))
                .await?
                .expect("PUT", StatusCode::OK)?;
            *last_version.lock().expect("not poisoned") = resource_version(&reply.body)?;
            Ok(Sample::Whole)
        })
    })
}

fn patcher(client: Client, name: String) -> Worker {
    let path = Arc::<str>::from(object_path(NAMESPACE, &name));
    Box::new(move |seq| -> OpFuture {
        let client = client.clone();
        let path = path.clone();
        let patch = serde_json::json!({
            "metadata": {"annotations": {"bench.kapi.dev/seq": seq.to_string()}}
        });
        Box::pin(async move {
            client
                .send(
                    Method::PATCH,
                    &path,
                    Some((MERGE_PATCH, Bytes::from(patch.to_string()))),
                )
                .await?
                .expect("PATCH", StatusCode::OK)?;
            Ok(Sample::Whole)
        })
    })
}

fn deleter(client: Client, prefix: String) -> Worker {
    Box::new(move |seq| -> OpFuture {
        let client = client.clone();
        let name = format!("{prefix}-{seq}");
        Box::pin(async move {
            create(&client, NAMESPACE, &name).await?;
            let begun = Instant::now();
            client
                .send(Method::DELETE, &object_path(NAMESPACE, &name), None)
                .await?
                .expect("DELETE", StatusCode::OK)?;
            Ok(Sample::Part(begun.elapsed()))
        })
    })
}

/// Creates namespace `name`; one that already exists is left as it is.
pub(crate) async fn create_namespace(client: &Client, name: &str) -> Result<(), String> {
    let namespace = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name},
    });
    let reply = client
        .send(
            Method::POST,
            NAMESPACES,
            Some((JSON, Bytes::from(namespace.to_string()))),
        )
        .await?;
    if reply.status == StatusCode::CONFLICT {
        return Ok(());
    }
    reply.expect("creating a namespace", StatusCode::CREATED)?;
    Ok(())
}

/// Creates widget `name` in `namespace`.
pub(crate) async fn create(client: &Client, namespace: &str, name: &str) -> Result<Reply, String> {
    client
        .send(
            Method::POST,
            &collection_path(namespace),
            Some((JSON, widget(name, None, 0))),
        )
        .await?
        .expect("POST", StatusCode::CREATED)
}

/// Where the widgets of `namespace` live.
pub(crate) fn collection_path(namespace: &str) -> String {
    format!("/apis/{API_VERSION}/namespaces/{namespace}/widgets")
}

fn object_path(namespace: &str, name: &str) -> String {
    format!("{}/{name}", collection_path(namespace))
}

/// A widget of [`SENT_SIZE`] bytes (padded in `spec.config`, which kapi keeps as it
/// is); with `resource_version` for an update, and `replicas` varying with `seq`.
pub fn widget(name: &str, resource_version: Option<&str>, seq: u64) -> Bytes {
    let version = resource_version
        .map(|v| format!(r#","resourceVersion":"{v}""#))
        .unwrap_or_default();
    let replicas = seq % 10;
    let head = format!(
        r#"{{"apiVersion":"{API_VERSION}","kind":"Widget","metadata":{{"name":"{name}"{version},"labels":{{"app":"kapi-bench"}}}},"spec":{{"color":"red","replicas":{replicas},"config":{{"padding":""#
    );
    let tail = r#""}}}"#;
    let padding = SENT_SIZE.saturating_sub(head.len() + tail.len());
    let mut body = String::with_capacity(SENT_SIZE);
    body.push_str(&head);
    body.extend(std::iter::repeat_n('x', padding));
    body.push_str(tail);
    Bytes::from(body)
}

/// The `metadata.resourceVersion` of an object's JSON, found without parsing the rest.
fn resource_version(body: &[u8]) -> Result<String, String> {
    const KEY: &[u8] = br#""resourceVersion":""#;
    let start = body
        .windows(KEY.len())
        .position(|w| w == KEY)
        .map(|i| i + KEY.len())
        .ok_or("no resourceVersion in the reply")?;
    let end = body[start..]
        .iter()
        .position(|&b| b == b'"')
        .ok_or("unterminated resourceVersion")?;
    String::from_utf8(body[start..start + end].to_vec())
        .map_err(|_| "resourceVersion is not UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widgets_have_their_size_and_are_json() {
        let body = widget("c0-w0", Some("42"), 3);
        assert_eq!(body.len(), SENT_SIZE);
        let value: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(value["metadata"]["resourceVersion"], "42");
        assert_eq!(value["spec"]["replicas"], 3);
    }

    #[test]
    fn resource_versions_are_found() {
        let body = br#"{"metadata":{"name":"a","resourceVersion":"1234","uid":"u"}}"#;
        assert_eq!(resource_version(body).as_deref(), Ok("1234"));
        assert!(resource_version(b"{}").is_err());
    }
}
