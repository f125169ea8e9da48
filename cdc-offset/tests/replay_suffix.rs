//! ReplaySuffix: a restart from any acknowledged record's position emits exactly the records
//! after it: nothing repeated, nothing skipped (invariant 1 in `docs/decisions.md`), with the
//! cursor a redo byte address (invariant 2).
//!
//! The test generates redo histories the way Oracle writes them and runs a small reference
//! engine over them that uses only this crate's rules to compute positions and to restart:
//!
//! ```text
//!  script (proptest) ─► History: rows in redo order, logs, heartbeat/journal points, truth
//!                                    │
//!  run(start position) ─► records [data | heartbeat | journal chunk | tombstone], each with
//!     │                   the Position computed by rules::record_resume / resume_candidate
//!     │ ack record a: encode its position to JSON, decode it, keep acknowledged chunks
//!     ▼
//!  run(decoded position, journal) ─► must equal records after a (data records compared)
//! ```
//!
//! Histories have interleaved transactions in one or two containers (the same XID live in
//! both), private strands (a transaction's rows reach the log late, carrying older SCNs, until
//! its commit, a full strand or a log switch binds them), COMMIT rows whose SCNs tie or run
//! against redo order, rows sharing an RS_ID with increasing SSN, rollbacks, savepoint undo
//! rows, transactions with 0..N captured changes (a commit that touches no captured table
//! publishes nothing), journaled transactions, heartbeats between transactions, and first
//! starts with transactions open across the start.
//!
//! Checked for every history: the first run publishes exactly the committed changes (the
//! truth the generator knows); a restart from (a sample of) every record, and from a chain of
//! up to three crashes, publishes exactly the rest; the same with the operator's "mine again
//! from resume_scn" edit; "deliver again from the beginning" publishes everything again; "skip
//! forward" to an SCN where nothing was open publishes exactly the later commits; positions
//! are monotone in (last commit address, event_index); the resume point never passes the first
//! change of a transaction that is open or partly acknowledged (or, once journaled, its last
//! journaled change), and its SCN chooses a log that starts at or before its address.
//!
//! Cases: `CDC_PROPTEST_CASES` (default 100 000, about a minute on the 2-core machine). Failing seeds are kept by proptest in
//! `proptest-regressions/replay_suffix.txt` and replayed first.

// Test code: a failed unwrap or assertion is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};

use cdc_core::{ConId, ConXid, RedoAddr, RedoThread, RsId, Scn, Xid};
use cdc_offset::edit;
use cdc_offset::rules::{RecordPlace, record_resume, resume_candidate};
use cdc_offset::{
    DbIdentity, FirstStart, JournalRule, LastCommit, OpenTransaction, Position, RedoMark,
    ResumePoint, SkipRule,
};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;

const IDENTITY: DbIdentity = DbIdentity {
    dbid: 3_141_592_653,
    resetlogs_scn: Scn(1),
};
const FIRST_SCN: u64 = 100;

// ---------------------------------------------------------------------------------------------
// The redo history

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Start,
    /// A change to a captured table; `row` stands for its ROW_ID.
    Change {
        id: u32,
        row: u8,
    },
    /// A ROLLBACK=1 row: reverses the latest earlier live change of its transaction on `row`.
    Undo {
        row: u8,
    },
    Commit,
    Rollback,
}

#[derive(Debug, Clone, Copy)]
struct Row {
    mark: RedoMark,
    tx: ConXid,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Heartbeat,
    Journal(ConXid),
}

/// A published change, as the consumer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Delivered {
    tx: ConXid,
    commit: RedoAddr,
    commit_scn: Scn,
    index: u64,
    change: u32,
}

#[derive(Debug)]
struct History {
    rows: Vec<Row>,
    /// Engine actions after a row (by row index): heartbeats and journal flushes.
    markers: BTreeMap<usize, Vec<Marker>>,
    /// Each log's first SCN and first row.
    logs: Vec<(Scn, usize)>,
    /// The first run's position: a first start, or resume at the beginning.
    start: Position,
    first_start_floor: Option<Scn>,
    /// What must be published, in order.
    truth: Vec<Delivered>,
    /// The first row of each transaction in redo order, and its COMMIT or ROLLBACK row.
    first_row: BTreeMap<ConXid, usize>,
    end_row: BTreeMap<ConXid, usize>,
    /// SCNs at which no transaction was open (strictly above every earlier SCN).
    quiet: Vec<Scn>,
}

impl History {
    /// The first row at or after `resume`: by address, or from the start of the log holding
    /// `resume.scn`.
    fn mining_start(&self, resume: &ResumePoint) -> usize {
        match resume.addr {
            Some(addr) => self.rows.partition_point(|row| row.mark.addr < addr),
            None => self.log_holding(resume.scn).1,
        }
    }

    fn log_holding(&self, scn: Scn) -> (Scn, usize) {
        self.logs
            .iter()
            .rev()
            .find(|(first, _)| *first <= scn)
            .copied()
            .unwrap_or(self.logs[0])
    }

    /// Whether `tx` has rows at or before `row` and ends after it.
    fn open_at(&self, tx: ConXid, row: usize) -> bool {
        self.first_row[&tx] <= row && self.end_row.get(&tx).is_none_or(|end| *end > row)
    }

    fn row_index(&self, addr: RedoAddr) -> usize {
        let index = self.rows.partition_point(|row| row.mark.addr < addr);
        assert_eq!(
            self.rows[index].mark.addr, addr,
            "{addr} is not a row's address"
        );
        index
    }
}

// ---------------------------------------------------------------------------------------------
// The generator

#[derive(Debug, Clone)]
enum Op {
    Begin { pdb: bool, slot: u8, private: bool },
    Change { tx: Index, captured: bool, row: u8 },
    SavepointUndo { tx: Index, count: u8 },
    Commit { tx: Index, back: u8 },
    Rollback { tx: Index },
    StrandFull { tx: Index },
    LogSwitch,
    Heartbeat,
    Journal { tx: Index },
    SameRecord,
}

#[derive(Debug, Clone)]
struct Script {
    two_containers: bool,
    /// (SCN advance before the op, the op)
    ops: Vec<(u8, Op)>,
    /// Where the three reads of a first start happen, if the first run is one.
    first_start: Option<(Index, Index, Index)>,
    start_with_addr: bool,
    commit_rest: bool,
    /// For each crash of the chained restart: the record acknowledged last, or none.
    crashes: Vec<Option<Index>>,
    extra_ack: Index,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (any::<bool>(), 0u8..4, any::<bool>())
            .prop_map(|(pdb, slot, private)| Op::Begin { pdb, slot, private }),
        10 => (any::<Index>(), prop::bool::weighted(0.8), 0u8..4)
            .prop_map(|(tx, captured, row)| Op::Change { tx, captured, row }),
        2 => (any::<Index>(), 1u8..4).prop_map(|(tx, count)| Op::SavepointUndo { tx, count }),
        5 => (any::<Index>(), prop_oneof![3 => Just(0u8), 1 => 1u8..4])
            .prop_map(|(tx, back)| Op::Commit { tx, back }),
        1 => any::<Index>().prop_map(|tx| Op::Rollback { tx }),
        1 => any::<Index>().prop_map(|tx| Op::StrandFull { tx }),
        1 => Just(Op::LogSwitch),
        2 => Just(Op::Heartbeat),
        1 => any::<Index>().prop_map(|tx| Op::Journal { tx }),
        2 => Just(Op::SameRecord),
    ]
}

fn script() -> impl Strategy<Value = Script> {
    (
        any::<bool>(),
        prop::collection::vec((0u8..3, op()), 0..120),
        prop::option::weighted(0.35, any::<(Index, Index, Index)>()),
        any::<bool>(),
        prop::bool::weighted(0.7),
        prop::collection::vec(prop::option::weighted(0.85, any::<Index>()), 0..4),
        any::<Index>(),
    )
        .prop_map(
            |(
                two_containers,
                ops,
                first_start,
                start_with_addr,
                commit_rest,
                crashes,
                extra_ack,
            )| {
                Script {
                    two_containers,
                    ops,
                    first_start,
                    start_with_addr,
                    commit_rest,
                    crashes,
                    extra_ack,
                }
            },
        )
}

struct OpenTx {
    key: ConXid,
    private: bool,
    /// Rows generated but not yet in the log (private strand).
    strand: Vec<(Scn, Kind)>,
    /// Captured changes not undone: (id, row).
    live: Vec<(u32, u8)>,
    max_scn: Scn,
    start_scn: Scn,
}

#[derive(Default)]
struct Builder {
    two_containers: bool,
    scn: u64,
    seq: u32,
    block: u32,
    same_record: bool,
    rows: Vec<Row>,
    markers: BTreeMap<usize, Vec<Marker>>,
    logs: Vec<(Scn, usize)>,
    open: Vec<OpenTx>,
    sqn: BTreeMap<(u32, u16), u32>,
    next_change: u32,
    /// Commit SCNs never go below this: the start SCN once read, and every quiet point, so
    /// that what happened before a read has lower SCNs than what happened after it.
    barrier: u64,
    truth: Vec<Delivered>,
    first_row: BTreeMap<ConXid, usize>,
    end_row: BTreeMap<ConXid, usize>,
    quiet: Vec<Scn>,
}

impl Builder {
    fn append(&mut self, scn: Scn, tx: ConXid, kind: Kind) {
        let addr = match self.rows.last() {
            Some(last) if self.same_record => {
                RedoAddr::new(last.mark.addr.rs_id(), last.mark.addr.ssn() + 1)
            }
            _ => {
                self.block += 1;
                RedoAddr::new(RsId::new(self.seq, self.block, 0x10), 0)
            }
        }
        .expect("generated addresses are never all-zero");
        self.same_record = false;
        self.first_row.entry(tx).or_insert(self.rows.len());
        if matches!(kind, Kind::Commit | Kind::Rollback) {
            self.end_row.insert(tx, self.rows.len());
        }
        self.rows.push(Row {
            mark: RedoMark::new(addr, scn),
            tx,
            kind,
        });
    }

    /// A row generated now by transaction `t`: into its strand, or straight into the log.
    fn generate(&mut self, t: usize, kind: Kind) {
        let scn = Scn(self.scn);
        let tx = &mut self.open[t];
        tx.max_scn = tx.max_scn.max(scn);
        if tx.private {
            tx.strand.push((scn, kind));
        } else {
            let key = tx.key;
            self.append(scn, key, kind);
        }
    }

    fn flush(&mut self, t: usize) {
        let key = self.open[t].key;
        for (scn, kind) in std::mem::take(&mut self.open[t].strand) {
            self.append(scn, key, kind);
        }
    }

    fn begin(&mut self, pdb: bool, slot: u8, private: bool) {
        let con = match (self.two_containers, pdb) {
            (false, _) => 0,
            (true, false) => 3,
            (true, true) => 4,
        };
        // Per-container sequences: the same XID is live in both containers now and then.
        let slot = u16::from(slot);
        let sqn = self.sqn.entry((con, slot)).or_insert(0);
        *sqn += 1;
        let key = ConXid::new(ConId(con), Xid::new(7, slot, *sqn));
        self.open.push(OpenTx {
            key,
            private,
            strand: Vec::new(),
            live: Vec::new(),
            max_scn: Scn(self.scn),
            start_scn: Scn(self.scn),
        });
        self.generate(self.open.len() - 1, Kind::Start);
    }

    fn commit(&mut self, t: usize, back: u8) {
        self.flush(t);
        let tx = self.open.remove(t);
        let scn = self
            .scn
            .saturating_sub(u64::from(back))
            .max(tx.max_scn.0)
            .max(self.barrier);
        self.append(Scn(scn), tx.key, Kind::Commit);
        let commit = self.rows[self.rows.len() - 1].mark.addr;
        for (index, (change, _)) in tx.live.iter().enumerate() {
            self.truth.push(Delivered {
                tx: tx.key,
                commit,
                commit_scn: Scn(scn),
                index: index as u64,
                change: *change,
            });
        }
        self.note_quiet();
    }

    fn rollback(&mut self, t: usize) {
        while let Some((_, row)) = self.open[t].live.pop() {
            self.generate(t, Kind::Undo { row });
        }
        self.flush(t);
        let tx = self.open.remove(t);
        self.append(Scn(self.scn), tx.key, Kind::Rollback);
        self.note_quiet();
    }

    fn note_quiet(&mut self) {
        if self.open.is_empty() {
            self.scn += 1;
            self.barrier = self.barrier.max(self.scn);
            self.quiet.push(Scn(self.scn));
        }
    }

    fn marker(&mut self, marker: Marker) {
        if let Some(last) = self.rows.len().checked_sub(1) {
            self.markers.entry(last).or_default().push(marker);
        }
    }

    fn apply(&mut self, op: &Op) {
        let pick =
            |index: &Index, open: &Vec<OpenTx>| (!open.is_empty()).then(|| index.index(open.len()));
        match *op {
            Op::Begin { pdb, slot, private } => self.begin(pdb, slot, private),
            Op::Change {
                ref tx,
                captured,
                row,
            } => match pick(tx, &self.open) {
                None => self.begin(row % 2 == 0, row, captured),
                Some(t) if captured => {
                    self.next_change += 1;
                    let id = self.next_change;
                    self.open[t].live.push((id, row));
                    self.generate(t, Kind::Change { id, row });
                }
                // A change to a table that is not captured: LogMiner does not return it.
                Some(_) => {}
            },
            Op::SavepointUndo { ref tx, count } => {
                if let Some(t) = pick(tx, &self.open) {
                    // Undo rows come newest first; each names the row its change touched, and
                    // the newest live change is also the latest one on its row.
                    for _ in 0..count {
                        let Some((_, row)) = self.open[t].live.pop() else {
                            break;
                        };
                        self.generate(t, Kind::Undo { row });
                    }
                }
            }
            Op::Commit { ref tx, back } => {
                if let Some(t) = pick(tx, &self.open) {
                    self.commit(t, back);
                }
            }
            Op::Rollback { ref tx } => {
                if let Some(t) = pick(tx, &self.open) {
                    self.rollback(t);
                }
            }
            Op::StrandFull { ref tx } => {
                if let Some(t) = pick(tx, &self.open) {
                    self.flush(t);
                }
            }
            Op::LogSwitch => {
                // The switch binds every private strand into the old log, then a new log
                // begins at a higher SCN.
                for t in 0..self.open.len() {
                    self.flush(t);
                }
                self.scn += 1;
                self.seq += 1;
                self.block = 0;
                self.logs.push((Scn(self.scn), self.rows.len()));
            }
            Op::Heartbeat => self.marker(Marker::Heartbeat),
            Op::Journal { ref tx } => {
                if let Some(t) = pick(tx, &self.open) {
                    let key = self.open[t].key;
                    self.marker(Marker::Journal(key));
                }
            }
            Op::SameRecord => self.same_record = true,
        }
    }
}

fn build(script: &Script) -> History {
    let mut b = Builder {
        two_containers: script.two_containers,
        scn: FIRST_SCN,
        seq: 1,
        logs: vec![(Scn(FIRST_SCN), 0)],
        ..Builder::default()
    };
    let reads = script.first_start.as_ref().map(|(q, list, s)| {
        let n = script.ops.len() + 1;
        let mut at = [q.index(n), list.index(n), s.index(n)];
        at.sort_unstable();
        at
    });
    let mut q = Scn(0);
    let mut listed: Vec<(ConXid, Scn)> = Vec::new();
    let mut floor = None;
    for i in 0..=script.ops.len() {
        if let Some([at_q, at_list, at_s]) = reads {
            // Reading the current SCN moves it on: what happened before has a lower SCN.
            if i == at_q {
                b.scn += 1;
                q = Scn(b.scn);
            }
            if i == at_list {
                listed = b.open.iter().map(|tx| (tx.key, tx.start_scn)).collect();
            }
            if i == at_s {
                b.scn += 1;
                floor = Some(Scn(b.scn));
                b.barrier = b.barrier.max(b.scn);
            }
        }
        if let Some((advance, op)) = script.ops.get(i) {
            b.scn += u64::from(*advance);
            b.apply(op);
        }
    }
    if script.commit_rest {
        while !b.open.is_empty() {
            b.commit(0, 0);
        }
    }

    let (start, truth) = match floor {
        Some(floor) => {
            let position = Position::first_start(IDENTITY, 0, q, &listed, floor);
            // D9 (docs/decisions.md): the commits from the start SCN on, every transaction
            // open at it whole.
            let truth = b
                .truth
                .iter()
                .filter(|d| d.commit_scn >= floor)
                .copied()
                .collect();
            (position, truth)
        }
        None => {
            let resume = match b.rows.first() {
                Some(row) if script.start_with_addr => ResumePoint::at(row.mark),
                _ => ResumePoint::from_scn(Scn(FIRST_SCN)),
            };
            (Position::new(resume, IDENTITY, 0), b.truth)
        }
    };
    History {
        rows: b.rows,
        markers: b.markers,
        logs: b.logs,
        start,
        first_start_floor: floor,
        truth,
        first_row: b.first_row,
        end_row: b.end_row,
        quiet: b.quiet,
    }
}

// ---------------------------------------------------------------------------------------------
// The reference engine

#[derive(Debug, Clone, Copy)]
struct Frame {
    mark: RedoMark,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Payload {
    Data(Delivered),
    Heartbeat,
    Chunk {
        tx: ConXid,
        frames: Vec<Frame>,
        heap_undo: Option<RedoMark>,
    },
    Tombstone {
        tx: ConXid,
    },
}

#[derive(Debug, Clone)]
struct Record {
    payload: Payload,
    position: Position,
    /// The task start (journal generation) that emitted it.
    generation: u64,
    /// The row just applied when it was emitted.
    row: usize,
}

/// The journal topic as a restart reads it: the latest acknowledged chunk of each transaction
/// not tombstoned. (Chunks hold the transaction's whole history so far; the real journal
/// writes deltas, which the generation rule keeps apart.)
#[derive(Debug, Clone, Default)]
struct Journal {
    /// Per transaction: the generation, the frames and the heap undo row of its last chunk.
    chunks: BTreeMap<ConXid, (u64, Vec<Frame>, Option<RedoMark>)>,
}

impl Journal {
    fn acknowledge(&mut self, records: &[Record]) {
        for record in records {
            match &record.payload {
                Payload::Chunk {
                    tx,
                    frames,
                    heap_undo,
                } => {
                    self.chunks
                        .insert(*tx, (record.generation, frames.clone(), *heap_undo));
                }
                Payload::Tombstone { tx } => {
                    self.chunks.remove(tx);
                }
                Payload::Data(_) | Payload::Heartbeat => {}
            }
        }
    }
}

struct Tx {
    hold: OpenTransaction,
    start_scn: Option<Scn>,
    frames: Vec<Frame>,
    changes: Vec<(u32, u8)>,
    /// Held in memory, as the buffer holds a transaction until it spills or is journaled: an
    /// undo row removes the change it takes back, frame and all, and leaves no frame itself.
    /// Otherwise (spilled) every row is a frame. Half the transactions start in memory.
    in_memory: bool,
    /// The last undo row that removed a change in memory.
    heap_undo: Option<RedoMark>,
    /// Of a rebuilt transaction: rows mined again up to here are in its frames already.
    remined_through: Option<RedoAddr>,
}

impl Tx {
    fn new(first: RedoMark) -> Tx {
        Tx {
            hold: OpenTransaction::new(first),
            start_scn: None,
            frames: Vec::new(),
            changes: Vec::new(),
            in_memory: first.scn.get().is_multiple_of(2),
            heap_undo: None,
            remined_through: None,
        }
    }

    fn apply(&mut self, frame: Frame) {
        match frame.kind {
            Kind::Start => self.start_scn = Some(frame.mark.scn),
            Kind::Change { id, row } => self.changes.push((id, row)),
            Kind::Undo { row } => {
                // The latest earlier change on the same row; an unmatched undo changes nothing.
                let at = self.changes.iter().rposition(|(_, r)| *r == row);
                if let Some(at) = at {
                    let (id, _) = self.changes.remove(at);
                    if self.in_memory {
                        self.frames
                            .retain(|f| !matches!(f.kind, Kind::Change { id: i, .. } if i == id));
                        self.heap_undo = Some(frame.mark);
                    }
                }
                if self.in_memory {
                    return;
                }
            }
            Kind::Commit | Kind::Rollback => return,
        }
        self.frames.push(frame);
    }
}

struct Run {
    records: Vec<Record>,
    start_row: usize,
    /// Transactions rebuilt from the journal at the start.
    loaded: BTreeSet<ConXid>,
}

struct Engine<'h> {
    history: &'h History,
    position: Position,
    skip: SkipRule,
    floor: Option<FirstStart>,
    generation: u64,
    buffer: BTreeMap<ConXid, Tx>,
    mined_to: Option<RedoMark>,
    records: Vec<Record>,
}

fn run(history: &History, from: &Position, journal: &Journal) -> Run {
    let generation = from.journal_generation + 1;
    let mut position = from.clone();
    position.journal_generation = generation;
    let mut engine = Engine {
        history,
        skip: from.skip_rule(),
        floor: from.first_start.clone(),
        position,
        generation,
        buffer: BTreeMap::new(),
        mined_to: None,
        records: Vec::new(),
    };
    let start_row = history.mining_start(&from.resume);

    // Journaled transactions, by the crate's journal rule: frames before the mining start come
    // from the journal, the rest is mined again; stale chunks are left alone.
    let mut loaded = BTreeSet::new();
    if let Some(start) = history.rows.get(start_row) {
        let rule = JournalRule::new(from, start.mark.addr);
        for (tx, (generation, frames, heap_undo)) in &journal.chunks {
            let Some(last) = frames.last() else { continue };
            if !rule.keeps_chunk(*generation) || !rule.rebuilds(last.mark.addr) {
                continue;
            }
            let heap_undo_addr = heap_undo.map(|mark| mark.addr);
            let kept: Vec<Frame> = frames
                .iter()
                .filter(|frame| rule.keeps_frame(frame.mark.addr, heap_undo_addr))
                .copied()
                .collect();
            let Some(first) = kept.first() else { continue };
            let mut rebuilt = Tx::new(first.mark);
            // rebuilt into its spill file: its frames are what the journal held
            rebuilt.in_memory = false;
            for frame in &kept {
                rebuilt.apply(*frame);
            }
            rebuilt.heap_undo = *heap_undo;
            rebuilt.remined_through = rule.remined_through(heap_undo_addr);
            rebuilt.hold.last_journaled = Some(rule.rebuilt_hold());
            engine.buffer.insert(*tx, rebuilt);
            loaded.insert(*tx);
        }
    }

    for index in start_row..history.rows.len() {
        engine.apply(index);
        for marker in history.markers.get(&index).into_iter().flatten() {
            engine.marker(index, *marker);
        }
    }
    Run {
        records: engine.records,
        start_row,
        loaded,
    }
}

impl Engine<'_> {
    fn holds(&self) -> Vec<RedoMark> {
        self.buffer.values().map(|tx| tx.hold.hold()).collect()
    }

    fn emit(&mut self, payload: Payload, row: usize) {
        self.records.push(Record {
            payload,
            position: self.position.clone(),
            generation: self.generation,
            row,
        });
    }

    /// A record between transactions: the last emitted commit, the latest resume candidate.
    fn emit_between(&mut self, payload: Payload, row: usize) {
        let resume = resume_candidate(self.mined_to.expect("a row was applied"), self.holds());
        self.position = self.position.at_heartbeat(resume);
        self.emit(payload, row);
    }

    fn apply(&mut self, index: usize) {
        let row = self.history.rows[index];
        self.mined_to = Some(row.mark);
        if !matches!(row.kind, Kind::Commit | Kind::Rollback)
            && let Some(tx) = self.buffer.get(&row.tx)
            && tx
                .remined_through
                .is_some_and(|through| row.mark.addr <= through)
        {
            return;
        }
        if let Some(floor) = &self.floor {
            let start = match row.kind {
                Kind::Start => Some(row.mark.scn),
                _ => self.buffer.get(&row.tx).and_then(|tx| tx.start_scn),
            };
            if !floor.keeps_row(row.tx, row.mark.scn, start) {
                return;
            }
        }
        let frame = Frame {
            mark: row.mark,
            kind: row.kind,
        };
        match row.kind {
            Kind::Start | Kind::Change { .. } => self
                .buffer
                .entry(row.tx)
                .or_insert_with(|| Tx::new(row.mark))
                .apply(frame),
            Kind::Undo { .. } => {
                if let Some(tx) = self.buffer.get_mut(&row.tx) {
                    tx.apply(frame);
                }
            }
            Kind::Commit => self.commit(index, row),
            Kind::Rollback => {
                if let Some(tx) = self.buffer.remove(&row.tx)
                    && tx.hold.last_journaled.is_some()
                {
                    self.emit_between(Payload::Tombstone { tx: row.tx }, index);
                }
            }
        }
    }

    fn commit(&mut self, index: usize, row: Row) {
        let Some(tx) = self.buffer.remove(&row.tx) else {
            return;
        };
        let decision = self.skip.decide(row.mark.addr, row.mark.scn);
        let holds = self.holds();
        let count = tx.changes.len() as u64;
        for (i, (change, _)) in tx.changes.iter().enumerate() {
            let i = i as u64;
            if !decision.emits(i) {
                continue;
            }
            let resume = record_resume(
                row.mark,
                holds.iter().copied(),
                tx.hold.hold(),
                RecordPlace::of(i, count),
            );
            let commit = LastCommit {
                scn: row.mark.scn,
                xid: row.tx,
                thread: RedoThread(1),
                addr: row.mark.addr,
                event_index: i + 1,
            };
            self.position = self.position.at_record(resume, commit);
            let delivered = Delivered {
                tx: row.tx,
                commit: row.mark.addr,
                commit_scn: row.mark.scn,
                index: i,
                change: *change,
            };
            self.emit(Payload::Data(delivered), index);
        }
        if tx.hold.last_journaled.is_some() {
            self.emit_between(Payload::Tombstone { tx: row.tx }, index);
        }
    }

    fn marker(&mut self, index: usize, marker: Marker) {
        match marker {
            Marker::Heartbeat => self.emit_between(Payload::Heartbeat, index),
            Marker::Journal(key) => {
                let Some(tx) = self.buffer.get_mut(&key) else {
                    return;
                };
                let Some(last) = tx.frames.last() else {
                    return;
                };
                tx.hold.last_journaled = Some(last.mark);
                // a journaled transaction is spilled
                tx.in_memory = false;
                let frames = tx.frames.clone();
                let heap_undo = tx.heap_undo;
                self.emit_between(
                    Payload::Chunk {
                        tx: key,
                        frames,
                        heap_undo,
                    },
                    index,
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The checks

fn published(records: &[Record]) -> Vec<Delivered> {
    records
        .iter()
        .filter_map(|record| match record.payload {
            Payload::Data(delivered) => Some(delivered),
            _ => None,
        })
        .collect()
}

/// What a restart reads back: the acknowledged record's position through its JSON text.
fn stored(position: &Position) -> Position {
    let text = position.to_json();
    let decoded = Position::from_json(&text).expect("an encoded position decodes");
    assert_eq!(&decoded, position, "round trip of {text}");
    decoded
}

fn check_stream(history: &History, from: &Position, run: &Run) {
    let key = |p: &Position| p.last_commit.map(|c| (c.addr, c.event_index));
    let mut previous = key(from);
    // The bound a journaled transaction's resume point may go to: its last journaled row.
    let mut journaled: BTreeMap<ConXid, RedoAddr> = BTreeMap::new();
    let start_addr = history.rows.get(run.start_row).map(|row| row.mark.addr);
    let mut first_seen: BTreeMap<ConXid, usize> = BTreeMap::new();
    for (index, row) in history.rows.iter().enumerate().skip(run.start_row) {
        first_seen.entry(row.tx).or_insert(index);
    }
    if let Some(start) = start_addr {
        for tx in &run.loaded {
            journaled.insert(*tx, start);
        }
    }
    for (at, record) in run.records.iter().enumerate() {
        let position = &record.position;
        assert_eq!(position.identity, IDENTITY);
        assert_eq!(position.journal_generation, record.generation);
        // monotone in (last commit address, event_index)
        let now = key(position);
        assert!(
            now >= previous,
            "position went back at record {at}: {previous:?} -> {now:?}"
        );
        previous = now;
        if let Payload::Chunk { tx, frames, .. } = &record.payload {
            journaled.insert(*tx, frames[frames.len() - 1].mark.addr);
        }
        let Some(resume) = position.resume.addr else {
            continue;
        };
        // The SCN chooses a log that starts at or before the address.
        let resume_row = history.row_index(resume);
        let (_, log_start) = history.log_holding(position.resume.scn);
        assert!(
            log_start <= resume_row,
            "resume_scn {} selects a log after {resume}",
            position.resume.scn
        );
        // Tight: the resume point is the row just applied, or held back by a transaction
        // open at this point or by the record's own one: at its first row mined, or once
        // journaled at its journal mark (the mining start when rebuilt from the journal). It
        // never lags for no reason.
        let own = match record.payload {
            Payload::Data(delivered) => Some(delivered.tx),
            _ => None,
        };
        let tx = history.rows[resume_row].tx;
        let held_by = |tx: ConXid| {
            (history.open_at(tx, record.row) || Some(tx) == own)
                && match journaled.get(&tx) {
                    Some(bound) => *bound == resume,
                    None => first_seen.get(&tx) == Some(&resume_row),
                }
        };
        assert!(
            resume_row == record.row || Some(resume) == start_addr || held_by(tx),
            "record {at} (row {}) resumes at row {resume_row} for no reason",
            record.row
        );
        // Never past the first change of a transaction that is open (started in the redo
        // before this point) and still has records to publish after this one.
        let later: BTreeSet<ConXid> = published(&run.records[at + 1..])
            .iter()
            .map(|d| d.tx)
            .collect();
        for tx in later {
            let first = history.first_row[&tx];
            if first > record.row {
                continue;
            }
            let bound = journaled
                .get(&tx)
                .copied()
                .unwrap_or(history.rows[first].mark.addr);
            assert!(
                resume <= bound,
                "record {at} resumes at {resume}, past {tx} held at {bound}"
            );
        }
    }
}

/// Record indexes to acknowledge: all of them for short runs, an even sample plus one chosen
/// by the script for long ones (keeps 100 000 cases within the time budget).
fn ack_points(len: usize, extra: &Index) -> Vec<usize> {
    const ALL_UP_TO: usize = 24;
    if len <= ALL_UP_TO {
        return (0..len).collect();
    }
    let mut points: BTreeSet<usize> = (0..ALL_UP_TO)
        .map(|i| i * (len - 1) / (ALL_UP_TO - 1))
        .collect();
    points.insert(extra.index(len));
    points.into_iter().collect()
}

fn check(script: &Script) {
    let history = build(script);
    let first = run(&history, &history.start, &Journal::default());
    assert_eq!(
        published(&first.records),
        history.truth,
        "the first run publishes every committed change, in commit order"
    );
    check_stream(&history, &history.start, &first);

    for a in ack_points(first.records.len(), &script.extra_ack) {
        let mut journal = Journal::default();
        journal.acknowledge(&first.records[..=a]);
        let from = stored(&first.records[a].position);
        let suffix = published(&first.records[a + 1..]);

        let replay = run(&history, &from, &journal);
        assert_eq!(
            published(&replay.records),
            suffix,
            "restart after record {a}"
        );
        check_stream(&history, &from, &replay);

        // "Mine again" from the same resume_scn: the address removed, the log read from its
        // first SCN. The skip rule still makes it exactly the suffix.
        let again = edit::mine_again_from(&from, from.resume.scn).expect("same SCN");
        let replay = run(&history, &stored(&again), &journal);
        assert_eq!(
            published(&replay.records),
            suffix,
            "mine again after record {a}"
        );

        if history.first_start_floor.is_none() {
            // "Deliver again" from the beginning: everything, once more.
            let again = edit::deliver_again(
                &edit::mine_again_from(&from, Scn(FIRST_SCN)).expect("earlier SCN"),
            );
            let replay = run(&history, &stored(&again), &journal);
            assert_eq!(
                published(&replay.records),
                history.truth,
                "deliver again after {a}"
            );
        }

        // "Skip forward" to an SCN where nothing was open: exactly the later commits.
        let after_start = history.first_start_floor.unwrap_or(Scn(0));
        if let Some(quiet) = history
            .quiet
            .iter()
            .find(|scn| **scn > from.resume.scn && **scn > after_start)
        {
            let skipped = edit::skip_forward(&from, *quiet).expect("a later SCN");
            let replay = run(&history, &stored(&skipped), &journal);
            let expected: Vec<Delivered> = suffix
                .iter()
                .filter(|d| d.commit_scn >= *quiet)
                .copied()
                .collect();
            assert_eq!(
                published(&replay.records),
                expected,
                "skip forward to {quiet}"
            );
        }
    }

    // A chain of crashes: each run acknowledges a prefix of its records, the next restarts
    // from the last acknowledged position with the journal acknowledged so far.
    let mut from = history.start.clone();
    let mut journal = Journal::default();
    let mut delivered = Vec::new();
    for crash in &script.crashes {
        let this = run(&history, &from, &journal);
        check_stream(&history, &from, &this);
        if let (Some(pick), false) = (crash, this.records.is_empty()) {
            let a = pick.index(this.records.len());
            delivered.extend(published(&this.records[..=a]));
            journal.acknowledge(&this.records[..=a]);
            from = stored(&this.records[a].position);
        }
    }
    let last = run(&history, &from, &journal);
    check_stream(&history, &from, &last);
    delivered.extend(published(&last.records));
    assert_eq!(
        delivered,
        history.truth,
        "after {} crashes",
        script.crashes.len()
    );
}

fn cases() -> u32 {
    std::env::var("CDC_PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(100_000)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        // proptest looks for lib.rs above the test file to place its regressions; tests/ has
        // none, so the file is named here: the crate's proptest-regressions/.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/replay_suffix.txt"
        )))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn replay_emits_exactly_the_unacknowledged_suffix(script in script()) {
        check(&script);
    }
}

/// The generator covers what the property is about; a silent generator bug would make the
/// property vacuous.
#[test]
fn the_generator_produces_the_hard_cases() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let mut runner = TestRunner::deterministic();
    let mut seen = BTreeMap::<&str, u32>::new();
    for _ in 0..2000 {
        let script = script().new_tree(&mut runner).unwrap().current();
        let history = build(&script);
        let first = run(&history, &history.start, &Journal::default());
        let rows = &history.rows;
        let mut note = |what: &'static str, yes: bool| {
            if yes {
                *seen.entry(what).or_default() += 1;
            }
        };
        note(
            "scn goes back in redo order",
            rows.windows(2).any(|w| w[1].mark.scn < w[0].mark.scn),
        );
        let commits: Vec<&Row> = rows.iter().filter(|r| r.kind == Kind::Commit).collect();
        note(
            "commit scn against redo order",
            commits.windows(2).any(|w| w[1].mark.scn < w[0].mark.scn),
        );
        note(
            "commit scn tie",
            commits.windows(2).any(|w| w[1].mark.scn == w[0].mark.scn),
        );
        note(
            "shared rs_id",
            rows.windows(2)
                .any(|w| w[1].mark.addr.rs_id() == w[0].mark.addr.rs_id()),
        );
        note(
            "undo",
            rows.iter().any(|r| matches!(r.kind, Kind::Undo { .. })),
        );
        note("rollback", rows.iter().any(|r| r.kind == Kind::Rollback));
        note("same xid in two pdbs", {
            let xids: Vec<Xid> = history.first_row.keys().map(|k| k.xid).collect();
            xids.iter()
                .enumerate()
                .any(|(i, x)| xids[i + 1..].contains(x))
        });
        note("empty commit", {
            let published: BTreeSet<RedoAddr> = history.truth.iter().map(|d| d.commit).collect();
            commits.iter().any(|c| !published.contains(&c.mark.addr))
        });
        note(
            "multi-event commit",
            history.truth.iter().any(|d| d.index > 0),
        );
        note("first start", history.first_start_floor.is_some());
        note(
            "first start with a listed open transaction",
            history
                .start
                .first_start
                .as_ref()
                .is_some_and(|f| !f.open_xids.is_empty()),
        );
        note("log switch", history.logs.len() > 1);
        let records = &first.records;
        note(
            "journal chunk",
            records
                .iter()
                .any(|r| matches!(r.payload, Payload::Chunk { .. })),
        );
        note(
            "journal chunk naming a heap undo row",
            records.iter().any(|r| {
                matches!(
                    r.payload,
                    Payload::Chunk {
                        heap_undo: Some(_),
                        ..
                    }
                )
            }),
        );
        note(
            "heartbeat",
            records
                .iter()
                .any(|r| matches!(r.payload, Payload::Heartbeat)),
        );
        note(
            "resume held back by an open transaction",
            records.iter().any(|r| {
                r.position
                    .resume
                    .addr
                    .is_some_and(|a| a < rows[r.row].mark.addr)
            }),
        );
        note("more than 20 records", records.len() > 20);
        // a restart from the middle rebuilds a journaled transaction
        if let Some(middle) = records.get(records.len() / 2) {
            let mut journal = Journal::default();
            journal.acknowledge(&records[..=records.len() / 2]);
            let replay = run(&history, &middle.position, &journal);
            note(
                "restart rebuilds from the journal",
                !replay.loaded.is_empty(),
            );
        }
    }
    let expected = [
        "scn goes back in redo order",
        "commit scn against redo order",
        "commit scn tie",
        "shared rs_id",
        "undo",
        "rollback",
        "same xid in two pdbs",
        "empty commit",
        "multi-event commit",
        "first start",
        "first start with a listed open transaction",
        "log switch",
        "journal chunk",
        "journal chunk naming a heap undo row",
        "heartbeat",
        "resume held back by an open transaction",
        "more than 20 records",
    ];
    for what in expected {
        let count = seen.get(what).copied().unwrap_or(0);
        assert!(
            count >= 50,
            "only {count} of 2000 histories have: {what} ({seen:?})"
        );
    }
}
