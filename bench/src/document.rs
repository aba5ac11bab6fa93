//! The generated section of `BENCHMARKS.md`: what `kapi-bench all` writes between
//! [`BEGIN`] and [`END`] — the machine, the command, how the run was taken, the
//! targets table, the charts, the limits, kapi's tables per backend, the watch
//! fan-outs, and memory and restart. Only that part of the file is replaced, so the
//! hand-written sections around it stay; a file without the markers gets the section
//! appended.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::goals;
use crate::machine::Machine;
use crate::report::{self, Results, System};
use crate::run::{Backend, Config};

/// The line that opens the generated section.
pub const BEGIN: &str = "<!-- kapi-bench:begin -->";

/// The line that closes the generated section.
pub const END: &str = "<!-- kapi-bench:end -->";

/// What the section is made of.
pub struct Run<'a> {
    /// Where it ran.
    pub machine: &'a Machine,
    /// The command line, as typed.
    pub command: &'a str,
    /// What was asked for.
    pub config: &'a Config,
    /// What was measured.
    pub results: &'a Results,
    /// How long the whole run took.
    pub elapsed: Duration,
    /// The charts, as paths relative to the document.
    pub charts: Vec<String>,
}

/// The generated section, markers included.
pub fn section(run: &Run<'_>) -> String {
    let Run {
        machine,
        command,
        config,
        results,
        elapsed,
        charts,
    } = run;
    let mut out = String::new();
    let _ = writeln!(out, "{BEGIN}");
    out.push_str("## The whole matrix: `kapi-bench all` (generated)\n\n");
    out.push_str(
        "Written by `kapi-bench all` (`scripts/bench-harness.sh`); everything between the \
         `kapi-bench` markers is replaced by the next run.\n\n",
    );
    let _ = writeln!(out, "- Machine: {machine}.");
    let _ = writeln!(out, "- Command: `{command}`.");
    let minutes = elapsed.as_secs() / 60;
    let seconds = elapsed.as_secs() % 60;
    let _ = writeln!(
        out,
        "- The whole run took {minutes} min {seconds} s (the issue asks for under 10 minutes: {}).",
        if *elapsed < Duration::from_secs(600) {
            "met"
        } else {
            "**not met**"
        }
    );
    let _ = writeln!(out, "- {}", method(config));
    out.push('\n');

    out.push_str("### Targets\n\n");
    out.push_str(&goals::markdown(&goals::goals(results, &config.clients)));
    out.push('\n');

    if !charts.is_empty() {
        out.push_str("### Charts\n\n");
        for chart in charts {
            let _ = writeln!(out, "![{chart}]({chart})\n");
        }
    }

    out.push_str("### The limits\n\n");
    for (system, title) in [
        (
            System::Baseline,
            "Bare hyper 1.x answering fixed bodies (a process of its own, `kapi-bench baseline-server`)",
        ),
        (
            System::Etcd,
            "etcd through etcd-client (one gRPC connection)",
        ),
        (
            System::Store,
            "The embedded store's own API (`kapi_storage::EmbeddedStorage`, no HTTP)",
        ),
    ] {
        let rows = results.rows_of(system);
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{title}:\n");
        out.push_str(&report::markdown(&rows, &results.rows));
        out.push('\n');
    }
    for backend in [Backend::Embedded, Backend::Etcd] {
        let rows = results.rows_of(System::Kapi(backend));
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "### kapi on {backend}\n");
        out.push_str(&report::markdown(&rows, &results.rows));
        out.push('\n');
    }
    if !results.serialization.is_empty() {
        out.push_str("Serialisation reference (in the harness, `serde_json::to_vec` of the parsed list):\n\n");
        for (backend, s) in &results.serialization {
            let _ = writeln!(
                out,
                "- kapi on {backend}: list of {} ({} bytes), median {} of {} runs",
                s.objects,
                s.bytes,
                crate::stats::Millis(s.median),
                s.runs
            );
        }
        out.push('\n');
    }
    if !results.fan_outs.is_empty() {
        out.push_str("### Watch fan-out\n\n");
        out.push_str(
            "W watchers of one resource and one open-loop writer (each write starts on \
             schedule, acknowledged or not). Latency: from a write's acknowledgement to a \
             watcher reading its event. `writes/s acked` is the rate the writer was \
             actually acknowledged at; events/s counts events read over the time they \
             took to arrive. kapi's watchers each have an HTTP/1.1 connection; etcd's a \
             gRPC stream on one connection.\n\n",
        );
        out.push_str(&report::fan_out_markdown(&results.fan_outs));
        out.push('\n');
    }
    if !results.wire.is_empty() || !results.wire_fan_outs.is_empty() {
        out.push_str(&wire_section(config, results));
    }
    if !results.memory.is_empty() {
        out.push_str("### Memory and restart\n\n");
        out.push_str(
            "A fresh kapi per backend: RSS idle after start, then with half the objects \
             loaded and with all of them (~1 KiB widgets, concurrent creates over HTTP/2), \
             each time once the watch cache holds them; per object over the whole load = \
             (loaded − idle) / objects (the goal's figure, fixed costs included), over the \
             second half = (loaded − half loaded) / (objects / 2); peak is `VmHWM`. On the \
             embedded store the growth also holds redb's own page cache (8 MiB when full); \
             on etcd, kapi holds only its watch cache (the etcd kapi uses a key prefix of \
             its own, so nothing else the run wrote is cached). Restart (embedded): \
             SIGTERM, then a new kapi on the same data directory, timed from its \
             start; kapi's `/readyz` does not wait for its watch cache, whose reads go to \
             the store until it has listed, so \"ready\" is serving, not serving from a \
             warm cache.\n\n",
        );
        out.push_str(&report::memory_markdown(&results.memory));
        out.push('\n');
    }
    if !results.matrix_memory.is_empty() {
        let peaks = results
            .matrix_memory
            .iter()
            .map(|(backend, m)| format!("{} on {backend}", report::mib(m.peak)))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "Peak RSS (`VmHWM`) of the kapi that served the matrix, every cell and fan-out \
             included: {peaks}.\n"
        );
    }
    let _ = writeln!(out, "{END}");
    out
}

/// The wire formats' comparison: how it was taken and its two tables.
fn wire_section(config: &Config, results: &Results) -> String {
    let Some(plan) = config.wire.as_ref() else {
        return String::new();
    };
    let mut out = String::new();
    out.push_str("### JSON and protobuf (issue #18)\n\n");
    let (backend, rounds) = (plan.backend, plan.rounds);
    let (warmup, duration) = (plan.load.warmup, plan.load.duration);
    let _ = writeln!(
        out,
        "ConfigMaps of about 1 KiB (a built-in kind: custom resources have no protobuf) on \
         a kapi of their own on the {backend} store, over HTTP/2 as kubectl and client-go \
         speak it, driven as the rest of the matrix is; each cell runs {rounds} rounds per \
         format of {duration:?} after {warmup:?} of warm-up (lists of 10,000 longer), \
         alternating JSON and protobuf (ABBA…), each format's rounds merged. kapi's CPU \
         per request is its user and system time (`/proc/<pid>/stat`) over the measured \
         time divided by the requests completed in it. \
         Protobuf clients send \
         bodies written by k8s-pb's prost messages in the `k8s\\0` envelope and accept \
         `application/vnd.kubernetes.protobuf,application/json`, as kubectl and \
         client-go's typed clients do; every answer is checked to be in the format \
         asked for. Creates write in the same format they read. The fan-outs' watchers \
         each have an HTTP/1.1 connection; protobuf watchers read \
         `;stream=watch` frames.\n"
    );
    out.push_str(&report::wire_markdown(&results.wire, &results.wire_sizes));
    out.push('\n');
    if !results.wire_fan_outs.is_empty() {
        out.push_str(&report::wire_fan_out_markdown(&results.wire_fan_outs));
        out.push('\n');
    }
    out
}

/// How the run was taken, in one paragraph.
fn method(config: &Config) -> String {
    let lists = config
        .lists
        .iter()
        .map(|l| format!("{} (clients {:?})", l.objects, l.clients))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "Each cell: C clients for {:?} after {:?} of warm-up, every call bounded by {:?}; \
         clients {:?}; HTTP/1.1 is one keep-alive connection per client, HTTP/2 one \
         connection shared by all. Lists with `resourceVersion=0` of {lists}; the bare \
         server answers copies of kapi's own list bodies. Watch fan-outs: {:?} watchers, \
         {} writes/s for {:?}. Memory: {} objects. One run, not a median: client and \
         server share the machine's cores, so ratios within the run are the figures that \
         count.",
        config.load.duration,
        config.load.warmup,
        config.load.timeout,
        config.clients,
        config.watchers,
        config.watch_rate,
        config.watch_duration,
        config
            .memory_objects
            .map_or_else(|| "not measured".to_string(), |n| n.to_string()),
    )
}

/// `document` with its generated section replaced by `section` (appended when it has
/// none).
pub fn splice(document: &str, section: &str) -> Result<String, String> {
    match (document.find(BEGIN), document.find(END)) {
        (Some(begin), Some(end)) if begin < end => {
            let after = end + END.len();
            let rest = document[after..]
                .strip_prefix('\n')
                .unwrap_or(&document[after..]);
            Ok(format!("{}{section}{rest}", &document[..begin]))
        }
        (None, None) => {
            let separator = if document.is_empty() || document.ends_with("\n\n") {
                ""
            } else if document.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            Ok(format!("{document}{separator}{section}"))
        }
        _ => Err(format!(
            "the document has an unmatched {BEGIN} / {END} marker"
        )),
    }
}

/// Writes `section` into the file at `path` (created when missing).
pub fn write(path: &Path, section: &str) -> Result<(), String> {
    let document = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("reading {}: {e}", path.display())),
    };
    let spliced = splice(&document, section)?;
    std::fs::write(path, spliced).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_generated_section_is_replaced() {
        let old = format!("# Benchmarks\n\nhand\n\n{BEGIN}\nold\n{END}\n\n## After\n");
        let new = format!("{BEGIN}\nnew\n{END}\n");
        let spliced = splice(&old, &new).expect("markers");
        assert_eq!(
            spliced,
            format!("# Benchmarks\n\nhand\n\n{BEGIN}\nnew\n{END}\n\n## After\n")
        );
        assert_eq!(splice(&spliced, &new).expect("markers"), spliced);
    }

    #[test]
    fn a_document_without_markers_gets_the_section_appended() {
        let new = format!("{BEGIN}\nnew\n{END}\n");
        assert_eq!(
            splice("# B\n", &new).expect("no markers"),
            format!("# B\n\n{new}")
        );
        assert!(splice(&format!("{END}\n{BEGIN}\n"), &new).is_err());
    }
}
