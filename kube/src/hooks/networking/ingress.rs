//! Ingresses, as kube-apiserver's networking strategy, validation and printer treat
//! them: generation tracked (the generic preparation does it).
//!
//! An Ingress needs rules or a default backend; rule hosts are DNS names (a leading
//! `*.` wildcard allowed), never IP addresses; each HTTP path needs a `pathType` of
//! Exact, Prefix or ImplementationSpecific, and Exact and Prefix paths are absolute; a
//! backend is a service (a name and a port name or number, not both) or a resource,
//! not both. Its columns: Class (`<none>`), Hosts (`*`, at most three then `+ N
//! more...`), Address (load balancer IPs or hostnames), Ports (`80`, `80, 443` with
//! TLS).
//!
//! Deliberate differences from kube-apiserver:
//! - The bad value of `either defaultBackend or rules must be specified` is printed as
//!   `null` (kube prints Go's `[]networking.IngressRule(nil)`).
//! - Ingress path characters, TLS hosts and `ingressClassName` existence are not
//!   validated beyond the schema.

use std::net::IpAddr;

use kapi_core::meta::dns1123_subdomain_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::networking::v1::IngressBackend;
use crate::generated::networking_k8s_io::v1::Ingress;
use crate::hooks::core::service::{PORT_RANGE, load_balancer_address, port_name_errors};

/// The hooks of Ingress.
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressHooks;

/// `validateIngressBackend`.
fn validate_backend(backend: &IngressBackend, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    match (&backend.resource, &backend.service) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(_), None) => {}
        (None, Some(svc)) => {
            let svc_path = path.child("service");
            if svc.name.is_empty() {
                errs.push(FieldError::required(&svc_path.child("name"), ""));
            } else {
                for msg in dns1123_subdomain_errors(&svc.name) {
                    errs.push(FieldError::invalid(
                        &svc_path.child("name"),
                        svc.name.as_str(),
                        msg,
                    ));
                }
            }
            let port = svc.port.clone().unwrap_or_default();
            let name = port.name.unwrap_or_default();
            let number = port.number.unwrap_or(0);
            let port_path = svc_path.child("port");
            if !name.is_empty() && number != 0 {
                errs.push(FieldError::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                ));
            } else if !name.is_empty() {
                for msg in port_name_errors(&name) {
                    errs.push(FieldError::invalid(
                        &port_path.child("name"),
                        name.as_str(),
                        msg,
                    ));
                }
            } else if number != 0 {
                if !(1..=65535).contains(&number) {
                    errs.push(FieldError::invalid(
                        &port_path.child("number"),
                        number,
                        PORT_RANGE,
                    ));
                }
            } else {
                errs.push(FieldError::required(
                    path,
                    "port name or number is required",
                ));
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errs
}

/// A rule host: a DNS subdomain, optionally with a leading `*.`, and not an IP.
fn host_errors(host: &str, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if host.parse::<IpAddr>().is_ok() {
        errs.push(FieldError::invalid(
            path,
            host,
            "must be a DNS name, not an IP address",
        ));
        return errs;
    }
    let msgs = match host.strip_prefix("*.") {
        Some(rest) => dns1123_subdomain_errors(rest)
            .into_iter()
            .map(|_| {
                "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid \
                 DNS subdomain, which must consist of lower case alphanumeric characters, \
                 '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', \
                 regex used for validation is \
                 '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                    .to_string()
            })
            .take(1)
            .collect(),
        None => dns1123_subdomain_errors(host),
    };
    for msg in msgs {
        errs.push(FieldError::invalid(path, host, msg));
    }
    errs
}

fn validate_ingress(ing: &Ingress) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = FieldPath::new("spec");
    let spec = ing.spec.clone().unwrap_or_default();
    let rules = spec.rules.as_deref().unwrap_or(&[]);
    if rules.is_empty() && spec.default_backend.is_none() {
        errs.push(FieldError::invalid(
            &path,
            Value::Null,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(b) = &spec.default_backend {
        errs.extend(validate_backend(b, &path.child("defaultBackend")));
    }
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = path.child("rules").index(i);
        if let Some(host) = rule.host.as_deref().filter(|h| !h.is_empty()) {
            errs.extend(host_errors(host, &rule_path.child("host")));
        }
        let Some(http) = &rule.http else {
            continue;
        };
        let paths_path = rule_path.child("http").child("paths");
        if http.paths.is_empty() {
            errs.push(FieldError::required(&paths_path, ""));
        }
        for (j, p) in http.paths.iter().enumerate() {
            let p_path = paths_path.index(j);
            let value = p.path.as_deref().unwrap_or("");
            match p.path_type.as_str() {
                "" => errs.push(FieldError::required(
                    &p_path.child("pathType"),
                    "pathType must be specified",
                )),
                "Exact" | "Prefix" => {
                    if !value.starts_with('/') {
                        errs.push(FieldError::invalid(
                            &p_path.child("path"),
                            value,
                            "must be an absolute path",
                        ));
                    }
                }
                "ImplementationSpecific" => {
                    if !value.is_empty() && !value.starts_with('/') {
                        errs.push(FieldError::invalid(
                            &p_path.child("path"),
                            value,
                            "must be an absolute path",
                        ));
                    }
                }
                other => errs.push(FieldError::not_supported(
                    &p_path.child("pathType"),
                    other,
                    &[
                        Value::from("Exact"),
                        Value::from("ImplementationSpecific"),
                        Value::from("Prefix"),
                    ],
                )),
            }
            errs.extend(validate_backend(&p.backend, &p_path.child("backend")));
        }
    }
    if let Some(class) = spec.ingress_class_name.as_deref() {
        for msg in dns1123_subdomain_errors(class) {
            errs.push(FieldError::invalid(
                &path.child("ingressClassName"),
                class,
                msg,
            ));
        }
    }
    errs
}

/// kube's `formatHosts`.
fn hosts(ing: &Ingress) -> String {
    let rules = ing
        .spec
        .as_ref()
        .and_then(|s| s.rules.as_deref())
        .unwrap_or(&[]);
    const MAX: usize = 3;
    let mut list = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        if let Some(h) = rule.host.as_deref().filter(|h| !h.is_empty()) {
            if !more {
                list.push(h.to_string());
            }
        }
    }
    if list.is_empty() {
        return "*".into();
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", rules.len() - MAX)
    } else {
        ret
    }
}

impl Hooks<Ingress> for IngressHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, ing: &Ingress) -> ErrorList {
        validate_ingress(ing)
    }

    /// kube's `WarningsOnCreate`: the class annotation without the class field.
    fn warnings_on_create(&self, ing: &Ingress) -> Vec<String> {
        let annotation = "kubernetes.io/ingress.class";
        let annotated = ing
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(annotation));
        let classed = ing
            .spec
            .as_ref()
            .is_some_and(|s| s.ingress_class_name.is_some());
        if annotated && !classed {
            vec![format!(
                "annotation {annotation:?} is deprecated, please use 'spec.ingressClassName' instead"
            )]
        } else {
            Vec::new()
        }
    }

    fn validate_update(&self, new: &Ingress, _old: &Ingress) -> ErrorList {
        validate_ingress(new)
    }

    fn table_cell(&self, column: &str, ing: &Ingress) -> Option<Value> {
        let spec = ing.spec.clone().unwrap_or_default();
        let cell = match column {
            "Class" => spec
                .ingress_class_name
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| "<none>".into()),
            "Hosts" => hosts(ing),
            "Address" => ing
                .status
                .as_ref()
                .and_then(|s| s.load_balancer.as_ref())
                .and_then(|lb| lb.ingress.as_ref())
                .into_iter()
                .flatten()
                .filter_map(|i| load_balancer_address(i.ip.as_ref(), i.hostname.as_ref()))
                .collect::<Vec<_>>()
                .join(","),
            "Ports" => {
                if spec.tls.as_ref().is_some_and(|t| !t.is_empty()) {
                    "80, 443".into()
                } else {
                    "80".into()
                }
            }
            _ => return None,
        };
        Some(Value::String(cell))
    }
}
