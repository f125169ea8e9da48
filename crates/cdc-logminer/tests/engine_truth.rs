//! Proof 1 of the capture engine: over long random workloads (private strands, log switches,
//! savepoints, rollbacks, excluded users, DDL, several PDBs, huge and long transactions) the
//! records equal the simulator's committed truth, in commit order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod engine_support;

use cdc_logminer::engine::{CaptureEngine, ManualClock, RecordKind};
use cdc_logminer::sim::{SimConfig, WorkloadConfig};
use engine_support::*;

fn check(seed: u64, config: SimConfig, workload: WorkloadConfig) {
    let (_, transactions) = check_with(seed, config, workload, |_| {});
    assert!(transactions > 100, "only {transactions} transactions");
}

fn check_with(
    seed: u64,
    config: SimConfig,
    workload: WorkloadConfig,
    edit: impl FnOnce(&mut cdc_logminer::engine::EngineSettings),
) -> (cdc_buffer::BufferMetrics, usize) {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    s.pdbs = config.pdbs.clone();
    edit(&mut s);
    let source = source(seed, config, workload, 16);
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
    (engine.buffer_metrics(), expected.len())
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
    let (metrics, _) = check_with(
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
    );
    assert!(
        metrics.spills >= 1,
        "the huge transaction spilled: {metrics:?}"
    );
    assert!(metrics.heap_bytes <= 256 * 1024);
}
