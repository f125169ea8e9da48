//! Capture across schema changes (the lag case): rows written before an ALTER and mined after
//! it come back from LogMiner's online catalog generic (STATUS 2, `"COL n"` names, HEXTORAW
//! literals of Oracle's internal formats). The engine decodes them with the schema version
//! valid at their SCN, so that the changes are the ones valid rows would have given.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::engine_support;

use cdc_core::CdcCode;
use cdc_logminer::engine::{CaptureEngine, EngineRecord, ManualClock, RecordKind};
use cdc_logminer::sim::{GroundTruth, Scenario, SimConfig, WorkloadConfig};
use engine_support::*;

/// Runs `engine` over its simulator's workload until it is quiet: it never stops, the
/// workload ALTERed a captured table, and the records equal the committed truth.
fn runs_to_truth(
    seed: u64,
    engine: &mut CaptureEngine<cdc_logminer::sim::SimSource>,
    clock: &ManualClock,
    quiet: usize,
) {
    let mut records = Vec::new();
    if let Err(e) = run_until_quiet(engine, clock, &mut records, quiet) {
        panic!("seed {seed}: {e}");
    }
    let truth = engine.source().database().truth().clone();
    assert!(
        truth.ddl.iter().any(|d| d.sql.starts_with("ALTER TABLE")),
        "seed {seed}: no ALTER"
    );
    assert_same(
        &delivered(&records),
        &expected(&truth, first_start_floor(&records)),
    );
}

/// A scenario whose first `setup` events (the tables) run before the engine opens, and the
/// rest only once it has: the engine then mines them all after the last, as a connector a
/// step or more behind does.
fn mined_after(json: &str, setup: usize) -> (Vec<EngineRecord>, GroundTruth, u64, u64) {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut source = Scenario::from_json(json).unwrap().into_source(0).unwrap();
    source.advance(setup).unwrap();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    while engine.source_mut().advance(64).unwrap() {}
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let truth = engine.source().database().truth().clone();
    (
        records,
        truth,
        engine.metrics().decode_failures,
        engine.source().generic_rows(),
    )
}

/// (table, ID, schema version) of each delivered change, in order.
fn versions(records: &[EngineRecord]) -> Vec<(String, String, u32)> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Change(c) => Some(c),
            _ => None,
        })
        .map(|c| {
            let image = c
                .event
                .change
                .after
                .as_ref()
                .or(c.event.change.before.as_ref());
            let id = image
                .and_then(|cols| {
                    cols.iter()
                        .find(|v| c.layout.columns[usize::from(v.column)].name == "ID")
                })
                .map(|v| format!("{:?}", v.value))
                .unwrap_or_default();
            assert_eq!(
                c.event.change.schema_version, c.layout.version,
                "a change is published with the version it was decoded with"
            );
            (c.event.change.table.table.clone(), id, c.layout.version)
        })
        .collect()
}

/// The events of [`TABLE`]: they run before the engine opens.
const SETUP: usize = 5;

/// APP.LAG, created more than 10 s before the engine opens (its layout then is the one of
/// the resume point).
const TABLE: &str = r#"{"event": "create_table", "table": {"owner": "APP", "name": "LAG",
    "columns": [{"name": "ID", "type": "NUMBER(9)"}, {"name": "N", "type": "NUMBER(12,2)"},
      {"name": "D", "type": "DATE"}, {"name": "TS", "type": "TIMESTAMP(6)"},
      {"name": "V", "type": "VARCHAR2(40)"}, {"name": "NV", "type": "NVARCHAR2(20)"},
      {"name": "R", "type": "RAW(8)"}, {"name": "BD", "type": "BINARY_DOUBLE"},
      {"name": "GONE", "type": "VARCHAR2(10)"}],
    "primary_key": ["ID"]}},
  {"event": "tick", "millis": 11000},
  {"event": "insert", "session": "s9", "table": "APP.ORDERS", "values": {"ID": 5, "STATUS": "later"}},
  {"event": "commit", "session": "s9"},
  {"event": "tick", "millis": 100}"#;

/// Rows, then three ALTERs (add a column, drop one, modify one's type), then rows, all
/// mined after the last ALTER: the older rows decode with the version the engine read before
/// the ALTERs, the newer ones with the newest, and together they are the committed truth.
#[test]
fn rows_older_than_three_alters_decode_with_the_version_valid_at_their_scn() {
    let json = format!(
        r#"{{"name": "three-alters", "database": {{"seed": 31}}, "events": [
      {TABLE},
      {{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": 1, "N": -12.5,
        "D": "2026-01-02 03:04:05", "TS": "2026-01-02 03:04:05.123456", "V": "před",
        "NV": "日本 ok", "R": "deadbeef", "BD": 2.5, "GONE": "bye"}}}},
      {{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": 2, "N": 0, "V": "it's"}}}},
      {{"event": "commit", "session": "s1"}},
      {{"event": "update", "session": "s2", "table": "APP.LAG", "where": {{"ID": 1}}, "set": {{"N": 99.01, "NV": null}}}},
      {{"event": "delete", "session": "s2", "table": "APP.LAG", "where": {{"ID": 2}}}},
      {{"event": "commit", "session": "s2"}},
      {{"event": "tick", "millis": 1500}},
      {{"event": "add_column", "table": "APP.LAG", "column": {{"name": "EXTRA", "type": "NUMBER"}}}},
      {{"event": "tick", "millis": 1500}},
      {{"event": "drop_column", "table": "APP.LAG", "column": "GONE"}},
      {{"event": "tick", "millis": 1500}},
      {{"event": "modify_column", "table": "APP.LAG", "column": {{"name": "V", "type": "VARCHAR2(80)"}}}},
      {{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": 3, "N": 7, "V": "after", "EXTRA": 42}}}},
      {{"event": "update", "session": "s1", "table": "APP.LAG", "where": {{"ID": 1}}, "set": {{"EXTRA": 1}}}},
      {{"event": "commit", "session": "s1"}}
    ]}}"#
    );
    let (records, truth, failures, generic) = mined_after(&json, SETUP);
    assert_eq!(failures, 0, "every row decoded");
    assert!(generic > 0, "the older rows came back generic");
    assert_eq!(truth.ddl.len(), 4, "the CREATE and three ALTERs ran");
    let floor = records
        .first()
        .and_then(|r| r.position.first_start.as_ref())
        .map(|f| f.floor_scn)
        .unwrap();
    let expected = expected(&truth, floor);
    assert_same(&delivered(&records), &expected);
    let lag: Vec<_> = versions(&records)
        .into_iter()
        .filter(|(t, _, _)| t == "LAG")
        .collect();
    let first = lag[0].2;
    assert!(
        lag[..4].iter().all(|(_, _, v)| *v == first),
        "the rows before the ALTERs keep the version valid at their SCN: {lag:?}"
    );
    assert!(
        lag[4..].iter().all(|(_, _, v)| *v > first),
        "the rows after them have the newest: {lag:?}"
    );
}

/// `SET UNUSED` hides a column but keeps its segment column until `DROP UNUSED COLUMNS`: rows
/// written in between name the columns after it one higher than their COLUMN_ID, and rows
/// after the drop one lower again. Each phase is mined after the next DDL.
#[test]
fn set_unused_then_drop_unused_columns_keep_segment_positions() {
    let json = format!(
        r#"{{"name": "unused", "database": {{"seed": 32}}, "events": [
      {TABLE},
      {{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": 1, "N": 1, "D": "2026-03-04 05:06:07", "V": "one", "GONE": "g"}}}},
      {{"event": "commit", "session": "s1"}},
      {{"event": "tick", "millis": 1500}},
      {{"event": "set_unused", "table": "APP.LAG", "column": "D"}},
      {{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": 2, "N": 2, "V": "two", "BD": -0.5, "GONE": "h"}}}},
      {{"event": "commit", "session": "s1"}},
      {{"event": "tick", "millis": 1500}},
      {{"event": "drop_unused_columns", "table": "APP.LAG"}},
      {{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": 3, "N": 3, "V": "three", "GONE": "i"}}}},
      {{"event": "commit", "session": "s1"}}
    ]}}"#
    );
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut source = Scenario::from_json(&json).unwrap().into_source(0).unwrap();
    source.advance(SETUP).unwrap();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    // phase 1: the first row, the SET UNUSED and the second row; phase 2: the rest
    for events in [5, 64] {
        engine.source_mut().advance(events).unwrap();
        run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    }
    assert_eq!(engine.metrics().decode_failures, 0);
    let truth = engine.source().database().truth().clone();
    assert_eq!(truth.ddl.len(), 3);
    let expected = expected(&truth, first_start_floor(&records));
    assert_same(&delivered(&records), &expected);
}

/// The simulator's live workload, with its ALTERs of APP.CUSTOMERS (add, drop, set unused,
/// drop unused, modify), mined while the database runs ahead by many events at a time: the
/// records equal the committed truth, rows older than ALTERs included. Two ALTERs of the
/// table in one window leave the rows between them without an exact version: they are
/// replayed from the build the workload starts with.
#[test]
fn the_live_workload_with_alters_equals_truth_over_seeds() {
    let mut lagged = 0;
    for seed in 1..=8 {
        let spill = tempfile::tempdir().unwrap();
        let clock = ManualClock::default();
        let workload = WorkloadConfig {
            changes: 1500,
            ddl_rate: 0.01,
            dictionary_build: true,
            ..WorkloadConfig::default()
        };
        let source = source(seed, SimConfig::default(), workload, 16);
        let mut engine =
            CaptureEngine::open(source, with_builds(&spill), None, Box::new(clock.clone()))
                .unwrap();
        runs_to_truth(seed, &mut engine, &clock, 5);
        assert_eq!(engine.metrics().decode_failures, 0, "seed {seed}");
        lagged += usize::from(engine.source().generic_rows() > 0);
    }
    assert!(
        lagged >= 5,
        "only {lagged} seeds mined rows older than an ALTER to the end"
    );
}

/// A DDL statement on a captured table that the classifier cannot place stops the task with
/// CDC-6002, naming the table, the SCN and the statement: the layout may have changed. The
/// runbook's recovery, when the layout did not change, moves the resume point past the DDL
/// (its SCN + 1, no redo address); the task then goes on with the rows after it.
#[test]
fn an_unclassifiable_ddl_stops_and_the_runbook_resumes_past_it() {
    let json = format!(
        r#"{{"name": "unplaced-ddl", "database": {{"seed": 33}}, "events": [
      {TABLE},
      {{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": 1, "V": "before"}}}},
      {{"event": "commit", "session": "s1"}},
      {{"event": "ddl", "table": "APP.LAG", "sql": "ALTER TABLE \"APP\".\"LAG\" FROBNICATE QUICKLY"}},
      {{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": 2, "V": "after"}}}},
      {{"event": "commit", "session": "s1"}}
    ]}}"#
    );
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut source = Scenario::from_json(&json).unwrap().into_source(0).unwrap();
    source.advance(SETUP).unwrap();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    while engine.source_mut().advance(64).unwrap() {}
    let mut records = Vec::new();
    let error = run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap_err();
    let cdc = error.cdc().unwrap();
    let ddl = engine
        .source()
        .database()
        .truth()
        .ddl
        .last()
        .unwrap()
        .clone();
    assert_eq!(cdc.code(), CdcCode::UnsupportedDdl, "{cdc}");
    let message = cdc.to_string();
    assert!(message.contains("APP.LAG"), "{message}");
    assert!(message.contains(&ddl.scn.to_string()), "{message}");
    assert!(message.contains("FROBNICATE"), "{message}");
    let before: Vec<_> = versions(&records)
        .into_iter()
        .map(|(_, id, _)| id)
        .collect();
    assert_eq!(
        before.len(),
        1,
        "the row before the DDL went out: {before:?}"
    );

    // the runbook: resume_scn = the DDL's SCN + 1, resume_rs_id and resume_ssn removed
    let mut position = records.last().unwrap().position.as_ref().clone();
    position.resume = cdc_offset::ResumePoint {
        scn: cdc_core::Scn(ddl.scn.0 + 1),
        addr: None,
    };
    let db = engine.source().database().clone();
    let mut engine = CaptureEngine::open(
        cdc_logminer::sim::SimSource::new(db),
        settings(&spill),
        Some(position),
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut after = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut after, 3).unwrap();
    let ids: Vec<_> = versions(&after).into_iter().map(|(_, id, _)| id).collect();
    assert_eq!(ids.len(), 1, "only the row after the DDL: {ids:?}");
    assert_ne!(ids, before);
}

/// The simulator's normal live workload (the one `oracle-cdc run` with `cdc.source=sim`
/// mines), 6 000 changes with its ALTERs, over 20 seeds: the engine never stops, and the
/// records equal the committed truth, rows older than ALTERs included.
#[test]
fn the_default_live_workload_runs_through_its_alters_over_20_seeds() {
    let mut generic = 0;
    for seed in 1..=20 {
        let spill = tempfile::tempdir().unwrap();
        let clock = ManualClock::default();
        let workload = WorkloadConfig {
            changes: 6000,
            dictionary_build: true,
            ..WorkloadConfig::default()
        };
        let source = source(seed, SimConfig::default(), workload, 16);
        let mut engine =
            CaptureEngine::open(source, with_builds(&spill), None, Box::new(clock.clone()))
                .unwrap();
        runs_to_truth(seed, &mut engine, &clock, 5);
        generic += engine.source().generic_rows();
    }
    assert!(
        generic > 20,
        "only {generic} rows older than an ALTER were mined"
    );
}

/// Settings of the tests below: dictionary builds on, at their defaults.
fn with_builds(spill: &tempfile::TempDir) -> cdc_logminer::engine::EngineSettings {
    let mut s = settings(spill);
    s.dictionary_builds = Some(cdc_logminer::engine::BuildSchedule::daily());
    s
}

/// After [`TABLE`]: a dictionary build, archived by a log switch, and a transaction in the
/// next log (where the first run's position then lies).
const BUILT: &str = r#"{"event": "dictionary_build"}, {"event": "log_switch"},
  {"event": "insert", "session": "s8", "table": "APP.ORDERS", "values": {"ID": 6, "STATUS": "built"}},
  {"event": "commit", "session": "s8"}, {"event": "tick", "millis": 100}"#;

/// Rows of APP.LAG, then an ADD COLUMN and a MODIFY, then rows again.
const ROWS_THEN_ALTERS: &str = r#"{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {"ID": 1, "N": -12.5,
    "D": "2026-01-02 03:04:05", "TS": "2026-01-02 03:04:05.123456", "V": "před",
    "NV": "日本 ok", "R": "deadbeef", "BD": 2.5, "GONE": "bye"}},
  {"event": "insert", "session": "s1", "table": "APP.LAG", "values": {"ID": 2, "N": 0, "V": "it's"}},
  {"event": "commit", "session": "s1"},
  {"event": "update", "session": "s2", "table": "APP.LAG", "where": {"ID": 1}, "set": {"N": 99.01, "NV": null}},
  {"event": "commit", "session": "s2"},
  {"event": "tick", "millis": 1500},
  {"event": "add_column", "table": "APP.LAG", "column": {"name": "EXTRA", "type": "NUMBER"}},
  {"event": "tick", "millis": 1500},
  {"event": "modify_column", "table": "APP.LAG", "column": {"name": "V", "type": "VARCHAR2(80)"}},
  {"event": "insert", "session": "s1", "table": "APP.LAG", "values": {"ID": 3, "N": 7, "V": "after", "EXTRA": 42}},
  {"event": "commit", "session": "s1"}"#;

/// What a restart across DDL gave.
struct Restarted {
    /// Both runs' records, in order.
    records: Vec<EngineRecord>,
    truth: GroundTruth,
    /// How the restarted run ended.
    result: Result<(), cdc_logminer::engine::EngineError>,
    metrics: cdc_logminer::engine::EngineMetrics,
    /// The restarted run's ops events.
    ops: Vec<cdc_core::OpsEvent>,
}

/// The first `setup` events run and are mined; then the rest run while the connector is
/// stopped (`between` edits the database then, e.g. a purge), and a restart from the first
/// run's last position mines them: the layouts it reads at start are newer than its resume
/// point, so it knows no exact version for the rows before the DDL.
fn restarted_after(
    json: &str,
    setup: usize,
    between: impl FnOnce(&mut cdc_logminer::sim::SimSource),
    adjust: impl Fn(&mut cdc_logminer::engine::EngineSettings),
) -> Restarted {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut source = Scenario::from_json(json).unwrap().into_source(0).unwrap();
    source.advance(setup).unwrap();
    let mut s = with_builds(&spill);
    adjust(&mut s);
    let mut first = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut first, &clock, &mut records, 3).unwrap();
    while first.source_mut().advance(64).unwrap() {}
    let mut source = cdc_logminer::sim::SimSource::new(first.source().database().clone());
    between(&mut source);
    let position = records.last().unwrap().position.as_ref().clone();
    let mut s = with_builds(&spill);
    adjust(&mut s);
    let mut second =
        CaptureEngine::open(source, s, Some(position), Box::new(clock.clone())).unwrap();
    let mut after = Vec::new();
    let result = run_until_quiet(&mut second, &clock, &mut after, 3);
    let ops = after
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) => Some(e.clone()),
            _ => None,
        })
        .collect();
    records.extend(after);
    Restarted {
        records,
        truth: second.source().database().truth().clone(),
        result,
        metrics: second.metrics(),
        ops,
    }
}

fn ops_of(ops: &[cdc_core::OpsEvent], kind: cdc_core::OpsKind) -> Vec<&cdc_core::OpsEvent> {
    ops.iter().filter(|e| e.kind == kind).collect()
}

/// A restart after an ALTER reads the newest layout at start, which its older rows were not
/// written under: no exact version decodes them, so the step is mined again from the build
/// in the redo with the redo dictionary, and the named rows give the committed changes.
#[test]
fn rows_older_than_the_first_known_version_are_replayed_with_a_redo_dictionary() {
    let json = format!(
        r#"{{"name": "replay", "database": {{"seed": 34}}, "events": [
      {TABLE}, {BUILT}, {ROWS_THEN_ALTERS}]}}"#
    );
    let run = restarted_after(&json, SETUP + 5, |_| {}, |_| {});
    if let Err(e) = &run.result {
        panic!("the restart stopped: {e}");
    }
    assert_eq!(run.metrics.decode_failures, 0);
    assert!(run.metrics.lag_replays >= 1, "{:?}", run.metrics);
    let replays = ops_of(&run.ops, cdc_core::OpsKind::DictionaryReplay);
    assert!(!replays.is_empty(), "{:?}", run.ops);
    assert_eq!(replays[0].details["tables"], "APP.LAG");
    let from: u64 = replays[0].details["from_scn"].parse().unwrap();
    let to: u64 = replays[0].details["to_scn"].parse().unwrap();
    assert!(from < to, "{:?}", replays[0]);
    // the build was in the logs: no other one was made
    assert!(ops_of(&run.ops, cdc_core::OpsKind::DictionaryBuild).is_empty());
    let expected = expected(&run.truth, first_start_floor(&run.records));
    assert_same(&delivered(&run.records), &expected);
    let lag: Vec<_> = versions(&run.records)
        .into_iter()
        .filter(|(t, _, _)| t == "LAG")
        .collect();
    assert_eq!(lag.len(), 4, "{lag:?}");
}

/// With the build's log purged, nothing can name the older rows: CDC-6001 naming the table
/// and the purge, and nothing of the transaction went out.
#[test]
fn a_purged_build_log_stops_the_replay_with_cdc_6001() {
    let json = format!(
        r#"{{"name": "purged-build", "database": {{"seed": 35}}, "events": [
      {TABLE}, {BUILT}, {ROWS_THEN_ALTERS}]}}"#
    );
    let run = restarted_after(
        &json,
        SETUP + 5,
        |source| {
            use cdc_logminer::source::RedoSource;
            let build_log = source
                .log_inventory(&cdc_logminer::source::LogInventoryQuery {
                    from: cdc_core::Scn::ZERO,
                    mode: cdc_core::config::CaptureMode::Online,
                    destination: None,
                })
                .unwrap()
                .into_iter()
                .find(|l| l.dictionary_begin)
                .expect("the build is archived")
                .sequence;
            source
                .apply(&cdc_logminer::sim::DbOp::Purge {
                    up_to_sequence: build_log,
                    remove_file: false,
                })
                .unwrap();
        },
        |_| {},
    );
    let error = run.result.unwrap_err();
    let cdc = error.cdc().unwrap();
    assert_eq!(cdc.code(), CdcCode::DictionaryUnavailable, "{cdc}");
    let message = cdc.to_string();
    assert!(message.contains("APP.LAG"), "{message}");
    assert!(message.contains("purged"), "{message}");
    assert!(
        !versions(&run.records).iter().any(|(t, _, _)| t == "LAG"),
        "no change of APP.LAG went out"
    );
}

/// Without EXECUTE on DBMS_LOGMNR_D the build at start fails: builds are disabled with a
/// `dictionary-build` event and the task goes on; a lag case later stops with CDC-6001
/// saying why no build is there.
#[test]
fn without_the_grant_builds_are_disabled_and_a_lag_case_stops() {
    let json = format!(
        r#"{{"name": "no-grant", "database": {{"seed": 36, "dictionary_build_grant": false}},
      "events": [{TABLE}, {ROWS_THEN_ALTERS}]}}"#
    );
    let run = restarted_after(&json, SETUP, |_| {}, |_| {});
    let builds = ops_of(&run.ops, cdc_core::OpsKind::DictionaryBuild);
    assert_eq!(builds.len(), 1, "{:?}", run.ops);
    assert_eq!(builds[0].details["status"], "disabled");
    assert!(builds[0].details["message"].contains("DBMS_LOGMNR_D"));
    let error = run.result.unwrap_err();
    let cdc = error.cdc().unwrap();
    assert_eq!(cdc.code(), CdcCode::DictionaryUnavailable, "{cdc}");
    assert!(cdc.to_string().contains("disabled"), "{cdc}");
    // the first run made its own attempt, with the same outcome, and mined on
    let first_run_builds = run
        .records
        .iter()
        .filter(|r| matches!(&r.kind, RecordKind::Ops(e) if e.kind == cdc_core::OpsKind::DictionaryBuild))
        .count();
    assert_eq!(first_run_builds, 2);
}

/// Range mode (a PDB session) cannot add a redo dictionary: no build is made, and a lag case
/// stops with CDC-6001 saying so.
#[test]
fn range_mode_cannot_replay() {
    let json = format!(
        r#"{{"name": "range", "database": {{"seed": 37}}, "events": [
      {TABLE}, {BUILT}, {ROWS_THEN_ALTERS}]}}"#
    );
    let run = restarted_after(
        &json,
        SETUP + 5,
        |_| {},
        |s| s.mining_mode = cdc_core::config::MiningMode::Range,
    );
    assert!(ops_of(&run.ops, cdc_core::OpsKind::DictionaryBuild).is_empty());
    let error = run.result.unwrap_err();
    let cdc = error.cdc().unwrap();
    assert_eq!(cdc.code(), CdcCode::DictionaryUnavailable, "{cdc}");
    assert!(cdc.to_string().contains("range mining mode"), "{cdc}");
}

/// No build in the logs: one at the first step; then one per interval from the time of day,
/// each a `dictionary-build` event with its duration.
#[test]
fn builds_run_at_start_and_on_their_schedule() {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let workload = WorkloadConfig {
        changes: 400,
        think_millis: 50,
        ..WorkloadConfig::default()
    };
    let source = source(3, SimConfig::default(), workload, 4);
    let mut s = with_builds(&spill);
    // every 20 s from 00:00:00 of the clock's day (ManualClock starts at 1970-01-01 00:00)
    s.dictionary_builds = Some(cdc_logminer::engine::BuildSchedule {
        interval: std::time::Duration::from_secs(20),
        time: cdc_core::config::TimeOfDay { hour: 0, minute: 0 },
    });
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let builds: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) if e.kind == cdc_core::OpsKind::DictionaryBuild => Some(e),
            _ => None,
        })
        .collect();
    assert!(
        builds
            .iter()
            .all(|b| b.details["status"] == "built" && b.details["millis"].parse::<u64>().is_ok()),
        "{builds:?}"
    );
    // 250 ms of the clock per step: one build at the start and one per 20 s after it
    use cdc_logminer::engine::Clock;
    let last_step_ms = clock.now_ms() - 250;
    let scheduled = (last_step_ms / 20_000) as usize;
    assert_eq!(builds.len(), 1 + scheduled, "{last_step_ms} ms: {builds:?}");
    assert!(scheduled >= 1, "the run lasted {last_step_ms} ms only");
    let truth = engine.source().database().truth().clone();
    assert_same(
        &delivered(&records),
        &expected(&truth, first_start_floor(&records)),
    );
}

/// The backlog workload with its ALTERs: the whole workload, a dictionary build first, runs
/// before a connector starts at its first SCN (as `cargo x bench e2e` runs it). The layouts
/// read at start are the newest, so every row before an ALTER is replayed from the build.
#[test]
fn the_backlog_workload_with_alters_is_replayed_from_its_build_over_seeds() {
    let mut replays = 0;
    for seed in 1..=8 {
        let spill = tempfile::tempdir().unwrap();
        let clock = ManualClock::default();
        let workload = WorkloadConfig {
            changes: 3000,
            ddl_rate: 0.01,
            dictionary_build: true,
            ..WorkloadConfig::default()
        };
        let mut source = source(seed, SimConfig::default(), workload, 0);
        let first_scn = source.database().current_scn();
        while source.advance(4096).unwrap() {}
        let mut s = with_builds(&spill);
        s.start_scn = Some(first_scn);
        let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
        runs_to_truth(seed, &mut engine, &clock, 3);
        replays += engine.metrics().lag_replays;
    }
    assert!(replays > 0, "no step was replayed");
}

/// A build that fails for another reason than the grant (here ORA-01325, no ARCHIVELOG mode
/// for a moment) is a `dictionary-build` event with `status=failed` and its message; mining
/// goes on, and the next scheduled build is tried.
#[test]
fn a_failed_build_is_an_event_and_the_next_one_is_tried() {
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let workload = WorkloadConfig {
        changes: 300,
        think_millis: 50,
        ..WorkloadConfig::default()
    };
    let mut source = source(4, SimConfig::default(), workload, 4);
    source.inject(cdc_logminer::sim::Fault::Ora {
        code: 1325,
        message: Some(
            "ORA-01325: archive log mode must be enabled to build into the logstream".into(),
        ),
        call: cdc_logminer::sim::SourceCall::BuildDictionary,
    });
    let mut s = with_builds(&spill);
    s.dictionary_builds = Some(cdc_logminer::engine::BuildSchedule {
        interval: std::time::Duration::from_secs(5),
        time: cdc_core::config::TimeOfDay { hour: 0, minute: 0 },
    });
    let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let statuses: Vec<(String, String)> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) if e.kind == cdc_core::OpsKind::DictionaryBuild => {
                Some((e.details["status"].clone(), e.details["message"].clone()))
            }
            _ => None,
        })
        .collect();
    assert!(statuses.len() >= 2, "{statuses:?}");
    assert_eq!(statuses[0].0, "failed");
    assert!(statuses[0].1.contains("ORA-01325"), "{statuses:?}");
    assert_eq!(
        statuses[1].0, "built",
        "the next scheduled build ran: {statuses:?}"
    );
    let truth = engine.source().database().truth().clone();
    assert_same(
        &delivered(&records),
        &expected(&truth, first_start_floor(&records)),
    );
}
