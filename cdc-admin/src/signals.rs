//! `resnapshot`: a `snapshot` signal on the signals topic, then its `signal-ack` and the
//! snapshot's progress on the ops topic; in front of a connector stopped by a gap in its redo
//! (CDC-2001/2002), the operator's "skip + snapshot": the offset moved past the gap first.
//!
//! ```text
//!  check_gap: status (REST) ── stored offset ── redo from its resume point (--config)
//!     available, no offset, not checked, or the connector runs ─► resnapshot (the signal)
//!     gone, connector STOPPED/FAILED ─► resnapshot_past_gap:
//!        captured tables (database) vs --tables: unlisted ones refused unless
//!        --skip-gap-for-unlisted-tables
//!        offsets::set_then(--scn current SCN, command resnapshot):
//!           applying ─► stop ─► PATCH ─► the signal ─► resume ─► applied
//!        then the signal-ack and the snapshot, followed as always
//! ```
//!
//! The new resume point is the current SCN, not the first SCN whose redo is still there:
//! each snapshot batch is read `AS OF` the SCN the stream has reached, so a stream restarted
//! from the oldest log left would read its first batches as of an SCN usually far older than
//! UNDO_RETENTION (ORA-01555, CDC-8001), and from the log the next purge takes first. The cost
//! is that the unlisted tables lose every change up to the current SCN, not only the purged
//! ones: which is why they must be listed, or accepted by name.
//!
//! # Error handling
//!
//! Nothing is retried. Every refusal comes before anything is written. What a failure inside
//! the move leaves behind is `offsets set`'s ([`crate::offsets::set_then`]): the old offset and a
//! STOPPED connector before the PATCH, the new offset and a STOPPED connector after it (the
//! signal not written: resume it and run `resnapshot` again).

use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cdc_core::Scn;
use cdc_core::config::{CdcConfig, NamePatterns, SnapshotMode};
use cdc_logminer::ConfiguredSource;
use cdc_offset::Position;
use rdkafka::ClientConfig;
use serde_json::{Value, json};

use crate::error::AdminError;
use crate::offsets::{self, OpsWriter, SetRequest, Stored};
use crate::ops::{OpsTail, ReadEvent};
use crate::redo::{self, RedoReport};
use crate::rest::ConnectClient;

/// What `resnapshot` is asked to do.
#[derive(Debug, Clone)]
pub struct ResnapshotRequest {
    /// Table patterns, as the signal's `data.tables`.
    pub tables: Vec<String>,
    /// A SQL condition on every table of the snapshot.
    pub predicate: Option<String>,
    /// How long to wait for the `signal-ack`.
    pub ack_timeout: Duration,
    /// Follow the snapshot until it completes (else return after the acknowledgement).
    pub follow: bool,
}

/// How it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ResnapshotOutcome {
    pub id: String,
    /// `accepted` (and, when followed, completed), `rejected`.
    pub outcome: String,
    pub message: String,
    /// Rows published per table while followed.
    pub rows: Vec<(String, u64)>,
    pub completed: bool,
    /// The move past a gap made first, if one was.
    pub moved: Option<MovedPastGap>,
}

/// How `resnapshot` moved the offset past a gap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedPastGap {
    /// Why the redo from the old resume point is gone.
    pub problem: String,
    pub from: Scn,
    pub to: Scn,
    /// The captured tables the snapshot reloads, and those that lose the changes in between.
    pub listed: Vec<String>,
    pub unlisted: Vec<String>,
}

impl ResnapshotOutcome {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "outcome": self.outcome,
            "message": self.message,
            "completed": self.completed,
            "rows": self.rows.iter().map(|(t, r)| json!({"table": t, "rows": r})).collect::<Vec<_>>(),
            "moved_past_gap": self.moved.as_ref().map(|m| json!({
                "problem": m.problem,
                "previous_resume_scn": m.from.0.to_string(),
                "new_resume_scn": m.to.0.to_string(),
                "listed_tables": m.listed,
                "unlisted_tables": m.unlisted,
            })),
        })
    }
}

/// A signal id no other run of the tool repeats.
pub fn new_signal_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("admin-{nanos:x}-{}", std::process::id())
}

/// The signal's value.
pub fn signal_value(id: &str, request: &ResnapshotRequest) -> Value {
    let mut data = serde_json::Map::new();
    data.insert("tables".to_owned(), json!(request.tables));
    if let Some(predicate) = &request.predicate {
        data.insert("predicate".to_owned(), json!(predicate));
    }
    json!({"id": id, "type": "snapshot", "data": Value::Object(data)})
}

/// Writes the signal and waits for its answer; progress lines go to `progress` (people only).
pub fn resnapshot(
    client: &ClientConfig,
    config: &CdcConfig,
    request: &ResnapshotRequest,
    progress: &mut dyn Write,
) -> Result<ResnapshotOutcome, AdminError> {
    check_tables_given(request)?;
    let tail = OpsTail::open(client, config)?;
    let id = send_signal(client, config, request)?;
    let _ = writeln!(progress, "signal {id} written to {}", config.topics.signals);
    follow(&tail, id, config, request, progress)
}

fn check_tables_given(request: &ResnapshotRequest) -> Result<(), AdminError> {
    if request.tables.is_empty() {
        return Err(AdminError::Usage(
            "name at least one table pattern".to_owned(),
        ));
    }
    Ok(())
}

/// Writes a new signal to partition 0 of the signals topic, keyed by the connector's name; its
/// id.
fn send_signal(
    client: &ClientConfig,
    config: &CdcConfig,
    request: &ResnapshotRequest,
) -> Result<String, AdminError> {
    let id = new_signal_id();
    let value = signal_value(&id, request).to_string();
    crate::ops::send_one(
        client,
        &config.topics.signals,
        Some(0),
        config.connect.name.as_bytes(),
        value.as_bytes(),
        crate::context::CALL_TIMEOUT,
    )?;
    Ok(id)
}

/// Waits for the `signal-ack` of signal `id` on `tail` (opened before the signal was
/// written), then, when asked, follows the snapshot to its end.
fn follow(
    tail: &OpsTail,
    id: String,
    config: &CdcConfig,
    request: &ResnapshotRequest,
    progress: &mut dyn Write,
) -> Result<ResnapshotOutcome, AdminError> {
    let deadline = Instant::now() + request.ack_timeout;
    let ack = loop {
        match tail.next(deadline)? {
            None => {
                return Err(AdminError::Failed(format!(
                    "no signal-ack for {id} within {} s: is the connector running, and does \
                     it read {} (cdc.signals.topic)? If it stopped with CDC-2001 or CDC-2002, \
                     run resnapshot where it can reach the connector's REST API (--connect) \
                     and the database (--config), so it moves past the gap",
                    request.ack_timeout.as_secs(),
                    config.topics.signals
                )));
            }
            Some(event) if is_ack_of(&event, &id) => break event,
            Some(_) => {}
        }
    };
    let outcome = ack.details.get("outcome").cloned().unwrap_or_default();
    let message = ack.details.get("message").cloned().unwrap_or_default();
    let _ = writeln!(progress, "signal-ack: {outcome} {message}");
    let mut result = ResnapshotOutcome {
        id,
        outcome: outcome.clone(),
        message: message.clone(),
        rows: Vec::new(),
        completed: false,
        moved: None,
    };
    if outcome == "rejected" {
        return Err(AdminError::Refused(format!(
            "the connector rejected the snapshot: {message}"
        )));
    }
    if !request.follow {
        return Ok(result);
    }
    // no deadline while the snapshot runs: each table's chunks are reported as they go
    let forever = Instant::now() + Duration::from_secs(60 * 60 * 24 * 365);
    while let Some(event) = tail.next(forever)? {
        match event.kind.as_str() {
            "snapshot-chunk-done" => {
                let table = event.details.get("table").cloned().unwrap_or_default();
                let rows: u64 = event
                    .details
                    .get("rows")
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                let total = match result.rows.iter_mut().find(|(t, _)| *t == table) {
                    Some((_, r)) => {
                        *r += rows;
                        *r
                    }
                    None => {
                        result.rows.push((table.clone(), rows));
                        rows
                    }
                };
                let _ = writeln!(progress, "  {table}: {total} rows");
            }
            "snapshot-complete" => {
                let table = event.details.get("table").cloned().unwrap_or_default();
                if table == "*" {
                    result.completed = true;
                    let _ = writeln!(progress, "snapshot complete");
                    break;
                }
                let _ = writeln!(progress, "  {table}: done");
            }
            _ => {}
        }
    }
    Ok(result)
}

fn is_ack_of(event: &ReadEvent, id: &str) -> bool {
    event.kind == "signal-ack" && event.details.get("id").map(String::as_str) == Some(id)
}

/// What `resnapshot` found in front of the connector.
#[derive(Debug)]
pub enum GapCheck {
    /// The redo from the resume point is there, or there is no offset: the signal as always.
    NoGap,
    /// The redo could not be checked, and why: the signal as always, with a note.
    NotChecked(String),
    /// The redo from the stored resume point is gone, but the connector runs past it: the
    /// signal as always, with a warning that a restart stops.
    RunningPast(String),
    /// Gone, in front of a stopped or failed connector: the move past it.
    Gap(Box<Gap>),
}

impl GapCheck {
    /// The note or warning to print, if any.
    pub fn note(&self) -> Option<&str> {
        match self {
            GapCheck::NotChecked(note) | GapCheck::RunningPast(note) => Some(note),
            GapCheck::NoGap | GapCheck::Gap(_) => None,
        }
    }
}

/// A gap in the redo from a stopped connector's resume point.
pub struct Gap {
    pub position: Position,
    pub report: RedoReport,
    /// The database, as asked.
    pub source: ConfiguredSource,
}

impl std::fmt::Debug for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gap")
            .field("position", &self.position)
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

/// Asks the connector (its state and stored offset) and the database (the redo from the
/// resume point) whether a gap stands in front of it. Only a connector that is STOPPED or
/// FAILED (or whose task failed) is moved: a running one has mined past its stored resume
/// point, and moving it would skip what it holds.
pub fn check_gap(
    rest: &ConnectClient,
    name: &str,
    config: &CdcConfig,
) -> Result<GapCheck, AdminError> {
    let not_checked = |why: String| {
        GapCheck::NotChecked(format!(
            "the redo from the connector's resume point was not checked ({why}); the signal is \
             written as it is"
        ))
    };
    let status = match rest.status(name) {
        Ok(status) => status,
        Err(e) => return Ok(not_checked(e.to_string())),
    };
    let position = match offsets::read_stored(rest, name, config) {
        Err(e) => return Ok(not_checked(e.to_string())),
        Ok(Stored::None) => return Ok(GapCheck::NoGap),
        Ok(Stored::Unreadable(unreadable)) => return Err(unreadable.refusal(name)),
        Ok(Stored::Readable(position)) => position,
    };
    let mut source = match offsets::open_source(config, Some(&position)) {
        Ok(source) => source,
        Err(e) => return Ok(not_checked(e.to_string())),
    };
    let report = match redo::check(&mut source, config, position.resume) {
        Ok(report) => report,
        Err(e) => return Ok(not_checked(e.to_string())),
    };
    if !report.gone() {
        return Ok(GapCheck::NoGap);
    }
    let stopped = matches!(status.connector.as_str(), "STOPPED" | "FAILED")
        || status.task.as_deref() == Some("FAILED");
    if !stopped {
        return Ok(GapCheck::RunningPast(format!(
            "warning: the redo from the stored resume point SCN {} is gone ({}); {name} is {} \
             and has mined past it, but a restart stops with {}",
            position.resume.scn,
            report.problem.as_deref().unwrap_or_default(),
            status.connector,
            report.code.map_or("CDC-2002", |c| c.id()),
        )));
    }
    Ok(GapCheck::Gap(Box::new(Gap {
        position,
        report,
        source,
    })))
}

/// How `resnapshot` moves past a gap.
#[derive(Debug, Clone)]
pub struct PastGap {
    /// Accept that the captured tables the patterns do not list lose the changes in between.
    pub skip_gap_for_unlisted_tables: bool,
    pub operator: String,
    pub stop_timeout: Duration,
}

/// The captured tables `patterns` list, and those they do not (both sorted).
pub fn split_listed(captured: &[String], patterns: &NamePatterns) -> (Vec<String>, Vec<String>) {
    captured.iter().cloned().partition(|t| patterns.matches(t))
}

/// `resnapshot` in front of a gap: refuses unless every captured table is listed (or
/// `past.skip_gap_for_unlisted_tables`), then moves the offset to the current SCN with
/// `offsets set`'s procedure, writes the signal before the connector resumes, and follows it.
#[allow(clippy::too_many_arguments)]
pub fn resnapshot_past_gap(
    rest: &ConnectClient,
    name: &str,
    client: &ClientConfig,
    config: &CdcConfig,
    gap: Box<Gap>,
    request: &ResnapshotRequest,
    past: &PastGap,
    progress: &mut dyn Write,
) -> Result<ResnapshotOutcome, AdminError> {
    check_tables_given(request)?;
    let Gap {
        position,
        report,
        mut source,
    } = *gap;
    let problem = report.problem.clone().unwrap_or_default();
    let code = report.code.map_or("CDC-2002", |c| c.id());
    let from = position.resume.scn;
    let to = report.current_scn;
    // the connector's own stop message (code, action, runbook) when the check gave one
    let stop = if problem.starts_with('[') {
        problem.clone()
    } else {
        format!("[{code}] {problem}")
    };
    let stopped_by = format!("the redo from {name}'s resume point SCN {from} is gone: {stop}");
    if matches!(
        config.snapshot.mode,
        SnapshotMode::None | SnapshotMode::SnapshotOnly
    ) {
        return Err(AdminError::Refused(format!(
            "{stopped_by}, but cdc.snapshot.mode={} takes no snapshot on a signal, so moving \
             past it would reload nothing; set it to on_signal (or initial), or move the \
             offset with offsets set --allow-skip. Nothing was changed",
            config.snapshot.mode.as_str()
        )));
    }
    let patterns = NamePatterns::compile(&request.tables, config.tables.case_sensitive)
        .map_err(|e| AdminError::Usage(format!("--tables: {e}")))?;
    let captured = offsets::captured_tables(&mut source, config)?;
    let (listed, unlisted) = split_listed(&captured, &patterns);
    if listed.is_empty() {
        return Err(AdminError::Refused(format!(
            "{stopped_by}; no captured table matches {} (captured: {}). Nothing was changed",
            request.tables.join(", "),
            captured.join(", ")
        )));
    }
    if !unlisted.is_empty() && !past.skip_gap_for_unlisted_tables {
        return Err(AdminError::Refused(format!(
            "{stopped_by}. Moving past it to the current SCN {to} reloads only the tables listed; \
             these captured tables are not listed and would lose their changes between SCN \
             {from} and SCN {to}: {}. List them in --tables, or give \
             --skip-gap-for-unlisted-tables to accept it. Nothing was changed",
            unlisted.join(", ")
        )));
    }
    let _ = writeln!(progress, "{stopped_by}");
    let _ = writeln!(
        progress,
        "moving the offset to the current SCN {to}: the snapshot reloads {}{}",
        listed.join(", "),
        if unlisted.is_empty() {
            "; every captured table is listed".to_owned()
        } else {
            format!(
                "; not listed, these lose their changes between SCN {from} and SCN {to}: {}",
                unlisted.join(", ")
            )
        }
    );
    let tail = OpsTail::open(client, config)?;
    let ops = OpsWriter { client, config };
    let set_request = SetRequest {
        scn: to,
        reason: format!(
            "resnapshot past a gap: the redo from SCN {from} is gone ({code}); snapshot of {}{}",
            listed.join(", "),
            if unlisted.is_empty() {
                String::new()
            } else {
                format!(
                    "; not reloaded (--skip-gap-for-unlisted-tables): {}",
                    unlisted.join(", ")
                )
            }
        ),
        operator: past.operator.clone(),
        allow_skip: true,
        redeliver: false,
        forget_released: Vec::new(),
        stop_timeout: past.stop_timeout,
        replace_unreadable: false,
        command: "resnapshot",
    };
    let mut sent = None;
    let moved = offsets::set_then(
        rest,
        name,
        config,
        &mut source,
        &ops,
        &set_request,
        &mut |_| {
            let id = send_signal(client, config, request).map_err(|e| {
                AdminError::Failed(format!(
                    "the snapshot signal could not be written ({e}); once the connector is \
                     resumed, run the same resnapshot again: it writes the signal"
                ))
            })?;
            let line = format!("signal {id} written to {}", config.topics.signals);
            sent = Some(id);
            Ok(Some(line))
        },
    )?;
    let _ = write!(progress, "{}", moved.text);
    let id = sent.ok_or_else(|| AdminError::Failed("the signal was not written".to_owned()))?;
    let mut outcome = follow(&tail, id, config, request, progress)?;
    outcome.moved = Some(MovedPastGap {
        problem,
        from,
        to: moved.position.resume.scn,
        listed,
        unlisted,
    });
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signal_names_the_tables_and_the_predicate() {
        let request = ResnapshotRequest {
            tables: vec!["APP.ORDERS".into(), "HR.*".into()],
            predicate: Some("ID > 10".into()),
            ack_timeout: Duration::from_secs(1),
            follow: false,
        };
        let value = signal_value("x1", &request);
        assert_eq!(value["type"], "snapshot");
        assert_eq!(value["id"], "x1");
        assert_eq!(value["data"]["tables"], json!(["APP.ORDERS", "HR.*"]));
        assert_eq!(value["data"]["predicate"], "ID > 10");
        assert_ne!(new_signal_id(), new_signal_id());
    }

    /// The tables a resnapshot lists are judged as the connector matches a signal's patterns:
    /// whole names, case-insensitive by default.
    #[test]
    fn listed_and_unlisted_captured_tables() {
        let captured: Vec<String> = ["APP.CODES", "APP.CUSTOMERS", "APP.ORDERS", "HR.AUDIT_LOG"]
            .map(str::to_owned)
            .to_vec();
        let patterns = NamePatterns::compile(&["app\\.c.*".to_owned()], false).expect("compiles");
        let (listed, unlisted) = split_listed(&captured, &patterns);
        assert_eq!(listed, ["APP.CODES", "APP.CUSTOMERS"]);
        assert_eq!(unlisted, ["APP.ORDERS", "HR.AUDIT_LOG"]);
        // a pattern matches the whole name only
        let patterns = NamePatterns::compile(&["APP\\.CODE".to_owned()], true).expect("compiles");
        assert!(split_listed(&captured, &patterns).0.is_empty());
    }
}
