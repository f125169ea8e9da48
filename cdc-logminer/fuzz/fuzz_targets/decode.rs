//! libFuzzer target for the SQL_REDO decoder: any bytes, read as (lossy) UTF-8 SQL_REDO, go
//! through the parser, the converter (with a layout of every type), the DDL classifier and the
//! inspection tool. A panic, a hang or a quadratic blow-up is a finding.
#![no_main]

use std::sync::{Arc, OnceLock};

use cdc_core::change::{MinedRow, Operation};
use cdc_core::position::{RsId, Scn, Xid};
use cdc_core::table::{ColumnDef, ColumnType, KeySource, TableId, TableLayout};
use cdc_logminer::decode::{
    DecodeOptions, DecodeTable, classify_ddl, decode_row, inspect::inspect_line, parse_statement,
};
use libfuzzer_sys::fuzz_target;

fn table() -> &'static DecodeTable {
    static TABLE: OnceLock<DecodeTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let types = [
            ("A", ColumnType::Number),
            ("B", ColumnType::Varchar2),
            ("C", ColumnType::NVarchar2),
            ("D", ColumnType::Date),
            ("E", ColumnType::Timestamp),
            ("F", ColumnType::TimestampTz),
            ("G", ColumnType::TimestampLtz),
            ("H", ColumnType::IntervalYm),
            ("I", ColumnType::IntervalDs),
            ("J", ColumnType::Raw),
            ("K", ColumnType::Clob),
            ("L", ColumnType::Blob),
            ("M", ColumnType::BinaryFloat),
            ("N", ColumnType::BinaryDouble),
            ("O", ColumnType::Char),
            ("P", ColumnType::RowId),
            ("Q", ColumnType::XmlType),
        ];
        let layout = TableLayout {
            table: TableId::new("O", "T"),
            version: 1,
            valid_from: Scn(1),
            columns: types
                .iter()
                .enumerate()
                .map(|(i, (n, t))| ColumnDef::new(*n, i as u16 + 1, t.clone()))
                .collect(),
            key: vec!["A".into()],
            key_source: KeySource::PrimaryKey,
            supplemental: Default::default(),
            segment: Vec::new(),
        };
        DecodeTable::without_exclusions(Arc::new(layout))
    })
}

fuzz_target!(|data: &[u8]| {
    // the first byte picks the operation and status, the rest is the SQL_REDO
    let (selector, rest) = data.split_first().map_or((0, data), |(s, r)| (*s, r));
    let sql = String::from_utf8_lossy(rest);
    let _ = parse_statement(&sql);
    let _ = classify_ddl(&sql);
    let code = [1u16, 2, 3, 5, 9, 10, 255][usize::from(selector % 7)];
    let mut row = MinedRow::new(
        Scn(1),
        RsId::new(1, 2, 3),
        1,
        Xid::new(1, 2, 3),
        Operation::from_code(code),
    );
    row.status = if selector & 0x80 != 0 { 2 } else { 0 };
    row.sql_redo = Some(sql.clone().into_owned());
    let options = DecodeOptions {
        log_sensitive_data: selector & 0x40 != 0,
    };
    let _ = decode_row(&row, Some(table()), &options);
    let line = serde_json::json!({ "sql_redo": sql, "operation_code": code }).to_string();
    let _ = inspect_line(&line);
});
