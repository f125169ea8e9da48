//! End-to-end engine throughput: simulator → mining query → decode → buffer → records, in
//! changes per second, beside the decoder alone over the same rows in the same run.
//!
//! - `engine/changes`: a finished simulated database (random workload, private strands,
//!   savepoints, rollbacks) captured from its oldest log to the end, the mining answers
//!   rendered beforehand: decode, buffer, commit, positions and records — the engine's own cost.
//!   The records are kept and freed after the measurement: in the binary the delivery thread
//!   frees them once it has built their Kafka records.
//! - `engine/changes_decode_threads_2`: the same with two decode threads.
//! - `engine/changes_with_sim`: the same with the simulator rendering SQL_REDO at every query
//!   (the simulator stands for Oracle and LogMiner, whose cost is not ours).
//! - `engine/sim_mine_only_rows`: the simulator alone answering the mining query (its share).
//! - `engine/decode_only_rows`: `decode_step` over the rows that capture mines, on one thread.
//! - `engine/touch`: every byte of the mined rows' SQL_REDO read once, the memory-bandwidth
//!   limit of any pass over them. `cargo x bench` prints `engine/changes` as a percentage of
//!   it and of `decode_only_rows`: ratios of one run, which travel between machines.
//!
//! Run: `cargo x bench engine` (or `cargo bench -p cdc-logminer --bench engine`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use cdc_core::{MinedRow, TableId};
use cdc_logminer::decode::{
    DecodeOptions, DecodePool, DecodeTable, decode_step, join_continuations,
};
use cdc_logminer::engine::{CaptureEngine, EngineSettings, ManualClock, RecordKind};
use cdc_logminer::sim::source::{mine_all, mine_all_with};
use cdc_logminer::sim::{SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig};
use cdc_logminer::source::{
    ActiveTransaction, CaptureMode, CapturedObject, DatabaseIdentity, DictionaryBuild, LogFile,
    LogInventoryQuery, MineSummary, MiningQuery, MiningWindow, NlsSettings, RedoSource, RowSink,
    SessionRef, SourceError, TableFilter,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The allocator of the `oracle-cdc` binary, so the bench measures what ships. A service that
/// embeds the engine brings its own; docs/benchmarks.md also gives the figures with glibc's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CHANGES: u64 = 20_000;

fn captured(t: &TableId) -> bool {
    t.owner == "APP" && t.table != "DOCS"
}

fn database() -> SimDatabase {
    let db = SimDatabase::new(SimConfig {
        seed: 7,
        ..SimConfig::default()
    })
    .unwrap();
    let workload = Workload::random(WorkloadConfig {
        seed: 7,
        changes: CHANGES,
        ddl_rate: 0.0,
        long_text_rate: 0.0,
        ..WorkloadConfig::default()
    });
    let mut source = SimSource::with_workload(db, workload, 0);
    while source.advance(4096).unwrap() {}
    source.database().clone()
}

/// The simulator with its mining answers rendered once: the engine's own cost, without the
/// simulator's (which stands for the database's) rendering of SQL_REDO at every query.
///
/// A row is handed over the first time a query returns it (a database's fetch makes a new
/// row too, at the database's cost); a query that returns it again gets a copy.
#[derive(Debug)]
struct Rendered {
    inner: SimSource,
    rows: Arc<Vec<MinedRow>>,
    /// The log sequence each row was read from, in order.
    logs: Arc<Vec<u32>>,
    fresh: Vec<Option<MinedRow>>,
    window: (u32, u32),
}

impl RedoSource for Rendered {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        self.inner.identity()
    }
    fn current_scn(&mut self) -> Result<cdc_core::Scn, SourceError> {
        self.inner.current_scn()
    }
    fn log_inventory(&mut self, q: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        self.inner.log_inventory(q)
    }
    fn resolve_objects(&mut self, f: &TableFilter<'_>) -> Result<Vec<CapturedObject>, SourceError> {
        self.inner.resolve_objects(f)
    }
    fn table_layouts(&mut self, t: &[TableId]) -> Result<Vec<cdc_core::TableLayout>, SourceError> {
        self.inner.table_layouts(t)
    }
    fn last_ddl_after(
        &mut self,
        t: &[TableId],
        scn: cdc_core::Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        self.inner.last_ddl_after(t, scn)
    }
    fn start_session(&mut self, w: &MiningWindow) -> Result<(), SourceError> {
        let first = w.logs.first().map_or(0, |l| l.sequence);
        let last = w.logs.last().map_or(0, |l| l.sequence);
        self.window = (first, last);
        Ok(())
    }
    fn end_session(&mut self) -> Result<(), SourceError> {
        Ok(())
    }
    // the build's redo holds no row a mining query returns, so the rendered rows stay right
    fn build_dictionary(&mut self) -> Result<DictionaryBuild, SourceError> {
        self.inner.build_dictionary()
    }
    fn mine(
        &mut self,
        q: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        let mut summary = MineSummary {
            rows: 0,
            last: None,
            stopped_by_sink: false,
        };
        // only the window's logs are read; rows without an address come once the read has
        // reached the query's bound, as the simulator answers
        let first = self.logs.partition_point(|&log| log < self.window.0);
        let mut reached = q.from.addr().is_none();
        let rows = self.rows.get(first..).unwrap_or_default();
        let logs = self.logs.get(first..).unwrap_or_default();
        let fresh = self.fresh.get_mut(first..).unwrap_or_default();
        for ((row, &log), fresh) in rows.iter().zip(logs).zip(fresh.iter_mut()) {
            if log > self.window.1 {
                break;
            }
            match row.addr() {
                Ok(addr) => {
                    reached |= q.from.reached_by(addr);
                    if !q.from.admits(addr) {
                        continue;
                    }
                    summary.last = Some(addr);
                }
                Err(_) if !reached => continue,
                Err(_) => {}
            }
            summary.rows += 1;
            if sink(fresh.take().unwrap_or_else(|| row.clone())).is_break() {
                summary.stopped_by_sink = true;
                break;
            }
        }
        Ok(summary)
    }
    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        self.inner.active_transactions()
    }
    fn session_exists(&mut self, s: SessionRef) -> Result<bool, SourceError> {
        self.inner.session_exists(s)
    }
    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        self.inner.nls()
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

fn capture<S: RedoSource>(source: S, spill: &std::path::Path, start: cdc_core::Scn) -> u64 {
    capture_keep(source, spill, start, 1).0
}

/// [`capture`], handing the engine and its records back so that a benchmark drops them (and
/// the simulated database inside the source) outside the timed part: in the binary the
/// records are freed by the delivery thread once their Kafka records are built, not by the
/// mining thread.
fn capture_keep<S: RedoSource>(
    source: S,
    spill: &std::path::Path,
    start: cdc_core::Scn,
    decode_threads: usize,
) -> (
    u64,
    CaptureEngine<S>,
    Vec<cdc_logminer::engine::EngineRecord>,
) {
    let clock = ManualClock::default();
    let mut settings = EngineSettings::new("bench", "bench", captured);
    settings.buffer.spill_dir = spill.to_path_buf();
    settings.start_scn = Some(start);
    settings.max_logs_per_step = 64;
    settings.decode_threads = decode_threads;
    // the stream is measured: its history is mined from its first SCN, no table read whole
    settings.snapshot.mode = cdc_core::config::SnapshotMode::None;
    let mut engine = CaptureEngine::open(source, settings, None, Box::new(clock.clone())).unwrap();
    // room for every record of the capture: none is moved while it runs
    let mut records = Vec::with_capacity(2 * CHANGES as usize);
    let mut idle = 0;
    while idle < 2 {
        let report = engine.step(&mut records).unwrap();
        idle = if report.rows == 0 { idle + 1 } else { 0 };
        clock.advance(Duration::from_millis(10));
    }
    let changes = records
        .iter()
        .filter(|r| matches!(r.kind, RecordKind::Change(_)))
        .count() as u64;
    (changes, engine, records)
}

fn bench(c: &mut Criterion) {
    let db = database();
    let spill = tempfile::tempdir().unwrap();
    let start = SimSource::new(db.clone())
        .log_inventory(&LogInventoryQuery {
            from: cdc_core::Scn::ZERO,
            mode: CaptureMode::Online,
            destination: None,
        })
        .unwrap()
        .iter()
        .map(|l| l.first_scn)
        .min()
        .unwrap();
    let changes = capture(SimSource::new(db.clone()), spill.path(), start);
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    group.throughput(Throughput::Elements(changes));
    group.bench_function("changes_with_sim", |b| {
        b.iter(|| black_box(capture(SimSource::new(db.clone()), spill.path(), start)))
    });
    // every row of the history, as the simulator answers the engine's query over all logs
    let all_rows =
        Arc::new(mine_all_with(&mut SimSource::new(db.clone()), &captured, |_| {}).unwrap());
    // the log each row was read from: a row with the all-zero RS_ID (a ROLLBACK) names none and
    // belongs to the log of the row before it
    let logs: Arc<Vec<u32>> = Arc::new(
        all_rows
            .iter()
            .scan(0, |log, row| {
                if row.rs_id != cdc_core::RsId::NONE {
                    *log = row.rs_id.seq;
                }
                Some(*log)
            })
            .collect(),
    );
    assert!(
        logs.is_sorted(),
        "the history is one redo thread's logs, in order"
    );
    let rendered = || Rendered {
        inner: SimSource::new(db.clone()),
        rows: Arc::clone(&all_rows),
        logs: Arc::clone(&logs),
        fresh: all_rows.iter().cloned().map(Some).collect(),
        window: (0, 0),
    };
    assert_eq!(capture(rendered(), spill.path(), start), changes);
    group.bench_function("changes", |b| {
        b.iter_batched(
            rendered,
            |s| black_box(capture_keep(s, spill.path(), start, 1)),
            criterion::BatchSize::LargeInput,
        )
    });
    // `cdc.mining.decode.threads=2`: on two cores the default (cores - 1) is one thread,
    // which leaves a core to the Kafka side of the binary; an embedding service may give both
    group.bench_function("changes_decode_threads_2", |b| {
        b.iter_batched(
            rendered,
            |s| black_box(capture_keep(s, spill.path(), start, 2)),
            criterion::BatchSize::LargeInput,
        )
    });

    // every byte of the same history's SQL_REDO read once (a sum of its 8-byte words): the
    // memory-bandwidth limit of a pass over it, in the same run; `cargo x bench` prints
    // `changes` as a percentage of it, and of `decode_only_rows` (the engine's own overhead)
    group.bench_function("touch", |b| {
        b.iter(|| black_box(cdc_logminer::test_support::touch_sql_redo(all_rows.iter())))
    });

    // the decoder alone, over the rows capture mines
    let mut source = SimSource::new(db.clone());
    let rows: Vec<MinedRow> =
        join_continuations(mine_all(&mut source, &captured, &[]).unwrap()).unwrap();
    let objects = source.resolve_objects(&captured).unwrap();
    let tables_list: Vec<TableId> = {
        let mut t: Vec<TableId> = objects.iter().map(|o| o.table.clone()).collect();
        t.sort();
        t.dedup();
        t
    };
    let layouts = source.table_layouts(&tables_list).unwrap();
    let tables: std::collections::HashMap<TableId, DecodeTable> = layouts
        .into_iter()
        .map(|l| {
            (
                l.table.clone(),
                DecodeTable::without_exclusions(Arc::new(l)),
            )
        })
        .collect();
    let by_object: std::collections::HashMap<(cdc_core::ConId, cdc_core::ObjectId), TableId> =
        objects
            .into_iter()
            .map(|o| ((o.con, o.object), o.table))
            .collect();
    let pool = DecodePool::sequential();
    let options = DecodeOptions::default();
    group.throughput(Throughput::Elements(rows.len() as u64));
    group.bench_function("sim_mine_only_rows", |b| {
        b.iter(|| {
            let mut source = SimSource::new(db.clone());
            black_box(mine_all(&mut source, &captured, &[]).unwrap().len())
        })
    });
    group.bench_function("decode_only_rows", |b| {
        b.iter(|| {
            black_box(decode_step(
                &rows,
                |row: &MinedRow| tables.get(by_object.get(&(row.src_con_id, row.data_obj?))?),
                &options,
                &pool,
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
