//! The records the engine emits and how they leave it: [`EngineRecord`] and its kinds, the
//! [`RecordSink`] they go to, the engine's errors, metrics and step reports.

use super::*;

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

impl ChangeRecord {
    /// Whether a Kafka transaction may end after this record (the last of its Oracle
    /// transaction).
    pub fn is_last(&self) -> bool {
        self.event_index + 1 >= self.commit.event_count
    }
}

/// Why a heartbeat was sent.
#[non_exhaustive]
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
    pub kind: DlqKind,
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
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// A chunk of a journaled transaction, or a tombstone of one, for the journal topic.
    Journal(cdc_journal::JournalRecord),
    /// A row a snapshot read (`op=r`).
    Snapshot(SnapshotRecord),
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
#[non_exhaustive]
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

impl From<DecodeThreadStopped> for EngineError {
    fn from(e: DecodeThreadStopped) -> Self {
        EngineError::Stop(CdcError::new(CdcCode::Decode, e.to_string()))
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
    /// Steps mined again with a redo dictionary for rows older than a DDL (the lag case).
    pub lag_replays: u64,
    /// Gauge: open transactions that are journaled.
    pub journaled_transactions: u64,
    /// Journal chunks and tombstones sent.
    pub journal_chunks: u64,
    pub journal_tombstones: u64,
    pub window_logs: u64,
    pub last_step_ms: u64,
    pub mined_to_scn: u64,
    pub current_scn: u64,
    /// The redo-retention guard (`retention.rs`), at the last log inventory: the age of the
    /// log holding the resume point (now minus its FIRST_TIME), and whether it is the oldest
    /// log of its thread still available. `None` when unknown (no inventory read yet, the
    /// log not listed, or no FIRST_TIME).
    pub resume_log_age_ms: Option<u64>,
    pub resume_log_is_oldest: Option<bool>,
    /// The snapshot stage's counters and gauges.
    pub snapshot: SnapshotMetrics,
}

/// What one step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepReport {
    /// Rows applied: a row with the all-zero RS_ID read again after the cursor (an earlier
    /// step applied it) is not counted.
    pub rows: u64,
    pub records: u64,
    /// The step failed and will be mined again from the same cursor.
    pub retried: bool,
    /// The step ended early at a DDL that changes the captured set.
    pub cut: bool,
    /// Snapshot records (rows and their ops events) emitted after the step.
    pub snapshot_rows: u64,
}
