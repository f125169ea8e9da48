//! The one Kafka error type of the worker's clients. No variant carries a client property's
//! value: `cdc.kafka.*` may hold secrets.

use std::time::Duration;

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::kafka::offsets::redact;

/// A Kafka failure of the worker. No variant carries a client property's value.
#[derive(Debug, thiserror::Error)]
pub enum KafkaFailure {
    #[error("no Kafka brokers: set bootstrap.servers (or cdc.kafka.bootstrap.servers)")]
    NoBrokers,
    #[error("Kafka client property {key:?} was rejected while {during}")]
    Config { key: String, during: &'static str },
    #[error("could not create the Kafka client while {during}: {message}")]
    ClientCreation {
        during: &'static str,
        message: String,
    },
    #[error("Kafka error while {during}: {source}")]
    Kafka {
        during: &'static str,
        #[source]
        source: KafkaError,
    },
    #[error("could not create topic {topic}: {code}")]
    CreateTopic {
        topic: String,
        code: RDKafkaErrorCode,
    },
    /// The request to create a topic failed as a whole (refused by the client, or no answer).
    #[error("could not create topic {topic}: {source}")]
    CreateTopicRequest {
        topic: String,
        #[source]
        source: KafkaError,
    },
    /// The broker accepted the topic but its metadata never showed it with a partition.
    #[error(
        "topic {topic} was created but did not appear in the broker's metadata within {waited:?}"
    )]
    TopicNotVisible { topic: String, waited: Duration },
    #[error("a record to {topic} was not delivered: {source}")]
    NotDelivered {
        topic: String,
        #[source]
        source: KafkaError,
    },
}

impl KafkaFailure {
    pub(crate) fn kafka(during: &'static str, error: KafkaError) -> KafkaFailure {
        match error {
            KafkaError::ClientConfig(_, _, key, _) => KafkaFailure::Config { key, during },
            source => KafkaFailure::Kafka { during, source },
        }
    }

    pub(super) fn creation(
        during: &'static str,
        error: KafkaError,
        props: &[(String, String)],
    ) -> Self {
        match error {
            KafkaError::ClientCreation(message) => KafkaFailure::ClientCreation {
                during,
                message: redact(message, props),
            },
            other => KafkaFailure::kafka(during, other),
        }
    }

    /// Whether the transaction can be aborted and the task restarted (as opposed to a fenced
    /// or otherwise fatal producer).
    pub fn is_fatal(&self) -> bool {
        match self {
            KafkaFailure::Kafka {
                source: KafkaError::Transaction(error),
                ..
            } => error.is_fatal(),
            _ => false,
        }
    }
}
