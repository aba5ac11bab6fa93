//! Workload controllers' objects (apps/v1 and ReplicationController), as kube-apiserver's strategies for them behave.

use kapi_core::Hooks;

use crate::generated::apps::v1::ControllerRevision;
use crate::generated::apps::v1::DaemonSet;
use crate::generated::apps::v1::Deployment;
use crate::generated::apps::v1::ReplicaSet;
use crate::generated::apps::v1::StatefulSet;
use crate::generated::core::v1::ReplicationController;

/// The hooks of Deployment.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeploymentHooks;

impl Hooks<Deployment> for DeploymentHooks {}

/// The hooks of ReplicaSet.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplicaSetHooks;

impl Hooks<ReplicaSet> for ReplicaSetHooks {}

/// The hooks of StatefulSet.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatefulSetHooks;

impl Hooks<StatefulSet> for StatefulSetHooks {}

/// The hooks of DaemonSet.
#[derive(Clone, Copy, Debug, Default)]
pub struct DaemonSetHooks;

impl Hooks<DaemonSet> for DaemonSetHooks {}

/// The hooks of ControllerRevision.
#[derive(Clone, Copy, Debug, Default)]
pub struct ControllerRevisionHooks;

impl Hooks<ControllerRevision> for ControllerRevisionHooks {}

/// The hooks of ReplicationController.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplicationControllerHooks;

impl Hooks<ReplicationController> for ReplicationControllerHooks {}
