//! The worker's log levels as Kafka Connect's `/admin/loggers` shows and changes them (KIP-495,
//! KIP-976): a logger is a `tracing` target (`cdc_logminer`, `cdc_connect_bridge::worker`),
//! `root` is the level of every target no other logger covers, and setting a logger sets every
//! logger under it, as log4j does.
//!
//! ```text
//!  PUT /admin/loggers/cdc_logminer {"level": "DEBUG"}
//!     │ LogLevels::set_level: the table (root + one level per target) changes on a copy
//!     ▼ rendered as EnvFilter directives: "info,cdc_logminer=debug,rdkafka=warn"
//!  apply(directives): the binary's reload handle swaps the subscriber's filter
//!     │ Ok ─► the copy becomes the table; the loggers whose level changed are returned
//!     ▼ Err ─► nothing changed (the directives were refused)
//! ```
//!
//! The table is pure; only `apply` touches the subscriber, and the binary owns it (it builds the
//! subscriber), so this library never depends on which subscriber or format is running.
//! `tracing` matches a directive's target as a prefix of an event's target and the longest
//! match wins, which is the rule [`LogLevels::level`] reports with.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::EnvFilter;

/// Connect's name of the default level.
pub const ROOT: &str = "root";

/// The targets of the binary's own code, listed by `GET /admin/loggers` with their effective
/// level even while no level was set for them, as Connect lists the loggers that exist.
const KNOWN_TARGETS: &[&str] = &[
    "cdc_buffer",
    "cdc_connect_bridge",
    "cdc_core",
    "cdc_logminer",
    "cdc_offset",
    "oracle_cdc",
];

/// A logger's level as Connect's `LoggerLevel` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggerLevel {
    pub level: LevelFilter,
    /// When it was last set through [`LogLevels::set_level`], in ms since the epoch; `None`
    /// while it has its level from the start configuration.
    pub last_modified: Option<i64>,
}

impl LoggerLevel {
    /// The level in Connect's spelling.
    pub fn name(&self) -> String {
        connect_level_name(self.level)
    }
}

/// A level in Connect's spelling: `TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR`, `OFF`.
pub fn connect_level_name(level: LevelFilter) -> String {
    level.to_string().to_ascii_uppercase()
}

/// A log4j level name, as Connect takes it (any case), as a `tracing` level: `FATAL` is
/// `ERROR` and `ALL` is `TRACE`, since `tracing` has neither; `None` for anything else.
pub fn parse_connect_level(text: &str) -> Option<LevelFilter> {
    match text.trim().to_ascii_uppercase().as_str() {
        "OFF" => Some(LevelFilter::OFF),
        "FATAL" | "ERROR" => Some(LevelFilter::ERROR),
        "WARN" => Some(LevelFilter::WARN),
        "INFO" => Some(LevelFilter::INFO),
        "DEBUG" => Some(LevelFilter::DEBUG),
        "TRACE" | "ALL" => Some(LevelFilter::TRACE),
        _ => None,
    }
}

/// Why a level could not be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogLevelError {
    /// Not a `tracing` target: only letters, digits, `_`, `:`, `-` and `.` may be used.
    #[error(
        "{0:?} is not a logger name: loggers are tracing targets such as cdc_logminer or \
         cdc_connect_bridge::worker (letters, digits, _, :, - and .), or root"
    )]
    BadName(String),
    /// The subscriber refused the new filter.
    #[error("the log filter could not be changed: {0}")]
    Apply(String),
}

/// What changes the running subscriber's filter: takes `EnvFilter` directives.
type Apply = dyn Fn(&str) -> Result<(), String> + Send + Sync;

/// The log levels of the running process and the means to change them.
pub struct LogLevels {
    table: Mutex<LevelTable>,
    apply: Box<Apply>,
}

impl fmt::Debug for LogLevels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogLevels")
            .field("directives", &self.table.lock().directives())
            .finish_non_exhaustive()
    }
}

impl LogLevels {
    /// The levels `spec` (the `EnvFilter` directives the subscriber started with, such as
    /// `info,rdkafka=warn`) sets, changed later through `apply`, which hands the new
    /// directives to the subscriber.
    pub fn new(
        spec: &str,
        apply: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static,
    ) -> LogLevels {
        LogLevels {
            table: Mutex::new(LevelTable::parse(spec)),
            apply: Box::new(apply),
        }
    }

    /// Levels changed through a `tracing_subscriber` reload handle of an `EnvFilter`, for a
    /// subscriber of any type `S`.
    pub fn with_reload_handle<S: 'static>(
        spec: &str,
        handle: tracing_subscriber::reload::Handle<EnvFilter, S>,
    ) -> LogLevels {
        LogLevels::new(spec, move |directives| {
            let filter = EnvFilter::try_new(directives).map_err(|error| error.to_string())?;
            handle.reload(filter).map_err(|error| error.to_string())
        })
    }

    /// The directives the subscriber runs with now.
    pub fn directives(&self) -> String {
        self.table.lock().directives()
    }

    /// Every logger with a level, as `GET /admin/loggers` lists them: `root`, the loggers
    /// set, and the binary's own targets; a logger that is `OFF` is left out, as Connect
    /// leaves it out.
    pub fn all(&self) -> BTreeMap<String, LoggerLevel> {
        let table = self.table.lock();
        table
            .loggers()
            .into_iter()
            .map(|logger| {
                let level = table.level_of(&logger);
                (logger, level)
            })
            .filter(|(_, level)| level.level != LevelFilter::OFF)
            .collect()
    }

    /// The level of one logger: `root`, a logger set, or any target of the binary's own code
    /// (`cdc_logminer::engine`); `None` for a name no such logger has (a typo, usually).
    pub fn level(&self, logger: &str) -> Option<LoggerLevel> {
        let table = self.table.lock();
        table.exists(logger).then(|| table.level_of(logger))
    }

    /// Sets `logger` and every logger under it to `level` (`root`: every logger), and returns
    /// the loggers whose level changed, sorted, as Connect's `PUT` answers.
    pub fn set_level(
        &self,
        logger: &str,
        level: LevelFilter,
    ) -> Result<Vec<String>, LogLevelError> {
        if !is_logger_name(logger) {
            return Err(LogLevelError::BadName(logger.to_owned()));
        }
        let mut table = self.table.lock();
        let mut changed = table.clone();
        let affected = changed.set(logger, level, now_ms());
        (self.apply)(&changed.directives()).map_err(LogLevelError::Apply)?;
        *table = changed;
        Ok(affected)
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// `root`, or a name `tracing` can take as a directive's target.
fn is_logger_name(name: &str) -> bool {
    name.eq_ignore_ascii_case(ROOT)
        || (!name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-' | '.')))
}

/// The levels: the root level, one level per target, and the directives this table does not
/// model, kept as given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LevelTable {
    root: LevelFilter,
    targets: BTreeMap<String, LevelFilter>,
    /// Span and field directives (`cdc_logminer[step]=debug`) from the start configuration,
    /// rendered after the others unchanged.
    other: Vec<String>,
    last_modified: BTreeMap<String, i64>,
}

impl LevelTable {
    /// Reads `EnvFilter` directives. A bare level is the root; `target=level` a target; a bare
    /// target means every level, as in `EnvFilter`. Without a bare level nothing outside the
    /// targets is logged, which is `OFF` for the root.
    fn parse(spec: &str) -> LevelTable {
        let mut table = LevelTable {
            root: LevelFilter::OFF,
            targets: BTreeMap::new(),
            other: Vec::new(),
            last_modified: BTreeMap::new(),
        };
        for directive in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            if directive.contains(['[', '{']) {
                table.other.push(directive.to_owned());
                continue;
            }
            match directive.split_once('=') {
                None => match LevelFilter::from_str(directive) {
                    Ok(level) => table.root = level,
                    Err(_) => {
                        table
                            .targets
                            .insert(directive.to_owned(), LevelFilter::TRACE);
                    }
                },
                Some((target, level)) => match LevelFilter::from_str(level.trim()) {
                    Ok(level) => {
                        table.targets.insert(target.trim().to_owned(), level);
                    }
                    Err(_) => table.other.push(directive.to_owned()),
                },
            }
        }
        table
    }

    fn directives(&self) -> String {
        let mut out = vec![directive_level(self.root)];
        out.extend(
            self.targets
                .iter()
                .map(|(target, level)| format!("{target}={}", directive_level(*level))),
        );
        out.extend(self.other.iter().cloned());
        out.join(",")
    }

    /// The level an event of `target` is filtered at: the longest target set that is a
    /// prefix of it, else the root.
    fn effective(&self, target: &str) -> LevelFilter {
        if target.eq_ignore_ascii_case(ROOT) {
            return self.root;
        }
        self.targets
            .iter()
            .filter(|(set, _)| target.starts_with(set.as_str()))
            .max_by_key(|(set, _)| set.len())
            .map_or(self.root, |(_, level)| *level)
    }

    fn level_of(&self, logger: &str) -> LoggerLevel {
        let name = canonical(logger);
        LoggerLevel {
            level: self.effective(name),
            last_modified: self.last_modified.get(name).copied(),
        }
    }

    /// `root`, the targets set and the binary's own.
    fn loggers(&self) -> BTreeSet<String> {
        let mut loggers: BTreeSet<String> = self.targets.keys().cloned().collect();
        loggers.extend(KNOWN_TARGETS.iter().map(|target| (*target).to_owned()));
        loggers.insert(ROOT.to_owned());
        loggers
    }

    fn exists(&self, logger: &str) -> bool {
        let name = canonical(logger);
        name == ROOT
            || self.targets.contains_key(name)
            || KNOWN_TARGETS
                .iter()
                .any(|known| name == *known || name.starts_with(&format!("{known}::")))
    }

    /// Sets `logger` and the loggers under it (for `root`: all of them); returns those whose
    /// level changed.
    fn set(&mut self, logger: &str, level: LevelFilter, now_ms: i64) -> Vec<String> {
        let name = canonical(logger).to_owned();
        let mut touched: BTreeSet<String> = self
            .loggers()
            .into_iter()
            .filter(|known| name == ROOT || known.starts_with(name.as_str()))
            .collect();
        touched.insert(name.clone());
        let before: BTreeMap<String, LevelFilter> = touched
            .iter()
            .map(|logger| (logger.clone(), self.effective(logger)))
            .collect();
        if name == ROOT {
            self.targets.clear();
            self.root = level;
        } else {
            self.targets
                .retain(|target, _| !target.starts_with(name.as_str()));
            self.targets.insert(name, level);
        }
        let affected: Vec<String> = before
            .into_iter()
            .filter(|(logger, was)| self.effective(logger) != *was)
            .map(|(logger, _)| logger)
            .collect();
        for logger in &affected {
            self.last_modified.insert(logger.clone(), now_ms);
        }
        affected
    }
}

/// A level as `EnvFilter` directives write it: `info`, `off`.
fn directive_level(level: LevelFilter) -> String {
    level.to_string().to_ascii_lowercase()
}

/// `root` in any case is the root logger, as in Connect.
fn canonical(logger: &str) -> &str {
    if logger.eq_ignore_ascii_case(ROOT) {
        ROOT
    } else {
        logger
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_levels_map_to_tracing_levels() {
        let table = [
            ("TRACE", LevelFilter::TRACE),
            ("all", LevelFilter::TRACE),
            ("Debug", LevelFilter::DEBUG),
            ("INFO", LevelFilter::INFO),
            ("WARN", LevelFilter::WARN),
            ("ERROR", LevelFilter::ERROR),
            ("FATAL", LevelFilter::ERROR),
            ("off", LevelFilter::OFF),
        ];
        for (text, level) in table {
            assert_eq!(parse_connect_level(text), Some(level), "{text}");
        }
        for text in ["", "WARNING", "verbose", "5"] {
            assert_eq!(parse_connect_level(text), None, "{text}");
        }
    }

    #[test]
    fn start_directives_read_and_render_the_same() {
        let table = LevelTable::parse("info,rdkafka=warn");
        assert_eq!(table.root, LevelFilter::INFO);
        assert_eq!(table.directives(), "info,rdkafka=warn");
        let odd = LevelTable::parse("cdc_logminer, cdc_core[step]=debug ,warn");
        assert_eq!(odd.root, LevelFilter::WARN);
        assert_eq!(odd.effective("cdc_logminer::engine"), LevelFilter::TRACE);
        assert_eq!(
            odd.directives(),
            "warn,cdc_logminer=trace,cdc_core[step]=debug"
        );
        assert_eq!(LevelTable::parse("cdc_core=debug").root, LevelFilter::OFF);
    }

    /// Setting a logger sets those under it and reports only the loggers whose level changed;
    /// the longest target set decides a logger's level.
    #[test]
    fn a_logger_set_covers_the_loggers_under_it() {
        let mut table = LevelTable::parse("info,rdkafka=warn,cdc_logminer::engine=trace");
        let affected = table.set("cdc_logminer", LevelFilter::DEBUG, 7);
        assert_eq!(affected, ["cdc_logminer", "cdc_logminer::engine"]);
        assert_eq!(
            table.directives(),
            "info,cdc_logminer=debug,rdkafka=warn",
            "the logger under it was replaced"
        );
        assert_eq!(
            table.effective("cdc_logminer::engine::step"),
            LevelFilter::DEBUG
        );
        assert_eq!(table.effective("cdc_core"), LevelFilter::INFO);
        assert_eq!(table.level_of("cdc_logminer").last_modified, Some(7));
        assert_eq!(table.level_of("cdc_core").last_modified, None);

        assert!(
            table.set("cdc_logminer", LevelFilter::DEBUG, 8).is_empty(),
            "nothing changed"
        );
        assert_eq!(table.level_of("cdc_logminer").last_modified, Some(7));
    }

    #[test]
    fn root_sets_every_logger() {
        let mut table = LevelTable::parse("info,rdkafka=warn");
        let affected = table.set("ROOT", LevelFilter::DEBUG, 1);
        assert!(affected.contains(&"root".to_owned()), "{affected:?}");
        assert!(affected.contains(&"rdkafka".to_owned()), "{affected:?}");
        assert!(
            affected.contains(&"cdc_logminer".to_owned()),
            "{affected:?}"
        );
        assert_eq!(table.directives(), "debug");
    }

    #[test]
    fn only_known_or_set_loggers_exist() {
        let table = LevelTable::parse("info,rdkafka=warn");
        for logger in [
            "root",
            "Root",
            "rdkafka",
            "cdc_logminer",
            "cdc_logminer::engine",
        ] {
            assert!(table.exists(logger), "{logger}");
        }
        for logger in ["cdc_logminr", "cdc", "cdc_logminer_x", "org.apache.kafka"] {
            assert!(!table.exists(logger), "{logger}");
        }
    }

    /// The new directives reach the subscriber before the table changes; a refusal changes
    /// nothing.
    #[test]
    fn levels_change_only_when_the_subscriber_takes_them() {
        let seen = std::sync::Arc::new(Mutex::new(Vec::<String>::new()));
        let recorder = std::sync::Arc::clone(&seen);
        let levels = LogLevels::new("info", move |directives| {
            recorder.lock().push(directives.to_owned());
            if directives.contains("refused") {
                Err("no".to_owned())
            } else {
                Ok(())
            }
        });
        assert_eq!(
            levels.set_level("cdc_core", LevelFilter::DEBUG),
            Ok(vec!["cdc_core".to_owned()])
        );
        assert_eq!(seen.lock().as_slice(), ["info,cdc_core=debug"]);
        assert_eq!(
            levels.set_level("refused", LevelFilter::DEBUG),
            Err(LogLevelError::Apply("no".to_owned()))
        );
        assert_eq!(levels.directives(), "info,cdc_core=debug");
        assert!(matches!(
            levels.set_level("a=b", LevelFilter::DEBUG),
            Err(LogLevelError::BadName(_))
        ));
        assert_eq!(
            seen.lock().len(),
            2,
            "a bad name never reaches the subscriber"
        );
        let all = levels.all();
        assert_eq!(all["cdc_core"].name(), "DEBUG");
        assert!(all["cdc_core"].last_modified.is_some());
        assert_eq!(all["root"].name(), "INFO");
        assert_eq!(levels.level("nope"), None);
    }

    #[test]
    fn a_reload_handle_takes_the_directives() {
        let (layer, handle) = tracing_subscriber::reload::Layer::<
            EnvFilter,
            tracing_subscriber::Registry,
        >::new(EnvFilter::new("info"));
        let levels = LogLevels::with_reload_handle("info", handle.clone());
        levels.set_level("cdc_core", LevelFilter::DEBUG).unwrap();
        let now = handle.with_current(ToString::to_string).unwrap();
        assert!(now.contains("cdc_core=debug"), "{now}");
        drop(layer);
        assert!(matches!(
            levels.set_level("cdc_core", LevelFilter::TRACE),
            Err(LogLevelError::Apply(_))
        ));
    }
}
