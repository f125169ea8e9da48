//! Decoder throughput on a mixed corpus built from the reference shapes: inserts, updates (full
//! before image, as under ALL COLUMNS logging) and deletes of tables with 5–40 columns of every
//! scalar type, half with the trailing `;`.
//!
//! - `decode/rows`, `decode/bytes`: parse + convert, one thread (rows/s and MB/s per core)
//! - `decode_small/rows`, `decode_small/bytes`: the same on rows of a few hundred bytes (tables
//!   of 4–8 columns), the row size the per-core target is stated for
//! - `decode_small/rows_kept`: the same, with the decoded rows kept and freed after the
//!   measurement, as the engine keeps them (it moves them into the transaction buffer); the
//!   lines above free each row as soon as it is decoded
//! - `parse_only/rows`: the zero-copy first layer alone
//! - `step_10k/threads/N`: a 10 000-row step through `decode_step` on 1 and 2 threads. Its
//!   results are freed after each step, untimed, by another thread: in the engine the rows a
//!   step decodes are freed by the delivery thread, never by the threads that decoded them, so
//!   both thread counts pay for memory that other threads freed. (They used to be freed by
//!   the calling thread, which made the one-thread case the only one to reuse memory it had
//!   freed itself; `docs/benchmarks.md` gives both measurements.)
//!
//! - `decode/touch`, `decode_small/touch`: a pass that only reads every byte of the same
//!   SQL_REDO (a sum of its 8-byte words): the memory-bandwidth limit of this work on the
//!   machine, measured in the same run. `cargo x bench` prints each decode rate as a
//!   percentage of it, a figure that travels between machines where absolute rates do not
//! - `decode_insert/N`, `decode_update/N`, `decode_delete/N`: rows of a table of N = 1, 10, 50
//!   VARCHAR2 columns of 50 characters, one thread (an UPDATE sets every column and names
//!   every column in its WHERE, a DELETE names every column, as under ALL COLUMNS logging);
//!   comparable with published per-column-count parser figures
//!
//! - `decode_lag/named`, `decode_lag/generic`: the same 10 000 rows of the simulator (inserts
//!   and updates of a table of 9 columns of every kind the lag case meets), as a redo
//!   dictionary names them and as the online catalog gives them after a later ALTER (STATUS 2,
//!   `"COL n"`, HEXTORAW of the internal formats), each decoded with the version they were
//!   written under; the generic form must decode at least half as fast as the named one
//!
//! Run: `cargo bench -p cdc-logminer --bench decode -- --warm-up-time 1 --measurement-time 5`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cdc_logminer::test_support as decode_support;

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cdc_core::change::{MinedRow, Operation};
use cdc_core::table::{ColumnType, TableLayout};
use cdc_logminer::decode::{
    DecodeError, DecodeOptions, DecodePool, DecodeTable, Decoded, decode_row, decode_step,
    parse_statement,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// The allocator of the `oracle-cdc` binary, so the bench measures what ships. A service that
/// embeds the decoder brings its own; docs/benchmarks.md also gives the figures with glibc's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Corpus {
    tables: HashMap<String, DecodeTable>,
    rows: Vec<MinedRow>,
    bytes: u64,
}

fn corpus(rows: usize) -> Corpus {
    let (layouts, rows) = decode_support::corpus(2026, 24, rows);
    Corpus::of(&layouts, rows)
}

/// Rows of a few hundred bytes (tables of 4–8 columns), the row size of the per-core target.
fn small_corpus(rows: usize) -> Corpus {
    let (layouts, rows) = decode_support::small_corpus(2027, 24, rows);
    Corpus::of(&layouts, rows)
}

impl Corpus {
    fn of(layouts: &[Arc<TableLayout>], rows: Vec<MinedRow>) -> Corpus {
        let tables = layouts
            .iter()
            .map(|l| {
                (
                    l.table.table.clone(),
                    DecodeTable::without_exclusions(Arc::clone(l)),
                )
            })
            .collect();
        let bytes = rows
            .iter()
            .map(|r| r.sql_redo.as_ref().map_or(0, String::len) as u64)
            .sum();
        Corpus {
            tables,
            rows,
            bytes,
        }
    }

    fn table(&self, row: &MinedRow) -> Option<&DecodeTable> {
        row.table_name.as_ref().and_then(|t| self.tables.get(t))
    }

    /// Decodes every row into `out` (which the caller frees outside the measurement).
    fn decode_into(
        &self,
        mut out: Vec<Result<Decoded, DecodeError>>,
    ) -> Vec<Result<Decoded, DecodeError>> {
        let options = DecodeOptions::default();
        out.extend(
            self.rows
                .iter()
                .map(|row| decode_row(row, self.table(row), &options)),
        );
        out
    }

    /// Reads every byte of the corpus's SQL_REDO once: the bandwidth reference.
    fn touch_all(&self) -> u64 {
        decode_support::touch_sql_redo(&self.rows)
    }

    fn decode_all(&self) -> usize {
        let options = DecodeOptions::default();
        let mut ok = 0;
        for row in &self.rows {
            if black_box(decode_row(row, self.table(row), &options)).is_ok() {
                ok += 1;
            }
        }
        ok
    }
}

fn sequential(c: &mut Criterion) {
    let corpus = corpus(10_000);
    assert_eq!(
        corpus.decode_all(),
        corpus.rows.len(),
        "the bench corpus must decode cleanly"
    );
    eprintln!(
        "corpus: {} rows, {} bytes of SQL_REDO, {:.0} bytes per row",
        corpus.rows.len(),
        corpus.bytes,
        corpus.bytes as f64 / corpus.rows.len() as f64
    );
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements(corpus.rows.len() as u64));
    group.bench_function("rows", |b| b.iter(|| corpus.decode_all()));
    group.throughput(Throughput::Bytes(corpus.bytes));
    group.bench_function("bytes", |b| b.iter(|| corpus.decode_all()));
    group.throughput(Throughput::Elements(corpus.rows.len() as u64));
    group.bench_function("touch", |b| b.iter(|| black_box(corpus.touch_all())));
    group.finish();

    let small = small_corpus(10_000);
    assert_eq!(
        small.decode_all(),
        small.rows.len(),
        "the small-row corpus must decode cleanly"
    );
    eprintln!(
        "small-row corpus: {} rows, {} bytes of SQL_REDO, {:.0} bytes per row",
        small.rows.len(),
        small.bytes,
        small.bytes as f64 / small.rows.len() as f64
    );
    let mut group = c.benchmark_group("decode_small");
    group.throughput(Throughput::Elements(small.rows.len() as u64));
    group.bench_function("rows", |b| b.iter(|| small.decode_all()));
    group.throughput(Throughput::Bytes(small.bytes));
    group.bench_function("bytes", |b| b.iter(|| small.decode_all()));
    group.throughput(Throughput::Elements(small.rows.len() as u64));
    group.bench_function("rows_kept", |b| {
        b.iter_batched(
            || Vec::with_capacity(small.rows.len()),
            |out| small.decode_into(out),
            criterion::BatchSize::LargeInput,
        )
    });
    group.bench_function("touch", |b| b.iter(|| black_box(small.touch_all())));
    group.finish();

    let mut group = c.benchmark_group("parse_only");
    group.throughput(Throughput::Elements(corpus.rows.len() as u64));
    group.bench_function("rows", |b| {
        b.iter(|| {
            corpus
                .rows
                .iter()
                .filter(|r| black_box(parse_statement(r.sql_redo.as_deref().unwrap_or(""))).is_ok())
                .count()
        })
    });
    group.finish();
}

fn step(c: &mut Criterion) {
    let corpus = corpus(10_000);
    let options = DecodeOptions::default();
    let mut group = c.benchmark_group("step_10k");
    group.throughput(Throughput::Elements(corpus.rows.len() as u64));
    for threads in [1usize, 2] {
        let pool = if threads == 1 {
            DecodePool::sequential()
        } else {
            DecodePool::new(threads).unwrap()
        };
        group.bench_with_input(BenchmarkId::new("threads", threads), &pool, |b, pool| {
            b.iter_custom(|iters| {
                let mut decoding = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let decoded = decode_step(&corpus.rows, |r| corpus.table(r), &options, pool);
                    decoding += start.elapsed();
                    // freed by another thread, untimed, as the engine's rows are (the
                    // delivery thread frees them once their records are built)
                    std::thread::spawn(move || drop(black_box(decoded)))
                        .join()
                        .unwrap();
                }
                decoding
            })
        });
    }
    group.finish();
}

/// Rows of one statement kind over a table of `columns` VARCHAR2 columns of 50 characters.
fn by_columns(kind: Operation, columns: usize, rows: usize) -> Corpus {
    let names: Vec<String> = (1..=columns).map(|i| format!("C{i}")).collect();
    let spec: Vec<(&str, ColumnType)> = names
        .iter()
        .map(|n| (n.as_str(), ColumnType::Varchar2))
        .collect();
    let layout = decode_support::layout("APP", &format!("T{columns}"), &spec, &["C1"]);
    let mut rng = decode_support::Rng::new(2028 + columns as u64);
    let mut value = || -> String {
        (0..50)
            .map(|_| char::from(b'a' + rng.below(26) as u8))
            .collect()
    };
    let table = format!("\"APP\".\"T{columns}\"");
    let mined = (0..rows)
        .map(|_| {
            let sql = match kind {
                Operation::Insert => {
                    let cols: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                    let vals: Vec<String> =
                        names.iter().map(|_| format!("'{}'", value())).collect();
                    format!(
                        "insert into {table}({}) values ({})",
                        cols.join(","),
                        vals.join(",")
                    )
                }
                Operation::Update => {
                    let set: Vec<String> = names
                        .iter()
                        .map(|n| format!("\"{n}\" = '{}'", value()))
                        .collect();
                    let at: Vec<String> = names
                        .iter()
                        .map(|n| format!("\"{n}\" = '{}'", value()))
                        .collect();
                    format!(
                        "update {table} set {} where {}",
                        set.join(", "),
                        at.join(" and ")
                    )
                }
                _ => {
                    let at: Vec<String> = names
                        .iter()
                        .map(|n| format!("\"{n}\" = '{}'", value()))
                        .collect();
                    format!("delete from {table} where {}", at.join(" and "))
                }
            };
            // as the engine's session renders them (NO_ROWID_IN_STMT, NO_SQL_DELIMITER), ROW_ID set
            let mut row = decode_support::row(kind.code(), "APP", &format!("T{columns}"), &sql);
            row.row_id = Some("AAAS5bAAEAAAAFdAAA".to_owned());
            row
        })
        .collect();
    Corpus::of(&[layout], mined)
}

fn columns(c: &mut Criterion) {
    for (kind, name) in [
        (Operation::Insert, "decode_insert"),
        (Operation::Update, "decode_update"),
        (Operation::Delete, "decode_delete"),
    ] {
        let mut group = c.benchmark_group(name);
        for columns in [1usize, 10, 50] {
            let corpus = by_columns(kind, columns, 10_000);
            assert_eq!(
                corpus.decode_all(),
                corpus.rows.len(),
                "{name}/{columns} decodes"
            );
            group.throughput(Throughput::Elements(corpus.rows.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(columns), &corpus, |b, c| {
                b.iter(|| c.decode_all())
            });
        }
        group.finish();
    }
}

/// The rows of a simulated table written before an ALTER, mined twice: with a redo dictionary
/// (named, typed literals) and with the online catalog after the ALTER (generic); and the
/// version they were written under, which reads generic rows.
fn lag_corpora(rows: usize) -> (Corpus, Corpus) {
    use cdc_logminer::sim::Scenario;
    use cdc_logminer::source::{
        DictionarySource, LogInventoryQuery, MiningQuery, MiningWindow, RedoBound, RedoSource,
        SessionMode,
    };
    let mut events = vec![
        r#"{"event": "create_table", "table": {"owner": "APP", "name": "LAG",
          "columns": [{"name": "ID", "type": "NUMBER(9)"}, {"name": "N", "type": "NUMBER(12,2)"},
          {"name": "D", "type": "DATE"}, {"name": "TS", "type": "TIMESTAMP(6)"},
          {"name": "V", "type": "VARCHAR2(40)"}, {"name": "NV", "type": "NVARCHAR2(20)"},
          {"name": "R", "type": "RAW(8)"}, {"name": "BD", "type": "BINARY_DOUBLE"},
          {"name": "F", "type": "BINARY_FLOAT"}], "primary_key": ["ID"]}}"#
            .to_owned(),
        r#"{"event": "dictionary_build"}"#.to_owned(),
        r#"{"event": "log_switch"}"#.to_owned(),
    ];
    for i in 1..=rows / 2 {
        events.push(format!(
            r#"{{"event": "insert", "session": "s1", "table": "APP.LAG", "values": {{"ID": {i},
              "N": {}.25, "D": "2026-0{}-1{} 0{}:04:05", "TS": "2026-01-02 03:04:05.{:06}",
              "V": "row {i} text", "NV": "日本 {i}", "R": "{:08x}", "BD": {i}.5, "F": -{i}.25}}}}"#,
            (i as i64) * 37 - 5000,
            1 + i % 9,
            i % 10,
            i % 10,
            i * 7 % 1_000_000,
            i * 2_654_435_761 % 4_294_967_296,
        ));
        events.push(format!(
            r#"{{"event": "update", "session": "s1", "table": "APP.LAG", "where": {{"ID": {i}}},
              "set": {{"N": {}.5, "V": "updated {i}"}}}}"#,
            i * 3
        ));
        if i % 50 == 0 {
            events.push(r#"{"event": "commit", "session": "s1"}"#.to_owned());
        }
    }
    events.push(r#"{"event": "commit", "session": "s1"}"#.to_owned());
    let json = format!(
        r#"{{"name": "lag-bench", "database": {{"seed": 5}}, "events": [{}]}}"#,
        events.join(",")
    );
    let mut source = Scenario::from_json(&json).unwrap().into_source(0).unwrap();
    while source.advance(4096).unwrap() {}
    let table = cdc_core::TableId::new("APP", "LAG");
    let layout = Arc::new(
        source
            .table_layouts(std::slice::from_ref(&table))
            .unwrap()
            .remove(0),
    );
    source
        .apply(&cdc_logminer::sim::DbOp::AddColumn {
            table: "APP.LAG".into(),
            column: cdc_logminer::sim::ColumnSpec {
                name: "EXTRA".into(),
                data_type: "NUMBER".into(),
                nullable: true,
            },
        })
        .unwrap();
    let objects: Vec<_> = source
        .resolve_objects(&|t| t.table == "LAG")
        .unwrap()
        .into_iter()
        .map(|o| (o.con, o.object))
        .collect();
    let logs = source
        .log_inventory(&LogInventoryQuery {
            from: cdc_core::Scn::ZERO,
            mode: cdc_core::config::CaptureMode::Online,
            destination: None,
        })
        .unwrap();
    let mut mine = |dictionary: DictionarySource| {
        source
            .start_session(&MiningWindow {
                logs: logs.clone(),
                start_scn: logs[0].first_scn,
                mode: SessionMode::Logs,
                dictionary,
            })
            .unwrap();
        let mut rows = Vec::new();
        let query = MiningQuery {
            from: RedoBound::Start,
            objects: objects.clone(),
            excluded_users: Vec::new(),
            inlist_max: 1000,
            timeout: Duration::from_secs(60),
            fetch_size: 10_000,
            lob_rows: false,
        };
        source
            .mine(&query, &mut |row: MinedRow| {
                if matches!(row.operation, Operation::Insert | Operation::Update) {
                    rows.push(row);
                }
                std::ops::ControlFlow::Continue(())
            })
            .unwrap();
        rows
    };
    let named = mine(DictionarySource::RedoLogs);
    let generic = mine(DictionarySource::OnlineCatalog);
    assert!(
        named.iter().all(|r| r.status == 0),
        "the redo dictionary names every row"
    );
    assert!(
        generic.iter().all(|r| r.status == 2),
        "every row is older than the ALTER"
    );
    let corpus = |rows: Vec<MinedRow>, older: bool| {
        let mut corpus = Corpus::of(&[Arc::clone(&layout)], rows);
        if older {
            for table in corpus.tables.values_mut() {
                *table = table
                    .clone()
                    .reading_older_rows(Arc::new(cdc_logminer::decode::Charsets::default()));
            }
        }
        corpus
    };
    (corpus(named, false), corpus(generic, true))
}

fn lag(c: &mut Criterion) {
    let (named, generic) = lag_corpora(10_000);
    assert_eq!(named.rows.len(), generic.rows.len());
    assert_eq!(named.decode_all(), named.rows.len(), "named rows decode");
    assert_eq!(
        generic.decode_all(),
        generic.rows.len(),
        "generic rows decode"
    );
    let mut group = c.benchmark_group("decode_lag");
    group.throughput(Throughput::Elements(named.rows.len() as u64));
    group.bench_function("named", |b| b.iter(|| named.decode_all()));
    group.bench_function("generic", |b| b.iter(|| generic.decode_all()));
    group.finish();
}

criterion_group!(benches, sequential, step, columns, lag);
criterion_main!(benches);
