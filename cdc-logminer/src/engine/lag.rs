//! The lag case no exact schema version decodes: dictionary builds into the redo, and the
//! replay of a step's redo with one.
//!
//! A row written before a later DDL comes back from the online catalog generic (STATUS 2,
//! `"COL n"`, `HEXTORAW`). The decoder reads it with the version valid at its SCN when that
//! version is known exact (`dictionary.rs`); otherwise the row is mined again here, with a
//! LogMiner dictionary a build wrote into the redo and carried through the DDL after it
//! (`DICT_FROM_REDO_LOGS + DDL_DICT_TRACKING`), which names it as it was written:
//!
//! ```text
//!  lag-case row ─► replay cached for its address? ─► decode the named row with the version
//!       │                                             valid at its SCN (may be inexact)
//!       └─ no: newest build at or below the step's oldest SCN, its logs present and
//!          unbroken up to the step's last log ─► session (RedoLogs) ─► rows of the step,
//!          by address, kept until the cursor passes them
//! ```
//!
//! Whatever stands in the way (range mining mode, no build, its logs purged, the row still
//! generic, a column the version lacks) is CDC-6001 for the row, held with its transaction
//! like every row that cannot be decoded, and never a DLQ record.

use super::*;

use cdc_core::config::TimeOfDay;

use crate::source::{DictionaryBuild, DictionarySource, LogFile, whole_builds};

const DAY_MS: i64 = 86_400_000;

/// `cdc.dictionary.build.interval.ms` and `cdc.dictionary.build.time`: builds every `interval`
/// from `time` of day in the database's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildSchedule {
    pub interval: Duration,
    pub time: TimeOfDay,
}

impl BuildSchedule {
    /// The daily default: every 24 h from 02:00.
    pub fn daily() -> BuildSchedule {
        BuildSchedule {
            interval: Duration::from_millis(DAY_MS as u64),
            time: TimeOfDay { hour: 2, minute: 0 },
        }
    }

    /// The first scheduled build after `now` (both milliseconds of the database's wall clock
    /// since 1970-01-01): the times `time` of a day plus whole intervals.
    pub fn next_after(&self, now: i64) -> i64 {
        let interval = i64::try_from(self.interval.as_millis())
            .unwrap_or(i64::MAX)
            .max(1);
        let of_day = (i64::from(self.time.hour) * 60 + i64::from(self.time.minute)) * 60_000;
        let mut anchor = now.div_euclid(DAY_MS) * DAY_MS + of_day;
        if anchor > now {
            anchor -= DAY_MS;
        }
        let steps = (now - anchor) / interval + 1;
        anchor.saturating_add(steps.saturating_mul(interval))
    }
}

/// What the engine knows of dictionary builds and the replay rows it holds.
#[derive(Default)]
pub(super) struct LagState {
    /// The builds this run made, oldest first: their exact SCN, before their logs are
    /// archived (online logs carry no DICTIONARY_BEGIN flag).
    builds: Vec<DictionaryBuild>,
    /// Engine-clock milliseconds of the next scheduled build; `None` while builds are off.
    next_build_ms: Option<u64>,
    /// Why no build is made (off, range mode, no grant).
    builds_off: Option<String>,
    /// The database clock's offset from UTC, in minutes (DB time of the schedule).
    utc_offset_minutes: i32,
    started: bool,
    /// The step being applied, as the read saw it.
    pub(super) step: Option<StepExtent>,
    /// Rows a replay returned, by address, until the cursor passes them; and what a replay
    /// of the current step could not do.
    replayed: foldhash::HashMap<RedoAddr, MinedRow>,
    /// The highest address the held replay rows cover.
    replayed_to: Option<RedoAddr>,
    unavailable: Option<String>,
    /// The replay made during this step, for its `dictionary-replay` event.
    replay_event: Option<ReplayEvent>,
}

/// What a step read: the logs of its window, its lower bound, its oldest SCN and last address.
#[derive(Debug, Clone)]
pub(super) struct StepExtent {
    pub(super) logs: Vec<LogFile>,
    pub(super) from: RedoBound,
    pub(super) oldest_scn: Scn,
    pub(super) last: Option<RedoAddr>,
}

struct ReplayEvent {
    from_scn: Scn,
    to_scn: Scn,
    tables: std::collections::BTreeSet<String>,
}

/// A build the replay may start from: the SCN its dictionary is of (at most), and its first
/// log in the inventory.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    dictionary_scn: Scn,
    first_log: usize,
}

impl LagState {
    pub(super) fn new(
        schedule: Option<BuildSchedule>,
        utc_offset_minutes: i32,
        writable: bool,
    ) -> LagState {
        let builds_off = if schedule.is_none() {
            Some("dictionary builds are off (cdc.dictionary.build.interval.ms=0)".into())
        } else if !writable {
            Some(
                "the database is not a primary opened read-write, so it cannot run dictionary                  builds (builds on the primary through cdc.dictionary.database.url are not                  built yet): only builds already in its redo can be replayed from"
                    .into(),
            )
        } else {
            None
        };
        LagState {
            builds_off,
            utc_offset_minutes,
            ..LagState::default()
        }
    }
}

fn build_event(status: &str, millis: u64, message: String) -> OpsEvent {
    OpsEvent::new(
        OpsKind::DictionaryBuild,
        BTreeMap::from([
            ("status".to_owned(), status.to_owned()),
            ("millis".to_owned(), millis.to_string()),
            ("message".to_owned(), message),
        ]),
    )
}

impl<S: RedoSource> CaptureEngine<S> {
    /// Dictionary builds, before a step: one at the first step when the available logs hold
    /// no whole build, then the schedule's. In range mode none (no redo dictionary can be
    /// added to such a session); without EXECUTE on DBMS_LOGMNR_D builds stop until the next
    /// task start, said once by a `dictionary-build` event with `status=disabled`.
    pub(super) fn dictionary_builds(&mut self) {
        let Some(schedule) = self.settings.dictionary_builds else {
            return;
        };
        if self.lag.builds_off.is_some() {
            return;
        }
        let now = self.clock.now_ms();
        if !self.lag.started {
            self.lag.started = true;
            if self.read.session_mode == SessionMode::Range {
                self.lag.builds_off = Some(
                    "dictionary builds are off in range mining mode: a redo dictionary cannot be \
                     added to a session that mines by SCN range (cdc.mining.mode=range, or auto \
                     in a PDB)"
                        .into(),
                );
                return;
            }
            let query = self.inventory_query();
            let inventory = match self.source.log_inventory(&query) {
                Ok(inventory) => inventory,
                // the step's read meets the same error and recovers; asked again after it
                Err(_) => {
                    self.lag.started = false;
                    return;
                }
            };
            if whole_builds(&inventory).is_empty() {
                self.build_now();
            }
            self.schedule_next(schedule, now);
            return;
        }
        if self.lag.next_build_ms.is_some_and(|at| now >= at) {
            self.build_now();
            self.schedule_next(schedule, now);
        }
    }

    fn schedule_next(&mut self, schedule: BuildSchedule, now_ms: u64) {
        if self.lag.builds_off.is_some() {
            self.lag.next_build_ms = None;
            return;
        }
        let offset = i64::from(self.lag.utc_offset_minutes) * 60_000;
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        let next = schedule.next_after(now.saturating_add(offset)) - offset;
        self.lag.next_build_ms = Some(u64::try_from(next).unwrap_or(0));
    }

    fn build_now(&mut self) {
        let started = self.clock.now_ms();
        let result = self.source.build_dictionary();
        let took = self.clock.now_ms().saturating_sub(started);
        let event = match result {
            Ok(build) => {
                tracing::info!(start_scn = %build.start_scn, end_scn = %build.end_scn, millis = took, "dictionary build written into the redo");
                self.lag.builds.push(build);
                build_event(
                    "built",
                    took,
                    format!(
                        "the dictionary of SCN {} is in the redo up to SCN {}",
                        build.start_scn, build.end_scn
                    ),
                )
            }
            Err(e) if e.is_missing_build_grant() => {
                let why = format!(
                    "dictionary builds are disabled: the capture user may not run \
                     DBMS_LOGMNR_D.BUILD ({e}); grant EXECUTE on DBMS_LOGMNR_D (or \
                     EXECUTE_CATALOG_ROLE) and restart the task"
                );
                tracing::warn!("{why}");
                self.lag.builds_off = Some(why.clone());
                build_event("disabled", took, why)
            }
            Err(e) => {
                tracing::warn!(error = %e, "dictionary build failed; the next is tried at its scheduled time");
                build_event("failed", took, e.to_string())
            }
        };
        self.side.ops.push(event);
    }

    pub(super) fn inventory_query(&self) -> LogInventoryQuery {
        LogInventoryQuery {
            from: Scn::ZERO,
            mode: self.settings.capture_mode,
            destination: self.settings.archive_destination.clone(),
        }
    }

    /// Before a step is applied: replay rows the cursor has passed are dropped.
    pub(super) fn lag_step_begins(&mut self, step: StepExtent) {
        if let Some(cursor) = self.read.cursor.bound.addr() {
            self.lag.replayed.retain(|addr, _| *addr > cursor);
        }
        if self.lag.replayed.is_empty() {
            self.lag.replayed_to = None;
        }
        self.lag.unavailable = None;
        self.lag.step = Some(step);
    }

    /// After a step was applied: its replay's `dictionary-replay` event.
    pub(super) fn lag_step_ends(&mut self) {
        self.lag.step = None;
        if let Some(event) = self.lag.replay_event.take() {
            let tables: Vec<String> = event.tables.into_iter().collect();
            self.side.ops.push(OpsEvent::new(
                OpsKind::DictionaryReplay,
                BTreeMap::from([
                    ("from_scn".to_owned(), event.from_scn.to_string()),
                    ("to_scn".to_owned(), event.to_scn.to_string()),
                    ("tables".to_owned(), tables.join(",")),
                ]),
            ));
        }
    }

    /// The change of a lag-case row `row` (`error` is why it could not be decoded), from the
    /// step's replay with a redo dictionary; CDC-6001 saying what stood in the way.
    pub(super) fn replayed_change(
        &mut self,
        row: &MinedRow,
        error: &DecodeError,
    ) -> Result<RowChange, CdcError> {
        let stop = |why: String| {
            CdcError::new(
                CdcCode::DictionaryUnavailable,
                format!("{error}; no exact schema version is known for it, and {why}"),
            )
        };
        let addr = self.row_addr(row)?;
        let covered = self.lag.replayed_to.is_some_and(|to| addr <= to);
        if !covered
            && self.lag.unavailable.is_none()
            && let Err(why) = self.replay_step()
        {
            self.lag.unavailable = Some(why);
        }
        if let Some(why) = &self.lag.unavailable
            && !self.lag.replayed.contains_key(&addr)
        {
            return Err(stop(why.clone()));
        }
        let Some(mut named) = self.lag.replayed.remove(&addr) else {
            return Err(stop(
                "the replay with a redo dictionary did not return the row".into(),
            ));
        };
        match self.decoder.decode_one(&named) {
            Ok(Decoded::Change(mut change)) => {
                restore_row_id(&mut change, &mut named);
                if let Some(event) = &mut self.lag.replay_event {
                    event.tables.insert(change.table.to_string());
                }
                Ok(change)
            }
            Ok(_) => Err(stop(
                "the replay with a redo dictionary returned no change for it".into(),
            )),
            Err(e) if e.is_lag_case() => Err(stop(format!(
                "the replay with a redo dictionary still returned it generic (the build is \
                 younger than the layout it was written under): {e}"
            ))),
            Err(e) => Err(stop(format!(
                "the replay with a redo dictionary named it, but not as the version valid at its \
                 SCN has it (an inexact version): {e}"
            ))),
        }
    }

    /// Mines the current step's redo again with a redo dictionary: the newest build whose
    /// dictionary is of an SCN at or below the step's oldest row, from its first log to the
    /// step's last, and keeps the step's data rows by address. `Err` says why it could not.
    fn replay_step(&mut self) -> Result<(), String> {
        if self.read.session_mode == SessionMode::Range {
            return Err(
                "replaying with a redo dictionary is not available in range mining mode \
                        (cdc.mining.mode=range, or auto in a PDB)"
                    .into(),
            );
        }
        let Some(step) = self.lag.step.clone() else {
            return Err("the step's extent is unknown".into());
        };
        let Some(step_last_log) = step.logs.last().cloned() else {
            return Err("the step has no log".into());
        };
        let query = self.inventory_query();
        let inventory = self
            .source
            .log_inventory(&query)
            .map_err(|e| format!("the log inventory could not be read: {e}"))?;
        let mut candidates: Vec<Candidate> = whole_builds(&inventory)
            .into_iter()
            .filter_map(|run| {
                let first = inventory.get(run.start)?;
                // the exact SCN when this run made the build; else at most the end of its log
                let dictionary_scn = self
                    .lag
                    .builds
                    .iter()
                    .find(|b| b.written_in(first))
                    .map_or(first.next_scn, |b| b.start_scn);
                Some(Candidate {
                    dictionary_scn,
                    first_log: run.start,
                })
            })
            .collect();
        for build in &self.lag.builds {
            // a build of this run whose logs are not archived yet: its first log by SCN
            if candidates
                .iter()
                .any(|c| c.dictionary_scn == build.start_scn)
            {
                continue;
            }
            if let Some(first_log) = inventory
                .iter()
                .position(|l| l.thread == step_last_log.thread && build.written_in(l))
            {
                candidates.push(Candidate {
                    dictionary_scn: build.start_scn,
                    first_log,
                });
            }
        }
        candidates.retain(|c| c.dictionary_scn <= step.oldest_scn);
        candidates.sort_by_key(|c| std::cmp::Reverse(c.dictionary_scn));
        if candidates.is_empty() {
            let known_older = self
                .lag
                .builds
                .iter()
                .any(|b| b.start_scn <= step.oldest_scn);
            return Err(match (&self.lag.builds_off, known_older) {
                (_, true) => format!(
                    "the logs of every dictionary build older than SCN {} are no longer \
                     available (purged)",
                    step.oldest_scn
                ),
                (Some(off), false) => {
                    format!(
                        "no dictionary build older than SCN {} is in the logs: {off}",
                        step.oldest_scn
                    )
                }
                (None, false) => format!(
                    "no dictionary build older than SCN {} is in the available logs",
                    step.oldest_scn
                ),
            });
        }
        let mut last_problem = String::new();
        for candidate in candidates {
            let Some(first) = inventory.get(candidate.first_log) else {
                continue;
            };
            let logs: Vec<LogFile> = inventory
                .iter()
                .filter(|l| {
                    l.thread == first.thread
                        && l.sequence >= first.sequence
                        && l.sequence <= step_last_log.sequence
                })
                .cloned()
                .collect();
            let unbroken = logs
                .iter()
                .zip(first.sequence..)
                .all(|(l, seq)| l.sequence == seq && !l.is_purged())
                && logs
                    .last()
                    .is_some_and(|l| l.sequence == step_last_log.sequence);
            if !unbroken {
                last_problem = format!(
                    "the logs from the dictionary build at SCN {} (sequence {}) to the step's \
                     (sequence {}) are not all available: purged or missing",
                    candidate.dictionary_scn, first.sequence, step_last_log.sequence
                );
                continue;
            }
            match self.mine_replay(&step, logs, candidate) {
                Ok(()) => {
                    self.metrics.lag_replays += 1;
                    return Ok(());
                }
                Err(problem) => last_problem = problem,
            }
        }
        Err(last_problem)
    }

    fn mine_replay(
        &mut self,
        step: &StepExtent,
        logs: Vec<LogFile>,
        candidate: Candidate,
    ) -> Result<(), String> {
        let start_scn = logs.first().map_or(Scn::ZERO, |l| l.first_scn);
        let window = MiningWindow {
            logs,
            start_scn,
            mode: SessionMode::Logs,
            dictionary: DictionarySource::RedoLogs,
        };
        let describe = |e: &SourceError| match e.ora_code() {
            Some(OraCode(1371)) => format!(
                "the logs added with the dictionary build at SCN {} do not hold it whole \
                 (ORA-01371): {e}",
                candidate.dictionary_scn
            ),
            Some(OraCode(1291)) => format!(
                "a log between the dictionary build at SCN {} and the step is missing \
                 (ORA-01291): {e}",
                candidate.dictionary_scn
            ),
            _ => format!(
                "mining again with the dictionary build at SCN {} failed: {e}",
                candidate.dictionary_scn
            ),
        };
        tracing::info!(build_scn = %candidate.dictionary_scn, from = %start_scn, "replaying a step with a redo dictionary");
        // the next step starts its own session with the online catalog
        self.read.session_started_ms = None;
        self.source
            .start_session(&window)
            .map_err(|e| describe(&e))?;
        let query = self.mining_query(step.from);
        let last = step.last;
        let mut rows = StepRows::default();
        let mut to_scn = Scn::ZERO;
        let mut to_addr = None;
        self.source
            .mine(&query, &mut |row: MinedRow| {
                if let (Ok(addr), Some(last)) = (row.addr(), last)
                    && addr > last
                {
                    return ControlFlow::Break(());
                }
                if let Ok(addr) = row.addr() {
                    to_addr = Some(addr);
                }
                to_scn = to_scn.max(row.scn);
                if matches!(
                    row.operation,
                    Operation::Insert | Operation::Update | Operation::Delete
                ) {
                    rows.push(row);
                }
                ControlFlow::Continue(())
            })
            .map_err(|e| describe(&e))?;
        let _ = self.source.end_session();
        let rows = rows
            .join_continuations()
            .map_err(|e| format!("the replayed rows could not be joined: {e}"))?;
        for row in rows.chunks.into_iter().flatten() {
            if let Ok(addr) = row.addr() {
                self.lag.replayed.insert(addr, row);
            }
        }
        self.lag.replayed_to = to_addr.max(self.lag.replayed_to);
        let event = self.lag.replay_event.get_or_insert(ReplayEvent {
            from_scn: start_scn,
            to_scn,
            tables: Default::default(),
        });
        event.to_scn = event.to_scn.max(to_scn);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(day: i64, hour: i64, minute: i64) -> i64 {
        day * DAY_MS + (hour * 60 + minute) * 60_000
    }

    #[test]
    fn the_schedule_counts_intervals_from_the_time_of_day() {
        let daily = BuildSchedule::daily();
        assert_eq!(daily.next_after(at(10, 1, 0)), at(10, 2, 0));
        assert_eq!(daily.next_after(at(10, 2, 0)), at(11, 2, 0));
        assert_eq!(daily.next_after(at(10, 3, 0)), at(11, 2, 0));
        let hourly = BuildSchedule {
            interval: Duration::from_secs(3600),
            time: TimeOfDay {
                hour: 2,
                minute: 30,
            },
        };
        assert_eq!(hourly.next_after(at(3, 3, 45)), at(3, 4, 30));
        assert_eq!(hourly.next_after(at(3, 1, 0)), at(3, 1, 30));
        assert_eq!(hourly.next_after(at(3, 23, 59)), at(4, 0, 30));
        let weekly = BuildSchedule {
            interval: Duration::from_millis(7 * DAY_MS as u64),
            time: TimeOfDay { hour: 0, minute: 0 },
        };
        assert_eq!(weekly.next_after(at(5, 12, 0)), at(12, 0, 0));
        // before 1970 too (a database clock behind by its offset)
        assert_eq!(daily.next_after(-60_000), at(0, 2, 0));
    }
}
