//! The feed: one list of the cached prefix, then one watch from the list's revision,
//! applied to the cache event by event, as kube-apiserver's reflector feeds its
//! `watchCache`.
//!
//! When the inner watch fails or ends, the cache still holds a complete state at its
//! revision, so the feed watches again from that revision (after a backoff): no re-list,
//! and the cache's own watchers see no gap. Only `Expired` (the inner storage compacted
//! past the cache's revision) forces a re-list, which cuts every watcher off. While the
//! feed has no live inner watch the cache is not ready, and reads go to the inner
//! storage.
//!
//! Beside it, in the same task, the sweeper trims the event window on a timer (every
//! [`super::CacherConfig::sweep_interval`]) and whenever an encoding takes it over a
//! byte budget, so that age and compaction free memory when nothing is written.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::time::Instant;

use super::Shared;
use crate::interface::StorageError;
use crate::interface::{KeyValue, ListRequest, ReadAt, Revision, WatchItem};

/// How one run of list-and-watch ended.
struct Failure {
    error: StorageError,
    /// Whether the inner watch delivered anything before failing (the backoff restarts).
    progressed: bool,
}

/// Runs the feed and the sweeper until the cacher is closed.
pub(super) async fn run(shared: Arc<Shared>) {
    tokio::select! {
        () = feed(&shared) => {}
        () = sweep(&shared) => {}
    }
}

/// Trims the window every sweep interval, or at once when it went over a budget;
/// every compaction check interval (while the window holds events) it first asks the
/// inner storage how far it compacted. Runs until cancelled.
async fn sweep(shared: &Shared) {
    let config = &shared.config;
    let mut tick = tokio::time::interval(config.sweep_interval.max(MIN_SWEEP_INTERVAL));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut checked_compaction = Instant::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shared.account.over_budget.notified() => {}
        }
        let now = Instant::now();
        let mut compacted = None;
        if now.saturating_duration_since(checked_compaction) >= config.compaction_check_interval
            && shared.read().state.window_len() > 0
        {
            checked_compaction = now;
            match shared.inner.compacted_revision().await {
                Ok(revision) => compacted = Some(revision),
                Err(error) => {
                    tracing::debug!(prefix = %shared.prefix, %error, "watch cache: compacted revision")
                }
            }
        }
        shared.trim(Instant::now(), compacted);
    }
}

/// The shortest sweep interval taken: a zero one would spin.
const MIN_SWEEP_INTERVAL: Duration = Duration::from_millis(10);

/// Lists and watches until the cacher is closed.
async fn feed(shared: &Shared) {
    let mut closed = shared.closed.subscribe();
    let min = shared.config.min_backoff;
    let mut backoff = min;
    loop {
        // Resume from the cache's revision unless it must (re-)list.
        let resume = shared.resume_revision();
        let failure = tokio::select! {
            _ = closed.wait_for(|closed| *closed) => return,
            failure = run_once(shared, resume) => failure,
        };
        shared.set_ready(false);
        if failure.progressed {
            backoff = min;
        }
        let expired = matches!(failure.error, StorageError::Expired { .. });
        if expired {
            shared.needs_relist();
        }
        tracing::warn!(
            prefix = %shared.prefix,
            error = %failure.error,
            "watch cache lost its inner watch; {}",
            if expired { "re-listing" } else { "watching again" }
        );
        // A healthy watch that ran out of history re-lists at once; anything else
        // waits, so a failing inner storage is not hammered.
        if expired && failure.progressed {
            continue;
        }
        tokio::select! {
            _ = closed.wait_for(|closed| *closed) => return,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(shared.config.max_backoff.max(min));
    }
}

/// Lists (when `resume` is `None`) and watches until the inner watch fails or ends.
async fn run_once(shared: &Shared, resume: Option<Revision>) -> Failure {
    let fail = |error| Failure {
        error,
        progressed: false,
    };
    let from = match resume {
        Some(revision) => revision,
        None => match list_all(shared).await {
            Ok((items, revision)) => {
                shared.reset(items, revision);
                revision
            }
            Err(error) => return fail(error),
        },
    };
    let watch = shared
        .inner
        .watch_with_progress(&shared.prefix, from, &shared.progress);
    let mut stream = match watch.await {
        Ok(stream) => stream,
        Err(error) => return fail(error),
    };
    if resume.is_some() {
        super::bump(&shared.stats.rewatches, 1);
    }
    shared.set_ready(true);
    let mut progressed = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(WatchItem::Event(event)) => shared.apply(event),
            Ok(WatchItem::Progress(revision)) => shared.advance(revision),
            Err(error) => return Failure { error, progressed },
        }
        progressed = true;
    }
    Failure {
        error: StorageError::Unavailable {
            message: "the inner watch ended".to_string(),
            source: None,
        },
        progressed,
    }
}

/// Every key under the prefix at one revision, read in pages.
async fn list_all(shared: &Shared) -> Result<(Vec<KeyValue>, Revision), StorageError> {
    let page_size = shared.config.list_page_size.max(1);
    let mut request = ListRequest {
        prefix: shared.prefix.clone(),
        read_at: ReadAt::Latest,
        start_key: None,
        limit: Some(page_size),
    };
    let first = shared.inner.list(&request).await?;
    let revision = first.revision;
    let mut remaining = first.remaining;
    let mut items = first.items;
    // The later pages are read at the first one's revision: one consistent snapshot.
    request.read_at = ReadAt::Exact(revision);
    while remaining > 0 {
        let Some(last) = items.last() else { break };
        request.start_key = Some(format!("{}\0", last.key));
        let page = shared.inner.list(&request).await?;
        if page.items.is_empty() {
            break;
        }
        remaining = page.remaining;
        items.extend(page.items);
    }
    Ok((items, revision))
}

/// The default bounds of the feed's backoff.
pub(super) const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// See [`MIN_BACKOFF`].
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(5);
