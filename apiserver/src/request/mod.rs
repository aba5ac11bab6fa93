//! What a request asks, resolved once when it arrives (k8s.io/apiserver's
//! `RequestInfoFactory`): the path parsed into a [`Route`], the query decoded, and a
//! resource request's [`Verb`]. The metrics, authorization, limits, the timeout and the
//! handlers all read this one [`RequestInfo`]; none parses the path or the query again.
//!
//! This module knows HTTP and kube's URL layout, and nothing of the registry, the
//! handlers or any resource.

pub mod path;
pub mod query;
pub mod verb;

use http::{Method, Uri};

pub use path::{ResourcePath, Route};
pub use query::Query;
pub use verb::Verb;

/// A request, resolved.
#[derive(Debug)]
pub struct RequestInfo {
    /// The HTTP method.
    pub method: Method,
    /// The path as sent (not decoded): a non-resource request is authorized by it.
    pub path: String,
    /// What the path addresses; `None` outside `/api` and `/apis`.
    pub route: Option<Route>,
    /// The query parameters.
    pub query: Query,
    /// A resource request's verb; `None` for any other request, and for a method
    /// resources do not take.
    pub verb: Option<Verb>,
}

impl RequestInfo {
    /// Resolves a request for `method` on `uri`.
    pub fn resolve(method: &Method, uri: &Uri) -> Self {
        let route = path::parse(uri.path());
        let query = Query::parse(uri.query());
        let verb = match &route {
            Some(Route::Resource(r)) => {
                Verb::of(method, r.name.is_some(), r.watch || query.flag("watch"))
            }
            _ => None,
        };
        Self {
            method: method.clone(),
            path: uri.path().to_string(),
            route,
            query,
            verb,
        }
    }

    /// The resource, object or subresource the request addresses, if any.
    pub fn resource(&self) -> Option<&ResourcePath> {
        match &self.route {
            Some(Route::Resource(r)) => Some(r),
            _ => None,
        }
    }

    /// Whether it is a watch: its response is a stream, with no request timeout.
    pub fn is_watch(&self) -> bool {
        self.verb == Some(Verb::Watch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(method: Method, uri: &str) -> RequestInfo {
        RequestInfo::resolve(&method, &uri.parse().unwrap())
    }

    #[test]
    fn a_request_is_resolved_into_route_query_and_verb() {
        let list = resolve(Method::GET, "/api/v1/namespaces/ns/configmaps?limit=5");
        assert_eq!(list.verb, Some(Verb::List));
        assert_eq!(list.query.get("limit"), Some("5"));
        assert_eq!(list.resource().unwrap().namespace.as_deref(), Some("ns"));
        assert!(resolve(Method::GET, "/api/v1/configmaps?watch=1").is_watch());
        assert!(resolve(Method::GET, "/api/v1/watch/configmaps").is_watch());
        assert!(!resolve(Method::GET, "/api/v1/configmaps?watch=false").is_watch());
        let create = resolve(Method::POST, "/api/v1/namespaces/ns/configmaps");
        assert_eq!(create.verb, Some(Verb::Create));
        let healthz = resolve(Method::GET, "/healthz?verbose");
        assert_eq!((healthz.route, healthz.verb), (None, None));
        assert_eq!(healthz.path, "/healthz");
        let discovery = resolve(Method::GET, "/apis/apps/v1");
        assert!(discovery.resource().is_none());
        assert_eq!(discovery.verb, None);
        assert_eq!(resolve(Method::OPTIONS, "/api/v1/configmaps").verb, None);
    }
}
