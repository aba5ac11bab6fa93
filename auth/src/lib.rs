//! # kapi-auth
//!
//! Who is asking, and what they may do, as kube-apiserver decides it:
//!
//! - [`user`]: the authenticated user (`user.Info`): name, uid, groups, extra.
//! - [`authn`]: authenticators that turn a request's credentials into a user: bearer
//!   tokens from a token file, x509 client certificates, ServiceAccount tokens.
//! - [`authz`]: the attributes of a request (verb, group, resource, subresource, name,
//!   namespace, or a non-resource path) and the RBAC authorizer over
//!   `rbac.authorization.k8s.io/v1` objects, with privilege-escalation checks and the
//!   bootstrap policy.
//! - [`audit`]: the audit log (`audit.k8s.io/v1` `Policy` and `Event`), as JSON lines.
//!
//! Nothing here does I/O on requests or storage; the server feeds it what it has read.
//! It must not know HTTP, the registry or how objects are stored, and of the resources
//! it knows only those its decisions are made of: the RBAC kinds and the users'
//! ServiceAccounts.

pub mod audit;
pub mod authn;
pub mod authz;
pub mod user;

pub use user::UserInfo;
