//! `CREATE TABLE … AS SELECT`: a new table filled in the statement itself with a copy of
//! another table's committed rows. Oracle loads the copy by direct path, so the redo holds
//! the DDL row (in a transaction of its own: START, DDL, COMMIT) and no row of the copy; the
//! rows are committed as of the DDL's SCN (a flashback read at or after it sees them, one
//! below it fails with ORA-01466), and the ground truth has them in no transaction: a capture
//! that streams cannot deliver them, a snapshot reads them.
//!
//! ```text
//!   from's committed rows now (a consistent read: open transactions unseen), in ROWID order
//!     ──► condition, columns ──► new heap table: new object id, new ROWIDs
//!     ──► DDL transaction: START + "CREATE TABLE … AS SELECT …", COMMIT
//!     ──► committed versions at the DDL's SCN; TruthDdl::rows_loaded
//! ```
//!
//! What Oracle copies of the source's definition: the columns' names, types and NOT NULL
//! constraints; no key, index or other constraint. A primary key the statement declares
//! (`CREATE TABLE t ("ID", …, PRIMARY KEY ("ID")) AS SELECT …`) makes its columns NOT NULL
//! and must hold for the copy (ORA-01400, ORA-00001).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cdc_core::ora::OraCode;
use cdc_core::table::quote_identifier;
use cdc_core::{ColumnDef, Scn, SupplementalLogging, TableId, TableLayout, Value, choose_key};

use super::SimDatabase;
use super::ddl::DdlRows;
use super::tables::{TableRef, resolve_table};
use super::versions::StoredRow;
use crate::sim::SimError;
use crate::sim::condition::Condition;
use crate::sim::model::{Organization, SimTable};
use crate::sim::order::RowPos;
use crate::source::SourceError;

/// What a CREATE TABLE … AS SELECT asks for (the fields of `DbOp::CreateTableAs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TableCopy<'a> {
    /// `OWNER.TABLE` or `PDB.OWNER.TABLE`.
    pub table: &'a str,
    pub from: &'a str,
    /// Empty: every column (`SELECT *`).
    pub columns: &'a [String],
    pub condition: Option<&'a str>,
    pub primary_key: &'a [String],
    /// The user issuing it; the new table's owner when `None`.
    pub user: Option<&'a str>,
}

impl SimDatabase {
    /// Runs a CREATE TABLE … AS SELECT: the table, its rows, its DDL in the redo.
    pub(super) fn create_table_as(&mut self, copy: &TableCopy<'_>) -> Result<(), SimError> {
        let source = resolve_table(&self.containers, None, copy.from)?;
        let con = source.con;
        let id = self.copy_id(con, copy.table)?;
        self.name_free(con, &id)?;
        let from = self
            .table(source)?
            .shared_layout()
            .ok_or_else(|| SimError::Scenario(format!("{}: no layout", copy.from)))?;
        let picked = picked_columns(&from, copy.columns)?;
        let mut columns: Vec<ColumnDef> = Vec::with_capacity(picked.len());
        for (at, &i) in picked.iter().enumerate() {
            let mut column = from.columns[i].clone();
            column.position = u16::try_from(at + 1).unwrap_or(u16::MAX);
            column.nullable = column.nullable && !copy.primary_key.contains(&column.name);
            columns.push(column);
        }
        if let Some(missing) = copy
            .primary_key
            .iter()
            .find(|k| !columns.iter().any(|c| &c.name == *k))
        {
            return Err(invalid_identifier(missing));
        }
        let condition = copy
            .condition
            .map(|text| Condition::parse(text, &from.columns))
            .transpose()
            .map_err(refused)?;
        let rows = self.copied_rows(source, &picked, condition.as_ref())?;
        check_key(&id, &columns, copy.primary_key, &rows)?;

        let (key, key_source) = choose_key(&columns, copy.primary_key.to_vec(), &[]);
        let sql = copy_sql(&id, copy, &from.table, &columns);
        let layout = TableLayout {
            table: id.clone(),
            version: 1,
            valid_from: Scn(self.scn),
            segment: (0..columns.len()).map(|i| u16::try_from(i).ok()).collect(),
            columns,
            key,
            key_source,
            // as every table of the simulator: full before images in the redo
            supplemental: SupplementalLogging {
                all_columns: true,
                primary_key: false,
            },
        };
        let object = self.next_object_id();
        let t = self.add_table(
            con,
            SimTable {
                id: id.clone(),
                versions: vec![Arc::new(layout)],
                object,
                organization: Organization::Heap,
                partitions: Vec::new(),
                iot_top: None,
                rows: BTreeMap::new(),
                dropped: false,
                next_row: 0,
            },
        )?;
        let loaded = rows.len() as u64;
        let mut versions = Vec::with_capacity(rows.len());
        for row in rows {
            let row_id = self.new_row_id(t, object)?;
            let pos = RowPos::parse(&row_id)
                .ok_or_else(|| SimError::Scenario(format!("{id}: {row_id} is not a ROWID")))?;
            versions.push((t, pos, Some(StoredRow::from(row.as_slice()))));
            self.table_mut(t)?.rows.insert(row_id, row);
        }
        // the copy takes a few microseconds a row before the statement ends
        self.clock.advance_nanos(loaded * 2_000);
        let user = copy.user.unwrap_or(&id.owner).to_owned();
        let scn = self.ddl(con, &user, t, sql, DdlRows::Kept)?;
        // the rows are the table's from its first SCN: no read sees it without them
        self.versions
            .write()
            .commit(scn, self.clock.epoch_nanos(), versions);
        if let Some(ddl) = self.truth.ddl.last_mut() {
            ddl.rows_loaded = loaded;
        }
        Ok(())
    }

    /// The new table's name: in the source's container (a CTAS cannot create a table in
    /// another PDB).
    fn copy_id(&self, con: usize, name: &str) -> Result<TableId, SimError> {
        let pdb = self.containers.get(con).and_then(|c| c.name.clone());
        let parts: Vec<&str> = name.split('.').collect();
        let (owner, table) = match parts.as_slice() {
            [owner, table] => (*owner, *table),
            [named, owner, table] if pdb.as_deref() == Some(*named) => (*owner, *table),
            [named, _, _] => {
                return Err(SimError::Scenario(format!(
                    "{name}: a table created as a select is in the PDB of its source ({}), not \
                     {named}",
                    pdb.as_deref().unwrap_or("no PDB")
                )));
            }
            _ => {
                return Err(SimError::Scenario(format!(
                    "table {name:?}: expected OWNER.TABLE or PDB.OWNER.TABLE"
                )));
            }
        };
        let id = TableId::new(owner, table);
        Ok(match pdb {
            Some(pdb) => id.in_pdb(pdb),
            None => id,
        })
    }

    /// The committed rows of `source` now that meet `condition`, in ROWID order, each with
    /// the `picked` columns.
    fn copied_rows(
        &self,
        source: TableRef,
        picked: &[usize],
        condition: Option<&Condition>,
    ) -> Result<Vec<Vec<Value>>, SimError> {
        let state = self.versions.read();
        let Some(versions) = state.tables.get(&source) else {
            return Ok(Vec::new());
        };
        let mut rows = Vec::new();
        for row in versions.rows.values().filter_map(|h| h.newest()) {
            if let Some(condition) = condition
                && !condition.holds(row).map_err(refused)?
            {
                continue;
            }
            rows.push(
                picked
                    .iter()
                    .map(|&i| row.get(i).cloned().unwrap_or(Value::Null))
                    .collect(),
            );
        }
        Ok(rows)
    }
}

/// The indexes into `from`'s columns of the columns selected: every one for an empty list.
fn picked_columns(from: &TableLayout, columns: &[String]) -> Result<Vec<usize>, SimError> {
    if columns.is_empty() {
        return Ok((0..from.columns.len()).collect());
    }
    let mut seen = BTreeSet::new();
    let mut picked = Vec::with_capacity(columns.len());
    for name in columns {
        let at = from
            .column_index(name)
            .ok_or_else(|| invalid_identifier(name))?;
        if !seen.insert(at) {
            return Err(SimError::Ora(
                OraCode(957),
                "ORA-00957: duplicate column name".into(),
            ));
        }
        picked.push(at);
    }
    Ok(picked)
}

/// The copy's rows satisfy the declared primary key: no NULL (ORA-01400), no key twice
/// (ORA-00001); the statement fails as a whole otherwise.
fn check_key(
    id: &TableId,
    columns: &[ColumnDef],
    key: &[String],
    rows: &[Vec<Value>],
) -> Result<(), SimError> {
    if key.is_empty() {
        return Ok(());
    }
    let at: Vec<usize> = key
        .iter()
        .filter_map(|k| columns.iter().position(|c| &c.name == k))
        .collect();
    let mut keys = BTreeSet::new();
    for row in rows {
        let values: Vec<&Value> = at.iter().filter_map(|&i| row.get(i)).collect();
        if let Some(null) = at.iter().find(|&&i| row.get(i).is_none_or(Value::is_null)) {
            return Err(SimError::Ora(
                OraCode(1400),
                format!(
                    "ORA-01400: cannot insert NULL into ({}.{})",
                    id.quoted(),
                    quote_identifier(&columns[*null].name)
                ),
            ));
        }
        // Value has no Ord: its debug text tells keys apart
        if !keys.insert(format!("{values:?}")) {
            return Err(SimError::Ora(
                OraCode(1),
                format!(
                    "ORA-00001: unique constraint ({}.SYS_C0012345) violated",
                    id.owner
                ),
            ));
        }
    }
    Ok(())
}

/// The statement as issued: `CREATE TABLE "O"."T" [("A", …, PRIMARY KEY ("A"))] AS SELECT
/// * | "A", … FROM "O"."S" [WHERE …]`.
fn copy_sql(id: &TableId, copy: &TableCopy<'_>, from: &TableId, columns: &[ColumnDef]) -> String {
    let names = |list: &mut dyn Iterator<Item = &str>| {
        list.map(quote_identifier).collect::<Vec<_>>().join(", ")
    };
    let mut sql = format!("CREATE TABLE {}", id.quoted());
    if !copy.primary_key.is_empty() {
        let all = names(&mut columns.iter().map(|c| c.name.as_str()));
        let key = names(&mut copy.primary_key.iter().map(String::as_str));
        sql.push_str(&format!(" ({all}, PRIMARY KEY ({key}))"));
    }
    let selected = if copy.columns.is_empty() {
        "*".to_owned()
    } else {
        names(&mut copy.columns.iter().map(String::as_str))
    };
    sql.push_str(&format!(" AS SELECT {selected} FROM {}", from.quoted()));
    if let Some(condition) = copy.condition {
        sql.push_str(&format!(" WHERE {condition}"));
    }
    sql
}

fn invalid_identifier(name: &str) -> SimError {
    SimError::Ora(
        OraCode(904),
        format!("ORA-00904: \"{name}\": invalid identifier"),
    )
}

/// A condition Oracle's parser or evaluator refuses: the statement fails with its error.
fn refused(e: SourceError) -> SimError {
    match e.ora_code() {
        Some(code) => SimError::Ora(code, e.to_string()),
        None => SimError::Scenario(e.to_string()),
    }
}
