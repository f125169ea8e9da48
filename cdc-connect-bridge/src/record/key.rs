//! The record key of a table: `cdc.key.columns` > primary key > unique index on NOT NULL
//! columns (the layout's `key`/`key_source`) > `cdc.key.missing` (fail / rowid / none).

use cdc_core::config::KeyMissing;
use cdc_core::table::{KeySource, TableLayout};

use crate::record::error::BridgeError;
use crate::record::settings::RecordSettings;

/// Where a table's record key comes from, resolved once per schema version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlan {
    /// These columns (indexes into the layout), in key order.
    Columns {
        source: KeySource,
        columns: Vec<usize>,
    },
    /// One string field `ROWID`.
    RowId,
    /// A null key.
    None,
}

/// Where the key columns of a table are named, before they are checked against its layout.
enum Declared<'a> {
    Columns(KeySource, &'a [String]),
    RowId,
    Missing,
}

fn declared<'a>(settings: &'a RecordSettings, layout: &'a TableLayout) -> Declared<'a> {
    let table = &layout.table;
    match settings
        .key_columns
        .get(table.pdb.as_deref(), &table.owner, &table.table)
    {
        Some(names) if !names.is_empty() => Declared::Columns(KeySource::Configured, names),
        _ => match layout.key_source {
            KeySource::RowId => Declared::RowId,
            source if !layout.key.is_empty() && source != KeySource::None => {
                Declared::Columns(source, &layout.key)
            }
            _ => Declared::Missing,
        },
    }
}

impl KeyPlan {
    /// Resolves the key of `layout`. `usable` says whether a column gets a field (not excluded,
    /// not a LOB left out); a key column must.
    pub fn resolve(
        settings: &RecordSettings,
        layout: &TableLayout,
        usable: &dyn Fn(usize) -> Result<(), &'static str>,
    ) -> Result<KeyPlan, BridgeError> {
        let table = &layout.table;
        let (source, names) = match declared(settings, layout) {
            Declared::Columns(source, names) => (source, names),
            Declared::RowId => return Ok(KeyPlan::RowId),
            Declared::Missing => {
                return match settings.key_missing {
                    KeyMissing::Fail => Err(BridgeError::NoKey {
                        table: table.to_string(),
                    }),
                    KeyMissing::Rowid => Ok(KeyPlan::RowId),
                    KeyMissing::None => Ok(KeyPlan::None),
                };
            }
        };
        let mut columns = Vec::with_capacity(names.len());
        for name in names {
            let bad = |reason| BridgeError::BadKeyColumn {
                table: table.to_string(),
                column: name.clone(),
                reason,
            };
            let index = layout
                .column_index(name)
                .ok_or_else(|| bad("is not a column of the table"))?;
            usable(index).map_err(bad)?;
            columns.push(index);
        }
        Ok(KeyPlan::Columns { source, columns })
    }

    /// The key the schema topic records for `layout`: where the records' key comes from and
    /// its column names (none for a ROWID or null key). It never fails: a key that
    /// [`KeyPlan::resolve`] refuses stops the task at the table's first change, not here.
    pub fn declared_names(
        settings: &RecordSettings,
        layout: &TableLayout,
    ) -> (KeySource, Vec<String>) {
        match declared(settings, layout) {
            Declared::Columns(source, names) => (source, names.to_vec()),
            Declared::RowId => (KeySource::RowId, Vec::new()),
            Declared::Missing => match settings.key_missing {
                KeyMissing::Rowid => (KeySource::RowId, Vec::new()),
                KeyMissing::Fail | KeyMissing::None => (KeySource::None, Vec::new()),
            },
        }
    }
}
