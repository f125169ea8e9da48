//! Schema versions an earlier run published (the schema topic, read back at start), so that a
//! restart goes on numbering where that run stopped: a layout that has not changed keeps its
//! version number and `valid_from`, and a new one gets the next number, never one that a
//! consumer has already seen for a different layout.
//!
//! The engine knows nothing of how versions are published; whoever read them back says
//! whether a layout from the dictionary would publish as a stored version did
//! ([`PublishedVersion::same`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use cdc_core::{Scn, TableId, TableLayout};

/// Whether a layout read from the dictionary publishes exactly as a stored version did
/// (its version number and `valid_from` aside).
pub type SameLayout = Arc<dyn Fn(&TableLayout) -> bool + Send + Sync>;

/// One stored version of a table.
#[derive(Clone)]
pub struct PublishedVersion {
    pub version: u32,
    pub valid_from: Scn,
    pub same: SameLayout,
}

impl fmt::Debug for PublishedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublishedVersion")
            .field("version", &self.version)
            .field("valid_from", &self.valid_from)
            .finish_non_exhaustive()
    }
}

/// Each table's stored versions, oldest first.
#[derive(Debug, Clone, Default)]
pub struct PublishedSchemas {
    tables: HashMap<TableId, Vec<PublishedVersion>>,
}

impl PublishedSchemas {
    /// A table's stored versions (sorted by version here).
    pub fn insert(&mut self, table: TableId, mut versions: Vec<PublishedVersion>) {
        versions.sort_by_key(|v| v.version);
        self.tables.insert(table, versions);
    }

    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// A table's stored versions, oldest first.
    pub fn versions(&self, table: &TableId) -> &[PublishedVersion] {
        self.tables.get(table).map_or(&[], Vec::as_slice)
    }

    /// Keeps, of each table, the versions a restart from `resume` may still decode with: the
    /// one valid at `resume` and every later one.
    pub fn prune(&mut self, resume: Scn) {
        for versions in self.tables.values_mut() {
            let first = first_valid_at(versions.iter().map(|v| v.valid_from), resume);
            versions.drain(..first);
        }
    }

    /// The stored version of `table` valid at the resume SCN, while nothing has been taken
    /// from the table's versions (at start).
    pub(super) fn valid_at(&self, table: &TableId, resume: Scn) -> Option<&PublishedVersion> {
        self.tables
            .get(table)
            .and_then(|versions| versions.first())
            .filter(|v| v.valid_from <= resume)
    }

    /// The highest version number stored for `table` (0 when none).
    pub(super) fn highest(&self, table: &TableId) -> u32 {
        self.tables
            .get(table)
            .and_then(|versions| versions.last())
            .map_or(0, |v| v.version)
    }

    /// The stored version `layout` publishes as, if any: the oldest that is the same. It and
    /// every older one are used up (a later layout change never goes back to them). When none
    /// is the same, the table's stored versions are all superseded by the new one.
    pub(super) fn take_same(
        &mut self,
        table: &TableId,
        layout: &TableLayout,
    ) -> Option<(u32, Scn)> {
        let versions = self.tables.get_mut(table)?;
        match versions.iter().position(|v| (v.same)(layout)) {
            Some(at) => {
                let found = (versions[at].version, versions[at].valid_from);
                versions.drain(..=at);
                Some(found)
            }
            None => {
                versions.clear();
                None
            }
        }
    }
}

/// Of versions in order, the index of the first one a restart from `resume` needs: the last
/// one valid from `resume` or before (0 when every one is later).
pub fn first_valid_at(valid_from: impl Iterator<Item = Scn>, resume: Scn) -> usize {
    valid_from
        .enumerate()
        .filter(|(_, from)| *from <= resume)
        .last()
        .map_or(0, |(at, _)| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(columns: usize) -> TableLayout {
        TableLayout {
            table: TableId::new("APP", "T"),
            version: 0,
            valid_from: Scn::ZERO,
            columns: (0..columns)
                .map(|i| {
                    cdc_core::ColumnDef::new(
                        format!("C{i}"),
                        i as u16 + 1,
                        cdc_core::ColumnType::Number,
                    )
                })
                .collect(),
            key: Vec::new(),
            key_source: cdc_core::table::KeySource::None,
            supplemental: Default::default(),
            segment: Vec::new(),
        }
    }

    /// A stored version that is "the same" as layouts with `columns` columns.
    fn stored(version: u32, valid_from: u64, columns: usize) -> PublishedVersion {
        PublishedVersion {
            version,
            valid_from: Scn(valid_from),
            same: Arc::new(move |l: &TableLayout| l.columns.len() == columns),
        }
    }

    fn schemas(versions: Vec<PublishedVersion>) -> PublishedSchemas {
        let mut s = PublishedSchemas::default();
        s.insert(TableId::new("APP", "T"), versions);
        s
    }

    #[test]
    fn pruning_keeps_the_version_valid_at_resume_and_later() {
        let froms = |s: &PublishedSchemas| -> Vec<u32> {
            s.tables.values().flatten().map(|v| v.version).collect()
        };
        let all = || vec![stored(3, 100, 1), stored(1, 10, 1), stored(2, 50, 1)];
        let mut s = schemas(all());
        s.prune(Scn(60));
        assert_eq!(froms(&s), vec![2, 3]);
        let mut s = schemas(all());
        s.prune(Scn(50));
        assert_eq!(froms(&s), vec![2, 3], "valid from the resume SCN itself");
        let mut s = schemas(all());
        s.prune(Scn(5));
        assert_eq!(froms(&s), vec![1, 2, 3], "every version is later");
        let mut s = schemas(all());
        s.prune(Scn(1000));
        assert_eq!(froms(&s), vec![3]);
    }

    #[test]
    fn a_layout_takes_the_oldest_same_version_and_uses_up_the_older_ones() {
        let table = TableId::new("APP", "T");
        let mut s = schemas(vec![stored(2, 50, 2), stored(3, 100, 3), stored(4, 200, 2)]);
        assert_eq!(s.highest(&table), 4);
        assert_eq!(s.take_same(&table, &layout(3)), Some((3, Scn(100))));
        // version 2 is used up: the same layout later is version 4
        assert_eq!(s.take_same(&table, &layout(2)), Some((4, Scn(200))));
        assert_eq!(s.take_same(&table, &layout(2)), None);
    }

    #[test]
    fn a_layout_no_stored_version_matches_supersedes_them_all() {
        let table = TableId::new("APP", "T");
        let mut s = schemas(vec![stored(2, 50, 2), stored(3, 100, 3)]);
        assert_eq!(s.take_same(&table, &layout(5)), None);
        assert_eq!(
            s.take_same(&table, &layout(3)),
            None,
            "version 3 is superseded"
        );
        assert_eq!(s.highest(&table), 0);
        assert_eq!(s.take_same(&TableId::new("APP", "OTHER"), &layout(3)), None);
    }
}
