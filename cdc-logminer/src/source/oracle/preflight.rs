//! [`Preflight`] for [`OracleSource`]: the statements of `preflight_sql`, run on the capture
//! session. Read-only; any error is the caller's to report (a check stops at the first).
//! Against a CDB root the per-table views are the root's (DBA_*): connect to the PDB to check
//! its tables.

use cdc_core::{Scn, TableId};

use super::client::{OracleSource, col};
use super::preflight_sql::{self as q, SessionGrants};
use super::sql::Bind;
use crate::source::preflight::{
    DatabaseVersion, LogMode, LogSwitches, OldestArchivedLog, Preflight, PreflightFacts,
    TableFacts, long_names,
};
use crate::source::{RedoSource, SourceError, TableFilter};

fn strings(source: &OracleSource, stmt: &str, binds: &[Bind]) -> Result<Vec<String>, SourceError> {
    source
        .rows(stmt, binds)?
        .iter()
        .map(|r| col::<String>(r, 0))
        .collect()
}

impl Preflight for OracleSource {
    fn preflight_facts(&mut self, filter: &TableFilter<'_>) -> Result<PreflightFacts, SourceError> {
        let identity = self.identity()?;
        let rows = self.rows(q::DATABASE, &[])?;
        let row = rows.first().ok_or_else(|| SourceError::Driver {
            message: "V$DATABASE returned no row".into(),
        })?;
        let log_mode = LogMode::from_view(&col::<String>(row, 0)?);
        let supplemental = q::database_supplemental(
            &col::<String>(row, 1)?,
            &col::<String>(row, 2)?,
            &col::<String>(row, 3)?,
        );
        let user = strings(self, q::USER, &[])?
            .into_iter()
            .next()
            .unwrap_or_default();

        let mut captured: Vec<TableId> = Vec::new();
        for object in self.resolve_objects(filter)? {
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
            let groups = strings(self, q::TABLE_LOG_GROUPS, &binds)?;
            let keys = self.rows(q::USABLE_KEYS, &binds)?;
            let columns = strings(self, q::COLUMNS, &binds)?;
            tables.push(TableFacts {
                table: table.clone(),
                supplemental: q::table_supplemental(groups.iter().map(String::as_str)),
                usable_key: !keys.is_empty(),
            });
            long.extend(long_names(table, columns.iter().map(String::as_str)));
        }

        let grants = SessionGrants {
            privileges: strings(self, q::SESSION_PRIVS, &[])?,
            roles: strings(self, q::SESSION_ROLES, &[])?,
            object_privileges: self
                .rows(q::USER_TAB_PRIVS, &[])?
                .iter()
                .map(|r| Ok((col(r, 0)?, col(r, 1)?, col(r, 2)?)))
                .collect::<Result<_, SourceError>>()?,
        };
        let version_text = strings(self, q::VERSION, &[])?
            .into_iter()
            .next()
            .unwrap_or_default();
        let version = DatabaseVersion::parse(&version_text).ok_or_else(|| SourceError::Driver {
            message: format!("V$INSTANCE.VERSION reads {version_text:?}, no release number"),
        })?;
        let switches = match self.rows(q::LOG_SWITCHES, &[])?.first() {
            Some(r) => LogSwitches {
                last_hour: col(r, 0)?,
                busiest_hour_last_day: col::<Option<u32>>(r, 1)?.unwrap_or(0),
            },
            None => LogSwitches::default(),
        };
        let oldest_archived_log = match self.rows(q::OLDEST_ARCHIVED_LOG, &[])?.first() {
            Some(r) => Some(OldestArchivedLog {
                first_scn: Scn(col::<u64>(r, 0)?),
                first_time: col(r, 1)?,
            }),
            None => None,
        };
        let undo = strings(self, q::PARAMETER, &[Bind::Text("undo_retention".into())])?;

        Ok(PreflightFacts {
            log_mode,
            supplemental,
            missing_grants: grants.missing(&captured),
            tables,
            user,
            enabled_threads: identity.enabled_threads,
            role: identity.role,
            open_mode: identity.open_mode,
            is_cdb: identity.is_cdb,
            version,
            long_names: long,
            log_switches: switches,
            oldest_archived_log,
            undo_retention_secs: q::undo_retention(undo.first().map(String::as_str)),
        })
    }
}
