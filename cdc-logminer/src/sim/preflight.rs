//! The simulated database's answer to a preflight check: [`Preflight`] for [`SimSource`].
//!
//! The facts come from the simulated database where it models them (role, open mode, CDB,
//! captured tables with their keys, names and log groups, archived logs, UNDO_RETENTION, the
//! DBMS_LOGMNR_D grant); [`SimPreflight`] (`cdc.sim.preflight`, or a scenario's
//! `database.preflight`) then presents the conditions it does not model, so a check can be
//! tried against each failing one. With none set the database is ready for capture, but for
//! what its schema really is: APP.EVENTS has no key.
//!
//! A missing grant is presented as Oracle presents it: listed among the grants the session
//! lacks, a read of a view it may not select refused with ORA-00942 (the facts of that read
//! unknown), and without CREATE SESSION the login itself refused with ORA-01045.

use cdc_core::config::SimPreflightCondition;
use cdc_core::ora::OraCode;
use cdc_core::{KeySource, RedoThread, Scn, TableId};
use serde::{Deserialize, Serialize};

use crate::sim::SimSource;
use crate::source::preflight::{
    DatabaseFacts, DatabaseSupplemental, DatabaseVersion, Grant, LogMode, LogSwitches,
    OldestArchivedLog, Preflight, PreflightFacts, PreflightRead, PreflightReads, TableFacts,
    TableSupplemental, long_names, preflight_views,
};
use crate::source::{CaptureMode, LogInventoryQuery, RedoSource, SourceError, TableFilter};

/// What Oracle Database Free 23ai reports as V$INSTANCE.VERSION.
const SIM_VERSION: &str = "23.0.0.0.0";

/// The column `long-names` adds to the first captured table: 44 bytes.
pub const SIM_LONG_COLUMN: &str = "SHIPPING_ADDRESS_LINE_FOR_INTERNATIONAL_POST";

/// The conditions a simulated database presents to a preflight check; the default presents
/// none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SimPreflight {
    /// LOG_MODE reads NOARCHIVELOG.
    pub noarchivelog: bool,
    /// SUPPLEMENTAL_LOG_DATA_MIN reads NO.
    pub no_minimal_supplemental: bool,
    /// `OWNER.TABLE`s whose log groups are gone.
    pub tables_without_supplemental: Vec<String>,
    /// Privileges the capture user lacks, as `cdc.sim.preflight` names them.
    pub missing_grants: Vec<String>,
    /// Enabled redo threads reported (1 when unset).
    pub threads: Option<u16>,
    /// `MAJOR.MINOR` reported instead of 23ai's.
    pub version: Option<(u32, u32)>,
    /// A captured column has a name over 30 bytes ([`SIM_LONG_COLUMN`]).
    pub long_names: bool,
    /// `OWNER.TABLE`s reported without a primary or unique key.
    pub keyless_tables: Vec<String>,
    /// Log switches in the last hour and the busiest hour of the day.
    pub switches_per_hour: u32,
    /// The first SCN of the oldest archived log still available, instead of the simulated
    /// inventory's.
    pub archive_from_scn: Option<u64>,
}

impl SimPreflight {
    /// The conditions of `cdc.sim.preflight`. `undo-retention:` is no part of it: it sets the
    /// database's UNDO_RETENTION itself ([`crate::sim::SimConfig::undo_retention_secs`]).
    pub fn from_conditions(conditions: &[SimPreflightCondition]) -> SimPreflight {
        let mut out = SimPreflight::default();
        for condition in conditions {
            match condition {
                SimPreflightCondition::NoArchivelog => out.noarchivelog = true,
                SimPreflightCondition::NoSupplementalLogging => out.no_minimal_supplemental = true,
                SimPreflightCondition::NoTableSupplemental(t) => {
                    out.tables_without_supplemental.push(t.clone())
                }
                SimPreflightCondition::MissingGrant(g) => out.missing_grants.push(g.clone()),
                SimPreflightCondition::Threads(n) => {
                    out.threads = Some(u16::try_from(*n).unwrap_or(u16::MAX))
                }
                SimPreflightCondition::Version { major, minor } => {
                    out.version = Some((*major, *minor))
                }
                SimPreflightCondition::LongNames => out.long_names = true,
                SimPreflightCondition::KeylessTable(t) => out.keyless_tables.push(t.clone()),
                SimPreflightCondition::SwitchesPerHour(n) => out.switches_per_hour = *n,
                SimPreflightCondition::ArchiveFromScn(scn) => out.archive_from_scn = Some(*scn),
                SimPreflightCondition::UndoRetention(_) => {}
            }
        }
        out
    }
}

/// Whether `OWNER.TABLE` (any case) names `table`, in whichever container.
fn names(listed: &[String], table: &TableId) -> bool {
    listed.iter().any(|name| {
        name.split_once('.').is_some_and(|(owner, t)| {
            owner.eq_ignore_ascii_case(&table.owner) && t.eq_ignore_ascii_case(&table.table)
        })
    })
}

/// Whether a read of `read` is refused for lack of SELECT on one of its views.
fn refused(lacked: &[Grant], read: PreflightRead, is_cdb: bool) -> Result<(), SourceError> {
    let lacks = |view: &str| {
        lacked
            .iter()
            .any(|g| matches!(g, Grant::SelectOnView(v) if v == view))
    };
    if read.views(is_cdb).iter().any(|view| lacks(view)) {
        Err(SourceError::ora(
            OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST,
            "ORA-00942: table or view does not exist",
        ))
    } else {
        Ok(())
    }
}

impl Preflight for SimSource {
    fn preflight_facts(&mut self, filter: &TableFilter<'_>) -> Result<PreflightFacts, SourceError> {
        let identity = self.identity()?;
        let is_cdb = identity.is_cdb;
        let config = self.database().config().clone();
        let shown = &config.preflight;
        let user = if is_cdb { "C##CDC" } else { "CDC" }.to_owned();

        // the grants the user lacks, as `missing-grant:` names them (FLASHBACK ANY TABLE is
        // every captured table's, below)
        let lacked: Vec<Grant> = shown
            .missing_grants
            .iter()
            .filter_map(|text| Grant::from_config(text))
            .collect();
        if lacked.contains(&Grant::CreateSession) {
            return Err(SourceError::ora(
                OraCode::NO_CREATE_SESSION_PRIVILEGE,
                format!("ORA-01045: user {user} lacks CREATE SESSION privilege; logon denied"),
            ));
        }
        let mut reads = PreflightReads::new(is_cdb);
        // a read of the simulated database: allowed, or refused as Oracle refuses it
        let mut read = |read: PreflightRead| -> Result<Option<()>, SourceError> {
            reads.run(&mut (), read, |_| refused(&lacked, read, is_cdb))
        };

        let database = read(PreflightRead::Database)?.map(|_| DatabaseFacts {
            log_mode: if shown.noarchivelog {
                LogMode::NoArchivelog
            } else {
                LogMode::Archivelog
            },
            supplemental: DatabaseSupplemental {
                minimal: !shown.no_minimal_supplemental,
                primary_key: false,
                all_columns: false,
            },
            role: identity.role.clone(),
            open_mode: identity.open_mode.clone(),
        });

        let mut captured: Vec<TableId> = Vec::new();
        if read(PreflightRead::CapturedTables)?.is_some() {
            for object in self.resolve_objects(filter)? {
                if !captured.contains(&object.table) {
                    captured.push(object.table);
                }
            }
        }
        let layouts = self.table_layouts(&captured)?;
        let mut tables = Vec::new();
        let mut long = Vec::new();
        for (i, layout) in layouts.iter().enumerate() {
            let supplemental = read(PreflightRead::TableLogGroups)?.map(|_| {
                if names(&shown.tables_without_supplemental, &layout.table) {
                    TableSupplemental::default()
                } else {
                    TableSupplemental {
                        all_columns: layout.supplemental.all_columns,
                        primary_key: layout.supplemental.primary_key,
                    }
                }
            });
            let usable_key = read(PreflightRead::TableKeys)?.map(|_| {
                matches!(
                    layout.key_source,
                    KeySource::PrimaryKey | KeySource::UniqueIndex
                ) && !names(&shown.keyless_tables, &layout.table)
            });
            tables.push(TableFacts {
                table: layout.table.clone(),
                supplemental,
                usable_key,
            });
            if read(PreflightRead::TableColumns)?.is_some() {
                long.extend(long_names(
                    &layout.table,
                    layout.columns.iter().map(|c| c.name.as_str()),
                ));
                if shown.long_names && i == 0 {
                    long.extend(long_names(&layout.table, [SIM_LONG_COLUMN]));
                }
            }
        }

        let views = preflight_views(is_cdb);
        let mut missing_grants = Vec::new();
        for text in &shown.missing_grants {
            match Grant::from_config(text) {
                // a view of the other kind of database is nothing this one reads
                Some(Grant::SelectOnView(view)) if !views.contains(&view.as_str()) => {}
                Some(grant) => missing_grants.push(grant),
                // FLASHBACK ANY TABLE, and no grant on any table either
                None => {
                    missing_grants.extend(tables.iter().map(|t| Grant::Flashback(t.table.clone())))
                }
            }
        }
        if !config.dictionary_build_grant {
            missing_grants.push(Grant::ExecuteDbmsLogmnrD);
        }

        let enabled_threads = read(PreflightRead::Threads)?.map(|_| match shown.threads {
            Some(n) => (1..=n.max(1)).map(RedoThread).collect(),
            None => identity.enabled_threads.clone(),
        });
        let version = read(PreflightRead::Version)?.map(|_| match shown.version {
            Some((major, minor)) => DatabaseVersion {
                text: format!("{major}.{minor}.0.0.0"),
                major,
            },
            None => DatabaseVersion {
                text: SIM_VERSION.to_owned(),
                major: 23,
            },
        });
        let log_switches = read(PreflightRead::LogSwitches)?.map(|_| LogSwitches {
            last_hour: shown.switches_per_hour,
            busiest_hour_last_day: shown.switches_per_hour,
        });
        let oldest_archived_log = match read(PreflightRead::ArchivedLogs)? {
            None => None,
            Some(_) => match shown.archive_from_scn {
                Some(scn) => Some(OldestArchivedLog {
                    first_scn: Scn(scn),
                    first_time: None,
                }),
                None => self
                    .log_inventory(&LogInventoryQuery {
                        from: Scn(0),
                        mode: CaptureMode::ArchiveOnly,
                        destination: None,
                    })?
                    .into_iter()
                    .filter(|log| log.archived && !log.is_purged())
                    .map(|log| log.first_scn)
                    .min()
                    .map(|first_scn| OldestArchivedLog {
                        first_scn,
                        first_time: None,
                    }),
            },
        };
        let undo_retention_secs =
            read(PreflightRead::UndoRetention)?.map(|_| config.undo_retention_secs);

        Ok(PreflightFacts {
            database,
            tables,
            user,
            missing_grants,
            enabled_threads,
            is_cdb,
            version,
            long_names: long,
            log_switches,
            oldest_archived_log,
            undo_retention_secs,
            unreadable: reads.finish(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{SimConfig, SimDatabase};

    fn facts(preflight: SimPreflight) -> PreflightFacts {
        sim_facts(preflight).expect("facts")
    }

    fn sim_facts(preflight: SimPreflight) -> Result<PreflightFacts, SourceError> {
        let db = SimDatabase::new(SimConfig {
            preflight,
            ..SimConfig::default()
        })
        .expect("a simulated database");
        SimSource::new(db).preflight_facts(&|t: &TableId| t.owner == "APP" && t.table != "EVENTS")
    }

    fn missing(grants: &[&str]) -> SimPreflight {
        SimPreflight::from_conditions(
            &grants
                .iter()
                .map(|g| SimPreflightCondition::MissingGrant((*g).to_owned()))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn a_default_simulated_database_is_ready_for_capture() {
        let f = facts(SimPreflight::default());
        let database = f.database.as_ref().expect("V$DATABASE read");
        assert_eq!(database.log_mode, LogMode::Archivelog);
        assert!(database.supplemental.minimal);
        assert!(!f.tables.is_empty());
        assert!(
            f.tables.iter().all(|t| t.usable_key == Some(true)
                && t.supplemental.is_some_and(TableSupplemental::any)),
            "{f:?}"
        );
        assert!(f.missing_grants.is_empty());
        assert!(f.unreadable.is_empty());
        assert_eq!(f.enabled_threads, Some(vec![RedoThread(1)]));
        assert_eq!(f.version.map(|v| v.major), Some(23));
        assert!(f.long_names.is_empty());
        assert_eq!(f.undo_retention_secs, Some(900));
    }

    #[test]
    fn each_condition_changes_its_fact() {
        let f = facts(SimPreflight::from_conditions(&[
            SimPreflightCondition::NoArchivelog,
            SimPreflightCondition::NoTableSupplemental("app.orders".into()),
            SimPreflightCondition::KeylessTable("APP.CUSTOMERS".into()),
            SimPreflightCondition::MissingGrant("FLASHBACK ANY TABLE".into()),
            SimPreflightCondition::Threads(2),
            SimPreflightCondition::Version {
                major: 12,
                minor: 2,
            },
            SimPreflightCondition::LongNames,
            SimPreflightCondition::SwitchesPerHour(12),
            SimPreflightCondition::ArchiveFromScn(5000),
        ]));
        assert_eq!(
            f.database.as_ref().map(|d| &d.log_mode),
            Some(&LogMode::NoArchivelog)
        );
        let table = |name: &str| {
            f.tables
                .iter()
                .find(|t| t.table.table == name)
                .expect("captured")
        };
        assert_eq!(
            table("ORDERS").supplemental.map(TableSupplemental::any),
            Some(false)
        );
        assert_eq!(
            table("CUSTOMERS").supplemental.map(TableSupplemental::any),
            Some(true)
        );
        assert_eq!(table("CUSTOMERS").usable_key, Some(false));
        assert_eq!(table("ORDERS").usable_key, Some(true));
        assert_eq!(
            f.missing_grants.len(),
            f.tables.len(),
            "flashback on every table"
        );
        assert_eq!(f.enabled_threads.map(|t| t.len()), Some(2));
        assert_eq!(f.version.map(|v| v.text), Some("12.2.0.0.0".to_owned()));
        assert_eq!(f.long_names.len(), 1);
        assert_eq!(f.log_switches.map(LogSwitches::per_hour), Some(12));
        assert_eq!(f.oldest_archived_log.map(|l| l.first_scn), Some(Scn(5000)));
    }

    #[test]
    fn without_create_session_the_login_is_refused() {
        let error = sim_facts(missing(&["CREATE SESSION"])).expect_err("no login");
        assert_eq!(error.ora_code(), Some(OraCode::NO_CREATE_SESSION_PRIVILEGE));
        assert!(
            error.to_string().contains("user CDC lacks CREATE SESSION"),
            "{error}"
        );
    }

    #[test]
    fn a_view_not_granted_is_refused_to_the_reads_of_it_alone() {
        let f = facts(missing(&[
            "SELECT ON DBA_TAB_COLUMNS",
            "SELECT ON V$INSTANCE",
        ]));
        // DBA_TAB_COLUMNS: the keys' statement and the columns' read it; V$INSTANCE the release
        assert_eq!(
            f.unreadable.iter().map(|u| u.read).collect::<Vec<_>>(),
            [
                PreflightRead::TableKeys,
                PreflightRead::TableColumns,
                PreflightRead::Version
            ]
        );
        assert!(f.unreadable.iter().all(|u| u.error.contains("ORA-00942")));
        assert!(f.tables.iter().all(|t| t.usable_key.is_none()));
        assert!(f.tables.iter().all(|t| t.supplemental.is_some()));
        assert_eq!(f.version, None);
        assert!(f.database.is_some() && f.enabled_threads.is_some());
        assert_eq!(
            f.missing_grants,
            [
                Grant::SelectOnView("DBA_TAB_COLUMNS".into()),
                Grant::SelectOnView("V$INSTANCE".into())
            ]
        );
    }

    #[test]
    fn grants_the_check_never_reads_with_are_listed_only() {
        let f = facts(missing(&[
            "SELECT ON GV$TRANSACTION",
            "SELECT ON GV$SESSION",
            "EXECUTE ON DBMS_LOGMNR",
            // a CDB's view: nothing a non-CDB reads
            "SELECT ON CDB_OBJECTS",
        ]));
        assert!(f.unreadable.is_empty(), "{:?}", f.unreadable);
        assert_eq!(
            f.missing_grants,
            [
                Grant::SelectOnView("GV$TRANSACTION".into()),
                Grant::SelectOnView("GV$SESSION".into()),
                Grant::ExecuteDbmsLogmnr
            ]
        );
    }
}
