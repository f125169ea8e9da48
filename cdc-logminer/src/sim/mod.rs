//! The redo simulator: a deterministic, seeded model of an Oracle database as LogMiner shows
//! it, behind the same [`RedoSource`](crate::source::RedoSource) trait as the real database.
//! It is what the engine's tests run against and the demo's source (`cdc.source=sim`).
//!
//! ```text
//!   WorkloadConfig ─► RandomWorkload ─┐                      ┌─► GroundTruth (committed changes,
//!   Scenario (JSON) ─► ScriptedEvents ┴─ DbOp ─► SimDatabase ┤    commit order, cdc-core Values)
//!                                                │ redo model: logs, RS_ID/SSN, private strands,
//!                                                │ switches, archive copies, purge, reuse
//!                                                ▼
//!                       SimSource: RedoSource ── render (SQL_REDO, STATUS, CSF …) ─► MinedRow
//!                                 + faults on demand (ORA-03113, -00028, -00310, -01291, …)
//!                                 + snapshot readers: flashback reads of the committed row
//!                                   versions (AS OF SCN, key or ROWID order, conditions)
//! ```
//!
//! Every behaviour is one Oracle documents for LogMiner or one observed on a running Oracle
//! (Database Free 23ai); `docs/simulator.md` lists them, with the choices made where neither
//! says. Same seed, same bytes: no wall clock, no hash order, no OS entropy.

mod clock;
mod condition;
mod db;
mod logminer;
mod model;
mod order;
mod preflight;
mod render;
mod rng;
mod scenario;
mod snapshot;
pub mod source;
mod truth;
mod workload;

pub use db::{CommittedRows, DbOp, RowSel, SessionName, SimConfig, SimDatabase, lob_out_of_row};
pub use model::{ColumnSpec, Organization, PartitionSpec, TableSpec};
pub use preflight::{SIM_LONG_COLUMN, SimPreflight};
pub use render::stored_bytes;
pub use scenario::{Event, Scenario};
pub use snapshot::{SimSnapshotReader, SnapshotFault};
pub use source::{Fault, SimSource, SourceCall};
pub use truth::{GroundTruth, TruthChange, TruthTransaction};
pub use workload::{Workload, WorkloadConfig};

use cdc_core::MinedRow;
use cdc_core::ora::OraCode;

/// Why the simulator could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// A scenario or operation that does not fit the database (unknown table, column, session).
    #[error("scenario: {0}")]
    Scenario(String),
    /// The simulated database refused the statement the way Oracle would.
    #[error("{1}")]
    Ora(OraCode, String),
    /// The row is locked by another session's open transaction (Oracle would wait).
    #[error("row lock: {0}")]
    Busy(String),
}

impl SimError {
    /// The same error, naming the scenario event (1-based) it came from.
    pub fn at_event(self, n: usize) -> SimError {
        match self {
            SimError::Scenario(m) => SimError::Scenario(format!("event {n}: {m}")),
            SimError::Ora(c, m) => SimError::Ora(c, format!("event {n}: {m}")),
            SimError::Busy(m) => SimError::Busy(format!("event {n}: {m}")),
        }
    }
}

/// OPERATION as 23ai shows it: code 9 rows (SEL_LOB_LOCATOR in earlier releases) read
/// INTERNAL, with SQL_REDO NULL.
pub fn operation_name(row: &MinedRow) -> &'static str {
    match row.operation {
        cdc_core::Operation::SelLobLocator if row.sql_redo.is_none() => "INTERNAL",
        op => op.name(),
    }
}

/// A V$LOGMNR_CONTENTS row as a JSON object keyed by Oracle's column names, values as Oracle
/// returns them (RS_ID as its padded text, TIMESTAMP in `YYYY-MM-DD HH24:MI:SS`).
pub fn row_to_json(row: &MinedRow) -> serde_json::Value {
    use serde_json::{Value as J, json};
    let opt = |s: &Option<String>| s.clone().map(J::String).unwrap_or(J::Null);
    json!({
        "SCN": row.scn.get(),
        "RS_ID": row.rs_id.to_string(),
        "SSN": row.ssn,
        "CSF": u8::from(row.csf),
        "XIDUSN": row.xid.usn,
        "XIDSLT": row.xid.slot,
        "XIDSQN": row.xid.sqn,
        "OPERATION": operation_name(row),
        "OPERATION_CODE": row.operation.code(),
        "ROLLBACK": u8::from(row.rollback),
        "STATUS": row.status,
        "INFO": opt(&row.info),
        "SEG_OWNER": opt(&row.seg_owner),
        "TABLE_NAME": opt(&row.table_name),
        "DATA_OBJ#": row.data_obj.map(|o| J::from(o.0)).unwrap_or(J::Null),
        "ROW_ID": opt(&row.row_id),
        "SQL_REDO": opt(&row.sql_redo),
        "USERNAME": opt(&row.username),
        "SESSION#": row.session.map(J::from).unwrap_or(J::Null),
        "SERIAL#": row.serial.map(J::from).unwrap_or(J::Null),
        "SRC_CON_ID": row.src_con_id.0,
        "SRC_CON_NAME": opt(&row.src_con_name),
        "THREAD#": row.thread.0,
        "TIMESTAMP": row.timestamp.map(|t| J::String(render::date_text(&t))).unwrap_or(J::Null),
    })
}
