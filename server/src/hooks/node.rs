//! Nodes and ComponentStatuses.

use kapi_core::Hooks;

use crate::generated::core::v1::ComponentStatus;
use crate::generated::core::v1::Node;

/// The hooks of Node.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeHooks;

impl Hooks<Node> for NodeHooks {}

/// The hooks of ComponentStatus.
#[derive(Clone, Copy, Debug, Default)]
pub struct ComponentStatusHooks;

impl Hooks<ComponentStatus> for ComponentStatusHooks {}
