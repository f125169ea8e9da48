//! Kafka I/O: every client the connector opens, built in one place ([`client_config`], defined
//! in `cdc_journal::kafka` and re-exported here), and the one error type of the worker's clients
//! ([`KafkaFailure`]).
//!
//! ```text
//!  client     KafkaClients::from_config ─► producer() / admin(); client_config for the rest
//!  producer   RecordProducer: transactional (EOS) or idempotent (ALO), delivery reports ─► acks
//!  topics     TopicAdmin (side topics at start), TopicCreator (table topics, own thread)
//!  offsets    KafkaOffsetStore: the Connect-format offsets topic, read at start, written after
//!  schemas    StoredSchemas: the schema topic read back at start
//!  readback   read_until: a topic read from the beginning (the demo, tests, the bench)
//! ```
//!
//! # Error handling
//!
//! A client that cannot be created, an admin or transaction call that fails or times out
//! (`CALL_TIMEOUT`), and a produce error are [`KafkaFailure`]s. [`classify`] gives each its CDC
//! code (CDC-9001 to CDC-9007) once: the task ends with it, and the connector's supervisor
//! starts a task that ended with a retried code again, with backoff, within
//! `cdc.retry.max.time.ms`. Nothing here retries beyond what librdkafka does itself. Client
//! properties (`cdc.kafka.*`) may hold secrets: no error or `Debug` output shows a property
//! value.

mod client;
mod error;
pub mod offsets;
mod producer;
pub mod readback;
pub mod schemas;
pub mod signals;
mod topics;

pub use client::{CALL_TIMEOUT, KafkaClients, client_config};
pub use error::{Classified, KafkaFailure, classify};
pub use producer::{AckContext, RecordProducer};
pub use topics::{TopicAdmin, TopicCreator, TopicSpec, side_topic_specs};
