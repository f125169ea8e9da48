//! Shared by the decoder's tests, its bench and its profile example: layouts, mined rows, and a
//! deterministic corpus of SQL_REDO in the shapes `docs/decoding.md` lists.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::should_implement_trait
)]

use std::sync::Arc;

use cdc_core::change::{MinedRow, Operation};
use cdc_core::position::{ConId, ObjectId, RsId, Scn, Xid};
use cdc_core::table::{ColumnDef, ColumnType, KeySource, TableId, TableLayout};

pub fn layout(
    owner: &str,
    table: &str,
    columns: &[(&str, ColumnType)],
    key: &[&str],
) -> Arc<TableLayout> {
    Arc::new(TableLayout {
        table: TableId::new(owner, table),
        version: 3,
        valid_from: Scn(1),
        columns: columns
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| ColumnDef::new(*name, i as u16 + 1, ty.clone()))
            .collect(),
        key: key.iter().map(|k| (*k).to_owned()).collect(),
        key_source: KeySource::PrimaryKey,
        supplemental: Default::default(),
        segment: Vec::new(),
    })
}

/// A mined row of `APP`-style metadata around `sql`.
pub fn row(code: u16, owner: &str, table: &str, sql: &str) -> MinedRow {
    let mut r = MinedRow::new(
        Scn(1_234_567),
        RsId::new(0x4, 0x964e, 0x9c),
        7,
        Xid::new(5, 12, 900),
        Operation::from_code(code),
    );
    r.seg_owner = Some(owner.to_owned());
    r.table_name = Some(table.to_owned());
    r.sql_redo = Some(sql.to_owned());
    r.data_obj = Some(ObjectId(73_001));
    r.src_con_id = ConId(0);
    r
}

/// A small deterministic generator (xorshift64*): no `rand` dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The column types of the corpus, weighted like real tables (mostly NUMBER and VARCHAR2).
const TYPE_MIX: [ColumnType; 20] = [
    ColumnType::Number,
    ColumnType::Number,
    ColumnType::Number,
    ColumnType::Number,
    ColumnType::Varchar2,
    ColumnType::Varchar2,
    ColumnType::Varchar2,
    ColumnType::Varchar2,
    ColumnType::Char,
    ColumnType::NVarchar2,
    ColumnType::Date,
    ColumnType::Date,
    ColumnType::Timestamp,
    ColumnType::TimestampTz,
    ColumnType::TimestampLtz,
    ColumnType::BinaryFloat,
    ColumnType::BinaryDouble,
    ColumnType::IntervalDs,
    ColumnType::IntervalYm,
    ColumnType::Raw,
];

const WORDS: [&str; 12] = [
    "alpha",
    "O''Brien",
    "beta",
    "gamma delta",
    "Zürich",
    "épée",
    "north",
    "south-east",
    "x",
    "lorem ipsum dolor",
    "naïve",
    "42nd street",
];

/// One literal of a type, as LogMiner writes it under the engine's NLS settings.
pub fn literal(rng: &mut Rng, ty: &ColumnType, nullable: bool) -> String {
    if nullable && rng.chance(8) {
        return "NULL".to_owned();
    }
    match ty {
        ColumnType::Number | ColumnType::Float => match rng.below(3) {
            0 => format!("'{}'", rng.below(1_000_000)),
            1 => format!("'-{}.{}'", rng.below(100_000), rng.below(100) + 1),
            _ => format!("'{}.{:02}'", rng.below(10_000_000), rng.below(100)),
        },
        ColumnType::Varchar2 => {
            let n = 1 + rng.below(3);
            let words: Vec<&str> = (0..n)
                .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
                .collect();
            format!("'{}'", words.join(" "))
        }
        ColumnType::Char => format!("'{:<10}'", WORDS[rng.below(4) as usize].replace("''", "")),
        ColumnType::NVarchar2 | ColumnType::NChar => match rng.below(3) {
            0 => r"UNISTR('caf\00e9 na\00EFve')".to_owned(),
            1 => r"UNISTR('smile \d83d\de00 ok')".to_owned(),
            _ => r"UNISTR('nch\00E1r     ')".to_owned(),
        },
        ColumnType::Date => format!(
            "TO_DATE('20{:02}-{:02}-{:02} {:02}:{:02}:{:02}', 'YYYY-MM-DD HH24:MI:SS')",
            rng.below(30),
            1 + rng.below(12),
            1 + rng.below(28),
            rng.below(24),
            rng.below(60),
            rng.below(60)
        ),
        ColumnType::Timestamp => format!(
            "TO_TIMESTAMP('2026-03-{:02} 01:30:{:02}.{:09}')",
            1 + rng.below(28),
            rng.below(60),
            rng.below(1_000_000_000)
        ),
        ColumnType::TimestampTz => format!(
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.{:09} {}')",
            rng.below(1_000_000_000),
            ["+05:30", "-08:00", "+00:00"][rng.below(3) as usize]
        ),
        ColumnType::TimestampLtz => format!(
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.{:09}')",
            rng.below(1_000_000_000)
        ),
        ColumnType::BinaryFloat => {
            ["'1.50000005E+010'", "'-3.25'", "'0'"][rng.below(3) as usize].to_owned()
        }
        ColumnType::BinaryDouble => {
            ["'2.5E-300'", "'3.1415926535897931'", "'0'"][rng.below(3) as usize].to_owned()
        }
        ColumnType::IntervalYm => format!(
            "TO_YMINTERVAL('+{:04}-{:02}')",
            rng.below(100),
            rng.below(12)
        ),
        ColumnType::IntervalDs => format!(
            "TO_DSINTERVAL('+{:05} {:02}:{:02}:{:02}.{:06}')",
            rng.below(1000),
            rng.below(24),
            rng.below(60),
            rng.below(60),
            rng.below(1_000_000)
        ),
        ColumnType::Raw => format!("HEXTORAW('{:016x}')", rng.next()),
        ColumnType::Clob => "EMPTY_CLOB()".to_owned(),
        ColumnType::Blob => "EMPTY_BLOB()".to_owned(),
        _ => "NULL".to_owned(),
    }
}

/// Column names of realistic length (a dozen characters), by type.
fn short_name(ty: &ColumnType) -> &'static str {
    match ty {
        ColumnType::Number => "AMOUNT",
        ColumnType::Varchar2 => "NAME",
        ColumnType::Char => "CODE",
        ColumnType::NVarchar2 => "LABEL",
        ColumnType::Date => "CREATED",
        ColumnType::Timestamp => "UPDATED_AT",
        ColumnType::TimestampTz => "EVENT_TS",
        ColumnType::TimestampLtz => "SEEN_AT",
        ColumnType::BinaryFloat => "RATIO",
        ColumnType::BinaryDouble => "SCORE",
        ColumnType::IntervalDs => "DURATION",
        ColumnType::IntervalYm => "TERM",
        ColumnType::Raw => "HASH",
        _ => "COLUMN",
    }
}

/// A table of `n` columns: `ID` (NUMBER key) then a mix of types.
pub fn corpus_table(index: usize, n: usize, rng: &mut Rng) -> Arc<TableLayout> {
    let mut cols: Vec<(String, ColumnType)> = vec![("ID".to_owned(), ColumnType::Number)];
    for i in 1..n {
        let ty = TYPE_MIX[rng.below(TYPE_MIX.len() as u64) as usize].clone();
        cols.push((format!("{}_{i}", short_name(&ty)), ty));
    }
    let owned: Vec<(&str, ColumnType)> =
        cols.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    layout("APP", &format!("T{index}"), &owned, &["ID"])
}

fn quoted_table(layout: &TableLayout) -> String {
    format!("\"{}\".\"{}\"", layout.table.owner, layout.table.table)
}

/// One INSERT, UPDATE (ALL COLUMNS logging: full before image) or DELETE row.
pub fn corpus_row(rng: &mut Rng, layout: &TableLayout) -> MinedRow {
    let table = quoted_table(layout);
    let values: Vec<String> = layout
        .columns
        .iter()
        .map(|c| {
            if c.name == "ID" {
                format!("'{}'", rng.below(1_000_000_000))
            } else {
                literal(rng, &c.data_type, true)
            }
        })
        .collect();
    let delimiter = if rng.chance(50) { ";" } else { "" };
    let (code, sql) = match rng.below(10) {
        0..=3 => {
            let names: Vec<String> = layout
                .columns
                .iter()
                .map(|c| format!("\"{}\"", c.name))
                .collect();
            (
                1,
                format!(
                    "insert into {table}({}) values ({}){delimiter}",
                    names.join(","),
                    values.join(",")
                ),
            )
        }
        4..=7 => {
            let n_set = 1 + rng.below(3) as usize;
            let mut set = Vec::new();
            for _ in 0..n_set {
                let i = 1 + rng.below(layout.columns.len().max(2) as u64 - 1) as usize;
                if let Some(c) = layout.columns.get(i)
                    && !set
                        .iter()
                        .any(|s: &String| s.starts_with(&format!("\"{}\" ", c.name)))
                {
                    set.push(format!(
                        "\"{}\" = {}",
                        c.name,
                        literal(rng, &c.data_type, true)
                    ));
                }
            }
            if set.is_empty() {
                set.push(format!("\"ID\" = '{}'", rng.below(1000)));
            }
            (
                3,
                format!(
                    "update {table} set {} where {}{delimiter}",
                    set.join(", "),
                    where_list(layout, &values)
                ),
            )
        }
        _ => (
            2,
            format!(
                "delete from {table} where {}{delimiter}",
                where_list(layout, &values)
            ),
        ),
    };
    let mut r = row(code, &layout.table.owner, &layout.table.table, &sql);
    r.row_id = Some("AAAS5bAAEAAAAFdAAA".to_owned());
    r
}

fn where_list(layout: &TableLayout, values: &[String]) -> String {
    layout
        .columns
        .iter()
        .zip(values)
        .filter(|(c, _)| !c.data_type.is_lob())
        .map(|(c, v)| {
            if v == "NULL" {
                format!("\"{}\" IS NULL", c.name)
            } else {
                format!("\"{}\" = {}", c.name, v)
            }
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

/// `tables` layouts of 5–40 columns and `rows` rows over them.
pub fn corpus(seed: u64, tables: usize, rows: usize) -> (Vec<Arc<TableLayout>>, Vec<MinedRow>) {
    corpus_with(seed, tables, rows, 5, 36)
}

/// `tables` layouts of 4–8 columns and `rows` rows over them: rows of a few hundred bytes,
/// the row size of the per-core target.
pub fn small_corpus(
    seed: u64,
    tables: usize,
    rows: usize,
) -> (Vec<Arc<TableLayout>>, Vec<MinedRow>) {
    corpus_with(seed, tables, rows, 4, 5)
}

/// Layouts of `min_columns` up to `min_columns + spread - 1` columns, and rows over them.
fn corpus_with(
    seed: u64,
    tables: usize,
    rows: usize,
    min_columns: usize,
    spread: u64,
) -> (Vec<Arc<TableLayout>>, Vec<MinedRow>) {
    let mut rng = Rng::new(seed);
    let layouts: Vec<Arc<TableLayout>> = (0..tables.max(1))
        .map(|i| {
            let n = min_columns + rng.below(spread) as usize;
            corpus_table(i, n, &mut rng)
        })
        .collect();
    let rows = (0..rows)
        .map(|_| {
            let l = &layouts[rng.below(layouts.len() as u64) as usize];
            corpus_row(&mut rng, l)
        })
        .collect();
    (layouts, rows)
}

/// A deterministic xorshift64 generator for the randomized tests: the same `seed` gives the
/// same sequence on every run.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Reads every byte of the rows' SQL_REDO once, eight at a time: what any pass over these bytes
/// costs at least (the benches' bandwidth reference).
pub fn touch_sql_redo<'r>(rows: impl IntoIterator<Item = &'r MinedRow>) -> u64 {
    let mut sum = 0u64;
    for row in rows {
        let bytes = row.sql_redo.as_deref().unwrap_or("").as_bytes();
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            sum = sum.wrapping_add(u64::from_le_bytes(w));
        }
        for &byte in words.remainder() {
            sum = sum.wrapping_add(u64::from(byte));
        }
    }
    sum
}
