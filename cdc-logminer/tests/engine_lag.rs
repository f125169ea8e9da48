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
/// records equal the committed truth, rows older than ALTERs included.
#[test]
fn the_live_workload_with_alters_equals_truth_over_seeds() {
    let mut lagged = 0;
    for seed in 1..=8 {
        let spill = tempfile::tempdir().unwrap();
        let clock = ManualClock::default();
        let workload = WorkloadConfig {
            changes: 1500,
            ddl_rate: 0.01,
            ..WorkloadConfig::default()
        };
        let source = source(seed, SimConfig::default(), workload, 16);
        let mut engine =
            CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
        let mut records = Vec::new();
        let result = run_until_quiet(&mut engine, &clock, &mut records, 5);
        let truth = engine.source().database().truth().clone();
        if let Err(e) = &result {
            // two ALTERs of one table in a window whose rows between them need the redo
            // dictionary: a stop with CDC-6001 naming the table, never a wrong change
            assert_eq!(
                e.cdc().map(|c| c.code()),
                Some(CdcCode::DictionaryUnavailable),
                "seed {seed}: {e}"
            );
            continue;
        }
        let alters = truth
            .ddl
            .iter()
            .filter(|d| d.sql.starts_with("ALTER TABLE"))
            .count();
        assert!(alters > 0, "seed {seed}: the workload made no ALTER");
        let expected = expected(&truth, first_start_floor(&records));
        assert_same(&delivered(&records), &expected);
        assert_eq!(engine.metrics().decode_failures, 0, "seed {seed}");
        lagged += usize::from(engine.source().generic_rows() > 0);
    }
    assert!(
        lagged >= 5,
        "only {lagged} seeds mined rows older than an ALTER to the end"
    );
}
