//! Out-of-row LOB values as LogMiner shows them (observed on Oracle 23ai; `docs/simulator.md`,
//! the LOB rows of "Reference behaviours and the simulator"): an INSERT with locators and the
//! placeholder ROWID, INTERNAL (code 9) and LOB_WRITE rows per column, the locator UPDATE with
//! the real ROWID; DBMS_LOB calls on existing rows as LOB_WRITE / LOB_TRIM / LOB_ERASE rows
//! with the real ROWID; BasicFile storage adds INTERNAL + LOB_TRIM after the writes. The engine's
//! query leaves LOB rows out unless it asks for them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use cdc_core::{MinedRow, Operation, Value};
use cdc_logminer::decode::{
    ColumnFilter, DecodeOptions, DecodeTable, Decoded, LobOp, decode_row, join_continuations,
};
use cdc_logminer::sim::source::{mine_all, mine_all_with};
use cdc_logminer::sim::{Scenario, SimSource, TruthTransaction, operation_name};
use cdc_logminer::source::RedoSource;
use serde_json::json;

const PLACEHOLDER: &str = "AAAAAAAAAAAAAAAAAA";

fn blob() -> Vec<u8> {
    (0..4500u32).map(|i| (i * 7 % 256) as u8).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `é` is one character of a CLOB and two bytes of its UTF-16 storage: 2 100 of them do not fit
/// in the row (3 964 bytes).
fn note() -> String {
    "é".repeat(2100)
}

fn scenario(basicfile: bool) -> Scenario {
    let text = json!({
        "name": "out_of_row_lobs_arrive_as_lob_rows",
        "database": {
            "seed": 5,
            "basicfile_lobs": basicfile,
            "tables": [{
                "owner": "APP", "name": "FILES",
                "columns": [
                    {"name": "ID", "type": "NUMBER(10)"},
                    {"name": "NAME", "type": "VARCHAR2(40)"},
                    {"name": "DATA", "type": "BLOB"},
                    {"name": "NOTE", "type": "CLOB"}
                ],
                "primary_key": ["ID"]
            }]
        },
        "events": [
            {"event": "insert", "session": "S1", "table": "APP.FILES",
             "values": {"ID": 1, "NAME": "one", "DATA": hex(&blob()), "NOTE": note()}},
            {"event": "insert", "session": "S1", "table": "APP.FILES",
             "values": {"ID": 2, "NAME": "two", "DATA": "00ff", "NOTE": "small"}},
            {"event": "commit", "session": "S1"},
            {"event": "lob_write", "session": "S2", "table": "APP.FILES", "where": {"ID": 2},
             "column": "NOTE", "offset": 8, "value": "XYZ"},
            {"event": "lob_erase", "session": "S2", "table": "APP.FILES", "where": {"ID": 1},
             "column": "NOTE", "amount": 3, "offset": 2},
            {"event": "lob_trim", "session": "S2", "table": "APP.FILES", "where": {"ID": 1},
             "column": "DATA", "length": 10},
            {"event": "commit", "session": "S2"}
        ]
    });
    Scenario::from_json(&text.to_string()).unwrap()
}

fn play(basicfile: bool) -> (SimSource, Vec<MinedRow>) {
    let mut source = scenario(basicfile).play().unwrap();
    let rows = mine_all(&mut source, &|_| true, &[]).unwrap();
    // a 2 000-byte BLOB chunk is 4 000 hex digits: its LOB_WRITE row continues in CSF rows
    assert!(
        rows.iter()
            .any(|r| r.csf && r.operation == Operation::LobWrite)
    );
    (source, join_continuations(rows).unwrap())
}

fn sql(r: &MinedRow) -> &str {
    r.sql_redo.as_deref().unwrap_or("")
}

/// (OPERATION as 23ai names it, ROW_ID is the placeholder) of a transaction's data rows.
fn shape(rows: &[&MinedRow]) -> Vec<(&'static str, bool)> {
    rows.iter()
        .map(|r| (operation_name(r), r.row_id.as_deref() == Some(PLACEHOLDER)))
        .collect()
}

fn data_rows(rows: &[MinedRow], first_txn: bool) -> Vec<&MinedRow> {
    let xids: Vec<_> = rows
        .iter()
        .filter(|r| r.operation == Operation::Commit)
        .map(|r| r.xid)
        .collect();
    let xid = if first_txn { xids[0] } else { xids[1] };
    rows.iter()
        .filter(|r| r.xid == xid && r.data_obj.is_some())
        .collect()
}

#[test]
fn an_insert_of_out_of_row_values_writes_lob_rows_between_insert_and_locator_update() {
    let (_, rows) = play(false);
    let first = data_rows(&rows, true);
    let expected_first_row = [
        ("INSERT", true),
        ("INTERNAL", true),
        ("LOB_WRITE", true),
        ("LOB_WRITE", true),
        ("LOB_WRITE", true),
        ("INTERNAL", true),
        ("LOB_WRITE", true),
        ("LOB_WRITE", true),
        ("UPDATE", false),
    ];
    assert_eq!(shape(&first[..9]), expected_first_row);
    // the second row's values fit in the row: INSERT with locators, then the UPDATE writes them
    assert_eq!(shape(&first[9..]), [("INSERT", true), ("UPDATE", false)]);

    assert!(sql(first[0]).ends_with("values ('1','one',EMPTY_BLOB(),EMPTY_CLOB())"));
    // INTERNAL rows: code 9, STATUS 0, no SQL_REDO
    assert_eq!(first[1].operation.code(), 9);
    assert_eq!((first[1].status, first[1].sql_redo.as_deref()), (0, None));
    // LOB_WRITE: STATUS 2, a PL/SQL block locating the row by its non-LOB columns
    let w = first[2];
    assert_eq!(w.status, 2);
    assert_eq!(w.info.as_deref(), Some("LOB sql_redo not re-executable"));
    assert!(sql(w).starts_with("DECLARE \n loc_b BLOB;"), "{}", sql(w));
    assert!(sql(w).contains(
        "\nBEGIN\n select \"DATA\" into loc_b from \"APP\".\"FILES\" where \"ID\" = '1' and \"NAME\" = 'one' for update;\n"
    ));
    assert!(sql(w).contains(&format!("buf_b := HEXTORAW('{}');", hex(&blob()[..2000]))));
    assert!(sql(w).contains("dbms_lob.write(loc_b, 2000, 1, buf_b);"));
    assert!(sql(w).ends_with("END;"));
    assert!(sql(first[3]).contains("dbms_lob.write(loc_b, 2000, 2001, buf_b);"));
    assert!(sql(first[4]).contains("dbms_lob.write(loc_b, 500, 4001, buf_b);"));
    // text amounts and offsets count characters, not bytes
    assert!(sql(first[6]).contains("dbms_lob.write(loc_c, 2000, 1, buf_c);"));
    assert!(sql(first[7]).contains(&format!(
        "buf_c := '{}';\n  dbms_lob.write(loc_c, 100, 2001, buf_c);",
        "é".repeat(100)
    )));
    // the locator UPDATE names the out-of-row columns with their locators
    assert_eq!(
        sql(first[8]),
        "update \"APP\".\"FILES\" set \"DATA\" = EMPTY_BLOB(), \"NOTE\" = EMPTY_CLOB() where \"ID\" = '1' and \"NAME\" = 'one'"
    );
    assert_eq!(
        sql(first[10]),
        "update \"APP\".\"FILES\" set \"DATA\" = HEXTORAW('00ff'), \"NOTE\" = 'small' where \"ID\" = '2' and \"NAME\" = 'two'"
    );
    // every LOB row is a redo record of its own: RS_IDs rise, SSNs are distinct
    for pair in first.windows(2) {
        assert!(pair[0].rs_id < pair[1].rs_id);
        assert_ne!(pair[0].ssn, pair[1].ssn);
    }
}

#[test]
fn dbms_lob_calls_on_existing_rows_carry_the_real_rowid() {
    let (source, rows) = play(false);
    let second = data_rows(&rows, false);
    assert_eq!(
        shape(&second),
        [
            ("INTERNAL", false),
            ("LOB_WRITE", false),
            ("LOB_ERASE", false),
            ("LOB_TRIM", false)
        ]
    );
    assert!(sql(second[1]).contains("where \"ID\" = '2' and \"NAME\" = 'two' for update;"));
    assert!(sql(second[1]).contains("buf_c := 'XYZ';\n  dbms_lob.write(loc_c, 3, 8, buf_c);"));
    assert!(sql(second[2]).contains(" amt := 3;\n  dbms_lob.erase(loc_c, amt, 2);"));
    assert!(sql(second[3]).contains("select \"DATA\" into loc_b"));
    assert!(sql(second[3]).contains("  dbms_lob.trim(loc_b, 10);"));
    for r in &second[1..] {
        assert_eq!(r.status, 2);
    }

    // the ground truth: the calls are UPDATEs that only LOB rows carry
    let truth: &[TruthTransaction] = &source.database().truth().transactions;
    assert_eq!(truth.len(), 2);
    let calls = &truth[1].changes;
    assert_eq!(calls.len(), 3);
    assert!(calls.iter().all(|c| c.lob_only));
    assert!(truth[0].changes.iter().all(|c| !c.lob_only));
    let column = |i: usize, name: &str| {
        calls[i]
            .after
            .as_ref()
            .unwrap()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    // a write past the end pads with spaces
    assert_eq!(column(0, "NOTE"), Value::Text("small  XYZ".into()));
    assert_eq!(
        column(1, "NOTE"),
        Value::Text(format!("é   {}", "é".repeat(2096)))
    );
    assert_eq!(column(2, "DATA"), Value::Raw(blob()[..10].to_vec()));
}

#[test]
fn basicfile_storage_trims_after_the_writes() {
    let (_, rows) = play(true);
    let first = data_rows(&rows, true);
    let names: Vec<&str> = first.iter().map(|r| operation_name(r)).collect();
    assert_eq!(
        names[..12],
        [
            "INSERT",
            "INTERNAL",
            "LOB_WRITE",
            "LOB_WRITE",
            "LOB_WRITE",
            "INTERNAL",
            "LOB_TRIM",
            "INTERNAL",
            "LOB_WRITE",
            "LOB_WRITE",
            "INTERNAL",
            "LOB_TRIM"
        ]
    );
    assert!(sql(first[6]).contains("dbms_lob.trim(loc_b, 4500);"));
    assert!(sql(first[11]).contains("dbms_lob.trim(loc_c, 2100);"));
    let (_, securefile) = play(false);
    assert!(
        !data_rows(&securefile, true)
            .iter()
            .any(|r| r.operation == Operation::LobTrim)
    );
}

#[test]
fn the_decoder_classifies_every_lob_row() {
    let (mut source, rows) = play(true);
    let tables: Vec<_> = source
        .resolve_objects(&|_| true)
        .unwrap()
        .into_iter()
        .map(|o| o.table)
        .collect();
    let layout = source.table_layouts(&tables).unwrap().remove(0);
    let table = DecodeTable::new(Arc::new(layout), ColumnFilter::none()).unwrap();
    let mut seen = Vec::new();
    for row in rows.iter().filter(|r| r.data_obj.is_some()) {
        let decoded = decode_row(row, Some(&table), &DecodeOptions::default()).unwrap();
        let want = match row.operation {
            Operation::SelLobLocator => Some(LobOp::SelectLocator),
            Operation::LobWrite => Some(LobOp::Write),
            Operation::LobTrim => Some(LobOp::Trim),
            Operation::LobErase => Some(LobOp::Erase),
            _ => None,
        };
        if let Some(op) = want {
            assert_eq!(decoded, Decoded::Lob(op), "{row:?}");
            seen.push(op);
        }
    }
    for op in [
        LobOp::SelectLocator,
        LobOp::Write,
        LobOp::Trim,
        LobOp::Erase,
    ] {
        assert!(seen.contains(&op), "no {op:?} row");
    }
}

#[test]
fn the_engines_query_leaves_lob_rows_out_unless_asked() {
    let mut source = scenario(false).play().unwrap();
    let mine = |source: &mut SimSource, lob_rows: bool| {
        mine_all_with(source, &|_| true, |query| query.lob_rows = lob_rows).unwrap()
    };
    let is_lob = |r: &MinedRow| {
        matches!(
            r.operation,
            Operation::SelLobLocator
                | Operation::LobWrite
                | Operation::LobTrim
                | Operation::LobErase
        )
    };
    let without = join_continuations(mine(&mut source, false)).unwrap();
    let with = join_continuations(mine(&mut source, true)).unwrap();
    assert!(!without.iter().any(is_lob));
    assert_eq!(with.iter().filter(|r| is_lob(r)).count(), 7 + 4);
    let dml = |rows: &[MinedRow]| rows.iter().filter(|r| !is_lob(r)).count();
    assert_eq!(dml(&without), dml(&with));
}
