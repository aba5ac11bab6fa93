//! The crates form the server chain: each depends only on the crates below it, and the
//! generic apiserver knows no built-in resource by name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kapi_apiserver::registry::Resources;

/// The workspace's crates from the bottom up: a crate's `[dependencies]` and
/// `[build-dependencies]` name only crates before it.
const CHAIN: &[(&str, &str)] = &[
    ("validation", "kapi-validation"),
    ("macros", "kapi-macros"),
    ("core", "kapi-core"),
    ("auth", "kapi-auth"),
    ("storage", "kapi-storage"),
    ("apiserver", "kapi-apiserver"),
    ("apiextensions", "kapi-apiextensions"),
    ("codegen", "kapi-codegen"),
    ("kube", "kapi-kube"),
    ("custom", "kapi-custom"),
    ("aggregator", "kapi-aggregator"),
    ("kapi", "kapi"),
];

/// Names of built-in resources the generic crate may say, as k8s.io/apiserver says
/// them: namespaces scope every request (`/namespaces/{name}/…`, a namespace's deletion
/// refusing new objects); a service account's user name is part of authentication
/// (`system:serviceaccount:…`) and of impersonating one; and impersonating a user's
/// extras and UID is authorized against `authentication.k8s.io`'s `userextras` and
/// `uids`; priority and fairness matches FlowSchema subjects of kind `ServiceAccount`;
/// a webhook's `clientConfig.service` names the Service it is called through (its
/// `ServiceResolver` says where that is); the Webhook authorization mode asks its
/// webhook with a `SubjectAccessReview`, the wire format k8s.io/apiserver's webhook
/// authorizer posts (a review, not a served resource's rules).
const ALLOWED: &[&str] = &[
    "service",
    "ServiceAccount",
    "namespaces",
    "namespace",
    "Namespace",
    "serviceaccounts",
    "authentication.k8s.io",
    "SubjectAccessReview",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `kapi-*` crates a manifest depends on outside its dev-dependencies.
fn dependencies(manifest: &str) -> BTreeSet<String> {
    let mut section = "";
    let mut out = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if matches!(section, "[dependencies]" | "[build-dependencies]") {
            let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
            if name == "kapi" || name.starts_with("kapi-") {
                out.insert(name.to_string());
            }
        }
    }
    out
}

#[test]
fn every_crate_depends_only_on_crates_below_it() {
    let root = workspace();
    let mut problems = Vec::new();
    for (at, (dir, name)) in CHAIN.iter().enumerate() {
        let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
        assert!(manifest.contains(&format!("name = \"{name}\"")), "{dir}");
        let below: BTreeSet<&str> = CHAIN[..at].iter().map(|(_, n)| *n).collect();
        for dep in dependencies(&manifest) {
            if !below.contains(dep.as_str()) {
                problems.push(format!("{name} depends on {dep}, which is not below it"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let generic = std::fs::read_to_string(root.join("apiserver/Cargo.toml")).unwrap();
    assert_eq!(
        dependencies(&generic),
        ["kapi-auth", "kapi-core", "kapi-storage"]
            .map(String::from)
            .into(),
        "the generic apiserver depends on nothing above storage"
    );
}

/// Every name a built-in resource goes by: its kind, list kind, plural, singular, short
/// names, and its group.
fn builtin_names() -> BTreeSet<String> {
    let mut resources = Resources::new();
    kapi_kube::generated::register(&mut resources);
    let mut names = BTreeSet::new();
    for strategy in resources.strategies() {
        let info = strategy.info();
        for name in [&info.kind, &info.list_kind, &info.plural, &info.singular]
            .into_iter()
            .chain(info.short_names.iter())
            .chain([&info.group])
        {
            if !name.is_empty() {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// The `.rs` files under `dir`, by their path relative to `root`.
fn sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.insert(rel, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// The built-in names `text`'s code (not its comments or unit tests) says as a whole
/// string literal.
fn names_said(text: &str, names: &BTreeSet<String>) -> BTreeSet<String> {
    let lexed = kapi_tests::source::lex(text);
    let mut said = BTreeSet::new();
    for literal in &lexed.strings {
        if names.contains(literal.as_str()) {
            said.insert(literal.clone());
        }
    }
    said
}

#[test]
fn the_generic_apiserver_names_no_builtin_resource() {
    let names = builtin_names();
    assert!(names.contains("deployments") && names.contains("events.k8s.io"));
    let src = workspace().join("apiserver/src");
    let mut files = BTreeMap::new();
    sources(&src, &src, &mut files);
    assert!(
        files.contains_key("endpoints/resource.rs"),
        "{:?}",
        files.keys()
    );
    let mut found = BTreeSet::new();
    for (file, text) in &files {
        for name in names_said(text, &names) {
            if !ALLOWED.contains(&name.as_str()) {
                found.insert((file.clone(), name));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the generic crate names built-in resources; their rules belong in kapi-kube: {found:?}"
    );
}

#[test]
fn the_measure_sees_names_in_string_literals_only() {
    let names: BTreeSet<String> = ["deployments", "apps"].map(String::from).into();
    let text = r##"
// "deployments" in a comment
fn f() { let _ = ("deployments", r#"apps"#, "the deployments of apps"); }
#[cfg(test)]
mod tests { const X: &str = "apps"; }
"##;
    let said = names_said(text, &names);
    assert_eq!(said, ["apps", "deployments"].map(String::from).into());
    let none = names_said("fn f() { g(\"deploy\\\"ments\") }", &names);
    assert!(none.is_empty(), "{none:?}");
}
