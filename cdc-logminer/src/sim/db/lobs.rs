//! LOBs: which values are stored out of the row, the LOB rows (INTERNAL, LOB_WRITE, LOB_TRIM,
//! LOB_ERASE) that carry them, and DBMS_LOB calls on existing rows.

use cdc_core::change::ChangeOp;
use cdc_core::{ColumnDef, Scn, Value};

use super::SimDatabase;
use super::locks::RowKey;
use super::ops::{ColumnInput, RowSel};
use super::records::{Body, Group, LobRow};
use super::sessions::SessionName;
use super::tables::TableRef;
use super::transactions::TxChange;
use crate::sim::SimError;

/// A DBMS_LOB call. Offsets are 1-based; lengths and offsets count characters of a CLOB or
/// NCLOB (code points) and bytes of a BLOB.
#[derive(Debug)]
pub(super) enum LobCall<V = Value> {
    /// `DBMS_LOB.WRITE`: text (CLOB, NCLOB) or bytes (BLOB) at `offset`; a write past the end
    /// fills the gap with spaces or zero bytes.
    Write { offset: u64, data: V },
    /// `DBMS_LOB.TRIM` to `length`.
    Trim { length: u64 },
    /// `DBMS_LOB.ERASE`: `amount` characters or bytes from `offset` become spaces or zero
    /// bytes.
    Erase { amount: u64, offset: u64 },
}

impl<V: ColumnInput> LobCall<&V> {
    /// The call with its data read as the LOB column's type.
    fn read(self, column: &ColumnDef) -> Result<LobCall, SimError> {
        Ok(match self {
            LobCall::Write { offset, data } => LobCall::Write {
                offset,
                data: data.read(column)?,
            },
            LobCall::Trim { length } => LobCall::Trim { length },
            LobCall::Erase { amount, offset } => LobCall::Erase { amount, offset },
        })
    }
}

/// A LOB value is stored in the row up to this many bytes (ENABLE STORAGE IN ROW); a CLOB or
/// NCLOB is stored as UTF-16 in an AL32UTF8 database, so about 1 982 characters fit, which
/// matches the "about 2k" threshold the reference reports.
pub const LOB_INLINE_MAX_BYTES: usize = 3964;

/// Characters (CLOB, NCLOB) or bytes (BLOB) per LOB_WRITE row of an out-of-row value.
pub const LOB_WRITE_CHUNK: usize = 2000;

/// Whether a LOB value is stored out of the row, so that LogMiner shows it as LOB rows.
pub fn lob_out_of_row(ty: &cdc_core::ColumnType, value: &Value) -> bool {
    match (ty, value) {
        (cdc_core::ColumnType::Clob | cdc_core::ColumnType::NClob, Value::Text(s)) => {
            s.encode_utf16().count() * 2 > LOB_INLINE_MAX_BYTES
        }
        (cdc_core::ColumnType::Blob, Value::Raw(b)) => b.len() > LOB_INLINE_MAX_BYTES,
        _ => false,
    }
}

/// The values a LOB row's select locates the row by: its non-LOB columns (NULL in the LOB
/// places).
pub(super) fn locating_values(columns: &[cdc_core::ColumnDef], row: &[Value]) -> Vec<Value> {
    columns
        .iter()
        .zip(row)
        .map(|(c, v)| {
            if c.data_type.is_lob() {
                Value::Null
            } else {
                v.clone()
            }
        })
        .collect()
}

/// Length of a LOB value: characters of text, bytes of binary.
fn lob_length(value: &Value) -> u64 {
    match value {
        Value::Text(s) => s.chars().count() as u64,
        Value::Raw(b) => b.len() as u64,
        _ => 0,
    }
}

/// LOB_WRITE rows of `data` written from `offset` on, [`LOB_WRITE_CHUNK`] characters or bytes
/// each.
fn lob_chunks(data: &Value, offset: u64) -> Vec<LobRow> {
    match data {
        Value::Text(s) => {
            let chars: Vec<char> = s.chars().collect();
            chars
                .chunks(LOB_WRITE_CHUNK)
                .enumerate()
                .map(|(n, c)| LobRow::Write {
                    offset: offset + (n * LOB_WRITE_CHUNK) as u64,
                    data: Value::Text(c.iter().collect()),
                })
                .collect()
        }
        Value::Raw(b) => b
            .chunks(LOB_WRITE_CHUNK)
            .enumerate()
            .map(|(n, c)| LobRow::Write {
                offset: offset + (n * LOB_WRITE_CHUNK) as u64,
                data: Value::Raw(c.to_vec()),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The value a DBMS_LOB call leaves in a non-NULL LOB.
fn apply_lob_call(
    ty: &cdc_core::ColumnType,
    current: &Value,
    call: &LobCall,
) -> Result<Value, SimError> {
    let binary = matches!(ty, cdc_core::ColumnType::Blob);
    // work on code points or bytes alike
    let mut units: Vec<u32> = match current {
        Value::Text(s) if !binary => s.chars().map(u32::from).collect(),
        Value::Raw(b) if binary => b.iter().map(|&b| u32::from(b)).collect(),
        Value::EmptyLob => Vec::new(),
        other => {
            return Err(SimError::Scenario(format!(
                "a LOB call on a value of the wrong kind: {other:?}"
            )));
        }
    };
    let fill = if binary { 0 } else { u32::from(' ') };
    let bad = |what: &str| {
        SimError::Ora(
            cdc_core::ora::OraCode(21560),
            format!("ORA-21560: argument {what} is null, invalid, or out of range"),
        )
    };
    match call {
        LobCall::Write { offset, data } => {
            if *offset == 0 {
                return Err(bad("4 (offset)"));
            }
            let new: Vec<u32> = match data {
                Value::Text(s) if !binary => s.chars().map(u32::from).collect(),
                Value::Raw(b) if binary => b.iter().map(|&b| u32::from(b)).collect(),
                _ => return Err(bad("buffer")),
            };
            let start = (*offset - 1) as usize;
            if units.len() < start {
                units.resize(start, fill);
            }
            for (k, u) in new.into_iter().enumerate() {
                match units.get_mut(start + k) {
                    Some(slot) => *slot = u,
                    None => units.push(u),
                }
            }
        }
        LobCall::Trim { length } => {
            if *length as usize > units.len() {
                return Err(bad("2 (new length)"));
            }
            units.truncate(*length as usize);
        }
        LobCall::Erase { amount, offset } => {
            if *offset == 0 {
                return Err(bad("3 (offset)"));
            }
            let start = (*offset - 1) as usize;
            let end = start.saturating_add(*amount as usize).min(units.len());
            for slot in units.iter_mut().take(end).skip(start) {
                *slot = fill;
            }
        }
    }
    Ok(if binary {
        Value::Raw(units.into_iter().map(|u| u as u8).collect())
    } else {
        Value::Text(units.into_iter().filter_map(char::from_u32).collect())
    })
}

impl SimDatabase {
    /// The column types of a table's current layout, and the values of a row's non-LOB
    /// columns (NULL in the LOB places), which locate the row in a LOB row's select.
    pub(super) fn lob_context(
        &self,
        t: TableRef,
        row: &[Value],
    ) -> Result<(Vec<cdc_core::ColumnType>, Vec<Value>), SimError> {
        let layout = self
            .table(t)?
            .layout()
            .ok_or_else(|| SimError::Scenario("no layout".into()))?;
        let types: Vec<cdc_core::ColumnType> =
            layout.columns.iter().map(|c| c.data_type.clone()).collect();
        Ok((types, locating_values(&layout.columns, row)))
    }

    /// The LOB rows of writing a whole out-of-row value: the locator (INTERNAL), one
    /// LOB_WRITE per chunk, and on BasicFile storage another INTERNAL and a LOB_TRIM.
    pub(super) fn written_lob_rows(&self, value: &Value) -> Vec<LobRow> {
        let mut rows = vec![LobRow::Locator];
        rows.extend(lob_chunks(value, 1));
        if self.config.basicfile_lobs {
            rows.push(LobRow::Locator);
            rows.push(LobRow::Trim {
                length: lob_length(value),
            });
        }
        rows
    }

    /// Writes LOB rows, each a redo record of its own with its own SSN, in the open
    /// transaction (after the statement that started it).
    pub(super) fn lob_records(
        &mut self,
        session: &SessionName,
        bodies: Vec<Body>,
    ) -> Result<Option<Scn>, SimError> {
        let mut first = None;
        for body in bodies {
            let scn = self.next_scn();
            first.get_or_insert(scn);
            let ssn = self.next_ssn(session)?;
            let record = self.record(session, scn, ssn, false, body)?;
            self.emit(
                session,
                Group {
                    records: vec![record],
                },
            );
        }
        Ok(first)
    }

    /// A DBMS_LOB call on an existing row: the row's LOB value changes and only LOB rows (with
    /// the real ROWID) reach the redo; the ground truth has it as an UPDATE marked `lob_only`.
    pub(super) fn lob_call<V: ColumnInput>(
        &mut self,
        session: &SessionName,
        name: &str,
        sel: &RowSel<V>,
        column: &str,
        call: LobCall<&V>,
    ) -> Result<(), SimError> {
        let t = self.find_table(Some(session), name)?;
        let row_id = self.select_row(t, sel)?;
        self.lock(
            session,
            RowKey {
                table: t,
                row_id: row_id.clone(),
            },
        )?;
        let table = self.table(t)?;
        let layout = table
            .layout()
            .ok_or_else(|| SimError::Scenario("no layout".into()))?;
        let i = layout
            .column_index(column)
            .ok_or_else(|| SimError::Scenario(format!("{}: no column {column}", table.id)))?;
        let ty = layout.columns[i].data_type.clone();
        if !ty.is_lob() || matches!(ty, cdc_core::ColumnType::XmlType) {
            return Err(SimError::Scenario(format!(
                "{}.{column} is not a CLOB, NCLOB or BLOB",
                table.id
            )));
        }
        let call = call.read(&layout.columns[i])?;
        let before = table.rows.get(&row_id).cloned().unwrap_or_default();
        let object = table.segment_for(&before)?;
        let version = table.version();
        let current = before.get(i).cloned().unwrap_or(Value::Null);
        if current.is_null() {
            return Err(SimError::Ora(
                cdc_core::ora::OraCode(22275),
                "ORA-22275: invalid LOB locator specified".into(),
            ));
        }
        let changed = apply_lob_call(&ty, &current, &call)?;
        let mut after = before.clone();
        after[i] = changed;
        let (_, locate) = self.lob_context(t, &before)?;
        let rows = match call {
            LobCall::Write { offset, data } => {
                let mut rows = vec![LobRow::Locator];
                rows.extend(lob_chunks(&data, offset));
                rows
            }
            LobCall::Trim { length } => vec![LobRow::Trim { length }],
            LobCall::Erase { amount, offset } => vec![LobRow::Erase { amount, offset }],
        };
        let bodies: Vec<Body> = rows
            .into_iter()
            .map(|r| Body::Lob {
                table: t,
                object,
                version,
                row_id: row_id.clone(),
                locate: locate.clone(),
                column: i,
                row: r,
            })
            .collect();
        self.ensure_tx(session)?;
        let scn = self.next_scn();
        if let Some(start) = self.start_record(session, scn)? {
            self.emit(
                session,
                Group {
                    records: vec![start],
                },
            );
        }
        let first = self.lob_records(session, bodies)?.unwrap_or(scn);
        let tx = self.tx_mut(session)?;
        let ssn = tx.next_ssn.saturating_sub(1);
        tx.changes.push(TxChange {
            table: t,
            row_id: row_id.clone(),
            ssn,
            op: ChangeOp::Update,
            before: Some(before),
            after: Some(after.clone()),
            set: vec![i],
            scn: first,
            undone: false,
            failed: false,
            lob_only: true,
        });
        self.table_mut(t)?.rows.insert(row_id, after);
        Ok(())
    }
}
