//! Redo records: the row changes and control records a transaction writes, before and after
//! they have a place in a log, and the bytes each takes there.

use cdc_core::{ObjectId, OracleDateTime, RsId, Scn, Value, Xid};

use super::tables::TableRef;

/// One LOB row of the redo, in the shapes observed on Oracle 23ai (`docs/simulator.md`, the
/// LOB rows of "Reference behaviours and the simulator").
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LobRow {
    /// The locator select: OPERATION INTERNAL, code 9 (SEL_LOB_LOCATOR before 23ai),
    /// STATUS 0, SQL_REDO NULL.
    Locator,
    Write {
        offset: u64,
        data: Value,
    },
    Trim {
        length: u64,
    },
    Erase {
        amount: u64,
        offset: u64,
    },
}

/// What a DML redo row does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DmlKind {
    Insert {
        after: Vec<Value>,
    },
    Update {
        before: Vec<Value>,
        set: Vec<(usize, Value)>,
    },
    Delete {
        before: Vec<Value>,
    },
    /// Undo of an insert: `delete … where ROWID = '…'`.
    UndoInsert,
    /// Undo of an update: `update … set <old values> where ROWID = '…'`.
    UndoUpdate {
        set: Vec<(usize, Value)>,
    },
    /// Undo of a delete: the row inserted again.
    UndoDelete {
        row: Vec<Value>,
    },
}

/// What a redo row holds: a transaction control row, a row change, a DDL statement, or a LOB
/// row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    Start,
    Commit,
    Rollback,
    Dml {
        table: TableRef,
        object: ObjectId,
        version: usize,
        row_id: String,
        kind: DmlKind,
    },
    Unsupported {
        table: TableRef,
        object: ObjectId,
        row_id: String,
    },
    Ddl {
        owner: String,
        name: String,
        object: ObjectId,
        sql: String,
    },
    /// Part of a dictionary build (`bytes` of it): rows of SYS's LogMiner tables, which the
    /// mining query never returns.
    Dictionary {
        build: usize,
        bytes: u64,
    },
    /// A LOB row of one column: the row is located by its non-LOB columns (`locate`, the
    /// values of the row when the call ran).
    Lob {
        table: TableRef,
        object: ObjectId,
        version: usize,
        row_id: String,
        locate: Vec<Value>,
        column: usize,
        row: LobRow,
    },
}

/// A row change or control record, before it has a place in the log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    pub scn: Scn,
    pub time: OracleDateTime,
    pub xid: Xid,
    pub con: usize,
    pub ssn: u64,
    pub rollback: bool,
    pub zero_rs_id: bool,
    pub user: String,
    pub sid: u32,
    pub serial: u32,
    pub body: Body,
}

/// A record in a log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    pub rs_id: RsId,
    pub record: Record,
}

/// One redo record: the rows that share an RS_ID.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    pub records: Vec<Record>,
}

/// The bytes a row takes in the log (a header and its values, 4-byte aligned): what moves
/// RS_IDs on through blocks and fills a log or a strand.
pub(super) fn record_size(body: &Body) -> u64 {
    fn value_size(v: &Value) -> u64 {
        match v {
            Value::Text(s) => s.len() as u64 + 2,
            Value::Raw(b) => b.len() as u64 + 2,
            _ => 8,
        }
    }
    let payload = match body {
        Body::Dml { kind, .. } => match kind {
            DmlKind::Insert { after: row }
            | DmlKind::Delete { before: row }
            | DmlKind::UndoDelete { row } => row.iter().map(value_size).sum(),
            DmlKind::Update { before, set } => {
                before.iter().map(value_size).sum::<u64>()
                    + set.iter().map(|(_, v)| value_size(v)).sum::<u64>()
            }
            DmlKind::UndoUpdate { set } => set.iter().map(|(_, v)| value_size(v)).sum(),
            DmlKind::UndoInsert => 0,
        },
        Body::Ddl { sql, .. } => sql.len() as u64,
        Body::Dictionary { bytes, .. } => *bytes,
        Body::Lob { locate, row, .. } => {
            locate.iter().map(value_size).sum::<u64>()
                + match row {
                    LobRow::Write { data, .. } => value_size(data),
                    _ => 8,
                }
        }
        _ => 0,
    };
    (72 + payload).next_multiple_of(4)
}
