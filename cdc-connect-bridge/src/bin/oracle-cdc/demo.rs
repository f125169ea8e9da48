//! `oracle-cdc demo`: the simulator's workload through the whole connector into a broker —
//! rdkafka's in-process mock cluster unless `--bootstrap` names a real one — then the topics
//! read back and summarised: tables, records by operation, transactions, the last position,
//! and a few records. Nothing to install beyond Rust.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cdc_core::config::Config;
use rdkafka::mocking::MockCluster;

use cdc_connect_bridge::kafka::offsets::KafkaOffsetStore;
use cdc_connect_bridge::kafka::readback::{ReadRecord, read_until};
use cdc_connect_bridge::kafka::side_topic_specs;
use cdc_connect_bridge::operator::connector::Connector;
use cdc_connect_bridge::worker::TaskOptions;
use cdc_logminer::source::configured::{sim_expected, sim_initial_scn};

/// What the demo runs.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// A broker to use instead of the in-process mock cluster.
    pub bootstrap: Option<String>,
    pub seed: u64,
    pub changes: u64,
    /// Records printed at the end.
    pub show: usize,
    pub timeout: Duration,
    /// `transaction.boundary=connector` (exactly once) rather than at least once.
    pub exactly_once: bool,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            bootstrap: None,
            seed: 7,
            changes: 2_000,
            show: 3,
            timeout: Duration::from_secs(120),
            exactly_once: true,
        }
    }
}

/// What the demo delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSummary {
    pub expected_changes: u64,
    pub delivered_changes: u64,
    pub transactions: u64,
    pub records_by_topic: BTreeMap<String, u64>,
    pub records_by_op: BTreeMap<String, u64>,
    pub last_resume_scn: Option<u64>,
}

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("demo: {0}")]
    Setup(String),
    #[error(
        "demo: {delivered} of {expected} committed changes arrived within {timeout:?}; \
         the connector reported: {status}"
    )]
    Incomplete {
        delivered: u64,
        expected: u64,
        timeout: Duration,
        status: String,
    },
}

/// The demo's connector configuration.
pub fn demo_config(options: &DemoOptions, bootstrap: &str, run: &str) -> Config {
    // as Connect combines them: `required` only where the boundary can honour it
    let (support, boundary) = if options.exactly_once {
        ("required", "connector")
    } else {
        ("requested", "poll")
    };
    Config::from_pairs([
        ("name", format!("oracle-cdc-demo-{run}")),
        ("cdc.source", "sim".into()),
        ("cdc.sim.seed", options.seed.to_string()),
        ("cdc.sim.changes", options.changes.to_string()),
        ("bootstrap.servers", bootstrap.into()),
        (
            "offset.storage.topic",
            format!("oracle-cdc-demo-offsets-{run}"),
        ),
        ("cdc.topic.prefix", format!("demo{run}")),
        ("cdc.tables.include", r"APP\..*".into()),
        // its CLOB values are assembled from LOB rows, which this version does not do yet
        ("cdc.tables.exclude", r"APP\.DOCS".into()),
        ("cdc.users.exclude", "ETL_BATCH".into()),
        // APP.EVENTS has no key: its records are keyed by ROWID
        ("cdc.key.missing", "rowid".into()),
        ("exactly.once.support", support.into()),
        ("transaction.boundary", boundary.into()),
        ("cdc.heartbeat.interval.ms", "1000".into()),
        ("cdc.rest.listen", "127.0.0.1:0".into()),
        // the demo mines the database's whole history from its first SCN (cdc.start.scn), so
        // every row comes from the stream and is checked against what was committed
        ("cdc.snapshot.mode", "none".into()),
    ])
}

/// Runs the demo and writes its report to `out`.
pub fn run_demo(options: &DemoOptions, out: &mut dyn Write) -> Result<DemoSummary, DemoError> {
    let setup = |e: &dyn std::fmt::Display| DemoError::Setup(e.to_string());
    let mock = match &options.bootstrap {
        Some(_) => None,
        None => Some(MockCluster::new(1).map_err(|e| setup(&e))?),
    };
    let bootstrap = match (&options.bootstrap, &mock) {
        (Some(b), _) => b.clone(),
        (None, Some(cluster)) => cluster.bootstrap_servers(),
        (None, None) => return Err(DemoError::Setup("no broker".into())),
    };
    // A real broker keeps topics between runs: each run gets its own names.
    let run = match options.bootstrap {
        Some(_) => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
            .to_string(),
        None => String::new(),
    };
    let mut given = demo_config(options, &bootstrap, &run);
    // capture the simulated database's whole history, not only what follows the first start
    let initial =
        sim_initial_scn(&given.validate().map_err(|e| setup(&e))?).map_err(|e| setup(&e))?;
    given.set("cdc.start.scn", initial.0.to_string());
    let config = given.validate().map_err(|e| setup(&e))?;
    let prefix = config.topics.prefix.clone();
    if let Some(cluster) = &mock {
        // the mock cluster has no admin API: the topics the connector would create
        let mut topics = vec![config.connect.offset_storage_topic.clone()];
        topics.extend(side_topic_specs(&config).into_iter().map(|spec| spec.name));
        for topic in topics {
            cluster.create_topic(&topic, 1, 1).map_err(|e| setup(&e))?;
        }
    }
    let expected = sim_expected(&config).map_err(|e| setup(&e))?;
    let expected_changes: u64 = expected.iter().map(|t| t.changes.len() as u64).sum();
    let _ = writeln!(
        out,
        "oracle-cdc demo: a simulated Oracle database (seed {}) makes {} row changes; \
         {} committed changes in {} transactions are to be captured, {} into {}",
        options.seed,
        options.changes,
        expected_changes,
        expected.len(),
        if options.exactly_once {
            "exactly once"
        } else {
            "at least once"
        },
        if mock.is_some() {
            "an in-process Kafka mock cluster".to_owned()
        } else {
            bootstrap.clone()
        },
    );

    let connector = Arc::new(
        Connector::new(config.clone(), &given, "demo".to_owned()).with_options(TaskOptions {
            // the mock cluster creates topics on first use and has no admin API
            create_topics: mock.is_none(),
        }),
    );
    let runner = {
        let connector = Arc::clone(&connector);
        std::thread::spawn(move || connector.supervise(true))
    };
    let started = Instant::now();
    let table_prefix = format!("{prefix}.");
    let side: BTreeSet<String> = [
        &config.topics.ops,
        &config.topics.heartbeat,
        &config.topics.dlq,
        &config.topics.schema,
        &config.topics.signals,
        &config.topics.txjournal,
        &config.topics.transactions,
    ]
    .into_iter()
    .cloned()
    .collect();
    let wanted = |topic: &str| topic.starts_with(&table_prefix) && !side.contains(topic);
    let mut runner_done = false;
    let read = read_until(&bootstrap, &wanted, true, options.timeout, &mut |records| {
        runner_done = runner_done || runner.is_finished();
        runner_done || delivered_changes(records) >= expected_changes
    });
    connector.shutdown();
    let outcome = runner.join();
    let (records, _) = read.map_err(|e| setup(&e))?;
    let delivered = delivered_changes(&records);
    if delivered < expected_changes {
        let status = match outcome {
            Ok(Err(error)) => error.to_string(),
            _ => "no error".to_owned(),
        };
        return Err(DemoError::Incomplete {
            delivered,
            expected: expected_changes,
            timeout: options.timeout,
            status,
        });
    }

    let summary = summarise(&records, expected_changes, delivered, &config, &bootstrap);
    report(out, &summary, &records, options.show, started.elapsed());
    Ok(summary)
}

/// Distinct (transaction, event index) pairs among change records.
fn delivered_changes(records: &[ReadRecord]) -> u64 {
    records
        .iter()
        .filter(|r| r.value.is_some())
        .filter_map(|r| Some((r.header("cdc.xid")?, r.header("cdc.event_index")?)))
        .collect::<BTreeSet<_>>()
        .len() as u64
}

fn op_of(record: &ReadRecord) -> Option<String> {
    let value = record.value_json()?;
    let payload = value.get("payload").unwrap_or(&value);
    payload.get("op")?.as_str().map(str::to_owned)
}

fn summarise(
    records: &[ReadRecord],
    expected_changes: u64,
    delivered_changes: u64,
    config: &cdc_core::config::CdcConfig,
    bootstrap: &str,
) -> DemoSummary {
    let mut by_topic = BTreeMap::new();
    let mut by_op = BTreeMap::new();
    let mut xids = BTreeSet::new();
    for record in records {
        *by_topic.entry(record.topic.clone()).or_insert(0) += 1;
        let op = op_of(record).unwrap_or_else(|| "tombstone".to_owned());
        *by_op.entry(op).or_insert(0) += 1;
        if let Some(xid) = record.header("cdc.xid") {
            xids.insert(xid.to_owned());
        }
    }
    let last_resume_scn = KafkaOffsetStore::open_with(
        bootstrap,
        &config.connect.offset_storage_topic,
        &config.connect.name,
        &config.topics.prefix,
        &[],
        cdc_connect_bridge::kafka::offsets::DEFAULT_TIMEOUT,
        false,
    )
    .ok()
    .and_then(|store| store.read_latest().ok().flatten())
    .map(|p| p.resume.scn.0);
    DemoSummary {
        expected_changes,
        delivered_changes,
        transactions: xids.len() as u64,
        records_by_topic: by_topic,
        records_by_op: by_op,
        last_resume_scn,
    }
}

fn report(
    out: &mut dyn Write,
    summary: &DemoSummary,
    records: &[ReadRecord],
    show: usize,
    took: Duration,
) {
    let _ = writeln!(
        out,
        "\ndelivered {} of {} committed changes in {} transactions, {:.1} s",
        summary.delivered_changes,
        summary.expected_changes,
        summary.transactions,
        took.as_secs_f64()
    );
    let _ = writeln!(out, "\nrecords by topic:");
    for (topic, n) in &summary.records_by_topic {
        let _ = writeln!(out, "  {topic:<40} {n:>7}");
    }
    let _ = writeln!(out, "\nrecords by op (c create, u update, d delete):");
    for (op, n) in &summary.records_by_op {
        let _ = writeln!(out, "  {op:<10} {n:>7}");
    }
    if let Some(scn) = summary.last_resume_scn {
        let _ = writeln!(
            out,
            "\nlast committed offset: resume_scn {scn} (a restart continues from there)"
        );
    }
    let _ = writeln!(out, "\na few records (value payload):");
    for record in records.iter().filter(|r| r.value.is_some()).take(show) {
        let payload = record
            .value_json()
            .map(|v| v.get("payload").cloned().unwrap_or(v))
            .map(|v| v.to_string())
            .unwrap_or_default();
        let shown: String = payload.chars().take(400).collect();
        let _ = writeln!(
            out,
            "  {} xid={} event_index={}\n    {shown}{}",
            record.topic,
            record.header("cdc.xid").unwrap_or("-"),
            record.header("cdc.event_index").unwrap_or("-"),
            if payload.chars().count() > 400 {
                " …"
            } else {
                ""
            }
        );
    }
}
