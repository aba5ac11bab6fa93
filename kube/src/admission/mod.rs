//! Admission: what every create, update and delete passes after it is decoded and
//! before it is stored, knowing who asks. kube-apiserver's chain, in its order:
//!
//! - mutating: [`service_account`] (a Pod's account and its token volume), then
//!   [`priority`] (a Pod's priority from its class), then
//!   [`default_toleration_seconds`] (a Pod's 300 s tolerations of unready and
//!   unreachable nodes), then [`runtime_class`] (a Pod's
//!   overhead and scheduling from its RuntimeClass), then [`default_ingress_class`],
//!   then the mutating [`webhook`]s, then a CertificateSigningRequest's requester
//!   ([`csr_requester`], kube's CSR strategy, which needs the user);
//! - validating: RBAC's [`escalation`] prevention, then [`priority`] (one default
//!   PriorityClass), then the ValidatingAdmissionPolicies ([`policy`]), then the
//!   validating [`webhook`]s, then [`resource_quota`] last, so that a write another
//!   step refuses charges no quota.
//!
//! What the chain says besides refusing (the policies' warnings and audit annotations)
//! is kept per request and handed to the response and the audit record. Policies' and
//! webhooks' CEL expressions ask the server's authorizer through [`authorizer`].
//!
//! NamespaceLifecycle, and the schema's validation and CEL rules, run in the registry's
//! store, which every write passes as well.

pub mod authorizer;
pub mod csr_requester;
pub mod default_ingress_class;
pub mod default_toleration_seconds;
pub mod escalation;
pub mod policy;
pub mod priority;
pub mod resource_quota;
pub mod runtime_class;
pub mod service_account;
pub mod webhook;

use std::sync::{Arc, Mutex};

use kapi_auth::UserInfo;
use serde_json::Value;

use kapi_apiserver::authorization::Authorizer;
use kapi_apiserver::registry::{Admission, AdmissionChain, AdmissionRequest, Operation, Registry};
use kapi_apiserver::status::ApiError;

/// What admission needs beyond the request, made once when the server starts.
pub struct Plugins {
    /// The served resources (ServiceAccounts, quotas, namespaces).
    pub registry: Arc<Registry>,
    /// The authorizer, for escalation checks.
    pub authorizer: Authorizer,
    /// The admission webhooks of the stored configurations, if they are called.
    pub webhooks: Option<Arc<webhook::Webhooks>>,
    /// The stored ValidatingAdmissionPolicies, if they are evaluated.
    pub policies: Option<Arc<policy::Policies>>,
    /// The namespaces found without quotas ([`resource_quota::LiveLookups`]).
    pub quota_lookups: resource_quota::LiveLookups,
}

impl AdmissionChain for Plugins {
    fn for_user(self: Arc<Self>, user: UserInfo) -> Arc<dyn Admission> {
        Arc::new(Chain {
            user,
            plugins: self,
            notes: Mutex::default(),
        })
    }
}

/// An object as admission reads it, as kube's plugins read their informers: from the
/// watch cache, and from the storage before one the cache has not seen yet is called
/// missing (the 404 is then the storage's).
pub(crate) async fn read_cached(
    store: &kapi_apiserver::registry::Store,
    namespace: Option<&str>,
    name: &str,
) -> Result<Value, ApiError> {
    match store.get(namespace, name, kapi_storage::ReadAt::Any).await {
        Err(e) if e.code == http::StatusCode::NOT_FOUND => {
            store
                .get(namespace, name, kapi_storage::ReadAt::Latest)
                .await
        }
        other => other,
    }
}

/// Whether `request` creates a Pod (what the Pod plugins look at).
fn creates_pod(request: &AdmissionRequest<'_>) -> bool {
    request.operation == Operation::Create
        && request.subresource.is_empty()
        && request.info.group.is_empty()
        && request.info.plural == "pods"
}

struct Chain {
    user: UserInfo,
    plugins: Arc<Plugins>,
    /// The request's warnings and audit annotations so far.
    notes: Mutex<policy::Notes>,
}

impl Chain {
    fn notes(&self) -> std::sync::MutexGuard<'_, policy::Notes> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait::async_trait]
impl Admission for Chain {
    async fn admit(
        &self,
        request: &AdmissionRequest<'_>,
        obj: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let plugins = &self.plugins;
        if service_account::handles(request) {
            service_account::admit(&plugins.registry, request, obj).await?;
        }
        if priority::handles_pod(request) {
            priority::admit_pod(&plugins.registry, request, obj, old).await?;
        }
        if default_toleration_seconds::handles(request) {
            default_toleration_seconds::admit(obj);
        }
        if runtime_class::handles(request) {
            runtime_class::admit(&plugins.registry, request, obj).await?;
        }
        if default_ingress_class::handles(request) {
            default_ingress_class::admit(&plugins.registry, obj).await?;
        }
        if let Some(webhooks) = &plugins.webhooks {
            webhooks.admit(&self.user, request, obj, old).await?;
        }
        if csr_requester::handles(request) {
            csr_requester::admit(&self.user, obj);
        }
        Ok(())
    }

    async fn validate(
        &self,
        request: &AdmissionRequest<'_>,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let plugins = &self.plugins;
        if let (Some(new), escalation::GROUP) = (obj, request.info.group.as_ref()) {
            escalation::check(
                &plugins.authorizer,
                &self.user,
                &request.info.plural,
                request.namespace.unwrap_or_default(),
                new,
                old,
            )?;
        }
        if let (Some(new), true) = (obj, priority::handles(request)) {
            priority::check(&plugins.registry, request, new).await?;
        }
        if let Some(policies) = &plugins.policies {
            let mut notes = policy::Notes::default();
            let verdict = policies
                .validate(&self.user, request, obj, old, &mut notes)
                .await;
            let mut kept = self.notes();
            kept.warnings.extend(notes.warnings);
            kept.audit_annotations.extend(notes.audit_annotations);
            drop(kept);
            verdict?;
        }
        if let Some(webhooks) = &plugins.webhooks {
            webhooks.validate(&self.user, request, obj, old).await?;
        }
        if request.operation == Operation::Create {
            resource_quota::charge(&plugins.registry, &plugins.quota_lookups, request).await?;
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.notes().warnings)
    }

    fn audit_annotations(&self) -> Vec<(String, String)> {
        std::mem::take(&mut self.notes().audit_annotations)
    }
}
