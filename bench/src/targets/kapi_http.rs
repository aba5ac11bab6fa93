//! kapi's operations over HTTP, against a running `kapi serve`: create, get by name,
//! update with `resourceVersion`, merge patch, delete and list (of pre-loaded
//! objects, with `resourceVersion=0`), on `Widget`s of about 1 KiB.
//!
//! Every cell works on objects of its own (names carry the cell's number), and lists
//! read a namespace of their own, so cells do not disturb each other's figures.

use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// The namespace of the pre-loaded objects lists read.
const LIST_NAMESPACE: &str = "bench-list";

/// The size of a widget's JSON as sent; kapi's metadata and defaults bring the stored
/// object to about 1 KiB.
const SENT_SIZE: usize = 850;

const JSON: &str = "application/json";
const MERGE_PATCH: &str = "application/merge-patch+json";

/// One of kapi's operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// POST a new widget.
    Create,
    /// GET one widget by name.
    Get,
    /// PUT a widget with the `resourceVersion` of the last write.
    Update,
    /// PATCH a widget with a JSON merge patch.
    Patch,
    /// DELETE a widget, each after an untimed create of it: latencies are the
    /// deletes', throughput counts create-and-delete pairs.
    Delete,
    /// GET the list of the pre-loaded widgets with `resourceVersion=0`.
    List,
}

impl Operation {
    /// Every operation, in the order the report shows them.
    pub const ALL: [Operation; 6] = [
        Operation::Create,
        Operation::Get,
        Operation::Update,
        Operation::Patch,
        Operation::Delete,
        Operation::List,
    ];
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::Create => "create",
            Operation::Get => "get",
            Operation::Update => "update",
            Operation::Patch => "patch (merge)",
            Operation::Delete => "delete (after an untimed create)",
            Operation::List => "list (rv=0)",
        })
    }
}

/// A running kapi, reached at one address.
pub struct KapiHttp {
    addr: SocketAddr,
    cells: AtomicU64,
    listed: Mutex<Option<usize>>,
}

impl KapiHttp {
    /// kapi at `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            cells: AtomicU64::new(0),
            listed: Mutex::new(None),
        }
    }

    /// Creates the list namespace with `objects` widgets in it, once per server (the
    /// size of the first call stays).
    pub async fn preload_list(&self, objects: usize) -> Result<(), String> {
        if self.listed.lock().expect("not poisoned").is_some() {
            return Ok(());
        }
        let client = Client::connect(self.addr, Transport::Http1).await?;
        create_namespace(&client, LIST_NAMESPACE).await?;
        for i in 0..objects {
            create(&client, LIST_NAMESPACE, &format!("listed-{i}")).await?;
        }
        *self.listed.lock().expect("not poisoned") = Some(objects);
        Ok(())
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
                Operation::Get => {
                    create(&client, NAMESPACE, &prefix).await?;
                    getter(client, prefix)
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
                Operation::List => {
                    if self.listed.lock().expect("not poisoned").is_none() {
                        return Err("list before preload_list".to_string());
                    }
                    lister(client)
                }
            };
            workers.push(worker);
        }
        Ok(workers)
    }
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

fn getter(client: Client, name: String) -> Worker {
    let path = Arc::<str>::from(object_path(NAMESPACE, &name));
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

fn lister(client: Client) -> Worker {
    let path = Arc::<str>::from(format!(
        "{}?resourceVersion=0",
        collection_path(LIST_NAMESPACE)
    ));
    Box::new(move |_seq| -> OpFuture {
        let client = client.clone();
        let path = path.clone();
        Box::pin(async move {
            client
                .send(Method::GET, &path, None)
                .await?
                .expect("LIST", StatusCode::OK)?;
            Ok(Sample::Whole)
        })
    })
}

/// POSTs the widget `name` into `namespace`; the reply must be 201.
/// Creates namespace `name`.
pub(crate) async fn create_namespace(client: &Client, name: &str) -> Result<(), String> {
    let namespace = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name},
    });
    client
        .send(
            Method::POST,
            NAMESPACES,
            Some((JSON, Bytes::from(namespace.to_string()))),
        )
        .await?
        .expect("creating a namespace", StatusCode::CREATED)?;
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
