//! Impersonation (`Impersonate-User`, `-Uid`, `-Group`, `-Extra-*` headers), as
//! kube-apiserver's filter does it: the requester must be allowed the `impersonate`
//! verb on each thing it claims, and the request then runs as the user it names
//! (`kubectl --as`, `kubectl auth can-i --as`).

use http::{HeaderMap, StatusCode};
use kapi_auth::UserInfo;
use kapi_auth::authz::Attributes;
use kapi_auth::user::{ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED};

use super::Authorizer;
use crate::status::ApiError;

const USER: &str = "impersonate-user";
const UID: &str = "impersonate-uid";
const GROUP: &str = "impersonate-group";
const EXTRA: &str = "impersonate-extra-";
/// The group whose `userextras` and `uids` a user must be allowed to impersonate, as
/// k8s.io/apiserver's impersonation filter asks.
const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";

/// Whether the request sends any impersonation header; without one it acts as its
/// requester, and [`impersonate`] need not run.
pub fn asked(headers: &HeaderMap) -> bool {
    headers
        .keys()
        .any(|name| name.as_str().starts_with("impersonate-"))
}

/// The user a request acts as: `requester` unless it impersonates someone, which it
/// must be allowed to.
pub async fn impersonate(
    authorizer: &Authorizer,
    requester: UserInfo,
    headers: &HeaderMap,
) -> Result<UserInfo, ApiError> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect()
    };
    let users = values(USER);
    let groups = values(GROUP);
    let uids = values(UID);
    let mut extra = std::collections::BTreeMap::<String, Vec<String>>::new();
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(EXTRA) {
            let key = percent_decode(key);
            if let Ok(v) = value.to_str() {
                extra.entry(key).or_default().push(v.to_string());
            }
        }
    }
    if users.is_empty() {
        if groups.is_empty() && uids.is_empty() && extra.is_empty() {
            return Ok(requester);
        }
        return Err(bad_request(
            "requested impersonation of groups, a uid or extra fields without impersonating a user",
        ));
    }
    if users.len() > 1 || uids.len() > 1 {
        return Err(bad_request("only one user and one uid may be impersonated"));
    }
    let name = users[0].clone();
    // What the requester must be allowed, asked in kube's order once all are known.
    let mut asks = Vec::new();
    let mut check = |attrs: Attributes| asks.push(attrs);
    let ask = |group: &str, resource: &str, namespace: &str, name: &str| Attributes {
        user: requester.clone(),
        verb: "impersonate".into(),
        resource_request: true,
        api_group: group.into(),
        resource: resource.into(),
        namespace: namespace.into(),
        name: name.into(),
        ..Attributes::default()
    };
    let mut groups = groups;
    let probe = UserInfo::new(name.clone(), &[]);
    match probe.service_account() {
        Some((ns, sa)) => {
            check(ask("", "serviceaccounts", ns, sa));
            for g in kapi_auth::user::service_account_groups(ns) {
                if !groups.contains(&g) {
                    groups.push(g);
                }
            }
        }
        None => check(ask("", "users", "", &name)),
    }
    for g in groups
        .iter()
        .filter(|g| !g.starts_with("system:serviceaccounts"))
    {
        check(ask("", "groups", "", g));
    }
    for (key, values) in &extra {
        for v in values {
            let mut attrs = ask(AUTHENTICATION_GROUP, "userextras", "", v);
            attrs.subresource = key.clone();
            check(attrs);
        }
    }
    let uid = uids.first().cloned().unwrap_or_default();
    if !uid.is_empty() {
        check(ask(AUTHENTICATION_GROUP, "uids", "", &uid));
    }
    for attrs in asks {
        if !authorizer.decide(&attrs).await.decision.allowed() {
            return Err(super::forbidden(&attrs, ""));
        }
    }
    if name == ANONYMOUS {
        if !groups.iter().any(|g| g == UNAUTHENTICATED) {
            groups.push(UNAUTHENTICATED.into());
        }
    } else if !groups
        .iter()
        .any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED)
    {
        groups.push(AUTHENTICATED.into());
    }
    Ok(UserInfo {
        name,
        uid,
        groups,
        extra,
    })
}

fn bad_request(message: &str) -> ApiError {
    ApiError {
        code: StatusCode::BAD_REQUEST,
        reason: "BadRequest",
        message: message.into(),
        details: None,
        continue_token: None,
    }
}

/// Header names carry extra keys percent-encoded (`Impersonate-Extra-acme.com%2Fproject`).
fn percent_decode(key: &str) -> String {
    form_urlencoded::parse(format!("k={key}").as_bytes())
        .next()
        .map(|(_, v)| v.to_lowercase())
        .unwrap_or_else(|| key.to_string())
}
