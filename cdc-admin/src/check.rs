//! `oracle-cdc-admin check`: is this database ready for a first start?
//!
//! ```text
//!   CdcConfig ──from_config──► source (Oracle, or the simulator) ──Preflight──► PreflightFacts
//!                                                                                   │
//!   resume SCN (optional) ──────────────────────► findings (pure) ◄──── CheckContext (config)
//!                                                     │
//!                                    text or JSON, exit 0 ready / 1 blocking / 2 warnings
//! ```
//!
//! Each [`Finding`] has a stable id, a severity, one line of what is wrong and, where SQL fixes
//! it, the statement. The rules are [`findings`], a function of the facts and the
//! configuration, so every edge is tested without a database.
//!
//! # Error handling
//!
//! Nothing is retried. A read of the check's own that the capture user is refused (ORA-00942,
//! ORA-01031) is a blocking finding, `unreadable`, naming the views and the GRANT that lets it
//! read them; the other checks go on. A login refused for lack of CREATE SESSION (ORA-01045)
//! is the finding `grant-create-session`, the only one then. Anything else (no connection, a
//! wrong password, a session lost) is a [`CheckError`]: the check failed, and its text carries
//! the CDC code with its action and runbook, the driver's message, and never the password.

use std::fmt::Write as _;

use cdc_core::config::{CaptureMode, CdcConfig, SnapshotMode, SourceKind};
use cdc_core::ora::OraCode;
use cdc_core::{CdcError, Scn, TableId};
use cdc_logminer::engine::source_stop;
use cdc_logminer::source::preflight::{
    Grant, LogMode, Preflight, PreflightFacts, Unreadable, connector_reads,
};
use cdc_logminer::source::{DatabaseRole, OpenMode, SourceError, SourceSetupError};
use serde::Serialize;

/// Log switches an hour above which redo is too busy for its logs' size.
pub const MAX_SWITCHES_PER_HOUR: u32 = 6;

/// The UNDO_RETENTION under which a snapshot's flashback reads are likely to fail (ORA-01555).
pub const MIN_UNDO_RETENTION_SECS: u64 = 120;

/// The oldest release the connector supports.
pub const MIN_MAJOR_VERSION: u32 = 19;

/// How much a finding stands in the way of a start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The connector stops (or cannot capture correctly) until it is fixed.
    Blocking,
    /// The connector runs, with a risk or a cost the operator should know of.
    Warning,
}

impl Severity {
    fn label(self) -> &'static str {
        match self {
            Severity::Blocking => "BLOCKING",
            Severity::Warning => "WARNING",
        }
    }
}

/// One thing the database needs before a start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable, for scripts: `archivelog`, `supplemental-minimal`, `grant-logmining`, …
    pub id: &'static str,
    pub severity: Severity,
    pub message: String,
    /// The statement that fixes it, when SQL does.
    pub fix_sql: Option<String>,
}

/// What of the configuration the rules depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckContext {
    pub capture_mode: CaptureMode,
    /// `cdc.snapshot.mode` is not `none`: flashback reads will run.
    pub snapshots: bool,
    /// `cdc.dictionary.build.interval.ms` is not 0: the connector runs DBMS_LOGMNR_D.BUILD.
    pub dictionary_builds: bool,
    /// The SCN a connector would resume from, when checking the archive's reach.
    pub resume_scn: Option<Scn>,
    /// Captured tables given a key by `cdc.key.columns`: no key of their own is needed.
    pub configured_keys: Vec<TableId>,
}

impl CheckContext {
    /// The context of `config`; `facts` name the captured tables `cdc.key.columns` may key.
    pub fn from_config(
        config: &CdcConfig,
        facts: &PreflightFacts,
        resume_scn: Option<Scn>,
    ) -> CheckContext {
        CheckContext {
            capture_mode: config.capture.mode,
            snapshots: config.snapshot.mode != SnapshotMode::None,
            dictionary_builds: config.dictionary.build_interval.is_some(),
            resume_scn,
            configured_keys: facts
                .tables
                .iter()
                .filter(|t| {
                    config
                        .keys
                        .columns
                        .get(t.table.pdb.as_deref(), &t.table.owner, &t.table.table)
                        .is_some()
                })
                .map(|t| t.table.clone())
                .collect(),
        }
    }
}

/// `OWNER.TABLE`, run in its PDB when it has one.
fn in_container(table: &TableId, sql: String) -> String {
    match &table.pdb {
        Some(pdb) => format!("ALTER SESSION SET CONTAINER = {pdb}; {sql}"),
        None => sql,
    }
}

/// V$DATABASE.DATABASE_ROLE as the database prints it.
fn role_text(role: &DatabaseRole) -> &str {
    match role {
        DatabaseRole::Primary => "PRIMARY",
        DatabaseRole::PhysicalStandby => "PHYSICAL STANDBY",
        DatabaseRole::LogicalStandby => "LOGICAL STANDBY",
        DatabaseRole::SnapshotStandby => "SNAPSHOT STANDBY",
        DatabaseRole::Other(text) => text,
    }
}

/// V$DATABASE.OPEN_MODE as the database prints it.
fn open_mode_text(mode: &OpenMode) -> &str {
    match mode {
        OpenMode::ReadWrite => "READ WRITE",
        OpenMode::ReadOnly => "READ ONLY",
        OpenMode::ReadOnlyWithApply => "READ ONLY WITH APPLY",
        OpenMode::Mounted => "MOUNTED",
        OpenMode::Other(text) => text,
    }
}

fn finding(id: &'static str, severity: Severity, message: String, fix: Option<String>) -> Finding {
    Finding {
        id,
        severity,
        message,
        fix_sql: fix,
    }
}

/// Why the connector needs a view.
fn view_use(view: &str) -> &'static str {
    match view {
        "GV$TRANSACTION" | "GV$SESSION" => {
            "the connector reads it for the transactions open at a first start and for orphan detection"
        }
        "V$LOGMNR_CONTENTS" => "the connector mines the redo through it",
        _ if view.starts_with("DBA_") || view.starts_with("CDB_") => {
            "the connector reads the captured tables' objects, columns, keys and log groups from it"
        }
        _ => "the connector reads it",
    }
}

/// The views of `unreadable` the capture user lacks SELECT on, as far as its grants tell;
/// all of them when its grants tell of none (a grant through a role it cannot see).
fn refused_views<'a>(unreadable: &'a Unreadable, facts: &PreflightFacts) -> Vec<&'a str> {
    let lacked: Vec<&str> = unreadable
        .views
        .iter()
        .map(String::as_str)
        .filter(|view| {
            facts
                .missing_grants
                .iter()
                .any(|g| matches!(g, Grant::SelectOnView(v) if v == view))
        })
        .collect();
    if lacked.is_empty() {
        unreadable.views.iter().map(String::as_str).collect()
    } else {
        lacked
    }
}

/// A read of the check's own the capture user was refused.
fn unreadable_finding(unreadable: &Unreadable, facts: &PreflightFacts) -> Finding {
    let views = refused_views(unreadable, facts);
    // the line of the refusal, not a wrapper's (ORA-00604 at recursive SQL)
    let error = unreadable
        .error
        .lines()
        .find(|line| line.contains("ORA-00942") || line.contains("ORA-01031"))
        .or_else(|| unreadable.error.lines().next())
        .unwrap_or_default()
        .trim();
    finding(
        "unreadable",
        Severity::Blocking,
        format!(
            "the check could not read {} ({error}): {} left unchecked; capture user {} needs SELECT on it",
            views.join(" or "),
            unreadable.read.unchecked(),
            facts.user
        ),
        Some(
            views
                .iter()
                .map(|view| {
                    Grant::SelectOnView((*view).to_owned()).grant_sql(&facts.user, facts.is_cdb)
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
    )
}

/// The rules of a preflight check, blocking findings first.
pub fn findings(facts: &PreflightFacts, context: &CheckContext) -> Vec<Finding> {
    use Severity::{Blocking, Warning};
    let mut out = Vec::new();

    if let Some(database) = &facts.database
        && database.log_mode != LogMode::Archivelog
    {
        out.push(finding(
            "archivelog",
            Blocking,
            format!(
                "the database is not in ARCHIVELOG mode (LOG_MODE {}): redo is overwritten before it is mined",
                match &database.log_mode {
                    LogMode::NoArchivelog => "NOARCHIVELOG",
                    LogMode::Other(text) => text.as_str(),
                    LogMode::Archivelog => "ARCHIVELOG",
                }
            ),
            Some(
                "SHUTDOWN IMMEDIATE; STARTUP MOUNT; ALTER DATABASE ARCHIVELOG; ALTER DATABASE OPEN;"
                    .to_owned(),
            ),
        ));
    }

    if facts
        .database
        .as_ref()
        .is_some_and(|d| !d.supplemental.minimal)
    {
        out.push(finding(
            "supplemental-minimal",
            Blocking,
            "minimal supplemental logging is off (SUPPLEMENTAL_LOG_DATA_MIN NO): LogMiner cannot \
             rebuild row changes"
                .to_owned(),
            Some("ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;".to_owned()),
        ));
    }
    // unknown without V$DATABASE: the database level may cover every table
    let database_covers = facts
        .database
        .as_ref()
        .is_none_or(|d| d.supplemental.all_columns || d.supplemental.primary_key);
    for table in facts
        .tables
        .iter()
        .filter(|t| t.supplemental.is_some_and(|s| !s.any()))
    {
        if database_covers {
            continue;
        }
        out.push(finding(
            "supplemental-table",
            Blocking,
            format!(
                "captured table {} has no supplemental log group: its updates and deletes do not carry the row's key",
                table.table
            ),
            Some(in_container(
                &table.table,
                format!(
                    "ALTER TABLE {}.{} ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;",
                    table.table.owner, table.table.table
                ),
            )),
        ));
    }

    // a view the check could not read is its own finding, with the same GRANT
    let unreadable_views: Vec<&str> = facts
        .unreadable
        .iter()
        .flat_map(|u| refused_views(u, facts))
        .collect();
    for grant in &facts.missing_grants {
        let (id, severity, why) = match grant {
            Grant::CreateSession => (
                "grant-create-session",
                Blocking,
                "the connector cannot log in without it (ORA-01045)",
            ),
            Grant::Logmining => ("grant-logmining", Blocking, "LogMiner sessions need it"),
            Grant::SelectAnyTransaction => (
                "grant-select-any-transaction",
                Blocking,
                "V$LOGMNR_CONTENTS needs it for other users' transactions",
            ),
            Grant::SelectOnView(view)
                if !connector_reads(view, facts.is_cdb)
                    || unreadable_views.contains(&view.as_str()) =>
            {
                continue;
            }
            Grant::SelectOnView(view) => ("grant-select-view", Blocking, view_use(view)),
            Grant::Flashback(_) if context.snapshots => (
                "grant-flashback",
                Blocking,
                "snapshot reads are flashback queries (cdc.snapshot.mode is not none)",
            ),
            Grant::Flashback(_) => continue,
            Grant::ExecuteDbmsLogmnr => (
                "grant-dbms-logmnr",
                Blocking,
                "every mining session is started and ended with it (ADD_LOGFILE, START_LOGMNR, \
                 END_LOGMNR)",
            ),
            Grant::ExecuteDbmsLogmnrD if context.dictionary_builds => (
                "grant-dbms-logmnr-d",
                Warning,
                "dictionary builds (cdc.dictionary.build.interval.ms) are disabled without it, \
                 so rows older than a DDL decode with generic column names",
            ),
            Grant::ExecuteDbmsLogmnrD => continue,
        };
        out.push(finding(
            id,
            severity,
            format!("capture user {} lacks {grant}: {why}", facts.user),
            Some(grant.grant_sql(&facts.user, facts.is_cdb)),
        ));
    }
    out.extend(
        facts
            .unreadable
            .iter()
            .map(|u| unreadable_finding(u, facts)),
    );

    if let Some(threads) = &facts.enabled_threads
        && threads.len() > 1
    {
        out.push(finding(
            "redo-threads",
            Blocking,
            format!(
                "{} redo threads are enabled (RAC): the connector captures one thread only (CDC-5001)",
                threads.len()
            ),
            None,
        ));
    }

    if let Some(database) = &facts.database {
        let topology_ok = match (&database.role, &database.open_mode) {
            (DatabaseRole::Primary, OpenMode::ReadWrite) => true,
            (DatabaseRole::PhysicalStandby, OpenMode::ReadOnly | OpenMode::ReadOnlyWithApply) => {
                context.capture_mode == CaptureMode::ArchiveOnly
            }
            _ => false,
        };
        if !topology_ok {
            let hint = match (&database.role, &database.open_mode) {
                (
                    DatabaseRole::PhysicalStandby,
                    OpenMode::ReadOnly | OpenMode::ReadOnlyWithApply,
                ) => "; a physical standby is captured with cdc.capture.mode=archive_only",
                _ => {
                    "; capture needs a PRIMARY open READ WRITE, or an open physical standby with cdc.capture.mode=archive_only"
                }
            };
            out.push(finding(
                "topology",
                Blocking,
                format!(
                    "the database is {} open {}, which cdc.capture.mode={} cannot capture (CDC-5001){hint}",
                    role_text(&database.role),
                    open_mode_text(&database.open_mode),
                    context.capture_mode.as_str()
                ),
                None,
            ));
        }
    }

    if let Some(version) = &facts.version
        && version.major < MIN_MAJOR_VERSION
    {
        out.push(finding(
            "version",
            Blocking,
            format!(
                "Oracle {} is older than 19c, the oldest release the connector supports",
                version.text
            ),
            None,
        ));
    }

    if let (Some(resume), Some(oldest)) = (context.resume_scn, &facts.oldest_archived_log)
        && resume < oldest.first_scn
    {
        out.push(finding(
            "archive-retention",
            Blocking,
            format!(
                "the resume SCN {resume} is below the oldest available archived log (first SCN {}{}): \
                 the redo in between is gone; restore the archived logs, or start from a snapshot",
                oldest.first_scn,
                oldest
                    .first_time
                    .as_ref()
                    .map(|t| format!(", {t}"))
                    .unwrap_or_default()
            ),
            None,
        ));
    }

    for name in &facts.long_names {
        out.push(finding(
            "long-names",
            Warning,
            format!("{name} is longer than 30 bytes: LogMiner does not mine its changes"),
            None,
        ));
    }

    for table in facts
        .tables
        .iter()
        .filter(|t| t.usable_key == Some(false) && !context.configured_keys.contains(&t.table))
    {
        out.push(finding(
            "no-key",
            Warning,
            format!(
                "captured table {} has no primary key and no unique key on NOT NULL columns: its \
                 records are keyed by ROWID; give it one, or name its key columns in cdc.key.columns",
                table.table
            ),
            None,
        ));
    }

    if let Some(switches) = facts.log_switches.map(|s| s.per_hour())
        && switches > MAX_SWITCHES_PER_HOUR
    {
        out.push(finding(
            "log-switches",
            Warning,
            format!(
                "the redo logs switched {switches} times in an hour (more than {MAX_SWITCHES_PER_HOUR}): \
                 larger online redo logs keep mining steps whole"
            ),
            None,
        ));
    }

    if context.snapshots
        && let Some(secs) = facts.undo_retention_secs
        && secs < MIN_UNDO_RETENTION_SECS
    {
        out.push(finding(
            "undo-retention",
            Warning,
            format!(
                "UNDO_RETENTION is {secs} s (under {MIN_UNDO_RETENTION_SECS} s): snapshot reads may fail with ORA-01555 (CDC-8001)"
            ),
            Some("ALTER SYSTEM SET UNDO_RETENTION = 900 SCOPE = BOTH;".to_owned()),
        ));
    }

    out.sort_by_key(|f| f.severity);
    out
}

/// The user a login refused with ORA-01045 names (`ORA-01045: user CDC lacks CREATE SESSION
/// privilege; logon denied`).
fn refused_user(message: &str) -> Option<&str> {
    let (_, after) = message.split_once("ORA-01045: user ")?;
    let user = after.split_whitespace().next()?;
    (!user.is_empty()).then_some(user)
}

/// The finding of a login refused for lack of CREATE SESSION (ORA-01045), when `error` is
/// one: nothing else can be checked. The user is the one the database names, else the
/// configured one as Oracle reads an unquoted name; a common user (`C##…`) gets its grant in
/// every container.
pub fn login_refused(error: &SourceError, configured_user: Option<&str>) -> Option<Finding> {
    if error.ora_code() != Some(OraCode::NO_CREATE_SESSION_PRIVILEGE) {
        return None;
    }
    let message = error.to_string();
    let user = refused_user(&message)
        .map(str::to_owned)
        .or_else(|| configured_user.map(str::to_ascii_uppercase))
        .unwrap_or_else(|| "<capture user>".to_owned());
    let common = user.starts_with("C##");
    Some(finding(
        "grant-create-session",
        Severity::Blocking,
        format!(
            "capture user {user} lacks CREATE SESSION: the database refused its login \
             (ORA-01045), so nothing else could be checked"
        ),
        Some(Grant::CreateSession.grant_sql(&user, common)),
    ))
}

/// The exit status of a check: 0 ready, 1 anything blocking, 2 warnings only.
pub fn exit_status(findings: &[Finding]) -> u8 {
    if findings.iter().any(|f| f.severity == Severity::Blocking) {
        1
    } else if findings.is_empty() {
        0
    } else {
        2
    }
}

fn status_word(exit: u8) -> &'static str {
    match exit {
        0 => "ready",
        1 => "blocking",
        _ => "warnings",
    }
}

/// The human report: a line per finding with its fix, then a summary.
pub fn render_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let _ = writeln!(out, "{:<8} {}: {}", f.severity.label(), f.id, f.message);
        if let Some(sql) = &f.fix_sql {
            let _ = writeln!(out, "         fix: {sql}");
        }
    }
    let blocking = findings
        .iter()
        .filter(|f| f.severity == Severity::Blocking)
        .count();
    let _ = writeln!(
        out,
        "{}: {blocking} blocking, {} warning(s)",
        status_word(exit_status(findings)),
        findings.len() - blocking
    );
    out
}

/// The report for scripts: `{"status", "findings": [{id, severity, message, fix_sql}]}`.
pub fn render_json(findings: &[Finding]) -> String {
    serde_json::json!({
        "status": status_word(exit_status(findings)),
        "findings": findings,
    })
    .to_string()
}

/// What `check` prints and exits with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutcome {
    pub text: String,
    pub exit: u8,
    pub findings: Vec<Finding>,
}

impl CheckOutcome {
    fn of(findings: Vec<Finding>, json: bool) -> CheckOutcome {
        let text = if json {
            render_json(&findings)
        } else {
            render_text(&findings)
        };
        CheckOutcome {
            text,
            exit: exit_status(&findings),
            findings,
        }
    }
}

/// Why a check could not judge the database: it failed (exit 1), which no finding says.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The source the configuration names could not be opened (no client library, a login
    /// refused, a simulator scenario that does not load): the stop the connector would give.
    #[error("check: the database could not be opened: {0}")]
    Open(#[source] CdcError),
    /// A read failed for another reason than a refused grant (the session lost, a driver
    /// error): the facts after it would not be the database's.
    #[error("check: the database could not be queried: {0}")]
    Query(#[source] CdcError),
}

/// The database `config` names, for a check: the simulator, or an Oracle session whose
/// identity is not read at connect (a V$DATABASE it may not read is then a finding).
fn open(config: &CdcConfig) -> Result<Box<dyn Preflight>, SourceSetupError> {
    match config.source {
        SourceKind::Sim => Ok(Box::new(cdc_logminer::source::configured::sim_source(
            config, None,
        )?)),
        #[cfg(feature = "oracle")]
        SourceKind::Oracle => {
            let options = cdc_logminer::source::configured::connect_options(config)?;
            cdc_logminer::source::oracle::OracleSource::connect_for_preflight(options)
                .map(|source| Box::new(source) as Box<dyn Preflight>)
                .map_err(SourceSetupError::Oracle)
        }
        #[cfg(not(feature = "oracle"))]
        SourceKind::Oracle => Ok(Box::new(cdc_logminer::source::from_config(config, None)?)),
    }
}

/// Checks the database `config` names (`cdc.source`): its facts for the captured tables,
/// judged by [`findings`]; with `resume_scn`, also whether the archived logs reach back to it.
pub fn run(
    config: &CdcConfig,
    resume_scn: Option<Scn>,
    json: bool,
) -> Result<CheckOutcome, CheckError> {
    let configured_user = config.database.login.as_ref().map(|l| l.user.as_str());
    let mut source = match open(config) {
        Ok(source) => source,
        Err(e) => {
            if let SourceSetupError::Oracle(error) = &e
                && let Some(refused) = login_refused(error, configured_user)
            {
                return Ok(CheckOutcome::of(vec![refused], json));
            }
            return Err(CheckError::Open(CdcError::from(e)));
        }
    };
    let captured = |t: &TableId| config.is_table_included(t.pdb.as_deref(), &t.owner, &t.table);
    let facts = match source.preflight_facts(&captured) {
        Ok(facts) => facts,
        Err(e) => {
            return match login_refused(&e, configured_user) {
                Some(refused) => Ok(CheckOutcome::of(vec![refused], json)),
                None => Err(CheckError::Query(source_stop(e))),
            };
        }
    };
    let context = CheckContext::from_config(config, &facts, resume_scn);
    Ok(CheckOutcome::of(findings(&facts, &context), json))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::RedoThread;
    use cdc_logminer::source::preflight::{
        DatabaseFacts, DatabaseSupplemental, DatabaseVersion, LogSwitches, OldestArchivedLog,
        PreflightRead, TableFacts, TableSupplemental,
    };

    fn ready() -> PreflightFacts {
        PreflightFacts {
            database: Some(DatabaseFacts {
                log_mode: LogMode::Archivelog,
                supplemental: DatabaseSupplemental {
                    minimal: true,
                    primary_key: false,
                    all_columns: false,
                },
                role: DatabaseRole::Primary,
                open_mode: OpenMode::ReadWrite,
            }),
            tables: vec![TableFacts {
                table: TableId::new("APP", "ORDERS"),
                supplemental: Some(TableSupplemental {
                    all_columns: true,
                    primary_key: false,
                }),
                usable_key: Some(true),
            }],
            user: "CDC".into(),
            missing_grants: vec![],
            enabled_threads: Some(vec![RedoThread(1)]),
            is_cdb: false,
            version: Some(DatabaseVersion {
                text: "19.0.0.0.0".into(),
                major: 19,
            }),
            long_names: vec![],
            log_switches: Some(LogSwitches::default()),
            oldest_archived_log: Some(OldestArchivedLog {
                first_scn: Scn(1000),
                first_time: Some("2026-12-01 00:00:00".into()),
            }),
            undo_retention_secs: Some(900),
            unreadable: vec![],
        }
    }

    fn database(f: &mut PreflightFacts) -> &mut DatabaseFacts {
        f.database.as_mut().expect("V$DATABASE read")
    }

    fn refused(read: PreflightRead) -> Unreadable {
        Unreadable::of(
            read,
            false,
            &SourceError::ora(
                OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST,
                "ORA-00942: table or view does not exist",
            ),
        )
        .expect("a refusal")
    }

    fn context() -> CheckContext {
        CheckContext {
            capture_mode: CaptureMode::Online,
            snapshots: true,
            dictionary_builds: true,
            resume_scn: None,
            configured_keys: vec![],
        }
    }

    fn ids(facts: &PreflightFacts, context: &CheckContext) -> Vec<&'static str> {
        findings(facts, context).into_iter().map(|f| f.id).collect()
    }

    #[test]
    fn a_ready_database_has_no_finding() {
        assert!(findings(&ready(), &context()).is_empty());
        assert_eq!(exit_status(&[]), 0);
    }

    #[test]
    fn six_switches_an_hour_pass_and_seven_warn() {
        let mut f = ready();
        f.log_switches = Some(LogSwitches {
            last_hour: 6,
            busiest_hour_last_day: 6,
        });
        assert!(ids(&f, &context()).is_empty());
        f.log_switches = Some(LogSwitches {
            last_hour: 6,
            busiest_hour_last_day: 7,
        });
        let found = findings(&f, &context());
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].id, found[0].severity),
            ("log-switches", Severity::Warning)
        );
        assert_eq!(exit_status(&found), 2);
    }

    #[test]
    fn undo_retention_of_119_seconds_warns_and_120_passes() {
        let mut f = ready();
        f.undo_retention_secs = Some(120);
        assert!(ids(&f, &context()).is_empty());
        f.undo_retention_secs = Some(119);
        assert_eq!(ids(&f, &context()), vec!["undo-retention"]);
        // without snapshots no flashback read needs the undo
        let no_snapshots = CheckContext {
            snapshots: false,
            ..context()
        };
        assert!(ids(&f, &no_snapshots).is_empty());
    }

    #[test]
    fn version_18_blocks_and_19_passes() {
        let mut f = ready();
        assert_eq!(f.version.as_ref().map(|v| v.major), Some(19));
        assert!(ids(&f, &context()).is_empty());
        f.version = Some(DatabaseVersion {
            text: "18.0.0.0.0".into(),
            major: 18,
        });
        assert_eq!(ids(&f, &context()), vec!["version"]);
    }

    #[test]
    fn the_archive_must_reach_the_resume_scn() {
        let f = ready();
        let at = |scn: u64| CheckContext {
            resume_scn: Some(Scn(scn)),
            ..context()
        };
        assert!(
            ids(&f, &at(1000)).is_empty(),
            "the oldest log's first SCN is reached"
        );
        let found = findings(&f, &at(999));
        assert_eq!(found[0].id, "archive-retention");
        assert_eq!(found[0].severity, Severity::Blocking);
        assert!(found[0].message.contains("1000"), "{}", found[0].message);
        assert!(
            ids(&f, &context()).is_empty(),
            "no resume SCN, nothing to reach"
        );
    }

    #[test]
    fn topology_follows_the_capture_mode() {
        let mut f = ready();
        database(&mut f).role = DatabaseRole::PhysicalStandby;
        database(&mut f).open_mode = OpenMode::ReadOnlyWithApply;
        assert_eq!(ids(&f, &context()), vec!["topology"]);
        let archive_only = CheckContext {
            capture_mode: CaptureMode::ArchiveOnly,
            ..context()
        };
        assert!(ids(&f, &archive_only).is_empty());
        database(&mut f).open_mode = OpenMode::Mounted;
        assert_eq!(ids(&f, &archive_only), vec!["topology"]);
        database(&mut f).role = DatabaseRole::LogicalStandby;
        database(&mut f).open_mode = OpenMode::ReadWrite;
        assert_eq!(ids(&f, &archive_only), vec!["topology"]);
    }

    #[test]
    fn table_supplemental_logging_is_covered_by_the_database_level() {
        let mut f = ready();
        f.tables[0].supplemental = Some(TableSupplemental::default());
        let found = findings(&f, &context());
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].fix_sql.as_deref(),
            Some("ALTER TABLE APP.ORDERS ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;")
        );
        database(&mut f).supplemental.all_columns = true;
        assert!(ids(&f, &context()).is_empty());
    }

    #[test]
    fn grants_for_snapshots_and_builds_count_only_when_used() {
        let mut f = ready();
        f.missing_grants = vec![
            Grant::Flashback(TableId::new("APP", "ORDERS")),
            Grant::ExecuteDbmsLogmnrD,
        ];
        let found = findings(&f, &context());
        assert_eq!(
            found.iter().map(|f| (f.id, f.severity)).collect::<Vec<_>>(),
            vec![
                ("grant-flashback", Severity::Blocking),
                ("grant-dbms-logmnr-d", Severity::Warning)
            ]
        );
        let neither = CheckContext {
            snapshots: false,
            dictionary_builds: false,
            ..context()
        };
        assert!(ids(&f, &neither).is_empty());
    }

    #[test]
    fn a_configured_key_stands_in_for_a_missing_one() {
        let mut f = ready();
        f.tables[0].usable_key = Some(false);
        assert_eq!(ids(&f, &context()), vec!["no-key"]);
        let keyed = CheckContext {
            configured_keys: vec![TableId::new("APP", "ORDERS")],
            ..context()
        };
        assert!(ids(&f, &keyed).is_empty());
    }

    #[test]
    fn blocking_findings_come_first_and_decide_the_exit() {
        let mut f = ready();
        f.long_names = vec!["APP.ORDERS.X".into()];
        database(&mut f).log_mode = LogMode::NoArchivelog;
        let found = findings(&f, &context());
        assert_eq!(
            found.iter().map(|f| f.id).collect::<Vec<_>>(),
            vec!["archivelog", "long-names"]
        );
        assert_eq!(exit_status(&found), 1);
        let text = render_text(&found);
        assert!(text.contains("BLOCKING archivelog"), "{text}");
        assert!(text.contains("fix: SHUTDOWN IMMEDIATE"), "{text}");
        assert!(
            text.ends_with("blocking: 1 blocking, 1 warning(s)\n"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&render_json(&found)).expect("JSON");
        assert_eq!(json["status"], "blocking");
        assert_eq!(json["findings"][0]["severity"], "blocking");
        assert_eq!(json["findings"][1]["fix_sql"], serde_json::Value::Null);
    }

    #[test]
    fn the_grants_of_a_login_and_of_mining_block_with_their_statements() {
        let mut f = ready();
        f.missing_grants = vec![
            Grant::CreateSession,
            Grant::ExecuteDbmsLogmnr,
            Grant::SelectOnView("GV$TRANSACTION".into()),
            Grant::SelectOnView("GV$SESSION".into()),
            Grant::SelectOnView("DBA_CONSTRAINTS".into()),
        ];
        let found = findings(&f, &context());
        assert_eq!(
            found
                .iter()
                .map(|f| (f.id, f.severity, f.fix_sql.as_deref().unwrap_or("")))
                .collect::<Vec<_>>(),
            vec![
                (
                    "grant-create-session",
                    Severity::Blocking,
                    "GRANT CREATE SESSION TO CDC;"
                ),
                (
                    "grant-dbms-logmnr",
                    Severity::Blocking,
                    "GRANT EXECUTE ON SYS.DBMS_LOGMNR TO CDC;"
                ),
                (
                    "grant-select-view",
                    Severity::Blocking,
                    "GRANT SELECT ON SYS.GV_$TRANSACTION TO CDC;"
                ),
                (
                    "grant-select-view",
                    Severity::Blocking,
                    "GRANT SELECT ON SYS.GV_$SESSION TO CDC;"
                ),
                (
                    "grant-select-view",
                    Severity::Blocking,
                    "GRANT SELECT ON SYS.DBA_CONSTRAINTS TO CDC;"
                ),
            ]
        );
        assert!(
            found[2].message.contains("orphan detection"),
            "{}",
            found[2].message
        );
        // a CDB's connector reads CDB_CONSTRAINTS instead: the DBA_ view is the check's alone
        f.is_cdb = true;
        f.user = "C##CDC".into();
        let cdb = findings(&f, &context());
        assert_eq!(cdb.len(), 4);
        assert_eq!(
            cdb[0].fix_sql.as_deref(),
            Some("GRANT CREATE SESSION TO C##CDC CONTAINER=ALL;")
        );
    }

    #[test]
    fn a_refused_read_blocks_names_its_views_and_leaves_its_facts_unjudged() {
        let mut f = ready();
        f.database = None;
        f.version = None;
        f.unreadable = vec![
            refused(PreflightRead::Database),
            refused(PreflightRead::Version),
        ];
        // with the grant also listed, only the finding of the read says so
        f.missing_grants = vec![Grant::SelectOnView("V$DATABASE".into())];
        let found = findings(&f, &context());
        assert_eq!(
            found
                .iter()
                .map(|f| (f.id, f.fix_sql.as_deref().unwrap_or("")))
                .collect::<Vec<_>>(),
            vec![
                ("unreadable", "GRANT SELECT ON SYS.V_$DATABASE TO CDC;"),
                ("unreadable", "GRANT SELECT ON SYS.V_$INSTANCE TO CDC;"),
            ]
        );
        assert!(
            found[0]
                .message
                .contains("could not read V$DATABASE (ORA-00942"),
            "{}",
            found[0].message
        );
        assert!(
            found[0].message.contains("ARCHIVELOG mode"),
            "{}",
            found[0].message
        );
        assert_eq!(exit_status(&found), 1);
        let wrapped = Unreadable::of(
            PreflightRead::Version,
            false,
            &SourceError::from_driver_message(
                "ORA-00604: error occurred at recursive SQL level 1\nORA-01031: insufficient privileges",
            ),
        )
        .expect("a refusal");
        let named = unreadable_finding(&wrapped, &f);
        assert!(
            named
                .message
                .contains("(ORA-01031: insufficient privileges)"),
            "{}",
            named.message
        );
        // unknown supplemental logging at the database level: a table without groups may be
        // covered, so it is not judged
        f.tables[0].supplemental = Some(TableSupplemental::default());
        assert_eq!(ids(&f, &context()), vec!["unreadable", "unreadable"]);
    }

    #[test]
    fn a_refused_statement_of_several_views_names_the_ones_not_granted() {
        let mut f = ready();
        f.tables[0].usable_key = None;
        f.unreadable = vec![refused(PreflightRead::TableKeys)];
        let all = findings(&f, &context());
        assert_eq!(
            all[0].fix_sql.as_deref(),
            Some(
                "GRANT SELECT ON SYS.DBA_CONSTRAINTS TO CDC; GRANT SELECT ON SYS.DBA_CONS_COLUMNS TO CDC; \
                 GRANT SELECT ON SYS.DBA_TAB_COLUMNS TO CDC;"
            ),
            "no grant is known missing: every view of the statement"
        );
        assert!(
            all[0]
                .message
                .contains("DBA_CONSTRAINTS or DBA_CONS_COLUMNS or DBA_TAB_COLUMNS"),
            "{}",
            all[0].message
        );
        f.missing_grants = vec![Grant::SelectOnView("DBA_TAB_COLUMNS".into())];
        let narrowed = findings(&f, &context());
        assert_eq!(narrowed.len(), 1, "{narrowed:?}");
        assert_eq!(
            narrowed[0].fix_sql.as_deref(),
            Some("GRANT SELECT ON SYS.DBA_TAB_COLUMNS TO CDC;")
        );
    }

    #[test]
    fn a_login_refused_for_create_session_is_a_finding_and_other_refusals_are_not() {
        let refused = SourceError::from_driver_message(
            "ORA-01045: user C##CDC lacks CREATE SESSION privilege; logon denied",
        );
        let found = login_refused(&refused, Some("c##cdc")).expect("a finding");
        assert_eq!(found.id, "grant-create-session");
        assert_eq!(found.severity, Severity::Blocking);
        assert_eq!(
            found.fix_sql.as_deref(),
            Some("GRANT CREATE SESSION TO C##CDC CONTAINER=ALL;")
        );
        // the database's text without the user: the configured one, as Oracle reads it
        let bare = SourceError::ora(OraCode::NO_CREATE_SESSION_PRIVILEGE, "logon denied");
        assert_eq!(
            login_refused(&bare, Some("cdc")).and_then(|f| f.fix_sql),
            Some("GRANT CREATE SESSION TO CDC;".to_owned())
        );
        let wrong_password =
            SourceError::from_driver_message("ORA-01017: invalid username/password; logon denied");
        assert_eq!(login_refused(&wrong_password, Some("cdc")), None);
    }
}
