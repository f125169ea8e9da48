//! `GET /connector-plugins` and `PUT /connector-plugins/{plugin}/config/validate`: the plugins
//! this worker runs, and Connect's validation answer (`ConfigInfos`) for a configuration, built
//! from the connector's own validation (`cdc_core::config`) and its key table (`KEYS`).
//!
//! ```text
//!  flat JSON config ─► Config::from_connect_json ─► validate_for_delivery ─► ConfigErrors
//!                                                                              │ by key
//!  KEYS (group, kind, default, doc) ──► one {definition, value} per key ◄──────┘
//!  keys no definition covers (unknown cdc.* keys) ──► {definition: null, value: {errors}}
//! ```
//!
//! A secret is never shown: a `Secret` key, and any key whose name or value the configuration
//! masks, reads `[hidden]` as Connect shows a `PASSWORD`.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use cdc_core::config::{
    CONNECTOR_CLASS, Config, Group, KEYS, KeyDefault, KeyKind, KeyShape, KeySpec, KeyStatus, MASK,
    is_connector_class, is_secret_name, key_spec,
};
use serde_json::{Value as JsonValue, json};

use super::{Api, ApiError, Target, ok_json, query_values, require_json};

/// The converter the connector writes with; `key.converter` and `value.converter` accept it
/// alone.
const JSON_CONVERTER: &str = "org.apache.kafka.connect.json.JsonConverter";

/// What Connect shows for the value of a `PASSWORD`.
const HIDDEN: &str = "[hidden]";

/// `GET /connector-plugins[?connectorsOnly=false]`: Connect's `PluginInfo` list. Connect lists
/// only connectors unless `connectorsOnly` is given as anything but `true`; then the converter
/// follows.
pub(super) async fn list(State(api): State<Api>, RawQuery(query): RawQuery) -> Response {
    let connectors_only = query_values(query.as_deref(), "connectorsOnly")
        .first()
        .is_none_or(|value| value.eq_ignore_ascii_case("true"));
    let version = &api.info.version;
    let mut plugins = vec![json!({"class": CONNECTOR_CLASS, "type": "source", "version": version})];
    if !connectors_only {
        plugins.push(json!({"class": JSON_CONVERTER, "type": "converter", "version": version}));
    }
    ok_json(StatusCode::OK, JsonValue::Array(plugins))
}

/// `PUT /connector-plugins/{plugin}/config/validate` with a flat JSON configuration → 200 with
/// Connect's `ConfigInfos`, whatever the configuration's errors (they are in the body).
pub(super) async fn validate(
    target: Target,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    require_json(&headers)?;
    let plugin = target.name;
    let given = parse_config(&body)?;
    let included = given
        .get("connector.class")
        .map(str::trim)
        .filter(|class| !class.is_empty())
        .map(str::to_owned);
    if let Some(included) = &included
        && !alias(included).ends_with(alias(&plugin))
    {
        return Err(ApiError::bad_request(format!(
            "Included connector type {included} does not match request type {plugin}"
        )));
    }
    // The path names the plugin, so a body without `connector.class` is validated as it.
    let class = included.unwrap_or(plugin);
    if !is_connector_class(&class) {
        return Err(ApiError::bad_request(format!(
            "Failed to find any class that implements Connector and which name matches {class}, \
             available connectors are: {CONNECTOR_CLASS}"
        )));
    }
    // Validation compiles the configuration's regular expressions: off the runtime's threads.
    let infos = tokio::task::spawn_blocking(move || config_infos(&class, &given))
        .await
        .map_err(|error| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the validation did not complete: {error}"),
            )
        })?;
    Ok(ok_json(StatusCode::OK, infos))
}

/// Connect compares plugin names by their alias: a name ending in `Connector` without it.
fn alias(name: &str) -> &str {
    match name.strip_suffix("Connector") {
        Some(alias) if !alias.is_empty() => alias,
        _ => name,
    }
}

fn parse_config(body: &[u8]) -> Result<Config, ApiError> {
    let not_an_object = || {
        ApiError::bad_request(
            "The request body must be a JSON object of configuration keys and their values",
        )
    };
    let text = std::str::from_utf8(body).map_err(|_| not_an_object())?;
    if !text.trim_start().starts_with('{') {
        return Err(not_an_object());
    }
    Config::from_connect_json(text).map_err(|error| {
        ApiError::bad_request(format!(
            "The request body is not a valid configuration: {error}"
        ))
    })
}

/// Connect's `ConfigInfos` for `given`: every key of the table in document order, grouped,
/// with its value and the problems validation found with it; then the keys no definition
/// covers that have problems (an unknown `cdc.*` key, with its did-you-mean).
pub(crate) fn config_infos(class: &str, given: &Config) -> JsonValue {
    let mut problems: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Err(errors) = given.validate_for_delivery() {
        for error in &errors {
            problems
                .entry(error.key.clone())
                .or_default()
                .push(error.to_string());
        }
    }
    let shown: BTreeMap<&str, String> = given.iter_shown().collect();
    let error_count: usize = problems.values().map(Vec::len).sum();

    let mut groups = Vec::new();
    let mut configs = Vec::new();
    for group in Group::ALL {
        let mut order = 0;
        for spec in KEYS.iter().filter(|spec| spec.group == *group) {
            let keys: Vec<&str> = match spec.shape {
                KeyShape::Exact => vec![spec.key],
                // a family (`cdc.kafka.*`) shows the members given, not the family
                KeyShape::Prefix { .. } => given
                    .iter()
                    .map(|(key, _)| key)
                    .filter(|key| key_spec(key).is_some_and(|found| std::ptr::eq(found, spec)))
                    .collect(),
            };
            for key in keys {
                order += 1;
                let errors = problems.remove(key).unwrap_or_default();
                let value = shown_value(spec, key, shown.get(key).map(String::as_str));
                configs.push(json!({
                    "definition": definition(spec, key, *group, order),
                    "value": value_json(key, value, recommended(spec), errors),
                }));
            }
        }
        if order > 0 {
            groups.push(group.title());
        }
    }
    for (key, errors) in problems {
        let value = shown.get(key.as_str()).map(|shown| hidden_if_masked(shown));
        configs.push(json!({
            "definition": null,
            "value": value_json(&key, value, Vec::new(), errors),
        }));
    }
    json!({
        "name": class,
        "error_count": error_count,
        "groups": groups,
        "configs": configs,
    })
}

fn value_json(
    key: &str,
    value: Option<String>,
    recommended: Vec<&str>,
    errors: Vec<String>,
) -> JsonValue {
    json!({
        "name": key,
        "value": value,
        "recommended_values": recommended,
        "errors": errors,
        "visible": true,
    })
}

/// The value as given (masked as the configuration masks it), else the literal default, else
/// none; a secret as `[hidden]`.
fn shown_value(spec: &KeySpec, key: &str, shown: Option<&str>) -> Option<String> {
    let value = match shown {
        Some(shown) => Some(hidden_if_masked(shown)),
        None => spec.default_value().map(str::to_owned),
    };
    if is_password(spec, key) {
        return value.map(|_| HIDDEN.to_owned());
    }
    value
}

fn hidden_if_masked(shown: &str) -> String {
    if shown == MASK {
        HIDDEN.to_owned()
    } else {
        shown.to_owned()
    }
}

fn is_password(spec: &KeySpec, key: &str) -> bool {
    spec.kind == KeyKind::Secret || is_secret_name(key)
}

/// Connect's `ConfigKeyInfo` for `key` (the key itself, or a member of the family `spec`).
fn definition(spec: &KeySpec, key: &str, group: Group, order: usize) -> JsonValue {
    let required = spec.default == KeyDefault::Required;
    let importance = match (spec.status, spec.default) {
        (KeyStatus::Reserved, _) => "LOW",
        (_, KeyDefault::Required | KeyDefault::Conditional(_)) => "HIGH",
        _ => "MEDIUM",
    };
    let mut documentation = spec.doc.to_owned();
    match spec.default {
        KeyDefault::Conditional(when) => documentation.push_str(&format!(" Required {when}.")),
        KeyDefault::Derived(how) => documentation.push_str(&format!(" Default: {how}.")),
        _ => {}
    }
    documentation.push_str(&format!(" Allowed: {}.", spec.kind.allowed()));
    if spec.status == KeyStatus::Reserved {
        documentation.push_str(" Reserved: accepted but not built yet.");
    }
    json!({
        "name": key,
        "type": connect_type(spec, key),
        "required": required,
        "default_value": spec.default_value(),
        "importance": importance,
        "documentation": documentation,
        "group": group.title(),
        "width": "NONE",
        "display_name": key,
        "dependents": [],
        "order": order,
    })
}

/// Connect's `ConfigDef.Type` name for a kind of value.
fn connect_type(spec: &KeySpec, key: &str) -> &'static str {
    if is_password(spec, key) {
        return "PASSWORD";
    }
    match spec.kind {
        KeyKind::Integer { min, max }
            if min >= i64::from(i32::MIN) && max <= i64::from(i32::MAX) =>
        {
            "INT"
        }
        KeyKind::Integer { .. }
        | KeyKind::Unsigned
        | KeyKind::DurationMs { .. }
        | KeyKind::DurationMsOrMinusOne { .. }
        | KeyKind::Bytes { .. }
        | KeyKind::Scn => "LONG",
        KeyKind::ReplicationFactor => "SHORT",
        KeyKind::Boolean => "BOOLEAN",
        KeyKind::List | KeyKind::RegexList | KeyKind::OraCodes | KeyKind::Brokers => "LIST",
        KeyKind::ClassName => "CLASS",
        KeyKind::Secret => "PASSWORD",
        KeyKind::Choice(_)
        | KeyKind::Text
        | KeyKind::Name
        | KeyKind::Path
        | KeyKind::KeyColumns
        | KeyKind::DriverProperties
        | KeyKind::TimeOfDay
        | KeyKind::DatabaseUrl
        | KeyKind::Host
        | KeyKind::ListenAddress
        | KeyKind::ArchiveDestination
        | KeyKind::TopicPrefix
        | KeyKind::TopicName
        | KeyKind::TopicTemplate => "STRING",
    }
}

fn recommended(spec: &KeySpec) -> Vec<&'static str> {
    match spec.kind {
        KeyKind::Choice(values) => values.to_vec(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Config {
        Config::from_pairs([
            ("name", "orders-cdc"),
            ("connector.class", CONNECTOR_CLASS),
            ("cdc.source", "sim"),
            ("bootstrap.servers", "127.0.0.1:9092"),
            ("cdc.topic.prefix", "cdc"),
            ("cdc.tables.include", r"APP\..*"),
        ])
    }

    fn config<'a>(infos: &'a JsonValue, key: &str) -> &'a JsonValue {
        infos["configs"]
            .as_array()
            .and_then(|configs| configs.iter().find(|c| c["value"]["name"] == key))
            .unwrap_or_else(|| panic!("{key} is not among the configs"))
    }

    #[test]
    fn a_good_configuration_has_no_errors_and_every_key() {
        let infos = config_infos(CONNECTOR_CLASS, &good());
        assert_eq!(infos["name"], CONNECTOR_CLASS);
        assert_eq!(infos["error_count"], 0, "{infos:#}");
        let exact = KEYS
            .iter()
            .filter(|spec| spec.shape == KeyShape::Exact)
            .count();
        assert_eq!(infos["configs"].as_array().map(Vec::len), Some(exact));
        assert_eq!(infos["groups"][0], Group::Connect.title());

        let prefix = config(&infos, "cdc.topic.prefix");
        assert_eq!(prefix["value"]["value"], "cdc");
        assert_eq!(prefix["definition"]["required"], true);
        assert_eq!(prefix["definition"]["type"], "STRING");
        assert_eq!(prefix["definition"]["group"], Group::Topics.title());
        let mode = config(&infos, "cdc.capture.mode");
        assert_eq!(mode["value"]["value"], "online", "the default");
        assert_eq!(
            mode["value"]["recommended_values"],
            json!(["online", "archive_only"])
        );
        assert_eq!(
            config(&infos, "cdc.mining.max.logs.per.step")["definition"]["type"],
            "INT"
        );
        assert_eq!(
            config(&infos, "cdc.start.scn")["value"]["value"],
            JsonValue::Null
        );
    }

    #[test]
    fn errors_are_on_their_keys_and_unknown_keys_have_no_definition() {
        let mut given = good();
        given.set("cdc.capture.mode", "archive");
        given.set("cdc.mining.max.logs.per.stpe", "16");
        given.remove("cdc.topic.prefix");
        let infos = config_infos(CONNECTOR_CLASS, &given);
        assert_eq!(infos["error_count"], 3, "{infos:#}");
        let mode = config(&infos, "cdc.capture.mode");
        let errors = mode["value"]["errors"][0].as_str().unwrap_or_default();
        assert!(
            errors.contains("cdc.capture.mode") && errors.contains("archive"),
            "{errors}"
        );
        let typo = config(&infos, "cdc.mining.max.logs.per.stpe");
        assert_eq!(typo["definition"], JsonValue::Null);
        let errors = typo["value"]["errors"][0].as_str().unwrap_or_default();
        assert!(
            errors.contains("did you mean cdc.mining.max.logs.per.step?"),
            "{errors}"
        );
        assert_eq!(typo["value"]["value"], "16");
        let missing = config(&infos, "cdc.topic.prefix");
        assert!(
            missing["value"]["errors"][0]
                .as_str()
                .is_some_and(|error| error.contains("required"))
        );
    }

    /// No secret is echoed: a password key, a secret Kafka client property, or a misspelt
    /// password key.
    #[test]
    fn secrets_are_hidden() {
        let mut given = good();
        given.set("cdc.database.password", "hunter2");
        given.set("cdc.kafka.sasl.password", "hunter3");
        given.set("cdc.database.pasword", "hunter4");
        let infos = config_infos(CONNECTOR_CLASS, &given);
        let text = infos.to_string();
        for secret in ["hunter2", "hunter3", "hunter4"] {
            assert!(!text.contains(secret), "{secret} shown");
        }
        let password = config(&infos, "cdc.database.password");
        assert_eq!(password["value"]["value"], HIDDEN);
        assert_eq!(password["definition"]["type"], "PASSWORD");
        let sasl = config(&infos, "cdc.kafka.sasl.password");
        assert_eq!(sasl["value"]["value"], HIDDEN);
        assert_eq!(sasl["definition"]["type"], "PASSWORD");
        assert_eq!(
            config(&infos, "cdc.database.pasword")["value"]["value"],
            HIDDEN
        );
        let unset = config(&infos, "cdc.database.tls.truststore.password");
        assert_eq!(unset["value"]["value"], JsonValue::Null);
    }

    #[test]
    fn plugin_names_compare_by_alias() {
        assert_eq!(alias("OracleCdcSourceConnector"), "OracleCdcSource");
        assert_eq!(alias("Connector"), "Connector");
        assert!(alias(CONNECTOR_CLASS).ends_with(alias("OracleCdcSource")));
    }
}
