//! The CSI kinds of storage.k8s.io against a real server, as `builtins_classes.rs` tests
//! its kinds (kube's defaults, messages, immutable fields and Table cells): CSIDriver,
//! CSINode, CSIStorageCapacity, VolumeAttachment (with its status subresource) and
//! VolumeAttributesClass.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

#[path = "support/builtins.rs"]
mod support;
use support::*;

const GROUP: &str = "/apis/storage.k8s.io/v1";
/// `IsDNS1123Subdomain`'s message for a value that does not match.
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
                         alphanumeric characters, '-' or '.', and must start and end with an \
                         alphanumeric character (e.g. 'example.com', regex used for validation \
                         is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// A storage.k8s.io/v1 object of `kind` named `name` with the top-level `fields`.
fn object(kind: &str, name: &str, fields: Value) -> Value {
    let mut obj =
        json!({"apiVersion": "storage.k8s.io/v1", "kind": kind, "metadata": {"name": name}});
    for (k, v) in fields.as_object().expect("fields") {
        obj[k] = v.clone();
    }
    obj
}

/// Asserts that `message` starts with `head` and ends with `tail` (around a value kapi
/// shows as JSON where kube prints a Go struct).
fn assert_around(message: &str, head: &str, tail: &str) {
    assert!(
        message.starts_with(head) && message.ends_with(tail),
        "{message}"
    );
}

#[test]
fn csi_drivers() {
    let kapi = Kapi::start(Backend::Embedded);
    let drivers = format!("{GROUP}/csidrivers");
    let driver = |name: &str, spec: Value| object("CSIDriver", name, json!({"spec": spec}));

    // SetDefaults_CSIDriver; no generation on create.
    let hostpath = create(&kapi, &drivers, driver("hostpath.csi.k8s.io", json!({})));
    assert_eq!(
        hostpath["spec"],
        json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
               "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
               "requiresRepublish": false, "seLinuxMount": false}),
        "{hostpath}"
    );
    assert_eq!(hostpath["metadata"].get("generation"), None, "{hostpath}");

    // ValidateCSIDriver, in kube's words.
    let invalid_driver =
        |name: &str, spec: Value| invalid(&kapi, "POST", &drivers, &driver(name, spec));
    assert_eq!(
        invalid_driver(
            "modes",
            json!({"fsGroupPolicy": "Bad", "volumeLifecycleModes": ["Persistent", "Forever"]})
        ),
        "CSIDriver.storage.k8s.io \"modes\" is invalid: [spec.fsGroupPolicy: Unsupported value: \
         \"Bad\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\", \
         spec.volumeLifecycleModes: Unsupported value: \"Forever\": supported values: \
         \"Persistent\", \"Ephemeral\"]"
    );
    assert_eq!(
        invalid_driver(
            "tokens",
            json!({"tokenRequests": [{"audience": "a", "expirationSeconds": 60}, {"audience": "a"},
                                     {"audience": "b", "expirationSeconds": 4294967297i64}],
                   "nodeAllocatableUpdatePeriodSeconds": 5})
        ),
        "CSIDriver.storage.k8s.io \"tokens\" is invalid: [spec.tokenRequests[0].expirationSeconds: \
         Invalid value: 60: may not specify a duration less than 10 minutes, \
         spec.tokenRequests[1].audience: Duplicate value: \"a\", \
         spec.tokenRequests[2].expirationSeconds: Invalid value: 4294967297: may not specify a \
         duration larger than 2^32 seconds, spec.nodeAllocatableUpdatePeriodSeconds: Invalid \
         value: 5: must be greater than or equal to 10 seconds]"
    );

    // A PUT needs a resourceVersion.
    let path = format!("{drivers}/hostpath.csi.k8s.io");
    let mut unconditional = hostpath.clone();
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    assert_eq!(
        invalid(&kapi, "PUT", &path, &unconditional),
        "CSIDriver.storage.k8s.io \"hostpath.csi.k8s.io\" is invalid: metadata.resourceVersion: \
         Invalid value: 0: must be specified for an update"
    );

    // ValidateCSIDriverUpdate: attachRequired (at kube's path) and the modes are immutable.
    let mut detached = hostpath.clone();
    detached["spec"]["attachRequired"] = json!(false);
    assert_eq!(
        invalid(&kapi, "PUT", &path, &detached),
        "CSIDriver.storage.k8s.io \"hostpath.csi.k8s.io\" is invalid: spec.attachedRequired: \
         Invalid value: false: field is immutable"
    );
    let mut ephemeral = hostpath.clone();
    ephemeral["spec"]["volumeLifecycleModes"] = json!(["Persistent", "Ephemeral"]);
    assert_around(
        &invalid(&kapi, "PUT", &path, &ephemeral),
        "CSIDriver.storage.k8s.io \"hostpath.csi.k8s.io\" is invalid: spec.volumeLifecycleModes: \
         Invalid value: ",
        ": field is immutable",
    );

    // The rest may change; a spec change bumps the generation from none, metadata does not.
    let mut tokens = hostpath.clone();
    tokens["spec"]["podInfoOnMount"] = json!(true);
    tokens["spec"]["fsGroupPolicy"] = json!("File");
    tokens["spec"]["tokenRequests"] = json!([{"audience": "vault"}, {"audience": "sts"}]);
    let tokens = update(&kapi, &path, &tokens);
    assert_eq!(tokens["metadata"]["generation"], 1, "{tokens}");
    let mut labelled = tokens.clone();
    labelled["metadata"]["labels"] = json!({"tier": "storage"});
    let labelled = update(&kapi, &path, &labelled);
    assert_eq!(labelled["metadata"]["generation"], 1, "{labelled}");
    let mut republish = labelled.clone();
    republish["spec"]["requiresRepublish"] = json!(true);
    republish["spec"]
        .as_object_mut()
        .unwrap()
        .remove("seLinuxMount");
    let republish = update(&kapi, &path, &republish);
    assert_eq!(republish["metadata"]["generation"], 2, "{republish}");
    assert_eq!(republish["spec"]["seLinuxMount"], false, "{republish}");

    // Table cells as kube's printCSIDriver prints them.
    create(
        &kapi,
        &drivers,
        driver(
            "inline.csi.k8s.io",
            json!({"attachRequired": false,
                                          "volumeLifecycleModes": ["Ephemeral", "Persistent"]}),
        ),
    );
    let columns = [
        "AttachRequired",
        "PodInfoOnMount",
        "StorageCapacity",
        "TokenRequests",
        "RequiresRepublish",
        "Modes",
    ];
    assert_eq!(
        row(&kapi, &drivers, "hostpath.csi.k8s.io", &columns),
        vec![
            json!(true),
            json!(true),
            json!(false),
            json!("vault,sts"),
            json!(true),
            json!("Persistent")
        ]
    );
    assert_eq!(
        row(&kapi, &drivers, "inline.csi.k8s.io", &columns),
        vec![
            json!(false),
            json!(false),
            json!(false),
            json!("<unset>"),
            json!(false),
            json!("Ephemeral,Persistent")
        ]
    );
    let rows = kubectl_rows(&kapi, &["get", "csidrivers"]);
    assert_eq!(
        rows[0],
        strs(&[
            "NAME",
            "ATTACHREQUIRED",
            "PODINFOONMOUNT",
            "STORAGECAPACITY",
            "TOKENREQUESTS",
            "REQUIRESREPUBLISH",
            "MODES"
        ])
    );
    assert!(
        rows.contains(&strs(&[
            "inline.csi.k8s.io",
            "false",
            "false",
            "false",
            "<unset>",
            "false",
            "Ephemeral,Persistent"
        ])),
        "{rows:?}"
    );
}

#[test]
fn csi_nodes_and_capacities() {
    let kapi = Kapi::start(Backend::Embedded);

    // CSINode: no defaults, no generation.
    let nodes = format!("{GROUP}/csinodes");
    let node =
        |name: &str, drivers: Value| object("CSINode", name, json!({"spec": {"drivers": drivers}}));
    let hostpath = json!({"name": "hostpath.csi.k8s.io", "nodeID": "node-1",
                          "topologyKeys": ["topology.hostpath.csi/node"], "allocatable": {"count": 10}});
    let node_1 = create(&kapi, &nodes, node("node-1", json!([hostpath])));
    assert_eq!(node_1["metadata"].get("generation"), None, "{node_1}");

    // ValidateCSINode, in kube's words.
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &nodes,
            &node("bad", json!([{"name": "Bad_Driver", "nodeID": ""}]))
        ),
        format!(
            "CSINode.storage.k8s.io \"bad\" is invalid: [spec.drivers[0].name: Invalid value: \
             \"Bad_Driver\": {SUBDOMAIN}, spec.drivers[0].nodeID: Required value]"
        )
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &nodes,
            &node(
                "twice",
                json!([
                {"name": "a.csi", "nodeID": "n", "allocatable": {"count": -1}, "topologyKeys": ["zone", "zone"]}])
            )
        ),
        "CSINode.storage.k8s.io \"twice\" is invalid: [spec.drivers[0].allocatable.count: Invalid \
         value: -1: must be greater than or equal to 0, spec.drivers[0]: Duplicate value: \
         \"zone\"]"
    );
    // A driver named twice is the schema's duplicate list-map key, in its words.
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &nodes,
            &node(
                "same",
                json!([{"name": "a.csi", "nodeID": "n"}, {"name": "a.csi", "nodeID": "m"}])
            )
        ),
        "CSINode.storage.k8s.io \"same\" is invalid: spec.drivers[1]: Duplicate value: \
         {\"name\":\"a.csi\"}"
    );

    // ValidateCSINodeUpdate: a driver may not change but for its allocatable count;
    // drivers come and go.
    let node_path = format!("{nodes}/node-1");
    let mut moved = node_1.clone();
    moved["spec"]["drivers"][0]["nodeID"] = json!("node-one");
    assert_around(
        &invalid(&kapi, "PUT", &node_path, &moved),
        "CSINode.storage.k8s.io \"node-1\" is invalid: spec.drivers: Invalid value: ",
        ": field is immutable",
    );
    let mut grown = node_1.clone();
    grown["spec"]["drivers"][0]["allocatable"]["count"] = json!(20);
    grown["spec"]["drivers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "ebs.csi.aws.com", "nodeID": "i-0123"}));
    let grown = update(&kapi, &node_path, &grown);
    assert_eq!(grown["spec"]["drivers"][0]["allocatable"]["count"], 20);
    assert_eq!(grown["metadata"].get("generation"), None, "{grown}");
    // Table cells as kube's printCSINode prints them: Drivers is a count.
    assert_eq!(row(&kapi, &nodes, "node-1", &["Drivers"]), vec![json!(2)]);

    // CSIStorageCapacity, namespaced: no defaults, no generation.
    let capacities = format!("{GROUP}/namespaces/default/csistoragecapacities");
    let capacity = |name: &str, fields: Value| object("CSIStorageCapacity", name, fields);
    let zone = json!({"matchLabels": {"topology.kubernetes.io/zone": "us-east-1a"}});
    let cap_a = create(
        &kapi,
        &capacities,
        capacity(
            "cap-a",
            json!({"storageClassName": "standard", "capacity": "10Gi", "nodeTopology": zone}),
        ),
    );
    assert_eq!(cap_a["metadata"].get("generation"), None, "{cap_a}");
    create(
        &kapi,
        &capacities,
        capacity("cap-b", json!({"storageClassName": "standard"})),
    );

    // ValidateCSIStorageCapacity, in kube's words.
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &capacities,
            &capacity(
                "bad",
                json!({"storageClassName": "Bad_Class", "capacity": "-1Gi"})
            )
        ),
        format!(
            "CSIStorageCapacity.storage.k8s.io \"bad\" is invalid: [storageClassName: Invalid \
             value: \"Bad_Class\": {SUBDOMAIN}, capacity: Invalid value: \"-1Gi\": must be \
             greater than or equal to 0]"
        )
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &capacities,
            &capacity(
                "selector",
                json!({"storageClassName": "standard", "nodeTopology": {
                "matchExpressions": [{"key": "zone", "operator": "In"},
                                     {"key": "zone", "operator": "Exists", "values": ["a"]},
                                     {"key": "zone", "operator": "Near", "values": ["a"]}]}})
            )
        ),
        "CSIStorageCapacity.storage.k8s.io \"selector\" is invalid: \
         [nodeTopology.matchExpressions[0].values: Required value: must be specified when \
         `operator` is 'In' or 'NotIn', nodeTopology.matchExpressions[1].values: Forbidden: may \
         not be specified when `operator` is 'Exists' or 'DoesNotExist', \
         nodeTopology.matchExpressions[2].operator: Invalid value: \"Near\": not a valid \
         selector operator]"
    );

    // ValidateCSIStorageCapacityUpdate: the class and topology are immutable, the
    // capacity is not.
    let cap_path = format!("{capacities}/cap-a");
    let mut fast = cap_a.clone();
    fast["storageClassName"] = json!("fast");
    assert_eq!(
        invalid(&kapi, "PUT", &cap_path, &fast),
        "CSIStorageCapacity.storage.k8s.io \"cap-a\" is invalid: storageClassName: Invalid \
         value: \"fast\": field is immutable"
    );
    let mut elsewhere = cap_a.clone();
    elsewhere["nodeTopology"] = json!({});
    assert_around(
        &invalid(&kapi, "PUT", &cap_path, &elsewhere),
        "CSIStorageCapacity.storage.k8s.io \"cap-a\" is invalid: nodeTopology: Invalid value: ",
        ": field is immutable",
    );
    let mut grown = cap_a.clone();
    grown["capacity"] = json!("20Gi");
    grown["maximumVolumeSize"] = json!("5Gi");
    update(&kapi, &cap_path, &grown);

    // Table cells as kube's printCSIStorageCapacity prints them.
    let columns = ["StorageClassName", "Capacity"];
    assert_eq!(
        row(&kapi, &capacities, "cap-a", &columns),
        vec![json!("standard"), json!("20Gi")]
    );
    assert_eq!(
        row(&kapi, &capacities, "cap-b", &columns),
        vec![json!("standard"), json!("<unset>")]
    );
}

#[test]
fn volume_attachments_and_attributes_classes() {
    let kapi = Kapi::start(Backend::Embedded);

    // VolumeAttachment: the status a client sends on create is reset to kube's empty one.
    let attachments = format!("{GROUP}/volumeattachments");
    let attachment =
        |name: &str, spec: Value| object("VolumeAttachment", name, json!({"spec": spec}));
    let spec = json!({"attacher": "hostpath.csi.k8s.io", "nodeName": "node-1",
                      "source": {"persistentVolumeName": "pv-1"}});
    let mut body = attachment("va-1", spec.clone());
    body["status"] = json!({"attached": true});
    let va = create(&kapi, &attachments, body);
    assert_eq!(va["status"], json!({"attached": false}), "{va}");
    assert_eq!(va["metadata"].get("generation"), None, "{va}");

    // ValidateVolumeAttachment and ValidateVolumeAttachmentV1, in kube's words; the
    // attacher kube requires twice is named once.
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &attachments,
            &attachment(
                "bad",
                json!({"attacher": "", "nodeName": "Node_1", "source": {}})
            )
        ),
        format!(
            "VolumeAttachment.storage.k8s.io \"bad\" is invalid: [spec.attacher: Required value, \
             spec.source: Required value: must specify exactly one of inlineVolumeSpec and \
             persistentVolumeName, spec.nodeName: Invalid value: \"Node_1\": {SUBDOMAIN}, \
             spec.attacher: Invalid value: \"\": {SUBDOMAIN}]"
        )
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &attachments,
            &attachment(
                "both",
                json!({"attacher": "a.csi", "nodeName": "n", "source": {
                "persistentVolumeName": "pv",
                "inlineVolumeSpec": {"csi": {"driver": "a.csi", "volumeHandle": "h"}}}})
            )
        ),
        "VolumeAttachment.storage.k8s.io \"both\" is invalid: spec.source: Forbidden: must \
         specify exactly one of inlineVolumeSpec and persistentVolumeName"
    );

    // The spec is immutable; a PUT of the object leaves the status alone.
    let va_path = format!("{attachments}/va-1");
    let mut moved = va.clone();
    moved["spec"]["nodeName"] = json!("node-2");
    assert_around(
        &invalid(&kapi, "PUT", &va_path, &moved),
        "VolumeAttachment.storage.k8s.io \"va-1\" is invalid: spec: Invalid value: ",
        ": field is immutable",
    );
    let mut attached = va.clone();
    attached["status"] = json!({"attached": true});
    let unchanged = update(&kapi, &va_path, &attached);
    assert_eq!(
        unchanged["status"],
        json!({"attached": false}),
        "{unchanged}"
    );

    // The status changes through /status, which keeps the spec and checks the status.
    let status_path = format!("{va_path}/status");
    let mut attached = unchanged.clone();
    attached["spec"]["nodeName"] = json!("node-2");
    attached["status"] = json!({"attached": true, "attachmentMetadata": {"device": "/dev/sdb"}});
    let attached = update(&kapi, &status_path, &attached);
    assert_eq!(attached["status"]["attached"], true, "{attached}");
    assert_eq!(attached["spec"]["nodeName"], "node-1", "{attached}");
    let mut failing = attached.clone();
    failing["status"]["attachError"] = json!({"message": "busy", "errorCode": -1});
    failing["status"]["detachError"] = json!({"message": "x".repeat(1025)});
    assert_eq!(
        invalid(&kapi, "PUT", &status_path, &failing),
        "VolumeAttachment.storage.k8s.io \"va-1\" is invalid: \
         [status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, \
         inclusive, status.detachError.message: Too long: may not be more than 262144 bytes]"
    );

    // Table cells as kube's printVolumeAttachment prints them.
    assert_eq!(
        row(
            &kapi,
            &attachments,
            "va-1",
            &["Attacher", "PV", "Node", "Attached"]
        ),
        vec![
            json!("hostpath.csi.k8s.io"),
            json!("pv-1"),
            json!("node-1"),
            json!(true)
        ]
    );

    // VolumeAttributesClass: no defaults, no generation.
    let classes = format!("{GROUP}/volumeattributesclasses");
    let class = |name: &str, fields: Value| object("VolumeAttributesClass", name, fields);
    let gold = create(
        &kapi,
        &classes,
        class(
            "gold",
            json!({"driverName": "hostpath.csi.k8s.io", "parameters": {"iops": "3000"}}),
        ),
    );
    assert_eq!(gold["metadata"].get("generation"), None, "{gold}");

    // ValidateVolumeAttributesClass, in kube's words.
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &classes,
            &class("empty", json!({"driverName": ""}))
        ),
        "VolumeAttributesClass.storage.k8s.io \"empty\" is invalid: [driverName: Required value, \
         parameters: Required value: must contain at least one key/value pair]"
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            &classes,
            &class(
                "blank",
                json!({"driverName": "a/b/c", "parameters": {"": "x"}})
            )
        ),
        "VolumeAttributesClass.storage.k8s.io \"blank\" is invalid: [driverName: Invalid value: \
         \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', \
         and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  \
         or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') \
         with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName'), parameters: \
         Invalid value: \"\": field can not be empty.]"
    );

    // ValidateVolumeAttributesClassUpdate: driverName and parameters are immutable; a PUT
    // without a resourceVersion is taken.
    let gold_path = format!("{classes}/gold");
    let mut changed = gold.clone();
    changed["driverName"] = json!("ebs.csi.aws.com");
    changed["parameters"] = json!({"iops": "6000"});
    assert_eq!(
        invalid(&kapi, "PUT", &gold_path, &changed),
        "VolumeAttributesClass.storage.k8s.io \"gold\" is invalid: [driverName: Forbidden: \
         updates to driverName are forbidden., parameters: Forbidden: updates to parameters are \
         forbidden.]"
    );
    let mut labelled = gold.clone();
    labelled["metadata"]["labels"] = json!({"tier": "gold"});
    labelled["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let labelled = update(&kapi, &gold_path, &labelled);
    assert_eq!(labelled["metadata"]["labels"]["tier"], "gold");

    // Table cells as kube's printVolumeAttributesClass prints them.
    let rows = kubectl_rows(&kapi, &["get", "vac"]);
    assert_eq!(
        rows,
        vec![
            strs(&["NAME", "DRIVERNAME"]),
            strs(&["gold", "hostpath.csi.k8s.io"])
        ]
    );
}
