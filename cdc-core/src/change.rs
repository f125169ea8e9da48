//! The change model: what LogMiner returns ([`MinedRow`]), what the decoder makes of a DML row
//! ([`RowChange`]), a change as the buffer holds it ([`ChangeEvent`]) and what a COMMIT hands
//! over ([`CommittedTransaction`]).
//!
//! ```text
//!  V$LOGMNR_CONTENTS row --decode--> RowChange --buffer (by ConXid)--> ChangeEvent*
//!                                                    COMMIT --> CommittedTransaction
//! ```

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::position::{
    ConId, ConXid, ObjectId, PositionError, RedoAddr, RedoThread, RsId, Scn, Xid,
};
use crate::table::TableId;
use crate::value::{OracleDateTime, Value};

/// OPERATION_CODE of V$LOGMNR_CONTENTS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    Internal,
    Insert,
    Delete,
    Update,
    Ddl,
    Start,
    Commit,
    SelLobLocator,
    LobWrite,
    LobTrim,
    /// A LONG / LONG RAW value written in pieces.
    LongData,
    ReplicationMarker,
    LobErase,
    MissingScn,
    Rollback,
    XmlDocBegin,
    XmlDocWrite,
    XmlDocEnd,
    ExtendedStringBegin,
    ExtendedStringWrite,
    ExtendedStringEnd,
    Unsupported,
    /// A code no source documents; carried, never guessed at.
    Other(u16),
}

impl Operation {
    /// Every documented code, for table tests and the simulator.
    pub const KNOWN: [Operation; 22] = [
        Operation::Internal,
        Operation::Insert,
        Operation::Delete,
        Operation::Update,
        Operation::Ddl,
        Operation::Start,
        Operation::Commit,
        Operation::SelLobLocator,
        Operation::LobWrite,
        Operation::LobTrim,
        Operation::LongData,
        Operation::ReplicationMarker,
        Operation::LobErase,
        Operation::MissingScn,
        Operation::Rollback,
        Operation::XmlDocBegin,
        Operation::XmlDocWrite,
        Operation::XmlDocEnd,
        Operation::ExtendedStringBegin,
        Operation::ExtendedStringWrite,
        Operation::ExtendedStringEnd,
        Operation::Unsupported,
    ];

    pub fn from_code(code: u16) -> Operation {
        match code {
            0 => Operation::Internal,
            1 => Operation::Insert,
            2 => Operation::Delete,
            3 => Operation::Update,
            5 => Operation::Ddl,
            6 => Operation::Start,
            7 => Operation::Commit,
            9 => Operation::SelLobLocator,
            10 => Operation::LobWrite,
            11 => Operation::LobTrim,
            24 => Operation::LongData,
            27 => Operation::ReplicationMarker,
            29 => Operation::LobErase,
            34 => Operation::MissingScn,
            36 => Operation::Rollback,
            68 => Operation::XmlDocBegin,
            70 => Operation::XmlDocWrite,
            71 => Operation::XmlDocEnd,
            91 => Operation::ExtendedStringBegin,
            92 => Operation::ExtendedStringWrite,
            93 => Operation::ExtendedStringEnd,
            255 => Operation::Unsupported,
            other => Operation::Other(other),
        }
    }

    pub fn code(self) -> u16 {
        match self {
            Operation::Internal => 0,
            Operation::Insert => 1,
            Operation::Delete => 2,
            Operation::Update => 3,
            Operation::Ddl => 5,
            Operation::Start => 6,
            Operation::Commit => 7,
            Operation::SelLobLocator => 9,
            Operation::LobWrite => 10,
            Operation::LobTrim => 11,
            Operation::LongData => 24,
            Operation::ReplicationMarker => 27,
            Operation::LobErase => 29,
            Operation::MissingScn => 34,
            Operation::Rollback => 36,
            Operation::XmlDocBegin => 68,
            Operation::XmlDocWrite => 70,
            Operation::XmlDocEnd => 71,
            Operation::ExtendedStringBegin => 91,
            Operation::ExtendedStringWrite => 92,
            Operation::ExtendedStringEnd => 93,
            Operation::Unsupported => 255,
            Operation::Other(code) => code,
        }
    }

    /// The OPERATION column's text.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Internal => "INTERNAL",
            Operation::Insert => "INSERT",
            Operation::Delete => "DELETE",
            Operation::Update => "UPDATE",
            Operation::Ddl => "DDL",
            Operation::Start => "START",
            Operation::Commit => "COMMIT",
            Operation::SelLobLocator => "SEL_LOB_LOCATOR",
            Operation::LobWrite => "LOB_WRITE",
            Operation::LobTrim => "LOB_TRIM",
            Operation::LongData => "LONG DATA",
            Operation::ReplicationMarker => "REPLICATION_MARKER",
            Operation::LobErase => "LOB_ERASE",
            Operation::MissingScn => "MISSING_SCN",
            Operation::Rollback => "ROLLBACK",
            Operation::XmlDocBegin => "XML DOC BEGIN",
            Operation::XmlDocWrite => "XML DOC WRITE",
            Operation::XmlDocEnd => "XML DOC END",
            Operation::ExtendedStringBegin => "EXTENDED_STRING_BEGIN",
            Operation::ExtendedStringWrite => "EXTENDED_STRING_WRITE",
            Operation::ExtendedStringEnd => "EXTENDED_STRING_END",
            Operation::Unsupported => "UNSUPPORTED",
            Operation::Other(_) => "UNKNOWN",
        }
    }

    /// Row-level DML the decoder turns into a [`RowChange`].
    pub fn is_dml(self) -> bool {
        matches!(
            self,
            Operation::Insert | Operation::Delete | Operation::Update
        )
    }

    /// Transaction control: START, COMMIT, ROLLBACK.
    pub fn is_transaction_control(self) -> bool {
        matches!(
            self,
            Operation::Start | Operation::Commit | Operation::Rollback
        )
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

/// The STATUS values of V$LOGMNR_CONTENTS (the DBMS_LOGMNR constants).
pub mod status {
    pub const VALID_SQL: u32 = 0;
    pub const INVALID_SQL: u32 = 2;
    pub const UNGUARANTEED_SQL: u32 = 3;
    pub const CORRUPTED_BLK_IN_REDO: u32 = 4;
    pub const ASSEMBLY_REQUIRED_SQL: u32 = 5;
    pub const HOLE_IN_LOGSTREAM: u32 = 1291;
    pub const CORRUPTED_BLOCKS_SKIPPED: u32 = 1343;
}

/// One row of V$LOGMNR_CONTENTS, with the columns the engine uses. Columns Oracle may leave
/// NULL are `Option`s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinedRow {
    pub scn: Scn,
    /// May be the all-zero "no address" on ROLLBACK rows.
    pub rs_id: RsId,
    pub ssn: u64,
    /// CSF: SQL_REDO continues in the next row.
    pub csf: bool,
    pub xid: Xid,
    #[serde(with = "operation_code")]
    pub operation: Operation,
    /// ROLLBACK = 1: an undo row of a partial or full rollback.
    pub rollback: bool,
    pub status: u32,
    pub info: Option<String>,
    pub seg_owner: Option<String>,
    pub table_name: Option<String>,
    pub data_obj: Option<ObjectId>,
    pub row_id: Option<String>,
    pub sql_redo: Option<String>,
    pub username: Option<String>,
    pub session: Option<u32>,
    pub serial: Option<u32>,
    pub src_con_id: ConId,
    pub src_con_name: Option<String>,
    pub thread: RedoThread,
    pub timestamp: Option<OracleDateTime>,
}

mod operation_code {
    use super::Operation;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(op: &Operation, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u16(op.code())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Operation, D::Error> {
        Ok(Operation::from_code(u16::deserialize(d)?))
    }
}

impl MinedRow {
    /// A row with every optional column NULL; tests and the simulator fill in the rest.
    pub fn new(scn: Scn, rs_id: RsId, ssn: u64, xid: Xid, operation: Operation) -> MinedRow {
        MinedRow {
            scn,
            rs_id,
            ssn,
            csf: false,
            xid,
            operation,
            rollback: false,
            status: status::VALID_SQL,
            info: None,
            seg_owner: None,
            table_name: None,
            data_obj: None,
            row_id: None,
            sql_redo: None,
            username: None,
            session: None,
            serial: None,
            src_con_id: ConId(0),
            src_con_name: None,
            thread: RedoThread(1),
            timestamp: None,
        }
    }

    /// The row's redo address; fails for the all-zero RS_ID.
    pub fn addr(&self) -> Result<RedoAddr, PositionError> {
        RedoAddr::new(self.rs_id, self.ssn)
    }

    /// The buffer key: (container, XID).
    pub fn con_xid(&self) -> ConXid {
        ConXid::new(self.src_con_id, self.xid)
    }

    /// The table the row names, when it names one.
    pub fn table(&self) -> Option<TableId> {
        let owner = self.seg_owner.as_ref()?;
        let table = self.table_name.as_ref()?;
        let id = TableId::new(owner.clone(), table.clone());
        Some(match &self.src_con_name {
            Some(pdb) if pdb != "CDB$ROOT" => id.in_pdb(pdb.clone()),
            _ => id,
        })
    }
}

/// The kind of a row change as records carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ChangeOp {
    Insert,
    Update,
    Delete,
}

impl ChangeOp {
    /// The Debezium envelope's `op`.
    pub fn code(self) -> &'static str {
        match self {
            ChangeOp::Insert => "c",
            ChangeOp::Update => "u",
            ChangeOp::Delete => "d",
        }
    }
}

/// One column of a row image: the column's index in the layout's `columns`, and its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnValue {
    pub column: u16,
    pub value: Value,
}

/// A decoded DML row: a pure function of the mined row and the table's schema version.
/// An insert has no before image, a delete no after image; an update's after image is its
/// before image overlaid with the SET items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowChange {
    pub op: ChangeOp,
    /// Shared by every row decoded with the same schema version: a row carries no copy of the
    /// names (serialized as the plain `TableId`).
    pub table: Arc<TableId>,
    pub schema_version: u32,
    pub before: Option<Vec<ColumnValue>>,
    pub after: Option<Vec<ColumnValue>>,
    pub row_id: Option<String>,
}

/// A change as the buffer holds it: where it was in the redo, and what it changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeEvent {
    pub scn: Scn,
    pub addr: RedoAddr,
    pub change: RowChange,
}

/// What a COMMIT row says about the transaction it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitInfo {
    pub con_xid: ConXid,
    pub pdb: Option<String>,
    pub commit_scn: Scn,
    pub commit_addr: RedoAddr,
    pub commit_time: Option<OracleDateTime>,
    pub thread: RedoThread,
    pub username: Option<String>,
    /// SCN of the transaction's first buffered change.
    pub first_scn: Scn,
    /// Number of changes the transaction publishes.
    pub event_count: u64,
    /// Bytes of change data the transaction held when it committed (as the buffer measures
    /// it); what `cdc.eos.split.max.bytes` bounds. 0 when unknown.
    #[serde(default)]
    pub data_bytes: u64,
}

/// A committed transaction with its changes in redo order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommittedTransaction {
    pub info: CommitInfo,
    pub changes: Vec<ChangeEvent>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_codes_round_trip() {
        for op in Operation::KNOWN {
            assert_eq!(Operation::from_code(op.code()), op);
        }
        assert_eq!(Operation::from_code(29), Operation::LobErase);
        assert_eq!(Operation::from_code(36), Operation::Rollback);
        assert_eq!(Operation::from_code(28), Operation::Other(28));
        assert_eq!(Operation::from_code(28).code(), 28);
        let mut codes: Vec<u16> = Operation::KNOWN.iter().map(|o| o.code()).collect();
        codes.dedup();
        assert_eq!(codes.len(), Operation::KNOWN.len());
    }

    #[test]
    fn mined_row_keys() {
        let mut row = MinedRow::new(
            Scn(5),
            RsId::new(1, 2, 3),
            4,
            Xid::new(5, 12, 900),
            Operation::Insert,
        );
        row.src_con_id = ConId(3);
        row.src_con_name = Some("FREEPDB1".into());
        row.seg_owner = Some("APP".into());
        row.table_name = Some("T".into());
        assert_eq!(row.con_xid().to_string(), "3:5.12.900");
        assert_eq!(row.table().unwrap().to_string(), "FREEPDB1.APP.T");
        assert!(row.addr().is_ok());
        row.rs_id = RsId::NONE;
        assert!(row.addr().is_err());
        let json = serde_json::to_string(&row).unwrap();
        assert!(json.contains(r#""operation":1"#));
        assert_eq!(serde_json::from_str::<MinedRow>(&json).unwrap(), row);
    }
}
