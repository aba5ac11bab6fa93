//! The cluster-wide classes among the built-ins (PriorityClass, IngressClass,
//! RuntimeClass) through every kubectl release, 1.27 to 1.33, and the one on PATH:
//! created from YAML, read back as kube's Table columns, described, and deleted, in
//! kubectl's own words.

use kapi_tests::KUBECTL_RELEASES as RELEASES;
use kapi_tests::{Backend, Kapi};

/// One kind's round trip: the manifest, what `kubectl get` prints (header and row, the
/// age left out), and lines `kubectl describe` prints.
struct Kind {
    resource: &'static str,
    name: &'static str,
    yaml: &'static str,
    header: &'static [&'static str],
    row: &'static [&'static str],
    described: &'static [&'static str],
}

const KINDS: &[Kind] = &[
    Kind {
        resource: "priorityclass.scheduling.k8s.io",
        name: "batch-high",
        yaml: "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: batch-high\nvalue: 1000\ndescription: For batch jobs that matter.\n",
        header: &["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
        row: &["batch-high", "1000", "false", "PreemptLowerPriority"],
        described: &[
            "Name:",
            "batch-high",
            "Value:",
            "1000",
            "PreemptionPolicy:",
            "PreemptLowerPriority",
            "Description:",
            "For batch jobs that matter.",
        ],
    },
    Kind {
        resource: "ingressclass.networking.k8s.io",
        name: "edge",
        yaml: "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: edge\nspec:\n  controller: example.com/ingress\n  parameters:\n    apiGroup: k8s.example.com\n    kind: IngressParameters\n    name: edge-params\n",
        header: &["NAME", "CONTROLLER", "PARAMETERS", "AGE"],
        row: &[
            "edge",
            "example.com/ingress",
            "IngressParameters.k8s.example.com/edge-params",
        ],
        described: &[
            "Name:",
            "edge",
            "Controller:",
            "example.com/ingress",
            "IngressParameters",
            "edge-params",
        ],
    },
    Kind {
        resource: "runtimeclass.node.k8s.io",
        name: "gvisor",
        yaml: "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: gvisor\nhandler: runsc\n",
        header: &["NAME", "HANDLER", "AGE"],
        row: &["gvisor", "runsc"],
        described: &["Name:", "gvisor", "Handler:", "runsc"],
    },
];

/// The words of each line of `text`.
fn words(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .map(|l| l.split_whitespace().collect())
        .collect()
}

fn round_trip(kapi: &Kapi, release: Option<&str>) {
    let which = release.unwrap_or("on PATH");
    for kind in KINDS {
        let (resource, name) = (kind.resource, kind.name);
        let out = kapi.kubectl_ok(release, &["create", "-f", "-"], Some(kind.yaml));
        assert_eq!(
            out.trim(),
            format!("{resource}/{name} created"),
            "kubectl {which}"
        );

        let out = kapi.kubectl_ok(release, &["get", resource, name], None);
        let lines = words(&out);
        assert_eq!(lines.len(), 2, "kubectl {which} get {resource}:\n{out}");
        assert_eq!(lines[0], kind.header, "kubectl {which}:\n{out}");
        let age = kind.header.iter().position(|c| *c == "AGE").expect("AGE");
        let mut row = lines[1].clone();
        row.remove(age);
        assert_eq!(row, kind.row, "kubectl {which}:\n{out}");

        let out = kapi.kubectl_ok(release, &["describe", resource, name], None);
        let described: Vec<&str> = out.split_whitespace().collect();
        for word in kind.described.iter().flat_map(|w| w.split_whitespace()) {
            assert!(
                described.contains(&word),
                "kubectl {which} describe {resource}: no {word:?} in\n{out}"
            );
        }

        let out = kapi.kubectl_ok(release, &["delete", resource, name], None);
        assert_eq!(
            out.trim(),
            format!("{resource} \"{name}\" deleted"),
            "kubectl {which}"
        );
        let gone = kapi.kubectl_version(release, &["get", resource, name], None);
        assert!(!gone.status.success(), "kubectl {which}: {name} is gone");
    }
}

#[test]
fn every_release_creates_gets_describes_and_deletes_the_classes() {
    let kapi = Kapi::start(Backend::Embedded);
    round_trip(&kapi, None);
    for release in RELEASES {
        round_trip(&kapi, Some(release));
    }
}
