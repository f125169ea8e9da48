//! Which engine records the broker acknowledged, in order.
//!
//! One engine record becomes one or more Kafka records (a delete and its tombstone); it is
//! acknowledged when all of them are. Delivery reports arrive in any order across partitions,
//! so the committable position is that of the newest record whose predecessors are all
//! acknowledged: an offset is never committed ahead of a record still in flight.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use cdc_offset::Position;
use rdkafka::error::KafkaError;

use crate::worker::queue::Bell;

#[derive(Debug)]
struct Inflight {
    /// Kafka records of this engine record without a delivery report yet.
    remaining: u32,
    /// The engine record's position; `None` for records that carry no offset of their own.
    position: Option<Arc<Position>>,
}

/// The delivery state of the records sent.
#[derive(Debug, Default)]
pub struct AckTracker {
    /// Engine records from `base` on, oldest first.
    inflight: VecDeque<Inflight>,
    base: u64,
    /// Position of the newest engine record acknowledged with all its predecessors.
    acked: Option<Arc<Position>>,
    /// Kafka records acknowledged.
    acked_records: u64,
    /// The first delivery failure: the task must stop (a record may be lost otherwise).
    failure: Option<(String, KafkaError)>,
    /// Rung when the acknowledged prefix grows or a delivery fails: the delivery thread may
    /// wait for either.
    bell: Option<Bell>,
    /// `base` and `registered()` for readers that do not take the tracker's lock.
    progress: Arc<AckProgress>,
    /// The crash tests' `journal-chunk-acked` point: the record whose acknowledgement aborts
    /// the process ([`crate::worker::crash`]).
    crash_on_ack: Option<u64>,
}

/// How far the tracker got, readable without its lock, which the producer's delivery reports
/// hold: the delivery thread looks at these after every record it sends.
#[derive(Debug, Default)]
pub struct AckProgress {
    acked_through: AtomicU64,
    registered: AtomicU64,
    /// A delivery failed: [`AckTracker::take_failure`] has it.
    failed: AtomicBool,
}

impl AckProgress {
    /// [`AckTracker::acked_through`] as of the tracker's last change.
    pub fn acked_through(&self) -> u64 {
        self.acked_through.load(Ordering::Acquire)
    }

    /// [`AckTracker::registered`] as of the tracker's last change.
    pub fn registered(&self) -> u64 {
        self.registered.load(Ordering::Acquire)
    }

    /// Whether a delivery failed since the tracker's failure was last taken.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }
}

impl AckTracker {
    pub fn new() -> AckTracker {
        AckTracker::default()
    }

    /// The tracker's progress, readable without its lock.
    pub fn progress(&self) -> Arc<AckProgress> {
        Arc::clone(&self.progress)
    }

    /// Registers an engine record about to be sent as `records` Kafka records; returns its
    /// sequence, the opaque its delivery reports carry.
    pub fn register(&mut self, records: u32, position: Option<Arc<Position>>) -> u64 {
        let seq = self.base + self.inflight.len() as u64;
        self.inflight.push_back(Inflight {
            remaining: records,
            position,
        });
        self.progress.registered.store(seq + 1, Ordering::Release);
        self.advance();
        seq
    }

    /// Rings `bell` from now on whenever the acknowledged prefix grows or a delivery fails.
    pub(crate) fn set_bell(&mut self, bell: Bell) {
        self.bell = Some(bell);
    }

    /// Aborts the process when engine record `seq` is acknowledged, before it counts.
    pub(crate) fn crash_on_ack(&mut self, seq: u64) {
        self.crash_on_ack = Some(seq);
    }

    /// A Kafka record of engine record `seq` was acknowledged.
    pub fn ack(&mut self, seq: u64) {
        if self.crash_on_ack == Some(seq) {
            crate::worker::crash::crash(crate::worker::crash::CrashPoint::JournalChunkAcked);
        }
        self.acked_records += 1;
        let Some(index) = seq.checked_sub(self.base) else {
            return;
        };
        if let Some(entry) = usize::try_from(index)
            .ok()
            .and_then(|i| self.inflight.get_mut(i))
        {
            entry.remaining = entry.remaining.saturating_sub(1);
        }
        self.advance();
    }

    /// A Kafka record could not be delivered.
    pub fn fail(&mut self, topic: String, error: KafkaError) {
        if self.failure.is_none() {
            self.failure = Some((topic, error));
        }
        self.progress.failed.store(true, Ordering::Release);
        if let Some(bell) = &self.bell {
            bell.ring_acks();
        }
    }

    fn advance(&mut self) {
        let base = self.base;
        self.pop_acked();
        if self.base != base
            && let Some(bell) = &self.bell
        {
            bell.ring_acks();
        }
    }

    fn pop_acked(&mut self) {
        let base = self.base;
        while self.inflight.front().is_some_and(|e| e.remaining == 0) {
            if let Some(entry) = self.inflight.pop_front() {
                self.base += 1;
                if entry.position.is_some() {
                    self.acked = entry.position;
                }
            }
        }
        if self.base != base {
            self.progress
                .acked_through
                .store(self.base, Ordering::Release);
        }
    }

    /// The position of the newest engine record acknowledged with all its predecessors.
    pub fn acked_position(&self) -> Option<Arc<Position>> {
        self.acked.clone()
    }

    /// Engine records acknowledged with all their predecessors: the sequence of the first
    /// one still in flight.
    pub fn acked_through(&self) -> u64 {
        self.base
    }

    /// Engine records registered: the sequence the next one gets.
    pub fn registered(&self) -> u64 {
        self.base + self.inflight.len() as u64
    }

    pub fn acked_records(&self) -> u64 {
        self.acked_records
    }

    /// Engine records sent and not yet acknowledged.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    pub fn take_failure(&mut self) -> Option<(String, KafkaError)> {
        self.progress.failed.store(false, Ordering::Release);
        self.failure.take()
    }

    /// Forgets what is in flight (after a Kafka transaction was aborted: its records will
    /// never be acknowledged).
    pub fn clear_inflight(&mut self) {
        self.base += self.inflight.len() as u64;
        self.inflight.clear();
        self.progress
            .acked_through
            .store(self.base, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::test_support::position;

    #[test]
    fn the_committable_position_never_passes_a_record_in_flight() {
        let mut t = AckTracker::new();
        let progress = t.progress();
        let a = t.register(1, Some(position(10)));
        let b = t.register(2, Some(position(20)));
        let c = t.register(1, Some(position(30)));
        assert_eq!((t.acked_through(), t.registered()), (0, 3));
        assert_eq!((progress.acked_through(), progress.registered()), (0, 3));
        t.ack(c);
        assert_eq!(t.acked_position(), None, "c is acked but a and b are not");
        t.ack(a);
        assert_eq!(t.acked_position(), Some(position(10)));
        t.ack(b);
        assert_eq!(
            t.acked_position(),
            Some(position(10)),
            "b waits for its tombstone"
        );
        t.ack(b);
        assert_eq!(t.acked_position(), Some(position(30)));
        assert_eq!(t.in_flight(), 0);
        assert_eq!(t.acked_records(), 4);
        assert_eq!((t.acked_through(), t.registered()), (3, 3));
        assert_eq!((progress.acked_through(), progress.registered()), (3, 3));
    }

    #[test]
    fn records_without_a_position_keep_the_previous_one() {
        let mut t = AckTracker::new();
        let a = t.register(1, Some(position(10)));
        let b = t.register(1, None);
        t.ack(b);
        t.ack(a);
        assert_eq!(t.acked_position(), Some(position(10)));
        assert_eq!(t.in_flight(), 0);
    }

    #[test]
    fn an_aborted_transaction_leaves_nothing_in_flight() {
        let mut t = AckTracker::new();
        let _ = t.register(1, Some(position(10)));
        t.clear_inflight();
        assert_eq!(t.progress().acked_through(), 1, "nothing is left in flight");
        let b = t.register(1, Some(position(20)));
        assert_eq!(b, 1);
        t.ack(b);
        assert_eq!(t.acked_position(), Some(position(20)));
    }
}
