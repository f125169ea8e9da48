//! The offset as Kafka Connect stores it: a flat JSON object of primitives, under the partition
//! `{"server": "<prefix>"}`.
//!
//! ```text
//!  Position ──encode──► {"v":1,"resume_scn":…,…,<extras>}   fixed field order, byte-stable
//!     ▲                         │ offsets topic value / REST "offset" / Connect offset map
//!     └─────────decode──────────┘ lenient numbers, strict shape, unknown fields kept
//! ```
//!
//! **Field order.** Known fields are written in the order of [`FIELDS`], then the unknown fields in
//! the order they were read. The order is that of the field table (`docs/decisions.md`, D13):
//! `dbid` and `resetlogs_scn` come before `journal_generation` and `schema_epoch`, as in the
//! example request body of `docs/rest.md` ("Offsets"), so that example encodes back byte for byte.
//! Optional fields are left out when absent rather than written as `null`; `event_index` is written
//! only with the last commit it counts.
//!
//! **Numbers.** Kafka Connect stores offset numbers as Java `long`s, so SCNs, SSNs, counters and
//! the DBID are written as JSON integers while they fit in an `i64`; a value above `i64::MAX`
//! (no SCN gets there, but `u64` allows it) is written as a string of decimal digits, which
//! Connect keeps exactly instead of truncating. Reading accepts a JSON integer, a string of
//! decimal digits (what JavaScript-based tools produce for values above 2^53) or a float that
//! is an exact integer not above 2^53; anything else is refused rather than rounded.
//!
//! **Required.** `v`, `resume_scn`, `dbid`, `resetlogs_scn` and `journal_generation`: without
//! the identity the offset cannot be tied to its database, and without the generation the
//! acknowledged journal chunks cannot be told from the others, so guessing either could
//! publish wrong data. `schema_epoch` (reserved) reads as 0 when absent.
//!
//! **Shape.** A known field holding `null` counts as absent, since editing by hand may leave
//! one. A value of the wrong type, a half-present group (`resume_rs_id` without `resume_ssn`,
//! some `last_commit_*` fields, some `start_*` fields), an all-zero RS_ID, a `snapshot` that
//! is not JSON object text, or a list or map anywhere stops the task with CDC-3002, naming the
//! field and what to do. RS_IDs are written in LogMiner's padded text form, XIDs as
//! `con:usn.slot.sqn`, the XID lists as comma-separated text (a bare `usn.slot.sqn` reads as
//! container 0).
//!
//! Besides the offset itself: [`partition`], the offsets-topic key ([`offsets_topic_key`]) and
//! the body of Kafka Connect's offsets REST endpoints ([`offsets_request`],
//! [`position_from_offsets_body`], [`stored_offset`]) for the admin tool, and [`salvage`]: what
//! still reads of an offset that does not decode, which the admin tool keeps when it replaces it.

use std::fmt::{self, Write as _};

use cdc_core::{ConXid, RedoAddr, RedoThread, RsId, Scn};
use serde_json::{Map, Number, Value};

use crate::POSITION_VERSION;
use crate::error::{OffsetError, Shown, json_kind};
use crate::position::{
    DbIdentity, Extra, FirstStart, LastCommit, Position, ReleasedXids, ResumePoint, parse_xid_csv,
    write_xid_csv,
};

/// The offset field names of v1, in the order they are written.
pub mod field {
    pub const V: &str = "v";
    pub const RESUME_SCN: &str = "resume_scn";
    pub const RESUME_RS_ID: &str = "resume_rs_id";
    pub const RESUME_SSN: &str = "resume_ssn";
    pub const LAST_COMMIT_SCN: &str = "last_commit_scn";
    pub const LAST_COMMIT_XID: &str = "last_commit_xid";
    pub const LAST_COMMIT_THREAD: &str = "last_commit_thread";
    pub const LAST_COMMIT_RS_ID: &str = "last_commit_rs_id";
    pub const LAST_COMMIT_SSN: &str = "last_commit_ssn";
    pub const EVENT_INDEX: &str = "event_index";
    pub const DBID: &str = "dbid";
    pub const RESETLOGS_SCN: &str = "resetlogs_scn";
    pub const JOURNAL_GENERATION: &str = "journal_generation";
    pub const SCHEMA_EPOCH: &str = "schema_epoch";
    pub const RELEASED_XIDS: &str = "released_xids";
    pub const SNAPSHOT: &str = "snapshot";
    pub const SIGNAL_OFFSET: &str = "signal_offset";
    pub const SNAPSHOT_PENDING: &str = "snapshot_pending";
    pub const START_FLOOR_SCN: &str = "start_floor_scn";
    pub const START_OPEN_SCN: &str = "start_open_scn";
    pub const START_OPEN_XIDS: &str = "start_open_xids";
}

/// Every v1 field, in the order the encoder writes them.
pub const FIELDS: [&str; 21] = [
    field::V,
    field::RESUME_SCN,
    field::RESUME_RS_ID,
    field::RESUME_SSN,
    field::LAST_COMMIT_SCN,
    field::LAST_COMMIT_XID,
    field::LAST_COMMIT_THREAD,
    field::LAST_COMMIT_RS_ID,
    field::LAST_COMMIT_SSN,
    field::EVENT_INDEX,
    field::DBID,
    field::RESETLOGS_SCN,
    field::JOURNAL_GENERATION,
    field::SCHEMA_EPOCH,
    field::RELEASED_XIDS,
    field::SNAPSHOT,
    field::SIGNAL_OFFSET,
    field::SNAPSHOT_PENDING,
    field::START_FLOOR_SCN,
    field::START_OPEN_SCN,
    field::START_OPEN_XIDS,
];

/// The five fields the operator removes to "deliver again" (with `event_index` set to 0).
pub const LAST_COMMIT_FIELDS: [&str; 5] = [
    field::LAST_COMMIT_SCN,
    field::LAST_COMMIT_XID,
    field::LAST_COMMIT_THREAD,
    field::LAST_COMMIT_RS_ID,
    field::LAST_COMMIT_SSN,
];

const START_FIELDS: [&str; 3] = [
    field::START_FLOOR_SCN,
    field::START_OPEN_SCN,
    field::START_OPEN_XIDS,
];

/// Whether `name` is a v1 field (and so can never be an extra).
pub fn is_known_field(name: &str) -> bool {
    FIELDS.contains(&name)
}

/// The key of the offset partition.
pub const PARTITION_KEY: &str = "server";

/// The offset partition of a connector: `{"server": "<cdc.topic.prefix>"}`.
pub fn partition(prefix: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert(PARTITION_KEY.to_owned(), Value::String(prefix.to_owned()));
    map
}

/// The key under which Kafka Connect's offsets topic stores a connector's offset:
/// `["<connector name>",{"server":"<prefix>"}]`.
pub fn offsets_topic_key(connector: &str, prefix: &str) -> String {
    Value::Array(vec![
        Value::String(connector.to_owned()),
        Value::Object(partition(prefix)),
    ])
    .to_string()
}

/// Reads an offsets-topic key back into (connector name, prefix); `None` when it is not one of
/// this connector's keys.
pub fn parse_offsets_topic_key(key: &str) -> Option<(String, String)> {
    let value: Value = serde_json::from_str(key).ok()?;
    let [connector, partition] = value.as_array()?.as_slice() else {
        return None;
    };
    let partition = partition.as_object()?;
    if partition.len() != 1 {
        return None;
    }
    let prefix = partition.get(PARTITION_KEY)?.as_str()?;
    Some((connector.as_str()?.to_owned(), prefix.to_owned()))
}

/// The body of Kafka Connect's `PATCH /connectors/<name>/offsets` (KIP-875) that stores
/// `position` for the connector with topic prefix `prefix`; also the shape `GET` returns.
pub fn offsets_request(prefix: &str, position: &Position) -> Value {
    let mut entry = Map::new();
    entry.insert("partition".to_owned(), Value::Object(partition(prefix)));
    entry.insert("offset".to_owned(), Value::Object(position.to_offset_map()));
    let mut body = Map::new();
    body.insert(
        "offsets".to_owned(),
        Value::Array(vec![Value::Object(entry)]),
    );
    Value::Object(body)
}

/// Finds this connector's position in a `GET /connectors/<name>/offsets` body: the entry whose
/// partition is `{"server": prefix}`. `None` when there is no such entry or its offset is
/// `null` (no offset: a first start).
pub fn position_from_offsets_body(
    body: &Value,
    prefix: &str,
) -> Result<Option<Position>, OffsetError> {
    stored_offset(body, prefix)?
        .map(Position::from_json_value)
        .transpose()
}

/// The offset of this connector in a `GET /connectors/<name>/offsets` body, as stored (not
/// decoded): the admin tool shows an offset that does not decode this way. `None` when there
/// is no entry for `{"server": prefix}` or its offset is `null`; an error only when the body
/// itself is not Connect's shape.
pub fn stored_offset<'a>(body: &'a Value, prefix: &str) -> Result<Option<&'a Value>, OffsetError> {
    let shape_error = |expected: &'static str, found: &Value| OffsetError::BadField {
        field: "offsets",
        value: Shown(found).to_string(),
        expected,
    };
    let entries = body
        .get("offsets")
        .and_then(Value::as_array)
        .ok_or_else(|| shape_error("a list of partition/offset entries", body))?;
    for entry in entries {
        let partition = entry
            .get("partition")
            .and_then(Value::as_object)
            .ok_or_else(|| shape_error("an entry with a partition object", entry))?;
        if partition.get(PARTITION_KEY).and_then(Value::as_str) != Some(prefix) {
            continue;
        }
        return Ok(entry.get("offset").filter(|offset| !offset.is_null()));
    }
    Ok(None)
}

/// The fields of a stored offset read one at a time, each exactly as
/// [`Position::from_offset_map`] reads it (lenient numbers, never rounded): what the admin tool
/// keeps when it replaces an offset that does not decode as a whole (CDC-3002). Each is `None`
/// when absent or `null`, else its value or why it does not read. The version is not looked at.
#[derive(Debug)]
pub struct Salvaged {
    pub resume_scn: Option<Result<Scn, OffsetError>>,
    pub dbid: Option<Result<u64, OffsetError>>,
    pub resetlogs_scn: Option<Result<Scn, OffsetError>>,
    pub journal_generation: Option<Result<u64, OffsetError>>,
    pub released_xids: Option<Result<ReleasedXids, OffsetError>>,
    pub signal_offset: Option<Result<i64, OffsetError>>,
    /// The fields v1 does not know, kept as the decoder keeps them, in the order read.
    pub extra: Extra,
    /// The unknown fields the decoder refuses (a list or a map), with why.
    pub refused_extra: Vec<(String, OffsetError)>,
}

/// Reads what still reads of an offset map ([`Salvaged`]).
pub fn salvage(map: &Map<String, Value>) -> Salvaged {
    let get = |name: &str| map.get(name).filter(|value| !value.is_null());
    let mut extra = Extra::new();
    let mut refused_extra = Vec::new();
    for (name, value) in map.iter().filter(|(name, _)| !is_known_field(name)) {
        if let Err(error) = extra.insert(name.clone(), value.clone()) {
            refused_extra.push((name.clone(), error));
        }
    }
    Salvaged {
        resume_scn: get(field::RESUME_SCN).map(|v| read_scn(field::RESUME_SCN, v)),
        dbid: get(field::DBID).map(|v| read_u64(field::DBID, v)),
        resetlogs_scn: get(field::RESETLOGS_SCN).map(|v| read_scn(field::RESETLOGS_SCN, v)),
        journal_generation: get(field::JOURNAL_GENERATION)
            .map(|v| read_u64(field::JOURNAL_GENERATION, v)),
        released_xids: get(field::RELEASED_XIDS)
            .map(|v| read_released_xids(field::RELEASED_XIDS, v)),
        signal_offset: get(field::SIGNAL_OFFSET).map(|v| read_i64(field::SIGNAL_OFFSET, v)),
        extra,
        refused_extra,
    }
}

impl Position {
    /// The offset text: compact JSON, fields in [`FIELDS`] order then the extras. Equal
    /// positions always give equal bytes.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(512);
        self.write_json(&mut out);
        out
    }

    /// Appends the offset text to `out` (the allocation-free form of [`Position::to_json`]).
    pub fn write_json(&self, out: &mut String) {
        out.push('{');
        let mut first = true;
        self.each_field(|name, value| {
            if !first {
                out.push(',');
            }
            first = false;
            write_json_string(out, name);
            out.push(':');
            value.write_json(out);
        });
        out.push('}');
    }

    /// The offset as the map handed to Kafka Connect, in the same order as [`Position::to_json`].
    pub fn to_offset_map(&self) -> Map<String, Value> {
        let mut map = Map::new();
        self.each_field(|name, value| {
            map.insert(name.to_owned(), value.to_value());
        });
        map
    }

    /// Reads an offset's text.
    pub fn from_json(text: &str) -> Result<Position, OffsetError> {
        let value: Value =
            serde_json::from_str(text).map_err(|source| OffsetError::NotJson { source })?;
        Position::from_json_value(&value)
    }

    /// Reads an offset held as a JSON value; it must be an object.
    pub fn from_json_value(value: &Value) -> Result<Position, OffsetError> {
        match value {
            Value::Object(map) => Position::from_offset_map(map),
            other => Err(OffsetError::NotAnObject {
                found: json_kind(other),
            }),
        }
    }

    /// Reads the offset map Kafka Connect hands back.
    pub fn from_offset_map(map: &Map<String, Value>) -> Result<Position, OffsetError> {
        decode(map)
    }

    /// Calls `f` with each field to write, in order.
    fn each_field<'a>(&'a self, mut f: impl FnMut(&'a str, FieldValue<'a>)) {
        use FieldValue::{Plain, Signed, Text, Unsigned};
        f(field::V, Unsigned(POSITION_VERSION));
        f(field::RESUME_SCN, Unsigned(self.resume.scn.0));
        if let Some(addr) = self.resume.addr {
            f(field::RESUME_RS_ID, Plain(PlainText::RsId(addr.rs_id())));
            f(field::RESUME_SSN, Unsigned(addr.ssn()));
        }
        if let Some(commit) = &self.last_commit {
            f(field::LAST_COMMIT_SCN, Unsigned(commit.scn.0));
            f(field::LAST_COMMIT_XID, Plain(PlainText::Xid(commit.xid)));
            f(
                field::LAST_COMMIT_THREAD,
                Unsigned(u64::from(commit.thread.0)),
            );
            f(
                field::LAST_COMMIT_RS_ID,
                Plain(PlainText::RsId(commit.addr.rs_id())),
            );
            f(field::LAST_COMMIT_SSN, Unsigned(commit.addr.ssn()));
            f(field::EVENT_INDEX, Unsigned(commit.event_index));
        }
        f(field::DBID, Unsigned(self.identity.dbid));
        f(
            field::RESETLOGS_SCN,
            Unsigned(self.identity.resetlogs_scn.0),
        );
        f(field::JOURNAL_GENERATION, Unsigned(self.journal_generation));
        f(field::SCHEMA_EPOCH, Unsigned(self.schema_epoch));
        if !self.released_xids.is_empty() {
            f(
                field::RELEASED_XIDS,
                Plain(PlainText::Ledger(&self.released_xids)),
            );
        }
        if let Some(snapshot) = &self.snapshot {
            f(field::SNAPSHOT, Text(snapshot));
        }
        if let Some(offset) = self.signal_offset {
            f(field::SIGNAL_OFFSET, Signed(offset));
        }
        if let Some(pending) = &self.snapshot_pending {
            f(field::SNAPSHOT_PENDING, Text(pending));
        }
        if let Some(start) = &self.first_start {
            f(field::START_FLOOR_SCN, Unsigned(start.floor_scn.0));
            f(field::START_OPEN_SCN, Unsigned(start.open_scn.0));
            f(field::START_OPEN_XIDS, Plain(PlainText::XidSet(start)));
        }
        for (name, value) in self.extra.iter() {
            f(name, FieldValue::Json(value));
        }
    }
}

/// One value to write.
enum FieldValue<'a> {
    Unsigned(u64),
    Signed(i64),
    /// Arbitrary text, escaped.
    Text(&'a str),
    /// Text known to need no escaping, rendered on the fly.
    Plain(PlainText<'a>),
    Json(&'a Value),
}

enum PlainText<'a> {
    RsId(RsId),
    Xid(ConXid),
    Ledger(&'a ReleasedXids),
    XidSet(&'a FirstStart),
}

impl fmt::Display for PlainText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlainText::RsId(rs_id) => rs_id.fmt(f),
            PlainText::Xid(xid) => xid.fmt(f),
            PlainText::Ledger(ledger) => ledger.fmt(f),
            PlainText::XidSet(start) => write_xid_csv(f, start.open_xids.iter().copied()),
        }
    }
}

impl FieldValue<'_> {
    fn write_json(&self, out: &mut String) {
        // Writing to a String cannot fail; the fmt::Result is only the trait's signature.
        let _ = match self {
            FieldValue::Unsigned(n) if i64::try_from(*n).is_ok() => write!(out, "{n}"),
            FieldValue::Unsigned(n) => write!(out, "\"{n}\""),
            FieldValue::Signed(n) => write!(out, "{n}"),
            FieldValue::Text(text) => {
                write_json_string(out, text);
                Ok(())
            }
            FieldValue::Plain(text) => write!(out, "\"{text}\""),
            FieldValue::Json(value) => write!(out, "{value}"),
        };
    }

    fn to_value(&self) -> Value {
        match self {
            FieldValue::Unsigned(n) if i64::try_from(*n).is_ok() => Value::Number(Number::from(*n)),
            FieldValue::Unsigned(n) => Value::String(n.to_string()),
            FieldValue::Signed(n) => Value::Number(Number::from(*n)),
            FieldValue::Text(text) => Value::String((*text).to_owned()),
            FieldValue::Plain(text) => Value::String(text.to_string()),
            FieldValue::Json(value) => (*value).clone(),
        }
    }
}

/// Writes `text` as a JSON string exactly as serde_json does (the test
/// `string_escaping_matches_serde_json` holds it to that): `"` and `\` escaped, the control
/// characters below U+0020 as `\b \t \n \f \r` or `\u00xx`, everything else as is.
fn write_json_string(out: &mut String, text: &str) {
    out.push('"');
    let mut start = 0;
    for (i, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\x08' => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            b'\x0c' => "\\f",
            b'\r' => "\\r",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&text[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&text[start..]);
    out.push('"');
}

/// The known fields of one offset, as found (a `null` counts as absent).
#[derive(Default)]
struct Slots<'a> {
    values: [Option<&'a Value>; FIELDS.len()],
}

impl<'a> Slots<'a> {
    fn get(&self, name: &'static str) -> Option<&'a Value> {
        FIELDS
            .iter()
            .position(|known| *known == name)
            .and_then(|i| self.values[i])
    }
}

fn decode(map: &Map<String, Value>) -> Result<Position, OffsetError> {
    if map.is_empty() {
        return Err(OffsetError::Empty);
    }
    // The version decides how to read everything else, so it is checked first.
    check_version(map.get(field::V))?;

    let mut slots = Slots::default();
    let mut extra = Extra::new();
    for (name, value) in map {
        match FIELDS.iter().position(|known| known == name) {
            Some(i) => slots.values[i] = Some(value).filter(|value| !value.is_null()),
            None => extra.insert(name.clone(), value.clone())?,
        }
    }

    let resume_scn = slots
        .get(field::RESUME_SCN)
        .ok_or(OffsetError::MissingField {
            field: field::RESUME_SCN,
            action: "restore it from the offsets topic, or set it to the SCN to mine from",
        })
        .and_then(|value| read_scn(field::RESUME_SCN, value))?;
    let resume_addr = read_addr_pair(
        &slots,
        field::RESUME_RS_ID,
        field::RESUME_SSN,
        "restore both, or remove both to mine from the first SCN of the log holding resume_scn",
    )?;

    let identity = DbIdentity {
        dbid: read_required(&slots, field::DBID, IDENTITY_ACTION, read_u64)?,
        resetlogs_scn: read_required(&slots, field::RESETLOGS_SCN, IDENTITY_ACTION, read_scn)?,
    };
    let journal_generation = read_required(
        &slots,
        field::JOURNAL_GENERATION,
        "restore it from the offsets topic: without it, the journal chunks that were \
         acknowledged cannot be told from those that were not",
        read_u64,
    )?;
    let schema_epoch = read_optional(&slots, field::SCHEMA_EPOCH, read_u64)?.unwrap_or(0);
    let released_xids =
        read_optional(&slots, field::RELEASED_XIDS, read_released_xids)?.unwrap_or_default();
    let snapshot = read_optional(&slots, field::SNAPSHOT, read_snapshot)?;
    let signal_offset = read_optional(&slots, field::SIGNAL_OFFSET, read_i64)?;
    let snapshot_pending = read_optional(&slots, field::SNAPSHOT_PENDING, |name, value| {
        read_str(name, value).map(str::to_owned)
    })?;

    Ok(Position {
        resume: ResumePoint {
            scn: resume_scn,
            addr: resume_addr,
        },
        last_commit: read_last_commit(&slots)?,
        journal_generation,
        schema_epoch,
        identity,
        released_xids,
        snapshot,
        signal_offset,
        snapshot_pending,
        first_start: read_first_start(&slots)?,
        extra,
    })
}

const IDENTITY_ACTION: &str = "dbid and resetlogs_scn tie the offset to its database: restore \
    both from the offsets topic as they were read, or reset the offset";

fn check_version(value: Option<&Value>) -> Result<(), OffsetError> {
    let value = match value {
        None | Some(Value::Null) => return Err(OffsetError::NoVersion),
        Some(value) => value,
    };
    let version = read_u64(field::V, value).map_err(|_| OffsetError::BadVersion {
        value: Shown(value).to_string(),
    })?;
    match version {
        0 => Err(OffsetError::UnknownVersion { found: 0 }),
        POSITION_VERSION => Ok(()),
        newer => Err(OffsetError::NewerVersion { found: newer }),
    }
}

fn read_required<T>(
    slots: &Slots<'_>,
    name: &'static str,
    action: &'static str,
    read: impl FnOnce(&'static str, &Value) -> Result<T, OffsetError>,
) -> Result<T, OffsetError> {
    match slots.get(name) {
        Some(value) => read(name, value),
        None => Err(OffsetError::MissingField {
            field: name,
            action,
        }),
    }
}

fn read_optional<T>(
    slots: &Slots<'_>,
    name: &'static str,
    read: impl FnOnce(&'static str, &Value) -> Result<T, OffsetError>,
) -> Result<Option<T>, OffsetError> {
    slots.get(name).map(|value| read(name, value)).transpose()
}

/// Checks that a group's fields are all present or all absent.
fn check_group(
    slots: &Slots<'_>,
    names: &[&'static str],
    action: &'static str,
) -> Result<bool, OffsetError> {
    let (present, missing): (Vec<&'static str>, Vec<&'static str>) =
        names.iter().partition(|name| slots.get(name).is_some());
    match (present.is_empty(), missing.is_empty()) {
        (true, _) => Ok(false),
        (false, true) => Ok(true),
        (false, false) => Err(OffsetError::IncompleteGroup {
            present,
            missing,
            action,
        }),
    }
}

fn read_addr_pair(
    slots: &Slots<'_>,
    rs_id_name: &'static str,
    ssn_name: &'static str,
    action: &'static str,
) -> Result<Option<RedoAddr>, OffsetError> {
    if !check_group(slots, &[rs_id_name, ssn_name], action)? {
        return Ok(None);
    }
    read_required(slots, rs_id_name, action, |name, value| {
        let rs_id = read_rs_id(name, value)?;
        let ssn = read_required(slots, ssn_name, action, read_u64)?;
        RedoAddr::new(rs_id, ssn).map_err(|source| bad_position(name, value, source))
    })
    .map(Some)
}

fn read_last_commit(slots: &Slots<'_>) -> Result<Option<LastCommit>, OffsetError> {
    const ACTION: &str = "restore them from the offsets topic, or remove all five \
        last_commit_* fields and set event_index to 0 to deliver those transactions again";
    let event_index = read_optional(slots, field::EVENT_INDEX, read_u64)?;
    if !check_group(slots, &LAST_COMMIT_FIELDS, ACTION)? {
        return match event_index {
            None | Some(0) => Ok(None),
            Some(event_index) => Err(OffsetError::EventIndexWithoutCommit { event_index }),
        };
    }
    let Some(event_index) = event_index else {
        return Err(OffsetError::IncompleteGroup {
            present: LAST_COMMIT_FIELDS.to_vec(),
            missing: vec![field::EVENT_INDEX],
            action: "restore event_index from the offsets topic, or remove all five \
                last_commit_* fields to deliver those transactions again",
        });
    };
    let thread = read_required(slots, field::LAST_COMMIT_THREAD, ACTION, |name, value| {
        let thread = read_u64(name, value)?;
        u16::try_from(thread).map_err(|_| OffsetError::BadField {
            field: name,
            value: Shown(value).to_string(),
            expected: "a redo thread number (0 to 65535)",
        })
    })?;
    Ok(Some(LastCommit {
        scn: read_required(slots, field::LAST_COMMIT_SCN, ACTION, read_scn)?,
        xid: read_required(slots, field::LAST_COMMIT_XID, ACTION, read_xid)?,
        thread: RedoThread(thread),
        addr: read_addr_pair(
            slots,
            field::LAST_COMMIT_RS_ID,
            field::LAST_COMMIT_SSN,
            ACTION,
        )?
        .ok_or(OffsetError::MissingField {
            field: field::LAST_COMMIT_RS_ID,
            action: ACTION,
        })?,
        event_index,
    }))
}

fn read_first_start(slots: &Slots<'_>) -> Result<Option<FirstStart>, OffsetError> {
    const ACTION: &str = "restore all three from the offsets topic, or remove all three if a \
        commit was acknowledged since the first start";
    if !check_group(slots, &START_FIELDS, ACTION)? {
        return Ok(None);
    }
    let xids = read_required(slots, field::START_OPEN_XIDS, ACTION, |name, value| {
        let text = read_str(name, value)?;
        parse_xid_csv(text).map_err(|source| bad_position(name, value, source))
    })?;
    Ok(Some(FirstStart {
        floor_scn: read_required(slots, field::START_FLOOR_SCN, ACTION, read_scn)?,
        open_scn: read_required(slots, field::START_OPEN_SCN, ACTION, read_scn)?,
        open_xids: xids.into_iter().collect(),
    }))
}

/// The largest integer a JSON float carries exactly.
const MAX_EXACT_FLOAT: f64 = 9_007_199_254_740_992.0;

fn read_u64(name: &'static str, value: &Value) -> Result<u64, OffsetError> {
    let bad = || OffsetError::BadField {
        field: name,
        value: Shown(value).to_string(),
        expected: "a whole number from 0 (a JSON integer, or a string of decimal digits)",
    };
    match value {
        Value::Number(number) => {
            if let Some(n) = number.as_u64() {
                return Ok(n);
            }
            match number.as_f64() {
                // Only a float that still says exactly which integer it was.
                Some(f) if f.fract() == 0.0 && (0.0..=MAX_EXACT_FLOAT).contains(&f) => Ok(f as u64),
                _ => Err(bad()),
            }
        }
        Value::String(text) if is_decimal(text) => text.parse().map_err(|_| bad()),
        _ => Err(bad()),
    }
}

fn read_i64(name: &'static str, value: &Value) -> Result<i64, OffsetError> {
    let bad = || OffsetError::BadField {
        field: name,
        value: Shown(value).to_string(),
        expected: "a whole number (a JSON integer, or a string of decimal digits)",
    };
    match value {
        Value::Number(number) => {
            if let Some(n) = number.as_i64() {
                return Ok(n);
            }
            match number.as_f64() {
                Some(f)
                    if f.fract() == 0.0 && (-MAX_EXACT_FLOAT..=MAX_EXACT_FLOAT).contains(&f) =>
                {
                    Ok(f as i64)
                }
                _ => Err(bad()),
            }
        }
        Value::String(text) => {
            let digits = text.strip_prefix('-').unwrap_or(text);
            if is_decimal(digits) {
                text.parse().map_err(|_| bad())
            } else {
                Err(bad())
            }
        }
        _ => Err(bad()),
    }
}

fn is_decimal(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

fn read_scn(name: &'static str, value: &Value) -> Result<Scn, OffsetError> {
    read_u64(name, value).map(Scn)
}

fn read_str<'v>(name: &'static str, value: &'v Value) -> Result<&'v str, OffsetError> {
    value.as_str().ok_or_else(|| OffsetError::BadField {
        field: name,
        value: Shown(value).to_string(),
        expected: "a string",
    })
}

fn read_rs_id(name: &'static str, value: &Value) -> Result<RsId, OffsetError> {
    let text = read_str(name, value)?;
    RsId::parse(text).map_err(|source| bad_position(name, value, source))
}

fn read_xid(name: &'static str, value: &Value) -> Result<ConXid, OffsetError> {
    let text = read_str(name, value)?;
    ConXid::parse(text).map_err(|source| bad_position(name, value, source))
}

fn read_released_xids(name: &'static str, value: &Value) -> Result<ReleasedXids, OffsetError> {
    let text = read_str(name, value)?;
    ReleasedXids::parse_csv(text).map_err(|source| bad_position(name, value, source))
}

fn read_snapshot(name: &'static str, value: &Value) -> Result<String, OffsetError> {
    let text = read_str(name, value).map_err(|_| OffsetError::BadSnapshot {
        reason: format!("it is a JSON {}, not a string", json_kind(value)),
    })?;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => Ok(text.to_owned()),
        Ok(other) => Err(OffsetError::BadSnapshot {
            reason: format!("the text is a JSON {}", json_kind(&other)),
        }),
        Err(error) => Err(OffsetError::BadSnapshot {
            reason: error.to_string(),
        }),
    }
}

fn bad_position(name: &'static str, value: &Value, source: cdc_core::PositionError) -> OffsetError {
    OffsetError::BadPosition {
        field: name,
        value: Shown(value).to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::{CdcCode, CdcError, ConId, Xid};
    use proptest::prelude::*;
    use serde_json::json;

    fn addr(seq: u32, block: u32, offset: u16, ssn: u64) -> RedoAddr {
        RedoAddr::new(RsId::new(seq, block, offset), ssn).unwrap()
    }

    fn minimal() -> Value {
        json!({"v": 1, "resume_scn": 4711000, "dbid": 1234567890, "resetlogs_scn": 1,
               "journal_generation": 7, "schema_epoch": 0})
    }

    fn with(mut base: Value, key: &str, value: Value) -> Value {
        base.as_object_mut().unwrap().insert(key.to_owned(), value);
        base
    }

    fn without(mut base: Value, key: &str) -> Value {
        base.as_object_mut().unwrap().shift_remove(key);
        base
    }

    fn decode_err(value: Value) -> OffsetError {
        Position::from_json_value(&value).unwrap_err()
    }

    #[test]
    fn field_table_has_each_name_once() {
        let mut names = FIELDS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FIELDS.len());
    }

    #[test]
    fn version_errors_say_which_and_are_corruption() {
        let cases: [(Value, &str); 7] = [
            (json!({}), "empty object"),
            (without(minimal(), "v"), "no version field v"),
            (with(minimal(), "v", json!("one")), "v = \"one\""),
            (with(minimal(), "v", json!(true)), "v = true"),
            (with(minimal(), "v", json!(1.5)), "v = 1.5"),
            (with(minimal(), "v", json!(0)), "v = 0"),
            (with(minimal(), "v", json!(2)), "newer connector version"),
        ];
        for (value, says) in cases {
            let error = decode_err(value.clone());
            let cdc = CdcError::from(error);
            assert_eq!(cdc.code(), CdcCode::Corruption, "{value}");
            let text = cdc.to_string();
            assert!(text.starts_with("[CDC-3002]"), "{text}");
            assert!(text.contains(says), "{value}: {text}");
        }
        // a null v is the same as none
        assert!(matches!(
            decode_err(with(minimal(), "v", Value::Null)),
            OffsetError::NoVersion
        ));
        assert!(matches!(
            decode_err(with(minimal(), "v", json!(3))),
            OffsetError::NewerVersion { found: 3 }
        ));
        // lenient numbers apply to v too
        assert!(Position::from_json_value(&with(minimal(), "v", json!("1"))).is_ok());
        assert!(Position::from_json_value(&with(minimal(), "v", json!(1.0))).is_ok());
    }

    #[test]
    fn a_newer_version_is_refused_before_its_fields_are_read() {
        // A v2 offset may spell its fields differently; nothing of it is read.
        let error = decode_err(json!({"v": 2, "resume": {"thread": 1}}));
        assert!(matches!(error, OffsetError::NewerVersion { found: 2 }));
    }

    #[test]
    fn not_json_and_not_objects_are_corruption() {
        for text in ["", "{", "not json", "{\"v\":1,}"] {
            let error = Position::from_json(text).unwrap_err();
            assert!(matches!(error, OffsetError::NotJson { .. }), "{text}");
            let cdc = CdcError::from(error);
            assert_eq!(cdc.code(), CdcCode::Corruption);
            assert!(
                std::error::Error::source(&cdc).is_some(),
                "keeps the parse error"
            );
        }
        for text in ["null", "[]", "1", "\"v\"", "true"] {
            let error = Position::from_json(text).unwrap_err();
            assert!(matches!(error, OffsetError::NotAnObject { .. }), "{text}");
        }
    }

    #[test]
    fn required_fields() {
        for (name, says) in [
            ("resume_scn", "no resume_scn"),
            ("dbid", "no dbid"),
            ("resetlogs_scn", "no resetlogs_scn"),
            ("journal_generation", "no journal_generation"),
        ] {
            let text = decode_err(without(minimal(), name)).to_string();
            assert!(text.contains(says), "{text}");
            let text = decode_err(with(minimal(), name, Value::Null)).to_string();
            assert!(text.contains(says), "null counts as absent: {text}");
        }
        // schema_epoch is reserved and defaults to 0
        let position = Position::from_json_value(&without(minimal(), "schema_epoch")).unwrap();
        assert_eq!(position.schema_epoch, 0);
    }

    #[test]
    fn numbers_are_read_leniently_but_never_rounded() {
        let read = |value: Value| read_u64("resume_scn", &value);
        assert_eq!(read(json!(4711000)).unwrap(), 4_711_000);
        assert_eq!(read(json!("4711000")).unwrap(), 4_711_000);
        assert_eq!(read(json!(4711000.0)).unwrap(), 4_711_000);
        assert_eq!(read(json!(u64::MAX)).unwrap(), u64::MAX);
        assert_eq!(read(json!("18446744073709551615")).unwrap(), u64::MAX);
        assert_eq!(read(json!(9007199254740992.0)).unwrap(), 1 << 53);
        for bad in [
            json!(-1),
            json!(-1.0),
            json!(1.5),
            json!(1.0e19),
            json!("18446744073709551616"),
            json!(""),
            json!(" 1"),
            json!("+1"),
            json!("0x10"),
            json!("1e3"),
            json!(true),
            json!([1]),
            json!({"n": 1}),
        ] {
            assert!(read(bad.clone()).is_err(), "{bad}");
        }
        let read = |value: Value| read_i64("signal_offset", &value);
        assert_eq!(read(json!(-1)).unwrap(), -1);
        assert_eq!(read(json!("-1")).unwrap(), -1);
        assert_eq!(read(json!(i64::MAX)).unwrap(), i64::MAX);
        for bad in [json!(u64::MAX), json!("--1"), json!("-"), json!(0.5)] {
            assert!(read(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_above_i64_are_written_as_strings() {
        let mut position = Position::from_json_value(&minimal()).unwrap();
        position.resume.scn = Scn(u64::MAX);
        position.journal_generation = i64::MAX as u64;
        let text = position.to_json();
        assert!(
            text.contains(r#""resume_scn":"18446744073709551615""#),
            "{text}"
        );
        assert!(
            text.contains(r#""journal_generation":9223372036854775807"#),
            "{text}"
        );
        assert_eq!(Position::from_json(&text).unwrap(), position);
    }

    #[test]
    fn groups_must_be_whole() {
        let resume = with(minimal(), "resume_rs_id", json!(" 0x000059.0000d6a1.0010 "));
        let text = decode_err(resume.clone()).to_string();
        assert!(text.contains("resume_rs_id but not resume_ssn"), "{text}");
        let ok = with(resume, "resume_ssn", json!(3));
        let position = Position::from_json_value(&ok).unwrap();
        assert_eq!(position.resume.addr, Some(addr(0x59, 0xd6a1, 0x10, 3)));

        let commit = with(
            with(minimal(), "last_commit_scn", json!(10)),
            "last_commit_xid",
            json!("3:5.12.900"),
        );
        let text = decode_err(commit).to_string();
        assert!(
            text.contains("last_commit_scn, last_commit_xid but not last_commit_thread, last_commit_rs_id, last_commit_ssn"),
            "{text}"
        );
        assert!(text.contains("deliver those transactions again"), "{text}");

        let start = with(minimal(), "start_floor_scn", json!(10));
        let text = decode_err(start).to_string();
        assert!(
            text.contains("start_floor_scn but not start_open_scn, start_open_xids"),
            "{text}"
        );
    }

    fn full_commit() -> Value {
        let mut value = minimal();
        for (key, field_value) in [
            ("last_commit_scn", json!(4711000)),
            ("last_commit_xid", json!("3:5.12.900")),
            ("last_commit_thread", json!(1)),
            ("last_commit_rs_id", json!(" 0x000059.0000d6a1.0010 ")),
            ("last_commit_ssn", json!(0)),
            ("event_index", json!(2)),
        ] {
            value = with(value, key, field_value);
        }
        value
    }

    #[test]
    fn event_index_belongs_to_the_last_commit() {
        let position = Position::from_json_value(&full_commit()).unwrap();
        let commit = position.last_commit.unwrap();
        assert_eq!(commit.event_index, 2);
        assert_eq!(commit.xid, ConXid::new(ConId(3), Xid::new(5, 12, 900)));
        assert_eq!(commit.addr, addr(0x59, 0xd6a1, 0x10, 0));

        let text = decode_err(without(full_commit(), "event_index")).to_string();
        assert!(text.contains("but not event_index"), "{text}");

        // "deliver again" by hand: the five fields removed, event_index set to 0
        let mut edited = full_commit();
        for name in LAST_COMMIT_FIELDS {
            edited = without(edited, name);
        }
        let zero = with(edited.clone(), "event_index", json!(0));
        let position = Position::from_json_value(&zero).unwrap();
        assert_eq!(position.last_commit, None);
        assert_eq!(
            position.to_json(),
            Position::from_json_value(&minimal()).unwrap().to_json()
        );
        let error = decode_err(edited);
        assert!(matches!(
            error,
            OffsetError::EventIndexWithoutCommit { event_index: 2 }
        ));
        assert!(error.to_string().contains("set event_index to 0"));
    }

    #[test]
    fn bad_values_name_the_field() {
        let cases = [
            ("resume_scn", json!("soon"), "resume_scn = \"soon\""),
            ("dbid", json!(-5), "dbid = -5"),
            (
                "released_xids",
                json!("3:5.12"),
                "released_xids = \"3:5.12\"",
            ),
            (
                "released_xids",
                json!(7),
                "released_xids = 7 is not a string",
            ),
            ("snapshot_pending", json!(1), "snapshot_pending = 1"),
            ("signal_offset", json!("x"), "signal_offset = \"x\""),
            ("snapshot", json!("{"), "snapshot does not hold"),
            ("snapshot", json!("[1]"), "the text is a JSON array"),
            (
                "snapshot",
                json!({"v": 1}),
                "it is a JSON object, not a string",
            ),
            (
                "future_list",
                json!([1, 2]),
                "future_list holds a JSON array",
            ),
            (
                "future_map",
                json!({"a": 1}),
                "future_map holds a JSON object",
            ),
        ];
        for (name, value, says) in cases {
            let error = decode_err(with(minimal(), name, value));
            assert_eq!(error.code(), CdcCode::Corruption);
            let text = error.to_string();
            assert!(text.contains(says), "{name}: {text}");
        }
        let text = decode_err(with(full_commit(), "last_commit_thread", json!(70000))).to_string();
        assert!(text.contains("last_commit_thread = 70000"), "{text}");
        let text =
            decode_err(with(full_commit(), "last_commit_rs_id", json!("0x59.d6a1"))).to_string();
        assert!(
            text.contains("last_commit_rs_id = \"0x59.d6a1\" cannot be read"),
            "{text}"
        );
        let resume = with(
            with(minimal(), "resume_rs_id", json!(" 0x000000.00000000.0000 ")),
            "resume_ssn",
            json!(0),
        );
        let text = decode_err(resume).to_string();
        assert!(text.contains("all-zero RS_ID"), "{text}");
    }

    #[test]
    fn rs_ids_are_read_in_any_spelling_and_written_padded() {
        let value = with(
            with(minimal(), "resume_rs_id", json!("0X000059.0000D6A1.0010")),
            "resume_ssn",
            json!("7"),
        );
        let position = Position::from_json_value(&value).unwrap();
        let text = position.to_json();
        assert!(
            text.contains(r#""resume_rs_id":" 0x000059.0000d6a1.0010 ","resume_ssn":7"#),
            "{text}"
        );
    }

    #[test]
    fn released_xids_csv() {
        let value = with(
            minimal(),
            "released_xids",
            json!("3:5.12.900, 4:5.12.900,5.1.2"),
        );
        let position = Position::from_json_value(&value).unwrap();
        let xids: Vec<String> = position
            .released_xids
            .iter()
            .map(|x| x.to_string())
            .collect();
        assert_eq!(xids, ["3:5.12.900", "4:5.12.900", "0:5.1.2"]);
        assert!(
            position
                .to_json()
                .contains(r#""released_xids":"3:5.12.900,4:5.12.900,0:5.1.2""#)
        );
        // the empty string is the empty ledger, and is then left out
        let value = with(minimal(), "released_xids", json!(""));
        let position = Position::from_json_value(&value).unwrap();
        assert!(position.released_xids.is_empty());
        assert!(!position.to_json().contains("released_xids"));
        // more than the capacity keeps the newest
        let csv: Vec<String> = (0..300).map(|i| format!("3:1.1.{i}")).collect();
        let value = with(minimal(), "released_xids", json!(csv.join(",")));
        let position = Position::from_json_value(&value).unwrap();
        assert_eq!(position.released_xids.len(), ReleasedXids::CAPACITY);
        assert_eq!(
            position.released_xids.iter().next().unwrap().to_string(),
            "3:1.1.44"
        );
    }

    #[test]
    fn unknown_fields_keep_their_values_and_order() {
        let value = json!({"zeta": "z", "v": 1, "resume_scn": 5, "alpha": 1.25, "dbid": 1,
            "resetlogs_scn": 1, "flag": true, "journal_generation": 1, "nothing": null,
            "big": 18446744073709551615u64});
        let position = Position::from_json_value(&value).unwrap();
        let names: Vec<&str> = position.extra.iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["zeta", "alpha", "flag", "nothing", "big"]);
        assert_eq!(
            position.to_json(),
            r#"{"v":1,"resume_scn":5,"dbid":1,"resetlogs_scn":1,"journal_generation":1,"schema_epoch":0,"zeta":"z","alpha":1.25,"flag":true,"nothing":null,"big":18446744073709551615}"#
        );
    }

    #[test]
    fn extra_refuses_known_names_and_containers() {
        let mut extra = Extra::new();
        assert!(matches!(
            extra.insert("resume_scn", json!(1)),
            Err(OffsetError::ReservedName { .. })
        ));
        assert!(extra.insert("x", json!([1])).is_err());
        assert!(extra.insert("x", json!({})).is_err());
        extra.insert("x", json!(1)).unwrap();
        extra.insert("y", json!("2")).unwrap();
        extra.insert("x", json!(3)).unwrap();
        assert_eq!(extra.iter().map(|(n, _)| n).collect::<Vec<_>>(), ["x", "y"]);
        assert_eq!(extra.remove("x"), Some(json!(3)));
        assert_eq!(extra.len(), 1);
    }

    #[test]
    fn partition_and_topic_key() {
        assert_eq!(
            Value::Object(partition("cdc")).to_string(),
            r#"{"server":"cdc"}"#
        );
        let key = offsets_topic_key("orders-cdc", "cdc");
        assert_eq!(key, r#"["orders-cdc",{"server":"cdc"}]"#);
        assert_eq!(
            parse_offsets_topic_key(&key),
            Some(("orders-cdc".to_owned(), "cdc".to_owned()))
        );
        for other in [
            r#"["a",{"server":"b","x":1}]"#,
            r#"["a",{"srv":"b"}]"#,
            r#"["a"]"#,
            r#"{"server":"b"}"#,
            "",
        ] {
            assert_eq!(parse_offsets_topic_key(other), None, "{other}");
        }
    }

    #[test]
    fn offsets_body_finds_the_partition() {
        let position = Position::from_json_value(&minimal()).unwrap();
        let body = offsets_request("cdc", &position);
        assert_eq!(
            position_from_offsets_body(&body, "cdc").unwrap(),
            Some(position)
        );
        assert_eq!(position_from_offsets_body(&body, "other").unwrap(), None);
        let null = json!({"offsets": [{"partition": {"server": "cdc"}, "offset": null}]});
        assert_eq!(position_from_offsets_body(&null, "cdc").unwrap(), None);
        let bad = json!({"offsets": [{"partition": {"server": "cdc"}, "offset": {"v": 9}}]});
        assert!(matches!(
            position_from_offsets_body(&bad, "cdc"),
            Err(OffsetError::NewerVersion { found: 9 })
        ));
        assert!(position_from_offsets_body(&json!({"offset": 1}), "cdc").is_err());
        assert!(position_from_offsets_body(&json!({"offsets": [1]}), "cdc").is_err());
        // the stored value itself, undecoded
        assert_eq!(stored_offset(&bad, "cdc").unwrap(), Some(&json!({"v": 9})));
        assert_eq!(stored_offset(&null, "cdc").unwrap(), None);
        assert_eq!(stored_offset(&bad, "other").unwrap(), None);
    }

    /// What still reads of an offset that does not decode is what the decoder reads of the
    /// same fields in one that does.
    #[test]
    fn salvage_reads_each_field_as_the_decoder_does() {
        let mut good = with(
            with(full_commit(), "released_xids", json!("3:5.12.900,0:1.2.3")),
            "signal_offset",
            json!("12"),
        );
        good = with(
            with(good, "dbid", json!("1234567890")),
            "zeta",
            json!("kept"),
        );
        let decoded = Position::from_json_value(&good).unwrap();
        // a newer version, a bad snapshot block and a list: the whole no longer decodes
        let broken = with(
            with(with(good, "v", json!(2)), "snapshot", json!("{")),
            "future_list",
            json!([1]),
        );
        assert!(Position::from_json_value(&broken).is_err());
        let salvaged = salvage(broken.as_object().unwrap());
        assert_eq!(salvaged.resume_scn.unwrap().unwrap(), decoded.resume.scn);
        assert_eq!(salvaged.dbid.unwrap().unwrap(), decoded.identity.dbid);
        assert_eq!(
            salvaged.resetlogs_scn.unwrap().unwrap(),
            decoded.identity.resetlogs_scn
        );
        assert_eq!(
            salvaged.journal_generation.unwrap().unwrap(),
            decoded.journal_generation
        );
        assert_eq!(
            salvaged.released_xids.unwrap().unwrap(),
            decoded.released_xids
        );
        assert_eq!(
            salvaged.signal_offset.unwrap().unwrap(),
            decoded.signal_offset.unwrap()
        );
        assert_eq!(salvaged.extra, decoded.extra);
        assert_eq!(salvaged.refused_extra.len(), 1);
        assert_eq!(salvaged.refused_extra[0].0, "future_list");
        // a field that does not read says why, an absent one is None
        let bad = salvage(
            json!({"released_xids": "3:5.12", "journal_generation": -1, "dbid": null})
                .as_object()
                .unwrap(),
        );
        assert!(bad.released_xids.unwrap().is_err());
        assert!(bad.journal_generation.unwrap().is_err());
        assert!(bad.dbid.is_none() && bad.resume_scn.is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn string_escaping_matches_serde_json(text in "\\PC*|[\\x00-\\x20\"\\\\\u{7f}\u{2028}é]*") {
            let mut out = String::new();
            write_json_string(&mut out, &text);
            prop_assert_eq!(out, serde_json::to_string(&text).unwrap());
        }

        #[test]
        fn read_u64_round_trips_every_value(n: u64) {
            let mut out = String::new();
            FieldValue::Unsigned(n).write_json(&mut out);
            let value: Value = serde_json::from_str(&out).unwrap();
            prop_assert_eq!(read_u64("x", &value).unwrap(), n);
            prop_assert_eq!(FieldValue::Unsigned(n).to_value(), value);
        }

        #[test]
        fn decoding_never_panics(text in "\\PC{0,200}") {
            let _ = Position::from_json(&text);
        }

        #[test]
        fn decoding_near_misses_never_panics(
            fields in proptest::collection::vec(
                (proptest::sample::select(FIELDS.to_vec()), any_json()), 0..12)
        ) {
            let map: Map<String, Value> =
                fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            if let Ok(position) = Position::from_offset_map(&map) {
                // whatever decodes, encodes to text that decodes to the same position
                prop_assert_eq!(Position::from_json(&position.to_json()).unwrap(), position);
            }
        }
    }

    fn any_json() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(|n| json!(n)),
            (0u64..3).prop_map(|n| json!(n)),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|n| json!(n)),
            "[0-9]{0,3}".prop_map(Value::String),
            Just(json!(" 0x000059.0000d6a1.0010 ")),
            Just(json!("3:5.12.900")),
            Just(json!("{\"v\":1}")),
            "\\PC{0,8}".prop_map(Value::String),
        ]
    }
}
