//! The harness in smoke mode (tiny sizes, a few hundred milliseconds per cell) against
//! the real `kapi` binary on every backend this build has, the bare hyper server, the
//! embedded store's own API and, with the `etcd` feature, raw etcd: every cell and
//! fan-out must complete without errors, memory and restart must be measured, and
//! the report (targets, tables, charts) must be written between its markers. Figures
//! are never asserted.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use kapi_bench::document::{self, BEGIN, END};
use kapi_bench::machine::Machine;
use kapi_bench::report::{System, ratio};
use kapi_bench::run::{Backend, Config, run};
use kapi_bench::{chart, fds, goals};

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
            .args(["build", "-p", "kapi", "--bin", "kapi", "--profile", profile])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if cfg!(feature = "etcd") {
            command.args(["--features", "kapi/etcd"]);
        }
        let status = command.status().expect("running cargo to build kapi");
        assert!(status.success(), "building the kapi binary failed");
    }
    kapi_tests::kapi_binary()
}

#[test]
fn every_path_runs_and_the_report_is_written() {
    fds::raise_open_file_limit().expect("the open-file limit");
    let config = Config {
        // The bare hyper server runs as `kapi-bench baseline-server`, not as this test.
        bench: env!("CARGO_BIN_EXE_kapi-bench").into(),
        ..Config::smoke(kapi_binary())
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let results = runtime.block_on(run(&config)).expect("the smoke run");
    drop(runtime);
    let table = kapi_bench::report::markdown(&results.rows, &results.rows);
    for row in &results.rows {
        assert!(
            row.summary.ops > 0 && row.summary.errors == 0,
            "{}\n{table}",
            row.progress_line()
        );
    }
    let backends = Backend::available();
    let etcd = cfg!(feature = "etcd");
    let count = |system: System| {
        results
            .rows
            .iter()
            .filter(|r| r.cell.system == system)
            .count()
    };
    // Per transport: the 1 KiB GET at each client count (one), the lists' bodies at
    // their client counts (5 at 2 clients, 20 at 1).
    assert_eq!(count(System::Baseline), 2 * 3);
    for &backend in &backends {
        // Six single-object operations and two list sizes, over each transport.
        assert_eq!(count(System::Kapi(backend)), 2 * (6 + 2), "{backend}");
    }
    // Create, get, CAS update and two list sizes.
    assert_eq!(count(System::Store), 5);
    // Put, txn create, txn CAS, range key and two range sizes with the feature.
    assert_eq!(count(System::Etcd), if etcd { 6 } else { 0 });
    // Every kapi row but patch and delete is compared with a limit measured in the run.
    let compared = results
        .rows
        .iter()
        .filter(|r| ratio(r, &results.rows).is_some())
        .count();
    assert_eq!(compared, backends.len() * 2 * (4 + 2));

    // One fan-out per backend, and raw etcd's: every event read.
    assert_eq!(results.fan_outs.len(), backends.len() + usize::from(etcd));
    for fan_out in &results.fan_outs {
        let m = &fan_out.measured;
        assert!(
            m.recorder.errors() == 0 && m.missed == 0 && m.acked == m.spec.writes(),
            "{}",
            fan_out.progress_line()
        );
        assert_eq!(m.delivered, (m.spec.watchers * m.spec.writes()) as u64);
        assert!(m.acked_rate > 0.0);
    }

    // The wire formats: create, get and the one list size over HTTP/2, in JSON and in
    // protobuf, every cell without errors; one fan-out in each format.
    assert_eq!(results.wire.len(), 2 * 3);
    for row in &results.wire {
        assert!(
            row.summary.ops > 0 && row.summary.errors == 0,
            "{}",
            row.progress_line()
        );
    }
    assert_eq!(kapi_bench::report::wire_pairs(&results.wire).len(), 3);
    assert_eq!(results.wire_fan_outs.len(), 2);
    for fan_out in &results.wire_fan_outs {
        let m = &fan_out.row.measured;
        assert!(
            m.recorder.errors() == 0 && m.missed == 0,
            "{}: {}",
            fan_out.encoding,
            fan_out.row.progress_line()
        );
        assert_eq!(m.delivered, (m.spec.watchers * m.spec.writes()) as u64);
    }
    let sizes = &results.wire_sizes;
    assert_eq!(sizes.len(), 2);
    assert!(
        sizes[1].2 < sizes[0].2,
        "a protobuf list is smaller: {sizes:?}"
    );

    // Memory on every backend, the restart on the embedded store.
    assert_eq!(results.memory.len(), backends.len());
    for row in &results.memory {
        assert!(
            row.idle.rss > 0 && row.loaded.peak >= row.loaded.rss && row.object_json > 500,
            "{}",
            row.progress_line()
        );
        assert_eq!(row.restart.is_some(), row.backend == Backend::Embedded);
    }
    assert_eq!(results.serialization.len(), backends.len());
    assert_eq!(results.matrix_memory.len(), backends.len());

    // The report: every target has a row, the charts are drawn, and only the section
    // between the markers is replaced.
    let goals = goals::goals(&results, &config.clients);
    assert!(
        goals
            .iter()
            .any(|g| g.verdict != goals::Verdict::NotMeasured)
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let charts = chart::write(&results, &dir.path().join("docs/bench")).expect("the charts");
    assert_eq!(charts.len(), 2);
    for chart in &charts {
        let svg = std::fs::read_to_string(chart).expect("an SVG");
        assert!(
            svg.starts_with("<svg") && svg.contains("kapi (embedded)"),
            "{svg}"
        );
    }
    let out = dir.path().join("BENCHMARKS.md");
    std::fs::write(
        &out,
        format!("# Benchmarks\n\nBy hand.\n\n{BEGIN}\nold\n{END}\n\n## Later\n"),
    )
    .expect("a document");
    let machine = Machine::describe();
    let section = document::section(&document::Run {
        machine: &machine,
        command: "kapi-bench all --smoke",
        config: &config,
        results: &results,
        elapsed: Duration::from_secs(30),
        charts: vec!["docs/bench/throughput.svg".to_string()],
    });
    document::write(&out, &section).expect("the report");
    let written = std::fs::read_to_string(&out).expect("the report");
    assert!(written.starts_with("# Benchmarks\n\nBy hand.\n\n"));
    assert!(written.ends_with(&format!("{END}\n\n## Later\n")));
    assert!(!written.contains("\nold\n"));
    for heading in [
        "### Targets",
        "### The limits",
        "### kapi on embedded",
        "### Watch fan-out",
        "### JSON and protobuf",
        "### Memory and restart",
    ] {
        assert!(written.contains(heading), "{heading} missing:\n{written}");
    }
}

#[test]
fn the_conversion_benchmark_runs_every_cell_without_errors() {
    let config = kapi_bench::conversion::ConversionConfig {
        kapi: kapi_binary(),
        clients: 2,
        duration: Duration::from_millis(200),
        objects: 5,
        rounds: 1,
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let rows = runtime
        .block_on(kapi_bench::conversion::run(&config))
        .expect("the conversion run");
    let table = kapi_bench::conversion::markdown(&rows);
    // GET and LIST, consistent and from the cache, on both resources.
    assert_eq!(rows.len(), 8, "{table}");
    for row in &rows {
        assert!(
            row.none.per_second > 0.0
                && row.converted.per_second > 0.0
                && row.none.errors + row.converted.errors == 0,
            "{table}"
        );
    }
}
