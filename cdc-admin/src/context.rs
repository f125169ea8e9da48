//! Where a command's facts come from: the connector's configuration (`--config FILE`, or the
//! running connector's own through its REST API), and the Kafka clients built from it.

use std::path::Path;
use std::time::Duration;

use cdc_core::config::{CdcConfig, Config};
use rdkafka::ClientConfig;

use crate::error::AdminError;
use crate::rest::ConnectClient;

/// Reads a connector configuration file: Java properties, or JSON (a Connect body or a flat
/// object), as `oracle-cdc run --config` does.
pub fn read_config_file(path: &Path) -> Result<CdcConfig, AdminError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| AdminError::Usage(format!("cannot read {}: {e}", path.display())))?;
    let parsed = if text.trim_start().starts_with('{') {
        Config::from_connect_json(&text)
    } else {
        Config::from_properties(&text)
    };
    let given = parsed.map_err(|e| AdminError::Usage(format!("{}: {e}", path.display())))?;
    given.validate().map_err(|errors| {
        AdminError::Usage(format!(
            "{} is not a valid configuration:\n{errors}",
            path.display()
        ))
    })
}

/// The configuration of connector `name` as its worker shows it (`GET
/// /connectors/{name}/config`). Passwords the worker masks stay masked: a cluster that needs
/// them needs `--config`.
pub fn config_from_rest(rest: &ConnectClient, name: &str) -> Result<CdcConfig, AdminError> {
    let body = rest.config(name)?;
    let pairs: Vec<(String, String)> = body
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(k, v)| {
                    let value = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    (k.clone(), value)
                })
                .collect()
        })
        .unwrap_or_default();
    Config::from_pairs(pairs).validate().map_err(|errors| {
        AdminError::Failed(format!(
            "the configuration of {name} read from {} does not validate here:\n{errors}",
            rest.base()
        ))
    })
}

/// The connector's configuration: `--config`, else the worker's.
pub fn connector_config(
    path: Option<&Path>,
    rest: &ConnectClient,
    name: Option<&str>,
) -> Result<CdcConfig, AdminError> {
    match path {
        Some(path) => read_config_file(path),
        None => {
            let name = rest.resolve(name)?;
            config_from_rest(rest, &name)
        }
    }
}

/// Kafka client settings of the connector (its brokers and `cdc.kafka.*` properties), with
/// `bootstrap` instead of its brokers when given.
pub fn kafka_config(
    config: &CdcConfig,
    bootstrap: Option<&str>,
) -> Result<ClientConfig, AdminError> {
    let brokers = if config.kafka.bootstrap_servers.is_empty() {
        config.connect.bootstrap_servers.join(",")
    } else {
        config.kafka.bootstrap_servers.join(",")
    };
    let brokers = bootstrap.map_or(brokers, str::to_owned);
    if brokers.is_empty() {
        return Err(AdminError::Usage(
            "no Kafka brokers: give --bootstrap, or a configuration with \
             cdc.kafka.bootstrap.servers or bootstrap.servers"
                .to_owned(),
        ));
    }
    let props: Vec<(String, String)> = config
        .kafka
        .client_properties
        .iter()
        .filter(|(k, _)| *k != "transactional.id")
        .map(|(k, v)| (k.to_owned(), v.expose().to_owned()))
        .collect();
    Ok(cdc_journal::kafka::client_config(&brokers, &props))
}

/// How long one call to the REST API or Kafka may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Who is running the tool, for the `operator` of the ops events: `--operator`, else `$USER`.
pub fn operator(given: Option<&str>) -> String {
    given
        .map(str::to_owned)
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("LOGNAME").ok())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}
