//! etcd's errors, mapped into [`StorageError`].
//!
//! Transport failures, timeouts and an unavailable cluster become `Unavailable` (a 5xx
//! the client may retry); a read at a compacted or future revision is recognised by its
//! message (etcd sends both as `OutOfRange`); anything else is `Internal`.

use crate::interface::StorageError;

/// What an etcd error means to a caller.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// "mvcc: required revision has been compacted".
    Compacted,
    /// "mvcc: required revision is a future revision".
    FutureRevision,
    /// The request never left: connecting to the endpoint failed (safe to retry, even
    /// a write).
    NotSent,
    /// The cluster cannot be reached or did not answer in time.
    Unavailable,
    /// Anything else.
    Other,
}

/// gRPC status codes that mean "try again later" (tonic's `Code` as numbers, since the
/// crate does not depend on tonic directly).
const CANCELLED: i32 = 1;
const UNKNOWN: i32 = 2;
const DEADLINE_EXCEEDED: i32 = 4;
const RESOURCE_EXHAUSTED: i32 = 8;
const ABORTED: i32 = 10;
const UNAVAILABLE: i32 = 14;

/// Classifies an etcd error.
pub(super) fn kind(error: &etcd_client::Error) -> Kind {
    match error {
        etcd_client::Error::GRpcStatus(status) => {
            let message = status.message();
            if message.contains("required revision has been compacted") {
                Kind::Compacted
            } else if message.contains("required revision is a future revision") {
                Kind::FutureRevision
            } else if status.code() as i32 == UNAVAILABLE && is_connect_error(message) {
                Kind::NotSent
            } else {
                match status.code() as i32 {
                    CANCELLED | UNKNOWN | DEADLINE_EXCEEDED | RESOURCE_EXHAUSTED | ABORTED
                    | UNAVAILABLE => Kind::Unavailable,
                    _ => Kind::Other,
                }
            }
        }
        etcd_client::Error::TransportError(_)
        | etcd_client::Error::IoError(_)
        | etcd_client::Error::WatchError(_) => Kind::Unavailable,
        _ => Kind::Other,
    }
}

/// Whether a transport message says the connection could not be made (hyper's
/// "tcp connect error", "error trying to connect"): then no byte of the request was sent.
fn is_connect_error(message: &str) -> bool {
    message.contains("connect error") || message.contains("error trying to connect")
}

/// Maps an etcd error that is not about revisions.
pub(super) fn map(error: etcd_client::Error) -> StorageError {
    match kind(&error) {
        Kind::NotSent | Kind::Unavailable => {
            StorageError::unavailable("etcd is unavailable", error)
        }
        _ => StorageError::internal("etcd request failed", error),
    }
}

/// A key or value etcd returned that kapi cannot have written.
pub(super) fn bad_key(key: &[u8]) -> StorageError {
    StorageError::Internal {
        message: format!("etcd returned a key that is not UTF-8: {key:?}"),
        source: None,
    }
}

/// The error for calls after [`super::EtcdStorage::close`].
pub(super) fn closed() -> StorageError {
    StorageError::Unavailable {
        message: "etcd storage is closed".to_string(),
        source: None,
    }
}
