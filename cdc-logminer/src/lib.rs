//! `cdc-logminer`: the capture engine of oracle-cdc. It reads Oracle's redo through LogMiner
//! and hands each committed transaction, change by change and in commit order, to the code
//! that embeds it, every record with the position from which a restart continues after it.
//!
//! It sits in the I/O layer, above `cdc-core` (values, layouts, positions, configuration,
//! error codes), `cdc-offset` (the stored position and its rules) and `cdc-buffer` (the
//! transaction buffer); it knows nothing of Kafka. The `oracle-cdc` binary
//! (`cdc-connect-bridge`) is one user of it; a Rust service can be another.
//!
//! ```text
//!  RedoSource (one blocking session: Oracle via ODPI-C, or the simulator)
//!      │ inventory ─► window of whole logs ─► mine: V$LOGMNR_CONTENTS rows after the cursor
//!      ▼ one step, read whole
//!  decode (pure, rayon pool) ─► typed changes in redo order (excluded columns dropped here)
//!      ▼ apply
//!  TransactionBuffer (heap + spill) ─► at COMMIT: the transaction's changes in redo order
//!      ▼
//!  EngineRecord { kind, position } ─► RecordSink (yours: a Vec, a bounded queue, …)
//! ```
//!
//! # Modules
//!
//! | module | what it is |
//! |---|---|
//! | [`engine`] | [`CaptureEngine`]: start, steps, recovery, policies; the records it emits |
//! | [`source`] | the [`RedoSource`] trait, the real Oracle source, [`source::from_config`] |
//! | [`sim`] | the redo simulator: a [`RedoSource`] with a seeded database, workload and faults |
//! | [`decode`] | the SQL_REDO decoder (pure): parse, convert, DDL, continuation rows |
//!
//! # Embedding
//!
//! Open the engine over a source, push its records into a sink, and persist the position of
//! each record once you have handled it: a restart from that position emits exactly the
//! records after it. `docs/embedding.md` walks through it, the real source and the stop
//! signal of [`CaptureEngine::run`] included.
//!
//! ```
//! use std::time::Duration;
//!
//! use cdc_logminer::sim::{SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig};
//! use cdc_logminer::{CaptureEngine, EngineSettings, ManualClock, Position, RecordKind};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // a simulated database whose seeded workload runs while it is mined
//! let db = SimDatabase::new(SimConfig { seed: 7, ..SimConfig::default() })?;
//! let workload = Workload::random(WorkloadConfig {
//!     seed: 7,
//!     changes: 300,
//!     ddl_rate: 0.0,
//!     ..WorkloadConfig::default()
//! });
//! let source = SimSource::with_workload(db, workload, 16);
//!
//! // capture the APP tables; spill files of large transactions go under this folder
//! let mut settings = EngineSettings::new("demo", "embedding-example", |t| t.owner == "APP");
//! settings.buffer.spill_dir = std::env::temp_dir().join("cdc-logminer-doc-example");
//! let clock = ManualClock::default();
//! let mut engine = CaptureEngine::open(source, settings, None, Box::new(clock.clone()))?;
//!
//! // mine until three steps in a row find nothing
//! let mut records = Vec::new();
//! let mut quiet = 0;
//! while quiet < 3 {
//!     let report = engine.step(&mut records)?;
//!     quiet = if report.rows == 0 && !report.retried { quiet + 1 } else { 0 };
//!     clock.advance(Duration::from_millis(250));
//! }
//!
//! let mut saved = None;
//! for record in &records {
//!     if let RecordKind::Change(change) = &record.kind {
//!         println!("{} {} xid {}", change.event.change.op.code(), change.event.change.table,
//!             change.commit.con_xid);
//!     }
//!     // handled: this is where a service stores the position, with its own write
//!     saved = Some(record.position.to_json());
//! }
//! assert!(records.iter().any(|r| matches!(r.kind, RecordKind::Change(_))));
//!
//! // a restart opens the engine with the stored position and continues after that record
//! let restart_from = Position::from_json(&saved.unwrap_or_default())?;
//! assert_eq!(&restart_from, engine.position());
//! # Ok(())
//! # }
//! ```

pub mod decode;
pub mod engine;
pub mod sim;
pub mod source;

/// The decoder's shared test corpus (layouts, mined rows, a deterministic mix of SQL_REDO
/// shapes), used by the unit tests, the integration tests, the `decode` bench and the
/// `decode_profile` example; built only with the `test-support` feature.
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod test_support;

pub use cdc_core::CdcError;
pub use cdc_offset::Position;
pub use engine::{
    CaptureEngine, ChangeRecord, Clock, DlqRecord, EngineError, EngineMetrics, EngineRecord,
    EngineSettings, HeartbeatReason, ManualClock, RecordKind, RecordSink, SchemaChange, SinkClosed,
    StepReport, SystemClock,
};
pub use source::{ConfiguredSource, RedoSource, SourceError, SourceSetupError};
