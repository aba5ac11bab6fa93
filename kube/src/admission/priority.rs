//! The PriorityClass half of kube-apiserver's Priority admission plugin
//! (`plugin/pkg/admission/priority`): at most one PriorityClass is the global default.
//! A class that is `globalDefault` may be created, or updated, only while no other class
//! is; otherwise the write is refused with 403 Forbidden, in kube's words. When several
//! defaults exist (a race), the one with the lowest value is named, as kube picks it.
//!
//! The pod half (resolving `spec.priority` from `priorityClassName`) is not done.

use serde_json::Value;

use kapi_apiserver::registry::{AdmissionRequest, ListOptions, Operation, Registry};
use kapi_apiserver::status::ApiError;

/// The API group of PriorityClasses.
pub const GROUP: &str = "scheduling.k8s.io";
/// Their resource.
const PLURAL: &str = "priorityclasses";

/// Whether the plugin looks at `request`: a create or update of a PriorityClass itself.
pub fn handles(request: &AdmissionRequest<'_>) -> bool {
    request.info.group == GROUP
        && request.info.plural == PLURAL
        && request.subresource.is_empty()
        && matches!(request.operation, Operation::Create | Operation::Update)
}

/// Refuses `obj` as a second global default PriorityClass.
pub async fn check(
    registry: &Registry,
    request: &AdmissionRequest<'_>,
    obj: &Value,
) -> Result<(), ApiError> {
    if obj["globalDefault"] != Value::Bool(true) {
        return Ok(());
    }
    let Some(store) = registry.get(GROUP, &request.info.version, PLURAL) else {
        return Ok(());
    };
    let list = store.list_objects(None, &ListOptions::default()).await?;
    let mut default: Option<(i64, String)> = None;
    for item in list.items {
        let pc = match item.decoded {
            Some(pc) => pc,
            None => item.stored.decode(store.info())?,
        };
        if pc["globalDefault"] != Value::Bool(true) {
            continue;
        }
        let value = pc["value"].as_i64().unwrap_or_default();
        if default.as_ref().is_none_or(|(v, _)| *v > value) {
            let name = pc["metadata"]["name"].as_str().unwrap_or_default();
            default = Some((value, name.to_string()));
        }
    }
    let name = if request.name.is_empty() {
        obj["metadata"]["name"].as_str().unwrap_or_default()
    } else {
        request.name
    };
    match default {
        Some((_, existing)) if request.operation == Operation::Create || existing != name => {
            Err(ApiError::forbidden(
                request.info,
                name,
                &format!(
                    "PriorityClass {existing} is already marked as default. Only one default can exist"
                ),
            ))
        }
        _ => Ok(()),
    }
}
