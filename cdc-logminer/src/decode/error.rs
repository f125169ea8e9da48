//! The decoder's errors. Each names the row (table, XID, SCN, RS_ID, SSN, operation, status)
//! and the reason; none carries a column value unless `cdc.log.sensitive.data=true` and the
//! table has no excluded column. All map to CDC-3001.

use std::fmt;

use cdc_core::change::{MinedRow, Operation};
use cdc_core::error::{CdcCode, CdcError};
use cdc_core::position::{RsId, Scn, Xid};
use cdc_core::table::TableId;

use super::parse::{StatementKind, SyntaxError};

/// Where a failed row was: everything the operator needs to find it, and no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowContext {
    /// `PDB.OWNER.TABLE` or `OWNER.TABLE`, when known.
    pub table: Option<String>,
    pub xid: Xid,
    pub scn: Scn,
    pub rs_id: RsId,
    pub ssn: u64,
    pub operation: Operation,
    pub status: u32,
}

impl RowContext {
    pub fn of(row: &MinedRow, table: Option<&TableId>) -> RowContext {
        RowContext {
            table: table
                .map(ToString::to_string)
                .or_else(|| row.table().map(|t| t.to_string())),
            xid: row.xid,
            scn: row.scn,
            rs_id: row.rs_id,
            ssn: row.ssn,
            operation: row.operation,
            status: row.status,
        }
    }
}

impl fmt::Display for RowContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "table {}, XID {}, SCN {}, RS_ID {}, SSN {}, operation {}, status {}",
            self.table.as_deref().unwrap_or("<unknown>"),
            self.xid,
            self.scn,
            self.rs_id.to_string().trim(),
            self.ssn,
            self.operation,
            self.status
        )
    }
}

/// Why a row did not decode. Column names and types are metadata and may appear; values never.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeReason {
    /// The row's SQL_REDO is NULL.
    MissingSqlRedo,
    /// A CSF=1 row reached the decoder: its continuation rows were not joined to it.
    Continued,
    /// The last row of a reassembly still has CSF=1: the rest of the statement is missing.
    IncompleteContinuation,
    /// Continuation pieces belong to different transactions.
    ContinuationMismatch,
    /// A DML row for which the engine had no schema version.
    NoSchemaVersion,
    Syntax(SyntaxError),
    /// The statement is not the one the OPERATION_CODE says.
    OperationMismatch {
        statement: StatementKind,
    },
    /// The statement names another table than the schema version's.
    TableMismatch,
    /// The row was written under another table layout: STATUS 2 with generic `"COL n"` names or
    /// HEXTORAW literals, or `Dictionary Version Mismatch`. Replayable with a redo dictionary.
    DictionaryMismatch,
    /// A dictionary-mismatch row that does not fit the schema version valid at its SCN: a
    /// `"COL n"` past the version's segment columns, bytes that are no value of the column's
    /// type, text in a character set the connector does not read. That version is not the
    /// row's layout, so no exact version is known (`problem` names no value).
    OlderLayout {
        problem: String,
    },
    /// `/* No SQL_REDO for temporary tables */`: LogMiner writes no statement for a
    /// temporary table's rows, so there is nothing to decode. The engine never captures
    /// temporary tables; this names the row for `redo_parse` and for a dictionary that lists
    /// one by mistake.
    TemporaryTable,
    /// A DML row whose STATUS says the SQL cannot be relied on (2, 3, 4, …).
    UnexpectedStatus,
    UnknownColumn {
        column: String,
    },
    DuplicateColumn {
        column: String,
    },
    Conversion {
        column: String,
        data_type: String,
        problem: &'static str,
    },
}

impl fmt::Display for DecodeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeReason::MissingSqlRedo => f.write_str("the row has no SQL_REDO"),
            DecodeReason::Continued => {
                f.write_str("the row continues in the next row (CSF=1) and was not reassembled")
            }
            DecodeReason::IncompleteContinuation => {
                f.write_str("the statement's continuation rows (CSF=1) end before CSF=0")
            }
            DecodeReason::ContinuationMismatch => {
                f.write_str("continuation rows (CSF=1) of different transactions")
            }
            DecodeReason::NoSchemaVersion => {
                f.write_str("no schema version of the table is known for the row")
            }
            DecodeReason::Syntax(e) => e.fmt(f),
            DecodeReason::OperationMismatch { statement } => write!(
                f,
                "the SQL_REDO is an {} statement, which does not match the operation",
                statement.keyword()
            ),
            DecodeReason::TableMismatch => {
                f.write_str("the SQL_REDO names another table than the row's schema version")
            }
            DecodeReason::DictionaryMismatch => f.write_str(
                "dictionary mismatch: the row was written under another layout of the table \
                 (generic \"COL n\" names or HEXTORAW literals); it needs a redo dictionary replay",
            ),
            DecodeReason::OlderLayout { problem } => write!(
                f,
                "dictionary mismatch: the row does not fit the schema version valid at its SCN \
                 ({problem}), so no exact version of the table is known for it"
            ),
            DecodeReason::TemporaryTable => f.write_str(
                "LogMiner gives no SQL_REDO for temporary tables (\"/* No SQL_REDO for \
                 temporary tables */\"); a temporary table's rows cannot be captured",
            ),
            DecodeReason::UnexpectedStatus => {
                f.write_str("LogMiner marked the row's SQL as not reliable (STATUS)")
            }
            DecodeReason::UnknownColumn { column } => {
                write!(
                    f,
                    "column \"{column}\" is not in the table's schema version"
                )
            }
            DecodeReason::DuplicateColumn { column } => {
                write!(f, "column \"{column}\" appears twice in one image")
            }
            DecodeReason::Conversion {
                column,
                data_type,
                problem,
            } => write!(
                f,
                "the value of column \"{column}\" ({data_type}) does not convert: {problem}"
            ),
        }
    }
}

/// A row that cannot be decoded (CDC-3001). Boxed: it travels in every decode `Result`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    inner: Box<Inner>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    reason: DecodeReason,
    context: RowContext,
    /// The offending literal or an excerpt of the SQL_REDO; only filled with
    /// `cdc.log.sensitive.data=true` and never for a table with excluded columns.
    sensitive_detail: Option<String>,
}

impl DecodeError {
    pub fn new(reason: DecodeReason, context: RowContext) -> DecodeError {
        DecodeError {
            inner: Box::new(Inner {
                reason,
                context,
                sensitive_detail: None,
            }),
        }
    }

    pub fn reason(&self) -> &DecodeReason {
        &self.inner.reason
    }

    pub fn context(&self) -> &RowContext {
        &self.inner.context
    }

    /// The literal or SQL excerpt quoted under `cdc.log.sensitive.data=true`.
    pub fn sensitive_detail(&self) -> Option<&str> {
        self.inner.sensitive_detail.as_deref()
    }

    pub(crate) fn with_sensitive_detail(mut self, detail: String) -> DecodeError {
        self.inner.sensitive_detail = Some(detail);
        self
    }

    /// The row was written under another layout; the dictionary replay may decode it later.
    pub fn is_dictionary_mismatch(&self) -> bool {
        self.inner.reason == DecodeReason::DictionaryMismatch
    }

    /// The row was written under a layout the connector cannot decode it with (the lag case):
    /// CDC-6001, never a DLQ record.
    pub fn is_lag_case(&self) -> bool {
        matches!(
            self.inner.reason,
            DecodeReason::DictionaryMismatch | DecodeReason::OlderLayout { .. }
        )
    }

    /// The CDC code of the error: CDC-6001 for the lag case, CDC-3001 otherwise.
    pub fn code(&self) -> CdcCode {
        if self.is_lag_case() {
            CdcCode::DictionaryUnavailable
        } else {
            CdcCode::Decode
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot decode the row ({}): {}",
            self.inner.context, self.inner.reason
        )?;
        if let Some(detail) = &self.inner.sensitive_detail {
            write!(f, "; near: {detail}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeError {}

impl From<DecodeError> for CdcError {
    fn from(error: DecodeError) -> CdcError {
        CdcError::new(error.code(), error.to_string()).with_source(error)
    }
}

/// A configuration error: `cdc.columns.exclude` matches a key column, which the record key needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cdc.columns.exclude matches key column \"{column}\" of table {table}; key columns cannot be excluded"
)]
pub struct ExcludedKeyColumn {
    pub table: String,
    pub column: String,
}

impl From<ExcludedKeyColumn> for CdcError {
    fn from(error: ExcludedKeyColumn) -> CdcError {
        CdcError::new(CdcCode::Decode, error.to_string()).with_source(error)
    }
}
