//! `kapi-bench run`: starts `kapi serve` (and etcd with `--backend etcd` or the `etcd`
//! feature), measures every cell of the matrix and prints the Markdown table. See the
//! crate documentation of `kapi_bench`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use kapi_bench::run::{Backend, Config};
use kapi_bench::{report, run, server};

/// kapi's load generator.
#[derive(Parser)]
#[command(name = "kapi-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the matrix and prints the result table.
    Run(RunArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// A few seconds with tiny sizes (2 clients, 300 ms per cell, lists of 5): shows
    /// that everything runs; its figures mean nothing. Other options override it.
    #[arg(long)]
    smoke: bool,
    /// Client counts, comma-separated [default: 1,16,64].
    #[arg(long, value_delimiter = ',')]
    clients: Option<Vec<usize>>,
    /// Measured time per cell, e.g. `10s` or `500ms` [default: 10s].
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Unrecorded warm-up per cell [default: 1s].
    #[arg(long, value_parser = parse_duration)]
    warmup: Option<Duration>,
    /// Objects preloaded for the list operations [default: 1000].
    #[arg(long)]
    list_size: Option<usize>,
    /// Watcher counts of the watch fan-out (comma-separated), one writer each.
    #[arg(long, value_delimiter = ',')]
    watchers: Option<Vec<usize>>,
    /// Writes per second of the watch fan-out's writer.
    #[arg(long)]
    watch_rate: Option<u32>,
    /// The storage kapi runs on.
    #[arg(long, value_enum, default_value_t = Backend::Embedded)]
    backend: Backend,
    /// The kapi binary [default: `kapi` beside this executable, or $KAPI_BIN].
    #[arg(long)]
    kapi: Option<PathBuf>,
}

fn main() -> ExitCode {
    let Command::Run(args) = Cli::parse().command;
    let kapi = match args.kapi {
        Some(path) => path,
        None => match server::sibling_kapi_binary() {
            Ok(path) => path,
            Err(e) => {
                eprintln!("kapi-bench: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let mut config = if args.smoke {
        Config::smoke(kapi, args.backend)
    } else {
        Config::full(kapi, args.backend)
    };
    if let Some(clients) = args.clients {
        config.clients = clients;
    }
    if let Some(duration) = args.duration {
        config.load.duration = duration;
    }
    if let Some(warmup) = args.warmup {
        config.load.warmup = warmup;
    }
    if let Some(watchers) = args.watchers {
        config.watchers = watchers;
    }
    if let Some(rate) = args.watch_rate {
        config.watch_rate = rate;
    }
    if let Some(size) = args.list_size {
        config.list_size = size;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kapi-bench: a tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run::run(&config)) {
        Ok(rows) => {
            println!(
                "kapi-bench run: backend {}, clients {:?}, {:?} per cell after {:?} of warm-up, lists of {}",
                config.backend,
                config.clients,
                config.load.duration,
                config.load.warmup,
                config.list_size
            );
            println!();
            print!("{}", report::markdown(&rows));
            if rows.iter().any(|r| r.summary.errors > 0) {
                eprintln!("kapi-bench: some operations failed (see the errors column)");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kapi-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `10s`, `500ms`, `2m`, or plain seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or((text, "s"), |i| text.split_at(i));
    let value: f64 = number
        .parse()
        .map_err(|_| format!("not a duration: {text:?} (e.g. 10s, 500ms)"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(format!("unknown unit in {text:?}: use ms, s or m")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("3h").is_err());
    }
}
