//! Model-based property test: the buffer against a trivially correct reference.
//!
//! The reference keeps every open transaction as a plain `Vec` and applies an undo row by
//! removing the latest change with its ROWID, at once. The buffer under test runs with a heap
//! budget drawn from "nothing fits" through "one change" to unlimited, so transactions spill,
//! take undo rows on disk and are read back. For random sequences of begins, appends, undos
//! (including ones that match nothing and ones naming XIDSQN 0xFFFFFFFF), commits and
//! rollbacks, every commit must hand over exactly the reference's changes, and the heap must
//! never exceed the budget plus one change.

// Helpers outside #[test] functions may fail the test the same way the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::HashMap;

use cdc_buffer::{CommitHolds, StartInfo, TransactionBuffer, UndoRecord, change_heap_bytes};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{
    ChangeEvent, ConId, ConXid, Decimal, OracleDateTime, RedoAddr, RsId, Scn, TableId, TimeZone,
    Value, Xid,
};
use proptest::collection::vec;
use proptest::prelude::*;

const ROWS: [&str; 4] = [
    "AAAR3sAAEAAAACXAAA",
    "AAAR3sAAEAAAACXAAB",
    "AAAR3sAAEAAAACXAAC",
    "AAAR3sAAEAAAACXAAD",
];
/// Never used by a change: undo rows naming it match nothing.
const STRANGER: &str = "AAAR3sAAEAAAACXZZZ";

/// Four transactions: two in one container, one with the same USN and slot in another, one in
/// another slot.
fn keys() -> [ConXid; 4] {
    [
        ConXid::new(ConId(3), Xid::new(5, 1, 900)),
        ConXid::new(ConId(3), Xid::new(5, 2, 77)),
        ConXid::new(ConId(4), Xid::new(5, 1, 900)),
        ConXid::new(ConId(3), Xid::new(6, 1, 12)),
    ]
}

fn with_unknown_sqn(key: ConXid) -> ConXid {
    ConXid::new(
        key.con,
        Xid::new(key.xid.usn, key.xid.slot, Xid::UNKNOWN_SQN),
    )
}

#[derive(Debug, Clone)]
enum Op {
    Begin(usize),
    Append {
        txn: usize,
        row: Option<usize>,
        change: RowChange,
    },
    Undo {
        txn: usize,
        row: usize,
        unknown_sqn: bool,
    },
    Commit {
        txn: usize,
        unknown_sqn: bool,
    },
    Rollback {
        txn: usize,
        unknown_sqn: bool,
    },
}

fn datetime() -> impl Strategy<Value = OracleDateTime> {
    (
        -4712i16..=9999,
        1u8..=12,
        1u8..=28,
        0u8..24,
        0u8..60,
        0u8..60,
        0u32..1_000_000_000,
    )
        .prop_filter("year 0 does not exist", |t| t.0 != 0)
        .prop_map(|(y, mo, d, h, mi, s, n)| OracleDateTime::new(y, mo, d, h, mi, s, n).unwrap())
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        (any::<i64>(), -40i16..40).prop_map(|(u, s)| Value::Number(Decimal::new(u.into(), s))),
        any::<f32>()
            .prop_filter("NaN is not equal to itself", |f| !f.is_nan())
            .prop_map(Value::BinaryFloat),
        any::<f64>()
            .prop_filter("NaN is not equal to itself", |f| !f.is_nan())
            .prop_map(Value::BinaryDouble),
        "\\PC{0,24}".prop_map(Value::Text),
        "[a-z]{0,400}".prop_map(Value::Text),
        vec(any::<u8>(), 0..64).prop_map(Value::Raw),
        datetime().prop_map(Value::Date),
        datetime().prop_map(Value::Timestamp),
        (datetime(), -900i16..900).prop_map(|(d, m)| Value::TimestampTz(d, TimeZone::Offset(m))),
        (datetime(), "[A-Za-z]{1,10}/[A-Za-z_]{1,12}")
            .prop_map(|(d, r)| Value::TimestampTz(d, TimeZone::Region(r.into()))),
        datetime().prop_map(Value::TimestampLtz),
        any::<i64>().prop_map(Value::IntervalYm),
        any::<i128>().prop_map(|n| Value::IntervalDs(n.into())),
        "[A-Za-z0-9+/]{18}".prop_map(Value::RowId),
        Just(Value::EmptyLob),
        Just(Value::Unavailable),
        Just(Value::Unsupported),
    ]
}

fn image() -> impl Strategy<Value = Option<Vec<ColumnValue>>> {
    proptest::option::of(vec(
        (0u16..300, value()).prop_map(|(column, value)| ColumnValue { column, value }),
        0..5,
    ))
}

fn row_change() -> impl Strategy<Value = RowChange> {
    (
        prop_oneof![
            Just(ChangeOp::Insert),
            Just(ChangeOp::Update),
            Just(ChangeOp::Delete)
        ],
        proptest::option::of("[A-Z0-9]{1,8}"),
        "[A-Z_]{1,12}",
        "[A-Z_]{1,12}",
        any::<u32>(),
        image(),
        image(),
    )
        .prop_map(
            |(op, pdb, owner, table, schema_version, before, after)| RowChange {
                op,
                table: TableId { pdb, owner, table }.into(),
                schema_version,
                before,
                after,
                row_id: None,
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (0..4usize).prop_map(Op::Begin),
        8 => (0..4usize, proptest::option::weighted(0.9, 0..4usize), row_change())
            .prop_map(|(txn, row, change)| Op::Append { txn, row, change }),
        3 => (0..4usize, 0..5usize, proptest::bool::weighted(0.2))
            .prop_map(|(txn, row, unknown_sqn)| Op::Undo { txn, row, unknown_sqn }),
        2 => (0..4usize, proptest::bool::weighted(0.2))
            .prop_map(|(txn, unknown_sqn)| Op::Commit { txn, unknown_sqn }),
        1 => (0..4usize, proptest::bool::weighted(0.2))
            .prop_map(|(txn, unknown_sqn)| Op::Rollback { txn, unknown_sqn }),
    ]
}

fn budget() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        // about one change of the generated sizes
        Just(600),
        Just(2_000),
        Just(8_000),
        Just(30_000),
        Just(u64::MAX),
    ]
}

/// The reference: open transactions as plain lists; undo applied at once.
#[derive(Default)]
struct Reference {
    open: HashMap<ConXid, Vec<ChangeEvent>>,
    unmatched: u64,
}

impl Reference {
    fn resolve(&self, key: ConXid, unknown: bool) -> Option<ConXid> {
        // each generated (container, USN, slot) has one transaction, so the slot names it
        if unknown {
            self.open.contains_key(&key).then_some(key)
        } else {
            Some(key)
        }
    }
}

fn run(budget: u64, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let mut buffer = TransactionBuffer::open(common::settings(dir.path(), budget)).unwrap();
    let mut model = Reference::default();
    let keys = keys();
    let mut n = 0u64;
    let mut largest_change = 0u64;
    for op in ops {
        n += 1;
        let scn = Scn(10_000 + n);
        let addr = RedoAddr::new(RsId::new(9, n as u32, 16), n).unwrap();
        match op {
            Op::Begin(t) => {
                let start = StartInfo {
                    scn,
                    addr: Some(addr),
                    ..StartInfo::default()
                };
                buffer.begin(keys[t], start).unwrap();
                model.open.entry(keys[t]).or_default();
            }
            Op::Append {
                txn,
                row,
                mut change,
            } => {
                change.row_id = row.map(|r| ROWS[r].to_owned());
                // cloned so that capacities equal lengths in both, as heap sizes count capacity
                let event = ChangeEvent { scn, addr, change }.clone();
                largest_change = largest_change.max(change_heap_bytes(&event));
                model.open.entry(keys[txn]).or_default().push(event.clone());
                buffer.append(keys[txn], event).unwrap();
            }
            Op::Undo {
                txn,
                row,
                unknown_sqn,
            } => {
                let row_id = ROWS.get(row).copied().unwrap_or(STRANGER);
                let key = if unknown_sqn {
                    with_unknown_sqn(keys[txn])
                } else {
                    keys[txn]
                };
                match model
                    .resolve(keys[txn], unknown_sqn)
                    .and_then(|k| model.open.get_mut(&k))
                {
                    Some(events) => {
                        match events
                            .iter()
                            .rposition(|e| e.change.row_id.as_deref() == Some(row_id))
                        {
                            Some(i) => {
                                events.remove(i);
                            }
                            None => model.unmatched += 1,
                        }
                    }
                    None => model.unmatched += 1,
                }
                buffer
                    .undo(
                        key,
                        UndoRecord {
                            scn,
                            addr,
                            row_id: row_id.to_owned(),
                        },
                    )
                    .unwrap();
            }
            Op::Commit { txn, unknown_sqn } => {
                let key = if unknown_sqn {
                    with_unknown_sqn(keys[txn])
                } else {
                    keys[txn]
                };
                let expected = model
                    .resolve(keys[txn], unknown_sqn)
                    .and_then(|k| model.open.remove(&k));
                // the holds a commit hands over are those the buffer gave for the key the
                // COMMIT row names just before it
                let holds = CommitHolds {
                    others: buffer.resume_floor(Some(key)),
                    own: buffer.transaction(key).and_then(|t| t.resume_pin()),
                };
                let actual = match buffer.commit(key).unwrap() {
                    Some(mut committed) => {
                        prop_assert_eq!(committed.holds(), holds);
                        let mut out = Vec::new();
                        while let Some(event) = committed.next_change().unwrap() {
                            out.push(event);
                        }
                        prop_assert_eq!(out.len() as u64, committed.event_count());
                        committed.finish().unwrap();
                        Some(out)
                    }
                    None => None,
                };
                prop_assert_eq!(actual, expected);
            }
            Op::Rollback { txn, unknown_sqn } => {
                let key = if unknown_sqn {
                    with_unknown_sqn(keys[txn])
                } else {
                    keys[txn]
                };
                let expected = model
                    .resolve(keys[txn], unknown_sqn)
                    .and_then(|k| model.open.remove(&k))
                    .is_some();
                prop_assert_eq!(buffer.rollback(key).unwrap(), expected);
            }
        }
        let m = buffer.metrics();
        prop_assert!(
            m.heap_bytes <= budget.saturating_add(largest_change),
            "heap {} above budget {} plus one change {}",
            m.heap_bytes,
            budget,
            largest_change
        );
        // the stronger form that holds between calls: spilling brings it back within budget
        prop_assert!(
            m.heap_bytes <= budget,
            "heap {} above budget {}",
            m.heap_bytes,
            budget
        );
        prop_assert_eq!(m.open_transactions, model.open.len() as u64);
        // the ordered pin index answers as a visit of every open transaction would
        for except in keys.iter().copied().map(Some).chain([None]) {
            let fold = buffer
                .open_transactions()
                .filter(|t| Some(t.key()) != except)
                .filter_map(|t| t.resume_pin())
                .reduce(|a, b| (a.0.min(b.0), a.1.min(b.1)));
            prop_assert_eq!(buffer.resume_floor(except), fold);
        }
        let spilled = buffer
            .open_transactions()
            .filter(|t| t.is_spilled())
            .count() as u64;
        prop_assert_eq!(m.spilled_transactions, spilled);
        // committed and rolled-back files are gone; each spilled transaction has one
        prop_assert_eq!(common::spill_files(dir.path()).len() as u64, spilled);
        if budget == u64::MAX {
            let events: u64 = model.open.values().map(|v| v.len() as u64).sum();
            let bytes: u64 = model.open.values().flatten().map(change_heap_bytes).sum();
            prop_assert_eq!(m.buffered_events, events);
            prop_assert_eq!(m.heap_bytes, bytes);
            prop_assert_eq!(m.unmatched_undo, model.unmatched);
            prop_assert_eq!(m.spilled_bytes, 0);
        }
    }
    // whatever is still open commits identically too
    for key in keys {
        let expected = model.open.remove(&key);
        prop_assert_eq!(common::commit_all(&mut buffer, key).unwrap(), expected);
    }
    let m = buffer.metrics();
    prop_assert_eq!(
        (m.heap_bytes, m.spilled_bytes, m.buffered_events),
        (0, 0, 0)
    );
    prop_assert!(common::spill_files(dir.path()).is_empty());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("CDC_BUFFER_MODEL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn buffer_matches_the_reference(budget in budget(), ops in vec(op(), 1..120)) {
        run(budget, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A run of journal frames appended at once leaves a rebuilt transaction exactly as the
    /// same frames appended one by one: its count of changes (an undo frame lowers it unless
    /// it is 0), the buffer's gauges, its first change, its pin and its file.
    #[test]
    fn a_run_of_frames_is_the_frames_one_by_one(
        kinds in vec(any::<bool>(), 1..60),
        cuts in vec(any::<bool>(), 60),
    ) {
        use cdc_buffer::FrameRun;
        use cdc_buffer::codec::{FrameRef, SliceFrames, append_frame};
        use common::{change, key, settings, undo};
        let mut bytes = Vec::new();
        for (n, change_frame) in kinds.iter().enumerate() {
            let n = n as u64 + 1;
            if *change_frame {
                append_frame(FrameRef::Change(&change(n, Some("R"), 3)), &mut bytes);
            } else {
                append_frame(FrameRef::Undo(&undo(n, "R")), &mut bytes);
            }
        }
        let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut one = TransactionBuffer::open(settings(dirs.0.path(), u64::MAX)).unwrap();
        let mut runs = TransactionBuffer::open(settings(dirs.1.path(), u64::MAX)).unwrap();
        let k = key(0, 9, 1, 77);
        for b in [&mut one, &mut runs] {
            prop_assert!(b.restore_journaled(k, None, None, None).unwrap());
        }
        let mut run = FrameRun::new();
        let mut from = 0;
        let mut frames = SliceFrames::new(&bytes);
        let mut i = 0;
        loop {
            let at = frames.offset();
            let Some(frame) = frames.next() else { break };
            let (head, frame) = frame.unwrap();
            one.append_journal_frame(k, head, frame).unwrap();
            if run.is_empty() {
                from = at;
            }
            run.push(head);
            if cuts[i] {
                runs.append_journal_frames(k, &run, frames.bytes(from, frames.offset())).unwrap();
                run = FrameRun::new();
            }
            i += 1;
        }
        if !run.is_empty() {
            runs.append_journal_frames(k, &run, frames.bytes(from, frames.offset())).unwrap();
        }
        let (a, b) = (one.transaction(k).unwrap(), runs.transaction(k).unwrap());
        prop_assert_eq!(a.events(), b.events());
        prop_assert_eq!(a.ops(), b.ops());
        prop_assert_eq!(a.first_change(), b.first_change());
        prop_assert_eq!(a.last_row(), b.last_row());
        prop_assert_eq!(a.resume_pin(), b.resume_pin());
        prop_assert_eq!(a.disk_bytes(), b.disk_bytes());
        let (ma, mb) = (one.metrics(), runs.metrics());
        prop_assert_eq!(ma.buffered_events, mb.buffered_events);
        prop_assert_eq!(ma.spilled_bytes, mb.spilled_bytes);
        let pa = a.spill_path().unwrap().to_owned();
        let pb = b.spill_path().unwrap().to_owned();
        prop_assert_eq!(std::fs::read(pa).ok(), std::fs::read(pb).ok());
    }
}
