//! kube-apiserver's Priority admission plugin (`plugin/pkg/admission/priority`), both
//! halves:
//! - PriorityClasses ([`check`]): at most one is the global default. A class that is
//!   `globalDefault` may be created, or updated, only while no other class is;
//!   otherwise the write is refused with 403 Forbidden, in kube's words.
//! - Pods ([`admit_pod`]): a new Pod's `spec.priority` and `preemptionPolicy` come from
//!   its `priorityClassName`, or from the global default class when it names none (and
//!   its name is then set), or are 0 and `PreemptLowerPriority` when there is no
//!   default. A class that does not exist, or a priority or preemption policy in the
//!   Pod that differs from the class's, is refused with 403 in kube's words. An update
//!   keeps the stored priority.
//!
//! When several defaults exist (a race), the one with the lowest value counts, as kube
//! picks it.

use kapi_storage::ReadAt;
use serde_json::{Value, json};

use kapi_apiserver::registry::{AdmissionRequest, ListOptions, Operation, Registry};
use kapi_apiserver::status::ApiError;

/// `preemptionPolicy` of a Pod whose priority no class gives.
const PREEMPT_LOWER_PRIORITY: &str = "PreemptLowerPriority";

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
    let default = global_default(&store).await?.map(|pc| {
        let value = pc["value"].as_i64().unwrap_or_default();
        (
            value,
            pc["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    });
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

/// The global default PriorityClass, the one with the lowest value if there are several.
async fn global_default(
    store: &kapi_apiserver::registry::Store,
) -> Result<Option<Value>, ApiError> {
    let opts = ListOptions {
        read_at: ReadAt::Any,
        ..ListOptions::default()
    };
    let list = store.list_objects(None, &opts).await?;
    let mut default: Option<Value> = None;
    for item in list.items {
        let pc = match item.decoded {
            Some(pc) => pc,
            None => item.stored.decode(store.info())?,
        };
        if pc["globalDefault"] != Value::Bool(true) {
            continue;
        }
        let value = pc["value"].as_i64().unwrap_or_default();
        if default
            .as_ref()
            .is_none_or(|d| d["value"].as_i64().unwrap_or_default() > value)
        {
            default = Some(pc);
        }
    }
    Ok(default)
}

/// Whether [`admit_pod`] looks at `request`: a Pod's create or update.
pub fn handles_pod(request: &AdmissionRequest<'_>) -> bool {
    request.info.group.is_empty()
        && request.info.plural == "pods"
        && request.subresource.is_empty()
        && matches!(request.operation, Operation::Create | Operation::Update)
}

/// Sets a new Pod's priority from its class, as kube's plugin does; on update, keeps the
/// stored priority when the Pod leaves it out.
pub async fn admit_pod(
    registry: &Registry,
    request: &AdmissionRequest<'_>,
    pod: &mut Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    if request.operation == Operation::Update {
        for field in ["priority", "preemptionPolicy"] {
            if pod["spec"][field].is_null() {
                if let Some(v) = old
                    .and_then(|o| o["spec"].get(field))
                    .filter(|v| !v.is_null())
                {
                    pod["spec"][field] = v.clone();
                }
            }
        }
        return Ok(());
    }
    let Some(store) = registry.get(GROUP, "v1", PLURAL) else {
        return Ok(());
    };
    let forbidden = |why: String| {
        let name = pod["metadata"]["name"].as_str().unwrap_or(request.name);
        ApiError::forbidden(request.info, name, &why)
    };
    let class_name = pod["spec"]["priorityClassName"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let class = if class_name.is_empty() {
        global_default(&store).await?
    } else {
        match super::read_cached(&store, None, &class_name).await {
            Ok(pc) => Some(pc),
            Err(e) if e.code == http::StatusCode::NOT_FOUND => {
                return Err(forbidden(format!(
                    "no PriorityClass with name {class_name} was found"
                )));
            }
            Err(e) => return Err(e),
        }
    };
    let (priority, policy) = match &class {
        Some(pc) => (
            pc["value"].as_i64().unwrap_or_default(),
            pc["preemptionPolicy"]
                .as_str()
                .unwrap_or(PREEMPT_LOWER_PRIORITY)
                .to_string(),
        ),
        None => (0, PREEMPT_LOWER_PRIORITY.to_string()),
    };
    if let Some(given) = pod["spec"]["priority"].as_i64().filter(|p| *p != priority) {
        return Err(forbidden(format!(
            "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
        )));
    }
    if let Some(given) = pod["spec"]["preemptionPolicy"]
        .as_str()
        .filter(|p| *p != policy)
    {
        return Err(forbidden(format!(
            "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
        )));
    }
    if let (Some(pc), true) = (&class, class_name.is_empty()) {
        pod["spec"]["priorityClassName"] = pc["metadata"]["name"].clone();
    }
    pod["spec"]["priority"] = json!(priority);
    pod["spec"]["preemptionPolicy"] = json!(policy);
    Ok(())
}
