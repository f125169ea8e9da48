//! The worker's REST API: the Kafka Connect endpoints an operator's runbook and Connect's own
//! tooling use, with Connect's request and response shapes and status codes, so `curl` recipes
//! and Connect tooling work unchanged, plus the Prometheus `/metrics` page and, outside
//! Connect's paths, the open transactions (`/oracle-cdc/connectors/{name}/transactions`).
//!
//! ```text
//!  HTTP request ─► axum Router ─► handler: parse path, query and body (Connect's 4xx on error)
//!                                   │ spawn_blocking (control calls may read the offsets topic)
//!                                   ▼
//!                     ConnectorControl: name · status · health · stop · pause · resume
//!                                       restart · offsets · alter/reset_offsets · metrics
//!                                       transactions (ours: /oracle-cdc/connectors/{name}/…)
//!                     plugins: KEYS + cdc_core validation (`/connector-plugins`)
//!                     LogLevels: the process's log filter (`/admin/loggers`)
//!                                   │ Ok ─► Connect's JSON body and status code
//!                                   ▼ Err ─► 400 / 404 / 405 / 409 / 415 / 500
//!                     {"error_code": N, "message": "..."}
//! ```
//!
//! The worker runs exactly one connector with one task (task 0), so a path naming any other
//! connector answers 404 as Connect does for an unknown one. As in Connect, a STOPPED
//! connector has no tasks: its status, info and task list show none. Every request is logged at
//! debug under this module's target, never with its body. `docs/rest.md` lists every endpoint.

mod loggers;
mod plugins;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, RawQuery, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::{Map, Value as JsonValue, json};

use crate::operator::cluster_id::ClusterId;
use crate::operator::control::{
    ConnectorControl, ConnectorState, ConnectorStatus, ControlError, PartitionOffset,
    TransactionsView, WorkerHealth,
};
use crate::operator::loggers::LogLevels;
use crate::operator::metrics;

/// What `GET /` reports, as Connect's `ServerInfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    pub version: String,
    pub commit: String,
    /// The Kafka cluster id, once the worker learnt it; `null` until then.
    pub kafka_cluster_id: ClusterId,
}

impl Default for ServerInfo {
    /// This crate's version; the commit and cluster id are unknown to the library, so the
    /// worker fills them in through [`RestApi::with_info`] when it has them.
    fn default() -> Self {
        ServerInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            commit: "unknown".to_owned(),
            kafka_cluster_id: ClusterId::default(),
        }
    }
}

/// The REST API of one worker: the connector it controls, what `GET /` reports, and, when the
/// process lets them be changed, its log levels (`/admin/loggers`).
pub struct RestApi {
    control: Arc<dyn ConnectorControl>,
    info: ServerInfo,
    loggers: Option<Arc<LogLevels>>,
}

impl std::fmt::Debug for RestApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestApi")
            .field("info", &self.info)
            .field("loggers", &self.loggers)
            .finish_non_exhaustive()
    }
}

impl RestApi {
    /// The API over `control`, with the default [`ServerInfo`] and no `/admin/loggers`.
    pub fn new(control: Arc<dyn ConnectorControl>) -> RestApi {
        RestApi {
            control,
            info: ServerInfo::default(),
            loggers: None,
        }
    }

    /// Reports `info` at `GET /`.
    pub fn with_info(mut self, info: ServerInfo) -> RestApi {
        self.info = info;
        self
    }

    /// Serves `/admin/loggers` over `loggers`.
    pub fn with_loggers(mut self, loggers: Arc<LogLevels>) -> RestApi {
        self.loggers = Some(loggers);
        self
    }

    pub fn router(self) -> Router {
        let has_loggers = self.loggers.is_some();
        let api = Api {
            control: self.control,
            info: Arc::new(self.info),
            loggers: self.loggers,
        };
        let mut router = Router::new()
            .route("/", get(server_info))
            .route("/health", get(health))
            .route("/connectors", get(list_connectors))
            .route("/connectors/", get(list_connectors))
            .route("/connectors/{name}", get(connector_info))
            .route("/connectors/{name}/config", get(connector_config))
            .route("/connectors/{name}/status", get(connector_status))
            .route("/connectors/{name}/tasks", get(task_configs))
            .route("/connectors/{name}/tasks/{task}/status", get(task_status))
            .route(
                "/connectors/{name}/tasks/{task}/restart",
                post(restart_task),
            )
            .route("/connectors/{name}/stop", put(stop))
            .route("/connectors/{name}/pause", put(pause))
            .route("/connectors/{name}/resume", put(resume))
            .route("/connectors/{name}/restart", post(restart))
            .route(
                "/connectors/{name}/offsets",
                get(offsets).patch(alter_offsets).delete(reset_offsets),
            )
            .route("/connector-plugins", get(plugins::list))
            .route("/connector-plugins/", get(plugins::list))
            .route(
                "/connector-plugins/{name}/config/validate",
                put(plugins::validate),
            )
            .route("/metrics", get(metrics_page))
            .route(
                "/oracle-cdc/connectors/{name}/transactions",
                get(open_transactions),
            );
        if has_loggers {
            router = router
                .route("/admin/loggers", get(loggers::list))
                .route("/admin/loggers/", get(loggers::list))
                .route("/admin/loggers/{name}", get(loggers::get).put(loggers::set));
        }
        router
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .layer(middleware::from_fn(log_request))
            .with_state(api)
    }

    /// Serves the API on `listener` until `shutdown` completes; requests in flight finish.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let address = listener.local_addr()?;
        tracing::info!(%address, "REST API listening");
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown)
            .await
    }
}

/// The REST API over `control`, with the default [`ServerInfo`].
pub fn router(control: Arc<dyn ConnectorControl>) -> Router {
    RestApi::new(control).router()
}

/// The REST API over `control`, reporting `info` at `GET /`.
pub fn router_with_info(control: Arc<dyn ConnectorControl>, info: ServerInfo) -> Router {
    RestApi::new(control).with_info(info).router()
}

/// Serves the REST API over `control` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    control: Arc<dyn ConnectorControl>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    RestApi::new(control).serve(listener, shutdown).await
}

/// The handlers' state.
#[derive(Clone)]
struct Api {
    control: Arc<dyn ConnectorControl>,
    info: Arc<ServerInfo>,
    loggers: Option<Arc<LogLevels>>,
}

/// How long `GET /health` waits for the connector's answer before it reports the worker
/// unhealthy: Connect's bound for this endpoint.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(10);

/// Connect's message when a PATCH carries no offsets.
const NO_OFFSETS: &str = "Partitions / offsets need to be provided for an alter offsets request";
const ALTERED: &str = "The offsets for this connector have been altered successfully";
const RESET: &str = "The offsets for this connector have been reset successfully";

// ---------------------------------------------------------------------------------------------
// Errors

/// An error answer in Connect's shape: `{"error_code": <status>, "message": "..."}`.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    fn connector_not_found(name: &str) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, format!("Connector {name} not found"))
    }
}

impl From<ControlError> for ApiError {
    fn from(error: ControlError) -> Self {
        let status = match &error {
            ControlError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ControlError::Conflict(_) => StatusCode::CONFLICT,
            ControlError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, error.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error_code": self.status.as_u16(), "message": self.message});
        (self.status, axum::Json(body)).into_response()
    }
}

/// Logs each request at debug: its method, path and status, never its body (a validated
/// configuration holds passwords).
async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    tracing::debug!(
        %method,
        path,
        status = response.status().as_u16(),
        "REST request"
    );
    response
}

/// Unknown paths, as Jersey answers them inside Connect.
async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "HTTP 404 Not Found")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "HTTP 405 Method Not Allowed",
    )
}

// ---------------------------------------------------------------------------------------------
// Calling the connector

/// Runs `call` on the blocking pool: control calls may wait briefly (reading the offsets topic,
/// handing a command to the worker) and must not hold up the runtime's threads.
async fn blocking<T, F>(api: &Api, call: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&dyn ConnectorControl) -> Result<T, ApiError> + Send + 'static,
{
    let control = Arc::clone(&api.control);
    tokio::task::spawn_blocking(move || call(control.as_ref()))
        .await
        .map_err(|error| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the request did not complete: {error}"),
            )
        })?
}

/// [`blocking`] for a path that names a connector: any name but ours is 404, as Connect
/// answers for a connector it does not know.
async fn on_connector<T, F>(api: &Api, name: String, call: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&dyn ConnectorControl, &str) -> Result<T, ApiError> + Send + 'static,
{
    blocking(api, move |control| {
        if control.name() != name {
            return Err(ApiError::connector_not_found(&name));
        }
        call(control, &name)
    })
    .await
}

/// The path parameters (`{name}`: a connector, plugin or logger; on task paths, `{task}`),
/// with a bad path answered in Connect's error shape rather than axum's plain text.
struct Target {
    name: String,
    task: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for Target {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(mut params) = Path::<BTreeMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| ApiError::new(rejection.status(), rejection.body_text()))?;
        let name = params.remove("name").unwrap_or_default();
        Ok(Target {
            name,
            task: params.remove("task"),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Response bodies

/// The state object of the connector (`id: None`) or of task `id`, as in Connect's status.
fn instance_json(state: ConnectorState, status: &ConnectorStatus, id: Option<u32>) -> JsonValue {
    let mut out = Map::new();
    if let Some(id) = id {
        out.insert("id".to_owned(), json!(id));
    }
    out.insert("state".to_owned(), json!(state.as_str()));
    out.insert("worker_id".to_owned(), json!(status.worker_id));
    // The trace belongs to the failure; an instance being restarted no longer shows it.
    if let Some(trace) = status.trace.as_ref().filter(|_| {
        !matches!(
            state,
            ConnectorState::Restarting | ConnectorState::Unassigned
        )
    }) {
        out.insert("trace".to_owned(), json!(trace));
    }
    JsonValue::Object(out)
}

/// A stopped connector has no tasks in Connect (stopping empties its task configurations).
fn has_task(status: &ConnectorStatus) -> bool {
    status.state != ConnectorState::Stopped
}

/// `GET /connectors/{name}/status`. `shown` overrides the states, for the restart answer.
fn status_json(name: &str, status: &ConnectorStatus, shown: Option<ConnectorState>) -> JsonValue {
    let state = shown.unwrap_or(status.state);
    let tasks: Vec<JsonValue> = if has_task(status) {
        vec![instance_json(state, status, Some(0))]
    } else {
        vec![]
    };
    json!({
        "name": name,
        "connector": instance_json(state, status, None),
        "tasks": tasks,
        "type": "source",
    })
}

/// `GET /connectors/{name}`: Connect's `ConnectorInfo`.
fn info_json(name: &str, config: &BTreeMap<String, String>, status: &ConnectorStatus) -> JsonValue {
    let tasks: Vec<JsonValue> = if has_task(status) {
        vec![json!({"connector": name, "task": 0})]
    } else {
        vec![]
    };
    json!({"name": name, "config": config, "tasks": tasks, "type": "source"})
}

fn offsets_json(offsets: Vec<PartitionOffset>) -> JsonValue {
    // A partition without an offset has none stored; Connect's GET lists only stored ones.
    let entries: Vec<JsonValue> = offsets
        .into_iter()
        .filter_map(|entry| {
            entry
                .offset
                .map(|offset| json!({"partition": entry.partition, "offset": offset}))
        })
        .collect();
    json!({"offsets": entries})
}

fn message(text: &str) -> JsonValue {
    json!({"message": text})
}

fn ok_json(status: StatusCode, body: JsonValue) -> Response {
    (status, axum::Json(body)).into_response()
}

// ---------------------------------------------------------------------------------------------
// Query strings

/// The values of `key` in a query string, in order (Connect reads `expand` as a list, so
/// `?expand=status&expand=info` asks for both).
fn query_values(query: Option<&str>, key: &str) -> Vec<String> {
    query
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k == key).then(|| v.to_owned())
        })
        .collect()
}

/// A boolean query parameter the way JAX-RS reads `Boolean`: `true` in any case is true,
/// anything else (or nothing) false.
fn query_flag(query: Option<&str>, key: &str) -> bool {
    query_values(query, key)
        .first()
        .is_some_and(|value| value.eq_ignore_ascii_case("true"))
}

// ---------------------------------------------------------------------------------------------
// Handlers

/// `GET /`
async fn server_info(State(api): State<Api>) -> Response {
    let info = &api.info;
    ok_json(
        StatusCode::OK,
        json!({
            "version": info.version,
            "commit": info.commit,
            "kafka_cluster_id": info.kafka_cluster_id.get(),
        }),
    )
}

/// `GET /health` (KIP-1017): 200 `healthy` once the connector's task was started, 503
/// `starting` before, 500 `unhealthy` when the connector does not answer within
/// [`HEALTH_TIMEOUT`] or the worker is stopping; Connect's messages.
async fn health(State(api): State<Api>) -> Response {
    let check = blocking(&api, |control| Ok(control.health()));
    let health = match tokio::time::timeout(HEALTH_TIMEOUT, check).await {
        Ok(Ok(health)) => health,
        Ok(Err(_)) | Err(_) => WorkerHealth::Unhealthy,
    };
    let (status, state, message) = match health {
        WorkerHealth::Healthy => (
            StatusCode::OK,
            "healthy",
            "Worker has completed startup and is ready to handle requests",
        ),
        WorkerHealth::Starting => (
            StatusCode::SERVICE_UNAVAILABLE,
            "starting",
            "Worker is still starting up",
        ),
        WorkerHealth::Unhealthy => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "unhealthy",
            "Worker was unable to handle this request and may be unable to handle other requests",
        ),
    };
    ok_json(status, json!({"status": state, "message": message}))
}

/// `GET /connectors`, `GET /connectors?expand=status&expand=info`
async fn list_connectors(
    State(api): State<Api>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let expansions = query_values(query.as_deref(), "expand");
    let expand_asked = !expansions.is_empty();
    let body = blocking(&api, move |control| {
        let name = control.name();
        if !expand_asked {
            return Ok(json!([name]));
        }
        let mut expanded = Map::new();
        for expansion in &expansions {
            match expansion.as_str() {
                "status" => {
                    expanded.insert(
                        "status".to_owned(),
                        status_json(&name, &control.status(), None),
                    );
                }
                "info" => {
                    expanded.insert(
                        "info".to_owned(),
                        info_json(&name, &control.config(), &control.status()),
                    );
                }
                // Connect ignores an expansion it does not know.
                _ => {}
            }
        }
        let mut out = Map::new();
        out.insert(name, JsonValue::Object(expanded));
        Ok(JsonValue::Object(out))
    })
    .await?;
    Ok(ok_json(StatusCode::OK, body))
}

/// `GET /connectors/{name}`
async fn connector_info(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let body = on_connector(&api, target.name, |control, name| {
        Ok(info_json(name, &control.config(), &control.status()))
    })
    .await?;
    Ok(ok_json(StatusCode::OK, body))
}

/// `GET /connectors/{name}/config`
async fn connector_config(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let config = on_connector(&api, target.name, |control, _| Ok(control.config())).await?;
    Ok(ok_json(StatusCode::OK, json!(config)))
}

/// `GET /connectors/{name}/status`
async fn connector_status(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let body = on_connector(&api, target.name, |control, name| {
        Ok(status_json(name, &control.status(), None))
    })
    .await?;
    Ok(ok_json(StatusCode::OK, body))
}

/// `GET /connectors/{name}/tasks`: Connect's `TaskInfo` list; the one task runs with the
/// connector's configuration.
async fn task_configs(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let body = on_connector(&api, target.name, |control, name| {
        if !has_task(&control.status()) {
            return Ok(json!([]));
        }
        Ok(json!([{"id": {"connector": name, "task": 0}, "config": control.config()}]))
    })
    .await?;
    Ok(ok_json(StatusCode::OK, body))
}

/// Whether `task` names the one task of a connector in `status` (Connect answers 404 for a
/// task id it does not have, including one that is not a number).
fn is_our_task(task: Option<&str>, status: &ConnectorStatus) -> bool {
    task.and_then(|task| task.parse::<u32>().ok()) == Some(0) && has_task(status)
}

/// `GET /connectors/{name}/tasks/{task}/status`
async fn task_status(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let task = target.task;
    let body = on_connector(&api, target.name, move |control, name| {
        let status = control.status();
        if !is_our_task(task.as_deref(), &status) {
            let task = task.unwrap_or_default();
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("No status found for task {name}-{task}"),
            ));
        }
        Ok(instance_json(status.state, &status, Some(0)))
    })
    .await?;
    Ok(ok_json(StatusCode::OK, body))
}

/// `POST /connectors/{name}/tasks/{task}/restart` → 204
async fn restart_task(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let task = target.task;
    on_connector(&api, target.name, move |control, name| {
        if !is_our_task(task.as_deref(), &control.status()) {
            let task = task.unwrap_or_default();
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("Task {name}-{task} not found"),
            ));
        }
        tracing::info!(connector = name, "REST: restart task 0");
        control.restart().map_err(ApiError::from)
    })
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `PUT /connectors/{name}/stop` → 204
async fn stop(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    on_connector(&api, target.name, |control, name| {
        tracing::info!(connector = name, "REST: stop");
        control.stop().map_err(ApiError::from)
    })
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `PUT /connectors/{name}/pause` → 202
async fn pause(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    on_connector(&api, target.name, |control, name| {
        tracing::info!(connector = name, "REST: pause");
        control.pause().map_err(ApiError::from)
    })
    .await?;
    Ok(StatusCode::ACCEPTED.into_response())
}

/// `PUT /connectors/{name}/resume` → 202
async fn resume(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    on_connector(&api, target.name, |control, name| {
        tracing::info!(connector = name, "REST: resume");
        control.resume().map_err(ApiError::from)
    })
    .await?;
    Ok(StatusCode::ACCEPTED.into_response())
}

/// Whether a restart request restarts anything, by Connect's rule (KIP-745): the connector
/// unless `onlyFailed` and it has not failed; the task only with `includeTasks`, and with
/// `onlyFailed` only if it has failed. Here the connector and its one task share a state, and
/// restarting either restarts the task, which is all this worker runs.
///
/// A STOPPED connector is left alone: Connect restarts it into its STOPPED target state, so
/// nothing runs, and an operator who is editing its offsets must not have capture start under
/// them (`ConnectorControl::restart` would start the task).
fn restarts(status: &ConnectorStatus, include_tasks: bool, only_failed: bool) -> bool {
    if status.state == ConnectorState::Stopped {
        return false;
    }
    let failed = status.state == ConnectorState::Failed;
    let connector = !only_failed || failed;
    let task = include_tasks && (!only_failed || failed);
    connector || task
}

/// `POST /connectors/{name}/restart[?includeTasks=&onlyFailed=]`: 204 without either flag (as
/// Connect answers the plain form); otherwise 202 with the status, showing `RESTARTING` where
/// a restart was started.
async fn restart(
    State(api): State<Api>,
    target: Target,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let include_tasks = query_flag(query.as_deref(), "includeTasks");
    let only_failed = query_flag(query.as_deref(), "onlyFailed");
    let body = on_connector(&api, target.name, move |control, name| {
        let status = control.status();
        let restarting = restarts(&status, include_tasks, only_failed);
        if restarting {
            tracing::info!(
                connector = name,
                include_tasks,
                only_failed,
                "REST: restart"
            );
            control.restart()?;
        }
        Ok(status_json(
            name,
            &status,
            restarting.then_some(ConnectorState::Restarting),
        ))
    })
    .await?;
    if !include_tasks && !only_failed {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Ok(ok_json(StatusCode::ACCEPTED, body))
}

/// `GET /connectors/{name}/offsets`
async fn offsets(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let offsets = on_connector(&api, target.name, |control, _| {
        control.offsets().map_err(ApiError::from)
    })
    .await?;
    Ok(ok_json(StatusCode::OK, offsets_json(offsets)))
}

/// `PATCH /connectors/{name}/offsets` with `{"offsets": [{"partition": {…}, "offset": {…}}]}`
/// → 200. Only while STOPPED; the connector checks that, and what the offset holds.
async fn alter_offsets(
    State(api): State<Api>,
    target: Target,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    require_json(&headers)?;
    let offsets = parse_offsets(&body)?;
    on_connector(&api, target.name, move |control, name| {
        tracing::info!(
            connector = name,
            partitions = offsets.len(),
            "REST: alter offsets"
        );
        control.alter_offsets(offsets).map_err(ApiError::from)
    })
    .await?;
    Ok(ok_json(StatusCode::OK, message(ALTERED)))
}

/// `DELETE /connectors/{name}/offsets` → 200. Only while STOPPED.
async fn reset_offsets(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    on_connector(&api, target.name, |control, name| {
        tracing::info!(connector = name, "REST: reset offsets");
        control.reset_offsets().map_err(ApiError::from)
    })
    .await?;
    Ok(ok_json(StatusCode::OK, message(RESET)))
}

/// `GET /metrics`
async fn metrics_page(State(api): State<Api>) -> Result<Response, ApiError> {
    let snapshot = blocking(&api, |control| Ok(control.metrics())).await?;
    let text = metrics::render(&snapshot);
    Ok(([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text).into_response())
}

/// `GET /oracle-cdc/connectors/{name}/transactions` (ours, outside Connect's paths): the open
/// transactions, always 200; not running (nor paused), the list is empty and `task_state`
/// says why.
async fn open_transactions(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let (name, view) = on_connector(&api, target.name, |control, name| {
        Ok((name.to_owned(), control.transactions()))
    })
    .await?;
    Ok(ok_json(StatusCode::OK, transactions_json(&name, &view)))
}

/// The body of the transactions resource. SCNs are strings, as elsewhere in the API.
fn transactions_json(name: &str, view: &TransactionsView) -> JsonValue {
    let Some(v) = &view.view else {
        return json!({
            "connector": name,
            "task_state": view.state.as_str(),
            "taken_at_ms": null,
            "mined_to_scn": null,
            "open_transactions": 0,
            "buffered_events": 0,
            "transactions": [],
            "truncated": false,
        });
    };
    let transactions: Vec<JsonValue> = v
        .transactions
        .iter()
        .map(|t| {
            json!({
                "xid": t.key.xid.to_string(),
                "con_id": t.key.con.0,
                "container": t.container,
                "user": t.user,
                "first_scn": t.first_scn.to_string(),
                "first_change_ms": t.first_change_ms,
                "age_ms": t.first_change_ms.map(|ms| v.taken_at_ms.saturating_sub(ms)),
                "events": t.events,
                "bytes": t.bytes,
                "spilled": t.spilled,
                "journaled": t.journaled,
            })
        })
        .collect();
    json!({
        "connector": name,
        "task_state": view.state.as_str(),
        "taken_at_ms": v.taken_at_ms,
        "mined_to_scn": v.mined_to_scn.map(|scn| scn.to_string()),
        "open_transactions": v.open_transactions,
        "buffered_events": v.buffered_events,
        "transactions": transactions,
        "truncated": v.truncated,
    })
}

// ---------------------------------------------------------------------------------------------
// Request bodies

/// Connect consumes `application/json` only; a request without a content type is read as
/// JSON too, so a bare `curl --data-binary` works.
fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Ok(());
    };
    let mime = value
        .to_str()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if mime == "application/json" || mime.ends_with("+json") {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "HTTP 415 Unsupported Media Type",
    ))
}

/// Reads Connect's `ConnectorOffsets` body. A missing, `null` or empty list is Connect's 400;
/// an entry's `offset` may be `null` (remove that partition's offset).
fn parse_offsets(body: &[u8]) -> Result<Vec<PartitionOffset>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(NO_OFFSETS));
    }
    let value: JsonValue = serde_json::from_slice(body).map_err(|error| {
        ApiError::bad_request(format!("The request body is not valid JSON: {error}"))
    })?;
    let JsonValue::Object(mut top) = value else {
        return Err(ApiError::bad_request(
            "The request body must be a JSON object: {\"offsets\": [...]}",
        ));
    };
    let entries = match top.remove("offsets") {
        None | Some(JsonValue::Null) => Vec::new(),
        Some(JsonValue::Array(entries)) => entries,
        Some(_) => return Err(ApiError::bad_request("\"offsets\" must be a JSON array")),
    };
    if entries.is_empty() {
        return Err(ApiError::bad_request(NO_OFFSETS));
    }
    entries
        .into_iter()
        .enumerate()
        .map(|(index, entry)| parse_entry(index, entry))
        .collect()
}

fn parse_entry(index: usize, entry: JsonValue) -> Result<PartitionOffset, ApiError> {
    let JsonValue::Object(mut entry) = entry else {
        return Err(ApiError::bad_request(format!(
            "offsets[{index}] must be a JSON object with \"partition\" and \"offset\""
        )));
    };
    let partition = match entry.remove("partition") {
        Some(JsonValue::Object(partition)) => partition,
        None | Some(JsonValue::Null) => {
            return Err(ApiError::bad_request(format!(
                "offsets[{index}].partition is missing"
            )));
        }
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "offsets[{index}].partition must be a JSON object"
            )));
        }
    };
    let offset = match entry.remove("offset") {
        Some(JsonValue::Object(offset)) => Some(offset),
        None | Some(JsonValue::Null) => None,
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "offsets[{index}].offset must be a JSON object or null"
            )));
        }
    };
    Ok(PartitionOffset { partition, offset })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(state: ConnectorState) -> ConnectorStatus {
        ConnectorStatus {
            state,
            worker_id: "127.0.0.1:8083".to_owned(),
            trace: None,
        }
    }

    #[test]
    fn restart_follows_connects_flags() {
        let running = status(ConnectorState::Running);
        let failed = status(ConnectorState::Failed);
        let stopped = status(ConnectorState::Stopped);
        // (include_tasks, only_failed) → restarts a running / a failed connector
        let table = [
            ((false, false), true, true),
            ((true, false), true, true),
            ((false, true), false, true),
            ((true, true), false, true),
        ];
        for ((include_tasks, only_failed), on_running, on_failed) in table {
            let flags = format!("{include_tasks} {only_failed}");
            assert_eq!(
                restarts(&running, include_tasks, only_failed),
                on_running,
                "{flags}"
            );
            assert_eq!(
                restarts(&failed, include_tasks, only_failed),
                on_failed,
                "{flags}"
            );
            assert!(!restarts(&stopped, include_tasks, only_failed), "{flags}");
        }
    }

    #[test]
    fn query_flags_read_like_jax_rs_booleans() {
        assert!(query_flag(Some("includeTasks=true"), "includeTasks"));
        assert!(query_flag(
            Some("onlyFailed=TRUE&includeTasks=false"),
            "onlyFailed"
        ));
        assert!(!query_flag(Some("includeTasks=yes"), "includeTasks"));
        assert!(!query_flag(Some("includeTasks"), "includeTasks"));
        assert!(!query_flag(None, "includeTasks"));
        assert_eq!(
            query_values(Some("expand=status&expand=info&x=1"), "expand"),
            ["status", "info"]
        );
    }

    #[test]
    fn offsets_body_is_read_and_checked() {
        let offsets = parse_offsets(
            br#"{"offsets": [{"partition": {"server": "cdc"}, "offset": {"v": 1}}]}"#,
        )
        .unwrap();
        assert_eq!(offsets.len(), 1);
        assert_eq!(offsets[0].partition.get("server"), Some(&json!("cdc")));
        assert_eq!(
            offsets[0].offset.as_ref().and_then(|o| o.get("v")),
            Some(&json!(1))
        );

        let removed =
            parse_offsets(br#"{"offsets": [{"partition": {"server": "cdc"}, "offset": null}]}"#)
                .unwrap();
        assert_eq!(removed[0].offset, None);

        for (body, wanted) in [
            (&b""[..], NO_OFFSETS),
            (br#"{}"#, NO_OFFSETS),
            (br#"{"offsets": []}"#, NO_OFFSETS),
            (br#"{"offsets": {}}"#, "must be a JSON array"),
            (br#"{"offsets": [1]}"#, "offsets[0] must be a JSON object"),
            (
                br#"{"offsets": [{"offset": {}}]}"#,
                "offsets[0].partition is missing",
            ),
            (
                br#"{"offsets": [{"partition": "cdc"}]}"#,
                "offsets[0].partition must be a JSON object",
            ),
            (
                br#"{"offsets": [{"partition": {}, "offset": 5}]}"#,
                "offsets[0].offset must be",
            ),
            (br#"{"offsets": [}"#, "not valid JSON"),
            (br#"[]"#, "must be a JSON object"),
        ] {
            let error = parse_offsets(body).unwrap_err();
            assert_eq!(error.status, StatusCode::BAD_REQUEST);
            assert!(
                error.message.contains(wanted),
                "{}: {}",
                String::from_utf8_lossy(body),
                error.message
            );
        }
    }

    #[test]
    fn control_errors_map_to_connects_codes() {
        let cases = [
            (
                ControlError::BadRequest("b".into()),
                StatusCode::BAD_REQUEST,
            ),
            (ControlError::Conflict("c".into()), StatusCode::CONFLICT),
            (
                ControlError::Internal("i".into()),
                StatusCode::INTERNAL_SERVER_ERROR,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(ApiError::from(error).status, code);
        }
    }

    #[test]
    fn a_stopped_connector_shows_no_tasks() {
        let body = status_json("c", &status(ConnectorState::Stopped), None);
        assert_eq!(body["connector"]["state"], "STOPPED");
        assert_eq!(body["tasks"], json!([]));
        let failed = ConnectorStatus {
            trace: Some("[CDC-2002] gone".into()),
            ..status(ConnectorState::Failed)
        };
        let body = status_json("c", &failed, None);
        assert_eq!(body["tasks"][0]["trace"], "[CDC-2002] gone");
        let body = status_json("c", &failed, Some(ConnectorState::Restarting));
        assert_eq!(body["tasks"][0]["state"], "RESTARTING");
        assert!(body["tasks"][0].get("trace").is_none());
    }
}
