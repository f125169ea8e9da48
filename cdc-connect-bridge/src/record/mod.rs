//! The record format, pure: the capture engine's records turned into Kafka records — topic, key
//! bytes, value bytes, headers and source offset — as a Debezium connector behind a Kafka Connect
//! worker with the JSON converter would write them. No I/O, no clock (the caller passes the time
//! for side records), no threads.
//!
//! ```text
//!  EngineRecord { kind, position }
//!     │ RecordBuilder::append(record, RecordContext { now_ms, split })      builder
//!     ├─ Change ─► TableFormat (once per table version: topic, fields,       envelope
//!     │            key plan, Connect schemas)                                fields, schemas
//!     │              ├─ key: cdc.key.columns > PK > unique NOT NULL index    key
//!     │              ├─ value: {before, after, source, op, ts_ms, …}         envelope
//!     │              ├─ headers: cdc.scn, cdc.commit_scn, cdc.xid, …         headers
//!     │              └─ delete ─► + tombstone; key-changing update ─► d + tombstone + c
//!     ├─ Heartbeat / Ops / Dlq ─► side topic records (no column values)    side
//!     ▼
//!  KafkaRecord { topic, key, value, headers, position, commits_offset }      topics, names
//! ```
//!
//! `docs/records.md` documents the format; `tests/golden/` pins it byte for byte.

pub mod base64;
pub mod builder;
pub mod envelope;
pub mod error;
pub mod fields;
pub mod headers;
pub mod json;
pub mod key;
pub mod names;
pub mod order;
pub mod schemas;
pub mod settings;
pub mod side;
pub mod text;
pub mod topics;
