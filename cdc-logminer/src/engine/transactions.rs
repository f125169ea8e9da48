//! A view of the open transactions for operators: what the buffer holds, largest first.
//!
//! The bridge takes one between steps (at most about once a second) and serves it read-only
//! over REST; the cost is one pass over the open transactions plus sorting at most `limit` of
//! them, whatever the buffer holds.

use cdc_core::{ConXid, Scn};

use super::CaptureEngine;
use crate::source::RedoSource;

/// At most this many transactions are listed; the view says when there were more.
pub const OPEN_TRANSACTIONS_LIMIT: usize = 1000;

/// One open transaction as the buffer holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTransaction {
    pub key: ConXid,
    /// The container its START row names (SRC_CON_NAME); `None` when unknown.
    pub container: Option<String>,
    pub user: Option<String>,
    /// The lower SCN of its START row and its first change.
    pub first_scn: Scn,
    /// When this run of the engine buffered its first row, to within one mining step (the
    /// buffer's clock is set once per step), in ms since the epoch; `None` when unknown.
    pub first_change_ms: Option<u64>,
    /// Changes it holds.
    pub events: u64,
    /// Bytes on the heap plus bytes in its spill file.
    pub bytes: u64,
    pub spilled: bool,
    pub journaled: bool,
}

/// The open transactions at one moment, largest (events) first, ties oldest (first SCN) first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenTransactions {
    /// When the view was taken, in ms since the epoch.
    pub taken_at_ms: u64,
    /// The SCN of the last row mined; `None` before the first.
    pub mined_to_scn: Option<Scn>,
    /// Every open transaction, listed or not.
    pub open_transactions: u64,
    /// Changes held by every open transaction.
    pub buffered_events: u64,
    pub transactions: Vec<OpenTransaction>,
    /// More than `limit` were open: only the largest are listed.
    pub truncated: bool,
}

impl<S: RedoSource> CaptureEngine<S> {
    /// The open transactions, at most `limit` of them.
    pub fn open_transactions(&self, limit: usize) -> OpenTransactions {
        let metrics = self.buffer.metrics();
        // the buffer keeps the engine's monotonic clock: placed on the wall clock from now
        let (now, wall) = (self.clock.now_ms(), self.clock.wall_ms());
        let to_wall = |at: u64| wall.checked_sub(now.saturating_sub(at));
        // order keys only (events descending, first SCN, then the key for a stable order);
        // the details are read for the listed ones
        let mut order: Vec<(std::cmp::Reverse<u64>, Scn, ConXid)> = self
            .buffer
            .open_transactions()
            .map(|t| (std::cmp::Reverse(t.events()), t.first_scn(), t.key()))
            .collect();
        let truncated = order.len() > limit;
        if truncated && limit > 0 {
            order.select_nth_unstable(limit - 1);
        }
        order.truncate(limit);
        order.sort_unstable();
        let transactions = order
            .iter()
            .filter_map(|(_, _, key)| self.buffer.transaction(*key))
            .map(|t| {
                let start = t.start();
                OpenTransaction {
                    key: t.key(),
                    container: start.and_then(|s| s.pdb.clone()),
                    user: t.username().map(str::to_owned),
                    first_scn: t.first_scn(),
                    first_change_ms: to_wall(t.buffered_at_ms()),
                    events: t.events(),
                    bytes: t.heap_bytes().saturating_add(t.disk_bytes()),
                    spilled: t.is_spilled(),
                    journaled: t.journaled().is_some(),
                }
            })
            .collect();
        OpenTransactions {
            taken_at_ms: wall,
            mined_to_scn: self.read.cursor.mined_to.map(|m| m.scn),
            open_transactions: metrics.open_transactions,
            buffered_events: metrics.buffered_events,
            transactions,
            truncated,
        }
    }
}
