//! The contract every journal store passes ([`contract`]): `MemoryJournal` always, and
//! `KafkaJournal` against a real Kafka-protocol broker, with what only the Kafka store has to
//! get right (a topic not yet created, several partitions, transaction markers, an unreachable
//! broker, secrets in client properties).
//!
//! The Kafka tests need `CDC_TEST_BROKER` (`eval "$(scripts/tansu.sh start)"`). Without it they
//! print why and pass, except under CI (`CI` set), where a missing broker is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use cdc_buffer::codec::{FrameRef, append_frame};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{
    CdcCode, CdcError, ChangeEvent, ConId, ConXid, RedoAddr, RsId, Scn, TableId, Value, Xid,
};
use cdc_journal::format::read_payload;
use cdc_journal::kafka::{KafkaJournal, client_config};
use cdc_journal::{
    Chunk, ChunkMeta, EncodedRecord, JournalConverter, JournalKey, JournalRecord, JournalStore,
    MemoryJournal, PayloadBuilder, live_keys,
};
use cdc_offset::RedoMark;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

const SERVER: &str = "ORCL";

// ---------------------------------------------------------------------------------------------
// The contract

/// Where the contract gets its stores.
trait Stores {
    /// A new, empty store for the case `case`.
    fn fresh(&mut self, case: &str) -> Box<dyn JournalStore>;
    /// Another handle to the store [`Stores::fresh`] made last (the same topic, the same list).
    fn again(&mut self) -> Box<dyn JournalStore>;
}

/// A record as a read visited it, copied.
struct ReadBack {
    offset: i64,
    key: Vec<u8>,
    value: Option<Vec<u8>>,
}

/// Every record of `store`, as it reads them.
fn read(store: &mut dyn JournalStore) -> Vec<ReadBack> {
    let mut records = Vec::new();
    store
        .read_all(&mut |record| {
            records.push(ReadBack {
                offset: record.offset,
                key: record.key.expect("every journal record has a key").to_vec(),
                value: record.value.map(<[u8]>::to_vec),
            });
            Ok(())
        })
        .expect("read_all");
    records
}

/// Checks that `read` holds exactly `written`, in order, at increasing offsets.
fn assert_reads_back(read: &[ReadBack], written: &[EncodedRecord]) {
    assert_eq!(read.len(), written.len(), "records read back");
    for (i, (back, record)) in read.iter().zip(written).enumerate() {
        assert!(back.key == record.key, "record {i}: the key differs");
        assert!(back.value == record.value, "record {i}: the value differs");
    }
    for pair in read.windows(2) {
        let (before, after) = (pair[0].offset, pair[1].offset);
        assert!(before < after, "offsets {before} then {after}");
    }
}

/// The contract of [`JournalStore`], each case on a fresh store.
fn contract(stores: &mut dyn Stores) {
    // an empty store reads nothing
    let mut store = stores.fresh("empty");
    assert!(
        read(store.as_mut()).is_empty(),
        "an empty store read records"
    );

    // records come back in order, byte for byte: chunks small and large, with and without the
    // schema envelope, and a tombstone, over two writes
    let mut store = stores.fresh("roundtrip");
    let large = chunk(tx(1), 0, 1, 512 << 10);
    let written = vec![
        EncodedRecord::of(&large, true),
        EncodedRecord::of(&chunk(tx(1), 1, 1, 2 << 10), true),
        EncodedRecord::of(&chunk(tx(2), 0, 1, 300 << 10), false),
        EncodedRecord::of(&JournalRecord::tombstone(tx_key(tx(3), 0, 1)), true),
    ];
    store.write(&written[..2]).expect("first write");
    store.write(&written[2..]).expect("second write");
    let back = read(store.as_mut());
    assert_reads_back(&back, &written);
    assert!(
        back[3].value.is_none(),
        "the tombstone read back with a value"
    );
    assert!(
        back[0].value.as_ref().is_some_and(|v| v.len() > 512 << 10),
        "the large chunk's value is not large"
    );
    // the large chunk reads as the chunk written, its frames checked
    let read_chunk = JournalConverter::Tolerant
        .chunk(back[0].value.as_deref().expect("a value"))
        .expect("the large chunk reads");
    assert_eq!(Some(&read_chunk), large.chunk.as_deref());
    let frames = read_payload(&read_chunk.payload, |_, _| Ok(())).expect("its frames check");
    assert_eq!(u64::from(frames), read_chunk.meta.events);
    assert_eq!(
        JournalConverter::Tolerant
            .key(&back[0].key)
            .expect("its key"),
        large.key
    );

    // live_keys: chunks, then tombstones for some of them, leave exactly the others
    let mut store = stores.fresh("live");
    let chunks = [
        (tx(10), 0),
        (tx(10), 1),
        (tx(11), 0),
        (tx(12), 0),
        (tx(12), 1),
    ];
    let records: Vec<EncodedRecord> = chunks
        .iter()
        .map(|(tx, n)| EncodedRecord::of(&chunk(*tx, *n, 2, 4 << 10), true))
        .collect();
    store.write(&records).expect("write the chunks");
    let ended = [(tx(10), 0), (tx(10), 1), (tx(12), 1)];
    let tombstones: Vec<EncodedRecord> = ended
        .iter()
        .map(|(tx, n)| EncodedRecord::of(&JournalRecord::tombstone(tx_key(*tx, *n, 2)), true))
        .collect();
    store.write(&tombstones).expect("write the tombstones");
    let live = live_keys(store.as_mut(), JournalConverter::Tolerant).expect("live_keys");
    assert_eq!(live, vec![tx_key(tx(11), 0, 2), tx_key(tx(12), 0, 2)]);

    // a second read sees everything written before it
    let mut store = stores.fresh("reread");
    let first: Vec<EncodedRecord> = (0..3)
        .map(|n| EncodedRecord::of(&chunk(tx(20), n, 1, 8 << 10), true))
        .collect();
    store.write(&first).expect("write");
    assert_reads_back(&read(store.as_mut()), &first);
    let second: Vec<EncodedRecord> = (3..5)
        .map(|n| EncodedRecord::of(&chunk(tx(20), n, 1, 8 << 10), true))
        .collect();
    store.write(&second).expect("write again");
    let all: Vec<EncodedRecord> = first.iter().chain(&second).cloned().collect();
    assert_reads_back(&read(store.as_mut()), &all);

    // records written while a read goes on need not be read, but the read ends, and a read
    // after it sees them
    let mut store = stores.fresh("growing");
    let mut writer = stores.again();
    let before: Vec<EncodedRecord> = (0..3)
        .map(|n| EncodedRecord::of(&chunk(tx(30), n, 1, 4 << 10), true))
        .collect();
    let during: Vec<EncodedRecord> = (3..6)
        .map(|n| EncodedRecord::of(&chunk(tx(30), n, 1, 4 << 10), true))
        .collect();
    store.write(&before).expect("write");
    let mut seen = Vec::new();
    store
        .read_all(&mut |record| {
            if seen.is_empty() {
                writer.write(&during)?;
            }
            seen.push(record.key.expect("a key").to_vec());
            Ok(())
        })
        .expect("a read while the store grows");
    assert!(
        (before.len()..=before.len() + during.len()).contains(&seen.len()),
        "{} records seen",
        seen.len()
    );
    let expected: Vec<EncodedRecord> = before.iter().chain(&during).cloned().collect();
    for (i, key) in seen.iter().enumerate() {
        assert!(key == &expected[i].key, "record {i} of the growing read");
    }
    assert_reads_back(&read(store.as_mut()), &expected);

    // the first error of the visitor ends the read and is its result; the store still reads
    let mut store = stores.fresh("visit-error");
    let records: Vec<EncodedRecord> = (0..3)
        .map(|n| EncodedRecord::of(&chunk(tx(40), n, 1, 1 << 10), true))
        .collect();
    store.write(&records).expect("write");
    let mut visits = 0;
    let error = store
        .read_all(&mut |_| {
            visits += 1;
            if visits == 2 {
                return Err(CdcError::new(
                    CdcCode::JournalCorruption,
                    "stop at the second",
                ));
            }
            Ok(())
        })
        .expect_err("the visitor's error");
    assert_eq!(error.code(), CdcCode::JournalCorruption);
    assert_eq!(error.message(), "stop at the second");
    assert_eq!(visits, 2, "the read went on after the visitor's error");
    assert_reads_back(&read(store.as_mut()), &records);
}

// ---------------------------------------------------------------------------------------------
// Realistic records

fn tx(n: u16) -> ConXid {
    ConXid::new(ConId(3), Xid::new(n, 7, 1000 + u32::from(n)))
}

fn tx_key(tx: ConXid, chunk: u32, generation: u64) -> JournalKey {
    JournalKey {
        server: SERVER.to_owned(),
        tx,
        chunk,
        generation,
    }
}

fn addr(n: u64) -> RedoAddr {
    let block = u32::try_from(n).expect("a small address");
    RedoAddr::new(RsId::new(42, block + 1, 16), n).expect("an address")
}

/// Chunk `number` of `tx`: change frames of rows of about 4 KiB until the payload holds at
/// least `bytes`, with the metadata those frames give.
fn chunk(tx: ConXid, number: u32, generation: u64, bytes: usize) -> JournalRecord {
    let table = Arc::new(TableId::new("APP", "DOCS"));
    let mut payload = PayloadBuilder::new();
    let mut marks = Vec::new();
    let mut row = 0u64;
    while payload.len() < bytes {
        let at = u64::from(number) * 10_000 + row;
        let event = ChangeEvent {
            scn: Scn(5_000_000 + at),
            addr: addr(at),
            change: RowChange {
                op: ChangeOp::Insert,
                table: Arc::clone(&table),
                schema_version: 1,
                before: None,
                after: Some(vec![
                    ColumnValue {
                        column: 0,
                        value: Value::Text(format!("{tx} row {row}")),
                    },
                    ColumnValue {
                        column: 1,
                        // bytes of every value, so a value damaged in transit shows
                        value: Value::Raw((0..4096u32).map(|i| (i ^ at as u32) as u8).collect()),
                    },
                ]),
                row_id: Some(format!("AAAR{at:012}")),
            },
        };
        append_frame(FrameRef::Change(&event), payload.frames_mut());
        payload.counted();
        marks.push(RedoMark::new(event.addr, event.scn));
        row += 1;
    }
    let events = u64::from(payload.count());
    JournalRecord {
        key: tx_key(tx, number, generation),
        chunk: Some(Arc::new(Chunk {
            meta: ChunkMeta {
                first: marks[0],
                last: marks[marks.len() - 1],
                first_captured: Some(RedoMark::new(addr(0), Scn(5_000_000))),
                events,
                undos: 0,
                start_scn: Some(Scn(4_999_999)),
                start_addr: Some(addr(0)),
                thread: 1,
                username: Some("APP".to_owned()),
                client_id: None,
                heap_undo: None,
            },
            payload: payload.finish(),
        })),
    }
}

// ---------------------------------------------------------------------------------------------
// The in-process store

#[derive(Default)]
struct Memory {
    last: MemoryJournal,
}

impl Stores for Memory {
    fn fresh(&mut self, _case: &str) -> Box<dyn JournalStore> {
        self.last = MemoryJournal::new();
        Box::new(self.last.clone())
    }

    fn again(&mut self) -> Box<dyn JournalStore> {
        Box::new(self.last.clone())
    }
}

#[test]
fn the_memory_journal_keeps_the_contract() {
    contract(&mut Memory::default());
}

// ---------------------------------------------------------------------------------------------
// The Kafka store

/// The broker under test, or `None` (the test prints why and passes) outside CI.
fn broker() -> Option<String> {
    match std::env::var("CDC_TEST_BROKER") {
        Ok(broker) if !broker.is_empty() => Some(broker),
        _ if std::env::var_os("CI").is_some() => panic!(
            "CDC_TEST_BROKER is not set: CI must start the test broker \
             (eval \"$(scripts/tansu.sh start)\") before these tests"
        ),
        _ => {
            eprintln!(
                "skipped: CDC_TEST_BROKER is not set (start one with \
                 eval \"$(scripts/tansu.sh start)\")"
            );
            None
        }
    }
}

/// A topic name no other test, nor an earlier run against the same broker, uses.
fn unique_topic(test: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "journal-{test}-{}-{millis}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn create_topic(broker: &str, topic: &str, partitions: i32) {
    cdc_journal::kafka::create_compacted_topic(broker, &[], topic, partitions)
        .unwrap_or_else(|e| panic!("creating {topic}: {e}"));
}

/// Stores on topics of the test broker, one new topic per case.
struct Kafka {
    broker: String,
    test: &'static str,
    topic: String,
}

impl Kafka {
    fn journal(&self) -> KafkaJournal {
        KafkaJournal::new(&self.broker, &[], &self.topic).expect("a Kafka journal")
    }
}

impl Stores for Kafka {
    fn fresh(&mut self, case: &str) -> Box<dyn JournalStore> {
        self.topic = unique_topic(&format!("{}-{case}", self.test));
        create_topic(&self.broker, &self.topic, 1);
        Box::new(self.journal())
    }

    fn again(&mut self) -> Box<dyn JournalStore> {
        Box::new(self.journal())
    }
}

#[test]
fn the_kafka_journal_keeps_the_contract() {
    let Some(broker) = broker() else { return };
    contract(&mut Kafka {
        broker,
        test: "contract",
        topic: String::new(),
    });
}

#[test]
fn a_topic_not_yet_created_is_an_empty_journal() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("absent");
    let mut journal = KafkaJournal::new(&broker, &[], &topic).expect("a Kafka journal");
    assert!(read(&mut journal).is_empty());
    // and reading it did not create it
    let consumer: BaseConsumer = client_config(&broker, &[])
        .set("allow.auto.create.topics", "false")
        .create()
        .expect("a consumer");
    let metadata = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("metadata");
    assert!(
        metadata.topics().iter().all(|t| t.name() != topic),
        "reading the journal created its topic"
    );
}

#[test]
fn every_partition_is_read_in_partition_order() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("partitions");
    create_topic(&broker, &topic, 3);
    let producer: BaseProducer = client_config(&broker, &[])
        .set("enable.idempotence", "true")
        .create()
        .expect("a producer");
    // written out of partition order: the read still goes partition by partition
    for (partition, n) in [(2, 0), (0, 0), (1, 0), (2, 1), (0, 1), (2, 2)] {
        let value = format!("p{partition}-r{n}");
        producer
            .send(
                BaseRecord::to(&topic)
                    .partition(partition)
                    .key("k")
                    .payload(&value),
            )
            .map_err(|(e, _)| e)
            .expect("send");
    }
    producer.flush(Duration::from_secs(30)).expect("flush");

    let mut journal = KafkaJournal::new(&broker, &[], &topic).expect("a Kafka journal");
    let values: Vec<String> = read(&mut journal)
        .into_iter()
        .map(|back| String::from_utf8(back.value.expect("a value")).expect("text"))
        .collect();
    assert_eq!(
        values,
        ["p0-r0", "p0-r1", "p1-r0", "p2-r0", "p2-r1", "p2-r2"]
    );
}

#[test]
fn records_of_a_committed_transaction_are_read_to_the_end() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("transaction");
    create_topic(&broker, &topic, 1);
    let producer: BaseProducer = client_config(&broker, &[])
        .set("transactional.id", unique_topic("journal-test-tx"))
        .create()
        .expect("a transactional producer");
    let timeout = Duration::from_secs(30);
    producer.init_transactions(timeout).expect("init");
    producer.begin_transaction().expect("begin");
    let records: Vec<EncodedRecord> = (0..3)
        .map(|n| EncodedRecord::of(&chunk(tx(50), n, 1, 2 << 10), true))
        .collect();
    for record in &records {
        producer
            .send(
                BaseRecord::<[u8], [u8]>::to(&topic)
                    .partition(0)
                    .key(record.key.as_slice())
                    .payload(record.value.as_deref().expect("a chunk")),
            )
            .map_err(|(e, _)| e)
            .expect("send");
    }
    producer.commit_transaction(timeout).expect("commit");

    // the commit marker after the last record is never delivered: the read must end anyway,
    // well before a read without progress would fail
    let mut journal = KafkaJournal::new(&broker, &[], &topic)
        .expect("a Kafka journal")
        .with_timeout(Duration::from_secs(10));
    assert_reads_back(&read(&mut journal), &records);
    // and a write after the transaction comes after it
    let later = vec![EncodedRecord::of(&chunk(tx(50), 3, 1, 2 << 10), true)];
    journal.write(&later).expect("write");
    let all: Vec<EncodedRecord> = records.iter().chain(&later).cloned().collect();
    assert_reads_back(&read(&mut journal), &all);
}

#[test]
fn the_record_producers_transactional_id_is_not_the_writers() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("txid");
    create_topic(&broker, &topic, 1);
    let props = vec![("transactional.id".to_owned(), unique_topic("records"))];
    let mut journal = KafkaJournal::new(&broker, &props, &topic)
        .expect("a Kafka journal")
        .with_timeout(Duration::from_secs(10));
    let records = vec![EncodedRecord::of(&chunk(tx(55), 0, 1, 2 << 10), true)];
    journal
        .write(&records)
        .expect("a write outside a transaction");
    assert_reads_back(&read(&mut journal), &records);
}

#[test]
fn an_unreachable_broker_is_retried() {
    // nothing listens on the discard port of the loopback address
    let mut journal = KafkaJournal::new("127.0.0.1:9", &[], "journal")
        .expect("a Kafka journal")
        .with_timeout(Duration::from_secs(2));
    let error = journal.read_all(&mut |_| Ok(())).expect_err("a read error");
    assert_eq!(error.code(), CdcCode::KafkaUnavailable, "{error}");
    assert!(error.is_retried(), "{error}");
    let record = EncodedRecord::of(&chunk(tx(60), 0, 1, 1 << 10), true);
    let error = journal.write(&[record]).expect_err("a write error");
    assert_eq!(error.code(), CdcCode::KafkaUnavailable, "{error}");
    assert!(error.is_retried(), "{error}");
}

#[test]
fn client_property_values_are_never_shown() {
    let secret = "hunter2-journal-secret";
    let props = vec![
        ("sasl.password".to_owned(), secret.to_owned()),
        ("sasl.username".to_owned(), "cdc".to_owned()),
    ];
    let journal = KafkaJournal::new("broker-1:9092", &props, "journal-topic").expect("a journal");
    let shown = format!("{journal:?}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(
        shown.contains("broker-1:9092") && shown.contains("journal-topic"),
        "{shown}"
    );

    // a value librdkafka rejects is not shown either: only the property's name
    let mut rejected = props.clone();
    rejected.push(("socket.timeout.ms".to_owned(), secret.to_owned()));
    let error = KafkaJournal::new("broker-1:9092", &rejected, "journal-topic")
        .expect_err("a rejected property");
    let shown = format!("{error} {error:?}");
    assert_eq!(error.code(), CdcCode::KafkaClientSetup, "{shown}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(shown.contains("socket.timeout.ms"), "{shown}");
}
