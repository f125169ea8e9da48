//! DML: INSERT, UPDATE and DELETE of rows, with the redo rows each writes (and the LOB rows of
//! values stored out of the row).

use cdc_core::change::ChangeOp;
use cdc_core::{ColumnType, ObjectId, Scn, Value};

use super::SimDatabase;
use super::lobs::{lob_out_of_row, locating_values};
use super::locks::RowKey;
use super::ops::{ColumnInput, RowSel};
use super::records::{Body, DmlKind};
use super::sessions::SessionName;
use super::tables::TableRef;
use super::transactions::TxChange;
use crate::sim::SimError;
use crate::sim::render::LOB_PLACEHOLDER_ROWID;

/// Oracle stores `''` as NULL and pads CHAR/NCHAR to their length.
fn normalise(col: &cdc_core::ColumnDef, v: Value) -> Value {
    match v {
        Value::Text(s) if s.is_empty() => Value::Null,
        Value::Raw(b) if b.is_empty() => Value::Null,
        Value::Text(s) if matches!(col.data_type, ColumnType::Char | ColumnType::NChar) => {
            let len = s.chars().count();
            let width = col.length as usize;
            if len < width {
                Value::Text(format!("{s}{}", " ".repeat(width - len)))
            } else {
                Value::Text(s)
            }
        }
        other => other,
    }
}

/// ORA-01400 for a NULL in a NOT NULL column.
fn not_null(table: &cdc_core::TableId, column: &str) -> SimError {
    SimError::Ora(
        cdc_core::ora::OraCode(1400),
        format!(
            "ORA-01400: cannot insert NULL into (\"{}\".\"{}\".\"{column}\")",
            table.owner, table.table
        ),
    )
}

impl SimDatabase {
    /// The ROWID of the table's next new row in segment `object`: rows fill blocks of 50
    /// rows, spread over three files.
    pub(super) fn new_row_id(&mut self, t: TableRef, object: ObjectId) -> Result<String, SimError> {
        let table = self.table_mut(t)?;
        let n = table.next_row;
        table.next_row += 1;
        Ok(crate::sim::render::rowid(
            object.0,
            4 + (n % 3),
            300 + n / 50,
            n % 50,
        ))
    }

    /// A new row from a value for every column, in the layout's order, as Oracle stores
    /// them (what [`SimDatabase::full_row`] makes of named values, without the lookups).
    pub(super) fn stored_row(
        &self,
        t: TableRef,
        mut row: Vec<Value>,
    ) -> Result<Vec<Value>, SimError> {
        let table = self.table(t)?;
        let layout = table
            .layout()
            .ok_or_else(|| SimError::Scenario("table without layout".into()))?;
        if row.len() != layout.columns.len() {
            return Err(SimError::Scenario(format!(
                "{}: {} values for {} columns",
                table.id,
                row.len(),
                layout.columns.len()
            )));
        }
        for (v, c) in row.iter_mut().zip(&layout.columns) {
            *v = normalise(c, std::mem::replace(v, Value::Null));
            if !c.nullable && v.is_null() {
                return Err(not_null(&table.id, &c.name));
            }
        }
        Ok(row)
    }

    /// A new row: the given columns' values as Oracle stores them, NULL elsewhere.
    pub(super) fn full_row<V: ColumnInput>(
        &self,
        t: TableRef,
        values: &[(String, V)],
    ) -> Result<Vec<Value>, SimError> {
        let table = self.table(t)?;
        let layout = table
            .layout()
            .ok_or_else(|| SimError::Scenario("table without layout".into()))?;
        let mut row = vec![Value::Null; layout.columns.len()];
        for (name, v) in values {
            let i = layout
                .column_index(name)
                .ok_or_else(|| SimError::Scenario(format!("{}: no column {name}", table.id)))?;
            row[i] = normalise(&layout.columns[i], v.read(&layout.columns[i])?);
        }
        for (i, c) in layout.columns.iter().enumerate() {
            if !c.nullable && row[i].is_null() {
                return Err(not_null(&table.id, &c.name));
            }
        }
        Ok(row)
    }

    /// The ROWID of the row a statement selects.
    pub(super) fn select_row<V: ColumnInput>(
        &self,
        t: TableRef,
        sel: &RowSel<V>,
    ) -> Result<String, SimError> {
        let table = self.table(t)?;
        match sel {
            RowSel::RowId(r) if table.rows.contains_key(r) => Ok(r.clone()),
            RowSel::RowId(r) => Err(SimError::Scenario(format!("{}: no row {r}", table.id))),
            RowSel::Match(values) => {
                let layout = table
                    .layout()
                    .ok_or_else(|| SimError::Scenario("table without layout".into()))?;
                // `given` as the statement gave them (for the error), `wanted` as stored
                let mut given = Vec::with_capacity(values.len());
                let mut wanted = Vec::with_capacity(values.len());
                for (n, v) in values {
                    let i = layout.column_index(n).ok_or_else(|| {
                        SimError::Scenario(format!("{}: no column {n}", table.id))
                    })?;
                    let value = v.read(&layout.columns[i])?;
                    wanted.push((i, normalise(&layout.columns[i], value.clone())));
                    given.push((n, value));
                }
                table
                    .rows
                    .iter()
                    .find(|(_, row)| wanted.iter().all(|(i, v)| row.get(*i) == Some(v)))
                    .map(|(r, _)| r.clone())
                    .ok_or_else(|| {
                        SimError::Scenario(format!("{}: no row matches {given:?}", table.id))
                    })
            }
        }
    }

    /// INSERT of one row; a row with LOB values is an INSERT with locators, the LOB rows of the
    /// values stored out of the row, then the UPDATE of the locators.
    pub(super) fn insert<V: ColumnInput>(
        &mut self,
        session: &SessionName,
        name: &str,
        values: &[(String, V)],
        fails: bool,
    ) -> Result<(), SimError> {
        let t = self.find_table(Some(session), name)?;
        let row = self.full_row(t, values)?;
        let table = self.table(t)?;
        let object = table.segment_for(&row)?;
        let version = table.version();
        let unsupported = table.unsupported();
        let lob_cols: Vec<usize> = table
            .layout()
            .map(|l| {
                l.columns
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| c.data_type.is_lob() && !row[*i].is_null())
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default();
        let row_id = self.new_row_id(t, object)?;
        self.lock(
            session,
            RowKey {
                table: t,
                row_id: row_id.clone(),
            },
        )?;
        let change = TxChange {
            table: t,
            row_id: row_id.clone(),
            ssn: 0,
            op: ChangeOp::Insert,
            before: None,
            after: Some(row.clone()),
            set: Vec::new(),
            scn: Scn(0),
            undone: false,
            failed: fails,
            lob_only: false,
        };
        if unsupported {
            self.statement(
                session,
                vec![(
                    Body::Unsupported {
                        table: t,
                        object,
                        row_id: row_id.clone(),
                    },
                    change,
                )],
            )?;
        } else if lob_cols.is_empty() {
            let body = Body::Dml {
                table: t,
                object,
                version,
                row_id: row_id.clone(),
                kind: DmlKind::Insert { after: row.clone() },
            };
            self.statement(session, vec![(body, change)])?;
        } else {
            // an INSERT with locators (placeholder ROWID); for each value stored out of the
            // row its LOB rows (placeholder ROWID too); then the UPDATE of the locators with
            // the real ROWID, which writes the values small enough to live in the row
            let mut with_locators = row.clone();
            for &i in &lob_cols {
                with_locators[i] = Value::EmptyLob;
            }
            let body = Body::Dml {
                table: t,
                object,
                version,
                row_id: LOB_PLACEHOLDER_ROWID.to_owned(),
                kind: DmlKind::Insert {
                    after: with_locators.clone(),
                },
            };
            let mut first = change.clone();
            first.op = ChangeOp::Insert;
            self.statement(session, vec![(body, first)])?;
            let (types, locate) = self.lob_context(t, &row)?;
            let mut lob_rows = Vec::new();
            for &i in &lob_cols {
                if types.get(i).is_some_and(|ty| lob_out_of_row(ty, &row[i])) {
                    let rows = self.written_lob_rows(&row[i]);
                    lob_rows.extend(rows.into_iter().map(|r| Body::Lob {
                        table: t,
                        object,
                        version,
                        row_id: LOB_PLACEHOLDER_ROWID.to_owned(),
                        locate: locate.clone(),
                        column: i,
                        row: r,
                    }));
                }
            }
            self.lob_records(session, lob_rows)?;
            let set: Vec<(usize, Value)> = lob_cols
                .iter()
                .map(|&i| {
                    let out = types.get(i).is_some_and(|ty| lob_out_of_row(ty, &row[i]));
                    (i, if out { Value::EmptyLob } else { row[i].clone() })
                })
                .collect();
            let body = Body::Dml {
                table: t,
                object,
                version,
                row_id: row_id.clone(),
                kind: DmlKind::Update {
                    before: with_locators,
                    set,
                },
            };
            // the locator update belongs to the same change: the change keeps its SSN
            self.statement_continuation(session, body)?;
        }
        if fails {
            self.undo_last(session)?;
        } else {
            self.table_mut(t)?.rows.insert(row_id, row);
        }
        Ok(())
    }

    /// UPDATE of the selected rows in one statement (one RS_ID).
    pub(super) fn update<V: ColumnInput>(
        &mut self,
        session: &SessionName,
        name: &str,
        rows: &[RowSel<V>],
        set: &[(String, V)],
    ) -> Result<(), SimError> {
        let t = self.find_table(Some(session), name)?;
        let mut statement = Vec::new();
        let mut new_rows = Vec::new();
        let mut lob_rows = Vec::new();
        for sel in rows {
            let row_id = self.select_row(t, sel)?;
            self.lock(
                session,
                RowKey {
                    table: t,
                    row_id: row_id.clone(),
                },
            )?;
            let table = self.table(t)?;
            let layout = table
                .layout()
                .ok_or_else(|| SimError::Scenario("no layout".into()))?;
            let before = table.rows.get(&row_id).cloned().unwrap_or_default();
            let mut after = before.clone();
            let mut set_cols = Vec::new();
            for (n, v) in set {
                let i = layout
                    .column_index(n)
                    .ok_or_else(|| SimError::Scenario(format!("{}: no column {n}", table.id)))?;
                after[i] = normalise(&layout.columns[i], v.read(&layout.columns[i])?);
                set_cols.push((i, after[i].clone()));
            }
            let object = table.segment_for(&before)?;
            if table.segment_for(&after)? != object {
                return Err(SimError::Ora(
                    cdc_core::ora::OraCode(14402),
                    "ORA-14402: updating partition key column would cause a partition change"
                        .into(),
                ));
            }
            // a LOB value stored out of the row: the UPDATE names its locator, the value
            // follows in LOB rows with the real ROWID
            let mut rendered_set = set_cols.clone();
            for (i, v) in rendered_set.iter_mut() {
                if lob_out_of_row(&layout.columns[*i].data_type, v) {
                    let locate = locating_values(&layout.columns, &after);
                    let rows = self.written_lob_rows(v);
                    lob_rows.extend(rows.into_iter().map(|r| Body::Lob {
                        table: t,
                        object,
                        version: table.version(),
                        row_id: row_id.clone(),
                        locate: locate.clone(),
                        column: *i,
                        row: r,
                    }));
                    *v = Value::EmptyLob;
                }
            }
            let body = if table.unsupported() {
                Body::Unsupported {
                    table: t,
                    object,
                    row_id: row_id.clone(),
                }
            } else {
                Body::Dml {
                    table: t,
                    object,
                    version: table.version(),
                    row_id: row_id.clone(),
                    kind: DmlKind::Update {
                        before: before.clone(),
                        set: rendered_set,
                    },
                }
            };
            let change = TxChange {
                table: t,
                row_id: row_id.clone(),
                ssn: 0,
                op: ChangeOp::Update,
                before: Some(before),
                after: Some(after.clone()),
                set: set_cols.iter().map(|(i, _)| *i).collect(),
                scn: Scn(0),
                undone: false,
                failed: false,
                lob_only: false,
            };
            statement.push((body, change));
            new_rows.push((row_id, after));
        }
        self.statement(session, statement)?;
        self.lob_records(session, lob_rows)?;
        for (row_id, after) in new_rows {
            self.table_mut(t)?.rows.insert(row_id, after);
        }
        Ok(())
    }

    /// DELETE of the selected rows in one statement (one RS_ID).
    pub(super) fn delete<V: ColumnInput>(
        &mut self,
        session: &SessionName,
        name: &str,
        rows: &[RowSel<V>],
    ) -> Result<(), SimError> {
        let t = self.find_table(Some(session), name)?;
        let mut statement = Vec::new();
        let mut gone = Vec::new();
        for sel in rows {
            let row_id = self.select_row(t, sel)?;
            self.lock(
                session,
                RowKey {
                    table: t,
                    row_id: row_id.clone(),
                },
            )?;
            let table = self.table(t)?;
            let before = table.rows.get(&row_id).cloned().unwrap_or_default();
            let object = table.segment_for(&before)?;
            let body = if table.unsupported() {
                Body::Unsupported {
                    table: t,
                    object,
                    row_id: row_id.clone(),
                }
            } else {
                Body::Dml {
                    table: t,
                    object,
                    version: table.version(),
                    row_id: row_id.clone(),
                    kind: DmlKind::Delete {
                        before: before.clone(),
                    },
                }
            };
            statement.push((
                body,
                TxChange {
                    table: t,
                    row_id: row_id.clone(),
                    ssn: 0,
                    op: ChangeOp::Delete,
                    before: Some(before),
                    after: None,
                    set: Vec::new(),
                    scn: Scn(0),
                    undone: false,
                    failed: false,
                    lob_only: false,
                },
            ));
            gone.push(row_id);
        }
        self.statement(session, statement)?;
        for row_id in gone {
            self.table_mut(t)?.rows.remove(&row_id);
        }
        Ok(())
    }
}
