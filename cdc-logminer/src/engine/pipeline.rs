//! A step's rows in chunks, and decoding them (all first, or on a thread of their own while
//! the chunks before are applied; see `CaptureEngine::apply`).

use super::*;

/// A step's rows in redo order, in chunks that double from [`FIRST_CHUNK_ROWS`] up to
/// [`PIPELINE_CHUNK_ROWS`]: a step of any size is read without moving the rows already read
/// (a growing vector copies each row about twice), a step of a few rows stays small, and the
/// chunks are what a pipelined step decodes.
#[derive(Default)]
pub(super) struct StepRows {
    pub(super) chunks: Vec<Vec<MinedRow>>,
    pub(super) len: usize,
}

impl StepRows {
    /// Inlined into the source's row callback, so that a row is moved once, straight into its
    /// chunk.
    #[inline(always)]
    pub(super) fn push(&mut self, row: MinedRow) {
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

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &MinedRow> {
        self.chunks.iter().flatten()
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut MinedRow> {
        self.chunks.iter_mut().flatten()
    }

    /// CSF continuation rows joined to the row they continue (rare: only statements longer
    /// than 4 000 bytes have them).
    pub(super) fn join_continuations(self) -> Result<StepRows, DecodeError> {
        if !self.iter().any(|row| row.csf) {
            return Ok(self);
        }
        let mut rows = StepRows::default();
        join_continuations_into(self.chunks.into_iter().flatten(), |row| rows.push(row))?;
        Ok(rows)
    }
}

/// Steps of at least this many rows are decoded on a thread of their own while they are
/// applied (see `CaptureEngine::apply`); smaller ones are decoded first.
pub(super) const PIPELINE_MIN_ROWS: usize = 2 * PIPELINE_CHUNK_ROWS;

/// Rows a chunk of a pipelined step: large enough that the hand-off is noise (a chunk is a
/// millisecond or more of decoding), and that a pool of decode threads still shares it
/// ([`crate::decode::PARALLEL_MIN_ROWS`]).
pub(super) const PIPELINE_CHUNK_ROWS: usize = 512;

/// Rows of a step's first chunk; each later chunk holds twice as many, up to
/// [`PIPELINE_CHUNK_ROWS`].
pub(super) const FIRST_CHUNK_ROWS: usize = 16;

/// Decoded chunks waiting to be applied, at most: bounds the memory the decode thread runs
/// ahead with.
pub(super) const PIPELINE_DEPTH: usize = 4;

/// Objects whose schema version a step's decoding remembers (a power of two).
pub(super) const RESOLVED_SLOTS: usize = 64;

/// The rows a step's decode thread takes (`None` once taken).
pub(super) fn take_rows(handed: &std::sync::Mutex<Option<StepRows>>) -> Option<StepRows> {
    handed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
}

/// What decoding a step needs, owned so that a thread of its own can decode it while the
/// engine applies it.
pub(super) struct StepDecoder {
    pub(super) objects: Arc<foldhash::HashMap<(ConId, ObjectId), TableId>>,
    pub(super) tables: Arc<foldhash::HashMap<TableId, DecodeTable>>,
    pub(super) options: DecodeOptions,
    pub(super) pool: Arc<DecodePool>,
}

impl StepDecoder {
    /// A whole step, decoded before any of it is applied.
    pub(super) fn decode_all(&self, rows: &StepRows) -> Vec<Result<Decoded, DecodeError>> {
        let mut decoded = Vec::with_capacity(rows.len());
        let mut resolved = ResolvedObjects::default();
        for chunk in &rows.chunks {
            decoded.extend(self.decode(chunk, &mut resolved));
        }
        decoded
    }

    /// The rows of a chunk of the step; `resolved` remembers the schema versions found for
    /// the chunks before.
    pub(super) fn decode<'s>(
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
pub(super) struct ResolvedObjects<'a> {
    pub(super) slots: [Option<ResolvedObject<'a>>; RESOLVED_SLOTS],
}

/// An object and its schema version (`None`: no captured table).
pub(super) type ResolvedObject<'a> = ((ConId, ObjectId), Option<&'a DecodeTable>);

impl Default for ResolvedObjects<'_> {
    fn default() -> Self {
        ResolvedObjects {
            slots: [None; RESOLVED_SLOTS],
        }
    }
}

impl<'a> ResolvedObjects<'a> {
    #[inline]
    pub(super) fn table(
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
                valid_from: Scn(1),
                columns: vec![cdc_core::table::ColumnDef::new(
                    "ID",
                    1,
                    cdc_core::ColumnType::Number,
                )],
                key: vec!["ID".to_owned()],
                key_source: cdc_core::table::KeySource::PrimaryKey,
                supplemental: Default::default(),
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
