//! Committed row versions: what a flashback query (`AS OF SCN`) reads. `SimTable::rows` is the
//! database's current state, uncommitted changes included; this store keeps, per table and
//! row, the versions COMMIT made, as far back as the undo retention reaches.
//!
//! ```text
//!   COMMIT at scn ──► each surviving change: a version of its row at scn
//!                     (the after image, or "absent" for a delete)
//!   DDL at scn    ──► every row collapsed to its newest version, in the new layout;
//!                     reads below scn fail (ORA-01466)
//!   clock passes  ──► commits older than UNDO_RETENTION expire: their rows keep only the
//!                     newest version at or below the table's horizon (its newest expired
//!                     commit); reads of the table below it fail (ORA-01555)
//!
//!   SimDatabase ──write──► Arc<RwLock<VersionState>> ◄──read── SimSnapshotReader (any thread)
//! ```
//!
//! Versions share their values (`Arc<[Value]>`): a read never copies a table, a commit moves
//! the after images it already owns. Key order comes from indexes built on first use and kept
//! up to date by each commit; they hold every retained version's key, and a read takes an
//! entry only when the row's version at its SCN still has that key.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use cdc_core::{ColumnType, Scn, TableId, TableLayout, Value};

use super::tables::TableRef;
use crate::sim::order::{self, RowPos};

/// A committed row's values, in the column order of its table's current layout.
pub(crate) type StoredRow = Arc<[Value]>;

/// One committed version of a row.
#[derive(Debug, Clone)]
struct Version {
    /// The commit SCN.
    scn: Scn,
    /// `None`: the row was deleted at this SCN.
    row: Option<StoredRow>,
}

/// A row's committed versions, oldest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowHistory {
    versions: Vec<Version>,
}

impl RowHistory {
    /// The row as of `scn`: its newest version at or below it, unless that one is a delete.
    pub(crate) fn as_of(&self, scn: Scn) -> Option<&StoredRow> {
        self.versions
            .iter()
            .rev()
            .find(|v| v.scn <= scn)
            .and_then(|v| v.row.as_ref())
    }

    /// The row as committed now.
    pub(crate) fn newest(&self) -> Option<&StoredRow> {
        self.versions.last().and_then(|v| v.row.as_ref())
    }

    fn holds_key(&self, index: &KeyIndex, key: &[KeyPart]) -> bool {
        self.versions
            .iter()
            .filter_map(|v| v.row.as_deref())
            .any(|row| index.matches(row, key))
    }
}

/// One column's value in a key, ordered as `ORDER BY` orders the column.
#[derive(Debug, Clone)]
pub(crate) struct KeyPart {
    pub(crate) value: Value,
    /// NCHAR/NVARCHAR2: compared in UTF-16.
    national: bool,
}

impl PartialEq for KeyPart {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for KeyPart {}

impl PartialOrd for KeyPart {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyPart {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        order::compare(&self.value, &other.value, self.national)
    }
}

/// A row's key: its key columns' values in key order.
pub(crate) type KeyTuple = Box<[KeyPart]>;

/// The rows of a table in the order of some columns: an index over every retained version.
#[derive(Debug, Clone)]
pub(crate) struct KeyIndex {
    /// The key columns, as indexes into the stored rows.
    pub(crate) columns: Vec<usize>,
    national: Vec<bool>,
    pub(crate) entries: BTreeSet<(KeyTuple, RowPos)>,
}

impl KeyIndex {
    fn new(layout: &TableLayout, columns: Vec<usize>) -> KeyIndex {
        let national = columns
            .iter()
            .map(|&i| {
                layout.columns.get(i).is_some_and(|c| {
                    matches!(c.data_type, ColumnType::NChar | ColumnType::NVarchar2)
                })
            })
            .collect();
        KeyIndex {
            columns,
            national,
            entries: BTreeSet::new(),
        }
    }

    /// The key of a stored row.
    fn key(&self, row: &[Value]) -> KeyTuple {
        self.tuple(self.columns.iter().map(|&i| row.get(i).cloned()))
    }

    /// A key from values given in key order (a bound).
    pub(crate) fn bound(&self, values: &[Value]) -> KeyTuple {
        self.tuple(values.iter().cloned().map(Some))
    }

    fn tuple(&self, values: impl Iterator<Item = Option<Value>>) -> KeyTuple {
        values
            .zip(&self.national)
            .map(|(value, &national)| KeyPart {
                value: value.unwrap_or(Value::Null),
                national,
            })
            .collect()
    }

    /// Whether a stored row has this key.
    pub(crate) fn matches(&self, row: &[Value], key: &[KeyPart]) -> bool {
        self.columns.len() == key.len()
            && self.columns.iter().zip(key).all(|(&i, part)| {
                order::compare(
                    row.get(i).unwrap_or(&Value::Null),
                    &part.value,
                    part.national,
                ) == std::cmp::Ordering::Equal
            })
    }
}

/// The committed versions of one table.
#[derive(Debug, Clone)]
pub(crate) struct TableVersions {
    pub(crate) id: TableId,
    pub(crate) dropped: bool,
    /// The current layout: the stored rows' column order.
    pub(crate) layout: Arc<TableLayout>,
    /// The SCN of the table's last DDL (CREATE, ALTER, TRUNCATE …); `None` for a table older
    /// than the database's first SCN. A flashback read below it fails with ORA-01466.
    pub(crate) defined_at: Option<Scn>,
    pub(crate) rows: BTreeMap<RowPos, RowHistory>,
    /// Rows whose newest version is not a delete.
    pub(crate) live: u64,
    /// The newest commit of the table whose undo has expired: a read below it would need that
    /// undo, and fails with ORA-01555. Other tables' expired commits do not matter, as a
    /// flashback query needs the undo of the blocks it reads only.
    pub(crate) horizon: Option<Scn>,
    indexes: Vec<KeyIndex>,
}

impl TableVersions {
    fn new(id: TableId, layout: Arc<TableLayout>) -> TableVersions {
        TableVersions {
            id,
            dropped: false,
            layout,
            defined_at: None,
            rows: BTreeMap::new(),
            live: 0,
            horizon: None,
            indexes: Vec::new(),
        }
    }

    /// The index in the order of these stored columns, if one was built.
    pub(crate) fn index(&self, columns: &[usize]) -> Option<&KeyIndex> {
        self.indexes.iter().find(|i| i.columns == columns)
    }

    /// Builds the index in the order of these stored columns, unless there is one.
    pub(crate) fn ensure_index(&mut self, columns: &[usize]) {
        if self.index(columns).is_some() {
            return;
        }
        let mut index = KeyIndex::new(&self.layout, columns.to_vec());
        for (pos, history) in &self.rows {
            for row in history.versions.iter().filter_map(|v| v.row.as_deref()) {
                index.entries.insert((index.key(row), *pos));
            }
        }
        self.indexes.push(index);
    }

    /// A new version of a row at `scn`; a second change of the row in the same transaction
    /// replaces the first.
    fn put(&mut self, pos: RowPos, scn: Scn, row: Option<StoredRow>) {
        let history = self.rows.entry(pos).or_default();
        let was_live = history.newest().is_some();
        let replaced = match history.versions.last_mut() {
            Some(last) if last.scn == scn => std::mem::replace(&mut last.row, row.clone()),
            _ => {
                history.versions.push(Version {
                    scn,
                    row: row.clone(),
                });
                None
            }
        };
        let is_live = history.newest().is_some();
        match (was_live, is_live) {
            (false, true) => self.live += 1,
            (true, false) => self.live = self.live.saturating_sub(1),
            _ => {}
        }
        for index in &mut self.indexes {
            if let Some(row) = &row {
                index.entries.insert((index.key(row), pos));
            }
            if let Some(old) = &replaced {
                let key = index.key(old);
                if !history.holds_key(index, &key) {
                    index.entries.remove(&(key, pos));
                }
            }
        }
    }

    /// The undo of commits up to `horizon` is gone: the row keeps its newest version at or
    /// below it (none when that one is a delete) and those after it.
    fn prune(&mut self, pos: RowPos, horizon: Scn) {
        self.horizon = self.horizon.max(Some(horizon));
        let Some(history) = self.rows.get_mut(&pos) else {
            return;
        };
        let keep_from = history
            .versions
            .iter()
            .rposition(|v| v.scn <= horizon)
            .unwrap_or(0);
        let mut gone: Vec<Version> = history.versions.drain(..keep_from).collect();
        // a delete at or below the horizon reads the same as no version at all
        if history
            .versions
            .first()
            .is_some_and(|v| v.row.is_none() && v.scn <= horizon)
        {
            gone.extend(history.versions.drain(..1));
        }
        if gone.is_empty() {
            return;
        }
        for index in &mut self.indexes {
            for row in gone.iter().filter_map(|v| v.row.as_deref()) {
                let key = index.key(row);
                if !history.holds_key(index, &key) {
                    index.entries.remove(&(key, pos));
                }
            }
        }
        if history.versions.is_empty() {
            self.rows.remove(&pos);
        }
    }

    /// A DDL at `scn`: reads below it fail from now on, so each row keeps only its newest
    /// version, in the new layout (columns matched by name: an added one is NULL, a dropped
    /// one goes); TRUNCATE leaves none. No transaction of the table is open (a DDL waits for
    /// none, ORA-00054), so the newest versions are the table's rows.
    fn redefine(&mut self, scn: Scn, layout: Arc<TableLayout>, truncate: bool) {
        let from: Vec<Option<usize>> = layout
            .columns
            .iter()
            .map(|c| self.layout.column_index(&c.name))
            .collect();
        let same_columns = from.len() == self.layout.columns.len()
            && from.iter().enumerate().all(|(i, f)| *f == Some(i));
        let rows = std::mem::take(&mut self.rows);
        if !truncate {
            for (pos, mut history) in rows {
                let Some(newest) = history.versions.pop() else {
                    continue;
                };
                let Some(row) = newest.row else {
                    continue;
                };
                let row = if same_columns {
                    row
                } else {
                    from.iter()
                        .map(|f| f.and_then(|i| row.get(i).cloned()).unwrap_or(Value::Null))
                        .collect()
                };
                self.rows.insert(
                    pos,
                    RowHistory {
                        versions: vec![Version {
                            scn: newest.scn,
                            row: Some(row),
                        }],
                    },
                );
            }
        }
        self.live = self.rows.len() as u64;
        self.layout = layout;
        self.defined_at = Some(scn);
        // the key columns may have moved: indexes are built again on first use
        self.indexes.clear();
    }
}

/// A commit whose versions are still within the undo retention.
#[derive(Debug, Clone)]
struct CommitPoint {
    scn: Scn,
    nanos: i128,
    rows: Vec<(TableRef, RowPos)>,
}

/// What the store knows: every table's versions, the database's SCN range and clock, and the
/// retention horizon.
#[derive(Debug, Clone)]
pub(crate) struct VersionState {
    /// The database's first SCN: nothing older can be read (ORA-08181).
    pub(crate) first_scn: Scn,
    /// The highest SCN handed out: nothing newer can be read (ORA-08181).
    pub(crate) current_scn: Scn,
    now_nanos: i128,
    retention_nanos: i128,
    pub(crate) tables: BTreeMap<TableRef, TableVersions>,
    /// Commits within the retention, oldest first.
    pending: VecDeque<CommitPoint>,
}

impl VersionState {
    /// Adds a table (created now, or one the database starts with).
    pub(crate) fn register(&mut self, t: TableRef, id: TableId, layout: Arc<TableLayout>) {
        self.tables.insert(t, TableVersions::new(id, layout));
    }

    /// The clock and the SCN moved on; commits that fell out of the retention expire.
    pub(crate) fn advance(&mut self, scn: Scn, now_nanos: i128) {
        self.current_scn = self.current_scn.max(scn);
        self.now_nanos = self.now_nanos.max(now_nanos);
        self.expire();
    }

    /// UNDO_RETENTION changed (ALTER SYSTEM).
    pub(crate) fn set_retention(&mut self, seconds: u64) {
        self.retention_nanos = i128::from(seconds) * 1_000_000_000;
        self.expire();
    }

    fn expire(&mut self) {
        let cutoff = self.now_nanos - self.retention_nanos;
        while let Some(point) = self.pending.front() {
            if point.nanos >= cutoff {
                break;
            }
            let Some(point) = self.pending.pop_front() else {
                break;
            };
            for (t, pos) in point.rows {
                if let Some(table) = self.tables.get_mut(&t) {
                    table.prune(pos, point.scn);
                }
            }
        }
    }

    /// A COMMIT at `scn` and time `nanos`: each change a new version of its row.
    pub(crate) fn commit(
        &mut self,
        scn: Scn,
        nanos: i128,
        changes: Vec<(TableRef, RowPos, Option<StoredRow>)>,
    ) {
        let mut rows = Vec::with_capacity(changes.len());
        for (t, pos, row) in changes {
            if let Some(table) = self.tables.get_mut(&t) {
                table.put(pos, scn, row);
                rows.push((t, pos));
            }
        }
        rows.sort_unstable();
        rows.dedup();
        if !rows.is_empty() {
            self.pending.push_back(CommitPoint { scn, nanos, rows });
        }
        self.advance(scn, nanos);
    }

    /// A DDL of the table at `scn`, `layout` its layout after it.
    pub(crate) fn redefine(
        &mut self,
        t: TableRef,
        scn: Scn,
        layout: Arc<TableLayout>,
        truncate: bool,
    ) {
        if let Some(table) = self.tables.get_mut(&t) {
            table.redefine(scn, layout, truncate);
        }
    }

    /// ALTER TABLE … RENAME TO: reads find it by its new name (its layout follows at the
    /// rename's DDL, [`VersionState::redefine`]).
    pub(crate) fn rename(&mut self, t: TableRef, id: TableId) {
        if let Some(table) = self.tables.get_mut(&t) {
            table.id = id;
        }
    }

    /// DROP TABLE … PURGE: its rows are gone with it.
    pub(crate) fn drop_table(&mut self, t: TableRef) {
        if let Some(table) = self.tables.get_mut(&t) {
            table.dropped = true;
            table.rows.clear();
            table.indexes.clear();
            table.live = 0;
        }
    }

    /// The live table of that name.
    pub(crate) fn table_named(&self, id: &TableId) -> Option<(TableRef, &TableVersions)> {
        self.tables
            .iter()
            .rev()
            .find(|(_, t)| !t.dropped && &t.id == id)
            .map(|(r, t)| (*r, t))
    }
}

/// The store, shared between the database and the snapshot readers it hands out. Cloning
/// copies it (a cloned database goes its own way); [`CommittedVersions::share`] shares it.
pub(crate) struct CommittedVersions {
    state: Arc<RwLock<VersionState>>,
}

impl CommittedVersions {
    pub(crate) fn new(first_scn: Scn, now_nanos: i128, retention_secs: u64) -> CommittedVersions {
        CommittedVersions {
            state: Arc::new(RwLock::new(VersionState {
                first_scn,
                current_scn: first_scn,
                now_nanos,
                retention_nanos: i128::from(retention_secs) * 1_000_000_000,
                tables: BTreeMap::new(),
                pending: VecDeque::new(),
            })),
        }
    }

    /// Another handle on the same store.
    pub(crate) fn share(&self) -> CommittedVersions {
        CommittedVersions {
            state: Arc::clone(&self.state),
        }
    }

    // No code panics while holding the lock, so a poisoned lock still holds a consistent
    // state; it is taken as it is.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, VersionState> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, VersionState> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Clone for CommittedVersions {
    fn clone(&self) -> Self {
        CommittedVersions {
            state: Arc::new(RwLock::new(self.read().clone())),
        }
    }
}

impl fmt::Debug for CommittedVersions {
    // a table of a million rows is not printed
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.read();
        f.debug_struct("CommittedVersions")
            .field("first_scn", &state.first_scn)
            .field("current_scn", &state.current_scn)
            .field("tables", &state.tables.len())
            .field(
                "rows",
                &state.tables.values().map(|t| t.rows.len()).sum::<usize>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::model::{ColumnSpec, Organization, TableSpec, layout_from_spec};
    use cdc_core::Decimal;

    fn layout() -> Arc<TableLayout> {
        let column = |name: &str, data_type: &str| ColumnSpec {
            name: name.into(),
            data_type: data_type.into(),
            nullable: true,
        };
        let spec = TableSpec {
            pdb: None,
            owner: "APP".into(),
            name: "T".into(),
            columns: vec![column("ID", "NUMBER"), column("V", "VARCHAR2(10)")],
            primary_key: vec!["ID".into()],
            unique_indexes: vec![],
            organization: Organization::Heap,
        };
        Arc::new(layout_from_spec(&spec, TableId::new("APP", "T"), Scn(1)).unwrap())
    }

    fn row(id: i64, v: &str) -> Option<StoredRow> {
        Some(Arc::from(vec![
            Value::Number(Decimal::new(i128::from(id), 0)),
            Value::Text(v.to_owned()),
        ]))
    }

    fn pos(n: u32) -> RowPos {
        RowPos {
            object: 1,
            file: 4,
            block: 300,
            row: n,
        }
    }

    const T: TableRef = TableRef { con: 0, index: 0 };
    const SECOND: i128 = 1_000_000_000;

    #[test]
    fn versions_expire_past_the_retention_keeping_the_one_at_the_horizon() {
        let store = CommittedVersions::new(Scn(100), 0, 10);
        let mut s = store.write();
        s.register(T, TableId::new("APP", "T"), layout());
        s.tables.get_mut(&T).unwrap().ensure_index(&[0]);
        s.commit(Scn(110), SECOND, vec![(T, pos(0), row(1, "a"))]);
        s.commit(Scn(120), 2 * SECOND, vec![(T, pos(0), row(2, "b"))]);
        s.commit(Scn(130), 3 * SECOND, vec![(T, pos(1), row(3, "c"))]);
        s.commit(Scn(140), 4 * SECOND, vec![(T, pos(1), None)]);
        let table = &s.tables[&T];
        assert_eq!(table.live, 1);
        assert_eq!(table.rows[&pos(0)].as_of(Scn(115)), row(1, "a").as_ref());
        assert_eq!(table.index(&[0]).unwrap().entries.len(), 3);
        // 12.5 s: the commits at 1 s and 2 s are older than 10 s
        s.advance(Scn(150), 12 * SECOND + SECOND / 2);
        assert_eq!(s.tables[&T].horizon, Some(Scn(120)));
        let table = &s.tables[&T];
        assert_eq!(table.rows[&pos(0)].versions.len(), 1);
        assert_eq!(table.rows[&pos(0)].as_of(Scn(125)), row(2, "b").as_ref());
        assert_eq!(table.index(&[0]).unwrap().entries.len(), 2);
        // the delete at 4 s expires: the row is gone for good
        s.advance(Scn(160), 15 * SECOND);
        let table = &s.tables[&T];
        assert!(!table.rows.contains_key(&pos(1)));
        assert_eq!(table.index(&[0]).unwrap().entries.len(), 1);
        assert_eq!(table.horizon, Some(Scn(140)));
    }

    #[test]
    fn a_second_change_in_one_commit_replaces_the_first() {
        let store = CommittedVersions::new(Scn(100), 0, 900);
        let mut s = store.write();
        s.register(T, TableId::new("APP", "T"), layout());
        s.tables.get_mut(&T).unwrap().ensure_index(&[0]);
        s.commit(
            Scn(110),
            SECOND,
            vec![(T, pos(0), row(1, "a")), (T, pos(0), row(5, "a"))],
        );
        let table = &s.tables[&T];
        assert_eq!(table.rows[&pos(0)].versions.len(), 1);
        let keys: Vec<_> = table.index(&[0]).unwrap().entries.iter().collect();
        assert_eq!(keys.len(), 1, "the key 1 never committed");
        assert_eq!(keys[0].0[0].value, Value::Number(Decimal::new(5, 0)));
    }

    #[test]
    fn a_clone_is_a_copy_and_a_share_is_not() {
        let store = CommittedVersions::new(Scn(100), 0, 900);
        store
            .write()
            .register(T, TableId::new("APP", "T"), layout());
        let copy = store.clone();
        let shared = store.share();
        store
            .write()
            .commit(Scn(110), SECOND, vec![(T, pos(0), row(1, "a"))]);
        assert_eq!(shared.read().tables[&T].live, 1);
        assert_eq!(copy.read().tables[&T].live, 0);
    }
}
