//! The transaction journal of oracle-cdc: a transaction open longer than
//! `cdc.txjournal.threshold.ms`, or holding more than `cdc.txjournal.threshold.events` changes,
//! is written to a compacted topic in chunks, so that it no longer holds the restart position at
//! its first change; at a restart the open transactions are rebuilt from the topic.
//!
//! ```text
//!  engine (cdc-logminer)                                     journal topic (compacted)
//!   step end ─► JournalWriter::next_chunk ─► JournalRecord ─► record stream ─► Kafka (the
//!                 (writer.rs: when, chunks)    (format.rs)     same transactions and acks
//!   COMMIT / ROLLBACK / release ─► JournalWriter::end ─► tombstones            as the data)
//!
//!   task start ─► rebuild (rebuild.rs) ◄── JournalStore::read_all ◄── KafkaJournal (kafka.rs)
//!                  │ JournalRule (cdc-offset)                    └── MemoryJournal (tests)
//!                  ▼
//!                 TransactionBuffer: rebuilt transactions, spilled, hold at the mining start
//! ```
//!
//! The chunk payload is the spill file's frame format (`cdc_buffer::codec`, CRC32 per frame),
//! so a journaled transaction's chunks are read from its spill file and a rebuilt one's frames
//! are copied into one without being decoded. With the `kafka` feature the crate also holds
//! [`kafka::client_config`], where every Kafka client of the product is configured.

pub mod format;
pub mod rebuild;
pub mod store;
pub mod writer;

#[cfg(feature = "kafka")]
pub mod kafka;

pub use format::{
    Chunk, ChunkMeta, FormatError, JournalConverter, JournalKey, JournalRecord, PayloadBuilder,
};
pub use rebuild::{RebuildFrom, Rebuilt, rebuild};
pub use store::{EncodedRecord, JournalStore, MemoryJournal, StoredRecord, live_keys};
pub use writer::{ChunkId, JournalMetrics, JournalSettings, JournalWriter};
