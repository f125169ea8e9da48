//! The adaptive mining window (`docs/decisions.md`, D5): how many whole logs the next step
//! covers.
//!
//! A step that finishes within `cdc.mining.target.latency.ms` lets the next one cover twice as
//! many logs, up to `cdc.mining.max.logs.per.step`; a step cancelled at
//! `cdc.mining.query.timeout.ms` halves it. Three timeouts in a row at a one-log window mean
//! mining cannot make progress: CDC-4003.

use std::time::Duration;

use cdc_core::{CdcCode, CdcError};

/// Consecutive timeouts at a one-log window that stop the task.
pub const STALL_TIMEOUTS: u32 = 3;

/// The window state carried from step to step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdaptiveWindow {
    logs: usize,
    max_logs: usize,
    target: Duration,
    timeouts_at_one: u32,
}

impl AdaptiveWindow {
    /// Starts at one log.
    pub fn new(max_logs: usize, target: Duration) -> AdaptiveWindow {
        AdaptiveWindow {
            logs: 1,
            max_logs: max_logs.max(1),
            target,
            timeouts_at_one: 0,
        }
    }

    /// Logs the next step covers.
    pub fn logs(&self) -> usize {
        self.logs
    }

    /// A step finished in `elapsed`.
    pub fn on_step(&mut self, elapsed: Duration) {
        self.timeouts_at_one = 0;
        if elapsed < self.target {
            self.logs = (self.logs * 2).min(self.max_logs);
        }
    }

    /// A step was cancelled at the query timeout; `timeout` names it in the stop.
    pub fn on_timeout(&mut self, timeout: Duration) -> Result<(), CdcError> {
        if self.logs == 1 {
            self.timeouts_at_one += 1;
            if self.timeouts_at_one >= STALL_TIMEOUTS {
                return Err(CdcError::new(
                    CdcCode::MiningStalled,
                    format!(
                        "{STALL_TIMEOUTS} mining steps in a row over a single log were cancelled \
                         at cdc.mining.query.timeout.ms ({} ms)",
                        timeout.as_millis()
                    ),
                ));
            }
        } else {
            self.logs = (self.logs / 2).max(1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGET: Duration = Duration::from_millis(2000);
    const TIMEOUT: Duration = Duration::from_secs(600);

    #[test]
    fn fast_steps_double_up_to_the_cap() {
        let mut w = AdaptiveWindow::new(8, TARGET);
        let mut seen = vec![w.logs()];
        for _ in 0..5 {
            w.on_step(Duration::from_millis(10));
            seen.push(w.logs());
        }
        assert_eq!(seen, [1, 2, 4, 8, 8, 8]);
        // a slow step keeps the window
        w.on_step(Duration::from_secs(5));
        assert_eq!(w.logs(), 8);
    }

    #[test]
    fn timeouts_halve_then_stall_at_one_log() {
        let mut w = AdaptiveWindow::new(8, TARGET);
        for _ in 0..3 {
            w.on_step(Duration::ZERO);
        }
        assert_eq!(w.logs(), 8);
        for expect in [4, 2, 1] {
            w.on_timeout(TIMEOUT).unwrap();
            assert_eq!(w.logs(), expect);
        }
        w.on_timeout(TIMEOUT).unwrap();
        w.on_timeout(TIMEOUT).unwrap();
        let stop = w.on_timeout(TIMEOUT).unwrap_err();
        assert_eq!(stop.code(), CdcCode::MiningStalled);
        assert!(stop.to_string().contains("CDC-4003"));
    }

    #[test]
    fn a_good_step_resets_the_stall_count() {
        let mut w = AdaptiveWindow::new(1, TARGET);
        w.on_timeout(TIMEOUT).unwrap();
        w.on_timeout(TIMEOUT).unwrap();
        w.on_step(Duration::from_secs(60));
        w.on_timeout(TIMEOUT).unwrap();
        w.on_timeout(TIMEOUT).unwrap();
        assert!(w.on_timeout(TIMEOUT).is_err());
    }
}
