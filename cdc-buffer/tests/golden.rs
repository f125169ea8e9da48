//! Golden test of the frame format (version 1): a fixed byte file decodes to the expected
//! frames and the frames encode back to the identical bytes. The file is the format's
//! contract with spill files of a running task (and with the transaction journal that is to
//! reuse it); a change to the encoding must add a new payload kind, never change this file.
//!
//! To write the file the first time: `CDC_BLESS_GOLDEN=1 cargo test -p cdc-buffer --test main golden`.

// Helpers outside #[test] functions may fail the test the same way the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use cdc_buffer::UndoRecord;
use cdc_buffer::codec::{self, Frame, FrameRef};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{
    ChangeEvent, Decimal, OracleDateTime, RedoAddr, RsId, Scn, TableId, TimeZone, Value,
};

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/frames_v1.bin")
}

fn dt(y: i16, mo: u8, d: u8, h: u8, mi: u8, s: u8, n: u32) -> OracleDateTime {
    OracleDateTime::new(y, mo, d, h, mi, s, n).unwrap()
}

fn col(column: u16, value: Value) -> ColumnValue {
    ColumnValue { column, value }
}

/// One frame of every shape: every value variant, every option empty and full, extreme
/// integers, non-ASCII text, the all-zero address, an undo row.
fn expected_frames() -> Vec<Frame> {
    let every_value = ChangeEvent {
        scn: Scn(4_711_000),
        addr: RedoAddr::new(RsId::new(0x59, 0xd6a1, 0x10), 12_345).unwrap(),
        change: RowChange {
            op: ChangeOp::Update,
            table: TableId::new("APP", "ORDER_LINES").in_pdb("FREEPDB1").into(),
            schema_version: 3,
            before: Some(vec![
                col(0, Value::Number(Decimal::parse("-42.5").unwrap())),
                col(1, Value::Text("Zürich ✓".into())),
                col(2, Value::Null),
            ]),
            after: Some(vec![
                col(0, Value::Number(Decimal::parse("1.5E+10").unwrap())),
                col(1, Value::Text("CHAR padded   ".into())),
                col(2, Value::BinaryFloat(1.5)),
                col(3, Value::BinaryDouble(-2.25e-300)),
                col(4, Value::Raw(vec![0xde, 0xad, 0xbe, 0xef, 0x00, 0xff])),
                col(5, Value::Date(dt(2026, 2, 28, 13, 45, 59, 0))),
                col(
                    6,
                    Value::Timestamp(dt(2026, 2, 28, 13, 45, 59, 123_456_789)),
                ),
                col(
                    7,
                    Value::TimestampTz(dt(2026, 2, 28, 13, 45, 59, 1), TimeZone::Offset(330)),
                ),
                col(
                    8,
                    Value::TimestampTz(
                        dt(-4712, 1, 1, 0, 0, 0, 0),
                        TimeZone::Region("Europe/Paris".into()),
                    ),
                ),
                col(
                    9,
                    Value::TimestampLtz(dt(9999, 12, 31, 23, 59, 59, 999_999_999)),
                ),
                col(10, Value::IntervalYm(-147)),
                col(11, Value::IntervalDs(443_582_123_456_000.into())),
                col(12, Value::RowId("AAAR3sAAEAAAACXAAA".into())),
                col(13, Value::EmptyLob),
                col(14, Value::Unavailable),
                col(300, Value::Unsupported),
                col(
                    u16::MAX,
                    Value::Number(Decimal::new(-(10i128.pow(37)), -125)),
                ),
                col(16, Value::IntervalDs(i128::MIN.into())),
                col(17, Value::IntervalYm(i64::MAX)),
            ]),
            row_id: Some("AAAR3sAAEAAAACXAAA".into()),
        },
    };
    let sparse = ChangeEvent {
        scn: Scn(u64::MAX),
        addr: RedoAddr::MIN,
        change: RowChange {
            op: ChangeOp::Delete,
            table: TableId::new("", "T").into(),
            schema_version: u32::MAX,
            before: Some(Vec::new()),
            after: None,
            row_id: None,
        },
    };
    let insert = ChangeEvent {
        scn: Scn(0),
        addr: RedoAddr::new(RsId::new(u32::MAX, u32::MAX, u16::MAX), u64::MAX).unwrap(),
        change: RowChange {
            op: ChangeOp::Insert,
            table: TableId::new("APP", "T").into(),
            schema_version: 0,
            before: None,
            after: Some(vec![col(0, Value::Number(Decimal::ZERO))]),
            row_id: Some("AAAR3sAAEAAAACXAAB".into()),
        },
    };
    let undo = UndoRecord {
        scn: Scn(4_711_002),
        addr: RedoAddr::new(RsId::new(0x59, 0xd6a2, 0x1c), 12_345).unwrap(),
        row_id: "AAAR3sAAEAAAACXAAA".into(),
    };
    vec![
        Frame::Change(every_value),
        Frame::Change(sparse),
        Frame::Change(insert),
        Frame::Undo(undo),
    ]
}

fn encode(frames: &[Frame]) -> Vec<u8> {
    let mut out = Vec::new();
    for frame in frames {
        let r = match frame {
            Frame::Change(e) => FrameRef::Change(e),
            Frame::Undo(u) => FrameRef::Undo(u),
        };
        codec::append_frame(r, &mut out);
    }
    out
}

#[test]
fn golden_frames_decode_and_reencode_identically() {
    let expected = expected_frames();
    if std::env::var_os("CDC_BLESS_GOLDEN").is_some() {
        std::fs::write(golden_path(), encode(&expected)).unwrap();
    }
    let bytes = std::fs::read(golden_path()).expect("tests/golden/frames_v1.bin");
    let decoded = codec::decode_frames(&bytes).unwrap();
    assert_eq!(decoded, expected);
    assert_eq!(encode(&decoded), bytes);
}

#[test]
fn golden_first_frame_header_and_undo_layout() {
    let bytes = std::fs::read(golden_path()).unwrap();
    // header: payload length and CRC32 of the payload, little-endian
    let len = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
    assert_eq!(crc, crc32fast::hash(&bytes[8..8 + len]));
    assert_eq!(bytes[8], codec::KIND_CHANGE);
    // the last frame is the undo row, laid out field by field as the crate docs say
    let mut tail = Vec::new();
    let Frame::Undo(undo) = expected_frames().pop().unwrap() else {
        unreachable!()
    };
    codec::append_frame(FrameRef::Undo(&undo), &mut tail);
    assert!(bytes.ends_with(&tail));
    let payload = &tail[8..];
    let expected: Vec<u8> = [
        vec![codec::KIND_UNDO],
        vec![0xda, 0xc4, 0x9f, 0x02], // SCN 4711002
        vec![0x59],                   // log sequence 0x59
        vec![0xa2, 0xad, 0x03],       // block 0xd6a2
        vec![0x1c],                   // byte offset 0x1c
        vec![0xb9, 0x60],             // SSN 12345
        vec![18],                     // ROWID length
        b"AAAR3sAAEAAAACXAAA".to_vec(),
    ]
    .concat();
    assert_eq!(payload, &expected[..]);
}
