//! DDL: CREATE TABLE, ALTER TABLE, TRUNCATE and DROP TABLE, each a transaction of its own
//! (START, the DDL row, COMMIT) and a new layout version or object where Oracle makes one.

use std::collections::BTreeMap;

use cdc_core::table::quote_identifier;
use cdc_core::{ObjectId, Scn, TableId, Value};

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

impl SimDatabase {
    /// Runs one DDL statement by `user` as a transaction of its own in the container's DDL
    /// session: START and the DDL row in one record, then COMMIT; the ground truth notes it.
    pub(super) fn ddl(
        &mut self,
        con: usize,
        user: &str,
        t: TableRef,
        sql: String,
    ) -> Result<(), SimError> {
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
        let con_id = self.containers.get(con).map(|c| c.con).unwrap_or_default();
        self.truth.ddl.push(TruthDdl {
            con: con_id,
            table: id,
            sql,
            scn,
            commit_addr,
        });
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
        if container.tables.iter().any(|t| !t.dropped && t.id == id) {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(955),
                "ORA-00955: name is already used by an existing object".into(),
            ));
        }
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
        let c = self
            .containers
            .get_mut(con)
            .ok_or_else(|| SimError::Scenario("no container".into()))?;
        c.tables.push(table);
        Ok(TableRef {
            con,
            index: c.tables.len() - 1,
        })
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
        self.ddl(con, user.unwrap_or(&spec.owner), t, sql)
    }

    /// A DDL statement on an existing table, refused (ORA-00054) while a transaction holds one
    /// of its rows; `change` makes it in the dictionary.
    fn alter_table(
        &mut self,
        name: &str,
        make_sql: &dyn Fn(&str) -> String,
        change: impl FnOnce(&mut SimTable, Scn, &mut SimRng, &mut u32) -> Result<(), SimError>,
    ) -> Result<(), SimError> {
        let t = resolve_table(&self.containers, None, name)?;
        let busy = self.locks.keys().any(|key| key.table == t);
        if busy {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(54),
                "ORA-00054: resource busy and acquire with NOWAIT specified or timeout expired"
                    .into(),
            ));
        }
        let scn = Scn(self.scn + 1);
        let mut next_object = self.next_object;
        let mut rng = self.rng.fork(0xDD1);
        change(self.table_mut(t)?, scn, &mut rng, &mut next_object)?;
        self.next_object = next_object;
        let quoted = self.table(t)?.id.quoted();
        let user = self.table(t)?.id.owner.clone();
        self.ddl(t.con, &user, t, make_sql(&quoted))
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
            &|q| format!("ALTER TABLE {q} {tail}"),
            move |t, scn, _, _| {
                let mut layout = t
                    .layout()
                    .cloned()
                    .ok_or_else(|| SimError::Scenario("no layout".into()))?;
                let position = layout.columns.len() as u16 + 1;
                layout.columns.push(column_def(&column, position)?);
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

    /// `TRUNCATE TABLE`: the rows go without row changes in the redo.
    pub(super) fn truncate(&mut self, table: &str) -> Result<(), SimError> {
        self.alter_table(table, &|q| format!("TRUNCATE TABLE {q}"), |t, _, _, _| {
            t.rows.clear();
            Ok(())
        })
    }

    /// `DROP TABLE … PURGE`: the table keeps its place, so its older redo still names it (as
    /// `"UNKNOWN"."OBJ# n"`).
    pub(super) fn drop_table(&mut self, table: &str) -> Result<(), SimError> {
        let t = resolve_table(&self.containers, None, table)?;
        let quoted = self.table(t)?.id.quoted();
        let user = self.table(t)?.id.owner.clone();
        self.ddl(t.con, &user, t, format!("DROP TABLE {quoted} PURGE"))?;
        self.table_mut(t)?.dropped = true;
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
