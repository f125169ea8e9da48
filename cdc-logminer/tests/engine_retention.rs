//! The redo-retention guard: a long open transaction pins the resume point in an old log;
//! once the archived logs before it are purged, the engine warns (log and ops event) once,
//! and its metrics say how old that log is and that it is the oldest still available.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::engine_support;

use std::time::Duration;

use cdc_core::{OpsKind, Scn, Value};
use cdc_logminer::engine::{CaptureEngine, Clock as _, EngineRecord, ManualClock, RecordKind};
use cdc_logminer::sim::{DbOp, SimConfig, SimDatabase, SimSource};
use cdc_logminer::source::{CaptureMode, LogFile, LogInventoryQuery, RedoSource as _};
use engine_support::*;

fn insert(s: &mut SimSource, session: &str, code: &str) {
    s.apply(&DbOp::Begin {
        session: session.into(),
        pdb: None,
        user: None,
        private_strand: None,
    })
    .unwrap();
    s.apply(&DbOp::Insert {
        session: session.into(),
        table: "APP.CODES".into(),
        row: vec![("CODE".into(), Value::Text(code.into()))],
        fails: false,
    })
    .unwrap();
}

fn committed(s: &mut SimSource, code: &str) {
    insert(s, "short", code);
    s.apply(&DbOp::Commit {
        session: "short".into(),
    })
    .unwrap();
}

fn inventory(s: &mut SimSource) -> Vec<LogFile> {
    s.log_inventory(&LogInventoryQuery {
        from: Scn::ZERO,
        mode: CaptureMode::Online,
        destination: None,
    })
    .unwrap()
}

fn log_seq(inv: &[LogFile], seq: u32) -> &LogFile {
    inv.iter().find(|l| l.sequence == seq).unwrap()
}

fn warnings(records: &[EngineRecord]) -> Vec<&std::collections::BTreeMap<String, String>> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Ops(e) if e.kind == OpsKind::RedoRetentionWarning => Some(&e.details),
            _ => None,
        })
        .collect()
}

/// A database whose logs `logs` each hold one short transaction, a minute apart.
fn with_short_logs(seed: u64, logs: std::ops::RangeInclusive<u32>) -> SimSource {
    let db = SimDatabase::new(SimConfig {
        seed,
        ..SimConfig::default()
    })
    .unwrap();
    let mut s = SimSource::new(db);
    short_logs(&mut s, logs);
    s
}

fn short_logs(s: &mut SimSource, logs: std::ops::RangeInclusive<u32>) {
    for seq in logs {
        committed(s, &format!("S{seq}"));
        s.apply(&DbOp::Tick { millis: 60_000 }).unwrap();
        s.apply(&DbOp::LogSwitch).unwrap();
    }
}

#[test]
fn a_pinned_resume_point_warns_once_when_the_logs_before_it_are_purged() {
    // sequences 1 and 2: short transactions
    let mut s = with_short_logs(28, 1..=2);
    // sequence 3: the long transaction begins, then more short ones through sequence 6
    insert(&mut s, "long", "LONG");
    short_logs(&mut s, 3..=6);
    s.apply(&DbOp::Archive).unwrap();
    let inv = inventory(&mut s);
    let seq3 = log_seq(&inv, 3).clone();
    let seq3_time = seq3.first_time_ms.expect("the simulator gives FIRST_TIME");
    assert!(
        log_seq(&inv, 1).first_time_ms.unwrap() < seq3_time,
        "FIRST_TIME follows the simulator's clock"
    );

    // the engine starts in sequence 3, with its clock an hour after that log began
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    clock.advance(Duration::from_millis(seq3_time + 3_600_000));
    let mut settings = settings(&spill);
    settings.start_scn = Some(seq3.first_scn);
    let mut engine = CaptureEngine::open(
        SimSource::new(s.database().clone()),
        settings,
        None,
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut records = Vec::new();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    assert!(warnings(&records).is_empty(), "sequences 1 and 2 are there");
    let m = engine.metrics();
    assert_eq!(m.resume_log_is_oldest, Some(false));
    let age = m.resume_log_age_ms.unwrap();
    assert!(age >= 3_600_000, "{age}");
    assert_eq!(
        engine.buffer_metrics().open_transactions,
        1,
        "the long transaction holds the resume point"
    );

    // sequences 1 and 2 are purged: the resume point needs the oldest log still available
    engine
        .source_mut()
        .apply(&DbOp::Purge {
            up_to_sequence: 2,
            remove_file: false,
        })
        .unwrap();
    let before = records.len();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let now = clock.now_ms();
    let found = warnings(&records[before..]);
    assert_eq!(found.len(), 1, "{found:?}");
    let w = found[0];
    assert_eq!(w["sequence"], "3");
    assert_eq!(w["thread"], "1");
    assert_eq!(w["oldest_available_sequence"], "3");
    assert_eq!(w["log_first_scn"], seq3.first_scn.to_string());
    let resume: u64 = w["resume_scn"].parse().unwrap();
    assert!(resume >= seq3.first_scn.get() && resume < seq3.next_scn.get());
    // it names the transaction that holds the resume point: the long one
    let open = engine.open_transactions(10);
    assert_eq!(open.transactions.len(), 1);
    let long = &open.transactions[0];
    assert_eq!(w["holding_xid"], long.key.xid.to_string());
    assert_eq!(w["holding_con_id"], long.key.con.to_string());
    assert_eq!(w["holding_first_scn"], long.first_scn.to_string());
    assert_eq!(w["holding_events"], "1");
    assert_eq!(Some(w["holding_user"].as_str()), long.user.as_deref());
    let warned_age: u64 = w["age_ms"].parse().unwrap();
    assert!(warned_age > age && warned_age <= now - seq3_time, "{w:?}");
    let m = engine.metrics();
    assert_eq!(m.resume_log_is_oldest, Some(true));
    assert_eq!(m.resume_log_age_ms, Some(now - 250 - seq3_time));

    // more steps in the same state: no second warning
    let before = records.len();
    engine
        .source_mut()
        .apply(&DbOp::Tick { millis: 1_000 })
        .unwrap();
    run_until_quiet(&mut engine, &clock, &mut records, 5).unwrap();
    assert!(warnings(&records[before..]).is_empty());

    // the long transaction ends: the resume point leaves sequence 3
    engine
        .source_mut()
        .apply(&DbOp::Commit {
            session: "long".into(),
        })
        .unwrap();
    engine.source_mut().apply(&DbOp::LogSwitch).unwrap();
    run_until_quiet(&mut engine, &clock, &mut records, 3).unwrap();
    let m = engine.metrics();
    assert_eq!(m.resume_log_is_oldest, Some(false));
    assert_eq!(engine.buffer_metrics().open_transactions, 0);
    assert_eq!(warnings(&records).len(), 1);
}

/// With no transaction open, the resume point is where mining has reached: a task far enough
/// behind (here one log per step, the logs before its start purged) needs the oldest log
/// still available, and the warning names no transaction.
#[test]
fn a_resume_point_no_transaction_holds_warns_without_naming_one() {
    let mut s = with_short_logs(29, 1..=5);
    s.apply(&DbOp::Archive).unwrap();
    s.apply(&DbOp::Purge {
        up_to_sequence: 2,
        remove_file: false,
    })
    .unwrap();
    let seq3 = log_seq(&inventory(&mut s), 3).clone();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut settings = settings(&spill);
    settings.start_scn = Some(seq3.first_scn);
    settings.max_logs_per_step = 1;
    let mut engine = CaptureEngine::open(
        SimSource::new(s.database().clone()),
        settings,
        None,
        Box::new(clock.clone()),
    )
    .unwrap();
    let mut records = Vec::new();
    engine.step(&mut records).unwrap();
    let found = warnings(&records);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["sequence"], "3");
    assert_eq!(engine.buffer_metrics().open_transactions, 0);
    assert!(
        found[0].keys().all(|k| !k.starts_with("holding_")),
        "{:?}",
        found[0]
    );
}
