//! The key table against the reference: every key, its default and its range, and the typed
//! configuration a minimal file produces.

use std::path::Path;
use std::time::Duration;

use cdc_core::config::{
    CaptureMode, Config, DecimalMode, DecodeErrorAction, ExactlyOnceSupport, KEYS, KeyDefault,
    KeyKind, KeyMissing, KeyShape, LobMode, LobOversizeAction, MaxAgeAction, MiningMode,
    NameAdjustment, OrphanAction, OutputFormat, Problem, SnapshotMode, SourceKind, TemporalMode,
    TransactionBoundary, key_spec,
};

/// How `REFERENCE` states a default. The reference is the key list of the connector this one
/// reimplements, with its defaults, plus the keys added here since.
enum Expected {
    Value(&'static str),
    Required,
    /// Required in some situation, or not set, or computed: no literal default.
    NoLiteral,
}

use Expected::{NoLiteral, Required, Value};

/// Every key with the default the reference gives it.
const REFERENCE: &[(&str, Expected)] = &[
    ("name", Required),
    ("connector.class", NoLiteral),
    ("tasks.max", Value("1")),
    ("exactly.once.support", Value("requested")),
    ("transaction.boundary", Value("poll")),
    ("key.converter", NoLiteral),
    ("value.converter", NoLiteral),
    ("key.converter.schemas.enable", Value("true")),
    ("value.converter.schemas.enable", Value("true")),
    ("offset.storage.topic", Value("connect-offsets")),
    ("bootstrap.servers", NoLiteral),
    ("cdc.source", Value("oracle")),
    ("cdc.sim.seed", Value("1")),
    ("cdc.sim.scenario", NoLiteral),
    ("cdc.sim.changes", Value("10000")),
    ("cdc.sim.backlog", Value("false")),
    ("cdc.sim.database.role", Value("primary")),
    ("cdc.sim.open.mode", Value("read_write")),
    ("cdc.sim.standby.apply.lag.logs", Value("0")),
    ("cdc.sim.session.pdb", NoLiteral),
    ("cdc.sim.table.rows", Value("0")),
    ("cdc.sim.dictionary.build.grant", Value("true")),
    ("cdc.sim.preflight", NoLiteral),
    ("cdc.database.host", NoLiteral),
    ("cdc.database.port", Value("1521")),
    ("cdc.database.service", NoLiteral),
    ("cdc.database.sid", NoLiteral),
    ("cdc.database.url", NoLiteral),
    ("cdc.database.user", NoLiteral),
    ("cdc.database.password", NoLiteral),
    ("cdc.database.wallet.location", NoLiteral),
    ("cdc.database.tls.truststore.location", NoLiteral),
    ("cdc.database.tls.truststore.password", NoLiteral),
    ("cdc.database.tls.truststore.type", Value("JKS")),
    ("cdc.database.kerberos.ccache", NoLiteral),
    ("cdc.database.connection.properties", Value("")),
    ("cdc.database.idle.timeout.ms", Value("300000")),
    ("cdc.database.pdbs", Value("")),
    ("cdc.database.fan.enabled", Value("false")),
    ("cdc.capture.mode", Value("online")),
    ("cdc.start.scn", NoLiteral),
    ("cdc.archive.destination", NoLiteral),
    ("cdc.mining.mode", Value("auto")),
    ("cdc.mining.target.latency.ms", Value("2000")),
    ("cdc.mining.max.logs.per.step", Value("8")),
    ("cdc.mining.fetch.size", Value("10000")),
    ("cdc.mining.query.timeout.ms", Value("600000")),
    ("cdc.mining.session.max.age.ms", Value("3600000")),
    ("cdc.mining.decode.threads", Value("0")),
    ("cdc.mining.inlist.max", Value("1000")),
    ("cdc.mining.catchup.threshold.ms", Value("300000")),
    ("cdc.mining.catchup.parallelism", Value("2")),
    ("cdc.rac.safety.lag.ms", Value("-1")),
    ("cdc.dictionary.build.interval.ms", Value("86400000")),
    ("cdc.dictionary.build.time", Value("02:00")),
    ("cdc.dictionary.database.url", NoLiteral),
    ("cdc.buffer.memory.max.bytes", Value("268435456")),
    ("cdc.buffer.spill.dir", NoLiteral),
    ("cdc.buffer.spill.max.bytes", Value("10737418240")),
    ("cdc.txjournal.topic", Value("${prefix}.cdc.txjournal")),
    ("cdc.txjournal.threshold.ms", Value("300000")),
    ("cdc.txjournal.threshold.events", Value("100000")),
    ("cdc.txjournal.chunk.max.bytes", Value("524288")),
    ("cdc.transaction.max.age.ms", Value("-1")),
    ("cdc.transaction.max.age.action", Value("fail")),
    ("cdc.transaction.orphan.check.interval.ms", Value("300000")),
    ("cdc.transaction.orphan.action", Value("release")),
    ("cdc.lob.mode", Value("skip")),
    ("cdc.lob.max.bytes", Value("1048576")),
    ("cdc.lob.oversize.action", Value("fail")),
    (
        "cdc.unavailable.placeholder",
        Value("__cdc_unavailable_value"),
    ),
    ("cdc.on.decode.error", Value("fail")),
    ("cdc.retry.max.time.ms", Value("86400000")),
    ("cdc.retry.extra.error.codes", Value("")),
    ("cdc.log.sensitive.data", Value("false")),
    ("cdc.snapshot.mode", Value("initial")),
    ("cdc.snapshot.threads", Value("4")),
    ("cdc.snapshot.chunk.rows", Value("100000")),
    ("cdc.snapshot.chunk.retries", Value("5")),
    ("cdc.snapshot.fetch.size", Value("5000")),
    ("cdc.snapshot.max.pending.chunks", Value("8")),
    ("cdc.snapshot.tables.order", Value("")),
    ("cdc.topic.prefix", Required),
    ("cdc.topic.template", NoLiteral),
    ("cdc.tables.include", Required),
    ("cdc.tables.exclude", Value("")),
    ("cdc.tables.case.sensitive", Value("false")),
    ("cdc.columns.exclude", Value("")),
    ("cdc.users.exclude", Value("")),
    ("cdc.key.missing", Value("fail")),
    ("cdc.key.columns", Value("")),
    ("cdc.tombstones.on.delete", Value("true")),
    ("cdc.output.format", Value("debezium")),
    ("cdc.decimal.mode", Value("precise")),
    ("cdc.temporal.mode", Value("adaptive")),
    ("cdc.schema.name.adjustment.mode", Value("none")),
    ("cdc.field.name.adjustment.mode", Value("none")),
    ("cdc.ops.topic", Value("${prefix}.cdc.ops")),
    ("cdc.signals.topic", Value("${prefix}.cdc.signals")),
    ("cdc.schema.topic", Value("${prefix}.cdc.schema")),
    ("cdc.dlq.topic", Value("${prefix}.cdc.dlq")),
    ("cdc.transactions.topic.enabled", Value("false")),
    (
        "cdc.transactions.topic",
        Value("${prefix}.cdc.transactions"),
    ),
    ("cdc.kafka.bootstrap.servers", NoLiteral),
    ("cdc.internal.topic.replication.factor", Value("-1")),
    ("cdc.journal.converter", Value("TolerantJsonConverter")),
    ("cdc.heartbeat.interval.ms", Value("10000")),
    ("cdc.heartbeat.topic", Value("${prefix}.cdc.heartbeat")),
    ("cdc.poll.max.records", Value("2000")),
    ("cdc.poll.linger.ms", Value("50")),
    ("cdc.shutdown.timeout.ms", Value("30000")),
    ("cdc.eos.batch.max.records", Value("5000")),
    ("cdc.eos.batch.max.bytes", Value("16777216")),
    ("cdc.eos.batch.max.ms", Value("500")),
    ("cdc.eos.split.max.records", Value("500000")),
    ("cdc.eos.split.max.bytes", Value("268435456")),
    ("cdc.rest.listen", Value("127.0.0.1:8083")),
];

/// The key families.
const FAMILIES: &[&str] = &[
    "cdc.snapshot.select.override.",
    "cdc.kafka.",
    "cdc.journal.converter.",
];

/// The reference's ranges, as (key, lowest allowed, highest allowed) of the value text.
const RANGES: &[(&str, i64, i64)] = &[
    ("cdc.database.idle.timeout.ms", 10_000, i64::MAX),
    ("cdc.mining.target.latency.ms", 100, i64::MAX),
    ("cdc.mining.max.logs.per.step", 1, 256),
    ("cdc.mining.fetch.size", 100, 1_000_000),
    ("cdc.mining.query.timeout.ms", 10_000, i64::MAX),
    ("cdc.mining.session.max.age.ms", 60_000, i64::MAX),
    ("cdc.mining.decode.threads", 0, 64),
    ("cdc.mining.inlist.max", 1, 1000),
    ("cdc.buffer.memory.max.bytes", 16 * 1024 * 1024, i64::MAX),
    ("cdc.buffer.spill.max.bytes", 64 * 1024 * 1024, i64::MAX),
    ("cdc.txjournal.threshold.ms", 1000, i64::MAX),
    ("cdc.txjournal.threshold.events", 1, i64::MAX),
    ("cdc.txjournal.chunk.max.bytes", 16_384, 8_388_608),
    ("cdc.retry.max.time.ms", 1000, i64::MAX),
    ("cdc.snapshot.threads", 1, 64),
    ("cdc.snapshot.chunk.rows", 1000, i64::MAX),
    ("cdc.heartbeat.interval.ms", 0, 3_600_000),
    ("cdc.poll.max.records", 1, 100_000),
    ("cdc.poll.linger.ms", 0, 60_000),
    ("cdc.shutdown.timeout.ms", 1000, 600_000),
    ("cdc.start.scn", 1, i64::MAX),
];

#[test]
fn every_reference_key_is_in_the_table_with_its_default() {
    for (key, expected) in REFERENCE {
        let spec = key_spec(key).unwrap_or_else(|| panic!("{key} is missing from the table"));
        assert_eq!(
            spec.key, *key,
            "{key} matched a family instead of its own entry"
        );
        match expected {
            Value(text) => assert_eq!(spec.default, KeyDefault::Value(text), "{key}"),
            Required => assert_eq!(spec.default, KeyDefault::Required, "{key}"),
            NoLiteral => assert!(
                !matches!(spec.default, KeyDefault::Value(_) | KeyDefault::Required),
                "{key}: {:?}",
                spec.default
            ),
        }
    }
}

#[test]
fn the_table_has_no_key_the_reference_lacks() {
    for spec in KEYS {
        let known = match spec.shape {
            KeyShape::Exact => REFERENCE.iter().any(|(key, _)| *key == spec.key),
            KeyShape::Prefix { .. } => FAMILIES.contains(&spec.key),
        };
        assert!(
            known,
            "{} is not in the reference list of this test",
            spec.key
        );
    }
}

#[test]
fn ranges_match_the_reference_at_both_ends() {
    for &(key, min, max) in RANGES {
        let base = Config::from_pairs([
            ("name", "n"),
            ("cdc.source", "sim"),
            ("cdc.topic.prefix", "cdc"),
            ("cdc.tables.include", "A\\.B"),
        ]);
        let with = |value: i64| {
            let mut config = base.clone();
            config.set(key, value.to_string());
            config.validate()
        };
        assert!(with(min).is_ok(), "{key}={min} must be allowed");
        if min > i64::MIN {
            let below = with(min - 1).expect_err(&format!("{key}={} must be refused", min - 1));
            assert_eq!(below.keys(), vec![key]);
        }
        assert!(with(max).is_ok(), "{key}={max} must be allowed");
        if max < i64::MAX {
            let above = with(max + 1).expect_err(&format!("{key}={} must be refused", max + 1));
            assert_eq!(above.keys(), vec![key]);
        }
    }
}

#[test]
fn transaction_max_age_is_minus_one_or_at_least_a_second() {
    let base = Config::from_pairs([
        ("name", "n"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", "cdc"),
        ("cdc.tables.include", "A\\.B"),
    ]);
    for (value, ok) in [
        ("-1", true),
        ("1000", true),
        ("999", false),
        ("0", false),
        ("-2", false),
    ] {
        let mut config = base.clone();
        config.set("cdc.transaction.max.age.ms", value);
        assert_eq!(
            config.validate().is_ok(),
            ok,
            "cdc.transaction.max.age.ms={value}"
        );
    }
    let mut config = base.clone();
    config.set("cdc.transaction.max.age.ms", "5000");
    assert_eq!(
        config.validate().unwrap().transaction.max_age,
        Some(Duration::from_secs(5))
    );
}

#[test]
fn every_literal_default_is_valid_for_its_kind() {
    // Validation of an empty sim config reads every default; none may fail.
    let config = Config::from_pairs([
        ("name", "n"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", "cdc"),
        ("cdc.tables.include", "A\\.B"),
    ]);
    let typed = config.validate();
    assert!(typed.is_ok(), "{}", typed.unwrap_err());
}

#[test]
fn choices_list_the_enum_spellings() {
    let choices: &[(&str, &[&str])] = &[
        ("cdc.source", SourceKind::ALLOWED),
        ("cdc.capture.mode", &["online", "archive_only"]),
        ("cdc.mining.mode", &["logs", "range", "auto"]),
        (
            "cdc.sim.database.role",
            &[
                "primary",
                "physical_standby",
                "logical_standby",
                "snapshot_standby",
            ],
        ),
        (
            "cdc.sim.open.mode",
            &["read_write", "read_only", "read_only_with_apply", "mounted"],
        ),
        ("cdc.lob.mode", &["skip", "inline", "reselect"]),
        (
            "cdc.snapshot.mode",
            &["initial", "none", "snapshot_only", "on_signal"],
        ),
        ("cdc.key.missing", &["fail", "rowid", "none"]),
        ("cdc.decimal.mode", &["precise", "string", "double"]),
        ("cdc.temporal.mode", &["adaptive", "iso_string"]),
        (
            "cdc.schema.name.adjustment.mode",
            &["none", "avro", "avro_unicode"],
        ),
        ("exactly.once.support", &["requested", "required"]),
        ("transaction.boundary", &["poll", "interval", "connector"]),
    ];
    for (key, allowed) in choices {
        let spec = key_spec(key).unwrap();
        assert_eq!(spec.kind, KeyKind::Choice(allowed), "{key}");
    }
}

fn oracle_minimal() -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/config/oracle-minimal.properties");
    let text = std::fs::read_to_string(&path);
    assert!(text.is_ok(), "cannot read {}: {text:?}", path.display());
    let config = Config::from_properties(&text.unwrap_or_default());
    assert!(config.is_ok(), "{config:?}");
    config.unwrap_or_default()
}

#[test]
fn a_minimal_file_gets_every_default() {
    let config = oracle_minimal().validate().unwrap();
    assert!(config.warnings().is_empty(), "{:?}", config.warnings());

    assert_eq!(config.connect.name, "orders-cdc");
    assert_eq!(
        config.connect.exactly_once_support,
        ExactlyOnceSupport::Requested
    );
    assert_eq!(
        config.connect.transaction_boundary,
        TransactionBoundary::Poll
    );
    assert!(config.connect.key_converter_schemas_enable);
    assert!(config.connect.value_converter_schemas_enable);
    assert_eq!(config.connect.offset_storage_topic, "connect-offsets");
    assert!(!config.is_exactly_once());
    assert_eq!(config.source, SourceKind::Oracle);
    assert_eq!(config.sim.seed, 1);
    assert_eq!(config.sim.changes, 10_000);
    assert_eq!(config.sim.role, cdc_core::config::SimRole::Primary);
    assert_eq!(
        config.sim.open_mode,
        cdc_core::config::SimOpenMode::ReadWrite
    );
    assert_eq!(config.sim.standby_apply_lag_logs, 0);
    assert_eq!(config.sim.session_pdb, None);
    assert!(config.sim.dictionary_build_grant);

    let login = config.database.login.as_ref().unwrap();
    assert_eq!(
        login.endpoint.connect_string(),
        "//db.example.com:1521/ORCLCDB"
    );
    assert_eq!(login.user, "C##CDC");
    assert!(config.database.pdbs.is_empty());
    assert!(!config.is_cdb());

    assert_eq!(config.capture.mode, CaptureMode::Online);
    assert_eq!(config.capture.start_scn, None);
    assert_eq!(config.capture.archive_destination, None);
    assert_eq!(config.mining.mode, MiningMode::Auto);
    assert_eq!(config.mining.target_latency, Duration::from_millis(2000));
    assert_eq!(config.mining.max_logs_per_step, 8);
    assert_eq!(config.mining.fetch_size, 10_000);
    assert_eq!(config.mining.query_timeout, Duration::from_secs(600));
    assert_eq!(
        config.mining.socket_read_timeout(),
        Duration::from_secs(660)
    );
    assert_eq!(config.mining.session_max_age, Duration::from_secs(3600));
    assert_eq!(config.mining.decode_threads, 0);
    assert_eq!(config.mining.inlist_max, 1000);
    assert_eq!(
        config.dictionary.build_interval,
        Some(Duration::from_secs(86_400))
    );
    assert_eq!(config.dictionary.build_time.to_string(), "02:00");

    assert_eq!(config.buffer.memory_max_bytes, 256 << 20);
    assert_eq!(config.buffer.spill_max_bytes, 10 << 30);
    assert_eq!(config.journal.threshold, Duration::from_secs(300));
    assert_eq!(config.journal.threshold_events, 100_000);
    assert_eq!(config.journal.chunk_max_bytes, 512 << 10);
    assert_eq!(
        config.journal.converter,
        cdc_core::config::JournalConverterKind::Tolerant
    );

    assert_eq!(config.transaction.max_age, None);
    assert_eq!(config.transaction.max_age_action, MaxAgeAction::Fail);
    assert_eq!(
        config.transaction.orphan_check_interval,
        Duration::from_secs(300)
    );
    assert_eq!(config.transaction.orphan_action, OrphanAction::Release);

    assert_eq!(config.lob.mode, LobMode::Skip);
    assert_eq!(config.lob.max_bytes, 1 << 20);
    assert_eq!(config.lob.oversize_action, LobOversizeAction::Fail);
    assert_eq!(
        config.lob.unavailable_placeholder,
        "__cdc_unavailable_value"
    );

    assert_eq!(config.decode.on_decode_error, DecodeErrorAction::Fail);
    assert_eq!(config.decode.output_format, OutputFormat::Debezium);
    assert_eq!(config.decode.decimal_mode, DecimalMode::Precise);
    assert_eq!(config.decode.temporal_mode, TemporalMode::Adaptive);
    assert_eq!(config.decode.schema_name_adjustment, NameAdjustment::None);
    assert_eq!(config.decode.field_name_adjustment, NameAdjustment::None);

    assert!(!config.tables.case_sensitive);
    assert!(config.tables.users_exclude.is_empty());
    assert_eq!(config.keys.missing, KeyMissing::Fail);
    assert!(config.keys.columns.is_empty());
    assert!(config.keys.tombstones_on_delete);

    assert_eq!(config.topics.prefix, "cdc");
    assert_eq!(
        config.topics.template.as_str(),
        "${prefix}.${schema}.${table}"
    );
    assert_eq!(config.topics.ops, "cdc.cdc.ops");
    assert_eq!(config.topics.signals, "cdc.cdc.signals");
    assert_eq!(config.topics.schema, "cdc.cdc.schema");
    assert_eq!(config.topics.dlq, "cdc.cdc.dlq");
    assert_eq!(config.topics.heartbeat, "cdc.cdc.heartbeat");
    assert_eq!(config.topics.txjournal, "cdc.cdc.txjournal");
    assert!(!config.topics.transactions_enabled);
    assert_eq!(config.topics.transactions, "cdc.cdc.transactions");
    assert_eq!(config.topics.internal_replication_factor, None);
    assert!(config.kafka.bootstrap_servers.is_empty());
    assert!(config.kafka.client_properties.is_empty());

    assert_eq!(config.snapshot.mode, SnapshotMode::Initial);
    assert_eq!(config.snapshot.threads, 4);
    assert_eq!(config.snapshot.chunk_rows, 100_000);
    assert_eq!(config.snapshot.chunk_retries, 5);
    assert_eq!(config.snapshot.fetch_size, 5000);
    assert_eq!(config.snapshot.max_pending_chunks, 8);
    assert!(config.snapshot.tables_order.is_empty());
    assert!(config.snapshot.select_overrides.is_empty());

    assert_eq!(config.retry.max_time, Duration::from_secs(86_400));
    assert!(config.retry.extra_error_codes.is_empty());
    assert!(!config.retry.log_sensitive_data);
    assert_eq!(config.heartbeat.interval, Some(Duration::from_secs(10)));
    assert_eq!(config.poll.max_records, 2000);
    assert_eq!(config.poll.linger, Duration::from_millis(50));
    assert_eq!(config.poll.shutdown_timeout, Duration::from_secs(30));
    assert_eq!(config.eos.batch_max_records, 5000);
    assert_eq!(config.eos.batch_max_bytes, 16 << 20);
    assert_eq!(config.eos.batch_max_time, Duration::from_millis(500));
    assert_eq!(config.eos.split_max_records, 500_000);
    assert_eq!(config.eos.split_max_bytes, 256 << 20);
    assert_eq!(config.rest.listen.to_string(), "127.0.0.1:8083");
}

#[test]
fn spill_dir_defaults_under_the_worker_temp_dir() {
    let config = oracle_minimal().validate().unwrap();
    assert_eq!(
        config.spill_dir(Path::new("/tmp")),
        Path::new("/tmp/oracle-cdc-spill/orders-cdc")
    );

    // A name is one path component, whatever the operator called the connector.
    let mut odd = oracle_minimal();
    odd.set("name", "../a/b");
    let config = odd.validate().unwrap();
    assert_eq!(
        config.spill_dir(Path::new("/tmp")),
        Path::new("/tmp/oracle-cdc-spill/.._a_b")
    );
    let mut dots = oracle_minimal();
    dots.set("name", "..");
    let config = dots.validate().unwrap();
    assert_eq!(
        config.spill_dir(Path::new("/tmp")),
        Path::new("/tmp/oracle-cdc-spill/__")
    );

    let mut given = oracle_minimal();
    given.set("cdc.buffer.spill.dir", "/var/lib/cdc/spill");
    let config = given.validate().unwrap();
    assert_eq!(
        config.spill_dir(Path::new("/tmp")),
        Path::new("/var/lib/cdc/spill")
    );
}

#[test]
fn decode_threads_zero_means_cores_minus_one_at_most_eight() {
    let config = oracle_minimal().validate().unwrap();
    assert_eq!(config.mining.decode_threads, 0, "0 is kept as given");
    for (cores, threads) in [(1, 1), (2, 1), (4, 3), (9, 8), (64, 8)] {
        assert_eq!(config.decode_threads(cores), threads, "{cores} cores");
    }
    let mut explicit = oracle_minimal();
    explicit.set("cdc.mining.decode.threads", "12");
    assert_eq!(explicit.validate().unwrap().decode_threads(4), 12);
}

#[test]
fn zero_intervals_mean_off() {
    let mut config = oracle_minimal();
    config.set("cdc.heartbeat.interval.ms", "0");
    config.set("cdc.dictionary.build.interval.ms", "0");
    let config = config.validate().unwrap();
    assert_eq!(config.heartbeat.interval, None);
    assert_eq!(config.dictionary.build_interval, None);
}

/// LOB values are not assembled from LOB_WRITE rows yet: `inline` and `reselect` would deliver
/// a value stored out of the row as an empty LOB, so the configuration refuses them by name.
#[test]
fn lob_modes_other_than_skip_are_refused_until_built() {
    for mode in ["inline", "reselect"] {
        let mut config = oracle_minimal();
        config.set("cdc.lob.mode", mode);
        let errors = config.validate().unwrap_err();
        assert_eq!(errors.keys(), ["cdc.lob.mode"], "{errors}");
        let Problem::Unsupported { supported, .. } = &errors.errors()[0].problem else {
            panic!("{errors}");
        };
        assert_eq!(supported, "skip");
        assert!(errors.to_string().contains("not assembled"), "{errors}");
    }
    let mut config = oracle_minimal();
    config.set("cdc.lob.mode", "skip");
    assert!(config.validate().is_ok());
}
