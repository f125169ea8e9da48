//! The connector's offsets in a Kafka Connect-format offsets topic (`offset.storage.topic`).
//!
//! Each offset is one record: key `["<connector name>",{"server":"<prefix>"}]`
//! ([`codec::offsets_topic_key`]), value the offset JSON ([`Position::to_json`]); a record
//! with a null value (a tombstone) means the offsets were deleted. The topic is compacted, so
//! the latest record of the key is the connector's offset — exactly what a Kafka Connect worker
//! writes and reads, so Connect tooling can read and edit it.
//!
//! It is synchronous: rdkafka's [`BaseProducer`] and [`BaseConsumer`], with each call bounded by
//! [`KafkaOffsetStore::timeout`]. Reading uses assigned partitions, never a consumer group (group
//! joins are slow and a group is not needed to read a whole topic).
//!
//! Client properties (`client_props`) may carry secrets (`sasl.password`, `ssl.key.password`):
//! neither the store's `Debug` nor any error shows a property value.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use cdc_offset::{OffsetError, Position, codec};
use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, DeliveryResult, Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};
use rdkafka::{ClientContext, Offset, TopicPartitionList};
use serde_json::{Map, Value as Json};

use crate::kafka::{KafkaFailure, client_config};
use cdc_journal::kafka::ClosingConsumer;

/// How long one store operation may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Header of an offset record that an at-least-once task wrote after its records were
/// acknowledged; its value is the task's window (below). Offsets written any other way (an
/// exactly-once task, `PATCH` or `DELETE /offsets`, Kafka Connect) do not carry it.
pub const DELIVERED_WINDOW_HEADER: &str = "cdc.delivered.window";

/// This connector's latest offset and how it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredOffset {
    pub position: Position,
    /// `Some(window)` when an at-least-once task wrote it: at most `window` engine records
    /// were sent after it. They may already be in their topics, and a restart looks for them
    /// there rather than send them again. `None` for an offset placed by an operator (a
    /// deliberate rewind delivers everything after it again) or by an exactly-once task.
    pub delivered_window: Option<u64>,
}

/// The latest offset record of a connector's key: where it is, its value (`None`: a
/// tombstone) and the at-least-once window header.
struct LatestRecord {
    partition: i32,
    offset: i64,
    value: Option<Vec<u8>>,
    window: Option<u64>,
}

/// Why the offsets topic could not be opened, read or written. No variant carries a client
/// property's value.
#[derive(Debug, thiserror::Error)]
pub enum OffsetStoreError {
    /// A client could not be created or a call failed: the worker's one Kafka error type.
    #[error(transparent)]
    Client(#[from] KafkaFailure),
    /// The broker could not describe the offsets topic's configuration.
    #[error("could not read the configuration of offsets topic {topic}: {code}")]
    DescribeTopic {
        topic: String,
        code: RDKafkaErrorCode,
    },
    /// The offsets topic exists but is not compacted: old offsets would be deleted by retention
    /// (Kafka Connect refuses such a topic too).
    #[error(
        "offsets topic {topic} has cleanup.policy={policy}; it must be compact \
         (kafka-configs --alter --entity-type topics --entity-name {topic} \
         --add-config cleanup.policy=compact)"
    )]
    NotCompacted { topic: String, policy: String },
    /// The topic (the offsets topic, or one read at start) did not appear, or has no
    /// partitions.
    #[error("topic {topic} has no partitions after {waited:?}")]
    NoPartitions { topic: String, waited: Duration },
    /// Reading the topic to its end took longer than the timeout.
    #[error(
        "reading topic {topic} did not reach its end within {waited:?} \
         ({pending} partitions left)"
    )]
    ReadTimeout {
        topic: String,
        waited: Duration,
        pending: usize,
    },
    /// The latest offset record of this connector is not a valid offset.
    #[error("offset record at {topic}/{partition}@{offset} is not a valid offset: {source}")]
    BadOffset {
        topic: String,
        partition: i32,
        offset: i64,
        #[source]
        source: OffsetError,
    },
    /// The latest offset record of this connector has a value that is not UTF-8.
    #[error("offset record at {topic}/{partition}@{offset} is not UTF-8 text")]
    NotText {
        topic: String,
        partition: i32,
        offset: i64,
    },
    /// No delivery report arrived within the timeout.
    #[error("no delivery report for the offset record to {topic} within {waited:?}")]
    NoDeliveryReport { topic: String, waited: Duration },
}

impl OffsetStoreError {
    /// Wraps a client error, dropping the value of a rejected property.
    fn kafka(during: &'static str, error: KafkaError) -> OffsetStoreError {
        OffsetStoreError::Client(KafkaFailure::kafka(during, error))
    }

    /// Wraps a client creation error, hiding the values of `props` in librdkafka's message.
    fn creation(
        during: &'static str,
        error: KafkaError,
        props: &[(String, String)],
    ) -> OffsetStoreError {
        OffsetStoreError::Client(KafkaFailure::creation(during, error, props))
    }
}

/// `message` with every non-empty value of `props` replaced by `***`, longest first.
pub(crate) fn redact(mut message: String, props: &[(String, String)]) -> String {
    let mut values: Vec<&str> = props
        .iter()
        .map(|(_, value)| value.as_str())
        .filter(|value| !value.is_empty())
        .collect();
    values.sort_by_key(|value| std::cmp::Reverse(value.len()));
    for value in values {
        message = message.replace(value, "***");
    }
    message
}

type Delivery = Arc<Mutex<Option<Result<(i32, i64), KafkaError>>>>;

/// How often a writer waiting for its offset record's delivery report serves the reports.
const REPORT_POLL: Duration = Duration::from_micros(200);

/// Records the delivery report of each offset record in the slot it was sent with.
struct DeliveryContext;

impl ClientContext for DeliveryContext {}

impl ProducerContext for DeliveryContext {
    type DeliveryOpaque = Delivery;

    fn delivery(&self, result: &DeliveryResult<'_>, slot: Delivery) {
        let outcome = match result {
            Ok(message) => Ok((message.partition(), message.offset())),
            Err((error, _)) => Err(error.clone()),
        };
        *slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(outcome);
    }
}

/// A connector's offsets in a Kafka Connect-format offsets topic.
pub struct KafkaOffsetStore {
    topic: String,
    connector: String,
    prefix: String,
    key: String,
    /// The client properties' values, to hide them in client creation errors. Never shown.
    secrets: Vec<(String, String)>,
    /// The consumer configuration, properties applied; never shown (it may hold secrets).
    consumer_config: ClientConfig,
    producer: BaseProducer<DeliveryContext>,
    timeout: Duration,
}

impl fmt::Debug for KafkaOffsetStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaOffsetStore")
            .field("topic", &self.topic)
            .field("connector", &self.connector)
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl KafkaOffsetStore {
    /// Connects to `bootstrap` and makes sure the offsets topic `topic` exists, creating it when
    /// absent (1 partition, `cleanup.policy=compact`, the broker's default replication
    /// factor). `connector` and `prefix` (`cdc.topic.prefix`) make the record key.
    /// `client_props` are librdkafka properties (security settings and the like) applied to
    /// every client; the store's own settings (idempotence, no auto commit) win over them.
    pub fn open(
        bootstrap: &str,
        topic: &str,
        connector: &str,
        prefix: &str,
        client_props: &[(String, String)],
    ) -> Result<KafkaOffsetStore, OffsetStoreError> {
        Self::open_with_timeout(
            bootstrap,
            topic,
            connector,
            prefix,
            client_props,
            DEFAULT_TIMEOUT,
        )
    }

    /// [`KafkaOffsetStore::open`] with another bound on each operation.
    pub fn open_with_timeout(
        bootstrap: &str,
        topic: &str,
        connector: &str,
        prefix: &str,
        client_props: &[(String, String)],
        timeout: Duration,
    ) -> Result<KafkaOffsetStore, OffsetStoreError> {
        Self::open_with(
            bootstrap,
            topic,
            connector,
            prefix,
            client_props,
            timeout,
            true,
        )
    }

    /// [`KafkaOffsetStore::open_with_timeout`]; with `manage_topic` false the topic is neither
    /// created nor checked: it must exist (a cluster without the admin API, such as the
    /// demo's mock cluster).
    pub fn open_with(
        bootstrap: &str,
        topic: &str,
        connector: &str,
        prefix: &str,
        client_props: &[(String, String)],
        timeout: Duration,
        manage_topic: bool,
    ) -> Result<KafkaOffsetStore, OffsetStoreError> {
        let base = client_config(bootstrap, client_props);

        if manage_topic {
            let admin: AdminClient<DefaultClientContext> = base.create().map_err(|e| {
                OffsetStoreError::creation("creating the admin client", e, client_props)
            })?;
            // a topic created here is compacted; one that was there is checked
            if !create_topic_if_absent(&admin, topic, timeout)? {
                check_compacted(&admin, topic, timeout)?;
            }
            cdc_journal::kafka::close_in_background(admin);
        }

        let mut producer_config = base.clone();
        producer_config
            .set("enable.idempotence", "true")
            .set("acks", "all")
            // The Java client's partitioner, so a key lands where a Connect worker puts it.
            .set("partitioner", "murmur2_random")
            .set("linger.ms", "0")
            .set("message.timeout.ms", millis(timeout));
        let producer: BaseProducer<DeliveryContext> = producer_config
            .create_with_context(DeliveryContext)
            .map_err(|e| OffsetStoreError::creation("creating the producer", e, client_props))?;

        let mut consumer_config = base;
        if consumer_config.get("group.id").is_none() {
            // librdkafka's assign needs a group id; the group is never joined nor committed to.
            consumer_config.set("group.id", format!("{connector}-offsets-reader"));
        }
        consumer_config
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("enable.partition.eof", "true")
            .set("auto.offset.reset", "earliest")
            .set("isolation.level", "read_committed")
            .set("allow.auto.create.topics", "false");

        let store = KafkaOffsetStore {
            topic: topic.to_owned(),
            connector: connector.to_owned(),
            prefix: prefix.to_owned(),
            key: codec::offsets_topic_key(connector, prefix),
            secrets: client_props.to_vec(),
            consumer_config,
            producer,
            timeout,
        };
        // The topic may take a moment to show in metadata after its creation.
        let consumer = store.consumer()?;
        store.partitions(&consumer, &store.topic)?;
        // The producer connects now rather than at the first write, which is on a task's path
        // to its first record: an at-least-once task sends nothing past that record until its
        // offset is written, and that first write took half a second on the test broker
        // (`cargo x bench snapshot`). A failure here only leaves the connection to the write.
        if let Err(error) =
            Producer::client(&store.producer).fetch_metadata(Some(&store.topic), timeout)
        {
            tracing::debug!(%error, "the offsets producer's first metadata request failed");
        }
        Ok(store)
    }

    /// The offsets topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The record key of this connector's offset.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The bound on each operation.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Reads the offsets topic from the beginning to its end and returns this connector's latest
    /// offset; `None` when there is none or the latest record is a tombstone (offsets deleted).
    /// Records of other connectors or prefixes are skipped.
    pub fn read_latest(&self) -> Result<Option<Position>, OffsetStoreError> {
        Ok(self.read_latest_stored()?.map(|stored| stored.position))
    }

    /// [`Self::read_latest`] with how the offset was written.
    pub fn read_latest_stored(&self) -> Result<Option<StoredOffset>, OffsetStoreError> {
        match self.read_latest_record()? {
            None | Some(LatestRecord { value: None, .. }) => Ok(None),
            Some(LatestRecord {
                partition,
                offset,
                value: Some(value),
                window,
            }) => {
                let text = String::from_utf8(value).map_err(|_| OffsetStoreError::NotText {
                    topic: self.topic.clone(),
                    partition,
                    offset,
                })?;
                Position::from_json(&text)
                    .map(|position| {
                        Some(StoredOffset {
                            position,
                            delivered_window: window,
                        })
                    })
                    .map_err(|source| OffsetStoreError::BadOffset {
                        topic: self.topic.clone(),
                        partition,
                        offset,
                        source,
                    })
            }
        }
    }

    /// This connector's latest offset as stored, the JSON object as it is: what Kafka Connect's
    /// `GET /connectors/<name>/offsets` shows. An offset this version cannot use (a newer
    /// `v`, a field out of range) is shown too, so an operator can read it and correct it
    /// with `PATCH`; only a value that is not a JSON object is an error. `None` when there is
    /// none or the latest record is a tombstone.
    pub fn read_latest_map(&self) -> Result<Option<Map<String, Json>>, OffsetStoreError> {
        let Some(LatestRecord {
            partition,
            offset,
            value: Some(value),
            ..
        }) = self.read_latest_record()?
        else {
            return Ok(None);
        };
        match serde_json::from_slice::<Json>(&value) {
            Ok(Json::Object(map)) => Ok(Some(map)),
            Ok(other) => Err(OffsetStoreError::BadOffset {
                topic: self.topic.clone(),
                partition,
                offset,
                source: OffsetError::NotAnObject {
                    found: json_kind(&other),
                },
            }),
            Err(source) => Err(OffsetStoreError::BadOffset {
                topic: self.topic.clone(),
                partition,
                offset,
                source: OffsetError::NotJson { source },
            }),
        }
    }

    /// The latest record of this connector's key, read from the beginning of the topic to its
    /// end.
    fn read_latest_record(&self) -> Result<Option<LatestRecord>, OffsetStoreError> {
        let mut latest: Option<LatestRecord> = None;
        self.scan(&self.topic, true, &mut |message| {
            if self.is_own_key(message.key()) {
                latest = Some(LatestRecord {
                    partition: message.partition(),
                    offset: message.offset(),
                    value: message.payload().map(<[u8]>::to_vec),
                    window: delivered_window(message),
                });
            }
        })?;
        Ok(latest)
    }

    /// Reads `topic` from its beginning to its end (the ends when the read starts), with the
    /// store's client settings (`read_committed`), handing each record to `visit` in order
    /// within its partition. `wait`: wait (within the timeout) for a topic not yet in the
    /// metadata, as one just created may be; else a missing topic reads as empty.
    pub fn scan(
        &self,
        topic: &str,
        wait: bool,
        visit: &mut dyn FnMut(&BorrowedMessage<'_>),
    ) -> Result<(), OffsetStoreError> {
        let started = Instant::now();
        let consumer = self.consumer()?;
        let partitions = match self.partitions(&consumer, topic) {
            Ok(partitions) => partitions,
            Err(OffsetStoreError::NoPartitions { .. }) if !wait => return Ok(()),
            Err(error) => return Err(error),
        };

        // Each partition to read, with its end (high watermark) at the start of the read.
        let mut ends = Vec::new();
        let mut assignment = TopicPartitionList::new();
        for partition in partitions {
            let (low, high) = consumer
                .fetch_watermarks(topic, partition, self.remaining(started))
                .map_err(|e| OffsetStoreError::kafka("fetching a topic's ends", e))?;
            if high > low {
                ends.push((partition, high));
                assignment
                    .add_partition_offset(topic, partition, Offset::Beginning)
                    .map_err(|e| OffsetStoreError::kafka("assigning partitions", e))?;
            }
        }
        if ends.is_empty() {
            return Ok(());
        }
        consumer
            .assign(&assignment)
            .map_err(|e| OffsetStoreError::kafka("assigning partitions", e))?;

        let mut pending: BTreeSet<i32> = ends.iter().map(|(partition, _)| *partition).collect();
        while !pending.is_empty() {
            let left = self.remaining(started);
            if left.is_zero() {
                return Err(OffsetStoreError::ReadTimeout {
                    topic: topic.to_owned(),
                    waited: self.timeout,
                    pending: pending.len(),
                });
            }
            match consumer.poll(left.min(Duration::from_millis(500))) {
                None => {}
                Some(Err(KafkaError::PartitionEOF(partition))) => {
                    pending.remove(&partition);
                }
                Some(Err(error)) => {
                    return Err(OffsetStoreError::kafka("reading a topic", error));
                }
                Some(Ok(message)) => {
                    visit(&message);
                    let partition = message.partition();
                    let end = ends
                        .iter()
                        .find(|(p, _)| *p == partition)
                        .map_or(i64::MAX, |(_, high)| *high);
                    if message.offset() + 1 >= end {
                        pending.remove(&partition);
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes `position` as this connector's offset and waits until the broker acknowledged it.
    pub fn write(&self, position: &Position) -> Result<(), OffsetStoreError> {
        self.send(Some(position.to_json().as_bytes()), None)
    }

    /// Writes `position` as an at-least-once task does once its records were acknowledged:
    /// marked with the task's `window`, the most engine records it may have sent after them
    /// ([`StoredOffset::delivered_window`]).
    pub fn write_delivered(
        &self,
        position: &Position,
        window: u64,
    ) -> Result<(), OffsetStoreError> {
        self.send(Some(position.to_json().as_bytes()), Some(window))
    }

    /// Writes a tombstone: the connector's offsets are deleted ([`Self::read_latest`] then
    /// returns `None`), as Connect's `DELETE /connectors/<name>/offsets` does.
    pub fn delete(&self) -> Result<(), OffsetStoreError> {
        self.send(None, None)
    }

    fn send(&self, value: Option<&[u8]>, window: Option<u64>) -> Result<(), OffsetStoreError> {
        let slot: Delivery = Arc::new(Mutex::new(None));
        let mut record =
            BaseRecord::with_opaque_to(&self.topic, Arc::clone(&slot)).key(self.key.as_bytes());
        if let Some(value) = value {
            record = record.payload(value);
        }
        let window = window.map(|w| w.to_string());
        if let Some(window) = &window {
            record = record.headers(OwnedHeaders::new().insert(Header {
                key: DELIVERED_WINDOW_HEADER,
                value: Some(window.as_bytes()),
            }));
        }
        self.producer
            .send(record)
            .map_err(|(error, _)| OffsetStoreError::kafka("sending an offset record", error))?;
        // Waits for this record's own delivery report, serving the reports that arrived every
        // REPORT_POLL. rdkafka's flush serves them in slices of 100 ms, so every offset write
        // took at least that long, and an at-least-once task sends nothing past its first
        // record until that record's offset is written. (A poll with a timeout below a
        // millisecond does not wait: it spins.)
        let deadline = Instant::now() + self.timeout;
        let outcome = loop {
            self.producer.poll(Duration::ZERO);
            let outcome = slot
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            if outcome.is_some() || Instant::now() >= deadline {
                break outcome;
            }
            std::thread::sleep(REPORT_POLL);
        };
        match outcome {
            Some(Ok(_)) => Ok(()),
            Some(Err(source)) => Err(KafkaFailure::NotDelivered {
                topic: self.topic.clone(),
                source,
            }
            .into()),
            None => Err(OffsetStoreError::NoDeliveryReport {
                topic: self.topic.clone(),
                waited: self.timeout,
            }),
        }
    }

    fn is_own_key(&self, key: Option<&[u8]>) -> bool {
        let Some(key) = key else { return false };
        if key == self.key.as_bytes() {
            return true;
        }
        // Another writer may have spaced the JSON differently.
        std::str::from_utf8(key)
            .ok()
            .and_then(codec::parse_offsets_topic_key)
            .is_some_and(|(connector, prefix)| connector == self.connector && prefix == self.prefix)
    }

    /// A consumer with the store's settings (`read_committed`, partition ends reported, no
    /// group joined) that does not wait for more records at a partition's end: what a restart
    /// reads the ends of the connector's topics with.
    pub(crate) fn reader(&self) -> Result<BaseConsumer, OffsetStoreError> {
        let mut config = self.consumer_config.clone();
        config.set("fetch.wait.max.ms", "10");
        config
            .create()
            .map_err(|e| OffsetStoreError::creation("creating the consumer", e, &self.secrets))
    }

    fn consumer(&self) -> Result<ClosingConsumer, OffsetStoreError> {
        self.consumer_config
            .create()
            .map(ClosingConsumer::new)
            .map_err(|e| OffsetStoreError::creation("creating the consumer", e, &self.secrets))
    }

    /// A topic's partitions, waiting (within the timeout) for it to show in metadata.
    fn partitions(
        &self,
        consumer: &BaseConsumer,
        topic: &str,
    ) -> Result<Vec<i32>, OffsetStoreError> {
        let started = Instant::now();
        loop {
            let metadata = consumer
                .fetch_metadata(Some(topic), self.remaining(started))
                .map_err(|e| OffsetStoreError::kafka("fetching a topic's metadata", e))?;
            let partitions: Vec<i32> = metadata
                .topics()
                .iter()
                .filter(|t| t.name() == topic && t.error().is_none())
                .flat_map(|t| t.partitions().iter().map(|p| p.id()))
                .collect();
            if !partitions.is_empty() {
                return Ok(partitions);
            }
            if self.remaining(started).is_zero() {
                return Err(OffsetStoreError::NoPartitions {
                    topic: topic.to_owned(),
                    waited: self.timeout,
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn remaining(&self, started: Instant) -> Duration {
        self.timeout.saturating_sub(started.elapsed())
    }
}

/// The kind of a JSON value, as [`OffsetError::NotAnObject`] names it.
fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// The window an at-least-once task marked its offset record with, if any.
fn delivered_window(message: &impl Message) -> Option<u64> {
    message
        .headers()?
        .iter()
        .find(|h| h.key == DELIVERED_WINDOW_HEADER)
        .and_then(|h| h.value)
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.parse().ok())
}

pub(crate) fn millis(duration: Duration) -> String {
    duration.as_millis().clamp(1, i32::MAX as u128).to_string()
}

/// Creates the offsets topic, compacted, unless it exists; whether it created it.
fn create_topic_if_absent(
    admin: &AdminClient<DefaultClientContext>,
    topic: &str,
    timeout: Duration,
) -> Result<bool, OffsetStoreError> {
    let new_topic =
        NewTopic::new(topic, 1, TopicReplication::Fixed(-1)).set("cleanup.policy", "compact");
    let options = AdminOptions::new().operation_timeout(Some(timeout));
    let results = block_on(admin.create_topics([&new_topic], &options))
        .map_err(|e| OffsetStoreError::kafka("creating the offsets topic", e))?;
    let mut created = false;
    for result in results {
        match result {
            Ok(_) => created = true,
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((topic, code)) => {
                return Err(KafkaFailure::CreateTopic { topic, code }.into());
            }
        }
    }
    Ok(created)
}

/// Fails when the topic's `cleanup.policy` is known and does not include `compact`.
fn check_compacted(
    admin: &AdminClient<DefaultClientContext>,
    topic: &str,
    timeout: Duration,
) -> Result<(), OffsetStoreError> {
    let options = AdminOptions::new().request_timeout(Some(timeout));
    let resources = block_on(admin.describe_configs([&ResourceSpecifier::Topic(topic)], &options))
        .map_err(|e| OffsetStoreError::kafka("describing the offsets topic", e))?;
    for resource in resources {
        let resource = resource.map_err(|code| OffsetStoreError::DescribeTopic {
            topic: topic.to_owned(),
            code,
        })?;
        let policy = resource
            .get("cleanup.policy")
            .and_then(|entry| entry.value.as_deref());
        if let Some(policy) = policy
            && !policy.split(',').any(|p| p.trim() == "compact")
        {
            return Err(OffsetStoreError::NotCompacted {
                topic: topic.to_owned(),
                policy: policy.to_owned(),
            });
        }
    }
    Ok(())
}

/// Runs a future to completion on this thread. The admin client's futures are completed by its
/// own background thread, so no runtime is needed.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    struct ThreadWaker(Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_every_property_value_longest_first() {
        let props = vec![
            ("sasl.username".to_owned(), "pass".to_owned()),
            ("sasl.password".to_owned(), "password1".to_owned()),
            ("empty".to_owned(), String::new()),
        ];
        let message = "auth failed for pass with password1".to_owned();
        assert_eq!(redact(message, &props), "auth failed for *** with ***");
    }

    #[test]
    fn a_rejected_property_error_keeps_the_key_only() {
        let error = OffsetStoreError::kafka(
            "testing",
            KafkaError::ClientConfig(
                rdkafka::types::RDKafkaConfRes::RD_KAFKA_CONF_INVALID,
                "Invalid value \"hunter2\"".to_owned(),
                "sasl.password".to_owned(),
                "hunter2".to_owned(),
            ),
        );
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("sasl.password"), "{shown}");
    }
}
