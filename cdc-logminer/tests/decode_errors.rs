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
