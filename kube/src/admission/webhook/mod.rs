//! Admission webhooks: `MutatingWebhookConfiguration` and
//! `ValidatingWebhookConfiguration` (`admissionregistration.k8s.io/v1`), called with
//! `admission.k8s.io/v1` `AdmissionReview`s as kube-apiserver calls them.
//!
//! [`Webhooks`] keeps the stored configurations in memory from a watch
//! ([`configurations`]); per write, [`Webhooks::admit`] runs the matching mutating
//! webhooks one after the other (configurations by name, webhooks in order), applying
//! their JSONPatches, and [`Webhooks::validate`] runs the matching validating webhooks
//! in parallel. A webhook matches by its `rules` (with `matchPolicy: Equivalent`, also
//! through another served version of the same resource), `namespaceSelector`,
//! `objectSelector` and `matchConditions` (CEL over `object`, `oldObject` and
//! `request`). A failed call (unreachable, timed out after `timeoutSeconds`, an invalid
//! response) fails the write with 500 under `failurePolicy: Fail` and is skipped under
//! `Ignore`; a denial fails it with the webhook's status. Admission of the admission
//! configurations themselves never calls webhooks.
//!
//! Where kapi differs from kube-apiserver:
//! - `clientConfig.service` is reached at an address of the Service's Endpoints (kapi
//!   has no cluster network to route its cluster IP), as the aggregator reaches an
//!   APIService's Service; the TLS server name is `<name>.<namespace>.svc`, as in kube.
//!   Calls trust only `caBundle` (no system roots).
//! - Only `admissionReviewVersions` with `v1` are called; `v1beta1`-only webhooks get
//!   a call error.
//! - Mutating webhooks are not called on DELETE (admission mutates nothing on delete
//!   in kapi); validating webhooks are.
//! - A `scale` write is sent as the whole object, with the resource's kind, not as an
//!   `autoscaling/v1` `Scale`; patches and `options` are sent as `UpdateOptions`.
//! - Response `warnings` and `auditAnnotations` are logged, not returned to the client
//!   or written to the audit log.
//! - `reinvocationPolicy: IfNeeded` reinvokes, once, the webhooks invoked before the
//!   last webhook that changed the object; kapi has no built-in mutating plugins to
//!   trigger a reinvocation.
//! - A webhook's configuration is not validated when it is written; what kube-apiserver
//!   would refuse then (a bad selector, `http://` URL) fails the calls instead.

pub mod configurations;
pub mod matching;
pub mod review;

use std::sync::Arc;

use futures_util::future::join_all;
use http::StatusCode;
use kapi_auth::UserInfo;
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use configurations::{Hook, LiveConfigurations};
use matching::Target;
use review::{Gvx, Subject};

use kapi_apiserver::authorization::Authorizer;
use kapi_apiserver::registry::{AdmissionRequest, Registry};
use kapi_apiserver::status::ApiError;
use kapi_apiserver::webhook::ServiceResolver;
use kapi_core::schema::cel_authz::with_authorizer;

/// The webhooks of the stored configurations, and what calling them needs.
pub struct Webhooks {
    registry: Arc<Registry>,
    live: Arc<LiveConfigurations>,
    /// What answers match conditions' `authorizer` checks.
    authorizer: Option<Authorizer>,
    /// Where the Services webhooks name are served.
    services: Option<Arc<dyn ServiceResolver>>,
}

/// Starts watching the webhook configurations; the receiver turns `true` once the
/// stored ones are read (as [`crate::rbac::start`]). `authorizer` answers match
/// conditions' `authorizer` checks (with none, every check is an error); `services`
/// resolves `clientConfig.service` (with none, such webhooks cannot be called).
pub fn start(
    registry: Arc<Registry>,
    authorizer: Option<Authorizer>,
    services: Option<Arc<dyn ServiceResolver>>,
    shutdown: watch::Receiver<bool>,
) -> (Arc<Webhooks>, watch::Receiver<bool>, JoinHandle<()>) {
    let (live, synced, task) = configurations::start(registry.clone(), shutdown);
    let webhooks = Webhooks {
        registry,
        live,
        authorizer,
        services,
    };
    (Arc::new(webhooks), synced, task)
}

/// Why a call did not give an answer to use.
enum Failure {
    /// The webhook could not be called or answered nonsense: `failurePolicy` decides.
    Calling(String),
    /// The write fails with this, whatever the policy (a denial, a dry run the webhook
    /// does not support, a patch that does not apply).
    Refused(ApiError),
}

/// One webhook to call for one request: whom, and in which version of the resource.
struct Invocation {
    hook: Arc<Hook>,
    /// The version the webhook is sent, when it matched another version than the
    /// request's (`matchPolicy: Equivalent`).
    version: Option<String>,
    /// The kind in that version.
    kind: String,
}

/// The request's own attributes, computed once per request.
struct Attributes<'a> {
    user: &'a UserInfo,
    req: &'a AdmissionRequest<'a>,
    /// A Namespace's own name for Namespaces, else the request's namespace or `""`.
    namespace: &'a str,
}

impl Attributes<'_> {
    fn target(&self) -> Target<'_> {
        Target::of(self.req)
    }

    fn exempt(&self) -> bool {
        matching::is_exempt(&self.req.info.group, &self.req.info.kind)
    }
}

impl Webhooks {
    /// Runs the matching mutating webhooks in order, each on the object as the previous
    /// one left it, applying their JSONPatches to `obj` (the object to create or the
    /// updated one; `old` is the stored one on update).
    pub async fn admit(
        &self,
        user: &UserInfo,
        req: &AdmissionRequest<'_>,
        obj: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let snapshot = self.live.snapshot();
        if snapshot.mutating.is_empty() {
            return Ok(());
        }
        let attrs = attributes(user, req);
        if attrs.exempt() {
            return Ok(());
        }
        let mut labels = None;
        // The webhooks called, in order, and the position of the last one that changed
        // the object.
        let mut invoked: Vec<Invocation> = Vec::new();
        let mut last_change = None;
        for hook in &snapshot.mutating {
            let Some(invocation) = self
                .should_call(hook, &attrs, Some(obj), old, &mut labels)
                .await?
            else {
                continue;
            };
            if self.call_mutating(&attrs, &invocation, obj, old).await? {
                last_change = Some(invoked.len());
            }
            invoked.push(invocation);
        }
        // reinvocationPolicy IfNeeded: a webhook that ran before a later one changed the
        // object sees it once more.
        if let Some(last) = last_change {
            for invocation in invoked.iter().take(last).filter(|i| i.hook.reinvoke) {
                self.call_mutating(&attrs, invocation, obj, old).await?;
            }
        }
        Ok(())
    }

    /// Runs the matching validating webhooks, in parallel; the first refusal (in
    /// webhook order) fails the write. `obj` is `None` on delete, `old` on create.
    pub async fn validate(
        &self,
        user: &UserInfo,
        req: &AdmissionRequest<'_>,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let snapshot = self.live.snapshot();
        if snapshot.validating.is_empty() {
            return Ok(());
        }
        let attrs = attributes(user, req);
        if attrs.exempt() {
            return Ok(());
        }
        let mut labels = None;
        let mut invocations = Vec::new();
        for hook in &snapshot.validating {
            if let Some(i) = self
                .should_call(hook, &attrs, obj, old, &mut labels)
                .await?
            {
                invocations.push(i);
            }
        }
        let results = join_all(
            invocations
                .iter()
                .map(|i| self.call_validating(&attrs, i, obj, old)),
        )
        .await;
        results.into_iter().collect()
    }

    /// Whether `hook` is called for this request, and how; an error fails the write
    /// (a namespace that does not exist, a selector that does not parse, a match
    /// condition that fails under `failurePolicy: Fail`).
    async fn should_call(
        &self,
        hook: &Arc<Hook>,
        attrs: &Attributes<'_>,
        obj: Option<&Value>,
        old: Option<&Value>,
        namespace_labels: &mut Option<Map<String, Value>>,
    ) -> Result<Option<Invocation>, ApiError> {
        let target = attrs.target();
        let info = attrs.req.info;
        let mut invocation = None;
        if hook.rules.iter().any(|r| r.matches(&target)) {
            invocation = Some(Invocation {
                hook: hook.clone(),
                version: None,
                kind: info.kind.to_string(),
            });
        } else if hook.equivalent && hook.rules.iter().any(|r| r.matches_except_version(&target)) {
            invocation = self.equivalent(hook, &target);
        }
        let Some(invocation) = invocation else {
            return Ok(None);
        };
        let selector_error = |e: &String| {
            internal(&format!(
                "webhook {:?} has an invalid selector: {e}",
                hook.name
            ))
        };
        let object_selector = hook.object_selector.as_ref().map_err(selector_error)?;
        if !matching::object_selector_matches(object_selector, obj, old) {
            return Ok(None);
        }
        let namespace_selector = hook.namespace_selector.as_ref().map_err(selector_error)?;
        if matching::namespace_selector_applies(&target) && !namespace_selector.is_empty() {
            // Read once per request, for every webhook that needs them.
            let labels = match namespace_labels {
                Some(l) => l,
                None => namespace_labels.insert(self.namespace_labels(attrs, &target, obj).await?),
            };
            if !namespace_selector.matches(labels) {
                return Ok(None);
            }
        }
        if !self.conditions_match(attrs, &invocation, obj, old)? {
            return Ok(None);
        }
        Ok(Some(invocation))
    }

    /// Another served version of the request's resource that a rule of `hook` matches.
    fn equivalent(&self, hook: &Arc<Hook>, target: &Target<'_>) -> Option<Invocation> {
        let stores = self.registry.stores();
        let versions = stores.iter().map(|s| s.info()).filter(|i| {
            i.group == target.group && i.plural == target.resource && i.version != target.version
        });
        // Earlier rules first, as kube honours them.
        for rule in &hook.rules {
            for info in versions.clone() {
                let t = Target {
                    version: &info.version,
                    ..*target
                };
                if rule.matches(&t) {
                    return Some(Invocation {
                        hook: hook.clone(),
                        version: Some(info.version.to_string()),
                        kind: info.kind.to_string(),
                    });
                }
            }
        }
        None
    }

    /// The labels a `namespaceSelector` is matched against: a Namespace's own on its
    /// create and update, else those of the stored namespace (404 if there is none).
    async fn namespace_labels(
        &self,
        attrs: &Attributes<'_>,
        target: &Target<'_>,
        obj: Option<&Value>,
    ) -> Result<Map<String, Value>, ApiError> {
        if matching::namespace_labels_from_object(target) {
            return Ok(obj.map(matching::labels).unwrap_or_default());
        }
        let store = self
            .registry
            .get("", "v1", "namespaces")
            .ok_or_else(|| internal("the namespaces resource is not served"))?;
        let ns = crate::admission::read_cached(&store, None, attrs.namespace).await?;
        Ok(matching::labels(&ns))
    }

    /// `matchConditions`: all must hold. A condition that fails to evaluate fails the
    /// write with 403 under `failurePolicy: Fail`, and skips the webhook under `Ignore`;
    /// a false one always skips it.
    fn conditions_match(
        &self,
        attrs: &Attributes<'_>,
        invocation: &Invocation,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<bool, ApiError> {
        let hook = &invocation.hook;
        let conditions = match &hook.match_conditions {
            Ok(c) if c.is_empty() => return Ok(true),
            Ok(c) => c,
            Err(e) => return self.condition_failed(attrs, hook, e),
        };
        let (sent_obj, sent_old) = (
            converted(obj, attrs, invocation),
            converted(old, attrs, invocation),
        );
        let null = Value::Null;
        let request = Value::Object(review::request_fields(
            "",
            attrs.user,
            attrs.req,
            &subject(attrs, invocation),
        ));
        let authorizer = crate::admission::authorizer::variable(attrs.req);
        let vars = [
            ("object", sent_obj.as_ref().or(obj).unwrap_or(&null)),
            ("oldObject", sent_old.as_ref().or(old).unwrap_or(&null)),
            ("request", &request),
            ("authorizer", &authorizer),
        ];
        let checks = self
            .authorizer
            .as_ref()
            .map(|a| crate::admission::authorizer::AsUser::checks(a, attrs.user));
        let mut errors = Vec::new();
        for (name, expression) in conditions {
            match with_authorizer(checks.clone(), || expression.eval_bool(&vars)) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => errors.push(format!("matchCondition {name:?}: {e}")),
            }
        }
        if errors.is_empty() {
            Ok(true)
        } else {
            self.condition_failed(attrs, hook, &errors.join(", "))
        }
    }

    fn condition_failed(
        &self,
        attrs: &Attributes<'_>,
        hook: &Hook,
        error: &str,
    ) -> Result<bool, ApiError> {
        if hook.ignore_failures {
            tracing::warn!(webhook = %hook.name, error, "match conditions failed; the webhook is skipped");
            return Ok(false);
        }
        Err(ApiError::forbidden(attrs.req.info, attrs.req.name, error))
    }

    /// Calls a mutating webhook and applies its patch to `obj`; returns whether the
    /// object changed.
    async fn call_mutating(
        &self,
        attrs: &Attributes<'_>,
        invocation: &Invocation,
        obj: &mut Value,
        old: Option<&Value>,
    ) -> Result<bool, ApiError> {
        let hook = &invocation.hook;
        let sent = converted(Some(obj), attrs, invocation);
        let sent_old = converted(old, attrs, invocation);
        let verdict = match self
            .call(
                attrs,
                invocation,
                true,
                Some(sent.as_ref().unwrap_or(obj)),
                sent_old.as_ref().or(old),
            )
            .await
        {
            Ok(v) => v,
            Err(f) => return failed(hook, f).map(|()| false),
        };
        let Some(patch) = &verdict.patch else {
            return Ok(false);
        };
        // The patch applies to the object in the version the webhook saw.
        let mut patched = sent.unwrap_or_else(|| obj.clone());
        match review::apply_patch(&mut patched, verdict.patch_type.as_deref(), patch) {
            Ok(false) => Ok(false),
            Ok(true) => {
                if invocation.version.is_some() {
                    // Back to the request's version (kapi converts between versions
                    // by apiVersion alone).
                    patched["apiVersion"] = json!(attrs.req.info.api_version());
                }
                *obj = patched;
                Ok(true)
            }
            Err(review::PatchError::Calling(e)) => {
                failed(hook, Failure::Calling(e)).map(|()| false)
            }
            Err(review::PatchError::Apply(e)) => Err(internal(&format!(
                "admission webhook {:?} sent a patch that does not apply: {e}",
                hook.name
            ))),
        }
    }

    async fn call_validating(
        &self,
        attrs: &Attributes<'_>,
        invocation: &Invocation,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let sent_obj = converted(obj, attrs, invocation);
        let sent_old = converted(old, attrs, invocation);
        match self
            .call(
                attrs,
                invocation,
                false,
                sent_obj.as_ref().or(obj),
                sent_old.as_ref().or(old),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(f) => failed(&invocation.hook, f),
        }
    }

    /// One call: the dry-run check, the review, the POST and the checks on the answer;
    /// a denial is a [`Failure::Refused`].
    async fn call(
        &self,
        attrs: &Attributes<'_>,
        invocation: &Invocation,
        mutating: bool,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<review::Verdict, Failure> {
        let hook = &invocation.hook;
        if attrs.req.dry_run {
            dry_run_check(&hook.name, hook.side_effects.as_deref())?;
        }
        if !hook.accepts_v1 {
            return Err(Failure::Calling(
                "could not create admission objects: webhook does not accept known AdmissionReview versions (v1)"
                    .into(),
            ));
        }
        let endpoint = hook
            .endpoint
            .as_ref()
            .map_err(|e| Failure::Calling(format!("could not get REST client: {e}")))?;
        let uid = uuid::Uuid::new_v4().to_string();
        let request =
            review::request_fields(&uid, attrs.user, attrs.req, &subject(attrs, invocation));
        let body = serde_json::to_vec(&review::review(request, obj, old))
            .map_err(|e| Failure::Calling(format!("could not create admission objects: {e}")))?;
        let answer = endpoint
            .post(body, hook.timeout, self.services.as_deref())
            .await
            .map_err(|e| Failure::Calling(format!("failed to call webhook: {e}")))?;
        let verdict = review::verify(&uid, mutating, &answer)
            .map_err(|e| Failure::Calling(format!("received invalid webhook response: {e}")))?;
        for warning in &verdict.warnings {
            tracing::info!(webhook = %hook.name, warning = %warning, "admission webhook warning");
        }
        if !verdict.allowed {
            return Err(Failure::Refused(review::denial(
                &hook.name,
                verdict.status.as_ref(),
            )));
        }
        Ok(verdict)
    }
}

fn attributes<'a>(user: &'a UserInfo, req: &'a AdmissionRequest<'a>) -> Attributes<'a> {
    Attributes {
        user,
        req,
        namespace: matching::namespace_of(req),
    }
}

/// The resource and kind a webhook is told about.
fn subject<'a>(attrs: &'a Attributes<'a>, invocation: &'a Invocation) -> Subject<'a> {
    let info = attrs.req.info;
    let request_resource = Gvx {
        group: &info.group,
        version: &info.version,
        name: &info.plural,
    };
    let request_kind = Gvx {
        name: &info.kind,
        ..request_resource
    };
    let version = invocation.version.as_deref().unwrap_or(&info.version);
    Subject {
        resource: Gvx {
            version,
            ..request_resource
        },
        kind: Gvx {
            group: &info.group,
            version,
            name: &invocation.kind,
        },
        request_resource,
        request_kind,
        namespace: attrs.namespace,
    }
}

/// The object in the version the webhook is sent, when that is not the request's own
/// (`None` then, so that nothing is copied: send the object itself).
fn converted(
    obj: Option<&Value>,
    attrs: &Attributes<'_>,
    invocation: &Invocation,
) -> Option<Value> {
    let version = invocation.version.as_ref()?;
    let mut obj = obj?.clone();
    let info = attrs.req.info;
    let api_version = if info.group.is_empty() {
        version.clone()
    } else {
        format!("{}/{version}", info.group)
    };
    obj["apiVersion"] = json!(api_version);
    Some(obj)
}

/// What a failure does to the write: a call error fails it with 500 under
/// `failurePolicy: Fail` and is logged and skipped under `Ignore`.
fn failed(hook: &Hook, failure: Failure) -> Result<(), ApiError> {
    match failure {
        Failure::Refused(e) => Err(e),
        Failure::Calling(why) => {
            let error = format!("failed calling webhook {:?}: {why}", hook.name);
            if hook.ignore_failures {
                tracing::warn!(webhook = %hook.name, configuration = %hook.configuration, error = %error, "failed calling webhook, failing open");
                Ok(())
            } else {
                tracing::warn!(webhook = %hook.name, configuration = %hook.configuration, error = %error, "failed calling webhook, failing closed");
                Err(internal(&error))
            }
        }
    }
}

/// kube's `NewInternalError`: the message is shown, since it is about the webhook, not
/// kapi's internals.
fn internal(error: &str) -> ApiError {
    ApiError {
        code: StatusCode::INTERNAL_SERVER_ERROR,
        reason: "InternalError",
        message: format!("Internal error occurred: {error}"),
        details: Some(json!({"causes": [{"message": error}]})),
        continue_token: None,
    }
}

/// The `ResourceInfo` of the `Widget` example served at `version`, for the unit tests.
#[cfg(test)]
fn widget_info(version: &str) -> kapi_core::ResourceInfo {
    let crd = kapi_core::crd::CustomResourceDefinition::parse(&kapi_testing::widget_crd(version))
        .unwrap();
    crd.resource_info(&crd.versions[0])
}

/// kube's rule for a dry run: only a webhook that declares no side effects on one is
/// called (v1 refuses others when they are written; older APIs kept them).
fn dry_run_check(name: &str, side_effects: Option<&str>) -> Result<(), Failure> {
    match side_effects {
        None => Err(Failure::Calling("Webhook SideEffects is nil".into())),
        Some("None" | "NoneOnDryRun") => Ok(()),
        Some(_) => Err(Failure::Refused(ApiError::bad_request(format!(
            "admission webhook {name:?} does not support dry run"
        )))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_dry_run_reaches_only_webhooks_without_side_effects_on_it() {
        assert!(super::dry_run_check("w.example.com", Some("NoneOnDryRun")).is_ok());
        assert!(super::dry_run_check("w.example.com", Some("None")).is_ok());
        match super::dry_run_check("w.example.com", Some("Unknown")) {
            Err(super::Failure::Refused(e)) => assert_eq!(
                (e.code.as_u16(), e.message.as_str()),
                (
                    400,
                    "admission webhook \"w.example.com\" does not support dry run"
                )
            ),
            _ => panic!("a webhook with side effects is refused"),
        }
        assert!(matches!(
            super::dry_run_check("w.example.com", None),
            Err(super::Failure::Calling(_))
        ));
    }

    use super::*;
    use kapi_apiserver::registry::Operation;

    fn hook(policy: &str) -> Hook {
        Hook::from_json(
            "cfg",
            &json!({"name": "w.kapi.test", "failurePolicy": policy}),
        )
    }

    #[test]
    fn failure_policy_decides_call_errors_only() {
        let e = failed(
            &hook("Fail"),
            Failure::Calling("failed to call webhook: x".into()),
        )
        .unwrap_err();
        assert_eq!(e.code, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(e.reason, "InternalError");
        assert_eq!(
            e.message,
            "Internal error occurred: failed calling webhook \"w.kapi.test\": failed to call webhook: x"
        );
        assert_eq!(
            e.details.unwrap()["causes"][0]["message"],
            "failed calling webhook \"w.kapi.test\": failed to call webhook: x"
        );
        assert!(failed(&hook("Ignore"), Failure::Calling("x".into())).is_ok());
        // A refusal stands whatever the policy.
        let refusal = ApiError::bad_request("no");
        assert_eq!(
            failed(&hook("Ignore"), Failure::Refused(refusal.clone())),
            Err(refusal)
        );
    }

    #[test]
    fn namespaces_carry_their_own_name_and_equivalent_versions_convert() {
        let user = UserInfo::new("jane", &[]);
        let info = widget_info("v2");
        let req = AdmissionRequest {
            operation: Operation::Create,
            info: &info,
            subresource: "",
            namespace: Some("ns"),
            name: "w",
            dry_run: false,
        };
        let attrs = attributes(&user, &req);
        assert_eq!(attrs.namespace, "ns");
        let invocation = Invocation {
            hook: Arc::new(hook("Fail")),
            version: Some("v1".into()),
            kind: "Widget".into(),
        };
        let obj = json!({"apiVersion": "example.kapi.dev/v2", "kind": "Widget"});
        let sent = converted(Some(&obj), &attrs, &invocation).unwrap();
        assert_eq!(sent["apiVersion"], "example.kapi.dev/v1");
        let s = subject(&attrs, &invocation);
        assert_eq!(s.resource.version, "v1");
        assert_eq!(s.request_resource.version, "v2");
        assert_eq!(s.kind.name, "Widget");
        let same = Invocation {
            version: None,
            ..invocation
        };
        assert!(converted(Some(&obj), &attrs, &same).is_none());

        let mut ns_info = widget_info("v1");
        ns_info.group = "".into();
        ns_info.plural = "namespaces".into();
        let ns_req = AdmissionRequest {
            info: &ns_info,
            namespace: None,
            name: "team-a",
            ..req
        };
        assert_eq!(attributes(&user, &ns_req).namespace, "team-a");
    }
}
