//! Endpoints, as kube-apiserver's endpoints strategy and printer (`printEndpoints` in
//! `pkg/printers/internalversion`) treat them: no `metadata.generation`; address IPs and
//! port numbers are checked; the Endpoints column is formatted as kube formats it.

use std::net::IpAddr;

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::core::v1::Endpoints;
use crate::hooks::ip::ip_warning;

use super::service::{INVALID_IP, port_num_errors};

/// The hooks of `core/v1` Endpoints: no generation; the Endpoints column as kube's
/// `formatEndpoints` prints it (`ip:port`, at most three, then `+ N more...`).
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointsHooks;

/// kube's `formatEndpoints` over every port.
fn format_endpoints(ep: &Endpoints) -> String {
    let subsets = ep.subsets.as_deref().unwrap_or(&[]);
    if subsets.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 3;
    let mut list = Vec::new();
    let mut count = 0;
    let mut more = false;
    let mut push = |s: String, list: &mut Vec<String>| {
        if list.len() == MAX {
            more = true;
        } else {
            list.push(s);
        }
    };
    for ss in subsets {
        let addresses = ss.addresses.as_deref().unwrap_or(&[]);
        let ports = ss.ports.as_deref().unwrap_or(&[]);
        if ports.is_empty() {
            count += addresses.len();
            for a in addresses {
                push(a.ip.clone(), &mut list);
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for a in addresses {
                let host = if a.ip.contains(':') {
                    format!("[{}]", a.ip)
                } else {
                    a.ip.clone()
                };
                push(format!("{host}:{}", port.port), &mut list);
            }
        }
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", count - MAX)
    } else {
        ret
    }
}

/// kube's `endpointsWarnings`, which trusts the Endpoints its controller writes.
fn address_warnings(ep: &Endpoints) -> Vec<String> {
    let managed_by = ep
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("endpoints.kubernetes.io/managed-by"));
    if managed_by.is_some_and(|m| m == "endpoint-controller") {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for (i, ss) in ep.subsets.iter().flatten().enumerate() {
        let lists = [
            ("addresses", ss.addresses.as_deref()),
            ("notReadyAddresses", ss.not_ready_addresses.as_deref()),
        ];
        for (list, addresses) in lists {
            for (j, a) in addresses.unwrap_or_default().iter().enumerate() {
                let path = format!("subsets[{i}].{list}[{j}].ip");
                warnings.extend(ip_warning(&path, &a.ip));
            }
        }
    }
    warnings
}

impl Hooks<Endpoints> for EndpointsHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn warnings_on_create(&self, ep: &Endpoints) -> Vec<String> {
        address_warnings(ep)
    }

    fn warnings_on_update(&self, new: &Endpoints, _old: &Endpoints) -> Vec<String> {
        address_warnings(new)
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, ep: &Endpoints) -> ErrorList {
        let mut errs = ErrorList::new();
        for (i, ss) in ep.subsets.iter().flatten().enumerate() {
            let path = FieldPath::new("subsets").index(i);
            for (j, a) in ss.addresses.iter().flatten().enumerate() {
                if a.ip.parse::<IpAddr>().is_err() {
                    errs.push(FieldError::invalid(
                        &path.child("addresses").index(j).child("ip"),
                        a.ip.as_str(),
                        INVALID_IP,
                    ));
                }
            }
            for (j, p) in ss.ports.iter().flatten().enumerate() {
                for msg in port_num_errors(p.port) {
                    errs.push(FieldError::invalid(
                        &path.child("ports").index(j).child("port"),
                        p.port,
                        msg,
                    ));
                }
            }
        }
        errs
    }

    fn table_cell(&self, column: &str, ep: &Endpoints) -> Option<Value> {
        (column == "Endpoints").then(|| Value::String(format_endpoints(ep)))
    }
}
