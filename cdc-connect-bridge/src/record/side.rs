//! Side records: ops events, heartbeats, DLQ records and table layouts. JSON with the schema names
//! `docs/records.md` ("Side records") lists; they carry no column values (a DLQ record's SQL text
//! only when the engine put it there: `cdc.log.sensitive.data` and no excluded column possible).

use cdc_core::OpsEvent;
use cdc_core::Scn;
use cdc_core::table::{KeySource, TableId, TableLayout};
use cdc_logminer::engine::{DlqRecord, HeartbeatReason};
use serde_json::{Map, Value as Json};

use crate::record::schemas::{PreparedSchema, Schema, SchemaType};

/// Version of the ops event and DLQ record values (`v`).
pub const SIDE_VERSION: i32 = 1;

fn string() -> Schema {
    Schema::of(SchemaType::String)
}

fn int64() -> Schema {
    Schema::of(SchemaType::Int64)
}

fn int32() -> Schema {
    Schema::of(SchemaType::Int32)
}

fn boolean() -> Schema {
    Schema::of(SchemaType::Boolean)
}

/// Version of the schema topic's table value (`v`).
pub const SCHEMA_TOPIC_VERSION: i32 = 1;

/// The schemas of the side records, prepared once.
#[derive(Debug, Clone)]
pub struct SideSchemas {
    pub ops_key: PreparedSchema,
    pub ops_value: PreparedSchema,
    pub heartbeat_key: PreparedSchema,
    pub heartbeat_value: PreparedSchema,
    pub dlq_key: PreparedSchema,
    pub dlq_value: PreparedSchema,
    pub schema_key: PreparedSchema,
    pub schema_value: PreparedSchema,
}

impl Default for SideSchemas {
    fn default() -> Self {
        SideSchemas::new()
    }
}

impl SideSchemas {
    pub fn new() -> SideSchemas {
        let server_key = |name: &str| {
            PreparedSchema::new(Schema::structure(
                name,
                vec![Schema::field("server", string())],
            ))
        };
        let ops_value = Schema::structure(
            "io.oso.cdc.ops.Event",
            vec![
                Schema::field("v", int32()),
                Schema::field("type", string()),
                Schema::field("ts_ms", int64()),
                Schema::field("server", string()),
                Schema::field("resume_scn", int64().optional()),
                Schema::field("details", Schema::map(string(), string())),
            ],
        )
        .named("io.oso.cdc.ops.Event", Some(SIDE_VERSION));
        let heartbeat_value = Schema::structure(
            "io.oso.cdc.heartbeat.Value",
            vec![
                Schema::field("ts_ms", int64()),
                Schema::field("resume_scn", int64()),
                Schema::field("mined_to_scn", int64().optional()),
                Schema::field("reason", string()),
            ],
        );
        let dlq_key = Schema::structure(
            "io.oso.cdc.dlq.Key",
            vec![
                Schema::field("server", string()),
                Schema::field("xid", string()),
            ],
        );
        let opt = |name: &str, s: Schema| Schema::field(name, s.optional());
        let dlq_value = Schema::structure(
            "io.oso.cdc.dlq.Record",
            vec![
                Schema::field("v", int32()),
                Schema::field("kind", string()),
                Schema::field("ts_ms", int64()),
                Schema::field("server", string()),
                opt("con_id", int32()),
                opt("xid", string()),
                opt("pdb", string()),
                opt("schema", string()),
                opt("table", string()),
                opt("scn", int64()),
                opt("rs_id", string()),
                opt("ssn", int64()),
                opt("operation", string()),
                opt("status", int32()),
                opt("info", string()),
                opt("sql_redo", string()),
                opt("sql_undo", string()),
                opt("schema_version", int32()),
                opt("exception", string()),
                opt("message", string()),
                opt("user", string()),
                opt("first_scn", int64()),
                opt("last_scn", int64()),
                opt("events", int64()),
                opt("age_ms", int64()),
            ],
        )
        .named("io.oso.cdc.dlq.Record", Some(SIDE_VERSION));
        let schema_key = Schema::structure(
            "io.oso.cdc.schema.Key",
            vec![
                Schema::field("server", string()),
                opt("pdb", string()),
                Schema::field("owner", string()),
                Schema::field("table", string()),
            ],
        );
        let column = Schema::structure(
            "io.oso.cdc.schema.Column",
            vec![
                Schema::field("name", string()),
                Schema::field("position", int32()),
                Schema::field("type", string()),
                opt("type_text", string()),
                Schema::field("length", int64()),
                opt("precision", int32()),
                opt("scale", int32()),
                Schema::field("nullable", boolean()),
            ],
        );
        let version = Schema::structure(
            "io.oso.cdc.schema.Version",
            vec![
                Schema::field("version", int32()),
                Schema::field("valid_from_scn", int64()),
                Schema::field("key_source", string()),
                Schema::field("key", Schema::array(string())),
                Schema::field("supplemental_all", boolean()),
                Schema::field("supplemental_pk", boolean()),
                Schema::field("columns", Schema::array(column)),
                opt("exact", boolean()),
            ],
        );
        let schema_value = Schema::structure(
            "io.oso.cdc.schema.Table",
            vec![
                Schema::field("v", int32()),
                Schema::field("versions", Schema::array(version)),
            ],
        )
        .named("io.oso.cdc.schema.Table", Some(SCHEMA_TOPIC_VERSION));
        SideSchemas {
            ops_key: server_key("io.oso.cdc.ops.Key"),
            ops_value: PreparedSchema::new(ops_value),
            heartbeat_key: server_key("io.oso.cdc.heartbeat.Key"),
            heartbeat_value: PreparedSchema::new(heartbeat_value),
            dlq_key: PreparedSchema::new(dlq_key),
            dlq_value: PreparedSchema::new(dlq_value),
            schema_key: PreparedSchema::new(schema_key),
            schema_value: PreparedSchema::new(schema_value),
        }
    }
}

/// `{server}`: the key of ops events and heartbeats.
pub fn server_key(server: &str) -> Json {
    let mut m = Map::new();
    m.insert("server".into(), Json::from(server));
    Json::Object(m)
}

/// An ops event's value.
pub fn ops_value(event: &OpsEvent, server: &str, ts_ms: i64, resume_scn: Option<Scn>) -> Json {
    let details: Map<String, Json> = event
        .details
        .iter()
        .map(|(k, v)| (k.clone(), Json::from(v.as_str())))
        .collect();
    let mut m = Map::new();
    m.insert("v".into(), Json::from(SIDE_VERSION));
    m.insert("type".into(), Json::from(event.kind.as_str()));
    m.insert("ts_ms".into(), Json::from(ts_ms));
    m.insert("server".into(), Json::from(server));
    m.insert(
        "resume_scn".into(),
        resume_scn.map_or(Json::Null, |scn| Json::from(scn.0)),
    );
    m.insert("details".into(), Json::Object(details));
    Json::Object(m)
}

/// A heartbeat's value.
pub fn heartbeat_value(
    reason: HeartbeatReason,
    mined_to: Option<Scn>,
    ts_ms: i64,
    resume_scn: Scn,
) -> Json {
    let mut m = Map::new();
    m.insert("ts_ms".into(), Json::from(ts_ms));
    m.insert("resume_scn".into(), Json::from(resume_scn.0));
    m.insert(
        "mined_to_scn".into(),
        mined_to.map_or(Json::Null, |s| Json::from(s.0)),
    );
    m.insert("reason".into(), Json::from(reason.as_str()));
    Json::Object(m)
}

/// `{server, xid}` with the container-qualified XID (`con:usn.slot.sqn`): one XID may be live
/// in two PDBs at once.
pub fn dlq_key(record: &DlqRecord, server: &str) -> Json {
    let mut m = Map::new();
    m.insert("server".into(), Json::from(server));
    m.insert("xid".into(), Json::from(record.xid.to_string()));
    Json::Object(m)
}

/// A DLQ record's value. Fields the engine's record does not carry are null; `user`,
/// `first_scn`, `last_scn`, `events` and `age_ms` come from its details (discarded
/// transactions).
pub fn dlq_value(record: &DlqRecord, server: &str, ts_ms: i64) -> Json {
    let text = |s: Option<&str>| s.map_or(Json::Null, Json::from);
    let detail = |name: &str| text(record.details.get(name).map(String::as_str));
    let detail_number = |name: &str| {
        record
            .details
            .get(name)
            .and_then(|v| v.parse::<i64>().ok())
            .map_or(Json::Null, Json::from)
    };
    let table = record.table.as_ref();
    let mut m = Map::new();
    m.insert("v".into(), Json::from(SIDE_VERSION));
    m.insert("kind".into(), Json::from(record.kind.as_str()));
    m.insert("ts_ms".into(), Json::from(ts_ms));
    m.insert("server".into(), Json::from(server));
    m.insert("con_id".into(), Json::from(record.xid.con.0));
    m.insert("xid".into(), Json::from(record.xid.xid.to_string()));
    m.insert(
        "pdb".into(),
        text(
            table
                .and_then(|t| t.pdb.as_deref())
                .or(record.details.get("pdb").map(String::as_str)),
        ),
    );
    m.insert("schema".into(), text(table.map(|t| t.owner.as_str())));
    m.insert("table".into(), text(table.map(|t| t.table.as_str())));
    m.insert("scn".into(), Json::from(record.scn.0));
    m.insert(
        "rs_id".into(),
        record
            .addr
            .map_or(Json::Null, |a| Json::from(a.rs_id().to_string())),
    );
    m.insert(
        "ssn".into(),
        record.addr.map_or(Json::Null, |a| Json::from(a.ssn())),
    );
    m.insert(
        "operation".into(),
        record
            .operation
            .map_or(Json::Null, |o| Json::from(o.name())),
    );
    m.insert(
        "status".into(),
        record.status.map_or(Json::Null, Json::from),
    );
    m.insert("info".into(), text(record.info.as_deref()));
    m.insert("sql_redo".into(), text(record.sql_redo.as_deref()));
    m.insert("sql_undo".into(), Json::Null);
    m.insert("schema_version".into(), Json::Null);
    m.insert("exception".into(), detail("exception"));
    m.insert("message".into(), Json::from(record.message.as_str()));
    m.insert("user".into(), detail("user"));
    m.insert("first_scn".into(), detail_number("first_scn"));
    m.insert("last_scn".into(), detail_number("last_scn"));
    m.insert("events".into(), detail_number("events"));
    m.insert("age_ms".into(), detail_number("age_ms"));
    Json::Object(m)
}

/// `{server, pdb, owner, table}`: the key of a table's layouts on the schema topic.
pub fn schema_key(table: &TableId, server: &str) -> Json {
    let mut m = Map::new();
    m.insert("server".into(), Json::from(server));
    m.insert(
        "pdb".into(),
        table.pdb.as_deref().map_or(Json::Null, Json::from),
    );
    m.insert("owner".into(), Json::from(table.owner.as_str()));
    m.insert("table".into(), Json::from(table.table.as_str()));
    Json::Object(m)
}

/// One schema version as the schema topic holds it: names and types, never values. `key` and
/// `key_source` are those of the table's records (`cdc.key.columns` first).
pub fn schema_version(layout: &TableLayout, key_source: KeySource, key: &[String]) -> Json {
    let columns = layout
        .columns
        .iter()
        .map(|c| {
            let mut m = Map::new();
            m.insert("name".into(), Json::from(c.name.as_str()));
            m.insert("position".into(), Json::from(c.position));
            m.insert("type".into(), Json::from(c.data_type.dictionary_name()));
            m.insert("type_text".into(), Json::Null);
            m.insert("length".into(), Json::from(c.length));
            m.insert(
                "precision".into(),
                c.precision.map_or(Json::Null, Json::from),
            );
            m.insert("scale".into(), c.scale.map_or(Json::Null, Json::from));
            m.insert("nullable".into(), Json::Bool(c.nullable));
            Json::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("version".into(), Json::from(layout.version));
    m.insert("valid_from_scn".into(), Json::from(layout.valid_from.0));
    m.insert("key_source".into(), Json::from(key_source_name(key_source)));
    m.insert(
        "key".into(),
        Json::Array(key.iter().map(|k| Json::from(k.as_str())).collect()),
    );
    m.insert(
        "supplemental_all".into(),
        Json::Bool(layout.supplemental.all_columns),
    );
    m.insert(
        "supplemental_pk".into(),
        Json::Bool(layout.supplemental.primary_key),
    );
    m.insert("columns".into(), Json::Array(columns));
    m.insert("exact".into(), Json::Null);
    Json::Object(m)
}

/// A table's value on the schema topic: its versions, oldest first.
pub fn schema_table_value(versions: &[Json]) -> Json {
    let mut m = Map::new();
    m.insert("v".into(), Json::from(SCHEMA_TOPIC_VERSION));
    m.insert("versions".into(), Json::Array(versions.to_vec()));
    Json::Object(m)
}

fn key_source_name(source: KeySource) -> &'static str {
    match source {
        KeySource::Configured => "configured",
        KeySource::PrimaryKey => "primary_key",
        KeySource::UniqueIndex => "unique_index",
        KeySource::RowId => "row_id",
        KeySource::None => "none",
    }
}
