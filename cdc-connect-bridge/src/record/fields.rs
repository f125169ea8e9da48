//! Column types to Connect field types, and column values to JSON payload values.
//!
//! ```text
//!  ColumnDef ──field_kind(decimal.mode, temporal.mode)──► FieldKind ──schema()──► Connect schema
//!  Value ─────────────────render(kind)──────────────────► JSON payload value
//! ```
//!
//! The mapping is that of Debezium's Oracle connector (`precise` decimals, `adaptive`
//! temporals), with the `string` and `double` decimal modes and the `iso_string` temporal mode;
//! `docs/records.md` ("Types") has the table.

use cdc_core::config::{DecimalMode, TemporalMode};
use cdc_core::table::{ColumnDef, ColumnType};
use cdc_core::value::{Decimal, OracleDateTime, TimeZone, Value};
use serde_json::{Map, Number, Value as Json};

use crate::record::schemas::{Schema, SchemaType};
use crate::record::{base64, json};

/// `io.debezium.time.MicroDuration` counts a month as 365.25 / 12 days.
pub const MICROS_PER_MONTH: i128 = 2_629_800_000_000;

const DECIMAL: &str = "org.apache.kafka.connect.data.Decimal";
const VARIABLE_SCALE_DECIMAL: &str = "io.debezium.data.VariableScaleDecimal";
const TIMESTAMP: &str = "io.debezium.time.Timestamp";
const MICRO_TIMESTAMP: &str = "io.debezium.time.MicroTimestamp";
const NANO_TIMESTAMP: &str = "io.debezium.time.NanoTimestamp";
const ZONED_TIMESTAMP: &str = "io.debezium.time.ZonedTimestamp";
const MICRO_DURATION: &str = "io.debezium.time.MicroDuration";

/// How one column is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// NUMBER(p, s ≤ 0) by the digits it can hold: < 3, < 5, < 10, < 19.
    Int8,
    Int16,
    Int32,
    Int64,
    /// Connect `Decimal`: unscaled two's-complement bytes at a fixed scale.
    Decimal {
        scale: i16,
        precision: Option<u16>,
    },
    /// `io.debezium.data.VariableScaleDecimal` {scale, value}.
    VariableScaleDecimal,
    /// `decimal.mode=string`: the plain decimal text.
    DecimalString,
    /// `decimal.mode=double`: the nearest float64.
    DecimalDouble,
    Float32,
    Float64,
    /// Character types, ROWID, CLOB, XMLTYPE.
    Text,
    /// RAW, LONG RAW, BLOB.
    Bytes,
    /// DATE, TIMESTAMP(0..3): epoch milliseconds.
    Timestamp,
    /// TIMESTAMP(4..6): epoch microseconds.
    MicroTimestamp,
    /// TIMESTAMP(7..9): epoch nanoseconds.
    NanoTimestamp,
    /// `temporal.mode=iso_string`: ISO local date-time text.
    LocalDateTime,
    /// TIMESTAMP WITH (LOCAL) TIME ZONE: ISO text with its offset.
    ZonedTimestamp,
    /// INTERVAL: float64 microseconds.
    MicroDuration,
    /// `temporal.mode=iso_string`: ISO-8601 duration text.
    IsoDuration,
    /// A type the connector does not convert (JSON, BOOLEAN, VECTOR, others): text when the
    /// redo gives text, the placeholder otherwise.
    Opaque,
}

/// The field kind of a column.
pub fn field_kind(column: &ColumnDef, decimal: DecimalMode, temporal: TemporalMode) -> FieldKind {
    let exact = |kind: FieldKind| match decimal {
        DecimalMode::Precise => kind,
        DecimalMode::String => FieldKind::DecimalString,
        DecimalMode::Double => FieldKind::DecimalDouble,
    };
    let iso = temporal == TemporalMode::IsoString;
    match &column.data_type {
        ColumnType::Number => match (column.precision, column.scale) {
            (Some(p), s) => {
                let s = s.unwrap_or(0);
                if s > 0 {
                    exact(FieldKind::Decimal {
                        scale: s,
                        precision: Some(p),
                    })
                } else {
                    // a negative scale rounds to 10^-s, so the integer has p - s digits
                    let digits = i32::from(p) - i32::from(s);
                    match digits {
                        ..3 => FieldKind::Int8,
                        3..5 => FieldKind::Int16,
                        5..10 => FieldKind::Int32,
                        10..19 => FieldKind::Int64,
                        _ => exact(FieldKind::Decimal {
                            scale: 0,
                            precision: u16::try_from(digits).ok(),
                        }),
                    }
                }
            }
            // NUMBER(*, 0), e.g. INTEGER: up to 38 digits
            (None, Some(0)) => exact(FieldKind::Decimal {
                scale: 0,
                precision: None,
            }),
            (None, _) => exact(FieldKind::VariableScaleDecimal),
        },
        ColumnType::Float => exact(FieldKind::VariableScaleDecimal),
        ColumnType::BinaryFloat => FieldKind::Float32,
        ColumnType::BinaryDouble => FieldKind::Float64,
        ColumnType::Char
        | ColumnType::Varchar2
        | ColumnType::NChar
        | ColumnType::NVarchar2
        | ColumnType::Long
        | ColumnType::Clob
        | ColumnType::NClob
        | ColumnType::RowId
        | ColumnType::URowId
        | ColumnType::XmlType => FieldKind::Text,
        ColumnType::Raw | ColumnType::LongRaw | ColumnType::Blob => FieldKind::Bytes,
        ColumnType::Date if iso => FieldKind::LocalDateTime,
        ColumnType::Date => FieldKind::Timestamp,
        ColumnType::Timestamp if iso => FieldKind::LocalDateTime,
        // the fractional precision is the column's scale; Oracle's default is 6
        ColumnType::Timestamp => match column.scale.unwrap_or(6) {
            ..=3 => FieldKind::Timestamp,
            4..=6 => FieldKind::MicroTimestamp,
            _ => FieldKind::NanoTimestamp,
        },
        ColumnType::TimestampTz | ColumnType::TimestampLtz => FieldKind::ZonedTimestamp,
        ColumnType::IntervalYm | ColumnType::IntervalDs if iso => FieldKind::IsoDuration,
        ColumnType::IntervalYm | ColumnType::IntervalDs => FieldKind::MicroDuration,
        ColumnType::Json | ColumnType::Boolean | ColumnType::Vector | ColumnType::Other(_) => {
            FieldKind::Opaque
        }
    }
}

impl FieldKind {
    /// The Connect schema of the field (required; the caller makes it optional).
    pub fn schema(self) -> Schema {
        match self {
            FieldKind::Int8 => Schema::of(SchemaType::Int8),
            FieldKind::Int16 => Schema::of(SchemaType::Int16),
            FieldKind::Int32 => Schema::of(SchemaType::Int32),
            FieldKind::Int64 => Schema::of(SchemaType::Int64),
            FieldKind::Decimal { scale, precision } => {
                let s = Schema::of(SchemaType::Bytes)
                    .named(DECIMAL, Some(1))
                    .with_parameter("scale", scale.to_string());
                match precision {
                    Some(p) => s.with_parameter("connect.decimal.precision", p.to_string()),
                    None => s,
                }
            }
            FieldKind::VariableScaleDecimal => Schema::structure(
                VARIABLE_SCALE_DECIMAL,
                vec![
                    Schema::field("scale", Schema::of(SchemaType::Int32)),
                    Schema::field("value", Schema::of(SchemaType::Bytes)),
                ],
            )
            .named(VARIABLE_SCALE_DECIMAL, Some(1))
            .with_doc("Variable scaled decimal"),
            FieldKind::DecimalString
            | FieldKind::Text
            | FieldKind::LocalDateTime
            | FieldKind::IsoDuration
            | FieldKind::Opaque => Schema::of(SchemaType::String),
            FieldKind::DecimalDouble | FieldKind::Float64 => Schema::of(SchemaType::Float64),
            FieldKind::Float32 => Schema::of(SchemaType::Float32),
            FieldKind::Bytes => Schema::of(SchemaType::Bytes),
            FieldKind::Timestamp => Schema::of(SchemaType::Int64).named(TIMESTAMP, Some(1)),
            FieldKind::MicroTimestamp => {
                Schema::of(SchemaType::Int64).named(MICRO_TIMESTAMP, Some(1))
            }
            FieldKind::NanoTimestamp => {
                Schema::of(SchemaType::Int64).named(NANO_TIMESTAMP, Some(1))
            }
            FieldKind::ZonedTimestamp => {
                Schema::of(SchemaType::String).named(ZONED_TIMESTAMP, Some(1))
            }
            FieldKind::MicroDuration => {
                Schema::of(SchemaType::Float64).named(MICRO_DURATION, Some(1))
            }
        }
    }
}

/// Why a value could not be written; static text that names no value.
pub type RenderError = &'static str;

const WRONG_TYPE: RenderError = "the change carries a value of another type than the column's";

/// The JSON payload of one value. `placeholder` stands for a value the redo does not carry
/// (`cdc.unavailable.placeholder`; a bytes field gets its UTF-8 bytes).
pub fn render(kind: FieldKind, value: &Value, placeholder: &str) -> Result<Json, RenderError> {
    scalar(kind, value, placeholder).map(Scalar::into_json)
}

/// Appends the JSON payload of one value to `out`, byte for byte what [`render`] gives once
/// serialized, without building it; on error `out` is left as it was.
pub fn write_rendered(
    out: &mut Vec<u8>,
    kind: FieldKind,
    value: &Value,
    placeholder: &str,
) -> Result<(), RenderError> {
    scalar(kind, value, placeholder).map(|s| s.write(out))
}

/// One rendered value, before it becomes a `serde_json::Value` or text.
#[derive(Debug)]
enum Scalar<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    Owned(String),
    /// Floats and structs: `serde_json` writes them.
    Json(Json),
}

impl Scalar<'_> {
    fn into_json(self) -> Json {
        match self {
            Scalar::Null => Json::Null,
            Scalar::Int(n) => Json::from(n),
            Scalar::Text(s) => Json::from(s),
            Scalar::Owned(s) => Json::from(s),
            Scalar::Json(json) => json,
        }
    }

    fn write(self, out: &mut Vec<u8>) {
        match self {
            Scalar::Null => out.extend_from_slice(b"null"),
            Scalar::Int(n) => json::push_i64(out, n),
            Scalar::Text(s) => json::push_str(out, s),
            Scalar::Owned(s) => json::push_str(out, &s),
            Scalar::Json(value) => json::push_json(out, &value),
        }
    }
}

fn scalar<'a>(
    kind: FieldKind,
    value: &'a Value,
    placeholder: &'a str,
) -> Result<Scalar<'a>, RenderError> {
    if value.is_null() {
        return Ok(Scalar::Null);
    }
    match kind {
        FieldKind::Int8 => int(value, i128::from(i8::MIN), i128::from(i8::MAX)),
        FieldKind::Int16 => int(value, i128::from(i16::MIN), i128::from(i16::MAX)),
        FieldKind::Int32 => int(value, i128::from(i32::MIN), i128::from(i32::MAX)),
        FieldKind::Int64 => int(value, i128::from(i64::MIN), i128::from(i64::MAX)),
        FieldKind::Decimal { scale, .. } => {
            let d = number(value)?;
            let unscaled = d
                .unscaled_at(scale)
                .ok_or("a NUMBER value with more decimal places than the column's scale")?;
            Ok(Scalar::Owned(base64::encode(&twos_complement(unscaled))))
        }
        FieldKind::VariableScaleDecimal => {
            let (scale, unscaled) = variable_scale(number(value)?);
            let mut map = Map::new();
            map.insert("scale".into(), Json::from(scale));
            map.insert(
                "value".into(),
                Json::from(base64::encode(&twos_complement(unscaled))),
            );
            Ok(Scalar::Json(Json::Object(map)))
        }
        FieldKind::DecimalString => Ok(Scalar::Owned(number(value)?.to_plain_string())),
        FieldKind::DecimalDouble => Ok(Scalar::Json(float64(number(value)?.to_f64()))),
        FieldKind::Float32 => match value {
            Value::BinaryFloat(f) => Ok(Scalar::Json(float32(*f))),
            _ => Err(WRONG_TYPE),
        },
        FieldKind::Float64 => match value {
            Value::BinaryDouble(f) => Ok(Scalar::Json(float64(*f))),
            Value::BinaryFloat(f) => Ok(Scalar::Json(float32(*f))),
            _ => Err(WRONG_TYPE),
        },
        FieldKind::Text | FieldKind::Opaque => match value {
            Value::Text(s) | Value::RowId(s) => Ok(Scalar::Text(s.as_str())),
            Value::EmptyLob => Ok(Scalar::Text("")),
            Value::Unavailable | Value::Unsupported => Ok(Scalar::Text(placeholder)),
            _ => Err(WRONG_TYPE),
        },
        FieldKind::Bytes => match value {
            Value::Raw(bytes) => Ok(Scalar::Owned(base64::encode(bytes))),
            Value::EmptyLob => Ok(Scalar::Text("")),
            Value::Unavailable | Value::Unsupported => {
                Ok(Scalar::Owned(base64::encode(placeholder.as_bytes())))
            }
            _ => Err(WRONG_TYPE),
        },
        FieldKind::Timestamp => Ok(Scalar::Int(epoch(value, 1_000_000)?)),
        FieldKind::MicroTimestamp => Ok(Scalar::Int(epoch(value, 1_000)?)),
        FieldKind::NanoTimestamp => Ok(Scalar::Int(epoch(value, 1)?)),
        FieldKind::LocalDateTime => match value {
            Value::Date(dt) | Value::Timestamp(dt) => Ok(Scalar::Owned(iso_local(dt))),
            _ => Err(WRONG_TYPE),
        },
        FieldKind::ZonedTimestamp => match value {
            Value::TimestampTz(dt, zone) => Ok(Scalar::Owned(iso_zoned(dt, zone))),
            Value::TimestampLtz(dt) => Ok(Scalar::Owned(iso_zoned(dt, &TimeZone::Offset(0)))),
            _ => Err(WRONG_TYPE),
        },
        FieldKind::MicroDuration => match value {
            Value::IntervalYm(months) => Ok(Scalar::Json(float64(
                (i128::from(*months) * MICROS_PER_MONTH) as f64,
            ))),
            // sub-microsecond digits are dropped, as MicroDuration does
            Value::IntervalDs(nanos) => Ok(Scalar::Json(float64((nanos.get() / 1000) as f64))),
            _ => Err(WRONG_TYPE),
        },
        FieldKind::IsoDuration => match value {
            Value::IntervalYm(months) => Ok(Scalar::Owned(iso_period(*months))),
            Value::IntervalDs(nanos) => Ok(Scalar::Owned(iso_duration(nanos.get()))),
            _ => Err(WRONG_TYPE),
        },
    }
}

fn number(value: &Value) -> Result<Decimal, RenderError> {
    match value {
        Value::Number(d) => Ok(*d),
        _ => Err(WRONG_TYPE),
    }
}

fn int(value: &Value, min: i128, max: i128) -> Result<Scalar<'static>, RenderError> {
    let n = number(value)?
        .unscaled_at(0)
        .ok_or("a NUMBER value with decimal places in an integer column")?;
    if n < min || n > max {
        return Err("a NUMBER value beyond the column's precision");
    }
    // within i64 by the bounds above
    Ok(Scalar::Int(n as i64))
}

/// `scale` and unscaled value as Java's `BigDecimal` holds an Oracle NUMBER: integers at scale 0,
/// fractions at their number of decimal places; only beyond 38 digits a negative scale.
pub fn variable_scale(d: Decimal) -> (i32, i128) {
    let scale = d.scale().max(0);
    match d.unscaled_at(scale) {
        Some(unscaled) => (i32::from(scale), unscaled),
        None => (i32::from(d.scale()), d.unscaled()),
    }
}

/// Big-endian two's complement in the fewest bytes (Java's `BigInteger.toByteArray`).
pub fn twos_complement(n: i128) -> Vec<u8> {
    let bytes = n.to_be_bytes();
    let mut start = 0;
    while start + 1 < bytes.len() {
        let (b, next) = (bytes[start], bytes[start + 1]);
        let redundant = (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    bytes[start..].to_vec()
}

/// Epoch time of a DATE or TIMESTAMP (read as UTC wall clock) in units of `unit_nanos`,
/// rounded down as `Instant` does for times before 1970.
fn epoch(value: &Value, unit_nanos: i128) -> Result<i64, RenderError> {
    let dt = match value {
        Value::Date(dt) | Value::Timestamp(dt) => dt,
        _ => return Err(WRONG_TYPE),
    };
    i64::try_from(dt.epoch_nanos().div_euclid(unit_nanos))
        .map_err(|_| "a timestamp outside the range of epoch nanoseconds (years 1677-2262); cdc.temporal.mode=iso_string writes it as text")
}

/// A float64 payload; non-finite values as Jackson writes them by default (quoted).
pub fn float64(f: f64) -> Json {
    match Number::from_f64(f) {
        Some(n) => Json::Number(n),
        None => Json::from(non_finite(f.is_nan(), f > 0.0)),
    }
}

/// A float32 payload in its shortest decimal form (`0.1`, not `0.10000000149011612`).
pub fn float32(f: f32) -> Json {
    if !f.is_finite() {
        return Json::from(non_finite(f.is_nan(), f > 0.0));
    }
    let shortest: f64 = f.to_string().parse().unwrap_or(f64::from(f));
    float64(shortest)
}

fn non_finite(nan: bool, positive: bool) -> &'static str {
    match (nan, positive) {
        (true, _) => "NaN",
        (false, true) => "Infinity",
        (false, false) => "-Infinity",
    }
}

/// `2026-02-28T13:45:59.123`: ISO local date-time, the fraction without trailing zeros.
pub fn iso_local(dt: &OracleDateTime) -> String {
    let mut out = String::with_capacity(32);
    if dt.year < 0 {
        out.push('-');
    }
    push_padded(&mut out, u32::from(dt.year.unsigned_abs()), 4);
    for (separator, part) in [
        ('-', dt.month),
        ('-', dt.day),
        ('T', dt.hour),
        (':', dt.minute),
        (':', dt.second),
    ] {
        out.push(separator);
        push_padded(&mut out, u32::from(part), 2);
    }
    push_fraction(&mut out, dt.nanos);
    out
}

/// `n` in decimal, zero-padded to at least `width` digits (`format!("{n:0width$}")`).
fn push_padded(out: &mut String, n: u32, width: usize) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for _ in digits.len() - at..width {
        out.push('0');
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

fn push_fraction(out: &mut String, nanos: u32) {
    if nanos != 0 {
        let mut digits = String::with_capacity(9);
        push_padded(&mut digits, nanos, 9);
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// ISO offset date-time: `Z` for UTC, `±HH:MM` otherwise; a region zone (which needs the time
/// zone database to give an offset) in brackets after the local time.
pub fn iso_zoned(dt: &OracleDateTime, zone: &TimeZone) -> String {
    let mut out = iso_local(dt);
    match zone {
        TimeZone::Offset(0) => out.push('Z'),
        TimeZone::Offset(_) => out.push_str(&zone.to_string()),
        TimeZone::Region(name) => {
            out.push('[');
            out.push_str(name);
            out.push(']');
        }
    }
    out
}

/// INTERVAL YEAR TO MONTH as ISO-8601: `P1Y2M`, `-P3M`, `P0M`.
pub fn iso_period(months: i64) -> String {
    let sign = if months < 0 { "-" } else { "" };
    let m = months.unsigned_abs();
    let (years, months) = (m / 12, m % 12);
    let mut out = format!("{sign}P");
    if years != 0 {
        out.push_str(&format!("{years}Y"));
    }
    if months != 0 || years == 0 {
        out.push_str(&format!("{months}M"));
    }
    out
}

/// INTERVAL DAY TO SECOND as ISO-8601: `P5DT4H3M2.123456S`, `-PT0.5S`, `PT0S`.
pub fn iso_duration(nanos: i128) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    let total_secs = n / 1_000_000_000;
    let frac = (n % 1_000_000_000) as u32;
    let (days, hours, minutes, secs) = (
        total_secs / 86_400,
        total_secs / 3600 % 24,
        total_secs / 60 % 60,
        total_secs % 60,
    );
    let mut out = format!("{sign}P");
    if days != 0 {
        out.push_str(&format!("{days}D"));
    }
    if hours != 0 || minutes != 0 || secs != 0 || frac != 0 || days == 0 {
        out.push('T');
        if hours != 0 {
            out.push_str(&format!("{hours}H"));
        }
        if minutes != 0 {
            out.push_str(&format!("{minutes}M"));
        }
        if secs != 0 || frac != 0 || (hours == 0 && minutes == 0) {
            out.push_str(&format!("{secs}"));
            push_fraction(&mut out, frac);
            out.push('S');
        }
    }
    out
}
