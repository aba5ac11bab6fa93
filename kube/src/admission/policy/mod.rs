//! ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`): CEL policies, bound to
//! requests by ValidatingAdmissionPolicyBindings, evaluated in the validating admission
//! chain as kube-apiserver's `ValidatingAdmissionPolicy` plugin evaluates them.
//!
//! [`Policies`] keeps the stored policies and bindings in memory ([`compiled`]); per
//! write, each binding whose policy exists is matched: the policy's `matchConstraints`
//! and then the binding's `matchResources` (rules with `resourceNames`, excluded rules,
//! `matchPolicy`, namespace and object selectors). A matching binding's parameters are
//! read (`paramRef` by name or selector, in `paramRef.namespace` or the request's),
//! and the policy is evaluated once per parameter object ([`evaluate`]). Every failed
//! validation, and every error under `failurePolicy: Fail`, takes the binding's
//! `validationActions`: `Deny` refuses the write with the validation's `reason` (422
//! `Invalid` by default) and kube's message, `Warn` adds a `Warning` header, `Audit`
//! adds the `validation.policy.admission.k8s.io/validation_failure` audit annotation.
//! The policies' `auditAnnotations` go into the audit record as `<policy>/<key>`.
//!
//! Where kapi differs from kube-apiserver:
//! - Expressions' cost is kapi's measure (see [`evaluate`]), close to cel-go's but not
//!   the same units. `authorizer` checks ask the server's authorizer ([`crate::admission::authorizer`]).
//! - `matchPolicy: Equivalent` matches a rule naming another served version of the
//!   resource and evaluates the object as sent (kapi's versions of a resource differ
//!   only in `apiVersion`).
//! - A binding whose policy has `paramKind` but which has no `paramRef`, or whose
//!   `paramKind` is not served, is an error `failurePolicy` decides, with kapi's words.

pub mod compiled;
pub mod evaluate;

use std::sync::Arc;

use http::StatusCode;
use kapi_auth::UserInfo;
use kapi_core::selector::LabelSelector;
use kapi_storage::ReadAt;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::admission::webhook::matching::{self, Target};
use crate::admission::webhook::review::{self, Gvx, Subject};
use compiled::{Binding, LivePolicies, MatchResources, Policy};
use evaluate::{Budget, Decision, Inputs, Verdict};
use kapi_apiserver::authorization::Authorizer;
use kapi_apiserver::registry::{AdmissionRequest, ListOptions, Registry};
use kapi_apiserver::status::ApiError;
use kapi_core::schema::cel_authz::with_authorizer;

/// The audit annotation of failed validations whose binding has `Audit`.
pub const VALIDATION_FAILURE_ANNOTATION: &str =
    "validation.policy.admission.k8s.io/validation_failure";

/// The stored policies and bindings, and what evaluating them needs.
pub struct Policies {
    registry: Arc<Registry>,
    live: Arc<LivePolicies>,
    /// What answers the `authorizer` library's checks.
    authorizer: Option<Authorizer>,
}

/// Starts watching policies and bindings; the receiver turns `true` once the stored
/// ones are read.
/// `authorizer` answers the expressions' `authorizer` checks (with none, every check
/// is an error).
pub fn start(
    registry: Arc<Registry>,
    authorizer: Option<Authorizer>,
    shutdown: watch::Receiver<bool>,
) -> (Arc<Policies>, watch::Receiver<bool>, JoinHandle<()>) {
    let (live, synced, task) = compiled::start(registry.clone(), shutdown);
    let policies = Policies {
        registry,
        live,
        authorizer,
    };
    (Arc::new(policies), synced, task)
}

/// What the policies said besides refusing: for the response and the audit record.
#[derive(Debug, Default)]
pub struct Notes {
    /// `Warning` headers.
    pub warnings: Vec<String>,
    /// Audit annotations.
    pub audit_annotations: Vec<(String, String)>,
}

/// One request, as the policies see it.
struct Request<'a> {
    user: &'a UserInfo,
    req: &'a AdmissionRequest<'a>,
    obj: Option<&'a Value>,
    old: Option<&'a Value>,
    /// A Namespace's own name for Namespaces, else the request's namespace or `""`.
    namespace: &'a str,
}

impl Request<'_> {
    fn target(&self) -> Target<'_> {
        Target::of(self.req)
    }
}

impl Policies {
    /// Evaluates every binding that matches the request; the first denial (by policy,
    /// then binding name) fails it. `obj` is `None` on delete, `old` on create.
    pub async fn validate(
        &self,
        user: &UserInfo,
        req: &AdmissionRequest<'_>,
        obj: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let snapshot = self.live.snapshot();
        if snapshot.bound.is_empty() || matching::is_exempt(&req.info.group, &req.info.kind) {
            return Ok(());
        }
        let request = Request {
            user,
            req,
            obj,
            old,
            namespace: matching::namespace_of(req),
        };
        let mut namespace_object = None;
        let mut denial = None;
        let mut budget = Budget::default();
        for (policy, binding) in &snapshot.bound {
            let Some(constraints) = &policy.constraints else {
                continue;
            };
            let mut matched = self
                .matches(constraints, &request, &mut namespace_object)
                .await?;
            if let (true, Some(narrower)) = (matched, &binding.match_resources) {
                matched = self
                    .matches(narrower, &request, &mut namespace_object)
                    .await?;
            }
            if !matched {
                continue;
            }
            let ns_object = self
                .namespace_object(&request, &mut namespace_object)
                .await?;
            let verdicts = self
                .verdicts(policy, binding, &request, &ns_object, &mut budget)
                .await;
            for verdict in verdicts {
                notes.audit_annotations.extend(verdict.audit_annotations);
                for decision in verdict.decisions.into_iter().filter(|d| d.deny) {
                    act(policy, binding, decision, req, notes, &mut denial);
                }
            }
        }
        denial.map_or(Ok(()), Err)
    }

    /// The policy's verdict on each of the binding's parameter objects.
    async fn verdicts(
        &self,
        policy: &Policy,
        binding: &Binding,
        request: &Request<'_>,
        namespace_object: &Value,
        budget: &mut Budget,
    ) -> Vec<Verdict> {
        let params = match self.params(policy, binding, request).await {
            Ok(Some(params)) => params,
            Ok(None) => return Vec::new(),
            Err(e) => return vec![Verdict::error(policy, e)],
        };
        let null = Value::Null;
        let info = request.req.info;
        let resource = Gvx {
            group: &info.group,
            version: &info.version,
            name: &info.plural,
        };
        let kind = Gvx {
            name: &info.kind,
            ..resource
        };
        let subject = Subject {
            resource,
            kind,
            request_resource: resource,
            request_kind: kind,
            namespace: request.namespace,
        };
        let req_fields = Value::Object(review::request_fields(
            "",
            request.user,
            request.req,
            &subject,
        ));
        let authorizer_var = crate::admission::authorizer::variable(request.req);
        let checks = self
            .authorizer
            .as_ref()
            .map(|a| crate::admission::authorizer::AsUser::checks(a, request.user));
        params
            .iter()
            .filter_map(|p| {
                let inputs = Inputs {
                    object: request.obj.unwrap_or(&null),
                    old_object: request.old.unwrap_or(&null),
                    request: &req_fields,
                    namespace_object,
                    params: p,
                    authorizer: &authorizer_var,
                };
                with_authorizer(checks.clone(), || {
                    evaluate::evaluate(policy, &inputs, budget)
                })
            })
            .collect()
    }

    /// The parameter objects the policy is evaluated with: `[null]` without `paramKind`,
    /// `None` when none is found and the binding allows that, an error `failurePolicy`
    /// decides otherwise.
    async fn params(
        &self,
        policy: &Policy,
        binding: &Binding,
        request: &Request<'_>,
    ) -> Result<Option<Vec<Value>>, String> {
        let Some((api_version, kind)) = &policy.param_kind else {
            return Ok(Some(vec![Value::Null]));
        };
        let Some(param_ref) = &binding.param_ref else {
            return Err(format!(
                "policy '{}' has paramKind but binding '{}' has no paramRef",
                policy.name, binding.name
            ));
        };
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let store = self
            .registry
            .stores()
            .into_iter()
            .find(|s| {
                let i = s.info();
                i.group == group && i.version == version && i.kind == kind.as_str()
            })
            .ok_or_else(|| {
                format!(
                    "failed to find resource referenced by paramKind: '{api_version}, Kind={kind}'"
                )
            })?;
        let namespace = if store.info().namespaced() {
            match param_ref.namespace.as_deref() {
                Some(ns) => Some(ns),
                None if request.namespace.is_empty() => {
                    return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into());
                }
                None => Some(request.namespace),
            }
        } else {
            None
        };
        let found = if let Some(name) = &param_ref.name {
            match super::read_cached(&store, namespace, name).await {
                Ok(p) => vec![p],
                Err(e) if e.code == StatusCode::NOT_FOUND => Vec::new(),
                Err(e) => return Err(e.message),
            }
        } else {
            let selector = match &param_ref.selector {
                Some(Ok(s)) => s.clone(),
                Some(Err(e)) => return Err(format!("invalid paramRef.selector: {e}")),
                None => LabelSelector::default(),
            };
            let opts = ListOptions {
                label_selector: selector,
                read_at: ReadAt::Any,
                ..ListOptions::default()
            };
            let list = store.list(namespace, &opts).await.map_err(|e| e.message)?;
            list["items"].as_array().cloned().unwrap_or_default()
        };
        match (found.is_empty(), param_ref.deny_when_missing) {
            (false, _) => Ok(Some(found)),
            (true, true) => {
                Err("no params found for policy binding with `Deny` parameterNotFoundAction".into())
            }
            (true, false) => Ok(None),
        }
    }

    /// Whether `m` matches the request: a rule (and none of the excluded ones), the
    /// object selector, the namespace selector.
    async fn matches(
        &self,
        m: &MatchResources,
        request: &Request<'_>,
        namespace_object: &mut Option<Value>,
    ) -> Result<bool, ApiError> {
        let target = request.target();
        let name = request.req.name;
        let named = |r: &compiled::NamedRule, exact: bool| {
            let rule_matches = if exact {
                r.rule.matches(&target)
            } else {
                r.rule.matches_except_version(&target)
                    && self.serves_a_version(&r.rule.versions, &target)
            };
            rule_matches && (r.names.is_empty() || r.names.iter().any(|n| n == name))
        };
        // A binding's `matchResources` without rules narrows by its selectors alone (a
        // policy's `matchConstraints` always has rules: validation requires them).
        let included = m.rules.is_empty()
            || m.rules.iter().any(|r| named(r, true))
            || (m.equivalent && m.rules.iter().any(|r| named(r, false)));
        if !included || m.excluded.iter().any(|r| named(r, true)) {
            return Ok(false);
        }
        let selector_error = |e: &String| {
            ApiError::forbidden(
                request.req.info,
                name,
                &format!("invalid selector in a ValidatingAdmissionPolicy: {e}"),
            )
        };
        let object_selector = m.object_selector.as_ref().map_err(selector_error)?;
        if !matching::object_selector_matches(object_selector, request.obj, request.old) {
            return Ok(false);
        }
        let namespace_selector = m.namespace_selector.as_ref().map_err(selector_error)?;
        if !matching::namespace_selector_applies(&target) || namespace_selector.is_empty() {
            return Ok(true);
        }
        let labels = if matching::namespace_labels_from_object(&target) {
            request.obj.map(matching::labels).unwrap_or_default()
        } else {
            matching::labels(&self.namespace_object(request, namespace_object).await?)
        };
        Ok(namespace_selector.matches(&labels))
    }

    /// Whether one of `versions` is a served version of the request's resource.
    fn serves_a_version(&self, versions: &[String], t: &Target<'_>) -> bool {
        versions
            .iter()
            .any(|v| v == "*" || self.registry.get(t.group, v, t.resource).is_some())
    }

    /// `namespaceObject`: the request's namespace as stored (`null` for cluster-scoped
    /// requests), read once per request.
    async fn namespace_object(
        &self,
        request: &Request<'_>,
        cached: &mut Option<Value>,
    ) -> Result<Value, ApiError> {
        if let Some(ns) = cached {
            return Ok(ns.clone());
        }
        let ns = if request.namespace.is_empty()
            || matching::namespace_labels_from_object(&request.target())
        {
            request
                .obj
                .filter(|_| !request.namespace.is_empty())
                .cloned()
                .unwrap_or(Value::Null)
        } else {
            let store = self
                .registry
                .get("", "v1", "namespaces")
                .ok_or_else(|| ApiError::bad_request("the namespaces resource is not served"))?;
            super::read_cached(&store, None, request.namespace).await?
        };
        Ok(cached.insert(ns).clone())
    }
}

/// Applies the binding's actions to a failed validation (or an error under `Fail`).
fn act(
    policy: &Policy,
    binding: &Binding,
    decision: Decision,
    req: &AdmissionRequest<'_>,
    notes: &mut Notes,
    denial: &mut Option<ApiError>,
) {
    if binding.warn {
        notes.warnings.push(format!(
            "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
            policy.name, binding.name, decision.message
        ));
    }
    if binding.audit {
        let failure = json!({
            "expressionIndex": decision.index,
            "message": decision.message,
            "validationActions": actions(binding),
            "binding": binding.name,
            "policy": policy.name,
        });
        // One annotation holds every failure of the request, as kube collects them.
        match notes
            .audit_annotations
            .iter_mut()
            .find(|(k, _)| k == VALIDATION_FAILURE_ANNOTATION)
        {
            Some((_, v)) => {
                let mut all: Vec<Value> = serde_json::from_str(v).unwrap_or_default();
                all.push(failure);
                *v = Value::from(all).to_string();
            }
            None => notes.audit_annotations.push((
                VALIDATION_FAILURE_ANNOTATION.to_string(),
                Value::from(vec![failure]).to_string(),
            )),
        }
    }
    if binding.deny && denial.is_none() {
        *denial = Some(denied(policy, binding, decision, req));
    }
}

fn actions(binding: &Binding) -> Vec<&'static str> {
    [
        (binding.deny, "Deny"),
        (binding.warn, "Warn"),
        (binding.audit, "Audit"),
    ]
    .into_iter()
    .filter_map(|(on, a)| on.then_some(a))
    .collect()
}

/// The refusal: kube's `Forbidden` error with the validation's reason and its code.
fn denied(
    policy: &Policy,
    binding: &Binding,
    decision: Decision,
    req: &AdmissionRequest<'_>,
) -> ApiError {
    let message = format!(
        "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
        policy.name, binding.name, decision.message
    );
    let mut e = ApiError::forbidden(req.info, req.name, &message);
    let (reason, code) = match decision.reason.as_deref() {
        Some("Unauthorized") => ("Unauthorized", StatusCode::UNAUTHORIZED),
        Some("Forbidden") => ("Forbidden", StatusCode::FORBIDDEN),
        Some("RequestEntityTooLarge") => ("RequestEntityTooLarge", StatusCode::PAYLOAD_TOO_LARGE),
        _ => ("Invalid", StatusCode::UNPROCESSABLE_ENTITY),
    };
    e.reason = reason;
    e.code = code;
    if let Some(details) = e.details.as_mut() {
        details["causes"] = json!([{ "message": message }]);
    }
    e
}
