//! Every fault switch of the simulator fails the way Oracle fails: the ORA code (classified
//! through cdc-core's table), or the catalog state Oracle shows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ops::ControlFlow;
use std::time::Duration;

use cdc_core::ora::{OraClass, OraCode};
use cdc_core::{Operation, RedoThread, Scn};
use cdc_logminer::sim::source::{mine_all, query_for, whole_window};
use cdc_logminer::sim::{
    DbOp, Fault, Scenario, SimConfig, SimDatabase, SimSource, SourceCall, Workload, WorkloadConfig,
};
use cdc_logminer::source::{
    CaptureMode, DictionarySource, LogInventoryQuery, LogLocation, MiningWindow, RedoBound,
    RedoSource, SessionMode, SessionRef, SourceError,
};

fn source(seed: u64) -> SimSource {
    let db = SimDatabase::new(SimConfig {
        seed,
        log_size_bytes: 32 * 1024,
        archive_dests: vec!["LOG_ARCHIVE_DEST_1".into(), "LOG_ARCHIVE_DEST_2".into()],
        ..SimConfig::default()
    })
    .unwrap();
    let w = Workload::random(WorkloadConfig {
        seed,
        changes: 300,
        ..WorkloadConfig::default()
    });
    let mut s = SimSource::with_workload(db, w, 0);
    while s.advance(500).unwrap() {}
    s
}

fn inventory(s: &mut SimSource, mode: CaptureMode) -> Vec<cdc_logminer::source::LogFile> {
    s.log_inventory(&LogInventoryQuery {
        from: Scn(0),
        mode,
        destination: None,
    })
    .unwrap()
}

fn mine(s: &mut SimSource) -> Result<u64, SourceError> {
    let logs = inventory(s, CaptureMode::Online);
    s.start_session(&whole_window(&logs))?;
    let objects = s
        .resolve_objects(&|_| true)?
        .into_iter()
        .map(|o| (o.con, o.object))
        .collect();
    let mut n = 0;
    s.mine(&query_for(RedoBound::Start, objects), &mut |_| {
        n += 1;
        ControlFlow::Continue(())
    })?;
    Ok(n)
}

fn code(e: &SourceError) -> u32 {
    e.ora_code().map(|c| c.number()).unwrap_or(0)
}

#[test]
fn dropped_connection_is_ora_03113_then_03114_until_reconnect() {
    let mut s = source(1);
    s.inject(Fault::DropConnection { after_rows: 5 });
    let e = mine(&mut s).unwrap_err();
    assert_eq!(code(&e), 3113);
    assert_eq!(e.class(&[]), OraClass::Transient);
    let e = s.current_scn().unwrap_err();
    assert_eq!(code(&e), 3114);
    s.reconnect().unwrap();
    assert!(mine(&mut s).unwrap() > 5);
}

#[test]
fn killed_session_is_ora_00028() {
    let mut s = source(2);
    s.inject(Fault::KillSession { after_rows: 0 });
    let e = mine(&mut s).unwrap_err();
    assert_eq!(code(&e), 28);
    assert_eq!(e.class(&[]), OraClass::Transient);
    s.reconnect().unwrap();
    assert!(mine(&mut s).is_ok());
}

#[test]
fn log_switched_while_read_is_ora_00310_and_remines() {
    let mut s = source(3);
    let before = inventory(&mut s, CaptureMode::Online).len();
    s.inject(Fault::LogSwitchedWhileRead { after_rows: 10 });
    let e = mine(&mut s).unwrap_err();
    assert_eq!(code(&e), 310);
    assert!(e.to_string().contains("ORA-00334"), "{e}");
    assert_eq!(e.class(&[]), OraClass::RemineStep);
    // the switch happened: one more log
    assert_eq!(inventory(&mut s, CaptureMode::Online).len(), before + 1);
    assert!(mine(&mut s).is_ok());
}

#[test]
fn online_log_overwritten_under_the_session_is_ora_00310() {
    let mut s = SimSource::new(
        SimDatabase::new(SimConfig {
            seed: 4,
            online_groups: 2,
            archive_lag_switches: 5,
            ..SimConfig::default()
        })
        .unwrap(),
    );
    s.apply(&DbOp::Insert {
        session: "s".into(),
        table: "APP.CODES".into(),
        row: vec![("CODE".into(), cdc_core::Value::Text("A".into()))],
        fails: false,
    })
    .unwrap();
    s.apply(&DbOp::Commit {
        session: "s".into(),
    })
    .unwrap();
    let logs = inventory(&mut s, CaptureMode::Online);
    assert!(matches!(logs[0].location, LogLocation::Online { .. }));
    s.start_session(&whole_window(&logs)).unwrap();
    // two switches with two groups: the log the session reads is reused
    s.apply(&DbOp::LogSwitch).unwrap();
    s.apply(&DbOp::LogSwitch).unwrap();
    let e = s
        .mine(&query_for(RedoBound::Start, vec![]), &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap_err();
    assert_eq!(code(&e), 310, "{e}");
}

#[test]
fn missing_log_file_is_ora_01291() {
    let mut s = source(5);
    s.inject(Fault::MissingLogFile);
    let e = mine(&mut s).unwrap_err();
    assert_eq!(code(&e), 1291);
    assert_eq!(e.class(&[]), OraClass::RemineStep);
    // a start SCN the window does not cover is the same error
    let logs = inventory(&mut s, CaptureMode::Online);
    let window = MiningWindow {
        logs: logs[1..].to_vec(),
        start_scn: logs[0].first_scn,
        mode: SessionMode::Logs,
        dictionary: DictionarySource::OnlineCatalog,
    };
    assert_eq!(code(&s.start_session(&window).unwrap_err()), 1291);
}

#[test]
fn slow_query_times_out() {
    let mut s = source(6);
    s.inject(Fault::SlowQuery { millis: 700_000 });
    let e = mine(&mut s).unwrap_err();
    assert!(matches!(e, SourceError::Timeout { .. }), "{e}");
    assert_eq!(e.ora_code(), Some(OraCode::USER_REQUESTED_CANCEL));
    assert_eq!(e.class(&[]), OraClass::QueryCancelled);
    // a slow query under the timeout completes
    s.inject(Fault::SlowQuery { millis: 1 });
    assert!(mine(&mut s).is_ok());
}

#[test]
fn instance_restart_is_03113_then_16331_while_pdbs_open() {
    let db = SimDatabase::new(SimConfig {
        seed: 7,
        pdbs: vec!["FREEPDB1".into()],
        ..SimConfig::default()
    })
    .unwrap();
    let mut s = SimSource::new(db);
    s.inject(Fault::InstanceRestart { opening_calls: 2 });
    assert_eq!(code(&s.current_scn().unwrap_err()), 3113);
    s.reconnect().unwrap();
    for _ in 0..2 {
        let e = s.resolve_objects(&|_| true).unwrap_err();
        assert_eq!(code(&e), 16331);
        assert_eq!(e.class(&[]), OraClass::Transient);
    }
    assert!(!s.resolve_objects(&|_| true).unwrap().is_empty());
}

#[test]
fn any_ora_code_on_demand() {
    let mut s = source(8);
    s.inject(Fault::Ora {
        code: 1031,
        message: None,
        call: SourceCall::ResolveObjects,
    });
    assert!(s.current_scn().is_ok(), "the fault waits for its call");
    let e = s.resolve_objects(&|_| true).unwrap_err();
    assert_eq!(code(&e), 1031);
    assert_eq!(e.class(&[]), OraClass::Privilege);
    s.inject(Fault::Ora {
        code: 4036,
        message: Some(
            "ORA-04036: PGA memory used by the instance exceeds PGA_AGGREGATE_LIMIT".into(),
        ),
        call: SourceCall::Mine,
    });
    let e = mine(&mut s).unwrap_err();
    assert_eq!(code(&e), 4036);
    assert_eq!(e.class(&[]), OraClass::Unclassified);
}

#[test]
fn purged_log_is_deleted_yes_and_ora_01284_when_added() {
    let mut s = source(9);
    s.apply(&DbOp::Purge {
        up_to_sequence: 1,
        remove_file: false,
    })
    .unwrap();
    let logs = inventory(&mut s, CaptureMode::Online);
    let first = &logs[0];
    assert_eq!(first.sequence, 1);
    assert!(first.deleted && first.is_purged());
    let e = s.start_session(&whole_window(&logs)).unwrap_err();
    assert_eq!(code(&e), 1284);
    assert_eq!(e.class(&[]), OraClass::LogPurged);
    // an `rm` behind the catalog's back: DELETED stays NO, ADD_LOGFILE fails all the same
    s.apply(&DbOp::Purge {
        up_to_sequence: 2,
        remove_file: true,
    })
    .unwrap();
    let logs = inventory(&mut s, CaptureMode::Online);
    let second = logs.iter().find(|l| l.sequence == 2).unwrap();
    assert!(!second.deleted);
    let e = s.start_session(&whole_window(&logs[1..])).unwrap_err();
    assert_eq!(code(&e), 1284);
}

#[test]
fn gap_is_a_missing_sequence_and_missing_scn_rows() {
    let mut s = source(10);
    for _ in 0..3 {
        s.apply(&DbOp::LogSwitch).unwrap();
    }
    let logs = inventory(&mut s, CaptureMode::Online);
    assert!(logs.len() >= 4, "{} logs", logs.len());
    s.apply(&DbOp::Gap { sequence: 2 }).unwrap();
    let after = inventory(&mut s, CaptureMode::Online);
    assert!(after.iter().all(|l| l.sequence != 2));
    // mining across the gap: LogMiner returns a MISSING_SCN row, STATUS 1291
    s.start_session(&whole_window(&after)).unwrap();
    let mut missing = 0;
    s.mine(&query_for(RedoBound::Start, vec![]), &mut |r| {
        if r.operation == Operation::MissingScn {
            assert_eq!(r.status, 1291);
            missing += 1;
        }
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(missing, 1);
}

#[test]
fn archive_only_lists_archived_copies_at_one_destination() {
    let mut s = source(11);
    let online = inventory(&mut s, CaptureMode::Online);
    let archived = inventory(&mut s, CaptureMode::ArchiveOnly);
    assert!(online.last().unwrap().is_current());
    assert_eq!(archived.len() + 1, online.len());
    assert!(
        archived
            .iter()
            .all(|l| l.archived && matches!(&l.location, LogLocation::Archived { dest_id: 1, .. }))
    );
    let dest2 = s
        .log_inventory(&LogInventoryQuery {
            from: Scn(0),
            mode: CaptureMode::ArchiveOnly,
            destination: Some("LOG_ARCHIVE_DEST_2".into()),
        })
        .unwrap();
    assert_eq!(dest2.len(), archived.len());
    assert!(
        dest2
            .iter()
            .zip(&archived)
            .all(|(a, b)| a.sequence == b.sequence
                && a.first_scn == b.first_scn
                && a.name != b.name)
    );
    // consecutive and contiguous
    for w in online.windows(2) {
        assert_eq!(w[0].sequence + 1, w[1].sequence);
        assert_eq!(w[0].next_scn, w[1].first_scn);
    }
}

#[test]
fn session_errors_are_oracles() {
    let mut s = source(12);
    let e = s
        .mine(&query_for(RedoBound::Start, vec![]), &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap_err();
    assert_eq!(code(&e), 1306);
    let e = s
        .start_session(&MiningWindow {
            logs: vec![],
            start_scn: Scn(1),
            mode: SessionMode::Logs,
            dictionary: DictionarySource::OnlineCatalog,
        })
        .unwrap_err();
    assert_eq!(code(&e), 1292);
    let logs = inventory(&mut s, CaptureMode::Online);
    let dup = MiningWindow {
        logs: vec![logs[0].clone(), logs[0].clone()],
        start_scn: logs[0].first_scn,
        mode: SessionMode::Logs,
        dictionary: DictionarySource::OnlineCatalog,
    };
    assert_eq!(code(&s.start_session(&dup).unwrap_err()), 1289);
    s.start_session(&whole_window(&logs)).unwrap();
    let objects = (0..1500)
        .map(|i| (cdc_core::ConId(0), cdc_core::ObjectId(i)))
        .collect();
    let mut q = query_for(RedoBound::Start, objects);
    q.inlist_max = 1500;
    assert_eq!(
        code(&s.mine(&q, &mut |_| ControlFlow::Continue(())).unwrap_err()),
        1795
    );
    q.timeout = Duration::from_secs(1);
    q.inlist_max = 1000;
    assert!(s.mine(&q, &mut |_| ControlFlow::Continue(())).is_ok());
    assert!(s.end_session().is_ok());
    assert!(s.end_session().is_ok(), "ending no session is no error");
}

#[test]
fn orphan_restore_and_second_thread() {
    let scenario = Scenario::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/orphan_and_faults.json"),
    )
    .unwrap();
    let mut s = scenario.play().unwrap();
    // the scripted fault: the first query loses its connection after two rows
    let rows = mine_all(&mut s, &|_| true, &[]);
    assert_eq!(code(&rows.unwrap_err()), 3113);
    s.reconnect().unwrap();
    let rows = mine_all(&mut s, &|_| true, &[]).unwrap();
    let victim = rows
        .iter()
        .find(|r| {
            r.sql_redo
                .as_deref()
                .is_some_and(|q| q.contains("'orphan'"))
        })
        .unwrap()
        .clone();
    // the killed session left its change, no end record, no GV$TRANSACTION row, no session
    assert!(
        !rows.iter().any(|r| r.xid == victim.xid
            && matches!(r.operation, Operation::Commit | Operation::Rollback))
    );
    assert!(
        s.active_transactions()
            .unwrap()
            .iter()
            .all(|t| t.xid != victim.xid)
    );
    assert!(
        !s.session_exists(SessionRef {
            sid: victim.session.unwrap(),
            serial: victim.serial.unwrap()
        })
        .unwrap()
    );
    assert_eq!(s.database().truth().transactions.len(), 1);

    // a restore: new incarnation (RESETLOGS), sequences restart, optionally another DBID
    let before = s.identity().unwrap();
    s.apply(&DbOp::Restore { new_dbid: true }).unwrap();
    let after = s.identity().unwrap();
    assert_ne!(before.dbid, after.dbid);
    assert!(after.resetlogs_scn > before.resetlogs_scn);
    let logs = inventory(&mut s, CaptureMode::Online);
    assert_eq!(logs.first().unwrap().sequence, 1);

    // a second redo thread
    s.apply(&DbOp::EnableThread { thread: 2 }).unwrap();
    assert_eq!(
        s.identity().unwrap().enabled_threads,
        vec![RedoThread(1), RedoThread(2)]
    );
    for i in 0..6 {
        let session = format!("t{i}");
        s.apply(&DbOp::Insert {
            session: session.clone().into(),
            table: "APP.CODES".into(),
            row: vec![("CODE".into(), cdc_core::Value::Text(format!("T{i}")))],
            fails: false,
        })
        .unwrap();
        s.apply(&DbOp::Commit {
            session: session.into(),
        })
        .unwrap();
    }
    let logs = inventory(&mut s, CaptureMode::Online);
    assert!(logs.iter().any(|l| l.thread == RedoThread(2)));
    let rows = mine_all(&mut s, &|_| true, &[]).unwrap();
    assert!(rows.iter().any(|r| r.thread == RedoThread(2)));
    assert!(rows.iter().any(|r| r.thread == RedoThread(1)));
}

/// A scenario run live (its events played as the engine polls, `into_source`) fires its faults
/// as they come, as `play` does all at once; a slow query under the timeout takes its time.
#[test]
fn a_live_scenario_fires_its_faults_and_a_slow_query_takes_its_time() {
    let scenario = Scenario::from_json(
        r#"{"name": "live-faults", "events": [
          {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "a"}},
          {"event": "commit", "session": "s1"},
          {"event": "fault", "fault": {"kind": "slow_query", "millis": 300}},
          {"event": "fault", "fault": {"kind": "drop_connection", "after_rows": 0}}
        ]}"#,
    )
    .unwrap();
    let mut s = scenario.into_source(16).unwrap();
    assert_eq!(s.pending_faults(), 0);
    s.current_scn().unwrap();
    assert_eq!(s.pending_faults(), 2, "the played faults are queued");
    let started = std::time::Instant::now();
    let e = mine(&mut s).unwrap_err();
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code(&e), 3113);
}
