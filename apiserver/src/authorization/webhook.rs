//! kube-apiserver's `Webhook` authorization mode: a remote service decides, asked with
//! a `SubjectAccessReview` (`authorization.k8s.io/v1` or `v1beta1`) posted to the
//! server a kubeconfig names (`--authorization-webhook-config-file`). Its answers are
//! cached by the review's spec, allowed ones for `--authorization-webhook-cache-authorized-ttl`
//! (5 minutes) and the rest for `--authorization-webhook-cache-unauthorized-ttl`
//! (30 seconds), as kube caches them; a failed call is not cached, and leaves the
//! decision to the next mode with the error kept (a 500 when no mode allows).

use std::path::PathBuf;
use std::time::Duration;

use kapi_auth::authz::{Attributes, Decision};
use serde_json::{Value, json};

use crate::expiring::ExpiringMap;
use crate::webhook::Endpoint;

/// How the webhook is reached and its answers kept (kube-apiserver's
/// `--authorization-webhook-*` flags).
#[derive(Clone, Debug)]
pub struct WebhookConfig {
    /// The kubeconfig naming the webhook's server, its CA and the credentials to call
    /// it with.
    pub config_file: PathBuf,
    /// The `SubjectAccessReview` version sent: `v1` or `v1beta1` (kube's default).
    pub version: String,
    /// How long an allow is remembered.
    pub authorized_ttl: Duration,
    /// How long anything else is remembered.
    pub unauthorized_ttl: Duration,
}

impl WebhookConfig {
    /// kube-apiserver's defaults for a webhook named by `config_file`.
    pub fn new(config_file: impl Into<PathBuf>) -> Self {
        Self {
            config_file: config_file.into(),
            version: "v1beta1".into(),
            authorized_ttl: Duration::from_secs(300),
            unauthorized_ttl: Duration::from_secs(30),
        }
    }
}

/// Remembered decisions at most; past it the expired ones go, then all.
const CACHE_ENTRIES: usize = 8192;

/// How long one review may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The webhook authorizer.
pub struct WebhookAuthorizer {
    endpoint: Endpoint,
    /// `v1` or `v1beta1`.
    version: &'static str,
    authorized_ttl: Duration,
    unauthorized_ttl: Duration,
    cache: ExpiringMap<Decision>,
}

impl std::fmt::Debug for WebhookAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookAuthorizer")
            .field("endpoint", &self.endpoint)
            .field("version", &self.version)
            .finish()
    }
}

impl WebhookAuthorizer {
    /// Reads the configuration, in kube's words when the version is not one it sends.
    pub fn new(config: &WebhookConfig) -> Result<Self, String> {
        let version = match config.version.as_str() {
            "v1" => "v1",
            "v1beta1" => "v1beta1",
            other => {
                return Err(format!(
                    "unsupported authorization webhook version {other:?}: v1 and v1beta1 are"
                ));
            }
        };
        Ok(Self {
            endpoint: Endpoint::from_kubeconfig_file(&config.config_file)?,
            version,
            authorized_ttl: config.authorized_ttl,
            unauthorized_ttl: config.unauthorized_ttl,
            cache: ExpiringMap::new(CACHE_ENTRIES),
        })
    }

    /// The remembered decision on `attrs`, if one is still fresh.
    pub fn cached(&self, attrs: &Attributes) -> Option<Decision> {
        self.cache.get(&self.spec(attrs).to_string())
    }

    /// Asks the webhook (or remembers its answer): its decision, or why it could not
    /// be asked.
    pub async fn authorize(&self, attrs: &Attributes) -> Result<Decision, String> {
        let spec = self.spec(attrs);
        let key = spec.to_string();
        if let Some(decision) = self.cache.get(&key) {
            return Ok(decision);
        }
        let review = json!({
            "apiVersion": format!("authorization.k8s.io/{}", self.version),
            "kind": "SubjectAccessReview",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": {"allowed": false},
        });
        let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
        let answer = self.endpoint.post(body, CALL_TIMEOUT, None).await?;
        let answer: Value = serde_json::from_slice(&answer)
            .map_err(|e| format!("the webhook's SubjectAccessReview cannot be read: {e}"))?;
        let decision = decision_of(&answer["status"])?;
        let ttl = if decision.allowed() {
            self.authorized_ttl
        } else {
            self.unauthorized_ttl
        };
        self.cache.insert(key, decision.clone(), ttl);
        Ok(decision)
    }

    /// The review's spec for `attrs` (also the cache key, as kube keys it), with
    /// v1beta1's `group` for v1's `groups`.
    fn spec(&self, attrs: &Attributes) -> Value {
        let user = &attrs.user;
        let groups_key = if self.version == "v1" {
            "groups"
        } else {
            "group"
        };
        let mut spec = json!({ "user": user.name });
        if !user.groups.is_empty() {
            spec[groups_key] = json!(user.groups);
        }
        if !user.extra.is_empty() {
            spec["extra"] = json!(user.extra);
        }
        if !user.uid.is_empty() {
            spec["uid"] = json!(user.uid);
        }
        if attrs.resource_request {
            let mut resource = serde_json::Map::new();
            for (key, value) in [
                ("namespace", &attrs.namespace),
                ("verb", &attrs.verb),
                ("group", &attrs.api_group),
                ("version", &attrs.api_version),
                ("resource", &attrs.resource),
                ("subresource", &attrs.subresource),
                ("name", &attrs.name),
            ] {
                if !value.is_empty() {
                    resource.insert(key.into(), json!(value));
                }
            }
            spec["resourceAttributes"] = Value::Object(resource);
        } else {
            spec["nonResourceAttributes"] = json!({"path": attrs.path, "verb": attrs.verb});
        }
        spec
    }
}

/// A review's status as kube's webhook authorizer reads it.
fn decision_of(status: &Value) -> Result<Decision, String> {
    let reason = status["reason"].as_str().unwrap_or_default().to_string();
    let allowed = status["allowed"].as_bool().unwrap_or(false);
    let denied = status["denied"].as_bool().unwrap_or(false);
    match (allowed, denied) {
        (true, true) => {
            Err("webhook subject access review returned both allow and deny response".into())
        }
        (_, true) => Ok(Decision::Deny(reason)),
        (true, _) => Ok(Decision::Allow(reason)),
        _ => Ok(Decision::NoOpinion(reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_as_kube_reads_them() {
        let read = |v: Value| decision_of(&v);
        assert_eq!(
            read(json!({"allowed": true, "reason": "ok"})),
            Ok(Decision::Allow("ok".into()))
        );
        assert_eq!(
            read(json!({"allowed": false, "denied": true})),
            Ok(Decision::Deny(String::new()))
        );
        assert_eq!(
            read(json!({"allowed": false, "reason": "dunno"})),
            Ok(Decision::NoOpinion("dunno".into()))
        );
        assert!(read(json!({"allowed": true, "denied": true})).is_err());
    }
}
