//! Where each remote group-version goes, as the controller last saw it: the table the
//! proxy reads on every request, replaced whole when something changes.

use std::collections::HashMap;
use std::sync::Arc;

use kapi_apiserver::documents::Elsewhere;

use crate::api_service::Spec;
use crate::backend::Backend;

/// One remote group-version.
#[derive(Debug)]
pub struct Remote {
    /// Its APIService.
    pub spec: Spec,
    /// Its server, once resolved.
    pub backend: Option<Arc<Backend>>,
    /// Its `Available` condition is true: requests go through (503 otherwise).
    pub available: bool,
}

/// The routing table.
#[derive(Debug, Default)]
pub struct Routes {
    /// group → version → remote.
    pub remote: HashMap<String, HashMap<String, Arc<Remote>>>,
    /// What the documents merge in.
    pub elsewhere: Arc<Elsewhere>,
    /// Moves whenever `elsewhere` changes.
    pub generation: u64,
}

impl Routes {
    /// The remote serving `group`/`version`, if it is remote.
    pub fn remote(&self, group: &str, version: &str) -> Option<&Arc<Remote>> {
        self.remote.get(group)?.get(version)
    }

    /// Whether any version of `group` is remote.
    pub fn is_remote_group(&self, group: &str) -> bool {
        self.remote.contains_key(group)
    }
}
