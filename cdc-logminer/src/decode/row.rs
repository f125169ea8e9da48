//! One mined row to what the engine applies: a [`RowChange`] for DML, a classification for
//! everything else.
//!
//! ```text
//!  MinedRow ──OPERATION_CODE──┬─ INSERT/UPDATE/DELETE ─ onepass (LogMiner's shape) ─► RowChange
//!                             │     └ else, or failed ─ parse ─► items ─ drop excluded ─►
//!                             │          convert with the column types ─► RowChange or the error
//!                             ├─ DDL ──────────────────── classify_ddl ─► Decoded::Ddl
//!                             ├─ SEL_LOB_LOCATOR/LOB_WRITE/LOB_TRIM/LOB_ERASE ─► Decoded::Lob
//!                             ├─ XML DOC BEGIN/WRITE/END ─► Decoded::XmlDoc,  INTERNAL ─► Internal
//!                             ├─ START/COMMIT/ROLLBACK ─► Control,  UNSUPPORTED ─► Unsupported
//!                             └─ anything else ─► Other(operation)
//! ```

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::Arc;

use cdc_core::change::{ChangeOp, ColumnValue, MinedRow, Operation, RowChange, status};
use cdc_core::table::{SegmentSlot, TableLayout};

use super::convert::{self, ConvertError};
use super::ddl::{DdlInfo, classify_ddl};
use super::error::{DecodeError, DecodeReason, RowContext};
use super::internal::{Charsets, decode_internal};
use super::onepass;
use super::parse::{
    Ident, Item, Literal, Statement, StatementKind, parse_statement_reusing, recycle,
};
use super::table::DecodeTable;
use super::temporal;

/// Options of the decoder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// `cdc.log.sensitive.data`: errors may quote the offending literal or SQL text (never for
    /// a table with excluded columns).
    pub log_sensitive_data: bool,
}

/// The LOB operations of LOB rows (assembling the values is the LOB assembler's job).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LobOp {
    /// SEL_LOB_LOCATOR (9); Oracle 23ai labels these rows INTERNAL, with SQL_REDO NULL.
    SelectLocator,
    Write,
    Trim,
    Erase,
}

/// The XML DOC rows of binary XMLType storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XmlDocOp {
    Begin,
    Write,
    End,
}

/// What a mined row is, decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// INSERT, UPDATE or DELETE, converted with the table's schema version.
    Change(RowChange),
    Ddl(DdlInfo),
    Lob(LobOp),
    XmlDoc(XmlDocOp),
    /// INTERNAL (0).
    Internal,
    /// START, COMMIT or ROLLBACK.
    Control(Operation),
    /// UNSUPPORTED (255): LogMiner gives no column data (BOOLEAN, JSON, VECTOR, …).
    Unsupported,
    /// MISSING_SCN, REPLICATION_MARKER, LONG DATA, EXTENDED_STRING_*, unknown codes: the
    /// engine decides.
    Other(Operation),
}

/// Decodes one row. `table` is the schema version valid at the row's SCN; DML needs it, other
/// rows ignore it. A CSF=1 row must be joined with [`super::reassemble`] first.
pub fn decode_row(
    row: &MinedRow,
    table: Option<&DecodeTable>,
    options: &DecodeOptions,
) -> Result<Decoded, DecodeError> {
    decode_row_with(row, table, options, RowIds::Copied)
}

/// Where a change's ROWID comes from when its row carries one (ROW_ID not empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowIds {
    /// Copied into the change: the row stays as it was.
    Copied,
    /// Left in the row, the change's `row_id` `None`: the caller owns the row and moves it
    /// over with [`restore_row_id`] (one allocation and copy fewer per change, on the
    /// thread that decodes).
    LeftInRow,
}

/// Gives a change decoded with [`RowIds::LeftInRow`] the ROWID its row carries, taken from
/// the row; the change is then what [`decode_row`] gives.
pub(crate) fn restore_row_id(change: &mut RowChange, row: &mut MinedRow) {
    if row.row_id.as_ref().is_some_and(|id| !id.is_empty()) {
        change.row_id = row.row_id.take();
    }
}

/// [`decode_row`], taking the row's ROWID as `row_ids` says.
pub(crate) fn decode_row_with(
    row: &MinedRow,
    table: Option<&DecodeTable>,
    options: &DecodeOptions,
    row_ids: RowIds,
) -> Result<Decoded, DecodeError> {
    if row.csf {
        return Err(error(row, table, DecodeReason::Continued));
    }
    Ok(match row.operation {
        Operation::Insert | Operation::Update | Operation::Delete => {
            Decoded::Change(decode_dml(row, table, options, row_ids)?)
        }
        Operation::Ddl => Decoded::Ddl(classify_ddl(row.sql_redo.as_deref().unwrap_or(""))),
        Operation::SelLobLocator => Decoded::Lob(LobOp::SelectLocator),
        Operation::LobWrite => Decoded::Lob(LobOp::Write),
        Operation::LobTrim => Decoded::Lob(LobOp::Trim),
        Operation::LobErase => Decoded::Lob(LobOp::Erase),
        Operation::XmlDocBegin => Decoded::XmlDoc(XmlDocOp::Begin),
        Operation::XmlDocWrite => Decoded::XmlDoc(XmlDocOp::Write),
        Operation::XmlDocEnd => Decoded::XmlDoc(XmlDocOp::End),
        Operation::Internal => Decoded::Internal,
        Operation::Start | Operation::Commit | Operation::Rollback => {
            Decoded::Control(row.operation)
        }
        Operation::Unsupported => Decoded::Unsupported,
        other => Decoded::Other(other),
    })
}

fn error(row: &MinedRow, table: Option<&DecodeTable>, reason: DecodeReason) -> DecodeError {
    DecodeError::new(
        reason,
        RowContext::of(row, table.map(|t| &t.layout().table)),
    )
}

/// Why a SQL_REDO is one of the texts LogMiner writes in place of a statement, if it is.
pub(crate) fn placeholder_reason(sql: &str) -> Option<DecodeReason> {
    let text = temporal::trim(sql);
    if text.eq_ignore_ascii_case("Dictionary Version Mismatch") {
        Some(DecodeReason::DictionaryMismatch)
    } else if text.eq_ignore_ascii_case("/* No SQL_REDO for temporary tables */") {
        Some(DecodeReason::TemporaryTable)
    } else {
        None
    }
}

/// `COL 12`: the generic name LogMiner writes when its dictionary does not know the column.
pub fn is_generic_column_name(name: &str) -> bool {
    name.strip_prefix("COL ")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the statement names the layout's table; a statement that names no owner is read
/// with the row's SEG_OWNER.
fn names_table(stmt: &Statement<'_>, row: &MinedRow, layout: &TableLayout) -> bool {
    let owner_matches = match stmt.owner {
        Some(owner) => owner.name() == layout.table.owner.as_str(),
        None => row.seg_owner.as_deref() == Some(layout.table.owner.as_str()),
    };
    owner_matches && stmt.table.name() == layout.table.table.as_str()
}

/// `"UNKNOWN"."OBJ# 45522"`: the table LogMiner names without a dictionary entry.
fn is_generic_table(stmt: &Statement<'_>) -> bool {
    stmt.owner.is_some_and(|o| o.raw() == "UNKNOWN") || stmt.table.raw().starts_with("OBJ# ")
}

fn names_generic(stmt: &Statement<'_>, table: &DecodeTable) -> bool {
    is_generic_table(stmt)
        || stmt.items().iter().any(|item| {
            let name = item.column.name();
            is_generic_column_name(&name) && table.lookup(&name, 0).is_none()
        })
}

fn decode_dml(
    row: &MinedRow,
    table: Option<&DecodeTable>,
    options: &DecodeOptions,
    row_ids: RowIds,
) -> Result<RowChange, DecodeError> {
    let Some(table) = table else {
        return Err(error(row, None, DecodeReason::NoSchemaVersion));
    };
    let fail = |reason| error(row, Some(table), reason);
    let Some(sql) = row.sql_redo.as_deref() else {
        return Err(fail(DecodeReason::MissingSqlRedo));
    };
    // a placeholder text is not a statement, so the one-pass decoder never takes it: it is
    // looked for only when that decoder declines the row
    if matches!(
        row.status,
        status::VALID_SQL | status::ASSEMBLY_REQUIRED_SQL
    ) && let Some(op) = change_op(row.operation)
        && let Some(images) = onepass::decode(sql, op, table)
    {
        return Ok(change(row, table, op, images, row_ids));
    }
    // a row older than a later DDL, read with the version valid at its SCN
    if row.status == status::INVALID_SQL
        && let Some(charsets) = table.older_rows()
        && let Some(op) = change_op(row.operation)
        && let Some(images) = super::onepass_older::decode(sql, op, table, charsets)
    {
        return Ok(change(row, table, op, images, row_ids));
    }
    if let Some(reason) = placeholder_reason(sql) {
        return Err(fail(reason));
    }
    let stmt = match parse_statement_reusing(sql, recycle(ITEMS.take())) {
        Ok(stmt) => stmt,
        Err(syntax) => {
            let e = fail(DecodeReason::Syntax(syntax));
            if options.log_sensitive_data && !table.has_exclusions() {
                return Err(e.with_sensitive_detail(excerpt(sql, syntax.offset)));
            }
            return Err(e);
        }
    };
    let change = change_of(row, table, options, &stmt, row_ids);
    ITEMS.set(stmt.into_buffer());
    change
}

thread_local! {
    /// The item vector a thread parses its rows into, and the SET image of an update: kept
    /// between rows so that neither is allocated per row.
    static ITEMS: Cell<Vec<Item<'static>>> = const { Cell::new(Vec::new()) };
    static SET_IMAGE: Cell<Vec<ColumnValue>> = const { Cell::new(Vec::new()) };
}

/// The change a parsed statement makes.
fn change_of(
    row: &MinedRow,
    table: &DecodeTable,
    options: &DecodeOptions,
    stmt: &Statement<'_>,
    row_ids: RowIds,
) -> Result<RowChange, DecodeError> {
    let fail = |reason| error(row, Some(table), reason);
    let op = match (row.operation, stmt.kind) {
        (Operation::Insert, StatementKind::Insert) => ChangeOp::Insert,
        (Operation::Update, StatementKind::Update) => ChangeOp::Update,
        (Operation::Delete, StatementKind::Delete) => ChangeOp::Delete,
        (_, statement) => return Err(fail(DecodeReason::OperationMismatch { statement })),
    };
    match row.status {
        status::VALID_SQL | status::ASSEMBLY_REQUIRED_SQL => {
            if is_generic_table(stmt) {
                return Err(fail(DecodeReason::DictionaryMismatch));
            }
        }
        status::INVALID_SQL => {
            if names_generic(stmt, table) || has_hextoraw_for_typed(stmt, table) {
                return match table.older_rows() {
                    Some(charsets) => older_change(row, table, stmt, op, charsets, row_ids),
                    None => Err(fail(DecodeReason::DictionaryMismatch)),
                };
            }
            return Err(fail(DecodeReason::UnexpectedStatus));
        }
        _ => return Err(fail(DecodeReason::UnexpectedStatus)),
    }
    if !names_table(stmt, row, table.layout()) {
        return Err(fail(DecodeReason::TableMismatch));
    }
    let images = Images {
        row,
        table,
        options,
    };
    let (before, after) = match op {
        ChangeOp::Insert => (None, Some(images.convert(stmt.assignments())?)),
        ChangeOp::Delete => (Some(images.convert(stmt.conditions())?), None),
        ChangeOp::Update => {
            let before = images.convert(stmt.conditions())?;
            let mut set = SET_IMAGE.take();
            images.convert_into(stmt.assignments(), &mut set)?;
            let after = overlay(&before, &mut set);
            SET_IMAGE.set(set);
            (Some(before), Some(after))
        }
    };
    Ok(change(
        row,
        table,
        op,
        onepass::Images {
            before,
            after,
            row_id: stmt.row_id,
        },
        row_ids,
    ))
}

/// The change of a row written under `table`'s layout that LogMiner returns generic because a
/// later DDL changed the table (the lag case, `reference/logminer-facts.md` §3): `"COL n"`
/// names the table's segment column n, and each `HEXTORAW` literal holds the column's value in
/// Oracle's internal format. The change is the one the row's valid form would have given.
/// Whatever does not fit the version is [`DecodeReason::OlderLayout`]: then it was not the
/// row's layout, and no value is guessed.
fn older_change(
    row: &MinedRow,
    table: &DecodeTable,
    stmt: &Statement<'_>,
    op: ChangeOp,
    charsets: &Charsets,
    row_ids: RowIds,
) -> Result<RowChange, DecodeError> {
    let layout = table.layout();
    // a dropped table's older rows name it `"UNKNOWN"."OBJ# n"`: its object id said which
    if !is_generic_table(stmt) && !names_table(stmt, row, layout) {
        return Err(error(row, Some(table), DecodeReason::TableMismatch));
    }
    let older = OlderImages {
        row,
        table,
        charsets,
    };
    let (before, after) = match op {
        ChangeOp::Insert => (None, Some(older.convert(stmt.assignments())?)),
        ChangeOp::Delete => (Some(older.convert(stmt.conditions())?), None),
        ChangeOp::Update => {
            let before = older.convert(stmt.conditions())?;
            let mut set = older.convert(stmt.assignments())?;
            let after = overlay(&before, &mut set);
            (Some(before), Some(after))
        }
    };
    Ok(change(
        row,
        table,
        op,
        onepass::Images {
            before,
            after,
            row_id: stmt.row_id,
        },
        row_ids,
    ))
}

/// `HEXTORAW('…')`, or a `||` concatenation of such literals: a value in its internal form.
fn is_internal_form(literal: &Literal<'_>) -> bool {
    match literal {
        Literal::Function(f) => f.is("HEXTORAW"),
        Literal::Concat(c) => c
            .parts()
            .all(|part| matches!(part, Literal::Function(f) if f.is("HEXTORAW"))),
        _ => false,
    }
}

/// `COL 12` → 12.
fn generic_column_number(name: &str) -> Option<u16> {
    name.strip_prefix("COL ")?.parse().ok()
}

struct OlderImages<'r> {
    row: &'r MinedRow,
    table: &'r DecodeTable,
    charsets: &'r Charsets,
}

impl OlderImages<'_> {
    fn misfit(&self, problem: String) -> DecodeError {
        error(
            self.row,
            Some(self.table),
            DecodeReason::OlderLayout { problem },
        )
    }

    /// The items as an image in layout column order; excluded and hidden columns are dropped
    /// before their literal is looked at.
    fn convert(&self, items: &[Item<'_>]) -> Result<Vec<ColumnValue>, DecodeError> {
        let layout = self.table.layout();
        let mut out: Vec<ColumnValue> = Vec::with_capacity(items.len());
        for item in items {
            let name = item.column.name();
            let index = match generic_column_number(&name) {
                Some(n) => match layout.segment_column(n) {
                    SegmentSlot::Column(index) => index,
                    SegmentSlot::Hidden => continue,
                    SegmentSlot::Beyond => {
                        return Err(self.misfit(format!(
                            "\"COL {n}\" is past the {} segment columns of version {}",
                            layout.segment.len().max(layout.columns.len()),
                            layout.version
                        )));
                    }
                },
                None => match self.table.lookup(&name, 0) {
                    Some(index) => index,
                    None if self.table.is_excluded_name(&name) => continue,
                    None => {
                        return Err(self.misfit(format!(
                            "column \"{name}\" is not in version {}",
                            layout.version
                        )));
                    }
                },
            };
            if self.table.is_excluded_index(index) {
                continue;
            }
            let Some(column) = layout.columns.get(index) else {
                continue;
            };
            let value = if is_internal_form(&item.value) {
                convert::bytes(&item.value)
                    .map_err(|e| e.reason().to_owned())
                    .and_then(|bytes| {
                        decode_internal(&column.data_type, &bytes, self.charsets)
                            .map_err(|e| e.to_string())
                    })
            } else {
                // NULL, EMPTY_CLOB(), … read as in a valid row
                convert::convert(&item.value, column).map_err(|e| e.reason().to_owned())
            }
            .map_err(|problem| self.misfit(format!("column \"{}\": {problem}", column.name)))?;
            out.push(ColumnValue {
                column: index as u16,
                value,
            });
        }
        out.sort_by_key(|v| v.column);
        if let Some(pair) = out.windows(2).find(|w| w[0].column == w[1].column) {
            let name = layout
                .columns
                .get(usize::from(pair[0].column))
                .map(|c| c.name.clone())
                .unwrap_or_default();
            return Err(error(
                self.row,
                Some(self.table),
                DecodeReason::DuplicateColumn { column: name },
            ));
        }
        Ok(out)
    }
}

/// The operation of a DML row.
pub(super) fn change_op(operation: Operation) -> Option<ChangeOp> {
    match operation {
        Operation::Insert => Some(ChangeOp::Insert),
        Operation::Update => Some(ChangeOp::Update),
        Operation::Delete => Some(ChangeOp::Delete),
        _ => None,
    }
}

/// The change of a row from its images (inlined: the change is then built where the caller
/// returns it, not copied there).
#[inline(always)]
fn change(
    row: &MinedRow,
    table: &DecodeTable,
    op: ChangeOp,
    images: onepass::Images<'_>,
    row_ids: RowIds,
) -> RowChange {
    let row_id = match &row.row_id {
        Some(id) if !id.is_empty() => match row_ids {
            RowIds::Copied => Some(id.clone()),
            RowIds::LeftInRow => None,
        },
        _ => images.row_id.map(str::to_owned),
    };
    RowChange {
        op,
        table: Arc::clone(table.table()),
        schema_version: table.layout().version,
        before: images.before,
        after: images.after,
        row_id,
    }
}

/// STATUS 2 rows of the lag case write NUMBERs and dates as raw bytes.
fn has_hextoraw_for_typed(stmt: &Statement<'_>, table: &DecodeTable) -> bool {
    let layout: &TableLayout = table.layout();
    stmt.items().iter().any(|item| {
        let Literal::Function(f) = item.value else {
            return false;
        };
        f.is("HEXTORAW")
            && table
                .lookup(&item.column.name(), 0)
                .and_then(|i| layout.columns.get(i))
                .is_none_or(|c| {
                    !matches!(
                        c.data_type,
                        cdc_core::table::ColumnType::Raw
                            | cdc_core::table::ColumnType::LongRaw
                            | cdc_core::table::ColumnType::Blob
                    )
                })
    })
}

/// Up to 48 characters either side of a byte offset, on character boundaries.
fn excerpt(sql: &str, offset: usize) -> String {
    let mut start = offset.saturating_sub(48).min(sql.len());
    while !sql.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = offset.saturating_add(48).min(sql.len());
    while !sql.is_char_boundary(end) {
        end += 1;
    }
    sql[start..end].to_owned()
}

struct Images<'r> {
    row: &'r MinedRow,
    table: &'r DecodeTable,
    options: &'r DecodeOptions,
}

impl Images<'_> {
    /// Converts items into an image in layout column order, dropping excluded columns before
    /// their literal is looked at.
    fn convert(&self, items: &[Item<'_>]) -> Result<Vec<ColumnValue>, DecodeError> {
        let mut out = Vec::with_capacity(items.len());
        self.convert_into(items, &mut out)?;
        Ok(out)
    }

    /// [`Images::convert`] into `out` (emptied first).
    fn convert_into(
        &self,
        items: &[Item<'_>],
        out: &mut Vec<ColumnValue>,
    ) -> Result<(), DecodeError> {
        out.clear();
        let layout = self.table.layout();
        let mut hint = 0usize;
        let mut sorted = true;
        for item in items {
            let name: Cow<'_, str> = item.column.name();
            let Some(index) = self.table.lookup(&name, hint) else {
                if self.table.is_excluded_name(&name) {
                    continue;
                }
                return Err(self.unknown(&item.column, &name));
            };
            if self.table.is_excluded_index(index) {
                continue;
            }
            hint = index + 1;
            let Some(column) = layout.columns.get(index) else {
                return Err(self.unknown(&item.column, &name));
            };
            let value = convert::convert(&item.value, column)
                .map_err(|e| self.conversion(item, column, e))?;
            if let Some(last) = out.last().map(|v: &ColumnValue| v.column)
                && usize::from(last) >= index
            {
                sorted = false;
            }
            out.push(ColumnValue {
                column: index as u16,
                value,
            });
        }
        if !sorted {
            out.sort_by_key(|v| v.column);
            if let Some(pair) = out.windows(2).find(|w| w[0].column == w[1].column) {
                let name = layout
                    .columns
                    .get(usize::from(pair[0].column))
                    .map(|c| c.name.clone())
                    .unwrap_or_default();
                return Err(error(
                    self.row,
                    Some(self.table),
                    DecodeReason::DuplicateColumn { column: name },
                ));
            }
        }
        Ok(())
    }

    fn unknown(&self, ident: &Ident<'_>, name: &str) -> DecodeError {
        let reason = if is_generic_column_name(name) {
            DecodeReason::DictionaryMismatch
        } else {
            DecodeReason::UnknownColumn {
                column: ident.name().into_owned(),
            }
        };
        error(self.row, Some(self.table), reason)
    }

    fn conversion(
        &self,
        item: &Item<'_>,
        column: &cdc_core::table::ColumnDef,
        e: ConvertError,
    ) -> DecodeError {
        let err = error(
            self.row,
            Some(self.table),
            DecodeReason::Conversion {
                column: column.name.clone(),
                data_type: column.data_type.dictionary_name().to_owned(),
                problem: e.reason(),
            },
        );
        if self.options.log_sensitive_data && !self.table.has_exclusions() {
            return err.with_sensitive_detail(literal_text(&item.value));
        }
        err
    }
}

/// The literal as it would be written back, for a sensitive error detail.
fn literal_text(literal: &Literal<'_>) -> String {
    match literal {
        Literal::Quoted(q) => format!("'{}'", q.raw()),
        Literal::Null => "NULL".to_owned(),
        Literal::Number(n) | Literal::Bind(n) => (*n).to_owned(),
        Literal::Unsupported => "Unsupported Type".to_owned(),
        Literal::Function(f) => {
            let args: Vec<String> = f.args().map(|a| literal_text(&a)).collect();
            format!("{}({})", f.name(), args.join(", "))
        }
        Literal::Concat(c) => {
            let parts: Vec<String> = c.parts().map(|a| literal_text(&a)).collect();
            parts.join(" || ")
        }
        Literal::Json(j) => format!("/* JSON */ {}", literal_text(&j.value())),
    }
}

/// The after image of an update: the before image with the SET items laid over it (both in
/// column order; `set` is left empty).
pub(super) fn overlay(before: &[ColumnValue], set: &mut Vec<ColumnValue>) -> Vec<ColumnValue> {
    let mut out = Vec::with_capacity(before.len() + set.len());
    let mut old = before.iter().peekable();
    for new in set.drain(..) {
        while let Some(o) = old.next_if(|o| o.column < new.column) {
            out.push(o.clone());
        }
        old.next_if(|o| o.column == new.column);
        out.push(new);
    }
    out.extend(old.cloned());
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use super::{DecodeOptions, RowIds, decode_row, decode_row_with, restore_row_id};
    use crate::decode::{DecodeTable, Decoded};
    use crate::test_support::{Rng, corpus, small_corpus};

    /// A change decoded with its ROWID left in the row, once given it back, is the change
    /// decoded with it copied; the row keeps no ROWID the change did not take.
    #[test]
    fn a_row_id_left_in_the_row_is_restored_to_the_same_change() {
        let mut rng = Rng::new(11);
        for (layouts, rows) in [corpus(12, 8, 1500), small_corpus(13, 8, 1500)] {
            let tables: HashMap<String, DecodeTable> = layouts
                .iter()
                .map(|l| {
                    (
                        l.table.table.clone(),
                        DecodeTable::without_exclusions(Arc::clone(l)),
                    )
                })
                .collect();
            for base in rows {
                let mut row = base.clone();
                row.row_id = [
                    None,
                    Some(String::new()),
                    Some("AAARlBAAEAAAAEsAAA".to_owned()),
                    base.row_id.clone(),
                ][rng.below(4) as usize]
                    .clone();
                if rng.chance(10) {
                    row.sql_redo = row.sql_redo.map(|s| format!("{s} where ROWID = 'AAAB'"));
                }
                let table = row.table_name.as_ref().and_then(|t| tables.get(t));
                let options = DecodeOptions::default();
                let copied = decode_row(&row, table, &options);
                let mut left = decode_row_with(&row, table, &options, RowIds::LeftInRow);
                let mut owned = row.clone();
                if let Ok(Decoded::Change(change)) = &mut left {
                    restore_row_id(change, &mut owned);
                }
                assert_eq!(
                    format!("{copied:?}"),
                    format!("{left:?}"),
                    "{:?}",
                    row.sql_redo
                );
            }
        }
    }
}
