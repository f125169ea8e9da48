//! The queue between the mining thread and the delivery thread, and the one wait of the
//! delivery thread.
//!
//! ```text
//!  mining thread ── push (blocks while full: records or bytes) ──► queue ──► next(): the
//!  control (stop, pause) ── Bell::ring_signal ─┐                              delivery thread
//!  delivery reports, offset writes ─ ring_acks ┴── wake the same wait ───────┘
//! ```
//!
//! The queue is bounded in records and in bytes (what the records hold on the heap): a slow
//! broker slows mining, it never grows memory. The delivery thread waits on one condition
//! variable for whatever comes first, taken in this order when several are there:
//!
//! 1. a stop or pause signal,
//! 2. acknowledgements (delivery reports or an offset written), when it asked for them,
//! 3. the next record, when it takes records (not while paused),
//! 4. its deadline (the quiet tick: commit or hand on what is acknowledged).
//!
//! Nothing polls: every producer of an event rings the bell it waits on. (The at-least-once
//! window's wait also has a 100 ms bound, a guard only: it arms the ring before it looks.)

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use cdc_logminer::engine::{EngineRecord, RecordKind, RecordSink, SinkClosed};
use parking_lot::{Condvar, Mutex};

use crate::worker::TaskStats;

/// The bytes a record holds on the heap, as the queue's byte bound counts them: the change's
/// values as the transaction buffer counts them, plus the record itself.
pub(crate) fn record_bytes(record: &EngineRecord) -> usize {
    let own = std::mem::size_of::<EngineRecord>();
    let held = match &record.kind {
        RecordKind::Change(change) => cdc_buffer::change_heap_bytes(&change.event),
        // a chunk holds its payload, up to cdc.txjournal.chunk.max.bytes and one frame
        RecordKind::Journal(journal) => journal.payload_bytes() as u64 + 256,
        // a snapshot row's values, counted as a change's after image is
        RecordKind::Snapshot(row) => {
            cdc_buffer::image_heap_bytes(&row.values) + row.row_id.len() as u64
        }
        // other side records are small and rare: a map of a few strings, a layout shared by Arc
        _ => 256,
    };
    own.saturating_add(usize::try_from(held).unwrap_or(usize::MAX))
}

/// What woke the delivery thread. (A record moves out of the queue in it: boxing it to shrink
/// the other variants would allocate once per record.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Wake {
    /// A stop or pause signal changed (read [`super::TaskSignals`] again).
    Signal,
    /// Records were acknowledged or an offset written.
    Acks,
    /// The next record; `more`: whether another one waits behind it.
    Record { record: EngineRecord, more: bool },
    /// The deadline passed with nothing else to do.
    Deadline,
    /// The mining thread is gone and every record it queued was taken.
    Ended,
}

#[derive(Default)]
struct State {
    records: VecDeque<(EngineRecord, usize)>,
    bytes: usize,
    sender_gone: bool,
    receiver_gone: bool,
    /// The sender waits for the queue to drain to half its bounds.
    sender_waiting: bool,
    signal: bool,
    acks: bool,
}

struct Shared {
    state: Mutex<State>,
    /// The delivery thread waits here.
    readable: Condvar,
    /// The mining thread waits here while the queue is full.
    writable: Condvar,
    /// Whether the delivery thread waits for acknowledgements: only then do delivery reports
    /// take the lock (they come once per Kafka record).
    acks_wanted: AtomicBool,
    max_records: usize,
    max_bytes: usize,
    stats: Arc<TaskStats>,
}

impl Shared {
    fn full(&self, state: &State, adding: usize) -> bool {
        !state.records.is_empty()
            && (state.records.len() >= self.max_records
                || state.bytes.saturating_add(adding) > self.max_bytes)
    }

    /// Whether a waiting sender may go on: the queue drained to half its bounds. A sender woken
    /// at every record taken would run one record at a time, a thread switch per record.
    fn drained(&self, state: &State) -> bool {
        state.records.len() <= self.max_records / 2 && state.bytes <= self.max_bytes / 2
    }

    /// Waits for the first of (in this order when several are there): a signal, an
    /// acknowledgement when `acks`, the next record when `records`, `deadline`.
    fn next(&self, acks: bool, records: bool, deadline: Instant) -> Wake {
        let shared = self;
        if acks {
            shared.acks_wanted.store(true, Ordering::SeqCst);
        }
        let mut state = shared.state.lock();
        let wake = loop {
            if std::mem::take(&mut state.signal) {
                break Wake::Signal;
            }
            if acks && std::mem::take(&mut state.acks) {
                break Wake::Acks;
            }
            if records {
                if let Some((record, bytes)) = state.records.pop_front() {
                    state.bytes = state.bytes.saturating_sub(bytes);
                    shared.publish_depth(&state);
                    let more = !state.records.is_empty();
                    if state.sender_waiting && shared.drained(&state) {
                        state.sender_waiting = false;
                        shared.writable.notify_one();
                    }
                    break Wake::Record { record, more };
                }
                if state.sender_gone {
                    break Wake::Ended;
                }
            }
            if shared.readable.wait_until(&mut state, deadline).timed_out() {
                // what arrived with the timeout is taken first
                if state.signal || (acks && state.acks) || (records && !state.records.is_empty()) {
                    continue;
                }
                break Wake::Deadline;
            }
        };
        drop(state);
        if acks {
            shared.acks_wanted.store(false, Ordering::SeqCst);
        }
        wake
    }

    fn publish_depth(&self, state: &State) {
        self.stats
            .queue_depth
            .store(state.records.len() as u64, Ordering::SeqCst);
    }
}

/// Rings the delivery thread's wait from another thread.
#[derive(Clone)]
pub(crate) struct Bell(Arc<Shared>);

impl std::fmt::Debug for Bell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bell")
    }
}

impl Bell {
    /// A stop or pause signal changed.
    pub(crate) fn ring_signal(&self) {
        self.0.state.lock().signal = true;
        self.0.readable.notify_all();
    }

    /// Records were acknowledged or an offset written (a no-op unless the delivery thread
    /// waits for that).
    pub(crate) fn ring_acks(&self) {
        if !self.0.acks_wanted.load(Ordering::SeqCst) {
            return;
        }
        self.0.state.lock().acks = true;
        self.0.readable.notify_all();
    }
}

/// Waits for acknowledgements (or a signal) on the delivery thread's one wait.
pub(crate) struct AckWaiter(Arc<Shared>);

impl AckWaiter {
    /// From now on, acknowledgements ring (until the next [`AckWaiter::wait`] returns or
    /// [`AckWaiter::disarm`]): called before the caller looks at what was acknowledged, so
    /// that one arriving between that look and the wait is not missed.
    pub(crate) fn arm(&self) {
        self.0.acks_wanted.store(true, Ordering::SeqCst);
    }

    /// Acknowledgements stop ringing (each would take the queue's lock).
    pub(crate) fn disarm(&self) {
        self.0.acks_wanted.store(false, Ordering::SeqCst);
    }

    /// [`Wake::Acks`], [`Wake::Signal`] or [`Wake::Deadline`], whichever comes first: an
    /// acknowledgement rung since [`AckWaiter::arm`] returns at once.
    pub(crate) fn wait(&self, deadline: Instant) -> Wake {
        self.0.next(true, false, deadline)
    }
}

/// The mining thread's end: a [`RecordSink`] that blocks while the queue is full and fails
/// once the delivery thread is gone.
pub(crate) struct QueueSender(Arc<Shared>);

/// The delivery thread's end.
pub(crate) struct QueueReceiver(Arc<Shared>);

/// A queue of at most `max_records` records and about `max_bytes` bytes (a full queue takes
/// the next record once it drained to half of both, so one record, whatever its size, always
/// goes in), counting its depth into `stats`.
pub(crate) fn record_queue(
    max_records: usize,
    max_bytes: usize,
    stats: Arc<TaskStats>,
) -> (QueueSender, QueueReceiver) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        readable: Condvar::new(),
        writable: Condvar::new(),
        acks_wanted: AtomicBool::new(false),
        max_records: max_records.max(1),
        max_bytes: max_bytes.max(1),
        stats,
    });
    (QueueSender(Arc::clone(&shared)), QueueReceiver(shared))
}

impl RecordSink for QueueSender {
    fn accept(&mut self, record: EngineRecord) -> Result<(), SinkClosed> {
        let bytes = record_bytes(&record);
        let shared = &*self.0;
        let mut state = shared.state.lock();
        if shared.full(&state, bytes) {
            // until the receiver says the queue drained to half its bounds, not for the first
            // free slot (one record over the bounds then, at most)
            state.sender_waiting = true;
            while state.sender_waiting && !state.receiver_gone {
                shared.writable.wait(&mut state);
            }
        }
        if state.receiver_gone {
            return Err(SinkClosed);
        }
        state.records.push_back((record, bytes));
        state.bytes = state.bytes.saturating_add(bytes);
        shared.publish_depth(&state);
        drop(state);
        shared.readable.notify_one();
        Ok(())
    }
}

impl Drop for QueueSender {
    fn drop(&mut self) {
        self.0.state.lock().sender_gone = true;
        self.0.readable.notify_all();
    }
}

impl QueueReceiver {
    /// The bell other threads ring this receiver's wait with.
    pub(crate) fn bell(&self) -> Bell {
        Bell(Arc::clone(&self.0))
    }

    /// Waits for the first of (in this order when several are there): a signal, an
    /// acknowledgement when `acks`, the next record when `records`, `deadline`.
    pub(crate) fn next(&self, acks: bool, records: bool, deadline: Instant) -> Wake {
        self.0.next(acks, records, deadline)
    }

    /// The wait for acknowledgements alone, for the delivery thread's code that holds no
    /// receiver (the at-least-once window).
    pub(crate) fn ack_waiter(&self) -> AckWaiter {
        AckWaiter(Arc::clone(&self.0))
    }

    /// Whether the sender waits for room.
    #[cfg(test)]
    fn sender_waits(&self) -> bool {
        self.0.state.lock().sender_waiting
    }

    /// Whether a record waits.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> bool {
        !self.0.state.lock().records.is_empty()
    }
}

impl Drop for QueueReceiver {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.receiver_gone = true;
        state.records.clear();
        state.bytes = 0;
        self.0.publish_depth(&state);
        drop(state);
        self.0.writable.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cdc_core::OpsKind;
    use cdc_core::ops::OpsEvent;

    use super::*;
    use crate::worker::test_support::position;

    fn ops(n: u64) -> EngineRecord {
        EngineRecord {
            kind: RecordKind::Ops(OpsEvent {
                kind: OpsKind::Reconnected,
                details: [("n".to_owned(), n.to_string())].into(),
            }),
            position: position(n),
        }
    }

    fn n_of(record: &EngineRecord) -> Option<u64> {
        match &record.kind {
            RecordKind::Ops(event) => event.details.get("n").and_then(|n| n.parse().ok()),
            _ => None,
        }
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    /// Sends records 1..=`n` from a thread of its own, then drops the sender.
    fn send(mut tx: QueueSender, n: u64) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            for n in 1..=n {
                tx.accept(ops(n)).expect("accepted");
            }
        })
    }

    /// Waits, at most 5 s, until `done`.
    fn until(what: &str, done: impl Fn() -> bool) {
        let waited = Instant::now();
        while !done() {
            assert!(waited.elapsed() < Duration::from_secs(5), "never {what}");
            std::thread::yield_now();
        }
    }

    /// Records come out in order; a full queue blocks the sender until one is taken, and a
    /// receiver gone fails it; the sender gone ends the receiver once the queue is empty.
    #[test]
    fn records_in_order_bounded_in_records() {
        let stats = Arc::new(TaskStats::default());
        let (tx, rx) = record_queue(2, usize::MAX, Arc::clone(&stats));
        let sender = send(tx, 5);
        // the sender fills the queue and waits
        until("filled", || rx.sender_waits());
        assert_eq!(
            stats.queue_depth.load(Ordering::SeqCst),
            2,
            "over the bound"
        );
        let mut got = Vec::new();
        loop {
            match rx.next(false, true, soon()) {
                Wake::Record { record, .. } => got.extend(n_of(&record)),
                Wake::Ended => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        sender.join().expect("sender");
        assert_eq!(got, vec![1, 2, 3, 4, 5]);
        assert_eq!(stats.queue_depth.load(Ordering::SeqCst), 0);

        let (mut tx, rx) = record_queue(1, usize::MAX, Arc::new(TaskStats::default()));
        tx.accept(ops(1)).expect("room for one");
        drop(rx);
        assert!(tx.accept(ops(2)).is_err(), "nobody takes it");
    }

    /// A full queue lets its sender go on once it drained to half, not at every record taken
    /// (a thread switch per record).
    #[test]
    fn a_full_queue_wakes_its_sender_at_half() {
        let stats = Arc::new(TaskStats::default());
        let (tx, rx) = record_queue(4, usize::MAX, Arc::clone(&stats));
        let sender = send(tx, 5);
        let depth = || stats.queue_depth.load(Ordering::SeqCst);
        until("filled", || rx.sender_waits());
        assert_eq!(depth(), 4);
        assert!(matches!(rx.next(false, true, soon()), Wake::Record { .. }));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(
            depth(),
            3,
            "the sender went on before the queue drained to half"
        );
        assert!(matches!(rx.next(false, true, soon()), Wake::Record { .. }));
        sender.join().expect("sender");
        assert_eq!(depth(), 3, "the fifth record went in once two were left");
    }

    /// The byte bound holds records back even when the record bound has room, but one record
    /// always goes in.
    #[test]
    fn bounded_in_bytes_one_record_always_fits() {
        let one = record_bytes(&ops(1));
        let stats = Arc::new(TaskStats::default());
        let (tx, rx) = record_queue(1000, one * 2, Arc::clone(&stats));
        let sender = send(tx, 4);
        until("filled", || rx.sender_waits());
        assert_eq!(
            stats.queue_depth.load(Ordering::SeqCst),
            2,
            "over the byte bound"
        );
        let mut got = 0;
        while let Wake::Record { .. } = rx.next(false, true, soon()) {
            got += 1;
        }
        sender.join().expect("sender");
        assert_eq!(got, 4);

        let (mut tx, rx) = record_queue(10, 1, Arc::new(TaskStats::default()));
        tx.accept(ops(1)).expect("one record always fits");
        assert!(matches!(rx.next(false, true, soon()), Wake::Record { .. }));
    }

    /// Several things at once come out by priority: signal, acknowledgements, record; a
    /// paused receiver takes no record; nothing at all waits until the deadline.
    #[test]
    fn one_wait_with_priorities() {
        let (mut tx, rx) = record_queue(10, usize::MAX, Arc::new(TaskStats::default()));
        let bell = rx.bell();
        tx.accept(ops(1)).expect("accepted");
        bell.ring_signal();
        // asked for: acks rung while it is not waiting for them are not kept
        bell.ring_acks();
        assert!(matches!(rx.next(true, true, soon()), Wake::Signal));
        assert!(matches!(
            rx.next(true, true, soon()),
            Wake::Record { more: false, .. }
        ));

        let quiet = Instant::now();
        assert!(matches!(
            rx.next(true, true, Instant::now() + Duration::from_millis(30)),
            Wake::Deadline
        ));
        assert!(quiet.elapsed() >= Duration::from_millis(30));

        // paused: a record waits, the deadline comes first
        tx.accept(ops(2)).expect("accepted");
        assert!(matches!(
            rx.next(false, false, Instant::now() + Duration::from_millis(10)),
            Wake::Deadline
        ));
        assert!(rx.waiting());

        // acknowledgements rung from another thread while it waits for them
        let ringer = {
            let bell = rx.bell();
            std::thread::spawn(move || {
                until("waited", || bell.0.acks_wanted.load(Ordering::SeqCst));
                bell.ring_acks();
            })
        };
        assert!(matches!(rx.next(true, false, soon()), Wake::Acks));
        ringer.join().expect("ringer");

        // a signal from another thread wakes a paused wait at once
        let ringer = {
            let bell = rx.bell();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                bell.ring_signal();
            })
        };
        let started = Instant::now();
        assert!(matches!(rx.next(false, false, soon()), Wake::Signal));
        assert!(started.elapsed() < Duration::from_secs(4));
        ringer.join().expect("ringer");

        drop(tx);
        assert!(matches!(rx.next(false, true, soon()), Wake::Record { .. }));
        assert!(matches!(rx.next(false, true, soon()), Wake::Ended));
    }
}
