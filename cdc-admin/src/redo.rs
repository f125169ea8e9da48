//! Whether the redo a resume SCN needs is still there, asked of the database through
//! [`RedoSource`]: the log holding the SCN, the logs after it (a gap or a purge stops the
//! connector with CDC-2001 / CDC-2002), and the oldest log still available. Under
//! `cdc.capture.mode=archive_only` an SCN in an online log not archived yet is available, as
//! the connector's start judges it: mining waits for the log to be archived.

use cdc_core::config::{CaptureMode, CdcConfig};
use cdc_core::{CdcCode, Scn};
use cdc_logminer::RedoSource;
use cdc_logminer::engine::{self, ResumeLog, plan_logs, resume_log};
use cdc_logminer::source::{LogFile, LogInventoryQuery};
use cdc_offset::ResumePoint;
use serde_json::{Value, json};

use crate::error::AdminError;

/// What the database says of the redo from one SCN.
#[derive(Debug, Clone)]
pub struct RedoReport {
    /// The SCN asked about.
    pub scn: Scn,
    /// `V$DATABASE.CURRENT_SCN`.
    pub current_scn: Scn,
    /// The log holding `scn` (any copy listed, purged or not).
    pub holding: Option<LogFile>,
    /// The oldest log not purged (of the thread of the log holding `scn`, when there is one).
    pub oldest_available: Option<LogFile>,
    /// The connector's own redo-retention judgement of the resume point
    /// ([`cdc_logminer::engine::resume_log`]); `None` when its log is not available.
    pub guard: Option<ResumeLog>,
    /// Why the redo from `scn` cannot be mined (the connector's own CDC-2001/2002 check), or
    /// `None` when every log from the one holding `scn` on is present.
    pub problem: Option<String>,
    /// The code the connector stops with for `problem`: CDC-2001 (a gap) or CDC-2002 (a
    /// purged log) for redo that is gone.
    pub code: Option<CdcCode>,
}

impl RedoReport {
    pub fn available(&self) -> bool {
        self.problem.is_none()
    }

    /// Whether the redo from `scn` is gone (CDC-2001 or CDC-2002): what moving past a gap
    /// answers, rather than another reason it cannot be mined.
    pub fn gone(&self) -> bool {
        matches!(self.code, Some(CdcCode::LogGap | CdcCode::LogPurged))
    }

    /// Whether the resume point needs the oldest log still available (the CURRENT log
    /// aside, which is never purged): the next purge takes redo a restart needs. The same rule
    /// as the connector's redo-retention guard.
    pub fn needs_oldest(&self) -> bool {
        self.available() && self.guard.as_ref().is_some_and(ResumeLog::at_risk)
    }

    pub fn to_json(&self) -> Value {
        let log = |l: &LogFile| {
            json!({
                "thread": l.thread.to_string(),
                "sequence": l.sequence,
                "first_scn": l.first_scn.0.to_string(),
                "name": l.name,
                "purged": l.is_purged(),
            })
        };
        json!({
            "scn": self.scn.0.to_string(),
            "current_scn": self.current_scn.0.to_string(),
            "available": self.available(),
            "needs_oldest_log": self.needs_oldest(),
            "resume_log_age_ms": self.guard.as_ref().and_then(|g| g.age_ms),
            "holding_log": self.holding.as_ref().map(log),
            "oldest_available_log": self.oldest_available.as_ref().map(log),
            "problem": self.problem,
            "code": self.code.map(CdcCode::id),
        })
    }

    /// One line per fact, for people.
    pub fn render_text(&self) -> String {
        let describe = |l: &LogFile| {
            format!(
                "thread {} sequence {} from SCN {} ({})",
                l.thread,
                l.sequence,
                l.first_scn,
                l.name.as_deref().unwrap_or("no file name")
            )
        };
        let mut out = String::new();
        out.push_str(&format!(
            "redo from SCN {}: {}\n",
            self.scn,
            match &self.problem {
                None => "available".to_owned(),
                Some(problem) => format!("NOT available: {problem}"),
            }
        ));
        if let Some(log) = &self.holding {
            out.push_str(&format!("  log holding it: {}\n", describe(log)));
        }
        match &self.oldest_available {
            Some(log) => out.push_str(&format!("  oldest log available: {}\n", describe(log))),
            None => out.push_str("  no log is available\n"),
        }
        if self.needs_oldest() {
            out.push_str(
                "  warning: the resume point needs the oldest log available; the next purge \
                 of archived logs stops the connector (CDC-2002)\n",
            );
        }
        out.push_str(&format!("  current SCN: {}\n", self.current_scn));
        out
    }
}

/// Asks `source` about the redo from `resume` (a stored position's resume point, or an SCN).
pub fn check(
    source: &mut dyn RedoSource,
    config: &CdcConfig,
    resume: ResumePoint,
) -> Result<RedoReport, AdminError> {
    let current_scn = source
        .current_scn()
        .map_err(|e| AdminError::Source(e.to_string()))?;
    let query = LogInventoryQuery {
        from: Scn::ZERO,
        mode: config.capture.mode,
        destination: config.capture.archive_destination.clone(),
    };
    let inventory = source
        .log_inventory(&query)
        .map_err(|e| AdminError::Source(e.to_string()))?;
    // archive_only lists archived logs: the online ones say whether the SCN is in one not
    // archived yet
    let online = if config.capture.mode == CaptureMode::ArchiveOnly
        && holding_log(&inventory, &resume).is_none()
    {
        source
            .log_inventory(&LogInventoryQuery {
                mode: CaptureMode::Online,
                ..query
            })
            .map_err(|e| AdminError::Source(e.to_string()))?
    } else {
        Vec::new()
    };
    Ok(report(inventory, &online, config, resume, current_scn))
}

/// The log holding `resume`, by the connector's rule ([`engine::holding_log`]), looking at
/// every copy listed, purged ones too (which name the missing log): of several, one not
/// purged, then the lowest sequence.
fn holding_log<'a>(inventory: &'a [LogFile], resume: &ResumePoint) -> Option<&'a LogFile> {
    let mut candidates: Vec<&LogFile> = inventory.iter().collect();
    candidates.sort_by_key(|l| (l.is_purged(), l.sequence));
    engine::holding_log(&candidates, resume)
}

/// The report from a log inventory, and under archive_only the online logs (pure: the tests
/// give them).
pub fn report(
    inventory: Vec<LogFile>,
    online: &[LogFile],
    config: &CdcConfig,
    resume: ResumePoint,
    current_scn: Scn,
) -> RedoReport {
    let scn = resume.scn;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let guard = resume_log(&inventory, &resume, now_ms);
    let not_archived = config.capture.mode == CaptureMode::ArchiveOnly;
    let holding = holding_log(&inventory, &resume)
        .or_else(|| not_archived.then(|| holding_log(online, &resume)).flatten())
        .cloned();
    let oldest_available = inventory
        .iter()
        .filter(|l| !l.is_purged() && l.name.is_some())
        .filter(|l| holding.as_ref().is_none_or(|h| h.thread == l.thread))
        .min_by_key(|l| (l.thread, l.sequence))
        .cloned();
    let (problem, code) = match &holding {
        None => match inventory.iter().map(|l| l.first_scn).min() {
            Some(first) if scn < first => (
                Some(format!(
                    "no log holds SCN {scn}: the oldest log listed starts at SCN {first}, so the \
                     redo before it is gone"
                )),
                Some(CdcCode::LogPurged),
            ),
            _ => (
                Some(format!("no log holds SCN {scn}")),
                Some(CdcCode::LogGap),
            ),
        },
        Some(log) => match plan_logs(&inventory, log.sequence, config.capture.mode) {
            Ok(_) => (None, None),
            Err(e) => (Some(e.to_string()), Some(e.code())),
        },
    };
    RedoReport {
        scn,
        current_scn,
        holding,
        oldest_available,
        guard,
        problem,
        code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::RedoThread;
    use cdc_core::config::Config;
    use cdc_logminer::source::{CURRENT_LOG_NEXT_SCN, LogLocation, LogStatus};

    fn log(sequence: u32, first: u64, next: Scn, purged: bool, current: bool) -> LogFile {
        LogFile {
            thread: RedoThread(1),
            sequence,
            first_scn: Scn(first),
            next_scn: next,
            status: if current {
                LogStatus::Current
            } else if purged {
                LogStatus::Deleted
            } else {
                LogStatus::Available
            },
            archived: !current,
            deleted: purged,
            name: Some(format!("/arch/1_{sequence}.arc")),
            location: if current {
                LogLocation::Online { group: 1 }
            } else {
                LogLocation::Archived {
                    dest_id: 1,
                    dest_name: "LOG_ARCHIVE_DEST_1".into(),
                }
            },
            dictionary_begin: false,
            dictionary_end: false,
            first_time_ms: Some(1_000),
        }
    }

    fn inventory() -> Vec<LogFile> {
        vec![
            log(1, 100, Scn(200), true, false),
            log(2, 200, Scn(300), false, false),
            log(3, 300, CURRENT_LOG_NEXT_SCN, false, true),
        ]
    }

    fn config() -> CdcConfig {
        Config::from_pairs([
            ("name", "t"),
            ("cdc.source", "sim"),
            ("cdc.topic.prefix", "t"),
            ("cdc.tables.include", "APP\\..*"),
        ])
        .validate()
        .expect("valid")
    }

    #[test]
    fn the_purged_log_is_named_and_the_oldest_left_is_a_warning_unless_current() {
        let at = |scn| {
            report(
                inventory(),
                &[],
                &config(),
                ResumePoint::from_scn(Scn(scn)),
                Scn(400),
            )
        };
        let purged = at(150);
        assert!(!purged.available());
        let problem = purged.problem.clone().unwrap_or_default();
        assert!(problem.contains("sequence 1"), "{problem}");
        assert!(!purged.needs_oldest());
        assert!(purged.gone(), "{:?}", purged.code);
        assert_eq!(
            at(50).code,
            Some(CdcCode::LogPurged),
            "before the oldest log listed"
        );

        let oldest = at(250);
        assert!(oldest.available(), "{:?}", oldest.problem);
        assert!(oldest.needs_oldest(), "sequence 2 is the oldest left");
        assert!(oldest.render_text().contains("warning"));
        assert_eq!(oldest.oldest_available.map(|l| l.sequence), Some(2));

        let current = at(350);
        assert!(current.available());
        assert!(!current.needs_oldest(), "the CURRENT log is never purged");
        assert!(!current.render_text().contains("warning"));
    }

    /// Under archive_only an SCN of the CURRENT log is available (mining waits for its
    /// archiving), as the connector's start judges it; online mode lists the log anyway.
    #[test]
    fn archive_only_looks_for_the_scn_in_the_online_logs() {
        let archive_only = Config::from_pairs([
            ("name", "t"),
            ("cdc.source", "sim"),
            ("cdc.topic.prefix", "t"),
            ("cdc.tables.include", "APP\\..*"),
            ("cdc.capture.mode", "archive_only"),
        ])
        .validate()
        .expect("valid");
        let archived: Vec<LogFile> = inventory().into_iter().filter(|l| l.archived).collect();
        let online = inventory();
        let at_current = ResumePoint::from_scn(Scn(350));
        let without = report(archived.clone(), &[], &archive_only, at_current, Scn(400));
        assert!(!without.available(), "not listed as archived");
        let with = report(archived, &online, &archive_only, at_current, Scn(400));
        assert!(with.available(), "{:?}", with.problem);
        assert_eq!(with.holding.as_ref().map(|l| l.sequence), Some(3));
        assert!(!with.gone());
    }
}
