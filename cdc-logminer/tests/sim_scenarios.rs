//! The example scenarios play, and the rows they give have the reference's shapes: undo rows,
//! ROLLBACK rows, XIDs per PDB, DDL transactions, STATUS 2 generic rows, DATA_OBJ# per partition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use cdc_core::{ConId, MinedRow, Operation, RsId, Xid};
use cdc_logminer::decode::{ColumnFilter, DecodeOptions, DecodeTable, decode_row};
use cdc_logminer::sim::source::mine_all;
use cdc_logminer::sim::{Scenario, SimSource};
use cdc_logminer::source::{RedoSource, SegmentKind};

fn play(name: &str) -> (SimSource, Vec<MinedRow>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.json"));
    let mut s = Scenario::load(&path).unwrap().play().unwrap();
    let rows = mine_all(&mut s, &|_| true, &[]).unwrap();
    (s, rows)
}

fn sql(r: &MinedRow) -> &str {
    r.sql_redo.as_deref().unwrap_or("")
}

#[test]
fn every_example_scenario_plays() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let scenario = Scenario::load(&path).unwrap();
        assert_eq!(path.file_stem().unwrap().to_str().unwrap(), scenario.name);
        scenario.play().unwrap();
        n += 1;
    }
    assert!(n >= 6);
}

#[test]
fn savepoint_undo_rows() {
    let (s, rows) = play("savepoint_undo_removes_changes");
    let undo: Vec<&MinedRow> = rows.iter().filter(|r| r.rollback).collect();
    assert_eq!(undo.len(), 2);
    // newest first: the update's undo, then the insert's
    assert!(
        sql(undo[0]).starts_with(r#"update "APP"."CUSTOMERS" set "NAME" = 'kept' where ROWID = '"#),
        "{}",
        sql(undo[0])
    );
    assert!(sql(undo[1]).starts_with(r#"delete from "APP"."CUSTOMERS" where ROWID = '"#));
    for u in &undo {
        let original = rows
            .iter()
            .find(|r| !r.rollback && r.ssn == u.ssn && r.xid == u.xid && r.operation.is_dml())
            .unwrap();
        assert_ne!(original.rs_id, u.rs_id, "same SSN, different RS_ID");
        assert_eq!(original.row_id, u.row_id);
    }
    // normal DML: no ROWID predicate, no semicolon, every column in the WHERE clause
    let update = rows
        .iter()
        .find(|r| !r.rollback && sql(r).contains("caf"))
        .unwrap();
    assert_eq!(
        sql(update),
        r#"update "APP"."CUSTOMERS" set "NICK" = UNISTR('caf\00E9') where "ID" = '1' and "NAME" = 'kept' and "CODE" = 'K       ' and "NICK" IS NULL and "BALANCE" IS NULL and "RATIO" IS NULL and "SCORE" IS NULL and "WEIGHT" IS NULL and "BORN" IS NULL and "UPDATED_AT" IS NULL"#
    );
    let truth = &s.database().truth().transactions;
    assert_eq!(truth.len(), 1);
    assert_eq!(
        truth[0].changes.len(),
        2,
        "the undone insert and update are not in the truth"
    );
}

#[test]
fn full_rollback_rows() {
    let (s, rows) = play("full_rollback_publishes_nothing");
    let ops: Vec<(Operation, bool)> = rows
        .iter()
        .filter(|r| r.xid.usn == rows[0].xid.usn)
        .map(|r| (r.operation, r.rollback))
        .collect();
    assert_eq!(
        ops,
        vec![
            (Operation::Start, false),
            (Operation::Insert, false),
            (Operation::Insert, false),
            (Operation::Delete, true),
            (Operation::Delete, true),
            (Operation::Rollback, false),
        ]
    );
    // this scenario asks for the all-zero RS_ID and XIDSQN 0xFFFFFFFF on rollback rows
    let rollback = rows
        .iter()
        .find(|r| r.operation == Operation::Rollback)
        .unwrap();
    assert_eq!(rollback.rs_id, RsId::NONE);
    assert!(
        rows.iter()
            .filter(|r| r.rollback)
            .all(|r| r.xid.sqn == Xid::UNKNOWN_SQN)
    );
    // DATA_OBJ# per partition
    let inserts: Vec<&MinedRow> = rows
        .iter()
        .filter(|r| r.operation == Operation::Insert && !r.rollback)
        .collect();
    assert_ne!(inserts[0].data_obj, inserts[1].data_obj);
    let mut s = s;
    let objects = s.resolve_objects(&|t| t.table == "ORDERS").unwrap();
    assert_eq!(objects.len(), 2);
    assert!(
        objects
            .iter()
            .all(|o| matches!(o.segment, SegmentKind::Partition(_)))
    );
    assert!(
        inserts
            .iter()
            .all(|i| objects.iter().any(|o| Some(o.object) == i.data_obj))
    );
    assert_eq!(s.database().truth().transactions.len(), 1);
    assert_eq!(s.database().truth().rolled_back, 1);
}

#[test]
fn same_xid_live_in_two_pdbs() {
    let (mut s, rows) = play("same_xid_in_two_pdbs");
    let a = rows
        .iter()
        .find(|r| r.operation == Operation::Insert && r.src_con_name.as_deref() == Some("FREEPDB1"))
        .unwrap();
    let b = rows
        .iter()
        .find(|r| r.operation == Operation::Insert && r.src_con_name.as_deref() == Some("FREEPDB2"))
        .unwrap();
    assert_eq!(a.xid, b.xid);
    assert_eq!((a.src_con_id, b.src_con_id), (ConId(3), ConId(4)));
    assert_ne!(a.con_xid(), b.con_xid());
    // IOT rows name the top index segment
    let objects = s.resolve_objects(&|t| t.table == "CODES").unwrap();
    assert!(
        objects
            .iter()
            .all(|o| matches!(&o.segment, SegmentKind::IotTop(n) if n.starts_with("SYS_IOT_TOP_")))
    );
    assert!(
        objects
            .iter()
            .any(|o| o.con == ConId(3) && Some(o.object) == a.data_obj)
    );
    let identity = s.identity().unwrap();
    assert!(identity.is_cdb);
    assert_eq!(identity.open_pdbs.len(), 2);
}

#[test]
fn alter_makes_older_rows_generic() {
    let (mut s, rows) = play("alter_makes_older_rows_generic");
    let ddl: Vec<&MinedRow> = rows
        .iter()
        .filter(|r| r.operation == Operation::Ddl)
        .collect();
    assert_eq!(ddl.len(), 1);
    assert_eq!(ddl[0].info.as_deref(), Some("USER DDL (PlSql=0 RecDep=0)"));
    assert_eq!(
        sql(ddl[0]),
        r#"ALTER TABLE "APP"."DOCS" ADD ("TAGS" VARCHAR2(30))"#
    );
    let ddl_ops: Vec<Operation> = rows
        .iter()
        .filter(|r| r.xid == ddl[0].xid)
        .map(|r| r.operation)
        .collect();
    assert_eq!(
        ddl_ops,
        vec![Operation::Start, Operation::Ddl, Operation::Commit]
    );
    let old = rows
        .iter()
        .find(|r| r.operation == Operation::Insert && r.scn < ddl[0].scn)
        .unwrap();
    assert_eq!(old.status, 2);
    assert_eq!(
        sql(old),
        r#"insert into "APP"."DOCS"("COL 1","COL 2","COL 3") values (HEXTORAW('c229'),HEXTORAW('6265666f72652074686520616c746572'),NULL)"#
    );
    let new = rows
        .iter()
        .find(|r| r.operation == Operation::Insert && r.scn > ddl[0].scn)
        .unwrap();
    assert_eq!(new.status, 0);
    assert!(
        sql(new).contains(r#""TAGS") values ('4001','after',NULL,'new')"#),
        "{}",
        sql(new)
    );
    // the decoder tells the generic row apart
    let layout = s
        .table_layouts(&[old.table().unwrap()])
        .unwrap()
        .pop()
        .unwrap();
    let table = DecodeTable::new(Arc::new(layout), ColumnFilter::none()).unwrap();
    let e = decode_row(old, Some(&table), &DecodeOptions::default()).unwrap_err();
    assert!(e.is_dictionary_mismatch(), "{e}");
    assert!(decode_row(new, Some(&table), &DecodeOptions::default()).is_ok());
}

#[test]
fn excluded_users_are_filtered_in_the_query_but_not_their_control_rows() {
    let (mut s, _) = play("savepoint_undo_removes_changes");
    let rows = mine_all(&mut s, &|_| true, &["APP".to_owned()]).unwrap();
    assert!(rows.iter().all(|r| r.operation.is_transaction_control()));
    assert!(!rows.is_empty());
    // only captured objects
    let rows = mine_all(&mut s, &|t| t.table == "ORDERS", &[]).unwrap();
    assert!(rows.iter().all(|r| !r.operation.is_dml()));
}
