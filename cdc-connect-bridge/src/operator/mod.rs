//! What an operator sees of a running connector: the supervisor that starts, restarts and stops
//! its task ([`connector`]), the control surface and status it exposes ([`control`]), the Kafka
//! Connect REST API over it ([`rest`]) with the Kafka cluster id it reports ([`cluster_id`])
//! and the log levels it changes ([`loggers`]), and the Prometheus metrics ([`metrics`]).

pub mod cluster_id;
pub mod connector;
pub mod control;
pub mod loggers;
pub mod metrics;
pub mod rest;
