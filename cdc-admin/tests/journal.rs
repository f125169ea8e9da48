//! `journal inspect` against the test broker: a journal written with cdc-journal's own records
//! and Kafka store (and raw damaged records written with rdkafka), read back and reported.
//!
//! The Kafka tests need `CDC_TEST_BROKER` (`source /tmp/broker.env`, or
//! `eval "$(scripts/tansu.sh start)"`). Without it they print why and pass, except under CI
//! (`CI` set), where a missing broker is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use cdc_admin::journal::{
    Acknowledged, FindingKind, JournalInspectError, JournalReport, Restart, inspect,
    inspect_acknowledged,
};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::config::{CdcConfig, Config};
use cdc_core::{
    CdcCode, CdcError, ChangeEvent, ConId, ConXid, RedoAddr, RsId, Scn, TableId, Value, Xid,
};
use cdc_journal::kafka::{KafkaJournal, client_config, create_compacted_topic};
use cdc_journal::{
    Chunk, ChunkMeta, EncodedRecord, JournalConverter, JournalKey, JournalRecord, JournalSettings,
    JournalStore, JournalWriter, PayloadBuilder, RebuildFrom,
};
use cdc_offset::rules::JournalRule;
use cdc_offset::{DbIdentity, Position, ResumePoint};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

const SERVER: &str = "ORCL";

fn broker() -> Option<String> {
    match std::env::var("CDC_TEST_BROKER") {
        Ok(broker) if !broker.is_empty() => Some(broker),
        _ if std::env::var_os("CI").is_some() => {
            panic!("CDC_TEST_BROKER is not set: CI must start the test broker before these tests")
        }
        _ => {
            eprintln!(
                "skipped: CDC_TEST_BROKER is not set (source /tmp/broker.env, or \
                 eval \"$(scripts/tansu.sh start)\")"
            );
            None
        }
    }
}

fn unique_topic(test: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "admin-journal-{test}-{}-{millis}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn config(pairs: &[(&str, &str)]) -> CdcConfig {
    let mut config = Config::from_pairs([
        ("name", "journal-inspect"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", SERVER),
        ("cdc.tables.include", ".*"),
    ]);
    for (k, v) in pairs {
        config.set(*k, *v);
    }
    config.validate().expect("a valid configuration")
}

fn tx(n: u16) -> ConXid {
    ConXid::new(ConId(3), Xid::new(n, 7, 1000 + u32::from(n)))
}

fn addr(n: u64) -> RedoAddr {
    let block = u32::try_from(n).expect("a small address");
    RedoAddr::new(RsId::new(40, block + 1, 16), n + 1).expect("an address")
}

fn key(server: &str, tx: ConXid, chunk: u32, generation: u64) -> JournalKey {
    JournalKey {
        server: server.to_owned(),
        tx,
        chunk,
        generation,
    }
}

/// Chunk `number` of `tx` with `events` changes of `text` bytes each.
fn chunk(
    server: &str,
    tx: ConXid,
    number: u32,
    generation: u64,
    events: u64,
    text: usize,
) -> JournalRecord {
    let table = Arc::new(TableId::new("APP", "DOCS"));
    let mut payload = PayloadBuilder::new();
    let mut marks = Vec::new();
    for row in 0..events {
        let at = u64::from(tx.xid.usn) * 1_000_000 + u64::from(number) * 1000 + row;
        let event = ChangeEvent {
            scn: Scn(5_000_000 + at),
            addr: addr(at),
            change: RowChange {
                op: ChangeOp::Insert,
                table: Arc::clone(&table),
                schema_version: 1,
                before: None,
                after: Some(vec![ColumnValue {
                    column: 0,
                    value: Value::Text("x".repeat(text)),
                }]),
                row_id: Some(format!("AAAR{at:012}")),
            },
        };
        marks.push(payload.push_change(&event));
    }
    JournalRecord {
        key: key(server, tx, number, generation),
        chunk: Some(Arc::new(Chunk {
            meta: ChunkMeta {
                first: marks[0],
                last: marks[marks.len() - 1],
                first_captured: Some(marks[0]),
                events,
                undos: 0,
                start_scn: Some(Scn(4_000_000)),
                start_addr: None,
                thread: 1,
                username: Some("APP".to_owned()),
                client_id: None,
                heap_undo: None,
            },
            payload: payload.finish(),
        })),
    }
}

fn tombstone(tx: ConXid, number: u32, generation: u64) -> JournalRecord {
    JournalRecord::tombstone(key(SERVER, tx, number, generation))
}

/// The stored value bytes of the written records of `tx`, at the given offsets of partition 0.
fn value_bytes(written: &[EncodedRecord], offsets: &[usize]) -> u64 {
    offsets
        .iter()
        .map(|&i| written[i].value.as_ref().map_or(0, Vec::len) as u64)
        .sum()
}

fn finding(
    report: &JournalReport,
    partition: i32,
    offset: i64,
) -> &cdc_admin::journal::ChunkFinding {
    report
        .findings
        .iter()
        .find(|f| f.partition == partition && f.offset == offset)
        .unwrap_or_else(|| panic!("no finding at {partition}/{offset}: {report:#?}"))
}

#[test]
fn inspect_reports_the_live_transactions_and_names_damaged_and_orphaned_chunks() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("inspect");
    create_compacted_topic(&broker, &[], &topic, 2).expect("the journal topic");

    let (t1, t2, t3, t4, t5) = (tx(1), tx(2), tx(3), tx(4), tx(5));
    // partition 0, offsets in this order
    let records = [
        chunk(SERVER, t1, 0, 1, 4, 2000), // 0
        chunk(SERVER, t1, 1, 1, 4, 2000), // 1
        chunk(SERVER, t1, 2, 1, 2, 2000), // 2
        chunk(SERVER, t2, 0, 1, 1, 100),  // 3
        chunk(SERVER, t2, 1, 1, 1, 100),  // 4
        chunk(SERVER, t3, 0, 1, 2, 100),  // 5  ended below
        chunk(SERVER, t3, 1, 1, 2, 100),  // 6
        chunk(SERVER, t4, 0, 1, 1, 100),  // 7  its tombstones under way
        chunk(SERVER, t4, 1, 1, 1, 100),  // 8  orphaned: no chunk 0 left
        chunk("OTHER", t1, 0, 1, 1, 100), // 9  another connector's
        tombstone(t3, 0, 1),              // 10
        tombstone(t3, 1, 1),              // 11
        tombstone(t4, 0, 1),              // 12
        chunk(SERVER, t2, 2, 2, 1, 100),  // 13 written after a restart (generation 2)
        chunk(SERVER, t2, 3, 3, 1, 100),  // 14 a start that never committed (generation 3)
    ];
    let written: Vec<EncodedRecord> = records
        .iter()
        .enumerate()
        .map(|(i, r)| EncodedRecord::of(r, i % 2 == 0))
        .collect();
    let mut journal = KafkaJournal::new(&broker, &[], &topic).expect("a Kafka journal");
    journal.write(&written).expect("the journal written");

    // partition 1, raw: chunk 0 of t5 with a frame's byte flipped (its CRC32 fails), and a
    // record whose key is not JSON
    let mut damaged = chunk(SERVER, t5, 0, 1, 3, 100);
    if let Some(chunk) = damaged.chunk.as_mut() {
        let chunk = Arc::make_mut(chunk);
        let last = chunk.payload.len() - 1;
        chunk.payload[last] ^= 0xff;
    }
    let damaged = EncodedRecord::of(&damaged, false);
    let producer: BaseProducer = client_config(&broker, &[])
        .set("enable.idempotence", "true")
        .create()
        .expect("a producer");
    let raw: [(&[u8], &[u8]); 2] = [
        (&damaged.key, damaged.value.as_deref().expect("a value")),
        (b"not a key", b"{}"),
    ];
    for (key, value) in raw {
        producer
            .send(BaseRecord::to(&topic).partition(1).key(key).payload(value))
            .map_err(|(e, _)| e)
            .expect("send");
    }
    producer.flush(Duration::from_secs(30)).expect("flush");

    let configured = config(&[
        ("cdc.txjournal.topic", &topic),
        ("cdc.kafka.bootstrap.servers", &broker),
    ]);
    let report = inspect_acknowledged(&configured, None, Acknowledged::Generation(2))
        .expect("the journal inspected");
    println!("{}", report.render_text());

    let t = &report.totals;
    assert_eq!(report.topic, topic);
    assert_eq!(report.server, SERVER);
    assert_eq!(t.partitions, 2);
    assert_eq!(t.records_read, 17);
    assert_eq!(t.tombstones_read, 3);
    assert_eq!(t.other_connectors, 1);
    // t3 (every chunk tombstoned) and t4 (chunk 0 tombstoned)
    assert_eq!(t.ended_transactions, 2);

    // exactly t1, t2 and t5, largest first; t3 and t4 absent
    let listed: Vec<ConXid> = report.transactions.iter().map(|t| t.tx).collect();
    assert_eq!(listed, [t1, t2, t5], "{report:#?}");
    let [r1, r2, r5] = &report.transactions[..] else {
        panic!("three transactions")
    };
    assert_eq!(r1.chunks.len(), 3);
    assert_eq!(
        r1.chunks.iter().map(|c| c.offset).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(r1.bytes, value_bytes(&written, &[0, 1, 2]));
    assert_eq!(r1.events, 10);
    assert_eq!(r1.generations, [1]);
    assert!(r1.gaps.is_empty() && !r1.stops_restart());
    assert_eq!(r1.first_scn, Some(Scn(6_000_000)));
    assert_eq!(r1.last_scn, Some(Scn(6_002_001)));

    // t2's chunk of generation 3 is not counted: never acknowledged
    assert_eq!(
        r2.chunks
            .iter()
            .map(|c| (c.number, c.generation))
            .collect::<Vec<_>>(),
        [(0, 1), (1, 1), (2, 2)]
    );
    assert_eq!(r2.bytes, value_bytes(&written, &[3, 4, 13]));
    assert_eq!(r2.generations, [1, 2]);

    assert_eq!(r5.chunks.len(), 1);
    assert_eq!(r5.damaged_chunks, 1);
    assert!(r5.stops_restart());
    assert_eq!(r5.bytes, damaged.value.as_ref().map_or(0, Vec::len) as u64);

    assert_eq!(t.live_transactions, 3);
    assert_eq!(t.live_chunks, 7);
    assert_eq!(t.bytes, r1.bytes + r2.bytes + r5.bytes);

    // the findings, by partition and offset
    assert_eq!(
        report
            .findings
            .iter()
            .map(|f| (f.partition, f.offset, f.kind))
            .collect::<Vec<_>>(),
        [
            (0, 8, FindingKind::Orphaned),
            (0, 14, FindingKind::Orphaned),
            (1, 0, FindingKind::Damaged),
            (1, 1, FindingKind::Damaged),
        ]
    );
    assert_eq!((t.damaged, t.orphaned), (2, 2));
    let no_first = finding(&report, 0, 8);
    assert_eq!(no_first.key, Some(key(SERVER, t4, 1, 1)));
    assert!(
        no_first.reason.contains("no chunk 0"),
        "{}",
        no_first.reason
    );
    assert!(!no_first.stops_restart);
    let newer = finding(&report, 0, 14);
    assert_eq!(newer.key, Some(key(SERVER, t2, 3, 3)));
    assert!(newer.reason.contains("generation 3"), "{}", newer.reason);
    let crc = finding(&report, 1, 0);
    assert_eq!(crc.key, Some(key(SERVER, t5, 0, 1)));
    assert!(crc.reason.contains("payload"), "{}", crc.reason);
    assert!(crc.stops_restart);
    let bad_key = finding(&report, 1, 1);
    assert_eq!(bad_key.key, None);
    assert!(bad_key.reason.contains("key"), "{}", bad_key.reason);

    // t5's damaged chunk and the record whose key does not read stop a restart
    assert_eq!(report.restart(), Restart::Stops);

    // the text and the JSON name them too
    let text = report.render_text();
    assert!(text.contains("partition 1 offset 0 (damaged)"), "{text}");
    assert!(text.contains("partition 0 offset 14 (orphaned)"), "{text}");
    assert!(!text.contains(&t3.to_string()), "{text}");
    let json = report.to_json();
    assert_eq!(json["transactions"][0]["xid"], t1.xid.to_string());
    assert_eq!(json["transactions"][0]["chunk_count"], 3);
    assert_eq!(json["findings"][3]["partition"], 1);

    // without the acknowledged generation, generation 3 is not judged: t2 holds four chunks,
    // and --bootstrap takes the place of the configured brokers
    let unconfigured = config(&[("cdc.txjournal.topic", &topic)]);
    let report = inspect(&unconfigured, Some(&broker)).expect("the journal inspected");
    let r2 = report
        .transactions
        .iter()
        .find(|t| t.tx == t2)
        .expect("t2 listed");
    assert_eq!(r2.chunks.len(), 4);
    assert_eq!(r2.generations, [1, 2, 3]);
    assert_eq!(report.totals.orphaned, 1);
}

#[test]
fn an_absent_topic_is_an_empty_journal() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("absent");
    let config = config(&[
        ("cdc.txjournal.topic", &topic),
        ("cdc.kafka.bootstrap.servers", &broker),
    ]);
    let report = inspect(&config, None).expect("the journal inspected");
    assert_eq!(report.totals.records_read, 0);
    assert!(report.transactions.is_empty() && report.findings.is_empty());
}

#[test]
fn without_brokers_it_says_where_to_name_them() {
    let error = inspect(&config(&[]), None).expect_err("no brokers");
    assert!(matches!(error, JournalInspectError::NoBrokers), "{error}");
    assert!(error.to_string().contains("--bootstrap"), "{error}");
}

#[test]
fn a_client_property_value_is_never_shown() {
    let secret = "hunter2-admin-secret";
    let config = config(&[
        ("cdc.kafka.bootstrap.servers", "broker-1:9092"),
        ("cdc.kafka.sasl.password", secret),
        // rejected by librdkafka, with the secret as its value
        ("cdc.kafka.socket.timeout.ms", secret),
    ]);
    let error = inspect(&config, None).expect_err("a rejected property");
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(shown.contains("socket.timeout.ms"), "{shown}");
    assert_eq!(error.code(), Some(CdcCode::KafkaClientSetup));
}

/// The connector's own rebuild over `topic`: a restart from a position of `generation` that
/// mines from before every journaled row (so every open transaction is rebuilt, none ended
/// before it), or with `None` a first start.
fn connector_rebuild(broker: &str, topic: &str, generation: Option<u64>) -> Result<(), CdcError> {
    let spill = tempfile::tempdir().expect("a spill directory");
    let mut buffer = cdc_buffer::TransactionBuffer::open(cdc_buffer::BufferSettings {
        memory_max_bytes: 64 << 20,
        spill_dir: spill.path().to_owned(),
        spill_max_bytes: 1 << 30,
    })
    .expect("a buffer");
    let mining_start = RedoAddr::MIN;
    let rule = generation.map(|generation| {
        let position = Position::new(
            ResumePoint::from_scn(Scn(1)),
            DbIdentity::new(1, Scn(1)),
            generation,
        );
        JournalRule::new(&position, mining_start)
    });
    let mut writer = JournalWriter::new(JournalSettings::new(SERVER), generation.unwrap_or(0) + 1);
    let mut store = KafkaJournal::new(broker, &[], topic).expect("a Kafka journal");
    cdc_journal::rebuild(
        &mut store,
        RebuildFrom {
            server: SERVER,
            converter: JournalConverter::Tolerant,
            rule: rule.as_ref(),
            mining_start,
            load_dir: spill.path(),
        },
        &mut buffer,
        &mut writer,
    )
    .map(|_| ())
}

/// A record written as bytes: key, value.
type RawRecord<'a> = (&'a [u8], &'a [u8]);

/// A journal topic holding `records` (and, raw, `raw` after them), on partition 0.
fn journal_topic(
    broker: &str,
    test: &str,
    records: &[JournalRecord],
    raw: &[RawRecord<'_>],
) -> String {
    let topic = unique_topic(test);
    create_compacted_topic(broker, &[], &topic, 1).expect("the journal topic");
    let written: Vec<EncodedRecord> = records
        .iter()
        .map(|r| EncodedRecord::of(r, false))
        .collect();
    let mut journal = KafkaJournal::new(broker, &[], &topic).expect("a Kafka journal");
    journal.write(&written).expect("the journal written");
    if !raw.is_empty() {
        let producer: BaseProducer = client_config(broker, &[])
            .set("enable.idempotence", "true")
            .create()
            .expect("a producer");
        for (key, value) in raw {
            producer
                .send(
                    BaseRecord::to(&topic)
                        .partition(0)
                        .key(*key)
                        .payload(*value),
                )
                .map_err(|(e, _)| e)
                .expect("send");
        }
        producer.flush(Duration::from_secs(30)).expect("flush");
    }
    topic
}

/// A chunk whose payload's last byte is flipped: its CRC32 fails.
fn damaged_chunk(tx: ConXid, number: u32) -> JournalRecord {
    let mut record = chunk(SERVER, tx, number, 1, 3, 100);
    if let Some(chunk) = record.chunk.as_mut() {
        let chunk = Arc::make_mut(chunk);
        let last = chunk.payload.len() - 1;
        chunk.payload[last] ^= 0xff;
    }
    record
}

/// `journal inspect`'s verdict is the connector's: each journal is inspected, and rebuilt by
/// the connector's own rebuild from the same topic; a restart stops (CDC-4002) exactly when
/// the rebuild fails, at a restart and at a first start.
#[test]
fn the_verdict_is_what_the_connectors_rebuild_does() {
    let Some(broker) = broker() else { return };
    let (t1, t2) = (tx(1), tx(2));
    let whole = || {
        vec![
            chunk(SERVER, t1, 0, 1, 2, 100),
            chunk(SERVER, t1, 1, 1, 2, 100),
            chunk(SERVER, t2, 0, 1, 1, 100),
        ]
    };
    let mut gap = whole();
    gap.push(chunk(SERVER, t1, 3, 1, 1, 100));
    let mut damaged = whole();
    damaged.push(damaged_chunk(t2, 1));
    // a chunk written by a start that never committed an offset (generation 2), damaged
    let mut newer = whole();
    let mut unacknowledged = damaged_chunk(t2, 1);
    unacknowledged.key.generation = 2;
    newer.push(unacknowledged);
    let journals: [(&str, Vec<JournalRecord>, &[RawRecord<'_>]); 5] = [
        ("whole", whole(), &[]),
        ("gap", gap, &[]),
        ("damaged", damaged, &[]),
        ("newer", newer, &[]),
        ("badkey", whole(), &[(b"not a key", b"{}")]),
    ];
    for (name, records, raw) in journals {
        let topic = journal_topic(&broker, name, &records, raw);
        let configured = config(&[
            ("cdc.txjournal.topic", &topic),
            ("cdc.kafka.bootstrap.servers", &broker),
        ]);
        for (acknowledged, generation) in [
            (Acknowledged::Generation(1), Some(1)),
            (Acknowledged::NoOffset, None),
        ] {
            let report = inspect_acknowledged(&configured, None, acknowledged)
                .expect("the journal inspected");
            let rebuilt = connector_rebuild(&broker, &topic, generation);
            if let Err(stop) = &rebuilt {
                assert_eq!(stop.code(), CdcCode::JournalCorruption, "{name}: {stop}");
            }
            assert_eq!(
                report.restart() == Restart::Stops,
                rebuilt.is_err(),
                "{name}, {acknowledged:?}: the rebuild gave {rebuilt:?}\n{}",
                report.render_text()
            );
            if generation.is_none() && rebuilt.is_ok() {
                assert_eq!(report.restart(), Restart::FirstStart, "{name}");
            }
        }
    }
}

/// `journal inspect` through the binary: exit 1 and the status in the JSON when a restart
/// would stop, 0 when it would rebuild cleanly. The connector's REST API does not answer
/// (`--connect` to a closed port): the generations are listed without being judged.
#[test]
fn the_exit_status_says_whether_a_restart_would_stop() {
    let Some(broker) = broker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = |topic: &str, json: bool| {
        let file = dir.path().join("connector.properties");
        std::fs::write(
            &file,
            format!(
                "name=journal-exit\ncdc.source=sim\ncdc.topic.prefix={SERVER}\n\
                 cdc.tables.include=.*\ncdc.txjournal.topic={topic}\n\
                 cdc.kafka.bootstrap.servers={broker}\n"
            ),
        )
        .unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_oracle-cdc-admin"));
        command
            .args([
                "journal",
                "inspect",
                "--connect",
                "http://127.0.0.1:1",
                "--config",
            ])
            .arg(&file);
        if json {
            command.arg("--json");
        }
        let output = command.output().unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (t1, t2) = (tx(1), tx(2));
    let clean = journal_topic(
        &broker,
        "exitclean",
        &[
            chunk(SERVER, t1, 0, 1, 2, 100),
            chunk(SERVER, t1, 1, 1, 2, 100),
        ],
        &[],
    );
    let (code, out) = run(&clean, true);
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["restart"]["status"], "rebuilds", "{json}");
    assert_eq!(json["restart"]["code"], serde_json::Value::Null, "{json}");
    assert_eq!(json["offset_stored"], serde_json::Value::Null, "{json}");
    let (code, out) = run(&clean, false);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("restart: rebuilds 1 open transaction(s)"),
        "{out}"
    );

    // chunk 1 of t2 missing
    let gapped = journal_topic(
        &broker,
        "exitgap",
        &[
            chunk(SERVER, t1, 0, 1, 2, 100),
            chunk(SERVER, t2, 0, 1, 1, 100),
            chunk(SERVER, t2, 2, 1, 1, 100),
        ],
        &[],
    );
    let (code, out) = run(&gapped, true);
    assert_eq!(code, 1, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["restart"]["status"], "stops", "{json}");
    assert_eq!(json["restart"]["code"], "CDC-4002", "{json}");
    let stopping: Vec<&serde_json::Value> = json["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["stops_restart"] == true)
        .collect();
    assert_eq!(stopping.len(), 1, "{json}");
    assert_eq!(stopping[0]["xid"], t2.xid.to_string());
    let (code, out) = run(&gapped, false);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("a restart stops with CDC-4002 at: {t2}")),
        "{out}"
    );
    assert!(
        out.contains("restart: [CDC-4002]") && out.contains("Runbook:"),
        "{out}"
    );
}
