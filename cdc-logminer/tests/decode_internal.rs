//! The decoder of Oracle's internal formats (`decode::decode_internal`) against the
//! simulator's encoder (`sim::stored_bytes`, what its dictionary-mismatch rows show as
//! HEXTORAW) over each type's whole range. The decoder's own tests check it against Oracle's
//! documented `DUMP()` bytes, so a disagreement here names a bug on one side or the other.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_core::{ColumnType, Decimal, IntervalNanos, OracleDateTime, TimeZone, Value};
use cdc_logminer::decode::{Charsets, decode_internal};
use cdc_logminer::sim::stored_bytes;
use proptest::prelude::*;

fn round_trip(ty: ColumnType, value: Value) -> Result<(), TestCaseError> {
    let bytes = stored_bytes(&ty, &value);
    let back = decode_internal(&ty, &bytes, &Charsets::default());
    prop_assert_eq!(back, Ok(value), "{:?} as {:02x?}", ty, bytes);
    Ok(())
}

fn decimal() -> impl Strategy<Value = Decimal> {
    // up to 38 significant digits, magnitudes from about 10^-120 to 10^117
    (
        0u64..1_000_000_000_000_000_000,
        0u64..10_000_000_000_000_000_000,
        any::<bool>(),
        -80i16..=120,
    )
        .prop_map(|(high, low, negative, scale)| {
            let unscaled = i128::from(high) * 10_000_000_000_000_000_000 + i128::from(low);
            Decimal::new(if negative { -unscaled } else { unscaled }, scale)
        })
}

fn datetime(years: std::ops::RangeInclusive<i16>) -> impl Strategy<Value = OracleDateTime> {
    (
        years,
        1u8..=12,
        1u8..=28,
        0u8..24,
        0u8..60,
        0u8..60,
        0u32..1_000_000_000,
    )
        .prop_filter_map("year 0", |(y, mo, d, h, mi, s, n)| {
            OracleDateTime::new(y, mo, d, h, mi, s, n)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn numbers(d in decimal()) {
        round_trip(ColumnType::Number, Value::Number(d))?;
    }

    #[test]
    fn dates_and_timestamps(t in datetime(-4712..=9999)) {
        let date = OracleDateTime { nanos: 0, ..t };
        round_trip(ColumnType::Date, Value::Date(date))?;
        round_trip(ColumnType::Timestamp, Value::Timestamp(t))?;
        round_trip(ColumnType::TimestampLtz, Value::TimestampLtz(t))?;
    }

    #[test]
    fn timestamps_with_an_offset(t in datetime(1..=9998), hours in -12i16..=14, minutes in 0i16..60) {
        let offset = if hours < 0 { hours * 60 - minutes } else { hours * 60 + minutes };
        round_trip(ColumnType::TimestampTz, Value::TimestampTz(t, TimeZone::Offset(offset)))?;
    }

    #[test]
    fn intervals(months in -1_000_000_000i64..=1_000_000_000, nanos in -(86_400i128 * 999_999_999 * 1_000_000_000)..=(86_400i128 * 999_999_999 * 1_000_000_000)) {
        round_trip(ColumnType::IntervalYm, Value::IntervalYm(months))?;
        round_trip(ColumnType::IntervalDs, Value::IntervalDs(IntervalNanos::new(nanos)))?;
    }

    #[test]
    fn binary_floats(f in any::<f32>().prop_filter("NaN", |f| !f.is_nan()), d in any::<f64>().prop_filter("NaN", |d| !d.is_nan())) {
        round_trip(ColumnType::BinaryFloat, Value::BinaryFloat(f))?;
        round_trip(ColumnType::BinaryDouble, Value::BinaryDouble(d))?;
    }

    #[test]
    fn text_and_raw(s in "\\PC{0,40}", raw in proptest::collection::vec(any::<u8>(), 0..40)) {
        round_trip(ColumnType::Varchar2, Value::Text(s.clone()))?;
        round_trip(ColumnType::NVarchar2, Value::Text(s))?;
        round_trip(ColumnType::Raw, Value::Raw(raw))?;
    }
}
