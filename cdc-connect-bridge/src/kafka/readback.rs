//! Reads topics back, as a downstream consumer would: the demo's summary and the end-to-end
//! tests' verifier. Partitions are assigned (no consumer group), read from the beginning, and
//! topics that appear while reading are picked up.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::time::{Duration, Instant};

use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use crate::kafka::KafkaFailure;

/// One record read back.
#[derive(Clone, PartialEq, Eq)]
pub struct ReadRecord {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: BTreeMap<String, Vec<u8>>,
    /// The record's timestamp (ms since the epoch), when it has one.
    pub timestamp: Option<i64>,
}

impl fmt::Debug for ReadRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadRecord")
            .field("topic", &self.topic)
            .field("partition", &self.partition)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl ReadRecord {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    /// The value parsed as JSON (`None` for a tombstone or a value that is not JSON).
    pub fn value_json(&self) -> Option<serde_json::Value> {
        self.value
            .as_ref()
            .and_then(|v| serde_json::from_slice(v).ok())
    }
}

/// Reads every topic `wanted` accepts from the beginning, until `done` says so (asked after
/// each batch) or `timeout` passes; returns what was read either way, and whether `done` was
/// reached. `read_committed` hides records of open (and, on a full Kafka broker, aborted)
/// transactions.
pub fn read_until(
    bootstrap: &str,
    wanted: &dyn Fn(&str) -> bool,
    read_committed: bool,
    timeout: Duration,
    done: &mut dyn FnMut(&[ReadRecord]) -> bool,
) -> Result<(Vec<ReadRecord>, bool), KafkaFailure> {
    let consumer: BaseConsumer = crate::kafka::client_config(bootstrap, &[])
        .set("group.id", "oracle-cdc-readback")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "earliest")
        .set(
            "isolation.level",
            if read_committed {
                "read_committed"
            } else {
                "read_uncommitted"
            },
        )
        .set("allow.auto.create.topics", "false")
        .set_log_level(RDKafkaLogLevel::Error)
        .create()
        .map_err(|e| KafkaFailure::kafka("creating the reader", e))?;
    let started = Instant::now();
    let mut assigned: HashSet<(String, i32)> = HashSet::new();
    let mut records = Vec::new();
    let mut last_refresh: Option<Instant> = None;
    loop {
        if last_refresh.is_none_or(|at| at.elapsed() > Duration::from_millis(500)) {
            last_refresh = Some(Instant::now());
            assign_new(&consumer, wanted, &mut assigned)?;
        }
        let mut batch = 0;
        while let Some(message) = consumer.poll(Duration::from_millis(50)) {
            match message {
                Ok(message) => {
                    records.push(ReadRecord::of(&message));
                    batch += 1;
                    if batch >= 10_000 {
                        break;
                    }
                }
                Err(KafkaError::PartitionEOF(_)) => {}
                Err(error) => return Err(KafkaFailure::kafka("reading topics back", error)),
            }
        }
        if done(&records) {
            return Ok((records, true));
        }
        if started.elapsed() >= timeout {
            return Ok((records, false));
        }
    }
}

fn assign_new(
    consumer: &BaseConsumer,
    wanted: &dyn Fn(&str) -> bool,
    assigned: &mut HashSet<(String, i32)>,
) -> Result<(), KafkaFailure> {
    let metadata = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .map_err(|e| KafkaFailure::kafka("listing topics", e))?;
    let mut fresh = TopicPartitionList::new();
    for topic in metadata.topics() {
        if !wanted(topic.name()) {
            continue;
        }
        for partition in topic.partitions() {
            let key = (topic.name().to_owned(), partition.id());
            if assigned.insert(key) {
                fresh
                    .add_partition_offset(topic.name(), partition.id(), Offset::Beginning)
                    .map_err(|e| KafkaFailure::kafka("assigning partitions", e))?;
            }
        }
    }
    if fresh.count() > 0 {
        consumer
            .incremental_assign(&fresh)
            .map_err(|e| KafkaFailure::kafka("assigning partitions", e))?;
    }
    Ok(())
}

impl ReadRecord {
    /// The owned copy of a consumed message.
    pub fn of(message: &rdkafka::message::BorrowedMessage<'_>) -> ReadRecord {
        owned(message)
    }
}

fn owned(message: &rdkafka::message::BorrowedMessage<'_>) -> ReadRecord {
    let mut headers = BTreeMap::new();
    if let Some(h) = message.headers() {
        for header in h.iter() {
            headers.insert(
                header.key.to_owned(),
                header.value.map(<[u8]>::to_vec).unwrap_or_default(),
            );
        }
    }
    ReadRecord {
        topic: message.topic().to_owned(),
        partition: message.partition(),
        offset: message.offset(),
        key: message.key().map(<[u8]>::to_vec),
        value: message.payload().map(<[u8]>::to_vec),
        headers,
        timestamp: message.timestamp().to_millis(),
    }
}
