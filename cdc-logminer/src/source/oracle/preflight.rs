//! [`Preflight`] for [`OracleSource`]: the statements of `preflight_sql`, run on the capture
//! session, each as one [`PreflightRead`]. Read-only. A statement the user is refused
//! (ORA-00942, ORA-01031) leaves its facts unknown and is listed in
//! [`PreflightFacts::unreadable`]; any other error is the caller's to report.
//! Against a CDB root the per-table views are the root's (DBA_*): connect to the PDB to check
//! its tables.

use cdc_core::{RedoThread, Scn, TableId};

use super::client::{OracleSource, col};
use super::preflight_sql::{self as q, SessionGrants};
use super::sql::Bind;
use crate::source::preflight::{
    DatabaseFacts, DatabaseVersion, LogMode, LogSwitches, OldestArchivedLog, Preflight,
    PreflightFacts, PreflightRead, PreflightReads, TableFacts, long_names,
};
use crate::source::{DatabaseRole, OpenMode, RedoSource, SourceError, TableFilter};

fn strings(source: &OracleSource, stmt: &str, binds: &[Bind]) -> Result<Vec<String>, SourceError> {
    source
        .rows(stmt, binds)?
        .iter()
        .map(|r| col::<String>(r, 0))
        .collect()
}

fn database(source: &mut OracleSource) -> Result<DatabaseFacts, SourceError> {
    let rows = source.rows(q::DATABASE, &[])?;
    let row = rows.first().ok_or_else(|| SourceError::Driver {
        message: "V$DATABASE returned no row".into(),
    })?;
    Ok(DatabaseFacts {
        log_mode: LogMode::from_view(&col::<String>(row, 0)?),
        supplemental: q::database_supplemental(
            &col::<String>(row, 1)?,
            &col::<String>(row, 2)?,
            &col::<String>(row, 3)?,
        ),
        role: DatabaseRole::from_view(&col::<String>(row, 4)?),
        open_mode: OpenMode::from_view(&col::<String>(row, 5)?),
    })
}

impl Preflight for OracleSource {
    fn preflight_facts(&mut self, filter: &TableFilter<'_>) -> Result<PreflightFacts, SourceError> {
        let is_cdb = self.is_cdb();
        let mut reads = PreflightReads::new(is_cdb);
        let database = reads.run(self, PreflightRead::Database, database)?;
        let user = strings(self, q::USER, &[])?
            .into_iter()
            .next()
            .unwrap_or_default();

        let mut captured: Vec<TableId> = Vec::new();
        let objects = reads.run(self, PreflightRead::CapturedTables, |s| {
            s.resolve_objects(filter)
        })?;
        for object in objects.into_iter().flatten() {
            if !captured.contains(&object.table) {
                captured.push(object.table);
            }
        }
        let mut tables = Vec::new();
        let mut long = Vec::new();
        for table in &captured {
            let binds = [
                Bind::Text(table.owner.clone()),
                Bind::Text(table.table.clone()),
            ];
            let groups = reads.run(self, PreflightRead::TableLogGroups, |s| {
                strings(s, q::TABLE_LOG_GROUPS, &binds)
            })?;
            let keys = reads.run(self, PreflightRead::TableKeys, |s| {
                s.rows(q::USABLE_KEYS, &binds)
            })?;
            let columns = reads.run(self, PreflightRead::TableColumns, |s| {
                strings(s, q::COLUMNS, &binds)
            })?;
            tables.push(TableFacts {
                table: table.clone(),
                supplemental: groups
                    .map(|groups| q::table_supplemental(groups.iter().map(String::as_str))),
                usable_key: keys.map(|keys| !keys.is_empty()),
            });
            if let Some(columns) = columns {
                long.extend(long_names(table, columns.iter().map(String::as_str)));
            }
        }

        // SESSION_PRIVS, SESSION_ROLES and USER_TAB_PRIVS are every session's own
        let grants = SessionGrants {
            privileges: strings(self, q::SESSION_PRIVS, &[])?,
            roles: strings(self, q::SESSION_ROLES, &[])?,
            object_privileges: self
                .rows(q::USER_TAB_PRIVS, &[])?
                .iter()
                .map(|r| Ok((col(r, 0)?, col(r, 1)?, col(r, 2)?)))
                .collect::<Result<_, SourceError>>()?,
        };
        let enabled_threads = reads.run(self, PreflightRead::Threads, |s| {
            s.rows(q::THREADS, &[])?
                .iter()
                .map(|r| Ok(RedoThread(col(r, 0)?)))
                .collect::<Result<Vec<_>, SourceError>>()
        })?;
        let version = reads.run(self, PreflightRead::Version, |s| {
            let text = strings(s, q::VERSION, &[])?
                .into_iter()
                .next()
                .unwrap_or_default();
            DatabaseVersion::parse(&text).ok_or_else(|| SourceError::Driver {
                message: format!("V$INSTANCE.VERSION reads {text:?}, no release number"),
            })
        })?;
        let log_switches = reads.run(self, PreflightRead::LogSwitches, |s| {
            Ok(match s.rows(q::LOG_SWITCHES, &[])?.first() {
                Some(r) => LogSwitches {
                    last_hour: col(r, 0)?,
                    busiest_hour_last_day: col::<Option<u32>>(r, 1)?.unwrap_or(0),
                },
                None => LogSwitches::default(),
            })
        })?;
        let oldest_archived_log = reads
            .run(self, PreflightRead::ArchivedLogs, |s| {
                match s.rows(q::OLDEST_ARCHIVED_LOG, &[])?.first() {
                    Some(r) => Ok(Some(OldestArchivedLog {
                        first_scn: Scn(col::<u64>(r, 0)?),
                        first_time: col(r, 1)?,
                    })),
                    None => Ok(None),
                }
            })?
            .flatten();
        let undo = reads.run(self, PreflightRead::UndoRetention, |s| {
            strings(s, q::PARAMETER, &[Bind::Text("undo_retention".into())])
        })?;

        Ok(PreflightFacts {
            database,
            missing_grants: grants.missing(&captured, is_cdb),
            tables,
            user,
            enabled_threads,
            is_cdb,
            version,
            long_names: long,
            log_switches,
            oldest_archived_log,
            undo_retention_secs: undo
                .and_then(|undo| q::undo_retention(undo.first().map(String::as_str))),
            unreadable: reads.finish(),
        })
    }
}
