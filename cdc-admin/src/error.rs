//! What can go wrong, and the exit status each gives.

/// The exit status of a command refused for a usage error (sysexits' EX_USAGE).
pub const EXIT_USAGE: u8 = 64;

/// An admin command that did not do what it was asked. Messages never hold a password: the
/// configuration's secrets are never formatted, and the REST API's answers are shown as read.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The command line or a file it names is wrong (exit 64).
    #[error("{0}")]
    Usage(String),
    /// The tool refused to do what was asked, and changed nothing (exit 1).
    #[error("refused: {0}")]
    Refused(String),
    /// The connector's REST API could not be reached or answered with an error (exit 1).
    #[error("the REST API at {url}: {message}")]
    Rest { url: String, message: String },
    /// A Kafka topic could not be read or written (exit 1).
    #[error("Kafka: {0}")]
    Kafka(String),
    /// The database (or the simulator) could not be asked (exit 1).
    #[error("the database: {0}")]
    Source(String),
    /// Anything else that failed (exit 1).
    #[error("{0}")]
    Failed(String),
}

impl AdminError {
    /// 64 for a usage error, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            AdminError::Usage(_) => EXIT_USAGE,
            _ => 1,
        }
    }
}
