//! Service cluster IPs and node ports, allocated from storage so that replicas over one
//! etcd never hand out the same value, each cluster IP held by an IPAddress object, from
//! every Ready ServiceCIDR, which stays while addresses depend on it; the repair loop
//! that keeps Services and IPAddresses in step; and `pods/binding` and the `bindings`
//! collection, which assign a pod to a node once.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kapi_testing::EtcdProcess;
use kapi_tests::{Backend, Kapi, on_every_backend};
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

fn causes(status: &Value) -> Vec<String> {
    status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or("")
            )
        })
        .collect()
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
    // An address someone else holds is taken.
    let (code, other) = kapi.request(
        "POST",
        IP_ADDRESSES,
        JSON,
        Some(&json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
            "metadata": {"name": "10.0.0.200"},
            "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "elsewhere"}}})),
    );
    assert_eq!(code, 201, "{other}");
    let (code, taken) = create(kapi, &service("c", json!({"clusterIP": "10.0.0.200"})));
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

const SERVICE_CIDRS: &str = "/apis/networking.k8s.io/v1/servicecidrs";

/// `get` until `done` holds for its answer (at most 30 s); returns that answer.
fn until(kapi: &Kapi, path: &str, done: impl Fn(u16, &Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, obj) = kapi.request("GET", path, JSON, None);
        if done(code, &obj) {
            return obj;
        }
        assert!(Instant::now() < deadline, "GET {path}: {code} {obj}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn ready(cidr: &Value) -> Value {
    cidr["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready")
        .cloned()
        .unwrap_or(Value::Null)
}

/// A ServiceCIDR added at run time hands out addresses once Ready, beside the default
/// one; deleting it waits while a Service's address lies in it alone (Ready False,
/// `Terminating`), and it goes once those Services do.
#[test]
fn every_service_cidr_hands_out_addresses_and_is_held_while_used() {
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &["--service-cluster-ip-range", "10.96.0.0/29"],
    );
    let cidr = json!({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
        "metadata": {"name": "extra"}, "spec": {"cidrs": ["10.100.0.0/29"]}});
    let (code, out) = kapi.request("POST", SERVICE_CIDRS, JSON, Some(&cidr));
    assert_eq!(code, 201, "{out}");
    let extra = format!("{SERVICE_CIDRS}/extra");
    let settled = until(&kapi, &extra, |_, c| ready(c)["status"] == "True");
    assert_eq!(
        settled["metadata"]["finalizers"],
        json!(["networking.k8s.io/service-cidr-finalizer"])
    );
    assert_eq!(
        ready(&settled)["message"],
        "Kubernetes Service CIDR is ready"
    );
    let default = until(&kapi, &format!("{SERVICE_CIDRS}/kubernetes"), |_, c| {
        c["metadata"]["finalizers"].is_array()
    });
    assert_eq!(
        default["metadata"]["finalizers"],
        json!(["networking.k8s.io/service-cidr-finalizer"])
    );

    let (code, named) = create(&kapi, &service("named", json!({"clusterIP": "10.100.0.3"})));
    assert_eq!(code, 201, "{named}");
    // Six usable addresses in each /29, one taken: eleven more fit, from both.
    let mut ips = BTreeSet::new();
    for i in 0..11 {
        let (code, svc) = create(&kapi, &service(&format!("s{i}"), json!({})));
        assert_eq!(code, 201, "{svc}");
        ips.insert(svc["spec"]["clusterIP"].as_str().unwrap().to_string());
    }
    let from = |prefix: &str| ips.iter().filter(|ip| ip.starts_with(prefix)).count();
    assert_eq!((from("10.96.0."), from("10.100.0.")), (6, 5), "{ips:?}");
    let (code, full) = create(&kapi, &service("s11", json!({})));
    assert_eq!(code, 500, "{full}");

    // Deleting it: held while addresses depend on it, and no longer handing any out.
    let (code, out) = kapi.request("DELETE", &extra, JSON, None);
    assert_eq!(code, 200, "{out}");
    let held = until(&kapi, &extra, |_, c| ready(c)["status"] == "False");
    assert_eq!(
        (&ready(&held)["reason"], &ready(&held)["message"]),
        (
            &json!("Terminating"),
            &json!(
                "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
            )
        )
    );
    let (code, _) = kapi.request("DELETE", &format!("{SERVICES}/named"), JSON, None);
    assert_eq!(code, 200);
    let (code, refused) = create(&kapi, &service("late", json!({"clusterIP": "10.100.0.3"})));
    assert_eq!(code, 422, "{refused}");
    assert_eq!(
        causes(&refused),
        vec![
            "spec.clusterIPs[0]: Invalid value: [\"10.100.0.3\"]: failed to allocate IP 10.100.0.3: the provided network does not match the current range"
        ]
    );
    let (_, list) = kapi.request("GET", SERVICES, JSON, None);
    for svc in list["items"].as_array().unwrap() {
        if svc["spec"]["clusterIP"]
            .as_str()
            .unwrap_or("")
            .starts_with("10.100.")
        {
            let path = format!("{SERVICES}/{}", svc["metadata"]["name"].as_str().unwrap());
            assert_eq!(kapi.request("DELETE", &path, JSON, None).0, 200);
        }
    }
    until(&kapi, &extra, |code, _| code == 404);
}

/// The repair loop: a Service's address whose IPAddress was deleted gets it back, an
/// allocator-made IPAddress that no Service holds goes (at once when its parent is no
/// Service or does not hold it, after 60 s when its Service is missing), each with
/// kube's Warning Event.
#[test]
fn the_repair_loop_keeps_services_and_ip_addresses_in_step() {
    let kapi = Kapi::start(Backend::Embedded);
    let (code, web) = create(&kapi, &service("web", json!({})));
    assert_eq!(code, 201, "{web}");
    let ip = web["spec"]["clusterIP"].as_str().unwrap().to_string();
    let address = format!("{IP_ADDRESSES}/{ip}");
    assert_eq!(kapi.request("DELETE", &address, JSON, None).0, 200);
    let back = until(&kapi, &address, |code, _| code == 200);
    assert_eq!(
        back["spec"]["parentRef"],
        json!({"resource": "services", "namespace": "default", "name": "web"})
    );
    assert_eq!(
        back["metadata"]["labels"]["ipaddress.kubernetes.io/managed-by"],
        "ipallocator.k8s.io"
    );

    let managed = |name: &str, parent: Value| {
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
            "metadata": {"name": name, "labels": {
                "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
                "ipaddress.kubernetes.io/ip-family": "IPv4"}},
            "spec": {"parentRef": parent}})
    };
    for (name, parent) in [
        (
            "10.0.0.250",
            json!({"resource": "services", "namespace": "default", "name": "web"}),
        ),
        (
            "10.0.0.251",
            json!({"group": "gateway.networking.k8s.io", "resource": "gateways", "name": "edge"}),
        ),
        (
            "10.0.0.252",
            json!({"resource": "services", "namespace": "default", "name": "nobody"}),
        ),
    ] {
        let (code, out) = kapi.request("POST", IP_ADDRESSES, JSON, Some(&managed(name, parent)));
        assert_eq!(code, 201, "{out}");
    }
    for name in ["10.0.0.250", "10.0.0.251"] {
        until(&kapi, &format!("{IP_ADDRESSES}/{name}"), |code, _| {
            code == 404
        });
    }
    // Its Service may still be on its way: left for now.
    assert_eq!(
        kapi.request("GET", &format!("{IP_ADDRESSES}/10.0.0.252"), JSON, None)
            .0,
        200
    );

    let events = until(
        &kapi,
        "/apis/events.k8s.io/v1/namespaces/default/events",
        |_, list| list["items"].as_array().is_some_and(|i| i.len() >= 3),
    );
    let mut seen: Vec<(String, String, String)> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let s = |v: &Value| v.as_str().unwrap_or("").to_string();
            (s(&e["reason"]), s(&e["regarding"]["name"]), s(&e["note"]))
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            (
                "ClusterIPNotAllocated".to_string(),
                "web".to_string(),
                format!("Cluster IP [IPv4]: {ip} is not allocated; repairing")
            ),
            (
                "IPAddressNotAllocated".to_string(),
                "10.0.0.251".to_string(),
                "IPAddress 10.0.0.251 appears to have been modified, not referencing a Service {\"group\":\"gateway.networking.k8s.io\",\"name\":\"edge\",\"resource\":\"gateways\"}: cleaning up".to_string()
            ),
            (
                "IPAddressWrongReference".to_string(),
                "10.0.0.250".to_string(),
                "IPAddress: 10.0.0.250 for Service default/web has a wrong reference; cleaning up".to_string()
            ),
        ]
    );
    let web_event = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["regarding"]["name"] == "web")
        .unwrap();
    assert_eq!(
        (
            &web_event["type"],
            &web_event["reportingController"],
            &web_event["regarding"]["kind"]
        ),
        (
            &json!("Warning"),
            &json!("ipallocator-repair-controller"),
            &json!("Service")
        )
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
        "spec": {"request": CSR_PEM, "signerName": "example.com/signer", "usages": ["client auth"]}
    });
    let (code, created) = kapi.request("POST", csrs, JSON, Some(&csr));
    assert_eq!(code, 201, "{created}");

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
