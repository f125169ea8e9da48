//! Kafka I/O of the journal, and the one place every Kafka client of the product is configured
//! ([`client_config`]): it lives here, in the lowest crate that opens a Kafka client, and
//! `cdc-connect-bridge` re-exports it.

use rdkafka::ClientConfig;
use rdkafka::config::RDKafkaLogLevel;

/// A client configuration for `bootstrap` with `client_props` (`cdc.kafka.*`: security and the
/// like) and librdkafka's log level at warnings. Every Kafka client of the product starts here.
#[allow(clippy::disallowed_methods)] // the one place a ClientConfig is made
pub fn client_config(bootstrap: &str, client_props: &[(String, String)]) -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap);
    config.set_log_level(RDKafkaLogLevel::Warning);
    for (key, value) in client_props {
        config.set(key, value);
    }
    config
}
