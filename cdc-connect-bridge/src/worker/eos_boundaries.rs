//! Where Kafka transactions end under exactly-once delivery (`docs/decisions.md`, D10;
//! `docs/running.md`, "Delivery").
//!
//! A pure state machine, fed what the worker sent and asked after every engine record whether
//! the open Kafka transaction should be committed now:
//!
//! - Only at a boundary: after the last record of an Oracle transaction, or after a heartbeat,
//!   ops or DLQ record written between Oracle transactions.
//! - At a boundary, it ends once any `cdc.eos.batch.*` bound is reached (records, bytes of
//!   change data, time since the Kafka transaction began), or when no record is waiting.
//! - An Oracle transaction with more than `cdc.eos.split.max.records` changes or
//!   `cdc.eos.split.max.bytes` of change data is split: inside it a Kafka transaction also
//!   ends once it holds `split.max.records` of its changes or `split.max.bytes` bytes of its
//!   records, after a whole change (an exact event index), so no Kafka transaction grows
//!   beyond the split bounds.

use std::time::Duration;

use cdc_core::change::CommitInfo;
use cdc_core::config::EosSettings;

/// The bounds of `cdc.eos.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EosBounds {
    pub batch_max_records: u64,
    pub batch_max_bytes: u64,
    pub batch_max_time: Duration,
    pub split_max_records: u64,
    pub split_max_bytes: u64,
}

impl EosBounds {
    pub fn from_settings(eos: &EosSettings) -> EosBounds {
        EosBounds {
            batch_max_records: eos.batch_max_records,
            batch_max_bytes: eos.batch_max_bytes,
            batch_max_time: eos.batch_max_time,
            split_max_records: eos.split_max_records,
            split_max_bytes: eos.split_max_bytes,
        }
    }

    /// Whether an Oracle transaction is split over several Kafka transactions. Decided from
    /// what the commit says of the whole transaction, so every record of it, including those
    /// of the first part and those after a restart inside it, carries the same `cdc.split`.
    pub fn splits(&self, commit: &CommitInfo) -> bool {
        commit.event_count > self.split_max_records || commit.data_bytes > self.split_max_bytes
    }
}

impl Default for EosBounds {
    /// The documented defaults.
    fn default() -> Self {
        EosBounds {
            batch_max_records: 5_000,
            batch_max_bytes: 16 * 1024 * 1024,
            batch_max_time: Duration::from_millis(500),
            split_max_records: 500_000,
            split_max_bytes: 256 * 1024 * 1024,
        }
    }
}

/// What one engine record added to the open Kafka transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// A change record that is not the last of its Oracle transaction.
    Change { split: bool },
    /// The last change record of its Oracle transaction.
    LastChange { split: bool },
    /// A heartbeat, ops or DLQ record between Oracle transactions.
    Side,
    /// A snapshot row: a Kafka transaction does not end inside its chunk, whose
    /// `snapshot-chunk-done` event (a side record) carries the offset past it.
    SnapshotRow,
}

/// The planner's answer after a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Keep the Kafka transaction open.
    Continue,
    /// Commit it now, with the offset of the record just sent.
    Commit(CommitReason),
}

/// Why a Kafka transaction ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitReason {
    BatchRecords,
    BatchBytes,
    BatchTime,
    /// No record waiting: a quiet database does not hold records back.
    Idle,
    /// A part of a split Oracle transaction is full.
    SplitPart,
}

/// The open Kafka transaction, as the planner counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Open {
    began_ms: u64,
    records: u64,
    bytes: u64,
}

/// Decides where Kafka transactions end.
#[derive(Debug, Clone)]
pub struct TransactionPlanner {
    bounds: EosBounds,
    open: Option<Open>,
    /// Changes and bytes of the current split Oracle transaction in the open Kafka
    /// transaction.
    part: (u64, u64),
}

impl TransactionPlanner {
    pub fn new(bounds: EosBounds) -> TransactionPlanner {
        TransactionPlanner {
            bounds,
            open: None,
            part: (0, 0),
        }
    }

    pub fn bounds(&self) -> &EosBounds {
        &self.bounds
    }

    /// Whether a Kafka transaction is open.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// A Kafka transaction began at `now_ms`.
    pub fn began(&mut self, now_ms: u64) {
        self.open = Some(Open {
            began_ms: now_ms,
            ..Open::default()
        });
        self.part = (0, 0);
    }

    /// The open Kafka transaction was committed or aborted.
    pub fn ended(&mut self) {
        self.open = None;
        self.part = (0, 0);
    }

    /// Notes what an engine record added (`records` Kafka records, `bytes` of keys and values)
    /// and decides whether to commit now. `waiting`: whether another engine record is ready.
    pub fn after(
        &mut self,
        sent: Sent,
        records: u64,
        bytes: u64,
        now_ms: u64,
        waiting: bool,
    ) -> Decision {
        let Some(open) = self.open.as_mut() else {
            return Decision::Continue;
        };
        open.records += records;
        open.bytes += bytes;
        let open = *open;
        match sent {
            Sent::SnapshotRow => Decision::Continue,
            Sent::Change { split } => {
                if split {
                    self.part.0 += 1;
                    self.part.1 += bytes;
                    if self.part.0 >= self.bounds.split_max_records
                        || self.part.1 >= self.bounds.split_max_bytes
                    {
                        return Decision::Commit(CommitReason::SplitPart);
                    }
                }
                Decision::Continue
            }
            Sent::LastChange { .. } | Sent::Side => {
                // the next split transaction counts its parts from zero, even when it shares
                // this Kafka transaction
                self.part = (0, 0);
                self.at_boundary(open, now_ms, waiting)
            }
        }
    }

    /// Whether the open Kafka transaction should end at a boundary: a batch bound is reached
    /// or nothing is waiting.
    fn at_boundary(&self, open: Open, now_ms: u64, waiting: bool) -> Decision {
        let bounds = &self.bounds;
        if open.records >= bounds.batch_max_records {
            Decision::Commit(CommitReason::BatchRecords)
        } else if open.bytes >= bounds.batch_max_bytes {
            Decision::Commit(CommitReason::BatchBytes)
        } else if now_ms.saturating_sub(open.began_ms) >= millis(bounds.batch_max_time) {
            Decision::Commit(CommitReason::BatchTime)
        } else if !waiting {
            Decision::Commit(CommitReason::Idle)
        } else {
            Decision::Continue
        }
    }

    /// At a boundary with nothing arriving, whether the open Kafka transaction has outlived
    /// `cdc.eos.batch.max.ms` (the worker asks while it waits for the next record).
    pub fn expired(&self, now_ms: u64) -> bool {
        self.open.is_some_and(|open| {
            now_ms.saturating_sub(open.began_ms) >= millis(self.bounds.batch_max_time)
        })
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bounds(batch_records: u64, split_records: u64) -> EosBounds {
        EosBounds {
            batch_max_records: batch_records,
            batch_max_bytes: u64::MAX,
            batch_max_time: Duration::from_secs(3600),
            split_max_records: split_records,
            split_max_bytes: u64::MAX,
        }
    }

    #[test]
    fn small_transactions_share_one_kafka_transaction_until_a_bound_at_a_commit() {
        let mut p = TransactionPlanner::new(bounds(5, 100));
        p.began(0);
        // three Oracle transactions of 2 changes: the bound (5) is reached inside the third,
        // and the Kafka transaction ends only at its commit
        let mut decisions = Vec::new();
        for _ in 0..3 {
            decisions.push(p.after(Sent::Change { split: false }, 1, 10, 0, true));
            decisions.push(p.after(Sent::LastChange { split: false }, 1, 10, 0, true));
        }
        let commits: Vec<usize> = decisions
            .iter()
            .enumerate()
            .filter(|(_, d)| matches!(d, Decision::Commit(_)))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(commits, vec![5]);
        assert_eq!(decisions[5], Decision::Commit(CommitReason::BatchRecords));
    }

    #[test]
    fn nothing_waiting_ends_the_transaction_at_a_boundary_only() {
        let mut p = TransactionPlanner::new(bounds(5000, 100));
        p.began(0);
        assert_eq!(
            p.after(Sent::Change { split: false }, 1, 10, 0, false),
            Decision::Continue
        );
        assert_eq!(
            p.after(Sent::LastChange { split: false }, 1, 10, 0, false),
            Decision::Commit(CommitReason::Idle)
        );
        p.ended();
        p.began(0);
        assert_eq!(
            p.after(Sent::Side, 1, 10, 0, false),
            Decision::Commit(CommitReason::Idle)
        );
    }

    #[test]
    fn the_time_bound_applies_at_the_next_commit() {
        let mut p = TransactionPlanner::new(EosBounds {
            batch_max_time: Duration::from_millis(500),
            ..bounds(5000, 100)
        });
        p.began(1_000);
        assert_eq!(
            p.after(Sent::Change { split: false }, 1, 10, 1_600, true),
            Decision::Continue
        );
        assert!(p.expired(1_600));
        assert_eq!(
            p.after(Sent::LastChange { split: false }, 1, 10, 1_600, true),
            Decision::Commit(CommitReason::BatchTime)
        );
    }

    #[test]
    fn a_split_transaction_ends_parts_at_exact_indexes() {
        let mut p = TransactionPlanner::new(bounds(5000, 4));
        p.began(0);
        let mut ends = Vec::new();
        for index in 0..10u64 {
            let sent = if index == 9 {
                Sent::LastChange { split: true }
            } else {
                Sent::Change { split: true }
            };
            if let Decision::Commit(reason) = p.after(sent, 1, 10, 0, true) {
                ends.push((index, reason));
                p.ended();
                p.began(0);
            }
        }
        // the last part ends at the Oracle commit like any batch (here: more is waiting, so
        // it stays open for the next Oracle transaction)
        assert_eq!(
            ends,
            vec![(3, CommitReason::SplitPart), (7, CommitReason::SplitPart)]
        );
    }

    #[test]
    fn a_split_transaction_after_another_in_the_same_kafka_transaction_counts_from_zero() {
        let mut p = TransactionPlanner::new(bounds(5000, 2));
        p.began(0);
        // a split transaction of 3 changes: a part of 2, then its last change stays open
        assert_eq!(
            p.after(Sent::Change { split: true }, 1, 1, 0, true),
            Decision::Continue
        );
        assert!(matches!(
            p.after(Sent::Change { split: true }, 1, 1, 0, true),
            Decision::Commit(CommitReason::SplitPart)
        ));
        p.ended();
        p.began(0);
        assert_eq!(
            p.after(Sent::LastChange { split: true }, 1, 1, 0, true),
            Decision::Continue
        );
        // the next one shares the Kafka transaction: its first part still holds 2 changes
        assert_eq!(
            p.after(Sent::Change { split: true }, 1, 1, 0, true),
            Decision::Continue
        );
        assert!(matches!(
            p.after(Sent::Change { split: true }, 1, 1, 0, true),
            Decision::Commit(CommitReason::SplitPart)
        ));
    }

    proptest! {
        /// Whatever the transactions, sizes and bounds: a Kafka transaction ends only after the
        /// last record of an Oracle transaction or after a side record, except inside a split
        /// one; and no part of a split transaction holds more than the split bound.
        #[test]
        fn kafka_transactions_end_only_where_allowed(
            txns in proptest::collection::vec((1u64..40, any::<bool>()), 1..40),
            batch in 1u64..50,
            split in 1u64..30,
            waiting_gaps in proptest::collection::vec(any::<bool>(), 0..200),
        ) {
            let mut p = TransactionPlanner::new(bounds(batch, split));
            let mut waiting = waiting_gaps.into_iter().chain(std::iter::repeat(true));
            p.began(0);
            let mut in_part = 0u64;
            for (events, side_after) in txns {
                let is_split = events > split;
                for index in 0..events {
                    let last = index + 1 == events;
                    let sent = if last {
                        Sent::LastChange { split: is_split }
                    } else {
                        Sent::Change { split: is_split }
                    };
                    in_part += 1;
                    let decision = p.after(sent, 1, 1, 0, waiting.next().unwrap_or(true));
                    if let Decision::Commit(reason) = decision {
                        if !last {
                            prop_assert!(is_split, "ended inside an unsplit transaction");
                            prop_assert_eq!(reason, CommitReason::SplitPart);
                        }
                        p.ended();
                        p.began(0);
                        in_part = 0;
                    }
                    if is_split {
                        prop_assert!(in_part <= split);
                    }
                }
                in_part = 0;
                if side_after
                    && let Decision::Commit(_) = p.after(Sent::Side, 1, 1, 0, waiting.next().unwrap_or(true))
                {
                    p.ended();
                    p.began(0);
                }
            }
        }
    }
}
