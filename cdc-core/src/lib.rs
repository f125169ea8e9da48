//! `cdc-core`: the domain types every other oracle-cdc crate speaks.
//!
//! It sits at the bottom of the layers (see `docs/architecture.md`): positions in the redo stream,
//! the transaction and table identifiers, Oracle values, table layouts, the mined row and the
//! decoded change, the configuration with its validation, and the one table of CDC error codes with
//! the ORA codes mapped onto them. It is pure: no I/O, no threads; everything here is a function of
//! its inputs.

pub mod change;
pub mod config;
pub mod error;
pub mod ops;
pub mod ora;
pub mod position;
pub mod table;
pub mod value;

pub use change::{ChangeEvent, ChangeOp, CommittedTransaction, MinedRow, Operation, RowChange};
pub use error::{CdcClass, CdcCode, CdcError};
pub use ops::{DlqKind, OpsEvent, OpsKind};
pub use position::{ConId, ConXid, ObjectId, PositionError, RedoAddr, RedoThread, RsId, Scn, Xid};
pub use table::{
    ColumnDef, ColumnType, KeySource, SegmentSlot, SupplementalLogging, TableId, TableLayout,
    UniqueIndex, choose_key,
};
pub use value::{Decimal, IntervalNanos, OracleDateTime, TimeZone, Value};
