//! One table version prepared for records (fields, key, schemas, names), and the
//! Debezium-compatible change envelope built with it.
//!
//! ```text
//!  TableLayout ──prepare (once per table version)──► TableFormat { topic, fields, key plan,
//!                                                                  key schema, envelope schema }
//!  ChangeRecord + TableFormat ──► key payload, {before, after, source, op, ts_ms, ts_us,
//!                                               ts_ns, transaction}
//! ```

use std::collections::HashSet;
use std::sync::Arc;

use cdc_core::change::{ColumnValue, CommitInfo};
use cdc_core::config::LobMode;
use cdc_core::table::{ColumnDef, TableLayout};
use cdc_core::value::{OracleDateTime, Value};
use cdc_logminer::engine::ChangeRecord;
use serde_json::{Map, Value as Json};

use crate::connect::{Field, PreparedSchema, Schema, SchemaType};
use crate::error::BridgeError;
use crate::key::KeyPlan;
use crate::names::{adjust_name, adjust_schema_name};
use crate::order::EventOrder;
use crate::settings::RecordSettings;
use crate::topic::table_topic;
use crate::types::{FieldKind, field_kind, render};

/// `source.connector`.
pub const CONNECTOR: &str = "oracle-cdc";
/// The schema name of `source`.
pub const SOURCE_SCHEMA: &str = "io.debezium.connector.oracle.Source";
/// The schema name of `transaction`.
pub const TRANSACTION_SCHEMA: &str = "event.block";
/// The key field of a table keyed by ROWID.
pub const ROWID_FIELD: &str = "ROWID";

/// One field of the value struct.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueField {
    /// The field name (adjusted by `cdc.field.name.adjustment.mode`).
    pub name: String,
    /// Index of the column in the layout.
    pub column: usize,
    pub kind: FieldKind,
}

/// A table version ready to write records with.
#[derive(Debug, Clone, PartialEq)]
pub struct TableFormat {
    pub layout: Arc<TableLayout>,
    pub topic: String,
    /// `<prefix>.[<pdb>.]<schema>.<table>`, adjusted.
    pub schema_name: String,
    /// Value fields in column order; excluded columns (and LOBs under `lob.mode=skip`) have none.
    pub fields: Vec<ValueField>,
    /// Layout column index → index into `fields`.
    field_of_column: Vec<Option<usize>>,
    pub key: KeyPlan,
    /// Key field names, in key order (adjusted).
    key_names: Vec<String>,
    /// `None` for a null key.
    pub key_schema: Option<PreparedSchema>,
    pub envelope_schema: PreparedSchema,
}

impl TableFormat {
    /// Prepares a table version.
    pub fn prepare(
        settings: &RecordSettings,
        layout: Arc<TableLayout>,
    ) -> Result<TableFormat, BridgeError> {
        let table = &layout.table;
        let excluded = |c: &ColumnDef| {
            settings.columns.is_column_excluded(
                table.pdb.as_deref(),
                &table.owner,
                &table.table,
                &c.name,
            )
        };
        let skipped = |c: &ColumnDef| settings.lob_mode == LobMode::Skip && c.data_type.is_lob();
        let mut fields = Vec::with_capacity(layout.columns.len());
        let mut field_of_column = vec![None; layout.columns.len()];
        let mut seen = HashSet::new();
        for (i, column) in layout.columns.iter().enumerate() {
            if excluded(column) || skipped(column) {
                continue;
            }
            let name = adjust_name(&column.name, settings.field_name_adjustment);
            if !seen.insert(name.clone()) {
                let first = layout
                    .columns
                    .iter()
                    .find(|c| adjust_name(&c.name, settings.field_name_adjustment) == name)
                    .map(|c| c.name.clone())
                    .unwrap_or_default();
                return Err(BridgeError::NameCollision {
                    what: "columns of a table",
                    first: format!("{table}.{first}"),
                    second: format!("{table}.{}", column.name),
                    name,
                });
            }
            field_of_column[i] = Some(fields.len());
            fields.push(ValueField {
                name,
                column: i,
                kind: field_kind(column, settings.decimal_mode, settings.temporal_mode),
            });
        }
        let usable = |index: usize| -> Result<(), &'static str> {
            match layout.columns.get(index) {
                Some(c) if excluded(c) => Err("is excluded by cdc.columns.exclude"),
                Some(c) if c.data_type.is_lob() => Err("is a LOB column"),
                Some(_) => Ok(()),
                None => Err("is not a column of the table"),
            }
        };
        let key = KeyPlan::resolve(settings, &layout, &usable)?;

        let mut base = vec![settings.server.as_str()];
        if let Some(pdb) = &table.pdb {
            base.push(pdb);
        }
        base.push(&table.owner);
        base.push(&table.table);
        let schema_name = adjust_schema_name(&base.join("."), settings.schema_name_adjustment);

        let (key_names, key_schema) = match &key {
            KeyPlan::None => (Vec::new(), None),
            KeyPlan::RowId => (
                vec![ROWID_FIELD.to_owned()],
                Some(Schema::structure(
                    format!("{schema_name}.Key"),
                    vec![Schema::field(ROWID_FIELD, Schema::of(SchemaType::String))],
                )),
            ),
            KeyPlan::Columns { columns, .. } => {
                let mut names = Vec::with_capacity(columns.len());
                let mut key_fields = Vec::with_capacity(columns.len());
                for &index in columns {
                    let field = field_of_column
                        .get(index)
                        .copied()
                        .flatten()
                        .and_then(|f| fields.get(f))
                        .ok_or_else(|| BridgeError::BadKeyColumn {
                            table: table.to_string(),
                            column: layout
                                .columns
                                .get(index)
                                .map(|c| c.name.clone())
                                .unwrap_or_default(),
                            reason: "has no field in the records",
                        })?;
                    let nullable = layout.columns.get(index).is_some_and(|c| c.nullable);
                    let schema = field.kind.schema();
                    let schema = if nullable { schema.optional() } else { schema };
                    names.push(field.name.clone());
                    key_fields.push(Schema::field(field.name.clone(), schema));
                }
                (
                    names,
                    Some(Schema::structure(format!("{schema_name}.Key"), key_fields)),
                )
            }
        };
        let value_struct = Schema::structure(
            format!("{schema_name}.Value"),
            fields
                .iter()
                .map(|f| Field {
                    name: f.name.clone(),
                    schema: f.kind.schema().optional(),
                })
                .collect(),
        )
        .optional();
        let envelope = Schema::structure(
            format!("{schema_name}.Envelope"),
            vec![
                Schema::field("before", value_struct.clone()),
                Schema::field("after", value_struct),
                Schema::field("source", source_schema()),
                Schema::field("op", Schema::of(SchemaType::String)),
                Schema::field("ts_ms", Schema::of(SchemaType::Int64).optional()),
                Schema::field("ts_us", Schema::of(SchemaType::Int64).optional()),
                Schema::field("ts_ns", Schema::of(SchemaType::Int64).optional()),
                Schema::field("transaction", transaction_schema()),
            ],
        )
        .named(&format!("{schema_name}.Envelope"), Some(1));
        Ok(TableFormat {
            topic: table_topic(&settings.template, &settings.database, table),
            schema_name,
            fields,
            field_of_column,
            key,
            key_names,
            key_schema: key_schema.map(PreparedSchema::new),
            envelope_schema: PreparedSchema::new(envelope),
            layout,
        })
    }

    /// The value struct of a row image: every field, null where the image has no value.
    /// Values of columns without a field (excluded) are never read.
    pub fn image(&self, image: &[ColumnValue], placeholder: &str) -> Result<Json, BridgeError> {
        let mut values: Vec<Json> = vec![Json::Null; self.fields.len()];
        for cv in image {
            let Some(slot) = self.field_of_column.get(usize::from(cv.column)) else {
                return Err(BridgeError::UnknownColumn {
                    table: self.layout.table.to_string(),
                    index: cv.column,
                    version: self.layout.version,
                });
            };
            let Some(f) = *slot else { continue };
            if let (Some(field), Some(out)) = (self.fields.get(f), values.get_mut(f)) {
                *out = render(field.kind, &cv.value, placeholder)
                    .map_err(|reason| self.value_error(field.column, reason))?;
            }
        }
        let mut map = Map::with_capacity(self.fields.len());
        for (field, value) in self.fields.iter().zip(values) {
            map.insert(field.name.clone(), value);
        }
        Ok(Json::Object(map))
    }

    /// The key payload of an image; `Json::Null` for a table without a key.
    pub fn key_payload(
        &self,
        image: Option<&[ColumnValue]>,
        row_id: Option<&str>,
        scn: u64,
        placeholder: &str,
    ) -> Result<Json, BridgeError> {
        let table = || self.layout.table.to_string();
        match &self.key {
            KeyPlan::None => Ok(Json::Null),
            KeyPlan::RowId => {
                let row_id = row_id.ok_or_else(|| BridgeError::MissingRowId {
                    table: table(),
                    scn,
                })?;
                let mut map = Map::new();
                map.insert(ROWID_FIELD.into(), Json::from(row_id));
                Ok(Json::Object(map))
            }
            KeyPlan::Columns { columns, .. } => {
                let mut map = Map::with_capacity(columns.len());
                for (&index, name) in columns.iter().zip(&self.key_names) {
                    let column = self.layout.columns.get(index);
                    let missing = || BridgeError::MissingKeyValue {
                        table: table(),
                        column: column.map(|c| c.name.clone()).unwrap_or_default(),
                        scn,
                    };
                    let value = image
                        .and_then(|img| img.iter().find(|cv| usize::from(cv.column) == index))
                        .map(|cv| &cv.value)
                        .ok_or_else(missing)?;
                    if value.is_null() && !column.is_some_and(|c| c.nullable) {
                        return Err(missing());
                    }
                    let kind = self
                        .field_of_column
                        .get(index)
                        .copied()
                        .flatten()
                        .and_then(|f| self.fields.get(f))
                        .map(|f| f.kind)
                        .ok_or_else(missing)?;
                    let json = render(kind, value, placeholder)
                        .map_err(|reason| self.value_error(index, reason))?;
                    map.insert(name.clone(), json);
                }
                Ok(Json::Object(map))
            }
        }
    }

    fn value_error(&self, column: usize, reason: &'static str) -> BridgeError {
        BridgeError::Value {
            table: self.layout.table.to_string(),
            column: self
                .layout
                .columns
                .get(column)
                .map(|c| c.name.clone())
                .unwrap_or_default(),
            reason,
        }
    }
}

fn string() -> Schema {
    Schema::of(SchemaType::String)
}

/// `io.debezium.connector.oracle.Source`.
pub fn source_schema() -> Schema {
    Schema::structure(
        SOURCE_SCHEMA,
        vec![
            Schema::field("version", string()),
            Schema::field("connector", string()),
            Schema::field("name", string()),
            Schema::field("ts_ms", Schema::of(SchemaType::Int64)),
            Schema::field(
                "snapshot",
                string()
                    .optional()
                    .named("io.debezium.data.Enum", Some(1))
                    .with_parameter("allowed", "true,first,last,false,incremental")
                    .with_default(Json::from("false")),
            ),
            Schema::field("db", string()),
            Schema::field("sequence", string().optional()),
            Schema::field("schema", string()),
            Schema::field("table", string()),
            Schema::field("txId", string().optional()),
            Schema::field("scn", string().optional()),
            Schema::field("commit_scn", string().optional()),
            Schema::field("rs_id", string().optional()),
            Schema::field("ssn", Schema::of(SchemaType::Int64).optional()),
            Schema::field("redo_thread", Schema::of(SchemaType::Int32).optional()),
            Schema::field("user_name", string().optional()),
            Schema::field("row_id", string().optional()),
            Schema::field("pdb", string().optional()),
            Schema::field("reselect", string().optional()),
        ],
    )
}

/// `event.block`: the transaction metadata.
pub fn transaction_schema() -> Schema {
    Schema::structure(
        TRANSACTION_SCHEMA,
        vec![
            Schema::field("id", string()),
            Schema::field("total_order", Schema::of(SchemaType::Int64)),
            Schema::field("data_collection_order", Schema::of(SchemaType::Int64)),
        ],
    )
    .named(TRANSACTION_SCHEMA, Some(1))
    .optional()
}

/// Commit time as (ms, µs, ns) since the epoch, the wall clock read as UTC; zeros when the
/// COMMIT row had no time.
pub fn commit_times(time: Option<&OracleDateTime>) -> (i64, i64, i64) {
    let Some(time) = time else {
        return (0, 0, 0);
    };
    let nanos = time.epoch_nanos();
    let clamp = |n: i128| i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX });
    (
        clamp(nanos.div_euclid(1_000_000)),
        clamp(nanos.div_euclid(1_000)),
        clamp(nanos),
    )
}

/// The `source` block of a change.
pub fn source_block(settings: &RecordSettings, commit: &CommitInfo, change: &ChangeRecord) -> Json {
    let table = &change.event.change.table;
    let (ts_ms, _, _) = commit_times(commit.commit_time.as_ref());
    let pdb = commit.pdb.clone().or_else(|| table.pdb.clone());
    let opt = |s: Option<&str>| s.map_or(Json::Null, Json::from);
    let mut m = Map::with_capacity(19);
    m.insert(
        "version".into(),
        Json::from(settings.connector_version.as_str()),
    );
    m.insert("connector".into(), Json::from(CONNECTOR));
    m.insert("name".into(), Json::from(settings.server.as_str()));
    m.insert("ts_ms".into(), Json::from(ts_ms));
    m.insert("snapshot".into(), Json::from("false"));
    m.insert(
        "db".into(),
        Json::from(pdb.clone().unwrap_or_else(|| settings.database.clone())),
    );
    m.insert("sequence".into(), Json::Null);
    m.insert("schema".into(), Json::from(table.owner.as_str()));
    m.insert("table".into(), Json::from(table.table.as_str()));
    m.insert("txId".into(), Json::from(commit.con_xid.xid.to_string()));
    m.insert("scn".into(), Json::from(change.event.scn.to_string()));
    m.insert(
        "commit_scn".into(),
        Json::from(commit.commit_scn.to_string()),
    );
    m.insert(
        "rs_id".into(),
        Json::from(change.event.addr.rs_id().to_string()),
    );
    m.insert("ssn".into(), Json::from(change.event.addr.ssn()));
    m.insert("redo_thread".into(), Json::from(commit.thread.0));
    m.insert("user_name".into(), opt(commit.username.as_deref()));
    m.insert("row_id".into(), opt(change.event.change.row_id.as_deref()));
    m.insert("pdb".into(), opt(pdb.as_deref()));
    m.insert("reselect".into(), Json::Null);
    Json::Object(m)
}

/// The `transaction` block.
pub fn transaction_block(commit: &CommitInfo, order: EventOrder) -> Json {
    let mut m = Map::with_capacity(3);
    m.insert("id".into(), Json::from(commit.con_xid.to_string()));
    m.insert("total_order".into(), Json::from(order.total_order));
    m.insert(
        "data_collection_order".into(),
        Json::from(order.data_collection_order),
    );
    Json::Object(m)
}

/// The envelope of one change record.
pub fn envelope_payload(
    before: Json,
    after: Json,
    source: Json,
    op: &str,
    commit: &CommitInfo,
    transaction: Json,
) -> Json {
    let (ms, us, ns) = commit_times(commit.commit_time.as_ref());
    let mut m = Map::with_capacity(8);
    m.insert("before".into(), before);
    m.insert("after".into(), after);
    m.insert("source".into(), source);
    m.insert("op".into(), Json::from(op));
    m.insert("ts_ms".into(), Json::from(ms));
    m.insert("ts_us".into(), Json::from(us));
    m.insert("ts_ns".into(), Json::from(ns));
    m.insert("transaction".into(), transaction);
    Json::Object(m)
}

/// Whether two key payloads differ (a key-changing UPDATE).
pub fn key_changed(before: &Json, after: &Json) -> bool {
    before != after
}

/// Whether a value may stand for a key column in a before image that carries it.
pub fn has_all(image: &[ColumnValue], columns: &[usize]) -> bool {
    columns.iter().all(|&c| {
        image
            .iter()
            .any(|cv| usize::from(cv.column) == c && !matches!(cv.value, Value::Unavailable))
    })
}
