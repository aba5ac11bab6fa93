//! Encryption at rest end to end (`kapi serve --encryption-provider-config`), on the
//! embedded store and on etcd: a Secret created through the API reads back intact,
//! while the store underneath holds it as `k8s:enc:aescbc:v1:key1:` and ciphertext;
//! after a restart with a rotated configuration (a new key first, the old one second)
//! the old Secret still reads and new writes use the new key. A bad configuration
//! file stops the server with a message naming the file.

use std::path::{Path, PathBuf};
use std::process::Command;

use kapi_storage::{EmbeddedStorage, EtcdStorage, ReadAt, Storage};
use kapi_tests::{Backend, EtcdProcess, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const SECRETS: &str = "/api/v1/namespaces/default/secrets";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
/// The Secret's plaintext, and its base64 as the API's `data` carries it.
const PASSWORD: &str = "correct horse battery staple";
const PASSWORD_B64: &str = "Y29ycmVjdCBob3JzZSBiYXR0ZXJ5IHN0YXBsZQ==";
/// Two 32-byte AES keys, base64.
const KEY1: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
const KEY2: &str = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=";

/// An `EncryptionConfiguration` for Secrets with these aescbc keys, first one writing.
fn write_config(dir: &Path, file: &str, keys: &[(&str, &str)]) -> PathBuf {
    let keys: String = keys
        .iter()
        .map(|(name, secret)| {
            format!("            - name: {name}\n              secret: {secret}\n")
        })
        .collect();
    let text = format!(
        "apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources:
      - secrets
    providers:
      - aescbc:
          keys:
{keys}      - identity: {{}}
"
    );
    let path = dir.join(file);
    std::fs::write(&path, text).expect("writing the encryption configuration");
    path
}

fn secret(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name},
        "type": "Opaque",
        "data": {"password": PASSWORD_B64}
    })
}

/// Where the server stores, and how the test reads it from underneath.
enum Store {
    /// The embedded store's data directory (read while the server is stopped: the
    /// database file is locked by the server).
    Embedded(tempfile::TempDir),
    /// An etcd the test owns, so that servers come and go over the same data.
    Etcd(EtcdProcess),
}

impl Store {
    fn start(&self, config: &Path) -> Kapi {
        let args = ["--encryption-provider-config", config.to_str().unwrap()];
        match self {
            Store::Embedded(dir) => Kapi::start_in_dir_with(dir.path(), &args),
            Store::Etcd(etcd) => Kapi::start_with(Backend::SharedEtcd(etcd.endpoint()), &args),
        }
    }

    /// The stored bytes of `key`, read by the storage crate straight from the backend.
    fn raw(&self, key: &str) -> Vec<u8> {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let storage: Box<dyn Storage> = match self {
                Store::Embedded(dir) => Box::new(EmbeddedStorage::open(dir.path()).unwrap()),
                Store::Etcd(etcd) => {
                    Box::new(EtcdStorage::connect(&[etcd.endpoint()]).await.unwrap())
                }
            };
            let kv = storage.get(key, ReadAt::Latest).await.unwrap();
            storage.close().await.unwrap();
            kv.unwrap_or_else(|| panic!("{key} is not stored"))
                .value
                .to_vec()
        })
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

fn assert_encrypted(stored: &[u8], prefix: &str) {
    assert!(
        stored.starts_with(prefix.as_bytes()),
        "expected {prefix}, stored: {}",
        String::from_utf8_lossy(stored)
    );
    for plain in [PASSWORD, PASSWORD_B64, "Opaque"] {
        assert!(!contains(stored, plain), "{plain:?} is readable at rest");
    }
}

fn get_password(kapi: &Kapi, name: &str) -> Value {
    let (code, got) = kapi.request("GET", &format!("{SECRETS}/{name}"), JSON, None);
    assert_eq!(code, 200, "{got}\n{}", kapi.log_text());
    got["data"]["password"].clone()
}

fn secrets_are_encrypted_and_keys_rotate(store: Store) {
    let configs = tempfile::tempdir().unwrap();
    let v1 = write_config(configs.path(), "v1.yaml", &[("key1", KEY1)]);
    let rotated = write_config(configs.path(), "v2.yaml", &[("key2", KEY2), ("key1", KEY1)]);

    let mut kapi = store.start(&v1);
    let (code, created) = kapi.request("POST", SECRETS, JSON, Some(&secret("s1")));
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["data"]["password"], PASSWORD_B64);
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c1"}, "data": {"note": "not a secret"}});
    let (code, created) = kapi.request("POST", CONFIGMAPS, JSON, Some(&config_map));
    assert_eq!(code, 201, "{created}");
    assert_eq!(get_password(&kapi, "s1"), PASSWORD_B64);
    // A list comes from the watch cache, which holds plaintext.
    let (code, list) = kapi.request("GET", SECRETS, JSON, None);
    assert_eq!(code, 200, "{list}");
    assert!(
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["data"]["password"] == PASSWORD_B64),
        "{list}"
    );
    assert!(kapi.stop(), "{}", kapi.log_text());

    assert_encrypted(
        &store.raw("/registry/secrets/default/s1"),
        "k8s:enc:aescbc:v1:key1:",
    );
    // Resources the configuration does not name stay as they were.
    let c1 = store.raw("/registry/configmaps/default/c1");
    assert!(
        contains(&c1, "not a secret"),
        "{}",
        String::from_utf8_lossy(&c1)
    );

    // The new key first, the old one still listed: the old Secret reads, new ones
    // are written with the new key.
    let mut kapi = store.start(&rotated);
    assert_eq!(get_password(&kapi, "s1"), PASSWORD_B64);
    let (code, created) = kapi.request("POST", SECRETS, JSON, Some(&secret("s2")));
    assert_eq!(code, 201, "{created}");
    assert_eq!(get_password(&kapi, "s2"), PASSWORD_B64);
    assert!(kapi.stop(), "{}", kapi.log_text());

    assert_encrypted(
        &store.raw("/registry/secrets/default/s2"),
        "k8s:enc:aescbc:v1:key2:",
    );
    assert_encrypted(
        &store.raw("/registry/secrets/default/s1"),
        "k8s:enc:aescbc:v1:key1:",
    );
}

#[test]
fn secrets_are_encrypted_at_rest_on_each_backend() {
    for (name, _) in Backend::all() {
        let store = match name {
            "embedded" => Store::Embedded(tempfile::tempdir().unwrap()),
            "etcd" => Store::Etcd(EtcdProcess::start()),
            other => panic!("unknown backend {other}"),
        };
        eprintln!("backend: {name}");
        secrets_are_encrypted_and_keys_rotate(store);
    }
}

#[test]
fn a_bad_configuration_file_stops_the_server_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("encryption.yaml");
    std::fs::write(
        &config,
        "apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aesgcm:
          keys: [{name: key1, secret: dG9vIHNob3J0}]
",
    )
    .unwrap();
    let output = Command::new(kapi_tests::kapi_binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .arg("--encryption-provider-config")
        .arg(&config)
        .output()
        .expect("running kapi");
    assert!(
        !output.status.success(),
        "kapi started with a bad configuration"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(config.to_str().unwrap())
            && stderr.contains("resources[0].providers[0].aesgcm.keys[0].secret"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("dG9vIHNob3J0"),
        "the secret was printed: {stderr}"
    );
}
