//! The [`Attributes`] of a request, as k8s.io/apiserver's `RequestInfoFactory` and
//! `GetAuthorizerAttributes` make them: a resource request's verb from its method, name
//! and `watch` parameter; anything else is a path with the lowercased method as verb.

use http::Method;
use kapi_auth::UserInfo;
use kapi_auth::authz::Attributes;

use crate::endpoints::path::{self, Route};
use crate::endpoints::query::Query;
use crate::endpoints::verb::Verb;

/// The attributes of a request by `user` for `method` on `path` with `query`.
pub fn attributes(user: UserInfo, method: &Method, path: &str, query: Option<&str>) -> Attributes {
    let mut attrs = Attributes {
        user,
        path: path.to_string(),
        ..Attributes::default()
    };
    let Some(Route::Resource(r)) = path::parse(path) else {
        attrs.verb = method.as_str().to_ascii_lowercase();
        return attrs;
    };
    let watch = r.watch || Query::parse(query).flag("watch");
    attrs.verb = match Verb::of(method, r.name.is_some(), watch) {
        Some(verb) => verb.as_str().to_string(),
        None => return non_resource(attrs, method),
    };
    attrs.resource_request = true;
    attrs.api_group = r.group;
    attrs.api_version = r.version;
    attrs.name = match r.name {
        Some(name) => name,
        // kube-apiserver authorizes a list or watch of one name (`kubectl get cm x -w`)
        // as that name, so resourceNames rules allow it.
        None if matches!(attrs.verb.as_str(), "list" | "watch") => {
            single_name(Query::parse(query).get("fieldSelector")).unwrap_or_default()
        }
        None => String::new(),
    };
    attrs.subresource = r.subresource.unwrap_or_default();
    // `/api/v1/namespaces/foo` is the namespace foo, in the namespace foo.
    attrs.namespace = match r.namespace {
        Some(ns) => ns,
        None if r.plural == "namespaces" => attrs.name.clone(),
        None => String::new(),
    };
    attrs.resource = r.plural;
    attrs
}

/// The name a field selector asks for, when it is exactly `metadata.name=X` (or `==`).
fn single_name(selector: Option<&str>) -> Option<String> {
    let selector = selector?.trim();
    if selector.contains(',') {
        return None;
    }
    let (field, value) = selector
        .split_once("==")
        .or_else(|| selector.split_once('='))?;
    (field.trim() == "metadata.name" && !value.contains('=') && !value.trim().is_empty())
        .then(|| value.trim().to_string())
}

fn non_resource(mut attrs: Attributes, method: &Method) -> Attributes {
    attrs.verb = method.as_str().to_ascii_lowercase();
    attrs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: Method, path: &str, query: Option<&str>) -> Attributes {
        attributes(UserInfo::default(), &method, path, query)
    }

    #[test]
    fn verbs_follow_request_info() {
        let a = of(Method::GET, "/api/v1/namespaces/ns/configmaps", None);
        assert_eq!((a.verb.as_str(), a.namespace.as_str()), ("list", "ns"));
        assert!(a.resource_request);
        assert_eq!(
            of(
                Method::GET,
                "/api/v1/namespaces/ns/configmaps",
                Some("watch=true")
            )
            .verb,
            "watch"
        );
        assert_eq!(
            of(Method::GET, "/api/v1/watch/namespaces/ns/configmaps", None).verb,
            "watch"
        );
        assert_eq!(
            of(Method::GET, "/api/v1/namespaces/ns/configmaps/c", None).verb,
            "get"
        );
        assert_eq!(
            of(Method::POST, "/api/v1/namespaces/ns/configmaps", None).verb,
            "create"
        );
        assert_eq!(
            of(Method::PUT, "/api/v1/namespaces/ns/configmaps/c", None).verb,
            "update"
        );
        assert_eq!(
            of(Method::PATCH, "/api/v1/namespaces/ns/configmaps/c", None).verb,
            "patch"
        );
        assert_eq!(
            of(Method::DELETE, "/api/v1/namespaces/ns/configmaps/c", None).verb,
            "delete"
        );
        assert_eq!(
            of(Method::DELETE, "/api/v1/namespaces/ns/configmaps", None).verb,
            "deletecollection"
        );
        let s = of(
            Method::PUT,
            "/apis/example.kapi.dev/v1/namespaces/ns/widgets/w/status",
            None,
        );
        assert_eq!(
            (
                s.api_group.as_str(),
                s.resource.as_str(),
                s.subresource.as_str(),
                s.name.as_str()
            ),
            ("example.kapi.dev", "widgets", "status", "w")
        );
        let ns = of(Method::GET, "/api/v1/namespaces/foo", None);
        assert_eq!(
            (
                ns.resource.as_str(),
                ns.name.as_str(),
                ns.namespace.as_str()
            ),
            ("namespaces", "foo", "foo")
        );
        let one = of(
            Method::GET,
            "/api/v1/namespaces/ns/configmaps",
            Some("watch=1&fieldSelector=metadata.name%3Dc"),
        );
        assert_eq!((one.verb.as_str(), one.name.as_str()), ("watch", "c"));
        let two = of(
            Method::GET,
            "/api/v1/namespaces/ns/configmaps",
            Some("fieldSelector=metadata.name%3Dc,data.x%3Dy"),
        );
        assert_eq!(two.name, "");
        let d = of(Method::GET, "/apis/apps/v1", None);
        assert!(!d.resource_request);
        assert_eq!((d.verb.as_str(), d.path.as_str()), ("get", "/apis/apps/v1"));
        assert!(!of(Method::GET, "/healthz", None).resource_request);
    }
}
