//! Decode errors (CDC-3001) name the table, XID, SCN, RS_ID, SSN, operation and reason, and no
//! column value unless `cdc.log.sensitive.data=true`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_logminer::test_support as decode_support;

use std::sync::Arc;

use cdc_core::error::{CdcCode, CdcError};
use cdc_core::table::ColumnType;
use cdc_logminer::decode::{DecodeOptions, DecodeReason, DecodeTable, decode_row};
use decode_support::{layout, row};

fn table() -> DecodeTable {
    DecodeTable::without_exclusions(layout(
        "APP",
        "T",
        &[
            ("ID", ColumnType::Number),
            ("AMOUNT", ColumnType::Number),
            ("NOTE", ColumnType::Varchar2),
        ],
        &["ID"],
    ))
}

#[test]
fn conversion_errors_name_the_row_and_not_the_value() {
    let t = table();
    let r = row(
        1,
        "APP",
        "T",
        r#"insert into "APP"."T"("ID","AMOUNT","NOTE") values ('1','12,5','private note')"#,
    );
    let e = decode_row(&r, Some(&t), &DecodeOptions::default()).unwrap_err();
    assert!(
        matches!(e.reason(), DecodeReason::Conversion { column, data_type, .. } if column == "AMOUNT" && data_type == "NUMBER")
    );
    let text = e.to_string();
    for part in [
        "APP.T",
        "XID 5.12.900",
        "SCN 1234567",
        "RS_ID 0x000004.0000964e.009c",
        "SSN 7",
        "INSERT (1)",
        "\"AMOUNT\" (NUMBER)",
        "not a decimal number",
    ] {
        assert!(text.contains(part), "{part} missing from {text}");
    }
    for value in ["12,5", "private note"] {
        assert!(!text.contains(value) && !format!("{e:?}").contains(value));
    }
    let cdc: CdcError = e.into();
    assert_eq!(cdc.code(), CdcCode::Decode);
    assert!(
        cdc.to_string()
            .starts_with("[CDC-3001] cannot decode the row (table APP.T")
    );
    assert!(std::error::Error::source(&cdc).is_some());
}

#[test]
fn syntax_errors_give_the_offset_and_with_the_flag_an_excerpt() {
    let t = table();
    let sql = r#"insert into "APP"."T"("ID","NOTE") values ('1','secret' oops)"#;
    let r = row(1, "APP", "T", sql);
    let e = decode_row(&r, Some(&t), &DecodeOptions::default()).unwrap_err();
    let DecodeReason::Syntax(syntax) = e.reason() else {
        panic!("{e:?}")
    };
    assert_eq!(&sql[syntax.offset..], "oops)");
    assert!(!e.to_string().contains("secret"));
    let loud = decode_row(
        &r,
        Some(&t),
        &DecodeOptions {
            log_sensitive_data: true,
        },
    )
    .unwrap_err();
    assert!(loud.sensitive_detail().unwrap().contains("'secret' oops"));
}

#[test]
fn errors_are_shareable_across_threads_and_typed() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<cdc_logminer::decode::DecodeError>();
    assert_send_sync::<DecodeTable>();
    let _ = Arc::new(table());
}

/// Literal texts, valid and malformed, each decoded as the value of a column of its type in an
/// insert, an update's SET and WHERE and a delete's WHERE: a valid one gives its value, a
/// malformed one the row's conversion error naming the column, never a value.
#[test]
fn literals_are_checked_as_they_are_read() {
    use cdc_core::value::{OracleDateTime, TimeZone, Value};
    use cdc_logminer::decode::Decoded;

    let dt = |y, mo, d, h, mi, s, n| Some(OracleDateTime::new(y, mo, d, h, mi, s, n).unwrap());
    let date = |v: Option<OracleDateTime>| Some(Value::Date(v.unwrap()));
    let ts = |v: Option<OracleDateTime>| Some(Value::Timestamp(v.unwrap()));
    let raw = |b: &[u8]| Some(Value::Raw(b.to_vec()));
    let text = |s: &str| Some(Value::Text(s.to_owned()));
    // (type, literal, Some(value) when valid)
    let cases: Vec<(ColumnType, &str, Option<Value>)> = vec![
        // HEXTORAW: an even count of hex digits, in either case
        (
            ColumnType::Raw,
            "HEXTORAW('deadbeef00ff')",
            raw(&[0xde, 0xad, 0xbe, 0xef, 0, 0xff]),
        ),
        (
            ColumnType::Raw,
            "HEXTORAW('DEADbeef')",
            raw(&[0xde, 0xad, 0xbe, 0xef]),
        ),
        (
            ColumnType::Raw,
            "HEXTORAW('00') || HEXTORAW('ff')",
            raw(&[0, 0xff]),
        ),
        (ColumnType::Raw, "HEXTORAW('abc')", None),
        (ColumnType::Raw, "HEXTORAW('a')", None),
        (ColumnType::Raw, "HEXTORAW('zz')", None),
        (ColumnType::Raw, "HEXTORAW('0g')", None),
        (ColumnType::Raw, "HEXTORAW('de ad')", None),
        (ColumnType::Raw, "HEXTORAW('0x12')", None),
        (ColumnType::Raw, "HEXTORAW('é0')", None),
        (ColumnType::Raw, "HEXTORAW('00') || HEXTORAW('f')", None),
        (ColumnType::Blob, "HEXTORAW('f')", None),
        // a malformed HEXTORAW fails the row even where the value is not published
        (ColumnType::Json, "HEXTORAW('zz')", None),
        (
            ColumnType::Other("SDO_GEOMETRY".into()),
            "HEXTORAW('abc')",
            None,
        ),
        (
            ColumnType::Json,
            "HEXTORAW('ff4a')",
            Some(Value::Unsupported),
        ),
        // UNISTR: \XXXX a UTF-16 code unit (surrogates paired), \\ a backslash
        (ColumnType::NVarchar2, r"UNISTR('nch\00E1r')", text("nchár")),
        (ColumnType::NVarchar2, r"UNISTR('\d83d\de00')", text("😀")),
        (
            ColumnType::NVarchar2,
            r"UNISTR('\d83d') || UNISTR('\de00')",
            text("😀"),
        ),
        (ColumnType::NVarchar2, r"UNISTR('a\\b')", text(r"a\b")),
        (ColumnType::NChar, r"UNISTR('\0041  ')", text("A  ")),
        (ColumnType::NVarchar2, r"UNISTR('\00e')", None),
        (ColumnType::NVarchar2, r"UNISTR('abc\')", None),
        (ColumnType::NVarchar2, r"UNISTR('\0')", None),
        (ColumnType::NVarchar2, r"UNISTR('\zz00')", None),
        (ColumnType::NVarchar2, r"UNISTR('\00g0')", None),
        (ColumnType::NVarchar2, r"UNISTR('\00e x')", None),
        (ColumnType::NVarchar2, r"UNISTR('\d83d')", None),
        (ColumnType::NVarchar2, r"UNISTR('\de00')", None),
        (ColumnType::NVarchar2, r"UNISTR('\d83dx')", None),
        (ColumnType::NVarchar2, r"UNISTR('\d83d\d83d')", None),
        (ColumnType::NVarchar2, r"UNISTR('\d83d') || 'x'", None),
        (ColumnType::Clob, r"UNISTR('\00')", None),
        // TO_DATE: the text in the format given, which is the session's NLS_DATE_FORMAT
        (
            ColumnType::Date,
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            date(dt(2026, 2, 28, 13, 45, 59, 0)),
        ),
        (
            ColumnType::Date,
            "TO_DATE(' 2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS')",
            date(dt(2026, 2, 28, 13, 45, 59, 0)),
        ),
        (
            ColumnType::Date,
            "TO_DATE('-4712-01-01 00:00:00', 'SYYYY-MM-DD HH24:MI:SS')",
            date(dt(-4712, 1, 1, 0, 0, 0, 0)),
        ),
        (
            ColumnType::Date,
            "TO_DATE('2024-02-29 23:59:59', 'YYYY-MM-DD HH24:MI:SS')",
            date(dt(2024, 2, 29, 23, 59, 59, 0)),
        ),
        (
            ColumnType::Date,
            "TO_DATE('9999-12-31 23:59:59', 'YYYY-MM-DD HH24:MI:SS')",
            date(dt(9999, 12, 31, 23, 59, 59, 0)),
        ),
        (ColumnType::Date, "TO_DATE('28-FEB-26', 'DD-MON-RR')", None),
        (
            ColumnType::Date,
            "TO_DATE('2026-02-28 13:45:59', 'DD-MON-RR')",
            None,
        ),
        // YYYY has no sign position; SYYYY writes a blank or '-', never '+'
        (
            ColumnType::Date,
            "TO_DATE('-4712-01-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE(' 2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('+2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        // fields out of range
        (
            ColumnType::Date,
            "TO_DATE('2026-02-29 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('1900-02-29 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-04-31 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-13-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-00-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-01-00 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('0000-01-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-01-01 24:00:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-01-01 23:60:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-01-01 23:59:60', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        // not the format's layout
        (
            ColumnType::Date,
            "TO_DATE('2026-2-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026/02/28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-02-28T13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-02-28 13:45', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('2026-02-28', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_DATE('20260-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        // a DATE has no fraction, whatever the column holding it
        (
            ColumnType::Date,
            "TO_DATE('2026-02-28 13:45:59.5', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Timestamp,
            "TO_DATE('2026-02-28 13:45:59.5', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Timestamp,
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            ts(dt(2026, 2, 28, 13, 45, 59, 0)),
        ),
        (
            ColumnType::Date,
            "TO_TIMESTAMP('2026-02-28 13:45:59.5')",
            None,
        ),
        (
            ColumnType::Date,
            "TO_TIMESTAMP('2026-02-28 13:45:59.000000000')",
            date(dt(2026, 2, 28, 13, 45, 59, 0)),
        ),
        // TO_TIMESTAMP: the session's NLS_TIMESTAMP_FORMAT (SYYYY-MM-DD HH24:MI:SS.FF9)
        (
            ColumnType::Timestamp,
            "TO_TIMESTAMP('2026-03-29 01:30:00.123456789')",
            ts(dt(2026, 3, 29, 1, 30, 0, 123_456_789)),
        ),
        (
            ColumnType::Timestamp,
            "TO_TIMESTAMP(' 2026-03-29 01:30:00.')",
            ts(dt(2026, 3, 29, 1, 30, 0, 0)),
        ),
        (
            ColumnType::Timestamp,
            "TO_TIMESTAMP('2026-03-29 01:30:00.1234567891')",
            None,
        ),
        (
            ColumnType::Timestamp,
            "TO_TIMESTAMP('2026-03-29 01:30:00.12a')",
            None,
        ),
        (
            ColumnType::Timestamp,
            "TO_TIMESTAMP('2026-03-29 25:30:00.0')",
            None,
        ),
        (
            ColumnType::Timestamp,
            "TO_TIMESTAMP('2026-03-29 01:30:00 +05:30')",
            None,
        ),
        (
            ColumnType::Timestamp,
            "TO_TIMESTAMP('2026-03-29 01:30:00', 'YYYY-MM-DD HH24:MI:SS')",
            None,
        ),
        (
            ColumnType::Timestamp,
            "TO_TIMESTAMP('+2026-03-29 01:30:00.5')",
            None,
        ),
        // TO_TIMESTAMP_TZ: an offset in range, a zone for WITH TIME ZONE
        (
            ColumnType::TimestampTz,
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.5 -08:00')",
            Some(Value::TimestampTz(
                dt(2026, 3, 29, 1, 30, 0, 500_000_000).unwrap(),
                TimeZone::Offset(-480),
            )),
        ),
        (
            ColumnType::TimestampTz,
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.5 +15:00')",
            None,
        ),
        (
            ColumnType::TimestampTz,
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.5 +05:60')",
            None,
        ),
        (
            ColumnType::TimestampTz,
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.5')",
            None,
        ),
        (
            ColumnType::TimestampTz,
            "TO_TIMESTAMP_TZ('2026-02-30 01:30:00.5 +01:00')",
            None,
        ),
        // the intervals' fixed formats
        (
            ColumnType::IntervalYm,
            "TO_YMINTERVAL('+0012-03')",
            Some(Value::IntervalYm(147)),
        ),
        (ColumnType::IntervalYm, "TO_YMINTERVAL('+0012-12')", None),
        (ColumnType::IntervalYm, "TO_YMINTERVAL('12')", None),
        (
            ColumnType::IntervalDs,
            "TO_DSINTERVAL('+00005 24:00:00')",
            None,
        ),
        (
            ColumnType::IntervalDs,
            "TO_DSINTERVAL('+00005 04:60:00')",
            None,
        ),
        (
            ColumnType::IntervalDs,
            "TO_DSINTERVAL('+00005 04:03:02.1234567890')",
            None,
        ),
        // the OSON marker: JSON (or BLOB) only, its HEXTORAW checked
        (
            ColumnType::Json,
            "/* JSON */ EMPTY_BLOB()",
            Some(Value::EmptyLob),
        ),
        (
            ColumnType::Json,
            "/* JSON */ HEXTORAW('ff4a5a01')",
            Some(Value::Unsupported),
        ),
        (ColumnType::Json, "/* JSON */ HEXTORAW('ff4a5')", None),
        (ColumnType::Json, "/* JSON */ HEXTORAW('ff4z')", None),
        (
            ColumnType::Blob,
            "/* JSON */ HEXTORAW('ff4a')",
            raw(&[0xff, 0x4a]),
        ),
        (ColumnType::Varchar2, "/* JSON */ 'a'", None),
        (ColumnType::Raw, "/* JSON */ HEXTORAW('ff4a')", None),
    ];
    for (ty, literal, expected) in cases {
        let l = layout(
            "APP",
            "T",
            &[("ID", ColumnType::Number), ("C", ty.clone())],
            &["ID"],
        );
        let t = DecodeTable::without_exclusions(Arc::clone(&l));
        let statements = [
            (
                1,
                format!(r#"insert into "APP"."T"("ID","C") values ('1',{literal})"#),
            ),
            (
                3,
                format!(r#"update "APP"."T" set "C" = {literal} where "ID" = '1'"#),
            ),
            (
                3,
                format!(r#"update "APP"."T" set "ID" = '2' where "ID" = '1' and "C" = {literal}"#),
            ),
            (
                2,
                format!(r#"delete from "APP"."T" where "ID" = '1' and "C" = {literal}"#),
            ),
        ];
        for (code, sql) in statements {
            let decoded = decode_row(
                &row(code, "APP", "T", &sql),
                Some(&t),
                &DecodeOptions::default(),
            );
            match (&expected, decoded) {
                (Some(value), Ok(Decoded::Change(change))) => {
                    let image = if code == 2 || sql.contains("\"ID\" = '2'") {
                        change.before
                    } else {
                        change.after
                    };
                    let got = image
                        .unwrap()
                        .into_iter()
                        .find(|c| c.column == 1)
                        .map(|c| c.value);
                    assert_eq!(got.as_ref(), Some(value), "{ty:?} {sql}");
                }
                (None, Err(e)) => {
                    assert!(
                        matches!(e.reason(), DecodeReason::Conversion { column, .. } if column == "C"),
                        "{ty:?} {sql}: {e}"
                    );
                    assert_eq!(CdcError::from(e).code(), CdcCode::Decode);
                }
                (expected, got) => panic!("{ty:?} {sql}: expected {expected:?}, got {got:?}"),
            }
        }
    }
}
