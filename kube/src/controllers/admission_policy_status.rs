//! The ValidatingAdmissionPolicy status controller (kube-controller-manager's
//! `validatingadmissionpolicy-status-controller`): each policy whose `generation` is
//! newer than its `status.observedGeneration` has its validations type-checked against
//! the schemas of the kinds its `matchConstraints` name, and gets
//! `status.typeChecking.expressionWarnings` and `status.observedGeneration`.
//!
//! As kube's type checker: only rules without wildcards name kinds to check (at most
//! ten, in group, version, kind order), `object` and `oldObject` are typed by each
//! kind's schema and `params` by the `paramKind`'s, and only `spec.validations`'
//! `expression` and `messageExpression` are checked. Warnings never change what the
//! policy does.

use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::admission::policy::compiled::{Compiled, Policy};
use kapi_apiserver::registry::object::name;
use kapi_apiserver::registry::watch::WatchEventType;
use kapi_apiserver::registry::{Registry, Store, Subresource, WriteOptions};
use kapi_core::schema::cel::Ty;

/// The field manager of the status it writes, kube's controller's name.
const MANAGER: &str = "validatingadmissionpolicy-status-controller";
/// kube's `maxTypesToCheck`.
const MAX_KINDS: usize = 10;

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    let Some(policies) = registry.get(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicies",
    ) else {
        return;
    };
    loop {
        let Some(mut events) =
            super::watch_from_now(&policies, "admission policy status", &mut shutdown).await
        else {
            return;
        };
        loop {
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                event = events.next() => match event {
                    Some(ev) if matches!(ev.type_, WatchEventType::Added | WatchEventType::Modified) => {
                        reconcile(&registry, &policies, &ev.object).await;
                    }
                    Some(_) => {}
                    None => break,
                },
            }
        }
    }
}

async fn reconcile(registry: &Registry, policies: &Store, policy: &Value) {
    let generation = policy["metadata"]["generation"].as_i64().unwrap_or(0);
    let observed = policy["status"]["observedGeneration"].as_i64().unwrap_or(0);
    if generation <= observed {
        return;
    }
    let warnings = type_check(registry, policy);
    let mut type_checking = json!({});
    if !warnings.is_empty() {
        type_checking["expressionWarnings"] = Value::Array(warnings);
    }
    let written = policies
        .update_with(
            None,
            name(policy),
            Subresource::Status,
            &WriteOptions::by(MANAGER),
            |current| {
                let mut next = current.clone();
                next["status"]["observedGeneration"] = json!(generation);
                next["status"]["typeChecking"] = type_checking.clone();
                Ok(next)
            },
        )
        .await;
    if let Err(e) = written {
        tracing::debug!(policy = name(policy), error = %e, "writing a policy's type checking");
    }
}

/// The `expressionWarnings` for `policy`, as kube's `TypeChecker.Check`.
pub fn type_check(registry: &Registry, policy: &Value) -> Vec<Value> {
    let compiled = Policy::from_json(policy);
    let kinds = kinds_to_check(registry, &compiled);
    if kinds.is_empty() {
        return Vec::new();
    }
    let params = compiled
        .param_kind
        .as_ref()
        .and_then(|(api_version, kind)| store_of_kind(registry, api_version, kind));
    let mut warnings = Vec::new();
    for (i, v) in compiled.validations.iter().enumerate() {
        let checked = [
            ("expression", Some(&v.expression)),
            ("messageExpression", v.message_expression.as_ref()),
        ];
        for (field, expression) in checked {
            let Some(expression) = expression else {
                continue;
            };
            let found = check_against(expression, &kinds, params.as_deref());
            if !found.is_empty() {
                warnings.push(json!({
                    "fieldRef": format!("spec.validations[{i}].{field}"),
                    "warning": found,
                }));
            }
        }
    }
    warnings
}

/// What checking `expression` against each kind found, kube's `TypeCheckingResults`:
/// `apps/v1, Kind=Deployment: ERROR: ...`, one kind per line.
fn check_against(
    expression: &Compiled,
    kinds: &[(String, Arc<Store>)],
    params: Option<&Store>,
) -> String {
    // An expression that does not compile is refused when the policy is written.
    let Ok(expression) = expression else {
        return String::new();
    };
    let params_ty = params.map_or(Ty::Dyn, |p| Ty::Served(p.strategy().schema()));
    let mut found = Vec::new();
    for (gvk, store) in kinds {
        let object = Ty::Served(store.strategy().schema());
        let vars = [
            ("object", object.clone()),
            ("oldObject", object),
            ("params", params_ty.clone()),
            ("request", Ty::Dyn),
            ("namespaceObject", Ty::Dyn),
            ("variables", Ty::Dyn),
            ("authorizer", Ty::Dyn),
        ];
        if let Err(issues) = expression.check(&vars) {
            found.push(format!("{gvk}: {issues}\n"));
        }
    }
    found.join("\n")
}

/// The kinds `matchConstraints` names without wildcards, as `group/version, Kind=K`
/// with their stores, sorted by group, version and kind.
fn kinds_to_check(registry: &Registry, policy: &Policy) -> Vec<(String, Arc<Store>)> {
    let Some(constraints) = &policy.constraints else {
        return Vec::new();
    };
    let mut kinds: Vec<(String, String, String, Arc<Store>)> = Vec::new();
    // Each rule's groups, versions and resources in order; the first ten kinds found.
    let sorted = |list: &[String]| {
        let mut list = list.to_vec();
        list.sort();
        list
    };
    'rules: for named in &constraints.rules {
        let rule = &named.rule;
        let wild = |list: &[String]| list.iter().any(|s| s.contains('*'));
        if wild(&rule.groups) || wild(&rule.versions) {
            continue;
        }
        for group in sorted(&rule.groups) {
            for version in sorted(&rule.versions) {
                for resource in sorted(&rule.resources) {
                    if resource.contains(['*', '/']) {
                        continue;
                    }
                    let Some(store) = registry.get(&group, &version, &resource) else {
                        continue;
                    };
                    let kind = store.info().kind.to_string();
                    if !kinds
                        .iter()
                        .any(|k| (&k.0, &k.1, &k.2) == (&group, &version, &kind))
                    {
                        kinds.push((group.clone(), version.clone(), kind, store));
                    }
                    if kinds.len() == MAX_KINDS {
                        break 'rules;
                    }
                }
            }
        }
    }
    kinds.sort_by(|a, b| (&a.0, &a.1, &a.2).cmp(&(&b.0, &b.1, &b.2)));
    kinds
        .into_iter()
        .map(|(g, v, k, store)| (format!("{g}/{v}, Kind={k}"), store))
        .collect()
}

/// The store serving `kind` in `api_version` (`group/version`, or `v1` for core).
fn store_of_kind(registry: &Registry, api_version: &str, kind: &str) -> Option<Arc<Store>> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    registry.stores().into_iter().find(|s| {
        let info = s.info();
        &*info.group == group && &*info.version == version && &*info.kind == kind
    })
}
