//! Validation: from the keys as given to [`CdcConfig`], reporting every problem at once.
//!
//! Three passes, so one mistake is reported once and never hides another:
//! 1. every key of the table is read by its kind (given value or default); unknown `cdc.*`
//!    keys get a did-you-mean; reserved keys that are set get a warning;
//! 2. rules that need several keys (database endpoint, patterns with their case flag, topic
//!    names with the prefix, per-table maps) each run on whatever pass 1 could read;
//! 3. only when nothing failed, the typed configuration is assembled.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::choices::{
    CaptureMode, DecimalMode, DecodeErrorAction, ExactlyOnceSupport, JournalConverterKind,
    KeyMissing, LobMode, LobOversizeAction, MaxAgeAction, MiningMode, NameAdjustment, OrphanAction,
    OutputFormat, SimOpenMode, SimRole, SnapshotMode, SourceKind, TemporalMode,
    TransactionBoundary,
};
use super::error::{ConfigError, ConfigErrors, ConfigWarning, Problem, WarningKind};
use super::keys::{
    KEYS, KeyDefault, KeyKind, KeyShape, KeySpec, KeyStatus, edit_distance, key_spec, suggest_key,
};
use super::secret::{MASK, Properties, Secret, is_secret_name};
use super::settings::{
    BufferSettings, CaptureSettings, CdcConfig, ConnectSettings, DatabaseEndpoint,
    DatabaseSettings, DecodeSettings, DictionarySettings, EosSettings, HeartbeatSettings,
    JournalSettings, KafkaSettings, KeySettings, LobSettings, MiningSettings, OracleLogin,
    PollSettings, RestSettings, RetrySettings, SimPreflightCondition, SimSettings,
    SnapshotSettings, TopicSettings, TransactionSettings,
};
use super::tables::{NamePatterns, TableMap, TableSelection};
use super::topics::{TopicTemplate, resolve_topic_name};
use super::values::{Parsed, is_table_name, mask_url_credentials, parse_value};
use super::{Config, Entry};

const KAFKA_PREFIX: &str = "cdc.kafka.";
const CONVERTER_PREFIX: &str = "cdc.journal.converter.";
const OVERRIDE_PREFIX: &str = "cdc.snapshot.select.override.";
const KAFKA_BROKERS: &str = "cdc.kafka.bootstrap.servers";

/// The connector's class name, as Kafka Connect names a plugin: the name configurations
/// written for the Java connector this one reimplements give as `connector.class`, and the name
/// the REST API reports.
pub const CONNECTOR_CLASS: &str = "sh.oso.connect.oracle.OracleCdcSourceConnector";

/// Whether `class` names this connector: its full class name or one of the aliases Kafka
/// Connect resolves a plugin by (the simple class name, and that name without `Connector`).
pub fn is_connector_class(class: &str) -> bool {
    let simple = CONNECTOR_CLASS
        .rsplit('.')
        .next()
        .unwrap_or(CONNECTOR_CLASS);
    let pruned = simple.strip_suffix("Connector").unwrap_or(simple);
    class == CONNECTOR_CLASS || class == simple || class == pruned
}

/// The producer's record size limit, as the connector's clients are given it.
const PRODUCER_MESSAGE_MAX_BYTES: &str = "cdc.kafka.message.max.bytes";
/// librdkafka's default `message.max.bytes`.
const LIBRDKAFKA_MESSAGE_MAX_BYTES: u64 = 1_000_000;
/// What a journal record holds besides its payload's base64: the chunk's metadata and the
/// key, and the schema envelope (a few KiB), with room to spare.
const JOURNAL_RECORD_OVERHEAD: u64 = 16 << 10;

/// About how large the record of a chunk of `chunk` payload bytes is.
fn journal_record_bytes(chunk: u64) -> u64 {
    chunk.div_ceil(3).saturating_mul(4) + JOURNAL_RECORD_OVERHEAD
}

/// The largest chunk size whose records stay within `limit`.
fn journal_chunk_bytes_within(limit: u64) -> u64 {
    limit.saturating_sub(JOURNAL_RECORD_OVERHEAD) / 4 * 3
}

/// The side topics; each must be a distinct topic.
const SIDE_TOPIC_KEYS: [&str; 8] = [
    "cdc.ops.topic",
    "cdc.signals.topic",
    "cdc.schema.topic",
    "cdc.dlq.topic",
    "cdc.heartbeat.topic",
    "cdc.txjournal.topic",
    "cdc.transactions.topic",
    "offset.storage.topic",
];

/// A value as it may be shown in errors and `Debug`: secrets masked, credentials in URLs and
/// secret driver properties masked.
pub(crate) fn display_value(key: &str, value: &str) -> String {
    let spec = key_spec(key);
    // A misspelt secret key (`cdc.database.pasword`) still holds a secret.
    let misspelt_secret = || {
        spec.is_none()
            && suggest_key(key).is_some_and(|known| {
                is_secret_name(&known)
                    || key_spec(&known).is_some_and(|s| s.kind == KeyKind::Secret)
            })
    };
    match spec.map(|spec| spec.kind) {
        Some(KeyKind::Secret) => MASK.to_owned(),
        _ if is_secret_name(key) || misspelt_secret() => MASK.to_owned(),
        Some(KeyKind::DatabaseUrl) => mask_url_credentials(value),
        Some(KeyKind::DriverProperties) => value
            .split(';')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if is_secret_name(name) => format!("{name}={MASK}"),
                _ => pair.to_owned(),
            })
            .collect::<Vec<_>>()
            .join(";"),
        _ => value.to_owned(),
    }
}

pub(crate) fn validate(config: &Config) -> Result<CdcConfig, ConfigErrors> {
    validate_with(config, false)
}

/// [`validate`], and with `require_brokers` a configuration naming no Kafka brokers
/// (`bootstrap.servers` or `cdc.kafka.bootstrap.servers`) is a problem among the others.
pub(crate) fn validate_with(
    config: &Config,
    require_brokers: bool,
) -> Result<CdcConfig, ConfigErrors> {
    let mut v = Validation {
        config,
        parsed: BTreeMap::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    v.read_keys();
    v.warn_duplicates();
    v.warn_tasks_max();
    v.exactly_once_combination();
    v.wallet_with_url();
    v.journal_chunk_fits_a_record();
    v.connector_class_is_ours();
    let login = v.oracle_login();
    let tables = v.table_selection();
    let key_columns = v.key_columns();
    let select_overrides = v.select_overrides();
    let topics = v.topics();
    let kafka = v.kafka();
    let sim_preflight = v.sim_preflight();
    if require_brokers {
        v.require_brokers();
    }
    let parts = Parts {
        login,
        tables,
        key_columns,
        select_overrides,
        topics,
        kafka,
        sim_preflight,
    };
    if !v.errors.is_empty() {
        return Err(ConfigErrors::new(v.errors, v.warnings));
    }
    match v.assemble(parts) {
        Some(config) => Ok(config),
        None => Err(ConfigErrors::new(
            vec![ConfigError {
                key: "(configuration)".to_owned(),
                given: None,
                line: None,
                problem: Problem::Conflict {
                    detail: "a validated value could not be assembled; this is a bug in oracle-cdc"
                        .to_owned(),
                },
            }],
            v.warnings,
        )),
    }
}

/// What pass 2 produced, for pass 3.
struct Parts {
    login: Option<OracleLogin>,
    tables: Option<TableSelection>,
    key_columns: Option<TableMap<Vec<String>>>,
    select_overrides: Option<TableMap<String>>,
    topics: Option<TopicSettings>,
    kafka: Option<KafkaSettings>,
    sim_preflight: Option<Vec<SimPreflightCondition>>,
}

struct Validation<'a> {
    config: &'a Config,
    /// Values of exact keys that read correctly, given or default.
    parsed: BTreeMap<&'static str, Parsed>,
    errors: Vec<ConfigError>,
    warnings: Vec<ConfigWarning>,
}

impl<'a> Validation<'a> {
    // ---- pass 1 -------------------------------------------------------------------------

    fn read_keys(&mut self) {
        for entry in &self.config.entries {
            match key_spec(&entry.key) {
                Some(spec) if matches!(spec.shape, KeyShape::Prefix { .. }) => {
                    self.read_family_member(spec, entry);
                }
                Some(_) => {}
                None if entry.key.starts_with("cdc.") => self.errors.push(ConfigError {
                    key: entry.key.clone(),
                    // The problem is the key; its value may be a misspelt password.
                    given: None,
                    line: entry.line,
                    problem: Problem::Unknown {
                        did_you_mean: suggest_key(&entry.key),
                    },
                }),
                None => self.warn_missing_cdc_prefix(entry),
            }
        }
        for spec in KEYS.iter().filter(|spec| spec.shape == KeyShape::Exact) {
            self.read_key(spec);
        }
    }

    fn read_key(&mut self, spec: &'static KeySpec) {
        let entry = self.config.entry(spec.key);
        // Connect users write `key=` to mean "not set"; for a key with a literal default the
        // empty text is read as given (an empty list, or an error for a number).
        let unset_when_empty = !matches!(spec.default, KeyDefault::Value(_));
        let given = entry.filter(|entry| !(unset_when_empty && entry.value.trim().is_empty()));
        match (given, spec.default) {
            (Some(entry), _) => {
                if spec.status == KeyStatus::Refused {
                    // an empty value is "not set", and nothing is asked for
                    if !entry.value.trim().is_empty() {
                        self.unsupported(spec, entry, spec.instead);
                    }
                    return;
                }
                self.warn_reserved(spec, &entry.key);
                match parse_value(&spec.kind, &entry.value) {
                    Ok(parsed) => {
                        if spec.is_supported(&entry.value) {
                            self.parsed.insert(spec.key, parsed);
                        } else {
                            self.unsupported(spec, entry, &spec.supported.join(", "));
                        }
                    }
                    Err(invalid) => self.invalid(spec, Some(entry), invalid.detail),
                }
            }
            (None, KeyDefault::Value(text)) => match parse_value(&spec.kind, text) {
                Ok(parsed) => {
                    self.parsed.insert(spec.key, parsed);
                }
                Err(invalid) => self.invalid(spec, None, invalid.detail),
            },
            (None, KeyDefault::Required) => {
                let when = self.missing_prefix_hint(spec.key);
                self.missing(spec.key, entry, when);
            }
            (None, _) => {}
        }
    }

    /// `cdc.kafka.*`, `cdc.journal.converter.*`, `cdc.snapshot.select.override.*`.
    fn read_family_member(&mut self, spec: &'static KeySpec, entry: &'a Entry) {
        self.warn_reserved(spec, &entry.key);
        if let Err(invalid) = parse_value(&spec.kind, &entry.value) {
            self.invalid(spec, Some(entry), invalid.detail);
        }
        if spec.key == OVERRIDE_PREFIX && !is_table_name(&entry.key[OVERRIDE_PREFIX.len()..]) {
            self.errors.push(ConfigError {
                key: entry.key.clone(),
                given: Some(display_value(&entry.key, &entry.value)),
                line: entry.line,
                problem: Problem::Invalid {
                    allowed: format!("{OVERRIDE_PREFIX}[PDB.]OWNER.TABLE"),
                    detail: Some("the key does not end in a table name".to_owned()),
                },
            });
        }
        if spec.key == KAFKA_PREFIX && entry.key != KAFKA_BROKERS {
            let distance = edit_distance(&entry.key, KAFKA_BROKERS);
            if (1..=2).contains(&distance) {
                self.warn(
                    &entry.key,
                    WarningKind::LooksLikeCdcKey,
                    format!("passed to the Kafka clients as is; did you mean {KAFKA_BROKERS}?"),
                );
            }
        }
    }

    // ---- reporting ----------------------------------------------------------------------

    fn invalid(&mut self, spec: &KeySpec, entry: Option<&Entry>, detail: Option<String>) {
        let key = entry
            .map_or(spec.key, |entry| entry.key.as_str())
            .to_owned();
        self.errors.push(ConfigError {
            given: entry.map(|entry| display_value(&key, &entry.value)),
            line: entry.and_then(|entry| entry.line),
            key,
            problem: Problem::Invalid {
                allowed: spec.kind.allowed(),
                detail,
            },
        });
    }

    /// A reserved key (or a member of a reserved family) that was set.
    fn warn_reserved(&mut self, spec: &KeySpec, key: &str) {
        if spec.status == KeyStatus::Reserved {
            self.warn(
                key,
                WarningKind::ReservedKey,
                format!(
                    "reserved: accepted but not built yet, so it has no effect ({})",
                    spec.why
                ),
            );
        }
    }

    /// A key, or a value of it, that is known but not built: a refused key names what to
    /// use instead, a value outside [`KeySpec::supported`] the values that are built.
    fn unsupported(&mut self, spec: &KeySpec, entry: &Entry, supported: &str) {
        let detail = match spec.status {
            KeyStatus::Refused => spec.why,
            _ => spec.refusal,
        };
        self.errors.push(ConfigError {
            key: entry.key.clone(),
            given: Some(display_value(&entry.key, &entry.value)),
            line: entry.line,
            problem: Problem::Unsupported {
                detail: detail.to_owned(),
                supported: supported.to_owned(),
            },
        });
    }

    fn invalid_key(&mut self, key: &str, detail: String) {
        let entry = self.config.entry(key);
        let allowed = key_spec(key)
            .map(|spec| spec.kind.allowed())
            .unwrap_or_default();
        self.errors.push(ConfigError {
            key: key.to_owned(),
            given: entry.map(|entry| display_value(key, &entry.value)),
            line: entry.and_then(|entry| entry.line),
            problem: Problem::Invalid {
                allowed,
                detail: Some(detail),
            },
        });
    }

    fn require_brokers(&mut self) {
        if !self.is_given("bootstrap.servers") && !self.is_given(KAFKA_BROKERS) {
            self.missing(
                "bootstrap.servers",
                None,
                format!("(the Kafka brokers to deliver to) unless {KAFKA_BROKERS} is set"),
            );
        }
    }

    fn missing(&mut self, key: &str, entry: Option<&Entry>, when: String) {
        self.errors.push(ConfigError {
            key: key.to_owned(),
            given: entry.map(|entry| display_value(key, &entry.value)),
            line: entry.and_then(|entry| entry.line),
            problem: Problem::Missing { when },
        });
    }

    fn conflict(&mut self, key: &str, detail: String) {
        let entry = self.config.entry(key);
        self.errors.push(ConfigError {
            key: key.to_owned(),
            given: entry.map(|entry| display_value(key, &entry.value)),
            line: entry.and_then(|entry| entry.line),
            problem: Problem::Conflict { detail },
        });
    }

    fn warn(&mut self, key: &str, kind: WarningKind, message: String) {
        self.warnings.push(ConfigWarning {
            key: key.to_owned(),
            kind,
            message,
        });
    }

    /// `topic.prefix` given where `cdc.topic.prefix` was meant.
    fn missing_prefix_hint(&self, key: &str) -> String {
        match key.strip_prefix("cdc.") {
            Some(bare) if self.config.entry(bare).is_some() => {
                format!("({bare} is set: the key needs its cdc. prefix)")
            }
            _ => String::new(),
        }
    }

    fn warn_missing_cdc_prefix(&mut self, entry: &Entry) {
        let prefixed = format!("cdc.{}", entry.key);
        if key_spec(&prefixed).is_some_and(|spec| spec.shape == KeyShape::Exact) {
            self.warn(
                &entry.key,
                WarningKind::LooksLikeCdcKey,
                format!("passed through unused; did you mean {prefixed}?"),
            );
        }
    }

    fn warn_duplicates(&mut self) {
        for duplicate in &self.config.duplicates {
            let lines = match (duplicate.first_line, duplicate.line) {
                (Some(first), Some(later)) => format!(" (lines {first} and {later})"),
                _ => String::new(),
            };
            self.warnings.push(ConfigWarning {
                key: duplicate.key.clone(),
                kind: WarningKind::DuplicateKey,
                message: format!("given more than once{lines}; the last value is used"),
            });
        }
    }

    fn warn_tasks_max(&mut self) {
        if let Some(tasks) = self.int("tasks.max").filter(|&tasks| tasks > 1) {
            self.warn(
                "tasks.max",
                WarningKind::TasksMaxIgnored,
                format!(
                    "{tasks} tasks asked for; the connector runs one task (one LogMiner session)"
                ),
            );
        }
    }

    /// `exactly.once.support=required` is Kafka Connect's preflight check: the connector must
    /// be able to deliver exactly once with the rest of the configuration, which it does only
    /// when it ends the Kafka transactions itself (`transaction.boundary=connector`). With
    /// `poll` it delivers at least once, so `required` is refused rather than quietly weakened.
    /// (`interval` is refused on its own, as not built.)
    fn exactly_once_combination(&mut self) {
        let required = self.choice("exactly.once.support", ExactlyOnceSupport::from_config)
            == Some(ExactlyOnceSupport::Required);
        let boundary = self.choice("transaction.boundary", TransactionBoundary::from_config);
        if required && boundary == Some(TransactionBoundary::Poll) {
            self.conflict(
                "exactly.once.support",
                "required asks for exactly-once delivery, and with transaction.boundary=poll the \
                 connector delivers at least once; set transaction.boundary=connector (Kafka \
                 transactions end at Oracle commits), or exactly.once.support=requested to \
                 accept at least once"
                    .to_owned(),
            );
        }
    }

    /// A journal chunk goes out as one Kafka record, its payload base64 in JSON: a chunk size
    /// whose records the producer would refuse (its `message.max.bytes`, librdkafka's
    /// 1 000 000 by default) would stop the task at the first long transaction, so chunks end
    /// at the size that fits instead, and the operator is told.
    fn journal_chunk_fits_a_record(&mut self) {
        let Some(chunk) = self.u64("cdc.txjournal.chunk.max.bytes") else {
            return;
        };
        let limit = self.producer_message_max_bytes();
        let record = journal_record_bytes(chunk);
        if record > limit {
            self.warn(
                "cdc.txjournal.chunk.max.bytes",
                WarningKind::Lowered,
                format!(
                    "a chunk of {chunk} bytes makes a journal record of about {record} bytes \
                     (base64 in JSON, with its metadata), above the producer's \
                     message.max.bytes of {limit} ({PRODUCER_MESSAGE_MAX_BYTES}); chunks end at \
                     {} bytes instead (raise {PRODUCER_MESSAGE_MAX_BYTES} and the journal \
                     topic's max.message.bytes for larger ones)",
                    journal_chunk_bytes_within(limit)
                ),
            );
        }
    }

    /// The producer's `message.max.bytes`, as given to the connector's clients.
    fn producer_message_max_bytes(&self) -> u64 {
        self.config
            .entry(PRODUCER_MESSAGE_MAX_BYTES)
            .and_then(|entry| entry.value.trim().parse::<u64>().ok())
            .unwrap_or(LIBRDKAFKA_MESSAGE_MAX_BYTES)
    }

    /// The wallet is added to the address built from `cdc.database.host`; a connect string
    /// given whole is handed to the Oracle client as it is, so a wallet set beside it would be
    /// ignored, and with it the trust or the credentials it holds.
    fn wallet_with_url(&mut self) {
        if self.is_given("cdc.database.wallet.location") && self.is_given("cdc.database.url") {
            self.conflict(
                "cdc.database.wallet.location",
                "a wallet is added only to the address built from cdc.database.host; with \
                 cdc.database.url, name it in the connect string: \
                 (SECURITY=(MY_WALLET_DIRECTORY=…)) in a descriptor, or ?wallet_location=… in \
                 an Easy Connect string"
                    .to_owned(),
            );
        }
    }

    /// A Connect body copied from another connector (`connector.class` naming, say, Debezium's
    /// Oracle connector) is refused rather than run as this one under keys it does not read.
    fn connector_class_is_ours(&mut self) {
        let Some(class) = self
            .config
            .entry("connector.class")
            .map(|entry| entry.value.trim().to_owned())
            .filter(|class| !class.is_empty())
        else {
            return;
        };
        if !is_connector_class(&class) {
            self.conflict(
                "connector.class",
                format!(
                    "this worker runs one connector, {CONNECTOR_CLASS} (or its aliases \
                     OracleCdcSourceConnector and OracleCdcSource)"
                ),
            );
        }
    }

    // ---- typed reads of pass-1 values ---------------------------------------------------

    fn is_given(&self, key: &str) -> bool {
        self.config
            .entry(key)
            .is_some_and(|entry| !entry.value.trim().is_empty())
    }

    fn int(&self, key: &str) -> Option<i64> {
        match self.parsed.get(key)? {
            Parsed::Int(value) => Some(*value),
            _ => None,
        }
    }

    fn u32(&self, key: &str) -> Option<u32> {
        u32::try_from(self.int(key)?).ok()
    }

    fn u64(&self, key: &str) -> Option<u64> {
        match self.parsed.get(key)? {
            Parsed::Int(value) => u64::try_from(*value).ok(),
            Parsed::Unsigned(value) | Parsed::Bytes(value) => Some(*value),
            _ => None,
        }
    }

    fn duration(&self, key: &str) -> Option<Duration> {
        match self.parsed.get(key)? {
            Parsed::Duration(value) => Some(*value),
            _ => None,
        }
    }

    /// A duration where 0 (or -1) means "none".
    fn duration_or_off(&self, key: &str) -> Option<Option<Duration>> {
        match self.parsed.get(key)? {
            Parsed::Duration(value) => Some(Some(*value).filter(|value| !value.is_zero())),
            Parsed::OptionalDuration(value) => Some(*value),
            _ => None,
        }
    }

    fn boolean(&self, key: &str) -> Option<bool> {
        match self.parsed.get(key)? {
            Parsed::Bool(value) => Some(*value),
            _ => None,
        }
    }

    fn choice<T>(&self, key: &str, from: fn(&str) -> Option<T>) -> Option<T> {
        match self.parsed.get(key)? {
            Parsed::Choice(text) => from(text),
            _ => None,
        }
    }

    fn text(&self, key: &str) -> Option<String> {
        match self.parsed.get(key)? {
            Parsed::Text(text) => Some(text.clone()),
            _ => None,
        }
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        match self.parsed.get(key)? {
            Parsed::Path(path) => Some(path.clone()),
            _ => None,
        }
    }

    fn list(&self, key: &str) -> Option<Vec<String>> {
        match self.parsed.get(key)? {
            Parsed::List(items) | Parsed::Brokers(items) => Some(items.clone()),
            _ => None,
        }
    }

    fn secret(&self, key: &str) -> Option<Secret> {
        match self.parsed.get(key)? {
            Parsed::Secret(secret) => Some(secret.clone()),
            _ => None,
        }
    }

    fn connect_string(&self, key: &str) -> Option<String> {
        match self.parsed.get(key)? {
            Parsed::ConnectString(text) => Some(text.clone()),
            _ => None,
        }
    }

    // ---- pass 2: rules across keys ------------------------------------------------------

    fn oracle_login(&mut self) -> Option<OracleLogin> {
        let source = self.choice("cdc.source", SourceKind::from_config);
        if source == Some(SourceKind::Oracle) {
            let sim_keys: Vec<&str> = [
                "cdc.sim.seed",
                "cdc.sim.scenario",
                "cdc.sim.changes",
                "cdc.sim.backlog",
                "cdc.sim.database.role",
                "cdc.sim.open.mode",
                "cdc.sim.standby.apply.lag.logs",
                "cdc.sim.session.pdb",
                "cdc.sim.preflight",
            ]
            .into_iter()
            .filter(|key| self.is_given(key))
            .collect();
            for key in sim_keys {
                self.warn(
                    key,
                    WarningKind::Ignored,
                    "ignored: cdc.source is oracle".to_owned(),
                );
            }
        }
        let endpoint = self.endpoint(source == Some(SourceKind::Oracle));
        let user = self.text("cdc.database.user");
        let password = self.secret("cdc.database.password");
        if source == Some(SourceKind::Oracle) {
            for key in ["cdc.database.user", "cdc.database.password"] {
                if !self.is_given(key) {
                    let entry = self.config.entry(key);
                    self.missing(key, entry, "when cdc.source=oracle".to_owned());
                }
            }
        }
        Some(OracleLogin {
            endpoint: endpoint?,
            user: user?,
            password: password?,
        })
    }

    fn endpoint(&mut self, required: bool) -> Option<DatabaseEndpoint> {
        if self.is_given("cdc.database.url") {
            for key in [
                "cdc.database.host",
                "cdc.database.port",
                "cdc.database.service",
                "cdc.database.sid",
            ] {
                if self.is_given(key) {
                    self.warn(
                        key,
                        WarningKind::Ignored,
                        "ignored: cdc.database.url overrides it".to_owned(),
                    );
                }
            }
            return self
                .connect_string("cdc.database.url")
                .map(DatabaseEndpoint::ConnectString);
        }
        if !self.is_given("cdc.database.host") {
            if required {
                let entry = self.config.entry("cdc.database.url");
                self.missing(
                    "cdc.database.url",
                    entry,
                    "when cdc.source=oracle (or cdc.database.host with cdc.database.service or \
                     cdc.database.sid)"
                        .to_owned(),
                );
            }
            return None;
        }
        let host = self.text("cdc.database.host");
        let port = self
            .u32("cdc.database.port")
            .and_then(|port| u16::try_from(port).ok());
        let service = self.text("cdc.database.service");
        let sid = self.text("cdc.database.sid");
        let (service_given, sid_given) = (
            self.is_given("cdc.database.service"),
            self.is_given("cdc.database.sid"),
        );
        match (service_given, sid_given) {
            (true, true) => {
                self.conflict(
                    "cdc.database.sid",
                    "give cdc.database.service or cdc.database.sid, not both".to_owned(),
                );
                None
            }
            (false, false) => {
                let entry = self.config.entry("cdc.database.service");
                self.missing(
                    "cdc.database.service",
                    entry,
                    "when cdc.database.host is set: cdc.database.service or cdc.database.sid"
                        .to_owned(),
                );
                None
            }
            (true, false) => Some(DatabaseEndpoint::Service {
                host: host?,
                port: port?,
                service: service?,
            }),
            (false, true) => Some(DatabaseEndpoint::Sid {
                host: host?,
                port: port?,
                sid: sid?,
            }),
        }
    }

    fn patterns(&mut self, key: &str, case_sensitive: bool) -> Option<NamePatterns> {
        let sources = match self.parsed.get(key)? {
            Parsed::Patterns(sources) => sources.clone(),
            _ => return None,
        };
        match NamePatterns::compile(&sources, case_sensitive) {
            Ok(patterns) => Some(patterns),
            Err(detail) => {
                self.invalid_key(key, detail);
                None
            }
        }
    }

    /// `cdc.sim.preflight`: each item a condition, no condition twice.
    fn sim_preflight(&mut self) -> Option<Vec<SimPreflightCondition>> {
        const KEY: &str = "cdc.sim.preflight";
        // unset: no condition
        let items = self.list(KEY).unwrap_or_default();
        let mut conditions: Vec<SimPreflightCondition> = Vec::new();
        let mut ok = true;
        for item in &items {
            match SimPreflightCondition::parse(item) {
                Ok(condition) if conditions.contains(&condition) => {
                    self.invalid_key(KEY, format!("`{item}` is listed twice"));
                    ok = false;
                }
                Ok(condition) => conditions.push(condition),
                Err(detail) => {
                    self.invalid_key(KEY, detail);
                    ok = false;
                }
            }
        }
        ok.then_some(conditions)
    }

    fn table_selection(&mut self) -> Option<TableSelection> {
        // An unreadable flag is already an error; compile with the default meanwhile so the
        // patterns are still checked.
        let case_sensitive = self.boolean("cdc.tables.case.sensitive").unwrap_or(false);
        let include = self.patterns("cdc.tables.include", case_sensitive);
        if include.as_ref().is_some_and(NamePatterns::is_empty) {
            self.invalid_key("cdc.tables.include", "no pattern given".to_owned());
        }
        let exclude = self.patterns("cdc.tables.exclude", case_sensitive);
        let columns_exclude = self.patterns("cdc.columns.exclude", case_sensitive);
        Some(TableSelection {
            include: include?,
            exclude: exclude?,
            columns_exclude: columns_exclude?,
            users_exclude: self.list("cdc.users.exclude")?,
            case_sensitive,
        })
    }

    fn key_columns(&mut self) -> Option<TableMap<Vec<String>>> {
        let case_sensitive = self.boolean("cdc.tables.case.sensitive").unwrap_or(false);
        let entries = match self.parsed.get("cdc.key.columns")? {
            Parsed::KeyColumns(entries) => entries.clone(),
            _ => return None,
        };
        let mut map = TableMap::new(case_sensitive);
        for (table, columns) in entries {
            let columns = columns.iter().map(|column| map.normalise(column)).collect();
            if !map.insert(&table, columns) {
                self.invalid_key("cdc.key.columns", format!("table {table} is listed twice"));
                return None;
            }
        }
        Some(map)
    }

    fn select_overrides(&mut self) -> Option<TableMap<String>> {
        let case_sensitive = self.boolean("cdc.tables.case.sensitive").unwrap_or(false);
        let mut map = TableMap::new(case_sensitive);
        let mut ok = true;
        for entry in &self.config.entries {
            let Some(table) = entry.key.strip_prefix(OVERRIDE_PREFIX) else {
                continue;
            };
            if table.is_empty() || !is_table_name(table) || entry.value.trim().is_empty() {
                ok = false; // reported in pass 1
                continue;
            }
            if !map.insert(table, entry.value.trim().to_owned()) {
                self.conflict(&entry.key, format!("another {OVERRIDE_PREFIX}* key names the same table (names ignore case unless cdc.tables.case.sensitive=true)"));
                ok = false;
            }
        }
        ok.then_some(map)
    }

    fn topics(&mut self) -> Option<TopicSettings> {
        let prefix = self.text("cdc.topic.prefix");
        let mut resolved: BTreeMap<&'static str, String> = BTreeMap::new();
        for key in SIDE_TOPIC_KEYS {
            let Some(text) = self.text(key) else { continue };
            match resolve_topic_name(&text, prefix.as_deref()) {
                Ok(name) => {
                    resolved.insert(key, name);
                }
                Err(detail) => self.invalid_key(key, detail),
            }
        }
        let transactions_enabled = self
            .boolean("cdc.transactions.topic.enabled")
            .unwrap_or(false);
        let mut seen: Vec<(&'static str, &String)> = Vec::new();
        let mut clashes = Vec::new();
        for key in SIDE_TOPIC_KEYS {
            if key == "cdc.transactions.topic" && !transactions_enabled {
                continue;
            }
            let Some(name) = resolved.get(key) else {
                continue;
            };
            match seen.iter().find(|(_, other)| *other == name) {
                Some((other_key, _)) => clashes.push((key, *other_key, name.clone())),
                None => seen.push((key, name)),
            }
        }
        for (key, other_key, name) in clashes {
            self.conflict(
                key,
                format!("topic {name} is also {other_key}; every side topic needs its own"),
            );
        }

        let template_text = match self.text("cdc.topic.template") {
            Some(text) => text,
            None if self
                .list("cdc.database.pdbs")
                .is_some_and(|pdbs| !pdbs.is_empty()) =>
            {
                "${prefix}.${pdb}.${schema}.${table}".to_owned()
            }
            None => "${prefix}.${schema}.${table}".to_owned(),
        };
        let template =
            match TopicTemplate::parse(&template_text, prefix.as_deref().unwrap_or_default()) {
                Ok(template) => Some(template),
                Err(detail) => {
                    self.invalid_key("cdc.topic.template", detail);
                    None
                }
            };
        let mut take = |key: &str| resolved.remove(key);
        Some(TopicSettings {
            prefix: prefix?,
            template: template?,
            ops: take("cdc.ops.topic")?,
            signals: take("cdc.signals.topic")?,
            schema: take("cdc.schema.topic")?,
            dlq: take("cdc.dlq.topic")?,
            heartbeat: take("cdc.heartbeat.topic")?,
            txjournal: take("cdc.txjournal.topic")?,
            transactions_enabled,
            transactions: take("cdc.transactions.topic")?,
            internal_replication_factor: match self
                .parsed
                .get("cdc.internal.topic.replication.factor")?
            {
                Parsed::ReplicationFactor(-1) => None,
                Parsed::ReplicationFactor(factor) => Some(*factor),
                _ => return None,
            },
        })
    }

    fn kafka(&mut self) -> Option<KafkaSettings> {
        Some(KafkaSettings {
            bootstrap_servers: self.list(KAFKA_BROKERS).unwrap_or_default(),
            client_properties: self.family(KAFKA_PREFIX, &[KAFKA_BROKERS]),
        })
    }

    /// Members of a key family, prefix removed.
    fn family(&self, prefix: &str, except: &[&str]) -> Properties {
        let mut properties = Properties::new();
        for entry in &self.config.entries {
            if except.contains(&entry.key.as_str()) {
                continue;
            }
            if let Some(name) = entry
                .key
                .strip_prefix(prefix)
                .filter(|name| !name.is_empty())
            {
                properties.insert(name, entry.value.clone());
            }
        }
        properties
    }

    /// Keys outside the table and outside `cdc.`: kept for the worker.
    fn pass_through(&self) -> Properties {
        let mut properties = Properties::new();
        for entry in &self.config.entries {
            if !entry.key.starts_with("cdc.") && key_spec(&entry.key).is_none() {
                properties.insert(entry.key.clone(), entry.value.clone());
            }
        }
        properties
    }

    // ---- pass 3 -------------------------------------------------------------------------

    fn assemble(&self, parts: Parts) -> Option<CdcConfig> {
        let dictionary_url = self.connect_string("cdc.dictionary.database.url");
        let build_time = match self.parsed.get("cdc.dictionary.build.time")? {
            Parsed::TimeOfDay(time) => *time,
            _ => return None,
        };
        let listen = match self.parsed.get("cdc.rest.listen")? {
            Parsed::HostPort(address) => address.clone(),
            _ => return None,
        };
        let start_scn = match self.parsed.get("cdc.start.scn") {
            Some(Parsed::Scn(scn)) => Some(*scn),
            Some(_) => return None,
            None => None,
        };
        let extra_error_codes = match self.parsed.get("cdc.retry.extra.error.codes")? {
            Parsed::OraCodes(codes) => codes.clone(),
            _ => return None,
        };
        let tables = parts.tables?;
        Some(CdcConfig {
            connect: self.connect_settings()?,
            source: self.choice("cdc.source", SourceKind::from_config)?,
            sim: SimSettings {
                seed: self.u64("cdc.sim.seed")?,
                scenario: self.path("cdc.sim.scenario"),
                changes: self.u64("cdc.sim.changes")?,
                backlog: self.boolean("cdc.sim.backlog")?,
                role: self.choice("cdc.sim.database.role", SimRole::from_config)?,
                open_mode: self.choice("cdc.sim.open.mode", SimOpenMode::from_config)?,
                standby_apply_lag_logs: self.u32("cdc.sim.standby.apply.lag.logs")?,
                session_pdb: self.text("cdc.sim.session.pdb"),
                dictionary_build_grant: self.boolean("cdc.sim.dictionary.build.grant")?,
                table_rows: self.u64("cdc.sim.table.rows")?,
                preflight: parts.sim_preflight?,
            },
            database: DatabaseSettings {
                login: parts.login,
                pdbs: self.list("cdc.database.pdbs")?,
                wallet_location: self.path("cdc.database.wallet.location"),
            },
            capture: CaptureSettings {
                mode: self.choice("cdc.capture.mode", CaptureMode::from_config)?,
                start_scn,
                archive_destination: self.text("cdc.archive.destination"),
            },
            mining: MiningSettings {
                mode: self.choice("cdc.mining.mode", MiningMode::from_config)?,
                target_latency: self.duration("cdc.mining.target.latency.ms")?,
                max_logs_per_step: self.u32("cdc.mining.max.logs.per.step")?,
                fetch_size: self.u32("cdc.mining.fetch.size")?,
                query_timeout: self.duration("cdc.mining.query.timeout.ms")?,
                session_max_age: self.duration("cdc.mining.session.max.age.ms")?,
                decode_threads: self.u32("cdc.mining.decode.threads")?,
                inlist_max: self.u32("cdc.mining.inlist.max")?,
            },
            dictionary: DictionarySettings {
                build_interval: self.duration_or_off("cdc.dictionary.build.interval.ms")?,
                build_time,
                database_url: dictionary_url.map(DatabaseEndpoint::ConnectString),
            },
            buffer: BufferSettings {
                memory_max_bytes: self.u64("cdc.buffer.memory.max.bytes")?,
                spill_dir: self.path("cdc.buffer.spill.dir"),
                spill_max_bytes: self.u64("cdc.buffer.spill.max.bytes")?,
            },
            journal: JournalSettings {
                threshold: self.duration("cdc.txjournal.threshold.ms")?,
                threshold_events: self.u64("cdc.txjournal.threshold.events")?,
                // at most what fits the producer's record size (a warning says so)
                chunk_max_bytes: self.u64("cdc.txjournal.chunk.max.bytes")?.min(
                    journal_chunk_bytes_within(self.producer_message_max_bytes()),
                ),
                converter: self
                    .choice("cdc.journal.converter", JournalConverterKind::from_config)?,
                converter_properties: self.family(CONVERTER_PREFIX, &[]),
            },
            transaction: TransactionSettings {
                max_age: self.duration_or_off("cdc.transaction.max.age.ms")?,
                max_age_action: self
                    .choice("cdc.transaction.max.age.action", MaxAgeAction::from_config)?,
                orphan_check_interval: self.duration("cdc.transaction.orphan.check.interval.ms")?,
                orphan_action: self
                    .choice("cdc.transaction.orphan.action", OrphanAction::from_config)?,
            },
            lob: LobSettings {
                mode: self.choice("cdc.lob.mode", LobMode::from_config)?,
                max_bytes: self.u64("cdc.lob.max.bytes")?,
                oversize_action: self
                    .choice("cdc.lob.oversize.action", LobOversizeAction::from_config)?,
                unavailable_placeholder: self.text("cdc.unavailable.placeholder")?,
            },
            decode: DecodeSettings {
                on_decode_error: self
                    .choice("cdc.on.decode.error", DecodeErrorAction::from_config)?,
                output_format: self.choice("cdc.output.format", OutputFormat::from_config)?,
                decimal_mode: self.choice("cdc.decimal.mode", DecimalMode::from_config)?,
                temporal_mode: self.choice("cdc.temporal.mode", TemporalMode::from_config)?,
                schema_name_adjustment: self.choice(
                    "cdc.schema.name.adjustment.mode",
                    NameAdjustment::from_config,
                )?,
                field_name_adjustment: self.choice(
                    "cdc.field.name.adjustment.mode",
                    NameAdjustment::from_config,
                )?,
            },
            tables,
            keys: KeySettings {
                missing: self.choice("cdc.key.missing", KeyMissing::from_config)?,
                columns: parts.key_columns?,
                tombstones_on_delete: self.boolean("cdc.tombstones.on.delete")?,
            },
            topics: parts.topics?,
            kafka: parts.kafka?,
            snapshot: SnapshotSettings {
                mode: self.choice("cdc.snapshot.mode", SnapshotMode::from_config)?,
                threads: self.u32("cdc.snapshot.threads")?,
                chunk_rows: self.u64("cdc.snapshot.chunk.rows")?,
                chunk_retries: self.u32("cdc.snapshot.chunk.retries")?,
                fetch_size: self.u32("cdc.snapshot.fetch.size")?,
                max_pending_chunks: self.u32("cdc.snapshot.max.pending.chunks")?,
                tables_order: self.list("cdc.snapshot.tables.order")?,
                select_overrides: parts.select_overrides?,
            },
            retry: RetrySettings {
                max_time: self.duration("cdc.retry.max.time.ms")?,
                extra_error_codes,
                log_sensitive_data: self.boolean("cdc.log.sensitive.data")?,
            },
            heartbeat: HeartbeatSettings {
                interval: self.duration_or_off("cdc.heartbeat.interval.ms")?,
            },
            poll: PollSettings {
                max_records: self.u32("cdc.poll.max.records")?,
                linger: self.duration("cdc.poll.linger.ms")?,
                shutdown_timeout: self.duration("cdc.shutdown.timeout.ms")?,
            },
            eos: EosSettings {
                batch_max_records: self.u64("cdc.eos.batch.max.records")?,
                batch_max_bytes: self.u64("cdc.eos.batch.max.bytes")?,
                batch_max_time: self.duration("cdc.eos.batch.max.ms")?,
                split_max_records: self.u64("cdc.eos.split.max.records")?,
                split_max_bytes: self.u64("cdc.eos.split.max.bytes")?,
            },
            rest: RestSettings { listen },
            warnings: self.warnings.clone(),
        })
    }

    fn connect_settings(&self) -> Option<ConnectSettings> {
        Some(ConnectSettings {
            name: self.text("name")?,
            connector_class: self.text("connector.class"),
            exactly_once_support: self
                .choice("exactly.once.support", ExactlyOnceSupport::from_config)?,
            transaction_boundary: self
                .choice("transaction.boundary", TransactionBoundary::from_config)?,
            key_converter: self.text("key.converter"),
            value_converter: self.text("value.converter"),
            key_converter_schemas_enable: self.boolean("key.converter.schemas.enable")?,
            value_converter_schemas_enable: self.boolean("value.converter.schemas.enable")?,
            offset_storage_topic: self.text("offset.storage.topic").and_then(|text| {
                resolve_topic_name(&text, self.text("cdc.topic.prefix").as_deref()).ok()
            })?,
            bootstrap_servers: self.list("bootstrap.servers").unwrap_or_default(),
            pass_through: self.pass_through(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal() -> Config {
        Config::from_pairs([
            ("name", "orders-cdc"),
            ("cdc.topic.prefix", "cdc"),
            ("cdc.tables.include", "APP\\..*"),
            ("cdc.source", "sim"),
        ])
    }

    #[test]
    fn sim_preflight_conditions_are_checked() {
        let typed = minimal().validate().expect("valid");
        assert!(
            typed.sim.preflight.is_empty(),
            "a default simulator passes every check"
        );
        let mut config = minimal();
        config.set(
            "cdc.sim.preflight",
            "noarchivelog, missing-grant:select any transaction, threads:2, version:12.2, \
             no-table-supplemental:app.orders, archive-from-scn:900, undo-retention:60",
        );
        let typed = config.validate().expect("valid");
        assert_eq!(
            typed.sim.preflight,
            vec![
                SimPreflightCondition::NoArchivelog,
                SimPreflightCondition::MissingGrant("SELECT ANY TRANSACTION".into()),
                SimPreflightCondition::Threads(2),
                SimPreflightCondition::Version {
                    major: 12,
                    minor: 2
                },
                SimPreflightCondition::NoTableSupplemental("APP.ORDERS".into()),
                SimPreflightCondition::ArchiveFromScn(900),
                SimPreflightCondition::UndoRetention(60),
            ]
        );
        for (bad, says) in [
            ("archivelog-off", "is no condition"),
            ("threads:two", "whole number"),
            ("threads:0", "1 to 64"),
            ("missing-grant:DBA", "LOGMINING"),
            ("keyless-table:ORDERS", "OWNER.TABLE"),
            ("noarchivelog:1", "takes no value"),
            ("version:x", "MAJOR[.MINOR]"),
            ("long-names,long-names", "listed twice"),
        ] {
            let mut config = minimal();
            config.set("cdc.sim.preflight", bad);
            let errors = config.validate().expect_err(bad).to_string();
            assert!(errors.contains("cdc.sim.preflight"), "{bad}: {errors}");
            assert!(errors.contains(says), "{bad}: {errors}");
        }
    }

    #[test]
    fn every_key_of_the_table_reaches_the_typed_config() {
        // Every exact key must be read by pass 1 and assembled by pass 3 without a bug path.
        let config = minimal();
        let typed = config.validate();
        assert!(typed.is_ok(), "{typed:?}");
        let v = {
            let mut v = Validation {
                config: &config,
                parsed: BTreeMap::new(),
                errors: Vec::new(),
                warnings: Vec::new(),
            };
            v.read_keys();
            v
        };
        for spec in KEYS.iter().filter(|spec| spec.shape == KeyShape::Exact) {
            if let KeyDefault::Value(_) = spec.default {
                assert!(
                    v.parsed.contains_key(spec.key),
                    "{} has a default but was not read",
                    spec.key
                );
            }
        }
    }
}
