//! Every SQL_REDO shape LogMiner is documented or observed to write, decoded (`docs/decoding.md`
//! lists the shapes; `docs/simulator.md`, "Reference behaviours and the simulator", the literals).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_logminer::test_support as decode_support;

use std::sync::Arc;

use cdc_core::change::{ChangeOp, ColumnValue, MinedRow, Operation, RowChange, status};
use cdc_core::table::{ColumnType, TableLayout};
use cdc_core::value::{Decimal, OracleDateTime, TimeZone, Value};
use cdc_logminer::decode::{
    DdlKind, DecodeOptions, DecodeReason, DecodeTable, Decoded, LobOp, OtherDdl, XmlDocOp,
    decode_row, join_continuations, reassemble,
};
use decode_support::{layout, row};

fn decode(layout: &Arc<TableLayout>, code: u16, sql: &str) -> Result<RowChange, DecodeReason> {
    decode_mined(
        layout,
        &row(code, &layout.table.owner, &layout.table.table, sql),
    )
}

fn decode_mined(layout: &Arc<TableLayout>, r: &MinedRow) -> Result<RowChange, DecodeReason> {
    let table = DecodeTable::without_exclusions(Arc::clone(layout));
    match decode_row(r, Some(&table), &DecodeOptions::default()) {
        Ok(Decoded::Change(change)) => Ok(change),
        Ok(other) => panic!("not a change: {other:?}"),
        Err(e) => Err(e.reason().clone()),
    }
}

fn image(layout: &TableLayout, values: &[(&str, Value)]) -> Vec<ColumnValue> {
    let mut v: Vec<ColumnValue> = values
        .iter()
        .map(|(name, value)| ColumnValue {
            column: layout.column_index(name).unwrap() as u16,
            value: value.clone(),
        })
        .collect();
    v.sort_by_key(|c| c.column);
    v
}

fn num(text: &str) -> Value {
    Value::Number(Decimal::parse(text).unwrap())
}

fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

fn dt(y: i16, mo: u8, d: u8, h: u8, mi: u8, s: u8, n: u32) -> OracleDateTime {
    OracleDateTime::new(y, mo, d, h, mi, s, n).unwrap()
}

fn all_types() -> Arc<TableLayout> {
    layout(
        "APP",
        "ALL_TYPES",
        &[
            ("ID", ColumnType::Number),
            ("C", ColumnType::Char),
            ("V", ColumnType::Varchar2),
            ("NC", ColumnType::NChar),
            ("NV", ColumnType::NVarchar2),
            ("N", ColumnType::Number),
            ("BF", ColumnType::BinaryFloat),
            ("BD", ColumnType::BinaryDouble),
            ("D", ColumnType::Date),
            ("TS", ColumnType::Timestamp),
            ("TSTZ", ColumnType::TimestampTz),
            ("TSLTZ", ColumnType::TimestampLtz),
            ("IYM", ColumnType::IntervalYm),
            ("IDS", ColumnType::IntervalDs),
            ("R", ColumnType::Raw),
            ("CL", ColumnType::Clob),
            ("BL", ColumnType::Blob),
            ("FL", ColumnType::Float),
            ("RID", ColumnType::RowId),
            ("X", ColumnType::XmlType),
            ("J", ColumnType::Json),
        ],
        &["ID"],
    )
}

#[test]
fn insert_of_every_type_as_logminer_writes_it() {
    let l = all_types();
    let sql = r#"insert into "APP"."ALL_TYPES"("ID","C","V","NC","NV","N","BF","BD","D","TS","TSTZ","TSLTZ","IYM","IDS","R","CL","BL","FL","RID","X","J") values ('1','abc       ','it''s ''quoted''',UNISTR('nch\00E1r     '),UNISTR('\00fc\d83d\de00'),'-42.5','1.50000005E+010','0',TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS'),TO_TIMESTAMP('2026-03-29 01:30:00.123456000'),TO_TIMESTAMP_TZ('2026-03-29 01:30:00.123456789 +05:30'),TO_TIMESTAMP_TZ('2026-03-29 01:30:00.000000000'),TO_YMINTERVAL('+0012-03'),TO_DSINTERVAL('+00005 04:03:02.123456'),HEXTORAW('deadbeef00ff'),EMPTY_CLOB(),EMPTY_BLOB(),'1.5E+10','AAAS5bAAEAAAAFdAAA',NULL,/* JSON */ EMPTY_BLOB());"#;
    let change = decode(&l, 1, sql).unwrap();
    assert_eq!(change.op, ChangeOp::Insert);
    assert_eq!(change.before, None);
    assert_eq!(change.schema_version, 3);
    let expected = image(
        &l,
        &[
            ("ID", num("1")),
            ("C", text("abc       ")),
            ("V", text("it's 'quoted'")),
            ("NC", text("nchár     ")),
            ("NV", text("ü😀")),
            ("N", num("-42.50")),
            ("BF", Value::BinaryFloat(15_000_000_512.0)),
            ("BD", Value::BinaryDouble(0.0)),
            ("D", Value::Date(dt(2026, 2, 28, 13, 45, 59, 0))),
            (
                "TS",
                Value::Timestamp(dt(2026, 3, 29, 1, 30, 0, 123_456_000)),
            ),
            (
                "TSTZ",
                Value::TimestampTz(
                    dt(2026, 3, 29, 1, 30, 0, 123_456_789),
                    TimeZone::Offset(330),
                ),
            ),
            ("TSLTZ", Value::TimestampLtz(dt(2026, 3, 29, 1, 30, 0, 0))),
            ("IYM", Value::IntervalYm(147)),
            (
                "IDS",
                Value::IntervalDs(
                    ((5 * 86_400 + 4 * 3600 + 3 * 60 + 2) * 1_000_000_000 + 123_456_000).into(),
                ),
            ),
            ("R", Value::Raw(vec![0xde, 0xad, 0xbe, 0xef, 0x00, 0xff])),
            ("CL", Value::EmptyLob),
            ("BL", Value::EmptyLob),
            ("FL", num("15000000000")),
            ("RID", Value::RowId("AAAS5bAAEAAAAFdAAA".into())),
            ("X", Value::Null),
            ("J", Value::EmptyLob),
        ],
    );
    assert_eq!(change.after.as_ref(), Some(&expected));
    // BINARY_FLOAT keeps f32 precision: the text rounds to the nearest f32
    assert_eq!(
        expected[6].value,
        Value::BinaryFloat("1.50000005E+010".parse::<f32>().unwrap())
    );
}

#[test]
fn update_after_image_is_before_overlaid_with_set() {
    let l = layout(
        "APP",
        "ORDERS",
        &[
            ("ID", ColumnType::Number),
            ("STATUS", ColumnType::Varchar2),
            ("QTY", ColumnType::Number),
            ("NOTE", ColumnType::Varchar2),
            ("DOC", ColumnType::Clob),
        ],
        &["ID"],
    );
    // ALL COLUMNS logging: the WHERE is the full before image (LOBs never appear there)
    let sql = r#"update "APP"."ORDERS" set "STATUS" = 'SHIPPED', "NOTE" = NULL where "ID" = '7' and "STATUS" = 'NEW' and "QTY" = '3' and "NOTE" = 'fragile'"#;
    let c = decode(&l, 3, sql).unwrap();
    assert_eq!(c.op, ChangeOp::Update);
    assert_eq!(
        c.before,
        Some(image(
            &l,
            &[
                ("ID", num("7")),
                ("STATUS", text("NEW")),
                ("QTY", num("3")),
                ("NOTE", text("fragile"))
            ]
        ))
    );
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("ID", num("7")),
                ("STATUS", text("SHIPPED")),
                ("QTY", num("3")),
                ("NOTE", Value::Null)
            ]
        ))
    );
    // PK-only logging: key + the changed columns' old values; a SET column not in WHERE is added
    let sql = r#"update "APP"."ORDERS" set "QTY" = '4', "DOC" = 'small clob text' where "ID" = '7' and "QTY" = '3';"#;
    let c = decode(&l, 3, sql).unwrap();
    assert_eq!(
        c.before,
        Some(image(&l, &[("ID", num("7")), ("QTY", num("3"))]))
    );
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("ID", num("7")),
                ("QTY", num("4")),
                ("DOC", text("small clob text"))
            ]
        ))
    );
    // no WHERE at all (DBZ-3235)
    let c = decode(&l, 3, r#"update "APP"."ORDERS" set "QTY" = '1'"#).unwrap();
    assert_eq!(c.before, Some(vec![]));
    assert_eq!(c.after, Some(image(&l, &[("QTY", num("1"))])));
    // alias form (DBZ-4194)
    let c = decode(
        &l,
        3,
        r#"update "APP"."ORDERS" a set a."QTY" = '2' where a."ID" = '7'"#,
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(&l, &[("ID", num("7")), ("QTY", num("2"))]))
    );
    // a savepoint undo resets a LOB with EMPTY_CLOB()
    let c = decode(
        &l,
        3,
        r#"update "APP"."ORDERS" set "DOC" = EMPTY_CLOB() where "ID" = '7'"#,
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(&l, &[("ID", num("7")), ("DOC", Value::EmptyLob)]))
    );
}

#[test]
fn delete_insert_images_and_is_null() {
    let l = layout(
        "APP",
        "T",
        &[
            ("ID", ColumnType::Number),
            ("NAME", ColumnType::Varchar2),
            ("D", ColumnType::Date),
        ],
        &["ID"],
    );
    let c = decode(&l, 2, r#"delete from "APP"."T" where "ID" = '5' and "NAME" IS NULL and "D" = TO_DATE('2020-01-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS');"#).unwrap();
    assert_eq!(c.op, ChangeOp::Delete);
    assert_eq!(c.after, None);
    assert_eq!(
        c.before,
        Some(image(
            &l,
            &[
                ("ID", num("5")),
                ("NAME", Value::Null),
                ("D", Value::Date(dt(2020, 1, 1, 0, 0, 0, 0)))
            ]
        ))
    );
    // Oracle logs '' as NULL
    let c = decode(
        &l,
        1,
        r#"insert into "APP"."T"("ID","NAME","D") values ('6',NULL,NULL)"#,
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[("ID", num("6")), ("NAME", Value::Null), ("D", Value::Null)]
        ))
    );
    // spaces some fixtures add around the lists
    let c = decode(
        &l,
        1,
        "insert into \"APP\".\"T\" (\"ID\", \"NAME\")\n values ( '6' , 'x' ) ;",
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(&l, &[("ID", num("6")), ("NAME", text("x"))]))
    );
}

#[test]
fn rowid_predicates_and_undo_rows() {
    let l = layout(
        "APP",
        "T",
        &[("ID", ColumnType::Number), ("NAME", ColumnType::Varchar2)],
        &["ID"],
    );
    // default options: ROWID in the statement and a trailing ';'
    let mut r = row(
        3,
        "APP",
        "T",
        r#"update "APP"."T" set "NAME" = 'b' where "NAME" = 'a' and ROWID = 'AAAS5bAAEAAAAFdAAA';"#,
    );
    r.row_id = None;
    let c = decode_mined(&l, &r).unwrap();
    assert_eq!(c.row_id.as_deref(), Some("AAAS5bAAEAAAAFdAAA"));
    assert_eq!(c.before, Some(image(&l, &[("NAME", text("a"))])));
    // the undo of an insert in a savepoint rollback names only the ROWID (even under
    // NO_ROWID_IN_STMT)
    let mut r = row(
        2,
        "APP",
        "T",
        r#"delete from "APP"."T" where ROWID = 'AAAS5bAAEAAAAFdAAB'"#,
    );
    r.rollback = true;
    r.row_id = Some("AAAS5bAAEAAAAFdAAB".into());
    let c = decode_mined(&l, &r).unwrap();
    assert_eq!(
        (c.op, c.before, c.after),
        (ChangeOp::Delete, Some(vec![]), None)
    );
    assert_eq!(c.row_id.as_deref(), Some("AAAS5bAAEAAAAFdAAB"));
    // the ROW_ID column wins over the statement (LOB inserts carry the placeholder there)
    let mut r = row(
        1,
        "APP",
        "T",
        r#"insert into "APP"."T"("ID","NAME") values ('1','x')"#,
    );
    r.row_id = Some("AAAAAAAAAAAAAAAAAA".into());
    assert_eq!(
        decode_mined(&l, &r).unwrap().row_id.as_deref(),
        Some("AAAAAAAAAAAAAAAAAA")
    );
}

#[test]
fn identifiers_with_spaces_quotes_case_and_non_ascii() {
    let l = layout(
        "Sales Dept",
        "Örder \"Lines\"",
        &[
            ("line no", ColumnType::Number),
            ("Ünit", ColumnType::Varchar2),
            ("mixedCase", ColumnType::Varchar2),
        ],
        &["line no"],
    );
    let sql = r#"insert into "Sales Dept"."Örder ""Lines"""("line no","Ünit","mixedCase") values ('1','Stück','a')"#;
    let c = decode(&l, 1, sql).unwrap();
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("line no", num("1")),
                ("Ünit", text("Stück")),
                ("mixedCase", text("a"))
            ]
        ))
    );
    // names are case-sensitive as stored: "MIXEDCASE" is not "mixedCase"
    let bad = decode(
        &l,
        3,
        r#"update "Sales Dept"."Örder ""Lines""" set "MIXEDCASE" = 'b'"#,
    );
    assert_eq!(
        bad,
        Err(DecodeReason::UnknownColumn {
            column: "MIXEDCASE".into()
        })
    );
}

#[test]
fn concatenation_unistr_and_literal_pipes() {
    let l = layout(
        "APP",
        "T",
        &[
            ("ID", ColumnType::Number),
            ("NV", ColumnType::NVarchar2),
            ("V", ColumnType::Varchar2),
            ("R", ColumnType::Raw),
        ],
        &["ID"],
    );
    // long NVARCHAR2 split into UNISTR parts with any spacing (DBZ-3892); a surrogate pair
    // split across two parts still pairs; '||' inside a quoted string is text (DBZ-5521)
    let sql = r#"insert into "APP"."T"("ID","NV","V","R") values ('1',UNISTR('ab\d83d')||  UNISTR('\de00c') || UNISTR('\\x'),'a || b' || 'c''d',HEXTORAW('00ff') || HEXTORAW('10'))"#;
    let c = decode(&l, 1, sql).unwrap();
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("ID", num("1")),
                ("NV", text("ab😀c\\x")),
                ("V", text("a || bc'd")),
                ("R", Value::Raw(vec![0, 0xff, 0x10]))
            ]
        ))
    );
}

#[test]
fn unsupported_type_literal_and_unquoted_numbers() {
    let l = layout(
        "APP",
        "T",
        &[
            ("ID", ColumnType::Number),
            ("G", ColumnType::Other("SDO_GEOMETRY".into())),
            ("B", ColumnType::Boolean),
        ],
        &["ID"],
    );
    let c = decode(
        &l,
        1,
        r#"insert into "APP"."T"("ID","G","B") values (42,Unsupported Type,Unsupported Type)"#,
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("ID", num("42")),
                ("G", Value::Unsupported),
                ("B", Value::Unsupported)
            ]
        ))
    );
}

#[test]
fn temporal_forms_of_the_session_nls() {
    let l = layout(
        "APP",
        "T",
        &[
            ("ID", ColumnType::Number),
            ("D", ColumnType::Date),
            ("TS", ColumnType::Timestamp),
            ("TZ", ColumnType::TimestampTz),
            ("LTZ", ColumnType::TimestampLtz),
        ],
        &["ID"],
    );
    // SYYYY sign position, trailing dot for a zero fraction, a region zone, an LTZ with offset
    let sql = r#"insert into "APP"."T"("ID","D","TS","TZ","LTZ") values ('1',TO_DATE(' 2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS'),TO_TIMESTAMP('2020-02-01 00:00:00.'),TO_TIMESTAMP_TZ('-4712-01-01 00:00:00.5 Europe/Paris'),TO_TIMESTAMP_TZ('2026-01-01 01:00:00.000000000 +05:30'))"#;
    let c = decode(&l, 1, sql).unwrap();
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("ID", num("1")),
                ("D", Value::Date(dt(2026, 2, 28, 13, 45, 59, 0))),
                ("TS", Value::Timestamp(dt(2020, 2, 1, 0, 0, 0, 0))),
                (
                    "TZ",
                    Value::TimestampTz(
                        dt(-4712, 1, 1, 0, 0, 0, 500_000_000),
                        TimeZone::Region("Europe/Paris".into())
                    )
                ),
                ("LTZ", Value::TimestampLtz(dt(2025, 12, 31, 19, 30, 0, 0))),
            ]
        ))
    );
    // the default NLS_DATE_FORMAT loses the time of day: refused, not guessed
    let e = decode(
        &l,
        1,
        r#"insert into "APP"."T"("ID","D") values ('1',TO_DATE('28-FEB-26', 'DD-MON-RR'))"#,
    );
    assert!(
        matches!(e, Err(DecodeReason::Conversion { ref column, .. }) if column == "D"),
        "{e:?}"
    );
}

#[test]
fn status_2_generic_names_are_a_dictionary_mismatch() {
    let l = layout(
        "APP",
        "T",
        &[
            ("ID", ColumnType::Number),
            ("NAME", ColumnType::Varchar2),
            ("ADDED", ColumnType::Number),
        ],
        &["ID"],
    );
    // after ALTER TABLE, online-catalog rows of the old layout (observed on Oracle 23ai)
    let mut r = row(
        1,
        "APP",
        "T",
        r#"insert into "APP"."T"("COL 1","COL 2") values (HEXTORAW('c102'),HEXTORAW('78797a'));"#,
    );
    r.status = status::INVALID_SQL;
    assert_eq!(decode_mined(&l, &r), Err(DecodeReason::DictionaryMismatch));
    // real names but HEXTORAW for a NUMBER
    let mut r = row(
        3,
        "APP",
        "T",
        r#"update "APP"."T" set "NAME" = HEXTORAW('78') where "ID" = HEXTORAW('c102')"#,
    );
    r.status = status::INVALID_SQL;
    assert_eq!(decode_mined(&l, &r), Err(DecodeReason::DictionaryMismatch));
    // no dictionary at all
    let r = row(
        1,
        "UNKNOWN",
        "OBJ# 45522",
        r#"insert into "UNKNOWN"."OBJ# 45522"("COL 1","COL 2") values (HEXTORAW('c229'),HEXTORAW('c102'))"#,
    );
    assert_eq!(decode_mined(&l, &r), Err(DecodeReason::DictionaryMismatch));
    let r = row(1, "APP", "T", "Dictionary Version Mismatch");
    assert_eq!(decode_mined(&l, &r), Err(DecodeReason::DictionaryMismatch));
    // a temporary table's rows carry a comment instead of a statement (ORA-UTIL12)
    for op in [1, 2, 3] {
        let r = row(op, "APP", "T", "/* No SQL_REDO for temporary tables */");
        assert_eq!(decode_mined(&l, &r), Err(DecodeReason::TemporaryTable));
    }
    // STATUS 2 without the signature is not trusted either
    let mut r = row(1, "APP", "T", r#"insert into "APP"."T"("ID") values ('1')"#);
    r.status = status::INVALID_SQL;
    assert_eq!(decode_mined(&l, &r), Err(DecodeReason::UnexpectedStatus));
    // and the error is CDC-6001 (the lag case: a dictionary replay or nothing, never the
    // DLQ), while the engine knows no version it may decode such rows with
    let table = DecodeTable::without_exclusions(Arc::clone(&l));
    let mut r = row(
        1,
        "APP",
        "T",
        r#"insert into "APP"."T"("COL 1") values (HEXTORAW('c102'))"#,
    );
    r.status = status::INVALID_SQL;
    let e = decode_row(&r, Some(&table), &DecodeOptions::default()).unwrap_err();
    assert!(e.is_dictionary_mismatch());
    assert_eq!(cdc_core::error::CdcError::from(e).code().id(), "CDC-6001");
}

#[test]
fn csf_continuations_are_joined_verbatim() {
    let l = layout(
        "APP",
        "T",
        &[("ID", ColumnType::Number), ("BIG", ColumnType::Varchar2)],
        &["ID"],
    );
    let big = "x".repeat(12_000);
    let sql = format!(r#"insert into "APP"."T"("ID","BIG") values ('1','{big}');"#);
    // cut at arbitrary byte positions, even inside a quoted literal or the ''
    let cuts = [4000, 8000, 12_000];
    let mut pieces = Vec::new();
    let mut from = 0;
    for (i, &cut) in cuts.iter().chain(std::iter::once(&sql.len())).enumerate() {
        let mut p = row(1, "APP", "T", &sql[from..cut]);
        p.csf = i < cuts.len();
        pieces.push(p);
        from = cut;
    }
    let joined = reassemble(&pieces).unwrap();
    assert!(!joined.csf);
    assert_eq!(joined.sql_redo.as_deref(), Some(sql.as_str()));
    let c = decode_mined(&l, &joined).unwrap();
    assert_eq!(
        c.after,
        Some(image(&l, &[("ID", num("1")), ("BIG", text(&big))]))
    );
    // a step: pieces joined in place, other rows untouched, order kept
    let before = row(1, "APP", "T", r#"insert into "APP"."T"("ID") values ('0')"#);
    let mut step = vec![before.clone()];
    step.extend(pieces.iter().cloned());
    step.push(before.clone());
    let joined_step = join_continuations(step).unwrap();
    assert_eq!(joined_step.len(), 3);
    assert_eq!(joined_step[1].sql_redo.as_deref(), Some(sql.as_str()));
    // a CSF=1 row that reaches the decoder unjoined, or a step cut inside a statement
    assert_eq!(decode_mined(&l, &pieces[0]), Err(DecodeReason::Continued));
    assert_eq!(
        join_continuations(pieces[..2].to_vec())
            .unwrap_err()
            .reason(),
        &DecodeReason::IncompleteContinuation
    );
    let mut other_tx = pieces.clone();
    other_tx[1].xid = cdc_core::position::Xid::new(9, 9, 9);
    assert_eq!(
        reassemble(&other_tx).unwrap_err().reason(),
        &DecodeReason::ContinuationMismatch
    );
}

#[test]
fn non_dml_rows_are_classified() {
    let decode_code = |code: u16, sql: Option<&str>| {
        let mut r = row(code, "APP", "T", "");
        r.sql_redo = sql.map(str::to_owned);
        decode_row(&r, None, &DecodeOptions::default()).unwrap()
    };
    let lob_write = "DECLARE \n loc_c CLOB; \n buf_c VARCHAR2(6426);\nBEGIN\n select \"DOC\" into loc_c from \"APP\".\"T\" where \"ID\" = '1' for update;\n buf_c := 'abc';\n  dbms_lob.write(loc_c, 3, 1, buf_c);\nEND;";
    assert_eq!(decode_code(10, Some(lob_write)), Decoded::Lob(LobOp::Write));
    assert_eq!(
        decode_code(11, Some("dbms_lob.trim(loc_c, 3);")),
        Decoded::Lob(LobOp::Trim)
    );
    assert_eq!(
        decode_code(29, Some("dbms_lob.erase(loc_c, 3, 1);")),
        Decoded::Lob(LobOp::Erase)
    );
    // 23ai labels code 9 INTERNAL with SQL_REDO NULL
    assert_eq!(decode_code(9, None), Decoded::Lob(LobOp::SelectLocator));
    assert_eq!(decode_code(0, None), Decoded::Internal);
    assert_eq!(
        decode_code(
            68,
            Some(r#"XML DOC BEGIN:  select "X" from "APP"."T" where "ID" = '1'"#)
        ),
        Decoded::XmlDoc(XmlDocOp::Begin)
    );
    assert_eq!(
        decode_code(70, Some("XML_REDO := '<a>1</a>'")),
        Decoded::XmlDoc(XmlDocOp::Write)
    );
    assert_eq!(decode_code(71, None), Decoded::XmlDoc(XmlDocOp::End));
    assert_eq!(
        decode_code(6, Some("set transaction read write;")),
        Decoded::Control(Operation::Start)
    );
    assert_eq!(
        decode_code(7, Some("commit;")),
        Decoded::Control(Operation::Commit)
    );
    assert_eq!(
        decode_code(36, Some("rollback;")),
        Decoded::Control(Operation::Rollback)
    );
    assert_eq!(decode_code(255, Some("Unsupported")), Decoded::Unsupported);
    assert_eq!(decode_code(34, None), Decoded::Other(Operation::MissingScn));
    assert_eq!(decode_code(28, None), Decoded::Other(Operation::Other(28)));
    let ddl = |sql: &str| match decode_code(5, Some(sql)) {
        Decoded::Ddl(info) => info,
        other => panic!("{other:?}"),
    };
    let create = ddl(r#"create table "APP"."NEW_T" ("ID" number primary key, "V" varchar2(10));"#);
    assert_eq!(create.kind, DdlKind::Create);
    assert_eq!(
        create.table.map(|t| (t.owner, t.name)),
        Some((Some("APP".into()), "NEW_T".into()))
    );
    assert_eq!(ddl("drop table app.t purge").kind, DdlKind::Drop);
    assert_eq!(ddl("ALTER TABLE APP.T RENAME TO T2").kind, DdlKind::Rename);
    assert_eq!(
        ddl("alter table app.t add (c number)").kind,
        DdlKind::AlterColumns
    );
    assert_eq!(ddl("truncate table app.t").kind, DdlKind::Truncate);
    assert_eq!(
        ddl("alter table app.t drop partition p1 update global indexes").kind,
        DdlKind::PartitionMaintenance
    );
    assert_eq!(
        ddl("create index app.i on app.t(c)").kind,
        DdlKind::Other(OtherDdl::Index)
    );
    assert_eq!(
        ddl("whatever this is").kind,
        DdlKind::Other(OtherDdl::Unrecognised)
    );
}

#[test]
fn statements_that_do_not_match_their_row_are_refused() {
    let l = layout("APP", "T", &[("ID", ColumnType::Number)], &["ID"]);
    assert_eq!(
        decode(&l, 2, r#"insert into "APP"."T"("ID") values ('1')"#),
        Err(DecodeReason::OperationMismatch {
            statement: cdc_logminer::decode::StatementKind::Insert
        })
    );
    assert_eq!(
        decode(&l, 1, r#"insert into "APP"."OTHER"("ID") values ('1')"#),
        Err(DecodeReason::TableMismatch)
    );
    assert_eq!(
        decode(&l, 1, r#"insert into "APP"."T"("NOPE") values ('1')"#),
        Err(DecodeReason::UnknownColumn {
            column: "NOPE".into()
        })
    );
    assert_eq!(
        decode(
            &l,
            3,
            r#"update "APP"."T" set "ID" = '2' where "ID" = '1' and "ID" = '1'"#
        ),
        Err(DecodeReason::DuplicateColumn {
            column: "ID".into()
        })
    );
    assert!(matches!(
        decode(&l, 1, "/* a comment that is no statement */"),
        Err(DecodeReason::Syntax(_))
    ));
    let mut r = row(1, "APP", "T", "");
    r.sql_redo = None;
    assert_eq!(decode_mined(&l, &r), Err(DecodeReason::MissingSqlRedo));
    let table = DecodeTable::without_exclusions(Arc::clone(&l));
    let r = row(1, "APP", "T", r#"insert into "APP"."T"("ID") values ('1')"#);
    assert_eq!(
        decode_row(&r, None, &DecodeOptions::default())
            .unwrap_err()
            .reason(),
        &DecodeReason::NoSchemaVersion
    );
    assert!(decode_row(&r, Some(&table), &DecodeOptions::default()).is_ok());
    // STATUS 5 (assembly required): XMLType(:1) of XML stored as CLOB decodes, XML unavailable
    let lx = layout(
        "APP",
        "X",
        &[("ID", ColumnType::Number), ("F3", ColumnType::XmlType)],
        &["ID"],
    );
    let mut r = row(
        3,
        "APP",
        "X",
        r#"update "APP"."X" a set a."F3" = XMLType(:1) where a."ID" = '1'"#,
    );
    r.status = status::ASSEMBLY_REQUIRED_SQL;
    let c = decode_mined(&lx, &r).unwrap();
    assert_eq!(
        c.after,
        Some(image(&lx, &[("ID", num("1")), ("F3", Value::Unavailable)]))
    );
}

/// A LONG or LONG RAW value over LogMiner's threshold arrives as the text `'LONG DATA'`, not
/// the value (`docs/decoding.md`, "Literals"): the column is unavailable, never published as
/// that text.
#[test]
fn long_data_placeholder_is_unavailable_not_text() {
    let l = layout(
        "APP",
        "L",
        &[
            ("ID", ColumnType::Number),
            ("NOTE", ColumnType::Long),
            ("PIC", ColumnType::LongRaw),
        ],
        &["ID"],
    );
    let c = decode(
        &l,
        1,
        r#"insert into "APP"."L"("ID","NOTE","PIC") values ('1','LONG DATA','LONG DATA');"#,
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("ID", num("1")),
                ("NOTE", Value::Unavailable),
                ("PIC", Value::Unavailable)
            ]
        ))
    );
    let c = decode(
        &l,
        3,
        r#"update "APP"."L" set "NOTE" = 'LONG DATA' where "ID" = '1';"#,
    )
    .unwrap();
    assert_eq!(c.before, Some(image(&l, &[("ID", num("1"))])));
    assert_eq!(
        c.after,
        Some(image(&l, &[("ID", num("1")), ("NOTE", Value::Unavailable)]))
    );
    // short values are in the statement and decode as they are, padding kept
    let c = decode(
        &l,
        1,
        r#"insert into "APP"."L"("ID","NOTE","PIC") values ('2','LONG DATA ',HEXTORAW('0aff'));"#,
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("ID", num("2")),
                ("NOTE", text("LONG DATA ")),
                ("PIC", Value::Raw(vec![0x0a, 0xff]))
            ]
        ))
    );
}

/// A statement that names its table without an owner is read with the row's SEG_OWNER: it is
/// the table of the schema version when SEG_OWNER is its owner, another table otherwise.
#[test]
fn a_statement_without_an_owner_takes_the_rows_seg_owner() {
    let l = layout(
        "APP",
        "T",
        &[("ID", ColumnType::Number), ("NAME", ColumnType::Varchar2)],
        &["ID"],
    );
    let statements = [
        (1, r#"insert into "T"("ID","NAME") values ('1','a')"#),
        (1, r#"insert into T("ID","NAME") values ('1','a')"#),
        (
            3,
            r#"update "T" set "NAME" = 'b' where "ID" = '1' and "NAME" = 'a'"#,
        ),
        (
            3,
            r#"update "T" a set a."NAME" = 'b' where a."ID" = '1' and a."NAME" = 'a'"#,
        ),
        (2, r#"delete from "T" where "ID" = '1' and "NAME" = 'a'"#),
    ];
    for (code, sql) in statements {
        let qualified =
            sql.replacen(r#""T""#, r#""APP"."T""#, 1)
                .replacen("into T(", r#"into "APP"."T"("#, 1);
        let expected = decode(&l, code, &qualified).unwrap();
        assert_eq!(decode(&l, code, sql), Ok(expected), "{sql}");
        let mut other = row(code, "OTHER", "T", sql);
        assert_eq!(
            decode_mined(&l, &other),
            Err(DecodeReason::TableMismatch),
            "{sql}"
        );
        other.seg_owner = None;
        assert_eq!(
            decode_mined(&l, &other),
            Err(DecodeReason::TableMismatch),
            "{sql}"
        );
    }
}

/// The OSON marker `/* JSON */` in front of a value is its type hint (DBZ dbz#1884): a JSON
/// column's value is its empty LOB or its OSON bytes (unsupported: not decoded), in every
/// position and spacing LogMiner may write it; the marker is not taken for a comment.
#[test]
fn the_json_marker_is_kept_as_the_values_type_hint() {
    let l = layout(
        "APP",
        "J",
        &[
            ("ID", ColumnType::Number),
            ("DOC", ColumnType::Json),
            ("NOTE", ColumnType::Varchar2),
        ],
        &["ID"],
    );
    let c = decode(
        &l,
        1,
        r#"insert into "APP"."J"("ID","DOC","NOTE") values ('1',/* JSON */ EMPTY_BLOB(),'n')"#,
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(
            &l,
            &[
                ("ID", num("1")),
                ("DOC", Value::EmptyLob),
                ("NOTE", text("n"))
            ]
        ))
    );
    for value in [
        "/* JSON */ HEXTORAW('ff4a5a01')",
        "/*JSON*/HEXTORAW('ff4a5a01')",
        "/*  json  */  HEXTORAW('ff4a') || HEXTORAW('5a01')",
    ] {
        let c = decode(
            &l,
            3,
            &format!(r#"update "APP"."J" set "DOC" = {value} where "ID" = '1'"#),
        )
        .unwrap();
        assert_eq!(
            c.after,
            Some(image(&l, &[("ID", num("1")), ("DOC", Value::Unsupported)])),
            "{value}"
        );
    }
    // any other comment is still whitespace
    let c = decode(
        &l,
        3,
        r#"update "APP"."J" set "NOTE" = /* a note */ 'x' where "ID" = '1'"#,
    )
    .unwrap();
    assert_eq!(
        c.after,
        Some(image(&l, &[("ID", num("1")), ("NOTE", text("x"))]))
    );
    // the hint says JSON: a column the dictionary says is text or RAW does not take it (with
    // the marker dropped as a comment, the RAW column took the OSON bytes as its value)
    let raw = layout(
        "APP",
        "R",
        &[("ID", ColumnType::Number), ("B", ColumnType::Raw)],
        &["ID"],
    );
    assert!(matches!(
        decode(
            &raw,
            1,
            r#"insert into "APP"."R"("ID","B") values ('1',/* JSON */ HEXTORAW('ff4a'))"#
        ),
        Err(DecodeReason::Conversion { column, .. }) if column == "B"
    ));
    assert!(matches!(
        decode(
            &l,
            3,
            r#"update "APP"."J" set "NOTE" = /* JSON */ HEXTORAW('ff4a') where "ID" = '1'"#
        ),
        Err(DecodeReason::Conversion { column, .. }) if column == "NOTE"
    ));
}
