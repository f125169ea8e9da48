//! The simulated database: containers, sessions, transactions, the dictionary, and the redo
//! model (log sequences with blocks and byte offsets, SSNs, private strands, log switches,
//! archiving at several destinations, purge, online log reuse).
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

use std::collections::{BTreeMap, BTreeSet};

use cdc_core::change::ChangeOp;
use cdc_core::table::quote_identifier;
use cdc_core::{
    ColumnType, ConId, ObjectId, OracleDateTime, RedoAddr, RedoThread, RsId, Scn, TableId, Value,
    Xid,
};
use serde::{Deserialize, Serialize};

use super::SimError;
use super::clock::SimClock;
use super::model::{
    ColumnSpec, Organization, SimPartition, SimTable, TableSpec, column_def, layout_from_spec,
};
use super::render::LOB_PLACEHOLDER_ROWID;
use super::rng::SimRng;
use super::truth::{GroundTruth, TruthChange, TruthDdl, TruthTransaction};

/// Usable bytes of a 512-byte redo block after its 16-byte header.
const BLOCK_PAYLOAD: u64 = 496;

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
        }
    }
}

/// A row selected by an UPDATE or DELETE: by ROWID, or by the values of some columns (the
/// first row that matches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RowSel {
    RowId(String),
    Match(Vec<(String, Value)>),
}

/// One semantic operation on the database. Scenario events and the workload generator both
/// come down to these.
#[derive(Debug, Clone, PartialEq)]
pub enum DbOp {
    /// Opens (or re-configures) a session; its transaction starts with its first change.
    Begin {
        session: String,
        pdb: Option<String>,
        user: Option<String>,
        private_strand: Option<bool>,
    },
    Insert {
        session: String,
        table: String,
        row: Vec<(String, Value)>,
        /// A statement that fails (a constraint violation): its row and an undo row reach the
        /// redo, the transaction goes on.
        fails: bool,
    },
    Update {
        session: String,
        table: String,
        rows: Vec<RowSel>,
        set: Vec<(String, Value)>,
    },
    Delete {
        session: String,
        table: String,
        rows: Vec<RowSel>,
    },
    Savepoint {
        session: String,
        name: String,
    },
    RollbackTo {
        session: String,
        name: String,
    },
    Commit {
        session: String,
    },
    Rollback {
        session: String,
    },
    CreateTable {
        user: Option<String>,
        spec: TableSpec,
    },
    AddColumn {
        table: String,
        column: ColumnSpec,
    },
    DropTable {
        table: String,
    },
    Truncate {
        table: String,
    },
    AddPartition {
        table: String,
        name: String,
        less_than: Option<i64>,
    },
    LogSwitch,
    /// Archives every log that is no longer current.
    Archive,
    /// Purges the archived copies of every sequence up to this one (DELETED=YES), or, with
    /// `remove_file`, deletes the files behind the catalog's back (DELETED stays NO).
    Purge {
        up_to_sequence: u32,
        remove_file: bool,
    },
    /// Loses a log: no archived copy anywhere, and its online copy overwritten.
    Gap {
        sequence: u32,
    },
    /// Writes a session's private strand to the log now.
    FlushStrand {
        session: String,
    },
    /// Lets time pass.
    Tick {
        millis: u64,
    },
    /// Kills a session so that its transaction leaves no end record (an orphan).
    KillSession {
        session: String,
    },
    /// The instance goes down: every open transaction is rolled back by recovery.
    InstanceCrash,
    /// A restore: OPEN RESETLOGS (a new incarnation), optionally as another database (DBID).
    Restore {
        new_dbid: bool,
    },
    /// Enables a second redo thread (RAC).
    EnableThread {
        thread: u16,
    },
    /// A DBMS_LOB call on one LOB column of an existing row (`lob_write`, `lob_trim`,
    /// `lob_erase` events): only LOB rows reach the redo.
    Lob {
        session: String,
        table: String,
        row: RowSel,
        column: String,
        call: LobCall,
    },
}

/// A DBMS_LOB call. Offsets are 1-based; lengths and offsets count characters of a CLOB or
/// NCLOB (code points) and bytes of a BLOB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum LobCall {
    /// `DBMS_LOB.WRITE`: text (CLOB, NCLOB) or bytes (BLOB) at `offset`; a write past the end
    /// fills the gap with spaces or zero bytes.
    Write { offset: u64, data: Value },
    /// `DBMS_LOB.TRIM` to `length`.
    Trim { length: u64 },
    /// `DBMS_LOB.ERASE`: `amount` characters or bytes from `offset` become spaces or zero
    /// bytes.
    Erase { amount: u64, offset: u64 },
}

/// A LOB value is stored in the row up to this many bytes (ENABLE STORAGE IN ROW); a CLOB or
/// NCLOB is stored as UTF-16 in an AL32UTF8 database, so about 1 982 characters fit, which
/// matches the "about 2k" threshold the reference reports.
pub const LOB_INLINE_MAX_BYTES: usize = 3964;
/// Characters (CLOB, NCLOB) or bytes (BLOB) per LOB_WRITE row of an out-of-row value.
pub const LOB_WRITE_CHUNK: usize = 2000;

/// Whether a LOB value is stored out of the row, so that LogMiner shows it as LOB rows.
pub fn lob_out_of_row(ty: &cdc_core::ColumnType, value: &Value) -> bool {
    match (ty, value) {
        (cdc_core::ColumnType::Clob | cdc_core::ColumnType::NClob, Value::Text(s)) => {
            s.encode_utf16().count() * 2 > LOB_INLINE_MAX_BYTES
        }
        (cdc_core::ColumnType::Blob, Value::Raw(b)) => b.len() > LOB_INLINE_MAX_BYTES,
        _ => false,
    }
}

/// One LOB row of the redo, in the shapes observed on Oracle 23ai (`docs/simulator.md`, the
/// LOB rows of "Reference behaviours and the simulator").
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LobRow {
    /// The locator select: OPERATION INTERNAL, code 9 (SEL_LOB_LOCATOR before 23ai),
    /// STATUS 0, SQL_REDO NULL.
    Locator,
    Write {
        offset: u64,
        data: Value,
    },
    Trim {
        length: u64,
    },
    Erase {
        amount: u64,
        offset: u64,
    },
}

/// What a DML redo row does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DmlKind {
    Insert {
        after: Vec<Value>,
    },
    Update {
        before: Vec<Value>,
        set: Vec<(usize, Value)>,
    },
    Delete {
        before: Vec<Value>,
    },
    /// Undo of an insert: `delete … where ROWID = '…'`.
    UndoInsert,
    /// Undo of an update: `update … set <old values> where ROWID = '…'`.
    UndoUpdate {
        set: Vec<(usize, Value)>,
    },
    /// Undo of a delete: the row inserted again.
    UndoDelete {
        row: Vec<Value>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    Start,
    Commit,
    Rollback,
    Dml {
        table: (usize, usize),
        object: ObjectId,
        version: usize,
        row_id: String,
        kind: DmlKind,
    },
    Unsupported {
        table: (usize, usize),
        object: ObjectId,
        row_id: String,
    },
    Ddl {
        owner: String,
        name: String,
        object: ObjectId,
        sql: String,
    },
    /// A LOB row of one column: the row is located by its non-LOB columns (`locate`, the
    /// values of the row when the call ran).
    Lob {
        table: (usize, usize),
        object: ObjectId,
        version: usize,
        row_id: String,
        locate: Vec<Value>,
        column: usize,
        row: LobRow,
    },
}

/// A row change or control record, before it has a place in the log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    pub scn: Scn,
    pub time: OracleDateTime,
    pub xid: Xid,
    pub con: usize,
    pub ssn: u64,
    pub rollback: bool,
    pub zero_rs_id: bool,
    pub user: String,
    pub sid: u32,
    pub serial: u32,
    pub body: Body,
}

/// A record in a log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    pub rs_id: RsId,
    pub record: Record,
}

/// One redo record: the rows that share an RS_ID.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    pub records: Vec<Record>,
}

/// An archived copy of a log at one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArchivedCopy {
    pub dest: usize,
    pub name: String,
    pub deleted: bool,
    pub removed: bool,
}

/// One log sequence of one thread.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RedoLog {
    pub thread: RedoThread,
    pub sequence: u32,
    pub incarnation: u32,
    pub first_scn: Scn,
    pub next_scn: Option<Scn>,
    pub group: u32,
    /// Still in its online group (not yet overwritten by a later sequence).
    pub online: bool,
    pub used_bytes: u64,
    pub records: Vec<Placed>,
    pub copies: Vec<ArchivedCopy>,
    /// The sequence was lost (a gap): no copy anywhere.
    pub lost: bool,
    pub switched_at: u64,
}

impl RedoLog {
    pub fn online_name(&self, db: &str) -> String {
        format!("/opt/oracle/oradata/{db}/redo{:02}.log", self.group)
    }
}

#[derive(Debug, Clone, PartialEq)]
struct TxChange {
    table: (usize, usize),
    row_id: String,
    ssn: u64,
    op: ChangeOp,
    before: Option<Vec<Value>>,
    after: Option<Vec<Value>>,
    set: Vec<usize>,
    scn: Scn,
    undone: bool,
    /// The statement failed: reversed at once, never committed.
    failed: bool,
    /// A DBMS_LOB call: only LOB rows carry it.
    lob_only: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct Tx {
    xid: Xid,
    start_scn: Scn,
    private: bool,
    strand: Vec<Group>,
    strand_bytes: u64,
    changes: Vec<TxChange>,
    savepoints: Vec<(String, usize)>,
    next_ssn: u64,
    unknown_sqn: bool,
    /// The START row has been written (with the first change).
    start_written: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub sid: u32,
    pub serial: u32,
    pub con: usize,
    pub user: String,
    pub thread: usize,
    pub private_strand: Option<bool>,
    tx: Option<Tx>,
}

impl Session {
    /// Whether the session has a transaction open.
    pub fn has_tx(&self) -> bool {
        self.tx.is_some()
    }
}

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
    pub(crate) sessions: BTreeMap<String, Session>,
    next_sid: u32,
    switching: bool,
    switches: u64,
    locks: BTreeMap<(usize, usize, String), String>,
    pub(crate) truth: GroundTruth,
    pub(crate) dbid: u64,
    pub(crate) resetlogs_scn: Scn,
    pub(crate) incarnation: u32,
    pub(crate) threads: Vec<RedoThread>,
}

fn resolve_table(
    containers: &[Container],
    con: Option<usize>,
    name: &str,
) -> Result<(usize, usize), SimError> {
    let parts: Vec<&str> = name.split('.').collect();
    let (con_idx, owner, table) = match parts.as_slice() {
        [pdb, owner, table] => {
            let idx = containers
                .iter()
                .position(|c| c.name.as_deref() == Some(*pdb))
                .ok_or_else(|| SimError::Scenario(format!("no PDB named {pdb}")))?;
            (idx, *owner, *table)
        }
        [owner, table] => (con.unwrap_or(0), *owner, *table),
        _ => {
            return Err(SimError::Scenario(format!(
                "table {name:?}: expected OWNER.TABLE or PDB.OWNER.TABLE"
            )));
        }
    };
    let c = containers
        .get(con_idx)
        .ok_or_else(|| SimError::Scenario("no container".into()))?;
    c.tables
        .iter()
        .rposition(|t| !t.dropped && t.id.owner == owner && t.id.table == table)
        .map(|t| (con_idx, t))
        .ok_or_else(|| {
            SimError::Ora(
                cdc_core::ora::OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST,
                format!("ORA-00942: table or view does not exist ({name})"),
            )
        })
}

fn record_size(body: &Body) -> u64 {
    fn value_size(v: &Value) -> u64 {
        match v {
            Value::Text(s) => s.len() as u64 + 2,
            Value::Raw(b) => b.len() as u64 + 2,
            _ => 8,
        }
    }
    let payload = match body {
        Body::Dml { kind, .. } => match kind {
            DmlKind::Insert { after: row }
            | DmlKind::Delete { before: row }
            | DmlKind::UndoDelete { row } => row.iter().map(value_size).sum(),
            DmlKind::Update { before, set } => {
                before.iter().map(value_size).sum::<u64>()
                    + set.iter().map(|(_, v)| value_size(v)).sum::<u64>()
            }
            DmlKind::UndoUpdate { set } => set.iter().map(|(_, v)| value_size(v)).sum(),
            DmlKind::UndoInsert => 0,
        },
        Body::Ddl { sql, .. } => sql.len() as u64,
        Body::Lob { locate, row, .. } => {
            locate.iter().map(value_size).sum::<u64>()
                + match row {
                    LobRow::Write { data, .. } => value_size(data),
                    _ => 8,
                }
        }
        _ => 0,
    };
    (72 + payload).next_multiple_of(4)
}

impl SimDatabase {
    /// A database as `config` describes it, with its tables created at SCN 1000-ish.
    pub fn new(config: SimConfig) -> Result<SimDatabase, SimError> {
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
        let mut db = SimDatabase {
            rng,
            clock: SimClock::new(clock_offset),
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
            config,
        };
        db.open_log(0, RedoThread(1), 1);
        let specs = db
            .config
            .tables
            .clone()
            .unwrap_or_else(super::model::standard_tables);
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

    /// The highest SCN handed out.
    pub fn current_scn(&self) -> Scn {
        Scn(self.scn)
    }

    /// Whether the redo has reached `rs_id`: a record at or after it was written. A simulated
    /// database restarted from its seed replays its workload until then, so a stored position
    /// finds the redo it resumes from.
    pub fn redo_reached(&self, rs_id: RsId) -> bool {
        self.logs.iter().any(|log| {
            log.records
                .last()
                .is_some_and(|placed| placed.rs_id >= rs_id)
        })
    }

    /// The containers (one for a non-CDB) with their tables and current rows.
    pub fn containers(&self) -> &[Container] {
        &self.containers
    }

    /// What the database committed so far.
    pub fn truth(&self) -> &GroundTruth {
        &self.truth
    }

    /// The time now.
    /// The seconds from the time `scn` was current to the last DDL on `table`, in the
    /// database's clock; negative when the DDL came first. As SCN_TO_TIMESTAMP, the time of an
    /// SCN is that of the newest redo at or before it; `None` for an SCN before all redo, or a
    /// table no DDL has touched.
    pub fn last_ddl_after(&self, table: &TableId, scn: Scn) -> Option<i64> {
        let ddl = self.truth.ddl.iter().rev().find(|d| &d.table == table)?;
        let time_of = |at: Scn| {
            self.logs
                .iter()
                .flat_map(|log| &log.records)
                .filter(|p| p.record.scn <= at)
                .max_by_key(|p| p.record.scn)
                .map(|p| p.record.time.epoch_nanos())
        };
        let seconds = (time_of(ddl.scn)? - time_of(scn)?) / 1_000_000_000;
        i64::try_from(seconds).ok()
    }

    pub fn now(&self) -> OracleDateTime {
        self.clock.now()
    }

    fn next_scn(&mut self) -> Scn {
        self.scn += 1 + self.rng.below(3);
        Scn(self.scn)
    }

    fn next_object_id(&mut self) -> ObjectId {
        self.next_object += 1 + self.rng.below(4) as u32;
        ObjectId(self.next_object)
    }

    fn open_log(&mut self, thread_idx: usize, thread: RedoThread, sequence: u32) {
        let groups = self.config.online_groups.max(2);
        let group = (thread_idx as u32) * groups + ((sequence - 1) % groups) + 1;
        // the group's previous log is overwritten: Oracle waits for it to be archived first
        let archive_now: Vec<usize> = self
            .logs
            .iter()
            .enumerate()
            .filter(|(_, l)| l.online && l.group == group && l.thread == thread)
            .map(|(i, _)| i)
            .collect();
        for i in archive_now {
            self.archive_log(i);
            if let Some(l) = self.logs.get_mut(i) {
                l.online = false;
            }
        }
        let first_scn = Scn(self.scn);
        self.logs.push(RedoLog {
            thread,
            sequence,
            incarnation: self.incarnation,
            first_scn,
            next_scn: None,
            group,
            online: true,
            used_bytes: 0,
            records: Vec::new(),
            copies: Vec::new(),
            lost: false,
            switched_at: 0,
        });
        let idx = self.logs.len() - 1;
        if thread_idx < self.current.len() {
            self.current[thread_idx] = idx;
        } else {
            self.current.push(idx);
        }
    }

    fn archive_log(&mut self, idx: usize) {
        let db = self.config.db_name.clone();
        let dests = self.config.archive_dests.len().max(1);
        let incarnation_id = 1_190_000_000 + self.incarnation;
        let Some(log) = self.logs.get_mut(idx) else {
            return;
        };
        if log.next_scn.is_none() || !log.copies.is_empty() || log.lost {
            return;
        }
        for dest in 0..dests {
            log.copies.push(ArchivedCopy {
                dest,
                name: format!(
                    "/opt/oracle/arch{}/{db}/{}_{}_{incarnation_id}.arc",
                    dest + 1,
                    log.thread,
                    log.sequence
                ),
                deleted: false,
                removed: false,
            });
        }
    }

    /// Switches the thread's current log: binds every private strand of the thread's open
    /// transactions into it first, then opens the next sequence.
    fn switch_log(&mut self, thread_idx: usize) {
        if self.switching {
            return;
        }
        self.switching = true;
        let names: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                s.thread == thread_idx && s.tx.as_ref().is_some_and(|t| !t.strand.is_empty())
            })
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            self.flush_strand(&name);
        }
        self.switching = false;
        let next = self.next_scn();
        let Some(&cur) = self.current.get(thread_idx) else {
            return;
        };
        self.switches += 1;
        let (thread, sequence) = match self.logs.get_mut(cur) {
            Some(log) => {
                log.next_scn = Some(next);
                log.switched_at = 0;
                (log.thread, log.sequence)
            }
            None => return,
        };
        if let Some(log) = self.logs.get_mut(cur) {
            log.switched_at = self.switches;
        }
        self.open_log(thread_idx, thread, sequence + 1);
        let lag = u64::from(self.config.archive_lag_switches);
        let due: Vec<usize> = self
            .logs
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                l.next_scn.is_some()
                    && l.copies.is_empty()
                    && !l.lost
                    && self.switches >= l.switched_at + lag
            })
            .map(|(i, _)| i)
            .collect();
        for i in due {
            self.archive_log(i);
        }
    }

    /// Writes one redo record (group) to the thread's current log.
    /// Places a group at the thread's current position, and returns the redo address of its
    /// last record (a log switch it causes may write other strands after it).
    fn write_group(&mut self, thread_idx: usize, group: Group) -> RedoAddr {
        let size: u64 = group.records.iter().map(|r| record_size(&r.body)).sum();
        let Some(&cur) = self.current.get(thread_idx) else {
            return RedoAddr::MIN;
        };
        let Some(log) = self.logs.get_mut(cur) else {
            return RedoAddr::MIN;
        };
        let block = 2 + log.used_bytes / BLOCK_PAYLOAD;
        let offset = 16 + log.used_bytes % BLOCK_PAYLOAD;
        let rs_id = RsId::new(log.sequence, block as u32, offset as u16);
        let last_ssn = group.records.last().map(|r| r.ssn).unwrap_or(0);
        for record in group.records {
            log.records.push(Placed { rs_id, record });
        }
        log.used_bytes += size;
        if log.used_bytes >= self.config.log_size_bytes {
            self.switch_log(thread_idx);
        }
        RedoAddr::new(rs_id, last_ssn).unwrap_or(RedoAddr::MIN)
    }

    fn flush_strand(&mut self, session: &str) {
        let Some(s) = self.sessions.get_mut(session) else {
            return;
        };
        let thread = s.thread;
        let groups = match s.tx.as_mut() {
            Some(tx) => {
                tx.strand_bytes = 0;
                std::mem::take(&mut tx.strand)
            }
            None => return,
        };
        for g in groups {
            self.write_group(thread, g);
        }
    }

    /// Hands a group to the transaction's strand or the log.
    fn emit(&mut self, session: &str, group: Group) {
        let strand_limit = self.config.strand_bytes;
        let Some(s) = self.sessions.get_mut(session) else {
            return;
        };
        let thread = s.thread;
        if let Some(tx) = s.tx.as_mut().filter(|t| t.private) {
            tx.strand_bytes += group
                .records
                .iter()
                .map(|r| record_size(&r.body))
                .sum::<u64>();
            tx.strand.push(group);
            if tx.strand_bytes >= strand_limit {
                self.flush_strand(session);
            }
            return;
        }
        self.write_group(thread, group);
    }

    fn session_mut(&mut self, name: &str) -> Result<&mut Session, SimError> {
        if !self.sessions.contains_key(name) {
            self.begin(name, None, None, None)?;
        }
        self.sessions
            .get_mut(name)
            .ok_or_else(|| SimError::Scenario(format!("no session {name}")))
    }

    fn begin(
        &mut self,
        name: &str,
        pdb: Option<&str>,
        user: Option<&str>,
        private_strand: Option<bool>,
    ) -> Result<(), SimError> {
        let con = match pdb {
            Some(p) => self
                .containers
                .iter()
                .position(|c| c.name.as_deref() == Some(p))
                .ok_or_else(|| SimError::Scenario(format!("no PDB named {p}")))?,
            None => 0,
        };
        if let Some(s) = self.sessions.get_mut(name) {
            if s.tx.is_some() {
                // a session changes nothing about an open transaction
                return Ok(());
            }
            s.con = con;
            if let Some(u) = user {
                s.user = u.to_owned();
            }
            s.private_strand = private_strand;
            return Ok(());
        }
        let sid = self.next_sid;
        self.next_sid += 1 + self.rng.below(7) as u32;
        let serial = 1000 + self.rng.below(60_000) as u32;
        let thread = sid as usize % self.threads.len().max(1);
        self.sessions.insert(
            name.to_owned(),
            Session {
                sid,
                serial,
                con,
                user: user.unwrap_or("APP").to_owned(),
                thread,
                private_strand,
                tx: None,
            },
        );
        Ok(())
    }

    fn alloc_xid(&mut self, con: usize) -> Xid {
        let live: BTreeSet<(u16, u16)> = self
            .sessions
            .values()
            .filter(|s| s.con == con)
            .filter_map(|s| s.tx.as_ref())
            .map(|t| (t.xid.usn, t.xid.slot))
            .collect();
        let Some(c) = self.containers.get_mut(con) else {
            return Xid::new(1, 0, 1);
        };
        loop {
            let n = c.next_xid;
            c.next_xid += 1;
            let xid = Xid::new(1 + (n % 10) as u16, ((n / 10) % 32) as u16, 600 + n / 320);
            if !live.contains(&(xid.usn, xid.slot)) {
                return xid;
            }
        }
    }

    /// Makes sure the session has a transaction; returns whether it was just started.
    fn ensure_tx(&mut self, session: &str) -> Result<bool, SimError> {
        let (con, has, pref) = {
            let s = self.session_mut(session)?;
            (s.con, s.tx.is_some(), s.private_strand)
        };
        if has {
            return Ok(false);
        }
        let xid = self.alloc_xid(con);
        let private = match pref {
            Some(p) => p,
            None => self.config.private_strands && self.rng.chance(self.config.private_strand_rate),
        };
        let unknown_sqn = self.rng.chance(self.config.unknown_sqn_rate);
        if let Some(s) = self.sessions.get_mut(session) {
            s.tx = Some(Tx {
                xid,
                start_scn: Scn(0),
                private,
                strand: Vec::new(),
                strand_bytes: 0,
                changes: Vec::new(),
                savepoints: Vec::new(),
                next_ssn: 1,
                unknown_sqn,
                start_written: false,
            });
        }
        Ok(true)
    }

    fn record(
        &self,
        session: &str,
        scn: Scn,
        ssn: u64,
        rollback: bool,
        body: Body,
    ) -> Result<Record, SimError> {
        let s = self
            .sessions
            .get(session)
            .ok_or_else(|| SimError::Scenario(format!("no session {session}")))?;
        let tx = s
            .tx
            .as_ref()
            .ok_or_else(|| SimError::Scenario(format!("session {session} has no transaction")))?;
        let mut xid = tx.xid;
        if rollback && tx.unknown_sqn {
            xid.sqn = Xid::UNKNOWN_SQN;
        }
        Ok(Record {
            scn,
            time: self.clock.now_seconds(),
            xid,
            con: s.con,
            ssn,
            rollback,
            zero_rs_id: false,
            user: s.user.clone(),
            sid: s.sid,
            serial: s.serial,
            body,
        })
    }

    fn tx_mut(&mut self, session: &str) -> Result<&mut Tx, SimError> {
        self.sessions
            .get_mut(session)
            .and_then(|s| s.tx.as_mut())
            .ok_or_else(|| SimError::Scenario(format!("session {session} has no transaction")))
    }

    /// Writes the redo of one statement (one or more row changes sharing an RS_ID), starting
    /// the transaction first if needed.
    fn statement(&mut self, session: &str, changes: Vec<(Body, TxChange)>) -> Result<(), SimError> {
        self.ensure_tx(session)?;
        let scn = self.next_scn();
        let mut records: Vec<Record> = self.start_record(session, scn)?.into_iter().collect();
        for (body, mut change) in changes {
            let ssn = self.next_ssn(session)?;
            change.ssn = ssn;
            change.scn = scn;
            records.push(self.record(session, scn, ssn, false, body)?);
            self.tx_mut(session)?.changes.push(change);
        }
        self.emit(session, Group { records });
        Ok(())
    }

    /// The next SSN of the session's transaction (a per-transaction counter from 1).
    fn next_ssn(&mut self, session: &str) -> Result<u64, SimError> {
        let tx = self.tx_mut(session)?;
        let ssn = tx.next_ssn;
        tx.next_ssn += 1;
        Ok(ssn)
    }

    /// The START row of the session's transaction at `scn`, if it has not been written yet.
    fn start_record(&mut self, session: &str, scn: Scn) -> Result<Option<Record>, SimError> {
        if self.tx_mut(session)?.start_written {
            return Ok(None);
        }
        self.tx_mut(session)?.start_written = true;
        let zero = self.rng.chance(self.config.zero_xid_start_rate);
        let mut start = self.record(session, scn, 0, false, Body::Start)?;
        if zero {
            start.xid = Xid::ZERO;
        }
        self.tx_mut(session)?.start_scn = scn;
        Ok(Some(start))
    }

    fn lock(&mut self, session: &str, key: (usize, usize, String)) -> Result<(), SimError> {
        match self.locks.get(&key) {
            Some(holder) if holder != session => Err(SimError::Busy(format!(
                "row {} is locked by session {holder}",
                key.2
            ))),
            _ => {
                self.locks.insert(key, session.to_owned());
                Ok(())
            }
        }
    }

    /// Whether another session holds the row.
    /// The rows of a table another session holds locks on (a few: the open transactions').
    pub(crate) fn rows_locked_by_others(&self, session: &str, t: (usize, usize)) -> Vec<&String> {
        self.locks
            .range((t.0, t.1, String::new())..)
            .take_while(|((c, i, _), _)| (*c, *i) == t)
            .filter(|(_, holder)| holder.as_str() != session)
            .map(|((_, _, row), _)| row)
            .collect()
    }

    fn table(&self, t: (usize, usize)) -> Result<&SimTable, SimError> {
        self.containers
            .get(t.0)
            .and_then(|c| c.tables.get(t.1))
            .ok_or_else(|| SimError::Scenario("no such table".into()))
    }

    fn table_mut(&mut self, t: (usize, usize)) -> Result<&mut SimTable, SimError> {
        self.containers
            .get_mut(t.0)
            .and_then(|c| c.tables.get_mut(t.1))
            .ok_or_else(|| SimError::Scenario("no such table".into()))
    }

    /// Looks a table up for a session (`OWNER.TABLE` in the session's container).
    pub(crate) fn find_table(
        &self,
        session: Option<&str>,
        name: &str,
    ) -> Result<(usize, usize), SimError> {
        let con = session.and_then(|s| self.sessions.get(s)).map(|s| s.con);
        resolve_table(&self.containers, con, name)
    }

    fn full_row(
        &self,
        t: (usize, usize),
        values: &[(String, Value)],
    ) -> Result<Vec<Value>, SimError> {
        let table = self.table(t)?;
        let layout = table
            .layout()
            .ok_or_else(|| SimError::Scenario("table without layout".into()))?;
        let mut row = vec![Value::Null; layout.columns.len()];
        for (name, v) in values {
            let i = layout
                .column_index(name)
                .ok_or_else(|| SimError::Scenario(format!("{}: no column {name}", table.id)))?;
            row[i] = normalise(&layout.columns[i], v.clone());
        }
        for (i, c) in layout.columns.iter().enumerate() {
            if !c.nullable && row[i].is_null() {
                return Err(SimError::Ora(
                    cdc_core::ora::OraCode(1400),
                    format!(
                        "ORA-01400: cannot insert NULL into (\"{}\".\"{}\".\"{}\")",
                        table.id.owner, table.id.table, c.name
                    ),
                ));
            }
        }
        Ok(row)
    }

    fn select_row(&self, t: (usize, usize), sel: &RowSel) -> Result<String, SimError> {
        let table = self.table(t)?;
        match sel {
            RowSel::RowId(r) if table.rows.contains_key(r) => Ok(r.clone()),
            RowSel::RowId(r) => Err(SimError::Scenario(format!("{}: no row {r}", table.id))),
            RowSel::Match(values) => {
                let layout = table
                    .layout()
                    .ok_or_else(|| SimError::Scenario("table without layout".into()))?;
                let wanted: Vec<(usize, Value)> = values
                    .iter()
                    .map(|(n, v)| {
                        layout
                            .column_index(n)
                            .map(|i| (i, normalise(&layout.columns[i], v.clone())))
                            .ok_or_else(|| {
                                SimError::Scenario(format!("{}: no column {n}", table.id))
                            })
                    })
                    .collect::<Result<_, _>>()?;
                table
                    .rows
                    .iter()
                    .find(|(_, row)| wanted.iter().all(|(i, v)| row.get(*i) == Some(v)))
                    .map(|(r, _)| r.clone())
                    .ok_or_else(|| {
                        SimError::Scenario(format!("{}: no row matches {values:?}", table.id))
                    })
            }
        }
    }

    fn insert(
        &mut self,
        session: &str,
        name: &str,
        values: &[(String, Value)],
        fails: bool,
    ) -> Result<(), SimError> {
        let t = self.find_table(Some(session), name)?;
        let row = self.full_row(t, values)?;
        let table = self.table(t)?;
        let object = table.segment_for(&row)?;
        let version = table.version();
        let unsupported = table.unsupported();
        let lob_cols: Vec<usize> = table
            .layout()
            .map(|l| {
                l.columns
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| c.data_type.is_lob() && !row[*i].is_null())
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default();
        let table = self.table_mut(t)?;
        let n = table.next_row;
        table.next_row += 1;
        let row_id = super::render::rowid(object.0, 4 + (n % 3), 300 + n / 50, n % 50);
        self.lock(session, (t.0, t.1, row_id.clone()))?;
        let change = TxChange {
            table: t,
            row_id: row_id.clone(),
            ssn: 0,
            op: ChangeOp::Insert,
            before: None,
            after: Some(row.clone()),
            set: Vec::new(),
            scn: Scn(0),
            undone: false,
            failed: fails,
            lob_only: false,
        };
        if unsupported {
            self.statement(
                session,
                vec![(
                    Body::Unsupported {
                        table: t,
                        object,
                        row_id: row_id.clone(),
                    },
                    change,
                )],
            )?;
        } else if lob_cols.is_empty() {
            let body = Body::Dml {
                table: t,
                object,
                version,
                row_id: row_id.clone(),
                kind: DmlKind::Insert { after: row.clone() },
            };
            self.statement(session, vec![(body, change)])?;
        } else {
            // an INSERT with locators (placeholder ROWID); for each value stored out of the
            // row its LOB rows (placeholder ROWID too); then the UPDATE of the locators with
            // the real ROWID, which writes the values small enough to live in the row
            let mut with_locators = row.clone();
            for &i in &lob_cols {
                with_locators[i] = Value::EmptyLob;
            }
            let body = Body::Dml {
                table: t,
                object,
                version,
                row_id: LOB_PLACEHOLDER_ROWID.to_owned(),
                kind: DmlKind::Insert {
                    after: with_locators.clone(),
                },
            };
            let mut first = change.clone();
            first.op = ChangeOp::Insert;
            self.statement(session, vec![(body, first)])?;
            let (types, locate) = self.lob_context(t, &row)?;
            let mut lob_rows = Vec::new();
            for &i in &lob_cols {
                if types.get(i).is_some_and(|ty| lob_out_of_row(ty, &row[i])) {
                    let rows = self.written_lob_rows(&row[i]);
                    lob_rows.extend(rows.into_iter().map(|r| Body::Lob {
                        table: t,
                        object,
                        version,
                        row_id: LOB_PLACEHOLDER_ROWID.to_owned(),
                        locate: locate.clone(),
                        column: i,
                        row: r,
                    }));
                }
            }
            self.lob_records(session, lob_rows)?;
            let set: Vec<(usize, Value)> = lob_cols
                .iter()
                .map(|&i| {
                    let out = types.get(i).is_some_and(|ty| lob_out_of_row(ty, &row[i]));
                    (i, if out { Value::EmptyLob } else { row[i].clone() })
                })
                .collect();
            let body = Body::Dml {
                table: t,
                object,
                version,
                row_id: row_id.clone(),
                kind: DmlKind::Update {
                    before: with_locators,
                    set,
                },
            };
            // the locator update belongs to the same change: the change keeps its SSN
            self.statement_continuation(session, body)?;
        }
        if fails {
            self.undo_last(session)?;
        } else {
            self.table_mut(t)?.rows.insert(row_id, row);
        }
        Ok(())
    }

    /// A further row of the last change (the LOB locator UPDATE): its own redo record and
    /// SSN; an undo of the change pairs with it.
    fn statement_continuation(&mut self, session: &str, body: Body) -> Result<(), SimError> {
        let scn = self.next_scn();
        let ssn = self.next_ssn(session)?;
        if let Some(c) = self.tx_mut(session)?.changes.last_mut() {
            c.ssn = ssn;
        }
        let record = self.record(session, scn, ssn, false, body)?;
        self.emit(
            session,
            Group {
                records: vec![record],
            },
        );
        Ok(())
    }

    /// The column types of a table's current layout, and the values of a row's non-LOB
    /// columns (NULL in the LOB places), which locate the row in a LOB row's select.
    fn lob_context(
        &self,
        t: (usize, usize),
        row: &[Value],
    ) -> Result<(Vec<cdc_core::ColumnType>, Vec<Value>), SimError> {
        let layout = self
            .table(t)?
            .layout()
            .ok_or_else(|| SimError::Scenario("no layout".into()))?;
        let types: Vec<cdc_core::ColumnType> =
            layout.columns.iter().map(|c| c.data_type.clone()).collect();
        Ok((types, locating_values(&layout.columns, row)))
    }

    /// The LOB rows of writing a whole out-of-row value: the locator (INTERNAL), one
    /// LOB_WRITE per chunk, and on BasicFile storage another INTERNAL and a LOB_TRIM.
    fn written_lob_rows(&self, value: &Value) -> Vec<LobRow> {
        let mut rows = vec![LobRow::Locator];
        rows.extend(lob_chunks(value, 1));
        if self.config.basicfile_lobs {
            rows.push(LobRow::Locator);
            rows.push(LobRow::Trim {
                length: lob_length(value),
            });
        }
        rows
    }

    /// Writes LOB rows, each a redo record of its own with its own SSN, in the open
    /// transaction (after the statement that started it).
    fn lob_records(&mut self, session: &str, bodies: Vec<Body>) -> Result<Option<Scn>, SimError> {
        let mut first = None;
        for body in bodies {
            let scn = self.next_scn();
            first.get_or_insert(scn);
            let ssn = self.next_ssn(session)?;
            let record = self.record(session, scn, ssn, false, body)?;
            self.emit(
                session,
                Group {
                    records: vec![record],
                },
            );
        }
        Ok(first)
    }

    /// A DBMS_LOB call on an existing row: the row's LOB value changes and only LOB rows (with
    /// the real ROWID) reach the redo; the ground truth has it as an UPDATE marked `lob_only`.
    fn lob_call(
        &mut self,
        session: &str,
        name: &str,
        sel: &RowSel,
        column: &str,
        call: &LobCall,
    ) -> Result<(), SimError> {
        let t = self.find_table(Some(session), name)?;
        let row_id = self.select_row(t, sel)?;
        self.lock(session, (t.0, t.1, row_id.clone()))?;
        let table = self.table(t)?;
        let layout = table
            .layout()
            .ok_or_else(|| SimError::Scenario("no layout".into()))?;
        let i = layout
            .column_index(column)
            .ok_or_else(|| SimError::Scenario(format!("{}: no column {column}", table.id)))?;
        let ty = layout.columns[i].data_type.clone();
        if !ty.is_lob() || matches!(ty, cdc_core::ColumnType::XmlType) {
            return Err(SimError::Scenario(format!(
                "{}.{column} is not a CLOB, NCLOB or BLOB",
                table.id
            )));
        }
        let before = table.rows.get(&row_id).cloned().unwrap_or_default();
        let object = table.segment_for(&before)?;
        let version = table.version();
        let current = before.get(i).cloned().unwrap_or(Value::Null);
        if current.is_null() {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(22275),
                "ORA-22275: invalid LOB locator specified".into(),
            ));
        }
        let changed = apply_lob_call(&ty, &current, call)?;
        let mut after = before.clone();
        after[i] = changed;
        let (_, locate) = self.lob_context(t, &before)?;
        let rows = match call {
            LobCall::Write { offset, data } => {
                let mut rows = vec![LobRow::Locator];
                rows.extend(lob_chunks(data, *offset));
                rows
            }
            LobCall::Trim { length } => vec![LobRow::Trim { length: *length }],
            LobCall::Erase { amount, offset } => vec![LobRow::Erase {
                amount: *amount,
                offset: *offset,
            }],
        };
        let bodies: Vec<Body> = rows
            .into_iter()
            .map(|r| Body::Lob {
                table: t,
                object,
                version,
                row_id: row_id.clone(),
                locate: locate.clone(),
                column: i,
                row: r,
            })
            .collect();
        self.ensure_tx(session)?;
        let scn = self.next_scn();
        if let Some(start) = self.start_record(session, scn)? {
            self.emit(
                session,
                Group {
                    records: vec![start],
                },
            );
        }
        let first = self.lob_records(session, bodies)?.unwrap_or(scn);
        let tx = self.tx_mut(session)?;
        let ssn = tx.next_ssn.saturating_sub(1);
        tx.changes.push(TxChange {
            table: t,
            row_id: row_id.clone(),
            ssn,
            op: ChangeOp::Update,
            before: Some(before),
            after: Some(after.clone()),
            set: vec![i],
            scn: first,
            undone: false,
            failed: false,
            lob_only: true,
        });
        self.table_mut(t)?.rows.insert(row_id, after);
        Ok(())
    }

    fn update(
        &mut self,
        session: &str,
        name: &str,
        rows: &[RowSel],
        set: &[(String, Value)],
    ) -> Result<(), SimError> {
        let t = self.find_table(Some(session), name)?;
        let mut statement = Vec::new();
        let mut new_rows = Vec::new();
        let mut lob_rows = Vec::new();
        for sel in rows {
            let row_id = self.select_row(t, sel)?;
            self.lock(session, (t.0, t.1, row_id.clone()))?;
            let table = self.table(t)?;
            let layout = table
                .layout()
                .ok_or_else(|| SimError::Scenario("no layout".into()))?;
            let before = table.rows.get(&row_id).cloned().unwrap_or_default();
            let mut after = before.clone();
            let mut set_cols = Vec::new();
            for (n, v) in set {
                let i = layout
                    .column_index(n)
                    .ok_or_else(|| SimError::Scenario(format!("{}: no column {n}", table.id)))?;
                after[i] = normalise(&layout.columns[i], v.clone());
                set_cols.push((i, after[i].clone()));
            }
            let object = table.segment_for(&before)?;
            if table.segment_for(&after)? != object {
                return Err(SimError::Ora(
                    cdc_core::ora::OraCode(14402),
                    "ORA-14402: updating partition key column would cause a partition change"
                        .into(),
                ));
            }
            // a LOB value stored out of the row: the UPDATE names its locator, the value
            // follows in LOB rows with the real ROWID
            let mut rendered_set = set_cols.clone();
            for (i, v) in rendered_set.iter_mut() {
                if lob_out_of_row(&layout.columns[*i].data_type, v) {
                    let locate = locating_values(&layout.columns, &after);
                    let rows = self.written_lob_rows(v);
                    lob_rows.extend(rows.into_iter().map(|r| Body::Lob {
                        table: t,
                        object,
                        version: table.version(),
                        row_id: row_id.clone(),
                        locate: locate.clone(),
                        column: *i,
                        row: r,
                    }));
                    *v = Value::EmptyLob;
                }
            }
            let body = if table.unsupported() {
                Body::Unsupported {
                    table: t,
                    object,
                    row_id: row_id.clone(),
                }
            } else {
                Body::Dml {
                    table: t,
                    object,
                    version: table.version(),
                    row_id: row_id.clone(),
                    kind: DmlKind::Update {
                        before: before.clone(),
                        set: rendered_set,
                    },
                }
            };
            let change = TxChange {
                table: t,
                row_id: row_id.clone(),
                ssn: 0,
                op: ChangeOp::Update,
                before: Some(before),
                after: Some(after.clone()),
                set: set_cols.iter().map(|(i, _)| *i).collect(),
                scn: Scn(0),
                undone: false,
                failed: false,
                lob_only: false,
            };
            statement.push((body, change));
            new_rows.push((row_id, after));
        }
        self.statement(session, statement)?;
        self.lob_records(session, lob_rows)?;
        for (row_id, after) in new_rows {
            self.table_mut(t)?.rows.insert(row_id, after);
        }
        Ok(())
    }

    fn delete(&mut self, session: &str, name: &str, rows: &[RowSel]) -> Result<(), SimError> {
        let t = self.find_table(Some(session), name)?;
        let mut statement = Vec::new();
        let mut gone = Vec::new();
        for sel in rows {
            let row_id = self.select_row(t, sel)?;
            self.lock(session, (t.0, t.1, row_id.clone()))?;
            let table = self.table(t)?;
            let before = table.rows.get(&row_id).cloned().unwrap_or_default();
            let object = table.segment_for(&before)?;
            let body = if table.unsupported() {
                Body::Unsupported {
                    table: t,
                    object,
                    row_id: row_id.clone(),
                }
            } else {
                Body::Dml {
                    table: t,
                    object,
                    version: table.version(),
                    row_id: row_id.clone(),
                    kind: DmlKind::Delete {
                        before: before.clone(),
                    },
                }
            };
            statement.push((
                body,
                TxChange {
                    table: t,
                    row_id: row_id.clone(),
                    ssn: 0,
                    op: ChangeOp::Delete,
                    before: Some(before),
                    after: None,
                    set: Vec::new(),
                    scn: Scn(0),
                    undone: false,
                    failed: false,
                    lob_only: false,
                },
            ));
            gone.push(row_id);
        }
        self.statement(session, statement)?;
        for row_id in gone {
            self.table_mut(t)?.rows.remove(&row_id);
        }
        Ok(())
    }

    /// The undo record of one change, and the database state restored.
    fn undo_change(&mut self, session: &str, change: &TxChange) -> Result<Record, SimError> {
        let table = self.table(change.table)?;
        let version = table.version();
        let lob: Vec<bool> = table
            .layout()
            .map(|l| l.columns.iter().map(|c| c.data_type.is_lob()).collect())
            .unwrap_or_default();
        let object = match (&change.before, &change.after) {
            (Some(row), _) | (None, Some(row)) => table.segment_for(row)?,
            _ => table.object,
        };
        let unsupported = table.unsupported();
        let kind = match change.op {
            ChangeOp::Insert => DmlKind::UndoInsert,
            ChangeOp::Delete => DmlKind::UndoDelete {
                row: change
                    .before
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if lob.get(i) == Some(&true) && !v.is_null() {
                            Value::EmptyLob
                        } else {
                            v
                        }
                    })
                    .collect(),
            },
            ChangeOp::Update => {
                let before = change.before.clone().unwrap_or_default();
                DmlKind::UndoUpdate {
                    set: change
                        .set
                        .iter()
                        .map(|&i| {
                            let v = before.get(i).cloned().unwrap_or(Value::Null);
                            (
                                i,
                                if lob.get(i) == Some(&true) {
                                    Value::EmptyLob
                                } else {
                                    v
                                },
                            )
                        })
                        .collect(),
                }
            }
        };
        let body = if unsupported {
            Body::Unsupported {
                table: change.table,
                object,
                row_id: change.row_id.clone(),
            }
        } else {
            Body::Dml {
                table: change.table,
                object,
                version,
                row_id: change.row_id.clone(),
                kind,
            }
        };
        let scn = self.next_scn();
        let record = self.record(session, scn, change.ssn, true, body)?;
        let t = self.table_mut(change.table)?;
        match &change.before {
            Some(row) => {
                t.rows.insert(change.row_id.clone(), row.clone());
            }
            None => {
                t.rows.remove(&change.row_id);
            }
        }
        Ok(record)
    }

    /// Undoes the changes from index `from` on, newest first, one undo record each.
    fn undo_from(&mut self, session: &str, from: usize) -> Result<(), SimError> {
        let changes: Vec<(usize, TxChange)> = {
            let tx = self.tx_mut(session)?;
            tx.changes
                .iter()
                .enumerate()
                .skip(from)
                .filter(|(_, c)| !c.undone)
                .map(|(i, c)| (i, c.clone()))
                .rev()
                .collect()
        };
        for (i, change) in changes {
            let record = self.undo_change(session, &change)?;
            if let Some(c) = self.tx_mut(session)?.changes.get_mut(i) {
                c.undone = true;
            }
            self.emit(
                session,
                Group {
                    records: vec![record],
                },
            );
        }
        Ok(())
    }

    fn undo_last(&mut self, session: &str) -> Result<(), SimError> {
        let n = self.tx_mut(session)?.changes.len();
        self.undo_from(session, n.saturating_sub(1))
    }

    fn release_locks(&mut self, session: &str) {
        self.locks.retain(|_, holder| holder != session);
    }

    /// Ends a transaction that never wrote redo (no change): Oracle writes nothing for it.
    fn end_silent(&mut self, session: &str) -> bool {
        let Some(s) = self.sessions.get_mut(session) else {
            return true;
        };
        match &s.tx {
            None => true,
            Some(tx) if !tx.start_written => {
                s.tx = None;
                true
            }
            Some(_) => false,
        }
    }

    fn commit(&mut self, session: &str) -> Result<(), SimError> {
        if self.end_silent(session) {
            return Ok(());
        }
        self.flush_strand(session);
        let scn = self.next_scn();
        let record = self.record(session, scn, 0, false, Body::Commit)?;
        let (thread, con) = {
            let s = self
                .sessions
                .get(session)
                .ok_or_else(|| SimError::Scenario("no session".into()))?;
            (s.thread, s.con)
        };
        let commit_addr = self.write_group(
            thread,
            Group {
                records: vec![record.clone()],
            },
        );
        let tx = self
            .sessions
            .get_mut(session)
            .and_then(|s| s.tx.take())
            .ok_or_else(|| SimError::Scenario("no transaction".into()))?;
        self.release_locks(session);
        let mut changes = Vec::new();
        for c in tx.changes.iter().filter(|c| !c.undone && !c.failed) {
            let table = self.table(c.table)?;
            let columns = table.layout().map(|l| l.columns.as_slice()).unwrap_or(&[]);
            let named = |row: &Option<Vec<Value>>| {
                row.as_ref().map(|r| {
                    columns
                        .iter()
                        .map(|c| c.name.clone())
                        .zip(r.iter().cloned())
                        .collect::<Vec<_>>()
                })
            };
            changes.push(TruthChange {
                op: c.op,
                table: table.id.clone(),
                scn: c.scn,
                row_id: c.row_id.clone(),
                before: named(&c.before),
                after: named(&c.after),
                unsupported: table.unsupported(),
                lob_only: c.lob_only,
            });
        }
        if !changes.is_empty() {
            let container = self.containers.get(con);
            self.truth.transactions.push(TruthTransaction {
                con: container.map(|c| c.con).unwrap_or_default(),
                pdb: container.and_then(|c| c.name.clone()),
                xid: tx.xid,
                username: record.user.clone(),
                start_scn: tx.start_scn,
                commit_scn: scn,
                commit_addr,
                commit_time: record.time,
                changes,
            });
        }
        Ok(())
    }

    fn rollback(&mut self, session: &str) -> Result<(), SimError> {
        if self.end_silent(session) {
            return Ok(());
        }
        self.undo_from(session, 0)?;
        self.flush_strand(session);
        let scn = self.next_scn();
        let mut record = self.record(session, scn, 0, false, Body::Rollback)?;
        if self.tx_mut(session)?.unknown_sqn {
            record.xid.sqn = Xid::UNKNOWN_SQN;
        }
        record.zero_rs_id = self.rng.chance(self.config.zero_rs_id_rollback_rate);
        let thread = self.sessions.get(session).map(|s| s.thread).unwrap_or(0);
        self.write_group(
            thread,
            Group {
                records: vec![record],
            },
        );
        if let Some(s) = self.sessions.get_mut(session) {
            s.tx = None;
        }
        self.release_locks(session);
        self.truth.rolled_back += 1;
        Ok(())
    }

    fn savepoint(&mut self, session: &str, name: &str) -> Result<(), SimError> {
        self.ensure_tx_quiet(session)?;
        let tx = self.tx_mut(session)?;
        let at = tx.changes.len();
        tx.savepoints.retain(|(n, _)| n != name);
        tx.savepoints.push((name.to_owned(), at));
        Ok(())
    }

    /// A savepoint before any change: the transaction exists from here on, but writes no redo
    /// (not even its START row) until its first change.
    fn ensure_tx_quiet(&mut self, session: &str) -> Result<(), SimError> {
        self.ensure_tx(session).map(|_| ())
    }

    fn rollback_to(&mut self, session: &str, name: &str) -> Result<(), SimError> {
        let at = {
            let tx = self.tx_mut(session)?;
            let pos = tx
                .savepoints
                .iter()
                .rposition(|(n, _)| n == name)
                .ok_or_else(|| SimError::Ora(cdc_core::ora::OraCode(1086), format!("ORA-01086: savepoint '{name}' never established in this session or is invalid")))?;
            let at = tx.savepoints[pos].1;
            tx.savepoints.truncate(pos + 1);
            at
        };
        self.undo_from(session, at)
    }

    fn ddl(
        &mut self,
        con: usize,
        user: &str,
        t: (usize, usize),
        sql: String,
    ) -> Result<(), SimError> {
        let session = format!("__ddl_{con}");
        self.begin(&session, None, Some(user), Some(false))?;
        if let Some(s) = self.sessions.get_mut(&session) {
            s.con = con;
            s.user = user.to_owned();
        }
        self.ensure_tx(&session)?;
        let table = self.table(t)?;
        let (owner, name, object, id) = (
            table.id.owner.clone(),
            table.id.table.clone(),
            table.object,
            table.id.clone(),
        );
        let scn = self.next_scn();
        let start = self.record(&session, scn, 0, false, Body::Start)?;
        let ddl = self.record(
            &session,
            scn,
            1,
            false,
            Body::Ddl {
                owner,
                name,
                object,
                sql: sql.clone(),
            },
        )?;
        self.tx_mut(&session)?.start_scn = scn;
        let thread = self.sessions.get(&session).map(|s| s.thread).unwrap_or(0);
        self.write_group(
            thread,
            Group {
                records: vec![start, ddl],
            },
        );
        let commit_scn = self.next_scn();
        let commit = self.record(&session, commit_scn, 0, false, Body::Commit)?;
        let commit_addr = self.write_group(
            thread,
            Group {
                records: vec![commit],
            },
        );
        if let Some(s) = self.sessions.get_mut(&session) {
            s.tx = None;
        }
        let con_id = self.containers.get(con).map(|c| c.con).unwrap_or_default();
        self.truth.ddl.push(TruthDdl {
            con: con_id,
            table: id,
            sql,
            scn,
            commit_addr,
        });
        Ok(())
    }

    fn create_table_in(
        &mut self,
        con: usize,
        spec: &TableSpec,
    ) -> Result<(usize, usize), SimError> {
        let container = self
            .containers
            .get(con)
            .ok_or_else(|| SimError::Scenario("no container".into()))?;
        let mut id = TableId::new(spec.owner.clone(), spec.name.clone());
        if let Some(name) = &container.name {
            id = id.in_pdb(name.clone());
        }
        if container.tables.iter().any(|t| !t.dropped && t.id == id) {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(955),
                "ORA-00955: name is already used by an existing object".into(),
            ));
        }
        let layout = layout_from_spec(spec, id.clone(), Scn(self.scn))?;
        let object = self.next_object_id();
        let mut partitions = Vec::new();
        let mut iot_top = None;
        match &spec.organization {
            Organization::Heap => {}
            Organization::Iot => iot_top = Some(self.next_object_id()),
            Organization::Range { partitions: specs } => {
                for p in specs {
                    let object = self.next_object_id();
                    partitions.push(SimPartition {
                        name: p.name.clone(),
                        object,
                        less_than: p.less_than,
                    });
                }
            }
        }
        let table = SimTable {
            id,
            versions: vec![std::sync::Arc::new(layout)],
            object,
            organization: spec.organization.clone(),
            partitions,
            iot_top,
            rows: BTreeMap::new(),
            dropped: false,
            next_row: 0,
        };
        let c = self
            .containers
            .get_mut(con)
            .ok_or_else(|| SimError::Scenario("no container".into()))?;
        c.tables.push(table);
        Ok((con, c.tables.len() - 1))
    }

    fn create_table(&mut self, user: Option<&str>, spec: &TableSpec) -> Result<(), SimError> {
        let con = match &spec.pdb {
            Some(p) => self
                .containers
                .iter()
                .position(|c| c.name.as_deref() == Some(p.as_str()))
                .ok_or_else(|| SimError::Scenario(format!("no PDB named {p}")))?,
            None => 0,
        };
        let t = self.create_table_in(con, spec)?;
        let layout = self
            .table(t)?
            .layout()
            .cloned()
            .ok_or_else(|| SimError::Scenario("no layout".into()))?;
        let mut cols = Vec::new();
        for (c, s) in layout.columns.iter().zip(&spec.columns) {
            let mut text = format!(
                "{} {}",
                quote_identifier(&c.name),
                s.data_type.to_ascii_uppercase()
            );
            if !c.nullable {
                text.push_str(" NOT NULL");
            }
            cols.push(text);
        }
        if !spec.primary_key.is_empty() {
            let keys: Vec<String> = spec
                .primary_key
                .iter()
                .map(|k| quote_identifier(k))
                .collect();
            cols.push(format!("PRIMARY KEY ({})", keys.join(", ")));
        }
        for index in &spec.unique_indexes {
            let columns: Vec<String> = index.columns.iter().map(|k| quote_identifier(k)).collect();
            cols.push(format!(
                "CONSTRAINT {} UNIQUE ({})",
                quote_identifier(&index.name),
                columns.join(", ")
            ));
        }
        let mut sql = format!(
            "CREATE TABLE {} ({})",
            layout.table.quoted(),
            cols.join(", ")
        );
        match &spec.organization {
            Organization::Heap => {}
            Organization::Iot => sql.push_str(" ORGANIZATION INDEX"),
            Organization::Range { partitions } => {
                let key = spec.primary_key.first().cloned().unwrap_or_default();
                let parts: Vec<String> = partitions
                    .iter()
                    .map(|p| {
                        format!(
                            "PARTITION {} VALUES LESS THAN ({})",
                            quote_identifier(&p.name),
                            p.less_than
                                .map(|b| b.to_string())
                                .unwrap_or_else(|| "MAXVALUE".into())
                        )
                    })
                    .collect();
                sql.push_str(&format!(
                    " PARTITION BY RANGE ({}) ({})",
                    quote_identifier(&key),
                    parts.join(", ")
                ));
            }
        }
        self.ddl(con, user.unwrap_or(&spec.owner), t, sql)
    }

    fn alter_table(
        &mut self,
        name: &str,
        make_sql: &dyn Fn(&str) -> String,
        change: impl FnOnce(&mut SimTable, Scn, &mut SimRng, &mut u32) -> Result<(), SimError>,
    ) -> Result<(), SimError> {
        let t = resolve_table(&self.containers, None, name)?;
        let busy = self.locks.keys().any(|(c, i, _)| (*c, *i) == t);
        if busy {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(54),
                "ORA-00054: resource busy and acquire with NOWAIT specified or timeout expired"
                    .into(),
            ));
        }
        let scn = Scn(self.scn + 1);
        let mut next_object = self.next_object;
        let mut rng = self.rng.fork(0xDD1);
        change(self.table_mut(t)?, scn, &mut rng, &mut next_object)?;
        self.next_object = next_object;
        let quoted = self.table(t)?.id.quoted();
        let user = self.table(t)?.id.owner.clone();
        self.ddl(t.0, &user, t, make_sql(&quoted))
    }

    /// Applies one operation.
    pub fn apply(&mut self, op: &DbOp) -> Result<(), SimError> {
        self.clock.advance_nanos(1_000 + self.rng.below(50_000));
        match op {
            DbOp::Begin {
                session,
                pdb,
                user,
                private_strand,
            } => self.begin(session, pdb.as_deref(), user.as_deref(), *private_strand),
            DbOp::Insert {
                session,
                table,
                row,
                fails,
            } => self.insert(session, table, row, *fails),
            DbOp::Update {
                session,
                table,
                rows,
                set,
            } => self.update(session, table, rows, set),
            DbOp::Lob {
                session,
                table,
                row,
                column,
                call,
            } => self.lob_call(session, table, row, column, call),
            DbOp::Delete {
                session,
                table,
                rows,
            } => self.delete(session, table, rows),
            DbOp::Savepoint { session, name } => self.savepoint(session, name),
            DbOp::RollbackTo { session, name } => self.rollback_to(session, name),
            DbOp::Commit { session } => self.commit(session),
            DbOp::Rollback { session } => self.rollback(session),
            DbOp::CreateTable { user, spec } => self.create_table(user.as_deref(), spec),
            DbOp::AddColumn { table, column } => {
                let tail = format!(
                    "ADD ({} {})",
                    quote_identifier(&column.name),
                    column.data_type.to_ascii_uppercase()
                );
                let column = column.clone();
                self.alter_table(
                    table,
                    &|q| format!("ALTER TABLE {q} {tail}"),
                    move |t, scn, _, _| {
                        let mut layout = t
                            .layout()
                            .cloned()
                            .ok_or_else(|| SimError::Scenario("no layout".into()))?;
                        let position = layout.columns.len() as u16 + 1;
                        layout.columns.push(column_def(&column, position)?);
                        layout.version += 1;
                        layout.valid_from = scn;
                        t.versions.push(std::sync::Arc::new(layout));
                        for row in t.rows.values_mut() {
                            row.push(Value::Null);
                        }
                        Ok(())
                    },
                )
            }
            DbOp::Truncate { table } => {
                self.alter_table(table, &|q| format!("TRUNCATE TABLE {q}"), |t, _, _, _| {
                    t.rows.clear();
                    Ok(())
                })
            }
            DbOp::DropTable { table } => {
                let t = resolve_table(&self.containers, None, table)?;
                let quoted = self.table(t)?.id.quoted();
                let user = self.table(t)?.id.owner.clone();
                self.ddl(t.0, &user, t, format!("DROP TABLE {quoted} PURGE"))?;
                self.table_mut(t)?.dropped = true;
                Ok(())
            }
            DbOp::AddPartition {
                table,
                name,
                less_than,
            } => {
                let tail = format!(
                    "ADD PARTITION {} VALUES LESS THAN ({})",
                    quote_identifier(name),
                    less_than
                        .map(|b| b.to_string())
                        .unwrap_or_else(|| "MAXVALUE".into())
                );
                let (name, less_than) = (name.clone(), *less_than);
                self.alter_table(
                    table,
                    &|q| format!("ALTER TABLE {q} {tail}"),
                    move |t, _, rng, next_object| {
                        if !matches!(t.organization, Organization::Range { .. }) {
                            return Err(SimError::Ora(
                                cdc_core::ora::OraCode(14501),
                                "ORA-14501: object is not partitioned".into(),
                            ));
                        }
                        *next_object += 1 + rng.below(4) as u32;
                        t.partitions.push(SimPartition {
                            name,
                            object: ObjectId(*next_object),
                            less_than,
                        });
                        Ok(())
                    },
                )
            }
            DbOp::LogSwitch => {
                for t in 0..self.current.len() {
                    self.switch_log(t);
                }
                Ok(())
            }
            DbOp::Archive => {
                for i in 0..self.logs.len() {
                    self.archive_log(i);
                }
                Ok(())
            }
            DbOp::Purge {
                up_to_sequence,
                remove_file,
            } => {
                let inc = self.incarnation;
                for log in self
                    .logs
                    .iter_mut()
                    .filter(|l| l.sequence <= *up_to_sequence && l.incarnation == inc)
                {
                    for copy in &mut log.copies {
                        if *remove_file {
                            copy.removed = true;
                        } else {
                            copy.deleted = true;
                            copy.removed = true;
                        }
                    }
                }
                Ok(())
            }
            DbOp::Gap { sequence } => {
                let inc = self.incarnation;
                if let Some(log) = self.logs.iter_mut().find(|l| {
                    l.sequence == *sequence && l.incarnation == inc && l.next_scn.is_some()
                }) {
                    log.lost = true;
                    log.copies.clear();
                    log.online = false;
                }
                Ok(())
            }
            DbOp::FlushStrand { session } => {
                self.flush_strand(session);
                Ok(())
            }
            DbOp::Tick { millis } => {
                self.clock.advance_millis(*millis);
                // time passes, SCNs move on (background activity)
                self.scn += millis / 10;
                Ok(())
            }
            DbOp::KillSession { session } => {
                // what the transaction wrote stays in the log; no end record ever follows
                self.flush_strand(session);
                self.sessions.remove(session);
                self.release_locks(session);
                self.truth.rolled_back += 1;
                Ok(())
            }
            DbOp::InstanceCrash => {
                let names: Vec<String> = self.sessions.keys().cloned().collect();
                for n in &names {
                    self.rollback(n)?;
                }
                self.sessions.clear();
                Ok(())
            }
            DbOp::Restore { new_dbid } => {
                // open transactions are lost with the old incarnation
                let names: Vec<String> = self.sessions.keys().cloned().collect();
                for n in names {
                    self.release_locks(&n);
                }
                self.sessions.clear();
                for t in 0..self.current.len() {
                    self.switch_log(t);
                }
                if *new_dbid {
                    self.dbid += 1 + self.rng.below(1_000_000);
                }
                self.incarnation += 1;
                self.resetlogs_scn = Scn(self.scn + 1);
                self.scn += 1;
                let threads = self.threads.clone();
                for (i, th) in threads.iter().enumerate() {
                    self.open_log(i, *th, 1);
                }
                Ok(())
            }
            DbOp::EnableThread { thread } => {
                let th = RedoThread(*thread);
                if !self.threads.contains(&th) {
                    self.threads.push(th);
                    let idx = self.threads.len() - 1;
                    self.open_log(idx, th, 1);
                }
                Ok(())
            }
        }
    }

    /// Open transactions, as GV$TRANSACTION lists them (only those with a change).
    pub(crate) fn open_transactions(&self) -> Vec<(&String, &Session, Xid, Scn)> {
        self.sessions
            .iter()
            .filter_map(|(n, s)| {
                s.tx.as_ref()
                    .filter(|t| !t.changes.is_empty())
                    .map(|t| (n, s, t.xid, t.start_scn))
            })
            .collect()
    }

    /// The sessions that exist.
    pub(crate) fn session_alive(&self, sid: u32, serial: u32) -> bool {
        self.sessions
            .values()
            .any(|s| s.sid == sid && s.serial == serial)
    }

    /// Open transactions by session name, with their number of changes (for the generator).
    pub(crate) fn tx_changes(&self, session: &str) -> Option<usize> {
        self.sessions
            .get(session)
            .and_then(|s| s.tx.as_ref())
            .map(|t| t.changes.len())
    }

    pub(crate) fn tx_has_savepoint(&self, session: &str) -> Option<String> {
        self.sessions
            .get(session)
            .and_then(|s| s.tx.as_ref())
            .and_then(|t| t.savepoints.last().map(|(n, _)| n.clone()))
    }

    pub(crate) fn session_con(&self, session: &str) -> Option<usize> {
        self.sessions.get(session).map(|s| s.con)
    }
}

/// The values a LOB row's select locates the row by: its non-LOB columns (NULL in the LOB
/// places).
fn locating_values(columns: &[cdc_core::ColumnDef], row: &[Value]) -> Vec<Value> {
    columns
        .iter()
        .zip(row)
        .map(|(c, v)| {
            if c.data_type.is_lob() {
                Value::Null
            } else {
                v.clone()
            }
        })
        .collect()
}

/// Length of a LOB value: characters of text, bytes of binary.
fn lob_length(value: &Value) -> u64 {
    match value {
        Value::Text(s) => s.chars().count() as u64,
        Value::Raw(b) => b.len() as u64,
        _ => 0,
    }
}

/// LOB_WRITE rows of `data` written from `offset` on, [`LOB_WRITE_CHUNK`] characters or bytes
/// each.
fn lob_chunks(data: &Value, offset: u64) -> Vec<LobRow> {
    match data {
        Value::Text(s) => {
            let chars: Vec<char> = s.chars().collect();
            chars
                .chunks(LOB_WRITE_CHUNK)
                .enumerate()
                .map(|(n, c)| LobRow::Write {
                    offset: offset + (n * LOB_WRITE_CHUNK) as u64,
                    data: Value::Text(c.iter().collect()),
                })
                .collect()
        }
        Value::Raw(b) => b
            .chunks(LOB_WRITE_CHUNK)
            .enumerate()
            .map(|(n, c)| LobRow::Write {
                offset: offset + (n * LOB_WRITE_CHUNK) as u64,
                data: Value::Raw(c.to_vec()),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The value a DBMS_LOB call leaves in a non-NULL LOB.
fn apply_lob_call(
    ty: &cdc_core::ColumnType,
    current: &Value,
    call: &LobCall,
) -> Result<Value, SimError> {
    let binary = matches!(ty, cdc_core::ColumnType::Blob);
    // work on code points or bytes alike
    let mut units: Vec<u32> = match current {
        Value::Text(s) if !binary => s.chars().map(u32::from).collect(),
        Value::Raw(b) if binary => b.iter().map(|&b| u32::from(b)).collect(),
        Value::EmptyLob => Vec::new(),
        other => {
            return Err(SimError::Scenario(format!(
                "a LOB call on a value of the wrong kind: {other:?}"
            )));
        }
    };
    let fill = if binary { 0 } else { u32::from(' ') };
    let bad = |what: &str| {
        SimError::Ora(
            cdc_core::ora::OraCode(21560),
            format!("ORA-21560: argument {what} is null, invalid, or out of range"),
        )
    };
    match call {
        LobCall::Write { offset, data } => {
            if *offset == 0 {
                return Err(bad("4 (offset)"));
            }
            let new: Vec<u32> = match data {
                Value::Text(s) if !binary => s.chars().map(u32::from).collect(),
                Value::Raw(b) if binary => b.iter().map(|&b| u32::from(b)).collect(),
                _ => return Err(bad("buffer")),
            };
            let start = (*offset - 1) as usize;
            if units.len() < start {
                units.resize(start, fill);
            }
            for (k, u) in new.into_iter().enumerate() {
                match units.get_mut(start + k) {
                    Some(slot) => *slot = u,
                    None => units.push(u),
                }
            }
        }
        LobCall::Trim { length } => {
            if *length as usize > units.len() {
                return Err(bad("2 (new length)"));
            }
            units.truncate(*length as usize);
        }
        LobCall::Erase { amount, offset } => {
            if *offset == 0 {
                return Err(bad("3 (offset)"));
            }
            let start = (*offset - 1) as usize;
            let end = start.saturating_add(*amount as usize).min(units.len());
            for slot in units.iter_mut().take(end).skip(start) {
                *slot = fill;
            }
        }
    }
    Ok(if binary {
        Value::Raw(units.into_iter().map(|u| u as u8).collect())
    } else {
        Value::Text(units.into_iter().filter_map(char::from_u32).collect())
    })
}

/// Oracle stores `''` as NULL and pads CHAR/NCHAR to their length.
fn normalise(col: &cdc_core::ColumnDef, v: Value) -> Value {
    match v {
        Value::Text(s) if s.is_empty() => Value::Null,
        Value::Raw(b) if b.is_empty() => Value::Null,
        Value::Text(s) if matches!(col.data_type, ColumnType::Char | ColumnType::NChar) => {
            let len = s.chars().count();
            let width = col.length as usize;
            if len < width {
                Value::Text(format!("{s}{}", " ".repeat(width - len)))
            } else {
                Value::Text(s)
            }
        }
        other => other,
    }
}
