//! Reporting for kapi's benchmark binaries (`storage/benches`, `server/benches`):
//! medians over runs, quantiles, and the Markdown table BENCHMARKS.md records.

/// One line of the result table: the median of a figure over the runs.
pub struct Row {
    backend: &'static str,
    what: String,
    unit: &'static str,
    median: f64,
    min: f64,
    max: f64,
}

/// Every row of one benchmark binary.
#[derive(Default)]
pub struct Report {
    rows: Vec<Row>,
}

impl Report {
    /// Adds one row per figure; `samples[run][figure]`.
    pub fn add(
        &mut self,
        backend: &'static str,
        figures: &[(&str, &'static str)],
        samples: &[Vec<f64>],
    ) {
        for (i, (what, unit)) in figures.iter().enumerate() {
            let mut values: Vec<f64> = samples.iter().map(|s| s[i]).collect();
            values.sort_by(f64::total_cmp);
            let row = Row {
                backend,
                what: (*what).to_string(),
                unit,
                median: median(&values),
                min: values[0],
                max: values[values.len() - 1],
            };
            eprintln!(
                "  {:<9} {:<52} {:>10} {}",
                row.backend,
                row.what,
                format_figure(row.median),
                row.unit
            );
            self.rows.push(row);
        }
    }

    /// Prints the Markdown table of every row.
    pub fn print(&self, runs: usize) {
        println!();
        println!("| backend | benchmark | median of {runs} | unit | min–max |");
        println!("|---|---|---:|---|---|");
        for r in &self.rows {
            println!(
                "| {} | {} | {} | {} | {}–{} |",
                r.backend,
                r.what,
                format_figure(r.median),
                r.unit,
                format_figure(r.min),
                format_figure(r.max)
            );
        }
    }
}

/// A figure with three significant digits at most.
pub fn format_figure(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Median of sorted values.
pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The value at quantile `q` of sorted values (nearest rank).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((sorted.len() as f64) * q).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Measured runs per figure: `$KAPI_BENCH_RUNS`, else 5.
pub fn runs_from_env() -> usize {
    std::env::var("KAPI_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
}
