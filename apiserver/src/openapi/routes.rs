//! The operations of a resource, as apiextensions-apiserver's CRD OpenAPI builder lists
//! them (list, create, deletecollection, read, replace, delete, patch, and read,
//! replace, patch of `/status` and `/scale`), with kube-apiserver's operation ids,
//! tags, descriptions and query parameters.

use kapi_core::ResourceInfo;
use serde_json::{Value, json};

use super::OpenApiOptions;
use super::meta::{DELETE_OPTIONS, PATCH, SCALE, STATUS};
use super::schema::definition_name;

/// A query or path parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Param {
    pub name: &'static str,
    pub in_: &'static str,
    pub type_: &'static str,
    pub description: &'static str,
}

const fn query(name: &'static str, type_: &'static str, description: &'static str) -> Param {
    Param {
        name,
        in_: "query",
        type_,
        description,
    }
}

pub(super) const PRETTY: Param = query(
    "pretty",
    "string",
    "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
);
const RESOURCE_VERSION: Param = query(
    "resourceVersion",
    "string",
    "resourceVersion sets a constraint on what resource versions a request may be served from. Defaults to unset.",
);
const LIST: [Param; 10] = [
    query(
        "allowWatchBookmarks",
        "boolean",
        "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers may ignore it.",
    ),
    query(
        "continue",
        "string",
        "The continue token returned by a previous list call, to retrieve the next chunk of results.",
    ),
    query(
        "fieldSelector",
        "string",
        "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
    ),
    query(
        "labelSelector",
        "string",
        "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
    ),
    query(
        "limit",
        "integer",
        "limit is the maximum number of responses to return for a list call; more are available with continue.",
    ),
    RESOURCE_VERSION,
    query(
        "resourceVersionMatch",
        "string",
        "resourceVersionMatch determines how resourceVersion is applied to list calls (Exact or NotOlderThan).",
    ),
    query(
        "sendInitialEvents",
        "boolean",
        "With watch=true, start the watch stream with synthetic events for the current state of the collection.",
    ),
    query(
        "timeoutSeconds",
        "integer",
        "Timeout for the list/watch call, regardless of any activity or inactivity.",
    ),
    query(
        "watch",
        "boolean",
        "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.",
    ),
];
const DRY_RUN: Param = query(
    "dryRun",
    "string",
    "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed",
);
const FIELD_MANAGER: Param = query(
    "fieldManager",
    "string",
    "fieldManager is a name associated with the actor or entity that is making these changes; required for apply requests.",
);
const FIELD_VALIDATION: Param = query(
    "fieldValidation",
    "string",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn (the default) and Strict.",
);
const FORCE: Param = query(
    "force",
    "boolean",
    "Force is going to \"force\" Apply requests: the caller takes over fields owned by other managers. Must be unset for non-apply patch requests.",
);
const DELETE: [Param; 5] = [
    DRY_RUN,
    query(
        "gracePeriodSeconds",
        "integer",
        "The duration in seconds before the object should be deleted. Zero means delete immediately.",
    ),
    query(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "boolean",
        "If set to true, delete an object that cannot be read from storage, skipping finalizers and preconditions.",
    ),
    query(
        "orphanDependents",
        "boolean",
        "Deprecated: please use propagationPolicy. Whether the dependent objects should be orphaned.",
    ),
    query(
        "propagationPolicy",
        "string",
        "Whether and how garbage collection will be performed: Orphan, Background or Foreground.",
    ),
];

const NAMESPACE_DESCRIPTION: &str = "object name and auth scope, such as for teams and projects";

/// One operation.
#[derive(Clone, Debug)]
pub(crate) struct Route {
    pub path: String,
    pub method: &'static str,
    pub action: &'static str,
    pub operation_id: String,
    pub tag: String,
    pub description: String,
    pub path_params: Vec<(&'static str, String)>,
    pub query: Vec<Param>,
    /// Definition name, whether required, whether a patch.
    pub body: Option<(String, bool, bool)>,
    /// Status code, description, definition name.
    pub responses: Vec<(u16, &'static str, String)>,
    pub gvk: Value,
}

/// The operations of one resource version, in kube-apiserver's order, keeping only the
/// verbs it serves.
pub(crate) fn routes(info: &ResourceInfo, opts: &OpenApiOptions) -> Vec<Route> {
    let prefix = if info.group.is_empty() {
        format!("/api/{}", info.version)
    } else {
        format!("/apis/{}/{}", info.group, info.version)
    };
    let mut write = vec![DRY_RUN, FIELD_MANAGER];
    if opts.field_validation {
        write.push(FIELD_VALIDATION);
    }
    let mut patch = write.clone();
    patch.push(FORCE);
    let mut ops = Operations {
        info,
        root: format!("{prefix}/{}", info.plural),
        scope: "",
        object: definition_name(&info.group, &info.version, &info.kind),
        list: definition_name(&info.group, &info.version, &info.list_kind),
        write,
        patch,
    };
    let mut b = Builder {
        info,
        out: Vec::new(),
    };
    if info.namespaced() {
        // A namespaced resource is listed across namespaces too, at the unscoped path.
        if ops.serves("list") {
            b.add(
                &ops.root,
                "",
                "get",
                "list",
                "list",
                &format!("list{}ForAllNamespaces", info.kind),
                &LIST,
                None,
                &[(200, "OK", &ops.list)],
            );
        }
        ops.root = format!("{prefix}/namespaces/{{namespace}}/{}", info.plural);
        ops.scope = "Namespaced";
    }
    ops.collection(&mut b);
    ops.item(&mut b);
    ops.subresources(&mut b);
    b.out
}

/// What the operations of one resource version share: the path they hang off (in the
/// namespace for a namespaced resource), the scope word of their operation ids, the
/// object and list definitions, and the query parameters of writes and patches.
struct Operations<'a> {
    info: &'a ResourceInfo,
    root: String,
    scope: &'static str,
    object: String,
    list: String,
    write: Vec<Param>,
    patch: Vec<Param>,
}

impl Operations<'_> {
    /// Whether the resource serves `verb`.
    fn serves(&self, verb: &str) -> bool {
        self.info.serves(verb)
    }

    /// An operation such as `patchNamespacedDeploymentScale`, for
    /// [`operation_id_and_tag`].
    fn op(&self, verb: &str, sub: &str) -> String {
        format!("{verb}{}{}{}", self.scope, self.info.kind, title(sub))
    }

    /// The collection's operations: list, create and deletecollection.
    fn collection(&self, b: &mut Builder<'_>) {
        let (root, object) = (&self.root, &self.object);
        if self.serves("list") {
            b.add(
                root,
                "",
                "get",
                "list",
                "list",
                &self.op("list", ""),
                &LIST,
                None,
                &[(200, "OK", &self.list)],
            );
        }
        if self.serves("create") {
            let responses = [
                (200, "OK", object),
                (201, "Created", object),
                (202, "Accepted", object),
            ];
            b.add(
                root,
                "",
                "post",
                "post",
                "create",
                &self.op("create", ""),
                &self.write,
                Some((object, true, false)),
                &responses,
            );
        }
        if self.serves("deletecollection") {
            let mut delete_collection = LIST.to_vec();
            delete_collection.extend(DELETE);
            delete_collection.sort_by_key(|p| p.name);
            delete_collection.dedup();
            b.add(
                root,
                "",
                "delete",
                "deletecollection",
                "deletecollection",
                &self.op("deletecollection", ""),
                &delete_collection,
                Some((DELETE_OPTIONS, false, false)),
                &[(200, "OK", &STATUS.to_string())],
            );
        }
    }

    /// One object's operations, at `/{name}`: read, replace, delete and patch.
    fn item(&self, b: &mut Builder<'_>) {
        let (root, object) = (&self.root, &self.object);
        if self.serves("get") {
            b.add(
                root,
                "/{name}",
                "get",
                "get",
                "read",
                &self.op("read", ""),
                &[RESOURCE_VERSION],
                None,
                &[(200, "OK", object)],
            );
        }
        if self.serves("update") {
            let responses = [(200, "OK", object), (201, "Created", object)];
            b.add(
                root,
                "/{name}",
                "put",
                "put",
                "replace",
                &self.op("replace", ""),
                &self.write,
                Some((object, true, false)),
                &responses,
            );
        }
        if self.serves("delete") {
            let status = STATUS.to_string();
            let responses = [(200, "OK", &status), (202, "Accepted", &status)];
            b.add(
                root,
                "/{name}",
                "delete",
                "delete",
                "delete",
                &self.op("delete", ""),
                &DELETE,
                Some((DELETE_OPTIONS, false, false)),
                &responses,
            );
        }
        if self.serves("patch") {
            b.add(
                root,
                "/{name}",
                "patch",
                "patch",
                "patch",
                &self.op("patch", ""),
                &self.patch,
                Some((PATCH, true, true)),
                &[(200, "OK", object)],
            );
        }
    }

    /// Read, replace and patch of `/{name}/status` and `/{name}/scale`, for the
    /// subresources the resource has, whatever its verbs.
    fn subresources(&self, b: &mut Builder<'_>) {
        let scale = SCALE.to_string();
        let mut subresources = Vec::new();
        if self.info.subresources.status {
            subresources.push(("status", &self.object));
        }
        if self.info.subresources.scale.is_some() {
            subresources.push(("scale", &scale));
        }
        for (sub, sample) in subresources {
            let path = format!("/{{name}}/{sub}");
            b.add(
                &self.root,
                &path,
                "get",
                "get",
                "read",
                &self.op("read", sub),
                &[],
                None,
                &[(200, "OK", sample)],
            );
            let responses = [(200, "OK", sample), (201, "Created", sample)];
            b.add(
                &self.root,
                &path,
                "put",
                "put",
                "replace",
                &self.op("replace", sub),
                &self.write,
                Some((sample, true, false)),
                &responses,
            );
            b.add(
                &self.root,
                &path,
                "patch",
                "patch",
                "patch",
                &self.op("patch", sub),
                &self.patch,
                Some((PATCH, true, true)),
                &[(200, "OK", sample)],
            );
        }
    }
}

struct Builder<'a> {
    info: &'a ResourceInfo,
    out: Vec<Route>,
}

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        root: &str,
        sub_path: &str,
        method: &'static str,
        action: &'static str,
        verb: &str,
        operation: &str,
        query: &[Param],
        body: Option<(&str, bool, bool)>,
        responses: &[(u16, &'static str, &String)],
    ) {
        let info = self.info;
        let path = format!("{root}{sub_path}");
        let (operation_id, tag) = operation_id_and_tag(operation, &path);
        let mut path_params = Vec::new();
        if path.contains("{name}") {
            path_params.push(("name", format!("name of the {}", info.kind)));
        }
        if path.contains("{namespace}") {
            path_params.push(("namespace", NAMESPACE_DESCRIPTION.to_string()));
        }
        let sub = sub_path.rsplit_once("}/").map(|(_, s)| s).unwrap_or("");
        self.out.push(Route {
            path,
            method,
            action,
            operation_id,
            tag,
            description: description(&info.kind, verb, sub),
            path_params,
            query: query.to_vec(),
            body: body.map(|(name, required, is_patch)| (name.to_string(), required, is_patch)),
            responses: responses
                .iter()
                .map(|(code, text, name)| (*code, *text, name.to_string()))
                .collect(),
            gvk: json!({"group": info.group, "kind": info.kind, "version": info.version}),
        });
    }
}

fn title(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// kube-apiserver's operation descriptions (`descriptionFor` in the CRD builder).
fn description(kind: &str, verb: &str, sub: &str) -> String {
    let sub = if sub.is_empty() {
        String::new()
    } else {
        format!(" {sub} of")
    };
    match verb {
        "list" => format!("list{sub} objects of kind {kind}"),
        "read" | "replace" => format!("{verb}{sub} the specified {kind}"),
        "patch" => format!("partially update{sub} the specified {kind}"),
        "deletecollection" => {
            let sub = if sub.is_empty() {
                sub
            } else {
                format!("{sub} a")
            };
            format!("delete collection of{sub} {kind}")
        }
        _ => format!("{verb}{sub}{}{kind}", article(kind)),
    }
}

/// `GetArticleForNoun(noun, " ")`.
fn article(noun: &str) -> &'static str {
    if noun.ends_with('s') && !noun.ends_with("ss") {
        " "
    } else if noun.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
        " an "
    } else {
        " a "
    }
}

/// kube-apiserver's `GetOperationIDAndTags`: the verb, then the group (without
/// `.k8s.io`, `core` for `/api`) and version camel-cased, then the rest of the operation
/// name; the tag is `group_version`.
fn operation_id_and_tag(operation: &str, path: &str) -> (String, String) {
    const VERBS: [&str; 12] = [
        "get",
        "log",
        "read",
        "list",
        "patch",
        "proxy",
        "watch",
        "create",
        "delete",
        "connect",
        "replace",
        "deletecollection",
    ];
    // The shortest verb that prefixes the operation, as kube's trie finds it.
    let verb = VERBS
        .iter()
        .find(|v| operation.starts_with(*v))
        .copied()
        .unwrap_or("");
    let rest = &operation[verb.len()..];
    let mut parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    if parts.first() == Some(&"api") {
        parts.splice(0..1, ["apis", "core"]);
    }
    let group = parts.get(1).copied().unwrap_or("");
    let group = group.strip_suffix(".k8s.io").unwrap_or(group);
    let version = parts.get(2).copied().unwrap_or("");
    let id = format!(
        "{verb}{}{}{}",
        camel(group, true),
        camel(version, true),
        camel(rest, true)
    );
    let tag = format!("{}_{}", camel(group, false), camel(version, false));
    (id, tag)
}

/// `ToValidOperationID`: letters, `_` and (not first) digits kept; anything else
/// dropped, capitalizing the next letter.
fn camel(s: &str, capitalize_first: bool) -> String {
    let mut out = String::new();
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_ids_follow_kube_apiserver() {
        let cases = [
            (
                "listNamespacedWidget",
                "/apis/example.kapi.dev/v1/namespaces/{namespace}/widgets",
                "listExampleKapiDevV1NamespacedWidget",
                "exampleKapiDev_v1",
            ),
            (
                "listWidgetForAllNamespaces",
                "/apis/example.kapi.dev/v1/widgets",
                "listExampleKapiDevV1WidgetForAllNamespaces",
                "exampleKapiDev_v1",
            ),
            (
                "deletecollectionNamespacedLease",
                "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases",
                "deleteCoordinationV1CollectionNamespacedLease",
                "coordination_v1",
            ),
            (
                "readNamespacedWidgetStatus",
                "/apis/example.kapi.dev/v1/namespaces/{namespace}/widgets/{name}/status",
                "readExampleKapiDevV1NamespacedWidgetStatus",
                "exampleKapiDev_v1",
            ),
            (
                "replaceNamespace",
                "/api/v1/namespaces/{name}",
                "replaceCoreV1Namespace",
                "core_v1",
            ),
            (
                "patchGatewayClass",
                "/apis/gateway.networking.k8s.io/v1beta1/gatewayclasses/{name}",
                "patchGatewayNetworkingV1beta1GatewayClass",
                "gatewayNetworking_v1beta1",
            ),
            (
                "createNamespacedCertificate",
                "/apis/cert-manager.io/v1/namespaces/{namespace}/certificates",
                "createCertManagerIoV1NamespacedCertificate",
                "certManagerIo_v1",
            ),
        ];
        for (op, path, id, tag) in cases {
            assert_eq!(
                operation_id_and_tag(op, path),
                (id.to_string(), tag.to_string()),
                "{op}"
            );
        }
    }

    #[test]
    fn descriptions_follow_kube_apiserver() {
        assert_eq!(
            description("Widget", "list", ""),
            "list objects of kind Widget"
        );
        assert_eq!(description("Widget", "create", ""), "create a Widget");
        assert_eq!(description("Ingress", "delete", ""), "delete an Ingress");
        assert_eq!(
            description("Widget", "deletecollection", ""),
            "delete collection of Widget"
        );
        assert_eq!(
            description("Widget", "read", "status"),
            "read status of the specified Widget"
        );
        assert_eq!(
            description("Widget", "patch", "scale"),
            "partially update scale of the specified Widget"
        );
        assert_eq!(
            description("Widget", "replace", ""),
            "replace the specified Widget"
        );
    }
}
