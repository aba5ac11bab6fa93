//! The conformance suite against a real etcd: each test starts its own (Debian's
//! `etcd-server`, on free loopback ports) and fails loudly when it is missing.
#![cfg(feature = "etcd")]

#[macro_use]
mod conformance;

use std::sync::Arc;

use kapi_storage::etcd::EtcdConfig;
use kapi_storage::{EtcdStorage, Storage};
use kapi_testing::EtcdProcess;

/// A fresh etcd and a store on it; the process is the guard.
async fn setup() -> (Arc<dyn Storage>, EtcdProcess) {
    let etcd = tokio::task::spawn_blocking(EtcdProcess::start)
        .await
        .expect("etcd start task");
    let config = EtcdConfig::default().with_progress_interval(conformance::PROGRESS_INTERVAL);
    let storage = EtcdStorage::connect_with(&[etcd.endpoint()], config)
        .await
        .expect("connect to etcd");
    (Arc::new(storage), etcd)
}

conformance_suite!(setup);

mod connection {
    use std::time::Duration;

    use bytes::Bytes;
    use futures_util::StreamExt;
    use kapi_storage::etcd::EtcdConfig;
    use kapi_storage::{EtcdStorage, ReadAt, Storage, StorageError, WatchItem};
    use kapi_testing::EtcdProcess;

    /// An endpoint nobody listens on.
    fn dead_endpoint() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    }

    /// A fresh etcd, started off the async runtime (it polls until etcd answers).
    async fn start_etcd() -> EtcdProcess {
        tokio::task::spawn_blocking(EtcdProcess::start)
            .await
            .unwrap()
    }

    fn quick() -> EtcdConfig {
        EtcdConfig::default()
            .with_request_timeout(Duration::from_secs(1))
            .with_connect_attempts(2)
            .with_progress_interval(Duration::from_millis(300))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unreachable_etcd_is_unavailable() {
        let result = tokio::time::timeout(
            Duration::from_secs(20),
            EtcdStorage::connect_with(&[dead_endpoint()], quick()),
        )
        .await
        .expect("connect gave up in time");
        match result {
            Err(StorageError::Unavailable { .. }) => {}
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_live_endpoint_of_several_is_enough() {
        let etcd = start_etcd().await;
        let storage = EtcdStorage::connect_with(&[dead_endpoint(), etcd.endpoint()], quick())
            .await
            .unwrap();
        for i in 0..10 {
            storage
                .create(&format!("/c/k{i}"), Bytes::from_static(b"v"))
                .await
                .unwrap();
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn etcd_going_away_fails_calls_and_ends_watches() {
        let etcd = start_etcd().await;
        let storage = EtcdStorage::connect_with(&[etcd.endpoint()], quick())
            .await
            .unwrap();
        let kv = storage
            .create("/g/k", Bytes::from_static(b"v"))
            .await
            .unwrap();
        let mut watch = storage.watch("/g/", kv.mod_revision).await.unwrap();
        drop(etcd);

        // The watch ends with an error (progress items may come before).
        let ended = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match watch.next().await {
                    Some(Ok(WatchItem::Progress(_))) => {}
                    Some(Ok(WatchItem::Event(event))) => panic!("unexpected event {event:?}"),
                    Some(Err(error)) => return error,
                    None => panic!("the watch ended without an error"),
                }
            }
        })
        .await
        .expect("the watch noticed etcd was gone");
        assert!(
            matches!(ended, StorageError::Unavailable { .. }),
            "{ended:?}"
        );
        assert!(watch.next().await.is_none());

        let read =
            tokio::time::timeout(Duration::from_secs(20), storage.get("/g/k", ReadAt::Latest))
                .await
                .expect("the read gave up in time");
        assert!(
            matches!(read, Err(StorageError::Unavailable { .. })),
            "{read:?}"
        );
        let write = tokio::time::timeout(
            Duration::from_secs(20),
            storage.create("/g/k2", Bytes::from_static(b"v")),
        )
        .await
        .expect("the write gave up in time");
        assert!(
            matches!(write, Err(StorageError::Unavailable { .. })),
            "{write:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watch_outlives_the_request_timeout() {
        let etcd = start_etcd().await;
        // `quick` has a one-second request timeout.
        let storage = EtcdStorage::connect_with(&[etcd.endpoint()], quick())
            .await
            .unwrap();
        let start = storage.current_revision().await.unwrap();
        let mut watch = storage.watch("/w/", start).await.unwrap();
        let idle_until = tokio::time::Instant::now() + Duration::from_millis(2500);
        while tokio::time::Instant::now() < idle_until {
            match tokio::time::timeout(Duration::from_secs(5), watch.next()).await {
                Ok(Some(Ok(WatchItem::Progress(_)))) => {}
                other => panic!("expected progress while idle, got {other:?}"),
            }
        }
        let kv = storage
            .create("/w/k", Bytes::from_static(b"v"))
            .await
            .unwrap();
        loop {
            match tokio::time::timeout(Duration::from_secs(5), watch.next()).await {
                Ok(Some(Ok(WatchItem::Progress(_)))) => {}
                Ok(Some(Ok(WatchItem::Event(event)))) => {
                    assert_eq!(event.revision, kv.mod_revision);
                    break;
                }
                other => panic!("expected the event, got {other:?}"),
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn compacted_revision_is_shared_through_etcd() {
        let etcd = start_etcd().await;
        let first = EtcdStorage::connect_with(&[etcd.endpoint()], quick())
            .await
            .unwrap();
        let second = EtcdStorage::connect_with(&[etcd.endpoint()], quick())
            .await
            .unwrap();
        let a = first
            .create("/s/k", Bytes::from_static(b"1"))
            .await
            .unwrap();
        first
            .update("/s/k", Bytes::from_static(b"2"), a.mod_revision)
            .await
            .unwrap();
        first.compact(a.mod_revision).await.unwrap();
        assert_eq!(second.compacted_revision().await.unwrap(), a.mod_revision);
        match second.get("/s/k", ReadAt::Exact(a.mod_revision - 1)).await {
            Err(StorageError::Expired { compacted, .. }) => assert_eq!(compacted, a.mod_revision),
            other => panic!("expected Expired, got {other:?}"),
        }
    }

    /// etcd-client reads at most 4 MB per reply unless told otherwise: an unpaged list
    /// (and a watch event) bigger than that must still be read, as kube-apiserver reads
    /// them (etcd's own request limit is 1.5 MiB, so each value stays below it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn replies_larger_than_four_megabytes_are_read() {
        let etcd = start_etcd().await;
        let storage = EtcdStorage::connect_with(&[etcd.endpoint()], quick())
            .await
            .unwrap();
        let value = Bytes::from(vec![b'x'; 1024 * 1024]);
        let start = storage.current_revision().await.unwrap();
        for i in 0..6 {
            storage
                .create(&format!("/big/k{i}"), value.clone())
                .await
                .unwrap();
        }
        let list = storage
            .list(&kapi_storage::ListRequest {
                prefix: "/big/".to_string(),
                ..Default::default()
            })
            .await
            .expect("a 6 MiB list is read");
        assert_eq!(list.items.len(), 6);
        assert!(list.items.iter().all(|kv| kv.value == value));
        // A watch from before the writes replays them (etcd may batch them in one reply).
        let mut watch = storage.watch("/big/", start).await.unwrap();
        let mut seen = 0;
        while seen < 6 {
            match tokio::time::timeout(Duration::from_secs(10), watch.next()).await {
                Ok(Some(Ok(WatchItem::Event(event)))) => {
                    assert_eq!(event.value.len(), value.len());
                    seen += 1;
                }
                Ok(Some(Ok(WatchItem::Progress(_)))) => {}
                other => panic!("expected the replayed writes, got {other:?}"),
            }
        }
    }
}
