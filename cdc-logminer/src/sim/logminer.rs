//! What LogMiner returns for a redo record: V$LOGMNR_CONTENTS rows rendered from the record
//! and the session's dictionary. With the dictionary as it is now (the online catalog), DML
//! older than a later ALTER comes back with STATUS 2 and generic names, and DML of a dropped
//! table as `"UNKNOWN"."OBJ# n"`; with a redo dictionary (a build, tracked through later DDL),
//! DML is named with the layout it was written under when the build knew it or made it later.

use cdc_core::change::status;
use cdc_core::{ColumnDef, MinedRow, Operation, RedoThread, RsId, TableLayout, Value};

use super::db::{Body, DmlKind, LobRow, Placed, RedoDictionary, SimDatabase};
use super::model::SimTable;
use super::render::{self, DDL_ROWID, LOB_PLACEHOLDER_ROWID, Naming};

/// INFO of a DDL row issued by a user.
pub const USER_DDL_INFO: &str = "USER DDL (PlSql=0 RecDep=0)";
/// INFO of a row whose redo no longer matches the dictionary.
pub const DICTIONARY_MISMATCH_INFO: &str = "Dictionary Mismatch";
/// INFO of a LOB_WRITE, LOB_TRIM or LOB_ERASE row.
pub const LOB_INFO: &str = "LOB sql_redo not re-executable";
/// INFO of an UNSUPPORTED row.
pub const UNSUPPORTED_INFO: &str = "Object or Data type Unsupported";

impl SimDatabase {
    /// A data record (DML, UNSUPPORTED, LOB) that `kept(container, DATA_OBJ#, USERNAME, is a
    /// LOB row)` rejects, as a row with only what a query's filter reads and no SQL_REDO; `None`
    /// for records the filter keeps and for control and DDL records.
    pub(crate) fn filtered_stub(
        &self,
        placed: &Placed,
        thread: RedoThread,
        kept: &dyn Fn(cdc_core::ConId, cdc_core::ObjectId, &str, bool) -> bool,
    ) -> Option<MinedRow> {
        let r = &placed.record;
        let (object, lob) = match &r.body {
            Body::Dml { object, .. } | Body::Unsupported { object, .. } => (*object, false),
            Body::Lob { object, .. } => (*object, true),
            // rows of SYS's LogMiner tables: no query of the engine returns them
            Body::Dictionary { .. } => {
                let mut row = MinedRow::new(r.scn, placed.rs_id, r.ssn, r.xid, Operation::Internal);
                row.seg_owner = Some("SYS".into());
                row.username = Some(r.user.clone());
                row.thread = thread;
                return Some(row);
            }
            _ => return None,
        };
        let operation = operation_of(&r.body);
        let con = self
            .containers
            .get(r.con)
            .map(|c| c.con)
            .unwrap_or_default();
        if kept(con, object, &r.user, lob) {
            return None;
        }
        let rs_id = if r.zero_rs_id {
            RsId::NONE
        } else {
            placed.rs_id
        };
        let mut row = MinedRow::new(r.scn, rs_id, r.ssn, r.xid, operation);
        row.rollback = r.rollback;
        row.data_obj = Some(object);
        row.src_con_id = con;
        row.username = Some(r.user.clone());
        row.thread = thread;
        Some(row)
    }

    /// The V$LOGMNR_CONTENTS rows of one record (several when SQL_REDO needs CSF rows),
    /// pushed onto `out`, with the online catalog (`dictionary` None) or a redo dictionary.
    pub(crate) fn render(
        &self,
        placed: &Placed,
        thread: RedoThread,
        dictionary: Option<&RedoDictionary>,
        out: &mut Vec<MinedRow>,
    ) {
        split_rows(self.render_row(placed, thread, dictionary), out);
    }

    /// A record's row with its whole SQL_REDO.
    fn render_row(
        &self,
        placed: &Placed,
        thread: RedoThread,
        dictionary: Option<&RedoDictionary>,
    ) -> MinedRow {
        let r = &placed.record;
        let container = self.containers.get(r.con);
        let rs_id = if r.zero_rs_id {
            RsId::NONE
        } else {
            placed.rs_id
        };
        let op = operation_of(&r.body);
        let mut row = MinedRow::new(r.scn, rs_id, r.ssn, r.xid, op);
        row.rollback = r.rollback;
        row.username = Some(r.user.clone());
        row.session = Some(r.sid);
        row.serial = Some(r.serial);
        row.src_con_id = container.map(|c| c.con).unwrap_or_default();
        row.src_con_name = container.and_then(|c| c.name.clone());
        row.thread = thread;
        row.timestamp = Some(r.time);
        match &r.body {
            Body::Start => {
                row.sql_redo = Some("set transaction read write".into());
                row.row_id = Some(LOB_PLACEHOLDER_ROWID.into());
            }
            Body::Commit => {
                row.sql_redo = Some("commit".into());
                row.row_id = Some(LOB_PLACEHOLDER_ROWID.into());
            }
            Body::Rollback => {
                row.sql_redo = Some("rollback".into());
                row.row_id = Some(LOB_PLACEHOLDER_ROWID.into());
            }
            Body::Dictionary { .. } => {
                row.operation = Operation::Internal;
                row.seg_owner = Some("SYS".into());
            }
            Body::Ddl {
                owner,
                name,
                object,
                sql,
            } => {
                row.info = Some(USER_DDL_INFO.into());
                row.seg_owner = Some(owner.clone());
                row.table_name = Some(name.clone());
                row.data_obj = Some(*object);
                row.row_id = Some(DDL_ROWID.into());
                row.sql_redo = Some(sql.clone());
            }
            Body::Unsupported {
                table,
                object,
                row_id,
            } => {
                row.status = status::INVALID_SQL;
                row.info = Some(UNSUPPORTED_INFO.into());
                row.sql_redo = Some("Unsupported".into());
                row.data_obj = Some(*object);
                row.row_id = Some(row_id.clone());
                if let Some(t) = container.and_then(|c| c.tables.get(table.index)) {
                    row.seg_owner = Some(t.id.owner.clone());
                    row.table_name = Some(t.id.table.clone());
                }
            }
            Body::Lob {
                table,
                object,
                version,
                row_id,
                locate,
                column,
                row: lob,
            } => {
                row.data_obj = Some(*object);
                row.row_id = Some(row_id.clone());
                let Some(named) = container
                    .and_then(|c| c.tables.get(table.index))
                    .and_then(|t| {
                        NamedAs::of(t, *version, *object, (r.con, table.index), dictionary)
                    })
                else {
                    return row;
                };
                let Some(col) = named.layout.columns.get(*column) else {
                    return row;
                };
                let filter = non_lob(&named.layout.columns, locate);
                let (naming, target) = (named.naming, named.target());
                row.seg_owner = Some(named.owner);
                row.table_name = Some(named.name);
                let action = match lob {
                    // 23ai: OPERATION INTERNAL (code 9), STATUS 0, SQL_REDO NULL
                    LobRow::Locator => return row,
                    LobRow::Write { offset, data } => render::LobAction::Write {
                        offset: *offset,
                        data,
                    },
                    LobRow::Trim { length } => render::LobAction::Trim { length: *length },
                    LobRow::Erase { amount, offset } => render::LobAction::Erase {
                        amount: *amount,
                        offset: *offset,
                    },
                };
                row.status = status::INVALID_SQL;
                row.info = Some(LOB_INFO.into());
                row.sql_redo = Some(render::lob_block(&target, naming, col, &filter, action));
            }
            Body::Dml {
                table,
                object,
                version,
                row_id,
                kind,
            } => {
                let Some(named) = container
                    .and_then(|c| c.tables.get(table.index))
                    .and_then(|t| {
                        NamedAs::of(t, *version, *object, (r.con, table.index), dictionary)
                    })
                else {
                    return row;
                };
                let (layout, naming, target) = (named.layout, named.naming, named.target());
                let (owner, name) = (named.owner, named.name);
                let segment_named;
                let cols = match naming {
                    // a generic row counts the segment's columns, hidden ones included
                    Naming::Generic => {
                        segment_named = by_segment_column(layout);
                        &segment_named
                    }
                    Naming::Dictionary => &layout.columns,
                };
                let sql = match kind {
                    DmlKind::Insert { after: values } | DmlKind::UndoDelete { row: values } => {
                        render::insert(&target, naming, &all(cols, values))
                    }
                    DmlKind::Update { before, set } => render::update(
                        &target,
                        naming,
                        &view(cols, set),
                        &non_lob(cols, before),
                        None,
                    ),
                    DmlKind::Delete { before } => {
                        render::delete(&target, naming, &non_lob(cols, before), None)
                    }
                    DmlKind::UndoInsert => render::delete(&target, naming, &[], Some(row_id)),
                    DmlKind::UndoUpdate { set } => {
                        render::update(&target, naming, &view(cols, set), &[], Some(row_id))
                    }
                };
                if naming == Naming::Generic {
                    row.status = status::INVALID_SQL;
                    row.info = Some(DICTIONARY_MISMATCH_INFO.into());
                }
                row.seg_owner = Some(owner);
                row.table_name = Some(name);
                row.data_obj = Some(*object);
                row.row_id = Some(row_id.clone());
                row.sql_redo = Some(sql);
            }
        }
        row
    }
}

/// OPERATION_CODE of a record's rows.
fn operation_of(body: &Body) -> Operation {
    match body {
        Body::Dictionary { .. } => Operation::Internal,
        Body::Start => Operation::Start,
        Body::Commit => Operation::Commit,
        Body::Rollback => Operation::Rollback,
        Body::Ddl { .. } => Operation::Ddl,
        Body::Unsupported { .. } => Operation::Unsupported,
        Body::Lob { row, .. } => match row {
            LobRow::Locator => Operation::SelLobLocator,
            LobRow::Write { .. } => Operation::LobWrite,
            LobRow::Trim { .. } => Operation::LobTrim,
            LobRow::Erase { .. } => Operation::LobErase,
        },
        Body::Dml { kind, .. } => match kind {
            DmlKind::Insert { .. } | DmlKind::UndoDelete { .. } => Operation::Insert,
            DmlKind::Update { .. } | DmlKind::UndoUpdate { .. } => Operation::Update,
            DmlKind::Delete { .. } | DmlKind::UndoInsert => Operation::Delete,
        },
    }
}

/// How a record's table reads in SQL_REDO: the layout the record was written with, its naming
/// and its owner and name. With the online catalog, STATUS 2 generic names when a later ALTER
/// changed the table or it was dropped, and `"UNKNOWN"."OBJ# n"` once dropped; with a redo
/// dictionary, names when it knows the version ([`RedoDictionary::names`]), generic otherwise,
/// and `"UNKNOWN"."OBJ# n"` for a table dropped before its build.
struct NamedAs<'a> {
    layout: &'a TableLayout,
    naming: Naming,
    owner: String,
    name: String,
}

impl<'a> NamedAs<'a> {
    fn of(
        t: &'a SimTable,
        version: usize,
        object: cdc_core::ObjectId,
        (con, table): (usize, usize),
        dictionary: Option<&RedoDictionary>,
    ) -> Option<NamedAs<'a>> {
        let layout = t.versions.get(version)?;
        let (named, unknown) = match dictionary {
            None => (!t.dropped && version == t.version(), t.dropped),
            Some(d) => (d.names(con, table, version), !d.knows_table(con, table)),
        };
        let naming = if named {
            Naming::Dictionary
        } else {
            Naming::Generic
        };
        let (owner, name) = if unknown {
            ("UNKNOWN".to_owned(), format!("OBJ# {}", object.0))
        } else {
            (t.id.owner.clone(), t.id.table.clone())
        };
        Some(NamedAs {
            layout,
            naming,
            owner,
            name,
        })
    }

    /// `"OWNER"."TABLE"`.
    fn target(&self) -> String {
        render::target(&self.owner, &self.name)
    }
}

/// The layout's columns, each numbered by its segment column (what `"COL n"` counts) instead
/// of its COLUMN_ID.
fn by_segment_column(layout: &TableLayout) -> Vec<ColumnDef> {
    let mut cols = layout.columns.clone();
    for (at, slot) in layout.segment.iter().enumerate() {
        if let Some(col) = slot.and_then(|i| cols.get_mut(usize::from(i))) {
            col.position = at as u16 + 1;
        }
    }
    cols
}

/// Every column with its value.
fn all<'a>(cols: &'a [ColumnDef], values: &'a [Value]) -> Vec<render::ColVal<'a>> {
    cols.iter().zip(values).collect()
}

/// The columns a SET list names, with their values.
fn view<'a>(cols: &'a [ColumnDef], pairs: &'a [(usize, Value)]) -> Vec<render::ColVal<'a>> {
    pairs
        .iter()
        .filter_map(|(i, v)| cols.get(*i).map(|c| (c, v)))
        .collect()
}

/// The columns of a WHERE clause: LOB columns never appear in it.
fn non_lob<'a>(cols: &'a [ColumnDef], values: &'a [Value]) -> Vec<render::ColVal<'a>> {
    cols.iter()
        .zip(values)
        .filter(|(c, _)| !c.data_type.is_lob())
        .collect()
}

/// A row whose SQL_REDO is longer than 4000 bytes becomes CSF=1 rows and a last CSF=0 row with
/// the same RS_ID and SSN.
fn split_rows(row: MinedRow, out: &mut Vec<MinedRow>) {
    let long = row
        .sql_redo
        .as_deref()
        .is_some_and(|sql| sql.len() > render::SQL_REDO_MAX_BYTES);
    if !long {
        out.push(row);
        return;
    }
    let pieces: Vec<String> = render::split_csf(row.sql_redo.as_deref().unwrap_or_default())
        .into_iter()
        .map(str::to_owned)
        .collect();
    let last = pieces.len() - 1;
    out.extend(pieces.into_iter().enumerate().map(|(i, piece)| {
        let mut r = row.clone();
        r.sql_redo = Some(piece);
        r.csf = i < last;
        r
    }));
}
