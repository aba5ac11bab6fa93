//! Consistent reads (no `resourceVersion`, client-go's `Get` and a plain `kubectl get`)
//! through another replica: two `kapi serve` replicas over one etcd, and every write
//! through one is seen at once by a GET and a LIST through the other.
//!
//! B answers them from its watch cache once the cache has caught up with etcd's
//! current revision, where etcd orders its progress notifications (3.4.31, 3.5.13 and
//! later; kapi asks its version), and from etcd otherwise (Debian's 3.4.23). The first
//! test runs as users run it; the second tells B that etcd orders them, to exercise the
//! cache's path here, and counts the answers in kube's
//! `apiserver_watch_cache_consistent_read_total`.

use kapi_tests::cluster::Cluster;
use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/cr/configmaps";
const SECRETS: &str = "/api/v1/namespaces/cr/secrets";
const ROUNDS: usize = 40;

fn rv_of(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {obj}"))
}

/// Rounds of writes through `a` (a ConfigMap update, then a Secret create that B's
/// ConfigMap cache gets no event of), each read back through `b` by a GET and a LIST
/// without resourceVersion, which must see the update and answer at a resourceVersion
/// no older than the Secret's. With `after_the_event`, B's cache is first given the
/// update's event (a list with `resourceVersionMatch=NotOlderThan`): what it must still
/// learn, etcd's revision, only a progress notification tells it.
fn read_back_writes(a: &Kapi, b: &Kapi, after_the_event: bool) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cr"}});
    let (code, body) = a.request("POST", "/api/v1/namespaces", JSON, Some(&ns));
    assert_eq!(code, 201, "{body}");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}, "data": {"v": "start"}});
    let (code, mut cm) = a.request("POST", CONFIGMAPS, JSON, Some(&cm));
    assert_eq!(code, 201, "{cm}");
    for round in 0..ROUNDS {
        cm["data"]["v"] = json!(round.to_string());
        let (code, updated) = a.request("PUT", &format!("{CONFIGMAPS}/c"), JSON, Some(&cm));
        assert_eq!(code, 200, "{updated}");
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": format!("s{round}")}});
        let (code, secret) = a.request("POST", SECRETS, JSON, Some(&secret));
        assert_eq!(code, 201, "{secret}");
        if after_the_event {
            let seen = format!(
                "{CONFIGMAPS}?resourceVersion={}&resourceVersionMatch=NotOlderThan",
                rv_of(&updated)
            );
            let (code, body) = b.request("GET", &seen, JSON, None);
            assert_eq!(code, 200, "{body}");
        }

        let (code, got) = b.request("GET", &format!("{CONFIGMAPS}/c"), JSON, None);
        assert_eq!(code, 200, "{got}");
        assert_eq!(rv_of(&got), rv_of(&updated), "round {round}: a stale GET");
        assert_eq!(got["data"]["v"], json!(round.to_string()));
        let (code, list) = b.request("GET", CONFIGMAPS, JSON, None);
        assert_eq!(code, 200, "{list}");
        assert!(
            rv_of(&list) >= rv_of(&secret),
            "round {round}: a list at {} after a write at {}",
            rv_of(&list),
            rv_of(&secret)
        );
        assert_eq!(rv_of(&list["items"][0]), rv_of(&updated), "round {round}");
        cm = updated;
    }
    let (code, body) = a.request("DELETE", &format!("{CONFIGMAPS}/c"), JSON, None);
    assert_eq!(code, 200, "{body}");
    if after_the_event {
        let (_, list) = a.request("GET", CONFIGMAPS, JSON, None);
        let seen = format!(
            "{CONFIGMAPS}?resourceVersion={}&resourceVersionMatch=NotOlderThan",
            rv_of(&list)
        );
        b.request("GET", &seen, JSON, None);
    }
    let (code, body) = b.request("GET", &format!("{CONFIGMAPS}/c"), JSON, None);
    assert_eq!(code, 404, "{body}");
    let (_, list) = b.request("GET", CONFIGMAPS, JSON, None);
    assert_eq!(list["items"], json!([]));
}

/// `kube`'s counter of consistent reads on `kapi`'s ConfigMaps: (from the cache,
/// fallbacks).
fn consistent_reads(kapi: &Kapi) -> (u64, u64) {
    let metrics = kapi.exchange("GET", "/metrics", JSON, None, None).body;
    let count = |fallback: &str| -> u64 {
        let series = format!(
            "apiserver_watch_cache_consistent_read_total{{fallback=\"{fallback}\",resource=\"configmaps\",success=\"true\"}} "
        );
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(&series))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in /metrics:\n{metrics}"))
    };
    (count("false"), count("true"))
}

#[test]
fn a_write_through_one_replica_is_read_at_once_through_another() {
    let cluster = Cluster::start(1, 2, &[]);
    read_back_writes(cluster.replica(0), cluster.replica(1), false);
}

#[test]
fn another_replica_s_cache_answers_once_it_has_etcd_s_revision() {
    let cluster = Cluster::start(1, 1, &[]);
    let endpoints = cluster.etcd.endpoints();
    let b = Kapi::start_with(
        Backend::SharedEtcd(endpoints),
        &["--etcd-ordered-progress", "true"],
    );
    read_back_writes(cluster.replica(0), &b, true);
    let (served, fallbacks) = consistent_reads(&b);
    assert!(served >= 2 * ROUNDS as u64 + 2, "{served}");
    assert_eq!(fallbacks, 0);
}
