//! Validation reports every problem at once, each naming the key, the value and what is
//! allowed; secrets never appear; warnings come with the valid configuration.

use std::path::Path;

use cdc_core::config::{Config, Problem, Secret, WarningKind};

const PASSWORD: &str = "s3cr3t-Pa55";

fn fixture(name: &str) -> std::io::Result<String> {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/config")
            .join(name),
    )
}

fn sim(extra: &[(&str, &str)]) -> Config {
    let mut config = Config::from_pairs([
        ("name", "demo"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", "cdc"),
        ("cdc.tables.include", "APP\\..*"),
    ]);
    for (key, value) in extra {
        config.set(*key, *value);
    }
    config
}

#[test]
fn three_mistakes_give_exactly_three_errors() {
    let config = Config::from_properties(&fixture("three-mistakes.properties").unwrap()).unwrap();
    let errors = config.validate().unwrap_err();
    assert_eq!(
        errors.keys(),
        vec![
            "cdc.mining.max.logs.per.stpe",
            "cdc.buffer.memory.max.bytes",
            "cdc.capture.mode"
        ],
        "{errors}"
    );

    let [typo, small, mode] = errors.errors() else {
        unreachable!()
    };
    assert_eq!(
        typo.problem,
        Problem::Unknown {
            did_you_mean: Some("cdc.mining.max.logs.per.step".to_owned())
        }
    );
    assert_eq!(typo.line, Some(15));

    assert_eq!(small.given.as_deref(), Some("1000"));
    assert_eq!(small.line, Some(16));
    let Problem::Invalid { allowed, .. } = &small.problem else {
        panic!("{small}")
    };
    assert!(allowed.contains("16777216"), "{allowed}");

    assert_eq!(mode.given.as_deref(), Some("archive"));
    let Problem::Invalid { allowed, .. } = &mode.problem else {
        panic!("{mode}")
    };
    assert!(
        allowed.contains("online") && allowed.contains("archive_only"),
        "{allowed}"
    );

    let text = errors.to_string();
    assert!(text.starts_with("3 configuration problems:"), "{text}");
    assert!(
        text.contains("did you mean cdc.mining.max.logs.per.step?"),
        "{text}"
    );
    assert!(!text.contains(PASSWORD), "{text}");
    assert!(!format!("{errors:?}").contains(PASSWORD));
}

#[test]
fn required_keys_are_each_reported() {
    let errors = Config::new().validate().unwrap_err();
    let keys = errors.keys();
    for key in [
        "name",
        "cdc.topic.prefix",
        "cdc.tables.include",
        "cdc.database.url",
        "cdc.database.user",
        "cdc.database.password",
    ] {
        assert!(keys.contains(&key), "{key} missing from {errors}");
    }
    assert_eq!(keys.len(), 6, "{errors}");
    assert!(
        errors
            .iter()
            .all(|error| matches!(error.problem, Problem::Missing { .. }))
    );
}

#[test]
fn the_simulator_needs_no_database() {
    let config = sim(&[]).validate().unwrap();
    assert!(config.database.login.is_none());
}

#[test]
fn host_needs_service_or_sid_but_not_both() {
    let base = [
        ("cdc.source", "oracle"),
        ("cdc.database.host", "db"),
        ("cdc.database.user", "u"),
        ("cdc.database.password", PASSWORD),
    ];
    let errors = sim(&base).validate().unwrap_err();
    assert_eq!(errors.keys(), vec!["cdc.database.service"], "{errors}");

    let mut both = base.to_vec();
    both.extend([("cdc.database.service", "S"), ("cdc.database.sid", "X")]);
    let errors = sim(&both).validate().unwrap_err();
    assert_eq!(errors.keys(), vec!["cdc.database.sid"], "{errors}");

    let mut sid = base.to_vec();
    sid.extend([("cdc.database.sid", "ORCL"), ("cdc.database.port", "1522")]);
    let config = sim(&sid).validate().unwrap();
    let login = config.database.login.unwrap();
    assert_eq!(
        login.endpoint.connect_string(),
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=db)(PORT=1522))(CONNECT_DATA=(SID=ORCL)))"
    );
    assert_eq!(login.password.expose_secret(), PASSWORD);
}

#[test]
fn url_overrides_host_with_a_warning() {
    let config = sim(&[
        ("cdc.source", "oracle"),
        ("cdc.database.url", "jdbc:oracle:thin:@//db:1521/ORCL"),
        ("cdc.database.host", "other"),
        ("cdc.database.user", "u"),
        ("cdc.database.password", PASSWORD),
    ])
    .validate()
    .unwrap();
    assert_eq!(
        config
            .database
            .login
            .as_ref()
            .unwrap()
            .endpoint
            .connect_string(),
        "//db:1521/ORCL"
    );
    assert_eq!(config.warnings().len(), 1);
    assert_eq!(config.warnings()[0].key, "cdc.database.host");
    assert_eq!(config.warnings()[0].kind, WarningKind::Ignored);
}

#[test]
fn credentials_in_the_url_are_refused_and_masked() {
    let errors = sim(&[
        ("cdc.source", "oracle"),
        (
            "cdc.database.url",
            "jdbc:oracle:thin:scott/tiger@//db:1521/ORCL",
        ),
        ("cdc.database.user", "u"),
        ("cdc.database.password", PASSWORD),
    ])
    .validate()
    .unwrap_err();
    assert_eq!(errors.keys(), vec!["cdc.database.url"]);
    assert_eq!(
        errors.errors()[0].given.as_deref(),
        Some("jdbc:oracle:thin:****@//db:1521/ORCL")
    );
    assert!(!errors.to_string().contains("tiger"));
}

#[test]
fn every_kind_of_bad_value_names_its_key_value_and_allowed() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "cdc.mining.fetch.size",
            "ten",
            "an integer from 100 to 1000000",
        ),
        ("cdc.tables.case.sensitive", "yes", "true or false"),
        (
            "cdc.transaction.max.age.ms",
            "500",
            "-1 (unlimited) or milliseconds, at least 1000",
        ),
        ("cdc.dictionary.build.time", "2am", "HH:mm"),
        ("cdc.rest.listen", "8083", "host:port"),
        ("cdc.kafka.bootstrap.servers", "kafka", "host:port"),
        (
            "cdc.retry.extra.error.codes",
            "ORA-1,TNS-12541",
            "ORA codes",
        ),
        ("cdc.key.columns", "APP.ORDERS", "SCHEMA.TABLE:COLUMN"),
        (
            "cdc.archive.destination",
            "LOG_ARCHIVE_DEST_32",
            "LOG_ARCHIVE_DEST_n",
        ),
        (
            "cdc.internal.topic.replication.factor",
            "0",
            "-1 (broker default)",
        ),
        ("cdc.start.scn", "0", "an SCN, at least 1"),
        ("cdc.topic.prefix", "my cdc", "letters, digits"),
        ("cdc.ops.topic", "${prefix}.ops!", "Kafka topic name"),
        ("cdc.ops.topic", "${prefx}.ops", "Kafka topic name"),
        (
            "cdc.topic.template",
            "${prefix}.${owner}.${table}",
            "${schema}",
        ),
        ("cdc.tables.include", "APP\\.(ORDERS", "regular expressions"),
        ("cdc.columns.exclude", "*", "regular expressions"),
        (
            "cdc.snapshot.select.override.ORDERS",
            "ID > 0",
            "[PDB.]OWNER.TABLE",
        ),
        ("tasks.max", "0", "an integer from 1"),
    ];
    for (key, value, allowed_part) in cases {
        let errors = sim(&[(key, value)]).validate().unwrap_err();
        assert_eq!(errors.keys(), vec![*key], "{key}={value}: {errors}");
        let error = &errors.errors()[0];
        assert_eq!(error.given.as_deref(), Some(*value), "{key}");
        let Problem::Invalid { allowed, .. } = &error.problem else {
            panic!("{error}")
        };
        assert!(allowed.contains(allowed_part), "{key}={value}: {allowed}");
        let text = error.to_string();
        assert!(text.contains(key) && text.contains(value), "{text}");
    }
}

#[test]
fn a_bad_prefix_is_one_error_not_one_per_topic() {
    let errors = sim(&[("cdc.topic.prefix", "my prefix")])
        .validate()
        .unwrap_err();
    assert_eq!(errors.keys(), vec!["cdc.topic.prefix"], "{errors}");
}

#[test]
fn side_topics_must_differ() {
    let errors = sim(&[("cdc.dlq.topic", "${prefix}.cdc.ops")])
        .validate()
        .unwrap_err();
    assert_eq!(errors.keys(), vec!["cdc.dlq.topic"], "{errors}");
    assert!(matches!(
        errors.errors()[0].problem,
        Problem::Conflict { .. }
    ));
    // The transactions topic only counts when it is enabled.
    assert!(
        sim(&[("cdc.transactions.topic", "${prefix}.cdc.ops")])
            .validate()
            .is_ok()
    );
}

/// A chunk size whose journal records the producer would refuse is lowered to the size that
/// fits, with a warning naming it; raising the producer's limit with it keeps it.
#[test]
fn a_journal_chunk_is_kept_within_the_producers_record_size() {
    let chunk = |extra: &[(&str, &str)]| {
        let config = sim(extra).validate().unwrap();
        let warned = config
            .warnings()
            .iter()
            .find(|w| w.key == "cdc.txjournal.chunk.max.bytes")
            .map(|w| (w.kind, w.message.clone()));
        (config.journal.chunk_max_bytes, warned)
    };
    // the default (512 KiB, about 700 000 bytes as a record) fits librdkafka's 1 000 000
    assert_eq!(chunk(&[]), (512 << 10, None));
    let (bytes, warned) = chunk(&[("cdc.txjournal.chunk.max.bytes", "1048576")]);
    assert_eq!(bytes, 737_712);
    let (kind, message) = warned.expect("a warning");
    assert_eq!(kind, WarningKind::Lowered);
    assert!(
        message.contains("cdc.kafka.message.max.bytes") && message.contains("737712"),
        "{message}"
    );
    // the largest size that fits is kept as it is, one more KiB is lowered
    assert_eq!(
        chunk(&[("cdc.txjournal.chunk.max.bytes", "737712")]),
        (737_712, None)
    );
    assert_eq!(
        chunk(&[("cdc.txjournal.chunk.max.bytes", "738736")]).0,
        737_712
    );
    assert_eq!(
        chunk(&[
            ("cdc.txjournal.chunk.max.bytes", "1048576"),
            ("cdc.kafka.message.max.bytes", "2000000"),
        ]),
        (1 << 20, None)
    );
}

#[test]
fn duplicate_tables_in_per_table_keys_are_refused() {
    let errors = sim(&[("cdc.key.columns", "APP.T:ID;app.t:CODE")])
        .validate()
        .unwrap_err();
    assert_eq!(errors.keys(), vec!["cdc.key.columns"], "{errors}");
    // Case-sensitive, they are two tables.
    assert!(
        sim(&[
            ("cdc.key.columns", "APP.T:ID;app.t:CODE"),
            ("cdc.tables.case.sensitive", "true")
        ])
        .validate()
        .is_ok()
    );
    let errors = sim(&[
        ("cdc.snapshot.select.override.APP.T", "ID > 0"),
        ("cdc.snapshot.select.override.app.t", "ID > 1"),
    ])
    .validate()
    .unwrap_err();
    assert_eq!(
        errors.keys(),
        vec!["cdc.snapshot.select.override.app.t"],
        "{errors}"
    );
}

#[test]
fn unknown_keys_get_the_closest_known_key_and_never_their_value() {
    let config = Config::from_properties(&format!(
        "name=x\ncdc.source=sim\ncdc.topic.prefix=p\ncdc.tables.include=A\\\\.B\n\
         cdc.database.pasword={PASSWORD}\ncdc.snapshot.select.overide.APP.T=ID>0\ncdc.zzz=1\n"
    ))
    .unwrap();
    let errors = config.validate().unwrap_err();
    let suggestions: Vec<Option<&str>> = errors
        .iter()
        .map(|error| match &error.problem {
            Problem::Unknown { did_you_mean } => did_you_mean.as_deref(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        suggestions,
        vec![
            Some("cdc.database.password"),
            Some("cdc.snapshot.select.override.APP.T"),
            None
        ]
    );
    assert!(errors.iter().all(|error| error.given.is_none()));
    assert!(!errors.to_string().contains(PASSWORD));
    assert!(!format!("{config:?}").contains(PASSWORD));
}

#[test]
fn other_keys_pass_through_and_look_alikes_are_warned() {
    let config = sim(&[
        ("producer.override.acks", "all"),
        ("producer.override.sasl.jaas.config", "secret-jaas"),
        ("heartbeat.interval.ms", "1000"),
    ])
    .validate()
    .unwrap();
    let pass = &config.connect.pass_through;
    assert_eq!(pass.get("producer.override.acks").unwrap().expose(), "all");
    assert!(
        pass.get("producer.override.sasl.jaas.config")
            .unwrap()
            .is_secret()
    );
    assert!(!format!("{config:?}").contains("secret-jaas"));
    let warnings: Vec<_> = config
        .warnings()
        .iter()
        .map(|w| (w.key.as_str(), w.kind))
        .collect();
    assert_eq!(
        warnings,
        vec![("heartbeat.interval.ms", WarningKind::LooksLikeCdcKey)]
    );
}

#[test]
fn warnings_come_with_the_valid_config() {
    let config = Config::from_properties(
        "name=x\ncdc.source=sim\ncdc.topic.prefix=p\ncdc.tables.include=A\\\\.B\n\
         tasks.max=3\ncdc.database.fan.enabled=true\ncdc.sim.seed=1\ncdc.sim.seed=2\n",
    )
    .unwrap()
    .validate()
    .unwrap();
    let kinds: Vec<_> = config
        .warnings()
        .iter()
        .map(|w| (w.key.as_str(), w.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("cdc.database.fan.enabled", WarningKind::ReservedKey),
            ("cdc.sim.seed", WarningKind::DuplicateKey),
            ("tasks.max", WarningKind::TasksMaxIgnored),
        ],
        "{:?}",
        config.warnings()
    );
    assert_eq!(config.sim.seed, 2, "the last value wins");
    assert!(config.warnings()[1].message.contains("lines 7 and 8"));
}

#[test]
fn a_reserved_key_with_a_bad_value_is_still_an_error() {
    let errors = sim(&[("cdc.database.idle.timeout.ms", "10")])
        .validate()
        .unwrap_err();
    assert_eq!(errors.keys(), vec!["cdc.database.idle.timeout.ms"]);
    assert_eq!(errors.warnings().len(), 1);
}

#[test]
fn secrets_never_show_in_debug_or_errors() {
    let mut config =
        Config::from_properties(&fixture("three-mistakes.properties").unwrap()).unwrap();
    config.set("cdc.database.tls.truststore.location", "/etc/cdc/trust.jks");
    config.set("cdc.database.tls.truststore.password", "trust-Pa55");
    config.set("cdc.kafka.sasl.password", "kafka-Pa55");
    config.set(
        "cdc.kafka.sasl.jaas.config",
        "PlainLoginModule required password=\"jaas-Pa55\";",
    );
    config.set(
        "cdc.journal.converter.schema.registry.basic.auth.user.info",
        "u:conv-Pa55",
    );
    config.set(
        "cdc.database.connection.properties",
        "oracle.net.x=1;password=drv-Pa55",
    );
    let secrets = [
        PASSWORD,
        "trust-Pa55",
        "kafka-Pa55",
        "jaas-Pa55",
        "conv-Pa55",
        "drv-Pa55",
    ];

    let shown_raw = format!("{config:?}");
    let errors = config.validate().unwrap_err();
    let shown_errors = format!("{errors:?} {errors}");
    // the refused keys are reported, their secrets masked
    for key in [
        "cdc.database.tls.truststore.location",
        "cdc.database.tls.truststore.password",
        "cdc.database.connection.properties",
    ] {
        assert!(errors.keys().contains(&key), "{errors}");
    }

    for key in [
        "cdc.mining.max.logs.per.stpe",
        "cdc.buffer.memory.max.bytes",
        "cdc.capture.mode",
        "cdc.database.tls.truststore.location",
        "cdc.database.tls.truststore.password",
        "cdc.database.connection.properties",
    ] {
        config.remove(key);
    }
    let typed = config.validate().unwrap();
    let shown_typed = format!("{typed:?}");
    for secret in secrets {
        assert!(!shown_raw.contains(secret), "{secret} in {shown_raw}");
        assert!(!shown_errors.contains(secret), "{secret} in {shown_errors}");
        assert!(!shown_typed.contains(secret), "{secret} in {shown_typed}");
    }
    assert!(shown_typed.contains("****"));

    // The values are all still there for the clients that need them.
    let login = typed.database.login.as_ref().unwrap();
    assert_eq!(login.password.expose_secret(), PASSWORD);
    let kafka: Vec<_> = typed.kafka.client_properties.iter_exposed().collect();
    assert!(
        kafka.contains(&("sasl.password", "kafka-Pa55")),
        "{kafka:?}"
    );
}

#[test]
fn a_bad_secret_value_is_shown_masked() {
    let mut config = sim(&[]);
    config.set(
        "cdc.database.connection.properties",
        "a=1;password=drv-Pa55;broken",
    );
    let errors = config.validate().unwrap_err();
    assert_eq!(errors.keys(), vec!["cdc.database.connection.properties"]);
    assert_eq!(
        errors.errors()[0].given.as_deref(),
        Some("a=1;password=****;broken")
    );
}

#[test]
fn secret_prints_as_mask() {
    let secret = Secret::new(PASSWORD);
    assert_eq!(format!("{secret}"), "****");
    assert_eq!(format!("{secret:?}"), "****");
    assert_eq!(secret.expose_secret(), PASSWORD);
}

/// Brokers are required only where records go to Kafka: `validate` accepts a configuration
/// without them (an embedder of the engine), `validate_for_delivery` reports them missing
/// with the other problems, and either broker key satisfies it.
#[test]
fn brokers_are_required_for_delivery_only() {
    let without = sim(&[]);
    assert!(without.validate().is_ok());
    let errors = without.validate_for_delivery().unwrap_err();
    assert_eq!(errors.keys(), ["bootstrap.servers"], "{errors}");
    assert!(
        errors
            .to_string()
            .contains("unless cdc.kafka.bootstrap.servers is set"),
        "{errors}"
    );

    let also_bad = sim(&[("cdc.heartbeat.interval.ms", "-1")]);
    let errors = also_bad.validate_for_delivery().unwrap_err();
    assert_eq!(errors.len(), 2, "{errors}");

    for key in ["bootstrap.servers", "cdc.kafka.bootstrap.servers"] {
        let mut with = sim(&[]);
        with.set(key, "broker:9092");
        assert!(with.validate_for_delivery().is_ok(), "{key}");
    }
}

/// Only Kafka Connect's JsonConverter is written for: naming it is the same as leaving the
/// key unset, any other converter is refused, naming the key and what is supported.
#[test]
fn converters_other_than_json_are_refused() {
    for key in ["key.converter", "value.converter"] {
        let json = sim(&[(key, "org.apache.kafka.connect.json.JsonConverter")]);
        assert!(json.validate().is_ok(), "{key}");
        let avro = sim(&[(key, "io.confluent.connect.avro.AvroConverter")]);
        let errors = avro.validate().unwrap_err();
        assert_eq!(errors.keys(), [key], "{errors}");
        let Problem::Unsupported { supported, .. } = &errors.errors()[0].problem else {
            panic!("{errors}");
        };
        assert_eq!(supported, "org.apache.kafka.connect.json.JsonConverter");
        let text = errors.to_string();
        assert!(text.contains("AvroConverter"), "{text}");
    }
}

/// Kafka Connect's rules, with this binary as a worker whose exactly-once source support is
/// on: `required` refuses a configuration the connector cannot deliver exactly once, the
/// boundary decides the delivery, and `interval` (not built) is refused naming what is.
#[test]
fn exactly_once_support_and_transaction_boundary_combine_as_connect_combines_them() {
    // (exactly.once.support, transaction.boundary) → exactly once, or the key refused
    let table: [(&str, &str, Result<bool, &str>); 6] = [
        ("requested", "poll", Ok(false)),
        ("requested", "connector", Ok(true)),
        ("required", "connector", Ok(true)),
        ("required", "poll", Err("exactly.once.support")),
        ("requested", "interval", Err("transaction.boundary")),
        ("required", "interval", Err("transaction.boundary")),
    ];
    for (support, boundary, expected) in table {
        let config = sim(&[
            ("exactly.once.support", support),
            ("transaction.boundary", boundary),
        ]);
        match (config.validate(), expected) {
            (Ok(typed), Ok(exactly_once)) => {
                assert_eq!(
                    typed.is_exactly_once(),
                    exactly_once,
                    "{support}/{boundary}"
                );
            }
            (Err(errors), Err(key)) => {
                assert_eq!(errors.keys(), [key], "{support}/{boundary}: {errors}");
                let text = errors.to_string();
                assert!(
                    text.contains(&format!(
                        "= \"{}\"",
                        if key == "transaction.boundary" {
                            boundary
                        } else {
                            support
                        }
                    )),
                    "{text}"
                );
                assert!(
                    text.contains("connector"),
                    "names what is supported: {text}"
                );
            }
            (got, expected) => panic!("{support}/{boundary}: {got:?}, expected {expected:?}"),
        }
    }
    // the default is Connect's: requested with poll, at least once
    assert!(!sim(&[]).validate().unwrap().is_exactly_once());
    let interval = sim(&[("transaction.boundary", "interval")])
        .validate()
        .unwrap_err();
    let Problem::Unsupported { supported, .. } = &interval.errors()[0].problem else {
        panic!("{interval}");
    };
    assert_eq!(supported, "poll, connector");
}

/// The wallet is part of the address built from the host; beside a connect string, which is
/// handed to the client whole, it would be ignored, so the configuration is refused.
#[test]
fn a_wallet_applies_to_the_address_built_from_the_host() {
    let oracle = |extra: &[(&str, &str)]| {
        let mut config = Config::from_pairs([
            ("name", "demo"),
            ("cdc.topic.prefix", "cdc"),
            ("cdc.tables.include", "APP\\..*"),
            ("cdc.database.user", "C##CDC"),
            ("cdc.database.password", PASSWORD),
            ("cdc.database.wallet.location", "/etc/oracle/wallet"),
        ]);
        for (key, value) in extra {
            config.set(*key, *value);
        }
        config.validate()
    };
    let host = oracle(&[
        ("cdc.database.host", "db"),
        ("cdc.database.service", "ORCL"),
    ])
    .unwrap();
    assert_eq!(
        host.database.wallet_location.as_deref(),
        Some(Path::new("/etc/oracle/wallet"))
    );
    let errors = oracle(&[("cdc.database.url", "//db:1521/ORCL")]).unwrap_err();
    assert_eq!(errors.keys(), ["cdc.database.wallet.location"], "{errors}");
    assert!(
        errors.to_string().contains("MY_WALLET_DIRECTORY"),
        "{errors}"
    );
}

/// A Java trust store cannot reach the Oracle client: setting one is an error that says what
/// to use instead, never a connection without the trust it was meant to give.
#[test]
fn trust_stores_are_refused_naming_what_to_use() {
    for (key, value) in [
        ("cdc.database.tls.truststore.location", "/etc/cdc/trust.jks"),
        ("cdc.database.tls.truststore.password", "trust-Pa55"),
        ("cdc.database.tls.truststore.type", "PKCS12"),
    ] {
        let errors = sim(&[(key, value)]).validate().unwrap_err();
        assert_eq!(errors.keys(), [key], "{errors}");
        let Problem::Unsupported { supported, .. } = &errors.errors()[0].problem else {
            panic!("{errors}");
        };
        assert!(supported.contains("cdc.database.url"), "{supported}");
        assert!(!errors.to_string().contains("trust-Pa55"), "{errors}");
        // empty is "not set"
        assert!(sim(&[(key, "")]).validate().is_ok(), "{key}=");
    }
}

/// `connector.class` may name this connector as Kafka Connect does (the full class name or an
/// alias); a configuration naming another connector is refused, naming the supported class.
#[test]
fn connector_classes_other_than_ours_are_refused() {
    for class in [
        cdc_core::config::CONNECTOR_CLASS,
        "OracleCdcSourceConnector",
        "OracleCdcSource",
    ] {
        let ours = sim(&[("connector.class", class)]);
        assert!(ours.validate().is_ok(), "{class}");
    }
    for class in [
        "io.debezium.connector.oracle.OracleConnector",
        "oraclecdcsource",
        "sh.oso.connect.oracle.OracleCdcSource",
    ] {
        let errors = sim(&[("connector.class", class)]).validate().unwrap_err();
        assert_eq!(errors.keys(), ["connector.class"], "{errors}");
        let text = errors.to_string();
        assert!(text.contains(class), "{text}");
        assert!(
            text.contains("sh.oso.connect.oracle.OracleCdcSourceConnector"),
            "{text}"
        );
    }
}
