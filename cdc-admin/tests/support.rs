//! A connector on the simulator and the test broker for the admin tool's tests: it runs in
//! this process (the `oracle-cdc` binary's own parts: the supervisor and the REST API); the
//! tool runs as the real binary.

use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cdc_connect_bridge::operator::connector::Connector;
use cdc_connect_bridge::operator::control::ConnectorControl;
use cdc_connect_bridge::operator::rest::RestApi;
use cdc_core::config::{CdcConfig, Config};
use cdc_logminer::source::configured::{sim_expected, sim_initial_scn};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;

pub fn broker() -> Option<String> {
    match std::env::var("CDC_TEST_BROKER") {
        Ok(broker) if !broker.is_empty() => Some(broker),
        _ if std::env::var_os("CI").is_some() => {
            panic!("CDC_TEST_BROKER is not set: CI must start the test broker")
        }
        _ => {
            eprintln!("skipped: CDC_TEST_BROKER is not set (eval \"$(scripts/tansu.sh start)\")");
            None
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A connector over the simulator, its workload running while it is mined.
pub struct Running {
    pub name: String,
    pub broker: String,
    pub config: CdcConfig,
    pub config_file: std::path::PathBuf,
    pub rest: String,
    pub connector: Arc<Connector>,
    pub runtime: tokio::runtime::Runtime,
    pub supervisor: Option<std::thread::JoinHandle<()>>,
    pub _dir: tempfile::TempDir,
}

impl Running {
    pub fn start(test: &str, broker: &str) -> Running {
        Running::start_with(test, broker, &[])
    }

    /// [`Running::start`] with these settings over the defaults (a scenario file, journal
    /// thresholds…).
    pub fn start_with(test: &str, broker: &str, extra: &[(&str, &str)]) -> Running {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() % 100_000_000);
        let name = format!("{test}{}x{nanos}", std::process::id());
        let port = free_port();
        let dir = tempfile::tempdir().expect("a temp dir");
        let mut pairs: Vec<(String, String)> = [
            ("name", name.as_str()),
            ("cdc.source", "sim"),
            ("cdc.sim.seed", "7"),
            ("cdc.sim.changes", "300"),
            ("bootstrap.servers", broker),
            ("cdc.topic.prefix", name.as_str()),
            ("cdc.tables.include", r"APP\..*"),
            ("cdc.tables.exclude", r"APP\.DOCS"),
            ("cdc.key.missing", "rowid"),
            ("exactly.once.support", "requested"),
            ("transaction.boundary", "poll"),
            ("cdc.heartbeat.interval.ms", "1000"),
            ("cdc.snapshot.mode", "none"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        pairs.push(("offset.storage.topic".into(), format!("{name}-offsets")));
        for (key, value) in extra {
            pairs.retain(|(k, _)| k != key);
            pairs.push(((*key).to_owned(), (*value).to_owned()));
        }
        pairs.push(("cdc.rest.listen".into(), format!("127.0.0.1:{port}")));
        pairs.push((
            "cdc.buffer.spill.dir".into(),
            dir.path().join("spill").display().to_string(),
        ));
        if !pairs.iter().any(|(k, _)| k == "cdc.start.scn") {
            // the whole history
            let config = Config::from_pairs(pairs.clone()).validate().expect("valid");
            let start = sim_initial_scn(&config).expect("the first SCN");
            pairs.push(("cdc.start.scn".into(), start.0.to_string()));
        }
        let given = Config::from_pairs(pairs.clone());
        let config = given.validate_for_delivery().expect("valid");
        let text: String = pairs.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        let config_file = dir.path().join("connector.properties");
        std::fs::write(&config_file, text.replace('\\', "\\\\")).expect("written");

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(("127.0.0.1", port)))
            .expect("listening");
        let connector = Arc::new(Connector::new(
            config.clone(),
            &given,
            format!("127.0.0.1:{port}"),
        ));
        let control: Arc<dyn ConnectorControl> = Arc::clone(&connector) as _;
        runtime.spawn(RestApi::new(control).serve(listener, std::future::pending::<()>()));
        let supervisor = {
            let connector = Arc::clone(&connector);
            std::thread::spawn(move || {
                let _ = connector.supervise(false);
            })
        };
        Running {
            name,
            broker: broker.to_owned(),
            config,
            config_file,
            rest: format!("http://127.0.0.1:{port}"),
            connector,
            runtime,
            supervisor: Some(supervisor),
            _dir: dir,
        }
    }

    /// `oracle-cdc-admin <args> --connect … --config …`: (exit status, stdout, stderr).
    pub fn admin(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        let output = Command::new(env!("CARGO_BIN_EXE_oracle-cdc-admin"))
            .args(args)
            .arg("--connect")
            .arg(&self.rest)
            .arg("--config")
            .arg(&self.config_file)
            .envs(env.iter().copied())
            .output()
            .expect("the admin tool runs");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    pub fn http(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        let url = format!("{}{path}", self.rest);
        let response = match (method, body) {
            ("GET", _) => agent.get(&url).call(),
            ("PUT", _) => agent.put(&url).send_empty(),
            (_, Some(body)) => agent
                .patch(&url)
                .header("Content-Type", "application/json")
                .send(body),
            other => panic!("no request {other:?}"),
        };
        let mut response = response.expect("the REST API answers");
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub fn state(&self) -> String {
        let (_, body) = self.http("GET", &format!("/connectors/{}/status", self.name), None);
        body["connector"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The failed task's trace (the stop's CDC message), empty when it did not fail.
    pub fn trace(&self) -> String {
        let (_, body) = self.http("GET", &format!("/connectors/{}/status", self.name), None);
        let task = &body["tasks"][0]["trace"];
        let connector = &body["connector"]["trace"];
        task.as_str()
            .or_else(|| connector.as_str())
            .unwrap_or_default()
            .to_owned()
    }

    /// The stored offset as the REST API shows it (`null` when there is none).
    pub fn stored_offset(&self) -> Value {
        let (_, body) = self.http("GET", &format!("/connectors/{}/offsets", self.name), None);
        body["offsets"][0]["offset"].clone()
    }

    /// `PUT …/stop`, and waits until the connector is STOPPED.
    pub fn stop(&self) {
        let (status, _) = self.http("PUT", &format!("/connectors/{}/stop", self.name), None);
        assert!(status < 300, "stop answered {status}");
        assert!(
            wait_until(Duration::from_secs(60), || self.state() == "STOPPED"),
            "the connector did not stop"
        );
    }

    /// `PUT …/resume`.
    pub fn resume(&self) {
        let (status, _) = self.http("PUT", &format!("/connectors/{}/resume", self.name), None);
        assert!(status < 300, "resume answered {status}");
    }

    /// Stops the connector, edits its stored offset with `edit` and PATCHes it back, as the
    /// runbook's procedure does by hand; the connector is left STOPPED.
    pub fn patch_offset(&self, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) {
        self.stop();
        let (_, mut body) = self.http("GET", &format!("/connectors/{}/offsets", self.name), None);
        let offset = body["offsets"][0]["offset"]
            .as_object_mut()
            .expect("a stored offset");
        edit(offset);
        let (status, answer) = self.http(
            "PATCH",
            &format!("/connectors/{}/offsets", self.name),
            Some(&body.to_string()),
        );
        assert!(status < 300, "PATCH {status}: {answer}");
    }

    /// Writes `value` as the connector's stored offset straight to its offsets topic, under
    /// the key the connector writes it with: what a newer connector version, or a hand edit
    /// past the REST API (which refuses an offset that does not read), leaves behind.
    pub fn write_raw_offset(&self, value: &Value) {
        use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
        let producer: ThreadedProducer<DefaultProducerContext> =
            cdc_journal::kafka::client_config(&self.broker, &[])
                .set("acks", "all")
                .create()
                .expect("a producer");
        let key = cdc_offset::codec::offsets_topic_key(&self.name, &self.config.topics.prefix);
        let value = value.to_string();
        producer
            .send(
                BaseRecord::to(&self.config.connect.offset_storage_topic)
                    .key(&key)
                    .payload(&value),
            )
            .map_err(|(e, _)| e)
            .expect("sent");
        producer
            .flush(Duration::from_secs(30))
            .expect("acknowledged");
        assert_eq!(producer.in_flight_count(), 0);
    }

    pub fn resume_scn(&self) -> u64 {
        self.stored_resume_scn().expect("a stored resume_scn")
    }

    pub fn stored_last_commit_scn(&self) -> u64 {
        let (_, body) = self.http("GET", &format!("/connectors/{}/offsets", self.name), None);
        body["offsets"][0]["offset"]["last_commit_scn"]
            .as_u64()
            .unwrap_or(0)
    }

    pub fn stored_resume_scn(&self) -> Option<u64> {
        let (_, body) = self.http("GET", &format!("/connectors/{}/offsets", self.name), None);
        body["offsets"][0]["offset"]["resume_scn"].as_u64()
    }

    pub fn consumer(&self) -> BaseConsumer {
        cdc_journal::kafka::client_config(&self.broker, &[])
            .set("group.id", "cdc-admin-tests")
            // the high watermarks: Tansu's last stable offset lags them for records of an
            // idempotent producer
            .set("isolation.level", "read_uncommitted")
            .set("enable.auto.commit", "false")
            .create()
            .expect("a consumer")
    }

    /// The sum of the high watermarks of the table topics: those of the tables the
    /// simulator's workload changes (a listing of every topic may leave one out on Tansu).
    pub fn table_records(&self) -> i64 {
        let consumer = self.consumer();
        let truth = sim_expected(&self.config).expect("the workload's truth");
        let mut topics: Vec<String> = truth
            .iter()
            .flat_map(|t| t.changes.iter())
            .filter(|c| {
                self.config.is_table_included(
                    c.table.pdb.as_deref(),
                    &c.table.owner,
                    &c.table.table,
                )
            })
            .map(|c| cdc_connect_bridge::table_topic(&self.config.topics.template, "", &c.table))
            .collect();
        topics.sort();
        topics.dedup();
        // read, not the high watermarks: Tansu's lag the records it acknowledged
        let mut assignment = TopicPartitionList::new();
        for topic in &topics {
            let Ok(metadata) = consumer.fetch_metadata(Some(topic), Duration::from_secs(10)) else {
                continue;
            };
            for t in metadata.topics().iter().filter(|t| t.error().is_none()) {
                for p in t.partitions() {
                    assignment
                        .add_partition_offset(topic, p.id(), Offset::Beginning)
                        .expect("assignment");
                }
            }
        }
        consumer.assign(&assignment).expect("assigned");
        let mut count = 0;
        let mut quiet = Instant::now();
        while quiet.elapsed() < Duration::from_millis(1500) {
            if let Some(Ok(_)) = consumer.poll(Duration::from_millis(100)) {
                count += 1;
                quiet = Instant::now();
            }
        }
        count
    }

    /// Waits until the stored offset is past every commit of the workload (under
    /// at-least-once an offset is written only once its records are acknowledged), then until
    /// the table topics stop growing for a moment; their record count.
    pub fn settled(&self, timeout: Duration) -> i64 {
        let truth = sim_expected(&self.config).expect("the workload's truth");
        // the last commit with a change the connector publishes (a transaction left open
        // pins the resume point, so the last acknowledged commit is the measure)
        let last = truth
            .iter()
            .filter(|t| {
                t.changes.iter().any(|c| {
                    self.config.is_table_included(
                        c.table.pdb.as_deref(),
                        &c.table.owner,
                        &c.table.table,
                    )
                })
            })
            .map(|t| t.commit_scn.0)
            .max()
            .unwrap_or(0);
        let started = Instant::now();
        while self.stored_last_commit_scn() < last {
            assert!(
                started.elapsed() < timeout,
                "the offset did not pass SCN {last}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        let mut seen = (-1, Instant::now());
        loop {
            let now = self.table_records();
            if now != seen.0 {
                seen = (now, Instant::now());
            } else if seen.1.elapsed() >= Duration::from_secs(2) {
                return now;
            }
            assert!(started.elapsed() < timeout, "the topics did not settle");
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The `offsets-set` events on the ops topic: (outcome, details).
    pub fn offsets_set_events(&self) -> Vec<HashMap<String, String>> {
        let consumer = self.consumer();
        let topic = &self.config.topics.ops;
        let (low, high) = consumer
            .fetch_watermarks(topic, 0, Duration::from_secs(10))
            .expect("ops watermarks");
        let mut list = TopicPartitionList::new();
        list.add_partition_offset(topic, 0, Offset::Offset(low))
            .expect("assign");
        consumer.assign(&list).expect("assigned");
        let mut out = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut read = low;
        while read < high && Instant::now() < deadline {
            let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) else {
                continue;
            };
            read = message.offset() + 1;
            if let Some(event) = message.payload().and_then(cdc_admin::ops::parse_event)
                && event.kind == "offsets-set"
            {
                out.push(event.details.into_iter().collect());
            }
        }
        out
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.connector.shutdown();
        if let Some(thread) = self.supervisor.take() {
            let _ = thread.join();
        }
        let _ = &self.runtime;
    }
}

pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < timeout {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}
