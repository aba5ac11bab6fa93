//! kube's `apiserver_flowcontrol_*` series, rendered from a [`Controller`]'s counters at
//! each scrape (OpenMetrics text, as the rest of `/metrics`): requests dispatched,
//! rejected by reason, executing and waiting, by FlowSchema and priority level, and
//! each level's seats.
//!
//! The wait-duration histogram is not kept yet.

use std::fmt::Write;

use super::Controller;

/// One series: name, type, help.
struct Series {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
}

const DISPATCHED: Series = Series {
    name: "apiserver_flowcontrol_dispatched_requests",
    kind: "counter",
    help: "Number of requests executed by API Priority and Fairness subsystem",
};
const REJECTED: Series = Series {
    name: "apiserver_flowcontrol_rejected_requests",
    kind: "counter",
    help: "Number of requests rejected by API Priority and Fairness subsystem",
};
const EXECUTING: Series = Series {
    name: "apiserver_flowcontrol_current_executing_requests",
    kind: "gauge",
    help: "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
};
const INQUEUE: Series = Series {
    name: "apiserver_flowcontrol_current_inqueue_requests",
    kind: "gauge",
    help: "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
};
const NOMINAL: Series = Series {
    name: "apiserver_flowcontrol_nominal_limit_seats",
    kind: "gauge",
    help: "Nominal number of execution seats configured for each priority level",
};
const CURRENT: Series = Series {
    name: "apiserver_flowcontrol_current_limit_seats",
    kind: "gauge",
    help: "current derived number of execution seats available to each priority level",
};

fn header(out: &mut String, s: &Series) {
    let _ = writeln!(out, "# HELP {} {}.", s.name, s.help);
    let _ = writeln!(out, "# TYPE {} {}", s.name, s.kind);
}

/// Label values escaped as the text format wants them.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The series of `controller`, to append to `/metrics` before its `# EOF`.
pub fn render(controller: &Controller) -> String {
    let stats = controller.stats();
    let limits = controller.limits();
    let mut out = String::new();
    let each = |out: &mut String, series: &Series, value: &dyn Fn(&super::SchemaStats) -> u64| {
        header(out, series);
        let suffix = if series.kind == "counter" {
            "_total"
        } else {
            ""
        };
        for level in &stats {
            for (schema, s) in &level.by_schema {
                let _ = writeln!(
                    out,
                    "{}{suffix}{{flow_schema=\"{}\",priority_level=\"{}\"}} {}",
                    series.name,
                    escape(schema),
                    escape(&level.name),
                    value(s)
                );
            }
        }
    };
    each(&mut out, &DISPATCHED, &|s| s.dispatched);
    each(&mut out, &EXECUTING, &|s| s.executing);
    each(&mut out, &INQUEUE, &|s| s.waiting);
    header(&mut out, &REJECTED);
    for level in &stats {
        for (schema, s) in &level.by_schema {
            let r = &s.rejected;
            for (reason, n) in [
                ("queue-full", r.queue_full),
                ("concurrency-limit", r.concurrency_limit),
                ("time-out", r.time_out),
                ("cancelled", r.cancelled),
            ] {
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "{}_total{{flow_schema=\"{}\",priority_level=\"{}\",reason=\"{reason}\"}} {n}",
                        REJECTED.name,
                        escape(schema),
                        escape(&level.name)
                    );
                }
            }
        }
    }
    for series in [&NOMINAL, &CURRENT] {
        header(&mut out, series);
        for (level, l) in limits.iter() {
            // No borrowing: a level's current limit is its nominal one.
            let _ = writeln!(
                out,
                "{}{{priority_level=\"{}\"}} {}",
                series.name,
                escape(level),
                l.nominal
            );
        }
    }
    out
}
