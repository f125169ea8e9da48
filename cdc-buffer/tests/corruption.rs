//! A damaged spill file stops the task with CDC-3002 and never yields a shorter transaction:
//! every single-bit flip and every truncation of a small spill file is caught, with and
//! without undo rows in it (the two read-back paths).

// Helpers outside #[test] functions may fail the test the same way the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::{Path, PathBuf};

use cdc_buffer::{BufferError, TransactionBuffer};
use cdc_core::{CdcCode, ChangeEvent, ConXid};
use common::*;

fn target() -> ConXid {
    key(0, 1, 1, 1)
}

/// A buffer whose target transaction is spilled, with its whole file on disk: writing a
/// second transaction's file flushes the shared write buffer to the target's.
fn build(dir: &Path, with_undo: bool) -> (TransactionBuffer, PathBuf) {
    let mut b = TransactionBuffer::open(settings(dir, 0)).unwrap();
    b.append(target(), change(1, Some("A"), 3)).unwrap();
    b.append(target(), change(2, Some("B"), 3)).unwrap();
    b.append(target(), change(3, Some("A"), 3)).unwrap();
    if with_undo {
        b.undo(target(), undo(4, "A")).unwrap();
    }
    b.append(key(0, 2, 2, 2), change(5, Some("C"), 1)).unwrap();
    let path = b
        .transaction(target())
        .unwrap()
        .spill_path()
        .unwrap()
        .to_owned();
    (b, path)
}

fn read_back(b: &mut TransactionBuffer) -> Result<Vec<ChangeEvent>, BufferError> {
    Ok(commit_all(b, target())?.expect("the target is open"))
}

fn assert_corruption(dir: &Path, with_undo: bool, damaged: &[u8], what: &str) {
    let (mut b, path) = build(dir, with_undo);
    std::fs::write(&path, damaged).unwrap();
    match read_back(&mut b) {
        Ok(events) => panic!(
            "{what}: read back {} changes from a damaged file",
            events.len()
        ),
        Err(e) => assert_eq!(e.code(), CdcCode::Corruption, "{what}: {e}"),
    }
    // the buffer refuses to go on, so nothing else is published after the damage
    let after = b.commit(key(0, 2, 2, 2)).unwrap_err();
    assert_eq!(after.code(), CdcCode::Corruption, "{what}");
}

fn every_damage(with_undo: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (mut b, path) = build(dir.path(), with_undo);
    let pristine = std::fs::read(&path).unwrap();
    let expected = if with_undo {
        vec![change(1, Some("A"), 3), change(2, Some("B"), 3)]
    } else {
        vec![
            change(1, Some("A"), 3),
            change(2, Some("B"), 3),
            change(3, Some("A"), 3),
        ]
    };
    assert_eq!(read_back(&mut b).unwrap(), expected);
    drop(b);
    // each `build` reopens the directory, which sweeps the previous attempt's files
    for bit in 0..pristine.len() * 8 {
        let mut damaged = pristine.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        assert_corruption(
            dir.path(),
            with_undo,
            &damaged,
            &format!("bit {bit} flipped"),
        );
    }
    for cut in 0..pristine.len() {
        assert_corruption(
            dir.path(),
            with_undo,
            &pristine[..cut],
            &format!("cut at byte {cut}"),
        );
    }
    let mut longer = pristine.clone();
    longer.push(0);
    assert_corruption(dir.path(), with_undo, &longer, "one byte appended");
}

#[test]
fn every_bit_flip_and_truncation_is_cdc_3002() {
    every_damage(false);
}

#[test]
fn every_bit_flip_and_truncation_is_cdc_3002_with_undo_rows() {
    every_damage(true);
}

#[test]
fn a_missing_spill_file_is_cdc_3002_and_a_damaged_one_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (mut b, path) = build(dir.path(), false);
    std::fs::remove_file(&path).unwrap();
    let error = read_back(&mut b).unwrap_err();
    assert_eq!(error.code(), CdcCode::Corruption);
    assert!(error.to_string().contains("cannot be opened"), "{error}");

    let (mut b, path) = build(dir.path(), false);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let mut committed = b.commit(target()).unwrap().unwrap();
    assert!(committed.next_change().unwrap().is_some());
    assert!(committed.next_change().unwrap().is_some());
    let error = committed.next_change().unwrap_err();
    assert!(error.to_string().contains("fails its CRC32"), "{error}");
    assert!(committed.next_change().is_err());
    drop(committed);
    // left for inspection; the next start sweeps it
    assert!(path.exists());
}

/// Frames read in place from bytes in memory (the journal's payloads) give each frame's head
/// and bytes as written, and every bit flip or truncation of them is an error, never a
/// different frame.
#[test]
fn frames_read_in_place_check_every_byte() {
    use cdc_buffer::codec::{FrameRef, SliceFrames, append_frame};
    let mut bytes = Vec::new();
    let mut written = Vec::new();
    for n in 1..=3 {
        let event = change(n, Some("R"), 5);
        let from = bytes.len();
        append_frame(FrameRef::Change(&event), &mut bytes);
        written.push((event.addr, from..bytes.len()));
    }
    let undo = undo(4, "R");
    let from = bytes.len();
    append_frame(FrameRef::Undo(&undo), &mut bytes);
    written.push((undo.addr, from..bytes.len()));
    let read: Vec<_> = SliceFrames::new(&bytes).map(Result::unwrap).collect();
    assert_eq!(read.len(), 4);
    for ((head, frame), (addr, range)) in read.iter().zip(&written) {
        assert_eq!(head.addr, *addr);
        assert_eq!(*frame, &bytes[range.clone()]);
    }
    assert_eq!(read[3].0.kind, cdc_buffer::codec::KIND_UNDO);
    for at in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            let frames: Vec<_> = SliceFrames::new(&damaged).collect();
            assert!(
                frames.iter().any(Result::is_err),
                "a flip of bit {bit} of byte {at} went unnoticed"
            );
            // nothing after the error
            assert!(frames.last().unwrap().is_err());
        }
    }
    for len in 1..bytes.len() {
        let cut = &bytes[..len];
        let ends = written.iter().any(|(_, r)| r.end == len);
        let frames: Vec<_> = SliceFrames::new(cut).collect();
        assert_eq!(frames.iter().any(Result::is_err), !ends, "cut at {len}");
    }
}
