//! Layouts and DDL: the captured objects and their schema versions, DDL that changes them,
//! the versions an earlier run published, and the ops events of DDL.

use super::*;
use crate::decode::{ColumnChange, OtherDdl};
use cdc_core::ColumnType;

/// How long before the resume SCN's time a table's last DDL may be and still explain a stored
/// schema version that differs from the dictionary (SCN_TO_TIMESTAMP is only seconds-precise).
pub const SCHEMA_DDL_MARGIN_S: i64 = 10;

/// Every schema version decoded with.
#[derive(Default)]
pub(super) struct SchemaVersions {
    /// By table, oldest first, with the table's number (its order of registration), which
    /// [`TableOrders`] counts in.
    pub(super) by_table: foldhash::HashMap<TableId, (usize, Vec<Arc<TableLayout>>)>,
    /// The same layouts by the address of the table name the rows of one version share (one
    /// `Arc` per version): a commit hashes one pointer per change instead of the name's
    /// strings. The entry holds the name, so no later name can take its address, and is never
    /// replaced.
    pub(super) by_shared_name: foldhash::HashMap<usize, (Arc<TableId>, Arc<TableLayout>, usize)>,
}

impl SchemaVersions {
    pub(super) fn register(&mut self, table: &DecodeTable) {
        let layout = table.layout();
        let name = table.table();
        let tables = self.by_table.len();
        let (number, versions) = self
            .by_table
            .entry(layout.table.clone())
            .or_insert_with(|| (tables, Vec::new()));
        let number = *number;
        if !versions.iter().any(|v| v.version == layout.version) {
            versions.push(Arc::clone(layout));
        }
        self.by_shared_name
            .entry(Arc::as_ptr(name) as usize)
            .or_insert_with(|| (Arc::clone(name), Arc::clone(layout), number));
    }

    /// The schema version a change was decoded with, and its table's number (`None` for a
    /// table never registered).
    pub(super) fn of(&self, event: &ChangeEvent) -> (Arc<TableLayout>, Option<usize>) {
        let version = event.change.schema_version;
        let address = Arc::as_ptr(&event.change.table) as usize;
        if let Some((_, layout, number)) = self.by_shared_name.get(&address)
            && layout.version == version
        {
            return (Arc::clone(layout), Some(*number));
        }
        let table = self.by_table.get(&*event.change.table);
        let found =
            table.and_then(|(_, versions)| versions.iter().rev().find(|l| l.version == version));
        let number = table.map(|(number, _)| *number);
        match found {
            Some(layout) => (Arc::clone(layout), number),
            // unreachable: every decode table's layout is registered when it is made
            None => (
                Arc::new(TableLayout {
                    table: TableId::clone(&event.change.table),
                    version,
                    valid_from: Scn::ZERO,
                    columns: Vec::new(),
                    key: Vec::new(),
                    key_source: cdc_core::KeySource::None,
                    supplemental: Default::default(),
                    segment: Vec::new(),
                }),
                number,
            ),
        }
    }
}

/// `[PDB.]OWNER.TABLE` of the table a DDL row names.
fn ddl_table_name(row: &MinedRow, info: &DdlInfo) -> String {
    info.table
        .as_ref()
        .map(|t| ddl_table_id(row, t).to_string())
        .unwrap_or_default()
}

/// The table a DDL statement names: its owner as written, else the row's SEG_OWNER, in the
/// row's PDB.
fn ddl_table_id(row: &MinedRow, table: &crate::decode::DdlTable) -> TableId {
    let owner = table
        .owner
        .clone()
        .or_else(|| row.seg_owner.clone())
        .unwrap_or_default();
    let id = TableId::new(owner, table.name.clone());
    match row.src_con_name.as_ref().filter(|p| *p != "CDB$ROOT") {
        Some(pdb) => id.in_pdb(pdb.clone()),
        None => id,
    }
}

/// Why the captured objects are resolved again.
pub(super) enum Refresh {
    /// At start, from the resume SCN.
    Start,
    /// At a DDL row: of this table when the statement names one, with the column changes its
    /// text says it makes (`None`: text not followed).
    Ddl {
        table: Option<TableId>,
        changes: Option<Vec<ColumnChange>>,
    },
}

/// A table with no columns yet (before its CREATE).
fn empty_layout(table: &TableId) -> TableLayout {
    TableLayout {
        table: table.clone(),
        version: 0,
        valid_from: Scn::ZERO,
        columns: Vec::new(),
        key: Vec::new(),
        key_source: cdc_core::KeySource::None,
        supplemental: Default::default(),
        segment: Vec::new(),
    }
}

/// A layout reduced to what decoding an older row depends on: the columns' names and types
/// in COLUMN_ID order, and the segment columns (`None`: hidden) by name.
#[derive(Debug, PartialEq)]
struct Shape {
    columns: Vec<(String, ColumnType)>,
    segment: Vec<Option<String>>,
}

impl Shape {
    fn of(layout: &TableLayout) -> Shape {
        let columns: Vec<(String, ColumnType)> = layout
            .columns
            .iter()
            .map(|c| (c.name.clone(), c.data_type.clone()))
            .collect();
        let segment = if layout.segment.is_empty() {
            columns.iter().map(|(n, _)| Some(n.clone())).collect()
        } else {
            layout
                .segment
                .iter()
                .map(|slot| {
                    slot.and_then(|i| layout.columns.get(usize::from(i)))
                        .map(|c| c.name.clone())
                })
                .collect()
        };
        Shape { columns, segment }
    }

    /// The shape after `change`; `None` when the change names a column the shape lacks (or
    /// adds one it has): then it was not made on this shape.
    fn apply(mut self, change: &ColumnChange) -> Option<Shape> {
        let has = |shape: &Shape, name: &str| shape.columns.iter().any(|(n, _)| n == name);
        match change {
            ColumnChange::Add { name, data_type } => {
                if has(&self, name) {
                    return None;
                }
                self.columns
                    .push((name.clone(), ColumnType::from_dictionary(data_type)));
                self.segment.push(Some(name.clone()));
            }
            ColumnChange::Drop { name } => {
                if !has(&self, name) {
                    return None;
                }
                self.columns.retain(|(n, _)| n != name);
                self.segment
                    .retain(|slot| slot.as_deref() != Some(name.as_str()));
            }
            ColumnChange::SetUnused { name } => {
                if !has(&self, name) {
                    return None;
                }
                self.columns.retain(|(n, _)| n != name);
                for slot in &mut self.segment {
                    if slot.as_deref() == Some(name.as_str()) {
                        *slot = None;
                    }
                }
            }
            ColumnChange::DropUnused => self.segment.retain(Option::is_some),
            ColumnChange::Modify { name, data_type } => {
                let column = self.columns.iter_mut().find(|(n, _)| n == name)?;
                if let Some(ty) = data_type {
                    column.1 = ColumnType::from_dictionary(ty);
                }
            }
            ColumnChange::Rename { from, to } => {
                if has(&self, to) {
                    return None;
                }
                let column = self.columns.iter_mut().find(|(n, _)| n == from)?;
                column.0.clone_from(to);
                for slot in self.segment.iter_mut().flatten() {
                    if slot == from {
                        slot.clone_from(to);
                    }
                }
            }
        }
        Some(self)
    }
}

/// The layout `changes` (a DDL's text) make of `before`, the version valid up to the DDL, when
/// the dictionary has moved on past it: `now`, read at the DDL row, already holds later DDL of
/// the table (a connector behind), and would name columns the rows after this DDL do not have,
/// or lack ones they have. Columns the text adds take `now`'s definition when it has them with
/// that type, else the one the text gives (`ColumnDef::from_type_text`); a column added that
/// `before` already has is kept (`before` was itself read after this DDL). Key and
/// supplemental logging are `now`'s while its key columns are all there. Such a version is
/// never exact: its generic rows are replayed with a redo dictionary, and named rows must fit
/// it.
pub(super) fn derive(
    before: &TableLayout,
    changes: &[ColumnChange],
    now: &TableLayout,
) -> TableLayout {
    use cdc_core::table::ColumnDef;
    let mut columns: Vec<ColumnDef> = before.columns.clone();
    for change in changes {
        match change {
            ColumnChange::Add { name, data_type } => {
                if columns.iter().any(|c| c.name == *name) {
                    continue;
                }
                let ty = ColumnType::from_dictionary(data_type);
                let def = now
                    .column(name)
                    .filter(|c| c.data_type == ty)
                    .cloned()
                    .unwrap_or_else(|| ColumnDef::from_type_text(name.clone(), 0, data_type, true));
                columns.push(def);
            }
            ColumnChange::Drop { name } | ColumnChange::SetUnused { name } => {
                columns.retain(|c| c.name != *name);
            }
            ColumnChange::DropUnused => {}
            ColumnChange::Modify { name, data_type } => {
                if let (Some(column), Some(text)) =
                    (columns.iter_mut().find(|c| c.name == *name), data_type)
                {
                    let ty = ColumnType::from_dictionary(text);
                    *column = now
                        .column(name)
                        .filter(|c| c.data_type == ty)
                        .cloned()
                        .unwrap_or_else(|| {
                            ColumnDef::from_type_text(name.clone(), 0, text, column.nullable)
                        });
                }
            }
            ColumnChange::Rename { from, to } => {
                if let Some(column) = columns.iter_mut().find(|c| c.name == *from) {
                    column.name.clone_from(to);
                }
            }
        }
    }
    for (at, column) in columns.iter_mut().enumerate() {
        column.position = u16::try_from(at + 1).unwrap_or(u16::MAX);
    }
    let has_all = |key: &[String]| key.iter().all(|k| columns.iter().any(|c| c.name == *k));
    let (key, key_source) = if has_all(&now.key) {
        (now.key.clone(), now.key_source)
    } else {
        (before.key.clone(), before.key_source)
    };
    TableLayout {
        table: now.table.clone(),
        version: 0,
        valid_from: now.valid_from,
        columns,
        key,
        key_source,
        supplemental: now.supplemental,
        segment: Vec::new(),
    }
}

/// The columns' names and types, in order.
fn same_columns(a: &TableLayout, b: &TableLayout) -> bool {
    a.columns.len() == b.columns.len()
        && a.columns
            .iter()
            .zip(&b.columns)
            .all(|(x, y)| x.name == y.name && x.data_type == y.data_type)
}

/// Whether `now`, the layout the dictionary gives after a DDL, is what `changes` (the DDL's
/// text) make of `before`, the version valid up to it: then no later DDL is in it yet, and it
/// is the layout of the rows written from the DDL on.
pub(super) fn predicts(before: &TableLayout, changes: &[ColumnChange], now: &TableLayout) -> bool {
    changes
        .iter()
        .try_fold(Shape::of(before), Shape::apply)
        .is_some_and(|predicted| predicted == Shape::of(now))
}

/// The ops events of one layout change that DDL made: `ddl-applied` for every change,
/// `table-added` for a table captured from now on (`snapshot`: whether it waits for a
/// snapshot), `table-removed` for one no longer captured.
pub(super) fn ddl_events(
    change: &SchemaChange,
    captured_before: &HashSet<TableId>,
    scn: Scn,
    snapshot: bool,
) -> Vec<OpsEvent> {
    let table = match change {
        SchemaChange::Version(layout) => &layout.table,
        SchemaChange::Removed(table) => table,
    };
    let mut applied = BTreeMap::new();
    applied.insert("pdb".to_owned(), table.pdb.clone().unwrap_or_default());
    applied.insert("owner".to_owned(), table.owner.clone());
    applied.insert("object".to_owned(), table.table.clone());
    applied.insert("scn".to_owned(), scn.to_string());
    let mut events = Vec::with_capacity(2);
    let name = |table: &TableId| BTreeMap::from([("table".to_owned(), table.pattern_name())]);
    match change {
        SchemaChange::Version(layout) => {
            applied.insert("version".to_owned(), layout.version.to_string());
            applied.insert("columns".to_owned(), layout.columns.len().to_string());
            events.push(OpsEvent {
                kind: OpsKind::DdlApplied,
                details: applied,
            });
            if !captured_before.contains(table) {
                let mut added = name(table);
                added.insert("snapshot".to_owned(), snapshot.to_string());
                events.push(OpsEvent {
                    kind: OpsKind::TableAdded,
                    details: added,
                });
            }
        }
        SchemaChange::Removed(table) => {
            applied.insert("removed".to_owned(), "true".to_owned());
            events.push(OpsEvent {
                kind: OpsKind::DdlApplied,
                details: applied,
            });
            events.push(OpsEvent {
                kind: OpsKind::TableRemoved,
                details: name(table),
            });
        }
    }
    events
}

/// A DDL statement as the `ddl-seen` event shows it: at most 2 000 characters, and nothing
/// after `IDENTIFIED BY`, so a password set by DDL never reaches the ops topic.
pub(super) fn ddl_text_shown(sql: &str) -> String {
    let mut text: String = sql.chars().take(2000).collect();
    if let Some(at) = text.to_ascii_uppercase().find("IDENTIFIED BY") {
        text.truncate(at + "IDENTIFIED BY".len());
        text.push_str(" ***");
    }
    text
}

/// Whether a DDL row ends the step: a CREATE, DROP, rename, partition maintenance or column
/// change of a table that is captured or matches the include patterns (the object ids and
/// layouts must be resolved again before the next row is decoded).
pub(super) fn ddl_ends_step(
    row: &MinedRow,
    info: &DdlInfo,
    objects: &foldhash::HashMap<(ConId, ObjectId), TableId>,
    table_filter: &(dyn Fn(&TableId) -> bool + Send + Sync),
) -> bool {
    // a changed layout must decode the rows after it, so a column change of a captured table
    // ends the step as well
    if !matches!(
        info.kind,
        DdlKind::Create
            | DdlKind::Drop
            | DdlKind::Rename
            | DdlKind::PartitionMaintenance
            | DdlKind::AlterColumns
    ) {
        return false;
    }
    let pdb = row.src_con_name.as_ref().filter(|p| *p != "CDB$ROOT");
    let named = |t: &crate::decode::DdlTable| {
        let owner = t
            .owner
            .clone()
            .or_else(|| row.seg_owner.clone())
            .unwrap_or_default();
        let id = TableId::new(owner, t.name.clone());
        match pdb {
            Some(p) => id.in_pdb(p.clone()),
            None => id,
        }
    };
    [info.table.as_ref(), info.renamed_to.as_ref()]
        .into_iter()
        .flatten()
        .map(named)
        .any(|id| table_filter(&id) || objects.values().any(|t| *t == id))
}

impl<S: RedoSource> CaptureEngine<S> {
    pub(super) fn apply_ddl(&mut self, row: &MinedRow, info: &DdlInfo) -> Result<(), CdcError> {
        let object = info.table.as_ref();
        let owner = object
            .and_then(|t| t.owner.clone())
            .or_else(|| row.seg_owner.clone())
            .unwrap_or_default();
        let pdb = row
            .src_con_name
            .clone()
            .filter(|p| p != "CDB$ROOT")
            .unwrap_or_default();
        let mut seen = BTreeMap::new();
        seen.insert("pdb".to_owned(), pdb);
        seen.insert("owner".to_owned(), owner);
        seen.insert(
            "object".to_owned(),
            object.map(|t| t.name.clone()).unwrap_or_default(),
        );
        seen.insert("scn".to_owned(), row.scn.to_string());
        seen.insert(
            "sql".to_owned(),
            ddl_text_shown(row.sql_redo.as_deref().unwrap_or("")),
        );
        self.side.ops.push(OpsEvent {
            kind: OpsKind::DdlSeen,
            details: seen,
        });
        // a rename touches the captured set by its new name too: a table renamed into it joins
        let renamed_to = info.renamed_to.as_ref().map(|t| ddl_table_id(row, t));
        let touches_captured = info
            .table
            .as_ref()
            .map(|t| ddl_table_id(row, t))
            .iter()
            .chain(&renamed_to)
            .any(|id| self.decoder.tables.contains_key(id) || (self.settings.table_filter)(id));
        if !touches_captured {
            return Ok(());
        }
        match info.kind {
            DdlKind::Create
            | DdlKind::Drop
            | DdlKind::Rename
            | DdlKind::AlterColumns
            | DdlKind::PartitionMaintenance => {
                let captured_before: HashSet<TableId> =
                    self.decoder.tables.keys().cloned().collect();
                let announced = self.side.schema.len();
                // a stored version differing from the dictionary matters at start only
                let ddl_table = info.table.as_ref().map(|t| ddl_table_id(row, t));
                let changes = crate::decode::column_changes(row.sql_redo.as_deref().unwrap_or(""));
                let joining = match info.kind {
                    DdlKind::Rename => renamed_to.clone(),
                    _ => ddl_table.clone(),
                };
                let _ = self.refresh_objects_joining(
                    row.scn,
                    Refresh::Ddl {
                        table: ddl_table,
                        changes,
                    },
                    renamed_to.as_ref(),
                )?;
                // a table that may already hold rows when it joins (CREATE … AS SELECT,
                // FLASHBACK … BEFORE DROP, a rename into the captured set) is snapshotted
                // under `initial`; one created empty is captured from its first row
                let snapshot = self.settings.snapshot.mode
                    == cdc_core::config::SnapshotMode::Initial
                    && (info.may_hold_rows || info.kind == DdlKind::Rename);
                let mut added: Vec<String> = self.side.schema[announced..]
                    .iter()
                    .filter_map(|change| match change {
                        SchemaChange::Version(layout)
                            if !captured_before.contains(&layout.table) =>
                        {
                            Some(layout.table.to_string())
                        }
                        _ => None,
                    })
                    .collect();
                let mut events: Vec<OpsEvent> = self.side.schema[announced..]
                    .iter()
                    .flat_map(|change| ddl_events(change, &captured_before, row.scn, snapshot))
                    .collect();
                // captured before its own CREATE … AS SELECT (FLASHBACK, RENAME) was mined: the
                // start found it in the dictionary, made while the connector was stopped, and
                // its rows are in no redo. Unless a snapshot knows it (an earlier run announced
                // it, and this DDL is mined again), it joins here.
                if snapshot
                    && let Some(table) = joining.filter(|t| {
                        captured_before.contains(t)
                            && self.decoder.tables.contains_key(t)
                            && !self.snapshot_knows(&t.to_string())
                    })
                {
                    events.push(OpsEvent::new(
                        OpsKind::TableAdded,
                        BTreeMap::from([
                            ("table".to_owned(), table.pattern_name()),
                            ("snapshot".to_owned(), "true".to_owned()),
                        ]),
                    ));
                    added.push(table.to_string());
                }
                self.side.ops.extend(events);
                if snapshot && !added.is_empty() {
                    self.snapshot_later(added);
                }
                Ok(())
            }
            // the layout may have changed, and the rows after it would be decoded with a
            // stale one
            DdlKind::Other(OtherDdl::Unrecognised) => Err(CdcError::new(
                CdcCode::UnsupportedDdl,
                format!(
                    "a DDL statement on captured table {} at SCN {} (transaction {}) is of a \
                     kind the connector cannot place, so it cannot tell whether the table's \
                     layout changed: {}",
                    ddl_table_name(row, info),
                    row.scn,
                    row.xid,
                    ddl_text_shown(row.sql_redo.as_deref().unwrap_or(""))
                        .chars()
                        .take(300)
                        .collect::<String>()
                ),
            )),
            DdlKind::Truncate | DdlKind::Other(_) => Ok(()),
        }
    }

    /// Resolves the captured object ids and table layouts again. A table whose layout
    /// changed gets a new schema version, valid from `valid_from`; new versions and tables no
    /// longer captured wait in `pending_schema` for the schema topic. Returns the tables whose
    /// stored version valid at `valid_from` (the resume SCN, at start) differs from the
    /// dictionary, with that version's number.
    pub(super) fn refresh_objects(
        &mut self,
        valid_from: Scn,
        refresh: Refresh,
    ) -> Result<Vec<(TableId, u32)>, CdcError> {
        self.refresh_objects_joining(valid_from, refresh, None)
    }

    /// [`Self::refresh_objects`]; at a DDL row of a table, the tables that join are that
    /// table and `renamed_to`, the new name a RENAME gives it. Another table the dictionary
    /// lists now but the capture lacks has its own DDL (CREATE, RENAME, FLASHBACK) still ahead
    /// in the redo, which adds it when mined: joining here would capture the rows it had under
    /// another name before, and take this DDL's snapshot decision for it.
    fn refresh_objects_joining(
        &mut self,
        valid_from: Scn,
        refresh: Refresh,
        renamed_to: Option<&TableId>,
    ) -> Result<Vec<(TableId, u32)>, CdcError> {
        let filter = Arc::clone(&self.settings.table_filter);
        let pdbs = self.settings.pdbs.clone();
        let captured: Vec<CapturedObject> = self
            .source
            .resolve_objects(&move |t: &TableId| {
                (pdbs.is_empty() || t.pdb.as_ref().is_some_and(|p| pdbs.contains(p))) && filter(t)
            })
            .map_err(source_stop)?;
        let mut objects = foldhash::HashMap::default();
        let mut tables: Vec<TableId> = Vec::new();
        let mut seen = HashSet::new();
        for object in captured {
            if seen.insert(object.table.clone()) {
                tables.push(object.table.clone());
            }
            objects.insert((object.con, object.object), object.table);
        }
        let mut layouts = self.source.table_layouts(&tables).map_err(source_stop)?;
        let exact = self.exact_layouts(&layouts, valid_from, &refresh)?;
        if let Refresh::Ddl {
            table: Some(table),
            changes: Some(changes),
        } = &refresh
            && exact.get(table) == Some(&false)
            && let Some(before) = self.decoder.tables.get(table)
            && let Some(now) = layouts.iter_mut().find(|l| l.table == *table)
        {
            let derived = derive(before.layout(), changes, now);
            if !same_columns(&derived, now) {
                tracing::info!(%table, "the dictionary holds DDL past this one: the version after it is made from its text");
                *now = derived;
            }
        }
        let mut decode_tables = foldhash::HashMap::default();
        let mut differing = Vec::new();
        for layout in layouts {
            let table = layout.table.clone();
            // a DDL row changes its own table: another captured table keeps its version even
            // where the dictionary differs, which only DDL still ahead in the redo explains
            if let Refresh::Ddl {
                table: Some(changed),
                ..
            } = &refresh
                && *changed != table
                && renamed_to != Some(&table)
            {
                if let Some(current) = self.decoder.tables.get(&table) {
                    decode_tables.insert(table, current.clone());
                }
                continue;
            }
            let unchanged = self.decoder.tables.get(&table).filter(|current| {
                let current = current.layout();
                current.columns == layout.columns
                    && current.key == layout.key
                    && current.supplemental == layout.supplemental
            });
            let decode_table = match unchanged {
                // the same version; a segment that changed alone (DROP UNUSED COLUMNS) is no
                // new version, but older rows count its new segment columns from here on
                Some(current) if current.layout().segment != layout.segment => {
                    let mut layout = layout;
                    layout.version = current.layout().version;
                    layout.valid_from = current.layout().valid_from;
                    self.decode_table(layout)?
                }
                Some(current) => current.clone(),
                None => {
                    // numbering goes on from what an earlier run published, and a layout it
                    // published keeps its number
                    if let Some(stored) = self.schemas.published.valid_at(&table, valid_from)
                        && !(stored.same)(&layout)
                    {
                        differing.push((table.clone(), stored.version));
                    }
                    let highest = self
                        .schemas
                        .next_version
                        .entry(table.clone())
                        .or_insert_with(|| self.schemas.published.highest(&table));
                    let (version, from) = match self.schemas.published.take_same(&table, &layout) {
                        Some(stored) => stored,
                        None => (*highest + 1, valid_from),
                    };
                    *highest = (*highest).max(version);
                    let mut layout = layout;
                    layout.version = version;
                    layout.valid_from = from;
                    let table = self.decode_table(layout)?;
                    self.side
                        .schema
                        .push(SchemaChange::Version(Arc::clone(table.layout())));
                    table
                }
            };
            let decode_table = match exact.get(&table) {
                Some(true) => decode_table.reading_older_rows(Arc::clone(&self.schemas.charsets)),
                Some(false) => decode_table.not_reading_older_rows(),
                None => decode_table,
            };
            self.schemas.layouts.register(&decode_table);
            decode_tables.insert(table, decode_table);
        }
        let mut removed: Vec<&TableId> = self
            .decoder
            .tables
            .keys()
            .filter(|t| !decode_tables.contains_key(*t))
            .collect();
        removed.sort();
        self.side
            .schema
            .extend(removed.into_iter().cloned().map(SchemaChange::Removed));
        // the objects of a table left out above are not mined either
        objects.retain(|_, table| decode_tables.contains_key(table));
        self.decoder.objects = Arc::new(objects);
        self.decoder.tables = Arc::new(decode_tables);
        Ok(differing)
    }

    /// A layout read from the dictionary, ready to decode with.
    fn decode_table(&self, layout: TableLayout) -> Result<DecodeTable, CdcError> {
        let column_filter = Arc::clone(&self.settings.column_filter);
        let for_table = layout.table.clone();
        let filter = ColumnFilter::from_fn(move |column: &str| column_filter(&for_table, column));
        DecodeTable::new(Arc::new(layout), filter)
            .map_err(|e| CdcError::new(CdcCode::Decode, e.to_string()))
    }

    /// Which of the layouts the dictionary gives now are the ones their tables' rows were
    /// written under from `valid_from` on, so that rows LogMiner returns generic after a later
    /// DDL may be decoded with them (the lag case). The dictionary knows only its newest
    /// layout, and a connector behind the database reads it after DDL still ahead in the
    /// redo:
    ///
    /// - at start, for every table: when its last DDL (`DBA_OBJECTS.LAST_DDL_TIME`) came at
    ///   least [`SCHEMA_DDL_MARGIN_S`] before the resume SCN's time (which is only
    ///   seconds-precise); a table the database cannot say this of is not known exact;
    /// - at a DDL row, for its table: when the layout is what the statement's text makes of
    ///   the version before it ([`predicts`]), and that version was exact. Times cannot tell
    ///   two DDLs of one second apart, which migrations often run; the text can.
    ///
    /// Tables left out keep what they had.
    fn exact_layouts(
        &mut self,
        layouts: &[TableLayout],
        valid_from: Scn,
        refresh: &Refresh,
    ) -> Result<HashMap<TableId, bool>, CdcError> {
        match refresh {
            Refresh::Start => {
                let tables: Vec<TableId> = layouts.iter().map(|l| l.table.clone()).collect();
                if tables.is_empty() {
                    return Ok(HashMap::new());
                }
                let after = self
                    .source
                    .last_ddl_after(&tables, valid_from)
                    .map_err(source_stop)?;
                Ok(tables
                    .into_iter()
                    .map(|table| {
                        let exact = after
                            .iter()
                            .any(|(t, seconds)| *t == table && *seconds <= -SCHEMA_DDL_MARGIN_S);
                        (table, exact)
                    })
                    .collect())
            }
            Refresh::Ddl {
                table: Some(table),
                changes,
            } => {
                let Some(now) = layouts.iter().find(|l| l.table == *table) else {
                    return Ok(HashMap::new());
                };
                let exact = match (self.decoder.tables.get(table), changes) {
                    (Some(before), Some(changes)) => {
                        before.older_rows().is_some() && predicts(before.layout(), changes, now)
                    }
                    // a table new to the capture: what CREATE TABLE's column list makes
                    (None, Some(changes)) => predicts(&empty_layout(table), changes, now),
                    (_, None) => false,
                };
                Ok(HashMap::from([(table.clone(), exact)]))
            }
            Refresh::Ddl { table: None, .. } => Ok(HashMap::new()),
        }
    }

    /// CDC-6003 at start: a table whose stored schema version valid at the resume SCN differs
    /// from the dictionary, though its last DDL came more than [`SCHEMA_DDL_MARGIN_S`] before
    /// that SCN's time. DDL after the resume point (still ahead in the redo) explains a
    /// difference; an older one means the stored versions are wrong (a damaged schema topic,
    /// an offset moved past DDL it never saw), and what they say of the records already sent
    /// cannot be trusted. Where the database cannot tell the times, there is no stop.
    pub(super) fn check_stored_schemas(
        &mut self,
        differing: &[(TableId, u32)],
    ) -> Result<(), CdcError> {
        if differing.is_empty() {
            return Ok(());
        }
        let resume = self.commit.position.resume.scn;
        let tables: Vec<TableId> = differing.iter().map(|(t, _)| t.clone()).collect();
        let after = self
            .source
            .last_ddl_after(&tables, resume)
            .map_err(source_stop)?;
        let stale: Vec<String> = differing
            .iter()
            .filter_map(|(table, version)| {
                let (_, seconds) = after.iter().find(|(t, _)| t == table)?;
                (*seconds <= -SCHEMA_DDL_MARGIN_S).then(|| {
                    format!(
                        "{table} (stored version {version}; its last DDL was {} s before the \
                         resume SCN {resume})",
                        -seconds
                    )
                })
            })
            .collect();
        if stale.is_empty() {
            return Ok(());
        }
        Err(CdcError::new(
            CdcCode::SchemaMismatch,
            format!(
                "the schema topic's version of {} differs from the dictionary, and no DDL since \
                 the resume point explains it",
                stale.join(", ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(columns: &[(&str, ColumnType)], segment: &[Option<u16>]) -> TableLayout {
        TableLayout {
            columns: columns
                .iter()
                .enumerate()
                .map(|(i, (n, t))| cdc_core::ColumnDef::new(*n, i as u16 + 1, t.clone()))
                .collect(),
            segment: segment.to_vec(),
            ..empty_layout(&TableId::new("APP", "T"))
        }
    }

    /// A version made from a DDL's text when the dictionary has moved on: the columns the
    /// text adds (with the dictionary's definition where it has the column with that type),
    /// drops and modifies, in order; a column added that the version already has is kept; the
    /// key stays the version's when the dictionary's key column is not there yet.
    #[test]
    fn a_ddl_text_makes_the_version_after_it_of_the_one_before() {
        use ColumnType as T;
        let changes = |sql: &str| crate::decode::column_changes(sql).unwrap();
        let mut before = layout(&[("ID", T::Number), ("A", T::Varchar2)], &[]);
        before.key = vec!["ID".into()];
        // the dictionary after two more ALTERs: E1 dropped again, K added and made the key
        let mut now = layout(
            &[("ID", T::Number), ("A", T::Varchar2), ("K", T::Number)],
            &[Some(0), Some(1), None, Some(2)],
        );
        now.key = vec!["K".into()];
        let added = derive(
            &before,
            &changes(r#"ALTER TABLE "APP"."T" ADD ("E1" NUMBER(12,2))"#),
            &now,
        );
        let names: Vec<&str> = added.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["ID", "A", "E1"]);
        let e1 = &added.columns[2];
        assert_eq!(
            (e1.data_type.clone(), e1.precision, e1.scale),
            (T::Number, Some(12), Some(2))
        );
        assert_eq!(e1.position, 3);
        assert_eq!(added.key, ["ID"], "K is not there yet");
        assert!(added.segment.is_empty(), "no segment is guessed");
        assert!(!same_columns(&added, &now));
        let modified = derive(
            &added,
            &changes(r#"ALTER TABLE "APP"."T" MODIFY ("A" NUMBER)"#),
            &now,
        );
        assert_eq!(modified.columns[1].data_type, T::Number);
        let dropped = derive(
            &modified,
            &changes(r#"ALTER TABLE "APP"."T" DROP COLUMN "E1""#),
            &now,
        );
        assert_eq!(dropped.columns.len(), 2);
        // K, read from the dictionary with the version before: adding it again keeps it
        let with_k = layout(
            &[("ID", T::Number), ("A", T::Varchar2), ("K", T::Number)],
            &[],
        );
        let again = derive(
            &with_k,
            &changes(r#"ALTER TABLE "APP"."T" ADD ("K" NUMBER)"#),
            &now,
        );
        assert!(same_columns(&again, &now));
        assert_eq!(again.key, ["K"]);
    }

    /// A layout read after a DDL is that DDL's when its text makes it of the version before;
    /// one a later DDL has changed too is not.
    #[test]
    fn a_ddl_predicts_the_layout_it_makes() {
        use ColumnType::{Date, Number, Varchar2};
        let changes = |sql: &str| crate::decode::column_changes(sql).unwrap();
        let v1 = layout(&[("ID", Number), ("A", Varchar2), ("B", Date)], &[]);
        let added = layout(
            &[("ID", Number), ("A", Varchar2), ("B", Date), ("C", Number)],
            &[],
        );
        let add = changes("alter table t add (c number(5))");
        assert!(predicts(&v1, &add, &added));
        // a later ALTER already in the dictionary: another column, or a type
        let added_twice = layout(
            &[
                ("ID", Number),
                ("A", Varchar2),
                ("B", Date),
                ("C", Number),
                ("D", Date),
            ],
            &[],
        );
        assert!(!predicts(&v1, &add, &added_twice));
        let retyped = layout(
            &[
                ("ID", Number),
                ("A", Varchar2),
                ("B", Varchar2),
                ("C", Number),
            ],
            &[],
        );
        assert!(!predicts(&v1, &add, &retyped));
        // ADD then DROP of the same column cancel out in the dictionary, not in the text
        assert!(!predicts(&v1, &add, &v1));
        // SET UNUSED keeps the segment column, hidden; DROP UNUSED COLUMNS takes it away
        let unused = layout(&[("ID", Number), ("B", Date)], &[Some(0), None, Some(1)]);
        assert!(predicts(
            &v1,
            &changes("alter table t set unused (a)"),
            &unused
        ));
        let compact = layout(&[("ID", Number), ("B", Date)], &[Some(0), Some(1)]);
        assert!(!predicts(
            &v1,
            &changes("alter table t set unused (a)"),
            &compact
        ));
        assert!(predicts(
            &unused,
            &changes("alter table t drop unused columns"),
            &compact
        ));
        assert!(predicts(
            &v1,
            &changes("alter table t drop column a"),
            &compact
        ));
        // MODIFY keeps the place; with a type, that type
        let modified = layout(&[("ID", Number), ("A", Varchar2), ("B", Varchar2)], &[]);
        assert!(predicts(
            &v1,
            &changes("alter table t modify (b varchar2(20))"),
            &modified
        ));
        assert!(!predicts(
            &v1,
            &changes("alter table t modify (b date)"),
            &modified
        ));
        // a column the text names that the version lacks: not made on it
        assert!(!predicts(
            &v1,
            &changes("alter table t drop column z"),
            &compact
        ));
        // a table new to the capture is what its CREATE lists
        let created =
            changes("create table t (id number, a varchar2(9), b date, primary key (id))");
        assert!(predicts(
            &empty_layout(&TableId::new("APP", "T")),
            &created,
            &v1
        ));
    }

    #[test]
    fn ddl_text_shown_is_bounded_and_hides_passwords() {
        assert_eq!(
            ddl_text_shown(r#"alter user "APP" identified by "Hunter2" account unlock"#),
            r#"alter user "APP" identified by ***"#
        );
        assert_eq!(
            ddl_text_shown("ALTER TABLE T ADD (C NUMBER)"),
            "ALTER TABLE T ADD (C NUMBER)"
        );
        let long = "é".repeat(3000);
        assert_eq!(ddl_text_shown(&long).chars().count(), 2000);
    }
}
