//! The `stop` ops event of a task that ended with an error, whatever ended it (invariant 7):
//! the connector's supervisor writes it, outside the record stream, with a producer of its own,
//! so that a stop during the task's start (before any record) is reported as well as one in
//! the middle of delivery.

use std::sync::Arc;
use std::time::Duration;

use cdc_core::config::CdcConfig;
use cdc_core::{CdcCode, CdcError, OpsEvent, Scn};
use parking_lot::Mutex;

use crate::kafka::{KafkaClients, KafkaFailure};
use crate::record::builder::RecordBuilder;
use crate::record::settings::RecordSettings;
use crate::worker::acks::AckTracker;

/// How long the supervisor waits for the broker to take the event.
const STOP_EVENT_WAIT: Duration = Duration::from_secs(5);

/// Whether a stop can be reported on the ops topic: not when the stop is that the Kafka
/// cluster cannot be reached or refuses the connector's clients, as the event would fail the
/// same way.
pub fn reportable(error: &CdcError) -> bool {
    !matches!(
        error.code(),
        CdcCode::KafkaUnavailable | CdcCode::KafkaAuthorization | CdcCode::KafkaClientSetup
    )
}

/// Writes the `stop` event of `error` to the ops topic, with `resume_scn` (where the task
/// resumes, when it committed or read an offset). Best effort, logged either way: the task has
/// stopped already.
pub fn write_stop_event(config: &CdcConfig, error: &CdcError, resume_scn: Option<Scn>) {
    if !reportable(error) {
        tracing::warn!(
            code = error.code().id(),
            "the stop event is not written to the ops topic: the stop is the Kafka cluster's own"
        );
        return;
    }
    match send_stop_event(config, error, resume_scn) {
        Ok(()) => tracing::info!(
            code = error.code().id(),
            "stop event written to the ops topic"
        ),
        Err(failure) => tracing::warn!(%failure, "the stop event could not be written"),
    }
}

/// The `stop` event of `error`. With `cdc.log.sensitive.data` a message may quote row values,
/// which never go to the ops topic: the event then says where the message is instead.
fn stop_event(error: &CdcError, log_sensitive_data: bool) -> OpsEvent {
    let mut event = OpsEvent::stop(error);
    if log_sensitive_data {
        let code = error.code();
        event.details.insert(
            "message".to_owned(),
            format!(
                "[{}] {}: the message is in the connector's log only, as cdc.log.sensitive.data \
                 may put row values in it",
                code.id(),
                code.name()
            ),
        );
    }
    event
}

fn send_stop_event(
    config: &CdcConfig,
    error: &CdcError,
    resume_scn: Option<Scn>,
) -> Result<(), KafkaFailure> {
    let builder = RecordBuilder::new(RecordSettings::from_config(config, ""));
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let event = stop_event(error, config.retry.log_sensitive_data);
    let (topic, key, value) = builder.ops_record(&event, resume_scn, now_ms);
    let clients = KafkaClients::from_config(config)?;
    let acks = Arc::new(Mutex::new(AckTracker::new()));
    let producer = clients.producer(None, Arc::clone(&acks), true)?;
    let seq = acks.lock().register(1, None);
    producer.send_plain(topic, &key, Some(&value), seq)?;
    producer.flush(STOP_EVENT_WAIT)?;
    if let Some((topic, source)) = acks.lock().take_failure() {
        return Err(KafkaFailure::NotDelivered { topic, source });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_event_never_carries_what_sensitive_logging_may_quote() {
        let error = CdcError::new(
            CdcCode::Decode,
            "cannot decode the literal 'secret-row-value'",
        );
        let plain = stop_event(&error, false);
        assert_eq!(plain.details["message"], error.to_string());
        let guarded = stop_event(&error, true);
        let message = &guarded.details["message"];
        assert!(!message.contains("secret-row-value"), "{message}");
        assert!(message.starts_with("[CDC-3001] DECODE: "), "{message}");
        assert_eq!(guarded.details["code"], "CDC-3001");
        assert_eq!(guarded.details["runbook"], plain.details["runbook"]);
    }
}
