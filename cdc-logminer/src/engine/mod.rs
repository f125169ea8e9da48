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
//!  EngineRecord { kind: change | heartbeat | ops | dlq, position } ─► RecordSink (bounded)
//! ```
//!
//! The engine is a library: it knows nothing of Kafka. It runs on one thread that owns the
//! source's session; [`CaptureEngine::step`] mines one step and pushes records into a
//! [`RecordSink`], which may block (a bounded queue gives back-pressure: mining waits when the
//! consumer is slow). Each record's position is fixed when it is emitted.
//!
//! The cursor between steps is the redo address of the last applied row (invariant 2 and D1 in
//! `docs/decisions.md`). The engine writes nothing to the database.

mod failures;
mod inventory;
mod published;
mod recovery;
mod window;

pub use inventory::{LogPlan, plan_logs};
pub use published::{PublishedSchemas, PublishedVersion, SameLayout, first_valid_at};
pub use recovery::{Backoff, MAX_CONSECUTIVE_REMINES, Recovery, recovery_for};
pub use window::{AdaptiveWindow, STALL_TIMEOUTS};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cdc_buffer::{
    AgeAction, AgeSettings, BufferError, BufferSettings, DatabaseSnapshot, OpsEvent, OrphanAction,
    OrphanDetector, OrphanSettings, SessionId, StartInfo, TransactionBuffer, TxnFacts, UndoRecord,
    check_age,
};
use cdc_core::change::CommitInfo;
use cdc_core::config::CdcConfig;
use cdc_core::ora::OraCode;
use cdc_core::{
    CdcCode, CdcError, ChangeEvent, ChangeOp, ConId, ConXid, MinedRow, ObjectId, Operation,
    RedoAddr, RowChange, Scn, TableId, TableLayout, Value,
};
use cdc_offset::rules::{RecordPlace, RedoMark, record_resume, resume_candidate};
use cdc_offset::{DbIdentity, LastCommit, Position, ResumePoint, SkipDecision, SkipRule};

use self::failures::{AtCommit, HeldFailure, HeldFailures};
use crate::decode::{
    ColumnFilter, DdlInfo, DdlKind, DecodeError, DecodeOptions, DecodePool, DecodeTable, Decoded,
    RowIds, classify_ddl, decode_rows_with, join_continuations_into, restore_row_id,
};
use crate::source::{
    CaptureMode, CapturedObject, LogInventoryQuery, MiningQuery, MiningWindow, RedoBound,
    RedoSource, SessionRef, SourceError,
};

/// `cdc.on.decode.error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecodeErrorMode {
    /// Stop with CDC-3001.
    #[default]
    Fail,
    /// Send the row to the DLQ with an ops event and go on.
    Dlq,
}

/// How long before the resume SCN's time a table's last DDL may be and still explain a stored
/// schema version that differs from the dictionary (SCN_TO_TIMESTAMP is only seconds-precise).
pub const SCHEMA_DDL_MARGIN_S: i64 = 10;

/// Which tables are captured.
pub type TablePredicate = Arc<dyn Fn(&TableId) -> bool + Send + Sync>;

/// Which columns are excluded: their values are dropped in the parser.
pub type ColumnPredicate = Arc<dyn Fn(&TableId, &str) -> bool + Send + Sync>;

/// What the engine needs of the configuration, in its own terms.
#[derive(Clone)]
pub struct EngineSettings {
    /// `cdc.topic.prefix`: the offset partition's `server`.
    pub server: String,
    pub capture_mode: CaptureMode,
    pub archive_destination: Option<String>,
    pub start_scn: Option<Scn>,
    pub target_latency: Duration,
    pub max_logs_per_step: usize,
    pub query_timeout: Duration,
    pub session_max_age: Duration,
    pub decode_threads: usize,
    pub inlist_max: usize,
    pub users_exclude: Vec<String>,
    /// `None`: only the start heartbeat.
    pub heartbeat_interval: Option<Duration>,
    pub orphan: OrphanSettings,
    pub age: AgeSettings,
    pub on_decode_error: DecodeErrorMode,
    pub retry_max_time: Duration,
    pub extra_transient: Vec<OraCode>,
    pub pdbs: Vec<String>,
    pub buffer: BufferSettings,
    pub log_sensitive_data: bool,
    /// How many rows that could not be decoded are held at once until their transactions end
    /// (default 16 384, about 16 MiB with `dlq`); past it, a failure is acted on as its row is
    /// applied. Not a connector setting.
    pub held_failures_max: usize,
    /// How long [`CaptureEngine::run`] waits after a step that found nothing.
    pub idle_wait: Duration,
    /// `cdc.tables.include` minus `cdc.tables.exclude`, over `[PDB.]OWNER.TABLE`.
    pub table_filter: TablePredicate,
    /// `cdc.columns.exclude`, over `[PDB.]OWNER.TABLE` and a column name.
    pub column_filter: ColumnPredicate,
    /// The schema versions an earlier run published (the schema topic at start): numbering
    /// goes on from them, and a layout that has not changed keeps its version.
    pub published: PublishedSchemas,
}

impl fmt::Debug for EngineSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EngineSettings")
            .field("server", &self.server)
            .field("capture_mode", &self.capture_mode)
            .field("max_logs_per_step", &self.max_logs_per_step)
            .field("query_timeout", &self.query_timeout)
            .field("heartbeat_interval", &self.heartbeat_interval)
            .field("on_decode_error", &self.on_decode_error)
            .finish_non_exhaustive()
    }
}

impl EngineSettings {
    /// Settings with the defaults of the configuration reference, capturing what `tables`
    /// accepts; tests and embedders start here.
    pub fn new(
        server: impl Into<String>,
        connector_name: &str,
        tables: impl Fn(&TableId) -> bool + Send + Sync + 'static,
    ) -> EngineSettings {
        EngineSettings {
            server: server.into(),
            capture_mode: CaptureMode::Online,
            archive_destination: None,
            start_scn: None,
            target_latency: Duration::from_millis(2000),
            max_logs_per_step: 8,
            query_timeout: Duration::from_millis(600_000),
            session_max_age: Duration::from_millis(3_600_000),
            decode_threads: 1,
            inlist_max: 1000,
            users_exclude: Vec::new(),
            heartbeat_interval: Some(Duration::from_millis(10_000)),
            orphan: OrphanSettings::default(),
            age: AgeSettings::default(),
            on_decode_error: DecodeErrorMode::Fail,
            retry_max_time: Duration::from_millis(86_400_000),
            extra_transient: Vec::new(),
            pdbs: Vec::new(),
            buffer: BufferSettings::new(connector_name),
            log_sensitive_data: false,
            held_failures_max: failures::HELD_FAILURES_MAX,
            idle_wait: Duration::from_millis(200),
            table_filter: Arc::new(tables),
            column_filter: Arc::new(|_, _| false),
            published: PublishedSchemas::default(),
        }
    }

    /// The settings of a validated connector configuration.
    pub fn from_config(config: &CdcConfig) -> EngineSettings {
        let selection = Arc::new(config.tables.clone());
        let tables = Arc::clone(&selection);
        let columns = selection;
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let mut buffer = BufferSettings::new(&config.connect.name);
        buffer.memory_max_bytes = config.buffer.memory_max_bytes;
        buffer.spill_max_bytes = config.buffer.spill_max_bytes;
        buffer.spill_dir = config.spill_dir(&std::env::temp_dir());
        EngineSettings {
            server: config.topics.prefix.clone(),
            capture_mode: config.capture.mode,
            archive_destination: config.capture.archive_destination.clone(),
            start_scn: config.capture.start_scn,
            target_latency: config.mining.target_latency,
            max_logs_per_step: config.mining.max_logs_per_step as usize,
            query_timeout: config.mining.query_timeout,
            session_max_age: config.mining.session_max_age,
            decode_threads: config.decode_threads(cores),
            inlist_max: config.mining.inlist_max as usize,
            users_exclude: config.tables.users_exclude.clone(),
            heartbeat_interval: config.heartbeat.interval,
            orphan: OrphanSettings {
                check_interval_ms: millis(config.transaction.orphan_check_interval),
                action: match config.transaction.orphan_action {
                    cdc_core::config::OrphanAction::Release => OrphanAction::Release,
                    cdc_core::config::OrphanAction::Fail => OrphanAction::Fail,
                },
            },
            age: AgeSettings {
                max_age_ms: config.transaction.max_age.map(millis),
                action: match config.transaction.max_age_action {
                    cdc_core::config::MaxAgeAction::Fail => AgeAction::Fail,
                    cdc_core::config::MaxAgeAction::Discard => AgeAction::Discard,
                },
            },
            on_decode_error: match config.decode.on_decode_error {
                cdc_core::config::DecodeErrorAction::Fail => DecodeErrorMode::Fail,
                cdc_core::config::DecodeErrorAction::Dlq => DecodeErrorMode::Dlq,
            },
            retry_max_time: config.retry.max_time,
            extra_transient: config
                .retry
                .extra_error_codes
                .iter()
                .map(|c| OraCode(*c))
                .collect(),
            pdbs: config.database.pdbs.clone(),
            buffer,
            log_sensitive_data: config.retry.log_sensitive_data,
            held_failures_max: failures::HELD_FAILURES_MAX,
            idle_wait: Duration::from_millis(200),
            table_filter: Arc::new(move |t: &TableId| {
                tables.is_table_included(t.pdb.as_deref(), &t.owner, &t.table)
            }),
            column_filter: Arc::new(move |t: &TableId, column: &str| {
                columns.is_column_excluded(t.pdb.as_deref(), &t.owner, &t.table, column)
            }),
            published: PublishedSchemas::default(),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Time as the engine sees it; tests drive a manual clock so that no test waits.
pub trait Clock: Send + fmt::Debug {
    /// Milliseconds on a monotonic scale.
    fn now_ms(&self) -> u64;
    /// Waits (a manual clock just moves on).
    fn sleep(&mut self, duration: Duration);
}

/// The wall clock.
#[derive(Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        millis(self.origin.elapsed())
    }

    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// A clock that moves only when told or slept on. Clones share the time, so a test keeps a
/// handle to the clock it gave the engine.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now_ms: Arc<std::sync::atomic::AtomicU64>,
}

impl ManualClock {
    pub fn advance(&self, duration: Duration) {
        self.now_ms
            .fetch_add(millis(duration), std::sync::atomic::Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn sleep(&mut self, duration: Duration) {
        self.advance(duration);
    }
}

/// One change record: a change of a committed transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRecord {
    pub commit: Arc<CommitInfo>,
    pub event: ChangeEvent,
    /// 0-based index of this change within its transaction.
    pub event_index: u64,
    /// 1-based place of this change among its transaction's changes to the same table
    /// (Debezium's `transaction.data_collection_order`). Counted over the whole transaction,
    /// the changes a restart skips included, so it does not depend on where delivery began.
    pub table_order: u64,
    /// The schema version the change was decoded with.
    pub layout: Arc<TableLayout>,
}

/// Counts one transaction's changes per table, for [`ChangeRecord::table_order`]. A table
/// [`SchemaVersions`] registered is counted in the slot of its number (the engine keeps one of
/// these across commits, rather than hashing each change's table name); a table it never
/// registered is counted by name.
#[derive(Debug, Default)]
struct TableOrders {
    /// The commit being counted: a slot stamped with an earlier one counts nothing yet, so a
    /// commit starts without visiting the slots.
    commit: u64,
    /// By table number: the commit that last counted in it, and its count.
    numbered: Vec<(u64, u64)>,
    unnumbered: foldhash::HashMap<TableId, u64>,
}

impl TableOrders {
    /// Starts counting the changes of a commit.
    fn start(&mut self) {
        self.commit += 1;
        if !self.unnumbered.is_empty() {
            self.unnumbered.clear();
        }
    }

    /// The 1-based place of the next change to `table`, whose number is `number` when
    /// [`SchemaVersions`] gave it one.
    fn next(&mut self, number: Option<usize>, table: &TableId) -> u64 {
        let Some(number) = number else {
            let count = match self.unnumbered.get_mut(table) {
                Some(count) => count,
                None => self.unnumbered.entry(table.clone()).or_default(),
            };
            *count += 1;
            return *count;
        };
        if number >= self.numbered.len() {
            self.numbered.resize(number + 1, (0, 0));
        }
        let (commit, count) = &mut self.numbered[number];
        if *commit != self.commit {
            *commit = self.commit;
            *count = 0;
        }
        *count += 1;
        *count
    }
}

impl ChangeRecord {
    /// Whether a Kafka transaction may end after this record (the last of its Oracle
    /// transaction).
    pub fn is_last(&self) -> bool {
        self.event_index + 1 >= self.commit.event_count
    }
}

/// Why a heartbeat was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeartbeatReason {
    /// At every task start: makes the start position durable before the first change.
    Start,
    /// No record for `cdc.heartbeat.interval.ms`.
    Idle,
}

impl HeartbeatReason {
    pub fn as_str(self) -> &'static str {
        match self {
            HeartbeatReason::Start => "start",
            HeartbeatReason::Idle => "idle",
        }
    }
}

/// A row that went to the DLQ instead of stopping the task (`cdc.on.decode.error=dlq`), or a
/// transaction the age policy discarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DlqRecord {
    /// `decode-error`, `unsupported-row` or `transaction-discarded`.
    pub kind: &'static str,
    pub xid: ConXid,
    pub table: Option<TableId>,
    pub scn: Scn,
    pub addr: Option<RedoAddr>,
    pub operation: Option<Operation>,
    pub status: Option<u32>,
    pub info: Option<String>,
    /// SQL_REDO, only when `cdc.log.sensitive.data` is set and no column of the table may be
    /// excluded.
    pub sql_redo: Option<String>,
    pub message: String,
    pub details: BTreeMap<String, String>,
}

/// A table's layout for the schema topic: names and types, never values.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaChange {
    /// A schema version the engine decodes the table's rows with from here on: every captured
    /// table's at each start, and a new one when DDL changed the table's columns, key or
    /// supplemental logging, valid from that DDL's SCN.
    Version(Arc<TableLayout>),
    /// The table is no longer captured under this name (dropped, renamed, or no longer
    /// matching the filters after DDL).
    Removed(TableId),
}

/// What a record carries.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordKind {
    Change(ChangeRecord),
    Heartbeat {
        reason: HeartbeatReason,
        mined_to: Option<Scn>,
    },
    Ops(OpsEvent),
    Dlq(DlqRecord),
    Schema(SchemaChange),
}

/// A record and the position a restart may use once it is acknowledged.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineRecord {
    pub kind: RecordKind,
    /// Shared: the consumer keeps it until the record is acknowledged, and the engine builds
    /// the next position from it.
    pub position: Arc<Position>,
}

/// The consumer went away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the record consumer is closed")]
pub struct SinkClosed;

/// Where records go. A bounded implementation blocks in `accept` when full.
pub trait RecordSink {
    fn accept(&mut self, record: EngineRecord) -> Result<(), SinkClosed>;
}

impl RecordSink for Vec<EngineRecord> {
    fn accept(&mut self, record: EngineRecord) -> Result<(), SinkClosed> {
        self.push(record);
        Ok(())
    }
}

impl RecordSink for std::sync::mpsc::SyncSender<EngineRecord> {
    fn accept(&mut self, record: EngineRecord) -> Result<(), SinkClosed> {
        self.send(record).map_err(|_| SinkClosed)
    }
}

/// Why the engine stopped: a typed stop, or the consumer went away.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Stop(#[from] CdcError),
    #[error(transparent)]
    SinkClosed(#[from] SinkClosed),
}

impl EngineError {
    /// The CDC stop, if it is one.
    pub fn cdc(&self) -> Option<&CdcError> {
        match self {
            EngineError::Stop(e) => Some(e),
            EngineError::SinkClosed(_) => None,
        }
    }
}

impl From<BufferError> for EngineError {
    fn from(e: BufferError) -> Self {
        EngineError::Stop(e.into())
    }
}

/// Counters of the engine (the connector's metrics list).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineMetrics {
    pub steps: u64,
    pub rows_mined: u64,
    pub step_retries: u64,
    pub step_timeouts: u64,
    pub step_cuts: u64,
    /// Steps decoded on a thread of their own while they were applied (large steps).
    pub pipelined_steps: u64,
    pub reconnects: u64,
    pub session_recycles: u64,
    pub transactions_committed: u64,
    pub transactions_skipped: u64,
    pub rolled_back_transactions: u64,
    pub events_applied: u64,
    pub records: u64,
    pub heartbeats_sent: u64,
    pub dlq_records: u64,
    pub ops_events: u64,
    pub orphans_released: u64,
    pub transactions_discarded: u64,
    pub decode_failures: u64,
    pub window_logs: u64,
    pub last_step_ms: u64,
    pub mined_to_scn: u64,
    pub current_scn: u64,
}

/// What one step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepReport {
    pub rows: u64,
    pub records: u64,
    /// The step failed and will be mined again from the same cursor.
    pub retried: bool,
    /// The step ended early at a DDL that changes the captured set.
    pub cut: bool,
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

/// The capture engine over a [`RedoSource`].
pub struct CaptureEngine<S: RedoSource> {
    source: S,
    settings: EngineSettings,
    clock: Box<dyn Clock>,
    buffer: TransactionBuffer,
    /// Shared with the thread that decodes a step while it is applied.
    pool: Arc<DecodePool>,
    decode_options: DecodeOptions,
    /// Captured (container, DATA_OBJ#) → table.
    ///
    /// The maps looked up for every row hash with foldhash: SipHash's resistance to chosen keys
    /// is not needed for keys that come from our own dictionary queries, and it cost about a
    /// tenth of the engine's time.
    /// (Shared, like `tables`, with the thread that decodes a step while it is applied; a
    /// refresh replaces both between steps.)
    objects: Arc<foldhash::HashMap<(ConId, ObjectId), TableId>>,
    /// Current schema version of each captured table.
    tables: Arc<foldhash::HashMap<TableId, DecodeTable>>,
    /// Every schema version decoded with, so a change committed after its table changed (or
    /// was dropped) is published with the layout it was decoded with.
    layouts: SchemaVersions,
    /// Kept between commits: its slots are cleared, not allocated, at each.
    table_orders: TableOrders,
    next_version: HashMap<TableId, u32>,
    /// The stored versions a restart may still take up (pruned at the resume SCN).
    published: PublishedSchemas,
    identity: DbIdentity,
    cursor: Cursor,
    window: AdaptiveWindow,
    session_started_ms: Option<u64>,
    /// The last emitted position: the base of every next one (shared with the newest record;
    /// changing it copies it unless that record is gone).
    position: Arc<Position>,
    skip: SkipRule,
    first_start: Option<cdc_offset::FirstStart>,
    /// START SCNs of transactions whose START row was mined, kept only while the first-start
    /// rule applies: it is their one reader.
    start_scns: foldhash::HashMap<ConXid, Scn>,
    /// INSERTs of rows with LOB locators (ROW_ID `AAAAAAAAAAAAAAAAAA`), held until their
    /// transaction's next data row: the locator UPDATE of the same row merges into them.
    held_lob_inserts: foldhash::HashMap<ConXid, ChangeEvent>,
    /// Rows of open transactions that could not be decoded, acted on at their COMMIT.
    held_failures: HeldFailures,
    last_record_ms: u64,
    orphans: OrphanDetector,
    backoff: Backoff,
    remines: u32,
    metrics: EngineMetrics,
    started: bool,
    /// Layouts resolved since the last record went out, for the schema topic.
    pending_schema: Vec<SchemaChange>,
    /// Ops events of DDL (`ddl-seen`, `ddl-applied`, `table-added`, `table-removed`) and of
    /// reconnects (`reconnected`), sent after the layouts.
    pending_ops: Vec<OpsEvent>,
}

impl<S: RedoSource> fmt::Debug for CaptureEngine<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureEngine")
            .field("source", &self.source)
            .field("cursor", &self.cursor)
            .field("window_logs", &self.window.logs())
            .field("metrics", &self.metrics)
            .finish_non_exhaustive()
    }
}

impl<S: RedoSource> CaptureEngine<S> {
    /// Opens the engine: checks the database's identity and topology, resolves the captured
    /// tables, and places the cursor: from `position` when there is one (a restart), else at
    /// the current SCN (or `cdc.start.scn`) with the transactions already open mined whole.
    /// On a restart the position's `journal_generation` becomes this task start's: the stored
    /// one plus one.
    pub fn open(
        mut source: S,
        settings: EngineSettings,
        position: Option<Position>,
        clock: Box<dyn Clock>,
    ) -> Result<CaptureEngine<S>, CdcError> {
        let identity = check_topology(&mut source, &settings)?;
        let mut buffer = TransactionBuffer::open(settings.buffer.clone())?;
        let pool = DecodePool::new(settings.decode_threads).map_err(|e| {
            CdcError::new(CdcCode::TransientDatabase, format!("{e}")).without_retry()
        })?;
        let now = clock.now_ms();
        let restarting = position.is_some();
        let held_failures = HeldFailures::with_max(settings.held_failures_max);
        let position = match position {
            Some(stored) => {
                stored.check_identity(identity).map_err(CdcError::from)?;
                let mut position = stored;
                position.journal_generation = position.journal_generation.saturating_add(1);
                position
            }
            None => first_start_position(&mut source, &settings, identity)?,
        };
        let cursor = initial_cursor(&mut source, &settings, &position)?;
        // the released ledger survives restarts in the offset; the buffer checks every COMMIT
        // against it (CDC-7001)
        *buffer.ledger_mut() = position.released_xids.clone();
        let mut published = settings.published.clone();
        published.prune(position.resume.scn);
        let mut engine = CaptureEngine {
            skip: position.skip_rule(),
            first_start: position.first_start.clone(),
            window: AdaptiveWindow::new(settings.max_logs_per_step, settings.target_latency),
            orphans: OrphanDetector::new(settings.orphan, now),
            backoff: Backoff::new(settings.retry_max_time, identity.dbid ^ now),
            decode_options: DecodeOptions {
                log_sensitive_data: settings.log_sensitive_data,
            },
            source,
            settings,
            clock,
            buffer,
            pool: Arc::new(pool),
            objects: Arc::default(),
            tables: Arc::default(),
            layouts: SchemaVersions::default(),
            table_orders: TableOrders::default(),
            next_version: HashMap::new(),
            published,
            identity,
            cursor,
            session_started_ms: None,
            position: Arc::new(position),
            start_scns: foldhash::HashMap::default(),
            held_lob_inserts: foldhash::HashMap::default(),
            held_failures,
            last_record_ms: now,
            remines: 0,
            metrics: EngineMetrics::default(),
            started: false,
            pending_schema: Vec::new(),
            pending_ops: Vec::new(),
        };
        let valid_from = engine.position.resume.scn;
        let differing = engine.refresh_objects(valid_from)?;
        // a first start (no offset, or offsets deleted) has no records to reconcile with what
        // the topic says: its stored versions are history, and only their numbering counts
        if restarting {
            engine.check_stored_schemas(&differing)?;
        }
        Ok(engine)
    }

    pub fn metrics(&self) -> EngineMetrics {
        let mut m = self.metrics;
        m.window_logs = self.window.logs() as u64;
        m
    }

    pub fn buffer_metrics(&self) -> cdc_buffer::BufferMetrics {
        self.buffer.metrics()
    }

    /// The position the last record carried (or the start position).
    pub fn position(&self) -> &Position {
        &self.position
    }

    pub fn source(&self) -> &S {
        &self.source
    }

    pub fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// Runs steps until `stop` is set, the sink closes (both an `Ok`) or the engine stops (the
    /// error). `after_step` sees the engine after every step, the failed one included (to read
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
            if report.rows == 0 && !report.retried {
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
            self.emit_heartbeat(sink, HeartbeatReason::Start)?;
            self.emit_pending(sink)?;
        }
        let started = self.clock.now_ms();
        let mut report = match self.read_step() {
            Ok(read) => {
                self.backoff.reset();
                self.remines = 0;
                let rows = read.rows.len() as u64;
                let cut = read.cut;
                let records = self.apply(read, sink)?;
                self.window.on_step(Duration::from_millis(
                    self.clock.now_ms().saturating_sub(started),
                ));
                StepReport {
                    rows,
                    records,
                    retried: false,
                    cut,
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
        if let Some(interval) = self.settings.heartbeat_interval
            && self.clock.now_ms().saturating_sub(self.last_record_ms) >= millis(interval)
        {
            self.emit_heartbeat(sink, HeartbeatReason::Idle)?;
            report.records += 1;
        }
        Ok(report)
    }

    // ---- reading a step -------------------------------------------------------------------

    fn read_step(&mut self) -> Result<ReadStep, StepFailure> {
        match self.try_read_step() {
            Ok(read) => Ok(read),
            Err(ReadError::Stop(e)) => Err(StepFailure::Stop(e)),
            Err(ReadError::Source(e)) => Err(self.recover(e)),
        }
    }

    fn try_read_step(&mut self) -> Result<ReadStep, ReadError> {
        // the step covers the redo up to the current SCN; it also feeds the lag metrics
        let current = self.source.current_scn()?;
        self.metrics.current_scn = current.get();
        let query = LogInventoryQuery {
            from: Scn::ZERO,
            mode: self.settings.capture_mode,
            destination: self.settings.archive_destination.clone(),
        };
        let inventory = self.source.log_inventory(&query)?;
        let plan = plan_logs(&inventory, self.cursor.log_seq, self.settings.capture_mode)
            .map_err(ReadError::Stop)?;
        if plan.logs.is_empty() {
            // archive_only: the cursor's log is not archived yet
            return Ok(ReadStep {
                rows: StepRows::default(),
                cut: false,
            });
        }
        let window_logs = plan.window(self.window.logs()).to_vec();
        let start_scn = window_logs
            .first()
            .map(|l| l.first_scn)
            .unwrap_or(Scn::ZERO);
        let now = self.clock.now_ms();
        if let Some(since) = self.session_started_ms
            && now.saturating_sub(since) >= millis(self.settings.session_max_age)
        {
            self.source.end_session()?;
            self.session_started_ms = None;
            self.metrics.session_recycles += 1;
        }
        self.source.start_session(&MiningWindow {
            logs: window_logs,
            start_scn,
        })?;
        if self.session_started_ms.is_none() {
            self.session_started_ms = Some(now);
        }
        let mut objects: Vec<(ConId, ObjectId)> = self.objects.keys().copied().collect();
        objects.sort();
        let query = MiningQuery {
            from: self.cursor.bound,
            objects,
            excluded_users: self.settings.users_exclude.clone(),
            inlist_max: self.settings.inlist_max,
            timeout: self.settings.query_timeout,
            // LOB values are not assembled yet (cdc.lob.mode=skip)
            lob_rows: false,
        };
        let mut rows = StepRows::default();
        let mut ddl_text = String::new();
        let mut cut = false;
        let table_filter = Arc::clone(&self.settings.table_filter);
        let objects = &*self.objects;
        self.source.mine(&query, &mut |row: MinedRow| {
            let ends_step = row.operation == Operation::Ddl && {
                ddl_text.push_str(row.sql_redo.as_deref().unwrap_or(""));
                if row.csf {
                    false
                } else {
                    let text = std::mem::take(&mut ddl_text);
                    ddl_ends_step(&row, &classify_ddl(&text), objects, &*table_filter)
                }
            };
            rows.push(row);
            if ends_step {
                cut = true;
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        let rows = rows
            .join_continuations()
            .map_err(|e| ReadError::Stop(e.into()))?;
        Ok(ReadStep { rows, cut })
    }

    /// Applies the recovery policy to a failed read: mine the step again, or stop.
    fn recover(&mut self, error: SourceError) -> StepFailure {
        self.metrics.step_retries += 1;
        match recovery_for(error, &self.settings.extra_transient) {
            Recovery::Stop(e) => StepFailure::Stop(e),
            Recovery::Remine(e) => {
                self.remines += 1;
                if self.remines > MAX_CONSECUTIVE_REMINES {
                    return StepFailure::Stop(
                        CdcError::new(
                            CdcCode::MiningStepRetry,
                            format!(
                                "{} steps in a row failed and were mined again; the last: {e}",
                                self.remines
                            ),
                        )
                        .with_source(e),
                    );
                }
                tracing::warn!(error = %e, "mining step discarded; mining it again");
                StepFailure::Retry
            }
            Recovery::Shrink(e) => {
                self.metrics.step_timeouts += 1;
                tracing::warn!(error = %e, "mining step timed out; halving the window");
                // the session may still be busy with the cancelled query
                let _ = self.source.end_session();
                self.session_started_ms = None;
                match self.window.on_timeout(self.settings.query_timeout) {
                    Ok(()) => StepFailure::Retry,
                    Err(stop) => StepFailure::Stop(stop),
                }
            }
            Recovery::Reconnect(e) => match self.reconnect(e) {
                Ok(()) => StepFailure::Retry,
                Err(stop) => stop,
            },
        }
    }

    fn reconnect(&mut self, cause: SourceError) -> Result<(), StepFailure> {
        let mut last = cause;
        loop {
            let Some(delay) = self.backoff.next_delay(self.clock.now_ms()) else {
                return Err(StepFailure::Stop(
                    CdcError::new(
                        CdcCode::TransientDatabase,
                        format!(
                            "the database stayed unavailable for cdc.retry.max.time.ms ({} ms) \
                             after {} attempts; the last error: {last}",
                            self.settings.retry_max_time.as_millis(),
                            self.backoff.attempts()
                        ),
                    )
                    .without_retry()
                    .with_source(last),
                ));
            };
            tracing::warn!(error = %last, delay_ms = delay.as_millis() as u64, "reconnecting");
            self.clock.sleep(delay);
            self.session_started_ms = None;
            match self.source.reconnect() {
                Ok(()) => {
                    self.metrics.reconnects += 1;
                    // the identity is checked again after every reconnect (CDC-5001)
                    let identity = check_topology(&mut self.source, &self.settings)
                        .map_err(StepFailure::Stop)?;
                    if identity != self.identity {
                        return Err(StepFailure::Stop(CdcError::new(
                            CdcCode::Topology,
                            format!(
                                "after reconnecting, the database is {identity}, not {}",
                                self.identity
                            ),
                        )));
                    }
                    self.pending_ops.push(OpsEvent {
                        event_type: "reconnected",
                        details: BTreeMap::from([("cause".to_owned(), last.to_string())]),
                    });
                    return Ok(());
                }
                Err(e) => match recovery_for(e, &self.settings.extra_transient) {
                    Recovery::Stop(stop) => return Err(StepFailure::Stop(stop)),
                    Recovery::Reconnect(e) | Recovery::Remine(e) | Recovery::Shrink(e) => last = e,
                },
            }
        }
    }

    // ---- applying a step ------------------------------------------------------------------

    /// Applies a step that was read whole. Decoding is a pure function of the row and the
    /// step's schema versions (a layout change ends the step), so a large step is decoded in
    /// chunks on a thread of its own while this thread applies the chunks before, in redo
    /// order: the records, the errors and the point where an error stops are those of decoding
    /// the whole step first.
    ///
    /// ```text
    ///  decode thread   [chunk 1][chunk 2][chunk 3] …      (≤ PIPELINE_DEPTH chunks ahead)
    ///  mining thread            [apply 1][apply 2][apply 3] …
    /// ```
    fn apply(&mut self, read: ReadStep, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        let mut rows = read.rows;
        self.metrics.rows_mined += rows.len() as u64;
        let decoder = StepDecoder {
            objects: Arc::clone(&self.objects),
            tables: Arc::clone(&self.tables),
            options: self.decode_options,
            pool: Arc::clone(&self.pool),
        };
        let records = if rows.len() >= PIPELINE_MIN_ROWS {
            // the decode thread takes the rows and hands each chunk back with its decoded
            // forms: the rows are applied owned, so what a START or COMMIT row names moves into
            // the buffer instead of being copied
            let total = rows.len();
            let handed = std::sync::Mutex::new(Some(rows));
            std::thread::scope(|scope| {
                let (done, decoded) = std::sync::mpsc::sync_channel(PIPELINE_DEPTH);
                let (handed, decoder) = (&handed, &decoder);
                let feeder = std::thread::Builder::new()
                    .name("cdc-decode-feed".to_owned())
                    .spawn_scoped(scope, move || {
                        let Some(rows) = take_rows(handed) else {
                            return;
                        };
                        let mut resolved = ResolvedObjects::default();
                        for chunk in rows.chunks {
                            let chunk_decoded = decoder.decode(&chunk, &mut resolved);
                            if done.send((chunk, chunk_decoded)).is_err() {
                                // the mining thread stopped applying (a stop or a closed sink)
                                break;
                            }
                        }
                    });
                match feeder {
                    Ok(_) => {
                        self.metrics.pipelined_steps += 1;
                        let (mut records, mut applied) = (0, 0);
                        for (mut chunk, chunk_decoded) in decoded.iter() {
                            applied += chunk.len();
                            records += self.apply_decoded(
                                chunk.iter_mut(),
                                chunk_decoded.into_iter(),
                                sink,
                            )?;
                        }
                        if applied < total {
                            // only if the decode thread died, which the scope then reports as
                            // its panic
                            return Err(CdcError::new(
                                CdcCode::Decode,
                                format!(
                                    "the decode thread stopped after {applied} of the step's \
                                     {total} rows"
                                ),
                            )
                            .into());
                        }
                        Ok(records)
                    }
                    Err(error) => {
                        tracing::warn!(%error, "no decode thread; decoding the step first");
                        let mut rows = take_rows(handed).unwrap_or_default();
                        let decoded = decoder.decode_all(&rows);
                        self.apply_decoded(rows.iter_mut(), decoded.into_iter(), sink)
                    }
                }
            })?
        } else {
            let decoded = decoder.decode_all(&rows);
            self.apply_decoded(rows.iter_mut(), decoded.into_iter(), sink)?
        };
        if read.cut {
            self.metrics.step_cuts += 1;
        }
        Ok(records)
    }

    /// Applies `rows` with their decoded forms, in order, moving the cursor past each. The rows
    /// are borrowed where they lie and dropped with their chunk: moving each out to apply it
    /// copied a few hundred bytes per row.
    fn apply_decoded<'r>(
        &mut self,
        rows: impl Iterator<Item = &'r mut MinedRow>,
        mut decoded: impl Iterator<Item = Result<Decoded, DecodeError>>,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let mut records = 0;
        for row in rows {
            let Some(decoded) = decoded.next() else {
                // only if the decode thread died, which the scope then reports as its panic
                return Err(CdcError::new(
                    CdcCode::Decode,
                    format!(
                        "the decode thread stopped before the row at SCN {} ({})",
                        row.scn, row.rs_id
                    ),
                )
                .into());
            };
            records += self.apply_row(row, decoded, sink)?;
            if let Ok(addr) = row.addr() {
                self.cursor.bound = RedoBound::After(addr);
                self.cursor.log_seq = addr.log_seq();
                self.cursor.mined_to = Some(RedoMark::new(addr, row.scn));
                self.metrics.mined_to_scn = self.metrics.mined_to_scn.max(row.scn.get());
            }
        }
        Ok(records)
    }

    /// What the row names that the buffer keeps (user name, PDB, ROWID) is moved out of it.
    fn apply_row(
        &mut self,
        row: &mut MinedRow,
        mut decoded: Result<Decoded, DecodeError>,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        // decoded with `RowIds::LeftInRow` (see `StepDecoder::decode`)
        if let Ok(Decoded::Change(change)) = &mut decoded {
            restore_row_id(change, row);
        }
        if row.operation == Operation::MissingScn {
            return Err(CdcError::new(
                CdcCode::Corruption,
                format!(
                    "LogMiner returned MISSING_SCN at SCN {} ({}): the redo has a hole",
                    row.scn, row.rs_id
                ),
            )
            .into());
        }
        if row.xid.is_zero() {
            // internal operations: they never own changes (never create a buffer entry)
            return Ok(0);
        }
        let key = row.con_xid();
        if !self.held_lob_inserts.is_empty()
            && let Some(held) = self.held_lob_inserts.remove(&key)
        {
            if let (Operation::Update, false, Ok(Decoded::Change(update))) =
                (row.operation, row.rollback, &decoded)
                && let Some(merged) = merge_locator_update(&held, update)
            {
                self.buffer.append(key, merged)?;
                self.metrics.events_applied += 1;
                return Ok(0);
            }
            if is_lob_row(row.operation) {
                // LOB rows of the value being inserted come between the two
                self.held_lob_inserts.insert(key, held);
            } else {
                self.buffer.append(key, held)?;
                self.metrics.events_applied += 1;
            }
        }
        match row.operation {
            Operation::Start => {
                if self.first_start.is_some() {
                    self.start_scns.insert(key, row.scn);
                }
                let start = StartInfo {
                    scn: row.scn,
                    addr: row.addr().ok(),
                    username: row.username.take(),
                    session: match (row.session, row.serial) {
                        (Some(sid), Some(serial)) => Some(SessionId { sid, serial }),
                        _ => None,
                    },
                    client_id: None,
                    pdb: row.src_con_name.take(),
                };
                self.buffer.begin(key, start)?;
                Ok(0)
            }
            Operation::Rollback => {
                if self.first_start.is_some() {
                    self.start_scns.remove(&key);
                }
                if self.buffer.rollback(key)? {
                    self.metrics.rolled_back_transactions += 1;
                }
                // its undecodable rows were never changes of the database
                let _ = self.held_failures.take(key);
                Ok(0)
            }
            Operation::Commit => {
                if self.first_start.is_some() {
                    self.start_scns.remove(&key);
                }
                self.commit(row, key, sink)
            }
            Operation::Insert | Operation::Update | Operation::Delete if row.rollback => {
                let Some(row_id) = row.row_id.take().or_else(|| match &decoded {
                    Ok(Decoded::Change(change)) => change.row_id.clone(),
                    _ => None,
                }) else {
                    return Err(CdcError::new(
                        CdcCode::Decode,
                        format!(
                            "an undo row of transaction {key} at SCN {} ({}) names no ROWID",
                            row.scn, row.rs_id
                        ),
                    )
                    .into());
                };
                let addr = self.row_addr(row)?;
                if self.held_failures.undo(key, &row_id) {
                    return Ok(0);
                }
                self.buffer.undo(
                    key,
                    UndoRecord {
                        scn: row.scn,
                        addr,
                        row_id,
                    },
                )?;
                Ok(0)
            }
            Operation::Insert | Operation::Update | Operation::Delete => match decoded {
                Ok(Decoded::Change(change)) => {
                    if !self.keeps_row(key, row.scn) {
                        return Ok(0);
                    }
                    let addr = self.row_addr(row)?;
                    if change.op == ChangeOp::Insert
                        && change.row_id.as_deref() == Some(LOB_LOCATOR_ROWID)
                    {
                        // the row's LOB values and real ROWID come in the UPDATE that follows
                        self.buffer.pin_change(key, row.scn, addr)?;
                        self.held_lob_inserts.insert(
                            key,
                            ChangeEvent {
                                scn: row.scn,
                                addr,
                                change,
                            },
                        );
                        return Ok(0);
                    }
                    self.buffer.append(
                        key,
                        ChangeEvent {
                            scn: row.scn,
                            addr,
                            change,
                        },
                    )?;
                    self.metrics.events_applied += 1;
                    Ok(0)
                }
                Ok(_) => Ok(0),
                // a row the first start leaves out cannot fail the task, whatever it holds (a
                // row older than the start under a table altered since comes back generic)
                Err(_) if !self.keeps_row(key, row.scn) => Ok(0),
                Err(error) => self.decode_failure(row, key, error, sink),
            },
            Operation::Ddl => {
                if let Ok(Decoded::Ddl(info)) = &decoded {
                    self.apply_ddl(row, info)?;
                }
                self.emit_pending(sink)
            }
            // the undo of a change LogMiner could not give takes back its failure
            Operation::Unsupported if row.rollback => {
                if let Some(row_id) = &row.row_id
                    && !self.held_failures.undo(key, row_id)
                {
                    tracing::debug!(xid = %key, scn = %row.scn, "UNSUPPORTED undo row matched no held row");
                }
                Ok(0)
            }
            Operation::Unsupported => {
                let table = self.captured_table(row);
                if table.is_none() || !self.keeps_row(key, row.scn) {
                    return Ok(0);
                }
                let error = CdcError::new(
                    CdcCode::Decode,
                    format!(
                        "LogMiner cannot give the data of a change to {} (UNSUPPORTED row, \
                         transaction {key}, SCN {}, RS_ID {}, STATUS {}, INFO {:?})",
                        table.as_ref().map(|t| t.to_string()).unwrap_or_default(),
                        row.scn,
                        row.rs_id.to_string().trim(),
                        row.status,
                        row.info.as_deref().unwrap_or("")
                    ),
                );
                self.row_failed(row, key, "unsupported-row", error, sink)
            }
            // LOB and XML rows are not assembled yet (cdc.lob.mode=skip); INTERNAL and the
            // rest carry nothing to publish.
            _ => Ok(0),
        }
    }

    fn row_addr(&self, row: &MinedRow) -> Result<RedoAddr, CdcError> {
        row.addr().map_err(|_| {
            CdcError::new(
                CdcCode::Corruption,
                format!(
                    "a {} row of transaction {} at SCN {} has the all-zero RS_ID, which is no \
                     redo address",
                    row.operation.name(),
                    row.con_xid(),
                    row.scn
                ),
            )
        })
    }

    fn keeps_row(&self, key: ConXid, scn: Scn) -> bool {
        match &self.first_start {
            Some(rule) => rule.keeps_row(key, scn, self.start_scns.get(&key).copied()),
            None => true,
        }
    }

    fn captured_table(&self, row: &MinedRow) -> Option<TableId> {
        let object = row.data_obj?;
        self.objects.get(&(row.src_con_id, object)).cloned()
    }

    fn decode_failure(
        &mut self,
        row: &MinedRow,
        key: ConXid,
        error: DecodeError,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        self.metrics.decode_failures += 1;
        self.row_failed(row, key, "decode-error", error.into(), sink)
    }

    /// A row of a captured table that cannot be turned into a change: held with its
    /// transaction, which pins the restart position from it on, and acted on at its COMMIT
    /// (see `failures`).
    fn row_failed(
        &mut self,
        row: &MinedRow,
        key: ConXid,
        kind: &'static str,
        error: CdcError,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let addr = self.row_addr(row)?;
        let dlq = (self.settings.on_decode_error == DecodeErrorMode::Dlq)
            .then(|| self.dead_letter(row, key, kind, &error));
        let failure = HeldFailure {
            row_id: row.row_id.clone(),
            error,
            dlq,
        };
        if self.held_failures.is_full() {
            tracing::warn!(
                xid = %key, scn = %row.scn, rs_id = %row.rs_id,
                "too many undecodable rows held: acted on at once, before their transaction ends"
            );
            return self.act_at_once(failure, sink);
        }
        if failure.dlq.is_none() {
            // the stop may come long after: say at once what it will be
            tracing::warn!(
                xid = %key, scn = %row.scn, rs_id = %row.rs_id, error = %failure.error,
                "a row could not be decoded: the task stops if its transaction commits"
            );
        }
        self.buffer.pin_change(key, row.scn, addr)?;
        self.held_failures.hold(key, failure);
        Ok(0)
    }

    /// The DLQ record of a row that cannot be decoded, and its ops event.
    fn dead_letter(
        &self,
        row: &MinedRow,
        key: ConXid,
        kind: &'static str,
        error: &CdcError,
    ) -> (DlqRecord, OpsEvent) {
        let table = self.captured_table(row);
        let may_exclude = table
            .as_ref()
            .is_some_and(|t| self.tables.get(t).is_some_and(DecodeTable::has_exclusions));
        let sql_redo = (self.settings.log_sensitive_data && !may_exclude)
            .then(|| row.sql_redo.clone())
            .flatten();
        let mut details = BTreeMap::new();
        details.insert(
            "table".to_owned(),
            table.as_ref().map(|t| t.to_string()).unwrap_or_default(),
        );
        details.insert("xid".to_owned(), key.to_string());
        details.insert("scn".to_owned(), row.scn.to_string());
        details.insert("operation".to_owned(), row.operation.name().to_owned());
        details.insert("error".to_owned(), error.to_string());
        let dlq = DlqRecord {
            kind,
            xid: key,
            table,
            scn: row.scn,
            addr: row.addr().ok(),
            operation: Some(row.operation),
            status: Some(row.status),
            info: row.info.clone(),
            sql_redo,
            message: error.to_string(),
            details: details.clone(),
        };
        let ops = OpsEvent {
            event_type: if kind == "unsupported-row" {
                "unsupported-row"
            } else {
                "decode-error-dlq"
            },
            details,
        };
        (dlq, ops)
    }

    /// A failure acted on as its row is applied: stops (`cdc.on.decode.error=fail`), or sends
    /// its DLQ record and ops event between transactions.
    fn act_at_once(
        &mut self,
        failure: HeldFailure,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let Some((dlq, ops)) = failure.dlq else {
            return Err(failure.error.into());
        };
        self.emit_between(sink, RecordKind::Dlq(dlq))?;
        self.metrics.dlq_records += 1;
        self.emit_between(sink, RecordKind::Ops(ops))?;
        self.metrics.ops_events += 1;
        Ok(2)
    }

    /// The first acknowledged commit ends the first-start rule; from there on the skip rule
    /// only needs the last commit, which every later record carries.
    fn end_first_start(&mut self) {
        if self.first_start.take().is_some() {
            self.start_scns = foldhash::HashMap::default();
        }
    }

    fn commit(
        &mut self,
        row: &mut MinedRow,
        key: ConXid,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let commit_addr = self.row_addr(row)?;
        let decision = self.skip.decide(commit_addr, row.scn);
        let mined_to = RedoMark::new(commit_addr, row.scn);
        let failures = self.held_failures.take(key);
        let Some(mut stream) = self.buffer.commit(key)? else {
            // rows that failed pin their transaction, so it has an entry
            debug_assert!(failures.is_empty());
            return Ok(0);
        };
        // holds of the other open transactions: fixed while this commit is emitted; the resume
        // candidate takes the lowest address and the lowest SCN of them, which the buffer
        // keeps ordered
        let holds = stream.holds();
        let other_holds = holds.others.map(|(scn, addr)| RedoMark::new(addr, scn));
        let own_hold = holds
            .own
            .map(|(scn, addr)| RedoMark::new(addr, scn))
            .unwrap_or(mined_to);
        let event_count = stream.event_count();
        // what each record of this commit names as the last commit, with its own event_index
        let this_commit = LastCommit {
            scn: row.scn,
            xid: key,
            thread: row.thread,
            addr: commit_addr,
            event_index: 0,
        };
        let mut side = 0;
        if !failures.is_empty() {
            let mode = self.settings.on_decode_error;
            match failures::at_commit(mode, decision, event_count, failures.len() as u64) {
                AtCommit::Pass => {}
                AtCommit::Stop => {
                    if let Some(first) = failures.into_iter().next() {
                        drop(stream);
                        return Err(first.error.into());
                    }
                }
                AtCommit::Send { acknowledged } => {
                    let resume =
                        record_resume(mined_to, other_holds, own_hold, RecordPlace::BeforeLast);
                    Arc::make_mut(&mut self.position).set_record(
                        resume,
                        LastCommit {
                            event_index: acknowledged,
                            ..this_commit
                        },
                    );
                    for (dlq, ops) in failures.into_iter().filter_map(|f| f.dlq) {
                        for kind in [RecordKind::Dlq(dlq), RecordKind::Ops(ops)] {
                            sink.accept(EngineRecord {
                                kind,
                                position: Arc::clone(&self.position),
                            })?;
                            side += 1;
                        }
                        self.metrics.dlq_records += 1;
                        self.metrics.ops_events += 1;
                    }
                    self.metrics.records += side;
                }
            }
        }
        if event_count == 0 || decision == SkipDecision::SkipWhole {
            if decision == SkipDecision::SkipWhole && event_count > 0 {
                self.metrics.transactions_skipped += 1;
            }
            // drain so a spilled file is read to its end and checked, then deleted
            while stream.next_change()?.is_some() {}
            stream.finish()?;
            if side > 0 {
                self.end_first_start();
                self.skip = self.position.skip_rule();
                self.last_record_ms = self.clock.now_ms();
            }
            return Ok(side);
        }
        let mut emitted = 0;
        let first_scn = stream.first_scn();
        let data_bytes = stream.data_bytes();
        let (pdb, username) = stream
            .take_start()
            .map_or((None, None), |start| (start.pdb, start.username));
        let info = Arc::new(CommitInfo {
            con_xid: key,
            pdb: pdb.or_else(|| row.src_con_name.take()),
            commit_scn: row.scn,
            commit_addr,
            commit_time: row.timestamp,
            thread: row.thread,
            username: username.or_else(|| row.username.take()),
            first_scn,
            event_count,
            data_bytes,
        });
        // a record's resume point depends only on whether it is its transaction's last: the
        // two are computed once per commit, not once per record
        let resume_before_last =
            record_resume(mined_to, other_holds, own_hold, RecordPlace::BeforeLast);
        let resume_last = record_resume(mined_to, other_holds, own_hold, RecordPlace::Last);
        let mut index = 0u64;
        self.table_orders.start();
        while let Some(event) = stream.next_change()? {
            let this = index;
            index += 1;
            let (layout, table) = self.layouts.of(&event);
            let table_order = self.table_orders.next(table, &event.change.table);
            if !decision.emits(this) {
                continue;
            }
            let resume = match RecordPlace::of(this, event_count) {
                RecordPlace::BeforeLast => resume_before_last,
                RecordPlace::Last => resume_last,
            };
            // in place: the same as `at_record`, with one copy of the position per record
            Arc::make_mut(&mut self.position).set_record(
                resume,
                LastCommit {
                    event_index: this + 1,
                    ..this_commit
                },
            );
            let record = EngineRecord {
                kind: RecordKind::Change(ChangeRecord {
                    commit: Arc::clone(&info),
                    event,
                    event_index: this,
                    table_order,
                    layout,
                }),
                position: Arc::clone(&self.position),
            };
            sink.accept(record)?;
            emitted += 1;
        }
        stream.finish()?;
        self.end_first_start();
        self.skip = self.position.skip_rule();
        self.metrics.transactions_committed += 1;
        self.metrics.records += emitted;
        self.last_record_ms = self.clock.now_ms();
        Ok(side + emitted)
    }

    fn apply_ddl(&mut self, row: &MinedRow, info: &DdlInfo) -> Result<(), CdcError> {
        let object = info.table.as_ref();
        let owner = object
            .and_then(|t| t.owner.clone())
            .or_else(|| row.seg_owner.clone())
            .unwrap_or_default();
        let pdb = row
            .src_con_name
            .clone()
            .filter(|p| p != "CDB$ROOT")
            .unwrap_or_default();
        let mut seen = BTreeMap::new();
        seen.insert("pdb".to_owned(), pdb);
        seen.insert("owner".to_owned(), owner);
        seen.insert(
            "object".to_owned(),
            object.map(|t| t.name.clone()).unwrap_or_default(),
        );
        seen.insert("scn".to_owned(), row.scn.to_string());
        seen.insert(
            "sql".to_owned(),
            ddl_text_shown(row.sql_redo.as_deref().unwrap_or("")),
        );
        self.pending_ops.push(OpsEvent {
            event_type: "ddl-seen",
            details: seen,
        });
        let touches_captured = info.table.as_ref().is_some_and(|t| {
            let owner = t
                .owner
                .clone()
                .or_else(|| row.seg_owner.clone())
                .unwrap_or_default();
            let mut id = TableId::new(owner, t.name.clone());
            if let Some(pdb) = row.src_con_name.as_ref().filter(|p| *p != "CDB$ROOT") {
                id = id.in_pdb(pdb.clone());
            }
            self.tables.contains_key(&id) || (self.settings.table_filter)(&id)
        });
        if !touches_captured {
            return Ok(());
        }
        match info.kind {
            DdlKind::Create
            | DdlKind::Drop
            | DdlKind::Rename
            | DdlKind::AlterColumns
            | DdlKind::PartitionMaintenance => {
                let captured_before: HashSet<TableId> = self.tables.keys().cloned().collect();
                let announced = self.pending_schema.len();
                // a stored version differing from the dictionary matters at start only
                let _ = self.refresh_objects(row.scn)?;
                let events: Vec<OpsEvent> = self.pending_schema[announced..]
                    .iter()
                    .flat_map(|change| ddl_events(change, &captured_before, row.scn))
                    .collect();
                self.pending_ops.extend(events);
                Ok(())
            }
            DdlKind::Truncate | DdlKind::Other(_) => Ok(()),
        }
    }

    /// Resolves the captured object ids and table layouts again. A table whose layout
    /// changed gets a new schema version, valid from `valid_from`; new versions and tables no
    /// longer captured wait in `pending_schema` for the schema topic. Returns the tables whose
    /// stored version valid at `valid_from` (the resume SCN, at start) differs from the
    /// dictionary, with that version's number.
    fn refresh_objects(&mut self, valid_from: Scn) -> Result<Vec<(TableId, u32)>, CdcError> {
        let filter = Arc::clone(&self.settings.table_filter);
        let pdbs = self.settings.pdbs.clone();
        let captured: Vec<CapturedObject> = self
            .source
            .resolve_objects(&move |t: &TableId| {
                (pdbs.is_empty() || t.pdb.as_ref().is_some_and(|p| pdbs.contains(p))) && filter(t)
            })
            .map_err(source_stop)?;
        let mut objects = foldhash::HashMap::default();
        let mut tables: Vec<TableId> = Vec::new();
        let mut seen = HashSet::new();
        for object in captured {
            if seen.insert(object.table.clone()) {
                tables.push(object.table.clone());
            }
            objects.insert((object.con, object.object), object.table);
        }
        let layouts = self.source.table_layouts(&tables).map_err(source_stop)?;
        let mut decode_tables = foldhash::HashMap::default();
        let mut differing = Vec::new();
        for layout in layouts {
            let table = layout.table.clone();
            let unchanged = self.tables.get(&table).filter(|current| {
                let current = current.layout();
                current.columns == layout.columns
                    && current.key == layout.key
                    && current.supplemental == layout.supplemental
            });
            let decode_table = match unchanged {
                Some(current) => current.clone(),
                None => {
                    // numbering goes on from what an earlier run published, and a layout it
                    // published keeps its number
                    if let Some(stored) = self.published.valid_at(&table, valid_from)
                        && !(stored.same)(&layout)
                    {
                        differing.push((table.clone(), stored.version));
                    }
                    let highest = self
                        .next_version
                        .entry(table.clone())
                        .or_insert_with(|| self.published.highest(&table));
                    let (version, from) = match self.published.take_same(&table, &layout) {
                        Some(stored) => stored,
                        None => (*highest + 1, valid_from),
                    };
                    *highest = (*highest).max(version);
                    let mut layout = layout;
                    layout.version = version;
                    layout.valid_from = from;
                    let column_filter = Arc::clone(&self.settings.column_filter);
                    let for_table = table.clone();
                    let filter = ColumnFilter::from_fn(move |column: &str| {
                        column_filter(&for_table, column)
                    });
                    let table = DecodeTable::new(Arc::new(layout), filter)
                        .map_err(|e| CdcError::new(CdcCode::Decode, e.to_string()))?;
                    self.pending_schema
                        .push(SchemaChange::Version(Arc::clone(table.layout())));
                    table
                }
            };
            self.layouts.register(&decode_table);
            decode_tables.insert(table, decode_table);
        }
        let mut removed: Vec<&TableId> = self
            .tables
            .keys()
            .filter(|t| !decode_tables.contains_key(*t))
            .collect();
        removed.sort();
        self.pending_schema
            .extend(removed.into_iter().cloned().map(SchemaChange::Removed));
        self.objects = Arc::new(objects);
        self.tables = Arc::new(decode_tables);
        Ok(differing)
    }

    /// CDC-6003 at start: a table whose stored schema version valid at the resume SCN differs
    /// from the dictionary, though its last DDL came more than [`SCHEMA_DDL_MARGIN_S`] before
    /// that SCN's time. DDL after the resume point (still ahead in the redo) explains a
    /// difference; an older one means the stored versions are wrong (a damaged schema topic,
    /// an offset moved past DDL it never saw), and what they say of the records already sent
    /// cannot be trusted. Where the database cannot tell the times, there is no stop.
    fn check_stored_schemas(&mut self, differing: &[(TableId, u32)]) -> Result<(), CdcError> {
        if differing.is_empty() {
            return Ok(());
        }
        let resume = self.position.resume.scn;
        let tables: Vec<TableId> = differing.iter().map(|(t, _)| t.clone()).collect();
        let after = self
            .source
            .last_ddl_after(&tables, resume)
            .map_err(source_stop)?;
        let stale: Vec<String> = differing
            .iter()
            .filter_map(|(table, version)| {
                let (_, seconds) = after.iter().find(|(t, _)| t == table)?;
                (*seconds <= -SCHEMA_DDL_MARGIN_S).then(|| {
                    format!(
                        "{table} (stored version {version}; its last DDL was {} s before the \
                         resume SCN {resume})",
                        -seconds
                    )
                })
            })
            .collect();
        if stale.is_empty() {
            return Ok(());
        }
        Err(CdcError::new(
            CdcCode::SchemaMismatch,
            format!(
                "the schema topic's version of {} differs from the dictionary, and no DDL since \
                 the resume point explains it",
                stale.join(", ")
            ),
        ))
    }

    // ---- policies, heartbeats ---------------------------------------------------------------

    fn run_policies(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        let now = self.clock.now_ms();
        self.buffer.set_clock_ms(now);
        let mut records = 0;
        let discards = check_age(self.settings.age, now, self.txn_facts())?;
        for mut discard in discards {
            self.held_lob_inserts.remove(&discard.key);
            self.drop_failures(discard.key, &mut discard.ops_event);
            self.buffer.release(discard.key)?;
            Arc::make_mut(&mut self.position).released_xids = self.buffer.ledger().clone();
            let dlq = DlqRecord {
                kind: discard.dlq.kind(),
                xid: discard.key,
                table: None,
                scn: discard.dlq.first_scn,
                addr: None,
                operation: None,
                status: None,
                info: None,
                sql_redo: None,
                message: discard.dlq.message.clone(),
                details: discard.ops_event.details.clone(),
            };
            self.emit_between(sink, RecordKind::Ops(discard.ops_event))?;
            self.emit_between(sink, RecordKind::Dlq(dlq))?;
            self.metrics.transactions_discarded += 1;
            self.metrics.ops_events += 1;
            self.metrics.dlq_records += 1;
            records += 2;
        }
        if self.orphans.is_due(now) {
            let snapshot = match self.database_snapshot() {
                Ok(snapshot) => snapshot,
                // an orphan check is advisory: a failed read waits for the next interval
                Err(e) => {
                    tracing::warn!(error = %e, "orphan check skipped: GV$TRANSACTION unreadable");
                    return Ok(records);
                }
            };
            let mined_to = self.cursor.mined_to.map(|m| m.scn).unwrap_or(Scn::ZERO);
            let facts = self.txn_facts();
            let check = self.orphans.check(now, mined_to, &snapshot, facts)?;
            for mut release in check.releases {
                self.held_lob_inserts.remove(&release.key);
                self.drop_failures(release.key, &mut release.ops_event);
                self.buffer.release(release.key)?;
                Arc::make_mut(&mut self.position).released_xids = self.buffer.ledger().clone();
                self.emit_between(sink, RecordKind::Ops(release.ops_event))?;
                self.metrics.orphans_released += 1;
                self.metrics.ops_events += 1;
                records += 1;
            }
        }
        Ok(records)
    }

    /// A transaction discarded or released drops the rows it held that could not be decoded:
    /// its ops event, the trace of everything it held, counts them.
    fn drop_failures(&mut self, key: ConXid, event: &mut OpsEvent) {
        let undecodable = self.held_failures.take(key).len();
        if undecodable > 0 {
            event
                .details
                .insert("undecodable_rows".to_owned(), undecodable.to_string());
        }
    }

    fn txn_facts(&self) -> Vec<TxnFacts> {
        self.buffer
            .open_transactions()
            .map(TxnFacts::from)
            .collect()
    }

    fn database_snapshot(&mut self) -> Result<DatabaseSnapshot, SourceError> {
        let scn = self.source.current_scn()?;
        let active = self.source.active_transactions()?;
        let mut sessions = HashSet::new();
        let open: Vec<(ConXid, Option<SessionId>)> = self
            .buffer
            .open_transactions()
            .map(|t| (t.key(), t.start().and_then(|s| s.session)))
            .collect();
        for s in open.into_iter().filter_map(|(_, session)| session) {
            if self.source.session_exists(SessionRef {
                sid: s.sid,
                serial: s.serial,
            })? {
                sessions.insert(s);
            }
        }
        Ok(DatabaseSnapshot {
            scn,
            transactions: active.iter().map(|t| ConXid::new(t.con, t.xid)).collect(),
            sessions,
        })
    }

    /// The resume candidate between transactions.
    fn current_resume(&self) -> ResumePoint {
        let holds = self
            .buffer
            .resume_floor(None)
            .map(|(scn, addr)| RedoMark::new(addr, scn));
        match self.cursor.mined_to {
            Some(mined_to) => resume_candidate(mined_to, holds),
            None => self.position.resume,
        }
    }

    fn emit_between(
        &mut self,
        sink: &mut dyn RecordSink,
        kind: RecordKind,
    ) -> Result<(), EngineError> {
        let position = Arc::new(self.position.at_heartbeat(self.current_resume()));
        sink.accept(EngineRecord {
            kind,
            position: Arc::clone(&position),
        })?;
        self.position = position;
        self.last_record_ms = self.clock.now_ms();
        self.metrics.records += 1;
        Ok(())
    }

    /// Sends the layouts resolved since the last call, one record each, then the ops events
    /// waiting: those of the DDL that changed the layouts, and of reconnects.
    fn emit_pending(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        let pending = std::mem::take(&mut self.pending_schema);
        let ops = std::mem::take(&mut self.pending_ops);
        let count = (pending.len() + ops.len()) as u64;
        for change in pending {
            self.emit_between(sink, RecordKind::Schema(change))?;
        }
        for event in ops {
            self.emit_between(sink, RecordKind::Ops(event))?;
            self.metrics.ops_events += 1;
        }
        Ok(count)
    }

    fn emit_heartbeat(
        &mut self,
        sink: &mut dyn RecordSink,
        reason: HeartbeatReason,
    ) -> Result<(), EngineError> {
        let mined_to = self.cursor.mined_to.map(|m| m.scn);
        self.emit_between(sink, RecordKind::Heartbeat { reason, mined_to })?;
        self.metrics.heartbeats_sent += 1;
        Ok(())
    }
}

/// Every schema version decoded with.
#[derive(Default)]
struct SchemaVersions {
    /// By table, oldest first, with the table's number (its order of registration), which
    /// [`TableOrders`] counts in.
    by_table: foldhash::HashMap<TableId, (usize, Vec<Arc<TableLayout>>)>,
    /// The same layouts by the address of the table name the rows of one version share (one
    /// `Arc` per version): a commit hashes one pointer per change instead of the name's
    /// strings. The entry holds the name, so no later name can take its address, and is never
    /// replaced.
    by_shared_name: foldhash::HashMap<usize, (Arc<TableId>, Arc<TableLayout>, usize)>,
}

impl SchemaVersions {
    fn register(&mut self, table: &DecodeTable) {
        let layout = table.layout();
        let name = table.table();
        let tables = self.by_table.len();
        let (number, versions) = self
            .by_table
            .entry(layout.table.clone())
            .or_insert_with(|| (tables, Vec::new()));
        let number = *number;
        if !versions.iter().any(|v| v.version == layout.version) {
            versions.push(Arc::clone(layout));
        }
        self.by_shared_name
            .entry(Arc::as_ptr(name) as usize)
            .or_insert_with(|| (Arc::clone(name), Arc::clone(layout), number));
    }

    /// The schema version a change was decoded with, and its table's number (`None` for a
    /// table never registered).
    fn of(&self, event: &ChangeEvent) -> (Arc<TableLayout>, Option<usize>) {
        let version = event.change.schema_version;
        let address = Arc::as_ptr(&event.change.table) as usize;
        if let Some((_, layout, number)) = self.by_shared_name.get(&address)
            && layout.version == version
        {
            return (Arc::clone(layout), Some(*number));
        }
        let table = self.by_table.get(&*event.change.table);
        let found =
            table.and_then(|(_, versions)| versions.iter().rev().find(|l| l.version == version));
        let number = table.map(|(number, _)| *number);
        match found {
            Some(layout) => (Arc::clone(layout), number),
            // unreachable: every decode table's layout is registered when it is made
            None => (
                Arc::new(TableLayout {
                    table: TableId::clone(&event.change.table),
                    version,
                    valid_from: Scn::ZERO,
                    columns: Vec::new(),
                    key: Vec::new(),
                    key_source: cdc_core::KeySource::None,
                    supplemental: Default::default(),
                }),
                number,
            ),
        }
    }
}

struct ReadStep {
    rows: StepRows,
    cut: bool,
}

/// A step's rows in redo order, in chunks that double from [`FIRST_CHUNK_ROWS`] up to
/// [`PIPELINE_CHUNK_ROWS`]: a step of any size is read without moving the rows already read
/// (a growing vector copies each row about twice), a step of a few rows stays small, and the
/// chunks are what a pipelined step decodes.
#[derive(Default)]
struct StepRows {
    chunks: Vec<Vec<MinedRow>>,
    len: usize,
}

impl StepRows {
    /// Inlined into the source's row callback, so that a row is moved once, straight into its
    /// chunk.
    #[inline(always)]
    fn push(&mut self, row: MinedRow) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < chunk.capacity() => chunk.push(row),
            last => {
                let rows = last.map_or(FIRST_CHUNK_ROWS, |chunk| {
                    (chunk.capacity() * 2).clamp(FIRST_CHUNK_ROWS, PIPELINE_CHUNK_ROWS)
                });
                let mut chunk = Vec::with_capacity(rows);
                chunk.push(row);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn iter(&self) -> impl Iterator<Item = &MinedRow> {
        self.chunks.iter().flatten()
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut MinedRow> {
        self.chunks.iter_mut().flatten()
    }

    /// CSF continuation rows joined to the row they continue (rare: only statements longer
    /// than 4 000 bytes have them).
    fn join_continuations(self) -> Result<StepRows, DecodeError> {
        if !self.iter().any(|row| row.csf) {
            return Ok(self);
        }
        let mut rows = StepRows::default();
        join_continuations_into(self.chunks.into_iter().flatten(), |row| rows.push(row))?;
        Ok(rows)
    }
}

/// Steps of at least this many rows are decoded on a thread of their own while they are
/// applied (see `CaptureEngine::apply`); smaller ones are decoded first.
const PIPELINE_MIN_ROWS: usize = 2 * PIPELINE_CHUNK_ROWS;

/// Rows a chunk of a pipelined step: large enough that the hand-off is noise (a chunk is a
/// millisecond or more of decoding), and that a pool of decode threads still shares it
/// ([`crate::decode::PARALLEL_MIN_ROWS`]).
const PIPELINE_CHUNK_ROWS: usize = 512;

/// Rows of a step's first chunk; each later chunk holds twice as many, up to
/// [`PIPELINE_CHUNK_ROWS`].
const FIRST_CHUNK_ROWS: usize = 16;

/// Decoded chunks waiting to be applied, at most: bounds the memory the decode thread runs
/// ahead with.
const PIPELINE_DEPTH: usize = 4;

/// Objects whose schema version a step's decoding remembers (a power of two).
const RESOLVED_SLOTS: usize = 64;

/// The rows a step's decode thread takes (`None` once taken).
fn take_rows(handed: &std::sync::Mutex<Option<StepRows>>) -> Option<StepRows> {
    handed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
}

/// What decoding a step needs, owned so that a thread of its own can decode it while the
/// engine applies it.
struct StepDecoder {
    objects: Arc<foldhash::HashMap<(ConId, ObjectId), TableId>>,
    tables: Arc<foldhash::HashMap<TableId, DecodeTable>>,
    options: DecodeOptions,
    pool: Arc<DecodePool>,
}

impl StepDecoder {
    /// A whole step, decoded before any of it is applied.
    fn decode_all(&self, rows: &StepRows) -> Vec<Result<Decoded, DecodeError>> {
        let mut decoded = Vec::with_capacity(rows.len());
        let mut resolved = ResolvedObjects::default();
        for chunk in &rows.chunks {
            decoded.extend(self.decode(chunk, &mut resolved));
        }
        decoded
    }

    /// The rows of a chunk of the step; `resolved` remembers the schema versions found for
    /// the chunks before.
    fn decode<'s>(
        &'s self,
        rows: &[MinedRow],
        resolved: &mut ResolvedObjects<'s>,
    ) -> Vec<Result<Decoded, DecodeError>> {
        let mut tables = Vec::with_capacity(rows.len());
        for row in rows {
            tables.push(row.data_obj.and_then(|object| {
                resolved.table((row.src_con_id, object), |key| {
                    self.objects.get(key).and_then(|t| self.tables.get(t))
                })
            }));
        }
        // the rows are applied owned: each ROWID moves from its row into the change there
        decode_rows_with(rows, &tables, &self.options, &self.pool, RowIds::LeftInRow)
    }
}

/// The schema version of each object a step's rows name, as the decoder found it: a step's
/// rows come from a few objects, and finding one takes two lookups, the second of which
/// hashes and compares the table's names. A small cache indexed by a hash of the object id;
/// two objects on one slot take turns.
struct ResolvedObjects<'a> {
    slots: [Option<ResolvedObject<'a>>; RESOLVED_SLOTS],
}

/// An object and its schema version (`None`: no captured table).
type ResolvedObject<'a> = ((ConId, ObjectId), Option<&'a DecodeTable>);

impl Default for ResolvedObjects<'_> {
    fn default() -> Self {
        ResolvedObjects {
            slots: [None; RESOLVED_SLOTS],
        }
    }
}

impl<'a> ResolvedObjects<'a> {
    #[inline]
    fn table(
        &mut self,
        key: (ConId, ObjectId),
        find: impl FnOnce(&(ConId, ObjectId)) -> Option<&'a DecodeTable>,
    ) -> Option<&'a DecodeTable> {
        // Fibonacci hashing: object ids are allocated in sequence, and their low bits alone
        // would put tables created a fixed number of objects apart on one slot
        let hash = (key.1.0 ^ key.0.0.rotate_left(16)).wrapping_mul(0x9e37_79b9);
        let Some(slot) = self
            .slots
            .get_mut((hash >> (u32::BITS - RESOLVED_SLOTS.ilog2())) as usize)
        else {
            return find(&key);
        };
        if let Some((known, table)) = *slot
            && known == key
        {
            return table;
        }
        let table = find(&key);
        *slot = Some((key, table));
        table
    }
}

enum ReadError {
    Source(SourceError),
    Stop(CdcError),
}

impl From<SourceError> for ReadError {
    fn from(e: SourceError) -> Self {
        ReadError::Source(e)
    }
}

enum StepFailure {
    Retry,
    Stop(CdcError),
}

/// Whether a DDL row ends the step: a CREATE, DROP, rename, partition maintenance or column
/// change of a table that is captured or matches the include patterns (the object ids and
/// layouts must be resolved again before the next row is decoded).
/// The ops events of one layout change that DDL made: `ddl-applied` for every change,
/// `table-added` for a table captured from now on, `table-removed` for one no longer captured.
fn ddl_events(
    change: &SchemaChange,
    captured_before: &HashSet<TableId>,
    scn: Scn,
) -> Vec<OpsEvent> {
    let table = match change {
        SchemaChange::Version(layout) => &layout.table,
        SchemaChange::Removed(table) => table,
    };
    let mut applied = BTreeMap::new();
    applied.insert("pdb".to_owned(), table.pdb.clone().unwrap_or_default());
    applied.insert("owner".to_owned(), table.owner.clone());
    applied.insert("object".to_owned(), table.table.clone());
    applied.insert("scn".to_owned(), scn.to_string());
    let mut events = Vec::with_capacity(2);
    let name = |table: &TableId| BTreeMap::from([("table".to_owned(), table.pattern_name())]);
    match change {
        SchemaChange::Version(layout) => {
            applied.insert("version".to_owned(), layout.version.to_string());
            applied.insert("columns".to_owned(), layout.columns.len().to_string());
            events.push(OpsEvent {
                event_type: "ddl-applied",
                details: applied,
            });
            if !captured_before.contains(table) {
                let mut added = name(table);
                // snapshots are not built: a new table is captured from its first row
                added.insert("snapshot".to_owned(), "false".to_owned());
                events.push(OpsEvent {
                    event_type: "table-added",
                    details: added,
                });
            }
        }
        SchemaChange::Removed(table) => {
            applied.insert("removed".to_owned(), "true".to_owned());
            events.push(OpsEvent {
                event_type: "ddl-applied",
                details: applied,
            });
            events.push(OpsEvent {
                event_type: "table-removed",
                details: name(table),
            });
        }
    }
    events
}

/// A DDL statement as the `ddl-seen` event shows it: at most 2 000 characters, and nothing
/// after `IDENTIFIED BY`, so a password set by DDL never reaches the ops topic.
fn ddl_text_shown(sql: &str) -> String {
    let mut text: String = sql.chars().take(2000).collect();
    if let Some(at) = text.to_ascii_uppercase().find("IDENTIFIED BY") {
        text.truncate(at + "IDENTIFIED BY".len());
        text.push_str(" ***");
    }
    text
}

fn ddl_ends_step(
    row: &MinedRow,
    info: &DdlInfo,
    objects: &foldhash::HashMap<(ConId, ObjectId), TableId>,
    table_filter: &(dyn Fn(&TableId) -> bool + Send + Sync),
) -> bool {
    // a changed layout must decode the rows after it, so a column change of a captured table
    // ends the step as well
    if !matches!(
        info.kind,
        DdlKind::Create
            | DdlKind::Drop
            | DdlKind::Rename
            | DdlKind::PartitionMaintenance
            | DdlKind::AlterColumns
    ) {
        return false;
    }
    let pdb = row.src_con_name.as_ref().filter(|p| *p != "CDB$ROOT");
    let named = |t: &crate::decode::DdlTable| {
        let owner = t
            .owner
            .clone()
            .or_else(|| row.seg_owner.clone())
            .unwrap_or_default();
        let id = TableId::new(owner, t.name.clone());
        match pdb {
            Some(p) => id.in_pdb(p.clone()),
            None => id,
        }
    };
    [info.table.as_ref(), info.renamed_to.as_ref()]
        .into_iter()
        .flatten()
        .map(named)
        .any(|id| table_filter(&id) || objects.values().any(|t| *t == id))
}

/// The typed stop for a source error outside a step (opening, resolving the dictionary): what
/// a step would retry is CDC-1001 here, the rest as classified.
pub fn source_stop(error: SourceError) -> CdcError {
    match recovery_for(error, &[]) {
        Recovery::Stop(e) => e,
        Recovery::Reconnect(e) | Recovery::Remine(e) | Recovery::Shrink(e) => CdcError::new(
            CdcCode::TransientDatabase,
            format!("reading the dictionary failed: {e}"),
        )
        .with_source(e),
    }
}

/// Identity and topology at start and after every reconnect: one enabled redo thread.
fn check_topology<S: RedoSource>(
    source: &mut S,
    settings: &EngineSettings,
) -> Result<DbIdentity, CdcError> {
    let identity = source.identity().map_err(source_stop)?;
    if identity.enabled_threads.len() > 1 {
        return Err(CdcError::new(
            CdcCode::Topology,
            format!(
                "the database has {} enabled redo threads; one position covers one thread, so \
                 RAC is not supported yet",
                identity.enabled_threads.len()
            ),
        ));
    }
    for pdb in &settings.pdbs {
        if !identity.open_pdbs.iter().any(|p| &p.name == pdb) {
            return Err(CdcError::new(
                CdcCode::TransientDatabase,
                format!("the pluggable database {pdb} in cdc.database.pdbs is not open"),
            ));
        }
    }
    Ok(DbIdentity::new(identity.dbid, identity.resetlogs_scn))
}

/// The position of a first start (`docs/decisions.md`, D9): the current SCN (or `cdc.start.scn`),
/// and the transactions already open, which are mined whole.
fn first_start_position<S: RedoSource>(
    source: &mut S,
    settings: &EngineSettings,
    identity: DbIdentity,
) -> Result<Position, CdcError> {
    let open_scn = source.current_scn().map_err(source_stop)?;
    let open: Vec<(ConXid, Scn)> = source
        .active_transactions()
        .map_err(source_stop)?
        .into_iter()
        .map(|t| (ConXid::new(t.con, t.xid), t.start_scn))
        .collect();
    let floor = match settings.start_scn {
        Some(scn) => scn,
        None => source.current_scn().map_err(source_stop)?,
    };
    Ok(Position::first_start(identity, 0, open_scn, &open, floor))
}

/// Where the first step reads: from the resume address (inclusive), or from the start of the
/// log holding `resume_scn`.
fn initial_cursor<S: RedoSource>(
    source: &mut S,
    settings: &EngineSettings,
    position: &Position,
) -> Result<Cursor, CdcError> {
    if let Some(addr) = position.resume.addr {
        return Ok(Cursor {
            bound: RedoBound::AtOrAfter(addr),
            log_seq: addr.log_seq(),
            mined_to: None,
        });
    }
    let inventory = source
        .log_inventory(&LogInventoryQuery {
            from: Scn::ZERO,
            mode: settings.capture_mode,
            destination: settings.archive_destination.clone(),
        })
        .map_err(source_stop)?;
    let scn = position.resume.scn;
    let holding_log = |logs: &[crate::source::LogFile]| {
        logs.iter()
            .filter(|l| l.first_scn <= scn && scn < l.next_scn)
            .map(|l| l.sequence)
            .min()
    };
    let mut holding = holding_log(&inventory);
    if holding.is_none() && settings.capture_mode == CaptureMode::ArchiveOnly {
        // the start is in redo not archived yet: the online logs name its sequence, and
        // mining waits until that log is archived
        let online = source
            .log_inventory(&LogInventoryQuery {
                from: Scn::ZERO,
                mode: CaptureMode::Online,
                destination: settings.archive_destination.clone(),
            })
            .map_err(source_stop)?;
        holding = holding_log(&online);
    }
    let Some(log_seq) = holding else {
        let oldest = inventory.iter().map(|l| l.first_scn).min();
        return Err(CdcError::new(
            if oldest.is_some_and(|o| o > scn) {
                CdcCode::LogPurged
            } else {
                CdcCode::LogGap
            },
            format!(
                "no log holds SCN {scn}, where mining must start (the oldest listed log starts \
                 at {})",
                oldest
                    .map(|o| o.to_string())
                    .unwrap_or_else(|| "none".into())
            ),
        ));
    };
    Ok(Cursor {
        bound: RedoBound::Start,
        log_seq,
        mined_to: None,
    })
}

/// The ROW_ID LogMiner puts on the INSERT of a row with LOB locators; the UPDATE that follows
/// writes the LOB values with the row's real ROWID, as Oracle logs such an insert
/// (`docs/simulator.md`, the CLOB insert row of "Reference behaviours and the simulator").
const LOB_LOCATOR_ROWID: &str = "AAAAAAAAAAAAAAAAAA";

/// LOB rows (locator select, writes, trims, erases) and INTERNAL rows.
fn is_lob_row(operation: Operation) -> bool {
    matches!(
        operation,
        Operation::Internal
            | Operation::SelLobLocator
            | Operation::LobWrite
            | Operation::LobTrim
            | Operation::LobErase
    )
}

/// The INSERT with the locator UPDATE folded in, when `update` is that UPDATE: same table
/// and schema version, its WHERE values those of the inserted row, and it changes nothing but
/// the columns the INSERT showed as `EMPTY_CLOB()`/`EMPTY_BLOB()`. One row inserted is one
/// change, as the database made it; the change takes the real ROWID.
fn merge_locator_update(held: &ChangeEvent, update: &RowChange) -> Option<ChangeEvent> {
    let insert = &held.change;
    if update.op != ChangeOp::Update
        || update.table != insert.table
        || update.schema_version != insert.schema_version
    {
        return None;
    }
    let inserted = insert.after.as_ref()?;
    let value_of = |column: u16| {
        inserted
            .iter()
            .find(|c| c.column == column)
            .map(|c| &c.value)
    };
    let same_row = update
        .before
        .as_ref()?
        .iter()
        .all(|c| value_of(c.column) == Some(&c.value));
    let only_locators = update
        .after
        .as_ref()?
        .iter()
        .all(|c| match value_of(c.column) {
            Some(Value::EmptyLob) => true,
            Some(v) => *v == c.value,
            None => false,
        });
    if !same_row || !only_locators {
        return None;
    }
    let mut merged = held.clone();
    if let (Some(after), Some(written)) = (merged.change.after.as_mut(), update.after.as_ref()) {
        for column in after.iter_mut() {
            if column.value == Value::EmptyLob
                && let Some(w) = written.iter().find(|w| w.column == column.column)
            {
                column.value = w.value.clone();
            }
        }
    }
    merged.change.row_id = update.row_id.clone();
    Some(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_text_shown_is_bounded_and_hides_passwords() {
        assert_eq!(
            ddl_text_shown(r#"alter user "APP" identified by "Hunter2" account unlock"#),
            r#"alter user "APP" identified by ***"#
        );
        assert_eq!(
            ddl_text_shown("ALTER TABLE T ADD (C NUMBER)"),
            "ALTER TABLE T ADD (C NUMBER)"
        );
        let long = "é".repeat(3000);
        assert_eq!(ddl_text_shown(&long).chars().count(), 2000);
    }
    use cdc_core::config::Config;

    #[test]
    fn table_orders_count_each_table_by_number_or_name() {
        let orders = TableId::new("APP", "ORDERS");
        let lines = TableId::new("APP", "LINES");
        let docs = TableId::new("APP", "DOCS");
        let mut counted = TableOrders::default();
        counted.start();
        let got: Vec<u64> = [
            (Some(1), &orders),
            (Some(0), &lines),
            (None, &docs),
            (Some(1), &orders),
            (None, &docs),
            (Some(0), &lines),
        ]
        .into_iter()
        .map(|(number, table)| counted.next(number, table))
        .collect();
        assert_eq!(got, [1, 1, 1, 2, 2, 2]);
        // the next commit counts from 1 again
        counted.start();
        assert_eq!(counted.next(Some(1), &orders), 1);
        assert_eq!(counted.next(None, &docs), 1);
        assert_eq!(counted.next(Some(0), &lines), 1);
    }

    proptest::proptest! {
        /// Numbered or not, each change gets the count of its table so far in its commit.
        #[test]
        fn table_orders_are_counts_per_commit(
            commits in proptest::collection::vec(
                proptest::collection::vec(0usize..12, 0..40),
                1..6,
            ),
        ) {
            // tables 0..8 have numbers (in another order), the others none
            let tables: Vec<(Option<usize>, TableId)> = (0..12)
                .map(|i| (7usize.checked_sub(i), TableId::new("APP", format!("T{i}"))))
                .collect();
            let mut orders = TableOrders::default();
            for changes in commits {
                orders.start();
                let mut counts: HashMap<usize, u64> = HashMap::new();
                for table in changes {
                    let count = counts.entry(table).or_default();
                    *count += 1;
                    let (number, name) = &tables[table];
                    proptest::prop_assert_eq!(orders.next(*number, name), *count);
                }
            }
        }
    }

    /// Whatever the slots hold, each object gets what the maps give for it; an object is
    /// looked up once while no other takes its slot.
    #[test]
    fn resolved_objects_give_what_the_maps_give() {
        let layout = |name: &str| {
            DecodeTable::without_exclusions(Arc::new(cdc_core::TableLayout {
                table: TableId::new("APP", name),
                version: 1,
                valid_from: Scn(1),
                columns: vec![cdc_core::table::ColumnDef::new(
                    "ID",
                    1,
                    cdc_core::ColumnType::Number,
                )],
                key: vec!["ID".to_owned()],
                key_source: cdc_core::table::KeySource::PrimaryKey,
                supplemental: Default::default(),
            }))
        };
        let tables: Vec<DecodeTable> = (0..4).map(|i| layout(&format!("T{i}"))).collect();
        // sequential ids, ids a slot count apart, containers, and objects of no table
        let keys: Vec<(ConId, ObjectId)> = (0..300u32)
            .map(|i| (ConId(i % 3), ObjectId(72_000 + i * (1 + i % 17))))
            .collect();
        let find = |key: &(ConId, ObjectId)| {
            (!key.1.0.is_multiple_of(5)).then(|| &tables[(key.1.0 % 4) as usize])
        };
        let mut resolved = ResolvedObjects::default();
        for round in 0..3 {
            for key in keys.iter().cycle().skip(round * 7).take(2_000) {
                let got = resolved.table(*key, find);
                assert_eq!(got.map(|t| t as *const _), find(key).map(|t| t as *const _));
            }
        }
        let mut resolved = ResolvedObjects::default();
        let mut lookups = 0;
        for _ in 0..100 {
            for key in keys.iter().take(4) {
                resolved.table(*key, |k| {
                    lookups += 1;
                    find(k)
                });
            }
        }
        assert_eq!(lookups, 4);
    }

    #[test]
    fn settings_from_a_connector_configuration() {
        let config = Config::from_properties(
            "name=orders-cdc\n\
             cdc.source=sim\n\
             cdc.topic.prefix=shop\n\
             cdc.tables.include=APP\\\\..*\n\
             cdc.tables.exclude=APP\\\\.DOCS\n\
             cdc.columns.exclude=APP\\\\.CUSTOMERS\\\\.SSN\n\
             cdc.users.exclude=ETL_BATCH\n\
             cdc.capture.mode=archive_only\n\
             cdc.heartbeat.interval.ms=0\n\
             cdc.transaction.max.age.ms=60000\n\
             cdc.transaction.max.age.action=discard\n\
             cdc.on.decode.error=dlq\n\
             cdc.mining.max.logs.per.step=4\n\
             cdc.retry.extra.error.codes=ORA-12345\n",
        )
        .unwrap()
        .validate()
        .unwrap();
        let s = EngineSettings::from_config(&config);
        assert_eq!(s.server, "shop");
        assert_eq!(s.capture_mode, CaptureMode::ArchiveOnly);
        assert_eq!(s.heartbeat_interval, None);
        assert_eq!(s.age.max_age_ms, Some(60_000));
        assert_eq!(s.age.action, AgeAction::Discard);
        assert_eq!(s.on_decode_error, DecodeErrorMode::Dlq);
        assert_eq!(s.max_logs_per_step, 4);
        assert_eq!(s.users_exclude, ["ETL_BATCH"]);
        assert_eq!(s.extra_transient, [OraCode(12345)]);
        assert!((s.table_filter)(&TableId::new("APP", "ORDERS")));
        assert!(!(s.table_filter)(&TableId::new("APP", "DOCS")));
        assert!(!(s.table_filter)(&TableId::new("HR", "AUDIT_LOG")));
        assert!((s.column_filter)(&TableId::new("APP", "CUSTOMERS"), "SSN"));
        assert!(!(s.column_filter)(
            &TableId::new("APP", "CUSTOMERS"),
            "NAME"
        ));
        assert!(s.buffer.spill_dir.ends_with("orders-cdc"));
    }
}
