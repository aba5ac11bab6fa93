//! The certificates.k8s.io API group: CertificateSigningRequests
//! ([`certificate_signing_request`]), with their `/approval` subresource.

mod certificate_signing_request;

pub use certificate_signing_request::{
    CertificateSigningRequestHooks, prepare_approval, validate_approval,
};
