//! The connector as the `oracle-cdc` binary runs it: one task under a supervisor that carries
//! out Kafka Connect's lifecycle commands (stop, pause, resume, restart) and offset edits, and
//! implements [`ConnectorControl`] for the REST API.
//!
//! States follow Connect: RUNNING while a task runs; PAUSED while it holds still; STOPPED once
//! the task ended on `stop` (offsets may then be altered or reset); FAILED when the task
//! ended with an error, with the error as the trace, until `restart` or `resume`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cdc_core::CdcError;
use cdc_core::config::{CONNECTOR_CLASS, CdcConfig, Config};
use cdc_logminer::engine::Backoff;
use cdc_offset::Position;
use parking_lot::{Condvar, Mutex};
use serde_json::{Map, Value as Json};

use crate::kafka::KafkaClients;
use crate::kafka::offsets::KafkaOffsetStore;
use crate::operator::control::{
    ConnectorControl, ConnectorState, ConnectorStatus, ControlError, MetricsSnapshot,
    PartitionOffset, TransactionsView, WorkerHealth,
};
use crate::worker::stop::write_stop_event;
use crate::worker::{TaskError, TaskOptions, TaskSignals, TaskStats, run_task};

/// The jitter of the task-restart backoff differs between processes, so that many
/// connectors that lost one cluster do not come back in step.
fn backoff_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    u64::from(nanos) ^ u64::from(std::process::id()) << 32
}

/// How long a health check waits for the supervisor's state.
const HEALTH_LOCK_WAIT: Duration = Duration::from_secs(5);

/// How often the supervisor looks whether its task ended or was asked to stop.
const TASK_POLL: Duration = Duration::from_millis(10);

/// A task thread that ended without its result (it panicked).
fn task_panicked() -> TaskError {
    TaskError::Thread {
        thread: "task",
        error: "it ended without its result (see the panic in the log)".to_owned(),
    }
}

/// What the operator asked for last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Desired {
    Running,
    Paused,
    Stopped,
}

#[derive(Debug)]
struct Inner {
    desired: Desired,
    state: ConnectorState,
    trace: Option<String>,
    /// The running task's signals.
    signals: Option<Arc<TaskSignals>>,
    /// A restart was asked for: the supervisor starts a new task after the current one ends.
    restart: bool,
    stats: Arc<TaskStats>,
}

/// One connector and its task.
pub struct Connector {
    config: CdcConfig,
    /// The configuration as given, secrets masked.
    shown_config: BTreeMap<String, String>,
    worker_id: String,
    inner: Mutex<Inner>,
    changed: Condvar,
    shutdown: AtomicBool,
    store: Mutex<Option<Arc<KafkaOffsetStore>>>,
    options: TaskOptions,
    /// A task that outlived its stop, still waiting on a call of its own.
    lingering: Mutex<Option<std::thread::JoinHandle<Result<(), TaskError>>>>,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("name", &self.config.connect.name)
            .field("worker_id", &self.worker_id)
            .finish_non_exhaustive()
    }
}

impl Connector {
    /// A connector for a validated configuration; `given` is the configuration as read, kept
    /// only as it may be shown: secrets, credentials in database URLs and secret driver
    /// properties masked ([`Config::iter_shown`]), and `connector.class` added when it was not
    /// given, as Connect always shows it; `worker_id` the REST listener's `host:port`.
    pub fn new(config: CdcConfig, given: &Config, worker_id: String) -> Connector {
        let mut shown_config: BTreeMap<String, String> = given
            .iter_shown()
            .map(|(key, shown)| (key.to_owned(), shown))
            .collect();
        shown_config
            .entry("connector.class".to_owned())
            .or_insert_with(|| CONNECTOR_CLASS.to_owned());
        Connector {
            config,
            shown_config,
            worker_id,
            inner: Mutex::new(Inner {
                desired: Desired::Running,
                state: ConnectorState::Unassigned,
                trace: None,
                signals: None,
                restart: false,
                stats: Arc::new(TaskStats::default()),
            }),
            changed: Condvar::new(),
            shutdown: AtomicBool::new(false),
            store: Mutex::new(None),
            options: TaskOptions::default(),
            lingering: Mutex::new(None),
        }
    }

    /// The same connector with other task options.
    pub fn with_options(mut self, options: TaskOptions) -> Connector {
        self.options = options;
        self
    }

    pub fn config(&self) -> &CdcConfig {
        &self.config
    }

    /// Runs tasks until [`Connector::shutdown`]; with `exit_on_failure`, returns the error of
    /// the first task that fails instead of waiting in FAILED for a restart.
    ///
    /// A task that ends with an error of class retried (a Kafka cluster that cannot be reached,
    /// CDC-9001; a database the engine gave up reconnecting to is already past its budget) is
    /// started again after a backoff (about 1 s doubling to 30 s, with jitter) while the
    /// connector stays RUNNING, until `cdc.retry.max.time.ms` has passed since the first of
    /// those failures; a task that got past its start begins a new budget. Every other error,
    /// and a retried one whose budget is spent, leaves the connector FAILED with the error as
    /// its trace, and writes a `stop` event to the ops topic.
    pub fn supervise(&self, exit_on_failure: bool) -> Result<(), CdcError> {
        let clock = Instant::now();
        let mut backoff = Backoff::new(self.config.retry.max_time, backoff_seed());
        loop {
            let signals = {
                let mut inner = self.inner.lock();
                loop {
                    if self.shutdown.load(Ordering::SeqCst) {
                        return Ok(());
                    }
                    let idle = inner.desired == Desired::Stopped
                        || (inner.state == ConnectorState::Failed && !inner.restart);
                    if !idle {
                        break;
                    }
                    self.changed
                        .wait_for(&mut inner, Duration::from_millis(200));
                }
                // the previous task's mining step, if it outlived its task, ends first
                let previous = Arc::clone(&inner.stats);
                drop(inner);
                self.wait_for_lingering_task();
                previous.wait_for_lingering_mining();
                let mut inner = self.inner.lock();
                if self.shutdown.load(Ordering::SeqCst) {
                    return Ok(());
                }
                if inner.desired == Desired::Stopped {
                    continue;
                }
                // a task the operator starts again after it FAILED gets a new retry budget
                if inner.state == ConnectorState::Failed {
                    backoff.reset();
                }
                let signals = Arc::new(TaskSignals::default());
                signals.set_paused(inner.desired == Desired::Paused);
                inner.signals = Some(Arc::clone(&signals));
                inner.restart = false;
                inner.trace = None;
                inner.stats = Arc::new(TaskStats::default());
                inner.state = match inner.desired {
                    Desired::Paused => ConnectorState::Paused,
                    _ => ConnectorState::Running,
                };
                signals
            };
            let stats = Arc::clone(&self.inner.lock().stats);
            let result = self.run_task_bounded(&stats, &signals);
            if stats.started() {
                backoff.reset();
            }
            let error = match result {
                Ok(()) if stats.finished() => {
                    // snapshot_only: the work is done, so the connector stops (a resume
                    // starts a task that finds the snapshot complete and ends again)
                    let mut inner = self.inner.lock();
                    inner.signals = None;
                    inner.desired = Desired::Stopped;
                    inner.state = ConnectorState::Stopped;
                    self.changed.notify_all();
                    if exit_on_failure {
                        return Ok(());
                    }
                    continue;
                }
                Ok(()) => {
                    let mut inner = self.inner.lock();
                    inner.signals = None;
                    inner.state = if inner.restart {
                        ConnectorState::Restarting
                    } else {
                        ConnectorState::Stopped
                    };
                    self.changed.notify_all();
                    continue;
                }
                Err(error) => CdcError::from(error),
            };
            let asked_to_stop = signals.stopping();
            let error = if error.is_retried() && !asked_to_stop {
                let now_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
                match backoff.next_delay(now_ms) {
                    Some(delay) => {
                        tracing::warn!(
                            code = error.code().id(),
                            %error,
                            attempt = backoff.attempts(),
                            retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                            "the task ended with an error that is retried; it starts again"
                        );
                        self.inner.lock().signals = None;
                        self.wait_before_retry(delay);
                        let mut inner = self.inner.lock();
                        if inner.desired == Desired::Stopped {
                            inner.state = ConnectorState::Stopped;
                            self.changed.notify_all();
                        }
                        continue;
                    }
                    None => CdcError::new(
                        error.code(),
                        format!(
                            "{} (retried for {} s, cdc.retry.max.time.ms)",
                            error.message().trim_end_matches('.'),
                            self.config.retry.max_time.as_secs()
                        ),
                    )
                    .without_retry()
                    .with_source(error),
                }
            } else {
                error
            };
            tracing::error!(code = error.code().id(), %error, "the task failed");
            write_stop_event(&self.config, &error, stats.resume_scn());
            let mut inner = self.inner.lock();
            inner.signals = None;
            inner.state = ConnectorState::Failed;
            inner.trace = Some(error.to_string());
            self.changed.notify_all();
            if exit_on_failure {
                return Err(error);
            }
        }
    }

    /// Runs one task on a thread of its own, so that a stop is honoured within
    /// `cdc.shutdown.timeout.ms` whatever the task waits on (a Kafka call at its start or its
    /// commit, each bounded by its own timeout only): past the timeout the task is left to end
    /// on its own, which it does at its next look at its signals, and counts as stopped. The
    /// next task start waits for it first ([`Connector::wait_for_lingering_task`]).
    fn run_task_bounded(
        &self,
        stats: &Arc<TaskStats>,
        signals: &Arc<TaskSignals>,
    ) -> Result<(), TaskError> {
        let task = {
            let config = self.config.clone();
            let stats = Arc::clone(stats);
            let signals = Arc::clone(signals);
            let options = self.options;
            std::thread::Builder::new()
                .name("oracle-cdc-task".into())
                .spawn(move || run_task(&config, &stats, &signals, options))
                .map_err(|e| TaskError::Thread {
                    thread: "task",
                    error: e.to_string(),
                })?
        };
        let mut stop_since: Option<Instant> = None;
        loop {
            if task.is_finished() {
                return task.join().unwrap_or_else(|_| Err(task_panicked()));
            }
            if signals.stopping() {
                let since = *stop_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= self.config.poll.shutdown_timeout {
                    tracing::warn!(
                        timeout_ms = u64::try_from(self.config.poll.shutdown_timeout.as_millis())
                            .unwrap_or(u64::MAX),
                        "the task did not end within cdc.shutdown.timeout.ms; it is left to end \
                         on its own (it waits on a call with a timeout of its own), and the next \
                         task start waits for it"
                    );
                    *self.lingering.lock() = Some(task);
                    return Ok(());
                }
            }
            std::thread::sleep(TASK_POLL);
        }
    }

    /// Waits for a task that outlived its stop ([`Connector::run_task_bounded`]): two tasks
    /// never deliver, mine or spill at once.
    fn wait_for_lingering_task(&self) {
        let Some(task) = self.lingering.lock().take() else {
            return;
        };
        tracing::info!("waiting for the previous task to end");
        match task.join() {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(error = %CdcError::from(error), "the previous task ended with an error")
            }
            Err(_) => {
                tracing::warn!(error = %CdcError::from(task_panicked()), "the previous task ended")
            }
        }
    }

    /// Waits `delay` before a task is started again, or less: until a shutdown, a stop, a
    /// pause or a restart asked for meanwhile.
    fn wait_before_retry(&self, delay: Duration) {
        let until = Instant::now() + delay;
        let mut inner = self.inner.lock();
        let desired = inner.desired;
        while !self.shutdown.load(Ordering::SeqCst) && inner.desired == desired && !inner.restart {
            if self.changed.wait_until(&mut inner, until).timed_out() {
                return;
            }
        }
    }

    /// Stops the task (SIGINT/SIGTERM) and makes [`Connector::supervise`] return.
    pub fn shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
        let inner = self.inner.lock();
        if let Some(signals) = &inner.signals {
            signals.request_stop();
        }
        self.changed.notify_all();
    }

    fn offsets_store(&self) -> Result<Arc<KafkaOffsetStore>, ControlError> {
        let mut slot = self.store.lock();
        if let Some(store) = slot.as_ref() {
            return Ok(Arc::clone(store));
        }
        let clients = KafkaClients::from_config(&self.config)
            .map_err(|e| ControlError::Internal(e.to_string()))?;
        let store = KafkaOffsetStore::open_with(
            &clients.bootstrap,
            &self.config.connect.offset_storage_topic,
            &self.config.connect.name,
            &self.config.topics.prefix,
            clients.props(),
            crate::kafka::offsets::DEFAULT_TIMEOUT,
            self.options.create_topics,
        )
        .map_err(|e| ControlError::Internal(e.to_string()))?;
        let store = Arc::new(store);
        *slot = Some(Arc::clone(&store));
        Ok(store)
    }

    /// Offsets change only while STOPPED; otherwise Connect's 400, word for word (the same
    /// text for PATCH and DELETE), so tooling that matches it keeps working.
    fn require_stopped(&self) -> Result<(), ControlError> {
        let state = self.inner.lock().state;
        if state == ConnectorState::Stopped {
            Ok(())
        } else {
            Err(ControlError::BadRequest(format!(
                "Connectors must be in the STOPPED state before their offsets can be modified. \
                 This can be done for the specified connector by issuing a 'PUT' request to \
                 the '/connectors/{}/stop' endpoint",
                self.config.connect.name
            )))
        }
    }

    fn partition(&self) -> Map<String, Json> {
        cdc_offset::codec::partition(&self.config.topics.prefix)
    }
}

impl ConnectorControl for Connector {
    fn name(&self) -> String {
        self.config.connect.name.clone()
    }

    fn config(&self) -> BTreeMap<String, String> {
        self.shown_config.clone()
    }

    fn status(&self) -> ConnectorStatus {
        let inner = self.inner.lock();
        ConnectorStatus {
            state: inner.state,
            worker_id: self.worker_id.clone(),
            trace: inner.trace.clone(),
        }
    }

    /// Unhealthy once shutting down, or when the supervisor holds its state longer than
    /// [`HEALTH_LOCK_WAIT`] (it never should: it holds it only to change it).
    fn health(&self) -> WorkerHealth {
        if self.shutdown.load(Ordering::SeqCst) {
            return WorkerHealth::Unhealthy;
        }
        match self.inner.try_lock_for(HEALTH_LOCK_WAIT) {
            None => WorkerHealth::Unhealthy,
            Some(inner) if inner.state == ConnectorState::Unassigned => WorkerHealth::Starting,
            Some(_) => WorkerHealth::Healthy,
        }
    }

    fn stop(&self) -> Result<(), ControlError> {
        let mut inner = self.inner.lock();
        inner.desired = Desired::Stopped;
        inner.restart = false;
        match &inner.signals {
            Some(signals) => signals.request_stop(),
            None => inner.state = ConnectorState::Stopped,
        }
        self.changed.notify_all();
        Ok(())
    }

    fn pause(&self) -> Result<(), ControlError> {
        let mut inner = self.inner.lock();
        inner.desired = Desired::Paused;
        if let Some(signals) = &inner.signals {
            signals.set_paused(true);
            inner.state = ConnectorState::Paused;
        }
        self.changed.notify_all();
        Ok(())
    }

    fn resume(&self) -> Result<(), ControlError> {
        let mut inner = self.inner.lock();
        inner.desired = Desired::Running;
        if let Some(signals) = &inner.signals {
            signals.set_paused(false);
            inner.state = ConnectorState::Running;
        } else if inner.state == ConnectorState::Failed {
            inner.restart = true;
        }
        self.changed.notify_all();
        Ok(())
    }

    fn restart(&self) -> Result<(), ControlError> {
        let mut inner = self.inner.lock();
        if inner.desired == Desired::Stopped {
            inner.desired = Desired::Running;
        }
        inner.restart = true;
        if let Some(signals) = &inner.signals {
            signals.request_stop();
            inner.state = ConnectorState::Restarting;
        }
        self.changed.notify_all();
        Ok(())
    }

    /// The stored offset as it is, as Connect shows it: also one this version refuses to
    /// start from (a newer `v`), so the operator can read it before correcting it.
    fn offsets(&self) -> Result<Vec<PartitionOffset>, ControlError> {
        let store = self.offsets_store()?;
        let offset = store
            .read_latest_map()
            .map_err(|e| ControlError::Internal(e.to_string()))?;
        Ok(offset
            .map(|offset| PartitionOffset {
                partition: self.partition(),
                offset: Some(offset),
            })
            .into_iter()
            .collect())
    }

    fn alter_offsets(&self, offsets: Vec<PartitionOffset>) -> Result<(), ControlError> {
        self.require_stopped()?;
        if offsets.is_empty() {
            return Err(ControlError::BadRequest(
                "The offsets to alter must not be empty".into(),
            ));
        }
        let own = self.partition();
        let mut change = None;
        for entry in offsets {
            if entry.partition != own {
                return Err(ControlError::BadRequest(format!(
                    "Unknown source partition {}: this connector's only partition is {}",
                    Json::Object(entry.partition),
                    Json::Object(own.clone())
                )));
            }
            change = Some(entry.offset);
        }
        let store = self.offsets_store()?;
        match change.flatten() {
            None => store.delete(),
            Some(map) => {
                let text = Json::Object(map).to_string();
                let position = Position::from_json(&text).map_err(|e| {
                    ControlError::BadRequest(format!("The offset is not valid: {e}"))
                })?;
                store.write(&position)
            }
        }
        .map_err(|e| ControlError::Internal(e.to_string()))
    }

    fn reset_offsets(&self) -> Result<(), ControlError> {
        self.require_stopped()?;
        self.offsets_store()?
            .delete()
            .map_err(|e| ControlError::Internal(e.to_string()))
    }

    fn metrics(&self) -> MetricsSnapshot {
        let stats = Arc::clone(&self.inner.lock().stats);
        let mut delivery = stats.delivery();
        let engine = *stats.engine.lock();
        delivery.scn_lag = if engine.current_scn == 0 {
            -1
        } else {
            i64::try_from(engine.current_scn.saturating_sub(engine.mined_to_scn)).unwrap_or(-1)
        };
        MetricsSnapshot {
            server: self.config.topics.prefix.clone(),
            engine,
            buffer: *stats.buffer.lock(),
            delivery,
        }
    }

    /// The engine's last view while the task runs or is paused (its buffer is still there);
    /// in any other state the task holds no transactions to show.
    fn transactions(&self) -> TransactionsView {
        let (state, stats) = {
            let inner = self.inner.lock();
            (inner.state, Arc::clone(&inner.stats))
        };
        let view = match state {
            ConnectorState::Running | ConnectorState::Paused => stats.transactions.lock().clone(),
            _ => None,
        };
        TransactionsView { state, view }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(extra: &[(&str, &str)]) -> Config {
        let mut pairs = vec![
            ("name", "orders-cdc"),
            ("cdc.source", "sim"),
            ("bootstrap.servers", "127.0.0.1:9092"),
            ("cdc.topic.prefix", "cdc"),
            ("cdc.tables.include", r"APP\..*"),
        ];
        pairs.extend_from_slice(extra);
        Config::from_pairs(pairs)
    }

    /// `GET /connectors/{name}/config` shows the configuration as given, but never a secret:
    /// not a password key, nor a password among the driver properties.
    #[test]
    fn the_shown_configuration_hides_every_secret() {
        let given = given(&[
            ("cdc.database.url", "//db:1521/FREE"),
            (
                "cdc.database.connection.properties",
                "oracle.net.wallet_password=hunter3;oracle.net.CONNECT_TIMEOUT=5000",
            ),
            ("cdc.kafka.sasl.password", "hunter4"),
        ]);
        // driver properties are refused at validation (no JDBC driver reads them), but a given
        // configuration is shown as given, secrets masked: the REST answers never echo them
        let mut valid = given.clone();
        valid.remove("cdc.database.connection.properties");
        let config = valid.validate().expect("a valid configuration");
        assert!(given.validate().is_err(), "driver properties are refused");
        let connector = Connector::new(config, &given, "127.0.0.1:8083".to_owned());
        let shown = ConnectorControl::config(&connector);
        let text = format!("{shown:?} {connector:?}");
        for secret in ["hunter3", "hunter4"] {
            assert!(!text.contains(secret), "{secret} shown: {text}");
        }
        assert_eq!(shown["cdc.kafka.sasl.password"], MASK_SHOWN);
        assert_eq!(shown["cdc.database.url"], "//db:1521/FREE");
        assert_eq!(
            shown["cdc.database.connection.properties"],
            format!("oracle.net.wallet_password={MASK_SHOWN};oracle.net.CONNECT_TIMEOUT=5000")
        );
        assert_eq!(shown["cdc.topic.prefix"], "cdc");
        assert_eq!(
            shown["connector.class"], CONNECTOR_CLASS,
            "shown even when not given"
        );
        assert_eq!(shown.len(), 9);
    }

    /// A `connector.class` given (an alias, say) is shown as given, as Connect shows it.
    #[test]
    fn the_shown_configuration_keeps_the_given_class() {
        let given = given(&[("connector.class", "OracleCdcSource")]);
        let config = given.validate().expect("a valid configuration");
        let connector = Connector::new(config, &given, "127.0.0.1:8083".to_owned());
        assert_eq!(
            ConnectorControl::config(&connector)["connector.class"],
            "OracleCdcSource"
        );
    }

    /// Before its task first starts, a connector is UNASSIGNED, as in Connect: not RESTARTING,
    /// which is the answer to a restart; the worker is still starting. A worker shutting down
    /// is unhealthy.
    #[test]
    fn a_connector_not_started_yet_is_unassigned() {
        let given = given(&[]);
        let config = given.validate().expect("a valid configuration");
        let connector = Connector::new(config, &given, "127.0.0.1:8083".to_owned());
        let status = ConnectorControl::status(&connector);
        assert_eq!(status.state.as_str(), "UNASSIGNED");
        assert_eq!(status.trace, None);
        assert_eq!(connector.health(), WorkerHealth::Starting);
        connector.shutdown();
        assert_eq!(connector.health(), WorkerHealth::Unhealthy);
    }

    /// Connect refuses to alter or reset the offsets of a connector that is not STOPPED with a
    /// 400 whose message names the stop endpoint; both calls use the same words.
    #[test]
    fn offsets_change_only_when_stopped_with_connects_message() {
        let given = given(&[]);
        let config = given.validate().expect("a valid configuration");
        let connector = Connector::new(config, &given, "127.0.0.1:8083".to_owned());
        let wanted = ControlError::BadRequest(
            "Connectors must be in the STOPPED state before their offsets can be modified. This \
             can be done for the specified connector by issuing a 'PUT' request to the \
             '/connectors/orders-cdc/stop' endpoint"
                .to_owned(),
        );
        let entry = PartitionOffset {
            partition: cdc_offset::codec::partition("cdc"),
            offset: None,
        };
        assert_eq!(connector.alter_offsets(vec![entry]), Err(wanted.clone()));
        assert_eq!(connector.reset_offsets(), Err(wanted));
    }

    const MASK_SHOWN: &str = cdc_core::config::MASK;
}
