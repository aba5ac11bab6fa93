//! The API's self-description, computed from the registry: discovery (plain and
//! aggregated), OpenAPI v2 (JSON, and gnostic protobuf for kubectl 1.27 and 1.28) and
//! v3, and `/version`. [`LiveDocuments`] computes them again after the registry
//! changes (a CustomResourceDefinition was established or removed), once, on the
//! first request that needs them. [`Documents::with`] merges in what other servers
//! serve ([`Elsewhere`]), for a front server that aggregates them.

mod elsewhere;

pub use elsewhere::{Elsewhere, RemoteGroup, RemoteOpenApiV3, RemoteVersion};

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use kapi_core::ObjectStrategy;
use serde_json::{Value, json};

use crate::discovery::sha256::sha256;
use crate::discovery::{self, AggregatedVersion, DiscoveryFormat};
use crate::negotiation::parse_accept;
use crate::openapi::{self, OpenApiOptions};
use crate::registry::Registry;
use crate::request::Route;
use crate::response::{Body, api_document, document, error_response};
use crate::status::ApiError;

/// A document serialized once, served many times.
#[derive(Clone)]
struct Doc(Bytes);

impl Doc {
    fn new(value: &Value) -> Self {
        Self(Bytes::from(serde_json::to_vec(value).unwrap_or_default()))
    }

    /// A discovery document: an API object, with the trailing newline kube-apiserver's
    /// serializer writes (OpenAPI documents, served by kube-openapi, have none).
    fn api(value: &Value) -> Self {
        let mut bytes = serde_json::to_vec(value).unwrap_or_default();
        bytes.push(b'\n');
        Self(Bytes::from(bytes))
    }

    fn respond(&self, content_type: &str) -> Response<Body> {
        document(StatusCode::OK, content_type, self.0.clone())
    }

    /// [`Doc::respond`] for a document made by [`Doc::api`].
    fn respond_api(&self, content_type: &str) -> Response<Body> {
        api_document(StatusCode::OK, content_type, self.0.clone())
    }
}

/// `/openapi/v2` in both encodings, with the ETag they share (kube-openapi derives it
/// from the JSON and sends `Vary: Accept`).
struct OpenApiV2 {
    json: Doc,
    protobuf: Doc,
    etag: http::HeaderValue,
}

impl OpenApiV2 {
    fn new(swagger: &Value) -> Self {
        let json = Doc::new(swagger);
        let hex: String = sha256(&json.0).iter().map(|b| format!("{b:02X}")).collect();
        Self {
            protobuf: Doc(Bytes::from(openapi::v2_protobuf(swagger))),
            etag: http::HeaderValue::from_str(&format!("\"{hex}\""))
                .expect("hex is a valid header value"),
            json,
        }
    }

    /// Answers `GET /openapi/v2` as kube-openapi does: the first range of `Accept` (by
    /// preference) that is JSON (`*/*` included) or gnostic protobuf picks the
    /// encoding, no `Accept` means JSON, and nothing acceptable is a 406. A matching
    /// `If-None-Match` gets a 304.
    fn serve<B>(&self, req: &Request<B>, accept: Option<&str>) -> Response<Body> {
        let accept = accept.map(str::trim).filter(|a| !a.is_empty());
        let chosen = match accept {
            None => Some(false),
            Some(a) => parse_accept(a).iter().find_map(|r| {
                if r.is_json() {
                    Some(false)
                } else {
                    (r.type_ == "application"
                        && (r.subtype == openapi::PROTOBUF_SUBTYPE
                            || r.subtype == openapi::PROTOBUF_SUBTYPE_DEPRECATED))
                        .then_some(true)
                }
            }),
        };
        let Some(protobuf) = chosen else {
            return error_response(&ApiError::not_acceptable(&[
                "application/json",
                openapi::PROTOBUF_CONTENT_TYPE,
            ]));
        };
        let not_modified = matches!(*req.method(), http::Method::GET | http::Method::HEAD)
            && req
                .headers()
                .get_all(header::IF_NONE_MATCH)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(|t| t.trim().trim_start_matches("W/"))
                .any(|t| t == "*" || t.as_bytes() == self.etag.as_bytes());
        let mut res = if not_modified {
            let mut res = document(StatusCode::NOT_MODIFIED, "", Vec::new());
            res.headers_mut().remove(header::CONTENT_TYPE);
            res
        } else if protobuf {
            self.protobuf.respond(openapi::PROTOBUF_CONTENT_TYPE)
        } else {
            self.json.respond("application/json")
        };
        let headers = res.headers_mut();
        headers.insert(header::ETAG, self.etag.clone());
        headers.insert(header::VARY, http::HeaderValue::from_static("Accept"));
        headers.insert(
            header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-cache, private"),
        );
        res
    }
}

/// One group-version's OpenAPI v3 document, with the strategies it was built from (so
/// that the next [`Documents`] can reuse it when they did not change).
struct V3 {
    from: Vec<Arc<dyn ObjectStrategy>>,
    doc: Doc,
    hash: String,
}

/// Discovery and OpenAPI documents of one state of the registry. Discovery is built
/// at once; OpenAPI v2 (one document over everything) on its first request; each v3
/// document is taken over from the previous state when its group-version did not change.
pub struct Documents {
    resources: Vec<Arc<dyn ObjectStrategy>>,
    api_versions: Doc,
    api_groups: Doc,
    aggregated: BTreeMap<(bool, &'static str), Doc>,
    openapi_v2: std::sync::OnceLock<OpenApiV2>,
    openapi_v3_index: Doc,
    openapi_v3: BTreeMap<String, Arc<V3>>,
    /// Groups served elsewhere ([`Documents::with`]), for `/apis/{group}`.
    remote_groups: BTreeMap<String, RemoteGroup>,
    /// OpenAPI v2 documents of other servers, merged into `/openapi/v2`.
    remote_openapi_v2: Vec<Arc<Value>>,
}

fn aggregated_key(version: AggregatedVersion) -> &'static str {
    match version {
        AggregatedVersion::V2 => "v2",
        AggregatedVersion::V2Beta1 => "v2beta1",
    }
}

fn same_strategies(a: &[Arc<dyn ObjectStrategy>], b: &[Arc<dyn ObjectStrategy>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
}

impl Documents {
    /// Builds every document for the registry's resources.
    pub fn new(registry: &Registry, address: &str) -> Self {
        Self::following(registry, address, None)
    }

    /// Like [`Documents::new`], reusing what did not change since `previous`.
    fn following(registry: &Registry, address: &str, previous: Option<&Documents>) -> Self {
        let resources = registry.strategies();
        let opts = OpenApiOptions::default();
        let mut aggregated = BTreeMap::new();
        for version in [AggregatedVersion::V2, AggregatedVersion::V2Beta1] {
            let key = aggregated_key(version);
            aggregated.insert(
                (true, key),
                Doc::api(&discovery::aggregated_api(&resources, version)),
            );
            aggregated.insert(
                (false, key),
                Doc::api(&discovery::aggregated_apis(&resources, version)),
            );
        }
        let mut by_gv: BTreeMap<String, Vec<Arc<dyn ObjectStrategy>>> = BTreeMap::new();
        for s in &resources {
            by_gv
                .entry(openapi::group_version_path(
                    &s.info().group,
                    &s.info().version,
                ))
                .or_default()
                .push(s.clone());
        }
        let mut openapi_v3 = BTreeMap::new();
        let mut index = serde_json::Map::new();
        for (path, from) in by_gv {
            let reused = previous
                .and_then(|p| p.openapi_v3.get(&path))
                .filter(|v3| same_strategies(&v3.from, &from))
                .cloned();
            let v3 = match reused {
                Some(v3) => v3,
                None => match openapi::v3_document(&from, &opts, &path) {
                    Some(doc) => Arc::new(V3 {
                        hash: openapi::v3_hash(&doc),
                        doc: Doc::new(&doc),
                        from,
                    }),
                    None => continue,
                },
            };
            index.insert(
                path.clone(),
                json!({ "serverRelativeURL": format!("/openapi/v3/{path}?hash={}", v3.hash) }),
            );
            openapi_v3.insert(path, v3);
        }
        Self {
            api_versions: Doc::api(&discovery::api_versions(address)),
            api_groups: Doc::api(&discovery::api_group_list(&resources)),
            aggregated,
            openapi_v2: std::sync::OnceLock::new(),
            openapi_v3_index: Doc::new(&json!({ "paths": index })),
            openapi_v3,
            resources,
            remote_groups: BTreeMap::new(),
            remote_openapi_v2: Vec::new(),
        }
    }

    fn openapi_v2(&self) -> &OpenApiV2 {
        self.openapi_v2.get_or_init(|| {
            let local = openapi::v2(&self.resources, &OpenApiOptions::default());
            if self.remote_openapi_v2.is_empty() {
                OpenApiV2::new(&local)
            } else {
                self.merged_openapi_v2(local)
            }
        })
    }

    /// Serves `/openapi/v2` and `/openapi/v3[/...]`; `None` for other paths.
    pub fn serve<B>(&self, req: &Request<B>, path: &str) -> Option<Response<Body>> {
        let accept = req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        let path = path.trim_end_matches('/');
        if path == "/openapi/v2" {
            return Some(self.openapi_v2().serve(req, accept));
        }
        let json_ok = accept.is_none_or(|a| parse_accept(a).iter().any(|r| r.is_json()));
        let doc = match path {
            "/openapi/v3" => &self.openapi_v3_index,
            p => match p.strip_prefix("/openapi/v3/") {
                Some(gv) => match self.openapi_v3.get(gv) {
                    Some(v3) => &v3.doc,
                    None => return Some(error_response(&ApiError::no_route())),
                },
                None => return None,
            },
        };
        if !json_ok {
            // Only JSON is served for v3 (clients asking for protobuf alone fall back).
            return Some(error_response(&ApiError::not_acceptable(&[
                "application/json",
            ])));
        }
        let mut res = doc.respond("application/json");
        res.headers_mut().insert(
            header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-cache, private"),
        );
        Some(res)
    }

    /// Serves a discovery route.
    pub fn discovery<B>(&self, req: &Request<B>, route: &Route) -> Response<Body> {
        let accept = req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        let format = discovery::negotiate(accept);
        let aggregated = |core: bool, version: AggregatedVersion| {
            self.aggregated[&(core, aggregated_key(version))].respond_api(format.content_type())
        };
        let found = |v: Option<Value>| match v {
            Some(v) => Doc::api(&v).respond_api("application/json"),
            None => error_response(&ApiError::no_route()),
        };
        match (route, format) {
            (Route::CoreVersions, DiscoveryFormat::Aggregated(v)) => aggregated(true, v),
            (Route::CoreVersions, DiscoveryFormat::Unaggregated) => {
                self.api_versions.respond_api("application/json")
            }
            (Route::Groups, DiscoveryFormat::Aggregated(v)) => aggregated(false, v),
            (Route::Groups, DiscoveryFormat::Unaggregated) => {
                self.api_groups.respond_api("application/json")
            }
            (Route::Group(g), _) => found(
                self.remote_group(g)
                    .or_else(|| discovery::api_group(&self.resources, g)),
            ),
            (Route::Resources { group, version }, _) => found(discovery::api_resource_list(
                &self.resources,
                group,
                version,
            )),
            _ => error_response(&ApiError::no_route()),
        }
    }
}

/// The documents of the registry as it is now: rebuilt when its
/// [`Registry::generation`] has moved since they were computed.
pub struct LiveDocuments {
    address: String,
    current: Mutex<(u64, Arc<Documents>)>,
}

impl LiveDocuments {
    /// The documents of `registry` as it is, for a server reached at `address`.
    pub fn new(registry: &Registry, address: &str) -> Self {
        let generation = registry.generation();
        Self {
            address: address.to_string(),
            current: Mutex::new((generation, Arc::new(Documents::new(registry, address)))),
        }
    }

    /// The documents for the registry's current generation.
    pub fn get(&self, registry: &Registry) -> Arc<Documents> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let generation = registry.generation();
        if current.0 != generation {
            let next = Documents::following(registry, &self.address, Some(&current.1));
            *current = (generation, Arc::new(next));
        }
        current.1.clone()
    }
}

/// `/version`: the Kubernetes version whose API kapi follows, as kube-apiserver writes
/// it (`version.Info`'s fields in order, indented, with no trailing newline: its
/// `WriteRawJSON`).
pub fn version() -> Vec<u8> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Info {
        major: &'static str,
        minor: &'static str,
        git_version: &'static str,
        git_commit: &'static str,
        git_tree_state: &'static str,
        build_date: &'static str,
        go_version: &'static str,
        compiler: &'static str,
        platform: &'static str,
    }
    let info = Info {
        major: "1",
        minor: "33",
        git_version: concat!("v1.33.0+kapi.", env!("CARGO_PKG_VERSION")),
        git_commit: "",
        git_tree_state: "clean",
        build_date: "1970-01-01T00:00:00Z",
        go_version: "",
        compiler: "rustc",
        platform: "linux/amd64",
    };
    crate::go_json::indent(&crate::go_json::encode(&info))
}
