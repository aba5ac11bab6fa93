//! Server-side apply from kube-rs (`Patch::Apply`, with and without `force`), on both
//! backends, and the way controllers use it: two managers each apply their own half
//! of one object, over and over, and never overwrite each other; a third that wants a
//! field another owns gets a conflict until it forces.

use k8s_openapi::api::core::v1::ConfigMap;
use kapi_tests::on_every_backend;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

#[path = "support/kube.rs"]
mod support;
use support::{block_on, client};

/// The managers of `cm`'s entries, with their operation.
fn managers(cm: &ConfigMap) -> Vec<String> {
    let mut out: Vec<String> = cm
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "{}/{}",
                e.manager.as_deref().unwrap_or(""),
                e.operation.as_deref().unwrap_or("")
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn two_controllers_share_an_object_without_overwriting_each_other() {
    on_every_backend(|kapi| {
        block_on(async {
            let cms: Api<ConfigMap> = Api::namespaced(client(kapi), "default");
            let half = |owner: &str, round: usize| {
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "shared", "labels": {format!("{owner}-label"): "x"}},
                       "data": {format!("{owner}-key"): round.to_string()}})
            };
            for round in 0..5 {
                for owner in ["left", "right"] {
                    let params = PatchParams::apply(owner);
                    let applied = cms
                        .patch("shared", &params, &Patch::Apply(half(owner, round)))
                        .await
                        .unwrap_or_else(|e| panic!("{owner} applies round {round}: {e}"));
                    let data = applied.data.unwrap_or_default();
                    // Each sees its own half at this round and the other's untouched.
                    assert_eq!(data[&format!("{owner}-key")], round.to_string());
                    let other = if owner == "left" { "right" } else { "left" };
                    let expected = if owner == "left" {
                        round.checked_sub(1)
                    } else {
                        Some(round)
                    };
                    assert_eq!(
                        data.get(&format!("{other}-key")).cloned(),
                        expected.map(|r| r.to_string()),
                        "round {round}, {owner}"
                    );
                }
            }
            let got = cms.get("shared").await.expect("get");
            assert_eq!(managers(&got), ["left/Apply", "right/Apply"]);
            let labels = got.metadata.labels.unwrap_or_default();
            assert!(labels.contains_key("left-label") && labels.contains_key("right-label"));

            // A third manager wanting left's key conflicts, then forces.
            let grab = json!({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "shared"}, "data": {"left-key": "mine"}});
            let err = cms
                .patch(
                    "shared",
                    &PatchParams::apply("third"),
                    &Patch::Apply(grab.clone()),
                )
                .await
                .expect_err("a conflict");
            let kube::Error::Api(status) = err else {
                panic!("not an API error: {err:?}");
            };
            assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
            assert_eq!(
                status.message,
                "Apply failed with 1 conflict: conflict with \"left\": .data.left-key"
            );
            let forced = cms
                .patch(
                    "shared",
                    &PatchParams::apply("third").force(),
                    &Patch::Apply(grab),
                )
                .await
                .expect("a forced apply");
            assert_eq!(forced.data.clone().unwrap_or_default()["left-key"], "mine");
            assert_eq!(
                managers(&forced),
                ["left/Apply", "right/Apply", "third/Apply"]
            );
            // Left, no longer owning its key, drops it from its configuration: the key
            // stays, as third owns it now.
            let left_only_label = json!({"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "shared", "labels": {"left-label": "x"}}});
            let after = cms
                .patch(
                    "shared",
                    &PatchParams::apply("left"),
                    &Patch::Apply(left_only_label),
                )
                .await
                .expect("left applies less");
            assert_eq!(after.data.unwrap_or_default()["left-key"], "mine");
        });
    });
}
