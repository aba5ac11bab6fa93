//! kubectl against a running kapi, on both backends, checking what kubectl prints (not
//! just its exit code): discovery (`api-resources`, `api-versions`, `explain`),
//! multi-document manifests through `create -f` and `apply -f` (client-side apply, then
//! a PATCH after an edit), every `get` output format, label and field selectors, short
//! names and categories, `label`, `annotate`, the three patch types, the status and
//! scale subresources, `delete` in its forms, `wait`, `get -w`, server-side field
//! validation, and a smoke run with every installed kubectl release (the typed,
//! protobuf-speaking commands are kubectl_protobuf.rs's).

use std::time::Duration;

use kapi_tests::{Kapi, LineReader, kubectl_versions, on_every_backend};
use serde_json::Value;

/// A namespace, two ConfigMaps and three Widgets (gamma leaves size and replicas to the
/// schema defaults).
const MANIFEST: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  mode: fast
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: limits
  namespace: shop
data:
  max: "10"
  min: "1"
---
apiVersion: example.kapi.dev/v1
kind: Widget
metadata:
  name: alpha
  namespace: shop
  labels: {app: demo, tier: front}
spec:
  color: red
  size: small
  replicas: 2
---
apiVersion: example.kapi.dev/v1
kind: Widget
metadata:
  name: beta
  namespace: shop
  labels: {app: demo, tier: back}
spec:
  color: blue
  size: large
  replicas: 20
---
apiVersion: example.kapi.dev/v1
kind: Widget
metadata:
  name: gamma
  namespace: shop
  labels: {app: other}
spec:
  color: green
"#;

/// One widget manifest in `default`.
fn widget_yaml(name: &str, labels: &str, size: &str) -> String {
    format!(
        "apiVersion: example.kapi.dev/v1\nkind: Widget\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\nspec:\n  color: red\n  size: {size}\n"
    )
}

/// Writes `text` to a file in the server's data directory (kubectl's messages name the
/// file, so some tests use files rather than stdin).
fn write_file(kapi: &Kapi, name: &str, text: &str) -> String {
    let path = kapi.data_dir().join(name);
    std::fs::write(&path, text).expect("writing a manifest");
    path.display().to_string()
}

/// The whitespace-separated cells of each non-empty line.
fn table(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// The first cell of each row after the header.
fn names(out: &str) -> Vec<String> {
    table(out)
        .into_iter()
        .skip(1)
        .map(|r| r[0].clone())
        .collect()
}

fn sorted_lines(out: &str) -> Vec<String> {
    let mut v: Vec<String> = out.lines().map(str::to_string).collect();
    v.sort();
    v
}

fn json(out: &str) -> Value {
    serde_json::from_str(out)
        .unwrap_or_else(|e| panic!("kubectl printed invalid JSON ({e}):\n{out}"))
}

/// What kubectl prints when it creates [`MANIFEST`]'s objects (`create -f` or `apply -f`).
const CREATED: [&str; 6] = [
    "namespace/shop created",
    "configmap/settings created",
    "configmap/limits created",
    "widget.example.kapi.dev/alpha created",
    "widget.example.kapi.dev/beta created",
    "widget.example.kapi.dev/gamma created",
];

#[test]
fn discovery_api_resources_api_versions_and_explain() {
    on_every_backend(|kapi| {
        let out = kapi.kubectl(&["api-resources"]);
        let rows = table(&out);
        assert_eq!(
            rows[0],
            ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
            "{out}"
        );
        let row = |name: &str| {
            rows.iter()
                .find(|r| r[0] == name)
                .unwrap_or_else(|| panic!("{name} missing from api-resources:\n{out}"))
                .clone()
        };
        assert_eq!(
            row("widgets"),
            ["widgets", "wd", "example.kapi.dev/v1", "true", "Widget"]
        );
        assert_eq!(
            row("configmaps"),
            ["configmaps", "cm", "v1", "true", "ConfigMap"]
        );
        assert_eq!(
            row("namespaces"),
            ["namespaces", "ns", "v1", "false", "Namespace"]
        );
        assert_eq!(row("secrets"), ["secrets", "v1", "true", "Secret"]);
        assert_eq!(row("events"), ["events", "ev", "v1", "true", "Event"]);

        // Verbs and categories (-o wide), filters and -o name.
        let wide = kapi.kubectl(&["api-resources", "-o", "wide"]);
        let widgets = table(&wide)
            .into_iter()
            .find(|r| r[0] == "widgets")
            .expect("widgets in -o wide");
        let mut verbs: Vec<&str> = widgets[5].split(',').collect();
        verbs.sort_unstable();
        assert_eq!(
            verbs,
            [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch"
            ],
            "{wide}"
        );
        assert_eq!(widgets[6], "kapi-examples", "{wide}");
        assert_eq!(
            kapi.kubectl(&[
                "api-resources",
                "--api-group=example.kapi.dev",
                "-o",
                "name"
            ]),
            "widgets.example.kapi.dev\n"
        );
        let cluster = names(&kapi.kubectl(&["api-resources", "--namespaced=false"]));
        assert!(cluster.contains(&"namespaces".to_string()), "{cluster:?}");
        assert!(!cluster.contains(&"widgets".to_string()), "{cluster:?}");

        let versions = kapi.kubectl(&["api-versions"]);
        assert_eq!(
            sorted_lines(&versions),
            [
                "admissionregistration.k8s.io/v1",
                "apiextensions.k8s.io/v1",
                "apiregistration.k8s.io/v1",
                "apps/v1",
                "authentication.k8s.io/v1",
                "authorization.k8s.io/v1",
                "autoscaling/v1",
                "autoscaling/v2",
                "batch/v1",
                "certificates.k8s.io/v1",
                "coordination.k8s.io/v1",
                "discovery.k8s.io/v1",
                "events.k8s.io/v1",
                "example.kapi.dev/v1",
                "example.kapi.dev/v1alpha1",
                "flowcontrol.apiserver.k8s.io/v1",
                "internal.apiserver.k8s.io/v1alpha1",
                "networking.k8s.io/v1",
                "node.k8s.io/v1",
                "policy/v1",
                "rbac.authorization.k8s.io/v1",
                "scheduling.k8s.io/v1",
                "storage.k8s.io/v1",
                "v1"
            ],
            "{versions}"
        );

        // explain reads the published OpenAPI v3 document: the schema's descriptions.
        let spec = kapi.kubectl(&["explain", "widgets.spec"]);
        for expected in [
            "KIND:       Widget",
            "VERSION:    v1",
            "FIELD: spec <Object>",
            "The desired state of the widget.",
            "color\t<string> -required-",
            "The widget's colour, fixed at creation.",
            "replicas\t<integer>",
            "How many widgets to run.",
            "How big each widget is.",
            "enum: small, medium, large",
            "ports\t<[]Object>",
            "Named ports, merged by name.",
            "labels\t<map[string]string>",
        ] {
            assert!(
                spec.contains(expected),
                "explain widgets.spec lacks {expected:?}:\n{spec}"
            );
        }
        let replicas = kapi.kubectl(&["explain", "widgets.spec.replicas"]);
        assert!(replicas.contains("FIELD: replicas <integer>"), "{replicas}");
        assert!(replicas.contains("How many widgets to run."), "{replicas}");
        let top = kapi.kubectl(&["explain", "wd"]);
        assert!(
            top.contains("A Widget is an example resource served by kapi."),
            "{top}"
        );
        let cm = kapi.kubectl(&["explain", "configmaps"]);
        assert!(
            cm.contains("ConfigMap holds configuration data for pods to consume."),
            "{cm}"
        );
    });
}

#[test]
fn create_from_manifest_and_every_get_output() {
    on_every_backend(|kapi| {
        let file = write_file(kapi, "shop.yaml", MANIFEST);
        let out = kapi.kubectl(&["create", "-f", &file]);
        assert_eq!(out.lines().collect::<Vec<_>>(), CREATED);
        let err = kapi.kubectl_err(&["create", "-f", &file], None);
        assert!(
            err.contains(&format!(
                "Error from server (AlreadyExists): error when creating \"{file}\": namespaces \"shop\" already exists"
            )) && err.contains("widgets.example.kapi.dev \"alpha\" already exists"),
            "{err}"
        );

        // The default table: printer columns of priority 0, schema defaults filled in.
        let out = kapi.kubectl(&["get", "widgets", "-n", "shop"]);
        let rows = table(&out);
        assert_eq!(
            rows[0],
            ["NAME", "SIZE", "REPLICAS", "READY", "AGE"],
            "{out}"
        );
        assert_eq!(rows[1][..3], ["alpha", "small", "2"], "{out}");
        assert_eq!(rows[2][..3], ["beta", "large", "20"], "{out}");
        assert_eq!(rows[3][..3], ["gamma", "medium", "1"], "{out}");
        assert_eq!(rows.len(), 4, "{out}");

        // -o wide adds the priority-1 COLOR column.
        let out = kapi.kubectl(&["get", "widgets", "-n", "shop", "-o", "wide"]);
        let rows = table(&out);
        assert_eq!(
            rows[0],
            ["NAME", "SIZE", "REPLICAS", "READY", "COLOR", "AGE"],
            "{out}"
        );
        assert_eq!(rows[1][..4], ["alpha", "small", "2", "red"], "{out}");
        assert_eq!(rows[3][..4], ["gamma", "medium", "1", "green"], "{out}");

        // Short name, singular, fully qualified name and category all name widgets.
        for name in ["wd", "widget", "widgets.example.kapi.dev", "kapi-examples"] {
            let out = kapi.kubectl(&["get", name, "-n", "shop", "-o", "name"]);
            assert_eq!(
                out.lines().collect::<Vec<_>>(),
                [
                    "widget.example.kapi.dev/alpha",
                    "widget.example.kapi.dev/beta",
                    "widget.example.kapi.dev/gamma"
                ],
                "kubectl get {name}"
            );
        }
        // `all` is kube's category, and an example is not in it.
        let all = kapi.kubectl(&["get", "all", "-n", "shop", "-o", "name"]);
        assert!(!all.contains("widget"), "kubectl get all: {all}");

        // -o yaml of one object.
        let yaml = kapi.kubectl(&["get", "wd", "alpha", "-n", "shop", "-o", "yaml"]);
        for line in [
            "apiVersion: example.kapi.dev/v1",
            "kind: Widget",
            "  name: alpha",
            "  namespace: shop",
            "    tier: front",
            "  generation: 1",
            "  color: red",
            "  replicas: 2",
            "  size: small",
        ] {
            assert!(yaml.lines().any(|l| l == line), "no {line:?} in:\n{yaml}");
        }
        assert!(
            yaml.contains("  uid: ") && yaml.contains("  resourceVersion: "),
            "{yaml}"
        );

        // -o json of a list: a v1 List of Widgets.
        let list = json(&kapi.kubectl(&["get", "wd", "-n", "shop", "-o", "json"]));
        assert_eq!(
            (&list["apiVersion"], &list["kind"]),
            (&"v1".into(), &"List".into())
        );
        let items = list["items"].as_array().expect("items");
        assert_eq!(items.len(), 3, "{list}");
        for item in items {
            assert_eq!(item["kind"], "Widget");
            assert_eq!(item["apiVersion"], "example.kapi.dev/v1");
            assert_eq!(item["metadata"]["namespace"], "shop");
        }
        assert_eq!(
            items[2]["spec"],
            serde_json::json!({"color": "green", "size": "medium", "replicas": 1})
        );
        let one = json(&kapi.kubectl(&["get", "wd", "beta", "-n", "shop", "-o", "json"]));
        assert_eq!(one["spec"]["replicas"], 20);

        // jsonpath and custom columns.
        let out = kapi.kubectl(&[
            "get",
            "wd",
            "-n",
            "shop",
            "-o",
            r#"jsonpath={range .items[*]}{.metadata.name}={.spec.color}/{.spec.size}{"\n"}{end}"#,
        ]);
        assert_eq!(
            out,
            "alpha=red/small\nbeta=blue/large\ngamma=green/medium\n"
        );
        let out = kapi.kubectl(&[
            "get",
            "wd",
            "alpha",
            "-n",
            "shop",
            "-o",
            "jsonpath={.metadata.labels.tier}",
        ]);
        assert_eq!(out, "front");
        let out = kapi.kubectl(&[
            "get",
            "wd",
            "-n",
            "shop",
            "-o",
            "custom-columns=NAME:.metadata.name,COLOR:.spec.color,TIER:.metadata.labels.tier",
        ]);
        assert_eq!(
            table(&out),
            [
                ["NAME", "COLOR", "TIER"],
                ["alpha", "red", "front"],
                ["beta", "blue", "back"],
                ["gamma", "green", "<none>"]
            ]
        );

        // --show-labels.
        let out = kapi.kubectl(&["get", "wd", "-n", "shop", "--show-labels"]);
        let rows = table(&out);
        assert_eq!(rows[0].last().unwrap(), "LABELS", "{out}");
        assert_eq!(rows[1].last().unwrap(), "app=demo,tier=front", "{out}");
        assert_eq!(rows[3].last().unwrap(), "app=other", "{out}");

        // Label selectors.
        let sel = |s: &str| names(&kapi.kubectl(&["get", "wd", "-n", "shop", "-l", s]));
        assert_eq!(sel("app=demo"), ["alpha", "beta"]);
        assert_eq!(sel("app!=demo"), ["gamma"]);
        assert_eq!(sel("tier in (front,back),app=demo"), ["alpha", "beta"]);
        assert_eq!(sel("tier notin (front)"), ["beta", "gamma"]);
        assert_eq!(sel("!tier"), ["gamma"]);
        assert_eq!(sel("tier"), ["alpha", "beta"]);
        let none = kapi.kubectl_version(
            None,
            &["get", "wd", "-n", "shop", "-l", "app=nothing"],
            None,
        );
        assert!(none.status.success());
        assert_eq!(
            String::from_utf8_lossy(&none.stderr).trim(),
            "No resources found in shop namespace."
        );

        // Field selectors: the selectable field and metadata.
        let fsel =
            |s: &str| names(&kapi.kubectl(&["get", "wd", "-n", "shop", "--field-selector", s]));
        assert_eq!(fsel("spec.size=large"), ["beta"]);
        assert_eq!(fsel("spec.size!=large"), ["alpha", "gamma"]);
        assert_eq!(fsel("metadata.name=gamma"), ["gamma"]);
        assert_eq!(fsel("metadata.namespace=shop,spec.size=small"), ["alpha"]);
        let err = kapi.kubectl_err(
            &[
                "get",
                "wd",
                "-n",
                "shop",
                "--field-selector",
                "spec.color=red",
            ],
            None,
        );
        assert!(err.contains("spec.color"), "{err}");

        // All namespaces: the NAMESPACE column.
        let out = kapi.kubectl(&["get", "wd", "-A"]);
        let rows = table(&out);
        assert_eq!(rows[0][..2], ["NAMESPACE", "NAME"], "{out}");
        assert_eq!(rows[1][..3], ["shop", "alpha", "small"], "{out}");

        // Core kinds print their own tables.
        let out = kapi.kubectl(&["get", "ns", "shop"]);
        assert_eq!(
            table(&out),
            [
                vec!["NAME", "STATUS", "AGE"],
                vec!["shop", "Active", &table(&out)[1][2]]
            ]
        );
        let out = kapi.kubectl(&["get", "configmaps", "-n", "shop", "-o", "name"]);
        assert_eq!(
            sorted_lines(&out),
            ["configmap/limits", "configmap/settings"]
        );
        let cm = json(&kapi.kubectl(&["get", "cm", "limits", "-n", "shop", "-o", "json"]));
        assert_eq!(cm["data"], serde_json::json!({"max": "10", "min": "1"}));
        // kube-apiserver's ConfigMap table: NAME, DATA (the number of keys), AGE.
        let out = kapi.kubectl(&["get", "configmaps", "limits", "settings", "-n", "shop"]);
        let rows = table(&out);
        assert_eq!(rows[0], ["NAME", "DATA", "AGE"], "{out}");
        assert_eq!(rows[1][..2], ["limits", "2"], "{out}");
        assert_eq!(rows[2][..2], ["settings", "1"], "{out}");
    });
}

#[test]
fn apply_creates_then_patches_after_an_edit() {
    on_every_backend(|kapi| {
        let file = write_file(kapi, "shop.yaml", MANIFEST);
        let out = kapi.kubectl(&["apply", "-f", &file]);
        assert_eq!(out.lines().collect::<Vec<_>>(), CREATED);
        let applied = json(&kapi.kubectl(&["get", "wd", "alpha", "-n", "shop", "-o", "json"]));
        let last =
            applied["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                .as_str()
                .expect("apply records the last-applied configuration");
        assert_eq!(
            json(last)["spec"],
            serde_json::json!({"color": "red", "size": "small", "replicas": 2})
        );

        // Re-applying the same manifest changes nothing.
        let out = kapi.kubectl(&["apply", "-f", &file]);
        assert!(out.lines().all(|l| l.ends_with(" unchanged")), "{out}");
        assert_eq!(out.lines().count(), 6, "{out}");

        // Edit: alpha's replicas, a ConfigMap value, drop beta's tier label.
        let edited = MANIFEST
            .replace("  replicas: 2\n", "  replicas: 5\n")
            .replace("mode: fast", "mode: slow")
            .replace("{app: demo, tier: back}", "{app: demo}");
        let file2 = write_file(kapi, "shop2.yaml", &edited);
        let out = kapi.kubectl_ok(None, &["apply", "-f", &file2, "-v=6"], None);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "namespace/shop unchanged",
                "configmap/settings configured",
                "configmap/limits unchanged",
                "widget.example.kapi.dev/alpha configured",
                "widget.example.kapi.dev/beta configured",
                "widget.example.kapi.dev/gamma unchanged",
            ]
        );
        let alpha = json(&kapi.kubectl(&["get", "wd", "alpha", "-n", "shop", "-o", "json"]));
        assert_eq!(alpha["spec"]["replicas"], 5);
        assert_eq!(alpha["metadata"]["generation"], 2);
        let beta = json(&kapi.kubectl(&["get", "wd", "beta", "-n", "shop", "-o", "json"]));
        assert_eq!(
            beta["metadata"]["labels"],
            serde_json::json!({"app": "demo"})
        );
        assert_eq!(
            kapi.kubectl(&[
                "get",
                "cm",
                "settings",
                "-n",
                "shop",
                "-o",
                "jsonpath={.data.mode}"
            ]),
            "slow"
        );

        // Client-side apply of a change is a PATCH (seen in kubectl's request log).
        let out = kapi.kubectl_version(
            None,
            &["apply", "-f", "-", "-v=6"],
            Some(&MANIFEST.replace("  replicas: 2\n", "  replicas: 6\n")),
        );
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{log}");
        assert!(
            log.lines().any(|l| l.contains("verb=\"PATCH\"")
                && l.contains("/apis/example.kapi.dev/v1/namespaces/shop/widgets/alpha")
                && l.contains("200 OK")),
            "apply did not PATCH alpha:\n{log}"
        );
        assert_eq!(
            kapi.kubectl(&[
                "get",
                "wd",
                "alpha",
                "-n",
                "shop",
                "-o",
                "jsonpath={.spec.replicas}"
            ]),
            "6"
        );

        // apply -f of an object kapi rejects shows the server's validation message.
        let bad = widget_yaml("bad", "app: x", "huge");
        let err = kapi.kubectl_err(&["apply", "-f", "-"], Some(&bad));
        assert!(
            err.contains(r#"spec.size: Unsupported value: "huge": supported values: "small", "medium", "large""#),
            "{err}"
        );
    });
}

#[test]
fn label_annotate_patch_and_subresources() {
    on_every_backend(|kapi| {
        kapi.kubectl_ok(
            None,
            &["create", "-f", "-"],
            Some(&widget_yaml("alpha", "app: demo", "small")),
        );
        let get =
            |path: &str| kapi.kubectl(&["get", "wd", "alpha", "-o", &format!("jsonpath={path}")]);

        // label: add, refuse to overwrite, overwrite, remove.
        assert_eq!(
            kapi.kubectl(&["label", "wd", "alpha", "env=prod"]),
            "widget.example.kapi.dev/alpha labeled\n"
        );
        let err = kapi.kubectl_err(&["label", "wd", "alpha", "env=dev"], None);
        assert!(
            err.contains("'env' already has a value (prod), and --overwrite is false"),
            "{err}"
        );
        kapi.kubectl(&["label", "wd", "alpha", "env=dev", "--overwrite"]);
        assert_eq!(get("{.metadata.labels.env}"), "dev");
        assert_eq!(
            kapi.kubectl(&["label", "wd", "alpha", "env-"]),
            "widget.example.kapi.dev/alpha unlabeled\n"
        );
        assert_eq!(get("{.metadata.labels}"), r#"{"app":"demo"}"#);
        let err = kapi.kubectl_err(&["label", "wd", "alpha", "bad key=x"], None);
        assert!(
            err.contains(
                r#"The Widget "alpha" is invalid: metadata.labels: Invalid value: "bad key""#
            ),
            "{err}"
        );

        // annotate.
        assert_eq!(
            kapi.kubectl(&["annotate", "wd", "alpha", "note=hello world"]),
            "widget.example.kapi.dev/alpha annotated\n"
        );
        assert_eq!(get("{.metadata.annotations.note}"), "hello world");

        // patch --type merge, and a no-op patch.
        assert_eq!(
            kapi.kubectl(&[
                "patch",
                "wd",
                "alpha",
                "--type",
                "merge",
                "-p",
                r#"{"spec":{"replicas":3,"tags":["x","y"]}}"#
            ]),
            "widget.example.kapi.dev/alpha patched\n"
        );
        assert_eq!(get("{.spec.replicas} {.spec.tags}"), r#"3 ["x","y"]"#);
        assert_eq!(
            kapi.kubectl(&[
                "patch",
                "wd",
                "alpha",
                "--type",
                "merge",
                "-p",
                r#"{"spec":{"replicas":3}}"#
            ]),
            "widget.example.kapi.dev/alpha patched (no change)\n"
        );
        // patch --type json, and a failing test operation.
        kapi.kubectl(&[
            "patch",
            "wd",
            "alpha",
            "--type",
            "json",
            "-p",
            r#"[{"op":"replace","path":"/spec/size","value":"medium"},{"op":"add","path":"/spec/tags/-","value":"z"}]"#,
        ]);
        assert_eq!(get("{.spec.size} {.spec.tags}"), r#"medium ["x","y","z"]"#);
        let err = kapi.kubectl_err(
            &[
                "patch",
                "wd",
                "alpha",
                "--type",
                "json",
                "-p",
                r#"[{"op":"test","path":"/spec/size","value":"large"}]"#,
            ],
            None,
        );
        assert!(err.contains("/spec/size"), "{err}");
        // The default (strategic) patch merges `ports` by its list-map key, name.
        kapi.kubectl(&[
            "patch",
            "wd",
            "alpha",
            "-p",
            r#"{"spec":{"ports":[{"name":"http","port":80}]}}"#,
        ]);
        kapi.kubectl(&[
            "patch",
            "wd",
            "alpha",
            "-p",
            r#"{"spec":{"ports":[{"name":"https","port":443}]}}"#,
        ]);
        assert_eq!(
            get("{.spec.ports}"),
            r#"[{"name":"http","port":80},{"name":"https","port":443}]"#
        );
        // ... and on a core kind, maps merge.
        kapi.kubectl_ok(
            None,
            &["create", "-f", "-"],
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n"),
        );
        kapi.kubectl(&["patch", "configmap", "cfg", "-p", r#"{"data":{"b":"2"}}"#]);
        assert_eq!(
            kapi.kubectl(&["get", "cm", "cfg", "-o", "jsonpath={.data}"]),
            r#"{"a":"1","b":"2"}"#
        );

        // The server's validation, as kubectl shows it.
        let err = kapi.kubectl_err(
            &[
                "patch",
                "wd",
                "alpha",
                "--type",
                "merge",
                "-p",
                r#"{"spec":{"color":"blue"}}"#,
            ],
            None,
        );
        assert!(
            err.contains(r#"The Widget "alpha" is invalid: spec.color: Invalid value: "string": color is immutable"#),
            "{err}"
        );
        let err = kapi.kubectl_err(
            &[
                "patch",
                "wd",
                "alpha",
                "--type",
                "merge",
                "-p",
                r#"{"spec":{"replicas":50}}"#,
            ],
            None,
        );
        assert!(
            err.contains("only large widgets may have more than 10 replicas"),
            "{err}"
        );

        // The status subresource: spec changes are ignored there, status is kept.
        kapi.kubectl(&[
            "patch",
            "wd",
            "alpha",
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"replicas":9},"status":{"readyReplicas":2,"replicas":3,"conditions":[{"type":"Ready","status":"True"}]}}"#,
        ]);
        assert_eq!(get("{.spec.replicas} {.status.readyReplicas}"), "3 2");
        let rows = table(&kapi.kubectl(&["get", "wd", "alpha"]));
        assert_eq!(rows[1][..4], ["alpha", "medium", "3", "2"]);
        assert_eq!(
            kapi.kubectl(&["wait", "--for=condition=Ready", "wd/alpha", "--timeout=10s"]),
            "widget.example.kapi.dev/alpha condition met\n"
        );
        assert_eq!(
            kapi.kubectl(&[
                "wait",
                "--for=jsonpath={.spec.size}=medium",
                "wd/alpha",
                "--timeout=10s"
            ]),
            "widget.example.kapi.dev/alpha condition met\n"
        );

        // The scale subresource.
        assert_eq!(
            kapi.kubectl(&["scale", "--replicas=4", "widget/alpha"]),
            "widget.example.kapi.dev/alpha scaled\n"
        );
        assert_eq!(get("{.spec.replicas}"), "4");
        let scale = json(&kapi.kubectl(&[
            "get",
            "widget",
            "alpha",
            "--subresource=scale",
            "-o",
            "json",
        ]));
        assert_eq!(
            (&scale["apiVersion"], &scale["kind"]),
            (&"autoscaling/v1".into(), &"Scale".into())
        );
        assert_eq!(scale["spec"]["replicas"], 4);
        assert_eq!(scale["status"]["replicas"], 3);
        let err = kapi.kubectl_err(
            &[
                "scale",
                "--replicas=5",
                "--current-replicas=3",
                "widget/alpha",
            ],
            None,
        );
        assert!(err.contains("Expected replicas to be 3, was 4"), "{err}");
        assert_eq!(get("{.spec.replicas}"), "4");
    });
}

#[test]
fn delete_by_name_selector_all_and_wait() {
    on_every_backend(|kapi| {
        for (name, app) in [
            ("d1", "a"),
            ("d2", "a"),
            ("d3", "b"),
            ("d4", "b"),
            ("d5", "c"),
        ] {
            kapi.kubectl_ok(
                None,
                &["create", "-f", "-"],
                Some(&widget_yaml(name, &format!("app: {app}"), "small")),
            );
        }
        assert_eq!(
            kapi.kubectl(&["delete", "wd", "d1"]),
            "widget.example.kapi.dev \"d1\" deleted\n"
        );
        let err = kapi.kubectl_err(&["delete", "wd", "d1"], None);
        assert_eq!(
            err.trim(),
            r#"Error from server (NotFound): widgets.example.kapi.dev "d1" not found"#
        );
        assert_eq!(
            kapi.kubectl(&["delete", "wd", "d1", "--ignore-not-found"]),
            ""
        );
        assert_eq!(
            kapi.kubectl(&["delete", "wd", "-l", "app=a"]),
            "widget.example.kapi.dev \"d2\" deleted\n"
        );
        assert_eq!(names(&kapi.kubectl(&["get", "wd"])), ["d3", "d4", "d5"]);
        assert_eq!(
            kapi.kubectl(&["delete", "wd", "--field-selector", "metadata.name=d5"]),
            "widget.example.kapi.dev \"d5\" deleted\n"
        );
        assert_eq!(
            sorted_lines(&kapi.kubectl(&["delete", "wd", "--all"])),
            [
                "widget.example.kapi.dev \"d3\" deleted",
                "widget.example.kapi.dev \"d4\" deleted"
            ]
        );
        let out = kapi.kubectl_version(None, &["get", "wd"], None);
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            "No resources found in default namespace."
        );

        // A finalizer holds the object: `wait --for=delete` times out while it is
        // there, and returns once the finalizer is removed.
        let held = "apiVersion: example.kapi.dev/v1\nkind: Widget\nmetadata:\n  name: held\n  finalizers: [example.kapi.dev/hold]\nspec:\n  color: red\n";
        kapi.kubectl_ok(None, &["create", "-f", "-"], Some(held));
        assert_eq!(
            kapi.kubectl(&["delete", "wd", "held", "--wait=false"]),
            "widget.example.kapi.dev \"held\" deleted\n"
        );
        let obj = json(&kapi.kubectl(&["get", "wd", "held", "-o", "json"]));
        assert!(obj["metadata"]["deletionTimestamp"].is_string(), "{obj}");
        let err = kapi.kubectl_err(&["wait", "--for=delete", "wd/held", "--timeout=1s"], None);
        assert!(
            err.contains("timed out waiting for the condition on widgets/held"),
            "{err}"
        );
        // Remove the finalizer once the waiter watches (seen in its request log).
        let mut waiter = LineReader::with_stderr(kapi.kubectl_spawn(&[
            "wait",
            "--for=delete",
            "wd/held",
            "--timeout=30s",
            "-v=6",
        ]));
        waiter.wait_for(Duration::from_secs(20), |l| {
            l.contains("watch=true") && l.contains("200 OK")
        });
        kapi.kubectl(&[
            "patch",
            "wd",
            "held",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ]);
        waiter.wait_for(Duration::from_secs(20), |l| {
            l == "widget.example.kapi.dev/held condition met"
        });
        assert!(waiter.wait_exit(Duration::from_secs(20)).success());
        assert!(
            kapi.kubectl_err(&["get", "wd", "held"], None)
                .contains("NotFound")
        );

        // delete -f of a manifest, then of a namespace with content (kubectl waits for
        // the namespace controller to empty and remove it).
        let file = write_file(kapi, "shop.yaml", MANIFEST);
        kapi.kubectl(&["create", "-f", &file]);
        let out = kapi.kubectl(&["delete", "-f", &file, "-l", "app=demo"]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "widget.example.kapi.dev \"alpha\" deleted",
                "widget.example.kapi.dev \"beta\" deleted"
            ]
        );
        assert_eq!(
            kapi.kubectl(&["delete", "namespace", "shop", "--timeout=60s"]),
            "namespace \"shop\" deleted\n"
        );
        let err = kapi.kubectl_err(&["get", "namespace", "shop"], None);
        assert!(err.contains(r#"namespaces "shop" not found"#), "{err}");
    });
}

#[test]
fn get_watch_streams_changes() {
    on_every_backend(|kapi| {
        kapi.kubectl_ok(
            None,
            &["create", "-f", "-"],
            Some(&widget_yaml("w1", "tier: front", "small")),
        );
        let mut all = LineReader::new(kapi.kubectl_spawn(&[
            "get",
            "widgets",
            "-w",
            "--output-watch-events",
            "--request-timeout=60s",
        ]));
        let mut front = LineReader::new(kapi.kubectl_spawn(&[
            "get",
            "widgets",
            "-w",
            "-l",
            "tier=front",
            "--request-timeout=60s",
        ]));
        let wait = Duration::from_secs(20);
        let event = |ty: &'static str, name: &'static str, replicas: Option<&'static str>| {
            move |l: &str| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.len() > 3 && c[0] == ty && c[1] == name && replicas.is_none_or(|r| c[3] == r)
            }
        };
        let header = all.wait_for(wait, |l| l.starts_with("EVENT"));
        assert_eq!(
            header.split_whitespace().collect::<Vec<_>>(),
            ["EVENT", "NAME", "SIZE", "REPLICAS", "READY", "AGE"]
        );
        all.wait_for(wait, event("ADDED", "w1", Some("1")));
        front.wait_for(wait, |l| l.starts_with("w1 "));

        kapi.kubectl_ok(
            None,
            &["create", "-f", "-"],
            Some(&widget_yaml("w2", "tier: back", "large")),
        );
        all.wait_for(wait, event("ADDED", "w2", None));
        kapi.kubectl(&[
            "patch",
            "wd",
            "w1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"replicas":7}}"#,
        ]);
        all.wait_for(wait, event("MODIFIED", "w1", Some("7")));
        kapi.kubectl(&["delete", "wd", "w2"]);
        all.wait_for(wait, event("DELETED", "w2", None));
        kapi.kubectl(&["scale", "wd", "w1", "--replicas=8"]);
        all.wait_for(wait, event("MODIFIED", "w1", Some("8")));

        // The selector-filtered watch sees w1's changes and nothing of w2 (which came
        // before them in the same stream).
        front.wait_for(wait, |l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            c.first() == Some(&"w1") && c.get(2) == Some(&"8")
        });
        assert!(
            front.lines().iter().all(|l| !l.starts_with("w2")),
            "{:?}",
            front.lines()
        );
        let events: Vec<String> = all
            .lines()
            .iter()
            .skip(1)
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            events,
            [
                "ADDED w1",
                "ADDED w2",
                "MODIFIED w1",
                "DELETED w2",
                "MODIFIED w1"
            ]
        );
        all.stop();
        front.stop();
    });
}

#[test]
fn field_validation_strict_warn_and_ignore() {
    on_every_backend(|kapi| {
        let with_unknown = |name: &str| {
            format!(
                "apiVersion: example.kapi.dev/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n  color: red\n  flavour: sweet\n"
            )
        };
        let err = kapi.kubectl_err(
            &["apply", "--validate=strict", "-f", "-"],
            Some(&with_unknown("strict")),
        );
        assert!(
            err.contains(r#"strict decoding error: unknown field "spec.flavour""#),
            "{err}"
        );
        assert!(
            kapi.kubectl_err(&["get", "wd", "strict"], None)
                .contains("NotFound")
        );
        // The default is strict too.
        let err = kapi.kubectl_err(&["create", "-f", "-"], Some(&with_unknown("default")));
        assert!(err.contains(r#"unknown field "spec.flavour""#), "{err}");

        let out = kapi.kubectl_version(
            None,
            &["apply", "--validate=warn", "-f", "-"],
            Some(&with_unknown("warned")),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains(r#"Warning: unknown field "spec.flavour""#),
            "{stderr}"
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "widget.example.kapi.dev/warned created\n"
        );

        let out = kapi.kubectl_version(
            None,
            &["apply", "--validate=false", "-f", "-"],
            Some(&with_unknown("ignored")),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("flavour"), "{stderr}");
        for name in ["warned", "ignored"] {
            let obj = json(&kapi.kubectl(&["get", "wd", name, "-o", "json"]));
            assert_eq!(
                obj["spec"],
                serde_json::json!({"color": "red", "size": "medium", "replicas": 1}),
                "unknown fields are pruned"
            );
        }
    });
}

#[test]
fn smoke_with_every_kubectl_release() {
    let versions = kubectl_versions();
    assert!(
        versions.len() >= 7,
        "expected kubectl 1.27..1.33 beside kubectl, found {versions:?}"
    );
    on_every_backend(|kapi| {
        let mut failures = Vec::new();
        for v in &versions {
            let one = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let run =
                    |args: &[&str], stdin: Option<&str>| kapi.kubectl_ok(Some(v), args, stdin);
                let out = run(&["api-resources"], None);
                assert!(
                    out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                        == ["widgets", "wd", "example.kapi.dev/v1", "true", "Widget"]),
                    "kubectl {v} api-resources:\n{out}"
                );
                let ns = format!("v{}", v.replace('.', "-"));
                let manifest = format!(
                    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: {ns}\ndata:\n  k: v\n---\napiVersion: example.kapi.dev/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: {ns}\nspec:\n  color: red\n  replicas: 3\n"
                );
                let out = run(&["apply", "-f", "-"], Some(&manifest));
                assert_eq!(
                    out.lines().collect::<Vec<_>>(),
                    [
                        format!("namespace/{ns} created"),
                        "configmap/cfg created".to_string(),
                        "widget.example.kapi.dev/w created".to_string()
                    ],
                    "kubectl {v}"
                );
                let out = run(
                    &["apply", "-f", "-"],
                    Some(&manifest.replace("replicas: 3", "replicas: 4")),
                );
                assert!(
                    out.contains("widget.example.kapi.dev/w configured"),
                    "kubectl {v}: {out}"
                );
                let yaml = run(&["get", "wd", "w", "-n", &ns, "-o", "yaml"], None);
                assert!(
                    yaml.lines().any(|l| l == "  replicas: 4")
                        && yaml.lines().any(|l| l == "kind: Widget"),
                    "kubectl {v}:\n{yaml}"
                );
                let out = run(&["get", "wd", "-n", &ns], None);
                assert_eq!(
                    table(&out)[1][..3],
                    ["w", "medium", "4"],
                    "kubectl {v}:\n{out}"
                );
                let out = run(&["delete", "wd", "w", "-n", &ns], None);
                assert!(
                    out.starts_with("widget.example.kapi.dev \"w\" deleted"),
                    "kubectl {v}: {out}"
                );
                let out = run(&["delete", "cm", "cfg", "-n", &ns], None);
                assert!(
                    out.starts_with("configmap \"cfg\" deleted"),
                    "kubectl {v}: {out}"
                );
            }));
            if let Err(e) = one {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("kubectl {v}: {msg}"));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} kubectl releases failed:\n{}",
            failures.len(),
            versions.len(),
            failures.join("\n\n")
        );
    });
}
