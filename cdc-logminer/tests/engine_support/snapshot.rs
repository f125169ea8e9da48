//! Helpers of the snapshot tests: a simulated source shared by the engines a test opens in
//! turn (a "killed" engine's database goes on for the next one), and a consumer that applies
//! every record by key, as a sink would, to compare with the database's committed rows.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdc_core::{ChangeOp, KeySource, OpsKind, TableId, TableLayout, Value};
use cdc_logminer::engine::{
    CaptureEngine, EngineError, EngineRecord, EngineSettings, ManualClock, RecordKind,
};
use cdc_logminer::sim::SimSource;
use cdc_logminer::source::{
    ActiveTransaction, CapturedObject, DatabaseIdentity, LogFile, LogInventoryQuery, MineSummary,
    MiningQuery, MiningWindow, NlsSettings, RedoSource, RowSink, SessionRef, SnapshotBound,
    SnapshotQuery, SnapshotReadSummary, SnapshotReader, SnapshotSink, SourceError, TableEstimate,
    TableFilter,
};
use cdc_offset::Position;

/// A table's rows by key: key text → column → value.
pub type Rows = BTreeMap<String, BTreeMap<String, Value>>;

/// The source behind a lock, so that a "killed" engine's database goes on for the next one.
#[derive(Debug, Clone)]
pub struct Shared(pub Arc<Mutex<SimSource>>);

impl Shared {
    pub fn new(source: SimSource) -> Shared {
        Shared(Arc::new(Mutex::new(source)))
    }

    pub fn db<T>(&self, f: impl FnOnce(&mut SimSource) -> T) -> T {
        f(&mut self.0.lock().unwrap())
    }
}

impl RedoSource for Shared {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        self.db(|s| s.identity())
    }
    fn current_scn(&mut self) -> Result<cdc_core::Scn, SourceError> {
        self.db(|s| s.current_scn())
    }
    fn log_inventory(&mut self, q: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        self.db(|s| s.log_inventory(q))
    }
    fn resolve_objects(&mut self, f: &TableFilter<'_>) -> Result<Vec<CapturedObject>, SourceError> {
        self.db(|s| s.resolve_objects(f))
    }
    fn table_layouts(&mut self, t: &[TableId]) -> Result<Vec<TableLayout>, SourceError> {
        self.db(|s| s.table_layouts(t))
    }
    fn last_ddl_after(
        &mut self,
        t: &[TableId],
        scn: cdc_core::Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        self.db(|s| s.last_ddl_after(t, scn))
    }
    fn start_session(&mut self, w: &MiningWindow) -> Result<(), SourceError> {
        self.db(|s| s.start_session(w))
    }
    fn build_dictionary(&mut self) -> Result<cdc_logminer::source::DictionaryBuild, SourceError> {
        self.db(|s| s.build_dictionary())
    }
    fn end_session(&mut self) -> Result<(), SourceError> {
        self.db(|s| s.end_session())
    }
    fn mine(
        &mut self,
        q: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        self.db(|s| s.mine(q, sink))
    }
    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        self.db(|s| s.active_transactions())
    }
    fn session_exists(&mut self, r: SessionRef) -> Result<bool, SourceError> {
        self.db(|s| s.session_exists(r))
    }
    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        self.db(|s| s.nls())
    }
    fn reconnect(&mut self) -> Result<(), SourceError> {
        self.db(|s| s.reconnect())
    }
    fn snapshot_reader(&mut self) -> Result<Box<dyn SnapshotReader>, SourceError> {
        self.db(|s| s.snapshot_reader())
    }
}

/// A [`Shared`] source whose snapshot readers panic at one read, as a bug in a reader's own
/// code would: `panic_at` counts down the reads of every reader (0: none panics).
#[derive(Debug, Clone)]
pub struct PanickingReads {
    pub shared: Shared,
    pub panic_at: Arc<AtomicU64>,
}

#[derive(Debug)]
struct PanickingReader {
    inner: Box<dyn SnapshotReader>,
    panic_at: Arc<AtomicU64>,
}

impl SnapshotReader for PanickingReader {
    fn estimate(&mut self, table: &TableId) -> Result<TableEstimate, SourceError> {
        self.inner.estimate(table)
    }
    fn boundaries(
        &mut self,
        query: &SnapshotQuery,
        every: u64,
        max: usize,
    ) -> Result<Vec<SnapshotBound>, SourceError> {
        self.inner.boundaries(query, every, max)
    }
    fn read(
        &mut self,
        query: &SnapshotQuery,
        sink: &mut SnapshotSink<'_>,
    ) -> Result<SnapshotReadSummary, SourceError> {
        let left = self
            .panic_at
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if left == Ok(1) {
            panic!("a snapshot reader's bug");
        }
        self.inner.read(query, sink)
    }
}

impl RedoSource for PanickingReads {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        self.shared.identity()
    }
    fn current_scn(&mut self) -> Result<cdc_core::Scn, SourceError> {
        self.shared.current_scn()
    }
    fn log_inventory(&mut self, q: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        self.shared.log_inventory(q)
    }
    fn resolve_objects(&mut self, f: &TableFilter<'_>) -> Result<Vec<CapturedObject>, SourceError> {
        self.shared.resolve_objects(f)
    }
    fn table_layouts(&mut self, t: &[TableId]) -> Result<Vec<TableLayout>, SourceError> {
        self.shared.table_layouts(t)
    }
    fn last_ddl_after(
        &mut self,
        t: &[TableId],
        scn: cdc_core::Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        self.shared.last_ddl_after(t, scn)
    }
    fn start_session(&mut self, w: &MiningWindow) -> Result<(), SourceError> {
        self.shared.start_session(w)
    }
    fn build_dictionary(&mut self) -> Result<cdc_logminer::source::DictionaryBuild, SourceError> {
        self.shared.build_dictionary()
    }
    fn end_session(&mut self) -> Result<(), SourceError> {
        self.shared.end_session()
    }
    fn mine(
        &mut self,
        q: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        self.shared.mine(q, sink)
    }
    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        self.shared.active_transactions()
    }
    fn session_exists(&mut self, r: SessionRef) -> Result<bool, SourceError> {
        self.shared.session_exists(r)
    }
    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        self.shared.nls()
    }
    fn reconnect(&mut self) -> Result<(), SourceError> {
        self.shared.reconnect()
    }
    fn snapshot_reader(&mut self) -> Result<Box<dyn SnapshotReader>, SourceError> {
        Ok(Box::new(PanickingReader {
            inner: self.shared.snapshot_reader()?,
            panic_at: Arc::clone(&self.panic_at),
        }))
    }
}

/// The key text of a row image under `layout`: its key columns' values, or the ROWID.
pub fn key_of(
    layout: &TableLayout,
    image: &BTreeMap<String, Value>,
    row_id: Option<&str>,
) -> String {
    match layout.key_source {
        KeySource::RowId | KeySource::None => format!("rowid:{}", row_id.unwrap_or("?")),
        _ if layout.key.is_empty() => format!("rowid:{}", row_id.unwrap_or("?")),
        _ => format!(
            "{:?}",
            layout
                .key
                .iter()
                .map(|k| image.get(k).cloned().unwrap_or(Value::Null))
                .collect::<Vec<_>>()
        ),
    }
}

/// A record's values by column name.
pub fn named(
    layout: &TableLayout,
    values: &[cdc_core::change::ColumnValue],
) -> BTreeMap<String, Value> {
    values
        .iter()
        .map(|cv| {
            (
                layout.columns[cv.column as usize].name.clone(),
                cv.value.clone(),
            )
        })
        .collect()
}

/// A consumer applying records by key, as a sink would.
#[derive(Default)]
pub struct Consumer {
    pub tables: BTreeMap<TableId, Rows>,
    /// Snapshot rows seen, by table and key: a second one is a duplicate.
    pub snapshot_rows: BTreeMap<(TableId, String), usize>,
}

impl Consumer {
    pub fn apply(&mut self, records: &[EngineRecord]) {
        for record in records {
            match &record.kind {
                RecordKind::Snapshot(row) => {
                    let image = named(&row.layout, &row.values);
                    let key = key_of(&row.layout, &image, Some(&row.row_id));
                    *self
                        .snapshot_rows
                        .entry((row.layout.table.clone(), key.clone()))
                        .or_default() += 1;
                    self.tables
                        .entry(row.layout.table.clone())
                        .or_default()
                        .insert(key, image);
                }
                RecordKind::Change(change) => {
                    let c = &change.event.change;
                    let table = self.tables.entry(TableId::clone(&c.table)).or_default();
                    let row_id = c.row_id.as_deref();
                    let before = c.before.as_ref().map(|v| named(&change.layout, v));
                    let after = c.after.as_ref().map(|v| named(&change.layout, v));
                    if let Some(before) = &before
                        && c.op != ChangeOp::Insert
                    {
                        table.remove(&key_of(&change.layout, before, row_id));
                    }
                    if let Some(after) = after
                        && c.op != ChangeOp::Delete
                    {
                        // the simulator logs every column (ALL COLUMNS supplemental logging):
                        // an update's after image is the whole row
                        table.insert(key_of(&change.layout, &after, row_id), after);
                    }
                }
                _ => {}
            }
        }
    }

    /// Keys a snapshot delivered more than once.
    pub fn duplicates(&self) -> usize {
        self.snapshot_rows.values().filter(|n| **n > 1).count()
    }
}

/// The committed contents now of every table `captured` accepts that the dictionary lists,
/// by key.
pub fn contents(source: &mut SimSource, captured: fn(&TableId) -> bool) -> BTreeMap<TableId, Rows> {
    let mut tables: Vec<TableId> = source
        .resolve_objects(&captured)
        .unwrap()
        .into_iter()
        .map(|o| o.table)
        .collect();
    tables.sort();
    tables.dedup();
    let layouts = source.table_layouts(&tables).unwrap();
    let mut out = BTreeMap::new();
    for layout in layouts {
        let rows = source.database().committed_rows(&layout.table).unwrap();
        let mut table = Rows::new();
        for (row_id, columns) in rows {
            let image: BTreeMap<String, Value> = columns.into_iter().collect();
            table.insert(key_of(&layout, &image, Some(&row_id)), image);
        }
        out.insert(layout.table.clone(), table);
    }
    out
}

/// The consumer holds exactly `expected`, table by table, or a panic naming the first
/// difference.
pub fn assert_contents(consumer: &Consumer, expected: &BTreeMap<TableId, Rows>) {
    for (table, rows) in expected {
        let got = consumer.tables.get(table).cloned().unwrap_or_default();
        let missing: Vec<&String> = rows.keys().filter(|k| !got.contains_key(*k)).collect();
        let extra: Vec<&String> = got.keys().filter(|k| !rows.contains_key(*k)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{table}: {} rows missing (first {:?}), {} extra (first {:?})",
            missing.len(),
            missing.first(),
            extra.len(),
            extra.first()
        );
        for (key, row) in rows {
            assert_eq!(got.get(key), Some(row), "{table} row {key}");
        }
    }
}

/// Steps the engine until the snapshot is complete and three steps in a row found nothing.
pub fn run_until_quiet<S: RedoSource>(
    engine: &mut CaptureEngine<S>,
    clock: &ManualClock,
    out: &mut Vec<EngineRecord>,
) -> Result<(), EngineError> {
    let mut idle = 0;
    let mut steps = 0;
    while idle < 3 {
        let report = engine.step(out)?;
        steps += 1;
        assert!(steps < 200_000, "the engine does not settle");
        if report.rows == 0 && report.snapshot_rows == 0 && !report.retried {
            idle += 1;
        } else {
            idle = 0;
        }
        clock.advance(Duration::from_millis(250));
    }
    Ok(())
}

/// Runs the rest of the workload at once and mines it.
pub fn finish(
    source: &Shared,
    engine: &mut CaptureEngine<Shared>,
    clock: &ManualClock,
    out: &mut Vec<EngineRecord>,
) {
    source.db(|s| while s.advance(4096).unwrap() {});
    run_until_quiet(engine, clock, out).unwrap();
}

/// One engine step, the clock a quarter second on.
pub fn step(engine: &mut CaptureEngine<Shared>, clock: &ManualClock, out: &mut Vec<EngineRecord>) {
    engine.step(out).unwrap();
    clock.advance(Duration::from_millis(250));
}

pub fn snapshot_rows(records: &[EngineRecord]) -> usize {
    records
        .iter()
        .filter(|r| matches!(r.kind, RecordKind::Snapshot(_)))
        .count()
}

/// The details of the ops events of `kind`.
pub fn ops(records: &[EngineRecord], kind: OpsKind) -> Vec<&BTreeMap<String, String>> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) if e.kind == kind => Some(&e.details),
            _ => None,
        })
        .collect()
}

pub fn open(
    source: Shared,
    settings: EngineSettings,
    position: Option<Position>,
    clock: &ManualClock,
) -> CaptureEngine<Shared> {
    CaptureEngine::open(source, settings, position, Box::new(clock.clone())).unwrap()
}
