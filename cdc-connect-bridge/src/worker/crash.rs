//! Crash points for the crash tests, which must land a `kill -9` inside windows a few
//! microseconds wide: with `CDC_TEST_CRASH_AT=<point>:<n>` in its environment the process
//! aborts (SIGABRT: no destructor runs, nothing is flushed, as after `kill -9`) the `n`-th
//! time it reaches `<point>`. Without the variable, which is how the connector runs, each
//! point costs one load of a flag. The points (`docs/architecture.md`, "Testing"):
//!
//! - `journal-chunk-acked`: the broker acknowledged a journal chunk and the process dies
//!   before the acknowledgement counts (the chunk is in the topic; no offset covers it).
//! - `journal-commit-tombstones`: the commit's last record went out (under at-least-once, its
//!   offset is written) and the process dies before the tombstones of its chunks are sent.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that arms a crash point.
pub const CRASH_AT_VAR: &str = "CDC_TEST_CRASH_AT";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashPoint {
    JournalChunkAcked,
    JournalCommitTombstones,
}

impl CrashPoint {
    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::JournalChunkAcked => "journal-chunk-acked",
            CrashPoint::JournalCommitTombstones => "journal-commit-tombstones",
        }
    }

    fn from_name(name: &str) -> Option<CrashPoint> {
        [
            CrashPoint::JournalChunkAcked,
            CrashPoint::JournalCommitTombstones,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

struct Armed {
    point: CrashPoint,
    at: u64,
    reached: AtomicU64,
}

fn armed() -> Option<&'static Armed> {
    static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let spec = std::env::var(CRASH_AT_VAR).ok()?;
            let parsed = spec.split_once(':').and_then(|(name, n)| {
                Some((CrashPoint::from_name(name)?, n.trim().parse::<u64>().ok()?))
            });
            match parsed {
                Some((point, at)) if at > 0 => Some(Armed {
                    point,
                    at,
                    reached: AtomicU64::new(0),
                }),
                _ => {
                    tracing::warn!(
                        value = %spec,
                        "{CRASH_AT_VAR} is not <point>:<n> with a known point and n >= 1; ignored"
                    );
                    None
                }
            }
        })
        .as_ref()
}

/// Whether this is the armed `n`-th time `point` is reached (then the caller crashes, with
/// [`crash`], where the window is).
pub fn reached(point: CrashPoint) -> bool {
    match armed() {
        Some(armed) if armed.point == point => {
            armed.reached.fetch_add(1, Ordering::SeqCst) + 1 == armed.at
        }
        _ => false,
    }
}

/// Aborts the process, saying where (the test reads it from the log).
pub fn crash(point: CrashPoint) -> ! {
    eprintln!("{CRASH_AT_VAR}: crashing at {}", point.name());
    std::process::abort()
}
