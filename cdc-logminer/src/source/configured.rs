//! The source a connector configuration names, built for the engine: `cdc.source=sim` (the
//! redo simulator with a seeded workload) or `cdc.source=oracle` (LogMiner through the
//! `oracle` crate, feature `oracle`). [`from_config`] is what the `oracle-cdc` binary and an
//! embedding service call; the `sim_*` functions also serve the demo and the tests, which
//! check what a capture delivered against what the simulated database committed.
//!
//! # Error handling
//!
//! Nothing here is retried: a configuration that names an impossible source (a scenario file
//! that does not load, the Oracle source in a build without it, a login that fails) is a
//! [`SourceSetupError`] for the caller to report. Once built, the source's own calls are
//! retried or stopped by the engine's policy.

use cdc_core::config::{
    CdcConfig, SimOpenMode, SimPreflightCondition, SimRole, SimSettings, SourceKind,
};
use cdc_core::{Scn, TableId, TableLayout};
use cdc_offset::Position;

use crate::sim::{
    Scenario, SimConfig, SimDatabase, SimPreflight, SimSource, Workload, WorkloadConfig,
};
use crate::source::preflight::{Preflight, PreflightFacts};
use crate::source::{
    ActiveTransaction, CapturedObject, DatabaseIdentity, DatabaseRole, DictionaryBuild, LogFile,
    LogInventoryQuery, MineSummary, MiningQuery, MiningWindow, NlsSettings, OpenMode, RedoSource,
    RowSink, SessionRef, SourceError, TableFilter,
};

/// Workload events the simulated database runs each time the engine asks for its current SCN:
/// the database keeps moving while it is mined.
const SIM_EVENTS_PER_POLL: usize = 16;

/// The database a configuration mines, as one type the engine can be opened over.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfiguredSource {
    /// `cdc.source=sim`.
    Sim(Box<SimSource>),
    /// `cdc.source=oracle`.
    #[cfg(feature = "oracle")]
    Oracle(Box<OracleSource>),
}

#[cfg(feature = "oracle")]
use crate::source::oracle::OracleSource;

/// The source `config` names (`cdc.source`), ready for [`CaptureEngine::open`]. `position` is
/// the stored position the task resumes from, if any: the simulator replays its workload until
/// its redo reaches it (see [`sim_source`]).
///
/// [`CaptureEngine::open`]: crate::CaptureEngine::open
pub fn from_config(
    config: &CdcConfig,
    position: Option<&Position>,
) -> Result<ConfiguredSource, SourceSetupError> {
    match config.source {
        SourceKind::Sim => Ok(ConfiguredSource::Sim(Box::new(sim_source(
            config, position,
        )?))),
        #[cfg(feature = "oracle")]
        SourceKind::Oracle => Ok(ConfiguredSource::Oracle(Box::new(oracle_source(config)?))),
        #[cfg(not(feature = "oracle"))]
        SourceKind::Oracle => Err(SourceSetupError::OracleNotBuilt),
    }
}

/// Calls `$call` on whichever source is inside.
macro_rules! each_source {
    ($self:ident, $source:ident => $call:expr) => {
        match $self {
            ConfiguredSource::Sim($source) => $call,
            #[cfg(feature = "oracle")]
            ConfiguredSource::Oracle($source) => $call,
        }
    };
}

impl RedoSource for ConfiguredSource {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        each_source!(self, s => s.identity())
    }

    fn current_scn(&mut self) -> Result<Scn, SourceError> {
        each_source!(self, s => s.current_scn())
    }

    fn log_inventory(&mut self, query: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        each_source!(self, s => s.log_inventory(query))
    }

    fn resolve_objects(
        &mut self,
        filter: &TableFilter<'_>,
    ) -> Result<Vec<CapturedObject>, SourceError> {
        each_source!(self, s => s.resolve_objects(filter))
    }

    fn table_layouts(&mut self, tables: &[TableId]) -> Result<Vec<TableLayout>, SourceError> {
        each_source!(self, s => s.table_layouts(tables))
    }

    fn last_ddl_after(
        &mut self,
        tables: &[TableId],
        scn: Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        each_source!(self, s => s.last_ddl_after(tables, scn))
    }

    fn start_session(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        each_source!(self, s => s.start_session(window))
    }

    fn build_dictionary(&mut self) -> Result<DictionaryBuild, SourceError> {
        each_source!(self, s => s.build_dictionary())
    }

    fn end_session(&mut self) -> Result<(), SourceError> {
        each_source!(self, s => s.end_session())
    }

    fn mine(
        &mut self,
        query: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        each_source!(self, s => s.mine(query, sink))
    }

    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        each_source!(self, s => s.active_transactions())
    }

    fn session_exists(&mut self, session: SessionRef) -> Result<bool, SourceError> {
        each_source!(self, s => s.session_exists(session))
    }

    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        each_source!(self, s => s.nls())
    }

    fn reconnect(&mut self) -> Result<(), SourceError> {
        each_source!(self, s => s.reconnect())
    }

    fn snapshot_reader(&mut self) -> Result<Box<dyn crate::source::SnapshotReader>, SourceError> {
        each_source!(self, s => s.snapshot_reader())
    }
}

impl Preflight for ConfiguredSource {
    fn preflight_facts(&mut self, filter: &TableFilter<'_>) -> Result<PreflightFacts, SourceError> {
        each_source!(self, s => s.preflight_facts(filter))
    }
}

/// Why the source could not be built. Each is a stop with a CDC code (its `From` for
/// [`CdcError`](cdc_core::CdcError), beside the engine's classification of the same failures
/// mid-run).
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum SourceSetupError {
    #[error("simulator: {0}")]
    Sim(String),
    #[error(
        "cdc.source=oracle needs the Oracle source, which this build of the crate was made \
         without (its feature `oracle`); build with it (Oracle Instant Client is then needed \
         at run time), or set cdc.source=sim to run the simulator"
    )]
    OracleNotBuilt,
    /// `cdc.source=oracle` without `cdc.database.user` and `cdc.database.password`.
    #[error("cdc.database.user and cdc.database.password are required for cdc.source=oracle")]
    MissingLogin,
    /// Connecting to the database failed (the driver's error, typed).
    #[error("connecting to Oracle failed: {0}")]
    Oracle(#[source] SourceError),
}

/// The simulated database of a configuration (`cdc.sim.seed`, `cdc.sim.changes`,
/// `cdc.sim.scenario`, `cdc.sim.backlog`). A simulator restarted from its seed replays the
/// same redo; when a stored position exists, the workload is replayed until the redo reaches
/// it, so the restarted task finds the log and the address it resumes from, as it would on a
/// database that kept running. With `cdc.sim.backlog` the whole workload has run before the
/// source is returned: the task catches up on redo that is already there.
pub fn sim_source(
    config: &CdcConfig,
    position: Option<&Position>,
) -> Result<SimSource, SourceSetupError> {
    let sim = &config.sim;
    let mut source = sim_database(sim)?;
    if sim.backlog {
        run_to_end(&mut source)?;
    } else if let Some(position) = position {
        while !reached(source.database(), position) {
            let more = source
                .advance(64)
                .map_err(|e| SourceSetupError::Sim(e.to_string()))?;
            if !more {
                break;
            }
        }
    }
    Ok(source)
}

/// The tables `cdc.sim.table.rows` fills: the standard schema's, but the LOB table.
pub const SIM_LOADED_TABLES: [(&str, &str); 5] = [
    ("APP", "CUSTOMERS"),
    ("APP", "ORDERS"),
    ("APP", "EVENTS"),
    ("APP", "CODES"),
    ("HR", "AUDIT_LOG"),
];

/// The simulated database with its workload not yet run (its tables filled first, with
/// `cdc.sim.table.rows`).
fn sim_database(sim: &SimSettings) -> Result<SimSource, SourceSetupError> {
    let mut source = sim_database_empty(sim)?;
    if sim.table_rows > 0 && sim.scenario.is_none() {
        for (i, (owner, table)) in SIM_LOADED_TABLES.iter().enumerate() {
            let mut id = cdc_core::TableId::new(*owner, *table);
            if let Some(pdb) = &sim.session_pdb {
                id = id.in_pdb(pdb.clone());
            }
            source
                .database_mut()
                .load_rows(&id, sim.table_rows, sim.seed.wrapping_add(i as u64))
                .map_err(|e| SourceSetupError::Sim(format!("loading {id}: {e}")))?;
        }
    }
    Ok(source)
}

fn sim_database_empty(sim: &SimSettings) -> Result<SimSource, SourceSetupError> {
    Ok(match &sim.scenario {
        Some(path) => {
            let mut source = Scenario::load(path)
                .and_then(|scenario| scenario.into_source(SIM_EVENTS_PER_POLL))
                .map_err(|e| SourceSetupError::Sim(format!("{}: {e}", path.display())))?;
            // the key, when given, presents its conditions over the scenario's own
            if !sim.preflight.is_empty() {
                let db = source.database_mut();
                db.config.preflight = SimPreflight::from_conditions(&sim.preflight);
                if let Some(secs) = undo_retention(sim) {
                    db.set_undo_retention(secs);
                }
            }
            source
        }
        None => {
            let db = SimDatabase::new(SimConfig {
                seed: sim.seed,
                role: sim_role(sim.role),
                open_mode: sim_open_mode(sim.open_mode),
                standby_apply_lag_logs: sim.standby_apply_lag_logs,
                pdbs: sim.session_pdb.iter().cloned().collect(),
                session_pdb: sim.session_pdb.clone(),
                dictionary_build_grant: sim.dictionary_build_grant,
                undo_retention_secs: undo_retention(sim)
                    .unwrap_or(SimConfig::default().undo_retention_secs),
                preflight: SimPreflight::from_conditions(&sim.preflight),
                ..SimConfig::default()
            })
            .map_err(|e| SourceSetupError::Sim(e.to_string()))?;
            let workload = Workload::random(WorkloadConfig {
                seed: sim.seed,
                changes: sim.changes,
                // the build a captured database has made before its redo: rows written before
                // an ALTER that no exact version decodes (a backlog's, mined after the whole
                // workload ran) are replayed from it
                dictionary_build: true,
                ..WorkloadConfig::default()
            });
            SimSource::with_workload(db, workload, SIM_EVENTS_PER_POLL)
        }
    })
}

/// `undo-retention:` of `cdc.sim.preflight`: the simulated database's UNDO_RETENTION itself,
/// so its snapshot reads fail as a check warns.
fn undo_retention(sim: &SimSettings) -> Option<u64> {
    sim.preflight.iter().find_map(|c| match c {
        SimPreflightCondition::UndoRetention(secs) => Some(*secs),
        _ => None,
    })
}

fn sim_role(role: SimRole) -> DatabaseRole {
    match role {
        SimRole::Primary => DatabaseRole::Primary,
        SimRole::PhysicalStandby => DatabaseRole::PhysicalStandby,
        SimRole::LogicalStandby => DatabaseRole::LogicalStandby,
        SimRole::SnapshotStandby => DatabaseRole::SnapshotStandby,
    }
}

fn sim_open_mode(open: SimOpenMode) -> OpenMode {
    match open {
        SimOpenMode::ReadWrite => OpenMode::ReadWrite,
        SimOpenMode::ReadOnly => OpenMode::ReadOnly,
        SimOpenMode::ReadOnlyWithApply => OpenMode::ReadOnlyWithApply,
        SimOpenMode::Mounted => OpenMode::Mounted,
    }
}

/// Runs the simulated database's workload to its end.
fn run_to_end(source: &mut SimSource) -> Result<(), SourceSetupError> {
    while source
        .advance(4096)
        .map_err(|e| SourceSetupError::Sim(e.to_string()))?
    {}
    Ok(())
}

/// Whether the simulated redo contains everything a run that stored `position` had mined.
fn reached(db: &SimDatabase, position: &Position) -> bool {
    let commit_scn = position.last_commit.as_ref().map(|c| c.scn);
    db.current_scn() >= position.resume.scn
        && commit_scn.is_none_or(|scn| db.current_scn() >= scn)
        && position
            .resume
            .addr
            .is_none_or(|addr| db.redo_reached(addr.rs_id()))
}

/// The real database `config` names (`cdc.database.*`), connected.
#[cfg(feature = "oracle")]
pub fn oracle_source(
    config: &CdcConfig,
) -> Result<crate::source::oracle::OracleSource, SourceSetupError> {
    crate::source::oracle::OracleSource::connect(connect_options(config)?)
        .map_err(SourceSetupError::Oracle)
}

/// How the Oracle client reaches the database `config` names: the login and the endpoint of
/// `cdc.database.*`, and the wallet, which is part of an address built from the host (TLS and
/// a wallet beside `cdc.database.url` are written in the connect string itself).
pub fn connect_options(
    config: &CdcConfig,
) -> Result<crate::source::oracle::ConnectOptions, SourceSetupError> {
    use cdc_core::config::DatabaseEndpoint;

    let login = config
        .database
        .login
        .as_ref()
        .ok_or(SourceSetupError::MissingLogin)?;
    let mut options = crate::source::oracle::ConnectOptions {
        url: None,
        host: None,
        port: None,
        service: None,
        sid: None,
        user: login.user.clone(),
        password: login.password.expose_secret().to_owned(),
        wallet_location: config
            .database
            .wallet_location
            .as_ref()
            .map(|p| p.display().to_string()),
        // TCPS is asked for in cdc.database.url; the Java trust store keys that once turned
        // it on for a host are refused (the Oracle client reads no trust store)
        tls: false,
    };
    match &login.endpoint {
        DatabaseEndpoint::ConnectString(url) => options.url = Some(url.clone()),
        DatabaseEndpoint::Service {
            host,
            port,
            service,
        } => {
            options.host = Some(host.clone());
            options.port = Some(*port);
            options.service = Some(service.clone());
        }
        DatabaseEndpoint::Sid { host, port, sid } => {
            options.host = Some(host.clone());
            options.port = Some(*port);
            options.sid = Some(sid.clone());
        }
    }
    Ok(options)
}

/// The committed changes a capture of the simulator with `config` must deliver, in commit
/// order: the simulated database of the configuration run to its end, filtered by the
/// captured tables and excluded users. The demo and the end-to-end tests check what reached
/// Kafka against it.
pub fn sim_expected(
    config: &CdcConfig,
) -> Result<Vec<crate::sim::TruthTransaction>, SourceSetupError> {
    let mut source = sim_source(config, None)?;
    run_to_end(&mut source)?;
    let tables = &config.tables;
    let captured =
        |t: &cdc_core::TableId| tables.is_table_included(t.pdb.as_deref(), &t.owner, &t.table);
    Ok(source
        .database()
        .truth()
        .captured(&captured, &tables.users_exclude))
}

/// The simulated database of `config` with its whole workload run: what a consumer of a
/// capture that snapshotted its tables and streamed the rest ends with is its committed rows
/// ([`SimDatabase::committed_rows`]).
pub fn sim_final_database(config: &CdcConfig) -> Result<SimDatabase, SourceSetupError> {
    let mut source = sim_source(config, None)?;
    run_to_end(&mut source)?;
    Ok(source.database().clone())
}

/// The SCN of the simulated database before its workload runs: as `cdc.start.scn`, a first
/// start captures the workload's whole history (the demo and the end-to-end tests).
pub fn sim_initial_scn(config: &CdcConfig) -> Result<cdc_core::Scn, SourceSetupError> {
    Ok(sim_database(&config.sim)?.database().current_scn())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::config::Config;

    fn validated(pairs: &[(&str, &str)]) -> CdcConfig {
        let mut config = Config::from_pairs([
            ("name", "keys"),
            ("cdc.topic.prefix", "cdc"),
            ("cdc.tables.include", "APP\\..*"),
        ]);
        for (key, value) in pairs {
            config.set(*key, *value);
        }
        config.validate().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn database_keys_reach_the_connect_options() {
        let login = [
            ("cdc.database.user", "C##CDC"),
            ("cdc.database.password", "s3cr3t"),
        ];
        let with = |extra: &[(&str, &str)]| {
            let mut pairs = login.to_vec();
            pairs.extend_from_slice(extra);
            connect_options(&validated(&pairs)).unwrap()
        };
        let service = with(&[
            ("cdc.database.host", "db.example.com"),
            ("cdc.database.port", "2484"),
            ("cdc.database.service", "ORCLCDB"),
            ("cdc.database.wallet.location", "/etc/oracle/wallet"),
        ]);
        assert_eq!(service.user, "C##CDC");
        assert_eq!(service.password, "s3cr3t");
        assert_eq!(
            service.connect_string().unwrap(),
            "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=db.example.com)(PORT=2484))\
             (CONNECT_DATA=(SERVICE_NAME=ORCLCDB))(SECURITY=(MY_WALLET_DIRECTORY=/etc/oracle/wallet)))"
        );
        let sid = with(&[("cdc.database.host", "db"), ("cdc.database.sid", "ORCL")]);
        assert_eq!(sid.port, Some(1521), "the port's default");
        assert!(sid.connect_string().unwrap().contains("(SID=ORCL)"));
        let url = with(&[(
            "cdc.database.url",
            "jdbc:oracle:thin:@tcps://db:2484/FREEPDB1",
        )]);
        assert_eq!(url.connect_string().unwrap(), "tcps://db:2484/FREEPDB1");
        // without a login there is nothing to connect with
        let sim = validated(&[("cdc.source", "sim")]);
        assert!(matches!(
            connect_options(&sim),
            Err(SourceSetupError::MissingLogin)
        ));
    }

    #[test]
    fn sim_keys_shape_the_simulated_database() {
        let truth = |extra: &[(&str, &str)]| {
            let mut pairs = vec![("cdc.source", "sim")];
            pairs.extend_from_slice(extra);
            let config = validated(&pairs);
            assert!(matches!(
                from_config(&config, None).unwrap(),
                ConfiguredSource::Sim(_)
            ));
            sim_expected(&config).unwrap()
        };
        let changes = |truth: &[crate::sim::TruthTransaction]| -> usize {
            truth.iter().map(|t| t.changes.len()).sum()
        };
        let one = truth(&[("cdc.sim.seed", "3"), ("cdc.sim.changes", "300")]);
        assert_eq!(
            one,
            truth(&[("cdc.sim.seed", "3"), ("cdc.sim.changes", "300")])
        );
        assert_ne!(
            one,
            truth(&[("cdc.sim.seed", "4"), ("cdc.sim.changes", "300")])
        );
        let more = truth(&[("cdc.sim.seed", "3"), ("cdc.sim.changes", "900")]);
        assert!(changes(&more) > changes(&one), "cdc.sim.changes");

        // a backlog has run whole before the source is handed over
        let backlog = |on: &str| {
            let config = validated(&[
                ("cdc.source", "sim"),
                ("cdc.sim.changes", "300"),
                ("cdc.sim.backlog", on),
            ]);
            sim_source(&config, None).unwrap().database().current_scn()
        };
        assert!(backlog("true") > backlog("false"));

        // tables filled before the workload, as committed rows a snapshot reads
        let rows = |n: &str| {
            let config = validated(&[
                ("cdc.source", "sim"),
                ("cdc.sim.changes", "0"),
                ("cdc.sim.table.rows", n),
            ]);
            let db = sim_final_database(&config).unwrap();
            SIM_LOADED_TABLES
                .iter()
                .map(|(o, t)| {
                    db.committed_rows(&cdc_core::TableId::new(*o, *t))
                        .unwrap()
                        .len()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(rows("0"), [0; 5]);
        assert_eq!(rows("120"), [120; 5]);

        // the topology the simulated database reports, and the container of the session
        let identity = |extra: &[(&str, &str)]| {
            let mut pairs = vec![("cdc.source", "sim"), ("cdc.sim.changes", "300")];
            pairs.extend_from_slice(extra);
            sim_source(&validated(&pairs), None)
                .unwrap()
                .identity()
                .unwrap()
        };
        let primary = identity(&[]);
        assert_eq!(
            (primary.role, primary.open_mode, primary.session_pdb),
            (DatabaseRole::Primary, OpenMode::ReadWrite, None)
        );
        let standby = identity(&[
            ("cdc.sim.database.role", "physical_standby"),
            ("cdc.sim.open.mode", "read_only_with_apply"),
        ]);
        assert_eq!(
            (standby.role, standby.open_mode),
            (DatabaseRole::PhysicalStandby, OpenMode::ReadOnlyWithApply)
        );
        for (role, expected) in [
            ("logical_standby", DatabaseRole::LogicalStandby),
            ("snapshot_standby", DatabaseRole::SnapshotStandby),
        ] {
            assert_eq!(identity(&[("cdc.sim.database.role", role)]).role, expected);
        }
        for (open, expected) in [
            ("read_only", OpenMode::ReadOnly),
            ("mounted", OpenMode::Mounted),
        ] {
            assert_eq!(identity(&[("cdc.sim.open.mode", open)]).open_mode, expected);
        }
        let pdb = identity(&[("cdc.sim.session.pdb", "SALESPDB")]);
        assert!(pdb.is_cdb);
        assert_eq!(pdb.session_pdb.as_deref(), Some("SALESPDB"));
        // without EXECUTE on DBMS_LOGMNR_D a build fails as PL/SQL does; with it, it works
        let build = |grant: &str| {
            let config = validated(&[
                ("cdc.source", "sim"),
                ("cdc.sim.changes", "300"),
                ("cdc.sim.dictionary.build.grant", grant),
            ]);
            sim_source(&config, None).unwrap().build_dictionary()
        };
        assert!(build("true").is_ok());
        let denied = build("false").unwrap_err();
        assert!(denied.is_missing_build_grant(), "{denied}");
        // a standby lists only what it has applied: the lag hides the newest archived logs
        let archived = |lag: &str| {
            let config = validated(&[
                ("cdc.source", "sim"),
                ("cdc.sim.changes", "3000"),
                ("cdc.sim.backlog", "true"),
                ("cdc.sim.database.role", "physical_standby"),
                ("cdc.sim.open.mode", "read_only"),
                ("cdc.sim.standby.apply.lag.logs", lag),
            ]);
            sim_source(&config, None)
                .unwrap()
                .log_inventory(&LogInventoryQuery {
                    from: Scn::ZERO,
                    mode: cdc_core::config::CaptureMode::ArchiveOnly,
                    destination: None,
                })
                .unwrap()
                .len()
        };
        assert_eq!(archived("2") + 2, archived("0"));

        // a scenario file replaces the generated workload
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one-insert.json");
        std::fs::write(
            &path,
            r#"{"name": "one-insert", "events": [
              {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "a"}},
              {"event": "commit", "session": "s1"}
            ]}"#,
        )
        .unwrap();
        let scenario = truth(&[("cdc.sim.scenario", path.to_str().unwrap())]);
        assert_eq!(changes(&scenario), 1, "{scenario:?}");
    }
}
