//! `transaction.total_order` and `transaction.data_collection_order` of a change.

use cdc_logminer::engine::ChangeRecord;

/// The place of a change in its transaction, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventOrder {
    /// Among all changes of the transaction: the event index + 1.
    pub total_order: u64,
    /// Among the changes of the transaction to the same table.
    pub data_collection_order: u64,
}

impl EventOrder {
    /// The order of `change`. Both numbers come from the engine, which counts the whole
    /// transaction, so a change has the same order whichever task delivers it: one restarted
    /// inside the transaction, or one delivering a later part of a split transaction.
    pub fn of(change: &ChangeRecord) -> EventOrder {
        EventOrder {
            total_order: change.event_index + 1,
            data_collection_order: change.table_order,
        }
    }
}
