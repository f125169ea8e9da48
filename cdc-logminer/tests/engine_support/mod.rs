//! Shared helpers of the engine tests: run the engine over a simulated database until it is
//! quiet, and compare what it delivered with what the database committed.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::time::Duration;

use cdc_core::{ChangeOp, ConXid, RedoAddr, TableId, Value};
use cdc_logminer::engine::{
    CaptureEngine, EngineError, EngineRecord, EngineSettings, ManualClock, RecordKind,
};
use cdc_logminer::sim::{
    GroundTruth, SimConfig, SimDatabase, SimSource, TruthTransaction, Workload, WorkloadConfig,
};
use cdc_logminer::source::{
    ActiveTransaction, CapturedObject, DatabaseIdentity, LogFile, LogInventoryQuery, MineSummary,
    MiningQuery, MiningWindow, NlsSettings, RedoSource, RowSink, SessionRef, SourceError,
    TableFilter,
};
use cdc_offset::Position;

pub mod snapshot;

/// A source whose mined rows pass through `edit` on their way to the engine: the rows a real
/// LogMiner can return that the simulator does not write (a malformed literal, a statement
/// without an owner), made from the simulator's own. Everything else is the inner source's.
#[derive(Debug)]
pub struct Edited<S> {
    pub inner: S,
    pub edit: fn(&mut cdc_core::MinedRow),
}

impl<S: RedoSource> RedoSource for Edited<S> {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        self.inner.identity()
    }
    fn current_scn(&mut self) -> Result<cdc_core::Scn, SourceError> {
        self.inner.current_scn()
    }
    fn log_inventory(&mut self, query: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        self.inner.log_inventory(query)
    }
    fn resolve_objects(
        &mut self,
        filter: &TableFilter<'_>,
    ) -> Result<Vec<CapturedObject>, SourceError> {
        self.inner.resolve_objects(filter)
    }
    fn table_layouts(
        &mut self,
        tables: &[TableId],
    ) -> Result<Vec<cdc_core::TableLayout>, SourceError> {
        self.inner.table_layouts(tables)
    }
    fn last_ddl_after(
        &mut self,
        tables: &[TableId],
        scn: cdc_core::Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        self.inner.last_ddl_after(tables, scn)
    }
    fn start_session(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        self.inner.start_session(window)
    }
    fn end_session(&mut self) -> Result<(), SourceError> {
        self.inner.end_session()
    }
    fn mine(
        &mut self,
        q: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        let edit = self.edit;
        self.inner.mine(q, &mut |mut row| {
            edit(&mut row);
            sink(row)
        })
    }
    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        self.inner.active_transactions()
    }
    fn session_exists(&mut self, session: SessionRef) -> Result<bool, SourceError> {
        self.inner.session_exists(session)
    }
    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        self.inner.nls()
    }
    fn build_dictionary(&mut self) -> Result<cdc_logminer::source::DictionaryBuild, SourceError> {
        self.inner.build_dictionary()
    }
    fn reconnect(&mut self) -> Result<(), SourceError> {
        self.inner.reconnect()
    }
    fn snapshot_reader(
        &mut self,
    ) -> Result<Box<dyn cdc_logminer::source::SnapshotReader>, SourceError> {
        self.inner.snapshot_reader()
    }
}

/// Tables the engine tests capture: the standard schema's APP tables except the LOB table
/// (LOB values are assembled by a later issue; `cdc.lob.mode=skip` publishes no LOB fields).
pub fn captured(t: &TableId) -> bool {
    t.owner == "APP" && t.table != "DOCS"
}

pub fn settings(spill: &tempfile::TempDir) -> EngineSettings {
    let mut s = EngineSettings::new("cdc", "engine-test", captured);
    s.buffer.spill_dir = spill.path().to_path_buf();
    s.users_exclude = vec!["ETL_BATCH".into()];
    s.heartbeat_interval = Some(Duration::from_secs(10));
    // a build writes redo: a test that replays its scenario for a restart would mine another
    // database than the first run did. The lag-case tests turn builds on.
    s.dictionary_builds = None;
    // the stream's tests read no table whole; engine_snapshot.rs turns snapshots on
    s.snapshot.mode = cdc_core::config::SnapshotMode::None;
    s
}

pub fn source(
    seed: u64,
    config: SimConfig,
    workload: WorkloadConfig,
    per_poll: usize,
) -> SimSource {
    let db = SimDatabase::new(SimConfig { seed, ..config }).unwrap();
    SimSource::with_workload(
        db,
        Workload::random(WorkloadConfig { seed, ..workload }),
        per_poll,
    )
}

/// Steps the engine until the workload is done and `quiet` steps in a row found no row.
pub fn run_until_quiet<S: RedoSource>(
    engine: &mut CaptureEngine<S>,
    clock: &ManualClock,
    out: &mut Vec<EngineRecord>,
    quiet: usize,
) -> Result<(), EngineError> {
    let mut idle = 0;
    let mut steps = 0;
    while idle < quiet {
        let report = engine.step(out)?;
        steps += 1;
        assert!(steps < 1_000_000, "the engine does not settle");
        if report.rows == 0 && !report.retried {
            idle += 1;
        } else {
            idle = 0;
        }
        clock.advance(Duration::from_millis(250));
    }
    Ok(())
}

/// A delivered change, compared by content.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    pub op: ChangeOp,
    pub table: TableId,
    pub before: Option<BTreeMap<String, Value>>,
    pub after: Option<BTreeMap<String, Value>>,
}

/// Delivered transactions in order: (transaction, COMMIT address, changes).
pub fn delivered(records: &[EngineRecord]) -> Vec<(ConXid, RedoAddr, Vec<Delivered>)> {
    let mut out: Vec<(ConXid, RedoAddr, Vec<Delivered>)> = Vec::new();
    for record in records {
        let RecordKind::Change(change) = &record.kind else {
            continue;
        };
        let image = |values: &Option<Vec<cdc_core::change::ColumnValue>>| {
            values.as_ref().map(|vs| {
                vs.iter()
                    .map(|cv| {
                        (
                            change.layout.columns[cv.column as usize].name.clone(),
                            cv.value.clone(),
                        )
                    })
                    .collect::<BTreeMap<_, _>>()
            })
        };
        let d = Delivered {
            op: change.event.change.op,
            table: TableId::clone(&change.event.change.table),
            before: image(&change.event.change.before),
            after: image(&change.event.change.after),
        };
        let key = change.commit.con_xid;
        let addr = change.commit.commit_addr;
        match out.last_mut() {
            Some((k, a, changes)) if *k == key && *a == addr => changes.push(d),
            _ => out.push((key, addr, vec![d])),
        }
    }
    out
}

/// The committed truth for the captured tables, in the same shape: the transactions that
/// committed at or after `floor`, the first start's SCN (earlier ones ended before the
/// connector started).
pub fn expected(
    truth: &GroundTruth,
    floor: cdc_core::Scn,
) -> Vec<(ConXid, RedoAddr, Vec<Delivered>)> {
    truth
        .captured(&captured, &["ETL_BATCH".to_owned()])
        .into_iter()
        .filter(|t| t.commit_scn >= floor)
        .map(|t: TruthTransaction| {
            let changes = t
                .changes
                .iter()
                .map(|c| Delivered {
                    op: c.op,
                    table: c.table.clone(),
                    before: c.before.as_ref().map(|v| v.iter().cloned().collect()),
                    after: c.after.as_ref().map(|v| v.iter().cloned().collect()),
                })
                .collect();
            (ConXid::new(t.con, t.xid), t.commit_addr, changes)
        })
        .collect()
}

/// Asserts delivered == expected, with a readable first difference.
pub fn assert_same(
    delivered: &[(ConXid, RedoAddr, Vec<Delivered>)],
    expected: &[(ConXid, RedoAddr, Vec<Delivered>)],
) {
    for (i, (d, e)) in delivered.iter().zip(expected).enumerate() {
        assert_eq!(
            (d.0, d.1),
            (e.0, e.1),
            "transaction #{i}: delivered {} at {}, expected {} at {}",
            d.0,
            d.1,
            e.0,
            e.1
        );
        assert_eq!(
            d.2.len(),
            e.2.len(),
            "transaction #{i} ({}) change count",
            d.0
        );
        for (j, (dc, ec)) in d.2.iter().zip(&e.2).enumerate() {
            assert_eq!(dc, ec, "transaction #{i} ({}) change #{j}", d.0);
        }
    }
    assert_eq!(
        delivered.len(),
        expected.len(),
        "delivered {} transactions, the database committed {}",
        delivered.len(),
        expected.len()
    );
}

/// The first start's floor SCN, from the start heartbeat.
pub fn first_start_floor(records: &[EngineRecord]) -> cdc_core::Scn {
    records
        .first()
        .and_then(|r| r.position.first_start.as_ref())
        .map(|f| f.floor_scn)
        .expect("the first record is the start heartbeat of a first start")
}

/// The position of the last record, for a restart.
pub fn last_position(records: &[EngineRecord]) -> Option<Position> {
    records.last().map(|r| Position::clone(&r.position))
}

/// A database that ran `workload` to its end: the engine then mines finished redo.
pub fn finished_database(seed: u64, config: SimConfig, workload: WorkloadConfig) -> SimDatabase {
    let db = SimDatabase::new(SimConfig { seed, ..config }).unwrap();
    let mut source =
        SimSource::with_workload(db, Workload::random(WorkloadConfig { seed, ..workload }), 0);
    while source.advance(4096).unwrap() {}
    source.database().clone()
}

/// Every log of the database (online and archived copies), as the engine would list them.
pub fn log_inventory(db: &SimDatabase) -> Vec<cdc_logminer::source::LogFile> {
    use cdc_logminer::source::{CaptureMode, LogInventoryQuery, RedoSource as _};
    SimSource::new(db.clone())
        .log_inventory(&LogInventoryQuery {
            from: cdc_core::Scn::ZERO,
            mode: CaptureMode::Online,
            destination: None,
        })
        .unwrap()
}

/// The first SCN of the oldest log: `cdc.start.scn` for a capture of the whole history.
pub fn oldest_scn(db: &SimDatabase) -> cdc_core::Scn {
    log_inventory(db).iter().map(|l| l.first_scn).min().unwrap()
}

/// Captures a finished database from `start` (a first start at `cdc.start.scn`) or from a
/// stored position, to the end.
pub fn capture(
    db: &SimDatabase,
    spill: &tempfile::TempDir,
    position: Option<Position>,
) -> Result<Vec<EngineRecord>, EngineError> {
    capture_tables(db, spill, position, captured)
}

/// [`capture`] of the tables `tables` accepts.
pub fn capture_tables(
    db: &SimDatabase,
    spill: &tempfile::TempDir,
    position: Option<Position>,
    tables: fn(&TableId) -> bool,
) -> Result<Vec<EngineRecord>, EngineError> {
    let clock = ManualClock::default();
    let mut s = settings(spill);
    s.table_filter = std::sync::Arc::new(tables);
    s.start_scn = Some(oldest_scn(db));
    let mut engine = CaptureEngine::open(
        SimSource::new(db.clone()),
        s,
        position,
        Box::new(clock.clone()),
    )?;
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3)?;
    Ok(records)
}

/// The change records of a run, by content and place: (transaction, COMMIT address, event
/// index, change).
pub fn changes(records: &[EngineRecord]) -> Vec<(ConXid, RedoAddr, u64, Delivered)> {
    delivered_indexed(records)
}

fn delivered_indexed(records: &[EngineRecord]) -> Vec<(ConXid, RedoAddr, u64, Delivered)> {
    let mut out = Vec::new();
    for record in records {
        if let RecordKind::Change(c) = &record.kind {
            let d = delivered(std::slice::from_ref(record));
            let (_, _, mut changes) = d.into_iter().next().unwrap();
            out.push((
                c.commit.con_xid,
                c.commit.commit_addr,
                c.event_index,
                changes.remove(0),
            ));
        }
    }
    out
}

/// The NAME value of every change delivered, as text, in delivery order.
pub fn published_names(records: &[EngineRecord]) -> Vec<String> {
    delivered(records)
        .iter()
        .flat_map(|(_, _, cs)| {
            cs.iter()
                .filter_map(|c| c.after.as_ref()?.get("NAME").cloned())
        })
        .map(|v| format!("{v:?}"))
        .collect()
}

/// The details of every `transaction-orphan-released` ops event.
pub fn orphans_released(records: &[EngineRecord]) -> Vec<BTreeMap<String, String>> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) if e.kind.as_str() == "transaction-orphan-released" => {
                Some(e.details.clone())
            }
            _ => None,
        })
        .collect()
}

/// Scenario events after a killed session's last row: four commits of `s1` to APP.CUSTOMERS
/// (IDs from `first_id`, named third to sixth), three seconds apart, so that orphan checks
/// see the session gone twice and mining passes its first absence.
pub fn after_the_kill(first_id: u32) -> String {
    ["third", "fourth", "fifth", "sixth"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let id = first_id + i as u32;
            let tick = if i == 0 {
                ""
            } else {
                r#"{"event": "tick", "millis": 3000},"#
            };
            format!(
                r#"{tick}{{"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {{"ID": {id}, "NAME": "{name}"}}}},{{"event": "commit", "session": "s1"}}"#
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}
