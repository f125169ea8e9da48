//! Second layer: one first-layer [`Literal`] and the column's dictionary type to a
//! [`Value`] of the cdc-core model.
//!
//! ```text
//!  ColumnType          literal forms read                         Value
//!  NUMBER, FLOAT       '-42.5' | -42.5                            Number (exact)
//!  BINARY_FLOAT/DOUBLE '1.50000005E+010' | 'Inf' | 'Nan'          BinaryFloat / BinaryDouble
//!  CHAR … LONG, CLOB   'text' | UNISTR('\00e9') | a || b          Text (padding kept)
//!  CLOB, NCLOB, BLOB   EMPTY_CLOB() | EMPTY_BLOB()                EmptyLob
//!  RAW, LONG RAW, BLOB HEXTORAW('deadbeef') | a || b              Raw
//!  DATE                TO_DATE('…', 'YYYY-MM-DD HH24:MI:SS')      Date
//!  TIMESTAMP           TO_TIMESTAMP('….FF9')                      Timestamp
//!  TIMESTAMP TZ        TO_TIMESTAMP_TZ('… +05:30')                TimestampTz
//!  TIMESTAMP LTZ       TO_TIMESTAMP_TZ('…')                       TimestampLtz
//!  INTERVAL YM / DS    TO_YMINTERVAL / TO_DSINTERVAL              IntervalYm / IntervalDs
//!  ROWID, UROWID       'AAAS…'                                    RowId
//!  XMLTYPE             anything but NULL                          Unavailable
//!  JSON, BOOLEAN, …    anything but NULL / EMPTY_*                Unsupported
//!  any                 NULL → Null;  Unsupported Type → Unsupported
//! ```
//!
//! A failure is a [`ConvertError`]: a fixed reason, never the value.

use cdc_core::table::{ColumnDef, ColumnType};
use cdc_core::value::{Decimal, Value, ValueError};

use super::parse::{Function, Literal, QuotedText, find_byte};
use super::temporal::{self, YearSign};

/// Why a literal did not convert. The reason is static text and names no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvertError {
    /// The literal's form does not fit the type or its text does not read.
    Invalid(&'static str),
    /// A `HEXTORAW` literal where the type is not binary: the row was written under another
    /// table layout (the dictionary-mismatch signature).
    RawForTypedColumn,
}

impl ConvertError {
    pub fn reason(self) -> &'static str {
        match self {
            ConvertError::Invalid(reason) => reason,
            ConvertError::RawForTypedColumn => "a HEXTORAW literal for a column that is not binary",
        }
    }
}

type Result<T> = std::result::Result<T, ConvertError>;

fn invalid<T>(reason: &'static str) -> Result<T> {
    Err(ConvertError::Invalid(reason))
}

/// The text LogMiner writes for a LONG or LONG RAW value over its threshold instead of the value
/// (`set "L" = 'LONG DATA'`; `docs/decoding.md`, "Literals"). The value is not in the redo's SQL,
/// so the column is published as unavailable, as a LOB value that is not in the redo is.
pub(crate) const LONG_PLACEHOLDER: &str = "LONG DATA";

fn is_long_placeholder(literal: &Literal<'_>) -> bool {
    matches!(literal, Literal::Quoted(q) if q.raw() == LONG_PLACEHOLDER)
}

/// Converts one literal with its column's type.
pub fn convert(literal: &Literal<'_>, column: &ColumnDef) -> Result<Value> {
    match literal {
        Literal::Null => return Ok(Value::Null),
        Literal::Unsupported => return Ok(Value::Unsupported),
        Literal::Json(j) => return json(&j.value(), &column.data_type),
        _ => {}
    }
    match &column.data_type {
        ColumnType::Number | ColumnType::Float => number(literal).map(Value::Number),
        ColumnType::BinaryFloat => float(scalar_text(literal)?, false),
        ColumnType::BinaryDouble => float(scalar_text(literal)?, true),
        ColumnType::Char | ColumnType::Varchar2 | ColumnType::NChar | ColumnType::NVarchar2 => {
            text(literal).map(Value::Text)
        }
        ColumnType::Long | ColumnType::LongRaw if is_long_placeholder(literal) => {
            Ok(Value::Unavailable)
        }
        ColumnType::Long => text(literal).map(Value::Text),
        ColumnType::Clob | ColumnType::NClob => {
            if is_empty_lob(literal) {
                Ok(Value::EmptyLob)
            } else {
                text(literal).map(Value::Text)
            }
        }
        ColumnType::Raw | ColumnType::LongRaw => bytes(literal).map(Value::Raw),
        ColumnType::Blob => {
            if is_empty_lob(literal) {
                Ok(Value::EmptyLob)
            } else {
                bytes(literal).map(Value::Raw)
            }
        }
        ColumnType::Date
        | ColumnType::Timestamp
        | ColumnType::TimestampTz
        | ColumnType::TimestampLtz
        | ColumnType::IntervalYm
        | ColumnType::IntervalDs => {
            let (name, sign, text) = function(literal, temporal_functions(&column.data_type))?;
            temporal_value(&column.data_type, name, sign, text)
        }
        ColumnType::RowId | ColumnType::URowId => match literal {
            Literal::Quoted(q) => Ok(Value::RowId(q.text().into_owned())),
            _ => invalid("a ROWID that is not a quoted literal"),
        },
        // XMLTYPE content is never carried by the DML row (XML DOC rows or XMLType(:1)).
        ColumnType::XmlType => Ok(Value::Unavailable),
        ColumnType::Json | ColumnType::Boolean | ColumnType::Vector | ColumnType::Other(_) => {
            if is_empty_lob(literal) {
                Ok(Value::EmptyLob)
            } else {
                // the value is not published, but a malformed literal still fails the row
                check_literal(literal)?;
                Ok(Value::Unsupported)
            }
        }
    }
}

/// A value marked `/* JSON */` (OSON): for a JSON column the empty LOB, or its OSON bytes
/// (checked, not decoded: the value is unsupported); for a BLOB column the bytes. The marker
/// on any other column means the dictionary's type is not the value's.
fn json(value: &Literal<'_>, ty: &ColumnType) -> Result<Value> {
    match (value, ty) {
        (Literal::Null, ColumnType::Json | ColumnType::Blob) => Ok(Value::Null),
        (_, ColumnType::Json | ColumnType::Blob) if is_empty_lob(value) => Ok(Value::EmptyLob),
        (_, ColumnType::Json) => bytes(value).map(|_| Value::Unsupported),
        (_, ColumnType::Blob) => bytes(value).map(Value::Raw),
        _ => invalid("a JSON value (/* JSON */) for a column that is neither JSON nor BLOB"),
    }
}

/// Checks a literal as its own form says it must read, whatever the column: `HEXTORAW`'s hex
/// digits, `UNISTR`'s escapes, the text of `TO_DATE` against its format and of
/// `TO_TIMESTAMP`, `TO_TIMESTAMP_TZ`, `TO_YMINTERVAL` and `TO_DSINTERVAL` against the
/// session's; inside other functions, `||` and the JSON marker too. Each check is the
/// conversion the function's own type makes, so it fails exactly where [`convert`] would for
/// that type. `redo_parse` reports with it what the decoder would refuse.
pub(super) fn check_literal(literal: &Literal<'_>) -> Result<()> {
    match literal {
        Literal::Quoted(_)
        | Literal::Null
        | Literal::Number(_)
        | Literal::Bind(_)
        | Literal::Unsupported => Ok(()),
        Literal::Json(j) => check_literal(&j.value()),
        Literal::Function(f) if f.is("HEXTORAW") => bytes(literal).map(drop),
        Literal::Function(f) if f.is("UNISTR") => text(literal).map(drop),
        Literal::Function(f) => {
            let ty = match () {
                _ if f.is("TO_DATE") => ColumnType::Date,
                _ if f.is("TO_TIMESTAMP") => ColumnType::Timestamp,
                _ if f.is("TO_YMINTERVAL") => ColumnType::IntervalYm,
                _ if f.is("TO_DSINTERVAL") => ColumnType::IntervalDs,
                _ if f.is("TO_TIMESTAMP_TZ") => {
                    // with a zone (WITH TIME ZONE) or without (WITH LOCAL TIME ZONE)
                    let (_, _, text) = function(literal, &["TO_TIMESTAMP_TZ"])?;
                    return temporal::parse_timestamp_tz(text)
                        .map(drop)
                        .map_err(ConvertError::Invalid);
                }
                _ => return f.args().try_for_each(|arg| check_literal(&arg)),
            };
            let (name, sign, text) = function(literal, temporal_functions(&ty))?;
            temporal_value(&ty, name, sign, text).map(drop)
        }
        Literal::Concat(c) => {
            let is =
                |part: &Literal<'_>, name: &str| matches!(part, Literal::Function(f) if f.is(name));
            // the parts are read together as the conversions read them: UNISTR parts pair
            // surrogates across `||`
            if c.parts()
                .all(|p| matches!(p, Literal::Quoted(_) | Literal::Null) || is(&p, "UNISTR"))
            {
                text(literal).map(drop)
            } else if c
                .parts()
                .all(|p| matches!(p, Literal::Null) || is(&p, "HEXTORAW"))
            {
                bytes(literal).map(drop)
            } else {
                c.parts().try_for_each(|part| check_literal(&part))
            }
        }
    }
}

/// The functions a temporal type is written with (none for other types).
pub(super) fn temporal_functions(ty: &ColumnType) -> &'static [&'static str] {
    match ty {
        ColumnType::Date | ColumnType::Timestamp => &["TO_DATE", "TO_TIMESTAMP"],
        ColumnType::TimestampTz => &["TO_TIMESTAMP_TZ"],
        ColumnType::TimestampLtz => &["TO_TIMESTAMP_TZ", "TO_TIMESTAMP"],
        ColumnType::IntervalYm => &["TO_YMINTERVAL"],
        ColumnType::IntervalDs => &["TO_DSINTERVAL"],
        _ => &[],
    }
}

/// `name` when it is, exactly as written, one of the [`temporal_functions`] of `ty`.
#[inline]
pub(super) fn temporal_function(ty: &ColumnType, name: &str) -> Option<&'static str> {
    match (ty, name) {
        (ColumnType::Date | ColumnType::Timestamp, "TO_DATE") => Some("TO_DATE"),
        (ColumnType::Date | ColumnType::Timestamp | ColumnType::TimestampLtz, "TO_TIMESTAMP") => {
            Some("TO_TIMESTAMP")
        }
        (ColumnType::TimestampTz | ColumnType::TimestampLtz, "TO_TIMESTAMP_TZ") => {
            Some("TO_TIMESTAMP_TZ")
        }
        (ColumnType::IntervalYm, "TO_YMINTERVAL") => Some("TO_YMINTERVAL"),
        (ColumnType::IntervalDs, "TO_DSINTERVAL") => Some("TO_DSINTERVAL"),
        _ => None,
    }
}

/// A temporal value from the text argument of its function `name` (one of
/// [`temporal_functions`] of `ty`, its format already checked; `sign`, what that format
/// allows before the year). The text is read as its function's format writes it, whatever
/// the column: a `TO_DATE` text has no fraction of a second even for a TIMESTAMP column, and
/// a DATE read from a `TO_TIMESTAMP` text has none either.
pub(super) fn temporal_value(
    ty: &ColumnType,
    name: &'static str,
    sign: YearSign,
    text: &str,
) -> Result<Value> {
    let date = |text| temporal::parse_date(text, sign).map_err(ConvertError::Invalid);
    match ty {
        ColumnType::Date if name == "TO_DATE" => date(text).map(Value::Date),
        ColumnType::Date => match temporal::parse_timestamp(text) {
            Ok(value) if value.nanos == 0 => Ok(Value::Date(value)),
            Ok(_) => invalid("a DATE carries no fraction of a second"),
            Err(e) => invalid(e),
        },
        ColumnType::Timestamp if name == "TO_DATE" => date(text).map(Value::Timestamp),
        ColumnType::Timestamp => temporal::parse_timestamp(text)
            .map(Value::Timestamp)
            .map_err(ConvertError::Invalid),
        ColumnType::TimestampTz => {
            match temporal::parse_timestamp_tz(text).map_err(ConvertError::Invalid)? {
                (value, Some(zone)) => Ok(Value::TimestampTz(value, zone)),
                (_, None) => invalid("a TIMESTAMP WITH TIME ZONE literal without a zone"),
            }
        }
        ColumnType::TimestampLtz => {
            match temporal::parse_timestamp_tz(text).map_err(ConvertError::Invalid)? {
                (value, None) => Ok(Value::TimestampLtz(value)),
                (value, Some(cdc_core::value::TimeZone::Offset(minutes))) => {
                    temporal::shift_minutes(value, -i64::from(minutes))
                        .map(Value::TimestampLtz)
                        .map_err(ConvertError::Invalid)
                }
                (_, Some(_)) => invalid("a region name on a LOCAL TIME ZONE literal"),
            }
        }
        ColumnType::IntervalYm => temporal::parse_interval_ym(text)
            .map(Value::IntervalYm)
            .map_err(ConvertError::Invalid),
        ColumnType::IntervalDs => temporal::parse_interval_ds(text)
            .map(|nanos| Value::IntervalDs(nanos.into()))
            .map_err(ConvertError::Invalid),
        _ => invalid("not the function this type is written with"),
    }
}

/// A BINARY_DOUBLE (`double`) or BINARY_FLOAT value from its unquoted text.
pub(super) fn float(text: &str, double: bool) -> Result<Value> {
    // the plain spelling Oracle writes: neither a special value nor blanks to trim, so it is
    // read directly (what `parse_float` would give)
    match plain_float(text.as_bytes()) {
        PlainFloat::Exact {
            negative,
            digits,
            exponent,
        } => {
            if double
                && let Some(v) =
                    exact_f64(digits, exponent).or_else(|| rounded_f64(digits, exponent))
            {
                return Ok(Value::BinaryDouble(if negative { -v } else { v }));
            }
            if !double
                && let Some(v) =
                    exact_f32(digits, exponent).or_else(|| f32_of_exact_f64(digits, exponent))
            {
                return Ok(Value::BinaryFloat(if negative { -v } else { v }));
            }
            return parse_plain_float(text, double);
        }
        PlainFloat::Long => return parse_plain_float(text, double),
        PlainFloat::Other => {}
    }
    float_general(text, double)
}

/// [`float`] for any spelling: special values, blanks around the number.
fn float_general(text: &str, double: bool) -> Result<Value> {
    if double {
        match special_float(text) {
            Some(v) => Ok(Value::BinaryDouble(v)),
            None => parse_float::<f64>(text).map(Value::BinaryDouble),
        }
    } else {
        match special_float(text) {
            Some(v) => Ok(Value::BinaryFloat(v as f32)),
            None => parse_float::<f32>(text).map(Value::BinaryFloat),
        }
    }
}

fn is_empty_lob(literal: &Literal<'_>) -> bool {
    matches!(literal, Literal::Function(f)
        if (f.is("EMPTY_CLOB") || f.is("EMPTY_BLOB")) && f.args().next().is_none())
}

fn is_hextoraw(literal: &Literal<'_>) -> bool {
    match literal {
        Literal::Function(f) => f.is("HEXTORAW"),
        Literal::Concat(c) => c.parts().any(|p| is_hextoraw(&p)),
        _ => false,
    }
}

/// The unquoted text of a scalar literal that should hold no quote.
fn scalar_text<'a>(literal: &Literal<'a>) -> Result<&'a str> {
    match literal {
        Literal::Quoted(q) if !q.has_doubled_quote() => Ok(q.raw()),
        Literal::Number(text) => Ok(text),
        _ if is_hextoraw(literal) => Err(ConvertError::RawForTypedColumn),
        _ => invalid("not a quoted or plain number"),
    }
}

fn number(literal: &Literal<'_>) -> Result<Decimal> {
    number_text(scalar_text(literal)?)
}

/// A NUMBER from its unquoted text.
pub(super) fn number_text(text: &str) -> Result<Decimal> {
    if let Some(value) = small_decimal(text) {
        return Ok(value);
    }
    Decimal::parse(text).map_err(|e| {
        ConvertError::Invalid(match e {
            ValueError::TooManyDigits => "a number with more than 38 significant digits",
            ValueError::ExponentOutOfRange => "a number out of NUMBER's range",
            _ => "not a decimal number",
        })
    })
}

/// The common case `-?d+(.d+)?` with at most 18 digits, in u64 arithmetic; anything else
/// (exponents, a leading `.` or `+`, long values) goes through `Decimal::parse`.
fn small_decimal(text: &str) -> Option<Decimal> {
    let b = text.as_bytes();
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 19 || !digits[0].is_ascii_digit() {
        return None;
    }
    // the integer digits, then the fraction's (19 digits fit a u64)
    let mut value: u64 = 0;
    let mut i = 0;
    read_digits(digits, &mut i, &mut value);
    let mut scale: i16 = 0;
    if i < digits.len() {
        if digits[i] != b'.' {
            return None;
        }
        i += 1;
        let fraction = i;
        read_digits(digits, &mut i, &mut value);
        if i < digits.len() || i == fraction {
            return None;
        }
        scale = (i - fraction) as i16;
    }
    // every byte but the point is a digit
    let count = digits.len() - usize::from(scale > 0);
    if count > 18 {
        return None;
    }
    Some(small_decimal_of(negative, value, scale))
}

/// Appends the ASCII digits from `digits[*at..]` to `value`, one test per digit, and leaves
/// `*at` at the first byte that is not one. The caller bounds the count (19 fit a u64).
#[inline(always)]
fn read_digits(digits: &[u8], at: &mut usize, value: &mut u64) {
    while let Some(d) = digits
        .get(*at)
        .map(|d| d.wrapping_sub(b'0'))
        .filter(|&d| d < 10)
    {
        *value = *value * 10 + u64::from(d);
        *at += 1;
    }
}

/// `±value × 10^(−scale)`, normalised (both constructors strip trailing zero digits).
#[inline(always)]
fn small_decimal_of(negative: bool, value: u64, scale: i16) -> Decimal {
    // at most 18 digits here: the value fits 64 bits
    match i64::try_from(value) {
        Ok(v) => Decimal::from_i64(if negative { -v } else { v }, scale),
        Err(_) => {
            let unscaled = i128::from(value);
            Decimal::new(if negative { -unscaled } else { unscaled }, scale)
        }
    }
}

/// A quoted literal at `at` (the opening quote) that [`small_decimal`] reads, read where it
/// stands in one pass: the NUMBER it holds and the offset after its closing quote. `None` for
/// any other literal (read then as quoted text).
#[inline(always)]
pub(super) fn quoted_small_decimal(b: &[u8], at: usize) -> Option<(Decimal, usize)> {
    if b.get(at) != Some(&b'\'') {
        return None;
    }
    let mut i = at + 1;
    let negative = b.get(i) == Some(&b'-');
    if negative {
        i += 1;
    }
    // digits past the 18th may wrap the value: such a literal is declined below
    let mut value: u64 = 0;
    let mut digits = |i: &mut usize| {
        let start = *i;
        // up to eight digits at once, then one by one
        if let Some(word) = b.get(*i..*i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
            let (eight, n) = leading_digits(u64::from_le_bytes(word));
            value = value
                .wrapping_mul(TENS.get(n).copied().unwrap_or(0))
                .wrapping_add(eight);
            *i += n;
            if n < 8 {
                return n;
            }
        }
        while let Some(d) = b.get(*i).map(|d| d.wrapping_sub(b'0')).filter(|&d| d < 10) {
            value = value.wrapping_mul(10).wrapping_add(u64::from(d));
            *i += 1;
        }
        *i - start
    };
    let mut count = digits(&mut i);
    if count == 0 {
        return None;
    }
    let mut scale: i16 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let fraction = digits(&mut i);
        if fraction == 0 {
            return None;
        }
        count += fraction;
        scale = fraction.min(18) as i16;
    }
    if count > 18 {
        return None;
    }
    // the closing quote, not the first of a doubled one; anything else is left to the text
    // path
    if b.get(i) != Some(&b'\'') || b.get(i + 1) == Some(&b'\'') {
        return None;
    }
    Some((small_decimal_of(negative, value, scale), i + 1))
}

/// 10^n for n in 0..=9: the digit counts [`leading_digits`] gives, and the scale of a
/// fraction of up to nine digits (`temporal`).
pub(super) const TENS: [u64; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// The ASCII digits at the start of eight bytes (`word`, read little-endian: the first byte
/// lowest): their value and how many there are (0 to 8), without a branch per digit.
#[inline(always)]
pub(super) fn leading_digits(word: u64) -> (u64, usize) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // a byte's high bit is set when it is not a digit: below `0` the subtraction wraps (or
    // leaves 0x80 and up), above `9` the addition reaches 0x80. A carry or borrow only ever
    // runs upward from a byte that is itself flagged, so the lowest flag is exact.
    let flags = (word.wrapping_sub(0x30 * ONES) | word.wrapping_add(0x46 * ONES)) & (0x80 * ONES);
    let n = (flags.trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    // the n digits moved to the top bytes (zeros below them read as leading zeros), then
    // combined pairwise: 8 × 1 digit, 4 × 2, 2 × 4, 1 × 8
    let mut v = word.wrapping_sub(0x30 * ONES) << (8 * (8 - n));
    v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    v = (v.wrapping_mul(10_000) + (v >> 32)) & 0xffff_ffff;
    (v, n)
}

/// Oracle's spellings of the special BINARY_FLOAT / BINARY_DOUBLE values.
fn special_float(text: &str) -> Option<f64> {
    let t = temporal::trim(text);
    // every special spelling has a letter within its first two bytes; numbers do not
    if !t.bytes().take(2).any(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let is = |names: &[&str]| names.iter().any(|n| t.eq_ignore_ascii_case(n));
    if is(&[
        "inf",
        "+inf",
        "infinity",
        "binary_double_infinity",
        "binary_float_infinity",
    ]) {
        Some(f64::INFINITY)
    } else if is(&[
        "-inf",
        "-infinity",
        "-binary_double_infinity",
        "-binary_float_infinity",
    ]) {
        Some(f64::NEG_INFINITY)
    } else if is(&["nan", "binary_double_nan", "binary_float_nan"]) {
        Some(f64::NAN)
    } else {
        None
    }
}

/// What [`plain_float`] makes of a float's text.
enum PlainFloat {
    /// `-?d+(.d+)?([eE][+-]?d{1,4})?` with at most 19 significant digits: ±`digits` × 10^`exponent`.
    Exact {
        negative: bool,
        digits: u64,
        exponent: i32,
    },
    /// The same shape with more digits or a longer exponent.
    Long,
    /// Anything else (blanks, special values, other shapes): the general reading decides.
    Other,
}

/// Reads Oracle's plain spelling of a finite float in one pass.
fn plain_float(b: &[u8]) -> PlainFloat {
    let (negative, mut i) = match b.first() {
        Some(b'-') => (true, 1),
        _ => (false, 0),
    };
    let mut digits: u64 = 0;
    let mut significant = 0usize;
    let mut exponent: i32 = 0;
    let mut long = false;
    let mut any = false;
    let mut fraction = false;
    loop {
        match b.get(i) {
            // past the first significant digit, up to eight digits at once while all of them
            // still count (what the digit-by-digit arm below does with each)
            Some(b'0'..=b'9')
                if digits != 0
                    && significant + 8 <= 19
                    && let Some(word) =
                        b.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) =>
            {
                let (eight, n) = leading_digits(u64::from_le_bytes(word));
                digits = digits * TENS.get(n).copied().unwrap_or(0) + eight;
                significant += n;
                if fraction {
                    exponent -= n as i32;
                }
                i += n;
            }
            Some(&d @ b'0'..=b'9') => {
                any = true;
                if digits != 0 || d != b'0' {
                    significant += 1;
                }
                if significant > 19 {
                    long = true;
                } else {
                    digits = digits * 10 + u64::from(d - b'0');
                    if fraction {
                        exponent -= 1;
                    }
                }
                i += 1;
            }
            Some(b'.') if !fraction && any => {
                // at least one digit on each side of the point
                if !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    return PlainFloat::Other;
                }
                fraction = true;
                i += 1;
            }
            _ => break,
        }
    }
    if !any {
        return PlainFloat::Other;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        let minus = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i32 = 0;
        while let Some(&d @ b'0'..=b'9') = b.get(i) {
            if i - start >= 4 {
                long = true;
            } else {
                e = e * 10 + i32::from(d - b'0');
            }
            i += 1;
        }
        if i == start {
            return PlainFloat::Other;
        }
        exponent += if minus { -e } else { e };
    }
    if i != b.len() {
        return PlainFloat::Other;
    }
    if long {
        return PlainFloat::Long;
    }
    PlainFloat::Exact {
        negative,
        digits,
        exponent,
    }
}

/// `digits × 10^exponent` when both factors are exact doubles: then one IEEE operation
/// rounds the exact value correctly, as `str::parse` does.
fn exact_f64(digits: u64, exponent: i32) -> Option<f64> {
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    if digits > 1 << 53 {
        return None;
    }
    let power = *POWERS.get(exponent.unsigned_abs() as usize)?;
    let m = digits as f64;
    Some(if exponent < 0 { m / power } else { m * power })
}

/// [`exact_f64`] for a float.
fn exact_f32(digits: u64, exponent: i32) -> Option<f32> {
    const POWERS: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];
    if digits > 1 << 24 {
        return None;
    }
    let power = *POWERS.get(exponent.unsigned_abs() as usize)?;
    let m = digits as f32;
    Some(if exponent < 0 { m / power } else { m * power })
}

/// `digits × 10^exponent` rounded to the nearest double (ties to even) in integer arithmetic,
/// for the values [`exact_f64`] cannot take: more digits than a double holds (a double's
/// shortest spelling has up to 17) or a power of ten past 10^22. `None` when the power is
/// past 10^±27 or the value is not a normal double (left to `str::parse`).
fn rounded_f64(digits: u64, exponent: i32) -> Option<f64> {
    if digits == 0 || !(-27..=27).contains(&exponent) {
        return None;
    }
    // the value is (whole + rest / divisor) × 2^-shift, with `whole` 56 bits or more so that
    // the bits below a double's 53 decide the rounding, and `rest` whether any bit is left
    let power = 10u128.checked_pow(exponent.unsigned_abs())?;
    let (whole, rest_left, shift) = if exponent >= 0 {
        (u128::from(digits).checked_mul(power)?, false, 0i32)
    } else {
        // long division by a divisor under 2^90: each step brings in 38 bits or more
        let (mut whole, mut rest, mut shift) = (0u128, u128::from(digits), 0i32);
        while whole >> 55 == 0 {
            let step = rest.leading_zeros().min(whole.leading_zeros());
            let numerator = rest << step;
            let quotient = numerator / power;
            rest = numerator - quotient * power;
            whole = (whole << step) | quotient;
            shift += step as i32;
        }
        (whole, rest != 0, shift)
    };
    // value ≈ mantissa × 2^binary, the mantissa rounded to 53 bits
    const DIGITS: u32 = f64::MANTISSA_DIGITS;
    let bits = u128::BITS - whole.leading_zeros();
    let (mut mantissa, mut binary) = if bits <= DIGITS {
        // exact (a division always leaves more bits than a double holds)
        (whole << (DIGITS - bits), -shift - (DIGITS - bits) as i32)
    } else {
        let dropped = bits - DIGITS;
        let half = 1u128 << (dropped - 1);
        let low = whole & ((half << 1) - 1);
        let mut mantissa = whole >> dropped;
        if low > half || (low == half && (rest_left || mantissa & 1 == 1)) {
            mantissa += 1;
        }
        (mantissa, dropped as i32 - shift)
    };
    if mantissa >> DIGITS != 0 {
        // rounded up to the next power of two
        mantissa >>= 1;
        binary += 1;
    }
    // the exponent of the leading bit; only normal doubles are built here
    let exponent2 = binary + (DIGITS as i32 - 1);
    if !(f64::MIN_EXP - 1..f64::MAX_EXP).contains(&exponent2) {
        return None;
    }
    let fraction = u64::try_from(mantissa).ok()? & ((1 << (DIGITS - 1)) - 1);
    let biased = u64::try_from(exponent2 + f64::MAX_EXP - 1).ok()?;
    Some(f64::from_bits(biased << (DIGITS - 1) | fraction))
}

/// A float's value (`digits × 10^exponent`) through the double [`exact_f64`] gives for it: a
/// BINARY_FLOAT of nine digits (Oracle writes up to nine) is out of [`exact_f32`]'s reach.
///
/// Rounding twice gives what rounding once gives unless the double lands on a boundary
/// between two floats' rounding intervals: each boundary (a midpoint of two adjacent normal
/// floats) is itself a double, so rounding to the nearest double cannot move the value across
/// one, only onto it. So `None` when the double is such a midpoint, or outside the normal
/// floats (where the boundaries and overflow are left to `str::parse`).
fn f32_of_exact_f64(digits: u64, exponent: i32) -> Option<f32> {
    // the bits of a double below a normal float's last significand bit
    const BELOW_FLOAT: u64 = (1 << (f64::MANTISSA_DIGITS - f32::MANTISSA_DIGITS)) - 1;
    const MIDPOINT: u64 = 1 << (f64::MANTISSA_DIGITS - f32::MANTISSA_DIGITS - 1);
    let v = exact_f64(digits, exponent)?;
    if !(f64::from(f32::MIN_POSITIVE)..=f64::from(f32::MAX)).contains(&v)
        || v.to_bits() & BELOW_FLOAT == MIDPOINT
    {
        return None;
    }
    // the double is a normal float's value or lies strictly inside one float's rounding
    // interval: the conversion rounds it (to nearest, ties to even) as `str::parse` rounds the
    // exact value
    Some(v as f32)
}

/// A text [`plain_float`] accepted, read by `str::parse` (which takes that whole shape).
fn parse_plain_float(text: &str, double: bool) -> Result<Value> {
    let invalid = |_| ConvertError::Invalid("not a floating-point number");
    if double {
        text.parse::<f64>()
            .map(Value::BinaryDouble)
            .map_err(invalid)
    } else {
        text.parse::<f32>().map(Value::BinaryFloat).map_err(invalid)
    }
}

/// A finite float in Oracle's number characters only (Rust's own `inf`/`nan` are not).
fn parse_float<F: std::str::FromStr>(text: &str) -> Result<F> {
    let t = temporal::trim(text);
    if t.is_empty()
        || !t
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
    {
        return invalid("not a floating-point number");
    }
    t.parse::<F>()
        .map_err(|_| ConvertError::Invalid("not a floating-point number"))
}

/// A character value: quoted text, `UNISTR`, or a `||` concatenation of them.
fn text(literal: &Literal<'_>) -> Result<String> {
    match literal {
        Literal::Quoted(q) => Ok(q.text().into_owned()),
        Literal::Number(n) => Ok((*n).to_owned()),
        Literal::Function(f) if f.is("UNISTR") => match f.only_arg() {
            Some(Literal::Quoted(q)) => unistr(&q),
            _ => invalid("UNISTR without one quoted argument"),
        },
        Literal::Concat(c) => {
            let mut out = String::new();
            // a surrogate pair may be split across two UNISTR parts
            let mut high = None;
            for part in c.parts() {
                match part {
                    Literal::Quoted(q) => {
                        finish_unistr(high.take())?;
                        q.push_to(&mut out);
                    }
                    Literal::Function(f) if f.is("UNISTR") => unistr_part(&f, &mut out, &mut high)?,
                    Literal::Null => finish_unistr(high.take())?,
                    _ if is_hextoraw(&part) => return Err(ConvertError::RawForTypedColumn),
                    _ => return invalid("a concatenation part that is not text"),
                }
            }
            finish_unistr(high)?;
            Ok(out)
        }
        _ if is_hextoraw(literal) => Err(ConvertError::RawForTypedColumn),
        _ => invalid("not a character literal"),
    }
}

/// The text of `UNISTR(q)`.
pub(super) fn unistr(q: &QuotedText<'_>) -> Result<String> {
    let mut out = String::with_capacity(q.raw().len());
    let mut high = None;
    decode_unistr(q, &mut out, &mut high)?;
    finish_unistr(high)?;
    Ok(out)
}

/// [`unistr`] for the one-pass reader: the same text, or `None` where `unistr` fails. The
/// common case, a text without a doubled quote, is read in one loop from escape to escape: each
/// plain part copied whole, each escape's four digits by table.
#[inline]
pub(super) fn plain_unistr(q: &QuotedText<'_>) -> Option<String> {
    if q.has_doubled_quote() {
        return unistr(q).ok();
    }
    let raw = q.raw();
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    // a high surrogate waiting for its low half
    let mut high: Option<u16> = None;
    let mut plain_start = 0;
    while let Some(at) = find_byte(b, plain_start, b'\\') {
        if plain_start < at {
            if high.is_some() {
                return None;
            }
            out.push_str(raw.get(plain_start..at)?);
        }
        if b.get(at + 1) == Some(&b'\\') {
            if high.is_some() {
                return None;
            }
            out.push('\\');
            plain_start = at + 2;
            continue;
        }
        let &[h0, h1, h2, h3] = b.get(at + 1..at + 5)? else {
            return None;
        };
        let digit = |h: u8| u16::from(HEX_VALUES[usize::from(h)]);
        let (d0, d1, d2, d3) = (digit(h0), digit(h1), digit(h2), digit(h3));
        // a byte that is no hex digit has the high bit set
        if (d0 | d1 | d2 | d3) & 0x80 != 0 {
            return None;
        }
        let unit = d0 << 12 | d1 << 8 | d2 << 4 | d3;
        match unit {
            0xD800..=0xDBFF => {
                if high.replace(unit).is_some() {
                    return None;
                }
            }
            0xDC00..=0xDFFF => {
                let h = high.take()?;
                let code = 0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                out.push(char::from_u32(code)?);
            }
            _ => {
                if high.is_some() {
                    return None;
                }
                out.push(char::from_u32(u32::from(unit))?);
            }
        }
        plain_start = at + 5;
    }
    if plain_start < b.len() {
        if high.is_some() {
            return None;
        }
        out.push_str(raw.get(plain_start..)?);
    }
    high.is_none().then_some(out)
}

fn finish_unistr(high: Option<u16>) -> Result<()> {
    match high {
        Some(_) => invalid("an unpaired UTF-16 surrogate in UNISTR"),
        None => Ok(()),
    }
}

fn unistr_part(f: &Function<'_>, out: &mut String, high: &mut Option<u16>) -> Result<()> {
    match f.only_arg() {
        Some(Literal::Quoted(q)) => decode_unistr(&q, out, high),
        _ => invalid("UNISTR without one quoted argument"),
    }
}

/// `\XXXX` is one UTF-16 code unit, `\\` a backslash, anything else itself; `''` is a quote.
fn decode_unistr(q: &QuotedText<'_>, out: &mut String, high: &mut Option<u16>) -> Result<()> {
    let raw = q.raw();
    // no quote at all in the text unless one is doubled: the plain parts are copied as they are
    let doubled = q.has_doubled_quote();
    let b = raw.as_bytes();
    out.reserve(raw.len());
    let mut i = 0;
    let mut plain_start = 0;
    // from escape to escape: a one-byte search over the plain text between them
    while let Some(at) = b
        .get(i..)
        .and_then(|rest| rest.iter().position(|&c| c == b'\\'))
    {
        i += at;
        if plain_start < i {
            finish_unistr(high.take())?;
            push_plain(&raw[plain_start..i], out, doubled);
        }
        if b.get(i + 1) == Some(&b'\\') {
            finish_unistr(high.take())?;
            out.push('\\');
            i += 2;
        } else {
            let hex = raw
                .get(i + 1..i + 5)
                .ok_or(ConvertError::Invalid("a short UNISTR escape"))?;
            let mut unit = 0u16;
            for h in hex.bytes() {
                let d = hex_digit(h).map_err(|_| ConvertError::Invalid("a bad UNISTR escape"))?;
                unit = unit << 4 | u16::from(d);
            }
            push_unit(unit, out, high)?;
            i += 5;
        }
        plain_start = i;
    }
    if plain_start < b.len() {
        finish_unistr(high.take())?;
        push_plain(&raw[plain_start..], out, doubled);
    }
    Ok(())
}

/// A part of a quoted text without escapes, `''` collapsed (`doubled`: the text holds one).
#[inline]
fn push_plain(raw: &str, out: &mut String, doubled: bool) {
    if !doubled {
        out.push_str(raw);
        return;
    }
    // a quote inside the literal is doubled in the raw text; most parts hold none, and a
    // one-byte search is far cheaper than a substring search's set-up
    let mut rest = raw;
    while let Some(at) = rest.bytes().position(|b| b == b'\'') {
        if rest.as_bytes().get(at + 1) == Some(&b'\'') {
            out.push_str(&rest[..=at]);
            rest = &rest[at + 2..];
        } else {
            out.push_str(&rest[..=at]);
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
}

fn push_unit(unit: u16, out: &mut String, high: &mut Option<u16>) -> Result<()> {
    match unit {
        0xD800..=0xDBFF => {
            if high.replace(unit).is_some() {
                return invalid("an unpaired UTF-16 surrogate in UNISTR");
            }
        }
        0xDC00..=0xDFFF => {
            let Some(h) = high.take() else {
                return invalid("an unpaired UTF-16 surrogate in UNISTR");
            };
            let code = 0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
            out.push(char::from_u32(code).ok_or(ConvertError::Invalid("a bad UTF-16 pair"))?);
        }
        _ => {
            finish_unistr(high.take())?;
            out.push(
                char::from_u32(u32::from(unit))
                    .ok_or(ConvertError::Invalid("a bad UNISTR escape"))?,
            );
        }
    }
    Ok(())
}

/// A binary value: `HEXTORAW('…')` (or quoted hex), or a `||` concatenation of them.
pub(super) fn bytes(literal: &Literal<'_>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    match literal {
        Literal::Concat(c) => {
            for part in c.parts() {
                hex_part(&part, &mut out)?;
            }
        }
        _ => hex_part(literal, &mut out)?,
    }
    Ok(out)
}

fn hex_part(literal: &Literal<'_>, out: &mut Vec<u8>) -> Result<()> {
    let hex = match literal {
        Literal::Function(f) if f.is("HEXTORAW") => match f.only_arg() {
            Some(Literal::Quoted(q)) => q.raw(),
            _ => return invalid("HEXTORAW without one quoted argument"),
        },
        Literal::Quoted(q) => q.raw(),
        Literal::Null => return Ok(()),
        _ => return invalid("not a binary literal"),
    };
    decode_hex(hex, out)
}

/// The bytes of `HEXTORAW('hex')`.
pub(super) fn hex(hex: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(hex.len() / 2);
    decode_hex(hex, &mut out)?;
    Ok(out)
}

fn decode_hex(hex: &str, out: &mut Vec<u8>) -> Result<()> {
    let b = hex.as_bytes();
    if !b.len().is_multiple_of(2) {
        return invalid("an odd number of hex digits");
    }
    out.reserve(b.len() / 2);
    for pair in b.chunks_exact(2) {
        if let [hi, lo] = *pair {
            let (hi, lo) = (HEX_VALUES[usize::from(hi)], HEX_VALUES[usize::from(lo)]);
            // a byte that is no hex digit has the high bit set
            if (hi | lo) & 0x80 != 0 {
                return invalid("not a hex digit");
            }
            out.push(hi << 4 | lo);
        }
    }
    Ok(())
}

/// Each byte's value as a hex digit; `0x80` and up for a byte that is none (a table lookup
/// per digit instead of three range tests).
const HEX_VALUES: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut d = 0;
    while d < 256 {
        table[d] = match d as u8 {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => 0xff,
        };
        d += 1;
    }
    table
};

fn hex_digit(d: u8) -> Result<u8> {
    match d {
        b'0'..=b'9' => Ok(d - b'0'),
        b'a'..=b'f' => Ok(d - b'a' + 10),
        b'A'..=b'F' => Ok(d - b'A' + 10),
        _ => invalid("not a hex digit"),
    }
}

/// The text argument of one of `names`, checking a `TO_DATE` format argument: the function,
/// what its format allows before the year, and the text.
fn function<'a>(
    literal: &Literal<'a>,
    names: &[&'static str],
) -> Result<(&'static str, YearSign, &'a str)> {
    let Literal::Function(f) = literal else {
        if is_hextoraw(literal) {
            return Err(ConvertError::RawForTypedColumn);
        }
        return invalid("not the function this type is written with");
    };
    let Some(&name) = names.iter().find(|n| f.is(n)) else {
        if f.is("HEXTORAW") {
            return Err(ConvertError::RawForTypedColumn);
        }
        return invalid("not the function this type is written with");
    };
    // one or two plain quoted arguments (the common case) are read without re-parsing
    let (first, second, more) = match f.quoted_args() {
        Some((value, format)) => (
            Some(Literal::Quoted(value)),
            format.map(Literal::Quoted),
            false,
        ),
        None => {
            let mut args = f.args();
            (args.next(), args.next(), args.next().is_some())
        }
    };
    let Some(Literal::Quoted(value)) = first else {
        return invalid("a temporal function without a quoted value");
    };
    // one argument: the session's format, whose year is SYYYY
    let mut sign = YearSign::Signed;
    match second {
        None => {}
        Some(Literal::Quoted(format))
            if name == "TO_DATE"
                && temporal::DATE_FORMATS
                    .iter()
                    .any(|f| is_format(format.raw(), f)) =>
        {
            sign = YearSign::of_date_format(format.raw());
        }
        Some(Literal::Quoted(_)) if name == "TO_DATE" => {
            return invalid("TO_DATE with a format other than the session's NLS_DATE_FORMAT");
        }
        Some(_) => return invalid("a temporal function with an unexpected argument"),
    }
    if more {
        return invalid("a temporal function with too many arguments");
    }
    Ok((name, sign, value.raw()))
}

/// `text` is `format`, ignoring ASCII case (an exact match first: LogMiner echoes the format).
#[inline]
fn is_format(text: &str, format: &str) -> bool {
    text.len() == format.len()
        && (text.as_bytes() == format.as_bytes() || text.eq_ignore_ascii_case(format))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::parse::parse_statement;

    fn lit_of(sql_value: &str, ty: ColumnType) -> Result<Value> {
        let sql = format!(r#"insert into "O"."T"("C") values ({sql_value})"#);
        let stmt = parse_statement(&sql).unwrap();
        convert(&stmt.assignments()[0].value, &ColumnDef::new("C", 1, ty))
    }

    #[test]
    fn hex_values_are_hex_digit() {
        for d in 0..=255u8 {
            match hex_digit(d) {
                Ok(v) => assert_eq!(HEX_VALUES[usize::from(d)], v, "{d}"),
                Err(_) => assert!(HEX_VALUES[usize::from(d)] & 0x80 != 0, "{d}"),
            }
        }
    }

    #[test]
    fn leading_digits_reads_what_a_loop_reads() {
        let mut next = crate::test_support::xorshift(0x2545_f491_4f6c_dd1du64);
        let pool = b"0123456789'.-+/: aZ\x00\x7f\x80\xbf\xc3\xff\x2f\x3a";
        for round in 0..200_000 {
            let mut w = [0u8; 8];
            for (k, byte) in w.iter_mut().enumerate() {
                // mostly digits, so that long runs come up
                *byte = if k < round % 9 || !next().is_multiple_of(4) {
                    b'0' + (next() % 10) as u8
                } else {
                    pool[(next() % pool.len() as u64) as usize]
                };
            }
            let n = w.iter().take_while(|d| d.is_ascii_digit()).count();
            let v = w[..n]
                .iter()
                .fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
            assert_eq!(leading_digits(u64::from_le_bytes(w)), (v, n), "{w:?}");
        }
        for byte in 0..=255u8 {
            let mut w = *b"12345678";
            w[3] = byte;
            let n = if byte.is_ascii_digit() { 8 } else { 3 };
            let v = w[..n]
                .iter()
                .fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
            assert_eq!(leading_digits(u64::from_le_bytes(w)), (v, n), "{byte}");
        }
    }

    /// The direct reading of Oracle's plain spelling gives what the general reading gives, to
    /// the bit.
    #[test]
    fn plain_floats_read_as_the_general_path() {
        let mut texts: Vec<String> = [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1",
            "-3.25",
            "1.50000005E+010",
            "2.5E-300",
            "3.1415926535897931",
            "1e5",
            "1E+5",
            "1E-5",
            "1e",
            "1e+",
            "1.",
            ".5",
            "+7",
            "--1",
            "1.2.3",
            "1E22",
            "1E23",
            "9007199254740993",
            "9007199254740992",
            "16777217",
            "16777216",
            "16777217E1",
            "0.1",
            "0.30000000000000004",
            "123456789012345678901234",
            "0.000000000000000000000000000001",
            "1E99999",
            "1E-99999",
            "1E0400",
            "1E123456789012",
            "-1e-0000000000001",
            " 1",
            "1 ",
            "Inf",
            "-inf",
            "nan",
            "1e5x",
            "",
            "-",
            "4.9E-324",
            "3.4028235E38",
            "3.4028236E38",
            "1.17549435E-38",
            "7E-46",
            "1.0000000596046448",
            "0.00000000001",
            "12345.6789E-3",
        ]
        .iter()
        .map(|t| (*t).to_owned())
        .collect();
        let mut next = crate::test_support::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..20_000 {
            let digits = (next() % 10_u64.pow(1 + (next() % 19) as u32)).to_string();
            let point = (next() as usize) % (digits.len() + 1);
            let mut t = String::new();
            if next().is_multiple_of(2) {
                t.push('-');
            }
            t.push_str(&digits[..point.max(1).min(digits.len())]);
            if point > 0 && point < digits.len() {
                t.push('.');
                t.push_str(&digits[point..]);
            }
            if next().is_multiple_of(2) {
                t.push_str(&format!("E{}", next() as i64 % 60 - 30));
            }
            texts.push(t);
        }
        // floats' midpoints (and their neighbours) written as integers: the double is then
        // exact and lands on the boundary between two floats
        for shift in 0..14 {
            for odd in [1u64, 3, 5, 0x00ff_ffff, 0x0155_5555] {
                let midpoint = ((1u64 << 24) + odd) << shift;
                for n in [midpoint - 1, midpoint, midpoint + 1] {
                    texts.push(n.to_string());
                    texts.push(format!("{n}E-3"));
                    texts.push(format!("-{n}E2"));
                }
            }
        }
        // large floats' midpoints approached by a multiple of 10^k, near enough that the double
        // nearest to it is the midpoint itself: rounding twice would then round the tie
        for shift in 30..48 {
            for odd in [1u64, 3, 5, 7, 9, 11, 13, 15] {
                let midpoint = u128::from((1u64 << 24) + odd) << shift;
                for k in 1..=8u32 {
                    let p = 10u128.pow(k);
                    for m in [midpoint / p, midpoint / p + 1] {
                        texts.push(format!("{m}E{k}"));
                    }
                }
            }
        }
        // doubles' midpoints and their neighbours as integers of up to 19 digits: the ties
        // rounded to even, and what is just above or below them
        for shift in 0..12 {
            for odd in [1u64, 3, 5, 7, 0x000f_ffff_ffff_ffff] {
                let midpoint = ((1u64 << 53) + odd) << shift;
                for n in [midpoint - 1, midpoint, midpoint + 1] {
                    let text = n.to_string();
                    texts.push(format!("{}.{}E{}", &text[..1], &text[1..], text.len() - 1));
                    texts.push(text);
                }
            }
        }
        // seventeen to nineteen digits, as a double's shortest spelling has, at every power
        // of ten the integer reading takes and a few past it
        for _ in 0..20_000 {
            let digits = 17 + next() % 3;
            let low = 10u64.pow(digits as u32 - 1);
            let value = low + next() % (9 * low);
            let text = value.to_string();
            let exponent = next() as i64 % 70 - 35;
            texts.push(format!("-{}.{}E{exponent:+04}", &text[..1], &text[1..]));
        }
        // nine digits, as Oracle writes a BINARY_FLOAT, at every exponent the double reaches
        for _ in 0..20_000 {
            let digits = 100_000_000 + next() % 900_000_000;
            let exponent = next() as i64 % 50 - 25;
            texts.push(format!(
                "{}.{:08}E{exponent:+04}",
                digits / 100_000_000,
                digits % 100_000_000
            ));
        }
        for t in &texts {
            for double in [false, true] {
                assert_eq!(
                    format!("{:?}", float(t, double)),
                    format!("{:?}", float_general(t, double)),
                    "{t}"
                );
                let bits = |v: Result<Value>| match v {
                    Ok(Value::BinaryDouble(v)) => Some(v.to_bits()),
                    Ok(Value::BinaryFloat(v)) => Some(u64::from(v.to_bits())),
                    _ => None,
                };
                assert_eq!(
                    bits(float(t, double)),
                    bits(float_general(t, double)),
                    "{t}"
                );
            }
        }
    }

    #[test]
    fn unistr_and_surrogates() {
        assert_eq!(
            lit_of(r"UNISTR('nch\00E1r  ')", ColumnType::NChar),
            Ok(Value::Text("nchár  ".into()))
        );
        assert_eq!(
            lit_of(r"UNISTR('\d83d\de00')", ColumnType::NVarchar2),
            Ok(Value::Text("😀".into()))
        );
        assert_eq!(
            lit_of(
                r"UNISTR('\d83d') || UNISTR('\de00x')",
                ColumnType::NVarchar2
            ),
            Ok(Value::Text("😀x".into()))
        );
        assert_eq!(
            lit_of(r"UNISTR('a\\b''c')", ColumnType::NVarchar2),
            Ok(Value::Text(r"a\b'c".into()))
        );
        assert!(lit_of(r"UNISTR('\d83d')", ColumnType::NVarchar2).is_err());
        assert!(lit_of(r"UNISTR('\de00')", ColumnType::NVarchar2).is_err());
        assert!(lit_of(r"UNISTR('\zz00')", ColumnType::NVarchar2).is_err());
    }

    /// The one-pass reader's UNISTR gives `unistr`'s text, and fails where it fails, on texts
    /// made of escapes (good, bad, short, surrogates), backslashes, quotes and plain parts.
    #[test]
    fn plain_unistr_agrees_with_unistr() {
        let pieces = [
            r"\00e9", r"\00E9", r"\d83d", r"\de00", r"\dbff", r"\dfff", r"\\", r"\", r"\0", r"\00",
            r"\zz00", r"\00g0", r"\é000", "''", "a", "smile ", "é", "x y", "0",
        ];
        let mut next = crate::test_support::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut decoded = 0;
        for _ in 0..100_000 {
            let n = next() % 7;
            let text: String = (0..n)
                .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                .collect();
            let quoted = format!("'{text}'");
            let (q, _) = crate::decode::parse::scan_quoted(&quoted, 0).unwrap();
            let plain = super::plain_unistr(&q);
            assert_eq!(plain, unistr(&q).ok(), "{text}");
            decoded += usize::from(plain.is_some());
        }
        // both outcomes come up often
        assert!((10_000..90_000).contains(&decoded), "{decoded}");
    }

    #[test]
    fn small_decimals_agree_with_decimal_parse() {
        for text in [
            "0",
            "-0",
            "1",
            "-42.5",
            "-42.50",
            "100",
            "123456789012345678",
            "0.000123",
            "10.10",
            "7.",
            "00012.3400",
            "-0.0",
            "999999999999999999",
            "99999999999999999.9",
        ] {
            assert_eq!(
                small_decimal(text).map(Ok),
                Some(Decimal::parse(text)).filter(|_| text != "7."),
                "{text}"
            );
        }
        for text in [
            "",
            "-",
            ".5",
            "+1",
            "1e5",
            "1234567890123456789",
            "1.2.3",
            "0x1",
            "12.",
            "1.",
            "-",
            "-.5",
            "1..2",
            "1.2a",
            "1a.2",
            "9999999999999999999",
            "99999999999999999.99",
            "1 ",
        ] {
            assert_eq!(small_decimal(text), None, "{text}");
        }
    }

    #[test]
    fn temporal_function_is_one_of_temporal_functions() {
        let names = [
            "TO_DATE",
            "TO_TIMESTAMP",
            "TO_TIMESTAMP_TZ",
            "TO_YMINTERVAL",
            "TO_DSINTERVAL",
            "to_date",
            "HEXTORAW",
            "",
        ];
        for ty in [
            ColumnType::Date,
            ColumnType::Timestamp,
            ColumnType::TimestampTz,
            ColumnType::TimestampLtz,
            ColumnType::IntervalYm,
            ColumnType::IntervalDs,
            ColumnType::Number,
            ColumnType::Varchar2,
        ] {
            for name in names {
                let listed = temporal_functions(&ty).iter().copied().find(|f| *f == name);
                assert_eq!(temporal_function(&ty, name), listed, "{ty:?} {name}");
            }
        }
    }

    /// Read in place, a quoted NUMBER is what the quoted text gives to `small_decimal`.
    #[test]
    fn quoted_small_decimals_agree_with_small_decimal() {
        let texts = [
            "0",
            "-0",
            "1",
            "-42.5",
            "-42.50",
            "100",
            "123456789012345678",
            "1234567890123456789",
            "12345678901234567.8",
            "1234567890123456.78",
            "0.000123",
            "10.10",
            "7.",
            ".5",
            "-",
            "",
            "+1",
            "1e5",
            "1.2.3",
            "0x1",
            "1 ",
            "--1",
            "-1-",
            "1.-2",
            "00012.3400",
            "999999999999999999",
            "9999999999999999999",
        ];
        for text in texts {
            for tail in ["'", "',", "'' ", "''", "", "x'"] {
                let sql = format!("'{text}{tail}");
                let b = sql.as_bytes();
                let expected = crate::decode::parse::scan_quoted(&sql, 0).and_then(|(q, end)| {
                    if q.has_doubled_quote() {
                        return None;
                    }
                    small_decimal(q.raw()).map(|v| (v, end))
                });
                let read = quoted_small_decimal(b, 0);
                // reading in place may decline what small_decimal takes (never the reverse)
                if let Some(read) = read {
                    assert_eq!(Some(read), expected, "{sql}");
                } else {
                    assert!(expected.is_none() || !tail.starts_with('\''), "{sql}");
                }
            }
        }
    }

    /// `check_literal` refuses a function's literal exactly where converting it for the type
    /// its function is written for refuses it.
    #[test]
    fn check_literal_agrees_with_the_functions_own_type() {
        let texts = [
            "HEXTORAW('00ff')",
            "HEXTORAW('0ff')",
            "HEXTORAW('0g')",
            "HEXTORAW('00') || HEXTORAW('f')",
            r"UNISTR('\00e9')",
            r"UNISTR('\00e')",
            r"UNISTR('\d83d')",
            r"UNISTR('\d83d') || UNISTR('\de00')",
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('-2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('-2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('2026-02-28 13:45:59.5', 'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('2026-02-29 13:45:59')",
            "TO_DATE('2026-02-28 13:45:59', 'DD-MON-RR')",
            "TO_TIMESTAMP('2026-02-28 13:45:59.123456789')",
            "TO_TIMESTAMP('2026-02-28 13:45:59.1234567890')",
            "TO_TIMESTAMP('+2026-02-28 13:45:59')",
            "TO_YMINTERVAL('+0001-11')",
            "TO_YMINTERVAL('+0001-12')",
            "TO_DSINTERVAL('+1 23:59:59.999999999')",
            "TO_DSINTERVAL('+1 24:00:00')",
        ];
        for text in texts {
            let sql = format!(r#"insert into "O"."T"("C") values ({text})"#);
            let stmt = parse_statement(&sql).unwrap();
            let literal = stmt.assignments()[0].value;
            let ty = match text.split('(').next().unwrap() {
                "HEXTORAW" => ColumnType::Raw,
                "UNISTR" => ColumnType::NVarchar2,
                "TO_DATE" => ColumnType::Date,
                "TO_TIMESTAMP" => ColumnType::Timestamp,
                "TO_YMINTERVAL" => ColumnType::IntervalYm,
                _ => ColumnType::IntervalDs,
            };
            let converted = convert(&literal, &ColumnDef::new("C", 1, ty));
            assert_eq!(
                check_literal(&literal).is_ok(),
                converted.is_ok(),
                "{text}: {converted:?}"
            );
        }
    }

    #[test]
    fn binary_and_floats() {
        assert_eq!(
            lit_of("HEXTORAW('deadbeef00ff')", ColumnType::Raw),
            Ok(Value::Raw(vec![0xde, 0xad, 0xbe, 0xef, 0, 0xff]))
        );
        assert_eq!(
            lit_of("'1.50000005E+010'", ColumnType::BinaryFloat),
            Ok(Value::BinaryFloat(
                "1.50000005E+010".parse::<f32>().unwrap()
            ))
        );
        assert_eq!(
            lit_of("'0'", ColumnType::BinaryDouble),
            Ok(Value::BinaryDouble(0.0))
        );
        assert_eq!(
            lit_of("'-Inf'", ColumnType::BinaryDouble),
            Ok(Value::BinaryDouble(f64::NEG_INFINITY))
        );
        assert_eq!(
            lit_of("HEXTORAW('c229')", ColumnType::Number),
            Err(ConvertError::RawForTypedColumn)
        );
        assert!(lit_of("'infinity'", ColumnType::Number).is_err());
    }
}
