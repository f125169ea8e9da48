//! What a preflight check reads from the database before a first start: the [`Preflight`]
//! trait and its answer, [`PreflightFacts`].
//!
//! ```text
//!   oracle-cdc-admin check ──► S: Preflight ──► PreflightFacts ──► findings (cdc-admin, pure)
//!                               │   each PreflightRead: facts, or Unreadable (ORA-00942/01031)
//!        source::oracle::OracleSource   V$DATABASE, V$THREAD, SESSION_PRIVS/ROLES,
//!                                       USER_TAB_PRIVS, DBA_LOG_GROUPS, DBA_CONSTRAINTS,
//!                                       V$LOG_HISTORY, …
//!        sim::SimSource                 the simulated database, with `cdc.sim.preflight`'s
//!                                       conditions presented on top
//! ```
//!
//! Kept apart from [`RedoSource`](super::RedoSource): the engine never asks these questions,
//! and a source can answer them without a LogMiner session. The facts are what the database
//! says, not a verdict: the rules that judge them (and the SQL that fixes each) live with the
//! check, so they are one pure function tested without a database.
//!
//! # Error handling
//!
//! A read the capture user is refused (ORA-00942, ORA-01031: it lacks SELECT on a view the
//! read needs) is no error: its facts stay unknown and the read is listed in
//! [`PreflightFacts::unreadable`], so the check reports it and goes on. Any other error (a
//! login refused, ORA-01045 among them; a lost session) is returned: the database cannot be
//! asked at all.

use std::fmt;

use cdc_core::ora::OraCode;
use cdc_core::{RedoThread, Scn, TableId};
use serde::{Deserialize, Serialize};

use super::{DatabaseRole, OpenMode, SourceError, TableFilter};

/// A database that can tell a preflight check what it needs to know.
pub trait Preflight {
    /// The facts about the database and the captured tables `filter` selects. Blocking; reads
    /// only, changes nothing. A read the user is refused is in [`PreflightFacts::unreadable`];
    /// an error means the database could not be asked (the login refused, the session lost).
    fn preflight_facts(&mut self, filter: &TableFilter<'_>) -> Result<PreflightFacts, SourceError>;
}

/// `V$DATABASE.LOG_MODE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogMode {
    Archivelog,
    NoArchivelog,
    /// MANUAL (or any other text): not ARCHIVELOG as capture needs it.
    Other(String),
}

impl LogMode {
    /// Reads `V$DATABASE.LOG_MODE`.
    pub fn from_view(text: &str) -> LogMode {
        match text.trim() {
            "ARCHIVELOG" => LogMode::Archivelog,
            "NOARCHIVELOG" => LogMode::NoArchivelog,
            other => LogMode::Other(other.to_owned()),
        }
    }
}

/// Supplemental logging at the database level (`V$DATABASE.SUPPLEMENTAL_LOG_DATA_MIN`, `_PK`,
/// `_ALL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DatabaseSupplemental {
    /// SUPPLEMENTAL_LOG_DATA_MIN is YES (or IMPLICIT): what LogMiner needs at all.
    pub minimal: bool,
    pub primary_key: bool,
    pub all_columns: bool,
}

/// Supplemental log groups of one table (`DBA_LOG_GROUPS.LOG_GROUP_TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableSupplemental {
    /// ALL COLUMN LOGGING.
    pub all_columns: bool,
    /// PRIMARY KEY LOGGING.
    pub primary_key: bool,
}

impl TableSupplemental {
    /// Whether an UPDATE's redo carries enough to identify the row.
    pub fn any(self) -> bool {
        self.all_columns || self.primary_key
    }
}

/// One captured table as the preflight sees it; a fact is `None` when its read was refused
/// ([`PreflightFacts::unreadable`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFacts {
    pub table: TableId,
    /// The table's own log groups; the database level is in [`DatabaseFacts::supplemental`].
    pub supplemental: Option<TableSupplemental>,
    /// A primary key, or a unique key whose columns are all NOT NULL.
    pub usable_key: Option<bool>,
}

/// A privilege the capture user needs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// CREATE SESSION: without it the user cannot log in (ORA-01045).
    CreateSession,
    /// LOGMINING (12c and later).
    Logmining,
    /// SELECT ANY TRANSACTION.
    SelectAnyTransaction,
    /// SELECT on a view the connector or the check reads: a dynamic performance view
    /// (`V$DATABASE`, `GV$TRANSACTION`, …, granted on its `V_$` base) or a dictionary view
    /// (`DBA_CONSTRAINTS`, `CDB_OBJECTS`, …).
    SelectOnView(String),
    /// FLASHBACK on a captured table (FLASHBACK ANY TABLE covers every one): snapshot reads.
    Flashback(TableId),
    /// EXECUTE on DBMS_LOGMNR (EXECUTE_CATALOG_ROLE grants it): every mining session.
    ExecuteDbmsLogmnr,
    /// EXECUTE on DBMS_LOGMNR_D (EXECUTE_CATALOG_ROLE grants it): dictionary builds.
    ExecuteDbmsLogmnrD,
}

/// The dynamic performance views the connector reads in every database
/// (`source/oracle/sql.rs`), each needing SELECT: the database, its threads, archive
/// destinations and logs, the mined rows, and the open transactions with their sessions (at a
/// first start, and for orphan detection).
pub const CAPTURE_VIEWS: &[&str] = &[
    "V$DATABASE",
    "V$THREAD",
    "V$ARCHIVE_DEST_STATUS",
    "V$LOG",
    "V$LOGFILE",
    "V$ARCHIVED_LOG",
    "V$LOGMNR_CONTENTS",
    "GV$TRANSACTION",
    "GV$SESSION",
];

/// The dictionary views the connector reads for the captured tables of a non-CDB: their
/// objects, columns, keys, unique indexes and log groups.
pub const DICTIONARY_VIEWS: &[&str] = &[
    "DBA_OBJECTS",
    "DBA_INDEXES",
    "DBA_IND_COLUMNS",
    "DBA_TAB_COLS",
    "DBA_CONSTRAINTS",
    "DBA_CONS_COLUMNS",
    "DBA_LOG_GROUPS",
];

/// What the connector reads in a CDB instead of [`DICTIONARY_VIEWS`]: the containers, and the
/// `CDB_` views that see every one.
pub const CDB_DICTIONARY_VIEWS: &[&str] = &[
    "V$PDBS",
    "V$CONTAINERS",
    "CDB_OBJECTS",
    "CDB_INDEXES",
    "CDB_IND_COLUMNS",
    "CDB_TAB_COLS",
    "CDB_CONSTRAINTS",
    "CDB_CONS_COLUMNS",
    "CDB_LOG_GROUPS",
];

/// The views the connector reads in a database that is (`is_cdb`) or is not a CDB.
pub fn connector_views(is_cdb: bool) -> impl Iterator<Item = &'static str> {
    let dictionary = if is_cdb {
        CDB_DICTIONARY_VIEWS
    } else {
        DICTIONARY_VIEWS
    };
    CAPTURE_VIEWS.iter().chain(dictionary).copied()
}

/// Whether the connector reads `view` (a check may read more: [`PreflightRead::views`]).
pub fn connector_reads(view: &str, is_cdb: bool) -> bool {
    connector_views(is_cdb).any(|v| v == view)
}

/// The views the connector or a preflight check reads, each once: those a capture user
/// without SELECT ANY DICTIONARY (or SELECT_CATALOG_ROLE) needs a grant on.
pub fn preflight_views(is_cdb: bool) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let read = PreflightRead::ALL
        .iter()
        .flat_map(|r| r.views(is_cdb).iter().copied());
    for view in connector_views(is_cdb).chain(read) {
        if !out.contains(&view) {
            out.push(view);
        }
    }
    out
}

impl Grant {
    /// Reads a privilege as `cdc.sim.preflight`'s `missing-grant:` names it
    /// ([`cdc_core::config::SIM_PREFLIGHT_GRANTS`]): `CREATE SESSION`, `EXECUTE ON DBMS_LOGMNR`,
    /// `SELECT ON VIEW` for a view of [`preflight_views`] (of a CDB or not), …; FLASHBACK ANY
    /// TABLE is a table's flashback, so it has no single [`Grant`] and reads as `None` here.
    pub fn from_config(text: &str) -> Option<Grant> {
        let text = text.trim().to_ascii_uppercase();
        match text.as_str() {
            "CREATE SESSION" => Some(Grant::CreateSession),
            "LOGMINING" => Some(Grant::Logmining),
            "SELECT ANY TRANSACTION" => Some(Grant::SelectAnyTransaction),
            "EXECUTE ON DBMS_LOGMNR" => Some(Grant::ExecuteDbmsLogmnr),
            _ => text
                .strip_prefix("SELECT ON ")
                .filter(|view| {
                    preflight_views(false).contains(view) || preflight_views(true).contains(view)
                })
                .map(|view| Grant::SelectOnView(view.to_owned())),
        }
    }

    /// The GRANT statement that gives it to `user` (a common user's grants in a CDB are for
    /// every container).
    pub fn grant_sql(&self, user: &str, cdb: bool) -> String {
        let what = match self {
            Grant::CreateSession => "CREATE SESSION".to_owned(),
            Grant::Logmining => "LOGMINING".to_owned(),
            Grant::SelectAnyTransaction => "SELECT ANY TRANSACTION".to_owned(),
            // a grant on a V$ synonym is refused (ORA-02030): it goes to the V_$ view
            Grant::SelectOnView(view) => format!("SELECT ON SYS.{}", view.replacen("V$", "V_$", 1)),
            Grant::Flashback(table) => format!("FLASHBACK ON {}.{}", table.owner, table.table),
            Grant::ExecuteDbmsLogmnr => "EXECUTE ON SYS.DBMS_LOGMNR".to_owned(),
            Grant::ExecuteDbmsLogmnrD => "EXECUTE ON SYS.DBMS_LOGMNR_D".to_owned(),
        };
        let container = if cdb { " CONTAINER=ALL" } else { "" };
        format!("GRANT {what} TO {user}{container};")
    }
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Grant::CreateSession => f.write_str("CREATE SESSION"),
            Grant::Logmining => f.write_str("LOGMINING"),
            Grant::SelectAnyTransaction => f.write_str("SELECT ANY TRANSACTION"),
            Grant::SelectOnView(view) => write!(f, "SELECT on {view}"),
            Grant::Flashback(table) => write!(f, "FLASHBACK on {table}"),
            Grant::ExecuteDbmsLogmnr => f.write_str("EXECUTE on DBMS_LOGMNR"),
            Grant::ExecuteDbmsLogmnrD => f.write_str("EXECUTE on DBMS_LOGMNR_D"),
        }
    }
}

/// One read of a preflight check: on Oracle one statement (per captured table for the
/// `Table*` reads), giving one group of facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreflightRead {
    /// Log mode, supplemental logging, role and open mode.
    Database,
    /// The enabled redo threads.
    Threads,
    /// The captured tables: the connector's own object query.
    CapturedTables,
    /// Each captured table's supplemental log groups.
    TableLogGroups,
    /// Each captured table's usable key.
    TableKeys,
    /// Each captured table's column names.
    TableColumns,
    /// The release.
    Version,
    /// The log switches of the last day.
    LogSwitches,
    /// The oldest archived log still available.
    ArchivedLogs,
    /// UNDO_RETENTION.
    UndoRetention,
}

impl PreflightRead {
    pub const ALL: [PreflightRead; 10] = [
        PreflightRead::Database,
        PreflightRead::Threads,
        PreflightRead::CapturedTables,
        PreflightRead::TableLogGroups,
        PreflightRead::TableKeys,
        PreflightRead::TableColumns,
        PreflightRead::Version,
        PreflightRead::LogSwitches,
        PreflightRead::ArchivedLogs,
        PreflightRead::UndoRetention,
    ];

    /// The views its statement reads (`source/oracle/preflight_sql.rs::statements` holds the
    /// statements, and a test that they name these). The per-table reads use the `DBA_`
    /// views in a CDB too: they see the container the session is in.
    pub fn views(self, is_cdb: bool) -> &'static [&'static str] {
        match self {
            PreflightRead::Database => &["V$DATABASE"],
            PreflightRead::Threads => &["V$THREAD"],
            PreflightRead::CapturedTables if is_cdb => {
                &["CDB_OBJECTS", "CDB_INDEXES", "V$CONTAINERS"]
            }
            PreflightRead::CapturedTables => &["DBA_OBJECTS", "DBA_INDEXES"],
            PreflightRead::TableLogGroups => &["DBA_LOG_GROUPS"],
            PreflightRead::TableKeys => &["DBA_CONSTRAINTS", "DBA_CONS_COLUMNS", "DBA_TAB_COLUMNS"],
            PreflightRead::TableColumns => &["DBA_TAB_COLUMNS"],
            PreflightRead::Version => &["V$INSTANCE"],
            PreflightRead::LogSwitches => &["V$LOG_HISTORY"],
            PreflightRead::ArchivedLogs => &["V$ARCHIVED_LOG"],
            PreflightRead::UndoRetention => &["V$PARAMETER"],
        }
    }

    /// What a check cannot judge without it.
    pub fn unchecked(self) -> &'static str {
        match self {
            PreflightRead::Database => {
                "ARCHIVELOG mode, supplemental logging (of the database and the tables), the role and the open mode"
            }
            PreflightRead::Threads => "the number of enabled redo threads",
            PreflightRead::CapturedTables => {
                "the captured tables (their supplemental logging, keys, names and FLASHBACK grants)"
            }
            PreflightRead::TableLogGroups => "the captured tables' supplemental log groups",
            PreflightRead::TableKeys => "the captured tables' keys",
            PreflightRead::TableColumns => "the length of the captured columns' names",
            PreflightRead::Version => "the release",
            PreflightRead::LogSwitches => "the redo switch rate",
            PreflightRead::ArchivedLogs => "the archived logs' reach back to the resume SCN",
            PreflightRead::UndoRetention => "UNDO_RETENTION",
        }
    }
}

/// A read the capture user was refused: its facts are unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unreadable {
    pub read: PreflightRead,
    /// The views its statement reads: SELECT on one of them (at least) is missing.
    pub views: Vec<String>,
    /// The database's answer (`ORA-00942: table or view does not exist`).
    pub error: String,
}

impl Unreadable {
    /// `read`, refused with `error`, when `error` is a refusal: ORA-00942 (a view the user may
    /// not see) or ORA-01031. Any other error says nothing of the grants: `None`, the caller's
    /// to return.
    pub fn of(read: PreflightRead, is_cdb: bool, error: &SourceError) -> Option<Unreadable> {
        let refused = [
            OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST,
            OraCode::INSUFFICIENT_PRIVILEGES,
        ];
        let code = error.ora_code()?;
        // the database's text holds its ORA line already
        let error = match error {
            SourceError::Ora { message, .. } => message.clone(),
            other => other.to_string(),
        };
        refused.contains(&code).then(|| Unreadable {
            read,
            views: read.views(is_cdb).iter().map(|v| (*v).to_owned()).collect(),
            error,
        })
    }
}

/// The reads of one preflight: each runs once, and the first refusal of a read (per-table
/// reads run once per table) is kept while the facts it would have given stay unknown.
#[derive(Debug, Clone, Default)]
pub struct PreflightReads {
    is_cdb: bool,
    unreadable: Vec<Unreadable>,
}

impl PreflightReads {
    pub fn new(is_cdb: bool) -> PreflightReads {
        PreflightReads {
            is_cdb,
            unreadable: Vec::new(),
        }
    }

    /// Runs `read` as `f` over `source`: its answer, or `None` when it is refused (now, or
    /// for an earlier table). Other errors are returned.
    pub fn run<S: ?Sized, T>(
        &mut self,
        source: &mut S,
        read: PreflightRead,
        f: impl FnOnce(&mut S) -> Result<T, SourceError>,
    ) -> Result<Option<T>, SourceError> {
        if self.unreadable.iter().any(|u| u.read == read) {
            return Ok(None);
        }
        match f(source) {
            Ok(value) => Ok(Some(value)),
            Err(e) => match Unreadable::of(read, self.is_cdb, &e) {
                Some(refused) => {
                    self.unreadable.push(refused);
                    Ok(None)
                }
                None => Err(e),
            },
        }
    }

    /// The reads refused, in the order they ran.
    pub fn finish(self) -> Vec<Unreadable> {
        self.unreadable
    }
}

/// The release the database reports (`V$INSTANCE.VERSION`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseVersion {
    /// As the database prints it, e.g. `19.0.0.0.0`.
    pub text: String,
    /// The first number: 19 for 19c, 23 for 23ai.
    pub major: u32,
}

impl DatabaseVersion {
    /// Reads a version text; `None` when it does not start with a number.
    pub fn parse(text: &str) -> Option<DatabaseVersion> {
        let text = text.trim();
        let major = text
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())?;
        Some(DatabaseVersion {
            text: text.to_owned(),
            major,
        })
    }
}

/// Log switches (`V$LOG_HISTORY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LogSwitches {
    pub last_hour: u32,
    /// The busiest clock hour of the last 24.
    pub busiest_hour_last_day: u32,
}

impl LogSwitches {
    /// The rate a check judges: the higher of the two.
    pub fn per_hour(self) -> u32 {
        self.last_hour.max(self.busiest_hour_last_day)
    }
}

/// The oldest archived log still on disk (`V$ARCHIVED_LOG`, not deleted, STATUS A).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OldestArchivedLog {
    pub first_scn: Scn,
    /// FIRST_TIME as the database prints it (`YYYY-MM-DD HH24:MI:SS`), when it has one.
    pub first_time: Option<String>,
}

/// `V$DATABASE`'s answer: log mode, supplemental logging, role and open mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseFacts {
    pub log_mode: LogMode,
    pub supplemental: DatabaseSupplemental,
    pub role: DatabaseRole,
    pub open_mode: OpenMode,
}

/// Everything a preflight check judges, as the database reports it. A fact whose read was
/// refused is `None` (or, for the lists, misses what it would have added), and the read is in
/// [`PreflightFacts::unreadable`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightFacts {
    pub database: Option<DatabaseFacts>,
    /// The captured tables, in the order the database listed them.
    pub tables: Vec<TableFacts>,
    /// The capture user (`USER`).
    pub user: String,
    /// What the capture user lacks of what capture, snapshots, builds and this check need
    /// (SELECT on the views of [`preflight_views`]).
    pub missing_grants: Vec<Grant>,
    pub enabled_threads: Option<Vec<RedoThread>>,
    pub is_cdb: bool,
    pub version: Option<DatabaseVersion>,
    /// Captured owners, tables and columns whose names are over 30 bytes
    /// (`OWNER`, `OWNER.TABLE` or `OWNER.TABLE.COLUMN`).
    pub long_names: Vec<String>,
    pub log_switches: Option<LogSwitches>,
    /// `None` when no archived log is available, or V$ARCHIVED_LOG could not be read.
    pub oldest_archived_log: Option<OldestArchivedLog>,
    /// The UNDO_RETENTION parameter; `None` when it cannot be read.
    pub undo_retention_secs: Option<u64>,
    /// The reads the capture user was refused.
    pub unreadable: Vec<Unreadable>,
}

/// The limit on identifier length before 12.2, and LogMiner's still: longer names are not
/// mined (their rows come back unsupported).
pub const MAX_NAME_BYTES: usize = 30;

/// The names of `table` and its `columns` over [`MAX_NAME_BYTES`], as [`PreflightFacts::long_names`]
/// lists them.
pub fn long_names<'a>(table: &TableId, columns: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out = Vec::new();
    if table.owner.len() > MAX_NAME_BYTES {
        out.push(table.owner.clone());
    }
    if table.table.len() > MAX_NAME_BYTES {
        out.push(format!("{}.{}", table.owner, table.table));
    }
    out.extend(
        columns
            .into_iter()
            .filter(|c| c.len() > MAX_NAME_BYTES)
            .map(|c| format!("{}.{}.{c}", table.owner, table.table)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_their_major_number() {
        let v = DatabaseVersion::parse("19.0.0.0.0").expect("a version");
        assert_eq!((v.text.as_str(), v.major), ("19.0.0.0.0", 19));
        assert_eq!(
            DatabaseVersion::parse(" 23.26.3 ").map(|v| v.major),
            Some(23)
        );
        assert_eq!(
            DatabaseVersion::parse("12.2.0.1.0").map(|v| v.major),
            Some(12)
        );
        assert_eq!(DatabaseVersion::parse("unknown"), None);
    }

    #[test]
    fn log_modes_read_from_the_view() {
        assert_eq!(LogMode::from_view("ARCHIVELOG"), LogMode::Archivelog);
        assert_eq!(LogMode::from_view("NOARCHIVELOG "), LogMode::NoArchivelog);
        assert_eq!(
            LogMode::from_view("MANUAL"),
            LogMode::Other("MANUAL".into())
        );
    }

    #[test]
    fn every_grant_the_simulator_accepts_reads() {
        for text in cdc_core::config::SIM_PREFLIGHT_GRANTS {
            let read = Grant::from_config(text);
            assert_eq!(
                read.is_none(),
                *text == "FLASHBACK ANY TABLE",
                "{text} reads as {read:?}"
            );
        }
        assert_eq!(Grant::from_config("SELECT ON V$SESSION"), None);
        assert_eq!(
            Grant::from_config("select on gv$session"),
            Some(Grant::SelectOnView("GV$SESSION".into()))
        );
    }

    #[test]
    fn the_simulator_can_withhold_every_view_and_privilege_a_check_names() {
        let accepted = |text: String| {
            cdc_core::config::SIM_PREFLIGHT_GRANTS
                .iter()
                .any(|g| g.eq_ignore_ascii_case(&text))
        };
        for view in preflight_views(false)
            .into_iter()
            .chain(preflight_views(true))
        {
            assert!(accepted(format!("SELECT ON {view}")), "SELECT ON {view}");
        }
        for grant in [
            Grant::CreateSession,
            Grant::Logmining,
            Grant::SelectAnyTransaction,
            Grant::ExecuteDbmsLogmnr,
        ] {
            assert!(accepted(grant.to_string().to_ascii_uppercase()), "{grant}");
        }
    }

    #[test]
    fn views_of_a_cdb_and_of_a_non_cdb() {
        assert!(connector_reads("GV$TRANSACTION", false));
        assert!(connector_reads("GV$SESSION", true));
        assert!(
            !connector_reads("V$TRANSACTION", false),
            "GV$ is what it reads"
        );
        assert!(connector_reads("DBA_OBJECTS", false) && !connector_reads("DBA_OBJECTS", true));
        assert!(connector_reads("CDB_OBJECTS", true) && !connector_reads("CDB_OBJECTS", false));
        // the check reads more than the connector: the release, and the table checks' views
        let checked = preflight_views(false);
        assert!(checked.contains(&"V$INSTANCE") && checked.contains(&"DBA_TAB_COLUMNS"));
        assert!(!connector_reads("V$INSTANCE", false));
        // in a CDB the per-table reads are still the DBA_ views (of the session's container)
        assert!(preflight_views(true).contains(&"DBA_LOG_GROUPS"));
        let mut deduped = checked.clone();
        deduped.sort_unstable();
        deduped.dedup();
        assert_eq!(deduped.len(), checked.len());
    }

    #[test]
    fn a_refused_read_is_kept_and_other_errors_are_returned() {
        let mut reads = PreflightReads::new(false);
        let mut calls = 0;
        let refused = |calls: &mut u32| -> Result<u32, SourceError> {
            *calls += 1;
            Err(SourceError::ora(
                OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST,
                "ORA-00942: table or view does not exist",
            ))
        };
        assert_eq!(
            reads
                .run(&mut calls, PreflightRead::TableKeys, refused)
                .expect("a refusal is no error"),
            None
        );
        // the next table's read of the same statement is not run again
        assert_eq!(
            reads
                .run(&mut calls, PreflightRead::TableKeys, refused)
                .expect("no error"),
            None
        );
        assert_eq!(calls, 1);
        assert_eq!(
            reads
                .run(&mut calls, PreflightRead::Version, |_| Ok(19))
                .expect("read"),
            Some(19)
        );
        let privileges = reads.run(&mut calls, PreflightRead::LogSwitches, |_| {
            Err::<(), _>(SourceError::from_driver_message(
                "ORA-00604: error occurred at recursive SQL level 1\nORA-01031: insufficient privileges",
            ))
        });
        assert_eq!(privileges.expect("a refusal"), None);
        let lost = reads.run(&mut calls, PreflightRead::UndoRetention, |_| {
            Err::<(), _>(SourceError::from_driver_message(
                "ORA-03113: end-of-file on communication channel",
            ))
        });
        assert!(lost.is_err(), "a lost session is no refusal");
        let unreadable = reads.finish();
        assert_eq!(
            unreadable
                .iter()
                .map(|u| (u.read, u.views.clone()))
                .collect::<Vec<_>>(),
            vec![
                (
                    PreflightRead::TableKeys,
                    vec![
                        "DBA_CONSTRAINTS".to_owned(),
                        "DBA_CONS_COLUMNS".to_owned(),
                        "DBA_TAB_COLUMNS".to_owned()
                    ]
                ),
                (PreflightRead::LogSwitches, vec!["V$LOG_HISTORY".to_owned()]),
            ]
        );
        // the database's line once, not prefixed with its code again
        assert_eq!(
            unreadable[0].error,
            "ORA-00942: table or view does not exist"
        );
        assert!(
            unreadable[1]
                .error
                .ends_with("ORA-01031: insufficient privileges")
        );
    }

    #[test]
    fn grant_statements_name_the_object_and_the_user() {
        let orders = TableId::new("APP", "ORDERS");
        assert_eq!(
            Grant::Logmining.grant_sql("CDC", false),
            "GRANT LOGMINING TO CDC;"
        );
        assert_eq!(
            Grant::CreateSession.grant_sql("C##CDC", true),
            "GRANT CREATE SESSION TO C##CDC CONTAINER=ALL;"
        );
        assert_eq!(
            Grant::SelectOnView("V$LOGMNR_CONTENTS".into()).grant_sql("C##CDC", true),
            "GRANT SELECT ON SYS.V_$LOGMNR_CONTENTS TO C##CDC CONTAINER=ALL;"
        );
        assert_eq!(
            Grant::SelectOnView("GV$TRANSACTION".into()).grant_sql("CDC", false),
            "GRANT SELECT ON SYS.GV_$TRANSACTION TO CDC;"
        );
        assert_eq!(
            Grant::SelectOnView("DBA_CONSTRAINTS".into()).grant_sql("CDC", false),
            "GRANT SELECT ON SYS.DBA_CONSTRAINTS TO CDC;"
        );
        assert_eq!(
            Grant::Flashback(orders).grant_sql("CDC", false),
            "GRANT FLASHBACK ON APP.ORDERS TO CDC;"
        );
        assert_eq!(
            Grant::ExecuteDbmsLogmnr.grant_sql("CDC", false),
            "GRANT EXECUTE ON SYS.DBMS_LOGMNR TO CDC;"
        );
    }

    #[test]
    fn names_over_30_bytes_are_listed_by_bytes_not_characters() {
        let t = TableId::new("APP", "ORDERS");
        // 15 two-byte characters: 30 bytes, allowed; one more is 32
        let fifteen = "É".repeat(15);
        let sixteen = "É".repeat(16);
        let thirty_one = "C".repeat(31);
        let names = long_names(
            &t,
            [fifteen.as_str(), sixteen.as_str(), thirty_one.as_str()],
        );
        assert_eq!(
            names,
            vec![
                format!("APP.ORDERS.{sixteen}"),
                format!("APP.ORDERS.{thirty_one}")
            ]
        );
        let long = TableId::new("O".repeat(31), "T".repeat(31));
        assert_eq!(long_names(&long, []).len(), 2);
    }
}
