//! A response of the API: its body type, documents marked as API documents (which the
//! pretty-printer may lay out again), `Status` errors in kube-apiserver's bytes, and
//! `Warning` headers bounded as kube bounds them. Every layer that answers (filters,
//! handlers, discovery) builds its responses here.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use serde_json::Value;

use crate::status::ApiError;

/// A response body: a whole document or a stream of watch events.
pub type Body = BoxBody<Bytes, Infallible>;

/// Builds a JSON response of an API document (see [`api_document`]).
pub fn json_response(code: StatusCode, value: &Value) -> Response<Body> {
    let mut body = serde_json::to_vec(value).unwrap_or_default();
    body.push(b'\n');
    api_document(code, "application/json", body)
}

/// Marks a response whose body is one JSON document of the API (an object, a list, a
/// `Status`, a discovery document) ending in a newline, as kube-apiserver's serializer
/// writes one (Go's `json.Encoder`): such a body is laid out again, indented, when the
/// request asks for it ([`negotiation::PrettyPrint`]). Watch streams and OpenAPI
/// documents are not marked.
#[derive(Clone, Copy, Debug)]
pub struct ApiDocument;

/// A response of an API document already encoded (ending in a newline), marked as
/// [`ApiDocument`].
pub fn api_document(
    code: StatusCode,
    content_type: &str,
    body: impl Into<Bytes>,
) -> Response<Body> {
    let mut res = document(code, content_type, body);
    res.extensions_mut().insert(ApiDocument);
    res
}

/// [`document`] with a body of its own (a list written a chunk at a time).
pub fn document_body<B>(code: StatusCode, content_type: &str, body: B) -> Response<Body>
where
    B: hyper::body::Body<Data = Bytes, Error = Infallible> + Send + Sync + 'static,
{
    let mut res = document(code, content_type, Bytes::new());
    *res.body_mut() = body.boxed();
    res
}

/// Builds a response from bytes with a content type.
pub fn document(code: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut res = Response::new(Full::new(body.into()).boxed());
    *res.status_mut() = code;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        res.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    res
}

/// Renders an error as a `Status` response, in kube-apiserver's bytes.
pub fn error_response(e: &ApiError) -> Response<Body> {
    api_document(
        e.code,
        "application/json",
        crate::go_json::encode(&e.status()),
    )
}

/// The most characters of warnings one response carries, and of each warning once
/// they are over it (kube-apiserver's `truncateAtTotalRunes` and `truncateItemRunes`):
/// a body of a million unknown fields gets a few headers, not a million.
const WARNINGS_TOTAL_CHARS: usize = 4 * 1024;
const WARNING_ITEM_CHARS: usize = 256;

/// The warnings a response carries, as kube-apiserver's warning recorder keeps them:
/// duplicates once; when they are over [`WARNINGS_TOTAL_CHARS`] together, each cut to
/// [`WARNING_ITEM_CHARS`], and those past the total left out.
fn bounded_warnings<'a>(warnings: impl Iterator<Item = &'a str>) -> Vec<std::borrow::Cow<'a, str>> {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&str> = warnings.filter(|w| seen.insert(*w)).collect();
    let total: usize = unique.iter().map(|w| w.chars().count()).sum();
    if total <= WARNINGS_TOTAL_CHARS {
        return unique.into_iter().map(Into::into).collect();
    }
    let mut kept = Vec::new();
    let mut used = 0;
    for w in unique {
        let cut: std::borrow::Cow<'_, str> = match w.char_indices().nth(WARNING_ITEM_CHARS) {
            Some((at, _)) => w[..at].into(),
            None => w.into(),
        };
        used += cut.chars().count();
        if used > WARNINGS_TOTAL_CHARS {
            break;
        }
        kept.push(cut);
    }
    kept
}

/// Adds `Warning: 299 - "..."` headers, as kube-apiserver sends warnings (bounded as
/// [`bounded_warnings`] says).
pub fn with_warnings(mut res: Response<Body>, warnings: &[impl AsRef<str>]) -> Response<Body> {
    for w in bounded_warnings(warnings.iter().map(AsRef::as_ref)) {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            res.headers_mut().append(header::WARNING, v);
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_bounded_as_kube_bounds_them() {
        let few = ["a", "b", "a"];
        assert_eq!(bounded_warnings(few.into_iter()), ["a", "b"]);
        let many: Vec<String> = (0..100_000)
            .map(|i| format!("unknown field \"spec.f{i}\"{}", "x".repeat(300)))
            .collect();
        let kept = bounded_warnings(many.iter().map(String::as_str));
        assert_eq!(kept.len(), WARNINGS_TOTAL_CHARS / WARNING_ITEM_CHARS);
        assert!(kept.iter().all(|w| w.chars().count() == WARNING_ITEM_CHARS));
        assert!(kept[0].starts_with("unknown field \"spec.f0\""));
    }
}
