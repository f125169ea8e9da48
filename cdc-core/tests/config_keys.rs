//! Every key is honest, checked against what the code does rather than against a list: a
//! built key names tests that exist, a reserved key is warned about whenever it is set, and a
//! refused key (or a value that is not built) is an error naming the key and what is
//! supported.

use std::path::{Path, PathBuf};

use cdc_core::config::{
    Config, KEYS, KeyDefault, KeyKind, KeyShape, KeySpec, KeyStatus, Problem, WarningKind,
};

fn sim(extra: &[(&str, &str)]) -> Config {
    let mut config = Config::from_pairs([
        ("name", "keys"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", "cdc"),
        ("cdc.tables.include", "APP\\..*"),
    ]);
    for (key, value) in extra {
        config.set(*key, *value);
    }
    config
}

/// The key to set for `spec`: itself, or a member of its family.
fn key_of(spec: &KeySpec) -> String {
    match spec.shape {
        KeyShape::Exact => spec.key.to_owned(),
        KeyShape::Prefix { .. } => format!("{}APP.ORDERS", spec.key),
    }
}

/// A value the key's kind accepts: its default when it has a literal one.
fn sample(spec: &KeySpec) -> String {
    match spec.default {
        KeyDefault::Value(text) => text.to_owned(),
        _ => kind_sample(spec),
    }
}

/// A non-empty value the key's kind accepts.
fn kind_sample(spec: &KeySpec) -> String {
    match spec.kind {
        KeyKind::Integer { min, .. } => min.to_string(),
        KeyKind::DurationMs { min, .. } | KeyKind::Bytes { min, .. } => min.to_string(),
        KeyKind::DurationMsOrMinusOne { .. } | KeyKind::ReplicationFactor => "-1".to_owned(),
        KeyKind::Unsigned | KeyKind::Scn => "1".to_owned(),
        KeyKind::Boolean => "true".to_owned(),
        KeyKind::Choice(values) => values[0].to_owned(),
        KeyKind::Text | KeyKind::Name | KeyKind::Secret => "ID > 0".to_owned(),
        KeyKind::Path => "/tmp/cdc-sample".to_owned(),
        KeyKind::List => "APP".to_owned(),
        KeyKind::RegexList => "APP\\.T".to_owned(),
        KeyKind::OraCodes => "ORA-12345".to_owned(),
        KeyKind::KeyColumns => "APP.T:ID".to_owned(),
        KeyKind::DriverProperties => "oracle.net.CONNECT_TIMEOUT=5000".to_owned(),
        KeyKind::TimeOfDay => "02:00".to_owned(),
        KeyKind::DatabaseUrl => "//db:1521/ORCL".to_owned(),
        KeyKind::Host => "db".to_owned(),
        KeyKind::ListenAddress => "127.0.0.1:0".to_owned(),
        KeyKind::Brokers => "broker:9092".to_owned(),
        KeyKind::ArchiveDestination => "LOG_ARCHIVE_DEST_1".to_owned(),
        KeyKind::TopicPrefix => "cdc".to_owned(),
        KeyKind::TopicName => "sample-topic".to_owned(),
        KeyKind::TopicTemplate => "${prefix}.${schema}.${table}".to_owned(),
        KeyKind::ClassName => "com.example.Sample".to_owned(),
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether `file` (Rust source) has a test function `name`: `fn name(` with `#[test]` among
/// the attributes and doc comments right above it (unit tests in `src/` count, as do
/// proptest cases, which carry `#[test]` too).
fn has_test(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    let signature = format!("fn {name}(");
    lines.iter().enumerate().any(|(at, line)| {
        let line = line.trim_start();
        let declares = line.starts_with(&signature)
            || line
                .strip_prefix("pub ")
                .is_some_and(|rest| rest.starts_with(&signature));
        declares
            && lines[..at]
                .iter()
                .rev()
                .map(|line| line.trim())
                .take_while(|line| line.starts_with("#[") || line.starts_with("///"))
                .any(|line| line == "#[test]")
    })
}

#[test]
fn the_test_finder_finds_only_tests() {
    let source = "/// doc\n#[test]\n#[allow(x)]\nfn a_test() {}\n\nfn helper() {}\n#[test]\nfn helper_b() {}\n";
    assert!(has_test(source, "a_test"));
    assert!(has_test(source, "helper_b"));
    assert!(!has_test(source, "helper"), "a function that is not a test");
    assert!(!has_test(source, "missing"));
    assert!(!has_test(source, "a_tes"), "a prefix of a test's name");
}

#[test]
fn every_built_key_names_tests_that_exist() {
    let root = workspace();
    let mut problems = Vec::new();
    for spec in KEYS {
        match spec.status {
            KeyStatus::Built if spec.shown_by.is_empty() => {
                problems.push(format!("{} is built but names no test", spec.key));
            }
            KeyStatus::Built => {}
            _ if !spec.shown_by.is_empty() => problems.push(format!(
                "{} is {} but names tests of an effect",
                spec.key,
                spec.status.as_str()
            )),
            _ => continue,
        }
        for test in spec.shown_by {
            let Some((file, name)) = test.split_once("::") else {
                problems.push(format!("{}: {test} is not `path::test`", spec.key));
                continue;
            };
            match std::fs::read_to_string(root.join(file)) {
                Ok(source) if has_test(&source, name) => {}
                Ok(_) => problems.push(format!("{}: {file} has no test {name}", spec.key)),
                Err(e) => problems.push(format!("{}: cannot read {file}: {e}", spec.key)),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_reserved_key_is_warned_about_when_set() {
    let mut reserved = 0;
    for spec in KEYS {
        let key = key_of(spec);
        let value = sample(spec);
        let config = sim(&[(key.as_str(), value.as_str())]);
        match spec.status {
            KeyStatus::Reserved => {
                reserved += 1;
                assert!(!spec.why.is_empty(), "{key} says not why it is reserved");
                let typed = config
                    .validate()
                    .unwrap_or_else(|e| panic!("{key}={value}: {e}"));
                let warning = typed
                    .warnings()
                    .iter()
                    .find(|w| w.key == key && w.kind == WarningKind::ReservedKey);
                let warning = warning.unwrap_or_else(|| panic!("{key}: no reserved warning"));
                assert!(warning.message.contains(spec.why), "{warning}");
            }
            KeyStatus::Built => {
                // a built key set to its default is no reason to warn
                if let Ok(typed) = config.validate() {
                    assert!(
                        !typed
                            .warnings()
                            .iter()
                            .any(|w| w.kind == WarningKind::ReservedKey),
                        "{key}: {:?}",
                        typed.warnings()
                    );
                }
            }
            KeyStatus::Refused => {}
        }
    }
    assert!(reserved > 0);
}

#[test]
fn refused_keys_and_values_name_the_key_and_what_is_supported() {
    let unsupported = |spec: &KeySpec, key: &str, value: &str, supported: &str, why: &str| {
        let errors = sim(&[(key, value)])
            .validate()
            .expect_err(&format!("{key}={value} must be refused"));
        assert_eq!(errors.keys(), [key], "{errors}");
        let error = &errors.errors()[0];
        assert_eq!(
            error.problem,
            Problem::Unsupported {
                detail: why.to_owned(),
                supported: supported.to_owned(),
            },
            "{}",
            spec.key
        );
        let text = errors.to_string();
        assert!(text.contains(key) && text.contains(supported), "{text}");
    };
    let mut refused = 0;
    for spec in KEYS {
        let key = key_of(spec);
        if spec.status == KeyStatus::Refused {
            refused += 1;
            assert!(!spec.why.is_empty() && !spec.instead.is_empty(), "{key}");
            unsupported(spec, &key, &kind_sample(spec), spec.instead, spec.why);
            continue;
        }
        if spec.supported.is_empty() {
            continue;
        }
        refused += 1;
        assert!(
            !spec.refusal.is_empty(),
            "{key} says not why values are refused"
        );
        let supported = spec.supported.join(", ");
        let values: Vec<String> = match spec.kind {
            KeyKind::Choice(values) => values.iter().map(|v| v.to_uppercase()).collect(),
            _ => spec
                .supported
                .iter()
                .map(|v| (*v).to_owned())
                .chain(["com.example.Other".to_owned()])
                .collect(),
        };
        for value in values {
            if spec.is_supported(&value) {
                let result = sim(&[(key.as_str(), value.as_str())]).validate();
                assert!(result.is_ok(), "{key}={value}: {result:?}");
            } else {
                unsupported(spec, &key, &value, &supported, spec.refusal);
            }
        }
        assert!(
            spec.supported.len()
                < match spec.kind {
                    KeyKind::Choice(values) => values.len(),
                    _ => usize::MAX,
                },
            "{key}: every value is supported, so none is refused"
        );
    }
    assert!(refused > 0);
}

#[test]
fn every_default_is_a_supported_value() {
    for spec in KEYS {
        if let KeyDefault::Value(text) = spec.default {
            assert!(
                spec.status == KeyStatus::Refused || spec.is_supported(text),
                "{}: default {text} is refused",
                spec.key
            );
        }
    }
}
