//! Proof 1 of the capture engine: over long random workloads (private strands, log switches,
//! savepoints, rollbacks, excluded users, DDL, several PDBs, huge and long transactions) the
//! records equal the simulator's committed truth, in commit order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::engine_support;

use cdc_logminer::engine::{CaptureEngine, ManualClock, RecordKind};
use cdc_logminer::sim::{SimConfig, WorkloadConfig};
use engine_support::*;

fn check(seed: u64, config: SimConfig, workload: WorkloadConfig) {
    let outcome = check_with(seed, config, workload, |_| {});
    assert!(
        outcome.transactions > 100,
        "only {} transactions",
        outcome.transactions
    );
}

/// What a checked capture did.
struct Outcome {
    buffer: cdc_buffer::BufferMetrics,
    engine: cdc_logminer::engine::EngineMetrics,
    transactions: usize,
}

fn check_with(
    seed: u64,
    config: SimConfig,
    workload: WorkloadConfig,
    edit: impl FnOnce(&mut cdc_logminer::engine::EngineSettings),
) -> Outcome {
    check_polled(seed, config, workload, 16, edit)
}

/// [`check_with`] with `per_poll` workload events run at each query of the current SCN.
fn check_polled(
    seed: u64,
    config: SimConfig,
    workload: WorkloadConfig,
    per_poll: usize,
    edit: impl FnOnce(&mut cdc_logminer::engine::EngineSettings),
) -> Outcome {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    s.pdbs = config.pdbs.clone();
    edit(&mut s);
    let source = source(seed, config, workload, per_poll);
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 5).unwrap();
    assert!(
        matches!(
            records.first().map(|r| &r.kind),
            Some(RecordKind::Heartbeat { .. })
        ),
        "the first record is the start heartbeat"
    );
    let truth = engine.source().database().truth().clone();
    let expected = expected(&truth, first_start_floor(&records));
    assert!(
        expected.len() >= 2,
        "the workload committed too little to prove anything: {} of {} transactions, {} records",
        expected.len(),
        truth.transactions.len(),
        records.len()
    );
    assert_same(&delivered(&records), &expected);
    Outcome {
        buffer: engine.buffer_metrics(),
        engine: engine.metrics(),
        transactions: expected.len(),
    }
}

#[test]
fn random_workload_equals_truth() {
    check(
        11,
        SimConfig::default(),
        WorkloadConfig {
            changes: 3000,
            ddl_rate: 0.0,
            ..WorkloadConfig::default()
        },
    );
}

/// A database that runs thousands of statements between two looks at its current SCN gives
/// steps of thousands of rows, which are decoded on a thread of their own while they are
/// applied (with one decode thread, and with a pool of two inside it): the records are the
/// truth all the same.
#[test]
fn large_steps_decoded_while_applied_equal_truth() {
    for threads in [1, 2] {
        let outcome = check_polled(
            14,
            SimConfig::default(),
            WorkloadConfig {
                changes: 8000,
                ddl_rate: 0.0,
                ..WorkloadConfig::default()
            },
            2500,
            |s| {
                s.decode_threads = threads;
                s.max_logs_per_step = 64;
            },
        );
        assert!(
            outcome.engine.pipelined_steps >= 1,
            "no step was large enough to be decoded alongside ({threads} threads): {:?}",
            outcome.engine
        );
        assert!(outcome.transactions > 100);
    }
}

#[test]
fn several_pdbs_with_the_same_xids() {
    check(
        12,
        SimConfig {
            pdbs: vec!["FREEPDB1".into(), "FREEPDB2".into()],
            ..SimConfig::default()
        },
        WorkloadConfig {
            changes: 3000,
            ddl_rate: 0.0,
            ..WorkloadConfig::default()
        },
    );
}

#[test]
fn huge_and_long_transactions_spill_within_the_budget() {
    let metrics = check_with(
        13,
        SimConfig {
            log_size_bytes: 64 * 1024,
            ..SimConfig::default()
        },
        WorkloadConfig {
            changes: 1500,
            ddl_rate: 0.0,
            long_transaction: true,
            huge_transaction_rows: 20_000,
            ..WorkloadConfig::default()
        },
        |s| s.buffer.memory_max_bytes = 256 * 1024,
    )
    .buffer;
    assert!(
        metrics.spills >= 1,
        "the huge transaction spilled: {metrics:?}"
    );
    assert!(metrics.heap_bytes <= 256 * 1024);
}

/// A row inserted into a table with a LOB is one change, though LogMiner shows an INSERT with
/// locators (ROW_ID `AAAAAAAAAAAAAAAAAA`) and then the UPDATE that writes the LOB values: the
/// engine folds the UPDATE into the INSERT, which takes the real ROWID. Under
/// `cdc.lob.mode=skip` a value stored in the row comes with it; one stored out of the row
/// (written by LOB_WRITE rows, not mined) is `EMPTY_CLOB()`, and before images never hold LOBs.
#[test]
fn a_lob_table_delivers_one_change_per_committed_change() {
    let lob_table = |t: &cdc_core::TableId| t.owner == "APP" && t.table == "DOCS";
    let db = finished_database(
        31,
        SimConfig::default(),
        WorkloadConfig {
            changes: 3000,
            ddl_rate: 0.0,
            large_lob_rate: 0.3,
            savepoint_rollback_rate: 0.3,
            failed_statement_rate: 0.05,
            ..WorkloadConfig::default()
        },
    );
    let spill = tempfile::tempdir().unwrap();
    let records = capture_tables(&db, &spill, None, lob_table).unwrap();
    let got = changes(&records);
    let truth: Vec<_> = db
        .truth()
        .captured(&lob_table, &["ETL_BATCH".to_owned()])
        .into_iter()
        .flat_map(|t| t.changes.into_iter().map(move |c| (t.xid, c)))
        .collect();
    assert_eq!(got.len(), truth.len(), "one record per committed change");
    let mut out_of_row = 0;
    let mut inserts = 0;
    for ((key, _, _, d), (xid, t)) in got.iter().zip(&truth) {
        assert_eq!(key.xid, *xid);
        assert_eq!(d.op, t.op);
        let strip = |image: &Option<std::collections::BTreeMap<String, cdc_core::Value>>| {
            image.as_ref().map(|m| {
                let mut m = m.clone();
                m.remove("BODY");
                m
            })
        };
        let truth_image = |image: &Option<Vec<(String, cdc_core::Value)>>| {
            image.as_ref().map(|v| {
                v.iter()
                    .filter(|(n, _)| n != "BODY")
                    .cloned()
                    .collect::<std::collections::BTreeMap<_, _>>()
            })
        };
        assert_eq!(strip(&d.before), truth_image(&t.before), "{t:?}");
        assert_eq!(strip(&d.after), truth_image(&t.after), "{t:?}");
        if t.op == cdc_core::ChangeOp::Insert {
            inserts += 1;
            let body = t
                .after
                .as_ref()
                .and_then(|v| v.iter().find(|(n, _)| n == "BODY"))
                .map(|(_, v)| v.clone())
                .unwrap_or(cdc_core::Value::Null);
            let delivered = d.after.as_ref().and_then(|m| m.get("BODY")).cloned();
            let body_type = cdc_core::ColumnType::Clob;
            if cdc_logminer::sim::lob_out_of_row(&body_type, &body) {
                out_of_row += 1;
                assert_eq!(delivered, Some(cdc_core::Value::EmptyLob));
            } else if body.is_null() {
                assert!(delivered.is_none_or(|v| v.is_null()));
            } else {
                assert_eq!(delivered, Some(body));
            }
        }
    }
    assert!(
        inserts > 50 && out_of_row > 10,
        "{inserts} inserts, {out_of_row} out of row"
    );
    // every insert carries its row's real ROWID, never the placeholder
    for record in &records {
        if let RecordKind::Change(c) = &record.kind {
            assert_ne!(c.event.change.row_id.as_deref(), Some("AAAAAAAAAAAAAAAAAA"));
        }
    }
}

/// A window of one log over finished redo: each step mines one log, and once a log is
/// complete and mined the next step starts at the next one. (The cursor used to stay in the
/// log of its last row until a window held a row after it: with one log, for ever.)
#[test]
fn a_window_of_one_log_moves_through_finished_redo() {
    let spill = tempfile::tempdir().unwrap();
    let db = finished_database(
        41,
        SimConfig {
            log_size_bytes: 32 * 1024,
            ..SimConfig::default()
        },
        WorkloadConfig {
            changes: 600,
            ddl_rate: 0.0,
            ..WorkloadConfig::default()
        },
    );
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    s.start_scn = Some(oldest_scn(&db));
    s.max_logs_per_step = 1;
    let mut engine = CaptureEngine::open(
        cdc_logminer::sim::SimSource::new(db.clone()),
        s,
        None,
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let truth = db.truth().clone();
    assert_same(&delivered(&records), &expected(&truth, oldest_scn(&db)));
    assert!(engine.metrics().steps > 10, "{:?}", engine.metrics());
}
