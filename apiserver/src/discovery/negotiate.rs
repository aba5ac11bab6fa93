//! `Accept` negotiation for `/api` and `/apis`.
//!
//! client-go's discovery client (kubectl 1.27–1.33) sends, in this order of preference:
//!
//! - 1.30+: `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,`
//!   `application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`
//! - 1.27–1.29: `application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`
//!
//! and decides how to decode the body from the response's `Content-Type` alone
//! (`g`, `v` and `as` parameters on `application/json`), so the answer must carry the
//! version it was asked for.

use super::AggregatedVersion;
use crate::negotiation::parse_accept;

/// How to answer `GET /api` or `GET /apis`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscoveryFormat {
    /// `APIVersions` / `APIGroupList`.
    Unaggregated,
    /// `APIGroupDiscoveryList` in this version.
    Aggregated(AggregatedVersion),
}

impl DiscoveryFormat {
    /// The `Content-Type` of the answer: kube-apiserver's, parameters in its order.
    pub fn content_type(self) -> &'static str {
        match self {
            DiscoveryFormat::Unaggregated => "application/json",
            DiscoveryFormat::Aggregated(AggregatedVersion::V2) => {
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
            }
            DiscoveryFormat::Aggregated(AggregatedVersion::V2Beta1) => {
                "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
            }
        }
    }
}

/// The format an `Accept` header (absent: `None`) asks for on `/api` and `/apis`.
///
/// Media ranges are tried by decreasing `q`, concrete types before wildcards, otherwise
/// in the client's order. The first JSON range wins: with `g=apidiscovery.k8s.io`,
/// `as=APIGroupDiscoveryList` and `v=v2` or `v=v2beta1` it selects aggregated discovery;
/// with no `as` it selects the plain documents; ranges for other conversions (`as=Table`)
/// and other encodings (protobuf, CBOR) are skipped, since these endpoints cannot answer
/// them. When nothing fits, the plain documents are the answer.
pub fn negotiate(accept: Option<&str>) -> DiscoveryFormat {
    for range in parse_accept(accept.unwrap_or("")) {
        if !range.is_json() {
            continue;
        }
        match range.param("as") {
            None => return DiscoveryFormat::Unaggregated,
            Some("APIGroupDiscoveryList") if range.param("g") == Some("apidiscovery.k8s.io") => {
                match range.param("v") {
                    Some("v2") => return DiscoveryFormat::Aggregated(AggregatedVersion::V2),
                    Some("v2beta1") => {
                        return DiscoveryFormat::Aggregated(AggregatedVersion::V2Beta1);
                    }
                    _ => {}
                }
            }
            Some(_) => {}
        }
    }
    DiscoveryFormat::Unaggregated
}
