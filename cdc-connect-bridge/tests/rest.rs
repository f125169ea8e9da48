//! The REST API over real HTTP: the router serves on 127.0.0.1:0 and `ureq` sends what an
//! operator's `curl` would. The connector behind it is a small in-test `ConnectorControl` with
//! Connect's state machine (stop → STOPPED, pause → PAUSED, resume → RUNNING) whose offsets can
//! be altered or reset only while STOPPED, as the worker's are. The log levels behind
//! `/admin/loggers` are the real table, handing its directives to a recorder instead of a
//! subscriber; the configuration validation is the connector's own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use cdc_buffer::BufferMetrics;
use cdc_connect_bridge::operator::cluster_id::ClusterId;
use cdc_connect_bridge::operator::control::{
    ConnectorControl, ConnectorState, ConnectorStatus, ControlError, DeliveryMetrics,
    MetricsSnapshot, PartitionOffset, TransactionsView, WorkerHealth,
};
use cdc_connect_bridge::operator::loggers::LogLevels;
use cdc_connect_bridge::operator::rest::{RestApi, ServerInfo};
use cdc_core::config::CONNECTOR_CLASS;
use cdc_core::{ConId, ConXid, Scn, Xid};
use cdc_logminer::engine::{EngineMetrics, OpenTransaction, OpenTransactions};
use parking_lot::Mutex;
use serde_json::{Value, json};
use ureq::Agent;
use ureq::http::StatusCode;

const NAME: &str = "orders-cdc";

/// The body of the runbook's PATCH (docs/runbooks.md, "Moving the offset by hand").
const RUNBOOK_PATCH: &str = r#"{"offsets": [{"partition": {"server": "cdc"}, "offset": {"v": 1, "resume_scn": 4711000, "dbid": 1234567890, "resetlogs_scn": 1, "journal_generation": 7, "schema_epoch": 0}}]}"#;

// ---------------------------------------------------------------------------------------------
// The connector behind the API

struct Inner {
    state: ConnectorState,
    trace: Option<String>,
    offsets: Vec<PartitionOffset>,
    restarts: u32,
    /// What `health` answers instead of the default rule, when set.
    health: Option<WorkerHealth>,
}

struct FakeControl {
    worker_id: String,
    inner: Mutex<Inner>,
}

fn partition() -> serde_json::Map<String, Value> {
    json!({"server": "cdc"}).as_object().cloned().unwrap()
}

impl FakeControl {
    fn new(worker_id: String) -> Self {
        let offset = json!({"v": 1, "resume_scn": 100, "dbid": 1234567890, "resetlogs_scn": 1});
        FakeControl {
            worker_id,
            inner: Mutex::new(Inner {
                state: ConnectorState::Running,
                trace: None,
                offsets: vec![PartitionOffset {
                    partition: partition(),
                    offset: offset.as_object().cloned(),
                }],
                restarts: 0,
                health: None,
            }),
        }
    }

    fn fail(&self, trace: &str) {
        let mut inner = self.inner.lock();
        inner.state = ConnectorState::Failed;
        inner.trace = Some(trace.to_owned());
    }

    fn require_stopped(&self) -> Result<(), ControlError> {
        if self.inner.lock().state == ConnectorState::Stopped {
            return Ok(());
        }
        Err(ControlError::BadRequest(format!(
            "Connectors must be in the STOPPED state before their offsets can be modified. This can \
             be done for the specified connector by issuing a 'PUT' request to the \
             '/connectors/{NAME}/stop' endpoint"
        )))
    }

    fn set_state(&self, state: ConnectorState) -> Result<(), ControlError> {
        let mut inner = self.inner.lock();
        inner.state = state;
        inner.trace = None;
        Ok(())
    }
}

impl ConnectorControl for FakeControl {
    fn name(&self) -> String {
        NAME.to_owned()
    }

    fn config(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("name".to_owned(), NAME.to_owned()),
            ("connector.class".to_owned(), CONNECTOR_CLASS.to_owned()),
            ("cdc.topic.prefix".to_owned(), "cdc".to_owned()),
            ("cdc.database.password".to_owned(), "********".to_owned()),
        ])
    }

    fn health(&self) -> WorkerHealth {
        let inner = self.inner.lock();
        inner.health.unwrap_or(match inner.state {
            ConnectorState::Unassigned => WorkerHealth::Starting,
            _ => WorkerHealth::Healthy,
        })
    }

    fn status(&self) -> ConnectorStatus {
        let inner = self.inner.lock();
        ConnectorStatus {
            state: inner.state,
            worker_id: self.worker_id.clone(),
            trace: inner.trace.clone(),
        }
    }

    fn stop(&self) -> Result<(), ControlError> {
        self.set_state(ConnectorState::Stopped)
    }

    fn pause(&self) -> Result<(), ControlError> {
        if self.inner.lock().state == ConnectorState::Stopped {
            return Err(ControlError::Conflict(
                "the connector is stopped; resume it first".to_owned(),
            ));
        }
        self.set_state(ConnectorState::Paused)
    }

    fn resume(&self) -> Result<(), ControlError> {
        self.set_state(ConnectorState::Running)
    }

    fn restart(&self) -> Result<(), ControlError> {
        self.inner.lock().restarts += 1;
        self.set_state(ConnectorState::Running)
    }

    fn offsets(&self) -> Result<Vec<PartitionOffset>, ControlError> {
        Ok(self.inner.lock().offsets.clone())
    }

    fn alter_offsets(&self, offsets: Vec<PartitionOffset>) -> Result<(), ControlError> {
        self.require_stopped()?;
        if let Some(bad) = offsets.iter().find(|entry| entry.partition != partition()) {
            return Err(ControlError::BadRequest(format!(
                "unknown partition {:?}",
                bad.partition
            )));
        }
        self.inner.lock().offsets = offsets;
        Ok(())
    }

    fn reset_offsets(&self) -> Result<(), ControlError> {
        self.require_stopped()?;
        self.inner.lock().offsets.clear();
        Ok(())
    }

    fn metrics(&self) -> MetricsSnapshot {
        MetricsSnapshot {
            server: "cdc".to_owned(),
            engine: EngineMetrics {
                rows_mined: 4711,
                steps: 3,
                resume_log_age_ms: Some(90_500),
                resume_log_is_oldest: Some(true),
                ..EngineMetrics::default()
            },
            buffer: BufferMetrics {
                open_transactions: 2,
                ..BufferMetrics::default()
            },
            delivery: DeliveryMetrics {
                records_sent: 17,
                last_commit_timestamp_ms: -1,
                millis_behind_source: -1,
                scn_lag: -1,
                ..DeliveryMetrics::default()
            },
        }
    }

    /// Two open transactions while running or paused (the worker's rule), none otherwise.
    fn transactions(&self) -> TransactionsView {
        let state = self.inner.lock().state;
        let view = matches!(state, ConnectorState::Running | ConnectorState::Paused).then(|| {
            let txn = |con: u32, usn: u16, events: u64, first_scn: u64| OpenTransaction {
                key: ConXid::new(
                    ConId(con),
                    Xid {
                        usn,
                        slot: 3,
                        sqn: 4711,
                    },
                ),
                container: (con > 1).then(|| "SALES".to_owned()),
                user: Some("APP".to_owned()),
                first_scn: Scn(first_scn),
                first_change_ms: (con > 1).then_some(1_000),
                events,
                bytes: events * 100,
                spilled: con > 1,
                journaled: false,
            };
            Arc::new(OpenTransactions {
                taken_at_ms: 61_000,
                mined_to_scn: Some(Scn(18_446_744_073_709_551_000)),
                open_transactions: 2,
                buffered_events: 12,
                transactions: vec![txn(3, 9, 10, 500), txn(0, 2, 2, 600)],
                truncated: false,
            })
        });
        TransactionsView { state, view }
    }
}

// ---------------------------------------------------------------------------------------------
// The server and the client

/// The API served on a runtime of its own; dropping it shuts the server down.
struct Server {
    address: SocketAddr,
    control: Arc<FakeControl>,
    /// The directives handed to the "subscriber", in order.
    directives: Arc<Mutex<Vec<String>>>,
    agent: Agent,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Server {
    /// The API as the binary serves it: with log levels (started from `info,rdkafka=warn`)
    /// and a cluster id not known yet.
    fn start() -> Self {
        Server::start_with(|api, levels| api.with_loggers(levels))
    }

    /// The API `configure` makes of the plain one over the in-test connector, given the log
    /// levels it may serve.
    fn start_with(configure: impl FnOnce(RestApi, Arc<LogLevels>) -> RestApi) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let address = listener.local_addr().unwrap();
        let control = Arc::new(FakeControl::new(address.to_string()));
        let directives = Arc::new(Mutex::new(Vec::new()));
        let recorder = Arc::clone(&directives);
        let levels = Arc::new(LogLevels::new("info,rdkafka=warn", move |applied| {
            recorder.lock().push(applied.to_owned());
            Ok(())
        }));
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let served: Arc<dyn ConnectorControl> = control.clone();
        let api = configure(RestApi::new(served), levels);
        runtime.spawn(async move {
            let signal = async move {
                let _ = stopped.await;
            };
            api.serve(listener, signal).await.unwrap();
        });
        let agent: Agent = Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Server {
            address,
            control,
            directives,
            agent,
            shutdown: Some(shutdown),
            runtime: Some(runtime),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    fn get(&self, path: &str) -> Reply {
        Reply::from(self.agent.get(self.url(path)).call().unwrap())
    }

    fn put(&self, path: &str) -> Reply {
        Reply::from(self.agent.put(self.url(path)).send_empty().unwrap())
    }

    fn post(&self, path: &str) -> Reply {
        Reply::from(self.agent.post(self.url(path)).send_empty().unwrap())
    }

    fn delete(&self, path: &str) -> Reply {
        Reply::from(self.agent.delete(self.url(path)).call().unwrap())
    }

    fn patch(&self, path: &str, body: &str) -> Reply {
        let request = self
            .agent
            .patch(self.url(path))
            .header("Content-Type", "application/json");
        Reply::from(request.send(body).unwrap())
    }

    /// A PUT with a JSON body.
    fn put_json(&self, path: &str, body: &str) -> Reply {
        let request = self
            .agent
            .put(self.url(path))
            .header("Content-Type", "application/json");
        Reply::from(request.send(body).unwrap())
    }

    fn state(&self) -> String {
        let reply = self.get(&format!("/connectors/{NAME}/status"));
        assert_eq!(reply.status, StatusCode::OK);
        reply.json()["connector"]["state"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A response read whole.
struct Reply {
    status: StatusCode,
    content_type: String,
    body: String,
}

impl From<ureq::http::Response<ureq::Body>> for Reply {
    fn from(mut response: ureq::http::Response<ureq::Body>) -> Self {
        let content_type = response
            .headers()
            .get("content-type")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = response.body_mut().read_to_string().unwrap();
        Reply {
            status: response.status(),
            content_type,
            body,
        }
    }
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.body))
    }

    /// Asserts Connect's error shape with this code and a message containing `text`.
    fn assert_error(&self, code: u16, text: &str) {
        assert_eq!(self.status.as_u16(), code, "{}", self.body);
        assert!(
            self.content_type.starts_with("application/json"),
            "{}",
            self.content_type
        );
        let body = self.json();
        assert_eq!(body["error_code"], json!(code), "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(text), "{message:?} lacks {text:?}");
        assert_eq!(body.as_object().unwrap().len(), 2, "{body}");
    }
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn root_reports_the_version() {
    let server = Server::start();
    let reply = server.get("/");
    assert_eq!(reply.status, StatusCode::OK);
    let body = reply.json();
    assert_eq!(body["version"], json!(env!("CARGO_PKG_VERSION")));
    assert!(body["commit"].is_string(), "{body}");
    assert_eq!(
        body["kafka_cluster_id"],
        Value::Null,
        "not learnt yet: {body}"
    );
    assert_eq!(body.as_object().unwrap().len(), 3, "{body}");

    let known = Server::start_with(|api, _| {
        api.with_info(ServerInfo {
            kafka_cluster_id: ClusterId::known("Zx3kq7RTT1mS6m2Jm0XyCA"),
            ..ServerInfo::default()
        })
    });
    assert_eq!(
        known.get("/").json()["kafka_cluster_id"],
        "Zx3kq7RTT1mS6m2Jm0XyCA"
    );
}

/// KIP-1017: 200 once the task was started, 503 before, 500 when the worker cannot answer;
/// a failed connector runs in a healthy worker.
#[test]
fn health_follows_the_worker_not_the_connector() {
    let server = Server::start();
    let healthy = server.get("/health");
    assert_eq!(healthy.status, StatusCode::OK);
    assert_eq!(
        healthy.json(),
        json!({"status": "healthy",
               "message": "Worker has completed startup and is ready to handle requests"})
    );
    server.control.fail("[CDC-2002] a log is missing");
    assert_eq!(server.get("/health").status, StatusCode::OK);

    server.control.inner.lock().state = ConnectorState::Unassigned;
    let starting = server.get("/health");
    assert_eq!(starting.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(starting.json()["status"], "starting");

    server.control.inner.lock().health = Some(WorkerHealth::Unhealthy);
    let unhealthy = server.get("/health");
    assert_eq!(unhealthy.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(unhealthy.json()["status"], "unhealthy");
    assert!(unhealthy.json()["message"].is_string());
}

#[test]
fn connectors_lists_the_one_connector() {
    let server = Server::start();
    for path in ["/connectors", "/connectors/"] {
        let reply = server.get(path);
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        assert_eq!(reply.json(), json!([NAME]), "{path}");
    }
}

#[test]
fn connectors_expand_status_and_info() {
    let server = Server::start();
    let both = server.get("/connectors?expand=status&expand=info");
    assert_eq!(both.status, StatusCode::OK);
    let body = both.json();
    let entry = &body[NAME];
    assert_eq!(entry["status"]["connector"]["state"], "RUNNING", "{body}");
    assert_eq!(entry["status"]["tasks"][0]["id"], 0, "{body}");
    assert_eq!(entry["info"]["name"], NAME, "{body}");
    assert_eq!(entry["info"]["type"], "source", "{body}");
    assert_eq!(
        entry["info"]["config"]["connector.class"], CONNECTOR_CLASS,
        "{body}"
    );
    assert_eq!(
        entry["info"]["tasks"],
        json!([{"connector": NAME, "task": 0}])
    );
    assert_eq!(
        server.get("/connectors?expand=info&expand=status").json(),
        body,
        "the order of the expansions does not matter"
    );

    let info = server.get("/connectors?expand=info").json();
    assert_eq!(
        info[NAME].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["info"]
    );

    let status = server.get("/connectors?expand=status").json();
    assert_eq!(
        status[NAME].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["status"]
    );

    let unknown = server.get("/connectors?expand=nothing").json();
    assert_eq!(unknown, json!({NAME: {}}));
}

#[test]
fn connector_info_config_and_tasks() {
    let server = Server::start();
    let info = server.get(&format!("/connectors/{NAME}"));
    assert_eq!(info.status, StatusCode::OK);
    let config = json!({
        "cdc.database.password": "********",
        "cdc.topic.prefix": "cdc",
        "connector.class": CONNECTOR_CLASS,
        "name": NAME,
    });
    assert_eq!(
        info.json(),
        json!({
            "name": NAME,
            "config": config,
            "tasks": [{"connector": NAME, "task": 0}],
            "type": "source",
        })
    );

    let reply = server.get(&format!("/connectors/{NAME}/config"));
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json(), config);

    let tasks = server.get(&format!("/connectors/{NAME}/tasks"));
    assert_eq!(tasks.status, StatusCode::OK);
    assert_eq!(
        tasks.json(),
        json!([{"id": {"connector": NAME, "task": 0}, "config": config}])
    );
}

#[test]
fn status_shows_connector_and_task() {
    let server = Server::start();
    let reply = server.get(&format!("/connectors/{NAME}/status"));
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.content_type.starts_with("application/json"));
    let worker = server.address.to_string();
    assert_eq!(
        reply.json(),
        json!({
            "name": NAME,
            "connector": {"state": "RUNNING", "worker_id": worker},
            "tasks": [{"id": 0, "state": "RUNNING", "worker_id": worker}],
            "type": "source",
        })
    );

    server.control.fail("[CDC-2002] a log is missing");
    let failed = server.get(&format!("/connectors/{NAME}/status")).json();
    assert_eq!(failed["tasks"][0]["state"], "FAILED");
    assert_eq!(failed["tasks"][0]["trace"], "[CDC-2002] a log is missing");

    let task = server.get(&format!("/connectors/{NAME}/tasks/0/status"));
    assert_eq!(task.status, StatusCode::OK);
    assert_eq!(task.json()["state"], "FAILED");
    server
        .get(&format!("/connectors/{NAME}/tasks/1/status"))
        .assert_error(404, "No status found for task");
    server
        .get(&format!("/connectors/{NAME}/tasks/first/status"))
        .assert_error(404, "No status found for task");
}

#[test]
fn stop_pause_resume_follow_connects_state_machine() {
    let server = Server::start();
    let stop = server.put(&format!("/connectors/{NAME}/stop"));
    assert_eq!(stop.status, StatusCode::NO_CONTENT);
    assert!(stop.body.is_empty());
    assert_eq!(server.state(), "STOPPED");
    let stopped = server.get(&format!("/connectors/{NAME}/status")).json();
    assert_eq!(
        stopped["tasks"],
        json!([]),
        "a stopped connector has no tasks"
    );
    assert_eq!(
        server.get(&format!("/connectors/{NAME}")).json()["tasks"],
        json!([])
    );
    assert_eq!(
        server.get(&format!("/connectors/{NAME}/tasks")).json(),
        json!([])
    );

    // The in-test connector refuses to pause while stopped: a Conflict is 409.
    server
        .put(&format!("/connectors/{NAME}/pause"))
        .assert_error(409, "resume it first");

    let resume = server.put(&format!("/connectors/{NAME}/resume"));
    assert_eq!(resume.status, StatusCode::ACCEPTED);
    assert_eq!(server.state(), "RUNNING");

    let pause = server.put(&format!("/connectors/{NAME}/pause"));
    assert_eq!(pause.status, StatusCode::ACCEPTED);
    assert_eq!(server.state(), "PAUSED");
    let paused = server.get(&format!("/connectors/{NAME}/status")).json();
    assert_eq!(paused["tasks"][0]["state"], "PAUSED");

    assert_eq!(
        server.put(&format!("/connectors/{NAME}/resume")).status,
        StatusCode::ACCEPTED
    );
    assert_eq!(server.state(), "RUNNING");
}

#[test]
fn restart_answers_as_connect_does() {
    let server = Server::start();
    let plain = server.post(&format!("/connectors/{NAME}/restart"));
    assert_eq!(plain.status, StatusCode::NO_CONTENT);
    assert!(plain.body.is_empty());
    assert_eq!(server.control.inner.lock().restarts, 1);

    let with_tasks = server.post(&format!("/connectors/{NAME}/restart?includeTasks=true"));
    assert_eq!(with_tasks.status, StatusCode::ACCEPTED);
    let body = with_tasks.json();
    assert_eq!(body["name"], NAME);
    assert_eq!(body["connector"]["state"], "RESTARTING", "{body}");
    assert_eq!(body["tasks"][0]["state"], "RESTARTING", "{body}");
    assert_eq!(server.control.inner.lock().restarts, 2);

    // Nothing has failed: onlyFailed restarts nothing and shows the states as they are.
    let only_failed = server.post(&format!(
        "/connectors/{NAME}/restart?includeTasks=true&onlyFailed=true"
    ));
    assert_eq!(only_failed.status, StatusCode::ACCEPTED);
    let body = only_failed.json();
    assert_eq!(body["connector"]["state"], "RUNNING", "{body}");
    assert_eq!(body["tasks"][0]["state"], "RUNNING", "{body}");
    assert_eq!(server.control.inner.lock().restarts, 2);

    server.control.fail("[CDC-1001] ORA-03113");
    let failed = server.post(&format!(
        "/connectors/{NAME}/restart?includeTasks=true&onlyFailed=true"
    ));
    assert_eq!(failed.status, StatusCode::ACCEPTED);
    assert_eq!(failed.json()["tasks"][0]["state"], "RESTARTING");
    assert_eq!(server.control.inner.lock().restarts, 3);
    assert_eq!(server.state(), "RUNNING");

    let task = server.post(&format!("/connectors/{NAME}/tasks/0/restart"));
    assert_eq!(task.status, StatusCode::NO_CONTENT);
    assert_eq!(server.control.inner.lock().restarts, 4);
    server
        .post(&format!("/connectors/{NAME}/tasks/7/restart"))
        .assert_error(404, "not found");
}

/// Connect restarts a STOPPED connector into STOPPED; here nothing starts under an operator
/// who is editing the offsets.
#[test]
fn restart_leaves_a_stopped_connector_stopped() {
    let server = Server::start();
    assert_eq!(
        server.put(&format!("/connectors/{NAME}/stop")).status,
        StatusCode::NO_CONTENT
    );
    let plain = server.post(&format!("/connectors/{NAME}/restart"));
    assert_eq!(plain.status, StatusCode::NO_CONTENT);
    let with_tasks = server.post(&format!("/connectors/{NAME}/restart?includeTasks=true"));
    assert_eq!(with_tasks.status, StatusCode::ACCEPTED);
    let body = with_tasks.json();
    assert_eq!(body["connector"]["state"], "STOPPED", "{body}");
    assert_eq!(body["tasks"], json!([]), "{body}");
    assert_eq!(server.control.inner.lock().restarts, 0);
    assert_eq!(server.state(), "STOPPED");
    server
        .post(&format!("/connectors/{NAME}/tasks/0/restart"))
        .assert_error(404, "not found");
}

#[test]
fn runbook_sequence_moves_the_offset() {
    let server = Server::start();
    assert_eq!(
        server.put(&format!("/connectors/{NAME}/stop")).status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(server.state(), "STOPPED");

    let before = server.get(&format!("/connectors/{NAME}/offsets"));
    assert_eq!(before.status, StatusCode::OK);
    assert_eq!(
        before.json(),
        json!({"offsets": [{"partition": {"server": "cdc"},
                            "offset": {"v": 1, "resume_scn": 100, "dbid": 1234567890,
                                       "resetlogs_scn": 1}}]})
    );

    let patch = server.patch(&format!("/connectors/{NAME}/offsets"), RUNBOOK_PATCH);
    assert_eq!(patch.status, StatusCode::OK, "{}", patch.body);
    assert_eq!(
        patch.json(),
        json!({"message": "The offsets for this connector have been altered successfully"})
    );

    let after = server.get(&format!("/connectors/{NAME}/offsets"));
    assert_eq!(after.status, StatusCode::OK);
    let wanted: Value = serde_json::from_str(RUNBOOK_PATCH).unwrap();
    assert_eq!(after.json(), wanted);
    assert_eq!(after.json()["offsets"][0]["offset"]["resume_scn"], 4711000);

    assert_eq!(
        server.put(&format!("/connectors/{NAME}/resume")).status,
        StatusCode::ACCEPTED
    );
    assert_eq!(server.state(), "RUNNING");
}

#[test]
fn offsets_change_only_while_stopped() {
    let server = Server::start();
    let path = format!("/connectors/{NAME}/offsets");
    server
        .patch(&path, RUNBOOK_PATCH)
        .assert_error(400, "STOPPED state");
    server.delete(&path).assert_error(400, "STOPPED state");
    assert_eq!(
        server.get(&path).json()["offsets"][0]["offset"]["resume_scn"],
        100,
        "nothing changed"
    );

    assert_eq!(
        server.put(&format!("/connectors/{NAME}/pause")).status,
        StatusCode::ACCEPTED
    );
    server
        .patch(&path, RUNBOOK_PATCH)
        .assert_error(400, "STOPPED state");

    assert_eq!(
        server.put(&format!("/connectors/{NAME}/stop")).status,
        StatusCode::NO_CONTENT
    );
    let reset = server.delete(&path);
    assert_eq!(reset.status, StatusCode::OK);
    assert_eq!(
        reset.json(),
        json!({"message": "The offsets for this connector have been reset successfully"})
    );
    assert_eq!(server.get(&path).json(), json!({"offsets": []}));
}

#[test]
fn bad_patch_bodies_are_400() {
    let server = Server::start();
    assert_eq!(
        server.put(&format!("/connectors/{NAME}/stop")).status,
        StatusCode::NO_CONTENT
    );
    let path = format!("/connectors/{NAME}/offsets");
    server
        .patch(&path, r#"{"offsets": [{"partition": "#)
        .assert_error(400, "not valid JSON");
    server
        .patch(&path, "not json at all")
        .assert_error(400, "not valid JSON");
    server.patch(&path, r#"{"offsets": []}"#).assert_error(
        400,
        "Partitions / offsets need to be provided for an alter offsets request",
    );
    server
        .patch(&path, r#"{"offsets": [{"offset": {"v": 1}}]}"#)
        .assert_error(400, "partition is missing");
    // What the connector refuses is passed on as its 400.
    server
        .patch(
            &path,
            r#"{"offsets": [{"partition": {"server": "other"}, "offset": {"v": 1}}]}"#,
        )
        .assert_error(400, "unknown partition");

    let form = server
        .agent
        .patch(server.url(&path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .send(RUNBOOK_PATCH)
        .unwrap();
    Reply::from(form).assert_error(415, "Unsupported Media Type");
    assert_eq!(
        server.get(&path).json()["offsets"][0]["offset"]["resume_scn"],
        100,
        "nothing changed"
    );
}

#[test]
fn unknown_connector_is_404_on_every_endpoint() {
    let server = Server::start();
    let message = "Connector nope not found";
    for path in [
        "",
        "/config",
        "/status",
        "/tasks",
        "/offsets",
        "/tasks/0/status",
    ] {
        server
            .get(&format!("/connectors/nope{path}"))
            .assert_error(404, message);
    }
    for path in ["/stop", "/pause", "/resume"] {
        server
            .put(&format!("/connectors/nope{path}"))
            .assert_error(404, message);
    }
    server
        .post("/connectors/nope/restart")
        .assert_error(404, message);
    server
        .post("/connectors/nope/tasks/0/restart")
        .assert_error(404, message);
    server
        .patch("/connectors/nope/offsets", RUNBOOK_PATCH)
        .assert_error(404, message);
    server
        .delete("/connectors/nope/offsets")
        .assert_error(404, message);
    server
        .get("/oracle-cdc/connectors/nope/transactions")
        .assert_error(404, message);
    assert_eq!(server.state(), "RUNNING", "nothing happened to ours");
}

#[test]
fn unknown_paths_and_methods_answer_in_connects_shape() {
    let server = Server::start();
    server
        .get("/nothing/here")
        .assert_error(404, "HTTP 404 Not Found");
    server
        .get(&format!("/connectors/{NAME}/nothing"))
        .assert_error(404, "HTTP 404 Not Found");
    server
        .delete(&format!("/connectors/{NAME}/status"))
        .assert_error(405, "HTTP 405 Method Not Allowed");
    server
        .post(&format!("/connectors/{NAME}/stop"))
        .assert_error(405, "HTTP 405 Method Not Allowed");
}

#[test]
fn metrics_page_is_openmetrics_with_the_server_label() {
    let server = Server::start();
    let reply = server.get("/metrics");
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.content_type,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert!(
        reply
            .body
            .contains("oracle_cdc_rows_mined_total{server=\"cdc\"} 4711\n"),
        "{}",
        reply.body
    );
    assert!(
        reply
            .body
            .contains("oracle_cdc_open_transactions{server=\"cdc\"} 2\n"),
        "{}",
        reply.body
    );
    assert!(
        reply
            .body
            .contains("oracle_cdc_records_sent_total{server=\"cdc\"} 17\n"),
        "{}",
        reply.body
    );
    assert!(
        reply
            .body
            .contains("oracle_cdc_last_commit_timestamp_millis{server=\"cdc\"} -1\n"),
        "{}",
        reply.body
    );
    // the redo-retention guard
    assert!(
        reply
            .body
            .contains("oracle_cdc_resume_log_age_seconds{server=\"cdc\"} 90\n"),
        "{}",
        reply.body
    );
    assert!(
        reply
            .body
            .contains("oracle_cdc_resume_log_is_oldest{server=\"cdc\"} 1\n"),
        "{}",
        reply.body
    );
    assert!(reply.body.ends_with("# EOF\n"));
}

#[test]
fn open_transactions_are_ours_outside_connects_paths() {
    let server = Server::start();
    let path = format!("/oracle-cdc/connectors/{NAME}/transactions");
    let reply = server.get(&path);
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.json(),
        json!({
            "connector": NAME,
            "task_state": "RUNNING",
            "taken_at_ms": 61_000,
            "mined_to_scn": "18446744073709551000",
            "open_transactions": 2,
            "buffered_events": 12,
            "transactions": [
                {"xid": "9.3.4711", "con_id": 3, "container": "SALES", "user": "APP",
                 "first_scn": "500", "first_change_ms": 1_000, "age_ms": 60_000, "events": 10,
                 "bytes": 1_000, "spilled": true, "journaled": false},
                {"xid": "2.3.4711", "con_id": 0, "container": null, "user": "APP",
                 "first_scn": "600", "first_change_ms": null, "age_ms": null, "events": 2,
                 "bytes": 200, "spilled": false, "journaled": false},
            ],
            "truncated": false,
        })
    );
    // stopped: nothing running holds transactions
    let stop = server.put(&format!("/connectors/{NAME}/stop")).status;
    assert!(
        stop == StatusCode::ACCEPTED || stop == StatusCode::NO_CONTENT,
        "{stop}"
    );
    let stopped = server.get(&path).json();
    assert_eq!(stopped["task_state"], "STOPPED");
    assert_eq!(stopped["transactions"], json!([]));
    assert_eq!(stopped["open_transactions"], 0);
    assert_eq!(stopped["mined_to_scn"], Value::Null);
    // not Connect's: no such path under /connectors
    server
        .get(&format!("/connectors/{NAME}/transactions"))
        .assert_error(404, "HTTP 404 Not Found");
    server
        .post(&path)
        .assert_error(405, "HTTP 405 Method Not Allowed");
}

// ---------------------------------------------------------------------------------------------
// Connector plugins and validation

#[test]
fn connector_plugins_lists_this_connector() {
    let server = Server::start();
    let version = env!("CARGO_PKG_VERSION");
    let ours = json!({"class": CONNECTOR_CLASS, "type": "source", "version": version});
    for path in [
        "/connector-plugins",
        "/connector-plugins/",
        "/connector-plugins?connectorsOnly=true",
        "/connector-plugins?connectorsOnly=TRUE",
    ] {
        let reply = server.get(path);
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        assert_eq!(reply.json(), json!([ours]), "{path}");
    }
    let all = server.get("/connector-plugins?connectorsOnly=false").json();
    assert_eq!(
        all,
        json!([ours, {"class": "org.apache.kafka.connect.json.JsonConverter",
                      "type": "converter", "version": version}])
    );
}

/// A configuration that would run, in the flat JSON a Connect client sends.
fn good_config() -> Value {
    json!({
        "name": NAME,
        "connector.class": CONNECTOR_CLASS,
        "cdc.source": "sim",
        "bootstrap.servers": "127.0.0.1:9092",
        "cdc.topic.prefix": "cdc",
        "cdc.tables.include": "APP\\..*",
        "cdc.database.password": "hunter2",
        "tasks.max": 1,
    })
}

fn validate(server: &Server, plugin: &str, config: &Value) -> Reply {
    server.put_json(
        &format!("/connector-plugins/{plugin}/config/validate"),
        &config.to_string(),
    )
}

/// The configs entry of `key`.
fn entry<'a>(infos: &'a Value, key: &str) -> &'a Value {
    infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|config| config["value"]["name"] == key)
        .unwrap_or_else(|| panic!("no {key} in {infos}"))
}

#[test]
fn validate_answers_connects_config_infos() {
    let server = Server::start();
    for plugin in [
        CONNECTOR_CLASS,
        "OracleCdcSourceConnector",
        "OracleCdcSource",
    ] {
        let reply = validate(&server, plugin, &good_config());
        assert_eq!(reply.status, StatusCode::OK, "{plugin}: {}", reply.body);
        let infos = reply.json();
        assert_eq!(infos["name"], CONNECTOR_CLASS);
        assert_eq!(infos["error_count"], 0, "{infos}");
        assert!(infos["groups"].as_array().unwrap().len() > 5, "{infos}");
    }
    let infos = validate(&server, "OracleCdcSource", &good_config()).json();
    let prefix = entry(&infos, "cdc.topic.prefix");
    let definition = prefix["definition"].as_object().unwrap();
    let mut fields: Vec<&str> = definition.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "default_value",
            "dependents",
            "display_name",
            "documentation",
            "group",
            "importance",
            "name",
            "order",
            "required",
            "type",
            "width"
        ]
    );
    assert_eq!(
        prefix["value"],
        json!({"name": "cdc.topic.prefix", "value": "cdc", "recommended_values": [],
               "errors": [], "visible": true})
    );
    let tasks = entry(&infos, "tasks.max");
    assert_eq!(tasks["definition"]["type"], "INT");
    assert_eq!(tasks["definition"]["default_value"], "1");
    assert_eq!(tasks["value"]["value"], "1");

    let password = entry(&infos, "cdc.database.password");
    assert_eq!(password["definition"]["type"], "PASSWORD");
    assert_eq!(password["value"]["value"], "[hidden]");
    assert!(
        !infos.to_string().contains("hunter2"),
        "a secret was echoed"
    );
}

#[test]
fn validate_reports_every_problem_on_its_key() {
    let server = Server::start();
    let mut config = good_config();
    let map = config.as_object_mut().unwrap();
    map.insert("cdc.capture.mode".into(), json!("archive"));
    map.insert("cdc.mining.max.logs.per.stpe".into(), json!("16"));
    map.insert("cdc.kafka.sasl.password".into(), json!("hunter3"));
    map.remove("cdc.topic.prefix");
    let reply = validate(&server, CONNECTOR_CLASS, &config);
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let infos = reply.json();
    assert_eq!(infos["error_count"], 3, "{infos}");
    let errors = |key: &str| -> Vec<String> {
        entry(&infos, key)["value"]["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|error| error.as_str().unwrap().to_owned())
            .collect()
    };
    let mode = errors("cdc.capture.mode");
    assert!(
        mode[0].contains("cdc.capture.mode") && mode[0].contains("online"),
        "{mode:?}"
    );
    let typo = errors("cdc.mining.max.logs.per.stpe");
    assert!(
        typo[0].contains("did you mean cdc.mining.max.logs.per.step?"),
        "{typo:?}"
    );
    assert_eq!(
        entry(&infos, "cdc.mining.max.logs.per.stpe")["definition"],
        Value::Null,
        "an unknown key has no definition, as in Connect"
    );
    assert!(errors("cdc.topic.prefix")[0].contains("required"));
    let sasl = entry(&infos, "cdc.kafka.sasl.password");
    assert_eq!(sasl["value"]["value"], "[hidden]");
    assert!(!infos.to_string().contains("hunter"), "a secret was echoed");
}

#[test]
fn validate_refuses_other_plugins_and_bad_bodies() {
    let server = Server::start();
    validate(&server, "FileStreamSource", &good_config())
        .assert_error(400, "does not match request type FileStreamSource");
    let mut other = good_config();
    other["connector.class"] = json!("io.debezium.connector.oracle.OracleConnector");
    validate(&server, "OracleConnector", &other).assert_error(
        400,
        "Failed to find any class that implements Connector and which name matches \
         io.debezium.connector.oracle.OracleConnector",
    );
    let mut classless = good_config();
    classless.as_object_mut().unwrap().remove("connector.class");
    validate(&server, "FileStreamSource", &classless).assert_error(400, CONNECTOR_CLASS);
    assert_eq!(
        validate(&server, "OracleCdcSource", &classless).json()["error_count"],
        0,
        "the path names the plugin"
    );

    let path = format!("/connector-plugins/{CONNECTOR_CLASS}/config/validate");
    server
        .put_json(&path, "{\"name\": ")
        .assert_error(400, "not a valid configuration");
    server
        .put_json(&path, "[1, 2]")
        .assert_error(400, "must be a JSON object");
    server
        .put_json(&path, "")
        .assert_error(400, "must be a JSON object");
    let form = server
        .agent
        .put(server.url(&path))
        .header("Content-Type", "text/plain")
        .send(good_config().to_string())
        .unwrap();
    Reply::from(form).assert_error(415, "Unsupported Media Type");
    server
        .get(&path)
        .assert_error(405, "HTTP 405 Method Not Allowed");
    server
        .get(&format!("/connector-plugins/{CONNECTOR_CLASS}/config"))
        .assert_error(404, "HTTP 404 Not Found");
}

// ---------------------------------------------------------------------------------------------
// Log levels

#[test]
fn loggers_list_and_read_levels() {
    let server = Server::start();
    let all = server.get("/admin/loggers");
    assert_eq!(all.status, StatusCode::OK);
    let all = all.json();
    assert_eq!(all["root"], json!({"level": "INFO", "last_modified": null}));
    assert_eq!(all["rdkafka"]["level"], "WARN");
    assert_eq!(all["cdc_logminer"]["level"], "INFO");

    let one = server.get("/admin/loggers/cdc_logminer::engine");
    assert_eq!(one.status, StatusCode::OK);
    assert_eq!(one.json(), json!({"level": "INFO", "last_modified": null}));
    server
        .get("/admin/loggers/cdc_logminr")
        .assert_error(404, "Logger cdc_logminr not found.");
}

#[test]
fn loggers_put_changes_the_filter_and_names_what_changed() {
    let server = Server::start();
    let path = "/admin/loggers/cdc_logminer";
    let set = server.put_json(path, r#"{"level": "debug"}"#);
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(set.json(), json!(["cdc_logminer"]));
    assert_eq!(
        server.directives.lock().last().unwrap(),
        "info,cdc_logminer=debug,rdkafka=warn"
    );
    let now = server.get(path).json();
    assert_eq!(now["level"], "DEBUG");
    assert!(now["last_modified"].as_i64().unwrap() > 0, "{now}");
    assert_eq!(
        server.get("/admin/loggers/cdc_logminer::engine").json()["level"],
        "DEBUG",
        "a logger under it follows"
    );
    assert_eq!(
        server.get("/admin/loggers/cdc_core").json()["level"],
        "INFO"
    );
    assert_eq!(
        server.put_json(path, r#"{"level": "DEBUG"}"#).json(),
        json!([]),
        "nothing changed"
    );

    // FATAL is tracing's ERROR; cluster scope is this worker, answered as Connect does
    let cluster = server.put_json(
        "/admin/loggers/rdkafka?scope=cluster",
        r#"{"level": "FATAL"}"#,
    );
    assert_eq!(cluster.status, StatusCode::NO_CONTENT);
    assert_eq!(
        server.get("/admin/loggers/rdkafka").json()["level"],
        "ERROR"
    );

    let root = server.put_json("/admin/loggers/root", r#"{"level": "WARN"}"#);
    let changed = root.json();
    for logger in ["root", "cdc_logminer", "rdkafka", "cdc_core"] {
        assert!(
            changed.as_array().unwrap().contains(&json!(logger)),
            "{changed}"
        );
    }
    assert_eq!(server.directives.lock().last().unwrap(), "warn");
}

#[test]
fn loggers_put_answers_bad_requests_as_connect_does() {
    let server = Server::start();
    let path = "/admin/loggers/cdc_logminer";
    server
        .put_json(path, r#"{"level": "LOUD"}"#)
        .assert_error(404, "invalid log level 'LOUD'.");
    server.put_json(path, r#"{"lvl": "DEBUG"}"#).assert_error(
        400,
        "Desired 'level' parameter was not specified in request.",
    );
    server
        .put_json(path, r#"{"level": "#)
        .assert_error(400, "not valid JSON");
    server
        .put_json("/admin/loggers/a=b,c", r#"{"level": "DEBUG"}"#)
        .assert_error(400, "is not a logger name");
    let form = server
        .agent
        .put(server.url(path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .send("level=DEBUG")
        .unwrap();
    Reply::from(form).assert_error(415, "Unsupported Media Type");
    assert!(server.directives.lock().is_empty(), "nothing was changed");
    server
        .delete(path)
        .assert_error(405, "HTTP 405 Method Not Allowed");
}

/// An API given no log levels (an embedder's) has no `/admin/loggers`.
#[test]
fn loggers_are_absent_without_log_levels() {
    let server = Server::start_with(|api, _| api);
    server
        .get("/admin/loggers")
        .assert_error(404, "HTTP 404 Not Found");
    server
        .put_json("/admin/loggers/root", r#"{"level": "DEBUG"}"#)
        .assert_error(404, "HTTP 404 Not Found");
}
