//! [`SimSource`]: the simulator behind the [`RedoSource`] trait, with LogMiner's filtering,
//! the log inventory of V$ARCHIVED_LOG/V$LOG, and faults on demand that fail the way Oracle
//! fails.
//!
//! ```text
//!   SimSource ── owns ──► SimDatabase (+ optional Workload, advanced on current_scn())
//!      │ gate(call): disconnected? PDBs opening? a queued ORA fault for this call?
//!      │ mine: session logs ──render──► rows ──bound, objects, users──► sink
//!      └ faults: ORA-03113 / ORA-00028 / ORA-00310 mid-read, ORA-01291 at start, timeout
//! ```

use std::collections::{BTreeSet, VecDeque};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use cdc_core::ora::OraCode;
use cdc_core::{
    ConId, MinedRow, ObjectId, Operation, RedoAddr, RedoThread, RsId, Scn, TableId, TableLayout,
    Xid,
};
use serde::{Deserialize, Serialize};

use super::SimError;
use super::db::{DbOp, RedoDictionary, SimDatabase};
use super::logminer::DICTIONARY_MISMATCH_INFO;
use super::model::Organization;
use super::snapshot::{SimSnapshotReader, SnapshotControl, SnapshotFault};
use super::workload::{Step, Workload};
use crate::source::{
    ActiveTransaction, CURRENT_LOG_NEXT_SCN, CaptureMode, CapturedObject, DatabaseIdentity,
    DatabaseRole, DictionaryBuild, DictionarySource, LogFile, LogInventoryQuery, LogLocation,
    LogStatus, MineSummary, MiningQuery, MiningWindow, NlsSettings, OpenMode, PdbInfo, RedoBound,
    RedoSource, RowSink, SegmentKind, SessionMode, SessionRef, SnapshotReader, SourceError,
    TableFilter,
};

pub use crate::source::ORACLE_MAINTAINED_OWNERS;

/// A call of the trait, for faults that target one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceCall {
    Any,
    Identity,
    CurrentScn,
    LogInventory,
    ResolveObjects,
    TableLayouts,
    LastDdl,
    StartSession,
    BuildDictionary,
    EndSession,
    Mine,
    ActiveTransactions,
    SessionExists,
    Nls,
    /// Opening a snapshot session ([`RedoSource::snapshot_reader`]).
    SnapshotReader,
}

/// A fault on demand. Each fails the way Oracle fails; they fire in the order queued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// The connection drops after `after_rows` rows of the next mining query: ORA-03113, then
    /// ORA-03114 on every call until `reconnect`.
    DropConnection { after_rows: u64 },
    /// The session is killed after `after_rows` rows of the next mining query: ORA-00028, then
    /// ORA-03114 until `reconnect`.
    KillSession { after_rows: u64 },
    /// A log is switched (and the online log read is overwritten) after `after_rows` rows of
    /// the next mining query: ORA-00310 with ORA-00334.
    LogSwitchedWhileRead { after_rows: u64 },
    /// The next `start_session` fails with ORA-01291 (the range is not covered yet).
    MissingLogFile,
    /// The next mining query takes this long; at or above its timeout it is cancelled.
    SlowQuery { millis: u64 },
    /// The instance restarts: the current call fails with ORA-03113; after `reconnect`, the
    /// next `opening_calls` calls fail with ORA-16331 while the PDBs open.
    InstanceRestart { opening_calls: u32 },
    /// Any ORA error at the next call of the given kind.
    Ora {
        code: u32,
        #[serde(default)]
        message: Option<String>,
        #[serde(default = "any_call")]
        call: SourceCall,
    },
}

fn any_call() -> SourceCall {
    SourceCall::Any
}

#[derive(Debug, Clone)]
struct SessionLog {
    file: LogFile,
    /// Index of the log in the database's list.
    index: usize,
}

#[derive(Debug, Clone)]
struct MinerSession {
    logs: Vec<SessionLog>,
    /// The redo dictionary of a `DICT_FROM_REDO_LOGS + DDL_DICT_TRACKING` session, and its
    /// STARTSCN: rows below it are read for the dictionary only, not returned.
    redo_dictionary: Option<(RedoDictionary, Scn)>,
}

/// The simulator as a [`RedoSource`].
#[derive(Debug)]
pub struct SimSource {
    db: SimDatabase,
    workload: Option<Workload>,
    /// Workload events applied at every `current_scn` call (a database that keeps working
    /// between steps).
    advance_per_poll: usize,
    session: Option<MinerSession>,
    faults: VecDeque<Fault>,
    disconnected: bool,
    restart_pending: Option<u32>,
    opening_calls: u32,
    mined_rows: u64,
    generic_rows: u64,
    /// Round trips the mining queries' rows took, `MiningQuery::fetch_size` rows each.
    fetches: u64,
    /// Snapshot faults and round trips, shared with the snapshot readers handed out.
    snapshot: Arc<SnapshotControl>,
}

fn ora(code: u32, text: String) -> SourceError {
    SourceError::ora(OraCode(code), text)
}

/// START_LOGMNR's answer when the added logs do not cover the range asked for.
const MISSING_LOG_FILE: &str =
    "ORA-01291: missing log file\nORA-06512: at \"SYS.DBMS_LOGMNR\", line 72\nORA-06512: at line 1";

/// START_LOGMNR with DICT_FROM_REDO_LOGS when not every log of a build was added.
fn dictionary_incomplete() -> SourceError {
    ora(
        1371,
        "ORA-01371: Complete LogMiner dictionary not found\nORA-06512: at \"SYS.DBMS_LOGMNR\", line 72\nORA-06512: at line 1".into(),
    )
}

impl SimSource {
    pub fn new(db: SimDatabase) -> SimSource {
        SimSource {
            db,
            workload: None,
            advance_per_poll: 0,
            session: None,
            faults: VecDeque::new(),
            disconnected: false,
            restart_pending: None,
            opening_calls: 0,
            mined_rows: 0,
            generic_rows: 0,
            fetches: 0,
            snapshot: Arc::new(SnapshotControl::default()),
        }
    }

    /// A source whose database runs `workload`, `per_poll` events at every `current_scn`.
    pub fn with_workload(db: SimDatabase, workload: Workload, per_poll: usize) -> SimSource {
        let mut s = SimSource::new(db);
        s.workload = Some(workload);
        s.advance_per_poll = per_poll;
        s
    }

    pub fn database(&self) -> &SimDatabase {
        &self.db
    }

    pub fn database_mut(&mut self) -> &mut SimDatabase {
        &mut self.db
    }

    /// Applies an operation to the database (a scenario event or a semantic fault).
    pub fn apply(&mut self, op: &DbOp) -> Result<(), SimError> {
        self.db.apply(op)
    }

    /// Runs up to `events` workload events; false once the workload is done.
    pub fn advance(&mut self, events: usize) -> Result<bool, SimError> {
        let Some(w) = self.workload.as_mut() else {
            return Ok(false);
        };
        for _ in 0..events {
            // a scenario's faults fire as they come, as `play` queues them all at once
            match w.step_full(&mut self.db)? {
                Step::Done => return Ok(false),
                Step::Fault(fault) => self.faults.push_back(fault),
                Step::Applied => {}
            }
        }
        Ok(true)
    }

    /// Queues a fault.
    pub fn inject(&mut self, fault: Fault) {
        self.faults.push_back(fault);
    }

    /// Faults not fired yet.
    pub fn pending_faults(&self) -> usize {
        self.faults.len()
    }

    /// Rows handed to sinks so far.
    pub fn mined_rows(&self) -> u64 {
        self.mined_rows
    }

    /// DML rows handed to the engine generic (STATUS 2, "Dictionary Mismatch"): rows mined
    /// after a later DDL of their table.
    pub fn generic_rows(&self) -> u64 {
        self.generic_rows
    }

    /// Round trips to the database the mining queries took so far: as the Oracle client, each
    /// query fetches its rows `fetch_size` at a time, and even an empty result is one.
    pub fn fetches(&self) -> u64 {
        self.fetches
    }

    /// Queues a fault of snapshot reads; readers already handed out see it too.
    pub fn inject_snapshot_fault(&self, fault: SnapshotFault) {
        self.snapshot.inject(fault);
    }

    /// Snapshot faults not fired yet.
    pub fn pending_snapshot_faults(&self) -> usize {
        self.snapshot.pending()
    }

    /// Round trips the snapshot reads took so far (every reader of this source):
    /// `SnapshotQuery::fetch_size` rows each, as [`SimSource::fetches`] counts the mining
    /// queries'.
    pub fn snapshot_fetches(&self) -> u64 {
        self.snapshot.fetches()
    }

    fn first_pdb(&self) -> String {
        self.db
            .containers
            .iter()
            .find_map(|c| c.name.clone())
            .unwrap_or_else(|| self.db.config.db_name.clone())
    }

    /// Refuses a call while disconnected or while the PDBs open; fires a queued ORA fault.
    fn gate(&mut self, call: SourceCall) -> Result<(), SourceError> {
        if self.disconnected {
            return Err(ora(3114, "ORA-03114: not connected to ORACLE".into()));
        }
        if let Some(Fault::InstanceRestart { opening_calls }) = self.faults.front().cloned() {
            self.faults.pop_front();
            self.disconnected = true;
            self.restart_pending = Some(opening_calls);
            self.session = None;
            return Err(ora(
                3113,
                "ORA-03113: end-of-file on communication channel\nProcess ID: 0\nSession ID: 0 Serial number: 0"
                    .into(),
            ));
        }
        if self.opening_calls > 0 && call != SourceCall::CurrentScn && call != SourceCall::Identity
        {
            self.opening_calls -= 1;
            return Err(ora(
                16331,
                format!("ORA-16331: container {} is not open", self.first_pdb()),
            ));
        }
        if let Some(Fault::Ora {
            code,
            message,
            call: on,
        }) = self.faults.front().cloned()
            && (on == SourceCall::Any || on == call)
        {
            self.faults.pop_front();
            let code = OraCode(code);
            let text = message.unwrap_or_else(|| {
                format!(
                    "{code}: {}",
                    code.name()
                        .unwrap_or("simulated error")
                        .to_ascii_lowercase()
                        .replace('_', " ")
                )
            });
            return Err(SourceError::ora(code, text));
        }
        Ok(())
    }

    fn dest_index(&self, destination: Option<&str>) -> Result<usize, SourceError> {
        match destination {
            None => Ok(0),
            Some(name) => self
                .db
                .config
                .archive_dests
                .iter()
                .position(|d| d.eq_ignore_ascii_case(name))
                .ok_or_else(|| SourceError::Invalid {
                    message: format!("no valid archive destination named {name}"),
                }),
        }
    }

    /// The inventory as V$ARCHIVED_LOG at one destination plus V$LOG.
    fn inventory(&self, query: &LogInventoryQuery) -> Result<Vec<(usize, LogFile)>, SourceError> {
        let dest = self.dest_index(query.destination.as_deref())?;
        let dest_name = self
            .db
            .config
            .archive_dests
            .get(dest)
            .cloned()
            .unwrap_or_else(|| "LOG_ARCHIVE_DEST_1".into());
        let mut out = Vec::new();
        for thread in &self.db.threads {
            let current = self
                .db
                .logs
                .iter()
                .enumerate()
                .filter(|(_, l)| l.thread == *thread && l.incarnation == self.db.incarnation)
                .map(|(i, _)| i)
                .collect::<Vec<_>>();
            let last = current.last().copied();
            let previous = current.iter().rev().nth(1).copied();
            let unapplied = self.unapplied_logs(&current);
            for i in current {
                let Some(log) = self.db.logs.get(i) else {
                    continue;
                };
                if unapplied.contains(&i) {
                    // a standby lists only what it has applied (V$ARCHIVED_LOG.APPLIED)
                    continue;
                }
                let next = log.next_scn.unwrap_or(CURRENT_LOG_NEXT_SCN);
                if next <= query.from {
                    continue;
                }
                if let Some(copy) = log.copies.iter().find(|c| c.dest == dest) {
                    out.push((
                        i,
                        LogFile {
                            thread: log.thread,
                            sequence: log.sequence,
                            first_scn: log.first_scn,
                            next_scn: next,
                            status: if copy.deleted {
                                LogStatus::Deleted
                            } else {
                                LogStatus::Available
                            },
                            archived: true,
                            deleted: copy.deleted,
                            name: Some(copy.name.clone()),
                            location: LogLocation::Archived {
                                dest_id: dest as u32 + 1,
                                dest_name: dest_name.clone(),
                            },
                            dictionary_begin: log.dictionary_begin,
                            dictionary_end: log.dictionary_end,
                            first_time_ms: Some(log.first_time_ms),
                        },
                    ));
                } else if query.mode == CaptureMode::Online && log.online {
                    let status = if Some(i) == last {
                        LogStatus::Current
                    } else if Some(i) == previous {
                        LogStatus::Active
                    } else {
                        LogStatus::Inactive
                    };
                    out.push((
                        i,
                        LogFile {
                            thread: log.thread,
                            sequence: log.sequence,
                            first_scn: log.first_scn,
                            next_scn: next,
                            status,
                            archived: !log.copies.is_empty(),
                            deleted: false,
                            name: Some(log.online_name(&self.db.config.db_name)),
                            location: LogLocation::Online { group: log.group },
                            // V$LOG has no dictionary flags
                            dictionary_begin: false,
                            dictionary_end: false,
                            first_time_ms: Some(log.first_time_ms),
                        },
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Of one thread's logs (indexes, in sequence order), those a physical standby has
    /// archived but not applied yet: the newest `standby_apply_lag_logs` archived ones.
    fn unapplied_logs(&self, thread_logs: &[usize]) -> BTreeSet<usize> {
        if self.db.config.role != DatabaseRole::PhysicalStandby {
            return BTreeSet::new();
        }
        thread_logs
            .iter()
            .copied()
            .filter(|i| self.db.logs.get(*i).is_some_and(|l| !l.copies.is_empty()))
            .rev()
            .take(self.db.config.standby_apply_lag_logs as usize)
            .collect()
    }

    /// A session by SCN range: LogMiner finds the logs of the range itself, an archived copy
    /// that is still there (any destination) or else the online log. A range that starts
    /// below the oldest redo still there, or crosses a log that is gone, is ORA-01291; an end
    /// beyond the current SCN is no error.
    fn start_range_session(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        let missing = || {
            ora(
                1291,
                "ORA-01291: missing log file\nORA-06512: at \"SYS.DBMS_LOGMNR\", line 72\nORA-06512: at line 1"
                    .into(),
            )
        };
        if let Some(Fault::MissingLogFile) = self.faults.front() {
            self.faults.pop_front();
            return Err(missing());
        }
        if window.dictionary == DictionarySource::RedoLogs {
            // no log is added, so none holds a dictionary (observed in a PDB)
            return Err(dictionary_incomplete());
        }
        let (start, end) = (window.start_scn, window.end_scn());
        let mut logs = Vec::new();
        for (index, log) in self.db.logs.iter().enumerate() {
            let next = log.next_scn.unwrap_or(CURRENT_LOG_NEXT_SCN);
            if log.incarnation != self.db.incarnation || next <= start || log.first_scn >= end {
                continue;
            }
            let location = match log.copies.iter().find(|c| !c.removed && !c.deleted) {
                Some(copy) => Some((
                    LogLocation::Archived {
                        dest_id: copy.dest as u32 + 1,
                        dest_name: self
                            .db
                            .config
                            .archive_dests
                            .get(copy.dest)
                            .cloned()
                            .unwrap_or_default(),
                    },
                    copy.name.clone(),
                )),
                None if log.online && !log.lost => Some((
                    LogLocation::Online { group: log.group },
                    log.online_name(&self.db.config.db_name),
                )),
                None => None,
            };
            let Some((location, name)) = location else {
                return Err(missing());
            };
            let archived = matches!(location, LogLocation::Archived { .. });
            logs.push(SessionLog {
                file: LogFile {
                    thread: log.thread,
                    sequence: log.sequence,
                    first_scn: log.first_scn,
                    next_scn: next,
                    status: LogStatus::Available,
                    archived: !log.copies.is_empty(),
                    deleted: false,
                    name: Some(name),
                    location,
                    dictionary_begin: archived && log.dictionary_begin,
                    dictionary_end: archived && log.dictionary_end,
                    first_time_ms: Some(log.first_time_ms),
                },
                index,
            });
        }
        if !logs
            .iter()
            .any(|l| l.file.first_scn <= start && start < l.file.next_scn)
        {
            return Err(missing());
        }
        logs.sort_by_key(|l| (l.file.thread, l.file.sequence));
        self.session = Some(MinerSession {
            logs,
            redo_dictionary: None,
        });
        Ok(())
    }

    /// The dictionary a `DICT_FROM_REDO_LOGS + DDL_DICT_TRACKING` session over `logs` loads:
    /// the first build all of whose logs were added (ORA-01371 when there is none), carried
    /// through the redo after it, which must not miss a sequence up to the last added log
    /// (ORA-01291).
    fn redo_dictionary(&self, logs: &[SessionLog]) -> Result<RedoDictionary, SourceError> {
        let added: BTreeSet<usize> = logs.iter().map(|l| l.index).collect();
        let whole = |first: usize, last: usize| {
            let (Some(a), Some(b)) = (self.db.logs.get(first), self.db.logs.get(last)) else {
                return false;
            };
            self.db.logs.iter().enumerate().all(|(i, l)| {
                added.contains(&i)
                    || l.thread != a.thread
                    || l.incarnation != a.incarnation
                    || l.sequence < a.sequence
                    || l.sequence > b.sequence
            })
        };
        let build = self
            .db
            .builds()
            .iter()
            .find(|b| whole(b.first_log, b.last_log))
            .ok_or_else(dictionary_incomplete)?;
        let Some(first) = self.db.logs.get(build.first_log) else {
            return Err(dictionary_incomplete());
        };
        let mut sequences: Vec<u32> = logs
            .iter()
            .filter_map(|l| self.db.logs.get(l.index))
            .filter(|l| l.thread == first.thread && l.sequence >= first.sequence)
            .map(|l| l.sequence)
            .collect();
        sequences.sort_unstable();
        if sequences.windows(2).any(|w| w[1] != w[0] + 1) {
            // DDL tracking may not miss a log between the build and the mined range
            return Err(ora(1291, MISSING_LOG_FILE.into()));
        }
        Ok(RedoDictionary::of(build))
    }

    fn find_log(&self, file: &LogFile) -> Option<usize> {
        self.db.logs.iter().position(|l| {
            l.thread == file.thread
                && l.sequence == file.sequence
                && l.incarnation == self.db.incarnation
        })
    }
}

impl RedoSource for SimSource {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        self.gate(SourceCall::Identity)?;
        let session_pdb = self.db.config.session_pdb.clone();
        Ok(DatabaseIdentity {
            dbid: self.db.dbid,
            name: self.db.config.db_name.clone(),
            resetlogs_scn: self.db.resetlogs_scn,
            role: self.db.config.role.clone(),
            open_mode: self.db.config.open_mode.clone(),
            enabled_threads: self.db.threads.clone(),
            is_cdb: !self.db.config.pdbs.is_empty(),
            // V$PDBS in a PDB lists only that PDB
            open_pdbs: self
                .db
                .containers
                .iter()
                .filter(|c| session_pdb.is_none() || c.name == session_pdb)
                .filter_map(|c| {
                    c.name.as_ref().map(|n| PdbInfo {
                        con_id: c.con,
                        name: n.clone(),
                        open_mode: if self.opening_calls > 0 {
                            OpenMode::Mounted
                        } else {
                            OpenMode::ReadWrite
                        },
                    })
                })
                .collect(),
            session_pdb,
            valid_archive_destinations: self.db.config.archive_dests.clone(),
            // the simulated database's clock is UTC
            utc_offset_minutes: 0,
        })
    }

    fn current_scn(&mut self) -> Result<Scn, SourceError> {
        self.gate(SourceCall::CurrentScn)?;
        if self.advance_per_poll > 0 {
            let n = self.advance_per_poll;
            self.advance(n).map_err(|e| SourceError::Invalid {
                message: format!("simulated workload failed: {e}"),
            })?;
        }
        Ok(self.db.current_scn())
    }

    fn log_inventory(&mut self, query: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        self.gate(SourceCall::LogInventory)?;
        Ok(self.inventory(query)?.into_iter().map(|(_, f)| f).collect())
    }

    fn resolve_objects(
        &mut self,
        filter: &TableFilter<'_>,
    ) -> Result<Vec<CapturedObject>, SourceError> {
        self.gate(SourceCall::ResolveObjects)?;
        let mut out = Vec::new();
        let session_con = self.db.session_container();
        for c in self
            .db
            .containers
            .iter()
            .filter(|c| session_con.is_none_or(|con| c.con == con))
        {
            for t in c.tables.iter().filter(|t| !t.dropped && filter(&t.id)) {
                match &t.organization {
                    Organization::Heap => out.push(CapturedObject {
                        con: c.con,
                        object: t.object,
                        table: t.id.clone(),
                        segment: SegmentKind::Table,
                    }),
                    Organization::Iot => out.push(CapturedObject {
                        con: c.con,
                        object: t.iot_top.unwrap_or(t.object),
                        table: t.id.clone(),
                        segment: SegmentKind::IotTop(format!("SYS_IOT_TOP_{}", t.object.0)),
                    }),
                    Organization::Range { .. } => {
                        for p in &t.partitions {
                            out.push(CapturedObject {
                                con: c.con,
                                object: p.object,
                                table: t.id.clone(),
                                segment: SegmentKind::Partition(p.name.clone()),
                            });
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    fn table_layouts(&mut self, tables: &[TableId]) -> Result<Vec<TableLayout>, SourceError> {
        self.gate(SourceCall::TableLayouts)?;
        let mut out = Vec::new();
        for id in tables {
            for c in &self.db.containers {
                if c.name.as_deref() != id.pdb.as_deref() {
                    continue;
                }
                if let Some(layout) = c
                    .tables
                    .iter()
                    .rev()
                    .find(|t| !t.dropped && &t.id == id)
                    .and_then(|t| t.layout())
                {
                    out.push(layout.clone());
                }
            }
        }
        Ok(out)
    }

    fn last_ddl_after(
        &mut self,
        tables: &[TableId],
        scn: Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        self.gate(SourceCall::LastDdl)?;
        Ok(tables
            .iter()
            .filter_map(|t| Some((t.clone(), self.db.last_ddl_after(t, scn)?)))
            .collect())
    }

    fn start_session(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        self.gate(SourceCall::StartSession)?;
        self.session = None;
        match window.mode {
            SessionMode::Range => return self.start_range_session(window),
            SessionMode::Logs if self.db.config.session_pdb.is_some() => {
                return Err(ora(
                    65040,
                    "ORA-65040: operation not allowed from within a pluggable database\nORA-06512: at \"SYS.DBMS_LOGMNR\", line 82\nORA-06512: at line 1".into(),
                ));
            }
            SessionMode::Logs => {}
        }
        if window.logs.is_empty() {
            return Err(ora(
                1292,
                "ORA-01292: no log file has been specified for the current LogMiner session".into(),
            ));
        }
        let mut names = BTreeSet::new();
        let mut logs = Vec::new();
        for file in &window.logs {
            let name = file.name.clone().unwrap_or_default();
            if !names.insert(name.clone()) {
                return Err(ora(
                    1289,
                    format!("ORA-01289: cannot add duplicate logfile {name}"),
                ));
            }
            let cannot_open = || {
                ora(
                    1284,
                    format!(
                        "ORA-01284: file {name} cannot be opened\nORA-00308: cannot open archived log '{name}'\nORA-27037: unable to obtain file status\nLinux-x86_64 Error: 2: No such file or directory"
                    ),
                )
            };
            let index = self.find_log(file).ok_or_else(cannot_open)?;
            let log = self.db.logs.get(index).ok_or_else(cannot_open)?;
            match &file.location {
                LogLocation::Archived { dest_id, .. } => {
                    let ok = log
                        .copies
                        .iter()
                        .any(|c| c.dest + 1 == *dest_id as usize && !c.removed && !c.deleted);
                    if !ok {
                        return Err(cannot_open());
                    }
                }
                LogLocation::Online { .. } => {
                    if log.lost {
                        return Err(cannot_open());
                    }
                }
            }
            logs.push(SessionLog {
                file: file.clone(),
                index,
            });
        }
        if let Some(Fault::MissingLogFile) = self.faults.front() {
            self.faults.pop_front();
            return Err(ora(1291, "ORA-01291: missing log file\nORA-06512: at \"SYS.DBMS_LOGMNR\", line 72\nORA-06512: at line 1".into()));
        }
        let covered = window
            .logs
            .iter()
            .any(|f| f.first_scn <= window.start_scn && window.start_scn < f.next_scn);
        if !covered {
            return Err(ora(1291, MISSING_LOG_FILE.into()));
        }
        logs.sort_by_key(|l| (l.file.thread, l.file.sequence));
        let redo_dictionary = match window.dictionary {
            DictionarySource::OnlineCatalog => None,
            DictionarySource::RedoLogs => Some((self.redo_dictionary(&logs)?, window.start_scn)),
        };
        self.session = Some(MinerSession {
            logs,
            redo_dictionary,
        });
        Ok(())
    }

    fn build_dictionary(&mut self) -> Result<DictionaryBuild, SourceError> {
        self.gate(SourceCall::BuildDictionary)?;
        if self.db.config.role != DatabaseRole::Primary
            || self.db.config.open_mode != crate::source::OpenMode::ReadWrite
        {
            // a standby or a read-only database writes no redo of its own (the builds in a
            // standby's redo are its primary's, which the workload makes)
            return Err(SourceError::ora(
                OraCode(16000),
                "ORA-16000: database or pluggable database open for read-only access".to_owned(),
            ));
        }
        self.db.build_dictionary().map_err(|e| match e {
            SimError::Ora(code, message) => SourceError::ora(code, message),
            other => SourceError::Invalid {
                message: other.to_string(),
            },
        })
    }

    fn end_session(&mut self) -> Result<(), SourceError> {
        self.gate(SourceCall::EndSession)?;
        self.session = None;
        Ok(())
    }

    fn mine(
        &mut self,
        query: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        self.gate(SourceCall::Mine)?;
        let Some(session) = self.session.clone() else {
            return Err(ora(
                1306,
                "ORA-01306: dbms_logmnr.start_logmnr() must be invoked before selecting from v$logmnr_contents".into(),
            ));
        };
        if query.inlist_max > 1000 && query.objects.len() > 1000 {
            return Err(ora(
                1795,
                "ORA-01795: maximum number of expressions in a list is 1000".into(),
            ));
        }
        if let Some(Fault::SlowQuery { millis }) = self.faults.front().cloned() {
            self.faults.pop_front();
            if Duration::from_millis(millis) >= query.timeout {
                return Err(SourceError::Timeout {
                    after: query.timeout,
                });
            }
            // under the timeout the query takes its time, as a slow LogMiner query does: a
            // step in progress that a stop request must not wait for
            std::thread::sleep(Duration::from_millis(millis));
        }
        let mid_read = match self.faults.front() {
            Some(
                f @ (Fault::DropConnection { .. }
                | Fault::KillSession { .. }
                | Fault::LogSwitchedWhileRead { .. }),
            ) => Some(f.clone()),
            _ => None,
        };
        if mid_read.is_some() {
            self.faults.pop_front();
        }
        let objects: BTreeSet<(ConId, ObjectId)> = query.objects.iter().copied().collect();
        let excluded: BTreeSet<&str> = query.excluded_users.iter().map(String::as_str).collect();

        // Records wholly before the bound are not rendered: every row of a record shares its
        // RS_ID, so none of them could be returned (LogMiner reads them too, but rendering
        // SQL_REDO is the simulator's cost, not the database's). Only with one thread: RS_IDs
        // of different threads do not compare.
        let single_thread = session
            .logs
            .iter()
            .filter_map(|log| self.db.logs.get(log.index).map(|l| l.thread))
            .collect::<BTreeSet<_>>()
            .len()
            <= 1;
        let skip_below = query
            .from
            .addr()
            .filter(|_| single_thread)
            .map(|addr| addr.rs_id());
        // the records of every thread, in redo order, with MISSING_SCN rows at gaps; rows are
        // rendered only when the query reaches them, as LogMiner makes rows as they are
        // fetched: a query the engine stops early (at a DDL that ends its step) costs what it
        // returned
        let mut per_thread: Vec<(RedoThread, Vec<Pending<'_>>)> = Vec::new();
        let mut failure = None;
        let mut last_seq: Vec<(RedoThread, u32)> = Vec::new();
        for log in &session.logs {
            let Some(db_log) = self.db.logs.get(log.index) else {
                continue;
            };
            if matches!(log.file.location, LogLocation::Online { .. }) && !db_log.online {
                let newer = self
                    .db
                    .logs
                    .iter()
                    .filter(|l| l.thread == db_log.thread && l.group == db_log.group && l.online)
                    .map(|l| l.sequence)
                    .max()
                    .unwrap_or(db_log.sequence + 1);
                failure = Some((
                    per_thread.iter().map(|(_, r)| r.len()).sum::<usize>(),
                    ora(
                        310,
                        format!(
                            "ORA-00310: archived log contains sequence {newer}; sequence {} required\nORA-00334: archived log: '{}'",
                            db_log.sequence,
                            db_log.online_name(&self.db.config.db_name)
                        ),
                    ),
                ));
                break;
            }
            let pending: &mut Vec<Pending<'_>> =
                match per_thread.iter_mut().position(|(t, _)| *t == db_log.thread) {
                    Some(i) => &mut per_thread[i].1,
                    None => {
                        per_thread.push((db_log.thread, Vec::new()));
                        let last = per_thread.len() - 1;
                        &mut per_thread[last].1
                    }
                };
            let prev = last_seq
                .iter()
                .find(|(t, _)| *t == db_log.thread)
                .map(|(_, s)| *s);
            last_seq.retain(|(t, _)| *t != db_log.thread);
            last_seq.push((db_log.thread, db_log.sequence));
            if let Some(prev_seq) = prev
                && db_log.sequence > prev_seq + 1
            {
                let mut gap = MinedRow::new(
                    db_log.first_scn,
                    RsId::new(db_log.sequence, 1, 16),
                    0,
                    Xid::ZERO,
                    Operation::MissingScn,
                );
                gap.status = cdc_core::change::status::HOLE_IN_LOGSTREAM;
                gap.thread = db_log.thread;
                pending.push(Pending::Gap(Box::new(gap)));
            }
            // a log's records are in RS_ID order (written at its growing byte offset)
            let first = skip_below.map_or(0, |bound| {
                db_log
                    .records
                    .partition_point(|placed| placed.rs_id < bound)
            });
            pending.extend(
                db_log
                    .records
                    .get(first..)
                    .unwrap_or_default()
                    .iter()
                    .map(|placed| Pending::Record {
                        placed,
                        thread: db_log.thread,
                    }),
            );
        }
        // LogMiner merges threads by SCN; within a thread the order is the log's
        let merged = merge_threads(per_thread);
        let fail_at = failure.as_ref().map(|(n, _)| *n);
        let mid_read_after = mid_read.as_ref().map(|f| match f {
            Fault::DropConnection { after_rows }
            | Fault::KillSession { after_rows }
            | Fault::LogSwitchedWhileRead { after_rows } => *after_rows,
            _ => u64::MAX,
        });
        let filter = QueryFilter {
            query,
            objects: &objects,
            excluded: &excluded,
            container: self.db.session_container(),
            from_scn: session.redo_dictionary.as_ref().map(|(_, scn)| *scn),
        };
        let mut generic = 0;
        let mut counting = |row: MinedRow| {
            generic += u64::from(row.info.as_deref() == Some(DICTIONARY_MISMATCH_INFO));
            sink(row)
        };
        let (summary, end) = stream(
            &self.db,
            session.redo_dictionary.as_ref().map(|(d, _)| d),
            merged,
            fail_at,
            mid_read_after,
            &filter,
            &mut counting,
        );
        self.mined_rows += summary.rows;
        self.generic_rows += generic;
        self.fetches += summary
            .rows
            .div_ceil(u64::from(query.fetch_size.max(1)))
            .max(1);
        match end {
            StreamEnd::Sink => Ok(summary),
            StreamEnd::MidRead => match &mid_read {
                Some(f) => Err(self.fail_mid_read(f)),
                None => Ok(summary),
            },
            StreamEnd::Exhausted => {
                if let Some(f) = &mid_read {
                    return Err(self.fail_mid_read(f));
                }
                if let Some((_, e)) = failure {
                    return Err(e);
                }
                Ok(summary)
            }
        }
    }

    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        self.gate(SourceCall::ActiveTransactions)?;
        let session_con = self.db.session_container();
        Ok(self
            .db
            .open_transactions()
            .into_iter()
            .map(|(_, s, xid, start_scn)| ActiveTransaction {
                con: self
                    .db
                    .containers
                    .get(s.con)
                    .map(|c| c.con)
                    .unwrap_or_default(),
                xid,
                start_scn,
                session: Some(SessionRef {
                    sid: s.sid,
                    serial: s.serial,
                }),
                username: Some(s.user.clone()),
            })
            // a PDB's GV$TRANSACTION shows its own transactions
            .filter(|t| session_con.is_none_or(|con| t.con == con))
            .collect())
    }

    fn session_exists(&mut self, session: SessionRef) -> Result<bool, SourceError> {
        self.gate(SourceCall::SessionExists)?;
        Ok(self.db.session_alive(session.sid, session.serial))
    }

    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        self.gate(SourceCall::Nls)?;
        Ok(NlsSettings::engine())
    }

    fn reconnect(&mut self) -> Result<(), SourceError> {
        self.disconnected = false;
        self.session = None;
        if let Some(n) = self.restart_pending.take() {
            self.opening_calls = n;
        }
        Ok(())
    }

    fn snapshot_reader(&mut self) -> Result<Box<dyn SnapshotReader>, SourceError> {
        self.gate(SourceCall::SnapshotReader)?;
        Ok(Box::new(SimSnapshotReader::new(
            self.db.versions.share(),
            Arc::clone(&self.snapshot),
            self.db.config.session_pdb.clone(),
        )))
    }
}

impl SimSource {
    fn fail_mid_read(&mut self, fault: &Fault) -> SourceError {
        match fault {
            Fault::DropConnection { .. } => {
                self.disconnected = true;
                self.session = None;
                ora(
                    3113,
                    "ORA-03113: end-of-file on communication channel\nProcess ID: 0\nSession ID: 0 Serial number: 0".into(),
                )
            }
            Fault::KillSession { .. } => {
                self.disconnected = true;
                self.session = None;
                ora(28, "ORA-00028: your session has been killed".into())
            }
            _ => {
                let seq = self
                    .session
                    .as_ref()
                    .and_then(|s| s.logs.last())
                    .map(|l| l.file.sequence)
                    .unwrap_or(1);
                let name = self
                    .session
                    .as_ref()
                    .and_then(|s| s.logs.last())
                    .and_then(|l| l.file.name.clone())
                    .unwrap_or_default();
                let _ = self.db.apply(&DbOp::LogSwitch);
                ora(
                    310,
                    format!(
                        "ORA-00310: archived log contains sequence {}; sequence {seq} required\nORA-00334: archived log: '{name}'",
                        seq + self.db.config.online_groups.max(2)
                    ),
                )
            }
        }
    }
}

/// Merges the threads' rows by SCN, keeping each thread's own order.
fn merge_threads(mut per_thread: Vec<(RedoThread, Vec<Pending<'_>>)>) -> Vec<Pending<'_>> {
    if per_thread.len() <= 1 {
        return per_thread.pop().map(|(_, r)| r).unwrap_or_default();
    }
    let total = per_thread.iter().map(|(_, r)| r.len()).sum();
    let mut out = Vec::with_capacity(total);
    let mut iters: Vec<std::iter::Peekable<std::vec::IntoIter<Pending<'_>>>> = per_thread
        .into_iter()
        .map(|(_, r)| r.into_iter().peekable())
        .collect();
    loop {
        let next = iters
            .iter_mut()
            .enumerate()
            .filter_map(|(i, it)| it.peek().map(|r| (r.scn(), i)))
            .min();
        let Some((_, i)) = next else {
            break;
        };
        if let Some(row) = iters.get_mut(i).and_then(|it| it.next()) {
            out.push(row);
        }
    }
    out
}

/// A query's answer before its rows are made: a record of a log, or the MISSING_SCN row of a
/// gap between two logs of a thread.
enum Pending<'a> {
    Gap(Box<MinedRow>),
    Record {
        placed: &'a super::db::Placed,
        thread: RedoThread,
    },
}

impl Pending<'_> {
    fn scn(&self) -> Scn {
        match self {
            Pending::Gap(row) => row.scn,
            Pending::Record { placed, .. } => placed.record.scn,
        }
    }
}

/// What a query's WHERE clause reads.
struct QueryFilter<'a> {
    query: &'a MiningQuery,
    objects: &'a BTreeSet<(ConId, ObjectId)>,
    excluded: &'a BTreeSet<&'a str>,
    /// The PDB the session is connected to: V$LOGMNR_CONTENTS there returns only its redo.
    container: Option<ConId>,
    /// A redo-dictionary session's STARTSCN: rows below it are not returned.
    from_scn: Option<Scn>,
}

impl QueryFilter<'_> {
    /// Whether the query returns a row.
    fn keeps(&self, row: &MinedRow) -> bool {
        let excluded = self.excluded;
        if self.from_scn.is_some_and(|from| row.scn < from) {
            return false;
        }
        if row.operation != Operation::MissingScn
            && self.container.is_some_and(|con| row.src_con_id != con)
        {
            return false;
        }
        match row.operation {
            Operation::Start | Operation::Commit | Operation::Rollback | Operation::MissingScn => {
                true
            }
            Operation::Ddl => {
                row.seg_owner
                    .as_deref()
                    .is_none_or(|o| !ORACLE_MAINTAINED_OWNERS.contains(&o))
                    && row
                        .info
                        .as_deref()
                        .is_none_or(|i| !i.starts_with("INTERNAL DDL"))
            }
            Operation::SelLobLocator
            | Operation::LobWrite
            | Operation::LobTrim
            | Operation::LobErase
                if !self.query.lob_rows =>
            {
                false
            }
            _ => {
                row.data_obj
                    .is_some_and(|o| self.objects.contains(&(row.src_con_id, o)))
                    && row
                        .username
                        .as_deref()
                        .is_none_or(|u| !excluded.contains(u))
            }
        }
    }
}

/// Why a query's stream of rows ended.
enum StreamEnd {
    /// Every row was returned (a failure found while listing the logs may follow).
    Exhausted,
    /// The caller stopped fetching.
    Sink,
    /// A scripted fault breaks the read after this many rows.
    MidRead,
}

/// Makes and returns the rows of `merged` in order: rows before the query's bound and rows
/// its filter drops are skipped; a record is rendered only when reached.
fn stream(
    db: &SimDatabase,
    dictionary: Option<&RedoDictionary>,
    merged: Vec<Pending<'_>>,
    fail_at: Option<usize>,
    mid_read_after: Option<u64>,
    filter: &QueryFilter<'_>,
    sink: &mut RowSink<'_>,
) -> (MineSummary, StreamEnd) {
    let query = filter.query;
    let mut summary = MineSummary {
        rows: 0,
        last: None,
        stopped_by_sink: false,
    };
    let mut reached = matches!(query.from, RedoBound::Start);
    let mut rows: Vec<MinedRow> = Vec::with_capacity(1);
    for (i, pending) in merged.into_iter().enumerate() {
        if fail_at == Some(i) {
            break;
        }
        match pending {
            Pending::Gap(row) => rows.push(*row),
            Pending::Record { placed, thread } => {
                // a data row the query's filter drops needs no SQL_REDO: a stub with what
                // the filter reads keeps every count and position the same
                match db.filtered_stub(placed, thread, &|con, object, user, lob| {
                    (!lob || query.lob_rows)
                        && filter.objects.contains(&(con, object))
                        && !filter.excluded.contains(user)
                }) {
                    Some(stub) => rows.push(stub),
                    None => db.render(placed, thread, dictionary, &mut rows),
                }
            }
        }
        for row in rows.drain(..) {
            let addr = RedoAddr::new(row.rs_id, row.ssn).ok();
            match addr {
                Some(a) => {
                    if query.from.reached_by(a) {
                        reached = true;
                    }
                    if !query.from.admits(a) {
                        continue;
                    }
                }
                None if !reached => continue,
                None => {}
            }
            if !filter.keeps(&row) {
                continue;
            }
            if mid_read_after.is_some_and(|after| summary.rows >= after) {
                return (summary, StreamEnd::MidRead);
            }
            if let Some(a) = addr {
                summary.last = Some(a);
            }
            summary.rows += 1;
            if sink(row).is_break() {
                summary.stopped_by_sink = true;
                return (summary, StreamEnd::Sink);
            }
        }
    }
    (summary, StreamEnd::Exhausted)
}

/// The log window and query an engine step would use: every listed log, from the first.
pub fn whole_window(logs: &[LogFile]) -> MiningWindow {
    MiningWindow {
        start_scn: logs.first().map(|l| l.first_scn).unwrap_or_default(),
        logs: logs.to_vec(),
        mode: SessionMode::Logs,
        dictionary: DictionarySource::OnlineCatalog,
    }
}

/// A mining query for the given objects, no users excluded, a 10 minute timeout, the default
/// fetch size.
pub fn query_for(from: RedoBound, objects: Vec<(ConId, ObjectId)>) -> MiningQuery {
    MiningQuery {
        from,
        objects,
        excluded_users: Vec::new(),
        inlist_max: 1000,
        timeout: Duration::from_secs(600),
        fetch_size: 10_000,
        lob_rows: false,
    }
}

/// Mines everything currently in the logs (online mode) into a vector, for tests and the dump:
/// the rows of the captured tables, LOB rows included, without `excluded_users`' rows.
pub fn mine_all(
    source: &mut SimSource,
    capture: &TableFilter<'_>,
    excluded_users: &[String],
) -> Result<Vec<MinedRow>, SourceError> {
    mine_all_with(source, capture, |query| {
        query.excluded_users = excluded_users.to_vec();
        query.lob_rows = true;
    })
}

/// [`mine_all`] with the query as `edit` leaves it, from [`query_for`]'s (which asks what the
/// engine asks under `cdc.lob.mode=skip`).
pub fn mine_all_with(
    source: &mut SimSource,
    capture: &TableFilter<'_>,
    edit: impl FnOnce(&mut MiningQuery),
) -> Result<Vec<MinedRow>, SourceError> {
    let logs = source.log_inventory(&LogInventoryQuery {
        from: Scn(0),
        mode: CaptureMode::Online,
        destination: None,
    })?;
    let objects: Vec<(ConId, ObjectId)> = source
        .resolve_objects(capture)?
        .into_iter()
        .map(|o| (o.con, o.object))
        .collect();
    source.start_session(&whole_window(&logs))?;
    let mut query = query_for(RedoBound::Start, objects);
    edit(&mut query);
    let mut rows = Vec::new();
    source.mine(&query, &mut |row| {
        rows.push(row);
        ControlFlow::Continue(())
    })?;
    Ok(rows)
}
