//! The verb of a resource request, derived once in one way for every reader: the
//! handlers, authorization and the request metrics (k8s.io/apiserver's
//! `RequestInfoFactory` and the metrics' `cleanVerb`).

use http::Method;

/// A resource request's verb, as kube-apiserver names it in discovery and RBAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET with `watch` (a `/watch/` path or `?watch=true`).
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

impl Verb {
    /// The verb of `method` on a resource path that names one object (`named`) or a
    /// collection, and is a watch or not; `None` for a method resources do not take.
    pub fn of(method: &Method, named: bool, watch: bool) -> Option<Verb> {
        Some(match *method {
            Method::GET | Method::HEAD if watch => Verb::Watch,
            Method::GET | Method::HEAD if named => Verb::Get,
            Method::GET | Method::HEAD => Verb::List,
            Method::POST => Verb::Create,
            Method::PUT => Verb::Update,
            Method::PATCH => Verb::Patch,
            Method::DELETE if named => Verb::Delete,
            Method::DELETE => Verb::DeleteCollection,
            _ => return None,
        })
    }

    /// Its name: `get`, `list`, `watch`, `create`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }

    /// The `verb` label of `apiserver_request_total` for a request with `method`:
    /// `WATCH`, `LIST` and `DELETECOLLECTION` where the method alone does not say it,
    /// else the method.
    pub fn metric_label(verb: Option<Verb>, method: &Method) -> &str {
        match (method, verb) {
            (&Method::GET, Some(Verb::Watch)) => "WATCH",
            (&Method::GET, Some(Verb::List)) => "LIST",
            (&Method::DELETE, Some(Verb::DeleteCollection)) => "DELETECOLLECTION",
            (m, _) => m.as_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_come_from_the_method_the_name_and_watch() {
        let of = |m: Method, named, watch| Verb::of(&m, named, watch).map(Verb::as_str);
        assert_eq!(of(Method::GET, true, false), Some("get"));
        assert_eq!(of(Method::GET, false, false), Some("list"));
        assert_eq!(of(Method::GET, true, true), Some("watch"));
        assert_eq!(of(Method::HEAD, false, false), Some("list"));
        assert_eq!(of(Method::POST, true, false), Some("create"));
        assert_eq!(of(Method::DELETE, false, false), Some("deletecollection"));
        assert_eq!(of(Method::OPTIONS, false, false), None);
        let label = |m: Method, named, watch| {
            Verb::metric_label(Verb::of(&m, named, watch), &m).to_string()
        };
        assert_eq!(label(Method::GET, false, true), "WATCH");
        assert_eq!(label(Method::GET, false, false), "LIST");
        assert_eq!(label(Method::GET, true, false), "GET");
        assert_eq!(label(Method::HEAD, false, false), "HEAD");
        assert_eq!(label(Method::DELETE, false, false), "DELETECOLLECTION");
        assert_eq!(label(Method::OPTIONS, false, false), "OPTIONS");
    }
}
