//! DDL: CREATE TABLE, ALTER TABLE, TRUNCATE and DROP TABLE, each a transaction of its own
//! (START, the DDL row, COMMIT) and a new layout version or object where Oracle makes one.

use std::collections::BTreeMap;

use cdc_core::table::quote_identifier;
use cdc_core::{ObjectId, Scn, TableId, TableLayout, Value};

use super::SimDatabase;
use super::records::{Body, Group};
use super::sessions::SessionName;
use super::tables::TableRef;
use super::tables::resolve_table;
use crate::sim::SimError;
use crate::sim::model::{
    ColumnSpec, Organization, SimPartition, SimTable, TableSpec, column_def, layout_from_spec,
};
use crate::sim::rng::SimRng;
use crate::sim::truth::TruthDdl;

/// What a DDL statement does to a table's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DdlRows {
    /// They stay (in the new layout, for an ALTER).
    Kept,
    /// TRUNCATE: they are gone.
    Emptied,
}

impl SimDatabase {
    /// Runs one DDL statement by `user` as a transaction of its own in the container's DDL
    /// session: START and the DDL row in one record, then COMMIT; the ground truth notes it.
    /// Returns the DDL row's SCN, below which flashback reads of the table fail.
    pub(super) fn ddl(
        &mut self,
        con: usize,
        user: &str,
        t: TableRef,
        sql: String,
        rows: DdlRows,
    ) -> Result<Scn, SimError> {
        let session = SessionName::ddl(con);
        self.begin(&session, None, Some(user), Some(false))?;
        if let Some(s) = self.sessions.get_mut(&session) {
            s.con = con;
            s.user = user.to_owned();
        }
        self.ensure_tx(&session)?;
        let table = self.table(t)?;
        let (owner, name, object, id) = (
            table.id.owner.clone(),
            table.id.table.clone(),
            table.object,
            table.id.clone(),
        );
        let scn = self.next_scn();
        let start = self.record(&session, scn, 0, false, Body::Start)?;
        let ddl = self.record(
            &session,
            scn,
            1,
            false,
            Body::Ddl {
                owner,
                name,
                object,
                sql: sql.clone(),
            },
        )?;
        self.tx_mut(&session)?.start_scn = scn;
        let thread = self.sessions.get(&session).map(|s| s.thread).unwrap_or(0);
        self.write_group(
            thread,
            Group {
                records: vec![start, ddl],
            },
        );
        let commit_scn = self.next_scn();
        let commit = self.record(&session, commit_scn, 0, false, Body::Commit)?;
        let commit_addr = self.write_group(
            thread,
            Group {
                records: vec![commit],
            },
        );
        if let Some(s) = self.sessions.get_mut(&session) {
            s.tx = None;
        }
        if let Some(layout) = self.table(t)?.shared_layout() {
            self.versions
                .write()
                .redefine(t, scn, layout, rows == DdlRows::Emptied);
        }
        let con_id = self.containers.get(con).map(|c| c.con).unwrap_or_default();
        self.truth.ddl.push(TruthDdl {
            con: con_id,
            table: id,
            sql,
            scn,
            commit_addr,
            rows_loaded: 0,
        });
        Ok(scn)
    }

    /// ORA-00955 when a live table of container `con` has the name `id`.
    pub(super) fn name_free(&self, con: usize, id: &TableId) -> Result<(), SimError> {
        let container = self
            .containers
            .get(con)
            .ok_or_else(|| SimError::Scenario("no container".into()))?;
        if container.tables.iter().any(|t| !t.dropped && t.id == *id) {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(955),
                "ORA-00955: name is already used by an existing object".into(),
            ));
        }
        Ok(())
    }

    /// Adds a table to a container's dictionary (no redo: the tables a database starts with).
    pub(super) fn create_table_in(
        &mut self,
        con: usize,
        spec: &TableSpec,
    ) -> Result<TableRef, SimError> {
        let container = self
            .containers
            .get(con)
            .ok_or_else(|| SimError::Scenario("no container".into()))?;
        let mut id = TableId::new(spec.owner.clone(), spec.name.clone());
        if let Some(name) = &container.name {
            id = id.in_pdb(name.clone());
        }
        self.name_free(con, &id)?;
        let layout = layout_from_spec(spec, id.clone(), Scn(self.scn))?;
        let object = self.next_object_id();
        let mut partitions = Vec::new();
        let mut iot_top = None;
        match &spec.organization {
            Organization::Heap => {}
            Organization::Iot => iot_top = Some(self.next_object_id()),
            Organization::Range { partitions: specs } => {
                for p in specs {
                    let object = self.next_object_id();
                    partitions.push(SimPartition {
                        name: p.name.clone(),
                        object,
                        less_than: p.less_than,
                    });
                }
            }
        }
        let table = SimTable {
            id,
            versions: vec![std::sync::Arc::new(layout)],
            object,
            organization: spec.organization.clone(),
            partitions,
            iot_top,
            rows: BTreeMap::new(),
            dropped: false,
            next_row: 0,
        };
        self.add_table(con, table)
    }

    /// Adds a table to container `con`'s dictionary and to the committed versions.
    pub(super) fn add_table(&mut self, con: usize, table: SimTable) -> Result<TableRef, SimError> {
        let c = self
            .containers
            .get_mut(con)
            .ok_or_else(|| SimError::Scenario("no container".into()))?;
        let (id, layout) = (table.id.clone(), table.shared_layout());
        c.tables.push(table);
        let t = TableRef {
            con,
            index: c.tables.len() - 1,
        };
        if let Some(layout) = layout {
            self.versions.write().register(t, id, layout);
        }
        Ok(t)
    }

    /// `CREATE TABLE` as issued: the table, and its DDL in the redo.
    pub(super) fn create_table(
        &mut self,
        user: Option<&str>,
        spec: &TableSpec,
    ) -> Result<(), SimError> {
        let con = match &spec.pdb {
            Some(p) => self
                .containers
                .iter()
                .position(|c| c.name.as_deref() == Some(p.as_str()))
                .ok_or_else(|| SimError::Scenario(format!("no PDB named {p}")))?,
            None => 0,
        };
        let t = self.create_table_in(con, spec)?;
        let layout = self
            .table(t)?
            .layout()
            .cloned()
            .ok_or_else(|| SimError::Scenario("no layout".into()))?;
        let mut cols = Vec::new();
        for (c, s) in layout.columns.iter().zip(&spec.columns) {
            let mut text = format!(
                "{} {}",
                quote_identifier(&c.name),
                s.data_type.to_ascii_uppercase()
            );
            if !c.nullable {
                text.push_str(" NOT NULL");
            }
            cols.push(text);
        }
        if !spec.primary_key.is_empty() {
            let keys: Vec<String> = spec
                .primary_key
                .iter()
                .map(|k| quote_identifier(k))
                .collect();
            cols.push(format!("PRIMARY KEY ({})", keys.join(", ")));
        }
        for index in &spec.unique_indexes {
            let columns: Vec<String> = index.columns.iter().map(|k| quote_identifier(k)).collect();
            cols.push(format!(
                "CONSTRAINT {} UNIQUE ({})",
                quote_identifier(&index.name),
                columns.join(", ")
            ));
        }
        let mut sql = format!(
            "CREATE TABLE {} ({})",
            layout.table.quoted(),
            cols.join(", ")
        );
        match &spec.organization {
            Organization::Heap => {}
            Organization::Iot => sql.push_str(" ORGANIZATION INDEX"),
            Organization::Range { partitions } => {
                let key = spec.primary_key.first().cloned().unwrap_or_default();
                let parts: Vec<String> = partitions
                    .iter()
                    .map(|p| {
                        format!(
                            "PARTITION {} VALUES LESS THAN ({})",
                            quote_identifier(&p.name),
                            p.less_than
                                .map(|b| b.to_string())
                                .unwrap_or_else(|| "MAXVALUE".into())
                        )
                    })
                    .collect();
                sql.push_str(&format!(
                    " PARTITION BY RANGE ({}) ({})",
                    quote_identifier(&key),
                    parts.join(", ")
                ));
            }
        }
        self.ddl(con, user.unwrap_or(&spec.owner), t, sql, DdlRows::Kept)
            .map(|_| ())
    }

    /// A DDL statement on an existing table, refused (ORA-00054) while a transaction holds one
    /// of its rows; `change` makes it in the dictionary.
    fn alter_table(
        &mut self,
        name: &str,
        rows: DdlRows,
        make_sql: &dyn Fn(&str) -> String,
        change: impl FnOnce(&mut SimTable, Scn, &mut SimRng, &mut u32) -> Result<(), SimError>,
    ) -> Result<(), SimError> {
        let t = resolve_table(&self.containers, None, name)?;
        self.not_busy(t)?;
        let scn = Scn(self.scn + 1);
        let mut next_object = self.next_object;
        let mut rng = self.rng.fork(0xDD1);
        change(self.table_mut(t)?, scn, &mut rng, &mut next_object)?;
        self.next_object = next_object;
        let quoted = self.table(t)?.id.quoted();
        let user = self.table(t)?.id.owner.clone();
        self.ddl(t.con, &user, t, make_sql(&quoted), rows)
            .map(|_| ())
    }

    /// ORA-00054 while an open transaction holds a row of the table: DDL takes an exclusive
    /// lock and does not wait.
    fn not_busy(&self, t: TableRef) -> Result<(), SimError> {
        if self.locks.keys().any(|key| key.table == t) {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(54),
                "ORA-00054: resource busy and acquire with NOWAIT specified or timeout expired"
                    .into(),
            ));
        }
        Ok(())
    }

    /// `ALTER TABLE … RENAME TO`: the same object under a new name in its schema. Its object
    /// ids, rows and layout stay (no new layout version, so older DML keeps STATUS 0); every
    /// row LogMiner returns from now on names the table by its new name, older redo too, as
    /// the online catalog does (the simulator's redo dictionaries do the same). Flashback reads
    /// below the rename fail with ORA-01466, as across any DDL. The new name is bare (a schema
    /// in it: ORA-14047) and free in the container (ORA-00955); a row held by an open
    /// transaction makes it ORA-00054.
    pub(super) fn rename_table(&mut self, table: &str, to: &str) -> Result<(), SimError> {
        let t = resolve_table(&self.containers, None, table)?;
        if to.contains('.') {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(14047),
                "ORA-14047: ALTER TABLE|INDEX RENAME may not be combined with other operations"
                    .into(),
            ));
        }
        self.not_busy(t)?;
        let old = self.table(t)?.id.clone();
        let mut new = TableId::new(old.owner.clone(), to);
        if let Some(pdb) = &old.pdb {
            new = new.in_pdb(pdb.clone());
        }
        self.name_free(t.con, &new)?;
        let sql = format!(
            "ALTER TABLE {} RENAME TO {}",
            old.quoted(),
            quote_identifier(to)
        );
        let renamed = self.table_mut(t)?;
        renamed.id = new.clone();
        for layout in &mut renamed.versions {
            let mut named = TableLayout::clone(layout);
            named.table = new.clone();
            *layout = std::sync::Arc::new(named);
        }
        self.versions.write().rename(t, new);
        self.ddl(t.con, &old.owner, t, sql, DdlRows::Kept)
            .map(|_| ())
    }

    /// `ALTER TABLE … ADD (column)`: a new layout version, so older DML renders STATUS 2.
    pub(super) fn add_column(&mut self, table: &str, column: &ColumnSpec) -> Result<(), SimError> {
        let tail = format!(
            "ADD ({} {})",
            quote_identifier(&column.name),
            column.data_type.to_ascii_uppercase()
        );
        let column = column.clone();
        self.alter_table(
            table,
            DdlRows::Kept,
            &|q| format!("ALTER TABLE {q} {tail}"),
            move |t, scn, _, _| {
                let mut layout = t
                    .layout()
                    .cloned()
                    .ok_or_else(|| SimError::Scenario("no layout".into()))?;
                let position = layout.columns.len() as u16 + 1;
                layout.columns.push(column_def(&column, position)?);
                // a new column takes the next segment column
                layout.segment.push(Some(position - 1));
                layout.version += 1;
                layout.valid_from = scn;
                t.versions.push(std::sync::Arc::new(layout));
                for row in t.rows.values_mut() {
                    row.push(Value::Null);
                }
                Ok(())
            },
        )
    }

    /// `ALTER TABLE … DROP COLUMN`: the column leaves every row, and the segment columns after
    /// it move up one.
    pub(super) fn drop_column(&mut self, table: &str, column: &str) -> Result<(), SimError> {
        let tail = format!("DROP COLUMN {}", quote_identifier(column));
        let column = column.to_owned();
        self.alter_table(
            table,
            DdlRows::Kept,
            &|q| format!("ALTER TABLE {q} {tail}"),
            move |t, scn, _, _| {
                let at = removable_column(t, &column)?;
                let mut layout = next_layout(t, scn)?;
                remove_column(&mut layout, at);
                layout.segment.retain(|slot| *slot != Some(at as u16));
                renumber_segment(&mut layout, at);
                push_layout(t, layout, at);
                Ok(())
            },
        )
    }

    /// `ALTER TABLE … SET UNUSED (column)`: the column is gone from the dictionary's view, but
    /// keeps its segment column (hidden) until `DROP UNUSED COLUMNS`.
    pub(super) fn set_unused(&mut self, table: &str, column: &str) -> Result<(), SimError> {
        let tail = format!("SET UNUSED ({})", quote_identifier(column));
        let column = column.to_owned();
        self.alter_table(
            table,
            DdlRows::Kept,
            &|q| format!("ALTER TABLE {q} {tail}"),
            move |t, scn, _, _| {
                let at = removable_column(t, &column)?;
                let mut layout = next_layout(t, scn)?;
                remove_column(&mut layout, at);
                for slot in &mut layout.segment {
                    if *slot == Some(at as u16) {
                        *slot = None;
                    }
                }
                renumber_segment(&mut layout, at);
                push_layout(t, layout, at);
                Ok(())
            },
        )
    }

    /// `ALTER TABLE … DROP UNUSED COLUMNS`: the hidden columns leave the segment; the visible
    /// columns stay as they were.
    pub(super) fn drop_unused_columns(&mut self, table: &str) -> Result<(), SimError> {
        self.alter_table(
            table,
            DdlRows::Kept,
            &|q| format!("ALTER TABLE {q} DROP UNUSED COLUMNS"),
            move |t, scn, _, _| {
                let mut layout = next_layout(t, scn)?;
                layout.segment.retain(Option::is_some);
                t.versions.push(std::sync::Arc::new(layout));
                Ok(())
            },
        )
    }

    /// `ALTER TABLE … MODIFY (column type)`: a new type for a column. As Oracle, a change of
    /// the data type itself (not only its length, precision or scale) needs the column to be
    /// empty (ORA-01439).
    pub(super) fn modify_column(
        &mut self,
        table: &str,
        column: &ColumnSpec,
    ) -> Result<(), SimError> {
        let tail = format!(
            "MODIFY ({} {})",
            quote_identifier(&column.name),
            column.data_type.to_ascii_uppercase()
        );
        let column = column.clone();
        self.alter_table(
            table,
            DdlRows::Kept,
            &|q| format!("ALTER TABLE {q} {tail}"),
            move |t, scn, _, _| {
                let at = t
                    .layout()
                    .and_then(|l| l.column_index(&column.name))
                    .ok_or_else(|| {
                        SimError::Ora(
                            cdc_core::ora::OraCode(904),
                            format!("ORA-00904: \"{}\": invalid identifier", column.name),
                        )
                    })?;
                let mut layout = next_layout(t, scn)?;
                let old = layout.columns[at].clone();
                let mut new = column_def(&column, old.position)?;
                new.nullable = old.nullable;
                let holds_values = t
                    .rows
                    .values()
                    .any(|row| row.get(at).is_some_and(|v| *v != Value::Null));
                if new.data_type != old.data_type && holds_values {
                    return Err(SimError::Ora(
                        cdc_core::ora::OraCode(1439),
                        "ORA-01439: column to be modified must be empty to change datatype".into(),
                    ));
                }
                layout.columns[at] = new;
                t.versions.push(std::sync::Arc::new(layout));
                Ok(())
            },
        )
    }

    /// A DDL statement that leaves the table as it is, with its text as given.
    pub(super) fn other_ddl(&mut self, table: &str, sql: &str) -> Result<(), SimError> {
        let sql = sql.to_owned();
        self.alter_table(table, DdlRows::Kept, &|_| sql.clone(), |_, _, _, _| Ok(()))
    }

    /// `TRUNCATE TABLE`: the rows go without row changes in the redo.
    pub(super) fn truncate(&mut self, table: &str) -> Result<(), SimError> {
        self.alter_table(
            table,
            DdlRows::Emptied,
            &|q| format!("TRUNCATE TABLE {q}"),
            |t, _, _, _| {
                t.rows.clear();
                Ok(())
            },
        )
    }

    /// `DROP TABLE … PURGE`: the table keeps its place, so its older redo still names it (as
    /// `"UNKNOWN"."OBJ# n"`).
    pub(super) fn drop_table(&mut self, table: &str) -> Result<(), SimError> {
        let t = resolve_table(&self.containers, None, table)?;
        let quoted = self.table(t)?.id.quoted();
        let user = self.table(t)?.id.owner.clone();
        self.ddl(
            t.con,
            &user,
            t,
            format!("DROP TABLE {quoted} PURGE"),
            DdlRows::Kept,
        )?;
        self.table_mut(t)?.dropped = true;
        self.versions.write().drop_table(t);
        Ok(())
    }

    /// `ALTER TABLE … ADD PARTITION`: a new partition with an object id of its own.
    pub(super) fn add_partition(
        &mut self,
        table: &str,
        name: &str,
        less_than: Option<i64>,
    ) -> Result<(), SimError> {
        let tail = format!(
            "ADD PARTITION {} VALUES LESS THAN ({})",
            quote_identifier(name),
            less_than
                .map(|b| b.to_string())
                .unwrap_or_else(|| "MAXVALUE".into())
        );
        let name = name.to_owned();
        self.alter_table(
            table,
            DdlRows::Kept,
            &|q| format!("ALTER TABLE {q} {tail}"),
            move |t, _, rng, next_object| {
                if !matches!(t.organization, Organization::Range { .. }) {
                    return Err(SimError::Ora(
                        cdc_core::ora::OraCode(14501),
                        "ORA-14501: object is not partitioned".into(),
                    ));
                }
                *next_object += 1 + rng.below(4) as u32;
                t.partitions.push(SimPartition {
                    name,
                    object: ObjectId(*next_object),
                    less_than,
                });
                Ok(())
            },
        )
    }
}

/// The next layout of a table, valid from `scn`: a copy of the current one.
fn next_layout(t: &SimTable, scn: Scn) -> Result<TableLayout, SimError> {
    let mut layout = t
        .layout()
        .cloned()
        .ok_or_else(|| SimError::Scenario("no layout".into()))?;
    layout.version += 1;
    layout.valid_from = scn;
    Ok(layout)
}

/// The index of a column that DROP COLUMN or SET UNUSED may take away: not a key column (the
/// simulator keeps its keys), and not the last column (ORA-12983).
fn removable_column(t: &SimTable, column: &str) -> Result<usize, SimError> {
    let layout = t
        .layout()
        .ok_or_else(|| SimError::Scenario("no layout".into()))?;
    let at = layout.column_index(column).ok_or_else(|| {
        SimError::Ora(
            cdc_core::ora::OraCode(904),
            format!("ORA-00904: \"{column}\": invalid identifier"),
        )
    })?;
    if layout.is_key_column(column) {
        return Err(SimError::Ora(
            cdc_core::ora::OraCode(12992),
            "ORA-12992: cannot drop parent key column".into(),
        ));
    }
    if layout.columns.len() == 1 {
        return Err(SimError::Ora(
            cdc_core::ora::OraCode(12983),
            "ORA-12983: cannot drop all columns in a table".into(),
        ));
    }
    Ok(at)
}

/// Takes column `at` out of the layout's columns; the later ones move up one COLUMN_ID.
fn remove_column(layout: &mut TableLayout, at: usize) {
    layout.columns.remove(at);
    for c in &mut layout.columns[at..] {
        c.position -= 1;
    }
}

/// The segment's column indexes past `at` move down one, as the columns did.
fn renumber_segment(layout: &mut TableLayout, at: usize) {
    for index in layout.segment.iter_mut().flatten() {
        if usize::from(*index) > at {
            *index -= 1;
        }
    }
}

/// Makes `layout` (without column `at`) the table's current one; its rows lose the column.
fn push_layout(t: &mut SimTable, layout: TableLayout, at: usize) {
    t.versions.push(std::sync::Arc::new(layout));
    for row in t.rows.values_mut() {
        if at < row.len() {
            row.remove(at);
        }
    }
}
