//! Excluded columns (`cdc.columns.exclude`): which columns of a table the decoder drops as soon
//! as the parser has named them, before their values are converted.
//!
//! ```text
//!  cdc.columns.exclude (regexes)  ──ColumnExclusions::new──►  ColumnExclusions
//!  + cdc.tables.case.sensitive                                    │ for_table(&TableId)
//!  or the config's is_column_excluded ──ColumnFilter::from_fn──►  ColumnFilter (one table)
//!                                                                 │ DecodeTable::new
//!                                                                 ▼
//!                                         per-column flags + the predicate for names the
//!                                         layout does not know (a column added since)
//! ```
//!
//! A pattern matches the whole name `SCHEMA.TABLE.COLUMN`, or `PDB.SCHEMA.TABLE.COLUMN` for a
//! table in a pluggable database; a column is excluded when any pattern matches either form, so
//! a pattern written without the PDB part applies in every container. Without case sensitivity
//! the patterns match regardless of case.

use std::fmt;
use std::sync::Arc;

use cdc_core::table::TableId;
use regex::{RegexSet, RegexSetBuilder};

/// The compiled `cdc.columns.exclude` patterns, for every table.
#[derive(Clone)]
pub struct ColumnExclusions {
    set: Option<RegexSet>,
    patterns: Arc<[String]>,
    case_sensitive: bool,
}

impl fmt::Debug for ColumnExclusions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnExclusions")
            .field("patterns", &self.patterns)
            .field("case_sensitive", &self.case_sensitive)
            .finish()
    }
}

impl ColumnExclusions {
    /// No column excluded.
    pub fn none() -> ColumnExclusions {
        ColumnExclusions {
            set: None,
            patterns: Arc::from(Vec::new()),
            case_sensitive: false,
        }
    }

    /// Compiles the patterns; each must match a whole qualified column name.
    pub fn new<I, S>(patterns: I, case_sensitive: bool) -> Result<ColumnExclusions, regex::Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let patterns: Vec<String> = patterns
            .into_iter()
            .map(|p| p.as_ref().to_owned())
            .collect();
        if patterns.is_empty() {
            return Ok(ColumnExclusions {
                case_sensitive,
                ..ColumnExclusions::none()
            });
        }
        let anchored = patterns.iter().map(|p| format!("^(?:{p})$"));
        let set = RegexSetBuilder::new(anchored)
            .case_insensitive(!case_sensitive)
            .build()?;
        Ok(ColumnExclusions {
            set: Some(set),
            patterns: patterns.into(),
            case_sensitive,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_none()
    }

    /// Whether `column` of the table is excluded.
    pub fn is_excluded(&self, pdb: Option<&str>, owner: &str, table: &str, column: &str) -> bool {
        let Some(set) = &self.set else {
            return false;
        };
        let short = format!("{owner}.{table}.{column}");
        if set.is_match(&short) {
            return true;
        }
        match pdb {
            Some(pdb) => set.is_match(&format!("{pdb}.{short}")),
            None => false,
        }
    }

    /// The filter for one table.
    pub fn for_table(&self, table: &TableId) -> ColumnFilter {
        if self.set.is_none() {
            return ColumnFilter::none();
        }
        let exclusions = self.clone();
        let table = table.clone();
        ColumnFilter::from_fn(move |column| {
            exclusions.is_excluded(table.pdb.as_deref(), &table.owner, &table.table, column)
        })
    }
}

type Predicate = dyn Fn(&str) -> bool + Send + Sync;

/// Which columns of one table are excluded, by name.
#[derive(Clone, Default)]
pub struct ColumnFilter {
    predicate: Option<Arc<Predicate>>,
}

impl fmt::Debug for ColumnFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnFilter")
            .field("active", &self.predicate.is_some())
            .finish()
    }
}

impl ColumnFilter {
    /// Keeps every column.
    pub fn none() -> ColumnFilter {
        ColumnFilter { predicate: None }
    }

    /// Excludes the columns for which `excluded(column_name)` holds, e.g. a closure over the
    /// configuration's `is_column_excluded(pdb, owner, table, column)` for one table.
    pub fn from_fn<F>(excluded: F) -> ColumnFilter
    where
        F: Fn(&str) -> bool + Send + Sync + 'static,
    {
        ColumnFilter {
            predicate: Some(Arc::new(excluded)),
        }
    }

    /// True when the filter keeps every column without asking.
    pub fn is_empty(&self) -> bool {
        self.predicate.is_none()
    }

    pub fn is_excluded(&self, column: &str) -> bool {
        self.predicate.as_ref().is_some_and(|p| p(column))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names_with_or_without_pdb() {
        let ex = ColumnExclusions::new(["APP\\.CUSTOMERS\\.(SSN|CARD_.*)"], false).unwrap();
        assert!(ex.is_excluded(None, "APP", "CUSTOMERS", "SSN"));
        assert!(ex.is_excluded(None, "app", "customers", "card_no"));
        assert!(ex.is_excluded(Some("FREEPDB1"), "APP", "CUSTOMERS", "SSN"));
        assert!(!ex.is_excluded(None, "APP", "CUSTOMERS", "SSN2"));
        assert!(!ex.is_excluded(None, "APP", "CUSTOMERS_X", "SSN"));
        let with_pdb = ColumnExclusions::new(["FREEPDB1\\.APP\\.T\\.C"], true).unwrap();
        assert!(with_pdb.is_excluded(Some("FREEPDB1"), "APP", "T", "C"));
        assert!(!with_pdb.is_excluded(Some("FREEPDB2"), "APP", "T", "C"));
        assert!(!with_pdb.is_excluded(Some("freepdb1"), "APP", "T", "C"));
        assert!(ColumnExclusions::new(["("], false).is_err());
        let filter = ex.for_table(&TableId::new("APP", "CUSTOMERS"));
        assert!(filter.is_excluded("SSN"));
        assert!(!filter.is_excluded("NAME"));
        assert!(
            ColumnExclusions::none()
                .for_table(&TableId::new("A", "B"))
                .is_empty()
        );
    }
}
