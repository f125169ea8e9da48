//! Oracle's internal (on-disk) formats of column values, as the `HEXTORAW('…')` literals of a
//! dictionary-mismatch row show them (`reference/logminer-facts.md` §3: STATUS 2, `"COL n"`
//! names). The first part of reading such rows (issue 25): given the column's type from the
//! schema version valid at the row's SCN, the bytes become the value a valid row would have
//! carried. Every format is checked against Oracle's documented `DUMP()` output in the tests
//! below, and against the simulator's encoder over each type's range in
//! `tests/decode_internal.rs`.
//!
//! ```text
//!   NUMBER, FLOAT      exponent byte, base-100 digits (+1; negative: 101 − d, then 102)
//!   BINARY_FLOAT/DOUBLE IEEE 754 big-endian, sign bit flipped (negative: every bit flipped)
//!   DATE               century+100, year+100, month, day, hour+1, minute+1, second+1
//!   TIMESTAMP          DATE's 7 bytes [+ nanoseconds, 4 bytes big-endian]
//!   … WITH TIME ZONE   the UTC time in 11 bytes, then hour+20 and minute+60 of the offset
//!   INTERVAL YM        years + 2^31 (4 bytes), months + 60
//!   INTERVAL DS        days + 2^31 (4 bytes), hours/minutes/seconds + 60, nanos + 2^31
//!   CHAR, VARCHAR2     the database character set; NCHAR, NVARCHAR2 the national one
//! ```

use cdc_core::{ColumnType, Decimal, IntervalNanos, OracleDateTime, TimeZone, Value};

use crate::decode::temporal::shift_minutes;

/// Why bytes could not be read as the column's internal format. The bytes themselves are
/// never part of the message: they are a column's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InternalFormatError {
    #[error("{ty}: {len} bytes is not a length of its internal format")]
    Length { ty: &'static str, len: usize },
    #[error("{ty}: {reason}")]
    Invalid {
        ty: &'static str,
        reason: &'static str,
    },
    /// A character set the connector does not read.
    #[error(
        "{ty} in character set {charset}, which the connector does not read (AL32UTF8, UTF8 and AL16UTF16 are read)"
    )]
    Charset { ty: &'static str, charset: String },
    /// A type whose internal format is not read (LOBs, ROWIDs, XMLTYPE, …).
    #[error("the internal format of {ty} is not read")]
    Unsupported { ty: String },
}

/// The character sets of the database (`NLS_CHARACTERSET`, `NLS_NCHAR_CHARACTERSET`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charsets {
    pub database: String,
    pub national: String,
}

impl Default for Charsets {
    /// AL32UTF8 and AL16UTF16, the defaults of a database created since 12.2.
    fn default() -> Self {
        Charsets {
            database: "AL32UTF8".to_owned(),
            national: "AL16UTF16".to_owned(),
        }
    }
}

type Result<T> = std::result::Result<T, InternalFormatError>;

fn invalid(ty: &'static str, reason: &'static str) -> InternalFormatError {
    InternalFormatError::Invalid { ty, reason }
}

/// The value of `bytes` in the internal format of a column of type `ty`.
pub fn decode_internal(ty: &ColumnType, bytes: &[u8], charsets: &Charsets) -> Result<Value> {
    match ty {
        ColumnType::Number | ColumnType::Float => number(bytes).map(Value::Number),
        ColumnType::BinaryFloat => {
            let raw: [u8; 4] = exact(bytes, "BINARY_FLOAT")?;
            let bits = u32::from_be_bytes(raw);
            let bits = if bits >> 31 == 1 {
                bits & !(1 << 31)
            } else {
                !bits
            };
            Ok(Value::BinaryFloat(f32::from_bits(bits)))
        }
        ColumnType::BinaryDouble => {
            let raw: [u8; 8] = exact(bytes, "BINARY_DOUBLE")?;
            let bits = u64::from_be_bytes(raw);
            let bits = if bits >> 63 == 1 {
                bits & !(1 << 63)
            } else {
                !bits
            };
            Ok(Value::BinaryDouble(f64::from_bits(bits)))
        }
        ColumnType::Date => {
            let raw: [u8; 7] = exact(bytes, "DATE")?;
            date(&raw, 0, "DATE").map(Value::Date)
        }
        ColumnType::Timestamp => timestamp(bytes, "TIMESTAMP").map(Value::Timestamp),
        ColumnType::TimestampLtz => {
            timestamp(bytes, "TIMESTAMP WITH LOCAL TIME ZONE").map(Value::TimestampLtz)
        }
        ColumnType::TimestampTz => timestamp_tz(bytes),
        ColumnType::IntervalYm => {
            let raw: [u8; 5] = exact(bytes, "INTERVAL YEAR TO MONTH")?;
            let years = i64::from(u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]])) - (1 << 31);
            let months = i64::from(raw[4]) - 60;
            if !(-11..=11).contains(&months) {
                return Err(invalid("INTERVAL YEAR TO MONTH", "months out of range"));
            }
            Ok(Value::IntervalYm(years * 12 + months))
        }
        ColumnType::IntervalDs => {
            const TY: &str = "INTERVAL DAY TO SECOND";
            let raw: [u8; 11] = exact(bytes, TY)?;
            let days = i128::from(u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]])) - (1 << 31);
            let hours = i128::from(raw[4]) - 60;
            let minutes = i128::from(raw[5]) - 60;
            let seconds = i128::from(raw[6]) - 60;
            let nanos =
                i128::from(u32::from_be_bytes([raw[7], raw[8], raw[9], raw[10]])) - (1 << 31);
            if hours.abs() > 23
                || minutes.abs() > 59
                || seconds.abs() > 59
                || nanos.abs() >= 1_000_000_000
            {
                return Err(invalid(TY, "a field out of range"));
            }
            let total =
                (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1_000_000_000 + nanos;
            Ok(Value::IntervalDs(IntervalNanos::new(total)))
        }
        ColumnType::Char | ColumnType::Varchar2 | ColumnType::Long => {
            text(bytes, &charsets.database, "CHAR/VARCHAR2").map(Value::Text)
        }
        ColumnType::NChar | ColumnType::NVarchar2 => {
            text(bytes, &charsets.national, "NCHAR/NVARCHAR2").map(Value::Text)
        }
        ColumnType::Raw | ColumnType::LongRaw => Ok(Value::Raw(bytes.to_vec())),
        other => Err(InternalFormatError::Unsupported {
            ty: format!("{other:?}"),
        }),
    }
}

fn exact<const N: usize>(bytes: &[u8], ty: &'static str) -> Result<[u8; N]> {
    bytes.try_into().map_err(|_| InternalFormatError::Length {
        ty,
        len: bytes.len(),
    })
}

/// NUMBER: `80` is zero; a positive number has an exponent byte above `80` (193 + the
/// base-100 exponent) and digits + 1; a negative one an exponent byte below (62 − the
/// exponent), digits as 101 − d and, when it has fewer than 20 digits, the terminator 102.
fn number(bytes: &[u8]) -> Result<Decimal> {
    const TY: &str = "NUMBER";
    let (&head, rest) = bytes
        .split_first()
        .ok_or(InternalFormatError::Length { ty: TY, len: 0 })?;
    match (head, rest) {
        (0x80, []) => return Ok(Decimal::ZERO),
        // ~ and -~: what a BINARY_DOUBLE infinity becomes in a NUMBER column
        (0xFF, [0x65]) | (0x00, []) => {
            return Err(invalid(
                TY,
                "an infinity, which an exact decimal cannot hold",
            ));
        }
        (_, []) => return Err(invalid(TY, "an exponent without digits")),
        _ => {}
    }
    if rest.len() > 20 {
        return Err(InternalFormatError::Length {
            ty: TY,
            len: bytes.len(),
        });
    }
    let negative = head < 0x80;
    let (exponent, digits) = if negative {
        let digits = match rest.split_last() {
            Some((102, body)) => body,
            _ => rest,
        };
        (62 - i32::from(head), digits)
    } else {
        (i32::from(head) - 193, rest)
    };
    if digits.is_empty() {
        return Err(invalid(TY, "no digits"));
    }
    // the base-100 digits as an integer, times 100^(exponent − (digits − 1))
    let digit = |b: u8| {
        if negative {
            (2..=101).contains(&b).then(|| 101 - b)
        } else {
            (1..=100).contains(&b).then(|| b - 1)
        }
        .ok_or(invalid(TY, "a digit byte out of range"))
    };
    // up to 9 base-100 digits (18 decimal ones) in 64 bits, the rest in 128
    let (head, tail) = digits.split_at(digits.len().min(9));
    let mut small: u64 = 0;
    for &b in head {
        small = small * 100 + u64::from(digit(b)?);
    }
    let mut unscaled = i128::from(small);
    for &b in tail {
        let d = i128::from(digit(b)?);
        unscaled = unscaled
            .checked_mul(100)
            .and_then(|u| u.checked_add(d))
            .ok_or(invalid(
                TY,
                "more digits or a larger exponent than NUMBER holds",
            ))?;
    }
    if negative {
        unscaled = -unscaled;
    }
    let shift = 2 * (exponent - (digits.len() as i32 - 1));
    Decimal::try_new(unscaled, -shift)
        .map_err(|_| invalid(TY, "more digits or a larger exponent than NUMBER holds"))
}

/// DATE's 7 bytes (also the start of every TIMESTAMP), with `nanos`.
fn date(raw: &[u8; 7], nanos: u32, ty: &'static str) -> Result<OracleDateTime> {
    let (century, year) = (i32::from(raw[0]), i32::from(raw[1]));
    // 100 + the year's hundreds and 100 + the rest, both truncated toward zero: 4712 BC is
    // 53, 88 and 1 BC is 100, 99
    if (century > 100 && year < 100) || (century < 100 && year > 100) {
        return Err(invalid(ty, "a century and year of different eras"));
    }
    let year = (century - 100) * 100 + (year - 100);
    let year = i16::try_from(year).map_err(|_| invalid(ty, "a year out of range"))?;
    let field = |b: u8| b.checked_sub(1).ok_or(invalid(ty, "a time field of zero"));
    OracleDateTime::new(
        year,
        raw[2],
        raw[3],
        field(raw[4])?,
        field(raw[5])?,
        field(raw[6])?,
        nanos,
    )
    .ok_or(invalid(ty, "not a valid date and time"))
}

/// TIMESTAMP: 7 bytes (no fraction) or 11 (with the nanoseconds).
fn timestamp(bytes: &[u8], ty: &'static str) -> Result<OracleDateTime> {
    match bytes.len() {
        7 | 11 => {
            let mut raw = [0u8; 7];
            raw.copy_from_slice(&bytes[..7]);
            let nanos = match bytes.get(7..11) {
                Some(n) => u32::from_be_bytes([n[0], n[1], n[2], n[3]]),
                None => 0,
            };
            if nanos >= 1_000_000_000 {
                return Err(invalid(ty, "fractional seconds out of range"));
            }
            date(&raw, nanos, ty)
        }
        len => Err(InternalFormatError::Length { ty, len }),
    }
}

/// TIMESTAMP WITH TIME ZONE: the UTC time (11 bytes), then the offset's hour plus 20 and
/// minute plus 60. A region instead of an offset sets the top bit of the hour byte and holds
/// the region's number in Oracle's time zone file, which the connector does not carry.
fn timestamp_tz(bytes: &[u8]) -> Result<Value> {
    const TY: &str = "TIMESTAMP WITH TIME ZONE";
    let raw: [u8; 13] = exact(bytes, TY)?;
    if raw[11] & 0x80 != 0 {
        return Err(invalid(
            TY,
            "a time zone region, whose name is in Oracle's time zone file, not in the redo",
        ));
    }
    let hours = i16::from(raw[11]) - 20;
    let minutes = i16::from(raw[12]) - 60;
    if !(-14..=14).contains(&hours) || !(-59..=59).contains(&minutes) {
        return Err(invalid(TY, "a time zone offset out of range"));
    }
    let offset = hours * 60 + minutes;
    let utc = timestamp(&raw[..11], TY)?;
    let local = shift_minutes(utc, i64::from(offset)).map_err(|reason| invalid(TY, reason))?;
    Ok(Value::TimestampTz(local, TimeZone::Offset(offset)))
}

fn text(bytes: &[u8], charset: &str, ty: &'static str) -> Result<String> {
    let is = |name: &str| charset.eq_ignore_ascii_case(name);
    match () {
        () if is("AL32UTF8") || is("UTF8") => std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| invalid(ty, "not valid UTF-8")),
        () if is("AL16UTF16") => {
            if !bytes.len().is_multiple_of(2) {
                return Err(InternalFormatError::Length {
                    ty,
                    len: bytes.len(),
                });
            }
            let mut out = String::with_capacity(bytes.len());
            for c in char::decode_utf16(
                bytes
                    .chunks_exact(2)
                    .map(|pair| u16::from_be_bytes([pair[0], pair[1]])),
            ) {
                out.push(c.map_err(|_| invalid(ty, "not valid UTF-16"))?);
            }
            Ok(out)
        }
        () => Err(InternalFormatError::Charset {
            ty,
            charset: charset.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap_or(0))
            .collect()
    }

    fn read(ty: ColumnType, bytes: &str) -> Result<Value> {
        decode_internal(&ty, &hex(bytes), &Charsets::default())
    }

    fn dt(y: i16, mo: u8, d: u8, h: u8, mi: u8, s: u8, n: u32) -> OracleDateTime {
        OracleDateTime::new(y, mo, d, h, mi, s, n).unwrap_or_else(|| panic!("{y}-{mo}-{d}"))
    }

    /// Byte strings as Oracle's `DUMP(x, 16)` shows them (Typ=2 NUMBER).
    #[test]
    fn numbers_as_dump_shows_them() {
        for (bytes, value) in [
            ("80", "0"),
            ("c102", "1"),
            ("c20b", "1000"),
            ("c229", "4000"),
            ("c2021834", "123.51"),
            ("c202182e", "123.45"),
            ("c002", "0.01"),
            ("bf0b", "0.001"),
            ("bf02", "0.0001"),
            ("3e6466", "-1"),
            ("3d644e3866", "-123.45"),
            ("3f5b66", "-0.1"),
            ("c4022e4338", "1456655"),
        ] {
            let expected = Decimal::parse(value).unwrap_or_else(|e| panic!("{value}: {e}"));
            assert_eq!(
                read(ColumnType::Number, bytes),
                Ok(Value::Number(expected)),
                "{bytes}"
            );
        }
        // the largest and smallest magnitudes NUMBER holds
        let big = read(
            ColumnType::Number,
            "ff64646464646464646464646464646464646464646464",
        );
        assert!(big.is_err(), "21 mantissa bytes: {big:?}");
        assert_eq!(
            read(ColumnType::Number, "ff0b"),
            Ok(Value::Number(
                Decimal::parse(&format!("1{}", "0".repeat(125))).unwrap_or_default()
            ))
        );
        // the infinities and malformed bytes are errors, never a wrong number
        for bytes in ["ff65", "00", "", "c1", "c100", "c165", "3e01"] {
            assert!(read(ColumnType::Number, bytes).is_err(), "{bytes:?}");
        }
    }

    /// Typ=12 DATE and Typ=180 TIMESTAMP: `DUMP(DATE '2024-02-29' + …)`.
    #[test]
    fn dates_and_timestamps_as_dump_shows_them() {
        assert_eq!(
            read(ColumnType::Date, "787c021d0e2e08"),
            Ok(Value::Date(dt(2024, 2, 29, 13, 45, 7, 0)))
        );
        // 1 BC, the year before 1 AD
        assert_eq!(
            read(ColumnType::Date, "64630101010101"),
            Ok(Value::Date(dt(-1, 1, 1, 0, 0, 0, 0)))
        );
        // the first day Oracle knows: 4712 BC, January 1
        assert_eq!(
            read(ColumnType::Date, "35580101010101"),
            Ok(Value::Date(dt(-4712, 1, 1, 0, 0, 0, 0)))
        );
        assert_eq!(
            read(ColumnType::Date, "c7c70c1f181c3c"),
            Ok(Value::Date(dt(9999, 12, 31, 23, 27, 59, 0)))
        );
        assert_eq!(
            read(ColumnType::Timestamp, "787c021d0e2e08075bca00"),
            Ok(Value::Timestamp(dt(2024, 2, 29, 13, 45, 7, 123_456_000)))
        );
        assert_eq!(
            read(ColumnType::Timestamp, "787c021d0e2e08"),
            Ok(Value::Timestamp(dt(2024, 2, 29, 13, 45, 7, 0)))
        );
        for bytes in [
            "787c021d0e2e",
            "787c021e0e2e08",
            "787c0d010e2e08",
            "787c021d002e08",
            "787c021d0e2e08ffffffff",
        ] {
            assert!(read(ColumnType::Timestamp, bytes).is_err(), "{bytes}");
        }
    }

    /// Typ=181: the UTC time, then the offset (+05:30 is 19 5a); a region is refused by name.
    #[test]
    fn timestamps_with_time_zone_are_utc_plus_the_offset() {
        assert_eq!(
            read(ColumnType::TimestampTz, "787c021d09100800000000195a"),
            Ok(Value::TimestampTz(
                dt(2024, 2, 29, 13, 45, 7, 0),
                TimeZone::Offset(330)
            ))
        );
        // -08:00 the evening before, in UTC the next morning
        assert_eq!(
            read(ColumnType::TimestampTz, "787c03010310083b9ac9ff0c3c"),
            Ok(Value::TimestampTz(
                dt(2024, 2, 29, 18, 15, 7, 999_999_999),
                TimeZone::Offset(-480)
            ))
        );
        let region = read(ColumnType::TimestampTz, "787c021d09100800000000d5c8");
        assert!(
            matches!(&region, Err(InternalFormatError::Invalid { reason, .. }) if reason.contains("region")),
            "{region:?}"
        );
    }

    #[test]
    fn intervals_are_biased_fields() {
        assert_eq!(
            read(ColumnType::IntervalYm, "8000000142"),
            Ok(Value::IntervalYm(18))
        );
        assert_eq!(
            read(ColumnType::IntervalYm, "7fffffff36"),
            Ok(Value::IntervalYm(-18))
        );
        let ds: i128 = (((2 * 24 + 3) * 60 + 4) * 60 + 5) * 1_000_000_000 + 500_000_000;
        assert_eq!(
            read(ColumnType::IntervalDs, "800000023f40419dcd6500"),
            Ok(Value::IntervalDs(IntervalNanos::new(ds)))
        );
        // a negative interval has every field negative
        assert_eq!(
            read(ColumnType::IntervalDs, "7ffffffe39383762329b00"),
            Ok(Value::IntervalDs(IntervalNanos::new(-ds)))
        );
        assert!(
            read(ColumnType::IntervalYm, "8000000149").is_err(),
            "13 months"
        );
    }

    #[test]
    fn binary_floats_flip_the_sign_bit() {
        assert_eq!(
            read(ColumnType::BinaryDouble, "bff0000000000000"),
            Ok(Value::BinaryDouble(1.0))
        );
        assert_eq!(
            read(ColumnType::BinaryDouble, "400fffffffffffff"),
            Ok(Value::BinaryDouble(-1.0))
        );
        assert_eq!(
            read(ColumnType::BinaryFloat, "bf800000"),
            Ok(Value::BinaryFloat(1.0))
        );
        assert_eq!(
            read(ColumnType::BinaryFloat, "407fffff"),
            Ok(Value::BinaryFloat(-1.0))
        );
        assert!(read(ColumnType::BinaryFloat, "bf80").is_err());
    }

    #[test]
    fn text_is_read_in_its_character_set() {
        assert_eq!(
            read(ColumnType::Varchar2, "68c3a96c6c6f"),
            Ok(Value::Text("héllo".into()))
        );
        assert_eq!(
            read(ColumnType::NVarchar2, "006800e9"),
            Ok(Value::Text("hé".into()))
        );
        assert_eq!(read(ColumnType::Raw, "00ff"), Ok(Value::Raw(vec![0, 255])));
        assert!(read(ColumnType::Varchar2, "c328").is_err(), "not UTF-8");
        assert!(
            read(ColumnType::NVarchar2, "0068d800").is_err(),
            "a lone surrogate"
        );
        let latin = decode_internal(
            &ColumnType::Varchar2,
            b"abc",
            &Charsets {
                database: "WE8ISO8859P1".into(),
                national: "AL16UTF16".into(),
            },
        );
        assert_eq!(
            latin,
            Err(InternalFormatError::Charset {
                ty: "CHAR/VARCHAR2",
                charset: "WE8ISO8859P1".into()
            })
        );
        assert!(read(ColumnType::Clob, "00").is_err());
    }
}
