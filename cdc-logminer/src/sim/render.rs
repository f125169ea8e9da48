//! SQL_REDO as LogMiner renders it, in the shapes the reference observed
//! (`YYYY-MM-DD HH24:MI:SS`, `… .FF9`, `… .FF9 TZH:TZM`, numeric characters `.,`) and under the
//! options NO_ROWID_IN_STMT + NO_SQL_DELIMITER (no ROWID predicate and no `;` on normal DML;
//! the undo rows of a rollback still read `where ROWID = '…'`). The engine's own session sets
//! the `SYYYY` forms, which differ only by the year's sign position (`' 2026-…'`); the decoder
//! reads both.
//!
//! ```text
//!   Value + ColumnDef --literal--------> 'a''b'  TO_DATE('…', 'YYYY-MM-DD HH24:MI:SS')  UNISTR('\00E9')
//!                     --write_generic_literal-> HEXTORAW('c229')   (STATUS 2 rows: "COL n" names)
//!   literals --insert/update/delete----> insert into "O"."T"("A","B") values ('1',NULL)
//! ```

use std::fmt::Write as _;

use cdc_core::{ColumnDef, ColumnType, Decimal, OracleDateTime, TimeZone, Value};

/// The ROW_ID LogMiner puts on the INSERT of a row with an out-of-line LOB locator.
pub const LOB_PLACEHOLDER_ROWID: &str = "AAAAAAAAAAAAAAAAAA";
/// The ROW_ID seen on DDL rows.
pub const DDL_ROWID: &str = "AAAAAAAAAAAAAAAAAB";
/// SQL_REDO is VARCHAR2(4000): longer statements continue in CSF rows.
pub const SQL_REDO_MAX_BYTES: usize = 4000;

fn write_quoted(out: &mut String, text: &str) {
    write_enclosed(out, text, b'\'');
}

/// `"…"` with double quotes doubled: an identifier as SQL_REDO quotes it.
fn write_identifier(out: &mut String, name: &str) {
    write_enclosed(out, name, b'"');
}

/// `text` between two `quote`s (an ASCII character), each `quote` inside doubled.
fn write_enclosed(out: &mut String, text: &str, quote: u8) {
    debug_assert!(quote.is_ascii());
    let q = char::from(quote);
    out.reserve(text.len() + 2);
    out.push(q);
    // the quote is ASCII: its byte never occurs inside a multi-byte character, so a byte scan
    // (much cheaper than a char search on the short texts of a row) finds every one of them
    let mut rest = text;
    while let Some(at) = rest.bytes().position(|b| b == quote) {
        let Some((head, tail)) = rest.split_at_checked(at + 1) else {
            break;
        };
        out.push_str(head);
        out.push(q);
        rest = tail;
    }
    out.push_str(rest);
    out.push(q);
}

/// `"OWNER"."TABLE"`: the target of a statement.
pub fn target(owner: &str, name: &str) -> String {
    let mut out = String::with_capacity(owner.len() + name.len() + 5);
    write_identifier(&mut out, owner);
    out.push('.');
    write_identifier(&mut out, name);
    out
}

/// `UNISTR('…')` (the tests' view of [`write_unistr`]): printable ASCII as is (`'` doubled, `\` as `\\`), everything else as
/// `\XXXX` UTF-16 code units in uppercase hex, surrogate pairs as two escapes.
#[cfg(test)]
fn unistr(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 10);
    write_unistr(&mut out, text);
    out
}

fn write_unistr(out: &mut String, text: &str) {
    out.reserve(text.len() + 10);
    out.push_str("UNISTR('");
    for c in text.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\{unit:04X}");
                }
            }
        }
    }
    out.push_str("')");
}

/// A NUMBER as Oracle's number-to-text conversion prints it: plain decimal, no leading zero
/// before the point (`.5`, `-.25`), no trailing zeros (the tests' view of [`write_number`]).
#[cfg(test)]
fn number_text(d: Decimal) -> String {
    let mut out = String::with_capacity(24);
    write_number(&mut out, d);
    out
}

fn write_number(out: &mut String, d: Decimal) {
    let start = out.len();
    let _ = write!(out, "{d}");
    let digits = if d.unscaled() < 0 { start + 1 } else { start };
    if out.get(digits..digits + 2) == Some("0.") {
        out.remove(digits);
    }
}

/// Mantissa and exponent in Oracle's binary float text: `1.5E+000`, `-2.25E-003`.
fn exp_text(mantissa_and_exp: &str) -> String {
    let (mantissa, exp) = mantissa_and_exp
        .split_once('E')
        .unwrap_or((mantissa_and_exp, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}E{sign}{:03}", exp.unsigned_abs())
}

/// BINARY_DOUBLE text. Values below NUMBER's range (|v| < 1E-130) come out as `0`, as observed
/// for -2.5E-300.
pub fn binary_double_text(v: f64) -> String {
    if v.is_nan() {
        return "Nan".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Inf" } else { "-Inf" }.to_owned();
    }
    if v == 0.0 || v.abs() < 1e-130 {
        return "0".to_owned();
    }
    exp_text(&format!("{v:E}"))
}

/// BINARY_FLOAT text with nine significant digits, e.g. `1.50000005E+010`.
pub fn binary_float_text(v: f32) -> String {
    if v.is_nan() {
        return "Nan".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Inf" } else { "-Inf" }.to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    exp_text(&format!("{v:.8E}"))
}

fn date_part(t: &OracleDateTime) -> String {
    let mut out = String::with_capacity(20);
    write_date_part(&mut out, t);
    out
}

/// `value` in exactly `width` decimal digits (zero-padded; `value` has no more digits).
fn write_digits(out: &mut String, value: u32, width: u32) {
    for i in (0..width).rev() {
        out.push(char::from(b'0' + (value / 10u32.pow(i) % 10) as u8));
    }
}

fn write_date_part(out: &mut String, t: &OracleDateTime) {
    let year = i32::from(t.year);
    if year < 0 {
        out.push('-');
    }
    if year.unsigned_abs() > 9999 {
        let _ = write!(out, "{}", year.unsigned_abs());
    } else {
        write_digits(out, year.unsigned_abs(), 4);
    }
    out.push('-');
    write_digits(out, u32::from(t.month), 2);
    out.push('-');
    write_digits(out, u32::from(t.day), 2);
    out.push(' ');
    write_digits(out, u32::from(t.hour), 2);
    out.push(':');
    write_digits(out, u32::from(t.minute), 2);
    out.push(':');
    write_digits(out, u32::from(t.second), 2);
}

/// `.FFFFFFFFF`: the nine fraction digits of a timestamp.
fn write_fraction(out: &mut String, nanos: u32) {
    out.push('.');
    write_digits(out, nanos.min(999_999_999), 9);
}

/// `YYYY-MM-DD HH24:MI:SS`.
pub fn date_text(t: &OracleDateTime) -> String {
    date_part(t)
}

/// `+YY-MM` with the years padded to the column's leading precision.
pub fn interval_ym_text(months: i64, precision: u16) -> String {
    let sign = if months < 0 { '-' } else { '+' };
    let m = months.unsigned_abs();
    format!(
        "{sign}{:0width$}-{:02}",
        m / 12,
        m % 12,
        width = precision as usize
    )
}

/// `+DD HH:MI:SS.FFFFFF` with the days padded to the leading precision and `scale` fraction
/// digits.
pub fn interval_ds_text(nanos: i128, precision: u16, scale: u16) -> String {
    let sign = if nanos < 0 { '-' } else { '+' };
    let n = nanos.unsigned_abs();
    let secs = n / 1_000_000_000;
    let frac = (n % 1_000_000_000) as u64;
    let mut out = format!(
        "{sign}{:0width$} {:02}:{:02}:{:02}",
        secs / 86_400,
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60,
        width = precision as usize
    );
    if scale > 0 {
        let digits = format!("{frac:09}");
        out.push('.');
        out.push_str(&digits[..(scale as usize).min(9)]);
    }
    out
}

fn write_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
}

fn is_national(ty: &ColumnType) -> bool {
    matches!(
        ty,
        ColumnType::NChar | ColumnType::NVarchar2 | ColumnType::NClob
    )
}

/// The literal of a value in a column, as SQL_REDO holds it. `NULL` for NULL (the caller
/// writes `IS NULL` in a WHERE clause). The tests' view of [`write_literal`].
#[cfg(test)]
fn literal(col: &ColumnDef, value: &Value) -> String {
    let mut out = String::new();
    write_literal(&mut out, col, value);
    out
}

/// Whether a value's literal is `NULL` (Oracle's empty string and empty RAW are NULL).
fn is_null_literal(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Text(s) => s.is_empty(),
        Value::Raw(b) => b.is_empty(),
        _ => false,
    }
}

fn write_literal(out: &mut String, col: &ColumnDef, value: &Value) {
    let ty = &col.data_type;
    if is_null_literal(value) {
        out.push_str("NULL");
        return;
    }
    match value {
        Value::Null => out.push_str("NULL"),
        Value::EmptyLob => out.push_str(match ty {
            ColumnType::Blob => "EMPTY_BLOB()",
            _ => "EMPTY_CLOB()",
        }),
        Value::Unsupported | Value::Unavailable => out.push_str("Unsupported Type"),
        Value::Number(d) => {
            // a number's text has no quote to double
            out.push('\'');
            write_number(out, *d);
            out.push('\'');
        }
        Value::BinaryFloat(f) => write_quoted(out, &binary_float_text(*f)),
        Value::BinaryDouble(f) => write_quoted(out, &binary_double_text(*f)),
        Value::Text(s) if is_national(ty) => write_unistr(out, s),
        Value::Text(s) => write_quoted(out, s),
        Value::Raw(b) => {
            out.push_str("HEXTORAW('");
            write_hex(out, b);
            out.push_str("')");
        }
        Value::Date(t) => {
            out.push_str("TO_DATE('");
            write_date_part(out, t);
            // YYYY has no sign position: a year before Christ is written under SYYYY
            out.push_str(if t.year < 0 {
                "', 'SYYYY-MM-DD HH24:MI:SS')"
            } else {
                "', 'YYYY-MM-DD HH24:MI:SS')"
            });
        }
        Value::Timestamp(t) => {
            out.push_str("TO_TIMESTAMP('");
            write_date_part(out, t);
            write_fraction(out, t.nanos);
            out.push_str("')");
        }
        Value::TimestampTz(t, zone) => {
            out.push_str("TO_TIMESTAMP_TZ('");
            write_date_part(out, t);
            write_fraction(out, t.nanos);
            let _ = write!(out, " {}')", zone_text(zone));
        }
        Value::TimestampLtz(t) => {
            out.push_str("TO_TIMESTAMP_TZ('");
            write_date_part(out, t);
            write_fraction(out, t.nanos);
            out.push_str("')");
        }
        Value::IntervalYm(m) => {
            let _ = write!(
                out,
                "TO_YMINTERVAL('{}')",
                interval_ym_text(*m, col.precision.unwrap_or(2))
            );
        }
        Value::IntervalDs(n) => {
            let _ = write!(
                out,
                "TO_DSINTERVAL('{}')",
                interval_ds_text(
                    n.get(),
                    col.precision.unwrap_or(2),
                    col.scale.map(|s| s.max(0) as u16).unwrap_or(6)
                )
            );
        }
        Value::RowId(r) => write_quoted(out, r),
    }
}

/// Under `TZH:TZM` a region zone prints as its offset; the simulator only writes offsets, and
/// prints a region name as Oracle's TZR would.
fn zone_text(zone: &TimeZone) -> String {
    zone.to_string()
}

/// The literal of a STATUS 2 row (the dictionary no longer matches the redo): the column's
/// stored bytes as `HEXTORAW('…')`, NULL as NULL.
fn write_generic_literal(out: &mut String, col: &ColumnDef, value: &Value) {
    match value {
        _ if is_null_literal(value) => out.push_str("NULL"),
        Value::EmptyLob | Value::Unsupported | Value::Unavailable => write_literal(out, col, value),
        other => {
            out.push_str("HEXTORAW('");
            write_hex(out, &stored_bytes(&col.data_type, other));
            out.push_str("')");
        }
    }
}

/// A value in Oracle's on-disk format (what a generic row's HEXTORAW shows).
pub fn stored_bytes(ty: &ColumnType, value: &Value) -> Vec<u8> {
    match value {
        Value::Number(d) => oracle_number_bytes(*d),
        Value::Text(s) if is_national(ty) => {
            s.encode_utf16().flat_map(|u| u.to_be_bytes()).collect()
        }
        Value::Text(s) => s.as_bytes().to_vec(),
        Value::Raw(b) => b.clone(),
        Value::RowId(r) => r.as_bytes().to_vec(),
        Value::Date(t) => date_bytes(t).to_vec(),
        Value::Timestamp(t) | Value::TimestampLtz(t) => timestamp_bytes(t),
        Value::TimestampTz(t, zone) => {
            let minutes = match zone {
                TimeZone::Offset(m) => *m,
                TimeZone::Region(_) => 0,
            };
            let utc = crate::sim::clock::datetime_from_epoch_nanos(
                t.epoch_nanos() - i128::from(minutes) * 60_000_000_000,
            );
            let mut out = date_bytes(&utc).to_vec();
            out.extend_from_slice(&utc.nanos.to_be_bytes());
            out.push((i32::from(minutes) / 60 + 20) as u8);
            out.push((i32::from(minutes) % 60 + 60) as u8);
            out
        }
        Value::IntervalYm(m) => {
            let years = (*m / 12) as i32;
            let months = (*m % 12) as i32;
            let mut out = ((years as i64 + 0x8000_0000) as u32).to_be_bytes().to_vec();
            out.push((months + 60) as u8);
            out
        }
        Value::IntervalDs(n) => {
            let n = n.get();
            let secs = (n / 1_000_000_000) as i64;
            let frac = (n % 1_000_000_000) as i64;
            let days = secs / 86_400;
            let rem = secs % 86_400;
            let mut out = ((days + 0x8000_0000) as u32).to_be_bytes().to_vec();
            out.push((rem / 3600 + 60) as u8);
            out.push((rem / 60 % 60 + 60) as u8);
            out.push((rem % 60 + 60) as u8);
            out.extend_from_slice(&((frac + 0x8000_0000) as u32).to_be_bytes());
            out
        }
        Value::BinaryDouble(f) => {
            let bits = f.to_bits();
            let bits = if bits >> 63 == 0 {
                bits | (1 << 63)
            } else {
                !bits
            };
            bits.to_be_bytes().to_vec()
        }
        Value::BinaryFloat(f) => {
            let bits = f.to_bits();
            let bits = if bits >> 31 == 0 {
                bits | (1 << 31)
            } else {
                !bits
            };
            bits.to_be_bytes().to_vec()
        }
        Value::Null | Value::EmptyLob | Value::Unavailable | Value::Unsupported => Vec::new(),
    }
}

fn date_bytes(t: &OracleDateTime) -> [u8; 7] {
    let year = i32::from(t.year);
    [
        (year / 100 + 100) as u8,
        (year % 100 + 100) as u8,
        t.month,
        t.day,
        t.hour + 1,
        t.minute + 1,
        t.second + 1,
    ]
}

fn timestamp_bytes(t: &OracleDateTime) -> Vec<u8> {
    let mut out = date_bytes(t).to_vec();
    if t.nanos != 0 {
        out.extend_from_slice(&t.nanos.to_be_bytes());
    }
    out
}

/// Oracle's NUMBER format: an exponent byte, then base-100 digits (`c229` is 4000).
pub fn oracle_number_bytes(d: Decimal) -> Vec<u8> {
    if d.is_zero() {
        return vec![0x80];
    }
    let negative = d.unscaled() < 0;
    let mut digits = d.unscaled().unsigned_abs().to_string();
    let mut scale = i32::from(d.scale());
    if scale < 0 {
        digits.push_str(&"0".repeat((-scale) as usize));
        scale = 0;
    }
    // digits before the decimal point (may be <= 0)
    let mut int_len = digits.len() as i32 - scale;
    if int_len.rem_euclid(2) == 1 {
        digits.insert(0, '0');
        int_len += 1;
    }
    if digits.len() % 2 == 1 {
        digits.push('0');
    }
    let mut pairs: Vec<u8> = digits
        .as_bytes()
        .chunks(2)
        .map(|p| (p[0] - b'0') * 10 + (p[1] - b'0'))
        .collect();
    let mut exp = int_len / 2 - 1;
    while pairs.first() == Some(&0) {
        pairs.remove(0);
        exp -= 1;
    }
    while pairs.last() == Some(&0) {
        pairs.pop();
    }
    let mut out = Vec::with_capacity(pairs.len() + 2);
    if negative {
        out.push((62 - exp) as u8);
        out.extend(pairs.iter().map(|p| 101 - p));
        if pairs.len() < 20 {
            out.push(102);
        }
    } else {
        out.push((193 + exp) as u8);
        out.extend(pairs.iter().map(|p| p + 1));
    }
    out
}

/// How a statement names its table and columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// Dictionary names and typed literals (STATUS 0).
    Dictionary,
    /// `"COL n"` names and HEXTORAW literals (STATUS 2: the redo is older than the dictionary).
    Generic,
}

/// One column of a statement: its definition and value.
pub type ColVal<'a> = (&'a ColumnDef, &'a Value);

fn write_col_name(out: &mut String, naming: Naming, col: &ColumnDef) {
    match naming {
        Naming::Dictionary => write_identifier(out, &col.name),
        Naming::Generic => {
            let _ = write!(out, "\"COL {}\"", col.position);
        }
    }
}

fn write_lit(out: &mut String, naming: Naming, col: &ColumnDef, value: &Value) {
    match naming {
        Naming::Dictionary => write_literal(out, col, value),
        Naming::Generic => write_generic_literal(out, col, value),
    }
}

/// About how many bytes a column's name and literal take in a statement: a statement is
/// built in one allocation, not grown a few bytes at a time.
fn size_hint(cols: &[ColVal<'_>]) -> usize {
    cols.iter()
        .map(|(col, value)| {
            col.name.len()
                + 8
                + match value {
                    Value::Text(s) => s.len() + 8,
                    Value::Raw(b) => 2 * b.len() + 12,
                    _ => 56,
                }
        })
        .sum()
}

/// `insert into "O"."T"("A","B") values ('1',NULL)`.
pub fn insert(target: &str, naming: Naming, cols: &[ColVal<'_>]) -> String {
    let mut out = String::with_capacity(target.len() + 24 + size_hint(cols));
    out.push_str("insert into ");
    out.push_str(target);
    out.push('(');
    for (i, (col, _)) in cols.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_col_name(&mut out, naming, col);
    }
    out.push_str(") values (");
    for (i, (col, value)) in cols.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_lit(&mut out, naming, col, value);
    }
    out.push(')');
    out
}

fn where_clause(out: &mut String, naming: Naming, cols: &[ColVal<'_>]) {
    for (i, (col, value)) in cols.iter().enumerate() {
        out.push_str(if i == 0 { " where " } else { " and " });
        write_col_name(out, naming, col);
        if is_null_literal(value) {
            out.push_str(" IS NULL");
        } else {
            out.push_str(" = ");
            write_lit(out, naming, col, value);
        }
    }
}

fn rowid_clause(out: &mut String, rowid: &str) {
    out.push_str(" where ROWID = ");
    write_quoted(out, rowid);
}

/// `update "O"."T" set "C" = 'v', "D" = NULL where "K" = '1' and "E" IS NULL`; with a ROWID,
/// the WHERE clause is `where ROWID = '…'` (undo rows).
pub fn update(
    target: &str,
    naming: Naming,
    set: &[ColVal<'_>],
    filter: &[ColVal<'_>],
    rowid: Option<&str>,
) -> String {
    let mut out = String::with_capacity(target.len() + 40 + size_hint(set) + size_hint(filter));
    out.push_str("update ");
    out.push_str(target);
    out.push_str(" set ");
    for (i, (col, value)) in set.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_col_name(&mut out, naming, col);
        out.push_str(" = ");
        write_lit(&mut out, naming, col, value);
    }
    match rowid {
        Some(r) => rowid_clause(&mut out, r),
        None => where_clause(&mut out, naming, filter),
    }
    out
}

/// `delete from "O"."T" where …`, or `where ROWID = '…'` for undo rows.
pub fn delete(target: &str, naming: Naming, filter: &[ColVal<'_>], rowid: Option<&str>) -> String {
    let mut out = String::with_capacity(target.len() + 40 + size_hint(filter));
    out.push_str("delete from ");
    out.push_str(target);
    match rowid {
        Some(r) => rowid_clause(&mut out, r),
        None => where_clause(&mut out, naming, filter),
    }
    out
}

/// What a LOB row's PL/SQL block does after locating the LOB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LobAction<'a> {
    /// `dbms_lob.write(loc, amount, offset, buf)` of this chunk.
    Write {
        offset: u64,
        data: &'a Value,
    },
    Trim {
        length: u64,
    },
    Erase {
        amount: u64,
        offset: u64,
    },
}

/// The SQL_REDO of a LOB_WRITE, LOB_TRIM or LOB_ERASE row: a whole PL/SQL block that selects
/// the locator by the row's non-LOB columns and makes one DBMS_LOB call (23ai; STATUS 2, "LOB
/// sql_redo not re-executable"). Amounts and offsets count characters of text, bytes of a
/// BLOB.
pub fn lob_block(
    target: &str,
    naming: Naming,
    column: &ColumnDef,
    filter: &[ColVal<'_>],
    action: LobAction<'_>,
) -> String {
    let binary = matches!(column.data_type, ColumnType::Blob);
    let (loc, buf) = if binary {
        ("loc_b", "buf_b")
    } else {
        ("loc_c", "buf_c")
    };
    let mut out = String::from("DECLARE \n");
    if binary {
        out.push_str(" loc_b BLOB; \n buf_b RAW(32767);\n");
    } else if is_national(&column.data_type) {
        out.push_str(" loc_c NCLOB; \n buf_c NVARCHAR2(32767);\n");
    } else {
        out.push_str(" loc_c CLOB; \n buf_c VARCHAR2(32767);\n");
    }
    out.push_str(" amt NUMBER; \nBEGIN\n select ");
    write_col_name(&mut out, naming, column);
    let _ = write!(out, " into {loc} from {target}");
    where_clause(&mut out, naming, filter);
    out.push_str(" for update;\n");
    match action {
        LobAction::Write { offset, data } => {
            let amount = match data {
                Value::Text(t) => t.chars().count(),
                Value::Raw(b) => b.len(),
                _ => 0,
            };
            let _ = write!(out, " {buf} := ");
            write_lit(&mut out, naming, column, data);
            let _ = write!(
                out,
                ";\n  dbms_lob.write({loc}, {amount}, {offset}, {buf});\n"
            );
        }
        LobAction::Trim { length } => {
            let _ = writeln!(out, "  dbms_lob.trim({loc}, {length});");
        }
        LobAction::Erase { amount, offset } => {
            let _ = writeln!(
                out,
                " amt := {amount};\n  dbms_lob.erase({loc}, amt, {offset});"
            );
        }
    }
    out.push_str("END;");
    out
}

/// Splits SQL_REDO into the pieces of CSF rows: at most 4000 bytes each, cut on character
/// boundaries, concatenated verbatim they give the statement back.
pub fn split_csf(sql: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = sql;
    while rest.len() > SQL_REDO_MAX_BYTES {
        let mut cut = SQL_REDO_MAX_BYTES;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (head, tail) = rest.split_at(cut);
        pieces.push(head);
        rest = tail;
    }
    pieces.push(rest);
    pieces
}

/// An Oracle extended ROWID: data object id (6), relative file (3), block (6), row (3), in
/// Oracle's base-64 alphabet.
pub fn rowid(data_object: u32, file: u32, block: u32, row: u32) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(18);
    for (value, width) in [(data_object, 6u32), (file, 3), (block, 6), (row, 3)] {
        for i in (0..width).rev() {
            let digit = (u64::from(value) >> (6 * i)) & 63;
            out.push(ALPHABET[digit as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(ty: ColumnType) -> ColumnDef {
        ColumnDef::new("C", 1, ty)
    }

    fn dt(y: i16, mo: u8, d: u8, h: u8, mi: u8, s: u8, n: u32) -> OracleDateTime {
        OracleDateTime::new(y, mo, d, h, mi, s, n).unwrap()
    }

    #[test]
    fn quotes_inside_text_and_names_are_doubled() {
        let text = |s: &str| literal(&col(ColumnType::Varchar2), &Value::Text(s.into()));
        assert_eq!(text("a'b"), "'a''b'");
        assert_eq!(text("'"), "''''");
        assert_eq!(text("''x''"), "'''''x'''''");
        assert_eq!(text("é'€'😀"), "'é''€''😀'");
        assert_eq!(text("no quote: \"é\""), "'no quote: \"é\"'");
        assert_eq!(target("O\"W", "T'\"\"X"), "\"O\"\"W\".\"T'\"\"\"\"X\"");
    }

    #[test]
    fn literals_in_the_reference_shapes() {
        let n = |s: &str| Value::Number(Decimal::parse(s).unwrap());
        assert_eq!(literal(&col(ColumnType::Number), &n("-42.50")), "'-42.5'");
        assert_eq!(literal(&col(ColumnType::Number), &n("0.5")), "'.5'");
        assert_eq!(literal(&col(ColumnType::Number), &n("-0.25")), "'-.25'");
        assert_eq!(literal(&col(ColumnType::Number), &n("100")), "'100'");
        assert_eq!(literal(&col(ColumnType::Number), &n("0")), "'0'");
        assert_eq!(literal(&col(ColumnType::Number), &n("-10.05")), "'-10.05'");
        assert_eq!(number_text(Decimal::parse("0.001").unwrap()), ".001");
        assert_eq!(
            literal(&col(ColumnType::Varchar2), &Value::Text("O'Brien".into())),
            "'O''Brien'"
        );
        assert_eq!(
            literal(&col(ColumnType::Varchar2), &Value::Text(String::new())),
            "NULL"
        );
        assert_eq!(
            literal(&col(ColumnType::Char), &Value::Text("abc       ".into())),
            "'abc       '"
        );
        assert_eq!(
            literal(
                &col(ColumnType::NChar),
                &Value::Text("nch\u{e1}r     ".into())
            ),
            "UNISTR('nch\\00E1r     ')"
        );
        assert_eq!(unistr("\u{1F600}\\"), "UNISTR('\\D83D\\DE00\\\\')");
        assert_eq!(
            literal(
                &col(ColumnType::Date),
                &Value::Date(dt(2026, 2, 28, 13, 45, 59, 0))
            ),
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')"
        );
        assert_eq!(
            literal(
                &col(ColumnType::Timestamp),
                &Value::Timestamp(dt(2026, 3, 29, 1, 30, 0, 123_456_000))
            ),
            "TO_TIMESTAMP('2026-03-29 01:30:00.123456000')"
        );
        assert_eq!(
            literal(
                &col(ColumnType::TimestampTz),
                &Value::TimestampTz(
                    dt(2026, 3, 29, 1, 30, 0, 123_456_789),
                    TimeZone::Offset(330)
                )
            ),
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.123456789 +05:30')"
        );
        assert_eq!(
            literal(
                &col(ColumnType::TimestampLtz),
                &Value::TimestampLtz(dt(2026, 3, 29, 1, 30, 0, 0))
            ),
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.000000000')"
        );
        let ym = ColumnDef::new("C", 1, ColumnType::IntervalYm).with_precision(Some(4), None);
        assert_eq!(
            literal(&ym, &Value::IntervalYm(12 * 12 + 3)),
            "TO_YMINTERVAL('+0012-03')"
        );
        let ds = ColumnDef::new("C", 1, ColumnType::IntervalDs).with_precision(Some(5), Some(6));
        let nanos = ((5 * 86_400 + 4 * 3600 + 3 * 60 + 2) as i128) * 1_000_000_000 + 123_456_000;
        assert_eq!(
            literal(&ds, &Value::IntervalDs(nanos.into())),
            "TO_DSINTERVAL('+00005 04:03:02.123456')"
        );
        assert_eq!(
            literal(
                &col(ColumnType::Raw),
                &Value::Raw(vec![0xde, 0xad, 0xbe, 0xef, 0, 0xff])
            ),
            "HEXTORAW('deadbeef00ff')"
        );
        assert_eq!(
            literal(&col(ColumnType::BinaryFloat), &Value::BinaryFloat(1.5e10)),
            "'1.50000005E+010'"
        );
        assert_eq!(
            literal(
                &col(ColumnType::BinaryDouble),
                &Value::BinaryDouble(-2.5e-300)
            ),
            "'0'"
        );
        assert_eq!(
            literal(&col(ColumnType::BinaryDouble), &Value::BinaryDouble(1.5)),
            "'1.5E+000'"
        );
        assert_eq!(
            literal(&col(ColumnType::Clob), &Value::EmptyLob),
            "EMPTY_CLOB()"
        );
        assert_eq!(
            literal(&col(ColumnType::Blob), &Value::EmptyLob),
            "EMPTY_BLOB()"
        );
    }

    #[test]
    fn oracle_numbers() {
        let b = |s: &str| {
            let mut out = String::new();
            write_hex(&mut out, &oracle_number_bytes(Decimal::parse(s).unwrap()));
            out
        };
        assert_eq!(b("4000"), "c229");
        assert_eq!(b("40"), "c129");
        assert_eq!(b("0"), "80");
        assert_eq!(b("1"), "c102");
        assert_eq!(b("0.5"), "c033");
        assert_eq!(b("123.45"), "c202182e");
        assert_eq!(b("-1"), "3e6466");
        assert_eq!(b("-123.45"), "3d644e3866");
    }

    #[test]
    fn statements() {
        let a = ColumnDef::new("A", 1, ColumnType::Number);
        let b = ColumnDef::new("B", 2, ColumnType::Varchar2);
        let one = Value::Number(Decimal::new(1, 0));
        let x = Value::Text("x".into());
        let t = r#""O"."T""#;
        assert_eq!(
            insert(t, Naming::Dictionary, &[(&a, &one), (&b, &Value::Null)]),
            r#"insert into "O"."T"("A","B") values ('1',NULL)"#
        );
        assert_eq!(
            update(
                t,
                Naming::Dictionary,
                &[(&b, &x)],
                &[(&a, &one), (&b, &Value::Null)],
                None
            ),
            r#"update "O"."T" set "B" = 'x' where "A" = '1' and "B" IS NULL"#
        );
        assert_eq!(
            delete(t, Naming::Dictionary, &[], Some("AAAS5PAAEAAAAFbAAA")),
            r#"delete from "O"."T" where ROWID = 'AAAS5PAAEAAAAFbAAA'"#
        );
        assert_eq!(
            insert(
                t,
                Naming::Generic,
                &[(&a, &Value::Number(Decimal::new(4000, 0)))]
            ),
            r#"insert into "O"."T"("COL 1") values (HEXTORAW('c229'))"#
        );
    }

    #[test]
    fn csf_pieces_reassemble() {
        let sql = format!("insert into x values ('{}')", "é".repeat(3000));
        let pieces = split_csf(&sql);
        assert!(pieces.len() > 1);
        assert!(pieces.iter().all(|p| p.len() <= SQL_REDO_MAX_BYTES));
        assert_eq!(pieces.concat(), sql);
        assert_eq!(rowid(0x12E4F, 4, 0x15B, 0), "AAAS5PAAEAAAAFbAAA");
    }
}
