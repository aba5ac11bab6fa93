//! kapi's two wire formats side by side (issue #18): the same ConfigMaps of about
//! 1 KiB (a built-in kind: custom resources have no protobuf) created, read with
//! `resourceVersion=0`, listed and watched by clients that speak JSON or protobuf.
//!
//! Protobuf clients send what client-go's typed clients and kubectl ≥ 1.32 send:
//! bodies written by prost messages (k8s-pb, kube-rs's bindings of Kubernetes'
//! `.proto` files) in the `k8s\0` envelope, and `Accept:
//! application/vnd.kubernetes.protobuf,application/json`. JSON clients send and
//! accept `application/json`. Lists of both formats read the same pre-loaded
//! namespaces, and each cell's single objects are its own.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, StatusCode};
use k8s_pb::api::core::v1::ConfigMap;
use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message as _;

use super::kapi_http::{Loader, create_namespace, load_with};
use super::watch::{Framing, Watched, fan_out_of};
use crate::client::{self, Client, Transport};
use crate::driver::{OpFuture, Sample, Worker};
use crate::fanout::{FanOut, FanOutMeasured};

/// The namespace of the single-object operations.
const NAMESPACE: &str = "bench-wire";

/// The namespace of the watch fan-outs.
const WATCH_NAMESPACE: &str = "bench-wire-watch";

/// The size of a ConfigMap's JSON as sent; kapi's metadata brings it to about 1 KiB.
const SENT_SIZE: usize = 850;

/// What protobuf clients accept, as kubectl and client-go's typed clients do.
const PROTOBUF_ACCEPT: &str = "application/vnd.kubernetes.protobuf,application/json";

/// The envelope's magic number.
const MAGIC: &[u8] = b"k8s\0";

/// One of kube-apiserver's wire formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    /// `application/json`.
    Json,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

impl Encoding {
    /// Both, JSON first.
    pub const ALL: [Encoding; 2] = [Encoding::Json, Encoding::Protobuf];

    /// The requests' `Content-Type`.
    fn content_type(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Protobuf => "application/vnd.kubernetes.protobuf",
        }
    }

    /// The requests' `Accept`.
    fn accept(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Protobuf => PROTOBUF_ACCEPT,
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Encoding::Json => "JSON",
            Encoding::Protobuf => "protobuf",
        })
    }
}

/// One operation measured in both formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// POST a new ConfigMap.
    Create,
    /// GET one ConfigMap by name with `resourceVersion=0` (from the watch cache).
    GetCached,
    /// GET the list of this many pre-loaded ConfigMaps with `resourceVersion=0`.
    List(usize),
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Create => f.write_str("create"),
            Operation::GetCached => f.write_str("get rv=0"),
            Operation::List(objects) => write!(f, "list {objects} (rv=0)"),
        }
    }
}

/// A running kapi whose ConfigMaps are driven in both formats.
pub struct Wire {
    addr: SocketAddr,
    cells: AtomicU64,
    listed: Mutex<BTreeSet<usize>>,
}

impl Wire {
    /// kapi at `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            cells: AtomicU64::new(0),
            listed: Mutex::new(BTreeSet::new()),
        }
    }

    /// Fills one namespace per list size with that many ConfigMaps (created in JSON,
    /// concurrently with `loader`); sizes already loaded are skipped.
    pub async fn preload_lists(&self, sizes: &[usize], loader: Loader) -> Result<(), String> {
        for &objects in sizes {
            if self.listed.lock().expect("not poisoned").contains(&objects) {
                continue;
            }
            load_with(
                self.addr,
                &list_namespace(objects),
                objects,
                loader,
                |client, ns, i| async move {
                    create(&client, Encoding::Json, &ns, &format!("cm-{i}")).await
                },
            )
            .await?;
            self.listed.lock().expect("not poisoned").insert(objects);
        }
        Ok(())
    }

    /// The size of the body kapi answers the list of `objects` with in `encoding`.
    pub async fn list_size(&self, objects: usize, encoding: Encoding) -> Result<usize, String> {
        let client = Client::connect(self.addr, Transport::Http1).await?;
        let reply = client
            .send_accepting(Method::GET, &list_path(objects), encoding.accept(), None)
            .await?
            .expect("LIST", StatusCode::OK)?;
        Ok(reply.body.len())
    }

    /// One worker per client for `operation` in `encoding` over `transport`, after the
    /// objects the operation needs are created.
    pub async fn workers(
        &self,
        operation: Operation,
        encoding: Encoding,
        transport: Transport,
        clients: usize,
    ) -> Result<Vec<Worker>, String> {
        let cell = self.cells.fetch_add(1, Ordering::Relaxed);
        let connections = client::clients(self.addr, transport, clients).await?;
        create_namespace(&connections[0], NAMESPACE).await?;
        let mut workers = Vec::with_capacity(clients);
        for (i, client) in connections.into_iter().enumerate() {
            let prefix = format!("c{cell}-w{i}");
            let worker = match operation {
                Operation::Create => creator(client, encoding, prefix),
                Operation::GetCached => {
                    create(&client, encoding, NAMESPACE, &prefix).await?;
                    let path = format!("{}?resourceVersion=0", object_path(NAMESPACE, &prefix));
                    getter(client, encoding, path)
                }
                Operation::List(objects) => {
                    if !self.listed.lock().expect("not poisoned").contains(&objects) {
                        return Err(format!("a list of {objects} before preload_lists"));
                    }
                    getter(client, encoding, list_path(objects))
                }
            };
            workers.push(worker);
        }
        Ok(workers)
    }

    /// A watch fan-out of ConfigMaps whose watchers read `encoding` (the writer
    /// creates in it too); `round` keeps names apart between runs.
    pub async fn fan_out(
        &self,
        spec: FanOut,
        round: usize,
        encoding: Encoding,
    ) -> Result<FanOutMeasured, String> {
        let watched = Watched {
            namespace: WATCH_NAMESPACE,
            collection: collection_path(WATCH_NAMESPACE),
            accept: match encoding {
                // Watches answer one format: a watcher that prefers protobuf asks only
                // for it, as client-go's typed informers do.
                Encoding::Json => "application/json",
                Encoding::Protobuf => "application/vnd.kubernetes.protobuf;stream=watch",
            },
            framing: match encoding {
                Encoding::Json => Framing::Lines,
                Encoding::Protobuf => Framing::LengthPrefixed,
            },
            write: Arc::new(move |writer, name| -> crate::fanout::WriteFuture {
                Box::pin(async move {
                    create(&writer, encoding, WATCH_NAMESPACE, &name)
                        .await
                        .map(drop)
                })
            }),
        };
        fan_out_of(self.addr, spec, round, watched).await
    }
}

fn creator(client: Client, encoding: Encoding, prefix: String) -> Worker {
    Box::new(move |seq| -> OpFuture {
        let client = client.clone();
        let name = format!("{prefix}-{seq}");
        Box::pin(async move {
            create(&client, encoding, NAMESPACE, &name).await?;
            Ok(Sample::Whole)
        })
    })
}

fn getter(client: Client, encoding: Encoding, path: String) -> Worker {
    let path = Arc::<str>::from(path);
    Box::new(move |_seq| -> OpFuture {
        let client = client.clone();
        let path = path.clone();
        Box::pin(async move {
            let reply = client
                .send_accepting(Method::GET, &path, encoding.accept(), None)
                .await?
                .expect("GET", StatusCode::OK)?;
            check_format(encoding, &reply.body)?;
            Ok(Sample::Whole)
        })
    })
}

/// That an answer is in the format asked for: a server that fell back to JSON would
/// otherwise be measured as protobuf.
fn check_format(encoding: Encoding, body: &[u8]) -> Result<(), String> {
    let protobuf = body.starts_with(MAGIC);
    if protobuf == (encoding == Encoding::Protobuf) {
        Ok(())
    } else {
        Err(format!("asked for {encoding}, answered otherwise"))
    }
}

/// Creates ConfigMap `name` in `namespace`, sent and answered in `encoding`.
async fn create(
    client: &Client,
    encoding: Encoding,
    namespace: &str,
    name: &str,
) -> Result<(), String> {
    let reply = client
        .send_accepting(
            Method::POST,
            &collection_path(namespace),
            encoding.accept(),
            Some((encoding.content_type(), config_map(name, encoding))),
        )
        .await?
        .expect("POST", StatusCode::CREATED)?;
    check_format(encoding, &reply.body)
}

/// The ConfigMap `name` of [`SENT_SIZE`] bytes of JSON (padded in `data`), in
/// `encoding`: the same object either way.
pub fn config_map(name: &str, encoding: Encoding) -> Bytes {
    let head = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","labels":{{"app":"kapi-bench"}}}},"data":{{"padding":""#
    );
    let tail = r#""}}"#;
    let padding = "x".repeat(SENT_SIZE.saturating_sub(head.len() + tail.len()));
    match encoding {
        Encoding::Json => Bytes::from(format!("{head}{padding}{tail}")),
        Encoding::Protobuf => {
            let object = ConfigMap {
                metadata: Some(ObjectMeta {
                    name: Some(name.to_string()),
                    labels: BTreeMap::from([("app".to_string(), "kapi-bench".to_string())]),
                    ..ObjectMeta::default()
                }),
                data: BTreeMap::from([("padding".to_string(), padding)]),
                ..ConfigMap::default()
            };
            let unknown = Unknown {
                type_meta: Some(TypeMeta {
                    api_version: Some("v1".to_string()),
                    kind: Some("ConfigMap".to_string()),
                }),
                raw: Some(object.encode_to_vec()),
                content_encoding: Some(String::new()),
                content_type: Some(String::new()),
            };
            let mut body = MAGIC.to_vec();
            unknown
                .encode(&mut body)
                .expect("a Vec grows as prost writes");
            Bytes::from(body)
        }
    }
}

/// The namespace of the pre-loaded list of `objects` ConfigMaps.
fn list_namespace(objects: usize) -> String {
    format!("bench-wire-list-{objects}")
}

/// The path of the list of `objects` pre-loaded ConfigMaps, with `resourceVersion=0`.
fn list_path(objects: usize) -> String {
    format!(
        "{}?resourceVersion=0",
        collection_path(&list_namespace(objects))
    )
}

fn collection_path(namespace: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/configmaps")
}

fn object_path(namespace: &str, name: &str) -> String {
    format!("{}/{name}", collection_path(namespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_encodings_hold_the_same_config_map() {
        let json = config_map("cm-1", Encoding::Json);
        assert_eq!(json.len(), SENT_SIZE);
        let value: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
        let protobuf = config_map("cm-1", Encoding::Protobuf);
        let unknown = Unknown::decode(&protobuf[MAGIC.len()..]).expect("an envelope");
        let object =
            ConfigMap::decode(unknown.raw.as_deref().unwrap_or_default()).expect("ConfigMap");
        let meta = object.metadata.expect("metadata");
        assert_eq!(meta.name.as_deref(), value["metadata"]["name"].as_str());
        assert_eq!(meta.labels["app"], "kapi-bench");
        assert_eq!(
            Some(object.data["padding"].as_str()),
            value["data"]["padding"].as_str()
        );
        assert!(check_format(Encoding::Protobuf, &protobuf).is_ok());
        assert!(check_format(Encoding::Protobuf, &json).is_err());
        assert!(check_format(Encoding::Json, &json).is_ok());
    }
}
