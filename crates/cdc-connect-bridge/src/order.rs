//! `transaction.total_order` and `transaction.data_collection_order`, fed record by record.

use std::collections::HashMap;

use cdc_core::{ConXid, RedoAddr, TableId};
use cdc_logminer::engine::ChangeRecord;

/// The place of a change in its transaction, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventOrder {
    /// Among all changes of the transaction: the event index + 1.
    pub total_order: u64,
    /// Among the changes of the transaction to the same table.
    pub data_collection_order: u64,
}

/// Counts the changes of the transaction being delivered, per table.
///
/// Records of one transaction arrive consecutively (the engine streams a commit whole), so
/// one transaction's counters are enough; a record of another commit, or an event index that
/// goes back (the same transaction delivered again), starts over.
///
/// `total_order` comes from the event index and is always exact. `data_collection_order`
/// counts the records seen: when delivery begins inside a transaction (a restart after part
/// of it was acknowledged), the changes skipped are not counted, so it starts at 1 again
/// for each table.
#[derive(Debug, Default, Clone)]
pub struct TransactionOrder {
    current: Option<(ConXid, RedoAddr)>,
    next_index: u64,
    per_table: HashMap<TableId, u64>,
}

impl TransactionOrder {
    pub fn new() -> TransactionOrder {
        TransactionOrder::default()
    }

    /// The order of `change`, counting it.
    pub fn next(&mut self, change: &ChangeRecord) -> EventOrder {
        let tx = (change.commit.con_xid, change.commit.commit_addr);
        if self.current != Some(tx) || change.event_index < self.next_index {
            self.current = Some(tx);
            self.per_table.clear();
        }
        self.next_index = change.event_index + 1;
        let table: &TableId = &change.event.change.table;
        let count = match self.per_table.get_mut(table) {
            Some(count) => {
                *count += 1;
                *count
            }
            None => {
                self.per_table.insert(table.clone(), 1);
                1
            }
        };
        EventOrder {
            total_order: change.event_index + 1,
            data_collection_order: count,
        }
    }
}
