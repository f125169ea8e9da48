//! Proof 2 of the capture engine: a restart from the position of any acknowledged record emits
//! exactly the change records after it — nothing repeated, nothing skipped — so the
//! concatenated output equals the uninterrupted output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::engine_support;

use cdc_logminer::sim::{SimConfig, WorkloadConfig};
use engine_support::*;

/// Restart points per workload; several workloads make the total.
fn restart_points() -> usize {
    std::env::var("CDC_RESTART_POINTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(250)
}

fn check_restarts(seed: u64, config: SimConfig, workload: WorkloadConfig) -> usize {
    check_restarts_of(seed, config, workload, captured)
}

fn check_restarts_of(
    seed: u64,
    config: SimConfig,
    workload: WorkloadConfig,
    tables: fn(&cdc_core::TableId) -> bool,
) -> usize {
    let capture = |db: &_, spill: &_, position| capture_tables(db, spill, position, tables);
    let spill = tempfile::tempdir().unwrap();
    let db = finished_database(seed, config, workload);
    let full = capture(&db, &spill, None).unwrap();
    let all = changes(&full);
    assert!(
        all.len() > 100,
        "too few changes to prove anything: {}",
        all.len()
    );
    let points = restart_points().min(full.len());
    // spread the points over the whole record stream, including the start heartbeat
    let mut checked = 0;
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for n in 0..points {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let k = if n == 0 {
            0
        } else {
            (rng % full.len() as u64) as usize
        };
        let position = full[k].position.clone();
        // the position crosses the offset topic as JSON
        let stored = cdc_offset::Position::from_json(&position.to_json()).unwrap();
        let replay = capture(&db, &spill, Some(stored)).unwrap();
        let acknowledged = changes(&full[..=k]).len();
        let expected = &all[acknowledged..];
        let got = changes(&replay);
        assert_eq!(
            got.len(),
            expected.len(),
            "restart after record {k} ({acknowledged} changes acknowledged): {} changes, \
             expected {}",
            got.len(),
            expected.len()
        );
        assert_eq!(got.as_slice(), expected, "restart after record {k}");
        checked += 1;
    }
    checked
}

#[test]
fn restarts_emit_exactly_the_unacknowledged_suffix() {
    let mut total = 0;
    total += check_restarts(
        21,
        SimConfig::default(),
        WorkloadConfig {
            changes: 600,
            ddl_rate: 0.0,
            ..WorkloadConfig::default()
        },
    );
    total += check_restarts(
        22,
        SimConfig {
            pdbs: vec!["FREEPDB1".into(), "FREEPDB2".into()],
            log_size_bytes: 64 * 1024,
            ..SimConfig::default()
        },
        WorkloadConfig {
            changes: 600,
            ddl_rate: 0.0,
            long_transaction: true,
            ..WorkloadConfig::default()
        },
    );
    total += check_restarts(
        23,
        SimConfig {
            strand_bytes: 64 * 1024,
            private_strand_rate: 1.0,
            ..SimConfig::default()
        },
        WorkloadConfig {
            changes: 600,
            ddl_rate: 0.0,
            savepoint_rollback_rate: 0.4,
            full_rollback_rate: 0.2,
            ..WorkloadConfig::default()
        },
    );
    total += check_restarts(
        24,
        SimConfig::default(),
        WorkloadConfig {
            changes: 400,
            ddl_rate: 0.0,
            huge_transaction_rows: 1500,
            ..WorkloadConfig::default()
        },
    );
    // DDL: tables created while capturing (captured from their first row), truncates.
    // (APP.CUSTOMERS gains columns: mined after the fact, its older rows need a dictionary
    // replay, which the engine does not do yet.)
    total += check_restarts_of(
        7,
        SimConfig::default(),
        WorkloadConfig {
            changes: 3000,
            ddl_rate: 0.01,
            ..WorkloadConfig::default()
        },
        |t| captured(t) && t.table != "CUSTOMERS",
    );
    // a LOB table: inserts held until their locator UPDATE folds into them
    total += check_restarts_of(
        25,
        SimConfig {
            log_size_bytes: 64 * 1024,
            ..SimConfig::default()
        },
        WorkloadConfig {
            changes: 2500,
            ddl_rate: 0.0,
            large_lob_rate: 0.3,
            savepoint_rollback_rate: 0.3,
            ..WorkloadConfig::default()
        },
        |t| t.owner == "APP" && t.table == "DOCS",
    );
    println!("restart points checked: {total}");
    assert!(total >= 6 * restart_points().min(100));
}
