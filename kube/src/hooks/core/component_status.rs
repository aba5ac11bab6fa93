//! ComponentStatuses, as kube-apiserver's printer (`printComponentStatus`) shows them:
//! the Status, Message and Error cells of the Healthy condition. Read-only (get and
//! list): kapi runs no scheduler or controller-manager to report, so there are none.

use kapi_core::Hooks;
use serde_json::Value;

use crate::generated::core::v1::ComponentStatus;

/// The hooks of ComponentStatus.
#[derive(Clone, Copy, Debug, Default)]
pub struct ComponentStatusHooks;

impl Hooks<ComponentStatus> for ComponentStatusHooks {
    fn table_cell(&self, column: &str, cs: &ComponentStatus) -> Option<Value> {
        let healthy = cs
            .conditions
            .as_ref()
            .and_then(|c| c.iter().find(|c| c.r#type == "Healthy"));
        let cell = match column {
            "Status" => match healthy {
                Some(c) if c.status == "True" => "Healthy".into(),
                Some(_) => "Unhealthy".into(),
                None => "Unknown".into(),
            },
            "Message" => healthy.and_then(|c| c.message.clone()).unwrap_or_default(),
            "Error" => healthy.and_then(|c| c.error.clone()).unwrap_or_default(),
            _ => return None,
        };
        Some(Value::String(cell))
    }
}
