//! Snapshots and signals through the `oracle-cdc` binary into a real Kafka-protocol broker:
//! a consumer applying every record by key, read back independently, ends with exactly the
//! simulated database's table contents, across `kill -9`; signals on the signals topic are
//! answered once on the ops topic; `snapshot_only` ends the process cleanly.
//!
//! Needs `CDC_TEST_BROKER`; the exactly-once kill run also needs a broker that hides aborted
//! records (`CDC_TEST_BOOTSTRAP`, an Apache Kafka), and otherwise says why it skips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::e2e_support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use cdc_connect_bridge::kafka::readback::ReadRecord;
use cdc_core::TableId;
use cdc_logminer::source::configured::{SIM_LOADED_TABLES, sim_final_database};
use e2e_support::*;
use rdkafka::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::Value as Json;

/// A table's rows by key text → the row's JSON object.
type Rows = BTreeMap<String, Json>;

/// A setup whose first start snapshots tables of `rows` rows each while a workload of
/// `changes` runs.
fn snapshot_setup(test: &str, broker: &str, rows: u64, changes: u64, exactly_once: bool) -> Setup {
    let mut setup = Setup::new(test, broker, changes, exactly_once);
    // a first start at the database's current SCN: what the tables already hold comes from
    // the snapshot, the rest from the stream
    setup.pairs.retain(|(k, _)| k != "cdc.start.scn");
    setup.set("cdc.snapshot.mode", "initial");
    setup.set("cdc.sim.table.rows", &rows.to_string());
    setup.set("cdc.snapshot.chunk.rows", "5000");
    setup.set("cdc.snapshot.threads", "2");
    // every change streamed: an excluded user's are in the rows a snapshot reads
    setup.pairs.retain(|(k, _)| k != "cdc.users.exclude");
    setup
}

/// The loaded tables the setups capture (`APP\..*` but APP.DOCS).
fn captured() -> impl Iterator<Item = (&'static str, &'static str)> {
    SIM_LOADED_TABLES
        .into_iter()
        .filter(|(owner, _)| *owner == "APP")
}

/// The payload of a record's value (without the schema envelope).
fn payload(record: &ReadRecord) -> Option<Json> {
    let value = record.value_json()?;
    Some(value.get("payload").cloned().unwrap_or(value))
}

fn key_text(record: &ReadRecord) -> String {
    record
        .key
        .as_ref()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .unwrap_or_default()
}

/// A record's key as the values of its fields, `|`-joined (numbers in decimal, text as is):
/// comparable with a row's key columns (or ROWID) in the database.
fn canonical_key(record: &ReadRecord) -> String {
    let key: Json = record
        .key
        .as_ref()
        .and_then(|k| serde_json::from_slice(k).ok())
        .unwrap_or(Json::Null);
    let key = key.get("payload").cloned().unwrap_or(key);
    match key {
        Json::Object(fields) => fields
            .values()
            .map(|v| match v {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join("|"),
        other => other.to_string(),
    }
}

/// Applies the table topics' records by key, per partition in offset order (a key's records
/// are all in one partition): `r`, `c` and `u` put the row, `d` and a tombstone remove it.
fn apply(records: &[ReadRecord]) -> BTreeMap<String, Rows> {
    let mut sorted: Vec<&ReadRecord> = records.iter().collect();
    sorted
        .sort_by(|a, b| (&a.topic, a.partition, a.offset).cmp(&(&b.topic, b.partition, b.offset)));
    let mut tables: BTreeMap<String, Rows> = BTreeMap::new();
    for record in sorted {
        let table = tables.entry(record.topic.clone()).or_default();
        let key = canonical_key(record);
        match payload(record) {
            None => {
                table.remove(&key);
            }
            Some(p) => match p["op"].as_str() {
                Some("r" | "c" | "u") => {
                    table.insert(key, p["after"].clone());
                }
                Some("d") => {
                    table.remove(&key);
                }
                other => panic!("unexpected op {other:?} in {}", record.topic),
            },
        }
    }
    tables
}

/// What a consumer must end with: each captured table's committed rows, as the connector
/// renders them (compared by the fields the records carry, over the rows' keys).
fn expected_counts(setup: &Setup) -> BTreeMap<String, usize> {
    let db = sim_final_database(&setup.config()).unwrap();
    let prefix = setup.get("cdc.topic.prefix").to_owned();
    captured()
        .map(|(owner, table)| {
            let rows = db.committed_rows(&TableId::new(owner, table)).unwrap();
            (format!("{prefix}.{owner}.{table}"), rows.len())
        })
        .collect()
}

/// Checks the consumer's tables against the database: the same keys per table (the key
/// columns' values, or the ROWID of a keyless table), and every text column of each row as
/// the database holds it.
fn assert_tables(setup: &Setup, tables: &BTreeMap<String, Rows>) {
    let db = sim_final_database(&setup.config()).unwrap();
    let prefix = setup.get("cdc.topic.prefix").to_owned();
    for (owner, table) in captured() {
        let topic = format!("{prefix}.{owner}.{table}");
        let id = TableId::new(owner, table);
        let key_columns: Vec<String> = db
            .containers()
            .iter()
            .flat_map(|c| c.tables.iter())
            .find(|t| t.id == id && !t.dropped)
            .and_then(|t| t.layout().map(|l| l.key.clone()))
            .unwrap_or_default();
        let rows = db.committed_rows(&id).unwrap();
        let got = tables.get(&topic).cloned().unwrap_or_default();
        let mut want = BTreeMap::new();
        for (row_id, columns) in &rows {
            let key = if key_columns.is_empty() {
                row_id.clone()
            } else {
                key_columns
                    .iter()
                    .map(
                        |k| match columns.iter().find(|(c, _)| c == k).map(|(_, v)| v) {
                            Some(cdc_core::Value::Number(n)) => n.to_string(),
                            Some(cdc_core::Value::Text(t)) => t.clone(),
                            other => format!("{other:?}"),
                        },
                    )
                    .collect::<Vec<_>>()
                    .join("|")
            };
            want.insert(key, columns);
        }
        let missing: Vec<&String> = want.keys().filter(|k| !got.contains_key(*k)).collect();
        let extra: Vec<&String> = got.keys().filter(|k| !want.contains_key(*k)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{topic}: {} rows missing (first {:?}), {} extra (first {:?})",
            missing.len(),
            missing.first(),
            extra.len(),
            extra.first()
        );
        for (key, columns) in &want {
            let row = &got[key];
            for (column, value) in columns.iter() {
                if let cdc_core::Value::Text(text) = value {
                    assert_eq!(
                        row.get(column).and_then(Json::as_str),
                        Some(text.as_str()),
                        "{topic} row {key} column {column}"
                    );
                }
            }
        }
    }
}

fn snapshot_complete(setup: &Setup, wait: Duration) -> bool {
    ops_events(setup, "snapshot-complete", false, wait)
        .iter()
        .any(|e| e["details"]["table"] == "*")
}

/// The issue's proof: 200 000 rows over four captured tables snapshotted at a first start
/// while the workload runs, the process killed ten times during the snapshot; the consumer
/// ends with exactly the database's contents.
fn kills_during_a_snapshot(exactly_once: bool) {
    let Some(tansu) = broker() else { return };
    // Under exactly-once a kill with a Kafka transaction open needs a broker that hides
    // aborted records (the restart reads its offset read_committed). Without one, each kill
    // comes after PUT /pause has taken hold: at a boundary, with no Kafka transaction open.
    let (broker, pause_first) = if exactly_once {
        match std::env::var("CDC_TEST_BOOTSTRAP") {
            Ok(bootstrap) if !bootstrap.is_empty() => (bootstrap, false),
            _ if hides_aborted_records(&tansu) => (tansu, false),
            _ => {
                eprintln!(
                    "note: {tansu} does not hide aborted records from read_committed readers, \
                     so each kill comes after a pause took hold (no Kafka transaction open); \
                     set CDC_TEST_BOOTSTRAP to an Apache Kafka >= 3.6 broker for random kills"
                );
                (tansu, true)
            }
        }
    } else {
        (tansu, false)
    };
    let test = if exactly_once { "snapeos" } else { "snapalo" };
    let setup = snapshot_setup(test, &broker, 50_000, 3_000, exactly_once);
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let mut kills = 0;
    let mut seed = 0x5eed_u64;
    while kills < 10 {
        let before: i64 = watermarks(&setup).values().sum();
        let running = Running::start(&config_path, &log);
        assert!(
            wait_for(Duration::from_secs(120), || watermarks(&setup)
                .values()
                .sum::<i64>()
                > before),
            "no record flowed; log:\n{}",
            running.log_text()
        );
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        std::thread::sleep(Duration::from_millis(50 + (seed >> 33) % 350));
        if pause_first {
            lifecycle(&setup, "pause");
            wait_until_paused(&setup.rest(), &setup.name);
        }
        running.kill9();
        kills += 1;
        settle(&setup);
    }
    assert!(
        !snapshot_complete(&setup, Duration::from_secs(2)),
        "the snapshot ended before the tenth kill: the kills did not fall in it"
    );
    let running = Running::start(&config_path, &log);
    assert!(
        wait_for(Duration::from_secs(600), || snapshot_complete(
            &setup,
            Duration::from_secs(2)
        )),
        "the snapshot did not complete; log:\n{}",
        running.log_text()
    );
    // the workload's rest is streamed too
    let expected = expected_counts(&setup);
    let total: usize = expected.values().sum();
    assert!(total >= 200_000, "{total} rows");
    assert!(
        wait_for(Duration::from_secs(300), || {
            let tables = apply(&read_to_end(&setup, exactly_once));
            expected
                .iter()
                .all(|(topic, n)| tables.get(topic).map_or(0, BTreeMap::len) == *n)
        }),
        "the tables did not reach the database's row counts; log:\n{}",
        running.log_text()
    );
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success());
    let records = read_to_end(&setup, exactly_once);
    assert_tables(&setup, &apply(&records));
    let snapshot_rows: Vec<&ReadRecord> = records
        .iter()
        .filter(|r| r.header("cdc.snapshot") == Some("true"))
        .collect();
    assert!(snapshot_rows.len() >= 200_000 - 2_000);
    // the headers and source of a snapshot row
    let sample = payload(snapshot_rows[0]).unwrap();
    assert_eq!(sample["op"], "r");
    assert!(sample["before"].is_null() && sample["transaction"].is_null());
    assert!(sample["source"]["txId"].is_null() && sample["source"]["scn"].is_string());
    assert!(snapshot_rows[0].header("cdc.xid").is_none());
    if exactly_once {
        let mut seen = BTreeSet::new();
        for r in &snapshot_rows {
            assert!(
                seen.insert((
                    r.topic.clone(),
                    key_text(r),
                    r.header("cdc.scn").map(str::to_owned)
                )),
                "a snapshot row delivered twice under exactly-once: {} {}",
                r.topic,
                key_text(r)
            );
        }
    }
    eprintln!(
        "{}: 10 kills, {} records, {} snapshot rows",
        if exactly_once {
            "exactly-once"
        } else {
            "at-least-once"
        },
        records.len(),
        snapshot_rows.len()
    );
}

#[test]
fn a_first_start_snapshots_200_000_rows_while_the_workload_runs_through_kills() {
    kills_during_a_snapshot(false);
}

#[test]
fn a_first_start_snapshots_through_kills_without_duplicates_exactly_once() {
    kills_during_a_snapshot(true);
}

fn produce(broker: &str, topic: &str, records: &[(&str, &str)]) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker)
        .create()
        .unwrap();
    for (key, value) in records {
        producer
            .send(BaseRecord::to(topic).key(*key).payload(*value))
            .map_err(|(e, _)| e)
            .unwrap();
    }
    producer.flush(Duration::from_secs(20)).unwrap();
}

fn acks(setup: &Setup) -> Vec<(String, String)> {
    ops_events(setup, "signal-ack", false, Duration::from_secs(2))
        .iter()
        .map(|e| {
            (
                e["details"]["id"].as_str().unwrap_or("").to_owned(),
                e["details"]["outcome"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[test]
fn signals_through_the_topic_are_answered_once() {
    let Some(broker) = broker() else { return };
    let mut setup = snapshot_setup("signals", &broker, 2_000, 200, false);
    setup.set("cdc.snapshot.mode", "on_signal");
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let running = Running::start(&config_path, &log);
    assert!(
        wait_for_first_records(&setup, false),
        "{}",
        running.log_text()
    );
    let signals = setup.config().topics.signals;
    let name = setup.name.clone();
    produce(
        &broker,
        &signals,
        &[
            (&name, "{not json"),
            ("someone-else", r#"{"id":"x","type":"log-state"}"#),
            (
                &name,
                r#"{"id":"s1","type":"snapshot","data":{"tables":["APP\\.CUSTOMERS"]}}"#,
            ),
            (&name, r#"{"id":"l1","type":"log-state"}"#),
        ],
    );
    assert!(
        wait_for(Duration::from_secs(120), || acks(&setup)
            .contains(&("s1".into(), "done".into()))),
        "the snapshot signal was not done: {:?}; log:\n{}",
        acks(&setup),
        running.log_text()
    );
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success());
    // a restart reads the topic again from after the last signal it handled
    let running = Running::start(&config_path, &log);
    produce(
        &broker,
        &signals,
        &[(&name, r#"{"id":"l2","type":"log-state"}"#)],
    );
    assert!(
        wait_for(Duration::from_secs(60), || acks(&setup)
            .contains(&("l2".into(), "done".into()))),
        "{}",
        running.log_text()
    );
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success());
    let acks = acks(&setup);
    assert_eq!(
        acks,
        [
            ("".into(), "rejected".into()),
            ("s1".into(), "accepted".into()),
            ("l1".into(), "done".into()),
            ("s1".into(), "done".into()),
            ("l2".into(), "done".into()),
        ],
        "each signal answered once, in order"
    );
    let records = read_to_end(&setup, false);
    let customers: Vec<&ReadRecord> = records
        .iter()
        .filter(|r| r.topic.ends_with(".APP.CUSTOMERS") && r.header("cdc.snapshot") == Some("true"))
        .collect();
    assert!(customers.len() >= 2_000 - 50, "{}", customers.len());
    assert!(
        customers
            .iter()
            .all(|r| payload(r).unwrap()["source"]["snapshot"] == "incremental")
    );
    assert!(
        !records
            .iter()
            .any(|r| !r.topic.ends_with(".APP.CUSTOMERS") && r.header("cdc.snapshot").is_some()),
        "a table the signal did not name was snapshotted"
    );
}

#[test]
fn snapshot_only_exits_cleanly_after_the_snapshot() {
    let Some(broker) = broker() else { return };
    let mut setup = snapshot_setup("snaponly", &broker, 3_000, 500, true);
    setup.set("cdc.snapshot.mode", "snapshot_only");
    let config_path = setup.write();
    let (code, log) = run_to_exit(&["--exit-on-failure"], &config_path);
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("snapshot_only"), "{log}");
    let records = read_to_end(&setup, true);
    assert!(
        records
            .iter()
            .all(|r| r.header("cdc.snapshot") == Some("true"))
    );
    let tables = apply(&records);
    for (owner, table) in captured() {
        let topic = format!("{}.{owner}.{table}", setup.name);
        assert!(
            tables.get(&topic).map_or(0, BTreeMap::len) >= 3_000 - 100,
            "{topic}"
        );
    }
    assert!(snapshot_complete(&setup, Duration::from_secs(5)));
}
