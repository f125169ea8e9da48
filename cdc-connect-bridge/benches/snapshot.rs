//! `cargo x bench snapshot`: rows per second of an initial snapshot (`cdc.snapshot.mode=
//! initial`, a first start) of a million simulated rows into a Kafka-protocol broker, beside a
//! bare rdkafka producer sending the same records in the same run, and the ratio of the two
//! (issue 27: at least 85 % of the bare producer). `docs/benchmarks.md` has the method and the
//! numbers.
//!
//! ```text
//!  database   SimDatabase with the standard schema; its five tables but APP.DOCS (a LOB)   s, MiB
//!             filled with --rows committed rows in all (SimDatabase::load_rows: direct
//!             path, no redo), no workload. Built once, outside every clock, with its key
//!             indexes built by the first read (as an Oracle table's primary key index is
//!             there before a snapshot), and cloned for each connector run
//!  records    CaptureEngine on that database ─► RecordBuilder, no Kafka: the snapshot's     rows/s
//!             Kafka records as the delivery thread builds them, kept for the bare producer;
//!             the simulator's reads (which stand for Oracle's) and the builder timed apart
//!  connector  run_task_with_source (the worker's task) on a clone of the database, EOS or   rows/s
//!             ALO: from the task's start until the snapshot's last row was published and
//!             every record sent was acknowledged (ALO) or committed (EOS); the rate from its
//!             first record sent beside it; its peak RSS above the database's
//!  bare       ThreadedProducer with the connector producer's settings sending the kept      rows/s
//!             records (each table's to a fresh topic; the same keys, values and headers;
//!             under EOS transactional, a Kafka transaction and an offset record a chunk, as
//!             the connector): from its start (topics, producer) to the last delivery report
//!             or commit; from its first send beside it
//! ```
//!
//! Each run of the connector and of the bare producer reads the CPU time of every thread of
//! this process (schedstat), of the broker (`--broker-pid`) and of the machine, so the report
//! says which part was busy. Every connector run has its own name, topic prefix and offsets
//! topic; after it the offsets its table topics used are checked against the rows (not
//! timed), and each run's topics are deleted so that every run finds the broker equally empty.
//!
//! Run: `cargo x bench snapshot` (starts a Tansu unless `CDC_TEST_BOOTSTRAP` or
//! `CDC_TEST_BROKER` names a broker), or `cargo bench -p cdc-connect-bridge --features
//! malloc-override --bench snapshot -- --bootstrap HOST:PORT` with `--rows N --runs N
//! --seed N --modes eos,alo --broker LABEL --broker-pid PID --set KEY=VALUE` (a connector
//! setting, e.g. `cdc.snapshot.threads=2`) `--threads` (each run's CPU by thread name),
//! `--trace` (the connector's counters every 100 ms), or
//! `--records-only` (no broker needed).
// the bare producer and the checks are clients of their own: the reference must not share the
// connector's client builder. `expect` only on the read log's lock, which no code poisons.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_methods,
    clippy::expect_used
)]

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cdc_connect_bridge::kafka::{KafkaClients, TopicSpec};
use cdc_connect_bridge::record::settings::RecordSettings;
use cdc_connect_bridge::worker::{TaskOptions, TaskSignals, TaskStats, run_task_with_source};
use cdc_connect_bridge::{Header, KafkaRecord, RecordBuilder, RecordContext};
use cdc_core::config::{CdcConfig, Config};
use cdc_core::{OpsKind, Scn, TableId, TableLayout};
use cdc_logminer::engine::{
    CaptureEngine, EngineRecord, EngineSettings, RecordKind, RecordSink, SinkClosed, SystemClock,
};
use cdc_logminer::sim::{SimConfig, SimDatabase, SimSource};
use cdc_logminer::source::configured::SIM_LOADED_TABLES;
use cdc_logminer::source::{
    ActiveTransaction, CapturedObject, DatabaseIdentity, DictionaryBuild, LogFile,
    LogInventoryQuery, MineSummary, MiningQuery, MiningWindow, NlsSettings, RedoSource, RowSink,
    SessionRef, SnapshotBound, SnapshotQuery, SnapshotReadSummary, SnapshotReader, SnapshotSink,
    SourceError, TableEstimate, TableFilter,
};
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{DeliveryResult, Header as KafkaHeader, OwnedHeaders};
use rdkafka::producer::{BaseRecord, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientConfig, ClientContext, Offset, TopicPartitionList};

/// The allocator of the `oracle-cdc` binary, so the bench measures what ships.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Error = Box<dyn std::error::Error>;

/// The tables the database fills: those `cdc.sim.table.rows` fills, the standard schema's but
/// its LOB table APP.DOCS.
const TABLES: [(&str, &str); 5] = SIM_LOADED_TABLES;

/// How long one capture, connector run or bare run may take before the bench gives up.
const RUN_TIMEOUT: Duration = Duration::from_secs(900);
/// How long the task's CPU is sampled once it is idle (`--threads`).
const IDLE_SAMPLE: Duration = Duration::from_secs(3);
/// How often `--trace` shows the connector's counters.
const TRACE_EVERY: Duration = Duration::from_millis(100);
/// How often the task's stats are read while it runs.
const POLL_EVERY: Duration = Duration::from_millis(1);
/// The share of the bare producer's rate the connector should reach (issue 27).
const TARGET: f64 = 0.85;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    ExactlyOnce,
    AtLeastOnce,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::ExactlyOnce => "EOS",
            Mode::AtLeastOnce => "ALO",
        }
    }
}

#[derive(Debug, Clone)]
struct Options {
    bootstrap: String,
    broker: String,
    /// The broker's process, for its CPU use (`cargo x bench snapshot` passes the Tansu it
    /// started).
    broker_pid: Option<u32>,
    seed: u64,
    rows: u64,
    runs: usize,
    modes: Vec<Mode>,
    /// Only the database and the records, without Kafka.
    records_only: bool,
    /// Each run's CPU by thread name, too.
    threads: bool,
    /// The connector's counters every 100 ms of each run.
    trace: bool,
    /// Connector settings over the bench's own (`--set KEY=VALUE`), for experiments.
    set: Vec<(String, String)>,
}

fn options() -> Result<Options, Error> {
    let mut bootstrap = std::env::var("CDC_TEST_BOOTSTRAP")
        .or_else(|_| std::env::var("CDC_TEST_BROKER"))
        .ok()
        .filter(|b| !b.is_empty());
    let mut o = Options {
        bootstrap: String::new(),
        broker: "a Kafka-protocol broker".to_owned(),
        broker_pid: None,
        seed: 27,
        rows: 1_000_000,
        runs: 3,
        modes: vec![Mode::ExactlyOnce, Mode::AtLeastOnce],
        records_only: false,
        threads: false,
        trace: false,
        set: Vec::new(),
    };
    let mut args = std::env::args().skip(1).filter(|arg| arg != "--bench");
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--bootstrap" => bootstrap = Some(value()?),
            "--broker" => o.broker = value()?,
            "--broker-pid" => o.broker_pid = Some(value()?.parse()?),
            "--seed" => o.seed = value()?.parse()?,
            "--rows" => o.rows = value()?.parse::<u64>()?.max(TABLES.len() as u64),
            "--runs" => o.runs = value()?.parse::<usize>()?.max(1),
            "--modes" => {
                o.modes = value()?
                    .split(',')
                    .map(|m| match m.trim().to_ascii_lowercase().as_str() {
                        "eos" => Ok(Mode::ExactlyOnce),
                        "alo" => Ok(Mode::AtLeastOnce),
                        other => Err(format!("unknown mode {other:?}; known: eos, alo")),
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--records-only" => o.records_only = true,
            "--threads" => o.threads = true,
            "--trace" => o.trace = true,
            "--set" => {
                let pair = value()?;
                let (key, v) = pair
                    .split_once('=')
                    .ok_or(format!("--set needs KEY=VALUE, not {pair:?}"))?;
                o.set.push((key.to_owned(), v.to_owned()));
            }
            "-h" | "--help" => {
                println!(
                    "usage: cargo bench -p cdc-connect-bridge --features malloc-override --bench \
                     snapshot -- [--bootstrap HOST:PORT] [--broker LABEL] [--broker-pid PID] \
                     [--rows N] [--runs N] [--seed N] [--modes eos,alo] [--records-only] [--threads] [--trace] \
                     [--set KEY=VALUE]..."
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other:?} (see --help)").into()),
        }
    }
    o.bootstrap = match bootstrap {
        Some(bootstrap) => bootstrap,
        // the records are built without Kafka
        None if o.records_only => "127.0.0.1:9".to_owned(),
        None => {
            return Err(
                "no broker: pass --bootstrap HOST:PORT or set CDC_TEST_BOOTSTRAP or \
                        CDC_TEST_BROKER (`cargo x bench snapshot` starts Tansu itself)"
                    .into(),
            );
        }
    };
    Ok(o)
}

fn main() -> ExitCode {
    // `cargo bench` passes --bench; `cargo test --all-targets` runs bench targets without it,
    // and this bench needs a broker, gigabytes and minutes, so there it only says where it runs
    if !std::env::args().any(|arg| arg == "--bench") {
        eprintln!("snapshot: not run as a test; `cargo x bench snapshot` runs it");
        return ExitCode::SUCCESS;
    }
    // as the `oracle-cdc` binary does; the bare producer runs in this process too
    cdc_connect_bridge::memory::prefer_small_pages();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("snapshot bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The connector's configuration for one run; `run` makes its names unique.
fn connector_config(o: &Options, run: &str, mode: Mode) -> Result<CdcConfig, Error> {
    let mut config = Config::from_pairs([
        ("name", format!("snapshot-bench-{run}")),
        // the task is given its source; the key spares the Oracle connection settings
        ("cdc.source", "sim".to_owned()),
        ("bootstrap.servers", o.bootstrap.clone()),
        (
            "offset.storage.topic",
            format!("snapshot-bench-offsets-{run}"),
        ),
        ("cdc.topic.prefix", format!("snapbench{run}")),
        (
            "cdc.tables.include",
            TABLES
                .iter()
                .map(|(owner, table)| format!(r"{owner}\.{table}"))
                .collect::<Vec<_>>()
                .join(","),
        ),
        // APP.EVENTS has no key: its records are keyed by ROWID
        ("cdc.key.missing", "rowid".to_owned()),
        ("cdc.snapshot.mode", "initial".to_owned()),
    ]);
    match mode {
        Mode::ExactlyOnce => {
            config.set("transaction.boundary", "connector");
            config.set("exactly.once.support", "required");
        }
        Mode::AtLeastOnce => config.set("transaction.boundary", "poll"),
    }
    for (key, value) in &o.set {
        config.set(key.as_str(), value.as_str());
    }
    config.validate().map_err(|e| e.to_string().into())
}

fn run() -> Result<(), Error> {
    let o = options()?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "snapshot bench: broker {} at {}; {} cores, load average {} at start",
        o.broker,
        o.bootstrap,
        cores,
        load_average()
    );

    // The database: its build is Oracle's work, not the connector's.
    let rss_before = status_mib("VmRSS:");
    let built = Instant::now();
    let db = database(&o)?;
    let build_s = built.elapsed().as_secs_f64();
    println!(
        "database: {} rows over {} tables (seed {}) loaded in {build_s:.1} s; the process's RSS \
         grew by {:.0} MiB",
        o.rows,
        TABLES.len(),
        o.seed,
        status_mib("VmRSS:") - rss_before,
    );

    // The records, built as the delivery thread builds them, without Kafka: kept by a first
    // pass (whose reads also build the simulator's key indexes), timed by a second.
    let config = connector_config(&o, &format!("{stamp}records"), Mode::AtLeastOnce)?;
    let capture = capture(&config, db, o.rows, true)?;
    let database = capture
        .database
        .as_ref()
        .ok_or("the capture pass kept no database")?;
    println!(
        "records kept for the bare producer in {:.1} s ({} chunks; a first pass, which also \
         built the simulator's key indexes: {:.2} s of reads; copying the records {:.2} s)",
        capture.elapsed.as_secs_f64(),
        capture.chunk_ends.len(),
        capture.read_wall.as_secs_f64(),
        capture.keep_time.as_secs_f64(),
    );
    let timed = capture_pass_timed(&config, database, o.rows)?;
    println!(
        "records (the engine's snapshot → RecordBuilder on one thread, no Kafka): {} rows/s; \
         {} rows in {:.2} s, of which the simulator's reads {:.2} s (wall time, {} reads on up \
         to {} threads: they stand for Oracle's), RecordBuilder {:.2} s ({} records/s on one \
         core), the engine and the rest {:.2} s",
        thousands(timed.rows as f64 / timed.elapsed.as_secs_f64()),
        timed.rows,
        timed.elapsed.as_secs_f64(),
        timed.read_wall.as_secs_f64(),
        timed.reads,
        config.snapshot.threads,
        timed.build_time.as_secs_f64(),
        thousands(timed.rows as f64 / timed.build_time.as_secs_f64().max(1e-9)),
        timed
            .elapsed
            .saturating_sub(timed.read_wall + timed.build_time)
            .as_secs_f64(),
    );
    println!(
        "  {} records on {} topics ({}); key {} + value {} + headers {} B a record on \
         average ({} headers); kept in memory for the bare producer",
        capture.records.len(),
        capture.topics.len(),
        capture
            .topics
            .iter()
            .zip(&capture.per_topic)
            .map(|(t, n)| format!("{} {n}", t.split_once('.').map_or(t.as_str(), |(_, t)| t)))
            .collect::<Vec<_>>()
            .join(", "),
        capture.key_bytes / capture.rows.max(1),
        capture.value_bytes / capture.rows.max(1),
        capture.header_bytes / capture.rows.max(1),
        capture.headers / capture.rows.max(1),
    );
    if o.records_only {
        return Ok(());
    }

    let mut connector_runs: Vec<(Mode, ConnectorRun)> = Vec::new();
    let mut bare_runs: Vec<(Mode, BareRun)> = Vec::new();
    for i in 0..o.runs {
        for &mode in &o.modes {
            let run = format!("{stamp}{}{i}", mode.label().to_ascii_lowercase());
            let cloned = Instant::now();
            let db = database.clone();
            let clone_s = cloned.elapsed().as_secs_f64();
            let c = connector_run(&o, &run, mode, db, o.rows)?;
            println!(
                "  {} run {}: connector {} rows/s from its start ({:.2} s; its first record \
                 sent after {:.2} s, then {} rows/s); last row published by the engine at \
                 {:.2} s; {} Kafka transactions, {} offsets written, peak queue {}; peak RSS \
                 {:.0} MiB over the process's at the start (the databases, the kept records; \
                 database cloned in {clone_s:.1} s); {}\n    \
                 cores: {}",
                mode.label(),
                i + 1,
                thousands(c.rows_per_s()),
                c.elapsed.as_secs_f64(),
                c.first_send.as_secs_f64(),
                thousands(c.rows_per_s_from_first_send()),
                c.published.as_secs_f64(),
                c.kafka_transactions,
                c.offsets_written,
                c.peak_queue,
                c.peak_rss_mib,
                c.checked,
                c.cpu,
            );
            if o.threads {
                println!("    threads: {}", thread_list(&c.cpu));
            }
            if let Some(idle) = &c.idle {
                println!(
                    "    idle for {IDLE_SAMPLE:?} after the snapshot: {idle}\n    threads: {}",
                    thread_list(idle)
                );
            }
            // Tansu keeps every record in memory: gigabytes a run, freed when its topics go
            delete_topics_of(&o, &run);
            let b = bare_run(
                &o,
                &format!("snapbench-bare-{run}"),
                mode,
                &capture,
                &config,
            )?;
            println!(
                "  {} run {}: bare producer {} rows/s from its start ({:.2} s; first send after \
                 {:.3} s, then {} rows/s)\n    cores: {}",
                mode.label(),
                i + 1,
                thousands(b.rows_per_s()),
                b.elapsed.as_secs_f64(),
                b.first_send.as_secs_f64(),
                thousands(b.rows_per_s_from_first_send()),
                b.cpu,
            );
            if o.threads {
                println!("    threads: {}", thread_list(&b.cpu));
            }
            connector_runs.push((mode, c));
            bare_runs.push((mode, b));
            // the next runs find the broker as empty as this one did
            delete_topics_of(&o, &run);
        }
    }

    println!(
        "\nmedians of {} runs; {} rows; broker {} at {}{}; {} cores, load average {} at the end",
        o.runs,
        o.rows,
        o.broker,
        o.bootstrap,
        o.broker_pid
            .and_then(resident_memory)
            .map(|rss| format!(" (resident memory now {rss})"))
            .unwrap_or_default(),
        cores,
        load_average()
    );
    println!(
        "{:<5} {:>16} {:>11} {:>6} {:>7} {:>7}   {:>22} {:>17} {:>6}   {:>9}",
        "mode",
        "connector rows/s",
        "bare rows/s",
        "ratio",
        "target",
        "result",
        "from first send: conn.",
        "bare",
        "ratio",
        "peak RSS"
    );
    for &mode in &o.modes {
        let runs = || connector_runs.iter().filter(move |(m, _)| *m == mode);
        let bares = || bare_runs.iter().filter(move |(m, _)| *m == mode);
        let connector = median(runs().map(|(_, r)| r.rows_per_s()));
        let bare = median(bares().map(|(_, r)| r.rows_per_s()));
        let ratio = connector / bare.max(f64::MIN_POSITIVE);
        let connector_sent = median(runs().map(|(_, r)| r.rows_per_s_from_first_send()));
        let bare_sent = median(bares().map(|(_, r)| r.rows_per_s_from_first_send()));
        println!(
            "{:<5} {:>16} {:>11} {:>5.0}% {:>6.0}% {:>7}   {:>22} {:>17} {:>5.0}%   {:>5.0} MiB",
            mode.label(),
            thousands(connector),
            thousands(bare),
            ratio * 100.0,
            TARGET * 100.0,
            if ratio >= TARGET { "pass" } else { "FAIL" },
            thousands(connector_sent),
            thousands(bare_sent),
            connector_sent / bare_sent.max(f64::MIN_POSITIVE) * 100.0,
            median(runs().map(|(_, r)| r.peak_rss_mib)),
        );
    }
    println!("\nwhere the time goes (cores busy during the runs, medians):");
    for &mode in &o.modes {
        let runs = connector_runs.iter().filter(|(m, _)| *m == mode);
        let bares = bare_runs.iter().filter(|(m, _)| *m == mode);
        let connector = median_cpu(runs.clone().map(|(_, r)| &r.cpu));
        let bare = median_cpu(bares.clone().map(|(_, r)| &r.cpu));
        let micros = |cores: f64, rate: f64| cores / rate.max(f64::MIN_POSITIVE) * 1e6;
        let connector_rate = median(runs.map(|(_, r)| r.rows_per_s()));
        let bare_rate = median(bares.map(|(_, r)| r.rows_per_s()));
        println!("  {} connector: {connector}", mode.label());
        println!("  {} bare:      {bare}", mode.label());
        println!(
            "  {} CPU per row, µs: connector's process {:.1} (broker {}), bare producer's {:.1} \
             (broker {})",
            mode.label(),
            micros(connector.process(), connector_rate),
            connector.broker.map_or_else(
                || "-".to_owned(),
                |b| format!("{:.1}", micros(b, connector_rate))
            ),
            micros(bare.process(), bare_rate),
            bare.broker.map_or_else(
                || "-".to_owned(),
                |b| format!("{:.1}", micros(b, bare_rate))
            ),
        );
        // on a shared machine the runs get different shares of the cores; the CPU both
        // sides spend per row (client process and broker) does not depend on that share
        let per_row = |cpu: &CpuUse, elapsed: Duration, rows: u64| {
            cpu.broker.map(|broker| {
                (cpu.process() + broker) * elapsed.as_secs_f64() / rows.max(1) as f64 * 1e6
            })
        };
        let connector_cpu: Vec<f64> = connector_runs
            .iter()
            .filter(|(m, _)| *m == mode)
            .filter_map(|(_, r)| per_row(&r.cpu, r.elapsed, r.rows))
            .collect();
        let bare_cpu: Vec<f64> = bare_runs
            .iter()
            .filter(|(m, _)| *m == mode)
            .filter_map(|(_, r)| per_row(&r.cpu, r.elapsed, r.rows))
            .collect();
        if !connector_cpu.is_empty() && !bare_cpu.is_empty() {
            let (c, b) = (
                median(connector_cpu.into_iter()),
                median(bare_cpu.into_iter()),
            );
            println!(
                "  {} CPU per row of the client process and the broker together, µs (medians \
                 of the runs): connector {c:.1}, bare {b:.1}; bare / connector {:.0}%: the \
                 ratio if both had had the same share of the cores",
                mode.label(),
                b / c.max(f64::MIN_POSITIVE) * 100.0
            );
        }
    }
    Ok(())
}

// ---- the database -----------------------------------------------------------------------------

/// The standard schema with `--rows` committed rows over [`TABLES`] (the first tables take
/// the remainder), loaded by direct path: no redo, so the first start's stream is idle.
fn database(o: &Options) -> Result<SimDatabase, Error> {
    let mut db = SimDatabase::new(SimConfig {
        seed: o.seed,
        ..SimConfig::default()
    })?;
    let tables = TABLES.len() as u64;
    for (i, (owner, table)) in TABLES.iter().enumerate() {
        let i = i as u64;
        let count = o.rows / tables + u64::from(i < o.rows % tables);
        db.load_rows(&TableId::new(*owner, *table), count, o.seed.wrapping_add(i))
            .map_err(|e| format!("loading {owner}.{table}: {e}"))?;
    }
    Ok(db)
}

// ---- the records, without Kafka ---------------------------------------------------------------

/// One snapshot row's Kafka record, kept for the bare producer.
#[derive(Debug)]
struct Kept {
    /// Index into [`Capture::topics`].
    topic: usize,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<Header>,
}

#[derive(Debug)]
struct Capture {
    /// The database after a pass that kept its records: its key indexes built, cloned for
    /// each run.
    database: Option<SimDatabase>,
    records: Vec<Kept>,
    /// Where each chunk's records end in `records`: under exactly-once the connector ends a
    /// Kafka transaction only between chunks (after their `snapshot-chunk-done` event).
    chunk_ends: Vec<usize>,
    /// The table topics, in the order their first record came, and the records of each.
    topics: Vec<String>,
    per_topic: Vec<u64>,
    rows: u64,
    elapsed: Duration,
    /// Time inside `RecordBuilder::append` for the snapshot rows.
    build_time: Duration,
    /// Time copying the records kept (their first touch of fresh memory).
    keep_time: Duration,
    /// Wall time during which at least one simulated snapshot read ran (chunk reads and the
    /// plans' boundary reads), and the reads.
    read_wall: Duration,
    reads: usize,
    key_bytes: u64,
    value_bytes: u64,
    header_bytes: u64,
    headers: u64,
}

/// Builds the Kafka records of every snapshot row as the delivery thread does and, with
/// `keep`, keeps a copy of them; every other record goes through the builder too (its schema
/// history), unkept. The builder's own buffers are dropped as the delivery thread drops them
/// once sent, so its time is not that of touching fresh memory.
struct CaptureSink {
    builder: RecordBuilder,
    out: Vec<KafkaRecord>,
    keep: bool,
    kept: Vec<Kept>,
    chunk_ends: Vec<usize>,
    topics: Vec<String>,
    per_topic: Vec<u64>,
    build_time: Duration,
    keep_time: Duration,
    rows: u64,
    key_bytes: u64,
    value_bytes: u64,
    header_bytes: u64,
    headers: u64,
    complete: bool,
    failure: Option<String>,
}

impl RecordSink for CaptureSink {
    fn accept(&mut self, record: EngineRecord) -> Result<(), SinkClosed> {
        let is_row = matches!(record.kind, RecordKind::Snapshot(_));
        if let RecordKind::Ops(event) = &record.kind {
            match event.kind {
                OpsKind::SnapshotChunkDone => self.chunk_ends.push(self.kept.len()),
                OpsKind::SnapshotComplete
                    if event.details.get("table").map(String::as_str) == Some("*") =>
                {
                    self.complete = true;
                }
                _ => {}
            }
        }
        self.out.clear();
        let context = RecordContext {
            now_ms: now_ms(),
            split: false,
        };
        let started = Instant::now();
        let built = self.builder.append(&record, context, &mut self.out);
        if is_row {
            self.build_time += started.elapsed();
        }
        if let Err(error) = built {
            self.failure = Some(error.to_string());
            return Err(SinkClosed);
        }
        if !is_row {
            return Ok(());
        }
        self.rows += 1;
        let started = Instant::now();
        for r in &self.out {
            let topic = match self.topics.iter().position(|t| **t == *r.topic) {
                Some(i) => i,
                None => {
                    self.topics.push(r.topic.to_string());
                    self.per_topic.push(0);
                    self.topics.len() - 1
                }
            };
            self.per_topic[topic] += 1;
            self.key_bytes += r.key.as_ref().map_or(0, Vec::len) as u64;
            self.value_bytes += r.value.as_ref().map_or(0, Vec::len) as u64;
            self.header_bytes += r
                .headers
                .iter()
                .map(|h| (h.name.len() + h.value.len()) as u64)
                .sum::<u64>();
            self.headers += r.headers.len() as u64;
            if self.keep {
                self.kept.push(Kept {
                    topic,
                    key: r.key.clone(),
                    value: r.value.clone(),
                    headers: r.headers.clone(),
                });
            }
        }
        self.out.clear();
        if self.keep {
            self.keep_time += started.elapsed();
        }
        Ok(())
    }
}

/// A pass over a clone of `db` that keeps nothing: the rates of the source and the builder
/// on one thread.
fn capture_pass_timed(config: &CdcConfig, db: &SimDatabase, rows: u64) -> Result<Capture, Error> {
    capture(config, db.clone(), rows, false)
}

/// The engine on `db` as the task runs it (first start, the same settings and clock), until
/// the snapshot is complete; the records built and, with `keep`, kept with the database.
fn capture(config: &CdcConfig, db: SimDatabase, rows: u64, keep: bool) -> Result<Capture, Error> {
    let reads = Arc::new(Mutex::new(Vec::new()));
    let source = Timed {
        inner: SimSource::new(db),
        reads: Arc::clone(&reads),
    };
    let started = Instant::now();
    let settings = EngineSettings::from_config(config);
    let idle_wait = settings.idle_wait;
    let mut engine = CaptureEngine::open(source, settings, None, Box::new(SystemClock::default()))?;
    let database = engine.source_mut().identity()?.name;
    let mut sink = CaptureSink {
        builder: RecordBuilder::new(RecordSettings::from_config(config, &database)),
        out: Vec::new(),
        keep,
        kept: Vec::with_capacity(if keep {
            usize::try_from(rows).unwrap_or(0)
        } else {
            0
        }),
        chunk_ends: Vec::new(),
        topics: Vec::new(),
        per_topic: Vec::new(),
        build_time: Duration::ZERO,
        keep_time: Duration::ZERO,
        rows: 0,
        key_bytes: 0,
        value_bytes: 0,
        header_bytes: 0,
        headers: 0,
        complete: false,
        failure: None,
    };
    while !sink.complete {
        let report = match engine.step(&mut sink) {
            Ok(report) => report,
            Err(error) => {
                return Err(sink
                    .failure
                    .take()
                    .unwrap_or_else(|| error.to_string())
                    .into());
            }
        };
        if report.rows == 0 && report.snapshot_rows == 0 && !report.retried {
            std::thread::sleep(idle_wait);
        }
        if started.elapsed() > RUN_TIMEOUT {
            return Err(format!(
                "the engine emitted {} of {rows} snapshot rows in {RUN_TIMEOUT:?}",
                sink.rows
            )
            .into());
        }
    }
    let elapsed = started.elapsed();
    if sink.rows != rows {
        return Err(format!("the snapshot emitted {} rows, not {rows}", sink.rows).into());
    }
    if keep && sink.chunk_ends.last() != Some(&sink.kept.len()) {
        sink.chunk_ends.push(sink.kept.len());
    }
    let intervals = std::mem::take(&mut *reads.lock().expect("the read log's lock"));
    Ok(Capture {
        database: keep.then(|| engine.source().inner.database().clone()),
        records: sink.kept,
        chunk_ends: sink.chunk_ends,
        topics: sink.topics,
        per_topic: sink.per_topic,
        rows: sink.rows,
        elapsed,
        build_time: sink.build_time,
        keep_time: sink.keep_time,
        reads: intervals.len(),
        read_wall: union(intervals),
        key_bytes: sink.key_bytes,
        value_bytes: sink.value_bytes,
        header_bytes: sink.header_bytes,
        headers: sink.headers,
    })
}

/// The total length of the union of some intervals.
fn union(mut intervals: Vec<(Instant, Instant)>) -> Duration {
    intervals.sort();
    let mut total = Duration::ZERO;
    let mut current: Option<(Instant, Instant)> = None;
    for (start, end) in intervals {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + current.map_or(Duration::ZERO, |(s, e)| e - s)
}

/// A source whose snapshot readers log when each of their reads ran.
#[derive(Debug)]
struct Timed<S> {
    inner: S,
    reads: Arc<Mutex<Vec<(Instant, Instant)>>>,
}

/// A snapshot reader that logs when each chunk read ran (on its batch's thread).
#[derive(Debug)]
struct TimedReader {
    inner: Box<dyn SnapshotReader>,
    reads: Arc<Mutex<Vec<(Instant, Instant)>>>,
}

impl SnapshotReader for TimedReader {
    fn estimate(&mut self, table: &TableId) -> Result<TableEstimate, SourceError> {
        self.inner.estimate(table)
    }

    fn boundaries(
        &mut self,
        query: &SnapshotQuery,
        every: u64,
        max: usize,
    ) -> Result<Vec<SnapshotBound>, SourceError> {
        let started = Instant::now();
        let out = self.inner.boundaries(query, every, max);
        self.reads
            .lock()
            .expect("the read log's lock")
            .push((started, Instant::now()));
        out
    }

    fn read(
        &mut self,
        query: &SnapshotQuery,
        sink: &mut SnapshotSink<'_>,
    ) -> Result<SnapshotReadSummary, SourceError> {
        // the engine's sink only collects the rows: the time is the simulator's
        let started = Instant::now();
        let out = self.inner.read(query, sink);
        self.reads
            .lock()
            .expect("the read log's lock")
            .push((started, Instant::now()));
        out
    }
}

impl<S: RedoSource> RedoSource for Timed<S> {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        self.inner.identity()
    }
    fn current_scn(&mut self) -> Result<Scn, SourceError> {
        self.inner.current_scn()
    }
    fn log_inventory(&mut self, query: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        self.inner.log_inventory(query)
    }
    fn resolve_objects(
        &mut self,
        filter: &TableFilter<'_>,
    ) -> Result<Vec<CapturedObject>, SourceError> {
        self.inner.resolve_objects(filter)
    }
    fn table_layouts(&mut self, tables: &[TableId]) -> Result<Vec<TableLayout>, SourceError> {
        self.inner.table_layouts(tables)
    }
    fn last_ddl_after(
        &mut self,
        tables: &[TableId],
        scn: Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        self.inner.last_ddl_after(tables, scn)
    }
    fn start_session(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        self.inner.start_session(window)
    }
    fn end_session(&mut self) -> Result<(), SourceError> {
        self.inner.end_session()
    }
    fn build_dictionary(&mut self) -> Result<DictionaryBuild, SourceError> {
        self.inner.build_dictionary()
    }
    fn mine(
        &mut self,
        query: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        self.inner.mine(query, sink)
    }
    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        self.inner.active_transactions()
    }
    fn session_exists(&mut self, session: SessionRef) -> Result<bool, SourceError> {
        self.inner.session_exists(session)
    }
    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        self.inner.nls()
    }
    fn reconnect(&mut self) -> Result<(), SourceError> {
        self.inner.reconnect()
    }
    fn snapshot_reader(&mut self) -> Result<Box<dyn SnapshotReader>, SourceError> {
        Ok(Box::new(TimedReader {
            inner: self.inner.snapshot_reader()?,
            reads: Arc::clone(&self.reads),
        }))
    }
}

// ---- the connector ----------------------------------------------------------------------------

#[derive(Debug)]
struct ConnectorRun {
    rows: u64,
    /// From the task's start until the last row was published and every record sent was
    /// acknowledged (or committed).
    elapsed: Duration,
    /// From the start until the first record was sent (producer, topics, offsets, the first
    /// mining step): the start heartbeat, before any row.
    first_send: Duration,
    /// When the stats first showed every row published by the engine.
    published: Duration,
    kafka_transactions: u64,
    offsets_written: u64,
    peak_queue: u64,
    /// The process's peak RSS during the run, less its RSS at the start (the database and the
    /// bench's kept records).
    peak_rss_mib: f64,
    checked: String,
    cpu: CpuUse,
    /// With `--threads`: the task's CPU once it is idle, after the snapshot.
    idle: Option<CpuUse>,
}

impl ConnectorRun {
    fn rows_per_s(&self) -> f64 {
        self.rows as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    fn rows_per_s_from_first_send(&self) -> f64 {
        let span = self.elapsed.saturating_sub(self.first_send).as_secs_f64();
        self.rows as f64 / span.max(1e-9)
    }
}

type Task = std::thread::JoinHandle<Result<(), cdc_connect_bridge::worker::TaskError>>;

/// Whether the snapshot is delivered: every row published by the engine (its stats come
/// after each step, and a snapshot batch publishes within one), nothing in the queue, every
/// engine record sent (the engine's stats are read before the delivery's, which only lag),
/// and every record sent acknowledged; under exactly-once a record counts when its Kafka
/// transaction committed, and each commit adds its offset record.
fn delivered(
    engine: &cdc_logminer::engine::EngineMetrics,
    d: &cdc_connect_bridge::operator::control::DeliveryMetrics,
    mode: Mode,
    rows: u64,
) -> bool {
    let published = engine.snapshot.rows_published >= rows && engine.snapshot.tables_remaining == 0;
    let acked = match mode {
        Mode::AtLeastOnce => d.records_acknowledged >= d.records_sent,
        Mode::ExactlyOnce => {
            d.records_acknowledged >= d.records_sent + d.kafka_transactions_committed
        }
    };
    published && d.queue_depth == 0 && d.records_sent >= engine.records && acked
}

fn connector_run(
    o: &Options,
    run: &str,
    mode: Mode,
    db: SimDatabase,
    rows: u64,
) -> Result<ConnectorRun, Error> {
    let config = connector_config(o, run, mode)?;
    // the peak from here on is the connector's (the database and the kept records stay
    // resident beside it)
    std::fs::write("/proc/self/clear_refs", "5").map_err(|e| format!("clear_refs: {e}"))?;
    let baseline = status_mib("VmRSS:");
    let stats = Arc::new(TaskStats::default());
    let signals = Arc::new(TaskSignals::default());
    let cpu_before = cpu_snapshot(o.broker_pid);
    let started = Instant::now();
    let task: Task = {
        let (stats, signals, config) = (Arc::clone(&stats), Arc::clone(&signals), config.clone());
        // the task's delivery loop runs on this thread, named as the connector names it
        std::thread::Builder::new()
            .name("oracle-cdc-task".into())
            .spawn(move || {
                run_task_with_source(&config, &stats, &signals, TaskOptions::default(), |_| {
                    Ok(SimSource::new(db))
                })
            })?
    };
    let mut first_send = None;
    let mut published = None;
    let mut peak_queue = 0;
    // the first poll that saw everything delivered counts once the next one agrees
    let mut seen_done: Option<(Duration, u64, u64, CpuSnapshot)> = None;
    let mut traced = Duration::ZERO;
    let outcome = loop {
        std::thread::sleep(POLL_EVERY);
        let engine = *stats.engine.lock();
        let d = stats.delivery();
        if o.trace && started.elapsed() >= traced {
            traced += TRACE_EVERY;
            println!(
                "    trace {:>6.2} s: sent {:>8}, acknowledged {:>8}, in flight {:>6}, queue {:>5}, \
                 offsets {:>3}, rows published {:>8}",
                started.elapsed().as_secs_f64(),
                d.records_sent,
                d.records_acknowledged,
                d.records_sent.saturating_sub(d.records_acknowledged),
                d.queue_depth.min(999_999),
                d.offsets_committed,
                engine.snapshot.rows_published,
            );
        }
        // the depth is counted after the send, so it may read as −1 (u64::MAX) for a moment
        if d.queue_depth < u64::MAX / 2 {
            peak_queue = peak_queue.max(d.queue_depth);
        }
        if first_send.is_none() && d.records_sent > 0 {
            first_send = Some(started.elapsed());
        }
        if published.is_none() && engine.snapshot.rows_published >= rows {
            published = Some(started.elapsed());
        }
        let counts = (d.records_sent, d.records_acknowledged);
        if delivered(&engine, &d, mode, rows) {
            match seen_done.take() {
                Some((elapsed, sent, acked, cpu_after)) if (sent, acked) == counts => {
                    break Ok((elapsed, d, cpu_after));
                }
                _ => {
                    let cpu_after = cpu_snapshot(o.broker_pid);
                    seen_done = Some((started.elapsed(), counts.0, counts.1, cpu_after));
                }
            }
        } else {
            seen_done = None;
        }
        if task.is_finished() {
            break Err("the task stopped before the snapshot was delivered".to_owned());
        }
        if started.elapsed() > RUN_TIMEOUT {
            break Err(format!(
                "not delivered within {RUN_TIMEOUT:?}: {} rows published, {d:?}",
                engine.snapshot.rows_published
            ));
        }
    };
    let peak_rss_mib = status_mib("VmHWM:") - baseline;
    // what the task costs once the snapshot is delivered and its stream is idle
    let idle = if o.threads {
        let before = cpu_snapshot(o.broker_pid);
        std::thread::sleep(IDLE_SAMPLE);
        Some(cpu_use(&before, &cpu_snapshot(o.broker_pid), IDLE_SAMPLE))
    } else {
        None
    };
    signals.request_stop();
    let stopped = task.join();
    let (elapsed, d, cpu_after) = match (outcome, stopped) {
        (Ok(done), Ok(Ok(()))) => done,
        (Err(why), Ok(Err(error))) => return Err(format!("{why}: {error}").into()),
        (Err(why), _) => return Err(why.into()),
        (Ok(_), Ok(Err(error))) => return Err(format!("the task failed: {error}").into()),
        (_, Err(_)) => return Err("the task's thread panicked".into()),
    };
    let cpu = cpu_use(&cpu_before, &cpu_after, elapsed);
    let checked = check_topics(o, &config, mode, rows)?;
    Ok(ConnectorRun {
        rows,
        elapsed,
        first_send: first_send.unwrap_or(Duration::ZERO),
        published: published.unwrap_or(elapsed),
        kafka_transactions: d.kafka_transactions_committed,
        offsets_written: d.offsets_committed,
        peak_queue,
        peak_rss_mib,
        checked,
        cpu,
        idle,
    })
}

/// The offsets the table topics used against the rows: as many at least once (idempotent,
/// one record a row), at least as many under exactly-once (each commit adds a marker).
fn check_topics(o: &Options, config: &CdcConfig, mode: Mode, rows: u64) -> Result<String, Error> {
    let topics: Vec<String> = TABLES
        .iter()
        .map(|(owner, table)| format!("{}.{owner}.{table}", config.topics.prefix))
        .collect();
    let used = offsets_used(o, &topics)?;
    let total: u64 = used.iter().sum();
    let ok = match mode {
        Mode::AtLeastOnce => total == rows,
        Mode::ExactlyOnce => total >= rows,
    };
    if !ok {
        return Err(format!(
            "the table topics used {total} offsets ({used:?}) for the {rows} rows of the snapshot"
        )
        .into());
    }
    Ok(format!("its table topics used {total} offsets"))
}

/// The offsets each one-partition topic used: its last record's offset + 1, read from its
/// tail. Tansu's high watermark is not that: it reads up to a few hundred offsets short (the
/// records are all there), so the tail is read from somewhat before it until nothing more
/// comes.
fn offsets_used(o: &Options, topics: &[String]) -> Result<Vec<u64>, Error> {
    use rdkafka::message::Message as _;
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &o.bootstrap)
        .set("group.id", "snapshot-bench-check")
        .set("enable.auto.commit", "false")
        .set_log_level(RDKafkaLogLevel::Error)
        .create()?;
    let mut assignment = TopicPartitionList::new();
    for topic in topics {
        let (low, high) = consumer.fetch_watermarks(topic, 0, Duration::from_secs(10))?;
        let from = low.max(high.saturating_sub(TAIL));
        assignment.add_partition_offset(topic, 0, Offset::Offset(from))?;
    }
    consumer.assign(&assignment)?;
    let mut used: HashMap<String, u64> = HashMap::new();
    let mut last = Instant::now();
    while last.elapsed() < Duration::from_secs(2) {
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                let end = u64::try_from(m.offset() + 1).unwrap_or(0);
                let topic = used.entry(m.topic().to_owned()).or_default();
                *topic = (*topic).max(end);
                last = Instant::now();
            }
            Some(Err(KafkaError::PartitionEOF(_))) | None => {}
            Some(Err(error)) => return Err(error.into()),
        }
    }
    Ok(topics
        .iter()
        .map(|t| used.get(t).copied().unwrap_or(0))
        .collect())
}

/// How far before the reported high watermark a topic's tail is read.
const TAIL: i64 = 5_000;

// ---- the bare producer ------------------------------------------------------------------------

#[derive(Debug)]
struct BareRun {
    rows: u64,
    /// From its start (its topics, its producer) to the last delivery report or commit.
    elapsed: Duration,
    first_send: Duration,
    cpu: CpuUse,
}

impl BareRun {
    fn rows_per_s(&self) -> f64 {
        self.rows as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    fn rows_per_s_from_first_send(&self) -> f64 {
        let span = self.elapsed.saturating_sub(self.first_send).as_secs_f64();
        self.rows as f64 / span.max(1e-9)
    }
}

/// Counts delivery reports.
#[derive(Debug, Default)]
struct Counting {
    acked: AtomicU64,
    failed: AtomicU64,
}

impl ClientContext for Counting {}

impl ProducerContext for Counting {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(_) => self.acked.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.failed.fetch_add(1, Ordering::Relaxed),
        };
    }
}

/// The kept records, each table's to a fresh one-partition topic (as the connector's table
/// topics are), with the connector producer's settings: idempotent, `acks=all`, its
/// `linger.ms`, the Java partitioner; under exactly-once transactional, one Kafka transaction
/// a chunk, as the connector's (which ends one only between chunks), each with an offset
/// record. Under at-least-once the records go out in one stream.
fn bare_run(
    o: &Options,
    name: &str,
    mode: Mode,
    capture: &Capture,
    config: &CdcConfig,
) -> Result<BareRun, Error> {
    let topics: Vec<String> = (0..capture.topics.len())
        .map(|i| format!("{name}-{i}"))
        .collect();
    let offsets_topic = format!("{name}-offsets");
    // the connector's producer lingers 5 ms unless cdc.kafka.linger.ms says otherwise
    let linger = config
        .kafka
        .client_properties
        .iter()
        .find(|(k, _)| *k == "linger.ms")
        .map_or("5", |(_, v)| v.expose());
    let cpu_before = cpu_snapshot(o.broker_pid);
    let started = Instant::now();
    let mut admin = KafkaClients::plain(o.bootstrap.clone()).admin()?;
    for t in &topics {
        admin.ensure(&TopicSpec::plain(t.as_str()))?;
    }
    if mode == Mode::ExactlyOnce {
        admin.ensure(&TopicSpec::plain(offsets_topic.as_str()))?;
    }
    let mut client = ClientConfig::new();
    client
        .set("bootstrap.servers", &o.bootstrap)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("partitioner", "murmur2_random")
        .set("allow.auto.create.topics", "false")
        .set("linger.ms", linger)
        // as every client of the connector's (cdc_journal::kafka::client_config)
        .set("socket.nagle.disable", "true")
        .set_log_level(RDKafkaLogLevel::Warning);
    if mode == Mode::ExactlyOnce {
        client.set("transactional.id", format!("{name}-txn"));
    }
    let producer: ThreadedProducer<Counting> = client.create_with_context(Counting::default())?;
    let ends: Vec<usize> = match mode {
        Mode::ExactlyOnce => {
            producer.init_transactions(Duration::from_secs(30))?;
            capture.chunk_ends.clone()
        }
        Mode::AtLeastOnce => vec![capture.records.len()],
    };
    let send = |mut record: BaseRecord<'_, [u8], [u8]>| -> Result<(), Error> {
        loop {
            match producer.send(record) {
                Ok(()) => return Ok(()),
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    record = back;
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err((error, _)) => return Err(error.into()),
            }
        }
    };
    // about the size of the connector's offset record
    let offset_value = vec![b'o'; 400];
    let first_send = started.elapsed();
    let mut extra = 0u64;
    let mut begin = 0;
    for end in ends {
        let chunk = capture.records.get(begin..end).unwrap_or_default();
        begin = end;
        if mode == Mode::ExactlyOnce {
            producer.begin_transaction()?;
        }
        for r in chunk {
            // as the connector's producer makes them (`RecordProducer::send`)
            let mut headers = OwnedHeaders::new_with_capacity(r.headers.len());
            for header in &r.headers {
                headers = headers.insert(KafkaHeader {
                    key: header.name,
                    value: Some(&header.value),
                });
            }
            let mut out = BaseRecord::to(topics[r.topic].as_str()).headers(headers);
            if let Some(key) = &r.key {
                out = out.key(key.as_slice());
            }
            if let Some(value) = &r.value {
                out = out.payload(value.as_slice());
            }
            send(out)?;
        }
        if mode == Mode::ExactlyOnce {
            send(
                BaseRecord::to(offsets_topic.as_str())
                    .key(b"[\"snapshot-bench\"]".as_slice())
                    .payload(offset_value.as_slice()),
            )?;
            extra += 1;
            settle(&producer);
            producer.commit_transaction(Duration::from_secs(30))?;
        }
    }
    settle(&producer);
    producer.flush(RUN_TIMEOUT)?;
    let elapsed = started.elapsed();
    let cpu = cpu_use(&cpu_before, &cpu_snapshot(o.broker_pid), elapsed);
    let records = capture.records.len() as u64;
    let context = producer.context();
    let (acked, failed) = (
        context.acked.load(Ordering::Relaxed),
        context.failed.load(Ordering::Relaxed),
    );
    if acked != records + extra || failed > 0 {
        return Err(format!(
            "bare producer: {acked} of {} acknowledged, {failed} failed",
            records + extra
        )
        .into());
    }
    Ok(BareRun {
        rows: capture.rows,
        elapsed,
        first_send,
        cpu,
    })
}

/// Waits until every record sent has its delivery report, as the connector's producer does
/// before a flush or a commit: rdkafka's flush (also the first step of its commit) waits in
/// polls of up to 100 ms that run to their end.
fn settle(producer: &ThreadedProducer<Counting>) {
    let deadline = Instant::now() + RUN_TIMEOUT;
    while producer.in_flight_count() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Deletes every topic whose name holds `run` (best effort: a broker that cannot delete
/// topics keeps them, and the bench goes on).
fn delete_topics_of(o: &Options, run: &str) {
    let deleted = (|| -> Result<(), Error> {
        let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
            .set("bootstrap.servers", &o.bootstrap)
            .set_log_level(RDKafkaLogLevel::Error)
            .create()?;
        let metadata = admin
            .inner()
            .fetch_metadata(None, Duration::from_secs(10))?;
        let names: Vec<&str> = metadata
            .topics()
            .iter()
            .map(|t| t.name())
            .filter(|name| name.contains(run))
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
        for result in runtime.block_on(admin.delete_topics(&names, &options))? {
            if let Err((topic, code)) = result {
                return Err(format!("{topic}: {code}").into());
            }
        }
        Ok(())
    })();
    if let Err(error) = deleted {
        eprintln!("  (the run's topics were not deleted: {error})");
    }
}

// ---- helpers ----------------------------------------------------------------------------------

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A rate rounded to a whole number, thousands apart (`46 210`).
fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// A field of `/proc/self/status` in MiB (`VmRSS:`, `VmHWM:`).
fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// The resident memory of a process (`VmRSS`), as /proc shows it.
fn resident_memory(pid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    Some(line.trim_start_matches("VmRSS:").trim().to_owned())
}

// ---- CPU use ----------------------------------------------------------------------------------

/// Clock ticks per second of `/proc/*/stat` and `/proc/stat` (USER_HZ: 100 on Linux).
const TICKS_PER_S: u64 = 100;

/// User and system time of a process, threads that ended included (`/proc/PID/stat`).
fn stat_ticks(path: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // the fields after the command name, which is in parentheses and may hold spaces
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Busy time of every core of the machine (`/proc/stat`: all but idle and iowait).
fn machine_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    let total: u64 = values.iter().take(8).sum();
    let idle = values.get(3)? + values.get(4)?;
    Some(total.saturating_sub(idle))
}

/// CPU time at one moment: each live thread of this process (by id, with its name and its
/// nanoseconds on a CPU), the process, the broker's process and the whole machine. Threads
/// that end between two snapshots (a batch's snapshot readers) count in the process only.
#[derive(Debug, Clone, Default)]
struct CpuSnapshot {
    threads: HashMap<String, (String, u64)>,
    process: u64,
    broker: Option<u64>,
    machine: Option<u64>,
}

fn cpu_snapshot(broker_pid: Option<u32>) -> CpuSnapshot {
    let mut threads = HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc/self/task") {
        for entry in entries.flatten() {
            let dir = entry.path();
            let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            let on_cpu = std::fs::read_to_string(dir.join("schedstat"))
                .unwrap_or_default()
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok());
            if let Some(on_cpu) = on_cpu {
                let id = entry.file_name().to_string_lossy().into_owned();
                threads.insert(id, (name.trim().to_owned(), on_cpu));
            }
        }
    }
    CpuSnapshot {
        threads,
        process: stat_ticks("/proc/self/stat").unwrap_or(0),
        broker: broker_pid.and_then(|pid| stat_ticks(&format!("/proc/{pid}/stat"))),
        machine: machine_ticks(),
    }
}

/// Cores busy over an interval, by part.
#[derive(Debug, Clone, Default)]
struct CpuUse {
    /// The mining thread (the engine, the simulator's LogMiner) and the decode pool.
    mining: f64,
    /// The task's thread: the delivery loop (record building, sending, Kafka transactions).
    delivery: f64,
    /// rdkafka's thread serving the record producer's delivery reports.
    reports: f64,
    /// librdkafka's own threads (of every client of the process).
    rdkafka: f64,
    /// The rest of this process: the snapshot readers (the simulator's flashback reads, on
    /// threads of a batch), the offsets thread, the bench's own thread; in a bare run the
    /// producing thread.
    rest: f64,
    broker: Option<f64>,
    /// Every other process on the machine.
    others: Option<f64>,
    /// Each thread name's cores (threads of one name summed), the busiest first.
    threads: Vec<(String, f64)>,
}

fn cpu_use(before: &CpuSnapshot, after: &CpuSnapshot, wall: Duration) -> CpuUse {
    let wall = wall.as_secs_f64().max(1e-9);
    let mut by_part = [0.0f64; 4];
    let mut by_name: HashMap<&str, f64> = HashMap::new();
    for (id, (name, on_cpu)) in &after.threads {
        let earlier = before.threads.get(id).map_or(0, |(_, t)| *t);
        let seconds = on_cpu.saturating_sub(earlier) as f64 / 1e9;
        *by_name.entry(name.as_str()).or_default() += seconds / wall;
        let part = if name.starts_with("oracle-cdc-mini") || name.starts_with("cdc-decode") {
            0
        } else if name == "oracle-cdc-task" {
            1
        } else if name.starts_with("producer pollin") {
            2
        } else if name.starts_with("rdk:") {
            3
        } else {
            continue;
        };
        by_part[part] += seconds;
    }
    let seconds = |ticks: u64| ticks as f64 / TICKS_PER_S as f64;
    let process = seconds(after.process.saturating_sub(before.process));
    let broker = match (before.broker, after.broker) {
        (Some(b), Some(a)) => Some(seconds(a.saturating_sub(b))),
        _ => None,
    };
    let others = match (before.machine, after.machine) {
        (Some(b), Some(a)) => {
            Some((seconds(a.saturating_sub(b)) - process - broker.unwrap_or(0.0)).max(0.0))
        }
        _ => None,
    };
    let mut threads: Vec<(String, f64)> = by_name
        .into_iter()
        .filter(|(_, cores)| *cores >= 0.005)
        .map(|(name, cores)| (name.to_owned(), cores))
        .collect();
    threads.sort_by(|a, b| b.1.total_cmp(&a.1));
    CpuUse {
        mining: by_part[0] / wall,
        delivery: by_part[1] / wall,
        reports: by_part[2] / wall,
        rdkafka: by_part[3] / wall,
        rest: (process - by_part.iter().sum::<f64>()).max(0.0) / wall,
        broker: broker.map(|b| b / wall),
        others: others.map(|o| o / wall),
        threads,
    }
}

/// The cores of each thread name, the busiest first.
fn thread_list(cpu: &CpuUse) -> String {
    cpu.threads
        .iter()
        .map(|(name, cores)| format!("{name} {cores:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The median of each part over several runs.
fn median_cpu<'a>(uses: impl Iterator<Item = &'a CpuUse> + Clone) -> CpuUse {
    let optional = |f: fn(&CpuUse) -> Option<f64>| {
        let values: Vec<f64> = uses.clone().filter_map(f).collect();
        (!values.is_empty()).then(|| median(values.into_iter()))
    };
    CpuUse {
        mining: median(uses.clone().map(|u| u.mining)),
        delivery: median(uses.clone().map(|u| u.delivery)),
        reports: median(uses.clone().map(|u| u.reports)),
        rdkafka: median(uses.clone().map(|u| u.rdkafka)),
        rest: median(uses.clone().map(|u| u.rest)),
        broker: optional(|u| u.broker),
        others: optional(|u| u.others),
        threads: Vec::new(),
    }
}

impl CpuUse {
    /// Cores of this process.
    fn process(&self) -> f64 {
        self.mining + self.delivery + self.reports + self.rdkafka + self.rest
    }
}

impl std::fmt::Display for CpuUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
        if self.mining + self.delivery > 0.0 {
            write!(
                f,
                "mining {:.2}, delivery {:.2}, delivery reports {:.2}, librdkafka {:.2}, \
                 snapshot readers and the rest {:.2}",
                self.mining, self.delivery, self.reports, self.rdkafka, self.rest,
            )?;
        } else {
            write!(
                f,
                "producing thread {:.2}, delivery reports {:.2}, librdkafka {:.2}",
                self.rest, self.reports, self.rdkafka
            )?;
        }
        write!(
            f,
            ", broker {}, other processes {}",
            shown(self.broker),
            shown(self.others)
        )
    }
}
