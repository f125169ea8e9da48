//! The signals topic's reader: partition 0 of `cdc.signals.topic`, from the offset after the
//! last signal the position records, polled at most once a second; each record goes to the
//! engine, which acts on it between steps.
//!
//! ```text
//!  oracle-cdc-signals thread: BaseConsumer (partition 0 assigned, no group joined,
//!    read_committed) ── poll ≤ 1/s ──► SyncSender<SignalRecord> ──► engine (mining thread)
//! ```
//!
//! # Error handling
//!
//! Nothing here stops the task: a broker that does not answer, or a topic that does not exist
//! yet, is logged and read again at the next poll. Signals are steering, not data: the worst a
//! failing reader does is leave a signal unanswered until it reads again. The thread ends when
//! the task stops or the engine is gone.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cdc_journal::kafka::ClosingConsumer;
use cdc_logminer::engine::SignalRecord;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use crate::kafka::KafkaClients;

/// How often the topic is read at most.
pub const SIGNAL_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Signals waiting for the engine at most; the reader waits when the engine is this far
/// behind.
const SIGNALS_IN_FLIGHT: usize = 64;

/// The reader thread: `stop` ends it.
#[derive(Debug)]
pub struct SignalReader {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SignalReader {
    /// Starts reading `topic` from `from`, handing records to the returned receiver.
    pub fn start(
        clients: &KafkaClients,
        connector: &str,
        topic: &str,
        from: i64,
    ) -> Result<(SignalReader, std::sync::mpsc::Receiver<SignalRecord>), String> {
        let (tx, rx) = std::sync::mpsc::sync_channel(SIGNALS_IN_FLIGHT);
        let mut config = crate::kafka::client_config(&clients.bootstrap, clients.props());
        if config.get("group.id").is_none() {
            // librdkafka's assign needs a group id; the group is never joined nor committed to
            config.set("group.id", format!("{connector}-signals-reader"));
        }
        config
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("isolation.level", "read_committed")
            .set("allow.auto.create.topics", "false");
        let consumer: BaseConsumer = config
            .create()
            .map_err(|e| format!("creating the signals reader failed: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            let topic = topic.to_owned();
            std::thread::Builder::new()
                .name("oracle-cdc-signals".into())
                .spawn(move || read(ClosingConsumer::new(consumer), &topic, from, &tx, &stop))
                .map_err(|e| format!("starting the signals reader failed: {e}"))?
        };
        Ok((
            SignalReader {
                stop,
                thread: Some(thread),
            },
            rx,
        ))
    }
}

impl Drop for SignalReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn read(
    consumer: ClosingConsumer,
    topic: &str,
    from: i64,
    tx: &SyncSender<SignalRecord>,
    stop: &AtomicBool,
) {
    let mut next = from.max(0);
    let mut assigned = false;
    while !stop.load(Ordering::SeqCst) {
        let started = Instant::now();
        if !assigned {
            let mut assignment = TopicPartitionList::new();
            match assignment
                .add_partition_offset(topic, 0, Offset::Offset(next))
                .and_then(|()| consumer.assign(&assignment))
            {
                Ok(()) => assigned = true,
                Err(e) => tracing::warn!(topic, error = %e, "the signals topic cannot be read yet"),
            }
        }
        // one read of what is there, then wait for the rest of the interval
        while assigned && !stop.load(Ordering::SeqCst) {
            match consumer.poll(Duration::from_millis(100)) {
                None => break,
                Some(Ok(message)) => {
                    let record = SignalRecord {
                        offset: message.offset(),
                        key: message.key().map(<[u8]>::to_vec),
                        value: message.payload().map(<[u8]>::to_vec),
                    };
                    next = message.offset().saturating_add(1);
                    if !send(tx, record, stop) {
                        return;
                    }
                }
                Some(Err(e)) => {
                    tracing::debug!(topic, error = %e, "reading the signals topic");
                    break;
                }
            }
        }
        let left = SIGNAL_POLL_INTERVAL.saturating_sub(started.elapsed());
        sleep_unless_stopped(left, stop);
    }
}

/// Hands a record to the engine, waiting while its channel is full; false once the engine is
/// gone or the task stops.
fn send(tx: &SyncSender<SignalRecord>, mut record: SignalRecord, stop: &AtomicBool) -> bool {
    loop {
        match tx.try_send(record) {
            Ok(()) => return true,
            Err(std::sync::mpsc::TrySendError::Disconnected(_)) => return false,
            Err(std::sync::mpsc::TrySendError::Full(back)) => {
                if stop.load(Ordering::SeqCst) {
                    return false;
                }
                record = back;
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn sleep_unless_stopped(duration: Duration, stop: &AtomicBool) {
    let until = Instant::now() + duration;
    while !stop.load(Ordering::SeqCst) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}
