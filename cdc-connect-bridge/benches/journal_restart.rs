//! `cargo x bench journal`: a connector restarted with 1 000 journaled open transactions of
//! 1 000 changes each (a million changes), from the start of its process to the first record
//! it delivers, and its peak RSS.
//!
//! 1. **Before** (not timed, in this process): a simulated database where 1 000 sessions each
//!    update their own row of APP.ORDER_LINES 1 000 times, round after round, none committing.
//!    A connector task (the worker's own, `run_task_with_source`, at-least-once, the default
//!    buffer budget of 256 MiB, spill on) captures it with `cdc.txjournal.threshold.events=100`:
//!    every transaction is journaled and its chunks appended step after step, until the
//!    committed resume position has moved past the start of the last round (the journal's
//!    bound: the last journaled change of the first session). The task is then stopped.
//! 2. **Restart** (timed, a fresh process, `--restart`): the same database, where the first
//!    session then commits. Its task reads the offset, rebuilds the 1 000 transactions from the
//!    journal topic, mines from the bound and delivers the committed transaction's 1 000
//!    records. Measured: from the process's start, and from the task's start, to the first
//!    record acknowledged and to the last of the 1 000; the peak RSS.
//!
//! The simulated database lives in the restarted process (Oracle would not): building it takes
//! time and memory that are the database's, so the process reports them apart. Its peak RSS
//! is reset once the database is built (`/proc/self/clear_refs`), and the connector's share is
//! the peak after that, less the RSS at that moment.
//!
//! Target (issue 26): under 2 s, RSS within the buffer budget plus 64 MiB (320 MiB).
//!
//! Run: `cargo x bench journal` (starts a Tansu unless `CDC_TEST_BOOTSTRAP` names a broker),
//! or `cargo bench -p cdc-connect-bridge --features malloc-override --bench journal_restart --
//! --bootstrap HOST:PORT [--runs N] [--spill-dir DIR]` (the spill directory's file system
//! matters: ext4 without a journal, as on the machine of `docs/benchmarks.md`, skips inodes
//! deleted in the last seconds when it allocates one, and each of the 1 000 spill files the
//! restart creates pays for those the stopped task had just deleted).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cdc_connect_bridge::worker::{TaskOptions, TaskSignals, TaskStats, run_task_with_source};
use cdc_core::config::{CdcConfig, Config};
use cdc_core::{Scn, Value};
use cdc_logminer::sim::{
    ColumnSpec, DbOp, Organization, RowSel, SimConfig, SimDatabase, SimSource, TableSpec,
};

/// The allocator of the `oracle-cdc` binary, so the bench measures what ships.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TRANSACTIONS: u32 = 1_000;
const CHANGES: u32 = 1_000;
/// How long the journaling run may take to journal everything.
const BEFORE_TIMEOUT: Duration = Duration::from_secs(240);
const RESTART_TIMEOUT: Duration = Duration::from_secs(300);

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn col(name: &str, ty: &str) -> ColumnSpec {
    ColumnSpec {
        name: name.into(),
        data_type: ty.into(),
        nullable: true,
    }
}

fn number(n: u64) -> Value {
    Value::Number(cdc_core::Decimal::try_new(i128::from(n), 0).unwrap())
}

/// The database: rows inserted and committed, then the rounds of updates; with `commit`, the
/// first session commits at the end. Returns it with the SCN before the last round began and
/// the SCN to capture from.
fn database(commit: bool) -> (SimDatabase, Scn, Scn) {
    let mut db = SimDatabase::new(SimConfig {
        seed: 26,
        // logs of an ordinary production size: a step mines a few of them
        log_size_bytes: 32 << 20,
        // every change reaches the redo as it is made (a private strand would hold the last
        // ones of each transaction back until it commits)
        private_strands: false,
        tables: Some(vec![TableSpec {
            pdb: None,
            owner: "APP".into(),
            name: "ORDER_LINES".into(),
            columns: vec![
                col("ID", "NUMBER(12)"),
                col("AMOUNT", "NUMBER(12,2)"),
                col("NOTE", "VARCHAR2(100)"),
                col("STATUS", "VARCHAR2(20)"),
                col("QTY", "NUMBER"),
                col("TAG", "RAW(16)"),
            ],
            primary_key: vec!["ID".into()],
            unique_indexes: vec![],
            organization: Organization::Heap,
        }]),
        ..SimConfig::default()
    })
    .unwrap();
    let start = db.current_scn();
    let table = "APP.ORDER_LINES".to_owned();
    for n in 0..TRANSACTIONS {
        db.apply(&DbOp::Insert {
            session: "loader".into(),
            table: table.clone(),
            row: vec![
                ("ID".into(), number(u64::from(n))),
                ("AMOUNT".into(), number(0)),
                ("NOTE".into(), Value::Text(format!("order line {n}"))),
                ("STATUS".into(), Value::Text("OPEN".into())),
                ("QTY".into(), number(0)),
                ("TAG".into(), Value::Raw(vec![0xab; 16])),
            ],
            fails: false,
        })
        .unwrap();
    }
    db.apply(&DbOp::Commit {
        session: "loader".into(),
    })
    .unwrap();
    let mut last_round = Scn(0);
    for k in 0..CHANGES {
        if k + 1 == CHANGES {
            last_round = db.current_scn();
        }
        for n in 0..TRANSACTIONS {
            db.apply(&DbOp::Update {
                session: format!("s{n}").into(),
                table: table.clone(),
                rows: vec![RowSel::Match(vec![("ID".into(), number(u64::from(n)))])],
                set: vec![
                    ("AMOUNT".into(), number(u64::from(k) * 37)),
                    ("NOTE".into(), Value::Text(format!("line {k} of order {n}"))),
                    ("STATUS".into(), Value::Text("SHIPPED".into())),
                    ("QTY".into(), number(u64::from(k))),
                ],
            })
            .unwrap();
        }
    }
    if commit {
        db.apply(&DbOp::Commit {
            session: "s0".into(),
        })
        .unwrap();
    }
    (db, last_round, start)
}

fn config(bootstrap: &str, run: &str, spill: &std::path::Path, start: Scn) -> CdcConfig {
    Config::from_pairs([
        ("name", format!("journal-bench-{run}")),
        // the task is given its source; the key only spares the Oracle connection settings
        ("cdc.source", "sim".to_owned()),
        ("bootstrap.servers", bootstrap.to_owned()),
        (
            "offset.storage.topic",
            format!("journal-bench-offsets-{run}"),
        ),
        ("cdc.topic.prefix", format!("jbench{run}")),
        ("cdc.tables.include", r"APP\.ORDER_LINES".to_owned()),
        ("cdc.start.scn", start.0.to_string()),
        // the restart is measured: no table is read whole
        ("cdc.snapshot.mode", "none".to_owned()),
        ("cdc.buffer.spill.dir", spill.display().to_string()),
        ("cdc.txjournal.threshold.events", "100".to_owned()),
        ("transaction.boundary", "poll".to_owned()),
    ])
    .validate()
    .unwrap()
}

fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

type Task = std::thread::JoinHandle<Result<(), cdc_connect_bridge::worker::TaskError>>;

fn start_task(config: CdcConfig, source: SimSource) -> (Arc<TaskStats>, Arc<TaskSignals>, Task) {
    let stats = Arc::new(TaskStats::default());
    let signals = Arc::new(TaskSignals::default());
    let task = {
        let (stats, signals) = (Arc::clone(&stats), Arc::clone(&signals));
        std::thread::Builder::new()
            .name("oracle-cdc-task".into())
            .spawn(move || {
                run_task_with_source(&config, &stats, &signals, TaskOptions::default(), |_| {
                    Ok(source)
                })
            })
            .unwrap()
    };
    (stats, signals, task)
}

fn stop(signals: &TaskSignals, task: Task) {
    signals.request_stop();
    task.join().unwrap().unwrap();
}

/// The journaling run: until the committed resume position is past `last_round`.
fn before(bootstrap: &str, run: &str, spill: &std::path::Path) {
    let made = Instant::now();
    let (db, last_round, start) = database(false);
    eprintln!(
        "run {run}: the database made in {:.1} s",
        made.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let (stats, signals, task) =
        start_task(config(bootstrap, run, spill, start), SimSource::new(db));
    loop {
        std::thread::sleep(Duration::from_millis(200));
        if task.is_finished() {
            panic!("the journaling run ended: {:?}", task.join().unwrap());
        }
        if stats.resume_scn().is_some_and(|scn| scn > last_round) {
            break;
        }
        if started.elapsed() > BEFORE_TIMEOUT {
            let engine = *stats.engine.lock();
            panic!(
                "the journal's bound did not move past the last round (SCN {last_round:?}): resume SCN {:?}, {engine:?}",
                stats.resume_scn()
            );
        }
    }
    let engine = *stats.engine.lock();
    eprintln!(
        "run {run}: journaled {} transactions in {} chunks in {:.1} s, resume SCN {:?}",
        engine.journaled_transactions,
        engine.journal_chunks,
        started.elapsed().as_secs_f64(),
        stats.resume_scn()
    );
    assert_eq!(engine.journaled_transactions, u64::from(TRANSACTIONS));
    stop(&signals, task);
}

/// The restarted process: prints `restart` and its measurements.
fn restart(bootstrap: &str, run: &str, spill: &std::path::Path, process: Instant) {
    let (db, _, start) = database(true);
    let database_s = process.elapsed().as_secs_f64();
    // the peak from here on is the connector's (the database stays resident beside it)
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let baseline = status_mib("VmRSS:");
    let task_start = Instant::now();
    let (stats, signals, task) =
        start_task(config(bootstrap, run, spill, start), SimSource::new(db));
    let mut first = None;
    let all = loop {
        std::thread::sleep(Duration::from_millis(1));
        let delivery = stats.delivery();
        if first.is_none() && delivery.records_acknowledged > 0 {
            first = Some(task_start.elapsed());
        }
        let engine = *stats.engine.lock();
        if engine.transactions_committed >= 1 && delivery.records_acknowledged >= u64::from(CHANGES)
        {
            break task_start.elapsed();
        }
        if task.is_finished() {
            panic!("the restarted task ended: {:?}", task.join().unwrap());
        }
        assert!(task_start.elapsed() < RESTART_TIMEOUT, "nothing delivered");
    };
    let peak = status_mib("VmHWM:");
    let engine = *stats.engine.lock();
    let first = first.unwrap();
    stop(&signals, task);
    println!(
        "restart {database_s} {} {} {} {peak} {baseline} {} {}",
        first.as_secs_f64(),
        all.as_secs_f64(),
        engine.transactions_committed,
        engine.events_applied,
        engine.rows_mined
    );
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let process = Instant::now();
    // `cargo bench` passes --bench (and the restarted process --restart); `cargo test
    // --all-targets` runs bench targets without them, and this one needs a broker and minutes
    if !std::env::args().any(|arg| arg == "--bench" || arg == "--restart") {
        eprintln!("journal_restart: not run as a test; `cargo x bench journal` runs it");
        return;
    }
    let bootstrap = arg("--bootstrap").expect("--bootstrap HOST:PORT");
    if let Some(run) = arg("--restart") {
        // the task's log, timed from the process's start: where the time went
        tracing_subscriber::fmt()
            .with_env_filter("info,rdkafka=warn")
            .with_timer(tracing_subscriber::fmt::time::uptime())
            .with_ansi(false)
            .with_writer(std::io::stderr)
            .init();
        let spill = arg("--spill").expect("--spill");
        restart(&bootstrap, &run, std::path::Path::new(&spill), process);
        return;
    }
    let runs: usize = arg("--runs").map_or(3, |r| r.parse().expect("--runs N"));
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let exe = std::env::current_exe().unwrap();
    let mut rows: Vec<[f64; 6]> = Vec::new();
    for i in 0..runs {
        let run = format!("{stamp}-{i}");
        // the restarted task finds the spill directory as the stopped one left it
        let spill = match arg("--spill-dir") {
            Some(dir) => tempfile::tempdir_in(dir).unwrap(),
            None => tempfile::tempdir().unwrap(),
        };
        before(&bootstrap, &run, spill.path());
        let out = Command::new(&exe)
            .args(["--bootstrap", &bootstrap, "--restart", &run])
            .args(["--spill", &spill.path().display().to_string()])
            .output()
            .unwrap();
        let line = String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.starts_with("restart "))
            .map(str::to_owned)
            .unwrap_or_else(|| {
                panic!(
                    "the restarted process failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        for log in String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("task starting") || l.contains("journal read back"))
        {
            println!("  {log}");
        }
        let f: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect();
        let [
            database_s,
            first,
            all,
            committed,
            applied,
            mined,
            peak,
            baseline,
        ] = [f[0], f[1], f[2], f[3], f[6], f[7], f[4], f[5]];
        println!(
            "run {i}: database built in {database_s:.2} s; task start → first record {:.3} s, → all {CHANGES} records {:.3} s; from process start {:.3} s; peak RSS {peak:.0} MiB, {:.0} MiB over the database's {baseline:.0} MiB ({committed} committed, {applied} events applied, {mined} rows mined)",
            first,
            all,
            database_s + first,
            peak - baseline,
        );
        rows.push([
            first,
            all,
            database_s + first,
            peak - baseline,
            peak,
            database_s,
        ]);
    }
    let column = |i: usize| median(&rows.iter().map(|r| r[i]).collect::<Vec<_>>());
    println!(
        "restart with {TRANSACTIONS} × {CHANGES} journaled changes, medians of {runs}: task start → first record {:.3} s (target < 2 s), → all {CHANGES} {:.3} s; process start → first record {:.3} s, of which {:.3} s building the simulated database; connector's peak RSS {:.0} MiB (target ≤ 256 + 64 MiB), process peak {:.0} MiB",
        column(0),
        column(1),
        column(2),
        column(5),
        column(3),
        column(4),
    );
}
