//! CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment and VolumeAttributesClass.
//!
//! kubectl 1.30 to 1.33 describe a VolumeAttributesClass through storage.k8s.io/v1alpha1
//! or v1beta1, which kube-apiserver 1.35 does not serve unless asked to (and kapi does
//! not), so their `describe` fails against either: it is created, listed and deleted
//! by every release, and described by none here.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[
    Kind {
        resource: "csidriver.storage.k8s.io",
        name: "hostpath.csi.k8s.io",
        yaml: "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: hostpath.csi.k8s.io\nspec:\n  podInfoOnMount: true\n  tokenRequests:\n  - audience: vault\n",
        header: &[
            "NAME",
            "ATTACHREQUIRED",
            "PODINFOONMOUNT",
            "STORAGECAPACITY",
            "TOKENREQUESTS",
            "REQUIRESREPUBLISH",
            "MODES",
            "AGE",
        ],
        row: &[
            "hostpath.csi.k8s.io",
            "true",
            "true",
            "false",
            "vault",
            "false",
            "Persistent",
        ],
        described: &[
            "Name:",
            "hostpath.csi.k8s.io",
            "Attach Required:",
            "Fs Group Policy:",
            "ReadWriteOnceWithFSType",
            "Audience:",
            "vault",
            "Persistent",
        ],
        describe_since: 0,
    },
    Kind {
        resource: "csinode.storage.k8s.io",
        name: "node-1",
        yaml: "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata:\n  name: node-1\nspec:\n  drivers:\n  - name: hostpath.csi.k8s.io\n    nodeID: node-1\n    topologyKeys: [topology.hostpath.csi/node]\n    allocatable:\n      count: 10\n",
        header: &["NAME", "DRIVERS", "AGE"],
        row: &["node-1", "1"],
        described: &[
            "Name:",
            "node-1",
            "Drivers:",
            "hostpath.csi.k8s.io:",
            "Node ID:",
            "Count:",
            "10",
            "[topology.hostpath.csi/node]",
        ],
        describe_since: 0,
    },
    Kind {
        resource: "csistoragecapacity.storage.k8s.io",
        name: "standard-zone-a",
        yaml: "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata:\n  name: standard-zone-a\nstorageClassName: standard\ncapacity: 10Gi\nnodeTopology:\n  matchLabels:\n    topology.kubernetes.io/zone: zone-a\n",
        header: &["NAME", "STORAGECLASSNAME", "CAPACITY", "AGE"],
        row: &["standard-zone-a", "standard", "10Gi"],
        described: &[
            "Name:",
            "standard-zone-a",
            "Capacity:",
            "10Gi",
            "topology.kubernetes.io/zone:",
            "zone-a",
            "Storage Class Name:",
            "standard",
        ],
        describe_since: 0,
    },
    Kind {
        resource: "volumeattachment.storage.k8s.io",
        name: "va-pv-1",
        yaml: "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata:\n  name: va-pv-1\nspec:\n  attacher: hostpath.csi.k8s.io\n  nodeName: node-1\n  source:\n    persistentVolumeName: pv-1\n",
        header: &["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"],
        row: &["va-pv-1", "hostpath.csi.k8s.io", "pv-1", "node-1", "false"],
        described: &[
            "Name:",
            "va-pv-1",
            "Attacher:",
            "hostpath.csi.k8s.io",
            "Persistent Volume Name:",
            "pv-1",
            "Attached:",
            "false",
        ],
        describe_since: 0,
    },
    Kind {
        resource: "volumeattributesclass.storage.k8s.io",
        name: "gold",
        yaml: "apiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata:\n  name: gold\ndriverName: pd.csi.storage.gke.io\nparameters:\n  iops: \"3000\"\n",
        header: &["NAME", "DRIVERNAME", "AGE"],
        row: &["gold", "pd.csi.storage.gke.io"],
        described: &["Name:", "gold"],
        describe_since: 34,
    },
];
