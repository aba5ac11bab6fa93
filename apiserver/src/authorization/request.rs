//! The [`Attributes`] of a request, as k8s.io/apiserver's `RequestInfoFactory` and
//! `GetAuthorizerAttributes` make them: a resource request's verb from its method, name
//! and `watch` parameter; anything else is a path with the lowercased method as verb.

use kapi_auth::UserInfo;
use kapi_auth::authz::Attributes;

use crate::request::{RequestInfo, Verb};

/// The attributes of a request by `user`, resolved as `info`.
pub fn attributes(user: UserInfo, info: &RequestInfo) -> Attributes {
    let mut attrs = Attributes {
        user,
        path: info.path.clone(),
        ..Attributes::default()
    };
    let (Some(r), Some(verb)) = (info.resource(), info.verb) else {
        attrs.verb = info.method.as_str().to_ascii_lowercase();
        return attrs;
    };
    attrs.verb = verb.as_str().to_string();
    attrs.resource_request = true;
    attrs.api_group = r.group.clone();
    attrs.api_version = r.version.clone();
    attrs.name = match &r.name {
        Some(name) => name.clone(),
        // kube-apiserver authorizes a list or watch of one name (`kubectl get cm x -w`)
        // as that name, so resourceNames rules allow it.
        None if matches!(verb, Verb::List | Verb::Watch) => {
            single_name(info.query.get("fieldSelector")).unwrap_or_default()
        }
        None => String::new(),
    };
    attrs.subresource = r.subresource.clone().unwrap_or_default();
    // `/api/v1/namespaces/foo` is the namespace foo, in the namespace foo.
    attrs.namespace = match &r.namespace {
        Some(ns) => ns.clone(),
        None if r.plural == "namespaces" => attrs.name.clone(),
        None => String::new(),
    };
    attrs.resource = r.plural.clone();
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

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;

    fn of(method: Method, path: &str, query: Option<&str>) -> Attributes {
        let uri = match query {
            Some(q) => format!("{path}?{q}"),
            None => path.to_string(),
        };
        attributes(
            UserInfo::default(),
            &RequestInfo::resolve(&method, &uri.parse().unwrap()),
        )
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
