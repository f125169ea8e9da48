//! The engine's records besides changes: heartbeats, orphan release, the age policy, the DLQ
//! for undecodable rows, and DDL that changes the captured set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::engine_support;

use std::time::Duration;

use cdc_core::CdcCode;
use cdc_core::config::DecodeErrorAction;
use cdc_logminer::engine::{
    CaptureEngine, EngineError, EngineRecord, EngineSettings, HeartbeatReason, ManualClock,
    RecordKind, SchemaChange,
};
use cdc_logminer::sim::Scenario;
use engine_support::*;

fn run_scenario(
    json: &str,
    steps: usize,
    tick: Duration,
    edit: impl FnOnce(&mut EngineSettings),
) -> (Result<(), EngineError>, Vec<EngineRecord>) {
    let source = Scenario::from_json(json).unwrap().into_source(1).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    edit(&mut s);
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    for _ in 0..steps {
        if let Err(e) = engine.step(&mut records) {
            return (Err(e), records);
        }
        clock.advance(tick);
    }
    (Ok(()), records)
}

fn ops_types(records: &[EngineRecord]) -> Vec<&'static str> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) => Some(e.kind.as_str()),
            _ => None,
        })
        .collect()
}

const QUIET: &str = r#"{"name": "quiet", "database": {"seed": 3}, "events": [
  {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "a"}},
  {"event": "commit", "session": "s1"}
]}"#;

#[test]
fn heartbeats_at_start_and_when_quiet() {
    let (result, records) = run_scenario(QUIET, 40, Duration::from_secs(1), |s| {
        s.heartbeat_interval = Some(Duration::from_secs(10))
    });
    result.unwrap();
    let beats: Vec<HeartbeatReason> = records
        .iter()
        .filter_map(|r| match r.kind {
            RecordKind::Heartbeat { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(beats.first(), Some(&HeartbeatReason::Start));
    // 40 s of quiet after the one commit: a heartbeat about every 10 s
    let idle = beats
        .iter()
        .filter(|b| **b == HeartbeatReason::Idle)
        .count();
    assert!((3..=4).contains(&idle), "{idle} idle heartbeats");
    // the start heartbeat carries the first-start fields; later ones carry the last commit
    assert!(records[0].position.first_start.is_some());
    let last = records.last().unwrap();
    assert!(matches!(last.kind, RecordKind::Heartbeat { .. }));
    assert!(last.position.last_commit.is_some());
    assert!(last.position.resume.addr.is_some());
    // with the interval off, only the start heartbeat
    let (_, records) = run_scenario(QUIET, 40, Duration::from_secs(1), |s| {
        s.heartbeat_interval = None
    });
    let beats = records
        .iter()
        .filter(|r| matches!(r.kind, RecordKind::Heartbeat { .. }))
        .count();
    assert_eq!(beats, 1);
}

const ORPHAN: &str = r#"{"name": "orphan", "database": {"seed": 4}, "events": [
  {"event": "begin", "session": "victim", "user": "APP", "private_strand": false},
  {"event": "insert", "session": "victim", "table": "APP.CUSTOMERS", "values": {"ID": 7, "NAME": "orphan"}},
  {"event": "kill_session", "session": "victim"},
  {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 8, "NAME": "survivor"}},
  {"event": "commit", "session": "s1"},
  {"event": "tick", "millis": 1000},
  {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 9, "NAME": "later"}},
  {"event": "commit", "session": "s1"}
]}"#;

#[test]
fn an_orphan_is_released_into_the_ledger() {
    let (result, records) = run_scenario(ORPHAN, 30, Duration::from_secs(2), |s| {
        s.orphan.check_interval_ms = 5_000
    });
    result.unwrap();
    assert!(
        ops_types(&records).contains(&"transaction-orphan-released"),
        "{:?}",
        ops_types(&records)
    );
    let last = &records.last().unwrap().position;
    assert_eq!(last.released_xids.len(), 1);
    // the orphan's change is never published
    let names: Vec<String> = delivered(&records)
        .iter()
        .flat_map(|(_, _, cs)| {
            cs.iter()
                .filter_map(|c| c.after.as_ref()?.get("NAME").cloned())
        })
        .map(|v| format!("{v:?}"))
        .collect();
    assert!(names.iter().all(|n| !n.contains("orphan")), "{names:?}");
    assert!(names.iter().any(|n| n.contains("survivor")), "{names:?}");
    // with action fail: CDC-7002
    let (result, _) = run_scenario(ORPHAN, 30, Duration::from_secs(2), |s| {
        s.orphan.check_interval_ms = 5_000;
        s.orphan.action = cdc_core::config::OrphanAction::Fail;
    });
    let error = result.unwrap_err();
    assert_eq!(error.cdc().unwrap().code(), CdcCode::OrphanTransaction);
}

const LONG: &str = r#"{"name": "long", "database": {"seed": 5}, "events": [
  {"event": "begin", "session": "slow", "user": "APP", "private_strand": false},
  {"event": "insert", "session": "slow", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "old"}},
  {"event": "tick", "millis": 1000},
  {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "x"}},
  {"event": "commit", "session": "s1"}
]}"#;

#[test]
fn the_age_policy_discards_or_stops() {
    let (result, records) = run_scenario(LONG, 20, Duration::from_secs(1), |s| {
        s.age.max_age_ms = Some(5_000);
        s.age.action = cdc_core::config::MaxAgeAction::Discard;
    });
    result.unwrap();
    assert!(ops_types(&records).contains(&"transaction-discarded"));
    assert!(
        records
            .iter()
            .any(|r| matches!(&r.kind, RecordKind::Dlq(d) if d.kind == cdc_core::DlqKind::TransactionDiscarded))
    );
    assert_eq!(records.last().unwrap().position.released_xids.len(), 1);
    let (result, _) = run_scenario(LONG, 20, Duration::from_secs(1), |s| {
        s.age.max_age_ms = Some(5_000);
    });
    assert_eq!(
        result.unwrap_err().cdc().unwrap().code(),
        CdcCode::TransactionTooOld
    );
}

/// A row older than the first layout the engine knows (it starts after the ALTER, with the
/// newest layout) comes back generic and has no exact version: CDC-6001 naming the table,
/// whatever `cdc.on.decode.error` says, and never a DLQ record, which would lose a committed
/// change from its topic.
#[test]
fn a_lag_case_row_without_an_exact_version_stops_and_never_reaches_the_dlq() {
    let json = r#"{"name": "alter", "database": {"seed": 15}, "events": [
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 4000, "NAME": "before the alter"}},
      {"event": "commit", "session": "s1"},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 4001, "NAME": "after", "TAGS": "new"}},
      {"event": "commit", "session": "s1"}
    ]}"#;
    // the engine mines only after the ALTER, so the older rows come back generic (STATUS 2)
    let source = Scenario::from_json(json).unwrap().play().unwrap();
    for mode in [DecodeErrorAction::Fail, DecodeErrorAction::Dlq] {
        let (result, records, metrics) =
            capture_played(source.database(), None, |s| s.on_decode_error = mode);
        let error = result.unwrap_err();
        let cdc = error.cdc().unwrap();
        assert_eq!(
            cdc.code(),
            CdcCode::DictionaryUnavailable,
            "{mode:?}: {error}"
        );
        assert!(cdc.to_string().contains("APP.CUSTOMERS"), "{cdc}");
        assert_eq!(metrics.decode_failures, 1, "{mode:?}");
        assert!(dlq_records(&records).is_empty(), "{mode:?}");
        assert!(
            !ops_types(&records).contains(&"decode-error-dlq"),
            "{mode:?}"
        );
        assert!(delivered_ids(&records).is_empty(), "{mode:?}");
    }
}

#[test]
fn a_created_table_is_captured_from_its_first_row() {
    let json = r#"{"name": "create", "database": {"seed": 16}, "events": [
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "before"}},
      {"event": "commit", "session": "s1"},
      {"event": "create_table", "table": {"owner": "APP", "name": "NEW_T",
        "columns": [{"name": "ID", "type": "NUMBER(9)"}, {"name": "LABEL", "type": "VARCHAR2(20)"}],
        "primary_key": ["ID"]}},
      {"event": "insert", "session": "s2", "table": "APP.NEW_T", "values": {"ID": 1, "LABEL": "first"}},
      {"event": "insert", "session": "s2", "table": "APP.NEW_T", "values": {"ID": 2, "LABEL": "second"}},
      {"event": "commit", "session": "s2"}
    ]}"#;
    // the engine opens (and resolves the captured tables) during the ticks; its first step's
    // poll then runs the rest at once, so the CREATE and the new table's first rows fall in one
    // step, which the CREATE must cut for the rows to be selected
    let source = Scenario::from_json(json).unwrap().into_source(6).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let s = settings(&spill);
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    assert_eq!(engine.metrics().step_cuts, 1, "the CREATE ends its step");
    let tables: Vec<String> = delivered(&records)
        .iter()
        .flat_map(|(_, _, cs)| cs.iter().map(|c| c.table.to_string()))
        .collect();
    assert_eq!(tables, ["APP.CUSTOMERS", "APP.NEW_T", "APP.NEW_T"]);
    let added: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) if e.kind == cdc_core::OpsKind::TableAdded => Some(&e.details),
            _ => None,
        })
        .collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0]["table"], "APP.NEW_T");
    assert_eq!(added[0]["snapshot"], "false");
}

/// Without a primary key, a table is keyed by its unique index over NOT NULL columns, the one
/// with the lowest name; an index with a nullable column does not qualify.
#[test]
fn a_table_without_a_primary_key_is_keyed_by_its_unique_not_null_index() {
    let json = r#"{"name": "unique key", "database": {"seed": 16}, "events": [
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "create_table", "table": {"owner": "APP", "name": "SKUS",
        "columns": [{"name": "SKU", "type": "VARCHAR2(20)", "nullable": false},
                    {"name": "EAN", "type": "VARCHAR2(13)"},
                    {"name": "LABEL", "type": "VARCHAR2(20)"}],
        "unique_indexes": [{"name": "SKUS_B_SKU", "columns": ["SKU"]},
                           {"name": "SKUS_A_EAN", "columns": ["EAN"]}]}},
      {"event": "insert", "session": "s1", "table": "APP.SKUS",
        "values": {"SKU": "K-1", "EAN": "4006381333931", "LABEL": "pen"}},
      {"event": "commit", "session": "s1"}
    ]}"#;
    let source = Scenario::from_json(json).unwrap().into_source(6).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let layouts: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Change(c) => Some(&c.layout),
            _ => None,
        })
        .collect();
    assert_eq!(layouts.len(), 1, "{records:?}");
    assert_eq!(layouts[0].key, ["SKU"]);
    assert_eq!(layouts[0].key_source, cdc_core::KeySource::UniqueIndex);
}

const LATE_COMMIT: &str = r#"{"name": "late commit", "database": {"seed": 6}, "events": [
  {"event": "begin", "session": "slow", "user": "APP", "private_strand": false},
  {"event": "insert", "session": "slow", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "old"}},
  {"event": "tick", "millis": 1000},
  {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "x"}},
  {"event": "commit", "session": "s1"},
  {"event": "tick", "millis": 1000}, {"event": "tick", "millis": 1000}, {"event": "tick", "millis": 1000},
  {"event": "tick", "millis": 1000}, {"event": "tick", "millis": 1000}, {"event": "tick", "millis": 1000},
  {"event": "tick", "millis": 1000}, {"event": "tick", "millis": 1000}, {"event": "tick", "millis": 1000},
  {"event": "insert", "session": "slow", "table": "APP.CUSTOMERS", "values": {"ID": 3, "NAME": "late"}},
  {"event": "commit", "session": "slow"}
]}"#;

#[test]
fn a_commit_of_a_discarded_transaction_stops_even_after_a_restart() {
    let discard = |s: &mut EngineSettings| {
        s.age.max_age_ms = Some(5_000);
        s.age.action = cdc_core::config::MaxAgeAction::Discard;
    };
    let (result, records) = run_scenario(LATE_COMMIT, 40, Duration::from_secs(1), discard);
    let error = result.unwrap_err();
    assert_eq!(
        error.cdc().unwrap().code(),
        CdcCode::OrphanReleaseViolation,
        "{error}"
    );
    // restart from the position of the discard's ops record: the ledger comes back from the
    // offset and the late COMMIT still stops the task
    let discarded_at = records
        .iter()
        .rposition(
            |r| matches!(&r.kind, RecordKind::Ops(e) if e.kind == cdc_core::OpsKind::TransactionDiscarded),
        )
        .unwrap();
    let position = records[discarded_at].position.clone();
    assert_eq!(position.released_xids.len(), 1);
    let source = Scenario::from_json(LATE_COMMIT).unwrap().play().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    discard(&mut s);
    let mut engine = CaptureEngine::open(
        cdc_logminer::sim::SimSource::new(source.database().clone()),
        s,
        Some(cdc_offset::Position::from_json(&position.to_json()).unwrap()),
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut out = Vec::new();
    let error = run_until_quiet(&mut engine, &clock, &mut out, 3).unwrap_err();
    assert_eq!(
        error.cdc().unwrap().code(),
        CdcCode::OrphanReleaseViolation,
        "{error}"
    );
}

#[test]
fn the_session_is_recycled_at_its_maximum_age() {
    let source = Scenario::from_json(QUIET).unwrap().into_source(1).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    s.session_max_age = Duration::from_secs(60);
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    for _ in 0..10 {
        engine.step(&mut records).unwrap();
        clock.advance(Duration::from_secs(25));
    }
    // 250 s of steps with a 60 s maximum age: recycled at about 75, 150 and 225 s
    let recycles = engine.metrics().session_recycles;
    assert!((3..=4).contains(&recycles), "{recycles} recycles");
}

#[test]
fn an_offset_of_another_database_stops_at_start() {
    let (result, records) = run_scenario(QUIET, 5, Duration::from_secs(1), |_| {});
    result.unwrap();
    let mut position = cdc_offset::Position::clone(&records.last().unwrap().position);
    position.identity.dbid ^= 1;
    let source = Scenario::from_json(QUIET).unwrap().into_source(1).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let error = CaptureEngine::open(
        source,
        settings(&spill),
        Some(position),
        Box::new(ManualClock::default()),
    )
    .unwrap_err();
    assert_eq!(error.code(), CdcCode::Topology, "{error}");
}

#[test]
fn rows_after_an_alter_in_the_same_step_use_the_new_layout() {
    // per poll three events: the engine opens during the ticks, mines the first insert in one
    // step, then the ALTER and the insert that uses the new column arrive in one step, which
    // the ALTER must cut so the insert is decoded with the new schema version
    let json = r#"{"name": "alter", "database": {"seed": 17}, "events": [
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "before"}},
      {"event": "commit", "session": "s1"},
      {"event": "tick", "millis": 10},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "after", "TAGS": "t"}},
      {"event": "commit", "session": "s1"}
    ]}"#;
    let source = Scenario::from_json(json).unwrap().into_source(3).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let versions: Vec<(u32, bool)> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Change(c) => Some((c.layout.version, c.layout.column("TAGS").is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(versions.len(), 2, "{versions:?}");
    assert!(versions[0].0 < versions[1].0, "{versions:?}");
    assert_eq!(
        (versions[0].1, versions[1].1),
        (false, true),
        "{versions:?}"
    );
    assert_eq!(engine.metrics().step_cuts, 1);
}

/// A schema change is seen whoever made it: `cdc.users.exclude` leaves out the excluded users'
/// changes of rows, not their DDL. Here the table's owner, who runs the ALTER, is excluded,
/// and another user's insert after it uses the new column.
#[test]
fn an_alter_by_an_excluded_user_still_makes_a_new_schema_version() {
    let json = r#"{"name": "alter-by-excluded", "database": {"seed": 17}, "events": [
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "begin", "session": "s1", "user": "HR"},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "before"}},
      {"event": "commit", "session": "s1"},
      {"event": "tick", "millis": 10},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "begin", "session": "s2", "user": "HR"},
      {"event": "insert", "session": "s2", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "after", "TAGS": "t"}},
      {"event": "commit", "session": "s2"}
    ]}"#;
    let source = Scenario::from_json(json).unwrap().into_source(3).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut settings = settings(&spill);
    // the ALTER runs as the table's owner
    settings.users_exclude = vec!["APP".into()];
    let mut engine = CaptureEngine::open(source, settings, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let changes: Vec<(u32, Option<String>)> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Change(c) => Some((
                c.layout.version,
                c.layout.column("TAGS").map(|_| format!("{:?}", c.event)),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(changes[0].0 < changes[1].0, "a new version: {changes:?}");
    assert_eq!(changes[0].1, None, "{changes:?}");
    assert!(
        changes[1].1.as_deref().is_some_and(|v| v.contains("\"t\"")),
        "the insert after the ALTER carries its new column: {changes:?}"
    );
}

/// The schema topic's records: every captured table's layout after the start heartbeat, a new
/// version valid from the DDL that changed the table and sent before the changes decoded with
/// it, and a removal when the table is dropped.
#[test]
fn layouts_go_out_at_start_after_ddl_and_on_drop() {
    let json = r#"{"name": "layouts", "database": {"seed": 17}, "events": [
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "before"}},
      {"event": "commit", "session": "s1"},
      {"event": "tick", "millis": 10},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "after", "TAGS": "t"}},
      {"event": "commit", "session": "s1"},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "drop_table", "table": "APP.CUSTOMERS"},
      {"event": "tick", "millis": 10}
    ]}"#;
    let source = Scenario::from_json(json).unwrap().into_source(3).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let start_scn = engine.position().resume.scn;
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let customers = cdc_core::TableId::new("APP", "CUSTOMERS");
    // the start heartbeat, then one layout per captured table, version 1, valid from the start
    assert!(matches!(records[0].kind, RecordKind::Heartbeat { .. }));
    let at_start: Vec<_> = records[1..]
        .iter()
        .map_while(|r| match &r.kind {
            RecordKind::Schema(SchemaChange::Version(layout)) => Some(layout),
            _ => None,
        })
        .collect();
    assert!(at_start.len() >= 2, "{at_start:?}");
    assert!(at_start.iter().any(|l| l.table == customers));
    for layout in &at_start {
        assert_eq!((layout.version, layout.valid_from), (1, start_scn));
        assert!(
            layout.supplemental.all_columns,
            "the simulator logs all columns"
        );
    }
    // after the start: CUSTOMERS' second version, then its removal, and nothing else
    let later: Vec<(usize, &SchemaChange)> = records
        .iter()
        .enumerate()
        .skip(1 + at_start.len())
        .filter_map(|(i, r)| match &r.kind {
            RecordKind::Schema(change) => Some((i, change)),
            _ => None,
        })
        .collect();
    assert_eq!(later.len(), 2, "{later:?}");
    let SchemaChange::Version(v2) = later[0].1 else {
        panic!("{later:?}");
    };
    assert_eq!((&v2.table, v2.version), (&customers, 2));
    assert!(v2.column("TAGS").is_some());
    assert_eq!(later[1].1, &SchemaChange::Removed(customers.clone()));
    let changes: Vec<(usize, cdc_core::Scn, u32)> = records
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match &r.kind {
            RecordKind::Change(c) => Some((i, c.event.scn, c.layout.version)),
            _ => None,
        })
        .collect();
    assert_eq!(changes.len(), 2, "{changes:?}");
    // valid from the ALTER's SCN, between the two inserts; sent before the change that uses it
    assert!(changes[0].1 < v2.valid_from && v2.valid_from < changes[1].1);
    assert!(changes[0].0 < later[0].0 && later[0].0 < changes[1].0);
    assert_eq!(changes[1].2, 2);
    // the ops topic names each DDL and what it did to the captured tables
    let ops: Vec<(&str, &std::collections::BTreeMap<String, String>)> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) => Some((e.kind.as_str(), &e.details)),
            _ => None,
        })
        .collect();
    let of = |kind: &str| {
        ops.iter()
            .filter(|(t, _)| *t == kind)
            .map(|(_, d)| *d)
            .collect::<Vec<_>>()
    };
    let seen = of("ddl-seen");
    assert_eq!(seen.len(), 2, "{ops:?}");
    assert!(seen[0]["sql"].contains("TAGS"), "{seen:?}");
    assert_eq!(seen[0]["object"], "CUSTOMERS");
    assert_eq!(seen[0]["scn"], v2.valid_from.to_string());
    let applied = of("ddl-applied");
    assert_eq!(applied.len(), 2, "{ops:?}");
    assert_eq!(
        (
            applied[0]["object"].as_str(),
            applied[0]["version"].as_str()
        ),
        ("CUSTOMERS", "2")
    );
    assert_eq!(applied[1].get("removed").map(String::as_str), Some("true"));
    let removed = of("table-removed");
    assert_eq!(removed.len(), 1, "{ops:?}");
    assert_eq!(removed[0]["table"], "APP.CUSTOMERS");
    assert!(of("table-added").is_empty(), "{ops:?}");
}

/// A restart goes on numbering where the published versions stop: a layout that has not
/// changed keeps its version and `valid_from`, a DDL mined again takes up the version it made
/// before, and a layout no stored version matches gets the next number.
#[test]
fn a_restart_goes_on_from_the_published_versions() {
    use std::sync::Arc;

    use cdc_logminer::engine::{PublishedSchemas, PublishedVersion};

    let json = r#"{"name": "republish", "database": {"seed": 19}, "events": [
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "before"}},
      {"event": "commit", "session": "s1"},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "after", "TAGS": "t"}},
      {"event": "commit", "session": "s1"},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}
    ]}"#;
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let source = Scenario::from_json(json).unwrap().into_source(3).unwrap();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let mut first = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut first, 3).unwrap();
    let db = engine.source_mut().database().clone();
    let customers = cdc_core::TableId::new("APP", "CUSTOMERS");
    let layouts = |records: &[EngineRecord]| -> Vec<Arc<cdc_core::TableLayout>> {
        records
            .iter()
            .filter_map(|r| match &r.kind {
                RecordKind::Schema(SchemaChange::Version(layout)) => Some(Arc::clone(layout)),
                _ => None,
            })
            .collect()
    };
    let published = layouts(&first);
    let of_customers = |all: &[Arc<cdc_core::TableLayout>]| -> Vec<(u32, cdc_core::Scn)> {
        all.iter()
            .filter(|l| l.table == customers)
            .map(|l| (l.version, l.valid_from))
            .collect()
    };
    let stored = of_customers(&published);
    assert_eq!(stored.len(), 2, "{stored:?}");
    // what the schema topic would hold: each table's versions; `same` compares what they publish
    let store = |matches: bool| {
        let mut schemas = PublishedSchemas::default();
        let mut tables: Vec<&cdc_core::TableId> = published.iter().map(|l| &l.table).collect();
        tables.dedup();
        for table in tables {
            // the other tables had no DDL for an hour: a stored version that differs from
            // their dictionary would stop the start (CDC-6003)
            let matches = matches || *table != customers;
            let versions = published
                .iter()
                .filter(|l| &l.table == table)
                .map(|l| {
                    let l = Arc::clone(l);
                    PublishedVersion {
                        version: l.version,
                        valid_from: l.valid_from,
                        same: Arc::new(move |now: &cdc_core::TableLayout| {
                            matches && now.columns == l.columns && now.key == l.key
                        }),
                    }
                })
                .collect();
            schemas.insert(table.clone(), versions);
        }
        schemas
    };
    let restart = |k: usize, matches: bool| {
        let mut s = settings(&spill);
        s.published = store(matches);
        let position = first[k].position.as_ref().clone();
        let mut engine = CaptureEngine::open(
            cdc_logminer::sim::SimSource::new(db.clone()),
            s,
            Some(position),
            Box::new(clock.clone()),
        )
        .unwrap();
        let mut records = Vec::new();
        run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
        records
    };
    let change_at = |n: usize| {
        first
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.kind, RecordKind::Change(_)))
            .nth(n)
            .map(|(k, _)| k)
            .unwrap()
    };
    let versions_of_changes = |records: &[EngineRecord]| -> Vec<u32> {
        records
            .iter()
            .filter_map(|r| match &r.kind {
                RecordKind::Change(c) => Some(c.layout.version),
                _ => None,
            })
            .collect()
    };

    // after the last change: every table as it was published, CUSTOMERS at version 2
    let after = restart(change_at(1), true);
    let again = layouts(&after);
    assert_eq!(of_customers(&again), vec![stored[1]]);
    for layout in &again {
        let before = published
            .iter()
            .rev()
            .find(|l| l.table == layout.table)
            .unwrap();
        assert_eq!(
            (layout.version, layout.valid_from),
            (before.version, before.valid_from),
            "{}",
            layout.table
        );
    }

    // after the first change, before the ALTER: the dictionary already has TAGS, which version
    // 2 published; the ALTER mined again makes no third version
    let before_ddl = restart(change_at(0), true);
    assert_eq!(of_customers(&layouts(&before_ddl)), vec![stored[1]]);
    assert_eq!(versions_of_changes(&before_ddl), vec![2]);

    // nothing stored for CUSTOMERS is the same: the next number, valid from the resume SCN
    let resume = first[change_at(0)].position.resume.scn;
    let changed = restart(change_at(0), false);
    assert_eq!(of_customers(&layouts(&changed)), vec![(3, resume)]);
    assert_eq!(versions_of_changes(&changed), vec![3]);
}

/// A first start after an ALTER: the log it starts in holds rows of the table older than the
/// start, which LogMiner returns generic (STATUS 2, `"COL n"`); they are not the task's to
/// publish and cannot stop it.
#[test]
fn a_first_start_passes_over_older_rows_it_cannot_decode() {
    let json = r#"{"name": "start-after-alter", "database": {"seed": 21}, "events": [
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "before"}},
      {"event": "commit", "session": "s1"},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "after", "TAGS": "t"}},
      {"event": "commit", "session": "s1"}
    ]}"#;
    let source = Scenario::from_json(json).unwrap().play().unwrap();
    let alter = source.database().truth().ddl.last().unwrap().scn;
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    s.start_scn = Some(alter);
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let delivered: Vec<_> = delivered(&records)
        .into_iter()
        .flat_map(|(_, _, changes)| changes)
        .collect();
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    let after = delivered[0].after.as_ref().unwrap();
    assert!(after.contains_key("TAGS"), "{after:?}");
    assert_eq!(engine.metrics().decode_failures, 0);
}

/// CDC-6003 at start: a stored version that differs from the dictionary stops the start when
/// the table's last DDL came more than 10 s before the resume SCN's time (the stored versions
/// are wrong); DDL after the resume point explains the difference and the start goes on.
#[test]
fn a_stored_version_no_later_ddl_explains_stops_the_start() {
    use std::sync::Arc;

    use cdc_logminer::engine::{PublishedSchemas, PublishedVersion};

    let json = r#"{"name": "mismatch", "database": {"seed": 20}, "events": [
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "before"}},
      {"event": "commit", "session": "s1"},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "tick", "millis": 20000},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "after", "TAGS": "t"}},
      {"event": "commit", "session": "s1"},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}
    ]}"#;
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let source = Scenario::from_json(json).unwrap().into_source(3).unwrap();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let mut first = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut first, 3).unwrap();
    let db = engine.source_mut().database().clone();
    let customers = cdc_core::TableId::new("APP", "CUSTOMERS");
    // a schema topic that lost CUSTOMERS' second version (the one with TAGS)
    let v1 = first
        .iter()
        .find_map(|r| match &r.kind {
            RecordKind::Schema(SchemaChange::Version(l)) if l.table == customers => {
                Some(Arc::clone(l))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(v1.version, 1);
    let stored = || {
        let mut schemas = PublishedSchemas::default();
        let l = Arc::clone(&v1);
        schemas.insert(
            customers.clone(),
            vec![PublishedVersion {
                version: 1,
                valid_from: l.valid_from,
                same: Arc::new(move |now: &cdc_core::TableLayout| now.columns == l.columns),
            }],
        );
        schemas
    };
    let changes: Vec<usize> = first
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r.kind, RecordKind::Change(_)))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(changes.len(), 2);
    let open = |k: usize| {
        let mut s = settings(&spill);
        s.published = stored();
        CaptureEngine::open(
            cdc_logminer::sim::SimSource::new(db.clone()),
            s,
            Some(first[k].position.as_ref().clone()),
            Box::new(clock.clone()),
        )
    };

    // resuming 20 s after the ALTER: nothing ahead explains the stored version
    let error = open(changes[1]).unwrap_err();
    assert_eq!(error.code(), CdcCode::SchemaMismatch, "{error}");
    let message = error.to_string();
    assert!(message.contains("APP.CUSTOMERS"), "{message}");
    assert!(message.contains("stored version 1"), "{message}");

    // a first start (no offset) has nothing to reconcile: no stop, the next number
    let (result, records, _) = capture_played(&db, None, |s| {
        s.published = stored();
        s.start_scn = Some(first[changes[1]].position.resume.scn);
    });
    result.unwrap();
    let started = records.iter().find_map(|r| match &r.kind {
        RecordKind::Schema(SchemaChange::Version(l)) if l.table == customers => Some(l.version),
        _ => None,
    });
    assert_eq!(started, Some(2));

    // resuming before the ALTER: it is ahead in the redo; the start goes on, and the
    // dictionary's layout is the next version
    let mut engine = open(changes[0]).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let versions: Vec<u32> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Change(c) => Some(c.layout.version),
            _ => None,
        })
        .collect();
    assert_eq!(versions, vec![2]);
}

#[test]
fn archive_only_mines_a_change_once_its_log_is_archived() {
    let run = |archived: bool, mode: cdc_logminer::source::CaptureMode| {
        let mut events = vec![
            r#"{"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "a"}}"#,
            r#"{"event": "commit", "session": "s1"}"#,
        ];
        if archived {
            events.push(r#"{"event": "log_switch"}"#);
            events.push(r#"{"event": "archive"}"#);
        }
        let json = format!(
            r#"{{"name": "archive", "database": {{"seed": 18}}, "events": [{}]}}"#,
            events.join(",")
        );
        let db = Scenario::from_json(&json)
            .unwrap()
            .play()
            .unwrap()
            .database()
            .clone();
        let (result, records, _) = capture_played(&db, None, |s| s.capture_mode = mode);
        result.unwrap();
        delivered(&records).len()
    };
    use cdc_logminer::source::CaptureMode::{ArchiveOnly, Online};
    assert_eq!(run(false, Online), 1, "online mode mines the current log");
    assert_eq!(
        run(false, ArchiveOnly),
        0,
        "archive_only waits for the archive"
    );
    assert_eq!(run(true, ArchiveOnly), 1);
}

fn dlq_records(records: &[EngineRecord]) -> Vec<&cdc_logminer::engine::DlqRecord> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Dlq(d) => Some(d),
            _ => None,
        })
        .collect()
}

/// Captures a copy of `db` (every event played) from `position`, or without one from its
/// oldest log, with the test settings as `edit` leaves them, until it is quiet: the outcome,
/// the records and the engine's counters.
fn capture_played(
    db: &cdc_logminer::sim::SimDatabase,
    position: Option<cdc_offset::Position>,
    edit: impl FnOnce(&mut EngineSettings),
) -> (
    Result<(), EngineError>,
    Vec<EngineRecord>,
    cdc_logminer::engine::EngineMetrics,
) {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    if position.is_none() {
        s.start_scn = Some(oldest_scn(db));
    }
    edit(&mut s);
    let mut engine = CaptureEngine::open(
        cdc_logminer::sim::SimSource::new(db.clone()),
        s,
        position,
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut records = Vec::new();
    let result = run_until_quiet(&mut engine, &clock, &mut records, 3);
    (result, records, engine.metrics())
}

/// (table, ID) of each delivered change, in order.
fn delivered_ids(records: &[EngineRecord]) -> Vec<(String, String)> {
    delivered(records)
        .into_iter()
        .flat_map(|(_, _, changes)| changes)
        .map(|c| {
            let image = c.after.or(c.before).unwrap();
            let id = match &image["ID"] {
                cdc_core::Value::Number(n) => n.to_string(),
                other => format!("{other:?}"),
            };
            (c.table.table.clone(), id)
        })
        .collect()
}

/// A row that cannot be decoded matters only if its transaction commits with it: one rolled
/// back, or taken back by ROLLBACK TO SAVEPOINT, neither stops the task nor reaches the DLQ.
#[test]
fn undecodable_rows_that_are_rolled_back_neither_stop_nor_reach_the_dlq() {
    let json = r#"{"name": "rolled-back", "database": {"seed": 22}, "events": [
      {"event": "create_table", "table": {"owner": "APP", "name": "FLAGS",
        "columns": [{"name": "ID", "type": "NUMBER(9)"}, {"name": "OK", "type": "BOOLEAN"}],
        "primary_key": ["ID"]}},
      {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "rolled back"}},
      {"event": "rollback", "session": "s1"},
      {"event": "insert", "session": "s4", "table": "APP.FLAGS", "values": {"ID": 1, "OK": true}},
      {"event": "rollback", "session": "s4"},
      {"event": "insert", "session": "s2", "table": "APP.ORDERS", "values": {"ID": 5, "STATUS": "kept"}},
      {"event": "savepoint", "session": "s2", "name": "a"},
      {"event": "insert", "session": "s2", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "undone"}},
      {"event": "update", "session": "s2", "table": "APP.CUSTOMERS", "where": {"ID": 2}, "set": {"NAME": "undone too"}},
      {"event": "insert", "session": "s2", "table": "APP.FLAGS", "values": {"ID": 2, "OK": false}},
      {"event": "rollback_to", "session": "s2", "name": "a"},
      {"event": "commit", "session": "s2"},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "insert", "session": "s3", "table": "APP.CUSTOMERS", "values": {"ID": 3, "NAME": "after", "TAGS": "t"}},
      {"event": "commit", "session": "s3"}
    ]}"#;
    // mined after the ALTER: the CUSTOMERS rows before it come back generic (STATUS 2); the
    // FLAGS rows come back UNSUPPORTED (a BOOLEAN column)
    let source = Scenario::from_json(json).unwrap().play().unwrap();
    for mode in [DecodeErrorAction::Fail, DecodeErrorAction::Dlq] {
        let (result, records, metrics) =
            capture_played(source.database(), None, |s| s.on_decode_error = mode);
        result.unwrap();
        // the rows were mined and could not be decoded (the insert and update of the savepoint,
        // the rolled-back insert), and none of them counted
        assert_eq!(metrics.decode_failures, 3, "{mode:?}");
        assert!(dlq_records(&records).is_empty(), "{mode:?}");
        assert_eq!(
            delivered_ids(&records),
            [
                ("ORDERS".to_owned(), "5".to_owned()),
                ("CUSTOMERS".to_owned(), "3".to_owned())
            ],
            "{mode:?}"
        );
    }
}

/// A restart mines again the transactions committed after its resume point (a transaction
/// still open there holds it back), and skips those acknowledged. After a DDL, LogMiner returns
/// their older rows generic: that cannot stop the restart, since nothing of them is published.
#[test]
fn a_restart_passes_over_acknowledged_rows_a_ddl_made_undecodable() {
    let json = r#"{"name": "restart-after-alter", "database": {"seed": 23}, "events": [
      {"event": "begin", "session": "s1", "private_strand": false},
      {"event": "insert", "session": "s1", "table": "APP.ORDERS", "values": {"ID": 5, "STATUS": "open long"}},
      {"event": "insert", "session": "s2", "table": "APP.CUSTOMERS", "values": {"ID": 10, "NAME": "published"}},
      {"event": "commit", "session": "s2"},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "add_column", "table": "APP.CUSTOMERS", "column": {"name": "TAGS", "type": "VARCHAR2(30)"}},
      {"event": "insert", "session": "s3", "table": "APP.CUSTOMERS", "values": {"ID": 11, "NAME": "after", "TAGS": "t"}},
      {"event": "commit", "session": "s3"},
      {"event": "commit", "session": "s1"}
    ]}"#;
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let source = Scenario::from_json(json).unwrap().into_source(1).unwrap();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    // step until CUSTOMERS 10 is published, decoded before the ALTER
    let mut first = Vec::new();
    let published = loop {
        engine.step(&mut first).unwrap();
        clock.advance(Duration::from_millis(250));
        if let Some(k) = first
            .iter()
            .position(|r| matches!(&r.kind, RecordKind::Change(c) if c.event.change.table.table == "CUSTOMERS"))
        {
            break k;
        }
    };
    assert!(
        engine.source_mut().database().truth().ddl.is_empty(),
        "published before the ALTER"
    );
    run_until_quiet(&mut engine, &clock, &mut first, 20).unwrap();
    assert_eq!(delivered_ids(&first).len(), 3);
    let db = engine.source_mut().database().clone();
    let position = first[published].position.as_ref().clone();
    // the open transaction holds the resume point before the published one
    let published_commit = position.last_commit.unwrap();
    assert!(position.resume.addr.unwrap() < published_commit.addr);

    for mode in [DecodeErrorAction::Fail, DecodeErrorAction::Dlq] {
        let (result, records, metrics) =
            capture_played(&db, Some(position.clone()), |s| s.on_decode_error = mode);
        result.unwrap();
        assert_eq!(metrics.decode_failures, 1, "{mode:?}: mined again");
        assert_eq!(metrics.transactions_skipped, 0, "{mode:?}");
        assert!(dlq_records(&records).is_empty(), "{mode:?}");
        assert_eq!(
            delivered_ids(&records),
            [
                ("CUSTOMERS".to_owned(), "11".to_owned()),
                ("ORDERS".to_owned(), "5".to_owned())
            ],
            "{mode:?}"
        );
    }
}

/// With `dlq`, a committed transaction's undecodable rows go to the DLQ just before its
/// changes, carrying its commit with no change acknowledged: a restart from there sends the
/// changes and not the DLQ records again; one from before sends both.
#[test]
fn dlq_records_of_a_transaction_are_sent_once_across_a_restart() {
    // FLAGS has a BOOLEAN column: LogMiner gives its rows as UNSUPPORTED
    let json = r#"{"name": "dlq-once", "database": {"seed": 24}, "events": [
      {"event": "create_table", "table": {"owner": "APP", "name": "FLAGS",
        "columns": [{"name": "ID", "type": "NUMBER(9)"}, {"name": "OK", "type": "BOOLEAN"}],
        "primary_key": ["ID"]}},
      {"event": "insert", "session": "s1", "table": "APP.ORDERS", "values": {"ID": 5, "STATUS": "first"}},
      {"event": "insert", "session": "s1", "table": "APP.FLAGS", "values": {"ID": 1, "OK": true}},
      {"event": "insert", "session": "s1", "table": "APP.ORDERS", "values": {"ID": 6, "STATUS": "second"}},
      {"event": "commit", "session": "s1"}
    ]}"#;
    let source = Scenario::from_json(json).unwrap().play().unwrap();
    let run = |position: Option<cdc_offset::Position>| {
        let (result, records, _) = capture_played(source.database(), position, |s| {
            s.on_decode_error = DecodeErrorAction::Dlq
        });
        result.unwrap();
        records
    };
    let orders = [
        ("ORDERS".to_owned(), "5".to_owned()),
        ("ORDERS".to_owned(), "6".to_owned()),
    ];
    let first = run(None);
    assert_eq!(dlq_records(&first).len(), 1);
    assert_eq!(delivered_ids(&first), orders);
    let at_dlq = first
        .iter()
        .position(|r| matches!(r.kind, RecordKind::Dlq(_)))
        .unwrap();
    let first_change = first
        .iter()
        .position(|r| matches!(r.kind, RecordKind::Change(_)))
        .unwrap();
    assert!(
        at_dlq < first_change,
        "the DLQ record comes before the changes"
    );
    let RecordKind::Change(change) = &first[first_change].kind else {
        unreachable!()
    };
    let marker = first[at_dlq].position.last_commit.unwrap();
    assert_eq!(
        (marker.addr, marker.event_index),
        (change.commit.commit_addr, 0)
    );
    assert_eq!(dlq_records(&first)[0].kind.as_str(), "unsupported-row");
    assert!(
        matches!(&first[at_dlq + 1].kind, RecordKind::Ops(e) if e.kind == cdc_core::OpsKind::UnsupportedRow)
    );

    // after the DLQ record and its ops event: the changes, no DLQ record
    for k in [at_dlq, at_dlq + 1] {
        let again = run(Some(first[k].position.as_ref().clone()));
        assert!(dlq_records(&again).is_empty(), "restart after record {k}");
        assert_eq!(delivered_ids(&again), orders, "restart after record {k}");
    }
    // before it: both
    let again = run(Some(first[at_dlq - 1].position.as_ref().clone()));
    assert_eq!(dlq_records(&again).len(), 1);
    assert_eq!(delivered_ids(&again), orders);
    // after the first change: the second, and the DLQ record again (the earlier run might
    // have decoded that row, so it is not taken as sent)
    let again = run(Some(first[first_change].position.as_ref().clone()));
    assert_eq!(dlq_records(&again).len(), 1);
    assert_eq!(delivered_ids(&again), orders[1..]);
}

/// Past `held_failures_max` rows held, a failure is acted on as its row is applied: with
/// `dlq` its DLQ record goes out at once, between transactions; with `fail` the task stops.
#[test]
fn past_the_bound_a_failure_is_acted_on_at_once() {
    let json = r#"{"name": "held-bound", "database": {"seed": 25}, "events": [
      {"event": "create_table", "table": {"owner": "APP", "name": "FLAGS",
        "columns": [{"name": "ID", "type": "NUMBER(9)"}, {"name": "OK", "type": "BOOLEAN"}],
        "primary_key": ["ID"]}},
      {"event": "insert", "session": "s1", "table": "APP.FLAGS", "values": {"ID": 1, "OK": true}},
      {"event": "insert", "session": "s1", "table": "APP.FLAGS", "values": {"ID": 2, "OK": true}},
      {"event": "insert", "session": "s1", "table": "APP.ORDERS", "values": {"ID": 5, "STATUS": "kept"}},
      {"event": "commit", "session": "s1"},
      {"event": "insert", "session": "s2", "table": "APP.FLAGS", "values": {"ID": 3, "OK": true}},
      {"event": "rollback", "session": "s2"}
    ]}"#;
    let source = Scenario::from_json(json).unwrap().play().unwrap();
    let run = |mode: DecodeErrorAction| {
        let (result, records, _) = capture_played(source.database(), None, |s| {
            s.on_decode_error = mode;
            s.held_failures_max = 1;
        });
        (result, records)
    };

    let (result, records) = run(DecodeErrorAction::Dlq);
    result.unwrap();
    let dlq = dlq_records(&records);
    assert_eq!(dlq.len(), 2, "{dlq:?}");
    assert_eq!(dlq[0].xid, dlq[1].xid);
    // the second row's record went out at once, before the first (held to the commit)
    assert!(dlq[0].scn > dlq[1].scn);
    let commit = records
        .iter()
        .find_map(|r| match &r.kind {
            RecordKind::Change(c) => Some(c.commit.commit_addr),
            _ => None,
        })
        .unwrap();
    let carried: Vec<_> = records
        .iter()
        .filter(|r| matches!(r.kind, RecordKind::Dlq(_)))
        .map(|r| r.position.last_commit.map(|c| c.addr))
        .collect();
    assert_ne!(carried[0], Some(commit), "sent between transactions");
    assert_eq!(carried[1], Some(commit), "sent with its commit");
    assert_eq!(
        delivered_ids(&records),
        [("ORDERS".to_owned(), "5".to_owned())]
    );

    let (result, records) = run(DecodeErrorAction::Fail);
    assert_eq!(
        result.unwrap_err().cdc().unwrap().code(),
        CdcCode::Decode,
        "the second row stops the task"
    );
    assert!(delivered_ids(&records).is_empty());
}

/// `cdc.mining.fetch.size`: the mining query fetches its rows that many at a time, so a
/// smaller size takes more round trips for the same redo, and the changes are the same.
#[test]
fn the_mining_query_fetches_rows_in_batches_of_the_fetch_size() {
    use cdc_logminer::sim::{SimConfig, SimSource, WorkloadConfig};

    let db = finished_database(
        29,
        SimConfig::default(),
        WorkloadConfig {
            changes: 400,
            ..WorkloadConfig::default()
        },
    );
    let run = |fetch_size: u32| {
        let spill = tempfile::tempdir().unwrap();
        let clock = ManualClock::default();
        let mut s = settings(&spill);
        s.start_scn = Some(oldest_scn(&db));
        s.fetch_size = fetch_size;
        let mut engine =
            CaptureEngine::open(SimSource::new(db.clone()), s, None, Box::new(clock.clone()))
                .unwrap();
        let mut records = Vec::new();
        run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
        let source = engine.source();
        (source.fetches(), source.mined_rows(), changes(&records))
    };
    let (few, rows, wide) = run(1_000_000);
    let (many, same_rows, narrow) = run(100);
    assert_eq!(rows, same_rows);
    assert_eq!(
        wide, narrow,
        "the fetch size changes round trips, not what is delivered"
    );
    assert!(rows > 300, "enough rows to need several fetches: {rows}");
    assert!(
        many >= rows / 100,
        "{many} round trips for {rows} rows at 100 a fetch"
    );
    assert!(
        few < many,
        "{few} round trips at a million a fetch, {many} at 100"
    );
}

/// A first start lists the open transactions between its two reads of the current SCN; a
/// transaction that begins in between is not listed, and LogMiner may give its START row an
/// all-zero XID (naming no transaction). Its rows below the floor are its own all the same:
/// it is delivered whole.
#[test]
fn a_transaction_begun_during_a_first_start_is_delivered_whole_without_its_start_row() {
    let json = r#"{"name": "zero-start", "database": {"seed": 26, "zero_xid_start_rate": 1.0}, "events": [
      {"event": "tick", "millis": 10}, {"event": "tick", "millis": 10},
      {"event": "insert", "session": "s1", "table": "APP.ORDERS", "values": {"ID": 5, "STATUS": "first"}},
      {"event": "tick", "millis": 10},
      {"event": "insert", "session": "s1", "table": "APP.ORDERS", "values": {"ID": 6, "STATUS": "second"}},
      {"event": "commit", "session": "s1"}
    ]}"#;
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    // two events at each look at the current SCN: the START and first row come between the
    // start's two reads of it
    let source = Scenario::from_json(json).unwrap().into_source(2).unwrap();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let floor = first_start_floor(&records);
    let truth = engine.source().database().truth().clone();
    let first_row = truth.transactions[0].changes[0].scn;
    assert!(first_row < floor, "the first row is below the floor");
    assert_eq!(
        delivered_ids(&records),
        [
            ("ORDERS".to_owned(), "5".to_owned()),
            ("ORDERS".to_owned(), "6".to_owned())
        ]
    );
}

/// A table with a DATE and a RAW column, two rows in one transaction and an ORDERS row in
/// another: the literals a malformed-literal test breaks.
const STAMPS: &str = r#"{"name": "events", "database": {"seed": 31}, "events": [
  {"event": "create_table", "table": {"owner": "APP", "name": "STAMPS",
    "columns": [{"name": "ID", "type": "NUMBER(9)"}, {"name": "AT", "type": "DATE"},
                {"name": "TAG", "type": "RAW(8)"}],
    "primary_key": ["ID"]}},
  {"event": "insert", "session": "s1", "table": "APP.STAMPS", "values": {"ID": 1, "AT": "2025-01-02 03:04:05", "TAG": "0102"}},
  {"event": "insert", "session": "s1", "table": "APP.STAMPS", "values": {"ID": 2, "AT": "2026-02-28 13:45:59", "TAG": "ab01"}},
  {"event": "update", "session": "s1", "table": "APP.STAMPS", "where": {"ID": 1}, "set": {"TAG": "0304"}},
  {"event": "commit", "session": "s1"},
  {"event": "insert", "session": "s2", "table": "APP.ORDERS", "values": {"ID": 5, "STATUS": "kept"}},
  {"event": "commit", "session": "s2"}
]}"#;

/// What [`Edited`] does to each mined row.
type RowEdit = fn(&mut cdc_core::MinedRow);

/// Captures a played scenario's database through [`Edited`] with `edit` applied to each row.
fn capture_edited(
    db: &cdc_logminer::sim::SimDatabase,
    edit: RowEdit,
    mode: DecodeErrorAction,
) -> (
    Result<(), EngineError>,
    Vec<EngineRecord>,
    cdc_logminer::engine::EngineMetrics,
) {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    s.start_scn = Some(oldest_scn(db));
    s.on_decode_error = mode;
    let source = Edited {
        inner: cdc_logminer::sim::SimSource::new(db.clone()),
        edit,
    };
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    let result = run_until_quiet(&mut engine, &clock, &mut records, 3);
    (result, records, engine.metrics())
}

fn edit_sql(row: &mut cdc_core::MinedRow, from: &str, to: &str) {
    if let Some(sql) = &mut row.sql_redo
        && sql.contains(from)
    {
        *sql = sql.replace(from, to);
    }
}

/// A literal LogMiner could not have written under the session's formats (a date that does
/// not exist, a hex digit that is none) is the row's CDC-3001, or its DLQ record, never a
/// value: the task stops before anything of its transaction is published, or the row goes to
/// the DLQ and the rest of its transaction is published.
#[test]
fn a_malformed_literal_stops_the_task_or_goes_to_the_dlq() {
    let db = Scenario::from_json(STAMPS)
        .unwrap()
        .play()
        .unwrap()
        .database()
        .clone();
    let (result, records, _) = capture_edited(&db, |_| {}, DecodeErrorAction::Fail);
    result.unwrap();
    let all = [
        ("STAMPS".to_owned(), "1".to_owned()),
        ("STAMPS".to_owned(), "2".to_owned()),
        ("STAMPS".to_owned(), "1".to_owned()),
        ("ORDERS".to_owned(), "5".to_owned()),
    ];
    assert_eq!(delivered_ids(&records), all, "unedited, every change");

    let edits: [(RowEdit, &str); 3] = [
        // 30 February
        (
            |r| edit_sql(r, "'2026-02-28 13:45:59'", "'2026-02-30 13:45:59'"),
            "\"AT\" (DATE)",
        ),
        // a time of day past the last second
        (
            |r| edit_sql(r, "'2026-02-28 13:45:59'", "'2026-02-28 24:00:00'"),
            "\"AT\" (DATE)",
        ),
        // an odd count of hex digits, one of them none
        (
            |r| edit_sql(r, "HEXTORAW('ab01')", "HEXTORAW('zb0')"),
            "\"TAG\" (RAW)",
        ),
    ];
    for (edit, column) in edits {
        let (result, records, metrics) = capture_edited(&db, edit, DecodeErrorAction::Fail);
        let error = result.unwrap_err();
        let cdc = error.cdc().unwrap();
        assert_eq!(cdc.code(), CdcCode::Decode, "{error}");
        let text = error.to_string();
        assert!(
            text.contains("APP.STAMPS") && text.contains(column),
            "{text}"
        );
        assert_eq!(metrics.decode_failures, 1);
        assert!(
            !delivered_ids(&records).iter().any(|(t, _)| t == "STAMPS"),
            "nothing of the transaction is published"
        );

        let (result, records, metrics) = capture_edited(&db, edit, DecodeErrorAction::Dlq);
        result.unwrap();
        assert_eq!(metrics.decode_failures, 1);
        let dlq = dlq_records(&records);
        assert_eq!(dlq.len(), 1, "{column}");
        assert_eq!(dlq[0].kind.as_str(), "decode-error");
        assert_eq!(dlq[0].table.as_ref().unwrap().table, "STAMPS");
        assert!(dlq[0].message.contains(column), "{}", dlq[0].message);
        assert!(ops_types(&records).contains(&"decode-error-dlq"));
        assert_eq!(
            delivered_ids(&records),
            [all[0].clone(), all[2].clone(), all[3].clone()],
            "the row that did not decode is the only one missing"
        );
    }
}

/// A statement that names its table without an owner is read with the row's SEG_OWNER: the
/// same changes as with the owner written out.
#[test]
fn a_statement_without_an_owner_is_read_with_the_rows_seg_owner() {
    let db = Scenario::from_json(STAMPS)
        .unwrap()
        .play()
        .unwrap()
        .database()
        .clone();
    let (result, plain, _) = capture_edited(&db, |_| {}, DecodeErrorAction::Fail);
    result.unwrap();
    let (result, ownerless, metrics) = capture_edited(
        &db,
        |r| edit_sql(r, r#""APP"."STAMPS""#, r#""STAMPS""#),
        DecodeErrorAction::Fail,
    );
    result.unwrap();
    assert_eq!(metrics.decode_failures, 0);
    assert_eq!(changes(&ownerless), changes(&plain));
    assert_eq!(delivered_ids(&plain).len(), 4);
}

/// An UNSUPPORTED row (OPERATION_CODE 255) of a captured table is reported as what it is: the
/// task stops with a CDC-3001 that says UNSUPPORTED, or with `dlq` the row's DLQ record and
/// its `unsupported-row` event name the table, XID, SCN, STATUS and INFO. It is not counted as
/// a row that failed to decode.
#[test]
fn an_unsupported_row_is_reported_as_an_unsupported_row() {
    let json = r#"{"name": "unsupported", "database": {"seed": 32}, "events": [
      {"event": "create_table", "table": {"owner": "APP", "name": "FLAGS",
        "columns": [{"name": "ID", "type": "NUMBER(9)"}, {"name": "OK", "type": "BOOLEAN"}],
        "primary_key": ["ID"]}},
      {"event": "insert", "session": "s1", "table": "APP.FLAGS", "values": {"ID": 1, "OK": true}},
      {"event": "insert", "session": "s1", "table": "APP.ORDERS", "values": {"ID": 5, "STATUS": "kept"}},
      {"event": "commit", "session": "s1"}
    ]}"#;
    let db = Scenario::from_json(json)
        .unwrap()
        .play()
        .unwrap()
        .database()
        .clone();

    let (result, records, metrics) = capture_edited(&db, |_| {}, DecodeErrorAction::Fail);
    let error = result.unwrap_err();
    assert_eq!(error.cdc().unwrap().code(), CdcCode::Decode, "{error}");
    let text = error.to_string();
    assert!(
        text.contains("UNSUPPORTED row") && text.contains("APP.FLAGS"),
        "{text}"
    );
    assert_eq!(
        metrics.decode_failures, 0,
        "not a row that failed to decode"
    );
    assert!(delivered_ids(&records).is_empty());

    let (result, records, metrics) = capture_edited(&db, |_| {}, DecodeErrorAction::Dlq);
    result.unwrap();
    assert_eq!(metrics.decode_failures, 0);
    let dlq = dlq_records(&records);
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].kind.as_str(), "unsupported-row");
    assert_eq!(dlq[0].operation, Some(cdc_core::Operation::Unsupported));
    let event = records
        .iter()
        .find_map(|r| match &r.kind {
            RecordKind::Ops(e) if e.kind == cdc_core::OpsKind::UnsupportedRow => Some(e),
            _ => None,
        })
        .expect("an unsupported-row event");
    assert_eq!(event.details["table"], "APP.FLAGS");
    assert_eq!(event.details["xid"], dlq[0].xid.to_string());
    assert_eq!(event.details["scn"], dlq[0].scn.to_string());
    assert_eq!(event.details["status"], "2");
    assert_eq!(
        event.details["info"],
        dlq[0].info.clone().unwrap_or_default()
    );
    assert!(!ops_types(&records).contains(&"decode-error-dlq"));
    assert_eq!(
        delivered_ids(&records),
        [("ORDERS".to_owned(), "5".to_owned())]
    );
}

/// A ROLLBACK row with the all-zero RS_ID (no address) that ends the redo so far is applied
/// once: the cursor cannot stand on it, so every later read from the cursor delivers it again,
/// and the engine skips it instead of counting it as a new row at every step (a finished
/// database never went quiet; seed 92 of the journal's failed-statement workload).
#[test]
fn a_rollback_row_without_an_address_at_the_end_is_applied_once() {
    const ENDS_WITH_ZERO_RS_ID: &str = r#"{"name": "zero rs_id last",
      "database": {"seed": 12, "zero_rs_id_rollback_rate": 1.0},
      "events": [
        {"event": "insert", "session": "s2", "table": "APP.ORDERS", "values": {"ID": 11, "STATUS": "KEPT"}},
        {"event": "commit", "session": "s2"},
        {"event": "insert", "session": "s1", "table": "APP.ORDERS", "values": {"ID": 10, "STATUS": "NEW"}},
        {"event": "rollback", "session": "s1"}
    ]}"#;
    // the events are played while the engine runs (one per poll), after its first start
    let source = Scenario::from_json(ENDS_WITH_ZERO_RS_ID)
        .unwrap()
        .into_source(1)
        .unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    let mut rows = Vec::new();
    for _ in 0..12 {
        rows.push(engine.step(&mut records).unwrap().rows);
        clock.advance(Duration::from_secs(1));
    }
    // the redo's rows are applied by the first steps, then nothing is new
    assert!(rows[..8].iter().sum::<u64>() > 4, "{rows:?}");
    assert_eq!(&rows[8..], &[0, 0, 0, 0], "rows applied per step: {rows:?}");
    // and it was read again: the reads after it delivered it, and it was skipped
    assert!(
        engine.metrics().rows_mined > rows.iter().sum::<u64>(),
        "{rows:?}"
    );
    assert_eq!(changes(&records).len(), 1);
}

/// The rows with the all-zero RS_ID a read skips are the ones it gives again where they were,
/// known by what they are, never merely the first ones it gives: a step that ends a complete
/// log at such a row moves the next read to the next log, whose first row may be another one.
/// Counting them instead skipped that ROLLBACK, and its transaction stayed open.
#[test]
fn a_rollback_row_without_an_address_first_in_the_next_log_is_applied() {
    const ACROSS_A_SWITCH: &str = r#"{"name": "zero rs_id at a log switch",
      "database": {"seed": 12, "zero_rs_id_rollback_rate": 1.0},
      "events": [
        {"event": "insert", "session": "s1", "table": "APP.DOCS", "values": {"ID": 1}},
        {"event": "insert", "session": "s3", "table": "APP.DOCS", "values": {"ID": 3}},
        {"event": "rollback", "session": "s1"},
        {"event": "log_switch"},
        {"event": "rollback", "session": "s3"},
        {"event": "log_switch"},
        {"event": "insert", "session": "s2", "table": "APP.ORDERS", "values": {"ID": 11, "STATUS": "KEPT"}},
        {"event": "commit", "session": "s2"}
    ]}"#;
    let source = Scenario::from_json(ACROSS_A_SWITCH)
        .unwrap()
        .play()
        .unwrap();
    let db = source.database().clone();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut s = settings(&spill);
    s.start_scn = Some(oldest_scn(&db));
    s.max_logs_per_step = 1;
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    assert_eq!(changes(&records).len(), 1);
    let rolled_back = engine.buffer_metrics().rolled_back_transactions;
    assert_eq!(
        engine.buffer_metrics().open_transactions,
        0,
        "a ROLLBACK was skipped ({rolled_back} applied)"
    );
    assert_eq!(rolled_back, 2, "both ROLLBACK rows applied once");
}

/// A batch job's transaction on a table that is not captured stays open while the captured
/// tables go on: `batch` writes APP.DOCS, then, after a log switch, APP.CUSTOMERS, and its
/// session is killed before it ends.
const UNCAPTURED_LONG: &str = r#"{"name": "uncaptured long", "database": {"seed": 6}, "events": [
  {"event": "begin", "session": "batch", "user": "APP", "private_strand": false},
  {"event": "insert", "session": "batch", "table": "APP.DOCS", "values": {"ID": 1}},
  {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 21, "NAME": "first"}},
  {"event": "commit", "session": "s1"},
  {"event": "log_switch"},
  {"event": "archive"},
  {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 22, "NAME": "second"}},
  {"event": "commit", "session": "s1"},
  {"event": "insert", "session": "batch", "table": "APP.CUSTOMERS", "values": {"ID": 23, "NAME": "late"}},
  {"event": "kill_session", "session": "batch"},
"#;

fn uncaptured_long() -> String {
    format!("{UNCAPTURED_LONG}{}]}}", after_the_kill(24))
}

/// A transaction with no change to a captured table holds no resume point (only a change
/// does, `resume_scn` in the spec's offset table): the logs holding its START row can be
/// purged while it is open, and a restart from there mines its later change. That transaction
/// names its session by the change row, so orphan detection still releases it once the
/// session is gone, and its change is never published.
#[test]
fn a_transaction_on_tables_not_captured_holds_no_resume_point() {
    use cdc_logminer::sim::DbOp;
    use engine_support::snapshot::Shared;

    let source = Shared::new(
        Scenario::from_json(&uncaptured_long())
            .unwrap()
            .into_source(1)
            .unwrap(),
    );
    let first_log = source.db(|s| oldest_log(s.database()));
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut engine = CaptureEngine::open(
        source.clone(),
        settings(&spill),
        None,
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut records = Vec::new();
    for _ in 0..40 {
        engine.step(&mut records).unwrap();
        clock.advance(Duration::from_millis(500));
        if published_names(&records)
            .iter()
            .any(|n| n.contains("second"))
        {
            break;
        }
    }
    assert!(
        published_names(&records)
            .iter()
            .any(|n| n.contains("second")),
        "{:?}",
        published_names(&records)
    );
    assert_eq!(
        engine.buffer_metrics().open_transactions,
        1,
        "batch is open"
    );
    let position = records.last().unwrap().position.clone();
    let resume_log = position.resume.addr.unwrap().log_seq();
    assert!(
        resume_log > first_log,
        "the resume point stayed in log {resume_log}, where batch's START row is"
    );
    drop(engine);
    // the logs before the resume point go, as an archive retention would take them
    source.db(|s| {
        s.apply(&DbOp::Purge {
            up_to_sequence: resume_log - 1,
            remove_file: false,
        })
        .unwrap()
    });
    let mut s = settings(&spill);
    s.orphan.check_interval_ms = 5_000;
    let mut engine = CaptureEngine::open(
        source.clone(),
        s,
        Some(cdc_offset::Position::clone(&position)),
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut after = Vec::new();
    for _ in 0..40 {
        engine.step(&mut after).unwrap();
        clock.advance(Duration::from_secs(2));
    }
    let names = published_names(&after);
    assert!(names.iter().any(|n| n.contains("sixth")), "{names:?}");
    assert!(names.iter().all(|n| !n.contains("late")), "{names:?}");
    let released = orphans_released(&after);
    assert_eq!(released.len(), 1, "{:?}", ops_types(&after));
    assert_eq!(released[0].get("user").map(String::as_str), Some("APP"));
    assert_eq!(engine.buffer_metrics().open_transactions, 0);
}

fn oldest_log(db: &cdc_logminer::sim::SimDatabase) -> u32 {
    log_inventory(db).iter().map(|l| l.sequence).min().unwrap()
}
