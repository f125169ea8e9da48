//! Snapshots over the simulator: a consumer that applies every record by key ends with exactly
//! the database's table contents, however the snapshot interleaves with the stream and
//! wherever the task is killed; chunks, readers, retries, modes and overrides do what the
//! configuration says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdc_core::config::SnapshotMode;
use cdc_core::{CdcCode, KeySource, OpsKind, TableId, Value};
use cdc_logminer::engine::{
    CaptureEngine, EngineError, EngineRecord, EngineSettings, ManualClock, RecordKind,
    SnapshotMarker,
};
use cdc_logminer::sim::{SimConfig, SimSource, SnapshotFault, WorkloadConfig};
use cdc_logminer::source::{RedoSource, SnapshotBound};
use cdc_offset::{Position, SnapshotProgress};

use crate::engine_support::snapshot::{
    Consumer, PanickingReads, Rows, Shared, assert_contents, finish, key_of, named, open, ops,
    run_until_quiet, snapshot_rows,
};
use crate::engine_support::{self, captured};

/// The tables the snapshot tests load: a keyed heap, a partitioned one, a keyless one (read
/// by ROWID) and an IOT.
fn loaded() -> [TableId; 4] {
    [
        TableId::new("APP", "CUSTOMERS"),
        TableId::new("APP", "ORDERS"),
        TableId::new("APP", "EVENTS"),
        TableId::new("APP", "CODES"),
    ]
}

/// A database whose tables hold `rows` rows each before the connector starts, and a
/// workload (no DDL) that goes on while it runs, `per_poll` events at every step.
fn database(seed: u64, rows: u64, changes: u64, per_poll: usize) -> SimSource {
    let mut source = engine_support::source(
        seed,
        SimConfig::default(),
        WorkloadConfig {
            changes,
            ddl_rate: 0.0,
            ..WorkloadConfig::default()
        },
        per_poll,
    );
    for (i, table) in loaded().iter().enumerate() {
        source
            .database_mut()
            .load_rows(table, rows, seed + i as u64)
            .unwrap();
    }
    source
}

fn settings(spill: &tempfile::TempDir, mode: SnapshotMode) -> EngineSettings {
    let mut s = engine_support::settings(spill);
    // every change is streamed: a consumer's tables end as the database's (the changes of an
    // excluded user are in the rows a snapshot reads, and never in the stream)
    s.users_exclude.clear();
    s.snapshot.mode = mode;
    s.snapshot.chunk_rows = 1_000;
    s.snapshot.threads = 1;
    s
}

/// The committed contents of every captured table now, by key.
fn contents(source: &mut SimSource) -> BTreeMap<TableId, Rows> {
    let tables: Vec<TableId> = loaded().to_vec();
    let layouts = source.table_layouts(&tables).unwrap();
    let mut out = BTreeMap::new();
    for layout in layouts.into_iter().filter(|l| captured(&l.table)) {
        let rows = source.database().committed_rows(&layout.table).unwrap();
        let mut table = Rows::new();
        for (row_id, columns) in rows {
            let image: BTreeMap<String, Value> = columns.into_iter().collect();
            table.insert(key_of(&layout, &image, Some(&row_id)), image);
        }
        out.insert(layout.table.clone(), table);
    }
    out
}

#[test]
fn an_initial_snapshot_and_the_stream_end_with_the_tables_contents() {
    for seed in [3, 4] {
        let spill = tempfile::tempdir().unwrap();
        let source = Shared(Arc::new(Mutex::new(database(seed, 3_000, 1_500, 6))));
        let clock = ManualClock::default();
        let mut engine = open(
            source.clone(),
            settings(&spill, SnapshotMode::Initial),
            None,
            &clock,
        );
        let mut records = Vec::new();
        run_until_quiet(&mut engine, &clock, &mut records).unwrap();
        finish(&source, &mut engine, &clock, &mut records);
        // the stream went on while the tables were read
        let first_row = records
            .iter()
            .position(|r| matches!(r.kind, RecordKind::Snapshot(_)))
            .unwrap();
        let last_row = records
            .iter()
            .rposition(|r| matches!(r.kind, RecordKind::Snapshot(_)))
            .unwrap();
        let interleaved = records[first_row..last_row]
            .iter()
            .filter(|r| matches!(r.kind, RecordKind::Change(_)))
            .count();
        assert!(
            interleaved > 0,
            "seed {seed}: no change between snapshot rows"
        );
        assert!(snapshot_rows(&records) >= 4 * 3_000 - 200);
        let mut consumer = Consumer::default();
        consumer.apply(&records);
        let expected = source.db(contents);
        assert_contents(&consumer, &expected);
        assert_eq!(consumer.duplicates(), 0);
        // markers: first, then true, the last row of the last table last
        let markers: Vec<SnapshotMarker> = records
            .iter()
            .filter_map(|r| match &r.kind {
                RecordKind::Snapshot(row) => Some(row.marker),
                _ => None,
            })
            .collect();
        assert_eq!(markers.first(), Some(&SnapshotMarker::First));
        assert_eq!(
            markers
                .iter()
                .filter(|m| **m == SnapshotMarker::First)
                .count(),
            1
        );
        assert!(
            markers
                .iter()
                .filter(|m| **m == SnapshotMarker::Last)
                .count()
                <= 1
        );
        // every table said done, then the whole snapshot
        let complete = ops(&records, OpsKind::SnapshotComplete);
        assert_eq!(complete.len(), 5, "{complete:?}");
        assert_eq!(complete.last().unwrap()["table"], "*");
        assert!(!ops(&records, OpsKind::SnapshotChunkDone).is_empty());
        let progress =
            SnapshotProgress::from_json(engine.position().snapshot.as_deref().unwrap()).unwrap();
        assert!(progress.complete);
        let m = engine.snapshot_metrics();
        assert_eq!(m.rows_published as usize, snapshot_rows(&records));
        assert_eq!(m.tables_remaining, 0);
        assert!(m.chunks_published >= 4 * 3);
    }
}

/// The crash test of the issue at engine level: the task is killed (its unacknowledged
/// records lost) at points spread over the snapshot while the workload goes on, and restarts
/// from the last acknowledged position. Acknowledged at a boundary (exactly-once: a Kafka
/// transaction ends at a `snapshot-chunk-done` or a commit), no snapshot row is delivered
/// twice; acknowledged anywhere (at-least-once), at most the chunk in flight is. Either way the
/// consumer ends with the tables' contents.
#[test]
fn restarts_resume_from_the_frontier_and_read_no_finished_chunk_again() {
    for (seed, exactly_once) in [(11, true), (12, false)] {
        let spill = tempfile::tempdir().unwrap();
        let source = Shared(Arc::new(Mutex::new(database(seed, 5_000, 2_000, 4))));
        let clock = ManualClock::default();
        let mut acknowledged: Vec<EngineRecord> = Vec::new();
        let mut position: Option<Position> = None;
        let mut kills = 0;
        let mut rng = seed;
        loop {
            let mut engine = open(
                source.clone(),
                settings(&spill, SnapshotMode::Initial),
                position.clone(),
                &clock,
            );
            let resumed = position
                .as_ref()
                .and_then(|p| p.snapshot.as_deref())
                .map(|t| SnapshotProgress::from_json(t).unwrap());
            let mut records = Vec::new();
            let mut steps = 0;
            let running = loop {
                engine.step(&mut records).unwrap();
                clock.advance(Duration::from_millis(250));
                steps += 1;
                assert!(
                    steps < 10_000,
                    "seed {seed}: the snapshot does not progress"
                );
                rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                if kills < 10 && (rng >> 61) < 4 && engine.snapshot_running() {
                    break true;
                }
                if !engine.snapshot_running() && steps > 3 {
                    break false;
                }
            };
            // a restart reads no row of a chunk the offset records as done
            if let Some(resumed) = &resumed {
                for r in &records {
                    if let RecordKind::Snapshot(row) = &r.kind {
                        let name = row.layout.table.to_string();
                        let t = resumed.table(&name).unwrap();
                        assert!(!t.done, "seed {seed}: {name} read again after done");
                        if let (Some(SnapshotBound::Key(frontier)), KeySource::PrimaryKey) =
                            (&t.frontier, row.layout.key_source)
                        {
                            let image = named(&row.layout, &row.values);
                            let key: Vec<Value> =
                                row.layout.key.iter().map(|k| image[k].clone()).collect();
                            assert_ne!(&key, frontier, "seed {seed}: the frontier row again");
                        }
                    }
                }
            }
            if !running {
                run_until_quiet(&mut engine, &clock, &mut records).unwrap();
                finish(&source, &mut engine, &clock, &mut records);
                acknowledged.extend(records);
                break;
            }
            // killed: what was acknowledged stays, the rest is lost
            let eligible: Vec<usize> = (0..records.len())
                .filter(|&i| !exactly_once || !matches!(records[i].kind, RecordKind::Snapshot(_)))
                .collect();
            let Some(&k) = eligible.get((rng as usize >> 3) % eligible.len().max(1)) else {
                continue;
            };
            kills += 1;
            let position_json = records[k].position.to_json();
            records.truncate(k + 1);
            acknowledged.extend(records);
            position = Some(Position::from_json(&position_json).unwrap());
        }
        assert_eq!(
            kills, 10,
            "seed {seed}: the snapshot ended before ten kills"
        );
        let mut consumer = Consumer::default();
        consumer.apply(&acknowledged);
        let expected = source.db(contents);
        assert_contents(&consumer, &expected);
        if exactly_once {
            assert_eq!(consumer.duplicates(), 0, "seed {seed}");
        } else {
            // at most the chunk in flight at each kill
            assert!(consumer.duplicates() <= 10 * 1_000, "seed {seed}");
            assert!(
                consumer.duplicates() > 0,
                "seed {seed}: no kill inside a chunk"
            );
        }
    }
}

#[test]
fn snapshot_only_reads_the_tables_and_ends_without_streaming() {
    let spill = tempfile::tempdir().unwrap();
    let mut sim = database(5, 1_500, 0, 0);
    // a transaction the stream would deliver: snapshot_only never mines it
    while sim.advance(1).unwrap() {}
    let expected = contents(&mut sim);
    let source = Shared(Arc::new(Mutex::new(sim)));
    let clock = ManualClock::default();
    let mut engine = open(
        source.clone(),
        settings(&spill, SnapshotMode::SnapshotOnly),
        None,
        &clock,
    );
    let mut records = Vec::new();
    let stop = std::sync::atomic::AtomicBool::new(false);
    engine.run(&mut records, &stop, |_| {}).unwrap();
    assert!(engine.snapshot_finished());
    assert!(
        !records
            .iter()
            .any(|r| matches!(r.kind, RecordKind::Change(_))),
        "snapshot_only streamed"
    );
    assert_eq!(engine.metrics().steps, 0, "snapshot_only mined");
    let mut consumer = Consumer::default();
    consumer.apply(&records);
    assert_contents(&consumer, &expected);
    // a second start finds it complete and ends at once, reading nothing
    let position = Position::from_json(&engine.position().to_json()).unwrap();
    let mut again = open(
        source,
        settings(&spill, SnapshotMode::SnapshotOnly),
        Some(position),
        &clock,
    );
    let mut more = Vec::new();
    again.run(&mut more, &stop, |_| {}).unwrap();
    assert!(again.snapshot_finished());
    assert_eq!(snapshot_rows(&more), 0);
}

#[test]
fn mode_none_reads_no_table() {
    let spill = tempfile::tempdir().unwrap();
    let source = Shared(Arc::new(Mutex::new(database(6, 500, 300, 4))));
    let clock = ManualClock::default();
    let mut engine = open(source, settings(&spill, SnapshotMode::None), None, &clock);
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records).unwrap();
    assert_eq!(snapshot_rows(&records), 0);
    assert!(records.iter().all(|r| r.position.snapshot.is_none()));
    assert!(
        records
            .iter()
            .any(|r| matches!(r.kind, RecordKind::Change(_)))
    );
}

/// With several readers a batch's chunks are read in parallel and published in key order:
/// every table's rows arrive in strictly increasing key order, once each, whatever the
/// number of readers and the read-ahead bound.
#[test]
fn parallel_readers_publish_chunks_in_key_order() {
    let mut results = Vec::new();
    for (threads, pending) in [(1, 8), (4, 8), (4, 2)] {
        let spill = tempfile::tempdir().unwrap();
        let mut sim = database(7, 4_200, 0, 0);
        let expected = contents(&mut sim);
        let source = Shared(Arc::new(Mutex::new(sim)));
        let clock = ManualClock::default();
        let mut s = settings(&spill, SnapshotMode::Initial);
        s.snapshot.threads = threads;
        s.snapshot.max_pending_chunks = pending;
        let mut engine = open(source, s, None, &clock);
        let mut records = Vec::new();
        let mut most_chunks_in_a_step = 0;
        loop {
            let before = records.len();
            let report = engine.step(&mut records).unwrap();
            clock.advance(Duration::from_millis(250));
            let chunks = ops(&records[before..], OpsKind::SnapshotChunkDone).len();
            most_chunks_in_a_step = most_chunks_in_a_step.max(chunks);
            if !engine.snapshot_running() && report.rows == 0 {
                break;
            }
        }
        assert!(
            most_chunks_in_a_step <= (threads.min(pending)) as usize,
            "{threads} readers, {pending} pending: {most_chunks_in_a_step} chunks in a step"
        );
        if threads > 1 {
            assert!(
                most_chunks_in_a_step > 1,
                "the readers did not run together"
            );
        }
        let mut last: BTreeMap<TableId, Vec<Value>> = BTreeMap::new();
        for r in &records {
            if let RecordKind::Snapshot(row) = &r.kind
                && row.layout.key_source == KeySource::PrimaryKey
                && row.layout.key.len() == 1
            {
                let image = named(&row.layout, &row.values);
                let key = image[&row.layout.key[0]].clone();
                if let Some(previous) = last.insert(row.layout.table.clone(), vec![key.clone()]) {
                    let ordered = match (&previous[0], &key) {
                        (Value::Number(a), Value::Number(b)) => {
                            a.to_string().parse::<f64>().unwrap()
                                < b.to_string().parse::<f64>().unwrap()
                        }
                        (Value::Text(a), Value::Text(b)) => a.as_bytes() < b.as_bytes(),
                        other => panic!("unexpected key types {other:?}"),
                    };
                    assert!(ordered, "{}: {previous:?} then {key:?}", row.layout.table);
                }
            }
        }
        let mut consumer = Consumer::default();
        consumer.apply(&records);
        assert_contents(&consumer, &expected);
        assert_eq!(consumer.duplicates(), 0);
        results.push(consumer.tables);
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn snapshot_too_old_halves_the_chunk_then_stops_with_cdc_8001() {
    // chunks of 100 000 rows fail until they are down to 12 500: three halvings
    let spill = tempfile::tempdir().unwrap();
    let mut sim = database(8, 2_000, 0, 0);
    let expected = contents(&mut sim);
    sim.inject_snapshot_fault(SnapshotFault::TooOld {
        reads: 3,
        above_rows: 12_500,
    });
    let source = Shared(Arc::new(Mutex::new(sim)));
    let clock = ManualClock::default();
    let mut s = settings(&spill, SnapshotMode::Initial);
    s.snapshot.chunk_rows = 100_000;
    let mut engine = open(source.clone(), s, None, &clock);
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records).unwrap();
    assert_eq!(engine.snapshot_metrics().chunk_retries, 3);
    assert_eq!(source.db(|s| s.pending_snapshot_faults()), 0);
    let mut consumer = Consumer::default();
    consumer.apply(&records);
    assert_contents(&consumer, &expected);

    // a fault that persists at 1 000 rows: retried cdc.snapshot.chunk.retries times, then
    // CDC-8001
    let spill = tempfile::tempdir().unwrap();
    let sim = database(9, 2_000, 0, 0);
    sim.inject_snapshot_fault(SnapshotFault::TooOld {
        reads: 1_000,
        above_rows: 0,
    });
    let source = Shared(Arc::new(Mutex::new(sim)));
    let mut s = settings(&spill, SnapshotMode::Initial);
    s.snapshot.chunk_retries = 4;
    s.snapshot.chunk_rows = 8_000;
    let mut engine = open(source.clone(), s, None, &clock);
    let mut records = Vec::new();
    let stopped = run_until_quiet(&mut engine, &clock, &mut records).unwrap_err();
    let EngineError::Stop(e) = stopped else {
        panic!("not a stop: {stopped:?}");
    };
    assert_eq!(e.code(), CdcCode::SnapshotTooOld, "{e}");
    assert!(e.to_string().contains("1000 rows per chunk"), "{e}");
    assert_eq!(engine.snapshot_metrics().chunk_retries, 5);
    assert_eq!(source.db(|s| s.pending_snapshot_faults()), 1);
    assert_eq!(snapshot_rows(&records), 0);
}

/// A snapshot reader that panics (a defect in its own code) fails its chunk, on the mining
/// thread (one reader) as on the reader pool (two): the task stops with CDC-4005 naming the
/// table, the chunks published before it stand, and a restart from the last record's position
/// ends with the tables' contents and no row twice.
#[test]
fn a_panicking_reader_stops_with_cdc_4005_and_a_restart_finishes() {
    for threads in [1, 2] {
        let spill = tempfile::tempdir().unwrap();
        let mut sim = database(13, 2_500, 0, 0);
        let expected = contents(&mut sim);
        let shared = Shared::new(sim);
        let panic_at = Arc::new(AtomicU64::new(4));
        let source = PanickingReads {
            shared: shared.clone(),
            panic_at: Arc::clone(&panic_at),
        };
        let clock = ManualClock::default();
        let mut s = settings(&spill, SnapshotMode::Initial);
        s.snapshot.threads = threads;
        let mut engine = CaptureEngine::open(source, s, None, Box::new(clock.clone())).unwrap();
        let mut records = Vec::new();
        let stopped = run_until_quiet(&mut engine, &clock, &mut records).unwrap_err();
        let EngineError::Stop(e) = stopped else {
            panic!("threads {threads}: not a stop: {stopped:?}");
        };
        assert_eq!(e.code(), CdcCode::TaskThread, "threads {threads}: {e}");
        assert!(e.to_string().contains("APP."), "threads {threads}: {e}");
        assert!(!e.is_retried());
        assert_eq!(panic_at.load(std::sync::atomic::Ordering::SeqCst), 0);
        let before = snapshot_rows(&records);
        assert!(
            before >= 1_000,
            "threads {threads}: {before} rows before the panic"
        );
        drop(engine);
        let position = records.last().unwrap().position.clone();
        let mut engine = open(
            shared.clone(),
            settings(&spill, SnapshotMode::Initial),
            Some(Position::clone(&position)),
            &clock,
        );
        run_until_quiet(&mut engine, &clock, &mut records).unwrap();
        let mut consumer = Consumer::default();
        consumer.apply(&records);
        assert_contents(&consumer, &expected);
        assert_eq!(consumer.duplicates(), 0, "threads {threads}");
    }
}

#[test]
fn the_fetch_size_sets_the_round_trips() {
    let mut fetches = Vec::new();
    for fetch_size in [100, 1_000] {
        let spill = tempfile::tempdir().unwrap();
        let source = Shared(Arc::new(Mutex::new(database(10, 2_000, 0, 0))));
        let clock = ManualClock::default();
        let mut s = settings(&spill, SnapshotMode::Initial);
        s.snapshot.fetch_size = fetch_size;
        let mut engine = open(source.clone(), s, None, &clock);
        let mut records = Vec::new();
        run_until_quiet(&mut engine, &clock, &mut records).unwrap();
        assert_eq!(snapshot_rows(&records), 4 * 2_000);
        fetches.push(source.db(|s| s.snapshot_fetches()));
    }
    // 8 000 rows: about 80 round trips a chunk of 100 more than with 1 000
    assert!(fetches[0] >= 80, "{fetches:?}");
    assert!(fetches[0] > 5 * fetches[1], "{fetches:?}");
}

#[test]
fn tables_order_reads_named_tables_first() {
    let spill = tempfile::tempdir().unwrap();
    let source = Shared(Arc::new(Mutex::new(database(13, 300, 0, 0))));
    let clock = ManualClock::default();
    let mut s = settings(&spill, SnapshotMode::Initial);
    s.snapshot.tables_order = vec!["APP.ORDERS".into(), "app.events".into()];
    let mut engine = open(source, s, None, &clock);
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records).unwrap();
    let mut order: Vec<String> = Vec::new();
    for r in &records {
        if let RecordKind::Snapshot(row) = &r.kind {
            let name = row.layout.table.to_string();
            if order.last() != Some(&name) {
                order.push(name);
            }
        }
    }
    assert_eq!(
        order,
        ["APP.ORDERS", "APP.EVENTS", "APP.CODES", "APP.CUSTOMERS"],
        "tables read in this order"
    );
}

#[test]
fn a_select_override_limits_the_rows() {
    let spill = tempfile::tempdir().unwrap();
    let mut sim = database(14, 1_000, 0, 0);
    let all = contents(&mut sim);
    let source = Shared(Arc::new(Mutex::new(sim)));
    let clock = ManualClock::default();
    let mut config = cdc_core::config::Config::from_properties(
        "name=t\ncdc.source=sim\ncdc.topic.prefix=cdc\ncdc.tables.include=APP\\\\..*\n\
         cdc.snapshot.select.override.APP.CUSTOMERS=ID <= 100 AND NAME IS NOT NULL\n",
    )
    .unwrap()
    .validate()
    .unwrap();
    config.snapshot.mode = SnapshotMode::Initial;
    let mut s = settings(&spill, SnapshotMode::Initial);
    s.snapshot.select_overrides = config.snapshot.select_overrides.clone();
    let mut engine = open(source, s, None, &clock);
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records).unwrap();
    let mut consumer = Consumer::default();
    consumer.apply(&records);
    let customers = TableId::new("APP", "CUSTOMERS");
    let expected: BTreeSet<&String> = all[&customers]
        .iter()
        .filter(|(_, row)| {
            matches!(&row["ID"], Value::Number(n) if n.to_string().parse::<i64>().unwrap() <= 100)
                && row["NAME"] != Value::Null
        })
        .map(|(k, _)| k)
        .collect();
    let got: BTreeSet<&String> = consumer.tables[&customers].keys().collect();
    assert!(!expected.is_empty());
    assert_eq!(got, expected);
    // the other tables whole
    let orders = TableId::new("APP", "ORDERS");
    assert_eq!(consumer.tables[&orders].len(), all[&orders].len());
}

/// A signal record keyed by `key` at `offset`.
fn signal(offset: i64, key: &str, value: &str) -> cdc_logminer::engine::SignalRecord {
    cdc_logminer::engine::SignalRecord {
        offset,
        key: Some(key.as_bytes().to_vec()),
        value: Some(value.as_bytes().to_vec()),
    }
}

fn acks(records: &[EngineRecord]) -> Vec<(String, String, String)> {
    ops(records, OpsKind::SignalAck)
        .into_iter()
        .map(|d| (d["id"].clone(), d["type"].clone(), d["outcome"].clone()))
        .collect()
}

fn steps(
    engine: &mut CaptureEngine<Shared>,
    clock: &ManualClock,
    out: &mut Vec<EngineRecord>,
    n: usize,
) {
    for _ in 0..n {
        engine.step(out).unwrap();
        clock.advance(Duration::from_millis(250));
    }
}

/// Each signal type over the channel the bridge feeds: answered once with a `signal-ack`,
/// malformed ones rejected with the reason, another connector's ignored, a second snapshot
/// rejected while one runs; a restart handles none of them again.
#[test]
fn each_signal_is_handled_once_across_a_restart() {
    let spill = tempfile::tempdir().unwrap();
    let source = Shared(Arc::new(Mutex::new(database(15, 1_500, 200, 2))));
    let clock = ManualClock::default();
    let mut engine = open(
        source.clone(),
        settings(&spill, SnapshotMode::OnSignal),
        None,
        &clock,
    );
    let (tx, rx) = std::sync::mpsc::sync_channel(64);
    engine.attach_signals(rx);
    let ours = "engine-test";
    let all = [
        signal(0, ours, "not json"),
        signal(1, "another-connector", r#"{"id":"x","type":"log-state"}"#),
        signal(
            2,
            "cdc",
            r#"{"id":"s1","type":"snapshot","data":{"tables":["APP\\.CUSTOMERS","app\\.co.*"]}}"#,
        ),
        signal(
            3,
            ours,
            r#"{"id":"s2","type":"snapshot","data":{"tables":["APP\\..*"]}}"#,
        ),
        signal(4, ours, r#"{"id":"l1","type":"log-state"}"#),
        signal(5, ours, r#"{"id":"p1","type":"snapshot-pause"}"#),
    ];
    for s in all.iter().cloned() {
        tx.send(s).unwrap();
    }
    let mut records = Vec::new();
    steps(&mut engine, &clock, &mut records, 3);
    assert_eq!(
        acks(&records),
        [
            ("".into(), "".into(), "rejected".into()),
            ("s1".into(), "snapshot".into(), "accepted".into()),
            ("s2".into(), "snapshot".into(), "rejected".into()),
            ("l1".into(), "log-state".into(), "done".into()),
            ("p1".into(), "snapshot-pause".into(), "done".into()),
        ]
    );
    let state = ops(&records, OpsKind::SignalAck)[3];
    for field in [
        "mined_to_scn",
        "open_transactions",
        "buffered_events",
        "oldest_open_scn",
        "largest",
    ] {
        assert!(
            state.contains_key(field),
            "log-state lacks {field}: {state:?}"
        );
    }
    assert_eq!(state["snapshot_running"], "true");
    assert!(ops(&records, OpsKind::SignalAck)[0]["message"].contains("not JSON"));
    // paused: the batch of the step that handled s1 may have gone out, no more after
    let before = snapshot_rows(&records);
    steps(&mut engine, &clock, &mut records, 5);
    assert_eq!(
        snapshot_rows(&records),
        before,
        "rows published while paused"
    );
    assert_eq!(engine.position().signal_offset, Some(5));
    assert_eq!(engine.signals_from(), 6);

    // a restart from the last record: the same signals come again and none is handled
    let position = Position::from_json(&records.last().unwrap().position.to_json()).unwrap();
    drop(engine);
    let mut engine = open(
        source.clone(),
        settings(&spill, SnapshotMode::OnSignal),
        Some(position),
        &clock,
    );
    assert_eq!(engine.signals_from(), 6);
    let (tx, rx) = std::sync::mpsc::sync_channel(64);
    engine.attach_signals(rx);
    for s in all.iter().cloned() {
        tx.send(s).unwrap();
    }
    tx.send(signal(6, ours, r#"{"id":"r1","type":"snapshot-resume"}"#))
        .unwrap();
    let mut after = Vec::new();
    steps(&mut engine, &clock, &mut after, 1);
    assert_eq!(
        acks(&after),
        [("r1".into(), "snapshot-resume".into(), "done".into())]
    );
    run_until_quiet(&mut engine, &clock, &mut after).unwrap();
    // the resumed snapshot ends and tells the signal that asked for it
    assert_eq!(
        acks(&after),
        [
            ("r1".into(), "snapshot-resume".into(), "done".into()),
            ("s1".into(), "snapshot".into(), "done".into()),
        ]
    );
    let mut tables = BTreeSet::new();
    for r in records.iter().chain(&after) {
        if let RecordKind::Snapshot(row) = &r.kind {
            assert_eq!(row.marker, SnapshotMarker::Incremental);
            tables.insert(row.layout.table.to_string());
        }
    }
    assert_eq!(
        tables,
        BTreeSet::from(["APP.CODES".to_owned(), "APP.CUSTOMERS".to_owned()])
    );

    // snapshot-stop ends a running snapshot for good; refresh-tables reads the set again
    tx.send(signal(
        7,
        ours,
        r#"{"id":"s3","type":"snapshot","data":{"tables":["APP\\.ORDERS"],"predicate":"ID > 10"}}"#,
    ))
    .unwrap();
    tx.send(signal(8, ours, r#"{"id":"t1","type":"snapshot-stop"}"#))
        .unwrap();
    tx.send(signal(9, ours, r#"{"id":"f1","type":"refresh-tables"}"#))
        .unwrap();
    tx.send(signal(10, ours, r#"{"id":"t2","type":"snapshot-stop"}"#))
        .unwrap();
    let mut last = Vec::new();
    steps(&mut engine, &clock, &mut last, 2);
    assert_eq!(
        acks(&last),
        [
            ("s3".into(), "snapshot".into(), "accepted".into()),
            ("t1".into(), "snapshot-stop".into(), "done".into()),
            ("f1".into(), "refresh-tables".into(), "done".into()),
            ("t2".into(), "snapshot-stop".into(), "rejected".into()),
        ]
    );
    let complete = ops(&last, OpsKind::SnapshotComplete);
    assert_eq!(complete.last().unwrap()["stopped"], "true");
    let progress =
        SnapshotProgress::from_json(engine.position().snapshot.as_deref().unwrap()).unwrap();
    assert!(progress.complete && progress.stopped);
    assert_eq!(progress.condition.as_deref(), Some("ID > 10"));
    assert!(!engine.snapshot_running());
}

/// Under `none` no snapshot is taken, not even on a signal.
#[test]
fn mode_none_rejects_a_snapshot_signal() {
    let spill = tempfile::tempdir().unwrap();
    let source = Shared(Arc::new(Mutex::new(database(16, 100, 0, 0))));
    let clock = ManualClock::default();
    let mut engine = open(source, settings(&spill, SnapshotMode::None), None, &clock);
    let (tx, rx) = std::sync::mpsc::sync_channel(4);
    engine.attach_signals(rx);
    tx.send(signal(
        0,
        "cdc",
        r#"{"id":"s","type":"snapshot","data":{"tables":["APP\\..*"]}}"#,
    ))
    .unwrap();
    let mut records = Vec::new();
    steps(&mut engine, &clock, &mut records, 2);
    assert_eq!(
        acks(&records),
        [("s".into(), "snapshot".into(), "rejected".into())]
    );
    assert!(ops(&records, OpsKind::SignalAck)[0]["message"].contains("cdc.snapshot.mode=none"));
    assert_eq!(snapshot_rows(&records), 0);
}

/// An excluded column is never selected: no snapshot row holds a value for it, and the
/// other columns arrive as the stream would give them.
#[test]
fn excluded_columns_are_never_read() {
    let spill = tempfile::tempdir().unwrap();
    let mut sim = database(17, 800, 0, 0);
    let all = contents(&mut sim);
    let source = Shared(Arc::new(Mutex::new(sim)));
    let clock = ManualClock::default();
    let mut s = settings(&spill, SnapshotMode::Initial);
    s.column_filter = Arc::new(|t: &TableId, c: &str| t.table == "CUSTOMERS" && c == "NAME");
    let mut engine = open(source, s, None, &clock);
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records).unwrap();
    let customers = TableId::new("APP", "CUSTOMERS");
    let mut rows = 0;
    for r in &records {
        if let RecordKind::Snapshot(row) = &r.kind
            && row.layout.table == customers
        {
            rows += 1;
            let image = named(&row.layout, &row.values);
            assert!(!image.contains_key("NAME"), "an excluded column was read");
            let key = key_of(&row.layout, &image, Some(&row.row_id));
            let mut want = all[&customers][&key].clone();
            want.remove("NAME");
            assert_eq!(image, want);
        }
    }
    assert_eq!(rows, all[&customers].len());
}

/// Under `snapshot_only` signals are off: the engine leaves them unread and answers none.
#[test]
fn snapshot_only_reads_no_signal() {
    let spill = tempfile::tempdir().unwrap();
    let source = Shared(Arc::new(Mutex::new(database(18, 200, 0, 0))));
    let clock = ManualClock::default();
    let mut engine = open(
        source,
        settings(&spill, SnapshotMode::SnapshotOnly),
        None,
        &clock,
    );
    let (tx, rx) = std::sync::mpsc::sync_channel(4);
    engine.attach_signals(rx);
    // nothing holds the channel's other end: the signal cannot even be handed over
    let sent = tx.send(signal(0, "cdc", r#"{"id":"l","type":"log-state"}"#));
    assert!(
        sent.is_err(),
        "the engine kept the signal channel under snapshot_only"
    );
    let mut records = Vec::new();
    let stop = std::sync::atomic::AtomicBool::new(false);
    engine.run(&mut records, &stop, |_| {}).unwrap();
    assert!(engine.snapshot_finished());
    assert!(snapshot_rows(&records) > 0);
    assert!(
        acks(&records).is_empty(),
        "a signal was handled under snapshot_only"
    );
    assert_eq!(engine.position().signal_offset, None);
}
