//! Proof 3 of the capture engine: every simulator fault gives the documented retry or typed
//! stop, and nothing of a failed step is applied (a retried run delivers exactly what an
//! undisturbed run delivers; a stopped run delivered a prefix of it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::engine_support;

use std::time::Duration;

use cdc_core::CdcCode;
use cdc_logminer::engine::{
    CaptureEngine, EngineError, EngineMetrics, EngineRecord, ManualClock, RecordKind,
};
use cdc_logminer::sim::{
    DbOp, Fault, SimConfig, SimDatabase, SimSource, SourceCall, WorkloadConfig,
};
use engine_support::*;

fn database() -> SimDatabase {
    finished_database(
        41,
        SimConfig {
            log_size_bytes: 8 * 1024,
            ..SimConfig::default()
        },
        WorkloadConfig {
            changes: 400,
            ddl_rate: 0.0,
            ..WorkloadConfig::default()
        },
    )
}

struct Run {
    result: Result<(), EngineError>,
    records: Vec<EngineRecord>,
    metrics: EngineMetrics,
}

/// Captures `db` from its oldest log; before step `at`, `disturb` acts on the source.
fn run_disturbed(
    db: &SimDatabase,
    at: usize,
    settings_edit: impl FnOnce(&mut cdc_logminer::engine::EngineSettings),
    disturb: impl FnOnce(&mut SimSource),
) -> Run {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    s.start_scn = Some(oldest_scn(db));
    s.max_logs_per_step = 2;
    s.retry_max_time = Duration::from_secs(600);
    settings_edit(&mut s);
    let mut engine =
        CaptureEngine::open(SimSource::new(db.clone()), s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    let mut disturb = Some(disturb);
    let mut idle = 0;
    let mut step = 0;
    let result = loop {
        if step == at
            && let Some(d) = disturb.take()
        {
            d(engine.source_mut());
        }
        step += 1;
        match engine.step(&mut records) {
            Ok(report) => {
                if report.rows == 0 && !report.retried {
                    idle += 1;
                    if idle >= 3 && disturb.is_none() {
                        break Ok(());
                    }
                } else {
                    idle = 0;
                }
            }
            Err(e) => break Err(e),
        }
        clock.advance(Duration::from_millis(250));
        assert!(step < 100_000);
    };
    Run {
        result,
        metrics: engine.metrics(),
        records,
    }
}

fn undisturbed(db: &SimDatabase) -> Vec<EngineRecord> {
    let run = run_disturbed(db, 0, |_| {}, |_| {});
    run.result.unwrap();
    run.records
}

fn assert_retried(
    db: &SimDatabase,
    full: &[EngineRecord],
    fault: Fault,
    check: impl Fn(&EngineMetrics),
) {
    let run = run_disturbed(db, 2, |_| {}, |s| s.inject(fault.clone()));
    if let Err(e) = &run.result {
        panic!("{fault:?} should be retried, it stopped: {e}");
    }
    assert_eq!(
        changes(&run.records),
        changes(full),
        "{fault:?}: output differs"
    );
    check(&run.metrics);
    // each reconnect is told on the ops topic, with its cause
    let reconnected: Vec<_> = run
        .records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) if e.kind == cdc_core::OpsKind::Reconnected => Some(&e.details),
            _ => None,
        })
        .collect();
    assert_eq!(
        reconnected.len() as u64,
        run.metrics.reconnects,
        "{fault:?}: {reconnected:?}"
    );
    assert!(
        reconnected.iter().all(|d| d["cause"].contains("ORA-")),
        "{reconnected:?}"
    );
}

fn assert_stops(
    db: &SimDatabase,
    full: &[EngineRecord],
    code: CdcCode,
    settings_edit: impl FnOnce(&mut cdc_logminer::engine::EngineSettings),
    disturb: impl FnOnce(&mut SimSource),
) -> String {
    let run = run_disturbed(db, 2, settings_edit, disturb);
    let error = match run.result {
        Err(EngineError::Stop(e)) => e,
        other => panic!("expected a stop with {code:?}, got {other:?}"),
    };
    assert_eq!(error.code(), code, "{error}");
    let got = changes(&run.records);
    let all = changes(full);
    assert!(
        got.len() < all.len(),
        "the stop came after everything was delivered"
    );
    assert_eq!(
        got.as_slice(),
        &all[..got.len()],
        "a stopped run must deliver a prefix"
    );
    error.to_string()
}

#[test]
fn transient_and_remine_faults_are_retried_without_loss_or_duplicates() {
    let db = database();
    let full = undisturbed(&db);
    assert!(changes(&full).len() > 100);
    assert_retried(&db, &full, Fault::DropConnection { after_rows: 7 }, |m| {
        assert!(m.reconnects >= 1, "{m:?}")
    });
    assert_retried(&db, &full, Fault::KillSession { after_rows: 3 }, |m| {
        assert!(m.reconnects >= 1, "{m:?}")
    });
    assert_retried(
        &db,
        &full,
        Fault::InstanceRestart { opening_calls: 3 },
        |m| assert!(m.reconnects >= 1, "{m:?}"),
    );
    assert_retried(
        &db,
        &full,
        Fault::LogSwitchedWhileRead { after_rows: 5 },
        |m| assert!(m.step_retries >= 1 && m.reconnects == 0, "{m:?}"),
    );
    assert_retried(&db, &full, Fault::MissingLogFile, |m| {
        assert!(m.step_retries >= 1 && m.reconnects == 0, "{m:?}")
    });
    assert_retried(&db, &full, Fault::SlowQuery { millis: 3_600_000 }, |m| {
        assert!(m.step_timeouts == 1, "{m:?}")
    });
}

#[test]
fn typed_stops() {
    let db = database();
    let full = undisturbed(&db);
    let ora = |code: u32, call: SourceCall| Fault::Ora {
        code,
        message: None,
        call,
    };
    assert_stops(
        &db,
        &full,
        CdcCode::Privilege,
        |_| {},
        |s| s.inject(ora(1031, SourceCall::Mine)),
    );
    let text = assert_stops(
        &db,
        &full,
        CdcCode::TransientDatabase,
        |_| {},
        |s| s.inject(ora(12345, SourceCall::Mine)),
    );
    assert!(
        text.contains("ORA-12345"),
        "an unclassified code is named: {text}"
    );
    assert_stops(
        &db,
        &full,
        CdcCode::LogPurged,
        |_| {},
        |s| s.inject(ora(1284, SourceCall::StartSession)),
    );
    // an extra transient code is retried instead
    let run = run_disturbed(
        &db,
        2,
        |s| s.extra_transient = vec![cdc_core::ora::OraCode(12345)],
        |s| s.inject(ora(12345, SourceCall::Mine)),
    );
    run.result.unwrap();
    assert_eq!(changes(&run.records), changes(&full));
    // three timeouts at a one-log window
    assert_stops(
        &db,
        &full,
        CdcCode::MiningStalled,
        |s| s.max_logs_per_step = 1,
        |s| {
            for _ in 0..3 {
                s.inject(Fault::SlowQuery { millis: 3_600_000 });
            }
        },
    );
    // more than 20 re-mined steps in a row
    assert_stops(
        &db,
        &full,
        CdcCode::MiningStepRetry,
        |_| {},
        |s| {
            for _ in 0..21 {
                s.inject(Fault::LogSwitchedWhileRead { after_rows: 1 });
            }
        },
    );
    // the retry budget runs out
    let text = assert_stops(
        &db,
        &full,
        CdcCode::TransientDatabase,
        |s| s.retry_max_time = Duration::from_secs(20),
        |s| {
            s.inject(Fault::InstanceRestart {
                opening_calls: 1000,
            })
        },
    );
    assert!(text.contains("cdc.retry.max.time.ms"), "{text}");
}

/// Sequences of the database's logs, oldest first.
fn sequences(db: &SimDatabase) -> Vec<u32> {
    let mut seqs: Vec<u32> = log_inventory(db).iter().map(|l| l.sequence).collect();
    seqs.sort();
    seqs.dedup();
    seqs
}

#[test]
fn missing_redo_and_topology_stop() {
    let db = database();
    let full = undisturbed(&db);
    let seqs = sequences(&db);
    assert!(seqs.len() >= 10, "{seqs:?}");
    assert_stops(
        &db,
        &full,
        CdcCode::LogPurged,
        |_| {},
        |s| {
            s.apply(&DbOp::Purge {
                up_to_sequence: seqs[seqs.len() / 2],
                remove_file: false,
            })
            .unwrap()
        },
    );
    assert_stops(
        &db,
        &full,
        CdcCode::LogGap,
        |_| {},
        |s| {
            s.apply(&DbOp::Gap {
                sequence: seqs[seqs.len() - 3],
            })
            .unwrap()
        },
    );
    // an OS rm behind the catalog's back: listed, but ORA-01284 when added
    assert_stops(
        &db,
        &full,
        CdcCode::LogPurged,
        |_| {},
        |s| {
            s.apply(&DbOp::Purge {
                up_to_sequence: seqs[seqs.len() / 2],
                remove_file: true,
            })
            .unwrap()
        },
    );
    // a restore (as another database, or the same one at a new incarnation) comes with an
    // instance restart; the identity is checked again after the reconnect
    for new_dbid in [true, false] {
        assert_stops(
            &db,
            &full,
            CdcCode::Topology,
            |_| {},
            |s| {
                s.inject(Fault::InstanceRestart { opening_calls: 0 });
                s.apply(&DbOp::Restore { new_dbid }).unwrap();
            },
        );
    }
    // a second redo thread: refused at the next inventory
    assert_stops(
        &db,
        &full,
        CdcCode::Topology,
        |_| {},
        |s| {
            s.apply(&DbOp::EnableThread { thread: 2 }).unwrap();
        },
    );
}
