//! Front-proxy authentication, as kube-apiserver's request-header authenticator reads
//! it: a proxy that kapi trusts (its client certificate is checked by the caller, against
//! `--requestheader-client-ca-file` and `--requestheader-allowed-names`) names the user
//! in headers, `X-Remote-User`, `X-Remote-Group` (repeated), `X-Remote-Uid` and
//! `X-Remote-Extra-<key>` by default. [`set_proxy_headers`] is the proxy's side.

use std::sync::LazyLock;

use http::{HeaderMap, HeaderName, HeaderValue};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::user::UserInfo;

/// The headers a front proxy names the user in (`--requestheader-*-headers`).
#[derive(Clone, Debug)]
pub struct RequestHeaderNames {
    /// The user's name: the first of these headers with a value.
    pub username: Vec<String>,
    /// The user's UID: the first of these with a value.
    pub uid: Vec<String>,
    /// The user's groups: every value of every one of these.
    pub group: Vec<String>,
    /// Prefixes of the headers of the user's extra attributes (the rest of the name,
    /// percent-decoded and lower-cased, is the key).
    pub extra_prefixes: Vec<String>,
}

impl Default for RequestHeaderNames {
    /// kube's names, as an aggregated API server defaults them.
    fn default() -> Self {
        Self {
            username: vec![USER.into()],
            uid: vec![UID.into()],
            group: vec![GROUP.into()],
            extra_prefixes: vec![EXTRA_PREFIX.into()],
        }
    }
}

const USER: &str = "X-Remote-User";
const UID: &str = "X-Remote-Uid";
const GROUP: &str = "X-Remote-Group";
const EXTRA_PREFIX: &str = "X-Remote-Extra-";

fn values<'a>(headers: &'a HeaderMap, name: &str) -> impl Iterator<Item = &'a str> {
    headers
        .get_all(name)
        .into_iter()
        .filter_map(|v| v.to_str().ok())
}

impl RequestHeaderNames {
    /// The user the headers name; `None` without a user name, as kube's authenticator
    /// then leaves the request to the next one.
    pub fn user(&self, headers: &HeaderMap) -> Option<UserInfo> {
        let first = |names: &[String]| {
            names
                .iter()
                .flat_map(|n| values(headers, n))
                .find(|v| !v.is_empty())
                .map(str::to_string)
        };
        let name = first(&self.username)?;
        let mut user = UserInfo {
            name,
            uid: first(&self.uid).unwrap_or_default(),
            groups: self
                .group
                .iter()
                .flat_map(|n| values(headers, n))
                .map(str::to_string)
                .collect(),
            ..UserInfo::default()
        };
        for (header, value) in headers {
            let Some(key) = self.extra_prefixes.iter().find_map(|p| {
                let n = header.as_str();
                (n.len() > p.len() && n[..p.len()].eq_ignore_ascii_case(p)).then(|| &n[p.len()..])
            }) else {
                continue;
            };
            let key = percent_decode_str(key).decode_utf8_lossy().to_lowercase();
            if let Ok(value) = value.to_str() {
                user.extra.entry(key).or_default().push(value.to_string());
            }
        }
        Some(user)
    }

    /// Whether `name` is one of the headers these names read (removed from a request
    /// before it goes on, so that a client cannot pass its own).
    pub fn reads(&self, name: &HeaderName) -> bool {
        let n = name.as_str();
        self.username
            .iter()
            .chain(&self.uid)
            .chain(&self.group)
            .any(|h| h.eq_ignore_ascii_case(n))
            || self
                .extra_prefixes
                .iter()
                .any(|p| n.len() >= p.len() && n[..p.len()].eq_ignore_ascii_case(p))
    }
}

/// What `url.PathEscape` leaves as it is.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Names `user` in kube's front-proxy headers, after removing every such header the
/// request had (client-go's `SetAuthProxyHeaders`).
pub fn set_proxy_headers(headers: &mut HeaderMap, user: &UserInfo) {
    // Names made once and a scan that allocates only when a client sent such headers:
    // this runs on every request an aggregator proxies. The stale ones are those the
    // default names read, the names every aggregated server reads.
    const USER_NAME: HeaderName = HeaderName::from_static("x-remote-user");
    const UID_NAME: HeaderName = HeaderName::from_static("x-remote-uid");
    const GROUP_NAME: HeaderName = HeaderName::from_static("x-remote-group");
    static DEFAULT_NAMES: LazyLock<RequestHeaderNames> = LazyLock::new(RequestHeaderNames::default);
    let stale: Vec<HeaderName> = headers
        .keys()
        .filter(|k| DEFAULT_NAMES.reads(k))
        .cloned()
        .collect();
    for name in stale {
        headers.remove(name);
    }
    let mut put = |name: HeaderName, value: &str| {
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.append(name, v);
        }
    };
    put(USER_NAME, &user.name);
    if !user.uid.is_empty() {
        put(UID_NAME, &user.uid);
    }
    for group in &user.groups {
        put(GROUP_NAME, group);
    }
    for (key, values) in &user.extra {
        let name = format!("{EXTRA_PREFIX}{}", utf8_percent_encode(key, PATH_SEGMENT));
        let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else {
            continue;
        };
        for value in values {
            put(name.clone(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_headers_name_the_user_the_authenticator_reads() {
        let mut user = UserInfo::new("jane", &["dev", "system:authenticated"]);
        user.uid = "42".into();
        user.extra
            .insert("scopes.example/x y".into(), vec!["a".into(), "b".into()]);
        let mut headers = HeaderMap::new();
        headers.insert("x-remote-user", HeaderValue::from_static("mallory"));
        headers.insert("x-remote-extra-evil", HeaderValue::from_static("1"));
        headers.insert("x-remote-group", HeaderValue::from_static("system:masters"));
        headers.insert("x-remote-uid", HeaderValue::from_static("0"));
        set_proxy_headers(&mut headers, &user);
        assert_eq!(headers.get_all("x-remote-user").iter().count(), 1);
        assert!(headers.get("x-remote-extra-evil").is_none());
        assert!(headers.contains_key("x-remote-extra-scopes.example%2Fx%20y"));
        assert_eq!(RequestHeaderNames::default().user(&headers), Some(user));
    }

    #[test]
    fn no_user_name_is_no_user() {
        let mut headers = HeaderMap::new();
        headers.insert("x-remote-group", HeaderValue::from_static("system:masters"));
        assert_eq!(RequestHeaderNames::default().user(&headers), None);
        headers.insert("x-remote-user", HeaderValue::from_static(""));
        assert_eq!(RequestHeaderNames::default().user(&headers), None);
    }
}
