//! A schema version prepared for decoding: the layout, a fast name → column index lookup and
//! the excluded-column flags, built once per (table, version) by the engine and shared by the
//! decode threads; the first insert decoded in one pass leaves its resolved column list here
//! for the others.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, OnceLock};

use cdc_core::table::{TableId, TableLayout};

use super::error::ExcludedKeyColumn;
use super::filter::ColumnFilter;
use super::internal::Charsets;

/// FNV-1a: names are short and trusted (they come from the dictionary), so a DoS-resistant
/// hash buys nothing here and costs a third of a lookup.
#[derive(Debug, Default, Clone, Copy)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// `a == b` for names and other short texts, inline with a few word compares (a column name is
/// a dozen bytes or so, and a call to `memcmp` costs more than comparing it).
#[inline]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], i: usize| {
        s.get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map(u64::from_ne_bytes)
    };
    let half = |s: &[u8], i: usize| {
        s.get(i..i + 4)
            .and_then(|w| <[u8; 4]>::try_from(w).ok())
            .map(u32::from_ne_bytes)
    };
    match n {
        0..4 => a == b,
        // two words that overlap when the length is not a multiple of the width
        4..8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        _ => {
            let mut i = 0;
            while i + 8 < n {
                if word(a, i) != word(b, i) {
                    return false;
                }
                i += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        }
    }
}

/// Up to this many columns, a name out of layout order is looked for column by column: a
/// length differs at once, and hashing the name costs more than a few compares.
const LINEAR_LOOKUP_COLUMNS: usize = 16;

/// Checks that no key column of the layout is excluded (a configuration error).
pub fn check_excluded_keys(
    layout: &TableLayout,
    filter: &ColumnFilter,
) -> Result<(), ExcludedKeyColumn> {
    match layout.key.iter().find(|k| filter.is_excluded(k)) {
        Some(column) => Err(ExcludedKeyColumn {
            table: layout.table.to_string(),
            column: column.clone(),
        }),
        None => Ok(()),
    }
}

/// One schema version of a table, ready to decode rows with.
#[derive(Clone)]
pub struct DecodeTable {
    layout: Arc<TableLayout>,
    /// The layout's table, shared by every row decoded with this version.
    table: Arc<TableId>,
    index: HashMap<Box<str>, u16, BuildHasherDefault<Fnv>>,
    excluded: Vec<bool>,
    filter: ColumnFilter,
    /// `"OWNER"."TABLE"` as LogMiner writes the layout's table, for the one-pass decoder;
    /// `None` when a name holds a `"` (written doubled) or is one LogMiner gives a table it
    /// has no dictionary entry for (those rows fail and are left to the general path).
    quoted_name: Option<Box<str>>,
    /// `"NAME" = ` for each column as LogMiner writes an update or delete item, for the
    /// one-pass decoder; `None` for a name that holds a `"` (written doubled).
    item_prefixes: Vec<Option<Box<[u8]>>>,
    /// The column list of the first insert decoded in one pass: LogMiner writes every insert
    /// of a schema version with the same list, so later ones compare it instead of resolving
    /// each name again.
    insert_columns: OnceLock<InsertColumns>,
    /// Set when rows written before a later DDL (STATUS 2, generic `"COL n"` names and
    /// `HEXTORAW` literals) may be decoded with this version: the engine knows it was the
    /// table's layout where such rows are met. The character sets their text is stored in.
    older_rows: Option<Arc<Charsets>>,
}

/// An insert's column list as written, from `(` to `) values (`, and what each of its names
/// resolved to (`None`: excluded).
#[derive(Debug, Clone)]
pub(crate) struct InsertColumns {
    pub(crate) text: Box<str>,
    pub(crate) columns: Box<[Option<usize>]>,
}

impl fmt::Debug for DecodeTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeTable")
            .field("table", &self.layout.table)
            .field("version", &self.layout.version)
            .field("columns", &self.layout.columns.len())
            .field("excluded", &self.excluded.iter().filter(|e| **e).count())
            .finish()
    }
}

impl DecodeTable {
    /// Prepares `layout`; fails when `filter` excludes a key column.
    pub fn new(
        layout: Arc<TableLayout>,
        filter: ColumnFilter,
    ) -> Result<DecodeTable, ExcludedKeyColumn> {
        check_excluded_keys(&layout, &filter)?;
        Ok(DecodeTable::build(layout, filter))
    }

    /// Prepares a layout with no excluded column.
    pub fn without_exclusions(layout: Arc<TableLayout>) -> DecodeTable {
        DecodeTable::build(layout, ColumnFilter::none())
    }

    fn build(layout: Arc<TableLayout>, filter: ColumnFilter) -> DecodeTable {
        let mut index = HashMap::with_capacity_and_hasher(layout.columns.len(), Default::default());
        for (i, column) in layout
            .columns
            .iter()
            .enumerate()
            .take(usize::from(u16::MAX))
        {
            // the first of two equal names wins, like the dictionary's COLUMN_ID order
            index
                .entry(column.name.clone().into_boxed_str())
                .or_insert(i as u16);
        }
        let excluded = layout
            .columns
            .iter()
            .map(|c| filter.is_excluded(&c.name))
            .collect();
        let (owner, table) = (&layout.table.owner, &layout.table.table);
        let quoted_name = (!owner.contains('"')
            && !table.contains('"')
            && owner.as_str() != "UNKNOWN"
            && !table.starts_with("OBJ# "))
        .then(|| format!("\"{owner}\".\"{table}\"").into_boxed_str());
        let item_prefixes = layout
            .columns
            .iter()
            .map(|c| {
                (!c.name.contains('"'))
                    .then(|| format!("\"{}\" = ", c.name).into_bytes().into_boxed_slice())
            })
            .collect();
        DecodeTable {
            table: Arc::new(layout.table.clone()),
            quoted_name,
            item_prefixes,
            layout,
            index,
            excluded,
            filter,
            insert_columns: OnceLock::new(),
            older_rows: None,
        }
    }

    /// This version, also for rows written under it that LogMiner returns generic because a
    /// later DDL changed the table (their text stored in `charsets`).
    pub fn reading_older_rows(mut self, charsets: Arc<Charsets>) -> DecodeTable {
        self.older_rows = Some(charsets);
        self
    }

    /// This version, no longer for generic rows (it may not be the layout they were written
    /// under).
    pub fn not_reading_older_rows(mut self) -> DecodeTable {
        self.older_rows = None;
        self
    }

    /// The character sets of generic rows, when they may be decoded with this version.
    pub fn older_rows(&self) -> Option<&Arc<Charsets>> {
        self.older_rows.as_ref()
    }

    pub fn layout(&self) -> &Arc<TableLayout> {
        &self.layout
    }

    /// The table's identity, to hand to each decoded row.
    pub(crate) fn table(&self) -> &Arc<TableId> {
        &self.table
    }

    /// Whether the filter may exclude any column (known or not).
    pub fn has_exclusions(&self) -> bool {
        !self.filter.is_empty()
    }

    /// The column index of `name`; `hint` is tried first (columns usually come in layout order).
    #[inline]
    pub(crate) fn lookup(&self, name: &str, hint: usize) -> Option<usize> {
        if let Some(column) = self.layout.columns.get(hint)
            && same_bytes(column.name.as_bytes(), name.as_bytes())
        {
            return Some(hint);
        }
        if self.layout.columns.len() <= LINEAR_LOOKUP_COLUMNS {
            // the first column of that name, as the index holds it
            return self
                .layout
                .columns
                .iter()
                .position(|c| same_bytes(c.name.as_bytes(), name.as_bytes()));
        }
        self.index.get(name).map(|&i| usize::from(i))
    }

    /// `"OWNER"."TABLE"`, when the one-pass decoder may read the table's rows.
    pub(crate) fn quoted_name(&self) -> Option<&str> {
        self.quoted_name.as_deref()
    }

    /// `"NAME" = ` of the column at `index`, when the one-pass decoder may match it whole.
    #[inline]
    pub(crate) fn item_prefix(&self, index: usize) -> Option<&[u8]> {
        self.item_prefixes.get(index)?.as_deref()
    }

    /// The column whose `"NAME" = ` starts `text`, in a layout of up to
    /// [`LINEAR_LOOKUP_COLUMNS`] columns, and the prefix's length: the first column of that
    /// name, as [`DecodeTable::lookup`] finds it past its hint (a name with a `"` in it has no
    /// prefix, and the one-pass decoder reads no such name). `None` for a wider layout, where
    /// hashing the name costs less than comparing every prefix, or when no prefix matches.
    #[inline]
    pub(crate) fn item_column(&self, text: &[u8]) -> Option<(usize, usize)> {
        if self.item_prefixes.len() > LINEAR_LOOKUP_COLUMNS {
            return None;
        }
        self.item_prefixes
            .iter()
            .enumerate()
            .find_map(|(index, prefix)| {
                let prefix = prefix.as_deref()?;
                // the closing quote where this name's would be first: it turns most names of
                // another length away with one byte
                let close = prefix.len().checked_sub(4)?;
                (text.get(close) == Some(&b'"') && Self::starts_with(text, prefix))
                    .then_some((index, prefix.len()))
            })
    }

    /// Whether `text` starts with `prefix`, compared inline (see [`same_bytes`]).
    #[inline]
    pub(crate) fn starts_with(text: &[u8], prefix: &[u8]) -> bool {
        text.get(..prefix.len())
            .is_some_and(|head| same_bytes(head, prefix))
    }

    /// The resolved column list of this version's inserts, once one has been decoded.
    pub(crate) fn insert_columns(&self) -> &OnceLock<InsertColumns> {
        &self.insert_columns
    }

    pub(crate) fn is_excluded_index(&self, index: usize) -> bool {
        self.excluded.get(index).copied().unwrap_or(false)
    }

    pub(crate) fn is_excluded_name(&self, name: &str) -> bool {
        self.filter.is_excluded(name)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cdc_core::position::Scn;
    use cdc_core::table::{ColumnDef, ColumnType, KeySource, TableId, TableLayout};

    use super::{DecodeTable, LINEAR_LOOKUP_COLUMNS, same_bytes};

    /// Column by column or through the index, a name resolves to its first column.
    #[test]
    fn lookup_gives_the_first_column_of_a_name_at_any_width() {
        for width in [3, LINEAR_LOOKUP_COLUMNS, LINEAR_LOOKUP_COLUMNS + 1, 40] {
            let names: Vec<String> = (0..width).map(|i| format!("C{}", i % 5)).collect();
            let layout = TableLayout {
                table: TableId::new("O", "T"),
                version: 1,
                valid_from: Scn(1),
                columns: names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| ColumnDef::new(n, i as u16 + 1, ColumnType::Number))
                    .collect(),
                key: vec!["C0".to_owned()],
                key_source: KeySource::PrimaryKey,
                supplemental: Default::default(),
                segment: Vec::new(),
            };
            let table = DecodeTable::without_exclusions(Arc::new(layout));
            for name in ["C0", "C3", "C4", "C9", "", "C"] {
                let first = names.iter().position(|n| n == name);
                assert_eq!(table.lookup(name, usize::MAX), first, "{width} {name}");
                for (hint, at_hint) in names.iter().enumerate() {
                    let expected = if at_hint == name { Some(hint) } else { first };
                    assert_eq!(table.lookup(name, hint), expected, "{width} {name} {hint}");
                }
            }
        }
    }

    #[test]
    fn same_bytes_is_equality() {
        let names = [
            "",
            "A",
            "B",
            "ID",
            "IE",
            "NAM",
            "NAME",
            "NAMF",
            "XAME",
            "AMOUNT",
            "AMOUNU",
            "BMOUNT",
            "AMOUNT_1",
            "AMOUNT_2",
            "BMOUNT_1",
            "UPDATED_AT_12",
            "UPDATED_AT_13",
            "XPDATED_AT_12",
            "UPDATED_XT_12",
            "A_SIXTEEN_BYTES_",
            "A_SIXTEEN_BYTES!",
            "B_SIXTEEN_BYTES_",
            "SEVENTEEN_BYTES_1",
            "SEVENTEEN_BYTES_2",
            "SEVENTEEN_BYTEZ_1",
            "Zürich",
            "ZÜRICH",
        ];
        for a in names {
            for b in names {
                assert_eq!(same_bytes(a.as_bytes(), b.as_bytes()), a == b, "{a} {b}");
            }
        }
    }
}
