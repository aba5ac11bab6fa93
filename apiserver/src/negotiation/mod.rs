//! Content negotiation, as k8s.io/apiserver's `negotiation` package: which media type
//! a client accepts (JSON, YAML, protobuf, a Table or PartialObjectMetadata), how the
//! answer is laid out, and reading request bodies ([`decode`]).
//!
//! Handlers, discovery, Tables and presentation read it; it knows no handler.

pub mod accept;
pub mod decode;

pub use accept::{Conversion, MediaRange, MetaVersion, conversion, parse_accept};
pub use decode::{Decoded, MAX_NESTING, decode_body, decode_object, nesting, summarize};

use std::cell::RefCell;

use crate::status::ApiError;

/// The longest `Accept` a thread remembers (kubectl's, the longest usual one, is about
/// 150 bytes).
const MEMO_ACCEPT: usize = 512;

/// The body of a response, as the client asked for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The object as JSON.
    Json,
    /// The object as YAML.
    Yaml,
    /// A `meta.k8s.io` Table or PartialObjectMetadata(List).
    Converted(Conversion),
    /// Kubernetes' protobuf (`application/vnd.kubernetes.protobuf`), for a kind the
    /// catalog has a message for.
    Protobuf(Wire),
}

/// The protobuf a negotiated [`Output::Protobuf`] answers with: the catalog, and the
/// message of the resource's kind when the request is for one, looked up once per
/// request. Equal when both are the same.
#[derive(Clone, Copy, Debug)]
pub struct Wire {
    /// The catalog of built-in kinds.
    pub catalog: &'static kapi_core::protobuf::Catalog,
    /// The message of the kind the request reads or writes (`None` for requests of no
    /// one kind: reviews, subresources whose body names its own kind).
    pub object: Option<&'static kapi_core::protobuf::Message>,
}

impl Wire {
    /// The catalog alone.
    pub fn catalog(catalog: &'static kapi_core::protobuf::Catalog) -> Self {
        Self {
            catalog,
            object: None,
        }
    }

    /// The catalog and the message of the request's kind.
    pub fn of(
        catalog: &'static kapi_core::protobuf::Catalog,
        object: &'static kapi_core::protobuf::Message,
    ) -> Self {
        Self {
            catalog,
            object: Some(object),
        }
    }
}

impl PartialEq for Wire {
    fn eq(&self, other: &Self) -> bool {
        let object = |w: &Self| w.object.map(std::ptr::from_ref);
        std::ptr::eq(self.catalog, other.catalog) && object(self) == object(other)
    }
}

impl Eq for Wire {}

/// The media types objects are served in.
pub const SERVED: &[&str] = &["application/json", "application/yaml"];

/// The media types built-in kinds are served in: protobuf too, as kube-apiserver lists
/// them.
pub const SERVED_WITH_PROTOBUF: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// The media types of a resource whose kind has (`Some`) or lacks a protobuf message.
pub fn served(protobuf: Option<Wire>) -> &'static [&'static str] {
    if protobuf.is_some() {
        SERVED_WITH_PROTOBUF
    } else {
        SERVED
    }
}

/// Whether `content_type` is Kubernetes' protobuf.
pub fn is_protobuf(content_type: &str) -> bool {
    essence(content_type) == "application/vnd.kubernetes.protobuf"
}

/// What a request's `Accept` asks for, read once per request: the handler's output
/// format (with or without a protobuf form, which only the resource decides) and the
/// layout of the answer ([`PrettyPrint`]) both come from the same ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accepted {
    /// The format of a resource whose kind has a protobuf message.
    with_protobuf: Choice,
    /// The format of one without.
    without_protobuf: Choice,
    /// The first JSON or YAML range's `pretty=1` (`Some(false)` for a range without it,
    /// `None` when no range is JSON or YAML), conversions allowed...
    pretty_success: Option<bool>,
    /// ... and not (an error's `Status` is never a conversion).
    pretty_error: Option<bool>,
}

/// One negotiated format, before the resource's protobuf message is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    Json,
    Yaml,
    Converted(Conversion),
    Protobuf,
    NotAcceptable,
}

impl Accepted {
    /// The request's `Accept` header, read.
    pub fn of(headers: &http::HeaderMap) -> Self {
        thread_local! {
            // The last `Accept` read on this thread: a client sends the same one with
            // every request.
            static LAST: RefCell<(String, Option<Accepted>)> =
                const { RefCell::new((String::new(), None)) };
        }
        let Some(accept) = headers
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
        else {
            return Self::parse(None);
        };
        if accept.len() > MEMO_ACCEPT {
            return Self::parse(Some(accept));
        }
        LAST.with_borrow_mut(|(last, accepted)| match accepted {
            Some(accepted) if last == accept => *accepted,
            _ => {
                let parsed = Self::parse(Some(accept));
                last.clear();
                last.push_str(accept);
                *accepted = Some(parsed);
                parsed
            }
        })
    }

    /// An `Accept` header's value, read; a missing or blank one takes JSON.
    pub fn parse(accept: Option<&str>) -> Self {
        let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
            return Self {
                with_protobuf: Choice::Json,
                without_protobuf: Choice::Json,
                pretty_success: Some(false),
                pretty_error: Some(false),
            };
        };
        let ranges = parse_accept(accept);
        let choose = |protobuf: bool| {
            ranges
                .iter()
                .find_map(|range| choice(range, protobuf))
                .unwrap_or(Choice::NotAcceptable)
        };
        let pretty = |conversions: bool| {
            ranges.iter().find_map(|r| {
                let json = r.is_json()
                    && (r.param("as").is_none() || conversions && conversion(r).is_some());
                (json || r.is_yaml()).then(|| json && r.param("pretty") == Some("1"))
            })
        };
        Self {
            with_protobuf: choose(true),
            without_protobuf: choose(false),
            pretty_success: pretty(true),
            pretty_error: pretty(false),
        }
    }

    /// The response format for an object or list request: the first range the server
    /// can answer, by the client's preference. Protobuf is one of them when the kind
    /// has a message (`protobuf`); for a custom resource a protobuf range is passed
    /// over, as kube-apiserver passes it over.
    pub fn output(&self, protobuf: Option<Wire>) -> Result<Output, ApiError> {
        let choice = match protobuf {
            Some(_) => self.with_protobuf,
            None => self.without_protobuf,
        };
        match (choice, protobuf) {
            (Choice::Json, _) => Ok(Output::Json),
            (Choice::Yaml, _) => Ok(Output::Yaml),
            (Choice::Converted(c), _) => Ok(Output::Converted(c)),
            (Choice::Protobuf, Some(wire)) => Ok(Output::Protobuf(wire)),
            (Choice::Protobuf | Choice::NotAcceptable, _) => {
                Err(ApiError::not_acceptable(served(protobuf)))
            }
        }
    }
}

/// What `range` asks for, if the server can answer it (`protobuf`: the kind has a
/// message).
fn choice(range: &MediaRange, protobuf: bool) -> Option<Choice> {
    if range.is_json() {
        if range.param("as").is_none() {
            return Some(Choice::Json);
        }
        return conversion(range).map(Choice::Converted);
    }
    if range.type_ == "application" && range.subtype == "vnd.kubernetes.protobuf" {
        return (protobuf && range.param("as").is_none()).then_some(Choice::Protobuf);
    }
    range.is_yaml().then_some(Choice::Yaml)
}

/// The `Content-Type` of a response in `output` (kube-apiserver answers conversions
/// with plain JSON).
pub fn content_type(output: Output) -> &'static str {
    match output {
        Output::Yaml => "application/yaml",
        Output::Protobuf(_) => "application/vnd.kubernetes.protobuf",
        Output::Json | Output::Converted(_) => "application/json",
    }
}

/// Whether a response's JSON is indented (Go's `json.MarshalIndent`) rather than
/// compact, decided from the request as kube-apiserver decides it
/// (`negotiation.NegotiateOutputMediaType` and `isPrettyPrint` in k8s.io/apiserver):
/// the negotiated media range has `pretty=1`; or the query's first `pretty` is true
/// (Go's `strconv.ParseBool`: `1`, `t`, `true`, ...; a value it cannot read is false);
/// or, without a `pretty` value, the `User-Agent` begins with `curl`, `Wget` or
/// `Mozilla/5.0`. An error whose `Status` cannot be given in any type the client
/// accepts is indented whatever the request says (kube's `WriteRawJSON`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrettyPrint {
    /// For a successful response: the range chosen may be a conversion (`as=Table`).
    pub success: bool,
    /// For an error's `Status`, negotiated with no conversion allowed.
    pub error: bool,
}

impl PrettyPrint {
    /// The layout a request's answers get, its `Accept` read already.
    pub fn from_accepted(
        accepted: &Accepted,
        headers: &http::HeaderMap,
        query: &crate::request::Query,
    ) -> Self {
        let asked = match query.get("pretty") {
            Some(v) if !v.is_empty() => {
                matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True")
            }
            _ => headers
                .get(http::header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|ua| {
                    ["curl", "Wget", "Mozilla/5.0"]
                        .iter()
                        .any(|p| ua.starts_with(p))
                }),
        };
        Self {
            success: asked || accepted.pretty_success.unwrap_or(false),
            error: accepted.pretty_error.is_none_or(|pretty| pretty || asked),
        }
    }

    /// Whether a response with `code` is indented.
    pub fn indents(self, code: http::StatusCode) -> bool {
        if code.is_client_error() || code.is_server_error() {
            self.error
        } else {
            self.success
        }
    }
}

/// `type/subtype` of a `Content-Type`, lower-cased.
pub fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(accept: Option<&str>, protobuf: Option<Wire>) -> Result<Output, ApiError> {
        Accepted::parse(accept).output(protobuf)
    }

    #[test]
    fn the_remembered_accept_is_the_one_asked() {
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
        let long = format!("application/yaml,{}", "text/plain,".repeat(60));
        for accept in [
            Some("application/json"),
            Some(table),
            Some(table),
            None,
            Some("application/yaml"),
            Some(long.as_str()),
            Some("application/json"),
            Some(""),
        ] {
            let mut headers = http::HeaderMap::new();
            if let Some(accept) = accept {
                headers.insert(http::header::ACCEPT, accept.parse().unwrap());
            }
            assert_eq!(
                Accepted::of(&headers),
                Accepted::parse(accept),
                "{accept:?}"
            );
        }
    }

    #[test]
    fn kubectl_get_asks_for_a_table() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            output(Some(accept), None).unwrap(),
            Output::Converted(Conversion::Table(MetaVersion::V1))
        );
        // What typed clients send: protobuf for a built-in kind, JSON for a custom
        // resource, 406 naming protobuf among the types when only protobuf will do.
        static CATALOG: kapi_core::protobuf::Catalog = kapi_core::protobuf::Catalog {
            messages: &[],
            kinds: &[],
        };
        let typed = "application/vnd.kubernetes.protobuf, application/json";
        assert_eq!(
            output(Some(typed), Some(Wire::catalog(&CATALOG))).unwrap(),
            Output::Protobuf(Wire::catalog(&CATALOG))
        );
        assert_eq!(output(Some(typed), None).unwrap(), Output::Json);
        let only = "application/vnd.kubernetes.protobuf";
        assert_eq!(output(Some(only), None).unwrap_err().code, 406);
        let e = output(Some("text/html"), Some(Wire::catalog(&CATALOG))).unwrap_err();
        assert!(
            e.message.ends_with("application/vnd.kubernetes.protobuf"),
            "{}",
            e.message
        );
        assert_eq!(output(None, None).unwrap(), Output::Json);
        assert_eq!(output(Some("text/html"), None).unwrap_err().code, 406);
    }

    #[test]
    fn pretty_print_is_asked_as_kube_apiserver_reads_it() {
        let of = |query: Option<&str>, agent: Option<&str>, accept: Option<&str>| {
            let mut headers = http::HeaderMap::new();
            if let Some(a) = agent {
                headers.insert(http::header::USER_AGENT, a.parse().unwrap());
            }
            if let Some(a) = accept {
                headers.insert(http::header::ACCEPT, a.parse().unwrap());
            }
            let query = crate::request::Query::parse(query);
            let p = PrettyPrint::from_accepted(&Accepted::of(&headers), &headers, &query);
            (p.success, p.error)
        };
        assert_eq!(of(None, Some("kubectl/v1.33.0"), None), (false, false));
        assert_eq!(of(Some("pretty=true"), None, None), (true, true));
        assert_eq!(of(Some("limit=1&pretty=1"), None, None), (true, true));
        assert_eq!(of(Some("pretty=T"), None, None), (true, true));
        // Not something strconv.ParseBool reads: false, whoever asks.
        assert_eq!(
            of(Some("pretty=yes"), Some("curl/8.5.0"), None),
            (false, false)
        );
        assert_eq!(
            of(Some("pretty=false"), Some("curl/8.5.0"), None),
            (false, false)
        );
        // No value: the user agent decides.
        assert_eq!(of(Some("pretty="), Some("curl/8.5.0"), None), (true, true));
        assert_eq!(of(None, Some("Wget/1.21"), None), (true, true));
        assert_eq!(of(None, Some("wget/1.21"), None), (false, false));
        assert_eq!(of(None, Some("Mozilla/5.0 (X11)"), None), (true, true));
        // The negotiated range's pretty=1; a Table range is not one an error can take.
        assert_eq!(
            of(None, None, Some("application/json;pretty=1")),
            (true, true)
        );
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io;pretty=1, application/json";
        assert_eq!(of(None, None, Some(table)), (true, false));
        // An error in no type the client takes is indented anyway (WriteRawJSON).
        assert_eq!(of(None, None, Some("text/html")), (false, true));
        assert_eq!(of(None, None, Some("application/yaml")), (false, false));
    }
}
