//! What the engine does about a failed database call: the one table of recovery policy.
//!
//! ```text
//!   SourceError ──ora::classify──► Transient      → reconnect with backoff, mine the step again (CDC-1001)
//!                                  RemineStep     → discard the step, mine it again          (CDC-1002)
//!                                  QueryCancelled → halve the window, mine again             (CDC-4003 at 3×1 log)
//!                                  LogPurged      → stop CDC-2002
//!                                  Privilege      → stop CDC-5002
//!                                  Unclassified   → stop at once, naming the code
//! ```
//!
//! Nothing of a failed step is ever applied, so every retry starts from the same cursor.

use std::time::Duration;

use cdc_core::ora::{self, OraClass, OraCode};
use cdc_core::{CdcCode, CdcError};

use crate::source::SourceError;

/// Re-mined steps in a row that stop the task with CDC-1002.
pub const MAX_CONSECUTIVE_REMINES: u32 = 20;

/// What to do about one failed call.
#[derive(Debug)]
pub enum Recovery {
    /// Reopen the sessions with backoff within `cdc.retry.max.time.ms`, then mine again.
    Reconnect(SourceError),
    /// Discard the step and mine it again on the same session.
    Remine(SourceError),
    /// The query hit `cdc.mining.query.timeout.ms`: shrink the window and mine again.
    Shrink(SourceError),
    /// Stop the task.
    Stop(CdcError),
}

/// The recovery for `error`, with `cdc.retry.extra.error.codes` as `extra_transient`.
pub fn recovery_for(error: SourceError, extra_transient: &[OraCode]) -> Recovery {
    match error.class(extra_transient) {
        OraClass::Transient => Recovery::Reconnect(error),
        OraClass::RemineStep => Recovery::Remine(error),
        OraClass::QueryCancelled => Recovery::Shrink(error),
        OraClass::LogPurged => Recovery::Stop(
            CdcError::new(
                CdcCode::LogPurged,
                format!("a log the next step needs cannot be opened: {error}"),
            )
            .with_source(error),
        ),
        OraClass::Privilege => Recovery::Stop(
            CdcError::new(
                CdcCode::Privilege,
                format!("the capture user lacks a privilege: {error}"),
            )
            .with_source(error),
        ),
        OraClass::Unclassified => match error.ora_code() {
            Some(code) => Recovery::Stop(ora::stop_for_unclassified(code, &error.to_string())),
            None => Recovery::Stop(
                CdcError::new(
                    CdcCode::TransientDatabase,
                    format!("the database call failed with no ORA code to classify: {error}"),
                )
                .without_retry()
                .with_source(error),
            ),
        },
    }
}

/// Backoff for reconnecting: about 1 s, doubling to 30 s, with jitter, within a budget that
/// starts at the first failure and resets on success.
#[derive(Debug, Clone)]
pub struct Backoff {
    budget: Duration,
    first_failure_ms: Option<u64>,
    attempt: u32,
    jitter_state: u64,
}

const BASE: Duration = Duration::from_secs(1);
const CAP: Duration = Duration::from_secs(30);

impl Backoff {
    pub fn new(budget: Duration, seed: u64) -> Backoff {
        Backoff {
            budget,
            first_failure_ms: None,
            attempt: 0,
            jitter_state: seed | 1,
        }
    }

    /// The delay before the next attempt, or `None` when the budget is spent.
    pub fn next_delay(&mut self, now_ms: u64) -> Option<Duration> {
        let since = *self.first_failure_ms.get_or_insert(now_ms);
        let spent = Duration::from_millis(now_ms.saturating_sub(since));
        if spent >= self.budget {
            return None;
        }
        let exp = BASE.saturating_mul(1u32 << self.attempt.min(5)).min(CAP);
        self.attempt = self.attempt.saturating_add(1);
        // up to ±20 % so that many connectors do not reconnect in step
        let jitter_permille = (self.next_random() % 401) as i64 - 200;
        let millis = exp.as_millis() as i64;
        let delay = Duration::from_millis((millis + millis * jitter_permille / 1000).max(1) as u64);
        Some(delay.min(self.budget - spent))
    }

    /// Attempts made since the first failure.
    pub fn attempts(&self) -> u32 {
        self.attempt
    }

    /// A call succeeded: the next failure starts a new budget.
    pub fn reset(&mut self) {
        self.first_failure_ms = None;
        self.attempt = 0;
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64
        let mut x = self.jitter_state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.jitter_state = x;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ora(code: u32) -> SourceError {
        SourceError::ora(OraCode(code), "text")
    }

    #[test]
    fn policy_table() {
        assert!(matches!(
            recovery_for(ora(3113), &[]),
            Recovery::Reconnect(_)
        ));
        assert!(matches!(recovery_for(ora(28), &[]), Recovery::Reconnect(_)));
        assert!(matches!(
            recovery_for(ora(16331), &[]),
            Recovery::Reconnect(_)
        ));
        assert!(matches!(recovery_for(ora(310), &[]), Recovery::Remine(_)));
        assert!(matches!(recovery_for(ora(1291), &[]), Recovery::Remine(_)));
        assert!(matches!(
            recovery_for(
                SourceError::Timeout {
                    after: Duration::from_secs(1)
                },
                &[]
            ),
            Recovery::Shrink(_)
        ));
        let Recovery::Stop(e) = recovery_for(ora(1284), &[]) else {
            panic!("ORA-01284 stops")
        };
        assert_eq!(e.code(), CdcCode::LogPurged);
        let Recovery::Stop(e) = recovery_for(ora(1031), &[]) else {
            panic!("ORA-01031 stops")
        };
        assert_eq!(e.code(), CdcCode::Privilege);
        let Recovery::Stop(e) = recovery_for(ora(12345), &[]) else {
            panic!("an unclassified code stops")
        };
        assert!(e.to_string().contains("ORA-12345"), "{e}");
        assert!(!e.is_retried());
        // an extra code is retried
        assert!(matches!(
            recovery_for(ora(12345), &[OraCode(12345)]),
            Recovery::Reconnect(_)
        ));
        let Recovery::Stop(e) = recovery_for(
            SourceError::from_driver_message(
                "DPI-1047: Cannot locate a 64-bit Oracle Client library",
            ),
            &[],
        ) else {
            panic!("a missing client library stops")
        };
        assert!(e.to_string().contains("DPI-1047"), "{e}");
    }

    #[test]
    fn backoff_doubles_to_the_cap_within_the_budget() {
        let mut b = Backoff::new(Duration::from_secs(120), 7);
        let mut now = 1_000u64;
        let mut delays = Vec::new();
        while let Some(d) = b.next_delay(now) {
            delays.push(d);
            now += d.as_millis() as u64;
        }
        // 1, 2, 4, 8, 16, 30, 30, ... each within ±20 %
        for (i, d) in delays.iter().enumerate().take(6) {
            let nominal = [1.0, 2.0, 4.0, 8.0, 16.0, 30.0][i];
            let s = d.as_secs_f64();
            assert!(
                s >= nominal * 0.8 - 1e-9 && s <= nominal * 1.2 + 1e-9,
                "{i}: {s}"
            );
        }
        let total: Duration = delays.iter().sum();
        assert_eq!(
            total,
            Duration::from_secs(120),
            "the last delay ends at the budget"
        );
        b.reset();
        assert!(b.next_delay(now).is_some());
    }
}
