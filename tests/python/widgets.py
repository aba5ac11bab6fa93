"""End-to-end checks of kapi with the official Python `kubernetes` client.

Usage: python3 widgets.py KUBECONFIG

Runs CustomObjectsApi CRUD on example.kapi.dev/v1 widgets (create, list with a label
selector, get, the merge patch the client sends for dict bodies, a JSON patch, status
and scale subresources, delete), CoreV1Api on namespaces and ConfigMaps, and a
`kubernetes.watch.Watch` stream over widgets that sees ADDED, MODIFIED and DELETED, and
server-side apply through the dynamic client's `server_side_apply` (ownership, a
conflict and `force_conflicts`).
Every check is an assert (the script exits non-zero on the first failure); on success
it prints one JSON object summarising what it saw, for the Rust test to check.
"""

import json
import sys
import threading

import kubernetes
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException, RESTClientObject

GROUP, VERSION, PLURAL, NS = "example.kapi.dev", "v1", "widgets", "default"

# Record every request's method, path and Content-Type, to report what the client sends
# (read after the call: the REST layer may rewrite the header, for example JSON patch to
# strategic merge patch for dict bodies).
SENT = []
_request = RESTClientObject.request


def _recording_request(self, method, url, headers=None, *args, **kwargs):
    headers = {} if headers is None else headers
    try:
        return _request(self, method, url, headers, *args, **kwargs)
    finally:
        SENT.append({"method": method, "url": url, "content_type": headers.get("Content-Type")})


RESTClientObject.request = _recording_request


def widget(name, labels, spec):
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Widget",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    }


def api_error(fn, *args, **kwargs):
    """Calls fn expecting an ApiException; returns (status, body as JSON)."""
    try:
        fn(*args, **kwargs)
    except ApiException as e:
        return e.status, json.loads(e.body)
    raise AssertionError(f"{fn.__name__} should have failed")


def custom_objects(custom, summary):
    created = custom.create_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL,
        widget("py1", {"app": "py", "tier": "front"}, {"color": "red", "size": "small"}),
    )
    assert created["metadata"]["generation"] == 1, created
    assert len(created["metadata"]["uid"]) == 36, created
    assert created["spec"] == {"color": "red", "size": "small", "replicas": 1}, created
    custom.create_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, widget("py2", {"app": "py", "tier": "back"}, {"color": "blue"})
    )
    custom.create_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, widget("other", {"app": "other"}, {"color": "green"})
    )

    status, body = api_error(
        custom.create_namespaced_custom_object, GROUP, VERSION, NS, PLURAL,
        widget("py1", {}, {"color": "red"}),
    )
    assert (status, body["reason"]) == (409, "AlreadyExists"), body
    status, body = api_error(
        custom.create_namespaced_custom_object, GROUP, VERSION, NS, PLURAL,
        widget("bad", {}, {"color": "red", "replicas": 500}),
    )
    assert (status, body["reason"]) == (422, "Invalid"), body
    assert body["details"]["causes"][0]["field"] == "spec.replicas", body
    status, body = api_error(custom.get_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "nope")
    assert (status, body["reason"]) == (404, "NotFound"), body

    listed = custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, label_selector="app=py")
    assert listed["kind"] == "WidgetList", listed
    summary["label_selector"] = [i["metadata"]["name"] for i in listed["items"]]
    listed = custom.list_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, field_selector="spec.size=small"
    )
    summary["field_selector"] = [i["metadata"]["name"] for i in listed["items"]]
    listed = custom.list_cluster_custom_object(GROUP, VERSION, PLURAL, label_selector="tier")
    summary["all_namespaces"] = [i["metadata"]["name"] for i in listed["items"]]

    got = custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "py1")
    assert got["metadata"]["uid"] == created["metadata"]["uid"], got

    # A dict body: the client sends a JSON merge patch. Merge semantics: null removes a
    # key, and a list (ports) is replaced whole, not merged by key.
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "py1", {"spec": {"ports": [{"name": "http", "port": 80}]}}
    )
    patched = custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "py1",
        {"metadata": {"labels": {"tier": None}}, "spec": {"replicas": 3, "ports": [{"name": "https", "port": 443}]}},
    )
    assert patched["spec"]["replicas"] == 3, patched
    assert patched["spec"]["ports"] == [{"name": "https", "port": 443}], patched
    assert patched["metadata"]["labels"] == {"app": "py"}, patched
    summary["merge_patch_content_type"] = SENT[-1]["content_type"]
    assert SENT[-1]["method"] == "PATCH", SENT[-1]

    # A JSON patch, with the content type given explicitly.
    patched = custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "py1",
        [{"op": "replace", "path": "/spec/size", "value": "medium"},
         {"op": "add", "path": "/metadata/labels/tier", "value": "middle"}],
        _content_type="application/json-patch+json",
    )
    assert patched["spec"]["size"] == "medium", patched
    assert patched["metadata"]["labels"]["tier"] == "middle", patched
    summary["json_patch_content_type"] = SENT[-1]["content_type"]

    # Replace with a stale resourceVersion conflicts.
    stale = dict(got)
    status, body = api_error(
        custom.replace_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "py1", stale
    )
    assert (status, body["reason"]) == (409, "Conflict"), body

    # Immutable colour.
    status, body = api_error(
        custom.patch_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "py1",
        {"spec": {"color": "blue"}},
    )
    assert status == 422 and "color is immutable" in body["message"], body

    # The status subresource ignores spec; the main resource ignores status.
    with_status = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, NS, PLURAL, "py1",
        {"spec": {"replicas": 9}, "status": {"replicas": 3, "readyReplicas": 3, "phase": "Running",
                                             "conditions": [{"type": "Ready", "status": "True"}]}},
    )
    assert with_status["status"]["readyReplicas"] == 3, with_status
    assert with_status["spec"]["replicas"] == 3, with_status
    summary["status_patch_content_type"] = SENT[-1]["content_type"]
    got = custom.get_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "py1")
    assert got["status"]["phase"] == "Running", got

    # The scale subresource.
    scale = custom.get_namespaced_custom_object_scale(GROUP, VERSION, NS, PLURAL, "py1")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 3, scale
    scale = custom.patch_namespaced_custom_object_scale(
        GROUP, VERSION, NS, PLURAL, "py1", {"spec": {"replicas": 6}}
    )
    assert scale["spec"]["replicas"] == 6, scale
    got = custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "py1")
    assert got["spec"]["replicas"] == 6, got

    # Delete.
    deleted = custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "py2")
    assert deleted["metadata"]["name"] == "py2", deleted
    status, _ = api_error(custom.get_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "py2")
    assert status == 404
    remaining = custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
    summary["after_delete"] = [i["metadata"]["name"] for i in remaining["items"]]


def core(v1, summary):
    namespaces = v1.list_namespace()
    summary["namespaces"] = sorted(n.metadata.name for n in namespaces.items)
    assert all(n.status.phase == "Active" for n in namespaces.items), namespaces
    ns = v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-ns")))
    assert ns.status.phase == "Active", ns

    cm = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="py-cm", labels={"from": "python"}),
        data={"mode": "fast"},
    )
    created = v1.create_namespaced_config_map("py-ns", cm)
    assert created.metadata.uid and created.data == {"mode": "fast"}, created
    read = v1.read_namespaced_config_map("py-cm", "py-ns")
    assert read.data == {"mode": "fast"}, read
    # CoreV1Api's patch of a dict: the client picks the content type (recorded).
    patched = v1.patch_namespaced_config_map("py-cm", "py-ns", {"data": {"level": "3"}})
    assert patched.data == {"mode": "fast", "level": "3"}, patched
    summary["core_patch_content_type"] = SENT[-1]["content_type"]
    listed = v1.list_namespaced_config_map("py-ns", label_selector="from=python")
    assert [c.metadata.name for c in listed.items] == ["py-cm"], listed
    v1.delete_namespaced_config_map("py-cm", "py-ns")
    try:
        v1.read_namespaced_config_map("py-cm", "py-ns")
        raise AssertionError("the ConfigMap should be gone")
    except ApiException as e:
        assert e.status == 404, e
    v1.delete_namespace("py-ns")


def watches(custom, summary):
    w = watch.Watch()
    seen = []
    changes = threading.Event()

    def make_changes():
        custom.create_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, widget("live", {"app": "watch"}, {"color": "red"})
        )
        custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "live", {"spec": {"replicas": 4}})
        custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "live")
        changes.set()

    custom.create_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, widget("pre", {"app": "watch"}, {"color": "red"})
    )
    worker = None
    for event in w.stream(
        custom.list_namespaced_custom_object, GROUP, VERSION, NS, PLURAL,
        label_selector="app=watch", timeout_seconds=20, _request_timeout=30,
    ):
        obj = event["object"]
        seen.append(f'{event["type"]} {obj["metadata"]["name"]} {obj["spec"].get("replicas")}')
        if worker is None:
            # The watch is running (it delivered the existing object): change things.
            worker = threading.Thread(target=make_changes)
            worker.start()
        if event["type"] == "DELETED" and obj["metadata"]["name"] == "live":
            w.stop()
    assert worker is not None, "the watch delivered nothing"
    worker.join(30)
    assert changes.is_set(), "the changes did not finish"
    summary["watch"] = seen

    # A watch resumed from a resourceVersion sees exactly what came after it.
    rv = custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)["metadata"]["resourceVersion"]
    custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "pre", {"spec": {"replicas": 2}})
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "pre")
    resumed = []
    for event in watch.Watch().stream(
        custom.list_namespaced_custom_object, GROUP, VERSION, NS, PLURAL,
        resource_version=rv, timeout_seconds=2, _request_timeout=30,
    ):
        resumed.append(f'{event["type"]} {event["object"]["metadata"]["name"]}')
    summary["resumed_watch"] = resumed


def server_side_apply(api, summary):
    """Two field managers apply to one ConfigMap with the dynamic client."""
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import ConflictError

    dynamic = DynamicClient(api)
    cms = dynamic.resources.get(api_version="v1", kind="ConfigMap")

    def apply(data, manager, force=None):
        return dynamic.server_side_apply(
            cms, body=body(data), namespace=NS, field_manager=manager, force_conflicts=force
        )

    def body(data):
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py-ssa"}, "data": data}

    apply({"a": "1", "b": "2"}, "py-alice")
    # Dropping a field from the configuration removes it.
    applied = apply({"a": "1"}, "py-alice")
    assert applied.data.to_dict() == {"a": "1"}, applied.data
    try:
        apply({"a": "2"}, "py-bob")
        raise AssertionError("a conflicting apply succeeded")
    except ConflictError as e:
        summary["ssa_conflict"] = json.loads(e.body)["message"]
    forced = apply({"a": "2"}, "py-bob", force=True)
    summary["ssa_managers"] = sorted(
        f'{e["manager"]}/{e["operation"]}' for e in forced.metadata.managedFields
    )
    summary["ssa_data"] = forced.data.to_dict()


def main():
    config.load_kube_config(sys.argv[1])
    api = client.ApiClient()
    custom = client.CustomObjectsApi(api)
    v1 = client.CoreV1Api(api)
    summary = {"client_version": kubernetes.__version__}
    custom_objects(custom, summary)
    core(v1, summary)
    watches(custom, summary)
    server_side_apply(api, summary)
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
