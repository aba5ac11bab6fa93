//! The harness in smoke mode (tiny sizes, a few hundred milliseconds per cell) against
//! the real `kapi` binary on the embedded store, the bare hyper server and, with the
//! `etcd` feature, raw etcd: every cell must complete requests without errors. Figures
//! are never asserted.

use std::path::Path;
use std::process::Command;

use kapi_bench::report::{System, markdown, ratio};
use kapi_bench::run::{Backend, Config, run};

/// The `kapi` binary beside this test binary (as `kapi_tests::kapi_binary` finds it).
/// `cargo test --workspace` builds it; `cargo test -p kapi-bench` does not (cargo builds
/// no binaries of dependencies), so when it is missing it is built here, into the same
/// target folder and profile.
fn kapi_binary() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    // target/<profile>/deps/<test> → target/<profile>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binaries live in target/<profile>/deps");
    if std::env::var_os("KAPI_BIN").is_none() && !profile_dir.join("kapi").exists() {
        let target_dir = profile_dir.parent().expect("target/<profile>");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "dev",
            Some(other) => other,
            None => panic!("no profile folder in {}", profile_dir.display()),
        };
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(cargo);
        command
            .args([
                "build",
                "-p",
                "kapi-server",
                "--bin",
                "kapi",
                "--profile",
                profile,
            ])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if cfg!(feature = "etcd") {
            command.args(["--features", "kapi-server/etcd"]);
        }
        let status = command.status().expect("running cargo to build kapi");
        assert!(status.success(), "building the kapi binary failed");
    }
    kapi_tests::kapi_binary()
}

#[test]
fn every_operation_completes_without_errors() {
    let config = Config::smoke(kapi_binary(), Backend::Embedded);
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let rows = runtime.block_on(run(&config)).expect("the smoke run");
    let table = markdown(&rows);
    for row in &rows {
        assert!(
            row.summary.ops > 0 && row.summary.errors == 0,
            "{}\n{table}",
            row.progress_line()
        );
    }
    let systems = |system: System| rows.iter().filter(|r| r.cell.system == system).count();
    // GET over each transport, at each client count.
    assert_eq!(systems(System::Baseline), 2);
    // Six operations over each transport, and one watch fan-out.
    assert_eq!(systems(System::Kapi(Backend::Embedded)), 13);
    // Five raw operations with the feature, none without.
    let etcd = if cfg!(feature = "etcd") { 5 } else { 0 };
    assert_eq!(systems(System::Etcd), etcd);
    // kapi's GET is compared with the bare server's, create and update with etcd's
    // transactions when they were measured.
    let compared = rows.iter().filter(|r| ratio(r, &rows).is_some()).count();
    assert_eq!(compared, if cfg!(feature = "etcd") { 6 } else { 2 });
}
