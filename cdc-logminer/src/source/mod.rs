//! The database as the capture engine sees it: the [`RedoSource`] trait.
//!
//! ```text
//!                      +--------------------+   identity, current SCN, log inventory,
//!   CaptureEngine<S>-> | S: RedoSource      |   object ids, layouts, GV$TRANSACTION,
//!   (one thread)       +--------------------+   session existence, NLS
//!                         |              |
//!            source::oracle::OracleSource   sim::SimSource
//!            (ODPI-C via the `oracle` crate,  (the redo simulator: same trait,
//!             feature `oracle`)                same rows, same ORA errors)
//!   configured::ConfiguredSource: either one, as `cdc.source` names it (`from_config`)
//!
//!   start_session(window of whole logs, start SCN)
//!   mine(rows after a redo address, captured objects, DDL, transaction control) --> sink
//!   end_session()
//! ```
//!
//! Every call blocks and runs on the one LogMiner session the source owns; the engine keeps it
//! on its own thread. Errors are typed: an ORA code with its class from `cdc_core::ora`, or a
//! condition that is no ORA error (the client library is missing, the step timed out).

pub mod configured;
pub mod oracle;
pub mod preflight;
pub mod snapshot;

pub use configured::{ConfiguredSource, SourceSetupError, from_config};
pub use snapshot::{
    SnapshotBound, SnapshotOrder, SnapshotQuery, SnapshotReadSummary, SnapshotReader, SnapshotRow,
    SnapshotSink, TableEstimate,
};

use std::fmt;
use std::ops::ControlFlow;
use std::time::Duration;

use cdc_core::ora::{self, OraClass, OraCode};
use cdc_core::{ConId, MinedRow, ObjectId, RedoAddr, RedoThread, Scn, TableId, TableLayout, Xid};
use serde::{Deserialize, Serialize};

/// `V$LOG.NEXT_CHANGE#` of the CURRENT online log from 19c RU 19.5 on: "the highest possible
/// SCN". Earlier releases print 18446744073709551615 (before 19.5) or 281474976710655 (11.2).
pub const CURRENT_LOG_NEXT_SCN: Scn = Scn(9_295_429_630_892_703_743);

/// The database role (`V$DATABASE.DATABASE_ROLE`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DatabaseRole {
    Primary,
    PhysicalStandby,
    LogicalStandby,
    SnapshotStandby,
    Other(String),
}

impl DatabaseRole {
    /// Reads `V$DATABASE.DATABASE_ROLE`.
    pub fn from_view(text: &str) -> DatabaseRole {
        match text.trim() {
            "PRIMARY" => DatabaseRole::Primary,
            "PHYSICAL STANDBY" => DatabaseRole::PhysicalStandby,
            "LOGICAL STANDBY" => DatabaseRole::LogicalStandby,
            "SNAPSHOT STANDBY" => DatabaseRole::SnapshotStandby,
            other => DatabaseRole::Other(other.to_owned()),
        }
    }
}

/// The open mode (`V$DATABASE.OPEN_MODE`, `V$PDBS.OPEN_MODE`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OpenMode {
    ReadWrite,
    ReadOnly,
    ReadOnlyWithApply,
    Mounted,
    Other(String),
}

impl OpenMode {
    /// Reads the OPEN_MODE column.
    pub fn from_view(text: &str) -> OpenMode {
        match text.trim() {
            "READ WRITE" => OpenMode::ReadWrite,
            "READ ONLY" => OpenMode::ReadOnly,
            "READ ONLY WITH APPLY" => OpenMode::ReadOnlyWithApply,
            "MOUNTED" => OpenMode::Mounted,
            other => OpenMode::Other(other.to_owned()),
        }
    }
}

/// A pluggable database as `V$PDBS` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PdbInfo {
    pub con_id: ConId,
    pub name: String,
    pub open_mode: OpenMode,
}

/// Which database this is: what the offset is checked against at start and after every
/// reconnect (CDC-5001 on a mismatch).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseIdentity {
    pub dbid: u64,
    pub name: String,
    /// `V$DATABASE.RESETLOGS_CHANGE#`: the incarnation.
    pub resetlogs_scn: Scn,
    pub role: DatabaseRole,
    pub open_mode: OpenMode,
    /// `V$THREAD` rows with ENABLED other than DISABLED.
    pub enabled_threads: Vec<RedoThread>,
    pub is_cdb: bool,
    /// Every PDB but PDB$SEED, with its open mode.
    pub open_pdbs: Vec<PdbInfo>,
    /// The PDB the session is connected to (`SYS_CONTEXT('USERENV', 'CON_NAME')` when
    /// `CON_ID` is above 1); `None` at the CDB root or in a non-CDB. `cdc.mining.mode=auto`
    /// mines by SCN range there, as a PDB cannot add log files (ORA-65040).
    #[serde(default)]
    pub session_pdb: Option<String>,
    /// `V$ARCHIVE_DEST_STATUS` destinations with STATUS VALID and TYPE LOCAL, lowest DEST_ID
    /// first: the ones whose copies can be mined. None at all stops with CDC-5001.
    #[serde(default)]
    pub valid_archive_destinations: Vec<String>,
    /// How far the database's clock (SYSDATE, the server's time zone) is ahead of UTC, in
    /// minutes: the time of day of `cdc.dictionary.build.time` is the database's.
    #[serde(default)]
    pub utc_offset_minutes: i32,
}

/// `cdc.capture.mode`: which logs the inventory offers (the configuration's own type).
pub use cdc_core::config::CaptureMode;

/// What the engine asks the log inventory for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogInventoryQuery {
    /// Logs whose NEXT_CHANGE# is above this SCN.
    pub from: Scn,
    pub mode: CaptureMode,
    /// `cdc.archive.destination` (e.g. `LOG_ARCHIVE_DEST_1`); `None` = the lowest valid local one.
    pub destination: Option<String>,
}

/// Where a listed log lives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLocation {
    /// An online redo log group (`V$LOG` + `V$LOGFILE`).
    Online { group: u32 },
    /// An archived copy (`V$ARCHIVED_LOG`) at one destination.
    Archived { dest_id: u32, dest_name: String },
}

/// `V$LOG.STATUS` for an online log, `V$ARCHIVED_LOG.STATUS` for an archived one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogStatus {
    /// Online: being written.
    Current,
    /// Online: needed for crash recovery.
    Active,
    /// Online: no longer needed for instance recovery (may or may not be archived).
    Inactive,
    Unused,
    Clearing,
    /// Archived, STATUS A.
    Available,
    /// Archived, STATUS D: deleted.
    Deleted,
    /// Archived, STATUS X: expired.
    Expired,
    /// Archived, STATUS U: unavailable.
    Unavailable,
    Other(String),
}

impl LogStatus {
    /// Reads `V$LOG.STATUS` or `V$ARCHIVED_LOG.STATUS`.
    pub fn from_view(text: &str) -> LogStatus {
        match text.trim() {
            "CURRENT" => LogStatus::Current,
            "ACTIVE" => LogStatus::Active,
            "INACTIVE" => LogStatus::Inactive,
            "UNUSED" => LogStatus::Unused,
            "CLEARING" | "CLEARING_CURRENT" => LogStatus::Clearing,
            "A" => LogStatus::Available,
            "D" => LogStatus::Deleted,
            "X" => LogStatus::Expired,
            "U" => LogStatus::Unavailable,
            other => LogStatus::Other(other.to_owned()),
        }
    }
}

/// One log of the inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogFile {
    pub thread: RedoThread,
    pub sequence: u32,
    pub first_scn: Scn,
    /// [`CURRENT_LOG_NEXT_SCN`] for the CURRENT online log.
    pub next_scn: Scn,
    pub status: LogStatus,
    pub archived: bool,
    /// `DELETED = 'YES'` (archived copies only).
    pub deleted: bool,
    /// The file name; `None` when the catalog has none (cleared before archiving, or deleted by
    /// RMAN).
    pub name: Option<String>,
    pub location: LogLocation,
    /// `V$ARCHIVED_LOG.DICTIONARY_BEGIN = 'YES'`: the log holds the start of a dictionary build
    /// ([`RedoSource::build_dictionary`]). Online logs carry no such column: always false, so a
    /// build is found in the inventory once its logs are archived.
    #[serde(default)]
    pub dictionary_begin: bool,
    /// `V$ARCHIVED_LOG.DICTIONARY_END = 'YES'`: the log holds the end of a build (a build in one
    /// log flags it with both).
    #[serde(default)]
    pub dictionary_end: bool,
    /// `FIRST_TIME` (V$ARCHIVED_LOG, V$LOG): when the log's first change was written, in ms
    /// since the epoch (UTC); `None` when the catalog has none. The redo-retention guard reads
    /// the age of the log holding the resume point from it.
    #[serde(default)]
    pub first_time_ms: Option<u64>,
}

impl LogFile {
    /// True for the log being written.
    pub fn is_current(&self) -> bool {
        self.status == LogStatus::Current
    }

    /// True when the catalog says the copy is gone (DELETED=YES, STATUS D or X).
    pub fn is_purged(&self) -> bool {
        self.deleted || matches!(self.status, LogStatus::Deleted | LogStatus::Expired)
    }
}

/// What a captured object id belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentKind {
    Table,
    Partition(String),
    Subpartition(String),
    /// The top index of an index-organized table (`SYS_IOT_TOP_<n>`), whose id DATA_OBJ# names.
    IotTop(String),
}

/// One object id the mining query asks for: a table, partition or IOT segment in a container.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CapturedObject {
    pub con: ConId,
    pub object: ObjectId,
    pub table: TableId,
    pub segment: SegmentKind,
}

/// How a LogMiner session is given its redo: `cdc.mining.mode` resolved against the
/// session's container (`auto` is `Range` in a PDB, `Logs` elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    /// `DBMS_LOGMNR.ADD_LOGFILE` for every log of the window, then START_LOGMNR.
    #[default]
    Logs,
    /// START_LOGMNR by SCN range alone (STARTSCN, ENDSCN, online catalog): LogMiner finds
    /// the logs itself, which is what a session connected to a PDB can do. A redo dictionary
    /// cannot be added this way, so builds and the replay with one are not available.
    Range,
}

impl SessionMode {
    /// The `cdc.mining.mode` value that names it.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionMode::Logs => "logs",
            SessionMode::Range => "range",
        }
    }
}

/// Where a LogMiner session takes its dictionary from: the dictionary options of START_LOGMNR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DictionarySource {
    /// `DICT_FROM_ONLINE_CATALOG`: the database's dictionary as it is now. Only a table's newest
    /// layout is known, so DML written under an older one (before a later DDL) comes back
    /// STATUS 2 with `"COL n"` names and `HEXTORAW` literals.
    #[default]
    OnlineCatalog,
    /// `DICT_FROM_REDO_LOGS + DDL_DICT_TRACKING`: the dictionary a build wrote into the redo,
    /// carried through the DDL that follows it in the redo. DML comes back with the names and
    /// typed literals of the layout it was written under, for the tables the build knew and
    /// those created after it. Only with [`SessionMode::Logs`]; the window's logs must hold a
    /// whole build (from the log flagged [`LogFile::dictionary_begin`] to the one flagged
    /// [`LogFile::dictionary_end`]) and go on without a missing sequence to the logs to mine:
    /// otherwise START_LOGMNR fails with ORA-01371 (dictionary incomplete: no whole build among
    /// the logs) or ORA-01291 (a sequence missing after the build). Rows below the window's
    /// `start_scn` are not returned (LogMiner reads them only to load the dictionary and track
    /// DDL), so `start_scn` may stay the first SCN of the build's first log, and the query's
    /// redo bound picks the rows of the step.
    RedoLogs,
}

impl DictionarySource {
    /// The START_LOGMNR options that name it.
    pub fn options(self) -> &'static str {
        match self {
            DictionarySource::OnlineCatalog => "DICT_FROM_ONLINE_CATALOG",
            DictionarySource::RedoLogs => "DICT_FROM_REDO_LOGS + DDL_DICT_TRACKING",
        }
    }
}

/// The LogMiner session's redo: a window of whole logs, started at the first SCN of the first.
/// In [`SessionMode::Range`] the logs are not added: they bound the SCN range
/// ([`MiningWindow::end_scn`]), and the inventory they come from still proves the redo
/// continuous and present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MiningWindow {
    pub logs: Vec<LogFile>,
    pub start_scn: Scn,
    #[serde(default)]
    pub mode: SessionMode,
    /// The session's dictionary; [`DictionarySource::RedoLogs`] replays a step with a build
    /// and needs [`SessionMode::Logs`] (a range session with it fails with ORA-01371, as
    /// observed in a PDB).
    #[serde(default)]
    pub dictionary: DictionarySource,
}

impl MiningWindow {
    /// The end of the range a [`SessionMode::Range`] session is started with: NEXT_CHANGE# of
    /// the window's newest log, which for the CURRENT log is V$LOG's "highest possible SCN"
    /// (an end beyond the current SCN is accepted). A lower end would drop rows that the
    /// redo-address cursor has not passed yet: rows of private strands reach the log late
    /// with older SCNs, so rows above an SCN bound can sit before rows below it.
    pub fn end_scn(&self) -> Scn {
        self.logs
            .iter()
            .map(|l| l.next_scn)
            .max()
            .unwrap_or(self.start_scn)
    }
}

/// A LogMiner dictionary written into the redo by [`RedoSource::build_dictionary`]
/// (`DBMS_LOGMNR_D.BUILD(OPTIONS => DBMS_LOGMNR_D.STORE_IN_REDO_LOGS)`).
///
/// The build's redo lies between `start_scn` and `end_scn` (V$DATABASE.CURRENT_SCN read just
/// before and just after the call), in the current log of the moment or, when it does not fit,
/// in the logs after it. BUILD does not switch logs: its logs are flagged
/// ([`LogFile::dictionary_begin`], [`LogFile::dictionary_end`]) in V$ARCHIVED_LOG once they are
/// archived, and [`whole_builds`] finds them in an inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DictionaryBuild {
    /// The SCN before the build: its dictionary is the database's as of this SCN (no DDL can
    /// run while a build writes).
    pub start_scn: Scn,
    /// The SCN after the build: its last redo is at or below it.
    pub end_scn: Scn,
}

impl DictionaryBuild {
    /// Whether `log` can hold redo of this build: its SCN range meets the build's.
    pub fn written_in(&self, log: &LogFile) -> bool {
        log.first_scn <= self.end_scn && self.start_scn < log.next_scn
    }

    /// Of the [`whole_builds`] of `logs`, the one this build wrote: the run whose first log
    /// (flagged DICTIONARY_BEGIN) can hold its redo. `None` while its logs are not all listed
    /// (not archived yet, or a sequence missing).
    pub fn logs_in(&self, logs: &[LogFile]) -> Option<std::ops::Range<usize>> {
        whole_builds(logs)
            .into_iter()
            .find(|run| logs.get(run.start).is_some_and(|l| self.written_in(l)))
    }
}

/// The dictionary builds whose logs `logs` (an inventory: per thread, in sequence order) lists
/// whole, oldest first, as index ranges into `logs`: from a log flagged DICTIONARY_BEGIN to the
/// first log of the same thread at or after it flagged DICTIONARY_END, with no sequence missing
/// between. A log flagged both is taken as a whole build in one log (V$ARCHIVED_LOG cannot tell
/// it from the end of one build and the start of the next; ORA-01371 at START_LOGMNR says so).
/// Purged copies (`is_purged`) are listed like any other; a window with one fails as a purged
/// log does. A redo-dictionary window is such a run followed by every log up to the step.
pub fn whole_builds(logs: &[LogFile]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    for (begin, first) in logs.iter().enumerate().filter(|(_, l)| l.dictionary_begin) {
        let mut previous = first;
        for (end, log) in logs.iter().enumerate().skip(begin) {
            if log.thread != first.thread {
                continue;
            }
            if end > begin && log.sequence != previous.sequence + 1 {
                break;
            }
            if log.dictionary_end {
                out.push(begin..end + 1);
                break;
            }
            previous = log;
        }
    }
    out
}

/// The lower bound of a mining query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedoBound {
    /// Every row of the window.
    Start,
    /// Rows at or after this address.
    AtOrAfter(RedoAddr),
    /// Rows after this address (the cursor of the last applied row).
    After(RedoAddr),
}

impl RedoBound {
    /// Whether a row at `addr` lies within the bound.
    #[inline]
    pub fn admits(self, addr: RedoAddr) -> bool {
        match self {
            RedoBound::Start => true,
            RedoBound::AtOrAfter(bound) => addr >= bound,
            RedoBound::After(bound) => addr > bound,
        }
    }

    /// Whether a row at `addr` is the bound itself or lies past it, i.e. the read has reached
    /// the part of the redo the query asks for. Rows with the all-zero RS_ID (no address) are
    /// delivered only once the read has reached it.
    #[inline]
    pub fn reached_by(self, addr: RedoAddr) -> bool {
        match self {
            RedoBound::Start => true,
            RedoBound::AtOrAfter(bound) | RedoBound::After(bound) => addr >= bound,
        }
    }

    /// The address the bound names, if any.
    pub fn addr(self) -> Option<RedoAddr> {
        match self {
            RedoBound::Start => None,
            RedoBound::AtOrAfter(a) | RedoBound::After(a) => Some(a),
        }
    }
}

/// The mining query of one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MiningQuery {
    pub from: RedoBound,
    /// The captured (container, DATA_OBJ#) pairs; DML of other objects is filtered out in the
    /// database.
    pub objects: Vec<(ConId, ObjectId)>,
    /// `cdc.users.exclude`: their DML and DDL rows are filtered out in the query; transaction
    /// control rows (START, COMMIT, ROLLBACK) are kept, as the filter cannot see whose they are.
    pub excluded_users: Vec<String>,
    /// `cdc.mining.inlist.max`: ids per IN list (Oracle allows at most 1000, ORA-01795).
    pub inlist_max: usize,
    /// `cdc.mining.query.timeout.ms`: the query is cancelled after this long.
    pub timeout: Duration,
    /// `cdc.mining.fetch.size`: rows fetched per round trip to the database.
    pub fetch_size: u32,
    /// Also the LOB rows (OPERATION_CODE 9, 10, 11, 29) of the captured objects; under
    /// `cdc.lob.mode=skip` the engine does not ask for them.
    pub lob_rows: bool,
}

/// How a mining query ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MineSummary {
    /// Rows handed to the sink.
    pub rows: u64,
    /// The address of the last row with an address handed to the sink.
    pub last: Option<RedoAddr>,
    /// The sink asked to stop before the end of the window.
    pub stopped_by_sink: bool,
}

/// A session as `V$SESSION` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SessionRef {
    pub sid: u32,
    pub serial: u32,
}

/// One row of the GV$TRANSACTION snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActiveTransaction {
    pub con: ConId,
    pub xid: Xid,
    pub start_scn: Scn,
    pub session: Option<SessionRef>,
    pub username: Option<String>,
}

/// The session's NLS settings the decoder's literal formats depend on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NlsSettings {
    pub date_format: String,
    pub timestamp_format: String,
    pub timestamp_tz_format: String,
    pub numeric_characters: String,
    /// The database character set (`NLS_DATABASE_PARAMETERS.NLS_CHARACTERSET`): what the
    /// internal form of CHAR and VARCHAR2 values is stored in.
    #[serde(default = "default_character_set")]
    pub character_set: String,
    /// The national character set (`NLS_NCHAR_CHARACTERSET`), of NCHAR and NVARCHAR2 values.
    #[serde(default = "default_national_character_set")]
    pub national_character_set: String,
}

fn default_character_set() -> String {
    "AL32UTF8".to_owned()
}

fn default_national_character_set() -> String {
    "AL16UTF16".to_owned()
}

impl NlsSettings {
    /// The formats the engine sets at session start (and the only ones the decoder reads).
    pub fn engine() -> NlsSettings {
        NlsSettings {
            date_format: "SYYYY-MM-DD HH24:MI:SS".to_owned(),
            timestamp_format: "SYYYY-MM-DD HH24:MI:SS.FF9".to_owned(),
            timestamp_tz_format: "SYYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM".to_owned(),
            numeric_characters: ".,".to_owned(),
            character_set: default_character_set(),
            national_character_set: default_national_character_set(),
        }
    }
}

/// Owners whose DDL the mining query leaves out (Oracle-maintained schemas).
pub const ORACLE_MAINTAINED_OWNERS: &[&str] = &[
    "SYS",
    "SYSTEM",
    "XDB",
    "MDSYS",
    "CTXSYS",
    "ORDSYS",
    "OUTLN",
    "DBSNMP",
    "WMSYS",
    "LBACSYS",
    "GSMADMIN_INTERNAL",
    "AUDSYS",
    "DVSYS",
    "OJVMSYS",
    "APPQOSSYS",
];

/// How to tell the operator to install Oracle Instant Client.
pub const INSTANT_CLIENT_HELP: &str = "install Oracle Instant Client (Basic or Basic Light, 19c \
or later) and make its directory visible to the dynamic loader (LD_LIBRARY_PATH, or ldconfig \
with /etc/ld.so.conf.d/oracle-instantclient.conf); see \
https://www.oracle.com/database/technologies/instant-client.html";

/// An error of a [`RedoSource`] call.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The database answered with an ORA error. `message` is the driver's text, with every
    /// ORA line.
    #[error("{code}: {message}")]
    Ora { code: OraCode, message: String },
    /// ODPI-C could not load the Oracle client library (DPI-1047).
    #[error(
        "DPI-1047: the Oracle client library cannot be loaded, so no connection to Oracle is possible; {help}. Driver message: {message}"
    )]
    ClientLibraryMissing { message: String, help: &'static str },
    /// The mining query ran longer than its timeout and was cancelled (ORA-01013 on the server).
    #[error("the mining query was cancelled after {after:?} (cdc.mining.query.timeout.ms)")]
    Timeout { after: Duration },
    /// A driver error with no ORA code (DPI-nnnn, OCI, a type conversion).
    #[error("driver error: {message}")]
    Driver { message: String },
    /// The source was asked for something it cannot do in its state (e.g. an invalid query).
    #[error("{message}")]
    Invalid { message: String },
}

impl SourceError {
    /// An ORA error from its code and the database's text.
    pub fn ora(code: OraCode, text: impl Into<String>) -> SourceError {
        let text = text.into();
        let message = if text.starts_with("ORA-") {
            text
        } else {
            format!("{code}: {text}")
        };
        SourceError::Ora { code, message }
    }

    /// Reads a driver message: an ORA code (looking through ORA-00604/ORA-06512 wrappers), the
    /// missing client library (DPI-1047), or a plain driver error.
    pub fn from_driver_message(message: &str) -> SourceError {
        if message.contains("DPI-1047") {
            return SourceError::ClientLibraryMissing {
                message: message.trim().to_owned(),
                help: INSTANT_CLIENT_HELP,
            };
        }
        match ora::classify_message(message, &[]) {
            Some((code, _)) => SourceError::Ora {
                code,
                message: message.trim().to_owned(),
            },
            None => SourceError::Driver {
                message: message.trim().to_owned(),
            },
        }
    }

    /// The ORA code, when the database answered with one.
    pub fn ora_code(&self) -> Option<OraCode> {
        match self {
            SourceError::Ora { code, .. } => Some(*code),
            SourceError::Timeout { .. } => Some(OraCode::USER_REQUESTED_CANCEL),
            _ => None,
        }
    }

    /// Whether this is the error of a dictionary build the capture user may not run:
    /// ORA-06550 with PLS-00201 naming DBMS_LOGMNR_D (without EXECUTE on the package PL/SQL
    /// cannot resolve its name, so the block does not compile), or ORA-01031 (insufficient
    /// privileges). Only meaningful for the error of [`RedoSource::build_dictionary`]: the
    /// spec's answer is to disable builds, not to stop (CDC-5002 is for the other calls).
    pub fn is_missing_build_grant(&self) -> bool {
        match self {
            SourceError::Ora { code, message } => {
                *code == OraCode::INSUFFICIENT_PRIVILEGES
                    || (*code == OraCode::PLSQL_COMPILATION_ERROR
                        && message.contains("PLS-00201")
                        && message.to_ascii_uppercase().contains("DBMS_LOGMNR_D"))
            }
            _ => false,
        }
    }

    /// What the engine does with it, through `cdc_core::ora`'s one table. A timeout is the
    /// engine's own cancel ([`OraClass::QueryCancelled`]); a missing client library or a plain
    /// driver error is not retried ([`OraClass::Unclassified`]).
    pub fn class(&self, extra_transient: &[OraCode]) -> OraClass {
        match self {
            SourceError::Ora { code, .. } => ora::classify(*code, extra_transient),
            SourceError::Timeout { .. } => OraClass::QueryCancelled,
            SourceError::ClientLibraryMissing { .. }
            | SourceError::Driver { .. }
            | SourceError::Invalid { .. } => OraClass::Unclassified,
        }
    }
}

/// The rows of a mining query go to a sink, one at a time, in redo order; returning
/// `ControlFlow::Break` stops the query early.
pub type RowSink<'a> = dyn FnMut(MinedRow) -> ControlFlow<()> + 'a;

/// Which tables to capture: a predicate over `PDB.OWNER.TABLE` (`OWNER.TABLE` in a non-CDB),
/// i.e. `cdc.tables.include` minus `cdc.tables.exclude`.
pub type TableFilter<'a> = dyn Fn(&TableId) -> bool + 'a;

/// The database as the capture engine sees it. Blocking, one session, typed results.
pub trait RedoSource: Send + fmt::Debug {
    /// DBID, RESETLOGS, role, open mode, enabled threads, CDB and PDBs.
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError>;

    /// `V$DATABASE.CURRENT_SCN`.
    fn current_scn(&mut self) -> Result<Scn, SourceError>;

    /// The logs with NEXT_CHANGE# above `query.from`, per enabled thread, ordered by thread and
    /// sequence: archived copies at one destination, plus (online mode) the online logs of the
    /// sequences not archived there. Deleted copies are listed with `deleted` set, so a purge
    /// is seen as such; a sequence with no row at all is a gap. On a physical standby only the
    /// copies already applied (`V$ARCHIVED_LOG.APPLIED = 'YES'`) are listed: mining stays at
    /// or below the applied SCN.
    fn log_inventory(&mut self, query: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError>;

    /// The object ids, per container, of the tables `filter` captures, including partitions,
    /// subpartitions and IOT top indexes.
    fn resolve_objects(
        &mut self,
        filter: &TableFilter<'_>,
    ) -> Result<Vec<CapturedObject>, SourceError>;

    /// The current layouts of `tables`, from the dictionary; tables that do not exist are left
    /// out.
    fn table_layouts(&mut self, tables: &[TableId]) -> Result<Vec<TableLayout>, SourceError>;

    /// For each of `tables`, the seconds from the time `scn` was current (SCN_TO_TIMESTAMP) to
    /// the table's last DDL (DBA_OBJECTS.LAST_DDL_TIME); negative when the DDL came first. A
    /// table the database cannot say this of (an SCN older than its SCN-to-time map, a table
    /// it does not list) is left out. Asked at start, for every captured table (whether its
    /// layout now is the one of the resume point, and CDC-6003), and at a DDL row for its
    /// table (whether the layout read then is the one that DDL made).
    fn last_ddl_after(
        &mut self,
        tables: &[TableId],
        scn: Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError>;

    /// Starts (or replaces) the LogMiner session over a window of whole logs: adding them
    /// ([`SessionMode::Logs`]) or by their SCN range ([`SessionMode::Range`]), with the
    /// window's dictionary ([`DictionarySource`]).
    fn start_session(&mut self, window: &MiningWindow) -> Result<(), SourceError>;

    /// Writes the LogMiner dictionary into the redo
    /// (`DBMS_LOGMNR_D.BUILD(OPTIONS => DBMS_LOGMNR_D.STORE_IN_REDO_LOGS)`) and says where
    /// ([`DictionaryBuild`]). It does not touch the LogMiner session; it may take long (the
    /// caller measures it). Works in a PDB too. Without EXECUTE on DBMS_LOGMNR_D (granted
    /// through EXECUTE_CATALOG_ROLE) it fails with an error for which
    /// [`SourceError::is_missing_build_grant`] is true; without ARCHIVELOG mode with ORA-01325.
    fn build_dictionary(&mut self) -> Result<DictionaryBuild, SourceError>;

    /// Ends the LogMiner session; ending none is no error.
    fn end_session(&mut self) -> Result<(), SourceError>;

    /// The mining query: rows of the session's window within `query.from` (rows with the
    /// all-zero RS_ID once the read has reached the bound), only DML of the captured objects,
    /// DDL, transaction control and MISSING_SCN rows, excluded users' DML filtered, in redo order.
    fn mine(
        &mut self,
        query: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError>;

    /// A GV$TRANSACTION snapshot.
    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError>;

    /// Whether a session with this SID and SERIAL# still exists (GV$SESSION).
    fn session_exists(&mut self, session: SessionRef) -> Result<bool, SourceError>;

    /// The NLS settings of the mining session.
    fn nls(&mut self) -> Result<NlsSettings, SourceError>;

    /// Drops the connection (and its LogMiner session) and opens a new one.
    fn reconnect(&mut self) -> Result<(), SourceError>;

    /// A new read-only session for snapshot reads (flashback queries by key or ROWID range),
    /// apart from the LogMiner session, so a batch's chunks can be read on other threads.
    fn snapshot_reader(&mut self) -> Result<Box<dyn SnapshotReader>, SourceError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_messages_are_typed() {
        let e = SourceError::from_driver_message(
            "DPI-1047: Cannot locate a 64-bit Oracle Client library: \"libclntsh.so: cannot open shared object file\"",
        );
        assert!(matches!(e, SourceError::ClientLibraryMissing { .. }));
        assert!(e.to_string().contains("DPI-1047"));
        assert!(e.to_string().contains("Instant Client"));
        let e = SourceError::from_driver_message(
            "ORA-00604: error occurred at recursive SQL level 1\nORA-01031: insufficient privileges",
        );
        assert_eq!(e.ora_code(), Some(OraCode::INSUFFICIENT_PRIVILEGES));
        assert_eq!(e.class(&[]), OraClass::Privilege);
        let e = SourceError::from_driver_message("ORA-03113: end-of-file on communication channel");
        assert_eq!(e.class(&[]), OraClass::Transient);
        let e = SourceError::from_driver_message("DPI-1010: not connected");
        assert!(matches!(e, SourceError::Driver { .. }));
        assert_eq!(
            SourceError::Timeout {
                after: Duration::from_secs(1)
            }
            .class(&[]),
            OraClass::QueryCancelled
        );
    }

    #[test]
    fn bounds() {
        let a = RedoAddr::new(cdc_core::RsId::new(1, 2, 16), 3).unwrap();
        let b = RedoAddr::new(cdc_core::RsId::new(1, 2, 16), 4).unwrap();
        assert!(RedoBound::After(a).admits(b));
        assert!(!RedoBound::After(a).admits(a));
        assert!(RedoBound::AtOrAfter(a).admits(a));
        assert!(RedoBound::After(a).reached_by(a));
        assert!(!RedoBound::After(b).reached_by(a));
    }

    #[test]
    fn view_texts() {
        assert_eq!(LogStatus::from_view("CURRENT"), LogStatus::Current);
        assert_eq!(LogStatus::from_view("D"), LogStatus::Deleted);
        assert_eq!(
            DatabaseRole::from_view("PHYSICAL STANDBY"),
            DatabaseRole::PhysicalStandby
        );
        assert_eq!(
            OpenMode::from_view("READ ONLY WITH APPLY"),
            OpenMode::ReadOnlyWithApply
        );
    }
}
