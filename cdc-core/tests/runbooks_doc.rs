//! Keeps `docs/runbooks.md` and the CDC code table in `cdc_core::error` in step, both ways:
//! every code has its section with the table's name, class, condition and operator action, and
//! the doc has no CDC section the table lacks.

use std::collections::BTreeSet;
use std::path::PathBuf;

use cdc_core::CdcCode;
use cdc_core::ora::CLASSIFICATION;

const ANCHOR_OPEN: &str = "<a id=\"cdc-";

fn runbooks() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/runbooks.md");
    let read = std::fs::read_to_string(&path);
    assert!(read.is_ok(), "cannot read {}: {read:?}", path.display());
    read.unwrap_or_default()
}

/// Compares prose, not layout: code spans and line breaks may differ between doc and table.
fn normalize(text: &str) -> String {
    text.replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text of a code's section: from its anchor to the next CDC anchor.
fn section(doc: &str, code: CdcCode) -> &str {
    let anchor = format!("<a id=\"{}\"></a>", code.runbook_anchor());
    let starts: Vec<_> = doc.match_indices(&anchor).collect();
    assert_eq!(
        starts.len(),
        1,
        "{anchor} must appear exactly once in docs/runbooks.md"
    );
    let start = starts[0].0;
    let rest = &doc[start + anchor.len()..];
    let end = rest.find(ANCHOR_OPEN).unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn every_code_has_its_section() {
    let doc = runbooks();
    for code in CdcCode::ALL {
        let section = section(&doc, code);
        let heading = format!("## {} {}", code.id(), code.name());
        assert!(
            section.lines().any(|line| line.trim_end() == heading),
            "{}: heading {heading:?} missing right after its anchor",
            code.id()
        );
        let text = normalize(section);
        let class = format!("**Class:** {}", code.class());
        assert!(text.contains(&class), "{}: {class:?} missing", code.id());
        let condition = format!("**Condition:** {}", normalize(code.condition()));
        assert!(
            text.contains(&condition),
            "{}: condition differs from the table",
            code.id()
        );
        let action = format!("**Operator action:** {}", normalize(code.operator_action()));
        assert!(
            text.contains(&action),
            "{}: operator action differs from the table",
            code.id()
        );
        assert!(text.contains("**Steps:**"), "{}: no steps", code.id());
    }
}

#[test]
fn the_doc_has_no_section_the_table_lacks() {
    let doc = runbooks();
    let table: BTreeSet<String> = CdcCode::ALL
        .iter()
        .map(|code| code.id().to_owned())
        .collect();

    let mut headings = Vec::new();
    for line in doc.lines() {
        if let Some(rest) = line.strip_prefix("## CDC-") {
            let id = format!("CDC-{}", rest.split_whitespace().next().unwrap_or(""));
            let code = CdcCode::parse(&id)
                .unwrap_or_else(|| panic!("heading {line:?} names no code in the table"));
            let expected = format!("## {} {}", code.id(), code.name());
            assert_eq!(
                line.trim_end(),
                expected,
                "heading does not match the table"
            );
            headings.push(code);
        }
    }
    let mut anchors = Vec::new();
    for (start, _) in doc.match_indices(ANCHOR_OPEN) {
        let rest = &doc[start + ANCHOR_OPEN.len()..];
        let number = rest.split('"').next().unwrap_or("");
        let code = CdcCode::parse(&format!("CDC-{number}"))
            .unwrap_or_else(|| panic!("anchor cdc-{number} names no code in the table"));
        anchors.push(code);
    }

    // Every code once, in the table's order.
    assert_eq!(headings, CdcCode::ALL, "CDC headings differ from the table");
    assert_eq!(anchors, CdcCode::ALL, "CDC anchors differ from the table");

    // No other mention of a code the table does not define (a removed or mistyped one).
    let mentioned: BTreeSet<String> = doc
        .match_indices("CDC-")
        .filter_map(|(start, _)| doc.get(start..start + 8))
        .filter(|id| id[4..].bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_owned)
        .collect();
    let unknown: Vec<&String> = mentioned.difference(&table).collect();
    assert!(
        unknown.is_empty(),
        "the doc mentions codes the table lacks: {unknown:?}"
    );
}

#[test]
fn classified_ora_codes_are_named_in_their_section() {
    let doc = runbooks();
    for (ora, class) in CLASSIFICATION {
        if let Some(code) = class.cdc_code() {
            assert!(
                section(&doc, code).contains(&ora.to_string()),
                "{ora} is not named in the section of {}",
                code.id()
            );
        }
    }
}
