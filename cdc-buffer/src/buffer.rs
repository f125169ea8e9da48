//! The transaction buffer: one entry per open transaction, keyed by (container, XID), holding
//! its changes in redo order until the COMMIT or ROLLBACK is mined.
//!
//! ```text
//!  engine (one mining thread)
//!    begin / append / undo ----> TransactionBuffer ---- heap over budget? ----+
//!                                 | heap: chunked change lists                | largest heap
//!                                 | spilled: SpillFile (spill.rs)  <----------+ transaction
//!    rollback / release -------> drop entry, delete file                        moves to disk
//!    commit -------------------> CommittedChanges (borrows the buffer)
//!                                 | next_change(): heap list, or frames read back one by one
//!                                 | finish(): records queued -> spill file deleted
//! ```
//!
//! The heap part never holds more than the budget plus the one change being appended: every
//! append that takes it over the budget spills the largest heap-resident transactions, largest
//! first, until it is back within the budget, and a spilled transaction writes its later
//! changes straight to its file. A commit borrows the buffer mutably, so nothing can be
//! appended while a committed transaction is being handed out, and the heap bytes it still
//! holds stay counted until each change is taken.
//!
//! What the budget counts is the changes ([`crate::size`]). Outside it, and bounded by
//! other things than transaction size: the bookkeeping of each open transaction (a few
//! hundred bytes and its START row's strings), the one 1 MiB spill write buffer and the 1 MiB
//! read-back buffer, and while a spilled transaction that took undo rows is committed, a
//! little per undo row.
//!
//! The engine applies rows in redo order, so the changes of one transaction arrive in redo
//! order and a COMMIT hands them over in the order they were appended.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{Seek, SeekFrom};
use std::mem;
use std::path::{Path, PathBuf};
use std::vec;

use cdc_core::{ChangeEvent, ConXid, RedoAddr, Scn};

use crate::codec::{
    CodecError, Frame, FrameHead, FrameReader, FrameRef, KIND_CHANGE, UndoRecord, append_frame,
};
use crate::error::{BufferError, TxnSummary};
use crate::pins::{Pin, PinIndex};
use crate::policy::ReleasedLedger;
use crate::size::change_heap_bytes;
use crate::spill::{self, SpillReader, SpillWriter};

/// How many transactions a CDC-4001 message names.
const LARGEST_IN_MESSAGES: usize = 10;
/// The largest chunk of a heap change list, in changes. Chunks grow with the list up to this,
/// so a list never reallocates (no copy of a huge list, no doubling spike) and the unused tail
/// of its last chunk stays below this many inline changes.
const MAX_CHUNK: usize = 256;

/// The settings the buffer runs with: the configuration's `cdc.buffer.*` keys
/// (`cdc_core::config::BufferSettings`, as configured) with the spill directory resolved;
/// [`BufferSettings::from_config`] is the one mapping from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferSettings {
    /// `cdc.buffer.memory.max.bytes`: the heap budget for buffered changes.
    pub memory_max_bytes: u64,
    /// `cdc.buffer.spill.dir`.
    pub spill_dir: PathBuf,
    /// `cdc.buffer.spill.max.bytes`: the cap on all spill files together.
    pub spill_max_bytes: u64,
}

impl BufferSettings {
    /// 256 MiB.
    pub const DEFAULT_MEMORY_MAX_BYTES: u64 = 256 << 20;
    /// 10 GiB.
    pub const DEFAULT_SPILL_MAX_BYTES: u64 = 10 << 30;

    /// The defaults for a connector: 256 MiB of heap, 10 GiB of spill under
    /// [`BufferSettings::default_spill_dir`].
    pub fn new(connector_name: &str) -> Self {
        BufferSettings {
            memory_max_bytes: Self::DEFAULT_MEMORY_MAX_BYTES,
            spill_dir: Self::default_spill_dir(connector_name),
            spill_max_bytes: Self::DEFAULT_SPILL_MAX_BYTES,
        }
    }

    /// The worker's temporary directory plus `oracle-cdc-spill/<connector name>`, the name made
    /// one path component by the configuration's own rule
    /// ([`cdc_core::config::default_spill_dir`]).
    pub fn default_spill_dir(connector_name: &str) -> PathBuf {
        cdc_core::config::default_spill_dir(&std::env::temp_dir(), connector_name)
    }

    /// What a validated configuration sets: the `cdc.buffer.*` keys, the spill directory
    /// defaulting under `temp_dir` (the worker's temporary directory).
    pub fn from_config(config: &cdc_core::config::CdcConfig, temp_dir: &Path) -> Self {
        BufferSettings {
            memory_max_bytes: config.buffer.memory_max_bytes,
            spill_dir: config.spill_dir(temp_dir),
            spill_max_bytes: config.buffer.spill_max_bytes,
        }
    }
}

/// A session as V$SESSION identifies it: (SID, SERIAL#).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId {
    pub sid: u32,
    pub serial: u32,
}

/// What the START row of a transaction says about it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StartInfo {
    pub scn: Scn,
    /// `None` for a START row with the all-zero RS_ID.
    pub addr: Option<RedoAddr>,
    pub username: Option<String>,
    /// SESSION# and SERIAL# of the START row; orphan detection checks it still exists.
    pub session: Option<SessionId>,
    pub client_id: Option<String>,
    /// SRC_CON_NAME.
    pub pdb: Option<String>,
}

/// How far a transaction has been journaled: the first `ops` frames (changes and undo rows) of
/// its spill file, `bytes` long; `scn`/`addr` is where it holds the resume point from then on
/// (the last of those frames, or its own first row while the journal does not yet hold all its
/// frames through its heap undo row, [`TxnView::heap_undo`]). A journaled transaction is
/// always spilled: its file is where the journal reads each chunk from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalMark {
    pub ops: u64,
    pub scn: Scn,
    pub addr: RedoAddr,
    /// Bytes of the spill file the journal holds (the next chunk starts here).
    pub bytes: u64,
}

/// What a run of whole frames holds, for [`TransactionBuffer::append_journal_frames`]: built
/// with [`FrameRun::push`] from each frame's head, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameRun {
    pub changes: u64,
    pub undos: u64,
    /// The first change frame's SCN and address.
    pub first_change: Option<(Scn, RedoAddr)>,
    /// The last frame's SCN and address.
    pub last: Option<(Scn, RedoAddr)>,
    /// Changes minus undo frames so far, and the least that has been (0 before the first
    /// frame): what one frame after the other does to a transaction's count of changes, which
    /// an undo frame lowers unless it is 0, follows from the two.
    net: i64,
    low: i64,
}

impl FrameRun {
    pub fn new() -> FrameRun {
        FrameRun::default()
    }

    pub fn push(&mut self, head: FrameHead) {
        let at = (head.scn, head.addr);
        if head.kind == KIND_CHANGE {
            self.changes += 1;
            self.first_change.get_or_insert(at);
            self.net += 1;
        } else {
            self.undos += 1;
            self.net -= 1;
            self.low = self.low.min(self.net);
        }
        self.last = Some(at);
    }

    pub fn is_empty(&self) -> bool {
        self.last.is_none()
    }

    /// A transaction's count of changes after the run, from `events` before it, as if each
    /// frame were applied in turn (the count never below 0): a walk from `events` that stops
    /// at 0 ends at `net + max(events, -low)`.
    fn events_after(&self, events: u64) -> u64 {
        let start = i128::from(events).max(-i128::from(self.low));
        u64::try_from(start + i128::from(self.net)).unwrap_or(0)
    }
}

/// What an undo row did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoOutcome {
    /// It removed a change held on the heap.
    Removed,
    /// The transaction is spilled: the undo row was written to its file and is applied when
    /// the file is read back at COMMIT (an undo that matches nothing is counted then).
    Deferred,
    /// It matched no buffered change of its transaction; counted in `unmatched_undo`.
    Unmatched,
    /// No open transaction owns it; counted in `unmatched_undo`.
    NoTransaction,
    /// The all-zero XID, which never owns changes.
    Ignored,
    /// Of a transaction rebuilt from the journal, a row its history holds already, mined
    /// again; counted in `remined_rows_ignored`.
    Remined,
}

/// Gauges and counters of the buffer (names after the connector's metrics list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BufferMetrics {
    pub open_transactions: u64,
    /// Changes held by open transactions (for a spilled one, change rows minus undo rows
    /// written, exact unless an undo row matches nothing).
    pub buffered_events: u64,
    pub heap_bytes: u64,
    /// The most `heap_bytes` has been since the buffer opened: within the budget plus the one
    /// change whose append made the buffer spill.
    pub peak_heap_bytes: u64,
    pub memory_max_bytes: u64,
    /// Open transactions whose changes are on disk.
    pub spilled_transactions: u64,
    /// Bytes in spill files, including a committed one still being read back.
    pub spilled_bytes: u64,
    pub spill_max_bytes: u64,
    /// Counter: transactions moved to disk.
    pub spills: u64,
    /// Counter: changes removed by undo rows.
    pub undone_events: u64,
    /// Counter: undo rows that matched no change.
    pub unmatched_undo: u64,
    /// Counter: rows whose XIDSQN 0xFFFFFFFF named no open transaction, dropped
    /// (`docs/decisions.md`, D16).
    pub unresolved_rows: u64,
    /// Counter: rows of a transaction rebuilt from the journal that were mined again and
    /// ignored, its rebuilt history holding them already (through its last heap undo row).
    pub remined_rows_ignored: u64,
    pub appended_changes: u64,
    pub committed_transactions: u64,
    pub rolled_back_transactions: u64,
    /// Counter: transactions released as orphans or discarded by the age policy.
    pub released_transactions: u64,
    /// The smallest first SCN of an open transaction.
    pub oldest_open_scn: Option<Scn>,
}

/// A transaction's changes on the heap, in redo order, in chunks that grow with the list up to
/// [`MAX_CHUNK`]. The first chunk is held apart: most transactions have a few changes and never
/// need the list of further chunks, which would be an allocation of its own for each of them.
struct HeapLog {
    first: Vec<ChangeEvent>,
    /// The chunks after the first, once it is full.
    more: Vec<Vec<ChangeEvent>>,
    len: u64,
    bytes: u64,
}

/// A heap log's changes, handed over in order.
struct HeapChanges {
    chunk: vec::IntoIter<ChangeEvent>,
    more: vec::IntoIter<Vec<ChangeEvent>>,
}

impl Iterator for HeapChanges {
    type Item = ChangeEvent;

    #[inline]
    fn next(&mut self) -> Option<ChangeEvent> {
        loop {
            if let Some(event) = self.chunk.next() {
                return Some(event);
            }
            self.chunk = self.more.next()?.into_iter();
        }
    }
}

impl HeapLog {
    fn new() -> Self {
        HeapLog {
            first: Vec::new(),
            more: Vec::new(),
            len: 0,
            bytes: 0,
        }
    }

    fn push(&mut self, event: ChangeEvent, size: u64) {
        let last = match self.more.last_mut() {
            Some(chunk) => chunk,
            None => &mut self.first,
        };
        if last.len() < last.capacity() {
            last.push(event);
        } else {
            let capacity = (self.len as usize).clamp(4, MAX_CHUNK);
            let mut chunk = Vec::with_capacity(capacity);
            chunk.push(event);
            if self.first.capacity() == 0 {
                self.first = chunk;
            } else {
                self.more.push(chunk);
            }
        }
        self.len += 1;
        self.bytes += size;
    }

    /// Removes the latest change with this ROWID; returns it with its size.
    fn remove_latest(&mut self, row_id: &str) -> Option<(ChangeEvent, u64)> {
        let matches = |e: &ChangeEvent| e.change.row_id.as_deref() == Some(row_id);
        let chunks = self.more.len();
        let in_more = self
            .more
            .iter()
            .enumerate()
            .rev()
            .find_map(|(c, chunk)| chunk.iter().rposition(matches).map(|i| (c, i)));
        let event = match in_more {
            Some((c, i)) => {
                let chunk = self.more.get_mut(c)?;
                let event = chunk.remove(i);
                if chunk.is_empty() && c + 1 != chunks {
                    self.more.remove(c);
                }
                event
            }
            None => {
                let i = self.first.iter().rposition(matches)?;
                self.first.remove(i)
            }
        };
        let size = change_heap_bytes(&event);
        self.len -= 1;
        self.bytes -= size;
        Some((event, size))
    }

    fn into_changes(self) -> HeapChanges {
        HeapChanges {
            chunk: self.first.into_iter(),
            more: self.more.into_iter(),
        }
    }
}

#[derive(Debug)]
struct SpillFile {
    id: u64,
    path: PathBuf,
    bytes: u64,
    change_frames: u64,
    undo_frames: u64,
}

enum Store {
    Heap(HeapLog),
    Spilled(SpillFile),
}

/// See [`Txn::heap_undo`].
#[derive(Debug, Clone, Copy)]
struct HeapUndo {
    scn: Scn,
    addr: RedoAddr,
    /// The first this many frames of the transaction's history (its spill file once spilled)
    /// hold every change before the row: the changes on the heap just after it.
    frames: u64,
}

struct Txn {
    key: ConXid,
    /// Creation order, to pick the newest of several transactions in one (USN, slot).
    created: u64,
    buffered_at_ms: u64,
    start: Option<StartInfo>,
    /// Who made the first change that named them, for a transaction whose START row was not
    /// mined (a restart after it) or named no session (one rebuilt from the journal, whose
    /// chunks do not carry it): the user and session of that row, which are the START row's.
    origin: Option<Origin>,
    first_change: Option<(Scn, RedoAddr)>,
    last_row: Option<(Scn, RedoAddr)>,
    events: u64,
    ops: u64,
    journaled: Option<JournalMark>,
    /// The last undo row that took a change back while the transaction was on the heap: its
    /// history (on the heap, or written to its spill file when it spilled) lacks that change
    /// and that undo row, so only the whole of it up to this row stands for the rows that made
    /// it. A rebuilt transaction keeps the one its journal names.
    heap_undo: Option<HeapUndo>,
    /// Of a transaction rebuilt from the journal: its rows up to this address are in its
    /// history already (through its last heap undo row), so when they are mined again they are
    /// ignored.
    remined_through: Option<RedoAddr>,
    store: Store,
}

impl Txn {
    fn new(key: ConXid, created: u64, buffered_at_ms: u64, start: Option<StartInfo>) -> Txn {
        Txn {
            key,
            created,
            buffered_at_ms,
            start,
            origin: None,
            first_change: None,
            last_row: None,
            events: 0,
            ops: 0,
            journaled: None,
            heap_undo: None,
            remined_through: None,
            store: Store::Heap(HeapLog::new()),
        }
    }

    fn heap_bytes(&self) -> u64 {
        match &self.store {
            Store::Heap(log) => log.bytes,
            Store::Spilled(_) => 0,
        }
    }

    fn disk_bytes(&self) -> u64 {
        match &self.store {
            Store::Heap(_) => 0,
            Store::Spilled(file) => file.bytes,
        }
    }

    fn first_scn(&self) -> Scn {
        let start = self.start.as_ref().map(|s| s.scn);
        let change = self.first_change.map(|(scn, _)| scn);
        match (start, change) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => Scn::ZERO,
        }
    }

    fn summary(&self) -> TxnSummary {
        TxnSummary {
            key: self.key,
            username: self.username().map(str::to_owned),
            first_scn: self.first_scn(),
            events: self.events,
            heap_bytes: self.heap_bytes(),
            disk_bytes: self.disk_bytes(),
        }
    }

    /// Whether a row mined at `addr` is one its rebuilt history holds already.
    #[inline]
    fn holds_mined(&self, addr: RedoAddr) -> bool {
        self.remined_through.is_some_and(|through| addr <= through)
    }

    fn note_row(&mut self, scn: Scn, addr: RedoAddr) {
        self.ops += 1;
        self.last_row = Some((scn, addr));
    }

    /// See [`TxnView::resume_pin`].
    fn resume_pin(&self) -> Option<Pin> {
        if let Some(mark) = self.journaled {
            return Some((mark.scn, mark.addr));
        }
        self.own_pin()
    }

    /// See [`TxnView::own_pin`].
    fn own_pin(&self) -> Option<Pin> {
        self.first_change
    }

    fn username(&self) -> Option<&str> {
        let start = self.start.as_ref().and_then(|s| s.username.as_deref());
        start.or_else(|| self.origin.as_ref().and_then(|o| o.username.as_deref()))
    }

    fn session(&self) -> Option<SessionId> {
        let start = self.start.as_ref().and_then(|s| s.session);
        start.or_else(|| self.origin.as_ref().and_then(|o| o.session))
    }
}

/// Who made a transaction's changes, as a change row names them (USERNAME, SESSION#, SERIAL#).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Origin {
    username: Option<String>,
    session: Option<SessionId>,
}

/// A read-only view of one open transaction, for the engine's resume rule, the journal and
/// the policies.
#[derive(Clone, Copy)]
pub struct TxnView<'a> {
    txn: &'a Txn,
}

impl fmt::Debug for TxnView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TxnView").field(&self.summary()).finish()
    }
}

impl<'a> TxnView<'a> {
    pub fn key(&self) -> ConXid {
        self.txn.key
    }

    /// The START row, when it was mined.
    pub fn start(&self) -> Option<&'a StartInfo> {
        self.txn.start.as_ref()
    }

    /// The user of its START row, or without one the user a change row named.
    pub fn username(&self) -> Option<&'a str> {
        self.txn.username()
    }

    /// The session (SID, SERIAL#) of its START row, or without one the session a change row
    /// named: orphan detection checks that it still exists.
    pub fn session(&self) -> Option<SessionId> {
        self.txn.session()
    }

    /// The engine's clock when the transaction entered the buffer.
    pub fn buffered_at_ms(&self) -> u64 {
        self.txn.buffered_at_ms
    }

    /// SCN and address of the first change ever appended (undone or not).
    pub fn first_change(&self) -> Option<(Scn, RedoAddr)> {
        self.txn.first_change
    }

    /// SCN and address of the latest row applied to it (change or undo).
    pub fn last_row(&self) -> Option<(Scn, RedoAddr)> {
        self.txn.last_row
    }

    /// The lower of the START row's SCN and the first change's SCN.
    pub fn first_scn(&self) -> Scn {
        self.txn.first_scn()
    }

    /// The point a restart must mine from to rebuild this transaction: its last journaled row
    /// once journaled, otherwise its first change. `None` for an entry without a change: a
    /// transaction that has only its START row (a long one on tables that are not captured,
    /// or by an excluded user) holds nothing, since every row it writes later is mined at a
    /// higher address than the resume point can reach (the log is read in address order).
    pub fn resume_pin(&self) -> Option<(Scn, RedoAddr)> {
        self.txn.resume_pin()
    }

    /// Changes it holds (see [`BufferMetrics::buffered_events`] for spilled ones).
    pub fn events(&self) -> u64 {
        self.txn.events
    }

    pub fn heap_bytes(&self) -> u64 {
        self.txn.heap_bytes()
    }

    pub fn disk_bytes(&self) -> u64 {
        self.txn.disk_bytes()
    }

    pub fn is_spilled(&self) -> bool {
        matches!(self.txn.store, Store::Spilled(_))
    }

    /// The spill file, once spilled.
    pub fn spill_path(&self) -> Option<&'a Path> {
        match &self.txn.store {
            Store::Spilled(file) => Some(&file.path),
            Store::Heap(_) => None,
        }
    }

    /// Rows appended so far (changes and undo rows): the journal compares it with its mark.
    pub fn ops(&self) -> u64 {
        self.txn.ops
    }

    pub fn journaled(&self) -> Option<JournalMark> {
        self.txn.journaled
    }

    /// The last undo row that took a change back while the transaction was on the heap: its
    /// buffered history shows neither that change nor that undo row, so a part of it that
    /// ends before this row does not stand for the rows that made it (the journal says so in
    /// its chunks, and a rebuild keeps the history through this row).
    pub fn heap_undo(&self) -> Option<(Scn, RedoAddr)> {
        self.txn.heap_undo.map(|u| (u.scn, u.addr))
    }

    /// How many frames from the start of its history (its spill file) hold every change before
    /// its heap undo row: a journal that holds fewer does not hold its history through that
    /// row. 0 without one, and for a transaction rebuilt from the journal (which held them).
    pub fn heap_undo_frames(&self) -> u64 {
        self.txn.heap_undo.map_or(0, |u| u.frames)
    }

    /// The point it holds the resume position at without the journal: its first change.
    pub fn own_pin(&self) -> Option<(Scn, RedoAddr)> {
        self.txn.own_pin()
    }

    pub fn summary(&self) -> TxnSummary {
        self.txn.summary()
    }
}

/// The frames of a spilled transaction's file from some byte on, read one at a time with their
/// bytes (for a journal chunk); each frame's CRC32 is checked as it is read.
pub struct SpilledFrames {
    key: ConXid,
    path: PathBuf,
    from: u64,
    frames: FrameReader<spill::SpillReader>,
}

impl fmt::Debug for SpilledFrames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpilledFrames")
            .field("key", &self.key)
            .field("path", &self.path)
            .field("offset", &self.offset())
            .finish_non_exhaustive()
    }
}

impl SpilledFrames {
    /// The file offset of the next frame.
    pub fn offset(&self) -> u64 {
        self.from + self.frames.offset()
    }

    /// The next frame's head, its bytes appended to `out`; `None` at the end of the file. A
    /// damaged frame is CDC-3002 (the spill file is not what was written).
    pub fn next_raw(&mut self, out: &mut Vec<u8>) -> Result<Option<FrameHead>, BufferError> {
        self.frames
            .next_raw(out)
            .map_err(|e| BufferError::Corruption {
                key: self.key,
                path: self.path.clone(),
                detail: format!("reading it for the journal: {e}"),
                source: Some(Box::new(e)),
            })
    }
}

/// What the buffer knew about a transaction when its COMMIT was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitSummary {
    pub key: ConXid,
    pub start: Option<StartInfo>,
    pub first_change: Option<(Scn, RedoAddr)>,
    pub last_row: Option<(Scn, RedoAddr)>,
    pub buffered_at_ms: u64,
    /// Changes the commit publishes, undo rows applied.
    pub event_count: u64,
    /// Bytes of change data the transaction held at its COMMIT (heap or spill file): the
    /// size the delivery side bounds its Kafka transactions by (`cdc.eos.split.max.bytes`).
    pub data_bytes: u64,
    pub spilled: bool,
    pub journaled: Option<JournalMark>,
}

impl CommitSummary {
    /// The lower of the START row's SCN and the first change's SCN, as in `CommitInfo`.
    pub fn first_scn(&self) -> Scn {
        let start = self.start.as_ref().map(|s| s.scn);
        let change = self.first_change.map(|(scn, _)| scn);
        match (start, change) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => Scn::ZERO,
        }
    }
}

/// What holds the resume point back at a COMMIT ([`CommittedChanges::holds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitHolds {
    /// The lowest SCN and the lowest redo address that the other open transactions hold the
    /// resume point at: [`TransactionBuffer::resume_floor`] without this one.
    pub others: Option<(Scn, RedoAddr)>,
    /// The committing transaction's own [`TxnView::resume_pin`].
    pub own: Option<(Scn, RedoAddr)>,
}

/// The transaction buffer. Single-threaded: the mining thread owns it.
pub struct TransactionBuffer {
    settings: BufferSettings,
    /// Looked up for every mined row: foldhash rather than SipHash (the keys are ours).
    /// Boxed: an entry of a few hundred bytes was copied in and out of the table at every
    /// START and COMMIT, and moved again whenever the table grew.
    transactions: foldhash::HashMap<ConXid, Box<Txn>>,
    /// The resume pins of `transactions`, ordered: kept in step with every change of a pin.
    pins: PinIndex,
    heap_bytes: u64,
    /// The most `heap_bytes` has been since the buffer opened (before a spill brought it back).
    peak_heap_bytes: u64,
    buffered_events: u64,
    spilled_transactions: u64,
    spilled_bytes: u64,
    writer: SpillWriter,
    scratch: Vec<u8>,
    next_file: u64,
    next_created: u64,
    clock_ms: u64,
    counters: Counters,
    ledger: ReleasedLedger,
    poisoned: Option<(cdc_core::CdcCode, String)>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counters {
    spills: u64,
    undone_events: u64,
    unmatched_undo: u64,
    unresolved_rows: u64,
    remined_rows: u64,
    appended_changes: u64,
    committed: u64,
    rolled_back: u64,
    released: u64,
}

impl fmt::Debug for TransactionBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransactionBuffer")
            .field("settings", &self.settings)
            .field("metrics", &self.metrics())
            .field("poisoned", &self.poisoned)
            .finish_non_exhaustive()
    }
}

impl TransactionBuffer {
    /// Opens the buffer: creates the spill directory and removes spill files an earlier run
    /// left there (they are not durable state; the open transactions are mined again).
    pub fn open(settings: BufferSettings) -> Result<Self, BufferError> {
        let removed =
            spill::prepare_dir(&settings.spill_dir).map_err(|(action, path, source)| {
                BufferError::SpillIo {
                    action,
                    path,
                    source,
                    largest: Vec::new(),
                }
            })?;
        if removed > 0 {
            tracing::info!(
                removed,
                dir = %settings.spill_dir.display(),
                "removed spill files left by an earlier run"
            );
        }
        Ok(TransactionBuffer {
            settings,
            transactions: foldhash::HashMap::default(),
            pins: PinIndex::default(),
            heap_bytes: 0,
            peak_heap_bytes: 0,
            buffered_events: 0,
            spilled_transactions: 0,
            spilled_bytes: 0,
            writer: SpillWriter::new(),
            scratch: Vec::new(),
            next_file: 1,
            next_created: 0,
            clock_ms: 0,
            counters: Counters::default(),
            ledger: ReleasedLedger::new(),
            poisoned: None,
        })
    }

    pub fn settings(&self) -> &BufferSettings {
        &self.settings
    }

    /// The engine's clock (milliseconds); new entries are stamped with it, and the orphan and
    /// age policies measure from the stamp.
    pub fn set_clock_ms(&mut self, now_ms: u64) {
        self.clock_ms = now_ms;
    }

    /// The released ledger: transactions released as orphans or discarded, whose COMMIT
    /// must stop the task (CDC-7001). The engine carries it in the offsets.
    pub fn ledger(&self) -> &ReleasedLedger {
        &self.ledger
    }

    /// For restoring the ledger from the offsets at start, and for operator edits.
    pub fn ledger_mut(&mut self) -> &mut ReleasedLedger {
        &mut self.ledger
    }

    /// The session of a change row just added to `key`, and its user (`username` is called
    /// only when they are kept): kept while no session is known for the transaction (no
    /// START row was mined, or one rebuilt from the journal named none). The session is what
    /// orphan detection checks; a user already known stays.
    pub fn note_origin(
        &mut self,
        key: ConXid,
        session: SessionId,
        username: impl FnOnce() -> Option<String>,
    ) {
        if let Some(txn) = self.transactions.get_mut(&key)
            && txn.session().is_none()
        {
            let kept = txn.origin.take().and_then(|o| o.username);
            let started_by = txn.start.as_ref().is_some_and(|s| s.username.is_some());
            let username = match kept {
                Some(kept) => Some(kept),
                None if started_by => None,
                None => username(),
            };
            txn.origin = Some(Origin {
                username,
                session: Some(session),
            });
        }
    }

    /// The user a transaction rebuilt without a START row was journaled with (its chunks name
    /// the user of its first change).
    pub fn note_user(&mut self, key: ConXid, username: Option<String>) {
        if let Some(txn) = self.transactions.get_mut(&key)
            && txn.username().is_none()
        {
            let session = txn.origin.take().and_then(|o| o.session);
            txn.origin = Some(Origin { username, session });
        }
    }

    /// A START row: creates the entry (changes may also create it, when the START row was not
    /// mined). The all-zero XID never creates an entry.
    pub fn begin(&mut self, key: ConXid, start: StartInfo) -> Result<(), BufferError> {
        self.check_usable()?;
        let Some(key) = self.resolve(key, "START") else {
            return Ok(());
        };
        match self.transactions.entry(key) {
            Entry::Occupied(entry) => {
                let txn = entry.into_mut();
                if txn.start.is_none() {
                    let before = txn.resume_pin();
                    txn.start = Some(start);
                    self.pins.replace(before, txn.resume_pin());
                } else {
                    tracing::debug!(xid = %key, "second START row for an open transaction ignored")
                }
            }
            Entry::Vacant(entry) => {
                self.next_created += 1;
                let txn = entry.insert(Box::new(Txn::new(
                    key,
                    self.next_created,
                    self.clock_ms,
                    Some(start),
                )));
                self.pins.replace(None, txn.resume_pin());
            }
        }
        Ok(())
    }

    /// The key of the transaction a change row belongs to; `None` for rows the buffer ignores
    /// (the all-zero XID, an unknown XIDSQN with no match). See [`Self::change_txn`].
    fn change_key(&mut self, key: ConXid) -> Result<Option<ConXid>, BufferError> {
        self.check_usable()?;
        Ok(self.resolve(key, "change"))
    }

    /// The transaction of a change row, opened (without a START) if it is new. It borrows the
    /// table alone, so that the caller updates the pins and gauges with the one lookup.
    fn change_txn<'t>(
        transactions: &'t mut foldhash::HashMap<ConXid, Box<Txn>>,
        next_created: &mut u64,
        clock_ms: u64,
        key: ConXid,
    ) -> &'t mut Txn {
        transactions.entry(key).or_insert_with(|| {
            *next_created += 1;
            Box::new(Txn::new(key, *next_created, clock_ms, None))
        })
    }

    /// Notes a change the caller holds back for a moment (it will be appended, merged with
    /// the row that follows, before the transaction ends): the transaction exists and pins the
    /// restart position from that change on, exactly as if it had been appended.
    pub fn pin_change(&mut self, key: ConXid, scn: Scn, addr: RedoAddr) -> Result<(), BufferError> {
        let Some(key) = self.change_key(key)? else {
            return Ok(());
        };
        let txn = Self::change_txn(
            &mut self.transactions,
            &mut self.next_created,
            self.clock_ms,
            key,
        );
        if txn.holds_mined(addr) {
            self.counters.remined_rows += 1;
            return Ok(());
        }
        txn.note_row(scn, addr);
        if txn.first_change.is_none() {
            let before = txn.resume_pin();
            txn.first_change = Some((scn, addr));
            self.pins.replace(before, txn.resume_pin());
        }
        Ok(())
    }

    /// Appends a change (in redo order within its transaction). May spill transactions to
    /// bring the heap back within the budget.
    pub fn append(&mut self, key: ConXid, event: ChangeEvent) -> Result<(), BufferError> {
        let Some(key) = self.change_key(key)? else {
            return Ok(());
        };
        let spilled = {
            let txn = Self::change_txn(
                &mut self.transactions,
                &mut self.next_created,
                self.clock_ms,
                key,
            );
            if txn.holds_mined(event.addr) {
                self.counters.remined_rows += 1;
                return Ok(());
            }
            self.counters.appended_changes += 1;
            self.buffered_events += 1;
            txn.note_row(event.scn, event.addr);
            if txn.first_change.is_none() {
                let before = txn.resume_pin();
                txn.first_change = Some((event.scn, event.addr));
                self.pins.replace(before, txn.resume_pin());
            }
            txn.events += 1;
            match &mut txn.store {
                Store::Heap(log) => {
                    let size = change_heap_bytes(&event);
                    log.push(event, size);
                    self.heap_bytes += size;
                    self.peak_heap_bytes = self.peak_heap_bytes.max(self.heap_bytes);
                    None
                }
                Store::Spilled(_) => Some(event),
            }
        };
        if let Some(event) = spilled {
            self.write_frame(key, FrameRef::Change(&event))?;
        } else if self.heap_bytes > self.settings.memory_max_bytes {
            self.spill_until_within_budget()?;
        }
        Ok(())
    }

    /// An undo row (ROLLBACK=1): removes the latest earlier change of the transaction with the
    /// same ROWID. One that matches nothing is counted and logged (without values).
    pub fn undo(&mut self, key: ConXid, undo: UndoRecord) -> Result<UndoOutcome, BufferError> {
        self.check_usable()?;
        if key.xid.is_zero() {
            tracing::debug!(addr = %undo.addr, "undo row with the all-zero XID ignored");
            return Ok(UndoOutcome::Ignored);
        }
        let txn = match self.resolve(key, "undo") {
            Some(resolved) => self.transactions.get_mut(&resolved),
            None => {
                self.counters.unmatched_undo += 1;
                return Ok(UndoOutcome::NoTransaction);
            }
        };
        let Some(txn) = txn else {
            self.counters.unmatched_undo += 1;
            // normal on a live database (the change undone was made before mining started, or
            // was removed already): counted, logged at debug
            tracing::debug!(
                xid = %key, addr = %undo.addr, row_id = %undo.row_id,
                "undo row for a transaction with nothing buffered matched no change"
            );
            return Ok(UndoOutcome::NoTransaction);
        };
        if txn.holds_mined(undo.addr) {
            self.counters.remined_rows += 1;
            return Ok(UndoOutcome::Remined);
        }
        txn.note_row(undo.scn, undo.addr);
        let resolved = txn.key;
        match &mut txn.store {
            Store::Heap(log) => match log.remove_latest(&undo.row_id) {
                Some((_, size)) => {
                    txn.events -= 1;
                    // every change on the heap was appended before this row (a held LOB
                    // insert is appended before the next row of its transaction)
                    txn.heap_undo = Some(HeapUndo {
                        scn: undo.scn,
                        addr: undo.addr,
                        frames: log.len,
                    });
                    self.heap_bytes -= size;
                    self.buffered_events -= 1;
                    self.counters.undone_events += 1;
                    Ok(UndoOutcome::Removed)
                }
                None => {
                    self.counters.unmatched_undo += 1;
                    tracing::debug!(
                        xid = %resolved, addr = %undo.addr, row_id = %undo.row_id,
                        "undo row matched no buffered change of its transaction"
                    );
                    Ok(UndoOutcome::Unmatched)
                }
            },
            Store::Spilled(_) => {
                if txn.events > 0 {
                    txn.events -= 1;
                    self.buffered_events -= 1;
                }
                self.write_frame(resolved, FrameRef::Undo(&undo))?;
                Ok(UndoOutcome::Deferred)
            }
        }
    }

    /// A ROLLBACK row: drops the transaction. Returns whether it was open.
    pub fn rollback(&mut self, key: ConXid) -> Result<bool, BufferError> {
        let Some(key) = self.resolve(key, "ROLLBACK") else {
            return Ok(false);
        };
        let Some(txn) = self.transactions.remove(&key) else {
            return Ok(false);
        };
        self.pins.replace(txn.resume_pin(), None);
        self.counters.rolled_back += 1;
        self.drop_txn(txn)?;
        Ok(true)
    }

    /// Drops a transaction released as an orphan or discarded by the age policy, and adds it
    /// to the released ledger, so that a COMMIT for it later stops the task (CDC-7001).
    /// Returns what it held, when it was open.
    pub fn release(&mut self, key: ConXid) -> Result<Option<TxnSummary>, BufferError> {
        let Some(key) = self.resolve(key, "release") else {
            return Ok(None);
        };
        self.ledger.release(key);
        let Some(txn) = self.transactions.remove(&key) else {
            return Ok(None);
        };
        self.pins.replace(txn.resume_pin(), None);
        let summary = txn.summary();
        self.counters.released += 1;
        self.drop_txn(txn)?;
        Ok(Some(summary))
    }

    /// A COMMIT row: hands the transaction's changes over in redo order, undo rows applied,
    /// with the resume holds at the commit ([`CommittedChanges::holds`]). `None` when no entry
    /// exists (nothing to publish). A COMMIT for a transaction in the released ledger stops
    /// with CDC-7001.
    pub fn commit(&mut self, key: ConXid) -> Result<Option<CommittedChanges<'_>>, BufferError> {
        self.check_usable()?;
        let named = key;
        let Some(key) = self.resolve(key, "COMMIT") else {
            return Ok(None);
        };
        if self.ledger.contains(key) {
            return Err(BufferError::ReleasedCommit { key });
        }
        let Some(mut txn) = self.transactions.remove(&key) else {
            return Ok(None);
        };
        let own = txn.resume_pin();
        let holds = if key == named {
            // the others' floor is the floor once this transaction's pin is gone
            self.pins.replace(own, None);
            CommitHolds {
                others: self.pins.floor_without(None),
                own,
            }
        } else {
            // a COMMIT with XIDSQN 0xFFFFFFFF: no entry has the key it names, so the holds
            // are those of every open transaction, this one's included, and no own hold
            let all = self.pins.floor_without(None);
            self.pins.replace(own, None);
            CommitHolds {
                others: all,
                own: None,
            }
        };
        self.counters.committed += 1;
        self.buffered_events -= txn.events;
        let data_bytes = txn.heap_bytes() + txn.disk_bytes();
        let (source, event_count) = match mem::replace(&mut txn.store, Store::Heap(HeapLog::new()))
        {
            Store::Heap(log) => {
                // off the gauge at once: while the changes are taken, the buffer is borrowed
                // by them and nothing else can read it
                self.heap_bytes -= log.bytes;
                let event_count = log.len;
                (Source::Heap(log.into_changes()), event_count)
            }
            Store::Spilled(file) => {
                self.spilled_transactions -= 1;
                let source = self.open_spilled(key, file)?;
                let event_count = source.event_count;
                (Source::Spill(Box::new(source)), event_count)
            }
        };
        Ok(Some(CommittedChanges {
            buffer: self,
            txn,
            holds,
            event_count,
            data_bytes,
            emitted: 0,
            source,
            done: false,
            failed: false,
        }))
    }

    /// Records how far a transaction has been journaled; its resume pin moves to the mark.
    /// Returns whether the transaction is open.
    pub fn mark_journaled(&mut self, key: ConXid, mark: JournalMark) -> bool {
        match self.transactions.get_mut(&key) {
            Some(txn) => {
                let before = txn.resume_pin();
                txn.journaled = Some(mark);
                self.pins.replace(before, txn.resume_pin());
                true
            }
            None => false,
        }
    }

    /// Moves a transaction to its spill file so that the journal can read its frames from
    /// there (a heap transaction is written out whole, its undo rows already applied: that is
    /// its history so far). Returns whether the transaction is open.
    pub fn spill_for_journal(&mut self, key: ConXid) -> Result<bool, BufferError> {
        self.check_usable()?;
        if !self.transactions.contains_key(&key) {
            return Ok(false);
        }
        self.spill_transaction(key, "to be journaled")?;
        // the file exists from here on, even before the first frame is written to it
        let created = match self.transactions.get(&key).map(|t| &t.store) {
            Some(Store::Spilled(file)) if file.bytes == 0 => Some(file.path.clone()),
            _ => None,
        };
        if let Some(path) = created {
            self.create_spill_file(path)?;
        }
        Ok(true)
    }

    fn create_spill_file(&mut self, path: PathBuf) -> Result<(), BufferError> {
        if let Err(source) = spill::create(&path) {
            let error = BufferError::SpillIo {
                action: "create",
                path,
                source,
                largest: self.largest(LARGEST_IN_MESSAGES),
            };
            return Err(self.poison(error));
        }
        Ok(())
    }

    /// The frames of a spilled transaction's file from byte `from` to its end, for the
    /// journal; `None` when the transaction is not open or not spilled.
    pub fn spilled_frames(
        &mut self,
        key: ConXid,
        from: u64,
    ) -> Result<Option<SpilledFrames>, BufferError> {
        self.check_usable()?;
        let Some(Store::Spilled(file)) = self.transactions.get(&key).map(|t| &t.store) else {
            return Ok(None);
        };
        let (id, path, bytes) = (file.id, file.path.clone(), file.bytes);
        if let Err(failure) = self.writer.finish_file(id) {
            return Err(self.spill_io(failure));
        }
        let opened = spill::open_for_read(&path).and_then(|(mut reader, len)| {
            reader.seek(SeekFrom::Start(from.min(len)))?;
            Ok((reader, len))
        });
        let (reader, len) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                let error = BufferError::Corruption {
                    key,
                    path,
                    detail: format!("it cannot be read for the journal: {e}"),
                    source: Some(Box::new(e)),
                };
                return Err(self.poison(error));
            }
        };
        if len != bytes || from > len {
            let error = BufferError::Corruption {
                key,
                path,
                detail: format!(
                    "it holds {len} bytes but {bytes} were written (the journal reads from byte \
                     {from})"
                ),
                source: None,
            };
            return Err(self.poison(error));
        }
        Ok(Some(SpilledFrames {
            key,
            path,
            from,
            frames: FrameReader::new(reader, len - from),
        }))
    }

    /// Opens a transaction rebuilt from the journal at a restart: spilled from the start, with
    /// no frames yet ([`TransactionBuffer::append_journal_frame`] adds them). Returns whether
    /// it was new (an open transaction of that key is left as it is).
    ///
    /// `heap_undo` is the last undo row its journal says took a change back on the heap
    /// ([`TxnView::heap_undo`]), kept for its later chunks. When the restart mines from at or
    /// before it, the caller appends the frames through it and passes its address as
    /// `remined_through`: the transaction then ignores its rows mined again up to there.
    pub fn restore_journaled(
        &mut self,
        key: ConXid,
        start: Option<StartInfo>,
        heap_undo: Option<(Scn, RedoAddr)>,
        remined_through: Option<RedoAddr>,
    ) -> Result<bool, BufferError> {
        self.check_usable()?;
        if self.transactions.contains_key(&key) || key.xid.is_zero() {
            return Ok(false);
        }
        self.next_created += 1;
        let id = self.next_file;
        self.next_file += 1;
        let path = self
            .settings
            .spill_dir
            .join(spill::spill_file_name(key, id));
        self.create_spill_file(path.clone())?;
        let mut txn = Txn::new(key, self.next_created, self.clock_ms, start);
        txn.heap_undo = heap_undo.map(|(scn, addr)| HeapUndo {
            scn,
            addr,
            frames: 0,
        });
        txn.remined_through = remined_through;
        txn.store = Store::Spilled(SpillFile {
            id,
            path,
            bytes: 0,
            change_frames: 0,
            undo_frames: 0,
        });
        self.spilled_transactions += 1;
        self.pins.replace(None, txn.resume_pin());
        self.transactions.insert(key, Box::new(txn));
        Ok(true)
    }

    /// Appends one whole frame (header and payload, as the journal holds it) to a transaction
    /// opened by [`TransactionBuffer::restore_journaled`], within the spill cap.
    pub fn append_journal_frame(
        &mut self,
        key: ConXid,
        head: FrameHead,
        frame: &[u8],
    ) -> Result<(), BufferError> {
        let mut run = FrameRun::default();
        run.push(head);
        self.append_journal_frames(key, &run, frame)
    }

    /// Appends a run of whole frames (their bytes one after the other, as the journal holds
    /// them) to a transaction opened by [`TransactionBuffer::restore_journaled`], within the
    /// spill cap: one write and one update of its gauges and pin for the run.
    pub fn append_journal_frames(
        &mut self,
        key: ConXid,
        run: &FrameRun,
        frames: &[u8],
    ) -> Result<(), BufferError> {
        self.check_usable()?;
        let Some(last) = run.last else {
            return Ok(());
        };
        let Some(txn) = self.transactions.get_mut(&key) else {
            return Ok(());
        };
        let before = txn.resume_pin();
        txn.ops += run.changes + run.undos - 1;
        txn.note_row(last.0, last.1);
        // as one frame after the other would: an undo frame takes a change off the count
        // unless none is left (an undo that matches nothing)
        let events = txn.events;
        txn.events = run.events_after(events);
        self.buffered_events = self.buffered_events - events + txn.events;
        if txn.first_change.is_none() {
            txn.first_change = run.first_change;
        }
        let after = txn.resume_pin();
        self.pins.replace(before, after);
        self.write_bytes(key, (run.changes, run.undos), frames)
    }

    /// Every open transaction, in no particular order.
    pub fn open_transactions(&self) -> impl Iterator<Item = TxnView<'_>> {
        self.transactions.values().map(|txn| TxnView { txn })
    }

    /// The lowest SCN and the lowest redo address that the open transactions other than
    /// `except` hold the resume point at (each the minimum over their
    /// [`TxnView::resume_pin`]s); `None` when none holds it. Read from an ordered index, not
    /// by visiting the transactions.
    pub fn resume_floor(&self, except: Option<ConXid>) -> Option<(Scn, RedoAddr)> {
        let except = except
            .and_then(|key| self.transactions.get(&key))
            .and_then(|t| t.resume_pin());
        self.pins.floor_without(except)
    }

    pub fn transaction(&self, key: ConXid) -> Option<TxnView<'_>> {
        self.transactions.get(&key).map(|txn| TxnView { txn })
    }

    /// The `n` largest open transactions by heap plus disk bytes, largest first.
    pub fn largest(&self, n: usize) -> Vec<TxnSummary> {
        let mut all: Vec<TxnSummary> = self.transactions.values().map(|t| t.summary()).collect();
        all.sort_by(|a, b| {
            b.total_bytes()
                .cmp(&a.total_bytes())
                .then(a.key.cmp(&b.key))
        });
        all.truncate(n);
        all
    }

    pub fn metrics(&self) -> BufferMetrics {
        BufferMetrics {
            open_transactions: self.transactions.len() as u64,
            buffered_events: self.buffered_events,
            heap_bytes: self.heap_bytes,
            peak_heap_bytes: self.peak_heap_bytes,
            memory_max_bytes: self.settings.memory_max_bytes,
            spilled_transactions: self.spilled_transactions,
            spilled_bytes: self.spilled_bytes,
            spill_max_bytes: self.settings.spill_max_bytes,
            spills: self.counters.spills,
            undone_events: self.counters.undone_events,
            unmatched_undo: self.counters.unmatched_undo,
            unresolved_rows: self.counters.unresolved_rows,
            remined_rows_ignored: self.counters.remined_rows,
            appended_changes: self.counters.appended_changes,
            committed_transactions: self.counters.committed,
            rolled_back_transactions: self.counters.rolled_back,
            released_transactions: self.counters.released,
            oldest_open_scn: self.transactions.values().map(|t| t.first_scn()).min(),
        }
    }

    /// The key a row belongs to: itself, or for XIDSQN 0xFFFFFFFF the newest open transaction in
    /// the same (container, USN, slot) (`docs/decisions.md`, D16). `None` for the all-zero XID and
    /// for an unknown sequence with no such transaction (counted and logged). Inlined: every row
    /// asks, and nearly every row names its own key.
    #[inline]
    fn resolve(&mut self, key: ConXid, row: &'static str) -> Option<ConXid> {
        if key.xid.is_zero() {
            return None;
        }
        if !key.xid.has_unknown_sqn() {
            return Some(key);
        }
        self.resolve_unknown_sqn(key, row)
    }

    /// The open transaction a row of `key` belongs to, as [`Self::resolve`] finds it, without
    /// counting anything: for a caller that needs the key before the row is applied (the
    /// journal's tombstones of a ROLLBACK with XIDSQN 0xFFFFFFFF).
    pub fn resolved(&self, key: ConXid) -> Option<ConXid> {
        if key.xid.is_zero() {
            return None;
        }
        if !key.xid.has_unknown_sqn() {
            return self.transactions.contains_key(&key).then_some(key);
        }
        self.newest_in_slot(key)
    }

    fn newest_in_slot(&self, key: ConXid) -> Option<ConXid> {
        self.transactions
            .values()
            .filter(|t| {
                t.key.con == key.con
                    && t.key.xid.usn == key.xid.usn
                    && t.key.xid.slot == key.xid.slot
                    && !t.key.xid.has_unknown_sqn()
            })
            .max_by_key(|t| t.created)
            .map(|t| t.key)
    }

    /// [`Self::resolve`] for XIDSQN 0xFFFFFFFF (rare): kept out of line.
    #[inline(never)]
    fn resolve_unknown_sqn(&mut self, key: ConXid, row: &'static str) -> Option<ConXid> {
        let found = self.newest_in_slot(key);
        if found.is_none() {
            self.counters.unresolved_rows += 1;
            // normal: LogMiner shows such rows for transactions whose start it did not see
            tracing::debug!(
                xid = %key, row,
                "row with XIDSQN 0xFFFFFFFF names no open transaction in its undo slot; dropped"
            );
        }
        found
    }

    fn check_usable(&self) -> Result<(), BufferError> {
        match &self.poisoned {
            Some((code, first)) => Err(BufferError::Poisoned {
                code: *code,
                first: first.clone(),
            }),
            None => Ok(()),
        }
    }

    /// A failed spill write, open or flush as the stop it is (CDC-4001, naming the largest
    /// transactions), remembered.
    fn spill_io(&mut self, (action, path, source): spill::WriteFailure) -> BufferError {
        let error = BufferError::SpillIo {
            action,
            path,
            source,
            largest: self.largest(LARGEST_IN_MESSAGES),
        };
        self.poison(error)
    }

    /// Remembers the first error that leaves a spill file incomplete or unreadable.
    fn poison(&mut self, error: BufferError) -> BufferError {
        if self.poisoned.is_none() {
            self.poisoned = Some((error.code(), error.to_string()));
        }
        error
    }

    fn spill_until_within_budget(&mut self) -> Result<(), BufferError> {
        while self.heap_bytes > self.settings.memory_max_bytes {
            let largest = self
                .transactions
                .values()
                .filter(|t| t.heap_bytes() > 0)
                .max_by(|a, b| a.heap_bytes().cmp(&b.heap_bytes()).then(b.key.cmp(&a.key)))
                .map(|t| t.key);
            let Some(key) = largest else { break };
            self.spill_transaction(key, "to keep the heap within cdc.buffer.memory.max.bytes")?;
        }
        Ok(())
    }

    /// Moves a heap-resident transaction to a new spill file, freeing its changes one by one
    /// as they are written.
    fn spill_transaction(&mut self, key: ConXid, why: &'static str) -> Result<(), BufferError> {
        let id = self.next_file;
        let path = self
            .settings
            .spill_dir
            .join(spill::spill_file_name(key, id));
        let Some(txn) = self.transactions.get_mut(&key) else {
            return Ok(());
        };
        if !matches!(txn.store, Store::Heap(_)) {
            return Ok(());
        }
        self.next_file += 1;
        let file = SpillFile {
            id,
            path,
            bytes: 0,
            change_frames: 0,
            undo_frames: 0,
        };
        let Store::Heap(log) = mem::replace(&mut txn.store, Store::Spilled(file)) else {
            return Ok(());
        };
        tracing::info!(
            xid = %key, heap_bytes = log.bytes, events = log.len,
            "transaction spilled to disk {why}"
        );
        self.spilled_transactions += 1;
        self.counters.spills += 1;
        for event in log.into_changes() {
            let size = change_heap_bytes(&event);
            self.write_frame(key, FrameRef::Change(&event))?;
            self.heap_bytes -= size;
        }
        Ok(())
    }

    /// Writes one frame to a spilled transaction's file, within the spill cap.
    fn write_frame(&mut self, key: ConXid, frame: FrameRef<'_>) -> Result<(), BufferError> {
        let mut scratch = mem::take(&mut self.scratch);
        scratch.clear();
        append_frame(frame, &mut scratch);
        let frames = match frame {
            FrameRef::Change(_) => (1, 0),
            FrameRef::Undo(_) => (0, 1),
        };
        let result = self.write_bytes(key, frames, &scratch);
        self.scratch = scratch;
        result
    }

    /// Writes one framed change (or undo row) to a spilled transaction's file, within the
    /// spill cap.
    /// Writes whole frames, `frames` (changes, undo rows) of them, to a spilled transaction's
    /// file, within the spill cap.
    fn write_bytes(
        &mut self,
        key: ConXid,
        frames: (u64, u64),
        bytes: &[u8],
    ) -> Result<(), BufferError> {
        let len = bytes.len() as u64;
        let needed = self.spilled_bytes + len;
        if needed > self.settings.spill_max_bytes {
            let error = BufferError::SpillCapExceeded {
                needed,
                cap: self.settings.spill_max_bytes,
                largest: self.largest(LARGEST_IN_MESSAGES),
            };
            return Err(self.poison(error));
        }
        let result = match self.transactions.get_mut(&key).map(|t| &mut t.store) {
            Some(Store::Spilled(file)) => {
                let written = self.writer.write(file.id, &file.path, bytes);
                if written.is_ok() {
                    file.bytes += len;
                    file.change_frames += frames.0;
                    file.undo_frames += frames.1;
                }
                written
            }
            _ => Ok(()),
        };
        match result {
            Ok(()) => {
                self.spilled_bytes += len;
                Ok(())
            }
            Err(failure) => Err(self.spill_io(failure)),
        }
    }

    /// Takes a dropped transaction's bytes off the gauges and deletes its file.
    fn drop_txn(&mut self, txn: Box<Txn>) -> Result<(), BufferError> {
        self.buffered_events -= txn.events;
        match txn.store {
            Store::Heap(log) => self.heap_bytes -= log.bytes,
            Store::Spilled(file) => {
                self.writer.discard_file(file.id);
                self.spilled_transactions -= 1;
                self.spilled_bytes -= file.bytes;
                spill::remove(&file.path).map_err(|source| BufferError::SpillIo {
                    action: "remove",
                    path: file.path.clone(),
                    source,
                    largest: Vec::new(),
                })?;
            }
        }
        Ok(())
    }

    /// Prepares the read-back of a committed spilled transaction: checks the file is whole,
    /// and when undo rows were written, finds the changes they cancel.
    fn open_spilled(&mut self, key: ConXid, file: SpillFile) -> Result<SpillSource, BufferError> {
        if let Err(failure) = self.writer.finish_file(file.id) {
            return Err(self.spill_io(failure));
        }
        let corrupt = |detail: String, source: Option<Box<dyn std::error::Error + Send + Sync>>| {
            BufferError::Corruption {
                key,
                path: file.path.clone(),
                detail,
                source,
            }
        };
        let (reader, len) = match spill::open_for_read(&file.path) {
            Ok(opened) => opened,
            Err(e) => {
                let error = corrupt(format!("it cannot be opened: {e}"), Some(Box::new(e)));
                return Err(self.poison(error));
            }
        };
        if len != file.bytes {
            let error = corrupt(
                format!("it holds {len} bytes but {} were written", file.bytes),
                None,
            );
            return Err(self.poison(error));
        }
        let frames_total = file.change_frames + file.undo_frames;
        let mut frames = FrameReader::new(reader, len);
        let mut cancelled = Vec::new();
        if file.undo_frames > 0 {
            let resolved = resolve_spilled_undos(frames, frames_total);
            let (reader, found, unmatched) = match resolved {
                Ok(resolved) => resolved,
                Err(e) => {
                    let error = corrupt(e.to_string(), Some(Box::new(e)));
                    return Err(self.poison(error));
                }
            };
            cancelled = found;
            self.counters.undone_events += cancelled.len() as u64;
            if unmatched > 0 {
                self.counters.unmatched_undo += unmatched;
                tracing::warn!(
                    xid = %key, unmatched,
                    "undo rows of a spilled transaction matched no change of it"
                );
            }
            frames = FrameReader::new(reader, len);
        }
        Ok(SpillSource {
            event_count: file.change_frames - cancelled.len() as u64,
            file,
            frames,
            frames_read: 0,
            frames_total,
            change_seq: 0,
            cancelled,
            next_cancel: 0,
            keep_file: false,
        })
    }
}

impl Drop for TransactionBuffer {
    fn drop(&mut self) {
        for txn in self.transactions.values() {
            if let Store::Spilled(file) = &txn.store
                && let Err(e) = spill::remove(&file.path)
            {
                tracing::warn!(path = %file.path.display(), error = %e, "could not remove spill file");
            }
        }
    }
}

/// Errors of the undo passes: damaged frames, or a frame count that disagrees.
#[derive(Debug, thiserror::Error)]
enum PassError {
    #[error(transparent)]
    Codec(#[from] CodecError),
    #[error("the file ends after {read} frames but {written} were written")]
    Count { read: u64, written: u64 },
    #[error("rewinding the file failed: {0}")]
    Seek(std::io::Error),
}

/// Applies the undo rows of a spilled file without holding its changes: pass 1 counts the
/// undo rows per ROWID, pass 2 replays changes and undos of only those ROWIDs, keeping for
/// each no more candidates than undo rows still to come. Memory is bounded by the number of
/// undo rows. Returns the rewound reader, the cancelled change ordinals (sorted) and the
/// number of undo rows that matched nothing.
fn resolve_spilled_undos(
    mut frames: FrameReader<SpillReader>,
    frames_total: u64,
) -> Result<(SpillReader, Vec<u64>, u64), PassError> {
    let len = frames_total;
    let mut pending: HashMap<String, (u64, VecDeque<u64>)> = HashMap::new();
    let mut read = 0;
    while let Some(frame) = frames.next_frame()? {
        read += 1;
        if let Frame::Undo(undo) = frame {
            pending.entry(undo.row_id).or_default().0 += 1;
        }
    }
    if read != len {
        return Err(PassError::Count { read, written: len });
    }
    let byte_len = frames.offset();
    let mut reader = frames.into_inner();
    reader.seek(SeekFrom::Start(0)).map_err(PassError::Seek)?;
    let mut frames = FrameReader::new(reader, byte_len);
    let mut cancelled = Vec::new();
    let mut unmatched = 0;
    let mut seq = 0u64;
    while let Some(frame) = frames.next_frame()? {
        match frame {
            Frame::Change(event) => {
                // Only as many candidates as undo rows still to come can ever be cancelled.
                if let Some((remaining, stack)) = event
                    .change
                    .row_id
                    .as_ref()
                    .and_then(|r| pending.get_mut(r))
                    && *remaining > 0
                {
                    if stack.len() as u64 == *remaining {
                        stack.pop_front();
                    }
                    stack.push_back(seq);
                }
                seq += 1;
            }
            Frame::Undo(undo) => {
                if let Some((remaining, stack)) = pending.get_mut(&undo.row_id) {
                    *remaining = remaining.saturating_sub(1);
                    match stack.pop_back() {
                        Some(target) => cancelled.push(target),
                        None => unmatched += 1,
                    }
                    while stack.len() as u64 > *remaining {
                        stack.pop_front();
                    }
                }
            }
        }
    }
    cancelled.sort_unstable();
    let mut reader = frames.into_inner();
    reader.seek(SeekFrom::Start(0)).map_err(PassError::Seek)?;
    Ok((reader, cancelled, unmatched))
}

struct SpillSource {
    file: SpillFile,
    frames: FrameReader<SpillReader>,
    frames_read: u64,
    frames_total: u64,
    event_count: u64,
    change_seq: u64,
    cancelled: Vec<u64>,
    next_cancel: usize,
    /// A damaged file stays for inspection until the next start sweeps it.
    keep_file: bool,
}

enum Source {
    Heap(HeapChanges),
    Spill(Box<SpillSource>),
}

/// The changes of a committed transaction, handed out one at a time in redo order. It
/// borrows the buffer, so the buffer's heap accounting covers what it still holds.
///
/// Call [`CommittedChanges::finish`] once the records built from the changes are queued: that
/// deletes the spill file. Dropping it without `finish` (an error on the way) also deletes
/// the file, except a damaged one, which is kept for inspection until the next start.
///
/// A spill file's length is checked before the first change is handed out (so a cut file
/// yields nothing), each frame's CRC32 as it is read, and the number of frames at the end. A
/// frame damaged partway gives CDC-3002
/// after earlier changes were already handed out: those belong to a transaction that never
/// completes, so the engine must not treat the commit as done — its records carry positions
/// that never pass the transaction's start, and under exactly-once delivery the Kafka
/// transaction holding them is aborted when the task stops.
pub struct CommittedChanges<'a> {
    buffer: &'a mut TransactionBuffer,
    /// The transaction's entry, its changes moved to `source`: kept whole rather than copied
    /// into a [`CommitSummary`], which made this a few hundred bytes that every commit moved
    /// several times on its way to the engine.
    txn: Box<Txn>,
    holds: CommitHolds,
    event_count: u64,
    data_bytes: u64,
    emitted: u64,
    source: Source,
    done: bool,
    failed: bool,
}

impl fmt::Debug for CommittedChanges<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommittedChanges")
            .field("summary", &self.summary())
            .field("emitted", &self.emitted)
            .finish_non_exhaustive()
    }
}

impl CommittedChanges<'_> {
    pub fn key(&self) -> ConXid {
        self.txn.key
    }

    /// What the buffer knew about the transaction (the START row's information copied, unless
    /// [`CommittedChanges::take_start`] took it).
    pub fn summary(&self) -> CommitSummary {
        CommitSummary {
            key: self.txn.key,
            start: self.txn.start.clone(),
            first_change: self.txn.first_change,
            last_row: self.txn.last_row,
            buffered_at_ms: self.txn.buffered_at_ms,
            event_count: self.event_count,
            data_bytes: self.data_bytes,
            spilled: matches!(self.source, Source::Spill(_)),
            journaled: self.txn.journaled,
        }
    }

    /// Moves the START row's information out of the summary (which keeps `None`): what the
    /// records of the commit carry from it (user name, PDB) is then not copied.
    pub fn take_start(&mut self) -> Option<StartInfo> {
        self.txn.start.take()
    }

    /// The resume holds at the COMMIT, as they were before it. Found with the lookup that
    /// took the entry, not another.
    pub fn holds(&self) -> CommitHolds {
        self.holds
    }

    /// Changes this commit publishes, known before the first is read.
    pub fn event_count(&self) -> u64 {
        self.event_count
    }

    /// [`CommitSummary::data_bytes`].
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }

    /// [`CommitSummary::first_scn`].
    pub fn first_scn(&self) -> Scn {
        self.txn.first_scn()
    }

    /// Changes handed out so far.
    pub fn emitted(&self) -> u64 {
        self.emitted
    }

    /// The next change, or `None` after the last. A damaged spill file gives CDC-3002
    /// instead of a shorter transaction.
    ///
    /// Inlined: the engine takes every change through it, and as a call each change was moved
    /// into its result and out again.
    #[inline]
    pub fn next_change(&mut self) -> Result<Option<ChangeEvent>, BufferError> {
        if self.failed {
            self.buffer.check_usable()?;
        }
        let next = match &mut self.source {
            Source::Heap(events) => Ok(events.next()),
            Source::Spill(source) => source.next_change(self.txn.key),
        };
        match next {
            Ok(Some(event)) => {
                self.emitted += 1;
                Ok(Some(event))
            }
            Ok(None) => Ok(None),
            Err(error) => {
                self.failed = true;
                Err(self.buffer.poison(error))
            }
        }
    }

    /// The records of every change are queued: the spill file is deleted.
    pub fn finish(mut self) -> Result<(), BufferError> {
        if self.emitted != self.event_count {
            tracing::warn!(
                xid = %self.txn.key, emitted = self.emitted, event_count = self.event_count,
                "committed transaction finished before all its changes were taken"
            );
        }
        self.done = true;
        self.release_resources()
    }

    fn release_resources(&mut self) -> Result<(), BufferError> {
        match &mut self.source {
            Source::Heap(events) => {
                // their bytes left the gauge at the commit
                events.by_ref().for_each(drop);
                Ok(())
            }
            Source::Spill(source) => {
                self.buffer.spilled_bytes -= mem::take(&mut source.file.bytes);
                if source.keep_file {
                    return Ok(());
                }
                spill::remove(&source.file.path).map_err(|e| BufferError::SpillIo {
                    action: "remove",
                    path: source.file.path.clone(),
                    source: e,
                    largest: Vec::new(),
                })
            }
        }
    }
}

impl SpillSource {
    fn next_change(&mut self, key: ConXid) -> Result<Option<ChangeEvent>, BufferError> {
        loop {
            let frame = match self.frames.next_frame() {
                Ok(frame) => frame,
                Err(e) => return Err(self.corrupt(key, e.to_string(), Some(Box::new(e)))),
            };
            match frame {
                None => {
                    if self.frames_read != self.frames_total {
                        let detail = format!(
                            "the file ends after {} frames but {} were written",
                            self.frames_read, self.frames_total
                        );
                        return Err(self.corrupt(key, detail, None));
                    }
                    return Ok(None);
                }
                Some(Frame::Undo(_)) => self.frames_read += 1,
                Some(Frame::Change(event)) => {
                    self.frames_read += 1;
                    let seq = self.change_seq;
                    self.change_seq += 1;
                    if self.cancelled.get(self.next_cancel) == Some(&seq) {
                        self.next_cancel += 1;
                        continue;
                    }
                    return Ok(Some(event));
                }
            }
        }
    }

    fn corrupt(
        &mut self,
        key: ConXid,
        detail: String,
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    ) -> BufferError {
        self.keep_file = true;
        BufferError::Corruption {
            key,
            path: self.file.path.clone(),
            detail,
            source,
        }
    }
}

impl Iterator for CommittedChanges<'_> {
    type Item = Result<ChangeEvent, BufferError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_change().transpose()
    }
}

impl Drop for CommittedChanges<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Err(e) = self.release_resources() {
            tracing::warn!(error = %e, "could not clean up after a committed transaction");
        }
    }
}
