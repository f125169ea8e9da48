//! What a preflight check reads from the database before a first start: the [`Preflight`]
//! trait and its answer, [`PreflightFacts`].
//!
//! ```text
//!   oracle-cdc-admin check ──► S: Preflight ──► PreflightFacts ──► findings (cdc-admin, pure)
//!                               │
//!        source::oracle::OracleSource   V$DATABASE, SESSION_PRIVS/ROLES, USER_TAB_PRIVS,
//!                                       DBA_LOG_GROUPS, DBA_CONSTRAINTS, V$LOG_HISTORY, …
//!        sim::SimSource                 the simulated database, with `cdc.sim.preflight`'s
//!                                       conditions presented on top
//! ```
//!
//! Kept apart from [`RedoSource`](super::RedoSource): the engine never asks these questions,
//! and a source can answer them without a LogMiner session. The facts are what the database
//! says, not a verdict: the rules that judge them (and the SQL that fixes each) live with the
//! check, so they are one pure function tested without a database.

use std::fmt;

use cdc_core::{RedoThread, Scn, TableId};
use serde::{Deserialize, Serialize};

use super::{DatabaseRole, OpenMode, SourceError, TableFilter};

/// A database that can tell a preflight check what it needs to know.
pub trait Preflight {
    /// The facts about the database and the captured tables `filter` selects. Blocking; reads
    /// only, changes nothing.
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

/// One captured table as the preflight sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFacts {
    pub table: TableId,
    /// The table's own log groups; the database level is in [`PreflightFacts::supplemental`].
    pub supplemental: TableSupplemental,
    /// A primary key, or a unique key whose columns are all NOT NULL.
    pub usable_key: bool,
}

/// A privilege the capture user needs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// LOGMINING (12c and later).
    Logmining,
    /// SELECT ANY TRANSACTION.
    SelectAnyTransaction,
    /// SELECT on a dynamic performance view (`V$DATABASE`, …), granted on its `V_$` base.
    SelectOnView(String),
    /// FLASHBACK on a captured table (FLASHBACK ANY TABLE covers every one): snapshot reads.
    Flashback(TableId),
    /// EXECUTE on DBMS_LOGMNR_D (EXECUTE_CATALOG_ROLE grants it): dictionary builds.
    ExecuteDbmsLogmnrD,
}

/// The V$ views the connector reads, each needing SELECT.
pub const CAPTURE_VIEWS: &[&str] = &[
    "V$DATABASE",
    "V$LOG",
    "V$LOGFILE",
    "V$ARCHIVED_LOG",
    "V$LOGMNR_CONTENTS",
    "V$TRANSACTION",
    "V$THREAD",
];

impl Grant {
    /// Reads a privilege as `cdc.sim.preflight`'s `missing-grant:` names it
    /// ([`cdc_core::config::SIM_PREFLIGHT_GRANTS`]); FLASHBACK ANY TABLE is a table's
    /// flashback, so it has no single [`Grant`] and reads as `None` here.
    pub fn from_config(text: &str) -> Option<Grant> {
        let text = text.trim().to_ascii_uppercase();
        match text.as_str() {
            "LOGMINING" => Some(Grant::Logmining),
            "SELECT ANY TRANSACTION" => Some(Grant::SelectAnyTransaction),
            _ => text
                .strip_prefix("SELECT ON ")
                .filter(|view| CAPTURE_VIEWS.contains(view))
                .map(|view| Grant::SelectOnView(view.to_owned())),
        }
    }

    /// The GRANT statement that gives it to `user` (a common user's grants in a CDB are for
    /// every container).
    pub fn grant_sql(&self, user: &str, cdb: bool) -> String {
        let what = match self {
            Grant::Logmining => "LOGMINING".to_owned(),
            Grant::SelectAnyTransaction => "SELECT ANY TRANSACTION".to_owned(),
            // a grant on a V$ synonym is refused (ORA-02030): it goes to the V_$ view
            Grant::SelectOnView(view) => format!("SELECT ON SYS.{}", view.replacen("V$", "V_$", 1)),
            Grant::Flashback(table) => format!("FLASHBACK ON {}.{}", table.owner, table.table),
            Grant::ExecuteDbmsLogmnrD => "EXECUTE ON SYS.DBMS_LOGMNR_D".to_owned(),
        };
        let container = if cdb { " CONTAINER=ALL" } else { "" };
        format!("GRANT {what} TO {user}{container};")
    }
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Grant::Logmining => f.write_str("LOGMINING"),
            Grant::SelectAnyTransaction => f.write_str("SELECT ANY TRANSACTION"),
            Grant::SelectOnView(view) => write!(f, "SELECT on {view}"),
            Grant::Flashback(table) => write!(f, "FLASHBACK on {table}"),
            Grant::ExecuteDbmsLogmnrD => f.write_str("EXECUTE on DBMS_LOGMNR_D"),
        }
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

/// Everything a preflight check judges, as the database reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightFacts {
    pub log_mode: LogMode,
    pub supplemental: DatabaseSupplemental,
    /// The captured tables, in the order the database listed them.
    pub tables: Vec<TableFacts>,
    /// The capture user (`USER`).
    pub user: String,
    /// What the capture user lacks of what capture, snapshots and builds need.
    pub missing_grants: Vec<Grant>,
    pub enabled_threads: Vec<RedoThread>,
    pub role: DatabaseRole,
    pub open_mode: OpenMode,
    pub is_cdb: bool,
    pub version: DatabaseVersion,
    /// Captured owners, tables and columns whose names are over 30 bytes
    /// (`OWNER`, `OWNER.TABLE` or `OWNER.TABLE.COLUMN`).
    pub long_names: Vec<String>,
    pub log_switches: LogSwitches,
    /// `None` when no archived log is available.
    pub oldest_archived_log: Option<OldestArchivedLog>,
    /// The UNDO_RETENTION parameter; `None` when it cannot be read.
    pub undo_retention_secs: Option<u64>,
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
    }

    #[test]
    fn grant_statements_name_the_object_and_the_user() {
        let orders = TableId::new("APP", "ORDERS");
        assert_eq!(
            Grant::Logmining.grant_sql("CDC", false),
            "GRANT LOGMINING TO CDC;"
        );
        assert_eq!(
            Grant::SelectOnView("V$LOGMNR_CONTENTS".into()).grant_sql("C##CDC", true),
            "GRANT SELECT ON SYS.V_$LOGMNR_CONTENTS TO C##CDC CONTAINER=ALL;"
        );
        assert_eq!(
            Grant::Flashback(orders).grant_sql("CDC", false),
            "GRANT FLASHBACK ON APP.ORDERS TO CDC;"
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
