//! `journal inspect`: a connector's journal topic read directly from Kafka, and what a restart
//! would make of it: the open transactions it holds (chunks, gaps, generations, sizes), and the
//! chunks a restart would stop at (damaged) or discard (orphaned), each named by partition and
//! offset.
//!
//! ```text
//!  connector configuration ─► topic (cdc.txjournal.topic), server (cdc.topic.prefix),
//!                             brokers and client properties (as the worker's KafkaClients),
//!                             converter (cdc.journal.converter)
//!  KafkaJournal::read_all_partitions ── every partition, beginning to end, read_committed
//!      └─► JournalScan::visit(partition, record) ── last value per key, as rebuild.rs keeps it
//!  JournalScan::finish ─► per transaction, rebuild's rules:
//!      generation newer than the acknowledged one (when given) ─► orphaned
//!      an older generation under a chunk number written again ──► orphaned
//!      no chunk 0 left (its tombstones were under way) ──────────► orphaned, the transaction ended
//!      otherwise live: listed; a gap, or a chunk that does not read or check ─► CDC-4002 at restart
//!  JournalReport ─► render_text (largest first) | to_json
//!      restart(): Stops (CDC-4002: exit 1) | Rebuilds | FirstStart (no offset stored)
//! ```
//!
//! It reads `read_committed`, as the connector's rebuild does (`cdc_journal::kafka`): chunks
//! written in a Kafka transaction that aborted, or is still open, were never acknowledged, so a
//! restart never sees them, and neither does this report.
//!
//! Whether a transaction is rebuilt also depends on the connector's stored position: chunks of
//! a generation newer than the position's `journal_generation` were never acknowledged
//! ([`inspect_acknowledged`] takes it; [`inspect`] reports the generations seen without judging
//! them); without a stored position the next start is a first start, which tombstones every
//! chunk (a record without a readable key stops it all the same); and a transaction whose last
//! journaled row is before the restart's mining start ended before it (that is not judged
//! here: the mining start needs the database, so a damaged payload of such a transaction is
//! reported as a stop that the restart would not make).
//!
//! # Error handling
//!
//! Nothing is retried beyond what `KafkaJournal` does (every call to the brokers waits at most
//! 30 s). A record that does not read is a finding of the report, never an error. Errors are
//! [`JournalInspectError`]: no brokers configured, or the topic could not be read (with the
//! CDC code the connector would stop with). The client properties may hold secrets
//! (`sasl.password`): `KafkaJournal` never shows a property value, and neither does this module.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use cdc_core::config::CdcConfig;
use cdc_core::{CdcCode, CdcError, ConXid, Scn};
use cdc_journal::kafka::KafkaJournal;
use cdc_journal::{ChunkMeta, JournalConverter, JournalKey, StoredRecord};
use serde_json::{Value as Json, json};

/// Why `journal inspect` could not read the journal. No message holds a client property's
/// value.
#[derive(Debug, thiserror::Error)]
pub enum JournalInspectError {
    /// Neither the configuration nor the command line names a broker.
    #[error(
        "no Kafka brokers: set cdc.kafka.bootstrap.servers (or bootstrap.servers) in the \
         connector's configuration, or pass --bootstrap"
    )]
    NoBrokers,
    /// The worker's Kafka clients could not be set up from the configuration.
    #[error("the connector's Kafka clients: {0}")]
    Clients(String),
    /// The topic could not be read: brokers unreachable, access refused, a client property
    /// rejected.
    #[error("reading journal topic {topic}: {source}")]
    Kafka {
        topic: String,
        #[source]
        source: CdcError,
    },
}

impl JournalInspectError {
    /// The code the connector gives the same failure (CDC-9001 unreachable, CDC-9003 refused,
    /// CDC-9007 a client property rejected); `None` for a configuration without brokers.
    pub fn code(&self) -> Option<CdcCode> {
        match self {
            JournalInspectError::Kafka { source, .. } => Some(source.code()),
            JournalInspectError::NoBrokers | JournalInspectError::Clients(_) => None,
        }
    }
}

/// What the connector's stored position says of the journal, as far as it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acknowledged {
    /// The stored offset's `journal_generation`: chunks of a newer one were never
    /// acknowledged, and a restart tombstones them.
    Generation(u64),
    /// The connector stores no offset: its next start is a first start, which tombstones
    /// every chunk and rebuilds none.
    NoOffset,
    /// The connector was not asked or did not answer: generations are listed, not judged.
    Unknown,
}

impl Acknowledged {
    fn generation(self) -> Option<u64> {
        match self {
            Acknowledged::Generation(generation) => Some(generation),
            Acknowledged::NoOffset | Acknowledged::Unknown => None,
        }
    }
}

/// What a restart would make of the journal, under rebuild.rs's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    /// It rebuilds every open transaction listed (or there is none).
    Rebuilds,
    /// It stops with CDC-4002 at a transaction with a gap or a damaged chunk, or at a record
    /// without a readable key.
    Stops,
    /// No offset is stored: the next start is a first start, which tombstones every chunk.
    FirstStart,
}

impl Restart {
    pub fn as_str(self) -> &'static str {
        match self {
            Restart::Rebuilds => "rebuilds",
            Restart::Stops => "stops",
            Restart::FirstStart => "first_start",
        }
    }

    /// The exit status of `journal inspect`: 1 when a restart would stop, else 0.
    pub fn exit_status(self) -> u8 {
        match self {
            Restart::Stops => 1,
            Restart::Rebuilds | Restart::FirstStart => 0,
        }
    }
}

/// Reads the journal topic of the connector `config` describes, from the brokers it names (or
/// `bootstrap_override`), without judging generations (see the module docs).
pub fn inspect(
    config: &CdcConfig,
    bootstrap_override: Option<&str>,
) -> Result<JournalReport, JournalInspectError> {
    inspect_acknowledged(config, bootstrap_override, Acknowledged::Unknown)
}

/// [`inspect`], with what the connector's stored position says: its `journal_generation`
/// (chunks of a newer generation were never acknowledged and are reported orphaned, as a
/// restart tombstones them), or that none is stored (a first start rebuilds nothing).
pub fn inspect_acknowledged(
    config: &CdcConfig,
    bootstrap_override: Option<&str>,
    acknowledged: Acknowledged,
) -> Result<JournalReport, JournalInspectError> {
    let (bootstrap, props) = kafka_clients(config, bootstrap_override)?;
    let topic = config.topics.txjournal.clone();
    let server = cdc_journal::JournalSettings::from_config(config).server;
    let mut scan = JournalScan::new(&server, JournalConverter::from_config(config), acknowledged);
    let kafka = |source| JournalInspectError::Kafka {
        topic: topic.clone(),
        source,
    };
    let mut journal = KafkaJournal::new(&bootstrap, &props, &topic).map_err(kafka)?;
    journal
        .read_all_partitions(&mut |partition, record| {
            scan.visit(partition, record);
            Ok(())
        })
        .map_err(kafka)?;
    Ok(scan.finish(&topic))
}

/// The brokers and client properties the connector's worker uses
/// (`cdc_connect_bridge::kafka::KafkaClients::from_config`), the brokers replaced by
/// `bootstrap_override` when given.
fn kafka_clients(
    config: &CdcConfig,
    bootstrap_override: Option<&str>,
) -> Result<(String, Vec<(String, String)>), JournalInspectError> {
    use cdc_connect_bridge::kafka::{KafkaClients, KafkaFailure};
    let clients = match bootstrap_override.map(str::trim).filter(|b| !b.is_empty()) {
        Some(bootstrap) => {
            let mut config = config.clone();
            config.kafka.bootstrap_servers = vec![bootstrap.to_owned()];
            KafkaClients::from_config(&config)
        }
        None => KafkaClients::from_config(config),
    };
    match clients {
        Ok(clients) => Ok((clients.bootstrap.clone(), clients.props().to_vec())),
        Err(KafkaFailure::NoBrokers) => Err(JournalInspectError::NoBrokers),
        // its messages name properties, never their values
        Err(other) => Err(JournalInspectError::Clients(other.to_string())),
    }
}

// ---------------------------------------------------------------------------------------------
// The report

/// What `journal inspect` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalReport {
    pub topic: String,
    /// The connector's `server` (`cdc.topic.prefix`): the records of others are skipped.
    pub server: String,
    /// What the stored position says, as far as it is known.
    pub acknowledged: Acknowledged,
    pub totals: JournalTotals,
    /// The open transactions a restart would rebuild, largest first.
    pub transactions: Vec<JournalTransaction>,
    /// The damaged and orphaned chunks, by partition and offset.
    pub findings: Vec<ChunkFinding>,
}

/// Counts over the whole topic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalTotals {
    /// Partitions that held records.
    pub partitions: u32,
    /// Every record read, tombstones and other connectors' records included.
    pub records_read: u64,
    pub tombstones_read: u64,
    /// Records whose key names another `server`: counted and skipped.
    pub other_connectors: u64,
    pub live_transactions: u64,
    /// Transactions whose chunks were tombstoned (their end acknowledged), and that hold no
    /// live transaction now.
    pub ended_transactions: u64,
    /// The live transactions' chunks and the bytes of their values as stored in the topic.
    pub live_chunks: u64,
    pub bytes: u64,
    pub damaged: u64,
    pub orphaned: u64,
}

/// One open transaction in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalTransaction {
    pub tx: ConXid,
    /// Its live chunks by number (of one number written twice, the newer generation).
    pub chunks: Vec<ChunkSeen>,
    /// Chunk numbers missing between 0 and its highest: a restart stops with CDC-4002.
    pub gaps: Vec<u32>,
    /// Generations of its live chunks, ascending.
    pub generations: Vec<u64>,
    /// Its chunks' values as stored, and the changes and undo rows they say they hold.
    pub bytes: u64,
    pub events: u64,
    pub undos: u64,
    /// Its first change (or its first chunk's first row), its last journaled row, its START.
    pub first_scn: Option<Scn>,
    pub last_scn: Option<Scn>,
    pub start_scn: Option<Scn>,
    pub username: Option<String>,
    /// Its chunks that do not read or do not check: a restart stops with CDC-4002.
    pub damaged_chunks: u32,
    /// Tombstones read for its keys (a chunk of it ended, then written again).
    pub tombstones: u32,
}

impl JournalTransaction {
    /// Whether a restart that rebuilds it stops with CDC-4002 (a gap or a damaged chunk).
    pub fn stops_restart(&self) -> bool {
        !self.gaps.is_empty() || self.damaged_chunks > 0
    }
}

/// A live chunk of a listed transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkSeen {
    pub number: u32,
    pub generation: u64,
    pub partition: i32,
    pub offset: i64,
    /// Its value's bytes as stored.
    pub bytes: u64,
    /// What it says it holds; `None` when it does not read.
    pub events: Option<u64>,
    pub undos: Option<u64>,
    pub damaged: bool,
}

/// Damaged: it does not read or does not check (a restart that needs it stops with CDC-4002).
/// Orphaned: a restart discards it as belonging to no live transaction (it tombstones it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FindingKind {
    Damaged,
    Orphaned,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Damaged => "damaged",
            FindingKind::Orphaned => "orphaned",
        }
    }
}

/// A damaged or orphaned record of the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkFinding {
    pub partition: i32,
    pub offset: i64,
    pub kind: FindingKind,
    /// Its key, when it reads.
    pub key: Option<JournalKey>,
    pub reason: String,
    /// Whether a restart stops at it (CDC-4002) rather than discard it.
    pub stops_restart: bool,
}

impl JournalReport {
    /// What a restart would make of the journal: a record without a readable key stops every
    /// start; without a stored offset nothing else is read; otherwise a listed transaction
    /// with a gap or a damaged chunk stops it.
    pub fn restart(&self) -> Restart {
        if self
            .findings
            .iter()
            .any(|f| f.stops_restart && f.key.is_none())
        {
            return Restart::Stops;
        }
        if self.acknowledged == Acknowledged::NoOffset {
            return Restart::FirstStart;
        }
        if self.transactions.iter().any(|tx| self.stops_at(tx))
            || self.findings.iter().any(|f| f.stops_restart)
        {
            Restart::Stops
        } else {
            Restart::Rebuilds
        }
    }

    /// Whether a restart stops at `tx`: a first start tombstones it unread.
    fn stops_at(&self, tx: &JournalTransaction) -> bool {
        tx.stops_restart() && self.acknowledged != Acknowledged::NoOffset
    }

    /// The line that says what a restart would do; a stop with its code, action and runbook.
    fn restart_line(&self) -> String {
        match self.restart() {
            Restart::Rebuilds => format!(
                "restart: rebuilds {} open transaction(s) from the journal",
                self.transactions.len()
            ),
            Restart::FirstStart => "restart: no offset is stored, so the next start is a first \
                                    start: it tombstones every chunk and rebuilds none"
                .to_owned(),
            Restart::Stops => {
                let unjudged = match self.acknowledged {
                    Acknowledged::Unknown => {
                        " (generations not judged: a chunk of a newer one would be tombstoned)"
                    }
                    Acknowledged::Generation(_) | Acknowledged::NoOffset => "",
                };
                let stop = CdcError::new(
                    CdcCode::JournalCorruption,
                    format!(
                        "a restart stops here: the journal misses a chunk of an open \
                         transaction, or holds one or a key that does not read{unjudged}"
                    ),
                );
                format!("restart: {stop}")
            }
        }
    }
}

impl JournalReport {
    /// The report for a person: the totals, the transactions largest first, the findings.
    pub fn render_text(&self) -> String {
        let t = &self.totals;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "journal topic {} (server {}), read_committed: {} records in {} partitions \
             ({} tombstones, {} of other connectors)",
            self.topic,
            self.server,
            t.records_read,
            t.partitions,
            t.tombstones_read,
            t.other_connectors
        );
        let _ = writeln!(
            out,
            "{} open transactions in {} chunks, {}; {} ended; {} damaged, {} orphaned",
            t.live_transactions,
            t.live_chunks,
            size(t.bytes),
            t.ended_transactions,
            t.damaged,
            t.orphaned
        );
        match self.acknowledged {
            Acknowledged::Generation(generation) => {
                let _ = writeln!(out, "acknowledged generation: {generation}");
            }
            Acknowledged::NoOffset => {
                let _ = writeln!(out, "acknowledged generation: none (no offset is stored)");
            }
            Acknowledged::Unknown => {
                let _ = writeln!(
                    out,
                    "acknowledged generation: not given (newer generations are not judged)"
                );
            }
        }
        if !self.transactions.is_empty() {
            out.push('\n');
            let header = [
                "TRANSACTION",
                "CHUNKS",
                "GAPS",
                "GENERATIONS",
                "EVENTS",
                "UNDOS",
                "BYTES",
                "FIRST SCN",
                "LAST SCN",
                "USER",
            ];
            let rows: Vec<[String; 10]> = self.transactions.iter().map(row).collect();
            let mut widths = header.map(str::len);
            for cells in &rows {
                for (width, cell) in widths.iter_mut().zip(cells) {
                    *width = (*width).max(cell.chars().count());
                }
            }
            push_row(&mut out, &header.map(str::to_owned), &widths);
            for cells in &rows {
                push_row(&mut out, cells, &widths);
            }
            let stopping: Vec<String> = self
                .transactions
                .iter()
                .filter(|tx| self.stops_at(tx))
                .map(|tx| tx.tx.to_string())
                .collect();
            if !stopping.is_empty() {
                let _ = writeln!(
                    out,
                    "a restart stops with CDC-4002 at: {} (a gap or a damaged chunk)",
                    stopping.join(", ")
                );
            }
        }
        if !self.findings.is_empty() {
            out.push_str("\ndamaged or orphaned records:\n");
            for finding in &self.findings {
                let what = finding
                    .key
                    .as_ref()
                    .map_or_else(|| "the record".to_owned(), ToString::to_string);
                let then = if finding.stops_restart {
                    "a restart stops with CDC-4002"
                } else {
                    "a restart tombstones it"
                };
                let _ = writeln!(
                    out,
                    "  partition {} offset {} ({}): {what}: {} ({then})",
                    finding.partition,
                    finding.offset,
                    finding.kind.as_str(),
                    finding.reason
                );
            }
        }
        out.push('\n');
        out.push_str(&self.restart_line());
        out.push('\n');
        out
    }

    /// The report for scripts.
    pub fn to_json(&self) -> Json {
        let t = &self.totals;
        json!({
            "topic": self.topic,
            "server": self.server,
            "isolation": "read_committed",
            "acknowledged_generation": self.acknowledged.generation(),
            "offset_stored": match self.acknowledged {
                Acknowledged::Generation(_) => Some(true),
                Acknowledged::NoOffset => Some(false),
                Acknowledged::Unknown => None,
            },
            "restart": {
                "status": self.restart().as_str(),
                "code": (self.restart() == Restart::Stops).then(|| CdcCode::JournalCorruption.id()),
            },
            "totals": {
                "partitions": t.partitions,
                "records_read": t.records_read,
                "tombstones_read": t.tombstones_read,
                "other_connectors": t.other_connectors,
                "live_transactions": t.live_transactions,
                "ended_transactions": t.ended_transactions,
                "live_chunks": t.live_chunks,
                "bytes": t.bytes,
                "damaged": t.damaged,
                "orphaned": t.orphaned,
            },
            "transactions": self.transactions.iter().map(|tx| json!({
                "server": self.server,
                "con_id": tx.tx.con.0,
                "xid": tx.tx.xid.to_string(),
                "chunk_count": tx.chunks.len(),
                "chunks": tx.chunks.iter().map(|c| json!({
                    "chunk": c.number,
                    "generation": c.generation,
                    "partition": c.partition,
                    "offset": c.offset,
                    "bytes": c.bytes,
                    "events": c.events,
                    "undos": c.undos,
                    "damaged": c.damaged,
                })).collect::<Vec<_>>(),
                "gaps": tx.gaps,
                "generations": tx.generations,
                "bytes": tx.bytes,
                "events": tx.events,
                "undos": tx.undos,
                "first_scn": tx.first_scn.map(Scn::get),
                "last_scn": tx.last_scn.map(Scn::get),
                "start_scn": tx.start_scn.map(Scn::get),
                "username": tx.username,
                "damaged_chunks": tx.damaged_chunks,
                "tombstones": tx.tombstones,
                "stops_restart": self.stops_at(tx),
            })).collect::<Vec<_>>(),
            "findings": self.findings.iter().map(|f| json!({
                "partition": f.partition,
                "offset": f.offset,
                "kind": f.kind.as_str(),
                "con_id": f.key.as_ref().map(|k| k.tx.con.0),
                "xid": f.key.as_ref().map(|k| k.tx.xid.to_string()),
                "chunk": f.key.as_ref().map(|k| k.chunk),
                "generation": f.key.as_ref().map(|k| k.generation),
                "reason": f.reason,
                "stops_restart": f.stops_restart,
            })).collect::<Vec<_>>(),
        })
    }
}

fn row(tx: &JournalTransaction) -> [String; 10] {
    let list = |items: &[String]| {
        if items.is_empty() {
            "-".to_owned()
        } else {
            items.join(",")
        }
    };
    let scn = |scn: Option<Scn>| scn.map_or_else(|| "-".to_owned(), |s| s.get().to_string());
    [
        tx.tx.to_string(),
        tx.chunks.len().to_string(),
        list(&tx.gaps.iter().map(u32::to_string).collect::<Vec<_>>()),
        list(
            &tx.generations
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>(),
        ),
        tx.events.to_string(),
        tx.undos.to_string(),
        size(tx.bytes),
        scn(tx.first_scn),
        scn(tx.last_scn),
        tx.username.clone().unwrap_or_else(|| "-".to_owned()),
    ]
}

fn push_row(out: &mut String, cells: &[String; 10], widths: &[usize; 10]) {
    let mut line = String::new();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push_str("  ");
        }
        let _ = write!(line, "{cell:<width$}");
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// Bytes for a person: exact below 1 KiB, else KiB, MiB or GiB with one decimal.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

// ---------------------------------------------------------------------------------------------
// The scan: rebuild.rs's rules over the records, reporting instead of stopping

/// Where a record was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct At {
    partition: i32,
    offset: i64,
}

/// A live chunk as last written.
#[derive(Debug, Clone)]
struct Live {
    at: At,
    bytes: u64,
    /// What it says, or why it does not read or check.
    meta: Result<ChunkMeta, String>,
    /// Set when the metadata reads but the payload does not check.
    damaged: Option<String>,
}

/// `journal inspect`'s reading of the topic: fed every record in the order the connector's
/// rebuild reads them, then [`JournalScan::finish`]ed.
#[derive(Debug)]
pub struct JournalScan {
    server: String,
    converter: JournalConverter,
    acknowledged: Acknowledged,
    partitions: BTreeSet<i32>,
    totals: JournalTotals,
    live: BTreeMap<JournalKey, Live>,
    /// Keys that do not read, with their last record if it holds a value (rebuild.rs: a
    /// problem only if still live at the end).
    unreadable_keys: BTreeMap<Vec<u8>, (At, String)>,
    /// Records without a key (a rebuild stops at the first).
    keyless: Vec<At>,
    /// Tombstones read per transaction.
    tombstones: BTreeMap<ConXid, u32>,
}

impl JournalScan {
    pub fn new(
        server: &str,
        converter: JournalConverter,
        acknowledged: Acknowledged,
    ) -> JournalScan {
        JournalScan {
            server: server.to_owned(),
            converter,
            acknowledged,
            partitions: BTreeSet::new(),
            totals: JournalTotals::default(),
            live: BTreeMap::new(),
            unreadable_keys: BTreeMap::new(),
            keyless: Vec::new(),
            tombstones: BTreeMap::new(),
        }
    }

    /// One record of `partition`, as read.
    pub fn visit(&mut self, partition: i32, record: StoredRecord<'_>) {
        let at = At {
            partition,
            offset: record.offset,
        };
        self.partitions.insert(partition);
        self.totals.records_read += 1;
        if record.value.is_none() {
            self.totals.tombstones_read += 1;
        }
        let Some(key_bytes) = record.key else {
            self.keyless.push(at);
            return;
        };
        let key = match self.converter.key(key_bytes) {
            Ok(key) => key,
            Err(e) => {
                match record.value {
                    Some(_) => self
                        .unreadable_keys
                        .insert(key_bytes.to_vec(), (at, e.to_string())),
                    None => self.unreadable_keys.remove(key_bytes),
                };
                return;
            }
        };
        if key.server != self.server {
            self.totals.other_connectors += 1;
            return;
        }
        let Some(value) = record.value else {
            *self.tombstones.entry(key.tx).or_default() += 1;
            self.live.remove(&key);
            return;
        };
        let bytes = value.len() as u64;
        let live = match self.converter.chunk(value) {
            Ok(chunk) => Live {
                at,
                bytes,
                damaged: chunk
                    .check()
                    .err()
                    .map(|e| format!("its payload is damaged: {e}")),
                meta: Ok(chunk.meta),
            },
            Err(e) => Live {
                at,
                bytes,
                meta: Err(format!("its value cannot be read: {e}")),
                damaged: None,
            },
        };
        self.live.insert(key, live);
    }

    /// The report, the records all visited.
    pub fn finish(self, topic: &str) -> JournalReport {
        let JournalScan {
            server,
            acknowledged,
            partitions,
            mut totals,
            live,
            unreadable_keys,
            keyless,
            tombstones,
            ..
        } = self;
        totals.partitions = u32::try_from(partitions.len()).unwrap_or(u32::MAX);
        let acknowledged_generation = acknowledged.generation();
        let mut findings = Vec::new();
        for at in keyless {
            findings.push(damaged_finding(at, None, "it has no key".to_owned(), true));
        }
        for (at, error) in unreadable_keys.into_values() {
            findings.push(damaged_finding(
                at,
                None,
                format!("its key cannot be read: {error}"),
                true,
            ));
        }
        let mut by_tx: BTreeMap<ConXid, Vec<(JournalKey, Live)>> = BTreeMap::new();
        for (key, chunk) in live {
            by_tx.entry(key.tx).or_default().push((key, chunk));
        }
        let mut transactions = Vec::new();
        for (tx, chunks) in by_tx {
            let orphan = |findings: &mut Vec<ChunkFinding>, key: JournalKey, chunk: Live, why| {
                findings.push(orphaned_finding(key, chunk, why));
            };
            // of the chunks a restart may keep, by number; of two under one number, the newer
            let mut numbered: BTreeMap<u32, (JournalKey, Live)> = BTreeMap::new();
            for (key, chunk) in chunks {
                if let Some(acknowledged) = acknowledged_generation
                    && key.generation > acknowledged
                {
                    let why = format!(
                        "its generation {} is newer than the acknowledged generation \
                         {acknowledged}: a task start that never committed an offset wrote it",
                        key.generation
                    );
                    orphan(&mut findings, key, chunk, why);
                    continue;
                }
                let replaced = match numbered.remove(&key.chunk) {
                    Some((held, held_chunk)) if held.generation > key.generation => {
                        let why = superseded(held.generation);
                        numbered.insert(held.chunk, (held, held_chunk));
                        Some((key, chunk, why))
                    }
                    Some((held, held_chunk)) => {
                        let why = superseded(key.generation);
                        numbered.insert(key.chunk, (key, chunk));
                        Some((held, held_chunk, why))
                    }
                    None => {
                        numbered.insert(key.chunk, (key, chunk));
                        None
                    }
                };
                if let Some((key, chunk, why)) = replaced {
                    orphan(&mut findings, key, chunk, why);
                }
            }
            let Some(lowest) = numbered.keys().next().copied() else {
                continue;
            };
            if lowest > 0 {
                totals.ended_transactions += 1;
                let tombstoned = tombstones.get(&tx).is_some_and(|n| *n > 0);
                for (_, (key, chunk)) in numbered {
                    let why = if tombstoned {
                        format!(
                            "its transaction has no chunk 0 (chunks below {lowest} were \
                             tombstoned): it ended, and its remaining tombstones were not \
                             written"
                        )
                    } else {
                        format!(
                            "its transaction has no chunk 0 (the lowest is {lowest}): a restart \
                             treats it as ended"
                        )
                    };
                    orphan(&mut findings, key, chunk, why);
                }
                continue;
            }
            transactions.push(live_transaction(
                tx,
                numbered,
                tombstones.get(&tx).copied().unwrap_or(0),
                &mut findings,
            ));
        }
        // transactions that were tombstoned and hold no live chunk at all
        let listed: BTreeSet<ConXid> = transactions.iter().map(|t| t.tx).collect();
        let with_chunks: BTreeSet<ConXid> = findings
            .iter()
            .filter_map(|f| f.key.as_ref().map(|k| k.tx))
            .chain(listed.iter().copied())
            .collect();
        totals.ended_transactions += tombstones
            .keys()
            .filter(|tx| !with_chunks.contains(tx))
            .count() as u64;
        transactions.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.tx.cmp(&b.tx)));
        if acknowledged == Acknowledged::NoOffset {
            // a first start tombstones every chunk without reading it: only a record without
            // a readable key stops it
            for finding in findings.iter_mut().filter(|f| f.key.is_some()) {
                finding.stops_restart = false;
            }
        }
        findings.sort_by_key(|f| (f.partition, f.offset));
        totals.live_transactions = transactions.len() as u64;
        totals.live_chunks = transactions.iter().map(|t| t.chunks.len() as u64).sum();
        totals.bytes = transactions.iter().map(|t| t.bytes).sum();
        totals.damaged = findings
            .iter()
            .filter(|f| f.kind == FindingKind::Damaged)
            .count() as u64;
        totals.orphaned = findings
            .iter()
            .filter(|f| f.kind == FindingKind::Orphaned)
            .count() as u64;
        JournalReport {
            topic: topic.to_owned(),
            server,
            acknowledged,
            totals,
            transactions,
            findings,
        }
    }
}

fn superseded(by: u64) -> String {
    format!(
        "its chunk number was written again by generation {by} after a restart, which a restart \
         keeps instead"
    )
}

fn damaged_finding(
    at: At,
    key: Option<JournalKey>,
    reason: String,
    stops_restart: bool,
) -> ChunkFinding {
    ChunkFinding {
        partition: at.partition,
        offset: at.offset,
        kind: FindingKind::Damaged,
        key,
        reason,
        stops_restart,
    }
}

/// A chunk a restart discards; should it not read either, that is said too (a restart never
/// reads it, so it does not stop there).
fn orphaned_finding(key: JournalKey, chunk: Live, why: String) -> ChunkFinding {
    let damage = match (&chunk.meta, &chunk.damaged) {
        (Err(e), _) | (Ok(_), Some(e)) => format!("; it is damaged too: {e}"),
        (Ok(_), None) => String::new(),
    };
    ChunkFinding {
        partition: chunk.at.partition,
        offset: chunk.at.offset,
        kind: FindingKind::Orphaned,
        key: Some(key),
        reason: format!("{why}{damage}"),
        stops_restart: false,
    }
}

/// A transaction whose chunk 0 is live: what it holds, and its damaged chunks as findings.
fn live_transaction(
    tx: ConXid,
    numbered: BTreeMap<u32, (JournalKey, Live)>,
    tombstones: u32,
    findings: &mut Vec<ChunkFinding>,
) -> JournalTransaction {
    let highest = numbered.keys().next_back().copied().unwrap_or(0);
    let gaps: Vec<u32> = (0..highest).filter(|n| !numbered.contains_key(n)).collect();
    let mut transaction = JournalTransaction {
        tx,
        chunks: Vec::with_capacity(numbered.len()),
        gaps,
        generations: Vec::new(),
        bytes: 0,
        events: 0,
        undos: 0,
        first_scn: None,
        last_scn: None,
        start_scn: None,
        username: None,
        damaged_chunks: 0,
        tombstones,
    };
    let mut generations = BTreeSet::new();
    for (number, (key, chunk)) in numbered {
        generations.insert(key.generation);
        transaction.bytes += chunk.bytes;
        let why = match (&chunk.meta, &chunk.damaged) {
            (Err(e), _) | (Ok(_), Some(e)) => Some(e.clone()),
            (Ok(_), None) => None,
        };
        if let Ok(meta) = &chunk.meta {
            transaction.events += meta.events;
            transaction.undos += meta.undos;
            if number == 0 {
                transaction.first_scn = Some(meta.first_captured.map_or(meta.first.scn, |m| m.scn));
                transaction.start_scn = meta.start_scn;
                transaction.username.clone_from(&meta.username);
            }
            transaction.last_scn = transaction.last_scn.max(Some(meta.last.scn));
        }
        transaction.chunks.push(ChunkSeen {
            number,
            generation: key.generation,
            partition: chunk.at.partition,
            offset: chunk.at.offset,
            bytes: chunk.bytes,
            events: chunk.meta.as_ref().ok().map(|m| m.events),
            undos: chunk.meta.as_ref().ok().map(|m| m.undos),
            damaged: why.is_some(),
        });
        if let Some(why) = why {
            transaction.damaged_chunks += 1;
            findings.push(damaged_finding(chunk.at, Some(key), why, true));
        }
    }
    transaction.generations = generations.into_iter().collect();
    transaction
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::{ConId, Xid};

    fn tx(n: u16) -> ConXid {
        ConXid::new(ConId(3), Xid::new(n, 7, 1000 + u32::from(n)))
    }

    fn transaction(n: u16, chunks: u32, bytes: u64) -> JournalTransaction {
        JournalTransaction {
            tx: tx(n),
            chunks: (0..chunks)
                .map(|number| ChunkSeen {
                    number,
                    generation: 1,
                    partition: 0,
                    offset: i64::from(number),
                    bytes: bytes / u64::from(chunks),
                    events: Some(10),
                    undos: Some(0),
                    damaged: false,
                })
                .collect(),
            gaps: Vec::new(),
            generations: vec![1],
            bytes,
            events: 10 * u64::from(chunks),
            undos: 0,
            first_scn: Some(Scn(5_000_000)),
            last_scn: Some(Scn(5_000_100)),
            start_scn: Some(Scn(4_999_999)),
            username: Some("APP".to_owned()),
            damaged_chunks: 0,
            tombstones: 0,
        }
    }

    fn report() -> JournalReport {
        let mut gapped = transaction(2, 2, 2048);
        gapped.gaps = vec![1];
        gapped.generations = vec![1, 2];
        JournalReport {
            topic: "ORCL.cdc.txjournal".to_owned(),
            server: "ORCL".to_owned(),
            acknowledged: Acknowledged::Generation(2),
            totals: JournalTotals {
                partitions: 1,
                records_read: 9,
                tombstones_read: 2,
                other_connectors: 1,
                live_transactions: 2,
                ended_transactions: 1,
                live_chunks: 5,
                bytes: 3 << 20,
                damaged: 1,
                orphaned: 0,
            },
            transactions: vec![transaction(1, 3, 3 << 20), gapped],
            findings: vec![ChunkFinding {
                partition: 0,
                offset: 7,
                kind: FindingKind::Damaged,
                key: None,
                reason: "its key cannot be read: it is not JSON".to_owned(),
                stops_restart: true,
            }],
        }
    }

    #[test]
    fn the_text_is_a_table_largest_first_with_the_findings_named() {
        let text = report().render_text();
        let expected = "\
journal topic ORCL.cdc.txjournal (server ORCL), read_committed: 9 records in 1 partitions (2 tombstones, 1 of other connectors)
2 open transactions in 5 chunks, 3.0 MiB; 1 ended; 1 damaged, 0 orphaned
acknowledged generation: 2

TRANSACTION  CHUNKS  GAPS  GENERATIONS  EVENTS  UNDOS  BYTES    FIRST SCN  LAST SCN  USER
3:1.7.1001   3       -     1            30      0      3.0 MiB  5000000    5000100   APP
3:2.7.1002   2       1     1,2          20      0      2.0 KiB  5000000    5000100   APP
a restart stops with CDC-4002 at: 3:2.7.1002 (a gap or a damaged chunk)

damaged or orphaned records:
  partition 0 offset 7 (damaged): the record: its key cannot be read: it is not JSON (a restart stops with CDC-4002)

restart: [CDC-4002] a restart stops here: the journal misses a chunk of an open transaction, or holds one or a key that does not read. Operator action: {action}. Runbook: {runbook}
";
        let code = CdcCode::JournalCorruption;
        let expected = expected
            .replace("{action}", code.operator_action())
            .replace("{runbook}", code.runbook());
        assert_eq!(text, expected);
    }

    #[test]
    fn a_restart_stops_at_a_gap_a_damaged_chunk_or_an_unreadable_key() {
        let clean = || JournalReport {
            transactions: vec![transaction(1, 3, 3 << 20)],
            findings: vec![],
            ..report()
        };
        assert_eq!(clean().restart(), Restart::Rebuilds);
        assert_eq!(clean().restart().exit_status(), 0);
        assert!(
            clean()
                .render_text()
                .ends_with("\nrestart: rebuilds 1 open transaction(s) from the journal\n")
        );
        assert_eq!(
            clean().to_json()["restart"],
            json!({"status": "rebuilds", "code": null})
        );

        let mut gapped = clean();
        gapped.transactions[0].gaps = vec![1];
        assert_eq!(gapped.restart(), Restart::Stops);
        assert_eq!(gapped.restart().exit_status(), 1);
        assert_eq!(
            gapped.to_json()["restart"],
            json!({"status": "stops", "code": "CDC-4002"})
        );
        // a first start tombstones the transaction unread
        gapped.acknowledged = Acknowledged::NoOffset;
        assert_eq!(gapped.restart(), Restart::FirstStart);
        assert_eq!(gapped.to_json()["transactions"][0]["stops_restart"], false);
        assert_eq!(gapped.to_json()["offset_stored"], false);
        assert!(!gapped.render_text().contains("stops with CDC-4002 at"));

        // a key that does not read stops a first start too
        let mut keyless = report();
        keyless.acknowledged = Acknowledged::NoOffset;
        assert_eq!(keyless.restart(), Restart::Stops);
        keyless.findings.clear();
        assert_eq!(keyless.restart(), Restart::FirstStart);
    }

    #[test]
    fn the_json_names_each_transaction_and_finding() {
        let json = report().to_json();
        assert_eq!(json["transactions"][0]["xid"], "1.7.1001");
        assert_eq!(json["transactions"][0]["chunk_count"], 3);
        assert_eq!(json["transactions"][1]["gaps"], json!([1]));
        assert_eq!(json["transactions"][1]["stops_restart"], true);
        assert_eq!(json["findings"][0]["offset"], 7);
        assert_eq!(json["findings"][0]["kind"], "damaged");
        assert_eq!(json["totals"]["records_read"], 9);
    }

    /// A chunk of `tx` with `events` changes, as stored (no envelope).
    fn stored_chunk(tx: ConXid, number: u32, generation: u64, events: u64) -> (Vec<u8>, Vec<u8>) {
        use cdc_core::change::{ChangeOp, RowChange};
        use cdc_core::{ChangeEvent, RedoAddr, RsId, TableId};
        let mut payload = cdc_journal::PayloadBuilder::new();
        let mut marks = Vec::new();
        for row in 0..events {
            let n = u64::from(number) * 100 + row;
            let event = ChangeEvent {
                scn: Scn(1000 + n),
                addr: RedoAddr::new(RsId::new(9, 1 + n as u32, 16), n + 1).expect("an address"),
                change: RowChange {
                    op: ChangeOp::Delete,
                    table: TableId::new("APP", "T").into(),
                    schema_version: 1,
                    before: None,
                    after: None,
                    row_id: None,
                },
            };
            marks.push(payload.push_change(&event));
        }
        let record = cdc_journal::JournalRecord {
            key: JournalKey {
                server: "ORCL".to_owned(),
                tx,
                chunk: number,
                generation,
            },
            chunk: Some(std::sync::Arc::new(cdc_journal::Chunk {
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
            })),
        };
        let encoded = cdc_journal::EncodedRecord::of(&record, false);
        (encoded.key, encoded.value.expect("a value"))
    }

    #[test]
    fn the_scan_lists_the_largest_first_and_names_gaps_and_superseded_chunks() {
        let mut scan = JournalScan::new("ORCL", JournalConverter::Tolerant, Acknowledged::Unknown);
        let records = [
            stored_chunk(tx(1), 0, 1, 1),
            stored_chunk(tx(2), 0, 1, 5),
            stored_chunk(tx(2), 1, 1, 1),
            stored_chunk(tx(2), 1, 2, 2),
            stored_chunk(tx(2), 3, 2, 1),
        ];
        for (offset, (key, value)) in records.iter().enumerate() {
            scan.visit(
                0,
                StoredRecord {
                    offset: offset as i64,
                    key: Some(key),
                    value: Some(value),
                },
            );
        }
        let report = scan.finish("t");
        let order: Vec<ConXid> = report.transactions.iter().map(|t| t.tx).collect();
        assert_eq!(order, [tx(2), tx(1)]);
        let big = &report.transactions[0];
        assert_eq!(big.gaps, [2]);
        assert!(big.stops_restart());
        assert_eq!(big.events, 5 + 2 + 1);
        assert_eq!(big.generations, [1, 2]);
        // chunk 1 of generation 1 was written again by generation 2
        assert_eq!(report.findings.len(), 1);
        assert_eq!(report.findings[0].offset, 2);
        assert_eq!(report.findings[0].kind, FindingKind::Orphaned);
    }

    #[test]
    fn sizes_read_for_a_person() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(3 << 20), "3.0 MiB");
        assert_eq!(size(5 << 30), "5.0 GiB");
    }
}
