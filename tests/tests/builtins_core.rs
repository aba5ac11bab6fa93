//! The non-workload built-in kinds against a real server, over raw HTTP and kubectl:
//! kube's defaults as stored, kube's validation messages (422 with the exact causes),
//! fields that may not change, and the Table cells kube's printers compute (through the
//! Table API and `kubectl get`, `-o wide` where kube has wide columns).

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// A valid-looking CSR (a PEM `CERTIFICATE REQUEST` block), base64 as the API carries it.
const CSR_PEM: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlJQlZqQ0J3QUlCQURBWE1SVXdFd1lEVlFRRERBeHJZWEJwTFdWNFlXMXdiR1U9Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";
/// A PEM `CERTIFICATE` block: the wrong type for a request.
const CERT_PEM: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJWakNCd0FJQkFEQVgKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";

/// POSTs `body` to `path`, expecting 201; returns the stored object.
fn create(kapi: &Kapi, path: &str, body: Value) -> Value {
    let (code, obj) = kapi.request("POST", path, JSON, Some(&body));
    assert_eq!(code, 201, "POST {path}: {obj}");
    obj
}

/// PUTs `body` to `path`, expecting 200; returns the stored object.
fn update(kapi: &Kapi, path: &str, body: &Value) -> Value {
    let (code, obj) = kapi.request("PUT", path, JSON, Some(body));
    assert_eq!(code, 200, "PUT {path}: {obj}");
    obj
}

/// Sends `body` expecting 422 Invalid; returns the Status message.
fn invalid(kapi: &Kapi, method: &str, path: &str, body: &Value) -> String {
    let (code, status) = kapi.request(method, path, JSON, Some(body));
    assert_eq!(code, 422, "{method} {path} should be invalid: {status}");
    assert_eq!(status["reason"], "Invalid", "{status}");
    status["message"].as_str().unwrap_or("").to_string()
}

/// The Table of `path` (a list), as `name → cells by column name`, from the server's
/// Table conversion.
fn table(kapi: &Kapi, path: &str) -> Vec<(String, serde_json::Map<String, Value>)> {
    let mut res = kapi
        .agent()
        .get(&format!("{}{path}", kapi.url()))
        .header("Accept", TABLE)
        .call()
        .expect("a Table");
    let t: Value = res.body_mut().read_json().expect("Table JSON");
    let names: Vec<String> = t["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or("").to_string())
        .collect();
    t["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let cells = r["cells"].as_array().expect("cells");
            let map = names.iter().cloned().zip(cells.iter().cloned()).collect();
            (cells[0].as_str().unwrap_or("").to_string(), map)
        })
        .collect()
}

/// The cells of `name`'s row for `columns`.
fn row(kapi: &Kapi, path: &str, name: &str, columns: &[&str]) -> Vec<Value> {
    let rows = table(kapi, path);
    let (_, cells) = rows
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no row {name} in {path}: {rows:?}"));
    columns
        .iter()
        .map(|c| {
            cells
                .get(*c)
                .cloned()
                .unwrap_or_else(|| panic!("no column {c}"))
        })
        .collect()
}

/// `kubectl get` output as rows of cells, cut at the header's column starts (so empty
/// cells stay in place), without the AGE column.
fn kubectl_rows(kapi: &Kapi, args: &[&str]) -> Vec<Vec<String>> {
    let out = kapi.kubectl(args);
    let mut lines = out.lines();
    let header = lines.next().expect("a header");
    let mut starts = Vec::new();
    let mut prev_space = true;
    let mut spaces = 0;
    for (i, c) in header.char_indices() {
        if c != ' ' && (i == 0 || (prev_space && spaces >= 2)) {
            starts.push(i);
        }
        if c == ' ' {
            spaces += 1;
        } else {
            spaces = 0;
        }
        prev_space = c == ' ';
    }
    let cut = |line: &str| -> Vec<String> {
        starts
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let e = starts
                    .get(k + 1)
                    .copied()
                    .unwrap_or(line.len())
                    .min(line.len());
                line.get(s.min(line.len())..e)
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })
            .collect()
    };
    let names = cut(header);
    let age = names.iter().position(|n| n == "AGE" || n == "CREATED AT");
    std::iter::once(header)
        .chain(lines)
        .map(|l| {
            let mut cells = cut(l);
            if let Some(a) = age {
                cells.remove(a);
            }
            cells
        })
        .collect()
}

/// Column values as strings for comparison.
fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

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
    assert_eq!(stored["spec"].get("username"), None);
    assert_eq!(stored["spec"].get("groups"), None);
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
            json!(""),
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

#[test]
fn nodes_storage_and_policy() {
    let kapi = Kapi::start(Backend::Embedded);

    // Nodes: the Status, Roles and wide columns from labels, conditions and node info.
    let nodes = "/api/v1/nodes";
    let node = create(
        &kapi,
        nodes,
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": ""}},
               "spec": {"unschedulable": true}}),
    );
    assert_eq!(node["metadata"].get("generation"), None);
    create(
        &kapi,
        nodes,
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}),
    );
    // A kubelet registers its node with its status, which is kept.
    let registered = create(
        &kapi,
        nodes,
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n3"},
               "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
    );
    assert_eq!(
        registered["status"]["conditions"],
        json!([{"type": "Ready", "status": "False"}])
    );
    let (code, _) = kapi.request("DELETE", "/api/v1/nodes/n3", "application/json", None);
    assert_eq!(code, 200);
    let mut with_status = node.clone();
    with_status["status"] = json!({
        "conditions": [{"type": "Ready", "status": "True"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
        "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian", "kernelVersion": "6.1",
                     "containerRuntimeVersion": "containerd://2.0", "architecture": "amd64", "bootID": "",
                     "kubeProxyVersion": "", "machineID": "", "operatingSystem": "linux", "systemUUID": ""}});
    update(&kapi, "/api/v1/nodes/n1/status", &with_status);
    assert_eq!(
        kubectl_rows(&kapi, &["get", "nodes", "-o", "wide"]),
        vec![
            strs(&[
                "NAME",
                "STATUS",
                "ROLES",
                "VERSION",
                "INTERNAL-IP",
                "EXTERNAL-IP",
                "OS-IMAGE",
                "KERNEL-VERSION",
                "CONTAINER-RUNTIME"
            ]),
            strs(&[
                "n1",
                "Ready,SchedulingDisabled",
                "control-plane,etcd",
                "v1.33.0",
                "10.0.0.1",
                "<none>",
                "Debian",
                "6.1",
                "containerd://2.0"
            ]),
            strs(&[
                "n2",
                "Unknown",
                "<none>",
                "",
                "<none>",
                "<none>",
                "<unknown>",
                "<unknown>",
                "<unknown>"
            ]),
        ]
    );

    // PersistentVolumes: defaults, Pending, one volume source.
    let pvs = "/api/v1/persistentvolumes";
    let pv = create(
        &kapi,
        pvs,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
               "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "hostPath": {"path": "/data"},
                        "claimRef": {"namespace": "default", "name": "data"}, "storageClassName": "fast"}}),
    );
    assert_eq!(pv["status"], json!({"phase": "Pending"}));
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            pvs,
            &json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv2"}, "spec": {"capacity": {"storage": "1Gi"}}})
        ),
        "PersistentVolume \"pv2\" is invalid: [spec.accessModes: Required value, spec: Required \
         value: must specify a volume type]"
    );
    assert_eq!(
        row(
            &kapi,
            pvs,
            "pv1",
            &[
                "Capacity",
                "Access Modes",
                "Reclaim Policy",
                "Status",
                "Claim",
                "StorageClass"
            ]
        ),
        vec![
            json!("5Gi"),
            json!("RWO,ROX"),
            json!("Retain"),
            json!("Pending"),
            json!("default/data"),
            json!("fast")
        ]
    );

    // PersistentVolumeClaims: Pending, a fixed spec.
    let pvcs = "/api/v1/namespaces/default/persistentvolumeclaims";
    let pvc = create(
        &kapi,
        pvcs,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "fast"}}),
    );
    assert_eq!(pvc["status"], json!({"phase": "Pending"}));
    assert_eq!(pvc["spec"]["volumeMode"], "Filesystem");
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            pvcs,
            &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "bad"}, "spec": {"accessModes": ["ReadWriteSometimes"]}})
        ),
        "PersistentVolumeClaim \"bad\" is invalid: [spec.accessModes: Unsupported value: \
         \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \
         \"ReadWriteOnce\", \"ReadWriteOncePod\", spec.resources[storage]: Required value]"
    );
    let mut grown = pvc.clone();
    grown["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
    assert_eq!(
        invalid(&kapi, "PUT", &format!("{pvcs}/data"), &grown),
        "PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after \
         creation except resources.requests and volumeAttributesClassName for bound claims"
    );
    let mut bound = pvc.clone();
    bound["spec"]["volumeName"] = json!("pv1");
    update(&kapi, &format!("{pvcs}/data"), &bound);
    assert_eq!(
        kubectl_rows(&kapi, &["get", "pvc", "-o", "wide"]),
        vec![
            strs(&[
                "NAME",
                "STATUS",
                "VOLUME",
                "CAPACITY",
                "ACCESS MODES",
                "STORAGECLASS",
                "VOLUMEATTRIBUTESCLASS",
                "VOLUMEMODE"
            ]),
            strs(&[
                "data",
                "Pending",
                "pv1",
                "0",
                "",
                "fast",
                "<unset>",
                "Filesystem"
            ]),
        ]
    );

    // StorageClasses: defaults, fixed provisioner and parameters.
    let scs = "/apis/storage.k8s.io/v1/storageclasses";
    let sc = create(
        &kapi,
        scs,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
               "provisioner": "example.com/disk", "parameters": {"type": "ssd"}}),
    );
    assert_eq!(sc["reclaimPolicy"], "Delete");
    assert_eq!(sc["volumeBindingMode"], "Immediate");
    let mut changed = sc.clone();
    changed["parameters"] = json!({"type": "hdd"});
    changed["provisioner"] = json!("example.com/other");
    assert_eq!(
        invalid(&kapi, "PUT", &format!("{scs}/fast"), &changed),
        "StorageClass.storage.k8s.io \"fast\" is invalid: [parameters: Forbidden: updates to \
         parameters are forbidden., provisioner: Forbidden: updates to provisioner are forbidden.]"
    );
    assert_eq!(
        kubectl_rows(&kapi, &["get", "storageclasses"]),
        vec![
            strs(&[
                "NAME",
                "PROVISIONER",
                "RECLAIMPOLICY",
                "VOLUMEBINDINGMODE",
                "ALLOWVOLUMEEXPANSION"
            ]),
            strs(&["fast", "example.com/disk", "Delete", "Immediate", "false"]),
        ]
    );

    // PodDisruptionBudgets: exclusive bounds, generation, N/A cells.
    let pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
    let pdb = create(
        &kapi,
        pdbs,
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
               "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}}),
    );
    assert_eq!(pdb["metadata"]["generation"], 1);
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            pdbs,
            &json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "both"},
                    "spec": {"minAvailable": 1, "maxUnavailable": "150%"}})
        ),
        "PodDisruptionBudget.policy \"both\" is invalid: [spec: Invalid value: \
         {\"maxUnavailable\":\"150%\",\"minAvailable\":1}: minAvailable and maxUnavailable cannot \
         be both set, spec.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%]"
    );
    assert_eq!(
        kubectl_rows(&kapi, &["get", "pdb"]),
        vec![
            strs(&[
                "NAME",
                "MIN AVAILABLE",
                "MAX UNAVAILABLE",
                "ALLOWED DISRUPTIONS"
            ]),
            strs(&["web", "50%", "N/A", "0"]),
        ]
    );

    // ResourceQuota: status cleared on create.
    let quota = create(
        &kapi,
        "/api/v1/namespaces/default/resourcequotas",
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
               "spec": {"hard": {"pods": "10"}}, "status": {"hard": {"pods": "10"}}}),
    );
    assert_eq!(quota.get("status"), None);
}

#[test]
fn autoscaling_networking_and_the_rest() {
    let kapi = Kapi::start(Backend::Embedded);

    let hpas = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
    let hpa = create(
        &kapi,
        hpas,
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
               "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}}),
    );
    assert_eq!(hpa["spec"]["minReplicas"], 1);
    assert_eq!(
        hpa["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            hpas,
            &json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "bad"},
                    "spec": {"scaleTargetRef": {"kind": "", "name": "web"}, "minReplicas": 3, "maxReplicas": 2}})
        ),
        "HorizontalPodAutoscaler.autoscaling \"bad\" is invalid: [spec.maxReplicas: Invalid value: \
         2: must be greater than or equal to `minReplicas`, spec.scaleTargetRef.kind: Required value]"
    );
    assert_eq!(
        kubectl_rows(&kapi, &["get", "hpa"]),
        vec![
            strs(&[
                "NAME",
                "REFERENCE",
                "TARGETS",
                "MINPODS",
                "MAXPODS",
                "REPLICAS"
            ]),
            strs(&["web", "Deployment/web", "cpu: <unknown>/80%", "1", "5", "0"]),
        ]
    );

    let ings = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
    let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
    create(
        &kapi,
        ings,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
               "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}},
                                  {"host": "b.example.com", "http": {"paths": [{"path": "/", "pathType": "Exact", "backend": backend}]}}],
                        "tls": [{"hosts": ["a.example.com"]}]}}),
    );
    create(
        &kapi,
        ings,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "catchall"},
               "spec": {"ingressClassName": "nginx", "defaultBackend": backend}}),
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            ings,
            &json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "empty"}, "spec": {}})
        ),
        "Ingress.networking.k8s.io \"empty\" is invalid: spec: Invalid value: null: either \
         `defaultBackend` or `rules` must be specified"
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            ings,
            &json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "paths"},
                    "spec": {"rules": [{"host": "10.0.0.1", "http": {"paths": [
                        {"path": "api", "pathType": "Prefix", "backend": backend},
                        {"path": "/", "pathType": "Regex", "backend": {"service": {"name": "web"}}}]}}]}})
        ),
        "Ingress.networking.k8s.io \"paths\" is invalid: [spec.rules[0].host: Invalid value: \
         \"10.0.0.1\": must be a DNS name, not an IP address, spec.rules[0].http.paths[0].path: \
         Invalid value: \"api\": must be an absolute path, spec.rules[0].http.paths[1].pathType: \
         Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \
         \"Prefix\", spec.rules[0].http.paths[1].backend: Required value: port name or number is \
         required]"
    );
    assert_eq!(
        kubectl_rows(&kapi, &["get", "ingresses"]),
        vec![
            strs(&["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS"]),
            strs(&["catchall", "nginx", "*", "", "80"]),
            strs(&[
                "web",
                "<none>",
                "a.example.com,b.example.com",
                "",
                "80, 443"
            ]),
        ]
    );

    let nps = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies";
    for (name, selector) in [
        ("all", json!({})),
        (
            "some",
            json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}, {"key": "canary", "operator": "DoesNotExist"}]}),
        ),
    ] {
        create(
            &kapi,
            nps,
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name}, "spec": {"podSelector": selector}}),
        );
    }
    assert_eq!(
        kubectl_rows(&kapi, &["get", "networkpolicies"]),
        vec![
            strs(&["NAME", "POD-SELECTOR"]),
            strs(&["all", "<none>"]),
            strs(&["some", "app=web,tier in (a,b),!canary"]),
        ]
    );

    let leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    let lease = create(
        &kapi,
        leases,
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "leader"}, "spec": {"holderIdentity": "pod-a"}}),
    );
    assert_eq!(lease["metadata"].get("generation"), None);
    let sas = "/api/v1/namespaces/default/serviceaccounts";
    let sa = create(
        &kapi,
        sas,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}, "secrets": [{"name": "a"}, {"name": "b"}]}),
    );
    assert_eq!(sa["metadata"].get("generation"), None);
    assert_eq!(
        row(&kapi, leases, "leader", &["Holder"]),
        vec![json!("pod-a")]
    );
    assert_eq!(row(&kapi, sas, "robot", &["Secrets"]), vec![json!("2")]);
}

const APISERVICES: &str = "/apis/apiregistration.k8s.io/v1/apiservices";

fn api_service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name}, "spec": spec})
}

#[test]
fn api_services() {
    let kapi = Kapi::start(Backend::Embedded);
    // A local APIService is available at once, whatever status it was sent with.
    let mut local = api_service(
        "v1.local.example.com",
        json!({"group": "local.example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 15}),
    );
    local["status"] =
        json!({"conditions": [{"type": "Available", "status": "False", "reason": "Mine"}]});
    let stored = create(&kapi, APISERVICES, local);
    let condition = &stored["status"]["conditions"][0];
    assert_eq!(
        (
            &condition["type"],
            &condition["status"],
            &condition["reason"],
            &condition["message"]
        ),
        (
            &json!("Available"),
            &json!("True"),
            &json!("Local"),
            &json!("Local APIServices are always available")
        ),
        "{stored}"
    );
    assert_eq!(stored["metadata"].get("generation"), None);
    // One behind a service: the port defaults to 443, the status starts empty.
    let remote = create(
        &kapi,
        APISERVICES,
        api_service(
            "v1beta1.metrics.k8s.io",
            json!({"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
                   "versionPriority": 100, "insecureSkipTLSVerify": true,
                   "service": {"namespace": "kube-system", "name": "metrics-server"}}),
        ),
    );
    assert_eq!(remote["spec"]["service"]["port"], 443);
    assert_eq!(remote["status"], json!({}));

    assert_eq!(
        invalid(
            &kapi,
            "POST",
            APISERVICES,
            &api_service(
                "v2.foo",
                json!({"group": "Foo_Bar", "version": "v2", "groupPriorityMinimum": 0,
                       "versionPriority": 2000, "caBundle": "aGVsbG8=", "insecureSkipTLSVerify": true,
                       "service": {"namespace": "", "port": 70000}})
            )
        ),
        "APIService.apiregistration.k8s.io \"v2.foo\" is invalid: [metadata.name: Invalid value: \
         \"v2.foo\": must be `spec.version+\".\"+spec.group`: \"v2.Foo_Bar\", spec.group: Invalid \
         value: \"Foo_Bar\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
         characters, '-' or '.', and must start and end with an alphanumeric character (e.g. \
         'example.com', regex used for validation is \
         '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), \
         spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000, \
         spec.versionPriority: Invalid value: 2000: must be positive and less than 1000, \
         spec.service.namespace: Required value, spec.service.name: Required value, \
         spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and \
         65535, inclusive, spec.insecureSkipTLSVerify: Invalid value: true: may not be true if \
         caBundle is present]"
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            APISERVICES,
            &api_service(
                "v2.",
                json!({"group": "", "version": "v2", "groupPriorityMinimum": 1, "versionPriority": 1,
                       "caBundle": "aGVsbG8="})
            )
        ),
        "APIService.apiregistration.k8s.io \"v2.\" is invalid: [spec.group: Required value: only \
         v1 may have an empty group and it better be legacy kube, spec.caBundle: Invalid value: \
         \"5 bytes\": local APIServices may not have a caBundle]"
    );
    // kube-aggregator's strategy takes no update without a resourceVersion.
    let local_path = format!("{APISERVICES}/v1.local.example.com");
    let mut unconditional = stored.clone();
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    assert_eq!(
        invalid(&kapi, "PUT", &local_path, &unconditional),
        "APIService.apiregistration.k8s.io \"v1.local.example.com\" is invalid: \
         metadata.resourceVersion: Invalid value: 0: must be specified for an update"
    );

    // Table cells as kube-aggregator prints them (`False (Reason)` is in the unit tests:
    // an availability controller may rewrite a status written here).
    assert_eq!(
        row(
            &kapi,
            APISERVICES,
            "v1.local.example.com",
            &["Service", "Available"]
        ),
        vec![json!("Local"), json!("True")]
    );
    assert_eq!(
        row(&kapi, APISERVICES, "v1beta1.metrics.k8s.io", &["Service"]),
        vec![json!("kube-system/metrics-server")]
    );
    let rows = kubectl_rows(&kapi, &["get", "apiservices"]);
    assert_eq!(rows[0], strs(&["NAME", "SERVICE", "AVAILABLE"]));
    assert!(
        rows.contains(&strs(&["v1.local.example.com", "Local", "True"])),
        "{rows:?}"
    );

    // An update of the main resource keeps the status; /status keeps the spec and checks
    // the conditions.
    let merge = "application/merge-patch+json";
    let (code, patched) = kapi.request(
        "PATCH",
        &local_path,
        merge,
        Some(&json!({"spec": {"versionPriority": 20}, "status": {"conditions": []}})),
    );
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["spec"]["versionPriority"], 20);
    assert_eq!(patched["status"], stored["status"]);
    let (code, patched) = kapi.request(
        "PATCH",
        &format!("{local_path}/status"),
        merge,
        Some(
            &json!({"spec": {"versionPriority": 30}, "status": {"conditions": [
            {"type": "Available", "status": "False", "reason": "Stopped"}]}}),
        ),
    );
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["spec"]["versionPriority"], 20);
    assert_eq!(patched["status"]["conditions"][0]["reason"], "Stopped");
    let (code, status) = kapi.request(
        "PATCH",
        &format!("{local_path}/status"),
        merge,
        Some(&json!({"status": {"conditions": [{"type": "Available", "status": "Maybe"}]}})),
    );
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "APIService.apiregistration.k8s.io \"v1.local.example.com\" is invalid: \
         status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"True\", \
         \"False\", \"Unknown\""
    );
}
