//! The one-pass decoder of generic rows (the lag case): DML written before a later DDL, in
//! exactly the shape LogMiner gives it under the online catalog, read with the version valid
//! at its SCN while it is read.
//!
//! ```text
//!  insert into "O"."T"("COL 1","COL 2") values (HEXTORAW('c102'),NULL)[;]
//!  update "O"."T" set "COL 2" = HEXTORAW('…') where "COL 1" = HEXTORAW('…') and "COL 3" IS NULL[;]
//!  delete from "O"."T" where "COL 1" = HEXTORAW('…')[;]
//!      │ "COL n" ─ TableLayout::segment_column ─┬─ hidden or excluded ─► value skipped
//!      │                                        └─ column ──► hex digits into a stack buffer
//!      ▼                                                       └─ decode_internal (its type)
//!  any other shape (a real name, a concatenation, ROWID, a long value), any value that does
//!  not decode ─► None: the general path decodes the row again and reports what is wrong
//! ```
//!
//! What it accepts, the general path (`row::older_change`) decodes to the same images: the
//! same segment mapping and exclusion rule, the same internal-format reader, the same column
//! order and duplicate rule. It never makes an error of its own.

use cdc_core::change::{ChangeOp, ColumnValue};
use cdc_core::table::SegmentSlot;
use cdc_core::value::Value;

use super::internal::{Charsets, decode_internal};
use super::onepass::Images;
use super::parse::{fast_paths, find_byte};
use super::table::DecodeTable;

/// Bytes of the longest value read here (a VARCHAR2 of 4 000 bytes goes the general way).
const MAX_VALUE_BYTES: usize = 4_000;

/// Values up to this long are read into a buffer on the stack (NUMBER, dates, short text).
const SHORT_VALUE_BYTES: usize = 48;

/// Each byte's value as a hex digit; 0xFF for a byte that is none.
static HEX: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// Decodes `sql`, a generic `op` row of `table`'s version valid at its SCN, when it has
/// LogMiner's shape and every value decodes; `None` otherwise.
pub(super) fn decode<'a>(
    sql: &'a str,
    op: ChangeOp,
    table: &DecodeTable,
    charsets: &Charsets,
) -> Option<Images<'a>> {
    if !fast_paths() {
        return None;
    }
    let mut r = Reader {
        b: sql.as_bytes(),
        pos: 0,
        table,
        charsets,
    };
    let quoted = table.quoted_name()?.as_bytes();
    match op {
        ChangeOp::Insert => {
            r.word(b"insert into ")?;
            r.word(quoted)?;
            let after = r.insert_body()?;
            r.end()?;
            Some(Images {
                before: None,
                after: Some(after),
                row_id: None,
            })
        }
        ChangeOp::Update => {
            r.word(b"update ")?;
            r.word(quoted)?;
            r.word(b" set ")?;
            let mut set = SET.take();
            set.clear();
            let images = r.update_body(&mut set);
            set.clear();
            SET.set(set);
            images
        }
        ChangeOp::Delete => {
            r.word(b"delete from ")?;
            r.word(quoted)?;
            let before = r.where_clause()?;
            r.end()?;
            Some(Images {
                before: Some(before),
                after: None,
                row_id: None,
            })
        }
    }
}

thread_local! {
    /// The SET image of an update: kept between rows so that it is not allocated per row.
    static SET: std::cell::Cell<Vec<ColumnValue>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Column order; `None` when a column came twice (the general path reports it).
fn sorted(image: &mut [ColumnValue]) -> Option<()> {
    if image.is_sorted_by(|a, b| a.column < b.column) {
        return Some(());
    }
    image.sort_by_key(|v| v.column);
    (!image.windows(2).any(|w| w[0].column == w[1].column)).then_some(())
}

struct Reader<'a, 't> {
    b: &'a [u8],
    pos: usize,
    table: &'t DecodeTable,
    charsets: &'t Charsets,
}

impl Reader<'_, '_> {
    #[inline]
    fn word(&mut self, text: &[u8]) -> Option<()> {
        self.b
            .get(self.pos..)?
            .starts_with(text)
            .then(|| self.pos += text.len())
    }

    fn end(&self) -> Option<()> {
        matches!(self.b.get(self.pos..)?, b"" | b";").then_some(())
    }

    /// `"COL n"`: the layout index of segment column n, `Some(None)` when its value is no
    /// part of the change (hidden or excluded); `None` for any other name or a column past
    /// the segment.
    fn generic_column(&mut self) -> Option<Option<usize>> {
        self.word(b"\"COL ")?;
        let start = self.pos;
        let mut n: u32 = 0;
        while let Some(d) = self.b.get(self.pos).filter(|b| b.is_ascii_digit()) {
            n = n.checked_mul(10)?.checked_add(u32::from(d - b'0'))?;
            self.pos += 1;
        }
        if self.pos == start || self.pos - start > 5 {
            return None;
        }
        self.word(b"\"")?;
        let layout = self.table.layout();
        match layout.segment_column(u16::try_from(n).ok()?) {
            SegmentSlot::Column(index) => (!self.table.is_excluded_index(index)
                && index < layout.columns.len())
            .then_some(Some(index))
            .or(Some(None)),
            SegmentSlot::Hidden => Some(None),
            SegmentSlot::Beyond => None,
        }
    }

    /// `HEXTORAW('…')` or `NULL`: the value of the column at `index` into `image` (`None`
    /// index: read, not converted).
    #[inline]
    fn value(&mut self, index: Option<usize>, image: &mut Vec<ColumnValue>) -> Option<()> {
        if self.word(b"NULL").is_some() {
            if let Some(index) = index {
                image.push(ColumnValue {
                    column: index as u16,
                    value: Value::Null,
                });
            }
            return Some(());
        }
        self.word(b"HEXTORAW('")?;
        let rest = self.b.get(self.pos..)?;
        let digits = find_byte(rest, 0, b'\'')?;
        if !digits.is_multiple_of(2) || digits / 2 > MAX_VALUE_BYTES {
            return None;
        }
        let hex = &rest[..digits];
        let len = digits / 2;
        let mut short = [0u8; SHORT_VALUE_BYTES];
        let mut long = Vec::new();
        let bytes: &mut [u8] = if len <= SHORT_VALUE_BYTES {
            &mut short[..len]
        } else {
            long.resize(len, 0);
            &mut long
        };
        for (out, pair) in bytes.iter_mut().zip(hex.chunks_exact(2)) {
            let (hi, lo) = (HEX[usize::from(pair[0])], HEX[usize::from(pair[1])]);
            if (hi | lo) & 0xF0 != 0 {
                return None;
            }
            *out = hi << 4 | lo;
        }
        self.pos += digits;
        self.word(b"')")?;
        let Some(index) = index else {
            return Some(());
        };
        let column = self.table.layout().columns.get(index)?;
        image.push(ColumnValue {
            column: index as u16,
            value: decode_internal(&column.data_type, bytes, self.charsets).ok()?,
        });
        Some(())
    }

    /// An update after its ` set `: the SET items into `set`, then the WHERE clause.
    fn update_body<'a>(&mut self, set: &mut Vec<ColumnValue>) -> Option<Images<'a>> {
        loop {
            self.item(set)?;
            if self.word(b", ").is_none() {
                break;
            }
        }
        let before = self.where_clause()?;
        self.end()?;
        sorted(set)?;
        let after = super::row::overlay(&before, set);
        Some(Images {
            before: Some(before),
            after: Some(after),
            row_id: None,
        })
    }

    /// `"COL n" = v` into `image`.
    fn item(&mut self, image: &mut Vec<ColumnValue>) -> Option<()> {
        let index = self.generic_column()?;
        self.word(b" = ")?;
        self.value(index, image)
    }

    /// ` where "COL n" = v and "COL m" IS NULL …`: the before image, in column order.
    fn where_clause(&mut self) -> Option<Vec<ColumnValue>> {
        self.word(b" where ")?;
        let mut image = Vec::with_capacity(self.table.layout().columns.len());
        loop {
            let at = self.pos;
            let index = self.generic_column()?;
            if self.word(b" IS NULL").is_some() {
                if let Some(index) = index {
                    image.push(ColumnValue {
                        column: index as u16,
                        value: Value::Null,
                    });
                }
            } else {
                self.pos = at;
                self.item(&mut image)?;
            }
            if self.word(b" and ").is_none() {
                break;
            }
        }
        sorted(&mut image)?;
        Some(image)
    }

    /// `("COL 1","COL 2") values (v,v)`: the after image, in column order.
    fn insert_body(&mut self) -> Option<Vec<ColumnValue>> {
        self.word(b"(")?;
        let mut columns: Vec<Option<usize>> = Vec::with_capacity(self.table.layout().columns.len());
        loop {
            columns.push(self.generic_column()?);
            if self.word(b",").is_none() {
                break;
            }
        }
        self.word(b") values (")?;
        let mut image = Vec::with_capacity(columns.len());
        for (i, index) in columns.iter().enumerate() {
            if i > 0 {
                self.word(b",")?;
            }
            self.value(*index, &mut image)?;
        }
        self.word(b")")?;
        sorted(&mut image)?;
        Some(image)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Arc;

    use cdc_core::change::MinedRow;
    use cdc_core::table::ColumnType;

    use super::*;
    use crate::decode::parse::GENERAL_ONLY;
    use crate::decode::row::{DecodeOptions, decode_row};
    use crate::decode::{ColumnFilter, DecodeTable};

    /// APP.OLD with a hidden segment column (a SET UNUSED one) as its second: `"COL 2"` is no
    /// column, `"COL 3"` is V.
    fn tables() -> Vec<DecodeTable> {
        let mut layout = (*crate::test_support::layout(
            "APP",
            "OLD",
            &[
                ("ID", ColumnType::Number),
                ("V", ColumnType::Varchar2),
                ("D", ColumnType::Date),
                ("NV", ColumnType::NVarchar2),
                ("R", ColumnType::Raw),
            ],
            &["ID"],
        ))
        .clone();
        layout.segment = vec![Some(0), None, Some(1), Some(2), Some(3), Some(4)];
        let layout = Arc::new(layout);
        let charsets = Arc::new(Charsets::default());
        vec![
            DecodeTable::without_exclusions(Arc::clone(&layout))
                .reading_older_rows(Arc::clone(&charsets)),
            DecodeTable::new(Arc::clone(&layout), ColumnFilter::from_fn(|c| c == "NV"))
                .unwrap()
                .reading_older_rows(charsets),
        ]
    }

    fn generic(code: u16, sql: &str) -> MinedRow {
        let mut row = crate::test_support::row(code, "APP", "OLD", sql);
        row.status = 2;
        row
    }

    const INSERT: &str = "insert into \"APP\".\"OLD\"(\"COL 1\",\"COL 2\",\"COL 3\",\"COL 4\",\"COL 5\",\"COL 6\") values (HEXTORAW('c20b'),HEXTORAW('01'),HEXTORAW('616263'),HEXTORAW('787e020b020506'),HEXTORAW('00610062'),HEXTORAW('deadbeef'))";
    const UPDATE: &str = "update \"APP\".\"OLD\" set \"COL 3\" = HEXTORAW('7a'), \"COL 1\" = HEXTORAW('c102') where \"COL 1\" = HEXTORAW('c20b') and \"COL 3\" = HEXTORAW('616263') and \"COL 4\" IS NULL and \"COL 5\" = HEXTORAW('0061')";
    const DELETE: &str = "delete from \"APP\".\"OLD\" where \"COL 1\" = HEXTORAW('80') and \"COL 6\" = NULL and \"COL 2\" = HEXTORAW('ff')";

    /// Whatever the one-pass reader takes, it decodes as the general path does; it takes the
    /// shapes LogMiner writes, and every variant it declines the general path decodes (or
    /// refuses) alone.
    #[test]
    fn generic_rows_decode_as_the_general_path_decodes_them() {
        let variants = |sql: &str| -> Vec<String> {
            vec![
                sql.to_owned(),
                format!("{sql};"),
                sql.replace("c20b", "C20B"),
                sql.replace("c20b", "c20"),
                sql.replace("c20b", "c2zz"),
                sql.replace("c20b", "c2ff"),
                sql.replace("616263", "ffff"),
                sql.replace("\"COL 3\"", "\"V\""),
                sql.replace("\"COL 3\"", "\"COL 9\""),
                sql.replace("\"COL 3\"", "\"COL 1\""),
                sql.replace("\"COL 3\"", "\"COL 03\""),
                sql.replace("HEXTORAW('616263')", "HEXTORAW('61') || HEXTORAW('6263')"),
                sql.replace("HEXTORAW('616263')", "NULL"),
                sql.replace("HEXTORAW('616263')", "'abc'"),
                format!("{sql} and ROWID = 'AAAS5bAAEAAAAFdAAA'"),
                sql.replace("\"APP\".\"OLD\"", "\"APP\".\"NEW\""),
                sql.replace(" where ", "  where "),
            ]
        };
        let options = DecodeOptions::default();
        for table in tables() {
            for (code, sql) in [(1, INSERT), (3, UPDATE), (2, DELETE)] {
                let plain = generic(code, sql);
                let op = super::super::row::change_op(plain.operation).unwrap();
                let charsets = table.older_rows().unwrap();
                assert!(
                    decode(sql, op, &table, charsets).is_some(),
                    "the one-pass reader takes LogMiner's own shape: {sql}"
                );
                for variant in variants(sql) {
                    let row = generic(code, &variant);
                    let fast = decode_row(&row, Some(&table), &options);
                    GENERAL_ONLY.with(|g| g.set(true));
                    let general = decode_row(&row, Some(&table), &options);
                    GENERAL_ONLY.with(|g| g.set(false));
                    assert_eq!(format!("{fast:?}"), format!("{general:?}"), "{variant}");
                }
            }
        }
    }
}
