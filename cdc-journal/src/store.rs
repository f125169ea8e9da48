//! Where the journal lives: the [`JournalStore`] trait, and [`MemoryJournal`], the in-process
//! store of the engine's tests (the Kafka topic is `crate::kafka::KafkaJournal`). Both pass the
//! same contract (`tests/contract.rs`).
//!
//! The connector writes its chunks through its record stream, never through a store, so that
//! they share the Kafka transactions and acknowledgements of the data; a store is read at task
//! start. [`JournalStore::write`] is for tools and tests, which write records as the stream
//! would have.

use std::fmt;
use std::sync::Arc;

use cdc_core::CdcError;
use parking_lot::Mutex;

use crate::format::{JournalConverter, JournalKey, JournalRecord, chunk_json, key_json};

/// One record of the journal topic: its offset, key and value as stored (no value: a
/// tombstone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredRecord<'a> {
    pub offset: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
}

/// A record as bytes, for [`JournalStore::write`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedRecord {
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

impl EncodedRecord {
    /// `record` in the JSON form a worker writes with `envelope` (its converters'
    /// `schemas.enable`).
    pub fn of(record: &JournalRecord, envelope: bool) -> EncodedRecord {
        EncodedRecord {
            key: key_json(&record.key, envelope),
            value: record.chunk.as_ref().map(|c| chunk_json(c, envelope)),
        }
    }
}

/// The journal topic.
pub trait JournalStore: fmt::Debug + Send {
    /// Visits every record from the beginning of the topic to its end as it was when the call
    /// began, in offset order, only records of committed Kafka transactions (as a
    /// `read_committed` consumer sees them). The first error `visit` returns ends the read.
    fn read_all(
        &mut self,
        visit: &mut dyn FnMut(StoredRecord<'_>) -> Result<(), CdcError>,
    ) -> Result<(), CdcError>;

    /// Appends records and returns once they are stored.
    fn write(&mut self, records: &[EncodedRecord]) -> Result<(), CdcError>;
}

/// The live records of a store after compaction: the last value of every key that has one.
pub fn live_keys(
    store: &mut dyn JournalStore,
    converter: JournalConverter,
) -> Result<Vec<JournalKey>, CdcError> {
    let mut live: std::collections::BTreeMap<Vec<u8>, bool> = std::collections::BTreeMap::new();
    store.read_all(&mut |record| {
        if let Some(key) = record.key {
            live.insert(key.to_vec(), record.value.is_some());
        }
        Ok(())
    })?;
    let mut keys = Vec::new();
    for (key, alive) in live {
        if alive {
            keys.push(converter.key(&key).map_err(|e| {
                CdcError::new(
                    cdc_core::CdcCode::JournalCorruption,
                    format!("a key of the journal cannot be read: {e}"),
                )
            })?);
        }
    }
    keys.sort();
    Ok(keys)
}

/// The in-process store: records in a list shared by every clone, so that a test can keep
/// a handle while an engine reads its own.
#[derive(Debug, Clone, Default)]
pub struct MemoryJournal {
    records: Arc<Mutex<Vec<EncodedRecord>>>,
}

impl MemoryJournal {
    pub fn new() -> MemoryJournal {
        MemoryJournal::default()
    }

    /// How many records it holds, tombstones included.
    pub fn len(&self) -> usize {
        self.records.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.lock().is_empty()
    }

    /// Changes the stored bytes of record `index` (for tests of damaged journals).
    pub fn edit(&self, index: usize, edit: impl FnOnce(&mut EncodedRecord)) {
        if let Some(record) = self.records.lock().get_mut(index) {
            edit(record);
        }
    }

    /// Removes record `index` (for tests of a chunk gone missing).
    pub fn remove(&self, index: usize) -> Option<EncodedRecord> {
        let mut records = self.records.lock();
        (index < records.len()).then(|| records.remove(index))
    }

    /// A copy of every record, in order.
    pub fn records(&self) -> Vec<EncodedRecord> {
        self.records.lock().clone()
    }
}

impl JournalStore for MemoryJournal {
    fn read_all(
        &mut self,
        visit: &mut dyn FnMut(StoredRecord<'_>) -> Result<(), CdcError>,
    ) -> Result<(), CdcError> {
        let records = self.records.lock().clone();
        for (offset, record) in records.iter().enumerate() {
            visit(StoredRecord {
                offset: offset as i64,
                key: Some(&record.key),
                value: record.value.as_deref(),
            })?;
        }
        Ok(())
    }

    fn write(&mut self, records: &[EncodedRecord]) -> Result<(), CdcError> {
        self.records.lock().extend_from_slice(records);
        Ok(())
    }
}
