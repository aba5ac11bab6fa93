//! What a server needs at the least, checked before it starts: namespaced resources
//! need the Namespace kind (their namespaces must exist, and be deletable), and the
//! RBAC authorization mode needs the RBAC kinds (else only `system:masters` could do
//! anything, with no way to grant more). A control plane of only its own kinds states
//! its choice, and gets a clear error instead of a server that half works.

use kapi_apiserver::authorization::Mode;
use kapi_apiserver::registry::Resources;
use kapi_core::resource::Scope;

use super::{SecurityConfig, ServeError};

/// The RBAC group and kinds the RBAC mode reads its policy from.
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const RBAC_KINDS: [&str; 4] = ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"];

/// Why `resources` cannot be served with `security`, if they cannot.
pub fn check(resources: &Resources, security: &SecurityConfig) -> Result<(), ServeError> {
    let infos: Vec<_> = resources.strategies().iter().map(|s| s.info()).collect();
    let namespaces = infos
        .iter()
        .any(|i| i.group.is_empty() && i.kind == "Namespace");
    let namespaced: Vec<String> = infos
        .iter()
        // Kinds that are kept: a review posted in a namespace (LocalSubjectAccessReview)
        // is answered and never stored, and kube's NamespaceLifecycle exempts it.
        .filter(|i| i.scope == Scope::Namespaced && i.serves("get"))
        .map(|i| qualified(&i.plural, &i.group))
        .collect();
    if !namespaces && !namespaced.is_empty() {
        let mut names = namespaced;
        names.sort();
        names.dedup();
        return Err(ServeError::Config(format!(
            "namespaced resources ({}) need the Namespace kind: register the core group's Namespace too (kapi_core::Only keeping `r.group.is_empty() && r.kind == \"Namespace\"`)",
            names.join(", ")
        )));
    }
    // kube-apiserver's checks of its authorization flags, in its words.
    let webhook_mode = security.authorization_modes.contains(&Mode::Webhook);
    match (webhook_mode, security.authorization_webhook.is_some()) {
        (true, false) => {
            return Err(ServeError::Config(
                "authorization-mode Webhook's authorization config file not passed".into(),
            ));
        }
        (false, true) => {
            return Err(ServeError::Config(
                "cannot specify --authorization-webhook-config-file without mode Webhook".into(),
            ));
        }
        _ => {}
    }
    let rbac_mode = security.authorization_modes.is_empty()
        || security.authorization_modes.contains(&Mode::Rbac);
    let rbac_kinds = RBAC_KINDS
        .iter()
        .all(|k| infos.iter().any(|i| i.group == RBAC_GROUP && i.kind == *k));
    if rbac_mode && !rbac_kinds {
        return Err(ServeError::Config(format!(
            "the RBAC authorization mode reads its policy from the RBAC kinds ({}): register them (kapi_core::Only keeping `r.group == \"{RBAC_GROUP}\"`), or choose other authorization modes (AlwaysAllow)",
            RBAC_KINDS.join(", ")
        )));
    }
    Ok(())
}

fn qualified(plural: &str, group: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}
