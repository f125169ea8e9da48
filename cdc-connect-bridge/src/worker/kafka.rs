//! The worker's Kafka clients: the record producer (transactional under exactly-once,
//! idempotent otherwise) with its delivery reports, and the admin client that creates topics
//! (the table topics on a thread of their own, [`TopicCreator`]).
//!
//! Client properties (`cdc.kafka.*`) may hold secrets; no error or `Debug` output here shows a
//! property value.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cdc_core::config::CdcConfig;
use parking_lot::Mutex;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{DeliveryResult, Header as KafkaHeader, OwnedHeaders};
use rdkafka::producer::{BaseRecord, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientConfig, ClientContext};

use crate::builder::KafkaRecord;
use crate::offsets_kafka::{base_config, block_on, redact};
use crate::worker::acks::AckTracker;

/// How long one admin or transaction call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a wait for delivery reports looks whether they all came.
const SETTLE_POLL: Duration = Duration::from_micros(200);

/// A Kafka failure of the worker. No variant carries a client property's value.
#[derive(Debug, thiserror::Error)]
pub enum KafkaFailure {
    #[error("no Kafka brokers: set bootstrap.servers (or cdc.kafka.bootstrap.servers)")]
    NoBrokers,
    #[error("Kafka client property {key:?} was rejected while {during}")]
    Config { key: String, during: &'static str },
    #[error("could not create the Kafka client while {during}: {message}")]
    ClientCreation {
        during: &'static str,
        message: String,
    },
    #[error("Kafka error while {during}: {source}")]
    Kafka {
        during: &'static str,
        #[source]
        source: KafkaError,
    },
    #[error("could not create topic {topic}: {code}")]
    CreateTopic {
        topic: String,
        code: RDKafkaErrorCode,
    },
    /// The request to create a topic failed as a whole (refused by the client, or no answer).
    #[error("could not create topic {topic}: {source}")]
    CreateTopicRequest {
        topic: String,
        #[source]
        source: KafkaError,
    },
    /// The broker accepted the topic but its metadata never showed it with a partition.
    #[error(
        "topic {topic} was created but did not appear in the broker's metadata within {waited:?}"
    )]
    TopicNotVisible { topic: String, waited: Duration },
    #[error("a record to {topic} was not delivered: {source}")]
    NotDelivered {
        topic: String,
        #[source]
        source: KafkaError,
    },
}

impl KafkaFailure {
    pub(crate) fn kafka(during: &'static str, error: KafkaError) -> KafkaFailure {
        match error {
            KafkaError::ClientConfig(_, _, key, _) => KafkaFailure::Config { key, during },
            source => KafkaFailure::Kafka { during, source },
        }
    }

    fn creation(during: &'static str, error: KafkaError, props: &[(String, String)]) -> Self {
        match error {
            KafkaError::ClientCreation(message) => KafkaFailure::ClientCreation {
                during,
                message: redact(message, props),
            },
            other => KafkaFailure::kafka(during, other),
        }
    }

    /// Whether the transaction can be aborted and the task restarted (as opposed to a fenced
    /// or otherwise fatal producer).
    pub fn is_fatal(&self) -> bool {
        match self {
            KafkaFailure::Kafka {
                source: KafkaError::Transaction(error),
                ..
            } => error.is_fatal(),
            _ => false,
        }
    }
}

/// Where the worker's clients connect, and with which properties.
#[derive(Clone)]
pub struct KafkaClients {
    pub bootstrap: String,
    /// `cdc.kafka.*` properties (prefix removed): security settings and the like. Never shown.
    props: Vec<(String, String)>,
}

impl fmt::Debug for KafkaClients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaClients")
            .field("bootstrap", &self.bootstrap)
            .field("properties", &self.props.len())
            .finish()
    }
}

impl KafkaClients {
    /// `cdc.kafka.bootstrap.servers`, or else the worker's `bootstrap.servers`.
    pub fn from_config(config: &CdcConfig) -> Result<KafkaClients, KafkaFailure> {
        let brokers = if config.kafka.bootstrap_servers.is_empty() {
            &config.connect.bootstrap_servers
        } else {
            &config.kafka.bootstrap_servers
        };
        if brokers.is_empty() {
            return Err(KafkaFailure::NoBrokers);
        }
        Ok(KafkaClients {
            bootstrap: brokers.join(","),
            // `transactional.id` belongs to the record producer alone (see
            // `worker::transactional_id`): the offsets store, admin and readers must not be
            // transactional
            props: config
                .kafka
                .client_properties
                .iter()
                .filter(|(k, _)| *k != "transactional.id")
                .map(|(k, v)| (k.to_owned(), v.expose().to_owned()))
                .collect(),
        })
    }

    /// Clients for `bootstrap` with no extra properties (tests, the demo).
    pub fn plain(bootstrap: impl Into<String>) -> KafkaClients {
        KafkaClients {
            bootstrap: bootstrap.into(),
            props: Vec::new(),
        }
    }

    pub fn props(&self) -> &[(String, String)] {
        &self.props
    }

    fn base(&self) -> ClientConfig {
        base_config(&self.bootstrap, &self.props)
    }

    /// The record producer: idempotent, `acks=all`, the Java client's partitioner (a key
    /// lands where a Kafka Connect worker would put it); transactional when
    /// `transactional_id` is given. Delivery reports go to `acks`. When the worker creates
    /// the topics (`creates_topics`), the producer never asks the broker to create one: a
    /// broker's automatic creation, with its own partition count, would race the worker's.
    pub fn producer(
        &self,
        transactional_id: Option<&str>,
        acks: Arc<Mutex<AckTracker>>,
        creates_topics: bool,
    ) -> Result<RecordProducer, KafkaFailure> {
        let mut config = self.base();
        config
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("partitioner", "murmur2_random");
        if creates_topics {
            config.set("allow.auto.create.topics", "false");
        }
        if config.get("linger.ms").is_none() {
            config.set("linger.ms", "5");
        }
        if let Some(id) = transactional_id {
            config.set("transactional.id", id);
        }
        let producer: ThreadedProducer<AckContext> = config
            .create_with_context(AckContext {
                acks: Arc::clone(&acks),
            })
            .map_err(|e| KafkaFailure::creation("creating the producer", e, &self.props))?;
        Ok(RecordProducer { producer, acks })
    }

    pub fn admin(&self) -> Result<TopicAdmin, KafkaFailure> {
        let admin: AdminClient<DefaultClientContext> = self
            .base()
            .create()
            .map_err(|e| KafkaFailure::creation("creating the admin client", e, &self.props))?;
        Ok(TopicAdmin {
            admin,
            known: HashSet::new(),
            metadata_wait: CALL_TIMEOUT,
        })
    }
}

/// Routes each delivery report to the tracker: the opaque is the engine record's sequence.
#[derive(Debug)]
pub struct AckContext {
    acks: Arc<Mutex<AckTracker>>,
}

impl ClientContext for AckContext {}

impl ProducerContext for AckContext {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, seq: usize) {
        let mut acks = self.acks.lock();
        match result {
            Ok(_) => acks.ack(seq as u64),
            Err((error, message)) => {
                use rdkafka::message::Message as _;
                acks.fail(message.topic().to_owned(), error.clone());
            }
        }
    }
}

/// The worker's producer.
pub struct RecordProducer {
    producer: ThreadedProducer<AckContext>,
    acks: Arc<Mutex<AckTracker>>,
}

impl fmt::Debug for RecordProducer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordProducer").finish_non_exhaustive()
    }
}

impl RecordProducer {
    pub fn acks(&self) -> &Arc<Mutex<AckTracker>> {
        &self.acks
    }

    /// Sends one record, tagged with the engine record's sequence; waits while the local
    /// queue is full (the broker is slower than capture: capture waits).
    pub fn send(&self, record: &KafkaRecord, seq: u64) -> Result<(), KafkaFailure> {
        let mut headers = OwnedHeaders::new_with_capacity(record.headers.len());
        for header in &record.headers {
            headers = headers.insert(KafkaHeader {
                key: header.name,
                value: Some(&header.value),
            });
        }
        let mut out = BaseRecord::with_opaque_to(&record.topic, seq as usize).headers(headers);
        if let Some(key) = &record.key {
            out = out.key(key.as_slice());
        }
        if let Some(value) = &record.value {
            out = out.payload(value.as_slice());
        }
        self.send_raw(out)
    }

    /// Sends a record to `topic` with `key` and `value` (the offset record).
    pub fn send_plain(
        &self,
        topic: &str,
        key: &[u8],
        value: Option<&[u8]>,
        seq: u64,
    ) -> Result<(), KafkaFailure> {
        let mut out = BaseRecord::with_opaque_to(topic, seq as usize).key(key);
        if let Some(value) = value {
            out = out.payload(value);
        }
        self.send_raw(out)
    }

    fn send_raw(&self, mut record: BaseRecord<'_, [u8], [u8], usize>) -> Result<(), KafkaFailure> {
        loop {
            match self.producer.send(record) {
                Ok(()) => return Ok(()),
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    record = back;
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err((error, _)) => return Err(KafkaFailure::kafka("sending a record", error)),
            }
        }
    }

    /// Waits until every sent record has its delivery report.
    pub fn flush(&self, timeout: Duration) -> Result<(), KafkaFailure> {
        let deadline = Instant::now() + timeout;
        self.settle(deadline);
        self.producer
            .flush(deadline.saturating_duration_since(Instant::now()))
            .map_err(|e| KafkaFailure::kafka("flushing the producer", e))
    }

    /// Waits until every record sent has its delivery report, which the producer's own
    /// thread serves, or `deadline`. rdkafka's flush (also the first step of a transaction's
    /// commit) waits in polls of up to 100 ms that run to their end, so a flush or commit
    /// with anything in flight took at least 100 ms; after this wait it finds nothing to
    /// wait for.
    fn settle(&self, deadline: Instant) {
        while self.producer.in_flight_count() > 0 && Instant::now() < deadline {
            std::thread::sleep(SETTLE_POLL);
        }
    }

    pub fn init_transactions(&self) -> Result<(), KafkaFailure> {
        self.producer
            .init_transactions(CALL_TIMEOUT)
            .map_err(|e| KafkaFailure::kafka("initialising transactions", e))
    }

    pub fn begin_transaction(&self) -> Result<(), KafkaFailure> {
        self.producer
            .begin_transaction()
            .map_err(|e| KafkaFailure::kafka("beginning a Kafka transaction", e))
    }

    pub fn commit_transaction(&self) -> Result<(), KafkaFailure> {
        // as rdkafka's own flush and commit did, each wait may take the whole call timeout
        self.settle(Instant::now() + CALL_TIMEOUT);
        self.producer
            .commit_transaction(CALL_TIMEOUT)
            .map_err(|e| KafkaFailure::kafka("committing a Kafka transaction", e))
    }

    pub fn abort_transaction(&self) -> Result<(), KafkaFailure> {
        self.producer
            .abort_transaction(CALL_TIMEOUT)
            .map_err(|e| KafkaFailure::kafka("aborting a Kafka transaction", e))
    }
}

/// How a topic the worker creates is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSpec {
    pub name: String,
    pub partitions: i32,
    /// `None`: the broker's default replication factor.
    pub replication: Option<i16>,
    pub configs: Vec<(&'static str, String)>,
}

impl TopicSpec {
    /// One partition, the broker's default replication, no settings.
    pub fn plain(name: impl Into<String>) -> TopicSpec {
        TopicSpec {
            name: name.into(),
            partitions: 1,
            replication: None,
            configs: Vec::new(),
        }
    }
}

/// Creates topics that do not exist yet; existing topics are left as they are.
pub struct TopicAdmin {
    admin: AdminClient<DefaultClientContext>,
    known: HashSet<String>,
    /// How long a created topic may take to appear in the metadata.
    metadata_wait: Duration,
}

impl fmt::Debug for TopicAdmin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TopicAdmin")
            .field("known", &self.known.len())
            .finish_non_exhaustive()
    }
}

impl TopicAdmin {
    /// Creates `spec.name` unless it exists (or was seen before).
    pub fn ensure(&mut self, spec: &TopicSpec) -> Result<(), KafkaFailure> {
        self.ensure_all(std::slice::from_ref(spec))
    }

    /// Creates those of `specs` that do not exist (and were not seen before) in one request,
    /// then waits until the metadata shows every one of them: the side topics at start, and
    /// the table topics asked for while the previous request ran. On a busy broker one round
    /// trip each took about 9 ms, a second per hundred topics.
    pub fn ensure_all(&mut self, specs: &[TopicSpec]) -> Result<(), KafkaFailure> {
        let mut new: Vec<&TopicSpec> = Vec::with_capacity(specs.len());
        for spec in specs {
            if !self.known.contains(&spec.name) && !new.iter().any(|n| n.name == spec.name) {
                new.push(spec);
            }
        }
        let Some(first) = new.first() else {
            return Ok(());
        };
        let topics: Vec<NewTopic<'_>> = new.iter().map(|spec| new_topic(spec)).collect();
        let options = AdminOptions::new().operation_timeout(Some(CALL_TIMEOUT));
        let results = match block_on(self.admin.create_topics(&topics, &options)) {
            Ok(results) => results,
            // the client refused the request before sending it, for one of the topics: one
            // at a time, so that the error names that topic
            Err(KafkaError::AdminOpCreation(_)) if new.len() > 1 => {
                for spec in new {
                    self.ensure(spec)?;
                }
                return Ok(());
            }
            Err(source) => {
                return Err(KafkaFailure::CreateTopicRequest {
                    topic: if new.len() > 1 {
                        format!("{} (and {} more)", first.name, new.len() - 1)
                    } else {
                        first.name.clone()
                    },
                    source,
                });
            }
        };
        for result in results {
            match result {
                Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err((topic, code)) => return Err(KafkaFailure::CreateTopic { topic, code }),
            }
        }
        let names: Vec<&str> = new.iter().map(|spec| spec.name.as_str()).collect();
        self.wait_for_metadata(&names)?;
        self.known.extend(names.iter().map(|&name| name.to_owned()));
        Ok(())
    }

    /// How long a created topic may take to appear in the metadata (30 s unless set).
    pub fn with_metadata_wait(mut self, wait: Duration) -> TopicAdmin {
        self.metadata_wait = wait;
        self
    }

    /// A new topic may take a moment to appear in metadata. One that does not appear, with at
    /// least one partition, within the wait is an error naming it: nothing could be written
    /// to it. One topic is asked about alone; several, with the whole cluster's metadata.
    fn wait_for_metadata(&self, topics: &[&str]) -> Result<(), KafkaFailure> {
        let started = Instant::now();
        let asked = match topics {
            [one] => Some(*one),
            _ => None,
        };
        loop {
            let metadata = self
                .admin
                .inner()
                .fetch_metadata(asked, CALL_TIMEOUT)
                .map_err(|e| KafkaFailure::kafka("reading topic metadata", e))?;
            let ready: HashSet<&str> = metadata
                .topics()
                .iter()
                .filter(|t| t.error().is_none() && !t.partitions().is_empty())
                .map(|t| t.name())
                .collect();
            let Some(missing) = topics.iter().find(|topic| !ready.contains(*topic)) else {
                return Ok(());
            };
            if started.elapsed() > self.metadata_wait {
                return Err(KafkaFailure::TopicNotVisible {
                    topic: (*missing).to_owned(),
                    waited: self.metadata_wait,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn new_topic(spec: &TopicSpec) -> NewTopic<'_> {
    let replication = TopicReplication::Fixed(i32::from(spec.replication.unwrap_or(-1)));
    let mut topic = NewTopic::new(&spec.name, spec.partitions, replication);
    for (key, value) in &spec.configs {
        topic = topic.set(key, value);
    }
    topic
}

/// Creates the table topics on a thread of its own, so that the first record of a table never
/// holds up the records of the others. The first record of a new topic is sent at once: the
/// producer keeps it until the topic shows in its metadata (for up to
/// `topic.metadata.propagation.max.ms`, 30 s by default, after which it fails the record). A
/// topic that cannot be created is reported by [`TopicCreator::take_failure`]; its records are
/// never acknowledged, so no offset passes them.
pub struct TopicCreator {
    requests: Option<Sender<TopicSpec>>,
    requested: foldhash::HashSet<String>,
    failure: Arc<Mutex<Option<KafkaFailure>>>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for TopicCreator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TopicCreator")
            .field("requested", &self.requested.len())
            .finish_non_exhaustive()
    }
}

/// Topics created in one CreateTopics request at most.
const MAX_TOPICS_PER_REQUEST: usize = 100;

impl TopicCreator {
    /// Starts the thread, which creates topics with `admin`. `known`: topics that exist.
    pub fn start(
        mut admin: TopicAdmin,
        known: impl IntoIterator<Item = String>,
    ) -> std::io::Result<TopicCreator> {
        let (requests, received) = mpsc::channel::<TopicSpec>();
        let failure = Arc::new(Mutex::new(None));
        let thread = {
            let failure = Arc::clone(&failure);
            std::thread::Builder::new()
                .name("oracle-cdc-topics".into())
                .spawn(move || {
                    // what was asked for while the last request ran goes in the next one
                    for spec in received.iter() {
                        let mut batch = vec![spec];
                        batch.extend(received.try_iter().take(MAX_TOPICS_PER_REQUEST - 1));
                        if let Err(error) = admin.ensure_all(&batch) {
                            *failure.lock() = Some(error);
                            return;
                        }
                    }
                })?
        };
        Ok(TopicCreator {
            requests: Some(requests),
            requested: known.into_iter().collect(),
            failure,
            thread: Some(thread),
        })
    }

    /// Has `topic` created (one partition, the broker's default replication) unless it exists
    /// or was asked for before; returns at once.
    pub fn request(&mut self, topic: &str) {
        if !self.requested.contains(topic) {
            self.request_spec(TopicSpec::plain(topic));
        }
    }

    /// Has `spec.name` created as `spec` says unless it exists or was asked for before;
    /// returns at once.
    pub fn request_spec(&mut self, spec: TopicSpec) {
        if !self.requested.insert(spec.name.clone()) {
            return;
        }
        if let Some(requests) = &self.requests {
            // a closed channel means the thread stopped on a failure, which `take_failure`
            // reports
            let _ = requests.send(spec);
        }
    }

    /// The failure that stopped the thread, once.
    pub fn take_failure(&self) -> Option<KafkaFailure> {
        self.failure.lock().take()
    }
}

impl Drop for TopicCreator {
    /// Lets the thread finish the topics asked for, then joins it.
    fn drop(&mut self) {
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The side topics of a configuration, with their settings: ops (delete), heartbeat
/// (delete, 24 h), signals (delete), schema and txjournal (compact), DLQ (delete; only when
/// something can go there), transactions (only when enabled).
pub fn side_topic_specs(config: &CdcConfig) -> Vec<TopicSpec> {
    let topics = &config.topics;
    let replication = topics.internal_replication_factor;
    let spec = |name: &str, configs: Vec<(&'static str, String)>| TopicSpec {
        name: name.to_owned(),
        partitions: 1,
        replication,
        configs,
    };
    let delete = || ("cleanup.policy", "delete".to_owned());
    let compact = || ("cleanup.policy", "compact".to_owned());
    let mut specs = vec![
        spec(&topics.ops, vec![delete()]),
        spec(
            &topics.heartbeat,
            vec![delete(), ("retention.ms", "86400000".to_owned())],
        ),
        spec(&topics.signals, vec![delete()]),
        spec(&topics.schema, vec![compact()]),
        spec(&topics.txjournal, vec![compact()]),
    ];
    let dlq_used = config.decode.on_decode_error == cdc_core::config::DecodeErrorAction::Dlq
        || config.transaction.max_age_action == cdc_core::config::MaxAgeAction::Discard;
    if dlq_used {
        specs.push(spec(&topics.dlq, vec![delete()]));
    }
    if topics.transactions_enabled {
        specs.push(spec(&topics.transactions, vec![delete()]));
    }
    specs
}
