//! How a simulated database is set up: [`SimConfig`], a scenario's `database` object.

use serde::{Deserialize, Serialize};

use crate::sim::model::TableSpec;
use crate::source::{DatabaseRole, OpenMode};

/// How the simulated database is set up. Every field has a default; the seed drives the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SimConfig {
    pub seed: u64,
    pub db_name: String,
    /// PDB names; empty = a non-container database.
    pub pdbs: Vec<String>,
    /// Online log size; a log switches when it is full.
    pub log_size_bytes: u64,
    pub online_groups: u32,
    /// Archive destinations, `LOG_ARCHIVE_DEST_<n>` names in DEST_ID order.
    pub archive_dests: Vec<String>,
    /// A log is archived this many switches after it stopped being current (0 = at once).
    pub archive_lag_switches: u32,
    /// Whether transactions may keep their redo in private strands.
    pub private_strands: bool,
    /// The share of transactions that use a private strand.
    pub private_strand_rate: f64,
    /// A private strand is written to the log when it holds this many bytes.
    pub strand_bytes: u64,
    /// The share of START rows whose XID reads 0.0.0.
    pub zero_xid_start_rate: f64,
    /// The share of ROLLBACK rows whose RS_ID is all zero.
    pub zero_rs_id_rollback_rate: f64,
    /// The share of rolled-back transactions whose undo and ROLLBACK rows carry XIDSQN
    /// 0xFFFFFFFF.
    pub unknown_sqn_rate: f64,
    /// Tables created in every container at start; `None` = the standard workload schema.
    pub tables: Option<Vec<TableSpec>>,
    /// LOB columns use BasicFile storage (an INTERNAL and a LOB_TRIM row follow the writes of
    /// an out-of-row value); the default is SecureFile, 23ai's default.
    pub basicfile_lobs: bool,
    /// `V$DATABASE.DATABASE_ROLE` and `OPEN_MODE` as the database reports them: the redo is
    /// the same whatever role is played, the connector decides what it accepts.
    pub role: DatabaseRole,
    pub open_mode: OpenMode,
    /// On a physical standby, how many of the newest archived logs of each thread are not
    /// applied yet (`V$ARCHIVED_LOG.APPLIED = 'NO'`); the log inventory lists only applied ones.
    pub standby_apply_lag_logs: u32,
    /// The PDB (one of `pdbs`) the capture session is connected to; `None`: the CDB root, or a
    /// non-CDB. Connected to a PDB, ADD_LOGFILE fails with ORA-65040, a session by SCN range
    /// works, and the session sees only that PDB's objects, transactions and redo.
    pub session_pdb: Option<String>,
    /// The capture user may run DBMS_LOGMNR_D.BUILD (EXECUTE on the package, through
    /// EXECUTE_CATALOG_ROLE); without it a build fails with ORA-06550 / PLS-00201.
    pub dictionary_build_grant: bool,
    /// The bytes of redo a dictionary build writes; one that does not fit in the rest of the
    /// current log goes on in the next (DICTIONARY_BEGIN and DICTIONARY_END on different logs).
    pub dictionary_build_bytes: u64,
    /// UNDO_RETENTION, in seconds of the database's clock: how long the undo of a committed
    /// change is kept, so how far back a flashback read (a snapshot chunk) can go before it
    /// fails with ORA-01555.
    pub undo_retention_secs: u64,
    /// What a preflight check is shown beyond what the database models (`cdc.sim.preflight`).
    pub preflight: crate::sim::SimPreflight,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            db_name: "FREE".into(),
            pdbs: Vec::new(),
            log_size_bytes: 256 * 1024,
            online_groups: 3,
            archive_dests: vec!["LOG_ARCHIVE_DEST_1".into()],
            archive_lag_switches: 0,
            private_strands: true,
            private_strand_rate: 0.7,
            strand_bytes: 8 * 1024,
            zero_xid_start_rate: 0.05,
            zero_rs_id_rollback_rate: 0.2,
            unknown_sqn_rate: 0.2,
            tables: None,
            basicfile_lobs: false,
            role: DatabaseRole::Primary,
            open_mode: OpenMode::ReadWrite,
            standby_apply_lag_logs: 0,
            session_pdb: None,
            dictionary_build_grant: true,
            dictionary_build_bytes: 16 * 1024,
            undo_retention_secs: 900,
            preflight: crate::sim::SimPreflight::default(),
        }
    }
}
