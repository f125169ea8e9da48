//! Engine records to Kafka, exactly once or at least once.
//!
//! - Exactly once (`transaction.boundary=connector`): records go out in Kafka transactions of
//!   the transactional producer; each Kafka transaction ends where [`TransactionPlanner`]
//!   says, and carries, as its last record, the offset record (the Connect offsets topic) with
//!   the position of its last engine record, so records and offset commit together.
//! - At least once: the idempotent producer sends; [`AckTracker`] follows the delivery
//!   reports; an offsets thread writes the position of the newest record acknowledged with all
//!   its predecessors, as soon as the previous write is done. At most [`ALO_WINDOW_POLLS`] ×
//!   `cdc.poll.max.records` engine records are sent past the last offset written (acknowledged
//!   records that share its position, a snapshot chunk's rows, count as written). After a
//!   crash the restarted task mines them again and sends only those not found in their topics
//!   ([`crate::worker::redelivery`]): what was in flight and never reached the broker.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cdc_core::config::CdcConfig;
use cdc_core::{OpsEvent, OpsKind};
use cdc_logminer::engine::{EngineRecord, RecordKind};
use cdc_offset::Position;
use parking_lot::{Condvar, Mutex};

use crate::kafka::offsets::{KafkaOffsetStore, OffsetStoreError, StoredOffset};
use crate::kafka::{KafkaFailure, RecordProducer, TopicAdmin, TopicCreator};
use crate::record::builder::{KafkaRecord, RecordBuilder, RecordContext};
use crate::worker::acks::AckProgress;
use crate::worker::crash::{self, CrashPoint};
use crate::worker::eos_boundaries::{CommitReason, Decision, EosBounds, Sent, TransactionPlanner};
use crate::worker::queue::{AckWaiter, Bell};
use crate::worker::redelivery::PresentRecords;
use crate::worker::{TaskError, TaskStats};
use rdkafka::consumer::BaseConsumer;

/// How many polls' worth of engine records (`cdc.poll.max.records` each) the queue between
/// mining and delivery holds.
pub(crate) const POLLS_IN_FLIGHT: usize = 4;

/// At least once, how many polls' worth of engine records (`cdc.poll.max.records` each) may
/// be sent past the last offset written. A Connect worker sends poll after poll without
/// waiting for acknowledgements, bounded only by its producer's buffer; a window of one poll
/// bound the rate to the broker's acknowledgement latency, and small windows keep produce
/// requests small (`docs/benchmarks.md`): librdkafka sends one request per partition, at most
/// five at a time, so many tables need deep partition queues (in the ALO bench, medians of 59 k
/// records/s at 16 polls and 68 k at 64). The producer's own buffer bounds the memory held.
/// The window is also how many change records a restart looks for in their topics before
/// sending them again.
pub(crate) const ALO_WINDOW_POLLS: u64 = 64;

/// At least once, the longest wait for the window between two looks at it.
const WINDOW_WAIT_MAX: Duration = Duration::from_millis(100);

/// How records are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryMode {
    ExactlyOnce,
    AtLeastOnce,
}

/// The Oracle transaction being split over several Kafka transactions.
#[derive(Debug, Clone)]
struct SplitProgress {
    xid: String,
    commit_scn: u64,
    events: u64,
    /// Kafka transactions it took so far (including the open one).
    parts: u64,
}

/// The delivery side of a task.
pub struct Delivery {
    mode: DeliveryMode,
    builder: RecordBuilder,
    producer: RecordProducer,
    store: Arc<KafkaOffsetStore>,
    /// Creates the table topics; `None`: the cluster creates topics on first use.
    topic_creator: Option<TopicCreator>,
    stats: Arc<TaskStats>,
    planner: TransactionPlanner,
    /// Whether a Kafka transaction is open (exactly once).
    kafka_txn_open: bool,
    /// Whether the last record handled ended an Oracle transaction or was a side record.
    at_boundary: bool,
    split: Option<SplitProgress>,
    /// The position of the last engine record sent.
    last_position: Option<Arc<Position>>,
    /// Exactly once: the position of the last committed Kafka transaction. An abort takes
    /// `last_position` back to it, so nothing later commits the position of aborted records.
    committed_position: Option<Arc<Position>>,
    committer: Option<OffsetCommitter>,
    shutdown_timeout: Duration,
    out: Vec<KafkaRecord>,
    /// Whether the `startup` ops event was written (before the first engine record).
    started: bool,
    /// The last record was a commit's last change, or one of the tombstones after it.
    after_commit: bool,
    /// The next record sent aborts the process when acknowledged ([`crash`]).
    crash_next_ack: bool,
    /// At least once: engine records sent past the last offset written, at most
    /// [`ALO_WINDOW_POLLS`] × `cdc.poll.max.records`.
    window: u64,
    /// At least once, after a restart: the change records already in their topics, not sent
    /// again.
    present: Option<PresentRecords>,
    /// At least once, the wait while the window is full: rung by delivery reports and offset
    /// writes.
    acks: AckWaiter,
    /// The acknowledgement tracker's progress, read without its lock.
    progress: Arc<AckProgress>,
    /// At least once: how many engine records the last position offered to the offsets thread
    /// covered.
    offered_through: Option<u64>,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("mode", &self.mode)
            .field("kafka_txn_open", &self.kafka_txn_open)
            .field("at_boundary", &self.at_boundary)
            .finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Delivery {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        mode: DeliveryMode,
        config: &CdcConfig,
        builder: RecordBuilder,
        producer: RecordProducer,
        store: Arc<KafkaOffsetStore>,
        admin: Option<TopicAdmin>,
        stats: Arc<TaskStats>,
        (bell, acks): (Bell, AckWaiter),
    ) -> Result<Delivery, TaskError> {
        let window = u64::from(config.poll.max_records.max(1)).saturating_mul(ALO_WINDOW_POLLS);
        let committer = match mode {
            DeliveryMode::AtLeastOnce => Some(
                OffsetCommitter::start(Arc::clone(&store), Arc::clone(&stats), window, Some(bell))
                    .map_err(|e| TaskError::Thread {
                        thread: "offsets",
                        error: e.to_string(),
                    })?,
            ),
            DeliveryMode::ExactlyOnce => None,
        };
        let topic_creator = match admin {
            Some(admin) => {
                let side_topics = crate::kafka::side_topic_specs(config)
                    .into_iter()
                    .map(|spec| spec.name);
                Some(
                    TopicCreator::start(admin, side_topics).map_err(|e| TaskError::Thread {
                        thread: "topic-creating",
                        error: e.to_string(),
                    })?,
                )
            }
            None => None,
        };
        let progress = producer.acks().lock().progress();
        Ok(Delivery {
            mode,
            builder,
            producer,
            store,
            topic_creator,
            stats,
            planner: TransactionPlanner::new(EosBounds::from_settings(&config.eos)),
            kafka_txn_open: false,
            at_boundary: true,
            split: None,
            last_position: None,
            committed_position: None,
            committer,
            shutdown_timeout: config.poll.shutdown_timeout,
            out: Vec::new(),
            started: false,
            after_commit: false,
            crash_next_ack: false,
            window,
            present: None,
            acks,
            progress,
            offered_through: None,
        })
    }

    /// At least once, restarting from `stored`: when the task that wrote it was at least once
    /// too, the change records it may have sent past it are looked for in their topics
    /// (read with `consumer`) and those found are not sent again.
    pub fn skip_present(&mut self, stored: &StoredOffset, consumer: BaseConsumer) {
        if self.mode != DeliveryMode::AtLeastOnce {
            return;
        }
        if let Some(window) = stored.delivered_window.filter(|w| *w > 0) {
            self.present = Some(PresentRecords::new(
                consumer,
                self.shutdown_timeout
                    .max(crate::kafka::offsets::DEFAULT_TIMEOUT),
                &stored.position,
                window,
            ));
        }
    }

    /// Whether the task may stop here without cutting an Oracle transaction.
    pub fn at_boundary(&self) -> bool {
        self.at_boundary
    }

    /// Delivers one engine record. `waiting`: whether more records are queued.
    pub fn handle(&mut self, record: EngineRecord, waiting: bool) -> Result<(), TaskError> {
        let now = now_ms();
        let exactly_once = self.mode == DeliveryMode::ExactlyOnce;
        let (sent, split) = match &record.kind {
            RecordKind::Change(change) => {
                let split = exactly_once && self.planner.bounds().splits(&change.commit);
                let sent = if change.is_last() {
                    Sent::LastChange { split }
                } else {
                    Sent::Change { split }
                };
                (sent, split)
            }
            RecordKind::Snapshot(_) => (Sent::SnapshotRow, false),
            // the record builder refuses a kind it has no format for
            _ => (Sent::Side, false),
        };
        let tombstone = matches!(&record.kind, RecordKind::Journal(j) if j.chunk.is_none());
        if self.mode == DeliveryMode::AtLeastOnce && tombstone {
            self.wait_for_offsets()?;
        }
        if tombstone && self.after_commit && crash::reached(CrashPoint::JournalCommitTombstones) {
            crash::crash(CrashPoint::JournalCommitTombstones);
        }
        self.crash_next_ack = matches!(&record.kind, RecordKind::Journal(j) if j.chunk.is_some())
            && crash::reached(CrashPoint::JournalChunkAcked);
        // a commit's tombstones follow its last record
        self.after_commit = match &record.kind {
            RecordKind::Change(change) => change.is_last(),
            RecordKind::Journal(_) => tombstone && self.after_commit,
            _ => false,
        };
        let context = RecordContext {
            now_ms: i64::try_from(now).unwrap_or(i64::MAX),
            split,
        };
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        if !self.started {
            // The task's first record (the start heartbeat) follows a `startup` event with
            // the position it starts from.
            self.started = true;
            let startup = self.startup_event(&record.position);
            self.builder.append(&startup, context, &mut out)?;
        }
        self.builder.append(&record, context, &mut out)?;
        let RecordKind::Change(change) = &record.kind else {
            return self.send_and_decide(out, record.position, sent, now, waiting);
        };
        if split {
            let xid = change.commit.con_xid.to_string();
            if self.split.as_ref().is_none_or(|s| s.xid != xid) {
                self.split = Some(SplitProgress {
                    xid,
                    commit_scn: change.commit.commit_scn.0,
                    events: change.commit.event_count,
                    parts: 1,
                });
            }
        }
        if let Some(time) = change.commit.commit_time {
            let commit_ms = i64::try_from(time.epoch_nanos() / 1_000_000).unwrap_or(i64::MAX);
            let mut delivery = self.stats.delivery.lock();
            delivery.last_commit_timestamp_ms = commit_ms;
            delivery.millis_behind_source = context.now_ms.saturating_sub(commit_ms).max(0);
        }
        if matches!(sent, Sent::LastChange { split: true })
            && let Some(progress) = self.split.take()
        {
            // The last part names the split transaction on the ops topic, in the same Kafka
            // transaction, with the same position as the last change.
            let ops = EngineRecord {
                kind: RecordKind::Ops(OpsEvent {
                    kind: OpsKind::TransactionSplit,
                    details: BTreeMap::from([
                        ("xid".to_owned(), progress.xid),
                        ("commit_scn".to_owned(), progress.commit_scn.to_string()),
                        ("events".to_owned(), progress.events.to_string()),
                        ("kafka_transactions".to_owned(), progress.parts.to_string()),
                    ]),
                }),
                position: record.position.clone(),
            };
            let split_context = RecordContext {
                split: false,
                ..context
            };
            self.builder.append(&ops, split_context, &mut out)?;
            self.stats.delivery.lock().split_transactions += 1;
        }
        self.send_and_decide(out, record.position, sent, now, waiting)
    }

    fn startup_event(&self, position: &Arc<Position>) -> EngineRecord {
        let last_commit = position
            .last_commit
            .as_ref()
            .map(|c| format!("{} scn {} event_index {}", c.xid, c.scn.0, c.event_index))
            .unwrap_or_default();
        EngineRecord {
            kind: RecordKind::Ops(OpsEvent {
                kind: OpsKind::Startup,
                details: BTreeMap::from([
                    ("resume_scn".to_owned(), position.resume.scn.0.to_string()),
                    ("last_commit".to_owned(), last_commit),
                    (
                        "database".to_owned(),
                        self.builder.settings().database.clone(),
                    ),
                    ("version".to_owned(), env!("CARGO_PKG_VERSION").to_owned()),
                    (
                        "delivery".to_owned(),
                        match self.mode {
                            DeliveryMode::ExactlyOnce => "exactly-once",
                            DeliveryMode::AtLeastOnce => "at-least-once",
                        }
                        .to_owned(),
                    ),
                ]),
            }),
            position: Arc::clone(position),
        }
    }

    fn send_and_decide(
        &mut self,
        out: Vec<KafkaRecord>,
        position: Arc<Position>,
        sent: Sent,
        now: u64,
        waiting: bool,
    ) -> Result<(), TaskError> {
        let mut out = out;
        // records already on the topics are known by their transaction and event index,
        // which only changes have
        if matches!(sent, Sent::Change { .. } | Sent::LastChange { .. }) {
            self.drop_present(&mut out)?;
        }
        if let Some(creator) = self.topic_creator.as_mut() {
            for record in &out {
                creator.request(&record.topic);
            }
        }
        if self.mode == DeliveryMode::ExactlyOnce && !self.kafka_txn_open {
            self.producer.begin_transaction()?;
            self.kafka_txn_open = true;
            self.planner.began(now);
        }
        if self.mode == DeliveryMode::AtLeastOnce {
            self.wait_for_window()?;
        }
        let count = u32::try_from(out.len()).unwrap_or(u32::MAX);
        let seq = {
            let mut acks = self.producer.acks().lock();
            let seq = acks.register(count, Some(Arc::clone(&position)));
            if std::mem::take(&mut self.crash_next_ack) {
                acks.crash_on_ack(seq);
            }
            seq
        };
        let mut bytes = 0u64;
        for record in &out {
            bytes += record.key.as_ref().map_or(0, Vec::len) as u64
                + record.value.as_ref().map_or(0, Vec::len) as u64;
            self.producer.send(record, seq)?;
        }
        {
            let mut delivery = self.stats.delivery.lock();
            delivery.records_sent += u64::from(count);
            delivery.bytes_sent += bytes;
        }
        self.out = out;
        self.at_boundary = !matches!(sent, Sent::Change { .. } | Sent::SnapshotRow);
        self.last_position = Some(Arc::clone(&position));

        match self.mode {
            DeliveryMode::ExactlyOnce => {
                let decision = self
                    .planner
                    .after(sent, u64::from(count), bytes, now, waiting);
                if let Decision::Commit(reason) = decision {
                    self.commit_kafka(&position)?;
                    if reason == CommitReason::SplitPart
                        && let Some(progress) = self.split.as_mut()
                    {
                        progress.parts += 1;
                        // Between two parts nothing is open and the position resumes inside
                        // the Oracle transaction at the next event index: the task may stop
                        // or pause here.
                        self.at_boundary = true;
                    }
                }
            }
            DeliveryMode::AtLeastOnce => self.offer_if_acked_more(),
        }
        Ok(())
    }

    /// After a restart, drops from `out` (the Kafka records of one change) those already in
    /// their topics; ends the look once every change the crashed task may have sent was
    /// checked.
    fn drop_present(&mut self, out: &mut Vec<KafkaRecord>) -> Result<(), TaskError> {
        let Some(present) = self.present.as_mut() else {
            return Ok(());
        };
        let mut keep = Vec::with_capacity(out.len());
        for record in out.iter() {
            keep.push(!present.contains(record)?);
        }
        let mut keep = keep.into_iter();
        out.retain(|_| keep.next().unwrap_or(true));
        if present.checked_one() {
            tracing::info!(
                skipped = present.skipped(),
                "restart: records already delivered after the offset were not sent again"
            );
            self.stats.delivery.lock().records_already_delivered = present.skipped();
            self.present = None;
        } else {
            self.stats.delivery.lock().records_already_delivered = present.skipped();
        }
        Ok(())
    }

    /// Waits until fewer than `window` engine records were sent past the last offset written,
    /// handing the acknowledged position to the offsets thread meanwhile.
    fn wait_for_window(&mut self) -> Result<(), TaskError> {
        self.wait_written_within(self.window)
    }

    /// Under at-least-once, a journal tombstone goes out only once the offset of every record
    /// before it is written. A restart from an older offset mines the ended transaction
    /// again, and needs its chunks: a tombstone acknowledged ahead of that offset would have
    /// taken them away (`docs/decisions.md`, D28).
    fn wait_for_offsets(&mut self) -> Result<(), TaskError> {
        self.wait_written_within(1)
    }

    fn wait_written_within(&mut self, window: u64) -> Result<(), TaskError> {
        loop {
            // armed before the look: an acknowledgement after it rings the wait below
            self.acks.arm();
            let registered = self.progress.registered();
            let written = self
                .committer
                .as_ref()
                .map_or(registered, OffsetCommitter::written_through);
            // Nothing goes past the task's first record (the start heartbeat at a first start)
            // until its offset is written: a crash then always leaves an offset that says how
            // far the task may have sent.
            let window = if written == 0 { 1 } else { window };
            if registered.saturating_sub(written) < window {
                self.acks.disarm();
                return Ok(());
            }
            self.offer_acked();
            self.check()?;
            // a delivery report or an offset written rings it; the deadline only bounds how
            // long a missed ring could hold the window
            self.acks.wait(Instant::now() + WINDOW_WAIT_MAX);
        }
    }

    /// Ends the open Kafka transaction with the offset record of `position`.
    fn commit_kafka(&mut self, position: &Position) -> Result<(), TaskError> {
        let json = position.to_json();
        let seq = self.producer.acks().lock().register(1, None);
        let sent = self.producer.send_plain(
            self.store.topic(),
            self.store.key().as_bytes(),
            Some(json.as_bytes()),
            seq,
        );
        let committed = sent.and_then(|()| self.producer.commit_transaction());
        self.kafka_txn_open = false;
        self.planner.ended();
        if let Err(error) = committed {
            self.abort_quietly();
            return Err(error.into());
        }
        self.committed_position = Some(Arc::new(position.clone()));
        self.stats.note_committed(position.resume.scn);
        let acked = self.producer.acks().lock().acked_records();
        let mut delivery = self.stats.delivery.lock();
        delivery.kafka_transactions_committed += 1;
        delivery.offsets_committed += 1;
        delivery.records_acknowledged = acked;
        Ok(())
    }

    fn abort_quietly(&mut self) {
        if let Err(error) = self.producer.abort_transaction() {
            tracing::warn!(%error, "aborting the Kafka transaction failed");
        }
        self.producer.acks().lock().clear_inflight();
        self.kafka_txn_open = false;
        self.planner.ended();
        self.last_position = self.committed_position.clone();
        self.at_boundary = true;
        self.split = None;
        self.stats.delivery.lock().kafka_transactions_aborted += 1;
    }

    /// Nothing arrived for a moment: under exactly-once, an open Kafka transaction at a
    /// boundary is committed (a quiet database holds nothing back); under at-least-once the
    /// acknowledged position goes to the offsets thread.
    pub fn idle(&mut self) -> Result<(), TaskError> {
        match self.mode {
            DeliveryMode::ExactlyOnce => {
                if self.kafka_txn_open
                    && self.at_boundary
                    && let Some(position) = self.last_position.clone()
                {
                    self.commit_kafka(&position)?;
                }
            }
            DeliveryMode::AtLeastOnce => self.offer_acked(),
        }
        Ok(())
    }

    /// [`Delivery::offer_acked`] when more records were acknowledged since the last offer:
    /// what runs after every record sent, so the tracker's lock, which the producer's delivery
    /// reports hold, is taken only when there is something new to hand over.
    fn offer_if_acked_more(&mut self) {
        if self.offered_through != Some(self.progress.acked_through()) {
            self.offer_acked();
        }
    }

    fn offer_acked(&mut self) {
        let (position, through, acked) = {
            let acks = self.producer.acks().lock();
            (
                acks.acked_position(),
                acks.acked_through(),
                acks.acked_records(),
            )
        };
        self.stats.delivery.lock().records_acknowledged = acked;
        self.offered_through = Some(through);
        if let (Some(committer), Some(position)) = (&self.committer, position) {
            committer.offer(position, through);
        }
    }

    /// Fails when a record could not be delivered or an offset not written.
    pub fn check(&mut self) -> Result<(), TaskError> {
        if let Some(failure) = self
            .topic_creator
            .as_ref()
            .and_then(TopicCreator::take_failure)
        {
            return Err(failure.into());
        }
        // the flags first: the locks they stand for are the delivery reports' and the offsets
        // thread's, and this runs before every record
        if self.progress.failed()
            && let Some((topic, source)) = self.producer.acks().lock().take_failure()
        {
            return Err(KafkaFailure::NotDelivered { topic, source }.into());
        }
        if let Some(committer) = &self.committer
            && let Some(error) = committer.take_failure()
        {
            return Err(error.into());
        }
        Ok(())
    }

    /// Ends delivery: under exactly-once the open Kafka transaction is committed when it ends
    /// at a boundary and aborted otherwise; under at-least-once the producer is flushed and
    /// the acknowledged position written.
    pub fn finish(&mut self) -> Result<(), TaskError> {
        match self.mode {
            DeliveryMode::ExactlyOnce => {
                if self.kafka_txn_open {
                    match self.last_position.clone() {
                        Some(position) if self.at_boundary => self.commit_kafka(&position)?,
                        _ => self.abort_quietly(),
                    }
                }
                Ok(())
            }
            DeliveryMode::AtLeastOnce => {
                let flushed = self.producer.flush(self.shutdown_timeout);
                self.offer_acked();
                if let Some(committer) = self.committer.take() {
                    let settled = flushed.is_ok() && self.producer.acks().lock().in_flight() == 0;
                    committer.finish(settled)?;
                }
                flushed?;
                self.check()
            }
        }
    }

    /// Ends delivery after an error: under exactly-once the open Kafka transaction is
    /// aborted (it may hold part of an engine record); under at-least-once as
    /// [`Delivery::finish`] (only acknowledged positions are ever written).
    pub fn abandon(&mut self) -> Result<(), TaskError> {
        match self.mode {
            DeliveryMode::ExactlyOnce => {
                if self.kafka_txn_open {
                    self.abort_quietly();
                }
                Ok(())
            }
            DeliveryMode::AtLeastOnce => self.finish(),
        }
    }
}

/// At least once, the shortest time between the starts of two offset writes (but the last,
/// when the task stops). A write takes a round trip to the broker; writing again at once
/// after each one spent CPU for nothing, as the window, not the offsets' age, bounds what a
/// restart looks for.
const OFFSET_WRITE_SPACING: Duration = Duration::from_millis(50);

/// Writes the acknowledged position to the offsets topic on its own thread, at most every
/// [`OFFSET_WRITE_SPACING`]: the delivery loop never waits for an offset write.
struct OffsetCommitter {
    shared: Arc<CommitterState>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct CommitterState {
    slot: Mutex<CommitterSlot>,
    wake: Condvar,
    /// Engine records covered by the last offset written (see [`AckTracker::acked_through`]).
    written_through: AtomicU64,
    /// A write failed: the slot holds the failure (it is taken once; the thread stops at it).
    failed: AtomicBool,
}

#[derive(Default)]
struct CommitterSlot {
    /// The newest acknowledged position, and how many engine records it covers.
    latest: Option<(Arc<Position>, u64)>,
    written: Option<Arc<Position>>,
    finishing: bool,
    /// Finishing with nothing in flight: the last offset is (re)written with an empty window.
    settled: bool,
    settled_written: bool,
    failure: Option<OffsetStoreError>,
}

impl OffsetCommitter {
    /// `bell` is rung after every offset write and at a failure (the delivery thread may be
    /// waiting for the window).
    fn start(
        store: Arc<KafkaOffsetStore>,
        stats: Arc<TaskStats>,
        window: u64,
        bell: Option<Bell>,
    ) -> std::io::Result<OffsetCommitter> {
        let shared = Arc::new(CommitterState::default());
        let state = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("oracle-cdc-offsets".into())
            .spawn(move || {
                commit_offsets(&state, &store, &stats, window, bell.as_ref());
            })?;
        Ok(OffsetCommitter {
            shared,
            thread: Some(thread),
        })
    }

    /// Offers the acknowledged `position`, which covers the first `through` engine records.
    ///
    /// Acknowledged records that share the position already written (a snapshot chunk's rows
    /// all carry the position before the chunk) need no new write: the offset written accounts
    /// for them, as a restart from it resumes after them or, for a chunk's rows, reads them
    /// again, and never looks for them in their topics. They count as written at once, so a
    /// long chunk does not hold the window shut until its end is acknowledged and written.
    fn offer(&self, position: Arc<Position>, through: u64) {
        let mut slot = self.shared.slot.lock();
        let same = match slot.latest.as_mut() {
            Some((latest, covered)) if Arc::ptr_eq(latest, &position) => {
                *covered = (*covered).max(through);
                true
            }
            _ => false,
        };
        if !same {
            slot.latest = Some((position, through));
            self.shared.wake.notify_one();
        } else if slot
            .written
            .as_ref()
            .is_some_and(|written| Arc::ptr_eq(written, &position))
        {
            self.shared
                .written_through
                .fetch_max(through, Ordering::AcqRel);
        }
    }

    /// Engine records covered by the last offset written.
    fn written_through(&self) -> u64 {
        self.shared.written_through.load(Ordering::Acquire)
    }

    fn take_failure(&self) -> Option<OffsetStoreError> {
        if !self.shared.failed.load(Ordering::Acquire) {
            return None;
        }
        self.shared.slot.lock().failure.take()
    }

    /// Writes the latest position if it was not written yet, and stops the thread. `settled`:
    /// every record sent was acknowledged, so the last offset is written with an empty window
    /// and the next start looks for nothing in the topics.
    fn finish(mut self, settled: bool) -> Result<(), OffsetStoreError> {
        {
            let mut slot = self.shared.slot.lock();
            slot.finishing = true;
            slot.settled = settled;
            self.shared.wake.notify_one();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        match self.shared.slot.lock().failure.take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

fn commit_offsets(
    state: &CommitterState,
    store: &KafkaOffsetStore,
    stats: &TaskStats,
    window: u64,
    bell: Option<&Bell>,
) {
    let ring = || {
        if let Some(bell) = bell {
            bell.ring_acks();
        }
    };
    // the first write goes at once: nothing is sent past the task's first record before it
    let mut next_write = Instant::now();
    loop {
        let (latest, finishing, settled) = {
            let mut slot = state.slot.lock();
            loop {
                let pending = match (&slot.latest, &slot.written) {
                    (Some((latest, _)), Some(written)) => !Arc::ptr_eq(latest, written),
                    (Some(_), None) => true,
                    (None, _) => false,
                };
                let settled = slot.finishing && slot.settled && !slot.settled_written;
                let due = pending || (settled && slot.latest.is_some());
                if due && (slot.finishing || Instant::now() >= next_write) {
                    break (slot.latest.clone(), slot.finishing, settled);
                }
                if !due && (slot.finishing || slot.failure.is_some()) {
                    return;
                }
                if due {
                    state.wake.wait_until(&mut slot, next_write);
                } else {
                    state.wake.wait(&mut slot);
                }
            }
        };
        let Some((position, through)) = latest else {
            return;
        };
        next_write = Instant::now() + OFFSET_WRITE_SPACING;
        match store.write_delivered(&position, if settled { 0 } else { window }) {
            Ok(()) => {
                stats.note_committed(position.resume.scn);
                let mut slot = state.slot.lock();
                slot.written = Some(position);
                slot.settled_written |= settled;
                drop(slot);
                state.written_through.fetch_max(through, Ordering::AcqRel);
                stats.delivery.lock().offsets_committed += 1;
                ring();
            }
            Err(error) => {
                state.slot.lock().failure = Some(error);
                state.failed.store(true, Ordering::Release);
                ring();
                return;
            }
        }
        if finishing {
            // one more round: a position offered while writing is written too
            continue;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::test_support::position;
    use cdc_core::Scn;

    /// A committer without its thread: what `offer` does to the shared state alone.
    fn idle_committer() -> OffsetCommitter {
        OffsetCommitter {
            shared: Arc::new(CommitterState::default()),
            thread: None,
        }
    }

    /// A snapshot chunk's rows all carry the position before the chunk: once that position is
    /// written, rows acknowledged after it count as written without another write, so the
    /// window does not stay shut for the rest of the chunk. A new position still waits for
    /// its write.
    #[test]
    fn records_sharing_the_written_position_count_as_written() {
        let committer = idle_committer();
        let before_chunk = position(10);
        committer.offer(Arc::clone(&before_chunk), 1);
        assert_eq!(committer.written_through(), 0, "nothing written yet");
        // the committer thread wrote it
        committer.shared.slot.lock().written = Some(Arc::clone(&before_chunk));
        committer
            .shared
            .written_through
            .fetch_max(1, Ordering::AcqRel);
        for through in [500, 90_000, 100_001] {
            committer.offer(Arc::clone(&before_chunk), through);
            assert_eq!(committer.written_through(), through);
        }
        // an equal position in another allocation is a new one: it waits for its write
        committer.offer(position(10), 100_002);
        assert_eq!(committer.written_through(), 100_001);
        let after_chunk = position(11);
        committer.offer(Arc::clone(&after_chunk), 100_003);
        assert_eq!(committer.written_through(), 100_001);
        let slot = committer.shared.slot.lock();
        let (latest, through) = slot.latest.clone().expect("offered");
        assert!(Arc::ptr_eq(&latest, &after_chunk));
        assert_eq!(through, 100_003);
    }

    /// Offers that come faster than the committer writes are coalesced, and a stop writes the
    /// newest one at once, with an empty window when everything sent was acknowledged.
    #[test]
    fn a_stop_writes_the_newest_offer_even_inside_the_write_spacing() {
        let Some(broker) = crate::worker::test_support::broker() else {
            return;
        };
        let stamp = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let topic = format!("committer-{stamp}");
        let store = Arc::new(
            KafkaOffsetStore::open_with_timeout(
                &broker,
                &topic,
                "committer-test",
                "cdc",
                &[],
                Duration::from_secs(20),
            )
            .expect("an offset store"),
        );
        let stats = Arc::new(TaskStats::default());
        let committer = OffsetCommitter::start(Arc::clone(&store), Arc::clone(&stats), 500, None)
            .expect("started");
        committer.offer(position(10), 1);
        // the first write goes at once; every later offer lands within the spacing
        let waited = Instant::now();
        while committer.written_through() < 1 {
            assert!(waited.elapsed() < Duration::from_secs(20), "first offset");
            std::thread::sleep(Duration::from_millis(1));
        }
        for scn in 11..=30 {
            committer.offer(position(scn), scn - 9);
        }
        committer.finish(true).expect("finished");

        let stored = store
            .read_latest_stored()
            .expect("read")
            .expect("an offset");
        assert_eq!(stored.position.resume.scn, Scn(30));
        assert_eq!(stored.delivered_window, Some(0));
        // coalesced: fewer writes than the 21 offers (each write is a broker round trip, the
        // offers came within microseconds)
        let written = stats.delivery.lock().offsets_committed;
        assert!((2..21).contains(&written), "{written} writes");
    }
}
