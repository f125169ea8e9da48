//! The running connector's REST API: Kafka Connect's paths for status, stop, resume and
//! offsets, and oracle-cdc's own read-only resources under `/oracle-cdc/`.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::AdminError;

/// The default `--connect`.
pub const DEFAULT_CONNECT: &str = "http://127.0.0.1:8083";

/// A client of one worker's REST API.
#[derive(Debug, Clone)]
pub struct ConnectClient {
    base: String,
    agent: ureq::Agent,
}

/// A connector's state and its task's, as `GET /connectors/{name}/status` gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub connector: String,
    /// `None`: no task (a stopped connector has none).
    pub task: Option<String>,
    /// The failed task's trace, when it failed.
    pub trace: Option<String>,
}

impl ConnectClient {
    pub fn new(base: &str, timeout: Duration) -> ConnectClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build()
            .into();
        ConnectClient {
            base: base.trim_end_matches('/').to_owned(),
            agent,
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// The connector to act on: `name`, or the worker's only connector.
    pub fn resolve(&self, name: Option<&str>) -> Result<String, AdminError> {
        if let Some(name) = name {
            return Ok(name.to_owned());
        }
        let list = self.get("/connectors")?;
        let names: Vec<String> = list
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        match names.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(AdminError::Refused(format!(
                "the worker at {} runs no connector",
                self.base
            ))),
            many => Err(AdminError::Usage(format!(
                "the worker at {} runs {} connectors ({}): name one with --name",
                self.base,
                many.len(),
                many.join(", ")
            ))),
        }
    }

    pub fn status(&self, name: &str) -> Result<Status, AdminError> {
        let body = self.get(&format!("/connectors/{}/status", segment(name)))?;
        let text = |v: &Value| v.as_str().map(str::to_owned);
        let task = body
            .get("tasks")
            .and_then(Value::as_array)
            .and_then(|tasks| tasks.first());
        Ok(Status {
            connector: body
                .pointer("/connector/state")
                .and_then(text)
                .unwrap_or_else(|| "UNKNOWN".to_owned()),
            task: task.and_then(|t| t.get("state")).and_then(text),
            trace: task.and_then(|t| t.get("trace")).and_then(text),
        })
    }

    /// The connector's configuration as the worker shows it.
    pub fn config(&self, name: &str) -> Result<Value, AdminError> {
        self.get(&format!("/connectors/{}/config", segment(name)))
    }

    /// `PUT /connectors/{name}/stop`, then waits until the connector is STOPPED.
    pub fn stop(&self, name: &str, timeout: Duration) -> Result<(), AdminError> {
        self.send("PUT", &format!("/connectors/{}/stop", segment(name)), None)?;
        self.wait_for_state(name, "STOPPED", timeout)
    }

    /// `PUT /connectors/{name}/resume`.
    pub fn resume(&self, name: &str) -> Result<(), AdminError> {
        self.send(
            "PUT",
            &format!("/connectors/{}/resume", segment(name)),
            None,
        )
        .map(drop)
    }

    /// `GET /connectors/{name}/offsets`: `{"offsets": [{"partition": …, "offset": …}]}`.
    pub fn offsets(&self, name: &str) -> Result<Value, AdminError> {
        self.get(&format!("/connectors/{}/offsets", segment(name)))
    }

    /// `PATCH /connectors/{name}/offsets` with `body`.
    pub fn patch_offsets(&self, name: &str, body: &Value) -> Result<Value, AdminError> {
        self.send(
            "PATCH",
            &format!("/connectors/{}/offsets", segment(name)),
            Some(body),
        )
    }

    /// Waits until the connector's state is `state`.
    pub fn wait_for_state(
        &self,
        name: &str,
        state: &str,
        timeout: Duration,
    ) -> Result<(), AdminError> {
        let started = Instant::now();
        loop {
            let status = self.status(name)?;
            if status.connector == state {
                return Ok(());
            }
            if started.elapsed() >= timeout {
                return Err(AdminError::Failed(format!(
                    "{name} did not become {state} within {} s (it is {})",
                    timeout.as_secs(),
                    status.connector
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A GET answered with 2xx and JSON.
    pub fn get(&self, path: &str) -> Result<Value, AdminError> {
        self.send("GET", path, None)
    }

    fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, AdminError> {
        let url = format!("{}{path}", self.base);
        let failed = |message: String| AdminError::Rest {
            url: url.clone(),
            message,
        };
        let response = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("PUT", None) => self.agent.put(&url).send_empty(),
            ("PATCH", Some(body)) => self
                .agent
                .patch(&url)
                .header("Content-Type", "application/json")
                .send(body.to_string()),
            _ => return Err(failed(format!("no {method} request is made here"))),
        };
        let mut response = response.map_err(|e| failed(e.to_string()))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| failed(format!("reading the answer: {e}")))?;
        let json = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        if (200..300).contains(&status) {
            return Ok(json);
        }
        let message = json
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| json.to_string(), str::to_owned);
        Err(failed(format!("{method} answered {status}: {message}")))
    }
}

/// A connector name as one URL path segment.
pub(crate) fn segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_path_segment() {
        assert_eq!(segment("orders-cdc"), "orders-cdc");
        assert_eq!(segment("a b/c"), "a%20b%2Fc");
    }
}
