//! [`KafkaClients`], which builds the record producer and the admin client from a connector
//! configuration. Every client starts from [`client_config`] (bootstrap servers, the
//! `cdc.kafka.*` properties, the log level), which lives in `cdc_journal::kafka`, the lowest
//! crate that opens a Kafka client, and is re-exported here so the crate's callers name it as
//! `crate::kafka::client_config`. `clippy.toml` forbids `ClientConfig::new` anywhere else.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use cdc_core::config::CdcConfig;
use parking_lot::Mutex;
use rdkafka::ClientConfig;
use rdkafka::admin::AdminClient;
use rdkafka::client::DefaultClientContext;
use rdkafka::producer::ThreadedProducer;

use crate::kafka::{AckContext, KafkaFailure, RecordProducer, TopicAdmin};
use crate::worker::acks::AckTracker;

pub use cdc_journal::kafka::client_config;

/// How long one admin or transaction call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the worker's clients connect, and with which properties.
#[derive(Clone)]
pub struct KafkaClients {
    pub bootstrap: String,
    /// `cdc.kafka.*` properties (prefix removed): security settings and the like. Never shown.
    props: Vec<(String, String)>,
}

impl fmt::Debug for KafkaClients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaClients")
            .field("bootstrap", &self.bootstrap)
            .field("properties", &self.props.len())
            .finish()
    }
}

impl KafkaClients {
    /// `cdc.kafka.bootstrap.servers`, or else the worker's `bootstrap.servers`.
    pub fn from_config(config: &CdcConfig) -> Result<KafkaClients, KafkaFailure> {
        let brokers = if config.kafka.bootstrap_servers.is_empty() {
            &config.connect.bootstrap_servers
        } else {
            &config.kafka.bootstrap_servers
        };
        if brokers.is_empty() {
            return Err(KafkaFailure::NoBrokers);
        }
        Ok(KafkaClients {
            bootstrap: brokers.join(","),
            // `transactional.id` belongs to the record producer alone (see
            // `worker::transactional_id`): the offsets store, admin and readers must not be
            // transactional
            props: config
                .kafka
                .client_properties
                .iter()
                .filter(|(k, _)| *k != "transactional.id")
                .map(|(k, v)| (k.to_owned(), v.expose().to_owned()))
                .collect(),
        })
    }

    /// Clients for `bootstrap` with no extra properties (tests, the demo).
    pub fn plain(bootstrap: impl Into<String>) -> KafkaClients {
        KafkaClients {
            bootstrap: bootstrap.into(),
            props: Vec::new(),
        }
    }

    pub fn props(&self) -> &[(String, String)] {
        &self.props
    }

    fn base(&self) -> ClientConfig {
        client_config(&self.bootstrap, &self.props)
    }

    /// The record producer: idempotent, `acks=all`, the Java client's partitioner (a key
    /// lands where a Kafka Connect worker would put it); transactional when
    /// `transactional_id` is given. Delivery reports go to `acks`. When the worker creates
    /// the topics (`creates_topics`), the producer never asks the broker to create one: a
    /// broker's automatic creation, with its own partition count, would race the worker's.
    pub fn producer(
        &self,
        transactional_id: Option<&str>,
        acks: Arc<Mutex<AckTracker>>,
        creates_topics: bool,
    ) -> Result<RecordProducer, KafkaFailure> {
        let mut config = self.base();
        config
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("partitioner", "murmur2_random");
        if creates_topics {
            config.set("allow.auto.create.topics", "false");
        }
        if config.get("linger.ms").is_none() {
            config.set("linger.ms", "5");
        }
        if let Some(id) = transactional_id {
            config.set("transactional.id", id);
        }
        let producer: ThreadedProducer<AckContext> = config
            .create_with_context(AckContext {
                acks: Arc::clone(&acks),
            })
            .map_err(|e| KafkaFailure::creation("creating the producer", e, &self.props))?;
        Ok(RecordProducer { producer, acks })
    }

    /// The id of the Kafka cluster the brokers belong to (the `kafka_cluster_id` of
    /// `GET /`), waiting up to `timeout` for the brokers' metadata; `None` when they did not
    /// answer in time or name no cluster.
    pub fn fetch_cluster_id(&self, timeout: Duration) -> Result<Option<String>, KafkaFailure> {
        let admin: AdminClient<DefaultClientContext> = self
            .base()
            .create()
            .map_err(|e| KafkaFailure::creation("creating the admin client", e, &self.props))?;
        Ok(admin
            .inner()
            .fetch_cluster_id(timeout)
            .filter(|id| !id.is_empty()))
    }

    pub fn admin(&self) -> Result<TopicAdmin, KafkaFailure> {
        let admin: AdminClient<DefaultClientContext> = self
            .base()
            .create()
            .map_err(|e| KafkaFailure::creation("creating the admin client", e, &self.props))?;
        Ok(TopicAdmin {
            admin,
            known: HashSet::new(),
            metadata_wait: CALL_TIMEOUT,
        })
    }
}
