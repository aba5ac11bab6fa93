//! Events, core/v1 and events.k8s.io/v1.

use kapi_core::Hooks;

use crate::generated::core::v1::Event as CoreEvent;
use crate::generated::events_k8s_io::v1::Event;

/// The hooks of core/v1 Event.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoreEventHooks;

impl Hooks<CoreEvent> for CoreEventHooks {}

/// The hooks of Event.
#[derive(Clone, Copy, Debug, Default)]
pub struct EventHooks;

impl Hooks<Event> for EventHooks {}
