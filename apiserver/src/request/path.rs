//! Request paths → what they address, as k8s.io/apiserver's `RequestInfoFactory`
//! parses them: `/api/v1/...` for the core group, `/apis/{group}/{version}/...`
//! otherwise, `namespaces/{ns}/` for namespaced resources, the legacy `watch/` prefix.

/// A request for a resource (or one object, or one object's subresource).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group, `""` for the core group.
    pub group: String,
    /// Version.
    pub version: String,
    /// The namespace from the path, if any.
    pub namespace: Option<String>,
    /// Plural resource name.
    pub plural: String,
    /// Object name, if the path names one.
    pub name: Option<String>,
    /// `status`, `scale`, ... if the path names a subresource.
    pub subresource: Option<String>,
    /// The path used the legacy `/watch/` prefix.
    pub watch: bool,
}

/// What a path addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `/api`: the core group's versions.
    CoreVersions,
    /// `/apis`: the group list.
    Groups,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`: the resource list.
    Resources {
        /// The group (`""` for core).
        group: String,
        /// The version.
        version: String,
    },
    /// A resource, object or subresource.
    Resource(ResourcePath),
    /// Anything else under `/api` or `/apis`.
    Unknown,
}

/// Subresources of a namespace that follow `/namespaces/{name}/` (and so are not a
/// namespaced resource's plural).
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// More segments than any path kube reads has.
const MAX_SEGMENTS: usize = 10;

/// Parses a path under `/api` or `/apis`; `None` for other paths.
///
/// The path is percent-decoded first, whole, as Go's `URL.Path` is before
/// kube-apiserver splits it: `configmaps/%C3%A9` names `é`, and `%2F` is a `/` that
/// separates segments. Escapes that decode to no UTF-8 become U+FFFD, which no name
/// allows; malformed escapes stay as written.
pub fn parse(path: &str) -> Option<Route> {
    // Most paths have no escape: they are read as they are, not scanned twice.
    let decoded = match path.contains('%') {
        true => percent_encoding::percent_decode_str(path).decode_utf8_lossy(),
        false => std::borrow::Cow::Borrowed(path),
    };
    // The longest path kube reads has nine segments
    // (`apis/{group}/{version}/watch/namespaces/{ns}/{plural}/{name}/{sub}`).
    let mut parts = [""; MAX_SEGMENTS];
    let mut count = 0;
    for part in decoded.trim_matches('/').split('/') {
        if count == MAX_SEGMENTS {
            return match parts[0] {
                "api" | "apis" => Some(Route::Unknown),
                _ => None,
            };
        }
        parts[count] = part;
        count += 1;
    }
    let (group, version, rest) = match &parts[..count] {
        ["api"] => return Some(Route::CoreVersions),
        ["apis"] => return Some(Route::Groups),
        ["apis", g] => return Some(Route::Group(g.to_string())),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    if rest.is_empty() {
        return Some(Route::Resources {
            group: group.to_string(),
            version: version.to_string(),
        });
    }
    let mut rest = rest;
    let mut watch = false;
    if rest[0] == "watch" {
        watch = true;
        rest = &rest[1..];
    }
    let mut namespace = None;
    let mut scoped = false;
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        namespace = Some(rest[1].to_string());
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
            scoped = true;
        }
    }
    if rest.iter().any(|p| p.is_empty()) {
        return Some(Route::Unknown);
    }
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, sub] => (*plural, Some(*name), Some(*sub)),
        _ => return Some(Route::Unknown),
    };
    // `/namespaces/{name}` addresses the namespace itself, not a namespace scope (but
    // `/namespaces/{ns}/namespaces` asks for namespaces inside one, which do not exist).
    if plural == "namespaces" && !scoped {
        namespace = None;
    }
    Some(Route::Resource(ResourcePath {
        group: group.to_string(),
        version: version.to_string(),
        namespace,
        plural: plural.to_string(),
        name: name.map(str::to_string),
        subresource: subresource.map(str::to_string),
        watch,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            Some(Route::Resource(r)) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn paths_are_percent_decoded_before_they_are_split() {
        let r = res("/api/v1/namespaces/default/configmaps/%C3%A9");
        assert_eq!(r.name.as_deref(), Some("é"));
        let r = res("/api/v1/namespaces/d%65fault/configmaps/a%2Fstatus");
        assert_eq!(r.namespace.as_deref(), Some("default"));
        assert_eq!(
            (r.name.as_deref(), r.subresource.as_deref()),
            (Some("a"), Some("status"))
        );
        assert_eq!(res("/api/v1/configmaps/%zz").name.as_deref(), Some("%zz"));
    }

    #[test]
    fn paths_parse_as_kube_apiserver_parses_them() {
        assert_eq!(parse("/api"), Some(Route::CoreVersions));
        assert_eq!(parse("/apis/"), Some(Route::Groups));
        assert_eq!(
            parse("/apis/example.kapi.dev"),
            Some(Route::Group("example.kapi.dev".into()))
        );
        assert_eq!(
            parse("/api/v1"),
            Some(Route::Resources {
                group: "".into(),
                version: "v1".into()
            })
        );
        let r = res("/apis/example.kapi.dev/v1/namespaces/ns1/widgets/w1/status");
        assert_eq!(
            (
                r.group.as_str(),
                r.namespace.as_deref(),
                r.plural.as_str(),
                r.name.as_deref(),
                r.subresource.as_deref()
            ),
            (
                "example.kapi.dev",
                Some("ns1"),
                "widgets",
                Some("w1"),
                Some("status")
            )
        );
        let r = res("/api/v1/namespaces/ns1");
        assert_eq!(
            (r.plural.as_str(), r.name.as_deref(), r.namespace),
            ("namespaces", Some("ns1"), None)
        );
        // Namespaces are cluster-scoped: inside a namespace there are none to address.
        let r = res("/api/v1/namespaces/ns1/namespaces");
        assert_eq!(
            (r.plural.as_str(), r.name.as_deref(), r.namespace.as_deref()),
            ("namespaces", None, Some("ns1"))
        );
        let r = res("/api/v1/namespaces/ns1/finalize");
        assert_eq!(
            (
                r.plural.as_str(),
                r.name.as_deref(),
                r.subresource.as_deref()
            ),
            ("namespaces", Some("ns1"), Some("finalize"))
        );
        let r = res("/api/v1/watch/namespaces/default/configmaps");
        assert!(r.watch);
        assert_eq!(
            (r.namespace.as_deref(), r.plural.as_str()),
            (Some("default"), "configmaps")
        );
        let r = res("/api/v1/configmaps");
        assert_eq!((r.namespace, r.name), (None, None));
        assert_eq!(parse("/healthz"), None);
        assert_eq!(parse("/api/v1/a/b/c/d"), Some(Route::Unknown));
        // The longest path read, and past it.
        let r = res("/apis/g/v1/watch/namespaces/ns1/widgets/w1/status");
        assert_eq!((r.watch, r.subresource.as_deref()), (true, Some("status")));
        assert_eq!(parse("/apis/g/v1/a/b/c/d/e/f/g/h/i"), Some(Route::Unknown));
        assert_eq!(parse("/api/v1/a/b/c/d/e/f/g/h/i/j"), Some(Route::Unknown));
        assert_eq!(parse("/other/1/2/3/4/5/6/7/8/9/10/11"), None);
    }
}
