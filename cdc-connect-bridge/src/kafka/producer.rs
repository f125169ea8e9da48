//! The record producer (transactional under exactly-once, idempotent otherwise) and its
//! delivery reports.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rdkafka::ClientContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{DeliveryResult, Header as KafkaHeader, OwnedHeaders};
use rdkafka::producer::{BaseRecord, Producer, ProducerContext, ThreadedProducer};

use cdc_core::CdcCode;

use crate::kafka::{CALL_TIMEOUT, KafkaFailure, classify};
use crate::record::builder::KafkaRecord;
use crate::worker::acks::AckTracker;

/// How long a task start waits for a broker to answer before it counts the cluster as
/// unreachable (CDC-9001, retried).
pub const BROKER_WAIT: Duration = Duration::from_secs(10);

/// One metadata request of that wait: a stop request is seen within it.
const BROKER_WAIT_SLICE: Duration = Duration::from_secs(1);

/// How often a wait for delivery reports looks whether they all came.
const SETTLE_POLL: Duration = Duration::from_micros(200);

/// Routes each delivery report to the tracker: the opaque is the engine record's sequence.
#[derive(Debug)]
pub struct AckContext {
    pub(super) acks: Arc<Mutex<AckTracker>>,
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
    pub(super) producer: ThreadedProducer<AckContext>,
    pub(super) acks: Arc<Mutex<AckTracker>>,
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

    /// Waits until a broker answers a metadata request (for `topic` alone, so that a large
    /// cluster's metadata is not fetched), at most [`BROKER_WAIT`], asking again every second
    /// while `stopping` says no. A broker that answers with an error the connector classifies
    /// other than unreachable (authentication, say) ends the wait at once with that error.
    pub fn wait_for_brokers(
        &self,
        bootstrap: &str,
        topic: &str,
        stopping: &dyn Fn() -> bool,
    ) -> Result<(), KafkaFailure> {
        let started = Instant::now();
        loop {
            let asked = Instant::now();
            let error = match self
                .producer
                .client()
                .fetch_metadata(Some(topic), BROKER_WAIT_SLICE)
            {
                Ok(_) => return Ok(()),
                Err(error) => error,
            };
            let failure = KafkaFailure::kafka("connecting to the brokers", error);
            if classify(&failure).code != CdcCode::KafkaUnavailable {
                return Err(failure);
            }
            if stopping() {
                return Ok(());
            }
            // a refused connection answers at once: ask again no more than every 200 ms
            if let Some(rest) = Duration::from_millis(200).checked_sub(asked.elapsed()) {
                std::thread::sleep(rest);
            }
            if started.elapsed() >= BROKER_WAIT {
                let KafkaFailure::Kafka { source, .. } = failure else {
                    return Err(failure);
                };
                return Err(KafkaFailure::Unreachable {
                    bootstrap: bootstrap.to_owned(),
                    waited: BROKER_WAIT,
                    source,
                });
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
