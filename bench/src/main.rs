//! `kapi-bench`: `run` measures the matrix and prints its tables; `all` measures the
//! whole matrix (both backends, the limits, memory and restart) and writes the
//! generated section of `BENCHMARKS.md` and its charts. See the crate documentation of
//! `kapi_bench`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use kapi_bench::client::Transport;
use kapi_bench::machine::Machine;
use kapi_bench::report::{self, Results};
use kapi_bench::run::{Backend, Config, ListPlan};
use kapi_bench::targets::kapi_http::Operation;
use kapi_bench::{chart, document, fds, run, server};

/// kapi's load generator.
#[derive(Parser)]
#[command(name = "kapi-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the matrix (by default on the embedded store, without the memory
    /// measurement) and prints the result tables.
    Run(RunArgs),
    /// Runs the whole matrix on every backend, with the limits, memory and restart,
    /// and writes the generated section of BENCHMARKS.md and its SVG charts.
    All(AllArgs),
    /// Only the wire formats' comparison: ConfigMaps in JSON and in protobuf, side by
    /// side; prints its tables.
    Wire(RunArgs),
    /// The soak run: kapi over etcd at a share of its capacity for a fixed time,
    /// reporting throughput, p99 latency and memory per interval.
    Soak(SoakArgs),
    /// Instructions per request, JSON beside protobuf: kapi under valgrind's callgrind,
    /// whose counts do not move with the machine's load; prints its table.
    Instructions(InstructionsArgs),
    /// The aggregator's proxy: GET, LIST and watch through one kapi to another beside
    /// the same straight to the second; prints its table.
    Aggregation(AggregationArgs),
    /// Conversion between versions: GET and LIST through the in-process conversion
    /// and through a conversion webhook beside the same in the storage version; prints
    /// its table.
    Conversion(ConversionArgs),
    /// The bare hyper server of the limits, as a process of its own (the bench starts
    /// it): its address on stdout, serving until stdin closes.
    #[command(hide = true)]
    BaselineServer {
        /// `PATH=FILE`: answer GETs of PATH with the file's bytes.
        bodies: Vec<String>,
    },
}

#[derive(clap::Args)]
struct ConversionArgs {
    /// The kapi binary [default: beside kapi-bench].
    #[arg(long)]
    kapi: Option<PathBuf>,
    /// Concurrent clients of the GET cell (LIST runs at most 4).
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// Seconds per cell and round.
    #[arg(long, default_value_t = 3)]
    seconds: u64,
    /// Objects of each resource, all listed.
    #[arg(long, default_value_t = 1000)]
    objects: usize,
    /// Rounds per cell and target (alternating).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

fn conversion(args: ConversionArgs) -> ExitCode {
    let kapi = match args.kapi.map_or_else(server::sibling_kapi_binary, Ok) {
        Ok(kapi) => kapi,
        Err(e) => return fail(&e),
    };
    let config = kapi_bench::conversion::ConversionConfig {
        kapi,
        clients: args.clients,
        duration: Duration::from_secs(args.seconds),
        objects: args.objects,
        rounds: args.rounds,
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("a tokio runtime: {e}")),
    };
    match runtime.block_on(kapi_bench::conversion::run(&config)) {
        Ok(rows) => {
            print!("{}", kapi_bench::conversion::markdown(&rows));
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

#[derive(clap::Args)]
struct AggregationArgs {
    /// The kapi binary [default: beside kapi-bench].
    #[arg(long)]
    kapi: Option<PathBuf>,
    /// Concurrent clients of the GET cell (LIST runs at most 4).
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// Seconds per cell and round.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Flunders listed.
    #[arg(long, default_value_t = 500)]
    objects: usize,
    /// Watchers of the watch cell.
    #[arg(long, default_value_t = 100)]
    watchers: usize,
    /// Rounds per cell and target (alternating).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where the processes run, one pass of the cells each: `shared` (every process on
    /// every CPU), `split` (A on CPUs of its own; B and the load generator on the rest).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "shared,split"
    )]
    placements: Vec<kapi_bench::aggregation::Placement>,
}

fn aggregation(args: AggregationArgs) -> ExitCode {
    let kapi = match args.kapi.map_or_else(server::sibling_kapi_binary, Ok) {
        Ok(kapi) => kapi,
        Err(e) => return fail(&e),
    };
    let config = kapi_bench::aggregation::AggregationConfig {
        kapi,
        clients: args.clients,
        duration: Duration::from_secs(args.seconds),
        objects: args.objects,
        watchers: args.watchers,
        rounds: args.rounds,
        placements: args.placements,
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("a tokio runtime: {e}")),
    };
    match runtime.block_on(kapi_bench::aggregation::run(&config)) {
        Ok(rows) => {
            print!("{}", kapi_bench::aggregation::markdown(&rows));
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

#[derive(clap::Args)]
struct InstructionsArgs {
    /// The kapi binary [default: beside kapi-bench].
    #[arg(long)]
    kapi: Option<PathBuf>,
    /// Rounds of every cell in each format.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Creates per cell.
    #[arg(long, default_value_t = 300)]
    creates: u64,
    /// GETs per cell.
    #[arg(long, default_value_t = 2000)]
    gets: u64,
    /// LISTs per cell.
    #[arg(long, default_value_t = 30)]
    lists: u64,
    /// ConfigMaps in the listed namespace.
    #[arg(long, default_value_t = 1000)]
    list_objects: usize,
    /// How the requests travel.
    #[arg(long, value_enum, default_value_t = Transport::Http2)]
    transport: Transport,
}

fn instructions(args: InstructionsArgs) -> ExitCode {
    let kapi = match args.kapi.map_or_else(server::sibling_kapi_binary, Ok) {
        Ok(kapi) => kapi,
        Err(e) => return fail(&e),
    };
    let config = kapi_bench::instructions::InstructionsConfig {
        rounds: args.rounds.max(1),
        creates: args.creates.max(1),
        gets: args.gets.max(1),
        lists: args.lists.max(1),
        list_objects: args.list_objects.max(1),
        transport: args.transport,
        ..kapi_bench::instructions::InstructionsConfig::new(kapi)
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("a tokio runtime: {e}")),
    };
    match runtime.block_on(kapi_bench::instructions::measure(&config)) {
        Ok(rows) => {
            print!("{}", kapi_bench::instructions::markdown(&rows));
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

#[derive(clap::Args)]
struct SoakArgs {
    /// The kapi binary, built with the `etcd` feature [default: beside kapi-bench].
    #[arg(long)]
    kapi: Option<PathBuf>,
    /// Minutes of paced load.
    #[arg(long, default_value_t = 10.0)]
    minutes: f64,
    /// Seconds of the capacity measurement before it.
    #[arg(long, default_value_t = 20)]
    capacity_seconds: u64,
    /// Seconds per reported interval.
    #[arg(long, default_value_t = 60)]
    interval_seconds: u64,
    /// Concurrent writers.
    #[arg(long, default_value_t = 16)]
    workers: usize,
    /// Watchers of the namespace.
    #[arg(long, default_value_t = 4)]
    watchers: usize,
    /// The share of the capacity to run at.
    #[arg(long, default_value_t = 0.8)]
    utilisation: f64,
}

fn soak(args: SoakArgs) -> ExitCode {
    let kapi = match args.kapi.map_or_else(server::sibling_kapi_binary, Ok) {
        Ok(kapi) => kapi,
        Err(e) => return fail(&e),
    };
    let config = kapi_bench::soak::SoakConfig {
        kapi,
        duration: std::time::Duration::from_secs_f64(args.minutes * 60.0),
        capacity_time: std::time::Duration::from_secs(args.capacity_seconds),
        workers: args.workers,
        watchers: args.watchers,
        utilisation: args.utilisation,
        interval: std::time::Duration::from_secs(args.interval_seconds.max(1)),
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("a tokio runtime: {e}")),
    };
    match runtime.block_on(kapi_bench::soak::run(&config)) {
        Ok(soaked) => {
            print!("{}", soaked.markdown());
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    matrix: MatrixArgs,
}

#[derive(clap::Args)]
struct AllArgs {
    #[command(flatten)]
    matrix: MatrixArgs,
    /// The Markdown file whose generated section is replaced.
    #[arg(long, default_value = "BENCHMARKS.md")]
    out: PathBuf,
    /// Where the charts go [default: docs/bench beside --out].
    #[arg(long)]
    charts: Option<PathBuf>,
}

/// What both subcommands can change in the matrix.
#[derive(clap::Args)]
struct MatrixArgs {
    /// Tiny sizes, a fraction of a second per cell: shows that every path runs; its
    /// figures mean nothing. Other options override it.
    #[arg(long)]
    smoke: bool,
    /// Backends kapi runs on, comma-separated [run: embedded; all: every backend built].
    #[arg(long, value_enum, value_delimiter = ',')]
    backend: Option<Vec<Backend>>,
    /// Client counts of the single-object operations, comma-separated [default: 1,16,64].
    #[arg(long, value_delimiter = ',')]
    clients: Option<Vec<usize>>,
    /// Measured time per cell, e.g. `2s` or `500ms` [default: 1500ms; the wire formats'
    /// rounds: 500ms].
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Unrecorded warm-up per cell [default: 500ms; the wire formats' rounds: 250ms].
    #[arg(long, value_parser = parse_duration)]
    warmup: Option<Duration>,
    /// A list size and its client counts, `OBJECTS=C,C,…` or `OBJECTS` (the
    /// single-object client counts); repeat for several [default: 100=1,16,64
    /// 1000=1,16 10000=1 (3 s per cell)].
    #[arg(long = "list", value_parser = parse_list_plan)]
    lists: Vec<ListPlan>,
    /// Watcher counts of the watch fan-outs, comma-separated [default: 100,10000].
    #[arg(long, value_delimiter = ',')]
    watchers: Option<Vec<usize>>,
    /// Writes per second of the fan-out's writer [default: 100].
    #[arg(long)]
    watch_rate: Option<u32>,
    /// How long the fan-out's writer writes [default: 2s].
    #[arg(long, value_parser = parse_duration)]
    watch_duration: Option<Duration>,
    /// How long acknowledgements and events may lag behind the fan-out's last write
    /// before they count as errors [default: 10s].
    #[arg(long, value_parser = parse_duration)]
    watch_drain: Option<Duration>,
    /// Objects loaded for the memory measurement, 0 for none [run: 0; all: 100000].
    #[arg(long)]
    memory_objects: Option<usize>,
    /// Concurrent creates that fill kapi (lists, memory) [default: 64].
    #[arg(long)]
    loader_clients: Option<usize>,
    /// How the creates that fill kapi travel [default: http2].
    #[arg(long, value_enum)]
    loader_transport: Option<Transport>,
    /// Leaves raw etcd out.
    #[arg(long)]
    no_etcd_limits: bool,
    /// Leaves the embedded store's own API out.
    #[arg(long)]
    no_store_limits: bool,
    /// The kapi binary [default: `kapi` beside this executable, or $KAPI_BIN].
    #[arg(long)]
    kapi: Option<PathBuf>,
    /// Only these single-object operations, comma-separated (`create`, `get-consistent`,
    /// `get-cached`, `update`, `patch`, `delete`), and only the limits they compare
    /// with; no lists, fan-outs or wire formats unless `--list`/`--watchers` ask.
    #[arg(long, value_delimiter = ',', value_parser = parse_operation)]
    only: Option<Vec<Operation>>,
    /// One more `kapi serve` flag for every kapi of the matrix; repeat for several
    /// (`--kapi-arg=--etcd-ordered-progress=true`).
    #[arg(long = "kapi-arg", allow_hyphen_values = true)]
    kapi_args: Vec<String>,
}

impl MatrixArgs {
    /// The wire formats' comparison alone, with these arguments' sizes.
    fn wire_config(self) -> Result<Config, String> {
        Ok(self.config(false)?.wire_only())
    }

    /// The configuration these arguments ask for; `all` starts from the whole matrix.
    fn config(self, all: bool) -> Result<Config, String> {
        let (lists_given, watchers_given) = (!self.lists.is_empty(), self.watchers.is_some());
        let kapi = match self.kapi {
            Some(path) => path,
            None => server::sibling_kapi_binary()?,
        };
        let mut config = if self.smoke {
            Config::smoke(kapi)
        } else {
            Config::full(kapi)
        };
        if !all {
            config.backends = vec![Backend::Embedded];
            config.memory_objects = None;
        }
        if let Some(backends) = self.backend {
            config.backends = backends;
        }
        if let Some(clients) = self.clients {
            config.clients = clients;
        }
        if let Some(duration) = self.duration {
            config.load.duration = duration;
            if let Some(wire) = &mut config.wire {
                wire.load.duration = duration;
            }
        }
        if let Some(warmup) = self.warmup {
            config.load.warmup = warmup;
            if let Some(wire) = &mut config.wire {
                wire.load.warmup = warmup;
            }
        }
        if !self.lists.is_empty() {
            config.lists = self
                .lists
                .into_iter()
                .map(|mut plan| {
                    if plan.clients.is_empty() {
                        plan.clients = config.clients.clone();
                    }
                    plan
                })
                .collect();
        }
        if let Some(watchers) = self.watchers {
            config.watchers = watchers;
        }
        if let Some(rate) = self.watch_rate {
            config.watch_rate = rate;
        }
        if let Some(duration) = self.watch_duration {
            config.watch_duration = duration;
        }
        if let Some(drain) = self.watch_drain {
            config.watch_drain = drain;
        }
        if let Some(objects) = self.memory_objects {
            config.memory_objects = (objects > 0).then_some(objects);
        }
        if let Some(clients) = self.loader_clients {
            config.loader.clients = clients;
        }
        if let Some(transport) = self.loader_transport {
            config.loader.transport = transport;
        }
        if self.no_etcd_limits {
            config.etcd_limits = false;
        }
        if self.no_store_limits {
            config.store_limits = false;
        }
        config.kapi_args = self.kapi_args;
        if let Some(only) = self.only {
            if !lists_given {
                config.lists.clear();
            }
            if !watchers_given {
                config.watchers.clear();
            }
            config.wire = None;
            config.only = Some(only);
        }
        Ok(config)
    }
}

fn main() -> ExitCode {
    let started = Instant::now();
    let command = std::env::args()
        .map(|arg| shell_word(&arg))
        .collect::<Vec<_>>()
        .join(" ");
    let (config, all) = match Cli::parse().command {
        Command::Run(args) => (args.matrix.config(false), None),
        Command::Wire(args) => (args.matrix.wire_config(), None),
        Command::All(args) => (args.matrix.config(true), Some((args.out, args.charts))),
        Command::Soak(args) => return soak(args),
        Command::Instructions(args) => return instructions(args),
        Command::Aggregation(args) => return aggregation(args),
        Command::Conversion(args) => return conversion(args),
        Command::BaselineServer { bodies } => {
            return match kapi_bench::targets::baseline::serve_process(&bodies) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e),
            };
        }
    };
    let config = match config {
        Ok(config) => config,
        Err(e) => return fail(&e),
    };
    match fds::raise_open_file_limit() {
        Ok(limit) => eprintln!(
            "kapi-bench: open-file limit {}",
            limit.map_or_else(|| "unlimited".to_string(), |l| l.to_string())
        ),
        Err(e) => eprintln!("kapi-bench: {e} (large watch fan-outs may fail)"),
    }
    let machine = Machine::describe();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("a tokio runtime: {e}")),
    };
    let results = match runtime.block_on(run::run(&config)) {
        Ok(results) => results,
        Err(e) => return fail(&e),
    };
    // Open connections and watchers end with the runtime, before the report.
    drop(runtime);
    let elapsed = started.elapsed();
    match all {
        None => {
            print_tables(&config, &results);
            eprintln!("kapi-bench run: took {:.0} s", elapsed.as_secs_f64());
            if results.has_errors() {
                return fail("some operations failed (see the errors columns)");
            }
            ExitCode::SUCCESS
        }
        Some((out, charts)) => {
            match write_report(&out, charts, &machine, &command, &config, &results, elapsed) {
                Ok(()) => {}
                Err(e) => return fail(&e),
            }
            if results.has_errors() {
                eprintln!("kapi-bench: some operations failed (see the errors columns)");
            }
            eprintln!(
                "kapi-bench all: wrote {}; took {} min {} s",
                out.display(),
                elapsed.as_secs() / 60,
                elapsed.as_secs() % 60
            );
            ExitCode::SUCCESS
        }
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("kapi-bench: {message}");
    ExitCode::FAILURE
}

fn print_tables(config: &Config, results: &Results) {
    println!(
        "kapi-bench run: backends {:?}, clients {:?}, {:?} per cell after {:?} of warm-up",
        config.backends, config.clients, config.load.duration, config.load.warmup,
    );
    println!();
    print!("{}", report::markdown(&results.rows, &results.rows));
    if !results.fan_outs.is_empty() {
        println!();
        print!("{}", report::fan_out_markdown(&results.fan_outs));
    }
    if !results.memory.is_empty() {
        println!();
        print!("{}", report::memory_markdown(&results.memory));
    }
    if !results.wire.is_empty() {
        println!();
        print!(
            "{}",
            report::wire_markdown(&results.wire, &results.wire_sizes)
        );
        println!();
        print!("{}", report::wire_fan_out_markdown(&results.wire_fan_outs));
    }
}

fn write_report(
    out: &Path,
    charts: Option<PathBuf>,
    machine: &Machine,
    command: &str,
    config: &Config,
    results: &Results,
    elapsed: Duration,
) -> Result<(), String> {
    let base = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let charts_dir = charts.unwrap_or_else(|| base.join("docs").join("bench"));
    let charts = chart::write(results, &charts_dir)?
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(base).unwrap_or(&path);
            relative.to_string_lossy().into_owned()
        })
        .collect();
    let section = document::section(&document::Run {
        machine,
        command,
        config,
        results,
        elapsed,
        charts,
    });
    document::write(out, &section)
}

/// `arg` as a shell word: quoted when it holds anything but plain characters.
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
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

/// One of `--only`'s operation names.
fn parse_operation(text: &str) -> Result<Operation, String> {
    Ok(match text.trim() {
        "create" => Operation::Create,
        "get-consistent" => Operation::GetConsistent,
        "get-cached" => Operation::GetCached,
        "update" => Operation::Update,
        "patch" => Operation::Patch,
        "delete" => Operation::Delete,
        other => {
            return Err(format!(
                "not an operation: {other:?} (create, get-consistent, get-cached, update, patch, delete)"
            ));
        }
    })
}

/// `OBJECTS=C,C,…` or `OBJECTS` (no client counts: the caller fills them in).
fn parse_list_plan(text: &str) -> Result<ListPlan, String> {
    let (objects, clients) = text.split_once('=').unwrap_or((text, ""));
    let objects = objects
        .trim()
        .parse()
        .map_err(|_| format!("not a list size: {text:?} (e.g. 1000=1,16)"))?;
    let clients = clients
        .split(',')
        .filter(|c| !c.trim().is_empty())
        .map(|c| {
            c.trim()
                .parse()
                .map_err(|_| format!("not a client count in {text:?}"))
        })
        .collect::<Result<_, _>>()?;
    Ok(ListPlan {
        objects,
        clients,
        duration: None,
    })
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

    #[test]
    fn list_plans_parse() {
        assert_eq!(
            parse_list_plan("1000=1,16"),
            Ok(ListPlan {
                objects: 1000,
                clients: vec![1, 16],
                duration: None,
            })
        );
        assert_eq!(
            parse_list_plan("100"),
            Ok(ListPlan {
                objects: 100,
                clients: vec![],
                duration: None,
            })
        );
        assert!(parse_list_plan("x=1").is_err());
    }

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(shell_word("--out=BENCHMARKS.md"), "--out=BENCHMARKS.md");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
