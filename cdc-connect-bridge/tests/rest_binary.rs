//! The REST API of the `oracle-cdc` binary over the simulator and the test broker, as Connect's
//! tooling uses it: the cluster id learnt from the broker, health, the connector with its class,
//! its task, the plugins and their validation, the log levels changed while it runs (seen in its
//! JSON log), and the error body of an unknown path.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use cdc_core::config::CONNECTOR_CLASS;
use serde_json::{Value, json};

use crate::e2e_support::{Running, Setup, broker, http, wait_for};

/// The target the REST API logs each request under, at debug.
const REST_TARGET: &str = "cdc_connect_bridge::operator::rest";

fn get_json(url: &str) -> (u16, Value) {
    let (status, body) = http("GET", url, None);
    let value = serde_json::from_str(&body).unwrap_or(Value::Null);
    (status, value)
}

/// The JSON log records of `target` at `level` the binary wrote so far.
fn log_records(running: &Running, level: &str, target: &str) -> Vec<Value> {
    running
        .log_text()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["level"] == level && record["target"] == target)
        .collect()
}

#[test]
fn the_binary_answers_connect_tooling_on_its_rest_api() {
    let Some(broker) = broker() else { return };
    let setup = Setup::new("restapi", &broker, 200, false);
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let running = Running::start_with_args(&config_path, &log, &["--log-format", "json"]);
    let rest = setup.rest();
    let name = &setup.name;
    let connector = format!("{rest}/connectors/{name}");

    // ready once the task was started
    assert!(
        wait_for(Duration::from_secs(60), || get_json(&format!(
            "{rest}/health"
        ))
        .0 == 200),
        "never healthy; log:\n{}",
        running.log_text()
    );
    let (_, health) = get_json(&format!("{rest}/health"));
    assert_eq!(health["status"], "healthy", "{health}");

    // the cluster id, learnt in the background from the broker
    let mut root = Value::Null;
    assert!(
        wait_for(Duration::from_secs(30), || {
            root = get_json(&format!("{rest}/")).1;
            root["kafka_cluster_id"]
                .as_str()
                .is_some_and(|id| !id.is_empty())
        }),
        "kafka_cluster_id never known: {root}; log:\n{}",
        running.log_text()
    );
    assert_eq!(root["version"], env!("CARGO_PKG_VERSION"));

    // both expansions, with the connector class Connect always shows
    let (status, expanded) = get_json(&format!("{rest}/connectors?expand=status&expand=info"));
    assert_eq!(status, 200, "{expanded}");
    let entry = &expanded[name.as_str()];
    assert_eq!(entry["status"]["name"], name.as_str(), "{expanded}");
    assert_eq!(entry["status"]["type"], "source", "{expanded}");
    assert_eq!(entry["info"]["config"]["connector.class"], CONNECTOR_CLASS);
    assert_eq!(entry["info"]["config"]["cdc.topic.prefix"], name.as_str());

    // the one task
    let (status, tasks) = get_json(&format!("{connector}/tasks"));
    assert_eq!(status, 200, "{tasks}");
    assert_eq!(
        tasks[0]["id"],
        json!({"connector": name, "task": 0}),
        "{tasks}"
    );
    assert_eq!(tasks[0]["config"]["connector.class"], CONNECTOR_CLASS);
    let (status, task) = get_json(&format!("{connector}/tasks/0/status"));
    assert_eq!(status, 200, "{task}");
    assert_eq!(task["id"], 0);
    let (status, missing) = get_json(&format!("{connector}/tasks/3/status"));
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["error_code"], 404, "{missing}");

    // the plugin and a validation of the very configuration it runs, then of a broken one
    let (status, plugins) = get_json(&format!("{rest}/connector-plugins"));
    assert_eq!(status, 200);
    assert_eq!(
        plugins,
        json!([{"class": CONNECTOR_CLASS, "type": "source", "version": env!("CARGO_PKG_VERSION")}])
    );
    let mut config: serde_json::Map<String, Value> = setup
        .pairs
        .iter()
        .map(|(key, value)| (key.clone(), json!(value)))
        .collect();
    config.insert("connector.class".into(), json!(CONNECTOR_CLASS));
    let validate = format!("{rest}/connector-plugins/OracleCdcSourceConnector/config/validate");
    let (status, body) = http(
        "PUT",
        &validate,
        Some(&Value::Object(config.clone()).to_string()),
    );
    assert_eq!(status, 200, "{body}");
    let infos: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(infos["error_count"], 0, "{infos}");
    config.insert("cdc.capture.mode".into(), json!("archive"));
    let (status, body) = http("PUT", &validate, Some(&Value::Object(config).to_string()));
    assert_eq!(status, 200, "{body}");
    let infos: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(infos["error_count"], 1, "{infos}");
    let mode = infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|config| config["value"]["name"] == "cdc.capture.mode")
        .unwrap();
    assert!(
        mode["value"]["errors"][0]
            .as_str()
            .is_some_and(|error| error.contains("cdc.capture.mode")),
        "{mode}"
    );

    // a log level changed while running: requests are logged at debug only after the PUT
    let (_, loggers) = get_json(&format!("{rest}/admin/loggers"));
    assert_eq!(loggers["root"]["level"], "INFO", "{loggers}");
    assert_eq!(http("GET", &format!("{rest}/connectors"), None).0, 200);
    assert!(
        log_records(&running, "DEBUG", REST_TARGET).is_empty(),
        "a debug record before the level was set; log:\n{}",
        running.log_text()
    );
    let (status, body) = http(
        "PUT",
        &format!("{rest}/admin/loggers/{REST_TARGET}"),
        Some(r#"{"level": "DEBUG"}"#),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!([REST_TARGET])
    );
    assert_eq!(http("GET", &format!("{rest}/connectors"), None).0, 200);
    let logged = wait_for(Duration::from_secs(5), || {
        log_records(&running, "DEBUG", REST_TARGET)
            .iter()
            .any(|record| record["fields"]["path"] == "/connectors")
    });
    assert!(
        logged,
        "no debug record of the request after the PUT; log:\n{}",
        running.log_text()
    );
    let (_, level) = get_json(&format!("{rest}/admin/loggers/{REST_TARGET}"));
    assert_eq!(level["level"], "DEBUG", "{level}");

    // an unknown path, in Connect's error shape
    let (status, unknown) = get_json(&format!("{rest}/no/such/path"));
    assert_eq!(status, 404);
    assert_eq!(
        unknown,
        json!({"error_code": 404, "message": "HTTP 404 Not Found"})
    );

    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success(), "{status:?}; log:\n{}", {
        std::fs::read_to_string(&log).unwrap_or_default()
    });
}
