//! The report's charts (SVG, drawn with plotters): throughput and p99 of each of
//! kapi's operations over HTTP/1.1 on each backend, beside the limit it is compared
//! with (raw etcd for writes and consistent reads, the bare hyper server for what the
//! watch cache serves), on log scales. Each operation is shown at 16 clients, or at
//! the most clients it was measured with below that (large lists run at fewer).

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::client::Transport;
use crate::report::{Limit, Results, Row};
use crate::run::Backend;
use crate::targets::kapi_http::Operation;

/// The client count charts prefer.
const CHART_CLIENTS: usize = 16;

/// Image size in pixels.
const SIZE: (u32, u32) = (1100, 560);

/// One group of bars: an operation and its figures per series.
struct Group {
    label: String,
    values: Vec<Option<f64>>,
}

/// What a chart plots.
#[derive(Clone, Copy)]
enum Figure {
    Throughput,
    P99,
}

impl Figure {
    fn value(self, row: &Row) -> f64 {
        match self {
            Figure::Throughput => row.summary.ops_per_sec,
            Figure::P99 => row.summary.p99.as_secs_f64() * 1000.0,
        }
    }
}

/// Writes `throughput.svg` and `p99.svg` into `dir` (created if needed); their
/// paths. Nothing is written when no kapi operation was measured.
pub fn write(results: &Results, dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for (file, figure, title, unit) in [
        (
            "throughput.svg",
            Figure::Throughput,
            "Throughput over HTTP/1.1 (ops/s, log scale)",
            "ops/s",
        ),
        (
            "p99.svg",
            Figure::P99,
            "p99 latency over HTTP/1.1 (ms, log scale)",
            "ms",
        ),
    ] {
        let groups = groups(results, figure);
        if groups.is_empty() {
            continue;
        }
        let path = dir.join(file);
        draw(&path, title, unit, &groups).map_err(|e| format!("drawing {file}: {e}"))?;
        written.push(path);
    }
    Ok(written)
}

/// The series, in legend order.
const SERIES: [&str; 3] = [
    "kapi (embedded)",
    "kapi (etcd)",
    "limit (raw etcd, or bare hyper for rv=0 reads)",
];

fn colour(series: usize) -> RGBColor {
    [
        RGBColor(0x1f, 0x77, 0xb4),
        RGBColor(0xff, 0x7f, 0x0e),
        RGBColor(0x7f, 0x7f, 0x7f),
    ][series]
}

/// The limit an operation is charted beside.
fn chart_limit(operation: Operation, transport: Transport) -> Option<Limit> {
    match operation {
        Operation::Create => Some(Limit::EtcdTxnCreate),
        Operation::Update => Some(Limit::EtcdTxnUpdate),
        Operation::GetConsistent => Some(Limit::EtcdRangeKey),
        Operation::GetCached => Some(Limit::BaselineGet(transport)),
        Operation::List(n) => Some(Limit::BaselineList(transport, n)),
        Operation::Patch | Operation::Delete => None,
    }
}

fn short_name(operation: Operation) -> String {
    match operation {
        Operation::Create => "create".to_string(),
        Operation::GetConsistent => "get".to_string(),
        Operation::GetCached => "get rv=0".to_string(),
        Operation::Update => "update".to_string(),
        Operation::Patch => "patch".to_string(),
        Operation::Delete => "delete".to_string(),
        Operation::List(n) => format!("list {n}"),
    }
}

fn groups(results: &Results, figure: Figure) -> Vec<Group> {
    let transport = Transport::Http1;
    let mut operations: Vec<Operation> = Vec::new();
    for row in &results.rows {
        if let Some(operation) = row.cell.kapi {
            if !operations.contains(&operation) {
                operations.push(operation);
            }
        }
    }
    operations
        .into_iter()
        .filter_map(|operation| {
            let measured: Vec<usize> = results
                .rows
                .iter()
                .filter(|r| {
                    r.cell.kapi == Some(operation) && r.cell.transport == transport.to_string()
                })
                .map(|r| r.cell.clients)
                .collect();
            let clients = measured
                .iter()
                .copied()
                .filter(|&c| c <= CHART_CLIENTS)
                .max()
                .or_else(|| measured.iter().copied().min())?;
            let kapi = |backend| {
                results
                    .kapi(backend, operation, transport, clients)
                    .filter(|r| r.summary.ops > 0)
                    .map(|r| figure.value(r))
            };
            let limit = chart_limit(operation, transport)
                .and_then(|l| results.limit(l, clients))
                .filter(|r| r.summary.ops > 0)
                .map(|r| figure.value(r));
            Some(Group {
                label: format!("{} c={clients}", short_name(operation)),
                values: vec![kapi(Backend::Embedded), kapi(Backend::Etcd), limit],
            })
        })
        .collect()
}

fn draw(
    path: &Path,
    title: &str,
    unit: &str,
    groups: &[Group],
) -> Result<(), Box<dyn std::error::Error>> {
    let values = groups
        .iter()
        .flat_map(|g| g.values.iter().flatten().copied());
    let (low, high) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (low, high) = if low <= high {
        (low.max(1e-3), high.max(low.max(1e-3)))
    } else {
        (1.0, 10.0)
    };
    // Whole decades around the values, so that every bar has a visible base.
    let y_min = 10f64.powf(low.log10().floor() - 0.3);
    let y_max = 10f64.powf(high.log10().ceil());
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        // Group i is centred on x = i, where the axis puts its labels.
        .build_cartesian_2d(
            -0.5f64..groups.len() as f64 - 0.5,
            (y_min..y_max).log_scale(),
        )?;
    let labels: Vec<String> = groups.iter().map(|g| g.label.clone()).collect();
    let formatter = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len())
        .x_label_formatter(&formatter)
        .y_label_formatter(&|v: &f64| format!("{v}"))
        .y_desc(unit)
        .label_style(("sans-serif", 13))
        .draw()?;
    let width = 0.8 / SERIES.len() as f64;
    for (series, name) in SERIES.iter().enumerate() {
        let colour = colour(series);
        let bars = groups.iter().enumerate().filter_map(|(i, group)| {
            let value = group.values[series]?;
            let x0 = i as f64 - 0.4 + series as f64 * width;
            Some(Rectangle::new(
                [(x0, y_min), (x0 + width * 0.9, value)],
                colour.filled(),
            ))
        });
        chart
            .draw_series(bars)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
