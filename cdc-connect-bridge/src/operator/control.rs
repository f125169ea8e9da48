//! What the REST API may ask of a running connector: its status, health and configuration, the
//! lifecycle commands of Kafka Connect (stop, pause, resume, restart), its offsets, its
//! metrics, and its open transactions. The worker implements [`ConnectorControl`]; the REST layer (`rest`) only translates
//! HTTP to these calls, so it holds no connector logic of its own.

use std::collections::BTreeMap;

use std::sync::Arc;

use cdc_buffer::BufferMetrics;
use cdc_logminer::engine::{EngineMetrics, OpenTransactions};
use serde_json::{Map, Value as Json};

/// The state of the connector and of its one task, as Kafka Connect names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectorState {
    /// Capturing and delivering.
    Running,
    /// Paused by `PUT /pause`: the task keeps its Kafka clients and resumes where it was.
    Paused,
    /// Stopped by `PUT /stop`: nothing runs; offsets may be altered or reset.
    Stopped,
    /// Stopped by an error; the status carries the trace (the CDC message).
    Failed,
    /// Restarting (`POST /restart`).
    Restarting,
    /// Created and not started yet: the moment between the process start and the task's.
    Unassigned,
}

impl ConnectorState {
    /// Connect's spelling: `RUNNING`, `PAUSED`, `STOPPED`, `FAILED`, `RESTARTING`,
    /// `UNASSIGNED`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorState::Running => "RUNNING",
            ConnectorState::Paused => "PAUSED",
            ConnectorState::Stopped => "STOPPED",
            ConnectorState::Failed => "FAILED",
            ConnectorState::Restarting => "RESTARTING",
            ConnectorState::Unassigned => "UNASSIGNED",
        }
    }
}

/// The status of the connector and its task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorStatus {
    pub state: ConnectorState,
    /// `host:port` of the REST listener, as Connect's `worker_id`.
    pub worker_id: String,
    /// The error that failed the task (its CDC message), when `state` is `Failed`.
    pub trace: Option<String>,
}

/// One offset of the connector, in Connect's shape: the source partition (`{"server": prefix}`)
/// and the offset map; `None` as the offset means "no offset" (reset).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionOffset {
    pub partition: Map<String, Json>,
    pub offset: Option<Map<String, Json>>,
}

/// Whether the worker is ready, as Connect's `GET /health` reports it (KIP-1017). It says
/// nothing of the connector's own state: a FAILED connector runs in a healthy worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerHealth {
    /// The connector's task was started (whatever became of it since).
    Healthy,
    /// The task has not been started yet.
    Starting,
    /// The worker could not answer in time, or is stopping.
    Unhealthy,
}

/// Why a control call was refused or failed. The REST layer maps `BadRequest` to 400,
/// `Conflict` to 409 and `Internal` to 500, with Connect's `{"error_code", "message"}` body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Internal(String),
}

/// Counters of the Kafka side of the worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryMetrics {
    /// Kafka records handed to the producer (changes, tombstones, side records).
    pub records_sent: u64,
    /// Kafka records the broker acknowledged (ALO) or that a committed Kafka transaction held.
    pub records_acknowledged: u64,
    /// Bytes of keys and values handed to the producer.
    pub bytes_sent: u64,
    pub kafka_transactions_committed: u64,
    pub kafka_transactions_aborted: u64,
    /// Offsets written to the offsets topic.
    pub offsets_committed: u64,
    /// Oracle transactions split over several Kafka transactions.
    pub split_transactions: u64,
    /// At least once, after a restart: Kafka records mined again but not sent, because they
    /// were found in their topics (sent before the restart, past the offset).
    pub records_already_delivered: u64,
    /// Engine records waiting between the engine and the producer.
    pub queue_depth: u64,
    /// Commit time (ms since the epoch) of the last delivered Oracle transaction; −1 for none.
    pub last_commit_timestamp_ms: i64,
    /// How far the last delivered commit is behind the wall clock, in ms; −1 for none.
    pub millis_behind_source: i64,
    /// Current SCN of the database minus the SCN mined to; −1 when unknown.
    pub scn_lag: i64,
}

/// Everything `/metrics` shows, read at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// `cdc.topic.prefix`: the `server` label of every series.
    pub server: String,
    pub engine: EngineMetrics,
    pub buffer: BufferMetrics,
    pub delivery: DeliveryMetrics,
}

/// The open transactions as `GET /oracle-cdc/connectors/{name}/transactions` shows them: the
/// task's state, and the engine's last published view of its buffer while the task runs or is
/// paused (`None` in any other state, or before the engine published one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionsView {
    pub state: ConnectorState,
    pub view: Option<Arc<OpenTransactions>>,
}

/// The running connector as the REST API sees it. Every method returns promptly: a command
/// is handed to the worker, which carries it out on its own thread.
pub trait ConnectorControl: Send + Sync + 'static {
    /// The connector name (`name`).
    fn name(&self) -> String;
    /// The configuration as given, with every secret masked, and with `connector.class` (as
    /// Connect always shows it).
    fn config(&self) -> BTreeMap<String, String>;
    fn status(&self) -> ConnectorStatus;
    /// Whether the worker is ready: by default, starting while the connector is UNASSIGNED
    /// and healthy after.
    fn health(&self) -> WorkerHealth {
        match self.status().state {
            ConnectorState::Unassigned => WorkerHealth::Starting,
            _ => WorkerHealth::Healthy,
        }
    }
    /// Stops the task: the open Kafka transaction is finished or aborted, what was
    /// acknowledged is committed, then the state becomes `Stopped`.
    fn stop(&self) -> Result<(), ControlError>;
    fn pause(&self) -> Result<(), ControlError>;
    /// Resumes a paused or stopped connector.
    fn resume(&self) -> Result<(), ControlError>;
    /// Restarts the task (reads the offsets again).
    fn restart(&self) -> Result<(), ControlError>;
    /// The stored offsets (at most one partition: `{"server": prefix}`).
    fn offsets(&self) -> Result<Vec<PartitionOffset>, ControlError>;
    /// Replaces the stored offsets; only while `Stopped` (otherwise `BadRequest`, as Connect
    /// answers 400). A malformed offset is a `BadRequest` naming what is wrong.
    fn alter_offsets(&self, offsets: Vec<PartitionOffset>) -> Result<(), ControlError>;
    /// Deletes the stored offsets; only while `Stopped`.
    fn reset_offsets(&self) -> Result<(), ControlError>;
    fn metrics(&self) -> MetricsSnapshot;
    /// The open transactions the engine last published (at most about once a second); by
    /// default none, with the connector's state.
    fn transactions(&self) -> TransactionsView {
        TransactionsView {
            state: self.status().state,
            view: None,
        }
    }
}
