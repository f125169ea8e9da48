//! `/admin/loggers`: Kafka Connect's log-level endpoints (KIP-495, KIP-976) over the process's
//! [`LogLevels`]. Served only when the process hands its log levels to the API (the
//! `oracle-cdc` binary does); otherwise these paths are unknown.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value as JsonValue, json};

use super::{Api, ApiError, Target, ok_json, query_values, require_json};
use crate::operator::loggers::{
    LogLevelError, LogLevels, LoggerLevel, connect_level_name, parse_connect_level,
};

const NO_LEVEL: &str = "Desired 'level' parameter was not specified in request.";

fn levels(api: &Api) -> Result<Arc<LogLevels>, ApiError> {
    api.loggers
        .clone()
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "HTTP 404 Not Found"))
}

fn level_json(level: &LoggerLevel) -> JsonValue {
    json!({"level": level.name(), "last_modified": level.last_modified})
}

/// `GET /admin/loggers`: `{"<logger>": {"level", "last_modified"}}`.
pub(super) async fn list(State(api): State<Api>) -> Result<Response, ApiError> {
    let all: BTreeMap<String, LoggerLevel> = levels(&api)?.all();
    let body: Map<String, JsonValue> = all
        .iter()
        .map(|(logger, level)| (logger.clone(), level_json(level)))
        .collect();
    Ok(ok_json(StatusCode::OK, JsonValue::Object(body)))
}

/// `GET /admin/loggers/{logger}`: `{"level", "last_modified"}`, or Connect's 404.
pub(super) async fn get(State(api): State<Api>, target: Target) -> Result<Response, ApiError> {
    let logger = target.name;
    match levels(&api)?.level(&logger) {
        Some(level) => Ok(ok_json(StatusCode::OK, level_json(&level))),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("Logger {logger} not found."),
        )),
    }
}

/// `PUT /admin/loggers/{logger}[?scope=worker|cluster]` with `{"level": "DEBUG"}`: sets the
/// logger and every logger under it. 200 with the loggers whose level changed; with
/// `scope=cluster`, 204 as Connect answers (this worker is the whole cluster). Connect's
/// answers to a bad level: 400 when none is given, 404 for a name log4j does not know.
pub(super) async fn set(
    State(api): State<Api>,
    target: Target,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    require_json(&headers)?;
    let levels = levels(&api)?;
    let logger = target.name;
    let text = level_text(&body)?;
    let Some(level) = parse_connect_level(&text) else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("invalid log level '{text}'."),
        ));
    };
    let cluster = query_values(query.as_deref(), "scope")
        .first()
        .is_some_and(|scope| scope.eq_ignore_ascii_case("cluster"));
    let affected = levels.set_level(&logger, level).map_err(|error| {
        let status = match error {
            LogLevelError::BadName(_) => StatusCode::BAD_REQUEST,
            LogLevelError::Apply(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, error.to_string())
    })?;
    tracing::info!(
        logger,
        level = connect_level_name(level),
        changed = affected.len(),
        "REST: log level set for the logger and those under it"
    );
    if cluster {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Ok(ok_json(StatusCode::OK, json!(affected)))
}

/// The `level` of a `{"level": "…"}` body. A number or boolean is read as its text, as
/// Connect reads the body as a map of strings.
fn level_text(body: &[u8]) -> Result<String, ApiError> {
    let value: JsonValue = serde_json::from_slice(body).map_err(|error| {
        ApiError::bad_request(format!("The request body is not valid JSON: {error}"))
    })?;
    let JsonValue::Object(mut fields) = value else {
        return Err(ApiError::bad_request(
            "The request body must be a JSON object: {\"level\": \"DEBUG\"}",
        ));
    };
    match fields.remove("level") {
        None | Some(JsonValue::Null) => Err(ApiError::bad_request(NO_LEVEL)),
        Some(JsonValue::String(text)) => Ok(text),
        Some(scalar @ (JsonValue::Bool(_) | JsonValue::Number(_))) => Ok(scalar.to_string()),
        Some(_) => Err(ApiError::bad_request("\"level\" must be a string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_is_read_from_the_body() {
        assert_eq!(
            level_text(br#"{"level": "DEBUG"}"#).ok().as_deref(),
            Some("DEBUG")
        );
        assert_eq!(level_text(br#"{"level": 5}"#).ok().as_deref(), Some("5"));
        for (body, wanted) in [
            (&br#"{}"#[..], NO_LEVEL),
            (br#"{"level": null}"#, NO_LEVEL),
            (br#"{"level": ["DEBUG"]}"#, "must be a string"),
            (br#"["DEBUG"]"#, "must be a JSON object"),
            (br#"{"level": "#, "not valid JSON"),
        ] {
            let error = level_text(body).unwrap_err();
            assert_eq!(error.status, StatusCode::BAD_REQUEST);
            assert!(error.message.contains(wanted), "{}", error.message);
        }
    }
}
