//! Sending requests to etcd: the KV client, and the retries of a request (or of opening
//! a watch) while etcd cannot be reached, within the request timeout.

use std::future::Future;
use std::sync::atomic::Ordering;

use etcd_client::{KvClient, WatchOptions};
use tokio::time::Instant;

use super::EtcdStorage;
use super::error::{Kind, closed, kind, map};
use crate::interface::Result;

/// How many times a request whose connection was refused is sent again at once
/// before [`EtcdStorage::call`] backs off: with one endpoint of several down, each try
/// may reach a live one.
const IMMEDIATE_REPICKS: u32 = 8;

/// The largest reply read from etcd: etcd-client's default of 4 MB made an unpaged list
/// of more than 4 MB of objects (or a cache page of large ones) fail; kube-apiserver
/// sets `MaxCallRecvMsgSize` to the same `math.MaxInt32`.
const MAX_REPLY: usize = i32::MAX as usize;

impl EtcdStorage {
    pub(super) fn kv(&self) -> Result<KvClient> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        Ok(self
            .shared
            .client
            .kv_client()
            .max_decoding_message_size(MAX_REPLY))
    }

    /// Runs a request, retrying with backoff until the request timeout passes: any
    /// request whose connection failed (it was never sent; with several endpoints the
    /// client may pick a dead one), and idempotent ones (reads) on any unavailability.
    pub(super) async fn call<T, F, Fut>(
        &self,
        idempotent: bool,
        mut request: F,
    ) -> std::result::Result<T, etcd_client::Error>
    where
        F: FnMut(KvClient) -> Fut,
        Fut: Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        let deadline = Instant::now() + self.shared.config.request_timeout;
        let mut backoff = self.shared.config.initial_backoff;
        let mut repicks = 0;
        loop {
            match request(
                self.shared
                    .client
                    .kv_client()
                    .max_decoding_message_size(MAX_REPLY),
            )
            .await
            {
                // A refused connection fails at once, and the balancer may pick a live
                // endpoint next time: try again without waiting, a few times, before
                // backing off (as clientv3 moves on to the next endpoint).
                Err(error) if kind(&error) == Kind::NotSent && repicks < IMMEDIATE_REPICKS => {
                    tracing::debug!(%error, "etcd endpoint unreachable; trying another");
                    repicks += 1;
                }
                Err(error)
                    if (kind(&error) == Kind::NotSent
                        || (idempotent && kind(&error) == Kind::Unavailable))
                        && Instant::now() + backoff < deadline =>
                {
                    tracing::debug!(%error, "etcd request failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(self.shared.config.max_backoff);
                }
                result => return result,
            }
        }
    }

    /// An idempotent read: see [`EtcdStorage::call`].
    pub(super) async fn read<T, F, Fut>(
        &self,
        request: F,
    ) -> std::result::Result<T, etcd_client::Error>
    where
        F: FnMut(KvClient) -> Fut,
        Fut: Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        self.call(true, request).await
    }

    /// Opens an etcd watch stream, retrying like a read (opening a watch changes
    /// nothing).
    pub(super) async fn open_watch(
        &self,
        key: Vec<u8>,
        options: WatchOptions,
    ) -> Result<etcd_client::WatchStream> {
        let deadline = Instant::now() + self.shared.config.request_timeout;
        let mut backoff = self.shared.config.initial_backoff;
        loop {
            let mut client = self
                .shared
                .client
                .watch_client()
                .max_decoding_message_size(MAX_REPLY);
            match client.watch(key.clone(), Some(options.clone())).await {
                Err(error)
                    if matches!(kind(&error), Kind::NotSent | Kind::Unavailable)
                        && Instant::now() + backoff < deadline =>
                {
                    tracing::debug!(%error, "opening an etcd watch failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(self.shared.config.max_backoff);
                }
                result => return result.map_err(map),
            }
        }
    }
}
