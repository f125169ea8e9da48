//! Tables filled before a test or a bench starts: many committed rows, by a direct-path load
//! (no redo: fast, and what a table filled before the connector started looks like) or by
//! ordinary INSERTs and COMMITs (in the redo and the ground truth); and the committed state a
//! snapshot's result is compared with.

use std::sync::Arc;

use cdc_core::ora::OraCode;
use cdc_core::{TableId, TableLayout, Value};

use super::SimDatabase;
use super::ops::DbOp;
use super::sessions::SessionName;
use super::tables::TableRef;
use super::versions::StoredRow;
use crate::sim::SimError;
use crate::sim::model::Organization;
use crate::sim::order::RowPos;
use crate::sim::workload::{RandomWorkload, WorkloadConfig, first_free_id};

/// Rows per transaction of a load: a batch loader's commit interval.
const ROWS_PER_COMMIT: u64 = 5_000;

/// A table's committed rows: (ROWID, [(column, value)]) in ROWID order.
pub type CommittedRows = Vec<(String, Vec<(String, Value)>)>;

impl SimDatabase {
    /// Loads `count` rows into `table` as a direct-path load into a NOLOGGING table does
    /// (`INSERT /*+ APPEND */`, SQL*Loader `DIRECT=TRUE`): the rows are committed,
    /// `ROWS_PER_COMMIT` per transaction at an SCN of its own, but write no redo, so LogMiner
    /// never returns them and the ground truth has no change for them. What a table loaded
    /// before the connector started looks like: a snapshot reads them, the stream does not.
    /// Keys continue after the highest one the table holds; the other columns get values of
    /// every type from the workload's generator, seeded by `seed`. A range-partitioned table
    /// whose last partition is too small for the new keys gets a MAXVALUE partition first
    /// (one DDL). As Oracle's direct path, it waits for no row lock: a table with rows locked
    /// by an open transaction is refused ([`SimError::Busy`]).
    pub fn load_rows(&mut self, table: &TableId, count: u64, seed: u64) -> Result<(), SimError> {
        let (t, name, first) = self.prepare_load(table, count)?;
        if self.locks.keys().any(|key| key.table == t) {
            return Err(SimError::Busy(format!(
                "{table}: an open transaction holds rows of it (direct-path loads lock the table)"
            )));
        }
        let layout = self.load_layout(t, table)?;
        let mut values = RandomWorkload::new(WorkloadConfig {
            seed,
            ..WorkloadConfig::default()
        });
        let mut loaded = 0u64;
        while loaded < count {
            let batch = ROWS_PER_COMMIT.min(count - loaded);
            let mut changes = Vec::with_capacity(batch as usize);
            for n in loaded..loaded + batch {
                let id = first.saturating_add(i64::try_from(n).unwrap_or(i64::MAX));
                let given = values.new_values(self, &layout, id);
                let row = self.stored_row(t, given)?;
                let object = self.table(t)?.segment_for(&row)?;
                let row_id = self.new_row_id(t, object)?;
                let pos = RowPos::parse(&row_id).ok_or_else(|| {
                    SimError::Scenario(format!("{name}: {row_id} is not a ROWID"))
                })?;
                changes.push((t, pos, Some(StoredRow::from(row.as_slice()))));
                self.table_mut(t)?.rows.insert(row_id, row);
            }
            loaded += batch;
            // a few microseconds a row, then the COMMIT
            self.clock.advance_nanos(batch * 2_000);
            let scn = self.next_scn();
            self.versions
                .write()
                .commit(scn, self.clock.epoch_nanos(), changes);
        }
        Ok(())
    }

    /// [`SimDatabase::load_rows`] through the conventional path: an INSERT per row and a
    /// COMMIT every `ROWS_PER_COMMIT` rows, in a session of the table's owner, so the rows
    /// are in the redo and in the ground truth like any other. About four times slower, and
    /// the redo it keeps makes it heavier: for tests whose truth must hold the rows.
    pub fn load_rows_logged(
        &mut self,
        table: &TableId,
        count: u64,
        seed: u64,
    ) -> Result<(), SimError> {
        let (t, name, first) = self.prepare_load(table, count)?;
        let layout = self.load_layout(t, table)?;
        let session = SessionName::from(format!("LOAD_ROWS_{}", table.table));
        self.apply(&DbOp::Begin {
            session: session.clone(),
            pdb: table.pdb.clone(),
            user: Some(table.owner.clone()),
            private_strand: Some(false),
        })?;
        let mut values = RandomWorkload::new(WorkloadConfig {
            seed,
            ..WorkloadConfig::default()
        });
        for n in 0..count {
            let id = first.saturating_add(i64::try_from(n).unwrap_or(i64::MAX));
            let row = values.new_row(self, &layout, id);
            self.apply(&DbOp::Insert {
                session: session.clone(),
                table: name.clone(),
                row,
                fails: false,
            })?;
            if (n + 1) % ROWS_PER_COMMIT == 0 || n + 1 == count {
                self.apply(&DbOp::Commit {
                    session: session.clone(),
                })?;
            }
        }
        Ok(())
    }

    /// The table, its name for a session of its container, and the first key of the rows to
    /// load (after room was made for them).
    fn prepare_load(
        &mut self,
        table: &TableId,
        count: u64,
    ) -> Result<(TableRef, String, i64), SimError> {
        let t = self.live_table(table)?;
        let name = format!("{}.{}", table.owner, table.table);
        let first = first_free_id(self, t.con, &name);
        self.make_room(t, table, first, count)?;
        Ok((t, name, first))
    }

    fn load_layout(&self, t: TableRef, table: &TableId) -> Result<Arc<TableLayout>, SimError> {
        self.table(t)?
            .shared_layout()
            .ok_or_else(|| SimError::Scenario(format!("{table}: no layout")))
    }

    /// A table's committed rows now, in ROWID order, with their columns' names in the
    /// current layout: what a snapshot of it as of the current SCN must return.
    pub fn committed_rows(&self, table: &TableId) -> Result<CommittedRows, SimError> {
        let state = self.versions.read();
        let (_, versions) = state.table_named(table).ok_or_else(|| no_table(table))?;
        let names: Vec<&str> = versions
            .layout
            .columns
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        Ok(versions
            .rows
            .iter()
            .filter_map(|(pos, history)| {
                let row = history.newest()?;
                let named = names
                    .iter()
                    .zip(row.iter())
                    .map(|(n, v)| ((*n).to_owned(), v.clone()))
                    .collect();
                Some((pos.text(), named))
            })
            .collect())
    }

    /// The live table of that name.
    fn live_table(&self, table: &TableId) -> Result<TableRef, SimError> {
        let con = self
            .containers
            .iter()
            .position(|c| c.name == table.pdb)
            .ok_or_else(|| no_table(table))?;
        self.find_table_in(con, &format!("{}.{}", table.owner, table.table))
    }

    /// A MAXVALUE partition when the keys `first..first + count` go past the last bound.
    fn make_room(
        &mut self,
        t: TableRef,
        table: &TableId,
        first: i64,
        count: u64,
    ) -> Result<(), SimError> {
        let tb = self.table(t)?;
        let Organization::Range { .. } = tb.organization else {
            return Ok(());
        };
        let last = first.saturating_add(i64::try_from(count).unwrap_or(i64::MAX));
        match tb.partitions.last().map(|p| p.less_than) {
            Some(Some(bound)) if last > bound => {
                let name = format!("P{}", tb.partitions.len() + 1);
                self.apply(&DbOp::AddPartition {
                    table: table.to_string(),
                    name,
                    less_than: None,
                })
            }
            _ => Ok(()),
        }
    }
}

fn no_table(table: &TableId) -> SimError {
    SimError::Ora(
        OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST,
        format!("ORA-00942: table or view does not exist ({table})"),
    )
}
