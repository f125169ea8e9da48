//! Encode and decode of a typical full position: every record carries one, and the bridge
//! writes the latest acknowledged one to the offsets topic.
//!
//! "Typical full": a resume address, a last commit, the identity, a released ledger of 16
//! XIDs, a snapshot block, a signal offset and one unknown field, about 700 bytes of JSON.

// Bench code: a failed unwrap is a broken bench.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use cdc_core::{ConId, ConXid, RedoAddr, RedoThread, RsId, Scn, Xid};
use cdc_offset::rules::{RecordPlace, record_resume};
use cdc_offset::{DbIdentity, LastCommit, Position, RedoMark, ResumePoint};
use criterion::{Criterion, criterion_group, criterion_main};

fn typical() -> Position {
    let resume = RedoAddr::new(RsId::new(0x59, 0xd6a1, 0x10), 0).unwrap();
    let commit = RedoAddr::new(RsId::new(0x5a, 0x132, 0x100), 2).unwrap();
    let mut position = Position::new(
        ResumePoint::at(RedoMark::new(resume, Scn(48_210_771_950))),
        DbIdentity::new(1_234_567_890, Scn(1)),
        7,
    );
    position.last_commit = Some(LastCommit {
        scn: Scn(48_210_772_020),
        xid: ConXid::new(ConId(3), Xid::new(5, 12, 900)),
        thread: RedoThread(1),
        addr: commit,
        event_index: 3,
    });
    for sqn in 0..16 {
        position
            .released_xids
            .release(ConXid::new(ConId(3), Xid::new(4, 2, 1000 + sqn)));
    }
    position.snapshot = Some(
        r#"{"v":1,"complete":false,"tables":{"FREEPDB1.APP.ORDERS":{"done":false,"frontier":"[1042]"},"FREEPDB1.APP.LINES":{"done":true,"frontier":null}}}"#
            .to_owned(),
    );
    position.signal_offset = Some(41);
    position
        .extra
        .insert("downgrade_note", serde_json::json!("written by v1.1"))
        .unwrap();
    position
}

fn codec(c: &mut Criterion) {
    let position = typical();
    let text = position.to_json();
    let map = position.to_offset_map();

    c.bench_function("encode to_json", |b| {
        b.iter(|| black_box(&position).to_json())
    });
    let minimal = Position::new(
        ResumePoint::from_scn(Scn(4_711_000)),
        DbIdentity::new(1_234_567_890, Scn(1)),
        7,
    );
    c.bench_function("encode to_json (spec example)", |b| {
        b.iter(|| black_box(&minimal).to_json())
    });

    let mut buffer = String::with_capacity(1024);
    c.bench_function("encode write_json (reused buffer)", |b| {
        b.iter(|| {
            buffer.clear();
            black_box(&position).write_json(&mut buffer);
            buffer.len()
        })
    });
    c.bench_function("encode to_offset_map", |b| {
        b.iter(|| black_box(&position).to_offset_map())
    });
    c.bench_function("decode from_json", |b| {
        b.iter(|| Position::from_json(black_box(&text)).unwrap())
    });
    c.bench_function("decode from_offset_map", |b| {
        b.iter(|| Position::from_offset_map(black_box(&map)).unwrap())
    });

    // What the engine does per record: the resume rule and the record's position.
    let holds: Vec<RedoMark> = (0..8)
        .map(|i| {
            RedoMark::new(
                RedoAddr::new(RsId::new(0x59, 0xd6a1 + i, 0x10), 0).unwrap(),
                Scn(48_210_771_950 + u64::from(i)),
            )
        })
        .collect();
    let mined_to = RedoMark::new(
        RedoAddr::new(RsId::new(0x5a, 0x132, 0x100), 2).unwrap(),
        Scn(48_210_772_020),
    );
    let commit = position.last_commit.unwrap();
    c.bench_function("record position (8 open transactions)", |b| {
        b.iter(|| {
            let resume = record_resume(
                mined_to,
                black_box(&holds).iter().copied(),
                holds[0],
                RecordPlace::BeforeLast,
            );
            black_box(&position).at_record(resume, commit)
        })
    });
}

criterion_group!(benches, codec);
criterion_main!(benches);
