//! May this user do what this request asks? The attributes of a request
//! ([`request::attributes`]), and the authorizers kube-apiserver chains: members of
//! `system:masters` may do anything, then the modes `--authorization-mode` names
//! ([`Mode`]: `AlwaysAllow`, `AlwaysDeny`, `RBAC` over the policy it is given,
//! [`LivePolicy`]; reading it from the RBAC kinds is `kapi-kube`'s; `Webhook`, a
//! remote service asked with `SubjectAccessReview`s, [`webhook`]).

pub mod impersonation;
pub mod request;
pub mod webhook;

use std::sync::Arc;

use futures_util::FutureExt;

use http::StatusCode;
use kapi_auth::authz::{Attributes, Decision};
use serde_json::json;

use crate::registry::informer::Live;
use crate::status::ApiError;

/// The RBAC policy the authorizer reads: the latest complete snapshot of what is
/// stored, kept by whoever serves the RBAC kinds (`kapi-kube`'s `rbac`).
pub type LivePolicy = Live<kapi_auth::authz::PolicySnapshot>;

/// One of kube-apiserver's authorization modes (`--authorization-mode`), chained in
/// the order given: the first to allow or deny decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Allows every request.
    AlwaysAllow,
    /// Has no opinion on any request, with kube's reason ("Everything is forbidden."),
    /// so that a later mode may still allow.
    AlwaysDeny,
    /// Decides from the RBAC policy.
    Rbac,
    /// Asks the authorization webhook.
    Webhook,
}

/// The modes kube-apiserver has and kapi not yet.
const KUBE_ONLY_MODES: &str = "Node ABAC";

/// kube's reason of the `AlwaysDeny` mode.
const EVERYTHING_IS_FORBIDDEN: &str = "Everything is forbidden.";

impl Mode {
    /// The modes kapi has, by kube's names.
    pub const NAMES: [&'static str; 4] = ["AlwaysAllow", "AlwaysDeny", "RBAC", "Webhook"];

    /// A comma-separated `--authorization-mode` value, checked as kube-apiserver checks
    /// it (in its words), with the modes kube has and kapi not named as such.
    pub fn parse_list(modes: &[String]) -> Result<Vec<Mode>, String> {
        if modes.iter().all(|m| m.trim().is_empty()) {
            return Err("at least one authorization-mode must be passed".into());
        }
        let mut out = Vec::new();
        for name in modes.iter().map(|m| m.trim()) {
            let mode = match name {
                "AlwaysAllow" => Mode::AlwaysAllow,
                "AlwaysDeny" => Mode::AlwaysDeny,
                "RBAC" => Mode::Rbac,
                "Webhook" => Mode::Webhook,
                // kube's other modes, in one string: the Node mode is no resource.
                _ if KUBE_ONLY_MODES.split(' ').any(|m| m == name) => {
                    return Err(format!(
                        "authorization-mode {name:?} is not supported by kapi (it has {})",
                        Self::NAMES.join(", ")
                    ));
                }
                other => return Err(format!("authorization-mode {other:?} is not a valid mode")),
            };
            if out.contains(&mode) {
                return Err(format!(
                    "authorization-mode {name:?} has mode specified more than once"
                ));
            }
            out.push(mode);
        }
        Ok(out)
    }
}

/// The server's authorizer: members of `system:masters` may do anything (kube's
/// privileged-group authorizer, always first), then each mode in turn.
#[derive(Clone)]
pub struct Authorizer {
    /// The RBAC policy: what the RBAC mode decides from, and what RBAC's escalation
    /// checks and rules reviews read (none: RBAC has no opinion).
    pub policy: Option<Arc<LivePolicy>>,
    /// The modes, in order.
    pub modes: Vec<Mode>,
    /// The webhook the `Webhook` mode asks (none: it has no opinion).
    pub webhook: Option<Arc<webhook::WebhookAuthorizer>>,
}

impl Default for Authorizer {
    /// RBAC alone, over no policy yet.
    fn default() -> Self {
        Self {
            policy: None,
            modes: vec![Mode::Rbac],
            webhook: None,
        }
    }
}

/// What the chain decided, and why a mode could not decide (a webhook that could not
/// be asked): kube answers 500 with it when no mode allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// The errors on the way, a line each (empty: none).
    pub error: String,
}

/// A webhook call the synchronous path may not make where it is.
struct MustCall;

impl Authorizer {
    /// Decides one request, asking the webhook when the chain reaches it.
    pub async fn decide(&self, attrs: &Attributes) -> Verdict {
        match self.chain(attrs, true).await {
            Ok(verdict) => verdict,
            Err(MustCall) => unreachable!("calls are allowed"),
        }
    }

    /// Decides one request where no `.await` is possible (a CEL expression's
    /// `authorizer`, RBAC's escalation checks): at once when no webhook call is
    /// needed, otherwise by calling it on a thread of its own while this one waits.
    pub fn authorize(&self, attrs: &Attributes) -> Decision {
        self.decide_blocking(attrs).decision
    }

    /// [`Authorizer::authorize`] with the errors on the way.
    pub fn decide_blocking(&self, attrs: &Attributes) -> Verdict {
        if let Some(Ok(verdict)) = self.chain(attrs, false).now_or_never() {
            return verdict;
        }
        let call = || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match runtime {
                Ok(runtime) => runtime.block_on(self.decide(attrs)),
                Err(e) => Verdict {
                    decision: Decision::NoOpinion(String::new()),
                    error: format!("the webhook could not be called: {e}"),
                },
            }
        };
        let on_a_thread = || {
            std::thread::scope(|scope| {
                scope.spawn(call).join().unwrap_or_else(|_| Verdict {
                    decision: Decision::NoOpinion(String::new()),
                    error: "the webhook call panicked".into(),
                })
            })
        };
        // A worker of a multi-threaded runtime hands its other tasks on while it waits.
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(on_a_thread)
            }
            _ => on_a_thread(),
        }
    }

    /// The chain; without `may_call`, a webhook decision that is not cached is
    /// [`MustCall`] (so the future never waits).
    async fn chain(&self, attrs: &Attributes, may_call: bool) -> Result<Verdict, MustCall> {
        let verdict = |decision, errors: &Vec<String>| Verdict {
            decision,
            error: errors.join("\n"),
        };
        // kube-apiserver's privileged-group authorizer comes before every mode.
        if attrs.user.in_group(kapi_auth::user::MASTERS) {
            return Ok(verdict(Decision::Allow(String::new()), &Vec::new()));
        }
        let (mut reasons, mut errors) = (Vec::new(), Vec::new());
        for mode in &self.modes {
            let decision = match mode {
                Mode::AlwaysAllow => Decision::Allow(String::new()),
                Mode::AlwaysDeny => Decision::NoOpinion(EVERYTHING_IS_FORBIDDEN.into()),
                Mode::Rbac => match &self.policy {
                    Some(policy) => kapi_auth::authz::authorize(&policy.snapshot(), attrs),
                    None => Decision::NoOpinion(String::new()),
                },
                Mode::Webhook => match &self.webhook {
                    None => Decision::NoOpinion(String::new()),
                    Some(webhook) => match webhook.cached(attrs) {
                        Some(decision) => decision,
                        None if !may_call => return Err(MustCall),
                        // Boxed: the call's future is large, and every request's
                        // would be as large, though few call.
                        None => Box::pin(webhook.authorize(attrs))
                            .await
                            .unwrap_or_else(|e| {
                                errors.push(e);
                                Decision::NoOpinion(String::new())
                            }),
                    },
                },
            };
            match decision {
                Decision::NoOpinion(reason) => {
                    if !reason.is_empty() {
                        reasons.push(reason);
                    }
                }
                decided => return Ok(verdict(decided, &errors)),
            }
        }
        // kube's union authorizer: every reason, a line each.
        Ok(verdict(Decision::NoOpinion(reasons.join("\n")), &errors))
    }

    /// Whether `mode` is one of the chain's.
    pub fn has(&self, mode: Mode) -> bool {
        self.modes.contains(&mode)
    }
}

/// kube-apiserver's 403 for a request that is not allowed, in its wording:
/// `configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API
/// group "" in the namespace "default"`.
pub fn forbidden(attrs: &Attributes, reason: &str) -> ApiError {
    let user = &attrs.user.name;
    let mut why = if attrs.resource_request {
        let mut resource = attrs.resource.clone();
        if !attrs.subresource.is_empty() {
            resource = format!("{resource}/{}", attrs.subresource);
        }
        let scope = if attrs.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace {:?}", attrs.namespace)
        };
        format!(
            "User {user:?} cannot {} resource {resource:?} in API group {:?} {scope}",
            attrs.verb, attrs.api_group
        )
    } else {
        format!("User {user:?} cannot {} path {:?}", attrs.verb, attrs.path)
    };
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    let why = why.replace('\n', " ");
    let subject = if !attrs.resource_request {
        String::new()
    } else {
        let qualified = if attrs.api_group.is_empty() {
            attrs.resource.clone()
        } else {
            format!("{}.{}", attrs.resource, attrs.api_group)
        };
        if attrs.name.is_empty() {
            format!("{qualified} is ")
        } else {
            format!("{qualified} {:?} is ", attrs.name)
        }
    };
    let mut details = json!({});
    if attrs.resource_request {
        if !attrs.name.is_empty() {
            details["name"] = json!(attrs.name);
        }
        if !attrs.api_group.is_empty() {
            details["group"] = json!(attrs.api_group);
        }
        details["kind"] = json!(attrs.resource);
    }
    ApiError {
        code: StatusCode::FORBIDDEN,
        reason: "Forbidden",
        message: format!("{subject}forbidden: {why}"),
        details: Some(details),
        continue_token: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kapi_auth::UserInfo;

    fn attrs(verb: &str, resource: &str, ns: &str, name: &str) -> Attributes {
        Attributes {
            user: UserInfo::new("bob", &["system:authenticated"]),
            verb: verb.into(),
            resource_request: true,
            api_group: String::new(),
            api_version: "v1".into(),
            resource: resource.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn modes_chain_as_kube_chains_them() {
        let chain = |modes: &[&str]| Authorizer {
            webhook: None,
            policy: None,
            modes: Mode::parse_list(&modes.iter().map(|m| m.to_string()).collect::<Vec<_>>())
                .unwrap(),
        };
        let get = attrs("get", "configmaps", "default", "a");
        assert!(chain(&["AlwaysAllow"]).authorize(&get).allowed());
        assert!(chain(&["RBAC", "AlwaysAllow"]).authorize(&get).allowed());
        // AlwaysDeny has no opinion: a later mode may allow, and its reason is the 403's.
        assert!(
            chain(&["AlwaysDeny", "AlwaysAllow"])
                .authorize(&get)
                .allowed()
        );
        let denied = chain(&["RBAC", "AlwaysDeny"]).authorize(&get);
        assert_eq!(denied, Decision::NoOpinion(EVERYTHING_IS_FORBIDDEN.into()));
        assert_eq!(
            forbidden(&get, "Everything is forbidden.").message,
            r#"configmaps "a" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "default": Everything is forbidden."#
        );
        // system:masters first, whatever the modes.
        let mut admin = get.clone();
        admin.user = UserInfo::new("admin", &[kapi_auth::user::MASTERS]);
        assert!(chain(&["AlwaysDeny"]).authorize(&admin).allowed());
    }

    #[test]
    fn mode_lists_are_checked_in_kubes_words() {
        let parse =
            |v: &[&str]| Mode::parse_list(&v.iter().map(|m| m.to_string()).collect::<Vec<_>>());
        assert_eq!(
            parse(&["RBAC", "AlwaysAllow"]),
            Ok(vec![Mode::Rbac, Mode::AlwaysAllow])
        );
        assert_eq!(
            parse(&[""]).unwrap_err(),
            "at least one authorization-mode must be passed"
        );
        assert_eq!(
            parse(&["rbac"]).unwrap_err(),
            r#"authorization-mode "rbac" is not a valid mode"#
        );
        assert_eq!(
            parse(&["RBAC", "RBAC"]).unwrap_err(),
            r#"authorization-mode "RBAC" has mode specified more than once"#
        );
        assert!(
            parse(&["Node", "RBAC"])
                .unwrap_err()
                .starts_with(r#"authorization-mode "Node" is not supported by kapi"#)
        );
    }

    #[test]
    fn messages_are_kube_apiserver_s() {
        assert_eq!(
            forbidden(&attrs("list", "configmaps", "default", ""), "").message,
            r#"configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default""#
        );
        assert_eq!(
            forbidden(&attrs("get", "namespaces", "", "kube-system"), "").message,
            r#"namespaces "kube-system" is forbidden: User "bob" cannot get resource "namespaces" in API group "" at the cluster scope"#
        );
        let mut status = attrs("update", "widgets", "ns", "w");
        status.api_group = "example.kapi.dev".into();
        status.subresource = "status".into();
        assert_eq!(
            forbidden(&status, "").message,
            r#"widgets.example.kapi.dev "w" is forbidden: User "bob" cannot update resource "widgets/status" in API group "example.kapi.dev" in the namespace "ns""#
        );
        let path = Attributes {
            user: UserInfo::new("bob", &[]),
            verb: "get".into(),
            path: "/metrics".into(),
            ..Attributes::default()
        };
        let e = forbidden(&path, "no rule");
        assert_eq!(
            e.message,
            r#"forbidden: User "bob" cannot get path "/metrics": no rule"#
        );
        assert_eq!(e.code, StatusCode::FORBIDDEN);
    }
}
