//! The measured heap size of a buffered change: what the heap budget counts.
//!
//! Pure. The size is the change's inline bytes plus every allocation it owns (table name
//! strings, before and after images, text and raw values, the ROWID), each rounded up to the
//! chunk glibc's allocator hands out for it (the request plus an 8-byte header, in 16-byte
//! steps, at least 32 bytes). Rounding makes the count follow the resident memory the change
//! really costs rather than the bytes of its text, which matters for changes with many small
//! values. Capacities are counted, not lengths, because the allocation is what is resident.

use std::mem::size_of;

use cdc_core::change::ColumnValue;
use cdc_core::{ChangeEvent, TimeZone, Value};

/// Heap bytes held by one buffered change, including its own inline size.
pub fn change_heap_bytes(event: &ChangeEvent) -> u64 {
    let change = &event.change;
    let bytes = size_of::<ChangeEvent>()
        + change
            .table
            .pdb
            .as_ref()
            .map_or(0, |s| allocation(s.capacity()))
        + allocation(change.table.owner.capacity())
        + allocation(change.table.table.capacity())
        + change.before.as_ref().map_or(0, image_bytes)
        + change.after.as_ref().map_or(0, image_bytes)
        + change
            .row_id
            .as_ref()
            .map_or(0, |s| allocation(s.capacity()));
    bytes as u64
}

/// The heap bytes of one row image (a snapshot row's values, counted as a change's after
/// image is).
pub fn image_heap_bytes(columns: &Vec<ColumnValue>) -> u64 {
    image_bytes(columns) as u64
}

fn image_bytes(columns: &Vec<ColumnValue>) -> usize {
    allocation(columns.capacity() * size_of::<ColumnValue>())
        + columns
            .iter()
            .map(|c| value_heap_bytes(&c.value))
            .sum::<usize>()
}

/// Heap bytes a value owns beyond its inline size.
fn value_heap_bytes(value: &Value) -> usize {
    match value {
        Value::Text(s) | Value::RowId(s) => allocation(s.capacity()),
        Value::Raw(b) => allocation(b.capacity()),
        Value::TimestampTz(_, TimeZone::Region(s)) => allocation(s.len()),
        Value::Null
        | Value::Number(_)
        | Value::BinaryFloat(_)
        | Value::BinaryDouble(_)
        | Value::Date(_)
        | Value::Timestamp(_)
        | Value::TimestampTz(_, TimeZone::Offset(_))
        | Value::TimestampLtz(_)
        | Value::IntervalYm(_)
        | Value::IntervalDs(_)
        | Value::EmptyLob
        | Value::Unavailable
        | Value::Unsupported => 0,
    }
}

/// The size of the allocator chunk serving a request of `bytes` (none for zero).
fn allocation(bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else {
        ((bytes + 8).div_ceil(16) * 16).max(32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::change::{ChangeOp, RowChange};
    use cdc_core::{RedoAddr, RsId, Scn, TableId};

    fn event(after: Option<Vec<ColumnValue>>, row_id: Option<&str>) -> ChangeEvent {
        ChangeEvent {
            scn: Scn(1),
            addr: RedoAddr::new(RsId::new(1, 1, 1), 1).unwrap(),
            change: RowChange {
                op: ChangeOp::Insert,
                table: TableId::new("APP", "ORDERS").into(),
                schema_version: 1,
                before: None,
                after,
                row_id: row_id.map(str::to_owned),
            },
        }
    }

    #[test]
    fn allocations_round_like_glibc() {
        assert_eq!(allocation(0), 0);
        assert_eq!(allocation(1), 32);
        assert_eq!(allocation(24), 32);
        assert_eq!(allocation(25), 48);
        assert_eq!(allocation(1000), 1008);
    }

    #[test]
    fn size_counts_every_owned_allocation() {
        let bare = change_heap_bytes(&event(None, None));
        // two table-name strings and the inline event
        assert_eq!(bare, (size_of::<ChangeEvent>() + 32 + 32) as u64);
        let with_row = change_heap_bytes(&event(None, Some("AAAR3sAAEAAAACXAAA")));
        assert_eq!(with_row - bare, 32);
        let text = "x".repeat(1000);
        let image = vec![
            ColumnValue {
                column: 0,
                value: Value::Text(text),
            },
            ColumnValue {
                column: 1,
                value: Value::Null,
            },
        ];
        let with_image = change_heap_bytes(&event(Some(image), None));
        let vec_bytes = allocation(2 * size_of::<ColumnValue>());
        assert_eq!(with_image - bare, (vec_bytes + 1008) as u64);
    }
}
