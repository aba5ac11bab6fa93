//! # kapi-bench
//!
//! kapi's load generator (issue #6): it drives a running `kapi serve` over HTTP/1.1
//! keep-alive and HTTP/2 with C concurrent clients for a fixed duration, and measures,
//! in the same run, the limits kapi is compared with — a bare hyper server answering a
//! fixed 1 KiB JSON body, and (feature `etcd`) raw etcd transactions and ranges — so
//! that the ratios, not absolute times on a shared machine, are the figures that count.
//!
//! One module per concept:
//!
//! - [`stats`]: latencies (HDR histogram) and errors of one operation, mergeable;
//! - [`driver`]: C workers on tokio, warm-up, fixed duration, a timeout on every call;
//! - [`client`]: the hyper 1.x client both HTTP targets use;
//! - [`targets`]: what is driven — [`targets::kapi_http`], [`targets::baseline`] and
//!   (feature `etcd`) `targets::etcd`;
//! - [`server`]: the `kapi serve` process under test;
//! - [`run`]: the matrix of cells a run measures;
//! - [`report`]: the Markdown table, with ratios to the limits.
//!
//! ```no_run
//! # async fn example() -> Result<(), String> {
//! use kapi_bench::run::{Backend, Config};
//! let kapi = kapi_bench::server::sibling_kapi_binary()?;
//! let rows = kapi_bench::run::run(&Config::smoke(kapi, Backend::Embedded)).await?;
//! print!("{}", kapi_bench::report::markdown(&rows));
//! # Ok(())
//! # }
//! ```
//!
//! Everything stays on loopback addresses, and everything is bounded in time: each
//! call has a timeout, each cell a duration, each start a deadline.

pub mod client;
pub mod driver;
pub mod report;
pub mod run;
pub mod server;
pub mod stats;
pub mod targets;
