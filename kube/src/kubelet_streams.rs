//! `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`: kube-apiserver
//! answers them by connecting to the kubelet of the pod's node (`LogLocation`,
//! `ExecLocation`, `AttachLocation`, `PortForwardLocation` in
//! `pkg/registry/core/pod/strategy.go`). kapi runs no kubelets and connects to none, so
//! it answers everything kube decides before it connects, in kube's words:
//! - the pod must exist (404), and `log`'s options are validated
//!   (`ValidatePodLogOptions`: 422 `PodLogOptions "p" is invalid: ...`);
//! - the container: the only one when none is named, else `a container name must be
//!   specified for pod p, choose one of: [a b]`; a named one must be in the pod
//!   (`container c is not valid for pod p`); both 400 (not for `portforward`);
//! - a pod with no node: `log` answers an empty body, as kube does; `exec`, `attach`
//!   and `portforward` answer 400 `pod p does not have a host assigned`;
//! - a pod on a node: the Node must exist (404 `nodes "n" not found`); then, where kube
//!   would connect to the kubelet at the node's preferred address and port, kapi
//!   answers 503 ServiceUnavailable, naming the kubelet it does not connect to.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use http::Method;
use kapi_auth::UserInfo;
use kapi_core::{ErrorList, FieldError, FieldPath};
use kapi_storage::ReadAt;
use serde_json::Value;

use kapi_apiserver::endpoints::{Api, ConnectPath, Connected, Connecter};
use kapi_apiserver::registry::Store;
use kapi_apiserver::request::ResourcePath;
use kapi_apiserver::request::query::Query;
use kapi_apiserver::status::ApiError;

/// The kubelet's port where a Node reports none (`--kubelet-port`'s default).
const KUBELET_PORT: u64 = 10250;
/// kube-apiserver's default `--kubelet-preferred-address-types`.
const PREFERRED_ADDRESS_TYPES: [&str; 5] = [
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];

/// The four subresources, to register with the server's [`Api`].
pub fn connecters() -> Vec<Arc<dyn Connecter>> {
    ["log", "exec", "attach", "portforward"]
        .into_iter()
        .map(|subresource| Arc::new(PodStream { subresource }) as Arc<dyn Connecter>)
        .collect()
}

struct PodStream {
    subresource: &'static str,
}

#[async_trait]
impl Connecter for PodStream {
    fn path(&self) -> ConnectPath {
        const GET: &[Method] = &[Method::GET];
        const GET_POST: &[Method] = &[Method::GET, Method::POST];
        ConnectPath {
            group: "",
            versions: &["v1"],
            plural: "pods",
            subresource: self.subresource,
            methods: if self.subresource == "log" {
                GET
            } else {
                GET_POST
            },
        }
    }

    async fn connect(
        &self,
        api: &Api,
        r: &ResourcePath,
        query: &Query,
        _user: &UserInfo,
    ) -> Result<Connected, ApiError> {
        let name = r.name.as_deref().unwrap_or_default();
        let pods = store(api, "pods")?;
        if self.subresource == "log" {
            log_options_errors(query, name, &pods)?;
        }
        let pod = pods
            .get(r.namespace.as_deref(), name, ReadAt::Latest)
            .await?;
        if self.subresource != "portforward" {
            container(query.get("container").unwrap_or_default(), &pod, name)?;
        }
        let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
        if node.is_empty() {
            return match self.subresource {
                "log" => Ok(Connected {
                    content_type: "text/plain",
                    body: Bytes::new(),
                }),
                _ => Err(ApiError::bad_request(format!(
                    "pod {name} does not have a host assigned"
                ))),
            };
        }
        let nodes = store(api, "nodes")?;
        let node = nodes.get(None, node, ReadAt::Latest).await?;
        Err(unreachable_kubelet(&node, name))
    }
}

fn store(api: &Api, plural: &str) -> Result<Arc<Store>, ApiError> {
    api.registry.get("", "v1", plural).ok_or_else(|| {
        ApiError::internal(
            "connecting to a pod",
            &std::io::Error::other(format!("{plural} are not served")),
        )
    })
}

/// kube's `validateContainer`: the container a request is for.
fn container(named: &str, pod: &Value, name: &str) -> Result<String, ApiError> {
    let spec = &pod["spec"];
    let list = |field: &str| -> Vec<String> {
        spec[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str())
            .map(str::to_string)
            .collect()
    };
    let containers = list("containers");
    // VisitContainers' order: init, regular, ephemeral.
    let all: Vec<String> = [
        list("initContainers"),
        containers.clone(),
        list("ephemeralContainers"),
    ]
    .concat();
    if !named.is_empty() {
        return if all.iter().any(|c| c == named) {
            Ok(named.to_string())
        } else {
            Err(ApiError::bad_request(format!(
                "container {named} is not valid for pod {name}"
            )))
        };
    }
    match containers.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            all.join(" ")
        ))),
    }
}

/// kube's `ValidatePodLogOptions` over the query (its integers parsed first, as kube's
/// decoder parses them).
fn log_options_errors(query: &Query, name: &str, pods: &Store) -> Result<(), ApiError> {
    let int = |key: &str| -> Result<Option<i64>, ApiError> {
        query
            .get(key)
            .map(|v| {
                v.parse::<i64>().map_err(|_| {
                    ApiError::bad_request(format!(
                        "strconv.ParseInt: parsing {v:?}: invalid syntax"
                    ))
                })
            })
            .transpose()
    };
    let (tail, limit, since) = (int("tailLines")?, int("limitBytes")?, int("sinceSeconds")?);
    let mut errs = ErrorList::new();
    if let Some(t) = tail.filter(|t| *t < 0) {
        errs.push(FieldError::invalid(
            &FieldPath::new("tailLines"),
            t,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(l) = limit.filter(|l| *l < 1) {
        errs.push(FieldError::invalid(
            &FieldPath::new("limitBytes"),
            l,
            "must be greater than 0",
        ));
    }
    match (since, query.get("sinceTime")) {
        (Some(_), Some(_)) => errs.push(FieldError::forbidden(
            &FieldPath::new(""),
            "at most one of `sinceTime` or `sinceSeconds` may be specified",
        )),
        (Some(s), None) if s < 1 => errs.push(FieldError::invalid(
            &FieldPath::new("sinceSeconds"),
            s,
            "must be greater than 0",
        )),
        _ => {}
    }
    if errs.is_empty() {
        return Ok(());
    }
    let mut info = pods.info().clone();
    info.kind = "PodLogOptions".into();
    Err(ApiError::invalid(&info, name, &errs))
}

/// The 503 where kube would connect to `node`'s kubelet (kube's
/// `GetConnectionInfo`: the first address of the preferred types, the reported port).
fn unreachable_kubelet(node: &Value, pod: &str) -> ApiError {
    let node_name = node["metadata"]["name"].as_str().unwrap_or_default();
    let addresses = node["status"]["addresses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let address = PREFERRED_ADDRESS_TYPES.iter().find_map(|ty| {
        addresses
            .iter()
            .find(|a| a["type"] == *ty)
            .and_then(|a| a["address"].as_str())
    });
    let Some(host) = address else {
        let known: Vec<String> = addresses.iter().map(Value::to_string).collect();
        return ApiError::service_unavailable(format!(
            "no preferred addresses found; known addresses: [{}]",
            known.join(" ")
        ));
    };
    let port = node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
        .as_u64()
        .filter(|p| *p > 0)
        .unwrap_or(KUBELET_PORT);
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    ApiError::service_unavailable(format!(
        "kapi does not connect to kubelets: pod {pod} runs on node {node_name}, whose kubelet is at https://{host}:{port}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_container_is_chosen_as_kube_chooses_it() {
        let one = json!({"spec": {"containers": [{"name": "app"}]}});
        assert_eq!(container("", &one, "p").unwrap(), "app");
        let many = json!({"spec": {"initContainers": [{"name": "init"}],
            "containers": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(
            container("", &many, "p").unwrap_err().message,
            "a container name must be specified for pod p, choose one of: [init a b]"
        );
        assert_eq!(container("init", &many, "p").unwrap(), "init");
        assert_eq!(
            container("c", &many, "p").unwrap_err().message,
            "container c is not valid for pod p"
        );
    }

    #[test]
    fn the_kubelet_is_named_by_the_preferred_address() {
        let node = json!({"metadata": {"name": "n1"}, "status": {
            "addresses": [{"type": "ExternalIP", "address": "203.0.113.5"},
                {"type": "InternalIP", "address": "10.0.0.5"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10255}}}});
        assert_eq!(
            unreachable_kubelet(&node, "p").message,
            "kapi does not connect to kubelets: pod p runs on node n1, whose kubelet is at https://10.0.0.5:10255"
        );
        let bare = json!({"metadata": {"name": "n2"}});
        assert_eq!(
            unreachable_kubelet(&bare, "p").message,
            "no preferred addresses found; known addresses: []"
        );
    }
}
