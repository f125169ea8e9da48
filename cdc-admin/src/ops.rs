//! The ops topic from the tool's side: writing the `offsets-set` events, and reading what
//! the connector writes there (the `signal-ack` of a signal, snapshot progress).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cdc_connect_bridge::{RecordBuilder, RecordSettings};
use cdc_core::config::CdcConfig;
use cdc_core::{OpsEvent, OpsKind, Scn};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::Value;

use crate::error::AdminError;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn kafka_error(what: &str) -> impl Fn(rdkafka::error::KafkaError) -> AdminError + '_ {
    move |e| AdminError::Kafka(format!("{what}: {e}"))
}

/// Sends one record and waits until the broker acknowledged it.
pub fn send_one(
    client: &ClientConfig,
    topic: &str,
    partition: Option<i32>,
    key: &[u8],
    value: &[u8],
    timeout: Duration,
) -> Result<(), AdminError> {
    let producer: ThreadedProducer<DefaultProducerContext> = client
        .clone()
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("message.timeout.ms", timeout.as_millis().to_string())
        .create()
        .map_err(kafka_error("creating a producer"))?;
    let mut record = BaseRecord::to(topic).key(key).payload(value);
    if let Some(partition) = partition {
        record = record.partition(partition);
    }
    producer
        .send(record)
        .map_err(|(e, _)| AdminError::Kafka(format!("sending to {topic}: {e}")))?;
    producer
        .flush(timeout)
        .map_err(kafka_error("waiting for the broker's acknowledgement"))?;
    if producer.in_flight_count() > 0 {
        return Err(AdminError::Kafka(format!(
            "{topic} did not acknowledge the record within {} s",
            timeout.as_secs()
        )));
    }
    Ok(())
}

/// Writes an ops event for the connector `config` describes, as the connector writes its own
/// (same topic, key and value format).
pub fn write_event(
    client: &ClientConfig,
    config: &CdcConfig,
    kind: OpsKind,
    details: BTreeMap<String, String>,
    resume_scn: Option<Scn>,
    timeout: Duration,
) -> Result<(), AdminError> {
    let builder = RecordBuilder::new(RecordSettings::from_config(config, ""));
    let event = OpsEvent { kind, details };
    let (topic, key, value) = builder.ops_record(&event, resume_scn, now_ms());
    send_one(client, topic, None, &key, &value, timeout)
}

/// An ops event as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadEvent {
    pub kind: String,
    pub server: String,
    pub details: BTreeMap<String, String>,
}

/// Reads the ops topic from where it ends now: [`OpsTail::next`] gives the events written
/// after [`OpsTail::open`].
pub struct OpsTail {
    consumer: BaseConsumer,
    server: String,
}

impl std::fmt::Debug for OpsTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpsTail")
            .field("server", &self.server)
            .finish()
    }
}

impl OpsTail {
    /// Positions a reader at the current end of every partition of the ops topic.
    pub fn open(client: &ClientConfig, config: &CdcConfig) -> Result<OpsTail, AdminError> {
        let topic = config.topics.ops.as_str();
        let consumer: BaseConsumer = client
            .clone()
            .set("group.id", "oracle-cdc-admin")
            .set("enable.auto.commit", "false")
            .set("isolation.level", "read_committed")
            .create()
            .map_err(kafka_error("creating a consumer"))?;
        let metadata = consumer
            .fetch_metadata(Some(topic), crate::context::CALL_TIMEOUT)
            .map_err(kafka_error("reading the ops topic's metadata"))?;
        let partitions: Vec<i32> = metadata
            .topics()
            .iter()
            .filter(|t| t.name() == topic)
            .flat_map(|t| t.partitions().iter().map(|p| p.id()))
            .collect();
        let mut assignment = TopicPartitionList::new();
        if partitions.is_empty() {
            // not created yet (the connector creates it, with one partition like every side
            // topic, for its first event): everything it will hold is after now
            assignment
                .add_partition_offset(topic, 0, Offset::Beginning)
                .map_err(kafka_error("positioning on the ops topic"))?;
        }
        for partition in partitions {
            let (_, high) = consumer
                .fetch_watermarks(topic, partition, crate::context::CALL_TIMEOUT)
                .map_err(kafka_error("reading the ops topic's end"))?;
            assignment
                .add_partition_offset(topic, partition, Offset::Offset(high))
                .map_err(kafka_error("positioning on the ops topic"))?;
        }
        consumer
            .assign(&assignment)
            .map_err(kafka_error("reading the ops topic"))?;
        Ok(OpsTail {
            consumer,
            server: config.topics.prefix.clone(),
        })
    }

    /// The next event of this connector, waiting until `deadline`; `None` at the deadline.
    pub fn next(&self, deadline: Instant) -> Result<Option<ReadEvent>, AdminError> {
        while Instant::now() < deadline {
            let wait = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(200));
            let Some(message) = self.consumer.poll(wait) else {
                continue;
            };
            let message = message.map_err(kafka_error("reading the ops topic"))?;
            let Some(event) = message.payload().and_then(parse_event) else {
                continue;
            };
            if event.server == self.server {
                return Ok(Some(event));
            }
        }
        Ok(None)
    }
}

/// An ops event's value, bare or in a Connect JSON envelope; `None` when it is no ops event.
pub fn parse_event(bytes: &[u8]) -> Option<ReadEvent> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let value = match value.get("payload") {
        Some(payload) if value.get("schema").is_some() => payload.clone(),
        _ => value,
    };
    let details = value
        .get("details")
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .map(|(k, v)| {
                    let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    (k.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(ReadEvent {
        kind: value.get("type")?.as_str()?.to_owned(),
        server: value
            .get("server")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_bare_or_enveloped() {
        let bare = br#"{"v":1,"type":"signal-ack","server":"cdc","details":{"id":"a"}}"#;
        let event = parse_event(bare).expect("an event");
        assert_eq!(event.kind, "signal-ack");
        assert_eq!(event.details.get("id").map(String::as_str), Some("a"));
        let wrapped = br#"{"schema":{},"payload":{"type":"startup","server":"x","details":{}}}"#;
        assert_eq!(parse_event(wrapped).map(|e| e.server), Some("x".to_owned()));
        assert_eq!(parse_event(b"not json"), None);
        assert_eq!(parse_event(br#"{"details":{}}"#), None);
    }
}
