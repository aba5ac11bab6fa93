//! The harness in smoke mode (tiny sizes, a few hundred milliseconds per cell) against
//! the real `kapi` binary on the embedded store, the bare hyper server and, with the
//! `etcd` feature, raw etcd: every cell must complete requests without errors. Figures
//! are never asserted.

use kapi_bench::report::{System, markdown, ratio};
use kapi_bench::run::{Backend, Config, run};

#[test]
fn every_operation_completes_without_errors() {
    let config = Config::smoke(kapi_tests::kapi_binary(), Backend::Embedded);
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
    // Six operations over each transport.
    assert_eq!(systems(System::Kapi(Backend::Embedded)), 12);
    // Five raw operations with the feature, none without.
    let etcd = if cfg!(feature = "etcd") { 5 } else { 0 };
    assert_eq!(systems(System::Etcd), etcd);
    // kapi's GET is compared with the bare server's, create and update with etcd's
    // transactions when they were measured.
    let compared = rows.iter().filter(|r| ratio(r, &rows).is_some()).count();
    assert_eq!(compared, if cfg!(feature = "etcd") { 6 } else { 2 });
}
