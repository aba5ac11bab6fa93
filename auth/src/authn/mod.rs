//! Authentication: turning a request's credentials into a [`UserInfo`](crate::UserInfo).
//!
//! Each authenticator answers for one kind of credential; the server tries them in
//! kube-apiserver's order (a front proxy's headers, the client certificate, then bearer
//! tokens) and refuses a request whose credential none accepts.

pub mod request_header;
pub mod service_account;
pub mod token_file;
pub mod x509;

pub use request_header::{RequestHeaderNames, set_proxy_headers};
pub use service_account::{ServiceAccountClaims, ServiceAccountTokens, TokenError};
pub use token_file::TokenFile;
