//! The one Kafka error type of the worker's clients, and the one place a Kafka failure gets
//! its CDC code ([`classify`]). No variant carries a client property's value: `cdc.kafka.*`
//! may hold secrets.

use std::time::Duration;

use cdc_core::{CdcCode, CdcError};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::kafka::offsets::{OffsetStoreError, redact};

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
    /// No broker answered a metadata request within the wait (at task start).
    #[error("no Kafka broker of {bootstrap} answered within {waited:?}: {source}")]
    Unreachable {
        bootstrap: String,
        waited: Duration,
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

/// What the connector does about a Kafka error: which code it carries, and whether the task is
/// started again (class retried) or stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    pub code: CdcCode,
    /// The error is not on any list: the task stops at once (CDC-9001 without retry).
    pub unclassified: bool,
}

impl Classified {
    const fn known(code: CdcCode) -> Classified {
        Classified {
            code,
            unclassified: false,
        }
    }
}

/// The one classification of Kafka failures (`docs/runbooks.md`, CDC-9001 to CDC-9007).
pub fn classify(failure: &KafkaFailure) -> Classified {
    match failure {
        KafkaFailure::NoBrokers
        | KafkaFailure::Config { .. }
        | KafkaFailure::ClientCreation { .. } => Classified::known(CdcCode::KafkaClientSetup),
        KafkaFailure::Unreachable { .. } => Classified::known(CdcCode::KafkaUnavailable),
        KafkaFailure::TopicNotVisible { .. } => Classified::known(CdcCode::TopicUnavailable),
        KafkaFailure::CreateTopic { code, .. } => match classify_code(*code) {
            // a code about the topic itself, or an answer the broker gave about the request
            Some(classified) => classified,
            None => Classified::known(CdcCode::TopicUnavailable),
        },
        KafkaFailure::Kafka { source, .. }
        | KafkaFailure::CreateTopicRequest { source, .. }
        | KafkaFailure::NotDelivered { source, .. } => classify_error(source),
    }
}

fn classify_error(error: &KafkaError) -> Classified {
    if let KafkaError::Transaction(transaction) = error {
        if let Some(classified) = classify_code(transaction.code()) {
            return classified;
        }
        // librdkafka says what a transaction error needs: a fatal one a new producer, an
        // abortable or retriable one the transaction done again; both are a task started again
        // from its committed offset
        if transaction.is_fatal() || transaction.txn_requires_abort() || transaction.is_retriable()
        {
            return Classified::known(CdcCode::KafkaUnavailable);
        }
    }
    match error {
        KafkaError::ClientConfig(..) | KafkaError::ClientCreation(_) => {
            Classified::known(CdcCode::KafkaClientSetup)
        }
        // the client refused a request before sending it (the topic's name or settings)
        KafkaError::AdminOpCreation(_) => Classified::known(CdcCode::TopicUnavailable),
        other => match other.rdkafka_error_code().and_then(classify_code) {
            Some(classified) => classified,
            None => Classified {
                code: CdcCode::KafkaUnavailable,
                unclassified: true,
            },
        },
    }
}

/// The error codes of librdkafka and of the Kafka protocol the connector knows.
fn classify_code(code: RDKafkaErrorCode) -> Option<Classified> {
    use RDKafkaErrorCode as E;
    let cdc = match code {
        // the cluster or the way to it, for now
        E::BrokerTransportFailure
        | E::AllBrokersDown
        | E::Resolve
        | E::OperationTimedOut
        | E::RequestTimedOut
        | E::MessageTimedOut
        | E::TimedOutQueue
        | E::NetworkException
        | E::BrokerNotAvailable
        | E::LeaderNotAvailable
        | E::NotLeaderForPartition
        | E::ReplicaNotAvailable
        | E::NotEnoughReplicas
        | E::NotEnoughReplicasAfterAppend
        | E::NotCoordinator
        | E::CoordinatorNotAvailable
        | E::CoordinatorLoadInProgress
        | E::ConcurrentTransactions
        | E::KafkaStorageError
        | E::NotController
        | E::PreferredLeaderNotAvailable
        | E::EligibleLeadersNotAvailable
        | E::FencedLeaderEpoch
        | E::UnknownLeaderEpoch
        | E::OffsetNotAvailable
        | E::ThrottlingQuotaExceeded
        | E::WaitingForCoordinator
        | E::BrokerDestroy
        | E::ISRInsufficient
        | E::RebalanceInProgress
        | E::TransactionCoordinatorFenced
        | E::InconsistentVoterSet
        | E::OutOfOrderSequenceNumber
        | E::UnknownProducerId
        | E::InvalidProducerIdMapping
        | E::InvalidTransactionTimeout
        | E::PurgeQueue
        | E::PurgeInflight
        | E::InvalidTransactionalState
        | E::Fatal
        // UNKNOWN_SERVER_ERROR: the broker failed the request for a reason of its own. A task
        // started again from its committed offset loses and repeats nothing it would not after
        // any other restart, and the budget ends a broker that keeps failing; under
        // exactly-once the same answer already comes back as an abortable transaction error
        | E::Unknown => CdcCode::KafkaUnavailable,
        // another producer took the transactional id
        E::ProducerFenced | E::InvalidProducerEpoch | E::Fenced => CdcCode::ProducerFenced,
        // who the connector is, or what it may do: the one list, where the clients are built
        code if cdc_journal::kafka::is_authorization(code) => CdcCode::KafkaAuthorization,
        // a topic that cannot be made or used
        E::InvalidTopic
        | E::InvalidPartitions
        | E::InvalidReplicationFactor
        | E::InvalidReplicaAssignment
        | E::InvalidConfig
        | E::PolicyViolation
        | E::TopicDeletionDisabled
        | E::UnknownTopic
        | E::UnknownTopicOrPartition
        | E::UnknownPartition
        | E::UnknownTopicId => CdcCode::TopicUnavailable,
        E::MessageSizeTooLarge | E::InvalidMessageSize | E::MessageBatchTooLarge => {
            CdcCode::RecordTooLarge
        }
        // the brokers lack what the delivery needs
        E::UnsupportedVersion
        | E::UnsupportedFeature
        | E::UnsupportedForMessageFormat
        | E::InvalidArgument
        | E::InvalidRequiredAcks => CdcCode::KafkaClientSetup,
        _ => return None,
    };
    Some(Classified::known(cdc))
}

impl From<KafkaFailure> for CdcError {
    fn from(failure: KafkaFailure) -> CdcError {
        let classified = classify(&failure);
        let error = CdcError::new(classified.code, failure.to_string());
        let error = if classified.unclassified {
            error.without_retry()
        } else {
            error
        };
        error.with_source(failure)
    }
}

impl From<OffsetStoreError> for CdcError {
    fn from(error: OffsetStoreError) -> CdcError {
        let code = match error {
            OffsetStoreError::Client(failure) => return failure.into(),
            OffsetStoreError::DescribeTopic { code, .. } => {
                classify_code(code).map_or(CdcCode::OffsetsStore, |c| c.code)
            }
            OffsetStoreError::NotCompacted { .. } => CdcCode::OffsetsStore,
            OffsetStoreError::NoPartitions { .. } => CdcCode::TopicUnavailable,
            OffsetStoreError::ReadTimeout { .. } | OffsetStoreError::NoDeliveryReport { .. } => {
                CdcCode::KafkaUnavailable
            }
            // a stored offset that cannot be read is damaged data, never retried around
            OffsetStoreError::BadOffset { .. } | OffsetStoreError::NotText { .. } => {
                CdcCode::Corruption
            }
        };
        CdcError::new(code, error.to_string()).with_source(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::CdcClass;

    fn kafka(code: RDKafkaErrorCode) -> KafkaFailure {
        KafkaFailure::Kafka {
            during: "testing",
            source: KafkaError::MessageProduction(code),
        }
    }

    #[test]
    fn each_kind_of_kafka_error_has_its_code() {
        use RDKafkaErrorCode as E;
        let cases = [
            (E::AllBrokersDown, CdcCode::KafkaUnavailable),
            (E::BrokerTransportFailure, CdcCode::KafkaUnavailable),
            (E::MessageTimedOut, CdcCode::KafkaUnavailable),
            (E::NotEnoughReplicas, CdcCode::KafkaUnavailable),
            (E::Unknown, CdcCode::KafkaUnavailable),
            (E::ProducerFenced, CdcCode::ProducerFenced),
            (E::InvalidProducerEpoch, CdcCode::ProducerFenced),
            (E::TopicAuthorizationFailed, CdcCode::KafkaAuthorization),
            (
                E::TransactionalIdAuthorizationFailed,
                CdcCode::KafkaAuthorization,
            ),
            (E::SaslAuthenticationFailed, CdcCode::KafkaAuthorization),
            (E::PolicyViolation, CdcCode::TopicUnavailable),
            (E::UnknownTopicOrPartition, CdcCode::TopicUnavailable),
            (E::MessageSizeTooLarge, CdcCode::RecordTooLarge),
            (E::MessageBatchTooLarge, CdcCode::RecordTooLarge),
            (E::UnsupportedVersion, CdcCode::KafkaClientSetup),
        ];
        for (code, expected) in cases {
            let classified = classify(&kafka(code));
            assert_eq!(classified.code, expected, "{code:?}");
            assert!(!classified.unclassified, "{code:?}");
            let stop = CdcError::from(kafka(code));
            assert_eq!(stop.code(), expected);
            assert_eq!(
                stop.is_retried(),
                expected.class() == CdcClass::Retried,
                "{code:?}"
            );
            assert!(
                stop.to_string()
                    .starts_with(&format!("[{}] ", expected.id()))
            );
        }
    }

    #[test]
    fn an_unclassified_kafka_error_stops_at_once() {
        let stop = CdcError::from(kafka(RDKafkaErrorCode::InvalidTimestamp));
        assert_eq!(stop.code(), CdcCode::KafkaUnavailable);
        assert!(!stop.is_retried(), "{stop}");
    }

    #[test]
    fn the_workers_own_failures_have_their_codes() {
        let cases = [
            (KafkaFailure::NoBrokers, CdcCode::KafkaClientSetup),
            (
                KafkaFailure::Config {
                    key: "sasl.mechanism".into(),
                    during: "testing",
                },
                CdcCode::KafkaClientSetup,
            ),
            (
                KafkaFailure::TopicNotVisible {
                    topic: "t".into(),
                    waited: Duration::from_secs(30),
                },
                CdcCode::TopicUnavailable,
            ),
            (
                KafkaFailure::CreateTopic {
                    topic: "t".into(),
                    code: RDKafkaErrorCode::InvalidReplicationFactor,
                },
                CdcCode::TopicUnavailable,
            ),
            (
                KafkaFailure::CreateTopic {
                    topic: "t".into(),
                    code: RDKafkaErrorCode::TopicAuthorizationFailed,
                },
                CdcCode::KafkaAuthorization,
            ),
            (
                KafkaFailure::Unreachable {
                    bootstrap: "b:9092".into(),
                    waited: Duration::from_secs(10),
                    source: KafkaError::MetadataFetch(RDKafkaErrorCode::OperationTimedOut),
                },
                CdcCode::KafkaUnavailable,
            ),
        ];
        for (failure, expected) in cases {
            assert_eq!(classify(&failure).code, expected, "{failure}");
        }
    }

    #[test]
    fn offsets_store_errors_have_their_codes() {
        let cases = [
            (
                OffsetStoreError::NotCompacted {
                    topic: "o".into(),
                    policy: "delete".into(),
                },
                CdcCode::OffsetsStore,
            ),
            (
                OffsetStoreError::ReadTimeout {
                    topic: "o".into(),
                    waited: Duration::from_secs(1),
                    pending: 1,
                },
                CdcCode::KafkaUnavailable,
            ),
            (
                OffsetStoreError::NotText {
                    topic: "o".into(),
                    partition: 0,
                    offset: 3,
                },
                CdcCode::Corruption,
            ),
            (
                OffsetStoreError::Client(KafkaFailure::NoBrokers),
                CdcCode::KafkaClientSetup,
            ),
        ];
        for (error, expected) in cases {
            let shown = error.to_string();
            let stop = CdcError::from(error);
            assert_eq!(stop.code(), expected, "{shown}");
            assert!(stop.message().contains(&shown), "{stop}");
        }
    }
}
