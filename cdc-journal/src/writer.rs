//! The writer's rules: when a transaction is journaled, how its frames are cut into chunks,
//! and which tombstones end it.
//!
//! ```text
//!  end of every mining step (and of every idle one)
//!    open transaction not journaled ── open ≥ threshold.ms or > threshold.events changes? ──┐
//!    journaled one with frames after its mark ───────────────────────────────────────────┐  │
//!                                                                                        ▼  ▼
//!  TransactionBuffer: spill_for_journal (a heap one is written out whole: its history so far)
//!    spill file  | frames journaled (mark.bytes) | frames since ──► next_chunk: ≈ chunk.max.bytes
//!                                                                  │ key (server, con, xid,
//!                                                                  │ chunk n, generation)
//!    mark_journaled(last frame of the chunk) ◄──────────────────────┘ JournalRecord ─► stream
//!  COMMIT (published or skipped), ROLLBACK, release, discard ─► end: one tombstone per chunk
//! ```
//!
//! A journaled transaction is always spilled: its file is the local copy of its journal, so a
//! chunk is read from disk without holding the transaction in memory, and an undo row after
//! the mark is a frame of the next chunk like any change.

use std::sync::Arc;

use cdc_buffer::{BufferError, JournalMark, TransactionBuffer, TxnView};
use cdc_core::ConXid;
use cdc_offset::RedoMark;

use crate::format::{Chunk, ChunkMeta, JournalKey, JournalRecord, PayloadBuilder};

/// What the writer runs with: the `cdc.txjournal.*` keys and the connector's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalSettings {
    /// `cdc.topic.prefix`: the `server` of every key.
    pub server: String,
    /// `cdc.txjournal.threshold.ms`: a transaction open this long is journaled.
    pub threshold_ms: u64,
    /// `cdc.txjournal.threshold.events`: one holding more changes than this is journaled.
    pub threshold_events: u64,
    /// `cdc.txjournal.chunk.max.bytes`: a chunk ends once its payload reaches this.
    pub chunk_max_bytes: u64,
    /// The redo thread the transactions are mined from.
    pub thread: u16,
}

impl JournalSettings {
    /// What a validated configuration sets: the `cdc.txjournal.*` keys, `cdc.topic.prefix`.
    pub fn from_config(config: &cdc_core::config::CdcConfig) -> JournalSettings {
        JournalSettings {
            server: config.topics.prefix.clone(),
            threshold_ms: u64::try_from(config.journal.threshold.as_millis()).unwrap_or(u64::MAX),
            threshold_events: config.journal.threshold_events,
            chunk_max_bytes: config.journal.chunk_max_bytes,
            thread: 1,
        }
    }

    /// The defaults of the configuration: 5 minutes, 100 000 changes, 512 KiB.
    pub fn new(server: impl Into<String>) -> JournalSettings {
        JournalSettings {
            server: server.into(),
            threshold_ms: 300_000,
            threshold_events: 100_000,
            chunk_max_bytes: 512 << 10,
            thread: 1,
        }
    }
}

/// Counters of the journal (the connector's metrics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JournalMetrics {
    /// Gauge: open transactions that are journaled.
    pub journaled_transactions: u64,
    pub chunks: u64,
    pub tombstones: u64,
}

/// One chunk written: its number and the generation it was written under (its key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChunkId {
    pub number: u32,
    pub generation: u64,
}

/// The journal's writer: which transactions are journaled and under which keys.
#[derive(Debug)]
pub struct JournalWriter {
    settings: JournalSettings,
    generation: u64,
    chunks: foldhash::HashMap<ConXid, Vec<ChunkId>>,
    metrics: JournalMetrics,
}

impl JournalWriter {
    /// The writer of the task start `generation`.
    pub fn new(settings: JournalSettings, generation: u64) -> JournalWriter {
        JournalWriter {
            settings,
            generation,
            chunks: foldhash::HashMap::default(),
            metrics: JournalMetrics::default(),
        }
    }

    pub fn settings(&self) -> &JournalSettings {
        &self.settings
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn metrics(&self) -> JournalMetrics {
        JournalMetrics {
            journaled_transactions: self.chunks.len() as u64,
            ..self.metrics
        }
    }

    /// A transaction rebuilt from the journal at start, with the chunks it kept.
    pub fn restored(&mut self, key: ConXid, chunks: Vec<ChunkId>) {
        self.chunks.insert(key, chunks);
    }

    pub fn is_journaled(&self, key: ConXid) -> bool {
        self.chunks.contains_key(&key)
    }

    /// The chunks written for a transaction so far.
    pub fn chunks_of(&self, key: ConXid) -> &[ChunkId] {
        self.chunks.get(&key).map_or(&[], Vec::as_slice)
    }

    /// Whether `txn` needs a chunk now: journaled with frames after its mark, or not journaled
    /// yet and open at least `threshold_ms` (by the engine's clock, `now_ms`) or holding more
    /// than `threshold_events` changes. A transaction that holds the resume position nowhere
    /// (no frame, no START address) is never journaled: there is nothing to move.
    pub fn wants_chunk(&self, txn: &TxnView<'_>, now_ms: u64) -> bool {
        if self.is_journaled(txn.key()) {
            let written = txn.journaled().map_or(0, |m| m.bytes);
            return txn.is_spilled() && txn.disk_bytes() > written;
        }
        if txn.first_change().is_none() {
            return false;
        }
        txn.events() > self.settings.threshold_events
            || now_ms.saturating_sub(txn.buffered_at_ms()) >= self.settings.threshold_ms
    }

    /// The next chunk of `key`'s frames after its mark, up to about `chunk_max_bytes`, with
    /// the mark that takes it in; `None` when there is nothing after the mark (or the
    /// transaction is gone). The first call for a transaction spills it. The caller marks the
    /// buffer with the mark, then sends the record: a restart from a position of a later
    /// record finds the chunk acknowledged.
    pub fn next_chunk(
        &mut self,
        buffer: &mut TransactionBuffer,
        key: ConXid,
    ) -> Result<Option<(JournalRecord, JournalMark)>, BufferError> {
        if !self.is_journaled(key) && !buffer.spill_for_journal(key)? {
            return Ok(None);
        }
        let Some(txn) = buffer.transaction(key) else {
            return Ok(None);
        };
        let mark = txn.journaled();
        let from = mark.map_or(0, |m| m.bytes);
        let first_captured = txn
            .first_change()
            .map(|(scn, addr)| RedoMark::new(addr, scn));
        let start = txn.start().cloned();
        let username = txn.username().map(str::to_owned);
        let heap_undo = txn.heap_undo().map(|(scn, addr)| RedoMark::new(addr, scn));
        let heap_undo_frames = txn.heap_undo_frames();
        let own_pin = txn.own_pin();
        let Some(mut frames) = buffer.spilled_frames(key, from)? else {
            return Ok(None);
        };
        let mut payload = PayloadBuilder::new();
        let (mut first, mut last) = (None, None);
        let (mut events, mut undos) = (0u64, 0u64);
        while (payload.len() as u64) < self.settings.chunk_max_bytes {
            let Some(head) = frames.next_raw(payload.frames_mut())? else {
                break;
            };
            payload.counted();
            let at = RedoMark::new(head.addr, head.scn);
            first.get_or_insert(at);
            last = Some(at);
            if head.kind == cdc_buffer::codec::KIND_CHANGE {
                events += 1;
            } else {
                undos += 1;
            }
        }
        let (Some(first), Some(last)) = (first, last) else {
            return Ok(None);
        };
        let count = u64::from(payload.count());
        let bytes = frames.offset();
        let ops = mark.map_or(0, |m| m.ops) + count;
        // Until the journal holds every frame before the heap undo row, a restart could not
        // rebuild the history through it: the chunk does not name it, and the transaction
        // keeps holding the resume point at its own first row (a rebuild from such chunks
        // keeps no frame and mines it whole). From the chunk that completes them on, the
        // chunks name it and the hold moves to their last frame.
        let holds_history = heap_undo.is_none() || ops >= heap_undo_frames;
        let hold = match own_pin {
            Some((scn, addr)) if !holds_history => RedoMark::new(addr, scn),
            _ => last,
        };
        let chunks = self.chunks.entry(key).or_default();
        let number = chunks.last().map_or(0, |c| c.number + 1);
        chunks.push(ChunkId {
            number,
            generation: self.generation,
        });
        self.metrics.chunks += 1;
        let record = JournalRecord {
            key: JournalKey {
                server: self.settings.server.clone(),
                tx: key,
                chunk: number,
                generation: self.generation,
            },
            chunk: Some(Arc::new(Chunk {
                meta: ChunkMeta {
                    first,
                    last,
                    first_captured,
                    events,
                    undos,
                    start_scn: start.as_ref().map(|s| s.scn),
                    start_addr: start.as_ref().and_then(|s| s.addr),
                    thread: self.settings.thread,
                    username,
                    client_id: start.as_ref().and_then(|s| s.client_id.clone()),
                    heap_undo: heap_undo.filter(|_| holds_history),
                },
                payload: payload.finish(),
            })),
        };
        let mark = JournalMark {
            ops,
            scn: hold.scn,
            addr: hold.addr,
            bytes,
        };
        Ok(Some((record, mark)))
    }

    /// The transaction ended (committed, rolled back, released or discarded): one tombstone
    /// per chunk, under each chunk's own generation. Nothing for one never journaled.
    pub fn end(&mut self, key: ConXid) -> Vec<JournalRecord> {
        let Some(chunks) = self.chunks.remove(&key) else {
            return Vec::new();
        };
        self.metrics.tombstones += chunks.len() as u64;
        chunks
            .into_iter()
            .map(|c| {
                JournalRecord::tombstone(JournalKey {
                    server: self.settings.server.clone(),
                    tx: key,
                    chunk: c.number,
                    generation: c.generation,
                })
            })
            .collect()
    }

    /// Counts tombstones sent for chunks the writer never held (at start).
    pub fn count_tombstones(&mut self, n: u64) {
        self.metrics.tombstones += n;
    }
}
