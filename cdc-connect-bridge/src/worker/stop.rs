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

fn send_stop_event(
    config: &CdcConfig,
    error: &CdcError,
    resume_scn: Option<Scn>,
) -> Result<(), KafkaFailure> {
    let builder = RecordBuilder::new(RecordSettings::from_config(config, ""));
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let (topic, key, value) = builder.ops_record(&OpsEvent::stop(error), resume_scn, now_ms);
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
