//! The official Python `kubernetes` client against a running kapi, on both backends.
//! The scripts live in `tests/python/`; each takes the kubeconfig path, asserts as it
//! goes (exiting non-zero on the first failure) and prints a JSON summary that the test
//! checks here. The client is used from the machine's Python when it imports; otherwise
//! it is installed with pip into `target/python-deps` (pip's cache in
//! `target/pip-cache`, so reruns are fast). A failed install fails the test: it never
//! skips.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use kapi_tests::{Kapi, on_every_backend, wait_output_bounded};
use serde_json::{Value, json};

/// How long one script may run.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long installing the client may take.
const PIP_TIMEOUT: Duration = Duration::from_secs(600);

/// The workspace's target directory (`target/<profile>/deps/<test>` → `target`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    exe.ancestors()
        .nth(3)
        .expect("test binaries live in target/<profile>/deps")
        .to_path_buf()
}

fn python(pythonpath: &str) -> Command {
    let mut cmd = Command::new("python3");
    cmd.env("PYTHONPATH", pythonpath)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn imports_kubernetes(pythonpath: &str) -> bool {
    let child = python(pythonpath)
        .args(["-c", "import kubernetes"])
        .spawn()
        .expect("python3 must be installed");
    wait_output_bounded(
        child,
        Duration::from_secs(60),
        "python3 -c 'import kubernetes'",
    )
    .status
    .success()
}

/// The PYTHONPATH under which `import kubernetes` works, installing the client once
/// per test process if needed. Panics (failing the test) when it cannot be installed.
fn kubernetes_pythonpath() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let deps = target_dir().join("python-deps");
        let pythonpath = match std::env::var("PYTHONPATH") {
            Ok(p) if !p.is_empty() => format!("{}:{p}", deps.display()),
            _ => deps.display().to_string(),
        };
        if imports_kubernetes(&pythonpath) {
            return pythonpath;
        }
        let child = python(&pythonpath)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
            .arg(&deps)
            .arg("kubernetes")
            .env("PIP_CACHE_DIR", target_dir().join("pip-cache"))
            .spawn()
            .expect("running pip");
        let out = wait_output_bounded(child, PIP_TIMEOUT, "pip install kubernetes");
        assert!(
            out.status.success(),
            "the Python kubernetes client is not importable and `python3 -m pip install --target {} kubernetes` failed ({}):\nstdout:\n{}\nstderr:\n{}",
            deps.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            imports_kubernetes(&pythonpath),
            "pip installed kubernetes into {} but it does not import",
            deps.display()
        );
        pythonpath
    })
}

/// Runs `tests/python/<script>` with the server's kubeconfig; asserts it exits 0 and
/// returns the JSON object on its last line of output.
fn run_script(kapi: &Kapi, script: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("python")
        .join(script);
    let child = python(kubernetes_pythonpath())
        .arg(&path)
        .arg(kapi.kubeconfig())
        .spawn()
        .expect("running python3");
    let out = wait_output_bounded(child, SCRIPT_TIMEOUT, script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("{script} printed no JSON summary ({e}):\n{stdout}\n{stderr}"))
}

#[test]
fn python_client_custom_objects_core_and_watch() {
    // Install (or find) the client before starting servers, so a failure is about pip.
    kubernetes_pythonpath();
    on_every_backend(|kapi| {
        let summary = run_script(kapi, "widgets.py");
        let field = |k: &str| summary[k].clone();
        assert_eq!(field("label_selector"), json!(["py1", "py2"]), "{summary}");
        assert_eq!(field("field_selector"), json!(["py1"]), "{summary}");
        assert_eq!(field("all_namespaces"), json!(["py1", "py2"]), "{summary}");
        assert_eq!(field("after_delete"), json!(["other", "py1"]), "{summary}");
        assert_eq!(
            field("namespaces"),
            json!(["default", "kube-node-lease", "kube-public", "kube-system"]),
            "{summary}"
        );
        // What the client sends for dict bodies: a merge patch for custom objects (and
        // their status), a strategic merge patch for built-in kinds; JSON patch when
        // asked for. The script checked the server applied each with its semantics.
        assert_eq!(
            field("merge_patch_content_type"),
            "application/merge-patch+json",
            "{summary}"
        );
        assert_eq!(
            field("status_patch_content_type"),
            "application/merge-patch+json",
            "{summary}"
        );
        assert_eq!(
            field("json_patch_content_type"),
            "application/json-patch+json",
            "{summary}"
        );
        assert_eq!(
            field("core_patch_content_type"),
            "application/strategic-merge-patch+json",
            "{summary}"
        );
        assert_eq!(
            field("watch"),
            json!([
                "ADDED pre 1",
                "ADDED live 1",
                "MODIFIED live 4",
                "DELETED live 4"
            ]),
            "{summary}"
        );
        assert_eq!(
            field("resumed_watch"),
            json!(["MODIFIED pre", "DELETED pre"]),
            "{summary}"
        );
        // Server-side apply: the dropped field went, bob's change conflicted with
        // alice's field until forced, and then bob alone owned it.
        assert_eq!(
            field("ssa_conflict"),
            "Apply failed with 1 conflict: conflict with \"py-alice\": .data.a",
            "{summary}"
        );
        assert_eq!(field("ssa_managers"), json!(["py-bob/Apply"]), "{summary}");
        assert_eq!(field("ssa_data"), json!({"a": "2"}), "{summary}");
    });
}

#[test]
fn python_client_creates_an_api_service_from_yaml() {
    kubernetes_pythonpath();
    let kapi = Kapi::start(kapi_tests::Backend::Embedded);
    let summary = run_script(&kapi, "apiservices.py");
    assert_eq!(
        summary["created"],
        json!(["APIService", "ConfigMap"]),
        "{summary}"
    );
    assert_eq!(summary["service"], "default/py-backend:8443", "{summary}");
    assert_eq!(summary["priorities"], json!([2000, 20]), "{summary}");
    assert_eq!(
        summary["second"],
        json!([
            [
                409,
                "AlreadyExists",
                "apiservices.apiregistration.k8s.io \"v1beta1.py.example.com\" already exists"
            ],
            [
                409,
                "AlreadyExists",
                "configmaps \"py-beside\" already exists"
            ]
        ]),
        "{summary}"
    );
}
