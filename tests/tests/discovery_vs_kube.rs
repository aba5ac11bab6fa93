//! kapi's discovery against kube-apiserver 1.35's published OpenAPI documents
//! (`testdata/openapi`): every resource and subresource a document has a path for,
//! with the verbs its operations carry (`x-kubernetes-action`), must be in kapi's
//! `/api/v1` and `/apis/<group>/<version>` with exactly those verbs, and kapi serves
//! no resource of those group-versions that kube does not.
//!
//! What kapi does not serve is listed in [`NOT_YET_SERVED`], each with its reason; the
//! test fails when the differences are not exactly that list, so the list shrinks as
//! each resource lands and nothing else may differ.

use std::collections::{BTreeMap, BTreeSet};

use kapi_tests::{Backend, Kapi};
use serde_json::Value;

/// The differences left, each `<group-version> <resource>: <what>`.
const NOT_YET_SERVED: &[&str] = &[
    // The proxies to a node, pod or service: kapi has no route to their networks
    // (docs/builtins.md). pods/log, exec, attach and portforward are served up to the
    // kubelet (kube/src/kubelet_streams.rs).
    "v1 nodes/proxy: not served",
    "v1 pods/proxy: not served",
    "v1 services/proxy: not served",
];

type Verbs = BTreeSet<String>;

/// The verb of an operation, as discovery names it.
fn verb(action: &str, method: &str) -> Option<&'static str> {
    Some(match action {
        "get" => "get",
        "list" => "list",
        "watch" | "watchlist" => "watch",
        "post" => "create",
        "put" => "update",
        "patch" => "patch",
        "delete" => "delete",
        "deletecollection" => "deletecollection",
        // exec, attach, portforward, proxy: the HTTP method's verb.
        "connect" => match method {
            "get" => "get",
            "post" => "create",
            "put" => "update",
            "patch" => "patch",
            "delete" => "delete",
            _ => return None,
        },
        _ => return None,
    })
}

/// `path` under its group-version's prefix: `pods`, `pods/status` (namespaced or not,
/// collection or object, watch or not), or `None` for the discovery path itself.
fn resource_of(rest: &str) -> Option<String> {
    let mut segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    if segs.first() == Some(&"watch") {
        segs.remove(0);
    }
    if segs.len() >= 3 && segs[0] == "namespaces" && segs[1] == "{namespace}" {
        segs.drain(..2);
    }
    match segs.as_slice() {
        [resource] | [resource, _] => Some(resource.to_string()),
        [resource, _, sub] => Some(format!("{resource}/{sub}")),
        _ => None,
    }
}

/// Every OpenAPI document: group-version → resource → verbs.
fn kube_resources() -> BTreeMap<String, BTreeMap<String, Verbs>> {
    let dir = kapi_testing::testdata_dir().join("openapi");
    let mut out: BTreeMap<String, BTreeMap<String, Verbs>> = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("an OpenAPI document");
        let doc: Value = serde_json::from_str(&text).expect("OpenAPI JSON");
        for (path, item) in doc["paths"].as_object().expect("paths") {
            let (gv, rest) = if let Some(rest) = path.strip_prefix("/api/v1/") {
                ("v1".to_string(), rest)
            } else if let Some(rest) = path.strip_prefix("/apis/") {
                let mut parts = rest.splitn(3, '/');
                let (Some(g), Some(v), Some(rest)) = (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                (format!("{g}/{v}"), rest)
            } else {
                continue;
            };
            let Some(resource) = resource_of(rest) else {
                continue;
            };
            for (method, op) in item.as_object().expect("a path item") {
                let Some(action) = op["x-kubernetes-action"].as_str() else {
                    continue;
                };
                if let Some(verb) = verb(action, method) {
                    out.entry(gv.clone())
                        .or_default()
                        .entry(resource.clone())
                        .or_default()
                        .insert(verb.to_string());
                }
            }
        }
    }
    out
}

/// kapi's discovery of `gv`, or `None` when it serves no such group-version.
fn kapi_resources(kapi: &Kapi, gv: &str) -> Option<BTreeMap<String, Verbs>> {
    let path = if gv == "v1" {
        "/api/v1".to_string()
    } else {
        format!("/apis/{gv}")
    };
    let (code, list) = kapi.request("GET", &path, "application/json", None);
    if code == 404 {
        return None;
    }
    assert_eq!(code, 200, "GET {path}: {list}");
    Some(
        list["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .map(|r| {
                let verbs = r["verbs"].as_array().expect("verbs");
                (
                    r["name"].as_str().expect("a name").to_string(),
                    verbs
                        .iter()
                        .map(|v| v.as_str().expect("a verb").to_string())
                        .collect(),
                )
            })
            .collect(),
    )
}

#[test]
fn discovery_lists_what_kube_1_35_serves_with_its_verbs() {
    let kube = kube_resources();
    assert!(kube.len() > 20, "the documents: {:?}", kube.keys());
    let kapi = Kapi::start(Backend::Embedded);
    let mut differences = BTreeSet::new();
    for (gv, resources) in &kube {
        let Some(served) = kapi_resources(&kapi, gv) else {
            differences.insert(format!("{gv}: not served"));
            continue;
        };
        for (name, verbs) in resources {
            match served.get(name) {
                None => {
                    differences.insert(format!("{gv} {name}: not served"));
                }
                Some(have) if have != verbs => {
                    differences.insert(format!(
                        "{gv} {name}: verbs {:?}, kube's {:?}",
                        have.iter().collect::<Vec<_>>(),
                        verbs.iter().collect::<Vec<_>>()
                    ));
                }
                Some(_) => {}
            }
        }
        for name in served.keys().filter(|n| !resources.contains_key(*n)) {
            differences.insert(format!("{gv} {name}: not kube's"));
        }
    }
    let expected: BTreeSet<String> = NOT_YET_SERVED.iter().map(|s| s.to_string()).collect();
    let unexpected: Vec<_> = differences.difference(&expected).collect();
    let landed: Vec<_> = expected.difference(&differences).collect();
    assert!(
        unexpected.is_empty() && landed.is_empty(),
        "differences from kube 1.35 not in NOT_YET_SERVED: {unexpected:#?}\n\
         in NOT_YET_SERVED but no longer different (take them out): {landed:#?}"
    );
}

#[test]
fn paths_name_their_resources() {
    assert_eq!(
        resource_of("namespaces/{namespace}/pods"),
        Some("pods".into())
    );
    assert_eq!(
        resource_of("watch/namespaces/{namespace}/pods/{name}"),
        Some("pods".into())
    );
    assert_eq!(
        resource_of("namespaces/{namespace}/pods/{name}/status"),
        Some("pods/status".into())
    );
    assert_eq!(resource_of("namespaces/{name}"), Some("namespaces".into()));
    assert_eq!(
        resource_of("namespaces/{name}/finalize"),
        Some("namespaces/finalize".into())
    );
    assert_eq!(resource_of("nodes/{name}/proxy/{path}"), None);
    assert_eq!(resource_of(""), None);
}
