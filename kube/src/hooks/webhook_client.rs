//! A webhook's `clientConfig`, checked as kube's `pkg/apis/admissionregistration`
//! webhook helpers check it (`ValidateWebhookURL`, `ValidateWebhookService`), for the
//! admission webhook configurations and the CRD conversion webhook alike.

use kapi_core::meta::{dns1035_label_errors, dns1123_subdomain_errors};
use kapi_core::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

/// `ValidateWebhookURL`'s hint.
const URL_FORM: &str = "; desired format: https://host[/path]";

/// The parts of an absolute URL kube's `ValidateWebhookURL` looks at, split as Go's
/// `url.Parse` splits them: scheme, user information, host, query, fragment.
struct UrlParts<'a> {
    scheme: &'a str,
    user: Option<&'a str>,
    host: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn split_url(url: &str) -> UrlParts<'_> {
    let (rest, fragment) = match url.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (url, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (scheme, rest) = match rest.split_once("://") {
        Some((s, r)) if !s.is_empty() && !s.contains('/') => (s, r),
        // No scheme: a relative reference, with no host either.
        _ => ("", ""),
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let (user, host_port) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let host = if host_port.starts_with('[') {
        host_port.split_inclusive(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    UrlParts {
        scheme,
        user,
        host,
        query: query.filter(|q| !q.is_empty()),
        fragment: fragment.filter(|f| !f.is_empty()),
    }
}

/// kube's `ValidateWebhookURL` with https required.
pub(crate) fn url_errors(at: &FieldPath, url: &str) -> ErrorList {
    let mut errs = ErrorList::new();
    let parts = split_url(url);
    if parts.scheme != "https" {
        errs.push(FieldError::invalid(
            at,
            parts.scheme,
            format!("'https' is the only allowed URL scheme{URL_FORM}"),
        ));
    }
    if parts.host.is_empty() {
        errs.push(FieldError::invalid(
            at,
            "",
            format!("host must be specified{URL_FORM}"),
        ));
    }
    if let Some(user) = parts.user {
        errs.push(FieldError::invalid(
            at,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if let Some(fragment) = parts.fragment {
        errs.push(FieldError::invalid(
            at,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if let Some(query) = parts.query {
        errs.push(FieldError::invalid(
            at,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
    errs
}

/// kube's `ValidateWebhookService` (the port defaults to 443).
pub(crate) fn service_errors(at: &FieldPath, service: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    if service["name"].as_str().unwrap_or_default().is_empty() {
        errs.push(FieldError::required(
            &at.child("name"),
            "service name is required",
        ));
    }
    if service["namespace"].as_str().unwrap_or_default().is_empty() {
        errs.push(FieldError::required(
            &at.child("namespace"),
            "service namespace is required",
        ));
    }
    let port = service["port"].as_i64().unwrap_or(443);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            &at.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(path) = service["path"].as_str() else {
        return errs;
    };
    let path_at = at.child("path");
    if path.is_empty() || path == "/" {
        return errs;
    }
    if path == "//" {
        errs.push(FieldError::invalid(
            &path_at,
            path,
            "segment[0] may not be empty",
        ));
        return errs;
    }
    if !path.starts_with('/') {
        errs.push(FieldError::invalid(&path_at, path, "must start with a '/'"));
    }
    let inner = path.get(1..).unwrap_or_default();
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    for (i, step) in inner.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(
                &path_at,
                path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for why in dns1123_subdomain_errors(step) {
            errs.push(FieldError::invalid(
                &path_at,
                path,
                format!("segment[{i}]: {why}"),
            ));
        }
    }
    errs
}

/// kube's `validateAdmissionReviewVersions` and `validateConversionReviewVersions`:
/// required (`if_empty` says so), unique, DNS-1035 labels, and, with `accepted`, one of
/// those.
pub(crate) fn review_versions_errors(
    at: &FieldPath,
    versions: &[&str],
    accepted: Option<&[&str]>,
    if_empty: &str,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if versions.is_empty() {
        errs.push(FieldError::required(at, if_empty));
        return errs;
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        if seen.contains(v) {
            errs.push(FieldError::invalid(&at.index(i), *v, "duplicate version"));
            continue;
        }
        seen.push(v);
        for why in dns1035_label_errors(v) {
            errs.push(FieldError::invalid(&at.index(i), *v, why));
        }
    }
    if let Some(accepted) = accepted {
        if !versions.iter().any(|v| accepted.contains(v)) {
            errs.push(FieldError::invalid(
                at,
                Value::from(versions.to_vec()),
                format!("must include at least one of {}", accepted.join(", ")),
            ));
        }
    }
    errs
}
