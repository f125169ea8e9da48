//! `docs/configuration.md` is generated from the key table; this test fails when they drift.
//! Regenerate with `CDC_BLESS=1 cargo test -p cdc-core --test main config_doc`.

use std::path::PathBuf;

use cdc_core::config::{KEYS, render_markdown};

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md")
}

#[test]
fn configuration_doc_matches_the_key_table() {
    let rendered = render_markdown();
    let path = doc_path();
    if std::env::var_os("CDC_BLESS").is_some_and(|value| value == "1") {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    if on_disk != rendered {
        let first_difference = on_disk
            .lines()
            .zip(rendered.lines())
            .position(|(disk, table)| disk != table)
            .unwrap_or_else(|| on_disk.lines().count().min(rendered.lines().count()));
        panic!(
            "{} is out of date with the key table (first difference at line {}).\n\
             Regenerate it with:\n    CDC_BLESS=1 cargo test -p cdc-core --test main config_doc",
            path.display(),
            first_difference + 1,
        );
    }
}

#[test]
fn every_key_is_documented() {
    let rendered = render_markdown();
    for spec in KEYS {
        let cell = format!("| `{}` |", spec.display_name());
        assert!(
            rendered.contains(&cell),
            "{} is not in the document",
            spec.key
        );
    }
    assert!(rendered.contains("**reserved**"));
}
