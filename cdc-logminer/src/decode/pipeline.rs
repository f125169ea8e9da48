//! A step's rows in chunks, and decoding them while they are applied: a large step is decoded
//! chunk by chunk on a thread of its own while the caller applies the chunks before, in redo
//! order; a small one is decoded first. Either way the caller sees each row with its decoded
//! form in redo order, and the results are those of decoding the whole step first (decoding is
//! a pure function of the row and the step's schema versions).
//!
//! ```text
//!  decode thread   [chunk 1][chunk 2][chunk 3] …      (≤ PIPELINE_DEPTH chunks ahead)
//!  caller                   [apply 1][apply 2][apply 3] …
//! ```

use std::fmt;
use std::sync::Arc;

use cdc_core::change::MinedRow;
use cdc_core::{ConId, ObjectId, TableId};

use super::csf::join_continuations_into;
use super::error::DecodeError;
use super::row::{DecodeOptions, Decoded, RowIds};
use super::step::{DecodePool, decode_rows_with};
use super::table::DecodeTable;

/// A step's rows in redo order, in chunks that double from [`FIRST_CHUNK_ROWS`] up to
/// [`PIPELINE_CHUNK_ROWS`]: a step of any size is read without moving the rows already read
/// (a growing vector copies each row about twice), a step of a few rows stays small, and the
/// chunks are what a pipelined step decodes.
#[derive(Default)]
pub(crate) struct StepRows {
    pub(crate) chunks: Vec<Vec<MinedRow>>,
    pub(crate) len: usize,
}

impl StepRows {
    /// Inlined into the source's row callback, so that a row is moved once, straight into its
    /// chunk.
    #[inline(always)]
    pub(crate) fn push(&mut self, row: MinedRow) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < chunk.capacity() => chunk.push(row),
            last => {
                let rows = last.map_or(FIRST_CHUNK_ROWS, |chunk| {
                    (chunk.capacity() * 2).clamp(FIRST_CHUNK_ROWS, PIPELINE_CHUNK_ROWS)
                });
                let mut chunk = Vec::with_capacity(rows);
                chunk.push(row);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &MinedRow> {
        self.chunks.iter().flatten()
    }

    /// CSF continuation rows joined to the row they continue (rare: only statements longer
    /// than 4 000 bytes have them).
    pub(crate) fn join_continuations(self) -> Result<StepRows, DecodeError> {
        if !self.iter().any(|row| row.csf) {
            return Ok(self);
        }
        let mut rows = StepRows::default();
        join_continuations_into(self.chunks.into_iter().flatten(), |row| rows.push(row))?;
        Ok(rows)
    }
}

/// Steps of at least this many rows are decoded on a thread of their own while they are
/// applied; smaller ones are decoded first.
const PIPELINE_MIN_ROWS: usize = 2 * PIPELINE_CHUNK_ROWS;

/// Rows a chunk of a pipelined step: large enough that the hand-off is noise (a chunk is a
/// millisecond or more of decoding), and that a pool of decode threads still shares it
/// ([`super::PARALLEL_MIN_ROWS`]).
const PIPELINE_CHUNK_ROWS: usize = 512;

/// Rows of a step's first chunk; each later chunk holds twice as many, up to
/// [`PIPELINE_CHUNK_ROWS`].
const FIRST_CHUNK_ROWS: usize = 16;

/// Decoded chunks waiting to be applied, at most: bounds the memory the decode thread runs
/// ahead with.
const PIPELINE_DEPTH: usize = 4;

/// Objects whose schema version a step's decoding remembers (a power of two).
const RESOLVED_SLOTS: usize = 64;

/// The rows a step's decode thread takes (`None` once taken).
fn take_rows(handed: &std::sync::Mutex<Option<StepRows>>) -> Option<StepRows> {
    handed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
}

/// What decoding a step needs, owned so that a thread of its own can decode it while the
/// caller applies it (cheap to clone: the maps and the pool are shared).
#[derive(Clone)]
pub(crate) struct StepDecoder {
    pub(crate) objects: Arc<foldhash::HashMap<(ConId, ObjectId), TableId>>,
    pub(crate) tables: Arc<foldhash::HashMap<TableId, DecodeTable>>,
    pub(crate) options: DecodeOptions,
    pub(crate) pool: Arc<DecodePool>,
}

impl StepDecoder {
    /// One row, with the schema version its table has now (a row mined again with a redo
    /// dictionary); its ROWID is left in it ([`RowIds::LeftInRow`]).
    pub(crate) fn decode_one(&self, row: &MinedRow) -> Result<Decoded, DecodeError> {
        let table = row
            .data_obj
            .and_then(|object| self.objects.get(&(row.src_con_id, object)))
            .and_then(|t| self.tables.get(t));
        super::row::decode_row_with(row, table, &self.options, RowIds::LeftInRow)
    }

    /// A whole step, decoded before any of it is applied.
    fn decode_all(&self, rows: &StepRows) -> Vec<Result<Decoded, DecodeError>> {
        let mut decoded = Vec::with_capacity(rows.len());
        let mut resolved = ResolvedObjects::default();
        for chunk in &rows.chunks {
            decoded.extend(self.decode(chunk, &mut resolved));
        }
        decoded
    }

    /// The rows of a chunk of the step; `resolved` remembers the schema versions found for
    /// the chunks before.
    fn decode<'s>(
        &'s self,
        rows: &[MinedRow],
        resolved: &mut ResolvedObjects<'s>,
    ) -> Vec<Result<Decoded, DecodeError>> {
        let mut tables = Vec::with_capacity(rows.len());
        for row in rows {
            tables.push(row.data_obj.and_then(|object| {
                resolved.table((row.src_con_id, object), |key| {
                    self.objects.get(key).and_then(|t| self.tables.get(t))
                })
            }));
        }
        // the rows are applied owned: each ROWID moves from its row into the change there
        decode_rows_with(rows, &tables, &self.options, &self.pool, RowIds::LeftInRow)
    }
}

/// The schema version of each object a step's rows name, as the decoder found it: a step's
/// rows come from a few objects, and finding one takes two lookups, the second of which
/// hashes and compares the table's names. A small cache indexed by a hash of the object id;
/// two objects on one slot take turns.
struct ResolvedObjects<'a> {
    slots: [Option<ResolvedObject<'a>>; RESOLVED_SLOTS],
}

/// An object and its schema version (`None`: no captured table).
type ResolvedObject<'a> = ((ConId, ObjectId), Option<&'a DecodeTable>);

impl Default for ResolvedObjects<'_> {
    fn default() -> Self {
        ResolvedObjects {
            slots: [None; RESOLVED_SLOTS],
        }
    }
}

impl<'a> ResolvedObjects<'a> {
    #[inline]
    fn table(
        &mut self,
        key: (ConId, ObjectId),
        find: impl FnOnce(&(ConId, ObjectId)) -> Option<&'a DecodeTable>,
    ) -> Option<&'a DecodeTable> {
        // Fibonacci hashing: object ids are allocated in sequence, and their low bits alone
        // would put tables created a fixed number of objects apart on one slot
        let hash = (key.1.0 ^ key.0.0.rotate_left(16)).wrapping_mul(0x9e37_79b9);
        let Some(slot) = self
            .slots
            .get_mut((hash >> (u32::BITS - RESOLVED_SLOTS.ilog2())) as usize)
        else {
            return find(&key);
        };
        if let Some((known, table)) = *slot
            && known == key
        {
            return table;
        }
        let table = find(&key);
        *slot = Some((key, table));
        table
    }
}

/// How a step was decoded and applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Applied {
    /// What the caller's `apply` returned, summed (the engine: records emitted).
    pub(crate) records: u64,
    /// Whether the step was decoded on a thread of its own while it was applied.
    pub(crate) pipelined: bool,
}

/// The decode thread of a pipelined step stopped before the step's last row: only if it died,
/// which the thread scope then reports as its panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodeThreadStopped {
    pub(crate) applied: usize,
    pub(crate) total: usize,
}

impl fmt::Display for DecodeThreadStopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the decode thread stopped after {} of the step's {} rows",
            self.applied, self.total
        )
    }
}

/// The decoded forms of a chunk's rows, in their order, for `apply`.
pub(crate) type DecodedRows<'a> = &'a mut dyn Iterator<Item = Result<Decoded, DecodeError>>;

impl StepDecoder {
    /// Decodes `rows` and hands them to `apply` a chunk at a time, in redo order, each chunk
    /// with an iterator over its rows' decoded forms (as many as the chunk has rows). The rows
    /// are lent mutably: what `apply` moves out of them is not copied. A step of
    /// [`PIPELINE_MIN_ROWS`] or more is decoded on a thread of its own, at most
    /// [`PIPELINE_DEPTH`] chunks ahead of `apply`; if that thread cannot start, the step is
    /// decoded first. The first error of `apply` ends the step (the decode thread then stops
    /// at its next chunk).
    pub(crate) fn decode_and_apply<E: From<DecodeThreadStopped>>(
        &self,
        rows: StepRows,
        mut apply: impl FnMut(&mut [MinedRow], DecodedRows<'_>) -> Result<u64, E>,
    ) -> Result<Applied, E> {
        if rows.len() < PIPELINE_MIN_ROWS {
            return self.decode_first(rows, apply);
        }
        // the decode thread takes the rows and hands each chunk back with its decoded forms
        let total = rows.len();
        let handed = std::sync::Mutex::new(Some(rows));
        std::thread::scope(|scope| {
            let (done, decoded) = std::sync::mpsc::sync_channel(PIPELINE_DEPTH);
            let handed = &handed;
            let feeder = std::thread::Builder::new()
                .name("cdc-decode-feed".to_owned())
                .spawn_scoped(scope, move || {
                    let Some(rows) = take_rows(handed) else {
                        return;
                    };
                    let mut resolved = ResolvedObjects::default();
                    for chunk in rows.chunks {
                        let chunk_decoded = self.decode(&chunk, &mut resolved);
                        if done.send((chunk, chunk_decoded)).is_err() {
                            // the caller stopped applying (a stop or a closed sink)
                            break;
                        }
                    }
                });
            if let Err(error) = feeder {
                tracing::warn!(%error, "no decode thread; decoding the step first");
                let rows = take_rows(handed).unwrap_or_default();
                return self.decode_first(rows, apply);
            }
            let (mut records, mut applied) = (0, 0);
            for (mut chunk, chunk_decoded) in decoded.iter() {
                applied += chunk.len();
                records += apply(&mut chunk, &mut chunk_decoded.into_iter())?;
            }
            if applied < total {
                return Err(DecodeThreadStopped { applied, total }.into());
            }
            Ok(Applied {
                records,
                pipelined: true,
            })
        })
    }

    /// The whole step decoded, then applied a chunk at a time.
    fn decode_first<E>(
        &self,
        mut rows: StepRows,
        mut apply: impl FnMut(&mut [MinedRow], DecodedRows<'_>) -> Result<u64, E>,
    ) -> Result<Applied, E> {
        let mut decoded = self.decode_all(&rows).into_iter();
        let mut records = 0;
        for chunk in &mut rows.chunks {
            records += apply(chunk, &mut decoded)?;
        }
        Ok(Applied {
            records,
            pipelined: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the slots hold, each object gets what the maps give for it; an object is
    /// looked up once while no other takes its slot.
    #[test]
    fn resolved_objects_give_what_the_maps_give() {
        let layout = |name: &str| {
            DecodeTable::without_exclusions(Arc::new(cdc_core::TableLayout {
                table: TableId::new("APP", name),
                version: 1,
                valid_from: cdc_core::Scn(1),
                columns: vec![cdc_core::table::ColumnDef::new(
                    "ID",
                    1,
                    cdc_core::ColumnType::Number,
                )],
                key: vec!["ID".to_owned()],
                key_source: cdc_core::table::KeySource::PrimaryKey,
                supplemental: Default::default(),
                segment: Vec::new(),
            }))
        };
        let tables: Vec<DecodeTable> = (0..4).map(|i| layout(&format!("T{i}"))).collect();
        // sequential ids, ids a slot count apart, containers, and objects of no table
        let keys: Vec<(ConId, ObjectId)> = (0..300u32)
            .map(|i| (ConId(i % 3), ObjectId(72_000 + i * (1 + i % 17))))
            .collect();
        let find = |key: &(ConId, ObjectId)| {
            (!key.1.0.is_multiple_of(5)).then(|| &tables[(key.1.0 % 4) as usize])
        };
        let mut resolved = ResolvedObjects::default();
        for round in 0..3 {
            for key in keys.iter().cycle().skip(round * 7).take(2_000) {
                let got = resolved.table(*key, find);
                assert_eq!(got.map(|t| t as *const _), find(key).map(|t| t as *const _));
            }
        }
        let mut resolved = ResolvedObjects::default();
        let mut lookups = 0;
        for _ in 0..100 {
            for key in keys.iter().take(4) {
                resolved.table(*key, |k| {
                    lookups += 1;
                    find(k)
                });
            }
        }
        assert_eq!(lookups, 4);
    }
}
