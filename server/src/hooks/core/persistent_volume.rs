//! PersistentVolumes, PersistentVolumeClaims and StorageClasses, as kube-apiserver's
//! strategies, v1 defaults and validation treat them, and as its printers show them.
//!
//! - PersistentVolume: no generation; `persistentVolumeReclaimPolicy` defaults to
//!   `Retain` and `volumeMode` to `Filesystem`; a new volume's status is `phase:
//!   Pending`; it needs access modes, a `storage` capacity and exactly one volume source,
//!   which may not change afterwards.
//! - PersistentVolumeClaim: no generation; `volumeMode` defaults to `Filesystem`; a new
//!   claim's status is `phase: Pending`; it needs access modes and a positive
//!   `resources.requests.storage`; after create its spec is immutable except
//!   `volumeName` while unset and the storage request of a bound claim, which may not
//!   shrink.
//! - StorageClass: no generation; `reclaimPolicy` defaults to `Delete` and
//!   `volumeBindingMode` to `Immediate`; provisioner, parameters, reclaim policy and
//!   binding mode may not change.
//!
//! Deliberate differences from kube-apiserver:
//! - kube's message for a changed volume source ends with a diff of the two sources;
//!   kapi's stops after `is immutable after creation`.
//! - Volume sources are not validated in detail (paths, servers, drivers), nor are node
//!   affinity, data sources, selectors or mount options.
//! - `volumeAttributesClassName` changes on bound claims are refused like any other spec
//!   change (kube allows them when its VolumeAttributesClass feature is on).
//! - The StorageClass name column has no `(default)` suffix: computed cells cannot
//!   change the Name column.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kapi_core::meta::{dns1123_subdomain_errors, qualified_name_errors};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::untracked_generation;
use crate::generated::api::core::v1::{PersistentVolumeClaimStatus, PersistentVolumeStatus};
use crate::generated::core::v1::{PersistentVolume, PersistentVolumeClaim};
use crate::generated::storage_k8s_io::v1::StorageClass;

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

fn strings(v: &[&str]) -> Vec<Value> {
    v.iter().map(|s| Value::from(*s)).collect()
}

/// The numeric value of a quantity (`10Gi`, `500M`, `1.5`, `2e3`), for comparisons;
/// `None` when it does not parse.
fn quantity_value(q: &Quantity) -> Option<f64> {
    let s = q.0.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exp if exp.starts_with(['e', 'E']) => 10f64.powi(exp[1..].parse().ok()?),
        _ => return None,
    };
    Some(n * mult)
}

/// kube's `GetAccessModesAsString`: `RWO,ROX,RWX,RWOP` in that order.
pub(super) fn access_modes_string(modes: &[String]) -> String {
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.iter().any(|x| x == m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

fn validate_access_modes(
    modes: Option<&Vec<String>>,
    path: &FieldPath,
    required: &str,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let modes = modes.map_or(&[][..], Vec::as_slice);
    if modes.is_empty() {
        errs.push(FieldError::required(path, required));
    }
    for mode in modes {
        if !ACCESS_MODES.contains(&mode.as_str()) {
            errs.push(FieldError::not_supported(
                path,
                mode.as_str(),
                &strings(ACCESS_MODES),
            ));
        }
    }
    if modes.iter().any(|m| m == "ReadWriteOncePod") && modes.len() > 1 {
        errs.push(FieldError::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    errs
}

fn validate_volume_mode(mode: Option<&str>, path: &FieldPath) -> ErrorList {
    match mode {
        None | Some("Block" | "Filesystem") => ErrorList::new(),
        Some(other) => vec![FieldError::not_supported(
            path,
            other,
            &strings(&["Block", "Filesystem"]),
        )],
    }
}

fn validate_class_name(name: Option<&str>, path: &FieldPath) -> ErrorList {
    match name {
        Some(n) if !n.is_empty() => dns1123_subdomain_errors(n)
            .into_iter()
            .map(|m| FieldError::invalid(path, n, m))
            .collect(),
        _ => ErrorList::new(),
    }
}

/// The volume sources a PersistentVolume spec can hold (JSON names).
const VOLUME_SOURCES: &[&str] = &[
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "csi",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "glusterfs",
    "hostPath",
    "iscsi",
    "local",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
];

fn volume_sources(pv: &PersistentVolume) -> Vec<(&'static str, Value)> {
    let spec = serde_json::to_value(&pv.spec).unwrap_or(Value::Null);
    VOLUME_SOURCES
        .iter()
        .filter_map(|k| {
            spec.get(*k)
                .filter(|v| !v.is_null())
                .map(|v| (*k, v.clone()))
        })
        .collect()
}

/// `ValidatePersistentVolumeSpec`, as far as kapi goes.
fn validate_pv(pv: &PersistentVolume) -> ErrorList {
    let spec_path = FieldPath::new("spec");
    let spec = pv.spec.clone().unwrap_or_default();
    let mut errs = validate_access_modes(
        spec.access_modes.as_ref(),
        &spec_path.child("accessModes"),
        "",
    );
    match &spec.capacity {
        None => errs.push(FieldError::required(&spec_path.child("capacity"), "")),
        Some(cap) if cap.is_empty() => {
            errs.push(FieldError::required(&spec_path.child("capacity"), ""))
        }
        Some(cap) => {
            for key in cap.keys() {
                if key != "storage" {
                    errs.push(FieldError::not_supported(
                        &spec_path.child("capacity"),
                        key.as_str(),
                        &strings(&["storage"]),
                    ));
                }
            }
            if let Some(q) = cap.get("storage") {
                if quantity_value(q).is_some_and(|v| v <= 0.0) {
                    errs.push(FieldError::invalid(
                        &spec_path.child("capacity").key("storage"),
                        q.0.as_str(),
                        "must be greater than zero",
                    ));
                }
            }
        }
    }
    let sources = volume_sources(pv);
    if sources.is_empty() {
        errs.push(FieldError::required(
            &spec_path,
            "must specify a volume type",
        ));
    }
    for (name, _) in sources.iter().skip(1) {
        errs.push(FieldError::forbidden(
            &spec_path.child(name),
            "may not specify more than 1 volume type",
        ));
    }
    match spec.persistent_volume_reclaim_policy.as_deref() {
        None | Some("Delete" | "Recycle" | "Retain") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &spec_path.child("persistentVolumeReclaimPolicy"),
            other,
            &strings(&["Delete", "Recycle", "Retain"]),
        )),
    }
    errs.extend(validate_volume_mode(
        spec.volume_mode.as_deref(),
        &spec_path.child("volumeMode"),
    ));
    errs.extend(validate_class_name(
        spec.storage_class_name.as_deref(),
        &spec_path.child("storageClassName"),
    ));
    errs
}

/// The hooks of PersistentVolume.
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentVolumeHooks;

impl Hooks<PersistentVolume> for PersistentVolumeHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, pv: &mut PersistentVolume) {
        let spec = pv.spec.get_or_insert_with(Default::default);
        if spec
            .persistent_volume_reclaim_policy
            .as_deref()
            .unwrap_or("")
            .is_empty()
        {
            spec.persistent_volume_reclaim_policy = Some("Retain".into());
        }
        if spec.volume_mode.is_none() {
            spec.volume_mode = Some("Filesystem".into());
        }
    }

    fn prepare_for_create(&self, pv: &mut PersistentVolume) {
        untracked_generation(&mut pv.metadata);
        pv.status = Some(PersistentVolumeStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        });
    }

    fn prepare_for_update(&self, new: &mut PersistentVolume, _old: &PersistentVolume) {
        untracked_generation(&mut new.metadata);
    }

    fn validate(&self, pv: &PersistentVolume) -> ErrorList {
        validate_pv(pv)
    }

    fn validate_update(&self, new: &PersistentVolume, old: &PersistentVolume) -> ErrorList {
        let mut errs = validate_pv(new);
        if volume_sources(new) != volume_sources(old) {
            errs.push(FieldError::forbidden(
                &FieldPath::new("spec.persistentvolumesource"),
                "spec.persistentvolumesource is immutable after creation",
            ));
        }
        let (nm, om) = (
            new.spec.as_ref().and_then(|s| s.volume_mode.clone()),
            old.spec.as_ref().and_then(|s| s.volume_mode.clone()),
        );
        if nm != om {
            errs.push(FieldError::invalid(
                &FieldPath::new("volumeMode"),
                nm.unwrap_or_default(),
                "field is immutable",
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, pv: &PersistentVolume) -> Option<Value> {
        let spec = pv.spec.clone().unwrap_or_default();
        let cell = match column {
            "Capacity" => spec
                .capacity
                .as_ref()
                .and_then(|c| c.get("storage"))
                .map(|q| q.0.clone())
                .unwrap_or_else(|| "0".into()),
            "Access Modes" => access_modes_string(spec.access_modes.as_deref().unwrap_or(&[])),
            "Status" => {
                if pv.metadata.deletion_timestamp.is_some() {
                    "Terminating".into()
                } else {
                    pv.status
                        .as_ref()
                        .and_then(|s| s.phase.clone())
                        .unwrap_or_default()
                }
            }
            "Claim" => spec
                .claim_ref
                .as_ref()
                .map(|c| {
                    format!(
                        "{}/{}",
                        c.namespace.as_deref().unwrap_or(""),
                        c.name.as_deref().unwrap_or("")
                    )
                })
                .unwrap_or_default(),
            "StorageClass" => spec.storage_class_name.unwrap_or_default(),
            "VolumeAttributesClass" => spec
                .volume_attributes_class_name
                .unwrap_or_else(|| "<unset>".into()),
            "Reason" => pv
                .status
                .as_ref()
                .and_then(|s| s.reason.clone())
                .unwrap_or_default(),
            "VolumeMode" => spec.volume_mode.unwrap_or_else(|| "<unset>".into()),
            _ => return None,
        };
        Some(Value::String(cell))
    }
}

/// `ValidatePersistentVolumeClaimSpec`, as far as kapi goes.
fn validate_pvc(pvc: &PersistentVolumeClaim) -> ErrorList {
    let spec_path = FieldPath::new("spec");
    let spec = pvc.spec.clone().unwrap_or_default();
    let mut errs = validate_access_modes(
        spec.access_modes.as_ref(),
        &spec_path.child("accessModes"),
        "at least 1 access mode is required",
    );
    let storage = spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"));
    let storage_path = spec_path.child("resources").key("storage");
    match storage {
        None => errs.push(FieldError::required(&storage_path, "")),
        Some(q) => {
            if quantity_value(q).is_some_and(|v| v <= 0.0) {
                errs.push(FieldError::invalid(
                    &storage_path,
                    q.0.as_str(),
                    "must be greater than zero",
                ));
            }
        }
    }
    errs.extend(validate_volume_mode(
        spec.volume_mode.as_deref(),
        &spec_path.child("volumeMode"),
    ));
    errs.extend(validate_class_name(
        spec.storage_class_name.as_deref(),
        &spec_path.child("storageClassName"),
    ));
    errs
}

fn requested_storage(pvc: &PersistentVolumeClaim) -> Option<&Quantity> {
    pvc.spec
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
}

/// `ValidatePersistentVolumeClaimUpdate`: what may change in a claim's spec.
fn validate_pvc_update(new: &PersistentVolumeClaim, old: &PersistentVolumeClaim) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut new_spec = new.spec.clone().unwrap_or_default();
    let mut old_spec = old.spec.clone().unwrap_or_default();
    if old_spec.volume_name.as_deref().unwrap_or("").is_empty() {
        old_spec.volume_name = new_spec.volume_name.clone();
    }
    let bound = new
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .is_some_and(|p| p == "Bound");
    if bound {
        let old_storage = requested_storage(old).cloned();
        if let Some(requests) = new_spec
            .resources
            .as_mut()
            .and_then(|r| r.requests.as_mut())
        {
            match old_storage {
                Some(q) => {
                    requests.insert("storage".into(), q);
                }
                None => {
                    requests.remove("storage");
                }
            }
        }
    }
    if new_spec != old_spec {
        errs.push(FieldError::forbidden(
            &FieldPath::new("spec"),
            "spec is immutable after creation except resources.requests and \
             volumeAttributesClassName for bound claims",
        ));
    }
    let (new_size, old_size) = (
        requested_storage(new).and_then(quantity_value),
        requested_storage(old).and_then(quantity_value),
    );
    if let (Some(n), Some(o)) = (new_size, old_size) {
        if n < o {
            errs.push(FieldError::forbidden(
                &FieldPath::new("spec.resources.requests.storage"),
                "field can not be less than previous value",
            ));
        }
    }
    errs
}

/// The hooks of PersistentVolumeClaim.
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentVolumeClaimHooks;

impl Hooks<PersistentVolumeClaim> for PersistentVolumeClaimHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, pvc: &mut PersistentVolumeClaim) {
        let spec = pvc.spec.get_or_insert_with(Default::default);
        if spec.volume_mode.is_none() {
            spec.volume_mode = Some("Filesystem".into());
        }
    }

    fn prepare_for_create(&self, pvc: &mut PersistentVolumeClaim) {
        untracked_generation(&mut pvc.metadata);
        pvc.status = Some(PersistentVolumeClaimStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        });
    }

    fn prepare_for_update(&self, new: &mut PersistentVolumeClaim, _old: &PersistentVolumeClaim) {
        untracked_generation(&mut new.metadata);
    }

    fn validate(&self, pvc: &PersistentVolumeClaim) -> ErrorList {
        validate_pvc(pvc)
    }

    fn validate_update(
        &self,
        new: &PersistentVolumeClaim,
        old: &PersistentVolumeClaim,
    ) -> ErrorList {
        let mut errs = validate_pvc(new);
        errs.extend(validate_pvc_update(new, old));
        errs
    }

    fn table_cell(&self, column: &str, pvc: &PersistentVolumeClaim) -> Option<Value> {
        let spec = pvc.spec.clone().unwrap_or_default();
        let status = pvc.status.clone().unwrap_or_default();
        let bound = !spec.volume_name.as_deref().unwrap_or("").is_empty();
        let cell = match column {
            "Status" => {
                if pvc.metadata.deletion_timestamp.is_some() {
                    "Terminating".into()
                } else {
                    status.phase.unwrap_or_default()
                }
            }
            "Volume" => spec.volume_name.unwrap_or_default(),
            "Capacity" if bound => status
                .capacity
                .as_ref()
                .and_then(|c| c.get("storage"))
                .map(|q| q.0.clone())
                .unwrap_or_else(|| "0".into()),
            "Capacity" => String::new(),
            "Access Modes" if bound => {
                access_modes_string(status.access_modes.as_deref().unwrap_or(&[]))
            }
            "Access Modes" => String::new(),
            "StorageClass" => spec.storage_class_name.unwrap_or_default(),
            "VolumeAttributesClass" => status
                .current_volume_attributes_class_name
                .unwrap_or_else(|| "<unset>".into()),
            "VolumeMode" => spec.volume_mode.unwrap_or_else(|| "<unset>".into()),
            _ => return None,
        };
        Some(Value::String(cell))
    }
}

/// The hooks of StorageClass.
#[derive(Clone, Copy, Debug, Default)]
pub struct StorageClassHooks;

/// `ValidateStorageClass`, as far as kapi goes.
fn validate_sc(sc: &StorageClass) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = FieldPath::new("provisioner");
    if sc.provisioner.is_empty() {
        errs.push(FieldError::required(&path, ""));
    } else {
        if sc.provisioner.len() > 63 {
            errs.push(FieldError::too_long(&path, 63));
        }
        for msg in qualified_name_errors(&sc.provisioner.to_lowercase()) {
            errs.push(FieldError::invalid(&path, sc.provisioner.as_str(), msg));
        }
    }
    match sc.reclaim_policy.as_deref() {
        None | Some("Delete" | "Retain") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &FieldPath::new("reclaimPolicy"),
            other,
            &strings(&["Delete", "Retain"]),
        )),
    }
    match sc.volume_binding_mode.as_deref() {
        None => errs.push(FieldError::required(
            &FieldPath::new("volumeBindingMode"),
            "",
        )),
        Some("Immediate" | "WaitForFirstConsumer") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &FieldPath::new("volumeBindingMode"),
            other,
            &strings(&["Immediate", "WaitForFirstConsumer"]),
        )),
    }
    errs
}

impl Hooks<StorageClass> for StorageClassHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, sc: &mut StorageClass) {
        if sc.reclaim_policy.is_none() {
            sc.reclaim_policy = Some("Delete".into());
        }
        if sc.volume_binding_mode.is_none() {
            sc.volume_binding_mode = Some("Immediate".into());
        }
    }

    fn prepare_for_create(&self, sc: &mut StorageClass) {
        untracked_generation(&mut sc.metadata);
    }

    fn prepare_for_update(&self, new: &mut StorageClass, _old: &StorageClass) {
        untracked_generation(&mut new.metadata);
    }

    fn validate(&self, sc: &StorageClass) -> ErrorList {
        validate_sc(sc)
    }

    fn validate_update(&self, new: &StorageClass, old: &StorageClass) -> ErrorList {
        let mut errs = validate_sc(new);
        if new.parameters != old.parameters {
            errs.push(FieldError::forbidden(
                &FieldPath::new("parameters"),
                "updates to parameters are forbidden.",
            ));
        }
        if new.provisioner != old.provisioner {
            errs.push(FieldError::forbidden(
                &FieldPath::new("provisioner"),
                "updates to provisioner are forbidden.",
            ));
        }
        if new.reclaim_policy != old.reclaim_policy {
            errs.push(FieldError::forbidden(
                &FieldPath::new("reclaimPolicy"),
                "updates to reclaimPolicy are forbidden.",
            ));
        }
        if new.volume_binding_mode != old.volume_binding_mode {
            errs.push(FieldError::invalid(
                &FieldPath::new("volumeBindingMode"),
                new.volume_binding_mode.clone().unwrap_or_default(),
                "field is immutable",
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, sc: &StorageClass) -> Option<Value> {
        match column {
            "AllowVolumeExpansion" => Some(Value::Bool(sc.allow_volume_expansion.unwrap_or(false))),
            _ => None,
        }
    }
}
