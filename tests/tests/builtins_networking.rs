//! The discovery and service-networking built-ins against a real server, as
//! `builtins_classes.rs` tests kinds (kube's defaults, messages, immutable fields and
//! Table cells): EndpointSlice, IPAddress and ServiceCIDR, with the default ServiceCIDR
//! `kubernetes` that kube-apiserver creates from `--service-cluster-ip-range`.

use kapi_tests::{Backend, Kapi, condition};
use serde_json::{Value, json};

#[path = "support/builtins.rs"]
mod support;
use support::*;

const SLICES: &str = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices";
const IP_ADDRESSES: &str = "/apis/networking.k8s.io/v1/ipaddresses";
const SERVICE_CIDRS: &str = "/apis/networking.k8s.io/v1/servicecidrs";

fn slice(name: &str, fields: Value) -> Value {
    let mut s = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": name, "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [],
    });
    for (k, v) in fields.as_object().expect("fields") {
        s[k] = v.clone();
    }
    s
}

fn ip_address(name: &str, parent: Value) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {"name": name},
        "spec": {"parentRef": parent},
    })
}

fn service_cidr(name: &str, cidrs: Value) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": {"name": name},
        "spec": {"cidrs": cidrs},
    })
}

/// `addresses` as one endpoint each.
fn endpoints(addresses: &[&str]) -> Value {
    addresses
        .iter()
        .map(|a| json!({"addresses": [a]}))
        .collect()
}

#[test]
fn endpoint_slices() {
    let kapi = Kapi::start(Backend::Embedded);

    // Ports get kube's defaults (name "", protocol TCP); v1 drops deprecatedTopology;
    // the generation starts at 1.
    let mut eps = endpoints(&["10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"]);
    eps[0]["nodeName"] = json!("node-a");
    eps[0]["deprecatedTopology"] = json!({"kubernetes.io/hostname": "node-a"});
    let web = create(
        &kapi,
        SLICES,
        slice(
            "web-abc",
            json!({
                "endpoints": eps,
                "ports": [{"port": 80}, {"name": "https", "port": 443, "appProtocol": "https"}],
            }),
        ),
    );
    assert_eq!(
        web["ports"],
        json!([
            {"name": "", "port": 80, "protocol": "TCP"},
            {"name": "https", "port": 443, "protocol": "TCP", "appProtocol": "https"},
        ]),
        "{web}"
    );
    assert_eq!(web["endpoints"][0].get("deprecatedTopology"), None, "{web}");
    assert_eq!(web["endpoints"][0]["nodeName"], "node-a", "{web}");
    assert_eq!(web["metadata"]["generation"], 1, "{web}");

    // The generation follows the endpoints, ports and labels, not other metadata.
    let path = format!("{SLICES}/web-abc");
    let mut annotated = web.clone();
    annotated["metadata"]["annotations"] = json!({"note": "x"});
    let annotated = update(&kapi, &path, &annotated);
    assert_eq!(annotated["metadata"]["generation"], 1, "{annotated}");
    let mut relabelled = annotated.clone();
    relabelled["metadata"]["labels"]["tier"] = json!("front");
    let relabelled = update(&kapi, &path, &relabelled);
    assert_eq!(relabelled["metadata"]["generation"], 2, "{relabelled}");
    let mut moved = relabelled.clone();
    moved["endpoints"][3]["addresses"] = json!(["10.1.0.5"]);
    let moved = update(&kapi, &path, &moved);
    assert_eq!(moved["metadata"]["generation"], 3, "{moved}");

    // ValidateEndpointSlice, in kube's words.
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SLICES,
            &slice("bad", json!({"addressType": "IPv5"}))
        ),
        "EndpointSlice.discovery.k8s.io \"bad\" is invalid: addressType: Unsupported value: \
         \"IPv5\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""
    );
    let mut eps = endpoints(&["127.0.0.1", "2001:db8::1"]);
    eps.as_array_mut()
        .expect("endpoints")
        .insert(0, json!({"addresses": []}));
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SLICES,
            &slice(
                "bad",
                json!({
                    "endpoints": eps,
                    "ports": [{"name": "http", "port": 80}, {"name": "http", "protocol": "ICMP"}],
                })
            )
        ),
        "EndpointSlice.discovery.k8s.io \"bad\" is invalid: [endpoints[0].addresses: Required \
         value: must contain at least 1 address, endpoints[1].addresses[0]: Invalid value: \
         \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128), \
         endpoints[2].addresses[0]: Invalid value: \"2001:db8::1\": must be a valid IPv4 \
         address, ports[1].name: Duplicate value: \"http\", ports[1].protocol: Unsupported \
         value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"]"
    );
    let mut eps = endpoints(&["db.example.com", "localhost"]);
    eps[0]["hostname"] = json!("Db");
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SLICES,
            &slice("bad", json!({"addressType": "FQDN", "endpoints": eps}))
        ),
        "EndpointSlice.discovery.k8s.io \"bad\" is invalid: [endpoints[0].hostname: Invalid \
         value: \"Db\": a lowercase RFC 1123 label must consist of lower case alphanumeric \
         characters or '-', and must start and end with an alphanumeric character (e.g. \
         'my-name',  or '123-abc', regex used for validation is \
         '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), endpoints[1].addresses[0]: Invalid value: \
         \"localhost\": should be a domain with at least two segments separated by dots]"
    );

    // addressType is immutable.
    let mut retyped = moved.clone();
    retyped["addressType"] = json!("IPv6");
    retyped["endpoints"] = endpoints(&["2001:db8::1"]);
    assert_eq!(
        invalid(&kapi, "PUT", &path, &retyped),
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: addressType: Invalid value: \
         \"IPv6\": field is immutable"
    );

    // Table cells as kube's printEndpointSlice prints them.
    create(&kapi, SLICES, slice("empty", json!({})));
    assert_eq!(
        row(
            &kapi,
            SLICES,
            "web-abc",
            &["AddressType", "Ports", "Endpoints"]
        ),
        vec![
            json!("IPv4"),
            json!("80,443"),
            json!("10.1.0.1,10.1.0.2,10.1.0.3 + 1 more...")
        ]
    );
    assert_eq!(
        row(&kapi, SLICES, "empty", &["Ports", "Endpoints"]),
        vec![json!("<unset>"), json!("<unset>")]
    );
}

#[test]
fn ip_addresses_and_service_cidrs() {
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &["--service-cluster-ip-range", "10.96.0.0/16"],
    );

    // The default ServiceCIDR, from the flag, Ready as kube's controller marks it.
    let (code, default) = kapi.request("GET", &format!("{SERVICE_CIDRS}/kubernetes"), JSON, None);
    assert_eq!(code, 200, "{default}");
    assert_eq!(
        default["spec"]["cidrs"],
        json!(["10.96.0.0/16"]),
        "{default}"
    );
    let ready = &default["status"]["conditions"][0];
    assert_eq!(
        (&ready["type"], &ready["status"], &ready["message"]),
        (
            &json!("Ready"),
            &json!("True"),
            &json!("Kubernetes default Service CIDR is ready")
        ),
        "{default}"
    );
    assert_eq!(
        row(&kapi, SERVICE_CIDRS, "kubernetes", &["CIDRs"]),
        vec![json!("10.96.0.0/16")]
    );
    ip_addresses(&kapi);
    service_cidrs(&kapi);
}

fn ip_addresses(kapi: &Kapi) {
    // No generation; the parent reference printed as kube's printIPAddress does.
    let dns = json!({"group": "", "resource": "services", "namespace": "default", "name": "dns"});
    let ip = create(kapi, IP_ADDRESSES, ip_address("10.96.0.10", dns.clone()));
    assert_eq!(ip["metadata"].get("generation"), None, "{ip}");
    create(kapi, IP_ADDRESSES, ip_address("2001:db8::a", dns.clone()));
    let gateway =
        json!({"group": "gateway.networking.k8s.io", "resource": "gateways", "name": "edge"});
    create(kapi, IP_ADDRESSES, ip_address("10.96.0.11", gateway));
    assert_eq!(
        row(kapi, IP_ADDRESSES, "10.96.0.10", &["ParentRef"]),
        vec![json!("services/default/dns")]
    );
    assert_eq!(
        row(kapi, IP_ADDRESSES, "10.96.0.11", &["ParentRef"]),
        vec![json!("gateways.gateway.networking.k8s.io/edge")]
    );
    assert_eq!(
        kubectl_rows(kapi, &["get", "ipaddresses"]),
        vec![
            strs(&["NAME", "PARENTREF"]),
            strs(&["10.96.0.10", "services/default/dns"]),
            strs(&["10.96.0.11", "gateways.gateway.networking.k8s.io/edge"]),
            strs(&["2001:db8::a", "services/default/dns"]),
        ]
    );

    // ValidateIPAddress, in kube's words: the name is an IP address in canonical form.
    for (name, why) in [
        (
            "not-an-ip",
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ),
        ("10.96.00.12", "must not have leading 0s"),
        ("2001:DB8::B", "must be in canonical form (\"2001:db8::b\")"),
    ] {
        assert_eq!(
            invalid(kapi, "POST", IP_ADDRESSES, &ip_address(name, dns.clone())),
            format!(
                "IPAddress.networking.k8s.io \"{name}\" is invalid: metadata.name: Invalid \
                 value: \"{name}\": {why}"
            )
        );
    }
    assert_eq!(
        invalid(
            kapi,
            "POST",
            IP_ADDRESSES,
            &ip_address(
                "10.96.0.12",
                json!({"resource": "", "name": "", "namespace": "a/b"})
            )
        ),
        "IPAddress.networking.k8s.io \"10.96.0.12\" is invalid: [spec.parentRef.resource: \
         Required value, spec.parentRef.name: Required value, spec.parentRef.namespace: \
         Invalid value: \"a/b\": may not contain '/']"
    );

    // The parent reference is immutable; labels may change.
    let path = format!("{IP_ADDRESSES}/10.96.0.10");
    let mut labelled = ip.clone();
    labelled["metadata"]["labels"] = json!({"team": "dns"});
    let labelled = update(kapi, &path, &labelled);
    let mut moved = labelled.clone();
    moved["spec"]["parentRef"]["name"] = json!("other");
    let message = invalid(kapi, "PUT", &path, &moved);
    assert!(
        message.starts_with(
            "IPAddress.networking.k8s.io \"10.96.0.10\" is invalid: spec.parentRef: Invalid value: "
        ) && message.ends_with(": field is immutable"),
        "{message}"
    );
}

/// The ServiceCIDR `name` once the controller has given it its finalizer and `Ready`.
fn settled(kapi: &Kapi, name: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (code, cidr) = kapi.request("GET", &format!("{SERVICE_CIDRS}/{name}"), JSON, None);
        assert_eq!(code, 200, "{cidr}");
        let held = cidr["metadata"]["finalizers"] == json!([FINALIZER]);
        if held && ready_condition(&cidr)["status"] == "True" {
            return cidr;
        }
        assert!(std::time::Instant::now() < deadline, "not settled: {cidr}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

const FINALIZER: &str = "networking.k8s.io/service-cidr-finalizer";

fn ready_condition(cidr: &Value) -> Value {
    condition(cidr, "Ready").cloned().unwrap_or(Value::Null)
}

fn service_cidrs(kapi: &Kapi) {
    // No generation; a status sent on create is dropped.
    let mut extra = service_cidr("extra", json!(["10.100.0.0/24"]));
    let ready = json!({"conditions": [{
        "type": "Ready", "status": "True", "reason": "Mine", "message": "",
        "lastTransitionTime": "2024-01-01T00:00:00Z",
    }]});
    extra["status"] = ready.clone();
    let created = create(kapi, SERVICE_CIDRS, extra);
    assert_eq!(created["metadata"].get("generation"), None, "{created}");
    assert!(created["status"]["conditions"].is_null(), "{created}");
    // Then the controller gives it its finalizer and Ready.
    let extra = settled(kapi, "extra");

    // ValidateServiceCIDR, in kube's words.
    assert_eq!(
        invalid(kapi, "POST", SERVICE_CIDRS, &service_cidr("bad", json!([]))),
        "ServiceCIDR.networking.k8s.io \"bad\" is invalid: spec.cidrs: Required value: at \
         least one CIDR required"
    );
    assert_eq!(
        invalid(
            kapi,
            "POST",
            SERVICE_CIDRS,
            &service_cidr("bad", json!(["10.0.0.1/24", "2001:DB8::/64"]))
        ),
        "ServiceCIDR.networking.k8s.io \"bad\" is invalid: [spec.cidrs[0]: Invalid value: \
         \"10.0.0.1/24\": must not have bits set beyond the prefix length, spec.cidrs[1]: \
         Invalid value: \"2001:DB8::/64\": must be in canonical form (\"2001:db8::/64\")]"
    );
    let message = invalid(
        kapi,
        "POST",
        SERVICE_CIDRS,
        &service_cidr("bad", json!(["10.0.0.0/24", "10.1.0.0/24"])),
    );
    assert!(
        message.ends_with(
            ": may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and \
             2001:db8::/64"
        ),
        "{message}"
    );

    // A CIDR may not change; a second one of the other family may be added.
    let path = format!("{SERVICE_CIDRS}/extra");
    let mut changed = extra.clone();
    changed["spec"]["cidrs"] = json!(["10.101.0.0/24"]);
    assert_eq!(
        invalid(kapi, "PUT", &path, &changed),
        "ServiceCIDR.networking.k8s.io \"extra\" is invalid: spec.cidrs[0]: Invalid value: \
         \"10.101.0.0/24\": field is immutable"
    );
    let mut dual = extra.clone();
    dual["spec"]["cidrs"] = json!(["10.100.0.0/24", "2001:db8::/64"]);
    dual["status"] = ready.clone();
    let dual = update(kapi, &path, &dual);
    assert_eq!(
        dual["spec"]["cidrs"],
        json!(["10.100.0.0/24", "2001:db8::/64"])
    );
    // The main resource does not write status ...
    assert_eq!(
        dual["status"]["conditions"][0]["message"], "Kubernetes Service CIDR is ready",
        "{dual}"
    );
    // ... and /status writes nothing else.
    let mut status = dual.clone();
    status["status"] = ready;
    status["spec"]["cidrs"] = json!(["10.102.0.0/24"]);
    let written = update(kapi, &format!("{path}/status"), &status);
    assert_eq!(
        written["status"]["conditions"][0]["reason"], "Mine",
        "{written}"
    );
    assert_eq!(
        written["spec"]["cidrs"],
        json!(["10.100.0.0/24", "2001:db8::/64"])
    );
    assert_eq!(
        row(kapi, SERVICE_CIDRS, "extra", &["CIDRs"]),
        vec![json!("10.100.0.0/24,2001:db8::/64")]
    );
    assert_eq!(
        kubectl_rows(kapi, &["get", "servicecidrs"]),
        vec![
            strs(&["NAME", "CIDRS"]),
            strs(&["extra", "10.100.0.0/24,2001:db8::/64"]),
            strs(&["kubernetes", "10.96.0.0/16"]),
        ]
    );
}

/// Go clients send an empty list without `omitempty` as `null`; kube reads it as empty.
/// So do EndpointSlice, CSINode and LimitRange here (kapi answers with `[]`).
#[test]
fn lists_go_clients_send_as_null_are_empty() {
    let kapi = Kapi::start(Backend::Embedded);
    for (name, endpoints) in [("null", Some(Value::Null)), ("absent", None)] {
        let mut body = slice(name, json!({}));
        match endpoints {
            Some(v) => body["endpoints"] = v,
            None => {
                body.as_object_mut().expect("slice").remove("endpoints");
            }
        }
        let (code, out) = kapi.request("POST", SLICES, "application/json", Some(&body));
        assert_eq!(code, 201, "{name}: {out}");
        assert_eq!(out["endpoints"], json!([]), "{out}");
    }
    let (code, out) = kapi.request(
        "POST",
        "/apis/storage.k8s.io/v1/csinodes",
        "application/json",
        Some(
            &json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": "node-1"}, "spec": {"drivers": null}}),
        ),
    );
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["spec"]["drivers"], json!([]), "{out}");
    let (code, out) = kapi.request(
        "POST",
        "/api/v1/namespaces/default/limitranges",
        "application/json",
        Some(&json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "none"}, "spec": {"limits": null}})),
    );
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["spec"]["limits"], json!([]), "{out}");
}

/// kube's `WarningsOnCreate`/`WarningsOnUpdate` reach the client as `Warning` headers:
/// FQDN slices are deprecated, and addresses not in their standard form are named,
/// except in what kube's own controllers write.
#[test]
fn endpoint_warnings_reach_the_client() {
    let kapi = Kapi::start(Backend::Embedded);
    let post = |path: &str, body: &Value| {
        let bytes = serde_json::to_vec(body).expect("json");
        kapi.exchange("POST", path, "application/json", None, Some(&bytes))
    };
    let fqdn = slice(
        "names",
        json!({"addressType": "FQDN", "endpoints": [{"addresses": ["db.example.com"]}]}),
    );
    let out = post(SLICES, &fqdn);
    assert_eq!(out.code, 201, "{}", out.body);
    assert_eq!(
        out.warnings,
        ["299 - \"spec.addressType: FQDN endpoints are deprecated\""]
    );
    let odd = slice(
        "odd",
        json!({"addressType": "IPv6", "endpoints": [{"addresses": ["2001:db8:0:0::2", "2001:db8::3"]}]}),
    );
    let out = post(SLICES, &odd);
    assert_eq!(out.code, 201, "{}", out.body);
    assert_eq!(
        out.warnings,
        [
            "299 - \"endpoints[0].addresses[0]: IPv6 address \\\"2001:db8:0:0::2\\\" should be in RFC 5952 canonical format (\\\"2001:db8::2\\\")\""
        ]
    );
    // What kube's EndpointSlice controller writes is trusted.
    let mut managed = odd.clone();
    managed["metadata"]["name"] = json!("managed");
    managed["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] =
        json!("endpointslice-controller.k8s.io");
    let out = post(SLICES, &managed);
    assert_eq!(out.code, 201, "{}", out.body);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // Core Endpoints, on update too.
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "notReadyAddresses": [{"ip": "::ffff:10.0.0.2"}]}]});
    let out = post("/api/v1/namespaces/default/endpoints", &endpoints);
    assert_eq!(out.code, 201, "{}", out.body);
    let expected = [
        "299 - \"subsets[0].notReadyAddresses[0].ip: non-standard IP address \\\"::ffff:10.0.0.2\\\" will be considered invalid in a future Kubernetes release: use \\\"10.0.0.2\\\"\"",
    ];
    assert_eq!(out.warnings, expected);
    let bytes = serde_json::to_vec(&endpoints).expect("json");
    let out = kapi.exchange(
        "PUT",
        "/api/v1/namespaces/default/endpoints/web",
        "application/json",
        None,
        Some(&bytes),
    );
    assert_eq!(out.code, 200, "{}", out.body);
    assert_eq!(out.warnings, expected);
}

/// kubectl shows an Ingress's deprecated class annotation as kube's warning.
#[test]
fn kubectl_shows_the_ingress_class_annotation_warning() {
    let kapi = Kapi::start(Backend::Embedded);
    let yaml = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: old-style\n  annotations:\n    kubernetes.io/ingress.class: nginx\nspec:\n  defaultBackend:\n    service:\n      name: web\n      port:\n        number: 80\n";
    let out = kapi.kubectl_version(None, &["create", "-f", "-"], Some(yaml));
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead"),
        "{stderr}"
    );
}
