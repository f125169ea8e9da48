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
//! Nothing is retried: a source that cannot be opened or queried is a [`CheckError`], whose
//! text carries the driver's message and never the database password.

use std::fmt::Write as _;

use cdc_core::Scn;
use cdc_core::TableId;
use cdc_core::config::{CaptureMode, CdcConfig, SnapshotMode};
use cdc_logminer::source::preflight::{Grant, LogMode, Preflight, PreflightFacts};
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

/// The rules of a preflight check, blocking findings first.
pub fn findings(facts: &PreflightFacts, context: &CheckContext) -> Vec<Finding> {
    use Severity::{Blocking, Warning};
    let mut out = Vec::new();

    if facts.log_mode != LogMode::Archivelog {
        out.push(finding(
            "archivelog",
            Blocking,
            format!(
                "the database is not in ARCHIVELOG mode (LOG_MODE {}): redo is overwritten before it is mined",
                match &facts.log_mode {
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

    if !facts.supplemental.minimal {
        out.push(finding(
            "supplemental-minimal",
            Blocking,
            "minimal supplemental logging is off (SUPPLEMENTAL_LOG_DATA_MIN NO): LogMiner cannot \
             rebuild row changes"
                .to_owned(),
            Some("ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;".to_owned()),
        ));
    }
    let database_covers = facts.supplemental.all_columns || facts.supplemental.primary_key;
    for table in facts.tables.iter().filter(|t| !t.supplemental.any()) {
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

    for grant in &facts.missing_grants {
        let (id, severity, why) = match grant {
            Grant::Logmining => ("grant-logmining", Blocking, "LogMiner sessions need it"),
            Grant::SelectAnyTransaction => (
                "grant-select-any-transaction",
                Blocking,
                "V$LOGMNR_CONTENTS needs it for other users' transactions",
            ),
            Grant::SelectOnView(_) => ("grant-select-view", Blocking, "the connector reads it"),
            Grant::Flashback(_) if context.snapshots => (
                "grant-flashback",
                Blocking,
                "snapshot reads are flashback queries (cdc.snapshot.mode is not none)",
            ),
            Grant::Flashback(_) => continue,
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

    if facts.enabled_threads.len() > 1 {
        out.push(finding(
            "redo-threads",
            Blocking,
            format!(
                "{} redo threads are enabled (RAC): the connector captures one thread only (CDC-5001)",
                facts.enabled_threads.len()
            ),
            None,
        ));
    }

    let topology_ok = match (&facts.role, &facts.open_mode) {
        (DatabaseRole::Primary, OpenMode::ReadWrite) => true,
        (DatabaseRole::PhysicalStandby, OpenMode::ReadOnly | OpenMode::ReadOnlyWithApply) => {
            context.capture_mode == CaptureMode::ArchiveOnly
        }
        _ => false,
    };
    if !topology_ok {
        let hint = match (&facts.role, &facts.open_mode) {
            (DatabaseRole::PhysicalStandby, OpenMode::ReadOnly | OpenMode::ReadOnlyWithApply) => {
                "; a physical standby is captured with cdc.capture.mode=archive_only"
            }
            _ => {
                "; capture needs a PRIMARY open READ WRITE, or an open physical standby with cdc.capture.mode=archive_only"
            }
        };
        out.push(finding(
            "topology",
            Blocking,
            format!(
                "the database is {} open {}, which cdc.capture.mode={} cannot capture (CDC-5001){hint}",
                role_text(&facts.role),
                open_mode_text(&facts.open_mode),
                context.capture_mode.as_str()
            ),
            None,
        ));
    }

    if facts.version.major < MIN_MAJOR_VERSION {
        out.push(finding(
            "version",
            Blocking,
            format!(
                "Oracle {} is older than 19c, the oldest release the connector supports",
                facts.version.text
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
        .filter(|t| !t.usable_key && !context.configured_keys.contains(&t.table))
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

    let switches = facts.log_switches.per_hour();
    if switches > MAX_SWITCHES_PER_HOUR {
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

/// Why a check could not judge the database.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The source the configuration names could not be opened (no client library, a login
    /// refused, a simulator scenario that does not load).
    #[error("check: the database could not be opened: {0}")]
    Open(#[source] SourceSetupError),
    /// A query of the preflight failed.
    #[error("check: the database could not be queried: {0}")]
    Query(#[source] SourceError),
}

/// Checks the database `config` names (`cdc.source`): its facts for the captured tables,
/// judged by [`findings`]; with `resume_scn`, also whether the archived logs reach back to it.
pub fn run(
    config: &CdcConfig,
    resume_scn: Option<Scn>,
    json: bool,
) -> Result<CheckOutcome, CheckError> {
    let mut source = cdc_logminer::source::from_config(config, None).map_err(CheckError::Open)?;
    let captured = |t: &TableId| config.is_table_included(t.pdb.as_deref(), &t.owner, &t.table);
    let facts = source
        .preflight_facts(&captured)
        .map_err(CheckError::Query)?;
    let context = CheckContext::from_config(config, &facts, resume_scn);
    let findings = findings(&facts, &context);
    let text = if json {
        render_json(&findings)
    } else {
        render_text(&findings)
    };
    Ok(CheckOutcome {
        text,
        exit: exit_status(&findings),
        findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::RedoThread;
    use cdc_logminer::source::preflight::{
        DatabaseSupplemental, DatabaseVersion, LogSwitches, OldestArchivedLog, TableFacts,
        TableSupplemental,
    };

    fn ready() -> PreflightFacts {
        PreflightFacts {
            log_mode: LogMode::Archivelog,
            supplemental: DatabaseSupplemental {
                minimal: true,
                primary_key: false,
                all_columns: false,
            },
            tables: vec![TableFacts {
                table: TableId::new("APP", "ORDERS"),
                supplemental: TableSupplemental {
                    all_columns: true,
                    primary_key: false,
                },
                usable_key: true,
            }],
            user: "CDC".into(),
            missing_grants: vec![],
            enabled_threads: vec![RedoThread(1)],
            role: DatabaseRole::Primary,
            open_mode: OpenMode::ReadWrite,
            is_cdb: false,
            version: DatabaseVersion {
                text: "19.0.0.0.0".into(),
                major: 19,
            },
            long_names: vec![],
            log_switches: LogSwitches::default(),
            oldest_archived_log: Some(OldestArchivedLog {
                first_scn: Scn(1000),
                first_time: Some("2026-12-01 00:00:00".into()),
            }),
            undo_retention_secs: Some(900),
        }
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
        f.log_switches = LogSwitches {
            last_hour: 6,
            busiest_hour_last_day: 6,
        };
        assert!(ids(&f, &context()).is_empty());
        f.log_switches.busiest_hour_last_day = 7;
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
        assert_eq!(f.version.major, 19);
        assert!(ids(&f, &context()).is_empty());
        f.version = DatabaseVersion {
            text: "18.0.0.0.0".into(),
            major: 18,
        };
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
        f.role = DatabaseRole::PhysicalStandby;
        f.open_mode = OpenMode::ReadOnlyWithApply;
        assert_eq!(ids(&f, &context()), vec!["topology"]);
        let archive_only = CheckContext {
            capture_mode: CaptureMode::ArchiveOnly,
            ..context()
        };
        assert!(ids(&f, &archive_only).is_empty());
        f.open_mode = OpenMode::Mounted;
        assert_eq!(ids(&f, &archive_only), vec!["topology"]);
        f.role = DatabaseRole::LogicalStandby;
        f.open_mode = OpenMode::ReadWrite;
        assert_eq!(ids(&f, &archive_only), vec!["topology"]);
    }

    #[test]
    fn table_supplemental_logging_is_covered_by_the_database_level() {
        let mut f = ready();
        f.tables[0].supplemental = TableSupplemental::default();
        let found = findings(&f, &context());
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].fix_sql.as_deref(),
            Some("ALTER TABLE APP.ORDERS ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;")
        );
        f.supplemental.all_columns = true;
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
        f.tables[0].usable_key = false;
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
        f.log_mode = LogMode::NoArchivelog;
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
}
