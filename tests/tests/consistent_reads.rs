//! Consistent reads (no `resourceVersion`, client-go's `Get` and a plain `kubectl get`)
//! served from another replica's watch cache: two `kapi serve` replicas over one etcd,
//! and every write through one is seen at once by a GET and a LIST through the other.
//! The replicas are told that etcd orders its progress notifications (Debian's 3.4.23
//! predates the fix kapi waits for by default), so B answers from memory once its
//! cache has caught up with etcd's current revision.

use kapi_tests::cluster::Cluster;
use serde_json::{Value, json};

const JSON: &str = "application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/cr/configmaps";
const SECRETS: &str = "/api/v1/namespaces/cr/secrets";

fn rv_of(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {obj}"))
}

#[test]
fn a_write_through_one_replica_is_read_at_once_through_another() {
    let cluster = Cluster::start(1, 2, &["--etcd-ordered-progress", "true"]);
    let (a, b) = (cluster.replica(0), cluster.replica(1));
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cr"}});
    let (code, body) = a.request("POST", "/api/v1/namespaces", JSON, Some(&ns));
    assert_eq!(code, 201, "{body}");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}, "data": {"v": "start"}});
    let (code, mut cm) = a.request("POST", CONFIGMAPS, JSON, Some(&cm));
    assert_eq!(code, 201, "{cm}");
    for round in 0..40 {
        cm["data"]["v"] = json!(round.to_string());
        let (code, updated) = a.request("PUT", &format!("{CONFIGMAPS}/c"), JSON, Some(&cm));
        assert_eq!(code, 200, "{updated}");
        // A write B's ConfigMap cache never sees an event of: it learns etcd's revision
        // from a progress notification.
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": format!("s{round}")}});
        let (code, secret) = a.request("POST", SECRETS, JSON, Some(&secret));
        assert_eq!(code, 201, "{secret}");

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
    let (code, body) = b.request("GET", &format!("{CONFIGMAPS}/c"), JSON, None);
    assert_eq!(code, 404, "{body}");
    let (_, list) = b.request("GET", CONFIGMAPS, JSON, None);
    assert_eq!(list["items"], json!([]));
}
