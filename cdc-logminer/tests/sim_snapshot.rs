//! The simulator's snapshot reads behave as Oracle's flashback queries: a read as of an SCN
//! sees exactly what was committed at that SCN (checked against the ground truth replayed to
//! it, while a workload runs), chunks by key or ROWID cover every row once and in the
//! database's order, boundaries agree with reads, and the errors come where Oracle gives them
//! (ORA-01555, ORA-08181, ORA-01466, ORA-00942, the parser's), as do the faults on demand.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use cdc_core::ora::OraCode;
use cdc_core::{Decimal, Scn, TableId, TableLayout, Value};
use cdc_logminer::sim::{
    DbOp, SimConfig, SimDatabase, SimSource, SnapshotFault, SourceCall, Workload, WorkloadConfig,
};
use cdc_logminer::source::{
    RedoSource, SnapshotBound, SnapshotOrder, SnapshotQuery, SnapshotReader, SnapshotRow,
    SourceError,
};

/// Rows keyed by ROWID, each as (column, value) pairs.
type Rows = BTreeMap<String, Vec<(String, Value)>>;

fn customers() -> TableId {
    TableId::new("APP", "CUSTOMERS")
}

fn events() -> TableId {
    TableId::new("APP", "EVENTS")
}

fn database(seed: u64) -> SimDatabase {
    SimDatabase::new(SimConfig {
        seed,
        ..SimConfig::default()
    })
    .expect("a database")
}

/// A workload without DDL (a read across one fails, tested on its own).
fn workload(seed: u64, changes: u64) -> Workload {
    Workload::random(WorkloadConfig {
        seed,
        changes,
        ddl_rate: 0.0,
        ..WorkloadConfig::default()
    })
}

fn layout(source: &mut SimSource, table: &TableId) -> Arc<TableLayout> {
    Arc::new(
        source
            .table_layouts(std::slice::from_ref(table))
            .expect("layouts")
            .into_iter()
            .next()
            .expect("the table's layout"),
    )
}

/// Every column of the table, as of `scn`, in the order the engine would read it.
fn query(source: &mut SimSource, table: &TableId, scn: Scn) -> SnapshotQuery {
    let layout = layout(source, table);
    let order = if layout.key.is_empty() {
        SnapshotOrder::RowId
    } else {
        SnapshotOrder::Key(layout.key.clone())
    };
    SnapshotQuery {
        table: table.clone(),
        columns: (0..layout.columns.len() as u16).collect(),
        layout,
        order,
        scn,
        after: None,
        through: None,
        limit: None,
        condition: None,
        fetch_size: 500,
    }
}

fn read(
    reader: &mut dyn SnapshotReader,
    q: &SnapshotQuery,
) -> Result<Vec<SnapshotRow>, SourceError> {
    let mut rows = Vec::new();
    let summary = reader.read(q, &mut |row| {
        rows.push(row);
        ControlFlow::Continue(())
    })?;
    assert_eq!(summary.rows, rows.len() as u64);
    Ok(rows)
}

/// The rows a read returned, by ROWID, with their columns' names.
fn named(q: &SnapshotQuery, rows: &[SnapshotRow]) -> Rows {
    let mut out = Rows::new();
    for row in rows {
        let values = row
            .values
            .iter()
            .map(|cv| {
                let name = q.layout.columns[usize::from(cv.column)].name.clone();
                (name, cv.value.clone())
            })
            .collect();
        assert!(
            out.insert(row.row_id.clone(), values).is_none(),
            "row {} read twice",
            row.row_id
        );
    }
    out
}

/// The ground truth replayed to `scn`: each row's last committed image at or below it.
fn truth_at(db: &SimDatabase, table: &TableId, scn: Scn) -> Rows {
    let mut rows = Rows::new();
    for tx in db
        .truth()
        .transactions
        .iter()
        .filter(|t| t.commit_scn <= scn)
    {
        for change in tx.changes.iter().filter(|c| &c.table == table) {
            match &change.after {
                Some(after) => rows.insert(change.row_id.clone(), after.clone()),
                None => rows.remove(&change.row_id),
            };
        }
    }
    rows
}

/// Equal row sets, or a panic naming the first row that differs (not both sets in full).
fn assert_same(got: &Rows, want: &Rows, what: &str) {
    for (row_id, values) in want {
        match got.get(row_id) {
            None => panic!(
                "{what}: row {row_id} missing ({} rows, {} wanted)",
                got.len(),
                want.len()
            ),
            Some(v) if v != values => panic!("{what}: row {row_id}: {v:?}, wanted {values:?}"),
            Some(_) => {}
        }
    }
    if let Some(extra) = got.keys().find(|r| !want.contains_key(*r)) {
        panic!(
            "{what}: row {extra} should not be there ({} rows, {} wanted)",
            got.len(),
            want.len()
        );
    }
}

fn ora(result: Result<impl std::fmt::Debug, SourceError>) -> u32 {
    match result {
        Err(e) => e
            .ora_code()
            .map(|c| c.0)
            .unwrap_or_else(|| panic!("no ORA code: {e}")),
        Ok(v) => panic!("expected an ORA error, got {v:?}"),
    }
}

/// A ROWID's physical position (data object, file, block, row), decoded here on its own:
/// base 64 digits A-Z a-z 0-9 + /.
fn position(rowid: &str) -> (u64, u64, u64, u64) {
    const DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let field = |s: &str| {
        s.chars().fold(0u64, |n, c| {
            n * 64 + DIGITS.find(c).expect("a base-64 digit") as u64
        })
    };
    (
        field(&rowid[0..6]),
        field(&rowid[6..9]),
        field(&rowid[9..15]),
        field(&rowid[15..18]),
    )
}

fn id_of(v: &Value) -> i128 {
    match v {
        Value::Number(d) => d.unscaled_at(0).expect("an integer key"),
        other => panic!("not a number: {other:?}"),
    }
}

fn key_ids(rows: &[SnapshotRow]) -> Vec<i128> {
    rows.iter()
        .map(|r| match &r.bound {
            SnapshotBound::Key(k) => id_of(&k[0]),
            other => panic!("not a key bound: {other:?}"),
        })
        .collect()
}

/// Reads the table in chunks of `chunk` rows, each after the previous one's last bound.
fn read_in_chunks(
    reader: &mut dyn SnapshotReader,
    q: &SnapshotQuery,
    chunk: u64,
    between: &mut dyn FnMut(),
) -> Vec<SnapshotRow> {
    let mut all = Vec::new();
    let mut after = None;
    loop {
        let part = read(
            reader,
            &SnapshotQuery {
                after: after.clone(),
                limit: Some(chunk),
                ..q.clone()
            },
        )
        .expect("a chunk");
        let n = part.len() as u64;
        after = part.last().map(|r| r.bound.clone()).or(after);
        all.extend(part);
        between();
        if n < chunk {
            return all;
        }
    }
}

#[test]
fn reads_as_of_an_scn_see_what_was_committed_then_and_nothing_else() {
    let tables = [
        customers(),
        events(),
        TableId::new("APP", "DOCS"),
        TableId::new("APP", "ORDERS"),
        TableId::new("APP", "CODES"),
    ];
    // rows for the workload to update and delete, in the truth like its own; ORDERS gets a
    // MAXVALUE partition with them, so the workload adds none (a read across that DDL fails)
    let mut db = database(31);
    for (n, table) in tables.iter().enumerate() {
        db.load_rows_logged(table, 250, 31 + n as u64).unwrap();
    }
    let mut source = SimSource::with_workload(db, workload(31, 2_500), 0);
    let mut reader = source.snapshot_reader().expect("a reader");
    // (scn, table, what a read returned at the time)
    let mut seen: Vec<(Scn, TableId, Rows)> = Vec::new();
    let mut open_seen = false;
    while source.advance(400).expect("the workload") {
        let scn = source.current_scn().expect("an SCN");
        open_seen |= !source
            .active_transactions()
            .expect("transactions")
            .is_empty();
        for table in &tables {
            let q = query(&mut source, table, scn);
            let rows = read(reader.as_mut(), &q).expect("a read");
            seen.push((scn, table.clone(), named(&q, &rows)));
        }
    }
    assert!(open_seen, "the reads ran while transactions were open");
    assert!(seen.len() >= 5 * tables.len());
    let db = source.database();
    for (scn, table, rows) in &seen {
        let truth = truth_at(db, table, *scn);
        assert_same(rows, &truth, &format!("{table} as of {scn:?}"));
    }
    assert_eq!(
        source.database().truth().ddl.len(),
        1,
        "no DDL but the load's"
    );
    // the same SCNs read again at the end: the later changes are not seen
    for (scn, table, rows) in seen.iter().step_by(3) {
        let q = query(&mut source, table, *scn);
        let again = named(&q, &read(reader.as_mut(), &q).unwrap());
        assert_same(&again, rows, "again");
    }
    let sizes: Vec<usize> = seen.iter().map(|(_, _, r)| r.len()).collect();
    assert!(
        sizes.iter().all(|n| *n > 50),
        "the workload left rows to read: {sizes:?}"
    );
}

#[test]
fn uncommitted_changes_are_never_visible() {
    let mut source = SimSource::new(database(5));
    let s = |n: &str| cdc_logminer::sim::SessionName::from(n);
    let insert = |id: i64| DbOp::Insert {
        session: s("A"),
        table: "APP.CUSTOMERS".into(),
        row: vec![("ID".into(), Value::Number(Decimal::new(i128::from(id), 0)))],
        fails: false,
    };
    source.apply(&insert(1)).unwrap();
    source.apply(&DbOp::Commit { session: s("A") }).unwrap();
    source.apply(&insert(2)).unwrap();
    source
        .apply(&DbOp::Update {
            session: s("A"),
            table: "APP.CUSTOMERS".into(),
            rows: vec![cdc_logminer::sim::RowSel::Match(vec![(
                "ID".into(),
                Value::Number(Decimal::new(1, 0)),
            )])],
            set: vec![("NAME".into(), Value::Text("changed".into()))],
        })
        .unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    let scn = source.current_scn().unwrap();
    let q = query(&mut source, &customers(), scn);
    let rows = named(&q, &read(reader.as_mut(), &q).unwrap());
    assert_eq!(rows.len(), 1, "only the committed row");
    let values = rows.values().next().unwrap();
    assert!(values.contains(&("NAME".into(), Value::Null)), "{values:?}");
    source.apply(&DbOp::Commit { session: s("A") }).unwrap();
    let now = source.database().current_scn();
    let q = query(&mut source, &customers(), now);
    let rows = named(&q, &read(reader.as_mut(), &q).unwrap());
    assert_eq!(rows.len(), 2);
    assert!(
        rows.values()
            .any(|v| v.contains(&("NAME".into(), Value::Text("changed".into()))))
    );
}

#[test]
fn chunks_by_key_and_by_rowid_cover_every_row_once_in_the_databases_order() {
    let mut db = database(8);
    db.load_rows(&customers(), 12_000, 8).unwrap();
    db.load_rows(&events(), 9_000, 9).unwrap();
    db.load_rows(&TableId::new("APP", "CODES"), 3_000, 10)
        .unwrap();
    let mut source = SimSource::with_workload(db, workload(8, 3_000), 0);
    let scn = source.current_scn().unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    let tables = [
        (customers(), 1_000),
        (events(), 700),
        (TableId::new("APP", "CODES"), 256),
    ];
    // the committed state at `scn`, before the workload changes it
    let at_scn: Vec<Rows> = tables
        .iter()
        .map(|(t, _)| {
            source
                .database()
                .committed_rows(t)
                .unwrap()
                .into_iter()
                .collect()
        })
        .collect();
    for ((table, chunk), at_scn) in tables.into_iter().zip(at_scn) {
        let q = query(&mut source, &table, scn);
        let whole = read(reader.as_mut(), &q).unwrap();
        assert_same(&named(&q, &whole), &at_scn, &table.to_string());
        // the workload goes on between chunks: the chunks still read as of `scn`
        let mut step = || {
            source.advance(25).unwrap();
        };
        let chunks = read_in_chunks(reader.as_mut(), &q, chunk, &mut step);
        assert_eq!(chunks, whole, "{table}: chunks and one read");
        match &q.order {
            SnapshotOrder::RowId => {
                let positions: Vec<_> = chunks.iter().map(|r| position(&r.row_id)).collect();
                assert!(
                    positions.windows(2).all(|w| w[0] < w[1]),
                    "{table}: ROWID order"
                );
                let texts: Vec<&str> = chunks.iter().map(|r| r.row_id.as_str()).collect();
                assert!(
                    texts.windows(2).any(|w| w[0] > w[1]),
                    "{table}: the text order of these ROWIDs differs, so the order is tested"
                );
            }
            SnapshotOrder::Key(columns) if columns == &["ID".to_owned()] => {
                let ids = key_ids(&chunks);
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{table}: key order");
            }
            SnapshotOrder::Key(_) => {
                // a VARCHAR2 key ("C1", "C10", "C100" …) sorts by bytes
                let keys: Vec<Vec<u8>> = chunks
                    .iter()
                    .map(|r| match &r.bound {
                        SnapshotBound::Key(k) => match &k[0] {
                            Value::Text(s) => s.clone().into_bytes(),
                            other => panic!("{other:?}"),
                        },
                        other => panic!("{other:?}"),
                    })
                    .collect();
                assert!(keys.windows(2).all(|w| w[0] < w[1]), "{table}: byte order");
            }
        }
    }
    assert!(
        source.database().truth().change_count() > 0,
        "the workload ran"
    );
}

#[test]
fn key_bounds_and_through_select_a_range() {
    let mut db = database(12);
    db.load_rows(&customers(), 5_000, 12).unwrap();
    let mut source = SimSource::new(db);
    let scn = source.current_scn().unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    let key = |n: i64| SnapshotBound::Key(vec![Value::Number(Decimal::new(i128::from(n), 0))]);
    let q = SnapshotQuery {
        after: Some(key(1_000)),
        through: Some(key(1_500)),
        ..query(&mut source, &customers(), scn)
    };
    let ids = key_ids(&read(reader.as_mut(), &q).unwrap());
    assert_eq!(ids, (1_001..=1_500).collect::<Vec<i128>>());
    // a bound that is no row's key, written at another scale, bounds by value
    let q = SnapshotQuery {
        after: Some(SnapshotBound::Key(vec![Value::Number(Decimal::new(
            24_995, 1,
        ))])),
        through: Some(SnapshotBound::Key(vec![Value::Number(Decimal::new(
            25_100, 1,
        ))])),
        ..q
    };
    assert_eq!(
        key_ids(&read(reader.as_mut(), &q).unwrap()),
        (2_500..=2_510).collect::<Vec<_>>()
    );
    // a bound of the wrong kind is refused
    let q = SnapshotQuery {
        after: Some(SnapshotBound::RowId("AAAR3sAAEAAAACXAAA".into())),
        through: None,
        ..q
    };
    assert!(matches!(
        read(reader.as_mut(), &q),
        Err(SourceError::Invalid { .. })
    ));
}

#[test]
fn boundaries_agree_with_reads() {
    let mut db = database(14);
    db.load_rows(&customers(), 10_500, 14).unwrap();
    db.load_rows(&events(), 4_321, 15).unwrap();
    let mut source = SimSource::new(db);
    let scn = source.current_scn().unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    for table in [customers(), events()] {
        let q = query(&mut source, &table, scn);
        let rows = read(reader.as_mut(), &q).unwrap();
        let every = 1_000;
        let bounds = reader.boundaries(&q, every, 100).unwrap();
        let expected: Vec<SnapshotBound> = rows
            .iter()
            .skip(every as usize - 1)
            .step_by(every as usize)
            .map(|r| r.bound.clone())
            .collect();
        assert_eq!(bounds, expected, "{table}");
        assert_eq!(bounds.len(), rows.len() / every as usize);
        // at most `max`, and from `after` on
        let capped = reader.boundaries(&q, every, 3).unwrap();
        assert_eq!(capped, expected[..3].to_vec());
        let after = SnapshotQuery {
            after: Some(expected[1].clone()),
            ..q.clone()
        };
        assert_eq!(
            reader.boundaries(&after, every, 100).unwrap(),
            expected[2..].to_vec()
        );
        // each chunk between two bounds reads `every` rows
        let chunk = SnapshotQuery {
            after: Some(expected[0].clone()),
            through: Some(expected[1].clone()),
            ..q.clone()
        };
        assert_eq!(read(reader.as_mut(), &chunk).unwrap().len(), every as usize);
        // `through` and `limit` do not bound the boundaries
        let limited = SnapshotQuery {
            through: Some(expected[0].clone()),
            limit: Some(5),
            ..q.clone()
        };
        assert_eq!(reader.boundaries(&limited, every, 100).unwrap(), expected);
    }
    let estimate = reader.estimate(&customers()).unwrap();
    assert_eq!(estimate.rows, Some(10_500));
    assert_eq!(estimate.blocks, Some(10_500_u64.div_ceil(40)));
}

#[test]
fn a_read_below_the_undo_retention_is_too_old() {
    let mut source = SimSource::new(
        SimDatabase::new(SimConfig {
            seed: 21,
            undo_retention_secs: 60,
            ..SimConfig::default()
        })
        .unwrap(),
    );
    source
        .database_mut()
        .load_rows(&customers(), 100, 21)
        .unwrap();
    source.database_mut().load_rows(&events(), 30, 20).unwrap();
    let before = source.current_scn().unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    // no commit after it: time alone takes no undo away
    source.apply(&DbOp::Tick { millis: 120_000 }).unwrap();
    let q = query(&mut source, &customers(), before);
    assert_eq!(read(reader.as_mut(), &q).unwrap().len(), 100);
    // a commit after it whose undo then expires
    source
        .database_mut()
        .load_rows(&customers(), 10, 22)
        .unwrap();
    let after_commit = source.current_scn().unwrap();
    source.apply(&DbOp::Tick { millis: 59_000 }).unwrap();
    assert_eq!(
        read(reader.as_mut(), &q).unwrap().len(),
        100,
        "still within 60 s"
    );
    source.apply(&DbOp::Tick { millis: 2_000 }).unwrap();
    let e = read(reader.as_mut(), &q).unwrap_err();
    assert_eq!(e.ora_code(), Some(OraCode::SNAPSHOT_TOO_OLD));
    assert!(
        e.to_string()
            .contains("ORA-01555: snapshot too old: rollback segment number 7")
    );
    // as of the expired commit itself, the versions kept answer
    let q = query(&mut source, &customers(), after_commit);
    assert_eq!(read(reader.as_mut(), &q).unwrap().len(), 110);
    // a longer retention set now cannot bring the undo back
    source.database_mut().set_undo_retention(3_600);
    let q = query(&mut source, &customers(), before);
    assert_eq!(ora(read(reader.as_mut(), &q)), 1555);
    // a table no expired commit changed after the SCN needs no undo to be read then
    let q = query(&mut source, &events(), before);
    assert_eq!(read(reader.as_mut(), &q).unwrap().len(), 30);
}

#[test]
fn scns_the_database_does_not_know_are_invalid() {
    let db = database(23);
    let first = db.current_scn();
    let mut source = SimSource::with_workload(db, workload(23, 200), 0);
    while source.advance(100).unwrap() {}
    let mut reader = source.snapshot_reader().unwrap();
    let now = source.current_scn().unwrap();
    for scn in [Scn(first.0 - 1), Scn(0), Scn(now.0 + 1)] {
        let q = query(&mut source, &customers(), scn);
        let e = read(reader.as_mut(), &q).unwrap_err();
        assert_eq!(e.ora_code(), Some(OraCode::INVALID_SCN), "{scn:?}");
        assert!(e.to_string().contains("not a valid system change number"));
    }
    let q = query(&mut source, &customers(), first);
    assert!(
        read(reader.as_mut(), &q).unwrap().is_empty(),
        "nothing committed yet"
    );
}

#[test]
fn a_read_across_a_ddl_fails_and_one_after_it_sees_the_new_layout() {
    let mut db = database(25);
    db.load_rows(&customers(), 50, 25).unwrap();
    db.load_rows(&TableId::new("HR", "AUDIT_LOG"), 40, 26)
        .unwrap();
    let mut source = SimSource::new(db);
    let before = source.current_scn().unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    let old = query(&mut source, &customers(), before);
    source
        .apply(&DbOp::AddColumn {
            table: "APP.CUSTOMERS".into(),
            column: cdc_logminer::sim::ColumnSpec {
                name: "EXTRA".into(),
                data_type: "VARCHAR2(10)".into(),
                nullable: true,
            },
        })
        .unwrap();
    let e = read(reader.as_mut(), &old).unwrap_err();
    assert_eq!(e.ora_code(), Some(OraCode::TABLE_DEFINITION_CHANGED));
    assert!(e.to_string().contains("table definition has changed"));
    let now = source.current_scn().unwrap();
    let new = query(&mut source, &customers(), now);
    let rows = named(&new, &read(reader.as_mut(), &new).unwrap());
    assert_eq!(rows.len(), 50);
    assert!(
        rows.values()
            .all(|r| r.contains(&("EXTRA".into(), Value::Null)))
    );
    // the old layout names no column that is gone, so it still reads
    let old_now = SnapshotQuery { scn: now, ..old };
    assert_eq!(read(reader.as_mut(), &old_now).unwrap().len(), 50);
    // TRUNCATE: nothing before it can be read, nothing is left after it
    let audit = TableId::new("HR", "AUDIT_LOG");
    let q = query(&mut source, &audit, now);
    assert_eq!(read(reader.as_mut(), &q).unwrap().len(), 40);
    source
        .apply(&DbOp::Truncate {
            table: "HR.AUDIT_LOG".into(),
        })
        .unwrap();
    assert_eq!(ora(read(reader.as_mut(), &q)), 1466);
    let truncated = source.database().current_scn();
    let q = query(&mut source, &audit, truncated);
    assert!(read(reader.as_mut(), &q).unwrap().is_empty());
    // DROP: the table is gone; an unknown one never was
    source
        .apply(&DbOp::DropTable {
            table: "HR.AUDIT_LOG".into(),
        })
        .unwrap();
    assert_eq!(ora(read(reader.as_mut(), &q)), 942);
    assert_eq!(ora(reader.estimate(&audit)), 942);
    let unknown = SnapshotQuery {
        table: TableId::new("APP", "NOPE"),
        ..query(&mut source, &customers(), now)
    };
    assert_eq!(ora(read(reader.as_mut(), &unknown)), 942);
    // a column the table does not have
    let mut layout = (*unknown.layout).clone();
    layout.columns[1].name = "NOPE".into();
    let bad_column = SnapshotQuery {
        layout: Arc::new(layout),
        ..query(&mut source, &customers(), now)
    };
    assert_eq!(ora(read(reader.as_mut(), &bad_column)), 904);
}

#[test]
fn conditions_filter_rows_as_oracle_would() {
    let mut db = database(27);
    db.load_rows(&customers(), 1_000, 27).unwrap();
    let mut source = SimSource::new(db);
    let scn = source.current_scn().unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    let base = query(&mut source, &customers(), scn);
    let all = named(&base, &read(reader.as_mut(), &base).unwrap());
    let with = |condition: &str| SnapshotQuery {
        condition: Some(condition.to_owned()),
        ..base.clone()
    };
    let value = |row: &Vec<(String, Value)>, column: &str| {
        row.iter()
            .find(|(n, _)| n == column)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    let ids = key_ids(&read(reader.as_mut(), &with("ID > 100 AND ID <= 200")).unwrap());
    assert_eq!(ids, (101..=200).collect::<Vec<_>>());
    let ids = key_ids(
        &read(
            reader.as_mut(),
            &with("\"ID\" IN (3, 5, 7, 5000) OR id BETWEEN 998 AND 2000"),
        )
        .unwrap(),
    );
    assert_eq!(ids, vec![3, 5, 7, 998, 999, 1000]);
    let nulls = all.values().filter(|r| value(r, "NAME").is_null()).count();
    assert!(
        nulls > 0 && nulls < all.len(),
        "the generator leaves some NAMEs NULL"
    );
    let q = with("NAME IS NOT NULL");
    assert_eq!(read(reader.as_mut(), &q).unwrap().len(), all.len() - nulls);
    let q = with("NOT (NAME IS NOT NULL) AND ID < 1000000");
    assert_eq!(read(reader.as_mut(), &q).unwrap().len(), nulls);
    // a limit counts the rows that meet the condition; chunks of them cover them once
    let between = with("ID BETWEEN 2 AND 1000");
    let chunked = read_in_chunks(reader.as_mut(), &between, 333, &mut || {});
    assert_eq!(key_ids(&chunked), (2..=1_000).collect::<Vec<_>>());
    for (condition, code) in [
        ("NOPE = 1", 904),
        ("ID 5", 920),
        ("ID = ", 936),
        ("(ID = 1", 907),
        ("ID = 1; DELETE FROM X", 911),
        ("NAME = 'unterminated", 1756),
    ] {
        assert_eq!(
            ora(read(reader.as_mut(), &with(condition))),
            code,
            "{condition}"
        );
    }
    assert_eq!(ora(reader.boundaries(&with("ID LIKES 5"), 10, 10)), 920);
}

#[test]
fn too_old_faults_fail_chunks_above_a_size_until_used_up() {
    let mut db = database(29);
    db.load_rows(&customers(), 9_000, 29).unwrap();
    let mut source = SimSource::new(db);
    let scn = source.current_scn().unwrap();
    // a reader handed out before the fault sees it too
    let mut reader = source.snapshot_reader().unwrap();
    source.inject_snapshot_fault(SnapshotFault::TooOld {
        reads: 3,
        above_rows: 1_000,
    });
    let q = query(&mut source, &customers(), scn);
    // the engine's answer: the same chunk again with half the rows
    let mut limit = 8_000;
    let mut failures = 0;
    let rows = loop {
        match read(
            reader.as_mut(),
            &SnapshotQuery {
                limit: Some(limit),
                ..q.clone()
            },
        ) {
            Ok(rows) => break rows,
            Err(e) => {
                assert_eq!(e.ora_code(), Some(OraCode::SNAPSHOT_TOO_OLD));
                failures += 1;
                limit /= 2;
            }
        }
    };
    assert_eq!((failures, limit, rows.len()), (3, 1_000, 1_000));
    assert_eq!(source.pending_snapshot_faults(), 0);
    assert_eq!(
        read(
            reader.as_mut(),
            &SnapshotQuery {
                limit: Some(8_000),
                ..q.clone()
            }
        )
        .unwrap()
        .len(),
        8_000
    );
    // a fault that outlasts the halving: the engine gives up at 1 000 rows
    source.inject_snapshot_fault(SnapshotFault::TooOld {
        reads: 100,
        above_rows: 0,
    });
    let mut limit = 8_000;
    let gave_up = loop {
        match read(
            reader.as_mut(),
            &SnapshotQuery {
                limit: Some(limit),
                ..q.clone()
            },
        ) {
            Ok(_) => break false,
            Err(_) if limit <= 1_000 => break true,
            Err(_) => limit /= 2,
        }
    };
    assert!(gave_up);
    // an unlimited read is above any size
    assert_eq!(ora(read(reader.as_mut(), &q)), 1555);
}

#[test]
fn a_dropped_connection_fails_the_read_and_the_reader() {
    let mut db = database(33);
    db.load_rows(&events(), 2_000, 33).unwrap();
    let mut source = SimSource::new(db);
    let scn = source.current_scn().unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    source.inject_snapshot_fault(SnapshotFault::Disconnect { after_rows: 700 });
    let q = query(&mut source, &events(), scn);
    let mut delivered = 0;
    let e = reader
        .read(&q, &mut |_| {
            delivered += 1;
            ControlFlow::Continue(())
        })
        .unwrap_err();
    assert_eq!(delivered, 700);
    assert_eq!(
        e.ora_code(),
        Some(OraCode::END_OF_FILE_ON_COMMUNICATION_CHANNEL)
    );
    assert_eq!(ora(read(reader.as_mut(), &q)), 3114);
    assert_eq!(ora(reader.estimate(&events())), 3114);
    // a new session reads again, once: the fault fired
    let mut again = source.snapshot_reader().unwrap();
    assert_eq!(read(again.as_mut(), &q).unwrap().len(), 2_000);
    // opening a session can fail like any call
    source.inject(cdc_logminer::sim::Fault::Ora {
        code: 3113,
        message: None,
        call: SourceCall::SnapshotReader,
    });
    assert_eq!(ora(source.snapshot_reader()), 3113);
}

#[test]
fn rows_are_fetched_fetch_size_at_a_time_and_a_sink_can_stop() {
    let mut db = database(35);
    db.load_rows(&customers(), 2_500, 35).unwrap();
    let mut source = SimSource::new(db);
    let scn = source.current_scn().unwrap();
    let mut reader = source.snapshot_reader().unwrap();
    let q = SnapshotQuery {
        fetch_size: 1_000,
        ..query(&mut source, &customers(), scn)
    };
    let trips = |s: &SimSource| s.snapshot_fetches();
    let start = trips(&source);
    read(reader.as_mut(), &q).unwrap();
    assert_eq!(trips(&source) - start, 3);
    let start = trips(&source);
    read(
        reader.as_mut(),
        &SnapshotQuery {
            limit: Some(2_000),
            ..q.clone()
        },
    )
    .unwrap();
    assert_eq!(
        trips(&source) - start,
        2,
        "a full last fetch at the limit asks for no more"
    );
    let start = trips(&source);
    let empty = SnapshotQuery {
        condition: Some("ID < 0".into()),
        ..q.clone()
    };
    assert!(read(reader.as_mut(), &empty).unwrap().is_empty());
    assert_eq!(
        trips(&source) - start,
        1,
        "an empty result is one round trip"
    );
    let mut taken = 0;
    let summary = reader
        .read(&q, &mut |_| {
            taken += 1;
            if taken == 10 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
    assert_eq!((summary.rows, summary.stopped_by_sink), (10, true));
}

#[test]
fn a_reader_on_another_thread_reads_while_the_workload_goes_on() {
    let mut db = database(37);
    db.load_rows_logged(&customers(), 3_000, 37).unwrap();
    let mut source = SimSource::with_workload(db, workload(37, 3_000), 0);
    source.advance(1_500).unwrap();
    let scn = source.current_scn().unwrap();
    let q = query(&mut source, &customers(), scn);
    let mut reader = source.snapshot_reader().unwrap();
    let chunked = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let mut rows = Vec::new();
            let mut after = None;
            loop {
                let part = read(
                    reader.as_mut(),
                    &SnapshotQuery {
                        after: after.clone(),
                        limit: Some(97),
                        ..q.clone()
                    },
                )
                .expect("a chunk");
                after = part.last().map(|r| r.bound.clone()).or(after);
                let done = part.len() < 97;
                rows.extend(part);
                if done {
                    return rows;
                }
                std::thread::yield_now();
            }
        });
        while source.advance(20).unwrap() {}
        worker.join().expect("the reader's thread")
    });
    let db = source.database();
    assert!(db.current_scn() > scn, "the workload went on");
    assert_same(
        &named(&q, &chunked),
        &truth_at(db, &customers(), scn),
        "from a thread",
    );
}

#[test]
fn loaded_rows_are_committed_with_values_of_every_type() {
    let mut db = database(39);
    let before = db.truth().change_count();
    db.load_rows(&events(), 500, 39).unwrap();
    db.load_rows(&TableId::new("APP", "ORDERS"), 450, 40)
        .unwrap();
    assert_eq!(
        db.truth().change_count(),
        before,
        "a direct-path load writes no redo"
    );
    let rows = db.committed_rows(&events()).unwrap();
    assert_eq!(rows.len(), 500);
    for column in [
        "KIND",
        "PAYLOAD",
        "AT_TS",
        "AT_TZ",
        "AT_LTZ",
        "RETENTION",
        "DURATION",
    ] {
        assert!(
            rows.iter()
                .any(|(_, r)| r.iter().any(|(n, v)| n == column && !v.is_null())),
            "{column} has values"
        );
    }
    // ORDERS' partitions end at 200: the load made room
    assert_eq!(
        db.committed_rows(&TableId::new("APP", "ORDERS"))
            .unwrap()
            .len(),
        450
    );
    // rows loaded the conventional way are in the truth, and keys go on after the last
    db.load_rows_logged(&events(), 20, 41).unwrap();
    assert_eq!(db.truth().change_count(), before + 20);
    let ids: Vec<i128> = db
        .committed_rows(&events())
        .unwrap()
        .iter()
        .map(|(_, r)| id_of(&r[0].1))
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..=520).collect::<Vec<_>>());
    assert!(db.committed_rows(&TableId::new("APP", "NOPE")).is_err());
}

fn num(n: i64) -> Value {
    Value::Number(Decimal::new(i128::from(n), 0))
}

fn session(name: &str) -> cdc_logminer::sim::SessionName {
    cdc_logminer::sim::SessionName::from(name)
}

/// The ORA code of a refused operation.
fn refused(result: Result<(), cdc_logminer::sim::SimError>) -> u32 {
    match result {
        Err(cdc_logminer::sim::SimError::Ora(code, _)) => code.0,
        other => panic!("expected an ORA error, got {other:?}"),
    }
}

/// The object ids the dictionary lists for tables of that name.
fn objects_named(source: &mut SimSource, name: &str) -> Vec<cdc_core::ObjectId> {
    source
        .resolve_objects(&|t: &TableId| t.table == name)
        .expect("objects")
        .into_iter()
        .map(|o| o.object)
        .collect()
}

/// A table's committed rows by their ID column, each as (column, value) pairs.
fn by_id(db: &SimDatabase, table: &TableId, id: &str) -> BTreeMap<i128, Vec<(String, Value)>> {
    db.committed_rows(table)
        .expect("the table's rows")
        .into_iter()
        .map(|(_, row)| {
            let key = row.iter().find(|(n, _)| n == id).map(|(_, v)| id_of(v));
            (key.expect("an ID"), row)
        })
        .collect()
}

/// CREATE TABLE … AS SELECT as Oracle runs it: the DDL row in the redo (read by the decoder
/// as a table that may hold rows), no row of the copy in the redo or the truth's
/// transactions, the copy's committed rows readable from the DDL's SCN on (ORA-01466 below
/// it), the table in the dictionary with the source's column types and its declared key,
/// and its later DML like any other table's.
#[test]
fn a_table_created_as_select_holds_a_copy_of_the_committed_rows_without_their_redo() {
    let mut db = database(41);
    db.load_rows(&customers(), 600, 41).unwrap();
    let mut source = SimSource::new(db);
    source
        .apply(&DbOp::Insert {
            session: session("A"),
            table: "APP.CUSTOMERS".into(),
            row: vec![
                ("ID".into(), num(10_000)),
                ("NAME".into(), Value::Text("committed".into())),
            ],
            fails: false,
        })
        .unwrap();
    source
        .apply(&DbOp::Commit {
            session: session("A"),
        })
        .unwrap();
    // an open transaction's change: the copy is a consistent read and does not see it
    source
        .apply(&DbOp::Update {
            session: session("OPEN"),
            table: "APP.CUSTOMERS".into(),
            rows: vec![cdc_logminer::sim::RowSel::Match(vec![(
                "ID".into(),
                num(5),
            )])],
            set: vec![("NAME".into(), Value::Text("uncommitted".into()))],
        })
        .unwrap();
    let changes = source.database().truth().change_count();
    let copy = TableId::new("APP", "CUST_COPY");
    source
        .apply(&DbOp::CreateTableAs {
            table: "APP.CUST_COPY".into(),
            from: "APP.CUSTOMERS".into(),
            columns: vec!["ID".into(), "NAME".into(), "BALANCE".into()],
            condition: Some("ID <= 300 OR ID = 10000".into()),
            primary_key: vec!["ID".into()],
            user: None,
        })
        .unwrap();

    // the rows: the source's committed ones that meet the condition, with those columns
    let db = source.database();
    let source_rows = by_id(db, &customers(), "ID");
    let copied = by_id(db, &copy, "ID");
    assert_eq!(copied.len(), 301);
    for (id, row) in &copied {
        let want: Vec<(String, Value)> = ["ID", "NAME", "BALANCE"]
            .iter()
            .map(|c| {
                let v = source_rows[id].iter().find(|(n, _)| n == c).unwrap();
                v.clone()
            })
            .collect();
        assert_eq!(row, &want, "row {id}");
    }
    assert!(copied[&10_000].contains(&("NAME".into(), Value::Text("committed".into()))));
    assert!(
        !copied[&5].contains(&("NAME".into(), Value::Text("uncommitted".into()))),
        "an open transaction's change was copied"
    );

    // the truth: no change for the copy, the DDL with the rows it loaded
    assert_eq!(db.truth().change_count(), changes, "a CTAS writes no DML");
    let ddl = db.truth().ddl.last().unwrap().clone();
    assert_eq!(ddl.table, copy);
    assert_eq!(ddl.rows_loaded, 301);
    assert_eq!(
        ddl.sql,
        "CREATE TABLE \"APP\".\"CUST_COPY\" (\"ID\", \"NAME\", \"BALANCE\", PRIMARY KEY \
         (\"ID\")) AS SELECT \"ID\", \"NAME\", \"BALANCE\" FROM \"APP\".\"CUSTOMERS\" WHERE ID \
         <= 300 OR ID = 10000"
    );
    let info = cdc_logminer::decode::classify_ddl(&ddl.sql);
    assert_eq!(info.kind, cdc_logminer::decode::DdlKind::Create);
    assert!(info.may_hold_rows, "the decoder reads it as a CTAS");
    assert_eq!(info.table.map(|t| t.name), Some("CUST_COPY".to_owned()));

    // the dictionary: a new object, the source's column types, the declared key
    let object = objects_named(&mut source, "CUST_COPY");
    assert_eq!(object.len(), 1);
    assert!(!objects_named(&mut source, "CUSTOMERS").contains(&object[0]));
    let layout = layout(&mut source, &copy);
    let from = self::layout(&mut source, &customers());
    for column in &layout.columns {
        let original = from.column(&column.name).unwrap();
        assert_eq!(
            (
                &column.data_type,
                column.length,
                column.precision,
                column.scale
            ),
            (
                &original.data_type,
                original.length,
                original.precision,
                original.scale
            ),
            "{}",
            column.name
        );
    }
    let names: Vec<&str> = layout.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ID", "NAME", "BALANCE"]);
    assert_eq!(layout.key, ["ID"]);
    assert_eq!(layout.key_source, cdc_core::KeySource::PrimaryKey);
    assert!(!layout.columns[0].nullable);

    // the redo: the DDL row, no row of the copy
    let mined = cdc_logminer::sim::source::mine_all(
        &mut source,
        &|t: &TableId| t.table == "CUST_COPY",
        &[],
    )
    .unwrap();
    let of_copy: Vec<&cdc_core::MinedRow> = mined
        .iter()
        .filter(|r| r.table_name.as_deref() == Some("CUST_COPY"))
        .collect();
    assert_eq!(of_copy.len(), 1, "{of_copy:?}");
    assert_eq!(of_copy[0].operation, cdc_core::Operation::Ddl);
    assert_eq!(of_copy[0].sql_redo.as_deref(), Some(ddl.sql.as_str()));
    assert_eq!(of_copy[0].data_obj, Some(object[0]));
    assert_eq!(of_copy[0].scn, ddl.scn);

    // flashback reads: not below the DDL, the whole copy from it on
    let mut reader = source.snapshot_reader().unwrap();
    let below = query(&mut source, &copy, Scn(ddl.scn.0 - 1));
    assert_eq!(ora(read(reader.as_mut(), &below)), 1466);
    let at = query(&mut source, &copy, ddl.scn);
    let rows = named(&at, &read(reader.as_mut(), &at).unwrap());
    let committed: Rows = source
        .database()
        .committed_rows(&copy)
        .unwrap()
        .into_iter()
        .collect();
    assert_same(&rows, &committed, "the copy at its DDL");

    // its DML is in the redo and the truth like any table's
    source
        .apply(&DbOp::Update {
            session: session("B"),
            table: "APP.CUST_COPY".into(),
            rows: vec![cdc_logminer::sim::RowSel::Match(vec![(
                "ID".into(),
                num(7),
            )])],
            set: vec![("NAME".into(), Value::Text("later".into()))],
        })
        .unwrap();
    source
        .apply(&DbOp::Commit {
            session: session("B"),
        })
        .unwrap();
    let truth = source.database().truth();
    assert_eq!(truth.change_count(), changes + 1);
    assert_eq!(truth.transactions.last().unwrap().changes[0].table, copy);
    let mined = cdc_logminer::sim::source::mine_all(
        &mut source,
        &|t: &TableId| t.table == "CUST_COPY",
        &[],
    )
    .unwrap();
    assert!(
        mined
            .iter()
            .any(|r| r.operation == cdc_core::Operation::Update
                && r.table_name.as_deref() == Some("CUST_COPY"))
    );

    // SELECT *, no key: every column, every committed row, keyless
    source
        .apply(&DbOp::CreateTableAs {
            table: "APP.CUST_ALL".into(),
            from: "APP.CUSTOMERS".into(),
            columns: vec![],
            condition: None,
            primary_key: vec![],
            user: Some("ETL_BATCH".into()),
        })
        .unwrap();
    let all = TableId::new("APP", "CUST_ALL");
    let layout = self::layout(&mut source, &all);
    assert_eq!(layout.columns.len(), from.columns.len());
    assert!(layout.key.is_empty());
    assert_eq!(layout.key_source, cdc_core::KeySource::None);
    assert_eq!(source.database().committed_rows(&all).unwrap().len(), 601);
    let ddl = source.database().truth().ddl.last().unwrap();
    assert_eq!(
        ddl.sql,
        "CREATE TABLE \"APP\".\"CUST_ALL\" AS SELECT * FROM \"APP\".\"CUSTOMERS\""
    );
    assert_eq!(ddl.rows_loaded, 601);
}

/// A CREATE TABLE … AS SELECT that Oracle refuses leaves no table and no DDL behind.
#[test]
fn a_refused_table_copy_leaves_nothing() {
    let mut source = SimSource::new(database(42));
    let pairs = cdc_logminer::sim::TableSpec {
        pdb: None,
        owner: "APP".into(),
        name: "PAIRS".into(),
        columns: ["A", "B"]
            .iter()
            .map(|n| cdc_logminer::sim::ColumnSpec {
                name: (*n).into(),
                data_type: "NUMBER".into(),
                nullable: true,
            })
            .collect(),
        primary_key: vec![],
        unique_indexes: vec![],
        organization: cdc_logminer::sim::Organization::Heap,
    };
    source
        .apply(&DbOp::CreateTable {
            spec: pairs,
            user: None,
        })
        .unwrap();
    for (a, b) in [(1, Some(1)), (1, Some(2)), (2, None)] {
        source
            .apply(&DbOp::Insert {
                session: session("A"),
                table: "APP.PAIRS".into(),
                row: vec![
                    ("A".into(), num(a)),
                    ("B".into(), b.map_or(Value::Null, num)),
                ],
                fails: false,
            })
            .unwrap();
    }
    source
        .apply(&DbOp::Commit {
            session: session("A"),
        })
        .unwrap();
    let ddl = source.database().truth().ddl.len();
    let copy =
        |table: &str, from: &str, columns: &[&str], condition: Option<&str>, key: &[&str]| {
            DbOp::CreateTableAs {
                table: table.into(),
                from: from.into(),
                columns: columns.iter().map(|c| (*c).to_owned()).collect(),
                condition: condition.map(str::to_owned),
                primary_key: key.iter().map(|c| (*c).to_owned()).collect(),
                user: None,
            }
        };
    for (op, code) in [
        (copy("APP.X", "APP.NOPE", &[], None, &[]), 942),
        (copy("APP.CUSTOMERS", "APP.PAIRS", &[], None, &[]), 955),
        (copy("APP.X", "APP.PAIRS", &["A", "C"], None, &[]), 904),
        (copy("APP.X", "APP.PAIRS", &["A", "A"], None, &[]), 957),
        (copy("APP.X", "APP.PAIRS", &["A"], None, &["B"]), 904),
        (copy("APP.X", "APP.PAIRS", &[], Some("A 5"), &[]), 920),
        (copy("APP.X", "APP.PAIRS", &[], None, &["A"]), 1),
        (copy("APP.X", "APP.PAIRS", &[], None, &["B"]), 1400),
    ] {
        assert_eq!(refused(source.apply(&op)), code, "{op:?}");
    }
    assert!(objects_named(&mut source, "X").is_empty());
    assert_eq!(source.database().truth().ddl.len(), ddl);
    assert!(
        source
            .database()
            .committed_rows(&TableId::new("APP", "X"))
            .is_err()
    );
    // the same copy where the key holds
    source
        .apply(&copy(
            "APP.X",
            "APP.PAIRS",
            &[],
            Some("B IS NOT NULL AND B > 1"),
            &["A"],
        ))
        .unwrap();
    let rows = source
        .database()
        .committed_rows(&TableId::new("APP", "X"))
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].1, [("A".into(), num(1)), ("B".into(), num(2))]);
}

/// ALTER TABLE … RENAME TO keeps the object, its ids, rows and layout under the new name:
/// the dictionary lists it there only, LogMiner names its rows so (older ones too, as the
/// online catalog does), a flashback read below the rename fails, and the DDL row reads as
/// a rename to the decoder.
#[test]
fn a_renamed_table_keeps_its_object_and_rows_under_its_new_name() {
    let mut db = database(43);
    db.load_rows(&events(), 300, 43).unwrap();
    let mut source = SimSource::new(db);
    let objects = objects_named(&mut source, "EVENTS");
    let old_layout = layout(&mut source, &events());
    let rename = |table: &str, to: &str| DbOp::RenameTable {
        table: table.into(),
        to: to.into(),
    };
    // a row held by an open transaction: the rename cannot lock the table
    source
        .apply(&DbOp::Insert {
            session: session("OPEN"),
            table: "APP.EVENTS".into(),
            row: vec![("EVENT_ID".into(), num(10_000))],
            fails: false,
        })
        .unwrap();
    assert_eq!(
        refused(source.apply(&rename("APP.EVENTS", "EVENTS_OLD"))),
        54
    );
    source
        .apply(&DbOp::Commit {
            session: session("OPEN"),
        })
        .unwrap();
    let before = source.database().current_scn();
    let rows = source.database().committed_rows(&events()).unwrap();
    assert_eq!(rows.len(), 301);
    for (table, to, code) in [
        ("APP.EVENTS", "CUSTOMERS", 955),
        ("APP.EVENTS", "HR.EVENTS_OLD", 14047),
        ("APP.NOPE", "EVENTS_OLD", 942),
    ] {
        assert_eq!(
            refused(source.apply(&rename(table, to))),
            code,
            "{table} {to}"
        );
    }
    let mut reader = source.snapshot_reader().unwrap();
    let old_query = query(&mut source, &events(), before);
    source.apply(&rename("APP.EVENTS", "EVENTS_OLD")).unwrap();
    let renamed = TableId::new("APP", "EVENTS_OLD");

    assert!(objects_named(&mut source, "EVENTS").is_empty());
    assert_eq!(objects_named(&mut source, "EVENTS_OLD"), objects);
    let new_layout = layout(&mut source, &renamed);
    assert_eq!(new_layout.table, renamed);
    assert_eq!(
        (&new_layout.columns, new_layout.version, &new_layout.key),
        (&old_layout.columns, old_layout.version, &old_layout.key),
        "a rename is no new layout version"
    );
    assert_eq!(source.database().committed_rows(&renamed).unwrap(), rows);
    assert!(source.database().committed_rows(&events()).is_err());

    let ddl = source.database().truth().ddl.last().unwrap().clone();
    assert_eq!(ddl.table, renamed);
    assert_eq!(
        ddl.sql,
        "ALTER TABLE \"APP\".\"EVENTS\" RENAME TO \"EVENTS_OLD\""
    );
    let info = cdc_logminer::decode::classify_ddl(&ddl.sql);
    assert_eq!(info.kind, cdc_logminer::decode::DdlKind::Rename);
    assert_eq!(info.table.map(|t| t.name), Some("EVENTS".to_owned()));
    assert_eq!(
        info.renamed_to.map(|t| t.name),
        Some("EVENTS_OLD".to_owned())
    );

    // flashback reads: the old name is gone, the new one not readable below the rename
    assert_eq!(ora(read(reader.as_mut(), &old_query)), 942);
    assert_eq!(
        ora(read(reader.as_mut(), &query(&mut source, &renamed, before))),
        1466
    );
    let now = query(&mut source, &renamed, ddl.scn);
    assert_eq!(read(reader.as_mut(), &now).unwrap().len(), 301);

    // DML goes on under the new name; LogMiner names the older rows so too
    assert_eq!(
        refused(source.apply(&DbOp::Delete {
            session: session("B"),
            table: "APP.EVENTS".into(),
            rows: vec![cdc_logminer::sim::RowSel::Match(vec![(
                "EVENT_ID".into(),
                num(1)
            )])],
        })),
        942
    );
    source
        .apply(&DbOp::Delete {
            session: session("B"),
            table: "APP.EVENTS_OLD".into(),
            rows: vec![cdc_logminer::sim::RowSel::Match(vec![(
                "EVENT_ID".into(),
                num(1),
            )])],
        })
        .unwrap();
    source
        .apply(&DbOp::Commit {
            session: session("B"),
        })
        .unwrap();
    let truth = source.database().truth();
    let tables: Vec<&TableId> = truth
        .transactions
        .iter()
        .flat_map(|t| t.changes.iter().map(|c| &c.table))
        .collect();
    assert_eq!(
        tables,
        [&events(), &renamed],
        "each change under its name then"
    );
    let mined = cdc_logminer::sim::source::mine_all(
        &mut source,
        &|t: &TableId| t.table == "EVENTS_OLD",
        &[],
    )
    .unwrap();
    let dml: Vec<(&str, u32)> = mined
        .iter()
        .filter(|r| {
            matches!(
                r.operation,
                cdc_core::Operation::Insert | cdc_core::Operation::Delete
            )
        })
        .map(|r| (r.table_name.as_deref().unwrap_or(""), r.status))
        .collect();
    assert_eq!(dml, [("EVENTS_OLD", 0), ("EVENTS_OLD", 0)]);
}

/// The two statements as scenario events.
#[test]
fn scenario_events_copy_and_rename_tables() {
    let scenario = cdc_logminer::sim::Scenario::from_json(
        r#"{
          "name": "copy_then_rename",
          "database": { "seed": 3 },
          "events": [
            { "event": "insert", "session": "s", "table": "APP.CUSTOMERS", "values": { "ID": 1, "NAME": "a" } },
            { "event": "insert", "session": "s", "table": "APP.CUSTOMERS", "values": { "ID": 2, "NAME": "b" } },
            { "event": "commit", "session": "s" },
            { "event": "create_table_as", "table": "APP.STAGE", "from": "APP.CUSTOMERS",
              "columns": ["ID", "NAME"], "condition": "ID > 1", "primary_key": ["ID"] },
            { "event": "rename_table", "table": "APP.STAGE", "to": "CUSTOMERS_2" }
          ]
        }"#,
    )
    .unwrap();
    let source = scenario.play().unwrap();
    let db = source.database();
    let rows = db
        .committed_rows(&TableId::new("APP", "CUSTOMERS_2"))
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].1,
        [
            ("ID".into(), num(2)),
            ("NAME".into(), Value::Text("b".into()))
        ]
    );
    let loaded: Vec<u64> = db.truth().ddl.iter().map(|d| d.rows_loaded).collect();
    assert_eq!(loaded, [1, 0]);
    let unknown = cdc_logminer::sim::Scenario::from_json(
        r#"{"name": "x", "events": [{ "event": "rename_table", "table": "APP.A", "into": "B" }]}"#,
    );
    assert!(unknown.is_err());
}
