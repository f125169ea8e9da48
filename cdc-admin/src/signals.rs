//! `resnapshot`: a `snapshot` signal on the signals topic, then its `signal-ack` and the
//! snapshot's progress on the ops topic.

use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cdc_core::config::CdcConfig;
use rdkafka::ClientConfig;
use serde_json::{Value, json};

use crate::error::AdminError;
use crate::ops::{OpsTail, ReadEvent};

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
}

impl ResnapshotOutcome {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "outcome": self.outcome,
            "message": self.message,
            "completed": self.completed,
            "rows": self.rows.iter().map(|(t, r)| json!({"table": t, "rows": r})).collect::<Vec<_>>(),
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
    if request.tables.is_empty() {
        return Err(AdminError::Usage(
            "name at least one table pattern".to_owned(),
        ));
    }
    let tail = OpsTail::open(client, config)?;
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
    let _ = writeln!(progress, "signal {id} written to {}", config.topics.signals);
    let deadline = Instant::now() + request.ack_timeout;
    let ack = loop {
        match tail.next(deadline)? {
            None => {
                return Err(AdminError::Failed(format!(
                    "no signal-ack for {id} within {} s: is the connector running, and does \
                     it read {} (cdc.signals.topic)?",
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
}
