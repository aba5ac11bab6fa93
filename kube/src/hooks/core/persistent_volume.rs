//! PersistentVolumes, as kube-apiserver's strategy, v1 defaults and validation treat
//! them, and as its printer shows them: no generation; `persistentVolumeReclaimPolicy`
//! defaults to `Retain` and `volumeMode` to `Filesystem`; a new volume's status is
//! `phase: Pending`; it needs access modes, a `storage` capacity and exactly one volume
//! source, which may not change afterwards. The access mode, volume mode, class name and
//! quantity checks here are shared with [`super::persistent_volume_claim`].
//!
//! Deliberate differences from kube-apiserver:
//! - kube's message for a changed volume source ends with a diff of the two sources;
//!   kapi's stops after `is immutable after creation`.
//! - Volume sources are not validated in detail (paths, servers, drivers), nor are node
//!   affinity or mount options.

use kapi_core::meta::dns1123_subdomain_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::core::v1::PersistentVolumeStatus;
use crate::generated::core::v1::PersistentVolume;

use crate::hooks::quantity::quantity_value;
use crate::hooks::strings;

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

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

pub(super) fn validate_access_modes(
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

pub(super) fn validate_volume_mode(mode: Option<&str>, path: &FieldPath) -> ErrorList {
    match mode {
        None | Some("Block" | "Filesystem") => ErrorList::new(),
        Some(other) => vec![FieldError::not_supported(
            path,
            other,
            &strings(&["Block", "Filesystem"]),
        )],
    }
}

pub(super) fn validate_class_name(name: Option<&str>, path: &FieldPath) -> ErrorList {
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
    fn tracks_generation(&self) -> bool {
        false
    }

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
        pv.status = Some(PersistentVolumeStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        });
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
