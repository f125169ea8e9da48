//! Decoding a whole mining step. Decoding is a pure function of the row and its schema
//! version, so a step of [`PARALLEL_MIN_ROWS`] rows or more is spread over a rayon pool of
//! `cdc.mining.decode.threads` threads; the results come back in redo order either way.
//!
//! ```text
//!  rows of a step (redo order) ──< 256 ──► decode_row on the mining thread ──┐
//!                              └─ ≥ 256 ──► rayon pool: par_iter().map() ─────┴► Vec<Result> in
//!                                                                               redo order
//! ```

use std::fmt;

use cdc_core::change::MinedRow;
use rayon::prelude::*;

use super::error::DecodeError;
use super::row::{DecodeOptions, Decoded, RowIds, decode_row_with};
use super::table::DecodeTable;

/// Steps with fewer rows are decoded on the calling thread: the hand-off costs more than it
/// saves.
pub const PARALLEL_MIN_ROWS: usize = 256;

/// The most threads `cdc.mining.decode.threads=0` picks.
pub const AUTO_MAX_THREADS: usize = 8;

/// Rows per rayon task: small enough to balance, large enough that scheduling is noise.
const MIN_ROWS_PER_TASK: usize = 64;

/// The number of decode threads for `cdc.mining.decode.threads`: 0 means one less than the
/// cores (at least 1, at most [`AUTO_MAX_THREADS`]); any other value is taken as it is.
pub fn resolve_threads(configured: usize) -> usize {
    if configured > 0 {
        return configured;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores.saturating_sub(1).clamp(1, AUTO_MAX_THREADS)
}

/// The decode threads. With one thread no pool exists and every step decodes in place.
pub struct DecodePool {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
}

impl fmt::Debug for DecodePool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodePool")
            .field("threads", &self.threads)
            .finish()
    }
}

/// The decode pool's threads could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start {threads} decode threads")]
pub struct PoolError {
    threads: usize,
    #[source]
    source: rayon::ThreadPoolBuildError,
}

impl DecodePool {
    /// A pool for `cdc.mining.decode.threads` (see [`resolve_threads`]).
    pub fn new(configured_threads: usize) -> Result<DecodePool, PoolError> {
        let threads = resolve_threads(configured_threads);
        if threads <= 1 {
            return Ok(DecodePool::sequential());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cdc-decode-{i}"))
            .build()
            .map_err(|source| PoolError { threads, source })?;
        Ok(DecodePool {
            pool: Some(pool),
            threads,
        })
    }

    /// No extra threads.
    pub fn sequential() -> DecodePool {
        DecodePool {
            pool: None,
            threads: 1,
        }
    }

    pub fn threads(&self) -> usize {
        self.threads
    }
}

/// Decodes the rows of one step (CSF pieces already joined), in redo order. `table_of` gives
/// the schema version valid at each row's SCN (`None` for rows of no captured table).
pub fn decode_step<'t, F>(
    rows: &[MinedRow],
    table_of: F,
    options: &DecodeOptions,
    pool: &DecodePool,
) -> Vec<Result<Decoded, DecodeError>>
where
    F: Fn(&MinedRow) -> Option<&'t DecodeTable>,
{
    let tables: Vec<Option<&DecodeTable>> = rows.iter().map(table_of).collect();
    decode_rows(rows, &tables, options, pool)
}

/// [`decode_step`] with each row's schema version already resolved: `tables[i]` is the one
/// of `rows[i]` (a missing entry is `None`).
pub fn decode_rows(
    rows: &[MinedRow],
    tables: &[Option<&DecodeTable>],
    options: &DecodeOptions,
    pool: &DecodePool,
) -> Vec<Result<Decoded, DecodeError>> {
    decode_rows_with(rows, tables, options, pool, RowIds::Copied)
}

/// [`decode_rows`], taking each row's ROWID as `row_ids` says.
pub(crate) fn decode_rows_with(
    rows: &[MinedRow],
    tables: &[Option<&DecodeTable>],
    options: &DecodeOptions,
    pool: &DecodePool,
    row_ids: RowIds,
) -> Vec<Result<Decoded, DecodeError>> {
    let parallel = pool.pool.is_some() && rows.len() >= PARALLEL_MIN_ROWS;
    // counts only: the decoder never logs a value
    tracing::trace!(
        rows = rows.len(),
        threads = if parallel { pool.threads } else { 1 },
        "decoding a step"
    );
    let table = |i: usize| tables.get(i).copied().flatten();
    match &pool.pool {
        Some(pool) if parallel => pool.install(|| {
            rows.par_iter()
                .enumerate()
                .with_min_len(MIN_ROWS_PER_TASK)
                .map(|(i, row)| decode_row_with(row, table(i), options, row_ids))
                .collect()
        }),
        _ => rows
            .iter()
            .enumerate()
            .map(|(i, row)| decode_row_with(row, table(i), options, row_ids))
            .collect(),
    }
}
