//! The binary's simulator source across restarts, without Kafka: a task restarted from any
//! record's position, on a simulated database replayed from its seed (as `cdc.source=sim`
//! does), emits exactly the change records after that record.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use cdc_core::config::{CdcConfig, Config};
use cdc_logminer::engine::{CaptureEngine, EngineRecord, EngineSettings, ManualClock, RecordKind};
use cdc_logminer::source::configured::{sim_expected, sim_initial_scn, sim_source};
use cdc_offset::Position;

fn config(spill: &std::path::Path, changes: u64) -> CdcConfig {
    config_with(spill, changes, false)
}

fn config_with(spill: &std::path::Path, changes: u64, backlog: bool) -> CdcConfig {
    let mut given = Config::from_pairs([
        ("name", "sim-restart".to_owned()),
        ("cdc.source", "sim".into()),
        ("cdc.sim.seed", "7".into()),
        ("cdc.sim.changes", changes.to_string()),
        ("cdc.topic.prefix", "cdc".into()),
        ("cdc.tables.include", r"APP\..*".into()),
        ("cdc.tables.exclude", r"APP\.DOCS".into()),
        ("cdc.users.exclude", "ETL_BATCH".into()),
        ("cdc.key.missing", "rowid".into()),
        ("cdc.buffer.spill.dir", spill.display().to_string()),
        ("cdc.sim.backlog", backlog.to_string()),
        // the whole history is mined from the first SCN: no table is read whole
        ("cdc.snapshot.mode", "none".into()),
    ]);
    let initial = sim_initial_scn(&given.validate().unwrap()).unwrap();
    given.set("cdc.start.scn", initial.0.to_string());
    given.validate().unwrap()
}

/// Runs a task from `position` until the workload is done and the engine is quiet.
fn run(config: &CdcConfig, position: Option<Position>) -> Vec<EngineRecord> {
    let source = sim_source(config, position.as_ref()).unwrap();
    let clock = ManualClock::default();
    let mut engine = CaptureEngine::open(
        source,
        EngineSettings::from_config(config),
        position,
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut records = Vec::new();
    let mut quiet = 0;
    while quiet < 5 {
        let report = engine.step(&mut records).unwrap();
        quiet = if report.rows == 0 && !report.retried {
            quiet + 1
        } else {
            0
        };
        clock.advance(Duration::from_millis(200));
    }
    records
}

fn changes(records: &[EngineRecord]) -> Vec<(String, u64)> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Change(c) => Some((c.commit.con_xid.to_string(), c.event_index)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_restarted_simulator_task_emits_exactly_the_records_after_its_position() {
    let spill = tempfile::tempdir().unwrap();
    let config = config(spill.path(), 6000);
    let full = run(&config, None);
    let all = changes(&full);
    assert!(all.len() > 1000, "{}", all.len());
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut checked = 0;
    for _ in 0..40 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let k = (rng % full.len() as u64) as usize;
        let position = Position::from_json(&full[k].position.to_json()).unwrap();
        let replay = changes(&run(&config, Some(position)));
        let acknowledged = changes(&full[..=k]).len();
        let expected = &all[acknowledged..];
        let first_wrong = replay
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(replay.len().min(expected.len()));
        assert!(
            replay.as_slice() == expected,
            "restart after record {k} ({acknowledged} changes acknowledged): {} changes, \
             expected {}; first difference at {first_wrong}: got {:?}, expected {:?}",
            replay.len(),
            expected.len(),
            replay.get(first_wrong),
            expected.get(first_wrong)
        );
        checked += 1;
    }
    assert_eq!(checked, 40);
}

/// `cdc.sim.backlog`: the simulated database has run its whole workload when the task gets
/// it, and a task catches up on that redo to exactly the committed truth (the backlog alters
/// no table, whose older rows the online catalog could not name).
#[test]
fn a_backlog_is_mined_whole_after_its_workload_ran() {
    let spill = tempfile::tempdir().unwrap();
    let live = config_with(spill.path(), 6000, false);
    let backlog = config_with(spill.path(), 6000, true);
    let initial = sim_initial_scn(&backlog).unwrap();
    assert_eq!(sim_initial_scn(&live).unwrap(), initial);
    assert_eq!(
        sim_source(&live, None).unwrap().database().current_scn(),
        initial,
        "a live database runs its workload while it is mined"
    );
    let mut ran = sim_source(&backlog, None).unwrap();
    assert!(ran.database().current_scn() > initial);
    assert!(
        !ran.advance(1).unwrap(),
        "the backlog's workload has run to its end"
    );

    let expected: Vec<(String, u64)> = sim_expected(&backlog)
        .unwrap()
        .iter()
        .flat_map(|t| {
            let xid = cdc_core::ConXid::new(t.con, t.xid).to_string();
            (0..t.changes.len() as u64).map(move |i| (xid.clone(), i))
        })
        .collect();
    assert!(expected.len() > 1000, "{}", expected.len());
    assert_eq!(changes(&run(&backlog, None)), expected);
}

/// The `transaction` block of each change's value, by (transaction, event index, op):
/// `{"id", "total_order", "data_collection_order"}`, as a fresh task's records carry it.
fn transaction_blocks(
    config: &CdcConfig,
    records: &[EngineRecord],
) -> Vec<((String, u64, String), serde_json::Value)> {
    let mut settings = cdc_connect_bridge::RecordSettings::from_config(config, "FREE");
    settings.value_schemas = false;
    let mut builder = cdc_connect_bridge::RecordBuilder::new(settings);
    let mut out = Vec::new();
    for record in records {
        let RecordKind::Change(change) = &record.kind else {
            continue;
        };
        let xid = change.commit.con_xid.to_string();
        let context = cdc_connect_bridge::RecordContext::default();
        for kafka in builder.records(record, context).unwrap() {
            let Some(value) = kafka.value else { continue };
            let value: serde_json::Value = serde_json::from_slice(&value).unwrap();
            let op = value["op"].as_str().unwrap().to_owned();
            out.push((
                (xid.clone(), change.event_index, op),
                value["transaction"].clone(),
            ));
        }
    }
    out
}

/// `transaction.data_collection_order` is the change's place among its transaction's changes
/// to the same table (Debezium's meaning), whatever the task that delivers it: a task
/// restarted inside a transaction gives the changes after its position the same order as the
/// first task did, instead of counting the same table from 1 again.
#[test]
fn a_restart_inside_a_transaction_keeps_the_transaction_order() {
    let spill = tempfile::tempdir().unwrap();
    let config = config(spill.path(), 1500);
    let full = run(&config, None);
    let blocks = transaction_blocks(&config, &full);
    let first_order = |key: &(String, u64, String)| {
        blocks
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, block)| block.clone())
    };
    // positions inside a transaction that has a later change to a table it already changed
    // before the position: there a task that counts from its own first record goes wrong
    let inside: Vec<usize> = full
        .iter()
        .enumerate()
        .filter_map(|(k, record)| {
            let RecordKind::Change(change) = &record.kind else {
                return None;
            };
            let xid = change.commit.con_xid;
            let table = &change.event.change.table;
            let later_same_table = full[k + 1..].iter().any(|r| match &r.kind {
                RecordKind::Change(c) => c.commit.con_xid == xid && c.event.change.table == *table,
                _ => false,
            });
            (!change.is_last() && later_same_table).then_some(k)
        })
        .take(8)
        .collect();
    assert!(inside.len() >= 4, "{}", inside.len());
    for k in inside {
        let position = Position::from_json(&full[k].position.to_json()).unwrap();
        let replay = run(&config, Some(position));
        let replayed = transaction_blocks(&config, &replay);
        assert!(!replayed.is_empty(), "restart after record {k}");
        for (key, block) in replayed {
            assert_eq!(
                Some(&block),
                first_order(&key).as_ref(),
                "restart after record {k}: {key:?}"
            );
        }
    }
}
