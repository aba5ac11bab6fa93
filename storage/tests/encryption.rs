//! Encryption at rest over real backends: the whole conformance suite through an
//! [`EncryptedStorage`] that encrypts every key (so the wrapper keeps every semantic of
//! the store), and what only encryption promises, each on the embedded store and on a
//! real etcd: ciphertext in the backend, key rotation, identity migration, clear
//! errors for keys no longer configured, and decrypted watch events.

#[macro_use]
mod conformance;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use kapi_storage::embedded::EmbeddedConfig;
use kapi_storage::encryption::{Provider, Transformer};
use kapi_storage::{
    EmbeddedStorage, EncryptedStorage, EventKind, ListRequest, ReadAt, Storage, StorageError,
    WatchItem,
};

const SECRETS: &str = "/registry/secrets/";
const KEY1: [u8; 32] = [1; 32];
const KEY2: [u8; 32] = [2; 32];

fn bytes(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn chain(providers: Vec<Provider>) -> Arc<Transformer> {
    Arc::new(Transformer::new(providers).expect("at least one provider"))
}

/// `raw` with `providers` over every key under `prefix`.
fn encrypted(raw: &Arc<dyn Storage>, prefix: &str, providers: Vec<Provider>) -> EncryptedStorage {
    EncryptedStorage::new(raw.clone(), vec![(prefix.to_string(), chain(providers))])
}

/// A fresh embedded store; the temp dir is the guard.
async fn embedded() -> (Arc<dyn Storage>, Box<dyn Send>) {
    let dir = tempfile::tempdir().unwrap();
    let config = EmbeddedConfig::default()
        .with_progress_interval(conformance::PROGRESS_INTERVAL)
        .without_compaction();
    let storage = EmbeddedStorage::open_with(dir.path(), config).unwrap();
    (Arc::new(storage), Box::new(dir))
}

/// A fresh etcd and a store on it; the process is the guard.
#[cfg(feature = "etcd")]
async fn etcd() -> (Arc<dyn Storage>, Box<dyn Send>) {
    use kapi_storage::etcd::EtcdConfig;
    let process = tokio::task::spawn_blocking(kapi_testing::EtcdProcess::start)
        .await
        .expect("etcd start task");
    let config = EtcdConfig::default().with_progress_interval(conformance::PROGRESS_INTERVAL);
    let storage = kapi_storage::EtcdStorage::connect_with(&[process.endpoint()], config)
        .await
        .expect("connect to etcd");
    (Arc::new(storage), Box::new(process))
}

/// The conformance suite through encryption of every key, one provider per backend
/// setup, so each cipher meets every read, write and watch path.
mod conformance_embedded_aescbc {
    use super::*;

    async fn setup() -> (Arc<dyn Storage>, Box<dyn Send>) {
        let (raw, guard) = embedded().await;
        let storage = encrypted(&raw, "/", vec![Provider::aescbc("k", &KEY1).unwrap()]);
        (Arc::new(storage), guard)
    }

    conformance_suite!(setup);
}

mod conformance_embedded_secretbox {
    use super::*;

    async fn setup() -> (Arc<dyn Storage>, Box<dyn Send>) {
        let (raw, guard) = embedded().await;
        let storage = encrypted(&raw, "/", vec![Provider::secretbox("k", &KEY1).unwrap()]);
        (Arc::new(storage), guard)
    }

    conformance_suite!(setup);
}

#[cfg(feature = "etcd")]
mod conformance_etcd_aesgcm {
    use super::*;

    async fn setup() -> (Arc<dyn Storage>, Box<dyn Send>) {
        let (raw, guard) = etcd().await;
        let storage = encrypted(&raw, "/", vec![Provider::aesgcm("k", &KEY1).unwrap()]);
        (Arc::new(storage), guard)
    }

    conformance_suite!(setup);
}

/// One `#[tokio::test]` per backend for each named test: `async fn(Arc<dyn Storage>)`
/// over the raw backend.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod embedded_store {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (raw, guard) = super::embedded().await;
                    tokio::time::timeout(conformance::TEST_TIMEOUT, super::$name(raw))
                        .await
                        .expect("test timed out");
                    drop(guard);
                }
            )*
            use super::conformance;
        }
        #[cfg(feature = "etcd")]
        mod etcd_store {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (raw, guard) = super::etcd().await;
                    tokio::time::timeout(conformance::TEST_TIMEOUT, super::$name(raw))
                        .await
                        .expect("test timed out");
                    drop(guard);
                }
            )*
            use super::conformance;
        }
    };
}

on_both_backends!(
    each_provider_stores_ciphertext_and_reads_plaintext,
    rotation_reads_old_keys_and_writes_the_new_one,
    identity_values_stay_readable_once_encryption_is_on,
    a_key_no_longer_configured_is_a_clear_error,
    watch_events_arrive_decrypted,
    keys_outside_the_prefixes_are_untouched,
    a_conflict_carries_the_plaintext,
);

/// The raw stored value of `key`.
async fn raw_value(raw: &Arc<dyn Storage>, key: &str) -> Bytes {
    raw.get(key, ReadAt::Latest)
        .await
        .unwrap()
        .expect("the key exists")
        .value
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `stored` starts with `prefix` and hides `plaintext`.
fn assert_ciphertext(stored: &[u8], prefix: &str, plaintext: &str) {
    assert!(
        stored.starts_with(prefix.as_bytes()),
        "stored value should start with {prefix}: {:?}",
        String::from_utf8_lossy(stored)
    );
    assert!(
        !contains(stored, plaintext.as_bytes()),
        "the plaintext is visible in the stored value"
    );
}

async fn each_provider_stores_ciphertext_and_reads_plaintext(raw: Arc<dyn Storage>) {
    let providers = [
        Provider::aescbc("key1", &KEY1).unwrap(),
        Provider::aescbc("key1-128", &KEY1[..16]).unwrap(),
        Provider::aesgcm("key1", &KEY1).unwrap(),
        Provider::aesgcm("key1-192", &KEY1[..24]).unwrap(),
        Provider::secretbox("key1", &KEY1).unwrap(),
    ];
    for (i, provider) in providers.into_iter().enumerate() {
        let prefix = provider.prefix().to_string();
        let s = encrypted(&raw, SECRETS, vec![provider]);
        let key = format!("{SECRETS}default/s{i}");
        let text = format!(r#"{{"data":{{"password":"hunter{i}"}}}}"#);

        let created = s.create(&key, bytes(&text)).await.unwrap();
        assert_eq!(created.value, bytes(&text));
        assert_ciphertext(&raw_value(&raw, &key).await, &prefix, &text);
        assert_eq!(
            s.get(&key, ReadAt::Latest).await.unwrap().unwrap().value,
            bytes(&text)
        );

        let updated_text = format!("{text} updated");
        let updated = s
            .update(&key, bytes(&updated_text), created.mod_revision)
            .await
            .unwrap();
        assert_eq!(updated.value, bytes(&updated_text));
        assert_ciphertext(&raw_value(&raw, &key).await, &prefix, &updated_text);

        let ttl_key = format!("{key}-ttl");
        s.create_with_ttl(&ttl_key, bytes(&text), Duration::from_secs(600))
            .await
            .unwrap();
        assert_ciphertext(&raw_value(&raw, &ttl_key).await, &prefix, &text);

        let listed = s
            .list(&ListRequest {
                prefix: format!("{SECRETS}default/"),
                ..ListRequest::default()
            })
            .await
            .unwrap();
        let found = listed.items.iter().find(|kv| kv.key == key).unwrap();
        assert_eq!(found.value, bytes(&updated_text));

        let deleted = s.delete(&key, None).await.unwrap();
        assert_eq!(deleted.prev.value, bytes(&updated_text));
        s.delete(&ttl_key, None).await.unwrap();
    }
}

async fn rotation_reads_old_keys_and_writes_the_new_one(raw: Arc<dyn Storage>) {
    let key1 = || Provider::aescbc("key1", &KEY1).unwrap();
    let key2 = || Provider::aescbc("key2", &KEY2).unwrap();
    let before = encrypted(&raw, SECRETS, vec![key1()]);
    let old_key = format!("{SECRETS}default/old");
    before.create(&old_key, bytes("old secret")).await.unwrap();

    // The new key first, the old one still listed.
    let rotated = encrypted(&raw, SECRETS, vec![key2(), key1()]);
    let old = rotated
        .get(&old_key, ReadAt::Latest)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(old.value, bytes("old secret"));
    let new_key = format!("{SECRETS}default/new");
    rotated.create(&new_key, bytes("new secret")).await.unwrap();
    assert_ciphertext(
        &raw_value(&raw, &new_key).await,
        "k8s:enc:aescbc:v1:key2:",
        "new secret",
    );
    // Writing the old object again moves it to the new key.
    rotated
        .update(&old_key, bytes("old secret v2"), old.mod_revision)
        .await
        .unwrap();
    assert_ciphertext(
        &raw_value(&raw, &old_key).await,
        "k8s:enc:aescbc:v1:key2:",
        "old secret",
    );

    // What the old key still holds can be rewritten in bulk, then the old key dropped.
    let older = format!("{SECRETS}other/older");
    before.create(&older, bytes("older")).await.unwrap();
    assert_eq!(rotated.rewrite_stale(SECRETS).await.unwrap(), 1);
    assert_eq!(rotated.rewrite_stale(SECRETS).await.unwrap(), 0);
    let after = encrypted(&raw, SECRETS, vec![key2()]);
    for (key, text) in [
        (&old_key, "old secret v2"),
        (&new_key, "new secret"),
        (&older, "older"),
    ] {
        let kv = after.get(key, ReadAt::Latest).await.unwrap().unwrap();
        assert_eq!(kv.value, bytes(text));
    }
}

async fn identity_values_stay_readable_once_encryption_is_on(raw: Arc<dyn Storage>) {
    let key = format!("{SECRETS}default/plain");
    // Before encryption: the value is stored as it is.
    let plain = encrypted(&raw, SECRETS, vec![Provider::identity()]);
    plain.create(&key, bytes("{\"plain\":1}")).await.unwrap();
    assert_eq!(raw_value(&raw, &key).await, bytes("{\"plain\":1}"));

    // Encryption on, identity still listed: old values read, new writes encrypted.
    let on = encrypted(
        &raw,
        SECRETS,
        vec![
            Provider::secretbox("key1", &KEY1).unwrap(),
            Provider::identity(),
        ],
    );
    let kv = on.get(&key, ReadAt::Latest).await.unwrap().unwrap();
    assert_eq!(kv.value, bytes("{\"plain\":1}"));
    on.update(&key, bytes("{\"plain\":2}"), kv.mod_revision)
        .await
        .unwrap();
    assert_ciphertext(
        &raw_value(&raw, &key).await,
        "k8s:enc:secretbox:v1:key1:",
        "plain",
    );

    // Without identity, a plaintext value is refused, not returned as it is.
    let other = format!("{SECRETS}default/plain2");
    plain.create(&other, bytes("{}")).await.unwrap();
    let strict = encrypted(
        &raw,
        SECRETS,
        vec![Provider::secretbox("key1", &KEY1).unwrap()],
    );
    let err = strict.get(&other, ReadAt::Latest).await.unwrap_err();
    assert!(
        format!("{err:#?}").contains("identity is not among the configured providers"),
        "{err:#?}"
    );
}

async fn a_key_no_longer_configured_is_a_clear_error(raw: Arc<dyn Storage>) {
    let key = format!("{SECRETS}default/s");
    let old = encrypted(
        &raw,
        SECRETS,
        vec![Provider::aesgcm("key1", &KEY1).unwrap()],
    );
    old.create(&key, bytes("secret")).await.unwrap();
    let new = encrypted(
        &raw,
        SECRETS,
        vec![Provider::aesgcm("key2", &KEY2).unwrap()],
    );

    let err = new.get(&key, ReadAt::Latest).await.unwrap_err();
    assert!(matches!(err, StorageError::Internal { .. }), "{err:?}");
    let text = format!("{err:#?}");
    assert!(
        text.contains("k8s:enc:aesgcm:v1:key1:") && text.contains("not in the encryption"),
        "{text}"
    );
    assert!(
        new.list(&ListRequest {
            prefix: SECRETS.to_string(),
            ..ListRequest::default()
        })
        .await
        .is_err()
    );

    // The same name with another secret: the cipher says the value does not open.
    let impostor = encrypted(
        &raw,
        SECRETS,
        vec![Provider::aesgcm("key1", &KEY2).unwrap()],
    );
    let err = format!(
        "{:#?}",
        impostor.get(&key, ReadAt::Latest).await.unwrap_err()
    );
    assert!(err.contains("authentication failed"), "{err}");
}

async fn watch_events_arrive_decrypted(raw: Arc<dyn Storage>) {
    let s = encrypted(
        &raw,
        SECRETS,
        vec![Provider::aescbc("key1", &KEY1).unwrap()],
    );
    let start = s.current_revision().await.unwrap();
    let mut watch = s.watch("/registry/", start).await.unwrap();
    let key = format!("{SECRETS}ns/w");
    let created = s.create(&key, bytes("one")).await.unwrap();
    s.update(&key, bytes("two"), created.mod_revision)
        .await
        .unwrap();
    // A key outside the encrypted prefixes, in the same watch.
    s.create("/registry/configmaps/ns/c", bytes("visible"))
        .await
        .unwrap();
    s.delete(&key, None).await.unwrap();

    let mut seen = Vec::new();
    while seen.len() < 4 {
        if let WatchItem::Event(e) = tokio::time::timeout(Duration::from_secs(15), watch.next())
            .await
            .expect("an event in time")
            .expect("the watch goes on")
            .expect("no watch error")
        {
            seen.push((e.kind, e.key, e.value, e.prev_value));
        }
    }
    let expected = [
        (EventKind::Created, key.as_str(), "one", None),
        (EventKind::Modified, key.as_str(), "two", Some(bytes("one"))),
        (
            EventKind::Created,
            "/registry/configmaps/ns/c",
            "visible",
            None,
        ),
    ];
    for (got, (kind, key, value, prev)) in seen.iter().zip(expected) {
        assert_eq!(*got, (kind, key.to_string(), bytes(value), prev));
    }
    // A delete carries the last value (and, where the backend gives one, the same as
    // its previous value).
    let (kind, deleted_key, value, prev) = &seen[3];
    assert_eq!(
        (*kind, deleted_key, value),
        (EventKind::Deleted, &key, &bytes("two"))
    );
    assert!(prev.as_ref().is_none_or(|p| *p == bytes("two")), "{prev:?}");

    // Replays from history come decrypted too.
    let mut replay = s.watch(SECRETS, start).await.unwrap();
    let first = conformance::next_event(&mut replay).await;
    assert_eq!(first.value, bytes("one"));
}

async fn keys_outside_the_prefixes_are_untouched(raw: Arc<dyn Storage>) {
    let s = encrypted(
        &raw,
        SECRETS,
        vec![Provider::aescbc("key1", &KEY1).unwrap()],
    );
    // `/registry/secretsfoo/` is another resource: the prefix ends with a slash.
    for key in ["/registry/configmaps/ns/c", "/registry/secretsfoo/ns/x"] {
        s.create(key, bytes("plain")).await.unwrap();
        assert_eq!(raw_value(&raw, key).await, bytes("plain"));
    }
    // Even a value that looks encrypted is passed through there.
    raw.create(
        "/registry/configmaps/ns/odd",
        bytes("k8s:enc:aescbc:v1:x:zz"),
    )
    .await
    .unwrap();
    assert_eq!(
        s.get("/registry/configmaps/ns/odd", ReadAt::Latest)
            .await
            .unwrap()
            .unwrap()
            .value,
        bytes("k8s:enc:aescbc:v1:x:zz")
    );
}

async fn a_conflict_carries_the_plaintext(raw: Arc<dyn Storage>) {
    let s = encrypted(
        &raw,
        SECRETS,
        vec![Provider::aesgcm("key1", &KEY1).unwrap()],
    );
    let key = format!("{SECRETS}ns/c");
    let v1 = s.create(&key, bytes("v1")).await.unwrap();
    let v2 = s.update(&key, bytes("v2"), v1.mod_revision).await.unwrap();
    match s.update(&key, bytes("v3"), v1.mod_revision).await {
        Err(StorageError::Conflict { current, .. }) => {
            // Backends may or may not read the current state with the conflict.
            if let Some(current) = current {
                assert_eq!(*current, v2);
            }
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    match s.delete(&key, Some(v1.mod_revision)).await {
        Err(StorageError::Conflict {
            current: Some(current),
            ..
        }) => assert_eq!(current.value, bytes("v2")),
        Err(StorageError::Conflict { current: None, .. }) => {}
        other => panic!("expected a conflict, got {other:?}"),
    }
}
