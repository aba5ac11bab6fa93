//! `kapi-bench conversion`: what reading an object in another version than the one it
//! is stored in costs (issue #23). One `kapi serve` over HTTPS, as users run it, holds
//! two collections of the same size, about 1 KiB an object: the compiled Widgets,
//! stored in v1 and read in v1alpha1 through the generated in-process conversion, and
//! the Gadgets of a CRD stored in v1 and read in v2 through a conversion webhook (a
//! `ConversionReview` server in this process, over TLS, renaming one field). Each is
//! read in its storage version too, with no conversion, in the same rounds: a GET of
//! one object and a LIST of all of them, as consistent reads (no `resourceVersion`, as
//! client-go and kubectl send them) and from the watch cache (`resourceVersion=0`,
//! where a converted object is memoised). The figures that count are the ratios,
//! converted to not.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http::{Method, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

use crate::https::{Cell, Client, Server, median, requests};
use crate::placement::Cpus;

const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
const WIDGETS_ALPHA: &str = "/apis/example.kapi.dev/v1alpha1/namespaces/default/widgets";
const GADGETS: &str = "/apis/bench.kapi.dev/v1/namespaces/default/gadgets";
const GADGETS_V2: &str = "/apis/bench.kapi.dev/v2/namespaces/default/gadgets";

/// What a run measures.
#[derive(Clone, Debug)]
pub struct ConversionConfig {
    /// The kapi binary.
    pub kapi: PathBuf,
    /// Concurrent clients of the GET cell (LIST runs at most 4).
    pub clients: usize,
    /// How long each cell runs.
    pub duration: Duration,
    /// Objects of each collection.
    pub objects: usize,
    /// Rounds of every cell per target.
    pub rounds: usize,
}

/// One row: a cell on one resource, read in its storage version and converted (each
/// the median of its rounds).
#[derive(Clone, Debug)]
pub struct Row {
    /// The cell's name.
    pub cell: String,
    /// The resource and how it converts.
    pub resource: String,
    /// Read in its storage version.
    pub none: Cell,
    /// Read in the other version.
    pub converted: Cell,
}

/// `obj` in `api_version`: the Gadget's `spec.size` (v1) is v2's `spec.dimension`.
fn convert_gadget(mut obj: Value, api_version: &str) -> Value {
    let to_v2 = api_version.ends_with("/v2");
    let (from, to) = if to_v2 {
        ("size", "dimension")
    } else {
        ("dimension", "size")
    };
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(v) = spec.remove(from) {
            spec.insert(to.into(), v);
        }
    }
    obj["apiVersion"] = json!(api_version);
    obj
}

/// The answer to one `ConversionReview`.
fn review(body: &[u8]) -> Value {
    let review: Value = serde_json::from_slice(body).unwrap_or_default();
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let converted: Vec<Value> = request["objects"]
        .as_array()
        .map(|objects| {
            objects
                .iter()
                .map(|o| convert_gadget(o.clone(), desired))
                .collect()
        })
        .unwrap_or_default();
    json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview",
        "response": {"uid": request["uid"], "convertedObjects": converted,
            "result": {"status": "Success"}}})
}

/// Serves `ConversionReview`s on a loopback port over TLS, with the server's own
/// serving certificate (its CA is then the webhook's `caBundle`); its address.
async fn start_webhook(server: &Server) -> Result<SocketAddr, String> {
    let chain = CertificateDer::pem_file_iter(server.path("pki/apiserver.crt"))
        .map_err(|e| e.to_string())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let key = PrivateKeyDer::from_pem_file(server.path("pki/apiserver.key"))
        .map_err(|e| e.to_string())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| e.to_string())?;
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("the webhook's port: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = tcp.set_nodelay(true);
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(|req: http::Request<Incoming>| async {
                    let body = req.into_body().collect().await?.to_bytes();
                    let answer = serde_json::to_vec(&review(&body)).unwrap_or_default();
                    Ok::<_, hyper::Error>(
                        Response::builder()
                            .header("Content-Type", "application/json")
                            .body(Full::new(Bytes::from(answer)))
                            .expect("a response"),
                    )
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

/// kapi started, the Gadget CRD pointing at the webhook, and `objects` of each kind,
/// about 1 KiB each; kapi and its admin's client.
async fn set_up(config: &ConversionConfig, cpus: &Cpus) -> Result<(Server, Client), String> {
    let server = Server::start(&config.kapi, &[], cpus)?;
    let client = Client::connect(&server).await?;
    let webhook = start_webhook(&server).await?;
    let bundle = base64::engine::general_purpose::STANDARD.encode(&server.ca);
    let schema = |field: &str| {
        json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
            "properties": {field: {"type": "string"}, "count": {"type": "integer"}}}}}})
    };
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.bench.kapi.dev"},
        "spec": {"group": "bench.kapi.dev", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": format!("https://{webhook}/convert"), "caBundle": bundle}}},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema("size")},
                {"name": "v2", "served": true, "storage": false, "schema": schema("dimension")}]}});
    client
        .expect(
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            Some(&crd),
            &[201],
        )
        .await?;
    client
        .wait("/apis/bench.kapi.dev/v2", "kapi serves gadgets", |_| true)
        .await?;
    let filler = "x".repeat(700);
    for i in 0..config.objects {
        let meta = json!({"name": format!("o{i}"), "annotations": {"filler": filler}});
        let widget = json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget", "metadata": meta,
            "spec": {"color": "red", "size": "small", "replicas": 1}});
        client
            .expect(Method::POST, WIDGETS, Some(&widget), &[201])
            .await?;
        let gadget = json!({"apiVersion": "bench.kapi.dev/v1", "kind": "Gadget", "metadata": meta,
            "spec": {"size": "small", "count": 1}});
        client
            .expect(Method::POST, GADGETS, Some(&gadget), &[201])
            .await?;
    }
    // The webhook answers (a converted read succeeds) before anything is measured.
    client
        .expect(Method::GET, &format!("{GADGETS_V2}/o0"), None, &[200])
        .await?;
    Ok((server, client))
}

/// Runs every cell on both resources, each read in its storage version and converted
/// in alternating rounds.
pub async fn run(config: &ConversionConfig) -> Result<Vec<Row>, String> {
    let cpus = Cpus::allowed()?;
    let (server, client) = set_up(config, &cpus).await?;
    let cpu = || crate::server::cpu_time(server.child.id()).unwrap_or_default();
    let resources = [
        ("Widget (compiled): in-process", WIDGETS, WIDGETS_ALPHA),
        ("Gadget (CRD): webhook", GADGETS, GADGETS_V2),
    ];
    let mut rows = Vec::new();
    for (cell, width, object, query) in [
        ("GET", config.clients, true, ""),
        ("LIST", config.clients.min(4), false, ""),
        ("GET rv=0", config.clients, true, "?resourceVersion=0"),
        (
            "LIST rv=0",
            config.clients.min(4),
            false,
            "?resourceVersion=0",
        ),
    ] {
        for (resource, stored, other) in resources {
            let path = |base: &str| {
                if object {
                    format!("{base}/o0{query}")
                } else {
                    format!("{base}{query}")
                }
            };
            let (mut nones, mut converteds) = (Vec::new(), Vec::new());
            for _ in 0..config.rounds {
                for (base, out) in [(stored, &mut nones), (other, &mut converteds)] {
                    let before = cpu();
                    let measured = requests(&client, &path(base), width, config.duration).await;
                    out.push(measured.costing(cpu() - before, config.duration));
                }
            }
            let name = if object {
                format!("{cell} (C = {width})")
            } else {
                format!("{cell}, {} objects (C = {width})", config.objects)
            };
            rows.push(Row {
                cell: name,
                resource: resource.to_string(),
                none: median(nones),
                converted: median(converteds),
            });
        }
    }
    Ok(rows)
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| cell | resource: conversion | storage version /s | converted /s | ratio | storage version p99 ms | converted p99 ms | kapi CPU µs/op: storage version | converted | errors |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let ratio = if r.none.per_second > 0.0 {
            r.converted.per_second / r.none.per_second
        } else {
            0.0
        };
        out.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {:.2} | {:.1} | {:.1} | {:.0} | {:.0} | {} |\n",
            r.cell,
            r.resource,
            r.none.per_second,
            r.converted.per_second,
            ratio,
            r.none.p99_ms,
            r.converted.p99_ms,
            r.none.cpu_us,
            r.converted.cpu_us,
            r.none.errors + r.converted.errors
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_webhook_renames_the_field_each_way_and_answers_the_review() {
        let gadget = json!({"apiVersion": "bench.kapi.dev/v1", "kind": "Gadget",
            "metadata": {"name": "g", "uid": "u"}, "spec": {"size": "small", "count": 1}});
        let answer = review(
            &serde_json::to_vec(&json!({"apiVersion": "apiextensions.k8s.io/v1",
                "kind": "ConversionReview", "request": {"uid": "r-1",
                    "desiredAPIVersion": "bench.kapi.dev/v2", "objects": [gadget.clone()]}}))
            .unwrap(),
        );
        assert_eq!(answer["response"]["uid"], "r-1");
        assert_eq!(answer["response"]["result"]["status"], "Success");
        let v2 = &answer["response"]["convertedObjects"][0];
        assert_eq!(v2["apiVersion"], "bench.kapi.dev/v2");
        assert_eq!(v2["spec"], json!({"dimension": "small", "count": 1}));
        assert_eq!(convert_gadget(v2.clone(), "bench.kapi.dev/v1"), gadget);
    }
}
