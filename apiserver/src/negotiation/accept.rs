//! The `Accept` header: its media ranges, by the client's preference, and the
//! `meta.k8s.io` conversion a range asks for (`as=Table;g=meta.k8s.io;v=v1`), as
//! k8s.io/apiserver's negotiation reads them.

use std::borrow::Cow;

/// One media range of an `Accept` header, borrowing from it where it is already in
/// lower case (as every client writes it), so negotiating allocates next to nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct MediaRange<'a> {
    /// Type, lowercased (`application`, `*`).
    pub type_: Cow<'a, str>,
    /// Subtype, lowercased (`json`, `*`).
    pub subtype: Cow<'a, str>,
    /// Parameters other than `q`, names lowercased, values unquoted.
    pub params: Vec<(Cow<'a, str>, &'a str)>,
    /// Quality, 1 when absent.
    pub q: f32,
}

impl MediaRange<'_> {
    /// The value of parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }

    /// True for `application/json`, `application/*` and `*/*`.
    pub fn is_json(&self) -> bool {
        matches!(
            (&*self.type_, &*self.subtype),
            ("application", "json" | "*") | ("*", _)
        )
    }

    /// True for `application/yaml`, `application/x-yaml` and `text/yaml`.
    pub fn is_yaml(&self) -> bool {
        matches!(
            (&*self.type_, &*self.subtype),
            ("application", "yaml" | "x-yaml") | ("text", "yaml")
        )
    }
}

/// `s` trimmed and in ASCII lower case, borrowed when it is already.
fn lowercase(s: &str) -> Cow<'_, str> {
    let s = s.trim();
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// The media ranges of an `Accept` header, most preferred first (higher `q`, then
/// concrete before wildcard, then the client's order), ranges with `q=0` dropped.
pub fn parse_accept(accept: &str) -> Vec<MediaRange<'_>> {
    let mut ranges: Vec<MediaRange> = accept
        .split(',')
        .filter_map(|clause| {
            let mut parts = clause.split(';');
            let (type_, subtype) = parts.next()?.split_once('/')?;
            let mut range = MediaRange {
                type_: lowercase(type_),
                subtype: lowercase(subtype),
                params: Vec::new(),
                q: 1.0,
            };
            for p in parts {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let k = lowercase(k);
                let v = v.trim().trim_matches('"');
                if k == "q" {
                    range.q = v.parse().unwrap_or(1.0);
                } else {
                    range.params.push((k, v));
                }
            }
            (range.q > 0.0 && !range.type_.is_empty()).then_some(range)
        })
        .collect();
    ranges.sort_by(|a, b| {
        b.q.total_cmp(&a.q)
            .then((a.type_ == "*").cmp(&(b.type_ == "*")))
            .then((a.subtype == "*").cmp(&(b.subtype == "*")))
    });
    ranges
}

/// The `meta.k8s.io` version a conversion was asked in; the answer is in the same one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MetaVersion {
    /// `meta.k8s.io/v1`.
    #[default]
    V1,
    /// `meta.k8s.io/v1beta1`, which kubectl lists as its second choice.
    V1Beta1,
}

impl MetaVersion {
    /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
    pub fn api_version(self) -> &'static str {
        match self {
            MetaVersion::V1 => "meta.k8s.io/v1",
            MetaVersion::V1Beta1 => "meta.k8s.io/v1beta1",
        }
    }
}

/// A conversion asked for in `Accept`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversion {
    /// `as=Table`.
    Table(MetaVersion),
    /// `as=PartialObjectMetadata`: only for a single object (kube-apiserver answers 406
    /// on a list).
    PartialObjectMetadata(MetaVersion),
    /// `as=PartialObjectMetadataList`: only for a list (406 on a single object).
    PartialObjectMetadataList(MetaVersion),
}

/// The conversion one JSON media range asks for, if it is one kapi makes (see
/// [`crate::table`]).
pub fn conversion(range: &MediaRange) -> Option<Conversion> {
    if range.param("g") != Some("meta.k8s.io") {
        return None;
    }
    let version = match range.param("v") {
        Some("v1") => MetaVersion::V1,
        Some("v1beta1") => MetaVersion::V1Beta1,
        _ => return None,
    };
    match range.param("as")? {
        "Table" => Some(Conversion::Table(version)),
        "PartialObjectMetadata" => Some(Conversion::PartialObjectMetadata(version)),
        "PartialObjectMetadataList" => Some(Conversion::PartialObjectMetadataList(version)),
        _ => None,
    }
}
