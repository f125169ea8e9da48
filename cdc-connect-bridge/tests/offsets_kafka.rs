//! The Kafka Connect-format offset store against a real Kafka-protocol broker.
//!
//! Needs `CDC_TEST_BROKER` (`eval "$(scripts/tansu.sh start)"`). Without it the tests print why
//! and pass, except under CI (`CI` set), where a missing broker is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use cdc_connect_bridge::kafka::offsets::KafkaOffsetStore;

use crate::e2e_support::OwnBroker;
use cdc_offset::{Position, codec};
use rdkafka::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

const CONNECTOR: &str = "oracle-cdc-test";
const PREFIX: &str = "cdc";

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
                 `eval \"$(scripts/tansu.sh start)\"`)"
            );
            None
        }
    }
}

/// A topic no other test (or earlier run against the same broker) uses.
fn unique_topic(test: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "offsets-{test}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// An offset text from `cdc-offset`'s golden files.
fn golden(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../cdc-offset/tests/golden")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim_end()
        .to_owned()
}

fn open(broker: &str, topic: &str) -> KafkaOffsetStore {
    KafkaOffsetStore::open_with_timeout(
        broker,
        topic,
        CONNECTOR,
        PREFIX,
        &[],
        Duration::from_secs(20),
    )
    .unwrap_or_else(|e| panic!("open {topic}: {e}"))
}

/// Produces one raw record, as another writer (a Connect worker, an operator's tool) would.
fn produce_raw(broker: &str, topic: &str, key: &str, value: Option<&str>) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker)
        .create()
        .unwrap();
    let mut record = BaseRecord::to(topic).key(key);
    if let Some(value) = value {
        record = record.payload(value);
    }
    producer.send(record).map_err(|(e, _)| e).unwrap();
    producer.flush(Duration::from_secs(20)).unwrap();
}

fn latest_text(store: &KafkaOffsetStore) -> Option<String> {
    store.read_latest().unwrap().map(|p| p.to_json())
}

#[test]
fn an_empty_topic_has_no_offset_and_a_written_one_reads_back_byte_equal() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("roundtrip");
    let store = open(&broker, &topic);
    assert_eq!(store.key(), r#"["oracle-cdc-test",{"server":"cdc"}]"#);
    assert_eq!(latest_text(&store), None);

    let text = golden("full.json");
    let position = Position::from_json(&text).unwrap();
    store.write(&position).unwrap();
    let read = store.read_latest().unwrap().expect("an offset was written");
    assert_eq!(read, position);
    assert_eq!(read.to_json(), text);
}

#[test]
fn the_latest_write_wins() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("latest");
    let store = open(&broker, &topic);
    let first = Position::from_json(&golden("first_start.json")).unwrap();
    let second = Position::from_json(&golden("full.json")).unwrap();
    store.write(&first).unwrap();
    assert_eq!(latest_text(&store), Some(first.to_json()));
    store.write(&second).unwrap();
    assert_eq!(latest_text(&store), Some(second.to_json()));
    store.write(&first).unwrap();
    assert_eq!(latest_text(&store), Some(first.to_json()));
}

#[test]
fn only_an_at_least_once_task_marks_its_offset_with_its_window() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("window");
    let store = open(&broker, &topic);
    let position = Position::from_json(&golden("full.json")).unwrap();
    store.write_delivered(&position, 32_000).unwrap();
    let stored = store.read_latest_stored().unwrap().expect("written");
    assert_eq!(stored.position, position);
    assert_eq!(stored.delivered_window, Some(32_000));
    // an operator's edit (PATCH /offsets) after it carries no window: a rewind is delivered
    // again in full
    store.write(&position).unwrap();
    let stored = store.read_latest_stored().unwrap().expect("written");
    assert_eq!(stored.delivered_window, None);
}

#[test]
fn a_restarted_store_reads_what_the_first_wrote() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("restart");
    let text = golden("full.json");
    {
        let store = open(&broker, &topic);
        store.write(&Position::from_json(&text).unwrap()).unwrap();
    }
    // The topic exists now: opening again must not fail on it.
    let restarted = open(&broker, &topic);
    assert_eq!(latest_text(&restarted), Some(text));
}

#[test]
fn unknown_fields_written_by_another_writer_survive_read_and_write() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("unknown");
    let store = open(&broker, &topic);
    let text = golden("extra_fields.json");
    produce_raw(
        &broker,
        &topic,
        &codec::offsets_topic_key(CONNECTOR, PREFIX),
        Some(&text),
    );
    let read = store
        .read_latest()
        .unwrap()
        .expect("the raw offset is read");
    assert_eq!(read.to_json(), text);
    store.write(&read).unwrap();
    assert_eq!(latest_text(&store), Some(text));
}

#[test]
fn other_connectors_are_skipped_and_a_tombstone_deletes() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("tombstone");
    let store = open(&broker, &topic);
    let text = golden("full.json");
    store.write(&Position::from_json(&text).unwrap()).unwrap();

    let other = golden("first_start.json");
    produce_raw(
        &broker,
        &topic,
        &codec::offsets_topic_key("another-connector", PREFIX),
        Some(&other),
    );
    produce_raw(
        &broker,
        &topic,
        &codec::offsets_topic_key(CONNECTOR, "another-prefix"),
        Some(&other),
    );
    // A Connect worker's key with other spacing is still this connector's.
    produce_raw(
        &broker,
        &topic,
        r#"[ "oracle-cdc-test", { "server": "cdc" } ]"#,
        Some(&other),
    );
    assert_eq!(latest_text(&store), Some(other.clone()));
    store.write(&Position::from_json(&text).unwrap()).unwrap();
    assert_eq!(latest_text(&store), Some(text));

    store.delete().unwrap();
    assert_eq!(latest_text(&store), None);
}

#[test]
fn an_existing_topic_that_is_not_compacted_is_refused() {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;

    let Some(broker) = broker() else { return };
    let topic = unique_topic("deleting");
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker)
        .create()
        .unwrap();
    let new_topic =
        NewTopic::new(&topic, 1, TopicReplication::Fixed(1)).set("cleanup.policy", "delete");
    let created = futures_block_on(admin.create_topics([&new_topic], &AdminOptions::new()));
    assert!(created.unwrap().iter().all(Result::is_ok));
    let error = KafkaOffsetStore::open(&broker, &topic, CONNECTOR, PREFIX, &[]).unwrap_err();
    assert!(
        matches!(
            error,
            cdc_connect_bridge::kafka::offsets::OffsetStoreError::NotCompacted { .. }
        ),
        "{error}"
    );
}

/// Drives an admin future: the admin client's background thread completes it.
fn futures_block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(std::sync::Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[test]
fn a_bad_offset_is_a_typed_error() {
    let Some(broker) = broker() else { return };
    let topic = unique_topic("bad");
    let store = open(&broker, &topic);
    produce_raw(
        &broker,
        &topic,
        &codec::offsets_topic_key(CONNECTOR, PREFIX),
        Some(r#"{"v":99}"#),
    );
    let error = store.read_latest().unwrap_err();
    assert!(
        matches!(
            error,
            cdc_connect_bridge::kafka::offsets::OffsetStoreError::BadOffset { .. }
        ),
        "{error}"
    );
}

#[test]
fn a_rejected_client_property_does_not_show_its_value() {
    let Some(broker) = broker() else { return };
    let secret = "s3cr3t-do-not-print";
    let cases: [&[(&str, &str)]; 3] = [
        &[("sasl.passwrd", secret)],
        &[("security.protocol", secret)],
        &[
            ("security.protocol", "sasl_plaintext"),
            ("sasl.mechanism", secret),
        ],
    ];
    for case in cases {
        let props: Vec<(String, String)> = case
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let error =
            KafkaOffsetStore::open(&broker, &unique_topic("props"), CONNECTOR, PREFIX, &props)
                .unwrap_err();
        let shown = format!("{error} / {error:?}");
        eprintln!("{shown}");
        assert!(!shown.contains(secret), "{shown}");
    }
}

#[test]
fn the_store_debug_does_not_show_client_properties() {
    let Some(broker) = broker() else { return };
    let secret = "s3cr3t-do-not-print";
    let props = vec![("client.id".to_owned(), secret.to_owned())];
    let store =
        KafkaOffsetStore::open(&broker, &unique_topic("debug"), CONNECTOR, PREFIX, &props).unwrap();
    let shown = format!("{store:?}");
    assert!(!shown.contains(secret), "{shown}");
}

/// `GET /connectors/<name>/offsets` shows the stored offset as it is, as Connect does: one
/// this version cannot start from (written by a newer version, `v` 2) is shown for the
/// operator to read and correct, not answered with a 500.
#[test]
fn get_offsets_shows_an_offset_this_version_cannot_use() {
    use cdc_connect_bridge::operator::connector::Connector;
    use cdc_connect_bridge::operator::control::ConnectorControl;

    let Some(broker) = broker() else { return };
    let topic = unique_topic("get-newer");
    let given = cdc_core::config::Config::from_pairs([
        ("name", CONNECTOR),
        ("cdc.source", "sim"),
        ("bootstrap.servers", broker.as_str()),
        ("offset.storage.topic", topic.as_str()),
        ("cdc.topic.prefix", PREFIX),
        ("cdc.tables.include", r"APP\..*"),
    ]);
    let config = given.validate().unwrap();
    let connector = Connector::new(config, &given, "127.0.0.1:8083".to_owned());
    assert_eq!(connector.offsets().unwrap(), []);

    let store = open(&broker, &topic);
    let newer = r#"{"v":2,"resume_scn":4711000,"dbid":1234567890,"resetlogs_scn":1,"journal_generation":7,"schema_epoch":0,"thread_marks":"1:0x000059.0000d5ff.0010:9"}"#;
    produce_raw(&broker, &topic, store.key(), Some(newer));
    assert!(
        store.read_latest().is_err(),
        "this version cannot start from it"
    );

    let shown = connector.offsets().unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].partition, codec::partition(PREFIX));
    let wanted: serde_json::Value = serde_json::from_str(newer).unwrap();
    assert_eq!(shown[0].offset.as_ref(), wanted.as_object());

    // a tombstone: no offset
    produce_raw(&broker, &topic, store.key(), None);
    assert_eq!(connector.offsets().unwrap(), []);
}

/// A broker that stops answering: an offset write fails within about the store's timeout,
/// naming the topic, instead of waiting for ever. The store stops waiting at its timeout (no
/// delivery report, what happened in every run here); librdkafka's own message timeout, set
/// to the same bound, could report the record timed out first.
#[test]
fn a_write_to_a_broker_that_stopped_answering_fails_within_its_timeout() {
    use cdc_connect_bridge::kafka::KafkaFailure;
    use cdc_connect_bridge::kafka::offsets::OffsetStoreError;
    use rdkafka::error::{KafkaError, RDKafkaErrorCode};

    if broker().is_none() {
        return;
    }
    let Some(own) = OwnBroker::start() else {
        return;
    };
    let topic = unique_topic("silent");
    let position = Position::from_json(&golden("full.json")).unwrap();
    // the topic made and a write that works while the broker answers
    open(&own.address, &topic).write(&position).unwrap();
    let timeout = Duration::from_secs(1);
    let store =
        KafkaOffsetStore::open_with(&own.address, &topic, CONNECTOR, PREFIX, &[], timeout, false)
            .unwrap();

    own.signal("-STOP");
    let started = std::time::Instant::now();
    let error = store
        .write(&position)
        .expect_err("nothing answered the write");
    let waited = started.elapsed();
    match &error {
        OffsetStoreError::NoDeliveryReport { topic: t, waited } => {
            assert_eq!(t, &topic);
            assert_eq!(*waited, timeout);
        }
        OffsetStoreError::Client(KafkaFailure::NotDelivered {
            topic: t,
            source: KafkaError::MessageProduction(RDKafkaErrorCode::MessageTimedOut),
        }) => assert_eq!(t, &topic),
        other => panic!("unexpected error: {other}"),
    }
    assert!(error.to_string().contains(&topic), "{error}");
    // a broker that does not answer is retried, not a stop
    let stop = cdc_core::CdcError::from(error);
    assert_eq!(stop.code(), cdc_core::CdcCode::KafkaUnavailable, "{stop}");
    assert!(stop.is_retried(), "{stop}");
    assert!(waited >= timeout / 2, "gave up after {waited:?}");
    assert!(
        waited < timeout + Duration::from_secs(5),
        "waited {waited:?}"
    );
}
