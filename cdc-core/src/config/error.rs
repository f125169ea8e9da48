//! What reading and validating a configuration can report.
//!
//! A [`ParseError`] means the text itself is malformed (with its line). [`ConfigErrors`]
//! holds every validation problem at once, each naming the key, the value given (secrets as
//! `****`) and what is allowed. [`ConfigWarning`]s never stop the connector but are never
//! silent either.

use std::fmt;

/// Malformed configuration text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the problem, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl ParseError {
    pub(crate) fn at(line: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            line: Some(line),
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ParseError {}

/// What is wrong with one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A `cdc.*` key that is not in the table.
    Unknown { did_you_mean: Option<String> },
    /// A key that must be given is absent (or empty).
    Missing { when: String },
    /// The value is not one the key allows.
    Invalid {
        allowed: String,
        detail: Option<String>,
    },
    /// The value is allowed alone but not together with another key.
    Conflict { detail: String },
    /// The key or value is valid, but what it asks for is not built (or cannot be honoured):
    /// `detail` says why, `supported` what is.
    Unsupported { detail: String, supported: String },
}

/// One validation problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    /// The value as given, secrets replaced by `****`; `None` when the key is absent.
    pub given: Option<String>,
    /// Line of the key in a properties file.
    pub line: Option<usize>,
    pub problem: Problem,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)?;
        if let Some(given) = &self.given {
            write!(f, " = \"{}\"", shown(given))?;
        }
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        match &self.problem {
            Problem::Unknown {
                did_you_mean: Some(known),
            } => {
                write!(f, ": not a known key; did you mean {known}?")
            }
            Problem::Unknown { did_you_mean: None } => {
                f.write_str(": not a known key (see docs/configuration.md)")
            }
            Problem::Missing { when } if when.is_empty() => f.write_str(": required"),
            Problem::Missing { when } => write!(f, ": required {when}"),
            Problem::Invalid {
                allowed,
                detail: Some(detail),
            } => {
                write!(f, ": {detail}; allowed: {allowed}")
            }
            Problem::Invalid {
                allowed,
                detail: None,
            } => write!(f, ": allowed: {allowed}"),
            Problem::Conflict { detail } => write!(f, ": {detail}"),
            Problem::Unsupported { detail, supported } => {
                write!(f, ": {detail}; supported: {supported}")
            }
        }
    }
}

/// A value on one line: control characters escaped, backslashes left alone so regular
/// expressions read as written.
fn shown(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Every problem found in one configuration, in the order of the file; missing keys last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors {
    errors: Vec<ConfigError>,
    warnings: Vec<ConfigWarning>,
}

impl ConfigErrors {
    pub(crate) fn new(mut errors: Vec<ConfigError>, warnings: Vec<ConfigWarning>) -> ConfigErrors {
        errors.sort_by_key(|error| (error.line.is_none(), error.line));
        ConfigErrors { errors, warnings }
    }

    pub fn errors(&self) -> &[ConfigError] {
        &self.errors
    }

    /// Warnings found on the way; shown with the errors, since fixing one may need the other.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    pub fn len(&self) -> usize {
        self.errors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, ConfigError> {
        self.errors.iter()
    }

    /// The keys with problems, in report order.
    pub fn keys(&self) -> Vec<&str> {
        self.errors.iter().map(|error| error.key.as_str()).collect()
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.errors.len();
        write!(
            f,
            "{count} configuration problem{}:",
            if count == 1 { "" } else { "s" }
        )?;
        for error in &self.errors {
            write!(f, "\n  - {error}")?;
        }
        for warning in &self.warnings {
            write!(f, "\n  warning: {warning}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl<'a> IntoIterator for &'a ConfigErrors {
    type Item = &'a ConfigError;
    type IntoIter = std::slice::Iter<'a, ConfigError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

/// Why a warning was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WarningKind {
    /// A reserved key was set: accepted, but it does nothing yet.
    ReservedKey,
    /// `tasks.max` above 1; one task runs.
    TasksMaxIgnored,
    /// The same key appears more than once; the last value is used.
    DuplicateKey,
    /// A key has no effect with the rest of the configuration.
    Ignored,
    /// A pass-through key that looks like a `cdc.*` key.
    LooksLikeCdcKey,
    /// A value is lowered to what the rest of the configuration allows.
    Lowered,
}

/// Something the operator should know that does not stop the connector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    pub key: String,
    pub kind: WarningKind,
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}
