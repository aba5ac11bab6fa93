//! The non-workload built-in kinds against a real server, as `builtins_core.rs` tests
//! them (kube's defaults, messages, immutable fields and Table cells): Nodes, storage,
//! policy, autoscaling, networking and APIServices.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

#[path = "support/builtins.rs"]
mod support;
use support::*;

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
