//! Signals: operators steer a running connector through the signals topic. The bridge reads
//! the topic and hands each record over a channel; the engine acts on them between steps and
//! answers each with a `signal-ack` ops event that carries the position with the signal's
//! offset, so a signal is handled once across restarts (the offset's `signal_offset`), in the
//! same Kafka transaction as what it changed.
//!
//! ```text
//!  signals topic, partition 0 ─► bridge reader (≤ 1 poll/s) ─► SignalRecord channel
//!      ─► engine, between steps: key for us? parse ─► act ─► signal-ack (position with
//!         signal_offset = the record's offset)
//! ```
//!
//! A record keyed by another connector is ignored; a value that is not a signal is answered
//! `rejected` with the reason, and never stops the task. A snapshot asked for while one runs
//! is rejected, not queued.

use std::sync::mpsc::{Receiver, TryRecvError};

use cdc_core::config::{NamePatterns, SnapshotMode};
use cdc_offset::{SnapshotProgress, SnapshotScope};
use serde_json::Value as Json;

use super::*;

/// A record of the signals topic, as read: its offset, key and value bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalRecord {
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// What a signal asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignalKind {
    /// `snapshot`: the tables matching `tables` (patterns over `[PDB.]OWNER.TABLE`), with an
    /// optional SQL condition.
    Snapshot {
        tables: Vec<String>,
        predicate: Option<String>,
    },
    SnapshotPause,
    SnapshotResume,
    SnapshotStop,
    /// `refresh-tables`: read the captured set and the object ids again.
    RefreshTables,
    /// `log-state`: the engine's state in the acknowledgement (and the log).
    LogState,
}

impl SignalKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            SignalKind::Snapshot { .. } => "snapshot",
            SignalKind::SnapshotPause => "snapshot-pause",
            SignalKind::SnapshotResume => "snapshot-resume",
            SignalKind::SnapshotStop => "snapshot-stop",
            SignalKind::RefreshTables => "refresh-tables",
            SignalKind::LogState => "log-state",
        }
    }
}

/// A signal's value: `{"id": …, "type": …, "data": {…}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    pub id: String,
    pub kind: SignalKind,
}

/// Why a value is no signal, with what could be read of it for the acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalRejected {
    pub id: String,
    pub kind: String,
    pub reason: String,
}

/// Reads a signal's value.
pub fn parse_signal(value: Option<&[u8]>) -> Result<Signal, SignalRejected> {
    let reject = |id: &str, kind: &str, reason: String| SignalRejected {
        id: id.to_owned(),
        kind: kind.to_owned(),
        reason,
    };
    let Some(value) = value else {
        return Err(reject("", "", "the record has no value".into()));
    };
    let json: Json = serde_json::from_slice(value)
        .map_err(|e| reject("", "", format!("the value is not JSON: {e}")))?;
    let Json::Object(map) = json else {
        return Err(reject("", "", "the value is not a JSON object".into()));
    };
    let id = match map.get("id") {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Number(n)) => n.to_string(),
        _ => return Err(reject("", "", "the signal has no id".into())),
    };
    let kind = match map.get("type") {
        Some(Json::String(s)) => s.clone(),
        _ => return Err(reject(&id, "", "the signal has no type".into())),
    };
    let data = match map.get("data") {
        None | Some(Json::Null) => serde_json::Map::new(),
        Some(Json::Object(d)) => d.clone(),
        Some(_) => return Err(reject(&id, &kind, "data is not a JSON object".into())),
    };
    let kind_parsed = match kind.as_str() {
        "snapshot" => {
            let tables = match data.get("tables").or_else(|| data.get("data-collections")) {
                Some(Json::Array(items)) => items
                    .iter()
                    .map(|t| t.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| {
                        reject(&id, &kind, "data.tables is not a list of patterns".into())
                    })?,
                _ => {
                    return Err(reject(
                        &id,
                        &kind,
                        "data.tables (a list of table patterns) is missing".into(),
                    ));
                }
            };
            let predicate = match data.get("predicate") {
                None | Some(Json::Null) => None,
                Some(Json::String(p)) if !p.trim().is_empty() => Some(p.clone()),
                Some(_) => {
                    return Err(reject(
                        &id,
                        &kind,
                        "data.predicate is not a SQL condition".into(),
                    ));
                }
            };
            SignalKind::Snapshot { tables, predicate }
        }
        "snapshot-pause" => SignalKind::SnapshotPause,
        "snapshot-resume" => SignalKind::SnapshotResume,
        "snapshot-stop" => SignalKind::SnapshotStop,
        "refresh-tables" => SignalKind::RefreshTables,
        "log-state" => SignalKind::LogState,
        other => {
            return Err(reject(
                &id,
                other,
                format!(
                    "unknown signal type {other:?}; known: snapshot, snapshot-pause, \
                     snapshot-resume, snapshot-stop, refresh-tables, log-state"
                ),
            ));
        }
    };
    Ok(Signal {
        id,
        kind: kind_parsed,
    })
}

/// How a signal was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalOutcome {
    /// It started something that goes on (a snapshot), which says `done` when it ends.
    Accepted,
    Rejected,
    Done,
}

impl SignalOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            SignalOutcome::Accepted => "accepted",
            SignalOutcome::Rejected => "rejected",
            SignalOutcome::Done => "done",
        }
    }
}

/// The `signal-ack` event.
pub(super) fn signal_ack(
    id: &str,
    kind: &str,
    outcome: SignalOutcome,
    message: &str,
    extra: BTreeMap<String, String>,
) -> OpsEvent {
    let mut details = extra;
    details.insert("id".to_owned(), id.to_owned());
    details.insert("type".to_owned(), kind.to_owned());
    details.insert("outcome".to_owned(), outcome.as_str().to_owned());
    details.insert("message".to_owned(), message.to_owned());
    OpsEvent::new(OpsKind::SignalAck, details)
}

/// The signal channel the engine reads.
#[derive(Default)]
pub(super) struct SignalState {
    rx: Option<Receiver<SignalRecord>>,
}

impl<S: RedoSource> CaptureEngine<S> {
    /// Takes signals from `rx` from now on (signals are off under `snapshot_only`, and the
    /// engine then leaves them unread).
    pub fn attach_signals(&mut self, rx: Receiver<SignalRecord>) {
        if self.settings.snapshot.mode != SnapshotMode::SnapshotOnly {
            self.signals.rx = Some(rx);
        }
    }

    /// The offset from which signals are still to be handled: after the last one the
    /// position records.
    pub fn signals_from(&self) -> i64 {
        self.commit
            .position
            .signal_offset
            .map_or(0, |o| o.saturating_add(1))
    }

    /// Acts on the signals that arrived since the last step.
    pub(super) fn handle_signals(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        let mut records = 0;
        loop {
            let Some(rx) = self.signals.rx.as_ref() else {
                return Ok(records);
            };
            let record = match rx.try_recv() {
                Ok(record) => record,
                Err(TryRecvError::Empty) => return Ok(records),
                Err(TryRecvError::Disconnected) => {
                    self.signals.rx = None;
                    return Ok(records);
                }
            };
            if self
                .commit
                .position
                .signal_offset
                .is_some_and(|handled| record.offset <= handled)
            {
                continue;
            }
            let key = record.key.as_deref().map(String::from_utf8_lossy);
            let ours = key
                .as_deref()
                .is_some_and(|k| k == self.settings.connector_name || k == self.settings.server);
            if !ours {
                tracing::debug!(offset = record.offset, key = ?key, "a signal for another connector; ignored");
                continue;
            }
            let ack = match parse_signal(record.value.as_deref()) {
                Err(rejected) => {
                    tracing::warn!(offset = record.offset, id = %rejected.id, reason = %rejected.reason, "signal rejected");
                    signal_ack(
                        &rejected.id,
                        &rejected.kind,
                        SignalOutcome::Rejected,
                        &rejected.reason,
                        BTreeMap::new(),
                    )
                }
                Ok(signal) => self.act_on(&signal, sink, &mut records)?,
            };
            Arc::make_mut(&mut self.commit.position).signal_offset = Some(record.offset);
            self.emit_between(sink, RecordKind::Ops(ack))?;
            self.metrics.ops_events += 1;
            records += 1;
        }
    }

    /// Carries out one signal; its acknowledgement.
    fn act_on(
        &mut self,
        signal: &Signal,
        sink: &mut dyn RecordSink,
        records: &mut u64,
    ) -> Result<OpsEvent, EngineError> {
        let kind = signal.kind.as_str();
        let ack = |outcome, message: String| {
            tracing::info!(id = %signal.id, kind, outcome = outcome_str(outcome), %message, "signal");
            signal_ack(&signal.id, kind, outcome, &message, BTreeMap::new())
        };
        fn outcome_str(o: SignalOutcome) -> &'static str {
            o.as_str()
        }
        Ok(match &signal.kind {
            SignalKind::Snapshot { tables, predicate } => {
                if self.settings.snapshot.mode == SnapshotMode::None {
                    return Ok(ack(
                        SignalOutcome::Rejected,
                        "cdc.snapshot.mode=none: no table is snapshotted; use on_signal (or \
                         initial) to snapshot on a signal"
                            .into(),
                    ));
                }
                if let Some(running) = self.snapshot.progress() {
                    return Ok(ack(
                        SignalOutcome::Rejected,
                        format!(
                            "a snapshot is running ({} of {} tables left); signals are not \
                             queued: send it again once it is complete",
                            running.tables_remaining(),
                            running.tables.len()
                        ),
                    ));
                }
                let patterns =
                    match NamePatterns::compile(tables, self.settings.tables_case_sensitive) {
                        Ok(p) => p,
                        Err(e) => return Ok(ack(SignalOutcome::Rejected, e)),
                    };
                let mut matched: Vec<TableId> = self
                    .decoder
                    .tables
                    .keys()
                    .filter(|t| patterns.matches(&t.to_string()))
                    .cloned()
                    .collect();
                if matched.is_empty() {
                    return Ok(ack(
                        SignalOutcome::Rejected,
                        format!("no captured table matches {}", tables.join(", ")),
                    ));
                }
                matched.sort();
                let names: Vec<String> = matched.iter().map(TableId::to_string).collect();
                let mut progress = SnapshotProgress::new(SnapshotScope::Incremental, names.clone());
                progress.condition = predicate.clone();
                progress.signal = Some(signal.id.clone());
                self.snapshot.start(progress);
                self.store_progress();
                ack(
                    SignalOutcome::Accepted,
                    format!("snapshot of {} started", names.join(", ")),
                )
            }
            SignalKind::SnapshotPause | SignalKind::SnapshotResume => {
                let pause = signal.kind == SignalKind::SnapshotPause;
                match self.snapshot.progress_mut() {
                    None => ack(SignalOutcome::Rejected, "no snapshot is running".into()),
                    Some(p) if p.paused == pause => ack(
                        SignalOutcome::Done,
                        format!(
                            "the snapshot is {} already",
                            if pause { "paused" } else { "running" }
                        ),
                    ),
                    Some(p) => {
                        p.paused = pause;
                        self.store_progress();
                        ack(
                            SignalOutcome::Done,
                            format!(
                                "the snapshot is {}",
                                if pause { "paused" } else { "running again" }
                            ),
                        )
                    }
                }
            }
            SignalKind::SnapshotStop => {
                if !self.snapshot.running() {
                    return Ok(ack(
                        SignalOutcome::Rejected,
                        "no snapshot is running".into(),
                    ));
                }
                *records += self.stop_snapshot(sink)?;
                ack(SignalOutcome::Done, "the snapshot is stopped".into())
            }
            SignalKind::RefreshTables => {
                let added = self.refresh_tables()?;
                let message = if added.is_empty() {
                    "the captured tables and object ids were read again; no table joined".into()
                } else {
                    format!(
                        "the captured tables and object ids were read again; joined: {}",
                        added.join(", ")
                    )
                };
                ack(SignalOutcome::Done, message)
            }
            SignalKind::LogState => {
                let state = self.state_details();
                tracing::info!(?state, "engine state (log-state signal)");
                signal_ack(
                    &signal.id,
                    kind,
                    SignalOutcome::Done,
                    "the engine's state",
                    state,
                )
            }
        })
    }

    /// What `log-state` reports.
    fn state_details(&self) -> BTreeMap<String, String> {
        let buffer = self.buffer.metrics();
        let largest = self
            .buffer
            .largest(5)
            .iter()
            .map(|t| format!("{} ({} events, {} bytes)", t.key, t.events, t.total_bytes()))
            .collect::<Vec<_>>()
            .join("; ");
        BTreeMap::from([
            (
                "mined_to_scn".to_owned(),
                self.read
                    .cursor
                    .mined_to
                    .map_or_else(String::new, |m| m.scn.to_string()),
            ),
            (
                "open_transactions".to_owned(),
                buffer.open_transactions.to_string(),
            ),
            (
                "buffered_events".to_owned(),
                buffer.buffered_events.to_string(),
            ),
            (
                "oldest_open_scn".to_owned(),
                buffer
                    .oldest_open_scn
                    .map_or_else(|| "-1".to_owned(), |s| s.to_string()),
            ),
            ("largest".to_owned(), largest),
            (
                "snapshot_running".to_owned(),
                self.snapshot.running().to_string(),
            ),
        ])
    }

    /// `refresh-tables`: the captured set and the object ids read again; tables that joined
    /// are announced (`table-added`) and, under `cdc.snapshot.mode=initial`, wait for a
    /// snapshot, as they may hold rows. Returns the tables that joined.
    fn refresh_tables(&mut self) -> Result<Vec<String>, EngineError> {
        let before: HashSet<TableId> = self.decoder.tables.keys().cloned().collect();
        let scn = self.source.current_scn().map_err(source_stop)?;
        let announced = self.side.schema.len();
        self.refresh_objects(
            scn,
            dictionary::Refresh::Ddl {
                table: None,
                changes: None,
            },
        )?;
        let mut added = Vec::new();
        let mut events = Vec::new();
        for change in &self.side.schema[announced..] {
            match change {
                SchemaChange::Version(layout) if !before.contains(&layout.table) => {
                    added.push(layout.table.clone());
                }
                SchemaChange::Removed(table) => events.push(OpsEvent::new(
                    OpsKind::TableRemoved,
                    BTreeMap::from([("table".to_owned(), table.pattern_name())]),
                )),
                SchemaChange::Version(_) => {}
            }
        }
        let snapshot = self.settings.snapshot.mode == SnapshotMode::Initial;
        for table in &added {
            events.push(OpsEvent::new(
                OpsKind::TableAdded,
                BTreeMap::from([
                    ("table".to_owned(), table.pattern_name()),
                    ("snapshot".to_owned(), snapshot.to_string()),
                ]),
            ));
        }
        if snapshot {
            self.snapshot_later(added.iter().map(TableId::to_string));
        }
        self.side.ops.extend(events);
        Ok(added.iter().map(TableId::to_string).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_read_or_rejected_with_the_reason() {
        let ok = |text: &str| parse_signal(Some(text.as_bytes())).expect(text);
        assert_eq!(
            ok(
                r#"{"id":"a","type":"snapshot","data":{"tables":["APP\\..*"],"predicate":"ID > 3"}}"#
            ),
            Signal {
                id: "a".into(),
                kind: SignalKind::Snapshot {
                    tables: vec!["APP\\..*".into()],
                    predicate: Some("ID > 3".into())
                }
            }
        );
        assert_eq!(ok(r#"{"id":7,"type":"log-state"}"#).id, "7");
        assert_eq!(
            ok(r#"{"id":"p","type":"snapshot-pause","data":{}}"#).kind,
            SignalKind::SnapshotPause
        );
        for (text, says) in [
            ("not json", "not JSON"),
            ("[1]", "not a JSON object"),
            (r#"{"type":"log-state"}"#, "no id"),
            (r#"{"id":"x"}"#, "no type"),
            (r#"{"id":"x","type":"reboot"}"#, "unknown signal type"),
            (r#"{"id":"x","type":"snapshot"}"#, "data.tables"),
            (
                r#"{"id":"x","type":"snapshot","data":{"tables":[]}}"#,
                "data.tables",
            ),
            (
                r#"{"id":"x","type":"snapshot","data":{"tables":[1]}}"#,
                "data.tables",
            ),
            (
                r#"{"id":"x","type":"snapshot","data":{"tables":["A.B"],"predicate":5}}"#,
                "predicate",
            ),
            (r#"{"id":"x","type":"log-state","data":"no"}"#, "data"),
        ] {
            let rejected = parse_signal(Some(text.as_bytes())).expect_err(text);
            assert!(rejected.reason.contains(says), "{text}: {rejected:?}");
        }
        assert!(parse_signal(None).is_err());
        let rejected = parse_signal(Some(br#"{"id":"x","type":"reboot"}"#)).expect_err("unknown");
        assert_eq!(
            (rejected.id.as_str(), rejected.kind.as_str()),
            ("x", "reboot")
        );
    }
}
