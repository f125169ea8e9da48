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

/// The open transactions of a simulated database whose scenario leaves four transactions open
/// (3, 2, 2 and 1 changes, begun in that order) and commits one (`cdc-logminer/scenarios`).
const HELD_OPEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../cdc-logminer/scenarios/transactions_held_open.json"
);

#[test]
fn open_transactions_are_served_largest_first() {
    let Some(broker) = broker() else { return };
    let mut setup = Setup::new("resttxns", &broker, 0, false);
    setup.set("cdc.sim.scenario", HELD_OPEN);
    let initial = cdc_logminer::source::configured::sim_initial_scn(&setup.config()).unwrap();
    setup.set("cdc.start.scn", &initial.0.to_string());
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let running = Running::start(&config_path, &log);
    let rest = setup.rest();
    let name = &setup.name;
    let url = format!("{rest}/oracle-cdc/connectors/{name}/transactions");

    let mut body = Value::Null;
    assert!(
        wait_for(Duration::from_secs(60), || {
            let (status, value) = get_json(&url);
            body = value;
            status == 200 && body["open_transactions"] == 4
        }),
        "{body}; log:\n{}",
        running.log_text()
    );
    assert_eq!(body["connector"], name.as_str());
    assert_eq!(body["task_state"], "RUNNING");
    assert_eq!(body["buffered_events"], 8);
    assert_eq!(body["truncated"], false);
    assert!(
        body["mined_to_scn"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .is_ok()
    );
    let list = body["transactions"].as_array().unwrap();
    let users: Vec<&str> = list.iter().map(|t| t["user"].as_str().unwrap()).collect();
    // by events, then the older first (B began before C)
    assert_eq!(users, ["ALICE", "BOB", "CAROL", "DAVE"], "{body}");
    let events: Vec<u64> = list.iter().map(|t| t["events"].as_u64().unwrap()).collect();
    assert_eq!(events, [3, 2, 2, 1]);
    let first_scn = |t: &Value| t["first_scn"].as_str().unwrap().parse::<u64>().unwrap();
    assert!(first_scn(&list[0]) < first_scn(&list[1]));
    assert!(first_scn(&list[1]) < first_scn(&list[2]));
    let mut xids = std::collections::BTreeSet::new();
    for t in list {
        let xid = t["xid"].as_str().unwrap();
        let parts: Vec<&str> = xid.split('.').collect();
        assert!(
            parts.len() == 3 && parts.iter().all(|p| p.parse::<u32>().is_ok()),
            "{xid}"
        );
        assert!(xids.insert(xid.to_owned()), "{xid} twice");
        assert!(t["con_id"].is_u64(), "{t}");
        assert!(t["bytes"].as_u64().unwrap() > 0, "{t}");
        assert_eq!(t["spilled"], false);
        assert_eq!(t["journaled"], false);
        let first = t["first_change_ms"].as_u64().unwrap();
        assert!(first <= body["taken_at_ms"].as_u64().unwrap());
        assert_eq!(
            t["age_ms"].as_u64().unwrap(),
            body["taken_at_ms"].as_u64().unwrap() - first
        );
    }
    // the same as /metrics counts
    let (_, page) = http("GET", &format!("{rest}/metrics"), None);
    assert!(
        page.lines()
            .any(|l| l.starts_with("oracle_cdc_open_transactions{") && l.ends_with(" 4")),
        "{page}"
    );

    // another connector's name is Connect's 404
    let (status, missing) = get_json(&format!("{rest}/oracle-cdc/connectors/other/transactions"));
    assert_eq!(status, 404);
    assert_eq!(missing["error_code"], 404);
    assert_eq!(missing["message"], "Connector other not found");

    // stopped, the task holds nothing: an empty list and the state
    let (code, _) = http("PUT", &format!("{rest}/connectors/{name}/stop"), None);
    assert!(code == 202 || code == 204, "{code}");
    let mut stopped = Value::Null;
    assert!(
        wait_for(Duration::from_secs(60), || {
            stopped = get_json(&url).1;
            stopped["task_state"] == "STOPPED"
        }),
        "{stopped}"
    );
    assert_eq!(stopped["open_transactions"], 0);
    assert_eq!(stopped["transactions"], json!([]));
    assert_eq!(stopped["truncated"], false);
    running.terminate(Duration::from_secs(30));
}
