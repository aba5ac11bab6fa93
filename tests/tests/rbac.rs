//! RBAC end to end (issue #7): one server (embedded store) with `--token-auth-file` and
//! `--anonymous-auth`, RBAC objects written as the admin, then every question asked as
//! the subjects themselves, as the admin on their behalf, and through kubectl.
//!
//! - **The matrix.** Seven subjects ([`Subject`]: anonymous, a user with no role, a Role
//!   through a RoleBinding, a ClusterRole through a RoleBinding, a ClusterRoleBinding, a
//!   group member and a ServiceAccount) × the eight verbs × configmaps, secrets and the
//!   generated custom resource `widgets.example.kapi.dev` (with `widgets/status` for get,
//!   update and patch) × three scopes (namespace `team-a`, namespace `team-b`,
//!   cluster-wide): 567 cells. [`EXPECTED`] is the answer table, written by hand from
//!   the roles [`setup_policy`] creates (and kube's bootstrap `view` and `edit`). Every
//!   cell is checked against it by
//!   - a SubjectAccessReview posted by the admin, a LocalSubjectAccessReview (namespaced
//!     cells) and a SelfSubjectAccessReview posted by the subject itself;
//!   - a real request as the subject: every verb of every subject and resource in both
//!     namespaces; cluster-wide, list and watch (the only verbs a namespaced resource
//!     serves without a namespace). Allowed means a 2xx (the probe objects are put back
//!     before each subject), denied a 403 with kube's `User "..." cannot VERB resource
//!     "..."` message;
//!   - `kubectl auth can-i --as` (cluster-wide with `-A`). kubectl costs 150 ms or more a
//!     run, so all 567 cells would take well over a minute on two shared cores: it runs
//!     for every allowed cell plus the denied cells whose index sum (subject + verb +
//!     resource + scope) is divisible by 3 (238 runs), a deterministic subset that
//!     covers every pair of subject, verb, resource and scope values.
//!     `KAPI_RBAC_KUBECTL_ALL=1` runs it for every cell.
//!
//!   As in kube, anonymous may neither discover nor post SelfSubjectAccessReviews (so
//!   `kubectl auth can-i --as system:anonymous` is refused): that is checked first, then
//!   `system:basic-user` and `system:discovery` are bound to `system:unauthenticated`
//!   (neither grants anything on the matrix's resources) so that the subject itself and
//!   kubectl can ask for anonymous too. Mismatches are collected and reported together,
//!   one line each.
//! - **resourceNames**: a Role allowing get, update, list and watch on the ConfigMap
//!   `allowed-one` only: requests about another name, or about none, are refused; a list
//!   or watch whose fieldSelector names `allowed-one` is allowed, as kube-apiserver
//!   takes the name from `metadata.name=` (known to fail on kapi today).
//! - **nonResourceURLs**: `/healthz`, `/metrics`, `/debug/*` for one user, and the paths
//!   `system:public-info-viewer` and `system:discovery` give everyone.
//! - **Escalation prevention**: 16 writes of Roles, ClusterRoles, RoleBindings and
//!   ClusterRoleBindings by a user with RBAC write rights, each refused, then allowed
//!   once the user may `escalate` or `bind` (`bind` limited by resourceNames to one role
//!   first, which leaves the bindings to other roles refused); a namespace admin grants
//!   what admin holds and is refused more.
//! - **Identity**: `kubectl auth whoami` as the admin and impersonating, SelfSubjectReview
//!   with a token, impersonation refused without the `impersonate` verb.
//!
//! Requests by the subjects that carry a body each get a connection of their own: kapi
//! answers a refused write before reading its body and may then close the connection
//! without `Connection: close`, which a pooled client finds out on its next request.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kapi_tests::{Backend, Exchange, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const TEAM_A: &str = "team-a";
const TEAM_B: &str = "team-b";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";
const AUTHZ: &str = "/apis/authorization.k8s.io/v1";
const WIDGET_GROUP: &str = "example.kapi.dev";
/// The name of the object every named request is about.
const PROBE: &str = "probe";
/// The verbs of the matrix, in the order of [`EXPECTED`]'s columns.
const VERBS: [&str; 8] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];
/// kube-apiserver's refusal of a role or binding granting more than its writer holds.
const NOT_HELD: &str = "is attempting to grant RBAC permissions not currently held";
/// How long an RBAC write may take to reach the authorizer (and aggregation to settle).
const POLICY_TIMEOUT: Duration = Duration::from_secs(15);

/// The users of the `--token-auth-file`: token, user, groups.
const TOKEN_USERS: [(&str, &str, &str); 9] = [
    ("tok-nobody-7f3a9c", "nobody", ""),
    ("tok-alice-1b2c3d", "alice", ""),
    ("tok-carol-4e5f6a", "carol", ""),
    ("tok-dave-7b8c9d", "dave", ""),
    ("tok-erin-0e1f2a", "erin", "ops"),
    ("tok-frank-3b4c5d", "frank", ""),
    ("tok-grace-6e7f8a", "grace", ""),
    ("tok-mallory-9b0c1d", "mallory", ""),
    ("tok-zed-2e3f4a", "zed", ""),
];

/// The static token of a `--token-auth-file` user.
fn token_of(user: &str) -> &'static str {
    TOKEN_USERS
        .iter()
        .find(|(_, u, _)| *u == user)
        .map(|(t, _, _)| *t)
        .unwrap_or_else(|| panic!("{user} has no token"))
}

/// The uid the token file gives `user`.
fn uid_of(user: &str) -> String {
    let i = TOKEN_USERS
        .iter()
        .position(|(_, u, _)| *u == user)
        .unwrap_or_else(|| panic!("{user} is not in the token file"));
    format!("uid-{i}")
}

// ---------------------------------------------------------------------------------------
// The matrix's dimensions.
// ---------------------------------------------------------------------------------------

/// The seven kinds of subject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Subject {
    /// No credentials, with `--anonymous-auth`: `system:anonymous`.
    Anonymous,
    /// `nobody`: authenticated, bound to nothing.
    NoRole,
    /// `alice`: the Role `cm-reader` through a RoleBinding in team-a.
    Role,
    /// `carol`: the ClusterRole `widget-editor` through a RoleBinding in team-a.
    ClusterRoleInNamespace,
    /// `dave`: the bootstrap `view` (which aggregates `widget-viewer`) through a
    /// ClusterRoleBinding.
    ClusterRoleBinding,
    /// `erin`, member of `ops`: the group is bound to `secret-reader` cluster-wide and to
    /// the bootstrap `edit` in team-b.
    Group,
    /// The ServiceAccount `team-a/robot`: the Role `robot-role` in team-a, and (through
    /// the group `system:serviceaccounts:team-a`) `widget-viewer` in team-b.
    ServiceAccount,
}

const SUBJECTS: [Subject; 7] = [
    Subject::Anonymous,
    Subject::NoRole,
    Subject::Role,
    Subject::ClusterRoleInNamespace,
    Subject::ClusterRoleBinding,
    Subject::Group,
    Subject::ServiceAccount,
];

impl Subject {
    /// The user name the server authenticates it as.
    fn user(self) -> &'static str {
        match self {
            Subject::Anonymous => "system:anonymous",
            Subject::NoRole => "nobody",
            Subject::Role => "alice",
            Subject::ClusterRoleInNamespace => "carol",
            Subject::ClusterRoleBinding => "dave",
            Subject::Group => "erin",
            Subject::ServiceAccount => "system:serviceaccount:team-a:robot",
        }
    }

    /// A short name for the objects it creates.
    fn slug(self) -> &'static str {
        match self {
            Subject::Anonymous => "anonymous",
            Subject::ServiceAccount => "robot",
            other => other.user(),
        }
    }

    /// The groups the server gives it (what a SubjectAccessReview about it must name).
    fn groups(self) -> Vec<&'static str> {
        match self {
            Subject::Anonymous => vec!["system:unauthenticated"],
            Subject::Group => vec!["ops", "system:authenticated"],
            Subject::ServiceAccount => vec![
                "system:serviceaccounts",
                "system:serviceaccounts:team-a",
                "system:authenticated",
            ],
            _ => vec!["system:authenticated"],
        }
    }

    /// kubectl's flags to act as it: the server adds `system:authenticated` (and a
    /// ServiceAccount's groups) itself, as kube-apiserver's impersonation does.
    fn as_flags(self) -> Vec<&'static str> {
        let mut flags = vec!["--as", self.user()];
        match self {
            Subject::Anonymous => flags.extend(["--as-group", "system:unauthenticated"]),
            Subject::Group => flags.extend(["--as-group", "ops"]),
            _ => {}
        }
        flags
    }
}

/// A resource of the matrix; `widgets/status` only takes get, update and patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resource {
    ConfigMaps,
    Secrets,
    Widgets,
    WidgetStatus,
}

const RESOURCES: [Resource; 4] = [
    Resource::ConfigMaps,
    Resource::Secrets,
    Resource::Widgets,
    Resource::WidgetStatus,
];

impl Resource {
    fn api_group(self) -> &'static str {
        match self {
            Resource::ConfigMaps | Resource::Secrets => "",
            Resource::Widgets | Resource::WidgetStatus => WIDGET_GROUP,
        }
    }

    fn plural(self) -> &'static str {
        match self {
            Resource::ConfigMaps => "configmaps",
            Resource::Secrets => "secrets",
            Resource::Widgets | Resource::WidgetStatus => "widgets",
        }
    }

    fn subresource(self) -> &'static str {
        match self {
            Resource::WidgetStatus => "status",
            _ => "",
        }
    }

    /// The resource as kube's forbidden message names it (`widgets/status`).
    fn described(self) -> String {
        match self.subresource() {
            "" => self.plural().to_string(),
            sub => format!("{}/{sub}", self.plural()),
        }
    }

    fn verbs(self) -> &'static [&'static str] {
        match self {
            Resource::WidgetStatus => &["get", "update", "patch"],
            _ => &VERBS,
        }
    }

    /// The resource as `kubectl auth can-i` takes it.
    fn kubectl_name(self) -> &'static str {
        match self {
            Resource::ConfigMaps => "configmaps",
            Resource::Secrets => "secrets",
            Resource::Widgets | Resource::WidgetStatus => "widgets.example.kapi.dev",
        }
    }

    /// The collection's path, in `namespace` or across all namespaces.
    fn collection(self, namespace: Option<&str>) -> String {
        let prefix = match self.api_group() {
            "" => "/api/v1".to_string(),
            group => format!("/apis/{group}/v1"),
        };
        match namespace {
            Some(ns) => format!("{prefix}/namespaces/{ns}/{}", self.plural()),
            None => format!("{prefix}/{}", self.plural()),
        }
    }

    /// The path of the object (or its subresource) `name` in `namespace`.
    fn object_path(self, namespace: &str, name: &str) -> String {
        let path = format!("{}/{name}", self.collection(Some(namespace)));
        match self.subresource() {
            "" => path,
            sub => format!("{path}/{sub}"),
        }
    }

    /// A valid new object of the resource.
    fn new_object(self, name: &str) -> Value {
        match self {
            Resource::ConfigMaps => json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"k": "v"}}),
            Resource::Secrets => json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": name}, "data": {"k": "dg=="}}),
            Resource::Widgets | Resource::WidgetStatus => json!({
                "apiVersion": "example.kapi.dev/v1", "kind": "Widget",
                "metadata": {"name": name}, "spec": {"color": "red"}}),
        }
    }
}

/// Where a request applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    TeamA,
    TeamB,
    /// No namespace: cluster-wide (list and watch across all namespaces).
    Cluster,
}

const SCOPES: [Scope; 3] = [Scope::TeamA, Scope::TeamB, Scope::Cluster];

impl Scope {
    fn namespace(self) -> Option<&'static str> {
        match self {
            Scope::TeamA => Some(TEAM_A),
            Scope::TeamB => Some(TEAM_B),
            Scope::Cluster => None,
        }
    }
}

/// Whether a verb names one object (and so the requests about it carry [`PROBE`]).
fn named(verb: &str) -> bool {
    matches!(verb, "get" | "update" | "patch" | "delete")
}

// ---------------------------------------------------------------------------------------
// The expected answers.
// ---------------------------------------------------------------------------------------

/// What each subject may do, derived by hand from the roles [`setup_policy`] creates (and
/// kube's bootstrap `view` and `edit`). For each subject, one row per scope: team-a,
/// team-b, cluster-wide. In a row, one column group per resource: configmaps, secrets
/// and widgets over the verbs get, list, watch, create, update, patch, delete,
/// deletecollection; widgets/status over get, update, patch. `Y` allowed, `.` denied.
const EXPECTED: [(Subject, [&str; 3]); 7] = [
    // Columns (g get, l list, w watch, c create, u update, p patch, d delete,
    // D deletecollection):
    //       configmaps
    //       |        secrets
    //       |        |        widgets
    //       |        |        |        widgets/status
    //       glwcupdD glwcupdD glwcupdD gup
    (
        Subject::Anonymous,
        [
            "........ ........ ........ ...", // team-a
            "........ ........ ........ ...", // team-b
            "........ ........ ........ ...", // cluster
        ],
    ),
    (
        Subject::NoRole,
        [
            "........ ........ ........ ...",
            "........ ........ ........ ...",
            "........ ........ ........ ...",
        ],
    ),
    (
        // Role cm-reader (configmaps get/list/watch), RoleBinding in team-a.
        Subject::Role,
        [
            "YYY..... ........ ........ ...",
            "........ ........ ........ ...",
            "........ ........ ........ ...",
        ],
    ),
    (
        // ClusterRole widget-editor (widgets and widgets/status, every verb),
        // RoleBinding in team-a.
        Subject::ClusterRoleInNamespace,
        [
            "........ ........ YYYYYYYY YYY",
            "........ ........ ........ ...",
            "........ ........ ........ ...",
        ],
    ),
    (
        // ClusterRoleBinding to view: configmaps read, widgets read (aggregated from
        // widget-viewer), no secrets, no status.
        Subject::ClusterRoleBinding,
        [
            "YYY..... ........ YYY..... ...",
            "YYY..... ........ YYY..... ...",
            "YYY..... ........ YYY..... ...",
        ],
    ),
    (
        // Group ops: secret-reader cluster-wide; edit (⊇ view ⊇ widget-viewer) in team-b.
        Subject::Group,
        [
            "........ YYY..... ........ ...",
            "YYYYYYYY YYYYYYYY YYY..... ...",
            "........ YYY..... ........ ...",
        ],
    ),
    (
        // Role robot-role in team-a; widget-viewer in team-b through the group
        // system:serviceaccounts:team-a.
        Subject::ServiceAccount,
        [
            "...YYYYY Y..Y..Y. .YY..... YYY",
            "........ ........ YYY..... ...",
            "........ ........ ........ ...",
        ],
    ),
];

/// The expected answer of one cell, read from [`EXPECTED`].
fn expected(subject: Subject, scope: Scope, resource: Resource, verb: &str) -> bool {
    let rows = EXPECTED
        .iter()
        .find(|(s, _)| *s == subject)
        .map(|(_, rows)| rows)
        .expect("every subject has rows");
    let row = rows[SCOPES.iter().position(|s| *s == scope).expect("a scope")];
    let groups: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(groups.len(), RESOURCES.len(), "a row per resource: {row:?}");
    let r = RESOURCES
        .iter()
        .position(|r| *r == resource)
        .expect("a resource");
    let cells = groups[r].as_bytes();
    assert_eq!(
        cells.len(),
        resource.verbs().len(),
        "{resource:?} in {row:?}"
    );
    let v = resource
        .verbs()
        .iter()
        .position(|v| *v == verb)
        .expect("a verb of the resource");
    match cells[v] {
        b'Y' => true,
        b'.' => false,
        other => panic!("{row:?}: {} is neither Y nor .", other as char),
    }
}

/// One cell of the matrix.
#[derive(Clone, Copy, Debug)]
struct Cell {
    subject: Subject,
    scope: Scope,
    resource: Resource,
    verb: &'static str,
    /// Whether `kubectl auth can-i` is asked about it (see the module documentation).
    kubectl: bool,
}

impl Cell {
    fn expected(&self) -> bool {
        expected(self.subject, self.scope, self.resource, self.verb)
    }

    fn describe(&self) -> String {
        format!(
            "{} {} {} {}",
            self.subject.user(),
            self.verb,
            self.resource.described(),
            self.scope.namespace().unwrap_or("(cluster)")
        )
    }

    /// The resourceAttributes of an access review about it.
    fn resource_attributes(&self) -> Value {
        json!({
            "namespace": self.scope.namespace().unwrap_or(""),
            "verb": self.verb,
            "group": self.resource.api_group(),
            "resource": self.resource.plural(),
            "subresource": self.resource.subresource(),
            "name": if named(self.verb) { PROBE } else { "" },
        })
    }
}

/// Every cell, in a fixed order.
fn cells() -> Vec<Cell> {
    let all = std::env::var("KAPI_RBAC_KUBECTL_ALL").is_ok_and(|v| v == "1");
    let mut cells = Vec::new();
    for (si, &subject) in SUBJECTS.iter().enumerate() {
        for (ci, &scope) in SCOPES.iter().enumerate() {
            for (ri, &resource) in RESOURCES.iter().enumerate() {
                for &verb in resource.verbs() {
                    let vi = VERBS.iter().position(|v| *v == verb).expect("a verb");
                    let mut cell = Cell {
                        subject,
                        scope,
                        resource,
                        verb,
                        kubectl: false,
                    };
                    cell.kubectl = all || cell.expected() || (si + ci + ri + vi) % 3 == 0;
                    cells.push(cell);
                }
            }
        }
    }
    cells
}

// ---------------------------------------------------------------------------------------
// The server and its clients.
// ---------------------------------------------------------------------------------------

/// The server, with a client for token and anonymous requests, and the ServiceAccount's
/// token.
struct Cluster {
    kapi: Kapi,
    /// Verifies the server; presents no certificate.
    agent: ureq::Agent,
    /// Presents the admin certificate (one client for the whole test, so that its
    /// connections are reused).
    admin_agent: ureq::Agent,
    /// The ServiceAccount team-a/robot's token (from the TokenRequest API).
    robot_token: String,
    /// Keeps the token file alive.
    _tokens: tempfile::TempDir,
}

impl Cluster {
    /// Starts the server with the token file and anonymous requests allowed.
    fn start() -> Self {
        let tokens = tempfile::tempdir().expect("a temporary directory");
        let file = tokens.path().join("tokens.csv");
        let csv: String = TOKEN_USERS
            .iter()
            .enumerate()
            .map(|(i, (token, user, groups))| format!("{token},{user},uid-{i},\"{groups}\"\n"))
            .collect();
        std::fs::write(&file, csv).expect("writing the token file");
        let file = file.to_str().expect("a UTF-8 path").to_string();
        let kapi = Kapi::start_with(
            Backend::Embedded,
            &["--token-auth-file", &file, "--anonymous-auth"],
        );
        let agent = kapi.agent_without_certificate();
        let admin_agent = kapi.agent();
        Self {
            kapi,
            agent,
            admin_agent,
            robot_token: String::new(),
            _tokens: tokens,
        }
    }

    /// The bearer token of a matrix subject (`None`: anonymous).
    fn token(&self, subject: Subject) -> Option<&str> {
        match subject {
            Subject::Anonymous => None,
            Subject::ServiceAccount => Some(&self.robot_token),
            other => Some(token_of(other.user())),
        }
    }

    /// A request with `token` (`None`: anonymous) and a JSON body.
    fn send(
        &self,
        token: Option<&str>,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Exchange {
        self.send_typed(token, method, path, JSON, body)
    }

    /// [`Cluster::send`] with a content type.
    fn send_typed(
        &self,
        token: Option<&str>,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> Exchange {
        let bytes = body.map(|b| serde_json::to_vec(b).expect("JSON"));
        // A request with a body that is refused may have its connection closed before
        // the body is read (see the module documentation): it gets a connection of its
        // own, so that no later request picks up the closed one.
        let fresh;
        let agent = if bytes.is_some() {
            fresh = self.kapi.agent_without_certificate();
            &fresh
        } else {
            &self.agent
        };
        self.kapi.exchange_as(
            agent,
            token,
            method,
            path,
            content_type,
            None,
            bytes.as_deref(),
        )
    }

    /// `GET path` with `token` and extra headers: the status and, when `read_body`
    /// (not for a watch, which would stream), the body.
    fn get_with(
        &self,
        token: Option<&str>,
        path: &str,
        headers: &[(&str, &str)],
        read_body: bool,
    ) -> (u16, String) {
        let mut builder = ureq::http::Request::builder()
            .method("GET")
            .uri(format!("{}{path}", self.kapi.url()));
        if let Some(t) = token {
            builder = builder.header("Authorization", format!("Bearer {t}"));
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        // A watch is left unread: its connection must not go back to the shared pool.
        let agent = if read_body {
            self.agent.clone()
        } else {
            self.kapi.agent_without_certificate()
        };
        let res = agent
            .run(builder.body(()).expect("a request"))
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let code = res.status().as_u16();
        let body = if read_body {
            res.into_body().read_to_string().unwrap_or_default()
        } else {
            String::new()
        };
        (code, body)
    }

    /// The status of a watch of `collection` (with `query`, if not empty), without
    /// waiting for its events.
    fn watch_status(&self, token: Option<&str>, collection: &str, query: &str) -> u16 {
        let mut path = format!("{collection}?watch=true&timeoutSeconds=1");
        if !query.is_empty() {
            path = format!("{path}&{query}");
        }
        self.get_with(token, &path, &[], false).0
    }

    /// A request as the admin (as [`Kapi::request`], through one reused client).
    fn admin_request(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let bytes = body.map(|b| serde_json::to_vec(b).expect("JSON"));
        let ex = self.kapi.exchange_as(
            &self.admin_agent,
            None,
            method,
            path,
            content_type,
            None,
            bytes.as_deref(),
        );
        let value = serde_json::from_str(&ex.body).unwrap_or(Value::String(ex.body));
        (ex.code, value)
    }

    /// An admin write that must succeed (201 for a POST, 200 otherwise).
    fn admin(&self, method: &str, path: &str, body: &Value) -> Value {
        let (code, answer) = self.admin_request(method, path, JSON, Some(body));
        let want = if method == "POST" { 201 } else { 200 };
        assert_eq!(code, want, "admin {method} {path}: {answer}");
        answer
    }

    /// Whether a SubjectAccessReview (posted by the admin) allows `user` in `groups`
    /// the `resourceAttributes` or `nonResourceAttributes` in `attributes`.
    fn review(&self, user: &str, groups: &[&str], attributes: Value) -> bool {
        let mut spec = json!({"user": user, "groups": groups});
        spec.as_object_mut()
            .expect("an object")
            .extend(attributes.as_object().expect("attributes").clone());
        let body = json!({"apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview", "spec": spec});
        let (code, answer) = self.admin_request(
            "POST",
            &format!("{AUTHZ}/subjectaccessreviews"),
            JSON,
            Some(&body),
        );
        assert_eq!(code, 201, "SubjectAccessReview {body}: {answer}");
        answer["status"]["allowed"] == true
    }

    /// Waits (bounded) until a SubjectAccessReview allows `user` the resource request.
    fn wait_allowed(&self, user: &str, groups: &[&str], attributes: Value) {
        let deadline = Instant::now() + POLICY_TIMEOUT;
        while !self.review(
            user,
            groups,
            json!({"resourceAttributes": attributes.clone()}),
        ) {
            assert!(
                Instant::now() < deadline,
                "the policy never allowed {user} {attributes} within {POLICY_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `kubectl auth can-i ARGS`: whether it said yes, checking that its exit code and
    /// output agree.
    fn can_i(&self, args: &[&str]) -> Result<bool, String> {
        let mut full = vec!["auth", "can-i"];
        full.extend_from_slice(args);
        let out = self.kapi.kubectl_version(None, &full, None);
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
        match (stdout.as_str(), out.status.code()) {
            ("yes", Some(0)) => Ok(true),
            ("no", Some(1)) => Ok(false),
            _ => Err(format!(
                "kubectl {}: exit {:?}, stdout {stdout:?}, stderr: {}",
                full.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------
// RBAC objects.
// ---------------------------------------------------------------------------------------

/// A resource rule.
fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// A resource rule limited to `names`.
fn named_rule(groups: &[&str], resources: &[&str], verbs: &[&str], names: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs,
        "resourceNames": names})
}

/// A non-resource URL rule.
fn url_rule(urls: &[&str], verbs: &[&str]) -> Value {
    json!({"nonResourceURLs": urls, "verbs": verbs})
}

fn roles_path(ns: &str) -> String {
    format!("{RBAC}/namespaces/{ns}/roles")
}

fn role_bindings_path(ns: &str) -> String {
    format!("{RBAC}/namespaces/{ns}/rolebindings")
}

fn cluster_roles_path() -> String {
    format!("{RBAC}/clusterroles")
}

fn cluster_role_bindings_path() -> String {
    format!("{RBAC}/clusterrolebindings")
}

fn role(name: &str, rules: &[Value]) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name}, "rules": rules})
}

fn cluster_role(name: &str, labels: Value, rules: &[Value]) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels}, "rules": rules})
}

/// A RoleBinding (or, with `kind` `ClusterRoleBinding`, a ClusterRoleBinding) of
/// `role_kind` `role_name` to `subjects`.
fn binding(kind: &str, name: &str, role_kind: &str, role_name: &str, subjects: &[Value]) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role_name},
        "subjects": subjects})
}

fn user(name: &str) -> Value {
    json!({"kind": "User", "apiGroup": RBAC_GROUP, "name": name})
}

fn group(name: &str) -> Value {
    json!({"kind": "Group", "apiGroup": RBAC_GROUP, "name": name})
}

fn service_account(ns: &str, name: &str) -> Value {
    json!({"kind": "ServiceAccount", "name": name, "namespace": ns})
}

/// Creates a Role in `ns` as the admin.
fn create_role(cl: &Cluster, ns: &str, name: &str, rules: &[Value]) {
    cl.admin("POST", &roles_path(ns), &role(name, rules));
}

/// Creates a ClusterRole as the admin.
fn create_cluster_role(cl: &Cluster, name: &str, labels: Value, rules: &[Value]) {
    cl.admin(
        "POST",
        &cluster_roles_path(),
        &cluster_role(name, labels, rules),
    );
}

/// Creates, as the admin, a RoleBinding in `ns` (a ClusterRoleBinding without one) of
/// `role_kind` `role_name` to `subjects`.
fn create_binding(
    cl: &Cluster,
    ns: Option<&str>,
    name: &str,
    role_kind: &str,
    role_name: &str,
    subjects: &[Value],
) {
    let (path, kind) = match ns {
        Some(ns) => (role_bindings_path(ns), "RoleBinding"),
        None => (cluster_role_bindings_path(), "ClusterRoleBinding"),
    };
    cl.admin(
        "POST",
        &path,
        &binding(kind, name, role_kind, role_name, subjects),
    );
}

/// Creates a namespace as the admin.
fn create_namespace(cl: &Cluster, name: &str) {
    cl.admin(
        "POST",
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    );
}

/// Creates the ServiceAccount team-a/robot and returns a token for it.
fn service_account_token(cl: &Cluster) -> String {
    cl.admin(
        "POST",
        &format!("/api/v1/namespaces/{TEAM_A}/serviceaccounts"),
        &json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}),
    );
    let answer = cl.admin(
        "POST",
        &format!("/api/v1/namespaces/{TEAM_A}/serviceaccounts/robot/token"),
        &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
    );
    answer["status"]["token"]
        .as_str()
        .expect("a TokenRequest answers with a token")
        .to_string()
}

/// The roles and bindings behind [`EXPECTED`], and those of the resourceNames and
/// nonResourceURLs sections; then waits until the policy (aggregation included) is in.
fn setup_policy(cl: &Cluster) {
    let read: &[&str] = &["get", "list", "watch"];
    // alice: configmaps read in team-a.
    create_role(
        cl,
        TEAM_A,
        "cm-reader",
        &[rule(&[""], &["configmaps"], read)],
    );
    create_binding(
        cl,
        Some(TEAM_A),
        "alice",
        "Role",
        "cm-reader",
        &[user("alice")],
    );
    // carol: every verb on widgets and widgets/status, bound in team-a only.
    let widgets_all = rule(&[WIDGET_GROUP], &["widgets", "widgets/status"], &VERBS);
    create_cluster_role(cl, "widget-editor", json!({}), &[widgets_all]);
    let carol = [user("carol")];
    create_binding(
        cl,
        Some(TEAM_A),
        "carol",
        "ClusterRole",
        "widget-editor",
        &carol,
    );
    // widgets read, aggregated into the bootstrap view (and so into edit and admin).
    let to_view = json!({"rbac.authorization.k8s.io/aggregate-to-view": "true"});
    let widgets_read = rule(&[WIDGET_GROUP], &["widgets"], read);
    create_cluster_role(cl, "widget-viewer", to_view, &[widgets_read]);
    // dave: view everywhere.
    create_binding(cl, None, "dave", "ClusterRole", "view", &[user("dave")]);
    // The group ops: secrets read everywhere, edit in team-b.
    let secrets_read = rule(&[""], &["secrets"], read);
    create_cluster_role(cl, "secret-reader", json!({}), &[secrets_read]);
    create_binding(
        cl,
        None,
        "ops",
        "ClusterRole",
        "secret-reader",
        &[group("ops")],
    );
    create_binding(
        cl,
        Some(TEAM_B),
        "ops",
        "ClusterRole",
        "edit",
        &[group("ops")],
    );
    // robot: a mixed Role in team-a; widget-viewer in team-b through its namespace's group.
    let robot_rules = [
        rule(&[""], &["secrets"], &["get", "create", "delete"]),
        rule(
            &[""],
            &["configmaps"],
            &["create", "update", "patch", "delete", "deletecollection"],
        ),
        rule(&[WIDGET_GROUP], &["widgets"], &["list", "watch"]),
        rule(
            &[WIDGET_GROUP],
            &["widgets/status"],
            &["get", "update", "patch"],
        ),
    ];
    create_role(cl, TEAM_A, "robot-role", &robot_rules);
    let robot = [service_account(TEAM_A, "robot")];
    create_binding(cl, Some(TEAM_A), "robot", "Role", "robot-role", &robot);
    let team_a_accounts = [group("system:serviceaccounts:team-a")];
    create_binding(
        cl,
        Some(TEAM_B),
        "team-a-accounts",
        "ClusterRole",
        "widget-viewer",
        &team_a_accounts,
    );
    // frank: get, update, list and watch on one ConfigMap.
    let one = named_rule(
        &[""],
        &["configmaps"],
        &["get", "update", "list", "watch"],
        &["allowed-one"],
    );
    create_role(cl, TEAM_A, "only-allowed-one", &[one]);
    create_binding(
        cl,
        Some(TEAM_A),
        "frank",
        "Role",
        "only-allowed-one",
        &[user("frank")],
    );
    // grace: non-resource URLs.
    let urls = url_rule(&["/healthz", "/metrics", "/debug/*"], &["get"]);
    create_cluster_role(cl, "metrics-reader", json!({}), &[urls]);
    create_binding(
        cl,
        None,
        "grace",
        "ClusterRole",
        "metrics-reader",
        &[user("grace")],
    );
    // The last binding written, and the end of the aggregation chain
    // widget-viewer → view → edit, must be in the policy before the matrix starts.
    wait_nonresource(cl, "grace", &["system:authenticated"], "/metrics");
    cl.wait_allowed(
        "erin",
        &["ops", "system:authenticated"],
        json!({"namespace": TEAM_B, "verb": "list", "group": WIDGET_GROUP, "resource": "widgets"}),
    );
}

/// Waits (bounded) until a SubjectAccessReview allows `user` to get `path`.
fn wait_nonresource(cl: &Cluster, user: &str, groups: &[&str], path: &str) {
    let deadline = Instant::now() + POLICY_TIMEOUT;
    let attributes = json!({"nonResourceAttributes": {"path": path, "verb": "get"}});
    while !cl.review(user, groups, attributes.clone()) {
        assert!(
            Instant::now() < deadline,
            "the policy never allowed {user} get {path}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------------------
// Checking the matrix.
// ---------------------------------------------------------------------------------------

/// Mismatches found, reported together at the end.
#[derive(Default)]
struct Failures(Mutex<Vec<String>>);

impl Failures {
    /// Records `what` unless `ok`.
    fn check(&self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.push(what());
        }
    }

    fn push(&self, what: String) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(what);
    }

    fn into_inner(self) -> Vec<String> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// The `message` of a Status answer (the whole body if it is none).
fn status_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| body.to_string())
}

/// Whether a real request's status means it was allowed (anything but 401 and 403).
fn allowed_status(code: u16) -> bool {
    code != 401 && code != 403
}

/// Creates the `probe` of every resource in `ns` again where a delete removed it, so that
/// allowed requests about it succeed.
fn reset_probes(cl: &Cluster, ns: &str) {
    for resource in [Resource::ConfigMaps, Resource::Secrets, Resource::Widgets] {
        let collection = resource.collection(Some(ns));
        let (code, _) = cl.admin_request("GET", &format!("{collection}/{PROBE}"), JSON, None);
        if code == 404 {
            cl.admin("POST", &collection, &resource.new_object(PROBE));
        }
    }
}

/// The probe of `resource` in `ns` as the admin reads it now, changed for an update: a
/// label, or for the status subresource the status.
fn updated_probe(cl: &Cluster, resource: Resource, ns: &str) -> Value {
    let path = format!("{}/{PROBE}", resource.collection(Some(ns)));
    let (code, mut object) = cl.admin_request("GET", &path, JSON, None);
    assert_eq!(code, 200, "reading {path}: {object}");
    match resource.subresource() {
        "status" => object["status"] = json!({"phase": "Running"}),
        _ => object["metadata"]["labels"]["updated"] = json!("yes"),
    }
    object
}

/// A merge patch for the probe (or its status).
fn probe_patch(resource: Resource) -> Value {
    match resource.subresource() {
        "status" => json!({"status": {"phase": "Pending"}}),
        _ => json!({"metadata": {"labels": {"patched": "yes"}}}),
    }
}

/// Sends a cell's real request as its subject: the status and body (empty for a watch).
/// `None` for a cluster-wide verb that no URL serves (only list and watch do).
fn real_request(cl: &Cluster, cell: &Cell) -> Option<(u16, String)> {
    let token = cl.token(cell.subject);
    let resource = cell.resource;
    let Some(ns) = cell.scope.namespace() else {
        let all = resource.collection(None);
        return match cell.verb {
            "list" => {
                let ex = cl.send(token, "GET", &all, None);
                Some((ex.code, ex.body))
            }
            "watch" => Some((cl.watch_status(token, &all, ""), String::new())),
            _ => None,
        };
    };
    let collection = resource.collection(Some(ns));
    let object = resource.object_path(ns, PROBE);
    let ex = match cell.verb {
        "get" => cl.send(token, "GET", &object, None),
        "list" => cl.send(token, "GET", &collection, None),
        "watch" => return Some((cl.watch_status(token, &collection, ""), String::new())),
        "create" => {
            let name = format!("made-by-{}", cell.subject.slug());
            cl.send(
                token,
                "POST",
                &collection,
                Some(&resource.new_object(&name)),
            )
        }
        "update" => {
            let body = updated_probe(cl, resource, ns);
            cl.send(token, "PUT", &object, Some(&body))
        }
        "patch" => cl.send_typed(token, "PATCH", &object, MERGE, Some(&probe_patch(resource))),
        "delete" => cl.send(token, "DELETE", &object, None),
        "deletecollection" => cl.send(token, "DELETE", &collection, None),
        other => panic!("no request for the verb {other}"),
    };
    Some((ex.code, ex.body))
}

/// Every real request of the matrix, subject by subject (the probes reset before each
/// namespace), the status subresource before the deletes: allowed is a 2xx, denied a 403
/// with kube's message. Returns how many requests were sent.
fn check_real_requests(cl: &Cluster, cells: &[Cell], failures: &Failures) -> usize {
    let order = [
        Resource::ConfigMaps,
        Resource::Secrets,
        Resource::WidgetStatus,
        Resource::Widgets,
    ];
    let mut sent = 0;
    for subject in SUBJECTS {
        for scope in SCOPES {
            if let Some(ns) = scope.namespace() {
                reset_probes(cl, ns);
            }
            for resource in order {
                let of_resource = cells
                    .iter()
                    .filter(|c| c.subject == subject && c.scope == scope && c.resource == resource);
                for cell in of_resource {
                    let Some((code, body)) = real_request(cl, cell) else {
                        continue;
                    };
                    sent += 1;
                    check_real_answer(cell, code, &body, failures);
                }
            }
        }
    }
    sent
}

/// Checks one real answer against the table.
fn check_real_answer(cell: &Cell, code: u16, body: &str, failures: &Failures) {
    if cell.expected() {
        failures.check((200..300).contains(&code), || {
            format!(
                "{}: real request expected allowed (2xx), got {code}: {body}",
                cell.describe()
            )
        });
        return;
    }
    let message = format!(
        "User {:?} cannot {} resource {:?}",
        cell.subject.user(),
        cell.verb,
        cell.resource.described()
    );
    // A watch's body is not read.
    let worded = body.is_empty() || status_message(body).contains(&message);
    failures.check(code == 403 && worded, || {
        format!(
            "{}: real request expected 403 ({message}), got {code}: {body}",
            cell.describe()
        )
    });
}

/// A LocalSubjectAccessReview in `ns`, posted by the admin.
fn local_review(cl: &Cluster, ns: &str, user: &str, groups: &[&str], attrs: &Value) -> bool {
    let body = json!({"apiVersion": "authorization.k8s.io/v1",
        "kind": "LocalSubjectAccessReview", "metadata": {"namespace": ns},
        "spec": {"user": user, "groups": groups, "resourceAttributes": attrs}});
    let path = format!("{AUTHZ}/namespaces/{ns}/localsubjectaccessreviews");
    let (code, answer) = cl.admin_request("POST", &path, JSON, Some(&body));
    assert_eq!(code, 201, "LocalSubjectAccessReview {body}: {answer}");
    answer["status"]["allowed"] == true
}

/// A SelfSubjectAccessReview posted with `token`.
fn self_review(cl: &Cluster, token: Option<&str>, attrs: &Value) -> bool {
    let body = json!({"apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": attrs}});
    let ex = cl.send(
        token,
        "POST",
        &format!("{AUTHZ}/selfsubjectaccessreviews"),
        Some(&body),
    );
    assert_eq!(ex.code, 201, "SelfSubjectAccessReview {body}: {}", ex.body);
    let answer: Value = serde_json::from_str(&ex.body).expect("a JSON review");
    answer["status"]["allowed"] == true
}

/// The access reviews of every cell: SubjectAccessReview, LocalSubjectAccessReview (in
/// a namespace) and SelfSubjectAccessReview (as the subject). Returns how many were asked.
fn check_reviews(cl: &Cluster, cells: &[Cell], failures: &Failures) -> usize {
    let mut asked = 0;
    for cell in cells {
        let want = cell.expected();
        let (user, groups) = (cell.subject.user(), cell.subject.groups());
        let attrs = cell.resource_attributes();
        let mut answers = vec![(
            "SubjectAccessReview",
            cl.review(user, &groups, json!({"resourceAttributes": attrs})),
        )];
        if let Some(ns) = cell.scope.namespace() {
            answers.push((
                "LocalSubjectAccessReview",
                local_review(cl, ns, user, &groups, &attrs),
            ));
        }
        answers.push((
            "SelfSubjectAccessReview",
            self_review(cl, cl.token(cell.subject), &attrs),
        ));
        for (kind, got) in answers {
            asked += 1;
            failures.check(got == want, || {
                format!("{}: {kind} says {got}, expected {want}", cell.describe())
            });
        }
    }
    asked
}

/// `kubectl auth can-i`'s arguments for a cell.
fn can_i_args(cell: &Cell) -> Vec<String> {
    let resource = cell.resource.kubectl_name();
    let mut args = vec![
        cell.verb.to_string(),
        if named(cell.verb) {
            format!("{resource}/{PROBE}")
        } else {
            resource.to_string()
        },
    ];
    match cell.scope.namespace() {
        Some(ns) => args.extend(["-n".to_string(), ns.to_string()]),
        None => args.push("-A".to_string()),
    }
    args.extend(cell.subject.as_flags().iter().map(|s| s.to_string()));
    if !cell.resource.subresource().is_empty() {
        args.extend([
            "--subresource".to_string(),
            cell.resource.subresource().to_string(),
        ]);
    }
    args
}

/// How many kubectl processes run at once.
const KUBECTL_THREADS: usize = 3;

/// `kubectl auth can-i --as` for the cells chosen for it. Returns how many ran.
fn check_kubectl(cl: &Cluster, cells: &[Cell], failures: &Failures) -> usize {
    let chosen: Vec<&Cell> = cells.iter().filter(|c| c.kubectl).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..KUBECTL_THREADS {
            s.spawn(|| {
                while let Some(cell) = chosen.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let args = can_i_args(cell);
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    match cl.can_i(&args) {
                        Ok(yes) => failures.check(yes == cell.expected(), || {
                            format!(
                                "{}: kubectl auth can-i {} says {}, expected {}",
                                cell.describe(),
                                args.join(" "),
                                if yes { "yes" } else { "no" },
                                if cell.expected() { "yes" } else { "no" }
                            )
                        }),
                        Err(e) => failures.push(format!("{}: {e}", cell.describe())),
                    }
                }
            });
        }
    });
    chosen.len()
}

// ---------------------------------------------------------------------------------------
// resourceNames and nonResourceURLs.
// ---------------------------------------------------------------------------------------

/// frank's Role allows get, update, list and watch on the ConfigMap `allowed-one` only:
/// real requests, SubjectAccessReviews and kubectl agree.
fn check_resource_names(cl: &Cluster, failures: &Failures) {
    let configmaps = Resource::ConfigMaps.collection(Some(TEAM_A));
    for name in ["allowed-one", "other-one"] {
        cl.admin("POST", &configmaps, &Resource::ConfigMaps.new_object(name));
    }
    let frank = Some(token_of("frank"));
    let object = |name: &str| format!("{configmaps}/{name}");
    let get = |path: &str| cl.send(frank, "GET", path, None).code;
    let put = |name: &str| {
        let (_, mut body) = cl.admin_request("GET", &object(name), JSON, None);
        body["data"]["changed"] = json!("yes");
        cl.send(frank, "PUT", &object(name), Some(&body)).code
    };
    let by_name = |name: &str| format!("fieldSelector=metadata.name%3D{name}");
    let patch = json!({"data": {"p": "q"}});
    let new = Resource::ConfigMaps.new_object("frank-made");
    // (what, status, whether allowed). kube-apiserver authorizes a list or watch whose
    // fieldSelector requires one metadata.name as a request about that name (what
    // `kubectl get cm x -w` sends).
    let real = [
        ("get allowed-one", get(&object("allowed-one")), true),
        ("get other-one", get(&object("other-one")), false),
        ("list (no name)", get(&configmaps), false),
        (
            "watch (no name)",
            cl.watch_status(frank, &configmaps, ""),
            false,
        ),
        (
            "list fieldSelector metadata.name=allowed-one",
            get(&format!("{configmaps}?{}", by_name("allowed-one"))),
            true,
        ),
        (
            "watch fieldSelector metadata.name=allowed-one",
            cl.watch_status(frank, &configmaps, &by_name("allowed-one")),
            true,
        ),
        (
            "list fieldSelector metadata.name=other-one",
            get(&format!("{configmaps}?{}", by_name("other-one"))),
            false,
        ),
        ("update allowed-one", put("allowed-one"), true),
        ("update other-one", put("other-one"), false),
        (
            "patch allowed-one",
            cl.send_typed(frank, "PATCH", &object("allowed-one"), MERGE, Some(&patch))
                .code,
            false,
        ),
        (
            "delete allowed-one",
            cl.send(frank, "DELETE", &object("allowed-one"), None).code,
            false,
        ),
        (
            "create",
            cl.send(frank, "POST", &configmaps, Some(&new)).code,
            false,
        ),
    ];
    for (what, code, allowed) in real {
        let ok = if allowed {
            (200..300).contains(&code)
        } else {
            code == 403
        };
        failures.check(ok, || {
            format!("resourceNames: frank {what} in team-a: expected allowed={allowed}, got {code}")
        });
    }
    // (verb, name, allowed)
    let reviews = [
        ("get", "allowed-one", true),
        ("get", "other-one", false),
        ("get", "", false),
        ("list", "", false),
        ("list", "allowed-one", true),
        ("update", "allowed-one", true),
        ("update", "other-one", false),
        ("delete", "allowed-one", false),
        ("create", "", false),
    ];
    for (verb, name, want) in reviews {
        let attrs = json!({"namespace": TEAM_A, "verb": verb, "resource": "configmaps",
            "name": name});
        let got = cl.review(
            "frank",
            &["system:authenticated"],
            json!({"resourceAttributes": attrs}),
        );
        failures.check(got == want, || {
            format!("resourceNames: SubjectAccessReview frank {verb} configmaps {name:?}: {got}, expected {want}")
        });
        let target = if name.is_empty() {
            "configmaps".to_string()
        } else {
            format!("configmaps/{name}")
        };
        let args = [verb, target.as_str(), "-n", TEAM_A, "--as", "frank"];
        match cl.can_i(&args) {
            Ok(yes) => failures.check(yes == want, || {
                format!("resourceNames: kubectl auth can-i {args:?}: {yes}, expected {want}")
            }),
            Err(e) => failures.push(format!("resourceNames: {e}")),
        }
    }
}

/// grace may get `/healthz`, `/metrics` and `/debug/*`; others get the public-info paths
/// (anonymous too), and authenticated users discovery.
fn check_non_resource_urls(cl: &Cluster, failures: &Failures) {
    let grace = Some(token_of("grace"));
    let nobody = Some(token_of("nobody"));
    // (who, token, path, expected status: Some(code), or None for "allowed, any status
    // but 401 and 403" where kapi serves nothing at the path)
    let cases: [(&str, Option<&str>, &str, Option<u16>); 14] = [
        ("grace", grace, "/metrics", Some(200)),
        ("grace", grace, "/healthz", Some(200)),
        ("grace", grace, "/debug/pprof", None),
        ("nobody", nobody, "/metrics", Some(403)),
        ("nobody", nobody, "/debug/pprof", Some(403)),
        ("nobody", nobody, "/healthz", Some(200)),
        ("nobody", nobody, "/api", Some(200)),
        ("anonymous", None, "/healthz", Some(200)),
        ("anonymous", None, "/version", Some(200)),
        ("anonymous", None, "/readyz", Some(200)),
        ("anonymous", None, "/livez", Some(200)),
        ("anonymous", None, "/metrics", Some(403)),
        ("anonymous", None, "/api", Some(403)),
        ("a wrong token", Some("not-a-token"), "/healthz", Some(401)),
    ];
    for (who, token, path, want) in cases {
        let (code, body) = cl.get_with(token, path, &[], true);
        let ok = match want {
            Some(w) => code == w,
            None => allowed_status(code),
        };
        failures.check(ok, || {
            format!("nonResourceURLs: {who} GET {path}: expected {want:?}, got {code}: {body}")
        });
        if code == 403 {
            let user = if token.is_none() {
                "system:anonymous"
            } else {
                who
            };
            let message = format!("User {user:?} cannot get path {path:?}");
            failures.check(status_message(&body).contains(&message), || {
                format!(
                    "nonResourceURLs: {who} GET {path}: the 403 does not say {message:?}: {body}"
                )
            });
        }
    }
    // (user, groups, verb, path, allowed)
    let anonymous = ["system:unauthenticated"];
    let authenticated = ["system:authenticated"];
    let reviews: [(&str, &[&str], &str, &str, bool); 11] = [
        ("grace", &authenticated, "get", "/metrics", true),
        ("grace", &authenticated, "get", "/debug/pprof", true),
        ("grace", &authenticated, "get", "/debug/", true),
        ("grace", &authenticated, "get", "/debug", false),
        ("grace", &authenticated, "post", "/metrics", false),
        ("nobody", &authenticated, "get", "/metrics", false),
        ("nobody", &authenticated, "get", "/api", true),
        ("system:anonymous", &anonymous, "get", "/healthz", true),
        ("system:anonymous", &anonymous, "get", "/version", true),
        ("system:anonymous", &anonymous, "get", "/metrics", false),
        ("system:anonymous", &anonymous, "get", "/api", false),
    ];
    for (user, groups, verb, path, want) in reviews {
        let got = cl.review(
            user,
            groups,
            json!({"nonResourceAttributes": {"path": path, "verb": verb}}),
        );
        failures.check(got == want, || {
            format!(
                "nonResourceURLs: SubjectAccessReview {user} {verb} {path}: {got}, expected {want}"
            )
        });
        let mut args = vec![verb, path, "--as", user];
        if user != "system:anonymous" {
            match cl.can_i(&args) {
                Ok(yes) => failures.check(yes == want, || {
                    format!("nonResourceURLs: kubectl auth can-i {args:?}: {yes}, expected {want}")
                }),
                Err(e) => failures.push(format!("nonResourceURLs: {e}")),
            }
            continue;
        }
        // As in kube, anonymous may not create SelfSubjectAccessReviews
        // (system:basic-user is bound to system:authenticated), so kubectl cannot ask.
        args.extend(["--as-group", "system:unauthenticated"]);
        let refused =
            "User \"system:anonymous\" cannot create resource \"selfsubjectaccessreviews\"";
        let answer = cl.can_i(&args);
        failures.check(
            matches!(&answer, Err(e) if e.contains(refused)),
            || format!("nonResourceURLs: kubectl auth can-i {args:?} should be refused ({refused}): {answer:?}"),
        );
    }
    let ssar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "configmaps"}}});
    let ex = cl.send(
        None,
        "POST",
        &format!("{AUTHZ}/selfsubjectaccessreviews"),
        Some(&ssar),
    );
    failures.check(ex.code == 403, || {
        format!(
            "anonymous SelfSubjectAccessReview: expected 403, got {} {}",
            ex.code, ex.body
        )
    });
}

/// Binds `system:basic-user` and `system:discovery` to `system:unauthenticated`, so that
/// anonymous may post SelfSubjectAccessReviews and kubectl, which discovers and asks as
/// the user it impersonates, can answer for anonymous too. Neither role grants anything
/// on the matrix's resources.
fn let_anonymous_ask(cl: &Cluster) {
    let unauthenticated = [group("system:unauthenticated")];
    for role in ["system:basic-user", "system:discovery"] {
        let name = format!("anonymous-{}", role.trim_start_matches("system:"));
        create_binding(cl, None, &name, "ClusterRole", role, &unauthenticated);
    }
    let anonymous = ["system:unauthenticated"];
    cl.wait_allowed(
        "system:anonymous",
        &anonymous,
        json!({"verb": "create", "group": "authorization.k8s.io",
            "resource": "selfsubjectaccessreviews"}),
    );
    wait_nonresource(cl, "system:anonymous", &anonymous, "/api");
}

// ---------------------------------------------------------------------------------------
// Escalation prevention.
// ---------------------------------------------------------------------------------------

/// A write of an RBAC object by a user who is not an admin.
struct Attempt {
    /// A short key, to find it again.
    key: &'static str,
    /// What it tries, for messages.
    what: &'static str,
    method: &'static str,
    path: String,
    body: Value,
    /// A part of kube's refusal message.
    refusal: &'static str,
}

impl Attempt {
    /// An attempt to create the object `body` at `path`.
    fn create(key: &'static str, what: &'static str, path: String, body: Value) -> Self {
        Self {
            key,
            what,
            method: "POST",
            path,
            body,
            refusal: NOT_HELD,
        }
    }
}

/// A binding to `someone` of `role_kind` `role_name`, created in `ns` (or cluster-wide).
fn bind_someone(
    key: &'static str,
    what: &'static str,
    ns: Option<&str>,
    role_kind: &str,
    role_name: &str,
) -> Attempt {
    let subjects = [user("someone")];
    let name = key.to_lowercase();
    match ns {
        Some(ns) => Attempt::create(
            key,
            what,
            role_bindings_path(ns),
            binding("RoleBinding", &name, role_kind, role_name, &subjects),
        ),
        None => Attempt::create(
            key,
            what,
            cluster_role_bindings_path(),
            binding("ClusterRoleBinding", &name, role_kind, role_name, &subjects),
        ),
    }
}

/// The writes mallory tries. Mallory holds, in team-a, read on configmaps, update on the
/// ConfigMap `mine` and write on roles and rolebindings; in team-b write on roles and
/// rolebindings only; cluster-wide write on clusterroles and clusterrolebindings.
fn escalation_attempts() -> Vec<Attempt> {
    let owned = format!("{}/mallory-owned", roles_path(TEAM_A));
    vec![
        Attempt::create(
            "E1",
            "a Role granting secrets get while holding only configmaps rights",
            roles_path(TEAM_A),
            role("esc-secrets", &[rule(&[""], &["secrets"], &["get"])]),
        ),
        Attempt::create(
            "E2",
            "a Role granting configmaps create while holding only read",
            roles_path(TEAM_A),
            role(
                "esc-cm-create",
                &[rule(&[""], &["configmaps"], &["create"])],
            ),
        ),
        Attempt::create(
            "E3",
            "a Role granting update on every ConfigMap while holding it on `mine` only",
            roles_path(TEAM_A),
            role(
                "esc-cm-update-any",
                &[rule(&[""], &["configmaps"], &["update"])],
            ),
        ),
        Attempt::create(
            "E4",
            "a Role with resourceNames broader than held",
            roles_path(TEAM_A),
            role(
                "esc-cm-update-two",
                &[named_rule(
                    &[""],
                    &["configmaps"],
                    &["update"],
                    &["mine", "other"],
                )],
            ),
        ),
        Attempt {
            key: "E5",
            what: "an update of an existing Role adding the verb delete",
            method: "PUT",
            path: owned.clone(),
            body: role(
                "mallory-owned",
                &[rule(&[""], &["configmaps"], &["get", "delete"])],
            ),
            refusal: NOT_HELD,
        },
        Attempt {
            key: "E6",
            what: "a merge patch of an existing Role adding a secrets rule",
            method: "PATCH",
            path: owned,
            body: json!({"rules": [
                rule(&[""], &["configmaps"], &["get"]),
                rule(&[""], &["secrets"], &["list"]),
            ]}),
            refusal: NOT_HELD,
        },
        Attempt::create(
            "E7",
            "a ClusterRole with * on *",
            cluster_roles_path(),
            cluster_role("esc-star", json!({}), &[rule(&["*"], &["*"], &["*"])]),
        ),
        Attempt::create(
            "E8",
            "a ClusterRole granting configmaps get, held only in team-a",
            cluster_roles_path(),
            cluster_role(
                "esc-cm-cluster",
                json!({}),
                &[rule(&[""], &["configmaps"], &["get"])],
            ),
        ),
        Attempt {
            refusal: "must have cluster-admin privileges to use the aggregationRule",
            ..Attempt::create(
                "E9",
                "a ClusterRole with an aggregationRule",
                cluster_roles_path(),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": "esc-aggregate"},
                    "aggregationRule": {"clusterRoleSelectors": [
                        {"matchLabels": {"example.kapi.dev/aggregate-to-esc": "true"}}]},
                    "rules": []}),
            )
        },
        bind_someone(
            "E10",
            "a RoleBinding to admin",
            Some(TEAM_A),
            "ClusterRole",
            "admin",
        ),
        bind_someone(
            "E11",
            "a RoleBinding to edit",
            Some(TEAM_A),
            "ClusterRole",
            "edit",
        ),
        bind_someone(
            "E12",
            "a RoleBinding to cluster-admin",
            Some(TEAM_A),
            "ClusterRole",
            "cluster-admin",
        ),
        bind_someone(
            "E13",
            "a RoleBinding to the Role robot-role (secrets)",
            Some(TEAM_A),
            "Role",
            "robot-role",
        ),
        bind_someone(
            "E14",
            "a RoleBinding in team-b to cm-read, held only in team-a",
            Some(TEAM_B),
            "ClusterRole",
            "cm-read",
        ),
        bind_someone(
            "E15",
            "a ClusterRoleBinding to cluster-admin",
            None,
            "ClusterRole",
            "cluster-admin",
        ),
        bind_someone(
            "E16",
            "a ClusterRoleBinding to cm-read, held only in team-a",
            None,
            "ClusterRole",
            "cm-read",
        ),
    ]
}

/// Sends an attempt with `token`; a PUT carries the object's current resourceVersion.
fn send_attempt(cl: &Cluster, token: &str, attempt: &Attempt) -> Exchange {
    let mut body = attempt.body.clone();
    if attempt.method == "PUT" {
        let current = cl.send(Some(token), "GET", &attempt.path, None);
        let current: Value = serde_json::from_str(&current.body).unwrap_or(Value::Null);
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    }
    let content_type = if attempt.method == "PATCH" {
        MERGE
    } else {
        JSON
    };
    cl.send_typed(
        Some(token),
        attempt.method,
        &attempt.path,
        content_type,
        Some(&body),
    )
}

/// Tries `attempt` as `user`, which must be refused with kube's message; returns whether
/// it was.
fn expect_refused(cl: &Cluster, user: &str, attempt: &Attempt, failures: &Failures) -> bool {
    let ex = send_attempt(cl, token_of(user), attempt);
    let said = status_message(&ex.body);
    let names_user = attempt.refusal != NOT_HELD || said.contains(&format!("user {user:?}"));
    let ok = ex.code == 403 && said.contains(attempt.refusal) && names_user;
    failures.check(ok, || {
        format!(
            "escalation {} ({}): {user}'s {} {} should be refused (403, {:?}), got {}: {}",
            attempt.key,
            attempt.what,
            attempt.method,
            attempt.path,
            attempt.refusal,
            ex.code,
            ex.body
        )
    });
    ok
}

/// Tries `attempt` as `user`, which must succeed.
fn expect_allowed(cl: &Cluster, user: &str, attempt: &Attempt, failures: &Failures) {
    let ex = send_attempt(cl, token_of(user), attempt);
    failures.check((200..300).contains(&ex.code), || {
        format!(
            "escalation {} ({}): {user}'s {} {} should now be allowed, got {}: {}",
            attempt.key, attempt.what, attempt.method, attempt.path, ex.code, ex.body
        )
    });
}

fn find<'a>(attempts: &'a [Attempt], key: &str) -> &'a Attempt {
    attempts
        .iter()
        .find(|a| a.key == key)
        .unwrap_or_else(|| panic!("no attempt {key}"))
}

/// Grants `user` a rule through a Role and RoleBinding in `ns`, or a ClusterRole and
/// ClusterRoleBinding, then waits until a review allows `check`.
fn grant(
    cl: &Cluster,
    user_name: &str,
    name: &str,
    ns: Option<&str>,
    rules: &[Value],
    check: Value,
) {
    let subjects = [user(user_name)];
    match ns {
        Some(ns) => {
            create_role(cl, ns, name, rules);
            create_binding(cl, Some(ns), name, "Role", name, &subjects);
        }
        None => {
            create_cluster_role(cl, name, json!({}), rules);
            create_binding(cl, None, name, "ClusterRole", name, &subjects);
        }
    }
    cl.wait_allowed(user_name, &["system:authenticated"], check);
}

/// The rights mallory starts with, and zed's admin in team-b.
fn setup_escalation(cl: &Cluster) {
    let rbac_write: &[&str] = &["get", "list", "create", "update", "patch", "delete"];
    let cm_read = rule(&[""], &["configmaps"], &["get", "list", "watch"]);
    create_cluster_role(cl, "cm-read", json!({}), &[cm_read]);
    grant(
        cl,
        "mallory",
        "mallory-team-a",
        Some(TEAM_A),
        &[
            rule(&[RBAC_GROUP], &["roles", "rolebindings"], rbac_write),
            rule(&[""], &["configmaps"], &["get", "list", "watch"]),
            named_rule(&[""], &["configmaps"], &["update"], &["mine"]),
        ],
        json!({"namespace": TEAM_A, "verb": "create", "group": RBAC_GROUP, "resource": "roles"}),
    );
    grant(
        cl,
        "mallory",
        "mallory-team-b",
        Some(TEAM_B),
        &[rule(&[RBAC_GROUP], &["roles", "rolebindings"], rbac_write)],
        json!({"namespace": TEAM_B, "verb": "create", "group": RBAC_GROUP,
            "resource": "rolebindings"}),
    );
    grant(
        cl,
        "mallory",
        "mallory-cluster",
        None,
        &[rule(
            &[RBAC_GROUP],
            &["clusterroles", "clusterrolebindings"],
            rbac_write,
        )],
        json!({"verb": "create", "group": RBAC_GROUP, "resource": "clusterrolebindings"}),
    );
    create_binding(
        cl,
        Some(TEAM_B),
        "zed-admin",
        "ClusterRole",
        "admin",
        &[user("zed")],
    );
    cl.wait_allowed(
        "zed",
        &["system:authenticated"],
        json!({"namespace": TEAM_B, "verb": "create", "group": RBAC_GROUP,
            "resource": "rolebindings"}),
    );
}

/// The escalation attempts refused, then allowed as mallory gains `bind` and `escalate`;
/// zed, admin of team-b, may grant what admin holds but not more. Returns how many writes
/// were refused as escalations.
fn check_escalation(cl: &Cluster, failures: &Failures) -> usize {
    setup_escalation(cl);
    let attempts = escalation_attempts();
    let mut refused = 0;
    // Writes within what mallory holds go through.
    let controls = [
        Attempt::create(
            "C1",
            "a Role granting configmaps get, held",
            roles_path(TEAM_A),
            role("mallory-owned", &[rule(&[""], &["configmaps"], &["get"])]),
        ),
        Attempt::create(
            "C2",
            "a Role granting update on `mine`, held",
            roles_path(TEAM_A),
            role(
                "esc-cm-update-mine",
                &[named_rule(&[""], &["configmaps"], &["update"], &["mine"])],
            ),
        ),
        bind_someone(
            "C3",
            "a RoleBinding in team-a to cm-read, held there",
            Some(TEAM_A),
            "ClusterRole",
            "cm-read",
        ),
        bind_someone(
            "C4",
            "a RoleBinding to the Role cm-reader, held",
            Some(TEAM_A),
            "Role",
            "cm-reader",
        ),
    ];
    for control in &controls {
        expect_allowed(cl, "mallory", control, failures);
    }
    // Every attempt is refused.
    for attempt in &attempts {
        refused += usize::from(expect_refused(cl, "mallory", attempt, failures));
    }
    // kube's whole message, for one of them.
    let ex = send_attempt(cl, token_of("mallory"), find(&attempts, "E1"));
    let message: Value = serde_json::from_str(&ex.body).unwrap_or(Value::Null);
    let want = "roles.rbac.authorization.k8s.io \"esc-secrets\" is forbidden: user \"mallory\" \
        (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently \
        held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}";
    failures.check(message["message"] == want, || {
        format!(
            "escalation E1: message {}, expected {want:?}",
            message["message"]
        )
    });

    // bind on admin only: the binding to admin goes through, not those to edit or
    // cluster-admin.
    let bind_on = |names: &[&str]| named_rule(&[RBAC_GROUP], &["clusterroles"], &["bind"], names);
    grant(
        cl,
        "mallory",
        "mallory-bind-admin",
        Some(TEAM_A),
        &[bind_on(&["admin"])],
        json!({"namespace": TEAM_A, "verb": "bind", "group": RBAC_GROUP,
            "resource": "clusterroles", "name": "admin"}),
    );
    expect_allowed(cl, "mallory", find(&attempts, "E10"), failures);
    for key in ["E11", "E12"] {
        refused += usize::from(expect_refused(
            cl,
            "mallory",
            find(&attempts, key),
            failures,
        ));
    }
    // escalate on roles in team-a: every Role write goes through.
    grant(
        cl,
        "mallory",
        "mallory-escalate-roles",
        Some(TEAM_A),
        &[rule(&[RBAC_GROUP], &["roles"], &["escalate"])],
        json!({"namespace": TEAM_A, "verb": "escalate", "group": RBAC_GROUP,
            "resource": "roles"}),
    );
    for key in ["E1", "E2", "E3", "E4", "E5", "E6"] {
        expect_allowed(cl, "mallory", find(&attempts, key), failures);
    }
    // escalate on clusterroles: every ClusterRole write goes through.
    grant(
        cl,
        "mallory",
        "mallory-escalate-clusterroles",
        None,
        &[rule(&[RBAC_GROUP], &["clusterroles"], &["escalate"])],
        json!({"verb": "escalate", "group": RBAC_GROUP, "resource": "clusterroles"}),
    );
    for key in ["E7", "E8", "E9"] {
        expect_allowed(cl, "mallory", find(&attempts, key), failures);
    }
    // bind on cm-read in team-b.
    grant(
        cl,
        "mallory",
        "mallory-bind-cm-read",
        Some(TEAM_B),
        &[bind_on(&["cm-read"])],
        json!({"namespace": TEAM_B, "verb": "bind", "group": RBAC_GROUP,
            "resource": "clusterroles", "name": "cm-read"}),
    );
    expect_allowed(cl, "mallory", find(&attempts, "E14"), failures);
    // bind on every ClusterRole, and on the Role robot-role.
    grant(
        cl,
        "mallory",
        "mallory-bind-all",
        None,
        &[rule(&[RBAC_GROUP], &["clusterroles"], &["bind"])],
        json!({"verb": "bind", "group": RBAC_GROUP, "resource": "clusterroles",
            "name": "cluster-admin"}),
    );
    grant(
        cl,
        "mallory",
        "mallory-bind-robot-role",
        Some(TEAM_A),
        &[named_rule(
            &[RBAC_GROUP],
            &["roles"],
            &["bind"],
            &["robot-role"],
        )],
        json!({"namespace": TEAM_A, "verb": "bind", "group": RBAC_GROUP, "resource": "roles",
            "name": "robot-role"}),
    );
    for key in ["E11", "E12", "E13", "E15", "E16"] {
        expect_allowed(cl, "mallory", find(&attempts, key), failures);
    }

    // zed holds admin in team-b: may grant what admin holds there, not more.
    let zed_grants = [
        Attempt::create(
            "Z1",
            "a Role granting secrets get, held through admin",
            roles_path(TEAM_B),
            role("zed-secrets", &[rule(&[""], &["secrets"], &["get"])]),
        ),
        bind_someone(
            "Z2",
            "a RoleBinding to edit, held",
            Some(TEAM_B),
            "ClusterRole",
            "edit",
        ),
        bind_someone(
            "Z3",
            "a RoleBinding to admin, held",
            Some(TEAM_B),
            "ClusterRole",
            "admin",
        ),
    ];
    for attempt in &zed_grants {
        expect_allowed(cl, "zed", attempt, failures);
    }
    let zed_escalations = [
        bind_someone(
            "Z4",
            "a RoleBinding to cluster-admin",
            Some(TEAM_B),
            "ClusterRole",
            "cluster-admin",
        ),
        Attempt::create(
            "Z5",
            "a Role with * on *",
            roles_path(TEAM_B),
            role("zed-star", &[rule(&["*"], &["*"], &["*"])]),
        ),
    ];
    for attempt in &zed_escalations {
        refused += usize::from(expect_refused(cl, "zed", attempt, failures));
    }
    // Outside team-b zed may not even write bindings: a plain authorization 403.
    let elsewhere = Attempt {
        refusal: "cannot create resource \"rolebindings\"",
        ..bind_someone(
            "Z6",
            "a RoleBinding in team-a",
            Some(TEAM_A),
            "ClusterRole",
            "view",
        )
    };
    expect_refused(cl, "zed", &elsewhere, failures);
    refused
}

// ---------------------------------------------------------------------------------------
// Identity: whoami, SelfSubjectReview, impersonation.
// ---------------------------------------------------------------------------------------

/// The value of a `kubectl auth whoami` table row.
fn whoami_row<'a>(table: &'a str, attribute: &str) -> Option<&'a str> {
    table
        .lines()
        .find_map(|l| l.strip_prefix(attribute))
        .map(str::trim)
}

/// The user and groups of a `kubectl auth whoami -o json` (or SelfSubjectReview).
fn user_info(review: &str) -> (String, Vec<String>) {
    let v: Value = serde_json::from_str(review).unwrap_or(Value::Null);
    let info = &v["status"]["userInfo"];
    let groups = info["groups"]
        .as_array()
        .map(|g| {
            g.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    (info["username"].as_str().unwrap_or("").to_string(), groups)
}

fn check_identity(cl: &Cluster, failures: &Failures) {
    let table = cl.kapi.kubectl(&["auth", "whoami"]);
    failures.check(
        whoami_row(&table, "Username") == Some("kapi-admin")
            && whoami_row(&table, "Groups") == Some("[system:masters system:authenticated]"),
        || format!("kubectl auth whoami as the admin printed:\n{table}"),
    );
    let bob = cl.kapi.kubectl(&[
        "auth",
        "whoami",
        "--as",
        "bob",
        "--as-group",
        "devs",
        "-o",
        "json",
    ]);
    failures.check(
        user_info(&bob)
            == (
                "bob".into(),
                vec!["devs".into(), "system:authenticated".into()],
            ),
        || format!("kubectl auth whoami --as bob --as-group devs printed:\n{bob}"),
    );
    let bob_table = cl
        .kapi
        .kubectl(&["auth", "whoami", "--as", "bob", "--as-group", "devs"]);
    failures.check(
        whoami_row(&bob_table, "Username") == Some("bob")
            && whoami_row(&bob_table, "Groups") == Some("[devs system:authenticated]"),
        || format!("kubectl auth whoami --as bob --as-group devs printed:\n{bob_table}"),
    );
    let robot = cl.kapi.kubectl(&[
        "auth",
        "whoami",
        "--as",
        Subject::ServiceAccount.user(),
        "-o",
        "json",
    ]);
    let (name, groups) = user_info(&robot);
    let want: BTreeSet<String> = Subject::ServiceAccount
        .groups()
        .iter()
        .map(|g| g.to_string())
        .collect();
    failures.check(
        name == Subject::ServiceAccount.user()
            && groups.into_iter().collect::<BTreeSet<_>>() == want,
        || format!("kubectl auth whoami --as the ServiceAccount printed:\n{robot}"),
    );
    // A SelfSubjectReview with a token: the token file's user, uid and groups.
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let ex = cl.send(
        Some(token_of("erin")),
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        Some(&review),
    );
    let uid: Value = serde_json::from_str(&ex.body).unwrap_or(Value::Null);
    failures.check(
        ex.code == 201
            && user_info(&ex.body)
                == (
                    "erin".into(),
                    vec!["ops".into(), "system:authenticated".into()],
                )
            && uid["status"]["userInfo"]["uid"] == uid_of("erin"),
        || format!("SelfSubjectReview as erin: {} {}", ex.code, ex.body),
    );
    // Impersonation needs the impersonate verb.
    let (code, body) = cl.get_with(
        Some(token_of("nobody")),
        &Resource::ConfigMaps.collection(Some(TEAM_A)),
        &[("Impersonate-User", "alice")],
        true,
    );
    let message = "User \"nobody\" cannot impersonate resource \"users\"";
    failures.check(
        code == 403 && status_message(&body).contains(message),
        || format!("nobody impersonating alice: expected 403 ({message}), got {code}: {body}"),
    );
    // The authorizer lets authenticated users create SelfSubjectAccessReviews
    // (system:basic-user); kubectl finds the resource through discovery (below).
    let basic = json!({"resourceAttributes": {"verb": "create", "group": "authorization.k8s.io",
        "resource": "selfsubjectaccessreviews"}});
    failures.check(
        cl.review("nobody", &["system:authenticated"], basic),
        || "SubjectAccessReview: nobody may not create selfsubjectaccessreviews".to_string(),
    );
    // The admin may do anything, nobody only what system:basic-user allows.
    for (args, want) in [
        (vec!["*", "*"], true),
        (
            vec![
                "create",
                "selfsubjectaccessreviews.authorization.k8s.io",
                "--as",
                "nobody",
            ],
            true,
        ),
        (vec!["create", "namespaces", "--as", "nobody"], false),
    ] {
        match cl.can_i(&args) {
            Ok(yes) => failures.check(yes == want, || {
                format!("kubectl auth can-i {args:?}: {yes}, expected {want}")
            }),
            Err(e) => failures.push(e),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The test.
// ---------------------------------------------------------------------------------------

/// Runs `section`, printing how long it took.
fn timed<T>(name: &str, section: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = section();
    eprintln!("{name}: {:.1?}", start.elapsed());
    out
}

#[test]
fn rbac_matrix_resource_names_urls_and_escalation() {
    let started = Instant::now();
    let mut cl = Cluster::start();
    create_namespace(&cl, TEAM_A);
    create_namespace(&cl, TEAM_B);
    cl.robot_token = service_account_token(&cl);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scenario(&cl)));
    if let Err(e) = run {
        let log = cl.kapi.log_text();
        let tail: Vec<&str> = log.lines().rev().take(80).collect();
        eprintln!(
            "the server log's last lines:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
        std::panic::resume_unwind(e);
    }
    eprintln!("total: {:.1?}", started.elapsed());
}

fn scenario(cl: &Cluster) {
    timed("policy", || setup_policy(cl));
    let failures = Failures::default();
    // Before anonymous may ask anything.
    timed("nonResourceURLs", || check_non_resource_urls(cl, &failures));
    let_anonymous_ask(cl);
    let cells = cells();
    let reviews = timed("access reviews", || check_reviews(cl, &cells, &failures));
    let real = timed("real requests", || {
        check_real_requests(cl, &cells, &failures)
    });
    let kubectl = timed("kubectl auth can-i", || {
        check_kubectl(cl, &cells, &failures)
    });
    eprintln!(
        "matrix: {} cells, {reviews} access reviews, {real} real requests, {kubectl} kubectl runs",
        cells.len()
    );
    timed("resourceNames", || check_resource_names(cl, &failures));
    let refused = timed("escalation", || check_escalation(cl, &failures));
    eprintln!("escalation: {refused} writes refused");
    timed("identity", || check_identity(cl, &failures));
    let failures = failures.into_inner();
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(refused >= 12, "only {refused} escalations refused");
}
