//! The start-time rebuild: the journal topic read back, the open transactions it holds put
//! back into the buffer before mining resumes, and the tombstones for what it should no longer
//! hold.
//!
//! ```text
//!  JournalStore::read_all ── key, value (converter) ──► last value per key (tombstones remove)
//!      payloads wait in an unnamed file in the spill directory; only their metadata is held
//!  per transaction, its live chunks:
//!      generation > the position's (never acknowledged) ─────────────────► tombstoned
//!      lowest chunks tombstoned already (the transaction ended) ──────────► tombstoned
//!      chunk numbers not n..=m without a gap, a chunk unreadable or damaged ► CDC-4002
//!      last journaled row before the mining start (it ended) ─────────────► tombstoned
//!      otherwise rebuilt: frames before the mining start and before the first frame of any
//!      later chunk (a later chunk written after a restart holds those rows again) into the
//!      transaction's spill file, and all frames through the heap undo row a chunk names
//!      (its rows up to that row mined again are then ignored); it holds the resume point at
//!      the mining start
//! ```
//!
//! A first start (no position) uses no journal: every live chunk is tombstoned, and the open
//! transactions are mined whole.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use cdc_buffer::{FrameRun, JournalMark, StartInfo, TransactionBuffer};
use cdc_core::{CdcCode, CdcError, ConXid, RedoAddr};
use cdc_offset::rules::JournalRule;

use crate::format::{
    ChunkMeta, FormatError, JournalConverter, JournalKey, JournalRecord, changes_mismatch,
    count_mismatch, payload_frames,
};
use crate::store::JournalStore;
use crate::writer::{ChunkId, JournalWriter};

/// What the rebuild did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rebuilt {
    /// Transactions put back into the buffer, with the frames each kept.
    pub transactions: Vec<(ConXid, u64)>,
    /// Frames used, and frames at or after the mining start (mined again).
    pub frames_kept: u64,
    pub frames_dropped: u64,
    /// Records read from the topic.
    pub records_read: u64,
    /// Tombstones to send before the first record of the task: chunks never acknowledged,
    /// and chunks of transactions that ended.
    pub tombstones: Vec<JournalRecord>,
    /// Transactions whose lowest chunks were already tombstoned: they ended (their commit
    /// was acknowledged), so a COMMIT of one that still publishes a change means chunks were
    /// lost, which the engine stops for (CDC-4002).
    pub ended: Vec<ConXid>,
}

fn corrupt(message: String) -> CdcError {
    CdcError::new(CdcCode::JournalCorruption, message)
}

/// A live chunk: its metadata and where its payload waits, or why it could not be read.
struct Loaded {
    value: Result<(ChunkMeta, u64, usize), String>,
}

/// What a rebuild reads and for whom: the restart's rule ([`JournalRule`], `None` for a first
/// start) and the first address it mines, the connector's `server`, how the journal is read.
#[derive(Debug, Clone, Copy)]
pub struct RebuildFrom<'a> {
    pub server: &'a str,
    pub converter: JournalConverter,
    pub rule: Option<&'a JournalRule>,
    pub mining_start: RedoAddr,
    /// Where the payloads wait while the topic is read (the spill directory).
    pub load_dir: &'a Path,
}

/// Reads the journal back and rebuilds the open transactions of `from.server` into `buffer`,
/// registering them with `writer`.
pub fn rebuild(
    store: &mut dyn JournalStore,
    from: RebuildFrom<'_>,
    buffer: &mut TransactionBuffer,
    writer: &mut JournalWriter,
) -> Result<Rebuilt, CdcError> {
    let RebuildFrom {
        server,
        converter,
        rule,
        mining_start,
        load_dir,
    } = from;
    let mut load = tempfile::tempfile_in(load_dir).map_err(|e| {
        CdcError::new(
            CdcCode::BufferExhausted,
            format!(
                "cannot create a file in {} to read the transaction journal back: {e}",
                load_dir.display()
            ),
        )
    })?;
    let mut load_len = 0u64;
    let mut live: BTreeMap<JournalKey, Loaded> = BTreeMap::new();
    let mut unreadable_keys: BTreeMap<Vec<u8>, (i64, String)> = BTreeMap::new();
    let mut report = Rebuilt::default();
    store.read_all(&mut |record| {
        report.records_read += 1;
        let Some(key_bytes) = record.key else {
            return Err(corrupt(format!(
                "the journal record at offset {} has no key",
                record.offset
            )));
        };
        let key = match converter.key(key_bytes) {
            Ok(key) => key,
            Err(e) => {
                // unreadable: a problem only if it is still live at the end
                match record.value {
                    Some(_) => {
                        unreadable_keys.insert(key_bytes.to_vec(), (record.offset, e.to_string()))
                    }
                    None => unreadable_keys.remove(key_bytes),
                };
                return Ok(());
            }
        };
        if key.server != server {
            return Ok(());
        }
        let Some(value) = record.value else {
            live.remove(&key);
            return Ok(());
        };
        let loaded = match converter.chunk(value) {
            Ok(chunk) => {
                load.write_all(&chunk.payload).map_err(|e| {
                    CdcError::new(
                        CdcCode::BufferExhausted,
                        format!(
                            "writing the journal's chunks to {}: {e}",
                            load_dir.display()
                        ),
                    )
                })?;
                let at = load_len;
                load_len += chunk.payload.len() as u64;
                Loaded {
                    value: Ok((chunk.meta, at, chunk.payload.len())),
                }
            }
            Err(e) => Loaded {
                value: Err(format!("at offset {}: {e}", record.offset)),
            },
        };
        live.insert(key, loaded);
        Ok(())
    })?;
    if let Some((offset, error)) = unreadable_keys.values().next() {
        return Err(corrupt(format!(
            "the key of the journal record at offset {offset} cannot be read: {error}"
        )));
    }
    let mut by_tx: BTreeMap<ConXid, Vec<(JournalKey, Loaded)>> = BTreeMap::new();
    for (key, loaded) in live {
        by_tx.entry(key.tx).or_default().push((key, loaded));
    }
    let mut payload = Vec::new();
    for (tx, chunks) in by_tx {
        let Some(rule) = rule else {
            report.tombstones.extend(
                chunks
                    .into_iter()
                    .map(|(key, _)| JournalRecord::tombstone(key)),
            );
            continue;
        };
        let (kept, newer): (Vec<_>, Vec<_>) = chunks
            .into_iter()
            .partition(|(key, _)| rule.keeps_chunk(key.generation));
        report.tombstones.extend(
            newer
                .into_iter()
                .map(|(key, _)| JournalRecord::tombstone(key)),
        );
        // by number; of two under one number (written again after a restart), the newer
        let mut numbered: BTreeMap<u32, (JournalKey, Loaded)> = BTreeMap::new();
        for (key, loaded) in kept {
            match numbered.get(&key.chunk) {
                Some((held, _)) if held.generation > key.generation => {
                    report.tombstones.push(JournalRecord::tombstone(key));
                }
                _ => {
                    if let Some((old, _)) = numbered.insert(key.chunk, (key, loaded)) {
                        report.tombstones.push(JournalRecord::tombstone(old));
                    }
                }
            }
        }
        if numbered.is_empty() {
            continue;
        }
        // Tombstones go out lowest chunk first, and only once the transaction's commit (or
        // rollback) is acknowledged: chunks missing from the bottom are the rest of an ended
        // transaction's tombstones, which this start sends again. (Should it have been
        // open after all, its COMMIT stops the task: `ended` below.)
        let lowest = numbered.keys().next().copied().unwrap_or(0);
        if lowest > 0 {
            report.ended.push(tx);
            report.tombstones.extend(
                numbered
                    .into_values()
                    .map(|(key, _)| JournalRecord::tombstone(key)),
            );
            continue;
        }
        let mut metas = Vec::with_capacity(numbered.len());
        for (expected, (number, (key, loaded))) in numbered.into_iter().enumerate() {
            if number as usize != expected {
                return Err(corrupt(format!(
                    "chunk {expected} of transaction {tx} is missing from the journal (the next \
                     one found is chunk {number})"
                )));
            }
            match loaded.value {
                Ok(value) => metas.push((key, value)),
                Err(e) => {
                    return Err(corrupt(format!(
                        "chunk {number} (generation {}) of transaction {tx} cannot be read {e}",
                        key.generation
                    )));
                }
            }
        }
        let Some((_, (last_meta, _, _))) = metas.last() else {
            continue;
        };
        if !rule.rebuilds(last_meta.last.addr) {
            // it ended before the mining start: its tombstones were not acknowledged
            report.tombstones.extend(
                metas
                    .into_iter()
                    .map(|(key, _)| JournalRecord::tombstone(key)),
            );
            continue;
        }
        // a frame is used when it is before the mining start and before every later chunk
        let mut cutoffs = vec![mining_start; metas.len()];
        let mut floor = mining_start;
        for (i, (_, (meta, _, _))) in metas.iter().enumerate().rev() {
            cutoffs[i] = floor;
            floor = floor.min(meta.first.addr);
        }
        let first = &metas[0].1.0;
        // the chunks name it from the one that completed the frames before it on (the ones
        // before name none), and all that name it name the same row (it is set while the
        // transaction is in memory, and a journaled one is spilled): the highest, should they
        // differ; none named means the journal never held that history whole
        let heap_undo = metas
            .iter()
            .filter_map(|(_, (meta, _, _))| meta.heap_undo)
            .max_by_key(|mark| mark.addr);
        let heap_undo_addr = heap_undo.map(|mark| mark.addr);
        let start = first.start_scn.map(|scn| StartInfo {
            scn,
            addr: first.start_addr,
            username: first.username.clone(),
            session: None,
            client_id: first.client_id.clone(),
            pdb: None,
        });
        buffer
            .restore_journaled(
                tx,
                start,
                heap_undo.map(|mark| (mark.scn, mark.addr)),
                rule.remined_through(heap_undo_addr),
            )
            .map_err(CdcError::from)?;
        if first.start_scn.is_none() {
            // without a START row, the user its chunks name is its first change's
            buffer.note_user(tx, first.username.clone());
        }
        let mut kept_frames = 0u64;
        for ((key, (meta, at, len)), cutoff) in metas.iter().zip(&cutoffs) {
            payload.clear();
            payload.resize(*len, 0);
            load.seek(SeekFrom::Start(*at))
                .and_then(|_| load.read_exact(&mut payload))
                .map_err(|e| {
                    CdcError::new(
                        CdcCode::BufferExhausted,
                        format!(
                            "reading the journal's chunks back from {}: {e}",
                            load_dir.display()
                        ),
                    )
                })?;
            let damaged = |why: String| {
                corrupt(format!(
                    "chunk {} (generation {}) of transaction {tx} is damaged: {why}",
                    key.chunk, key.generation
                ))
            };
            let (count, mut frames) =
                payload_frames(&payload).map_err(|e| damaged(e.to_string()))?;
            let body = frames.clone();
            let (mut events, mut undos, mut read) = (0u64, 0u64, 0u32);
            // the kept frames go to the spill file in runs, each in one write
            let mut run = FrameRun::new();
            let mut run_from = 0;
            loop {
                let at = frames.offset();
                let Some(frame) = frames.next() else {
                    break;
                };
                let (head, _) = frame.map_err(|e| damaged(FormatError::Frames(e).to_string()))?;
                read += 1;
                if head.kind == cdc_buffer::codec::KIND_CHANGE {
                    events += 1;
                } else {
                    undos += 1;
                }
                // (a later chunk holds no frame at or before the heap undo row: the rows up
                // to it mined again after a restart were ignored)
                if rule.keeps_frame(head.addr, heap_undo_addr)
                    && (head.addr < *cutoff || heap_undo_addr.is_some_and(|u| head.addr <= u))
                {
                    kept_frames += 1;
                    if run.is_empty() {
                        run_from = at;
                    }
                    run.push(head);
                } else {
                    report.frames_dropped += 1;
                    if !run.is_empty() {
                        buffer.append_journal_frames(tx, &run, body.bytes(run_from, at))?;
                        run = FrameRun::new();
                    }
                }
            }
            if !run.is_empty() {
                buffer.append_journal_frames(tx, &run, body.bytes(run_from, frames.offset()))?;
            }
            if read != count {
                return Err(damaged(count_mismatch(read, count).to_string()));
            }
            if (events, undos) != (meta.events, meta.undos) {
                return Err(damaged(changes_mismatch(events, undos, meta).to_string()));
            }
        }
        let hold = rule.rebuilt_hold();
        let bytes = buffer.transaction(tx).map_or(0, |t| t.disk_bytes());
        buffer.mark_journaled(
            tx,
            JournalMark {
                ops: kept_frames,
                scn: hold.scn,
                addr: hold.addr,
                bytes,
            },
        );
        writer.restored(
            tx,
            metas
                .iter()
                .map(|(key, _)| ChunkId {
                    number: key.chunk,
                    generation: key.generation,
                })
                .collect(),
        );
        report.frames_kept += kept_frames;
        report.transactions.push((tx, kept_frames));
    }
    writer.count_tombstones(report.tombstones.len() as u64);
    Ok(report)
}
