//! The built-ins of issue #22 through every kubectl release, 1.27 to 1.33, and the one
//! on PATH: created from YAML, read back as kube's Table columns, described, and
//! deleted, in kubectl's own words. Each API group's kinds are in a module of
//! `kubectl_kinds/` and get a test, and a server, of their own.

use kapi_tests::KUBECTL_RELEASES as RELEASES;
use kapi_tests::{Backend, Kapi};

mod kubectl_kinds {
    pub mod admission;
    pub mod classes;
    pub mod flowcontrol;
    pub mod networking;
    pub mod storage;
}

/// One kind's round trip: the manifest, what `kubectl get` prints (header and row, the
/// age left out), and lines `kubectl describe` prints.
pub struct Kind {
    /// What kubectl calls it (`priorityclass.scheduling.k8s.io`).
    pub resource: &'static str,
    /// The object's name.
    pub name: &'static str,
    /// The manifest created.
    pub yaml: &'static str,
    /// The header `kubectl get` prints.
    pub header: &'static [&'static str],
    /// The row, without the age.
    pub row: &'static [&'static str],
    /// Words `kubectl describe` prints.
    pub described: &'static [&'static str],
    /// The first kubectl minor release whose `describe` reads the kind's served version
    /// (0: all). Older ones describe some kinds through alpha or beta versions, which
    /// kube 1.35 does not serve by default either, and answer NotFound as against it.
    pub describe_since: u32,
}

/// The minor version of a release (`1.31` → 31); the kubectl on PATH runs the release
/// matching kapi's `/version`, the newest.
fn minor(release: Option<&str>) -> u32 {
    let newest = RELEASES[RELEASES.len() - 1];
    let release = release.unwrap_or(newest);
    release
        .rsplit('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or_default()
}

/// The words of each line of `text`.
fn words(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .map(|l| l.split_whitespace().collect())
        .collect()
}

fn round_trip(kapi: &Kapi, release: Option<&str>, kinds: &[Kind]) {
    let which = release.unwrap_or("on PATH");
    for kind in kinds {
        let (resource, name) = (kind.resource, kind.name);
        let out = kapi.kubectl_ok(release, &["create", "-f", "-"], Some(kind.yaml));
        assert_eq!(
            out.trim(),
            format!("{resource}/{name} created"),
            "kubectl {which}"
        );

        // A column a controller fills (FlowSchema's MissingPL) settles shortly after the
        // create: the row is read again until it does, bounded.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let out = kapi.kubectl_ok(release, &["get", resource, name], None);
            let lines = words(&out);
            assert_eq!(lines.len(), 2, "kubectl {which} get {resource}:\n{out}");
            assert_eq!(lines[0], kind.header, "kubectl {which}:\n{out}");
            let age = kind.header.iter().position(|c| *c == "AGE").expect("AGE");
            let mut row = lines[1].clone();
            row.remove(age);
            if row == kind.row || std::time::Instant::now() > deadline {
                assert_eq!(row, kind.row, "kubectl {which}:\n{out}");
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }

        if minor(release) >= kind.describe_since {
            let out = kapi.kubectl_ok(release, &["describe", resource, name], None);
            let described: Vec<&str> = out.split_whitespace().collect();
            for word in kind.described.iter().flat_map(|w| w.split_whitespace()) {
                assert!(
                    described.contains(&word),
                    "kubectl {which} describe {resource}: no {word:?} in\n{out}"
                );
            }
        }

        let out = kapi.kubectl_ok(release, &["delete", resource, name], None);
        assert_eq!(
            out.trim(),
            format!("{resource} \"{name}\" deleted"),
            "kubectl {which}"
        );
        let gone = kapi.kubectl_version(release, &["get", resource, name], None);
        assert!(!gone.status.success(), "kubectl {which}: {name} is gone");
    }
}

/// Every kind of `kinds` through the kubectl on PATH and each release, on one server.
fn every_release(kinds: &[Kind]) {
    let kapi = Kapi::start(Backend::Embedded);
    round_trip(&kapi, None, kinds);
    for release in RELEASES {
        round_trip(&kapi, Some(release), kinds);
    }
}

#[test]
fn classes() {
    every_release(kubectl_kinds::classes::KINDS);
}

#[test]
fn storage() {
    every_release(kubectl_kinds::storage::KINDS);
}

#[test]
fn networking() {
    every_release(kubectl_kinds::networking::KINDS);
}

#[test]
fn flowcontrol() {
    every_release(kubectl_kinds::flowcontrol::KINDS);
}

#[test]
fn admission() {
    every_release(kubectl_kinds::admission::KINDS);
}
