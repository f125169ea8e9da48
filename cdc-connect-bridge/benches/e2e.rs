//! End-to-end throughput of the connector into a Kafka-protocol broker, each delivery mode
//! beside a bare rdkafka producer sending records of the same size to the same broker in the
//! same run, and the ratio of the two; then where the time went. `docs/benchmarks.md` has the
//! method and the numbers.
//!
//! ```text
//!  engine only       sim_source ─► CaptureEngine::step, as the task runs it          changes/s
//!                    (the simulator's calls timed apart: it stands for Oracle)
//!  engine + records  … ─► RecordBuilder (what the delivery thread builds; no Kafka)  records/s
//!  connector         Connector::supervise ─► broker; from its first record sent      records/s
//!                    until every record was acknowledged (ALO) or committed in a
//!                    Kafka transaction (EOS); the time from its start to its first
//!                    send is reported beside it
//!  bare producer     ThreadedProducer ─► what the connector sends: as many records,  records/s
//!                    of its average key, value and header sizes and header count,
//!                    over as many one-partition topics in its proportions, an offset
//!                    record per Kafka transaction (EOS); idempotent (ALO) or
//!                    transactional with cdc.eos.batch.max.records per Kafka
//!                    transaction (EOS); the connector producer's settings. The
//!                    ratio is the connector's rate over this one's.
//!  one-topic bare    the same records, one header, all to one fresh topic: the        records/s
//!                    broker's best case (the issue's reference figures are of this
//!                    kind, with 400 B records)
//! ```
//!
//! The source is the simulator with its workload already run (`cdc.sim.backlog=true`): the
//! connector catches up on a backlog of redo, the case where its throughput is what limits
//! (ALTERs of APP.CUSTOMERS included: their older rows are replayed with the redo dictionary
//! of the build the workload starts with, counted in the engine line),
//! and the database's own work (running the workload, which on these two cores took about half
//! of a core) is not on the machine's clock during the runs, as Oracle's is not on the
//! connector's host. `--live` runs the workload while it is mined instead, as the task does
//! against a live database, paced by the engine's polls. The bare producer's clock starts at
//! its first send, after its producer was made; the connector's too, so the startup (producer,
//! topics, offsets, the simulator) is reported apart.
//!
//! Every run reads the CPU time of each thread of this process (schedstat), of the broker's
//! process (`--broker-pid`) and of the machine, so the report says which part was busy, which
//! waited for a CPU and which was blocked.
//!
//! Every connector run has its own name, topic prefix and offsets topic, so no run resumes
//! another; after each run the table topics are read back (`read_committed`, not timed) and
//! every expected change must be there, then the run's topics are deleted. Each measurement
//! runs `--runs` times; the tables show the medians.
//!
//! Run: `cargo x bench e2e` (starts a Tansu broker unless `CDC_TEST_BOOTSTRAP` or
//! `CDC_TEST_BROKER` names one), or
//! `cargo bench -p cdc-connect-bridge --bench e2e -- --bootstrap HOST:PORT`
//! with `--changes N --runs N --seed N --modes eos,alo --broker LABEL --broker-pid PID
//! --no-verify --live --set KEY=VALUE` (a connector setting, e.g. `cdc.kafka.linger.ms=50`), or
//! `--engine-only` (no broker needed) to profile the source.
// the bare producer and the read-back are clients of their own: the reference must not share
// the connector's client builder
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cdc_connect_bridge::kafka::{KafkaClients, TopicSpec};
use cdc_connect_bridge::operator::connector::Connector;
use cdc_connect_bridge::operator::control::{ConnectorControl, MetricsSnapshot};
use cdc_connect_bridge::record::settings::RecordSettings;
use cdc_connect_bridge::{KafkaRecord, RecordBuilder, RecordContext};
use cdc_core::config::{CdcConfig, Config};
use cdc_core::{Scn, TableId, TableLayout};
use cdc_logminer::engine::{
    CaptureEngine, EngineRecord, EngineSettings, RecordKind, RecordSink, SinkClosed, SystemClock,
};
use cdc_logminer::source::configured::{sim_expected, sim_initial_scn, sim_source};
use cdc_logminer::source::{
    ActiveTransaction, CapturedObject, DatabaseIdentity, DictionaryBuild, LogFile,
    LogInventoryQuery, MineSummary, MiningQuery, MiningWindow, NlsSettings, RedoSource, RowSink,
    SessionRef, SourceError, TableFilter,
};
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{DeliveryResult, Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseRecord, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientConfig, ClientContext, Offset, TopicPartitionList};

/// The allocator of the `oracle-cdc` binary, so the bench measures what ships.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Error = Box<dyn std::error::Error>;

/// How long one connector run, bare run or read-back may take before the bench gives up.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// How often the connector's metrics are read while it runs.
const POLL_EVERY: Duration = Duration::from_millis(1);

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

    /// The share of the bare producer's rate the connector should reach.
    fn target(self) -> f64 {
        match self {
            Mode::ExactlyOnce => 0.70,
            Mode::AtLeastOnce => 0.85,
        }
    }
}

#[derive(Debug, Clone)]
struct Options {
    bootstrap: String,
    broker: String,
    /// The broker's process, for its CPU use (`cargo x bench e2e` passes the Tansu it started).
    broker_pid: Option<u32>,
    seed: u64,
    changes: u64,
    runs: usize,
    modes: Vec<Mode>,
    verify: bool,
    /// Only the passes without Kafka (for profiling the source).
    engine_only: bool,
    /// The simulated database runs its workload while it is mined (otherwise it ran before).
    live: bool,
    /// Connector settings over the bench's own (`--set KEY=VALUE`), for experiments.
    set: Vec<(String, String)>,
}

fn options() -> Result<Options, Error> {
    let mut bootstrap = std::env::var("CDC_TEST_BOOTSTRAP")
        .or_else(|_| std::env::var("CDC_TEST_BROKER"))
        .ok();
    let mut o = Options {
        bootstrap: String::new(),
        broker: "a Kafka-protocol broker".to_owned(),
        broker_pid: None,
        seed: 7,
        changes: 100_000,
        runs: 3,
        modes: vec![Mode::ExactlyOnce, Mode::AtLeastOnce],
        verify: true,
        engine_only: false,
        live: false,
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
            "--changes" => o.changes = value()?.parse()?,
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
            "--no-verify" => o.verify = false,
            "--engine-only" => o.engine_only = true,
            "--live" => o.live = true,
            "--set" => {
                let pair = value()?;
                let (key, v) = pair
                    .split_once('=')
                    .ok_or(format!("--set needs KEY=VALUE, not {pair:?}"))?;
                o.set.push((key.to_owned(), v.to_owned()));
            }
            "-h" | "--help" => {
                println!(
                    "usage: cargo bench -p cdc-connect-bridge --bench e2e -- [--bootstrap HOST:PORT] [--broker LABEL] \
                     [--broker-pid PID] [--changes N] [--runs N] [--seed N] \
                     [--modes eos,alo] [--no-verify] [--engine-only] [--live] \
                     [--set KEY=VALUE]..."
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other:?} (see --help)").into()),
        }
    }
    o.bootstrap = match bootstrap {
        Some(bootstrap) => bootstrap,
        // the passes without Kafka never connect
        None if o.engine_only => "127.0.0.1:9".to_owned(),
        None => {
            return Err(
                "no broker: pass --bootstrap HOST:PORT or set CDC_TEST_BOOTSTRAP or \
                        CDC_TEST_BROKER (`cargo x bench e2e` starts Tansu itself)"
                    .into(),
            );
        }
    };
    Ok(o)
}

fn main() -> ExitCode {
    // `cargo bench` passes --bench; `cargo test --all-targets` runs bench targets without it,
    // and this bench needs a broker and minutes, so there it only says where it runs
    if !std::env::args().any(|arg| arg == "--bench") {
        eprintln!("e2e: not run as a test; `cargo x bench e2e` runs it");
        return ExitCode::SUCCESS;
    }
    // as the `oracle-cdc` binary does; the bare producers run in this process too
    cdc_connect_bridge::memory::prefer_small_pages();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("e2e bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The connector's configuration for one run; `run` makes its names unique.
fn connector_config(o: &Options, run: &str, mode: Mode, start_scn: Option<u64>) -> Config {
    let mut config = Config::from_pairs([
        ("name", format!("oracle-cdc-bench-{run}")),
        ("cdc.source", "sim".to_owned()),
        ("cdc.sim.seed", o.seed.to_string()),
        ("cdc.sim.changes", o.changes.to_string()),
        ("bootstrap.servers", o.bootstrap.clone()),
        (
            "offset.storage.topic",
            format!("oracle-cdc-bench-offsets-{run}"),
        ),
        ("cdc.topic.prefix", format!("bench{run}")),
        ("cdc.tables.include", r"APP\..*".to_owned()),
        // its CLOB values are assembled from LOB rows, which this version does not do yet
        ("cdc.tables.exclude", r"APP\.DOCS".to_owned()),
        ("cdc.users.exclude", "ETL_BATCH".to_owned()),
        // APP.EVENTS has no key: its records are keyed by ROWID
        ("cdc.key.missing", "rowid".to_owned()),
        ("cdc.sim.backlog", (!o.live).to_string()),
        // the stream is measured, from the database's first SCN: no table is read whole
        ("cdc.snapshot.mode", "none".to_owned()),
    ]);
    match mode {
        Mode::ExactlyOnce => {
            config.set("transaction.boundary", "connector");
            config.set("exactly.once.support", "required");
        }
        Mode::AtLeastOnce => config.set("transaction.boundary", "poll"),
    }
    if let Some(scn) = start_scn {
        // capture the simulated database's whole history, not only what follows the start
        config.set("cdc.start.scn", scn.to_string());
    }
    for (key, value) in &o.set {
        config.set(key.as_str(), value.as_str());
    }
    config
}

fn validated(config: &Config) -> Result<CdcConfig, Error> {
    config.validate().map_err(|e| e.to_string().into())
}

fn run() -> Result<(), Error> {
    let o = options()?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "e2e bench: broker {} at {}; {} cores, load average {} at start; source: {}",
        o.broker,
        o.bootstrap,
        cores,
        load_average(),
        if o.live {
            "the simulator running its workload while it is mined (--live)"
        } else {
            "the simulator's redo as a backlog (cdc.sim.backlog: its workload ran before)"
        }
    );

    // The simulated database every run mines (the same seed and size: the same redo).
    let prep = connector_config(&o, &format!("{stamp}prep"), Mode::AtLeastOnce, None);
    let start_scn = sim_initial_scn(&validated(&prep)?)?.0;
    let prep = validated(&connector_config(
        &o,
        &format!("{stamp}prep"),
        Mode::AtLeastOnce,
        Some(start_scn),
    ))?;
    let expected = sim_expected(&prep)?;
    let expected_changes: u64 = expected.iter().map(|t| t.changes.len() as u64).sum();
    println!(
        "simulator: seed {}, {} row changes generated; {} committed changes in {} transactions \
         to capture",
        o.seed,
        o.changes,
        expected_changes,
        expected.len()
    );

    // The source's own rate, and what the delivery thread builds, without Kafka.
    let mut engine_only = Vec::new();
    let mut with_records = Vec::new();
    let mut shape = None;
    for _ in 0..o.runs {
        engine_only.push(engine_pass(&prep, expected_changes, false)?);
        let pass = engine_pass(&prep, expected_changes, true)?;
        shape = Some(pass.shape.clone());
        with_records.push(pass);
    }
    let shape = shape.ok_or("no engine pass ran")?;
    let engine_rate = median(engine_only.iter().map(|p| p.changes_per_s()));
    let records_rate = median(with_records.iter().map(|p| p.records_per_s()));
    let share = |f: fn(&SourceTime) -> Duration| {
        median(
            engine_only
                .iter()
                .map(|p| f(&p.source).as_secs_f64() / p.elapsed.as_secs_f64() * 100.0),
        )
    };
    let source_share = share(SourceTime::total);
    let engine_cpu_rate = median(
        engine_only
            .iter()
            .map(|p| p.changes as f64 / p.cpu.as_secs_f64().max(1e-9)),
    );
    println!(
        "engine only (simulator → engine, as the task runs it): {} changes/s, {} per \
         CPU-second (median of {}; {} mining steps, {} idle waits)",
        thousands(engine_rate),
        thousands(engine_cpu_rate),
        engine_only.len(),
        engine_only.first().map_or(0, |p| p.steps),
        engine_only.first().map_or(0, |p| p.idle_waits),
    );
    println!(
        "  the backlog's ALTERs: {} steps mined again with a redo dictionary for rows older \
         than one",
        engine_only.first().map_or(0, |p| p.lag_replays),
    );
    println!(
        "  of its time, the simulator (which stands for Oracle) takes {source_share:.0}%: \
         running the workload {:.0}%, answering the mining query {:.0}%, the rest {:.0}%; \
         the engine {:.0}%",
        share(|t| t.workload),
        share(|t| t.mine),
        share(|t| t.other),
        100.0 - source_share,
    );
    if let Some(p) = engine_only.first() {
        let steps = p.steps.max(1) as f64;
        println!(
            "  per mining step: {:.1} rows mined, {:.2} ms answering the query; window {} logs \
             at the end",
            p.rows_mined as f64 / steps,
            p.source.mine.as_secs_f64() * 1000.0 / steps,
            p.window_logs,
        );
    }
    println!(
        "engine + RecordBuilder (no Kafka): {} Kafka records/s = {} changes/s; {} table \
         records per run ({:.2} per change) on {} topics, record size key {} + value {} + \
         headers {} B",
        thousands(records_rate),
        thousands(median(with_records.iter().map(|p| p.changes_per_s()))),
        shape.table_records,
        shape.table_records as f64 / expected_changes.max(1) as f64,
        shape.topics.len(),
        shape.key_bytes(),
        shape.value_bytes(),
        shape.header_bytes(),
    );
    // the delivery thread's building, alone: the time spent in RecordBuilder::append
    let build_rate = median(
        with_records
            .iter()
            .map(|p| p.shape.table_records as f64 / p.build_time.as_secs_f64().max(1e-9)),
    );
    println!(
        "  RecordBuilder alone (time inside RecordBuilder::append): {} Kafka records/s on one \
         core",
        thousands(build_rate)
    );
    if o.engine_only {
        return Ok(());
    }
    // the connector creates a table's topic when its first record comes, on the delivery
    // thread: what one creation costs on this broker
    let creation = topic_creation(&o, &format!("{stamp}create"), 20)?;
    println!(
        "creating a topic as the connector does (TopicAdmin::ensure): median {:.0} ms; each \
         connector run creates {} table topics (plus its side and offsets topics)",
        creation.as_secs_f64() * 1000.0,
        shape.topics.len()
    );

    let mut connector_runs: Vec<(Mode, ConnectorRun)> = Vec::new();
    let mut bare_runs: Vec<(Mode, BareRun)> = Vec::new();
    let mut one_topic_runs: Vec<(Mode, BareRun)> = Vec::new();
    for i in 0..o.runs {
        for &mode in &o.modes {
            let run = format!("{stamp}{}{i}", mode.label().to_ascii_lowercase());
            let c = connector_run(&o, &run, mode, start_scn, &shape, expected_changes)?;
            println!(
                "  {} run {}: connector {} records/s from its first send, which came {:.2} s \
                 after its start ({} records/s in {:.2} s from the start; first ack after \
                 {:.2} s; {} Kafka transactions; {} offsets written; peak queue {}; {} mining \
                 steps, {} rows){}\n    cores: {}",
                mode.label(),
                i + 1,
                thousands(c.records_per_s()),
                c.first_send.as_secs_f64(),
                thousands(c.records_per_s_from_start()),
                c.elapsed.as_secs_f64(),
                c.first_ack.as_secs_f64(),
                c.kafka_transactions,
                c.offsets_written,
                c.peak_queue,
                c.steps,
                c.rows_mined,
                c.verified
                    .as_deref()
                    .map(|v| format!("; read back: {v}"))
                    .unwrap_or_default(),
                c.cpu,
            );
            // the baseline sends what the connector sent; the one-topic run is the broker's
            // best case, for diagnosis
            let bare = bare_run(
                &o,
                &format!("oracle-cdc-bench-bare-{run}"),
                mode,
                Bare::Shaped,
                &c,
                &shape,
                &prep,
            )?;
            println!(
                "  {} run {}: bare producer sending what the connector sent {} records/s in \
                 {:.2} s ({} records of {} B over {} topics)\n    cores: {}",
                mode.label(),
                i + 1,
                thousands(bare.records_per_s()),
                bare.elapsed.as_secs_f64(),
                bare.records,
                bare.record_bytes,
                shape.topics.len(),
                bare.cpu,
            );
            let one_topic = bare_run(
                &o,
                &format!("oracle-cdc-bench-one-{run}"),
                mode,
                Bare::Plain,
                &c,
                &shape,
                &prep,
            )?;
            println!(
                "  {} run {}: bare producer, the same records to one topic, one header {} \
                 records/s in {:.2} s\n    cores: {}",
                mode.label(),
                i + 1,
                thousands(one_topic.records_per_s()),
                one_topic.elapsed.as_secs_f64(),
                one_topic.cpu,
            );
            connector_runs.push((mode, c));
            bare_runs.push((mode, bare));
            one_topic_runs.push((mode, one_topic));
            // the next runs find the broker as empty as this one did
            delete_topics_of(&o, &run);
        }
    }

    println!(
        "\nmedians of {} runs; broker {} at {}{}; {} cores, load average {} at the end",
        o.runs,
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
        "{:<5} {:>16} {:>11} {:>6} {:>7} {:>7}",
        "mode", "connector rec/s", "bare rec/s", "ratio", "target", "result"
    );
    for &mode in &o.modes {
        let runs = || connector_runs.iter().filter(move |(m, _)| *m == mode);
        let bares = || bare_runs.iter().filter(move |(m, _)| *m == mode);
        let connector = median(runs().map(|(_, r)| r.records_per_s()));
        let bare = median(bares().map(|(_, r)| r.records_per_s()));
        let ratio = connector / bare.max(f64::MIN_POSITIVE);
        println!(
            "{:<5} {:>16} {:>11} {:>5.0}% {:>6.0}% {:>7}",
            mode.label(),
            thousands(connector),
            thousands(bare),
            ratio * 100.0,
            mode.target() * 100.0,
            if ratio >= mode.target() {
                "pass"
            } else {
                "FAIL"
            },
        );
    }
    println!("\nthe connector's runs (medians):");
    for &mode in &o.modes {
        let runs = || connector_runs.iter().filter(move |(m, _)| *m == mode);
        println!(
            "  {}: {} changes/s; {} records/s after the first acknowledgement, which took \
             {:.2} s{}",
            mode.label(),
            thousands(median(
                runs().map(|(_, r)| expected_changes as f64 / r.elapsed.as_secs_f64())
            )),
            thousands(median(runs().map(|(_, r)| r.steady_records_per_s()))),
            median(runs().map(|(_, r)| r.first_ack.as_secs_f64())),
            if mode == Mode::ExactlyOnce {
                format!(
                    "; {:.0} records per Kafka transaction",
                    median(
                        runs().map(|(_, r)| r.records as f64 / r.kafka_transactions.max(1) as f64)
                    )
                )
            } else {
                String::new()
            },
        );
    }
    println!(
        "\nthe bare producer above sends what the connector sent: {} headers a record, {} \
         one-partition topics in the connector's proportions, under EOS an offset record in \
         each Kafka transaction. The same records to one topic with one header (the broker's \
         best case; medians):",
        shape.headers_per_record(),
        shape.topics.len()
    );
    for &mode in &o.modes {
        let runs = || connector_runs.iter().filter(move |(m, _)| *m == mode);
        let one_topic = median(
            one_topic_runs
                .iter()
                .filter(|(m, _)| *m == mode)
                .map(|(_, r)| r.records_per_s()),
        );
        let connector = median(runs().map(|(_, r)| r.records_per_s()));
        println!(
            "  {}: {} records/s; the connector reaches {:.0}% of it",
            mode.label(),
            thousands(one_topic),
            connector / one_topic.max(f64::MIN_POSITIVE) * 100.0
        );
    }
    println!("\nwhere the time goes (cores busy during the runs, medians):");
    let mut per_record = Vec::new();
    for &mode in &o.modes {
        let runs = connector_runs.iter().filter(|(m, _)| *m == mode);
        let bares = bare_runs.iter().filter(|(m, _)| *m == mode);
        let shapeds = one_topic_runs.iter().filter(|(m, _)| *m == mode);
        let connector = median_cpu(runs.clone().map(|(_, r)| &r.cpu));
        let bare = median_cpu(bares.clone().map(|(_, r)| &r.cpu));
        let shaped = median_cpu(shapeds.clone().map(|(_, r)| &r.cpu));
        println!("  {} connector: {connector}", mode.label());
        println!("  {} bare:      {bare}", mode.label());
        println!("  {} one topic: {shaped}", mode.label());
        let micros = |cores: f64, rate: f64| cores / rate.max(f64::MIN_POSITIVE) * 1e6;
        let rates = [
            median(runs.map(|(_, r)| r.records_per_s())),
            median(bares.map(|(_, r)| r.records_per_s())),
            median(shapeds.map(|(_, r)| r.records_per_s())),
        ];
        for ((what, cpu), rate) in [
            ("connector", connector),
            ("bare", bare),
            ("one topic", shaped),
        ]
        .into_iter()
        .zip(rates)
        {
            per_record.push((
                format!("{} {what}", mode.label()),
                micros(cpu.process(), rate),
                cpu.broker.map(|b| micros(b, rate)),
            ));
        }
    }
    println!("\nCPU per record, µs (cores busy / records per second, medians):");
    println!("  {:<16} {:>14} {:>8}", "", "client process", "broker");
    for (what, process, broker) in &per_record {
        println!(
            "  {what:<16} {process:>14.1} {:>8}",
            broker.map_or_else(|| "-".to_owned(), |b| format!("{b:.1}"))
        );
    }
    println!("\nthe source alone, without Kafka (medians):");
    println!(
        "  engine over the simulator, as the task runs it: {} changes/s ({} Kafka records/s); \
         {} changes per CPU-second",
        thousands(engine_rate),
        thousands(engine_rate * shape.table_records as f64 / expected_changes.max(1) as f64),
        thousands(engine_cpu_rate),
    );
    println!(
        "  of that time the simulator (standing for Oracle) takes {source_share:.0}%, the \
         engine {:.0}%",
        100.0 - source_share
    );
    println!(
        "  with the Kafka records built on the same thread: {} Kafka records/s; RecordBuilder \
         alone: {} Kafka records/s",
        thousands(records_rate),
        thousands(build_rate)
    );
    Ok(())
}

// ---- the engine without Kafka ---------------------------------------------------------------

/// What the records of one capture look like.
#[derive(Debug, Clone, Default)]
struct Shape {
    /// Kafka records of changes (with tombstones), on the table topics.
    table_records: u64,
    key_bytes: u64,
    value_bytes: u64,
    header_bytes: u64,
    headers: u64,
    /// Records per table topic.
    topics: BTreeMap<String, u64>,
}

impl Shape {
    /// Headers per record, rounded.
    fn headers_per_record(&self) -> usize {
        let per = (self.headers as f64 / self.table_records.max(1) as f64).round();
        usize::try_from(per as u64).unwrap_or(1).max(1)
    }
    fn key_bytes(&self) -> u64 {
        self.key_bytes / self.table_records.max(1)
    }
    fn value_bytes(&self) -> u64 {
        self.value_bytes / self.table_records.max(1)
    }
    fn header_bytes(&self) -> u64 {
        self.header_bytes / self.table_records.max(1)
    }
}

#[derive(Debug)]
struct EnginePass {
    elapsed: Duration,
    changes: u64,
    steps: u64,
    idle_waits: u64,
    rows_mined: u64,
    window_logs: u64,
    /// Steps mined again with a redo dictionary (rows older than an ALTER).
    lag_replays: u64,
    shape: Shape,
    /// Time inside `RecordBuilder::append`.
    build_time: Duration,
    /// CPU time of the process during the pass (the engine, its decode pool, the builder).
    cpu: Duration,
    source: SourceTime,
}

/// Time spent inside the simulator's calls.
#[derive(Debug, Clone, Copy, Default)]
struct SourceTime {
    /// `current_scn`: the simulated database runs its next workload events.
    workload: Duration,
    /// `mine`: the simulated LogMiner renders the window's rows.
    mine: Duration,
    /// Log inventory, sessions, dictionary.
    other: Duration,
}

impl SourceTime {
    fn total(&self) -> Duration {
        self.workload + self.mine + self.other
    }
}

/// A source that times the calls of the one it wraps.
#[derive(Debug)]
struct Timed<S> {
    inner: S,
    time: SourceTime,
}

impl<S> Timed<S> {
    fn other<T>(&mut self, call: impl FnOnce(&mut S) -> T) -> T {
        let started = Instant::now();
        let out = call(&mut self.inner);
        self.time.other += started.elapsed();
        out
    }
}

impl<S: RedoSource> RedoSource for Timed<S> {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        self.other(|s| s.identity())
    }
    fn current_scn(&mut self) -> Result<Scn, SourceError> {
        let started = Instant::now();
        let out = self.inner.current_scn();
        self.time.workload += started.elapsed();
        out
    }
    fn log_inventory(&mut self, query: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        self.other(|s| s.log_inventory(query))
    }
    fn resolve_objects(
        &mut self,
        filter: &TableFilter<'_>,
    ) -> Result<Vec<CapturedObject>, SourceError> {
        self.other(|s| s.resolve_objects(filter))
    }
    fn table_layouts(&mut self, tables: &[TableId]) -> Result<Vec<TableLayout>, SourceError> {
        self.other(|s| s.table_layouts(tables))
    }
    fn last_ddl_after(
        &mut self,
        tables: &[TableId],
        scn: cdc_core::Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        self.other(|s| s.last_ddl_after(tables, scn))
    }
    fn start_session(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        self.other(|s| s.start_session(window))
    }
    fn end_session(&mut self) -> Result<(), SourceError> {
        self.other(|s| s.end_session())
    }
    fn build_dictionary(&mut self) -> Result<DictionaryBuild, SourceError> {
        self.other(|s| s.build_dictionary())
    }
    fn mine(
        &mut self,
        query: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        // the engine's sink only collects the rows; the time is the simulator's rendering
        let started = Instant::now();
        let out = self.inner.mine(query, sink);
        self.time.mine += started.elapsed();
        out
    }
    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        self.other(|s| s.active_transactions())
    }
    fn session_exists(&mut self, session: SessionRef) -> Result<bool, SourceError> {
        self.other(|s| s.session_exists(session))
    }
    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        self.other(|s| s.nls())
    }
    fn reconnect(&mut self) -> Result<(), SourceError> {
        self.other(|s| s.reconnect())
    }

    fn snapshot_reader(
        &mut self,
    ) -> Result<Box<dyn cdc_logminer::source::SnapshotReader>, SourceError> {
        self.other(|s| s.snapshot_reader())
    }
}

impl EnginePass {
    fn changes_per_s(&self) -> f64 {
        self.changes as f64 / self.elapsed.as_secs_f64()
    }
    fn records_per_s(&self) -> f64 {
        self.shape.table_records as f64 / self.elapsed.as_secs_f64()
    }
}

/// Counts what the engine emits and, with a builder, builds the Kafka records as the
/// delivery thread does.
struct BuildSink {
    builder: Option<RecordBuilder>,
    out: Vec<KafkaRecord>,
    changes: u64,
    shape: Shape,
    build_time: Duration,
    failure: Option<String>,
}

impl RecordSink for BuildSink {
    fn accept(&mut self, record: EngineRecord) -> Result<(), SinkClosed> {
        let is_change = matches!(record.kind, RecordKind::Change(_));
        if is_change {
            self.changes += 1;
        }
        let Some(builder) = self.builder.as_mut() else {
            return Ok(());
        };
        let context = RecordContext {
            now_ms: now_ms(),
            split: false,
        };
        self.out.clear();
        let started = Instant::now();
        let built = builder.append(&record, context, &mut self.out);
        self.build_time += started.elapsed();
        if let Err(error) = built {
            self.failure = Some(error.to_string());
            return Err(SinkClosed);
        }
        if is_change {
            for r in &self.out {
                self.shape.table_records += 1;
                self.shape.key_bytes += r.key.as_ref().map_or(0, Vec::len) as u64;
                self.shape.value_bytes += r.value.as_ref().map_or(0, Vec::len) as u64;
                self.shape.header_bytes += r
                    .headers
                    .iter()
                    .map(|h| (h.name.len() + h.value.len()) as u64)
                    .sum::<u64>();
                self.shape.headers += r.headers.len() as u64;
                *self.shape.topics.entry(r.topic.to_string()).or_default() += 1;
            }
        }
        Ok(())
    }
}

/// The engine over the simulator as the task runs it (the same source, settings, clock and
/// idle wait; with `--live` the simulated database runs its workload as it is mined, otherwise
/// it ran before the clock starts), until it emitted every expected change; with `build`, the
/// Kafka records are built as the delivery thread builds them.
fn engine_pass(config: &CdcConfig, expected: u64, build: bool) -> Result<EnginePass, Error> {
    // with cdc.sim.backlog the workload runs here, before the clock starts
    let source = Timed {
        inner: sim_source(config, None)?,
        time: SourceTime::default(),
    };
    let cpu_before = process_ticks();
    let started = Instant::now();
    let settings = EngineSettings::from_config(config);
    let idle_wait = settings.idle_wait;
    let mut engine = CaptureEngine::open(source, settings, None, Box::new(SystemClock::default()))?;
    let database = engine.source_mut().identity()?.name;
    let mut sink = BuildSink {
        builder: build.then(|| RecordBuilder::new(RecordSettings::from_config(config, &database))),
        out: Vec::new(),
        changes: 0,
        shape: Shape::default(),
        build_time: Duration::ZERO,
        failure: None,
    };
    let mut idle_waits = 0;
    while sink.changes < expected {
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
        if report.rows == 0 && !report.retried {
            idle_waits += 1;
            std::thread::sleep(idle_wait);
        }
        if started.elapsed() > RUN_TIMEOUT {
            return Err(format!(
                "the engine emitted {} of {expected} changes in {RUN_TIMEOUT:?}",
                sink.changes
            )
            .into());
        }
    }
    let metrics = engine.metrics();
    let cpu = ticks_to_duration(process_ticks().saturating_sub(cpu_before));
    Ok(EnginePass {
        cpu,
        elapsed: started.elapsed(),
        changes: sink.changes,
        steps: metrics.steps,
        idle_waits,
        rows_mined: metrics.rows_mined,
        window_logs: metrics.window_logs,
        lag_replays: metrics.lag_replays,
        shape: sink.shape,
        build_time: sink.build_time,
        source: engine.source().time,
    })
}

// ---- the connector ----------------------------------------------------------------------------

#[derive(Debug)]
struct ConnectorRun {
    /// From the connector's start until every record was acknowledged.
    elapsed: Duration,
    /// From the start until the first record was sent (producer, topics, offsets, source),
    /// and how many were sent by the time that was seen.
    first_send: Duration,
    records_at_first_send: u64,
    /// From the start until the first record was acknowledged (topics, producer, offsets).
    first_ack: Duration,
    /// Kafka records sent and acknowledged (changes, tombstones, side records).
    records: u64,
    /// Records acknowledged by the first time any was.
    records_at_first_ack: u64,
    bytes: u64,
    kafka_transactions: u64,
    /// Offset records written (ALO: by the offsets thread; EOS: one per Kafka transaction).
    offsets_written: u64,
    peak_queue: u64,
    /// Mining steps the engine took, and rows it mined.
    steps: u64,
    rows_mined: u64,
    cpu: CpuUse,
    verified: Option<String>,
}

impl ConnectorRun {
    /// The rate from the first record sent, as the bare producer's is measured.
    fn records_per_s(&self) -> f64 {
        let span = self.elapsed.saturating_sub(self.first_send).as_secs_f64();
        self.records.saturating_sub(self.records_at_first_send) as f64 / span.max(1e-9)
    }
    /// The rate from the connector's start, startup included.
    fn records_per_s_from_start(&self) -> f64 {
        self.records as f64 / self.elapsed.as_secs_f64()
    }
    /// The rate once the first record was acknowledged: without the start-up.
    fn steady_records_per_s(&self) -> f64 {
        let span = self.elapsed.saturating_sub(self.first_ack).as_secs_f64();
        self.records.saturating_sub(self.records_at_first_ack) as f64 / span.max(1e-9)
    }
}

/// Whether everything the simulator's history makes was sent and acknowledged: the engine
/// emitted every expected change and the queue is empty; as many records were sent as the
/// engine pass built for the tables plus the side records the engine emitted; and every
/// record sent was acknowledged — under exactly-once a record counts when its Kafka
/// transaction committed, and each commit adds its offset record.
fn delivered(m: &MetricsSnapshot, mode: Mode, table_records: u64, changes: u64) -> bool {
    let d = &m.delivery;
    let side = m.engine.heartbeats_sent + m.engine.ops_events + m.engine.dlq_records;
    let mined_all = m.engine.records.saturating_sub(side) >= changes;
    let all_sent = mined_all && d.records_sent >= table_records + side;
    let all_acked = match mode {
        Mode::AtLeastOnce => d.records_acknowledged >= d.records_sent,
        Mode::ExactlyOnce => {
            d.records_acknowledged >= d.records_sent + d.kafka_transactions_committed
        }
    };
    all_sent && all_acked && d.queue_depth == 0
}

fn connector_run(
    o: &Options,
    run: &str,
    mode: Mode,
    start_scn: u64,
    shape: &Shape,
    expected_changes: u64,
) -> Result<ConnectorRun, Error> {
    let given = connector_config(o, run, mode, Some(start_scn));
    let config = validated(&given)?;
    let connector = Arc::new(Connector::new(config.clone(), &given, "bench".to_owned()));
    // replaced at the first send: the CPU use is that of the timed part, as the rate is
    let mut cpu_before = cpu_snapshot(o.broker_pid);
    let started = Instant::now();
    let runner = {
        let connector = Arc::clone(&connector);
        // the task's delivery loop runs on this thread: named, so profiles tell it apart
        std::thread::Builder::new()
            .name("oracle-cdc-task".to_owned())
            .spawn(move || connector.supervise(true))?
    };
    let mut first_ack: Option<(Duration, u64)> = None;
    let mut first_send: Option<(Duration, u64)> = None;
    let mut peak_queue = 0;
    // the first poll that saw everything delivered: it counts once the next poll agrees (the
    // bridge may add side records of its own, and the last record may be between the queue
    // and the producer)
    let mut seen_done: Option<(Duration, u64, u64, CpuSnapshot)> = None;
    let outcome = loop {
        std::thread::sleep(POLL_EVERY);
        let m = connector.metrics();
        // the depth is counted after the send, so it may read as −1 (u64::MAX) for a moment
        if m.delivery.queue_depth < u64::MAX / 2 {
            peak_queue = peak_queue.max(m.delivery.queue_depth);
        }
        if first_send.is_none() && m.delivery.records_sent > 0 {
            first_send = Some((started.elapsed(), m.delivery.records_sent));
            cpu_before = cpu_snapshot(o.broker_pid);
        }
        if first_ack.is_none() && m.delivery.records_acknowledged > 0 {
            first_ack = Some((started.elapsed(), m.delivery.records_acknowledged));
        }
        let counts = (m.delivery.records_sent, m.delivery.records_acknowledged);
        if delivered(&m, mode, shape.table_records, expected_changes) {
            match seen_done.take() {
                Some((elapsed, sent, acked, cpu_after)) if (sent, acked) == counts => {
                    let timed = elapsed.saturating_sub(first_send.map_or(Duration::ZERO, |f| f.0));
                    let cpu = cpu_use(&cpu_before, &cpu_after, timed);
                    break Ok((elapsed, m, cpu));
                }
                _ => {
                    let elapsed = started.elapsed();
                    let cpu_after = cpu_snapshot(o.broker_pid);
                    seen_done = Some((elapsed, counts.0, counts.1, cpu_after));
                }
            }
        } else {
            seen_done = None;
        }
        if runner.is_finished() {
            break Err("the connector stopped before it delivered everything".to_owned());
        }
        if started.elapsed() > RUN_TIMEOUT {
            break Err(format!(
                "not delivered within {RUN_TIMEOUT:?}: {:?}",
                m.delivery
            ));
        }
    };
    connector.shutdown();
    let stopped = runner.join();
    let (elapsed, m, cpu) = match (outcome, stopped) {
        (Ok(done), Ok(Ok(()))) => done,
        (Err(why), Ok(Err(error))) => return Err(format!("{why}: {error}").into()),
        (Err(why), _) => return Err(why.into()),
        (Ok(_), Ok(Err(error))) => return Err(format!("the connector failed: {error}").into()),
        (_, Err(_)) => return Err("the connector's thread panicked".into()),
    };
    let (first_ack, records_at_first_ack) = first_ack.unwrap_or((elapsed, 0));
    let (first_send, records_at_first_send) = first_send.unwrap_or((Duration::ZERO, 0));
    let verified = if o.verify {
        Some(verify(o, &config, shape.table_records, expected_changes)?)
    } else {
        None
    };
    Ok(ConnectorRun {
        elapsed,
        first_send,
        records_at_first_send,
        first_ack,
        records: m.delivery.records_sent,
        records_at_first_ack,
        bytes: m.delivery.bytes_sent,
        kafka_transactions: m.delivery.kafka_transactions_committed,
        offsets_written: m.delivery.offsets_committed,
        peak_queue,
        steps: m.engine.steps,
        rows_mined: m.engine.rows_mined,
        cpu,
        verified,
    })
}

/// Reads the run's table topics back (`read_committed`) and checks every expected change is
/// there: as many table records as the engine pass built, and every (xid, event index).
fn verify(
    o: &Options,
    config: &CdcConfig,
    table_records: u64,
    expected_changes: u64,
) -> Result<String, Error> {
    let topics = &config.topics;
    let side: BTreeSet<&String> = [
        &topics.ops,
        &topics.heartbeat,
        &topics.dlq,
        &topics.schema,
        &topics.signals,
        &topics.txjournal,
        &topics.transactions,
    ]
    .into_iter()
    .collect();
    let prefix = format!("{}.", topics.prefix);
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &o.bootstrap)
        .set("group.id", "oracle-cdc-bench-verify")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("isolation.level", "read_committed")
        .set_log_level(RDKafkaLogLevel::Error)
        .create()?;
    let metadata = consumer.fetch_metadata(None, Duration::from_secs(10))?;
    let mut assignment = TopicPartitionList::new();
    for topic in metadata.topics() {
        if topic.name().starts_with(&prefix) && !side.contains(&topic.name().to_owned()) {
            for partition in topic.partitions() {
                assignment.add_partition_offset(topic.name(), partition.id(), Offset::Beginning)?;
            }
        }
    }
    consumer.assign(&assignment)?;
    let mut records = 0u64;
    let mut changes: HashSet<(Vec<u8>, Vec<u8>)> = HashSet::new();
    let mut last_progress = Instant::now();
    while records < table_records && last_progress.elapsed() < Duration::from_secs(10) {
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(message)) => {
                records += 1;
                last_progress = Instant::now();
                if message.payload().is_some()
                    && let Some(headers) = message.headers()
                {
                    let header = |name: &str| {
                        headers
                            .iter()
                            .find(|h| h.key == name)
                            .and_then(|h| h.value)
                            .map(<[u8]>::to_vec)
                    };
                    if let (Some(xid), Some(index)) = (header("cdc.xid"), header("cdc.event_index"))
                    {
                        changes.insert((xid, index));
                    }
                }
            }
            Some(Err(KafkaError::PartitionEOF(_))) | None => {}
            Some(Err(error)) => return Err(error.into()),
        }
    }
    let distinct = changes.len() as u64;
    if records != table_records || distinct != expected_changes {
        return Err(format!(
            "read back {records} table records (expected {table_records}) holding {distinct} \
             distinct changes (expected {expected_changes})"
        )
        .into());
    }
    Ok(format!("{records} records, {distinct} changes, all there"))
}

// ---- the bare producer ------------------------------------------------------------------------

#[derive(Debug)]
struct BareRun {
    elapsed: Duration,
    records: u64,
    record_bytes: u64,
    cpu: CpuUse,
}

impl BareRun {
    fn records_per_s(&self) -> f64 {
        self.records as f64 / self.elapsed.as_secs_f64()
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

/// What the bare producer sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bare {
    /// Records of the connector's average size to one fresh topic, one header: the
    /// broker's best case, for diagnosis.
    Plain,
    /// What the connector sends: as many headers, spread over as many topics in the same
    /// proportions, and under exactly-once an offset record in each Kafka transaction. The
    /// target ratio is against this one.
    Shaped,
}

/// As many records as the connector sent, of its average key, value and header sizes, with
/// the connector producer's settings: idempotent, `acks=all`, its `linger.ms`, TCP_NODELAY, the Java
/// partitioner; under exactly-once transactional, with a commit every
/// `cdc.eos.batch.max.records` records. Timed from the first send to the last
/// acknowledgement (or commit).
fn bare_run(
    o: &Options,
    topic: &str,
    mode: Mode,
    bare: Bare,
    connector: &ConnectorRun,
    shape: &Shape,
    config: &CdcConfig,
) -> Result<BareRun, Error> {
    let records = connector.records;
    // bytes_sent counts keys and values; the split between them and the headers' size are
    // those of the engine pass's table records
    let record_bytes = connector.bytes / records.max(1);
    let key_len = usize::try_from(shape.key_bytes().min(record_bytes)).unwrap_or(0);
    let value_len = usize::try_from(record_bytes)
        .unwrap_or(0)
        .saturating_sub(key_len);
    let value = vec![b'v'; value_len];
    let header_count = match bare {
        Bare::Plain => 1,
        Bare::Shaped => shape.headers_per_record(),
    };
    let header_names: Vec<String> = (0..header_count).map(|i| format!("bench.h{i}")).collect();
    let header_value = vec![
        b'h';
        (usize::try_from(shape.header_bytes()).unwrap_or(0) / header_count)
            .saturating_sub(header_names.first().map_or(0, String::len))
    ];
    let topics: Vec<String> = match bare {
        Bare::Plain => vec![topic.to_owned()],
        Bare::Shaped => (0..shape.topics.len().max(1))
            .map(|i| format!("{topic}-{i}"))
            .collect(),
    };
    let schedule = match bare {
        Bare::Plain => vec![0],
        Bare::Shaped => weighted_schedule(&shape.topics.values().copied().collect::<Vec<_>>()),
    };
    let offsets_topic = format!("{topic}-offsets");
    let offset_records = bare == Bare::Shaped && mode == Mode::ExactlyOnce;

    let mut admin = KafkaClients::plain(o.bootstrap.clone()).admin()?;
    for t in &topics {
        admin.ensure(&TopicSpec::plain(t.as_str()))?;
    }
    if offset_records {
        admin.ensure(&TopicSpec::plain(offsets_topic.as_str()))?;
    }
    // the connector's producer lingers 5 ms unless cdc.kafka.linger.ms says otherwise
    let linger = config
        .kafka
        .client_properties
        .iter()
        .find(|(k, _)| *k == "linger.ms")
        .map_or("5", |(_, v)| v.expose());
    let mut client = ClientConfig::new();
    client
        .set("bootstrap.servers", &o.bootstrap)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("partitioner", "murmur2_random")
        .set("linger.ms", linger)
        // as every client of the connector's (cdc_journal::kafka::client_config)
        .set("socket.nagle.disable", "true")
        .set_log_level(RDKafkaLogLevel::Warning);
    if mode == Mode::ExactlyOnce {
        client.set("transactional.id", format!("{topic}-txn"));
    }
    let producer: ThreadedProducer<Counting> = client.create_with_context(Counting::default())?;
    let batch = match mode {
        Mode::ExactlyOnce => {
            producer.init_transactions(Duration::from_secs(30))?;
            config.eos.batch_max_records.max(1)
        }
        Mode::AtLeastOnce => u64::MAX,
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

    let cpu_before = cpu_snapshot(o.broker_pid);
    let started = Instant::now();
    let mut key = vec![b'k'; key_len];
    let mut sent = 0u64;
    let mut extra = 0u64;
    while sent < records {
        let end = records.min(sent.saturating_add(batch));
        if mode == Mode::ExactlyOnce {
            producer.begin_transaction()?;
        }
        for i in sent..end {
            // distinct keys, as the connector's rows have
            let digits = i.to_string();
            let take = digits.len().min(key_len);
            key[key_len - take..].copy_from_slice(&digits.as_bytes()[digits.len() - take..]);
            let mut headers = OwnedHeaders::new_with_capacity(header_count);
            for name in &header_names {
                headers = headers.insert(Header {
                    key: name,
                    value: Some(header_value.as_slice()),
                });
            }
            let slot = usize::try_from(i).unwrap_or(0) % schedule.len();
            let to = schedule
                .get(slot)
                .and_then(|&t| topics.get(t))
                .map_or(topic, String::as_str);
            send(
                BaseRecord::to(to)
                    .key(key.as_slice())
                    .payload(value.as_slice())
                    .headers(headers),
            )?;
        }
        if mode == Mode::ExactlyOnce {
            if offset_records {
                send(
                    BaseRecord::to(&offsets_topic)
                        .key(b"[\"oracle-cdc-bench\"]".as_slice())
                        .payload(offset_value.as_slice()),
                )?;
                extra += 1;
            }
            settle(&producer);
            producer.commit_transaction(Duration::from_secs(30))?;
        }
        sent = end;
    }
    settle(&producer);
    producer.flush(RUN_TIMEOUT)?;
    let elapsed = started.elapsed();
    let cpu = cpu_use(&cpu_before, &cpu_snapshot(o.broker_pid), elapsed);
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
        elapsed,
        records,
        record_bytes,
        cpu,
    })
}

/// Waits until every record sent has its delivery report (served by the producer's thread),
/// as the connector's producer does before a flush or a commit: rdkafka's flush, also the
/// first step of its commit, waits in polls of up to 100 ms that run to their end, which
/// would add up to 100 ms to each bare transaction and to each bare run's end.
fn settle(producer: &ThreadedProducer<Counting>) {
    let deadline = Instant::now() + RUN_TIMEOUT;
    while producer.in_flight_count() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Topic indexes in proportion to `weights`, interleaved (smooth weighted round robin), one
/// cycle of at most 1 000 slots.
fn weighted_schedule(weights: &[u64]) -> Vec<usize> {
    let total: u64 = weights.iter().sum();
    if total == 0 {
        return vec![0];
    }
    let slots = 1_000u64;
    let scaled: Vec<i64> = weights
        .iter()
        .map(|w| i64::try_from((w * slots).div_ceil(total)).unwrap_or(1))
        .collect();
    let sum: i64 = scaled.iter().sum();
    let mut credit = vec![0i64; scaled.len()];
    let mut schedule = Vec::new();
    for _ in 0..sum {
        for (c, w) in credit.iter_mut().zip(&scaled) {
            *c += w;
        }
        let Some((best, _)) = credit.iter().enumerate().max_by_key(|(_, c)| **c) else {
            break;
        };
        credit[best] -= sum;
        schedule.push(best);
    }
    if schedule.is_empty() {
        schedule.push(0);
    }
    schedule
}

/// The median time of creating a fresh topic with the connector's `TopicAdmin::ensure`
/// (create, then wait until metadata shows it), over `count` topics, deleted afterwards.
fn topic_creation(o: &Options, run: &str, count: usize) -> Result<Duration, Error> {
    let mut admin = KafkaClients::plain(o.bootstrap.clone()).admin()?;
    let mut took = Vec::with_capacity(count);
    for i in 0..count {
        let started = Instant::now();
        admin.ensure(&TopicSpec::plain(format!("oracle-cdc-bench-{run}-{i}")))?;
        took.push(started.elapsed().as_secs_f64());
    }
    delete_topics_of(o, run);
    Ok(Duration::from_secs_f64(median(took.into_iter())))
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

/// The resident memory of a process (`VmRSS`), as /proc shows it.
fn resident_memory(pid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    Some(line.trim_start_matches("VmRSS:").trim().to_owned())
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

// ---- CPU use ----------------------------------------------------------------------------------

/// Clock ticks per second of `/proc/*/stat` and `/proc/stat` (USER_HZ: 100 on Linux).
const TICKS_PER_S: u64 = 100;

fn ticks_to_duration(ticks: u64) -> Duration {
    Duration::from_millis(ticks * 1000 / TICKS_PER_S)
}

/// User and system time of a process, threads that ended included (`/proc/PID/stat`).
fn stat_ticks(path: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // the fields after the command name, which is in parentheses and may hold spaces:
    // state is field 3, utime field 14, stime field 15
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn process_ticks() -> u64 {
    stat_ticks("/proc/self/stat").unwrap_or(0)
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

/// One thread's schedstat: nanoseconds on a CPU and waiting for one (runnable).
#[derive(Debug, Clone, Default)]
struct ThreadTime {
    name: String,
    on_cpu: u64,
    runnable: u64,
}

/// CPU time at one moment: each live thread of this process (by id), the process, the
/// broker's process and the whole machine.
#[derive(Debug, Clone, Default)]
struct CpuSnapshot {
    threads: HashMap<String, ThreadTime>,
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
            let times: Vec<u64> = std::fs::read_to_string(dir.join("schedstat"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|v| v.parse().ok())
                .collect();
            if let [on_cpu, runnable, ..] = times[..] {
                let id = entry.file_name().to_string_lossy().into_owned();
                let name = name.trim().to_owned();
                threads.insert(
                    id,
                    ThreadTime {
                        name,
                        on_cpu,
                        runnable,
                    },
                );
            }
        }
    }
    CpuSnapshot {
        threads,
        process: process_ticks(),
        broker: broker_pid.and_then(|pid| stat_ticks(&format!("/proc/{pid}/stat"))),
        machine: machine_ticks(),
    }
}

/// Cores busy over an interval, by part.
#[derive(Debug, Clone, Copy, Default)]
struct CpuUse {
    /// The mining thread and the decode pool.
    mining: f64,
    /// The mining thread alone: the share of the interval it was runnable but waited for a
    /// CPU, and the share it was neither running nor runnable (blocked on the full queue,
    /// waiting for the decode pool, idle).
    mining_runnable: f64,
    mining_blocked: f64,
    /// The same for the task's thread (the delivery loop).
    delivery_runnable: f64,
    delivery_blocked: f64,
    /// The task's thread: the delivery loop (record building, sending, Kafka transactions).
    delivery: f64,
    /// librdkafka's threads (the producer's, the offsets store's).
    rdkafka: f64,
    /// The rest of this process: the bench's own thread, the offsets thread, ended threads.
    rest: f64,
    broker: Option<f64>,
    /// Every other process on the machine.
    others: Option<f64>,
}

fn cpu_use(before: &CpuSnapshot, after: &CpuSnapshot, wall: Duration) -> CpuUse {
    let wall = wall.as_secs_f64().max(1e-9);
    let mut by_part = [0.0f64; 3];
    let (mut mining_runnable, mut mining_blocked) = (0.0, 0.0);
    let (mut delivery_runnable, mut delivery_blocked) = (0.0, 0.0);
    for (id, now) in &after.threads {
        let earlier = before.threads.get(id).cloned().unwrap_or_default();
        let seconds = now.on_cpu.saturating_sub(earlier.on_cpu) as f64 / 1e9;
        let name = &now.name;
        let runnable = now.runnable.saturating_sub(earlier.runnable) as f64 / 1e9 / wall;
        let blocked = (1.0 - seconds / wall - runnable).max(0.0);
        if name.starts_with("oracle-cdc-mini") {
            (mining_runnable, mining_blocked) = (runnable, blocked);
        } else if name == "oracle-cdc-task" {
            (delivery_runnable, delivery_blocked) = (runnable, blocked);
        }
        let part = if name.starts_with("oracle-cdc-mini") || name.starts_with("cdc-decode") {
            0
        } else if name == "oracle-cdc-task" {
            1
        } else if name.starts_with("rdk:") || name.starts_with("producer pollin") {
            2
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
    CpuUse {
        mining: by_part[0] / wall,
        mining_runnable,
        mining_blocked,
        delivery_runnable,
        delivery_blocked,
        delivery: by_part[1] / wall,
        rdkafka: by_part[2] / wall,
        rest: (process - by_part.iter().sum::<f64>()).max(0.0) / wall,
        broker: broker.map(|b| b / wall),
        others: others.map(|o| o / wall),
    }
}

/// The median of each part over several runs.
fn median_cpu<'a>(uses: impl Iterator<Item = &'a CpuUse> + Clone) -> CpuUse {
    let optional = |f: fn(&CpuUse) -> Option<f64>| {
        let values: Vec<f64> = uses.clone().filter_map(f).collect();
        (!values.is_empty()).then(|| median(values.into_iter()))
    };
    CpuUse {
        mining: median(uses.clone().map(|u| u.mining)),
        mining_runnable: median(uses.clone().map(|u| u.mining_runnable)),
        mining_blocked: median(uses.clone().map(|u| u.mining_blocked)),
        delivery_runnable: median(uses.clone().map(|u| u.delivery_runnable)),
        delivery_blocked: median(uses.clone().map(|u| u.delivery_blocked)),
        delivery: median(uses.clone().map(|u| u.delivery)),
        rdkafka: median(uses.clone().map(|u| u.rdkafka)),
        rest: median(uses.clone().map(|u| u.rest)),
        broker: optional(|u| u.broker),
        others: optional(|u| u.others),
    }
}

impl CpuUse {
    /// Cores of this process: the connector (or the bare producer) and the bench.
    fn process(&self) -> f64 {
        self.mining + self.delivery + self.rdkafka + self.rest
    }
}

impl std::fmt::Display for CpuUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
        if self.mining + self.delivery > 0.0 {
            write!(
                f,
                "mining {:.2} (its thread also waited {:.0}% of the time for a CPU, was \
                 blocked {:.0}%), delivery {:.2} (waited {:.0}%, blocked {:.0}%), librdkafka \
                 {:.2}, rest {:.2}",
                self.mining,
                self.mining_runnable * 100.0,
                self.mining_blocked * 100.0,
                self.delivery,
                self.delivery_runnable * 100.0,
                self.delivery_blocked * 100.0,
                self.rdkafka,
                self.rest,
            )?;
        } else {
            write!(
                f,
                "producing thread {:.2}, librdkafka {:.2}",
                self.rest, self.rdkafka
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
