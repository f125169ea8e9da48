//! The CDC error codes: one table that names every stop the operator can see.
//!
//! Each code (CDC-1001 …) has a class, the condition that raises it, what the operator does
//! about it and an anchor in `docs/runbooks.md`. Everything about a code is read from the single
//! `TABLE` below, so the message, the ops event and the runbook cannot drift apart; the test
//! `tests/runbooks_doc.rs` keeps the runbook in step with the table. Codes are never reused.
//!
//! ```text
//!   ORA code ──ora::classify──► retried here ──budget spent──┐
//!                           └─► stop now ────────────────────┴─► CdcError { CdcCode, message }
//!   engine condition (gap, corruption, …) ──────────────────────► "[CDC-2002] … Operator action:
//!                                                                   … Runbook: docs/runbooks.md#cdc-2002"
//! ```

use std::error::Error;
use std::fmt;

/// Whether the connector retries an error of a code itself or stops the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CdcClass {
    /// The connector retries on its own (the engine a database error, the worker a Kafka one);
    /// the code reaches the operator only once the retries are used up, or at once when the
    /// ORA code (CDC-1001) or Kafka error (CDC-9001) is not classified at all.
    Retried,
    /// The task stops and waits for the operator.
    Stop,
}

impl CdcClass {
    /// The word used for the class in messages and in `docs/runbooks.md`.
    pub fn as_str(self) -> &'static str {
        match self {
            CdcClass::Retried => "retried",
            CdcClass::Stop => "stop",
        }
    }
}

impl fmt::Display for CdcClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A CDC error code. The discriminant is the code's row in `TABLE`, so `ALL` and the table
/// must list the codes in the same (numeric) order; `tests::table_rows_line_up` pins that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CdcCode {
    TransientDatabase,
    MiningStepRetry,
    LogGap,
    LogPurged,
    Decode,
    Corruption,
    LobTooLarge,
    BufferExhausted,
    JournalCorruption,
    MiningStalled,
    TransactionTooOld,
    TaskThread,
    Topology,
    Privilege,
    DictionaryUnavailable,
    UnsupportedDdl,
    SchemaMismatch,
    NameCollision,
    OrphanReleaseViolation,
    OrphanTransaction,
    SnapshotTooOld,
    KafkaUnavailable,
    ProducerFenced,
    KafkaAuthorization,
    TopicUnavailable,
    RecordTooLarge,
    OffsetsStore,
    KafkaClientSetup,
}

const CODE_COUNT: usize = 28;

/// One row of [`TABLE`]: everything known about a code.
#[derive(Debug)]
struct CodeRow {
    code: CdcCode,
    number: u16,
    id: &'static str,
    name: &'static str,
    class: CdcClass,
    condition: &'static str,
    operator_action: &'static str,
    runbook_anchor: &'static str,
    runbook: &'static str,
}

/// Builds a row; the id, anchor and runbook link are spelled from the number so they cannot
/// disagree with it.
macro_rules! row {
    ($code:ident, $number:literal, $name:literal, $class:ident,
     condition: $condition:literal, action: $action:literal $(,)?) => {
        CodeRow {
            code: CdcCode::$code,
            number: $number,
            id: concat!("CDC-", $number),
            name: $name,
            class: CdcClass::$class,
            condition: $condition,
            operator_action: $action,
            runbook_anchor: concat!("cdc-", $number),
            runbook: concat!("docs/runbooks.md#cdc-", $number),
        }
    };
}

/// The one table of CDC codes, in numeric order. Operator actions carry no trailing period
/// because the message appends its own punctuation.
static TABLE: [CodeRow; CODE_COUNT] = [
    row!(TransientDatabase, 1001, "TRANSIENT_DATABASE", Retried,
        condition: "The database or the network to it was unavailable: a lost connection, a killed session, an instance starting or shutting down, a pluggable database not open yet, an I/O error, or an ORA code on the transient list (ORA-00028, ORA-00031, ORA-00604, ORA-01033, ORA-01034, ORA-01089, ORA-01090, ORA-01092, ORA-01109, ORA-03113, ORA-03114, ORA-03135, ORA-04068, ORA-12170, ORA-12514, ORA-12516, ORA-12528, ORA-12537, ORA-12541, ORA-12543, ORA-16331, ORA-17002, ORA-17008, ORA-17410, ORA-17800, ORA-25408 or one named in cdc.retry.extra.error.codes). The sessions are reopened with a backoff that starts near 1 s and doubles up to 30 s with jitter, and the failed step is mined again. The task stops once cdc.retry.max.time.ms is spent, and at once when the ORA code is not classified at all. A task start that cannot reach the database, or cannot load the Oracle client library (DPI-1047, with how to install Oracle Instant Client), stops at once with this code",
        action: "Bring the database, listener or network back, open the pluggable database, install Oracle Instant Client where the driver cannot load it (DPI-1047), or add an ORA code known to be transient to cdc.retry.extra.error.codes"),
    row!(MiningStepRetry, 1002, "MINING_STEP_RETRY", Retried,
        condition: "LogMiner failed a step because a log was switched, overwritten or not yet visible while it was read (ORA-00310, ORA-00334, ORA-01289, ORA-01291, ORA-01368). The step is discarded and mined again without reconnecting; the task stops after more than 20 such failures in a row",
        action: "Make sure the archiver keeps up and has space, and give the database larger or more online redo log groups"),
    row!(LogGap, 2001, "LOG_GAP", Stop,
        condition: "The logs listed for a redo thread do not cover the range to mine: there are none, the first starts after the start SCN, a sequence number is missing, or the last ends before the end SCN",
        action: "Point cdc.archive.destination at a destination that holds the logs, restore the missing logs, or skip forward past the gap and snapshot the captured tables"),
    row!(LogPurged, 2002, "LOG_PURGED", Stop,
        condition: "A log the next step needs is marked deleted (DELETED=YES or STATUS D or X), or is listed but cannot be opened (ORA-01284, ORA-00308, ORA-01285, ORA-16226)",
        action: "Restore the purged archived log, or skip forward past it and snapshot the captured tables"),
    row!(Decode, 3001, "DECODE", Stop,
        condition: "A row cannot be turned into a change (STATUS 2 or 3 outside the lag case, an UNSUPPORTED row, SQL_REDO that does not parse, an unknown column, an operation that does not match its statement, an unknown LOB shape), or a table cannot be captured at all (no key while cdc.key.missing=fail, a bad cdc.key.columns entry, a table missing from the dictionary, a column type the snapshot cannot read, an excluded key column). With cdc.on.decode.error=dlq a row-level failure goes to the dead letter topic instead of stopping the task",
        action: "Exclude the table or column, fix the key configuration, or set cdc.on.decode.error=dlq so that rows that cannot be decoded go to the dead letter topic"),
    row!(Corruption, 3002, "CORRUPTION", Stop,
        condition: "Data the connector relies on is damaged: a MISSING_SCN row, a spill file that fails its CRC or is cut short, an offset that is empty, has no version, has a newer version or holds a bad snapshot block, or an all-zero RS_ID on a data, DDL or unsupported row. Never sent to the dead letter topic",
        action: "Restore the redo logs, repair the spill volume, or reset the offset"),
    row!(LobTooLarge, 3003, "LOB_TOO_LARGE", Stop,
        condition: "A committed LOB value is larger than cdc.lob.max.bytes while cdc.lob.oversize.action=fail; the size is checked at commit",
        action: "Raise cdc.lob.max.bytes, set cdc.lob.oversize.action=placeholder, or set cdc.lob.mode=skip"),
    row!(BufferExhausted, 4001, "BUFFER_EXHAUSTED", Stop,
        condition: "Spilled transactions would take more than cdc.buffer.spill.max.bytes, or writing a spill file failed; the message names the ten largest open transactions",
        action: "Give the buffer more spill space or heap, end the long transactions, or set a policy with cdc.transaction.max.age.ms"),
    row!(JournalCorruption, 4002, "JOURNAL_CORRUPTION", Stop,
        condition: "At task start the transaction journal read back from its topic misses a chunk, has a key or value that cannot be read, or holds a damaged chunk",
        action: "Fix cdc.journal.converter or the compaction of the journal topic, or move the offset back so the journaled transactions are mined again"),
    row!(MiningStalled, 4003, "MINING_STALLED", Stop,
        condition: "Three step timeouts in a row while the mining window was already down to a single log",
        action: "Raise cdc.mining.query.timeout.ms or reduce the redo volume of the database"),
    row!(TransactionTooOld, 4004, "TRANSACTION_TOO_OLD", Stop,
        condition: "An open transaction is older than cdc.transaction.max.age.ms while cdc.transaction.max.age.action=fail",
        action: "Commit or roll back the transaction, raise cdc.transaction.max.age.ms, or set cdc.transaction.max.age.action=discard"),
    row!(TaskThread, 4005, "TASK_THREAD", Stop,
        condition: "A thread of the task could not be started because the process is at a limit of the operating system (threads, memory), or a thread of the task (a snapshot reader among them) panicked or ended without its result, which is a defect whose panic message is in the log",
        action: "Raise the thread or memory limits of the process and restart the task; if the log shows a panic, restart the task and report the panic with the log"),
    row!(Topology, 5001, "TOPOLOGY", Stop,
        condition: "The database is not the one the offset belongs to or not one the connector can capture: its DBID or RESETLOGS differs from the offset (at start or after a reconnect), no archive destination is valid, more than one redo thread is enabled, its role or open mode does not qualify, or cdc.mining.mode=logs while connected to a pluggable database",
        action: "Point the connector back at the right database, or reset its offset and start from scratch"),
    row!(Privilege, 5002, "PRIVILEGE", Stop,
        condition: "The capture user lacks a privilege, cannot see an object or cannot log in (ORA-01031, ORA-00942, ORA-01017, ORA-28000, ORA-01045)",
        action: "Grant the missing privilege to the capture user or unlock its account"),
    row!(DictionaryUnavailable, 6001, "DICTIONARY_UNAVAILABLE", Stop,
        condition: "Rows of a captured table came back generic (STATUS 2, \"COL n\" names) because a later DDL changed the table, no schema version the connector knows is exactly their layout, and the replay with a redo dictionary was not possible or did not give a row that fits the version valid at its SCN. Never sent to the dead letter topic",
        action: "Restore the build's logs or grant the builds and restart; otherwise skip forward past the DDL and snapshot the affected tables"),
    row!(UnsupportedDdl, 6002, "UNSUPPORTED_DDL", Stop,
        condition: "DDL on a captured table that the connector cannot classify",
        action: "If the table layout did not change, set resume_scn to the SCN of the DDL plus one and remove resume_rs_id and resume_ssn; otherwise exclude the table"),
    row!(SchemaMismatch, 6003, "SCHEMA_MISMATCH", Stop,
        condition: "At task start the stored schema version of a table differs from the dictionary, and the last DDL on the table is not later than 10 s before the time of the resume SCN",
        action: "Move the offset back before the DDL, repair the schema topic, or write a tombstone for the table's key to the schema topic"),
    row!(NameCollision, 6004, "NAME_COLLISION", Stop,
        condition: "Sanitising names would map two columns to one field or two tables to one topic",
        action: "Use the avro_unicode adjustment mode, change cdc.topic.template, exclude one of the two, or rename it"),
    row!(OrphanReleaseViolation, 7001, "ORPHAN_RELEASE_VIOLATION", Stop,
        condition: "A COMMIT was mined for a transaction already released as an orphan or discarded by the age policy; the ledger of such transactions survives restarts",
        action: "Move resume_scn back to the first SCN of the transaction and remove its XID from released_xids"),
    row!(OrphanTransaction, 7002, "ORPHAN_TRANSACTION", Stop,
        condition: "Orphan detection found a transaction while cdc.transaction.orphan.action=fail",
        action: "Set cdc.transaction.orphan.action=release, or mine again from before the transaction began"),
    row!(SnapshotTooOld, 8001, "SNAPSHOT_TOO_OLD", Stop,
        condition: "A snapshot chunk keeps failing with ORA-01555 or ORA-08181 even at 1,000 rows per chunk",
        action: "Raise UNDO_RETENTION on the database or lower cdc.snapshot.chunk.rows"),
    row!(KafkaUnavailable, 9001, "KAFKA_UNAVAILABLE", Retried,
        condition: "The Kafka cluster could not be reached, or answered with an error that trying again can fix: no broker answered within 10 s, a broker connection failed, a request timed out, a partition had no leader or too few in-sync replicas, a coordinator was moving, a broker failed a request with an unexpected error of its own (UNKNOWN_SERVER_ERROR), or a Kafka transaction had to be aborted. The task is started again from its committed offset with a backoff that starts near 1 s and doubles up to 30 s with jitter; a task that gets past its start again begins a new budget. The task stops once cdc.retry.max.time.ms is spent, and at once when the Kafka error is not classified at all",
        action: "Bring the brokers or the network to them back, check bootstrap.servers and the listeners the brokers advertise, or give the topics enough in-sync replicas"),
    row!(ProducerFenced, 9002, "PRODUCER_FENCED", Stop,
        condition: "Under exactly-once delivery another producer with the same transactional.id (another instance of this connector, or one started with the same name) fenced this one; its open Kafka transaction was aborted",
        action: "Run one instance of the connector per name, stop the other instance, or give each connector its own name or cdc.kafka.transactional.id"),
    row!(KafkaAuthorization, 9003, "KAFKA_AUTHORIZATION", Stop,
        condition: "The Kafka cluster refused the connector's clients: authentication failed (SASL or TLS), or an ACL denies a topic, the cluster, a consumer group or the transactional id",
        action: "Fix the credentials or TLS settings in cdc.kafka.*, or grant the connector's principal the ACLs docs/running.md lists"),
    row!(TopicUnavailable, 9004, "TOPIC_UNAVAILABLE", Stop,
        condition: "A topic the connector writes or reads cannot be used: the broker refused to create it (a policy, a replication factor larger than the cluster, an invalid name or setting), or it did not appear with a partition in the broker's metadata within 30 s of its creation, or it does not exist while the connector may not create topics",
        action: "Create the topic by hand with the settings docs/running.md lists, fix the replication factor or topic settings, or let the connector's principal create topics"),
    row!(RecordTooLarge, 9005, "RECORD_TOO_LARGE", Stop,
        condition: "The broker or the producer refused a record larger than its limit (message.max.bytes of the producer, max.message.bytes of the topic or message.max.bytes of the broker); the message names the topic",
        action: "Raise the topic's max.message.bytes, the broker's message.max.bytes and cdc.kafka.message.max.bytes together, or exclude the large columns or set cdc.lob.mode=skip"),
    row!(OffsetsStore, 9006, "OFFSETS_STORE", Stop,
        condition: "The offsets topic cannot serve as the connector's offset store: it is not compacted (Kafka Connect refuses such a topic too), its configuration cannot be read, or it has no partition",
        action: "Set cleanup.policy=compact on the offsets topic, or point offset.storage.topic at a compacted topic"),
    row!(KafkaClientSetup, 9007, "KAFKA_CLIENT_SETUP", Stop,
        condition: "A Kafka client cannot be set up: the Kafka client rejected a cdc.kafka.* property (its name is given, never its value), the client could not be created, or the brokers lack a feature the delivery needs (idempotent or transactional producers)",
        action: "Fix or remove the cdc.kafka.* property named in the message, or upgrade the brokers to a version with idempotent and transactional producers"),
];

impl CdcCode {
    /// Every code, in numeric order.
    pub const ALL: [CdcCode; CODE_COUNT] = [
        CdcCode::TransientDatabase,
        CdcCode::MiningStepRetry,
        CdcCode::LogGap,
        CdcCode::LogPurged,
        CdcCode::Decode,
        CdcCode::Corruption,
        CdcCode::LobTooLarge,
        CdcCode::BufferExhausted,
        CdcCode::JournalCorruption,
        CdcCode::MiningStalled,
        CdcCode::TransactionTooOld,
        CdcCode::TaskThread,
        CdcCode::Topology,
        CdcCode::Privilege,
        CdcCode::DictionaryUnavailable,
        CdcCode::UnsupportedDdl,
        CdcCode::SchemaMismatch,
        CdcCode::NameCollision,
        CdcCode::OrphanReleaseViolation,
        CdcCode::OrphanTransaction,
        CdcCode::SnapshotTooOld,
        CdcCode::KafkaUnavailable,
        CdcCode::ProducerFenced,
        CdcCode::KafkaAuthorization,
        CdcCode::TopicUnavailable,
        CdcCode::RecordTooLarge,
        CdcCode::OffsetsStore,
        CdcCode::KafkaClientSetup,
    ];

    fn row(self) -> &'static CodeRow {
        // The discriminant is the row index: the enum has CODE_COUNT variants in table order.
        &TABLE[self as usize]
    }

    /// The number, e.g. 2002.
    pub fn number(self) -> u16 {
        self.row().number
    }

    /// The id as printed, e.g. `CDC-2002`.
    pub fn id(self) -> &'static str {
        self.row().id
    }

    /// The name, e.g. `LOG_PURGED`.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    pub fn class(self) -> CdcClass {
        self.row().class
    }

    /// Whether a row-level error of this code may go to the dead letter topic instead of
    /// stopping the task (with `cdc.on.decode.error=dlq`). Only decode errors may: missing or
    /// corrupt data is never routed around.
    pub fn dlq_eligible(self) -> bool {
        matches!(self, CdcCode::Decode)
    }

    /// What raises the code.
    pub fn condition(self) -> &'static str {
        self.row().condition
    }

    /// What the operator does about it, without a trailing period.
    pub fn operator_action(self) -> &'static str {
        self.row().operator_action
    }

    /// The anchor of the code's section in `docs/runbooks.md`, e.g. `cdc-2002`.
    pub fn runbook_anchor(self) -> &'static str {
        self.row().runbook_anchor
    }

    /// The link to the code's runbook, e.g. `docs/runbooks.md#cdc-2002`.
    pub fn runbook(self) -> &'static str {
        self.row().runbook
    }

    pub fn from_number(number: u16) -> Option<CdcCode> {
        TABLE
            .iter()
            .find(|row| row.number == number)
            .map(|row| row.code)
    }

    /// Reads `CDC-2002` (the prefix in any case) back into its code.
    pub fn parse(text: &str) -> Option<CdcCode> {
        let text = text.trim();
        let prefix = text.get(..4)?;
        let digits = text.get(4..)?;
        if !prefix.eq_ignore_ascii_case("CDC-")
            || digits.len() != 4
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        digits.parse().ok().and_then(CdcCode::from_number)
    }
}

impl fmt::Display for CdcCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A stop the operator sees: a code, what happened, and the cause it came from.
///
/// It displays as `[CDC-2002] <message>. Operator action: <action>. Runbook: <link>`; the
/// source chain is kept for logs through [`Error::source`].
#[derive(Debug)]
pub struct CdcError {
    code: CdcCode,
    message: String,
    source: Option<Box<dyn Error + Send + Sync + 'static>>,
    /// Set when an error of a retried code must stop the task anyway: its retry budget is spent,
    /// or its ORA code is unclassified.
    without_retry: bool,
}

impl CdcError {
    pub fn new(code: CdcCode, message: impl Into<String>) -> Self {
        CdcError {
            code,
            message: message.into(),
            source: None,
            without_retry: false,
        }
    }

    /// Keeps the error that caused this one, so the chain reaches the log.
    #[must_use]
    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn Error + Send + Sync + 'static>>,
    ) -> Self {
        self.source = Some(source.into());
        self
    }

    /// Marks an error of a retried code as final: the retry budget is spent, or the cause is
    /// one that retrying cannot fix. [`CdcError::is_retried`] then answers false.
    #[must_use]
    pub fn without_retry(mut self) -> Self {
        self.without_retry = true;
        self
    }

    pub fn code(&self) -> CdcCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the engine should retry this error itself rather than stop the task.
    pub fn is_retried(&self) -> bool {
        self.code.class() == CdcClass::Retried && !self.without_retry
    }
}

impl fmt::Display for CdcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One trailing period is dropped so a message that ends a sentence does not print "..".
        let message = self.message.strip_suffix('.').unwrap_or(&self.message);
        let message = if message.trim().is_empty() {
            self.code.name()
        } else {
            message
        };
        write!(
            f,
            "[{}] {}. Operator action: {}. Runbook: {}",
            self.code.id(),
            message,
            self.code.operator_action(),
            self.code.runbook()
        )
    }
}

impl Error for CdcError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Fails to compile when a variant is added, so the table and `ALL` get a row for it.
    fn every_variant(code: CdcCode) -> usize {
        match code {
            CdcCode::TransientDatabase
            | CdcCode::MiningStepRetry
            | CdcCode::LogGap
            | CdcCode::LogPurged
            | CdcCode::Decode
            | CdcCode::Corruption
            | CdcCode::LobTooLarge
            | CdcCode::BufferExhausted
            | CdcCode::JournalCorruption
            | CdcCode::MiningStalled
            | CdcCode::TransactionTooOld
            | CdcCode::TaskThread
            | CdcCode::Topology
            | CdcCode::Privilege
            | CdcCode::DictionaryUnavailable
            | CdcCode::UnsupportedDdl
            | CdcCode::SchemaMismatch
            | CdcCode::NameCollision
            | CdcCode::OrphanReleaseViolation
            | CdcCode::OrphanTransaction
            | CdcCode::SnapshotTooOld
            | CdcCode::KafkaUnavailable
            | CdcCode::ProducerFenced
            | CdcCode::KafkaAuthorization
            | CdcCode::TopicUnavailable
            | CdcCode::RecordTooLarge
            | CdcCode::OffsetsStore
            | CdcCode::KafkaClientSetup => code as usize,
        }
    }

    #[test]
    fn table_rows_line_up() {
        for (index, code) in CdcCode::ALL.into_iter().enumerate() {
            assert_eq!(
                every_variant(code),
                index,
                "{code:?} is out of order in ALL"
            );
            assert_eq!(
                TABLE[index].code, code,
                "row {index} of TABLE is not {code:?}"
            );
        }
    }

    #[test]
    fn every_code_appears_once_and_numbers_increase() {
        let codes: HashSet<CdcCode> = TABLE.iter().map(|row| row.code).collect();
        assert_eq!(codes.len(), CODE_COUNT, "a code appears twice in TABLE");
        let names: HashSet<&str> = TABLE.iter().map(|row| row.name).collect();
        assert_eq!(names.len(), CODE_COUNT, "a name appears twice in TABLE");
        for pair in TABLE.windows(2) {
            assert!(
                pair[0].number < pair[1].number,
                "{} must come before {}",
                pair[0].number,
                pair[1].number
            );
        }
    }

    #[test]
    fn reference_codes_and_classes() {
        let expected: [(u16, &str, CdcClass); CODE_COUNT] = [
            (1001, "TRANSIENT_DATABASE", CdcClass::Retried),
            (1002, "MINING_STEP_RETRY", CdcClass::Retried),
            (2001, "LOG_GAP", CdcClass::Stop),
            (2002, "LOG_PURGED", CdcClass::Stop),
            (3001, "DECODE", CdcClass::Stop),
            (3002, "CORRUPTION", CdcClass::Stop),
            (3003, "LOB_TOO_LARGE", CdcClass::Stop),
            (4001, "BUFFER_EXHAUSTED", CdcClass::Stop),
            (4002, "JOURNAL_CORRUPTION", CdcClass::Stop),
            (4003, "MINING_STALLED", CdcClass::Stop),
            (4004, "TRANSACTION_TOO_OLD", CdcClass::Stop),
            (4005, "TASK_THREAD", CdcClass::Stop),
            (5001, "TOPOLOGY", CdcClass::Stop),
            (5002, "PRIVILEGE", CdcClass::Stop),
            (6001, "DICTIONARY_UNAVAILABLE", CdcClass::Stop),
            (6002, "UNSUPPORTED_DDL", CdcClass::Stop),
            (6003, "SCHEMA_MISMATCH", CdcClass::Stop),
            (6004, "NAME_COLLISION", CdcClass::Stop),
            (7001, "ORPHAN_RELEASE_VIOLATION", CdcClass::Stop),
            (7002, "ORPHAN_TRANSACTION", CdcClass::Stop),
            (8001, "SNAPSHOT_TOO_OLD", CdcClass::Stop),
            (9001, "KAFKA_UNAVAILABLE", CdcClass::Retried),
            (9002, "PRODUCER_FENCED", CdcClass::Stop),
            (9003, "KAFKA_AUTHORIZATION", CdcClass::Stop),
            (9004, "TOPIC_UNAVAILABLE", CdcClass::Stop),
            (9005, "RECORD_TOO_LARGE", CdcClass::Stop),
            (9006, "OFFSETS_STORE", CdcClass::Stop),
            (9007, "KAFKA_CLIENT_SETUP", CdcClass::Stop),
        ];
        for (code, (number, name, class)) in CdcCode::ALL.into_iter().zip(expected) {
            assert_eq!(
                (code.number(), code.name(), code.class()),
                (number, name, class)
            );
        }
    }

    #[test]
    fn ids_anchors_and_links_follow_the_number() {
        for code in CdcCode::ALL {
            let number = code.number();
            assert_eq!(code.id(), format!("CDC-{number}"));
            assert_eq!(code.runbook_anchor(), format!("cdc-{number}"));
            assert_eq!(code.runbook(), format!("docs/runbooks.md#cdc-{number}"));
            assert_eq!(code.to_string(), code.id());
        }
        assert_eq!(CdcCode::LogPurged.id(), "CDC-2002");
        assert_eq!(CdcCode::LogPurged.runbook(), "docs/runbooks.md#cdc-2002");
    }

    #[test]
    fn texts_are_present_and_actions_have_no_trailing_period() {
        for code in CdcCode::ALL {
            assert!(
                !code.condition().trim().is_empty(),
                "{code:?} has no condition"
            );
            let action = code.operator_action();
            assert!(!action.trim().is_empty(), "{code:?} has no operator action");
            assert!(
                !action.ends_with('.'),
                "{code:?}: the message adds the period"
            );
            assert_eq!(action.trim(), action, "{code:?}: stray whitespace");
        }
    }

    #[test]
    fn only_decode_may_go_to_the_dlq() {
        let eligible: Vec<CdcCode> = CdcCode::ALL
            .into_iter()
            .filter(|code| code.dlq_eligible())
            .collect();
        assert_eq!(eligible, [CdcCode::Decode]);
        assert_eq!(CdcCode::Decode.class(), CdcClass::Stop);
    }

    #[test]
    fn numbers_and_ids_read_back() {
        for code in CdcCode::ALL {
            assert_eq!(CdcCode::from_number(code.number()), Some(code));
            assert_eq!(CdcCode::parse(code.id()), Some(code));
            assert_eq!(CdcCode::parse(&code.id().to_lowercase()), Some(code));
        }
        assert_eq!(CdcCode::parse(" CDC-2002 "), Some(CdcCode::LogPurged));
        for bad in [
            "",
            "CDC-",
            "CDC-9999",
            "CDC-202",
            "CDC-02002",
            "CDC-+202",
            "ORA-2002",
            "2002",
            "CDC_2002",
            "CDC-2002x",
            "CDC-２００２",
        ] {
            assert_eq!(CdcCode::parse(bad), None, "{bad:?}");
        }
        assert_eq!(
            CdcCode::from_number(7003),
            None,
            "CDC-7003 is planned, not defined"
        );
    }

    #[test]
    fn message_form() {
        let error = CdcError::new(CdcCode::LogPurged, "archived log 1_42_1 is gone.");
        assert_eq!(
            error.to_string(),
            format!(
                "[CDC-2002] archived log 1_42_1 is gone. Operator action: {}. \
                 Runbook: docs/runbooks.md#cdc-2002",
                CdcCode::LogPurged.operator_action()
            )
        );
        let plain = CdcError::new(CdcCode::LogGap, "sequence 7 of thread 1 is missing");
        assert!(
            plain
                .to_string()
                .starts_with("[CDC-2001] sequence 7 of thread 1 is missing. ")
        );
        // Only one period is dropped: an ellipsis keeps its first two.
        let dots = CdcError::new(CdcCode::LogGap, "wait...");
        assert!(
            dots.to_string()
                .starts_with("[CDC-2001] wait... Operator action: ")
        );
        let empty = CdcError::new(CdcCode::LogGap, "");
        assert!(
            empty
                .to_string()
                .starts_with("[CDC-2001] LOG_GAP. Operator action: ")
        );
    }

    #[test]
    fn source_chain_is_kept() {
        let io = std::io::Error::other("disk full");
        let error = CdcError::new(CdcCode::BufferExhausted, "spill write failed").with_source(io);
        assert_eq!(error.code(), CdcCode::BufferExhausted);
        assert_eq!(error.message(), "spill write failed");
        let source = error.source().map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("disk full"));
        assert!(CdcError::new(CdcCode::LogGap, "x").source().is_none());
    }

    #[test]
    fn retried_follows_the_class_until_made_final() {
        let transient = CdcError::new(CdcCode::TransientDatabase, "ORA-03113");
        assert!(transient.is_retried());
        assert!(!transient.without_retry().is_retried());
        assert!(CdcError::new(CdcCode::MiningStepRetry, "ORA-00310").is_retried());
        assert!(!CdcError::new(CdcCode::LogPurged, "gone").is_retried());
    }

    #[test]
    fn error_is_send_sync_and_static() {
        fn assert_bounds<T: Error + Send + Sync + 'static>() {}
        assert_bounds::<CdcError>();
    }
}
