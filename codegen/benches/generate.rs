//! How long generating every testdata CRD takes: load + check, and load + check + emit +
//! format. Run with `cargo bench -p kapi-codegen --bench generate`; `scripts/bench-codegen.sh`
//! also times compiling the result and records both in BENCHMARKS.md.

use std::path::PathBuf;
use std::time::{Duration, Instant};

fn testdata_crds() -> PathBuf {
    let base = std::env::var_os("KAPI_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata"));
    let crds = base.join("crds");
    assert!(
        crds.is_dir(),
        "testdata CRDs not found at {} (set KAPI_TESTDATA)",
        crds.display()
    );
    crds
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let crds = testdata_crds();
    let runs: usize = std::env::var("KAPI_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    // Their conversion webhooks are their operators'.
    let builder = kapi_codegen::Builder::new()
        .schemas_dir(&crds)
        .external_conversion("*");
    let mut check = Vec::new();
    let mut generate = Vec::new();
    let mut bytes = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let checked = builder.check().expect("testdata CRDs are valid");
        check.push(t.elapsed());
        assert_eq!(checked.resource_count(), 14);
        let t = Instant::now();
        bytes = builder.generate_string().expect("generate").len();
        generate.push(t.elapsed());
    }
    println!("runs: {runs}");
    println!(
        "check (load + parse + validate, 14 CRDs): median {:.1} ms",
        median(check).as_secs_f64() * 1e3
    );
    println!(
        "generate (check + emit + format, 14 CRDs): median {:.1} ms",
        median(generate).as_secs_f64() * 1e3
    );
    println!("generated code: {:.2} MB", bytes as f64 / 1e6);
}
