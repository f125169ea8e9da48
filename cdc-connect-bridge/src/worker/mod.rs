//! The connector's task: the capture engine on its own thread, a bounded queue, and the
//! delivery loop that turns engine records into Kafka records and commits offsets only for
//! what Kafka acknowledged.
//!
//! ```text
//!  mining thread: CaptureEngine::step ──► bounded queue (back-pressure) ──► delivery loop
//!                                                                     │ RecordBuilder
//!            exactly-once: transactional producer, Kafka transactions │ at Oracle commits,
//!                          offset record inside each (eos_boundaries) │
//!            at-least-once: idempotent producer, delivery reports ───►│ offsets written by
//!                          (acks.rs), offsets of the acked prefix     │ their own thread
//! ```
//!
//! A task runs until it is told to stop (SIGINT/SIGTERM, REST stop/restart) or fails. Stopping
//! finishes the Oracle transaction being delivered when it can within
//! `cdc.shutdown.timeout.ms` (else, under exactly-once, aborts the open Kafka transaction),
//! commits what was acknowledged, and returns.

pub mod acks;
pub mod crash;
pub mod delivery;
pub mod eos_boundaries;
mod queue;
mod redelivery;
pub mod stop;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cdc_buffer::BufferMetrics;
use cdc_core::config::{CdcConfig, SnapshotMode, TransactionBoundary};
use cdc_core::{CdcCode, CdcError, Scn};
use cdc_logminer::engine::{
    CaptureEngine, EngineMetrics, EngineSettings, JournalSetup, OPEN_TRANSACTIONS_LIMIT,
    OpenTransactions, SystemClock, source_stop,
};
use cdc_logminer::source::{RedoSource, SourceSetupError};
use cdc_offset::Position;
use parking_lot::Mutex;

use crate::kafka::offsets::{KafkaOffsetStore, OffsetStoreError, StoredOffset};
use crate::kafka::schemas::StoredSchemas;
use crate::kafka::signals::SignalReader;
use crate::kafka::{KafkaClients, KafkaFailure, side_topic_specs};
use crate::operator::control::DeliveryMetrics;
use crate::record::builder::RecordBuilder;
use crate::record::error::BridgeError;
use crate::record::settings::RecordSettings;
use crate::worker::delivery::{Delivery, DeliveryMode};

/// Why a task ended other than by being told to. Every variant is a stop the operator sees
/// with its CDC code: [`CdcError::from`] is total.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The capture engine stopped with a CDC code.
    #[error(transparent)]
    Stop(Box<CdcError>),
    #[error(transparent)]
    Kafka(Box<KafkaFailure>),
    #[error("offsets: {0}")]
    Offsets(Box<OffsetStoreError>),
    /// Reading the schema topic back at start failed.
    #[error("schema topic: {0}")]
    Schemas(Box<OffsetStoreError>),
    #[error(transparent)]
    Record(Box<BridgeError>),
    /// The mining thread ended without its result (it panicked).
    #[error("the mining thread ended without its result (see the panic in the log)")]
    MiningThread,
    /// A thread of the task could not be started.
    #[error("the {thread} thread could not start: {error}")]
    Thread { thread: &'static str, error: String },
}

macro_rules! boxed_from {
    ($($variant:ident($error:ty)),*) => {$(
        impl From<$error> for TaskError {
            fn from(error: $error) -> Self {
                TaskError::$variant(Box::new(error))
            }
        }
    )*};
}

boxed_from!(
    Stop(CdcError),
    Kafka(KafkaFailure),
    Offsets(OffsetStoreError),
    Record(BridgeError)
);

impl From<SourceSetupError> for TaskError {
    /// A source that cannot be built is a stop with its CDC code.
    fn from(error: SourceSetupError) -> Self {
        TaskError::Stop(Box::new(error.into()))
    }
}

impl From<TaskError> for CdcError {
    /// The stop the operator sees: the status trace, the `stop` ops event, the exit message.
    fn from(error: TaskError) -> CdcError {
        match error {
            TaskError::Stop(stop) => *stop,
            TaskError::Kafka(failure) => (*failure).into(),
            TaskError::Offsets(failure) => (*failure).into(),
            TaskError::Schemas(failure) => {
                let inner = CdcError::from(*failure);
                let retried = inner.is_retried();
                let error = CdcError::new(
                    inner.code(),
                    format!("reading the schema topic back: {}", inner.message()),
                )
                .with_source(inner);
                if retried {
                    error
                } else {
                    error.without_retry()
                }
            }
            TaskError::Record(failure) => (*failure).into(),
            error @ (TaskError::MiningThread | TaskError::Thread { .. }) => {
                CdcError::new(CdcCode::TaskThread, error.to_string())
            }
        }
    }
}

/// What the worker shows of a running task: its metrics, updated as it runs.
#[derive(Debug)]
pub struct TaskStats {
    pub engine: Mutex<EngineMetrics>,
    pub buffer: Mutex<BufferMetrics>,
    pub delivery: Mutex<DeliveryMetrics>,
    /// The engine's open transactions, taken after a step at most once per
    /// [`TRANSACTIONS_EVERY`]; `None` until the first.
    pub transactions: Mutex<Option<Arc<OpenTransactions>>>,
    /// Engine records in the queue.
    pub queue_depth: AtomicU64,
    /// At least once: the producer's delivery tracker, so that the acknowledged count is read
    /// as it stands, not as the delivery thread last offered it (up to its idle tick late).
    acks: OnceLock<Arc<Mutex<acks::AckTracker>>>,
    /// The resume SCN of the last offset committed (or read at start); 0 for none yet. The
    /// `stop` ops event carries it.
    resume_scn: AtomicU64,
    /// The task got past its start: its clients, topics, offsets and source are set up and
    /// delivery began. A retried failure after that begins a new retry budget.
    started: AtomicBool,
    /// The mining thread of a task that stopped while a step was still running.
    lingering: Mutex<Option<JoinHandle<Result<(), CdcError>>>>,
    /// The task's work is done (`cdc.snapshot.mode=snapshot_only` and the snapshot is
    /// complete): the connector stops rather than starting it again.
    finished: AtomicBool,
}

impl TaskStats {
    /// Whether the task ended because its work is done (a `snapshot_only` snapshot complete).
    pub fn finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// The delivery counters as they stand.
    pub fn delivery(&self) -> DeliveryMetrics {
        let mut delivery = *self.delivery.lock();
        delivery.queue_depth = self.queue_depth.load(Ordering::SeqCst);
        if let Some(acks) = self.acks.get() {
            let acked = acks.lock().acked_records();
            delivery.records_acknowledged = delivery.records_acknowledged.max(acked);
        }
        delivery
    }
}

impl TaskStats {
    /// An offset resuming at `scn` was committed (or read at start).
    pub(crate) fn note_committed(&self, scn: Scn) {
        self.resume_scn.store(scn.0, Ordering::Relaxed);
    }

    /// Where the task resumes from, as far as it committed; `None` before any offset.
    pub fn resume_scn(&self) -> Option<Scn> {
        match self.resume_scn.load(Ordering::Relaxed) {
            0 => None,
            scn => Some(Scn(scn)),
        }
    }

    /// Whether the task got past its start (see [`TaskStats::started`]'s field).
    pub fn started(&self) -> bool {
        self.started.load(Ordering::SeqCst)
    }

    /// Waits for the mining thread a stopped task left running (its step in progress), so
    /// that two engines never share the spill directory or mine at once. Logs how it ended.
    pub fn wait_for_lingering_mining(&self) {
        let Some(thread) = self.lingering.lock().take() else {
            return;
        };
        tracing::info!("waiting for the mining step of the previous task to end");
        match thread.join() {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "the previous task's mining thread stopped"),
            Err(_) => tracing::warn!("the previous task's mining thread ended without its result"),
        }
    }
}

impl Default for TaskStats {
    /// Nothing delivered yet: the commit time and the lag are unknown (−1).
    fn default() -> Self {
        TaskStats {
            engine: Mutex::default(),
            buffer: Mutex::default(),
            delivery: Mutex::new(DeliveryMetrics {
                last_commit_timestamp_ms: -1,
                millis_behind_source: -1,
                scn_lag: -1,
                ..DeliveryMetrics::default()
            }),
            transactions: Mutex::new(None),
            queue_depth: AtomicU64::new(0),
            acks: OnceLock::new(),
            resume_scn: AtomicU64::new(0),
            started: AtomicBool::new(false),
            lingering: Mutex::new(None),
            finished: AtomicBool::new(false),
        }
    }
}

/// What a running task is told from outside.
#[derive(Debug, Default)]
pub struct TaskSignals {
    /// Stop: finish the Oracle transaction being delivered, commit, return.
    stop: AtomicBool,
    /// Pause: finish the Oracle transaction being delivered, commit, then wait.
    paused: AtomicBool,
    /// The running task's delivery wait, rung when a signal changes.
    bell: Mutex<Option<queue::Bell>>,
}

impl TaskSignals {
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    pub fn pausing(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Tells the task to stop (it finishes the Oracle transaction being delivered first).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.ring();
    }

    /// Pauses the task (at the next boundary between Oracle transactions) or resumes it.
    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::SeqCst);
        self.ring();
    }

    fn ring(&self) {
        if let Some(bell) = self.bell.lock().as_ref() {
            bell.ring_signal();
        }
    }
}

/// How a task treats its Kafka cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskOptions {
    /// Create the side topics and each table's topic when absent. Off for a cluster that
    /// creates topics itself on first use and has no admin API (the demo's mock cluster).
    pub create_topics: bool,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            create_topics: true,
        }
    }
}

/// Whether a configuration delivers exactly once: `transaction.boundary=connector`.
pub fn delivery_mode(config: &CdcConfig) -> DeliveryMode {
    if config.connect.transaction_boundary == TransactionBoundary::Connector {
        DeliveryMode::ExactlyOnce
    } else {
        DeliveryMode::AtLeastOnce
    }
}

/// The `transactional.id` of a connector: stable across restarts, so a new producer fences
/// a zombie of the previous run. `cdc.kafka.transactional.id` overrides it.
pub fn transactional_id(config: &CdcConfig) -> String {
    config
        .kafka
        .client_properties
        .iter()
        .find(|(k, _)| *k == "transactional.id")
        .map(|(_, v)| v.expose().to_owned())
        .unwrap_or_else(|| format!("oracle-cdc-{}", config.connect.name))
}

/// Runs one task of the connector until it is told to stop ([`TaskSignals::request_stop`]) or
/// fails.
pub fn run_task(
    config: &CdcConfig,
    stats: &Arc<TaskStats>,
    signals: &Arc<TaskSignals>,
    options: TaskOptions,
) -> Result<(), TaskError> {
    run_task_with_source(config, stats, signals, options, |position| {
        cdc_logminer::source::from_config(config, position)
    })
}

/// [`run_task`] with the redo source that `open` makes instead of the one `cdc.source` names:
/// for a service that embeds the connector over a source of its own. `open` is called once
/// the stored offset has been read, with its position (`None` on a first start), and before
/// mining begins; everything else (Kafka, offsets, the journal, delivery) is as `run_task`
/// does it.
pub fn run_task_with_source<S, F>(
    config: &CdcConfig,
    stats: &Arc<TaskStats>,
    signals: &Arc<TaskSignals>,
    options: TaskOptions,
    open: F,
) -> Result<(), TaskError>
where
    S: RedoSource + Send + 'static,
    F: FnOnce(Option<&Position>) -> Result<S, SourceSetupError>,
{
    let clients = KafkaClients::from_config(config)?;
    let mode = delivery_mode(config);
    let acks = Arc::new(Mutex::new(acks::AckTracker::new()));
    // exactly-once counts a record once its Kafka transaction committed, which the delivery
    // thread says itself
    if mode == DeliveryMode::AtLeastOnce {
        let _ = stats.acks.set(Arc::clone(&acks));
    }
    let txn_id = transactional_id(config);
    let producer = clients.producer(
        (mode == DeliveryMode::ExactlyOnce).then_some(txn_id.as_str()),
        Arc::clone(&acks),
        options.create_topics,
    )?;
    // a cluster that does not answer is found here, in seconds, and retried (CDC-9001),
    // rather than by the first admin call's timeout
    producer.wait_for_brokers(
        &clients.bootstrap,
        &config.connect.offset_storage_topic,
        &|| signals.stopping(),
    )?;
    if signals.stopping() {
        return Ok(());
    }
    let mut admin = if options.create_topics {
        Some(clients.admin()?)
    } else {
        None
    };
    if let Some(admin) = admin.as_mut() {
        admin.ensure_all(&side_topic_specs(config))?;
    }
    // Fence any zombie of a previous run before reading the offsets it may have committed.
    if mode == DeliveryMode::ExactlyOnce {
        producer.init_transactions()?;
    }
    let store = Arc::new(KafkaOffsetStore::open_with(
        &clients.bootstrap,
        &config.connect.offset_storage_topic,
        &config.connect.name,
        &config.topics.prefix,
        clients.props(),
        crate::kafka::offsets::DEFAULT_TIMEOUT,
        options.create_topics,
    )?);
    let stored = store.read_latest_stored()?;
    if let Some(stored) = &stored {
        stats.note_committed(stored.position.resume.scn);
    }
    tracing::info!(
        connector = %config.connect.name,
        mode = ?mode,
        resume_scn = stored.as_ref().map(|s| s.position.resume.scn.0),
        "task starting"
    );
    if signals.stopping() {
        return Ok(());
    }
    let source = open(stored.as_ref().map(|s| &s.position))?;
    // the journal topic, read back before mining resumes; written through the record stream
    let journal = JournalSetup {
        store: Box::new(cdc_journal::kafka::KafkaJournal::new(
            &clients.bootstrap,
            clients.props(),
            &config.topics.txjournal,
        )?),
        converter: cdc_journal::JournalConverter::from_config(config),
        settings: cdc_journal::JournalSettings::from_config(config),
    };
    run_with_source(
        config,
        source,
        stored,
        stats,
        signals,
        producer,
        store,
        admin,
        mode,
        Some(journal),
    )
}

#[allow(clippy::too_many_arguments)]
fn run_with_source<S: RedoSource + Send + 'static>(
    config: &CdcConfig,
    mut source: S,
    stored: Option<StoredOffset>,
    stats: &Arc<TaskStats>,
    signals: &Arc<TaskSignals>,
    producer: crate::kafka::RecordProducer,
    store: Arc<KafkaOffsetStore>,
    admin: Option<crate::kafka::TopicAdmin>,
    mode: DeliveryMode,
    journal: Option<JournalSetup>,
) -> Result<(), TaskError> {
    // typed as the engine types it when it opens
    let database = source.identity().map_err(source_stop)?.name;
    let record_settings = Arc::new(RecordSettings::from_config(config, &database));
    // the schema versions the last run published: numbering goes on from them
    let schemas = StoredSchemas::read(
        &store,
        &config.topics.schema,
        &config.topics.prefix,
        admin.is_some(),
    )
    .map_err(|e| TaskError::Schemas(Box::new(e)))?;
    let mut settings = EngineSettings::from_config(config);
    settings.published = schemas.published(&record_settings);
    let position = stored.as_ref().map(|s| s.position.clone());
    let mut engine =
        CaptureEngine::open(source, settings, position, Box::new(SystemClock::default()))
            .map_err(TaskError::from)?;
    if let Some(journal) = journal {
        engine.attach_journal(journal).map_err(TaskError::from)?;
    }
    // signals are read from after the last one the position records; off under
    // snapshot_only; a reader that cannot start leaves the task running without signals
    let _signal_reader = if config.snapshot.mode == SnapshotMode::SnapshotOnly {
        None
    } else {
        let started = KafkaClients::from_config(config)
            .map_err(|e| e.to_string())
            .and_then(|clients| {
                SignalReader::start(
                    &clients,
                    &config.connect.name,
                    &config.topics.signals,
                    engine.signals_from(),
                )
            });
        match started {
            Ok((reader, rx)) => {
                engine.attach_signals(rx);
                Some(reader)
            }
            Err(error) => {
                tracing::warn!(%error, topic = %config.topics.signals, "signals are not read");
                None
            }
        }
    };
    let mut builder = RecordBuilder::new(record_settings.as_ref().clone());
    builder.seed_schema_history(schemas.pruned(engine.position().resume.scn));

    // before the mining thread: a delivery that cannot start leaves nothing running
    let reader = match &stored {
        Some(_) if mode == DeliveryMode::AtLeastOnce => Some(store.reader()?),
        _ => None,
    };
    let capacity = usize::try_from(config.poll.max_records)
        .unwrap_or(2000)
        .max(1)
        .saturating_mul(delivery::POLLS_IN_FLIGHT);
    let (tx, rx) = queue::record_queue(capacity, QUEUE_MAX_BYTES, Arc::clone(stats));
    producer.acks().lock().set_bell(rx.bell());
    *signals.bell.lock() = Some(rx.bell());
    let mut delivery = Delivery::new(
        mode,
        config,
        builder,
        producer,
        store,
        admin,
        Arc::clone(stats),
        (rx.bell(), rx.ack_waiter()),
    )?;
    if let (Some(stored), Some(reader)) = (&stored, reader) {
        delivery.skip_present(stored, reader);
    }
    stats.started.store(true, Ordering::SeqCst);
    let mining_stop = Arc::new(AtomicBool::new(false));
    let mining = {
        let stats = Arc::clone(stats);
        let stop = Arc::clone(&mining_stop);
        std::thread::Builder::new()
            .name("oracle-cdc-mining".into())
            .spawn(move || mine(engine, tx, &stats, &stop))
            .map_err(|e| TaskError::Thread {
                thread: "mining",
                error: e.to_string(),
            })?
    };

    let delivered = deliver(&mut delivery, &rx, signals, config);
    // Stop mining: a step in progress finds the queue closed.
    mining_stop.store(true, Ordering::SeqCst);
    drop(rx);
    // Finish delivery before waiting for the mining thread (a step may take long, and a
    // Kafka transaction must not stay open meanwhile). After a delivery error the open Kafka
    // transaction may hold part of an engine record: it is aborted, never committed.
    let finished = if delivered.is_ok() {
        delivery.finish()
    } else {
        delivery.abandon()
    };
    // A stop (or a failed delivery) does not wait for a mining step in progress past the
    // shutdown timeout: a slow LogMiner query may take minutes. The thread ends once its step
    // returns and finds the queue closed; the next task start waits for it first.
    let mined = if signals.stopping() || delivered.is_err() || finished.is_err() {
        let reserve = config.poll.shutdown_timeout - boundary_wait(config.poll.shutdown_timeout);
        let deadline = Instant::now() + reserve;
        while !mining.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if mining.is_finished() {
            mining.join()
        } else {
            tracing::warn!(
                "the task stopped while a mining step was still running; the next task start \
                 waits for that step to end"
            );
            *stats.lingering.lock() = Some(mining);
            Ok(Ok(()))
        }
    } else {
        mining.join()
    };
    *signals.bell.lock() = None;
    stats.queue_depth.store(0, Ordering::SeqCst);
    delivered?;
    finished?;
    match mined {
        Err(_) => Err(TaskError::MiningThread),
        Ok(Err(stop)) => Err(stop.into()),
        Ok(Ok(())) => Ok(()),
    }
}

/// The bytes the engine records in the queue between mining and delivery may hold on the heap,
/// about (besides its bound in records, `cdc.poll.max.records` × [`delivery::POLLS_IN_FLIGHT`]):
/// a few large rows must not hold the memory of thousands.
pub(crate) const QUEUE_MAX_BYTES: usize = 64 << 20;

/// With nothing else to do, how long the delivery loop waits before it commits an open Kafka
/// transaction at a boundary (exactly once) or hands on what was acknowledged (at least once).
const QUIET_TICK: Duration = Duration::from_millis(20);

/// How long a stopping task waits for a boundary between Oracle transactions: the shutdown
/// timeout less the time it needs to end its Kafka transaction and commit (a quarter of the
/// timeout, at most 2 s), so that the whole stop fits in `cdc.shutdown.timeout.ms`, after which
/// the binary exits whatever the task is waiting on.
pub fn boundary_wait(shutdown_timeout: Duration) -> Duration {
    shutdown_timeout.saturating_sub((shutdown_timeout / 4).min(Duration::from_secs(2)))
}

/// The delivery loop: takes engine records from the queue until told to stop or the engine
/// ended, stopping only at a boundary between Oracle transactions (or after the shutdown
/// timeout). It waits on one thing ([`queue::QueueReceiver::next`]): a signal, the next
/// record (not while paused), or the quiet tick.
fn deliver(
    delivery: &mut Delivery,
    rx: &queue::QueueReceiver,
    signals: &TaskSignals,
    config: &CdcConfig,
) -> Result<(), TaskError> {
    let mut stop_since: Option<Instant> = None;
    let boundary_wait = boundary_wait(config.poll.shutdown_timeout);
    loop {
        delivery.check()?;
        let mut deadline = Instant::now() + QUIET_TICK;
        let paused = if signals.stopping() {
            let since = *stop_since.get_or_insert_with(Instant::now);
            if delivery.at_boundary() || since.elapsed() >= boundary_wait {
                return Ok(());
            }
            deadline = deadline.min(since + boundary_wait);
            false
        } else {
            signals.pausing() && delivery.at_boundary()
        };
        if paused {
            delivery.idle()?;
        }
        match rx.next(false, !paused, deadline) {
            queue::Wake::Record { record, more } => delivery.handle(record, more)?,
            queue::Wake::Deadline if !paused => delivery.idle()?,
            queue::Wake::Ended => return Ok(()),
            queue::Wake::Deadline | queue::Wake::Signal | queue::Wake::Acks => {}
        }
    }
}

/// The mining thread: the engine's run loop until stopped or the engine stops, the task's
/// metrics refreshed after every step.
fn mine<S: RedoSource>(
    mut engine: CaptureEngine<S>,
    mut sink: queue::QueueSender,
    stats: &TaskStats,
    stop: &AtomicBool,
) -> Result<(), CdcError> {
    let mut transactions_at = None;
    engine.run(&mut sink, stop, |engine| {
        publish(engine, stats, &mut transactions_at)
    })?;
    if engine.snapshot_finished() {
        tracing::info!(
            "cdc.snapshot.mode=snapshot_only: the snapshot is complete; the task ends without streaming"
        );
        stats.finished.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// How often, at most, the mining thread takes a view of the open transactions for REST: it
/// visits every open transaction, so not after every step.
pub const TRANSACTIONS_EVERY: Duration = Duration::from_secs(1);

fn publish<S: RedoSource>(
    engine: &CaptureEngine<S>,
    stats: &TaskStats,
    transactions_at: &mut Option<Instant>,
) {
    *stats.engine.lock() = engine.metrics();
    *stats.buffer.lock() = engine.buffer_metrics();
    if transactions_at.is_none_or(|at| at.elapsed() >= TRANSACTIONS_EVERY) {
        *transactions_at = Some(Instant::now());
        let view = engine.open_transactions(OPEN_TRANSACTIONS_LIMIT);
        *stats.transactions.lock() = Some(Arc::new(view));
    }
}

/// What the worker's unit tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::Arc;

    use cdc_core::Scn;
    use cdc_offset::{DbIdentity, Position, ResumePoint};

    /// A position resuming at `scn`.
    pub fn position(scn: u64) -> Arc<Position> {
        Arc::new(Position::new(
            ResumePoint::from_scn(Scn(scn)),
            DbIdentity::new(1, Scn(1)),
            1,
        ))
    }

    /// The test broker (`CDC_TEST_BROKER`); `None`, said once, when there is none, which
    /// under CI is a failure.
    #[allow(clippy::panic)]
    pub fn broker() -> Option<String> {
        match std::env::var("CDC_TEST_BROKER") {
            Ok(broker) if !broker.is_empty() => Some(broker),
            _ if std::env::var_os("CI").is_some() => panic!("CI must set CDC_TEST_BROKER"),
            _ => {
                eprintln!("skipped: CDC_TEST_BROKER is not set");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_least_once_counts_acknowledged_records_as_the_reports_arrive() {
        let stats = TaskStats::default();
        let acks = Arc::new(Mutex::new(acks::AckTracker::new()));
        let _ = stats.acks.set(Arc::clone(&acks));
        let (first, second) = {
            let mut tracker = acks.lock();
            (tracker.register(2, None), tracker.register(1, None))
        };
        assert_eq!(stats.delivery().records_acknowledged, 0);
        // reports in any order, none offered by the delivery thread yet
        acks.lock().ack(second);
        acks.lock().ack(first);
        assert_eq!(stats.delivery().records_acknowledged, 2);
        // a count the delivery thread set (a committed Kafka transaction) is never lowered
        stats.delivery.lock().records_acknowledged = 5;
        assert_eq!(stats.delivery().records_acknowledged, 5);
        stats.queue_depth.store(3, Ordering::SeqCst);
        assert_eq!(stats.delivery().queue_depth, 3);
    }

    #[test]
    fn every_task_error_is_a_coded_stop() {
        let cases: Vec<(TaskError, CdcCode)> = vec![
            (
                CdcError::new(CdcCode::LogPurged, "gone").into(),
                CdcCode::LogPurged,
            ),
            (KafkaFailure::NoBrokers.into(), CdcCode::KafkaClientSetup),
            (
                OffsetStoreError::NotCompacted {
                    topic: "o".into(),
                    policy: "delete".into(),
                }
                .into(),
                CdcCode::OffsetsStore,
            ),
            (
                TaskError::Schemas(Box::new(OffsetStoreError::ReadTimeout {
                    topic: "s".into(),
                    waited: Duration::from_secs(1),
                    pending: 1,
                })),
                CdcCode::KafkaUnavailable,
            ),
            (
                BridgeError::NoKey {
                    table: "APP.T".into(),
                }
                .into(),
                CdcCode::Decode,
            ),
            (
                BridgeError::NameCollision {
                    what: "tables",
                    first: "A.B".into(),
                    second: "A_B".into(),
                    name: "a_b".into(),
                }
                .into(),
                CdcCode::NameCollision,
            ),
            (TaskError::MiningThread, CdcCode::TaskThread),
            (
                TaskError::Thread {
                    thread: "offsets",
                    error: "Resource temporarily unavailable".into(),
                },
                CdcCode::TaskThread,
            ),
        ];
        for (error, code) in cases {
            let shown = error.to_string();
            let stop = CdcError::from(error);
            assert_eq!(stop.code(), code, "{shown}");
            let text = stop.to_string();
            assert!(text.starts_with(&format!("[{}] ", code.id())), "{text}");
            assert!(text.contains("Operator action: "), "{text}");
            assert!(text.ends_with(code.runbook()), "{text}");
        }
        // the schema topic's context is kept, and so is a retried class
        let schemas = CdcError::from(TaskError::Schemas(Box::new(
            OffsetStoreError::ReadTimeout {
                topic: "s".into(),
                waited: Duration::from_secs(1),
                pending: 1,
            },
        )));
        assert!(
            schemas
                .message()
                .starts_with("reading the schema topic back: ")
        );
        assert!(schemas.is_retried());
    }

    #[test]
    fn a_stop_waits_for_a_boundary_less_than_the_shutdown_timeout() {
        assert_eq!(
            boundary_wait(Duration::from_secs(30)),
            Duration::from_secs(28)
        );
        assert_eq!(
            boundary_wait(Duration::from_secs(1)),
            Duration::from_millis(750)
        );
    }
}
