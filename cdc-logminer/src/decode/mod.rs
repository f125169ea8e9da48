//! The SQL_REDO decoder: turns each V$LOGMNR_CONTENTS row into what the transaction buffer
//! applies. For DML that is a [`RowChange`](cdc_core::change::RowChange) converted with the
//! table's schema version; every other row is recognised and classified ([`Decoded`]). It is a
//! pure function of the row and the schema version, so a step's rows decode in parallel.
//!
//! ```text
//!  step rows ─join_continuations─► rows (CSF pieces joined verbatim)
//!      │
//!      ▼  the engine's steps: pipeline (a step of ≥ 1 024 rows decoded in chunks on a thread
//!      │  of its own while the chunks before are applied)
//!      ▼  decode_step (rayon when ≥ 256 rows; results in redo order)
//!  decode_row(row, DecodeTable)                 DecodeTable = layout + name index
//!      │                                                     + excluded-column flags
//!      ├─ onepass  LogMiner's own shape: each column resolved as it is named (excluded ones
//!      │           skipped), its value converted for the column's type as it is read
//!      │           ─► RowChange;  any other shape or any failure ─► the general path:
//!      ├─ layer 1  parse::parse_statement  zero-copy: &str slices of SQL_REDO
//!      │             Statement { table, items: [(Ident, Literal)] , row_id }
//!      ├─ filter   excluded columns dropped as soon as they are named
//!      ├─ layer 2  convert::convert(literal, column type) → Value
//!      └─ images   insert: after;  delete: before;  update: before = WHERE,
//!                  after = before overlaid with SET            (all in layout column order)
//! ```
//!
//! Errors ([`DecodeError`], CDC-3001) name the table, XID, SCN, RS_ID, SSN, operation and
//! reason. They quote no column value unless `cdc.log.sensitive.data=true`, and never for a
//! table with excluded columns. The decoder logs nothing but step sizes (and a decode thread that could not start). The NLS formats it
//! reads and every shape it accepts are documented in `docs/decoding.md`; [`inspect`] is the
//! first layer as the `redo_parse` inspection tool prints it.

mod convert;
mod csf;
mod ddl;
mod error;
mod filter;
pub mod inspect;
mod internal;
mod onepass;
mod onepass_older;
mod parse;
mod pipeline;
mod row;
mod step;
mod table;
mod temporal;

pub use convert::{ConvertError, convert};
pub use csf::{join_continuations, join_continuations_into, reassemble};
pub use ddl::{ColumnChange, DdlInfo, DdlKind, DdlTable, OtherDdl, classify_ddl, column_changes};
pub use error::{DecodeError, DecodeReason, ExcludedKeyColumn, RowContext};
pub use filter::{ColumnExclusions, ColumnFilter};
pub use internal::{Charsets, InternalFormatError, decode_internal};
pub use parse::{Literal, Statement, StatementKind, SyntaxError, parse_statement};
pub(crate) use pipeline::{DecodeThreadStopped, DecodedRows, StepDecoder, StepRows};
pub(crate) use row::restore_row_id;
pub use row::{DecodeOptions, Decoded, LobOp, XmlDocOp, decode_row, is_generic_column_name};
pub use step::{
    AUTO_MAX_THREADS, DecodePool, PARALLEL_MIN_ROWS, PoolError, decode_rows, decode_step,
    resolve_threads,
};
pub use table::{DecodeTable, check_excluded_keys};
pub use temporal::DATE_FORMATS;
