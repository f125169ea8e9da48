//! The transaction journal (`cdc-journal`) in the engine: rebuilt from its store when the
//! engine is given one, written at the end of every step, ended with tombstones.
//!
//! ```text
//!  attach_journal (before the first step) ─► rebuild ─► buffer: journaled transactions back
//!      │ tombstones of chunks never acknowledged or of ended transactions ─► first step
//!  step end ─► JournalWriter::next_chunk for each transaction that wants one
//!      │ buffer.mark_journaled(last frame of the chunk), then the chunk record (its position
//!      │ already holds the transaction at that frame: it is valid once the chunk is acked)
//!  COMMIT (published or skipped), ROLLBACK, release, discard ─► tombstones, one per chunk
//! ```
//!
//! Without a journal (no Kafka for it) nothing is journaled, and a long transaction holds
//! the resume position at its first change.

use cdc_journal::{
    JournalConverter, JournalMetrics, JournalRecord, JournalSettings, JournalStore, JournalWriter,
    Rebuilt,
};
use cdc_offset::rules::JournalRule;

use super::*;

/// A journal to attach: where it is stored, how it is read back, how it is written.
#[derive(Debug)]
pub struct JournalSetup {
    pub store: Box<dyn JournalStore>,
    pub converter: JournalConverter,
    pub settings: JournalSettings,
}

/// The engine's journal stage.
pub(super) struct JournalState {
    store: Box<dyn JournalStore>,
    writer: JournalWriter,
    /// Tombstones waiting to go out before the next record (the rebuild's).
    pending: Vec<JournalRecord>,
    /// Transactions the rebuild found ended (their lowest chunks tombstoned already).
    ended: std::collections::HashSet<ConXid>,
}

impl JournalState {
    /// A COMMIT of a transaction the rebuild found ended publishes nothing (it was
    /// acknowledged before its tombstones went out); one that would publish a change means
    /// chunks of an open transaction were lost from the journal: CDC-4002.
    pub(super) fn check_ended(
        &mut self,
        key: ConXid,
        decision: SkipDecision,
        event_count: u64,
    ) -> Result<(), CdcError> {
        if !self.ended.remove(&key) {
            return Ok(());
        }
        let publishes = match decision {
            SkipDecision::SkipWhole => false,
            SkipDecision::SkipFirst(n) => n < event_count,
            SkipDecision::EmitAll => event_count > 0,
        };
        if publishes {
            return Err(CdcError::new(
                CdcCode::JournalCorruption,
                format!(
                    "the journal's lowest chunks of transaction {key} were missing at start, as \
                     for a transaction that ended, but its COMMIT was mined after the position: \
                     chunks of an open transaction were lost"
                ),
            ));
        }
        Ok(())
    }
}

/// What a restart needs of the start to read the journal back: the rule, from the stored
/// position and the first address the restart mines.
#[derive(Debug, Clone, Copy)]
pub(super) struct JournalStart {
    pub(super) rule: Option<JournalRule>,
    pub(super) mining_start: RedoAddr,
    /// The database's one enabled redo thread, which the chunks name.
    pub(super) thread: RedoThread,
}

impl JournalStart {
    pub(super) fn new(
        stored: Option<&Position>,
        cursor: &Cursor,
        thread: RedoThread,
    ) -> JournalStart {
        let mining_start = match cursor.bound {
            RedoBound::AtOrAfter(addr) | RedoBound::After(addr) => addr,
            // the start of the log holding resume_scn: before every row in it
            RedoBound::Start => RedoAddr::new(cdc_core::RsId::new(cursor.log_seq.max(1), 0, 0), 0)
                .unwrap_or(RedoAddr::MIN),
        };
        JournalStart {
            rule: stored.map(|p| JournalRule::new(p, mining_start)),
            mining_start,
            thread,
        }
    }
}

impl<S: RedoSource> CaptureEngine<S> {
    /// Gives the engine its journal: the store is read back and the transactions it holds are
    /// rebuilt into the buffer (CDC-4002 when it cannot be), before the first step. From then
    /// on long transactions are journaled to it through the record stream.
    pub fn attach_journal(&mut self, setup: JournalSetup) -> Result<Rebuilt, CdcError> {
        if self.started {
            return Err(CdcError::new(
                CdcCode::TaskThread,
                "the journal must be attached before the engine's first step",
            ));
        }
        let JournalSetup {
            mut store,
            converter,
            mut settings,
        } = setup;
        // the chunks name the thread the database mines from, not the one configured
        settings.thread = self.journal_start.thread.0;
        let generation = self.commit.position.journal_generation;
        let mut writer = JournalWriter::new(settings, generation);
        let started = std::time::Instant::now();
        let load_dir = self.settings.buffer.spill_dir.clone();
        let server = writer.settings().server.clone();
        let rebuilt = cdc_journal::rebuild(
            store.as_mut(),
            cdc_journal::RebuildFrom {
                server: &server,
                converter,
                rule: self.journal_start.rule.as_ref(),
                mining_start: self.journal_start.mining_start,
                load_dir: &load_dir,
            },
            &mut self.buffer,
            &mut writer,
        )?;
        tracing::info!(
            transactions = rebuilt.transactions.len(),
            frames = rebuilt.frames_kept,
            mined_again = rebuilt.frames_dropped,
            records = rebuilt.records_read,
            tombstones = rebuilt.tombstones.len(),
            generation,
            millis = started.elapsed().as_millis() as u64,
            "transaction journal read back"
        );
        self.journal = Some(JournalState {
            store,
            writer,
            pending: rebuilt.tombstones.clone(),
            ended: rebuilt.ended.iter().copied().collect(),
        });
        Ok(rebuilt)
    }

    /// The journal's counters; `None` without a journal.
    pub fn journal_metrics(&self) -> Option<JournalMetrics> {
        self.journal.as_ref().map(|j| j.writer.metrics())
    }

    /// The journal's store (for tests and tools that read it back).
    pub fn journal_store(&mut self) -> Option<&mut (dyn JournalStore + 'static)> {
        self.journal.as_mut().map(|j| j.store.as_mut())
    }

    /// Sends the tombstones waiting, then a chunk for every transaction that wants one.
    pub(super) fn write_journal(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        let Some(journal) = self.journal.as_mut() else {
            return Ok(0);
        };
        let pending = std::mem::take(&mut journal.pending);
        let now = self.clock.now_ms();
        // A transaction holding a row that could not be decoded is not journaled past it: the
        // row is no frame, so a restart must mine it again (its hold stays before it).
        let failures = &self.held.failures;
        let mut due: Vec<ConXid> = self
            .buffer
            .open_transactions()
            .filter(|t| !failures.holds(t.key()) && journal.writer.wants_chunk(t, now))
            .map(|t| t.key())
            .collect();
        due.sort_unstable();
        let mut records = 0;
        for tombstone in pending {
            self.emit_between(sink, RecordKind::Journal(tombstone))?;
            records += 1;
        }
        for key in due {
            while let Some((record, mark)) = self.next_chunk(key)? {
                self.buffer.mark_journaled(key, mark);
                self.emit_between(sink, RecordKind::Journal(record))?;
                records += 1;
            }
        }
        Ok(records)
    }

    fn next_chunk(
        &mut self,
        key: ConXid,
    ) -> Result<Option<(JournalRecord, cdc_buffer::JournalMark)>, BufferError> {
        match self.journal.as_mut() {
            Some(journal) => journal.writer.next_chunk(&mut self.buffer, key),
            None => Ok(None),
        }
    }

    /// A transaction ended: the tombstones of its chunks, when it was journaled.
    pub(super) fn journal_ended(
        &mut self,
        key: ConXid,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let Some(journal) = self.journal.as_mut() else {
            return Ok(0);
        };
        journal.ended.remove(&key);
        let tombstones = journal.writer.end(key);
        let count = tombstones.len() as u64;
        for tombstone in tombstones {
            self.emit_between(sink, RecordKind::Journal(tombstone))?;
        }
        Ok(count)
    }
}
