//! Auditing, as kube-apiserver's audit log: which requests are recorded and how much of
//! them ([`Policy`], an `audit.k8s.io/v1` `Policy` file), the records ([`Event`], one JSON
//! line each), and the log they go to ([`AuditLog`], `--audit-log-path`).
//!
//! The request pipeline uses an [`Auditor`]:
//!
//! 1. once the request's [`Attributes`] are known (after authentication, before
//!    impersonation and authorization), [`Auditor::begin`] evaluates the policy and, unless
//!    the level is `None`, records `RequestReceived`; it returns the request's
//!    [`AuditContext`];
//! 2. as the request is handled: [`AuditContext::set_impersonated_user`],
//!    [`AuditContext::set_authorization`], [`AuditContext::set_request_body`] (or
//!    `set_request_object`) when [`AuditContext::wants_request_object`];
//! 3. for a watch, [`AuditContext::response_started`] when the headers go out;
//! 4. [`AuditContext::response_complete`] with the status code and, when
//!    [`AuditContext::wants_response_object`] or the response is an error, the body; or
//!    [`AuditContext::panicked`]. Dropping the context unfinished records
//!    `ResponseComplete` (how a watch's record ends when its stream is dropped);
//! 5. on shutdown, [`AuditLog::close`].
//!
//! Secret contents are never recorded below `RequestResponse`: at `Request`, a core
//! Secret's request object is recorded without `data`, `stringData` and the
//! `last-applied-configuration` annotation; responses are recorded at `RequestResponse`
//! only.

mod context;
mod event;
mod log;
mod policy;
mod policy_file;

use std::net::IpAddr;

pub use context::{AUDIT_ID_HEADER, AuditContext, RequestMeta, source_ips};
pub use event::{
    DECISION_ANNOTATION, EVENT_API_VERSION, Event, EventUser, MicroTime, ObjectReference,
    REASON_ANNOTATION, ResponseStatus, StatusCause, StatusDetails,
};
pub use log::{AuditLog, AuditLogOptions, DEFAULT_MAX_EVENT_BYTES, Overflow, TRUNCATED_ANNOTATION};
pub use policy::{GroupResources, Level, Policy, PolicyRule, RequestAuditConfig, Stage, StageSet};
pub use policy_file::{API_VERSION, PolicyError};

use crate::authz::Attributes;

/// A policy and the log its events go to: what the server holds to audit requests.
#[derive(Debug)]
pub struct Auditor {
    policy: Policy,
    log: AuditLog,
}

impl Auditor {
    /// Audits by `policy` into `log`.
    pub fn new(policy: Policy, log: AuditLog) -> Self {
        Auditor { policy, log }
    }

    /// Starts the record of a request: evaluates the policy on `attrs` (whose user is the
    /// authenticated one) and, unless the level is `None`, records `RequestReceived` with
    /// what `parts` and the peer address `remote` say. Allocates nothing at level `None`.
    pub fn begin(
        &self,
        attrs: &Attributes,
        parts: &http::request::Parts,
        remote: Option<IpAddr>,
    ) -> AuditContext {
        let config = self.policy.evaluate(attrs);
        if config.level == Level::None {
            return AuditContext::disabled();
        }
        AuditContext::begin(
            config,
            attrs,
            RequestMeta::from_http(parts, remote),
            &self.log,
        )
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The log.
    pub fn log(&self) -> &AuditLog {
        &self.log
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::UserInfo;

    #[test]
    fn from_policy_file_to_log_file() {
        let dir = tempfile::tempdir().unwrap();
        let policy_path = dir.path().join("policy.yaml");
        std::fs::write(
            &policy_path,
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n\
             - level: None\n  nonResourceURLs: [/healthz*]\n\
             - level: RequestResponse\n  resources: [{group: \"\", resources: [configmaps]}]\n\
             - level: Metadata\n",
        )
        .unwrap();
        let log_path = dir.path().join("audit.log");
        let auditor = Auditor::new(
            Policy::from_file(&policy_path).unwrap(),
            AuditLog::open(&log_path, AuditLogOptions::default()).unwrap(),
        );
        let user = UserInfo::new("jane", &["system:authenticated"]);
        let parts = |uri: &str| http::Request::get(uri).body(()).unwrap().into_parts().0;
        let remote = Some("127.0.0.1".parse().unwrap());

        let healthz = Attributes {
            user: user.clone(),
            verb: "get".into(),
            path: "/healthz".into(),
            ..Attributes::default()
        };
        let mut ctx = auditor.begin(&healthz, &parts("/healthz"), remote);
        assert!(!ctx.is_enabled());
        ctx.response_complete(200, Some(b"ok"));

        let cm = Attributes {
            user,
            verb: "create".into(),
            resource_request: true,
            api_version: "v1".into(),
            resource: "configmaps".into(),
            namespace: "a".into(),
            ..Attributes::default()
        };
        let mut ctx = auditor.begin(&cm, &parts("/api/v1/namespaces/a/configmaps"), remote);
        ctx.set_authorization(true, "");
        let body =
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}"#;
        ctx.set_request_body(body);
        ctx.response_complete(201, Some(body));
        auditor.log().close();

        let text = std::fs::read_to_string(&log_path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{text}");
        let e = &lines[0];
        assert_eq!(e["kind"], "Event");
        assert_eq!(e["apiVersion"], "audit.k8s.io/v1");
        assert_eq!(e["level"], "RequestResponse");
        assert_eq!(e["stage"], "ResponseComplete");
        assert_eq!(e["requestURI"], "/api/v1/namespaces/a/configmaps");
        assert_eq!(e["sourceIPs"], serde_json::json!(["127.0.0.1"]));
        assert_eq!(e["objectRef"]["name"], "c");
        assert_eq!(e["requestObject"]["data"]["k"], "v");
        assert_eq!(e["responseObject"]["data"]["k"], "v");
        assert_eq!(e["responseStatus"]["code"], 201);
        assert!(e.get("userAgent").is_none(), "empty fields are left out");
    }
}
