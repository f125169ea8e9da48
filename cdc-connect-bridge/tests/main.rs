//! cdc-connect-bridge's integration tests, one binary with a module per area: the record
//! format (golden files, Connect types), the REST API, what each configuration key changes
//! (`config_keys`), and the Kafka tests against a real broker (offsets topic, topics, the
//! `oracle-cdc` binary end to end, its REST API and its stops, the examples, restarts over the
//! simulator).
// the tests check the topics with clients of their own, as an outside consumer would, not
// through the connector's client builder
#![allow(clippy::disallowed_methods)]

mod e2e_support;
mod support;

mod config_keys;
mod e2e;
mod e2e_snapshot;
mod examples;
mod golden;
mod kafka_topics;
mod offsets_kafka;
mod rest;
mod rest_binary;
mod sim_restart;
mod stops;
mod types;
