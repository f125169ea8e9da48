//! `docs/records.md` names every ops event type and every DLQ record kind the code has, and
//! names no other as an ops event.

use std::collections::BTreeSet;
use std::path::PathBuf;

use cdc_core::{DlqKind, OpsKind};

fn records_md() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/records.md");
    let text = std::fs::read_to_string(&path);
    assert!(text.is_ok(), "cannot read {}: {text:?}", path.display());
    text.unwrap_or_default()
}

/// The text of a `### title` section, up to the next heading.
fn section<'a>(text: &'a str, title: &str) -> &'a str {
    let start = text.find(&format!("### {title}\n"));
    assert!(start.is_some(), "docs/records.md has no section {title:?}");
    let body = &text[start.unwrap_or(0) + title.len() + 5..];
    &body[..body.find("\n#").unwrap_or(body.len())]
}

#[test]
fn every_ops_event_type_is_in_the_table_and_no_other() {
    let text = records_md();
    let table = section(&text, "Ops events");
    // the first column of the table's rows: one or more `type` names
    let documented: BTreeSet<&str> = table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('|').nth(1))
        .flat_map(|cell| cell.split(',').map(|n| n.trim().trim_matches('`')))
        .collect();
    let built: BTreeSet<&str> = OpsKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(documented, built);
}

#[test]
fn every_dlq_kind_is_named() {
    let text = records_md();
    let side = &text[text.find("## Side records").unwrap_or(0)..];
    for kind in DlqKind::ALL {
        assert!(
            side.contains(&format!("`{kind}`")),
            "docs/records.md does not name the DLQ kind {kind}"
        );
    }
}
