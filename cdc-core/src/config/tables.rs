//! Which tables and columns are captured, and per-table overrides.
//!
//! Table patterns match the whole of `PDB.OWNER.TABLE` (`OWNER.TABLE` in a non-CDB); column
//! patterns the whole of `[PDB.]OWNER.TABLE.COLUMN`. With `cdc.tables.case.sensitive=false`
//! (the default) patterns ignore case and per-table names are compared in upper case, the case
//! of unquoted Oracle identifiers.

use std::collections::BTreeMap;
use std::fmt;

use regex::{Regex, RegexBuilder};

/// A list of full-match regular expressions.
#[derive(Clone, Default)]
pub struct NamePatterns {
    patterns: Vec<Regex>,
    sources: Vec<String>,
}

impl NamePatterns {
    /// Compiles each pattern anchored at both ends; the error names the pattern that failed.
    pub fn compile(sources: &[String], case_sensitive: bool) -> Result<NamePatterns, String> {
        let mut patterns = Vec::with_capacity(sources.len());
        for source in sources {
            let regex = RegexBuilder::new(&format!(r"\A(?:{source})\z"))
                .case_insensitive(!case_sensitive)
                .build()
                .map_err(|error| {
                    format!("`{source}` does not compile: {}", regex_reason(&error))
                })?;
            patterns.push(regex);
        }
        Ok(NamePatterns {
            patterns,
            sources: sources.to_vec(),
        })
    }

    /// Whether any pattern matches the whole name.
    pub fn matches(&self, name: &str) -> bool {
        self.patterns.iter().any(|pattern| pattern.is_match(name))
    }

    /// The patterns as configured.
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }
}

impl fmt::Debug for NamePatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.sources).finish()
    }
}

/// The regex crate's message spans several lines with a caret; keep the reason only.
fn regex_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .map(str::to_owned)
        .unwrap_or_else(|| text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `PDB.OWNER.TABLE`, or `OWNER.TABLE` without a PDB.
pub fn qualified_table(pdb: Option<&str>, owner: &str, table: &str) -> String {
    match pdb {
        Some(pdb) => format!("{pdb}.{owner}.{table}"),
        None => format!("{owner}.{table}"),
    }
}

/// The captured tables and the excluded columns.
#[derive(Debug, Clone, Default)]
pub struct TableSelection {
    pub include: NamePatterns,
    pub exclude: NamePatterns,
    pub columns_exclude: NamePatterns,
    /// Users whose transactions the mining query filters out.
    pub users_exclude: Vec<String>,
    pub case_sensitive: bool,
}

impl TableSelection {
    /// Whether changes of this table are captured: included and not excluded.
    pub fn is_table_included(&self, pdb: Option<&str>, owner: &str, table: &str) -> bool {
        let name = qualified_table(pdb, owner, table);
        self.include.matches(&name) && !self.exclude.matches(&name)
    }

    /// Whether this column's values are dropped in the parser.
    pub fn is_column_excluded(
        &self,
        pdb: Option<&str>,
        owner: &str,
        table: &str,
        column: &str,
    ) -> bool {
        !self.columns_exclude.is_empty()
            && self
                .columns_exclude
                .matches(&format!("{}.{column}", qualified_table(pdb, owner, table)))
    }
}

/// Per-table values keyed by `[PDB.]OWNER.TABLE`; an entry without a PDB applies in every PDB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMap<V> {
    entries: BTreeMap<String, V>,
    case_sensitive: bool,
}

impl<V> Default for TableMap<V> {
    fn default() -> Self {
        TableMap {
            entries: BTreeMap::new(),
            case_sensitive: false,
        }
    }
}

impl<V> TableMap<V> {
    pub(crate) fn new(case_sensitive: bool) -> TableMap<V> {
        TableMap {
            entries: BTreeMap::new(),
            case_sensitive,
        }
    }

    pub(crate) fn normalise(&self, name: &str) -> String {
        if self.case_sensitive {
            name.to_owned()
        } else {
            name.to_uppercase()
        }
    }

    /// Adds an entry; returns false when the (normalised) table is already present.
    pub(crate) fn insert(&mut self, table: &str, value: V) -> bool {
        let key = self.normalise(table);
        if self.entries.contains_key(&key) {
            return false;
        }
        self.entries.insert(key, value);
        true
    }

    /// The value for a table: the PDB-qualified entry first, then the one without PDB.
    pub fn get(&self, pdb: Option<&str>, owner: &str, table: &str) -> Option<&V> {
        let with_pdb = pdb.and_then(|_| {
            self.entries
                .get(&self.normalise(&qualified_table(pdb, owner, table)))
        });
        with_pdb.or_else(|| {
            self.entries
                .get(&self.normalise(&qualified_table(None, owner, table)))
        })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries by normalised table name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries
            .iter()
            .map(|(table, value)| (table.as_str(), value))
    }
}
