//! Nodes, as kube-apiserver's node strategy and its printer (`printNode`) show them: no
//! `metadata.generation`; the Status column is `Ready`/`NotReady`/`Unknown` from the
//! Ready condition, with `,SchedulingDisabled` when the node is unschedulable; Roles
//! come from the `node-role.kubernetes.io/<role>` labels (and `kubernetes.io/role`);
//! the wide columns show the first internal and external addresses and the node info,
//! `<unknown>` where the kubelet reported nothing.
//!
//! A new Node keeps the `status` it is created with, as kube's node strategy does (the
//! kubelet registers itself with it).
//!
//! Deliberate differences from kube-apiserver:
//! - Node spec validation (pod CIDRs, taints, config source) is not done.

use std::collections::BTreeSet;

use kapi_core::Hooks;
use serde_json::Value;

use crate::generated::api::core::v1::NodeStatus;
use crate::generated::core::v1::Node;

/// The hooks of Node.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeHooks;

/// kube's `findNodeRoles`.
fn roles(node: &Node) -> String {
    let mut roles = BTreeSet::new();
    for (k, v) in node.metadata.labels.iter().flatten() {
        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.insert(role.to_string());
            }
        } else if k == "kubernetes.io/role" && !v.is_empty() {
            roles.insert(v.clone());
        }
    }
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    }
}

fn status_cell(node: &Node) -> String {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().rev().find(|c| c.r#type == "Ready"));
    let mut status = match ready {
        Some(c) if c.status == "True" => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if node
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false)
    {
        status.push_str(",SchedulingDisabled");
    }
    status
}

fn address(status: Option<&NodeStatus>, kind: &str) -> String {
    status
        .and_then(|s| s.addresses.as_ref())
        .and_then(|a| a.iter().find(|a| a.r#type == kind))
        .map_or_else(|| "<none>".into(), |a| a.address.clone())
}

fn or_unknown(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => "<unknown>".into(),
    }
}

impl Hooks<Node> for NodeHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// A kubelet registers its Node with its status, which kube's node strategy keeps.
    fn keep_status_on_create(&self) -> bool {
        true
    }

    fn table_cell(&self, column: &str, node: &Node) -> Option<Value> {
        let status = node.status.as_ref();
        let info = status.and_then(|s| s.node_info.as_ref());
        let cell = match column {
            "Status" => status_cell(node),
            "Roles" => roles(node),
            "Version" => info.map(|i| i.kubelet_version.clone()).unwrap_or_default(),
            "Internal-IP" => address(status, "InternalIP"),
            "External-IP" => address(status, "ExternalIP"),
            "OS-Image" => or_unknown(info.map(|i| i.os_image.as_str())),
            "Kernel-Version" => or_unknown(info.map(|i| i.kernel_version.as_str())),
            "Container-Runtime" => or_unknown(info.map(|i| i.container_runtime_version.as_str())),
            _ => return None,
        };
        Some(Value::String(cell))
    }
}
