//! The simulator's SQL_REDO, for every shape it produces, parses with the decoder back to the
//! generator's values: replaying the decoded rows (buffered per (container, XID), undo rows
//! removing the latest earlier change with their ROW_ID, applied at COMMIT, dropped at
//! ROLLBACK) rebuilds exactly the rows the simulated database holds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;

use cdc_core::change::ChangeOp;
use cdc_core::{ConId, MinedRow, Operation, TableId, TableLayout, Value, Xid};
use cdc_logminer::decode::{
    ColumnFilter, DecodeOptions, DecodeTable, Decoded, decode_row, join_continuations,
};
use cdc_logminer::sim::source::mine_all;
use cdc_logminer::sim::{SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig};
use cdc_logminer::source::RedoSource;

type State = BTreeMap<(ConId, TableId), BTreeMap<String, BTreeMap<u16, Value>>>;

/// A buffered change: ROW_ID, table, operation, column values.
type Buffered = (String, TableId, ChangeOp, BTreeMap<u16, Value>);

struct Pending {
    changes: Vec<Buffered>,
}

fn run(seed: u64, pdbs: Vec<String>, changes: u64) -> (SimSource, Vec<MinedRow>) {
    let config = SimConfig {
        seed,
        pdbs,
        log_size_bytes: 64 * 1024,
        ..SimConfig::default()
    };
    let db = SimDatabase::new(config).unwrap();
    let workload = Workload::random(WorkloadConfig {
        seed,
        changes,
        ddl_rate: 0.0,
        long_text_rate: 0.05,
        ..WorkloadConfig::default()
    });
    let mut source = SimSource::with_workload(db, workload, 0);
    while source.advance(1000).unwrap() {}
    let rows = mine_all(&mut source, &|_| true, &[]).unwrap();
    (source, rows)
}

fn replay(source: &mut SimSource, rows: Vec<MinedRow>) -> (State, usize) {
    let tables: Vec<TableId> = source
        .resolve_objects(&|_| true)
        .unwrap()
        .into_iter()
        .map(|o| o.table)
        .collect();
    let layouts: BTreeMap<TableId, Arc<TableLayout>> = source
        .table_layouts(&tables)
        .unwrap()
        .into_iter()
        .map(|l| (l.table.clone(), Arc::new(l)))
        .collect();
    let decode_tables: BTreeMap<TableId, DecodeTable> = layouts
        .iter()
        .map(|(id, l)| {
            (
                id.clone(),
                DecodeTable::new(l.clone(), ColumnFilter::none()).unwrap(),
            )
        })
        .collect();
    let rows = join_continuations(rows).unwrap();
    let mut open: BTreeMap<(ConId, Xid), Pending> = BTreeMap::new();
    let mut state: State = BTreeMap::new();
    // LOB values written under the placeholder ROW_ID, until the locator UPDATE names the row
    let mut lob_values: BTreeMap<((ConId, Xid), u16), Value> = BTreeMap::new();
    let mut decoded_dml = 0;
    for row in rows {
        let key = row.con_xid();
        match row.operation {
            Operation::Start => {}
            Operation::Commit => {
                if let Some(p) = open.remove(&(key.con, key.xid)) {
                    for (row_id, table, op, values) in p.changes {
                        let t = state.entry((key.con, table)).or_default();
                        match op {
                            ChangeOp::Delete => {
                                t.remove(&row_id);
                            }
                            _ => {
                                let entry = t.entry(row_id).or_default();
                                entry.extend(values);
                            }
                        }
                    }
                }
            }
            Operation::Rollback => {
                // an unknown XIDSQN names the open transaction of (container, USN, slot)
                let k = open
                    .keys()
                    .find(|(c, x)| *c == key.con && x.usn == row.xid.usn && x.slot == row.xid.slot)
                    .copied();
                if let Some(k) = k {
                    open.remove(&k);
                }
            }
            Operation::SelLobLocator => {
                // 23ai: INTERNAL, STATUS 0, no SQL_REDO
                assert_eq!((row.status, row.sql_redo.as_deref()), (0, None), "{row:?}");
            }
            Operation::LobWrite | Operation::LobTrim | Operation::LobErase => {
                assert_eq!(row.status, 2, "{row:?}");
                assert_eq!(row.info.as_deref(), Some("LOB sql_redo not re-executable"));
                let table = row.table().unwrap();
                assert!(matches!(
                    decode_row(&row, decode_tables.get(&table), &DecodeOptions::default()),
                    Ok(Decoded::Lob(_))
                ));
                let layout = layouts.get(&table).unwrap();
                let (column, call) = lob_call(row.sql_redo.as_deref().unwrap(), layout);
                let xid_key = open_key(&open, &row);
                let pending = open.entry(xid_key).or_insert(Pending {
                    changes: Vec::new(),
                });
                let row_id = row.row_id.clone().unwrap();
                if row_id == "AAAAAAAAAAAAAAAAAA" {
                    // the value of a row being inserted: the locator UPDATE that follows
                    // takes it
                    let value = lob_values
                        .remove(&(xid_key, column))
                        .unwrap_or(Value::EmptyLob);
                    lob_values.insert((xid_key, column), apply_lob(value, call));
                    continue;
                }
                // a LOB of an existing row: the latest change of this transaction to the row,
                // else the committed value
                let latest = pending
                    .changes
                    .iter_mut()
                    .rev()
                    .find(|c| c.0 == row_id)
                    .and_then(|c| c.3.get_mut(&column));
                match latest {
                    Some(v) => *v = apply_lob(v.clone(), call),
                    None => {
                        let committed = state
                            .get(&(key.con, table.clone()))
                            .and_then(|t| t.get(&row_id))
                            .and_then(|r| r.get(&column))
                            .cloned()
                            .unwrap_or(Value::Null);
                        let values = BTreeMap::from([(column, apply_lob(committed, call))]);
                        pending
                            .changes
                            .push((row_id, table, ChangeOp::Update, values));
                    }
                }
            }
            Operation::Insert | Operation::Update | Operation::Delete => {
                assert_eq!(row.status, 0, "{row:?}");
                let table = row.table().unwrap();
                let decoded =
                    decode_row(&row, decode_tables.get(&table), &DecodeOptions::default())
                        .unwrap_or_else(|e| panic!("{e}: {:?}", row.sql_redo));
                let Decoded::Change(change) = decoded else {
                    panic!("not a change: {row:?}")
                };
                decoded_dml += 1;
                let xid_key = open_key(&open, &row);
                let pending = open.entry(xid_key).or_insert(Pending {
                    changes: Vec::new(),
                });
                let row_id = row.row_id.clone().unwrap();
                if row.rollback {
                    // undo: remove the latest earlier change with the same ROW_ID
                    let pos = pending
                        .changes
                        .iter()
                        .rposition(|c| c.0 == row_id)
                        .unwrap_or_else(|| panic!("undo without its change: {row:?}"));
                    pending.changes.remove(pos);
                    // the INSERT with the placeholder ROW_ID of a LOB row goes with it
                    if let Some(p) = pending
                        .changes
                        .iter()
                        .rposition(|c| c.0 == "AAAAAAAAAAAAAAAAAA" && c.1 == table)
                        && pos > 0
                        && p == pos - 1
                    {
                        pending.changes.remove(p);
                    }
                    continue;
                }
                let image = match change.op {
                    ChangeOp::Delete => change.before.clone().unwrap(),
                    _ => change.after.clone().unwrap(),
                };
                let set_lobs: Vec<u16> = change
                    .after
                    .iter()
                    .flatten()
                    .filter(|c| c.value == Value::EmptyLob)
                    .map(|c| c.column)
                    .collect();
                let mut values: BTreeMap<u16, Value> = image
                    .into_iter()
                    .filter(|c| !matches!(c.value, Value::EmptyLob | Value::Unavailable))
                    .map(|c| (c.column, c.value))
                    .collect();
                if change.op == ChangeOp::Update {
                    // a locator in the SET list: the value written in LOB rows before it
                    // (an insert), or after it (LOB rows of this row follow)
                    for column in set_lobs {
                        let written = lob_values
                            .remove(&(xid_key, column))
                            .unwrap_or(Value::EmptyLob);
                        values.insert(column, written);
                    }
                }
                if row_id == "AAAAAAAAAAAAAAAAAA" {
                    // the LOB locator UPDATE that follows names the row
                    pending
                        .changes
                        .push((row_id, table, ChangeOp::Insert, BTreeMap::new()));
                    continue;
                }
                pending.changes.push((row_id, table, change.op, values));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    // placeholder entries carry nothing: drop them from the state
    for t in state.values_mut() {
        t.remove("AAAAAAAAAAAAAAAAAA");
    }
    (state, decoded_dml)
}

/// The (container, XID) a row belongs to: an unknown XIDSQN names the open transaction of
/// (container, USN, slot).
fn open_key(open: &BTreeMap<(ConId, Xid), Pending>, row: &MinedRow) -> (ConId, Xid) {
    let key = row.con_xid();
    if row.xid.has_unknown_sqn() {
        open.keys()
            .find(|(c, x)| *c == key.con && x.usn == row.xid.usn && x.slot == row.xid.slot)
            .copied()
            .unwrap()
    } else {
        (key.con, key.xid)
    }
}

/// A DBMS_LOB call read back from a LOB row's PL/SQL block, its data converted by the decoder.
#[derive(Debug)]
enum LobCall {
    Write(u64, Value),
    Trim(u64),
    Erase(u64, u64),
}

fn lob_call(sql: &str, layout: &TableLayout) -> (u16, LobCall) {
    let name = sql
        .split_once(" select ")
        .and_then(|(_, rest)| rest.split_once(" into "))
        .map(|(c, _)| c.trim_matches('"'))
        .unwrap_or_else(|| panic!("no locator select: {sql}"));
    let index = layout.column_index(name).unwrap();
    let column = &layout.columns[index];
    let args = |call: &str| -> Vec<String> {
        let (_, rest) = sql.split_once(call).unwrap();
        let (inside, _) = rest.split_once(')').unwrap();
        inside.split(", ").map(str::to_owned).collect()
    };
    let call = if sql.contains("dbms_lob.write(") {
        let a = args("dbms_lob.write(");
        let literal = sql
            .split_once(" := ")
            .and_then(|(_, rest)| rest.rsplit_once(";\n  dbms_lob.write("))
            .map(|(l, _)| l)
            .unwrap();
        // the decoder's own literal parser and conversion read the chunk
        let stmt_text = format!("insert into \"X\".\"Y\"(\"C\") values ({literal})");
        let stmt = cdc_logminer::decode::parse_statement(&stmt_text).unwrap();
        let value = cdc_logminer::decode::convert(&stmt.items()[0].value, column).unwrap();
        let amount: usize = a[1].parse().unwrap();
        match &value {
            Value::Text(t) => assert_eq!(t.chars().count(), amount, "amount in characters"),
            Value::Raw(b) => assert_eq!(b.len(), amount),
            other => panic!("{other:?}"),
        }
        LobCall::Write(a[2].parse().unwrap(), value)
    } else if sql.contains("dbms_lob.trim(") {
        LobCall::Trim(args("dbms_lob.trim(")[1].parse().unwrap())
    } else {
        let amount = sql
            .split_once("amt := ")
            .and_then(|(_, rest)| rest.split_once(';'))
            .map(|(n, _)| n.parse().unwrap())
            .unwrap();
        LobCall::Erase(amount, args("dbms_lob.erase(")[2].parse().unwrap())
    };
    (index as u16, call)
}

/// The LOB after a call: text counted in characters, bytes in bytes; writes past the end pad
/// with spaces or zero bytes, erased ranges become spaces or zero bytes.
fn apply_lob(value: Value, call: LobCall) -> Value {
    let (mut units, binary): (Vec<u32>, bool) = match value {
        Value::Text(t) => (t.chars().map(u32::from).collect(), false),
        Value::Raw(b) => (b.into_iter().map(u32::from).collect(), true),
        _ => match &call {
            LobCall::Write(_, Value::Raw(_)) => (Vec::new(), true),
            _ => (Vec::new(), false),
        },
    };
    let fill = if binary { 0 } else { u32::from(' ') };
    match call {
        LobCall::Write(offset, data) => {
            let new: Vec<u32> = match data {
                Value::Text(t) => t.chars().map(u32::from).collect(),
                Value::Raw(b) => b.into_iter().map(u32::from).collect(),
                other => panic!("{other:?}"),
            };
            let start = offset as usize - 1;
            if units.len() < start + new.len() {
                units.resize(start + new.len(), fill);
            }
            units[start..start + new.len()].copy_from_slice(&new);
        }
        LobCall::Trim(length) => units.truncate(length as usize),
        LobCall::Erase(amount, offset) => {
            let start = offset as usize - 1;
            let end = (start + amount as usize).min(units.len());
            for u in &mut units[start.min(end)..end] {
                *u = fill;
            }
        }
    }
    if binary {
        Value::Raw(units.into_iter().map(|u| u as u8).collect())
    } else {
        Value::Text(units.into_iter().filter_map(char::from_u32).collect())
    }
}

fn database_state(db: &SimDatabase) -> State {
    let mut out: State = BTreeMap::new();
    for c in db.containers() {
        for t in c.tables.iter().filter(|t| !t.dropped) {
            let rows = out.entry((c.con, t.id.clone())).or_default();
            for (row_id, values) in &t.rows {
                rows.insert(
                    row_id.clone(),
                    values
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| !v.is_null())
                        .map(|(i, v)| (i as u16, v.clone()))
                        .collect(),
                );
            }
        }
    }
    out.retain(|_, rows| !rows.is_empty());
    out
}

fn check(seed: u64, pdbs: Vec<String>) {
    let (mut source, rows) = run(seed, pdbs, 600);
    let sql: Vec<String> = rows.iter().filter_map(|r| r.sql_redo.clone()).collect();
    let joined = sql.join("\n");
    // every literal shape of the reference appears
    for shape in [
        "TO_DATE('",
        "', 'YYYY-MM-DD HH24:MI:SS')",
        "TO_TIMESTAMP('",
        "TO_TIMESTAMP_TZ('",
        "TO_YMINTERVAL('",
        "TO_DSINTERVAL('",
        "HEXTORAW('",
        "UNISTR('",
        "EMPTY_CLOB()",
        " IS NULL",
        "''",
        "where ROWID = '",
        "E+0",
    ] {
        assert!(
            joined.contains(shape),
            "seed {seed}: no {shape} in the rows"
        );
    }
    assert!(rows.iter().any(|r| r.csf), "seed {seed}: no CSF row");
    assert!(rows.iter().any(|r| r.rollback), "seed {seed}: no undo row");
    let (mut state, decoded) = replay(&mut source, rows);
    assert!(decoded > 300);
    let mut expected = database_state(source.database());
    // CLOB values of rows updated after their insert are not in an UPDATE's image unless set;
    // compare the non-LOB columns everywhere, and LOB columns where the redo carried them
    for ((con, table), rows) in expected.iter_mut() {
        let got = state.entry((*con, table.clone())).or_default();
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            rows.keys().collect::<Vec<_>>(),
            "seed {seed}: rows of {table}"
        );
        for (row_id, values) in rows.iter() {
            let got_row = &got[row_id];
            for (col, v) in values {
                assert_eq!(
                    got_row.get(col),
                    Some(v),
                    "seed {seed}: {table} {row_id} column {col}"
                );
            }
        }
    }
}

#[test]
fn generated_rows_decode_to_the_database_state() {
    check(1, Vec::new());
    check(2, Vec::new());
}

#[test]
fn generated_rows_decode_in_two_pdbs() {
    check(3, vec!["FREEPDB1".into(), "FREEPDB2".into()]);
}
