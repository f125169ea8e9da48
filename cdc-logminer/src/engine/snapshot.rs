//! Snapshots: the captured tables' existing rows read `AS OF SCN` in chunks and published as
//! `op=r` records between the stream's steps.
//!
//! ```text
//!  step (mining) ─► records of the step's commits ─► stream reached SCN s
//!      │
//!  batch: up to min(threads, max.pending.chunks) chunks of one table, all read AS OF s
//!      │   on their own reader sessions (threads), held until every one is read
//!      ▼
//!  publish in key order: each chunk's rows (position: the progress before the chunk),
//!  then `snapshot-chunk-done` carrying the progress with the chunk's last key as frontier
//!      │
//!  next step (the stream waited for the batch)
//! ```
//!
//! Why this order is enough (D29 in `docs/decisions.md`): a batch is read as of the SCN the
//! stream has reached, so every commit the stream published before it is in the rows read,
//! and every commit it publishes after it comes later in redo order than what was read. For
//! every key the last record is therefore the row's state. The progress lives in the offset's
//! `snapshot` field ([`SnapshotProgress`]): a restart reads each table on from its frontier
//! and never reads a finished chunk again.
//!
//! # Error handling
//!
//! ORA-01555 and ORA-08181 read the chunk again with half the rows (not below 1 000), at most
//! `cdc.snapshot.chunk.retries` times in a row, then stop with CDC-8001. ORA-01466 (the table
//! changed after the SCN) waits for the stream to pass the DDL. A table that is gone
//! (ORA-00942, or no longer captured) is finished and reported skipped. Other errors are
//! classified as any source error: what a step would retry drops the reader sessions and tries
//! again after the next step (at most [`MAX_TRANSIENT_FAILURES`] times in a row, then CDC-1001);
//! the rest stops the task.

use std::thread;

use cdc_core::config::{SnapshotMode, SnapshotSettings};
use cdc_offset::{SnapshotProgress, SnapshotScope};

use super::*;
use crate::source::{SnapshotOrder, SnapshotQuery, SnapshotReader, SnapshotRow, TableEstimate};

/// Transient failures of snapshot reads in a row before the task stops (CDC-1001).
pub const MAX_TRANSIENT_FAILURES: u32 = 20;

/// The smallest chunk halving goes down to.
pub const MIN_CHUNK_ROWS: u64 = 1_000;

/// Where a snapshot record stands in its snapshot (`source.snapshot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotMarker {
    /// The first record of an initial snapshot.
    First,
    /// Any other record of an initial snapshot.
    True,
    /// The last record of an initial snapshot (the last row of its last table).
    Last,
    /// A record of a signalled snapshot.
    Incremental,
}

impl SnapshotMarker {
    /// The `source.snapshot` text.
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotMarker::First => "first",
            SnapshotMarker::True => "true",
            SnapshotMarker::Last => "last",
            SnapshotMarker::Incremental => "incremental",
        }
    }
}

/// One row of a table as a snapshot read it: an `op=r` record.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotRecord {
    /// The table's schema version the row was read with.
    pub layout: Arc<TableLayout>,
    pub row_id: String,
    /// The row's values (excluded columns are not among them), each with its index into the
    /// layout's columns.
    pub values: Vec<cdc_core::change::ColumnValue>,
    /// The SCN the chunk was read as of.
    pub scn: Scn,
    /// When the chunk was read (ms since the epoch).
    pub read_ms: u64,
    pub marker: SnapshotMarker,
}

/// The snapshot metrics (the reference's `Snapshot*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnapshotMetrics {
    pub chunks_read: u64,
    pub chunks_published: u64,
    /// Gauge: chunks read and not published yet.
    pub chunks_pending: u64,
    pub chunk_retries: u64,
    pub rows_published: u64,
    /// Gauge: tables of the running snapshot not done yet.
    pub tables_remaining: u64,
}

/// One chunk of a batch.
#[derive(Debug, Clone)]
struct ChunkPlan {
    query: SnapshotQuery,
    /// Whether the table ends with this chunk when it returns fewer rows than its limit (or
    /// has no limit and no upper bound).
    last_possible: bool,
}

/// A table's state while it is read.
#[derive(Debug, Default)]
struct TableRun {
    name: String,
    chunk_rows: u64,
    failures: u32,
    estimate: Option<TableEstimate>,
    started_ms: u64,
    rows_at_start: u64,
}

/// Why a chunk was not read: the database's answer, which the snapshot's recovery judges, or
/// a reader that panicked, a defect that stops the task with CDC-4005 (the panic is in the log).
#[derive(Debug)]
enum ChunkFailure {
    Source(SourceError),
    ReaderPanicked,
}

impl From<SourceError> for ChunkFailure {
    fn from(error: SourceError) -> Self {
        ChunkFailure::Source(error)
    }
}

/// The result of reading one chunk.
type ChunkRead = Result<Vec<SnapshotRow>, ChunkFailure>;

/// The snapshot stage's state.
pub(super) struct SnapshotState {
    /// The running snapshot (`None`: none, or complete).
    progress: Option<SnapshotProgress>,
    /// Tables that joined the captured set while streaming and may hold rows, waiting for a
    /// snapshot of their own once none runs (the offset's `snapshot_pending`).
    pending: Vec<String>,
    /// Reader sessions, opened as batches need them and kept.
    readers: Vec<Box<dyn SnapshotReader>>,
    /// The threads that read a batch's chunks in parallel, started at the first such batch and
    /// kept until the snapshot completes. Threads started per batch and ended with it left
    /// every row they read in memory of an ended thread, which the allocator then reclaimed
    /// page by page as the delivery thread freed the rows: 9 % of that thread's time in the
    /// snapshot bench.
    pool: Option<rayon::ThreadPool>,
    /// The SCN the stream has reached: every commit at or below it was mined.
    reached: Scn,
    /// `snapshot_only`: the SCN every chunk is read as of.
    fixed_scn: Option<Scn>,
    table: Option<TableRun>,
    transient_failures: u32,
    /// `snapshot_only` and the snapshot is complete: the engine is done.
    finished: bool,
    metrics: SnapshotMetrics,
}

impl SnapshotState {
    /// The snapshot a task start takes up: an unfinished one from the offset always resumes;
    /// otherwise a first start (no offset) under `initial` or `snapshot_only` snapshots
    /// `tables`, and so does any start under `snapshot_only` without a finished snapshot.
    pub(super) fn open(
        settings: &SnapshotSettings,
        stored: Option<&str>,
        pending: Option<&str>,
        restarting: bool,
        tables: Vec<TableId>,
    ) -> Result<SnapshotState, CdcError> {
        // comma-separated table names, as `released_xids` lists XIDs: offset values are
        // primitives
        let pending: Vec<String> = pending
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        let stored = stored
            .map(SnapshotProgress::from_json)
            .transpose()
            .map_err(CdcError::from)?;
        let mode = settings.mode;
        let progress = match stored {
            Some(p) if !p.complete => Some(p),
            Some(_) => None,
            None if mode == SnapshotMode::SnapshotOnly
                || (mode == SnapshotMode::Initial && !restarting) =>
            {
                Some(SnapshotProgress::new(
                    SnapshotScope::Initial,
                    ordered_tables(tables, &settings.tables_order),
                ))
            }
            None => None,
        };
        let finished = mode == SnapshotMode::SnapshotOnly && progress.is_none();
        let mut state = SnapshotState {
            progress,
            pending,
            readers: Vec::new(),
            pool: None,
            reached: Scn::ZERO,
            fixed_scn: None,
            table: None,
            transient_failures: 0,
            finished,
            metrics: SnapshotMetrics::default(),
        };
        state.metrics.tables_remaining = state.tables_remaining();
        Ok(state)
    }

    fn tables_remaining(&self) -> u64 {
        self.progress
            .as_ref()
            .map_or(0, |p| p.tables_remaining() as u64)
    }

    /// The progress text a new snapshot starts the offset with (`None`: nothing to record).
    pub(super) fn progress_text(&self) -> Option<String> {
        self.progress.as_ref().map(SnapshotProgress::to_json)
    }

    /// Whether a snapshot is running.
    pub(super) fn running(&self) -> bool {
        self.progress.is_some()
    }

    pub(super) fn progress(&self) -> Option<&SnapshotProgress> {
        self.progress.as_ref()
    }

    pub(super) fn progress_mut(&mut self) -> Option<&mut SnapshotProgress> {
        self.progress.as_mut()
    }

    /// Starts `progress` (none runs).
    pub(super) fn start(&mut self, progress: SnapshotProgress) {
        self.progress = Some(progress);
        self.table = None;
        self.metrics.tables_remaining = self.tables_remaining();
    }

    /// The offset's `snapshot_pending` text (`None` when nothing waits).
    fn pending_text(&self) -> Option<String> {
        (!self.pending.is_empty()).then(|| self.pending.join(","))
    }

    pub(super) fn metrics(&self) -> SnapshotMetrics {
        self.metrics
    }

    /// Notes that the stream mined every commit at or below `scn`.
    pub(super) fn stream_reached(&mut self, scn: Scn) {
        self.reached = self.reached.max(scn);
    }

    pub(super) fn finished(&self) -> bool {
        self.finished
    }
}

/// `tables` by name, those `cdc.snapshot.tables.order` names first in its order.
fn ordered_tables(mut tables: Vec<TableId>, order: &[String]) -> Vec<String> {
    tables.sort();
    let mut names: Vec<String> = tables.iter().map(TableId::to_string).collect();
    let mut out = Vec::with_capacity(names.len());
    for wanted in order {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(wanted)) {
            out.push(names.remove(i));
        }
    }
    out.extend(names);
    out
}

/// How a batch went.
enum BatchEnd {
    /// Chunks published (maybe none: the table was finished); go on in this call.
    Published(u64),
    /// Try again after the next step.
    Wait(u64),
}

impl<S: RedoSource> CaptureEngine<S> {
    /// Between steps: one batch of the running snapshot, read as of the SCN the stream has
    /// reached. Returns the records emitted.
    pub(super) fn snapshot_step(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        if !self.snapshot.running() && !self.snapshot.pending.is_empty() {
            // the tables that joined while streaming get a snapshot of their own
            let tables = std::mem::take(&mut self.snapshot.pending);
            tracing::info!(tables = ?tables, "snapshot of tables that joined the captured set");
            self.snapshot
                .start(SnapshotProgress::new(SnapshotScope::Initial, tables));
            self.store_progress();
        }
        let paused = self.snapshot.progress.as_ref().is_some_and(|p| p.paused);
        if !self.snapshot.running() || paused || self.snapshot.reached == Scn::ZERO {
            return Ok(0);
        }
        let scn = self.snapshot.reached;
        let mut records = 0;
        // finished tables cost no read: go on to the first batch that reads rows
        loop {
            match self.snapshot_batch(sink, scn)? {
                BatchEnd::Published(0) if self.snapshot.running() => continue,
                BatchEnd::Published(n) | BatchEnd::Wait(n) => {
                    records += n;
                    return Ok(records);
                }
            }
        }
    }

    /// `cdc.snapshot.mode=snapshot_only`: every chunk as of one SCN read at the start, no
    /// mining; the engine is finished once the snapshot is complete.
    pub(super) fn snapshot_only_step(
        &mut self,
        sink: &mut dyn RecordSink,
    ) -> Result<StepReport, EngineError> {
        let mut report = StepReport::default();
        if !self.snapshot.running() {
            self.snapshot.finished = true;
            return Ok(report);
        }
        let scn = match self.snapshot.fixed_scn {
            Some(scn) => scn,
            None => {
                let scn = self.source.current_scn().map_err(source_stop)?;
                self.snapshot.fixed_scn = Some(scn);
                scn
            }
        };
        match self.snapshot_batch(sink, scn)? {
            BatchEnd::Published(n) => report.records = n,
            BatchEnd::Wait(n) => {
                report.records = n;
                report.retried = true;
                // a DDL or a transient failure: read as of a newer SCN after a pause
                self.snapshot.fixed_scn = None;
                self.clock.sleep(Duration::from_secs(1));
            }
        }
        report.snapshot_rows = report.records;
        if !self.snapshot.running() {
            self.snapshot.finished = true;
        }
        Ok(report)
    }

    /// One batch of the next table not done: plan, read, publish.
    fn snapshot_batch(
        &mut self,
        sink: &mut dyn RecordSink,
        scn: Scn,
    ) -> Result<BatchEnd, EngineError> {
        let Some((name, frontier)) = self.snapshot.progress.as_ref().and_then(|p| {
            p.next_table()
                .map(|(name, t)| (name.to_owned(), t.frontier.clone()))
        }) else {
            return self.snapshot_complete(sink).map(BatchEnd::Published);
        };
        let Some(decode_table) = self
            .decoder
            .tables
            .iter()
            .find(|(id, _)| id.to_string() == name)
            .map(|(_, t)| t.clone())
        else {
            // no longer captured (dropped, renamed, filtered out)
            return self
                .finish_table(sink, &name, true)
                .map(BatchEnd::Published);
        };
        let now = self.clock.now_ms();
        let run = match self.snapshot.table.take() {
            Some(run) if run.name == name => run,
            _ => TableRun {
                name: name.clone(),
                chunk_rows: self.settings.snapshot.chunk_rows.max(MIN_CHUNK_ROWS),
                started_ms: now,
                rows_at_start: self
                    .snapshot
                    .progress
                    .as_ref()
                    .and_then(|p| p.table(&name))
                    .map_or(0, |t| t.rows),
                ..TableRun::default()
            },
        };
        self.snapshot.table = Some(run);
        let layout = Arc::clone(decode_table.layout());
        let columns: Vec<u16> = (0..layout.columns.len())
            .filter(|&i| !decode_table.is_excluded_index(i))
            .filter_map(|i| u16::try_from(i).ok())
            .collect();
        let order = match layout.key_source {
            cdc_core::KeySource::RowId | cdc_core::KeySource::None => SnapshotOrder::RowId,
            _ if layout.key.is_empty() => SnapshotOrder::RowId,
            _ => SnapshotOrder::Key(layout.key.clone()),
        };
        let table = layout.table.clone();
        let condition = self.snapshot_condition(&table);
        let base = SnapshotQuery {
            table,
            layout,
            columns,
            order,
            scn,
            after: frontier,
            through: None,
            limit: None,
            condition,
            fetch_size: self.settings.snapshot.fetch_size,
        };
        let plan = match self.plan_chunks(base) {
            Ok(plan) => plan,
            Err(e) => return self.snapshot_failure(sink, &name, e, 0),
        };
        let read_ms = self.clock.now_ms();
        let results = self.read_chunks(&plan);
        self.snapshot.metrics.chunks_pending = results.iter().filter(|r| r.is_ok()).count() as u64;
        let mut records = 0;
        for (chunk, result) in plan.iter().zip(results) {
            match result {
                Ok(rows) => {
                    self.snapshot.metrics.chunks_read += 1;
                    self.snapshot.transient_failures = 0;
                    if let Some(run) = self.snapshot.table.as_mut() {
                        run.failures = 0;
                    }
                    let ends_table = chunk.last_possible
                        && chunk
                            .query
                            .limit
                            .is_none_or(|limit| (rows.len() as u64) < limit);
                    records += self.publish_chunk(sink, &name, chunk, rows, read_ms, ends_table)?;
                    self.snapshot.metrics.chunks_pending =
                        self.snapshot.metrics.chunks_pending.saturating_sub(1);
                    if ends_table {
                        records += self.finish_table(sink, &name, false)?;
                        break;
                    }
                }
                Err(ChunkFailure::Source(e)) => {
                    self.snapshot.metrics.chunks_pending = 0;
                    return self.snapshot_failure(sink, &name, e, records);
                }
                Err(ChunkFailure::ReaderPanicked) => {
                    self.snapshot.metrics.chunks_pending = 0;
                    return Err(EngineError::Stop(CdcError::new(
                        CdcCode::TaskThread,
                        format!(
                            "a snapshot reader thread panicked while reading {name}; the panic \
                             is in the log, and the chunks published before it stand"
                        ),
                    )));
                }
            }
        }
        self.snapshot.metrics.chunks_pending = 0;
        Ok(BatchEnd::Published(records.max(1)))
    }

    /// The condition a table's rows must meet: `cdc.snapshot.select.override.<table>` and a
    /// signal's predicate, both when both are given.
    fn snapshot_condition(&self, table: &TableId) -> Option<String> {
        let configured = self
            .settings
            .snapshot
            .select_overrides
            .get(table.pdb.as_deref(), &table.owner, &table.table)
            .cloned();
        let signalled = self
            .snapshot
            .progress
            .as_ref()
            .and_then(|p| p.condition.clone());
        match (configured, signalled) {
            (Some(a), Some(b)) => Some(format!("({a}) AND ({b})")),
            (a, b) => a.or(b),
        }
    }

    /// The chunks of one batch: one chunk of `chunk_rows` with one reader; with several, a
    /// small table (by its statistics) whole, else up to `min(threads, max.pending.chunks)`
    /// chunks ending where the reader says chunks of `chunk_rows` end.
    fn plan_chunks(&mut self, base: SnapshotQuery) -> Result<Vec<ChunkPlan>, SourceError> {
        let (chunk_rows, known) = self
            .snapshot
            .table
            .as_ref()
            .map_or((MIN_CHUNK_ROWS, None), |r| (r.chunk_rows, r.estimate));
        let parallel = self
            .settings
            .snapshot
            .threads
            .min(self.settings.snapshot.max_pending_chunks)
            .max(1) as usize;
        let single = |limit: Option<u64>| {
            vec![ChunkPlan {
                query: SnapshotQuery {
                    limit,
                    ..base.clone()
                },
                last_possible: true,
            }]
        };
        if parallel == 1 {
            return Ok(single(Some(chunk_rows)));
        }
        self.ensure_readers(1)?;
        let estimate = match known {
            Some(estimate) => estimate,
            None => {
                let estimate = self.snapshot.readers[0].estimate(&base.table)?;
                if let Some(run) = self.snapshot.table.as_mut() {
                    run.estimate = Some(estimate);
                }
                estimate
            }
        };
        // "whole when small": only from the table's start, as statistics say nothing of a rest
        if base.after.is_none() && estimate.rows.is_some_and(|rows| rows <= chunk_rows / 2) {
            return Ok(single(Some(chunk_rows)));
        }
        let bounds = self.snapshot.readers[0].boundaries(&base, chunk_rows, parallel)?;
        let mut plan = Vec::with_capacity(bounds.len() + 1);
        let mut after = base.after.clone();
        for bound in &bounds {
            plan.push(ChunkPlan {
                query: SnapshotQuery {
                    after: after.clone(),
                    through: Some(bound.clone()),
                    ..base.clone()
                },
                last_possible: false,
            });
            after = Some(bound.clone());
        }
        if bounds.len() < parallel {
            // the rest of the table is smaller than one chunk
            plan.push(ChunkPlan {
                query: SnapshotQuery {
                    after,
                    through: None,
                    limit: Some(chunk_rows),
                    ..base
                },
                last_possible: true,
            });
        }
        Ok(plan)
    }

    fn ensure_readers(&mut self, n: usize) -> Result<(), SourceError> {
        while self.snapshot.readers.len() < n {
            let reader = self.source.snapshot_reader()?;
            self.snapshot.readers.push(reader);
        }
        Ok(())
    }

    /// Reads the chunks, each on its own reader, in parallel when there are several; the
    /// results in plan order.
    fn read_chunks(&mut self, plan: &[ChunkPlan]) -> Vec<ChunkRead> {
        if let Err(e) = self.ensure_readers(plan.len()) {
            return plan.iter().map(|_| Err(e.clone().into())).collect();
        }
        let read = |reader: &mut Box<dyn SnapshotReader>, chunk: &ChunkPlan| {
            let mut rows =
                Vec::with_capacity(chunk.query.limit.unwrap_or(1024).min(1 << 16) as usize);
            reader
                .read(&chunk.query, &mut |row| {
                    rows.push(row);
                    ControlFlow::Continue(())
                })
                .map(|_| rows)
                .map_err(ChunkFailure::from)
        };
        if let [chunk] = plan {
            // a panicking reader fails its chunk here too, not the mining thread
            let reader = &mut self.snapshot.readers[0];
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read(reader, chunk)));
            return vec![result.unwrap_or(Err(ChunkFailure::ReaderPanicked))];
        }
        if self.snapshot.pool.is_none() {
            let threads = plan.len().max(
                self.settings
                    .snapshot
                    .threads
                    .min(self.settings.snapshot.max_pending_chunks) as usize,
            );
            match rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("cdc-snapshot-{i}"))
                .build()
            {
                Ok(pool) => self.snapshot.pool = Some(pool),
                Err(error) => {
                    tracing::debug!(%error, "snapshot reader threads not started; one thread per chunk instead");
                }
            }
        }
        let readers = &mut self.snapshot.readers;
        let Some(pool) = &self.snapshot.pool else {
            return thread::scope(|scope| {
                let handles: Vec<_> = readers
                    .iter_mut()
                    .zip(plan)
                    .map(|(reader, chunk)| scope.spawn(move || read(reader, chunk)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or(Err(ChunkFailure::ReaderPanicked)))
                    .collect()
            });
        };
        let mut results: Vec<Option<ChunkRead>> = plan.iter().map(|_| None).collect();
        pool.scope(|scope| {
            for ((reader, chunk), slot) in readers.iter_mut().zip(plan).zip(results.iter_mut()) {
                scope.spawn(move |_| {
                    // a panicking reader fails its chunk, as a thread of its own would
                    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        read(reader, chunk)
                    }));
                    *slot = Some(read.unwrap_or(Err(ChunkFailure::ReaderPanicked)));
                });
            }
        });
        results
            .into_iter()
            .map(|r| r.unwrap_or(Err(ChunkFailure::ReaderPanicked)))
            .collect()
    }

    /// Emits one chunk's rows, then `snapshot-chunk-done` carrying the progress with the
    /// chunk's last row as the table's frontier.
    fn publish_chunk(
        &mut self,
        sink: &mut dyn RecordSink,
        name: &str,
        chunk: &ChunkPlan,
        rows: Vec<SnapshotRow>,
        read_ms: u64,
        ends_table: bool,
    ) -> Result<u64, EngineError> {
        let count = rows.len() as u64;
        let Some(progress) = self.snapshot.progress.as_ref() else {
            return Ok(0);
        };
        let incremental = progress.scope == SnapshotScope::Incremental;
        let nothing_yet = progress.rows() == 0;
        let last_table = progress.tables.iter().filter(|(_, t)| !t.done).count() == 1;
        let position = Arc::clone(&self.commit.position);
        let mut frontier = None;
        for (i, row) in rows.into_iter().enumerate() {
            let marker = if incremental {
                SnapshotMarker::Incremental
            } else if nothing_yet && i == 0 {
                SnapshotMarker::First
            } else if ends_table && last_table && i as u64 + 1 == count {
                SnapshotMarker::Last
            } else {
                SnapshotMarker::True
            };
            frontier = Some(row.bound);
            sink.accept(EngineRecord {
                kind: RecordKind::Snapshot(SnapshotRecord {
                    layout: Arc::clone(&chunk.query.layout),
                    row_id: row.row_id,
                    values: row.values,
                    scn: chunk.query.scn,
                    read_ms,
                    marker,
                }),
                position: Arc::clone(&position),
            })?;
        }
        self.metrics.records += count;
        self.snapshot.metrics.rows_published += count;
        self.snapshot.metrics.chunks_published += 1;
        // a chunk that read nothing ends where it was bounded (or the table ends)
        let frontier = frontier.or_else(|| chunk.query.through.clone());
        let rows_done = {
            let Some(table) = self
                .snapshot
                .progress
                .as_mut()
                .and_then(|p| p.table_mut(name))
            else {
                return Ok(count);
            };
            table.rows += count;
            if frontier.is_some() {
                table.frontier = frontier;
            }
            table.rows
        };
        self.store_progress();
        self.log_table_progress(name, rows_done);
        let event = OpsEvent::new(
            OpsKind::SnapshotChunkDone,
            BTreeMap::from([
                ("table".to_owned(), name.to_owned()),
                ("scn".to_owned(), chunk.query.scn.0.to_string()),
                ("rows".to_owned(), count.to_string()),
            ]),
        );
        self.emit_between(sink, RecordKind::Ops(event))?;
        self.metrics.ops_events += 1;
        Ok(count + 1)
    }

    /// The progress (and the tables waiting) into the position the next records carry.
    pub(super) fn store_progress(&mut self) {
        let text = self.snapshot.progress_text();
        let pending = self.snapshot.pending_text();
        self.snapshot.metrics.tables_remaining = self.snapshot.tables_remaining();
        let position = Arc::make_mut(&mut self.commit.position);
        if let Some(text) = text {
            // complete: the position keeps the finished progress
            position.snapshot = Some(text);
        }
        position.snapshot_pending = pending;
    }

    /// Tables that joined while streaming and may hold rows: snapshotted once no snapshot
    /// runs (a running one is not extended, so its scope stays what it announced).
    pub(super) fn snapshot_later(&mut self, tables: impl IntoIterator<Item = String>) {
        for table in tables {
            let running = self
                .snapshot
                .progress
                .as_ref()
                .is_some_and(|p| p.table(&table).is_some_and(|t| !t.done));
            if !running && !self.snapshot.pending.contains(&table) {
                self.snapshot.pending.push(table);
            }
        }
        self.store_progress();
    }

    /// Whether a snapshot has `table` in hand: waiting, in the running one, or in the one the
    /// position records as finished.
    pub(super) fn snapshot_knows(&self, table: &str) -> bool {
        let in_progress = |p: &SnapshotProgress| p.table(table).is_some();
        self.snapshot.pending.iter().any(|t| t == table)
            || self.snapshot.progress.as_ref().is_some_and(in_progress)
            || self
                .commit
                .position
                .snapshot
                .as_deref()
                .and_then(|text| SnapshotProgress::from_json(text).ok())
                .is_some_and(|p| in_progress(&p))
    }

    /// `snapshot-stop`: the running snapshot ends here, recorded complete and stopped.
    pub(super) fn stop_snapshot(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        if let Some(p) = self.snapshot.progress.as_mut() {
            p.stopped = true;
            p.complete = true;
        }
        self.snapshot_complete(sink)
    }

    fn log_table_progress(&self, name: &str, rows_done: u64) {
        let Some(run) = self.snapshot.table.as_ref().filter(|r| r.name == name) else {
            return;
        };
        let elapsed_ms = self.clock.now_ms().saturating_sub(run.started_ms).max(1);
        let rate = (rows_done.saturating_sub(run.rows_at_start)) * 1000 / elapsed_ms;
        let left_s = run
            .estimate
            .and_then(|e| e.rows)
            .filter(|_| rate > 0)
            .map(|total| total.saturating_sub(rows_done) / rate.max(1));
        tracing::info!(
            table = name,
            rows_done,
            rows_per_s = rate,
            estimated_s_left = left_s,
            "snapshot progress"
        );
    }

    /// Marks a table done and says so (`snapshot-complete` for the table).
    fn finish_table(
        &mut self,
        sink: &mut dyn RecordSink,
        name: &str,
        skipped: bool,
    ) -> Result<u64, EngineError> {
        let rows = if let Some(p) = self.snapshot.progress.as_mut() {
            p.finish_table(name);
            p.table(name).map_or(0, |t| t.rows)
        } else {
            0
        };
        self.snapshot.table = None;
        self.store_progress();
        if skipped {
            tracing::warn!(
                table = name,
                "snapshot: the table is no longer captured; skipped"
            );
        } else {
            tracing::info!(table = name, rows, "snapshot of the table complete");
        }
        let event = OpsEvent::new(
            OpsKind::SnapshotComplete,
            BTreeMap::from([
                ("table".to_owned(), name.to_owned()),
                ("rows".to_owned(), rows.to_string()),
                ("stopped".to_owned(), "false".to_owned()),
                ("skipped".to_owned(), skipped.to_string()),
            ]),
        );
        self.emit_between(sink, RecordKind::Ops(event))?;
        self.metrics.ops_events += 1;
        let mut records = 1;
        if self.snapshot.progress.as_ref().is_some_and(|p| p.complete) {
            records += self.snapshot_complete(sink)?;
        }
        Ok(records)
    }

    /// The whole snapshot is complete: `snapshot-complete` for `*`, readers closed.
    fn snapshot_complete(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        let Some(progress) = self.snapshot.progress.take() else {
            return Ok(0);
        };
        Arc::make_mut(&mut self.commit.position).snapshot = Some(progress.to_json());
        self.snapshot.readers.clear();
        self.snapshot.pool = None;
        self.snapshot.metrics.tables_remaining = 0;
        tracing::info!(
            tables = progress.tables.len(),
            rows = progress.rows(),
            "snapshot complete"
        );
        let skipped = progress
            .tables
            .iter()
            .filter(|(_, t)| !t.done || t.rows == 0)
            .count();
        let event = OpsEvent::new(
            OpsKind::SnapshotComplete,
            BTreeMap::from([
                ("table".to_owned(), "*".to_owned()),
                ("rows".to_owned(), progress.rows().to_string()),
                ("tables".to_owned(), progress.tables.len().to_string()),
                ("stopped".to_owned(), progress.stopped.to_string()),
                ("skipped".to_owned(), skipped.to_string()),
            ]),
        );
        self.emit_between(sink, RecordKind::Ops(event))?;
        self.metrics.ops_events += 1;
        let mut records = 1;
        if let Some(id) = progress.signal.as_deref().filter(|_| !progress.stopped) {
            // the signal that asked for it hears that it is done
            let ack = signals::signal_ack(
                id,
                "snapshot",
                signals::SignalOutcome::Done,
                &format!(
                    "snapshot complete: {} rows of {} tables",
                    progress.rows(),
                    progress.tables.len()
                ),
                BTreeMap::new(),
            );
            self.emit_between(sink, RecordKind::Ops(ack))?;
            self.metrics.ops_events += 1;
            records += 1;
        }
        Ok(records)
    }

    /// What a failed read does: retry smaller, wait for the stream, skip the table, or stop.
    fn snapshot_failure(
        &mut self,
        sink: &mut dyn RecordSink,
        name: &str,
        error: SourceError,
        published: u64,
    ) -> Result<BatchEnd, EngineError> {
        let code = error.ora_code();
        if code == Some(OraCode::SNAPSHOT_TOO_OLD) || code == Some(OraCode::INVALID_SCN) {
            self.snapshot.metrics.chunk_retries += 1;
            let retries = self.settings.snapshot.chunk_retries;
            let Some(run) = self.snapshot.table.as_mut() else {
                return Ok(BatchEnd::Wait(published));
            };
            run.failures += 1;
            if run.failures > retries {
                return Err(EngineError::Stop(
                    CdcError::new(
                        CdcCode::SnapshotTooOld,
                        format!(
                            "the snapshot of {name} failed {} times in a row, the last with {} rows \
                             per chunk: {error}",
                            run.failures, run.chunk_rows
                        ),
                    )
                    .with_source(error),
                ));
            }
            run.chunk_rows = (run.chunk_rows / 2).max(MIN_CHUNK_ROWS);
            tracing::warn!(
                table = name,
                %error,
                chunk_rows = run.chunk_rows,
                attempt = run.failures,
                "snapshot chunk failed; reading it again with half the rows"
            );
            // read again now: the stream has not moved, and nothing of the chunk went out
            return Ok(BatchEnd::Published(published));
        }
        if code == Some(OraCode::TABLE_DEFINITION_CHANGED) {
            tracing::info!(table = name, %error, "snapshot waits for the stream to pass the table's DDL");
            return Ok(BatchEnd::Wait(published));
        }
        if code == Some(OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST) {
            let records = self.finish_table(sink, name, true)?;
            return Ok(BatchEnd::Published(published + records));
        }
        match recovery_for(error, &self.settings.extra_transient) {
            Recovery::Stop(stop) => Err(EngineError::Stop(stop)),
            Recovery::Reconnect(e) | Recovery::Remine(e) | Recovery::Shrink(e) => {
                self.snapshot.readers.clear();
                self.snapshot.transient_failures += 1;
                self.snapshot.metrics.chunk_retries += 1;
                if self.snapshot.transient_failures > MAX_TRANSIENT_FAILURES {
                    return Err(EngineError::Stop(
                        CdcError::new(
                            CdcCode::TransientDatabase,
                            format!(
                                "snapshot reads of {name} failed {} times in a row; the last: {e}",
                                self.snapshot.transient_failures
                            ),
                        )
                        .without_retry()
                        .with_source(e),
                    ));
                }
                tracing::warn!(table = name, error = %e, "snapshot read failed; reading again after the next step");
                Ok(BatchEnd::Wait(published))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_order_comes_first_then_by_name() {
        let tables = vec![
            TableId::new("APP", "C"),
            TableId::new("APP", "A"),
            TableId::new("APP", "B"),
        ];
        assert_eq!(
            ordered_tables(tables.clone(), &["app.c".into(), "APP.X".into()]),
            vec!["APP.C", "APP.A", "APP.B"]
        );
        assert_eq!(ordered_tables(tables, &[]), vec!["APP.A", "APP.B", "APP.C"]);
    }

    #[test]
    fn pending_tables_are_a_comma_separated_list() {
        let settings = EngineSettings::new("t", "t", |_| true).snapshot;
        let s = SnapshotState::open(
            &settings,
            None,
            Some("FREEPDB1.APP.NEW_TABLE, APP.T2,"),
            true,
            vec![],
        )
        .expect("opens");
        assert_eq!(s.pending, ["FREEPDB1.APP.NEW_TABLE", "APP.T2"]);
        assert_eq!(
            s.pending_text().as_deref(),
            Some("FREEPDB1.APP.NEW_TABLE,APP.T2")
        );
        let none = SnapshotState::open(&settings, None, None, true, vec![]).expect("opens");
        assert_eq!(none.pending_text(), None);
    }

    #[test]
    fn an_unfinished_snapshot_resumes_whatever_the_mode() {
        let mut settings = EngineSettings::new("t", "t", |_| true).snapshot;
        let mut p = SnapshotProgress::new(SnapshotScope::Initial, ["APP.A".to_owned()]);
        let text = p.to_json();
        for mode in [
            SnapshotMode::None,
            SnapshotMode::Initial,
            SnapshotMode::OnSignal,
        ] {
            settings.mode = mode;
            let s = SnapshotState::open(&settings, Some(&text), None, true, vec![]).expect("opens");
            assert!(s.running(), "{mode:?}");
        }
        p.finish_table("APP.A");
        let done = p.to_json();
        settings.mode = SnapshotMode::Initial;
        let s = SnapshotState::open(&settings, Some(&done), None, true, vec![]).expect("opens");
        assert!(!s.running());
        // a restart without progress is no first start: no snapshot under initial
        let s = SnapshotState::open(&settings, None, None, true, vec![TableId::new("A", "B")])
            .expect("opens");
        assert!(!s.running());
        let s = SnapshotState::open(&settings, None, None, false, vec![TableId::new("A", "B")])
            .expect("opens");
        assert!(s.running());
        settings.mode = SnapshotMode::None;
        let s = SnapshotState::open(&settings, None, None, false, vec![TableId::new("A", "B")])
            .expect("opens");
        assert!(!s.running());
        settings.mode = SnapshotMode::SnapshotOnly;
        let s = SnapshotState::open(&settings, Some(&done), None, true, vec![]).expect("opens");
        assert!(s.finished());
        assert!(SnapshotState::open(&settings, Some("{"), None, true, vec![]).is_err());
    }
}
