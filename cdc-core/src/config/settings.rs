//! The validated, typed configuration downstream code reads.
//!
//! Every field has its default applied and its range checked; durations are
//! [`Duration`]s and sizes `u64` bytes. Fields are grouped as the key table groups the keys.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::choices::{
    CaptureMode, DecimalMode, DecodeErrorAction, ExactlyOnceSupport, JournalConverterKind,
    KeyMissing, LobMode, LobOversizeAction, MaxAgeAction, MiningMode, NameAdjustment, OrphanAction,
    OutputFormat, SimOpenMode, SimRole, SnapshotMode, SourceKind, TemporalMode,
    TransactionBoundary,
};
use super::error::ConfigWarning;
use super::secret::{Properties, Secret};
use super::tables::{TableMap, TableSelection};
use super::topics::TopicTemplate;
use super::values::{HostPort, TimeOfDay};
use crate::position::Scn;

/// The whole validated configuration.
#[derive(Debug, Clone)]
pub struct CdcConfig {
    pub connect: ConnectSettings,
    pub source: SourceKind,
    pub sim: SimSettings,
    pub database: DatabaseSettings,
    pub capture: CaptureSettings,
    pub mining: MiningSettings,
    pub dictionary: DictionarySettings,
    pub buffer: BufferSettings,
    pub journal: JournalSettings,
    pub transaction: TransactionSettings,
    pub lob: LobSettings,
    pub decode: DecodeSettings,
    pub tables: TableSelection,
    pub keys: KeySettings,
    pub topics: TopicSettings,
    pub kafka: KafkaSettings,
    pub snapshot: SnapshotSettings,
    pub retry: RetrySettings,
    pub heartbeat: HeartbeatSettings,
    pub poll: PollSettings,
    pub eos: EosSettings,
    pub rest: RestSettings,
    pub(crate) warnings: Vec<ConfigWarning>,
}

impl CdcConfig {
    /// What validation found worth telling the operator; log these at start.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// Whether changes of `[PDB.]OWNER.TABLE` are captured.
    pub fn is_table_included(&self, pdb: Option<&str>, owner: &str, table: &str) -> bool {
        self.tables.is_table_included(pdb, owner, table)
    }

    /// Whether the values of this column are dropped in the parser.
    pub fn is_column_excluded(
        &self,
        pdb: Option<&str>,
        owner: &str,
        table: &str,
        column: &str,
    ) -> bool {
        self.tables.is_column_excluded(pdb, owner, table, column)
    }

    /// Decode threads for a machine with `available_cores`: see [`MiningSettings::decode_threads_for`].
    pub fn decode_threads(&self, available_cores: usize) -> usize {
        self.mining.decode_threads_for(available_cores)
    }

    /// The spill directory: `cdc.buffer.spill.dir`, else `<temp_dir>/oracle-cdc-spill/<name>`.
    /// The caller passes the worker's temporary directory (this crate reads no environment).
    pub fn spill_dir(&self, temp_dir: &Path) -> PathBuf {
        match &self.buffer.spill_dir {
            Some(dir) => dir.clone(),
            None => default_spill_dir(temp_dir, &self.connect.name),
        }
    }

    /// The topic of a table's records, from `cdc.topic.template`.
    pub fn topic_for_table(
        &self,
        database: &str,
        pdb: Option<&str>,
        schema: &str,
        table: &str,
    ) -> String {
        self.topics.template.render(database, pdb, schema, table)
    }

    /// Whether several PDBs are captured from the CDB root.
    pub fn is_cdb(&self) -> bool {
        !self.database.pdbs.is_empty()
    }

    /// Whether the connector ends Kafka transactions itself (exactly-once delivery); validation
    /// refuses `exactly.once.support=required` otherwise.
    pub fn is_exactly_once(&self) -> bool {
        self.connect.transaction_boundary == TransactionBoundary::Connector
    }
}

/// The default spill directory of a connector: `<temp_dir>/oracle-cdc-spill/<name>`, the name
/// made one path component (see [`path_safe`]). The one rule: the buffer's own default uses it.
pub fn default_spill_dir(temp_dir: &Path, connector_name: &str) -> PathBuf {
    temp_dir
        .join("oracle-cdc-spill")
        .join(path_safe(connector_name))
}

/// A name as one path component: characters other than letters, digits, `.`, `_` and `-`
/// become `_`, a name of dots only becomes underscores and an empty one `_`, so a name can
/// never climb out of the directory or name a second level.
fn path_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "_".to_owned()
    } else if safe.chars().all(|c| c == '.') {
        safe.replace('.', "_")
    } else {
        safe
    }
}

/// The Kafka Connect keys.
#[derive(Debug, Clone)]
pub struct ConnectSettings {
    /// The connector name (`name`).
    pub name: String,
    pub connector_class: Option<String>,
    pub exactly_once_support: ExactlyOnceSupport,
    pub transaction_boundary: TransactionBoundary,
    pub key_converter: Option<String>,
    pub value_converter: Option<String>,
    pub key_converter_schemas_enable: bool,
    pub value_converter_schemas_enable: bool,
    pub offset_storage_topic: String,
    /// The worker's brokers (`bootstrap.servers`), `host:port` each.
    pub bootstrap_servers: Vec<String>,
    /// Keys without the `cdc.` prefix that the connector does not read, kept for the worker.
    pub pass_through: Properties,
}

/// The redo simulator (`cdc.source=sim`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimSettings {
    pub seed: u64,
    pub scenario: Option<PathBuf>,
    pub changes: u64,
    /// `cdc.sim.backlog`: the workload has run before capture starts.
    pub backlog: bool,
    /// `cdc.sim.database.role` and `cdc.sim.open.mode`: the topology the database reports.
    pub role: SimRole,
    pub open_mode: SimOpenMode,
    /// `cdc.sim.standby.apply.lag.logs`: on a physical standby, the newest archived logs not
    /// applied yet.
    pub standby_apply_lag_logs: u32,
    /// `cdc.sim.session.pdb`: the database is a CDB with this one PDB, and the session is
    /// connected to it.
    pub session_pdb: Option<String>,
    /// `cdc.sim.dictionary.build.grant`: the capture user may run DBMS_LOGMNR_D.BUILD.
    pub dictionary_build_grant: bool,
    /// `cdc.sim.table.rows`: rows each table of the standard schema (but the LOB table) holds
    /// before the workload starts.
    pub table_rows: u64,
    /// `cdc.sim.preflight`: the conditions the simulated database presents to a preflight
    /// check (`oracle-cdc-admin check`); empty: it passes every check.
    pub preflight: Vec<SimPreflightCondition>,
}

/// One condition of `cdc.sim.preflight`: what the simulated database reports instead of a
/// database ready for capture. Role and open mode are `cdc.sim.database.role` and
/// `cdc.sim.open.mode`; the grant of DBMS_LOGMNR_D is `cdc.sim.dictionary.build.grant`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimPreflightCondition {
    /// `noarchivelog`: V$DATABASE.LOG_MODE is NOARCHIVELOG.
    NoArchivelog,
    /// `no-supplemental-logging`: no minimal supplemental logging at the database level.
    NoSupplementalLogging,
    /// `no-table-supplemental:OWNER.TABLE`: the captured table has no supplemental log group.
    NoTableSupplemental(String),
    /// `missing-grant:PRIVILEGE`: the capture user lacks it (one of [`SIM_PREFLIGHT_GRANTS`]).
    MissingGrant(String),
    /// `threads:N`: N enabled redo threads (RAC).
    Threads(u32),
    /// `version:MAJOR[.MINOR]`: the release the database reports.
    Version { major: u32, minor: u32 },
    /// `long-names`: a captured column's name is longer than 30 bytes.
    LongNames,
    /// `keyless-table:OWNER.TABLE`: the captured table has no primary key and no unique key
    /// on NOT NULL columns.
    KeylessTable(String),
    /// `switches-per-hour:N`: log switches in the busiest hour of the last day.
    SwitchesPerHour(u32),
    /// `archive-from-scn:N`: the oldest archived log still available starts at this SCN.
    ArchiveFromScn(u64),
    /// `undo-retention:SECONDS`: the UNDO_RETENTION parameter.
    UndoRetention(u64),
}

/// The privileges `missing-grant:` accepts, as the fix SQL grants them: the privileges, and
/// SELECT on each view the connector or `oracle-cdc-admin check` reads (the `CDB_` views and
/// the containers' matter in a CDB only). A view the check reads is then refused to it
/// (ORA-00942), and CREATE SESSION refuses the login (ORA-01045).
pub const SIM_PREFLIGHT_GRANTS: &[&str] = &[
    "CREATE SESSION",
    "LOGMINING",
    "SELECT ANY TRANSACTION",
    "EXECUTE ON DBMS_LOGMNR",
    "FLASHBACK ANY TABLE",
    "SELECT ON V$DATABASE",
    "SELECT ON V$THREAD",
    "SELECT ON V$ARCHIVE_DEST_STATUS",
    "SELECT ON V$LOG",
    "SELECT ON V$LOGFILE",
    "SELECT ON V$ARCHIVED_LOG",
    "SELECT ON V$LOGMNR_CONTENTS",
    "SELECT ON GV$TRANSACTION",
    "SELECT ON GV$SESSION",
    "SELECT ON V$INSTANCE",
    "SELECT ON V$LOG_HISTORY",
    "SELECT ON V$PARAMETER",
    "SELECT ON V$PDBS",
    "SELECT ON V$CONTAINERS",
    "SELECT ON DBA_OBJECTS",
    "SELECT ON DBA_INDEXES",
    "SELECT ON DBA_IND_COLUMNS",
    "SELECT ON DBA_TAB_COLS",
    "SELECT ON DBA_TAB_COLUMNS",
    "SELECT ON DBA_CONSTRAINTS",
    "SELECT ON DBA_CONS_COLUMNS",
    "SELECT ON DBA_LOG_GROUPS",
    "SELECT ON CDB_OBJECTS",
    "SELECT ON CDB_INDEXES",
    "SELECT ON CDB_IND_COLUMNS",
    "SELECT ON CDB_TAB_COLS",
    "SELECT ON CDB_CONSTRAINTS",
    "SELECT ON CDB_CONS_COLUMNS",
    "SELECT ON CDB_LOG_GROUPS",
];

impl SimPreflightCondition {
    /// Reads one item of `cdc.sim.preflight`; the error says what is accepted.
    pub fn parse(item: &str) -> Result<SimPreflightCondition, String> {
        let item = item.trim();
        let (name, arg) = match item.split_once(':') {
            Some((name, arg)) => (name.trim(), Some(arg.trim())),
            None => (item, None),
        };
        let number = |arg: Option<&str>| -> Result<u64, String> {
            arg.and_then(|a| a.parse::<u64>().ok())
                .ok_or_else(|| format!("`{item}`: `{name}:` takes a whole number"))
        };
        let table = |arg: Option<&str>| -> Result<String, String> {
            match arg {
                Some(a) if a.split('.').count() == 2 && a.split('.').all(|p| !p.is_empty()) => {
                    Ok(a.to_ascii_uppercase())
                }
                _ => Err(format!("`{item}`: `{name}:` takes OWNER.TABLE")),
            }
        };
        let bare = |condition: SimPreflightCondition| match arg {
            None => Ok(condition),
            Some(_) => Err(format!("`{item}`: `{name}` takes no value")),
        };
        match name.to_ascii_lowercase().as_str() {
            "noarchivelog" => bare(SimPreflightCondition::NoArchivelog),
            "no-supplemental-logging" => bare(SimPreflightCondition::NoSupplementalLogging),
            "long-names" => bare(SimPreflightCondition::LongNames),
            "no-table-supplemental" => Ok(SimPreflightCondition::NoTableSupplemental(table(arg)?)),
            "keyless-table" => Ok(SimPreflightCondition::KeylessTable(table(arg)?)),
            "missing-grant" => {
                let wanted = arg
                    .unwrap_or("")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                SIM_PREFLIGHT_GRANTS
                    .iter()
                    .find(|g| g.eq_ignore_ascii_case(&wanted))
                    .map(|g| SimPreflightCondition::MissingGrant((*g).to_owned()))
                    .ok_or_else(|| {
                        format!(
                            "`{item}`: `missing-grant:` takes one of {}",
                            SIM_PREFLIGHT_GRANTS.join(", ")
                        )
                    })
            }
            "threads" => match number(arg)? {
                n @ 1..=64 => Ok(SimPreflightCondition::Threads(n as u32)),
                _ => Err(format!("`{item}`: `threads:` takes 1 to 64")),
            },
            "version" => {
                let text = arg.unwrap_or("");
                let mut parts = text.splitn(2, '.');
                let major = parts.next().and_then(|p| p.parse::<u32>().ok());
                let minor = match parts.next() {
                    Some(p) => p.parse::<u32>().ok(),
                    None => Some(0),
                };
                match (major, minor) {
                    (Some(major @ 1..=99), Some(minor)) => {
                        Ok(SimPreflightCondition::Version { major, minor })
                    }
                    _ => Err(format!(
                        "`{item}`: `version:` takes MAJOR[.MINOR], e.g. 12.2"
                    )),
                }
            }
            "switches-per-hour" => {
                let n = number(arg)?;
                u32::try_from(n)
                    .map(SimPreflightCondition::SwitchesPerHour)
                    .map_err(|_| format!("`{item}`: too many switches"))
            }
            "archive-from-scn" => Ok(SimPreflightCondition::ArchiveFromScn(number(arg)?)),
            "undo-retention" => Ok(SimPreflightCondition::UndoRetention(number(arg)?)),
            _ => Err(format!(
                "`{item}` is no condition; one of noarchivelog, no-supplemental-logging, \
                 no-table-supplemental:OWNER.TABLE, missing-grant:PRIVILEGE, threads:N, \
                 version:MAJOR[.MINOR], long-names, keyless-table:OWNER.TABLE, \
                 switches-per-hour:N, archive-from-scn:SCN, undo-retention:SECONDS"
            )),
        }
    }
}

/// Where the database is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseEndpoint {
    /// `cdc.database.url`: an EZConnect string or TNS descriptor.
    ConnectString(String),
    Service {
        host: String,
        port: u16,
        service: String,
    },
    Sid {
        host: String,
        port: u16,
        sid: String,
    },
}

impl DatabaseEndpoint {
    /// The connect string for the Oracle client.
    pub fn connect_string(&self) -> String {
        let bracketed = |host: &str| {
            if host.contains(':') {
                format!("[{host}]")
            } else {
                host.to_owned()
            }
        };
        match self {
            DatabaseEndpoint::ConnectString(text) => text.clone(),
            DatabaseEndpoint::Service {
                host,
                port,
                service,
            } => {
                format!("//{}:{port}/{service}", bracketed(host))
            }
            DatabaseEndpoint::Sid { host, port, sid } => format!(
                "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST={host})(PORT={port}))(CONNECT_DATA=(SID={sid})))"
            ),
        }
    }
}

/// What the LogMiner session logs in with; always present when `cdc.source=oracle`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OracleLogin {
    pub endpoint: DatabaseEndpoint,
    pub user: String,
    pub password: Secret,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseSettings {
    /// `Some` whenever `cdc.source=oracle` (validation requires it).
    pub login: Option<OracleLogin>,
    /// PDBs captured from the CDB root; empty for a non-CDB.
    pub pdbs: Vec<String>,
    /// `cdc.database.wallet.location`: added to the address built from the host (validation
    /// refuses it beside `cdc.database.url`).
    pub wallet_location: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureSettings {
    pub mode: CaptureMode,
    /// Start SCN when there is no offset.
    pub start_scn: Option<Scn>,
    /// `LOG_ARCHIVE_DEST_n` in upper case; `None` picks the lowest valid local destination.
    pub archive_destination: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MiningSettings {
    pub mode: MiningMode,
    pub target_latency: Duration,
    pub max_logs_per_step: u32,
    pub fetch_size: u32,
    pub query_timeout: Duration,
    pub session_max_age: Duration,
    /// As configured: 0 means "cores − 1, at most 8"; see [`Self::decode_threads_for`].
    pub decode_threads: u32,
    pub inlist_max: u32,
}

impl MiningSettings {
    /// The most decode threads the automatic setting picks.
    pub const AUTO_DECODE_THREADS_MAX: usize = 8;

    /// Decode threads to start: the configured number, or for 0 one less than the cores (the
    /// mining thread keeps one), at most 8 and at least 1.
    pub fn decode_threads_for(&self, available_cores: usize) -> usize {
        match self.decode_threads {
            0 => available_cores
                .saturating_sub(1)
                .clamp(1, Self::AUTO_DECODE_THREADS_MAX),
            threads => threads as usize,
        }
    }

    /// Socket read timeout of the mining session: the query timeout plus 60 s, so the server
    /// side cancels first.
    pub fn socket_read_timeout(&self) -> Duration {
        self.query_timeout + Duration::from_secs(60)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictionarySettings {
    /// `None` when builds are off (`cdc.dictionary.build.interval.ms=0`).
    pub build_interval: Option<Duration>,
    pub build_time: TimeOfDay,
    /// The primary that runs builds when capturing from a standby.
    pub database_url: Option<DatabaseEndpoint>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferSettings {
    pub memory_max_bytes: u64,
    /// As configured; [`CdcConfig::spill_dir`] resolves the default.
    pub spill_dir: Option<PathBuf>,
    pub spill_max_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalSettings {
    pub threshold: Duration,
    pub threshold_events: u64,
    pub chunk_max_bytes: u64,
    pub converter: JournalConverterKind,
    /// `cdc.journal.converter.*`, prefix removed.
    pub converter_properties: Properties,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionSettings {
    /// `None` for unlimited (`-1`).
    pub max_age: Option<Duration>,
    pub max_age_action: MaxAgeAction,
    pub orphan_check_interval: Duration,
    pub orphan_action: OrphanAction,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LobSettings {
    pub mode: LobMode,
    pub max_bytes: u64,
    pub oversize_action: LobOversizeAction,
    pub unavailable_placeholder: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeSettings {
    pub on_decode_error: DecodeErrorAction,
    pub output_format: OutputFormat,
    pub decimal_mode: DecimalMode,
    pub temporal_mode: TemporalMode,
    pub schema_name_adjustment: NameAdjustment,
    pub field_name_adjustment: NameAdjustment,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySettings {
    pub missing: KeyMissing,
    /// `cdc.key.columns`: key columns per table (upper case unless case-sensitive).
    pub columns: TableMap<Vec<String>>,
    pub tombstones_on_delete: bool,
}

#[derive(Debug, Clone)]
pub struct TopicSettings {
    pub prefix: String,
    pub template: TopicTemplate,
    pub ops: String,
    pub signals: String,
    pub schema: String,
    pub dlq: String,
    pub heartbeat: String,
    pub txjournal: String,
    pub transactions_enabled: bool,
    pub transactions: String,
    /// `None` for the broker default (`-1`).
    pub internal_replication_factor: Option<i16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaSettings {
    /// `cdc.kafka.bootstrap.servers`; empty disables journal, schema, signals and topic creation.
    pub bootstrap_servers: Vec<String>,
    /// `cdc.kafka.*` other than the brokers, prefix removed; secrets masked in `Debug`.
    pub client_properties: Properties,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSettings {
    pub mode: SnapshotMode,
    pub threads: u32,
    pub chunk_rows: u64,
    pub chunk_retries: u32,
    pub fetch_size: u32,
    pub max_pending_chunks: u32,
    pub tables_order: Vec<String>,
    /// `cdc.snapshot.select.override.<table>`: SQL conditions per table.
    pub select_overrides: TableMap<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySettings {
    pub max_time: Duration,
    /// ORA error numbers (`ORA-12345` → 12345) also treated as transient.
    pub extra_error_codes: Vec<u32>,
    pub log_sensitive_data: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatSettings {
    /// `None`: only the start heartbeat is sent (`0`).
    pub interval: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollSettings {
    pub max_records: u32,
    pub linger: Duration,
    pub shutdown_timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EosSettings {
    pub batch_max_records: u64,
    pub batch_max_bytes: u64,
    pub batch_max_time: Duration,
    pub split_max_records: u64,
    pub split_max_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestSettings {
    pub listen: HostPort,
}
