//! The redo-retention guard: how close the redo a restart needs is to being gone.
//!
//! ```text
//!  every step: log inventory (read.rs) + the resume point the offset would store now
//!      │ resume_log (pure): the log holding it, its age, the oldest log still available
//!      ▼
//!  EngineMetrics.resume_log_age_ms / resume_log_is_oldest (unknown: None)
//!      │ RetentionGuard::observe: at risk = the resume point needs the oldest available log
//!      ▼                          of its thread (the CURRENT log aside: nothing purges it)
//!  on each transition into "at risk": a warning in the log and a `redo-retention-warning`
//!  ops event (once; again only after it left that state and came back)
//! ```
//!
//! An operator hears of a pinned position (a long open transaction, a stopped delivery) while
//! the redo is still there, before a purge of that log stops the task with CDC-2002. The guard
//! reads only the inventory the step reads anyway; it never stops the task.

use std::collections::BTreeMap;

use cdc_core::{ConXid, OpsEvent, OpsKind, RedoThread, Scn};
use cdc_offset::ResumePoint;

use super::CaptureEngine;
use crate::source::{LogFile, RedoSource};

impl<S: RedoSource> CaptureEngine<S> {
    /// Reads the guard off the inventory a step just listed: the metrics, and the warning on
    /// a transition into "at risk".
    pub(super) fn observe_retention(&mut self, inventory: &[LogFile]) {
        let found = resume_log(inventory, &self.current_resume(), self.clock.wall_ms());
        self.metrics.resume_log_age_ms = found.as_ref().and_then(|f| f.age_ms);
        self.metrics.resume_log_is_oldest = found.as_ref().map(ResumeLog::is_oldest);
        if let Some(mut event) = self.retention.observe(found.as_ref()) {
            let holder = self.resume_holder();
            if let Some(holder) = &holder {
                event.details.extend(holder.details());
            }
            if let Some(f) = &found {
                match &holder {
                    Some(h) => tracing::warn!(
                        resume_scn = %f.resume_scn,
                        thread = %f.thread,
                        sequence = f.sequence,
                        age_ms = ?f.age_ms,
                        xid = %h.key.xid,
                        con_id = %h.key.con,
                        user = h.user.as_deref().unwrap_or(""),
                        first_scn = %h.first_scn,
                        events = h.events,
                        "the resume point needs the oldest redo log still available: once it is \
                         purged the task stops with CDC-2002 (raise the archive retention, or \
                         end this open transaction, which holds the resume point)"
                    ),
                    None => tracing::warn!(
                        resume_scn = %f.resume_scn,
                        thread = %f.thread,
                        sequence = f.sequence,
                        age_ms = ?f.age_ms,
                        "the resume point needs the oldest redo log still available: once it is \
                         purged the task stops with CDC-2002 (no open transaction holds it: \
                         mining or delivery is that far behind; raise the archive retention)"
                    ),
                }
            }
            self.side.ops.push(event);
        }
    }

    /// The open transaction whose hold is the resume point's redo address, if one is: the one
    /// an operator ends to free the log. Visits the open transactions (only when a warning
    /// goes out).
    fn resume_holder(&self) -> Option<ResumeHolder> {
        let addr = self.current_resume().addr?;
        self.buffer
            .open_transactions()
            .filter(|t| t.resume_pin().is_some_and(|(_, a)| a == addr))
            .min_by_key(|t| t.key())
            .map(|t| ResumeHolder {
                key: t.key(),
                user: t.username().map(str::to_owned),
                first_scn: t.first_scn(),
                events: t.events(),
            })
    }
}

/// The open transaction holding the resume point, as the warning names it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ResumeHolder {
    key: ConXid,
    user: Option<String>,
    first_scn: Scn,
    events: u64,
}

impl ResumeHolder {
    fn details(&self) -> [(String, String); 5] {
        [
            ("holding_xid".to_owned(), self.key.xid.to_string()),
            ("holding_con_id".to_owned(), self.key.con.to_string()),
            (
                "holding_user".to_owned(),
                self.user.clone().unwrap_or_default(),
            ),
            ("holding_first_scn".to_owned(), self.first_scn.to_string()),
            ("holding_events".to_owned(), self.events.to_string()),
        ]
    }
}

/// What the guard found of the log holding the resume point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumeLog {
    pub resume_scn: Scn,
    pub thread: RedoThread,
    pub sequence: u32,
    pub log_first_scn: Scn,
    /// Now minus the log's FIRST_TIME; `None` when the catalog gives no FIRST_TIME.
    pub age_ms: Option<u64>,
    /// The lowest sequence of the thread whose copy is still there (not purged, with a file).
    pub oldest_available_sequence: u32,
    /// The log is the one being written.
    pub current: bool,
}

impl ResumeLog {
    /// The resume point needs the oldest log still available.
    pub fn is_oldest(&self) -> bool {
        self.sequence <= self.oldest_available_sequence
    }

    /// The next purge of the oldest log would take redo a restart needs. The CURRENT log is
    /// never purged, so a resume point in it is not at risk even when it is the only log.
    pub fn at_risk(&self) -> bool {
        self.is_oldest() && !self.current
    }
}

/// The log of `candidates` holding `resume`: the one with the sequence of its redo address when
/// it has one (the real cursor), otherwise the one whose SCN range holds its SCN; of several,
/// the first `candidates` lists. The connector's guard ([`resume_log`]) and `oracle-cdc-admin
/// offsets show --check-redo` (which also looks among purged copies) judge by this one rule.
pub fn holding_log<'a>(candidates: &[&'a LogFile], resume: &ResumePoint) -> Option<&'a LogFile> {
    let by_seq = resume
        .addr
        .map(|a| a.log_seq())
        .filter(|seq| *seq > 0)
        .and_then(|seq| candidates.iter().find(|l| l.sequence == seq));
    by_seq
        .or_else(|| {
            candidates
                .iter()
                .find(|l| l.first_scn <= resume.scn && resume.scn < l.next_scn)
        })
        .copied()
}

/// The available log of `inventory` holding `resume` ([`holding_log`]), with its place among
/// its thread's logs. `None` when that log is not listed, or no longer available (a purged log
/// is CDC-2002's, not a warning's).
pub fn resume_log(inventory: &[LogFile], resume: &ResumePoint, now_ms: u64) -> Option<ResumeLog> {
    let available = |l: &&LogFile| !l.is_purged() && l.name.is_some();
    let candidates: Vec<&LogFile> = inventory.iter().filter(available).collect();
    let log = holding_log(&candidates, resume)?;
    let oldest = inventory
        .iter()
        .filter(available)
        .filter(|l| l.thread == log.thread)
        .map(|l| l.sequence)
        .min()
        .unwrap_or(log.sequence);
    Some(ResumeLog {
        resume_scn: resume.scn,
        thread: log.thread,
        sequence: log.sequence,
        log_first_scn: log.first_scn,
        age_ms: log.first_time_ms.map(|t| now_ms.saturating_sub(t)),
        oldest_available_sequence: oldest,
        current: log.is_current(),
    })
}

/// Whether the last observation was at risk, so a warning goes out once per transition.
#[derive(Debug, Default)]
pub(crate) struct RetentionGuard {
    at_risk: bool,
}

impl RetentionGuard {
    /// Takes the step's observation; returns the ops event when the resume point has just come
    /// to need the oldest available log. An unknown resume log leaves the state as it was.
    pub fn observe(&mut self, found: Option<&ResumeLog>) -> Option<OpsEvent> {
        let found = found?;
        let was = std::mem::replace(&mut self.at_risk, found.at_risk());
        if was || !self.at_risk {
            return None;
        }
        let mut details = BTreeMap::from([
            ("resume_scn".to_owned(), found.resume_scn.to_string()),
            ("thread".to_owned(), found.thread.to_string()),
            ("sequence".to_owned(), found.sequence.to_string()),
            ("log_first_scn".to_owned(), found.log_first_scn.to_string()),
            (
                "oldest_available_sequence".to_owned(),
                found.oldest_available_sequence.to_string(),
            ),
        ]);
        if let Some(age) = found.age_ms {
            details.insert("age_ms".to_owned(), age.to_string());
        }
        Some(OpsEvent::new(OpsKind::RedoRetentionWarning, details))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{LogLocation, LogStatus};
    use cdc_core::{RedoAddr, RsId};

    fn log(seq: u32, first_time_ms: Option<u64>) -> LogFile {
        LogFile {
            thread: RedoThread(1),
            sequence: seq,
            first_scn: Scn(seq as u64 * 100),
            next_scn: Scn(seq as u64 * 100 + 100),
            status: LogStatus::Available,
            archived: true,
            deleted: false,
            name: Some(format!("/arch/1_{seq}.arc")),
            location: LogLocation::Archived {
                dest_id: 1,
                dest_name: "LOG_ARCHIVE_DEST_1".into(),
            },
            dictionary_begin: false,
            dictionary_end: false,
            first_time_ms,
        }
    }

    fn at_scn(scn: u64) -> ResumePoint {
        ResumePoint {
            scn: Scn(scn),
            addr: None,
        }
    }

    #[test]
    fn the_resume_log_is_found_by_address_then_by_scn() {
        let mut purged = log(3, Some(1_000));
        purged.deleted = true;
        let inv = vec![
            purged,
            log(4, Some(2_000)),
            log(5, None),
            log(6, Some(9_000)),
        ];
        let found = resume_log(&inv, &at_scn(450), 10_000).unwrap();
        assert_eq!((found.sequence, found.log_first_scn), (4, Scn(400)));
        assert_eq!(found.age_ms, Some(8_000));
        assert_eq!(found.oldest_available_sequence, 4, "3 is purged");
        assert!(found.is_oldest() && found.at_risk());
        // the address names the log even when the SCN (a transaction's START) lies before it
        let addr = ResumePoint {
            scn: Scn(450),
            addr: Some(
                RedoAddr::new(
                    RsId {
                        seq: 5,
                        block: 2,
                        offset: 16,
                    },
                    0,
                )
                .unwrap(),
            ),
        };
        let found = resume_log(&inv, &addr, 10_000).unwrap();
        assert_eq!(found.sequence, 5);
        assert_eq!(found.age_ms, None, "no FIRST_TIME");
        assert!(!found.is_oldest());
        // a purged or unlisted resume log is unknown here
        assert_eq!(resume_log(&inv, &at_scn(350), 10_000), None);
        assert_eq!(resume_log(&inv, &at_scn(5_000), 10_000), None);
    }

    #[test]
    fn the_current_log_is_never_at_risk() {
        let mut current = log(1, Some(0));
        current.status = LogStatus::Current;
        let found = resume_log(&[current], &at_scn(150), 5).unwrap();
        assert!(found.is_oldest());
        assert!(!found.at_risk());
    }

    #[test]
    fn the_warning_goes_out_once_per_transition() {
        let inv = vec![log(4, Some(2_000)), log(5, Some(3_000))];
        let oldest = resume_log(&inv, &at_scn(420), 10_000);
        let newer = resume_log(&inv, &at_scn(520), 10_000);
        let mut guard = RetentionGuard::default();
        assert_eq!(guard.observe(newer.as_ref()), None);
        let event = guard.observe(oldest.as_ref()).unwrap();
        assert_eq!(event.kind, OpsKind::RedoRetentionWarning);
        let detail = |k: &str| event.details.get(k).map(String::as_str);
        assert_eq!(detail("resume_scn"), Some("420"));
        assert_eq!(detail("thread"), Some("1"));
        assert_eq!(detail("sequence"), Some("4"));
        assert_eq!(detail("log_first_scn"), Some("400"));
        assert_eq!(detail("age_ms"), Some("8000"));
        assert_eq!(detail("oldest_available_sequence"), Some("4"));
        assert_eq!(guard.observe(oldest.as_ref()), None, "still there");
        assert_eq!(guard.observe(None), None, "unknown keeps the state");
        assert_eq!(guard.observe(oldest.as_ref()), None);
        assert_eq!(guard.observe(newer.as_ref()), None, "left");
        assert!(guard.observe(oldest.as_ref()).is_some(), "came back");
    }
}
