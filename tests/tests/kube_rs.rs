//! The `kube` crate (kube-rs) against a running kapi, on both backends: a client built
//! from the server URL and from the kubeconfig kapi writes, discovery (legacy and
//! aggregated) resolving the Widget kind, CRUD through `Api<DynamicObject>` with the
//! errors kube-rs surfaces as `kube::Error::Api`, merge and JSON patches, the status
//! and scale subresources, lists with label and field selectors and paginated with
//! continue tokens, metadata-only lists, `kube::runtime::watcher` (list-watch and
//! streaming lists), raw watches resumed from a resourceVersion, and the typed core
//! kinds (ConfigMap, Secret, Namespace) from k8s-openapi.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kapi_tests::on_every_backend;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::discovery::{Discovery, Scope, verbs};
use kube::runtime::watcher;
use kube::{Client, Config};
use serde_json::{Value, json};

#[path = "support/kube.rs"]
mod support;
use support::{block_on, client};

/// How long to wait for one watch event.
const EVENT_TIMEOUT: Duration = Duration::from_secs(15);

fn widget_gvk() -> GroupVersionKind {
    GroupVersionKind::gvk("example.kapi.dev", "v1", "Widget")
}

/// Resolves widgets through discovery (the quick, one-group way).
async fn widgets(client: &Client) -> ApiResource {
    let (ar, _) = kube::discovery::pinned_kind(client, &widget_gvk())
        .await
        .expect("discovery finds example.kapi.dev/v1 Widget");
    ar
}

fn widget(ar: &ApiResource, name: &str, labels: &[(&str, &str)], spec: Value) -> DynamicObject {
    let mut w = DynamicObject::new(name, ar).data(json!({ "spec": spec }));
    w.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    w
}

/// The `Status` of a failed call; panics when the call did not fail with one.
fn api_error<T: std::fmt::Debug>(r: Result<T, kube::Error>) -> kube::core::Status {
    match r {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn rv(obj: &DynamicObject) -> u64 {
    obj.metadata
        .resource_version
        .as_deref()
        .expect("a resourceVersion")
        .parse()
        .expect("kapi's resourceVersions are numbers")
}

fn names<'a>(items: impl IntoIterator<Item = &'a DynamicObject>) -> Vec<String> {
    items
        .into_iter()
        .map(|o| o.metadata.name.clone().unwrap_or_default())
        .collect()
}

#[test]
fn discovery_from_url_and_kubeconfig() {
    on_every_backend(|kapi| {
        block_on(async {
            // A client from the kubeconfig kapi wrote, too.
            let kubeconfig = kube::config::Kubeconfig::read_from(kapi.kubeconfig())
                .expect("kapi's kubeconfig parses");
            let config = Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .expect("a config from the kubeconfig");
            assert_eq!(config.default_namespace, "default");
            assert_eq!(
                config.cluster_url.to_string().trim_end_matches('/'),
                kapi.url()
            );
            let from_kubeconfig = Client::try_from(config).expect("a client");
            let version = from_kubeconfig.apiserver_version().await.expect("/version");
            assert!(!version.git_version.is_empty(), "{version:?}");

            for aggregated in [false, true] {
                let discovery = Discovery::new(client(kapi));
                let discovery = if aggregated {
                    discovery.run_aggregated().await
                } else {
                    discovery.run().await
                }
                .unwrap_or_else(|e| panic!("discovery (aggregated: {aggregated}): {e}"));
                let mut groups: Vec<&str> = discovery.groups().map(|g| g.name()).collect();
                groups.sort_unstable();
                assert_eq!(
                    groups,
                    [
                        "",
                        "admissionregistration.k8s.io",
                        "apiextensions.k8s.io",
                        "apiregistration.k8s.io",
                        "apps",
                        "authentication.k8s.io",
                        "authorization.k8s.io",
                        "autoscaling",
                        "batch",
                        "certificates.k8s.io",
                        "coordination.k8s.io",
                        "discovery.k8s.io",
                        "events.k8s.io",
                        "example.kapi.dev",
                        "flowcontrol.apiserver.k8s.io",
                        "internal.apiserver.k8s.io",
                        "networking.k8s.io",
                        "node.k8s.io",
                        "policy",
                        "rbac.authorization.k8s.io",
                        "scheduling.k8s.io",
                        "storage.k8s.io",
                    ],
                    "aggregated: {aggregated}"
                );
                let (ar, caps) = discovery
                    .resolve_gvk(&widget_gvk())
                    .expect("Widget is discovered");
                assert_eq!(
                    (ar.plural.as_str(), ar.api_version.as_str()),
                    ("widgets", "example.kapi.dev/v1")
                );
                assert_eq!(caps.scope, Scope::Namespaced);
                for verb in [
                    verbs::CREATE,
                    verbs::GET,
                    verbs::LIST,
                    verbs::WATCH,
                    verbs::PATCH,
                    verbs::DELETE,
                ] {
                    assert!(
                        caps.supports_operation(verb),
                        "widgets support {verb}: {caps:?}"
                    );
                }
                let mut subresources: Vec<&str> = caps
                    .subresources
                    .iter()
                    .map(|(ar, _)| ar.plural.as_str())
                    .collect();
                subresources.sort_unstable();
                assert_eq!(
                    subresources,
                    ["scale", "status"],
                    "aggregated: {aggregated}"
                );

                let core = discovery.get("").expect("the core group");
                let mut kinds: Vec<String> = core
                    .recommended_resources()
                    .into_iter()
                    .map(|(ar, caps)| format!("{}:{:?}", ar.kind, caps.scope))
                    .collect();
                kinds.sort();
                assert_eq!(
                    kinds,
                    [
                        "Binding:Namespaced",
                        "ComponentStatus:Cluster",
                        "ConfigMap:Namespaced",
                        "Endpoints:Namespaced",
                        "Event:Namespaced",
                        "LimitRange:Namespaced",
                        "Namespace:Cluster",
                        "Node:Cluster",
                        "PersistentVolume:Cluster",
                        "PersistentVolumeClaim:Namespaced",
                        "Pod:Namespaced",
                        "PodTemplate:Namespaced",
                        "ReplicationController:Namespaced",
                        "ResourceQuota:Namespaced",
                        "Secret:Namespaced",
                        "Service:Namespaced",
                        "ServiceAccount:Namespaced",
                    ],
                    "aggregated: {aggregated}"
                );
            }

            // The same Api works through either client.
            let ar = widgets(&from_kubeconfig).await;
            let api: Api<DynamicObject> = Api::default_namespaced_with(from_kubeconfig, &ar);
            assert!(
                api.list(&ListParams::default())
                    .await
                    .expect("list")
                    .items
                    .is_empty()
            );
        });
    });
}

#[test]
fn dynamic_crud_conflicts_patches_and_subresources() {
    on_every_backend(|kapi| {
        block_on(async {
            let client = client(kapi);
            let ar = widgets(&client).await;
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
            let pp = PostParams::default();

            let created = api
                .create(
                    &pp,
                    &widget(
                        &ar,
                        "k1",
                        &[("app", "kube-rs")],
                        json!({"color": "red", "size": "small"}),
                    ),
                )
                .await
                .expect("create");
            assert_eq!(created.metadata.generation, Some(1));
            assert!(created.metadata.uid.as_ref().is_some_and(|u| u.len() == 36));
            assert!(created.metadata.creation_timestamp.is_some());
            assert_eq!(
                created.data["spec"],
                json!({"color": "red", "size": "small", "replicas": 1})
            );
            assert_eq!(
                created.types.as_ref().map(|t| t.kind.as_str()),
                Some("Widget")
            );

            let status = api_error(
                api.create(&pp, &widget(&ar, "k1", &[], json!({"color": "red"})))
                    .await,
            );
            assert_eq!(
                (status.code, status.reason.as_str()),
                (409, "AlreadyExists")
            );
            assert_eq!(
                status.message,
                r#"widgets.example.kapi.dev "k1" already exists"#
            );
            let status = api_error(api.get("nope").await);
            assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
            assert!(api.get_opt("nope").await.expect("get_opt").is_none());
            let status = api_error(
                api.create(
                    &pp,
                    &widget(&ar, "bad", &[], json!({"color": "Red", "size": "huge"})),
                )
                .await,
            );
            assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
            let mut fields: Vec<String> = status
                .details
                .expect("details")
                .causes
                .into_iter()
                .map(|c| c.field)
                .collect();
            fields.sort();
            assert_eq!(fields, ["spec.color", "spec.size"]);

            let got = api.get("k1").await.expect("get");
            assert_eq!(got.metadata.uid, created.metadata.uid);
            assert_eq!(
                got.metadata.resource_version,
                created.metadata.resource_version
            );

            // replace with the current resourceVersion, then with the stale one.
            let mut update = got.clone();
            update.data["spec"]["size"] = json!("large");
            let replaced = api.replace("k1", &pp, &update).await.expect("replace");
            assert!(rv(&replaced) > rv(&got));
            assert_eq!(replaced.metadata.generation, Some(2));
            let status = api_error(api.replace("k1", &pp, &update).await);
            assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
            assert_eq!(
                status.message,
                r#"Operation cannot be fulfilled on widgets.example.kapi.dev "k1": the object has been modified; please apply your changes to the latest version and try again"#
            );

            // Merge and JSON patches.
            let ppatch = PatchParams::default();
            let merged = api
                .patch("k1", &ppatch, &Patch::Merge(json!({"metadata": {"labels": {"tier": "a"}}, "spec": {"replicas": 3, "tags": ["x"]}})))
                .await
                .expect("merge patch");
            assert_eq!(merged.data["spec"]["replicas"], 3);
            assert_eq!(merged.metadata.labels.as_ref().unwrap()["tier"], "a");
            let patched = api
                .patch(
                    "k1",
                    &ppatch,
                    &Patch::<()>::Json(
                        serde_json::from_value(json!([
                            {"op": "test", "path": "/spec/replicas", "value": 3},
                            {"op": "add", "path": "/spec/tags/-", "value": "y"},
                            {"op": "remove", "path": "/metadata/labels/tier"}
                        ]))
                        .expect("a JSON patch"),
                    ),
                )
                .await
                .expect("JSON patch");
            assert_eq!(patched.data["spec"]["tags"], json!(["x", "y"]));
            assert!(
                !patched
                    .metadata
                    .labels
                    .as_ref()
                    .unwrap()
                    .contains_key("tier")
            );
            let status = api_error(
                api.patch(
                    "k1",
                    &ppatch,
                    &Patch::Merge(json!({"spec": {"color": "blue"}})),
                )
                .await,
            );
            assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
            assert!(
                status.message.contains("color is immutable"),
                "{}",
                status.message
            );
            // A merge patch with a stale resourceVersion precondition conflicts.
            let status = api_error(
                api.patch(
                    "k1",
                    &ppatch,
                    &Patch::Merge(json!({"metadata": {"resourceVersion": got.metadata.resource_version}, "spec": {"replicas": 4}})),
                )
                .await,
            );
            assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));

            // Status: the main resource ignores status, the subresource ignores spec.
            let with_status = api
                .patch_status(
                    "k1",
                    &ppatch,
                    &Patch::Merge(json!({"spec": {"replicas": 50}, "status": {"replicas": 3, "readyReplicas": 2, "phase": "Running"}})),
                )
                .await
                .expect("status patch");
            assert_eq!(with_status.data["status"]["readyReplicas"], 2);
            assert_eq!(with_status.data["spec"]["replicas"], 3);
            let status = api.get_status("k1").await.expect("get status");
            assert_eq!(status.data["status"]["phase"], "Running");
            let ignored = api
                .patch(
                    "k1",
                    &ppatch,
                    &Patch::Merge(json!({"status": {"phase": "Failed"}})),
                )
                .await
                .expect("a patch of status through the main resource");
            assert_eq!(ignored.data["status"]["phase"], "Running");

            // Scale.
            let scale = api.get_scale("k1").await.expect("get scale");
            assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(3));
            assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(3));
            let scaled = api
                .patch_scale(
                    "k1",
                    &ppatch,
                    &Patch::Merge(json!({"spec": {"replicas": 5}})),
                )
                .await
                .expect("patch scale");
            assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(5));
            assert_eq!(api.get("k1").await.unwrap().data["spec"]["replicas"], 5);

            // Delete: the object comes back; then it is gone.
            let deleted = api
                .delete("k1", &DeleteParams::default())
                .await
                .expect("delete");
            let obj = deleted
                .left()
                .expect("a deleted object without finalizers is returned");
            assert_eq!(obj.metadata.name.as_deref(), Some("k1"));
            assert_eq!(api_error(api.get("k1").await).code, 404);
            assert_eq!(
                api_error(api.delete("k1", &DeleteParams::default()).await).code,
                404
            );

            // With a finalizer, delete marks it; removing the finalizer removes it.
            let mut held = widget(&ar, "held", &[], json!({"color": "red"}));
            held.metadata.finalizers = Some(vec!["example.kapi.dev/hold".into()]);
            api.create(&pp, &held).await.expect("create held");
            let marked = api
                .delete("held", &DeleteParams::default())
                .await
                .expect("delete held")
                .left()
                .expect("the object, still there");
            assert!(marked.metadata.deletion_timestamp.is_some());
            api.patch(
                "held",
                &ppatch,
                &Patch::Merge(json!({"metadata": {"finalizers": null}})),
            )
            .await
            .expect("remove the finalizer");
            assert_eq!(api_error(api.get("held").await).code, 404);
        });
    });
}

#[test]
fn lists_selectors_pagination_and_delete_collection() {
    on_every_backend(|kapi| {
        block_on(async {
            let client = client(kapi);
            let ar = widgets(&client).await;
            let api: Api<DynamicObject> = Api::default_namespaced_with(client.clone(), &ar);
            for i in 0..7 {
                let tier = if i % 2 == 0 { "even" } else { "odd" };
                let size = if i < 3 { "large" } else { "small" };
                api.create(
                    &PostParams::default(),
                    &widget(
                        &ar,
                        &format!("l{i}"),
                        &[("app", "list"), ("tier", tier)],
                        json!({"color": "red", "size": size}),
                    ),
                )
                .await
                .expect("create");
            }
            let all = api.list(&ListParams::default()).await.expect("list");
            assert_eq!(
                names(&all.items),
                ["l0", "l1", "l2", "l3", "l4", "l5", "l6"]
            );
            let list_rv: u64 = all
                .metadata
                .resource_version
                .as_deref()
                .unwrap()
                .parse()
                .unwrap();
            assert!(all.items.iter().all(|o| rv(o) <= list_rv));

            let list = |lp: ListParams| {
                let api = api.clone();
                async move { names(&api.list(&lp).await.expect("list").items) }
            };
            assert_eq!(
                list(ListParams::default().labels("tier=even")).await,
                ["l0", "l2", "l4", "l6"]
            );
            assert_eq!(
                list(ListParams::default().labels("tier in (odd),app=list")).await,
                ["l1", "l3", "l5"]
            );
            assert_eq!(
                list(ListParams::default().labels("app=other")).await,
                Vec::<String>::new()
            );
            assert_eq!(
                list(ListParams::default().fields("spec.size=large")).await,
                ["l0", "l1", "l2"]
            );
            assert_eq!(
                list(
                    ListParams::default()
                        .fields("spec.size=small")
                        .labels("tier=odd")
                )
                .await,
                ["l3", "l5"]
            );
            assert_eq!(
                list(ListParams::default().fields("metadata.name=l4")).await,
                ["l4"]
            );
            let status = api_error(
                api.list(&ListParams::default().fields("spec.color=red"))
                    .await,
            );
            assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));

            // Pagination: pages of two, continue tokens, one consistent snapshot.
            let mut seen = Vec::new();
            let mut token: Option<String> = None;
            let mut pages = 0;
            let mut first_rv: Option<Option<String>> = None;
            loop {
                let mut lp = ListParams::default().limit(2);
                if let Some(t) = &token {
                    lp = lp.continue_token(t);
                }
                let page = api.list(&lp).await.expect("a page");
                pages += 1;
                assert!(page.items.len() <= 2);
                if pages == 1 {
                    assert_eq!(page.metadata.remaining_item_count, Some(5));
                    // A change after the first page is not in the later pages.
                    api.create(
                        &PostParams::default(),
                        &widget(&ar, "l9", &[("app", "list")], json!({"color": "red"})),
                    )
                    .await
                    .expect("create l9");
                }
                // Every page is of the first page's snapshot.
                let page_rv = page.metadata.resource_version.clone();
                assert_eq!(*first_rv.get_or_insert(page_rv.clone()), page_rv);
                seen.extend(names(&page.items));
                token = page.metadata.continue_.filter(|t| !t.is_empty());
                if token.is_none() {
                    break;
                }
                assert!(pages < 10, "pagination does not end");
            }
            assert_eq!(pages, 4);
            assert_eq!(seen, ["l0", "l1", "l2", "l3", "l4", "l5", "l6"]);
            // Paginated with a selector.
            let mut seen = Vec::new();
            let mut lp = ListParams::default().labels("tier=even").limit(3);
            loop {
                let page = api.list(&lp).await.expect("a page");
                assert!(page.items.len() <= 3);
                seen.extend(names(&page.items));
                match page.metadata.continue_.filter(|t| !t.is_empty()) {
                    Some(t) => lp = lp.continue_token(&t),
                    None => break,
                }
            }
            assert_eq!(seen, ["l0", "l2", "l4", "l6"]);

            // Metadata-only lists (PartialObjectMetadataList).
            let meta = api
                .list_metadata(&ListParams::default().labels("tier=odd"))
                .await
                .expect("list_metadata");
            let meta_names: Vec<_> = meta
                .items
                .iter()
                .map(|o| o.metadata.name.clone().unwrap())
                .collect();
            assert_eq!(meta_names, ["l1", "l3", "l5"]);
            let one = api.get_metadata("l1").await.expect("get_metadata");
            assert_eq!(one.metadata.labels.unwrap()["tier"], "odd");

            // All namespaces.
            let everywhere: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
            assert_eq!(
                everywhere
                    .list(&ListParams::default())
                    .await
                    .unwrap()
                    .items
                    .len(),
                8
            );

            // delete_collection with a selector.
            api.delete_collection(
                &DeleteParams::default(),
                &ListParams::default().labels("tier=even"),
            )
            .await
            .expect("delete_collection");
            assert_eq!(list(ListParams::default()).await, ["l1", "l3", "l5", "l9"]);
        });
    });
}

#[test]
fn runtime_watcher_and_resumed_watches() {
    on_every_backend(|kapi| {
        block_on(async {
            let client = client(kapi);
            let ar = widgets(&client).await;
            let api: Api<DynamicObject> = Api::default_namespaced_with(client.clone(), &ar);
            let pp = PostParams::default();
            api.create(
                &pp,
                &widget(&ar, "pre", &[("app", "w")], json!({"color": "red"})),
            )
            .await
            .expect("create");

            for streaming in [false, true] {
                let mut config = watcher::Config::default().labels("app=w").timeout(30);
                if streaming {
                    config = config.streaming_lists();
                }
                let mut stream = watcher(api.clone(), config).boxed();
                let mut next = async || {
                    tokio::time::timeout(EVENT_TIMEOUT, stream.try_next())
                        .await
                        .expect("a watcher event in time")
                        .expect("no watcher error")
                        .expect("the watcher stream goes on")
                };
                // The initial state: Init, the existing objects, InitDone.
                assert!(
                    matches!(next().await, watcher::Event::Init),
                    "streaming: {streaming}"
                );
                let mut initial = Vec::new();
                loop {
                    match next().await {
                        watcher::Event::InitApply(o) => initial.push(o.metadata.name.unwrap()),
                        watcher::Event::InitDone => break,
                        other => panic!("unexpected {other:?} during the initial list"),
                    }
                }
                assert_eq!(initial, ["pre"], "streaming: {streaming}");

                let name = format!("watched-{streaming}");
                api.create(
                    &pp,
                    &widget(&ar, &name, &[("app", "w")], json!({"color": "red"})),
                )
                .await
                .expect("create");
                // Changes to objects the selector excludes are not delivered.
                api.create(
                    &pp,
                    &widget(
                        &ar,
                        &format!("other-{streaming}"),
                        &[("app", "x")],
                        json!({"color": "red"}),
                    ),
                )
                .await
                .expect("create");
                api.patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"replicas": 4}})),
                )
                .await
                .expect("patch");
                api.delete(&name, &DeleteParams::default())
                    .await
                    .expect("delete");
                let mut seen = Vec::new();
                while seen.len() < 3 {
                    match next().await {
                        watcher::Event::Apply(o) => seen.push(format!(
                            "apply {} {}",
                            o.metadata.name.unwrap(),
                            o.data["spec"]["replicas"]
                        )),
                        watcher::Event::Delete(o) => {
                            seen.push(format!("delete {}", o.metadata.name.unwrap()))
                        }
                        other => panic!("unexpected {other:?}"),
                    }
                }
                assert_eq!(
                    seen,
                    [
                        format!("apply {name} 1"),
                        format!("apply {name} 4"),
                        format!("delete {name}")
                    ],
                    "streaming: {streaming}"
                );
            }

            // A raw watch from a list's resourceVersion sees exactly what came after.
            let start = api
                .list(&ListParams::default())
                .await
                .expect("list")
                .metadata
                .resource_version
                .unwrap();
            api.create(&pp, &widget(&ar, "x", &[], json!({"color": "red"})))
                .await
                .expect("create x");
            let modified = api
                .patch(
                    "x",
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"replicas": 2}})),
                )
                .await
                .expect("patch x");
            api.delete("x", &DeleteParams::default())
                .await
                .expect("delete x");
            api.create(&pp, &widget(&ar, "y", &[], json!({"color": "blue"})))
                .await
                .expect("create y");

            let events = |from: String| {
                let api = api.clone();
                async move {
                    let stream = api
                        .watch(&WatchParams::default().timeout(2), &from)
                        .await
                        .expect("watch starts");
                    let events: Vec<WatchEvent<DynamicObject>> = stream
                        .try_collect()
                        .await
                        .expect("the watch ends cleanly after its timeout");
                    events
                        .into_iter()
                        .filter_map(|e| match e {
                            WatchEvent::Added(o) => {
                                Some(format!("ADDED {}", o.metadata.name.unwrap()))
                            }
                            WatchEvent::Modified(o) => Some(format!(
                                "MODIFIED {} {}",
                                o.metadata.name.unwrap(),
                                o.data["spec"]["replicas"]
                            )),
                            WatchEvent::Deleted(o) => {
                                Some(format!("DELETED {}", o.metadata.name.unwrap()))
                            }
                            WatchEvent::Bookmark(_) => None,
                            WatchEvent::Error(e) => panic!("watch error {e:?}"),
                        })
                        .collect::<Vec<_>>()
                }
            };
            assert_eq!(
                events(start).await,
                ["ADDED x", "MODIFIED x 2", "DELETED x", "ADDED y"]
            );
            assert_eq!(
                events(modified.metadata.resource_version.clone().unwrap()).await,
                ["DELETED x", "ADDED y"]
            );
            // resourceVersion "0": the current state as ADDED events.
            let mut now = events("0".to_string()).await;
            now.sort();
            assert_eq!(
                now,
                [
                    "ADDED other-false",
                    "ADDED other-true",
                    "ADDED pre",
                    "ADDED y"
                ]
            );
        });
    });
}

fn cms_default(client: &Client) -> Api<ConfigMap> {
    Api::namespaced(client.clone(), "default")
}

#[test]
fn typed_core_kinds() {
    on_every_backend(|kapi| {
        block_on(async {
            let client = client(kapi);
            let pp = PostParams::default();

            // Namespaces.
            let namespaces: Api<Namespace> = Api::all(client.clone());
            let list = namespaces
                .list(&ListParams::default())
                .await
                .expect("list namespaces");
            let names: Vec<_> = list
                .items
                .iter()
                .map(|n| n.metadata.name.clone().unwrap())
                .collect();
            for ns in ["default", "kube-node-lease", "kube-public", "kube-system"] {
                assert!(names.iter().any(|n| n == ns), "{names:?}");
            }
            let mut ns = Namespace::default();
            ns.metadata.name = Some("typed".into());
            ns.metadata.labels = Some(BTreeMap::from([("team".into(), "rust".into())]));
            let created = namespaces.create(&pp, &ns).await.expect("create namespace");
            assert_eq!(
                created.status.and_then(|s| s.phase).as_deref(),
                Some("Active")
            );
            assert_eq!(
                namespaces
                    .list(&ListParams::default().labels("team=rust"))
                    .await
                    .unwrap()
                    .items
                    .len(),
                1
            );

            // ConfigMaps in the new namespace.
            let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "typed");
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some("settings".into());
            cm.data = Some(BTreeMap::from([("mode".into(), "fast".into())]));
            let created = cms.create(&pp, &cm).await.expect("create configmap");
            assert_eq!(created.metadata.namespace.as_deref(), Some("typed"));
            assert!(created.metadata.uid.is_some());
            let mut got = cms.get("settings").await.expect("get configmap");
            assert_eq!(got.data.as_ref().unwrap()["mode"], "fast");
            got.data
                .as_mut()
                .unwrap()
                .insert("level".into(), "3".into());
            let replaced = cms
                .replace("settings", &pp, &got)
                .await
                .expect("replace configmap");
            assert_eq!(replaced.data.as_ref().unwrap().len(), 2);
            let status = api_error(cms.replace("settings", &pp, &got).await);
            assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
            let patched = cms
                .patch(
                    "settings",
                    &PatchParams::default(),
                    &Patch::Merge(json!({"data": {"mode": null, "extra": "x"}})),
                )
                .await
                .expect("merge patch configmap");
            assert_eq!(
                patched.data.unwrap(),
                BTreeMap::from([("extra".into(), "x".into()), ("level".into(), "3".into())])
            );
            let patched = cms
                .patch(
                    "settings",
                    &PatchParams::default(),
                    &Patch::Strategic(json!({"data": {"sm": "y"}})),
                )
                .await
                .expect("strategic merge patch configmap");
            assert_eq!(patched.data.unwrap().len(), 3);
            assert_eq!(
                cms.list(&ListParams::default()).await.unwrap().items.len(),
                1
            );
            cms.delete("settings", &DeleteParams::default())
                .await
                .expect("delete configmap");
            assert_eq!(api_error(cms.get("settings").await).code, 404);

            // Deleting the namespace: Terminating, then gone.
            let deleted = namespaces
                .delete("typed", &DeleteParams::default())
                .await
                .expect("delete namespace");
            if let Some(ns) = deleted.left() {
                assert_eq!(
                    ns.status.and_then(|s| s.phase).as_deref(),
                    Some("Terminating")
                );
            }
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            while namespaces
                .get_opt("typed")
                .await
                .expect("get namespace")
                .is_some()
            {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "namespace typed was not removed"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
    });
}

#[test]
fn secret_string_data_is_merged_into_data() {
    on_every_backend(|kapi| {
        block_on(async {
            let client = client(kapi);
            let pp = PostParams::default();
            // A Secret: data round-trips as bytes; stringData is merged into data.
            let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
            let mut secret = Secret::default();
            secret.metadata.name = Some("creds".into());
            secret.type_ = Some("Opaque".into());
            secret.data = Some(BTreeMap::from([(
                "bin".into(),
                ByteString(vec![0, 159, 255]),
            )]));
            secret.string_data = Some(BTreeMap::from([("user".into(), "admin".into())]));
            let created = secrets.create(&pp, &secret).await.expect("create secret");
            assert!(created.string_data.is_none(), "stringData is write-only");
            let data = created.data.expect("data");
            assert_eq!(data["bin"], ByteString(vec![0, 159, 255]));
            assert_eq!(data["user"], ByteString(b"admin".to_vec()));
            secrets
                .delete("creds", &DeleteParams::default())
                .await
                .expect("delete secret");
            // A Secret without a type is Opaque, as kube defaults it; and an update
            // that leaves the type out keeps it (defaulted again, so not a change).
            let mut untyped = Secret::default();
            untyped.metadata.name = Some("untyped".into());
            let created = secrets.create(&pp, &untyped).await.expect("create");
            assert_eq!(created.type_.as_deref(), Some("Opaque"));
            let mut again = created.clone();
            again.type_ = None;
            again.string_data = Some(BTreeMap::from([("k".into(), "v".into())]));
            let updated = secrets
                .replace("untyped", &pp, &again)
                .await
                .expect("update without a type");
            assert_eq!(updated.type_.as_deref(), Some("Opaque"));
            secrets
                .delete("untyped", &DeleteParams::default())
                .await
                .expect("delete secret");
        });
    });
}

#[test]
fn core_kinds_have_no_generation() {
    on_every_backend(|kapi| {
        block_on(async {
            let client = client(kapi);
            let pp = PostParams::default();
            // kube-apiserver sets metadata.generation only for kinds whose strategy
            // tracks spec changes (custom resources, workloads): never for ConfigMaps,
            // Secrets or Namespaces.
            let cm = cms_default(&client)
                .create(&pp, &{
                    let mut cm = ConfigMap::default();
                    cm.metadata.name = Some("no-generation".into());
                    cm
                })
                .await
                .expect("create configmap");
            assert_eq!(
                cm.metadata.generation, None,
                "a ConfigMap has no generation"
            );
            let ns = Api::<Namespace>::all(client.clone())
                .get("default")
                .await
                .expect("get default");
            assert_eq!(
                ns.metadata.generation, None,
                "a Namespace has no generation"
            );
        });
    });
}
