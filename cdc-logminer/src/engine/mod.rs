//! The capture engine: mines the redo in steps on a redo-address cursor, buffers transactions
//! and turns each COMMIT into records that carry the position a restart may use.
//!
//! ```text
//!  RedoSource ─ inventory ─► plan_logs (CDC-2001/2002/5001)
//!      │        window of whole logs (AdaptiveWindow)
//!      │ mine(rows after the cursor) ── read whole ──► join CSF ─► decode_step (rayon)
//!      │                                                 │ nothing touched the buffer yet:
//!      │   failure ─► recovery_for: reconnect / remine / shrink / stop    a failed step is
//!      ▼                                                 ▼                 discarded whole
//!  apply in redo order ─► TransactionBuffer (begin/append/undo/rollback/commit)
//!      │ COMMIT: SkipRule (restart), FirstStart (first start), released ledger (CDC-7001)
//!      ▼
//!  step end: long transactions journaled (journal.rs, cdc-journal), chunks as records
//!      ▼
//!  EngineRecord { kind: change | heartbeat | ops | dlq | schema | journal, position }
//!      ─► RecordSink (bounded)
//! ```
//!
//! The engine is a library: it knows nothing of Kafka. It runs on one thread that owns the
//! source's session; [`CaptureEngine::step`] mines one step and pushes records into a
//! [`RecordSink`], which may block (a bounded queue gives back-pressure: mining waits when the
//! consumer is slow). Each record's position is fixed when it is emitted.
//!
//! The cursor between steps is the redo address of the last applied row (invariant 2 and D1 in
//! `docs/decisions.md`). The engine writes nothing to the database.

mod apply;
mod clock;
mod commit;
mod dictionary;
mod failures;
mod inventory;
mod journal;
mod lag;
mod policies;
mod published;
mod read;
mod record;
mod recovery;
mod retention;
mod settings;
mod signals;
mod snapshot;
mod start;
mod topology;
mod transactions;
mod window;

pub use clock::{Clock, ManualClock, SystemClock};
pub use dictionary::SCHEMA_DDL_MARGIN_S;
pub use inventory::{LogPlan, plan_logs};
pub use journal::JournalSetup;
pub use lag::BuildSchedule;
pub use published::{PublishedSchemas, PublishedVersion, SameLayout, first_valid_at};
pub use read::source_stop;
pub use record::{
    ChangeRecord, DlqRecord, EngineError, EngineMetrics, EngineRecord, HeartbeatReason, RecordKind,
    RecordSink, SchemaChange, SinkClosed, StepReport,
};
pub use recovery::{Backoff, MAX_CONSECUTIVE_REMINES, Recovery, recovery_for};
pub use retention::{ResumeLog, holding_log, resume_log};
pub use settings::{ColumnPredicate, EngineSettings, TablePredicate};
pub use signals::{Signal, SignalKind, SignalOutcome, SignalRecord, SignalRejected, parse_signal};
pub use snapshot::{
    MAX_TRANSIENT_FAILURES, MIN_CHUNK_ROWS, SnapshotMarker, SnapshotMetrics, SnapshotRecord,
};
pub use topology::{check_archive_destination, check_role, resolve_mining_mode};
pub use transactions::{OPEN_TRANSACTIONS_LIMIT, OpenTransaction, OpenTransactions};
pub use window::{AdaptiveWindow, STALL_TIMEOUTS};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cdc_buffer::{
    AgeSettings, BufferError, BufferSettings, DatabaseSnapshot, OrphanDetector, OrphanSettings,
    SessionId, StartInfo, TransactionBuffer, TxnFacts, UndoRecord, check_age,
};
use cdc_core::change::CommitInfo;
use cdc_core::config::{CdcConfig, DecodeErrorAction, MiningMode};
use cdc_core::ora::OraCode;
use cdc_core::{
    CdcCode, CdcError, ChangeEvent, ChangeOp, ConId, ConXid, DlqKind, MinedRow, ObjectId,
    Operation, OpsEvent, OpsKind, RedoAddr, RedoThread, RowChange, Scn, TableId, TableLayout,
    Value,
};
use cdc_offset::rules::{RecordPlace, RedoMark, record_resume, resume_candidate};
use cdc_offset::{DbIdentity, LastCommit, Position, ResumePoint, SkipDecision, SkipRule};

// the stages' own items, for the stages: each file of the engine sees the others through this
use self::commit::*;
use self::dictionary::*;
use self::failures::{AtCommit, HeldFailure, HeldFailures};
use self::journal::{JournalStart, JournalState};
use self::lag::{LagState, StepExtent};
use self::read::*;
use self::signals::SignalState;
use self::snapshot::SnapshotState;
use self::start::*;
use crate::decode::{
    Charsets, ColumnFilter, DdlInfo, DdlKind, DecodeError, DecodeOptions, DecodePool, DecodeTable,
    DecodeThreadStopped, Decoded, DecodedRows, StepDecoder, StepRows, classify_ddl, restore_row_id,
};
use crate::source::{
    CaptureMode, CapturedObject, LogInventoryQuery, MiningQuery, MiningWindow, RedoBound,
    RedoSource, SessionMode, SessionRef, SourceError, SourceSetupError,
};

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Where the next step reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cursor {
    bound: RedoBound,
    /// The log sequence holding the bound (or the start log).
    log_seq: u32,
    /// The last row applied, for the resume rule and heartbeats.
    mined_to: Option<RedoMark>,
}

/// A row with the all-zero RS_ID (no address: a ROLLBACK, COMMIT or START), told from the
/// others by what it is: no two such rows are the same row of the same transaction at the
/// same SCN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ZeroRow {
    scn: Scn,
    key: ConXid,
    operation: Operation,
    rollback: bool,
}

/// The capture engine over a [`RedoSource`]. Its state is grouped by the stage that owns it;
/// the source, the settings, the clock, the buffer and the metrics are every stage's.
pub struct CaptureEngine<S: RedoSource> {
    source: S,
    settings: EngineSettings,
    clock: Box<dyn Clock>,
    buffer: TransactionBuffer,
    metrics: EngineMetrics,
    /// Whether the first step ran (it writes the start heartbeat).
    started: bool,
    /// Read (`read.rs`): where the next step starts, how much it reads, the session.
    read: ReadState,
    /// Decode (`crate::decode::pipeline`): the captured tables' current versions and the pool.
    decoder: StepDecoder,
    /// Apply (`apply.rs`): rows held until more of their transaction is seen.
    held: Held,
    /// Commit (`commit.rs`): the rules that place and filter each record, and its position.
    commit: CommitState,
    /// Dictionary (`dictionary.rs`): every layout decoded with and the stored ones.
    schemas: SchemaState,
    /// Layouts and ops events waiting to go out before the next record.
    side: SideRecords,
    /// The lag case (`lag.rs`): dictionary builds and the rows of a replay with one.
    lag: LagState,
    /// Policies (`policies.rs`): orphaned transactions.
    orphans: OrphanDetector,
    /// The journal (`journal.rs`), once attached, and what its rebuild needs of the start.
    journal: Option<JournalState>,
    journal_start: JournalStart,
    /// Snapshots (`snapshot.rs`): the running snapshot, its readers and its progress.
    snapshot: SnapshotState,
    /// Signals (`signals.rs`): the channel the bridge hands the signals topic's records over.
    signals: SignalState,
    /// The redo-retention guard (`retention.rs`): whether the resume point needs the oldest
    /// available log, so its warning goes out once per transition.
    retention: retention::RetentionGuard,
}

/// Where the next step reads from, how many logs it takes, and the session's recovery state.
struct ReadState {
    cursor: Cursor,
    window: AdaptiveWindow,
    session_started_ms: Option<u64>,
    backoff: Backoff,
    remines: u32,
    identity: DbIdentity,
    /// `cdc.mining.mode` as resolved for the session's container. In
    /// [`SessionMode::Range`] no log can be added, so no redo dictionary either: dictionary
    /// builds and the replay with one are not available there.
    session_mode: SessionMode,
    /// Rows with the all-zero RS_ID applied after the cursor's bound, in order. The cursor
    /// cannot stand on them, so a read from the bound delivers them again, first: each is
    /// skipped when it comes again where it was, so that one ending the redo read so far is
    /// not applied again at every step. A read that does not give them again (it starts in
    /// a later log) finds its own rows unlike them, and they are forgotten.
    zero_rows: Vec<ZeroRow>,
    /// Of the step being applied: how many of `zero_rows` it gave again, and how many rows it
    /// skipped so.
    zero_rows_seen: usize,
    zero_rows_skipped: u32,
}

/// Rows of open transactions the apply stage holds.
struct Held {
    /// INSERTs of rows with LOB locators (ROW_ID `AAAAAAAAAAAAAAAAAA`), held until their
    /// transaction's next data row: the locator UPDATE of the same row merges into them.
    lob_inserts: foldhash::HashMap<ConXid, ChangeEvent>,
    /// Rows that could not be decoded, acted on at their COMMIT.
    failures: HeldFailures,
}

/// What places and filters each record at COMMIT.
struct CommitState {
    /// The last emitted position: the base of every next one (shared with the newest record;
    /// changing it copies it unless that record is gone).
    position: Arc<Position>,
    skip: SkipRule,
    first_start: Option<cdc_offset::FirstStart>,
    /// START SCNs of transactions whose START row was mined, kept only while the first-start
    /// rule applies: it is their one reader.
    start_scns: foldhash::HashMap<ConXid, Scn>,
    /// Kept between commits: its slots are cleared, not allocated, at each.
    table_orders: TableOrders,
    last_record_ms: u64,
}

/// The schema versions the dictionary stage keeps.
struct SchemaState {
    /// Every schema version decoded with, so a change committed after its table changed (or
    /// was dropped) is published with the layout it was decoded with.
    layouts: SchemaVersions,
    next_version: HashMap<TableId, u32>,
    /// The stored versions a restart may still take up (pruned at the resume SCN).
    published: PublishedSchemas,
    /// The database's character sets, for the internal form of generic rows' text.
    charsets: Arc<Charsets>,
    /// The resume SCN at start: the layouts read then already hold every DDL before it, so a
    /// DDL row below it (mined again from the start of its log) is not applied again.
    ddl_from: Scn,
}

/// Side records waiting for the next record to go out.
#[derive(Default)]
struct SideRecords {
    /// Layouts resolved since the last record went out, for the schema topic.
    schema: Vec<SchemaChange>,
    /// Ops events of DDL (`ddl-seen`, `ddl-applied`, `table-added`, `table-removed`) and of
    /// reconnects (`reconnected`), sent after the layouts.
    ops: Vec<OpsEvent>,
}

impl<S: RedoSource> fmt::Debug for CaptureEngine<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureEngine")
            .field("source", &self.source)
            .field("cursor", &self.read.cursor)
            .field("window_logs", &self.read.window.logs())
            .field("metrics", &self.metrics)
            .finish_non_exhaustive()
    }
}

impl<S: RedoSource> CaptureEngine<S> {
    pub fn metrics(&self) -> EngineMetrics {
        let mut m = self.metrics;
        m.window_logs = self.read.window.logs() as u64;
        m.snapshot = self.snapshot.metrics();
        if let Some(journal) = self.journal_metrics() {
            m.journaled_transactions = journal.journaled_transactions;
            m.journal_chunks = journal.chunks;
            m.journal_tombstones = journal.tombstones;
        }
        m
    }

    pub fn buffer_metrics(&self) -> cdc_buffer::BufferMetrics {
        self.buffer.metrics()
    }

    /// The position the last record carried (or the start position).
    pub fn position(&self) -> &Position {
        &self.commit.position
    }

    pub fn source(&self) -> &S {
        &self.source
    }

    pub fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// The snapshot metrics.
    pub fn snapshot_metrics(&self) -> SnapshotMetrics {
        self.snapshot.metrics()
    }

    /// Whether a snapshot is running.
    pub fn snapshot_running(&self) -> bool {
        self.snapshot.running()
    }

    /// `cdc.snapshot.mode=snapshot_only` and its snapshot is complete: [`run`](Self::run)
    /// returns, and the task is done.
    pub fn snapshot_finished(&self) -> bool {
        self.snapshot.finished()
    }

    /// How the LogMiner session is given its redo: `cdc.mining.mode` resolved at start (and
    /// after every reconnect) for the container the session is connected to.
    pub fn session_mode(&self) -> SessionMode {
        self.read.session_mode
    }

    /// Runs steps until `stop` is set, the sink closes, a `snapshot_only` snapshot is complete
    /// (all an `Ok`) or the engine stops (the error). `after_step` sees the engine after every step, the failed one included (to read
    /// [`metrics`](Self::metrics) or [`position`](Self::position)). A step that found nothing
    /// is followed by [`EngineSettings::idle_wait`], cut short when `stop` is set.
    pub fn run(
        &mut self,
        sink: &mut dyn RecordSink,
        stop: &std::sync::atomic::AtomicBool,
        mut after_step: impl FnMut(&Self),
    ) -> Result<(), CdcError> {
        use std::sync::atomic::Ordering;
        while !stop.load(Ordering::SeqCst) {
            let stepped = self.step(sink);
            after_step(self);
            let report = match stepped {
                Ok(report) => report,
                Err(EngineError::SinkClosed(_)) => return Ok(()),
                Err(EngineError::Stop(e)) => return Err(e),
            };
            if self.snapshot.finished() {
                return Ok(());
            }
            if report.rows == 0 && report.snapshot_rows == 0 && !report.retried {
                self.idle(stop);
            }
        }
        Ok(())
    }

    /// The idle wait after an empty step, in slices short enough that a stop is seen at once.
    fn idle(&mut self, stop: &std::sync::atomic::AtomicBool) {
        const SLICE: Duration = Duration::from_millis(10);
        let until = self
            .clock
            .now_ms()
            .saturating_add(millis(self.settings.idle_wait));
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            let left = until.saturating_sub(self.clock.now_ms());
            if left == 0 {
                break;
            }
            self.clock.sleep(SLICE.min(Duration::from_millis(left)));
        }
    }

    /// Mines one step and pushes its records into `sink`. A failed read is retried by policy
    /// (the report says so); a stop is an error.
    pub fn step(&mut self, sink: &mut dyn RecordSink) -> Result<StepReport, EngineError> {
        if !self.started {
            self.started = true;
            if self.journal.is_none() {
                tracing::warn!(
                    "no transaction journal (it needs Kafka): a long transaction holds the resume \
                     position at its first change until it ends"
                );
            }
            self.emit_heartbeat(sink, HeartbeatReason::Start)?;
            self.emit_pending(sink)?;
        }
        if self.settings.snapshot.mode == cdc_core::config::SnapshotMode::SnapshotOnly {
            return self.snapshot_only_step(sink);
        }
        self.dictionary_builds();
        let started = self.clock.now_ms();
        let mut report = match self.read_step() {
            Ok(read) => {
                self.read.backoff.reset();
                self.read.remines = 0;
                let rows = read.rows.len() as u64;
                let cut = read.cut;
                // an uncut step mined every commit up to the current SCN read before it, or
                // up to the end of its window when the window ends before that
                let reached = read.extent.as_ref().filter(|_| !cut).and_then(|e| {
                    let end = e.logs.iter().map(|l| l.next_scn).max()?;
                    Some(Scn(self.metrics.current_scn).min(Scn(end.0.saturating_sub(1))))
                });
                // the log the next window may start at: the window's last, or the one after
                // it once it is complete
                let next_log = read
                    .extent
                    .as_ref()
                    .and_then(|e| e.logs.iter().max_by_key(|l| l.sequence))
                    .map(|l| l.sequence + u32::from(!l.is_current()));
                let records = self.apply(read, sink)?;
                if let Some(reached) = reached {
                    self.snapshot.stream_reached(reached);
                }
                let rows = rows - u64::from(self.read.zero_rows_skipped);
                // A step that was not cut returned every row of its window after the cursor,
                // so its complete logs hold nothing more. Without this a run of logs with no
                // row for the query (an idle database switching logs on a timer) as long as
                // the window would hold the cursor in the log of its last row for ever.
                if !cut && let Some(seq) = next_log {
                    self.read.cursor.log_seq = self.read.cursor.log_seq.max(seq);
                }
                self.read.window.on_step(Duration::from_millis(
                    self.clock.now_ms().saturating_sub(started),
                ));
                StepReport {
                    rows,
                    records,
                    retried: false,
                    cut,
                    snapshot_rows: 0,
                }
            }
            Err(StepFailure::Stop(e)) => return Err(EngineError::Stop(e)),
            Err(StepFailure::Retry) => StepReport {
                retried: true,
                ..StepReport::default()
            },
        };
        self.metrics.steps += 1;
        self.metrics.last_step_ms = self.clock.now_ms().saturating_sub(started);
        report.records += self.emit_pending(sink)?;
        report.records += self.run_policies(sink)?;
        report.records += self.write_journal(sink)?;
        report.records += self.handle_signals(sink)?;
        report.records += self.emit_pending(sink)?;
        if !report.retried {
            let snapshot = self.snapshot_step(sink)?;
            report.records += snapshot;
            report.snapshot_rows = snapshot;
        }
        if let Some(interval) = self.settings.heartbeat_interval
            && self
                .clock
                .now_ms()
                .saturating_sub(self.commit.last_record_ms)
                >= millis(interval)
        {
            self.emit_heartbeat(sink, HeartbeatReason::Idle)?;
            report.records += 1;
        }
        Ok(report)
    }
}
