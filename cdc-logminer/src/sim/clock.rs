//! The simulated wall clock: every TIMESTAMP of a row, and every DATE or TIMESTAMP value the
//! workload writes, comes from here, derived from the seed.

use cdc_core::OracleDateTime;

/// Nanoseconds since 1970-01-01T00:00:00 to a civil date and time (proleptic Gregorian).
pub fn datetime_from_epoch_nanos(nanos: i128) -> OracleDateTime {
    let secs = nanos.div_euclid(1_000_000_000);
    let frac = nanos.rem_euclid(1_000_000_000) as u32;
    let days = secs.div_euclid(86_400) as i64;
    let sod = secs.rem_euclid(86_400) as u32;
    // Howard Hinnant's civil_from_days
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let y = if m <= 2 { y + 1 } else { y };
    let year = y.clamp(-4712, 9999) as i16;
    OracleDateTime::new(
        year,
        m,
        d,
        (sod / 3600) as u8,
        (sod / 60 % 60) as u8,
        (sod % 60) as u8,
        frac,
    )
    .unwrap_or(OracleDateTime {
        year: 1970,
        month: 1,
        day: 1,
        hour: 0,
        minute: 0,
        second: 0,
        nanos: 0,
    })
}

/// The simulated clock, in nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimClock {
    now_nanos: i128,
}

impl SimClock {
    /// Starts at 2026-01-05 09:00:00 plus `offset_secs`.
    pub fn new(offset_secs: u64) -> SimClock {
        // 2026-01-05T09:00:00Z
        let base: i128 = 1_767_603_600;
        SimClock {
            now_nanos: (base + i128::from(offset_secs)) * 1_000_000_000,
        }
    }

    pub fn advance_millis(&mut self, millis: u64) {
        self.now_nanos += i128::from(millis) * 1_000_000;
    }

    pub fn advance_nanos(&mut self, nanos: u64) {
        self.now_nanos += i128::from(nanos);
    }

    pub fn now(self) -> OracleDateTime {
        datetime_from_epoch_nanos(self.now_nanos)
    }

    /// The time with one-second resolution, as the TIMESTAMP column of V$LOGMNR_CONTENTS.
    pub fn now_seconds(self) -> OracleDateTime {
        let mut t = self.now();
        t.nanos = 0;
        t
    }

    pub fn epoch_nanos(self) -> i128 {
        self.now_nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for nanos in [
            0i128,
            86_401_000_000_005,
            1_767_603_600_000_000_000,
            -86_400_000_000_000,
        ] {
            let t = datetime_from_epoch_nanos(nanos);
            assert_eq!(t.epoch_nanos(), nanos, "{t}");
        }
        assert_eq!(SimClock::new(0).now().to_string(), "2026-01-05T09:00:00");
    }
}
