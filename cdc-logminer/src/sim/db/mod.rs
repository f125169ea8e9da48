//! The simulated database: containers, sessions, transactions, the dictionary, and the redo
//! model (log sequences with blocks and byte offsets, SSNs, private strands, log switches,
//! archiving at several destinations, purge, online log reuse). This file holds the state and
//! its construction; each concern adds its part of `impl SimDatabase` in a file of its own:
//! `ops` (the operations and their dispatch), `sessions`, `transactions`, `strands` (private
//! strands), `undo`, `locks` (row locks), `tables` (finding a table), `dml`, `lobs`, `ddl`
//! (CREATE, ALTER including RENAME, TRUNCATE, DROP), `redo` (logs, switches, archiving,
//! RS_IDs), `dictionary` (dictionary builds in the redo),
//! `records` (what a redo record holds), `versions` (the committed row versions flashback
//! reads see, within the undo retention), `load` (tables filled with committed rows), `ctas`
//! (CREATE TABLE … AS SELECT: a table filled by its DDL) and `config`.
//!
//! ```text
//!   DbOp ──apply──► transaction change ──► redo group (one RS_ID, one SSN per row change)
//!                                         │ private strand? ──► held by the transaction until
//!                                         │                     commit / strand full / log switch,
//!                                         │                     keeping its original SCN
//!                                         ▼
//!                          current online log of the session's thread
//!                          (switch when full: bind strands, archive, reuse a group)
//! ```

mod config;
mod ctas;
mod ddl;
mod dictionary;
mod dml;
mod load;
mod lobs;
mod locks;
mod ops;
mod records;
mod redo;
mod sessions;
mod strands;
mod tables;
mod transactions;
mod undo;
mod versions;

pub use config::SimConfig;
pub(crate) use dictionary::RedoDictionary;
pub use load::CommittedRows;
pub use lobs::lob_out_of_row;
pub(crate) use ops::ColumnInput;
pub use ops::{DbOp, RowSel};
pub(crate) use records::{Body, DmlKind, LobRow, Placed};
pub(crate) use redo::RedoLog;
pub use sessions::{Session, SessionName};
pub(crate) use tables::TableRef;
pub(crate) use versions::{CommittedVersions, KeyIndex, KeyTuple, TableVersions, VersionState};

use std::collections::BTreeMap;

use cdc_core::{ConId, ObjectId, OracleDateTime, RedoThread, Scn, TableId};

use super::SimError;
use super::clock::SimClock;
use super::model::SimTable;
use super::rng::SimRng;
use super::truth::GroundTruth;
use crate::source::{DatabaseRole, OpenMode};
use locks::RowKey;

/// A container: the database itself (non-CDB) or one PDB.
#[derive(Debug, Clone)]
pub struct Container {
    pub con: ConId,
    pub name: Option<String>,
    pub tables: Vec<SimTable>,
    next_xid: u32,
}

/// The simulated database.
#[derive(Debug, Clone)]
pub struct SimDatabase {
    pub(crate) config: SimConfig,
    rng: SimRng,
    pub(crate) clock: SimClock,
    scn: u64,
    next_object: u32,
    pub(crate) containers: Vec<Container>,
    pub(crate) logs: Vec<RedoLog>,
    /// Index into `logs` of each thread's current log.
    pub(crate) current: Vec<usize>,
    pub(crate) sessions: BTreeMap<SessionName, Session>,
    next_sid: u32,
    switching: bool,
    switches: u64,
    locks: BTreeMap<RowKey, SessionName>,
    pub(crate) truth: GroundTruth,
    pub(crate) dbid: u64,
    pub(crate) resetlogs_scn: Scn,
    pub(crate) incarnation: u32,
    pub(crate) threads: Vec<RedoThread>,
    /// Dictionary builds written into the redo, oldest first.
    builds: Vec<dictionary::BuildInfo>,
    /// The committed row versions, shared with the snapshot readers handed out.
    pub(crate) versions: CommittedVersions,
}

impl SimDatabase {
    /// A database as `config` describes it, with its tables created at SCN 1000-ish.
    pub fn new(config: SimConfig) -> Result<SimDatabase, SimError> {
        if let Some(pdb) = &config.session_pdb
            && !config.pdbs.contains(pdb)
        {
            return Err(SimError::Scenario(format!(
                "the session's PDB {pdb} is not one of the database's PDBs ({})",
                config.pdbs.join(", ")
            )));
        }
        let mut rng = SimRng::new(config.seed);
        let clock_offset = rng.below(3600);
        let dbid = 1_000_000_000 + rng.below(3_000_000_000);
        let containers = if config.pdbs.is_empty() {
            vec![Container {
                con: ConId(0),
                name: None,
                tables: Vec::new(),
                next_xid: 0,
            }]
        } else {
            config
                .pdbs
                .iter()
                .enumerate()
                .map(|(i, name)| Container {
                    con: ConId(3 + i as u32),
                    name: Some(name.clone()),
                    tables: Vec::new(),
                    next_xid: 0,
                })
                .collect()
        };
        let start_scn = 2_000_000 + rng.below(1_000_000);
        let clock = SimClock::new(clock_offset);
        let versions = CommittedVersions::new(
            Scn(start_scn),
            clock.epoch_nanos(),
            config.undo_retention_secs,
        );
        let mut db = SimDatabase {
            rng,
            clock,
            scn: start_scn,
            next_object: 72_000,
            containers,
            logs: Vec::new(),
            current: Vec::new(),
            sessions: BTreeMap::new(),
            next_sid: 37,
            switching: false,
            switches: 0,
            locks: BTreeMap::new(),
            truth: GroundTruth::default(),
            dbid,
            resetlogs_scn: Scn(1_920_000),
            incarnation: 1,
            threads: vec![RedoThread(1)],
            builds: Vec::new(),
            versions,
            config,
        };
        db.open_log(0, RedoThread(1), 1);
        let specs = db
            .config
            .tables
            .clone()
            .unwrap_or_else(crate::sim::model::standard_tables);
        for spec in specs {
            let targets: Vec<usize> = match &spec.pdb {
                None => (0..db.containers.len()).collect(),
                Some(pdb) => vec![
                    db.containers
                        .iter()
                        .position(|c| c.name.as_deref() == Some(pdb.as_str()))
                        .ok_or_else(|| SimError::Scenario(format!("no PDB named {pdb}")))?,
                ],
            };
            for con in targets {
                db.create_table_in(con, &spec)?;
            }
        }
        Ok(db)
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// A role change (a switchover, a standby converted): what V$DATABASE reports from now on.
    pub fn set_role(&mut self, role: DatabaseRole, open_mode: OpenMode) {
        self.config.role = role;
        self.config.open_mode = open_mode;
    }

    /// The next connection lands in another container: `pdb` (one of the PDBs), or the CDB
    /// root for `None`.
    pub fn set_session_pdb(&mut self, pdb: Option<String>) -> Result<(), SimError> {
        if let Some(name) = &pdb
            && !self.config.pdbs.contains(name)
        {
            return Err(SimError::Scenario(format!("no PDB named {name}")));
        }
        self.config.session_pdb = pdb;
        Ok(())
    }

    /// A physical standby's apply catches up (or falls behind): the newest `logs` archived
    /// logs of each thread are not applied.
    pub fn set_standby_apply_lag_logs(&mut self, logs: u32) {
        self.config.standby_apply_lag_logs = logs;
    }

    /// The container of the PDB the session is connected to, if it is connected to one.
    pub fn session_container(&self) -> Option<ConId> {
        let pdb = self.config.session_pdb.as_deref()?;
        self.containers
            .iter()
            .find(|c| c.name.as_deref() == Some(pdb))
            .map(|c| c.con)
    }

    /// The highest SCN handed out.
    pub fn current_scn(&self) -> Scn {
        Scn(self.scn)
    }

    /// The containers (one for a non-CDB) with their tables and current rows.
    pub fn containers(&self) -> &[Container] {
        &self.containers
    }

    /// What the database committed so far.
    pub fn truth(&self) -> &GroundTruth {
        &self.truth
    }

    /// The seconds from the time `scn` was current to the last DDL on `table`, in the
    /// database's clock; negative when the DDL came first. As SCN_TO_TIMESTAMP, the time of an
    /// SCN is that of the newest redo at or before it; `None` for an SCN before all redo, or a
    /// table the database does not list. A table no DDL in the redo touched was created before
    /// it: its last DDL is an hour before the first redo.
    pub fn last_ddl_after(&self, table: &TableId, scn: Scn) -> Option<i64> {
        let time_of = |at: Scn| {
            self.logs
                .iter()
                .flat_map(|log| &log.records)
                .filter(|p| p.record.scn <= at)
                .max_by_key(|p| p.record.scn)
                .map(|p| p.record.time.epoch_nanos())
        };
        let ddl_time = match self.truth.ddl.iter().rev().find(|d| &d.table == table) {
            Some(ddl) => time_of(ddl.scn)?,
            None => {
                let listed = self
                    .containers
                    .iter()
                    .flat_map(|c| &c.tables)
                    .any(|t| !t.dropped && &t.id == table);
                let first = self
                    .logs
                    .iter()
                    .flat_map(|log| &log.records)
                    .map(|p| p.record.time.epoch_nanos())
                    .min()?;
                if !listed {
                    return None;
                }
                first - 3_600 * 1_000_000_000
            }
        };
        // as Oracle's DATE arithmetic: both times cut to their second, then subtracted
        let second = |nanos: i128| nanos.div_euclid(1_000_000_000);
        let seconds = second(ddl_time) - second(time_of(scn)?);
        i64::try_from(seconds).ok()
    }

    /// The time now.
    pub fn now(&self) -> OracleDateTime {
        self.clock.now()
    }

    /// The next SCN, 1–3 above the last.
    fn next_scn(&mut self) -> Scn {
        self.scn += 1 + self.rng.below(3);
        self.publish_scn();
        Scn(self.scn)
    }

    /// Tells the committed versions where the SCN and the clock are: what a flashback read
    /// may ask for, and which undo has expired.
    fn publish_scn(&self) {
        self.versions
            .write()
            .advance(Scn(self.scn), self.clock.epoch_nanos());
    }

    /// `ALTER SYSTEM SET UNDO_RETENTION`: committed versions older than `seconds` (in the
    /// database's clock) are gone from now on.
    pub fn set_undo_retention(&mut self, seconds: u64) {
        self.config.undo_retention_secs = seconds;
        self.versions.write().set_retention(seconds);
    }

    /// A new object id (DATA_OBJ#), 1–4 above the last.
    fn next_object_id(&mut self) -> ObjectId {
        self.next_object += 1 + self.rng.below(4) as u32;
        ObjectId(self.next_object)
    }

    /// Lets time pass; SCNs move on with it (background activity).
    fn tick(&mut self, millis: u64) {
        self.clock.advance_millis(millis);
        self.scn += millis / 10;
        self.publish_scn();
    }
}
