//! Time as the engine sees it: the system clock in a service, a manual one in tests.

use super::*;

/// Time as the engine sees it; tests drive a manual clock so that no test waits.
pub trait Clock: Send + fmt::Debug {
    /// Milliseconds on a monotonic scale.
    fn now_ms(&self) -> u64;
    /// Waits (a manual clock just moves on).
    fn sleep(&mut self, duration: Duration);
    /// Milliseconds since the Unix epoch, for what is compared with the database's times (a
    /// log's FIRST_TIME) or shown to an operator; 0 if the system clock is before 1970.
    fn wall_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, millis)
    }
}

/// The wall clock.
#[derive(Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        millis(self.origin.elapsed())
    }

    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// A clock that moves only when told or slept on. Clones share the time, so a test keeps a
/// handle to the clock it gave the engine.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now_ms: Arc<std::sync::atomic::AtomicU64>,
}

impl ManualClock {
    pub fn advance(&self, duration: Duration) {
        self.now_ms
            .fetch_add(millis(duration), std::sync::atomic::Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn sleep(&mut self, duration: Duration) {
        self.advance(duration);
    }

    /// The same time: a test sets it to the epoch time it needs.
    fn wall_ms(&self) -> u64 {
        self.now_ms()
    }
}
