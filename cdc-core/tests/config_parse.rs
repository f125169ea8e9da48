//! Reading configuration text: Java `.properties` edge cases, the Kafka Connect JSON forms,
//! and that no input, however malformed, makes a parser or the validator panic.

use std::path::Path;

use cdc_core::config::{Config, ParseError, TransactionBoundary};
use proptest::prelude::*;

fn pairs(text: &str) -> Result<Vec<(String, String)>, ParseError> {
    Ok(Config::from_properties(text)?
        .iter()
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect())
}

fn one(text: &str) -> Result<(String, String), ParseError> {
    let all = pairs(text)?;
    assert_eq!(all.len(), 1, "{text:?} → {all:?}");
    Ok(all.into_iter().next().unwrap_or_default())
}

#[test]
fn properties_separators_comments_and_blanks() {
    let table: &[(&str, (&str, &str))] = &[
        ("a=b", ("a", "b")),
        ("a = b", ("a", "b")),
        ("a: b", ("a", "b")),
        ("a b", ("a", "b")),
        ("  a\t=\t b", ("a", "b")),
        ("a==b", ("a", "=b")),
        ("a = b = c", ("a", "b = c")),
        ("a =", ("a", "")),
        ("a", ("a", "")),
        ("a=b  ", ("a", "b  ")),
        ("a:=b", ("a", "=b")),
        ("a b:c", ("a", "b:c")),
        ("a\\=b=c", ("a=b", "c")),
        ("a\\ b=c", ("a b", "c")),
        ("a\\:b c", ("a:b", "c")),
        ("a=#not a comment", ("a", "#not a comment")),
    ];
    for (text, (key, value)) in table {
        assert_eq!(
            one(text).unwrap(),
            ((*key).to_owned(), (*value).to_owned()),
            "{text:?}"
        );
    }
}

#[test]
fn properties_comments_and_blank_lines_are_skipped() {
    let text = "# comment\n! also a comment\n   # indented comment\n\n   \n\ta=1\n";
    assert_eq!(pairs(text).unwrap(), vec![("a".to_owned(), "1".to_owned())]);
    // A comment ending in a backslash does not continue.
    assert_eq!(
        pairs("# comment \\\na=1").unwrap(),
        vec![("a".to_owned(), "1".to_owned())]
    );
}

#[test]
fn properties_escapes() {
    assert_eq!(one(r"a=tab\there").unwrap().1, "tab\there");
    assert_eq!(one(r"a=new\nline").unwrap().1, "new\nline");
    assert_eq!(one(r"a=back\\slash").unwrap().1, "back\\slash");
    assert_eq!(one(r"a=\u00fcber").unwrap().1, "über");
    assert_eq!(one(r"a=\uD83D\uDE00").unwrap().1, "😀");
    assert_eq!(
        one(r"a=\q\.").unwrap().1,
        "q.",
        "unknown escapes drop the backslash, as Java does"
    );
    assert_eq!(one(r"a=APP\\..*").unwrap().1, r"APP\..*");
}

#[test]
fn properties_line_continuation() {
    assert_eq!(
        one("a=one,\\\n    two,\\\n\tthree").unwrap().1,
        "one,two,three"
    );
    assert_eq!(
        one("a\\\n  b=c").unwrap(),
        ("ab".to_owned(), "c".to_owned())
    );
    // An even number of backslashes is escaped backslashes, not a continuation.
    assert_eq!(pairs("a=x\\\\\nb=y").unwrap().len(), 2);
    // Continuation at the end of the file just ends the value.
    assert_eq!(one("a=x\\").unwrap().1, "x");
    // Continued lines are never comments.
    assert_eq!(one("a=x\\\n#y").unwrap().1, "x#y");
}

#[test]
fn properties_line_endings() {
    for text in ["a=1\nb=2\n", "a=1\r\nb=2\r\n", "a=1\rb=2\r"] {
        assert_eq!(pairs(text).unwrap().len(), 2, "{text:?}");
    }
}

#[test]
fn properties_malformed_input_reports_the_line() {
    let error = Config::from_properties("a=1\nb=2\nc=\\u12G4\n").unwrap_err();
    assert_eq!(error.line, Some(3), "{error}");
    assert!(error.to_string().starts_with("line 3: "), "{error}");

    let error = Config::from_properties("a=1\n=value\n").unwrap_err();
    assert_eq!(error.line, Some(2), "{error}");

    let error = Config::from_properties("a=\\u12").unwrap_err();
    assert_eq!(error.line, Some(1), "{error}");

    let error = Config::from_properties("a=1\nb=\\uD800x").unwrap_err();
    assert_eq!(error.line, Some(2), "{error}");

    // A continued line reports the line it started on.
    let error = Config::from_properties("a=1\nb=x\\\n  \\uZZZZ").unwrap_err();
    assert_eq!(error.line, Some(2), "{error}");
}

#[test]
fn properties_record_lines_for_validation_errors() {
    let config = Config::from_properties("# head\nname=x\n\ncdc.lob.mode=never\n").unwrap();
    assert_eq!(config.line_of("cdc.lob.mode"), Some(4));
}

fn fixture(name: &str) -> std::io::Result<String> {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/config")
            .join(name),
    )
}

#[test]
fn connect_body_form() {
    let config = Config::from_connect_json(&fixture("connect-body.json").unwrap()).unwrap();
    assert_eq!(config.get("name"), Some("orders-cdc"));
    assert_eq!(config.get("tasks.max"), Some("1"));
    assert_eq!(config.get("value.converter.schemas.enable"), Some("false"));
    assert_eq!(config.get("cdc.buffer.memory.max.bytes"), Some("536870912"));
    assert_eq!(config.get("cdc.start.scn"), None, "null leaves a key unset");
    assert_eq!(
        config.get("tasks"),
        None,
        "body fields beside config are not keys"
    );

    let typed = config.validate().unwrap();
    assert!(typed.warnings().is_empty(), "{:?}", typed.warnings());
    // Connect's identity key is accepted and kept as given
    assert_eq!(
        typed.connect.connector_class.as_deref(),
        Some("OracleCdcSourceConnector")
    );
    assert_eq!(
        typed.connect.transaction_boundary,
        TransactionBoundary::Connector
    );
    assert!(typed.is_exactly_once());
    assert!(!typed.connect.value_converter_schemas_enable);
    assert_eq!(typed.buffer.memory_max_bytes, 512 << 20);
    assert_eq!(typed.database.pdbs, vec!["FREEPDB1", "FREEPDB2"]);
    assert_eq!(
        typed.kafka.bootstrap_servers,
        vec!["kafka-1:9092", "kafka-2:9092"]
    );
    assert_eq!(
        typed
            .kafka
            .client_properties
            .get("security.protocol")
            .unwrap()
            .expose(),
        "SASL_SSL"
    );
    assert!(
        typed
            .kafka
            .client_properties
            .get("sasl.jaas.config")
            .unwrap()
            .is_secret()
    );
    assert!(typed.is_column_excluded(Some("FREEPDB1"), "APP", "CUSTOMERS", "CARD_NUMBER"));
    assert!(!format!("{typed:?}").contains("kafka-Pa55"));
}

#[test]
fn connect_flat_form() {
    let config = Config::from_connect_json(
        r#"{"name": "x", "tasks.max": 2, "cdc.tombstones.on.delete": false, "cdc.eos.batch.max.ms": 1.5}"#,
    )
    .unwrap();
    assert_eq!(config.get("tasks.max"), Some("2"));
    assert_eq!(config.get("cdc.tombstones.on.delete"), Some("false"));
    assert_eq!(config.get("cdc.eos.batch.max.ms"), Some("1.5"));
}

#[test]
fn connect_body_name_is_used_and_must_agree() {
    let config = Config::from_connect_json(r#"{"name": "outer", "config": {"a": "b"}}"#).unwrap();
    assert_eq!(config.get("name"), Some("outer"));
    let config =
        Config::from_connect_json(r#"{"name": "same", "config": {"name": "same"}}"#).unwrap();
    assert_eq!(config.get("name"), Some("same"));
    let error =
        Config::from_connect_json("{\"name\": \"a\",\n\"config\": {\"name\": \"b\"}}").unwrap_err();
    assert!(
        error.message.contains("\"a\"") && error.message.contains("\"b\""),
        "{error}"
    );
}

#[test]
fn connect_json_malformed_input_reports_the_line() {
    let cases: &[(&str, usize)] = &[
        ("{\n\"a\": \"b\",\n\"c\" \"d\"\n}", 3),
        ("{\"config\": {\n\"a\": [1, 2]\n}}", 2),
        ("{\"config\": {\n\"a\":\n{\"b\": 1}}}", 3),
        ("[1, 2]", 1),
        ("\"text\"", 1),
        ("{\"a\": \"b\"", 1),
        ("{\"a\": \"b\"}\n{}", 2),
    ];
    for (text, line) in cases {
        let error = Config::from_connect_json(text).unwrap_err();
        assert_eq!(error.line, Some(*line), "{text:?}: {error}");
    }
    let error = Config::from_connect_json("").unwrap_err();
    assert!(error.to_string().contains("EOF"), "{error}");
}

proptest! {
    #[test]
    fn properties_parser_never_panics(text in any::<String>()) {
        let _ = Config::from_properties(&text);
    }

    #[test]
    fn properties_parser_never_panics_on_near_miss_text(
        text in r"([a-z.]{0,6}[=: \t\\#!]{0,3}(\\u[0-9a-fA-FxZ]{0,5})?[a-z ]{0,4}[\r\n]{0,2}){0,8}"
    ) {
        if let Ok(config) = Config::from_properties(&text) {
            let _ = config.validate();
        }
    }

    #[test]
    fn connect_json_parser_never_panics(text in any::<String>()) {
        let _ = Config::from_connect_json(&text);
    }

    #[test]
    fn connect_json_parser_never_panics_on_near_miss_json(
        text in r#"[{}\[\]":, a-z0-9\n]{0,40}"#
    ) {
        let _ = Config::from_connect_json(&text);
    }

    #[test]
    fn simple_pairs_round_trip(
        entries in prop::collection::btree_map("[a-z][a-z0-9.]{0,12}", "[a-zA-Z0-9.,:/ ]{0,16}", 0..8)
    ) {
        let text: String = entries.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        let config = Config::from_properties(&text).unwrap();
        let read: Vec<(String, String)> =
            config.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        let expected: Vec<(String, String)> =
            entries.into_iter().map(|(k, v)| (k, v.trim_start().to_owned())).collect();
        prop_assert_eq!(read, expected);
    }

    #[test]
    fn validation_never_panics_on_any_value_of_any_key(
        picks in prop::collection::vec((0..cdc_core::config::KEYS.len(), any::<String>()), 0..12)
    ) {
        let mut config = Config::from_pairs([
            ("name", "n"),
            ("cdc.source", "sim"),
            ("cdc.topic.prefix", "p"),
            ("cdc.tables.include", "A\\.B"),
        ]);
        for (index, value) in picks {
            let spec = &cdc_core::config::KEYS[index];
            let key = match spec.shape {
                cdc_core::config::KeyShape::Exact => spec.key.to_owned(),
                cdc_core::config::KeyShape::Prefix { .. } => format!("{}X.Y", spec.key),
            };
            config.set(key, value);
        }
        match config.validate() {
            Ok(typed) => {
                let _ = format!("{typed:?}");
            }
            Err(errors) => {
                prop_assert!(!errors.is_empty());
                let _ = errors.to_string();
            }
        }
    }
}
