//! The strategies of the workload built-ins over raw HTTP and kubectl, on the embedded
//! backend: kube's defaults in what is stored, kube's validation messages, the fields
//! that may not change, a Job's generated selector, CronJob schedules, and the Table
//! cells kube's printers compute.

use kapi_tests::{Backend, Kapi, causes};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";

fn ns_path(group_version: &str, plural: &str) -> String {
    let prefix = if group_version == "v1" {
        "/api/v1".to_string()
    } else {
        format!("/apis/{group_version}")
    };
    format!("{prefix}/namespaces/default/{plural}")
}

fn create(kapi: &Kapi, gv: &str, plural: &str, body: &Value) -> Value {
    let (code, obj) = kapi.request("POST", &ns_path(gv, plural), JSON, Some(body));
    assert_eq!(code, 201, "{obj}");
    obj
}

fn rejected(kapi: &Kapi, method: &str, path: &str, ct: &str, body: &Value) -> Vec<String> {
    let (code, status) = kapi.request(method, path, ct, Some(body));
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["reason"], "Invalid", "{status}");
    causes(&status)
}

fn container(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image})
}

fn deployment(name: &str, labels: Value, selector: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [container("web", "nginx:1.25")]}
            }
        }
    })
}

/// The PodSpec defaults every template gets (no `enableServiceLinks`: that is a Pod's).
fn defaulted_pod_spec(containers: Value, restart: &str) -> Value {
    json!({
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": restart,
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30
    })
}

fn defaulted_container(name: &str, image: &str, pull: &str) -> Value {
    json!({
        "name": name, "image": image, "imagePullPolicy": pull,
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    })
}

#[test]
fn pods() {
    let kapi = Kapi::start(Backend::Embedded);
    let pods = ns_path("v1", "pods");
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [
            {"name": "a", "image": "nginx", "ports": [{"containerPort": 80}],
             "readinessProbe": {"httpGet": {"port": 80}},
             "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}},
            {"name": "b", "image": "busybox:1.36",
             "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
        ]},
        "status": {"phase": "Running", "podIP": "10.0.0.1"}
    });
    let created = create(&kapi, "v1", "pods", &pod);
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(
        created["status"],
        json!({"phase": "Pending", "qosClass": "Guaranteed"})
    );
    let spec = &created["spec"];
    assert_eq!(spec["enableServiceLinks"], true);
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["securityContext"], json!({}));
    let a = &spec["containers"][0];
    assert_eq!(a["imagePullPolicy"], "Always");
    assert_eq!(a["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(a["terminationMessagePolicy"], "File");
    assert_eq!(a["ports"][0]["protocol"], "TCP");
    assert_eq!(
        a["readinessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
               "timeoutSeconds": 1, "periodSeconds": 10,
               "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(
        a["resources"]["requests"],
        json!({"cpu": "100m", "memory": "64Mi"})
    );
    assert_eq!(spec["containers"][1]["imagePullPolicy"], "IfNotPresent");

    // Validation.
    let mut bad = pod.clone();
    bad["metadata"]["name"] = json!("bad");
    bad["spec"] = json!({
        "initContainers": [{"name": "b", "image": "y"}],
        "containers": [{"name": "Web", "image": "x"}, {"name": "b"}],
        "restartPolicy": "Sometimes"
    });
    assert_eq!(
        rejected(&kapi, "POST", &pods, JSON, &bad),
        [
            "spec.containers[0].name: Invalid value: \"Web\": a lowercase RFC 1123 label must \
             consist of lower case alphanumeric characters or '-', and must start and end with \
             an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for \
             validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            "spec.containers[1].name: Duplicate value: \"b\"",
            "spec.containers[1].image: Required value",
            "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \
             \"Always\", \"OnFailure\", \"Never\"",
        ]
    );
    bad["spec"] = json!({"containers": []});
    assert_eq!(
        rejected(&kapi, "POST", &pods, JSON, &bad),
        ["spec.containers: Required value"]
    );

    // Updates: the image may change (generation follows); other fields may not.
    let p = format!("{pods}/p");
    let (code, updated) = kapi.request(
        "PATCH",
        &p,
        MERGE,
        Some(&json!({"spec": {"activeDeadlineSeconds": 100}})),
    );
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["metadata"]["generation"], 2);
    let mut image = updated.clone();
    image["spec"]["containers"][1]["image"] = json!("busybox:1.37");
    let (code, updated) = kapi.request("PUT", &p, JSON, Some(&image));
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["spec"]["containers"][1]["image"], "busybox:1.37");
    assert_eq!(updated["metadata"]["generation"], 3);
    assert_eq!(updated["status"]["phase"], "Pending");
    assert_eq!(
        rejected(
            &kapi,
            "PATCH",
            &p,
            MERGE,
            &json!({"spec": {"activeDeadlineSeconds": 200}})
        ),
        [
            "spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value"
        ]
    );
    assert_eq!(
        rejected(
            &kapi,
            "PATCH",
            &p,
            MERGE,
            &json!({"spec": {"nodeName": "n1", "hostname": "h"}})
        ),
        [
            "spec: Forbidden: pod updates may not change fields other than \
          `spec.containers[*].image`,`spec.initContainers[*].image`,\
          `spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing \
          tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it \
          was previously negative)"
        ]
    );

    // Table cells, from a status the kubelet would write.
    let mut status = updated.clone();
    status["status"] = json!({
        "phase": "Running", "podIP": "10.0.0.7", "podIPs": [{"ip": "10.0.0.7"}],
        "containerStatuses": [
            {"name": "a", "image": "nginx", "imageID": "", "ready": true, "restartCount": 2,
             "state": {"running": {}}},
            {"name": "b", "image": "busybox", "imageID": "", "ready": false, "restartCount": 1,
             "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
        ]
    });
    let (code, body) = kapi.request("PUT", &format!("{p}/status"), JSON, Some(&status));
    assert_eq!(code, 200, "{body}");
    let wide = kapi.kubectl(&["get", "pod", "p", "-o", "wide", "--no-headers"]);
    let cells: Vec<&str> = wide.split_whitespace().collect();
    assert_eq!(
        [cells[0], cells[1], cells[2], cells[3]],
        ["p", "1/2", "CrashLoopBackOff", "3"],
        "{wide}"
    );
    assert_eq!(
        &cells[5..],
        ["10.0.0.7", "<none>", "<none>", "<none>"],
        "{wide}"
    );
}

#[test]
fn deployments() {
    let kapi = Kapi::start(Backend::Embedded);
    let deploys = ns_path("apps/v1", "deployments");
    let d = create(
        &kapi,
        "apps/v1",
        "deployments",
        &deployment("web", json!({"app": "web"}), json!({"app": "web"})),
    );
    assert_eq!(d["metadata"]["generation"], 1);
    assert_eq!(
        d["spec"],
        json!({
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": defaulted_pod_spec(
                    json!([defaulted_container("web", "nginx:1.25", "IfNotPresent")]),
                    "Always"
                )
            }
        })
    );

    let mut bad = deployment("bad", json!({"app": "x"}), json!({"app": "y"}));
    bad["spec"]["replicas"] = json!(-1);
    bad["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    assert_eq!(
        rejected(&kapi, "POST", &deploys, JSON, &bad),
        [
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: \
             `selector` does not match template `labels`",
            "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \
             \"Always\"",
        ]
    );
    let mut no_selector = deployment("bad", json!({"app": "x"}), json!({}));
    no_selector["spec"]["selector"] = json!({});
    assert_eq!(
        rejected(&kapi, "POST", &deploys, JSON, &no_selector),
        [
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), \
          MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for \
          deployment"
        ]
    );

    // The selector is immutable; the template is not, and bumps the generation.
    let web = format!("{deploys}/web");
    assert_eq!(
        rejected(
            &kapi,
            "PATCH",
            &web,
            MERGE,
            &json!({"spec": {"selector": {"matchLabels": {"app": "web", "v": "2"}},
                             "template": {"metadata": {"labels": {"app": "web", "v": "2"}}}}})
        ),
        [
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string\
          {\"app\":\"web\", \"v\":\"2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: \
          field is immutable"
        ]
    );
    let (code, patched) = kapi.request(
        "PATCH",
        &web,
        MERGE,
        Some(&json!({"spec": {"replicas": 3}})),
    );
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["metadata"]["generation"], 2);

    let mut status = patched.clone();
    status["status"] = json!({"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3});
    let (code, body) = kapi.request("PUT", &format!("{web}/status"), JSON, Some(&status));
    assert_eq!(code, 200, "{body}");
    let out = kapi.kubectl(&["get", "deploy", "web", "-o", "wide"]);
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(
        [&lines[1][..4], &lines[1][5..]].concat(),
        ["web", "2/3", "3", "0", "web", "nginx:1.25", "app=web"],
        "{out}"
    );
}

#[test]
fn replica_sets_stateful_sets_daemon_sets_and_rcs() {
    let kapi = Kapi::start(Backend::Embedded);
    let template = json!({
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [container("c", "registry.k8s.io/pause:3.10")]}
    });
    let selector = json!({"matchLabels": {"app": "x"}});

    let rs = create(
        &kapi,
        "apps/v1",
        "replicasets",
        &json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                "spec": {"selector": selector, "template": template}}),
    );
    assert_eq!(rs["spec"]["replicas"], 1);
    assert_eq!(rs["metadata"]["generation"], 1);
    assert_eq!(
        rs["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(
        rejected(
            &kapi,
            "PATCH",
            &format!("{}/rs", ns_path("apps/v1", "replicasets")),
            MERGE,
            &json!({"spec": {"selector": {"matchLabels": {"app": "y"}}}})
        ),
        [
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: \
             `selector` does not match template `labels`",
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string\
             {\"app\":\"y\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is \
             immutable",
        ]
    );

    let sts = create(
        &kapi,
        "apps/v1",
        "statefulsets",
        &json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                "spec": {"selector": selector, "serviceName": "db", "template": template}}),
    );
    let spec = &sts["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(
        rejected(
            &kapi,
            "PATCH",
            &format!("{}/db", ns_path("apps/v1", "statefulsets")),
            MERGE,
            &json!({"spec": {"serviceName": "other"}})
        ),
        [
            "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', \
          'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', \
          'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
        ]
    );

    let ds = create(
        &kapi,
        "apps/v1",
        "daemonsets",
        &json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                "spec": {"selector": selector, "template": template}}),
    );
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(ds["spec"]["revisionHistoryLimit"], 10);

    // An RC's selector and labels default to its template's labels.
    let rc = create(
        &kapi,
        "v1",
        "replicationcontrollers",
        &json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
                "spec": {"template": template}}),
    );
    assert_eq!(rc["spec"]["selector"], json!({"app": "x"}));
    assert_eq!(rc["metadata"]["labels"], json!({"app": "x"}));
    assert_eq!(rc["spec"]["replicas"], 1);
    let mut bad_rc = json!({"apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": "bad"},
        "spec": {"selector": {"app": "y"}, "template": template}});
    bad_rc["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
    assert_eq!(
        rejected(
            &kapi,
            "POST",
            &ns_path("v1", "replicationcontrollers"),
            JSON,
            &bad_rc
        ),
        [
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: \
             `selector` does not match template `labels`",
            "spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported \
             values: \"Always\"",
        ]
    );

    let out = kapi.kubectl(&["get", "rs,sts,ds,rc", "--no-headers"]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    fn without_age<'a>(r: &[&'a str], age: usize) -> Vec<&'a str> {
        let mut r = r.to_vec();
        r.remove(age);
        r
    }
    assert_eq!(
        without_age(&rows[0], 4),
        ["replicaset.apps/rs", "1", "0", "0"],
        "{out}"
    );
    assert_eq!(
        without_age(&rows[1], 2),
        ["statefulset.apps/db", "0/1"],
        "{out}"
    );
    assert_eq!(
        without_age(&rows[2], 7),
        ["daemonset.apps/agent", "0", "0", "0", "0", "0", "<none>"],
        "{out}"
    );
    assert_eq!(
        without_age(&rows[3], 4),
        ["replicationcontroller/rc", "1", "0", "0"],
        "{out}"
    );
}

#[test]
fn jobs() {
    let kapi = Kapi::start(Backend::Embedded);
    let jobs = ns_path("batch/v1", "jobs");
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
        "spec": {"template": {"spec": {
            "containers": [container("pi", "perl:5.34")], "restartPolicy": "Never"}}}
    });
    let created = create(&kapi, "batch/v1", "jobs", &job);
    let spec = &created["spec"];
    // The selector names the Job's own uid, as kube generates it.
    let uid = spec["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"]
        .as_str()
        .unwrap_or_else(|| panic!("no generated selector: {created}"))
        .to_string();
    assert_eq!(created["metadata"]["uid"], json!(uid));
    let labels = json!({
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi"
    });
    assert_eq!(spec["template"]["metadata"]["labels"], labels);
    assert_eq!(created["metadata"]["labels"], labels);
    assert_eq!(created["metadata"]["generation"], 1);
    for (field, value) in [
        ("parallelism", json!(1)),
        ("completions", json!(1)),
        ("backoffLimit", json!(6)),
        ("completionMode", json!("NonIndexed")),
        ("suspend", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
    ] {
        assert_eq!(spec[field], value, "{field}");
    }
    assert!(spec.get("manualSelector").is_none(), "{spec}");

    // The restart policy must be OnFailure or Never (Always is the PodSpec default).
    let mut bad = job.clone();
    bad["metadata"]["name"] = json!("bad");
    bad["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("restartPolicy");
    assert_eq!(
        rejected(&kapi, "POST", &jobs, JSON, &bad),
        [
            "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \
          \"OnFailure\", \"Never\""
        ]
    );
    // A manual selector must select the template.
    bad["spec"]["manualSelector"] = json!(true);
    bad["spec"]["selector"] = json!({"matchLabels": {"app": "a"}});
    bad["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
    assert_eq!(
        rejected(&kapi, "POST", &jobs, JSON, &bad),
        [
            "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` \
          does not match template `labels`"
        ]
    );

    // The template is immutable.
    let pi = format!("{jobs}/pi");
    let causes = rejected(
        &kapi,
        "PATCH",
        &pi,
        MERGE,
        &json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 5}}}}),
    );
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert!(
        causes[0].starts_with("spec.template: Invalid value: {")
            && causes[0].ends_with("}: field is immutable"),
        "{causes:?}"
    );

    let mut status = created.clone();
    status["status"] = json!({
        "succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
        "completionTime": "2024-01-01T00:01:05Z",
        "conditions": [{"type": "Complete", "status": "True"}]
    });
    let (code, body) = kapi.request("PUT", &format!("{pi}/status"), JSON, Some(&status));
    assert_eq!(code, 200, "{body}");
    let out = kapi.kubectl(&["get", "job", "pi", "--no-headers"]);
    let cells: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(&cells[..4], ["pi", "Complete", "1/1", "65s"], "{out}");
}

#[test]
fn cron_jobs_and_pod_templates() {
    let kapi = Kapi::start(Backend::Embedded);
    let cronjobs = ns_path("batch/v1", "cronjobs");
    let cron = |name: &str, schedule: &str| {
        json!({
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [container("c", "busybox")], "restartPolicy": "OnFailure"}}}}}
        })
    };
    let created = create(
        &kapi,
        "batch/v1",
        "cronjobs",
        &cron("nightly", "0 3 * * mon-fri"),
    );
    let spec = &created["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(
        spec["jobTemplate"]["spec"]["template"]["spec"],
        defaulted_pod_spec(
            json!([defaulted_container("c", "busybox", "Always")]),
            "OnFailure"
        )
    );

    for (schedule, message) in [
        (
            "bad",
            "spec.schedule: Invalid value: \"bad\": expected exactly 5 fields, found 1: [bad]",
        ),
        (
            "61 * * * *",
            "spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum \
             (59): 61",
        ),
        (
            "TZ=UTC 0 * * * *",
            "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in \
             schedule, use timeZone field instead",
        ),
    ] {
        assert_eq!(
            rejected(&kapi, "POST", &cronjobs, JSON, &cron("bad", schedule)),
            [message]
        );
    }
    let mut bad = cron("bad", "@daily");
    bad["spec"]["timeZone"] = json!("Local");
    bad["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
    assert_eq!(
        rejected(&kapi, "POST", &cronjobs, JSON, &bad),
        [
            "spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone \
             as defined in https://www.iana.org/time-zones",
            "spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: \"Always\": \
             supported values: \"OnFailure\", \"Never\"",
        ]
    );
    let mut zoned = cron("zoned", "@hourly");
    zoned["spec"]["timeZone"] = json!("Etc/UTC");
    create(&kapi, "batch/v1", "cronjobs", &zoned);

    let out = kapi.kubectl(&["get", "cj", "--no-headers"]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        &rows[0][..10],
        [
            "nightly", "0", "3", "*", "*", "mon-fri", "<none>", "False", "0", "<none>"
        ],
        "{out}"
    );
    assert_eq!(
        &rows[1][..6],
        ["zoned", "@hourly", "Etc/UTC", "False", "0", "<none>"],
        "{out}"
    );

    // PodTemplate: the template's PodSpec is defaulted; generation is tracked.
    let pt = create(
        &kapi,
        "v1",
        "podtemplates",
        &json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "pt"},
                "template": {"spec": {"containers": [container("c", "nginx:latest")]}}}),
    );
    assert_eq!(
        pt["template"]["spec"],
        defaulted_pod_spec(
            json!([defaulted_container("c", "nginx:latest", "Always")]),
            "Always"
        )
    );
    assert_eq!(pt["metadata"]["generation"], 1);
}

/// A value the schema lets through but the kind's typed object cannot hold (an `int32`
/// out of range) is a 422 at its field, never a silent skip of the kind's hooks.
#[test]
fn values_the_typed_object_cannot_hold_are_invalid_at_their_field() {
    let kapi = Kapi::start(Backend::Embedded);
    let deploys = ns_path("apps/v1", "deployments");
    let mut d = deployment("big", json!({"app": "big"}), json!({"app": "big"}));
    d["spec"]["replicas"] = json!(3_000_000_000i64);
    assert_eq!(
        rejected(&kapi, "POST", &deploys, JSON, &d),
        [
            "spec.replicas: Invalid value: 3000000000: invalid value: integer `3000000000`, expected i32"
        ]
    );
    let mut d = deployment("port", json!({"app": "port"}), json!({"app": "port"}));
    d["spec"]["template"]["spec"]["containers"][0]["ports"] =
        json!([{"containerPort": 80}, {"containerPort": -3_000_000_000i64}]);
    assert_eq!(
        rejected(&kapi, "POST", &deploys, JSON, &d),
        [
            "spec.template.spec.containers[0].ports[1].containerPort: Invalid value: -3000000000: invalid value: integer `-3000000000`, expected i32"
        ]
    );
    let (code, _) = kapi.request("GET", &format!("{deploys}/big"), JSON, None);
    assert_eq!(code, 404, "nothing was stored");
}
