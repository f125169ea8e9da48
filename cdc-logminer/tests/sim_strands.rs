//! Private strands: an open transaction's redo reaches the log late (commit, strand full, log
//! switch) with its original SCNs, so an SCN-ordered read differs from the redo-ordered one,
//! and a cursor bounded by SCN loses rows a redo-address cursor keeps.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ops::ControlFlow;
use std::path::Path;

use cdc_core::{MinedRow, Operation, RedoAddr, Scn};
use cdc_logminer::sim::source::{mine_all, query_for, whole_window};
use cdc_logminer::sim::{Scenario, SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig};
use cdc_logminer::source::{CaptureMode, LogInventoryQuery, RedoBound, RedoSource};

fn step(s: &mut SimSource, from: RedoBound) -> Vec<MinedRow> {
    let logs = s
        .log_inventory(&LogInventoryQuery {
            from: Scn(0),
            mode: CaptureMode::Online,
            destination: None,
        })
        .unwrap();
    let objects = s
        .resolve_objects(&|_| true)
        .unwrap()
        .into_iter()
        .map(|o| (o.con, o.object))
        .collect();
    s.start_session(&whole_window(&logs)).unwrap();
    let mut rows = Vec::new();
    s.mine(&query_for(from, objects), &mut |r| {
        rows.push(r);
        ControlFlow::Continue(())
    })
    .unwrap();
    rows
}

#[test]
fn redo_order_differs_from_scn_order() {
    let db = SimDatabase::new(SimConfig {
        seed: 21,
        ..SimConfig::default()
    })
    .unwrap();
    let mut s = SimSource::with_workload(
        db,
        Workload::random(WorkloadConfig {
            seed: 21,
            changes: 300,
            ..WorkloadConfig::default()
        }),
        0,
    );
    while s.advance(1000).unwrap() {}
    let redo = mine_all(&mut s, &|_| true, &[]).unwrap();
    let mut by_scn = redo.clone();
    by_scn.sort_by_key(|r| r.scn);
    assert_ne!(
        redo.iter().map(|r| (r.rs_id, r.ssn)).collect::<Vec<_>>(),
        by_scn.iter().map(|r| (r.rs_id, r.ssn)).collect::<Vec<_>>(),
        "private strands must reorder SCNs against redo order"
    );
    // redo order itself is the address order (CSF pieces and the all-zero RS_ID aside)
    let addrs: Vec<RedoAddr> = redo.iter().filter_map(|r| r.addr().ok()).collect();
    assert!(addrs.windows(2).all(|w| w[0] <= w[1]));
    // a late row has an SCN below one that precedes it in the log
    let late = redo.windows(2).filter(|w| w[1].scn < w[0].scn).count();
    assert!(late > 10, "{late} late rows");
}

#[test]
fn scn_cursor_loses_late_rows_a_redo_cursor_keeps() {
    let scenario = Scenario::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/private_strand_rows_arrive_late.json"),
    )
    .unwrap();
    let mut s = scenario.into_source(0).unwrap();
    // play up to s2's commit: s1's insert is still in its strand
    for _ in 0..5 {
        assert!(s.advance(1).unwrap());
    }
    let first = step(&mut s, RedoBound::Start);
    assert!(
        first
            .iter()
            .all(|r| r.sql_redo.as_deref().is_none_or(|q| !q.contains("'late'")))
    );
    assert!(
        first
            .iter()
            .any(|r| r.sql_redo.as_deref().is_some_and(|q| q.contains("'early'")))
    );
    let scn_bound = first.iter().map(|r| r.scn).max().unwrap();
    let cursor = first.iter().filter_map(|r| r.addr().ok()).max().unwrap();
    // the rest: s1 commits; its insert reaches the log now, with its old SCN
    while s.advance(1).unwrap() {}
    let second = step(&mut s, RedoBound::After(cursor));
    let late = second
        .iter()
        .find(|r| r.sql_redo.as_deref().is_some_and(|q| q.contains("'late'")))
        .expect("the redo cursor sees the late row");
    assert!(late.scn < scn_bound, "the late row keeps its original SCN");
    assert!(second.iter().any(|r| r.operation == Operation::Commit));
    // a cursor on SCN alone (rows above the last SCN seen) never returns it
    let all = step(&mut s, RedoBound::Start);
    let by_scn: Vec<&MinedRow> = all.iter().filter(|r| r.scn > scn_bound).collect();
    assert!(
        by_scn
            .iter()
            .all(|r| r.sql_redo.as_deref().is_none_or(|q| !q.contains("'late'")))
    );
    assert!(by_scn.len() < second.len());
}

#[test]
fn log_switch_binds_open_strands() {
    let db = SimDatabase::new(SimConfig {
        seed: 22,
        strand_bytes: 1 << 30,
        ..SimConfig::default()
    })
    .unwrap();
    let mut s = SimSource::new(db);
    use cdc_logminer::sim::DbOp;
    s.apply(&DbOp::Begin {
        session: "s".into(),
        pdb: None,
        user: None,
        private_strand: Some(true),
    })
    .unwrap();
    s.apply(&DbOp::Insert {
        session: "s".into(),
        table: "APP.CODES".into(),
        row: vec![("CODE".into(), cdc_core::Value::Text("X".into()))],
        fails: false,
    })
    .unwrap();
    assert!(step(&mut s, RedoBound::Start).is_empty());
    s.apply(&DbOp::LogSwitch).unwrap();
    let rows = step(&mut s, RedoBound::Start);
    assert_eq!(
        rows.iter().map(|r| r.operation).collect::<Vec<_>>(),
        vec![Operation::Start, Operation::Insert]
    );
    assert_eq!(
        rows[1].rs_id.seq, 1,
        "bound into the log that was switched out"
    );
}
