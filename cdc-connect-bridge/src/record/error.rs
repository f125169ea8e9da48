//! What can stop the record layer. Messages name tables and columns, never values.

use cdc_core::{CdcCode, CdcError};

/// A change the record layer cannot turn into Kafka records.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BridgeError {
    /// `cdc.key.missing=fail` and the table has no key.
    #[error(
        "table {table} has no primary key, no unique index on NOT NULL columns and no \
         cdc.key.columns entry, and cdc.key.missing=fail"
    )]
    NoKey { table: String },
    /// A `cdc.key.columns` entry names a column the table does not have (or that is excluded).
    #[error("cdc.key.columns names column {column} of table {table}, which {reason}")]
    BadKeyColumn {
        table: String,
        column: String,
        reason: &'static str,
    },
    /// A change lacks the value of a key column (a partial image).
    #[error("a change of table {table} at SCN {scn} carries no value for key column {column}")]
    MissingKeyValue {
        table: String,
        column: String,
        scn: u64,
    },
    /// `cdc.key.missing=rowid` and a change has no ROWID.
    #[error(
        "a change of table {table} at SCN {scn} has no ROWID, which keys its records \
         (cdc.key.missing=rowid)"
    )]
    MissingRowId { table: String, scn: u64 },
    /// A value that the column's record type cannot hold.
    #[error("column {column} of table {table}: {reason}")]
    Value {
        table: String,
        column: String,
        reason: &'static str,
    },
    /// An image names a column index the layout does not have.
    #[error("a change of table {table} names column #{index}, beyond its schema version {version}")]
    UnknownColumn {
        table: String,
        index: u16,
        version: u32,
    },
    /// The engine emitted a kind of record this record layer has no format for (the engine's
    /// `RecordKind` is non-exhaustive; the workspace builds them together, so only a new kind
    /// added to the engine without its format here).
    #[error(
        "the engine emitted a kind of record the record layer has no format for (a kind added \
         to the engine without its format in cdc-connect-bridge)"
    )]
    UnknownRecordKind,
    /// Two names became one through sanitising or adjustment.
    #[error("{what} {first:?} and {second:?} both become {name:?}")]
    NameCollision {
        what: &'static str,
        first: String,
        second: String,
        name: String,
    },
}

impl BridgeError {
    /// The CDC code the task stops with.
    pub fn code(&self) -> CdcCode {
        match self {
            BridgeError::NameCollision { .. } => CdcCode::NameCollision,
            _ => CdcCode::Decode,
        }
    }
}

impl From<BridgeError> for CdcError {
    fn from(error: BridgeError) -> CdcError {
        CdcError::new(error.code(), error.to_string())
    }
}
