//! The API's self-description, computed once at start from the registry: discovery
//! (plain and aggregated), OpenAPI v2 and v3, and `/version`.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use kapi_core::ObjectStrategy;
use serde_json::{Value, json};

use crate::discovery::{self, AggregatedVersion, DiscoveryFormat};
use crate::endpoints::negotiation::parse_accept;
use crate::endpoints::path::Route;
use crate::endpoints::{Body, document, error_response};
use crate::openapi::{self, OpenApiOptions};
use crate::registry::Registry;
use crate::status::ApiError;

/// A document serialized once, served many times.
#[derive(Clone)]
struct Doc(Bytes);

impl Doc {
    fn new(value: &Value) -> Self {
        Self(Bytes::from(serde_json::to_vec(value).unwrap_or_default()))
    }

    fn respond(&self, content_type: &str) -> Response<Body> {
        document(StatusCode::OK, content_type, self.0.to_vec())
    }
}

/// Precomputed discovery and OpenAPI documents.
pub struct Documents {
    resources: Vec<Arc<dyn ObjectStrategy>>,
    api_versions: Doc,
    api_groups: Doc,
    aggregated: BTreeMap<(bool, &'static str), Doc>,
    openapi_v2: Doc,
    openapi_v3_index: Doc,
    openapi_v3: BTreeMap<String, Doc>,
}

fn aggregated_key(version: AggregatedVersion) -> &'static str {
    match version {
        AggregatedVersion::V2 => "v2",
        AggregatedVersion::V2Beta1 => "v2beta1",
    }
}

impl Documents {
    /// Builds every document for the registry's resources.
    pub fn new(registry: &Registry, address: &str) -> Self {
        let resources = registry.strategies();
        let opts = OpenApiOptions::default();
        let mut aggregated = BTreeMap::new();
        for version in [AggregatedVersion::V2, AggregatedVersion::V2Beta1] {
            let key = aggregated_key(version);
            aggregated.insert(
                (true, key),
                Doc::new(&discovery::aggregated_api(&resources, version)),
            );
            aggregated.insert(
                (false, key),
                Doc::new(&discovery::aggregated_apis(&resources, version)),
            );
        }
        let mut openapi_v3 = BTreeMap::new();
        let mut index = serde_json::Map::new();
        let mut gvs: Vec<String> = resources
            .iter()
            .map(|s| openapi::group_version_path(&s.info().group, &s.info().version))
            .collect();
        gvs.sort();
        gvs.dedup();
        for path in gvs {
            if let Some(doc) = openapi::v3_document(&resources, &opts, &path) {
                let hash = openapi::v3_hash(&doc);
                index.insert(
                    path.clone(),
                    json!({ "serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}") }),
                );
                openapi_v3.insert(path, Doc::new(&doc));
            }
        }
        Self {
            api_versions: Doc::new(&discovery::api_versions(address)),
            api_groups: Doc::new(&discovery::api_group_list(&resources)),
            aggregated,
            openapi_v2: Doc::new(&openapi::v2(&resources, &opts)),
            openapi_v3_index: Doc::new(&json!({ "paths": index })),
            openapi_v3,
            resources,
        }
    }

    /// Serves `/openapi/v2` and `/openapi/v3[/...]`; `None` for other paths.
    pub fn serve<B>(&self, req: &Request<B>, path: &str) -> Option<Response<Body>> {
        let accept = req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        let json_ok = accept.is_none_or(|a| parse_accept(a).iter().any(|r| r.is_json()));
        let path = path.trim_end_matches('/');
        let doc = match path {
            "/openapi/v2" => &self.openapi_v2,
            "/openapi/v3" => &self.openapi_v3_index,
            p => match p.strip_prefix("/openapi/v3/") {
                Some(gv) => match self.openapi_v3.get(gv) {
                    Some(d) => d,
                    None => return Some(error_response(&ApiError::no_route())),
                },
                None => return None,
            },
        };
        if !json_ok {
            // Only JSON is served (clients asking for protobuf alone fall back to v3).
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
            self.aggregated[&(core, aggregated_key(version))].respond(format.content_type())
        };
        let found = |v: Option<Value>| match v {
            Some(v) => Doc::new(&v).respond("application/json"),
            None => error_response(&ApiError::no_route()),
        };
        match (route, format) {
            (Route::CoreVersions, DiscoveryFormat::Aggregated(v)) => aggregated(true, v),
            (Route::CoreVersions, DiscoveryFormat::Unaggregated) => {
                self.api_versions.respond("application/json")
            }
            (Route::Groups, DiscoveryFormat::Aggregated(v)) => aggregated(false, v),
            (Route::Groups, DiscoveryFormat::Unaggregated) => {
                self.api_groups.respond("application/json")
            }
            (Route::Group(g), _) => found(discovery::api_group(&self.resources, g)),
            (Route::Resources { group, version }, _) => found(discovery::api_resource_list(
                &self.resources,
                group,
                version,
            )),
            _ => error_response(&ApiError::no_route()),
        }
    }
}

/// `/version`: the Kubernetes version whose API kapi follows.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": concat!("v1.33.0+kapi.", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "",
        "compiler": "rustc",
        "platform": "linux/amd64",
    })
}
