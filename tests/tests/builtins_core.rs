//! The non-workload built-in kinds against a real server, over raw HTTP and kubectl:
//! kube's defaults as stored, kube's validation messages (422 with the exact causes),
//! fields that may not change, and the Table cells kube's printers compute (through the
//! Table API and `kubectl get`, `-o wide` where kube has wide columns). This suite:
//! Services and Endpoints, RBAC, CertificateSigningRequests and Events;
//! `builtins_cluster.rs` and `builtins_classes.rs` have the rest.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

#[path = "support/builtins.rs"]
mod support;
use support::*;

/// A valid-looking CSR (a PEM `CERTIFICATE REQUEST` block), base64 as the API carries it.
const CSR_PEM: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlJQlZqQ0J3QUlCQURBWE1SVXdFd1lEVlFRRERBeHJZWEJwTFdWNFlXMXdiR1U9Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";
/// A PEM `CERTIFICATE` block: the wrong type for a request.
const CERT_PEM: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJWakNCd0FJQkFEQVgKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";

const SERVICES: &str = "/api/v1/namespaces/default/services";

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

#[test]
fn services_and_endpoints() {
    let kapi = Kapi::start(Backend::Embedded);

    // kube's v1 defaults, and no status or generation.
    let web = create(
        &kapi,
        SERVICES,
        service(
            "web",
            json!({"selector": {"app": "web"}, "ports": [{"port": 80}], "status": {}}),
        ),
    );
    let spec = &web["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(
        spec["ports"],
        json!([{"port": 80, "protocol": "TCP", "targetPort": 80}])
    );
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(spec.get("externalTrafficPolicy"), None);
    assert_eq!(spec.get("allocateLoadBalancerNodePorts"), None);
    assert_eq!(web["metadata"].get("generation"), None);

    let lb = create(
        &kapi,
        SERVICES,
        service(
            "lb",
            json!({"type": "LoadBalancer", "ports": [{"name": "http", "port": 80, "targetPort": "web", "nodePort": 30080}, {"name": "dns", "port": 53, "protocol": "UDP", "nodePort": 30053}]}),
        ),
    );
    assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(lb["spec"]["ports"][0]["targetPort"], "web");

    create(
        &kapi,
        SERVICES,
        service(
            "fixed",
            json!({"clusterIP": "10.0.0.10", "ports": [{"port": 443, "targetPort": 8443}], "externalIPs": ["192.0.2.1"]}),
        ),
    );
    let fixed = create(
        &kapi,
        SERVICES,
        service(
            "headless",
            json!({"clusterIP": "None", "selector": {"app": "db", "tier": "back"}}),
        ),
    );
    assert_eq!(fixed["spec"]["clusterIPs"], json!(["None"]));
    let ext = create(
        &kapi,
        SERVICES,
        service(
            "ext",
            json!({"type": "ExternalName", "externalName": "example.com"}),
        ),
    );
    assert_eq!(ext["spec"].get("ipFamilyPolicy"), None);
    assert_eq!(ext["spec"].get("internalTrafficPolicy"), None);

    // Validation, with kube's messages.
    assert_eq!(
        invalid(&kapi, "POST", SERVICES, &service("noports", json!({}))),
        "Service \"noports\" is invalid: spec.ports: Required value"
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SERVICES,
            &service(
                "twoports",
                json!({"ports": [{"port": 80}, {"port": 70000, "protocol": "HTTP"}]})
            )
        ),
        "Service \"twoports\" is invalid: [spec.ports[0].name: Required value, \
         spec.ports[1].name: Required value, \
         spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive, \
         spec.ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\", \
         spec.ports[1].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]"
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SERVICES,
            &service(
                "dup",
                json!({"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]})
            )
        ),
        "Service \"dup\" is invalid: spec.ports[1].name: Duplicate value: \"a\""
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SERVICES,
            &service("noname", json!({"type": "ExternalName"}))
        ),
        "Service \"noname\" is invalid: spec.externalName: Required value"
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SERVICES,
            &service("kind", json!({"type": "Magic", "ports": [{"port": 80}]}))
        ),
        "Service \"kind\" is invalid: spec.type: Unsupported value: \"Magic\": supported values: \
         \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SERVICES,
            &service(
                "badip",
                json!({"clusterIP": "10.0.0.300", "ports": [{"port": 80}]})
            )
        ),
        "Service \"badip\" is invalid: spec.clusterIPs[0]: Invalid value: \"10.0.0.300\": \
         must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            SERVICES,
            &service("np", json!({"ports": [{"port": 80, "nodePort": 30001}]}))
        ),
        "Service \"np\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when \
         `type` is 'ClusterIP'"
    );

    // The cluster IP stays; a PUT that leaves it out keeps it.
    let path = format!("{SERVICES}/fixed");
    let mut changed = kapi.request("GET", &path, JSON, None).1;
    changed["spec"]["clusterIP"] = json!("10.0.0.11");
    changed["spec"]["clusterIPs"] = json!(["10.0.0.11"]);
    assert_eq!(
        invalid(&kapi, "PUT", &path, &changed),
        "Service \"fixed\" is invalid: spec.clusterIPs[0]: Invalid value: \"10.0.0.11\": \
         may not change once set"
    );
    let mut left_out = kapi.request("GET", &path, JSON, None).1;
    let spec = left_out["spec"].as_object_mut().expect("a spec");
    spec.remove("clusterIP");
    spec.remove("clusterIPs");
    let kept = update(&kapi, &path, &left_out);
    assert_eq!(kept["spec"]["clusterIPs"], json!(["10.0.0.10"]));

    // Table cells as kube prints them, with the cluster IPs the allocator gave.
    let ip_of = |name: &str| {
        let (_, svc) = kapi.request("GET", &format!("{SERVICES}/{name}"), JSON, None);
        svc["spec"]["clusterIP"]
            .as_str()
            .expect("a cluster IP")
            .to_string()
    };
    let (lb_ip, web_ip) = (ip_of("lb"), ip_of("web"));
    let cols = ["Type", "Cluster-IP", "External-IP", "Port(s)", "Selector"];
    assert_eq!(
        row(&kapi, SERVICES, "lb", &cols),
        vec![
            json!("LoadBalancer"),
            json!(lb_ip),
            json!("<pending>"),
            json!("80:30080/TCP,53:30053/UDP"),
            json!("<none>")
        ]
    );
    let rows = kubectl_rows(&kapi, &["get", "services", "-o", "wide"]);
    assert_eq!(
        rows,
        vec![
            strs(&[
                "NAME",
                "TYPE",
                "CLUSTER-IP",
                "EXTERNAL-IP",
                "PORT(S)",
                "SELECTOR"
            ]),
            strs(&[
                "ext",
                "ExternalName",
                "<none>",
                "example.com",
                "<none>",
                "<none>"
            ]),
            strs(&[
                "fixed",
                "ClusterIP",
                "10.0.0.10",
                "192.0.2.1",
                "443/TCP",
                "<none>"
            ]),
            strs(&[
                "headless",
                "ClusterIP",
                "None",
                "<none>",
                "<none>",
                "app=db,tier=back"
            ]),
            strs(&[
                "lb",
                "LoadBalancer",
                &lb_ip,
                "<pending>",
                "80:30080/TCP,53:30053/UDP",
                "<none>"
            ]),
            strs(&["web", "ClusterIP", &web_ip, "<none>", "80/TCP", "app=web"]),
        ]
    );

    // Endpoints: no generation, `ip:port` cells.
    let eps = "/api/v1/namespaces/default/endpoints";
    let ep = create(
        &kapi,
        eps,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
               "subsets": [{"addresses": [{"ip": "10.1.0.1"}, {"ip": "10.1.0.2"}, {"ip": "10.1.0.3"}, {"ip": "10.1.0.4"}],
                            "ports": [{"port": 8080}]}]}),
    );
    assert_eq!(ep["metadata"].get("generation"), None);
    assert_eq!(
        row(&kapi, eps, "web", &["Endpoints"]),
        vec![json!(
            "10.1.0.1:8080,10.1.0.2:8080,10.1.0.3:8080 + 1 more..."
        )]
    );
}

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

#[test]
fn rbac() {
    let kapi = Kapi::start(Backend::Embedded);
    let roles = format!("{RBAC}/namespaces/default/roles");
    let role = |rules: Value| json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"}, "rules": rules});
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &roles,
            &role(json!([{"verbs": [], "resources": ["pods"]}]))
        ),
        "Role.rbac.authorization.k8s.io \"r\" is invalid: [rules[0].verbs: Required value: verbs \
         must contain at least one value, rules[0].apiGroups: Required value: resource rules must \
         supply at least one api group]"
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &roles,
            &role(json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]))
        ),
        "Role.rbac.authorization.k8s.io \"r\" is invalid: rules[0].nonResourceURLs: Invalid value: \
         [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs"
    );
    let created = create(
        &kapi,
        &roles,
        role(json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}])),
    );
    assert_eq!(created["metadata"].get("generation"), None);
    create(
        &kapi,
        &format!("{RBAC}/clusterroles"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "health"},
               "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}),
    );

    let bindings = format!("{RBAC}/namespaces/default/rolebindings");
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "read"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                     {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}]});
    let stored = create(&kapi, &bindings, binding.clone());
    assert_eq!(
        stored["subjects"],
        json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
               {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"},
               {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}])
    );
    let mut bad = binding.clone();
    bad["metadata"]["name"] = json!("bad");
    bad["roleRef"]["kind"] = json!("Secret");
    bad["subjects"] = json!([{"kind": "Robot", "name": "x"}, {"kind": "ServiceAccount", "name": "sa", "apiGroup": "v1"}]);
    assert_eq!(
        invalid(&kapi, "POST", &bindings, &bad),
        "RoleBinding.rbac.authorization.k8s.io \"bad\" is invalid: [roleRef.kind: Unsupported value: \
         \"Secret\": supported values: \"Role\", \"ClusterRole\", subjects[0].kind: Unsupported value: \
         \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\", subjects[1].apiGroup: \
         Unsupported value: \"v1\": supported values: \"\"]"
    );
    let mut moved = stored.clone();
    moved["roleRef"]["name"] = json!("other");
    assert_eq!(
        invalid(&kapi, "PUT", &format!("{bindings}/read"), &moved),
        "RoleBinding.rbac.authorization.k8s.io \"read\" is invalid: roleRef: Invalid value: \
         {\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"other\"}: cannot change roleRef"
    );

    let crbs = format!("{RBAC}/clusterrolebindings");
    let crb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "c"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot"}]});
    assert_eq!(
        invalid(&kapi, "POST", &crbs, &crb),
        "ClusterRoleBinding.rbac.authorization.k8s.io \"c\" is invalid: [roleRef.kind: Unsupported \
         value: \"Role\": supported values: \"ClusterRole\", subjects[0].namespace: Required value]"
    );

    assert_eq!(
        kubectl_rows(&kapi, &["get", "rolebindings", "-o", "wide"]),
        vec![
            strs(&["NAME", "ROLE", "USERS", "GROUPS", "SERVICEACCOUNTS"]),
            strs(&["read", "Role/r", "alice", "devs", "default/robot"]),
        ]
    );
}

const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

fn csr(name: &str, request: &str, signer: &str, usages: Value) -> Value {
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
           "spec": {"request": request, "signerName": signer, "usages": usages, "username": "mallory", "groups": ["system:masters"]},
           "status": {"conditions": [{"type": "Approved", "status": "True"}]}})
}

#[test]
fn certificate_signing_requests() {
    let kapi = Kapi::start(Backend::Embedded);
    let stored = create(
        &kapi,
        CSRS,
        csr("ok", CSR_PEM, "example.com/signer", json!(["client auth"])),
    );
    assert_eq!(stored["status"], json!({}));
    // The requester is the caller, not what the body claims.
    assert_eq!(stored["spec"]["username"], "kapi-admin");
    assert_eq!(
        stored["spec"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    assert_eq!(stored["metadata"].get("generation"), None);

    assert_eq!(
        invalid(
            &kapi,
            "POST",
            CSRS,
            &csr("bad", CERT_PEM, "signer", json!(["client auth", "flying"]))
        ),
        format!(
            "CertificateSigningRequest.certificates.k8s.io \"bad\" is invalid: [spec.request: Invalid \
             value: \"{CERT_PEM}\": PEM block type must be CERTIFICATE REQUEST, spec.usages[1]: \
             Unsupported value: \"flying\": supported values: \"any\", \"cert sign\", \"client auth\", \
             \"code signing\", \"content commitment\", \"crl sign\", \"data encipherment\", \
             \"decipher only\", \"digital signature\", \"email protection\", \"encipher only\", \
             \"ipsec end system\", \"ipsec tunnel\", \"ipsec user\", \"key agreement\", \
             \"key encipherment\", \"microsoft sgc\", \"netscape sgc\", \"ocsp signing\", \"s/mime\", \
             \"server auth\", \"signing\", \"timestamping\", spec.signerName: Invalid value: \
             \"signer\": must be a fully qualified domain and path of the form \
             'example.com/signer-name']"
        )
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            CSRS,
            &csr("nousage", CSR_PEM, "example.com/signer", json!([]))
        ),
        "CertificateSigningRequest.certificates.k8s.io \"nousage\" is invalid: spec.usages: \
         Required value: usages must be provided"
    );

    // The spec never changes after create.
    let mut changed = stored.clone();
    changed["spec"]["signerName"] = json!("example.com/other");
    changed["metadata"]["labels"] = json!({"team": "a"});
    let kept = update(&kapi, &format!("{CSRS}/ok"), &changed);
    assert_eq!(kept["spec"]["signerName"], "example.com/signer");
    assert_eq!(kept["metadata"]["labels"], json!({"team": "a"}));

    assert_eq!(
        row(
            &kapi,
            CSRS,
            "ok",
            &["SignerName", "Requestor", "RequestedDuration", "Condition"]
        ),
        vec![
            json!("example.com/signer"),
            json!("kapi-admin"),
            Value::Null,
            json!("Pending")
        ]
    );
}

#[test]
fn events() {
    let kapi = Kapi::start(Backend::Embedded);
    let core = "/api/v1/namespaces/default/events";
    let event = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "default"},
        "reason": "Started", "message": "Started container", "type": "Normal",
        "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z", "count": 3});
    let stored = create(&kapi, core, event.clone());
    assert_eq!(stored["count"], 3);
    assert_eq!(stored["metadata"].get("generation"), None);
    let mut other = event.clone();
    other["metadata"]["name"] = json!("e2");
    other["involvedObject"]["namespace"] = json!("other");
    assert_eq!(
        invalid(&kapi, "POST", core, &other),
        "Event \"e2\" is invalid: involvedObject.namespace: Invalid value: \"other\": does not \
         match event.namespace"
    );
    let mut new_style = event.clone();
    new_style["metadata"]["name"] = json!("e3");
    new_style["eventTime"] = json!("2024-01-01T00:00:00.000000Z");
    assert_eq!(
        invalid(&kapi, "POST", core, &new_style),
        "Event \"e3\" is invalid: [reportingComponent: Required value, reportingComponent: Invalid \
         value: \"\": name part must be non-empty, reportingComponent: Invalid value: \"\": name \
         part must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
         with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used \
         for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), reportingInstance: \
         Required value, action: Required value]"
    );
    assert_eq!(
        row(
            &kapi,
            core,
            "e1",
            &["Type", "Reason", "Object", "Message", "Count"]
        ),
        vec![
            json!("Normal"),
            json!("Started"),
            json!("pod/web-0"),
            json!("Started container"),
            json!(3)
        ]
    );

    let v1 = "/apis/events.k8s.io/v1/namespaces/default/events";
    let ev = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "n1"},
        "eventTime": "2024-01-01T00:00:00.000000Z", "regarding": {"kind": "Pod", "name": "web-0", "namespace": "default"},
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-1", "action": "Scale",
        "reason": "Scaled", "note": "scaled up", "type": "Normal"});
    create(&kapi, v1, ev.clone());
    let mut bad = ev.clone();
    bad["metadata"]["name"] = json!("n2");
    bad["type"] = json!("Odd");
    bad["series"] = json!({"count": 1, "lastObservedTime": "2024-01-01T00:00:00.000000Z"});
    bad["deprecatedCount"] = json!(2);
    bad.as_object_mut().expect("an object").remove("action");
    assert_eq!(
        invalid(&kapi, "POST", v1, &bad),
        "Event.events.k8s.io \"n2\" is invalid: [action: Required value, series.count: Invalid \
         value: \"\": should be at least 2, type: Invalid value: \"\": has invalid value: Odd, \
         count: Invalid value: \"\": needs to be unset]"
    );
    let mut renamed = kapi.request("GET", &format!("{v1}/n1"), JSON, None).1;
    renamed["reason"] = json!("Other");
    assert_eq!(
        invalid(&kapi, "PUT", &format!("{v1}/n1"), &renamed),
        "Event.events.k8s.io \"n1\" is invalid: reason: Invalid value: \"Other\": field is immutable"
    );
}
