//! Log inventory checks before every step: the logs from the cursor's log onwards must be
//! continuous and present. A gap stops with CDC-2001, a purged log with CDC-2002, and more
//! than one enabled redo thread with CDC-5001 (a position is per thread; RAC is not supported).

use cdc_core::{CdcCode, CdcError, RedoThread};

use crate::source::{CaptureMode, LogFile};

/// The logs a step may mine, starting with the one holding the cursor, in sequence order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPlan {
    pub logs: Vec<LogFile>,
}

impl LogPlan {
    /// The first `n` logs (at least one, when there is one).
    pub fn window(&self, n: usize) -> &[LogFile] {
        &self.logs[..n.max(1).min(self.logs.len())]
    }
}

/// Checks the inventory from log sequence `from_seq` on and returns the continuous run of
/// logs to mine. In `archive_only` mode a cursor past the newest archived log is no gap: its
/// redo is not archived yet, and the plan is empty until it is.
pub fn plan_logs(
    inventory: &[LogFile],
    from_seq: u32,
    mode: CaptureMode,
) -> Result<LogPlan, CdcError> {
    let mut threads: Vec<RedoThread> = inventory.iter().map(|l| l.thread).collect();
    threads.sort();
    threads.dedup();
    if threads.len() > 1 {
        return Err(CdcError::new(
            CdcCode::Topology,
            format!(
                "the log inventory lists {} redo threads ({}); one position covers one thread, \
                 so RAC is not supported yet",
                threads.len(),
                threads
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let mut logs: Vec<&LogFile> = inventory
        .iter()
        .filter(|l| l.sequence >= from_seq)
        .collect();
    logs.sort_by_key(|l| l.sequence);
    let Some(first) = logs.first() else {
        if mode == CaptureMode::ArchiveOnly {
            return Ok(LogPlan { logs: Vec::new() });
        }
        return Err(CdcError::new(
            CdcCode::LogGap,
            format!(
                "no log with sequence {from_seq} or later is listed; the redo from the resume \
                 position is not available"
            ),
        ));
    };
    if first.sequence != from_seq {
        return Err(CdcError::new(
            CdcCode::LogGap,
            format!(
                "log sequence {from_seq}, which holds the resume position, is not listed (the \
                 first listed is {})",
                first.sequence
            ),
        ));
    }
    let mut planned = Vec::with_capacity(logs.len());
    let mut expected = from_seq;
    for log in logs {
        if log.sequence < expected {
            // a second copy of a sequence already planned (the source lists one per sequence,
            // but a duplicate must not make a gap look continuous)
            continue;
        }
        if log.sequence != expected {
            return Err(CdcError::new(
                CdcCode::LogGap,
                format!(
                    "thread {} has a gap: sequence {expected} is missing before {}",
                    log.thread, log.sequence
                ),
            ));
        }
        if log.is_purged() {
            return Err(CdcError::new(
                CdcCode::LogPurged,
                format!(
                    "thread {} sequence {} ({}) is purged (DELETED=YES or STATUS D/X)",
                    log.thread,
                    log.sequence,
                    log.name.as_deref().unwrap_or("no file name")
                ),
            ));
        }
        if log.name.is_none() {
            return Err(CdcError::new(
                CdcCode::LogPurged,
                format!(
                    "thread {} sequence {} has no file name in the catalog (cleared before it \
                     was archived, or deleted)",
                    log.thread, log.sequence
                ),
            ));
        }
        planned.push(log.clone());
        expected = expected.saturating_add(1);
    }
    Ok(LogPlan { logs: planned })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{LogLocation, LogStatus};
    use cdc_core::Scn;

    fn log(seq: u32) -> LogFile {
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
            first_time_ms: None,
        }
    }

    #[test]
    fn continuous_logs_are_planned_from_the_cursor() {
        let inv = vec![log(4), log(5), log(6), log(7)];
        let plan = plan_logs(&inv, 5, CaptureMode::Online).unwrap();
        assert_eq!(
            plan.logs.iter().map(|l| l.sequence).collect::<Vec<_>>(),
            [5, 6, 7]
        );
        assert_eq!(plan.window(2).len(), 2);
        assert_eq!(plan.window(0).len(), 1);
        assert_eq!(plan.window(99).len(), 3);
    }

    #[test]
    fn gaps_and_purges_stop() {
        let e = plan_logs(&[log(5), log(7)], 5, CaptureMode::Online).unwrap_err();
        assert_eq!(e.code(), CdcCode::LogGap);
        let e = plan_logs(&[log(6), log(7)], 5, CaptureMode::Online).unwrap_err();
        assert_eq!(e.code(), CdcCode::LogGap);
        let e = plan_logs(&[], 5, CaptureMode::Online).unwrap_err();
        assert_eq!(e.code(), CdcCode::LogGap);
        // archive_only: nothing archived at or after the cursor yet is a wait, not a gap
        assert!(
            plan_logs(&[log(3), log(4)], 5, CaptureMode::ArchiveOnly)
                .unwrap()
                .logs
                .is_empty()
        );
        // but a missing sequence before archived ones is still a gap
        let e = plan_logs(&[log(6)], 5, CaptureMode::ArchiveOnly).unwrap_err();
        assert_eq!(e.code(), CdcCode::LogGap);
        let mut purged = log(6);
        purged.deleted = true;
        let e = plan_logs(&[log(5), purged, log(7)], 5, CaptureMode::Online).unwrap_err();
        assert_eq!(e.code(), CdcCode::LogPurged);
        let mut expired = log(5);
        expired.status = LogStatus::Expired;
        assert_eq!(
            plan_logs(&[expired], 5, CaptureMode::Online)
                .unwrap_err()
                .code(),
            CdcCode::LogPurged
        );
        let mut nameless = log(5);
        nameless.name = None;
        assert_eq!(
            plan_logs(&[nameless], 5, CaptureMode::Online)
                .unwrap_err()
                .code(),
            CdcCode::LogPurged
        );
    }

    #[test]
    fn a_second_thread_is_refused() {
        let mut other = log(5);
        other.thread = RedoThread(2);
        let e = plan_logs(&[log(5), other], 5, CaptureMode::Online).unwrap_err();
        assert_eq!(e.code(), CdcCode::Topology);
    }
}
