//! The authenticated user, as kube-apiserver's `user.Info` describes it.

use std::collections::BTreeMap;

/// Group of every authenticated request.
pub const AUTHENTICATED: &str = "system:authenticated";
/// Group of the anonymous user.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The anonymous user's name.
pub const ANONYMOUS: &str = "system:anonymous";
/// Group whose members may do anything (the admin kubeconfig's certificate is in it).
pub const MASTERS: &str = "system:masters";
/// Group of every ServiceAccount.
pub const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";

/// Who a request comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name (`jane`, `system:serviceaccount:ns:name`).
    pub name: String,
    /// A unique id, when the authenticator knows one.
    pub uid: String,
    /// The groups the user belongs to.
    pub groups: Vec<String>,
    /// Extra attributes (a ServiceAccount token's pod name, credential id, ...).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user with a name and groups.
    pub fn new(name: impl Into<String>, groups: &[&str]) -> Self {
        Self {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Self::default()
        }
    }

    /// The anonymous user, in `system:unauthenticated`.
    pub fn anonymous() -> Self {
        Self::new(ANONYMOUS, &[UNAUTHENTICATED])
    }

    /// Adds `system:authenticated` unless the user is anonymous or already has it, as
    /// kube-apiserver does for every authenticated request.
    pub fn authenticated(mut self) -> Self {
        if self.name != ANONYMOUS && !self.groups.iter().any(|g| g == AUTHENTICATED) {
            self.groups.push(AUTHENTICATED.to_string());
        }
        self
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The namespace and name of a ServiceAccount user
    /// (`system:serviceaccount:{namespace}:{name}`).
    pub fn service_account(&self) -> Option<(&str, &str)> {
        let rest = self.name.strip_prefix("system:serviceaccount:")?;
        let (ns, name) = rest.split_once(':')?;
        (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
    }
}

/// The user name of a ServiceAccount.
pub fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// The groups of a ServiceAccount: every ServiceAccount, and those of its namespace.
pub fn service_account_groups(namespace: &str) -> Vec<String> {
    vec![
        SERVICE_ACCOUNTS.to_string(),
        format!("system:serviceaccounts:{namespace}"),
    ]
}
