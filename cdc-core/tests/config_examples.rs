//! The configurations in `examples/` are valid as the binary validates them (brokers
//! included), set no key that only warns, and are each listed in `examples/README.md`.

use std::path::PathBuf;

use cdc_core::config::{Config, SourceKind};

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn examples() -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = std::fs::read_dir(examples_dir())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|e| e == "properties"))
                .map(|path| {
                    let name = path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    (name, text)
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn every_example_is_valid_and_warns_of_nothing() {
    let examples = examples();
    let names: Vec<&str> = examples.iter().map(|(name, _)| name.as_str()).collect();
    for wanted in [
        "sim-trial.properties",
        "oracle-non-cdb.properties",
        "oracle-cdb-two-pdbs.properties",
        "at-least-once.properties",
    ] {
        assert!(
            names.contains(&wanted),
            "examples/{wanted} is missing: {names:?}"
        );
    }
    for (name, text) in &examples {
        let parsed = Config::from_properties(text);
        assert!(parsed.is_ok(), "{name}: {parsed:?}");
        let Ok(config) = parsed else { continue };
        let validated = config.validate_for_delivery();
        match validated {
            Ok(config) => {
                assert!(
                    config.warnings().is_empty(),
                    "{name} sets keys that only warn: {:?}",
                    config.warnings()
                );
            }
            Err(errors) => panic!("{name} is not valid:\n{errors}"),
        }
    }
}

#[test]
fn the_examples_show_what_they_say() {
    let examples = examples();
    let config = |wanted: &str| {
        let text = examples
            .iter()
            .find(|(name, _)| name == wanted)
            .map(|(_, text)| text.clone())
            .unwrap_or_default();
        Config::from_properties(&text)
            .ok()
            .and_then(|c| c.validate_for_delivery().ok())
    };
    let sim = config("sim-trial.properties").expect("sim trial");
    assert_eq!(sim.source, SourceKind::Sim);
    let non_cdb = config("oracle-non-cdb.properties").expect("non-CDB");
    assert_eq!(non_cdb.source, SourceKind::Oracle);
    assert!(non_cdb.database.pdbs.is_empty());
    let cdb = config("oracle-cdb-two-pdbs.properties").expect("CDB");
    assert_eq!(cdb.database.pdbs.len(), 2, "{:?}", cdb.database.pdbs);
    for pdb in &cdb.database.pdbs {
        assert!(cdb.is_table_included(Some(pdb), "APP", "ORDERS"), "{pdb}");
    }
    assert!(!cdb.is_table_included(Some("OTHER"), "APP", "ORDERS"));
    let alo = config("at-least-once.properties").expect("at least once");
    assert_ne!(
        alo.connect.transaction_boundary,
        cdc_core::config::TransactionBoundary::Connector
    );
}

#[test]
fn the_readme_lists_every_example() {
    let readme = std::fs::read_to_string(examples_dir().join("README.md")).unwrap_or_default();
    for (name, _) in examples() {
        assert!(
            readme.contains(&format!("`{name}`")),
            "examples/README.md does not describe {name}"
        );
    }
}
