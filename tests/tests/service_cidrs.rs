//! ServiceCIDRs as kube ≥ 1.33 uses them: cluster IPs come from every Ready one, each
//! gets its finalizer and `Ready` from the service-cidr-controller and stays while an
//! address depends on it alone; and the repair loop that keeps Services and their
//! IPAddresses in step, with kube's Events.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi, causes, condition};
use serde_json::{Value, json};

const SERVICES: &str = "/api/v1/namespaces/default/services";
const IP_ADDRESSES: &str = "/apis/networking.k8s.io/v1/ipaddresses";
const JSON: &str = "application/json";

fn service(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["ports"] = json!([{"port": 80}]);
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

fn create(kapi: &Kapi, obj: &Value) -> (u16, Value) {
    kapi.request("POST", SERVICES, JSON, Some(obj))
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
    condition(cidr, "Ready").cloned().unwrap_or(Value::Null)
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
    // Web's own address is random: the three made here stay clear of it.
    let free: Vec<String> = (247..=254)
        .map(|last| format!("10.0.0.{last}"))
        .filter(|candidate| *candidate != ip)
        .take(3)
        .collect();
    let (wrong, foreign, orphan) = (&free[0], &free[1], &free[2]);
    for (name, parent) in [
        (
            wrong,
            json!({"resource": "services", "namespace": "default", "name": "web"}),
        ),
        (
            foreign,
            json!({"group": "gateway.networking.k8s.io", "resource": "gateways", "name": "edge"}),
        ),
        (
            orphan,
            json!({"resource": "services", "namespace": "default", "name": "nobody"}),
        ),
    ] {
        let (code, out) = kapi.request("POST", IP_ADDRESSES, JSON, Some(&managed(name, parent)));
        assert_eq!(code, 201, "{out}");
    }
    for name in [wrong, foreign] {
        until(&kapi, &format!("{IP_ADDRESSES}/{name}"), |code, _| {
            code == 404
        });
    }
    // Its Service may still be on its way: left for now.
    assert_eq!(
        kapi.request("GET", &format!("{IP_ADDRESSES}/{orphan}"), JSON, None)
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
                foreign.clone(),
                format!(
                    "IPAddress {foreign} appears to have been modified, not referencing a Service {{\"group\":\"gateway.networking.k8s.io\",\"name\":\"edge\",\"resource\":\"gateways\"}}: cleaning up"
                )
            ),
            (
                "IPAddressWrongReference".to_string(),
                wrong.clone(),
                format!(
                    "IPAddress: {wrong} for Service default/web has a wrong reference; cleaning up"
                )
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
