//! [`RecordBuilder`]: engine records in, Kafka records out.

use std::collections::HashMap;
use std::sync::Arc;

use cdc_core::change::ChangeOp;
use cdc_core::{OpsEvent, Scn, TableId, TableLayout};
use cdc_logminer::engine::{ChangeRecord, EngineRecord, RecordKind, SchemaChange, SnapshotRecord};
use cdc_offset::Position;
use serde_json::{Map, Value as Json};

use crate::record::envelope::{
    EnvelopeParts, SourceHead, TableFormat, change_value, commit_times, has_all, key_changed,
    write_snapshot_source, write_source, write_transaction,
};
use crate::record::error::BridgeError;
use crate::record::headers::{Header, change_headers, snapshot_headers};
use crate::record::key::KeyPlan;
use crate::record::order::EventOrder;
use crate::record::schemas::{PreparedSchema, envelope, envelope_text};
use crate::record::settings::RecordSettings;
use crate::record::side::{
    SideSchemas, dlq_key, dlq_value, heartbeat_value, ops_value, schema_key, schema_table_value,
    schema_version, server_key,
};
use crate::record::topics::TopicOwners;

/// The source offset of a record: the Connect partition `{"server": <prefix>}` and the
/// position's offset map.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceOffset {
    pub partition: Map<String, Json>,
    pub offset: Map<String, Json>,
}

impl SourceOffset {
    pub fn of(server: &str, position: &Position) -> SourceOffset {
        SourceOffset {
            partition: cdc_offset::codec::partition(server),
            offset: position.to_offset_map(),
        }
    }
}

/// One record for Kafka.
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaRecord {
    /// Shared by the records of a table version (one allocation per table, not per record).
    pub topic: Arc<str>,
    /// `None`: a null key (`cdc.key.missing=none`).
    pub key: Option<Vec<u8>>,
    /// `None`: a tombstone.
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
    /// The engine record's position, on every Kafka record made from it. Its Connect form
    /// ([`KafkaRecord::source_offset`]) is built only when asked for: the worker commits
    /// positions, not offset maps.
    pub position: Arc<Position>,
    /// Whether acknowledging this record may commit `offset`. One change can become several
    /// Kafka records (a delete and its tombstone; a key-changing update as delete, tombstone
    /// and create); only the last of them commits, so a restart after an acknowledged delete
    /// whose tombstone was lost sends both again.
    pub commits_offset: bool,
}

impl KafkaRecord {
    /// The record's source offset as Kafka Connect stores it, under the partition
    /// `{"server": server}` (`server`: the topic prefix).
    pub fn source_offset(&self, server: &str) -> SourceOffset {
        SourceOffset::of(server, &self.position)
    }
}

/// What a record needs beyond the engine record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordContext {
    /// Wall clock time for the `ts_ms` of side records (ms since the epoch).
    pub now_ms: i64,
    /// The bridge splits this Oracle transaction over several Kafka transactions
    /// (`cdc.split=true` on its records).
    pub split: bool,
}

/// Turns engine records into Kafka records. Holds the prepared format of each table version
/// and the topic and schema-name owners (CDC-6004).
#[derive(Debug)]
pub struct RecordBuilder {
    settings: RecordSettings,
    source_head: SourceHead,
    tables: HashMap<(TableId, u32), Arc<TableFormat>>,
    /// The same formats by the address of the layout they were asked for, the lookup of
    /// nearly every record. Each entry holds that layout, so its address is not reused while
    /// the entry is here.
    by_layout: foldhash::HashMap<usize, (Arc<TableLayout>, Arc<TableFormat>)>,
    topics: TopicOwners,
    schema_names: HashMap<String, TableId>,
    side: SideSchemas,
    /// Each table's schema versions on the schema topic, oldest first: those a restart
    /// keeps of the stored ones ([`RecordBuilder::seed_schema_history`]) and those sent since
    /// this task started. Each record holds them all, so the compacted topic keeps the table's
    /// history from the version valid at the start position on.
    schema_history: HashMap<TableId, Vec<Json>>,
}

impl RecordBuilder {
    pub fn new(settings: RecordSettings) -> RecordBuilder {
        RecordBuilder {
            source_head: SourceHead::new(&settings),
            settings,
            tables: HashMap::new(),
            by_layout: foldhash::HashMap::default(),
            topics: TopicOwners::default(),
            schema_names: HashMap::new(),
            side: SideSchemas::new(),
            schema_history: HashMap::new(),
        }
    }

    pub fn settings(&self) -> &RecordSettings {
        &self.settings
    }

    /// Starts each table's history on the schema topic from the versions a restart keeps of
    /// what the last run stored ([`crate::kafka::schemas::StoredSchemas::pruned`]). A table's
    /// next schema record holds them and the versions sent after them.
    pub fn seed_schema_history(&mut self, stored: impl IntoIterator<Item = (TableId, Vec<Json>)>) {
        self.schema_history.extend(stored);
    }

    /// An ops event written outside the record stream, as `(topic, key, value)`: the `stop`
    /// event of a task that ended, which commits no offset. `resume_scn` is where the task
    /// resumes, when it committed or read an offset.
    pub fn ops_record(
        &self,
        event: &OpsEvent,
        resume_scn: Option<Scn>,
        now_ms: i64,
    ) -> (&str, Vec<u8>, Vec<u8>) {
        let server = &self.settings.server;
        let key = server_key(server);
        let value = ops_value(event, server, now_ms, resume_scn);
        (
            &self.settings.side_topics.ops,
            envelope(&self.side.ops_key, &key, self.settings.key_schemas),
            envelope(&self.side.ops_value, &value, self.settings.value_schemas),
        )
    }

    /// The Kafka records of one engine record.
    pub fn records(
        &mut self,
        record: &EngineRecord,
        context: RecordContext,
    ) -> Result<Vec<KafkaRecord>, BridgeError> {
        let mut out = Vec::with_capacity(2);
        self.append(record, context, &mut out)?;
        Ok(out)
    }

    /// Appends the Kafka records of one engine record to `out`; on error nothing is appended.
    pub fn append(
        &mut self,
        record: &EngineRecord,
        context: RecordContext,
        out: &mut Vec<KafkaRecord>,
    ) -> Result<(), BridgeError> {
        let position = Arc::clone(&record.position);
        let resume_scn = record.position.resume.scn;
        let server = self.settings.server.clone();
        let side = |topic: &str,
                    key_schema: &PreparedSchema,
                    key: Json,
                    value_schema: &PreparedSchema,
                    value: Json| KafkaRecord {
            topic: Arc::from(topic),
            key: Some(envelope(key_schema, &key, self.settings.key_schemas)),
            value: Some(envelope(value_schema, &value, self.settings.value_schemas)),
            headers: Vec::new(),
            position: Arc::clone(&position),
            commits_offset: true,
        };
        match &record.kind {
            RecordKind::Change(change) => {
                let format = self.format(&change.layout)?;
                let order = EventOrder::of(change);
                let start = out.len();
                let result = self.change_records(&format, change, order, &position, context, out);
                if result.is_err() {
                    out.truncate(start);
                }
                result
            }
            RecordKind::Snapshot(row) => {
                let format = self.format(&row.layout)?;
                let start = out.len();
                let result = self.snapshot_records(&format, row, &position, out);
                if result.is_err() {
                    out.truncate(start);
                }
                result
            }
            RecordKind::Heartbeat { reason, mined_to } => {
                out.push(side(
                    &self.settings.side_topics.heartbeat,
                    &self.side.heartbeat_key,
                    server_key(&server),
                    &self.side.heartbeat_value,
                    heartbeat_value(*reason, *mined_to, context.now_ms, resume_scn),
                ));
                Ok(())
            }
            RecordKind::Ops(event) => {
                out.push(side(
                    &self.settings.side_topics.ops,
                    &self.side.ops_key,
                    server_key(&server),
                    &self.side.ops_value,
                    ops_value(event, &server, context.now_ms, Some(resume_scn)),
                ));
                Ok(())
            }
            RecordKind::Dlq(dlq) => {
                out.push(side(
                    &self.settings.side_topics.dlq,
                    &self.side.dlq_key,
                    dlq_key(dlq, &server),
                    &self.side.dlq_value,
                    dlq_value(dlq, &server, context.now_ms),
                ));
                Ok(())
            }
            RecordKind::Schema(SchemaChange::Version(layout)) => {
                let (key_source, key) = KeyPlan::declared_names(&self.settings, layout);
                let versions = self.schema_history.entry(layout.table.clone()).or_default();
                let version = schema_version(layout, key_source, &key);
                // a stored version the engine took up again is sent again, in its place
                let number = Json::from(layout.version);
                match versions
                    .iter_mut()
                    .find(|v| v.get("version") == Some(&number))
                {
                    Some(stored) => *stored = version,
                    None => versions.push(version),
                }
                let value = schema_table_value(versions);
                out.push(side(
                    &self.settings.side_topics.schema,
                    &self.side.schema_key,
                    schema_key(&layout.table, &server),
                    &self.side.schema_value,
                    value,
                ));
                Ok(())
            }
            RecordKind::Schema(SchemaChange::Removed(table)) => {
                self.schema_history.remove(table);
                let mut tombstone = side(
                    &self.settings.side_topics.schema,
                    &self.side.schema_key,
                    schema_key(table, &server),
                    &self.side.schema_value,
                    Json::Null,
                );
                tombstone.value = None;
                out.push(tombstone);
                Ok(())
            }
            RecordKind::Journal(journal) => {
                // the journal's own JSON forms (cdc-journal), under the worker's converters'
                // schemas.enable like every other record
                out.push(KafkaRecord {
                    topic: Arc::from(self.settings.side_topics.txjournal.as_str()),
                    key: Some(cdc_journal::format::key_json(
                        &journal.key,
                        self.settings.key_schemas,
                    )),
                    value: journal
                        .chunk
                        .as_ref()
                        .map(|c| cdc_journal::format::chunk_json(c, self.settings.value_schemas)),
                    headers: Vec::new(),
                    position: Arc::clone(&position),
                    commits_offset: true,
                });
                Ok(())
            }
            _ => Err(BridgeError::UnknownRecordKind),
        }
    }

    /// The prepared format of a table version (prepared on first use).
    pub fn format(&mut self, layout: &Arc<TableLayout>) -> Result<Arc<TableFormat>, BridgeError> {
        let address = Arc::as_ptr(layout) as usize;
        if let Some((_, format)) = self.by_layout.get(&address) {
            return Ok(Arc::clone(format));
        }
        let format = self.format_of(layout)?;
        if self.by_layout.len() >= 2 * self.tables.len() + 64 {
            // layouts handed over again as new copies (a reconnect): forget the old addresses
            self.by_layout.clear();
        }
        self.by_layout
            .insert(address, (Arc::clone(layout), Arc::clone(&format)));
        Ok(format)
    }

    fn format_of(&mut self, layout: &Arc<TableLayout>) -> Result<Arc<TableFormat>, BridgeError> {
        let id = (layout.table.clone(), layout.version);
        if let Some(format) = self.tables.get(&id)
            && (Arc::ptr_eq(&format.layout, layout) || *format.layout == **layout)
        {
            return Ok(Arc::clone(format));
        }
        let format = TableFormat::prepare(&self.settings, Arc::clone(layout))?;
        let table = &layout.table;
        self.topics.claim(
            &self.settings.template,
            &self.settings.database,
            table,
            &format.topic,
        )?;
        match self.schema_names.get(&format.schema_name) {
            Some(owner) if owner != table => {
                return Err(BridgeError::NameCollision {
                    what: "the schema names of tables",
                    first: owner.to_string(),
                    second: table.to_string(),
                    name: format.schema_name.clone(),
                });
            }
            Some(_) => {}
            None => {
                self.schema_names
                    .insert(format.schema_name.clone(), table.clone());
            }
        }
        let format = Arc::new(format);
        self.tables.insert(id, Arc::clone(&format));
        Ok(format)
    }

    /// A snapshot row: `op=r`, `before` null, the row's key as a change's, `transaction`
    /// null, `ts_ms` the chunk's read time.
    fn snapshot_records(
        &self,
        format: &TableFormat,
        row: &SnapshotRecord,
        position: &Arc<Position>,
        out: &mut Vec<KafkaRecord>,
    ) -> Result<(), BridgeError> {
        let s = &self.settings;
        let placeholder = s.unavailable_placeholder.as_str();
        let key = format.key_text(Some(&row.values), Some(&row.row_id), row.scn.0, placeholder)?;
        let key = key.and_then(|payload| {
            Some(envelope_text(
                format.key_schema.as_ref()?,
                payload,
                s.key_schemas,
            ))
        });
        let mut after = Vec::with_capacity(32 * format.fields.len() + 2);
        format.write_image(&mut after, &row.values, placeholder)?;
        let mut source = Vec::with_capacity(384);
        write_snapshot_source(&mut source, &self.source_head, row);
        let ms = i64::try_from(row.read_ms).unwrap_or(i64::MAX);
        let value = change_value(
            s.value_schemas.then_some(&format.envelope_schema),
            &EnvelopeParts {
                before: None,
                after: Some(&after),
                source: &source,
                op: "r",
                times: (ms, ms.saturating_mul(1000), ms.saturating_mul(1_000_000)),
                transaction: b"null",
            },
        );
        out.push(KafkaRecord {
            topic: Arc::clone(&format.topic),
            key,
            value: Some(value),
            headers: snapshot_headers(row),
            position: Arc::clone(position),
            commits_offset: true,
        });
        Ok(())
    }

    fn change_records(
        &self,
        format: &TableFormat,
        change: &ChangeRecord,
        order: EventOrder,
        position: &Arc<Position>,
        context: RecordContext,
        out: &mut Vec<KafkaRecord>,
    ) -> Result<(), BridgeError> {
        let s = &self.settings;
        let placeholder = s.unavailable_placeholder.as_str();
        let row = &change.event.change;
        let scn = change.event.scn.0;
        let row_id = row.row_id.as_deref();
        let commit = &change.commit;
        let headers = change_headers(change, context.split);
        // the value's parts are written once as JSON text, and copied into each record
        let mut source = Vec::with_capacity(512);
        write_source(&mut source, &self.source_head, commit, change);
        let mut transaction = Vec::with_capacity(64);
        write_transaction(&mut transaction, commit, order);
        let times = commit_times(commit.commit_time.as_ref());
        let image = |img: Option<&Vec<cdc_core::change::ColumnValue>>| match img {
            Some(img) => {
                let mut text = Vec::with_capacity(32 * format.fields.len() + 2);
                format.write_image(&mut text, img, placeholder)?;
                Ok::<_, BridgeError>(Some(text))
            }
            None => Ok(None),
        };
        let key_bytes = |payload: Option<Vec<u8>>| -> Option<Vec<u8>> {
            Some(envelope_text(
                format.key_schema.as_ref()?,
                payload?,
                s.key_schemas,
            ))
        };
        let value_schema = s.value_schemas.then_some(&format.envelope_schema);
        let value_bytes = |before: &Option<Vec<u8>>, after: &Option<Vec<u8>>, op: &str| {
            Some(change_value(
                value_schema,
                &EnvelopeParts {
                    before: before.as_deref(),
                    after: after.as_deref(),
                    source: &source,
                    op,
                    times,
                    transaction: &transaction,
                },
            ))
        };
        // the headers go on after: the last record takes them, the others a copy
        let record = |key: Option<Vec<u8>>, value: Option<Vec<u8>>| KafkaRecord {
            topic: Arc::clone(&format.topic),
            key,
            value,
            headers: Vec::new(),
            position: Arc::clone(position),
            commits_offset: false,
        };
        let tombstones = s.tombstones_on_delete && !matches!(format.key, KeyPlan::None);
        let start = out.len();
        match row.op {
            ChangeOp::Insert => {
                let key = format.key_text(row.after.as_deref(), row_id, scn, placeholder)?;
                let after = image(row.after.as_ref())?;
                out.push(record(key_bytes(key), value_bytes(&None, &after, "c")));
            }
            ChangeOp::Delete => {
                let key = format.key_text(row.before.as_deref(), row_id, scn, placeholder)?;
                let before = image(row.before.as_ref())?;
                let key = key_bytes(key);
                if tombstones {
                    out.push(record(key.clone(), value_bytes(&before, &None, "d")));
                    out.push(record(key, None));
                } else {
                    out.push(record(key, value_bytes(&before, &None, "d")));
                }
            }
            ChangeOp::Update => {
                let after_key = format.key_text(row.after.as_deref(), row_id, scn, placeholder)?;
                let before_key = match (&format.key, row.before.as_deref()) {
                    (KeyPlan::Columns { columns, .. }, Some(before))
                        if has_all(before, columns) =>
                    {
                        format.key_text(Some(before), row_id, scn, placeholder)?
                    }
                    _ => None,
                };
                let before = image(row.before.as_ref())?;
                let after = image(row.after.as_ref())?;
                match before_key {
                    // a key-changing UPDATE: the old key is deleted, the new one created,
                    // both under the change's event index
                    Some(old) if after_key.as_ref().is_some_and(|new| key_changed(&old, new)) => {
                        let old = key_bytes(Some(old));
                        if tombstones {
                            out.push(record(old.clone(), value_bytes(&before, &None, "d")));
                            out.push(record(old, None));
                        } else {
                            out.push(record(old, value_bytes(&before, &None, "d")));
                        }
                        out.push(record(
                            key_bytes(after_key),
                            value_bytes(&None, &after, "c"),
                        ));
                    }
                    _ => {
                        out.push(record(
                            key_bytes(after_key),
                            value_bytes(&before, &after, "u"),
                        ));
                    }
                }
            }
        }
        if let Some((last, others)) = out.get_mut(start..).and_then(|r| r.split_last_mut()) {
            for other in others {
                other.headers = headers.clone();
            }
            last.headers = headers;
            last.commits_offset = true;
        }
        Ok(())
    }
}
