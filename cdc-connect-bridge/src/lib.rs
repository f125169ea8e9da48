//! `cdc-connect-bridge`: the Kafka side of oracle-cdc. Its library holds the record format,
//! which turns the capture engine's records into Kafka records — topic, key bytes, value bytes,
//! headers and source offset — as a Debezium connector behind a Kafka Connect worker with the
//! JSON converter would write them; the Kafka Connect-format offsets topic
//! ([`offsets_kafka`]); and the task that runs the engine and delivers its records (producer,
//! Kafka transactions: [`worker`]), with its supervisor ([`connector`]), REST API ([`rest`]) and
//! metrics ([`metrics`]). The `oracle-cdc` binary is a thin shell over them.
//!
//! It sits at the top of the layers (see `docs/architecture.md`), over `cdc-logminer`'s records.
//! The record format is pure: no I/O, no clock (the caller passes the time for side records), no
//! threads.
//!
//! ```text
//!  EngineRecord { kind, position }
//!     │ RecordBuilder::append(record, RecordContext { now_ms, split })
//!     ├─ Change ─► TableFormat (once per table version: topic, fields, key plan, schemas)
//!     │              ├─ key: cdc.key.columns > PK > unique NOT NULL index > cdc.key.missing
//!     │              ├─ value: {before, after, source, op, ts_ms, ts_us, ts_ns, transaction}
//!     │              ├─ headers: cdc.scn, cdc.commit_scn, cdc.xid, cdc.event_index, …
//!     │              └─ delete ─► + tombstone; key-changing update ─► d + tombstone + c
//!     ├─ Heartbeat / Ops / Dlq ─► side topic records (no column values)
//!     ▼
//!  KafkaRecord { topic, key, value, headers, position, commits_offset }
//! ```
//!
//! `docs/records.md` documents the format; `tests/golden/` pins it byte for byte.

pub mod base64;
pub mod builder;
pub mod connect;
pub mod connector;
pub mod control;
pub mod demo;
pub mod error;
pub mod headers;
pub mod json;
pub mod key;
pub mod memory;
pub mod metrics;
pub mod names;
pub mod offsets_kafka;
pub mod order;
pub mod readback;
pub mod rest;
pub mod settings;
pub mod side;
pub mod stored_schemas;
pub mod text;
pub mod topic;
pub mod types;
pub mod value;
pub mod worker;

pub use builder::{KafkaRecord, RecordBuilder, RecordContext, SourceOffset};
pub use error::BridgeError;
pub use headers::Header;
pub use key::KeyPlan;
pub use order::EventOrder;
pub use settings::RecordSettings;
pub use topic::{SideTopics, table_topic};
pub use types::{FieldKind, field_kind, render, write_rendered};
pub use value::TableFormat;
