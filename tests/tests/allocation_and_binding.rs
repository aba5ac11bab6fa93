//! Service cluster IPs and node ports, allocated from storage so that replicas over one
//! etcd never hand out the same value, each cluster IP held by an IPAddress object
//! (ServiceCIDRs and the repair loop: `service_cidrs.rs`); `pods/binding` and the `bindings`
//! collection, which assign a pod to a node once; and `pods/log`, `exec`, `attach` and
//! `portforward`, answered as kube answers them up to the kubelet kapi does not run.

use std::collections::BTreeSet;

use kapi_testing::EtcdProcess;
use kapi_tests::{Backend, KUBECTL_RELEASES, Kapi, causes, on_every_backend};
use serde_json::{Value, json};

const SERVICES: &str = "/api/v1/namespaces/default/services";
const PODS: &str = "/api/v1/namespaces/default/pods";
const JSON: &str = "application/json";

fn service(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("ports").is_none() {
        spec["ports"] = json!([{"port": 80}]);
    }
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

fn create(kapi: &Kapi, obj: &Value) -> (u16, Value) {
    kapi.request("POST", SERVICES, JSON, Some(obj))
}

const IP_ADDRESSES: &str = "/apis/networking.k8s.io/v1/ipaddresses";

fn cluster_ips_and_node_ports(kapi: &Kapi) {
    let (code, a) = create(kapi, &service("a", json!({})));
    assert_eq!(code, 201, "{a}");
    let ip = a["spec"]["clusterIP"]
        .as_str()
        .expect("a cluster IP")
        .to_string();
    assert!(ip.starts_with("10.0.0."), "{ip}");
    assert_eq!(a["spec"]["clusterIPs"], json!([ip]));
    // The address is held by an IPAddress whose parent is the Service, as kube ≥ 1.33
    // records it.
    let address = format!("{IP_ADDRESSES}/{ip}");
    let (code, held) = kapi.request("GET", &address, JSON, None);
    assert_eq!(code, 200, "{held}");
    assert_eq!(
        (&held["spec"]["parentRef"], &held["metadata"]["labels"]),
        (
            &json!({"resource": "services", "namespace": "default", "name": "a"}),
            &json!({"ipaddress.kubernetes.io/ip-family": "IPv4",
                "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"})
        )
    );
    // An address someone else holds is taken (one that "a" was not given: its address
    // is random).
    let held_elsewhere = if ip == "10.0.0.200" {
        "10.0.0.201"
    } else {
        "10.0.0.200"
    };
    let (code, other) = kapi.request(
        "POST",
        IP_ADDRESSES,
        JSON,
        Some(&json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
            "metadata": {"name": held_elsewhere},
            "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "elsewhere"}}})),
    );
    assert_eq!(code, 201, "{other}");
    let (code, taken) = create(kapi, &service("c", json!({"clusterIP": held_elsewhere})));
    assert_eq!(code, 422, "{taken}");

    // Asking for a taken IP, or one outside the range, is refused with kube's message.
    let (code, taken) = create(kapi, &service("b", json!({"clusterIP": ip})));
    assert_eq!(code, 422, "{taken}");
    assert_eq!(
        causes(&taken),
        vec![format!(
            "spec.clusterIPs[0]: Invalid value: [\"{ip}\"]: failed to allocate IP {ip}: provided IP is already allocated"
        )]
    );
    let (code, outside) = create(kapi, &service("b", json!({"clusterIP": "10.1.2.3"})));
    assert_eq!(code, 422, "{outside}");
    assert_eq!(
        causes(&outside),
        vec![
            "spec.clusterIPs[0]: Invalid value: [\"10.1.2.3\"]: failed to allocate IP 10.1.2.3: the provided network does not match the current range"
        ]
    );
    let (code, base) = create(kapi, &service("b", json!({"clusterIP": "10.0.0.0"})));
    assert_eq!(code, 422, "{base}");
    assert_eq!(
        causes(&base),
        vec![
            "spec.clusterIPs[0]: Invalid value: [\"10.0.0.0\"]: failed to allocate IP 10.0.0.0: the provided IP (10.0.0.0) is not in the valid range. The range of valid IPs is 10.0.0.0/24"
        ]
    );

    // Headless stays headless; ExternalName gets nothing.
    let (code, headless) = create(kapi, &service("h", json!({"clusterIP": "None"})));
    assert_eq!(code, 201, "{headless}");
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    let (code, ext) = create(
        kapi,
        &service(
            "x",
            json!({"type": "ExternalName", "externalName": "example.com"}),
        ),
    );
    assert_eq!(code, 201, "{ext}");
    assert_eq!(ext["spec"].get("clusterIP"), None);

    // A NodePort service gets a port in range for each port; a taken one is refused.
    let (code, np) = create(
        kapi,
        &service(
            "np",
            json!({"type": "NodePort", "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}),
        ),
    );
    assert_eq!(code, 201, "{np}");
    let ports: Vec<u64> = np["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["nodePort"].as_u64().expect("a node port"))
        .collect();
    assert!(
        ports.iter().all(|p| (30000..=32767).contains(p)),
        "{ports:?}"
    );
    assert_ne!(ports[0], ports[1]);
    let (code, clash) = create(
        kapi,
        &service(
            "np2",
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": ports[0]}]}),
        ),
    );
    assert_eq!(code, 422, "{clash}");
    assert_eq!(
        causes(&clash),
        vec![format!(
            "spec.ports[0].nodePort: Invalid value: {}: provided port is already allocated",
            ports[0]
        )]
    );
    // The same request with a free port succeeds.
    let free = (30000..=32767u64).find(|p| !ports.contains(p)).unwrap();
    let (code, ok) = create(
        kapi,
        &service(
            "np2",
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": free}]}),
        ),
    );
    assert_eq!(code, 201, "{ok}");

    // Deleting a service releases its IP and ports.
    let (code, _) = kapi.request("DELETE", &format!("{SERVICES}/a"), JSON, None);
    assert_eq!(code, 200);
    assert_eq!(kapi.request("GET", &address, JSON, None).0, 404);
    let (code, again) = create(kapi, &service("a2", json!({"clusterIP": ip})));
    assert_eq!(code, 201, "{again}");
    let (code, _) = kapi.request("DELETE", &format!("{SERVICES}/np"), JSON, None);
    assert_eq!(code, 200);
    let (code, reuse) = create(
        kapi,
        &service(
            "np3",
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": ports[0]}]}),
        ),
    );
    assert_eq!(code, 201, "{reuse}");
}

#[test]
fn services_get_cluster_ips_and_node_ports() {
    on_every_backend(cluster_ips_and_node_ports);
}

/// Two replicas over one etcd, with room for six addresses: six services get six
/// distinct IPs whichever replica creates them, and the seventh finds the range full.
#[test]
fn replicas_never_allocate_the_same_ip() {
    let etcd = EtcdProcess::start();
    let args = ["--service-cluster-ip-range", "10.9.0.0/29"];
    let a = Kapi::start_with(Backend::SharedEtcd(etcd.endpoint()), &args);
    let b = Kapi::start_with(Backend::SharedEtcd(etcd.endpoint()), &args);
    let mut ips = BTreeSet::new();
    for i in 0..6 {
        let replica = if i % 2 == 0 { &a } else { &b };
        let (code, svc) = create(replica, &service(&format!("s{i}"), json!({})));
        assert_eq!(code, 201, "{svc}");
        ips.insert(svc["spec"]["clusterIP"].as_str().unwrap().to_string());
    }
    let want: BTreeSet<String> = (1..=6).map(|i| format!("10.9.0.{i}")).collect();
    assert_eq!(ips, want);
    let (code, full) = create(&b, &service("s6", json!({})));
    assert_eq!(code, 500, "{full}");
    assert!(
        full["message"]
            .as_str()
            .unwrap_or("")
            .contains("range is full"),
        "{full}"
    );
}

fn pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    })
}

fn binding(pod: &str, node: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod, "annotations": {"scheduler": "test"}},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}
    })
}

#[test]
fn a_binding_assigns_a_pod_to_a_node_once() {
    let kapi = Kapi::start(Backend::Embedded);
    let (code, created) = kapi.request("POST", PODS, JSON, Some(&pod("p")));
    assert_eq!(code, 201, "{created}");

    let (code, ok) = kapi.request(
        "POST",
        &format!("{PODS}/p/binding"),
        JSON,
        Some(&binding("p", "n1")),
    );
    assert_eq!(code, 201, "{ok}");
    assert_eq!(
        ok,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
    let (_, bound) = kapi.request("GET", &format!("{PODS}/p"), JSON, None);
    assert_eq!(bound["spec"]["nodeName"], "n1");
    assert_eq!(bound["metadata"]["annotations"]["scheduler"], "test");
    let scheduled: Vec<&Value> = bound["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "PodScheduled")
        .collect();
    assert_eq!(scheduled.len(), 1);
    assert_eq!(scheduled[0]["status"], "True");

    let (code, again) = kapi.request(
        "POST",
        &format!("{PODS}/p/binding"),
        JSON,
        Some(&binding("p", "n2")),
    );
    assert_eq!(code, 409, "{again}");
    assert_eq!(
        again["message"],
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\""
    );
    let (code, mismatch) = kapi.request(
        "POST",
        &format!("{PODS}/p/binding"),
        JSON,
        Some(&binding("q", "n2")),
    );
    assert_eq!(code, 400, "{mismatch}");
    assert_eq!(
        mismatch["message"],
        "name in URL does not match name in Binding object"
    );
    let (code, missing) = kapi.request(
        "POST",
        &format!("{PODS}/nope/binding"),
        JSON,
        Some(&binding("nope", "n2")),
    );
    assert_eq!(code, 404, "{missing}");
    // Only create is served on the binding subresource.
    let (code, _) = kapi.request("GET", &format!("{PODS}/p/binding"), JSON, None);
    assert_eq!(code, 405);

    let (_, discovery) = kapi.request("GET", "/api/v1", JSON, None);
    let entry = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods/binding")
        .cloned();
    assert_eq!(
        entry,
        Some(
            json!({"name": "pods/binding", "singularName": "", "namespaced": true, "kind": "Binding", "verbs": ["create"]})
        )
    );
}

/// The core `bindings` collection binds the pod a Binding names, as `pods/binding`.
#[test]
fn the_bindings_collection_binds_too() {
    let kapi = Kapi::start(Backend::Embedded);
    let bindings = "/api/v1/namespaces/default/bindings";
    assert_eq!(kapi.request("POST", PODS, JSON, Some(&pod("b"))).0, 201);
    let (code, ok) = kapi.request("POST", bindings, JSON, Some(&binding("b", "n1")));
    assert_eq!(
        (code, ok),
        (
            201,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
        )
    );
    let (_, bound) = kapi.request("GET", &format!("{PODS}/b"), JSON, None);
    assert_eq!(bound["spec"]["nodeName"], "n1");
    let (code, again) = kapi.request("POST", bindings, JSON, Some(&binding("b", "n2")));
    assert_eq!(code, 409, "{again}");
    assert_eq!(
        again["message"],
        "Operation cannot be fulfilled on pods/binding \"b\": pod b is already assigned to node \"n1\""
    );
    let (code, missing) = kapi.request("POST", bindings, JSON, Some(&binding("nope", "n1")));
    assert_eq!(code, 404, "{missing}");
    let (code, unnamed) = kapi.request("POST", bindings, JSON, Some(&binding("", "n1")));
    assert_eq!(
        (code, &unnamed["message"]),
        (
            422,
            &json!(
                "Binding \"\" is invalid: metadata.name: Required value: name or generateName is required"
            )
        )
    );

    let (_, discovery) = kapi.request("GET", "/api/v1", JSON, None);
    let entry = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "bindings")
        .cloned();
    assert_eq!(
        entry.map(|e| (
            e["kind"].clone(),
            e["namespaced"].clone(),
            e["verbs"].clone()
        )),
        Some((json!("Binding"), json!(true), json!(["create"])))
    );
}

/// A PEM `CERTIFICATE REQUEST` block, base64 as the API carries it.
const CSR_PEM: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlJQlZqQ0J3QUlCQURBWE1SVXdFd1lEVlFRRERBeHJZWEJwTFdWNFlXMXdiR1U9Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";

#[test]
fn approval_changes_only_the_conditions_of_a_csr() {
    let kapi = Kapi::start(Backend::Embedded);
    let csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    let csr = json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "c"},
        "spec": {"request": CSR_PEM, "signerName": "example.com/signer", "usages": ["client auth"],
            "username": "someone-else", "groups": ["forged"]}
    });
    let (code, created) = kapi.request("POST", csrs, JSON, Some(&csr));
    assert_eq!(code, 201, "{created}");
    // The requester is who asked, whatever the body said (kube's CSR strategy).
    assert_eq!(
        (&created["spec"]["username"], &created["spec"]["groups"]),
        (
            &json!("kapi-admin"),
            &json!(["system:masters", "system:authenticated"])
        ),
        "{created}"
    );

    let mut approved = created.clone();
    approved["status"] = json!({"conditions": [
        {"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}
    ]});
    approved["spec"]["signerName"] = json!("example.com/other");
    let (code, after) = kapi.request("PUT", &format!("{csrs}/c/approval"), JSON, Some(&approved));
    assert_eq!(code, 200, "{after}");
    assert_eq!(after["status"]["conditions"][0]["type"], "Approved");
    // Only the conditions come from an approval.
    assert_eq!(after["spec"]["signerName"], "example.com/signer");
    assert_eq!(
        kapi.kubectl(&[
            "get",
            "csr",
            "c",
            "-o",
            "jsonpath={.status.conditions[0].type}"
        ]),
        "Approved"
    );

    // Removing the approval is refused.
    let mut removed = after.clone();
    removed["status"] = json!({});
    let (code, refused) = kapi.request("PUT", &format!("{csrs}/c/approval"), JSON, Some(&removed));
    assert_eq!(code, 422, "{refused}");
    assert_eq!(
        refused["details"]["causes"][0]["message"],
        "Forbidden: updates may not remove a condition of type \"Approved\""
    );
    // POST is not a verb of the approval subresource.
    let (code, _) = kapi.request("POST", &format!("{csrs}/c/approval"), JSON, Some(&approved));
    assert_eq!(code, 405);

    let (_, discovery) = kapi.request("GET", "/apis/certificates.k8s.io/v1", JSON, None);
    let entry = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "certificatesigningrequests/approval")
        .cloned();
    assert_eq!(
        entry,
        Some(
            json!({"name": "certificatesigningrequests/approval", "singularName": "", "namespaced": false,
                    "kind": "CertificateSigningRequest", "verbs": ["get", "patch", "update"]})
        )
    );
}

/// kube's `GetWarningsForService` reaches the client as `Warning` headers.
#[test]
fn service_warnings_reach_the_client() {
    let kapi = Kapi::start(Backend::Embedded);
    let post = |body: &Value| {
        let bytes = serde_json::to_vec(body).expect("json");
        kapi.exchange("POST", SERVICES, JSON, None, Some(&bytes))
    };
    let quoted = |w: &str| format!("299 - \"{}\"", w.replace('"', "\\\""));
    let ports = json!([{"port": 80}]);
    let headless = service(
        "headless",
        json!({"clusterIP": "None", "ports": ports, "externalIPs": ["2001:db8:0:0::5"],
            "sessionAffinity": "ClientIP", "externalName": "db.example.com",
            "trafficDistribution": "PreferClose"}),
    );
    let out = post(&headless);
    assert_eq!(out.code, 201, "{}", out.body);
    assert_eq!(
        out.warnings,
        [
            "spec.externalIPs is ignored for headless services",
            "spec.SessionAffinity is ignored for headless services",
            "spec.externalIPs[0]: IPv6 address \"2001:db8:0:0::5\" should be in RFC 5952 canonical format (\"2001:db8::5\")",
            "spec.externalName is ignored when spec.type is not \"ExternalName\"",
            "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\"",
        ]
        .map(quoted)
    );
    let balanced = service(
        "balanced",
        json!({"type": "LoadBalancer", "ports": ports,
            "loadBalancerSourceRanges": ["10.0.0.8/24", "2001:db8:0:0::/64"]}),
    );
    let out = post(&balanced);
    assert_eq!(out.code, 201, "{}", out.body);
    assert_eq!(
        out.warnings,
        [
            "spec.loadBalancerSourceRanges[0]: CIDR value \"10.0.0.8/24\" is ambiguous in this context (should be \"10.0.0.0/24\" or \"10.0.0.8/32\"?)",
            "spec.loadBalancerSourceRanges[1]: IPv6 CIDR value \"2001:db8:0:0::/64\" should be in RFC 5952 canonical format (\"2001:db8::/64\")",
        ]
        .map(quoted)
    );
    // An allocated cluster IP is canonical: nothing to warn about.
    let out = post(&service("plain", json!({"ports": ports})));
    assert_eq!(out.code, 201, "{}", out.body);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

/// `pods/log`, `exec`, `attach` and `portforward` without a kubelet: kube's answers for
/// a pod with no node (an empty log, `does not have a host assigned`), its container
/// checks and log option checks, a missing Node, and a 503 naming the kubelet kapi
/// does not connect to; through kubectl as through HTTP.
#[test]
fn pod_streams_answer_as_kube_does_up_to_the_kubelet() {
    let kapi = Kapi::start(Backend::Embedded);
    let mut two = pod("p");
    two["spec"]["containers"] = json!([{"name": "a", "image": "x"}, {"name": "b", "image": "x"}]);
    assert_eq!(kapi.request("POST", PODS, JSON, Some(&two)).0, 201);
    let get = |method: &str, sub: &str| {
        let out = kapi.exchange(method, &format!("{PODS}/p/{sub}"), JSON, None, None);
        let message = serde_json::from_str::<Value>(&out.body)
            .ok()
            .and_then(|s| s["message"].as_str().map(str::to_string))
            .unwrap_or(out.body);
        (out.code, message)
    };
    let no_host = (400, "pod p does not have a host assigned".to_string());
    assert_eq!(
        get("GET", "log"),
        (
            400,
            "a container name must be specified for pod p, choose one of: [a b]".into()
        )
    );
    assert_eq!(
        get("GET", "log?container=c"),
        (400, "container c is not valid for pod p".into())
    );
    assert_eq!(get("GET", "log?container=a"), (200, String::new()));
    assert_eq!(
        get("GET", "log?container=a&tailLines=-1"),
        (
            422,
            "PodLogOptions \"p\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"
                .into()
        )
    );
    assert_eq!(
        get("POST", "exec?container=a&command=ls&stdout=true"),
        no_host
    );
    assert_eq!(get("POST", "attach?container=b&stdout=true"), no_host);
    assert_eq!(get("GET", "portforward?ports=80"), no_host);
    assert_eq!(get("PUT", "exec").0, 405);
    // Discovery lists them as kube 1.35 does.
    let (_, core) = kapi.request("GET", "/api/v1", JSON, None);
    let listed: Vec<(String, String, Value)> = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            ["pods/log", "pods/exec", "pods/attach", "pods/portforward"]
                .contains(&r["name"].as_str().unwrap_or(""))
        })
        .map(|r| {
            (
                r["name"].as_str().unwrap().into(),
                r["kind"].as_str().unwrap().into(),
                r["verbs"].clone(),
            )
        })
        .collect();
    let create_get = json!(["create", "get"]);
    assert_eq!(
        listed,
        vec![
            (
                "pods/attach".into(),
                "PodAttachOptions".into(),
                create_get.clone()
            ),
            (
                "pods/exec".into(),
                "PodExecOptions".into(),
                create_get.clone()
            ),
            ("pods/log".into(), "Pod".into(), json!(["get"])),
            (
                "pods/portforward".into(),
                "PodPortForwardOptions".into(),
                create_get
            ),
        ]
    );

    // kubectl, every release: an empty log; exec refused with kube's words.
    for release in std::iter::once(None).chain(KUBECTL_RELEASES.map(Some)) {
        assert_eq!(
            kapi.kubectl_ok(release, &["logs", "p", "-c", "a"], None),
            ""
        );
        let exec = kapi.kubectl_version(release, &["exec", "p", "-c", "a", "--", "ls"], None);
        assert!(!exec.status.success());
        let stderr = String::from_utf8_lossy(&exec.stderr);
        assert_eq!(
            stderr.trim(),
            "Error from server (BadRequest): pod p does not have a host assigned",
            "{release:?}"
        );
    }

    // Scheduled: the Node must exist, and its kubelet is named.
    let (code, out) = kapi.request(
        "POST",
        &format!("{PODS}/p/binding"),
        JSON,
        Some(&binding("p", "n1")),
    );
    assert_eq!(code, 201, "{out}");
    assert_eq!(
        get("GET", "log?container=a"),
        (404, "nodes \"n1\" not found".into())
    );
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.5"}]}});
    assert_eq!(
        kapi.request("POST", "/api/v1/nodes", JSON, Some(&node)).0,
        201
    );
    let unreachable = (
        503,
        "kapi does not connect to kubelets: pod p runs on node n1, whose kubelet is at https://10.0.0.5:10250".to_string(),
    );
    assert_eq!(get("GET", "log?container=a"), unreachable);
    assert_eq!(
        get("POST", "exec?container=a&command=ls&stdout=true"),
        unreachable
    );
    let logs = kapi.kubectl_version(None, &["logs", "p", "-c", "a"], None);
    assert!(!logs.status.success());
    let stderr = String::from_utf8_lossy(&logs.stderr);
    assert!(
        stderr.contains("kapi does not connect to kubelets"),
        "{stderr}"
    );
}
