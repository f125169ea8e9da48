//! The operations a database takes: [`DbOp`], what the workload generator and a scenario's
//! events come down to, and [`SimDatabase::apply`], which hands each to the file of its
//! concern.
//!
//! A scenario event is a `DbOp` read from JSON: the serde attributes below keep the event
//! names and fields `docs/simulator.md` ("Scenario files") describes, where the Rust shape
//! differs (`values` and `where` objects, `table` of `create_table`, `value` of `lob_write`).

use std::fmt;
use std::marker::PhantomData;

use cdc_core::{ColumnDef, RedoThread, Value};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::SimDatabase;
use super::ctas::TableCopy;
use super::lobs::LobCall;
use super::sessions::SessionName;
use crate::sim::SimError;
use crate::sim::model::{ColumnSpec, TableSpec};

/// A column value as an operation carries it, read with the column's type when the operation
/// runs: a [`Value`] as it is (the generator, tests), a scenario's JSON as
/// `docs/simulator.md` describes it (`"-42.50"`, `"2026-02-28 13:45:59"`, hex for RAW …).
pub(crate) trait ColumnInput {
    fn read(&self, column: &ColumnDef) -> Result<Value, SimError>;
}

impl ColumnInput for Value {
    fn read(&self, _: &ColumnDef) -> Result<Value, SimError> {
        Ok(self.clone())
    }
}

/// A row selected by an UPDATE, DELETE or DBMS_LOB call: by ROWID, or by the values of some
/// columns (the first row that matches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RowSel<V = Value> {
    RowId(String),
    Match(Vec<(String, V)>),
}

/// One semantic operation on the database. Scenario events and the workload generator both
/// come down to these. Column values are `V`: [`Value`]s, or a scenario's JSON values, read
/// with the column's type when the operation runs (a table's columns can change between
/// events).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    tag = "event",
    rename_all = "snake_case",
    deny_unknown_fields,
    bound(deserialize = "V: Deserialize<'de>")
)]
pub enum DbOp<V = Value> {
    /// Opens (or re-configures) a session; its transaction starts with its first change.
    Begin {
        session: SessionName,
        #[serde(default)]
        pdb: Option<String>,
        #[serde(default)]
        user: Option<String>,
        #[serde(default)]
        private_strand: Option<bool>,
    },
    Insert {
        session: SessionName,
        table: String,
        #[serde(rename = "values", deserialize_with = "column_values")]
        row: Vec<(String, V)>,
        /// A statement that fails (a constraint violation): its row and an undo row reach the
        /// redo, the transaction goes on.
        #[serde(default)]
        fails: bool,
    },
    Update {
        session: SessionName,
        table: String,
        #[serde(rename = "where", deserialize_with = "matching_rows")]
        rows: Vec<RowSel<V>>,
        #[serde(deserialize_with = "column_values")]
        set: Vec<(String, V)>,
    },
    Delete {
        session: SessionName,
        table: String,
        #[serde(rename = "where", deserialize_with = "matching_rows")]
        rows: Vec<RowSel<V>>,
    },
    Savepoint {
        session: SessionName,
        name: String,
    },
    RollbackTo {
        session: SessionName,
        name: String,
    },
    Commit {
        session: SessionName,
    },
    Rollback {
        session: SessionName,
    },
    CreateTable {
        #[serde(rename = "table")]
        spec: TableSpec,
        #[serde(default)]
        user: Option<String>,
    },
    /// `CREATE TABLE … AS SELECT`: a new heap table holding a copy of `from`'s committed
    /// rows, loaded by direct path in the statement (the DDL row is in the redo, the rows are
    /// not; `db::ctas`).
    CreateTableAs {
        /// The new table, `OWNER.TABLE` (or `PDB.OWNER.TABLE`), in the container of `from`.
        table: String,
        from: String,
        /// The columns selected, in this order; empty: `SELECT *`.
        #[serde(default)]
        columns: Vec<String>,
        /// A WHERE condition on `from`'s columns, in the grammar snapshot conditions take.
        #[serde(default)]
        condition: Option<String>,
        /// The new table's primary key (a CTAS copies no constraint but NOT NULL).
        #[serde(default)]
        primary_key: Vec<String>,
        #[serde(default)]
        user: Option<String>,
    },
    /// `ALTER TABLE … RENAME TO`: the same object (ids, rows, layout) under a new name in its
    /// schema.
    RenameTable {
        table: String,
        to: String,
    },
    AddColumn {
        table: String,
        column: ColumnSpec,
    },
    DropColumn {
        table: String,
        column: String,
    },
    SetUnused {
        table: String,
        column: String,
    },
    DropUnusedColumns {
        table: String,
    },
    /// `ALTER TABLE … MODIFY`: the column of that name gets the spec's type.
    ModifyColumn {
        table: String,
        column: ColumnSpec,
    },
    DropTable {
        table: String,
    },
    /// A DDL statement on a table that changes nothing the simulator models (its layout, rows
    /// and objects stay): the text as given, in the redo like any DDL.
    Ddl {
        table: String,
        sql: String,
    },
    Truncate {
        table: String,
    },
    AddPartition {
        table: String,
        name: String,
        #[serde(default)]
        less_than: Option<i64>,
    },
    LogSwitch,
    /// A dictionary build into the redo (`DBMS_LOGMNR_D.BUILD`, STORE_IN_REDO_LOGS).
    DictionaryBuild,
    /// Archives every log that is no longer current.
    Archive,
    /// Purges the archived copies of every sequence up to this one (DELETED=YES), or, with
    /// `remove_file`, deletes the files behind the catalog's back (DELETED stays NO).
    Purge {
        up_to_sequence: u32,
        #[serde(default)]
        remove_file: bool,
    },
    /// Loses a log: no archived copy anywhere, and its online copy overwritten.
    Gap {
        sequence: u32,
    },
    /// Writes a session's private strand to the log now.
    FlushStrand {
        session: SessionName,
    },
    /// Lets time pass.
    Tick {
        millis: u64,
    },
    /// Kills a session so that its transaction leaves no end record (an orphan).
    KillSession {
        session: SessionName,
    },
    /// The instance goes down: every open transaction is rolled back by recovery.
    InstanceCrash,
    /// A restore: OPEN RESETLOGS (a new incarnation), optionally as another database (DBID).
    Restore {
        #[serde(default)]
        new_dbid: bool,
    },
    /// Enables a second redo thread (RAC).
    EnableThread {
        thread: u16,
    },
    /// `DBMS_LOB.WRITE` into one LOB column of an existing row: `data` (text, or bytes for a
    /// BLOB) at the 1-based `offset`. Only LOB rows reach the redo, as for the other calls.
    LobWrite {
        session: SessionName,
        table: String,
        #[serde(rename = "where", deserialize_with = "matching_row")]
        row: RowSel<V>,
        column: String,
        offset: u64,
        #[serde(rename = "value")]
        data: V,
    },
    /// `DBMS_LOB.TRIM` to `length` characters or bytes.
    LobTrim {
        session: SessionName,
        table: String,
        #[serde(rename = "where", deserialize_with = "matching_row")]
        row: RowSel<V>,
        column: String,
        length: u64,
    },
    /// `DBMS_LOB.ERASE` of `amount` characters or bytes from the 1-based `offset`.
    LobErase {
        session: SessionName,
        table: String,
        #[serde(rename = "where", deserialize_with = "matching_row")]
        row: RowSel<V>,
        column: String,
        amount: u64,
        offset: u64,
    },
}

/// A `{"COLUMN": value, …}` object as (column, value) pairs in the object's order. A column
/// named twice keeps its first place and its last value, as the order-preserving
/// `serde_json::Map` the format was first read into does.
fn column_values<'de, D, V>(deserializer: D) -> Result<Vec<(String, V)>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Pairs<V>(PhantomData<V>);

    impl<'de, V: Deserialize<'de>> Visitor<'de> for Pairs<V> {
        type Value = Vec<(String, V)>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut pairs: Vec<(String, V)> = Vec::new();
            while let Some((column, value)) = map.next_entry::<String, V>()? {
                match pairs.iter_mut().find(|(c, _)| *c == column) {
                    Some(pair) => pair.1 = value,
                    None => pairs.push((column, value)),
                }
            }
            Ok(pairs)
        }
    }

    deserializer.deserialize_map(Pairs(PhantomData))
}

/// A `where` object: the first row whose columns have these values.
fn matching_row<'de, D, V>(deserializer: D) -> Result<RowSel<V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    column_values(deserializer).map(RowSel::Match)
}

/// A `where` object as the rows of an UPDATE or DELETE: the one row it matches.
fn matching_rows<'de, D, V>(deserializer: D) -> Result<Vec<RowSel<V>>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    matching_row(deserializer).map(|row| vec![row])
}

impl SimDatabase {
    /// Applies one operation.
    pub fn apply(&mut self, op: &DbOp) -> Result<(), SimError> {
        self.apply_op(op)
    }

    /// Applies one operation, its column values read with their column's type as it runs.
    pub(crate) fn apply_op<V: ColumnInput>(&mut self, op: &DbOp<V>) -> Result<(), SimError> {
        self.clock.advance_nanos(1_000 + self.rng.below(50_000));
        match op {
            DbOp::Begin {
                session,
                pdb,
                user,
                private_strand,
            } => self.begin(session, pdb.as_deref(), user.as_deref(), *private_strand),
            DbOp::Insert {
                session,
                table,
                row,
                fails,
            } => self.insert(session, table, row, *fails),
            DbOp::Update {
                session,
                table,
                rows,
                set,
            } => self.update(session, table, rows, set),
            DbOp::Delete {
                session,
                table,
                rows,
            } => self.delete(session, table, rows),
            DbOp::Savepoint { session, name } => self.savepoint(session, name),
            DbOp::RollbackTo { session, name } => self.rollback_to(session, name),
            DbOp::Commit { session } => self.commit(session),
            DbOp::Rollback { session } => self.rollback(session),
            DbOp::CreateTable { spec, user } => self.create_table(user.as_deref(), spec),
            DbOp::CreateTableAs {
                table,
                from,
                columns,
                condition,
                primary_key,
                user,
            } => self.create_table_as(&TableCopy {
                table,
                from,
                columns,
                condition: condition.as_deref(),
                primary_key,
                user: user.as_deref(),
            }),
            DbOp::RenameTable { table, to } => self.rename_table(table, to),
            DbOp::AddColumn { table, column } => self.add_column(table, column),
            DbOp::DropColumn { table, column } => self.drop_column(table, column),
            DbOp::SetUnused { table, column } => self.set_unused(table, column),
            DbOp::DropUnusedColumns { table } => self.drop_unused_columns(table),
            DbOp::ModifyColumn { table, column } => self.modify_column(table, column),
            DbOp::DropTable { table } => self.drop_table(table),
            DbOp::Ddl { table, sql } => self.other_ddl(table, sql),
            DbOp::Truncate { table } => self.truncate(table),
            DbOp::AddPartition {
                table,
                name,
                less_than,
            } => self.add_partition(table, name, *less_than),
            DbOp::LogSwitch => {
                self.switch_every_log();
                Ok(())
            }
            DbOp::Archive => {
                self.archive_switched_logs();
                Ok(())
            }
            DbOp::DictionaryBuild => self.build_dictionary().map(|_| ()),
            DbOp::Purge {
                up_to_sequence,
                remove_file,
            } => {
                self.purge(*up_to_sequence, *remove_file);
                Ok(())
            }
            DbOp::Gap { sequence } => {
                self.lose_log(*sequence);
                Ok(())
            }
            DbOp::FlushStrand { session } => {
                self.flush_strand(session);
                Ok(())
            }
            DbOp::Tick { millis } => {
                self.tick(*millis);
                Ok(())
            }
            DbOp::KillSession { session } => {
                self.kill_session(session);
                Ok(())
            }
            DbOp::InstanceCrash => self.instance_crash(),
            DbOp::Restore { new_dbid } => {
                self.restore(*new_dbid);
                Ok(())
            }
            DbOp::EnableThread { thread } => {
                self.enable_thread(RedoThread(*thread));
                Ok(())
            }
            DbOp::LobWrite {
                session,
                table,
                row,
                column,
                offset,
                data,
            } => self.lob_call(
                session,
                table,
                row,
                column,
                LobCall::Write {
                    offset: *offset,
                    data,
                },
            ),
            DbOp::LobTrim {
                session,
                table,
                row,
                column,
                length,
            } => self.lob_call(
                session,
                table,
                row,
                column,
                LobCall::Trim { length: *length },
            ),
            DbOp::LobErase {
                session,
                table,
                row,
                column,
                amount,
                offset,
            } => self.lob_call(
                session,
                table,
                row,
                column,
                LobCall::Erase {
                    amount: *amount,
                    offset: *offset,
                },
            ),
        }
    }
}
