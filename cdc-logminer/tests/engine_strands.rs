//! Proof 4 of the capture engine: a row that waits in a private strand reaches the log after
//! rows with higher SCNs, carrying its older SCN. A cursor bounded by SCN would have passed it;
//! the engine's redo-address cursor delivers it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::engine_support;

use std::time::Duration;

use cdc_core::{Scn, Value};
use cdc_logminer::engine::{CaptureEngine, ManualClock, RecordKind};
use cdc_logminer::sim::Scenario;
use engine_support::*;

#[test]
fn a_late_private_strand_row_is_delivered() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/private_strand_rows_arrive_late.json"
    );
    let scenario = Scenario::load(std::path::Path::new(path)).unwrap();
    // one scenario event per step: the engine mines while s1's change is still in its strand
    let source = scenario.into_source(1).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let mut engine =
        CaptureEngine::open(source, settings(&spill), None, Box::new(clock.clone())).unwrap();
    let mut records = Vec::new();
    // (highest SCN of any row the engine had mined, per step)
    let mut mined_scn_after_step = Vec::new();
    for _ in 0..12 {
        engine.step(&mut records).unwrap();
        mined_scn_after_step.push(engine.metrics().mined_to_scn);
        clock.advance(Duration::from_millis(250));
    }
    let events: Vec<(i64, Scn, Scn)> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Change(c) => {
                let after = c.event.change.after.as_ref()?;
                let id = after.iter().find_map(|cv| {
                    (c.layout.columns[cv.column as usize].name == "EVENT_ID").then(|| {
                        match &cv.value {
                            Value::Number(d) => d.unscaled_at(0).map(|v| v as i64),
                            _ => None,
                        }
                    })
                })??;
                Some((id, c.event.scn, c.commit.commit_scn))
            }
            _ => None,
        })
        .collect();
    let early = events
        .iter()
        .find(|e| e.0 == 2)
        .expect("s2's row is delivered");
    let late = events
        .iter()
        .find(|e| e.0 == 1)
        .expect("s1's late strand row is delivered");
    // s2 committed (and was delivered) first: commit order is redo order
    let early_index = events.iter().position(|e| e.0 == 2).unwrap();
    let late_index = events.iter().position(|e| e.0 == 1).unwrap();
    assert!(early_index < late_index);
    // s1's row carries an SCN below what the engine had already mined when s2 was delivered:
    // a cursor "SCN > last mined SCN" would never have selected it
    assert!(
        late.1 < early.2,
        "late row SCN {} vs early commit SCN {}",
        late.1,
        early.2
    );
    let scn_cursor_when_late_row_arrived = mined_scn_after_step
        .iter()
        .copied()
        .filter(|scn| *scn >= early.2.get())
        .min()
        .unwrap();
    assert!(late.1.get() < scn_cursor_when_late_row_arrived);
}
