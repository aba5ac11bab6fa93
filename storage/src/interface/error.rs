//! The backend-neutral storage error. Backends map their own errors (redb's, etcd's)
//! into it inside their module; the API layer translates it into a `Status` in one place.

use super::{KeyValue, Revision};

/// Why a storage operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The key does not exist.
    #[error("key not found: {key}")]
    NotFound {
        /// The key.
        key: String,
    },
    /// A create found the key already there.
    #[error("key already exists: {key}")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// A compare-and-swap found another revision than the one expected.
    #[error("revision conflict on {key}")]
    Conflict {
        /// The key.
        key: String,
        /// The key's current state, when the backend read it in the same transaction.
        current: Option<Box<KeyValue>>,
    },
    /// The revision asked for was compacted away (the API's 410 Gone, reason Expired).
    #[error("revision {requested} has been compacted (oldest available is {compacted})")]
    Expired {
        /// The revision asked for.
        requested: Revision,
        /// The compacted revision.
        compacted: Revision,
    },
    /// The revision asked for is newer than the store's current one.
    #[error("revision {requested} is newer than the current revision {current}")]
    TooLargeRevision {
        /// The revision asked for.
        requested: Revision,
        /// The store's current revision.
        current: Revision,
    },
    /// The backend cannot be reached or timed out (etcd down): a 5xx for the request.
    #[error("storage unavailable: {message}")]
    Unavailable {
        /// What went wrong, for logs.
        message: String,
        /// The backend's own error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The backend failed in a way retrying will not fix (corrupt data, I/O error).
    #[error("storage failure: {message}")]
    Internal {
        /// What went wrong, for logs.
        message: String,
        /// The backend's own error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl StorageError {
    /// An [`StorageError::Internal`] from a backend error.
    pub fn internal(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Internal {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// An [`StorageError::Unavailable`] from a backend error.
    pub fn unavailable(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Unavailable {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}
