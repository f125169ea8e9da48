//! [`SimSnapshotReader`]: the simulator's snapshot session. It reads the committed row
//! versions the database keeps (`db::versions`) as a flashback query reads undo: the rows of
//! a table as of an SCN, in key or ROWID order, a chunk at a time, from any thread while the
//! database goes on working.
//!
//! ```text
//!   SimSource::snapshot_reader() ──► SimSnapshotReader ── shares ──► committed versions
//!                                        │                             (RwLock: one read
//!                                        │ read(query): check SCN,      lock per round trip)
//!                                        │ then fetch_size rows per round trip, the lock
//!                                        │ released before the sink sees them
//!                                        └── shares ──► SnapshotControl (faults, round trips)
//! ```
//!
//! # Error handling
//!
//! As Oracle answers: ORA-08181 for an SCN below the database's first or above its current
//! one, ORA-01466 for an SCN before the table's last DDL, ORA-01555 for an SCN below a commit
//! of the table whose undo expired (also between two round trips of a read, when one expires
//! meanwhile), ORA-00942 for a table that does not exist (or is dropped), ORA-00904 for an
//! unknown column, the parser's errors for a bad condition (`sim::condition`). Faults on
//! demand ([`SnapshotFault`]): ORA-01555 for chunks above a size, and a dropped connection
//! (ORA-03113, then ORA-03114 for every later call of that reader: its session is gone, the
//! engine needs a new reader). Nothing is retried here.

use std::collections::VecDeque;
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, PoisonError};

use cdc_core::change::ColumnValue;
use cdc_core::ora::OraCode;
use cdc_core::{Scn, TableId, Value};
use serde::{Deserialize, Serialize};

use super::condition::Condition;
use super::db::{CommittedVersions, KeyIndex, KeyTuple, TableRef, TableVersions, VersionState};
use super::order::RowPos;
use crate::source::{
    SnapshotBound, SnapshotOrder, SnapshotQuery, SnapshotReadSummary, SnapshotReader, SnapshotRow,
    SnapshotSink, SourceError, TableEstimate,
};

/// A fault of snapshot reads on demand, shared by every reader of a source (those already
/// handed out too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SnapshotFault {
    /// The next `reads` reads whose `limit` is above `above_rows` (or that have no limit)
    /// fail with ORA-01555 before their first row, as a read whose undo ran out would; reads
    /// of at most `above_rows` rows succeed and leave the fault armed.
    TooOld { reads: u32, above_rows: u64 },
    /// The next read hands `after_rows` rows to its sink (fewer if it has fewer), then its
    /// connection drops: ORA-03113, and ORA-03114 at every later call of that reader.
    Disconnect { after_rows: u64 },
}

/// What a source and its readers share: the queued faults and the round-trip count.
#[derive(Debug, Default)]
pub(crate) struct SnapshotControl {
    faults: Mutex<VecDeque<SnapshotFault>>,
    fetches: AtomicU64,
}

impl SnapshotControl {
    pub(crate) fn inject(&self, fault: SnapshotFault) {
        self.lock().push_back(fault);
    }

    pub(crate) fn pending(&self) -> usize {
        self.lock().len()
    }

    pub(crate) fn fetches(&self) -> u64 {
        self.fetches.load(AtomicOrdering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<SnapshotFault>> {
        // the queue is consistent whenever its lock is released, even by a panicking thread
        self.faults.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a TooOld fault that applies to a read with this limit.
    fn too_old(&self, limit: Option<u64>) -> bool {
        let mut faults = self.lock();
        let hit = faults.iter().position(|f| {
            matches!(f, SnapshotFault::TooOld { reads, above_rows }
                if *reads > 0 && limit.is_none_or(|l| l > *above_rows))
        });
        let Some(at) = hit else {
            return false;
        };
        if let Some(SnapshotFault::TooOld { reads, .. }) = faults.get_mut(at) {
            *reads -= 1;
            if *reads == 0 {
                faults.remove(at);
            }
        }
        true
    }

    /// Takes the first Disconnect fault: the rows the read delivers before it.
    fn disconnect(&self) -> Option<u64> {
        let mut faults = self.lock();
        let at = faults
            .iter()
            .position(|f| matches!(f, SnapshotFault::Disconnect { .. }))?;
        match faults.remove(at) {
            Some(SnapshotFault::Disconnect { after_rows }) => Some(after_rows),
            _ => None,
        }
    }
}

fn snapshot_too_old() -> SourceError {
    SourceError::ora(
        OraCode::SNAPSHOT_TOO_OLD,
        "ORA-01555: snapshot too old: rollback segment number 7 with name \"_SYSSMU7_1234567$\" too small",
    )
}

fn invalid_scn() -> SourceError {
    SourceError::ora(
        OraCode::INVALID_SCN,
        "ORA-08181: specified number is not a valid system change number",
    )
}

fn definition_changed() -> SourceError {
    SourceError::ora(
        OraCode::TABLE_DEFINITION_CHANGED,
        "ORA-01466: unable to read data - table definition has changed",
    )
}

fn no_table() -> SourceError {
    SourceError::ora(
        OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST,
        "ORA-00942: table or view does not exist",
    )
}

fn invalid_identifier(name: &str) -> SourceError {
    SourceError::ora(
        OraCode(904),
        format!("ORA-00904: \"{name}\": invalid identifier"),
    )
}

fn invalid(message: impl Into<String>) -> SourceError {
    SourceError::Invalid {
        message: message.into(),
    }
}

/// Rows a boundaries query visits per round trip: the lock is released between them.
const BOUNDARY_SCAN_ROWS: usize = 10_000;

/// The simulator's snapshot session.
#[derive(Debug)]
pub struct SimSnapshotReader {
    versions: CommittedVersions,
    control: Arc<SnapshotControl>,
    /// The PDB the session is connected to, whose tables alone it sees; `None`: the CDB root
    /// or a non-CDB, which see every table.
    pdb: Option<String>,
    /// The connection dropped (a [`SnapshotFault::Disconnect`]).
    disconnected: bool,
}

impl SimSnapshotReader {
    pub(crate) fn new(
        versions: CommittedVersions,
        control: Arc<SnapshotControl>,
        pdb: Option<String>,
    ) -> SimSnapshotReader {
        SimSnapshotReader {
            versions,
            control,
            pdb,
            disconnected: false,
        }
    }

    fn connected(&self) -> Result<(), SourceError> {
        if self.disconnected {
            return Err(SourceError::ora(
                OraCode::NOT_CONNECTED,
                "ORA-03114: not connected to ORACLE",
            ));
        }
        Ok(())
    }

    /// The table as this session sees it.
    fn find<'s>(
        &self,
        state: &'s VersionState,
        table: &TableId,
    ) -> Result<(TableRef, &'s TableVersions), SourceError> {
        if self.pdb.is_some() && table.pdb != self.pdb {
            return Err(no_table());
        }
        state.table_named(table).ok_or_else(no_table)
    }

    /// Checks the query against the table as it is now and plans the read; builds the index
    /// of its key order first when there is none.
    fn plan(&self, query: &SnapshotQuery) -> Result<Plan, SourceError> {
        let key_columns = {
            let state = self.versions.read();
            let (t, table) = self.find(&state, &query.table)?;
            let key_columns = match &query.order {
                SnapshotOrder::RowId => None,
                SnapshotOrder::Key(names) if names.is_empty() => {
                    return Err(invalid("a key order without key columns"));
                }
                SnapshotOrder::Key(names) => Some(
                    names
                        .iter()
                        .map(|n| {
                            table
                                .layout
                                .column_index(n)
                                .ok_or_else(|| invalid_identifier(n))
                        })
                        .collect::<Result<Vec<usize>, _>>()?,
                ),
            };
            match &key_columns {
                Some(columns) if table.index(columns).is_none() => Some((t, columns.clone())),
                _ => None,
            }
        };
        if let Some((t, columns)) = key_columns {
            // the first read in this order: the index is built once, under the write lock
            if let Some(table) = self.versions.write().tables.get_mut(&t) {
                table.ensure_index(&columns);
            }
        }
        let state = self.versions.read();
        let (t, table) = self.find(&state, &query.table)?;
        Plan::new(query, t, table, &state)
    }
}

/// Where a read stands: strictly after this row.
#[derive(Debug, Clone)]
enum Position {
    Key(KeyTuple, RowPos),
    Row(RowPos),
}

/// Where a read ends: at this key or ROWID, inclusive.
#[derive(Debug, Clone)]
enum Through {
    Key(KeyTuple),
    Row(RowPos),
}

/// A read checked against the table: stored column indexes, bounds in the table's order.
#[derive(Debug)]
struct Plan {
    table: TableRef,
    scn: Scn,
    /// The selected columns: (index into the query's layout, index into the stored rows).
    columns: Vec<(u16, usize)>,
    /// The key order's stored columns; `None`: ROWID order.
    key: Option<Vec<usize>>,
    condition: Option<Condition>,
    after: Option<Position>,
    through: Option<Through>,
}

/// What a scan hands each row it visits: the plan, the row's key (key order), its position
/// and its values; `Break` stops the scan.
type Visitor<'v> = dyn FnMut(&Plan, Option<&KeyTuple>, RowPos, &[Value]) -> ControlFlow<()> + 'v;

/// How a scan ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScanEnd {
    /// No row is left (before `through`, or at all).
    Exhausted,
    /// The visitor stopped it, or it visited as many rows as it was allowed.
    Stopped,
}

impl Plan {
    fn new(
        query: &SnapshotQuery,
        t: TableRef,
        table: &TableVersions,
        state: &VersionState,
    ) -> Result<Plan, SourceError> {
        let mut columns = Vec::with_capacity(query.columns.len());
        for &q in &query.columns {
            let column = query
                .layout
                .columns
                .get(usize::from(q))
                .ok_or_else(|| invalid(format!("column {q} is not in the layout")))?;
            let stored = table
                .layout
                .column_index(&column.name)
                .ok_or_else(|| invalid_identifier(&column.name))?;
            columns.push((q, stored));
        }
        let key = match &query.order {
            SnapshotOrder::RowId => None,
            SnapshotOrder::Key(names) => Some(
                names
                    .iter()
                    .map(|n| {
                        table
                            .layout
                            .column_index(n)
                            .ok_or_else(|| invalid_identifier(n))
                    })
                    .collect::<Result<Vec<usize>, _>>()?,
            ),
        };
        let condition = query
            .condition
            .as_deref()
            .map(|text| Condition::parse(text, &table.layout.columns))
            .transpose()?;
        let index = match &key {
            Some(columns) => Some(
                table
                    .index(columns)
                    .ok_or_else(|| invalid("the key index went away: the table changed"))?,
            ),
            None => None,
        };
        let after = query
            .after
            .as_ref()
            .map(|b| {
                Ok::<_, SourceError>(match bound(b, index)? {
                    Through::Key(k) => Position::Key(k, RowPos::MAX),
                    Through::Row(p) => Position::Row(p),
                })
            })
            .transpose()?;
        let through = query
            .through
            .as_ref()
            .map(|b| bound(b, index))
            .transpose()?;
        let plan = Plan {
            table: t,
            scn: query.scn,
            columns,
            key,
            condition,
            after,
            through,
        };
        if plan.scn < state.first_scn || plan.scn > state.current_scn {
            return Err(invalid_scn());
        }
        plan.still_readable(state)?;
        Ok(plan)
    }

    /// Whether the table can still be read as of the plan's SCN: checked before every round
    /// trip, as the undo a read needs can expire while it runs.
    fn still_readable(&self, state: &VersionState) -> Result<(), SourceError> {
        let table = match state.tables.get(&self.table) {
            Some(t) if !t.dropped => t,
            _ => {
                return Err(SourceError::ora(
                    OraCode(8103),
                    "ORA-08103: object no longer exists",
                ));
            }
        };
        if table.defined_at.is_some_and(|at| self.scn < at) {
            return Err(definition_changed());
        }
        if table.horizon.is_some_and(|h| self.scn < h) {
            return Err(snapshot_too_old());
        }
        Ok(())
    }

    /// Visits the rows visible as of the plan's SCN that meet its condition, in order,
    /// strictly after `from` and through the plan's end, at most `budget` of them, moving
    /// `from` past each.
    fn scan(
        &self,
        state: &VersionState,
        from: &mut Option<Position>,
        budget: usize,
        visit: &mut Visitor<'_>,
    ) -> Result<ScanEnd, SourceError> {
        let Some(table) = state.tables.get(&self.table) else {
            return Ok(ScanEnd::Exhausted);
        };
        let mut visited = 0;
        if budget == 0 {
            return Ok(ScanEnd::Stopped);
        }
        match &self.key {
            Some(columns) => {
                let index = table
                    .index(columns)
                    .ok_or_else(|| invalid("the key index went away: the table changed"))?;
                let start = match from.take() {
                    Some(Position::Key(k, p)) => Bound::Excluded((k, p)),
                    _ => Bound::Unbounded,
                };
                let mut last: Option<(KeyTuple, RowPos)> = None;
                let mut end = ScanEnd::Exhausted;
                for (key, pos) in index.entries.range((start.clone(), Bound::Unbounded)) {
                    if let Some(Through::Key(through)) = &self.through
                        && key > through
                    {
                        break;
                    }
                    let Some(row) = self.visible(table, *pos, Some((index, key)))? else {
                        continue;
                    };
                    last = Some((key.clone(), *pos));
                    visited += 1;
                    if visit(self, Some(key), *pos, row).is_break() || visited == budget {
                        end = ScanEnd::Stopped;
                        break;
                    }
                }
                *from = match (last, start) {
                    (Some((k, p)), _) => Some(Position::Key(k, p)),
                    (None, Bound::Excluded((k, p))) => Some(Position::Key(k, p)),
                    (None, _) => None,
                };
                Ok(end)
            }
            None => {
                let start = match from {
                    Some(Position::Row(p)) => Bound::Excluded(*p),
                    _ => Bound::Unbounded,
                };
                let mut end = ScanEnd::Exhausted;
                for (pos, _) in table.rows.range((start, Bound::Unbounded)) {
                    if let Some(Through::Row(through)) = &self.through
                        && pos > through
                    {
                        break;
                    }
                    let Some(row) = self.visible(table, *pos, None)? else {
                        continue;
                    };
                    *from = Some(Position::Row(*pos));
                    visited += 1;
                    if visit(self, None, *pos, row).is_break() || visited == budget {
                        end = ScanEnd::Stopped;
                        break;
                    }
                }
                Ok(end)
            }
        }
    }

    /// The row at `pos` as of the plan's SCN, if it exists then, has the index entry's key
    /// then (an entry can be an older or newer version's) and meets the condition.
    fn visible<'t>(
        &self,
        table: &'t TableVersions,
        pos: RowPos,
        entry: Option<(&KeyIndex, &KeyTuple)>,
    ) -> Result<Option<&'t [Value]>, SourceError> {
        let Some(row) = table.rows.get(&pos).and_then(|h| h.as_of(self.scn)) else {
            return Ok(None);
        };
        if let Some((index, key)) = entry
            && !index.matches(row, key)
        {
            return Ok(None);
        }
        if let Some(condition) = &self.condition
            && !condition.holds(row)?
        {
            return Ok(None);
        }
        Ok(Some(row))
    }

    /// The row as the read returns it.
    fn row(&self, key: Option<&KeyTuple>, pos: RowPos, row: &[Value]) -> SnapshotRow {
        SnapshotRow {
            row_id: pos.text(),
            values: self
                .columns
                .iter()
                .map(|&(column, stored)| ColumnValue {
                    column,
                    value: row.get(stored).cloned().unwrap_or(Value::Null),
                })
                .collect(),
            bound: self.bound_of(key, pos),
        }
    }

    fn bound_of(&self, key: Option<&KeyTuple>, pos: RowPos) -> SnapshotBound {
        match key {
            Some(k) => SnapshotBound::Key(k.iter().map(|p| p.value.clone()).collect()),
            None => SnapshotBound::RowId(pos.text()),
        }
    }
}

/// A bound of the query in the table's order.
fn bound(b: &SnapshotBound, index: Option<&KeyIndex>) -> Result<Through, SourceError> {
    match (b, index) {
        (SnapshotBound::Key(values), Some(index)) => {
            if values.len() != index.columns.len() {
                return Err(invalid(format!(
                    "a key bound of {} values for a key of {} columns",
                    values.len(),
                    index.columns.len()
                )));
            }
            Ok(Through::Key(index.bound(values)))
        }
        (SnapshotBound::RowId(text), None) => RowPos::parse(text)
            .map(Through::Row)
            .ok_or_else(|| SourceError::ora(OraCode(1410), "ORA-01410: invalid ROWID")),
        (SnapshotBound::Key(_), None) => Err(invalid("a key bound for a read in ROWID order")),
        (SnapshotBound::RowId(_), Some(_)) => Err(invalid("a ROWID bound for a read in key order")),
    }
}

impl SnapshotReader for SimSnapshotReader {
    fn estimate(&mut self, table: &TableId) -> Result<TableEstimate, SourceError> {
        self.connected()?;
        let state = self.versions.read();
        let (_, versions) = self.find(&state, table)?;
        // about 40 rows of a few hundred bytes fill an 8 KiB block
        Ok(TableEstimate {
            rows: Some(versions.live),
            blocks: Some(versions.live.div_ceil(40)),
        })
    }

    fn boundaries(
        &mut self,
        query: &SnapshotQuery,
        every: u64,
        max: usize,
    ) -> Result<Vec<SnapshotBound>, SourceError> {
        self.connected()?;
        if every == 0 {
            return Err(invalid("boundaries every 0 rows"));
        }
        let plan = Plan {
            through: None,
            ..self.plan(query)?
        };
        let mut bounds = Vec::new();
        let mut from = plan.after.clone();
        let mut seen: u64 = 0;
        while bounds.len() < max {
            let state = self.versions.read();
            plan.still_readable(&state)?;
            let mut visit = |plan: &Plan, key: Option<&KeyTuple>, pos: RowPos, _: &[Value]| {
                seen += 1;
                if seen.is_multiple_of(every) {
                    bounds.push(plan.bound_of(key, pos));
                    if bounds.len() == max {
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            };
            let end = plan.scan(&state, &mut from, BOUNDARY_SCAN_ROWS, &mut visit)?;
            if end == ScanEnd::Exhausted {
                break;
            }
        }
        // the bounds come back as rows of one query, fetch_size at a time
        let per_trip = u64::from(query.fetch_size.max(1));
        self.control.fetches.fetch_add(
            (bounds.len() as u64).div_ceil(per_trip).max(1),
            AtomicOrdering::Relaxed,
        );
        Ok(bounds)
    }

    fn read(
        &mut self,
        query: &SnapshotQuery,
        sink: &mut SnapshotSink<'_>,
    ) -> Result<SnapshotReadSummary, SourceError> {
        self.connected()?;
        let plan = self.plan(query)?;
        if self.control.too_old(query.limit) {
            return Err(snapshot_too_old());
        }
        let drop_after = self.control.disconnect();
        let per_trip = query.fetch_size.max(1) as usize;
        let mut summary = SnapshotReadSummary::default();
        let mut from = plan.after.clone();
        loop {
            let left = query.limit.map_or(usize::MAX, |l| {
                usize::try_from(l.saturating_sub(summary.rows)).unwrap_or(usize::MAX)
            });
            let want = per_trip.min(left);
            // one round trip: rows collected under the read lock, handed out after it
            let (batch, more) = {
                let state = self.versions.read();
                plan.still_readable(&state)?;
                let mut batch = Vec::with_capacity(want.min(4096));
                let mut collect = |plan: &Plan, key: Option<&KeyTuple>, pos, row: &[Value]| {
                    batch.push(plan.row(key, pos, row));
                    ControlFlow::Continue(())
                };
                let end = plan.scan(&state, &mut from, want, &mut collect)?;
                // after a full round trip, another only when a row is left: a read of n
                // rows takes ⌈n / fetch_size⌉ of them, as the mining queries' are counted
                let more = end == ScanEnd::Stopped
                    && want < left
                    && plan.scan(&state, &mut from.clone(), 1, &mut |_, _, _, _| {
                        ControlFlow::Continue(())
                    })? == ScanEnd::Stopped;
                (batch, more)
            };
            self.control.fetches.fetch_add(1, AtomicOrdering::Relaxed);
            for row in batch {
                if drop_after.is_some_and(|n| summary.rows >= n) {
                    return Err(self.drop_connection());
                }
                summary.rows += 1;
                if sink(row).is_break() {
                    summary.stopped_by_sink = true;
                    return Ok(summary);
                }
            }
            if !more {
                break;
            }
        }
        if drop_after.is_some() {
            return Err(self.drop_connection());
        }
        Ok(summary)
    }
}

impl SimSnapshotReader {
    fn drop_connection(&mut self) -> SourceError {
        self.disconnected = true;
        SourceError::ora(
            OraCode::END_OF_FILE_ON_COMMUNICATION_CHANNEL,
            "ORA-03113: end-of-file on communication channel\nProcess ID: 0\nSession ID: 0 Serial number: 0",
        )
    }
}
