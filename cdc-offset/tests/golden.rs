//! Golden tests of the persisted offset format (every persisted format has one:
//! `docs/architecture.md`, "Where a change of each kind goes").
//!
//! Each `tests/golden/<name>.json` is an offset exactly as the connector writes it (no trailing
//! newline): it decodes to the position built here, and that position encodes back to the same
//! bytes. `<name>.input.json` files are offsets as an operator or an older tool may leave them;
//! they decode to the same position as `<name>.json` and encode to its bytes. A golden file
//! must never be edited to make a test pass: an offset stored in the field must keep reading.

// Test code: a failed unwrap or assertion is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use cdc_core::{ConId, ConXid, RedoAddr, RedoThread, RsId, Scn, Xid};
use cdc_offset::codec::{self, position_from_offsets_body};
use cdc_offset::{
    DbIdentity, FirstStart, LastCommit, Position, RedoMark, ReleasedXids, ResumePoint,
};
use serde_json::{Value, json};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn read(name: &str) -> String {
    let path = golden_dir().join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn xid(con: u32, usn: u16, slot: u16, sqn: u32) -> ConXid {
    ConXid::new(ConId(con), Xid::new(usn, slot, sqn))
}

fn addr(seq: u32, block: u32, offset: u16, ssn: u64) -> RedoAddr {
    RedoAddr::new(RsId::new(seq, block, offset), ssn).unwrap()
}

const IDENTITY: DbIdentity = DbIdentity {
    dbid: 1_234_567_890,
    resetlogs_scn: Scn(1),
};

fn spec_example() -> Position {
    Position::new(ResumePoint::from_scn(Scn(4_711_000)), IDENTITY, 7)
}

fn full() -> Position {
    let mut position = Position::new(
        ResumePoint::at(RedoMark::new(addr(0x59, 0xd6a1, 0x10, 0), Scn(4_710_950))),
        IDENTITY,
        7,
    );
    position.last_commit = Some(LastCommit {
        scn: Scn(4_711_020),
        xid: xid(3, 5, 12, 900),
        thread: RedoThread(1),
        addr: addr(0x5a, 0x132, 0x100, 2),
        event_index: 3,
    });
    position.released_xids = [xid(3, 4, 2, 17), xid(4, 7, 30, 1021)]
        .into_iter()
        .collect();
    position.snapshot = Some(
        r#"{"v":1,"complete":false,"tables":{"FREEPDB1.APP.ORDERS":{"done":false,"frontier":"[1042]"}}}"#
            .to_owned(),
    );
    position.signal_offset = Some(41);
    position.snapshot_pending = Some("FREEPDB1.APP.NEW_TABLE".to_owned());
    position
}

fn first_start() -> Position {
    let open = [
        (xid(3, 9, 1, 5), Scn(4_700_100)),
        (xid(3, 4, 2, 17), Scn(4_705_000)),
        (xid(4, 4, 2, 17), Scn(4_709_000)),
    ];
    Position::first_start(IDENTITY, 1, Scn(4_710_990), &open, Scn(4_711_000))
}

fn first_start_heartbeat() -> Position {
    let mut position = Position::first_start(IDENTITY, 1, Scn(4_710_990), &[], Scn(4_711_000));
    position = position.at_heartbeat(ResumePoint::at(RedoMark::new(
        addr(0x58, 2, 0x10, 1),
        Scn(4_700_100),
    )));
    position
}

fn extra_fields() -> Position {
    let mut position = full();
    position.released_xids = ReleasedXids::new();
    position.snapshot = None;
    position.snapshot_pending = None;
    position.journal_generation = 8;
    if let Some(commit) = position.last_commit.as_mut() {
        commit.event_index = 1;
    }
    for (name, value) in [
        ("position_vector", json!("1: 0x00005a.00000132.0100 /2")),
        ("downgrade_note", json!("written by v1.1")),
        ("thread_count", json!(1)),
        ("rac", json!(false)),
        ("nothing", Value::Null),
        ("ratio", json!(0.75)),
    ] {
        position.extra.insert(name, value).unwrap();
    }
    position
}

fn extremes() -> Position {
    let max = RedoAddr::new(RsId::new(0xff_ffff, u32::MAX, u16::MAX), u64::MAX).unwrap();
    let mut position = Position::new(
        ResumePoint::at(RedoMark::new(max, Scn(u64::MAX))),
        DbIdentity::new(u64::from(u32::MAX), Scn(1 << 63)),
        0,
    );
    position.last_commit = Some(LastCommit {
        scn: Scn(i64::MAX as u64),
        xid: xid(u32::MAX, u16::MAX, u16::MAX, u32::MAX),
        thread: RedoThread(u16::MAX),
        addr: RedoAddr::new(max.rs_id(), i64::MAX as u64).unwrap(),
        event_index: 1 << 63,
    });
    position.signal_offset = Some(-1);
    position
}

fn hand_edited() -> Position {
    let mut position = Position::new(
        ResumePoint::at(RedoMark::new(addr(0x59, 0xd6a1, 0x10, 3), Scn(4_711_000))),
        IDENTITY,
        7,
    );
    position.released_xids = [xid(3, 4, 2, 17), xid(0, 5, 1, 2)].into_iter().collect();
    position.signal_offset = Some(41);
    position.extra.insert("later_field", json!("kept")).unwrap();
    position
}

/// Every golden file with the position it holds.
fn goldens() -> Vec<(&'static str, Position)> {
    vec![
        ("spec_example", spec_example()),
        ("full", full()),
        ("first_start", first_start()),
        ("first_start_heartbeat", first_start_heartbeat()),
        ("extra_fields", extra_fields()),
        ("extremes", extremes()),
        ("hand_edited", hand_edited()),
    ]
}

#[test]
fn golden_offsets_decode_and_encode_byte_for_byte() {
    for (name, expected) in goldens() {
        let text = read(&format!("{name}.json"));
        let decoded = Position::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded, expected, "{name} decodes to the expected position");
        assert_eq!(expected.to_json(), text, "{name} encodes byte for byte");
        // the map handed to Kafka Connect is the same object, in the same order
        let map = expected.to_offset_map();
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            text,
            "{name} as a Connect map"
        );
        assert_eq!(
            Position::from_offset_map(&map).unwrap(),
            expected,
            "{name} map"
        );
    }
}

#[test]
fn every_golden_file_is_checked() {
    let known: BTreeSet<String> = goldens()
        .iter()
        .flat_map(|(name, _)| [format!("{name}.json"), format!("{name}.input.json")])
        .chain(["spec_offsets_request.txt".to_owned()])
        .collect();
    for entry in fs::read_dir(golden_dir()).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            known.contains(&file),
            "tests/golden/{file} is not checked by any test"
        );
    }
}

#[test]
fn hand_edited_offsets_read_and_are_written_canonically() {
    for (name, expected) in goldens() {
        let path = golden_dir().join(format!("{name}.input.json"));
        let Ok(input) = fs::read_to_string(&path) else {
            continue;
        };
        let decoded = Position::from_json(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded, expected, "{name}.input.json");
        assert_eq!(decoded.to_json(), read(&format!("{name}.json")));
    }
}

/// The example request body of the offsets REST API (`docs/rest.md`, "Offsets"), verbatim.
#[test]
fn the_specs_offset_json_reads_and_writes_back() {
    let text = read("spec_offsets_request.txt");
    let body: Value = serde_json::from_str(&text).unwrap();
    let position = position_from_offsets_body(&body, "cdc").unwrap().unwrap();
    assert_eq!(position, spec_example());
    // Written back, it is the same document; the example only has blanks after : and ,
    let written = codec::offsets_request("cdc", &position).to_string();
    let spec_compact = text.trim_end().replace(": ", ":").replace(", ", ",");
    assert_eq!(written, spec_compact);
}

#[test]
fn unknown_fields_survive_a_round_trip_and_an_advance() {
    let position = Position::from_json(&read("extra_fields.json")).unwrap();
    // the engine moves the position on; the unknown fields move with it
    let commit = LastCommit {
        event_index: 2,
        ..position.last_commit.unwrap()
    };
    let next = position.at_record(position.resume, commit);
    let text = next.to_json();
    let tail = r#""position_vector":"1: 0x00005a.00000132.0100 /2","downgrade_note":"written by v1.1","thread_count":1,"rac":false,"nothing":null,"ratio":0.75}"#;
    assert!(text.ends_with(tail), "{text}");
    assert!(text.contains(r#""event_index":2"#), "{text}");
}

#[test]
fn an_offset_of_a_newer_version_is_refused_whole() {
    let text = read("full.json").replacen(r#""v":1"#, r#""v":2"#, 1);
    let error = Position::from_json(&text).unwrap_err();
    let message = cdc_core::CdcError::from(error).to_string();
    assert!(message.starts_with("[CDC-3002]"), "{message}");
    assert!(message.contains("v = 2"), "{message}");
}

#[test]
fn first_start_fields_are_written_until_the_first_commit() {
    let position = first_start();
    let start: &FirstStart = position.first_start.as_ref().unwrap();
    assert_eq!(start.floor_scn, Scn(4_711_000));
    // mining begins at the oldest listed START SCN
    assert_eq!(position.resume, ResumePoint::from_scn(Scn(4_700_100)));
    let commit = LastCommit {
        scn: Scn(4_711_001),
        xid: xid(3, 9, 1, 5),
        thread: RedoThread(1),
        addr: addr(0x59, 1, 0x10, 0),
        event_index: 1,
    };
    let text = position.at_record(position.resume, commit).to_json();
    assert!(!text.contains("start_"), "{text}");
}
