//! CSINodes, as kube-apiserver's strategy (`pkg/registry/storage/csinode/strategy.go`),
//! validation (`ValidateCSINode`, `ValidateCSINodeUpdate` in `pkg/apis/storage/
//! validation`) and printer (`printCSINode`) treat them: no defaults, no generation, and
//! a PUT needs a `resourceVersion`.
//!
//! Checks, for each driver: its `name` is a CSI driver name (required, at most 63 bytes,
//! a DNS-1123 subdomain) and unique; its `nodeID` is required and at most 256 characters
//! (the strategy allows kube's long node IDs); `allocatable.count` is not negative; each
//! topology key is non-empty, unique and a qualified name. On update a driver that keeps
//! its name may not change, except its `allocatable` (MutableCSINodeAllocatableCount is
//! on in 1.35); drivers may be added and removed.
//!
//! Columns, as `printCSINode`: Drivers (how many) and Age.
//!
//! Deliberate differences from kube-apiserver: a changed driver is shown as JSON in the
//! error, where kube prints the Go struct; a driver named twice is refused by the
//! schema's list-map check (`drivers` is a map keyed by `name` in kube's OpenAPI) before
//! these hooks run, as `spec.drivers[1]: Duplicate value: {"name":"a.csi"}` where kube
//! says `spec.drivers[1].name: Duplicate value: "a.csi"`.

use std::collections::HashSet;

use kapi_core::meta::qualified_name_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::validation::{csi_driver_name_errors, immutable};
use crate::generated::api::storage::v1::CSINodeDriver;
use crate::generated::storage_k8s_io::v1::CSINode;
use crate::hooks::nonnegative;

/// The hooks of CSINode.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsiNodeHooks;

/// kube's `csiNodeIDLongerMaxLength`, which its strategy allows.
const MAX_NODE_ID_LEN: usize = 256;

/// `validateCSINodeDriver`: one driver, `names` holding those seen before it.
fn driver_errors<'a>(
    driver: &'a CSINodeDriver,
    names: &mut HashSet<&'a str>,
    path: &FieldPath,
) -> ErrorList {
    let mut errs = csi_driver_name_errors(&driver.name, &path.child("name"));
    let id_path = path.child("nodeID");
    if driver.node_id.is_empty() {
        errs.push(FieldError::required(&id_path, ""));
    }
    if driver.node_id.len() > MAX_NODE_ID_LEN {
        errs.push(FieldError::invalid(
            &id_path,
            driver.node_id.as_str(),
            format!("must be {MAX_NODE_ID_LEN} characters or less"),
        ));
    }
    if let Some(count) = driver.allocatable.as_ref().and_then(|a| a.count) {
        nonnegative(
            &mut errs,
            &path.child("allocatable").child("count"),
            Some(i64::from(count)),
        );
    }
    if !names.insert(driver.name.as_str()) {
        errs.push(FieldError::duplicate(
            &path.child("name"),
            driver.name.as_str(),
        ));
    }
    // kube reports topology key problems at the driver, not at the key.
    let mut keys = HashSet::new();
    for key in driver.topology_keys.iter().flatten() {
        if key.is_empty() {
            errs.push(FieldError::required(path, ""));
        }
        if !keys.insert(key.as_str()) {
            errs.push(FieldError::duplicate(path, key.as_str()));
        }
        for msg in qualified_name_errors(key) {
            errs.push(FieldError::invalid(path, key.as_str(), msg));
        }
    }
    errs
}

/// `ValidateCSINode`'s spec checks.
fn validate_node(node: &CSINode) -> ErrorList {
    let path = FieldPath::new("spec").child("drivers");
    let mut names = HashSet::new();
    node.spec
        .drivers
        .iter()
        .enumerate()
        .flat_map(|(i, d)| driver_errors(d, &mut names, &path.index(i)))
        .collect()
}

/// A driver as its immutability is judged: without `allocatable`, which may change.
fn fixed_part(driver: &CSINodeDriver) -> CSINodeDriver {
    CSINodeDriver {
        allocatable: None,
        ..driver.clone()
    }
}

impl Hooks<CSINode> for CsiNodeHooks {
    /// A node with no drivers, as the kubelet sends it (`drivers: null`), has none.
    fn normalize(&self, obj: &mut Value) {
        kapi_core::hooks::empty_list_if_null(obj, &["spec", "drivers"]);
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, node: &CSINode) -> ErrorList {
        validate_node(node)
    }

    fn validate_update(&self, new: &CSINode, old: &CSINode) -> ErrorList {
        let mut errs = validate_node(new);
        let path = FieldPath::new("spec").child("drivers");
        for old_driver in &old.spec.drivers {
            for new_driver in new
                .spec
                .drivers
                .iter()
                .filter(|d| d.name == old_driver.name)
            {
                let fixed = fixed_part(new_driver);
                if fixed != fixed_part(old_driver) {
                    errs.push(immutable(&path, &fixed));
                }
            }
        }
        errs
    }

    fn table_cell(&self, column: &str, node: &CSINode) -> Option<Value> {
        match column {
            "Drivers" => Some(Value::from(node.spec.drivers.len())),
            _ => None,
        }
    }
}
