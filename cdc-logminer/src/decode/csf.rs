//! CSF continuation: SQL_REDO is VARCHAR2(4000), so a longer statement arrives as several rows,
//! each but the last with CSF=1. The pieces are joined verbatim, with no separator, before
//! parsing.
//!
//! ```text
//!  row k   CSF=1  "insert into "O"."T"("A","B") values ('aaaa…"
//!  row k+1 CSF=1  "…aaaa','bb"
//!  row k+2 CSF=0  "bb');"            ──►  one row: CSF=0, SQL_REDO = the three texts joined,
//!                                          every other column from row k
//! ```

use cdc_core::change::MinedRow;

use super::error::{DecodeError, DecodeReason, RowContext};

/// Joins the pieces of one statement: every row but the last must have CSF=1, the last CSF=0,
/// and all must belong to one transaction. The first row's columns are kept.
pub fn reassemble(pieces: &[MinedRow]) -> Result<MinedRow, DecodeError> {
    let Some((first, rest)) = pieces.split_first() else {
        // nothing to join: there is no row to name either
        return Err(DecodeError::new(
            DecodeReason::IncompleteContinuation,
            RowContext::of(&empty_row(), None),
        ));
    };
    let context = || RowContext::of(first, None);
    let Some(last) = pieces.last() else {
        return Err(DecodeError::new(
            DecodeReason::IncompleteContinuation,
            context(),
        ));
    };
    if last.csf || pieces[..pieces.len() - 1].iter().any(|p| !p.csf) {
        return Err(DecodeError::new(
            DecodeReason::IncompleteContinuation,
            context(),
        ));
    }
    if rest
        .iter()
        .any(|p| p.xid != first.xid || p.src_con_id != first.src_con_id)
    {
        return Err(DecodeError::new(
            DecodeReason::ContinuationMismatch,
            context(),
        ));
    }
    let len: usize = pieces
        .iter()
        .map(|p| p.sql_redo.as_deref().map_or(0, str::len))
        .sum();
    let mut sql = String::with_capacity(len);
    for piece in pieces {
        if let Some(text) = &piece.sql_redo {
            sql.push_str(text);
        }
    }
    let mut row = first.clone();
    row.csf = false;
    row.sql_redo = if first.sql_redo.is_none() && sql.is_empty() {
        None
    } else {
        Some(sql)
    };
    Ok(row)
}

fn empty_row() -> MinedRow {
    use cdc_core::change::Operation;
    use cdc_core::position::{RsId, Scn, Xid};
    MinedRow::new(Scn(0), RsId::NONE, 0, Xid::ZERO, Operation::Other(0))
}

/// Joins every run of continuation rows of a step, keeping the order; rows with CSF=0 pass
/// through untouched (moved, not copied). Fails when the step ends inside a statement.
pub fn join_continuations(rows: Vec<MinedRow>) -> Result<Vec<MinedRow>, DecodeError> {
    if !rows.iter().any(|r| r.csf) {
        return Ok(rows);
    }
    let mut out = Vec::with_capacity(rows.len());
    join_continuations_into(rows, |row| out.push(row))?;
    Ok(out)
}

/// [`join_continuations`] over any sequence of rows, handing each joined row to `emit` in
/// order (a caller that keeps rows in chunks moves each row once).
pub fn join_continuations_into(
    rows: impl IntoIterator<Item = MinedRow>,
    mut emit: impl FnMut(MinedRow),
) -> Result<(), DecodeError> {
    let mut pending: Vec<MinedRow> = Vec::new();
    for row in rows {
        if row.csf {
            pending.push(row);
        } else if pending.is_empty() {
            emit(row);
        } else {
            pending.push(row);
            emit(reassemble(&pending)?);
            pending.clear();
        }
    }
    if let Some(first) = pending.first() {
        return Err(DecodeError::new(
            DecodeReason::IncompleteContinuation,
            RowContext::of(first, None),
        ));
    }
    Ok(())
}
