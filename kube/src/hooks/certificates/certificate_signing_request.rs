//! CertificateSigningRequests, as kube-apiserver's csr strategies
//! (`pkg/registry/certificates/certificates/strategy.go`) and
//! `pkg/apis/certificates/validation` treat them: no `metadata.generation`; on create
//! the status is emptied (no pre-approved requests), and the requester fields
//! (`username`, `uid`, `groups`, `extra`) are the caller's, written by
//! `crate::admission::csr_requester` (the strategy is not told the caller); the spec
//! never changes after create (an update
//! keeps the stored spec); the request must be a PEM `CERTIFICATE REQUEST`, the signer a
//! qualified `domain/path` name, the usages known ones, the conditions consistent.
//!
//! Deliberate differences from kube-apiserver:
//! - The requester fields are written at the end of mutating admission, where kube's
//!   strategy writes them, so a write that passes no admission (kapi's own) keeps
//!   what it says.
//! - The request is checked for its PEM block type only; the DER inside is not parsed
//!   and its signature is not checked. The bad value in the message is the request as
//!   sent (base64), where kube prints Go's `[]byte{...}`.
//! - The RequestedDuration column is an integer column in kapi's printer columns, so it
//!   shows the seconds (kube prints a duration such as `1h`), `<none>` when unset.
//! - [`validate_approval`] and [`prepare_approval`] are for the `/approval` subresource,
//!   which the server wires; the main resource's update ignores status changes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kapi_core::meta::{dns1123_label_errors, dns1123_subdomain_errors};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::certificates::v1::CertificateSigningRequestStatus;
use crate::generated::certificates_k8s_io::v1::CertificateSigningRequest;

/// kube's `allValidUsages`, sorted as `sets.List` sorts them.
const USAGES: &[&str] = &[
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// The signer kube's v1 API refuses.
const LEGACY_SIGNER: &str = "kubernetes.io/legacy-unknown";

/// The hooks of CertificateSigningRequest.
#[derive(Clone, Copy, Debug, Default)]
pub struct CertificateSigningRequestHooks;

/// `certificates.ParseCSR` as far as kapi checks it: the first PEM block of the decoded
/// request must be a `CERTIFICATE REQUEST` with a base64 body.
fn request_error(request: &str) -> Option<&'static str> {
    const MSG: &str = "PEM block type must be CERTIFICATE REQUEST";
    let Ok(bytes) = BASE64.decode(request.trim()) else {
        return Some(MSG);
    };
    let text = String::from_utf8_lossy(&bytes);
    let begin = "-----BEGIN CERTIFICATE REQUEST-----";
    let end = "-----END CERTIFICATE REQUEST-----";
    let Some(start) = text.find("-----BEGIN ") else {
        return Some(MSG);
    };
    let text = &text[start..];
    if !text.starts_with(begin) {
        return Some(MSG);
    }
    let Some(stop) = text.find(end) else {
        return Some(MSG);
    };
    let body: String = text[begin.len()..stop]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    match BASE64.decode(body) {
        Ok(der) if !der.is_empty() => None,
        _ => Some(MSG),
    }
}

/// `ValidateSignerName`.
fn signer_name_errors(name: &str, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return errs;
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() != 2 {
        errs.push(FieldError::invalid(
            path,
            name,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return errs;
    }
    let (domain, rest) = (segments[0], segments[1]);
    if domain.len() > 253 {
        errs.push(FieldError::too_long(path, 253));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for label in &labels {
        let msgs = dns1123_label_errors(label);
        if !msgs.is_empty() {
            for msg in msgs {
                errs.push(FieldError::invalid(
                    path,
                    domain,
                    format!("validating label {label:?}: {msg}"),
                ));
            }
            break;
        }
    }
    if labels.len() < 2 {
        errs.push(FieldError::invalid(
            path,
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    for component in rest.split('.') {
        let msgs = dns1123_subdomain_errors(component);
        if !msgs.is_empty() {
            for msg in msgs {
                errs.push(FieldError::invalid(
                    path,
                    rest,
                    format!("validating component {component:?}: {msg}"),
                ));
            }
            break;
        }
    }
    errs
}

/// `validateConditions`: types and statuses, Approved/Denied only True and never both.
fn validate_conditions(csr: &CertificateSigningRequest) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = FieldPath::new("status.conditions");
    let conditions = csr
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or(&[]);
    let mut seen = std::collections::BTreeSet::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions.iter().enumerate() {
        let p = path.index(i);
        if c.r#type.is_empty() {
            errs.push(FieldError::required(&p.child("type"), ""));
        }
        match c.r#type.as_str() {
            "Approved" | "Denied" => {
                if c.r#type == "Approved" {
                    approved = true;
                } else {
                    denied = true;
                }
                if c.status != "True" {
                    errs.push(FieldError::not_supported(
                        &p.child("status"),
                        c.status.as_str(),
                        &[Value::from("True")],
                    ));
                }
                if !seen.insert(c.r#type.clone()) {
                    errs.push(FieldError::duplicate(&p.child("type"), c.r#type.as_str()));
                }
            }
            "Failed" if !seen.insert(c.r#type.clone()) => {
                errs.push(FieldError::duplicate(&p.child("type"), c.r#type.as_str()));
            }
            _ => {}
        }
        if !matches!(c.r#type.as_str(), "Approved" | "Denied") {
            match c.status.as_str() {
                "" => errs.push(FieldError::required(&p.child("status"), "")),
                "True" | "False" | "Unknown" => {}
                other => errs.push(FieldError::not_supported(
                    &p.child("status"),
                    other,
                    &[
                        Value::from("False"),
                        Value::from("True"),
                        Value::from("Unknown"),
                    ],
                )),
            }
        }
    }
    if approved && denied {
        errs.push(FieldError::invalid(
            &path,
            "Approved",
            "Approved and Denied conditions are mutually exclusive",
        ));
    }
    errs
}

/// `ValidateCertificateSigningRequestCreate` for what the schema cannot say.
fn validate_csr(csr: &CertificateSigningRequest) -> ErrorList {
    let mut errs = ErrorList::new();
    let spec = FieldPath::new("spec");
    if let Some(msg) = request_error(&csr.spec.request) {
        errs.push(FieldError::invalid(
            &spec.child("request"),
            csr.spec.request.as_str(),
            msg,
        ));
    }
    let usages = csr.spec.usages.as_deref().unwrap_or(&[]);
    if usages.is_empty() {
        errs.push(FieldError::required(
            &spec.child("usages"),
            "usages must be provided",
        ));
    }
    let supported: Vec<Value> = USAGES.iter().map(|u| Value::from(*u)).collect();
    let mut seen = std::collections::BTreeSet::new();
    for (i, usage) in usages.iter().enumerate() {
        let p = spec.child("usages").index(i);
        if !USAGES.contains(&usage.as_str()) {
            errs.push(FieldError::not_supported(&p, usage.as_str(), &supported));
        } else if !seen.insert(usage.as_str()) {
            errs.push(FieldError::duplicate(&p, usage.as_str()));
        }
    }
    if csr.spec.signer_name == LEGACY_SIGNER {
        errs.push(FieldError::invalid(
            &spec.child("signerName"),
            LEGACY_SIGNER,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        errs.extend(signer_name_errors(
            &csr.spec.signer_name,
            &spec.child("signerName"),
        ));
    }
    if let Some(secs) = csr.spec.expiration_seconds {
        if secs < 600 {
            errs.push(FieldError::invalid(
                &spec.child("expirationSeconds"),
                secs,
                "may not specify a duration less than 600 seconds (10 minutes)",
            ));
        }
    }
    errs.extend(validate_conditions(csr));
    errs
}

fn has_condition(csr: &CertificateSigningRequest, kind: &str) -> bool {
    csr.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.r#type == kind))
}

/// What a write to `/approval` takes from the new object: only `status.conditions`
/// (kube's `csrApprovalStrategy.PrepareForUpdate`); everything else stays as stored.
pub fn prepare_approval(new: &mut CertificateSigningRequest, old: &CertificateSigningRequest) {
    let conditions = new.status.as_ref().and_then(|s| s.conditions.clone());
    let mut status = old.status.clone().unwrap_or_default();
    status.conditions = conditions;
    new.spec = old.spec.clone();
    new.status = Some(status);
}

/// Validation of a write to `/approval` (kube's
/// `ValidateCertificateSigningRequestApprovalUpdate`): the object must still be valid,
/// the conditions consistent (Approved and Denied only `True`, never both), and an
/// Approved or Denied condition, once set, may not be removed.
pub fn validate_approval(
    new: &CertificateSigningRequest,
    old: &CertificateSigningRequest,
) -> ErrorList {
    let mut errs = validate_csr(new);
    let path = FieldPath::new("status.conditions");
    for kind in ["Approved", "Denied"] {
        if has_condition(old, kind) && !has_condition(new, kind) {
            errs.push(FieldError::forbidden(
                &path,
                format!("updates may not remove a condition of type {kind:?}"),
            ));
        }
    }
    errs
}

/// kube's `extractCSRStatus`: `Approved,Issued`, `Denied`, `Pending`, `...,Failed`.
fn condition_cell(csr: &CertificateSigningRequest) -> String {
    let mut s = if has_condition(csr, "Denied") {
        "Denied".to_string()
    } else if has_condition(csr, "Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has_condition(csr, "Failed") {
        s.push_str(",Failed");
    }
    if csr
        .status
        .as_ref()
        .and_then(|s| s.certificate.as_deref())
        .is_some_and(|c| !c.is_empty())
    {
        s.push_str(",Issued");
    }
    s
}

impl Hooks<CertificateSigningRequest> for CertificateSigningRequestHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// `/approval`: only the Approved/Denied conditions come from the request.
    fn update_subresource(
        &self,
        sub: &str,
        new: &mut CertificateSigningRequest,
        old: &CertificateSigningRequest,
    ) -> bool {
        if sub != "approval" {
            return false;
        }
        prepare_approval(new, old);
        true
    }

    fn validate_subresource_update(
        &self,
        sub: &str,
        new: &CertificateSigningRequest,
        old: &CertificateSigningRequest,
    ) -> ErrorList {
        if sub == "approval" {
            validate_approval(new, old)
        } else {
            ErrorList::new()
        }
    }

    fn prepare_for_create(&self, csr: &mut CertificateSigningRequest) {
        csr.status = Some(CertificateSigningRequestStatus::default());
    }

    fn prepare_for_update(
        &self,
        new: &mut CertificateSigningRequest,
        old: &CertificateSigningRequest,
    ) {
        new.spec = old.spec.clone();
        new.status = old.status.clone();
    }

    fn validate(&self, csr: &CertificateSigningRequest) -> ErrorList {
        validate_csr(csr)
    }

    fn validate_update(
        &self,
        new: &CertificateSigningRequest,
        _old: &CertificateSigningRequest,
    ) -> ErrorList {
        validate_csr(new)
    }

    fn table_cell(&self, column: &str, csr: &CertificateSigningRequest) -> Option<Value> {
        match column {
            "Requestor" => Some(Value::String(csr.spec.username.clone().unwrap_or_default())),
            "Condition" => Some(Value::String(condition_cell(csr))),
            _ => None,
        }
    }
}
