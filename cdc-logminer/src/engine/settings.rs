//! What the engine needs of the configuration, in its own terms: [`EngineSettings`], from a
//! validated `CdcConfig` or with the key table's defaults.

use super::*;
use cdc_core::config::{SnapshotMode, SnapshotSettings, TableMap};

/// Which tables are captured.
pub type TablePredicate = Arc<dyn Fn(&TableId) -> bool + Send + Sync>;

/// Which columns are excluded: their values are dropped in the parser.
pub type ColumnPredicate = Arc<dyn Fn(&TableId, &str) -> bool + Send + Sync>;

/// What the engine needs of the configuration, in its own terms.
#[derive(Clone)]
pub struct EngineSettings {
    /// `name`: the connector, as signals are keyed by it (or by the prefix).
    pub connector_name: String,
    /// `cdc.tables.case.sensitive`: table patterns (a snapshot signal's too) match case.
    pub tables_case_sensitive: bool,
    /// `cdc.topic.prefix`: the offset partition's `server`.
    pub server: String,
    pub capture_mode: CaptureMode,
    /// `cdc.mining.mode`, resolved against the session's container at start and after every
    /// reconnect ([`CaptureEngine::session_mode`]).
    pub mining_mode: MiningMode,
    pub archive_destination: Option<String>,
    pub start_scn: Option<Scn>,
    pub target_latency: Duration,
    pub max_logs_per_step: usize,
    pub query_timeout: Duration,
    /// `cdc.mining.fetch.size`: rows per round trip of the mining query.
    pub fetch_size: u32,
    pub session_max_age: Duration,
    pub decode_threads: usize,
    pub inlist_max: usize,
    pub users_exclude: Vec<String>,
    /// `None`: only the start heartbeat.
    pub heartbeat_interval: Option<Duration>,
    pub orphan: OrphanSettings,
    pub age: AgeSettings,
    /// `cdc.on.decode.error`.
    pub on_decode_error: DecodeErrorAction,
    pub retry_max_time: Duration,
    pub extra_transient: Vec<OraCode>,
    pub pdbs: Vec<String>,
    pub buffer: BufferSettings,
    pub log_sensitive_data: bool,
    /// How many rows that could not be decoded are held at once until their transactions end
    /// (default 16 384, about 16 MiB with `dlq`); past it, a failure is acted on as its row is
    /// applied. Not a connector setting.
    pub held_failures_max: usize,
    /// How long [`CaptureEngine::run`] waits after a step that found nothing.
    pub idle_wait: Duration,
    /// `cdc.tables.include` minus `cdc.tables.exclude`, over `[PDB.]OWNER.TABLE`.
    pub table_filter: TablePredicate,
    /// `cdc.columns.exclude`, over `[PDB.]OWNER.TABLE` and a column name.
    pub column_filter: ColumnPredicate,
    /// The schema versions an earlier run published (the schema topic at start): numbering
    /// goes on from them, and a layout that has not changed keeps its version.
    pub published: PublishedSchemas,
    /// `cdc.dictionary.build.interval.ms` and `cdc.dictionary.build.time`: dictionary builds
    /// into the redo for the lag case; `None` when off.
    pub dictionary_builds: Option<BuildSchedule>,
    /// `cdc.snapshot.*`: when tables are read whole, in which chunks, with how many readers.
    pub snapshot: SnapshotSettings,
}

impl fmt::Debug for EngineSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EngineSettings")
            .field("server", &self.server)
            .field("capture_mode", &self.capture_mode)
            .field("mining_mode", &self.mining_mode)
            .field("max_logs_per_step", &self.max_logs_per_step)
            .field("query_timeout", &self.query_timeout)
            .field("heartbeat_interval", &self.heartbeat_interval)
            .field("on_decode_error", &self.on_decode_error)
            .finish_non_exhaustive()
    }
}

impl EngineSettings {
    /// Settings with the defaults of the configuration reference, capturing what `tables`
    /// accepts; tests and embedders start here.
    pub fn new(
        server: impl Into<String>,
        connector_name: &str,
        tables: impl Fn(&TableId) -> bool + Send + Sync + 'static,
    ) -> EngineSettings {
        EngineSettings {
            connector_name: connector_name.to_owned(),
            tables_case_sensitive: false,
            server: server.into(),
            capture_mode: CaptureMode::Online,
            mining_mode: MiningMode::Auto,
            archive_destination: None,
            start_scn: None,
            target_latency: Duration::from_millis(2000),
            max_logs_per_step: 8,
            query_timeout: Duration::from_millis(600_000),
            fetch_size: 10_000,
            session_max_age: Duration::from_millis(3_600_000),
            decode_threads: 1,
            inlist_max: 1000,
            users_exclude: Vec::new(),
            heartbeat_interval: Some(Duration::from_millis(10_000)),
            orphan: OrphanSettings::default(),
            age: AgeSettings::default(),
            on_decode_error: DecodeErrorAction::Fail,
            retry_max_time: Duration::from_millis(86_400_000),
            extra_transient: Vec::new(),
            pdbs: Vec::new(),
            buffer: BufferSettings::new(connector_name),
            log_sensitive_data: false,
            held_failures_max: failures::HELD_FAILURES_MAX,
            idle_wait: Duration::from_millis(200),
            table_filter: Arc::new(tables),
            column_filter: Arc::new(|_, _| false),
            published: PublishedSchemas::default(),
            dictionary_builds: Some(BuildSchedule::daily()),
            snapshot: SnapshotSettings {
                mode: SnapshotMode::Initial,
                threads: 4,
                chunk_rows: 100_000,
                chunk_retries: 5,
                fetch_size: 5000,
                max_pending_chunks: 8,
                tables_order: Vec::new(),
                select_overrides: TableMap::default(),
            },
        }
    }

    /// The settings of a validated connector configuration.
    pub fn from_config(config: &CdcConfig) -> EngineSettings {
        let selection = Arc::new(config.tables.clone());
        let tables = Arc::clone(&selection);
        let columns = selection;
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let buffer = BufferSettings::from_config(config, &std::env::temp_dir());
        EngineSettings {
            connector_name: config.connect.name.clone(),
            tables_case_sensitive: config.tables.case_sensitive,
            server: config.topics.prefix.clone(),
            capture_mode: config.capture.mode,
            mining_mode: config.mining.mode,
            archive_destination: config.capture.archive_destination.clone(),
            start_scn: config.capture.start_scn,
            target_latency: config.mining.target_latency,
            max_logs_per_step: config.mining.max_logs_per_step as usize,
            query_timeout: config.mining.query_timeout,
            fetch_size: config.mining.fetch_size,
            session_max_age: config.mining.session_max_age,
            decode_threads: config.decode_threads(cores),
            inlist_max: config.mining.inlist_max as usize,
            users_exclude: config.tables.users_exclude.clone(),
            heartbeat_interval: config.heartbeat.interval,
            orphan: OrphanSettings {
                check_interval_ms: millis(config.transaction.orphan_check_interval),
                action: config.transaction.orphan_action,
            },
            age: AgeSettings {
                max_age_ms: config.transaction.max_age.map(millis),
                action: config.transaction.max_age_action,
            },
            on_decode_error: config.decode.on_decode_error,
            retry_max_time: config.retry.max_time,
            extra_transient: config
                .retry
                .extra_error_codes
                .iter()
                .map(|c| OraCode(*c))
                .collect(),
            pdbs: config.database.pdbs.clone(),
            buffer,
            log_sensitive_data: config.retry.log_sensitive_data,
            held_failures_max: failures::HELD_FAILURES_MAX,
            idle_wait: Duration::from_millis(200),
            table_filter: Arc::new(move |t: &TableId| {
                tables.is_table_included(t.pdb.as_deref(), &t.owner, &t.table)
            }),
            column_filter: Arc::new(move |t: &TableId, column: &str| {
                columns.is_column_excluded(t.pdb.as_deref(), &t.owner, &t.table, column)
            }),
            published: PublishedSchemas::default(),
            dictionary_builds: config
                .dictionary
                .build_interval
                .map(|interval| BuildSchedule {
                    interval,
                    time: config.dictionary.build_time,
                }),
            snapshot: config.snapshot.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::config::Config;

    #[test]
    fn settings_from_a_connector_configuration() {
        let config = Config::from_properties(
            "name=orders-cdc\n\
             cdc.source=sim\n\
             cdc.topic.prefix=shop\n\
             cdc.tables.include=APP\\\\..*\n\
             cdc.tables.exclude=APP\\\\.DOCS\n\
             cdc.columns.exclude=APP\\\\.CUSTOMERS\\\\.SSN\n\
             cdc.users.exclude=ETL_BATCH\n\
             cdc.capture.mode=archive_only\n\
             cdc.mining.mode=range\n\
             cdc.heartbeat.interval.ms=0\n\
             cdc.transaction.max.age.ms=60000\n\
             cdc.transaction.max.age.action=discard\n\
             cdc.on.decode.error=dlq\n\
             cdc.mining.max.logs.per.step=4\n\
             cdc.retry.extra.error.codes=ORA-12345\n\
             cdc.start.scn=4242\n\
             cdc.archive.destination=log_archive_dest_2\n\
             cdc.mining.target.latency.ms=700\n\
             cdc.mining.fetch.size=250\n\
             cdc.mining.query.timeout.ms=45000\n\
             cdc.mining.session.max.age.ms=120000\n\
             cdc.mining.decode.threads=3\n\
             cdc.mining.inlist.max=200\n\
             cdc.database.pdbs=FREEPDB1,FREEPDB2\n\
             cdc.transaction.orphan.check.interval.ms=5000\n\
             cdc.transaction.orphan.action=fail\n\
             cdc.retry.max.time.ms=60000\n\
             cdc.log.sensitive.data=true\n\
             cdc.buffer.memory.max.bytes=33554432\n\
             cdc.buffer.spill.max.bytes=134217728\n\
             cdc.dictionary.build.interval.ms=3600000\n\
             cdc.dictionary.build.time=03:30\n",
        )
        .unwrap()
        .validate()
        .unwrap();
        let s = EngineSettings::from_config(&config);
        assert_eq!(
            s.dictionary_builds,
            Some(BuildSchedule {
                interval: Duration::from_secs(3600),
                time: cdc_core::config::TimeOfDay {
                    hour: 3,
                    minute: 30
                },
            })
        );
        // every key the engine reads, at a value other than its default
        assert_eq!(s.start_scn, Some(Scn(4242)));
        assert_eq!(s.archive_destination.as_deref(), Some("LOG_ARCHIVE_DEST_2"));
        assert_eq!(s.target_latency, Duration::from_millis(700));
        assert_eq!(s.fetch_size, 250);
        assert_eq!(s.query_timeout, Duration::from_secs(45));
        assert_eq!(s.session_max_age, Duration::from_secs(120));
        assert_eq!(s.decode_threads, 3);
        assert_eq!(s.inlist_max, 200);
        assert_eq!(s.pdbs, ["FREEPDB1", "FREEPDB2"]);
        assert_eq!(s.orphan.check_interval_ms, 5000);
        assert_eq!(s.orphan.action, cdc_core::config::OrphanAction::Fail);
        assert_eq!(s.retry_max_time, Duration::from_secs(60));
        assert!(s.log_sensitive_data);
        assert_eq!(s.buffer.memory_max_bytes, 32 << 20);
        assert_eq!(s.buffer.spill_max_bytes, 128 << 20);
        assert_eq!(s.server, "shop");
        assert_eq!(s.capture_mode, CaptureMode::ArchiveOnly);
        assert_eq!(s.mining_mode, MiningMode::Range);
        assert_eq!(s.heartbeat_interval, None);
        assert_eq!(s.age.max_age_ms, Some(60_000));
        assert_eq!(s.age.action, cdc_core::config::MaxAgeAction::Discard);
        assert_eq!(s.on_decode_error, DecodeErrorAction::Dlq);
        assert_eq!(s.max_logs_per_step, 4);
        assert_eq!(s.users_exclude, ["ETL_BATCH"]);
        assert_eq!(s.extra_transient, [OraCode(12345)]);
        assert!((s.table_filter)(&TableId::new("APP", "ORDERS")));
        assert!(!(s.table_filter)(&TableId::new("APP", "DOCS")));
        assert!(!(s.table_filter)(&TableId::new("HR", "AUDIT_LOG")));
        assert!((s.column_filter)(&TableId::new("APP", "CUSTOMERS"), "SSN"));
        assert!(!(s.column_filter)(
            &TableId::new("APP", "CUSTOMERS"),
            "NAME"
        ));
        assert!(s.buffer.spill_dir.ends_with("orders-cdc"));
    }

    /// `EngineSettings::new` writes its defaults as literals; each must be the default of the
    /// key table, which is what `from_config` reads from a configuration that sets nothing.
    #[test]
    fn new_has_the_key_tables_defaults() {
        let config =
            Config::from_properties(
            "name=orders-cdc\ncdc.source=sim\ncdc.topic.prefix=shop\ncdc.tables.include=APP\\\\..*\n",
        )
                .unwrap()
                .validate()
                .unwrap();
        let table = EngineSettings::from_config(&config);
        let new = EngineSettings::new("shop", "orders-cdc", |_| true);
        assert_eq!(new.server, table.server);
        assert_eq!(new.capture_mode, table.capture_mode);
        assert_eq!(new.mining_mode, table.mining_mode);
        assert_eq!(new.archive_destination, table.archive_destination);
        assert_eq!(new.start_scn, table.start_scn);
        assert_eq!(new.target_latency, table.target_latency);
        assert_eq!(new.max_logs_per_step, table.max_logs_per_step);
        assert_eq!(new.query_timeout, table.query_timeout);
        assert_eq!(new.fetch_size, table.fetch_size);
        assert_eq!(new.session_max_age, table.session_max_age);
        // `auto` is the cores less one: `new` takes the value of a two-core machine
        assert_eq!(new.decode_threads, config.decode_threads(2));
        assert_eq!(new.inlist_max, table.inlist_max);
        assert_eq!(new.users_exclude, table.users_exclude);
        assert_eq!(new.heartbeat_interval, table.heartbeat_interval);
        assert_eq!(new.orphan, table.orphan);
        assert_eq!(new.age, table.age);
        assert_eq!(new.on_decode_error, table.on_decode_error);
        assert_eq!(new.retry_max_time, table.retry_max_time);
        assert_eq!(new.extra_transient, table.extra_transient);
        assert_eq!(new.pdbs, table.pdbs);
        assert_eq!(new.buffer, table.buffer);
        assert_eq!(new.log_sensitive_data, table.log_sensitive_data);
        assert_eq!(new.held_failures_max, table.held_failures_max);
        assert_eq!(new.idle_wait, table.idle_wait);
        // and the buffer's own defaults are the table's too
        assert_eq!(
            cdc_buffer::BufferSettings::DEFAULT_MEMORY_MAX_BYTES,
            config.buffer.memory_max_bytes
        );
        assert_eq!(
            cdc_buffer::BufferSettings::DEFAULT_SPILL_MAX_BYTES,
            config.buffer.spill_max_bytes
        );
        assert_eq!(
            cdc_buffer::OrphanSettings::default().check_interval_ms,
            millis(config.transaction.orphan_check_interval)
        );
        assert_eq!(
            cdc_buffer::OrphanSettings::default().action,
            config.transaction.orphan_action
        );
        assert_eq!(
            cdc_buffer::AgeSettings::default().action,
            config.transaction.max_age_action
        );
        assert_eq!(cdc_buffer::AgeSettings::default().max_age_ms, None);
        assert_eq!(config.transaction.max_age, None);
    }
}
