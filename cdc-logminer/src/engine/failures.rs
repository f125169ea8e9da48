//! Rows that could not be decoded, held until their transaction ends.
//!
//! Whether such a row matters is known only at the end of its transaction: a ROLLBACK drops it
//! with the rest, an undo row (ROLLBACK TO SAVEPOINT) takes it back, and at a restart a
//! transaction that was acknowledged before is mined again only to be skipped whole — after a
//! DDL, LogMiner returns its older rows generic (STATUS 2), so deciding at the row would stop
//! the task, or fill the DLQ, over changes that were published long ago. So the engine holds a
//! failure with its transaction and acts at COMMIT: `cdc.on.decode.error=fail` stops there,
//! `dlq` writes the DLQ records just before the transaction's changes.

use cdc_core::{CdcError, ConXid, OpsEvent};

use super::DlqRecord;

/// By default at most this many failures are held at once (about 1 KiB each with `dlq`).
/// Past it, a failure is acted on as its row is applied, as if its transaction had committed.
pub(super) const HELD_FAILURES_MAX: usize = 16_384;

/// What a committing transaction's failures come to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AtCommit {
    /// Nothing: the transaction was published before.
    Pass,
    /// `cdc.on.decode.error=fail`: the task stops with the first failure.
    Stop,
    /// `dlq`: the DLQ records go out before the transaction's changes, carrying its commit
    /// with `acknowledged` changes.
    Send { acknowledged: u64 },
}

/// Decides for a committing transaction with `failures` rows that could not be decoded and
/// `changes` that were (its records), by the restart's skip decision.
///
/// - Skipped whole, or every record a run could have made of it acknowledged (`n` at least
///   `changes + failures`: an earlier run decoded them all, before a DDL): it was published.
/// - With `dlq`, `n` at least `changes`: an earlier run that met the same failures sent their
///   DLQ records before the changes, and then the changes. `n` = 0 is the position the DLQ
///   records themselves carry.
/// - Otherwise the failures are new to what was acknowledged: stop, or send them. With `dlq`
///   and some changes acknowledged they may go out a second time (an earlier run that met them
///   too sent them already): twice is better than never.
pub(super) fn at_commit(
    mode: cdc_core::config::DecodeErrorAction,
    decision: cdc_offset::SkipDecision,
    changes: u64,
    failures: u64,
) -> AtCommit {
    use cdc_core::config::DecodeErrorAction;
    use cdc_offset::SkipDecision;

    let dlq = mode == DecodeErrorAction::Dlq;
    match decision {
        SkipDecision::SkipWhole => AtCommit::Pass,
        SkipDecision::SkipFirst(n) if n >= changes.saturating_add(failures) => AtCommit::Pass,
        SkipDecision::SkipFirst(n) if dlq && (n == 0 || n >= changes) => AtCommit::Pass,
        _ if !dlq => AtCommit::Stop,
        SkipDecision::SkipFirst(n) => AtCommit::Send { acknowledged: n },
        SkipDecision::EmitAll => AtCommit::Send { acknowledged: 0 },
    }
}

/// One row that could not be decoded.
#[derive(Debug)]
pub(super) struct HeldFailure {
    /// The row's ROWID: an undo row with it takes the failure back.
    pub row_id: Option<String>,
    /// The stop, with `cdc.on.decode.error=fail`.
    pub error: CdcError,
    /// The DLQ record and its ops event, with `dlq`.
    pub dlq: Option<(DlqRecord, OpsEvent)>,
}

/// The failures of the open transactions, in redo order within each.
#[derive(Debug)]
pub(super) struct HeldFailures {
    by_txn: foldhash::HashMap<ConXid, Vec<HeldFailure>>,
    count: usize,
    max: usize,
}

impl HeldFailures {
    pub fn with_max(max: usize) -> HeldFailures {
        HeldFailures {
            by_txn: foldhash::HashMap::default(),
            count: 0,
            max,
        }
    }

    pub fn is_full(&self) -> bool {
        self.count >= self.max
    }

    /// Whether open transaction `key` (a buffer key) holds a row that could not be decoded.
    pub fn holds(&self, key: ConXid) -> bool {
        self.count > 0 && self.by_txn.contains_key(&key)
    }

    pub fn hold(&mut self, key: ConXid, failure: HeldFailure) {
        self.by_txn.entry(key).or_default().push(failure);
        self.count += 1;
    }

    /// An undo row of `key` with `row_id`: takes back the latest failure with that ROWID, if
    /// there is one. When the transaction also buffered changes of that row, the failure is
    /// taken as the latest: a row's changes in one transaction decode alike, as they are read
    /// with the same dictionary.
    pub fn undo(&mut self, key: ConXid, row_id: &str) -> bool {
        if self.count == 0 {
            return false;
        }
        let key = self.resolve(key);
        let Some(held) = self.by_txn.get_mut(&key) else {
            return false;
        };
        let Some(at) = held
            .iter()
            .rposition(|f| f.row_id.as_deref() == Some(row_id))
        else {
            return false;
        };
        held.remove(at);
        if held.is_empty() {
            self.by_txn.remove(&key);
        }
        self.count -= 1;
        true
    }

    /// The transaction ended: its failures, if it had any. Inlined: every COMMIT and
    /// ROLLBACK asks, and nearly always nothing is held (an empty vector, never allocated).
    #[inline]
    pub fn take(&mut self, key: ConXid) -> Vec<HeldFailure> {
        if self.count == 0 {
            return Vec::new();
        }
        let key = self.resolve(key);
        let held = self.by_txn.remove(&key).unwrap_or_default();
        self.count -= held.len();
        held
    }

    /// Undo and ROLLBACK rows may carry XIDSQN 0xFFFFFFFF: they belong to the transaction
    /// open in their undo slot (the buffer resolves them the same way).
    fn resolve(&self, key: ConXid) -> ConXid {
        if !key.xid.has_unknown_sqn() {
            return key;
        }
        self.by_txn
            .keys()
            .filter(|k| {
                k.con == key.con
                    && k.xid.usn == key.xid.usn
                    && k.xid.slot == key.xid.slot
                    && !k.xid.has_unknown_sqn()
            })
            .max_by_key(|k| k.xid.sqn)
            .copied()
            .unwrap_or(key)
    }
}

#[cfg(test)]
mod tests {
    use cdc_core::{CdcCode, ConId, Xid};

    use super::*;

    fn failure(row_id: &str, what: &str) -> HeldFailure {
        HeldFailure {
            row_id: Some(row_id.to_owned()),
            error: CdcError::new(CdcCode::Decode, what),
            dlq: None,
        }
    }

    fn key(slot: u16) -> ConXid {
        ConXid::new(ConId(0), Xid::new(1, slot, 7))
    }

    #[test]
    fn an_undo_takes_back_the_latest_failure_of_its_row() {
        let mut held = HeldFailures::with_max(HELD_FAILURES_MAX);
        held.hold(key(1), failure("AAA", "first"));
        held.hold(key(1), failure("BBB", "second"));
        held.hold(key(1), failure("AAA", "third"));
        held.hold(key(2), failure("AAA", "other transaction"));
        assert!(held.undo(key(1), "AAA"));
        assert!(!held.undo(key(1), "CCC"));
        assert!(!held.undo(key(3), "AAA"));
        let left: Vec<String> = held
            .take(key(1))
            .into_iter()
            .map(|f| f.error.message().to_owned())
            .collect();
        assert_eq!(left, ["first", "second"]);
        assert!(held.take(key(1)).is_empty());
        assert_eq!(held.count, 1);
        assert!(held.undo(key(2), "AAA"));
        assert_eq!(held.count, 0);
        assert!(held.by_txn.is_empty());
    }

    #[test]
    fn a_rollback_with_the_unknown_sequence_finds_its_transaction() {
        let mut held = HeldFailures::with_max(HELD_FAILURES_MAX);
        held.hold(key(1), failure("AAA", "x"));
        held.hold(key(1), failure("BBB", "y"));
        let unknown = ConXid::new(ConId(0), Xid::new(1, 1, u32::MAX));
        assert!(unknown.xid.has_unknown_sqn());
        assert!(held.undo(unknown, "BBB"));
        assert_eq!(held.take(unknown).len(), 1);
        assert_eq!(held.count, 0);
    }

    #[test]
    fn at_commit_by_skip_decision() {
        use cdc_core::config::DecodeErrorAction::{Dlq, Fail};
        use cdc_offset::SkipDecision::{EmitAll, SkipFirst, SkipWhole};

        // (mode, decision, changes, failures, expected)
        let cases = [
            (Fail, EmitAll, 3, 1, AtCommit::Stop),
            (Dlq, EmitAll, 3, 1, AtCommit::Send { acknowledged: 0 }),
            (Fail, SkipWhole, 3, 1, AtCommit::Pass),
            (Dlq, SkipWhole, 3, 1, AtCommit::Pass),
            // an earlier run decoded all four and all were acknowledged
            (Fail, SkipFirst(4), 3, 1, AtCommit::Pass),
            (Dlq, SkipFirst(4), 3, 1, AtCommit::Pass),
            // the earlier run met the same failure (dlq): its three changes were acknowledged
            (Fail, SkipFirst(3), 3, 1, AtCommit::Stop),
            (Dlq, SkipFirst(3), 3, 1, AtCommit::Pass),
            // the position the DLQ records carry
            (Dlq, SkipFirst(0), 3, 1, AtCommit::Pass),
            (Fail, SkipFirst(0), 3, 1, AtCommit::Stop),
            // part way through the changes
            (Fail, SkipFirst(2), 3, 1, AtCommit::Stop),
            (Dlq, SkipFirst(2), 3, 1, AtCommit::Send { acknowledged: 2 }),
            // a transaction of failures only
            (Dlq, EmitAll, 0, 2, AtCommit::Send { acknowledged: 0 }),
            (Dlq, SkipFirst(0), 0, 2, AtCommit::Pass),
            (Fail, SkipFirst(1), 0, 2, AtCommit::Stop),
            (Fail, SkipFirst(2), 0, 2, AtCommit::Pass),
        ];
        for (mode, decision, changes, failures, expected) in cases {
            assert_eq!(
                at_commit(mode, decision, changes, failures),
                expected,
                "{mode:?} {decision:?} {changes} {failures}"
            );
        }
    }

    #[test]
    fn the_bound_counts_every_transaction() {
        let mut held = HeldFailures::with_max(HELD_FAILURES_MAX);
        for i in 0..HELD_FAILURES_MAX {
            assert!(!held.is_full());
            held.hold(key(u16::try_from(i % 3).unwrap()), failure("R", "x"));
        }
        assert!(held.is_full());
        let _ = held.take(key(0));
        assert!(!held.is_full());
    }
}
