//! The orders a snapshot read returns rows in, as Oracle sorts them: ROWIDs in physical order
//! (data object, file, block, row) and values as `ORDER BY` compares them under
//! `NLS_SORT=BINARY`.
//!
//! An extended ROWID is 18 characters of base 64 (`A-Z a-z 0-9 + /`, in that order), six for
//! the data object, three for the file, six for the block and three for the row: `+` and `/`
//! sort last as digits but first as ASCII text, and `a` above `Z`, so ROWID text order is not
//! the database's order. [`RowPos`] is the decoded position, which is.

use std::cmp::Ordering;

use cdc_core::{Decimal, TimeZone, Value};

/// The base-64 digits of a ROWID, in digit order.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Where a row lives: a ROWID decoded. Ordered as Oracle orders ROWIDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct RowPos {
    pub(crate) object: u32,
    pub(crate) file: u32,
    pub(crate) block: u32,
    pub(crate) row: u32,
}

impl RowPos {
    /// Past every real position: a key bound's rows all sort before it.
    pub(crate) const MAX: RowPos = RowPos {
        object: u32::MAX,
        file: u32::MAX,
        block: u32::MAX,
        row: u32::MAX,
    };

    /// Decodes an 18-character extended ROWID; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<RowPos> {
        let bytes = text.as_bytes();
        if bytes.len() != 18 {
            return None;
        }
        let field = |range: std::ops::Range<usize>| -> Option<u32> {
            let mut value: u64 = 0;
            for b in bytes.get(range)? {
                let digit = ALPHABET.iter().position(|a| a == b)?;
                value = value * 64 + digit as u64;
            }
            u32::try_from(value).ok()
        };
        Some(RowPos {
            object: field(0..6)?,
            file: field(6..9)?,
            block: field(9..15)?,
            row: field(15..18)?,
        })
    }

    /// The ROWID text of the position.
    pub(crate) fn text(self) -> String {
        crate::sim::render::rowid(self.object, self.file, self.block, self.row)
    }
}

/// How `ORDER BY` compares two values of a column: numbers numerically, text by the bytes of
/// its character set (AL32UTF8: UTF-8; the national AL16UTF16: UTF-16 code units, where
/// characters beyond the BMP sort below U+E000..U+FFFF), RAW by bytes, dates and timestamps
/// chronologically (WITH TIME ZONE by their UTC instant), intervals by length. NULL sorts
/// last, as an ascending ORDER BY puts it. Values of different kinds (which one column does
/// not hold) are ordered by kind, so the order stays total.
pub(crate) fn compare(a: &Value, b: &Value, national: bool) -> Ordering {
    use Value as V;
    match (a, b) {
        (V::Null, V::Null) => Ordering::Equal,
        (V::Null, _) => Ordering::Greater,
        (_, V::Null) => Ordering::Less,
        (V::Number(x), V::Number(y)) => compare_decimals(*x, *y),
        (V::Text(x), V::Text(y)) if national => x.encode_utf16().cmp(y.encode_utf16()),
        (V::Text(x), V::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (V::Raw(x), V::Raw(y)) => x.cmp(y),
        (
            V::Date(x) | V::Timestamp(x) | V::TimestampLtz(x),
            V::Date(y) | V::Timestamp(y) | V::TimestampLtz(y),
        ) => x.cmp(y),
        (V::TimestampTz(x, zx), V::TimestampTz(y, zy)) => utc_nanos(x, zx).cmp(&utc_nanos(y, zy)),
        (V::IntervalYm(x), V::IntervalYm(y)) => x.cmp(y),
        (V::IntervalDs(x), V::IntervalDs(y)) => i128::from(*x).cmp(&i128::from(*y)),
        (V::RowId(x), V::RowId(y)) => match (RowPos::parse(x), RowPos::parse(y)) {
            (Some(px), Some(py)) => px.cmp(&py),
            _ => x.cmp(y),
        },
        _ => match (as_float(a), as_float(b)) {
            // NUMBER against BINARY_DOUBLE/FLOAT: Oracle converts to the binary type
            (Some(x), Some(y)) => compare_floats(x, y),
            _ => kind(a).cmp(&kind(b)),
        },
    }
}

/// Two exact decimals by value (`unscaled × 10^-scale`, whatever their scales).
pub(crate) fn compare_decimals(a: Decimal, b: Decimal) -> Ordering {
    let (ua, ub) = (a.unscaled(), b.unscaled());
    let by_sign = ua.signum().cmp(&ub.signum());
    if by_sign != Ordering::Equal || ua == 0 {
        return by_sign;
    }
    let magnitude = compare_magnitudes(ua.unsigned_abs(), a.scale(), ub.unsigned_abs(), b.scale());
    if ua > 0 {
        magnitude
    } else {
        magnitude.reverse()
    }
}

/// `ma × 10^-sa` against `mb × 10^-sb`, both mantissas non-zero with at most 38 digits.
fn compare_magnitudes(ma: u128, sa: i16, mb: u128, sb: i16) -> Ordering {
    let (da, db) = (digits(ma), digits(mb));
    // the power of ten of each leading digit decides, unless it is the same
    let lead_a = i32::from(da) - 1 - i32::from(sa);
    let lead_b = i32::from(db) - 1 - i32::from(sb);
    if lead_a != lead_b {
        return lead_a.cmp(&lead_b);
    }
    // same leading power: the digits, left-aligned (38 digits fit in a u128)
    let widen = |m: u128, by: u16| m.checked_mul(10u128.pow(u32::from(by)));
    let ordered = if da < db {
        widen(ma, db - da).map(|wa| wa.cmp(&mb))
    } else {
        widen(mb, da - db).map(|wb| ma.cmp(&wb))
    };
    ordered.unwrap_or(Ordering::Equal)
}

fn digits(mut m: u128) -> u16 {
    let mut n = 0;
    while m > 0 {
        m /= 10;
        n += 1;
    }
    n
}

/// As BINARY_DOUBLE orders: -0 equals 0, NaN above every number.
fn compare_floats(x: f64, y: f64) -> Ordering {
    x.partial_cmp(&y)
        .unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
}

fn as_float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(d) => Some(d.to_f64()),
        Value::BinaryDouble(f) => Some(*f),
        Value::BinaryFloat(f) => Some(f64::from(*f)),
        _ => None,
    }
}

/// The instant of a TIMESTAMP WITH TIME ZONE. A region name is taken as UTC: the simulator
/// has no time zone file (the workload writes offsets only).
fn utc_nanos(t: &cdc_core::OracleDateTime, zone: &TimeZone) -> i128 {
    let offset_minutes = match zone {
        TimeZone::Offset(m) => i128::from(*m),
        TimeZone::Region(_) => 0,
    };
    t.epoch_nanos() - offset_minutes * 60 * 1_000_000_000
}

/// An order among kinds of values, for values one column never mixes.
fn kind(v: &Value) -> u8 {
    match v {
        Value::Number(_) | Value::BinaryFloat(_) | Value::BinaryDouble(_) => 0,
        Value::Text(_) => 1,
        Value::Raw(_) => 2,
        Value::Date(_) | Value::Timestamp(_) | Value::TimestampLtz(_) => 3,
        Value::TimestampTz(..) => 4,
        Value::IntervalYm(_) => 5,
        Value::IntervalDs(_) => 6,
        Value::RowId(_) => 7,
        Value::EmptyLob | Value::Unavailable | Value::Unsupported => 8,
        Value::Null => 9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::OracleDateTime;

    fn num(text: &str) -> Value {
        Value::Number(Decimal::parse(text).unwrap())
    }

    #[test]
    fn rowids_sort_by_position_not_text() {
        let low = crate::sim::render::rowid(72_001, 4, 300, 49);
        let high = crate::sim::render::rowid(72_001, 5, 300, 0);
        assert_eq!(RowPos::parse(&low).map(RowPos::text), Some(low.clone()));
        assert!(RowPos::parse(&low) < RowPos::parse(&high));
        // row 49 is digit "x" and row 62 is "+": text order says otherwise
        let r49 = crate::sim::render::rowid(72_001, 4, 300, 49);
        let r62 = crate::sim::render::rowid(72_001, 4, 300, 62);
        assert!(r62 < r49, "{r62} {r49}");
        assert!(RowPos::parse(&r49) < RowPos::parse(&r62));
        assert_eq!(RowPos::parse("AAAR3sAAEAAAACXAA"), None);
        assert_eq!(RowPos::parse("AAAR3sAAEAAAACXAA!"), None);
    }

    #[test]
    fn numbers_compare_by_value_across_scales() {
        let cases = [
            ("1", "2", Ordering::Less),
            ("10", "9.99", Ordering::Greater),
            ("-10", "-9.99", Ordering::Less),
            ("0.5", "0.50", Ordering::Equal),
            ("-0.001", "0", Ordering::Less),
            ("123456789012345678901234567890", "1.5E+29", Ordering::Less),
            ("1E-100", "1E-101", Ordering::Greater),
            (
                "99999999999999999999999999999999999999",
                "1E+38",
                Ordering::Less,
            ),
        ];
        for (a, b, want) in cases {
            assert_eq!(compare(&num(a), &num(b), false), want, "{a} vs {b}");
            assert_eq!(
                compare(&num(b), &num(a), false),
                want.reverse(),
                "{b} vs {a}"
            );
        }
        assert_eq!(
            compare(&num("2"), &Value::BinaryDouble(1.5), false),
            Ordering::Greater
        );
    }

    #[test]
    fn text_by_bytes_national_by_utf16_nulls_last() {
        let t = |s: &str| Value::Text(s.to_owned());
        assert_eq!(compare(&t("Z"), &t("a"), false), Ordering::Less);
        assert_eq!(compare(&t("ab"), &t("b"), false), Ordering::Less);
        // U+1F600 is F0.. in UTF-8 (above U+FFFD's EF..) but D83D.. in UTF-16 (below FFFD)
        assert_eq!(
            compare(&t("\u{1F600}"), &t("\u{FFFD}"), false),
            Ordering::Greater
        );
        assert_eq!(
            compare(&t("\u{1F600}"), &t("\u{FFFD}"), true),
            Ordering::Less
        );
        assert_eq!(compare(&Value::Null, &t("z"), false), Ordering::Greater);
        assert_eq!(
            compare(&Value::Raw(vec![1, 255]), &Value::Raw(vec![2]), false),
            Ordering::Less
        );
    }

    #[test]
    fn times_chronologically_with_zones_at_their_instant() {
        let at = |h| OracleDateTime::new(2026, 1, 5, h, 0, 0, 0).unwrap();
        assert_eq!(
            compare(&Value::Date(at(9)), &Value::Timestamp(at(10)), false),
            Ordering::Less
        );
        // 10:00 at +02:00 is 08:00 UTC, before 09:00 UTC
        let tz = |h, m| Value::TimestampTz(at(h), TimeZone::Offset(m));
        assert_eq!(compare(&tz(10, 120), &tz(9, 0), false), Ordering::Less);
        assert_eq!(compare(&tz(10, 60), &tz(9, 0), false), Ordering::Equal);
    }
}
