//! The connector's configuration: one table of keys, reading, validation, the typed result.
//!
//! ```text
//!  .properties text ─► Config::from_properties ──┐
//!  Connect JSON ─────► Config::from_connect_json ┴─► Config (keys and values as given)
//!                                                       │ validate(): every problem at once
//!                                                       ▼
//!              CdcConfig (typed, defaults applied) + warnings   or   ConfigErrors
//!
//!  KEYS (the key table) drives validation, defaults, suggestions and render_markdown(),
//!  which is docs/configuration.md.
//! ```
//!
//! Pure: text in, values out. The caller reads the file, and passes what depends on the
//! machine (temporary directory, core count) to [`CdcConfig::spill_dir`] and
//! [`CdcConfig::decode_threads`]. Secrets are held in [`Secret`] and never printed.

mod choices;
mod connect_json;
mod error;
mod keys;
mod markdown;
mod properties;
mod secret;
mod settings;
mod tables;
mod topics;
mod validate;
mod values;

use std::fmt;

pub use choices::{
    CaptureMode, DecimalMode, DecodeErrorAction, ExactlyOnceSupport, JournalConverterKind,
    KeyMissing, LobMode, LobOversizeAction, MaxAgeAction, MiningMode, NameAdjustment, OrphanAction,
    OutputFormat, SimOpenMode, SimRole, SnapshotMode, SourceKind, TemporalMode,
    TransactionBoundary,
};
pub use error::{ConfigError, ConfigErrors, ConfigWarning, ParseError, Problem, WarningKind};
pub use keys::{
    Group, KEYS, KeyDefault, KeyKind, KeyShape, KeySpec, KeyStatus, key_spec, suggest_key,
};
pub use markdown::render_markdown;
pub use secret::{MASK, Properties, PropertyValue, Secret, is_secret_name};
pub use settings::{
    BufferSettings, CaptureSettings, CdcConfig, ConnectSettings, DatabaseEndpoint,
    DatabaseSettings, DecodeSettings, DictionarySettings, EosSettings, HeartbeatSettings,
    JournalSettings, KafkaSettings, KeySettings, LobSettings, MiningSettings, OracleLogin,
    PollSettings, RestSettings, RetrySettings, SIM_PREFLIGHT_GRANTS, SimPreflightCondition,
    SimSettings, SnapshotSettings, TopicSettings, TransactionSettings, default_spill_dir,
};
pub use tables::{NamePatterns, TableMap, TableSelection, qualified_table};
pub use topics::{MAX_TOPIC_LEN, TopicTemplate, TopicVar, sanitize_topic_name};
pub use validate::{CONNECTOR_CLASS, is_connector_class};
pub use values::{HostPort, TimeOfDay};

/// One key as given.
#[derive(Clone, PartialEq, Eq)]
struct Entry {
    key: String,
    value: String,
    /// Line in a properties file; JSON has none.
    line: Option<usize>,
}

/// A key given more than once; the last value wins, as in Java and Kafka Connect.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Duplicate {
    key: String,
    first_line: Option<usize>,
    line: Option<usize>,
}

/// The configuration as given: keys and raw values, in order, before validation.
///
/// `Debug` masks values whose key names a secret.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Config {
    entries: Vec<Entry>,
    duplicates: Vec<Duplicate>,
}

impl Config {
    pub fn new() -> Config {
        Config::default()
    }

    /// Reads Java `.properties` text (`#`/`!` comments, `key=value`, `key: value`,
    /// `key value`, backslash continuation, `\uXXXX` and `\t \n \\` escapes).
    pub fn from_properties(text: &str) -> Result<Config, ParseError> {
        let mut config = Config::new();
        for line in properties::parse_properties(text)? {
            config.insert(line.key, line.value, Some(line.line));
        }
        Ok(config)
    }

    /// Reads a Kafka Connect JSON body, `{"name": …, "config": {…}}`, or a flat
    /// `{"key": "value"}` object. Numbers and booleans become their text; `null` leaves the
    /// key unset.
    pub fn from_connect_json(text: &str) -> Result<Config, ParseError> {
        let mut config = Config::new();
        for (key, value) in connect_json::parse_connect_json(text)? {
            match value {
                Some(value) => config.insert(key, value, None),
                None => config.remove(&key),
            }
        }
        Ok(config)
    }

    /// Builds a configuration from pairs, as if read from a file without line numbers.
    pub fn from_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Config
    where
        K: Into<String>,
        V: Into<String>,
    {
        let mut config = Config::new();
        for (key, value) in pairs {
            config.set(key, value);
        }
        config
    }

    /// Sets a key, replacing any earlier value.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        let value = value.into();
        match self.entries.iter_mut().find(|entry| entry.key == key) {
            Some(entry) => {
                entry.value = value;
                entry.line = None;
            }
            None => self.entries.push(Entry {
                key,
                value,
                line: None,
            }),
        }
    }

    /// Removes a key; absent keys take their default.
    pub fn remove(&mut self, key: &str) {
        self.entries.retain(|entry| entry.key != key);
    }

    fn insert(&mut self, key: String, value: String, line: Option<usize>) {
        match self.entries.iter_mut().find(|entry| entry.key == key) {
            Some(entry) => {
                self.duplicates.push(Duplicate {
                    key: key.clone(),
                    first_line: entry.line,
                    line,
                });
                entry.value = value;
                entry.line = line;
            }
            None => self.entries.push(Entry { key, value, line }),
        }
    }

    /// The raw value of a key, as given (secrets included: this is the caller's own text).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entry(key).map(|entry| entry.value.as_str())
    }

    /// The line a key was read from, for properties text.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.entry(key).and_then(|entry| entry.line)
    }

    fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.key == key)
    }

    /// Keys and raw values in the order given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|entry| (entry.key.as_str(), entry.value.as_str()))
    }

    /// Keys and values as they may be shown (the REST API's `GET /connectors/{name}/config`,
    /// errors, `Debug`): secrets masked, and so are credentials in database URLs and the secret
    /// entries of `cdc.database.connection.properties`.
    pub fn iter_shown(&self) -> impl Iterator<Item = (&str, String)> {
        self.entries.iter().map(|entry| {
            (
                entry.key.as_str(),
                validate::display_value(&entry.key, &entry.value),
            )
        })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Checks every key and returns the typed configuration, or every problem found.
    pub fn validate(&self) -> Result<CdcConfig, ConfigErrors> {
        validate::validate(self)
    }

    /// [`Config::validate`] for a connector that delivers to Kafka (the `oracle-cdc` binary):
    /// naming no brokers (`bootstrap.servers`, or `cdc.kafka.bootstrap.servers`) is one more
    /// problem, reported with the others. An embedder of the engine alone needs no brokers.
    pub fn validate_for_delivery(&self) -> Result<CdcConfig, ConfigErrors> {
        validate::validate_with(self, true)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.entries.iter().map(|entry| {
            (
                &entry.key,
                validate::display_value(&entry.key, &entry.value),
            )
        });
        f.debug_struct("Config")
            .field("entries", &DebugMap(shown.collect()))
            .finish()
    }
}

struct DebugMap<'a>(Vec<(&'a String, String)>);

impl fmt::Debug for DebugMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}
