//! The inner storage's current revision for consistent reads, one read shared by every
//! caller waiting for it, as kube-apiserver 1.31's cacher reads etcd's revision before
//! it serves a consistent list from memory.
//!
//! A caller may only use a read that began after the caller did (what it reads must
//! include every write that finished before it asked). So callers arriving while a read
//! is in flight wait for the next one, and one read answers all of them: at most one
//! read in flight, one batch waiting. On etcd that turns many quorum reads at once into
//! one, each still linearizable.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use crate::interface::{Revision, Storage};

/// One cacher's revision reads.
#[derive(Debug, Default)]
pub(super) struct RevisionReads {
    batch: Mutex<Batch>,
}

#[derive(Debug, Default)]
struct Batch {
    /// Whether the reading task runs.
    running: bool,
    /// The callers the next read answers.
    waiting: Vec<oneshot::Sender<Option<Revision>>>,
}

impl RevisionReads {
    /// The inner storage's current revision, read after this call began; `None` when
    /// the read failed (the caller then reads the inner storage itself, which reports
    /// the failure).
    pub(super) async fn current(self: &Arc<Self>, inner: &Arc<dyn Storage>) -> Option<Revision> {
        let (answer, answered) = oneshot::channel();
        let start = {
            let mut batch = self.batch.lock().unwrap_or_else(PoisonError::into_inner);
            batch.waiting.push(answer);
            !std::mem::replace(&mut batch.running, true)
        };
        if start {
            // A task of its own: a caller that goes away must not strand the others.
            tokio::spawn(self.clone().run(inner.clone()));
        }
        answered.await.ok().flatten()
    }

    /// Reads for each batch in turn until nobody waits.
    async fn run(self: Arc<Self>, inner: Arc<dyn Storage>) {
        loop {
            let batch = {
                let mut batch = self.batch.lock().unwrap_or_else(PoisonError::into_inner);
                if batch.waiting.is_empty() {
                    batch.running = false;
                    return;
                }
                std::mem::take(&mut batch.waiting)
            };
            let revision = match inner.current_revision().await {
                Ok(revision) => Some(revision),
                Err(error) => {
                    tracing::debug!(%error, "watch cache: current revision");
                    None
                }
            };
            for answer in batch {
                let _ = answer.send(revision);
            }
        }
    }
}
