//! Table tests for the type mapping and a property test that any value of any column renders
//! valid JSON (or a typed error) without panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use cdc_connect_bridge::record::base64;
use cdc_connect_bridge::record::fields::{
    FieldKind, float32, iso_duration, iso_local, iso_period, render, twos_complement,
    variable_scale,
};
use cdc_connect_bridge::{RecordBuilder, RecordContext, TableFormat, field_kind, write_rendered};
use cdc_core::change::{ChangeOp, ColumnValue};
use cdc_core::config::{DecimalMode, TemporalMode};
use cdc_core::table::{ColumnDef, ColumnType, TableId};
use cdc_core::value::{Decimal, TimeZone, Value};
use proptest::prelude::*;
use serde_json::json;
use support::*;

const P: &str = "__cdc_unavailable_value";

fn kind(ty: ColumnType, precision: Option<u16>, scale: Option<i16>) -> FieldKind {
    let c = ColumnDef::new("C", 1, ty).with_precision(precision, scale);
    field_kind(&c, DecimalMode::Precise, TemporalMode::Adaptive)
}

#[test]
fn number_widths() {
    for (p, s, expected) in [
        (1, 0, FieldKind::Int8),
        (2, 0, FieldKind::Int8),
        (3, 0, FieldKind::Int16),
        (4, 0, FieldKind::Int16),
        (5, 0, FieldKind::Int32),
        (9, 0, FieldKind::Int32),
        (10, 0, FieldKind::Int64),
        (18, 0, FieldKind::Int64),
        (
            19,
            0,
            FieldKind::Decimal {
                scale: 0,
                precision: Some(19),
            },
        ),
        (3, -2, FieldKind::Int32),
        (
            10,
            2,
            FieldKind::Decimal {
                scale: 2,
                precision: Some(10),
            },
        ),
    ] {
        assert_eq!(
            kind(ColumnType::Number, Some(p), Some(s)),
            expected,
            "NUMBER({p},{s})"
        );
    }
    assert_eq!(
        kind(ColumnType::Number, None, None),
        FieldKind::VariableScaleDecimal
    );
    assert_eq!(
        kind(ColumnType::Float, Some(126), None),
        FieldKind::VariableScaleDecimal
    );
    assert_eq!(
        kind(ColumnType::Number, None, Some(0)),
        FieldKind::Decimal {
            scale: 0,
            precision: None
        }
    );
    // the ranges are enforced, never wrapped
    assert_eq!(render(FieldKind::Int8, &num("127"), P), Ok(json!(127)));
    assert_eq!(render(FieldKind::Int8, &num("-128"), P), Ok(json!(-128)));
    assert!(render(FieldKind::Int8, &num("128"), P).is_err());
    assert!(render(FieldKind::Int16, &num("1.5"), P).is_err());
    assert_eq!(
        render(FieldKind::Int64, &num("-9223372036854775808"), P),
        Ok(json!(i64::MIN))
    );
    assert_eq!(render(FieldKind::Int32, &num("1E+3"), P), Ok(json!(1000)));
}

#[test]
fn decimal_bytes() {
    for (n, bytes) in [
        (0i128, vec![0x00]),
        (1, vec![0x01]),
        (127, vec![0x7f]),
        (128, vec![0x00, 0x80]),
        (255, vec![0x00, 0xff]),
        (256, vec![0x01, 0x00]),
        (-1, vec![0xff]),
        (-128, vec![0x80]),
        (-129, vec![0xff, 0x7f]),
        (-4250, vec![0xef, 0x66]),
        (i128::MAX, {
            let mut v = vec![0x7f];
            v.extend([0xff; 15]);
            v
        }),
    ] {
        assert_eq!(twos_complement(n), bytes, "{n}");
    }
    let d = FieldKind::Decimal {
        scale: 2,
        precision: Some(10),
    };
    assert_eq!(
        render(d, &num("1.5"), P),
        Ok(json!(base64::encode(&[0x00, 0x96])))
    );
    assert_eq!(render(d, &num("-0.01"), P), Ok(json!("/w==")));
    assert_eq!(render(d, &num("0"), P), Ok(json!("AA==")));
    assert!(render(d, &num("0.001"), P).is_err());

    let vsd = FieldKind::VariableScaleDecimal;
    assert_eq!(
        render(vsd, &num("-42.50"), P),
        Ok(json!({"scale": 1, "value": base64::encode(&twos_complement(-425))}))
    );
    assert_eq!(
        render(vsd, &num("100"), P),
        Ok(json!({"scale": 0, "value": "ZA=="}))
    );
    // beyond 38 digits at scale 0 the scale goes negative, as BigDecimal would hold it
    assert_eq!(
        variable_scale(Decimal::parse("1.0E+125").unwrap()),
        (-125, 1)
    );
    assert_eq!(variable_scale(Decimal::parse("1E-130").unwrap()), (130, 1));

    let string = field_kind(
        &ColumnDef::new("C", 1, ColumnType::Number).with_precision(Some(10), Some(2)),
        DecimalMode::String,
        TemporalMode::Adaptive,
    );
    assert_eq!(render(string, &num("-42.50"), P), Ok(json!("-42.5")));
    let double = field_kind(
        &ColumnDef::new("C", 1, ColumnType::Number),
        DecimalMode::Double,
        TemporalMode::Adaptive,
    );
    assert_eq!(render(double, &num("0.1"), P), Ok(json!(0.1)));
    // integer columns stay integers in every decimal mode
    let int = field_kind(
        &ColumnDef::new("C", 1, ColumnType::Number).with_precision(Some(5), Some(0)),
        DecimalMode::String,
        TemporalMode::Adaptive,
    );
    assert_eq!(int, FieldKind::Int32);
}

#[test]
fn timestamps_at_each_precision() {
    let ts = |scale| kind(ColumnType::Timestamp, None, Some(scale));
    assert_eq!(ts(0), FieldKind::Timestamp);
    assert_eq!(ts(3), FieldKind::Timestamp);
    assert_eq!(ts(4), FieldKind::MicroTimestamp);
    assert_eq!(ts(6), FieldKind::MicroTimestamp);
    assert_eq!(ts(7), FieldKind::NanoTimestamp);
    assert_eq!(ts(9), FieldKind::NanoTimestamp);
    assert_eq!(
        kind(ColumnType::Timestamp, None, None),
        FieldKind::MicroTimestamp
    );
    assert_eq!(kind(ColumnType::Date, None, None), FieldKind::Timestamp);

    let v = Value::Timestamp(dt(2026, 3, 29, 1, 30, 0, 123_456_789));
    assert_eq!(
        render(FieldKind::Timestamp, &v, P),
        Ok(json!(1_774_747_800_123i64))
    );
    assert_eq!(
        render(FieldKind::MicroTimestamp, &v, P),
        Ok(json!(1_774_747_800_123_456i64))
    );
    assert_eq!(
        render(FieldKind::NanoTimestamp, &v, P),
        Ok(json!(1_774_747_800_123_456_789i64))
    );
    // before 1970: rounded down, as Instant does
    let pre = Value::Timestamp(dt(1969, 12, 31, 23, 59, 59, 999_500_000));
    assert_eq!(render(FieldKind::Timestamp, &pre, P), Ok(json!(-1)));
    assert_eq!(render(FieldKind::MicroTimestamp, &pre, P), Ok(json!(-500)));
    assert_eq!(
        render(FieldKind::NanoTimestamp, &pre, P),
        Ok(json!(-500_000))
    );
    let date = Value::Date(dt(1900, 1, 1, 0, 0, 0, 0));
    assert_eq!(
        render(FieldKind::Timestamp, &date, P),
        Ok(json!(-2_208_988_800_000i64))
    );
    // outside i64 nanoseconds: a typed error naming no value
    let far = Value::Timestamp(dt(9999, 12, 31, 23, 59, 59, 999_999_999));
    assert!(render(FieldKind::NanoTimestamp, &far, P).is_err());
    assert_eq!(
        render(FieldKind::LocalDateTime, &far, P),
        Ok(json!("9999-12-31T23:59:59.999999999"))
    );
    assert_eq!(
        render(
            FieldKind::LocalDateTime,
            &Value::Date(dt(-4712, 1, 1, 0, 0, 0, 0)),
            P
        ),
        Ok(json!("-4712-01-01T00:00:00"))
    );
}

#[test]
fn zoned_timestamps() {
    let z = FieldKind::ZonedTimestamp;
    let t = dt(2026, 3, 29, 1, 30, 0, 0);
    for (zone, text) in [
        (TimeZone::Offset(0), "2026-03-29T01:30:00Z"),
        (TimeZone::Offset(330), "2026-03-29T01:30:00+05:30"),
        (TimeZone::Offset(-90), "2026-03-29T01:30:00-01:30"),
        (TimeZone::Offset(-720), "2026-03-29T01:30:00-12:00"),
        (
            TimeZone::Region("Europe/Paris".into()),
            "2026-03-29T01:30:00[Europe/Paris]",
        ),
    ] {
        assert_eq!(render(z, &Value::TimestampTz(t, zone), P), Ok(json!(text)));
    }
    assert_eq!(
        render(
            z,
            &Value::TimestampLtz(dt(2026, 1, 2, 3, 4, 5, 120_000_000)),
            P
        ),
        Ok(json!("2026-01-02T03:04:05.12Z"))
    );
}

#[test]
fn intervals() {
    let m = FieldKind::MicroDuration;
    assert_eq!(
        render(m, &Value::IntervalYm(1), P),
        Ok(json!(2_629_800_000_000.0))
    );
    assert_eq!(
        render(m, &Value::IntervalYm(-12), P),
        Ok(json!(-31_557_600_000_000.0))
    );
    assert_eq!(
        render(m, &Value::IntervalDs((-1_500_000_999).into()), P),
        Ok(json!(-1_500_000.0))
    );
    assert_eq!(render(m, &Value::IntervalDs(0.into()), P), Ok(json!(0.0)));
    for (months, text) in [
        (0, "P0M"),
        (3, "P3M"),
        (12, "P1Y"),
        (147, "P12Y3M"),
        (-14, "-P1Y2M"),
    ] {
        assert_eq!(iso_period(months), text);
    }
    let s = 1_000_000_000i128;
    for (nanos, text) in [
        (0, "PT0S"),
        (s / 2, "PT0.5S"),
        (-s / 2, "-PT0.5S"),
        (86_400 * s, "P1D"),
        (90 * 60 * s, "PT1H30M"),
        ((86_400 + 2) * s + 1, "P1DT2.000000001S"),
    ] {
        assert_eq!(iso_duration(nanos), text, "{nanos}");
    }
}

#[test]
fn floats_and_binary() {
    assert_eq!(float32(0.1), json!(0.1));
    assert_eq!(float32(f32::NAN), json!("NaN"));
    assert_eq!(float32(f32::NEG_INFINITY), json!("-Infinity"));
    assert_eq!(
        render(FieldKind::Float64, &Value::BinaryDouble(f64::INFINITY), P),
        Ok(json!("Infinity"))
    );
    assert_eq!(
        render(
            FieldKind::Bytes,
            &Value::Raw(vec![0xde, 0xad, 0xbe, 0xef]),
            P
        ),
        Ok(json!("3q2+7w=="))
    );
    assert_eq!(render(FieldKind::Bytes, &Value::EmptyLob, P), Ok(json!("")));
    assert_eq!(
        render(FieldKind::Text, &Value::Unavailable, P),
        Ok(json!(P))
    );
    assert!(render(FieldKind::Text, &num("1"), P).is_err());
    assert_eq!(render(FieldKind::Int8, &Value::Null, P), Ok(json!(null)));
}

#[test]
fn lob_skip_leaves_lob_fields_out() {
    let mut builder = RecordBuilder::new(settings(&[
        ("cdc.lob.mode", "skip"),
        ("value.converter.schemas.enable", "false"),
    ]));
    let layout = all_types_layout(TableId::new("APP", "ALL_TYPES"));
    let commit = commit(0, None, 1);
    let change = change_record(
        &commit,
        &layout,
        0,
        ChangeOp::Insert,
        None,
        Some(all_types_row(1)),
        None,
    );
    let records = builder
        .records(&engine_change(change), RecordContext::default())
        .unwrap();
    let value: serde_json::Value =
        serde_json::from_slice(records[0].value.as_ref().unwrap()).unwrap();
    let after = value["after"].as_object().unwrap();
    for lob in ["NOTES", "DOC", "XMLDOC", "SECRET"] {
        assert!(!after.contains_key(lob), "{lob}");
    }
    assert!(after.contains_key("PAYLOAD"));
}

#[test]
fn keys_by_precedence() {
    let layout = |key: Vec<&str>, source| {
        std::sync::Arc::new(cdc_core::table::TableLayout {
            table: TableId::new("APP", "T"),
            version: 1,
            valid_from: cdc_core::Scn(1),
            columns: vec![
                ColumnDef::new("A", 1, ColumnType::Varchar2).not_null(),
                ColumnDef::new("B", 2, ColumnType::Number).with_precision(Some(5), Some(0)),
            ],
            key: key.into_iter().map(str::to_owned).collect(),
            key_source: source,
            supplemental: Default::default(),
            segment: Vec::new(),
        })
    };
    use cdc_connect_bridge::{BridgeError, KeyPlan, TableFormat};
    use cdc_core::table::KeySource;
    let s = settings(&[]);
    let pk = TableFormat::prepare(&s, layout(vec!["A"], KeySource::PrimaryKey)).unwrap();
    assert!(
        matches!(pk.key, KeyPlan::Columns { source: KeySource::PrimaryKey, ref columns } if columns == &[0])
    );
    let unique = TableFormat::prepare(&s, layout(vec!["A"], KeySource::UniqueIndex)).unwrap();
    assert!(
        matches!(unique.key, KeyPlan::Columns { source: KeySource::UniqueIndex, ref columns } if columns == &[0])
    );
    let configured = settings(&[("cdc.key.columns", "APP.T:B")]);
    let k = TableFormat::prepare(&configured, layout(vec!["A"], KeySource::PrimaryKey)).unwrap();
    assert!(
        matches!(k.key, KeyPlan::Columns { source: KeySource::Configured, ref columns } if columns == &[1])
    );
    let bad = settings(&[("cdc.key.columns", "APP.T:NOPE")]);
    assert!(matches!(
        TableFormat::prepare(&bad, layout(vec![], KeySource::None)),
        Err(BridgeError::BadKeyColumn { .. })
    ));
    let none = layout(vec![], KeySource::None);
    let err = TableFormat::prepare(&s, none.clone()).unwrap_err();
    assert_eq!(err.code(), cdc_core::CdcCode::Decode);
    assert!(err.to_string().contains("APP.T"), "{err}");
    let rowid = settings(&[("cdc.key.missing", "rowid")]);
    assert_eq!(
        TableFormat::prepare(&rowid, none.clone()).unwrap().key,
        KeyPlan::RowId
    );
    let nokey = settings(&[("cdc.key.missing", "none")]);
    let f = TableFormat::prepare(&nokey, none).unwrap();
    assert_eq!(f.key, KeyPlan::None);
    assert!(f.key_schema.is_none());
}

#[test]
fn avro_name_adjustment_and_collisions() {
    let s = settings(&[
        ("cdc.topic.prefix", "my-shop"),
        ("cdc.schema.name.adjustment.mode", "avro"),
        ("cdc.field.name.adjustment.mode", "avro"),
    ]);
    let layout = std::sync::Arc::new(cdc_core::table::TableLayout {
        table: TableId::new("APP", "1ST"),
        version: 1,
        valid_from: cdc_core::Scn(1),
        columns: vec![
            ColumnDef::new("ID", 1, ColumnType::Number).not_null(),
            ColumnDef::new("A-B", 2, ColumnType::Varchar2),
            ColumnDef::new("A_B", 3, ColumnType::Varchar2),
        ],
        key: vec!["ID".into()],
        key_source: cdc_core::table::KeySource::PrimaryKey,
        supplemental: Default::default(),
        segment: Vec::new(),
    });
    let err = cdc_connect_bridge::TableFormat::prepare(&s, layout.clone()).unwrap_err();
    assert_eq!(err.code(), cdc_core::CdcCode::NameCollision);
    let unicode = settings(&[
        ("cdc.topic.prefix", "my-shop"),
        ("cdc.schema.name.adjustment.mode", "avro"),
        ("cdc.field.name.adjustment.mode", "avro_unicode"),
    ]);
    let f = cdc_connect_bridge::TableFormat::prepare(&unicode, layout).unwrap();
    assert_eq!(f.schema_name, "my_shop.APP._1ST");
    assert_eq!(&*f.topic, "my-shop.APP.1ST");
    let names: Vec<&str> = f.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ID", "A_u002dB", "A_u005fB"]);
}

fn column_type() -> impl Strategy<Value = ColumnDef> {
    let ty = prop_oneof![
        Just(ColumnType::Number),
        Just(ColumnType::Float),
        Just(ColumnType::BinaryFloat),
        Just(ColumnType::BinaryDouble),
        Just(ColumnType::Char),
        Just(ColumnType::Varchar2),
        Just(ColumnType::Clob),
        Just(ColumnType::Raw),
        Just(ColumnType::Blob),
        Just(ColumnType::Date),
        Just(ColumnType::Timestamp),
        Just(ColumnType::TimestampTz),
        Just(ColumnType::TimestampLtz),
        Just(ColumnType::IntervalYm),
        Just(ColumnType::IntervalDs),
        Just(ColumnType::RowId),
        Just(ColumnType::XmlType),
        Just(ColumnType::Json),
    ];
    (
        ty,
        proptest::option::of(0u16..40),
        proptest::option::of(-5i16..12),
    )
        .prop_map(|(ty, p, s)| ColumnDef::new("C", 1, ty).with_precision(p, s))
}

fn any_value() -> impl Strategy<Value = Value> {
    let datetime = (
        -4712i16..=9999,
        1u8..=12,
        1u8..=28,
        0u8..24,
        0u8..60,
        0u8..60,
        0u32..1_000_000_000,
    )
        .prop_filter_map("year 0", |(y, mo, d, h, mi, s, n)| {
            cdc_core::value::OracleDateTime::new(y, mo, d, h, mi, s, n)
        });
    prop_oneof![
        Just(Value::Null),
        (any::<i128>(), -130i16..130)
            .prop_map(|(u, s)| Value::Number(Decimal::new(u % 10i128.pow(38), s))),
        any::<f32>().prop_map(Value::BinaryFloat),
        any::<f64>().prop_map(Value::BinaryDouble),
        ".{0,20}".prop_map(Value::Text),
        proptest::collection::vec(any::<u8>(), 0..20).prop_map(Value::Raw),
        datetime.clone().prop_map(Value::Date),
        datetime.clone().prop_map(Value::Timestamp),
        (datetime.clone(), -840i16..840)
            .prop_map(|(d, o)| Value::TimestampTz(d, TimeZone::Offset(o))),
        datetime.prop_map(Value::TimestampLtz),
        any::<i64>().prop_map(Value::IntervalYm),
        any::<i64>().prop_map(|n| Value::IntervalDs(i128::from(n).into())),
        "[A-Za-z0-9+/]{18}".prop_map(Value::RowId),
        Just(Value::EmptyLob),
        Just(Value::Unavailable),
        Just(Value::Unsupported),
    ]
}

proptest! {
    #[test]
    fn any_value_of_any_column_renders_valid_json(
        column in column_type(),
        value in any_value(),
        decimal in prop_oneof![Just(DecimalMode::Precise), Just(DecimalMode::String), Just(DecimalMode::Double)],
        temporal in prop_oneof![Just(TemporalMode::Adaptive), Just(TemporalMode::IsoString)],
    ) {
        let kind = field_kind(&column, decimal, temporal);
        if let Ok(json) = render(kind, &value, P) {
            // valid JSON of the same shape (floats re-read within rounding)
            let back: serde_json::Value = serde_json::from_str(&json.to_string()).unwrap();
            prop_assert_eq!(back.is_number(), json.is_number());
            prop_assert_eq!(back.is_string(), json.is_string());
        }
    }

    /// The text written without a tree is byte for byte the tree's, and fails alike.
    #[test]
    fn written_values_are_the_rendered_values_serialized(
        column in column_type(),
        value in any_value(),
        decimal in prop_oneof![Just(DecimalMode::Precise), Just(DecimalMode::String), Just(DecimalMode::Double)],
        temporal in prop_oneof![Just(TemporalMode::Adaptive), Just(TemporalMode::IsoString)],
    ) {
        let kind = field_kind(&column, decimal, temporal);
        let mut written = b"[".to_vec();
        let result = write_rendered(&mut written, kind, &value, P);
        match render(kind, &value, P) {
            Ok(json) => {
                prop_assert_eq!(result, Ok(()));
                prop_assert_eq!(String::from_utf8(written).unwrap(), format!("[{json}"));
            }
            Err(error) => {
                prop_assert_eq!(result, Err(error));
                prop_assert_eq!(written, b"[".to_vec());
            }
        }
    }

    #[test]
    fn written_images_are_the_built_images_serialized(
        values in proptest::collection::vec(any_value(), 27),
        order in Just(()).prop_perturb(|_, mut rng| {
            let mut columns: Vec<u16> = (0..30).collect();
            // shuffled, some left out, some unknown (27..30), sometimes one given twice
            for i in (1..columns.len()).rev() {
                columns.swap(i, (rng.next_u32() as usize) % (i + 1));
            }
            columns.truncate(20 + (rng.next_u32() as usize) % 10);
            if rng.next_u32() % 4 == 0 && columns.len() > 1 {
                columns[1] = columns[0];
            }
            columns
        }),
        unknown in any::<bool>(),
    ) {
        let layout = all_types_layout(TableId::new("APP", "ALL_TYPES"));
        let format = TableFormat::prepare(&settings(&[]), layout).unwrap();
        let image: Vec<ColumnValue> = order
            .iter()
            .filter(|&&c| unknown || c < 27)
            .map(|&c| ColumnValue {
                column: c,
                value: values.get(usize::from(c)).cloned().unwrap_or(Value::Null),
            })
            .collect();
        let mut written = Vec::new();
        let result = format.write_image(&mut written, &image, P);
        match format.image(&image, P) {
            Ok(json) => {
                prop_assert!(result.is_ok());
                prop_assert_eq!(String::from_utf8(written).unwrap(), json.to_string());
            }
            Err(error) => prop_assert_eq!(result.err().map(|e| e.to_string()), Some(error.to_string())),
        }
    }

    #[test]
    fn whole_records_of_any_row_are_valid_json(values in proptest::collection::vec(any_value(), 27)) {
        let mut builder = RecordBuilder::new(settings(&[]));
        let layout = all_types_layout(TableId::new("APP", "ALL_TYPES"));
        let commit = commit(0, None, 1);
        let mut row: Vec<ColumnValue> = values
            .into_iter()
            .enumerate()
            .map(|(i, value)| ColumnValue { column: i as u16, value })
            .collect();
        row[0].value = num("7");
        let change = change_record(&commit, &layout, 0, ChangeOp::Insert, None, Some(row), None);
        if let Ok(records) = builder.records(&engine_change(change), RecordContext::default()) {
            for r in records {
                if let Some(v) = r.value {
                    let _: serde_json::Value = serde_json::from_slice(&v).unwrap();
                }
            }
        }
    }
}

/// A matching value of each type always renders.
#[test]
fn matching_values_always_render() {
    let row = all_types_row(1);
    let layout = all_types_layout(TableId::new("APP", "ALL_TYPES"));
    for (column, cv) in layout.columns.iter().zip(&row) {
        for decimal in [
            DecimalMode::Precise,
            DecimalMode::String,
            DecimalMode::Double,
        ] {
            for temporal in [TemporalMode::Adaptive, TemporalMode::IsoString] {
                let kind = field_kind(column, decimal, temporal);
                assert!(
                    render(kind, &cv.value, P).is_ok(),
                    "{} {kind:?}",
                    column.name
                );
            }
        }
    }
}

proptest! {
    /// Any date-time (the fields as stored, not checked for a real date) in the form `format!`
    /// gives: the year padded to four digits after its sign, the fraction without trailing
    /// zeros.
    #[test]
    fn iso_local_writes_as_format_does(
        year in any::<i16>(), month in 0u8..=99, day in 0u8..=99, hour in 0u8..=99,
        minute in 0u8..=99, second in 0u8..=99, nanos in prop_oneof![Just(0u32), 0u32..1_000_000_000],
    ) {
        let dt = cdc_core::value::OracleDateTime { year, month, day, hour, minute, second, nanos };
        let sign = if year < 0 { "-" } else { "" };
        let mut expected = format!(
            "{sign}{:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}",
            year.unsigned_abs()
        );
        if nanos != 0 {
            expected.push('.');
            expected.push_str(format!("{nanos:09}").trim_end_matches('0'));
        }
        prop_assert_eq!(iso_local(&dt), expected);
    }
}
