//! Kubernetes' CEL authorizer library (`apiserver/pkg/cel/library/authz.go`), which
//! admission policies' expressions use through the `authorizer` variable:
//!
//! ```text
//! authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('update').allowed()
//! authorizer.path('/healthz').check('get').allowed()
//! authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('list').reason()
//! authorizer.requestResource.check('delete').allowed()
//! ```
//!
//! The values are CEL maps with a `kind` (`authorizer`, `path`, `group`, `resource`,
//! `decision`), so that they cross the `cel` crate as plain values. `check` asks the
//! [`Authorize`] the caller installed for the evaluation ([`with_authorizer`]); with
//! none, every check is an error. This module knows nothing of how authorization is
//! decided.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use cel::common::functions::Function;
use cel::common::types::{MAP_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::objects::Key;
use cel::{Env, ExecutionError, Value};

/// The functions this library adds, for the compiler's list of known functions.
pub const FUNCTIONS: &[&str] = &[
    "path",
    "group",
    "resource",
    "subresource",
    "namespace",
    "name",
    "check",
    "allowed",
    "reason",
    "errored",
    "error",
    "serviceAccount",
];

/// One question an expression asks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthzQuery {
    /// Asked for this ServiceAccount (namespace, name) instead of the request's user.
    pub service_account: Option<(String, String)>,
    /// A non-resource path (`/healthz`); `None` for a resource check.
    pub path: Option<String>,
    /// The API group.
    pub group: String,
    /// The resource.
    pub resource: String,
    /// The subresource.
    pub subresource: String,
    /// The namespace.
    pub namespace: String,
    /// The object's name.
    pub name: String,
    /// The verb.
    pub verb: String,
}

/// The answer: allowed or not, why, and an error when the authorizer failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthzDecision {
    /// The request would be allowed.
    pub allowed: bool,
    /// The authorizer's reason.
    pub reason: String,
    /// Why it could not decide.
    pub error: String,
}

/// What answers the library's checks.
pub trait Authorize: Send + Sync {
    /// Decides `query`.
    fn check(&self, query: &AuthzQuery) -> AuthzDecision;
}

thread_local! {
    /// The authorizer of the evaluation running on this thread.
    static CURRENT: RefCell<Option<Arc<dyn Authorize>>> = const { RefCell::new(None) };
}

/// Runs `f` (which evaluates expressions) with `authorizer` answering their checks.
pub fn with_authorizer<T>(authorizer: Option<Arc<dyn Authorize>>, f: impl FnOnce() -> T) -> T {
    let previous = CURRENT.with(|c| c.replace(authorizer));
    let out = f();
    CURRENT.with(|c| *c.borrow_mut() = previous);
    out
}

/// Adds the library's functions to `env`. A failure is a programming error every test
/// that evaluates a policy catches.
pub fn install(env: &mut Env) {
    let fns: [(&str, usize, Function); 12] = [
        ("path", 1, path),
        ("group", 1, group),
        ("resource", 1, resource),
        ("subresource", 1, subresource),
        ("namespace", 1, namespace),
        ("name", 1, name),
        ("check", 1, check),
        ("allowed", 0, allowed),
        ("reason", 0, reason),
        ("errored", 0, errored),
        ("error", 0, error),
        ("serviceAccount", 2, service_account),
    ];
    for (name, args, f) in fns {
        let id = format!("authz_{name}");
        let strings = (0..args).map(|_| STRING_TYPE).collect();
        let _ = env.add_member_overload(name, &id, MAP_TYPE, strings, f);
    }
}

type Args<'b, 'v> = Vec<CowVal<'b, 'v>>;
type Returned<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn values(args: &[CowVal<'_, '_>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|a| Value::try_from(a.as_ref())).collect()
}

fn ret<'b, 'v>(v: Value) -> Returned<'b, 'v> {
    let b: Box<dyn Val> = v.try_into()?;
    Ok(CowVal::from(b))
}

fn fail<'b, 'v>(what: &str) -> Returned<'b, 'v> {
    Err(ExecutionError::function_error("authorizer", what))
}

fn entries(v: &Value) -> Option<HashMap<String, Value>> {
    let Value::Map(m) = v else { return None };
    Some(
        m.map
            .iter()
            .filter_map(|(k, v)| match k {
                Key::String(s) => Some((s.to_string(), v.clone())),
                _ => None,
            })
            .collect(),
    )
}

fn map_of(entries: HashMap<String, Value>) -> Value {
    let m: HashMap<Key, Value> = entries
        .into_iter()
        .map(|(k, v)| (Key::String(Arc::new(k)), v))
        .collect();
    Value::Map(m.into())
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        _ => String::new(),
    }
}

/// The target map when it is of `kind`, and the string argument.
fn target_of(args: &[Value], kind: &str) -> Option<(HashMap<String, Value>, String)> {
    let target = entries(args.first()?)?;
    (target.get("kind").map(text).as_deref() == Some(kind))
        .then(|| (target, args.get(1).map(text).unwrap_or_default()))
}

/// A new step of kind `kind`, keeping the target's ServiceAccount.
fn step(from: &HashMap<String, Value>, kind: &str) -> HashMap<String, Value> {
    let mut next = from.clone();
    next.insert("kind".into(), Value::String(Arc::new(kind.into())));
    next
}

fn path<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    let args = values(&args)?;
    let Some((target, p)) = target_of(&args, "authorizer") else {
        return fail("path() applies to the authorizer");
    };
    let mut next = step(&target, "path");
    next.insert("path".into(), Value::String(Arc::new(p)));
    ret(map_of(next))
}

fn group<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    let args = values(&args)?;
    let Some((target, g)) = target_of(&args, "authorizer") else {
        return fail("group() applies to the authorizer");
    };
    let mut next = step(&target, "group");
    next.insert("group".into(), Value::String(Arc::new(g)));
    ret(map_of(next))
}

fn resource<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    set(args, "group", "resource")
}

fn subresource<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    set(args, "resource", "subresource")
}

fn namespace<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    set(args, "resource", "namespace")
}

fn name<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    set(args, "resource", "name")
}

/// `resource` on a group, and `subresource`/`namespace`/`name` on a resource: the
/// step of kind `from` becomes a resource with `field` set.
fn set<'b, 'v>(args: Args<'b, 'v>, from: &str, field: &str) -> Returned<'b, 'v> {
    let args = values(&args)?;
    let Some((target, value)) = target_of(&args, from) else {
        return fail(&format!("{field}() applies to a {from} check"));
    };
    let mut next = step(&target, "resource");
    next.insert(field.into(), Value::String(Arc::new(value)));
    ret(map_of(next))
}

fn check<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    let args = values(&args)?;
    let (target, verb) = match target_of(&args, "path").or_else(|| target_of(&args, "resource")) {
        Some(t) => t,
        None => return fail("check() applies to a path or resource check"),
    };
    let get = |k: &str| target.get(k).map(text).unwrap_or_default();
    let service_account = target.get("serviceAccount").and_then(entries).map(|sa| {
        (
            sa.get("namespace").map(text).unwrap_or_default(),
            sa.get("name").map(text).unwrap_or_default(),
        )
    });
    let query = AuthzQuery {
        service_account,
        path: (get("kind") == "path").then(|| get("path")),
        group: get("group"),
        resource: get("resource"),
        subresource: get("subresource"),
        namespace: get("namespace"),
        name: get("name"),
        verb,
    };
    let decision = CURRENT.with(|c| c.borrow().as_ref().map(|a| a.check(&query)));
    let decision = decision.unwrap_or_else(|| AuthzDecision {
        error: "no authorizer".into(),
        ..AuthzDecision::default()
    });
    let mut out = HashMap::new();
    out.insert("kind".into(), Value::String(Arc::new("decision".into())));
    out.insert("allowed".into(), Value::Bool(decision.allowed));
    out.insert("reason".into(), Value::String(Arc::new(decision.reason)));
    out.insert("error".into(), Value::String(Arc::new(decision.error)));
    ret(map_of(out))
}

fn allowed<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    field(args, "allowed")
}

fn reason<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    field(args, "reason")
}

fn error<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    field(args, "error")
}

fn field<'b, 'v>(args: Args<'b, 'v>, name: &str) -> Returned<'b, 'v> {
    let args = values(&args)?;
    match target_of(&args, "decision") {
        Some((decision, _)) => ret(decision.get(name).cloned().unwrap_or(Value::Null)),
        None => fail(&format!("{name}() applies to a decision")),
    }
}

fn errored<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    let args = values(&args)?;
    match target_of(&args, "decision") {
        Some((decision, _)) => ret(Value::Bool(
            !decision
                .get("error")
                .map(text)
                .unwrap_or_default()
                .is_empty(),
        )),
        None => fail("errored() applies to a decision"),
    }
}

fn service_account<'b, 'v>(args: Args<'b, 'v>) -> Returned<'b, 'v> {
    let args = values(&args)?;
    let Some((target, namespace)) = target_of(&args, "authorizer") else {
        return fail("serviceAccount() applies to the authorizer");
    };
    let name = args.get(2).map(text).unwrap_or_default();
    let mut sa = HashMap::new();
    sa.insert("namespace".into(), Value::String(Arc::new(namespace)));
    sa.insert("name".into(), Value::String(Arc::new(name)));
    let mut next = step(&target, "authorizer");
    next.remove("requestResource");
    next.insert("serviceAccount".into(), map_of(sa));
    ret(map_of(next))
}

/// The `authorizer` variable's value for a request: `requestResource` is the check of
/// the request's own resource.
pub fn authorizer_value(request_resource: &serde_json::Value) -> serde_json::Value {
    let mut resource = request_resource.clone();
    resource["kind"] = serde_json::json!("resource");
    serde_json::json!({"kind": "authorizer", "requestResource": resource})
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::{Authorize, AuthzDecision, AuthzQuery, authorizer_value, with_authorizer};
    use crate::schema::cel::Expression;

    /// Allows `get` only, and keeps what it was asked.
    #[derive(Default)]
    struct GetOnly(Mutex<Vec<AuthzQuery>>);

    impl Authorize for GetOnly {
        fn check(&self, query: &AuthzQuery) -> AuthzDecision {
            self.0.lock().unwrap().push(query.clone());
            AuthzDecision {
                allowed: query.verb == "get",
                reason: format!("asked {}", query.verb),
                error: String::new(),
            }
        }
    }

    fn eval(src: &str, checks: &Arc<GetOnly>) -> Result<serde_json::Value, String> {
        let e = Expression::compile(src, &["authorizer", "object"])?;
        let authz = authorizer_value(&json!({"group": "apps", "resource": "deployments",
            "subresource": "", "namespace": "ns", "name": "web"}));
        let object = json!({"metadata": {"namespace": "team"}});
        let checks: Arc<dyn Authorize> = checks.clone();
        with_authorizer(Some(checks), || {
            e.eval_json(&[("authorizer", &authz), ("object", &object)])
        })
    }

    #[test]
    fn checks_are_built_and_asked_as_kube_builds_them() {
        let checks = Arc::new(GetOnly::default());
        let src = "authorizer.group('').resource('secrets').subresource('x').namespace(object.metadata.namespace).name('s').check('get').allowed()";
        assert_eq!(eval(src, &checks), Ok(json!(true)));
        let src = "authorizer.serviceAccount('kube-system', 'ci').path('/healthz').check('post').reason()";
        assert_eq!(eval(src, &checks), Ok(json!("asked post")));
        let src = "authorizer.requestResource.check('delete').errored()";
        assert_eq!(eval(src, &checks), Ok(json!(false)));
        let asked = checks.0.lock().unwrap().clone();
        assert_eq!(
            asked,
            [
                AuthzQuery {
                    resource: "secrets".into(),
                    subresource: "x".into(),
                    namespace: "team".into(),
                    name: "s".into(),
                    verb: "get".into(),
                    ..AuthzQuery::default()
                },
                AuthzQuery {
                    service_account: Some(("kube-system".into(), "ci".into())),
                    path: Some("/healthz".into()),
                    verb: "post".into(),
                    ..AuthzQuery::default()
                },
                AuthzQuery {
                    group: "apps".into(),
                    resource: "deployments".into(),
                    namespace: "ns".into(),
                    name: "web".into(),
                    verb: "delete".into(),
                    ..AuthzQuery::default()
                },
            ]
        );
        // Steps out of order fail at run time; without `authorizer`, the library's
        // functions do not compile.
        assert!(eval("authorizer.group('').check('get').allowed()", &checks).is_err());
        assert!(Expression::compile("object.check('get')", &["object"]).is_err());
    }
}
