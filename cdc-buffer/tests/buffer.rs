//! Behaviour of the buffer, one rule per test.

// Helpers outside #[test] functions may fail the test the same way the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use cdc_buffer::{
    BufferSettings, JournalMark, SessionId, StartInfo, TransactionBuffer, TxnFacts, UndoOutcome,
    change_heap_bytes,
};
use cdc_core::{CdcCode, CdcError, ConXid, Scn, Xid};
use common::*;

fn open(dir: &std::path::Path, budget: u64) -> TransactionBuffer {
    TransactionBuffer::open(settings(dir, budget)).unwrap()
}

fn start(scn: u64, n: u64) -> StartInfo {
    StartInfo {
        scn: Scn(scn),
        addr: Some(addr(n)),
        username: Some("APP".into()),
        session: Some(SessionId {
            sid: 12,
            serial: 34,
        }),
        client_id: None,
        pdb: Some("FREEPDB1".into()),
    }
}

#[test]
fn commit_hands_over_in_redo_order_and_rollback_drops() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    let (a, c) = (key(3, 5, 1, 900), key(3, 5, 2, 901));
    b.begin(a, start(999, 1)).unwrap();
    for n in 1..=3 {
        b.append(a, change(n, Some("R1"), 4)).unwrap();
        b.append(c, change(10 + n, Some("R2"), 4)).unwrap();
    }
    assert_eq!(b.metrics().open_transactions, 2);
    assert_eq!(b.metrics().buffered_events, 6);
    assert!(b.rollback(c).unwrap());
    assert!(!b.rollback(c).unwrap());
    let out = commit_all(&mut b, a).unwrap().unwrap();
    assert_eq!(
        out,
        vec![
            change(1, Some("R1"), 4),
            change(2, Some("R1"), 4),
            change(3, Some("R1"), 4)
        ]
    );
    let m = b.metrics();
    assert_eq!(
        (m.open_transactions, m.buffered_events, m.heap_bytes),
        (0, 0, 0)
    );
    assert_eq!(
        (m.committed_transactions, m.rolled_back_transactions),
        (1, 1)
    );
    // nothing buffered: nothing to publish
    assert!(b.commit(a).unwrap().is_none());
}

/// A transaction with only its START row (one on tables that are not captured, or by an
/// excluded user) holds no resume point, however long it stays open: whatever it writes later
/// is mined at a higher address. Its first change holds it from there.
#[test]
fn only_a_change_holds_the_resume_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    let (long, other) = (key(3, 5, 1, 900), key(3, 5, 2, 901));
    b.begin(long, start(1001, 1)).unwrap();
    assert_eq!(b.transaction(long).unwrap().resume_pin(), None);
    assert_eq!(b.resume_floor(None), None);
    b.begin(other, start(1002, 2)).unwrap();
    b.append(other, change(3, Some("A"), 1)).unwrap();
    assert_eq!(b.resume_floor(None), Some((Scn(1003), addr(3))));
    assert_eq!(b.resume_floor(Some(other)), None);
    b.append(long, change(7, Some("B"), 1)).unwrap();
    assert_eq!(
        b.transaction(long).unwrap().own_pin(),
        Some((Scn(1007), addr(7)))
    );
    assert_eq!(b.resume_floor(Some(other)), Some((Scn(1007), addr(7))));
    // its first SCN is still its START row's (the age, the metrics)
    assert_eq!(b.transaction(long).unwrap().first_scn(), Scn(1001));
}

/// A transaction whose START row was not mined (a restart after it) names the user and the
/// session of its first change row that names a session; one with a START row keeps the START
/// row's; one rebuilt from the journal, whose START row names no session, takes its next
/// change row's.
#[test]
fn without_a_session_the_change_rows_name_the_user_and_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    let (restarted, started, rebuilt) = (key(3, 5, 1, 900), key(3, 5, 2, 901), key(3, 5, 3, 9));
    let session = |sid| SessionId { sid, serial: 7 };
    b.append(restarted, change(3, Some("A"), 1)).unwrap();
    b.note_origin(restarted, session(40), || Some("U40".into()));
    // once a session is known it stays
    b.note_origin(restarted, session(41), || panic!("asked again"));
    b.begin(started, start(1002, 2)).unwrap();
    b.append(started, change(4, Some("B"), 1)).unwrap();
    b.note_origin(started, session(42), || panic!("a START row names them"));
    b.begin(
        rebuilt,
        StartInfo {
            session: None,
            ..start(1001, 1)
        },
    )
    .unwrap();
    b.append(rebuilt, change(5, Some("C"), 1)).unwrap();
    b.note_origin(rebuilt, session(43), || {
        panic!("the START row names the user")
    });
    fn facts(b: &TransactionBuffer, k: ConXid) -> TxnFacts {
        TxnFacts::from(b.transaction(k).unwrap())
    }
    assert_eq!(facts(&b, restarted).username.as_deref(), Some("U40"));
    assert_eq!(facts(&b, restarted).session, Some(session(40)));
    assert_eq!(facts(&b, started).username.as_deref(), Some("APP"));
    assert_eq!(
        facts(&b, started).session,
        Some(SessionId {
            sid: 12,
            serial: 34
        })
    );
    assert_eq!(facts(&b, rebuilt).username.as_deref(), Some("APP"));
    assert_eq!(facts(&b, rebuilt).session, Some(session(43)));
    // a user named by the journal stays when a row names the session
    let journaled = key(3, 5, 4, 10);
    b.append(journaled, change(6, Some("D"), 1)).unwrap();
    b.note_user(journaled, Some("BATCH".into()));
    b.note_origin(journaled, session(44), || {
        panic!("the journal named the user")
    });
    assert_eq!(facts(&b, journaled).username.as_deref(), Some("BATCH"));
    assert_eq!(facts(&b, journaled).session, Some(session(44)));
    // an unknown transaction is left alone
    b.note_origin(key(3, 9, 9, 9), session(45), || {
        panic!("no such transaction")
    });
    assert_eq!(b.metrics().open_transactions, 4);
}

#[test]
fn undo_removes_the_latest_earlier_change_with_the_same_rowid() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    let k = key(0, 5, 1, 900);
    b.append(k, change(1, Some("A"), 1)).unwrap();
    b.append(k, change(2, Some("B"), 1)).unwrap();
    b.append(k, change(3, Some("A"), 1)).unwrap();
    b.append(k, change(4, Some("B"), 1)).unwrap();
    assert_eq!(b.undo(k, undo(5, "A")).unwrap(), UndoOutcome::Removed);
    assert_eq!(b.undo(k, undo(6, "A")).unwrap(), UndoOutcome::Removed);
    assert_eq!(b.undo(k, undo(7, "A")).unwrap(), UndoOutcome::Unmatched);
    assert_eq!(
        b.undo(key(0, 9, 9, 9), undo(8, "A")).unwrap(),
        UndoOutcome::NoTransaction
    );
    let m = b.metrics();
    assert_eq!(
        (m.undone_events, m.unmatched_undo, m.buffered_events),
        (2, 2, 2)
    );
    let out = commit_all(&mut b, k).unwrap().unwrap();
    assert_eq!(out, vec![change(2, Some("B"), 1), change(4, Some("B"), 1)]);
}

#[test]
fn the_all_zero_xid_never_creates_an_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    let zero = ConXid::new(cdc_core::ConId(3), Xid::ZERO);
    b.begin(zero, start(1, 1)).unwrap();
    b.append(zero, change(1, Some("A"), 1)).unwrap();
    assert_eq!(b.undo(zero, undo(2, "A")).unwrap(), UndoOutcome::Ignored);
    assert_eq!(b.metrics().open_transactions, 0);
    assert!(b.commit(zero).unwrap().is_none());
    assert!(!b.rollback(zero).unwrap());
}

#[test]
fn unknown_sequence_rows_belong_to_the_transaction_open_in_the_slot() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    let real = key(3, 5, 0, 614);
    let unknown = key(3, 5, 0, Xid::UNKNOWN_SQN);
    let other_pdb = key(4, 5, 0, 614);
    b.append(real, change(1, Some("A"), 1)).unwrap();
    b.append(real, change(2, Some("B"), 1)).unwrap();
    b.append(other_pdb, change(3, Some("B"), 1)).unwrap();
    // the undo row of 5.0.4294967295 undoes 5.0.614 of its own container only
    assert_eq!(b.undo(unknown, undo(4, "B")).unwrap(), UndoOutcome::Removed);
    assert_eq!(b.transaction(other_pdb).unwrap().events(), 1);
    let out = commit_all(&mut b, unknown).unwrap().unwrap();
    assert_eq!(out, vec![change(1, Some("A"), 1)]);
    // none open in the slot: dropped, counted
    b.append(unknown, change(5, Some("A"), 1)).unwrap();
    assert_eq!(
        b.undo(unknown, undo(6, "A")).unwrap(),
        UndoOutcome::NoTransaction
    );
    assert!(!b.rollback(unknown).unwrap());
    let m = b.metrics();
    assert_eq!(m.open_transactions, 1);
    assert_eq!(m.unresolved_rows, 3);
    assert_eq!(m.unmatched_undo, 1);
    // a rollback row with the unknown sequence ends the open transaction
    assert!(b.rollback(key(4, 5, 0, Xid::UNKNOWN_SQN)).unwrap());
    assert_eq!(b.metrics().open_transactions, 0);
}

#[test]
fn the_newest_transaction_in_a_slot_wins() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    let old = key(0, 5, 0, 600);
    let new = key(0, 5, 0, 601);
    b.append(old, change(1, Some("A"), 1)).unwrap();
    b.append(new, change(2, Some("A"), 1)).unwrap();
    assert_eq!(
        b.undo(key(0, 5, 0, Xid::UNKNOWN_SQN), undo(3, "A"))
            .unwrap(),
        UndoOutcome::Removed
    );
    assert_eq!(b.transaction(old).unwrap().events(), 1);
    assert_eq!(b.transaction(new).unwrap().events(), 0);
}

#[test]
fn views_give_the_engine_what_the_resume_rule_and_journal_need() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    b.set_clock_ms(5_000);
    let k = key(3, 5, 1, 900);
    // a change may arrive with a lower SCN than the START row (private strands)
    b.begin(k, start(1005, 4)).unwrap();
    b.append(k, change(3, Some("A"), 1)).unwrap();
    b.append(k, change(9, Some("A"), 1)).unwrap();
    b.undo(k, undo(10, "A")).unwrap();
    let v = b.transaction(k).unwrap();
    assert_eq!(v.buffered_at_ms(), 5_000);
    assert_eq!(v.first_change(), Some((Scn(1003), addr(3))));
    assert_eq!(v.last_row(), Some((Scn(1010), addr(10))));
    assert_eq!(v.first_scn(), Scn(1003));
    assert_eq!(v.resume_pin(), Some((Scn(1003), addr(3))));
    assert_eq!(v.username(), Some("APP"));
    assert_eq!(v.ops(), 3);
    assert_eq!(v.events(), 1);
    assert!(v.journaled().is_none());
    let mark = JournalMark {
        ops: 3,
        scn: Scn(1010),
        addr: addr(10),
        bytes: 0,
    };
    assert!(b.mark_journaled(k, mark));
    assert_eq!(
        b.transaction(k).unwrap().resume_pin(),
        Some((Scn(1010), addr(10)))
    );
    assert!(!b.mark_journaled(key(0, 1, 1, 1), mark));
    assert_eq!(b.metrics().oldest_open_scn, Some(Scn(1003)));
    let committed = b.commit(k).unwrap().unwrap();
    let summary = committed.summary();
    assert_eq!(committed.first_scn(), summary.first_scn());
    assert_eq!(committed.data_bytes(), summary.data_bytes);
    drop(committed);
    assert_eq!(summary.first_scn(), Scn(1003));
    assert_eq!(summary.event_count, 1);
    assert_eq!(
        summary.start.unwrap().session,
        Some(SessionId {
            sid: 12,
            serial: 34
        })
    );
    assert_eq!(summary.journaled, Some(mark));
}

#[test]
fn a_released_transaction_never_commits() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), 0);
    let k = key(3, 5, 1, 900);
    b.append(k, change(1, Some("A"), 10)).unwrap();
    assert!(b.transaction(k).unwrap().is_spilled());
    let released = b.release(k).unwrap().unwrap();
    assert_eq!(released.events, 1);
    assert!(spill_files(dir.path()).is_empty());
    assert!(b.ledger().contains(k));
    // the transaction was not dead after all: its later rows and COMMIT arrive
    b.append(k, change(2, Some("A"), 10)).unwrap();
    let error = b.commit(k).unwrap_err();
    assert_eq!(error.code(), CdcCode::OrphanReleaseViolation);
    let cdc: CdcError = error.into();
    assert!(cdc.to_string().starts_with("[CDC-7001]"), "{cdc}");
    assert_eq!(b.metrics().released_transactions, 1);
}

#[test]
fn spilled_transactions_read_back_whole_and_the_file_goes_once_queued() {
    let dir = tempfile::tempdir().unwrap();
    let one = change_heap_bytes(&change(1, Some("A"), 100));
    // room for about three changes
    let mut b = open(dir.path(), 3 * one + one / 2);
    let big = key(0, 1, 1, 1);
    let small = key(0, 2, 2, 2);
    let mut expected = Vec::new();
    for n in 1..=4 {
        b.append(big, change(n, Some(&format!("R{n}")), 100))
            .unwrap();
        expected.push(change(n, Some(&format!("R{n}")), 100));
    }
    assert!(b.transaction(big).unwrap().is_spilled());
    assert_eq!(b.metrics().heap_bytes, 0);
    b.append(small, change(50, Some("S"), 100)).unwrap();
    assert!(!b.transaction(small).unwrap().is_spilled());
    // a spilled transaction keeps appending to its file, never to the heap
    for n in 5..=40 {
        b.append(big, change(n, Some(&format!("R{n}")), 100))
            .unwrap();
        expected.push(change(n, Some(&format!("R{n}")), 100));
        assert_eq!(
            b.metrics().heap_bytes,
            change_heap_bytes(&change(50, Some("S"), 100))
        );
    }
    let m = b.metrics();
    assert_eq!(
        (m.spilled_transactions, m.spills, m.buffered_events),
        (1, 1, 41)
    );
    assert!(m.spilled_bytes > 0);
    let largest = b.largest(10);
    assert_eq!(largest[0].key, big);
    assert_eq!(largest[0].events, 40);
    assert!(largest[0].disk_bytes > 0 && largest[0].heap_bytes == 0);
    assert_eq!(largest[1].key, small);

    let path = b.transaction(big).unwrap().spill_path().unwrap().to_owned();
    let mut committed = b.commit(big).unwrap().unwrap();
    assert_eq!(committed.event_count(), 40);
    let mut out = Vec::new();
    while let Some(event) = committed.next_change().unwrap() {
        // the file stays until the records are queued
        assert!(path.exists());
        out.push(event);
    }
    committed.finish().unwrap();
    assert_eq!(out, expected);
    assert!(!path.exists());
    let m = b.metrics();
    assert_eq!(
        (m.spilled_transactions, m.spilled_bytes, m.open_transactions),
        (0, 0, 1)
    );
}

#[test]
fn dropping_a_commit_early_still_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), 0);
    let k = key(0, 1, 1, 1);
    for n in 1..=5 {
        b.append(k, change(n, Some("A"), 10)).unwrap();
    }
    let mut committed = b.commit(k).unwrap().unwrap();
    committed.next_change().unwrap();
    drop(committed);
    assert!(spill_files(dir.path()).is_empty());
    assert_eq!(b.metrics().spilled_bytes, 0);
    // the same on the heap: the bytes it held leave the gauge
    let mut b = open(dir.path(), u64::MAX);
    for n in 1..=5 {
        b.append(k, change(n, Some("A"), 10)).unwrap();
    }
    drop(b.commit(k).unwrap());
    assert_eq!(b.metrics().heap_bytes, 0);
}

#[test]
fn undo_rows_against_a_spilled_transaction_apply_at_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), 0);
    let k = key(0, 1, 1, 1);
    b.append(k, change(1, Some("A"), 5)).unwrap();
    b.append(k, change(2, Some("B"), 5)).unwrap();
    b.append(k, change(3, Some("A"), 5)).unwrap();
    assert_eq!(b.undo(k, undo(4, "A")).unwrap(), UndoOutcome::Deferred);
    b.append(k, change(5, Some("A"), 5)).unwrap();
    assert_eq!(b.undo(k, undo(6, "B")).unwrap(), UndoOutcome::Deferred);
    assert_eq!(b.undo(k, undo(7, "B")).unwrap(), UndoOutcome::Deferred);
    assert_eq!(b.undo(k, undo(8, "A")).unwrap(), UndoOutcome::Deferred);
    let out = commit_all(&mut b, k).unwrap().unwrap();
    assert_eq!(out, vec![change(1, Some("A"), 5)]);
    let m = b.metrics();
    assert_eq!((m.undone_events, m.unmatched_undo), (3, 1));
}

#[test]
fn leftover_spill_files_are_removed_at_start_and_at_drop() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("txn-0-1.1.1-1.spill"),
        b"from an earlier run",
    )
    .unwrap();
    std::fs::write(dir.path().join("README"), b"not ours").unwrap();
    let mut b = open(dir.path(), 0);
    assert_eq!(spill_files(dir.path()), vec!["README".to_owned()]);
    b.append(key(0, 1, 1, 1), change(1, Some("A"), 5)).unwrap();
    assert_eq!(spill_files(dir.path()).len(), 2);
    drop(b);
    assert_eq!(spill_files(dir.path()), vec!["README".to_owned()]);
}

#[test]
fn the_spill_cap_stops_with_4001_naming_the_ten_largest() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(dir.path(), 0);
    s.spill_max_bytes = 4_000;
    let mut b = TransactionBuffer::open(s).unwrap();
    let mut error = None;
    'outer: for round in 0..100u64 {
        for t in 0..12u16 {
            let k = key(3, t + 1, 1, 77);
            if round == 0 {
                b.begin(k, start(10 + u64::from(t), 1)).unwrap();
            }
            if let Err(e) = b.append(k, change(round * 12 + u64::from(t) + 2, Some("A"), 20)) {
                error = Some(e);
                break 'outer;
            }
        }
    }
    let error = error.expect("the cap must be reached");
    assert_eq!(error.code(), CdcCode::BufferExhausted);
    let text = CdcError::from(error).to_string();
    assert!(
        text.starts_with("[CDC-4001] spilled transactions would take"),
        "{text}"
    );
    assert!(
        text.contains("more than the 4000 bytes allowed by cdc.buffer.spill.max.bytes"),
        "{text}"
    );
    assert_eq!(text.matches("(user APP, first SCN ").count(), 10, "{text}");
    assert!(text.contains("bytes on disk"), "{text}");
    // the buffer refuses more work rather than publish a transaction missing a change
    let again = b
        .append(key(3, 1, 1, 77), change(9_999, Some("A"), 1))
        .unwrap_err();
    assert_eq!(again.code(), CdcCode::BufferExhausted);
    assert!(b.commit(key(3, 1, 1, 77)).is_err());
}

#[test]
fn default_settings_follow_the_spec() {
    let s = BufferSettings::new("orders-cdc");
    assert_eq!(s.memory_max_bytes, 256 * 1024 * 1024);
    assert_eq!(s.spill_max_bytes, 10 * 1024 * 1024 * 1024);
    assert_eq!(
        s.spill_dir,
        std::env::temp_dir()
            .join("oracle-cdc-spill")
            .join("orders-cdc")
    );
    let odd = BufferSettings::default_spill_dir("../a/b c");
    assert_eq!(
        odd,
        std::env::temp_dir()
            .join("oracle-cdc-spill")
            .join(".._a_b_c")
    );
    // one rule with the configuration's (`CdcConfig::spill_dir`): a name of dots only
    // becomes underscores, an empty one `_`
    for (name, part) in [("..", "__"), (".", "_"), ("", "_"), ("a.b", "a.b")] {
        assert_eq!(
            BufferSettings::default_spill_dir(name),
            cdc_core::config::default_spill_dir(&std::env::temp_dir(), name),
        );
        assert_eq!(
            BufferSettings::default_spill_dir(name),
            std::env::temp_dir().join("oracle-cdc-spill").join(part)
        );
    }
}

/// An undo row applied on the heap is kept with the number of changes left before it (the
/// journal's cover for the history through it); a transaction rebuilt with `remined_through`
/// ignores its rows mined again up to there and takes the rest.
#[test]
fn the_last_heap_undo_is_kept_and_a_rebuilt_transaction_ignores_rows_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = open(dir.path(), u64::MAX);
    let k = key(0, 5, 1, 900);
    for n in 1..=3 {
        b.append(k, change(n, Some(&format!("R{n}")), 1)).unwrap();
    }
    assert_eq!(b.transaction(k).unwrap().heap_undo(), None);
    assert_eq!(b.undo(k, undo(4, "R2")).unwrap(), UndoOutcome::Removed);
    b.append(k, change(5, Some("R5"), 1)).unwrap();
    let view = b.transaction(k).unwrap();
    assert_eq!(view.heap_undo(), Some((Scn(1004), addr(4))));
    assert_eq!(
        view.heap_undo_frames(),
        2,
        "R1 and R3 were on the heap after it"
    );
    assert_eq!(view.own_pin(), Some((Scn(1001), addr(1))));
    // an undo row after the spill is a frame: the heap undo stays what it was
    assert!(b.spill_for_journal(k).unwrap());
    assert_eq!(b.undo(k, undo(6, "R5")).unwrap(), UndoOutcome::Deferred);
    let view = b.transaction(k).unwrap();
    assert_eq!(
        (view.heap_undo(), view.heap_undo_frames()),
        (Some((Scn(1004), addr(4))), 2)
    );

    let r = key(0, 6, 1, 901);
    assert!(
        b.restore_journaled(r, None, Some((Scn(1020), addr(20))), Some(addr(20)))
            .unwrap()
    );
    let view = b.transaction(r).unwrap();
    assert_eq!(
        (view.heap_undo(), view.heap_undo_frames()),
        (Some((Scn(1020), addr(20))), 0)
    );
    b.append(r, change(19, Some("A"), 1)).unwrap();
    assert_eq!(b.undo(r, undo(20, "A")).unwrap(), UndoOutcome::Remined);
    b.append(r, change(21, Some("B"), 1)).unwrap();
    assert_eq!(b.metrics().remined_rows_ignored, 2);
    assert_eq!(b.transaction(r).unwrap().events(), 1);
    let out = commit_all(&mut b, r).unwrap().unwrap();
    assert_eq!(out, vec![change(21, Some("B"), 1)]);
}
