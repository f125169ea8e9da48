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
use cdc_logminer::engine::{ChangeRecord, SnapshotRecord};
use serde_json::{Map, Value as Json};

use crate::record::error::BridgeError;
use crate::record::fields::{FieldKind, field_kind, render, write_rendered};
use crate::record::json;
use crate::record::key::KeyPlan;
use crate::record::names::{adjust_name, adjust_schema_name};
use crate::record::order::EventOrder;
use crate::record::schemas::{Field, PreparedSchema, Schema, SchemaType};
use crate::record::settings::RecordSettings;
use crate::record::text;
use crate::record::topics::table_topic;

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
    pub topic: Arc<str>,
    /// `<prefix>.[<pdb>.]<schema>.<table>`, adjusted.
    pub schema_name: String,
    /// Value fields in column order; excluded columns (and LOBs under `lob.mode=skip`) have none.
    pub fields: Vec<ValueField>,
    /// Layout column index → index into `fields`.
    field_of_column: Vec<Option<usize>>,
    /// `"<field name>":` of each field, escaped once for every record's value struct.
    members: Vec<Vec<u8>>,
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
            topic: Arc::from(table_topic(&settings.template, &settings.database, table)),
            schema_name,
            members: fields
                .iter()
                .map(|f| {
                    let mut member = Vec::with_capacity(f.name.len() + 3);
                    json::push_key(&mut member, &f.name);
                    member
                })
                .collect(),
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

    /// Appends the value struct of a row image as JSON text: byte for byte the serialized
    /// [`TableFormat::image`], with the same errors, written without building it.
    pub fn write_image(
        &self,
        out: &mut Vec<u8>,
        image: &[ColumnValue],
        placeholder: &str,
    ) -> Result<(), BridgeError> {
        let start = out.len();
        if self.try_write_image(out, image, placeholder).is_none() {
            // an unknown column, a value that does not render, or a column given twice: the
            // tree builder says which error comes first, exactly as before
            out.truncate(start);
            let image = self.image(image, placeholder)?;
            json::push_json(out, &image);
        }
        Ok(())
    }

    /// The value struct written when every column of `image` is known, given once and
    /// renders; `None` otherwise (`out` then holds a partial struct).
    fn try_write_image(
        &self,
        out: &mut Vec<u8>,
        image: &[ColumnValue],
        placeholder: &str,
    ) -> Option<()> {
        let mut slots: Vec<Option<&Value>> = vec![None; self.fields.len()];
        for cv in image {
            if let Some(f) = (*self.field_of_column.get(usize::from(cv.column))?)
                && slots.get_mut(f)?.replace(&cv.value).is_some()
            {
                return None;
            }
        }
        out.push(b'{');
        for (i, ((field, member), value)) in
            self.fields.iter().zip(&self.members).zip(slots).enumerate()
        {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(member);
            match value {
                Some(value) => write_rendered(out, field.kind, value, placeholder).ok()?,
                None => out.extend_from_slice(b"null"),
            }
        }
        out.push(b'}');
        Some(())
    }

    /// The key payload of an image; `Json::Null` for a table without a key.
    pub fn key_payload(
        &self,
        image: Option<&[ColumnValue]>,
        row_id: Option<&str>,
        scn: u64,
        placeholder: &str,
    ) -> Result<Json, BridgeError> {
        match &self.key {
            KeyPlan::None => Ok(Json::Null),
            KeyPlan::RowId => {
                let mut map = Map::new();
                map.insert(
                    ROWID_FIELD.into(),
                    Json::from(self.key_row_id(row_id, scn)?),
                );
                Ok(Json::Object(map))
            }
            KeyPlan::Columns { columns, .. } => {
                let mut map = Map::with_capacity(columns.len());
                for (&index, name) in columns.iter().zip(&self.key_names) {
                    let (kind, value) = self.key_value(image, index, scn)?;
                    let json = render(kind, value, placeholder)
                        .map_err(|reason| self.value_error(index, reason))?;
                    map.insert(name.clone(), json);
                }
                Ok(Json::Object(map))
            }
        }
    }

    /// [`TableFormat::key_payload`] as JSON text, written field by field as the images are;
    /// `None` for a table without a key.
    pub fn key_text(
        &self,
        image: Option<&[ColumnValue]>,
        row_id: Option<&str>,
        scn: u64,
        placeholder: &str,
    ) -> Result<Option<Vec<u8>>, BridgeError> {
        match &self.key {
            KeyPlan::None => Ok(None),
            KeyPlan::RowId => {
                let row_id = self.key_row_id(row_id, scn)?;
                let mut out = Vec::with_capacity(row_id.len() + 16);
                out.push(b'{');
                json::push_key(&mut out, ROWID_FIELD);
                json::push_str(&mut out, row_id);
                out.push(b'}');
                Ok(Some(out))
            }
            KeyPlan::Columns { columns, .. } => {
                let mut out = Vec::with_capacity(24 * columns.len() + 2);
                out.push(b'{');
                for (i, (&index, name)) in columns.iter().zip(&self.key_names).enumerate() {
                    let (kind, value) = self.key_value(image, index, scn)?;
                    if i > 0 {
                        out.push(b',');
                    }
                    json::push_key(&mut out, name);
                    write_rendered(&mut out, kind, value, placeholder)
                        .map_err(|reason| self.value_error(index, reason))?;
                }
                out.push(b'}');
                Ok(Some(out))
            }
        }
    }

    fn key_row_id<'r>(&self, row_id: Option<&'r str>, scn: u64) -> Result<&'r str, BridgeError> {
        row_id.ok_or_else(|| BridgeError::MissingRowId {
            table: self.layout.table.to_string(),
            scn,
        })
    }

    /// The field kind and value of key column `index` in `image`: present, and not null
    /// unless the column is nullable.
    fn key_value<'i>(
        &self,
        image: Option<&'i [ColumnValue]>,
        index: usize,
        scn: u64,
    ) -> Result<(FieldKind, &'i Value), BridgeError> {
        let column = self.layout.columns.get(index);
        let missing = || BridgeError::MissingKeyValue {
            table: self.layout.table.to_string(),
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
        Ok((kind, value))
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

/// The start of every `source` block: the fields fixed by the settings, written once.
#[derive(Debug, Clone)]
pub struct SourceHead {
    /// `{"version":…,"connector":…,"name":…,"ts_ms":`
    text: Vec<u8>,
    database: String,
}

impl SourceHead {
    pub fn new(settings: &RecordSettings) -> SourceHead {
        let mut text = Vec::with_capacity(96);
        text.extend_from_slice(b"{\"version\":");
        json::push_str(&mut text, &settings.connector_version);
        text.extend_from_slice(b",\"connector\":");
        json::push_str(&mut text, CONNECTOR);
        text.extend_from_slice(b",\"name\":");
        json::push_str(&mut text, &settings.server);
        text.extend_from_slice(b",\"ts_ms\":");
        SourceHead {
            text,
            database: settings.database.clone(),
        }
    }
}

/// Appends the `source` block of a change.
pub fn write_source(
    out: &mut Vec<u8>,
    head: &SourceHead,
    commit: &CommitInfo,
    change: &ChangeRecord,
) {
    /// `"name":` for the block's own field names, which need no escaping.
    fn key(out: &mut Vec<u8>, name: &str) {
        debug_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
    }
    fn string(out: &mut Vec<u8>, name: &str, value: Option<&str>) {
        key(out, name);
        json::push_opt_str(out, value);
        out.push(b',');
    }
    /// A text form that needs no escaping (digits, dots, `x`, blanks), between quotes.
    fn quoted(out: &mut Vec<u8>, name: &str, write: impl FnOnce(&mut Vec<u8>)) {
        key(out, name);
        out.push(b'"');
        write(out);
        out.extend_from_slice(b"\",");
    }
    fn number(out: &mut Vec<u8>, name: &str, value: i64) {
        key(out, name);
        json::push_i64(out, value);
        out.push(b',');
    }
    let table = &change.event.change.table;
    let (ts_ms, _, _) = commit_times(commit.commit_time.as_ref());
    let pdb = commit.pdb.as_deref().or(table.pdb.as_deref());
    out.extend_from_slice(&head.text);
    json::push_i64(out, ts_ms);
    out.extend_from_slice(b",\"snapshot\":\"false\",");
    string(out, "db", Some(pdb.unwrap_or(&head.database)));
    out.extend_from_slice(b"\"sequence\":null,");
    string(out, "schema", Some(&table.owner));
    string(out, "table", Some(&table.table));
    quoted(out, "txId", |o| text::push_xid(o, commit.con_xid.xid));
    quoted(out, "scn", |o| json::push_u64(o, change.event.scn.0));
    quoted(out, "commit_scn", |o| {
        json::push_u64(o, commit.commit_scn.0)
    });
    quoted(out, "rs_id", |o| {
        text::push_rs_id(o, change.event.addr.rs_id())
    });
    key(out, "ssn");
    json::push_u64(out, change.event.addr.ssn());
    out.push(b',');
    number(out, "redo_thread", i64::from(commit.thread.0));
    string(out, "user_name", commit.username.as_deref());
    string(out, "row_id", change.event.change.row_id.as_deref());
    string(out, "pdb", pdb);
    out.extend_from_slice(b"\"reselect\":null}");
}

/// Appends the `source` block of a snapshot row: the streaming-only fields (`txId`,
/// `commit_scn`, `rs_id`, `ssn`, `redo_thread`, `user_name`) null, `scn` the SCN the chunk was
/// read as of, `ts_ms` when it was read.
pub fn write_snapshot_source(out: &mut Vec<u8>, head: &SourceHead, row: &SnapshotRecord) {
    let table = &row.layout.table;
    let pdb = table.pdb.as_deref();
    out.extend_from_slice(&head.text);
    json::push_i64(out, i64::try_from(row.read_ms).unwrap_or(i64::MAX));
    out.extend_from_slice(b",\"snapshot\":");
    json::push_str(out, row.marker.as_str());
    out.extend_from_slice(b",\"db\":");
    json::push_str(out, pdb.unwrap_or(&head.database));
    out.extend_from_slice(b",\"sequence\":null,\"schema\":");
    json::push_str(out, &table.owner);
    out.extend_from_slice(b",\"table\":");
    json::push_str(out, &table.table);
    out.extend_from_slice(b",\"txId\":null,\"scn\":\"");
    json::push_u64(out, row.scn.0);
    out.extend_from_slice(
        b"\",\"commit_scn\":null,\"rs_id\":null,\"ssn\":null,\"redo_thread\":null,\"user_name\":null,\"row_id\":",
    );
    json::push_str(out, &row.row_id);
    out.extend_from_slice(b",\"pdb\":");
    json::push_opt_str(out, pdb);
    out.extend_from_slice(b",\"reselect\":null}");
}

/// Appends the `transaction` block.
pub fn write_transaction(out: &mut Vec<u8>, commit: &CommitInfo, order: EventOrder) {
    out.extend_from_slice(b"{\"id\":\"");
    text::push_con_xid(out, commit.con_xid);
    out.push(b'"');
    out.extend_from_slice(b",\"total_order\":");
    json::push_u64(out, order.total_order);
    out.extend_from_slice(b",\"data_collection_order\":");
    json::push_u64(out, order.data_collection_order);
    out.push(b'}');
}

/// The parts of one change's value, each already JSON text.
#[derive(Debug, Clone, Copy)]
pub struct EnvelopeParts<'a> {
    /// The value struct, or `None` for `null`.
    pub before: Option<&'a [u8]>,
    pub after: Option<&'a [u8]>,
    pub source: &'a [u8],
    pub op: &'a str,
    /// `ts_ms`, `ts_us`, `ts_ns`.
    pub times: (i64, i64, i64),
    pub transaction: &'a [u8],
}

/// The value bytes of one change: the envelope `{before, after, source, op, ts_ms, ts_us, ts_ns,
/// transaction}`, inside `{"schema": …, "payload": …}` when `schema` is given.
pub fn change_value(schema: Option<&PreparedSchema>, parts: &EnvelopeParts<'_>) -> Vec<u8> {
    const NULL: &[u8] = b"null";
    let (before, after) = (parts.before.unwrap_or(NULL), parts.after.unwrap_or(NULL));
    let size = schema.map_or(0, |s| s.json().len() + 24)
        + before.len()
        + after.len()
        + parts.source.len()
        + parts.transaction.len()
        + 200;
    let mut out = Vec::with_capacity(size);
    if let Some(schema) = schema {
        out.extend_from_slice(b"{\"schema\":");
        json::push_large(&mut out, schema.json().as_bytes());
        out.extend_from_slice(b",\"payload\":");
    }
    out.extend_from_slice(b"{\"before\":");
    out.extend_from_slice(before);
    out.extend_from_slice(b",\"after\":");
    out.extend_from_slice(after);
    out.extend_from_slice(b",\"source\":");
    out.extend_from_slice(parts.source);
    out.extend_from_slice(b",\"op\":");
    json::push_str(&mut out, parts.op);
    let (ms, us, ns) = parts.times;
    out.extend_from_slice(b",\"ts_ms\":");
    json::push_i64(&mut out, ms);
    out.extend_from_slice(b",\"ts_us\":");
    json::push_i64(&mut out, us);
    out.extend_from_slice(b",\"ts_ns\":");
    json::push_i64(&mut out, ns);
    out.extend_from_slice(b",\"transaction\":");
    out.extend_from_slice(parts.transaction);
    out.push(b'}');
    if schema.is_some() {
        out.push(b'}');
    }
    out
}

/// Whether two key payloads ([`TableFormat::key_text`]) differ: a key-changing UPDATE. The
/// text is compared, as the Kafka keys made of it are.
pub fn key_changed(before: &[u8], after: &[u8]) -> bool {
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
