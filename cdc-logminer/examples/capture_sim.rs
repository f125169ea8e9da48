//! Runs the capture engine over the redo simulator and prints what it delivered.
//!
//! ```sh
//! cargo run -p cdc-logminer --example capture_sim -- [--seed N] [--changes N] [--show N]
//! ```
//!
//! A seeded workload (sessions, private strands, savepoints, rollbacks, an excluded user)
//! runs on a simulated database while the engine mines it in steps. At the end the delivered
//! changes are checked against the transactions the database committed, and a summary, a few
//! records and the last position (the offset a restart would use) are printed.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use cdc_core::TableId;
use cdc_logminer::engine::{CaptureEngine, EngineSettings, ManualClock, RecordKind};
use cdc_logminer::sim::{SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig};

fn captured(t: &TableId) -> bool {
    // APP.DOCS holds a CLOB, whose values are assembled by a later part of the product
    t.owner == "APP" && t.table != "DOCS"
}

fn arg(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} needs a whole number")),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("capture_sim: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seed = arg(&args, "--seed", 42)?;
    let changes = arg(&args, "--changes", 5000)?;
    let show = arg(&args, "--show", 3)? as usize;

    let db = SimDatabase::new(SimConfig {
        seed,
        ..SimConfig::default()
    })
    .map_err(|e| e.to_string())?;
    let workload = Workload::random(WorkloadConfig {
        seed,
        changes,
        ddl_rate: 0.0,
        ..WorkloadConfig::default()
    });
    // the database runs 16 workload events every time the engine asks for the current SCN
    let source = SimSource::with_workload(db, workload, 16);
    let spill = std::env::temp_dir().join(format!("oracle-cdc-capture-sim-{}", std::process::id()));
    let mut settings = EngineSettings::new("cdc", "capture-sim", captured);
    settings.buffer.spill_dir = spill.clone();
    settings.users_exclude = vec!["ETL_BATCH".into()];
    let clock = ManualClock::default();
    let mut engine = CaptureEngine::open(source, settings, None, Box::new(clock.clone()))
        .map_err(|e| e.to_string())?;

    let mut records = Vec::new();
    let mut quiet = 0;
    while quiet < 5 {
        let report = engine.step(&mut records).map_err(|e| e.to_string())?;
        quiet = if report.rows == 0 && !report.retried {
            quiet + 1
        } else {
            0
        };
        clock.advance(Duration::from_millis(250));
    }
    let _ = std::fs::remove_dir_all(&spill);

    let mut by_op: BTreeMap<&str, u64> = BTreeMap::new();
    let mut by_table: BTreeMap<String, u64> = BTreeMap::new();
    let mut transactions = 0;
    let mut shown = 0;
    for record in &records {
        match &record.kind {
            RecordKind::Change(c) => {
                *by_op.entry(c.event.change.op.code()).or_default() += 1;
                *by_table
                    .entry(c.event.change.table.to_string())
                    .or_default() += 1;
                if c.event_index == 0 {
                    transactions += 1;
                }
                if shown < show {
                    shown += 1;
                    let after: BTreeMap<&str, String> = c
                        .event
                        .change
                        .after
                        .iter()
                        .flatten()
                        .map(|cv| {
                            (
                                c.layout.columns[cv.column as usize].name.as_str(),
                                format!("{:?}", cv.value),
                            )
                        })
                        .collect();
                    println!(
                        "record: {} {} xid {} scn {} event {}/{} after {:?}",
                        c.event.change.op.code(),
                        c.event.change.table,
                        c.commit.con_xid,
                        c.event.scn,
                        c.event_index + 1,
                        c.commit.event_count,
                        after
                    );
                }
            }
            RecordKind::Heartbeat { .. } => *by_op.entry("heartbeat").or_default() += 1,
            RecordKind::Ops(_) => *by_op.entry("ops").or_default() += 1,
            RecordKind::Dlq(_) => *by_op.entry("dlq").or_default() += 1,
            RecordKind::Schema(_) => *by_op.entry("schema").or_default() += 1,
            _ => *by_op.entry("other").or_default() += 1,
        }
    }
    let floor = records
        .first()
        .and_then(|r| r.position.first_start.as_ref())
        .map(|f| f.floor_scn)
        .unwrap_or_default();
    let truth = engine
        .source()
        .database()
        .truth()
        .captured(&captured, &["ETL_BATCH".to_owned()]);
    let committed: usize = truth
        .iter()
        .filter(|t| t.commit_scn >= floor)
        .map(|t| t.changes.len())
        .sum();
    let delivered: u64 = by_table.values().sum();
    println!("transactions delivered: {transactions}");
    println!("records by kind: {by_op:?}");
    println!("changes by table: {by_table:?}");
    println!("changes the database committed after the start: {committed}, delivered: {delivered}");
    let m = engine.metrics();
    println!(
        "steps {}, rows mined {}, rolled back {}, window {} logs",
        m.steps, m.rows_mined, m.rolled_back_transactions, m.window_logs
    );
    if let Some(last) = records.last() {
        println!("last position: {}", last.position.to_json());
    }
    if committed as u64 != delivered {
        return Err("the delivered changes differ from what the database committed".into());
    }
    Ok(())
}
