//! # kapi-aggregator
//!
//! The aggregation layer, kube-apiserver's third server (kube-aggregator), in front of
//! the kube and apiextensions servers: it owns what `apiregistration.k8s.io/v1`
//! `APIService` objects mean.
//!
//! - Every group-version served here gets a local APIService ([`autoregister`]).
//! - A request for a group-version whose APIService names a `service` goes to that
//!   server ([`proxy`], over [`backend`]'s connections), with the user kapi
//!   authenticated in front-proxy headers; the rest goes on to the local handlers,
//!   which serve it as if the aggregator were not there.
//! - [`controller`] checks each remote APIService's availability and keeps the routes.
//! - `/apis`, aggregated discovery and OpenAPI v2 and v3 merge in what the remote
//!   servers serve, every group in kube-aggregator's priority order ([`priorities`]).
//!
//! It plugs into the generic server as its [`Front`]. It must not know any resource but
//! APIServices and the Services and Endpoints they name.

pub mod api_service;
pub mod autoregister;
pub mod backend;
mod controller;
pub mod priorities;
pub mod proxy;
pub mod remote;
pub mod resolve;
pub mod routes;

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use http::{Request, Response, StatusCode};
use kapi_apiserver::documents::{Documents, Elsewhere};
use kapi_apiserver::endpoints::{Front, FrontBody};
use kapi_apiserver::registry::Registry;
use kapi_apiserver::request::{RequestInfo, Route};
use kapi_apiserver::response::{Body, error_response};
use kapi_apiserver::status::ApiError;
use kapi_auth::UserInfo;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

pub use backend::ProxyIdentity;
use routes::Routes;

/// The aggregator: the routing table its controller keeps, and the documents it merged
/// last.
pub struct Aggregator {
    routes: RwLock<Arc<Routes>>,
    merged: Mutex<Option<Merged>>,
    /// Wakes the controller when a backend could not be reached.
    nudged: Notify,
}

/// Documents merged from one state of the local documents and one of the routes.
struct Merged {
    local: Arc<Documents>,
    generation: u64,
    documents: Arc<Documents>,
}

/// Starts the aggregator over `registry` (which must serve APIServices), presenting
/// `identity` to the servers it proxies to.
pub fn start(
    registry: Arc<Registry>,
    identity: ProxyIdentity,
    shutdown: watch::Receiver<bool>,
) -> (Arc<Aggregator>, JoinHandle<()>) {
    let aggregator = Arc::new(Aggregator {
        routes: RwLock::new(Arc::new(Routes::default())),
        merged: Mutex::new(None),
        nudged: Notify::new(),
    });
    let controller = controller::Controller::new(aggregator.clone(), registry, identity);
    let task = tokio::spawn(controller.run(shutdown));
    (aggregator, task)
}

impl Aggregator {
    fn routes(&self) -> Arc<Routes> {
        self.routes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the routes; the documents' generation moves only when what they merge
    /// in changed.
    fn publish(
        &self,
        remote: std::collections::HashMap<
            String,
            std::collections::HashMap<String, Arc<routes::Remote>>,
        >,
        elsewhere: Elsewhere,
    ) {
        let mut routes = self.routes.write().unwrap_or_else(PoisonError::into_inner);
        let (elsewhere, generation) = if *routes.elsewhere == elsewhere {
            (routes.elsewhere.clone(), routes.generation)
        } else {
            (Arc::new(elsewhere), routes.generation + 1)
        };
        *routes = Arc::new(Routes {
            remote,
            elsewhere,
            generation,
        });
    }

    /// The local documents with the remote ones merged in, made once per change of
    /// either.
    fn merged(&self, local: Arc<Documents>, routes: &Routes) -> Arc<Documents> {
        let mut merged = self.merged.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = merged
            .as_ref()
            .filter(|m| Arc::ptr_eq(&m.local, &local) && m.generation == routes.generation)
        {
            return m.documents.clone();
        }
        let documents = Arc::new(local.with(&routes.elsewhere));
        *merged = Some(Merged {
            local,
            generation: routes.generation,
            documents: documents.clone(),
        });
        documents
    }
}

fn is_openapi(path: &str) -> bool {
    path == "/openapi/v2" || path == "/openapi/v3" || path.starts_with("/openapi/v3/")
}

#[async_trait::async_trait]
impl Front for Aggregator {
    fn claims(&self, info: &RequestInfo) -> bool {
        let routes = self.routes();
        match &info.route {
            Some(Route::Resource(r)) => routes.remote(&r.group, &r.version).is_some(),
            Some(Route::Resources { group, version }) => routes.remote(group, version).is_some(),
            Some(Route::Group(group)) => routes.is_remote_group(group),
            // Every group in priority order, remote ones or not.
            Some(Route::Groups) => true,
            None => !routes.remote.is_empty() && is_openapi(&info.path),
            _ => false,
        }
    }

    async fn serve(
        &self,
        req: Request<FrontBody>,
        info: &RequestInfo,
        user: &UserInfo,
        local: Arc<Documents>,
    ) -> Response<Body> {
        let routes = self.routes();
        let (group, version) = match &info.route {
            Some(Route::Resource(r)) => (r.group.as_str(), r.version.as_str()),
            Some(Route::Resources { group, version }) => (group.as_str(), version.as_str()),
            Some(route) => return self.merged(local, &routes).discovery(&req, route),
            None => {
                let merged = self.merged(local, &routes);
                return merged
                    .serve(&req, &info.path)
                    .unwrap_or_else(|| error_response(&ApiError::no_route()));
            }
        };
        let Some(remote) = routes.remote(group, version) else {
            return error_response(&ApiError::no_route());
        };
        let backend = match (&remote.backend, remote.available) {
            (Some(backend), true) => backend.clone(),
            _ => return proxy::text_error(StatusCode::SERVICE_UNAVAILABLE, "service unavailable"),
        };
        match proxy::forward(&backend, req, user, info.is_watch()).await {
            Ok(res) => res,
            Err(e) => {
                tracing::debug!(apiservice = %remote.spec.name, error = %e, "proxying failed");
                self.nudged.notify_one();
                proxy::text_error(StatusCode::SERVICE_UNAVAILABLE, &e)
            }
        }
    }
}
