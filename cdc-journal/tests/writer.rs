//! The writer's rules over a real buffer: when a transaction is journaled, what each chunk
//! holds, how chunks split, the marks that move the resume pin, the tombstones that end it;
//! and the configuration keys that set them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_buffer::{BufferSettings, StartInfo, TransactionBuffer, UndoRecord};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{ChangeEvent, ConId, ConXid, RedoAddr, RsId, Scn, TableId, Value, Xid};
use cdc_journal::format::read_payload;
use cdc_journal::{JournalRecord, JournalSettings, JournalWriter};

fn key(sqn: u32) -> ConXid {
    ConXid::new(ConId(3), Xid::new(5, 12, sqn))
}

fn addr(n: u64) -> RedoAddr {
    RedoAddr::new(RsId::new(7, (n / 100) as u32 + 1, (n % 100) as u16), n).unwrap()
}

fn change(n: u64, row: &str, text_len: usize) -> ChangeEvent {
    ChangeEvent {
        scn: Scn(1000 + n),
        addr: addr(n),
        change: RowChange {
            op: ChangeOp::Insert,
            table: TableId::new("APP", "ORDERS").into(),
            schema_version: 1,
            before: None,
            after: Some(vec![ColumnValue {
                column: 0,
                value: Value::Text("x".repeat(text_len)),
            }]),
            row_id: Some(row.to_owned()),
        },
    }
}

fn buffer(dir: &tempfile::TempDir) -> TransactionBuffer {
    TransactionBuffer::open(BufferSettings {
        memory_max_bytes: 1 << 30,
        spill_dir: dir.path().to_owned(),
        spill_max_bytes: 1 << 30,
    })
    .unwrap()
}

fn settings(threshold_ms: u64, threshold_events: u64, chunk_max_bytes: u64) -> JournalSettings {
    JournalSettings {
        threshold_ms,
        threshold_events,
        chunk_max_bytes,
        ..JournalSettings::new("shop")
    }
}

/// Every chunk the writer has for `k` now, each marked in the buffer as the engine does.
fn flush(
    writer: &mut JournalWriter,
    buffer: &mut TransactionBuffer,
    k: ConXid,
) -> Vec<JournalRecord> {
    let mut out = Vec::new();
    while let Some((record, mark)) = writer.next_chunk(buffer, k).unwrap() {
        assert!(buffer.mark_journaled(k, mark));
        out.push(record);
    }
    out
}

/// (kind, address) of every frame of the chunks.
fn frames(records: &[JournalRecord]) -> Vec<(u8, RedoAddr)> {
    let mut out = Vec::new();
    for record in records {
        let chunk = record.chunk.as_ref().unwrap();
        read_payload(&chunk.payload, |head, _| {
            out.push((head.kind, head.addr));
            Ok(())
        })
        .unwrap();
    }
    out
}

#[test]
fn a_transaction_is_journaled_past_its_thresholds_whole_then_by_its_new_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = buffer(&dir);
    let mut w = JournalWriter::new(settings(60_000, 3, 16_384), 4);
    let k = key(900);
    b.set_clock_ms(1_000);
    b.begin(
        k,
        StartInfo {
            scn: Scn(999),
            addr: Some(addr(0)),
            username: Some("APP".into()),
            ..StartInfo::default()
        },
    )
    .unwrap();
    for n in 1..=3 {
        b.append(k, change(n, &format!("R{n}"), 10)).unwrap();
    }
    let txn = b.transaction(k).unwrap();
    // three changes, open 0 s: below both thresholds
    assert!(!w.wants_chunk(&txn, 1_000));
    // open a minute: the age threshold
    assert!(w.wants_chunk(&txn, 61_000));
    b.append(k, change(4, "R4", 10)).unwrap();
    let txn = b.transaction(k).unwrap();
    // more than three changes: the size threshold
    assert!(w.wants_chunk(&txn, 1_000));
    // before it is journaled, it holds the resume point at its first change (not its START)
    assert_eq!(b.resume_floor(None), Some((Scn(1001), addr(1))));
    let first = flush(&mut w, &mut b, k);
    assert_eq!(first.len(), 1);
    let chunk = first[0].chunk.as_ref().unwrap();
    assert_eq!(
        (
            first[0].key.chunk,
            first[0].key.generation,
            &*first[0].key.server
        ),
        (0, 4, "shop")
    );
    // its whole history so far, spilled to be read from disk
    assert!(b.transaction(k).unwrap().is_spilled());
    assert_eq!(
        frames(&first),
        (1..=4).map(|n| (1, addr(n))).collect::<Vec<_>>()
    );
    assert_eq!((chunk.meta.events, chunk.meta.undos), (4, 0));
    assert_eq!(chunk.meta.start_scn, Some(Scn(999)));
    assert_eq!(chunk.meta.username.as_deref(), Some("APP"));
    // the resume pin moved to the last journaled row
    assert_eq!(b.resume_floor(None), Some((Scn(1004), addr(4))));
    // nothing new: no chunk
    assert!(!w.wants_chunk(&b.transaction(k).unwrap(), 1_000));
    assert!(flush(&mut w, &mut b, k).is_empty());
    // later rows, an undo row among them, go in the next chunk
    b.append(k, change(5, "R5", 10)).unwrap();
    b.undo(
        k,
        UndoRecord {
            scn: Scn(1006),
            addr: addr(6),
            row_id: "R2".into(),
        },
    )
    .unwrap();
    assert!(w.wants_chunk(&b.transaction(k).unwrap(), 1_000));
    let second = flush(&mut w, &mut b, k);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].key.chunk, 1);
    assert_eq!(frames(&second), vec![(1, addr(5)), (2, addr(6))]);
    assert_eq!(b.resume_floor(None), Some((Scn(1006), addr(6))));
    // the end: one tombstone per chunk, under each chunk's generation
    let tombstones = w.end(k);
    assert_eq!(
        tombstones
            .iter()
            .map(|t| (t.key.chunk, t.key.generation, t.chunk.is_none()))
            .collect::<Vec<_>>(),
        vec![(0, 4, true), (1, 4, true)]
    );
    assert!(w.end(k).is_empty());
    assert_eq!(w.metrics().chunks, 2);
    assert_eq!(w.metrics().tombstones, 2);
    // the committed transaction is read back whole from its file, the undo applied
    let mut committed = b.commit(k).unwrap().unwrap();
    let mut rows = Vec::new();
    while let Some(event) = committed.next_change().unwrap() {
        rows.push(event.addr);
    }
    committed.finish().unwrap();
    assert_eq!(rows, vec![addr(1), addr(3), addr(4), addr(5)]);
}

#[test]
fn chunks_split_at_about_the_chunk_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = buffer(&dir);
    let mut w = JournalWriter::new(settings(60_000, 10, 16_384), 0);
    let k = key(901);
    for n in 1..=200 {
        b.append(k, change(n, &format!("R{n}"), 300)).unwrap();
    }
    let chunks = flush(&mut w, &mut b, k);
    assert!(chunks.len() >= 3, "{} chunks", chunks.len());
    for (i, record) in chunks.iter().enumerate() {
        let len = record.chunk.as_ref().unwrap().payload.len();
        assert_eq!(record.key.chunk as usize, i);
        // a chunk ends once it reaches the size, so it passes it by at most one frame
        assert!(len < 16_384 + 400, "chunk {i}: {len} bytes");
        if i + 1 < chunks.len() {
            assert!(len >= 16_384, "chunk {i}: {len} bytes");
        }
    }
    assert_eq!(
        frames(&chunks),
        (1..=200).map(|n| (1, addr(n))).collect::<Vec<_>>()
    );
    // a transaction without a change holds nothing to move, and is not journaled
    let empty = key(902);
    b.begin(empty, StartInfo::default()).unwrap();
    assert!(!w.wants_chunk(&b.transaction(empty).unwrap(), 1 << 40));
}

/// The three `cdc.txjournal.*` keys of the writer, from a validated configuration to what
/// they change.
#[test]
fn the_journal_keys_set_when_and_how_transactions_are_journaled() {
    let configured = |pairs: &[(&str, &str)]| {
        let mut config = cdc_core::config::Config::from_pairs([
            ("name", "journal-keys"),
            ("cdc.source", "sim"),
            ("cdc.topic.prefix", "shop"),
            ("cdc.tables.include", ".*"),
        ]);
        for (k, v) in pairs {
            config.set(*k, *v);
        }
        JournalSettings::from_config(&config.validate().unwrap())
    };
    let defaults = configured(&[]);
    assert_eq!(
        (
            defaults.threshold_ms,
            defaults.threshold_events,
            defaults.chunk_max_bytes
        ),
        (300_000, 100_000, 512 << 10)
    );
    assert_eq!(defaults.server, "shop");
    let dir = tempfile::tempdir().unwrap();
    let mut b = buffer(&dir);
    let k = key(903);
    b.set_clock_ms(0);
    for n in 1..=120 {
        b.append(k, change(n, &format!("R{n}"), 300)).unwrap();
    }
    let txn = b.transaction(k).unwrap();
    let wants = |pairs: &[(&str, &str)], now_ms: u64| {
        JournalWriter::new(configured(pairs), 0).wants_chunk(&txn, now_ms)
    };
    assert!(!wants(&[], 299_999));
    assert!(wants(&[], 300_000));
    assert!(wants(&[("cdc.txjournal.threshold.ms", "1000")], 1_000));
    assert!(!wants(&[("cdc.txjournal.threshold.events", "120")], 0));
    assert!(wants(&[("cdc.txjournal.threshold.events", "119")], 0));
    let chunks_of = |bytes: &str, sqn: u32| {
        let mut b = buffer(&dir);
        let k = key(sqn);
        for n in 1..=120 {
            b.append(k, change(n, &format!("R{n}"), 300)).unwrap();
        }
        let mut w = JournalWriter::new(configured(&[("cdc.txjournal.chunk.max.bytes", bytes)]), 0);
        flush(&mut w, &mut b, k).len()
    };
    assert_eq!(chunks_of("524288", 904), 1);
    assert!(chunks_of("16384", 905) >= 2);
}
