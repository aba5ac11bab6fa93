//! The built-in API groups are cargo features of kapi-kube: a crate compiles only the
//! groups it names. Cargo's own resolution says which a package gets (`cargo tree`,
//! offline, from the lock file): the `kapi` binary every group, the own-control-plane
//! example only core's Namespace and RBAC, though it depends on kapi and
//! kapi-test-server. `scripts/test` builds and tests the examples alone, so that
//! resolution is also what their tests run on.

use std::process::Command;

include!("../../kube/builtin_groups.rs");

/// The features kapi-kube is compiled with when `package` alone is built.
fn kube_features(package: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["tree", "--offline", "-e", "features", "-i", "kapi-kube"])
        .args(["-p", package, "--depth", "0", "-f", "{p} {f}"])
        .output()
        .expect("running cargo tree");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text.lines().next().expect("kapi-kube's line");
    assert!(line.starts_with("kapi-kube "), "{line}");
    let features = line.rsplit(' ').next().unwrap_or_default();
    let mut features: Vec<String> = features.split(',').map(str::to_string).collect();
    features.sort();
    features
}

#[test]
fn a_control_plane_of_its_own_kinds_compiles_only_the_groups_it_names() {
    assert_eq!(
        kube_features("kapi-example-own-control-plane"),
        ["namespaces", "rbac"]
    );
    // Its controller example too, tested against kapi-test-server without its default.
    assert_eq!(
        kube_features("kapi-example-controller"),
        ["namespaces", "rbac"]
    );
}

#[test]
fn the_kapi_binary_compiles_every_group() {
    let features = kube_features("kapi");
    assert!(
        features.contains(&"all-builtins".to_string()),
        "{features:?}"
    );
    // Every group and kind the build script knows is a feature all-builtins turns on.
    let known = GROUPS.iter().map(|g| g.0).chain(KINDS.iter().map(|k| k.0));
    for feature in known {
        assert!(
            features.iter().any(|f| f == feature),
            "{feature}: {features:?}"
        );
    }
    assert_eq!(
        features.len(),
        1 + GROUPS.len() + KINDS.len(),
        "{features:?}"
    );
}
