//! Where a `service` reference of an APIService is reached. A Service's cluster IP is
//! routed by kube-proxy, which kapi does not have, so the aggregator always routes as
//! kube-aggregator's `--enable-aggregator-routing` does: to an address of the Service's
//! Endpoints, on the endpoint port named as the Service's port is. An `ExternalName`
//! Service is reached at its external name (resolved on this machine) on the
//! APIService's port.
//!
//! [`EndpointServiceResolver`] answers the same way for webhooks (CRD conversion), as
//! kube-aggregator's resolver is handed to kube-apiserver's webhook clients.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use kapi_apiserver::webhook::ServiceResolver;

use kapi_apiserver::registry::Registry;
use kapi_storage::ReadAt;
use serde_json::Value;

use crate::api_service::{Availability, ServiceRef};

fn unknown(reason: &'static str, service: &ServiceRef, why: &str) -> Availability {
    Availability {
        status: "Unknown",
        reason,
        message: format!(
            "service/{} in {:?} cannot be checked due to: {why}",
            service.name, service.namespace
        ),
    }
}

fn unavailable(reason: &'static str, message: String) -> Availability {
    Availability {
        status: "False",
        reason,
        message,
    }
}

async fn read(
    registry: &Registry,
    plural: &str,
    service: &ServiceRef,
) -> Result<Option<Value>, String> {
    let Some(store) = registry.get("", "v1", plural) else {
        return Err(format!("{plural} are not served"));
    };
    match store
        .get(Some(&service.namespace), &service.name, ReadAt::Any)
        .await
    {
        Ok(object) => Ok(Some(object)),
        Err(e) if e.reason == "NotFound" => Ok(None),
        Err(e) => Err(e.message),
    }
}

/// The address requests for `service` go to, or why there is none, in kube's reasons
/// and words (`ServiceNotFound`, `ServicePortError`, `EndpointsNotFound`,
/// `MissingEndpoints`).
pub async fn resolve(
    registry: &Registry,
    service: &ServiceRef,
) -> Result<SocketAddr, Availability> {
    let found = read(registry, "services", service)
        .await
        .map_err(|e| unknown("ServiceAccessError", service, &e))?;
    let Some(svc) = found else {
        return Err(unavailable(
            "ServiceNotFound",
            format!(
                "service/{} in {:?} is not present",
                service.name, service.namespace
            ),
        ));
    };
    if svc["spec"]["type"] == "ExternalName" {
        let host = svc["spec"]["externalName"].as_str().unwrap_or_default();
        return tokio::net::lookup_host((host, service.port))
            .await
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| {
                unavailable(
                    "ServiceNotFound",
                    format!(
                        "service/{} in {:?} names {host:?}, which does not resolve here",
                        service.name, service.namespace
                    ),
                )
            });
    }
    let port_name = svc["spec"]["ports"]
        .as_array()
        .and_then(|ports| {
            ports
                .iter()
                .find(|p| p["port"].as_u64() == Some(u64::from(service.port)))
        })
        .map(|p| p["name"].as_str().unwrap_or_default().to_string())
        .ok_or_else(|| {
            unavailable(
                "ServicePortError",
                format!(
                    "service/{} in {:?} is not listening on port {}",
                    service.name, service.namespace, service.port
                ),
            )
        })?;
    let endpoints = read(registry, "endpoints", service)
        .await
        .map_err(|e| unknown("EndpointsAccessError", service, &e))?
        .ok_or_else(|| {
            unavailable(
                "EndpointsNotFound",
                format!(
                    "cannot find endpoints for service/{} in {:?}",
                    service.name, service.namespace
                ),
            )
        })?;
    address_of(&endpoints, &port_name).ok_or_else(|| {
        unavailable(
            "MissingEndpoints",
            format!(
                "endpoints for service/{} in {:?} have no addresses with port name {port_name:?}",
                service.name, service.namespace
            ),
        )
    })
}

/// Resolves the Services webhooks name through their Endpoints, as [`resolve`] does.
pub struct EndpointServiceResolver {
    /// Weak: the registry's stores hold converters that hold this resolver. Set once,
    /// when the registry exists ([`EndpointServiceResolver::bind`]).
    registry: OnceLock<Weak<Registry>>,
}

impl EndpointServiceResolver {
    /// A resolver reading `registry`'s Services and Endpoints.
    pub fn new(registry: &Arc<Registry>) -> Self {
        let resolver = Self::unbound();
        resolver.bind(registry);
        resolver
    }

    /// A resolver for a registry still to be made (its compiled resources' converters
    /// need one): it resolves nothing until [`EndpointServiceResolver::bind`].
    pub fn unbound() -> Self {
        Self {
            registry: OnceLock::new(),
        }
    }

    /// Reads `registry` from now on (the first registry bound stays).
    pub fn bind(&self, registry: &Arc<Registry>) {
        let _ = self.registry.set(Arc::downgrade(registry));
    }
}

#[async_trait]
impl ServiceResolver for EndpointServiceResolver {
    async fn resolve(&self, namespace: &str, name: &str, port: u16) -> Result<SocketAddr, String> {
        let registry = self
            .registry
            .get()
            .and_then(Weak::upgrade)
            .ok_or("the server's registry is not ready, or is stopping")?;
        let service = ServiceRef {
            namespace: namespace.to_string(),
            name: name.to_string(),
            port,
        };
        resolve(&registry, &service).await.map_err(|a| a.message)
    }
}

/// The first ready address of `endpoints` with a port named `port_name`.
fn address_of(endpoints: &Value, port_name: &str) -> Option<SocketAddr> {
    endpoints["subsets"].as_array()?.iter().find_map(|subset| {
        let port = subset["ports"]
            .as_array()?
            .iter()
            .find(|p| p["name"].as_str().unwrap_or_default() == port_name)?["port"]
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())?;
        let ip = subset["addresses"].as_array()?.first()?["ip"].as_str()?;
        Some(SocketAddr::new(ip.parse().ok()?, port))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_address_with_the_named_port() {
        let endpoints = json!({"subsets": [
            {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "other", "port": 1}]},
            {"notReadyAddresses": [{"ip": "127.0.0.3"}], "ports": [{"name": "https", "port": 3}]},
            {"addresses": [{"ip": "::1"}], "ports": [{"name": "https", "port": 8443}]},
        ]});
        assert_eq!(
            address_of(&endpoints, "https"),
            Some("[::1]:8443".parse().unwrap())
        );
        assert_eq!(address_of(&endpoints, "none"), None);
        let unnamed =
            json!({"subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 9}]}]});
        assert_eq!(
            address_of(&unnamed, ""),
            Some("127.0.0.1:9".parse().unwrap())
        );
    }
}
