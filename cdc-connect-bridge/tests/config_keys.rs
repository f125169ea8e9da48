//! The keys the Kafka side reads, from a validated configuration to what they change: the
//! side topics created, the Kafka clients' brokers and properties, exactly once or at least
//! once, the Kafka transaction bounds, the records' shape, and (over rdkafka's in-process
//! mock cluster) the at-least-once window and the stop's wait.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cdc_connect_bridge::kafka::offsets::DEFAULT_TIMEOUT;
use cdc_connect_bridge::kafka::{KafkaClients, KafkaFailure, side_topic_specs};
use cdc_connect_bridge::worker::delivery::DeliveryMode;
use cdc_connect_bridge::worker::eos_boundaries::EosBounds;
use cdc_connect_bridge::worker::{
    TaskOptions, TaskSignals, TaskStats, delivery_mode, run_task, transactional_id,
};
use cdc_connect_bridge::{RecordBuilder, RecordContext};
use cdc_core::change::ChangeOp;
use cdc_core::config::{CdcConfig, Config};
use cdc_core::table::TableId;
use cdc_logminer::engine::{EngineRecord, HeartbeatReason, RecordKind};
use cdc_logminer::source::configured::sim_initial_scn;
use rdkafka::mocking::MockCluster;
use support::*;

fn validated(extra: &[(&str, &str)]) -> CdcConfig {
    let mut config = Config::from_pairs([
        ("name", "keys-cdc"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", "shop"),
        ("cdc.tables.include", "APP\\..*"),
    ]);
    for (key, value) in extra {
        config.set(*key, *value);
    }
    config.validate().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn side_topics_follow_the_topic_keys() {
    let specs = side_topic_specs(&validated(&[
        ("cdc.ops.topic", "ops-${prefix}"),
        ("cdc.signals.topic", "signals-x"),
        ("cdc.schema.topic", "schema-x"),
        ("cdc.dlq.topic", "dlq-x"),
        ("cdc.heartbeat.topic", "beat-x"),
        ("cdc.txjournal.topic", "journal-x"),
        ("cdc.transactions.topic.enabled", "true"),
        ("cdc.transactions.topic", "txs-x"),
        ("cdc.internal.topic.replication.factor", "3"),
        ("cdc.on.decode.error", "dlq"),
    ]));
    let topics: Vec<(&str, Option<&str>)> = specs
        .iter()
        .map(|spec| {
            let policy = spec
                .configs
                .iter()
                .find(|(name, _)| *name == "cleanup.policy")
                .map(|(_, value)| value.as_str());
            (spec.name.as_str(), policy)
        })
        .collect();
    assert_eq!(
        topics,
        [
            ("ops-shop", Some("delete")),
            ("beat-x", Some("delete")),
            ("signals-x", Some("delete")),
            ("schema-x", Some("compact")),
            ("journal-x", Some("compact")),
            ("dlq-x", Some("delete")),
            ("txs-x", Some("delete")),
        ]
    );
    assert!(specs.iter().all(|spec| spec.replication == Some(3)));

    // the defaults: no DLQ unless something can go there, no transactions topic, the
    // broker's replication factor
    let specs = side_topic_specs(&validated(&[]));
    let names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "shop.cdc.ops",
            "shop.cdc.heartbeat",
            "shop.cdc.signals",
            "shop.cdc.schema",
            "shop.cdc.txjournal"
        ]
    );
    assert!(specs.iter().all(|spec| spec.replication.is_none()));
}

#[test]
fn kafka_clients_take_the_brokers_and_the_cdc_kafka_properties() {
    let worker = KafkaClients::from_config(&validated(&[
        ("bootstrap.servers", "worker-a:9092,worker-b:9092"),
        ("cdc.kafka.security.protocol", "SSL"),
        ("cdc.kafka.transactional.id", "mine"),
    ]))
    .unwrap();
    assert_eq!(worker.bootstrap, "worker-a:9092,worker-b:9092");
    // the prefix removed; the transactional id is the record producer's alone
    assert_eq!(
        worker.props(),
        [("security.protocol".to_owned(), "SSL".to_owned())]
    );

    let own = KafkaClients::from_config(&validated(&[
        ("bootstrap.servers", "worker:9092"),
        ("cdc.kafka.bootstrap.servers", "own:9093"),
    ]))
    .unwrap();
    assert_eq!(own.bootstrap, "own:9093");
    assert!(own.props().is_empty());

    assert!(matches!(
        KafkaClients::from_config(&validated(&[])),
        Err(KafkaFailure::NoBrokers)
    ));
}

#[test]
fn delivery_follows_exactly_once_support_and_the_transaction_boundary() {
    for (support, boundary, mode) in [
        ("requested", "poll", DeliveryMode::AtLeastOnce),
        ("requested", "connector", DeliveryMode::ExactlyOnce),
        ("required", "connector", DeliveryMode::ExactlyOnce),
    ] {
        let config = validated(&[
            ("exactly.once.support", support),
            ("transaction.boundary", boundary),
        ]);
        assert_eq!(delivery_mode(&config), mode, "{support}/{boundary}");
        assert_eq!(config.is_exactly_once(), mode == DeliveryMode::ExactlyOnce);
    }
    // the transactional id fences the previous run of the same connector (`name`)
    assert_eq!(transactional_id(&validated(&[])), "oracle-cdc-keys-cdc");
    assert_eq!(
        transactional_id(&validated(&[("cdc.kafka.transactional.id", "fixed")])),
        "fixed"
    );
}

#[test]
fn eos_bounds_are_the_eos_keys() {
    let config = validated(&[
        ("cdc.eos.batch.max.records", "7"),
        ("cdc.eos.batch.max.bytes", "1024"),
        ("cdc.eos.batch.max.ms", "9"),
        ("cdc.eos.split.max.records", "11"),
        ("cdc.eos.split.max.bytes", "2048"),
    ]);
    assert_eq!(
        EosBounds::from_settings(&config.eos),
        EosBounds {
            batch_max_records: 7,
            batch_max_bytes: 1024,
            batch_max_time: Duration::from_millis(9),
            split_max_records: 11,
            split_max_bytes: 2048,
        }
    );
    assert_eq!(
        EosBounds::from_settings(&validated(&[]).eos),
        EosBounds::default()
    );
}

fn context() -> RecordContext {
    RecordContext {
        now_ms: 1_774_747_805_250,
        split: false,
    }
}

/// The records of an update and a delete of APP.ALL_TYPES, and of a heartbeat, an ops event
/// and a schema change, built with `extra` keys.
fn records(extra: &[(&str, &str)]) -> Vec<cdc_connect_bridge::KafkaRecord> {
    let mut builder = RecordBuilder::new(settings(extra));
    let layout = all_types_layout(TableId::new("APP", "ALL_TYPES"));
    let commit = commit(0, None, 2);
    let mut records = Vec::new();
    for change in [
        change_record(
            &commit,
            &layout,
            0,
            ChangeOp::Update,
            Some(all_types_row(1)),
            Some(all_types_row(1)),
            Some("AAAS5bAAEAAAACXAAA"),
        ),
        change_record(
            &commit,
            &layout,
            1,
            ChangeOp::Delete,
            Some(all_types_row(2)),
            None,
            Some("AAAS5bAAEAAAACXAAB"),
        ),
    ] {
        builder
            .append(&engine_change(change), context(), &mut records)
            .unwrap();
    }
    let position = Arc::new(position(1, &commit));
    for kind in [
        RecordKind::Heartbeat {
            reason: HeartbeatReason::Start,
            mined_to: None,
        },
        RecordKind::Ops(cdc_core::OpsEvent {
            kind: cdc_core::OpsKind::TransactionDiscarded,
            details: Default::default(),
        }),
        RecordKind::Schema(cdc_logminer::engine::SchemaChange::Version(Arc::clone(
            &layout,
        ))),
    ] {
        let record = EngineRecord {
            kind,
            position: Arc::clone(&position),
        };
        builder.append(&record, context(), &mut records).unwrap();
    }
    records
}

#[test]
fn record_keys_shape_the_records() {
    let topics = |records: &[cdc_connect_bridge::KafkaRecord]| -> Vec<String> {
        records.iter().map(|r| r.topic.to_string()).collect()
    };
    let text = |records: &[cdc_connect_bridge::KafkaRecord]| dump(records, "shop");

    let default = records(&[]);
    assert_eq!(
        topics(&default),
        [
            "shop.APP.ALL_TYPES",
            "shop.APP.ALL_TYPES",
            "shop.APP.ALL_TYPES",
            "shop.cdc.heartbeat",
            "shop.cdc.ops",
            "shop.cdc.schema",
        ],
        "update, delete and its tombstone, side records"
    );
    assert_eq!(default[2].value, None, "the tombstone");
    assert!(text(&default).contains("__cdc_unavailable_value"));

    let set = records(&[
        ("cdc.tombstones.on.delete", "false"),
        ("cdc.unavailable.placeholder", "<not in redo>"),
        ("cdc.topic.template", "${prefix}-${schema}-${table}-x"),
        ("cdc.heartbeat.topic", "beats"),
        ("cdc.ops.topic", "${prefix}-ops"),
        ("cdc.schema.topic", "layouts"),
    ]);
    assert_eq!(
        topics(&set),
        [
            "shop-APP-ALL_TYPES-x",
            "shop-APP-ALL_TYPES-x",
            "beats",
            "shop-ops",
            "layouts",
        ],
        "no tombstone after the delete"
    );
    assert!(set.iter().all(|r| r.value.is_some()));
    let shown = text(&set);
    assert!(shown.contains("<not in redo>"), "{shown}");
    assert!(!shown.contains("__cdc_unavailable_value"), "{shown}");
}

/// The DLQ gets the records that go there, under its own key.
#[test]
fn dlq_records_go_to_the_dlq_topic() {
    let builder_records = |extra: &[(&str, &str)]| {
        let mut builder = RecordBuilder::new(settings(extra));
        let commit = commit(0, None, 1);
        let record = EngineRecord {
            kind: RecordKind::Dlq(cdc_logminer::engine::DlqRecord {
                kind: cdc_core::DlqKind::UnsupportedRow,
                xid: commit.con_xid,
                table: Some(TableId::new("APP", "DOCS")),
                scn: cdc_core::Scn(5_000_300),
                addr: None,
                operation: None,
                status: Some(2),
                info: None,
                sql_redo: None,
                message: "UNSUPPORTED row".into(),
                details: Default::default(),
            }),
            position: Arc::new(position(0, &commit)),
        };
        let mut out = Vec::new();
        builder.append(&record, context(), &mut out).unwrap();
        out.into_iter()
            .map(|r| r.topic.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(builder_records(&[]), ["shop.cdc.dlq"]);
    assert_eq!(builder_records(&[("cdc.dlq.topic", "dead")]), ["dead"]);
}

/// A task over the simulator into an in-process mock cluster, at least once, with `extra`
/// keys: the cluster, the configuration, and the task's thread with its stop signal.
struct MockTask {
    cluster: MockCluster<'static, rdkafka::producer::DefaultProducerContext>,
    config: CdcConfig,
    signals: Arc<TaskSignals>,
    task: Option<std::thread::JoinHandle<Result<(), cdc_connect_bridge::worker::TaskError>>>,
}

impl MockTask {
    fn start(test: &str, extra: &[(&str, &str)]) -> MockTask {
        let cluster = MockCluster::new(1).unwrap();
        let mut given = Config::from_pairs([
            ("name", test.to_owned()),
            ("cdc.source", "sim".into()),
            ("cdc.sim.seed", "5".into()),
            ("cdc.sim.changes", "100000".into()),
            ("bootstrap.servers", cluster.bootstrap_servers()),
            ("offset.storage.topic", format!("{test}-offsets")),
            ("cdc.topic.prefix", test.to_owned()),
            ("cdc.tables.include", r"APP\..*".into()),
            ("cdc.tables.exclude", r"APP\.DOCS".into()),
            ("cdc.users.exclude", "ETL_BATCH".into()),
            ("cdc.key.missing", "rowid".into()),
        ]);
        for (key, value) in extra {
            given.set(*key, *value);
        }
        let initial = sim_initial_scn(&given.validate().unwrap()).unwrap();
        given.set("cdc.start.scn", initial.0.to_string());
        let config = given.validate_for_delivery().unwrap();
        // the mock cluster has no admin API: the topics the connector would create
        cluster
            .create_topic(&config.connect.offset_storage_topic, 1, 1)
            .unwrap();
        for spec in side_topic_specs(&config) {
            cluster.create_topic(&spec.name, 1, 1).unwrap();
        }
        let signals = Arc::new(TaskSignals::default());
        let task = {
            let config = config.clone();
            let signals = Arc::clone(&signals);
            std::thread::spawn(move || {
                let stats = Arc::new(TaskStats::default());
                run_task(
                    &config,
                    &stats,
                    &signals,
                    TaskOptions {
                        create_topics: false,
                    },
                )
            })
        };
        MockTask {
            cluster,
            config,
            signals,
            task: Some(task),
        }
    }

    /// The window the newest stored offset carries, once one was written while records were
    /// in flight.
    fn window_while_running(&self) -> u64 {
        let store = self.store();
        let waited = Instant::now();
        loop {
            if let Some(window) = store
                .read_latest_stored()
                .ok()
                .flatten()
                .and_then(|stored| stored.delivered_window)
                .filter(|window| *window > 0)
            {
                return window;
            }
            assert!(
                waited.elapsed() < Duration::from_secs(120),
                "no offset was written"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn store(&self) -> cdc_connect_bridge::kafka::offsets::KafkaOffsetStore {
        cdc_connect_bridge::kafka::offsets::KafkaOffsetStore::open_with(
            &self.cluster.bootstrap_servers(),
            &self.config.connect.offset_storage_topic,
            &self.config.connect.name,
            &self.config.topics.prefix,
            &[],
            DEFAULT_TIMEOUT,
            false,
        )
        .unwrap()
    }

    /// Stops the task and returns how it ended.
    fn stop(&mut self) -> Result<(), cdc_connect_bridge::worker::TaskError> {
        self.signals.request_stop();
        self.task.take().unwrap().join().unwrap()
    }
}

/// `cdc.poll.max.records`: at least once, the offsets a running task writes carry its window,
/// 64 polls of records, which bounds what it sends past them and what a restart looks for.
#[test]
fn the_at_least_once_window_is_64_polls_of_records() {
    let mut task = MockTask::start("window-keys", &[("cdc.poll.max.records", "3")]);
    let window = task.window_while_running();
    task.stop().unwrap();
    assert_eq!(window, 3 * 64);
}

/// `cdc.shutdown.timeout.ms`: at least once, a stop waits that long for the records in flight.
/// The broker is made to take 3 s to answer, the task is stopped, and 3 s later the broker
/// answers at once again: a one-second timeout ends the stop first, with records
/// unacknowledged (the task fails, and its last offset keeps the window, so a restart looks
/// for them); a twenty-second one sees them acknowledged, and the last offset says nothing is
/// in flight.
#[test]
fn a_stop_waits_for_unacknowledged_records_at_most_the_shutdown_timeout() {
    for (timeout, settled) in [("1000", false), ("20000", true)] {
        let name = format!("stop-keys-{timeout}");
        let mut task = MockTask::start(&name, &[("cdc.shutdown.timeout.ms", timeout)]);
        task.window_while_running();
        task.cluster
            .broker_round_trip_time(1, Duration::from_secs(3))
            .unwrap();
        // records keep coming while the broker is slow: some are in flight at the stop
        std::thread::sleep(Duration::from_millis(300));
        let signals = Arc::clone(&task.signals);
        let handle = task.task.take().unwrap();
        let stopping = std::thread::spawn(move || {
            signals.request_stop();
            handle.join().unwrap()
        });
        std::thread::sleep(Duration::from_secs(3));
        task.cluster
            .broker_round_trip_time(1, Duration::ZERO)
            .unwrap();
        let stopped = stopping.join().unwrap();
        let last = task.store().read_latest_stored().unwrap().unwrap();
        assert_eq!(stopped.is_ok(), settled, "{timeout} ms: {stopped:?}");
        assert_eq!(
            last.delivered_window == Some(0),
            settled,
            "{timeout} ms: {:?}",
            last.delivered_window
        );
    }
}
