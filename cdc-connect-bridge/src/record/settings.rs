//! What the record layer needs of the configuration, in its own terms.

use cdc_core::config::{
    CdcConfig, DecimalMode, KeyMissing, LobMode, NameAdjustment, TableMap, TableSelection,
    TemporalMode, TopicTemplate,
};

use crate::record::topics::SideTopics;

/// The record format's settings: read from a validated configuration with
/// [`RecordSettings::from_config`], or built by hand in tests.
#[derive(Debug, Clone)]
pub struct RecordSettings {
    /// `cdc.topic.prefix`: `source.name`, the schema name prefix and the ops `server`.
    pub server: String,
    /// The database name (V$DATABASE.NAME): `${database}` in the topic template, and
    /// `source.db` in a non-CDB (in a CDB `source.db` is the PDB).
    pub database: String,
    /// `source.version`.
    pub connector_version: String,
    pub template: TopicTemplate,
    pub side_topics: SideTopics,
    pub key_missing: KeyMissing,
    /// `cdc.key.columns`.
    pub key_columns: TableMap<Vec<String>>,
    pub tombstones_on_delete: bool,
    pub decimal_mode: DecimalMode,
    pub temporal_mode: TemporalMode,
    pub schema_name_adjustment: NameAdjustment,
    pub field_name_adjustment: NameAdjustment,
    /// `cdc.lob.mode=skip` leaves LOB fields out of the records.
    pub lob_mode: LobMode,
    /// `cdc.unavailable.placeholder`.
    pub unavailable_placeholder: String,
    /// `key.converter.schemas.enable`.
    pub key_schemas: bool,
    /// `value.converter.schemas.enable`.
    pub value_schemas: bool,
    /// `cdc.columns.exclude`: an excluded column gets no field (its values never reach the
    /// records; the decoder already dropped them).
    pub columns: TableSelection,
}

impl RecordSettings {
    /// The settings of a validated configuration; `database` is the database name the source
    /// reports.
    pub fn from_config(config: &CdcConfig, database: &str) -> RecordSettings {
        let topics = &config.topics;
        RecordSettings {
            server: topics.prefix.clone(),
            database: database.to_owned(),
            connector_version: env!("CARGO_PKG_VERSION").to_owned(),
            template: topics.template.clone(),
            side_topics: SideTopics {
                ops: topics.ops.clone(),
                heartbeat: topics.heartbeat.clone(),
                dlq: topics.dlq.clone(),
                schema: topics.schema.clone(),
                signals: topics.signals.clone(),
                txjournal: topics.txjournal.clone(),
                transactions: topics.transactions.clone(),
            },
            key_missing: config.keys.missing,
            key_columns: config.keys.columns.clone(),
            tombstones_on_delete: config.keys.tombstones_on_delete,
            decimal_mode: config.decode.decimal_mode,
            temporal_mode: config.decode.temporal_mode,
            schema_name_adjustment: config.decode.schema_name_adjustment,
            field_name_adjustment: config.decode.field_name_adjustment,
            lob_mode: config.lob.mode,
            unavailable_placeholder: config.lob.unavailable_placeholder.clone(),
            key_schemas: config.connect.key_converter_schemas_enable,
            value_schemas: config.connect.value_converter_schemas_enable,
            columns: config.tables.clone(),
        }
    }
}
