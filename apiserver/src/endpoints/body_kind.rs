//! Whether the body of a create or update is of the kind its URL names, refused as
//! kube-apiserver refuses it when it is not.
//!
//! kube-apiserver decodes a body into the resource's own type, so what it answers
//! depends on where that type comes from:
//!
//! - A built-in kind is decoded through its scheme and converted to the internal type
//!   (`handlers/create.go`, `update.go` and `transformDecodeError` in `handlers/rest.go`
//!   of k8s.io/apiserver). A kind the scheme does not know (`kind: pod`) is
//!   `pod in version "v1" cannot be handled as a Pod: no kind "pod" is registered for
//!   version "v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"`; a
//!   kind it knows but cannot convert (a ConfigMap sent to namespaces) is
//!   `ConfigMap in version "v1" cannot be handled as a Namespace: converting
//!   (v1.ConfigMap) to (core.Namespace): unknown conversion`; the right kind in another
//!   version decodes, and is then `the API version in the data (autoscaling/v1) does
//!   not match the expected API version (autoscaling/v2)`. All are 400 BadRequest.
//! - A custom resource is decoded as unstructured, which any body is: another
//!   `apiVersion` is the same 400 about the API version, and another `kind` is the
//!   custom resource validator's 422 Invalid, `kind: Invalid value: "Gadget": must be
//!   Widget` (`ValidateTypeMeta` in apiextensions-apiserver's
//!   `registry/customresource/validator.go`).
//!
//! kapi has no Go scheme: a kind "registered" is one kapi serves in that group and
//! version (or list), or the resource's own kind in another version of its group.
//! A missing `apiVersion` or `kind` takes the URL's, as kube's decoder defaults them;
//! values that are not strings are left to the store's checks.

use kapi_core::{FieldError, FieldPath, ResourceInfo};
use serde_json::Value;

use crate::registry::Registry;
use crate::status::ApiError;

/// A group of kinds built into the server, as kube-apiserver's `runtime.Scheme` knows
/// it: the Go package of its internal types (which conversion errors name:
/// `core.Namespace`, `rbac.Role`) and the scheme that registers it, named as the scheme
/// names itself in errors (the file and line that made it). Whoever builds the server
/// lists them ([`super::Api::built_in_groups`]); any other group is served as custom
/// resources are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltInGroup {
    /// The API group (`""` for core).
    pub group: &'static str,
    /// The Go package of its internal types.
    pub package: &'static str,
    /// The scheme's name.
    pub scheme: &'static str,
}

fn built_in(groups: &[BuiltInGroup], group: &str) -> Option<(&'static str, &'static str)> {
    groups
        .iter()
        .find(|g| g.group == group)
        .map(|g| (g.package, g.scheme))
}

/// The group, version and kind a body says it is, defaulted from `info` as kube's
/// decoder defaults them; `None` when kube would not get that far in the same way
/// (not an object, a non-string or unreadable `apiVersion`).
fn body_kind<'a>(info: &'a ResourceInfo, body: &'a Value) -> Option<(&'a str, &'a str, &'a str)> {
    let map = body.as_object()?;
    let text = |field: &str| match map.get(field) {
        None | Some(Value::Null) => Some(""),
        Some(v) => v.as_str(),
    };
    let (api_version, kind) = (text("apiVersion")?, text("kind")?);
    let (group, version) = match api_version.split_once('/') {
        _ if api_version.is_empty() || api_version == "/" => ("", ""),
        None => ("", api_version),
        Some((g, v)) if !v.contains('/') => (g, v),
        Some(_) => return None,
    };
    let kind = if kind.is_empty() { &*info.kind } else { kind };
    match (group, version) {
        ("", "") => Some((&info.group, &info.version, kind)),
        (g, "") if g == &*info.group => Some((g, &info.version, kind)),
        (_, "") => None,
        (g, v) => Some((g, v, kind)),
    }
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// Checks that `body`, the body of a create or update of `info`, is of its kind and
/// version, with kube-apiserver's error when it is not (see the module docs).
pub fn check(
    registry: &Registry,
    groups: &[BuiltInGroup],
    info: &ResourceInfo,
    body: &Value,
) -> Result<(), ApiError> {
    let Some((group, version, kind)) = body_kind(info, body) else {
        return Ok(());
    };
    if (group, version, kind) == (&*info.group, &*info.version, &*info.kind) {
        return Ok(());
    }
    let wrong_version = || {
        ApiError::bad_request(format!(
            "the API version in the data ({}) does not match the expected API version ({})",
            group_version(group, version),
            info.api_version()
        ))
    };
    let Some((package, scheme)) = built_in(groups, &info.group) else {
        if (group, version) != (&*info.group, &*info.version) {
            return Err(wrong_version());
        }
        let name = crate::registry::object::meta_str(body, "name");
        let error = FieldError::invalid(
            &FieldPath::new("kind"),
            kind,
            format!("must be {}", info.kind),
        );
        return Err(ApiError::invalid(info, name, &vec![error]));
    };
    let body_group = built_in(groups, group);
    let registered = body_group.is_some_and(|(_, s)| s == scheme)
        && ((group, kind) == (&*info.group, &*info.kind)
            || registry.stores().iter().any(|s| {
                let served = s.info();
                (&*served.group, &*served.version) == (group, version)
                    && (&*served.kind == kind || &*served.list_kind == kind)
            }));
    let cannot = |why: String| {
        ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {}: {why}",
            info.kind
        ))
    };
    if !registered {
        return Err(cannot(format!(
            "no kind \"{kind}\" is registered for version \"{}\" in scheme \"{}\"",
            group_version(group, version),
            scheme
        )));
    }
    if kind == &*info.kind && body_group.is_some_and(|(p, _)| p == package) {
        return Err(wrong_version());
    }
    Err(cannot(format!(
        "converting ({version}.{kind}) to ({package}.{}): unknown conversion",
        info.kind
    )))
}
