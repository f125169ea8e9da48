//! At-least-once restart: which of the change records mined again are already in their topics.
//!
//! An at-least-once task writes its offset once every record before it is acknowledged, and
//! keeps at most its window of engine records sent past the offset it last wrote
//! ([`crate::kafka::offsets::StoredOffset::delivered_window`]). A crash leaves those records
//! sent but not covered by the offset; most of them usually reached their topics. The
//! restarted task mines them again from the offset. Before it sends one of the first `window`
//! change records, it reads the record's topic back from its end to the offset's commit, once
//! per topic. A record is not sent again when a record with the same `cdc.xid`,
//! `cdc.event_index` and kind (change or tombstone) was read there: what is skipped was seen
//! in its topic, never inferred from the producer's ordering. The read is `read_committed`, as
//! a downstream consumer reads.
//!
//! Nothing is skipped after an offset that an operator placed (`PATCH /offsets`): a rewind
//! delivers everything after it again. Brokers that show aborted records to `read_committed`
//! readers (the test broker Tansu) would make aborted records of an exactly-once run look
//! delivered, so a task switched from exactly-once to at-least-once skips nothing until it has
//! written an offset of its own.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cdc_journal::kafka::ClosingConsumer;
use cdc_offset::Position;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use crate::kafka::KafkaFailure;
use crate::record::builder::KafkaRecord;
use crate::record::headers;

/// The first read back from a partition's end, in records; each further read goes back twice
/// as far.
const FIRST_READ: i64 = 256;

/// `cdc.xid`, `cdc.event_index`, the key, and whether the record is a tombstone: a change
/// whose key changed is a delete and a tombstone under the old key and a create under the new.
type Identity = (Vec<u8>, Vec<u8>, Option<Vec<u8>>, bool);

/// The change records already delivered after the offset a task restarts from.
pub(crate) struct PresentRecords {
    /// Closed on a thread of its own: the look ends on the delivery thread's path.
    consumer: ClosingConsumer,
    timeout: Duration,
    /// Records of commits below this SCN sort before the offset: a partition is read back
    /// until one of them.
    floor_scn: u64,
    /// Change records still to check: the crashed task sent at most this many past its offset.
    remaining: u64,
    /// Per topic read back, the identities found after the offset.
    topics: HashMap<Arc<str>, HashSet<Identity>>,
    /// Kafka records not sent again because they were found.
    skipped: u64,
}

impl std::fmt::Debug for PresentRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PresentRecords")
            .field("floor_scn", &self.floor_scn)
            .field("remaining", &self.remaining)
            .field("topics", &self.topics.len())
            .field("skipped", &self.skipped)
            .finish_non_exhaustive()
    }
}

impl PresentRecords {
    /// Looks for the first `window` change records after `position` in their topics with
    /// `consumer` (`read_committed`, partition ends reported, no group), each read bounded by
    /// `timeout`.
    pub(crate) fn new(
        consumer: BaseConsumer,
        timeout: Duration,
        position: &Position,
        window: u64,
    ) -> PresentRecords {
        // commits below the acknowledged one, or below the resume point before any, were
        // acknowledged and are never mined again
        let floor_scn = position
            .last_commit
            .as_ref()
            .map_or(position.resume.scn.0, |commit| commit.scn.0);
        Self::with_floor(consumer, timeout, floor_scn, window)
    }

    fn with_floor(
        consumer: BaseConsumer,
        timeout: Duration,
        floor_scn: u64,
        window: u64,
    ) -> PresentRecords {
        PresentRecords {
            consumer: ClosingConsumer::new(consumer),
            timeout,
            floor_scn,
            remaining: window,
            topics: HashMap::new(),
            skipped: 0,
        }
    }

    /// Whether `record` (a Kafka record of a change) is already in its topic; reads the topic
    /// back the first time one of its records is asked about.
    pub(crate) fn contains(&mut self, record: &KafkaRecord) -> Result<bool, KafkaFailure> {
        let Some(identity) = identity(
            record
                .headers
                .iter()
                .map(|h| (h.name, Some(h.value.as_slice()))),
            record.key.as_deref(),
            record.value.is_none(),
        ) else {
            return Ok(false);
        };
        if !self.topics.contains_key(&record.topic) {
            let found = self.read_back(&record.topic)?;
            tracing::debug!(
                topic = &*record.topic,
                records = found.len(),
                "read back the records already delivered after the offset"
            );
            self.topics.insert(Arc::clone(&record.topic), found);
        }
        let present = self
            .topics
            .get(&record.topic)
            .is_some_and(|found| found.contains(&identity));
        if present {
            self.skipped += 1;
        }
        Ok(present)
    }

    /// One change record was checked. Returns whether the look is over: every record the
    /// crashed task may have sent was checked.
    pub(crate) fn checked_one(&mut self) -> bool {
        self.remaining = self.remaining.saturating_sub(1);
        self.remaining == 0
    }

    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The identities of `topic`'s records after the offset, read from each partition's end
    /// back to the first record of a commit below the floor (or the partition's start).
    fn read_back(&self, topic: &str) -> Result<HashSet<Identity>, KafkaFailure> {
        let started = Instant::now();
        let mut found = HashSet::new();
        let metadata = self
            .consumer
            .fetch_metadata(Some(topic), self.left(started))
            .map_err(|e| KafkaFailure::kafka("listing a topic's partitions to read it back", e))?;
        let partitions: Vec<i32> = metadata
            .topics()
            .iter()
            .filter(|t| t.name() == topic && t.error().is_none())
            .flat_map(|t| t.partitions().iter().map(|p| p.id()))
            .collect();
        for partition in partitions {
            let (low, high) = self
                .consumer
                .fetch_watermarks(topic, partition, self.left(started))
                .map_err(|e| KafkaFailure::kafka("reading a partition's ends", e))?;
            // The first read goes to the partition's end as the fetches report it, not to the
            // high watermark listed: a broker may list less than it holds (Tansu lists the last
            // batch's first offset + 1).
            let mut start = low.max(high - FIRST_READ);
            let mut floor_reached =
                self.read_range(topic, partition, start, None, &mut found, started)?;
            let mut span = FIRST_READ;
            // the crashed task sent at most `remaining` changes past the offset that are not
            // checked yet, each at most three Kafka records (a key change: delete, tombstone,
            // create): reading further back finds nothing it needs
            let most = i64::try_from(self.remaining.saturating_mul(3)).unwrap_or(i64::MAX);
            while !floor_reached && start > low && high - start < most {
                span = span.saturating_mul(2);
                let end = start;
                start = low.max(end - span);
                floor_reached =
                    self.read_range(topic, partition, start, Some(end), &mut found, started)?;
            }
        }
        Ok(found)
    }

    /// Reads `[start, end)` of a partition (to its end when `end` is `None`) into `found`;
    /// returns whether a record below the floor was read.
    fn read_range(
        &self,
        topic: &str,
        partition: i32,
        start: i64,
        end: Option<i64>,
        found: &mut HashSet<Identity>,
        started: Instant,
    ) -> Result<bool, KafkaFailure> {
        let mut assignment = TopicPartitionList::new();
        assignment
            .add_partition_offset(topic, partition, Offset::Offset(start))
            .map_err(|e| KafkaFailure::kafka("assigning a partition to read it back", e))?;
        self.consumer
            .assign(&assignment)
            .map_err(|e| KafkaFailure::kafka("assigning a partition to read it back", e))?;
        let mut floor_reached = false;
        loop {
            let left = self.left(started);
            if left.is_zero() {
                return Err(KafkaFailure::kafka(
                    "reading a topic back",
                    KafkaError::MessageConsumption(
                        rdkafka::types::RDKafkaErrorCode::OperationTimedOut,
                    ),
                ));
            }
            match self.consumer.poll(left.min(Duration::from_millis(200))) {
                None => {}
                Some(Err(KafkaError::PartitionEOF(_))) => return Ok(floor_reached),
                Some(Err(error)) => return Err(KafkaFailure::kafka("reading a topic back", error)),
                Some(Ok(message)) => {
                    let offset = message.offset();
                    let end = end.unwrap_or(i64::MAX);
                    if offset >= end {
                        return Ok(floor_reached);
                    }
                    let pairs: Vec<(&str, Option<&[u8]>)> = message
                        .headers()
                        .map(|h| h.iter().map(|h| (h.key, h.value)).collect())
                        .unwrap_or_default();
                    let commit_scn = header_number(pairs.iter().copied(), headers::COMMIT_SCN);
                    match commit_scn {
                        Some(scn) if scn < self.floor_scn => floor_reached = true,
                        Some(_) => {
                            if let Some(identity) = identity(
                                pairs.iter().copied(),
                                message.key(),
                                message.payload().is_none(),
                            ) {
                                found.insert(identity);
                            }
                        }
                        None => {}
                    }
                    if offset + 1 >= end {
                        return Ok(floor_reached);
                    }
                }
            }
        }
    }

    fn left(&self, started: Instant) -> Duration {
        self.timeout.saturating_sub(started.elapsed())
    }
}

/// A change record's identity from its headers; `None` without `cdc.xid` and
/// `cdc.event_index` (a side record).
fn identity<'a>(
    mut headers: impl Iterator<Item = (&'a str, Option<&'a [u8]>)> + Clone,
    key: Option<&[u8]>,
    tombstone: bool,
) -> Option<Identity> {
    let xid = headers.clone().find(|(name, _)| *name == headers::XID)?.1?;
    let index = headers.find(|(name, _)| *name == headers::EVENT_INDEX)?.1?;
    Some((
        xid.to_vec(),
        index.to_vec(),
        key.map(<[u8]>::to_vec),
        tombstone,
    ))
}

fn header_number<'a>(
    mut headers: impl Iterator<Item = (&'a str, Option<&'a [u8]>)>,
    name: &str,
) -> Option<u64> {
    headers
        .find(|(key, _)| *key == name)?
        .1
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_records_of_one_change_are_told_apart_and_side_records_have_no_identity() {
        let change = [
            ("cdc.scn", Some(b"10".as_slice())),
            ("cdc.xid", Some(b"1:2.3.4".as_slice())),
            ("cdc.event_index", Some(b"7".as_slice())),
        ];
        // an update that changed the key: delete and tombstone of the old, create of the new
        let delete = identity(change.iter().copied(), Some(b"{\"ID\":1}"), false);
        let tombstone = identity(change.iter().copied(), Some(b"{\"ID\":1}"), true);
        let create = identity(change.iter().copied(), Some(b"{\"ID\":2}"), false);
        assert_eq!(
            delete,
            Some((
                b"1:2.3.4".to_vec(),
                b"7".to_vec(),
                Some(b"{\"ID\":1}".to_vec()),
                false
            ))
        );
        assert_ne!(delete, tombstone);
        assert_ne!(delete, create);
        let side = [("cdc.scn", Some(b"10".as_slice()))];
        assert_eq!(identity(side.iter().copied(), None, false), None);
        assert_eq!(header_number(change.iter().copied(), "cdc.scn"), Some(10));
        assert_eq!(header_number(change.iter().copied(), "cdc.xid"), None);
    }

    fn change(commit: u64, index: u32, key: &str, tombstone: bool) -> KafkaRecord {
        let text = |name: &'static str, value: String| crate::record::headers::Header {
            name,
            value: value.into_bytes(),
        };
        KafkaRecord {
            topic: Arc::from("t"),
            key: Some(key.as_bytes().to_vec()),
            value: (!tombstone).then(|| b"{}".to_vec()),
            headers: vec![
                text(headers::SCN, commit.to_string()),
                text(headers::COMMIT_SCN, commit.to_string()),
                text(headers::XID, format!("0:1.1.{commit}")),
                text(headers::EVENT_INDEX, index.to_string()),
            ],
            position: Arc::new(
                Position::from_json(
                    r#"{"v":1,"resume_scn":1,"resume_rs_id":" 0x000001.00000001.0010 ","resume_ssn":0,"dbid":1,"resetlogs_scn":1,"journal_generation":0,"schema_epoch":0}"#,
                )
                .expect("a valid position"),
            ),
            commits_offset: true,
        }
    }

    #[test]
    fn only_records_read_back_after_the_floor_count_as_present() {
        use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
        let Some(broker) = crate::worker::test_support::broker() else {
            return;
        };
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let topic = format!("present-{stamp}");
        let producer: ThreadedProducer<_> = crate::kafka::client_config(&broker, &[])
            .set("enable.idempotence", "true")
            .create()
            .expect("a producer");
        // commits 100..=399, three changes each; the last change of every commit a delete
        // with its tombstone
        let mut sent = 0;
        for commit in 100u64..400 {
            for index in 0..3u32 {
                let key = format!("k{commit}-{index}");
                let mut records = vec![change(commit, index, &key, false)];
                if index == 2 {
                    records.push(change(commit, index, &key, true));
                }
                for record in records {
                    let mut headers = rdkafka::message::OwnedHeaders::new();
                    for h in &record.headers {
                        headers = headers.insert(rdkafka::message::Header {
                            key: h.name,
                            value: Some(&h.value),
                        });
                    }
                    let mut out = BaseRecord::to(&topic)
                        .key(record.key.as_deref().unwrap_or_default())
                        .headers(headers);
                    if let Some(value) = &record.value {
                        out = out.payload(value.as_slice());
                    }
                    producer.send(out).map_err(|(e, _)| e).expect("queued");
                    sent += 1;
                }
            }
        }
        producer.flush(Duration::from_secs(30)).expect("flushed");
        let consumer: BaseConsumer = crate::kafka::client_config(&broker, &[])
            .set("group.id", "present-test")
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "true")
            .set("isolation.level", "read_committed")
            .set("fetch.wait.max.ms", "10")
            .create()
            .expect("a consumer");
        let mut present =
            PresentRecords::with_floor(consumer, Duration::from_secs(30), 350, 10_000);
        let started = Instant::now();
        let mut check = |commit, index, key: &str, tombstone| {
            let mut record = change(commit, index, key, tombstone);
            record.topic = Arc::from(topic.as_str());
            present.contains(&record).expect("read back")
        };
        assert!(check(350, 0, "k350-0", false), "at the floor");
        assert!(check(399, 2, "k399-2", false));
        assert!(check(399, 2, "k399-2", true), "the tombstone");
        assert!(
            !check(380, 1, "k380-1", true),
            "no tombstone was sent for it"
        );
        assert!(!check(380, 1, "another key", false), "another key");
        assert!(!check(349, 0, "k349-0", false), "below the floor");
        assert!(!check(400, 0, "k400-0", false), "never sent");
        eprintln!(
            "{sent} records; the topic read back in {:?}",
            started.elapsed()
        );
        assert_eq!(present.skipped(), 3);
        // the look ends after the window
        let mut present = PresentRecords::with_floor(
            crate::kafka::client_config(&broker, &[])
                .set("group.id", "present-test")
                .create()
                .expect("a consumer"),
            Duration::from_secs(30),
            0,
            2,
        );
        assert!(!present.checked_one());
        assert!(present.checked_one());
    }
}
