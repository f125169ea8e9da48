//! Tables that join the captured set while the engine streams and may already hold rows: a
//! CREATE TABLE … AS SELECT, a table renamed into the set, one a `refresh-tables` signal
//! finds, one made while the connector was stopped. Under `cdc.snapshot.mode=initial` each is
//! announced with `table-added` (`snapshot=true`), waits in the offset's `snapshot_pending`
//! while a snapshot runs (a restart too), and is snapshotted; a consumer applying every record
//! by key ends with its committed contents. Under `none` and `on_signal` it is captured from
//! its first row. The stream is often behind the dictionary: each table joins at its own DDL.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::sync::Arc;

use cdc_core::config::SnapshotMode;
use cdc_core::{OpsKind, TableId};
use cdc_logminer::engine::{EngineRecord, EngineSettings, ManualClock, RecordKind};
use cdc_logminer::sim::{DbOp, SimConfig, SimError, SimSource, WorkloadConfig};
use cdc_offset::{Position, SnapshotProgress};

use crate::engine_support::snapshot::{
    Consumer, Shared, assert_contents, contents, finish, open, ops, run_until_quiet, step,
};
use crate::engine_support::{self, Delivered};

/// The tables these tests capture: the APP tables but the LOB table and the staging ones,
/// which join the set only when renamed.
fn captured(t: &TableId) -> bool {
    t.owner == "APP" && t.table != "DOCS" && !t.table.starts_with("STAGE_")
}

fn copy() -> TableId {
    TableId::new("APP", "CUST_COPY")
}

fn renamed() -> TableId {
    TableId::new("APP", "ORDERS_HIST")
}

/// A database whose four tables hold `rows` rows each before the connector starts, and a
/// workload (no DDL of its own) of `changes` changes, `per_poll` events at every step. The
/// workload's DML reaches every table, the ones created later too.
fn database(seed: u64, rows: u64, changes: u64, per_poll: usize, config: SimConfig) -> SimSource {
    let mut source = engine_support::source(
        seed,
        config,
        WorkloadConfig {
            changes,
            ddl_rate: 0.0,
            ..WorkloadConfig::default()
        },
        per_poll,
    );
    for (i, table) in ["CUSTOMERS", "ORDERS", "EVENTS", "CODES"]
        .iter()
        .enumerate()
    {
        source
            .database_mut()
            .load_rows(&TableId::new("APP", *table), rows, seed + i as u64)
            .unwrap();
    }
    source
}

fn settings(spill: &tempfile::TempDir, mode: SnapshotMode) -> EngineSettings {
    let mut s = engine_support::settings(spill);
    s.table_filter = Arc::new(captured);
    // every change is streamed: a consumer's tables end as the database's
    s.users_exclude.clear();
    s.snapshot.mode = mode;
    s.snapshot.chunk_rows = 1_000;
    s.snapshot.threads = 1;
    s
}

/// `CREATE TABLE APP.CUST_COPY (…, PRIMARY KEY (ID)) AS SELECT … FROM APP.CUSTOMERS WHERE
/// ID <= 2000`.
fn create_copy(source: &Shared) {
    source.db(|s| {
        s.apply(&DbOp::CreateTableAs {
            table: "APP.CUST_COPY".into(),
            from: "APP.CUSTOMERS".into(),
            columns: vec!["ID".into(), "NAME".into(), "BALANCE".into(), "BORN".into()],
            condition: Some("ID <= 2000".into()),
            primary_key: vec!["ID".into()],
            user: None,
        })
        .unwrap()
    });
}

/// A staging copy of APP.ORDERS, not captured, that the workload's DML reaches too.
fn stage(source: &Shared) {
    source.db(|s| {
        s.apply(&DbOp::CreateTableAs {
            table: "APP.STAGE_ORDERS".into(),
            from: "APP.ORDERS".into(),
            columns: vec![],
            condition: None,
            primary_key: vec!["ID".into()],
            user: None,
        })
        .unwrap();
        s.advance(30).unwrap();
    });
}

/// The staging table renamed into the captured set as APP.ORDERS_HIST, once no open
/// transaction holds a row of it.
fn rename_stage(source: &Shared) {
    let rename = DbOp::RenameTable {
        table: "APP.STAGE_ORDERS".into(),
        to: "ORDERS_HIST".into(),
    };
    source.db(|s| {
        for _ in 0..100_000 {
            match s.apply(&rename) {
                Ok(()) => return,
                // ORA-00054: a transaction holds one of its rows; let the workload go on
                Err(SimError::Ora(code, _)) if code.0 == 54 => {
                    s.advance(1).unwrap();
                }
                Err(e) => panic!("rename: {e}"),
            }
        }
        panic!("the staging table stayed busy");
    });
}

/// `CREATE TABLE APP.AUDIT_NEW (ID NUMBER PRIMARY KEY, NOTE VARCHAR2(40))`: a table created
/// empty.
fn create_empty(source: &Shared) {
    let column = |name: &str, data_type: &str| cdc_logminer::sim::ColumnSpec {
        name: name.into(),
        data_type: data_type.into(),
        nullable: true,
    };
    source.db(|s| {
        s.apply(&DbOp::CreateTable {
            spec: cdc_logminer::sim::TableSpec {
                pdb: None,
                owner: "APP".into(),
                name: "AUDIT_NEW".into(),
                columns: vec![column("ID", "NUMBER"), column("NOTE", "VARCHAR2(40)")],
                primary_key: vec!["ID".into()],
                unique_indexes: vec![],
                organization: cdc_logminer::sim::Organization::Heap,
            },
            user: None,
        })
        .unwrap()
    });
}

/// The `table-added` events of `table`: their `snapshot` detail.
fn added(records: &[EngineRecord], table: &TableId) -> Vec<String> {
    ops(records, OpsKind::TableAdded)
        .into_iter()
        .filter(|d| d["table"] == table.pattern_name())
        .map(|d| d["snapshot"].clone())
        .collect()
}

/// The tables a position's `snapshot_pending` names.
fn pending(position: &Position) -> Vec<String> {
    position
        .snapshot_pending
        .as_deref()
        .map(|text| text.split(',').map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Whether a record is a snapshot row of `table`.
fn snapshot_row_of(record: &EngineRecord, table: &TableId) -> bool {
    matches!(&record.kind, RecordKind::Snapshot(row) if row.layout.table == *table)
}

/// Whether a record is a change of `table`.
fn change_of(record: &EngineRecord, table: &TableId) -> bool {
    matches!(&record.kind, RecordKind::Change(c) if *c.event.change.table == *table)
}

/// The same changes in the same order, or a panic naming the first that differs.
fn same_changes(delivered: &[Delivered], committed: &[Delivered], what: &str) {
    for (i, (d, c)) in delivered.iter().zip(committed).enumerate() {
        assert_eq!(d, c, "{what}: change #{i}");
    }
    assert_eq!(
        delivered.len(),
        committed.len(),
        "{what}: delivered {} changes, the database committed {}",
        delivered.len(),
        committed.len()
    );
}

/// Steps until `done` holds of the records so far, at most `limit` steps.
fn step_until(
    engine: &mut cdc_logminer::engine::CaptureEngine<Shared>,
    clock: &ManualClock,
    records: &mut Vec<EngineRecord>,
    limit: usize,
    done: impl Fn(&[EngineRecord]) -> bool,
) {
    for _ in 0..limit {
        if done(records) {
            return;
        }
        step(engine, clock, records);
    }
    assert!(done(records), "not reached in {limit} steps");
}

/// While the initial snapshot runs, a CTAS copy of a captured table and a staging table
/// renamed into the set join: both are announced with `snapshot=true`, wait in
/// `snapshot_pending` (not added to the running snapshot), and are read once it is complete;
/// the stream delivers their later DML, and the consumer ends with every table's contents.
/// The stream is behind the dictionary: a table created empty, whose CREATE comes first,
/// joins alone (`snapshot=false`).
#[test]
fn tables_that_join_during_a_snapshot_wait_for_it_then_are_snapshotted() {
    let spill = tempfile::tempdir().unwrap();
    let source = Shared::new(database(21, 3_000, 2_500, 4, SimConfig::default()));
    stage(&source);
    let clock = ManualClock::default();
    let mut engine = open(
        source.clone(),
        settings(&spill, SnapshotMode::Initial),
        None,
        &clock,
    );
    let mut records = Vec::new();
    step_until(&mut engine, &clock, &mut records, 50, |r| {
        engine_support::snapshot::snapshot_rows(r) > 0
    });
    // the stream mines the empty table's CREATE when the dictionary already has the other
    // two: each joins at its own DDL, with its own snapshot decision
    create_empty(&source);
    rename_stage(&source);
    create_copy(&source);
    let (copy, renamed) = (copy(), renamed());
    step_until(&mut engine, &clock, &mut records, 50, |r| {
        !added(r, &copy).is_empty() && !added(r, &renamed).is_empty()
    });
    assert_eq!(
        added(&records, &TableId::new("APP", "AUDIT_NEW")),
        ["false"],
        "a table created empty is captured from its first row"
    );
    assert!(
        engine.snapshot_running(),
        "the initial snapshot ended before the tables joined"
    );
    assert_eq!(added(&records, &copy), ["true"]);
    assert_eq!(added(&records, &renamed), ["true"]);
    // they wait: the offset names them, the running snapshot does not read them
    let position = engine.position();
    assert_eq!(
        pending(position).into_iter().collect::<BTreeSet<_>>(),
        BTreeSet::from([copy.to_string(), renamed.to_string()])
    );
    let running = SnapshotProgress::from_json(position.snapshot.as_deref().unwrap()).unwrap();
    assert!(running.table(&copy.to_string()).is_none());
    assert!(running.table(&renamed.to_string()).is_none());

    run_until_quiet(&mut engine, &clock, &mut records).unwrap();
    finish(&source, &mut engine, &clock, &mut records);

    // read once the initial snapshot was complete, in a snapshot of their own
    let complete: Vec<usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            matches!(&r.kind, RecordKind::Ops(e) if e.kind == OpsKind::SnapshotComplete
                && e.details["table"] == "*")
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(complete.len(), 2, "the initial snapshot, then theirs");
    for table in [&copy, &renamed] {
        let rows: Vec<usize> = records
            .iter()
            .enumerate()
            .filter(|(_, r)| snapshot_row_of(r, table))
            .map(|(i, _)| i)
            .collect();
        assert!(!rows.is_empty(), "{table} was not snapshotted");
        assert!(
            rows.iter().all(|i| complete[0] < *i && *i < complete[1]),
            "{table} read outside its own snapshot"
        );
        assert!(
            records.iter().any(|r| change_of(r, table)),
            "no DML of {table} was streamed"
        );
    }
    assert!(pending(engine.position()).is_empty());
    let mut consumer = Consumer::default();
    consumer.apply(&records);
    let expected = source.db(|s| contents(s, captured));
    assert!(expected.contains_key(&copy) && expected.contains_key(&renamed));
    assert!(
        expected[&copy].len() > 1_000,
        "the copy holds the CTAS rows"
    );
    assert_contents(&consumer, &expected);
    assert_eq!(consumer.duplicates(), 0);
}

/// A restart from a position after the `table-added` event and before the table's snapshot
/// started (the event's own, and a later one while the initial snapshot still runs) keeps
/// the table pending, and the restarted engine snapshots it.
#[test]
fn a_restart_keeps_a_joined_table_pending_and_snapshots_it() {
    for at_event in [true, false] {
        let spill = tempfile::tempdir().unwrap();
        let source = Shared::new(database(22, 3_000, 1_500, 4, SimConfig::default()));
        let clock = ManualClock::default();
        let mut engine = open(
            source.clone(),
            settings(&spill, SnapshotMode::Initial),
            None,
            &clock,
        );
        let mut records = Vec::new();
        step_until(&mut engine, &clock, &mut records, 50, |r| {
            engine_support::snapshot::snapshot_rows(r) > 0
        });
        create_copy(&source);
        let copy = copy();
        step_until(&mut engine, &clock, &mut records, 50, |r| {
            !added(r, &copy).is_empty()
        });
        // a few more steps of the initial snapshot and the stream
        for _ in 0..2 {
            step(&mut engine, &clock, &mut records);
        }
        assert!(engine.snapshot_running());
        assert!(!records.iter().any(|r| snapshot_row_of(r, &copy)));
        let event = records
            .iter()
            .position(|r| matches!(&r.kind, RecordKind::Ops(e) if e.kind == OpsKind::TableAdded))
            .unwrap();
        // acknowledged at a boundary: not inside a chunk, so no row comes twice
        let kill = if at_event {
            event
        } else {
            records
                .iter()
                .rposition(|r| !matches!(r.kind, RecordKind::Snapshot(_)))
                .unwrap()
        };
        assert!(kill >= event);
        let position = Position::from_json(&records[kill].position.to_json()).unwrap();
        assert_eq!(
            pending(&position),
            [copy.to_string()],
            "at_event {at_event}"
        );
        records.truncate(kill + 1);
        drop(engine);

        let mut engine = open(
            source.clone(),
            settings(&spill, SnapshotMode::Initial),
            Some(position),
            &clock,
        );
        let mut after = Vec::new();
        run_until_quiet(&mut engine, &clock, &mut after).unwrap();
        finish(&source, &mut engine, &clock, &mut after);
        assert!(
            after.iter().any(|r| snapshot_row_of(r, &copy)),
            "at_event {at_event}: the restarted engine did not snapshot {copy}"
        );
        assert!(
            added(&after, &copy).is_empty(),
            "at_event {at_event}: announced again"
        );
        assert!(pending(engine.position()).is_empty());
        records.extend(after);
        let mut consumer = Consumer::default();
        consumer.apply(&records);
        let expected = source.db(|s| contents(s, captured));
        assert_contents(&consumer, &expected);
        assert_eq!(consumer.duplicates(), 0, "at_event {at_event}");
    }
}

/// Under `none` and `on_signal` a table that joins is captured from its first row: announced
/// with `snapshot=false`, never pending, never read; every change of it the database committed
/// after it joined is delivered, in commit order.
#[test]
fn without_initial_a_joined_table_is_captured_from_its_first_row() {
    for mode in [SnapshotMode::None, SnapshotMode::OnSignal] {
        let spill = tempfile::tempdir().unwrap();
        let source = Shared::new(database(23, 500, 1_500, 4, SimConfig::default()));
        let clock = ManualClock::default();
        let mut engine = open(source.clone(), settings(&spill, mode), None, &clock);
        let mut records = Vec::new();
        stage(&source);
        for _ in 0..5 {
            step(&mut engine, &clock, &mut records);
        }
        // the copy's CREATE is mined when the dictionary already has the rename: the staging
        // table's changes in between are not the renamed table's
        create_copy(&source);
        source.db(|s| s.advance(60).unwrap());
        rename_stage(&source);
        run_until_quiet(&mut engine, &clock, &mut records).unwrap();
        finish(&source, &mut engine, &clock, &mut records);
        let (copy, renamed) = (copy(), renamed());
        assert_eq!(added(&records, &copy), ["false"], "{mode:?}");
        assert_eq!(added(&records, &renamed), ["false"], "{mode:?}");
        assert!(
            records
                .iter()
                .all(|r| r.position.snapshot_pending.is_none()),
            "{mode:?}: a table waited for a snapshot"
        );
        assert_eq!(engine_support::snapshot::snapshot_rows(&records), 0);
        // every committed change of the copy, which joined with its DDL
        let of = |table: &TableId| {
            engine_support::delivered(&records)
                .into_iter()
                .flat_map(|(_, _, changes)| changes)
                .filter(|c| c.table == *table)
                .collect::<Vec<Delivered>>()
        };
        // the truth names a change by the table's name when it was made: the staging
        // table's changes (not captured) are not the renamed table's
        let truth = source.db(|s| s.database().truth().clone());
        for table in [&copy, &renamed] {
            let committed: Vec<Delivered> = truth
                .transactions
                .iter()
                .flat_map(|t| &t.changes)
                .filter(|c| c.table == *table)
                .map(|c| Delivered {
                    op: c.op,
                    table: c.table.clone(),
                    before: c.before.as_ref().map(|v| v.iter().cloned().collect()),
                    after: c.after.as_ref().map(|v| v.iter().cloned().collect()),
                })
                .collect();
            assert!(!committed.is_empty(), "the workload left {table} alone");
            same_changes(&of(table), &committed, &format!("{mode:?} {table}"));
        }
    }
}

/// `refresh-tables` finds a table the stream has not reached yet (its CREATE is still ahead
/// in the redo: the engine mines one log a step and the database is logs ahead): it is
/// announced once, with `snapshot=true`, snapshotted under `initial` once the stream has
/// passed its DDL (a read before it fails with ORA-01466), and the consumer ends with its
/// contents.
#[test]
fn refresh_tables_finds_a_table_the_stream_has_not_reached() {
    let spill = tempfile::tempdir().unwrap();
    let config = SimConfig {
        log_size_bytes: 65_536,
        ..SimConfig::default()
    };
    let source = Shared::new(database(24, 300, 6_000, 0, config));
    let clock = ManualClock::default();
    let mut s = settings(&spill, SnapshotMode::Initial);
    s.max_logs_per_step = 1;
    let mut engine = open(source.clone(), s, None, &clock);
    let (tx, rx) = std::sync::mpsc::sync_channel(4);
    engine.attach_signals(rx);
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records).unwrap();
    assert!(!engine.snapshot_running(), "the initial snapshot is done");
    source.db(|s| s.advance(3_000).unwrap());
    create_copy(&source);
    source.db(|s| s.advance(300).unwrap());
    tx.send(cdc_logminer::engine::SignalRecord {
        offset: 0,
        key: Some(b"engine-test".to_vec()),
        value: Some(br#"{"id":"f1","type":"refresh-tables"}"#.to_vec()),
    })
    .unwrap();
    let before = records.len();
    step(&mut engine, &clock, &mut records);
    let copy = copy();
    let acks = ops(&records[before..], OpsKind::SignalAck);
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0]["outcome"], "done");
    assert!(
        acks[0]["message"].contains(&copy.to_string()),
        "{:?}",
        acks[0]
    );
    assert!(
        !ops(&records, OpsKind::DdlSeen)
            .iter()
            .any(|d| d["object"] == copy.table),
        "the stream had mined the CREATE already: nothing for the signal to find"
    );
    assert_eq!(added(&records, &copy), ["true"]);

    run_until_quiet(&mut engine, &clock, &mut records).unwrap();
    finish(&source, &mut engine, &clock, &mut records);
    assert_eq!(added(&records, &copy), ["true"], "announced once");
    assert!(
        ops(&records, OpsKind::DdlSeen)
            .iter()
            .any(|d| d["object"] == copy.table),
        "the stream reached the CREATE"
    );
    assert!(records.iter().any(|r| snapshot_row_of(r, &copy)));
    let mut consumer = Consumer::default();
    consumer.apply(&records);
    let expected = source.db(|s| contents(s, captured));
    assert!(expected[&copy].len() > 200, "the copy holds the CTAS rows");
    assert_contents(&consumer, &expected);
    assert_eq!(consumer.duplicates(), 0);
}

/// Tables made while the connector is stopped: the restarted engine finds them in the
/// dictionary at its start, before the stream reaches their DDL (CREATE … AS SELECT, RENAME).
/// Under `initial` each is announced when the stream gets there and snapshotted, as if it had
/// joined while streaming: its copied rows are in no redo.
#[test]
fn tables_made_while_the_connector_is_stopped_are_snapshotted_when_their_ddl_is_reached() {
    let spill = tempfile::tempdir().unwrap();
    let source = Shared::new(database(25, 500, 2_000, 4, SimConfig::default()));
    let clock = ManualClock::default();
    let mut engine = open(
        source.clone(),
        settings(&spill, SnapshotMode::Initial),
        None,
        &clock,
    );
    let mut records = Vec::new();
    stage(&source);
    for _ in 0..30 {
        step(&mut engine, &clock, &mut records);
    }
    assert!(!engine.snapshot_running(), "the initial snapshot is done");
    let position = Position::from_json(&records.last().unwrap().position.to_json()).unwrap();
    drop(engine);
    // while it is stopped
    source.db(|s| s.advance(50).unwrap());
    create_copy(&source);
    source.db(|s| s.advance(50).unwrap());
    rename_stage(&source);
    source.db(|s| s.advance(50).unwrap());

    let mut engine = open(
        source.clone(),
        settings(&spill, SnapshotMode::Initial),
        Some(position),
        &clock,
    );
    let mut after = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut after).unwrap();
    finish(&source, &mut engine, &clock, &mut after);
    for table in [copy(), renamed()] {
        assert_eq!(added(&after, &table), ["true"], "{table}");
        assert!(
            after.iter().any(|r| snapshot_row_of(r, &table)),
            "{table} was not snapshotted"
        );
    }
    records.extend(after);
    let mut consumer = Consumer::default();
    consumer.apply(&records);
    let expected = source.db(|s| contents(s, captured));
    assert_contents(&consumer, &expected);
    assert_eq!(consumer.duplicates(), 0);
}
