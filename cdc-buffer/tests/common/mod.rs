//! Helpers shared by the integration tests: keys, changes, settings, reading a commit.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use cdc_buffer::{BufferError, BufferSettings, TransactionBuffer, UndoRecord};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{ChangeEvent, ConId, ConXid, RedoAddr, RsId, Scn, TableId, Value, Xid};

pub fn key(con: u32, usn: u16, slot: u16, sqn: u32) -> ConXid {
    ConXid::new(ConId(con), Xid::new(usn, slot, sqn))
}

pub fn addr(n: u64) -> RedoAddr {
    RedoAddr::new(RsId::new(7, (n / 100) as u32 + 1, (n % 100) as u16), n).unwrap()
}

/// A change numbered `n` (SCN and address follow `n`) on ROWID `row`, carrying `text_len`
/// bytes of text.
pub fn change(n: u64, row: Option<&str>, text_len: usize) -> ChangeEvent {
    ChangeEvent {
        scn: Scn(1000 + n),
        addr: addr(n),
        change: RowChange {
            op: ChangeOp::Insert,
            table: TableId::new("APP", "ORDERS").into(),
            schema_version: 1,
            before: None,
            after: Some(vec![
                ColumnValue {
                    column: 0,
                    value: Value::Text(format!("{n:08}")),
                },
                ColumnValue {
                    column: 1,
                    value: Value::Text("x".repeat(text_len)),
                },
            ]),
            row_id: row.map(str::to_owned),
        },
    }
}

pub fn undo(n: u64, row: &str) -> UndoRecord {
    UndoRecord {
        scn: Scn(1000 + n),
        addr: addr(n),
        row_id: row.to_owned(),
    }
}

pub fn settings(dir: &Path, memory_max_bytes: u64) -> BufferSettings {
    BufferSettings {
        memory_max_bytes,
        spill_dir: dir.to_owned(),
        spill_max_bytes: 1 << 30,
    }
}

/// Commits `key` and reads every change, then finishes (the records are "queued").
pub fn commit_all(
    buffer: &mut TransactionBuffer,
    key: ConXid,
) -> Result<Option<Vec<ChangeEvent>>, BufferError> {
    let Some(mut committed) = buffer.commit(key)? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    while let Some(event) = committed.next_change()? {
        out.push(event);
    }
    assert_eq!(out.len() as u64, committed.event_count());
    committed.finish()?;
    Ok(Some(out))
}

/// Files in the spill directory.
pub fn spill_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
