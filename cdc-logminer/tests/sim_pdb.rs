//! The simulator's session connected to a PDB, as the reference's `pdb-local-mining` saw it on
//! Oracle: ADD_LOGFILE fails with ORA-65040, a session by SCN range with the online catalog
//! works and returns that PDB's redo, rows are visible before a log switch, an end SCN beyond
//! the current one is accepted, and a range below the oldest redo is ORA-01291.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ops::ControlFlow;

use cdc_core::{ConId, MinedRow, Operation, Scn};
use cdc_logminer::sim::source::{query_for, whole_window};
use cdc_logminer::sim::{DbOp, SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig};
use cdc_logminer::source::{
    CaptureMode, DictionarySource, LogFile, LogInventoryQuery, LogLocation, MiningWindow,
    RedoBound, RedoSource, SessionMode,
};

const PDB1: ConId = ConId(3);

/// Two PDBs after a workload, the session connected to `session_pdb`.
fn source(seed: u64, session_pdb: Option<&str>) -> SimSource {
    let db = SimDatabase::new(SimConfig {
        seed,
        log_size_bytes: 32 * 1024,
        pdbs: vec!["FREEPDB1".into(), "FREEPDB2".into()],
        session_pdb: session_pdb.map(str::to_owned),
        ..SimConfig::default()
    })
    .unwrap();
    let w = Workload::random(WorkloadConfig {
        seed,
        changes: 400,
        ..WorkloadConfig::default()
    });
    let mut s = SimSource::with_workload(db, w, 0);
    while s.advance(500).unwrap() {}
    s
}

fn inventory(s: &mut SimSource) -> Vec<LogFile> {
    s.log_inventory(&LogInventoryQuery {
        from: Scn(0),
        mode: CaptureMode::Online,
        destination: None,
    })
    .unwrap()
}

fn range(logs: &[LogFile]) -> MiningWindow {
    MiningWindow {
        mode: SessionMode::Range,
        dictionary: DictionarySource::OnlineCatalog,
        ..whole_window(logs)
    }
}

fn mine(s: &mut SimSource) -> Vec<MinedRow> {
    let objects = s
        .resolve_objects(&|_| true)
        .unwrap()
        .into_iter()
        .map(|o| (o.con, o.object))
        .collect();
    let mut rows = Vec::new();
    s.mine(&query_for(RedoBound::Start, objects), &mut |row| {
        rows.push(row);
        ControlFlow::Continue(())
    })
    .unwrap();
    rows
}

fn code(e: &cdc_logminer::source::SourceError) -> u32 {
    e.ora_code().map(|c| c.0).unwrap_or(0)
}

#[test]
fn add_logfile_in_a_pdb_is_ora_65040() {
    let mut s = source(1, Some("FREEPDB1"));
    let logs = inventory(&mut s);
    let e = s.start_session(&whole_window(&logs)).unwrap_err();
    assert_eq!(code(&e), 65040, "{e}");
    assert!(e.to_string().contains("pluggable database"), "{e}");
    // at the root the same window is added
    let mut root = source(1, None);
    let logs = inventory(&mut root);
    root.start_session(&whole_window(&logs)).unwrap();
}

#[test]
fn a_range_session_in_a_pdb_returns_that_pdbs_redo() {
    let mut pdb = source(2, Some("FREEPDB1"));
    let logs = inventory(&mut pdb);
    pdb.start_session(&range(&logs)).unwrap();
    let in_pdb = mine(&mut pdb);
    assert!(in_pdb.len() > 100, "{} rows", in_pdb.len());
    assert!(
        in_pdb.iter().all(|r| r.src_con_id == PDB1),
        "only FREEPDB1's redo"
    );

    // the root, over added logs, sees both PDBs; FREEPDB1's rows are the same rows
    let mut root = source(2, None);
    let logs = inventory(&mut root);
    root.start_session(&whole_window(&logs)).unwrap();
    let at_root = mine(&mut root);
    assert!(at_root.iter().any(|r| r.src_con_id != PDB1));
    let key = |r: &MinedRow| (r.rs_id, r.ssn, r.operation, r.sql_redo.clone());
    let pdb_rows: Vec<_> = at_root
        .iter()
        .filter(|r| r.src_con_id == PDB1)
        .map(key)
        .collect();
    assert_eq!(in_pdb.iter().map(key).collect::<Vec<_>>(), pdb_rows);
}

#[test]
fn rows_are_visible_before_a_log_switch_and_the_end_may_pass_the_current_scn() {
    let mut s = source(3, Some("FREEPDB1"));
    let logs = inventory(&mut s);
    let current = logs.iter().find(|l| l.is_current()).unwrap().clone();
    let window = range(std::slice::from_ref(&current));
    assert!(window.end_scn() > s.database().current_scn());
    s.start_session(&window).unwrap();
    let rows = mine(&mut s);
    assert!(
        rows.iter()
            .any(|r| r.operation == Operation::Commit && r.rs_id.seq == current.sequence),
        "commits in the CURRENT log, not switched yet, are returned"
    );
}

#[test]
fn a_range_below_the_oldest_redo_is_ora_01291() {
    let mut s = source(4, Some("FREEPDB1"));
    let logs = inventory(&mut s);
    let oldest = logs.first().unwrap().clone();
    let below = MiningWindow {
        start_scn: Scn(oldest.first_scn.get() - 1),
        ..range(&logs)
    };
    assert_eq!(code(&s.start_session(&below).unwrap_err()), 1291);

    // purged archives: their redo is gone for a range session too
    let archived_only = logs
        .iter()
        .find(|l| matches!(l.location, LogLocation::Archived { .. }))
        .unwrap()
        .clone();
    s.apply(&DbOp::Purge {
        up_to_sequence: archived_only.sequence,
        remove_file: false,
    })
    .unwrap();
    let from_purged = MiningWindow {
        start_scn: archived_only.first_scn,
        ..range(&logs)
    };
    assert_eq!(code(&s.start_session(&from_purged).unwrap_err()), 1291);
    // past the purge the range starts
    let later: Vec<LogFile> = inventory(&mut s)
        .into_iter()
        .filter(|l| l.sequence > archived_only.sequence)
        .collect();
    s.start_session(&range(&later)).unwrap();
    assert!(!mine(&mut s).is_empty());
}
