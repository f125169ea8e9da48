//! Oracle column values as the connector carries them from the decoder to the records.
//!
//! NUMBER is an exact decimal and never passes through a float; character values keep their
//! CHAR blank padding; temporal values keep Oracle's fields (no time zone arithmetic happens
//! here), so the record layer decides how to render them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a value could not be built from its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("not a decimal number")]
    NotANumber,
    #[error("a decimal with more than 38 significant digits")]
    TooManyDigits,
    #[error("exponent out of range")]
    ExponentOutOfRange,
    #[error("not a valid date or time")]
    InvalidDateTime,
}

/// An exact decimal: `unscaled × 10^(−scale)`, normalised so that `unscaled` has no trailing
/// zero digit (`-42.50` and `-42.5` are the same value, and compare equal).
///
/// 38 significant digits fit, which is Oracle's NUMBER precision; the exponent covers
/// NUMBER's range (10^-130 .. 10^126).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Decimal {
    /// `unscaled` in two 64-bit halves (low, then high with the sign): an `i128` field would
    /// make the type 16-byte aligned and 32 bytes long, and every [`Value`] with it.
    lo: u64,
    hi: i64,
    scale: i16,
}

const MAX_DIGITS: usize = 38;

impl Decimal {
    pub const ZERO: Decimal = Decimal {
        lo: 0,
        hi: 0,
        scale: 0,
    };

    /// `unscaled × 10^(−scale)`, normalised. Inline: the decoder builds one per NUMBER value,
    /// and a call across the crate boundary cost as much as the normalising.
    #[inline]
    pub fn new(unscaled: i128, scale: i16) -> Decimal {
        normalise(unscaled, scale as i32).unwrap_or(Decimal::ZERO)
    }

    /// `unscaled × 10^(−scale)`, normalised; an error when it has more than 38 significant
    /// digits or an exponent beyond NUMBER's range (as [`Decimal::parse`] says of its text).
    #[inline]
    pub fn try_new(unscaled: i128, scale: i32) -> Result<Decimal, ValueError> {
        normalise(unscaled, scale)
    }

    /// [`Decimal::new`] for an `unscaled` that fits 64 bits (the common case: a NUMBER of up
    /// to 18 digits), the same value without the 128-bit steps.
    #[inline]
    pub fn from_i64(mut unscaled: i64, scale: i16) -> Decimal {
        if unscaled == 0 {
            return Decimal::ZERO;
        }
        let mut scale = i32::from(scale);
        while unscaled % 10 == 0 {
            unscaled /= 10;
            scale -= 1;
        }
        if !(-170..=170).contains(&scale) {
            return Decimal::ZERO;
        }
        Decimal {
            lo: unscaled as u64,
            hi: unscaled >> 63,
            scale: scale as i16,
        }
    }

    #[inline]
    pub fn unscaled(self) -> i128 {
        (i128::from(self.hi) << 64) | i128::from(self.lo)
    }

    /// Digits after the decimal point; negative for values with trailing integer zeros
    /// (`1E+10` is unscaled 1, scale −10).
    pub fn scale(self) -> i16 {
        self.scale
    }

    pub fn is_zero(self) -> bool {
        self.lo == 0 && self.hi == 0
    }

    /// Reads Oracle's text for a number: `-42.5`, `.5`, `1.5E+10`, `1.0E-130`, `+7`.
    pub fn parse(text: &str) -> Result<Decimal, ValueError> {
        let bytes = text.as_bytes();
        let mut i = 0;
        let negative = match bytes.first() {
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
        let mut unscaled: i128 = 0;
        let mut scale: i32 = 0;
        // zeros after the first significant digit, multiplied in only when another
        // significant digit follows, so `1E+45` written out in full still fits
        let mut pending_zeros: u32 = 0;
        let mut seen_digit = false;
        let mut seen_point = false;
        while i < bytes.len() {
            let b = bytes[i];
            match b {
                b'0'..=b'9' => {
                    seen_digit = true;
                    let d = (b - b'0') as i128;
                    if seen_point {
                        scale += 1;
                    }
                    if d == 0 {
                        if unscaled != 0 {
                            pending_zeros += 1;
                        }
                    } else {
                        unscaled = 10i128
                            .checked_pow(pending_zeros + 1)
                            .and_then(|p| unscaled.checked_mul(p))
                            .and_then(|u| u.checked_add(d))
                            .ok_or(ValueError::TooManyDigits)?;
                        pending_zeros = 0;
                    }
                    if scale > 200 || pending_zeros > 200 {
                        return Err(ValueError::ExponentOutOfRange);
                    }
                }
                b'.' if !seen_point => seen_point = true,
                b'e' | b'E' => break,
                _ => return Err(ValueError::NotANumber),
            }
            i += 1;
        }
        scale -= pending_zeros as i32;
        if !seen_digit {
            return Err(ValueError::NotANumber);
        }
        if i < bytes.len() {
            // exponent
            i += 1;
            let exp_text = &text[i..];
            let exp_digits = exp_text.strip_prefix(['+', '-']).unwrap_or(exp_text);
            if exp_digits.is_empty()
                || exp_digits.len() > 4
                || !exp_digits.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(ValueError::NotANumber);
            }
            let exp: i32 = exp_text.parse().map_err(|_| ValueError::NotANumber)?;
            scale -= exp;
        }
        if negative {
            unscaled = -unscaled;
        }
        normalise(unscaled, scale)
    }

    /// The plain decimal text, without exponent: `-42.5`, `15000000000`, `0.001`.
    pub fn to_plain_string(self) -> String {
        self.to_string()
    }

    /// The value at a given scale, when it is exact there (`1.5` at scale 2 is `150`).
    pub fn unscaled_at(self, scale: i16) -> Option<i128> {
        let diff = scale as i32 - self.scale as i32;
        if diff >= 0 {
            10i128
                .checked_pow(diff as u32)
                .and_then(|p| self.unscaled().checked_mul(p))
        } else {
            let p = 10i128.checked_pow((-diff) as u32)?;
            let unscaled = self.unscaled();
            (unscaled % p == 0).then(|| unscaled / p)
        }
    }

    /// The nearest `f64`, for consumers that asked for `decimal.mode=double`.
    pub fn to_f64(self) -> f64 {
        self.to_string().parse().unwrap_or(f64::NAN)
    }
}

#[inline]
fn normalise(mut unscaled: i128, mut scale: i32) -> Result<Decimal, ValueError> {
    if unscaled == 0 {
        return Ok(Decimal::ZERO);
    }
    if let Ok(mut small) = i64::try_from(unscaled) {
        // most values fit 64 bits, where dividing by ten is not a library call
        while small % 10 == 0 {
            small /= 10;
            scale -= 1;
        }
        unscaled = i128::from(small);
    } else {
        while unscaled % 10 == 0 {
            unscaled /= 10;
            scale -= 1;
        }
        if unscaled.unsigned_abs() >= 10u128.pow(MAX_DIGITS as u32) {
            return Err(ValueError::TooManyDigits);
        }
    }
    // NUMBER covers 1E-130 ..< 1E126; allow the digits' own width around it
    if !(-170..=170).contains(&scale) {
        return Err(ValueError::ExponentOutOfRange);
    }
    Ok(Decimal {
        lo: unscaled as u64,
        hi: (unscaled >> 64) as i64,
        scale: scale as i16,
    })
}

/// As `unscaled` and `scale`, the form the derived `Debug` of the `i128` field gave.
impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decimal")
            .field("unscaled", &self.unscaled())
            .field("scale", &self.scale)
            .finish()
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unscaled = self.unscaled();
        let digits = unscaled.unsigned_abs().to_string();
        if unscaled < 0 {
            f.write_str("-")?;
        }
        if self.scale <= 0 {
            f.write_str(&digits)?;
            for _ in 0..(-self.scale) {
                f.write_str("0")?;
            }
            return Ok(());
        }
        let scale = self.scale as usize;
        if digits.len() > scale {
            let (int, frac) = digits.split_at(digits.len() - scale);
            write!(f, "{int}.{frac}")
        } else {
            f.write_str("0.")?;
            for _ in 0..(scale - digits.len()) {
                f.write_str("0")?;
            }
            f.write_str(&digits)
        }
    }
}

impl Serialize for Decimal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Decimal {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Decimal::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// An INTERVAL DAY TO SECOND in nanoseconds (an `i128`: `DAY(9)` overflows 64 bits), kept in
/// two 64-bit halves like [`Decimal`]'s: an `i128` field would make [`Value`] 16-byte aligned
/// and every image column ([`crate::change::ColumnValue`]) 48 bytes instead of 40. `Debug`,
/// `Serialize` and `Deserialize` are those of the `i128`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IntervalNanos {
    lo: u64,
    hi: i64,
}

impl IntervalNanos {
    #[inline]
    pub const fn new(nanos: i128) -> IntervalNanos {
        IntervalNanos {
            lo: nanos as u64,
            hi: (nanos >> 64) as i64,
        }
    }

    /// The nanoseconds.
    #[inline]
    pub const fn get(self) -> i128 {
        ((self.hi as i128) << 64) | self.lo as i128
    }
}

impl From<i128> for IntervalNanos {
    #[inline]
    fn from(nanos: i128) -> IntervalNanos {
        IntervalNanos::new(nanos)
    }
}

impl From<IntervalNanos> for i128 {
    #[inline]
    fn from(nanos: IntervalNanos) -> i128 {
        nanos.get()
    }
}

impl fmt::Debug for IntervalNanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl Serialize for IntervalNanos {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de> Deserialize<'de> for IntervalNanos {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        i128::deserialize(d).map(IntervalNanos::new)
    }
}

/// A calendar date and time of day as Oracle stores it, without time zone.
/// Years run from −4712 to 9999; `nanos` is the fraction of the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OracleDateTime {
    pub year: i16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub nanos: u32,
}

impl OracleDateTime {
    /// A checked date and time; `None` when a field is out of range.
    #[inline]
    pub fn new(
        year: i16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        nanos: u32,
    ) -> Option<OracleDateTime> {
        let valid = (-4712..=9999).contains(&year)
            && year != 0
            && (1..=12).contains(&month)
            && day >= 1
            && day <= days_in_month(year, month)
            && hour < 24
            && minute < 60
            && second < 60
            && nanos < 1_000_000_000;
        valid.then_some(OracleDateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            nanos,
        })
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar. Oracle has no year 0: its
    /// year −1 (1 BC) is astronomical year 0.
    pub fn days_since_epoch(self) -> i64 {
        let year = astronomical_year(self.year);
        // Howard Hinnant's days_from_civil
        let y = year - i64::from(self.month <= 2);
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let m = self.month as i64;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + self.day as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// Nanoseconds since 1970-01-01T00:00:00, reading the wall clock as UTC.
    pub fn epoch_nanos(self) -> i128 {
        let secs = self.days_since_epoch() as i128 * 86_400
            + self.hour as i128 * 3600
            + self.minute as i128 * 60
            + self.second as i128;
        secs * 1_000_000_000 + self.nanos as i128
    }
}

/// ISO-8601 local date-time, with the fraction only when non-zero.
impl fmt::Display for OracleDateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.year < 0 {
            write!(f, "-{:04}", -(self.year as i32))?;
        } else {
            write!(f, "{:04}", self.year)?;
        }
        write!(
            f,
            "-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.month, self.day, self.hour, self.minute, self.second
        )?;
        if self.nanos != 0 {
            write!(f, ".{:09}", self.nanos)?;
        }
        Ok(())
    }
}

/// Oracle's year (no year 0) as an astronomical year number.
fn astronomical_year(year: i16) -> i64 {
    if year < 0 {
        i64::from(year) + 1
    } else {
        i64::from(year)
    }
}

#[inline]
fn days_in_month(year: i16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 => {
            // leap years counted on the astronomical scale: 1 BC (year 0) was a leap year
            let y = astronomical_year(year);
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
        _ => 0,
    }
}

/// The zone of a TIMESTAMP WITH TIME ZONE value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TimeZone {
    /// `+05:30` as minutes east of UTC.
    Offset(i16),
    /// A region name such as `Europe/Paris`, kept as written (a `Box<str>`, not a `String`,
    /// so that a [`Value`] stays 32 bytes).
    Region(Box<str>),
}

impl fmt::Display for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeZone::Offset(minutes) => {
                let sign = if *minutes < 0 { '-' } else { '+' };
                let m = minutes.unsigned_abs();
                write!(f, "{sign}{:02}:{:02}", m / 60, m % 60)
            }
            TimeZone::Region(name) => f.write_str(name),
        }
    }
}

/// One column value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Value {
    Null,
    /// NUMBER and FLOAT, exact.
    Number(Decimal),
    BinaryFloat(f32),
    BinaryDouble(f64),
    /// CHAR (padding kept), VARCHAR2, NCHAR, NVARCHAR2, LONG, CLOB, NCLOB text.
    Text(String),
    /// RAW, LONG RAW, BLOB bytes.
    Raw(Vec<u8>),
    Date(OracleDateTime),
    Timestamp(OracleDateTime),
    TimestampTz(OracleDateTime, TimeZone),
    /// TIMESTAMP WITH LOCAL TIME ZONE, as rendered in the session (no offset in SQL_REDO).
    TimestampLtz(OracleDateTime),
    /// INTERVAL YEAR TO MONTH, in months.
    IntervalYm(i64),
    /// INTERVAL DAY TO SECOND, in nanoseconds.
    IntervalDs(IntervalNanos),
    RowId(String),
    /// `EMPTY_CLOB()` / `EMPTY_BLOB()`: a LOB locator whose content comes in later rows.
    EmptyLob,
    /// A value the redo does not carry (a LOB not in this change, a before image of a LOB).
    Unavailable,
    /// LogMiner's `Unsupported Type` literal.
    Unsupported,
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn from_i64_is_new() {
        let mut values = vec![0, 1, -1, 10, -10, 1200, i64::MAX, i64::MIN, i64::MIN + 1];
        values.extend((0..19).map(|p| 10i64.pow(p)));
        values.extend((0..19).map(|p| -(10i64.pow(p)) * 7));
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push((x as i64) >> (x % 60));
        }
        for v in values {
            for scale in [
                0,
                1,
                -1,
                18,
                -18,
                130,
                -130,
                169,
                170,
                171,
                -171,
                i16::MAX,
                i16::MIN,
            ] {
                assert_eq!(
                    Decimal::from_i64(v, scale),
                    Decimal::new(i128::from(v), scale),
                    "{v} {scale}"
                );
            }
        }
    }

    #[test]
    fn decimals_read_exactly() {
        for (text, plain) in [
            ("-42.5", "-42.5"),
            ("-42.50", "-42.5"),
            ("0", "0"),
            ("-0", "0"),
            (".5", "0.5"),
            ("+7", "7"),
            ("1.5E+10", "15000000000"),
            ("1.50000005E+010", "15000000500"),
            ("1E-3", "0.001"),
            ("0.000123", "0.000123"),
            ("100", "100"),
            (
                "12345678901234567890123456789012345678",
                "12345678901234567890123456789012345678",
            ),
            ("0.1", "0.1"),
        ] {
            assert_eq!(Decimal::parse(text).unwrap().to_string(), plain, "{text}");
        }
        // the classic float trap stays exact
        assert_eq!(Decimal::parse("0.1").unwrap(), Decimal::new(1, 1));
        assert_eq!(Decimal::parse("1.0E+125").unwrap(), Decimal::new(1, -125));
        assert_eq!(Decimal::parse("1E-130").unwrap(), Decimal::new(1, 130));
        for bad in [
            "", "-", ".", "1.2.3", "1e", "1e+", "abc", "1 2", "--1", "1e99999", "NaN",
        ] {
            assert!(Decimal::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Decimal::parse("123456789012345678901234567890123456789"),
            Err(ValueError::TooManyDigits)
        );
        assert_eq!(Decimal::parse("1.5").unwrap().unscaled_at(2), Some(150));
        assert_eq!(Decimal::parse("1.55").unwrap().unscaled_at(1), None);
    }

    #[test]
    fn datetimes() {
        assert!(OracleDateTime::new(2024, 2, 29, 0, 0, 0, 0).is_some());
        assert!(OracleDateTime::new(2023, 2, 29, 0, 0, 0, 0).is_none());
        assert!(OracleDateTime::new(2023, 13, 1, 0, 0, 0, 0).is_none());
        let d = OracleDateTime::new(1970, 1, 2, 0, 0, 1, 5).unwrap();
        assert_eq!(d.epoch_nanos(), 86_401_000_000_005);
        assert_eq!(d.to_string(), "1970-01-02T00:00:01.000000005");
        let neg = OracleDateTime::new(-4712, 1, 1, 0, 0, 0, 0).unwrap();
        assert_eq!(neg.to_string(), "-4712-01-01T00:00:00");
        // no year 0: 31 Dec 1 BC is the day before 1 Jan AD 1
        let ad1 = OracleDateTime::new(1, 1, 1, 0, 0, 0, 0).unwrap();
        let bc1 = OracleDateTime::new(-1, 12, 31, 0, 0, 0, 0).unwrap();
        assert_eq!(ad1.days_since_epoch() - bc1.days_since_epoch(), 1);
        assert_eq!(ad1.days_since_epoch(), -719_162);
        // 1 BC was a leap year on the proleptic Gregorian scale, 2 BC was not
        assert!(OracleDateTime::new(-1, 2, 29, 0, 0, 0, 0).is_some());
        assert!(OracleDateTime::new(-2, 2, 29, 0, 0, 0, 0).is_none());
        assert_eq!(TimeZone::Offset(330).to_string(), "+05:30");
        assert_eq!(TimeZone::Offset(-90).to_string(), "-01:30");
    }

    proptest! {
        #[test]
        fn decimal_text_round_trips(unscaled in -(10i128.pow(37))..10i128.pow(37), scale in -60i16..60) {
            let d = Decimal::new(unscaled, scale);
            prop_assert_eq!(Decimal::parse(&d.to_string()).unwrap(), d);
        }

        #[test]
        fn decimal_parse_never_panics(text in "[-+0-9.eE]{0,50}") {
            let _ = Decimal::parse(&text);
        }

        #[test]
        fn decimal_agrees_with_integers(n: i64) {
            prop_assert_eq!(Decimal::parse(&n.to_string()).unwrap().unscaled_at(0), Some(n as i128));
        }
    }
}
