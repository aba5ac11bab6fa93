//! # kapi-bench
//!
//! kapi's load generator (issue #6): it drives a running `kapi serve` over HTTP/1.1
//! keep-alive and HTTP/2 with C concurrent clients for a fixed duration, and measures,
//! in the same run, the limits kapi is compared with — a bare hyper server answering
//! fixed bodies (a 1 KiB object, and copies of kapi's own list responses), the
//! embedded store's own API without HTTP, and (feature `etcd`) raw etcd transactions,
//! ranges and watches — so that the ratios, not absolute times on a shared machine,
//! are the figures that count. `kapi-bench all` runs the whole matrix on both backends
//! with memory and restart, and writes the generated section of `BENCHMARKS.md`.
//!
//! One module per concept:
//!
//! - [`stats`]: latencies (HDR histogram) and errors of one operation, mergeable;
//! - [`driver`]: C workers on tokio, warm-up, fixed duration, a timeout on every call;
//! - [`fanout`]: the watch fan-out measurement, an open-loop writer and W watchers;
//! - [`client`]: the hyper 1.x client every HTTP target uses;
//! - [`targets`]: what is driven — [`targets::kapi_http`] and [`targets::watch`],
//!   [`targets::baseline`], [`targets::embedded`] and (feature `etcd`) `targets::etcd`
//!   and `targets::etcd_watch`;
//! - [`server`]: the `kapi serve` process under test (start, stop, restart, memory);
//! - [`fds`]: the open-file limit large fan-outs need;
//! - [`reference`]: the serialisation reference lists are compared with;
//! - [`memory`]: kapi's memory per cached object and its restart time;
//! - [`run`]: the matrix of cells a run measures;
//! - [`soak`]: the soak run, a paced mixed load on etcd reported per interval;
//! - [`aggregation`]: GET, LIST and watch through the aggregator's proxy beside the
//!   same straight to the aggregated server (`kapi-bench aggregation`);
//! - [`conversion`]: GET and LIST through an in-process conversion and through a
//!   conversion webhook beside the same with none (`kapi-bench conversion`);
//! - [`https`]: `kapi serve` over HTTPS and the admin's HTTP/2 client these two share;
//! - [`instructions`]: instructions per request, JSON beside protobuf, counted by
//!   callgrind (`kapi-bench instructions`);
//! - [`report`]: the results and their Markdown tables, with ratios to the limits;
//! - [`goals`]: the issue's targets, each met or not;
//! - [`chart`]: the SVG charts;
//! - [`machine`], [`document`]: the machine's description and the generated section
//!   of `BENCHMARKS.md`.
//!
//! ```no_run
//! # async fn example() -> Result<(), String> {
//! use kapi_bench::run::Config;
//! let kapi = kapi_bench::server::sibling_kapi_binary()?;
//! // The bare hyper server is `kapi-bench baseline-server`, a process of its own:
//! // `bench` names kapi-bench when this is not it.
//! let bench = kapi.with_file_name("kapi-bench");
//! let results = kapi_bench::run::run(&Config { bench, ..Config::smoke(kapi) }).await?;
//! print!("{}", kapi_bench::report::markdown(&results.rows, &results.rows));
//! # Ok(())
//! # }
//! ```
//!
//! Everything stays on loopback addresses, and everything is bounded in time: each
//! call has a timeout, each cell a duration, each start a deadline, each fan-out a
//! drain period.
//!
//! It must not link the server it measures: kapi runs as its own process, driven over
//! HTTP as any client drives it (the embedded store is driven in-process only as a
//! limit to compare with).

pub mod aggregation;
pub mod chart;
pub mod client;
pub mod conversion;
pub mod document;
pub mod driver;
pub mod fanout;
pub mod fds;
pub mod goals;
pub mod https;
pub mod instructions;
pub mod machine;
pub mod memory;
pub mod placement;
pub mod reference;
pub mod report;
pub mod run;
pub mod server;
pub mod soak;
pub mod stats;
pub mod targets;
