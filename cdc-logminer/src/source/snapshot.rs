//! What a snapshot asks of the database: flashback reads of a table's rows as of an SCN, in
//! key order (ROWID order for a table without a key), a chunk at a time, and what a plan of
//! chunks needs (an estimate of the rows, the keys where chunks of a given size end).
//!
//! ```text
//!   engine (snapshot stage, mining thread)            chunk readers (threads of a batch)
//!     RedoSource::snapshot_reader() ──► Box<dyn SnapshotReader> (its own session) ──┐
//!                                       Box<dyn SnapshotReader>                 ──┤ read(query)
//!                                                                                  ▼
//!     SELECT <columns> FROM <table> AS OF SCN :scn
//!      WHERE <key> > :after AND <key> <= :through AND (<condition>)
//!      ORDER BY <key> FETCH FIRST :limit ROWS ONLY
//! ```
//!
//! A reader is a session apart from the LogMiner one, so a batch's chunks can be read on
//! several threads while the mining session stays where it is. Every value a query takes is a
//! bind variable; the table and column names come from the dictionary and are quoted.
//!
//! # Error handling
//!
//! Reads are not retried here. ORA-01555 (snapshot too old: the undo for the SCN is gone) and
//! ORA-08181 (an SCN the database does not know) are the snapshot stage's to act on: it reads
//! the chunk again with half the rows, and stops with CDC-8001 when that does not help.
//! ORA-01466 (the table's definition changed after the SCN) makes it wait for the stream to
//! pass the DDL. Everything else is classified as the engine classifies any source error.

use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;

use cdc_core::change::ColumnValue;
use cdc_core::{Scn, TableId, TableLayout};
use serde::{Deserialize, Serialize};

use super::SourceError;

/// The order a snapshot reads a table in, which is also the order of its chunks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotOrder {
    /// By the key the connector uses for the table (`cdc.key.columns`, the primary key, or a
    /// unique index of NOT NULL columns): these columns, in key order, ascending.
    Key(Vec<String>),
    /// By ROWID: a heap table without a usable key. ROWIDs compare in the database's order
    /// (data object, file, block, row), not as text.
    RowId,
}

/// Where a chunk ends (and the next one starts): the key columns' values in key order, or a
/// ROWID. The offset's snapshot progress keeps the same bound as a table's frontier.
pub use cdc_offset::SnapshotBound;

/// One chunk read: the rows of `table` as of `scn` after `after` and up to `through`, in
/// `order`, at most `limit` of them.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotQuery {
    pub table: TableId,
    /// The table's current layout: the columns' names and types.
    pub layout: Arc<TableLayout>,
    /// The columns to select, as indexes into `layout.columns`, ascending. Excluded columns
    /// are not among them: their values are never read.
    pub columns: Vec<u16>,
    pub order: SnapshotOrder,
    /// The flashback SCN (`AS OF SCN`).
    pub scn: Scn,
    /// Rows strictly after this bound; `None`: from the first row.
    pub after: Option<SnapshotBound>,
    /// Rows up to and including this bound; `None`: to the last row.
    pub through: Option<SnapshotBound>,
    /// At most this many rows; `None`: every row up to `through`.
    pub limit: Option<u64>,
    /// `cdc.snapshot.select.override.<table>` or a signal's predicate: a SQL condition the
    /// rows must also meet, in the database's own syntax.
    pub condition: Option<String>,
    /// `cdc.snapshot.fetch.size`: rows per round trip.
    pub fetch_size: u32,
}

/// One row a snapshot read returns.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotRow {
    /// The row's ROWID (also its key under `cdc.key.missing=rowid`).
    pub row_id: String,
    /// The selected columns' values, in the order of [`SnapshotQuery::columns`], each with
    /// its index into the layout's columns (as a change's after image holds them).
    pub values: Vec<ColumnValue>,
    /// Where this row is in the read's order: the key columns' values, or its ROWID. A chunk
    /// that ends after this row ends at this bound.
    pub bound: SnapshotBound,
}

/// What planning a table's chunks starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableEstimate {
    /// Rows the table holds, as the optimizer statistics say (`ALL_TABLES.NUM_ROWS`); `None`
    /// when it was never analysed.
    pub rows: Option<u64>,
    /// Blocks below the high-water mark (`ALL_TABLES.BLOCKS`), when known.
    pub blocks: Option<u64>,
}

/// How a chunk read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SnapshotReadSummary {
    /// Rows handed to the sink.
    pub rows: u64,
    /// The sink asked to stop before the end.
    pub stopped_by_sink: bool,
}

/// The rows of a snapshot read go to a sink one at a time, in the read's order; `Break` stops
/// the read.
pub type SnapshotSink<'a> = dyn FnMut(SnapshotRow) -> ControlFlow<()> + 'a;

/// A read-only session for snapshot reads. Blocking; one query at a time.
pub trait SnapshotReader: Send + fmt::Debug {
    /// The statistics a plan of chunks starts from.
    fn estimate(&mut self, table: &TableId) -> Result<TableEstimate, SourceError>;

    /// Where chunks of `every` rows would end, as of `query.scn`, reading from `query.after`
    /// (its `through` and `limit` are not used): the bound of the `every`-th row, of the
    /// `2 × every`-th, and so on, at most `max` of them. Fewer than `max` means the last
    /// chunk of the table ends after the last bound returned (or, with none, the table's
    /// rest is smaller than `every`).
    fn boundaries(
        &mut self,
        query: &SnapshotQuery,
        every: u64,
        max: usize,
    ) -> Result<Vec<SnapshotBound>, SourceError>;

    /// Reads one chunk into `sink`, in order.
    fn read(
        &mut self,
        query: &SnapshotQuery,
        sink: &mut SnapshotSink<'_>,
    ) -> Result<SnapshotReadSummary, SourceError>;
}
