//! The journal topic's records: the key, the chunk (what it says about its transaction and its
//! payload of frames), and their JSON forms, with or without Kafka Connect's schema envelope.
//!
//! ```text
//!  key    io.oso.cdc.txjournal.Key   {server, con_id, xid, chunk, generation}
//!  value  io.oso.cdc.txjournal.Chunk {v: 1, first_/last_/first_captured_{scn, rs_id, ssn},
//!                                     events, undos, start_{scn, rs_id, ssn}, thread,
//!                                     username, client_id, heap_undo_{scn, rs_id, ssn},
//!                                     payload}                             null: tombstone
//!  payload (bytes, base64 in JSON) = u32 LE frame count | frame | frame | ...
//!          frame = the spill file's frame (cdc_buffer::codec): | len u32 LE | crc32 | payload |
//! ```
//!
//! Version 1 is pinned by the golden files `tests/golden/*.json`. The optional `heap_undo_*`
//! fields were added to it later, as Connect schemas evolve (an optional field, null when
//! there is none); a chunk without them reads as one without a heap undo row, which is what
//! the connectors that wrote such chunks journaled. A chunk of a newer `v`, a key or value
//! that is not this shape, or a payload whose frames do not check is a [`FormatError`], which
//! a start-time rebuild reports as CDC-4002.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cdc_buffer::FrameHead;
use cdc_buffer::codec::{CodecError, SliceFrames};
use cdc_core::{ConId, ConXid, RedoAddr, RsId, Scn, Xid};
use cdc_offset::RedoMark;
use serde_json::{Map, Value as Json, json};

/// The chunk value's version (`v`).
pub const CHUNK_VERSION: i64 = 1;
/// The Connect schema name of the key.
pub const KEY_SCHEMA: &str = "io.oso.cdc.txjournal.Key";
/// The Connect schema name of the chunk value.
pub const CHUNK_SCHEMA: &str = "io.oso.cdc.txjournal.Chunk";

/// One chunk's key: whose transaction, which chunk (from 0), and the task start (generation)
/// that wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JournalKey {
    pub server: String,
    pub tx: ConXid,
    pub chunk: u32,
    pub generation: u64,
}

impl std::fmt::Display for JournalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "chunk {} (generation {}) of transaction {}",
            self.chunk, self.generation, self.tx
        )
    }
}

/// What a chunk says about itself and its transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkMeta {
    /// The first and the last frame of this chunk.
    pub first: RedoMark,
    pub last: RedoMark,
    /// The transaction's first change.
    pub first_captured: Option<RedoMark>,
    /// Change frames and undo frames in this chunk.
    pub events: u64,
    pub undos: u64,
    /// The transaction's START row, when it was mined: its SCN, and its address unless the
    /// row had the all-zero RS_ID.
    pub start_scn: Option<Scn>,
    pub start_addr: Option<RedoAddr>,
    pub thread: u16,
    pub username: Option<String>,
    pub client_id: Option<String>,
    /// The transaction's last undo row that took a change back while it was held in memory
    /// (`cdc_buffer::TxnView::heap_undo`): its frames through that row are its history only
    /// as a whole, which a rebuild keeps (`cdc_offset::rules::JournalRule::keeps_frame`).
    pub heap_undo: Option<RedoMark>,
}

/// A chunk: its metadata and payload (the frame count, then the frames).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub meta: ChunkMeta,
    pub payload: Vec<u8>,
}

impl Chunk {
    /// Checks the payload as a rebuild does before it uses the chunk: every frame's CRC32, the
    /// frame count, and the changes and undo rows against what the chunk says it holds.
    pub fn check(&self) -> Result<(), FormatError> {
        let (mut events, mut undos) = (0u64, 0u64);
        read_payload(&self.payload, |head, _| {
            if head.kind == cdc_buffer::codec::KIND_CHANGE {
                events += 1;
            } else {
                undos += 1;
            }
            Ok(())
        })?;
        if (events, undos) != (self.meta.events, self.meta.undos) {
            return Err(changes_mismatch(events, undos, &self.meta));
        }
        Ok(())
    }
}

/// The error of a payload that holds `events` changes and `undos` undo rows where its chunk
/// says otherwise.
pub fn changes_mismatch(events: u64, undos: u64, meta: &ChunkMeta) -> FormatError {
    shape(format!(
        "it holds {events} changes and {undos} undo rows but says {} and {}",
        meta.events, meta.undos
    ))
}

/// A record for the journal topic: a chunk, or a tombstone (`chunk` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalRecord {
    pub key: JournalKey,
    pub chunk: Option<Arc<Chunk>>,
}

impl JournalRecord {
    pub fn tombstone(key: JournalKey) -> JournalRecord {
        JournalRecord { key, chunk: None }
    }

    /// Bytes the record holds (its payload), for queues bounded in bytes.
    pub fn payload_bytes(&self) -> usize {
        self.chunk.as_ref().map_or(0, |c| c.payload.len())
    }
}

/// Why a key, a value or a payload of the journal could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("it is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Shape(String),
    #[error("its payload's frames do not check: {0}")]
    Frames(#[from] CodecError),
}

fn shape(message: impl Into<String>) -> FormatError {
    FormatError::Shape(message.into())
}

/// How the journal is read back (`cdc.journal.converter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalConverter {
    /// `TolerantJsonConverter`, the default: JSON with or without the schema envelope.
    Tolerant,
    /// `org.apache.kafka.connect.json.JsonConverter` with `schemas.enable` (its default is
    /// true): the envelope required, or refused.
    Json { schemas_enable: bool },
}

impl JournalConverter {
    /// The converter `cdc.journal.converter` names, with its `cdc.journal.converter.*`
    /// properties (`schemas.enable`, true unless `false`, as Kafka Connect reads it).
    pub fn from_config(config: &cdc_core::config::CdcConfig) -> JournalConverter {
        use cdc_core::config::JournalConverterKind;
        match config.journal.converter {
            JournalConverterKind::Tolerant => JournalConverter::Tolerant,
            JournalConverterKind::Json => JournalConverter::Json {
                schemas_enable: config
                    .journal
                    .converter_properties
                    .get("schemas.enable")
                    .is_none_or(|v| !v.expose().trim().eq_ignore_ascii_case("false")),
            },
        }
    }

    /// The object a record's bytes hold, the envelope taken off.
    fn unwrap(self, bytes: &[u8]) -> Result<Map<String, Json>, FormatError> {
        let Json::Object(mut top) = serde_json::from_slice(bytes)? else {
            return Err(shape("it is not a JSON object"));
        };
        let enveloped = top.len() == 2
            && top.contains_key("schema")
            && matches!(top.get("payload"), Some(Json::Object(_)));
        match (self, enveloped) {
            (
                JournalConverter::Json {
                    schemas_enable: true,
                },
                false,
            ) => {
                return Err(shape(
                    "it has no schema envelope, which the JsonConverter with schemas.enable=true \
                     requires",
                ));
            }
            (
                JournalConverter::Json {
                    schemas_enable: false,
                },
                true,
            ) => {
                return Err(shape(
                    "it has a schema envelope, which the JsonConverter with schemas.enable=false \
                     does not read",
                ));
            }
            _ => {}
        }
        if enveloped && let Some(Json::Object(payload)) = top.remove("payload") {
            return Ok(payload);
        }
        Ok(top)
    }

    /// Reads a key.
    pub fn key(self, bytes: &[u8]) -> Result<JournalKey, FormatError> {
        let map = self.unwrap(bytes)?;
        let fields = Fields(&map);
        Ok(JournalKey {
            server: fields.text("server")?.to_owned(),
            tx: ConXid::new(
                ConId(fields.u32("con_id")?),
                Xid::parse(fields.text("xid")?).map_err(|e| shape(format!("xid: {e}")))?,
            ),
            chunk: fields.u32("chunk")?,
            generation: fields.u64("generation")?,
        })
    }

    /// Reads a chunk value (a tombstone has none).
    pub fn chunk(self, bytes: &[u8]) -> Result<Chunk, FormatError> {
        let map = self.unwrap(bytes)?;
        let fields = Fields(&map);
        let v = fields.i64("v")?;
        if v != CHUNK_VERSION {
            return Err(shape(format!(
                "it is version {v} of the chunk format; this connector reads version \
                 {CHUNK_VERSION}"
            )));
        }
        let payload = BASE64
            .decode(fields.text("payload")?)
            .map_err(|e| shape(format!("payload: not base64 ({e})")))?;
        let start_scn = fields.opt_u64("start_scn")?.map(Scn);
        let start_addr = match fields.opt_text("start_rs_id")? {
            Some(rs_id) => Some(addr(rs_id, fields.u64("start_ssn")?, "start")?),
            None => None,
        };
        let first_captured = match fields.opt_u64("first_captured_scn")? {
            Some(_) => Some(fields.mark("first_captured")?),
            None => None,
        };
        let heap_undo = match fields.opt_u64("heap_undo_scn")? {
            Some(_) => Some(fields.mark("heap_undo")?),
            None => None,
        };
        Ok(Chunk {
            meta: ChunkMeta {
                first: fields.mark("first")?,
                last: fields.mark("last")?,
                first_captured,
                events: fields.u64("events")?,
                undos: fields.u64("undos")?,
                start_scn,
                start_addr,
                thread: u16::try_from(fields.u64("thread")?)
                    .map_err(|_| shape("thread: out of range"))?,
                username: fields.opt_text("username")?.map(str::to_owned),
                client_id: fields.opt_text("client_id")?.map(str::to_owned),
                heap_undo,
            },
            payload,
        })
    }
}

fn addr(rs_id: &str, ssn: u64, what: &str) -> Result<RedoAddr, FormatError> {
    let rs_id = RsId::parse(rs_id).map_err(|e| shape(format!("{what}_rs_id: {e}")))?;
    RedoAddr::new(rs_id, ssn).map_err(|e| shape(format!("{what}_rs_id: {e}")))
}

/// The fields of a key or chunk object, each read with its type checked.
struct Fields<'a>(&'a Map<String, Json>);

impl Fields<'_> {
    fn get(&self, name: &str) -> Result<&Json, FormatError> {
        match self.0.get(name) {
            Some(Json::Null) | None => Err(shape(format!("it has no {name}"))),
            Some(value) => Ok(value),
        }
    }

    fn text(&self, name: &str) -> Result<&str, FormatError> {
        self.get(name)?
            .as_str()
            .ok_or_else(|| shape(format!("{name}: not a string")))
    }

    fn opt_text(&self, name: &str) -> Result<Option<&str>, FormatError> {
        match self.0.get(name) {
            Some(Json::Null) | None => Ok(None),
            Some(_) => self.text(name).map(Some),
        }
    }

    fn u64(&self, name: &str) -> Result<u64, FormatError> {
        self.get(name)?
            .as_u64()
            .ok_or_else(|| shape(format!("{name}: not a non-negative integer")))
    }

    fn opt_u64(&self, name: &str) -> Result<Option<u64>, FormatError> {
        match self.0.get(name) {
            Some(Json::Null) | None => Ok(None),
            Some(_) => self.u64(name).map(Some),
        }
    }

    fn u32(&self, name: &str) -> Result<u32, FormatError> {
        u32::try_from(self.u64(name)?).map_err(|_| shape(format!("{name}: out of range")))
    }

    fn i64(&self, name: &str) -> Result<i64, FormatError> {
        self.get(name)?
            .as_i64()
            .ok_or_else(|| shape(format!("{name}: not an integer")))
    }

    fn mark(&self, prefix: &str) -> Result<RedoMark, FormatError> {
        let scn = Scn(self.u64(&format!("{prefix}_scn"))?);
        let addr = addr(
            self.text(&format!("{prefix}_rs_id"))?,
            self.u64(&format!("{prefix}_ssn"))?,
            prefix,
        )?;
        Ok(RedoMark::new(addr, scn))
    }
}

/// A Connect schema field, in the order the connector's other records write them.
fn field(name: &str, ty: &str, optional: bool) -> Json {
    json!({"type": ty, "optional": optional, "field": name})
}

fn key_schema() -> Json {
    json!({
        "type": "struct",
        "fields": [
            field("server", "string", false),
            field("con_id", "int32", false),
            field("xid", "string", false),
            field("chunk", "int32", false),
            field("generation", "int64", false),
        ],
        "optional": false,
        "name": KEY_SCHEMA,
    })
}

fn chunk_schema() -> Json {
    let mut fields = vec![field("v", "int32", false)];
    for (prefix, optional) in [("first", false), ("last", false), ("first_captured", true)] {
        fields.push(field(&format!("{prefix}_scn"), "int64", optional));
        fields.push(field(&format!("{prefix}_rs_id"), "string", optional));
        fields.push(field(&format!("{prefix}_ssn"), "int64", optional));
    }
    fields.push(field("events", "int64", false));
    fields.push(field("undos", "int64", false));
    fields.push(field("start_scn", "int64", true));
    fields.push(field("start_rs_id", "string", true));
    fields.push(field("start_ssn", "int64", true));
    fields.push(field("thread", "int32", false));
    fields.push(field("username", "string", true));
    fields.push(field("client_id", "string", true));
    fields.push(field("heap_undo_scn", "int64", true));
    fields.push(field("heap_undo_rs_id", "string", true));
    fields.push(field("heap_undo_ssn", "int64", true));
    fields.push(field("payload", "bytes", false));
    json!({
        "type": "struct",
        "fields": fields,
        "optional": true,
        "name": CHUNK_SCHEMA,
        "version": CHUNK_VERSION,
    })
}

fn enveloped(schema: Json, payload: Json, envelope: bool) -> Vec<u8> {
    let value = if envelope {
        json!({"schema": schema, "payload": payload})
    } else {
        payload
    };
    // a Json value always serializes
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The key as JSON, with the schema envelope when `envelope` (the worker's key converter
/// with `schemas.enable`).
pub fn key_json(key: &JournalKey, envelope: bool) -> Vec<u8> {
    let payload = json!({
        "server": key.server,
        "con_id": key.tx.con.0,
        "xid": key.tx.xid.to_string(),
        "chunk": key.chunk,
        "generation": key.generation,
    });
    enveloped(key_schema(), payload, envelope)
}

/// A mark's `{prefix}_scn`, `{prefix}_rs_id` and `{prefix}_ssn` (all null for none).
fn put_mark(map: &mut Map<String, Json>, prefix: &str, mark: Option<RedoMark>) {
    map.insert(format!("{prefix}_scn"), json!(mark.map(|m| m.scn.get())));
    map.insert(
        format!("{prefix}_rs_id"),
        json!(mark.map(|m| m.addr.rs_id().to_string())),
    );
    map.insert(format!("{prefix}_ssn"), json!(mark.map(|m| m.addr.ssn())));
}

/// A chunk as JSON, with the schema envelope when `envelope`.
pub fn chunk_json(chunk: &Chunk, envelope: bool) -> Vec<u8> {
    let m = &chunk.meta;
    let mut map = Map::new();
    map.insert("v".into(), json!(CHUNK_VERSION));
    put_mark(&mut map, "first", Some(m.first));
    put_mark(&mut map, "last", Some(m.last));
    put_mark(&mut map, "first_captured", m.first_captured);
    map.insert("events".into(), json!(m.events));
    map.insert("undos".into(), json!(m.undos));
    map.insert("start_scn".into(), json!(m.start_scn.map(Scn::get)));
    map.insert(
        "start_rs_id".into(),
        json!(m.start_addr.map(|a| a.rs_id().to_string())),
    );
    map.insert("start_ssn".into(), json!(m.start_addr.map(RedoAddr::ssn)));
    map.insert("thread".into(), json!(m.thread));
    map.insert("username".into(), json!(m.username));
    map.insert("client_id".into(), json!(m.client_id));
    put_mark(&mut map, "heap_undo", m.heap_undo);
    map.insert("payload".into(), json!(BASE64.encode(&chunk.payload)));
    enveloped(chunk_schema(), Json::Object(map), envelope)
}

/// Builds a chunk's payload: the frame count, then whole frames.
#[derive(Debug)]
pub struct PayloadBuilder {
    bytes: Vec<u8>,
    count: u32,
}

impl Default for PayloadBuilder {
    fn default() -> Self {
        PayloadBuilder::new()
    }
}

impl PayloadBuilder {
    pub fn new() -> PayloadBuilder {
        PayloadBuilder {
            bytes: vec![0; 4],
            count: 0,
        }
    }

    /// The buffer frames are appended to (whole frames only); call [`PayloadBuilder::counted`]
    /// after each.
    pub fn frames_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    pub fn counted(&mut self) {
        self.count += 1;
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// Bytes so far, the count included.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Appends a change's frame and counts it (for tools and tests that write a journal
    /// without a buffer); returns where it is in the redo.
    pub fn push_change(&mut self, event: &cdc_core::ChangeEvent) -> RedoMark {
        cdc_buffer::codec::append_frame(
            cdc_buffer::codec::FrameRef::Change(event),
            &mut self.bytes,
        );
        self.counted();
        RedoMark::new(event.addr, event.scn)
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.bytes[..4].copy_from_slice(&self.count.to_le_bytes());
        self.bytes
    }
}

/// A payload's frame count and its frames, read in place: each frame's CRC32 is checked as
/// the iteration reaches it; the caller compares the count with the frames it found
/// ([`count_mismatch`]).
pub fn payload_frames(payload: &[u8]) -> Result<(u32, SliceFrames<'_>), FormatError> {
    let Some((count, frames)) = payload.split_first_chunk::<4>() else {
        return Err(shape("its payload is shorter than its frame count"));
    };
    Ok((u32::from_le_bytes(*count), SliceFrames::new(frames)))
}

/// The error of a payload that holds `read` frames and says `count`.
pub fn count_mismatch(read: u32, count: u32) -> FormatError {
    shape(format!("its payload holds {read} frames but says {count}"))
}

/// Reads a payload's frames, each with its head and bytes, checking every CRC32 and that
/// the count matches.
pub fn read_payload(
    payload: &[u8],
    mut each: impl FnMut(FrameHead, &[u8]) -> Result<(), FormatError>,
) -> Result<u32, FormatError> {
    let (count, frames) = payload_frames(payload)?;
    let mut read = 0u32;
    for frame in frames {
        let (head, bytes) = frame?;
        read += 1;
        each(head, bytes)?;
    }
    if read != count {
        return Err(count_mismatch(read, count));
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::change::{ChangeOp, RowChange};
    use cdc_core::{ChangeEvent, TableId};

    fn chunk(events: u64) -> Chunk {
        let mut payload = PayloadBuilder::new();
        let mut marks = Vec::new();
        for n in 1..=events {
            marks.push(payload.push_change(&ChangeEvent {
                scn: Scn(100 + n),
                addr: RedoAddr::new(RsId::new(5, n as u32, 16), n).expect("an address"),
                change: RowChange {
                    op: ChangeOp::Delete,
                    table: TableId::new("APP", "T").into(),
                    schema_version: 1,
                    before: None,
                    after: None,
                    row_id: Some(format!("row {n}")),
                },
            }));
        }
        Chunk {
            meta: ChunkMeta {
                first: marks[0],
                last: marks[marks.len() - 1],
                first_captured: None,
                events,
                undos: 0,
                start_scn: None,
                start_addr: None,
                thread: 1,
                username: None,
                client_id: None,
                heap_undo: None,
            },
            payload: payload.finish(),
        }
    }

    #[test]
    fn a_chunk_checks_its_frames_their_count_and_what_it_says_it_holds() {
        assert!(chunk(3).check().is_ok());

        let mut crc = chunk(3);
        let last = crc.payload.len() - 1;
        crc.payload[last] ^= 0xff;
        assert!(matches!(crc.check(), Err(FormatError::Frames(_))));

        let mut count = chunk(3);
        count.payload[..4].copy_from_slice(&4u32.to_le_bytes());
        let error = count.check().expect_err("a count mismatch");
        assert!(
            error.to_string().contains("holds 3 frames but says 4"),
            "{error}"
        );

        let mut says = chunk(3);
        says.meta.events = 2;
        says.meta.undos = 1;
        let error = says.check().expect_err("a changes mismatch");
        assert!(
            error
                .to_string()
                .contains("holds 3 changes and 0 undo rows"),
            "{error}"
        );
    }
}
