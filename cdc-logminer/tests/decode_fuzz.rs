//! A proptest fuzz of the decoder: whatever the bytes, no panic, and long or deeply nested
//! input is handled in time proportional to its length (the cargo-fuzz target in `fuzz/` runs
//! the same entry points under libFuzzer).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_logminer::test_support as decode_support;

use std::sync::Arc;

use cdc_core::change::MinedRow;
use cdc_core::table::ColumnType;
use cdc_logminer::decode::{
    DecodeOptions, DecodeTable, classify_ddl, decode_row, inspect::inspect_line, parse_statement,
};
use decode_support::{Rng, corpus, layout, row};
use proptest::prelude::*;

fn all_types_table() -> DecodeTable {
    DecodeTable::without_exclusions(layout(
        "O",
        "T",
        &[
            ("A", ColumnType::Number),
            ("B", ColumnType::Varchar2),
            ("C", ColumnType::NVarchar2),
            ("D", ColumnType::Date),
            ("E", ColumnType::TimestampTz),
            ("F", ColumnType::Raw),
            ("G", ColumnType::IntervalDs),
            ("H", ColumnType::IntervalYm),
            ("I", ColumnType::BinaryFloat),
            ("J", ColumnType::TimestampLtz),
            ("K", ColumnType::Clob),
        ],
        &["A"],
    ))
}

/// Runs every entry point on `sql`; only a panic fails.
fn exercise(sql: &str, table: &DecodeTable) {
    let _ = parse_statement(sql);
    let _ = classify_ddl(sql);
    for code in [1u16, 2, 3, 5, 10] {
        let mut r: MinedRow = row(code, "O", "T", sql);
        let _ = decode_row(
            &r,
            Some(table),
            &DecodeOptions {
                log_sensitive_data: true,
            },
        );
        r.status = 2;
        let _ = decode_row(&r, Some(table), &DecodeOptions::default());
    }
    let line = serde_json::json!({ "sql_redo": sql, "operation_code": 3 }).to_string();
    let _ = inspect_line(&line);
}

const PIECES: [&str; 24] = [
    "'",
    "''",
    "\"",
    "(",
    ")",
    ",",
    "||",
    "\\",
    ";",
    " ",
    "/*",
    "*/",
    "NULL",
    "IS NULL",
    "and",
    "UNISTR('\\d83d",
    "TO_DATE(",
    "HEXTORAW('",
    "Unsupported Type",
    "ROWID = '",
    "é",
    "\u{1F600}",
    "1e",
    "-.",
];

fn mutate(sql: &str, rng: &mut Rng) -> String {
    let mut s: Vec<char> = sql.chars().collect();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(s.len() as u64 + 1) as usize;
        match rng.below(4) {
            0 => {
                let end = (at + rng.below(8) as usize).min(s.len());
                s.drain(at..end);
            }
            1 => {
                let piece = PIECES[rng.below(PIECES.len() as u64) as usize];
                s.splice(at..at, piece.chars());
            }
            2 => s.truncate(at),
            _ => {
                let end = (at + rng.below(16) as usize).min(s.len());
                let copy: Vec<char> = s[at..end].to_vec();
                s.splice(at..at, copy);
            }
        }
    }
    s.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(sql in ".{0,300}") {
        exercise(&sql, &all_types_table());
    }

    #[test]
    fn sql_like_text_never_panics(sql in r#"(insert into|update|delete from|values|set|where|and|IS NULL|ROWID|"O"\."T"|"[A-K]"|\(|\)|,|=|'[^']{0,6}'|''|\|\||UNISTR|TO_DATE|TO_TIMESTAMP_TZ|TO_DSINTERVAL|HEXTORAW|EMPTY_CLOB\(\)|NULL|Unsupported Type|[0-9.eE+-]{1,6}|\\[0-9a-fA-F]{0,4}| |;|/\*|\*/){0,40}"#) {
        exercise(&sql, &all_types_table());
    }

    #[test]
    fn mutated_real_shapes_never_panic(seed: u64) {
        let (layouts, rows) = corpus(seed, 2, 4);
        let mut rng = Rng::new(seed);
        for r in rows {
            let table = DecodeTable::without_exclusions(Arc::clone(
                layouts.iter().find(|l| Some(&l.table.table) == r.table_name.as_ref()).unwrap(),
            ));
            let sql = mutate(r.sql_redo.as_deref().unwrap(), &mut rng);
            let mut m = r.clone();
            m.sql_redo = Some(sql.clone());
            let _ = decode_row(&m, Some(&table), &DecodeOptions { log_sensitive_data: true });
            exercise(&sql, &table);
        }
    }
}

#[test]
fn long_and_deeply_nested_input_is_linear_and_refused_cleanly() {
    let table = all_types_table();
    let n = 200_000;
    let cases = [
        format!(
            r#"update "O"."T" set "B" = {}'x'{}"#,
            "f(".repeat(n),
            ")".repeat(n)
        ),
        format!(r#"update "O"."T" set "B" = {}'x'"#, "'a' || ".repeat(n)),
        format!(r#"update "O"."T" set "B" = '{}'"#, "''".repeat(n)),
        format!(
            r#"update "O"."T" set "B" = 'x' where {}"#,
            "\"B\" = 'x' and ".repeat(n)
        ),
        format!(
            r#"insert into "O"."T"({}) values ({})"#,
            "\"B\",".repeat(n),
            "'x',".repeat(n)
        ),
        format!(r#"update "O"."T" set "B" = {}"#, "/*".repeat(n)),
        format!(
            r#"update "O"."T" set "C" = UNISTR('{}')"#,
            "\\d83d".repeat(n)
        ),
        format!("create table t {}", "(".repeat(n)),
        format!("alter table {}", "\"".repeat(n)),
        "(".repeat(n),
        "'".repeat(n),
    ];
    for sql in &cases {
        exercise(sql, &table);
    }
    // nesting is bounded: 16 levels parse, 17 do not
    let ok = format!(
        r#"update "O"."T" set "B" = {}'x'{}"#,
        "f(".repeat(16),
        ")".repeat(16)
    );
    assert!(parse_statement(&ok).is_ok());
    let deep = format!(
        r#"update "O"."T" set "B" = {}'x'{}"#,
        "f(".repeat(17),
        ")".repeat(17)
    );
    assert!(parse_statement(&deep).is_err());
    // a long but valid concatenation decodes
    let long = format!(
        r#"update "O"."T" set "B" = {}'x'"#,
        "'a' || ".repeat(50_000)
    );
    let r = row(3, "O", "T", &long);
    assert!(decode_row(&r, Some(&table), &DecodeOptions::default()).is_ok());
}
