//! The one error type of the crate, and how each error maps onto a CDC code.
//!
//! ```text
//!  spill file damaged / cut short / unreadable ........ Corruption         -> CDC-3002
//!  spill cap exceeded; spill write, open, dir failed .. SpillCapExceeded,
//!                                                       SpillIo            -> CDC-4001
//!  transaction older than max age (action fail) ....... TransactionTooOld  -> CDC-4004
//!  COMMIT of a released or discarded transaction ...... ReleasedCommit     -> CDC-7001
//!  orphan found (action fail) ......................... OrphanTransaction  -> CDC-7002
//!  any call after one of the above .................... Poisoned           -> the first code
//! ```

use std::fmt;
use std::io;
use std::path::PathBuf;

use cdc_core::{CdcCode, CdcError, ConXid, Scn};

/// One open transaction as stop messages and the "largest transactions" view name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnSummary {
    pub key: ConXid,
    pub username: Option<String>,
    pub first_scn: Scn,
    /// Changes it holds (for a spilled transaction: change rows minus undo rows written).
    pub events: u64,
    pub heap_bytes: u64,
    pub disk_bytes: u64,
}

impl TxnSummary {
    /// Heap and disk bytes together: the order of the "largest" view.
    pub fn total_bytes(&self) -> u64 {
        self.heap_bytes + self.disk_bytes
    }
}

impl fmt::Display for TxnSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (user {}, first SCN {}, {} events, {} bytes on heap, {} bytes on disk)",
            self.key,
            self.username.as_deref().unwrap_or("unknown"),
            self.first_scn,
            self.events,
            self.heap_bytes,
            self.disk_bytes
        )
    }
}

/// A list of transactions for a message: `a; b; c`, or `none open`.
pub(crate) struct Listed<'a>(pub &'a [TxnSummary]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none open");
        }
        for (i, t) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{t}")?;
        }
        Ok(())
    }
}

/// What went wrong in the buffer or in one of its policies.
#[derive(Debug, thiserror::Error)]
pub enum BufferError {
    /// A spill file is not what was written: a frame fails its CRC, is cut short or malformed,
    /// the file has the wrong length or cannot be read.
    #[error("spill file {} of transaction {key} is damaged: {detail}", path.display())]
    Corruption {
        key: ConXid,
        path: PathBuf,
        detail: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// Writing the next frame would take the spill files over `spill_max_bytes`.
    #[error(
        "spilled transactions would take {needed} bytes, more than the {cap} bytes allowed by \
         cdc.buffer.spill.max.bytes; the largest open transactions: {}",
        Listed(largest)
    )]
    SpillCapExceeded {
        needed: u64,
        cap: u64,
        largest: Vec<TxnSummary>,
    },
    /// The operating system refused a spill operation (a full volume among others).
    #[error(
        "could not {action} spill file {}: {source}; the largest open transactions: {}",
        path.display(),
        Listed(largest)
    )]
    SpillIo {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
        largest: Vec<TxnSummary>,
    },
    /// The age policy found transactions older than the maximum with action `fail`.
    #[error(
        "{} open longer than cdc.transaction.max.age.ms ({max_age_ms} ms): {}",
        if transactions.len() == 1 { "a transaction has been" } else { "transactions have been" },
        Listed(transactions)
    )]
    TransactionTooOld {
        max_age_ms: u64,
        transactions: Vec<TxnSummary>,
    },
    /// A COMMIT arrived for a transaction the connector already released or discarded.
    #[error(
        "a COMMIT was mined for transaction {key}, which was already released as an orphan or \
         discarded; publishing the rest of it would publish part of a transaction"
    )]
    ReleasedCommit { key: ConXid },
    /// Orphan detection found transactions while the action is `fail`.
    #[error(
        "orphaned {}: absent from GV$TRANSACTION in two consecutive checks, mined past without \
         a COMMIT or ROLLBACK, and the session that started it is gone: {}",
        if orphans.len() == 1 { "transaction" } else { "transactions" },
        Listed(orphans)
    )]
    OrphanTransaction { orphans: Vec<TxnSummary> },
    /// The buffer stopped at an earlier error and refuses further work, so that nothing built
    /// on a lost frame can be published.
    #[error("the transaction buffer stopped at an earlier error: {first}")]
    Poisoned { code: CdcCode, first: String },
}

impl BufferError {
    /// The CDC code the task stops with.
    pub fn code(&self) -> CdcCode {
        match self {
            BufferError::Corruption { .. } => CdcCode::Corruption,
            BufferError::SpillCapExceeded { .. } | BufferError::SpillIo { .. } => {
                CdcCode::BufferExhausted
            }
            BufferError::TransactionTooOld { .. } => CdcCode::TransactionTooOld,
            BufferError::ReleasedCommit { .. } => CdcCode::OrphanReleaseViolation,
            BufferError::OrphanTransaction { .. } => CdcCode::OrphanTransaction,
            BufferError::Poisoned { code, .. } => *code,
        }
    }
}

impl From<BufferError> for CdcError {
    fn from(error: BufferError) -> CdcError {
        CdcError::new(error.code(), error.to_string()).with_source(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::{ConId, Xid};

    fn summary(n: u16) -> TxnSummary {
        TxnSummary {
            key: ConXid::new(ConId(3), Xid::new(5, n, 900)),
            username: Some("APP".into()),
            first_scn: Scn(100),
            events: 7,
            heap_bytes: 10,
            disk_bytes: 20,
        }
    }

    #[test]
    fn codes_and_messages() {
        let io = BufferError::SpillIo {
            action: "write",
            path: "/spill/a.spill".into(),
            source: io::Error::from_raw_os_error(28),
            largest: vec![summary(1), summary(2)],
        };
        assert_eq!(io.code(), CdcCode::BufferExhausted);
        let text = io.to_string();
        assert!(text.contains("No space left on device"), "{text}");
        assert!(text.contains("3:5.1.900 (user APP, first SCN 100, 7 events, 10 bytes on heap, 20 bytes on disk); 3:5.2.900"), "{text}");
        let cdc: CdcError = io.into();
        assert!(
            cdc.to_string()
                .starts_with("[CDC-4001] could not write spill file")
        );
        assert!(std::error::Error::source(&cdc).is_some());

        let released = BufferError::ReleasedCommit {
            key: summary(1).key,
        };
        assert_eq!(released.code(), CdcCode::OrphanReleaseViolation);
        let old = BufferError::TransactionTooOld {
            max_age_ms: 5,
            transactions: vec![summary(1)],
        };
        assert_eq!(old.code(), CdcCode::TransactionTooOld);
        assert!(
            old.to_string()
                .starts_with("a transaction has been open longer")
        );
        let orphan = BufferError::OrphanTransaction { orphans: vec![] };
        assert_eq!(orphan.code(), CdcCode::OrphanTransaction);
        let poisoned = BufferError::Poisoned {
            code: CdcCode::Corruption,
            first: "x".into(),
        };
        assert_eq!(poisoned.code(), CdcCode::Corruption);
        let cap = BufferError::SpillCapExceeded {
            needed: 2,
            cap: 1,
            largest: vec![],
        };
        assert!(cap.to_string().ends_with("none open"));
    }
}
