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
                let xid_key = if row.xid.has_unknown_sqn() {
                    open.keys()
                        .find(|(c, x)| {
                            *c == key.con && x.usn == row.xid.usn && x.slot == row.xid.slot
                        })
                        .copied()
                        .unwrap()
                } else {
                    (key.con, key.xid)
                };
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
                let values: BTreeMap<u16, Value> = image
                    .into_iter()
                    .filter(|c| !matches!(c.value, Value::EmptyLob | Value::Unavailable))
                    .map(|c| (c.column, c.value))
                    .collect();
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
