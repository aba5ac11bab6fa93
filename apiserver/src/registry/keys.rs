//! Storage keys, laid out as kube-apiserver lays them out:
//! `{prefix}/{group}/{plural}/{namespace}/{name}`, without the group segment for the
//! core group, and without the namespace segment for cluster-scoped resources.

use kapi_core::ResourceInfo;

/// The prefix every object of the resource lives under, ending in `/`.
pub fn resource_prefix(prefix: &str, info: &ResourceInfo) -> String {
    group_resource_prefix(prefix, &info.group, &info.plural)
}

/// [`resource_prefix`] from the group and plural alone.
pub fn group_resource_prefix(prefix: &str, group: &str, plural: &str) -> String {
    let prefix = prefix.trim_end_matches('/');
    if group.is_empty() {
        format!("{prefix}/{plural}/")
    } else {
        format!("{prefix}/{group}/{plural}/")
    }
}

/// The prefix of one namespace's objects (or all objects when `namespace` is `None`).
pub fn list_prefix(resource_prefix: &str, namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("{resource_prefix}{ns}/"),
        None => resource_prefix.to_string(),
    }
}

/// The key of one object.
pub fn object_key(resource_prefix: &str, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{resource_prefix}{ns}/{name}"),
        None => format!("{resource_prefix}{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_follows_kube_apiserver() {
        assert_eq!(
            object_key("/registry/configmaps/", Some("default"), "c"),
            "/registry/configmaps/default/c"
        );
        assert_eq!(
            list_prefix("/registry/example.kapi.dev/widgets/", Some("ns")),
            "/registry/example.kapi.dev/widgets/ns/"
        );
        assert_eq!(
            object_key("/registry/namespaces/", None, "default"),
            "/registry/namespaces/default"
        );
    }
}
