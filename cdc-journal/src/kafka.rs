//! The journal topic on a Kafka broker ([`KafkaJournal`]), and the one place every Kafka client
//! of the product is configured ([`client_config`]): it lives here, in the lowest crate that
//! opens a Kafka client, and `cdc-connect-bridge` re-exports it.
//!
//! ```text
//!  task start ─► KafkaJournal::read_all
//!                  metadata: the topic's partitions ─── no such topic: an empty journal
//!                  per partition, in order:
//!                    watermarks (low, high) when the read begins
//!                    assign at the beginning (no group joined, nothing committed),
//!                    read_committed ─► visit(offset, key, value) ... until librdkafka
//!                    reports the partition's end (PartitionEOF), the position at or past high
//!  tools, tests ─► KafkaJournal::write ─► idempotent producer, acks=all ─► partition 0 ─► flush
//! ```
//!
//! Reading is synchronous: an rdkafka [`BaseConsumer`] made for the read, with assigned
//! partitions. With `read_committed` the last offsets before the high watermark may be
//! transaction markers, which are never delivered: a partition is done when librdkafka reports
//! its end and the consumer's position (which moves over the markers) is at or past the high
//! watermark, never when a record at the last offset arrives. The watermark is a floor, not a
//! stop: a broker may report it short of the end (see `KafkaJournal::read_partition`).
//!
//! # Error handling
//!
//! Nothing here retries beyond what librdkafka does itself. Every metadata or watermark call and
//! every flush waits at most [`KafkaJournal::timeout`] (30 s by default), and a read fails once
//! it has made no progress for that long; a big topic may take longer as a whole. Errors are
//! [`CdcError`]s: an unreachable broker or a wait that ran out is CDC-9001
//! (`KAFKA_UNAVAILABLE`, the task is started again with backoff), a refused authentication or an
//! ACL CDC-9003 (`KAFKA_AUTHORIZATION`, stops), a client property librdkafka rejects CDC-9007
//! (`KAFKA_CLIENT_SETUP`, stops), anything else CDC-9001 with librdkafka's message. The
//! operator sees them where the task's stop is shown. Client properties (`cdc.kafka.*`) may
//! hold secrets (`sasl.password`): no message and no `Debug` output shows a property value.

use std::fmt;
use std::time::{Duration, Instant};

use cdc_core::{CdcCode, CdcError};
use parking_lot::Mutex;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{DeliveryResult, Message};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};
use rdkafka::{ClientConfig, ClientContext, Offset, TopicPartitionList};

use crate::store::{EncodedRecord, JournalStore, StoredRecord};

/// A consumer that closes on a thread of its own when dropped.
///
/// rdkafka closes a consumer with a group id when it is dropped, polling for the close in
/// rounds of 100 ms, and the first round runs to its end: each read of a task's start (the
/// offsets, the journal) cost 100 ms more than the read itself, half a second before a task's
/// first record on the test broker. The reads made here assign partitions and never join
/// their group, so nothing needs to wait for the close.
pub struct ClosingConsumer(Option<BaseConsumer>);

impl ClosingConsumer {
    pub fn new(consumer: BaseConsumer) -> ClosingConsumer {
        ClosingConsumer(Some(consumer))
    }
}

impl fmt::Debug for ClosingConsumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClosingConsumer").finish_non_exhaustive()
    }
}

impl std::ops::Deref for ClosingConsumer {
    type Target = BaseConsumer;

    fn deref(&self) -> &BaseConsumer {
        // `None` only once `drop` took it
        match &self.0 {
            Some(consumer) => consumer,
            None => unreachable!("a ClosingConsumer holds its consumer until it is dropped"),
        }
    }
}

impl Drop for ClosingConsumer {
    fn drop(&mut self) {
        if let Some(consumer) = self.0.take() {
            close_in_background(consumer);
        }
    }
}

/// Drops a Kafka client on a thread of its own, for a client whose drop waits for nothing the
/// caller needs: a consumer that never joined its group ([`ClosingConsumer`]), or an admin
/// client, whose drop waits for its polling thread's current poll of up to 100 ms.
pub fn close_in_background<T: Send + 'static>(client: T) {
    // a thread that cannot start drops the closure, and with it the client, here
    let _ = std::thread::Builder::new()
        .name("oracle-cdc-close".into())
        .spawn(move || drop(client));
}

/// A client configuration for `bootstrap` with `client_props` (`cdc.kafka.*`: security and the
/// like) and librdkafka's log level at warnings. Every Kafka client of the product starts here.
#[allow(clippy::disallowed_methods)] // the one place a ClientConfig is made
pub fn client_config(bootstrap: &str, client_props: &[(String, String)]) -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap);
    // TCP_NODELAY, as the Java clients and brokers set it: with Nagle's algorithm a request
    // written in two segments waited for the broker's delayed ACK, 40–50 ms, which each new
    // client's first metadata request and topic creation paid on a task's way to its first
    // record (`cargo x bench snapshot`)
    config.set("socket.nagle.disable", "true");
    config.set_log_level(RDKafkaLogLevel::Warning);
    for (key, value) in client_props {
        config.set(key, value);
    }
    config
}

/// How long one call to the brokers may take by default, and how long a read may go without
/// progress.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The consumer group named in the reader's configuration when the client properties name
/// none: librdkafka assigns partitions only to a consumer with a group id. The group is never
/// joined and nothing is committed to it.
const READER_GROUP: &str = "oracle-cdc-journal-reader";

/// How long one poll of the consumer or the producer waits, so that the progress and the
/// deadlines are checked between them.
const POLL: Duration = Duration::from_millis(100);

/// The journal topic on a Kafka broker: read at task start, written by tools and tests.
pub struct KafkaJournal {
    bootstrap: String,
    topic: String,
    timeout: Duration,
    /// The client properties' values, to hide them in librdkafka's messages. Never shown.
    secrets: Vec<String>,
    /// The reader's and the writer's configurations, the client properties applied; never
    /// shown.
    consumer_config: ClientConfig,
    producer_config: ClientConfig,
    /// Made at the first write: a journal that is only read opens no producer.
    producer: Option<BaseProducer<DeliveryContext>>,
}

impl fmt::Debug for KafkaJournal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaJournal")
            .field("bootstrap", &self.bootstrap)
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

impl KafkaJournal {
    /// The journal in `topic` on the brokers `bootstrap`, with `client_props` (librdkafka
    /// properties: security settings and the like) applied to its clients; the journal's own
    /// settings (`read_committed`, no commits, idempotence) win over them. A property
    /// librdkafka rejects is reported here; no client is made and no broker asked before the
    /// first read or write.
    pub fn new(
        bootstrap: &str,
        client_props: &[(String, String)],
        topic: &str,
    ) -> Result<KafkaJournal, CdcError> {
        let secrets: Vec<String> = client_props
            .iter()
            .map(|(_, value)| value.clone())
            .filter(|value| !value.is_empty())
            .collect();
        let mut base = client_config(bootstrap, client_props);
        // the record producer's alone: the journal's writer sends outside Kafka transactions
        base.remove("transactional.id");

        let mut consumer_config = base.clone();
        if consumer_config.get("group.id").is_none() {
            consumer_config.set("group.id", READER_GROUP);
        }
        consumer_config
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("enable.partition.eof", "true")
            .set("auto.offset.reset", "earliest")
            .set("isolation.level", "read_committed")
            .set("allow.auto.create.topics", "false")
            // a fetch at a partition's end answers soon, so that its end is seen soon
            .set("fetch.wait.max.ms", "100");
        let mut producer_config = base;
        producer_config
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("allow.auto.create.topics", "false");

        for (config, during) in [
            (&consumer_config, "configuring the journal's consumer"),
            (&producer_config, "configuring the journal's producer"),
        ] {
            config
                .create_native_config()
                .map_err(|e| failure(topic, during, e, &secrets))?;
        }

        Ok(KafkaJournal {
            bootstrap: bootstrap.to_owned(),
            topic: topic.to_owned(),
            timeout: DEFAULT_TIMEOUT,
            secrets,
            consumer_config,
            producer_config,
            producer: None,
        })
    }

    /// The same journal with another bound on each call and on a read without progress (set it
    /// before the first write: the producer's delivery timeout is taken from it).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> KafkaJournal {
        self.timeout = timeout;
        self
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The bound on each call, and on a read without progress.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    fn failure(&self, during: &str, error: KafkaError) -> CdcError {
        failure(&self.topic, during, error, &self.secrets)
    }

    /// The topic's partitions, in order; none when the topic does not exist.
    fn partitions(&self, consumer: &BaseConsumer) -> Result<Vec<i32>, CdcError> {
        let metadata = consumer
            .fetch_metadata(Some(&self.topic), self.timeout)
            .map_err(|e| self.failure("fetching the metadata of", e))?;
        let mut partitions = Vec::new();
        for topic in metadata.topics().iter().filter(|t| t.name() == self.topic) {
            match topic.error().map(RDKafkaErrorCode::from) {
                None => partitions.extend(topic.partitions().iter().map(|p| p.id())),
                // the connector creates the topic at start: before that there is no journal
                Some(
                    RDKafkaErrorCode::UnknownTopicOrPartition | RDKafkaErrorCode::UnknownTopic,
                ) => {}
                Some(code) => {
                    return Err(
                        self.failure("fetching the metadata of", KafkaError::MetadataFetch(code))
                    );
                }
            }
        }
        partitions.sort_unstable();
        Ok(partitions)
    }

    /// The partitions that hold records, each with its end (high watermark) now.
    fn ends(&self, consumer: &BaseConsumer) -> Result<Vec<(i32, i64)>, CdcError> {
        let mut ends = Vec::new();
        for partition in self.partitions(consumer)? {
            let (low, high) = consumer
                .fetch_watermarks(&self.topic, partition, self.timeout)
                .map_err(|e| self.failure("fetching the ends of", e))?;
            if high > low {
                ends.push((partition, high));
            }
        }
        Ok(ends)
    }

    /// Visits the records of `partition` from its beginning to its end: at least up to `end`,
    /// its high watermark when the read began, and up to where librdkafka reports the
    /// partition's end ([`KafkaError::PartitionEOF`]) once the position is past `end`. Records
    /// written after the read began that arrive before that end are visited too: a
    /// Kafka-protocol broker may answer the watermark request short of the end (Tansu 0.6, the
    /// test broker, answers with the last batch's first offset plus one), so no record is
    /// left out for being past `end`.
    fn read_partition(
        &self,
        consumer: &BaseConsumer,
        partition: i32,
        end: i64,
        visit: &mut dyn FnMut(StoredRecord<'_>) -> Result<(), CdcError>,
    ) -> Result<(), CdcError> {
        let mut assignment = TopicPartitionList::new();
        assignment
            .add_partition_offset(&self.topic, partition, Offset::Beginning)
            .map_err(|e| self.failure("assigning a partition of", e))?;
        consumer
            .assign(&assignment)
            .map_err(|e| self.failure("assigning a partition of", e))?;
        let read = self.read_assigned(consumer, partition, end, visit);
        let unassigned = consumer
            .unassign()
            .map_err(|e| self.failure("unassigning a partition of", e));
        read.and(unassigned)
    }

    /// The read loop of [`KafkaJournal::read_partition`], the partition assigned.
    fn read_assigned(
        &self,
        consumer: &BaseConsumer,
        partition: i32,
        end: i64,
        visit: &mut dyn FnMut(StoredRecord<'_>) -> Result<(), CdcError>,
    ) -> Result<(), CdcError> {
        let mut position = 0i64;
        let mut progressed = Instant::now();
        // a broker connection lost is retried by librdkafka: kept to explain a read that stalls
        let mut last_error: Option<KafkaError> = None;
        loop {
            match consumer.poll(POLL) {
                Some(Ok(message)) if message.partition() == partition => {
                    visit(StoredRecord {
                        offset: message.offset(),
                        key: message.key(),
                        value: message.payload(),
                    })?;
                    position = message.offset() + 1;
                    progressed = Instant::now();
                    continue;
                }
                // the end as the fetches see it, transaction markers passed; past the end taken
                // at the start on every broker that reports its ends right
                Some(Err(KafkaError::PartitionEOF(p))) if p == partition => {
                    if self
                        .position(consumer, partition)?
                        .is_some_and(|at| at >= end)
                    {
                        return Ok(());
                    }
                }
                Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Err(error)) if stops_a_read(&error) => {
                    return Err(self.failure("reading", error));
                }
                Some(Err(error)) => last_error = Some(error),
                // a record or an end of a partition assigned before
                Some(_) | None => {}
            }
            // the position also moves over transaction markers, which are never delivered
            if let Some(at) = self.position(consumer, partition)?
                && at > position
            {
                position = at;
                progressed = Instant::now();
            }
            if progressed.elapsed() >= self.timeout {
                let why = last_error.map_or(String::new(), |e| format!(" (last error: {e})"));
                return Err(CdcError::new(
                    CdcCode::KafkaUnavailable,
                    format!(
                        "reading journal topic {} made no progress for {:?} at offset {position} \
                         of partition {partition}, whose end is {end}{why}",
                        self.topic, self.timeout
                    ),
                ));
            }
        }
    }

    /// The consumer's position in `partition`: the offset of the next record it delivers.
    fn position(&self, consumer: &BaseConsumer, partition: i32) -> Result<Option<i64>, CdcError> {
        let positions = consumer
            .position()
            .map_err(|e| self.failure("reading the position in", e))?;
        Ok(positions
            .find_partition(&self.topic, partition)
            .and_then(|p| match p.offset() {
                Offset::Offset(at) => Some(at),
                _ => None,
            }))
    }

    /// Sends every record to partition 0 and waits for their delivery reports.
    fn send_all(
        &self,
        producer: &BaseProducer<DeliveryContext>,
        records: &[EncodedRecord],
    ) -> Result<(), CdcError> {
        for record in records {
            let mut next = BaseRecord::<[u8], [u8]>::to(&self.topic)
                .partition(0)
                .key(record.key.as_slice());
            if let Some(value) = &record.value {
                next = next.payload(value.as_slice());
            }
            let queued = Instant::now();
            while let Err((error, back)) = producer.send(next) {
                let full = matches!(
                    error,
                    KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull)
                );
                if !full || queued.elapsed() >= self.timeout {
                    return Err(self.failure("sending a record to", error));
                }
                // the producer's queue is full: serve delivery reports until there is room
                producer.poll(POLL);
                next = back;
            }
        }
        producer
            .flush(self.timeout)
            .map_err(|e| self.failure("waiting for the records' delivery to", e))?;
        match producer.context().take() {
            Failures {
                count: 0,
                first: None,
            } => Ok(()),
            Failures { count, first } => {
                let code = first.as_ref().map_or(CdcCode::KafkaUnavailable, code_of);
                let first = first.map_or(String::new(), |e| format!(": {e}"));
                Err(CdcError::new(
                    code,
                    format!(
                        "{count} of {} records to journal topic {} were not stored{first}",
                        records.len(),
                        self.topic
                    ),
                ))
            }
        }
    }
}

impl KafkaJournal {
    /// [`JournalStore::read_all`] with each record's partition: what a tool that names a
    /// record by partition and offset reads (`oracle-cdc-admin journal inspect`).
    pub fn read_all_partitions(
        &mut self,
        visit: &mut dyn FnMut(i32, StoredRecord<'_>) -> Result<(), CdcError>,
    ) -> Result<(), CdcError> {
        let consumer = ClosingConsumer::new(
            self.consumer_config
                .create()
                .map_err(|e| self.failure("creating the journal's consumer", e))?,
        );
        // every partition's end is taken before any is read: the end of the topic as it was
        // when the call began
        for (partition, end) in self.ends(&consumer)? {
            self.read_partition(&consumer, partition, end, &mut |record| {
                visit(partition, record)
            })?;
        }
        Ok(())
    }
}

impl JournalStore for KafkaJournal {
    fn read_all(
        &mut self,
        visit: &mut dyn FnMut(StoredRecord<'_>) -> Result<(), CdcError>,
    ) -> Result<(), CdcError> {
        self.read_all_partitions(&mut |_, record| visit(record))
    }

    fn write(&mut self, records: &[EncodedRecord]) -> Result<(), CdcError> {
        if records.is_empty() {
            return Ok(());
        }
        let producer = match self.producer.take() {
            Some(producer) => producer,
            None => {
                let mut config = self.producer_config.clone();
                config.set("message.timeout.ms", millis(self.timeout));
                config
                    .create_with_context(DeliveryContext::default())
                    .map_err(|e| self.failure("creating the journal's producer", e))?
            }
        };
        let sent = self.send_all(&producer, records);
        // a producer whose write failed may still hold records: it is dropped with them, so
        // that they cannot fail the next write
        if sent.is_ok() {
            self.producer = Some(producer);
        }
        sent
    }
}

/// What the delivery reports of a write said.
#[derive(Default)]
struct Failures {
    count: usize,
    first: Option<KafkaError>,
}

/// Collects the failed deliveries of a write.
#[derive(Default)]
struct DeliveryContext {
    failures: Mutex<Failures>,
}

impl DeliveryContext {
    fn take(&self) -> Failures {
        std::mem::take(&mut *self.failures.lock())
    }
}

impl ClientContext for DeliveryContext {}

impl ProducerContext for DeliveryContext {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((error, _)) = result {
            let mut failures = self.failures.lock();
            failures.count += 1;
            if failures.first.is_none() {
                failures.first = Some(error.clone());
            }
        }
    }
}

/// `error` as the journal's stop. A rejected property is named, never its value, and
/// librdkafka's message about a client it could not create has every property value hidden.
fn failure(topic: &str, during: &str, error: KafkaError, secrets: &[String]) -> CdcError {
    let code = code_of(&error);
    match error {
        KafkaError::ClientConfig(_, _, key, _) => CdcError::new(
            code,
            format!("Kafka client property {key:?} was rejected while {during}"),
        ),
        KafkaError::ClientCreation(message) => CdcError::new(
            code,
            format!(
                "could not create the Kafka client while {during}: {}",
                redact(message, secrets)
            ),
        ),
        error => CdcError::new(
            code,
            format!("Kafka error while {during} journal topic {topic}: {error}"),
        )
        .with_source(error),
    }
}

/// The code of a Kafka error of the journal (the module's `# Error handling`).
fn code_of(error: &KafkaError) -> CdcCode {
    match error {
        KafkaError::ClientConfig(..) | KafkaError::ClientCreation(_) => CdcCode::KafkaClientSetup,
        error if error.rdkafka_error_code().is_some_and(is_authorization) => {
            CdcCode::KafkaAuthorization
        }
        _ => CdcCode::KafkaUnavailable,
    }
}

/// Whether a read must stop at `error` rather than wait for librdkafka to recover: an
/// authorization failure or a fatal error. A broker connection lost is retried by librdkafka.
fn stops_a_read(error: &KafkaError) -> bool {
    matches!(error, KafkaError::MessageConsumptionFatal(_))
        || error.rdkafka_error_code().is_some_and(is_authorization)
}

/// The codes of who the connector is or what it may do (CDC-9003): the one list, which the
/// bridge's classification of Kafka errors uses too.
pub fn is_authorization(code: RDKafkaErrorCode) -> bool {
    use RDKafkaErrorCode as E;
    matches!(
        code,
        E::TopicAuthorizationFailed
            | E::GroupAuthorizationFailed
            | E::ClusterAuthorizationFailed
            | E::TransactionalIdAuthorizationFailed
            | E::DelegationTokenAuthorizationFailed
            | E::SaslAuthenticationFailed
            | E::IllegalSASLState
            | E::UnsupportedSASLMechanism
            | E::UnacceptableCredential
            | E::Authentication
            | E::SSL
    )
}

/// `message` with every secret replaced by `***`, longest first (so that a value holding
/// another one is hidden whole).
fn redact(mut message: String, secrets: &[String]) -> String {
    let mut secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    for secret in secrets {
        message = message.replace(secret, "***");
    }
    message
}

fn millis(duration: Duration) -> String {
    duration.as_millis().clamp(1, i32::MAX as u128).to_string()
}

/// Creates a compacted topic of `partitions` partitions (replication 1) and waits, at most
/// [`DEFAULT_TIMEOUT`], until the broker's metadata shows all of them: for tools, tests and
/// benches. The connector creates its journal topic with its other side topics.
pub fn create_compacted_topic(
    bootstrap: &str,
    client_props: &[(String, String)],
    topic: &str,
    partitions: i32,
) -> Result<(), CdcError> {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    let secrets: Vec<String> = client_props.iter().map(|(_, v)| v.clone()).collect();
    let admin: AdminClient<DefaultClientContext> = client_config(bootstrap, client_props)
        .create()
        .map_err(|e| failure(topic, "creating an admin client for", e, &secrets))?;
    let new_topic = NewTopic::new(topic, partitions, TopicReplication::Fixed(1))
        .set("cleanup.policy", "compact");
    let options = AdminOptions::new().operation_timeout(Some(DEFAULT_TIMEOUT));
    let results = block_on(admin.create_topics([&new_topic], &options))
        .map_err(|e| failure(topic, "creating", e, &secrets))?;
    for result in results {
        if let Err((_, code)) = result {
            return Err(failure(
                topic,
                "creating",
                KafkaError::AdminOp(code),
                &secrets,
            ));
        }
    }
    let consumer: BaseConsumer = client_config(bootstrap, client_props)
        .create()
        .map_err(|e| failure(topic, "creating a consumer for", e, &secrets))?;
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    loop {
        let metadata = consumer
            .fetch_metadata(Some(topic), DEFAULT_TIMEOUT)
            .map_err(|e| failure(topic, "fetching the metadata of", e, &secrets))?;
        let shown: usize = metadata
            .topics()
            .iter()
            .filter(|t| t.name() == topic && t.error().is_none())
            .map(|t| t.partitions().len())
            .sum();
        if i32::try_from(shown).is_ok_and(|n| n == partitions) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(CdcError::new(
                CdcCode::TopicUnavailable,
                format!("topic {topic} did not appear with {partitions} partitions"),
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Drives an admin future: the admin client's background thread completes it.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
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
    fn every_client_sets_tcp_nodelay_unless_the_operator_says_otherwise() {
        let config = client_config("broker:9092", &[]);
        assert_eq!(config.get("socket.nagle.disable"), Some("true"));
        let config = client_config(
            "broker:9092",
            &[("socket.nagle.disable".to_owned(), "false".to_owned())],
        );
        assert_eq!(config.get("socket.nagle.disable"), Some("false"));
    }

    #[test]
    fn redact_hides_every_secret_longest_first() {
        let secrets = vec!["pass".to_owned(), "password1".to_owned()];
        let message = "auth failed for pass with password1".to_owned();
        assert_eq!(redact(message, &secrets), "auth failed for *** with ***");
    }

    #[test]
    fn a_rejected_property_is_named_without_its_value() {
        let error = failure(
            "journal",
            "testing",
            KafkaError::ClientConfig(
                rdkafka::types::RDKafkaConfRes::RD_KAFKA_CONF_INVALID,
                "Invalid value \"hunter2\"".to_owned(),
                "sasl.password".to_owned(),
                "hunter2".to_owned(),
            ),
            &["hunter2".to_owned()],
        );
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("sasl.password"), "{shown}");
        assert_eq!(error.code(), CdcCode::KafkaClientSetup);
    }

    #[test]
    fn each_kind_of_kafka_error_has_its_code() {
        use RDKafkaErrorCode as E;
        let cases = [
            (E::AllBrokersDown, CdcCode::KafkaUnavailable),
            (E::OperationTimedOut, CdcCode::KafkaUnavailable),
            (E::TopicAuthorizationFailed, CdcCode::KafkaAuthorization),
            (E::GroupAuthorizationFailed, CdcCode::KafkaAuthorization),
            (E::SaslAuthenticationFailed, CdcCode::KafkaAuthorization),
            (E::InvalidTimestamp, CdcCode::KafkaUnavailable),
        ];
        for (code, expected) in cases {
            let error = failure("journal", "testing", KafkaError::MetadataFetch(code), &[]);
            assert_eq!(error.code(), expected, "{code:?}");
            assert!(error.message().contains("journal topic journal"), "{error}");
        }
    }

    #[test]
    fn a_lost_connection_does_not_stop_a_read_but_a_refusal_does() {
        let lost = KafkaError::MessageConsumption(RDKafkaErrorCode::BrokerTransportFailure);
        let refused = KafkaError::MessageConsumption(RDKafkaErrorCode::TopicAuthorizationFailed);
        let fatal = KafkaError::MessageConsumptionFatal(RDKafkaErrorCode::Fatal);
        assert!(!stops_a_read(&lost));
        assert!(stops_a_read(&refused));
        assert!(stops_a_read(&fatal));
    }
}
