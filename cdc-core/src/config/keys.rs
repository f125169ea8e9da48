//! The one table of configuration keys: name, kind, default, status and meaning.
//!
//! Validation, defaults, the did-you-mean suggestions and `docs/configuration.md` are all read
//! from [`KEYS`], so a key documented is a key accepted and the other way round.

use super::choices::{
    CaptureMode, DecimalMode, DecodeErrorAction, ExactlyOnceSupport, JournalConverterKind,
    KeyMissing, LobMode, LobOversizeAction, MaxAgeAction, MiningMode, NameAdjustment, OrphanAction,
    OutputFormat, SimOpenMode, SimRole, SnapshotMode, SourceKind, TemporalMode,
    TransactionBoundary,
};

/// The documentation section a key belongs to; also the order of the generated document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    Connect,
    Source,
    Database,
    Capture,
    Buffer,
    Transactions,
    Lobs,
    Decode,
    Tables,
    Topics,
    Kafka,
    Snapshot,
    Retry,
    Delivery,
    Rest,
}

impl Group {
    /// Every group, in document order.
    pub const ALL: &'static [Group] = &[
        Group::Connect,
        Group::Source,
        Group::Database,
        Group::Capture,
        Group::Buffer,
        Group::Transactions,
        Group::Lobs,
        Group::Decode,
        Group::Tables,
        Group::Topics,
        Group::Kafka,
        Group::Snapshot,
        Group::Retry,
        Group::Delivery,
        Group::Rest,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Group::Connect => "Kafka Connect keys",
            Group::Source => "Source and simulator",
            Group::Database => "Database connection",
            Group::Capture => "Capture and mining",
            Group::Buffer => "Transaction buffer, spill and journal",
            Group::Transactions => "Long and orphaned transactions",
            Group::Lobs => "LOBs",
            Group::Decode => "Decoding and record format",
            Group::Tables => "Tables, columns and keys",
            Group::Topics => "Topics",
            Group::Kafka => "Kafka clients",
            Group::Snapshot => "Snapshots",
            Group::Retry => "Retries and logging",
            Group::Delivery => "Heartbeats, polling and exactly-once",
            Group::Rest => "REST interface",
        }
    }

    pub fn about(self) -> &'static str {
        match self {
            Group::Connect => {
                "The keys Kafka Connect itself defines that this connector reads. Other keys \
                 without the `cdc.` prefix are accepted and kept as given (`GET \
                 /connectors/<name>/config` shows them), but nothing reads them: worker and \
                 producer settings such as `producer.override.*` go in `cdc.kafka.*`.\n\n\
                 `oracle-cdc` runs where a Connect worker would, and as a worker with \
                 exactly-once source support enabled it combines `exactly.once.support` and \
                 `transaction.boundary` as Connect does: `required` is a preflight check that \
                 refuses a configuration the connector cannot deliver exactly once, \
                 `requested` checks nothing, and the boundary decides. The connector defines \
                 its own boundaries (Oracle commits), and a Kafka transaction per poll or per \
                 interval is not built, so:\n\n\
                 | `exactly.once.support` | `transaction.boundary` | Delivery |\n\
                 |---|---|---|\n\
                 | `requested` (default) | `poll` (default) | at least once |\n\
                 | `requested` | `connector` | exactly once |\n\
                 | `required` | `connector` | exactly once |\n\
                 | `required` | `poll` | refused at validation: at least once is not exactly once |\n\
                 | either | `interval` | refused at validation: not built |"
            }
            Group::Source => {
                "Where redo comes from. `sim` runs the whole pipeline on the deterministic redo \
                 simulator, without Oracle."
            }
            Group::Database => {
                "How the LogMiner session connects. `cdc.database.url` overrides host, port, \
                 service and SID."
            }
            Group::Capture => "Which redo is mined, in what steps, and with which dictionary.",
            Group::Buffer => {
                "Open transactions are held on the heap up to a budget, spilled to CRC-framed \
                 files beyond it, and journaled to Kafka when they grow long or large."
            }
            Group::Transactions => {
                "Transactions that stay open too long or that the database forgot."
            }
            Group::Lobs => "How CLOB, NCLOB and BLOB columns are delivered.",
            Group::Decode => {
                "What happens to undecodable rows and how values and names are written."
            }
            Group::Tables => {
                "Which tables and columns are captured and what keys their records. Patterns are \
                 regular expressions that must match the whole name: `PDB.OWNER.TABLE` for \
                 tables (`OWNER.TABLE` without PDBs) and `[PDB.]OWNER.TABLE.COLUMN` for columns."
            }
            Group::Topics => {
                "Topic names. `${prefix}` in any topic name is replaced by `cdc.topic.prefix`."
            }
            Group::Kafka => {
                "The connector's Kafka clients (producer, admin, offsets and schema readers). \
                 Every `cdc.kafka.*` key is handed to them with the prefix removed."
            }
            Group::Snapshot => {
                "Reading captured tables whole, `AS OF SCN`, interleaved with streaming."
            }
            Group::Retry => "Transient errors and what may appear in logs.",
            Group::Delivery => {
                "Heartbeats, how records are handed to the worker, and the bounds of Kafka \
                 transactions under exactly-once delivery."
            }
            Group::Rest => "The Kafka Connect REST endpoints and Prometheus metrics.",
        }
    }
}

/// Whether a key does something yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyStatus {
    /// Implemented: [`KeySpec::shown_by`] names the tests that show its effect.
    Built,
    /// Accepted and validated, but not implemented yet ([`KeySpec::why`] says what it waits
    /// for); setting it yields a [`WarningKind::ReservedKey`](super::WarningKind) warning.
    Reserved,
    /// Known, so that the error can say why, but any value given is refused: it cannot be
    /// honoured ([`KeySpec::why`]), and [`KeySpec::instead`] says what does the job.
    Refused,
}

impl KeyStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyStatus::Built => "built",
            KeyStatus::Reserved => "reserved",
            KeyStatus::Refused => "refused",
        }
    }
}

/// Whether a table entry is one key or a family of keys sharing a prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyShape {
    Exact,
    /// `key` is the prefix (ending in `.`); `placeholder` names what follows it in the docs.
    Prefix {
        placeholder: &'static str,
    },
}

/// What a key is when it is not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyDefault {
    /// This text, read exactly as if it had been given.
    Value(&'static str),
    /// Must be given.
    Required,
    /// Must be given in the situation described (`when …`).
    Conditional(&'static str),
    /// Not set unless given.
    Unset,
    /// Computed from other keys or from the worker, as described.
    Derived(&'static str),
}

/// The shape of a key's value; drives parsing, the error text and the docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// A whole number in `min..=max`.
    Integer {
        min: i64,
        max: i64,
    },
    /// Any unsigned 64-bit number.
    Unsigned,
    /// Milliseconds in `min..=max`.
    DurationMs {
        min: u64,
        max: u64,
    },
    /// `-1` (meaning `minus_one`) or milliseconds of at least `min`.
    DurationMsOrMinusOne {
        min: u64,
        minus_one: &'static str,
    },
    /// A size in bytes in `min..=max`.
    Bytes {
        min: u64,
        max: u64,
    },
    Boolean,
    /// One of the listed values (ASCII case ignored).
    Choice(&'static [&'static str]),
    /// Free text.
    Text,
    /// Text that must not be empty.
    Name,
    /// Text kept as a [`super::Secret`]; never printed.
    Secret,
    /// A file-system path.
    Path,
    /// Comma-separated names.
    List,
    /// Comma-separated regular expressions.
    RegexList,
    /// Comma-separated ORA error codes.
    OraCodes,
    /// `[PDB.]SCHEMA.TABLE:C1,C2;…`
    KeyColumns,
    /// `k=v;k=v` driver properties.
    DriverProperties,
    /// `HH:mm`.
    TimeOfDay,
    /// An Oracle connect string or JDBC thin URL.
    DatabaseUrl,
    /// A host name or IP address.
    Host,
    /// `host:port` to listen on (port 0 picks a free port).
    ListenAddress,
    /// Comma-separated `host:port` Kafka brokers.
    Brokers,
    /// An SCN of at least 1.
    Scn,
    /// `LOG_ARCHIVE_DEST_n`.
    ArchiveDestination,
    /// `-1` for the broker default or 1 to 32767.
    ReplicationFactor,
    /// The topic prefix, also the server name in offsets.
    TopicPrefix,
    /// A Kafka topic name in which `${prefix}` is substituted.
    TopicName,
    /// A topic template with `${prefix}`, `${pdb}`, `${schema}`, `${table}`, `${database}`.
    TopicTemplate,
    /// The name of a converter or class.
    ClassName,
}

/// A size in the largest binary unit that divides it, for docs and errors: `16 MiB`.
pub(crate) fn human_bytes(bytes: u64) -> Option<String> {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    UNITS
        .iter()
        .find(|(unit, _)| bytes >= *unit && bytes.is_multiple_of(*unit))
        .map(|(unit, name)| format!("{} {name}", bytes / unit))
}

fn bytes_text(bytes: u64) -> String {
    match human_bytes(bytes) {
        Some(human) => format!("{bytes} ({human})"),
        None => bytes.to_string(),
    }
}

impl KeyKind {
    /// What a value of this kind may be, in words; used by errors and the docs.
    pub fn allowed(&self) -> String {
        match *self {
            KeyKind::Integer { min, max } if max == i64::MAX => {
                format!("an integer, at least {min}")
            }
            KeyKind::Integer { min, max } => format!("an integer from {min} to {max}"),
            KeyKind::Unsigned => format!("an integer from 0 to {}", u64::MAX),
            KeyKind::DurationMs { min, max } if max == MAX_MS => {
                format!("milliseconds, at least {min}")
            }
            KeyKind::DurationMs { min, max } => format!("milliseconds from {min} to {max}"),
            KeyKind::DurationMsOrMinusOne { min, minus_one } => {
                format!("-1 ({minus_one}) or milliseconds, at least {min}")
            }
            KeyKind::Bytes { min, max } if max == MAX_BYTES => {
                format!("bytes, at least {}", bytes_text(min))
            }
            KeyKind::Bytes { min, max } => {
                format!("bytes from {} to {}", bytes_text(min), bytes_text(max))
            }
            KeyKind::Boolean => "true or false".to_owned(),
            KeyKind::Choice(values) => format!("one of {}", values.join(", ")),
            KeyKind::Text => "text".to_owned(),
            KeyKind::Name => "non-empty text".to_owned(),
            KeyKind::Secret => "non-empty text, kept secret".to_owned(),
            KeyKind::Path => "a file-system path".to_owned(),
            KeyKind::List => "comma-separated names".to_owned(),
            KeyKind::RegexList => {
                "comma-separated regular expressions, each matching a whole name \
                 (a comma inside (), [] or {}, or written `\\,`, belongs to the expression)"
                    .to_owned()
            }
            KeyKind::OraCodes => "comma-separated ORA codes such as ORA-12345".to_owned(),
            KeyKind::KeyColumns => {
                "`[PDB.]SCHEMA.TABLE:COLUMN,COLUMN` entries separated by `;`".to_owned()
            }
            KeyKind::DriverProperties => "`name=value` pairs separated by `;`".to_owned(),
            KeyKind::TimeOfDay => "HH:mm from 00:00 to 23:59".to_owned(),
            KeyKind::DatabaseUrl => {
                "an Oracle connect string (`//host:port/service`, `host:port/service` or a TNS \
                 descriptor) or a `jdbc:oracle:thin:@` URL, without credentials"
                    .to_owned()
            }
            KeyKind::Host => "a host name or IP address".to_owned(),
            KeyKind::ListenAddress => "host:port (port 0 picks a free port)".to_owned(),
            KeyKind::Brokers => "comma-separated host:port".to_owned(),
            KeyKind::Scn => "an SCN, at least 1".to_owned(),
            KeyKind::ArchiveDestination => "LOG_ARCHIVE_DEST_n with n from 1 to 31".to_owned(),
            KeyKind::ReplicationFactor => "-1 (broker default) or 1 to 32767".to_owned(),
            KeyKind::TopicPrefix => {
                "letters, digits, `.`, `_` and `-`, at most 200 characters".to_owned()
            }
            KeyKind::TopicName => {
                "a Kafka topic name: letters, digits, `.`, `_` and `-`, at most 249 characters; \
                 `${prefix}` is replaced by cdc.topic.prefix"
                    .to_owned()
            }
            KeyKind::TopicTemplate => {
                "text with the variables ${prefix}, ${pdb}, ${schema}, ${table} and ${database}; \
                 characters Kafka forbids become `_`"
                    .to_owned()
            }
            KeyKind::ClassName => "a class name: letters, digits, `.`, `_` and `$`".to_owned(),
        }
    }
}

/// The largest milliseconds value a key accepts (Java `long`, as the Connect tooling writes).
pub(crate) const MAX_MS: u64 = i64::MAX as u64;
/// The largest byte count a key accepts.
pub(crate) const MAX_BYTES: u64 = i64::MAX as u64;
const MAX_INT: i64 = i32::MAX as i64;
const MAX_LONG: i64 = i64::MAX;
const MIB: u64 = 1 << 20;

/// One configuration key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySpec {
    /// The full key (`cdc.capture.mode`), or the prefix for [`KeyShape::Prefix`].
    pub key: &'static str,
    pub shape: KeyShape,
    pub group: Group,
    pub kind: KeyKind,
    pub default: KeyDefault,
    pub status: KeyStatus,
    /// One line: what the key does.
    pub doc: &'static str,
    /// The tests that show a built key's effect, each `crate/path/file.rs::test_name` from the
    /// workspace root; the `config_keys` test checks that each exists.
    pub shown_by: &'static [&'static str],
    /// The values that are built, when the kind accepts more (`cdc.lob.mode`: `skip`); any
    /// other value is refused at validation. Empty: every value the kind accepts.
    pub supported: &'static [&'static str],
    /// Why values outside [`Self::supported`] are refused; said in the error and the docs.
    pub refusal: &'static str,
    /// Why a reserved key does nothing yet, or why a refused key is refused; said in warnings,
    /// errors and the docs.
    pub why: &'static str,
    /// For a refused key: what to use instead.
    pub instead: &'static str,
}

impl KeySpec {
    const fn new(
        key: &'static str,
        group: Group,
        kind: KeyKind,
        default: KeyDefault,
        doc: &'static str,
    ) -> KeySpec {
        KeySpec {
            key,
            shape: KeyShape::Exact,
            group,
            kind,
            default,
            status: KeyStatus::Built,
            doc,
            shown_by: &[],
            supported: &[],
            refusal: "",
            why: "",
            instead: "",
        }
    }

    /// The tests that show the key's effect.
    const fn shown_by(mut self, tests: &'static [&'static str]) -> KeySpec {
        self.shown_by = tests;
        self
    }

    /// Not built yet: accepted, warned about when set, documented as reserved.
    const fn reserved(mut self, why: &'static str) -> KeySpec {
        self.status = KeyStatus::Reserved;
        self.why = why;
        self
    }

    /// Only `values` are built; the others the kind accepts are refused, saying `why`.
    const fn supporting(mut self, values: &'static [&'static str], why: &'static str) -> KeySpec {
        self.supported = values;
        self.refusal = why;
        self
    }

    /// Any value is refused: the key cannot be honoured (`why`); `instead` does the job.
    const fn refused(mut self, why: &'static str, instead: &'static str) -> KeySpec {
        self.status = KeyStatus::Refused;
        self.why = why;
        self.instead = instead;
        self
    }

    const fn prefix(mut self, placeholder: &'static str) -> KeySpec {
        self.shape = KeyShape::Prefix { placeholder };
        self
    }

    /// Whether `value` (as given, already valid for the kind) is one of the built values.
    pub fn is_supported(&self, value: &str) -> bool {
        let value = value.trim();
        self.supported.is_empty()
            || self.supported.iter().any(|supported| match self.kind {
                KeyKind::Choice(_) => supported.eq_ignore_ascii_case(value),
                _ => *supported == value,
            })
    }

    /// The key as documented: `cdc.kafka.*` for a prefix family.
    pub fn display_name(&self) -> String {
        match self.shape {
            KeyShape::Exact => self.key.to_owned(),
            KeyShape::Prefix { placeholder } => format!("{}{placeholder}", self.key),
        }
    }

    /// Whether `key` is this key or, for a family, one of its members.
    pub fn matches(&self, key: &str) -> bool {
        match self.shape {
            KeyShape::Exact => key == self.key,
            KeyShape::Prefix { .. } => key.len() > self.key.len() && key.starts_with(self.key),
        }
    }

    /// Whether the default is the literal value given.
    pub fn default_value(&self) -> Option<&'static str> {
        match self.default {
            KeyDefault::Value(text) => Some(text),
            _ => None,
        }
    }
}

use Group as G;
use KeyDefault::{Conditional, Derived, Required, Unset, Value};
use KeyKind as K;

const fn ms(min: u64) -> KeyKind {
    K::DurationMs { min, max: MAX_MS }
}

const fn bytes(min: u64) -> KeyKind {
    K::Bytes {
        min,
        max: MAX_BYTES,
    }
}

const fn int(min: i64, max: i64) -> KeyKind {
    K::Integer { min, max }
}

const ORACLE_ONLY: KeyDefault = Conditional("when cdc.source=oracle");

// The tests that many keys name: how a validated configuration reaches the engine, the
// record builder and the Kafka side.
const ENGINE_SETTINGS: &str =
    "cdc-logminer/src/engine/settings.rs::settings_from_a_connector_configuration";
const CONNECT_OPTIONS: &str =
    "cdc-logminer/src/source/configured.rs::database_keys_reach_the_connect_options";
const SIM_KEYS: &str =
    "cdc-logminer/src/source/configured.rs::sim_keys_shape_the_simulated_database";
const SIM_TOPOLOGY: &str =
    "cdc-logminer/tests/engine_topology.rs::each_role_and_open_mode_against_the_topology_table";
const SIDE_TOPICS: &str =
    "cdc-connect-bridge/tests/config_keys.rs::side_topics_follow_the_topic_keys";
const RECORD_KEYS: &str = "cdc-connect-bridge/tests/config_keys.rs::record_keys_shape_the_records";
const KAFKA_CLIENTS: &str = "cdc-connect-bridge/tests/config_keys.rs::kafka_clients_take_the_brokers_and_the_cdc_kafka_properties";
const DELIVERY_MODE: &str = "cdc-connect-bridge/tests/config_keys.rs::delivery_follows_exactly_once_support_and_the_transaction_boundary";
const EOS_COMBINED: &str = "cdc-core/tests/config_errors.rs::exactly_once_support_and_transaction_boundary_combine_as_connect_combines_them";
const EOS_BOUNDS: &str = "cdc-connect-bridge/tests/config_keys.rs::eos_bounds_are_the_eos_keys";
const EOS_PLANNER: &str = "cdc-connect-bridge/src/worker/eos_boundaries.rs::small_transactions_share_one_kafka_transaction_until_a_bound_at_a_commit";
const EOS_SPLIT: &str = "cdc-connect-bridge/src/worker/eos_boundaries.rs::a_split_transaction_ends_parts_at_exact_indexes";
const TABLE_PATTERNS: &str =
    "cdc-core/tests/config_tables.rs::table_patterns_match_whole_names_ignoring_case_by_default";
const GOLDEN_SCHEMAS: &str = "cdc-connect-bridge/tests/golden.rs::insert_every_type_with_schemas";
const GOLDEN_PAYLOAD: &str = "cdc-connect-bridge/tests/golden.rs::insert_every_type_payload_only";
const GOLDEN_MODES: &str =
    "cdc-connect-bridge/tests/golden.rs::insert_every_type_string_and_iso_modes";

const JOURNAL_THRESHOLDS: &str =
    "cdc-journal/tests/writer.rs::the_journal_keys_set_when_and_how_transactions_are_journaled";
const JOURNAL_CONVERTERS: &str =
    "cdc-journal/tests/golden.rs::converters_read_what_they_should_and_refuse_the_rest";
const DICTIONARY: &str = "builds on a primary while capturing a standby are not built yet: a \
     standby is replayed only from builds already in its redo";
const SNAPSHOT_INITIAL: &str = "cdc-logminer/tests/engine_snapshot.rs::an_initial_snapshot_and_the_stream_end_with_the_tables_contents";
const SNAPSHOT_ONLY: &str = "cdc-logminer/tests/engine_snapshot.rs::snapshot_only_reads_the_tables_and_ends_without_streaming";
const SNAPSHOT_NONE: &str = "cdc-logminer/tests/engine_snapshot.rs::mode_none_reads_no_table";
const SNAPSHOT_E2E: &str = "cdc-connect-bridge/tests/e2e_snapshot.rs::a_first_start_snapshots_200_000_rows_while_the_workload_runs_through_kills";
const SIGNALS_E2E: &str =
    "cdc-connect-bridge/tests/e2e_snapshot.rs::signals_through_the_topic_are_answered_once";
const SNAPSHOT_SIGNALS: &str =
    "cdc-logminer/tests/engine_snapshot.rs::each_signal_is_handled_once_across_a_restart";
const SNAPSHOT_PARALLEL: &str =
    "cdc-logminer/tests/engine_snapshot.rs::parallel_readers_publish_chunks_in_key_order";
const SNAPSHOT_CHUNKS: &str = "cdc-logminer/tests/engine_snapshot.rs::restarts_resume_from_the_frontier_and_read_no_finished_chunk_again";
const SNAPSHOT_RETRIES: &str = "cdc-logminer/tests/engine_snapshot.rs::snapshot_too_old_halves_the_chunk_then_stops_with_cdc_8001";
const SNAPSHOT_FETCH: &str =
    "cdc-logminer/tests/engine_snapshot.rs::the_fetch_size_sets_the_round_trips";
const SNAPSHOT_ORDER: &str =
    "cdc-logminer/tests/engine_snapshot.rs::tables_order_reads_named_tables_first";
const SNAPSHOT_OVERRIDE: &str =
    "cdc-logminer/tests/engine_snapshot.rs::a_select_override_limits_the_rows";
const LOBS: &str = "LOB values are not assembled yet (cdc.lob.mode=skip leaves LOB fields out)";
const OCI_TRUST: &str = "a Java trust store cannot be used: the connector reaches Oracle through \
     the Oracle client library, which takes its TLS trust from an Oracle wallet";
const TLS_INSTEAD: &str = "a TCPS address in cdc.database.url, with the wallet named in it \
     ((SECURITY=(MY_WALLET_DIRECTORY=…)) or ?wallet_location=…)";

/// Every key the connector reads, in document order within each group.
#[rustfmt::skip]
pub static KEYS: &[KeySpec] = &[
    // Kafka Connect
    KeySpec::new("name", G::Connect, K::Name, Required,
        "Connector name: the offsets key, the spill sub-directory, the `transactional.id` and the REST path.")
        .shown_by(&["cdc-core/tests/config_defaults.rs::spill_dir_defaults_under_the_worker_temp_dir",
            DELIVERY_MODE, "cdc-connect-bridge/tests/rest.rs::connectors_lists_the_one_connector"]),
    KeySpec::new("connector.class", G::Connect, K::ClassName, Unset,
        "`sh.oso.connect.oracle.OracleCdcSourceConnector`, or Connect's aliases `OracleCdcSourceConnector` and `OracleCdcSource`; unset is the same. Any other class is refused.")
        .shown_by(&["cdc-core/tests/config_parse.rs::connect_body_form",
            "cdc-core/tests/config_errors.rs::connector_classes_other_than_ours_are_refused"]),
    KeySpec::new("tasks.max", G::Connect, int(1, MAX_INT), Value("1"),
        "Upper bound of tasks, as in Connect: one task always runs (one LogMiner session); a larger value is reported as a warning.")
        .shown_by(&["cdc-core/tests/config_errors.rs::warnings_come_with_the_valid_config"]),
    KeySpec::new("exactly.once.support", G::Connect, K::Choice(ExactlyOnceSupport::ALLOWED), Value("requested"),
        "`required` is Connect's preflight check: a configuration that cannot deliver exactly once (`transaction.boundary=poll`) is refused; `requested` checks nothing.")
        .shown_by(&[EOS_COMBINED, DELIVERY_MODE]),
    KeySpec::new("transaction.boundary", G::Connect, K::Choice(TransactionBoundary::ALLOWED), Value("poll"),
        "`connector`: Kafka transactions end at Oracle commits (exactly once); `poll`: at least once.")
        .supporting(&["poll", "connector"],
            "Kafka transactions committed at a fixed interval are not built; exactly once ends them at Oracle commits (connector)")
        .shown_by(&[EOS_COMBINED, DELIVERY_MODE]),
    KeySpec::new("key.converter", G::Connect, K::ClassName, Unset,
        "Converter of record keys: Kafka Connect's JSON, the same as unset.")
        .supporting(&["org.apache.kafka.connect.json.JsonConverter"],
            "the connector writes Kafka Connect's JSON (its schema envelope set by key.converter.schemas.enable)")
        .shown_by(&["cdc-core/tests/config_errors.rs::converters_other_than_json_are_refused"]),
    KeySpec::new("value.converter", G::Connect, K::ClassName, Unset,
        "Converter of record values: Kafka Connect's JSON, the same as unset.")
        .supporting(&["org.apache.kafka.connect.json.JsonConverter"],
            "the connector writes Kafka Connect's JSON (its schema envelope set by value.converter.schemas.enable)")
        .shown_by(&["cdc-core/tests/config_errors.rs::converters_other_than_json_are_refused"]),
    KeySpec::new("key.converter.schemas.enable", G::Connect, K::Boolean, Value("true"),
        "JSON keys carry the Connect schema envelope.")
        .shown_by(&[GOLDEN_SCHEMAS, GOLDEN_PAYLOAD]),
    KeySpec::new("value.converter.schemas.enable", G::Connect, K::Boolean, Value("true"),
        "JSON values carry the Connect schema envelope.")
        .shown_by(&[GOLDEN_SCHEMAS, GOLDEN_PAYLOAD]),
    KeySpec::new("offset.storage.topic", G::Connect, K::TopicName, Value("connect-offsets"),
        "Topic of the Kafka Connect offsets, in the Connect format.")
        .shown_by(&["cdc-core/tests/config_tables.rs::prefix_is_substituted_in_side_topics",
            "cdc-connect-bridge/tests/e2e.rs::sigterm_exits_zero_and_a_restart_delivers_nothing_twice"]),
    KeySpec::new("bootstrap.servers", G::Connect, K::Brokers, Unset,
        "Kafka brokers the worker produces to; required unless cdc.kafka.bootstrap.servers is set.")
        .shown_by(&["cdc-core/tests/config_errors.rs::brokers_are_required_for_delivery_only", KAFKA_CLIENTS]),
    // Source and simulator
    KeySpec::new("cdc.source", G::Source, K::Choice(SourceKind::ALLOWED), Value("oracle"),
        "`oracle` mines a database with LogMiner; `sim` runs the redo simulator.")
        .shown_by(&[SIM_KEYS,
            "cdc-connect-bridge/tests/e2e.rs::the_oracle_source_is_built_and_a_missing_client_is_cdc_1001_with_the_install_hint"]),
    KeySpec::new("cdc.sim.seed", G::Source, K::Unsigned, Value("1"),
        "Seed of the simulator; the same seed produces the same redo.")
        .shown_by(&[SIM_KEYS]),
    KeySpec::new("cdc.sim.scenario", G::Source, K::Path, Unset,
        "Scenario file for the simulator; unset runs the built-in workload.")
        .shown_by(&[SIM_KEYS]),
    KeySpec::new("cdc.sim.changes", G::Source, int(0, MAX_LONG), Value("10000"),
        "Number of row changes the simulator generates.")
        .shown_by(&[SIM_KEYS]),
    KeySpec::new("cdc.sim.backlog", G::Source, K::Boolean, Value("false"),
        "Run the whole workload before capture starts: the connector catches up on a backlog.")
        .shown_by(&[SIM_KEYS]),
    KeySpec::new("cdc.sim.database.role", G::Source, K::Choice(SimRole::ALLOWED), Value("primary"),
        "Role the simulated database reports (V$DATABASE.DATABASE_ROLE); the connector refuses the roles it cannot capture (CDC-5001).")
        .shown_by(&[SIM_KEYS, SIM_TOPOLOGY]),
    KeySpec::new("cdc.sim.open.mode", G::Source, K::Choice(SimOpenMode::ALLOWED), Value("read_write"),
        "Open mode the simulated database reports (V$DATABASE.OPEN_MODE).")
        .shown_by(&[SIM_KEYS, SIM_TOPOLOGY]),
    KeySpec::new("cdc.sim.standby.apply.lag.logs", G::Source, int(0, 1_000_000), Value("0"),
        "On a simulated physical standby, how many of the newest archived logs are not applied yet; mining stays below the applied SCN.")
        .shown_by(&[SIM_KEYS, "cdc-logminer/tests/engine_topology.rs::a_standby_is_mined_up_to_its_applied_scn"]),
    KeySpec::new("cdc.sim.dictionary.build.grant", G::Source, K::Boolean, Value("true"),
        "The simulated capture user may run DBMS_LOGMNR_D.BUILD (EXECUTE on DBMS_LOGMNR_D); false: a dictionary build fails with ORA-06550 / PLS-00201 as on a database without the grant (a scenario file sets `dictionary_build_grant` in its `database`).")
        .shown_by(&[SIM_KEYS]),
    KeySpec::new("cdc.sim.table.rows", G::Source, int(0, 100_000_000), Value("0"),
        "Rows each table of the simulator's standard schema (but the LOB table APP.DOCS) holds before the workload starts, committed through the ordinary redo: the rows a first start's snapshot reads.")
        .shown_by(&[SIM_KEYS, SNAPSHOT_E2E]),
    KeySpec::new("cdc.sim.session.pdb", G::Source, K::Name, Unset,
        "The simulated database is a CDB with this one PDB and the session is connected to it: ADD_LOGFILE fails with ORA-65040, mining by SCN range works.")
        .shown_by(&[SIM_KEYS, "cdc-logminer/tests/engine_topology.rs::auto_mines_by_range_in_a_pdb"]),
    KeySpec::new("cdc.sim.preflight", G::Source, K::List, Unset,
        "Conditions the simulated database presents to `oracle-cdc-admin check`, comma-separated: `noarchivelog`, `no-supplemental-logging`, `no-table-supplemental:OWNER.TABLE`, `missing-grant:PRIVILEGE` (`CREATE SESSION`: the login is refused with ORA-01045; `LOGMINING`, `SELECT ANY TRANSACTION`, `EXECUTE ON DBMS_LOGMNR`, `FLASHBACK ANY TABLE`, or `SELECT ON VIEW` for a V$, GV$, DBA_ or CDB_ view the connector or the check reads, as `docs/admin.md` lists them: a view the check reads is then refused to it with ORA-00942), `threads:N`, `version:MAJOR[.MINOR]`, `long-names`, `keyless-table:OWNER.TABLE`, `switches-per-hour:N`, `archive-from-scn:SCN`, `undo-retention:SECONDS`; unset: the database passes every check (role, open mode and the DBMS_LOGMNR_D grant are their own keys).")
        .shown_by(&["cdc-admin/tests/check.rs::each_condition_is_one_finding_with_its_fix",
            "cdc-admin/tests/check.rs::a_view_the_check_may_not_read_is_a_blocking_finding_and_the_rest_is_checked",
            "cdc-admin/tests/check.rs::a_clean_simulator_is_ready",
            "cdc-core/src/config/validate.rs::sim_preflight_conditions_are_checked"]),
    // Database
    KeySpec::new("cdc.database.url", G::Database, K::DatabaseUrl,
        Conditional("when cdc.source=oracle, unless cdc.database.host is set"),
        "Connect string; overrides host, port, service and SID.")
        .shown_by(&[CONNECT_OPTIONS]),
    KeySpec::new("cdc.database.host", G::Database, K::Host,
        Conditional("when cdc.source=oracle, unless cdc.database.url is set"),
        "Database host; needs cdc.database.service or cdc.database.sid.")
        .shown_by(&[CONNECT_OPTIONS, "cdc-logminer/src/source/oracle/mod.rs::connect_strings"]),
    KeySpec::new("cdc.database.port", G::Database, int(1, 65535), Value("1521"),
        "Listener port.")
        .shown_by(&[CONNECT_OPTIONS]),
    KeySpec::new("cdc.database.service", G::Database, K::Name, Unset,
        "Service name to connect to (the CDB root service when capturing PDBs).")
        .shown_by(&[CONNECT_OPTIONS]),
    KeySpec::new("cdc.database.sid", G::Database, K::Name, Unset,
        "SID to connect to, instead of a service.")
        .shown_by(&[CONNECT_OPTIONS]),
    KeySpec::new("cdc.database.user", G::Database, K::Name, ORACLE_ONLY,
        "Capture user; a C## common user in a CDB.")
        .shown_by(&[CONNECT_OPTIONS]),
    KeySpec::new("cdc.database.password", G::Database, K::Secret, ORACLE_ONLY,
        "Password of the capture user.")
        .shown_by(&[CONNECT_OPTIONS]),
    KeySpec::new("cdc.database.wallet.location", G::Database, K::Path, Unset,
        "Oracle wallet directory, added to the address built from cdc.database.host; with cdc.database.url, name the wallet in the connect string.")
        .shown_by(&[CONNECT_OPTIONS, "cdc-core/tests/config_errors.rs::a_wallet_applies_to_the_address_built_from_the_host"]),
    KeySpec::new("cdc.database.tls.truststore.location", G::Database, K::Path, Unset,
        "Trust store for TLS to the listener.")
        .refused(OCI_TRUST, TLS_INSTEAD),
    KeySpec::new("cdc.database.tls.truststore.password", G::Database, K::Secret, Unset,
        "Password of the trust store.")
        .refused(OCI_TRUST, TLS_INSTEAD),
    KeySpec::new("cdc.database.tls.truststore.type", G::Database, K::Name, Value("JKS"),
        "Type of the trust store.")
        .refused(OCI_TRUST, TLS_INSTEAD),
    KeySpec::new("cdc.database.kerberos.ccache", G::Database, K::Path, Unset,
        "Kerberos credential cache.")
        .reserved("Kerberos logins are not built yet"),
    KeySpec::new("cdc.database.connection.properties", G::Database, K::DriverProperties, Value(""),
        "Extra JDBC driver properties of the original connector.")
        .refused("the connector reaches Oracle through the Oracle client library, not JDBC, so no driver would read them",
            "Oracle Net parameters in the connect string (cdc.database.url) or in sqlnet.ora"),
    KeySpec::new("cdc.database.idle.timeout.ms", G::Database, ms(10_000), Value("300000"),
        "Idle connections are probed at half this interval.")
        .reserved("the idle probe is not built yet"),
    KeySpec::new("cdc.database.pdbs", G::Database, K::List, Value(""),
        "PDBs to capture from the CDB root; empty for a non-CDB.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_truth.rs::several_pdbs_with_the_same_xids",
            "cdc-core/tests/config_tables.rs::template_default_depends_on_pdbs"]),
    KeySpec::new("cdc.database.fan.enabled", G::Database, K::Boolean, Value("false"),
        "RAC Fast Application Notification.")
        .reserved("RAC is not supported yet"),
    // Capture and mining
    KeySpec::new("cdc.capture.mode", G::Capture, K::Choice(CaptureMode::ALLOWED), Value("online"),
        "`online` mines archived and online logs; `archive_only` waits for logs to be archived.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::archive_only_mines_a_change_once_its_log_is_archived"]),
    KeySpec::new("cdc.start.scn", G::Capture, K::Scn, Unset,
        "SCN of the first start when there is no offset (takeovers); ignored once an offset exists.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::a_first_start_passes_over_older_rows_it_cannot_decode"]),
    KeySpec::new("cdc.archive.destination", G::Capture, K::ArchiveDestination,
        Derived("the lowest valid local destination"),
        "Archive destination whose copies are mined.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/sim_faults.rs::archive_only_lists_archived_copies_at_one_destination"]),
    KeySpec::new("cdc.mining.mode", G::Capture, K::Choice(MiningMode::ALLOWED), Value("auto"),
        "`logs` adds log files, `range` mines by SCN range without adding them, `auto` uses range when connected to a PDB and logs otherwise; `logs` in a PDB stops with CDC-5001. The log inventory is checked for gaps and purges in every mode.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_topology.rs::range_mode_mines_the_same_truth_as_logs_mode",
            "cdc-logminer/tests/engine_topology.rs::auto_mines_by_range_in_a_pdb",
            "cdc-logminer/tests/engine_topology.rs::logs_mode_in_a_pdb_is_cdc_5001"]),
    KeySpec::new("cdc.mining.target.latency.ms", G::Capture, ms(100), Value("2000"),
        "A step faster than this doubles the next window.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/src/engine/window.rs::fast_steps_double_up_to_the_cap"]),
    KeySpec::new("cdc.mining.max.logs.per.step", G::Capture, int(1, 256), Value("8"),
        "Largest window, in redo logs.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/src/engine/window.rs::fast_steps_double_up_to_the_cap"]),
    KeySpec::new("cdc.mining.fetch.size", G::Capture, int(100, 1_000_000), Value("10000"),
        "Rows fetched per round trip from V$LOGMNR_CONTENTS.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::the_mining_query_fetches_rows_in_batches_of_the_fetch_size"]),
    KeySpec::new("cdc.mining.query.timeout.ms", G::Capture, ms(10_000), Value("600000"),
        "A step running longer is cancelled and the window halved; the socket read timeout is this plus 60 s.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/sim_faults.rs::slow_query_times_out",
            "cdc-logminer/src/engine/window.rs::timeouts_halve_then_stall_at_one_log"]),
    KeySpec::new("cdc.mining.session.max.age.ms", G::Capture, ms(60_000), Value("3600000"),
        "The LogMiner session is recycled after this long to release its PGA.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::the_session_is_recycled_at_its_maximum_age"]),
    KeySpec::new("cdc.mining.decode.threads", G::Capture, int(0, 64), Value("0"),
        "Threads decoding SQL_REDO; 0 means one less than the cores, at most 8.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-core/tests/config_defaults.rs::decode_threads_zero_means_cores_minus_one_at_most_eight",
            "cdc-logminer/tests/decode_parallel.rs::thread_count_resolution"]),
    KeySpec::new("cdc.mining.inlist.max", G::Capture, int(1, 1000), Value("1000"),
        "Object ids per IN list of the mining query (ORA-01795 limits it to 1000).")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/sim_faults.rs::session_errors_are_oracles"]),
    KeySpec::new("cdc.mining.catchup.threshold.ms", G::Capture, ms(0), Value("300000"),
        "Lag above which parallel catch-up would start.")
        .reserved("parallel catch-up is not built yet"),
    KeySpec::new("cdc.mining.catchup.parallelism", G::Capture, int(1, 64), Value("2"),
        "Sessions of parallel catch-up.")
        .reserved("parallel catch-up is not built yet"),
    KeySpec::new("cdc.rac.safety.lag.ms", G::Capture,
        K::DurationMsOrMinusOne { min: 0, minus_one: "off" }, Value("-1"),
        "RAC safety lag behind the slowest thread.")
        .reserved("RAC is not supported yet"),
    KeySpec::new("cdc.dictionary.build.interval.ms", G::Capture, ms(0), Value("86400000"),
        "Interval of redo dictionary builds (DBMS_LOGMNR_D.BUILD into the redo) for the lag case, counted from cdc.dictionary.build.time; one more runs at start when the available logs hold no build. 0 turns builds off.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_lag.rs::builds_run_at_start_and_on_their_schedule"]),
    KeySpec::new("cdc.dictionary.build.time", G::Capture, K::TimeOfDay, Value("02:00"),
        "Database time of day (the database server's clock) from which the builds' interval counts.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/src/engine/lag.rs::the_schedule_counts_intervals_from_the_time_of_day"]),
    KeySpec::new("cdc.dictionary.database.url", G::Capture, K::DatabaseUrl, Unset,
        "Primary database that runs dictionary builds when capturing from a standby.")
        .reserved(DICTIONARY),
    // Buffer, spill and journal
    KeySpec::new("cdc.buffer.memory.max.bytes", G::Buffer, bytes(16 * MIB), Value("268435456"),
        "Heap budget of the transaction buffer; the largest transactions spill beyond it.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_truth.rs::huge_and_long_transactions_spill_within_the_budget"]),
    KeySpec::new("cdc.buffer.spill.dir", G::Buffer, K::Path,
        Derived("the worker's temporary directory + `oracle-cdc-spill/<name>`"),
        "Directory of spill files; emptied at task start.")
        .shown_by(&["cdc-core/tests/config_defaults.rs::spill_dir_defaults_under_the_worker_temp_dir",
            "cdc-buffer/tests/buffer.rs::leftover_spill_files_are_removed_at_start_and_at_drop"]),
    KeySpec::new("cdc.buffer.spill.max.bytes", G::Buffer, bytes(64 * MIB), Value("10737418240"),
        "Cap of spill files on disk; exceeding it stops with CDC-4001.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-buffer/tests/buffer.rs::the_spill_cap_stops_with_4001_naming_the_ten_largest"]),
    KeySpec::new("cdc.txjournal.threshold.ms", G::Buffer, ms(1000), Value("300000"),
        "A transaction open this long is journaled (needs Kafka: without a journal a long transaction holds the resume position at its first change).")
        .shown_by(&[JOURNAL_THRESHOLDS]),
    KeySpec::new("cdc.txjournal.threshold.events", G::Buffer, int(1, MAX_LONG), Value("100000"),
        "A transaction holding more changes than this is journaled.")
        .shown_by(&[JOURNAL_THRESHOLDS]),
    KeySpec::new("cdc.txjournal.chunk.max.bytes", G::Buffer,
        K::Bytes { min: 16_384, max: 8_388_608 }, Value("524288"),
        "A journal chunk ends once its payload reaches this. Its record is about 4/3 of it (base64 in JSON) plus 16 KiB; a size whose record would exceed the producer's `cdc.kafka.message.max.bytes` (1 000 000 by default) is lowered to the size that fits, with a warning. Keep the journal topic's `max.message.bytes` above it too.")
        .shown_by(&[JOURNAL_THRESHOLDS, "cdc-core/tests/config_errors.rs::a_journal_chunk_is_kept_within_the_producers_record_size"]),
    KeySpec::new("cdc.journal.converter", G::Buffer, K::Choice(JournalConverterKind::ALLOWED), Value("TolerantJsonConverter"),
        "How the journal is read back at start: JSON with or without the schema envelope, or Kafka Connect's JsonConverter with `cdc.journal.converter.schemas.enable`.")
        .shown_by(&[JOURNAL_CONVERTERS]),
    KeySpec::new("cdc.journal.converter.", G::Buffer, K::Text, Unset,
        "Properties of the journal converter, prefix removed (`schemas.enable` for the JsonConverter).").prefix("*")
        .shown_by(&[JOURNAL_CONVERTERS]),
    // Long and orphaned transactions
    KeySpec::new("cdc.transaction.max.age.ms", G::Transactions,
        K::DurationMsOrMinusOne { min: 1000, minus_one: "unlimited" }, Value("-1"),
        "Longest a transaction may stay open in the buffer.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::the_age_policy_discards_or_stops"]),
    KeySpec::new("cdc.transaction.max.age.action", G::Transactions, K::Choice(MaxAgeAction::ALLOWED), Value("fail"),
        "On breach: `fail` stops with CDC-4004; `discard` drops it with an ops event and a DLQ record.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::the_age_policy_discards_or_stops"]),
    KeySpec::new("cdc.transaction.orphan.check.interval.ms", G::Transactions, ms(1000), Value("300000"),
        "Interval of orphan checks against GV$TRANSACTION.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-buffer/src/policy.rs::checks_are_due_every_interval"]),
    KeySpec::new("cdc.transaction.orphan.action", G::Transactions, K::Choice(OrphanAction::ALLOWED), Value("release"),
        "`release` drops an orphan as a rollback; `fail` stops with CDC-7002.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::an_orphan_is_released_into_the_ledger",
            "cdc-buffer/src/policy.rs::fail_action_stops_with_7002"]),
    // LOBs
    KeySpec::new("cdc.lob.mode", G::Lobs, K::Choice(LobMode::ALLOWED), Value("skip"),
        "`skip` leaves LOB fields out. `inline` (assemble them from redo) and `reselect` (also read missing ones back) are refused until LOB assembly is built.")
        .supporting(&["skip"],
            "LOB values are not assembled from LOB_WRITE rows yet, so a value stored out of the row would arrive empty")
        .shown_by(&["cdc-connect-bridge/tests/types.rs::lob_skip_leaves_lob_fields_out"]),
    KeySpec::new("cdc.lob.max.bytes", G::Lobs, bytes(1), Value("1048576"),
        "Largest LOB delivered (UTF-8 bytes for text).")
        .reserved(LOBS),
    KeySpec::new("cdc.lob.oversize.action", G::Lobs, K::Choice(LobOversizeAction::ALLOWED), Value("fail"),
        "A larger LOB: `fail` stops with CDC-3003; `placeholder` delivers the placeholder.")
        .reserved(LOBS),
    KeySpec::new("cdc.unavailable.placeholder", G::Lobs, K::Text, Value("__cdc_unavailable_value"),
        "Value of a field whose value is not available (a type the connector does not convert, XMLTYPE); a BLOB gets its UTF-8 bytes.")
        .shown_by(&[RECORD_KEYS]),
    // Decoding and record format
    KeySpec::new("cdc.on.decode.error", G::Decode, K::Choice(DecodeErrorAction::ALLOWED), Value("fail"),
        "An undecodable DML row, acted on when its transaction commits (one rolled back does not count): `fail` stops with CDC-3001; `dlq` writes it to the DLQ topic, just before the transaction's changes.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::dlq_records_of_a_transaction_are_sent_once_across_a_restart", "cdc-logminer/tests/engine_policies.rs::a_lag_case_row_without_an_exact_version_stops_and_never_reaches_the_dlq"]),
    KeySpec::new("cdc.output.format", G::Decode, K::Choice(OutputFormat::ALLOWED), Value("debezium"),
        "Record value layout.")
        .shown_by(&[GOLDEN_SCHEMAS]),
    KeySpec::new("cdc.decimal.mode", G::Decode, K::Choice(DecimalMode::ALLOWED), Value("precise"),
        "NUMBER as Connect Decimal, as text, or as float64.")
        .shown_by(&[GOLDEN_PAYLOAD, GOLDEN_MODES]),
    KeySpec::new("cdc.temporal.mode", G::Decode, K::Choice(TemporalMode::ALLOWED), Value("adaptive"),
        "Dates and times as Debezium time types or as ISO text.")
        .shown_by(&[GOLDEN_PAYLOAD, GOLDEN_MODES]),
    KeySpec::new("cdc.schema.name.adjustment.mode", G::Decode, K::Choice(NameAdjustment::ALLOWED), Value("none"),
        "Adjustment of schema names for Avro.")
        .shown_by(&["cdc-connect-bridge/tests/types.rs::avro_name_adjustment_and_collisions"]),
    KeySpec::new("cdc.field.name.adjustment.mode", G::Decode, K::Choice(NameAdjustment::ALLOWED), Value("none"),
        "Adjustment of field names for Avro.")
        .shown_by(&["cdc-connect-bridge/tests/types.rs::avro_name_adjustment_and_collisions"]),
    // Tables, columns and keys
    KeySpec::new("cdc.tables.include", G::Tables, K::RegexList, Required,
        "Tables to capture.")
        .shown_by(&[TABLE_PATTERNS, ENGINE_SETTINGS]),
    KeySpec::new("cdc.tables.exclude", G::Tables, K::RegexList, Value(""),
        "Tables not to capture, even when included.")
        .shown_by(&[TABLE_PATTERNS, ENGINE_SETTINGS]),
    KeySpec::new("cdc.tables.case.sensitive", G::Tables, K::Boolean, Value("false"),
        "Whether table and column patterns and key-column names respect case.")
        .shown_by(&[TABLE_PATTERNS, "cdc-core/tests/config_tables.rs::key_columns_and_select_overrides_by_table"]),
    KeySpec::new("cdc.columns.exclude", G::Tables, K::RegexList, Value(""),
        "Columns dropped in the parser; their values never reach the buffer, Kafka or logs.")
        .shown_by(&["cdc-core/tests/config_tables.rs::column_patterns_cover_pdb_schema_table_column", ENGINE_SETTINGS,
            "cdc-logminer/tests/decode_exclusion.rs::a_sentinel_in_an_excluded_column_reaches_nothing", GOLDEN_SCHEMAS]),
    KeySpec::new("cdc.users.exclude", G::Tables, K::List, Value(""),
        "Database users whose row changes are filtered out in the mining query; their DDL is still seen.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/sim_scenarios.rs::excluded_users_are_filtered_in_the_query_but_not_their_control_rows",
            "cdc-logminer/tests/engine_policies.rs::an_alter_by_an_excluded_user_still_makes_a_new_schema_version"]),
    KeySpec::new("cdc.key.missing", G::Tables, K::Choice(KeyMissing::ALLOWED), Value("fail"),
        "A table without any key: stop with CDC-3001, key by ROWID, or no key.")
        .shown_by(&["cdc-connect-bridge/tests/types.rs::keys_by_precedence",
            "cdc-connect-bridge/tests/golden.rs::keyless_table_in_rowid_mode_and_split"]),
    KeySpec::new("cdc.key.columns", G::Tables, K::KeyColumns, Value(""),
        "Key columns per table, ahead of the primary key.")
        .shown_by(&["cdc-connect-bridge/tests/types.rs::keys_by_precedence"]),
    KeySpec::new("cdc.tombstones.on.delete", G::Tables, K::Boolean, Value("true"),
        "A tombstone follows each keyed delete.")
        .shown_by(&[RECORD_KEYS, "cdc-connect-bridge/tests/golden.rs::update_delete_and_key_change"]),
    // Topics
    KeySpec::new("cdc.topic.prefix", G::Topics, K::TopicPrefix, Required,
        "Prefix of every topic; also the server name and the offset partition.")
        .shown_by(&["cdc-core/tests/config_tables.rs::prefix_is_substituted_in_side_topics", RECORD_KEYS, ENGINE_SETTINGS]),
    KeySpec::new("cdc.topic.template", G::Topics, K::TopicTemplate,
        Derived("`${prefix}.${pdb}.${schema}.${table}` with cdc.database.pdbs, else `${prefix}.${schema}.${table}`"),
        "Topic of a table's records; `${pdb}` is the database name in a non-CDB.")
        .shown_by(&["cdc-core/tests/config_tables.rs::template_variables_and_sanitising", RECORD_KEYS]),
    KeySpec::new("cdc.ops.topic", G::Topics, K::TopicName, Value("${prefix}.cdc.ops"),
        "Operational events.")
        .shown_by(&[RECORD_KEYS, SIDE_TOPICS]),
    KeySpec::new("cdc.signals.topic", G::Topics, K::TopicName, Value("${prefix}.cdc.signals"),
        "Signals to the connector: partition 0, records keyed by the connector name or `cdc.topic.prefix`, read at most once a second from after the last one handled (not read under `cdc.snapshot.mode=snapshot_only`).")
        .shown_by(&[SIDE_TOPICS, SIGNALS_E2E]),
    KeySpec::new("cdc.schema.topic", G::Topics, K::TopicName, Value("${prefix}.cdc.schema"),
        "Table layouts (compacted; names and types, no values).")
        .shown_by(&[RECORD_KEYS, SIDE_TOPICS]),
    KeySpec::new("cdc.dlq.topic", G::Topics, K::TopicName, Value("${prefix}.cdc.dlq"),
        "Dead letters: undecodable rows and discarded transactions.")
        .shown_by(&["cdc-connect-bridge/tests/config_keys.rs::dlq_records_go_to_the_dlq_topic", SIDE_TOPICS]),
    KeySpec::new("cdc.heartbeat.topic", G::Topics, K::TopicName, Value("${prefix}.cdc.heartbeat"),
        "Heartbeats.")
        .shown_by(&[RECORD_KEYS, SIDE_TOPICS]),
    KeySpec::new("cdc.txjournal.topic", G::Topics, K::TopicName, Value("${prefix}.cdc.txjournal"),
        "Transaction journal (compacted): chunks of long transactions, tombstoned when they end.")
        .shown_by(&[SIDE_TOPICS]),
    KeySpec::new("cdc.transactions.topic.enabled", G::Topics, K::Boolean, Value("false"),
        "Create the transactions topic (never written yet).")
        .shown_by(&[SIDE_TOPICS]),
    KeySpec::new("cdc.transactions.topic", G::Topics, K::TopicName, Value("${prefix}.cdc.transactions"),
        "Transactions topic.")
        .shown_by(&[SIDE_TOPICS]),
    KeySpec::new("cdc.internal.topic.replication.factor", G::Topics, K::ReplicationFactor, Value("-1"),
        "Replication factor of the internal topics the connector creates.")
        .shown_by(&[SIDE_TOPICS]),
    // Kafka clients
    KeySpec::new("cdc.kafka.bootstrap.servers", G::Kafka, K::Brokers, Unset,
        "Brokers of the connector's own clients, instead of bootstrap.servers.")
        .shown_by(&[KAFKA_CLIENTS]),
    KeySpec::new("cdc.kafka.", G::Kafka, K::Text, Unset,
        "Kafka client properties, passed with the prefix removed; `*.password` and `sasl.jaas.config` are secrets.")
        .prefix("*")
        .shown_by(&[KAFKA_CLIENTS, DELIVERY_MODE]),
    // Snapshots
    KeySpec::new("cdc.snapshot.mode", G::Snapshot, K::Choice(SnapshotMode::ALLOWED), Value("initial"),
        "When tables are read whole: `initial` at the first start (no offset) and then streaming, `none` never (a `snapshot` signal is rejected), `snapshot_only` once and then the task ends without streaming, `on_signal` only when a `snapshot` signal asks. An unfinished snapshot recorded in the offset always resumes.")
        .shown_by(&[SNAPSHOT_INITIAL, SNAPSHOT_ONLY, SNAPSHOT_NONE, SNAPSHOT_SIGNALS]),
    KeySpec::new("cdc.snapshot.threads", G::Snapshot, int(1, 64), Value("4"),
        "Chunks of a batch read in parallel, each on its own database session (at most `cdc.snapshot.max.pending.chunks`).")
        .shown_by(&[SNAPSHOT_PARALLEL]),
    KeySpec::new("cdc.snapshot.chunk.rows", G::Snapshot, int(1000, MAX_LONG), Value("100000"),
        "Rows per chunk: a table is read in key (or ROWID) ranges of this many rows, and the offset records where each ends.")
        .shown_by(&[SNAPSHOT_CHUNKS]),
    KeySpec::new("cdc.snapshot.chunk.retries", G::Snapshot, int(0, MAX_INT), Value("5"),
        "Times in a row a chunk failing with ORA-01555 or ORA-08181 is read again with half the rows (not below 1 000) before CDC-8001.")
        .shown_by(&[SNAPSHOT_RETRIES]),
    KeySpec::new("cdc.snapshot.fetch.size", G::Snapshot, int(1, 1_000_000), Value("5000"),
        "Rows fetched per round trip by snapshot reads.")
        .shown_by(&[SNAPSHOT_FETCH]),
    KeySpec::new("cdc.snapshot.max.pending.chunks", G::Snapshot, int(1, MAX_INT), Value("8"),
        "Chunks read ahead of publishing at most (a batch holds this many chunks in memory).")
        .shown_by(&[SNAPSHOT_PARALLEL]),
    KeySpec::new("cdc.snapshot.tables.order", G::Snapshot, K::List, Value(""),
        "Tables snapshotted first, in this order; the others follow by name.")
        .shown_by(&[SNAPSHOT_ORDER]),
    KeySpec::new("cdc.snapshot.select.override.", G::Snapshot, K::Name, Unset,
        "SQL condition limiting the snapshot of one table (ANDed with a signal's predicate).").prefix("<PDB.OWNER.TABLE>")
        .shown_by(&[SNAPSHOT_OVERRIDE]),
    // Retries and logging
    KeySpec::new("cdc.retry.max.time.ms", G::Retry, ms(1000), Value("86400000"),
        "Budget of retries after transient errors: the engine's reconnects to the database (CDC-1001), and the worker's task restarts after Kafka errors of class retried (CDC-9001).")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_faults.rs::typed_stops",
            "cdc-logminer/src/engine/recovery.rs::backoff_doubles_to_the_cap_within_the_budget",
            "cdc-connect-bridge/tests/stops.rs::an_unreachable_broker_is_retried_within_the_budget_then_a_coded_stop"]),
    KeySpec::new("cdc.retry.extra.error.codes", G::Retry, K::OraCodes, Value(""),
        "More ORA codes treated as transient.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_faults.rs::typed_stops"]),
    KeySpec::new("cdc.log.sensitive.data", G::Retry, K::Boolean, Value("false"),
        "Row values may appear in errors and logs (never in ops events).")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/decode_exclusion.rs::without_exclusions_the_sensitive_flag_quotes_the_bad_literal"]),
    // Heartbeats, polling and exactly-once
    KeySpec::new("cdc.heartbeat.interval.ms", G::Delivery, K::DurationMs { min: 0, max: 3_600_000 }, Value("10000"),
        "Heartbeat after this long without changes; 0 sends only the start heartbeat.")
        .shown_by(&[ENGINE_SETTINGS, "cdc-logminer/tests/engine_policies.rs::heartbeats_at_start_and_when_quiet"]),
    KeySpec::new("cdc.poll.max.records", G::Delivery, int(1, 100_000), Value("2000"),
        "Records handed over per poll: the queue between mining and delivery holds four polls' worth, and at least once, 64 polls' worth may be sent past the last offset written.")
        .shown_by(&["cdc-connect-bridge/tests/config_keys.rs::the_at_least_once_window_is_64_polls_of_records"]),
    KeySpec::new("cdc.poll.linger.ms", G::Delivery, K::DurationMs { min: 0, max: 60_000 }, Value("50"),
        "Wait for more records before handing over a short batch.")
        .reserved("records go to the producer as they come, and a Kafka transaction ends as soon as none is waiting; the producer's own linger.ms (cdc.kafka.linger.ms, 5 ms by default) batches its requests"),
    KeySpec::new("cdc.shutdown.timeout.ms", G::Delivery, K::DurationMs { min: 1000, max: 600_000 }, Value("30000"),
        "Time allowed to stop: the task waits for a boundary between Oracle transactions for this less the time to commit, and on SIGINT/SIGTERM the process exits (status 2) once it has passed, whatever the task waits on.")
        .shown_by(&["cdc-connect-bridge/tests/config_keys.rs::a_stop_waits_for_unacknowledged_records_at_most_the_shutdown_timeout",
            "cdc-connect-bridge/tests/stops.rs::sigterm_while_waiting_for_an_unreachable_broker_exits_within_the_shutdown_timeout",
            "cdc-connect-bridge/src/worker/mod.rs::a_stop_waits_for_a_boundary_less_than_the_shutdown_timeout"]),
    KeySpec::new("cdc.eos.batch.max.records", G::Delivery, int(1, MAX_LONG), Value("5000"),
        "A Kafka transaction ends at the next Oracle commit after this many records.")
        .shown_by(&[EOS_BOUNDS, EOS_PLANNER]),
    KeySpec::new("cdc.eos.batch.max.bytes", G::Delivery, bytes(1), Value("16777216"),
        "… or after this much change data.")
        .shown_by(&[EOS_BOUNDS, EOS_PLANNER]),
    KeySpec::new("cdc.eos.batch.max.ms", G::Delivery, ms(1), Value("500"),
        "… or this long after it began.")
        .shown_by(&[EOS_BOUNDS, "cdc-connect-bridge/src/worker/eos_boundaries.rs::the_time_bound_applies_at_the_next_commit"]),
    KeySpec::new("cdc.eos.split.max.records", G::Delivery, int(1, MAX_LONG), Value("500000"),
        "An Oracle transaction with more changes is split over several Kafka transactions.")
        .shown_by(&[EOS_BOUNDS, EOS_SPLIT,
            "cdc-connect-bridge/tests/e2e.rs::exactly_once_splits_large_transactions_and_restarts_inside_them_without_duplicates"]),
    KeySpec::new("cdc.eos.split.max.bytes", G::Delivery, bytes(1), Value("268435456"),
        "An Oracle transaction with more change data is split over several Kafka transactions.")
        .shown_by(&[EOS_BOUNDS, EOS_SPLIT]),
    // REST
    KeySpec::new("cdc.rest.listen", G::Rest, K::ListenAddress, Value("127.0.0.1:8083"),
        "Address of the REST and metrics endpoints.")
        .shown_by(&["cdc-connect-bridge/tests/e2e.rs::the_runbook_stop_patch_resume_sequence_works_against_the_binary"]),
];

/// The table entry for `key`: the exact key first, then a prefix family.
pub fn key_spec(key: &str) -> Option<&'static KeySpec> {
    KEYS.iter()
        .find(|spec| spec.shape == KeyShape::Exact && spec.key == key)
        .or_else(|| KEYS.iter().find(|spec| spec.matches(key)))
}

/// The known key closest to a misspelt one, if any is close enough to be a likely typo.
pub fn suggest_key(unknown: &str) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for spec in KEYS {
        let candidate = match spec.shape {
            KeyShape::Exact => spec.key.to_owned(),
            // Compare the family prefix with as many dot-parts of the unknown key, and keep
            // the rest: `cdc.snapshot.select.overide.A.B` → `cdc.snapshot.select.override.A.B`.
            KeyShape::Prefix { .. } => {
                let parts = spec.key.trim_end_matches('.').split('.').count();
                let mut pieces = unknown.splitn(parts + 1, '.');
                let head: Vec<&str> = pieces.by_ref().take(parts).collect();
                match pieces.next() {
                    Some(rest) if head.len() == parts => {
                        let head = format!("{}.", head.join("."));
                        if edit_distance(&head, spec.key) == 0 {
                            continue;
                        }
                        format!("{}{rest}", spec.key)
                    }
                    _ => continue,
                }
            }
        };
        let distance = edit_distance(unknown, &candidate);
        if best.as_ref().is_none_or(|(d, _)| distance < *d) {
            best = Some((distance, candidate));
        }
    }
    // A typo is a few edits, relative to the length: don't suggest unrelated keys.
    best.filter(|(distance, candidate)| *distance <= 3.max(candidate.len() / 8) && *distance > 0)
        .map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance: Levenshtein plus adjacent transpositions (`stpe`/`step`).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for (i, cell) in d.iter_mut().step_by(width).enumerate() {
        *cell = i;
    }
    for (j, cell) in d.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_transposition_as_one() {
        assert_eq!(edit_distance("stpe", "step"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn keys_are_unique() {
        let mut names: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
    }

    #[test]
    fn suggestion_for_prefix_family() {
        assert_eq!(
            suggest_key("cdc.snapshot.select.overide.APP.ORDERS").as_deref(),
            Some("cdc.snapshot.select.override.APP.ORDERS")
        );
        assert_eq!(suggest_key("cdc.completely.unrelated.thing"), None);
    }
}
