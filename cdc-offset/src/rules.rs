//! The pure rules that make a restart emit exactly the unacknowledged suffix.
//!
//! ```text
//!  emission (engine, at each record)            restart (engine, at task start)
//!  ─────────────────────────────────            ────────────────────────────────
//!  mined_to + holds of open transactions        mine from resume.addr (inclusive), or from the
//!     │ record_resume / resume_candidate          first SCN of the log holding resume.scn
//!     ▼                                           │ JournalRule: rebuild journaled ones
//!                                                 │ FirstStart::keeps_row (until 1st commit)
//!  Position::at_record / at_heartbeat             ▼
//!     │ carried by the record                   COMMIT ─► SkipRule::decide ─► SkipWhole
//!     ▼                                                                     | SkipFirst(n)
//!  acknowledged ─► Kafka Connect commits it                                 | EmitAll
//! ```
//!
//! Why it works (the replay-suffix property, proven by `tests/replay_suffix.rs`):
//! - A record's resume point is at or before the first change of every transaction that is
//!   open at that point in the redo, and of the record's own transaction unless the record is
//!   its last. So every transaction that still has records to emit after it is rebuilt whole on
//!   a restart: from redo, or for a journaled one from the journal (frames before the resume
//!   point) and redo (rows from it).
//! - Transactions rebuilt only in part are ones whose commit is at or before the last
//!   acknowledged commit in redo order: the skip rule drops them whole, and drops the first
//!   `event_index` records of the acknowledged commit itself.
//! - Commit order is the redo order of COMMIT rows, whatever their SCNs (`docs/decisions.md`,
//!   D2), so the skip rule compares redo addresses, never SCNs.

use cdc_core::{ConXid, RedoAddr, Scn};

use crate::position::{FirstStart, LastCommit, Position, ResumePoint};

pub use crate::position::RedoMark;

/// What an open transaction of the buffer holds the resume point back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpenTransaction {
    /// The first row the buffer holds for it.
    pub first: RedoMark,
    /// The last row (change or undo) of its journal chunks that are acknowledged, once it is
    /// journaled; for a transaction rebuilt from the journal at a restart, the mining start
    /// ([`JournalRule::rebuilt_hold`]) until it is journaled again. A restart rebuilds it from
    /// the journal frames before the resume point and mines the rest, so the resume point may
    /// pass its first change.
    pub last_journaled: Option<RedoMark>,
}

impl OpenTransaction {
    pub fn new(first: RedoMark) -> OpenTransaction {
        OpenTransaction {
            first,
            last_journaled: None,
        }
    }

    /// The mark the resume point must not pass for this transaction: its first row, or its
    /// last journaled row when it is journaled. The journaled row is itself mined again (the
    /// journal drops frames at and after the resume point), so an undo row just after it still
    /// finds the change it reverses.
    pub fn hold(&self) -> RedoMark {
        self.last_journaled.unwrap_or(self.first)
    }
}

/// The resume candidate: the earliest of the mined-to point and the holds of the open
/// transactions.
///
/// `mined_to` is the last row applied when the position is computed (for a transaction's
/// record, its COMMIT row, since records are emitted as the COMMIT is applied, never at the end
/// of a step). The address is the earliest address and the SCN the lowest SCN among them; they
/// may come from different marks, because with private strands a later address can carry an
/// older SCN. The lowest SCN is at or below the SCN of the row at the address, so the log
/// holding `resume_scn` starts at or before it.
pub fn resume_candidate(
    mined_to: RedoMark,
    holds: impl IntoIterator<Item = RedoMark>,
) -> ResumePoint {
    let (addr, scn) = holds
        .into_iter()
        .fold((mined_to.addr, mined_to.scn), |(addr, scn), hold| {
            (addr.min(hold.addr), scn.min(hold.scn))
        });
    ResumePoint {
        scn,
        addr: Some(addr),
    }
}

/// Whether a record is the last one its transaction emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordPlace {
    /// More records of the transaction follow: the resume point stays at or before the
    /// transaction's hold, so a restart after this record rebuilds it whole.
    BeforeLast,
    /// The transaction is done once this record is acknowledged: it no longer holds the resume
    /// point back.
    Last,
}

impl RecordPlace {
    /// The place of the record with 0-based `index` among `count` records.
    pub fn of(index: u64, count: u64) -> RecordPlace {
        if index.saturating_add(1) >= count {
            RecordPlace::Last
        } else {
            RecordPlace::BeforeLast
        }
    }
}

/// The resume point a transaction's record carries: [`resume_candidate`] over the other open
/// transactions, plus the committing transaction's own hold unless this is its last record.
pub fn record_resume(
    mined_to: RedoMark,
    open: impl IntoIterator<Item = RedoMark>,
    committing: RedoMark,
    place: RecordPlace,
) -> ResumePoint {
    let own = match place {
        RecordPlace::BeforeLast => Some(committing),
        RecordPlace::Last => None,
    };
    resume_candidate(mined_to, open.into_iter().chain(own))
}

/// What a restart does with the transaction journal (the journal code applies it when it reads
/// the journal topic back at task start).
///
/// `mining_start` is the first redo address the restart mines: the resume address, or without
/// one the start of the log holding `resume_scn`.
/// - A chunk of a newer generation than the position was never acknowledged: ignored.
/// - A transaction is rebuilt from the journal only if its last journaled row is at or after
///   the mining start. Every transaction that still has records to publish is held at or
///   before its last journaled row, so its journal reaches the mining start. One whose journal
///   ends before it had ended when the position was written (its tombstone was not
///   acknowledged yet): rebuilding it would miss the rows between its journal and the mining
///   start (an undo among them would come back as a change), so its chunks are stale.
/// - Of a rebuilt transaction, the frames before the mining start come from the journal and
///   the rows from it on are mined again; of one whose journal names an undo row applied in
///   memory at or after the mining start, the frames through that row come from the journal
///   and the rows after it are mined again ([`JournalRule::keeps_frame`]).
/// - A rebuilt transaction holds the resume point at the mining start (its
///   [`OpenTransaction::last_journaled`] is that mark) until it is journaled again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct JournalRule {
    generation: u64,
    mining_start: RedoMark,
}

impl JournalRule {
    /// The rule of a restart from `position` that mines from `mining_start` (its address as
    /// above, with the position's `resume_scn`).
    pub fn new(position: &Position, mining_start: RedoAddr) -> JournalRule {
        JournalRule {
            generation: position.journal_generation,
            mining_start: RedoMark::new(mining_start, position.resume.scn),
        }
    }

    /// Whether a chunk written by the task start `chunk_generation` may have been acknowledged.
    pub fn keeps_chunk(&self, chunk_generation: u64) -> bool {
        chunk_generation <= self.generation
    }

    /// Whether a transaction whose acknowledged journal ends at `last_journaled` is rebuilt.
    pub fn rebuilds(&self, last_journaled: RedoAddr) -> bool {
        last_journaled >= self.mining_start.addr
    }

    /// Whether a journal frame at `frame` is used (otherwise it is mined again), of a
    /// transaction whose journal names `heap_undo`: the last undo row that took a change back
    /// while the transaction was held in memory, where neither that change nor that undo row
    /// was kept. Its frames up to that row are its history only as a whole (a restart that
    /// mined that undo row again would apply it to an earlier change), so they are all used,
    /// and the rows up to it mined again are ignored ([`JournalRule::remined_through`]).
    pub fn keeps_frame(&self, frame: RedoAddr, heap_undo: Option<RedoAddr>) -> bool {
        frame < self.mining_start.addr || heap_undo.is_some_and(|undo| frame <= undo)
    }

    /// Up to where a rebuilt transaction whose journal names `heap_undo` (as in
    /// [`JournalRule::keeps_frame`]) ignores its rows mined again: that row, when the restart
    /// mines from at or before it.
    pub fn remined_through(&self, heap_undo: Option<RedoAddr>) -> Option<RedoAddr> {
        heap_undo.filter(|undo| self.mining_start.addr <= *undo)
    }

    /// What a rebuilt transaction holds the resume point back to.
    pub fn rebuilt_hold(&self) -> RedoMark {
        self.mining_start
    }
}

/// What a restart does with a mined COMMIT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkipDecision {
    /// All its records were acknowledged before (or it is below the first start's floor).
    SkipWhole,
    /// It is the last acknowledged commit: its first `n` changes were acknowledged, and the
    /// records the engine sends before its changes (the DLQ records of its rows that could
    /// not be decoded), even with `n` = 0.
    SkipFirst(u64),
    /// It comes after everything acknowledged.
    EmitAll,
}

impl SkipDecision {
    /// Whether the record with 0-based `event_index` is emitted.
    pub fn emits(self, event_index: u64) -> bool {
        match self {
            SkipDecision::SkipWhole => false,
            SkipDecision::SkipFirst(n) => event_index >= n,
            SkipDecision::EmitAll => true,
        }
    }
}

/// The skip rule of a restart, from the position it restarts from.
///
/// A commit whose COMMIT row sorts before `last_commit_rs_id/ssn` in redo order is skipped
/// whole; the commit at that address skips its first `event_index` records; everything after
/// is emitted. While the first-start fields are present, a commit below `start_floor_scn` is
/// skipped whole as well (D9 in `docs/decisions.md`: it ended before the start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SkipRule {
    last_commit: Option<(RedoAddr, u64)>,
    floor_scn: Option<Scn>,
}

impl SkipRule {
    pub fn new(position: &Position) -> SkipRule {
        SkipRule {
            last_commit: position.last_commit.map(
                |LastCommit {
                     addr, event_index, ..
                 }| (addr, event_index),
            ),
            floor_scn: position.first_start.as_ref().map(|start| start.floor_scn),
        }
    }

    /// Decides for the COMMIT row at `commit_addr` with `commit_scn`.
    pub fn decide(&self, commit_addr: RedoAddr, commit_scn: Scn) -> SkipDecision {
        if self.floor_scn.is_some_and(|floor| commit_scn < floor) {
            return SkipDecision::SkipWhole;
        }
        match self.last_commit {
            None => SkipDecision::EmitAll,
            Some((last, _)) if commit_addr < last => SkipDecision::SkipWhole,
            Some((last, acknowledged)) if commit_addr == last => {
                SkipDecision::SkipFirst(acknowledged)
            }
            Some(_) => SkipDecision::EmitAll,
        }
    }
}

impl FirstStart {
    /// The rule's state from the three reads of a first start: `open_scn` (`q`, read before
    /// the list), the listed transactions, `floor_scn` (`s`, read after the list, or
    /// `cdc.start.scn`). With a start SCN from the configuration below `q`, `q` becomes that
    /// SCN: nothing between them was listed.
    pub fn new(
        open_scn: Scn,
        open_xids: impl IntoIterator<Item = ConXid>,
        floor_scn: Scn,
    ) -> FirstStart {
        FirstStart {
            floor_scn,
            open_scn: open_scn.min(floor_scn),
            open_xids: open_xids.into_iter().collect(),
        }
    }

    /// Whether a row is kept (given to the buffer) while the rule applies.
    ///
    /// A row at or above the floor is kept. Below it only rows of the listed transactions and
    /// of transactions whose START row is at or after `q` are kept: every transaction open at
    /// the floor is one of those, and any other one ended before the list was read, so its
    /// commit is below the floor and [`SkipRule::decide`] skips it whole. `tx_start_scn` is the
    /// SCN of the transaction's START row when the engine has seen it (for the START row
    /// itself, its own SCN); `None` means it began before mining did.
    pub fn keeps_row(&self, tx: ConXid, row_scn: Scn, tx_start_scn: Option<Scn>) -> bool {
        row_scn >= self.floor_scn
            || tx_start_scn.is_some_and(|start| start >= self.open_scn)
            || self.open_xids.contains(&tx)
    }

    /// Whether a COMMIT at `commit_scn` is published (the same test [`SkipRule::decide`]
    /// applies).
    pub fn keeps_commit(&self, commit_scn: Scn) -> bool {
        commit_scn >= self.floor_scn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::DbIdentity;
    use cdc_core::{ConId, RedoThread, RsId, Xid};
    use proptest::prelude::*;

    fn addr(block: u32) -> RedoAddr {
        RedoAddr::new(RsId::new(1, block, 0x10), 0).unwrap()
    }

    fn mark(block: u32, scn: u64) -> RedoMark {
        RedoMark::new(addr(block), Scn(scn))
    }

    fn xid(sqn: u32) -> ConXid {
        ConXid::new(ConId(3), Xid::new(5, 12, sqn))
    }

    fn position_with(last: Option<(u32, u64)>, floor: Option<u64>) -> Position {
        let mut position =
            Position::new(ResumePoint::at(mark(1, 1)), DbIdentity::new(1, Scn(1)), 1);
        position.last_commit = last.map(|(block, event_index)| LastCommit {
            scn: Scn(100),
            xid: xid(1),
            thread: RedoThread(1),
            addr: addr(block),
            event_index,
        });
        position.first_start = floor.map(|floor| FirstStart::new(Scn(floor), [xid(9)], Scn(floor)));
        position
    }

    #[test]
    fn resume_candidate_table() {
        // (mined_to, holds, expected (addr block, scn))
        let cases: [(RedoMark, Vec<RedoMark>, (u32, u64)); 5] = [
            (mark(10, 100), vec![], (10, 100)),
            (mark(10, 100), vec![mark(4, 40), mark(7, 70)], (4, 40)),
            // a late strand row: later address, older SCN; the two minima come apart
            (mark(10, 100), vec![mark(4, 40), mark(7, 20)], (4, 20)),
            (mark(10, 100), vec![mark(12, 120)], (10, 100)),
            (mark(10, 5), vec![mark(4, 40)], (4, 5)),
        ];
        for (mined_to, holds, (block, scn)) in cases {
            let resume = resume_candidate(mined_to, holds.clone());
            assert_eq!(resume.addr, Some(addr(block)), "{mined_to:?} {holds:?}");
            assert_eq!(resume.scn, Scn(scn), "{mined_to:?} {holds:?}");
        }
    }

    #[test]
    fn record_resume_keeps_the_transaction_until_its_last_record() {
        let mined_to = mark(20, 200); // the COMMIT row
        let open = [mark(15, 150)];
        let own = mark(5, 50);
        let before = record_resume(mined_to, open, own, RecordPlace::BeforeLast);
        assert_eq!(before, ResumePoint::at(own));
        let last = record_resume(mined_to, open, own, RecordPlace::Last);
        assert_eq!(last, ResumePoint::at(mark(15, 150)));
        let alone = record_resume(mined_to, [], own, RecordPlace::Last);
        assert_eq!(alone, ResumePoint::at(mined_to));
        assert_eq!(RecordPlace::of(0, 3), RecordPlace::BeforeLast);
        assert_eq!(RecordPlace::of(1, 3), RecordPlace::BeforeLast);
        assert_eq!(RecordPlace::of(2, 3), RecordPlace::Last);
        assert_eq!(RecordPlace::of(0, 1), RecordPlace::Last);
        assert_eq!(RecordPlace::of(u64::MAX, u64::MAX), RecordPlace::Last);
    }

    #[test]
    fn a_journaled_transaction_holds_at_its_last_journaled_row() {
        let mut tx = OpenTransaction::new(mark(3, 30));
        assert_eq!(tx.hold(), mark(3, 30));
        tx.last_journaled = Some(mark(9, 25));
        assert_eq!(tx.hold(), mark(9, 25));
    }

    #[test]
    fn journal_rule_table() {
        let mut position = position_with(None, None);
        position.journal_generation = 4;
        position.resume = ResumePoint::at(mark(10, 100));
        let rule = JournalRule::new(&position, addr(10));
        assert!(rule.keeps_chunk(3) && rule.keeps_chunk(4) && !rule.keeps_chunk(5));
        // a journal that reaches the mining start is rebuilt; one that ends before it is stale
        assert!(rule.rebuilds(addr(10)));
        assert!(rule.rebuilds(addr(11)));
        assert!(!rule.rebuilds(addr(9)));
        // frames before the start are used, the rest is mined again
        assert!(rule.keeps_frame(addr(9), None));
        assert!(!rule.keeps_frame(addr(10), None));
        assert!(!rule.keeps_frame(addr(10), Some(addr(9))));
        assert!(rule.keeps_frame(addr(10), Some(addr(12))));
        assert!(rule.keeps_frame(addr(12), Some(addr(12))));
        assert!(!rule.keeps_frame(addr(13), Some(addr(12))));
        assert_eq!(rule.remined_through(None), None);
        assert_eq!(rule.remined_through(Some(addr(9))), None);
        assert_eq!(rule.remined_through(Some(addr(10))), Some(addr(10)));
        assert_eq!(rule.rebuilt_hold(), mark(10, 100));
    }

    #[test]
    fn skip_rule_table() {
        use SkipDecision::{EmitAll, SkipFirst, SkipWhole};
        // (last commit (block, event_index), floor, commit (block, scn), expected)
        type Case = (Option<(u32, u64)>, Option<u64>, (u32, u64), SkipDecision);
        let cases: [Case; 11] = [
            (None, None, (1, 1), EmitAll),
            (Some((10, 2)), None, (9, 999), SkipWhole),
            (Some((10, 2)), None, (10, 100), SkipFirst(2)),
            (Some((10, 2)), None, (11, 1), EmitAll),
            // SCNs play no part: a later commit with an older SCN is emitted,
            (Some((10, 2)), None, (11, 5), EmitAll),
            // an earlier commit with a newer SCN is skipped
            (Some((10, 2)), None, (9, 500), SkipWhole),
            // event_index 0 skips none of the commit's changes; the records the engine sends
            // before them (a DLQ record) were acknowledged
            (Some((10, 0)), None, (10, 100), SkipFirst(0)),
            // the first-start floor: commits below it are skipped whole
            (None, Some(50), (11, 49), SkipWhole),
            (None, Some(50), (11, 50), EmitAll),
            (Some((10, 1)), Some(50), (10, 49), SkipWhole),
            (Some((10, 1)), Some(50), (10, 60), SkipFirst(1)),
        ];
        for (last, floor, (block, scn), expected) in cases {
            let rule = position_with(last, floor).skip_rule();
            assert_eq!(
                rule.decide(addr(block), Scn(scn)),
                expected,
                "{last:?} {floor:?} {block} {scn}"
            );
        }
        assert!(!SkipWhole.emits(0));
        assert!(!SkipFirst(2).emits(1));
        assert!(SkipFirst(2).emits(2));
        assert!(EmitAll.emits(0));
    }

    #[test]
    fn first_start_rule_table() {
        // q = 40, s = 50, listed: xid 9
        let rule = FirstStart::new(Scn(40), [xid(9)], Scn(50));
        // (tx, row scn, START scn, kept)
        let cases = [
            (xid(1), 50, None, true),      // at the floor: kept
            (xid(1), 70, Some(10), true),  // above the floor: kept
            (xid(9), 10, None, true),      // listed: kept below the floor
            (xid(1), 45, Some(45), true),  // began at or after q
            (xid(1), 45, Some(40), true),  // START exactly at q
            (xid(1), 39, Some(39), false), // began before q and not listed: ended before the list
            (xid(1), 45, None, false),     // began before mining did and not listed
            (ConXid::new(ConId(4), Xid::new(5, 12, 9)), 10, None, false), // same XID, other PDB
        ];
        for (tx, row_scn, start, kept) in cases {
            assert_eq!(
                rule.keeps_row(tx, Scn(row_scn), start.map(Scn)),
                kept,
                "{tx} {row_scn} {start:?}"
            );
        }
        assert!(!rule.keeps_commit(Scn(49)));
        assert!(rule.keeps_commit(Scn(50)));
        // cdc.start.scn below q: q becomes the start SCN
        let rule = FirstStart::new(Scn(100), [], Scn(60));
        assert_eq!(rule.open_scn, Scn(60));
        assert_eq!(rule.floor_scn, Scn(60));
    }

    #[test]
    fn first_start_position_mines_open_transactions_whole() {
        let identity = DbIdentity::new(7, Scn(1));
        let open = [(xid(1), Scn(30)), (xid(2), Scn(20))];
        let position = Position::first_start(identity, 1, Scn(40), &open, Scn(50));
        assert_eq!(position.resume, ResumePoint::from_scn(Scn(20)));
        let start = position.first_start.clone().unwrap();
        assert_eq!(start.floor_scn, Scn(50));
        assert_eq!(start.open_scn, Scn(40));
        assert_eq!(
            start.open_xids.iter().copied().collect::<Vec<_>>(),
            [xid(1), xid(2)]
        );
        // nothing open: mining begins at q
        let position = Position::first_start(identity, 1, Scn(40), &[], Scn(50));
        assert_eq!(position.resume, ResumePoint::from_scn(Scn(40)));
        // the fields go with the first record of a commit, and stay with heartbeats
        let heartbeat = position.at_heartbeat(ResumePoint::at(mark(2, 41)));
        assert!(heartbeat.first_start.is_some());
        let commit = LastCommit {
            scn: Scn(60),
            xid: xid(3),
            thread: RedoThread(1),
            addr: addr(9),
            event_index: 1,
        };
        let record = heartbeat.at_record(ResumePoint::at(mark(2, 41)), commit);
        assert!(record.first_start.is_none());
        assert_eq!(record.last_commit, Some(commit));
    }

    #[test]
    fn identity_rule() {
        use cdc_core::{CdcCode, CdcError};
        let position = position_with(None, None);
        assert!(position.check_identity(DbIdentity::new(1, Scn(1))).is_ok());
        let other_db = position
            .check_identity(DbIdentity::new(2, Scn(1)))
            .unwrap_err();
        assert_eq!(other_db.code(), CdcCode::Topology);
        let text = CdcError::from(other_db).to_string();
        assert!(text.starts_with("[CDC-5001]"), "{text}");
        assert!(text.contains("DBID 1") && text.contains("DBID 2"), "{text}");
        let reset = position
            .check_identity(DbIdentity::new(1, Scn(900)))
            .unwrap_err();
        assert_eq!(reset.code(), CdcCode::Topology);
        assert!(
            reset.to_string().contains("RESETLOGS at SCN 900"),
            "{reset}"
        );
    }

    #[test]
    fn released_ledger_rule() {
        use crate::position::ReleasedXids;
        use cdc_core::{CdcCode, CdcError};
        let mut ledger = ReleasedXids::new();
        assert!(ledger.check_commit(xid(1), Scn(10)).is_ok());
        ledger.release(xid(1));
        let error = ledger.check_commit(xid(1), Scn(10)).unwrap_err();
        assert_eq!(error.code(), CdcCode::OrphanReleaseViolation);
        let text = CdcError::from(error).to_string();
        assert!(text.starts_with("[CDC-7001]"), "{text}");
        assert!(
            text.contains("3:5.12.1") && text.contains("SCN 10"),
            "{text}"
        );
        // keyed by container: the same XID in another PDB is another transaction
        let other_pdb = ConXid::new(ConId(4), Xid::new(5, 12, 1));
        assert!(ledger.check_commit(other_pdb, Scn(10)).is_ok());
        assert!(ledger.forget(xid(1)));
        assert!(!ledger.forget(xid(1)));
        assert!(ledger.check_commit(xid(1), Scn(10)).is_ok());
    }

    #[test]
    fn released_ledger_is_bounded_and_evicts_the_oldest() {
        use crate::position::ReleasedXids;
        let mut ledger = ReleasedXids::new();
        for sqn in 0..ReleasedXids::CAPACITY as u32 {
            assert_eq!(ledger.release(xid(sqn)), None);
        }
        assert_eq!(ledger.release(xid(1000)), Some(xid(0)));
        assert_eq!(ledger.len(), ReleasedXids::CAPACITY);
        assert!(!ledger.contains(xid(0)));
        // a repeated release refreshes the entry instead of duplicating it
        assert_eq!(ledger.release(xid(1)), None);
        assert_eq!(ledger.len(), ReleasedXids::CAPACITY);
        assert_eq!(ledger.iter().last(), Some(xid(1)));
        assert_eq!(ledger.release(xid(2000)), Some(xid(2)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// The candidate never passes any input, and equals one of them in each component.
        #[test]
        fn candidate_is_the_lower_bound(
            mined in (1u32..1000, 0u64..1000),
            holds in proptest::collection::vec((1u32..1000, 0u64..1000), 0..8),
        ) {
            let mined_to = mark(mined.0, mined.1);
            let holds: Vec<RedoMark> = holds.into_iter().map(|(b, s)| mark(b, s)).collect();
            let resume = resume_candidate(mined_to, holds.iter().copied());
            let addr = resume.addr.unwrap();
            let all: Vec<RedoMark> = holds.iter().copied().chain([mined_to]).collect();
            prop_assert!(all.iter().all(|m| addr <= m.addr && resume.scn <= m.scn));
            prop_assert!(all.iter().any(|m| m.addr == addr));
            prop_assert!(all.iter().any(|m| m.scn == resume.scn));
        }

        /// The skip rule is a total order cut: skipped whole before the last commit, the first
        /// n at it, everything after.
        #[test]
        fn skip_rule_cuts_redo_order(last in 1u32..50, n in 0u64..5, commit in 1u32..50, scn: u64) {
            let rule = position_with(Some((last, n)), None).skip_rule();
            let decision = rule.decide(addr(commit), Scn(scn));
            for index in 0..6u64 {
                let expected = commit > last || (commit == last && index >= n);
                prop_assert_eq!(decision.emits(index), expected);
            }
        }

        /// The ledger never exceeds its capacity, and holds exactly the newest distinct XIDs.
        #[test]
        fn ledger_keeps_the_newest(sqns in proptest::collection::vec(0u32..400, 0..700)) {
            use crate::position::ReleasedXids;
            let ledger: ReleasedXids = sqns.iter().map(|sqn| xid(*sqn)).collect();
            prop_assert!(ledger.len() <= ReleasedXids::CAPACITY);
            let mut newest: Vec<ConXid> = Vec::new();
            for sqn in sqns.iter().rev() {
                if !newest.contains(&xid(*sqn)) && newest.len() < ReleasedXids::CAPACITY {
                    newest.push(xid(*sqn));
                }
            }
            newest.reverse();
            prop_assert_eq!(ledger.iter().collect::<Vec<_>>(), newest);
            let csv = ledger.to_string();
            prop_assert_eq!(ReleasedXids::parse_csv(&csv).unwrap(), ledger);
        }
    }
}
