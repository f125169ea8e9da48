//! The ground truth: what the simulated database committed, in commit order, with the values
//! as `cdc-core` [`Value`]s, so a test compares what the engine delivers with what the database
//! committed.

use cdc_core::change::ChangeOp;
use cdc_core::{ConId, OracleDateTime, RedoAddr, Scn, TableId, Value, Xid};
use serde::{Deserialize, Serialize};

/// One committed row change. `before`/`after` are the full row images as the database held
/// them, in column order of the layout valid when the change was made. LOB columns are not in
/// the redo of a before image (LogMiner never puts them in a WHERE clause); the truth still has
/// them, so a comparison treats a LOB's before value as unavailable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthChange {
    pub op: ChangeOp,
    pub table: TableId,
    pub scn: Scn,
    pub row_id: String,
    pub before: Option<Vec<(String, Value)>>,
    pub after: Option<Vec<(String, Value)>>,
    /// The table has a column LogMiner cannot render: its rows are UNSUPPORTED.
    pub unsupported: bool,
    /// A DBMS_LOB call (write, trim, erase) on an existing row: only LOB rows carry it, so a
    /// capture under `cdc.lob.mode=skip` has no record of it.
    #[serde(default)]
    pub lob_only: bool,
}

/// A committed transaction with its surviving changes (savepoint-undone and failed statements
/// removed), in the order they were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthTransaction {
    pub con: ConId,
    pub pdb: Option<String>,
    pub xid: Xid,
    pub username: String,
    pub start_scn: Scn,
    pub commit_scn: Scn,
    /// The COMMIT row's redo address.
    pub commit_addr: RedoAddr,
    pub commit_time: OracleDateTime,
    pub changes: Vec<TruthChange>,
}

/// A committed DDL statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruthDdl {
    pub con: ConId,
    pub table: TableId,
    pub sql: String,
    pub scn: Scn,
    pub commit_addr: RedoAddr,
    /// Rows the statement itself put in the table: CREATE TABLE … AS SELECT loads its copy by
    /// direct path, so they are in no transaction here and in no redo row; a snapshot reads
    /// them (`SimDatabase::committed_rows`).
    #[serde(default)]
    pub rows_loaded: u64,
}

/// Everything the database committed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroundTruth {
    /// Transactions with at least one change, in commit order.
    pub transactions: Vec<TruthTransaction>,
    pub ddl: Vec<TruthDdl>,
    /// Transactions that rolled back (full rollback, killed session, instance crash).
    pub rolled_back: u64,
}

impl GroundTruth {
    /// The committed changes a capture of `captures` tables, without `excluded_users`, must
    /// deliver: transactions left empty by the filter are dropped.
    pub fn captured(
        &self,
        captures: &dyn Fn(&TableId) -> bool,
        excluded_users: &[String],
    ) -> Vec<TruthTransaction> {
        self.transactions
            .iter()
            .filter(|t| !excluded_users.iter().any(|u| u == &t.username))
            .filter_map(|t| {
                let changes: Vec<TruthChange> = t
                    .changes
                    .iter()
                    .filter(|c| captures(&c.table))
                    .cloned()
                    .collect();
                (!changes.is_empty()).then(|| TruthTransaction {
                    changes,
                    ..t.clone()
                })
            })
            .collect()
    }

    /// Number of committed row changes.
    pub fn change_count(&self) -> usize {
        self.transactions.iter().map(|t| t.changes.len()).sum()
    }
}
