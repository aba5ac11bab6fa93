//! ServiceCIDRs, as kube-apiserver's strategy (`pkg/registry/networking/servicecidr/
//! strategy.go`), validation (`ValidateServiceCIDR`, `ValidateServiceCIDRUpdate` in
//! `pkg/apis/networking/validation`) and printer (`printServiceCIDR` in
//! `pkg/printers/internalversion`) treat them: no `metadata.generation`, no defaults;
//! status is written only through `/status` (kapi's generic status subresource: the
//! main resource keeps the stored status, `/status` keeps the stored spec).
//!
//! Checks: `spec.cidrs` holds one or two CIDRs, each valid, written strictly and in
//! canonical form (apimachinery's `IsValidCIDR`: `10.0.0.0/24`, not `10.0.0.1/24` or
//! `2001:DB8::/64`), two of them of different IP families. On update (kube 1.33 on) a
//! CIDR may not change, except that a single-CIDR ServiceCIDR may gain a second one of
//! the other family (becoming dual-stack).
//!
//! Column, as kube's `printServiceCIDR`: CIDRs, joined by commas.
//!
//! The default ServiceCIDR `kubernetes`, from `--service-cluster-ip-range`, is created at
//! start by `crate::bootstrap::ensure_service_cidr`.
//!
//! Deliberate differences from kube-apiserver: values that kube prints with Go's `%#v`
//! (the spec, the list of CIDRs) are printed as JSON in messages.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::ip_address::{is_ipv4, strict_cidr_errors};
use crate::generated::networking_k8s_io::v1::ServiceCIDR;
use crate::hooks::ip::parse_cidr_sloppy;

/// The hooks of ServiceCIDR.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceCidrHooks;

/// kube's message for two CIDRs of one family.
const ONE_PER_FAMILY: &str =
    "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64";

/// `spec.cidrs`, empty when unset.
fn cidrs(cidr: &ServiceCIDR) -> &[String] {
    cidr.spec
        .as_ref()
        .and_then(|s| s.cidrs.as_deref())
        .unwrap_or(&[])
}

/// `spec.cidrs` as a JSON value, for messages.
fn cidrs_value(list: &[String]) -> Value {
    Value::from(list.to_vec())
}

/// Whether a CIDR is IPv4 (`Some(true)`), IPv6 (`Some(false)`) or not one
/// (`netutils.IPFamilyOfCIDRString`).
fn family(cidr: &str) -> Option<bool> {
    parse_cidr_sloppy(cidr).map(|(ip, _)| is_ipv4(ip))
}

/// kube's `validateServiceCIDRSpec`.
fn spec_errors(cidr: &ServiceCIDR) -> ErrorList {
    let path = FieldPath::new("spec").child("cidrs");
    let list = cidrs(cidr);
    let mut errs = ErrorList::new();
    if list.is_empty() {
        errs.push(FieldError::required(&path, "at least one CIDR required"));
        return errs;
    }
    if list.len() > 2 {
        let spec = serde_json::to_value(&cidr.spec).unwrap_or(Value::Null);
        errs.push(FieldError::invalid(
            &path,
            spec,
            "may only hold up to 2 values",
        ));
        return errs;
    }
    for (i, c) in list.iter().enumerate() {
        for msg in strict_cidr_errors(c) {
            errs.push(FieldError::invalid(&path.index(i), c.as_str(), msg));
        }
    }
    if let [a, b] = list {
        if family(a).is_some() && family(a) == family(b) {
            errs.push(FieldError::invalid(
                &path,
                cidrs_value(list),
                ONE_PER_FAMILY,
            ));
        }
    }
    errs
}

/// kube's `ValidateServiceCIDRUpdate`, for `spec.cidrs`.
fn update_errors(new: &[String], old: &[String]) -> ErrorList {
    let path = FieldPath::new("spec").child("cidrs");
    let immutable = "field is immutable";
    let mut errs = ErrorList::new();
    if new.len() == old.len() {
        for (i, (n, o)) in new.iter().zip(old).enumerate() {
            if n != o {
                errs.push(FieldError::invalid(&path.index(i), n.as_str(), immutable));
            }
        }
    } else if old.len() == 1 && new.len() == 2 {
        // Turning dual-stack is allowed (kubernetes#131261); the first CIDR stays, and
        // the new spec as a whole was checked by `spec_errors`.
        if new[0] != old[0] {
            errs.push(FieldError::invalid(
                &path.index(0),
                new[0].as_str(),
                immutable,
            ));
        }
    } else {
        errs.push(FieldError::invalid(&path, cidrs_value(new), immutable));
    }
    errs
}

impl Hooks<ServiceCIDR> for ServiceCidrHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, cidr: &ServiceCIDR) -> ErrorList {
        spec_errors(cidr)
    }

    fn validate_update(&self, new: &ServiceCIDR, old: &ServiceCIDR) -> ErrorList {
        let mut errs = spec_errors(new);
        errs.extend(update_errors(cidrs(new), cidrs(old)));
        errs
    }

    fn table_cell(&self, column: &str, cidr: &ServiceCIDR) -> Option<Value> {
        (column == "CIDRs").then(|| Value::String(cidrs(cidr).join(",")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn updates() {
        let one = strings(&["10.0.0.0/24"]);
        let dual = strings(&["10.0.0.0/24", "2001:db8::/64"]);
        assert!(update_errors(&dual, &one).is_empty());
        assert!(update_errors(&one, &one).is_empty());
        assert_eq!(update_errors(&strings(&["10.1.0.0/24"]), &one).len(), 1);
        assert_eq!(update_errors(&one, &dual).len(), 1);
    }
}
