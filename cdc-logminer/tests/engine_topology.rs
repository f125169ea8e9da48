//! The topology guard and `cdc.mining.mode` through the engine, against the simulator playing
//! each role: which databases are captured (CDC-5001 for the others, at start and after a
//! reconnect), a standby mined only up to its applied SCN, and mining by SCN range (what a
//! session connected to a PDB must do) delivering what mining over added logs delivers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::engine_support;

use cdc_core::config::MiningMode;
use cdc_core::{CdcCode, ConId};
use cdc_logminer::engine::{CaptureEngine, EngineError, EngineSettings, ManualClock};
use cdc_logminer::sim::{Fault, SimConfig, SimDatabase, SimSource, WorkloadConfig};
use cdc_logminer::source::{
    CaptureMode, DatabaseRole, LogInventoryQuery, OpenMode, RedoSource as _, SessionMode,
};
use engine_support::*;

/// A workload mined after it ran: without ALTERs, whose older rows would need a redo
/// dictionary replay (not built yet).
fn workload(changes: u64) -> WorkloadConfig {
    WorkloadConfig {
        changes,
        max_alters: 0,
        ..WorkloadConfig::default()
    }
}

/// Logs small enough that a small workload spans many of them.
const SMALL_LOGS: u64 = 32 * 1024;

/// A database that ran a small workload, as `role` open `open_mode`.
fn database(seed: u64, role: DatabaseRole, open_mode: OpenMode) -> SimDatabase {
    finished_database(
        seed,
        SimConfig {
            role,
            open_mode,
            log_size_bytes: SMALL_LOGS,
            ..SimConfig::default()
        },
        workload(600),
    )
}

fn open(
    db: &SimDatabase,
    spill: &tempfile::TempDir,
    edit: impl FnOnce(&mut EngineSettings),
) -> Result<(CaptureEngine<SimSource>, ManualClock), cdc_core::CdcError> {
    let clock = ManualClock::default();
    let mut s = settings(spill);
    s.start_scn = Some(oldest_scn(db));
    s.pdbs = db.config().pdbs.clone();
    edit(&mut s);
    let engine = CaptureEngine::open(SimSource::new(db.clone()), s, None, Box::new(clock.clone()))?;
    Ok((engine, clock))
}

/// The highest log sequence the inventory lists in `mode`.
fn newest_listed(db: &SimDatabase, mode: CaptureMode) -> u32 {
    SimSource::new(db.clone())
        .log_inventory(&LogInventoryQuery {
            from: cdc_core::Scn::ZERO,
            mode,
            destination: None,
        })
        .unwrap()
        .iter()
        .map(|l| l.sequence)
        .max()
        .unwrap()
}

/// The truth of the transactions whose COMMIT is in a log up to `max_seq`, from the floor.
fn expected_up_to(
    db: &SimDatabase,
    floor: cdc_core::Scn,
    max_seq: u32,
) -> Vec<(cdc_core::ConXid, cdc_core::RedoAddr, Vec<Delivered>)> {
    expected(db.truth(), floor)
        .into_iter()
        .filter(|(_, addr, _)| addr.log_seq() <= max_seq)
        .collect()
}

#[test]
fn each_role_and_open_mode_against_the_topology_table() {
    use DatabaseRole as R;
    use OpenMode as O;
    let roles = [
        R::Primary,
        R::PhysicalStandby,
        R::LogicalStandby,
        R::SnapshotStandby,
    ];
    let opens = [O::ReadWrite, O::ReadOnly, O::ReadOnlyWithApply, O::Mounted];
    let spill = tempfile::tempdir().unwrap();
    let mut captured = 0;
    for role in &roles {
        for open_mode in &opens {
            let db = database(7, role.clone(), open_mode.clone());
            for capture in [CaptureMode::Online, CaptureMode::ArchiveOnly] {
                let qualifies = match (role, open_mode, capture) {
                    (R::Primary, O::ReadWrite, _) => true,
                    (R::PhysicalStandby, O::ReadOnly | O::ReadOnlyWithApply, mode) => {
                        mode == CaptureMode::ArchiveOnly
                    }
                    _ => false,
                };
                let case = format!("{role:?} {open_mode:?} {capture:?}");
                match open(&db, &spill, |s| s.capture_mode = capture) {
                    Ok((mut engine, clock)) => {
                        assert!(qualifies, "{case} was accepted");
                        let mut records = Vec::new();
                        run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
                        let floor = first_start_floor(&records);
                        let expected = expected_up_to(&db, floor, newest_listed(&db, capture));
                        assert!(
                            expected.len() > 10,
                            "{case}: {} transactions",
                            expected.len()
                        );
                        assert_same(&delivered(&records), &expected);
                        captured += 1;
                    }
                    Err(e) => {
                        assert!(!qualifies, "{case} was refused: {e}");
                        assert_eq!(e.code(), CdcCode::Topology, "{case}: {e}");
                    }
                }
            }
        }
    }
    // a primary in both capture modes, a standby open two ways in archive_only
    assert_eq!(captured, 4);
}

#[test]
fn a_role_change_seen_after_a_reconnect_is_cdc_5001() {
    let spill = tempfile::tempdir().unwrap();
    let db = database(8, DatabaseRole::Primary, OpenMode::ReadWrite);
    let (mut engine, _clock) = open(&db, &spill, |_| {}).unwrap();
    let mut records = Vec::new();
    engine.step(&mut records).unwrap();
    // a switchover: the database the connector reconnects to is now a standby
    let source = engine.source_mut();
    source
        .database_mut()
        .set_role(DatabaseRole::PhysicalStandby, OpenMode::ReadOnlyWithApply);
    source.inject(Fault::DropConnection { after_rows: 0 });
    let stop = (0..100)
        .find_map(|_| match engine.step(&mut records) {
            Ok(_) => None,
            Err(EngineError::Stop(e)) => Some(e),
            Err(other) => panic!("{other:?}"),
        })
        .expect("the reconnect sees the new role");
    assert_eq!(stop.code(), CdcCode::Topology, "{stop}");
    assert!(stop.to_string().contains("physical standby"), "{stop}");
}

#[test]
fn no_valid_archive_destination_is_cdc_5001() {
    let spill = tempfile::tempdir().unwrap();
    let db = finished_database(
        9,
        SimConfig {
            archive_dests: Vec::new(),
            ..SimConfig::default()
        },
        workload(200),
    );
    let e = open(&db, &spill, |_| {}).unwrap_err();
    assert_eq!(e.code(), CdcCode::Topology, "{e}");
    assert!(
        e.to_string().contains("no valid local archive destination"),
        "{e}"
    );

    let db = database(9, DatabaseRole::Primary, OpenMode::ReadWrite);
    let e = open(&db, &spill, |s| {
        s.archive_destination = Some("LOG_ARCHIVE_DEST_9".into())
    })
    .unwrap_err();
    assert_eq!(e.code(), CdcCode::Topology, "{e}");
    assert!(e.to_string().contains("LOG_ARCHIVE_DEST_9"), "{e}");
    assert!(
        open(&db, &spill, |s| s.archive_destination =
            Some("LOG_ARCHIVE_DEST_1".into()))
        .is_ok()
    );
}

#[test]
fn a_standby_is_mined_up_to_its_applied_scn() {
    let spill = tempfile::tempdir().unwrap();
    let mut db = database(10, DatabaseRole::PhysicalStandby, OpenMode::ReadOnly);
    let all_archived = newest_listed(&db, CaptureMode::ArchiveOnly);
    db.set_standby_apply_lag_logs(2);
    let applied = newest_listed(&db, CaptureMode::ArchiveOnly);
    assert_eq!(applied + 2, all_archived);

    let (mut engine, clock) =
        open(&db, &spill, |s| s.capture_mode = CaptureMode::ArchiveOnly).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let floor = first_start_floor(&records);
    let below_applied = expected_up_to(&db, floor, applied);
    assert_same(&delivered(&records), &below_applied);
    let archived = expected_up_to(&db, floor, all_archived);
    assert!(
        archived.len() > below_applied.len(),
        "the unapplied logs hold commits"
    );

    // the apply catches up: mining follows it to the newest archived log
    engine
        .source_mut()
        .database_mut()
        .set_standby_apply_lag_logs(0);
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    assert_same(&delivered(&records), &archived);
}

/// The same redo mined over added logs and by SCN range (at the CDB root or in a non-CDB the
/// mode is the operator's choice) gives the same records, which are the database's truth.
#[test]
fn range_mode_mines_the_same_truth_as_logs_mode() {
    for seed in [21, 22, 23] {
        let spill = tempfile::tempdir().unwrap();
        let config = SimConfig {
            log_size_bytes: SMALL_LOGS,
            ..SimConfig::default()
        };
        let db = finished_database(seed, config, workload(1500));
        let run = |mode: MiningMode| {
            let (mut engine, clock) = open(&db, &spill, |s| s.mining_mode = mode).unwrap();
            let mut records = Vec::new();
            run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
            (engine.session_mode(), records)
        };
        let (logs_mode, logs) = run(MiningMode::Logs);
        let (range_mode, range) = run(MiningMode::Range);
        assert_eq!(
            (logs_mode, range_mode),
            (SessionMode::Logs, SessionMode::Range)
        );
        let expected = expected(db.truth(), first_start_floor(&range));
        assert!(
            expected.len() > 50,
            "seed {seed}: {} transactions",
            expected.len()
        );
        assert_same(&delivered(&range), &expected);
        assert_eq!(changes(&range), changes(&logs), "seed {seed}");
    }
}

/// A database with two PDBs, the session connected to the first.
fn pdb_database(seed: u64) -> SimDatabase {
    finished_database(
        seed,
        SimConfig {
            pdbs: vec!["FREEPDB1".into(), "FREEPDB2".into()],
            session_pdb: Some("FREEPDB1".into()),
            log_size_bytes: SMALL_LOGS,
            ..SimConfig::default()
        },
        workload(1500),
    )
}

#[test]
fn auto_mines_by_range_in_a_pdb() {
    let spill = tempfile::tempdir().unwrap();
    let db = pdb_database(31);
    let first_pdb = ConId(3);
    let (mut engine, clock) = open(&db, &spill, |s| {
        s.mining_mode = MiningMode::Auto;
        s.pdbs = vec!["FREEPDB1".into()];
    })
    .unwrap();
    assert_eq!(engine.session_mode(), SessionMode::Range);
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    // the session sees its own PDB's redo, and all of it
    let expected: Vec<_> = expected(db.truth(), first_start_floor(&records))
        .into_iter()
        .filter(|(tx, _, _)| tx.con == first_pdb)
        .collect();
    assert!(expected.len() > 50, "{} transactions", expected.len());
    assert!(
        db.truth().transactions.iter().any(|t| t.con != first_pdb),
        "the other PDB committed too"
    );
    assert_same(&delivered(&records), &expected);
}

#[test]
fn logs_mode_in_a_pdb_is_cdc_5001() {
    let spill = tempfile::tempdir().unwrap();
    let db = pdb_database(32);
    let e = open(&db, &spill, |s| {
        s.mining_mode = MiningMode::Logs;
        s.pdbs = vec!["FREEPDB1".into()];
    })
    .unwrap_err();
    assert_eq!(e.code(), CdcCode::Topology, "{e}");
    assert!(e.to_string().contains("ORA-65040"), "{e}");
    assert!(e.to_string().contains("FREEPDB1"), "{e}");
}

#[test]
fn a_reconnect_into_another_kind_of_container_is_cdc_5001() {
    let spill = tempfile::tempdir().unwrap();
    let db = pdb_database(33);
    let (mut engine, _clock) = open(&db, &spill, |s| s.pdbs = vec!["FREEPDB1".into()]).unwrap();
    assert_eq!(engine.session_mode(), SessionMode::Range);
    let mut records = Vec::new();
    engine.step(&mut records).unwrap();
    // the service now leads to the CDB root, where auto would add log files
    let source = engine.source_mut();
    source.database_mut().set_session_pdb(None).unwrap();
    source.inject(Fault::DropConnection { after_rows: 0 });
    let stop = (0..100)
        .find_map(|_| match engine.step(&mut records) {
            Ok(_) => None,
            Err(EngineError::Stop(e)) => Some(e),
            Err(other) => panic!("{other:?}"),
        })
        .expect("the reconnect sees the other container");
    assert_eq!(stop.code(), CdcCode::Topology, "{stop}");
    assert!(
        stop.to_string().contains("in logs mode instead of range"),
        "{stop}"
    );
}
