//! CertificateSigningRequests: status and approval.

use kapi_core::Hooks;

use crate::generated::certificates_k8s_io::v1::CertificateSigningRequest;

/// The hooks of CertificateSigningRequest.
#[derive(Clone, Copy, Debug, Default)]
pub struct CertificateSigningRequestHooks;

impl Hooks<CertificateSigningRequest> for CertificateSigningRequestHooks {}
